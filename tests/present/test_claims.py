"""emu.present.claims: a claim's kind, direction, magnitude band and verdict, by hand; a
published "no change" judged by its tolerance; the numbers no claim states."""
import pytest

from emu.present import claims as C
from emu.present.claims import Claim, not_modelled


def effect(published, emulated, neutral=1.0, **kw):
    return Claim("A", "c", published=published, emulated=emulated, unit="", source="T1",
                 reason="r", kind=C.EFFECT, neutral=neutral, **kw)


def quantity(published, emulated, **kw):
    return Claim("A", "q", published=published, emulated=emulated, unit="us", source="T1",
                 reason="r", kind=C.QUANTITY, **kw)


@pytest.mark.parametrize("published, emulated, neutral, direction, share, verdict", [
    # a ratio of times 0.83 -> 0.90: both below 1, 0.10 / 0.17 of the effect (x1.7 short)
    (0.83, 0.90, 1, "same", 0.10 / 0.17, "within x2"),
    # 0.80 -> 0.76: 0.24 / 0.20 = 1.2 of the effect
    (0.80, 0.76, 1, "same", 0.24 / 0.20, "within x1.25"),
    # PK1's trend 0.25 -> 0.96: 0.04 / 0.75 of the effect, which once "agreed"
    (0.25, 0.96, 1, "same", 0.04 / 0.75, "beyond x2"),
    # a saving of 10 s against 25 s: x2.5 too much
    (10, 25, 0, "same", 2.5, "beyond x2"),
    # +0.19 s published, -0.16 s emulated: the opposite side of 0
    (0.19, -0.16, 0, "opposite", -0.16 / 0.19, "opposite direction"),
    # the model shows none at all
    (9.0, 1.0, 1, "none", 0.0, "no effect on the model"),
])
def test_effect_verdicts_by_hand(published, emulated, neutral, direction, share, verdict):
    c = effect(published, emulated, neutral)
    assert c.direction == direction
    assert c.magnitude == pytest.approx(share)
    assert c.verdict == verdict
    assert c.row()["verdict"] == verdict


@pytest.mark.parametrize("published, emulated, verdict", [
    (2.0, 2.67, "within x2"),          # 1.33 times
    (6.0, 6.64, "within x1.25"),       # 1.11 times
    (13.2, 40.7, "beyond x2"),         # the flush share: 3.1 times, once "agree"
    (50.0, 20.0, "beyond x2"),         # 2.5 times too little
    (0.57, 0.0, "beyond x2"),          # none where the paper has some
    (0.0, 0.0, "within x1.25"),        # both none
])
def test_a_quantity_has_only_a_magnitude(published, emulated, verdict):
    c = quantity(published, emulated)
    assert c.direction is None and c.verdict == verdict


def test_band_edges():
    assert C.band(1.25) == C.band(1 / 1.25) == "within x1.25"
    assert C.band(1.2501) == C.band(2.0) == C.band(0.5) == "within x2"
    assert C.band(2.0001) == C.band(0.4999) == "beyond x2"
    with pytest.raises(ValueError, match="positive"):
        C.band(0)


def test_a_published_no_change_is_judged_by_its_tolerance():
    # the paper: +0.19 s, within its 1.42 s noise; the model: -0.16 s, also within
    c = effect(0.19, -0.16, neutral=0, tolerance=1.42, tolerance_source="section 4.2")
    assert c.published_no_change and c.direction is None
    assert c.verdict == "no change, within tolerance"
    assert c.row()["no change within"] == "±1.42: section 4.2"
    assert effect(0.19, -2.0, neutral=0, tolerance=1.42,
                  tolerance_source="s").verdict == "a change beyond tolerance"
    # a published effect beyond the tolerance, the model's within it: no effect
    assert effect(17, 0.3, neutral=0, tolerance=0.5,
                  tolerance_source="s").verdict == "no effect on the model"
    # and a real effect past the tolerance is banded as any effect
    assert effect(17, 12, neutral=0, tolerance=0.5, tolerance_source="s").verdict == "within x2"


def test_not_modelled_and_inputs_have_no_verdict_of_agreement():
    c = not_modelled("A", "c", 5.1, "%", "section 2.2", C.EFFECT, "no user time", neutral=0)
    assert c.verdict == "not modelled" and c.magnitude is None and c.direction is None
    assert c.row()["reason"] == "no user time"
    i = quantity(80.0, 80.0, status=C.INPUT)
    assert i.verdict == "input" and i.magnitude is None


def test_a_spread_is_shown_beside_the_value_and_leaves_the_verdict():
    """A claim averaged over runs carries the lowest and highest of them: the row gives
    them and what they span; a spread on one side of no effect leaves the verdict the
    emulated value's, and the row says where its ends fall."""
    plain = effect(6.0, 4.0, neutral=0)
    spread = effect(6.0, 4.0, neutral=0, spread=(1.0, 9.5, "3 layouts"))
    assert plain.spread is None and spread.spread == (1.0, 9.5, "3 layouts")
    assert spread.verdict == plain.verdict == "within x2"       # 4 / 6 of the effect
    assert spread.magnitude == plain.magnitude == pytest.approx(4 / 6)
    row, bare = spread.row(), plain.row()
    assert (row["spread low"], row["spread high"], row["spread over"]) == (1.0, 9.5, "3 layouts")
    assert (bare["spread low"], bare["spread high"], bare["spread over"]) == (None, None, "")
    assert plain.row() == bare                     # a row equals its copy (no NaN in it)
    assert set(row) == set(bare)                   # every claim's row has the same columns
    # at its ends 1 / 6 of the effect (beyond x2) and 9.5 / 6 = x1.58 (within x2)
    assert spread.spread_verdicts() == ("beyond x2", "within x2")
    assert row["spread verdicts"] == ("its spread covers several bands: beyond x2 at its "
                                      "low, within x2 at its high")
    assert bare["spread verdicts"] == "" and plain.spread_verdicts() is None
    inside = effect(6.0, 4.0, neutral=0, spread=(3.5, 4.5, "3 layouts"))   # x1.71, x1.33
    assert inside.verdict == "within x2" and inside.row()["spread verdicts"] == ""


def test_a_spread_that_straddles_no_effect_is_its_own_verdict():
    """An effect whose spread's ends lie on both sides of no effect (with the tolerance)
    gets ``STRADDLES``, whatever its value; touching the tolerance's band counts; a
    published "no change" keeps its tolerance verdicts."""
    across = effect(6.0, 4.0, neutral=0, spread=(-1, 9.5, "3 layouts"))
    assert across.verdict == C.STRADDLES and across.straddles
    assert across.magnitude == pytest.approx(4 / 6)              # the value's, as before
    # at its ends the effect would be the opposite (-1 against +6) and 9.5 / 6 = x1.58
    assert across.spread_verdicts() == ("opposite direction", "within x2")
    assert across.row()["spread verdicts"] == ("its spread straddles no effect: opposite "
                                               "direction at its low, within x2 at its high")
    rounded = dict(tolerance=0.5, tolerance_source="s")
    assert effect(6.0, 4.0, neutral=0, spread=(0.4, 9.5, "2 runs"), **rounded).verdict \
        == C.STRADDLES                                           # 0.4: none within 0.5
    assert effect(6.0, 4.0, neutral=0, spread=(0.6, 9.5, "2 runs"), **rounded).verdict \
        == "within x2"
    assert effect(0.0, 0.2, neutral=0, spread=(-1, 1, "2 runs"), **rounded).verdict \
        == "no change, within tolerance"
    assert C.STRADDLES in C.VERDICTS


@pytest.mark.parametrize("spread, message", [
    ((2.0, 1.0, "3 layouts"), "above its high"),
    ((1.0, 2.0, ""), "says what it spans"),
    ((1.0, 2.0), r"\(low, high, what it spans\)"),
    ((1.0, float("inf"), "3 layouts"), "finite numbers"),
    (("1", 2.0, "3 layouts"), "finite numbers"),
])
def test_a_bad_spread_is_refused(spread, message):
    with pytest.raises(ValueError, match=message):
        effect(6.0, 4.0, neutral=0, spread=spread)
    with pytest.raises(ValueError, match="has none"):
        not_modelled("A", "c", 5.1, "%", "s", C.EFFECT, "no user time", neutral=0,
                     spread=(1.0, 2.0, "3 layouts"))


@pytest.mark.parametrize("make, message", [
    (lambda: Claim("A", "c", 1.0, 1.0, "", "T", "r"), "kind must be"),
    (lambda: Claim("A", "c", 1.0, 1.0, "", "T", "r", kind="effect"), "neutral value"),
    (lambda: quantity(1.0, 1.0, neutral=0), "no neutral value"),
    (lambda: effect(1.0, 1.0, tolerance=0.1), "with its source"),
    (lambda: quantity(1.0, None), "exactly when it is modelled"),
    (lambda: effect(float("nan"), 1.0), "finite number"),
    (lambda: quantity(1.0, 1.0, status="agrees"), "no status"),
    (lambda: effect(1.0, 1.2), "needs its tolerance"),
])
def test_bad_claims_are_refused(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_uncovered_lists_what_no_claim_states(tmp_path):
    claims = [effect(2254 / 5065, 0.6, published_from=(5065, 2254))]
    files = ["mackerras2003_table2_lmbench"]
    left = C.uncovered(claims, files, {("mackerras2003_table2_lmbench", "mhz"): "clock"})
    columns = {column for _, _, column, _ in left}
    assert "exec_proc" not in columns and "mhz" not in columns and "fork_proc" in columns
    assert C.uncovered(claims, files, {"mackerras2003_table2_lmbench": "all"}) == []
