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

import ast
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
    """Glue each value under its name for the page's prose, showing nothing in the cell.
    The prose writes {eval}`emu.glued('name')` or {eval}`emu.glued('name:,.0f')`: JupyterLab
    (jupyterlab-myst) evaluates it in the kernel, the book (_ext/eval_glue.py) pastes myst-nb's
    glued value. Comparisons are glued as their sentence."""
    for name, value in values.items():
        remember(name, value)
    try:
        from myst_nb import glue as myst_glue
    except ImportError:             # pragma: no cover - myst-nb is in requirements.txt
        return
    for name, value in values.items():
        myst_glue(name, gluable(value), display=False)


# What this kernel has glued, by name: the values the prose's {eval} expressions read
_GLUED = {}


def remember(name, value):
    _GLUED[name] = value


class Text(str):
    """Glued text as the book prints it. Its repr is the text itself, so that JupyterLab
    shows it as it shows a number, without quotes."""

    def __repr__(self):
        return str(self)


def glued(key):
    """The value glued as ``name`` in ``name`` or ``name:format``, as the book's
    {glue:text}`key` prints it (myst-nb formats the value's text: plain_text below)."""
    name, spec = key.rsplit(":", 1) if ":" in key else (key, "")
    return Text(plain_text(repr(gluable(glued_value(name))), spec))


def glued_md(name):
    """The Markdown glued as ``name`` (the book's {glue:md}`name`)."""
    return glued_value(name)


def glued_value(name):
    if name not in _GLUED:
        raise NameError(f"nothing is glued as {name!r} yet: run the cells above this one "
                        "(Run All)")
    return _GLUED[name]


def plain_text(text, spec):
    """myst-nb's format_plain_text (myst_nb.core.variables): the text of a value, read back
    as a Python literal, formatted by ``spec`` as a string, an int or a float by its type."""
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if spec == "":
        return str(value)
    kind = spec[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, spec)


def gluable(value):
    """What myst-nb can paste for ``value``: a Comparison's sentence, a plain number, or
    the value itself."""
    return str(value) if isinstance(value, Comparison) else plain(value)
