"""Yun 2011 on the Cortex-A9 kernel model: the published numbers and the chapter's runs, each
a function returning plain numbers or a DataFrame, so that the notebooks stay thin and the
tests can check them (notebooks/yun2011/).

The paper's four fixes (``PATCHES``), applied one on top of the other as its Table 1 applies
them (``KERNELS``: stock, PK1, PK1+PK2, ... all four), are options of the ARMv7 backend
(emu.kernel.arm): PK1 set_pte_ext without its clean, PK2 the bit operations' barriers as
smp_mb() (dmb) instead of mb() (dsb + the PL310's cache sync), PK3 no flush after a
copy-on-write copy, PK4 no clean of new page tables.

Published: ``table1`` (the gain of each patch in percent, 1-4 cores, four benchmarks),
``table1_composition`` (how its rows add up to Overall), ``kperfdiff_published`` (Figures 1
and 2), ``profile_symbols`` (Figures 4, 12, 16), ``text_numbers``.

Emulated: ``run`` (one benchmark on one kernel and core count: time per iteration, or per
page for lat_pagefault, and the per-routine ledger), ``timings`` (the grid of kernels x
cores x benchmarks), ``table1_emulated`` (Table 1 from those timings, the way the paper
computes it), ``compare_table1``, ``symbol_profile`` / ``kperfdiff_emulated`` (the model's
own profiles by kernel symbol, stock against all four fixes), ``claims`` for the scorecard.
"""
from __future__ import annotations

import pandas as pd

from . import data

PATCHES = ("PK1", "PK2", "PK3", "PK4")
#: the kernels of Table 1: each patch on top of the ones before it
KERNELS = {"stock": frozenset(), "PK1": frozenset({"PK1"}),
           "PK2": frozenset({"PK1", "PK2"}), "PK3": frozenset({"PK1", "PK2", "PK3"}),
           "PK4": frozenset(PATCHES)}
BENCHMARKS = ("fork", "exec", "shell", "pagefault")
CORES = (1, 2, 3, 4)


# ------------------------------------------------------------------ published

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
    kperfdiff listing, ARM against x86."""
    df = data.load("yun2011_kperfdiff")
    if figure not in set(df["figure"]):
        raise ValueError(f"kperfdiff figures are {sorted(set(df['figure']))}, not {figure!r}")
    return df[df["figure"] == figure].reset_index(drop=True)


def profile_symbols():
    """Figures 4, 12 and 16: one symbol's share of the profile, ARM or x86."""
    return data.load("yun2011_profile_symbols")


def text_numbers():
    """{quantity: value} of the numbers the text states."""
    df = data.load("yun2011_text_numbers")
    return dict(zip(df["quantity"], df["value"]))
