"""The model's runs: one LMBench benchmark on one kernel and number of copies on the Cortex-A9
kernel model (``run``), the grid of them (``timings``), Table 1 computed from them as the
report computes it, the runs' profiles by kernel symbol, and the profile's costs the
claims' reasons cite."""
from __future__ import annotations

import pandas as pd

from ...hw.profile import load as load_profile, section_table
from ...kernel import workloads
from ...present.compare import Comparison
from ...run import kperfdiff, sweep
from .board import BENCHMARKS, BOARD_CORES, CORES, KERNELS, PATCHES
from .published import table1


#: lat_pagefault's file: LMBench 3.0's smallest (it refuses less than 1 MB); the paper's
#: was 400 MB (the model's time per page does not depend on the size, its runs do)
PAGEFAULT_PAGES = 256


#: which kernel function's samples each of the model's ledger rows stands for: the guest
#: routines are the functions (a clean or flush charged by its caller's name is the routine
#: it runs; the fault path's rows are named by theirs: do_page_fault, find_get_page,
#: __do_fault); a generic path charged a fixed cost takes the name of the function that
#: does its work in 2.6.36
SYMBOLS = {
    "clean_dcache_area (get_pgd_slow)": "cpu_v7_dcache_clean_area",
    "clean_dcache_area (pte_alloc_one)": "cpu_v7_dcache_clean_area",
    "__cpuc_flush_dcache_area (copy_user_highpage)": "v7_flush_kern_dcache_area",
    "__cpuc_flush_dcache_area (sync_icache_dcache)": "v7_flush_kern_dcache_area",
    "__memzero (get_pgd_slow)": "__memzero",
    "clear_page": "__memzero",            # ARM's clear_page is memset(page, 0, ...)
    "memcpy (get_pgd_slow)": "memcpy",
    "anon_fault": "do_anonymous_page", "wp_fault": "do_wp_page",
    "page_cache_read": "add_to_page_cache_locked", "zap_pte": "unmap_vmas",
    "copy_pte": "copy_page_range", "fork": "copy_process", "exit": "do_exit",
    "exec": "do_execve", "wait": "sys_wait4", "mm_alloc": "mm_init", "vma_setup":
    "mmap_region", "dup_vma": "dup_mmap", "context_switch": "__schedule", "syscall":
    "vector_swi", "alloc_page": "get_page_from_freelist", "free_page": "free_hot_cold_page",
    "pte_alloc": "__pte_alloc", "free_pte_page": "free_pgd_range", "spin_lock":
    "_raw_spin_lock", "spin_unlock": "_raw_spin_unlock",
}


def _check(benchmark, kernel, cores):
    if benchmark not in BENCHMARKS:
        raise ValueError(f"benchmark must be one of {BENCHMARKS}, not {benchmark!r}")
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {tuple(KERNELS)}, not {kernel!r}")
    if cores not in CORES:
        raise ValueError(f"cores must be one of {CORES} (the paper's board), not {cores!r}")


def run(benchmark, kernel="stock", cores=1, pages=PAGEFAULT_PAGES, layout=0, timing=0):
    """One LMBench run on the Cortex-A9 model: ``benchmark`` (fork, exec, shell: lat_proc;
    pagefault: lat_pagefault) on one of ``KERNELS`` with ``cores`` copies at once (-P) on
    the four-core board (BOARD_CORES), in ``layout`` (emu.kernel.layout: the free list's
    order and the copies' starts; 0 a fresh boot's, all at once) and ``timing`` (a nudge
    of the copies' starts, a few hundred cycles; 0 none).
    A dict: cycles and microseconds per iteration (per page for pagefault), the mean over
    the CPUs, and the cycles of each ledger row and the event counts, each summed over the
    CPUs (``rows``, ``counts``)."""
    _check(benchmark, kernel, cores)
    fixes = KERNELS[kernel]
    if benchmark == "pagefault":
        result = workloads.lat_pagefault(pages=pages, profile="cortex-a9", cpus=BOARD_CORES,
                                         copies=cores, fixes=fixes, layout=layout,
                                         timing=timing)
    else:
        result = workloads.lat_proc(benchmark, profile="cortex-a9", cpus=BOARD_CORES,
                                    copies=cores, fixes=fixes, layout=layout, timing=timing)
    runs = getattr(result, "runs", [result])
    rows, counts = {}, {}
    for r in runs:
        for name, cycles in r.breakdown["cycles"].items():
            rows[name] = rows.get(name, 0) + int(cycles)
        for name, n in r.counts.items():
            counts[name] = counts.get(name, 0) + int(n)
    return {"benchmark": benchmark, "kernel": kernel, "cores": cores, "layout": layout,
            "cycles": float(result.cycles_each), "us": float(result.us), "rows": rows,
            "counts": counts}


def timings(benchmarks=BENCHMARKS, kernels=tuple(KERNELS), cores=CORES, executor=None):
    """``run`` over the grid (through emu.run.sweep), as a DataFrame indexed by (kernel, cores,
    benchmark): cycles and us per iteration, the rows and the counts."""
    points = sweep.grid(benchmark=list(benchmarks), kernel=list(kernels), cores=list(cores))
    results = sweep.run(run, points, executor=executor)
    return pd.DataFrame(results).set_index(["kernel", "cores", "benchmark"]).sort_index()


def table1_emulated(times):
    """Table 1 from the model's ``timings``, computed as the paper's rows add up: each patch's
    gain is the time it takes off the kernel before it, in percent of the stock kernel's
    time; Overall is stock against all four. Indexed (patch, cores) like ``table1``."""
    cycles = times["cycles"].unstack("benchmark")
    stock = cycles.xs("stock", level="kernel")
    frames = {}
    previous = "stock"
    for patch in PATCHES:
        frames[patch] = 100 * (cycles.xs(previous, level="kernel") -
                               cycles.xs(patch, level="kernel")) / stock
        previous = patch
    frames["Overall"] = 100 * (stock - cycles.xs(PATCHES[-1], level="kernel")) / stock
    out = pd.concat(frames, names=["patch", "cores"])
    return out[[b for b in BENCHMARKS if b in out.columns]]


def compare_table1(emulated, published=None):
    """Every cell of Table 1 beside the model's: published and emulated gain (percent),
    the difference (points), the ratio, and whether they agree in direction (a gain, a
    loss or none)."""
    published = table1() if published is None else published
    rows = []
    for (patch, cores), row in emulated.iterrows():
        for benchmark, value in row.items():
            paper = float(published.loc[(patch, cores), benchmark])
            c = Comparison(float(value), paper, "%", 1)
            rows.append({"patch": patch, "cores": cores, "benchmark": benchmark,
                         "published": paper, "emulated": float(value),
                         "difference": c.difference, "ratio": c.ratio,
                         "direction": "agree" if _side(value) == _side(paper)
                         else "disagree"})
    return pd.DataFrame(rows)


def _side(x, none=0.5):
    """A gain (1), a loss (-1) or none (0): within half a point, as the table rounds, the
    half point itself included, as the scorecard's rule (emu.present.claims.Claim._side)."""
    return 0 if abs(x) <= none else (1 if x > 0 else -1)


def symbol_profile(rows):
    """A run's ``rows`` (ledger row -> cycles) as a profile by kernel symbol (``SYMBOLS``),
    {symbol: cycles}, rows of one symbol added up."""
    out = {}
    for name, cycles in rows.items():
        symbol = SYMBOLS.get(name, name)
        out[symbol] = out.get(symbol, 0) + cycles
    return out


def shares(rows):
    """Each kernel symbol's share of a run's kernel cycles, in percent."""
    profile = symbol_profile(rows)
    total = sum(profile.values())
    return {symbol: 100 * cycles / total for symbol, cycles in profile.items()}


def kperfdiff_emulated(times, benchmark, cores=1, before="stock", after="PK4"):
    """kperfdiff (emu.run.kperfdiff) of the model's profiles of ``benchmark``: the stock kernel
    (a) against all four fixes (b), by kernel symbol."""
    a = symbol_profile(times.loc[(before, cores, benchmark), "rows"])
    b = symbol_profile(times.loc[(after, cores, benchmark), "rows"])
    return kperfdiff.diff(a, b)


def sync_cycles():
    """The cortex-a9 profile's cycles of a PL310 cache sync (its ``outer_cache`` table)."""
    table = section_table("cortex-a9", "outer_cache").set_index("parameter")
    return int(table.loc["cache_sync", "value"])


def clean_cycles():
    """The cortex-a9 profile's issue cycles of a DCCMVAC (a line's clean)."""
    return int(load_profile("cortex-a9").costs["mnemonics"]["dccmvac"])


def memory_cycles():
    """The cortex-a9 profile's load-to-use latency of DRAM (an estimate, its ``memory``)."""
    return int(load_profile("cortex-a9").raw["memory"]["latency"])

