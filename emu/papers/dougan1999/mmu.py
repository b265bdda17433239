"""Dougan 1999, sections 2 and 3: the three MMUs (``MACHINES``) on the kernel model, the
cost of a TLB miss and of a hash-table miss (``reuse``, ``miss_costs``, ``hash_miss_cost``),
the hash-table hit rate (``hit_rate_by_reuse``), LMBench's process workloads
(``workloads_table``) and lat_mmap (``mmap_latency``, ``mmap_latency_603``)."""
from __future__ import annotations

import pandas as pd

from ...hw import estimates, mmu
from ...kernel import Kernel, workloads
from ...kernel.ppc32 import ctx_to_vsid
from ...kernel.ppc603 import tlb_miss_summary
from ...kernel.ppc604 import PPC604
from ...kernel.sched22 import GuestScheduler
from ...kernel.vm import PAGE_SIZE
from ...kernel.workloads import Image
from ...run import reuse as kept_runs
from ...run import sweep
from ...run.machine import Machine

MACHINES = ("603 hash table", "603 page table", "604")
FLUSHES = {"search": "every page searched (1998)",
           "context": "new context above 20 pages (2.2.0)",
           "hashpte": "only pages with _PAGE_HASHPTE (2.4)"}
# a process with nothing of its own to touch: the experiments map what they use
BARE = Image("bare", text_pages=1, data_pages=0, bss_pages=0, text_touched=0,
             data_written=0, bss_written=0, stack_written=0)
# the ledger rows that make up the TLB-miss path of each MMU: the 603's handler runs (a
# hash-table miss's run goes on into DataAccess and hash_page: hash_miss_603) and their
# exception entries; the 604's searches, and on a hash miss the DSI / ISI's run, its
# prologue and hash_page (hash_page; no fixed cost is left on either: the kernel's own hash
# misses without BATs, its routines' and its C paths', are hash_page_kernel's guest runs)
MISS_ROWS = ("tlb_miss_603", "hash_miss_603", "tlb_miss_entry", "table_search", "hash_page")


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
    guest code; 604: the DSI's prologue and hash_page, one guest run). ``cold``:
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


def hash_exception_entry(machine="604", **options):
    """What invoking the hash-table miss's handler costs in the model (the paper's "at
    least 91 cycles" on the 604): the DSI's guest run for a user read whose address has no
    page table, so that hash_page refuses at its first test: the prologue from user mode,
    the reason test and the call (38 instructions), hash_page's 6 and its blr, the branch
    to do_page_fault (routines/ppc32/hash_miss_604.S). Warm: the second of two such runs
    (the first fetches the code). The CPU's own exception entry, before the vector's first
    instruction, is not charged (no source gives it). ``options``: the kernel's."""
    if machine != "604":
        raise ValueError(f"the handler's own run is the 604's DSI, not the {machine}'s")
    k = kernel(machine, **options)
    p = k.spawn(BARE)
    k.switch_to(p)
    nowhere = 0x07000000                   # no VMA, no page table: hash_page refuses
    k.arch.tlb_miss_for(p.mm, nowhere, "r")
    row = _measure(k, lambda: k.arch.tlb_miss_for(p.mm, nowhere, "r")).rows["hash_page"]
    return {"cycles": row[2], "instructions": row[3]}


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
    """The kernel model's LMBench workloads on the three MMUs: cycles per iteration, the
    TLB-miss figures, the cycles of the flushes (``TLB_FLUSH_ROWS``), of the kernel
    model's fixed-cost C paths and of 2.2.0's scheduler (``SCHED_ROWS``: lat_proc's switches
    and wake-ups run as its guest code, emu.kernel.sched22; lat_mmap has none), with each
    machine's kernel flushing as ``flushes`` says (2.2.0's by default), and lat_mmap of
    ``mmap_size`` (None: not run). A DataFrame (workload, machine)."""
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
        if kind != "mmap":                  # 2.2.0's schedule() and wake-ups as guest code
            GuestScheduler(k)
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
            "htab_hit_rate": s["htab_hit_rate"],
            "flush_cycles": _rows_cycles(r.ledger, TLB_FLUSH_ROWS),
            "sched_cycles": _rows_cycles(r.ledger, SCHED_ROWS),
            "sched_instructions": int(sum(r.ledger.rows[n][3] for n in SCHED_ROWS
                                          if n in r.ledger.rows)),
            "fixed_cycles": int(sum(row[2] for row in r.ledger.rows.values()
                                    if row[0] == "fixed"))}


FLUSH_ROWS = ("flush_range_search", "flush_hash_pages", "set_context_22", "flush_range_pmd")
#: the flushes of every MMU: the hashed ones' (FLUSH_ROWS) and the 603's tlbie of a page
TLB_FLUSH_ROWS = FLUSH_ROWS + ("tlbie_603",)
#: 2.2.0's scheduler as guest code in lat_proc (emu.kernel.sched22): the sleeps with their
#: switches, the wake-ups
SCHED_ROWS = ("schedule22", "wake_up_process22", "wake_up22")


def _rows_cycles(ledger, names):
    """The cycles of a ledger's rows ``names`` (those it has)."""
    return int(sum(ledger.rows[n][2] for n in names if n in ledger.rows))


def mmap_point(size, flush, caches=(), htab_size=None):
    """One run of ``mmap_latency``: LMBench lat_mmap of ``size`` bytes on a new 604 kernel
    with the range flush ``flush`` (``caches``, ``htab_size``: the machine's cache levels
    replaced and the hash table's size, as ``kernel`` takes them)."""
    with estimates.setup_only():            # its boot: before the measurement
        k = kernel("604", flush=flush, caches=caches, htab_size=htab_size)
    r = workloads.lat_mmap(size, kernel=k)
    return {"pages": size // PAGE_SIZE, "cycles": r.cycles,
            "flush_cycles": _rows_cycles(r.ledger, FLUSH_ROWS),
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
