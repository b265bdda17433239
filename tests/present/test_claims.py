"""emu.present.claims: a claim's direction and share of the effect reproduced, by hand."""
import pytest

from emu.present.claims import Claim


def claim(published, emulated, neutral=0.0, unit=""):
    return Claim("A", "c", published=published, emulated=emulated, unit=unit, source="T1",
                 reason="r", neutral=neutral)


def test_direction_and_effect_by_hand():
    # a ratio of times: 0.83 published, 0.90 emulated: both below 1, 0.10 / 0.17 of the effect
    c = claim(0.83, 0.90, neutral=1)
    assert c.agrees and c.effect_reproduced == pytest.approx(0.10 / 0.17)
    # a change of system time: +0.19 s published, -0.16 s emulated: opposite sides of 0
    c = claim(0.19, -0.16, unit="s")
    assert not c.agrees and c.effect_reproduced == pytest.approx(-0.16 / 0.19)
    row = c.row()
    assert row["direction"] == "disagree" and row["difference"] == pytest.approx(-0.35)
    assert claim(0.0, 0.5).effect_reproduced is None          # the paper saw no effect
    assert claim(100.0, 100.0, neutral=100).agrees           # neither moved




def test_bad_claims_are_refused():
    with pytest.raises(ValueError, match="finite number"):
        claim(float("nan"), 1.0)
