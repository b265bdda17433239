"""emu.present.stats: the noise arithmetic of Mackerras 2003 section 4.2, checked by hand.

t(0.975, 12) = 2.178813 and t(0.80, 12) = 0.872609 (standard t tables); 7 runs a side with
s = 1.42 s give SE = 1.42 * sqrt(2/7) = 0.759022 s."""
import math

import pytest

from emu.present import stats


def test_standard_error_by_hand():
    assert stats.standard_error(1.42, 7, 7) == pytest.approx(1.42 * math.sqrt(2 / 7))
    assert stats.standard_error(2.0, 4, 16) == pytest.approx(2.0 * math.sqrt(1 / 4 + 1 / 16))


def test_resolvable_difference_seven_runs():
    assert stats.resolvable_difference(1.42, 7) == pytest.approx(2.178813 * 0.759022, rel=1e-5)


def test_two_runs_resolve_only_large_differences():
    # df = 2: t(0.975, 2) = 4.302653; SE = 1.42
    assert stats.resolvable_difference(1.42, 2) == pytest.approx(4.302653 * 1.42, rel=1e-6)


def test_detectable_difference_adds_the_power_quantile():
    assert stats.detectable_difference(1.42, 7) == pytest.approx(
        (2.178813 + 0.872609) * 0.759022, rel=1e-5)


def test_runs_needed_is_the_first_n_that_suffices():
    n = stats.runs_needed(0.6, 1.42)
    assert n == 89
    assert stats.detectable_difference(1.42, n) <= 0.6 < stats.detectable_difference(1.42, n - 1)
    assert stats.runs_needed(100, 1.42) == 2


@pytest.mark.parametrize("call", [lambda: stats.standard_error(0, 7, 7),
                                  lambda: stats.resolvable_difference(1.42, 1),
                                  lambda: stats.runs_needed(-1, 1.42),
                                  lambda: stats.runs_needed(1e-9, 1.42, limit=100)])
def test_bad_input_is_refused_with_a_reason(call):
    with pytest.raises(ValueError):
        call()
