"""Blanchard 2002's published side: the five builds' time outputs and fault counts
(data/blanchard2002_*, builds), the check of the %CPU the time outputs print
(cpu_percent_check), and the readprofile listing of the 10.31 s run with its shares
(published_profile), also grouped as the model's profile is (published_groups): the
listing's functions and the model's routines that stand for each (PROFILE_GROUPS, SPLIT)."""
from __future__ import annotations

import functools
import math

from ...present import data


def builds():
    """The five builds of the paper, one row each (run: bligh_2.4.18, bligh_patched,
    p690_10.31, p690_7.52, p690_4.83), from data/blanchard2002_bligh, _time_outputs and
    _page_faults: the columns a file lacks are NaN (Bligh's time output, the first p690
    run's fault counts are not printed)."""
    import pandas as pd
    bligh = data.load("blanchard2002_bligh").assign(who="Bligh")
    p690 = data.load("blanchard2002_time_outputs").assign(who="Blanchard")
    faults = data.load("blanchard2002_page_faults").drop(columns=["source", "table", "page"])
    p690 = p690.merge(faults, on="run", how="left")
    return pd.concat([bligh, p690], ignore_index=True)


def cpu_percent_check(runs):
    """Each run with a time output: %CPU computed as (user + system) / elapsed, and whether
    the printed %CPU can come from the printed figures if they were rounded to their last
    digit (each within half a unit) or cut off there (each up to one unit short)."""
    import pandas as pd
    rows = []
    for row in runs.dropna(subset=["user_s"]).itertuples():
        busy, elapsed, printed = row.user_s + row.system_s, row.elapsed_s, row.cpu_percent
        rounded = _percent_range(busy - 0.01, busy + 0.01, elapsed - 0.005, elapsed + 0.005)
        cut = _percent_range(busy, busy + 0.02, elapsed, elapsed + 0.01)
        rows.append({"run": row.run, "computed %CPU": 100 * busy / elapsed,
                     "printed %CPU": printed,
                     "consistent if rounded": round(rounded[0]) <= printed <= round(rounded[1]),
                     "consistent if truncated": math.floor(cut[0]) <= printed
                     <= math.floor(cut[1])})
    return pd.DataFrame(rows).set_index("run")


def _percent_range(busy_low, busy_high, elapsed_low, elapsed_high):
    return 100 * busy_low / elapsed_high, 100 * busy_high / elapsed_low


def published_profile():
    """The readprofile listing of the 10.31 s run: ticks per symbol, the share of all
    ticks and of the ticks outside the idle loop (idled)."""
    listing = data.load("blanchard2002_readprofile").set_index("symbol")[["ticks"]]
    total = int(listing.loc["total", "ticks"])
    listing = listing.drop("total")
    busy = total - int(listing.loc["idled", "ticks"])
    listing["share of total"] = listing["ticks"] / total
    listing["share of busy"] = (listing["ticks"] / busy).where(listing.index != "idled")
    return listing


def listing_floor():
    """The fewest ticks of a function the listing shows (its last row): a function it does
    not show had fewer."""
    return int(published_profile().drop("idled")["ticks"].min())


def published_groups():
    """The readprofile listing of the 10.31 s run in the groups of PROFILE_GROUPS: ticks
    and share of the ticks outside idled; the rest (the other listed functions and the
    9,680 ticks the listing does not show) in one row. flush_hash_page is not listed
    (0 here): it had fewer ticks than the last row shown (LISTING_FLOOR)."""
    import pandas as pd
    listing = published_profile()
    busy = int(data.load("blanchard2002_readprofile").set_index("symbol").loc[
        "total", "ticks"]) - int(listing.loc["idled", "ticks"])
    rows = {name: int(listing["ticks"].get(name, 0))
            for name in (*PROFILE_GROUPS, *SPLIT_ROWS)}   # flush_hash_page: not listed
    rows["the rest of the kernel"] = busy - sum(rows.values())
    table = pd.DataFrame({"ticks": pd.Series(rows)})
    table["share of kernel"] = table["ticks"] / busy
    return table


#: The functions of the paper's readprofile listing the model has a counterpart for, and
#: the model's routines (its ledger's guest calls and fixed costs) that stand for each.
#: 2.4's hash_page called hpte_create_valid and the rest through ppc_md, and the spin on
#: hash_table_lock was inlined in it; the model's guest hash_page holds all of that.
PROFILE_GROUPS = {
    "__hash_page": ("hash_page", "hash_page (preload)", "hash_fault_entry"),
    "local_flush_tlb_range": ("flush_tlb_range_pages", "flush_tlb_range", "flush_hash_range"),
    "local_flush_tlb_page": ("flush_tlb_page", "flush_hash_page_lpte"),
    "do_anonymous_page": ("anon_fault", "clear_page"),
    "do_page_fault": ("fault_entry",),
}


#: The guest routines whose cycles a profile row of their own takes out of their callers'
#: (emu.run.profiler.call_tree): the hypervisor call (the listing's plpar_hcall) and a
#: flush's invalidation of the HPTEs with its tlbie (2.4's flush_hash_page, which the
#: listing does not show: fewer ticks than its last row's), apart from the scan of the
#: Linux page table that calls it (the listing's local_flush_tlb_range / _page). 2.5's
#: batched flush_hash_range, which replaced the page-by-page flush_hash_page, counts there too.
SPLIT = {"plpar_hcall": "plpar_hcall", "flush_hash_page_lpte": "flush_hash_page",
         "flush_hash_range": "flush_hash_page"}
#: The rows the split adds beside PROFILE_GROUPS', in the listing's order of kinds
SPLIT_ROWS = ("flush_hash_page", "plpar_hcall")


#: The ledger's flush routines (the claims' two flush groups)
FLUSH_ROUTINES = ("flush_tlb_range_pages", "flush_tlb_range", "flush_hash_range",
                  "flush_tlb_page", "flush_hash_page_lpte")


@functools.lru_cache(maxsize=None)
def _time_output(run):
    """(user_s, clock_mhz) of one of the paper's builds (builds()), read once."""
    row = builds().set_index("run").loc[run]
    return float(row.user_s), float(row.clock_mhz)
