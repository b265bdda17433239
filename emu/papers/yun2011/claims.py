"""The chapter's claims for the scorecard (emu.present.claims): every cell of Table 1 at one
and four cores, the overall gain's range and the gains' trends along the cores, each with
the model's reasons in its own numbers."""
from __future__ import annotations

from ...hw import estimates
from ...present import data
from ...present.claims import EFFECT, Claim
from ...run import reuse
from .board import BENCHMARKS, BOARD_CORES, PATCHES, PROGRAMS
from .cores import _wait, shared_wait, trend_robustness
from .published import table1
from .runs import clean_cycles, memory_cycles, sync_cycles, table1_emulated
from .spreads import (claim_timings, family_words, mean_timings, spread_family, spread_note,
                      table1_spread, timing_timings)
from .where import gain_arithmetic, pk1_one_core, where_cycles_go


#: The Table 1 cells the text names, each with why the model differs (the reasons are
#: functions: their numbers come from the profile)
CLAIM_CELLS = (
    ("PK1", 1, "pagefault", "PK1 (set_pte_ext without its clean): lat_pagefault, 1 core",
     lambda t: f"the clean is a DCCMVAC (its issue, {clean_cycles()} cycles) whose write-back "
               f"the next dsb waits for: {_wait(t, 'stock', 1, 'maintenance_wait_cycles'):.2f} "
               f"cycles a fault, the work before it hides the rest; the report's gain on the "
               f"model's fault would be {pk1_one_core(t)['needed_per_clean']:.0f} cycles a "
               f"clean, about a DRAM access ({memory_cycles()} in the profile); the model's "
               f"PL310 sync waits for its buffers' DRAM transfers, but one copy's own have "
               f"arrived by its next sync (the core waits for its fills): "
               f"{_wait(t, 'stock', 1, 'outer_cache_drain_wait_cycles'):.2f} cycles a fault"),
    ("PK2", 4, "pagefault", "PK2 (smp_mb in the bitops): lat_pagefault, 4 cores",
     lambda t: f"each unlock_page's two syncs run under l2x0_lock with interrupts off "
               f"({sync_cycles()} cycles at the PL310 each, an estimate); at 4 copies a fault "
               f"waits {_wait(t, 'stock', 4, 'l2x0_lock_wait_cycles'):.1f} cycles for the lock "
               f"and {_wait(t, 'stock', 4, 'outer_cache_wait_cycles'):.1f} at the PL310 (and "
               f"{_wait(t, 'stock', 4, 'outer_cache_drain_wait_cycles'):.2f} for its buffers' "
               f"DRAM transfers: the 1 MB file stays in the L2), and "
               f"moves {_wait(t, 'stock', 4, 'line_transfers'):.1f} lines between cores"),
    ("PK3", 1, "fork", "PK3 (no flush after a COW copy): lat_proc fork, 1 core",
     lambda t: "the flush's own cycles are charged; the misses it causes the child's next "
               "accesses are not, since user accesses are not run"),
    ("PK4", 1, "fork", "PK4 (no clean of new page tables): lat_proc fork, 1 core",
     lambda t: "fork and exit make a pgd (16 KB cleaned) and PTE pages (2 KB each) per "
               "process; the cleans' write-backs are paid at the dsb that ends each clean"),
)


def _trend_reason(times, patch, bench):
    """Why the model's gain moves as it does from 1 to 4 cores, in its own numbers."""
    before = {"PK1": "stock", "PK2": "PK1", "Overall": "stock"}[patch]
    after = {"PK1": "PK1", "PK2": "PK2", "Overall": "PK4"}[patch]
    w = {(k, c): shared_wait(times, k, c, bench) for k in (before, after) for c in (1, 4)}
    g = gain_arithmetic(where_cycles_go(times, patch, bench))
    return (f"from 1 copy to 4 the cycles saved grow x{g['saving_ratio']:.2f} and the stock "
            f"time x{g['stock_ratio']:.2f} (notebook 03, function by function); cycles an "
            f"iteration waiting for l2x0_lock, at the PL310 and for cleans' "
            f"write-backs: {w[before, 1]:.0f} at 1 copy and {w[before, 4]:.0f} at 4 on the "
            f"{before} kernel, {w[after, 1]:.0f} and {w[after, 4]:.0f} with {after}")


#: Table 1 prints whole percents: a gain within half a point is none (as ``_side``)
ROUNDING = 0.5


PAGES = {"published": "notebooks/yun2011/01-published", "fixes": "notebooks/yun2011/02-the-fixes",
         "table1": "notebooks/yun2011/03-table1"}


SOURCE = ("Table 1 (the model: LMBench 3.0 on the cortex-a9 kernel model, the patches "
          "applied one on top of the other)")


#: Published numbers of the chapter's data that are context, not results
CONTEXT = {
    "yun2011_kperfdiff_common": "the profiles that led to the fixes",
    "yun2011_kperfdiff_one_side": "as above",
    "yun2011_machines": "the machines",
    "yun2011_profile_symbols": "the profiles' lines of the figures",
    "yun2011_setup": "the set-up",
    ("yun2011_table1_improvement", 2): "the cells at 2 and 3 cores, between the claims' "
                                        "ends (notebook 03 runs them)",
    ("yun2011_table1_improvement", 3): "as above",
    ("yun2011_table1_improvement", "cores"): "the row's label",
    ("yun2011_text_numbers", "MB"): "the set-up",
    ("yun2011_text_numbers", "patches"): "mainline's history",
    ("yun2011_text_numbers", "MHz"): "the i7's clock",
}


def claims(times=None, by_layout=None, by_timing=None):
    """The chapter's claims for the scorecard (emu.present.claims): every cell of Table 1 at 1
    and 4 cores (the ones the text names with their reasons), the overall gain's range, and
    the gains' trends from 1 to 4 cores (PK1's and PK2's lat_pagefault, each benchmark's
    overall gain). Each is an effect whose "no change" is half a point, as the table rounds.
    From ``by_layout`` (``layout_timings``: each cell the gain of the layouts' mean times,
    its reason and its spread the layouts' range: each layout's gain, or for a trend each
    layout's four-core gain over the one-core gain), or from one layout's ``timings``;
    neither given: ``claim_timings``, and for the spreads ``timing_timings`` (unless
    estimates are moved: the scorecard's ranges read a claim's value alone). ``by_timing``
    (``timing_timings``): the four-core runs nudged in time that join the layouts' in each
    spread (``spread_family``); the value stays the layouts' mean."""
    if times is not None and by_layout is not None:
        raise ValueError("claims: give the timings of one layout or of several, not both")
    if times is None:
        if by_layout is None:
            by_layout = claim_timings()
            if by_timing is None and not estimates.current():
                with reuse.nominal_only():      # the spreads' runs: no move re-runs them
                    by_timing = timing_timings()
        times = mean_timings(by_layout)
    family = spread_family(by_layout, by_timing)
    spread = None if family is None else table1_spread(family)
    layouts = None if by_layout is None else \
        len(set(by_layout.xs(BOARD_CORES, level="cores").index.get_level_values("layout")))
    model, paper = table1_emulated(times), table1()
    named = {(patch, cores, bench): (claim, reason)
             for patch, cores, bench, claim, reason in CLAIM_CELLS}
    rounding = dict(tolerance=ROUNDING, tolerance_source="Table 1 prints whole percents: "
                    "a gain within half a point is none")
    out = []
    for patch in (*PATCHES, "Overall"):
        for cores in (1, 4):
            for bench in BENCHMARKS:
                claim, reason = named.get((patch, cores, bench), (
                    f"{patch}: {PROGRAMS[bench]}, {cores} core{'s' if cores > 1 else ''}",
                    None))
                why = reason(times) if reason else "the model's LMBench loop with the " \
                    "patches applied in order; fork's (its PTE copy aside), exec's and exit's " \
                    "generic C are fixed estimates"
                over = None
                if spread is not None and (patch, cores, bench) in spread.index and \
                        spread.loc[(patch, cores, bench), "layouts"] > 1:
                    cell = spread.loc[(patch, cores, bench)]
                    why += "; " + spread_note(cell, layouts)
                    over = (cell["min"], cell["max"], family_words(cell["layouts"], layouts))
                out.append(Claim(
                    "Yun 2011", claim, kind=EFFECT, neutral=0,
                    published=float(paper.loc[(patch, cores), bench]),
                    emulated=float(model.loc[(patch, cores), bench]), unit="%", digits=1,
                    source=SOURCE, page=PAGES["table1"], reason=why, spread=over,
                    **rounding))
    overall, published = model.xs("Overall", level="patch"), paper.xs("Overall", level="patch")
    text = data.load("yun2011_text_numbers").set_index("quantity")["value"]
    out += [
        Claim("Yun 2011", "all four patches: the smallest gain (cores x benchmark)",
              kind=EFFECT, neutral=0, published=float(text["overall improvement, low end"]),
              emulated=float(overall.to_numpy().min()), unit="%", digits=1,
              published_from=(float(published.to_numpy().min()),), page=PAGES["table1"],
              source="abstract, section 1, section 4.5 (20-37%)",
              reason="the model's smallest is lat_pagefault's, whose generic fault path "
                     "(guest code since issue 31) no patch touches"),
        Claim("Yun 2011", "all four patches: the largest gain (cores x benchmark)",
              kind=EFFECT, neutral=0, published=float(text["overall improvement, high end"]),
              emulated=float(overall.to_numpy().max()), unit="%", digits=1,
              published_from=(float(text["overall improvement, high end as the conclusion "
                                         "prints it"]),), page=PAGES["table1"],
              source="abstract, section 1, section 4.5 (20-37%; section 6: 20-36%)",
              reason="lat_proc fork in both: PK3 and PK4 take out most of fork's cache "
                     "maintenance"),
    ]
    trends = [("PK1", "pagefault", "section 4.1 (24% at one core, diminishing)"),
              ("PK2", "pagefault", "section 4.2 (the gain grows with the cores)")] + \
             [("Overall", bench, "Table 1") for bench in BENCHMARKS]
    robust = None if by_layout is None else trend_robustness(by_layout, family)
    for patch, bench, source in trends:
        one, four = (float(paper.loc[(patch, c), bench]) for c in (1, 4))
        why, over = _trend_reason(times, patch, bench), None
        if robust is not None:
            r = robust.loc[(patch, bench)]
            why += (f"; its trends over the {family_words(r['layouts'], layouts)}: "
                    f"{r['trends']}"
                    + ("" if r["robust"] == "robust" else " (its direction is not robust)"))
            if r["layouts"] > 1 and r["ratio low"] == r["ratio low"]:
                over = (r["ratio low"], r["ratio high"], family_words(r["layouts"], layouts))
        out.append(Claim(
            "Yun 2011", f"{patch}'s {PROGRAMS[bench]} gain at 4 cores / at 1 core",
            kind=EFFECT, neutral=1, unit="times", digits=2, published=four / one,
            published_from=(one, four), page=PAGES["table1"], source=source,
            emulated=float(model.loc[(patch, 4), bench] / model.loc[(patch, 1), bench]),
            reason=why, spread=over))
    return out

