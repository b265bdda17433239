"""Dougan 1999, section 4: user programs under the kernel model (emu.kernel.entry): the
null system call, LMBench's lat_ctx, lat_pipe and bw_pipe, Table 3's two Linux/PPC
rows (``CONFIGURATIONS``) and what cold caches add to a null call."""
from __future__ import annotations

import pandas as pd

from ...hw import estimates
from ...kernel.entry import (BW_PIPE, DATA_BASE, ELF_BASE, LAT_CTX_FRAMES, LAT_PIPE_FRAMES,
                             LAT_SYSCALL_NULL, NULL_CALL_SYNCS, P1_READ, P1_WRITE, P2_READ,
                             P2_WRITE, XFERSIZE, Entry, pipe_alone, pipe_round_trip)
from ...kernel.filemap import FD, CachedFile, bw_file_rd as bw_file_rd_source
from ...kernel.vm import PAGE_SIZE
from ...run import reuse as kept_runs
from .mmu import FLUSHES_22, MACHINES, kernel

#: the sync; isync pairs of one null call on the 2.2.0 path (routines/ppc32/entry_22.S: one
#: before transfer_to_handler's rfi, three in int_return)
NULL_CALL_SYNC_PAIRS = 4


def kernel_22(machine, **options):
    """A kernel for the entry's runs (Tables 1 and 3 are 2.2.0's): 2.2.0's own flushes and
    hash_page (``FLUSHES_22``), where the backends default to 2.4's, unless ``options`` say
    otherwise (Table 3's 2.1.51 configuration gives its own)."""
    return kernel(machine, **{**FLUSHES_22[machine], **options})


#: the sync instructions of one lat_pipe round trip on the 2.2.0 path, by hand: four system
#: calls (one in transfer_to_handler, three in int_return: 16), two switches (_switch22's
#: three and int_return's three: 12), and schedule's and wake_up's interrupt masking
#: (routines/ppc32/sched_22.S: sleep_on22 three, schedule22 four, wake_up_process22 two,
#: twice each: 18); tests/papers/test_dougan1999_entry.py counts them in a run
PIPE_TRIP_SYNCS, SCHED_TRIP_SYNCS = 46, 18


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
        k = kernel_22(machine, **options)
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
    k = kernel_22(machine, **options)
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
    cycles of its sync and isync instructions at the profile's costs (``NULL_CALL_SYNCS``:
    2.2.0's four sync; isync pairs, 2.1.51's four lone syncs), the rest of its cycles, its L1 I
    and L1 D misses, line reads from memory and TLB misses
    (each per call, the difference of runs of ``calls``, as ``null_syscall``)."""
    k = kernel_22(machine, **options)
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
    counts = NULL_CALL_SYNCS[version]
    syncs = counts["sync"] * costs["sync"] + counts["isync"] * costs["isync"]

    def per_call(key):
        return (spent[1][key] - spent[0][key]) / span
    return {"machine": machine, "version": version, "bats": bats,
            "instructions": (b.instructions - a.instructions) / span, "cycles": cycles,
            "syncs": counts["sync"], "isyncs": counts["isync"],
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
        k = kernel_22(machine, **options)
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


def _per_iteration(entry, process, counts, *args_before, warm_up=None):
    """Runs of ``counts`` iterations, after a warm-up run of ``counts[0]`` (or of the
    arguments ``warm_up``: the first pages' faults, and the entries the processes load on
    their first pass through their loop: both timed runs then start alike): cycles (guest
    and the C paths charged from the fixed-cost table) and instructions per iteration, by
    difference, and TLB misses. The warm-up is set-up (``estimates.setup_only``): a fixed
    cost charged in the timed runs is read there, one charged only before them cannot
    change them."""
    with estimates.setup_only():
        entry.run(process, ELF_BASE, *(warm_up or (*args_before, counts[0])))
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
#: Session 30 (the token a stack local, the files tables in files_cache): lat_pipe at
#: (32, 160) 4,163.2 against 4,169.7 at (1024, 2048), lat_ctx at (32, 64) 1,190.0
#: against 1,196.4 (0.53%).
#: tests/papers/test_dougan1999_entry.py checks both on the 604.
PIPE_TRIPS, CTX_TRIPS = (32, 160), (32, 64)


@kept_runs.unit
def lat_pipe(machine, counts=PIPE_TRIPS, size=1, bats=True, version="2.2.0",
             frames=LAT_PIPE_FRAMES, **options):
    """LMBench lat_pipe (1.x): one round trip of ``size`` bytes between two processes
    through two pipes (two writes, two reads, two context switches through _switch22):
    cycles and microseconds at the profile's clock, per round trip over ``counts``
    (``PIPE_TRIPS``: long enough for the average LMBench's loop takes); the token a stack
    local ``frames`` (parent, child) below main() (emu.kernel.entry: lat_pipe's)."""
    k, entry, parent = _lmbench_pair(machine, pipe_round_trip(size, frames), bats, version,
                                     options)
    out = _per_iteration(entry, parent, counts, 0)
    out["us"] = out["cycles"] / k.machine.profile.clock_mhz
    return {"machine": machine, "bats": bats, **out}


@kept_runs.unit
def lat_ctx(machine, counts=CTX_TRIPS, size=4, bats=True, version="2.2.0", **options):
    """LMBench lat_ctx (1.x, 2 processes, 0 KB): a round trip of the token through the
    ring, halved (two switches), minus the pipe's own cost measured in one process (a write
    and a read, no switch): cycles and microseconds per switch (over ``CTX_TRIPS``)."""
    trip = lat_pipe(machine, counts, size, bats, version, LAT_CTX_FRAMES, **options)
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


#: bw_file_rd's file: the largest size scripts/lmbench runs (1.21, SCCS serial 22, 97/02:
#: sizes 512 B to $MB, default 8 MB, of the file lmdd wrote with fsync; getsummary 1.8-1.13
#: takes the last, largest size's MB/s, "reread timing"); the passes of the two runs whose
#: difference is one pass (a pass streams 8 MB through the 16 KB L1 D: every pass after
#: the warm-up costs the same; measured on the 604, (2, 3) gives (1, 2)'s 30,951,757
#: cycles exactly, and (0, 1), BENCH's loop run no times and once, gives (1, 2)'s cycles
#: and instructions on all three machines for 40% of its CPU: 30,987,328, 30,987,496 and
#: 30,951,757)
FILE_REREAD_SIZE, FILE_REREAD_PASSES = 8 << 20, (0, 1)


@kept_runs.unit
def bw_file_rd(machine, passes=FILE_REREAD_PASSES, size=FILE_REREAD_SIZE, bats=True,
               **options):
    """LMBench 1.x bw_file_rd, Table 1's file reread (src/bw_file_rd.c 1.8-1.9, SCCS
    serials 9-10, 96/11-97/04: BENCH's loop lseeks to 0, then reads the file into one
    valloc'd 64 KB buffer, XFERSIZE, and sums the buffer 128 ints an iteration, until the
    size is read): a ``size``-byte file wholly in 2.2.0's page cache (emu.kernel.filemap),
    through 2.2.0's sys_read (fs/read_write.c 116-143), generic_file_read and
    do_generic_file_read (mm/filemap.c 561-794) as guest code
    (routines/ppc32/filemap_22.S); a pass is the lseek to 0 and the reads. MB/s (2^20
    bytes) at the profile's clock from the difference of runs of ``passes`` passes (after
    a warm-up run: the buffer's faults), as bw_pipe's."""
    with estimates.setup_only():
        k = kernel_22(machine, **options)
        entry = Entry(k, bats=bats)
        cached = CachedFile(entry, size)
        p = entry.spawn(bw_file_rd_source(DATA_BASE), "bw_file_rd",
                        data_pages=XFERSIZE // PAGE_SIZE)
        entry.install(p, FD, cached.file)
    # the warm-up: one pass over the file's first 64 KB (one read: the buffer's faults and
    # every page the loop touches but the file's); measured on the three machines, the
    # timed runs' cycles are those after a warm-up of a whole 8 MB pass, to the cycle
    # (the L1 holds the last 16 KB streamed either way), for a quarter less CPU
    out = _per_iteration(entry, p, passes, size, warm_up=(XFERSIZE, 1))
    clock = k.machine.profile.clock_mhz
    out["cycles_per_byte"] = out["cycles"] / size
    out["mb_s"] = size * clock * 1e6 / out["cycles"] / (1 << 20)
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
# searched, flush_tlb_mm a new context; Table 3's loops flush nothing), its head.S SYNCs
# lone syncs (exception_22.S, SYNC_HEAD) and its own schedule(), goodness, add_to_runqueue,
# wake_up_process, wake_up_interruptible and __sleep_on (sched_22.S with LINUX_2_1_51,
# kernel/sched.c at 94520e420) and pipe code (pipe_22.S with LINUX_2_1_51, fs/pipe.c and
# fs/read_write.c: the dentry and inode tests, (inode, file, buf, count), no f_pos test,
# signal & ~blocked, sys_write's i_sem and no i_atomic_write); its copy is 2.2.0's
# (__copy_tofrom_user, arch/ppc/lib/string.S, is the same loop in both).
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
