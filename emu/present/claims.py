"""The reproduction scorecard: every claim of every chapter, the published value beside the
emulated one, and a verdict that can fail.

A claim is a number a paper states as a result, with the value it printed and where, the
value a fresh run of the model gives, and one line saying why they differ or agree. Each
chapter's module lists its claims in a ``claims()`` function that runs the model the way
the chapter does; ``emu.book.scorecard`` gathers them into one table for the book's
scorecard page. No value in it is typed by hand: the published ones come from
``data/``, the emulated ones from the run.

Every claim says its kind:

- an **effect** (a ratio of times, a saving, a change in percent) is read against its
  ``neutral`` value, "no effect" (1 for a ratio, 100 for a ratio in percent, 0 for a
  difference). Its *direction* is whether the model's effect points the paper's way; its
  *magnitude* is the share of the published effect the model reproduces,
  (emulated - neutral) / (published - neutral).
- a **quantity** (a share of time, a latency, a bandwidth) has no "no effect": a positive
  number is not an agreement. Its magnitude is emulated / published.

The magnitude falls in a band (``BANDS``): within x1.25 of the paper, within x2, beyond x2,
or the opposite direction. A paper's "no change" (an effect within its own noise) has a
``tolerance`` around the neutral value, stated with its source: the model's effect is then
within or beyond it. A claim the model cannot run is a row too, with status "not modelled"
and what is missing; a number the model takes as its input is status "input" and has no
verdict (comparing it with itself would be circular).

A claim may carry its **spread**: the lowest and the highest value the model gives over
runs of the same machine that differ only in what a real one leaves to chance (a chapter's
layouts of memory, its copies' starts nudged in time, say), and what those runs are ("3
layouts"). It is shown beside the value. It changes the verdict in one case, alike for every
chapter: an effect whose spread's ends lie on different sides of no effect (a gain at one
end, none or a loss at the other: ``_side`` with the tolerance) gets ``STRADDLES`` whatever
its value, since a run of the model could come out either way. Otherwise the verdict is the
value's, and ``spread_note`` says when the spread's ends fall in other bands.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace

from . import data
from .compare import Comparison

#: chapter -> its page in the book (the chapter's index: every page of it is linked there)
CHAPTER_PAGES = {"Dougan 1999": "notebooks/dougan1999/index",
                 "Blanchard 2002": "notebooks/blanchard2002/index",
                 "Mackerras 2003": "notebooks/mackerras2003/index",
                 "Yoshioka 2005": "notebooks/yoshioka2005/index",
                 "Yun 2011": "notebooks/yun2011/index"}

EFFECT, QUANTITY = "effect", "quantity"
RUN, NOT_MODELLED, INPUT = "run", "not modelled", "input"

#: the magnitude bands, narrowest first: (name, the largest factor between the model's and
#: the paper's value, either way, that the band holds)
BANDS = (("within x1.25", 1.25), ("within x2", 2.0))
BEYOND = "beyond x2"
OPPOSITE = "opposite direction"
NO_EFFECT = "no effect on the model"
#: an effect whose spread (the runs a real machine's chance decides) straddles no effect
STRADDLES = "spread straddles no effect"
WITHIN_TOLERANCE = "no change, within tolerance"
BEYOND_TOLERANCE = "a change beyond tolerance"
#: every verdict a row can have, in the order the page counts them
VERDICTS = tuple(name for name, _ in BANDS) + (BEYOND, OPPOSITE, NO_EFFECT, STRADDLES,
                                               WITHIN_TOLERANCE, BEYOND_TOLERANCE,
                                               NOT_MODELLED, INPUT)


def band(factor):
    """The band of a positive factor between two values (emulated / published or the share
    of an effect): how far from 1 it is, either way."""
    if not factor > 0:
        raise ValueError(f"band: a factor must be positive, not {factor!r}")
    apart = max(factor, 1 / factor)
    for name, limit in BANDS:
        if apart <= limit:
            return name
    return BEYOND


@dataclass(frozen=True)
class Claim:
    chapter: str
    claim: str              # what the paper says, in a few words
    published: float
    emulated: float | None  # None when the claim is not modelled
    unit: str               # "" for a ratio, "us", "s", "%"
    source: str             # where the published value is printed (table, section)
    reason: str             # one line: why they agree or differ (not modelled: what is missing)
    kind: str = ""          # EFFECT or QUANTITY: required, said explicitly
    neutral: float | None = None    # an effect's "no effect": 1 for a ratio, 100 in %, else 0
    tolerance: float | None = None  # a published "no change": |effect| up to this is none
    tolerance_source: str = ""      # where the tolerance comes from (the paper's noise...)
    status: str = RUN       # RUN, NOT_MODELLED or INPUT
    stand_in: str = ""      # the workload standing in for the paper's, and why
    page: str = ""          # the book page that computes it (default: the chapter's index)
    published_from: tuple = ()     # the printed numbers the published value is computed from
    digits: int = 2
    spread: tuple | None = None    # (low, high, what it spans): the model's value over the
    #                                runs the emulated one averages, e.g. (3.1, 6.2, "3 layouts")

    def __post_init__(self):
        if self.kind not in (EFFECT, QUANTITY):
            raise ValueError(f"claim {self.claim!r}: kind must be {EFFECT!r} or {QUANTITY!r}, "
                             f"not {self.kind!r}")
        if self.status not in (RUN, NOT_MODELLED, INPUT):
            raise ValueError(f"claim {self.claim!r}: no status {self.status!r}")
        if self.kind == EFFECT and self.neutral is None:
            raise ValueError(f"claim {self.claim!r}: an effect needs its neutral value")
        if self.kind == QUANTITY and self.neutral is not None:
            raise ValueError(f"claim {self.claim!r}: a quantity has no neutral value")
        if self.tolerance is not None and (self.kind != EFFECT or not self.tolerance > 0
                                           or not self.tolerance_source):
            raise ValueError(f"claim {self.claim!r}: a tolerance is a positive width of "
                             f"'no change' for an effect, with its source")
        if self.kind == EFFECT and self.status == RUN and self.published == self.neutral \
                and self.tolerance is None:
            raise ValueError(f"claim {self.claim!r}: a published 'no change' needs its "
                             f"tolerance (the paper's noise or the model's)")
        if (self.emulated is None) != (self.status == NOT_MODELLED):
            raise ValueError(f"claim {self.claim!r}: a claim has an emulated value exactly "
                             f"when it is modelled")
        emulated = self.published if self.emulated is None else self.emulated
        Comparison(emulated, self.published)              # refuses NaN and non-numbers
        for name in ("published", "emulated"):            # numpy scalars: plain floats
            if getattr(self, name) is not None:
                object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "published_from", tuple(float(x) for x in self.published_from))
        if self.spread is not None:
            object.__setattr__(self, "spread", self._checked_spread())

    def _checked_spread(self):
        """The spread as (low, high, spans) with plain floats, or a clear error."""
        if self.emulated is None:
            raise ValueError(f"claim {self.claim!r}: a spread is of emulated values; "
                             f"this claim has none")
        try:
            low, high, spans = self.spread
        except (TypeError, ValueError):
            raise ValueError(f"claim {self.claim!r}: a spread is (low, high, what it "
                             f"spans), not {self.spread!r}") from None
        if not isinstance(spans, str) or not spans.strip():
            raise ValueError(f"claim {self.claim!r}: a spread says what it spans "
                             f"(\"3 layouts\"), not {spans!r}")
        for value in (low, high):
            if not isinstance(value, numbers.Real) or isinstance(value, bool) or \
                    not math.isfinite(value):
                raise ValueError(f"claim {self.claim!r}: a spread's ends are finite "
                                 f"numbers, not {value!r}")
        if low > high:
            raise ValueError(f"claim {self.claim!r}: a spread's low {low} is above its "
                             f"high {high}")
        return float(low), float(high), spans

    @property
    def comparison(self):
        return None if self.emulated is None else \
            Comparison(self.emulated, self.published, self.unit, self.digits)

    @property
    def published_no_change(self):
        """Is the paper's effect within its tolerance of no effect (a published 'no
        change')?"""
        return self.tolerance is not None and \
            abs(self.published - self.neutral) <= self.tolerance

    def _side(self, value):
        """-1, 0 or 1: where an effect lies against no effect (0 within the tolerance)."""
        effect = value - self.neutral
        if self.tolerance is not None and abs(effect) <= self.tolerance:
            return 0
        return (effect > 0) - (effect < 0)

    @property
    def direction(self):
        """For an effect: "same", "opposite" or "none" (the model's effect against the
        paper's); None for a quantity or a claim without a verdict."""
        if self.kind != EFFECT or self.status != RUN or self.published_no_change:
            return None
        model, paper = self._side(self.emulated), self._side(self.published)
        return "none" if model == 0 else "same" if model == paper else "opposite"

    @property
    def magnitude(self):
        """The share of the published effect reproduced (an effect) or emulated / published
        (a quantity); None without a verdict or when the paper's effect is none."""
        if self.status != RUN:
            return None
        if self.kind == QUANTITY:
            return None if self.published == 0 else self.emulated / self.published
        published = self.published - self.neutral
        return None if published == 0 else (self.emulated - self.neutral) / published

    @property
    def verdict(self):
        """The claim's band (one of ``VERDICTS``)."""
        if self.status != RUN:
            return self.status
        if self.straddles:
            return STRADDLES
        if self.published_no_change:
            return WITHIN_TOLERANCE if self._side(self.emulated) == 0 else BEYOND_TOLERANCE
        if self.kind == EFFECT and self.direction != "same":
            return NO_EFFECT if self.direction == "none" else OPPOSITE
        if self.magnitude is None:          # a quantity the paper prints as 0
            return BANDS[0][0] if self.emulated == 0 else BEYOND
        if self.magnitude < 0:              # a quantity of the other sign
            return OPPOSITE
        return BEYOND if self.magnitude == 0 else band(self.magnitude)

    def row(self):
        c = self.comparison
        return {"chapter": self.chapter, "claim": self.claim, "kind": self.kind,
                "status": self.status, "published": self.published,
                "emulated": math.nan if self.emulated is None else self.emulated,
                "unit": self.unit, "neutral": self.neutral, "direction": self.direction,
                "magnitude": self.magnitude,
                "verdict": self.verdict,
                "difference": math.nan if c is None else c.difference,
                "tolerance": self.tolerance, "tolerance source": self.tolerance_source,
                "no change within": "" if self.tolerance is None else
                f"±{self.tolerance:.3g}{'' if self.unit in ('', '%') else ' '}{self.unit}: "
                f"{self.tolerance_source}",
                "source": self.source, "stand-in": self.stand_in, "reason": self.reason,
                "page": self.page or CHAPTER_PAGES.get(self.chapter, ""),
                **self.spread_fields()}

    @property
    def straddles(self):
        """Does the spread of an effect the paper reports (not as no change) lie on both
        sides of no effect: its ends on different sides (``_side``, with the tolerance)?"""
        if self.spread is None or self.kind != EFFECT or self.published_no_change:
            return False
        low, high, _ = self.spread
        return self._side(low) != self._side(high)

    @property
    def spread_note(self):
        """The spread's verdicts in words, where they are not all the verdict's: "its spread
        straddles no effect: <at its low> at its low, <at its high> at its high", or "its
        spread covers several bands: ..." the same; "" without a spread or where both ends
        have the value's verdict."""
        ends = self.spread_verdicts()
        if ends is None or (not self.straddles and set(ends) == {self.verdict}):
            return ""
        what = "straddles no effect" if self.straddles else "covers several bands"
        return f"its spread {what}: {ends[0]} at its low, {ends[1]} at its high"

    def spread_verdicts(self):
        """The verdicts the spread's ends would have as the emulated value: (at low, at
        high), or None without a spread (``spread_note`` says them beside the verdict)."""
        if self.spread is None:
            return None
        low, high, _ = self.spread
        return tuple(replace(self, emulated=v, spread=None).verdict for v in (low, high))

    def spread_fields(self):
        """The row's spread columns: "spread low", "spread high" (None without a spread:
        a row equals its copy, which NaN would not), "spread over" (what it spans; ""
        without) and "spread verdicts" (``spread_note``)."""
        low, high, spans = self.spread or (None, None, "")
        return {"spread low": low, "spread high": high, "spread over": spans,
                "spread verdicts": self.spread_note}


def not_modelled(chapter, claim, published, unit, source, kind, missing, neutral=None, **kw):
    """A claim of the paper the model cannot run: ``missing`` says what it lacks."""
    return Claim(chapter, claim, published=published, emulated=None, unit=unit,
                 source=source, reason=missing, kind=kind, neutral=neutral,
                 status=NOT_MODELLED, **kw)


def covered_numbers(claims):
    """Every published number the claims state or are computed from."""
    return {c.published for c in claims} | {x for c in claims for x in c.published_from}


def uncovered(claims, files, context):
    """The numeric cells of the data ``files`` that no claim states or is computed from
    and ``context`` does not list: [(file, row, column, value)]. ``context`` keys: a file,
    (file, column), or (file, text) for the rows with that text in one of their cells."""
    covered = covered_numbers(claims)
    out = []
    for name in files:
        if name in context:
            continue
        table = data.load(name)
        numeric = [c for c in table.columns if table[c].dtype.kind in "if"]
        for index, row in table.iterrows():
            if any(_hashable(v) and (name, v) in context for v in row.to_numpy()):
                continue
            for column in numeric:
                if (name, column) in context:
                    continue
                value = float(row[column])
                if not any(math.isclose(value, x, rel_tol=1e-9) for x in covered):
                    out.append((name, index, column, value))
    return out


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True
