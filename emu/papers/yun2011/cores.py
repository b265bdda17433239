"""Along the cores: each trend of Table 1 from one copy to four, its robustness over the
layouts, what the copies wait for (the shared L2's lock, the PL310, cleans' write-backs),
and the published profile lines beside the model's at each number of copies."""
from __future__ import annotations

import math

import pandas as pd

from .board import BENCHMARKS, KERNELS
from .published import profile_lines, table1
from .runs import PAGEFAULT_PAGES, shares, table1_emulated
from .spreads import mean_timings, table1_layouts


#: the trends of Table 1 the chapter compares along the cores: (patch, benchmark)
TRENDS = tuple((patch, bench) for patch in ("PK1", "PK2", "Overall") for bench in BENCHMARKS)


def trend(one, four, none=0.5):
    """How a gain changes from one core to four: "rises", "falls" or "flat" (within a
    point: each end is rounded to a whole percent in the table)."""
    change = four - one
    return "flat" if abs(change) < 2 * none else ("rises" if change > 0 else "falls")


def core_trends(times, published=None):
    """Each trend of Table 1 along the cores (TRENDS): the model's and the report's gain at
    1 and 4 cores, the direction of each change (``trend``), and the verdict: "agree" when
    the model's gain moves the way the report's does, else "disagree"."""
    model = table1_emulated(times)
    paper = table1() if published is None else published
    rows = []
    for patch, bench in TRENDS:
        m1, m4 = (float(model.loc[(patch, c), bench]) for c in (1, 4))
        p1, p4 = (float(paper.loc[(patch, c), bench]) for c in (1, 4))
        rows.append({"patch": patch, "benchmark": bench, "model 1": m1, "model 4": m4,
                     "paper 1": p1, "paper 4": p4, "model trend": trend(m1, m4),
                     "paper trend": trend(p1, p4),
                     "verdict": "agree" if trend(m1, m4) == trend(p1, p4) else "disagree"})
    return pd.DataFrame(rows)


def trend_robustness(by_layout, family=None):
    """Each trend of Table 1 (TRENDS) over the layouts of ``layout_timings``: the one-core
    gain of the mean times against each layout's four-core gain, each layout's ``trend``,
    and "robust" when every layout's trend is the same, else "not robust". A DataFrame
    indexed by (patch, benchmark): ``trends`` (each layout's, e.g. "falls, flat"), robust,
    the four-core ``layouts`` and the lowest and highest of their gains over the one-core
    gain (``ratio low``, ``ratio high``: the trend claim's spread; NaN when the one-core
    gain is 0). ``family``: the four-core runs to take instead (``spread_family``)."""
    one = table1_emulated(mean_timings(by_layout))
    each = table1_layouts(by_layout if family is None else family)
    rows = []
    for patch, bench in TRENDS:
        m1 = float(one.loc[(patch, 1), bench])
        fours = each.xs((patch, 4, bench), level=["patch", "cores", "benchmark"])
        trends = [trend(m1, float(g)) for g in fours]
        ratios = [float(g) / m1 for g in fours] if m1 else [math.nan]
        rows.append({"patch": patch, "benchmark": bench,
                     "trends": ", ".join(trends),
                     "robust": "robust" if len(set(trends)) == 1 else "not robust",
                     "layouts": len(fours), "ratio low": min(ratios),
                     "ratio high": max(ratios)})
    return pd.DataFrame(rows).set_index(["patch", "benchmark"])


#: the waits the model counts per fault, and what each is (ledger counts of emu.kernel.arm)
WAITS = {"l2x0_lock_waits": "times a core found l2x0_lock held",
         "l2x0_lock_wait_cycles": "cycles spent waiting for l2x0_lock",
         "outer_cache_wait_cycles": "cycles a sync waited at the PL310 (others' lines, syncs)",
         "outer_cache_drain_wait_cycles": "cycles a sync waited for the PL310's buffers (every "
                                          "core's DRAM line fills and evictions)",
         "maintenance_wait_cycles": "cycles a dsb waited for a clean's write-back",
         "spin_wait_cycles": "cycles spent waiting for any spin lock",
         "line_transfers": "lines moved from another core's L1 D"}


def contention(times, benchmark="pagefault", kernels=tuple(KERNELS)):
    """What the copies wait for, per iteration (per page for lat_pagefault) and copy: the
    ledger's counts of WAITS for each kernel and core count, and the cycles."""
    rows = []
    for (kernel, cores, bench), r in times.iterrows():
        if bench != benchmark or kernel not in kernels:
            continue
        per = cores * (PAGEFAULT_PAGES if bench == "pagefault" else 1)
        rows.append({"kernel": kernel, "cores": cores, "cycles": float(r["cycles"]),
                     **{k: r["counts"].get(k, 0) / per for k in WAITS}})
    return pd.DataFrame(rows).set_index(["kernel", "cores"])


def contention_by_layout(by_layout, benchmark="pagefault", kernels=tuple(KERNELS)):
    """``contention`` of each layout of ``layout_timings``: indexed (kernel, cores, layout)."""
    frames = {layout: contention(group.droplevel("layout"), benchmark, kernels)
              for layout, group in by_layout.groupby(level="layout")}
    out = pd.concat(frames, names=["layout"])
    return out.reorder_levels(["kernel", "cores", "layout"]).sort_index()


def profile_along_cores(times, kernel="stock", cores=(1, 4)):
    """The published profile lines (``profile_lines``) beside the model's share of each
    symbol in lat_pagefault's kernel time at each core count (0 where the model has no
    such symbol), with a verdict: "agree" when the model's share at one core is within a
    factor of two of the report's, else "disagree"."""
    out = profile_lines()
    for n in cores:
        share = shares(times.loc[(kernel, n, "pagefault"), "rows"])
        out[f"model {n} %"] = [share.get(sym, 0.0) for sym in out["symbol"]]
    first = out[f"model {cores[0]} %"]
    ratio = first / out["published %"]
    out["verdict"] = ["agree" if 0.5 <= x <= 2 else "disagree" for x in ratio]
    return out


def _wait(times, kernel, cores, what, benchmark="pagefault"):
    """One of contention's numbers (WAITS), per fault (or iteration) and copy."""
    return float(contention(times, benchmark, (kernel,)).loc[(kernel, cores), what])


#: the waits that grow with the copies: for l2x0_lock, at the PL310 (its queue, then its
#: buffers' DRAM transfers), for cleans' write-backs
SHARED_WAITS = ("l2x0_lock_wait_cycles", "outer_cache_wait_cycles", "maintenance_wait_cycles",
                "outer_cache_drain_wait_cycles")


def shared_wait(times, kernel, cores, benchmark):
    """Cycles an iteration (a page) a copy waits for what the cores share (SHARED_WAITS)."""
    return sum(_wait(times, kernel, cores, what, benchmark) for what in SHARED_WAITS)

