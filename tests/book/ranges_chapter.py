"""A chapter of two claims for tests/book/test_ranges.py, cheap to run and to check by hand:
one from the kernel's cost table (fork's C path), one from a guest run on the 750 (three
syncs)."""
from emu.kernel import costs
from emu.present.claims import EFFECT, QUANTITY, Claim
from emu.run.machine import Machine


def claims():
    m = Machine("ppc750")
    m.load("f:\n sync\n sync\n sync\n blr\n")
    return [Claim("Tiny", "fork's C path", published=4000, emulated=costs.cycles("fork"),
                  unit="cycles", source="-", reason="-", kind=QUANTITY),
            Claim("Tiny", "three syncs", published=2.0, emulated=m.call("f").cycles / 10,
                  unit="", source="-", reason="-", kind=EFFECT, neutral=1)]
