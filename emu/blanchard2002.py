"""Blanchard 2002, "The seven second kernel compile": what the chapter's pages share.

The published side: the three runs' time output and Bligh's two (data/blanchard2002_*),
the checks of the figures the paper derives from them, and the readprofile listing of the
10.31 s run with its shares.
"""
from __future__ import annotations

import math

from . import data

CHAPTER = "Blanchard 2002"


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
