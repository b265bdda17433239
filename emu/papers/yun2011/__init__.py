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

Along the cores: ``core_trends`` (each trend of Table 1 from one core to four, its verdict),
``contention`` and ``trend_decomposition`` (the waits for what the cores share), and
``where_cycles_go`` / ``where_trends`` (a trend's stock cycles and saving function by
function at one copy and four), ``pk1_one_core`` (PK1's one-core gain against the report's).

The package, by concept: ``board`` (the patches, kernels, benchmarks and cores Table 1
varies), ``published`` (the report's numbers), ``runs`` (the model's runs and Table 1 from
them), ``spreads`` (layouts and timings: what a machine leaves to chance), ``filesize``
(lat_pagefault on larger files), ``cores`` (the trends along the cores and the waits),
``where`` (where a trend's cycles go), ``fixes`` (each fix's routines alone), ``claims``
(the scorecard's rows). Every public name is here too, as ``yun2011.<name>``.
"""
from ...kernel.layout import START_SPREAD_US, TIMING_SPREAD_CYCLES  # noqa: F401  (said)
# the public names, as before the package: yun2011.<name>
from .board import BENCHMARKS, BOARD_CORES, CORES, KERNELS, PATCHES, PROGRAMS
from .published import (kperfdiff_published, profile_lines, profile_symbols, table1,
                        table1_composition, text_numbers)
from .runs import (PAGEFAULT_PAGES, SYMBOLS, clean_cycles, compare_table1, kperfdiff_emulated,
                   memory_cycles, run, shares, symbol_profile, sync_cycles, table1_emulated,
                   timings)
from .spreads import (CLAIM_LAYOUTS, LAYOUTS, ONE_CORE_LAYOUTS, SPREAD_TIMINGS, claim_timings,
                      family_words, layout_timings, mean_spread, mean_timings, member,
                      spread_family, spread_note, table1_layouts, table1_spread,
                      timing_sensitivity, timing_timings)
from .filesize import FILE_SIZES_MB, file_sizes, metadata_bytes, pagefault_size, size_gains
from .cores import (SHARED_WAITS, TRENDS, WAITS, contention, contention_by_layout, core_trends,
                    profile_along_cores, shared_wait, trend, trend_robustness)
from .where import (TREND_KERNELS, WHERE_TRENDS, dsb_share_of_growth, gain_arithmetic,
                    pk1_one_core, trend_decomposition, trend_explanations, where_cycles_go,
                    where_trends)
from .fixes import FIX_STEPS, FixBench, USER_EXT, USER_PTE, fix_costs, fix_steps_cycles
from .claims import CLAIM_CELLS, CONTEXT, PAGES, ROUNDING, SOURCE, claims
