"""arch_spin_lock's loop as one macro (routines/arm/arch_spinlock.S): each routine that used
to write the loop out assembles to the same bytes with the macro as with the loop written
out by hand, as it was before the macro (spinlock.S: with teq where it had cmp, below)."""
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


def written_out(name):
    """The file with its ARCH_SPIN_LOCK line replaced by the loop written out (a file
    without one as it is)."""
    text = routine(f"arm/{name}").read_text()
    if name not in WRITTEN_OUT:
        return text
    args = [a.strip() for a in WRITTEN_OUT[name].split(",")]
    lines = [ln for ln in text.splitlines(keepends=True) if ln.split()[:1] == ["ARCH_SPIN_LOCK"]]
    assert len(lines) == 1 and lines[0].split(None, 1)[1].startswith(WRITTEN_OUT[name])
    return text.replace(lines[0], LOOP.format(*args))


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
