"""An emulated value beside a published one, stated the way the book states every comparison:
the direction, the ratio and the absolute difference.

``Comparison(emulated, published, unit)`` computes them; ``str()`` gives the sentence the
chapters glue into their prose (``glue``), so that a number in the text always comes from the
run that printed it::

    >>> str(Comparison(695.5, 2811, "us"))
    '696 us emulated against 2,811 us published: 0.25 times, 2,116 us less'

Gains and changes compare the same way (the values may be negative: a change of -2.1% against
one of +0.6% is in the opposite direction, which ``same_sign`` tells).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass


@dataclass(frozen=True)
class Comparison:
    emulated: float
    published: float
    unit: str = ""
    digits: int = 0             # decimals shown for the values and the difference

    def __post_init__(self):
        for name in ("emulated", "published"):
            value = getattr(self, name)
            if not isinstance(value, numbers.Real) or isinstance(value, bool) or \
                    not math.isfinite(value):
                raise ValueError(f"Comparison: {name} must be a finite number, not {value!r}")

    @property
    def ratio(self):
        """emulated / published (None when the published value is 0)."""
        return None if self.published == 0 else self.emulated / self.published

    @property
    def difference(self):
        """emulated - published."""
        return self.emulated - self.published

    @property
    def direction(self):
        """Where the emulated value lies: "higher", "lower" or "equal"."""
        return ("equal" if self.difference == 0 else
                "higher" if self.difference > 0 else "lower")

    @property
    def same_sign(self):
        """Do the two values point the same way (both gains, both losses)?"""
        return (self.emulated > 0) == (self.published > 0) and \
            (self.emulated < 0) == (self.published < 0)

    def value(self, x):
        unit = f" {self.unit}" if self.unit and self.unit != "%" else self.unit
        return f"{x:,.{self.digits}f}{unit}"

    def __str__(self):
        said = f"{self.value(self.emulated)} emulated against {self.value(self.published)} " \
               f"published"
        if self.direction == "equal":
            return said + ": the same"
        if self.ratio is None:
            ratio = ""
        elif self.ratio < 0:
            ratio = "the opposite direction, "
        else:
            ratio = f"{self.ratio:.2f} times, "
        more = "more" if self.difference > 0 else "less"
        # a difference of percentages is in percentage points
        apart = f"{abs(self.difference):,.{self.digits}f} percentage points" \
            if self.unit == "%" else self.value(abs(self.difference))
        return f"{said}: {ratio}{apart} {more}"


def plain(value):
    """``value`` as a plain Python number if it is a number (numpy's scalars become int or
    float), else unchanged. myst-nb formats a glued number from its text, and numpy 2
    writes ``np.float64(1.5)``, which ``{glue:text}`name:.2f``` cannot format."""
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def glue(**values):
    """Glue each value under its name for the page's prose ({glue:text}`name` or
    {glue:text}`name:,.0f`), showing nothing in the cell. Comparisons are glued as their
    sentence. Outside a notebook build (myst-nb missing) this does nothing."""
    try:
        from myst_nb import glue as myst_glue
    except ImportError:             # pragma: no cover - myst-nb is in requirements.txt
        return
    for name, value in values.items():
        myst_glue(name, gluable(value), display=False)


def gluable(value):
    """What myst-nb can paste for ``value``: a Comparison's sentence, a plain number, or
    the value itself."""
    return str(value) if isinstance(value, Comparison) else plain(value)
