"""arch_spin_lock's loop and atomic_add_return's as macros (routines/arm/arch_spinlock.S): each
routine that used to write a loop out assembles to the same bytes with the macros as with the
loops written out by hand, as it was before them (spinlock.S: with teq where it had cmp, below)."""
import pytest

from emu import routine
from emu.isa.assemble import assemble
from emu.kernel.arm import ROUTINES, routines_source

#: the loop as each file wrote it out before the macro: (file, the macro's line, the loop)
WRITTEN_OUT = {
    "pagelock.S": "r0, r1, r3",
    "lru_v7.S": "r0, r1, r3",
    # spinlock.S had cmp r1/r2, #0 where 2.6.36 (and the other two) have teq: the same Z
    # flag for the bne, and one ALU cycle each in the cortex-a9 profile (no mnemonic cost
    # for either), so its bytes change in those two words and its cycles do not
    "spinlock.S": "r0, r1, r2",
}
LOOP = """1:      ldrex   {1}, [{0}]
        teq     {1}, #0
        bne     1b
        mov     {1}, #1
        strex   {2}, {1}, [{0}]
        teq     {2}, #0
        bne     1b
        dmb
"""


#: atomic_add_return's loop as zap_v7.S, wp_v7.S and fault_v7.S wrote it out before
#: ATOMIC_OP_RETURN (the same macro file): op, address, value, status, operand
ATOMIC_LOOP = """        dmb
1:      ldrex   {2}, [{1}]
        {0}     {2}, {2}, {4}
        strex   {3}, {2}, [{1}]
        teq     {3}, #0
        bne     1b
        dmb
"""


def written_out(name):
    """The file with its ARCH_SPIN_LOCK line and its ATOMIC_OP_RETURN lines replaced by the
    loops written out (a file without them as it is)."""
    text = routine(f"arm/{name}").read_text()
    for line in macro_lines(text, "ATOMIC_OP_RETURN"):
        args = [a.strip() for a in line.split(None, 1)[1].split("@")[0].split(",")]
        text = text.replace(line, ATOMIC_LOOP.format(*args), 1)
    if name not in WRITTEN_OUT:
        return text
    args = [a.strip() for a in WRITTEN_OUT[name].split(",")]
    lines = macro_lines(text, "ARCH_SPIN_LOCK")
    assert len(lines) == 1 and lines[0].split(None, 1)[1].startswith(WRITTEN_OUT[name])
    return text.replace(lines[0], LOOP.format(*args))


def macro_lines(text, macro):
    return [ln for ln in text.splitlines(keepends=True) if ln.split()[:1] == [macro]]


@pytest.mark.parametrize("names", [ROUTINES, ("spinlock.S",)], ids=["ROUTINES", "spinlock"])
def test_macro_assembles_to_the_loop_written_out(names):
    """The ARM backend's routines (pagelock.S and lru_v7.S among them: lru_v7.S takes
    pagelock.S's symbols) and spinlock.S, each load as the kernel model makes it."""
    with_macro = assemble(routines_source(names), "arm")
    by_hand = assemble("".join(written_out(name) for name in names), "arm")
    assert bytes(with_macro.code) == bytes(by_hand.code)
    assert with_macro.symbols == by_hand.symbols


def test_the_arm_routines_take_the_macro_three_times():
    text = "".join(routine(f"arm/{name}").read_text() for name in (*ROUTINES, "spinlock.S"))
    uses = [ln for ln in text.splitlines() if ln.split()[:1] == ["ARCH_SPIN_LOCK"]]
    assert len(uses) == 3 == len(WRITTEN_OUT)


def test_the_arm_routines_take_the_atomic_macro_four_times():
    """zap_v7.S twice (page_remove_rmap's atomic_add_negative, put_page_testzero), wp_v7.S's
    put_page, fault_v7.S's page_add_file_rmap: each expanded by written_out above."""
    counts = {name: len(macro_lines(routine(f"arm/{name}").read_text(), "ATOMIC_OP_RETURN"))
              for name in ROUTINES}
    assert {n: k for n, k in counts.items() if k} == {"zap_v7.S": 2, "wp_v7.S": 1,
                                                       "fault_v7.S": 1}
