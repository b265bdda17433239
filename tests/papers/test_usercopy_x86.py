"""The i386 copy_from_user routines (routines/x86/: Linux 2.6.12 and Yoshioka 2005's patch).

Correctness of the copies is checked on bare Unicorn (no cache model: the data a routine moves
does not depend on it), a guest-side driver calling the routine for a table of
(to, from, n) records in one run, every destination in its own slot of an arena filled with
random guard bytes, checked against the expected arena in one numpy comparison:

* every size 0..8192 (64..8192 for __copy_user_zeroing_intel, which needs n >= 64) at two
  (source, destination) alignments: (0, 0) and (13, 58), which between them take both ways
  out of movsl_is_ok;
* every one of the 64 x 64 (source, destination) alignments at SIZES, the sizes at which some
  branch of some routine changes (the 7-byte and 64-byte thresholds, the 67-byte look-ahead
  of the unrolled loop, the five blocks _mmx_memcpy_nt copies without prefetch, 512).

The full product (8193 sizes x 4096 alignments, 137 GB copied) is out of reach: one
alignment pair at every size copies 33.5 MB, which bare Unicorn does in 0.4 s (rep movsl) to
1.2 s (the movl loop), so 4096 pairs would take 30-80 minutes per routine.

The fault behaviour (the kernel's exception-table fixups, emu.run.extable) runs on the full
machine: the source ends k bytes before an unmapped page, and a reference model of each
routine's algorithm (``copied``) says how many bytes it copies before the fault; the routine
must return n - copied, the destination must hold the copied bytes then zeros up to n, and
nothing after it may change.
"""
import time

import numpy as np
import pytest
from unicorn import UC_ARCH_X86, UC_MODE_32, UC_PROT_ALL, Uc, x86_const

import emu
from emu.papers.yoshioka2005 import usercopy
from emu.run import extable
from emu.isa.assemble import assemble, decode
from emu.hw.faults import GuestError, GuestFault
from emu.run.machine import Machine

PAGE = 4096
MOVSL_MASK = 7                      # movsl_mask.mask on the P4 (intel.c, init_intel)
INTEL = "__copy_user_zeroing_intel"
ENTRIES = {                         # test name -> (files, entry)
    "copy_user_zeroing": (usercopy.ROUTINES["__copy_user_zeroing"], "__copy_user_zeroing"),
    "copy_user_zeroing_intel": (usercopy.ROUTINES[INTEL], INTEL),
    "mmx_memcpy_nt": (usercopy.ROUTINES["_mmx_memcpy_nt"], "_mmx_memcpy_nt"),
    "copy_from_user_ll": (usercopy.KERNELS["2.6.12"], "__copy_from_user_ll"),
    "copy_from_user_ll_patched": (usercopy.KERNELS["patched"], "__copy_from_user_ll"),
}
SIZES = sorted({*range(0, 73), 127, 128, 129, 255, 256, 257, 319, 320, 321, 383, 384, 385,
                447, 448, 449, 511, 512, 513, 519, 520, 575, 576, 577, 1023, 1024, 1025})
ALIGNMENT_PAIRS = ((0, 0), (13, 58))
MAX_SIZE = 8192


# ------------------------------------------------------------------ reference model

def movsl_copied(n, to, k):
    """Bytes the __copy_user_zeroing macro copies before a fault, the source readable for
    k bytes: destination-aligning bytes, then 4-byte words (a word that is not all readable
    faults whole), then bytes."""
    if n <= 7:
        return min(n, k)
    head = -to & 7
    if k < head:
        return k
    words = (n - head) // 4
    done = (k - head) // 4
    return head + 4 * done if done < words else min(n, k)


def intel_copied(n, k):
    """__copy_user_zeroing_intel: a fault anywhere in a 64-byte block (its look-ahead loads
    at +32 and, with more than 67 bytes left, +64 included) leaves the whole block uncopied
    (the fixup zeroes from the block's start); then words and bytes as rep movsl/movsb."""
    pos, left = 0, n
    while True:
        if pos + 36 > k or (left > 67 and pos + 68 > k) or pos + 64 > k:
            return pos
        pos, left = pos + 64, left - 64
        if left <= 63:
            break
    words, done = left // 4, (k - pos) // 4
    return pos + 4 * done if done < words else min(n, k)


def copied(name, n, frm, to, k, in_interrupt=False):
    """Bytes ``name`` copies before the source's fault k bytes in; None: it faults with no
    fixup (an oops)."""
    if name == "copy_user_zeroing":
        return movsl_copied(n, to, k)
    if name == "copy_user_zeroing_intel":
        return intel_copied(n, k)
    if name == "mmx_memcpy_nt":
        if in_interrupt:
            return movsl_copied(n, to, k)
        blocks = 64 * (n >> 6)
        if k < blocks:
            return None
        return blocks + movsl_copied(n & 63, to + blocks, k - blocks)
    if name == "copy_from_user_ll_patched" and n >= 512:
        return copied("mmx_memcpy_nt", n, frm, to, k)
    if n >= 64 and (frm ^ to) & MOVSL_MASK:
        return intel_copied(n, k)
    return movsl_copied(n, to, k)


def test_reference_model_by_hand():
    # 100 bytes to an address 3 past an 8-byte boundary: 5 aligning bytes, then words
    assert movsl_copied(100, 0x1003, 50) == 5 + 4 * 11
    assert movsl_copied(100, 0x1003, 4) == 4                    # inside the aligning bytes
    assert movsl_copied(7, 0x1003, 3) == 3                      # bytes only
    assert movsl_copied(10, 0x1000, 3) == 0                     # the first word straddles
    assert intel_copied(100, 50) == 0                           # the +64 look-ahead faults
    assert intel_copied(200, 130) == 64                         # 2nd block: +64 reads 128..131
    assert intel_copied(200, 140) == 128                        # 3rd block: +32 reads 160..163
    assert intel_copied(130, 129) == 129                        # tail: no word, 1 byte of 2
    assert copied("mmx_memcpy_nt", 700, 0, 0, 639) is None      # inside the blocks: oops
    assert copied("mmx_memcpy_nt", 700, 0, 0, 650) == 640 + 8   # the tail's words


# ------------------------------------------------------------------ the files

@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_routine_files_name_their_kernel_and_convention(name):
    files, entry = ENTRIES[name]
    header = emu.routine(files[-1]).read_text().split("*/")[0]
    assert "Linux 2.6.12" in header and "arch/i386/lib/usercopy.c" in header
    assert "cdecl" in header and "NOT copied" in header
    assert entry in header


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_linked_routines_disassemble_in_step(name):
    # emu.hw.cost reads loaded code by linear disassembly: the tables and data in the files
    # must not throw it out of step with the instructions
    files, _ = ENTRIES[name]
    program = assemble(usercopy.source(files), "x86", 0x10000)
    starts = {insn.address for insn in decode(program.code, "x86", program.base)}
    lost = [s.line.strip() for s in program.statements
            if s.kind == "insn" and s.address not in starts]
    assert lost == []


def test_exception_tables_as_the_kernel_declares_them():
    counts = {name: len(extable.entries_of(assemble(usercopy.source(files), "x86")))
              for name, (files, _) in ENTRIES.items()}
    # the macro: 3; the unrolled copy: 18 loads + 2 rep; _mmx_memcpy_nt: 2 prefetch + 3
    assert counts == {"copy_user_zeroing": 3, "copy_user_zeroing_intel": 20,
                      "mmx_memcpy_nt": 5, "copy_from_user_ll": 23,
                      "copy_from_user_ll_patched": 28}


def test_prefetch_fixups_jump_over_exactly_the_prefetches():
    # the fixups overwrite the first prefetch with "jmp +26" (0xEB 0x1A) and the one in
    # the loop with "jmp +5": they rely on the set being 28 bytes and the one 7 bytes
    program = assemble(usercopy.source(usercopy.ROUTINES["_mmx_memcpy_nt"]), "x86")
    sym = program.symbols
    assert sym[".Lprefetch_set_end"] - sym[".Lprefetch_set"] == 2 + 0x1A
    assert sym[".Lblock"] - sym[".Lprefetch_320"] == 2 + 0x05
    listed = {e.insn for e in extable.entries_of(program)}
    assert {sym[".Lprefetch_set"], sym[".Lprefetch_320"]} <= listed


# ------------------------------------------------------------------ copies on bare Unicorn

DRIVER = """
        .globl  sweep_driver
sweep_driver:                       # (records, count, entry): records of to, from, n, result
        pushl   %ebx
        pushl   %ebp
        pushl   %esi
        pushl   %edi
        movl    20(%esp), %ebx
        movl    24(%esp), %ebp
        movl    28(%esp), %esi
1:      pushl   8(%ebx)
        pushl   4(%ebx)
        pushl   0(%ebx)
        call    *%esi
        addl    $12, %esp
        movl    %eax, 12(%ebx)
        addl    $16, %ebx
        decl    %ebp
        jnz     1b
        popl    %edi
        popl    %esi
        popl    %ebp
        popl    %ebx
        ret
"""


class Bare:
    """Bare Unicorn (no hooks) with the routine files and the driver loaded; RAM is a numpy
    array the host reads and writes directly."""
    HALT, CODE, STACK, RECORDS, SRC, ARENA = 0xF000, 0x10000, 0x800000, 0x900000, \
        0x1000000, 0x2000000
    RAM = 96 << 20

    def __init__(self, files):
        self._buf = np.zeros(self.RAM + PAGE, np.uint8)
        skip = -self._buf.ctypes.data % PAGE
        self.mem = self._buf[skip:skip + self.RAM]
        self.uc = Uc(UC_ARCH_X86, UC_MODE_32)
        self.uc.mem_map_ptr(PAGE, self.RAM - PAGE, UC_PROT_ALL, self.mem.ctypes.data + PAGE)
        self.program = assemble(usercopy.source(files) + DRIVER, "x86", self.CODE)
        code = np.frombuffer(self.program.code, np.uint8)
        self.mem[self.CODE:self.CODE + len(code)] = code
        self.mem[self.HALT] = 0xF4                                  # hlt
        rng = np.random.default_rng(2005)
        self.mem[self.SRC:self.SRC + MAX_SIZE + 128] = rng.integers(0, 256, MAX_SIZE + 128)
        self.rng = rng

    def run(self, entry, records):
        """Call ``entry`` for each (to, from, n); returns the return values."""
        table = np.zeros((len(records), 4), np.uint32)
        table[:, :3] = records
        raw = table.view(np.uint8).ravel()
        self.mem[self.RECORDS:self.RECORDS + len(raw)] = raw
        sp = self.STACK - 16
        frame = np.array([self.HALT, self.RECORDS, len(records), self.program.symbols[entry]],
                         np.uint32)
        self.mem[sp:sp + 16] = frame.view(np.uint8)
        self.uc.reg_write(x86_const.UC_X86_REG_ESP, sp)
        self.uc.reg_write(x86_const.UC_X86_REG_EFLAGS, 0x2)        # DF clear
        self.uc.emu_start(self.program.symbols["sweep_driver"], self.HALT,
                          timeout=120_000_000)
        assert self.uc.reg_read(x86_const.UC_X86_REG_EIP) == self.HALT, "the run did not end"
        done = self.mem[self.RECORDS:self.RECORDS + len(raw)].view(np.uint32)
        return done.reshape(-1, 4)[:, 3].copy()

    def check(self, entry, copies):
        """Copy each (src_offset, dst_offset, n) into its own slot of a guard-filled arena;
        assert every return value is 0 and the arena is exactly as expected."""
        records, slots, end = [], [], self.ARENA
        for s, d, n in copies:
            to = (end + 64 + 63) // 64 * 64 + d                     # >= 64 guard bytes
            records.append((to, self.SRC + s, n))
            slots.append((to - self.ARENA, s, d, n))
            end = to + n
        end += 64
        size = end - self.ARENA
        assert end <= self.RAM, "arena too large"
        guard = self.rng.integers(0, 256, size, dtype=np.uint8)
        self.mem[self.ARENA:end] = guard
        expected = guard.copy()
        src = self.mem[self.SRC:self.SRC + MAX_SIZE + 128]
        for at, s, _, n in slots:
            expected[at:at + n] = src[s:s + n]
        returned = self.run(entry, records)
        bad = np.nonzero(returned)[0]
        assert not len(bad), f"{entry} returned {returned[bad[0]]} for {copies[bad[0]]}"
        arena = self.mem[self.ARENA:end]
        if not np.array_equal(arena, expected):
            first = int(np.nonzero(arena != expected)[0][0])
            _, s, d, n = next(slot for slot in slots if first < slot[0] + slot[3] + 64)
            raise AssertionError(f"{entry}: wrong byte at arena offset {first} (the copy "
                                 f"src+{s} -> dst+{d}, n={n}, or its guard bytes)")
        return size


@pytest.fixture(scope="module")
def timings():
    seen = {}
    yield seen
    print("\ncopy sweeps on bare Unicorn (s):",
          ", ".join(f"{k} {v:.1f}" for k, v in seen.items()))


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_every_size_and_every_alignment_copies_exactly(name, timings):
    files, entry = ENTRIES[name]
    low = usercopy.MIN_SIZE.get(entry, 0)
    bare = Bare(files)
    start = time.perf_counter()
    for s, d in ALIGNMENT_PAIRS:                    # every size at two alignments
        bare.check(entry, [(s, d, n) for n in range(low, MAX_SIZE + 1)])
    for n in SIZES:                                 # every alignment at the branch sizes
        if n >= low:
            bare.check(entry, [(s, d, n) for s in range(64) for d in range(64)])
    timings[name] = time.perf_counter() - start


def test_the_sweep_check_catches_a_wrong_copy():
    # the same harness on a copy that drops the last byte of every size above 100 fails
    bad = """
        .globl  short_copy
short_copy:
        pushl   %esi
        pushl   %edi
        movl    12(%esp), %edi
        movl    16(%esp), %esi
        movl    20(%esp), %ecx
        cmpl    $100, %ecx
        jbe     1f
        decl    %ecx
1:      rep movsb
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        ret
"""
    bare = Bare(())
    bare.program = assemble(bad + DRIVER, "x86", bare.CODE)
    code = np.frombuffer(bare.program.code, np.uint8)
    bare.mem[bare.CODE:bare.CODE + len(code)] = code
    bare.check("short_copy", [(1, 2, n) for n in range(0, 101)])
    with pytest.raises(AssertionError, match=r"n=101"):
        bare.check("short_copy", [(1, 2, n) for n in range(0, 120)])


# ------------------------------------------------------------------ faults on the machine

@pytest.fixture(scope="module")
def machines():
    out = {}
    for name, (files, entry) in ENTRIES.items():
        m = Machine("pentium4")
        m.load(assemble(usercopy.source(files), "x86", filename=" + ".join(files)))
        area = m.alloc(3 * PAGE, bytes(np.random.default_rng(7).integers(0, 256, 3 * PAGE,
                                                                          dtype=np.uint8)))
        dst = m.alloc(3 * PAGE)
        out[name] = (m, entry, area + 2 * PAGE, dst)     # area + 2 pages: the hole
    return out


def fault_cases(name):
    cases = []
    for n in (1, 5, 8, 9, 31, 64, 65, 67, 68, 100, 130, 200, 383, 511, 512, 520, 700, 1100,
              4100, 8000):
        if n < usercopy.MIN_SIZE.get(ENTRIES[name][1], 0):
            continue
        ks = sorted({k for k in (0, 1, 3, 4, 7, 8, 9, 31, 35, 36, 64, 67, 68, 70, 128, 131,
                                 n // 2, n - 65, n - 64, n - 63, n - 9, n - 8, n - 5, n - 4,
                                 n - 3, n - 1) if 0 <= k < n})
        for k in ks:
            for d in (0, 3, 8 - (k & 7)):                     # dst offsets
                cases.append((n, k, d))
    return cases


def run_with_hole(m, entry, hole, dst, n, k, d, guard=0xEE):
    frm, to = hole - k, dst + 64 + d
    m.write(dst, bytes([guard]) * (n + 192))
    with extable.unmapped_page(m, hole):
        run = m.call(entry, to, frm, n)
    return run, frm, to


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_a_fault_returns_the_bytes_not_copied_and_zeroes_the_rest(name, machines):
    m, entry, hole, dst = machines[name]
    checked = oopses = 0
    for n, k, d in fault_cases(name):
        frm, to = hole - k, dst + 64 + d
        want = copied(name, n, frm, to, k)
        if want is None:
            with pytest.raises(GuestFault) as caught:
                run_with_hole(m, entry, hole, dst, n, k, d)
            assert caught.value.instruction.startswith("movq")
            oopses += 1
            continue
        run, frm, to = run_with_hole(m, entry, hole, dst, n, k, d)
        got = m.read(to, n)
        assert run.return_value == n - want, (name, n, k, d)
        assert got[:want] == m.read(frm, want), (name, n, k, d)
        assert got[want:] == bytes(n - want), (name, n, k, d)
        assert m.read(dst, 64 + d) == b"\xee" * (64 + d)                # before: untouched
        assert m.read(to + n, 64) == b"\xee" * 64                       # after: untouched
        assert m.extable.taken and m.extable.taken[0].address >= hole   # a fixup was taken
        checked += 1
    assert checked > 100
    # only the patch's non-temporal loop has loads without fixups
    assert (oopses > 0) == (name in ("mmx_memcpy_nt", "copy_from_user_ll_patched"))


def test_the_patch_copy_oopses_on_a_fault_in_its_blocks(machines):
    m, entry, hole, dst = machines["copy_from_user_ll_patched"]
    n, k = 1000, 700                    # block 10 (bytes 640-703) runs into the hole at 700
    with pytest.raises(GuestFault) as caught:
        run_with_hole(m, entry, hole, dst, n, k, 0)
    fault = caught.value
    assert m.symbolize(fault.pc).startswith("_mmx_memcpy_nt+")
    assert fault.instruction == "movq 0x38(%esi), %mm3"         # bytes 696-703 of the block
    assert fault.address == hole                                # the first unmapped byte
    assert fault.pc not in m.extable
    assert f"{fault.pc:#x}" in str(fault) and "read from unmapped memory" in str(fault)


def test_without_a_fault_no_fixup_is_taken(machines):
    m, entry, hole, dst = machines["copy_from_user_ll"]
    run, frm, to = run_with_hole(m, entry, hole, dst, 100, 100, 0)      # ends at the hole
    assert run.return_value == 0 and m.extable.taken == []
    assert m.read(to, 100) == m.read(frm, 100)


# ------------------------------------------------------------------ the FPU and interrupts

CR0_TS = 0x8


def mmx_machine():
    m = Machine("pentium4")
    usercopy.load(m, "patched")
    src = m.alloc(PAGE, bytes(range(256)) * 16)
    dst = m.alloc(PAGE)
    return m, src, dst


def cr0(m):
    return m.uc.reg_read(x86_const.UC_X86_REG_CR0)


def test_kernel_fpu_end_leaves_cr0_ts_set_and_the_next_mmx_use_traps():
    m, src, dst = mmx_machine()
    assert not cr0(m) & CR0_TS
    run = m.call("__copy_from_user_ll", dst, src, 1000)
    assert run.return_value == 0 and m.read(dst, 1000) == m.read(src, 1000)
    assert cr0(m) & CR0_TS                                       # stts()
    m.load("use_mmx:\n    movq (%esp), %mm0\n    ret\n")
    with pytest.raises(GuestFault, match=r"interrupt 7\b.*use_mmx"):  # device not available
        m.call("use_mmx")
    m.call("math_state_restore")                                 # the lazy restore: clts
    assert not cr0(m) & CR0_TS
    m.call("use_mmx")


def test_a_task_owning_the_fpu_is_saved_with_fxsave_and_restored_lazily():
    m, src, dst = mmx_machine()
    m.load("set_mm0:\n    movl 4(%esp), %eax\n    movq (%eax), %mm0\n    ret\n"
           "get_mm0:\n    movl 4(%esp), %eax\n    movq %mm0, (%eax)\n    ret\n")
    area, status = m.symbols["task_fxsave"], m.symbols["thread_status"]
    assert area % 16 == 0
    value = bytes.fromhex("0123456789abcdef")
    word = m.alloc(8, value)
    m.call("set_mm0", word)                                      # the task's MMX state
    usercopy.set_fpu_owner(m)
    m.call("__copy_from_user_ll", dst, src, 512)                 # uses mm0-mm3
    assert m.read_word(status) == 0                              # TS_USEDFPU cleared
    assert m.read(area + 32, 8) == value                         # fxsave: ST0/MM0 at +32
    m.call("math_state_restore")                                 # clts; fxrstor
    assert m.read_word(status) == usercopy.TS_USEDFPU
    out = m.alloc(8)
    m.call("get_mm0", out)
    assert m.read(out, 8) == value


def test_in_interrupt_the_patch_copy_uses_no_fpu(machines):
    m, src, dst = mmx_machine()
    usercopy.set_in_interrupt(m)
    assert m.read_word(m.symbols["preempt_count"]) == usercopy.SOFTIRQ_OFFSET
    run = m.call("__copy_from_user_ll", dst + 1, src, 1000)
    assert run.return_value == 0 and m.read(dst + 1, 1000) == m.read(src, 1000)
    assert not cr0(m) & CR0_TS                                   # no kernel_fpu_begin/end
    assert run.events["nontemporal_stores"] == 0
    usercopy.set_in_interrupt(m, False)
    run = m.call("__copy_from_user_ll", dst + 1, src, 1000)
    assert run.events["nontemporal_stores"] == 1000 // 64 * 8
    # and with a fault, the macro's fixups apply
    hole = m.alloc(2 * PAGE) + PAGE
    usercopy.set_in_interrupt(m)
    with extable.unmapped_page(m, hole):
        run = m.call("_mmx_memcpy_nt", dst, hole - 700, 1000)
    assert run.return_value == 1000 - movsl_copied(1000, dst, 700)


def test_the_sfence_variant_copies_the_same_and_drains_the_buffers():
    m, src, dst = mmx_machine()
    # 8 bytes past a line boundary every 64-byte block spans two lines: at the end the
    # write-combining buffers hold parts of lines, which only the sfence sends out
    plain = m.call("_mmx_memcpy_nt", dst + 8, src, 2048)
    fenced = m.call("_mmx_memcpy_nt_sfence", dst + 2048 + 8, src, 2048)
    assert plain.return_value == fenced.return_value == 0
    assert m.read(dst + 8, 2048) == m.read(dst + 2048 + 8, 2048) == m.read(src, 2048)
    assert plain.events["wc_partial_flushes"] == 0 < fenced.events["wc_partial_flushes"]
    assert fenced.events["wc_flushes"] > plain.events["wc_flushes"]


# ------------------------------------------------------------------ bad input

def test_a_negative_size_is_the_kernels_bug_trap():
    m, src, dst = mmx_machine()
    with pytest.raises(GuestFault, match=r"__copy_from_user_ll\+0x[0-9a-f]+\): ud2: Invalid"):
        m.call("__copy_from_user_ll", dst, src, 0x80000000)


def test_usercopy_refuses_sizes_the_kernel_never_passes():
    m, src, dst = mmx_machine()
    with pytest.raises(ValueError, match="at least 64 bytes"):
        usercopy.call(m, INTEL, dst, src, 63)
    with pytest.raises(ValueError, match="BUG_ON"):
        usercopy.call(m, "__copy_from_user_ll", dst, src, -1)
    with pytest.raises(ValueError, match="whole number"):
        usercopy.call(m, "__copy_from_user_ll", dst, src, 1.5)
    assert usercopy.call(m, INTEL, dst, src, 64).return_value == 0
    with pytest.raises(ValueError, match="unknown kernel '2.6.13'"):
        usercopy.load(m, "2.6.13")
    with pytest.raises(ValueError, match="unknown routine"):
        usercopy.load_routine(m, "memcpy")
    with pytest.raises(ValueError, match="x86 code; the machine is ppc32"):
        usercopy.load(Machine("ppc750"))
    bare = Machine("pentium4")
    usercopy.load(bare, "2.6.12")
    with pytest.raises(ValueError, match="preempt_count is not loaded"):
        usercopy.set_in_interrupt(bare)
