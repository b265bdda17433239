"""Dougan 1999, section 4: where Table 3's cycles go, by routine (``PARTS``,
``table3_parts``): entry and exit, TLB and hash-table misses, flushes, scheduler and
switch, the call's own work."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...kernel.entry import (ELF_BASE, LAT_CTX_FRAMES, LAT_PIPE_FRAMES, LAT_SYSCALL_NULL, Entry,
                             pipe_alone, pipe_round_trip)
from ...present import data
from ...run import profiler
from .mmu import kernel
from .syscalls import CONFIGURATIONS, CTX_TRIPS, PIPE_TRIPS, _pipes_between, tlb_misses

#: Table 3's parts (``table3_parts``): the guest routines each part's cycles are counted in,
#: by symbol (a label's instructions up to the next label: routines/ppc32/entry_22.S,
#: sched_22.S, pipe_22.S, hash_low_32.S, flush_hash_search.S, the 603's miss handlers).
#: What no part names (the user program, the C paths the kernel model charges from its
#: fixed-cost table) is "user and fixed C paths".
PARTS = {
    "entry and exit": ("SystemCall22", "sc_frame", "sc21_sp", "transfer_to_handler",
                       "tth_kernel", "stack_overflow22", "DoSyscall22", "ds_enosys",
                       "ds_error", "ds_store", "int_return", "ir_no_ee", "ir_restore",
                       "host_stop22"),
    "TLB and hash-table misses": ("DataAccess22", "da_frame", "da21_sp", "da_slow",
                                  "user_dsi603", "uda_frame", "uda21_sp", "user_isi603",
                                  "uia_frame", "uia21_sp", "user_dsi604", "uda4_frame",
                                  "uda421_sp", "user_isi604", "uia4_frame", "uia421_sp",
                                  "InstructionAccess22", "ia_frame", "ia21_sp", "ia_slow",
                                  "hash_kernel22", "hk_none", "hk_out", "fast_return22",
                                  "da_user", "ia_user", "vectors_gap", "vectors_gap_end",
                                  "hash_page_user22",
                                  "hash_page", "create_hpte", "add_hash_page",
                                  "itlb_miss_603h", "dtlb_load_miss_603h",
                                  "dtlb_store_miss_603h", "itlb_miss_603k",
                                  "dtlb_load_miss_603k", "dtlb_store_miss_603k"),
    "flush": ("flush_range_search", "flush_hash_page_search", "flush_hash_pages",
              "set_context_22", "tlbia_603", "tlbia_603_next", "tlbie_603"),
    "scheduler and switch": ("schedule22", "sleep_on22", "wake_up22", "wake_up_process22",
                             "goodness22", "_switch22", "sw_segments", "cli22", "sti22",
                             "enable22", "lost_interrupts22"),
    "the call's own work": ("sys_getppid22", "sys_read22", "sys_write22",
                            "atomic_inc_return22", "atomic_dec_return22",
                            "pipe_read22", "pipe_write22", "copy_from_user22",
                            "copy_to_user22", "__copy_tofrom_user22"),
}
#: label prefixes of the routines above whose inner labels are symbols of their own
PART_PREFIXES = {"sch_": "scheduler and switch", "so_": "scheduler and switch",
                 "gd_": "scheduler and switch", "wu_": "scheduler and switch",
                 "wp_": "scheduler and switch", "pr_": "the call's own work",
                 "pw_": "the call's own work", "rw_": "the call's own work",
                 "pipe_": "the call's own work", "cu_": "the call's own work",
                 "ir_": "entry and exit", "dlhash_": "TLB and hash-table misses",
                 "dshash_": "TLB and hash-table misses", "ihash_": "TLB and hash-table misses",
                 "hpu_": "TLB and hash-table misses",
                 "dmiss_": "TLB and hash-table misses", "imiss_": "TLB and hash-table misses"}
REST = "user and fixed C paths"


def part_of(symbol):
    """The part of Table 3's breakdown (``PARTS``) whose routine holds ``symbol``; REST
    for a symbol no part names."""
    for part, names in PARTS.items():
        if symbol in names:
            return part
    for prefix, part in PART_PREFIXES.items():
        if symbol.startswith(prefix):
            return part
    return REST


class _CountingEntry(Entry):
    """The entry model with every guest segment's per-instruction cycles added up (each
    segment starts the machine's counts from zero: a round trip's switches stop the run)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cycles = None

    def _segment(self, pc, label):
        run = super()._segment(pc, label)
        if self.cycles is not None:
            # the counts end at their high-water mark, which only rises: this segment's
            # are at least as long as the sum so far
            counted = profiler.instruction_counts(self.machine, whole=False)[1]
            counted[:len(self.cycles)] += self.cycles
            self.cycles = counted
        return run

    def counted(self, process, *args):
        """``run(process, ELF_BASE, *args)`` and its guest cycles by symbol."""
        profiler.count_instructions(self.machine)
        self.cycles = np.zeros(0, np.int64)
        try:
            run = self.run(process, ELF_BASE, *args)
            by_symbol = profiler.cycles_by_symbol(self.machine, self.cycles)
        finally:
            self.cycles = None
            profiler.count_instructions(self.machine, on=False)
        return run, by_symbol


def _parts_of_runs(entry, process, args):
    """``entry.counted(process, *a)`` for each ``a`` of ``args``: per run, its cycles (guest
    and fixed), instructions, TLB misses, the 604's table-search cycles and the guest
    cycles of each part (``part_of``); what no part names goes to REST."""
    out = []
    for a in args:
        r, by_symbol = entry.counted(process, *a)
        parts = {p: 0.0 for p in (*PARTS, REST)}
        for symbol, cycles in by_symbol.items():
            parts[part_of(symbol)] += float(cycles)
        total = r.cycles + r.host_cycles
        parts[REST] += total - sum(parts.values())    # the user's code and the fixed paths
        out.append({"cycles": total, "instructions": r.instructions,
                    "tlb_misses": tlb_misses(r.events),
                    "table_search_cycles": r.events.get("table_search_cycles", 0), **parts})
    return out


def _per_op(runs, span):
    """The difference of two of ``_parts_of_runs``'s rows over ``span`` iterations."""
    a, b = runs
    return {key: (b[key] - a[key]) / span for key in a}


def parts_null(machine, calls=(10, 20), bats=True, version="2.2.0", **options):
    """One steady null call of ``null_syscall`` by part (``PARTS``), per call."""
    k = kernel(machine, **options)
    entry = _CountingEntry(k, bats=bats, version=version)
    p = entry.spawn(LAT_SYSCALL_NULL, "lat_syscall")
    entry.run(p, ELF_BASE, 1)
    runs = _parts_of_runs(entry, p, [(n,) for n in calls])
    return {**_per_op(runs, calls[1] - calls[0]), "clock_mhz": k.machine.profile.clock_mhz}


def parts_pipe(machine, counts=PIPE_TRIPS, size=1, bats=True, version="2.2.0", alone=False,
               frames=LAT_PIPE_FRAMES, **options):
    """One lat_pipe round trip by part (``PARTS``), or with ``alone`` lat_ctx's overhead
    (a write and a read in one process, no switch), per iteration, as ``_per_iteration``."""
    k = kernel(machine, **options)
    entry = _CountingEntry(k, bats=bats, version=version)
    parent = _pipes_between(entry, pipe_alone(size) if alone
                             else pipe_round_trip(size, frames))
    entry.run(parent, ELF_BASE, 0, counts[0])
    runs = _parts_of_runs(entry, parent, [(0, n) for n in counts])
    return {**_per_op(runs, counts[1] - counts[0]), "clock_mhz": k.machine.profile.clock_mhz}


#: Table 3's columns that ``table3_parts`` breaks down, and the published row's key
PART_COLUMNS = {"null call": "null_syscall_us", "context switch": "ctx_switch_us",
                "pipe latency": "pipe_latency_us"}


def table3_parts(configurations=CONFIGURATIONS, processor="604"):
    """Where Table 3's time goes on the model, for each kernel of ``configurations`` on
    ``processor``: cycles per operation by part (``PARTS``) of a null call, a context switch
    (lat_ctx's: half a round trip of its 4-byte token less a write and a read in one
    process, part by part) and a pipe round trip (lat_pipe's, 1 byte), beside the published microseconds at the profile's clock
    (``published_cycles``). A DataFrame indexed by (column, kernel)."""
    published = data.load("dougan1999_table3_lmbench").set_index("os")
    rows_of = {"optimized": "Linux/PPC", "unoptimized": "Unoptimized Linux/PPC"}
    rows = []
    for (kind, proc), (machine, options) in configurations.items():
        if proc != processor:
            continue
        trip = parts_pipe(machine, **options)                 # lat_pipe's 1 byte
        # lat_ctx's token: 4 bytes, a local of its own functions' frames
        ring = parts_pipe(machine, CTX_TRIPS, size=4, frames=LAT_CTX_FRAMES, **options)
        alone = parts_pipe(machine, CTX_TRIPS, size=4, alone=True, **options)
        switch = {key: ring[key] / 2 - alone[key] for key in ring if key != "clock_mhz"}
        clock = trip["clock_mhz"]
        for column, measured in (("null call", parts_null(machine, **options)),
                                 ("context switch", switch), ("pipe latency", trip)):
            pub = float(published.loc[rows_of[kind], PART_COLUMNS[column]])
            rows.append({"column": column, "kernel": kind, **measured,
                         "published_cycles": pub * clock, "clock_mhz": clock})
    return pd.DataFrame(rows).set_index(["column", "kernel"])
