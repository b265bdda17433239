"""emu.run.extable: a fault at a listed instruction resumes at its fixup; any other is a guest
fault naming the PC, the instruction and the address."""
import pytest

from emu.run import extable
from emu.isa.assemble import assemble
from emu.hw.faults import GuestError, GuestFault
from emu.hw.layout import PAGE
from emu.run.machine import Machine

# load_word(p): the word at p, or -1 if reading it faults (the load is listed)
LOAD_WORD = """
        .globl  load_word
load_word:
        movl    4(%esp), %ecx
1:      movl    (%ecx), %eax
2:      ret
        .section .fixup, "ax"
3:      movl    $-1, %eax
        jmp     2b
        .previous
        .section __ex_table, "a"
        .align  4
        .long   1b, 3b
        .previous
        .space  15, 0x90
"""
# store_word(p, v) with the store listed; peek(p) with nothing listed
STORE_AND_PEEK = """
store_word:
        movl    4(%esp), %ecx
        movl    8(%esp), %edx
        xorl    %eax, %eax
1:      movl    %edx, (%ecx)
2:      ret
        .section .fixup, "ax"
3:      movl    $1, %eax
        jmp     2b
        .previous
        .section __ex_table, "a"
        .long   1b, 3b
        .previous
        .space  15, 0x90
peek:
        movl    4(%esp), %ecx
        movl    (%ecx), %eax
        ret
"""


@pytest.fixture()
def machine():
    m = Machine("pentium4")
    m.load(LOAD_WORD)
    m.load(STORE_AND_PEEK)
    page = m.alloc(2 * PAGE, (1234).to_bytes(4, "little"))
    return m, page


def test_a_listed_load_that_faults_resumes_at_its_fixup(machine):
    m, page = machine
    assert m.call("load_word", page).return_value == 1234
    assert m.extable.taken == []
    with extable.unmapped_page(m, page + PAGE):
        run = m.call("load_word", page + PAGE + 8)
    assert run.return_value == 0xFFFFFFFF
    (taken,) = m.extable.taken
    entry = next(iter(m.extable.entries.values()))
    assert (taken.pc, taken.fixup) == (entry.insn, entry.fixup)
    assert taken.address == page + PAGE + 8 and taken.access == "read from unmapped memory"
    assert m.symbolize(taken.pc) == "load_word+0x4"
    # the page is back afterwards, with its bytes
    assert m.call("load_word", page).return_value == 1234
    assert m.call("load_word", page + PAGE).return_value == 0


def test_a_listed_store_that_faults_resumes_too(machine):
    m, page = machine
    with extable.unmapped_page(m, page + PAGE):
        assert m.call("store_word", page + PAGE, 5).return_value == 1
    assert m.call("store_word", page + PAGE, 5).return_value == 0
    assert m.call("load_word", page + PAGE).return_value == 5


def test_a_fault_at_an_unlisted_pc_is_a_guest_fault_naming_pc_instruction_address(machine):
    m, page = machine
    with extable.unmapped_page(m, page + PAGE):
        with pytest.raises(GuestFault) as caught:
            m.call("peek", page + PAGE + 4)
    fault = caught.value
    assert fault.pc == m.symbols["peek"] + 4 and fault.pc not in m.extable
    assert fault.instruction == "movl (%ecx), %eax"
    assert fault.address == page + PAGE + 4
    text = str(fault)
    assert f"PC {fault.pc:#x} (peek+0x4)" in text and "movl (%ecx), %eax" in text
    assert f"read from unmapped memory at address {page + PAGE + 4:#x}" in text
    assert m.extable.taken == []


def test_an_instruction_fetch_is_never_fixed_up(machine):
    m, page = machine
    with extable.unmapped_page(m, page + PAGE):
        with pytest.raises(GuestFault, match="instruction fetch from unmapped memory"):
            m.call(page + PAGE)


def test_a_fixup_that_faults_again_forever_is_stopped(machine, monkeypatch):
    m, page = machine
    m.load("""
again:
        movl    4(%esp), %ecx
1:      movl    (%ecx), %eax
        ret
        .section .fixup, "ax"
2:      jmp     1b
        .previous
        .section __ex_table, "a"
        .long   1b, 2b
        .previous
        .space  15, 0x90
""")
    monkeypatch.setattr(extable, "MAX_FIXUPS_PER_CALL", 5)
    with extable.unmapped_page(m, page + PAGE):
        with pytest.raises(GuestError, match=r"5 exception fixups in one call.*again\+0x4"):
            m.call("again", page + PAGE)


def entries(source):
    return extable.entries_of(assemble(source, "x86", 0x10000, "t.S"))


def test_entries_name_instruction_starts():
    (e,) = entries(LOAD_WORD)
    assert (e.insn, e.fixup, e.filename, e.lineno) == (0x10004, 0x10007, "t.S", 13)
    assert entries("f:\n    ret\n") == []


@pytest.mark.parametrize("source, message", [
    ("f:\n1:  movl (%ecx), %eax\n    ret\n    .section __ex_table\n    .long 1b\n"
     "    .previous\n", r"t\.S:5: __ex_table has an odd number of words"),
    ("f:\n1:  movl (%ecx), %eax\n    ret\n    .section __ex_table\n    .long 1b+1, 1b\n"
     "    .previous\n", r"t\.S:5: the faulting instruction address 0x10001 \(f\) is not the "
     "start of an instruction"),
    ("f:\n1:  movl (%ecx), %eax\n    ret\n    .section __ex_table\n    .long 1b, 0x9000\n"
     "    .previous\n", r"fixup address 0x9000 \(outside the program\)"),
    ("f:\n1:  movl (%ecx), %eax\n    ret\n    .section __ex_table\n    .byte 1, 2\n"
     "    .previous\n", r"t\.S:5: __ex_table holds only \.long pairs"),
    ("f:\n1:  movl (%ecx), %eax\n    .section .fixup\n2:  jmp 1b\n    .previous\n"
     "    ret\n", r"t\.S:4: section \.fixup follows 'movl \(%ecx\), %eax', which falls "
     "through into it"),
    ("f:\n1:  ret\n    .section __ex_table; .long 1b, 1b\n",
     r"t\.S: line 3: put \.section on a line of its own"),
])
def test_malformed_tables_are_refused_with_file_and_line(source, message):
    with pytest.raises(extable.ExceptionTableError, match=message):
        entries(source)


def test_a_bad_table_is_refused_before_the_program_is_loaded():
    m = Machine("pentium4")
    bad = "f:\n1:  movl (%ecx), %eax\n    ret\n    .section __ex_table\n    .long 1b\n" \
          "    .previous\n"
    with pytest.raises(extable.ExceptionTableError, match="odd number"):
        m.load(bad)
    assert m.programs == [] and len(m.extable) == 0


def test_two_fixups_for_one_instruction_are_refused():
    table = extable.ExceptionTable()
    table.add(assemble(LOAD_WORD, "x86", 0x10000))
    other = LOAD_WORD.replace("3:      movl    $-1, %eax", "        nop\n3:      movl $-1, %eax")
    with pytest.raises(extable.ExceptionTableError, match="already has the fixup"):
        table.add(assemble(other, "x86", 0x10000))
    assert table.fixup(0x10004) == 0x10007 and table.fixup(0x10005) is None


def test_unmapped_page_refuses_what_is_not_a_heap_page(machine):
    m, page = machine
    with pytest.raises(ValueError, match="not a page of RAM"):
        with extable.unmapped_page(m, page + 8):
            pass
    with pytest.raises(ValueError, match="not a heap page"):
        with extable.unmapped_page(m, 0x10000):
            pass
