"""Where a trend's cycles go: the stock time and the saving from one copy to four, in the
shared waits and function by function, and PK1's one-core gain taken apart."""
from __future__ import annotations

import pandas as pd

from ...hw.profile import load as load_profile
from .board import PROGRAMS
from .cores import SHARED_WAITS, TRENDS, _wait, core_trends
from .published import table1
from .runs import PAGEFAULT_PAGES, clean_cycles, memory_cycles, symbol_profile


#: the kernels each trend's gain compares: (before, after)
TREND_KERNELS = {"PK1": ("stock", "PK1"), "PK2": ("PK1", "PK2"), "Overall": ("stock", "PK4")}


def trend_decomposition(times, cores=(1, 4)):
    """What moves each trend of Table 1 (TRENDS) from one core to four, in the model's own
    counts, per iteration (per page) and copy: the stock time (the gain's denominator), the
    cycles the patch saves (its numerator), and of those the waits for what the cores
    share (SHARED_WAITS: l2x0_lock, the PL310's queue, a dsb's wait for cleans' write-backs,
    a sync's wait for the PL310's buffers) and the rest; the PL310's queue also as lines of
    ``line_op`` cycles queued ahead."""
    line_op = int(load_profile("cortex-a9").outer_cache["line_op"])
    cycles = times["cycles"]
    rows = []
    for patch, bench in TRENDS:
        before, after = TREND_KERNELS[patch]
        row = {"patch": patch, "benchmark": bench}
        for n in cores:
            saved = float(cycles[(before, n, bench)] - cycles[(after, n, bench)])
            waits = {w: _wait(times, before, n, w, bench) - _wait(times, after, n, w, bench)
                     for w in SHARED_WAITS}
            row.update({f"stock_{n}": float(cycles[("stock", n, bench)]),
                        f"saved_{n}": saved,
                        f"saved_waits_{n}": sum(waits.values()),
                        f"saved_rest_{n}": saved - sum(waits.values()),
                        f"lock_wait_{n}": waits["l2x0_lock_wait_cycles"],
                        f"PL310_lines_{n}": waits["outer_cache_wait_cycles"] / line_op,
                        f"PL310_drain_{n}": waits["outer_cache_drain_wait_cycles"],
                        f"dsb_wait_{n}": waits["maintenance_wait_cycles"]})
        rows.append(row)
    return pd.DataFrame(rows)


def _per_copy(times, kernel, cores, bench):
    """A run's profile by kernel symbol (``symbol_profile``), cycles per iteration (per page
    of lat_pagefault) and copy."""
    per = cores * (PAGEFAULT_PAGES if bench == "pagefault" else 1)
    return {sym: c / per for sym, c in symbol_profile(times.loc[(kernel, cores, bench),
                                                                 "rows"]).items()}


def where_cycles_go(times, patch, bench, cores=(1, 4)):
    """Where a trend's cycles go, kernel function by function (the ledger's rows under their
    2.6.36 names, ``symbol_profile``), per iteration (per page) and copy: the stock kernel's
    cycles at each core count (``stock_N``, the gain's denominator) and the cycles the patch
    saves there (``saved_N``: TREND_KERNELS' before minus after, its numerator). A function's
    cycles are all its own instructions' time: its cache misses, a ``dsb``'s wait for
    cleans' write-backs, the PL310's queue and spin-lock waits inside it. Sorted by how much
    the function's stock cycles grow from the first core count to the last; the row
    ``all`` sums them (the ledger's kernel time, which excludes the user's)."""
    before, after = TREND_KERNELS[patch]
    cols = {}
    for n in cores:
        stock = _per_copy(times, "stock", n, bench)
        b, a = _per_copy(times, before, n, bench), _per_copy(times, after, n, bench)
        cols[f"stock_{n}"] = stock
        cols[f"saved_{n}"] = {s: b.get(s, 0.0) - a.get(s, 0.0) for s in set(b) | set(a)}
    out = pd.DataFrame(cols).fillna(0.0)
    first, last = cores[0], cores[-1]
    out["stock_growth"] = out[f"stock_{last}"] - out[f"stock_{first}"]
    out["saved_growth"] = out[f"saved_{last}"] - out[f"saved_{first}"]
    out = out.sort_values("stock_growth", key=abs, ascending=False)
    out.loc["all"] = out.sum()
    out.index.name = "symbol"
    return out


def gain_arithmetic(where, cores=(1, 4)):
    """A trend's gain at each core count from ``where_cycles_go``'s ``all`` row, and its
    ratio (last over first) as the saving's growth over the stock time's: the gain rises
    along the cores when the saving grows faster than the stock time. ``rest_ratio``: how
    the stock time less the saving grows (for Overall, the time of all four fixes). A dict."""
    total = where.loc["all"]
    first, last = cores[0], cores[-1]
    gain = {n: 100 * total[f"saved_{n}"] / total[f"stock_{n}"] for n in cores}
    return {"gain_first": gain[first], "gain_last": gain[last],
            "saving_ratio": total[f"saved_{last}"] / total[f"saved_{first}"],
            "stock_ratio": total[f"stock_{last}"] / total[f"stock_{first}"],
            "rest_ratio": (total[f"stock_{last}"] - total[f"saved_{last}"])
            / (total[f"stock_{first}"] - total[f"saved_{first}"])}


#: the trends whose cycles notebook 03 follows function by function
WHERE_TRENDS = (("PK1", "pagefault"), ("PK2", "pagefault"), ("Overall", "fork"),
                ("Overall", "exec"))


def where_trends(times, trends=WHERE_TRENDS, top=6):
    """``where_cycles_go`` of each trend, its ``top`` functions by the growth of the
    saving from one core to four (then of the stock time) and the ``all`` row: one frame
    indexed by (patch, benchmark, symbol)."""
    frames = {}
    for patch, bench in trends:
        w = where_cycles_go(times, patch, bench)
        body = w.drop(index="all")
        order = body["saved_growth"].abs() + 1e-9 * body["stock_growth"].abs()
        frames[(patch, bench)] = pd.concat([body.loc[order.sort_values(ascending=False)
                                                     .index[:top]], w.loc[["all"]]])
    return pd.concat(frames, names=["patch", "benchmark"])


def dsb_share_of_growth(decomposition, patch, bench):
    """Of the growth of a trend's saving from one copy to four (``trend_decomposition``),
    the part that is a dsb's wait for cleans' write-backs, in percent."""
    r = decomposition.set_index(["patch", "benchmark"]).loc[(patch, bench)]
    return 100 * (r["dsb_wait_4"] - r["dsb_wait_1"]) / (r["saved_4"] - r["saved_1"])


def pk1_one_core(times, published=None):
    """What PK1's one-core gain on lat_pagefault is made of on the model, per page, and what
    the report's gain would take: the stock fault's cycles, the cycles PK1 saves, the
    set_pte_ext cleans it removes (counted), their issue (the profile's DCCMVAC cost) and a
    dsb's wait for their write-backs; then the saving the report's percent would be on the
    model's fault and that per clean, beside the profile's DRAM latency (``memory_cycles``).
    And the report's own arithmetic: were PK1's saving per page the same at four copies as
    at one (a clean is one core's work), its stock fault took ``paper_stock_growth`` times
    as long at four copies (the one-core gain over the four-core), where the model's takes
    ``model_stock_growth``. A dict."""
    paper = table1() if published is None else published
    per = PAGEFAULT_PAGES
    stock, pk1 = (times.loc[(k, 1, "pagefault")] for k in ("stock", "PK1"))
    cleans = stock["counts"].get("lines_cleaned:set_pte", 0) / per
    saved = float(stock["cycles"] - pk1["cycles"])
    p1, p4 = (float(paper.loc[("PK1", c), "pagefault"]) for c in (1, 4))
    needed = p1 / 100 * float(stock["cycles"])
    return {"stock": float(stock["cycles"]), "saved": saved, "gain": 100 * saved / stock["cycles"],
            "cleans": cleans, "issue": cleans * clean_cycles(),
            "dsb_wait": _wait(times, "stock", 1, "maintenance_wait_cycles"),
            "published": p1, "needed": needed, "needed_per_clean": needed / cleans,
            "model_per_clean": saved / cleans, "memory": memory_cycles(),
            "paper_stock_growth": p1 / p4,
            "model_stock_growth": float(times.loc[("stock", 4, "pagefault"), "cycles"]
                                        / stock["cycles"])}


def trend_explanations(times, decomposition=None):
    """One sentence (Markdown) for each trend the model gets the other way from the report
    (``core_trends``), in the counts of ``trend_decomposition``: how the stock time and the
    saving move from one copy to four, and how much of the saving is shared waits."""
    d = trend_decomposition(times) if decomposition is None else decomposition
    line_op = int(load_profile("cortex-a9").outer_cache["line_op"])
    verdicts = core_trends(times).set_index(["patch", "benchmark"])
    out = []
    for r in d.itertuples(index=False):
        v = verdicts.loc[(r.patch, r.benchmark)]
        if v["verdict"] == "agree":
            continue
        row = r._asdict()
        s1, s4, v1, v4 = (row[k] for k in ("stock_1", "stock_4", "saved_1", "saved_4"))
        out.append(
            f"* **{r.patch}, {PROGRAMS[r.benchmark]}** ({v['model 1']:.1f}% to "
            f"{v['model 4']:.1f}%; the report {v['paper 1']:g} to {v['paper 4']:g}): the stock "
            f"time goes from {s1:,.0f} to {s4:,.0f} cycles ({100 * (s4 / s1 - 1):+.0f}%), the "
            f"cycles saved from {v1:,.0f} to {v4:,.0f} ({_change(v1, v4)}); of the saving, "
            f"waits for what the cores share are {row['saved_waits_1']:,.0f} cycles at one "
            f"copy and {row['saved_waits_4']:,.0f} at four (at four: l2x0_lock "
            f"{row['lock_wait_4']:,.0f}, a dsb's wait for cleans' write-backs "
            f"{row['dsb_wait_4']:,.0f}, {row['dsb_wait_4'] / line_op:,.0f} turns of a line at "
            f"the PL310, and syncs at the PL310 {row['PL310_lines_4'] * line_op:,.0f}), the "
            f"rest {row['saved_rest_1']:,.0f} and {row['saved_rest_4']:,.0f}.")
    return "\n".join(out)


def _change(a, b):
    return f"{100 * (b / a - 1):+.0f}%" if a > 0 else "from none"

