"""The report's published numbers (``data/yun2011_*.csv``): Table 1, how its rows add up,
the kperfdiff listings of Figures 1 and 2, the profile lines of Figures 4, 12 and 16 and the
numbers the text states."""
from __future__ import annotations

import pandas as pd

from ...present import data
from .board import BENCHMARKS, PATCHES


def table1():
    """Table 1: per patch (PK1..PK4, Overall) and cores (1-4), the gain in percent of each
    benchmark (fork, exec, shell, pagefault), indexed by (patch, cores)."""
    df = data.load("yun2011_table1_improvement")
    df = df.rename(columns={f"{b}_pct": b for b in BENCHMARKS})
    return df.set_index(["patch", "cores"])[list(BENCHMARKS)]


def table1_composition(table=None):
    """How Table 1's patch rows make its Overall row, per cell (cores x benchmark): the
    Overall printed minus the sum of the four rows (``additive``: each row a gain in percent
    of the stock kernel's time), and minus 1 - prod(1 - row/100) in percent
    (``multiplicative``: each row a gain on the kernel before it)."""
    t = table1() if table is None else table
    rows = [t.xs(p, level="patch") for p in PATCHES]
    overall = t.xs("Overall", level="patch")
    added = sum(rows)
    kept = 1.0
    for r in rows:
        kept = kept * (1 - r / 100)
    out = pd.concat({"additive": (overall - added).stack(),
                     "multiplicative": (overall - 100 * (1 - kept)).stack()}, axis=1)
    out.index.names = ["cores", "benchmark"]
    return out


def kperfdiff_published(figure):
    """Figure 1 (lat_pagefault) or Figure 2 (lat_proc fork): the rows of the paper's
    kperfdiff listing, ARM against x86, as one frame: ``section`` (common, arm only, x86
    only), ``rank``, ``symbol``, ``diff_pct`` (the printed %diff, or %time for a one-sided
    row), ``arm_pct`` and ``x86_pct`` (NaN where the symbol is not in that profile)."""
    common = data.load("yun2011_kperfdiff_common")
    one_side = data.load("yun2011_kperfdiff_one_side")
    if figure not in set(common["figure"]):
        raise ValueError(f"kperfdiff figures are {sorted(set(common['figure']))}, "
                         f"not {figure!r}")
    common = common[common["figure"] == figure].assign(section="common")
    one_side = one_side[one_side["figure"] == figure]
    sides = one_side.assign(section=one_side["platform"] + " only", diff_pct=one_side["time_pct"],
                            arm_pct=one_side["time_pct"].where(one_side["platform"] == "arm"),
                            x86_pct=one_side["time_pct"].where(one_side["platform"] == "x86"))
    columns = ["figure", "benchmark", "section", "rank", "symbol", "diff_pct", "arm_pct",
               "x86_pct", "page"]
    return pd.concat([common[columns], sides[columns]], ignore_index=True)


def profile_symbols():
    """Figures 4, 12 and 16: one symbol's share of the profile, ARM or x86."""
    return data.load("yun2011_profile_symbols")


def text_numbers():
    """{quantity: value} of the numbers the text states."""
    df = data.load("yun2011_text_numbers")
    return dict(zip(df["quantity"], df["value"]))


def profile_lines():
    """The published shares of the symbols the model has, lat_pagefault on the stock
    kernel: Figure 1 (kperfdiff, ARM side) and Figure 4. A DataFrame: figure, symbol,
    published %."""
    fig1 = kperfdiff_published("Figure 1")
    fig1 = fig1[fig1["arm_pct"].notna()]
    rows = [{"figure": "Figure 1", "symbol": r.symbol, "published %": float(r.arm_pct)}
            for r in fig1.itertuples()]
    fig4 = profile_symbols()
    fig4 = fig4[(fig4["platform"] == "arm") & (fig4["benchmark"] == "lat_pagefault")]
    rows += [{"figure": r.figure, "symbol": r.symbol,
              "published %": float(r.overhead_pct)} for r in fig4.itertuples()]
    return pd.DataFrame(rows)

