"""Dougan, Mackerras, Yodaiken 1999 on the kernel model: the experiments of the chapter's
emulated sections (notebooks/dougan1999/), each a function returning plain numbers or a
DataFrame, so that the notebooks stay thin and the tests can check them.

The three MMUs (``MACHINES``):

* ``"603 hash table"``: the 603 searching a hash table in software, as Linux/PPC did
  before the paper (emu.kernel.ppc603, reload="hash");
* ``"603 page table"``: the paper's optimisation, the 603's miss handlers walking the Linux
  page table, no hash table at all (reload="pagetable");
* ``"604"``: the hardware search of the hash table, hash_page on a hash miss
  (emu.kernel.ppc604).

Section 2 (603 software reload against 604 hardware; each takes a kernel's options, e.g.
``FLUSHES_22``, the 1998 kernels'): ``reuse`` (a working set larger than
both TLBs, touched again and again: every access a TLB miss whose translation exists),
``miss_costs`` (cycles per TLB miss of each), ``hit_rate_by_reuse`` (the hash-table hit rate
on a TLB miss when every page is first touched and then reused ``passes - 1`` times),
``workloads`` (the kernel model's LMBench workloads on the three).

Section 3 (mmap latency): ``mmap_latency`` (LMBench's lat_mmap against the mapping size on
the 604 with the three range flushes of emu.kernel.ppc604: every page searched, the new
context, only where _PAGE_HASHPTE says an entry can be); ``mmap_latency_603`` (the 603
searching a hash table, 2.1.51's flush against 2.2.0's).

Section 4 (system calls, switches, pipes): ``null_syscall``, ``lat_ctx``, ``lat_pipe``,
``bw_pipe``, ``bw_file_rd`` (Table 1's file reread: 2.2.0's page-cache read path,
emu.kernel.filemap), ``table3_emulated``, ``kernel_tlb_conflict`` (user programs under the kernel
model, emu.kernel.entry); ``table3_configurations`` (Table 3's two Linux/PPC rows,
``CONFIGURATIONS``) and ``cold_null_syscall`` / ``cold_null_table`` (what emptied caches and
TLBs add to a null call: the bound on what the machine's state could explain of the
unoptimized row); ``null_call_breakdown`` (what a steady null call is made of: Table 3's
gap measured); ``table3_parts`` (where Table 3's cycles go on both kernels, by routine:
entry and exit, TLB and hash-table misses, flushes, scheduler and switch, the call's own
work, ``PARTS``); ``bats_build`` / ``bats_build_saving`` (the book's build workload on the
603 with the kernel in the BATs and without: the "about 20%"); ``hash_table_build_saving``
(the build on the 603 searching a hash table against walking the page table: node10's 5%);
``bats_compile_saving``
(node6's kernel-compile miss counts at the model's 604 per-miss cycles: the other evidence).

Section 5 (the idle task): ``idle_next_task`` (the task that runs after the idle task has
cleared pages in one of node13's ways, ``IDLE_CONFIGS``: its cycles, cache and TLB misses,
emu.kernel.idle), ``idle_task_table``, ``idle_by_working_set``.

The package's modules, by concept: ``mmu`` (sections 2 and 3), ``build`` (node6 and
node10's builds, the kernel in the TLB), ``syscalls`` and ``parts`` (section 4), ``idle``
(section 5); the scorecard (``claims``) is here. Every name of the modules is also the
package's (``dougan1999.bats_build``), as the chapter's notebooks and tests use them.
"""
from __future__ import annotations

from ...hw import profile as hw_profile
from ...kernel.ppc32 import CONTEXT_FLUSH_PAGES
from ...present import data
from ...present.claims import Claim, EFFECT, QUANTITY
# Every name of the modules is the package's too (dougan1999.<name>, as the
# notebooks, the tests and emu.book read them)
from .mmu import (BARE, FLUSHES, FLUSHES_22, FLUSHES_24, FLUSH_ROWS, MACHINES, MISS_ROWS,
                  TLB_FLUSH_ROWS, _hpte_address, _measure, hash_exception_entry, hash_miss_cost,
                  hit_rate_by_reuse, kernel, miss_costs, miss_summary, mmap_latency,
                  mmap_latency_603, mmap_point, reuse, workload_row,
                  workloads_table)  # noqa: F401
from .build import (BUILD_SCALE, BUILD_STEPS, BUILD_WARMUP, NODE6_COUNTS, _SCALE, _fixed_paths,
                    _rows_cycles, bats_build, bats_build_saving, bats_compile_saving,
                    hash_table_build_saving, kernel_tlb_conflict, node6_counts)  # noqa: F401
from .syscalls import (CONFIGURATIONS, CTX_TRIPS, FILE_REREAD_PASSES, FILE_REREAD_SIZE,
                       NULL_CALL_SYNC_PAIRS, PIPE_TRIPS, PIPE_TRIP_SYNCS, SCHED_TRIP_SYNCS,
                       _lmbench_pair, _per_iteration, _pipes_between, bw_file_rd, bw_pipe,
                       cold_null_syscall, cold_null_table, lat_ctx,
                       lat_pipe, null_call_breakdown, null_syscall, null_syscall_table,
                       table3_configurations, table3_emulated, tlb_misses)  # noqa: F401
from .parts import (PARTS, PART_COLUMNS, PART_PREFIXES, REST, _CountingEntry, _parts_of_runs,
                    _per_op, part_of, parts_null, parts_pipe, table3_parts)  # noqa: F401
from .idle import (IDLE_CONFIGS, LINE, idle_by_working_set, idle_next_task, idle_task_table,
                   next_task_source)  # noqa: F401

# ------------------------------------------------------------------ the scorecard

PAGES = {"published": "notebooks/dougan1999/01-published",
         "reload": "notebooks/dougan1999/02-software-reload",
         "mmap": "notebooks/dougan1999/03-mmap-latency",
         "syscalls": "notebooks/dougan1999/04-system-calls",
         "idle": "notebooks/dougan1999/05-idle-task",
         "tlb": "notebooks/dougan1999/06-kernel-in-the-tlb"}
# Which LMBench Table 1 is (node10, 1999): its columns are those of LMBench 1.x's summary
# (scripts/getsummary), printed in its formats. LMBench 1.1's (getsummary 1.8, SCCS serial 9,
# 96/05/21, ricarkol/lmbench2 scripts/SCCS/s.getsummary) prints the three process columns
# in thousands of microseconds, "fork proc" with one decimal ("%3.1fK") and "exec proc" and
# "sh proc" with none ("%3.0fK"); 1.9's (1.10-1.13, to 97/07) keeps those formats. Table 1's
# process start has one decimal (1.8, 1.7, 1.6): the fork column, 1.8K microseconds, i.e.
# 1.8 ms (the data's pstart_s keeps the table's numbers; a ratio needs no unit). That
# column is lat_proc's "Process fork+exit" (src/lat_proc.c 1.5-1.9, SCCS serials 6-10,
# 95/11-96/11: fork(), the child exit(1), the parent wait()s for it; 1.5 a loop of 600, 1.6
# on LOOP_FIRST/LOOP_LAST), the loop emu.kernel.workloads.lat_proc("fork") runs
# (LMBench 2's lat_proc.c 1.14 has the same fork, exit(1) and wait). The identification
# rests on the printed format; exec's 2K would print without a decimal.
PSTART_WORKLOAD = "lat_proc fork"

#: Table 1's columns the model runs: (column, LMBench program, the notebook of its rows);
#: every column but process start (``_process_start_claims``)
TABLE1_RUNS = {"ctxsw_us": ("context switch", "lat_ctx", "syscalls"),
               "pipe_latency_us": ("pipe latency", "lat_pipe", "syscalls"),
               "pipe_bandwidth_mb_s": ("pipe bandwidth", "bw_pipe", "syscalls"),
               "file_reread_mb_s": ("file reread bandwidth", "bw_file_rd", "reload")}
#: the programs whose result is a bandwidth (bytes per time: a ratio of times inverted)
BANDWIDTHS = ("bw_pipe", "bw_file_rd")


def claims():
    """The chapter's claims for the scorecard (emu.present.claims), from the chapter's own runs:
    the mmap latency gain (notebook 03: 8 MB, the 1998 search against a new context), the
    603 against the 604 and against itself with the hash table (notebooks 02 and 04:
    lat_proc fork beside Table 1's process start, LMBench 1.1's fork proc; lat_ctx, lat_pipe
    and bw_pipe beside its other columns), Table 3's Linux/PPC row (notebook 04: LMBench's
    loops through the 2.2.0 entry path on the 604), the idle task's page clearing (notebook
    05: the next task's cycles on the 603, beside node13) and Table 3's unoptimized /
    optimized ratios (notebook 06: ``CONFIGURATIONS`` on the 604), node6's BATs rows and
    node10's 5% (the build workload, notebooks 06 and 02); Table 1's file reread (notebook
    02: LMBench 1.x's bw_file_rd through 2.2.0's page-cache read path, ``bw_file_rd``) and
    the hash-table hit rate of lat_proc exec on the 604 (2.2.0)."""
    text = data.load("dougan1999_text_numbers").set_index("quantity")
    table1 = data.load("dougan1999_table1_lmbench").set_index("system")
    big = 8 << 20
    mm = mmap_latency(sizes=(big,), flushes={f: FLUSHES[f] for f in ("search", "context")})
    cycles = mm["cycles"].unstack("flush").loc[big >> 10]
    flushes = mm["flush_cycles"].unstack("flush").loc[big >> 10]
    # lat_proc fork and exec alone (its lat_mmap rows are notebook 02's, unread here): fork
    # for Table 1's process start (PSTART_WORKLOAD), exec for the hit rate
    procs_table = workloads_table(kinds=("fork", "exec"), mmap_size=None)
    execs = procs_table.xs("lat_proc exec", level="workload")
    forks = procs_table.xs(PSTART_WORKLOAD, level="workload")
    pstart = table1["pstart_s"]
    table3 = data.load("dougan1999_table3_lmbench").set_index("os")
    null = null_syscall("604")
    ctx, pipe, bw = lat_ctx("604"), lat_pipe("604"), bw_pipe("604")
    linux = table3.loc["Linux/PPC"]
    node13 = data.load("dougan1999_node13_idle_task")
    idle_runs = idle_task_table(configs=("cached, used", "uncached, not used"))
    idle = idle_runs["cycles_vs_none"]
    idle_setting = (f"{idle_runs['idle_pages_cleared'].max():.0f} pages are cleared, "
                    f"{idle_runs['data_kb'].iloc[0]:.0f} KB working set")
    unoptimized = table3.loc["Unoptimized Linux/PPC"]
    machine, options = CONFIGURATIONS[("unoptimized", "604")]
    before = {"null_syscall_us": null["us_per_call"], "ctx_switch_us": ctx["us"],
              "pipe_latency_us": pipe["us"], "pipe_bandwidth_mb_s": bw["mb_s"]}
    unopt_null, unopt_pipe = null_syscall(machine, **options), lat_pipe(machine, **options)
    unopt_misses = {"null": unopt_null["steady_tlb_misses"],     # a run of 20 calls
                    "pipe": unopt_pipe["tlb_misses"]}                 # per round trip
    insns = {"null": (unopt_null["instructions_per_call"], null["instructions_per_call"]),
             "pipe": (unopt_pipe["instructions"], pipe["instructions"])}
    after = {"null_syscall_us": unopt_null["us_per_call"],
             "ctx_switch_us": lat_ctx(machine, **options)["us"],
             "pipe_latency_us": unopt_pipe["us"],
             "pipe_bandwidth_mb_s": bw_pipe(machine, **options)["mb_s"]}
    names = {"null_syscall_us": "null system call", "ctx_switch_us": "context switch",
             "pipe_latency_us": "pipe latency", "pipe_bandwidth_mb_s": "pipe bandwidth"}
    table3_rows = [
        Claim("Dougan 1999", f"unoptimized / optimized Linux/PPC: {name} (604)",
              kind=EFFECT, published=float(unoptimized[column]) / float(linux[column]),
              published_from=(unoptimized[column], linux[column]),
              emulated=after[column] / before[column], unit="times", digits=2, neutral=1,
              page=PAGES["tlb"],
              source="Table 3 (the model: Linux 2.1.51's exception entry and exit and its "
                     "scheduler, the "
                     "kernel mapped by PTEs through the hash table and flushes searching it, "
                     "against 2.2.0 with the kernel in a BAT; ppc604 profile)",
              reason=f"2.1.51's entry path is 2.2.0's shape (its SYNCs lone syncs) and its "
                     f"scheduler 2.1.51's: a null call runs "
                     f"{insns['null'][0]:.0f} instructions against {insns['null'][1]:.0f}, a "
                     f"pipe round trip {insns['pipe'][0]:,.0f} against {insns['pipe'][1]:,.0f}; "
                     f"without BATs a run of 20 null calls takes {unopt_misses['null']:.0f} "
                     f"TLB misses and a round trip {unopt_misses['pipe']:.0f} in steady state, "
                     f"so the model's {name} changes by "
                     f"{after[column] / before[column] - 1:+.1%}; what made the 1998 kernel "
                     "slower here is in neither")
        for column, name in names.items()]
    h = "603 180MHz (htab)"
    n = "603 180MHz (no htab)"
    f = "604 185MHz"
    table1_rows = []
    runs = {m: {"lat_ctx": lat_ctx(m), "lat_pipe": lat_pipe(m), "bw_pipe": bw_pipe(m)}
            for m in MACHINES if m != "604"}
    runs["604"] = {"lat_ctx": ctx, "lat_pipe": pipe, "bw_pipe": bw}     # run above
    for m in MACHINES:
        runs[m]["bw_file_rd"] = bw_file_rd(m)
    for column, (name, program, page) in TABLE1_RUNS.items():
        # bandwidth is bytes per time: the ratio of times is the inverse of the cycles'
        def model(a, b):
            ratio = runs[a][program]["cycles"] / runs[b][program]["cycles"]
            return 1 / ratio if program in BANDWIDTHS else ratio
        for label, (x, y), (mx, my) in (
                ("603 without / with the hash table", (n, h), ("603 page table",
                                                           "603 hash table")),
                ("603 (no hash table) / 604", (n, f), ("603 page table", "604"))):
            table1_rows.append(Claim(
                "Dougan 1999", f"{label}: {name}", kind=EFFECT, neutral=1, digits=3, unit="",
                published=float(table1.loc[x, column] / table1.loc[y, column]),
                published_from=(table1.loc[x, column], table1.loc[y, column]),
                emulated=model(mx, my), page=PAGES[page],
                source=f"Table 1, node10 (the model: LMBench 1.x {program} through the 2.2.0 "
                       f"entry path{_READ_PATH if program == 'bw_file_rd' else ''}, cycles "
                       f"at one clock)",
                reason=_table1_reason(program, runs, mx, my,
                                      (table1.loc[x, "mhz"], table1.loc[y, "mhz"]))))
    return [
        Claim("Dougan 1999", "mmap latency: searching every page / avoiding the search",
              kind=EFFECT,
              published=float(text.loc["mmap() latency improvement from avoiding hash-table "
                                       "searches", "value"]),
              emulated=cycles["search"] / cycles["context"], unit="times", digits=1,
              neutral=1, source="Analysis section (the model: lat_mmap of 8 MB on the 604)",
              page=PAGES["mmap"],
              reason=f"the model's flush alone is {flushes['search'] / flushes['context']:,.0f} "
                     f"times cheaper, but lat_mmap's own work "
                     "grows with the size too, so the whole benchmark levels off"),
        *_process_start_claims(pstart, forks),
        Claim("Dougan 1999", "null system call, Linux/PPC (133 MHz 604)", kind=QUANTITY,
              published=float(table3.loc["Linux/PPC", "null_syscall_us"]),
              emulated=null["us_per_call"], unit="us", digits=2, page=PAGES["syscalls"],
              source="Table 3 (the model: lat_syscall null through the 2.2.0 entry path, "
                     "ppc604 profile at its 133 MHz)",
              reason=f"{null['instructions_per_call']:,.0f} instructions a call; its "
                     f"{NULL_CALL_SYNC_PAIRS} "
                     f"sync; isync pairs at the profile's cost (GCC's 6xx.md, not the 604 "
                     f"manual) are {_sync_pairs_share(null):.0f}% of the model's cycles, and "
                     f"the hardware's exception entry costs nothing here"),
        Claim("Dougan 1999", "context switch (2 processes, 0 KB), Linux/PPC (133 MHz 604)",
              kind=QUANTITY, published=float(linux["ctx_switch_us"]), emulated=ctx["us"],
              unit="us", digits=2, page=PAGES["syscalls"],
              source="Table 3 (the model: LMBench 1.x lat_ctx, half a round trip of a 4-byte "
                     "token less the pipe alone, _switch of 2.2.0, ppc604 profile)",
              reason="schedule(), sleep_on and wake_up are 2.2.0's as guest code; their "
                     f"interrupt masking puts {SCHED_TRIP_SYNCS} of a round trip's "
                     f"{PIPE_TRIP_SYNCS} sync instructions on it, at the profile's cost "
                     f"(GCC's 6xx.md, not the 604 manual: {_sync_share(ctx, 'round_trip_cycles'):.0f}"
                     f"% of the round trip); the 604's TLBs take "
                     f"{ctx['tlb_misses_per_switch']:.0f} misses a switch in this loop"),
        Claim("Dougan 1999", "pipe latency, Linux/PPC (133 MHz 604)", kind=QUANTITY,
              published=float(linux["pipe_latency_us"]), emulated=pipe["us"], unit="us",
              digits=1, page=PAGES["syscalls"],
              source="Table 3 (the model: LMBench 1.x lat_pipe, a 1-byte round trip through "
                     "2.2.0's pipe_read/pipe_write and two switches, ppc604 profile)",
              reason=f"all guest code now, schedule() and wake_up included "
                     f"({pipe['instructions']:,.0f} instructions, {pipe['cycles']:,.0f} "
                     f"cycles a round trip); its {PIPE_TRIP_SYNCS} sync instructions at the "
                     f"profile's cost (GCC's 6xx.md) are {_sync_share(pipe, 'cycles'):.0f}% of "
                     f"them"),
        Claim("Dougan 1999", "pipe bandwidth, Linux/PPC (133 MHz 604)", kind=QUANTITY,
              published=float(linux["pipe_bandwidth_mb_s"]), emulated=bw["mb_s"],
              unit="MB/s", digits=1, page=PAGES["syscalls"],
              source="Table 3 (the model: LMBench 1.x bw_pipe, 64 KB writes and reads "
                     "through a one-page pipe, ppc604 profile, no board L2)",
              reason="memory is an estimated latency with no bus occupancy: streaming 64 KB "
                     "buffers through the 16 KB L1 D comes out "
                     f"{'faster' if bw['mb_s'] > float(linux['pipe_bandwidth_mb_s']) else 'slower'}"
                     " than on the 9500's 60x bus"),
        Claim("Dougan 1999", "idle task clears pages through the cache, the pages used: "
                             "time / no clearing", kind=EFFECT,
              published=_node13(node13, "cached, used", "kernel compile time"),
              emulated=idle["cached, used"], unit="times", digits=2, neutral=1,
              page=PAGES["idle"],
              source="node13, Idle Task Page Clearing (the model: on the 603, the cycles of "
                     f"the task that runs after {idle_setting})",
              stand_in="the next task after the idle task, for the paper's kernel compile "
                       "(the build workload has no idle time)",
              reason="the next task fetches its working set again but its page fault "
                     "skips 2.2.0's clear_page; a compile's processes hold more in the "
                     "cache than one page costs to clear"),
        Claim("Dougan 1999", "idle task clears pages uncached, not used: time / no clearing",
              kind=EFFECT, published=_node13(node13, "uncached, not used", "performance"),
              emulated=idle["uncached, not used"], unit="times", digits=3, neutral=1,
              tolerance=_compile_resolution() / 100, page=PAGES["idle"],
              tolerance_source=f"the smallest change of a kernel compile's time the paper "
                               f"reports as a change ({_compile_resolution():.0f}%, node10): "
                               f"it states no noise for node13",
              source="node13, Idle Task Page Clearing (the model: as above)",
              stand_in="the next task after the idle task, as above",
              reason="the cache is left alone, but each flush_tlb_page is a tlbie, which on "
                     "the 603 empties a class of both TLBs: the next task reloads a few "
                     "entries"),
        _hit_rate_measured(text, execs.loc["604"]),
    ] + table1_rows + table3_rows + _bats_claims(text) + [_hash_table_claim()]


_READ_PATH = " and page-cache read path (filemap_22.S)"


def _table1_reason(program, runs, mx, my, clocks):
    """Why a Table 1 ratio of ``program`` between the model's ``mx`` and ``my`` is what it
    is: the paper's two machines (``clocks``: their MHz; the 603 against itself is one
    machine, two kernels), the model's TLB misses in the measured loop, and for the file
    reread its run's own make-up (on one profile, the two 603s, a difference of cycles with
    the same instructions and no TLB miss is the caches')."""
    a, b = runs[mx][program], runs[my][program]
    misses = [r["tlb_misses"] if "tlb_misses" in r else 2 * r["tlb_misses_per_switch"]
              for r in (a, b)]
    one_cpu = mx[:3] == my[:3]
    if one_cpu:
        common = (f"the paper's two rows are one {clocks[0]:.0f} MHz 603, its kernel with and "
                  f"without the hash table; the model's loop runs on one profile, in steady "
                  f"state, the kernel in a BAT")
    else:
        common = (f"the paper's machines differ in clock ({clocks[0]:.0f} against "
                  f"{clocks[1]:.0f} MHz) and board; the model's loops run with the same "
                  f"clock and memory, in steady state")
    if program != "bw_file_rd":
        unit = {"bw_pipe": "a 64 KB chunk"}.get(program, "a round trip")
        said = f", with {misses[0]:.0f} and {misses[1]:.0f} TLB misses {unit}"
        if one_cpu and misses == [0, 0]:
            apart = abs(a["cycles"] - b["cycles"])
            said += (": no miss handler runs, so the two kernels run the same code, "
                     + ("in the same cycles" if apart == 0 else f"{apart:,.0f} cycles apart"))
        return common + said
    none = misses[0] == misses[1] == 0
    return (f"{common}: a pass over the {FILE_REREAD_SIZE >> 20} MB file runs "
            f"{a['instructions']:,.0f} instructions and {b['instructions']:,.0f}, with "
            f"{misses[0]:.0f} and {misses[1]:.0f} TLB misses (the buffer is 16 "
            f"pages; the kernel reaches the page cache through BAT2)"
            f"{', so no hash table is searched' if none else ''}; the copy to the buffer and "
            f"its sum stream the file through the same 16 KB L1 D in both runs"
            + (f"; the {abs(a['cycles'] - b['cycles']):,.0f} cycles a pass between them are "
               f"the caches' alone (the same instructions, the kernel's structures at other "
               f"addresses: each kernel allocates its own tables first)"
               if a["instructions"] == b["instructions"] and one_cpu else ""))


def _span(column):
    """The cycles of a column: one value "on every MMU", or the least to the most."""
    values = sorted({int(c) for c in column})
    return f"{values[0]:,} cycles" + (" on every MMU" if len(values) == 1 else
                                      f" to {values[-1]:,}")


def _process_start_claims(pstart, forks):
    """Table 1's process start (``pstart``: its column by system) against ``forks`` (the
    ``workloads_table`` rows of PSTART_WORKLOAD, by machine): the 603 without / with the hash
    table and the 603 without it / the 604."""
    h, n, f = "603 180MHz (htab)", "603 180MHz (no htab)", "604 185MHz"
    procs = forks["cycles"]
    # 2.2.0 preloads nothing: a first touch misses the table before its fault and after it
    firsts = {m: (int(forks.loc[m, "htab_misses"]), int(forks.loc[m, "hash_page_refused"]),
                  int(forks.loc[m, "tlb_misses"])) for m in ("603 hash table", "604")}
    flushes = {m: int(forks.loc[m, "flush_cycles"]) for m in forks.index}
    # the kernel model's fork, exit, wait, PTE copies and zaps (its table of fixed costs),
    # and the scheduler's guest code (emu.kernel.sched22)
    fixed = (f"; the kernel model's fixed-cost C paths (fork, exit, wait, less their "
             f"wake-ups and wait queue, the PTEs copied and zapped) are "
             f"{_span(forks['fixed_cycles'])}; 2.2.0's schedule(), _switch and "
             f"wake-ups, guest code, {_span(forks['sched_cycles'])}")
    searched = (f"2.2.0's flush of one page or of a range of up to {CONTEXT_FLUSH_PAGES} "
                f"pages searches the hash table for each page")
    return [
        Claim("Dougan 1999", "603 without / with the hash table: process start",
              kind=EFFECT, published=pstart[n] / pstart[h], published_from=(pstart[n],
                                                                             pstart[h]),
              emulated=procs["603 page table"] / procs["603 hash table"], digits=3,
              neutral=1, unit="", page=PAGES["reload"],
              source="Table 1, node10, LMBench 1.1's fork proc (the model: lat_proc "
                     "fork cycles: fork, the child's exit, wait)",
              reason=f"most of fork's {firsts['603 hash table'][2]} TLB misses are first "
                     f"touches (the child's pages, new to its context, and libc's exit "
                     f"path), which the hash table makes dearer: "
                     f"{firsts['603 hash table'][0]} failed searches, each running on into the "
                     f"DSI's prologue and 2.2.0's hash_page, guest code "
                     f"({firsts['603 hash table'][1]} refused, no PTE "
                     f"yet: the fault follows and, since 2.2.0 preloads nothing, the retried "
                     f"access misses the table again); and {searched} "
                     f"({flushes['603 hash table']:,} cycles of flushes against the page-table "
                     f"kernel's {flushes['603 page table']:,}, whose flush of a page is a "
                     f"tlbie){fixed}"),
        Claim("Dougan 1999", "603 (no hash table) / 604: process start",
              kind=EFFECT, published=pstart[n] / pstart[f], published_from=(pstart[n],
                                                                             pstart[f]),
              emulated=procs["603 page table"] / procs["604"], digits=3, neutral=1, unit="",
              source="Table 1, node10, LMBench 1.1's fork proc (the model: lat_proc "
                     "fork cycles, same clock)",
              page=PAGES["reload"],
              reason=f"the model's 604 pays a failed search, the hash-miss exception and "
                     f"hash_page before each first touch's fault and again after it (2.2.0 "
                     f"preloads nothing: {firsts['604'][0]} hash misses in "
                     f"{firsts['604'][2]} TLB misses), where the 603 walks the page table and "
                     f"faults, and {searched} ({flushes['604']:,} cycles of flushes against the "
                     f"603's {flushes['603 page table']:,}){fixed}; a dearer 604 search would "
                     "widen the gap, not close it, so what "
                     "the model lacks is elsewhere (its dispatch groups are static, up to "
                     "four a clock on the 604 and two on the 603e, and both run at one "
                     "clock)")]


def _bats_claims(text):
    """node6's 20% (and the Analysis section's "about 20%", the same measurement, so one
    row naming both) and node6's TLB-miss and hash-table-miss reductions: the book's build
    workload on the 604 (node6's machine) with the kernel in the BATs and without
    (``bats_build_saving``); node6's own counts stay the chapter's other evidence
    (notebook 06, ``bats_compile_saving``)."""
    saving = bats_build_saving("604")
    bats, nobats = saving["with_bats"], saving["without_bats"]
    counts = node6_counts()
    nodes = data.load("dougan1999_node_numbers").set_index("quantity")
    stand_in = (f"the book's build workload (Kbuild rule, gcc's vfork and passes, at "
                f"1/{1 / BUILD_SCALE:.0f} of its programs' estimated sizes, as the other "
                f"chapters run it) on the 604 under 2.2.0, for node6's kernel compile")
    c_share = 100 * nobats["c_path_cycles"] / nobats["cycles"]
    reason = (f"without BATs the kernel took {nobats['kernel_tlb_misses']:,} TLB misses a "
              f"compile step ({nobats['kernel_htab_misses']:,} of them hash-table misses) "
              f"beside the user's {nobats['user_tlb_misses']:,} "
              f"({bats['user_tlb_misses']:,} with BATs: the user's misses are first touches "
              f"and flushes either way); of the kernel's, its C paths' PTE loads and stores "
              f"took {nobats['kernel_c_tlb_misses']:,}: the rest of their data (task, mm, "
              f"VMAs, struct pages, the page cache) is not in guest memory, and their fixed "
              f"costs are {c_share:.0f}% of the step; the build's "
              f"programs do no work of their own in user mode; node6 counted "
              f"{(counts['tlb_ptes'] - counts['tlb_bats']) / 1e6:.0f} million fewer TLB misses "
              f"and {(counts['htab_ptes'] - counts['htab_bats']) / 1e3:.0f} thousand fewer "
              f"hash-table misses with the BATs (notebook 06 prices them)")
    speedup = "system speed-up from less user/kernel conflict for TLB entries (about)"
    compile_ = "reduction in kernel compile wall-clock time from mapping the kernel by the BATs"
    published = float(text.loc[speedup, "value"])
    if float(nodes.loc[compile_, "value"]) != published:
        raise ValueError("the Analysis section's speed-up and node6's compile saving differ: "
                         "two measurements, two rows")
    misses = {key: run["user_tlb_misses"] + run["kernel_tlb_misses"]
              for key, run in (("bats", bats), ("nobats", nobats))}
    fewer = "reduction in TLB misses from mapping the kernel by the BATs"
    tlb_row = Claim(
        "Dougan 1999", fewer, kind=EFFECT, neutral=0, unit="%", digits=1,
        published=float(nodes.loc[fewer, "value"]),
        emulated=100 * (misses["nobats"] - misses["bats"]) / misses["nobats"],
        page=PAGES["tlb"], stand_in=stand_in,
        source="node6 (Reducing the OS TLB footprint), the 604's monitor on the kernel "
               "compile; the model: the build's TLB misses, the user's and the kernel's",
        reason=f"{misses['nobats']:,} TLB misses a compile step without BATs, "
               f"{misses['bats']:,} with: the kernel's are its guest routines' and its C "
               f"paths' PTE references' ({nobats['kernel_c_tlb_misses']:,}; their other data "
               f"is not in guest memory), and the user's are first touches after exec, "
               f"fork and the flushes, which a kernel entry cannot make dearer")
    htabs = {key: run["user_htab_misses"] + run["kernel_htab_misses"]
             for key, run in (("bats", bats), ("nobats", nobats))}
    fewer_htab = "reduction in hash-table misses from mapping the kernel by the BATs"
    htab_row = Claim(
        "Dougan 1999", fewer_htab, kind=EFFECT, neutral=0, unit="%", digits=1,
        published=float(nodes.loc[fewer_htab, "value"]),
        emulated=100 * (htabs["nobats"] - htabs["bats"]) / htabs["nobats"],
        page=PAGES["tlb"], stand_in=stand_in,
        source="node6 (Reducing the OS TLB footprint), the 604's monitor on the kernel "
               "compile; the model: the build's hash-table misses, the user's and the kernel's",
        reason=f"{htabs['nobats']:,} hash-table misses a compile step without BATs, "
               f"{htabs['bats']:,} with: the kernel's {nobats['kernel_htab_misses']:,} are its "
               f"routines' first touches of a page since boot (2.2.0 never flushes the "
               f"kernel's HPTEs, so a page freed and used again still has one), and the "
               f"user's are first touches, which 2.2.0's hash_page makes after the fault "
               f"(update_mmu_cache preloads nothing)")
    return [tlb_row, htab_row, Claim("Dougan 1999", f"{speedup}: node6's kernel compile with the kernel in the "
                  "BATs", kind=EFFECT, neutral=0, unit="%", digits=1, published=published,
                  emulated=saving["saved_percent"], page=PAGES["tlb"],
                  source="Analysis section, paragraph 2, measured as node6's kernel compile "
                         "wall-clock time (Reducing the OS TLB footprint); the model: the "
                         "build workload's compile step, 2.2.0 with and without BATs",
                  stand_in=stand_in, reason=reason)]


def _sync_share(run, key, profile="ppc604"):
    """A pipe round trip's sync instructions, % of ``run[key]`` at the profile's cost."""
    costs = hw_profile.load(profile).costs["mnemonics"]
    return 100 * PIPE_TRIP_SYNCS * costs["sync"] / run[key]


def _sync_pairs_share(null):
    """The null call's sync; isync pairs, % of its cycles at its profile's costs."""
    costs = hw_profile.load(null["profile"]).costs["mnemonics"]
    return 100 * NULL_CALL_SYNC_PAIRS * (costs["sync"] + costs["isync"]) / null["cycles_per_call"]


def _compile_resolution():
    """The smallest change of a kernel compile's time the paper reports (percent)."""
    nodes = data.load("dougan1999_node_numbers").set_index("quantity")
    return float(nodes.loc["kernel compile time reduction from TLB reloads without the "
                           "hash table", "value"])


def _hit_rate_measured(text, exec604):
    """The hash-table hit rate on a TLB miss of LMBench's lat_proc exec on the 604 under
    2.2.0 (``exec604``: its ``workloads_table`` row), the LMBench program of the chapter that
    takes TLB misses (the others take none in their steady loops); the paper names no
    workload for its 80-98%. Notebook 02's reuse passes give any rate one asks of them
    ((P - 1) / (P + 1) on 2.2.0), so they are not the claim's run."""
    low = float(text.loc["hash-table hit rate on a TLB miss (low end)", "value"])
    high = float(text.loc["hash-table hit rate on a TLB miss (high end)", "value"])
    hits, misses = int(exec604["htab_hits"]), int(exec604["htab_misses"])
    return Claim("Dougan 1999", "hash-table hit rate on a TLB miss (low end)", kind=QUANTITY,
                 published=low, emulated=100 * hits / (hits + misses) if hits + misses else 0.0,
                 published_from=(low, high), unit="%", digits=1, page=PAGES["reload"],
                 source="Analysis section, paragraph 3 (the model: lat_proc exec on the 604, "
                        "2.2.0's hash_page)",
                 stand_in="lat_proc exec, LMBench's program in the chapter that takes TLB "
                          "misses (the paper names no workload for its rate)",
                 reason=f"{hits} of exec's {hits + misses:,} table searches found the HPTE "
                        f"({int(exec604['tlb_misses'])} TLB misses): they are first touches; "
                        f"hash_page refused {int(exec604['hash_page_refused'])} (no PTE yet: "
                        f"the fault follows and, since 2.2.0 preloads nothing, the retry "
                        f"misses the table again), where the paper's rate is of a system "
                        f"whose pages are used again")


def _hash_table_claim():
    """node10's 5% shorter kernel compile from the 603's miss handlers walking the page table
    instead of searching a hash table: the book's build workload on the 603, the kernel in
    the BATs, both ways (``hash_table_build_saving``)."""
    nodes = data.load("dougan1999_node_numbers").set_index("quantity")
    quantity = "kernel compile time reduction from TLB reloads without the hash table"
    saving = hash_table_build_saving()
    hashed, walked = saving["hash_table"], saving["page_table"]
    return Claim(
        "Dougan 1999", quantity, kind=EFFECT, neutral=0, unit="%", digits=1,
        published=float(nodes.loc[quantity, "value"]), emulated=saving["saved_percent"],
        page=PAGES["reload"],
        source="node10 (Improving Hash Tables Away), its last sentence on the 603: the "
               "end result of the changes, a shorter kernel compile; the model: the build "
               "workload's compile step on the 603, the kernel in the BATs, 2.2.0's flush, "
               "the hash-table search against the page-table walk",
        stand_in=f"the book's build workload (Kbuild rule, gcc's vfork and passes, at "
                 f"1/{1 / BUILD_SCALE:.0f} of its programs' estimated sizes, as the other "
                 f"chapters run it) on the 603 under 2.2.0, for node10's kernel compile",
        reason=f"{hashed['cycles']:,} cycles a step searching the hash table, "
               f"{walked['cycles']:,} walking the page table: the same "
               f"{walked['user_tlb_misses']:,} TLB misses of first touches, but "
               f"{hashed['user_htab_misses']:,} of them miss the table too (the search, "
               f"the exception's prologue and hash_page, then the retry: "
               f"{hashed['miss_handler_cycles']:,} cycles of handler runs that found the "
               f"HPTE and {hashed['hash_page_cycles']:,} of those that did not, with their "
               f"prologue and hash_page, against {walked['miss_handler_cycles']:,} of the "
               f"walker's handlers), and the "
               f"hashed kernel searches the table to flush a range "
               f"({hashed['flush_cycles']:,} cycles of flushes against "
               f"{walked['flush_cycles']:,}); the build's programs do no work of their own "
               f"in user mode, so the MMU's paths are a larger share of a step than of a real "
               f"compile")


#: Published numbers of the chapter's data that are context, not results
CONTEXT = {
    "dougan1999_table3_machines": "the machines",
    ("dougan1999_table3_lmbench", "other"): "other systems, for comparison",
    ("dougan1999_table1_lmbench", "604 200MHz"): "a faster 604, for comparison",
    ("dougan1999_table1_lmbench", "mhz"): "the clocks",
    ("dougan1999_table1_lmbench", "cpu"): "the processor's name",
    ("dougan1999_text_numbers", "604 against 603"): "the processors' sizes: the profiles' "
                                                     "TLBs (64 and 128 entries); the caches "
                                                     "are the original 603's, where the "
                                                     "book's 603e has the 604's 16 KB",
    ("dougan1999_node_numbers", "cycles"): "the processors' costs of single paths, set beside "
                                           "the model's in notebook 02 (Comparisons); the "
                                           "profiles' ranges cite them, none is tuned to them",
    ("dougan1999_node_numbers", "accesses"): "as above",
    ("dougan1999_node_numbers", "kernel compile"): "the counts and times behind node6's "
                                                    "percentages (the claims)",
}


def _node13(table, configuration, quantity):
    """node13's value for a configuration and a quantity (the start of its text)."""
    rows = table[(table["configuration"] == configuration) &
                 table["quantity"].str.startswith(quantity)]
    if len(rows) != 1:
        raise ValueError(f"dougan1999_node13_idle_task: {len(rows)} rows for "
                         f"{configuration!r} / {quantity!r}, expected one")
    return float(rows["value"].iloc[0])
