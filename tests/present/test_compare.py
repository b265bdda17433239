"""emu.present.compare: the direction, the ratio and the absolute difference, by hand."""
import numpy as np
import pytest

from emu.present.compare import Comparison, glue, plain


def test_a_comparison_states_direction_ratio_and_difference():
    c = Comparison(695.5, 2811, "us")
    assert c.direction == "lower" and c.difference == pytest.approx(-2115.5)
    assert c.ratio == pytest.approx(695.5 / 2811)
    assert str(c) == "696 us emulated against 2,811 us published: 0.25 times, 2,116 us less"
    assert str(Comparison(0.8978, 0.829, digits=3)) == \
        "0.898 emulated against 0.829 published: 1.08 times, 0.069 more"
    assert str(Comparison(3, 3)) == "3 emulated against 3 published: the same"
    assert str(Comparison(-2.1, 0.6, "%", 1)) == \
        "-2.1% emulated against 0.6% published: the opposite direction, 2.7 percentage points less"


def test_signs_and_zero():
    assert Comparison(-0.5, -2.0).same_sign and not Comparison(-0.5, 0.6).same_sign
    assert Comparison(5, 0).ratio is None
    assert str(Comparison(5, 0)) == "5 emulated against 0 published: 5 more"


def test_bad_values_are_refused():
    for bad in (float("nan"), float("inf"), "12", None):
        with pytest.raises(ValueError, match="finite number"):
            Comparison(bad, 1)


def test_numpy_values_become_plain_python_for_myst_nb():
    assert type(plain(np.float64(0.5))) is float and type(plain(np.int64(3))) is int
    assert plain("text") == "text"
    glue(x=np.float64(0.5), c=Comparison(1, 2))          # outside a notebook: no error
