"""Bad input gets a clear error, never a dead process, a hang or silently wrong results.

Each case here was found by feeding emu malformed assembly, hostile guest code and bad
arguments (run in a child process, so that a crash would have been observed): the
expectations are written from what a reader should be told, not from what emu printed.
"""
import pytest

import emu.assemble as asm
from emu.assemble import AssemblyError, assemble

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
