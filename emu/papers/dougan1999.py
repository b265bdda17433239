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
``bw_pipe``, ``table3_emulated``, ``kernel_tlb_conflict`` (user programs under the kernel
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
"""
from __future__ import annotations

import pandas as pd

from ..hw import estimates, mmu
from ..hw import profile as hw_profile
from ..kernel import Kernel, gcc, workloads
from ..kernel.entry import (
    BW_PIPE,
    DATA_BASE,
    ELF_BASE,
    LAT_SYSCALL_NULL,
    NR_EXIT,
    NR_GETPPID,
    P1_READ,
    P1_WRITE,
    P2_READ,
    P2_WRITE,
    XFERSIZE,
    Entry,
    pipe_alone,
    pipe_round_trip,
)
from ..kernel.idle import IdleTask
from ..kernel.ppc32 import ctx_to_vsid
from ..kernel.ppc603 import tlb_miss_summary
from ..kernel.ppc604 import PPC604
from ..kernel.vm import PAGE_SIZE
from ..kernel.workloads import Image
from ..present import data
from ..present.claims import EFFECT, QUANTITY, Claim, not_modelled
from ..run import profiler
from ..run import reuse as kept_runs
from ..run import sweep
from ..run.machine import Machine

MACHINES = ("603 hash table", "603 page table", "604")
FLUSHES = {"search": "every page searched (1998)",
           "context": "new context above 20 pages (2.2.0)",
           "hashpte": "only pages with _PAGE_HASHPTE (2.4)"}
# a process with nothing of its own to touch: the experiments map what they use
BARE = Image("bare", text_pages=1, data_pages=0, bss_pages=0, text_touched=0,
             data_written=0, bss_written=0, stack_written=0)
# the ledger rows that make up the TLB-miss path of each MMU: the 603's handler runs (a
# hash-table miss's run goes on into DataAccess and hash_page: hash_miss_603) and their
# exception entries; the 604's searches, and on a hash miss its prologue (a fixed cost)
# and hash_page
MISS_ROWS = ("tlb_miss_603", "hash_miss_603", "tlb_miss_entry", "table_search", "hash_page",
             "hash_fault_entry")


def kernel(machine, caches=(), **options):
    """A Kernel on a new machine of one of ``MACHINES`` (``caches``: cache levels replaced,
    as Machine takes them, e.g. ``["L1D:32768:4:32"]``; options: the backend's, e.g.
    ``flush`` for the 604)."""
    if machine == "604":
        return Kernel(Machine("ppc604", caches=caches), arch=PPC604, **options)
    if machine in ("603 hash table", "603 page table"):
        reload = "hash" if machine == "603 hash table" else "pagetable"
        return workloads.make_kernel(profile="ppc603e", reload=reload, caches=caches,
                                     **options)
    raise ValueError(f"machine must be one of {MACHINES}, not {machine!r}")


def miss_summary(spent):
    """The TLB-miss figures of a ledger (e.g. ``Ledger.since``): TLB misses the accesses saw,
    cycles of the miss path (603: the handlers; hash table: plus the exception prologue and
    hash_page of each hash miss; 604: the hardware searches, and the same on a hash miss),
    cycles per miss, and the hash-table hit rate on a TLB miss (None without a table)."""
    rows, counts = spent.rows, spent.counts
    misses = counts.get("tlb_misses", 0)
    cycles = sum(rows[name][2] for name in MISS_ROWS if name in rows)
    hits = counts.get("htab_primary_hits", 0) + counts.get("htab_secondary_hits", 0)
    searched = hits + counts.get("htab_misses", 0)
    return {"tlb_misses": misses, "miss_cycles": cycles,
            "cycles_per_miss": cycles / misses if misses else 0.0,
            "htab_hits": hits, "htab_misses": counts.get("htab_misses", 0),
            "htab_hit_rate": hits / searched if searched else None}


def _measure(k, action):
    before = k.ledger.snapshot()
    action()
    return k.ledger.since(before)


def reuse(machine, pages=256, passes=3, access="r", first="w", cold=False, **options):
    """A working set of ``pages`` anonymous pages, first touched (``first`` access: the
    faults), then touched ``passes`` more times in order (``access``), each pass measured.
    256 pages is twice the 604's DTLB and four times the 603's: with LRU and the pages in
    order, every access of a pass misses in the TLB, and finds its translation in the hash
    table or the page table. ``cold``: every cache emptied before each pass (the table's
    lines, and the pages', then come from memory). ``options``: the kernel's (``kernel``),
    e.g. ``FLUSHES_22[machine]`` for 2.2.0's flushes and hash_page. Returns (first-touch
    summary, [summary per pass])."""
    k = kernel(machine, **options)
    p = k.spawn(BARE)
    heap = k.mmap(p, pages * PAGE_SIZE, "rw")
    k.switch_to(p)
    touch = _measure(k, lambda: k.touch_pages(p, heap, pages, first))

    def one_pass():
        if cold:
            k.machine.flush_caches()
        k.touch_pages(p, heap, pages, access)
    runs = [_measure(k, one_pass) for _ in range(passes)]
    return miss_summary(touch), [miss_summary(r) for r in runs]


def miss_costs(pages=256, passes=3, flushes=None):
    """Cycles per TLB miss on each MMU, from ``reuse``: the first reuse pass (the hash table's
    or page table's lines partly cold: the first touches' clear_page passed through the
    cache since) and the last (warm, steady state). ``flushes``: each machine's kernel
    options (``FLUSHES_22``: the 1998 kernels'), else the backends' defaults. A DataFrame,
    one row per machine."""
    rows = []
    for machine in MACHINES:
        _, runs = reuse(machine, pages, passes, **(flushes or {}).get(machine, {}))
        rows.append({"machine": machine, "tlb_misses_per_pass": runs[-1]["tlb_misses"],
                     "cycles_per_miss_first_pass": runs[0]["cycles_per_miss"],
                     "cycles_per_miss_steady": runs[-1]["cycles_per_miss"],
                     "htab_hit_rate": runs[-1]["htab_hit_rate"]})
    return pd.DataFrame(rows).set_index("machine")


def hash_miss_cost(machine, cold=False, **options):
    """Cycles of one TLB miss whose translation is in the Linux page table but not in the
    hash table (its HPTE gone, as after an eviction): the search that fails (604: hardware;
    603: the handler), the exception prologue, hash_page, and the retried miss (603: all
    guest code; 604: the prologue a fixed cost). ``cold``:
    every cache emptied first (the table, the handler's code and data from memory).
    ``options``: the kernel's (``kernel``), e.g. ``flush="context"`` for 2.2.0's hash_page
    on the 604, which does not search for the lost HPTE first (no _PAGE_HASHPTE)."""
    k = kernel(machine, **options)
    p = k.spawn(BARE)
    heap = k.mmap(p, PAGE_SIZE, "rw")
    k.touch(p, heap, "w")
    if machine not in ("603 hash table", "604"):
        raise ValueError(f"{machine} has no hash table")
    k.machine.write(_hpte_address(k, p.mm, heap), bytes(8))      # the HPTE is gone ...
    if machine == "604":                                        # ... and the TLB entry
        k.arch._tlbie(heap)
    else:
        k.arch.flush_tlb_page(p.mm, heap)
    if cold:
        k.machine.flush_caches()
    spent = _measure(k, lambda: k.touch(p, heap, "r"))
    return miss_summary(spent)


def _hpte_address(k, mm, address):
    secondary, slot = k.arch.find_hpte(mm, address)[:2]
    vsid = ctx_to_vsid(mm.context, address)
    h = (mmu.secondary_hash if secondary else mmu.primary_hash)(vsid, address)
    return mmu.pteg_address(k.arch.sdr1, h) + 8 * slot


def hit_rate_by_reuse(machine="604", pages=256, passes=(1, 2, 4, 8, 16, 49), **options):
    """The hash-table hit rate on a TLB miss when each page of a working set larger than the
    TLB is first touched and then reused: for each count of passes P (the first touches plus
    P - 1 reuse passes), the rate over all of them. ``options``: the kernel's (``reuse``).
    A DataFrame indexed by P."""
    first, runs = reuse(machine, pages, max(passes) - 1, **options)
    rows = []
    for n in passes:
        used = [first] + runs[:n - 1]
        hits = sum(s["htab_hits"] for s in used)
        misses = sum(s["htab_misses"] for s in used)
        rows.append({"passes": n, "tlb_misses": sum(s["tlb_misses"] for s in used),
                     "htab_hits": hits, "htab_misses": misses,
                     "htab_hit_rate": hits / (hits + misses)})
    return pd.DataFrame(rows).set_index("passes")


# Linux 2.2.0's own TLB flushes (the kernel the paper measured): flush_tlb_range gives the mm
# a new context above 20 pages, else flushes page by page (flush_hash_page: with a hash
# table its search, on the 603 without one a tlbie); flush_tlb_mm a new context.
# ``FLUSHES_24`` is 2.4's (the 603's tlbia, the scan of _PAGE_HASHPTE), which notebook 02
# shows beside it.
FLUSHES_22 = {"603 page table": {"tlb_flush": "context"}, "604": {"flush": "context"},
              "603 hash table": {"tlb_flush": "context"}}
FLUSHES_24 = {"603 page table": {"tlb_flush": "tlbia"}, "604": {"flush": "hashpte"},
              "603 hash table": {"tlb_flush": "scan"}}


def workloads_table(kinds=("fork", "exec"), mmap_size=1 << 20, flushes=FLUSHES_22):
    """The kernel model's LMBench workloads on the three MMUs: cycles per iteration and the
    TLB-miss figures, with each machine's kernel flushing as ``flushes`` says (2.2.0's by
    default), and lat_mmap of ``mmap_size`` (None: not run). A DataFrame (workload,
    machine)."""
    mmap = ("mmap",) if mmap_size is not None else ()
    rows = [workload_row(machine, kind, mmap_size, flushes[machine])
            for machine in MACHINES for kind in kinds + mmap]
    return pd.DataFrame(rows).set_index(["workload", "machine"])


@kept_runs.unit
def workload_row(machine, kind, mmap_size, flush):
    """One row of ``workloads_table``: one workload on one machine's kernel (``flush``: its
    flush options); a run of its own (emu.run.reuse)."""
    with estimates.setup_only():            # its boot: before the measurement
        k = kernel(machine, **flush)
    r = workloads.lat_mmap(mmap_size, kernel=k) if kind == "mmap" else \
        workloads.lat_proc(kind, kernel=k)
    s = miss_summary(r.ledger) if machine == "604" else tlb_miss_summary(r)
    return {"workload": f"lat_mmap {mmap_size >> 20} MB" if kind == "mmap"
            else f"lat_proc {kind}", "machine": machine, "cycles": r.cycles,
            "tlb_misses": s["tlb_misses"], "cycles_per_miss": s["cycles_per_miss"],
            "htab_misses": r.counts.get("htab_misses", 0),
            "hash_page_refused": r.counts.get("hash_page_refused", 0),
            "htab_hits": r.counts.get("htab_primary_hits", 0) +
            r.counts.get("htab_secondary_hits", 0),
            "htab_hit_rate": s["htab_hit_rate"]}


FLUSH_ROWS = ("flush_range_search", "flush_hash_pages", "set_context_22", "flush_range_pmd")


def mmap_point(size, flush, caches=(), htab_size=None):
    """One run of ``mmap_latency``: LMBench lat_mmap of ``size`` bytes on a new 604 kernel
    with the range flush ``flush`` (``caches``, ``htab_size``: the machine's cache levels
    replaced and the hash table's size, as ``kernel`` takes them)."""
    with estimates.setup_only():            # its boot: before the measurement
        k = kernel("604", flush=flush, caches=caches, htab_size=htab_size)
    r = workloads.lat_mmap(size, kernel=k)
    return {"pages": size // PAGE_SIZE, "cycles": r.cycles,
            "flush_cycles": int(sum(r.ledger.rows[n][2] for n in FLUSH_ROWS
                                    if n in r.ledger.rows)),
            "stores": r.counts.get("faults", 0),
            "pages_searched": r.counts.get("pages_searched", 0),
            "hpte_invalidated": r.counts.get("hpte_invalidated", 0),
            "new_contexts": r.counts.get("new_contexts", 0)}


def mmap_latency(sizes=(64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20), flushes=FLUSHES,
                 caches=(), htab_size=None, executor=None):
    """LMBench lat_mmap (1.11: map a cached file, store every 16 KB over the first tenth,
    unmap) on the 604 with each range flush: cycles per iteration and those of the flush
    alone. A DataFrame (size, flush). Each run is a kernel of its own, so the runs go
    through emu.run.sweep (``executor``: where, see there)."""
    points = [{"size": size, "flush": flush, "caches": tuple(caches), "htab_size": htab_size}
              for size in sizes for flush in flushes]
    df = sweep.frame(mmap_point, points, executor=executor, description="lat_mmap")
    df.insert(0, "size_kb", df["size"] // 1024)
    return df.drop(columns=["size", "caches", "htab_size"]).set_index(["size_kb", "flush"])


def mmap_latency_603(sizes=(1 << 20, 8 << 20), flushes=("search", "context")):
    """LMBench lat_mmap on the 603 searching a hash table, flushing as Linux 2.1.51
    (``search``: every page of the range searched) or 2.2.0 (``context``): cycles per
    iteration and pages searched. A DataFrame (size_kb, flush)."""
    rows = []
    for size in sizes:
        for flush in flushes:
            r = workloads.lat_mmap(size, kernel=kernel("603 hash table", tlb_flush=flush))
            rows.append({"size_kb": size >> 10, "flush": flush, "cycles": r.cycles,
                         "pages_searched": r.counts.get("pages_searched", 0),
                         "new_contexts": r.counts.get("new_contexts", 0)})
    return pd.DataFrame(rows).set_index(["size_kb", "flush"])


# node6's kernel compile, with the kernel mapped by PTEs and by the BATs: the paper's counts
NODE6_COUNTS = {"tlb_ptes": "TLB misses on the kernel compile, kernel mapped by PTEs (average)",
                "tlb_bats": "TLB misses on the kernel compile, kernel mapped by the BATs (average)",
                "htab_ptes": "hash-table misses on the kernel compile, kernel mapped by PTEs "
                             "(average)",
                "htab_bats": "hash-table misses on the kernel compile, kernel mapped by the BATs "
                             "(average)",
                "wall_ptes": "kernel compile wall-clock time, kernel mapped by PTEs"}
_SCALE = {"million": 1e6, "thousand": 1e3, "minutes": 60.0}


def node6_counts():
    """node6's kernel-compile counts in plain units (misses, seconds)."""
    nodes = data.load("dougan1999_node_numbers").set_index("quantity")
    return {key: float(nodes.loc[q, "value"]) * _SCALE[nodes.loc[q, "unit"].split()[0]]
            for key, q in NODE6_COUNTS.items()}


def bats_compile_saving():
    """What the misses node6 counted on the kernel compile (with the 604's monitor, node4)
    can explain of its 20% shorter
    wall clock with the kernel in the BATs: the TLB misses the BATs saved, each a hardware
    search of the hash table with its lines out of the cache (``reuse``, ``cold``: the
    model's dearest search that finds its PTE), and the hash-table misses saved, each a
    failed search, the hash-miss interrupt and hash_page from cold caches
    (``hash_miss_cost``, 2.2.0's hash_page), as a share of the compile's 10 minutes at the
    profile's clock (Table 3's 133 MHz 604; the paper gives no clock for the compile). Also the same with
    the paper's own per-miss figures (node5: up to 120 cycles a search, at least 91 more
    for the interrupt, hash_page itself not counted). Percentages of the 10 minutes."""
    counts = node6_counts()
    nodes = data.load("dougan1999_node_numbers").set_index("quantity")["value"]
    search = reuse("604", pages=256, passes=1, cold=True)[1][0]["cycles_per_miss"]
    # the compile ran a 1998 kernel: 2.2.0's hash_page, which does not search for the lost
    # HPTE first (no _PAGE_HASHPTE); the search that hits is the same in every kernel
    hash_miss = hash_miss_cost("604", cold=True, flush="context")["cycles_per_miss"]
    paper_search = float(nodes["hardware TLB reload when the PTE is in the hash table (up to)"])
    paper_interrupt = float(nodes["cycles added by the hash-table miss interrupt to invoke "
                                  "its handler (at least)"])
    tlb_saved = counts["tlb_ptes"] - counts["tlb_bats"]
    htab_saved = counts["htab_ptes"] - counts["htab_bats"]
    clock = hw_profile.load("ppc604").clock_mhz
    wall_cycles = counts["wall_ptes"] * clock * 1e6

    def share(per_search, per_hash_miss):
        cycles = (tlb_saved - htab_saved) * per_search + htab_saved * per_hash_miss
        return cycles, 100 * cycles / wall_cycles
    cycles, percent = share(search, hash_miss)
    paper_cycles, paper_percent = share(paper_search, paper_search + paper_interrupt)
    return {"tlb_misses_saved": tlb_saved, "htab_misses_saved": htab_saved,
            "search_cycles": search, "hash_miss_cycles": hash_miss, "clock_mhz": clock,
            "wall_cycles": wall_cycles, "saved_cycles": cycles, "saved_percent": percent,
            "paper_search_cycles": paper_search, "paper_interrupt_cycles": paper_interrupt,
            "paper_saved_cycles": paper_cycles, "paper_saved_percent": paper_percent}


#: the build the "about 20%" runs: the book's build workload (emu.kernel.gcc, the scale the
#: other chapters run: its programs at 1/16 of their estimated sizes, one step measured
#: after one that fills the page cache), 2.2.0's flush (the paper's kernel)
BUILD_SCALE, BUILD_STEPS, BUILD_WARMUP = gcc.SCALE, 1, 1


@kept_runs.unit
def bats_build(bats, machine="603 page table"):
    """The book's kernel-build workload (make -> sh -c -> gcc's driver and its passes,
    then fixdep, rm and mv: 2.5.66's Kbuild rule, emu.kernel.gcc; vfork as GNU make and
    gcc do) on one of ``MACHINES`` under 2.2.0's flush (the 603 walking the page table by
    default; the 604 or the hashed 603), with the kernel in the BATs or (``bats=False``,
    2.2's ``nobats``) through the TLB: the kernel's guest routines (clear_page, copy_page,
    the cache flushes, the TLB flushes) then run translated and take TLB misses of their
    own, in the classes the user's pages use (emu.kernel.ppc603; on the 604 through the
    hash table, a kernel page without an HPTE taking the DSI / ISI and hash_page:
    emu.kernel.ppc604). One compile step's cycles, the user's and the kernel's TLB misses
    and hash-table misses (the hashed MMUs'; the 603 walking the page table has none)."""
    driver, passes = gcc.compiler(BUILD_SCALE)
    with estimates.setup_only():            # its boot: before the measurement
        k = kernel(machine, bats=bats, **({"flush": "context"} if machine == "604" else
                                          {"tlb_flush": "context"}))
    r = workloads.kernel_compile(
        steps=BUILD_STEPS, warmup=BUILD_WARMUP, kernel=k, program=driver, passes=passes,
        parent_image=gcc.make_image(BUILD_SCALE), spawn="vfork",
        shell=gcc.kbuild_shell(driver.libs, BUILD_SCALE))
    return {"bats": bats, "cycles": int(r.cycles),
            "user_tlb_misses": int(r.counts.get("tlb_misses", 0)),
            "kernel_tlb_misses": int(r.counts.get("kernel_tlb_misses", 0)),
            "user_htab_misses": int(r.counts.get("htab_misses", 0)),
            "kernel_htab_misses": int(r.counts.get("kernel_htab_misses", 0)),
            # of the kernel's: the C paths' PTE loads and stores (emu.kernel.ppc604)
            "kernel_c_tlb_misses": int(r.counts.get("kernel_c_tlb_misses", 0)),
            # the C paths' fixed costs (the build's programs do no user work: the rest is
            # the kernel's guest routines and the MMU's hardware)
            "c_path_cycles": int(r.breakdown["cycles"][r.breakdown["kind"] == "fixed"].sum()),
            # the user's miss path: the 603's handler runs that loaded an entry, or the
            # 604's table searches
            "miss_handler_cycles": _rows_cycles(r, ("tlb_miss_603", "table_search")),
            # a hash-table miss's own work: on the 603 the handler's failed search, the
            # DataAccess prologue and hash_page (guest code, one run); on the 604 the
            # prologue (a fixed cost) and hash_page; and the flushes (the search of a
            # range, or the 603's tlbie)
            "hash_page_cycles": _rows_cycles(r, ("hash_fault_entry", "hash_page",
                                                 "hash_miss_603")),
            "flush_cycles": _rows_cycles(r, PARTS["flush"]),
            # each path charged from the fixed-cost table: {row: (calls, cycles)}, the most
            # called first (the paths whose data takes no TLB or cache miss)
            "c_paths": _fixed_paths(r)}


def _fixed_paths(result):
    """A run's paths charged from the fixed-cost table (emu.kernel.costs): {row: (calls,
    cycles)}, the most called first (ties: the dearer first)."""
    fixed = result.breakdown[result.breakdown["kind"] == "fixed"]
    order = fixed.sort_values(["calls", "cycles"], ascending=False)
    return {row: (int(calls), int(cycles))
            for row, calls, cycles in zip(order.index, order["calls"], order["cycles"])}


def _rows_cycles(result, rows):
    """The cycles a run's ledger charged to ``rows``, summed (a row not charged: 0)."""
    return int(sum(result.breakdown["cycles"].get(row, 0) for row in rows))


def bats_build_saving(machine="604"):
    """The build's time saved by mapping the kernel with the BATs (``bats_build`` with and
    without, by default on the 604, node6's machine), % of the build without them, with
    both runs' counts."""
    with_bats, without = bats_build(True, machine), bats_build(False, machine)
    return {"saved_percent": 100 * (without["cycles"] - with_bats["cycles"]) /
            without["cycles"], "with_bats": with_bats, "without_bats": without}


def hash_table_build_saving():
    """node10's kernel compile "reduced by 5%": the book's build workload on the 603 with
    the kernel in the BATs (``bats_build``), its miss handlers searching a hash table (Linux/PPC
    before the paper) against walking the Linux page table (the paper's handlers, no hash
    table); % of the hashed build's cycles saved, with both runs' counts."""
    hashed, walked = bats_build(True, "603 hash table"), bats_build(True, "603 page table")
    return {"saved_percent": 100 * (hashed["cycles"] - walked["cycles"]) / hashed["cycles"],
            "hash_table": hashed, "page_table": walked}


# ------------------------------------------------------------------ the scorecard

PAGES = {"published": "notebooks/dougan1999/01-published",
         "reload": "notebooks/dougan1999/02-software-reload",
         "mmap": "notebooks/dougan1999/03-mmap-latency",
         "syscalls": "notebooks/dougan1999/04-system-calls",
         "idle": "notebooks/dougan1999/05-idle-task",
         "tlb": "notebooks/dougan1999/06-kernel-in-the-tlb"}
#: Table 1's columns the model runs: (column, LMBench program, the model's cost a call)
TABLE1_RUNS = {"ctxsw_us": ("context switch", "lat_ctx"),
               "pipe_latency_us": ("pipe latency", "lat_pipe"),
               "pipe_bandwidth_mb_s": ("pipe bandwidth", "bw_pipe")}


def claims():
    """The chapter's claims for the scorecard (emu.present.claims), from the chapter's own runs:
    the mmap latency gain (notebook 03: 8 MB, the 1998 search against a new context), the
    603 against the 604 and against itself with the hash table (notebooks 02 and 04:
    lat_proc exec beside Table 1's process start; lat_ctx, lat_pipe and bw_pipe beside its
    other columns), Table 3's Linux/PPC row (notebook 04: LMBench's loops through the 2.2.0
    entry path on the 604), the idle task's page clearing (notebook 05: the next task's
    cycles on the 603, beside node13) and Table 3's unoptimized / optimized ratios
    (notebook 06: ``CONFIGURATIONS`` on the 604), node6's BATs rows and node10's 5% (the
    build workload, notebooks 06 and 02); Table 1's file reread (not modelled) and the
    hash-table hit rate of lat_proc exec on the 604 (2.2.0)."""
    text = data.load("dougan1999_text_numbers").set_index("quantity")
    table1 = data.load("dougan1999_table1_lmbench").set_index("system")
    big = 8 << 20
    mm = mmap_latency(sizes=(big,), flushes={f: FLUSHES[f] for f in ("search", "context")})
    cycles = mm["cycles"].unstack("flush").loc[big >> 10]
    # lat_proc exec alone (its lat_mmap rows are notebook 02's, unread here)
    execs = workloads_table(kinds=("exec",), mmap_size=None).xs("lat_proc exec",
                                                                 level="workload")
    procs = execs["cycles"]
    # 2.2.0 preloads nothing: a first touch misses the table before its fault and after it
    firsts = {m: (int(execs.loc[m, "htab_misses"]), int(execs.loc[m, "hash_page_refused"]),
                  int(execs.loc[m, "tlb_misses"])) for m in ("603 hash table", "604")}
    pstart = table1["pstart_s"]
    table3 = data.load("dougan1999_table3_lmbench").set_index("os")
    null = null_syscall("604")
    ctx, pipe, bw = lat_ctx("604"), lat_pipe("604"), bw_pipe("604")
    linux = table3.loc["Linux/PPC"]
    node13 = data.load("dougan1999_node13_idle_task")
    idle = idle_task_table(configs=("cached, used", "uncached, not used"))["cycles_vs_none"]
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
              source="Table 3 (the model: Linux 2.1.51's exception entry and exit, the "
                     "kernel mapped by PTEs through the hash table and flushes searching it, "
                     "against 2.2.0 with the kernel in a BAT; ppc604 profile)",
              reason=f"2.1.51's entry path is 2.2.0's shape: a null call runs "
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
    for column, (name, program) in TABLE1_RUNS.items():
        # bandwidth is bytes per time: the ratio of times is the inverse of the cycles'
        def model(a, b):
            ratio = runs[a][program]["cycles"] / runs[b][program]["cycles"]
            return 1 / ratio if program == "bw_pipe" else ratio
        for label, (x, y), (mx, my) in (
                ("603 without / with the hash table", (n, h), ("603 page table",
                                                           "603 hash table")),
                ("603 (no hash table) / 604", (n, f), ("603 page table", "604"))):
            table1_rows.append(Claim(
                "Dougan 1999", f"{label}: {name}", kind=EFFECT, neutral=1, digits=3, unit="",
                published=float(table1.loc[x, column] / table1.loc[y, column]),
                published_from=(table1.loc[x, column], table1.loc[y, column]),
                emulated=model(mx, my), page=PAGES["syscalls"],
                source=f"Table 1, node10 (the model: LMBench 1.x {program} through the 2.2.0 "
                       f"entry path, cycles at one clock)",
                reason="the paper's machines differ in clock (180 against 185 MHz) and "
                       "board; the model's loops run with the same clock and memory, in "
                       "steady state, where a TLB reload is rare"))
    return [
        Claim("Dougan 1999", "mmap latency: searching every page / avoiding the search",
              kind=EFFECT,
              published=float(text.loc["mmap() latency improvement from avoiding hash-table "
                                       "searches", "value"]),
              emulated=cycles["search"] / cycles["context"], unit="times", digits=1,
              neutral=1, source="Analysis section (the model: lat_mmap of 8 MB on the 604)",
              page=PAGES["mmap"],
              reason="the model's flush gap is thousands of times, but lat_mmap's own work "
                     "grows with the size too, so the whole benchmark levels off"),
        Claim("Dougan 1999", "603 without / with the hash table: process start",
              kind=EFFECT, published=pstart[n] / pstart[h], published_from=(pstart[n],
                                                                             pstart[h]),
              emulated=procs["603 page table"] / procs["603 hash table"], digits=3,
              neutral=1, unit="", page=PAGES["reload"],
              source="Table 1, node10 (the model: lat_proc exec cycles)",
              stand_in="lat_proc exec for LMBench's process start (the model runs LMBench "
                       "2's lat_proc, not 1.x's process-start test)",
              reason=f"most of exec's {firsts['603 hash table'][2]} TLB misses are first "
                     f"touches, which the hash table makes dearer: "
                     f"{firsts['603 hash table'][0]} failed searches, each running on into the "
                     f"DSI's prologue and 2.2.0's hash_page, guest code "
                     f"({firsts['603 hash table'][1]} refused, no PTE "
                     f"yet: the fault follows and, since 2.2.0 preloads nothing, the retried "
                     f"access misses the table again)"),
        Claim("Dougan 1999", "603 (no hash table) / 604: process start",
              kind=EFFECT, published=pstart[n] / pstart[f], published_from=(pstart[n],
                                                                             pstart[f]),
              emulated=procs["603 page table"] / procs["604"], digits=3, neutral=1, unit="",
              source="Table 1, node10 (the model: lat_proc exec cycles, same clock)",
              stand_in="lat_proc exec for LMBench's process start, as above",
              page=PAGES["reload"],
              reason=f"the model's 604 pays a failed search, the hash-miss exception and "
                     f"hash_page before each first touch's fault and again after it (2.2.0 "
                     f"preloads nothing: {firsts['604'][0]} hash misses in "
                     f"{firsts['604'][2]} TLB misses), where the 603 walks the page table and "
                     "faults; a dearer 604 search would widen the gap, not close it, so what "
                     "the model lacks is elsewhere (its dispatch groups are static, up to "
                     "four a clock on the 604 and two on the 603e, and both run at one "
                     "clock)"),
        Claim("Dougan 1999", "null system call, Linux/PPC (133 MHz 604)", kind=QUANTITY,
              published=float(table3.loc["Linux/PPC", "null_syscall_us"]),
              emulated=null["us_per_call"], unit="us", digits=2, page=PAGES["syscalls"],
              source="Table 3 (the model: lat_syscall null through the 2.2.0 entry path, "
                     "ppc604 profile at its 133 MHz)",
              reason=f"{null['instructions_per_call']:,.0f} instructions a call; its four "
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
                     "the task that runs after 96 pages are cleared, 8 KB working set)",
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
    ] + table1_rows + table3_rows + _bats_claims(text) + [_hash_table_claim()] + \
        _not_modelled(table1, not_modelled, EFFECT)


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


#: the sync; isync pairs of one null call on the 2.2.0 path (routines/ppc32/entry_22.S: one
#: before transfer_to_handler's rfi, three in int_return)
NULL_CALL_SYNC_PAIRS = 4


#: the sync instructions of one lat_pipe round trip on the 2.2.0 path, by hand: four system
#: calls (one in transfer_to_handler, three in int_return: 16), two switches (_switch22's
#: three and int_return's three: 12), and schedule's and wake_up's interrupt masking
#: (routines/ppc32/sched_22.S: sleep_on22 three, schedule22 four, wake_up_process22 two,
#: twice each: 18); tests/papers/test_dougan1999_entry.py counts them in a run
PIPE_TRIP_SYNCS, SCHED_TRIP_SYNCS = 46, 18


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


def _not_modelled(table1, not_modelled, effect):
    """Table 1's results the model cannot run."""
    out = []
    for label, x, y in (("603 without / with the hash table", "603 180MHz (no htab)",
                         "603 180MHz (htab)"),
                        ("603 (no hash table) / 604", "603 180MHz (no htab)", "604 185MHz")):
        out.append(not_modelled(
            "Dougan 1999", f"{label}: file reread bandwidth", kind=effect, neutral=1, unit="",
            published=float(table1.loc[x, "file_reread_mb_s"] / table1.loc[y, "file_reread_mb_s"]),
            published_from=(table1.loc[x, "file_reread_mb_s"], table1.loc[y, "file_reread_mb_s"]),
            source="Table 1, node10", page=PAGES["reload"],
            missing="the kernel model has no file system or page cache reads"))
    return out


#: Published numbers of the chapter's data that are context, not results
CONTEXT = {
    "dougan1999_table3_machines": "the machines",
    ("dougan1999_table3_lmbench", "other"): "other systems, for comparison",
    ("dougan1999_table1_lmbench", "604 200MHz"): "a faster 604, for comparison",
    ("dougan1999_table1_lmbench", "mhz"): "the clocks",
    ("dougan1999_table1_lmbench", "cpu"): "the processor's name",
    ("dougan1999_text_numbers", "604 against 603"): "the processors' sizes (the profiles' "
                                                     "inputs)",
    ("dougan1999_node_numbers", "cycles"): "the processors' costs (the profiles' inputs)",
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


# ------------------------------------------------------------------ section 4: system calls

def tlb_misses(events):
    """A run's TLB misses: the 603's miss exceptions, or the 604's ITLB and DTLB misses
    (each a hardware table search; emu.hw.tlb604)."""
    return events.get("tlb_miss_exceptions", 0) + events.get("itlb_misses", 0) + \
        events.get("dtlb_misses", 0)


@kept_runs.unit
def null_syscall(machine, calls=(10, 20), bats=True, version="2.2.0", **options):
    """LMBench's lat_syscall null on the kernel model (emu.kernel.entry): a user program
    calls getppid in a loop through the 2.2.0 entry path, one warm-up run (BENCH's), then
    runs of ``calls`` iterations; the cost of one call is the difference of the two runs
    over the difference of their calls (the program's start and exit cancel). Returns
    cycles and instructions per call, microseconds at the profile's clock, and the
    warm-up's faults and TLB misses. ``version``: the kernel whose entry and exit run
    (2.2.0's, or 2.1.51's: emu.kernel.entry.VERSIONS)."""
    with estimates.setup_only():         # its start and warm-up: the runs do not see them
        k = kernel(machine, **options)
        entry = Entry(k, bats=bats, version=version)
        p = entry.spawn(LAT_SYSCALL_NULL, "lat_syscall")
        warm = entry.run(p, ELF_BASE, 1)
    runs = [entry.run(p, ELF_BASE, n) for n in calls]
    span = calls[1] - calls[0]
    cycles = (runs[1].cycles + runs[1].host_cycles - runs[0].cycles - runs[0].host_cycles) / span
    clock = k.machine.profile.clock_mhz
    return {"machine": machine, "bats": bats, "cycles_per_call": cycles,
            "instructions_per_call": (runs[1].instructions - runs[0].instructions) / span,
            "us_per_call": cycles / clock, "clock_mhz": clock,
            "profile": k.machine.profile.name,
            "warmup_faults": warm.faults,
            "warmup_tlb_misses": tlb_misses(warm.events),
            "steady_tlb_misses": tlb_misses(runs[1].events),
            "bat_translations_per_call": (runs[1].events.get("bat_translations", 0) -
                                          runs[0].events.get("bat_translations", 0)) / span}


def cold_null_syscall(machine, bats=True, version="2.2.0", **options):
    """What a cold machine could add to a null call: LMBench's null-call program run for one
    call twice after its warm-up (its faults taken, its kernel HPTEs made), the second time
    with every cache emptied and, on the 604, both TLBs (each miss then a hash-table search
    through the empty caches). The difference of the two runs is the most that the
    caches' and TLBs' state can add to one call, its exit path's misses included (an upper
    bound: LMBench's loop runs its calls back to back). Returns both runs' cycles,
    instructions and TLB misses, and the difference."""
    k = kernel(machine, **options)
    entry = Entry(k, bats=bats, version=version)
    p = entry.spawn(LAT_SYSCALL_NULL, "lat_syscall")
    entry.run(p, ELF_BASE, 1)
    warm = entry.run(p, ELF_BASE, 1)
    k.machine.flush_caches()
    if entry.tlb is not None:
        entry.tlb.invalidate_all()
    cold = entry.run(p, ELF_BASE, 1)
    cycles = [r.cycles + r.host_cycles for r in (warm, cold)]
    return {"machine": machine, "bats": bats, "version": version,
            "warm_cycles": cycles[0], "cold_cycles": cycles[1],
            "cold_extra_cycles": cycles[1] - cycles[0],
            "warm_instructions": warm.instructions, "cold_instructions": cold.instructions,
            "warm_tlb_misses": tlb_misses(warm.events),
            "cold_tlb_misses": tlb_misses(cold.events)}


def null_call_breakdown(machine, calls=(10, 20), bats=True, version="2.2.0", **options):
    """What one steady null call of ``null_syscall`` is made of: instructions, cycles, the
    cycles of its ``NULL_CALL_SYNC_PAIRS`` sync; isync pairs at the profile's costs, the
    rest of its cycles, its L1 I and L1 D misses, line reads from memory and TLB misses
    (each per call, the difference of runs of ``calls``, as ``null_syscall``)."""
    k = kernel(machine, **options)
    entry = Entry(k, bats=bats, version=version)
    p = entry.spawn(LAT_SYSCALL_NULL, "lat_syscall")
    entry.run(p, ELF_BASE, 1)
    spent, runs = [], []
    for n in calls:
        before = k.ledger.snapshot()
        runs.append(entry.run(p, ELF_BASE, n))
        spent.append(k.ledger.since(before).traffic)
    span = calls[1] - calls[0]
    a, b = runs
    costs = k.machine.profile.costs["mnemonics"]
    cycles = (b.cycles + b.host_cycles - a.cycles - a.host_cycles) / span
    syncs = NULL_CALL_SYNC_PAIRS * (costs["sync"] + costs["isync"])

    def per_call(key):
        return (spent[1][key] - spent[0][key]) / span
    return {"machine": machine, "version": version, "bats": bats,
            "instructions": (b.instructions - a.instructions) / span, "cycles": cycles,
            "sync_cycles": syncs, "other_cycles": cycles - syncs,
            "l1i_misses": per_call("L1I_misses"), "l1d_misses": per_call("L1D_misses"),
            "memory_reads": per_call("memory_reads"),
            "tlb_misses": (tlb_misses(b.events) - tlb_misses(a.events)) / span,
            "clock_mhz": k.machine.profile.clock_mhz}


def null_syscall_table(calls=(10, 20)):
    """``null_syscall`` on the three MMUs: a DataFrame indexed by machine."""
    return pd.DataFrame([null_syscall(m, calls) for m in MACHINES]).set_index("machine")


def _lmbench_pair(machine, source, bats, version, options, data_pages=1):
    """A new kernel of ``machine`` (``options``: ``kernel``'s) with the 2.2.0 entry (or
    ``version``'s) and ``_pipes_between``'s parent and child running ``source``: (kernel,
    entry, parent). A set-up (``estimates.setup_only``): the fixed costs its spawn and fork
    charge go to the ledger alone, which ``_per_iteration``'s runs do not read."""
    with estimates.setup_only():
        k = kernel(machine, **options)
        entry = Entry(k, bats=bats, version=version)
        return k, entry, _pipes_between(entry, source, data_pages)


def _pipes_between(entry, source, data_pages=1):
    """A parent running ``source`` with two pipes on descriptors 3-6 (emu.kernel.entry) and
    its child forked at the same program with r3 = 1."""
    parent = entry.spawn(source, "lmbench", data_pages=data_pages)
    (r1, w1), (r2, w2) = entry.pipe(), entry.pipe()
    for fd, f in ((P1_READ, r1), (P1_WRITE, w1), (P2_READ, r2), (P2_WRITE, w2)):
        entry.install(parent, fd, f)
    entry.fork(parent, ELF_BASE, 1)
    return parent


def _per_iteration(entry, process, counts, *args_before):
    """Runs of ``counts`` iterations, after a warm-up run of ``counts[0]`` (the first
    pages' faults, and the entries the processes load on their first pass through their
    loop: both timed runs then start alike): cycles (guest and the C paths charged from
    the fixed-cost table) and instructions per iteration, by difference, and TLB misses.
    The warm-up is set-up (``estimates.setup_only``): a fixed cost charged in the timed
    runs is read there, one charged only before them cannot change them."""
    with estimates.setup_only():
        entry.run(process, ELF_BASE, *args_before, counts[0])
    a, b = (entry.run(process, ELF_BASE, *args_before, n) for n in counts)
    span = counts[1] - counts[0]
    return {"cycles": (b.cycles + b.host_cycles - a.cycles - a.host_cycles) / span,
            "guest_cycles": (b.cycles - a.cycles) / span,
            "fixed_cycles": (b.host_cycles - a.host_cycles) / span,
            "instructions": (b.instructions - a.instructions) / span,
            "tlb_misses": (tlb_misses(b.events) - tlb_misses(a.events)) / span}


#: Round trips of lat_pipe's 1-byte token and of lat_ctx's 4-byte one (its warm-up, then
#: the two runs whose difference is measured). 2.2.0's pipe_read never moves an emptied
#: pipe's start back to the page's first byte (fs/pipe.c 66-69 at 2.2.0; later kernels'
#: "cache behaviour optimization" does), so each token moves along the pipe's page and a
#: round trip's cost depends on where in the page it falls: LMBench's long loops average
#: over it. Measured on the 604 and both 603s, 2.2.0 and 2.1.51, with and without BATs
#: (session 25): lat_pipe at (32, 160) within 0.8% of (2048, 4096) (the 604: 3,914.6
#: against 3,934.8 cycles; (2, 4) gave 4,094.0, (16, 144) 4,032.3; (128, 256), at twice
#: the trips, within 0.4%), lat_ctx at (32, 64) within 0.5% of (512, 1024) (1,106.0
#: against 1,108.6; (5, 10) gave 1,372.0, its pipe-alone overhead not yet steady).
#: tests/papers/test_dougan1999_entry.py checks both on the 604.
PIPE_TRIPS, CTX_TRIPS = (32, 160), (32, 64)


@kept_runs.unit
def lat_pipe(machine, counts=PIPE_TRIPS, size=1, bats=True, version="2.2.0", **options):
    """LMBench lat_pipe (1.x): one round trip of ``size`` bytes between two processes
    through two pipes (two writes, two reads, two context switches through _switch22):
    cycles and microseconds at the profile's clock, per round trip over ``counts``
    (``PIPE_TRIPS``: long enough for the average LMBench's loop takes)."""
    k, entry, parent = _lmbench_pair(machine, pipe_round_trip(size), bats, version, options)
    out = _per_iteration(entry, parent, counts, 0)
    out["us"] = out["cycles"] / k.machine.profile.clock_mhz
    return {"machine": machine, "bats": bats, **out}


@kept_runs.unit
def lat_ctx(machine, counts=CTX_TRIPS, size=4, bats=True, version="2.2.0", **options):
    """LMBench lat_ctx (1.x, 2 processes, 0 KB): a round trip of the token through the
    ring, halved (two switches), minus the pipe's own cost measured in one process (a write
    and a read, no switch): cycles and microseconds per switch (over ``CTX_TRIPS``)."""
    trip = lat_pipe(machine, counts, size, bats, version, **options)
    k, entry, alone = _lmbench_pair(machine, pipe_alone(size), bats, version, options)
    overhead = _per_iteration(entry, alone, counts, 0)
    clock = k.machine.profile.clock_mhz
    per_switch = trip["cycles"] / 2 - overhead["cycles"]
    return {"machine": machine, "bats": bats, "round_trip_cycles": trip["cycles"],
            "overhead_cycles": overhead["cycles"], "cycles": per_switch,
            "us": per_switch / clock, "tlb_misses_per_switch": trip["tlb_misses"] / 2}


@kept_runs.unit
def bw_pipe(machine, chunks=(1, 2), bats=True, version="2.2.0", **options):
    """LMBench bw_pipe (1.x): a child writes 64 KB chunks into a pipe, the parent reads
    them 64 KB at a time (4 KB per read: the pipe holds one page); MB/s (2^20 bytes) at the
    profile's clock, from the difference of two runs of ``chunks`` chunks. A chunk streams
    64 KB through the 16 KB L1 D, so after the warm-up run every chunk costs the same to the
    cycle: (1, 2) gives (2, 4)'s result exactly (tests/papers/test_dougan1999_entry.py) in
    half the chunks run."""
    k, entry, parent = _lmbench_pair(machine, BW_PIPE, bats, version, options,
                                     data_pages=XFERSIZE // PAGE_SIZE)
    out = _per_iteration(entry, parent, chunks, 0)
    clock = k.machine.profile.clock_mhz
    out["cycles_per_byte"] = out["cycles"] / XFERSIZE
    out["mb_s"] = XFERSIZE * clock * 1e6 / out["cycles"] / (1 << 20)
    return {"machine": machine, "bats": bats, **out}


def table3_emulated(machines=("603 page table", "604"), bats=True, **options):
    """Table 3's four columns on the kernel model: null system call, context switch
    (2 processes, 0 KB), pipe latency and pipe bandwidth, per machine (a DataFrame), the
    kernel in a BAT or (``bats=False``) through the TLB; ``options`` go to ``kernel``."""
    rows = []
    for machine in machines:
        rows.append({"machine": machine, "bats": bats,
                     "null_syscall_us": null_syscall(machine, bats=bats,
                                                     **options)["us_per_call"],
                     "ctx_switch_us": lat_ctx(machine, bats=bats, **options)["us"],
                     "pipe_latency_us": lat_pipe(machine, bats=bats, **options)["us"],
                     "pipe_bandwidth_mb_s": bw_pipe(machine, bats=bats, **options)["mb_s"]})
    return pd.DataFrame(rows).set_index("machine")


# Table 3's two Linux/PPC rows (notebook 06). The optimized kernel: 2.2.0's, the kernel in a
# BAT, the 603 walking the page table, flushes by new context. The unoptimized one: Linux
# 2.1.51 on the PowerMac, before the paper's changes (davej-history's import of 2.1.51pre1:
# arch/ppc/kernel/head.S, arch/ppc/mm/init.c): its own exception entry and exit
# (routines/ppc32/entry_22.S with LINUX_2_1_51), mapin_ram's PTEs for all of RAM and no BAT
# (node6's starting point), on the 604 every flushed page searched for in the hash table,
# and on the 603 the TLB reloaded from the hash table (2.1.51's handlers,
# tlbmiss_603_hash.S) and flushed as 2.1.51 did (tlb_flush="search": every page of a range
# searched, flush_tlb_mm a new context; Table 3's loops flush nothing). Its scheduler and pipe code are 2.2.0's, the same
# algorithms as 2.1.51's.
# Why no older kernel: Table 3 ran on a PowerMac 9500, and PowerMac support entered the tree
# with 2.1.48pre3 together with Paul Mackerras's exception entry (EXCEPTION_PROLOG,
# transfer_to_handler, int_return: 2.1.51's shape). 2.1.16's older entry (rfi, then stmw and
# the FPSCR; _switch's SAVE_FP_REGS) belongs to the PReP-only port up to 2.1.37pre1, whose
# kernel sat in BAT2 (setup.c): not a kernel that ran the 9500 with its kernel in the TLB.
CONFIGURATIONS = {
    ("optimized", "604"): ("604", {"bats": True, "flush": "context"}),
    ("optimized", "603"): ("603 page table", {"bats": True, "tlb_flush": "context"}),
    ("unoptimized", "604"): ("604", {"bats": False, "flush": "search", "version": "2.1.51"}),
    ("unoptimized", "603"): ("603 hash table", {"bats": False, "version": "2.1.51",
                                                "tlb_flush": "search"}),
}


def table3_configurations(configurations=CONFIGURATIONS):
    """Table 3's four columns for each configuration (``CONFIGURATIONS``): a DataFrame
    indexed by (kernel, processor), with the steady TLB misses of a null call and a pipe
    round trip (the 604's: its ITLB and DTLB misses, emu.hw.tlb604)."""
    rows = []
    for (kind, processor), (machine, options) in configurations.items():
        null = null_syscall(machine, **options)
        pipe = lat_pipe(machine, **options)
        rows.append({"kernel": kind, "processor": processor, "machine": machine,
                     "bats": options["bats"], "entry": options.get("version", "2.2.0"),
                     "null_instructions": null["instructions_per_call"],
                     "pipe_instructions": pipe["instructions"],
                     "null_syscall_us": null["us_per_call"],
                     "ctx_switch_us": lat_ctx(machine, **options)["us"],
                     "pipe_latency_us": pipe["us"],
                     "pipe_bandwidth_mb_s": bw_pipe(machine, **options)["mb_s"],
                     "null_tlb_misses": null["steady_tlb_misses"],
                     "pipe_tlb_misses": pipe["tlb_misses"]})
    return pd.DataFrame(rows).set_index(["kernel", "processor"])


def cold_null_table(configurations=CONFIGURATIONS, processor="604"):
    """``cold_null_syscall`` for each kernel of ``configurations`` on ``processor``: a
    DataFrame indexed by kernel (optimized, unoptimized), with the steady call's cycles
    (``null_syscall``) and ``cold_call_us``: a call that pays the whole cold difference, at
    the profile's clock."""
    rows = []
    for (kind, proc), (machine, options) in configurations.items():
        if proc != processor:
            continue
        cold = cold_null_syscall(machine, **options)
        steady = null_syscall(machine, **options)
        rows.append({"kernel": kind, **cold, "steady_cycles": steady["cycles_per_call"],
                     "cold_call_us": (steady["cycles_per_call"] + cold["cold_extra_cycles"])
                     / steady["clock_mhz"]})
    return pd.DataFrame(rows).set_index("kernel")


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
                                  "uia_frame", "uia21_sp",
                                  "InstructionAccess22", "ia_frame", "ia21_sp", "ia_slow",
                                  "hash_kernel22", "hk_none", "hk_out", "fast_return22",
                                  "da_user", "ia_user", "vectors_gap", "vectors_gap_end",
                                  "hash_page_user22",
                                  "hash_page", "hash_page_22", "create_hpte", "add_hash_page",
                                  "itlb_miss_603h", "dtlb_load_miss_603h",
                                  "dtlb_store_miss_603h", "itlb_miss_603k",
                                  "dtlb_load_miss_603k", "dtlb_store_miss_603k"),
    "flush": ("flush_range_search", "flush_hash_page_search", "flush_hash_pages",
              "set_context_22", "tlbia_603", "tlbia_603_next", "tlbie_603"),
    "scheduler and switch": ("schedule22", "sleep_on22", "wake_up22", "wake_up_process22",
                             "goodness22", "_switch22", "sw_segments", "cli22", "sti22",
                             "enable22", "lost_interrupts22"),
    "the call's own work": ("sys_getppid22", "sys_read22", "sys_write22", "sys_rw22",
                            "pipe_read22", "pipe_write22", "copy_from_user22",
                            "copy_to_user22", "memcpy32"),
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
            self.cycles = self.cycles + profiler.instruction_counts(self.machine)[1]
        return run

    def counted(self, process, *args):
        """``run(process, ELF_BASE, *args)`` and its guest cycles by symbol."""
        profiler.count_instructions(self.machine)
        self.cycles = 0
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
               **options):
    """One lat_pipe round trip by part (``PARTS``), or with ``alone`` lat_ctx's overhead
    (a write and a read in one process, no switch), per iteration, as ``_per_iteration``."""
    k = kernel(machine, **options)
    entry = _CountingEntry(k, bats=bats, version=version)
    parent = _pipes_between(entry, pipe_alone(size) if alone else pipe_round_trip(size))
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
        ring = parts_pipe(machine, CTX_TRIPS, size=4, **options)   # lat_ctx's token: 4 bytes
        alone = parts_pipe(machine, CTX_TRIPS, size=4, alone=True, **options)
        switch = {key: ring[key] / 2 - alone[key] for key in ring if key != "clock_mhz"}
        clock = trip["clock_mhz"]
        for column, measured in (("null call", parts_null(machine, **options)),
                                 ("context switch", switch), ("pipe latency", trip)):
            pub = float(published.loc[rows_of[kind], PART_COLUMNS[column]])
            rows.append({"column": column, "kernel": kind, **measured,
                         "published_cycles": pub * clock, "clock_mhz": clock})
    return pd.DataFrame(rows).set_index(["column", "kernel"])


def kernel_tlb_conflict(pages=48, bats=True, machine="603 page table", passes=(10, 20)):
    """The kernel in BATs or in the TLB (2.2's ``nobats``; emu.kernel.entry): a user program
    loads one word from each of ``pages`` data pages, then makes a null system call, over
    and over. Returns TLB misses and cycles per pass in steady state (the difference of
    runs of ``passes``, after a warm-up; the 604's: its table searches), and the
    HPTEs the prologue's hash_page made for the kernel (hashed MMUs without BATs: per pass
    in steady state, and in the warm-up). With BATs the kernel takes no TLB entry; without,
    its code, stack and data pages share the TLB's classes (and the hash table's groups)
    with the user's."""
    source = f"""
_start:
        mr      r30, r3
pass_loop:
        lis     r9, {DATA_BASE >> 16:#x}
        li      r8, {pages}
        mtctr   r8
page_loop:
        lwz     r7, 0(r9)
        addi    r9, r9, {PAGE_SIZE}
        bdnz    page_loop
        li      r0, {NR_GETPPID}
        sc
        addic.  r30, r30, -1
        bne     pass_loop
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
"""
    k = kernel(machine)
    entry = Entry(k, bats=bats)
    p = entry.spawn(source, "tlb_conflict", data_pages=pages)
    entry.run(p, ELF_BASE, passes[0])
    reloads = [entry.kernel_reloads]
    runs = []
    for n in passes:
        runs.append(entry.run(p, ELF_BASE, n))
        reloads.append(entry.kernel_reloads)
    a, b = runs
    span = passes[1] - passes[0]
    misses = (tlb_misses(b.events) - tlb_misses(a.events)) / span
    return {"machine": machine, "pages": pages, "bats": bats,
            "tlb_misses_per_pass": misses,
            "cycles_per_pass": (b.cycles + b.host_cycles - a.cycles - a.host_cycles) / span,
            "instructions_per_pass": (b.instructions - a.instructions) / span,
            "kernel_hptes_per_pass": ((reloads[2] - reloads[1]) - (reloads[1] - reloads[0]))
            / span,
            "kernel_hptes_warmup": reloads[0]}


# ------------------------------------------------------------------ section 5: the idle task

# node13's configurations: (the idle task clears pages, with the cache inhibited, and the
# next page fault takes one of them)
IDLE_CONFIGS = {"no idle clearing": (False, False, False),
                "cached, used": (True, False, True),
                "uncached, not used": (True, True, False),
                "uncached, used": (True, True, True)}
LINE = 32                      # the 603e's (and 604's) cache line


def next_task_source(data_bytes, written_bytes):
    """The task that runs after the idle task (emu.kernel.idle): a process with a working set
    of ``data_bytes`` at DATA_BASE. r3 = 0: write its working set (the pages become its
    own); 1: one pass over it, a load from each cache line; 2: a pass, then a new page (r4:
    ``written_bytes`` stored from its start, the first store taking the anonymous page
    fault), then a second pass."""
    if data_bytes % LINE or not 0 < data_bytes <= 0x7FFF * LINE:
        raise ValueError(f"data_bytes must be a positive multiple of {LINE}, not {data_bytes}")
    if written_bytes % 4 or not 4 <= written_bytes <= PAGE_SIZE:
        raise ValueError(f"written_bytes must be 4-{PAGE_SIZE} in whole words, not "
                         f"{written_bytes}")
    return f"""
_start:
        mr      r30, r3
        mr      r29, r4
        cmpwi   0, r30, 0
        bne     run_task
        lis     r9, {DATA_BASE >> 16:#x}
        li      r8, {data_bytes // LINE}
        mtctr   r8
        li      r0, 1
first_write:
        stw     r0, 0(r9)
        addi    r9, r9, {LINE}
        bdnz    first_write
        b       done
run_task:
        bl      data_pass
        cmpwi   0, r30, 1
        beq     done
        li      r8, {written_bytes // 4}
        mtctr   r8
        li      r0, 0
new_page:
        stw     r0, 0(r29)
        addi    r29, r29, 4
        bdnz    new_page
        bl      data_pass
done:
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
data_pass:
        lis     r9, {DATA_BASE >> 16:#x}
        li      r8, {data_bytes // LINE}
        mtctr   r8
pass_line:
        lwz     r7, 0(r9)
        addi    r9, r9, {LINE}
        bdnz    pass_line
        blr
"""


def idle_next_task(config, data_kb=8, pages=96, written_bytes=4):
    """node13 on the 603 model (emu.kernel.idle): the next task (``next_task_source``, a
    working set of ``data_kb`` KB) writes its data and makes a pass over it, blocks; the
    idle task runs zero_paged over ``pages`` free pages as ``config`` says (one of
    ``IDLE_CONFIGS``); then the task runs again: a pass, a new page (``written_bytes`` of
    it written), a pass. Returns what that last run cost, its kernel paths included (the
    page fault, the clearing or not, flush_page_to_ram): cycles, L1 D misses, line reads
    from memory, TLB misses; and the idle period's pages and uncached stores."""
    if config not in IDLE_CONFIGS:
        raise ValueError(f"config must be one of {list(IDLE_CONFIGS)}, not {config!r}")
    clears, uncache, used = IDLE_CONFIGS[config]
    data_bytes = int(data_kb * 1024)
    with estimates.setup_only():     # all before the measured run: the ledger's alone
        k = kernel("603 page table")
        entry = Entry(k)
        idle = IdleTask(entry, use=used)
        p = entry.spawn(next_task_source(data_bytes, written_bytes), "next_task",
                        data_pages=-(-data_bytes // PAGE_SIZE) + 1)
        entry.run(p, ELF_BASE, 0, 0)
        entry.run(p, ELF_BASE, 1, 0)
        idle_run = idle.run(pages, uncache) if clears else None
    before = k.ledger.snapshot()
    run = entry.run(p, ELF_BASE, 2, DATA_BASE + -(-data_bytes // PAGE_SIZE) * PAGE_SIZE)
    spent = k.ledger.since(before)
    clock = k.machine.profile.clock_mhz
    return {"config": config, "data_kb": data_kb, "idle_pages": pages if clears else 0,
            "written_bytes": written_bytes, "cycles": spent.cycles,
            "us": spent.cycles / clock,
            "l1d_misses": spent.traffic["L1D_misses"],
            "memory_reads": spent.traffic["memory_reads"],
            "tlb_misses": run.events.get("tlb_miss_exceptions", 0),
            "fault_clears": spent.counts.get("zeroed_pages", 0),
            "prezeroed_used": spent.counts.get("prezeroed_pages_used", 0),
            "idle_pages_cleared": idle.word(8) if clears else 0,
            "idle_uncached_stores": idle_run.events.get("uncached_stores", 0)
            if idle_run else 0,
            "idle_l1d_misses": idle_run.caches["L1D"]["misses"] if idle_run else 0}


@kept_runs.unit
def idle_task_table(data_kb=8, pages=96, written_bytes=4, configs=tuple(IDLE_CONFIGS)):
    """``idle_next_task`` for ``configs`` (the four by default; "no idle clearing" always):
    a DataFrame indexed by config, with each one's cycles relative to no idle clearing."""
    configs = ("no idle clearing",) + tuple(c for c in configs if c != "no idle clearing")
    df = pd.DataFrame([idle_next_task(c, data_kb, pages, written_bytes)
                       for c in configs]).set_index("config")
    df["cycles_vs_none"] = df["cycles"] / df.loc["no idle clearing", "cycles"]
    return df


def idle_by_working_set(sizes_kb=(1, 2, 4, 6, 8, 10, 12, 14, 16), pages=96, written_bytes=4):
    """``idle_next_task`` for each working-set size and configuration: a DataFrame indexed
    by (data_kb, config), each row's cycles also relative to no idle clearing at that size."""
    tables = sweep.run(idle_task_table, [dict(data_kb=kb, pages=pages,
                                              written_bytes=written_bytes) for kb in sizes_kb],
                       description="idle task by working set")
    return pd.concat(t.reset_index() for t in tables).set_index(["data_kb", "config"])
