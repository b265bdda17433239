"""What a real machine leaves to chance: the free list's order and the copies' starts
(layouts, emu.kernel.layout) and the copies' starts nudged in time (timings). The claims'
grid over the layouts, their mean, and each cell's spread over the runs."""
from __future__ import annotations

import pandas as pd

from ...run import sweep
from .board import BENCHMARKS, BOARD_CORES, CORES, KERNELS
from .published import table1
from .runs import _side, run, table1_emulated


#: the family of layouts (emu.kernel.layout): 0 a fresh boot's, the others a shuffled free
#: list and copies started apart; fixed, with the rule for CLAIM_LAYOUTS, before any
#: layout's gains were looked at
LAYOUTS = tuple(range(8))


#: the layouts the claims and the chapter average at four cores: the fewest first ones whose
#: mean is within one standard deviation of the whole family's for every four-core cell
#: (measured at 8 layouts: 2 are not, up to 1.7 deviations, 5.0 points; 3 are, 0.9, 2.5
#: points); each layout is a whole grid of runs
CLAIM_LAYOUTS = LAYOUTS[:3]


#: the layouts at one core: the fresh boot's alone; over the 8 layouts no one-core cell
#: moves its direction and the largest spread is a standard deviation of 0.5 points (PK3,
#: fork), where a four-core one is up to 4.1
ONE_CORE_LAYOUTS = LAYOUTS[:1]


#: the timings (emu.kernel.layout: each copy's start nudged by under TIMING_SPREAD_CYCLES)
#: that join the layouts in the four-core cells' spread: each of CLAIM_LAYOUTS run again with
#: each. Measured on 3 layouts x 6 timings (0-5, 360 runs, 30 November 2026): within one
#: layout the nudges alone spread the per-patch cells as far as all 18 runs do (standard
#: deviation within a layout, pooled, 0.06-3.15 points; over the 18, 0.08-3.21; PK1 fork
#: -2.7 to 7.7%, PK2 shell 5.2 to 15.9%, where the three layouts gave 0.3 to 4.7 and 14.4 to
#: 15.9), while the Overall cells and PK4's keep a part that is the layout's (Overall exec:
#: the three layouts' means over their six timings 39.2, 35.3 and 32.0%, within a layout 1.4
#: points); so the timings join the layouts rather than replace them. One timing, as the
#: build's time allows (60 four-core runs each, only in the claims as they are: no move of
#: the scorecard's reads a spread)
SPREAD_TIMINGS = (1,)


def timing_timings(layouts=CLAIM_LAYOUTS, timings=SPREAD_TIMINGS, benchmarks=BENCHMARKS,
                   kernels=tuple(KERNELS), executor=None):
    """The four-core grid in ``layouts`` x ``timings`` (emu.run.sweep), as ``layout_timings``
    with the index's ``layout`` a run's member of the family, "L+tT" (layout L, timing T)."""
    points = sweep.grid(layout=list(layouts), timing=list(timings), benchmark=list(benchmarks),
                        kernel=list(kernels), cores=[BOARD_CORES])
    frame = pd.DataFrame(sweep.run(run, points, executor=executor))
    frame["layout"] = [member(p["layout"], p["timing"]) for p in points]
    return frame.set_index(["layout", "kernel", "cores", "benchmark"]).sort_index()


def member(layout, timing=0):
    """A run's name in the spread's family: its layout, and "+tT" for timing T > 0."""
    return str(layout) if timing == 0 else f"{layout}+t{timing}"


def spread_family(by_layout, by_timing):
    """The runs of a spread: ``by_layout``'s at four cores and ``by_timing``'s
    (``timing_timings``), one frame indexed as ``layout_timings``, the ``layout`` level each
    run's member name (``member``); None without ``by_layout``."""
    if by_layout is None:
        return None
    four = by_layout[by_layout.index.get_level_values("cores") == BOARD_CORES]
    four = four.rename(index=lambda v: member(v), level="layout")
    if by_timing is None or by_timing.empty:
        return four
    return pd.concat([four, by_timing]).sort_index()


def timing_sensitivity(by_layout, by_timing, published=None):
    """Each four-core cell of Table 1 over the spread's family (``spread_family``): the
    value (the layouts' mean, as the claims), the layouts' range (``layouts low``, ``layouts
    high``) and the family's (``low``, ``high``), how far the timings move a gain within one
    layout (``within``: the standard deviation of a layout's runs about their mean, pooled
    over the layouts, ddof=0) and how far the layouts' means lie apart (``between``: their
    standard deviation, ddof=0), the report's value, and whether the family's gains
    straddle no effect (``straddles``: some within half a point or on the other side,
    ``_side``) and whether the layouts' alone do (``layouts straddle``)."""
    published = table1() if published is None else published
    value = table1_emulated(mean_timings(by_layout)).xs(BOARD_CORES, level="cores").stack()
    family = spread_family(by_layout, by_timing)
    each = table1_layouts(family).xs(BOARD_CORES, level="cores")
    rows = []
    for (patch, bench), v in value.items():
        gains = each.xs((patch, bench), level=["patch", "benchmark"])
        layout_of = [str(m).split("+")[0] for m in gains.index]
        by = pd.Series(gains.to_numpy(), index=layout_of).groupby(level=0)
        plain = gains[[m for m in gains.index if "+" not in str(m)]]
        means = by.mean()
        within = float((by.apply(lambda g: ((g - g.mean()) ** 2).mean())).mean() ** 0.5)
        rows.append({"patch": patch, "benchmark": bench, "value": float(v),
                     "layouts low": float(plain.min()), "layouts high": float(plain.max()),
                     "low": float(gains.min()), "high": float(gains.max()),
                     "within": within, "between": float(mean_spread(means)["std"]),
                     "runs": len(gains),
                     "published": float(published.loc[(patch, BOARD_CORES), bench]),
                     "straddles": len({_side(g) for g in gains}) > 1,
                     "layouts straddle": len({_side(g) for g in plain}) > 1})
    return pd.DataFrame(rows).set_index(["patch", "benchmark"])


def layout_timings(layouts=LAYOUTS, benchmarks=BENCHMARKS, kernels=tuple(KERNELS),
                   cores=CORES, executor=None):
    """``run`` over layouts x the grid (emu.run.sweep), as a DataFrame indexed by (layout,
    kernel, cores, benchmark), the columns of ``timings``."""
    points = sweep.grid(layout=list(layouts), benchmark=list(benchmarks),
                        kernel=list(kernels), cores=list(cores))
    return _by_layout(points, executor)


def claim_timings(executor=None):
    """The claims' grid (emu.run.sweep, one sweep): one core in ONE_CORE_LAYOUTS, four in
    CLAIM_LAYOUTS, as ``layout_timings``."""
    axes = {"benchmark": list(BENCHMARKS), "kernel": list(KERNELS)}
    points = sweep.grid(layout=list(ONE_CORE_LAYOUTS), cores=[1], **axes) + \
        sweep.grid(layout=list(CLAIM_LAYOUTS), cores=[4], **axes)
    return _by_layout(points, executor)


def _by_layout(points, executor):
    """``run`` at each of ``points`` (one sweep), indexed by (layout, kernel, cores,
    benchmark)."""
    results = sweep.run(run, points, executor=executor)
    return pd.DataFrame(results).set_index(["layout", "kernel", "cores",
                                            "benchmark"]).sort_index()


def mean_timings(by_layout):
    """The layouts' mean of ``layout_timings``, in the shape of ``timings`` (indexed by
    kernel, cores, benchmark): cycles and us, and each ledger row's cycles and each count,
    averaged over the layouts each cell has (a row or count a layout lacks is 0 there), as
    LMBench's repetitions average their times before a gain is computed."""
    rows = []
    for key, group in by_layout.groupby(level=["kernel", "cores", "benchmark"]):
        n = len(group)
        rows.append({"kernel": key[0], "cores": key[1], "benchmark": key[2],
                     "cycles": float(group["cycles"].mean()), "us": float(group["us"].mean()),
                     "rows": _mean_dicts(group["rows"], n),
                     "counts": _mean_dicts(group["counts"], n)})
    return pd.DataFrame(rows).set_index(["kernel", "cores", "benchmark"]).sort_index()


def _mean_dicts(dicts, n):
    out = {}
    for d in dicts:
        for name, value in d.items():
            out[name] = out.get(name, 0) + value / n
    return out


def mean_spread(values):
    """The mean, the smallest, the largest and the standard deviation (over the values
    themselves, ddof=0) of a few numbers: a dict."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("mean_spread needs at least one value")
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {"mean": mean, "min": min(values), "max": max(values), "std": std}


def table1_layouts(by_layout):
    """Table 1 of each layout (``table1_emulated`` of its timings), stacked: a Series
    indexed by (layout, patch, cores, benchmark)."""
    frames = {layout: table1_emulated(group.droplevel("layout")).stack()
              for layout, group in by_layout.groupby(level="layout")}
    out = pd.concat(frames, names=["layout"])
    out.index.names = ["layout", "patch", "cores", "benchmark"]
    return out


def table1_spread(by_layout, published=None):
    """Every cell of Table 1 over the layouts: the gain of the layouts' mean times
    (``mean_timings``, the cell the chapter and the claims report), each layout's smallest
    and largest gain and their standard deviation, the report's value, and whether the
    cell is robust: ``direction`` "robust" when every layout's gain is on one side of no
    effect (a gain, a loss or none within half a point), else "not robust"; ``spans
    published`` when the layouts' range takes in the report's value."""
    published = table1() if published is None else published
    mean = table1_emulated(mean_timings(by_layout)).stack()
    each = table1_layouts(by_layout)
    rows = []
    for (patch, cores, bench), value in mean.items():
        gains = each.xs((patch, cores, bench), level=["patch", "cores", "benchmark"])
        spread = mean_spread(gains)
        paper = float(published.loc[(patch, cores), bench])
        sides = {_side(g) for g in gains}
        rows.append({"patch": patch, "cores": cores, "benchmark": bench,
                     "layouts": len(gains), "emulated": float(value), "min": spread["min"],
                     "max": spread["max"],
                     "std": spread["std"], "published": paper,
                     "direction": "robust" if len(sides) == 1 else "not robust",
                     "spans published": spread["min"] <= paper <= spread["max"]})
    return pd.DataFrame(rows).set_index(["patch", "cores", "benchmark"])


def family_words(runs, layouts):
    """What a spread of ``runs`` four-core runs over ``layouts`` layouts spans, in words."""
    timings = runs // layouts
    return f"{layouts} layouts" if timings <= 1 else \
        f"{runs} runs ({layouts} layouts x {timings} timings)"


def spread_note(cell, layouts=None):
    """A cell of ``table1_spread`` in words: the range of its runs' gains (the layouts', or
    with ``layouts`` given, the mean's layouts, each run in them and nudged by the timings),
    and whether its direction and the report's value hold over them."""
    layouts = cell["layouts"] if layouts is None else layouts
    each = "each layout's gain" if cell["layouts"] <= layouts else \
        f"the gains of its {family_words(cell['layouts'], layouts)}"
    text = (f"the mean of {layouts} layouts (emu.kernel.layout), {each} {cell['min']:.1f} "
            f"to {cell['max']:.1f}%")
    if cell["direction"] != "robust":
        text += ": its direction is not robust (the runs' gains straddle no effect)"
    if cell["spans published"]:
        text += ", a range that takes in the report's value"
    return text

