"""Bad input gets a clear error, never a dead process, a hang or silently wrong results.

Each case here was found by feeding emu malformed assembly, hostile guest code and bad
arguments (run in a child process, so that a crash would have been observed): the
expectations are written from what a reader should be told, not from what emu printed.
"""
import pytest

import emu.isa.assemble as asm
from emu.isa.assemble import AssemblyError, assemble

BASE = 0x10000


def words(program):
    order = "big" if program.isa.startswith("ppc") else "little"
    return [int.from_bytes(program.code[i:i + 4], order) for i in range(0, len(program.code), 4)]


def asm_error(source, isa="ppc32"):
    """The AssemblyError of ``source`` (the test fails if it assembles or raises another)."""
    with pytest.raises(AssemblyError) as e:
        assemble(source, isa, filename="bad.S")
    return e.value


# ------------------------------------------------------------------ expressions

def test_equate_chain_is_evaluated_once_per_symbol():
    # each symbol doubles the one before: evaluated naively, A39 needs 2**39 look-ups (the
    # assembler hung); GNU as evaluates each symbol once
    src = ".equ A0, 1\n" + "".join(f".equ A{i}, A{i - 1} + A{i - 1}\n" for i in range(1, 40))
    p = assemble(src + ".quad A39\n", "ppc64")
    assert p.code == (1 << 39).to_bytes(8, "big")


def test_a_huge_shift_is_refused_before_it_exhausts_memory():
    # 1 << (1 << 40) would need 128 GB: Python raised MemoryError (or the kernel was killed)
    err = asm_error("nop\n.long 1 << (1 << 40)\n")
    assert (err.lineno, err.line) == (2, ".long 1 << (1 << 40)")
    assert err.message == "'1 << (1 << 40)' needs more than 256 bits"


def test_squaring_equates_stop_at_the_size_limit():
    src = ".equ A0, 1 << 60\n" + "".join(f".equ A{i}, A{i - 1} * A{i - 1}\n"
                                          for i in range(1, 30))
    err = asm_error(src + ".long A29 & 0xff\n")
    assert "more than 256 bits" in err.message and err.lineno is not None


def test_a_long_equate_chain_is_an_assembly_error_not_a_recursion_error():
    src = ".equ A0, 1\n" + "".join(f".equ A{i}, A{i - 1} + 1\n" for i in range(1, 3000))
    err = asm_error(src + "li 3, A2999 & 0xff\n")
    assert "nested too deeply" in err.message
    assert err.lineno is not None


def test_an_overlong_expression_is_an_assembly_error():
    err = asm_error(".long " + "-" * 100000 + "1\n")
    assert err.lineno == 1 and "nested too deeply" in err.message


@pytest.mark.parametrize("constant", [r"'\x'", r"'\u'", r"'\8'"])
def test_bad_character_constants_name_the_line(constant):
    err = asm_error(f".byte {constant}\n", "x86")
    assert err.message == f"cannot read the character constant {constant}"
    assert err.lineno == 1


@pytest.mark.parametrize("isa, text, why", [
    ("ppc32", "x: .align y\ny:\n", ".align 65536: give a power of two from 0 to 16"),
    ("ppc32", ".align -1\n", ".align -1: give a power of two from 0 to 16"),
    ("x86", ".p2align 100000\n", ".p2align 100000: give a power of two from 0 to 16"),
])
def test_alignment_out_of_range_says_so(isa, text, why):
    # was: "negative shift count", or Python's "Exceeds the limit (4300 digits) for integer
    # string conversion" from printing 1 << 65536
    assert asm_error(text, isa).message == why


# ------------------------------------------------------------- text keystone must not see

def test_non_ascii_in_strings_is_stored_as_utf8_like_gnu_as():
    assert assemble('.ascii "Grüße"\n', "x86").code == "Grüße".encode()
    err = asm_error('nop\n.asciz "\\x"\n')           # a bad escape: was a SyntaxError
    assert (err.lineno, err.message) == (2, 'cannot read the string "\\x" (a bad escape?)')


def test_a_byte_order_mark_at_the_start_of_a_file_is_ignored(tmp_path):
    path = tmp_path / "bom.S"
    path.write_bytes("\ufeff.globl f\nf:  li r3, 1\n    blr\n".encode())
    p = asm.assemble_file(path, "ppc32")
    assert p.symbols == {"f": BASE} and len(p.code) == 8


@pytest.mark.parametrize("isa", asm.ISAS)
def test_non_ascii_instruction_is_refused_before_keystone_crashes(isa):
    err = asm_error("nöp\n", isa)
    assert err.message == "cannot assemble 'nöp': non-ASCII character 'ö'"
    assert (err.lineno, err.line) == (1, "nöp")


@pytest.mark.parametrize("isa, line, why", [
    # keystone read this as [esp+4] without a word
    ("x86", "mov eax, [esp+4", "missing ']'"),
    # keystone's PowerPC parser loops forever on these (each cost the 30 s time-out)
    ("ppc32", "lwz 3, 4(5))", "unexpected ')'"),
    ("ppc32", "addi r3-, r3, 12", "cannot read the operand 'r3-'"),
    ("ppc64", "ld r3, 8(r5)`", "cannot read the operand '8(r5)`'"),
    ("ppc64", "mtcrf 0x01, r5)", "unexpected ')'"),
])
def test_malformed_operands_are_refused_at_once(monkeypatch, isa, line, why):
    monkeypatch.setattr(asm, "WORKER_TIMEOUT_S", 2)
    src = (".intel_syntax noprefix\n" if isa == "x86" else "") + line + "\n"
    err = asm_error(src, isa)
    assert err.message == f"cannot assemble {line!r}: {why}"
    assert err.line == line


@pytest.mark.parametrize("src, text", [
    ("li 3, -0x10000000000000000\n", "li 3, -0x10000000000000000"),
    (".equ X, -(1 << 64)\nli 3, X\n", "li 3, (-0x10000000000000000)"),
])
def test_numbers_of_64_bits_or_more_are_refused_before_keystone_hangs(monkeypatch, src, text):
    monkeypatch.setattr(asm, "WORKER_TIMEOUT_S", 2)
    err = asm_error(src)
    assert err.message == f"cannot assemble {text!r}: the number 0x10000000000000000 " \
        "does not fit in 64 bits"


# ------------------------------------------------------------ symbols and layout

def test_a_forward_reference_without_its_label_names_what_was_written():
    # keystone's message named the internal '.L1$0' (on x86, mangled to '.L1$0x0')
    for isa, line in (("ppc32", "b 1f"), ("x86", "jmp 1f"), ("arm", "bne 1f")):
        err = asm_error(f"1:  nop\n    {line}\n", isa)
        assert err.message == "'1f' refers forward to a label 1: that is not defined below"
        assert (err.lineno, err.line) == (2, f"    {line}")


def test_a_symbol_set_twice_to_different_values_is_refused():
    # GNU as would give the first li 1 and the second 2; emu gave both 2, silently
    err = asm_error(".set X, 1\nli 3, X\n.set X, 2\nli 4, X\n")
    assert err.message == "symbol 'X' is already defined on line 1: it cannot take " \
        "another value"
    assert (err.lineno, err.line) == (3, ".set X, 2")
    # the same value again is harmless (a header included twice)
    assert words(assemble(".equ X, 1\n.equ X, 1\nli 3, X\n", "ppc32")) == [0x38600001]


def test_arm_ldr_of_a_constant_wider_than_32_bits_is_refused():
    # was silently cut to its low 32 bits (movw r0, #0; movt r0, #0)
    err = asm_error("ldr r0, =1 << 40\n", "arm")
    assert err.message == "0x10000000000 does not fit in 32 bits"
    assert words(assemble("ldr r0, =-1\n", "arm")) == [0xE30F0FFF, 0xE34F0FFF]


def test_a_layout_that_never_settles_names_the_statement():
    err = asm_error("nop\na: .space (b - a) + 4\nb:\n")
    assert err.message == "the layout did not settle: this statement's size keeps changing"
    assert (err.lineno, err.line) == (2, "a: .space (b - a) + 4")
