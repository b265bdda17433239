"""emu.isa.assemble's .macro/.endm: an expansion assembles to the bytes of the same text
expanded by hand, and each misuse is refused with a message naming its line."""

import pytest

from emu.isa.assemble import AssemblyError, assemble


def same(macro_source, hand_source, isa="ppc32"):
    a, b = assemble(macro_source, isa), assemble(hand_source, isa)
    assert a.code == b.code and a.symbols == b.symbols
    return a


def test_arguments_by_position_by_name_and_defaults():
    src = (".macro SAVE reg, off=8\n"
           "\tstw \\reg, \\off(r1)   # a comment in the body\n"
           ".endm\n"
           "SAVE r3\nSAVE r4, 12\nSAVE off=16 reg=r5\nSAVE r6 20\n")
    p = same(src, "stw r3, 8(r1)\nstw r4, 12(r1)\nstw r5, 16(r1)\nstw r6, 20(r1)\n")
    # stw rS,d(rA) = 36<<26 | rS<<21 | rA<<16 | d
    assert p.code[:4] == ((36 << 26) | (3 << 21) | (1 << 16) | 8).to_bytes(4, "big")


def test_counter_gives_each_expansion_its_own_labels():
    src = (".macro SPIN n\n"
           ".Lspin\\@: addi r3, r3, \\n\n"
           "        bne .Lspin\\@\n"
           ".endm\n"
           "SPIN 1\nSPIN 2\n")
    p = same(src, ".Lspin0: addi r3, r3, 1\nbne .Lspin0\n.Lspin1: addi r3, r3, 2\n"
                  "bne .Lspin1\n")
    assert p.code[4:8] == (0x40820000 | (-4 & 0xFFFC)).to_bytes(4, "big")   # bne -4


def test_separator_label_argument_and_nested_use():
    src = (".macro LOAD r, base, name\n"
           "\\name\\()_at: lwz \\r, 0(\\base)\n"
           ".endm\n"
           ".macro TWICE\n"
           "LOAD r3, r4, first\n"
           "LOAD r5, r6, second\n"
           ".endm\n"
           "start: TWICE\n")
    p = same(src, "start:\nfirst_at: lwz r3, 0(r4)\nsecond_at: lwz r5, 0(r6)\n")
    assert p.symbols["second_at"] == p.symbols["start"] + 4


def test_conditionals_and_exitm_inside_a_macro():
    src = (".macro PAD n\n"
           ".if \\n == 0\n"
           ".exitm\n"
           ".endif\n"
           "nop\n"
           "PAD (\\n-1)\n"
           ".endm\n"
           "PAD 3\nli r3, 1\n")
    same(src, "nop\nnop\nnop\nli r3, 1\n")


def test_arm_and_x86_bodies():
    same(".macro PUSH2 a, b\npush {\\a}\npush {\\b}\n.endm\nPUSH2 r4, lr\n",
         "push {r4}\npush {lr}\n", "arm")
    same(".macro ZERO reg\nxorl \\reg, \\reg\n.endm\nZERO %eax\nZERO %ebx\n",
         "xorl %eax, %eax\nxorl %ebx, %ebx\n", "x86")


def test_string_argument_and_backslash_in_a_string_left_alone():
    same('.macro MSG text\n.ascii "\\text\\n"\n.endm\nMSG "a b"\n', '.ascii "a b\\n"\n')


def refused(source):
    with pytest.raises(AssemblyError) as e:
        assemble(source, "ppc32")
    return e.value


def test_unclosed_macro():
    e = refused("nop\n.macro OPEN x\nli r3, \\x\n")
    assert e.lineno == 2 and "OPEN without its .endm" in e.message


def test_endm_without_macro():
    e = refused("nop\n.endm\n")
    assert e.lineno == 2 and ".endm without a .macro" in e.message


def test_macro_defined_twice():
    e = refused(".macro M\n.endm\nnop\n.macro m\n.endm\n")
    assert e.lineno == 4 and "already defined on line 1" in e.message


def test_recursion_without_end():
    e = refused(".macro R\nR\n.endm\nnop\nR\n")
    assert e.lineno == 2 and "more than 100 deep" in e.message
    assert "used on line 5" in e.message


def test_unknown_argument_at_the_use_and_in_the_body():
    e = refused(".macro M x\nli r3, \\x\n.endm\nM y=1\n")
    assert e.lineno == 4 and "no parameter y" in e.message
    e = refused(".macro M x\nli r3, \\y\n.endm\n")
    assert e.lineno == 2 and "no parameter y" in e.message
    e = refused(".macro M x\nli r3, \\x\n.endm\nM 1, 2\n")
    assert e.lineno == 4 and "one too many" in e.message
    e = refused(".macro M x:req\nli r3, \\x\n.endm\nM\n")
    assert e.lineno == 4 and "needs its argument x" in e.message


def test_error_inside_an_expansion_names_the_macro_line_and_the_use():
    # the parser's error (a label twice: no \@) and keystone's (an unknown mnemonic)
    e = refused("nop\n.macro M\nhere: nop\n.endm\nM\nM\n")
    assert e.lineno == 3 and "defined twice" in e.message and "used on line 6" in e.message
    e = refused(".macro M x\n\n  frob \\x\n.endm\nnop\nnop\nM 1\n")
    assert e.lineno == 3 and e.line.strip() == "frob 1"
    assert "in macro M, used on line 7" in e.message


def test_exitm_outside_a_macro():
    assert refused("nop\n.exitm\n").lineno == 2
