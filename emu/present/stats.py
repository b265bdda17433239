"""How large a difference a benchmark with run-to-run noise can resolve.

Papers compare averages of a few timed runs. With a standard deviation ``s`` per run, the
mean of ``n`` runs is uncertain by ``s / sqrt(n)``, and the difference of two such means by
``s * sqrt(1/n1 + 1/n2)``. A difference is resolved (two-sided test at level ``alpha``, equal
variances, Student's t) only when it exceeds ``t(1 - alpha/2, n1 + n2 - 2)`` times that; it
is found reliably (with probability ``power``) only when it exceeds about
``(t_alpha + t_beta)`` times it. Mackerras 2003 section 4.2 is the book's example: 1.42 s
over 7 runs, against differences below 0.6 s.
"""
from __future__ import annotations

import math

from scipy import stats as _stats


def _check(s, *runs):
    if not s > 0:
        raise ValueError(f"the standard deviation must be positive, not {s!r}")
    for n in runs:
        if int(n) != n or n < 2:
            raise ValueError(f"each side needs at least 2 runs (a whole number), not {n!r}")


def standard_error(s, n1, n2):
    """Standard error of the difference of two means of ``n1`` and ``n2`` runs."""
    _check(s, n1, n2)
    return s * math.sqrt(1 / n1 + 1 / n2)


def resolvable_difference(s, n1, n2=None, alpha=0.05):
    """The smallest difference of two means that a two-sided t-test at level ``alpha``
    calls significant (``n2`` defaults to ``n1``)."""
    n2 = n1 if n2 is None else n2
    t = _stats.t.ppf(1 - alpha / 2, n1 + n2 - 2)
    return t * standard_error(s, n1, n2)


def detectable_difference(s, n1, n2=None, alpha=0.05, power=0.8):
    """The difference that such a test finds with probability ``power`` (the usual
    ``(t_alpha/2 + t_beta) * SE`` approximation)."""
    n2 = n1 if n2 is None else n2
    df = n1 + n2 - 2
    t = _stats.t.ppf(1 - alpha / 2, df) + _stats.t.ppf(power, df)
    return t * standard_error(s, n1, n2)


def runs_needed(difference, s, alpha=0.05, power=0.8, limit=1_000_000):
    """Runs per side for ``detectable_difference`` to reach ``difference``."""
    if not difference > 0:
        raise ValueError(f"the difference must be positive, not {difference!r}")
    def enough(n):
        return detectable_difference(s, n, n, alpha, power) <= difference

    low, high = 1, 2                        # enough(high) once the doubling stops
    while not enough(high):
        if high >= limit:
            raise ValueError(f"more than {limit} runs per side would be needed")
        low, high = high, min(2 * high, limit)
    while high - low > 1:                   # the detectable difference falls as n grows
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high
