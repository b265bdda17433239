"""The reproduction scorecard: every claim of every chapter, the published value beside the
emulated one.

A claim is an effect a paper reports (a ratio of times, a saving, a fall in percent) with the
value it printed and where, the value a fresh run of the model gives, and one line saying
why they differ or agree. Each chapter's module lists its claims in a ``claims()`` function
that runs the model the way the chapter does; ``emu.book.scorecard`` gathers them into one
table with the direction (agree / disagree), the ratio and the
absolute difference (``emu.present.compare``), for the book's scorecard page. No value in it is
typed by hand: the published ones come from ``data/``, the emulated ones from the run.

The direction of a claim is read against its neutral value: 1 for a ratio of times ("the
change makes it 0.83 times as long"), 100 for such a ratio in percent, 0 for a difference or
a change in percent. Published
and emulated agree in direction when both lie on the same side of it.
"""
from __future__ import annotations

from dataclasses import dataclass

from .compare import Comparison


@dataclass(frozen=True)
class Claim:
    chapter: str
    claim: str              # what the paper says, in a few words
    published: float
    emulated: float
    unit: str               # "" for a ratio, "us", "s", "%"
    source: str             # where the published value is printed (table, section)
    reason: str             # one line: why they agree or differ
    neutral: float = 0.0    # the value of "no effect": 1 for a ratio, 100 for one in %, else 0
    digits: int = 2

    def __post_init__(self):
        Comparison(self.emulated, self.published)          # refuses NaN and non-numbers
        for name in ("published", "emulated"):             # numpy scalars: plain floats
            object.__setattr__(self, name, float(getattr(self, name)))

    @property
    def comparison(self):
        return Comparison(self.emulated, self.published, self.unit, self.digits)

    @property
    def agrees(self):
        """Do published and emulated lie on the same side of no effect?"""
        def side(x):
            return (x > self.neutral) - (x < self.neutral)
        return side(self.published) == side(self.emulated)

    @property
    def effect_reproduced(self):
        """The emulated effect as a share of the published one (1: all of it, 0: none,
        negative: the opposite effect); None when the paper reports no effect."""
        published = self.published - self.neutral
        return None if published == 0 else (self.emulated - self.neutral) / published

    def row(self):
        c = self.comparison
        return {"chapter": self.chapter, "claim": self.claim, "published": self.published,
                "emulated": self.emulated, "unit": self.unit,
                "direction": "agree" if self.agrees else "disagree",
                "ratio": c.ratio, "difference": c.difference,
                "effect reproduced": self.effect_reproduced, "source": self.source,
                "reason": self.reason}
