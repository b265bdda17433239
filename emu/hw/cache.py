"""The cache model: levels, replacement, write policies, maintenance, I/D coherence.

Every guest memory access runs through this model inside a native (C) hook, so its state is
not Python objects but one flat ``int64`` array, the *state*, laid out by :class:`Layout`:

* a header of counters and settings (``H_*`` indices below);
* one record of ``L_*`` fields per cache level, each pointing at that level's arrays
  (tags, dirty bits, replacement stamps, tree-PLRU bits, fill sequence numbers);
* per L1 I-cache line a *stale* flag: the line holds bytes older than a store made since.

I/D coherence is kept eagerly, so that the hot paths stay free of it. The invariant: while an
L1 D line is dirty (its bytes have not reached the point of unification, the first unified
level), every I-cache copy of those bytes is flagged stale. A store that dirties a clean D line,
or that goes past the L1 D (write-through, write-around, dcbz below L1, non-temporal), flags the
I-cache lines it overlaps; an I-cache miss that fills while a D line over it is dirty gets the
old bytes from below, so the new line is flagged too. A flagged line stays stale until it
leaves the I-cache (icbi, eviction). Where L1 I and L1 D lines differ in size, the larger line
is the unit, which can only over-report.

The model's functions are C (emu/hw/model/cache.c, built when the project is installed; see
``emu.hw.native``), called by Unicorn's hooks with no Python per access. This module lays out the
state and calls the same C functions from Python, so that tests can feed accesses by hand and
check hit/miss counts (``CacheModel`` wraps them for that).

Levels are non-inclusive, as in pycachesim: a miss at level k asks level k+1 (the level's
``next``), a dirty victim is written to level k+1, and nothing is evicted from above when a
level below evicts. ``accesses`` counts every request a level receives (reads from the level
above, write-throughs and write-backs), so ``accesses == hits + misses``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import memory, native
from .topology import Topology

REPLACEMENT = {"lru": 0, "plru": 1, "fifo": 2, "random": 3}
LEVEL_NAMES = ("L1I", "L1D", "L2", "L3")
TLB_NAMES = ("ITLB", "DTLB", "TLB")     # a TLB is modelled as a cache whose lines are pages
MEMORY = -1

# ---- header fields (those the hooks read on every access or block come first: one host line)
H_SWALLOW, H_NONTEMPORAL, H_L1I, H_L1D, H_INSNS, H_CYCLES, H_LIMIT, H_STALE = range(8)
H_CODE_BASE, H_CODE_LEN, H_ICOUNT, H_ICOST, H_STRICT, H_FIXED_WIDTH, H_DEFAULT_COST = range(8, 15)
H_FIRST_LEVEL, H_COHERENT_I, H_QUEUE, H_QUEUE_N, H_MEM_LAT, H_MEM_READS, H_MEM_WRITES = range(15, 22)
H_SIZE, H_NLEVELS, H_STOPPED, H_STALE_PC, H_STALE_ADDR, H_STALE_BLOCK, H_RNG = range(22, 29)
H_SPECIALS, H_NSPECIALS, H_WC, H_WC_N, H_WC_LINE, H_WC_FLUSHES, H_WC_PARTIAL = range(29, 36)
H_NT_STORES, H_REG_WIDTH_MASK, H_SCRATCH, H_UNCOUNTED = range(36, 40)
# sampling profiler: period in cycles (0: off), next sample due, the PC register's Unicorn id,
# and three arrays over the code region's byte offsets: samples, executions, cycles
H_PROFILE_PERIOD, H_NEXT_SAMPLE, H_PC_REG, H_SAMPLES, H_INSN_HITS, H_INSN_CYCLES = range(40, 46)
# MMU (emu.hw.mmu): mode (0 off), TLB level indices, SDR1, the 16 segment registers' offset, the
# host address of guest RAM, walk statistics, the first page fault, the walk's fixed cost
H_MMU, H_ITLB, H_DTLB, H_SDR1, H_SEGMENTS, H_RAM_PTR, H_RAM_SIZE = range(46, 53)
H_WALKS, H_PRIMARY_HITS, H_SECONDARY_HITS, H_PAGE_FAULTS = range(53, 57)
H_FAULT_EA, H_FAULT_WRITE, H_FAULT_FETCH, H_WALK_CYCLES, H_FAULT_PC = range(57, 62)
# software-loaded TLBs (emu.hw.softtlb): the CPU's MSR[IR|DR] as the model last saw them
H_XLATE = 62
# multi-core: the offset of the core table (0: one core), this core's number, and what this
# core's accesses cost the others: dirty lines fetched from another core's L1 D (transfers),
# copies invalidated in other cores, serialising instructions and the cycles they waited
H_CORES, H_CORE, H_TRANSFERS, H_SNOOP_INVALIDATIONS, H_SERIAL_OPS, H_SERIAL_WAIT = range(64, 70)
# ARM short-descriptor MMU: does the table walker read through the L1 D (else below it), and
# the fault status (ARM DFSR/IFSR code) and descriptor addresses of the first fault
H_WALK_THROUGH_L1, H_FAULT_STATUS, H_FAULT_L1_ADDR, H_FAULT_L2_ADDR = range(70, 74)
# misaligned accesses (a profile's [alignment]): an access of H_ALIGN_SIZE bytes (0: rule off)
# whose address has any H_ALIGN_MASK bit set takes an alignment exception, the kernel's
# handler emulating it in H_ALIGN_CYCLES; an access that crosses an aligned boundary of
# H_SPLIT_MASK + 1 bytes (mask 0: off) is split in two by the hardware, H_SPLIT_CYCLES more
H_ALIGN_SIZE, H_ALIGN_MASK, H_ALIGN_CYCLES, H_SPLIT_MASK, H_SPLIT_CYCLES = range(74, 79)
H_ALIGN_EXCEPTIONS, H_SPLITS = range(79, 81)
# store queues of a sliced store-in level fed by a store-through L1 D (a profile's
# [l2_store_queues]; POWER4): the slot array's offset, slices (0: off), entries per slice,
# cycles an entry is held, the line shift that selects a slice; counters; and the base cost
# from the current block's start to its end (for the time of a store inside a block)
H_SQ, H_SQ_SLICES, H_SQ_ENTRIES, H_SQ_SERVICE, H_SQ_SHIFT = range(81, 86)
# the queues' block: slots, each slice's ring head, then the order words (SQ_LAST: the latest
# time a store reached a queue, SQ_DISORDERED: one came earlier than that; emu/hw/model/cache.c)
SQ_LAST, SQ_DISORDERED, SQ_EXTRA = 0, 1, 2
H_SQ_STORES, H_SQ_STALLS, H_SQ_STALL_CYCLES, H_BLOCK_END_COST = range(86, 90)
# 64-bit hashed page table (emu.hw.hash64): the SLB's number of entries. The SLB lives where the
# 32-bit segment registers do (H_SEGMENTS): two words per entry, ESID|V and VSID|flags
H_SLB_ENTRIES = 90
# the alignment rules or the store queues above configured: one test on
# the hot path for the profiles that have none
H_ACCESS_EXTRAS = 91
# an outer cache controller's maintenance registers (PL310, outer_cache_write): where they are
# mapped, the cycles a cache sync and a line operation hold the controller, and counters
H_OUTER_BASE, H_OUTER_SYNC_CYCLES, H_OUTER_LINE_CYCLES = range(92, 95)
H_OUTER_SYNCS, H_OUTER_LINE_OPS, H_OUTER_WAIT = range(95, 98)
# the last block the block hook charged (its address and size in bytes)
H_BLOCK_START, H_BLOCK_SIZE = 98, 99
# multi-core time (emu.run.parallel; emu/hw/model/smp.c): set while the scheduler runs the cores
# (H_SCHED), the cycle at which this core's time slice ends, the latest cycle at which it may
# enter a synchronising block (the earliest other core's clock), its spin detector (the
# synchronising block it entered last, its stores since, a request to park, parking off,
# loads being watched), the code-region arrays that mark synchronising instructions (prefix
# sums, as H_ICOUNT) and blocks (learned: a coherence event happened in them); counters
H_SCHED, H_SLICE_END, H_SYNC_BOUND, H_LAST_SYNC_BLOCK, H_STORES_SINCE, H_PARK, H_NO_PARK, \
    H_WATCHING = range(100, 108)
H_SYNC_STATIC, H_SYNC_DYNAMIC = 108, 109
H_SYNC_WAITS, H_PARKS, H_SPIN_WAIT, H_ORDER_STALLS, H_ORDER_STALL_CYCLES = range(110, 115)
# a Python hook stopped the machine (emu.run.machine notes why)
H_HOST_STOP = 115
# load-reserve / store-conditional (lwarx/stwcx., ldrex/strex), followed as QEMU does: the
# reserved address (-1: none), the bytes the load read and their size; and the address whose
# memory-hook events H_SWALLOW drops (-1: any; a store-conditional's own events)
H_RESERVE_ADDR, H_RESERVE_VAL, H_RESERVE_SIZE, H_SWALLOW_ADDR = range(116, 120)
# the store queues' last line and its slice (a division saved per store to the same line)
H_SQ_LINE, H_SQ_SLICE = 120, 121
# the memory system in time (emu.hw.memory; emu/hw/model/memsys.c): the machine's own words (the
# bus), the bus's beat (bytes, and core cycles x 1000), the beats a partial write-combining
# piece holds it; the store buffer (ring of completion cycles: offset, entries, head,
# count); fill buffers (offset, entries, drop prefetches when full, live); the stream
# prefetcher (offset, streams, lines ahead, trigger distance, page shift, level, clock);
# what one access leaves for the next step (a store's latency below the L1, when a fill
# from memory arrives, a prefetch running, the prefetcher's level's last demand access and
# whether it missed, the translation's attributes); counters; any of it on (H_MEMSYS)
H_MACHINE, H_BUS_BEAT_BYTES, H_BUS_BEAT_MC, H_BUS_PARTIAL_BEATS = range(122, 126)
H_SB, H_SB_ENTRIES, H_SB_HEAD, H_SB_COUNT = range(126, 130)
H_FB, H_FB_ENTRIES, H_FB_DROP, H_FB_LIVE = range(130, 134)
H_PF, H_PF_STREAMS, H_PF_AHEAD, H_PF_DISTANCE, H_PF_PAGE_SHIFT, H_PF_LEVEL, \
    H_PF_CLOCK = range(134, 141)
H_STORE_DONE, H_FILL_READY, H_PREFETCHING, H_PF_ACCESS, H_PF_MISSED, H_XLATE_ATTR = \
    range(141, 147)
H_BUS_BUSY, H_BUS_WAIT, H_SB_STALLS, H_SB_STALL_CYCLES, H_FB_WAITS, H_PREFETCHES, \
    H_PREFETCHES_DROPPED, H_PREFETCH_LATE, H_PREFETCH_LATE_CYCLES, H_HW_PREFETCHES, \
    H_UNCACHED_LOADS, H_UNCACHED_STORES, H_WC_WAIT = range(147, 160)
H_MEMSYS = 160
# events the profiler samples (emu.run.profiler): which (a mask of EVENT bits; 0: cycles), the
# count-down to the next sample, samples not yet given a PC, events counted
H_SAMPLE_EVENTS, H_EVENT_NEXT, H_EVENT_PENDING, H_EVENTS = range(161, 165)
EVENT_MEMORY_READ, EVENT_MEMORY_WRITE, EVENT_WALK = 28, 29, 30   # beside 4 x kind + ...
# the topology (emu.hw.topology): this core's chip, chips per module, the cycles of an
# intervention from the same module and from another, and the count of interventions
H_CHIP, H_CHIPS_PER_MODULE, H_ON_MODULE, H_OFF_MODULE, H_INTERVENTIONS = range(165, 170)
# several cores: the blocks this core has run in the run (a set of SEEN_ENTRIES: offset,
# count); a core's first run of a block is ordered like a synchronising block's
H_SEEN, H_SEEN_N = 170, 171
# several cores: the addresses a core read since it entered its last synchronising block,
# and those it read in the pass before (hashed): a spin reads the same ones every pass
H_READ_SIGNATURE, H_LAST_READ_SIGNATURE = 172, 173
# the end of the loaded code (a code offset): the prefix tables (H_ICOUNT, H_ICOST,
# H_SYNC_STATIC) hold values up to it only; code above it is code the model was not told of
H_CODE_TOP = 174
H_SOFTTLB = 175         # the address of a software-loaded TLB's records (emu.hw.softtlb)
# the model asked Unicorn to stop (a scheduler's slice, a fault: cleared before each start),
# and the PC + 1 where a core stopped with no one asking (the guest halted it: hlt, wfi)
H_STOP_ASKED, H_HALTED = 176, 177
# the BATs a software-loaded TLB's model knows (their address, 0: none) and the accesses
# they translated (emu.kernel.entry)
H_BATS, H_BAT_HITS = 178, 179
H_SLICES = 180          # the time slices a core ran in a run of several cores (emu.run.parallel)
# the stream prefetcher's stream used last, which its search tries first (a hint: any
# stream number is correct, only slower)
H_PF_LAST = 181
# the POWER4 store queues need each store's issue time, so its PC: the block hook notes the
# block's only instruction that can store (a code offset; -1: none, several, or the code
# changed since it was loaded), from a table over the code region (per offset + 1: 1 + the
# offset of the last instruction before it that can store, emu.hw.cost.may_write), so that
# the memory hook need not ask Unicorn for the PC (emu/hw/model/hooks.c, store_pc)
H_WRITERS, H_BLOCK_STORE = 182, 183
# a core's memos (emu/hw/model/state.h, X_*: what the hooks found last, each checked before it
# is used): MEMO_WORDS from H_MEMOS, zero until a hook fills them
H_MEMOS = 184
X_BLOCKS, MEMO_WORDS = 24, 104     # from X_BLOCKS: the block memos, which loads make void
# a store that missed the store-through, non-allocating L1 D, per core (emu/hw/model/cache.c,
# known_absent): its line + 1 and the L1 D's L_FILLS then (0s: none)
H_ABSENT_LINE, H_ABSENT_FILLS = 185, 186
# the L1 D line a store through it last flagged in the I-caches (emu/hw/model/cache.c,
# line_changed; one core): its line + 1 and the L1 I's L_FILLS then
H_CHANGED_LINE, H_CHANGED_IFILLS = 187, 188
# the 60x bus's address bus (emu.hw.memory [bus] address_tenure): an address tenure in core
# cycles (0: not modelled); how many posted maintenance write-backs a core holds in flight
# (H_POSTED below; 0: no limit); address-only transactions counted; and the bytes one
# transfer to or from memory carries at most (0: a whole line)
H_ADDR_TENURE, H_WB_ENTRIES, H_ADDRESS_ONLY, H_BUS_SECTOR = 189, 190, 191, 192
# posted maintenance write-backs (emu/hw/model/memsys.c, post_write_back): when this core's
# are all done (a cycle of its clock), the cycles its barriers waited for them, and when one
# is done (POSTED_*: 0, not posted; the 750's [bus] write_buffers, POWER4's [maintenance],
# the A9's [outer_cache] maintenance_in_time). H_WB_ENTRIES: how many a core holds in flight
# (0: no limit), in POSTED_MAX words from H_POSTED_AT (per core)
H_MAINT_DONE, H_MAINT_WAIT, H_POSTED = 193, 194, 195
POSTED_OFF, POSTED_BUS, POSTED_LATENCY, POSTED_IN_ORDER, POSTED_MAX = 0, 1, 2, 3, 16
# ARM's interrupt mask (cpsid i .. msr cpsr_c, emu/hw/model/hooks.c): when this core masked
# interrupts, and the cycles it kept them masked (what a timer-sampling profiler charges to
# the instruction after the restore)
H_IRQ_OFF_AT, H_IRQ_OFF_CYCLES = 196, 197
H_TLB604 = 198          # the 604's TLB record (emu.hw.tlb604; 0: none)
H_POSTED_AT = 199
# the PL310's buffers in time (emu/hw/model/memsys.c, outer_traffic; Machine sets it from a
# profile's [outer_cache] sync_waits_for_buffers): where each core's records of its DRAM
# traffic through the controller are (0: not modelled), OUTER_TRAFFIC_WORDS a core
# (OT_*: the last two cycles it sent transfers at, when each's are done); and the cycles the
# controller's register writes (a Cache Sync) waited for those transfers
H_OUTER_TRAFFIC, H_OUTER_DRAIN_WAIT = 200, 201
# how many of the loaded specials the memory hook applies at their instruction's read
# (emu.hw.cost.AT_ACCESS: x86's locked read-modify-writes) rather than a code hook; 0: none,
# and the memory hook looks for none
H_AT_ACCESS_N = 202
# the blocks of the loaded code a core has run since Python last looked (emu.run.costreads):
# the host address of an array over the loaded code's offsets (0: none), at a block's first
# offset the largest size in bytes run from there
H_TOUCHED = 203
# a second kind of event the profiler samples in the same run (emu.run.profiler: oprofile
# counts several events in one session): its mask (0: none; set only beside
# H_SAMPLE_EVENTS, whose test gates both), its count-down, its samples not yet given a PC,
# and its per-instruction samples (an array like H_SAMPLES's)
H_SAMPLE_EVENTS2, H_EVENT_NEXT2, H_EVENT_PENDING2, H_SAMPLES2 = range(204, 208)
OT_PREV_ISSUE, OT_PREV_DONE, OT_ISSUE, OT_DONE, OUTER_TRAFFIC_WORDS = range(5)
# scratch words (st[H_SCRATCH] + k) shared by every core: the span of the code any core ran
# outside the loaded programs (0, 0: none), so that bytes the host writes over it are not
# run stale from Unicorn's translations (Machine.write). Words 0-6: emu.hw.softtlb, emu.hw.hash64
S_FOREIGN_LO, S_FOREIGN_HI = 7, 8
# S_CODE_WRITTEN: the host or the guest wrote over loaded code (its listing, which the
# store queues' table of stores comes from, no longer says what runs there)
S_CODE_WRITTEN, SCRATCH_WORDS = 9, 10
BAT_VS, BAT_VP, BAT_START, BAT_SIZE, BAT_WORDS, BATS_PER_SIDE = 0, 1, 2, 3, 4, 4
SEEN_ENTRIES = 4096
M_BUS_FREE, M_ADDR_FREE, MACHINE_WORDS = 0, 1, 2
WC_WORDS = 4            # per write-combining buffer: line + 1, bytes, fill order, free cycle
ATTR_INHIBITED = 16     # a TLB entry's attribute: cache-inhibited (emu.hw.mmu)
QUEUE_ENTRIES = 256
HEADER = 208

# ---- the core table (multi-core only): the core count, then per core the level indices of
# its ITLB and DTLB (-1: none) and where its segment registers (or SLB) are (for a TLB
# invalidation broadcast to every core), and what the scheduler keeps of it (emu.run.parallel): its status, the PC it resumes at,
# cycles it spent parked that are still to be charged, the block it spins in, and the lines
# its spin reads (with the write sequence number each had when read); then each serialising
# resource's busy-until time in cycles; then the machine's globals (G_*)
T_ITLB, T_DTLB, T_SEGMENTS = range(3)
T_STATUS, T_PC, T_WAIT, T_SPIN_BLOCK, T_NWATCH, T_WATCH = range(3, 9)
WATCHES = 4                             # lines a spin may read (then its sequence numbers)
CORE_RECORD = T_WATCH + 2 * WATCHES
CORE_IDLE, CORE_RUNNABLE, CORE_PARKED, CORE_DONE = range(4)
RESOURCES = 4
# the resources: one for the instructions a profile's [smp] list names (the tlbie of the
# whole machine), one for the outer cache controller
RESOURCE_SERIAL, RESOURCE_OUTER_CACHE = 0, 1
# globals: the running core, how many are parked, the last write sequence number, the
# write-stamp table (offset, index mask, the line shift it is kept at), the saved headers
# and how the scheduler orders cores at the same clock (emu.run.parallel.TIES)
(G_RUNNING, G_NPARKED, G_WRITE_SEQ, G_STAMPS, G_STAMP_MASK, G_STAMP_SHIFT, G_HEADERS,
 G_TIES) = range(8)
GLOBALS = 8
STAMP_ENTRIES = 1 << 15                 # the last store to each line: line + 1, seq, cycle, core
STAMP_WORDS = 4
PRIVATE = ("L1I", "L1D") + TLB_NAMES    # per core; L2 and L3 are shared by all cores

# ---- per-level record fields (an L1 hit reads only the first eight)
(L_SETS, L_WAYS, L_SHIFT, L_MRU, L_TAGS, L_DIRTY, L_ACCESSES, L_HITS,
 L_STALE, L_REPL, L_PLRU, L_STAMP, L_CLOCK, L_LATENCY, L_WRITE_BACK, L_NEXT,
 L_WRITE_ALLOCATE, L_MISSES, L_WRITEBACKS, L_INVALIDATIONS, L_EVICTIONS, L_IS_ICACHE,
 L_SHADOW, L_KIND, L_CHIP, L_GROUP, L_PEER, L_OWNER, L_PRESENCE_AT, L_LINES_LO,
 L_LINES_HI, L_FILLS) = range(32)
# L_FILLS: how many lines the level ever took in (never cleared), so that a line known to be
# absent is known to be still absent while it is unchanged (H_ABSENT_*)
# L_KIND: the level's kind, for the events a profile samples (emu.run.profiler): its index here.
# L_CHIP, L_GROUP: a chip level's copy (emu.hw.topology): its chip and the index of chip 0's
# copy (-1 for the other levels); L_PEER: the next chip's copy of the same level, in a ring
# (-1 for the other levels; a level with one copy is its own next), which tells whether a
# chip level has copies on other chips at all (the walk over them uses the presence table).
# L_OWNER, L_PRESENCE_AT: in a machine of several cores, a copy of a private level (its core)
# or of a chip level (its chip), -1 for the other levels, and its level's presence table:
# per bucket of lines (line % PRESENCE_BUCKETS) a mask of the owners whose copy holds a line
# of the bucket, then per owner the index of its copy (emu/hw/model/cache.c), so that a
# coherence walk visits only the copies that hold the line
PRESENCE_BUCKETS = 1 << 14
PRESENCE_BLOCK = PRESENCE_BUCKETS + 32
LEVEL_KINDS = ("L1I", "L1D", "L2", "L3", "ITLB", "DTLB", "TLB")
# L_SHADOW (L1 D only, when a table walker reads below it): per way, memory's copy of a dirty
# line, taken when the line became dirty; 0 when not kept
# L_LINES_LO, L_LINES_HI (an L1 I): the lowest and highest line it ever took in (none while
# HI < LO), so that a store's look for a copy to flag stale skips lines outside them
# ---- maintenance operations (what a dcb*/icbi/CP15 c7/clflush/prefetch does to a line)
OP_CLEAN, OP_FLUSH, OP_INVALIDATE, OP_ZERO, OP_TOUCH, OP_ICACHE_INVALIDATE, \
    OP_ICACHE_INVALIDATE_ALL, OP_ALLOCATE, OP_TOUCH_OUTER = range(9)
SCOPE_L1, SCOPE_ALL = 0, 1

# The largest geometries the model takes. A cache line longer than a page would span pages
# of different translations (no processor modelled here has a line over 512 bytes), and the
# model walks a line word by word where memory's copy of it is kept (a walker below the L1
# D): a 64 MB line read 32 MB past guest RAM, a 1 TB one ran for minutes. Each line costs
# the model several words (tag, dirty, stale, stamp): 4 M lines are 128 MB of state.
MAX_CACHE_LINE = 4096
MAX_TLB_PAGE = 1 << 30
MAX_LINES = 1 << 22
MRU_WAY_BITS = 10       # mru[set] = (line + 1) << 10 | way of the set's most recent use
WAY_MASK = (1 << MRU_WAY_BITS) - 1
LEVEL_RECORD = 32


@dataclass(frozen=True)
class CacheLevel:
    """One cache level's geometry and policies (a row of a processor profile)."""
    name: str
    size: int
    ways: int
    line: int
    replacement: str = "lru"
    write_policy: str = "back"          # back | through
    write_allocate: bool = True
    hit_latency: int = 1

    @property
    def sets(self):
        return self.size // (self.ways * self.line)

    def check(self):
        """Refuse impossible geometries, saying why."""
        def refuse(why):
            raise ValueError(f"cache {self.name}: {why}")
        if self.name not in LEVEL_NAMES + TLB_NAMES:
            refuse(f"name must be one of {', '.join(LEVEL_NAMES + TLB_NAMES)}")
        for key in ("size", "ways", "line"):
            if not isinstance(getattr(self, key), int) or getattr(self, key) <= 0:
                refuse(f"{key} must be a positive whole number, not {getattr(self, key)!r}")
        if self.line & (self.line - 1) or self.line < 4:
            refuse(f"line size {self.line} is not a power of two of at least 4 bytes")
        if self.name in LEVEL_NAMES and self.line > MAX_CACHE_LINE:
            refuse(f"a line of {self.line} bytes is longer than a page: give at most "
                   f"{MAX_CACHE_LINE} (the longest line of any profile is 512)")
        if self.name in TLB_NAMES and self.line > MAX_TLB_PAGE:
            refuse(f"a page of {self.line} bytes: give at most {MAX_TLB_PAGE} (1 GB)")
        if self.size % (self.ways * self.line):
            refuse(f"size {self.size} is not a multiple of ways x line = "
                   f"{self.ways} x {self.line}")
        if self.size // self.line > MAX_LINES:
            refuse(f"{self.size // self.line:,} lines (size / line = {self.size} / "
                   f"{self.line}): the model takes at most {MAX_LINES:,} per level")
        if self.sets & (self.sets - 1):
            refuse(f"{self.sets} sets is not a power of two "
                   f"(size / (ways x line) = {self.size} / ({self.ways} x {self.line}))")
        if self.replacement not in REPLACEMENT:
            refuse(f"replacement {self.replacement!r} is not one of {', '.join(REPLACEMENT)}")
        if self.replacement == "plru" and self.ways & (self.ways - 1):
            refuse(f"tree pseudo-LRU needs a power-of-two number of ways, not {self.ways}")
        if self.ways >= 1024:
            refuse("at most 1023 ways")
        if self.ways > 64 and self.replacement == "plru":
            refuse("tree pseudo-LRU supports at most 64 ways")
        if self.write_policy not in ("back", "through"):
            refuse(f"write policy {self.write_policy!r} is not 'back' or 'through'")
        if not isinstance(self.hit_latency, int) or isinstance(self.hit_latency, bool):
            refuse(f"hit latency must be a whole number of cycles, not {self.hit_latency!r}")
        if self.hit_latency < 0:
            refuse("hit latency cannot be negative")
        return self


ALIGNMENT_KEYS = ("exception_size", "exception_align", "exception_cycles", "split_boundary",
                  "split_cycles")
STORE_QUEUE_KEYS = ("slices", "entries", "service")


def _power_of_two(value):
    return isinstance(value, int) and value > 0 and not value & (value - 1)


def _set_alignment(st, alignment):
    """Write a profile's [alignment] rules into the header (see H_ALIGN_SIZE); None: off."""
    a = dict(alignment or {})
    unknown = set(a) - set(ALIGNMENT_KEYS)
    if unknown:
        raise ValueError(f"alignment: unknown key(s) {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(ALIGNMENT_KEYS)})")
    for key, value in a.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"alignment: {key} must be a whole number >= 0, not {value!r}")
    size, align = a.get("exception_size", 0), a.get("exception_align", 0)
    if size and not (_power_of_two(size) and _power_of_two(align) and 1 < align <= size):
        raise ValueError("alignment: exception_size and exception_align must be powers of "
                         f"two with 1 < exception_align <= exception_size, not {size} and "
                         f"{align}")
    boundary = a.get("split_boundary", 0)
    if boundary and not (_power_of_two(boundary) and boundary >= 2):
        raise ValueError(f"alignment: split_boundary must be a power of two >= 2, not "
                         f"{boundary}")
    st[H_ALIGN_SIZE] = size
    st[H_ALIGN_MASK] = align - 1 if size else 0
    st[H_ALIGN_CYCLES] = a.get("exception_cycles", 0)
    st[H_SPLIT_MASK] = boundary - 1 if boundary else 0
    st[H_SPLIT_CYCLES] = a.get("split_cycles", 0)


def _check_store_queues(store_queues, levels):
    """(slices, entries, service, line shift) of a profile's [l2_store_queues], or zeros.

    The queues sit in front of the L2, fed by a store-through L1 D: every store reaches them."""
    if not store_queues:
        return 0, 0, 0, 0
    q = dict(store_queues)
    missing = [k for k in STORE_QUEUE_KEYS if k not in q]
    unknown = set(q) - set(STORE_QUEUE_KEYS)
    if missing or unknown:
        raise ValueError(f"store queues need exactly {', '.join(STORE_QUEUE_KEYS)}"
                         f"{'; missing ' + ', '.join(missing) if missing else ''}"
                         f"{'; unknown ' + ', '.join(sorted(unknown)) if unknown else ''}")
    for key in STORE_QUEUE_KEYS:
        value = q[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"store queues: {key} must be a positive whole number, "
                             f"not {value!r}")
    names = {lv.name: lv for lv in levels}
    if "L2" not in names:
        raise ValueError("store queues belong to an L2: the levels have none")
    if "L1D" not in names or names["L1D"].write_policy != "through":
        raise ValueError("store queues model the stores a store-through L1 D passes to the "
                         "L2: the L1 D must have write_policy 'through'")
    return q["slices"], q["entries"], q["service"], names["L2"].line.bit_length() - 1


@dataclass(frozen=True)
class Clearing:
    """What a call's start writes (Layout._clearing): the state words to zero (counters and
    the memory system's buffers), those of the buffers alone, and each posted write-back's
    word with its core's cycle word."""
    zero: np.ndarray
    drain: np.ndarray
    maintenance: np.ndarray
    clocks: np.ndarray
    arguments: tuple        # emu_clear_stats's (the arrays above keep its pointers valid)

    @classmethod
    def of(cls, st, zero, drain, maintenance, clocks):
        arrays = [np.array(words, np.int64) for words in (zero, drain, maintenance, clocks)]
        zero, drain, maintenance, clocks = arrays
        return cls(zero, drain, maintenance, clocks,
                   (native.address(st), native.address(zero), len(zero),
                    native.address(maintenance), native.address(clocks), len(maintenance)))


class Layout:
    """Builds the state array for a list of levels (and TLBs), for one core or several.

    With ``cores`` > 1 each core has its own copy of the private levels (L1 I, L1 D, TLBs)
    and all share L2 and L3. The header in the state belongs to the core that runs; each
    core's own header is in ``headers`` (``emu.run.machine`` swaps them between time slices)."""

    def __init__(self, levels, memory_latency=100, seed=1,
                 code_base=0, code_len=0, extra=0, specials=0, wc_buffers=0, wc_line=64,
                 coherent_icache=False, tlbs=(), cores=1, shadow_l1d=False, alignment=None,
                 store_queues=None, segment_words=16, memory_system=None, topology=None):
        levels = [lv.check() for lv in levels]
        tlbs = [t.check() for t in tlbs]
        if any(lv.name in TLB_NAMES for lv in levels) or \
                any(t.name not in TLB_NAMES for t in tlbs):
            raise ValueError("caches are L1I/L1D/L2/L3 and TLBs ITLB/DTLB/TLB")
        if not isinstance(cores, int) or not 1 <= cores <= 32:
            raise ValueError(f"cores must be a whole number from 1 to 32, not {cores!r}")
        self.caches, self.tlbs, self.cores = levels, tlbs, cores
        self.topology = topo = topology or Topology()
        chip_names = set(topo.chip_levels)
        # the levels whose copies keep a presence table (several cores: the private L1s and
        # the chip levels)
        self.shared_copies = [lv.name for lv in levels if cores > 1 and
                              (lv.name in ("L1I", "L1D") or lv.name in chip_names)]
        for lv in levels:
            if lv.name in self.shared_copies and lv.sets > PRESENCE_BUCKETS:
                raise ValueError(f"{lv.name}: {lv.sets:,} sets; a machine of several cores "
                                 f"takes at most {PRESENCE_BUCKETS:,} in it (its coherence "
                                 "walks find a copy's lines by set)")
        chips = topo.chips(cores)
        levels = levels + tlbs
        names = [lv.name for lv in levels]
        if len(set(names)) != len(names):
            raise ValueError(f"cache levels repeat a name: {names}")
        # core 0's levels first (so that one core lays out as it always did), then the
        # private levels of cores 1.. in the same order, then the chip levels of chips 1..
        self.levels = levels + [lv for _ in range(1, cores) for lv in levels
                                if lv.name in PRIVATE]
        self.index = {lv.name: i for i, lv in enumerate(levels)}
        self.core_index = [self.index]
        at = len(levels)
        for _ in range(1, cores):
            own = {}
            for lv in levels:
                if lv.name in PRIVATE:
                    own[lv.name], at = at, at + 1
                else:
                    own[lv.name] = self.index[lv.name]
            self.core_index.append(own)
        chip_copies = {(0, name): self.index[name] for name in chip_names}
        for chip in range(1, chips):
            for lv in levels:
                if lv.name in chip_names:
                    self.levels.append(lv)
                    chip_copies[chip, lv.name], at = at, at + 1
        for core, own in enumerate(self.core_index):
            for name in chip_names:
                own[name] = chip_copies[topo.chip(core), name]
        self.chip_of_level = {i: chip for (chip, _), i in chip_copies.items()}
        size = HEADER + LEVEL_RECORD * len(self.levels)
        offsets = []
        shadows = []
        for lv in self.levels:
            n = lv.sets * lv.ways
            # per slot: tags, dirty bits, stamps, stale flags; per set: PLRU bits, MRU word
            offsets.append((size, size + n, size + 2 * n, size + 3 * n, size + 4 * n,
                            size + 4 * n + lv.sets))
            size += 4 * n + 2 * lv.sets
            shadows.append(size if shadow_l1d and lv.name == "L1D" else 0)
            if shadows[-1]:
                size += n * max(lv.line // 8, 1)
        icount, icost = size, size + code_len + 1
        size += 2 * (code_len + 1)
        sync_static, sync_dynamic = size, size + code_len + 1
        size += 2 * (code_len + 1)
        writers = size
        size += code_len + 1
        self.specials_at = size
        size += 8 * specials
        wc_at = size
        size += WC_WORDS * wc_buffers * cores
        ms = memory_system or memory.MemorySystem()
        sb_n = ms.store_buffer.get("entries", 0)
        fb_n = ms.fill_buffers.get("entries", 0)
        pf_n = ms.prefetcher.get("streams", 0)
        machine_at = size
        size += MACHINE_WORDS
        self.outer_traffic_at = size
        size += OUTER_TRAFFIC_WORDS * cores
        posted_at = size
        size += POSTED_MAX * cores
        sb_at = size
        size += sb_n * cores
        fb_at = size
        size += 3 * fb_n * cores
        pf_at = size
        size += 4 * pf_n * cores
        queue = size
        size += 2 * QUEUE_ENTRIES
        profile_arrays = size
        size += 4 * (code_len + 1) + 1      # and their high-water mark (PROFILE_TOP)
        # per core, executions and cycles of each instruction of one call of that core's own
        # (emu.run.profiler.own_counts: a split by symbol that other cores cannot touch)
        self.own_counts_at = size
        size += 2 * (code_len + 1) * cores
        segments = size                 # per core: 16 segment registers, or the SLB
        size += segment_words * cores
        scratch = size
        size += SCRATCH_WORDS + extra
        queues = _check_store_queues(store_queues, levels)
        sq_at = size
        size += queues[0] * (queues[1] + 1) + SQ_EXTRA   # slots, ring heads, order
        table = size if cores > 1 else 0
        size += 1 + CORE_RECORD * cores + RESOURCES + GLOBALS if cores > 1 else 0
        headers_at = size                       # each core's saved header (a view below)
        size += HEADER * cores
        stamps = size if cores > 1 else 0
        size += STAMP_WORDS * STAMP_ENTRIES if cores > 1 else 0
        seen_at = size
        size += SEEN_ENTRIES * cores if cores > 1 else 0
        self.memos_at = memos_at = size
        size += MEMO_WORDS * cores
        presence = {name: size + PRESENCE_BLOCK * k
                    for k, name in enumerate(self.shared_copies)}
        size += PRESENCE_BLOCK * len(presence)
        st = np.zeros(size, np.int64)
        st[H_SIZE], st[H_NLEVELS] = size, len(self.levels)
        st[H_SEGMENTS] = segments
        st[H_FIRST_LEVEL] = self.index.get("L2", self.index.get("L3", MEMORY))
        st[H_LIMIT] = 1 << 62
        st[H_MEM_LAT] = memory_latency
        st[H_CODE_BASE], st[H_CODE_LEN], st[H_ICOUNT], st[H_ICOST] = code_base, code_len, \
            icount, icost
        st[H_RNG] = seed or 1
        st[H_SPECIALS] = self.specials_at
        st[H_WC], st[H_WC_N], st[H_WC_LINE] = wc_at, wc_buffers, wc_line
        st[H_SCRATCH] = scratch
        st[H_QUEUE] = queue
        st[H_SAMPLES] = profile_arrays
        st[H_INSN_HITS] = profile_arrays + code_len + 1
        st[H_INSN_CYCLES] = profile_arrays + 2 * (code_len + 1)
        st[H_SAMPLES2] = profile_arrays + 3 * (code_len + 1)
        st[H_COHERENT_I] = int(coherent_icache)
        st[H_REG_WIDTH_MASK] = -1
        st[H_CORES] = table
        _set_alignment(st, alignment)
        st[H_SQ], st[H_SQ_SLICES], st[H_SQ_ENTRIES], st[H_SQ_SERVICE], st[H_SQ_SHIFT] = \
            sq_at, *queues
        st[H_ACCESS_EXTRAS] = int((st[H_ALIGN_SIZE] | st[H_SPLIT_MASK] | st[H_SQ_SLICES]) != 0)
        st[H_BLOCK_END_COST] = -1
        st[H_RESERVE_ADDR] = st[H_SWALLOW_ADDR] = st[H_SQ_LINE] = -1
        st[H_SYNC_STATIC], st[H_SYNC_DYNAMIC] = sync_static, sync_dynamic
        st[H_WRITERS], st[H_BLOCK_STORE] = writers, -1
        self._set_memory_system(st, ms, levels, machine_at)
        for i, (lv, (tags, dirty, stamp, stale, plru, mru)) in enumerate(zip(self.levels,
                                                                            offsets)):
            r = HEADER + LEVEL_RECORD * i
            st[r + L_SETS], st[r + L_WAYS] = lv.sets, lv.ways
            st[r + L_SHIFT] = lv.line.bit_length() - 1
            st[r + L_REPL] = REPLACEMENT[lv.replacement]
            st[r + L_WRITE_BACK] = lv.write_policy == "back"
            st[r + L_WRITE_ALLOCATE] = bool(lv.write_allocate)
            st[r + L_LATENCY] = lv.hit_latency
            st[r + L_TAGS], st[r + L_DIRTY], st[r + L_STAMP] = tags, dirty, stamp
            st[r + L_STALE], st[r + L_PLRU], st[r + L_MRU] = stale, plru, mru
            st[r + L_IS_ICACHE] = lv.name == "L1I"
            st[r + L_LINES_LO], st[r + L_LINES_HI] = 0, -1
            st[r + L_KIND] = LEVEL_KINDS.index(lv.name)
            st[r + L_SHADOW] = shadows[i]
            st[r + L_CHIP] = self.chip_of_level.get(i, -1)
            st[r + L_GROUP] = self.index[lv.name] if i in self.chip_of_level else -1
            st[r + L_PEER] = st[r + L_OWNER] = -1
            if lv.name in presence:
                owner = self.chip_of_level[i] if lv.name in chip_names else \
                    next(core for core, own in enumerate(self.core_index)
                         if own[lv.name] == i)
                st[r + L_OWNER], st[r + L_PRESENCE_AT] = owner, presence[lv.name]
                st[presence[lv.name] + PRESENCE_BUCKETS + owner] = i
        for name in chip_names:
            ring = [chip_copies[chip, name] for chip in range(chips)]
            for i, j in zip(ring, ring[1:] + ring[:1]):
                st[HEADER + LEVEL_RECORD * i + L_PEER] = j
        self.headers = st[headers_at:headers_at + HEADER * cores].reshape(cores, HEADER)
        for core, own in enumerate(self.core_index):
            for name, i in own.items():
                st[HEADER + LEVEL_RECORD * i + L_NEXT] = self._next(name, own)
            header = self.headers[core]
            header[:] = st[:HEADER]
            header[H_CORE] = core
            header[H_L1I], header[H_L1D] = own.get("L1I", -1), own.get("L1D", -1)
            header[H_ITLB] = own.get("ITLB", own.get("TLB", -1))
            header[H_DTLB] = own.get("DTLB", own.get("TLB", -1))
            header[H_SEGMENTS] = segments + segment_words * core
            header[H_WC] = wc_at + WC_WORDS * wc_buffers * core
            header[H_SB] = sb_at + sb_n * core
            header[H_POSTED_AT] = posted_at + POSTED_MAX * core
            header[H_FB] = fb_at + 3 * fb_n * core
            header[H_PF] = pf_at + 4 * pf_n * core
            header[H_CHIP] = topo.chip(core)
            header[H_SEEN] = seen_at + SEEN_ENTRIES * core
            header[H_MEMOS] = memos_at + MEMO_WORDS * core
            header[H_CHIPS_PER_MODULE] = topo.chips_per_module
            header[H_ON_MODULE], header[H_OFF_MODULE] = topo.on_module, topo.off_module
            if table:
                record = table + 1 + CORE_RECORD * core
                st[record:record + T_STATUS] = header[[H_ITLB, H_DTLB, H_SEGMENTS]]
        if table:
            st[table] = cores
            g = self.globals = table + 1 + CORE_RECORD * cores + RESOURCES
            st[g + G_HEADERS], st[g + G_STAMPS] = headers_at, stamps
            st[g + G_STAMP_MASK] = STAMP_ENTRIES - 1
            l1d = self.index.get("L1D", st[H_FIRST_LEVEL])
            st[g + G_STAMP_SHIFT] = st[HEADER + LEVEL_RECORD * l1d + L_SHIFT] if l1d >= 0 else 6
        st[:HEADER] = self.headers[0]
        self.state = st
        self._state_at = native.address(st)
        self._gathers = {}          # (core, names) -> the state indices stats() reads
        self._headers_at = headers_at
        self._clearings = {}        # running core -> what clear_stats writes (_clearing)
        # what clear_stats zeroes, in one store each: every level's counters and the
        # header's, then every core's saved header
        fields = (L_ACCESSES, L_HITS, L_MISSES, L_WRITEBACKS, L_INVALIDATIONS, L_EVICTIONS)
        self._counter_slots = np.array(
            [HEADER + LEVEL_RECORD * i + f for i in range(len(self.levels)) for f in fields]
            + list(self.COUNTERS), np.int64)
        self._header_counters = np.array(self.COUNTERS, np.int64)
        # the running core's counts (every level's counters and its header's, without the
        # words that note a place or a state): a call's share of them is their difference
        self.count_words = np.array(
            [w for w in self._counter_slots if w not in self.NOT_COUNTS], np.int64)

    @property
    def running(self):
        """The core whose header is live in the state."""
        return int(self.state[self.globals + G_RUNNING]) if self.cores > 1 else 0

    def switch(self, core):
        """Make ``core`` the running core: its header goes live, the last one's is saved
        (in ``headers``: smp.c switch_core)."""
        if not 0 <= core < self.cores:
            raise ValueError(f"core {core} does not exist (the machine has {self.cores})")
        if self.cores > 1:
            native.lib.emu_switch_core(self._state_at, core)

    def forget_block_memos(self):
        """Every core's block memos (emu/hw/model/hooks.c), whose facts come from the code's
        prefix tables: void when a load rewrites them."""
        for core in range(self.cores):
            at = self.memos_at + MEMO_WORDS * core
            self.state[at + X_BLOCKS:at + MEMO_WORDS] = 0

    PER_CORE = (H_CORE, H_L1I, H_L1D, H_ITLB, H_DTLB, H_SEGMENTS, H_WC, H_SB, H_FB, H_PF,
                H_CHIP, H_SEEN, H_MEMOS, H_ABSENT_LINE, H_ABSENT_FILLS, H_CHANGED_LINE,
                H_CHANGED_IFILLS, H_MAINT_DONE, H_IRQ_OFF_AT, H_POSTED_AT)

    def _set_memory_system(self, st, ms, levels, machine_at):
        """Write a profile's memory-system tables (emu.hw.memory) into the header."""
        st[H_MACHINE] = machine_at
        st[H_PF_LEVEL] = -2                     # no level: the prefetcher is off
        st[H_PF_ACCESS] = st[H_FILL_READY] = -1
        if ms.bus:
            st[H_BUS_BEAT_BYTES] = ms.bus["bytes_per_beat"]
            st[H_BUS_BEAT_MC] = ms.bus_beat_millicycles
            st[H_BUS_PARTIAL_BEATS] = ms.bus.get("partial_write_beats", 1)
            st[H_ADDR_TENURE] = ms.address_tenure_cycles
            if ms.bus.get("write_buffers"):
                st[H_POSTED], st[H_WB_ENTRIES] = POSTED_BUS, ms.bus["write_buffers"]
            st[H_BUS_SECTOR] = ms.bus.get("sector", 0)
        if ms.maintenance:
            st[H_POSTED], st[H_WB_ENTRIES] = POSTED_LATENCY, ms.maintenance["write_backs"]
        st[H_SB_ENTRIES] = ms.store_buffer.get("entries", 0)
        st[H_FB_ENTRIES] = ms.fill_buffers.get("entries", 0)
        st[H_FB_DROP] = int(ms.fill_buffers.get("when_full", "drop") == "drop")
        if ms.prefetcher:
            p = ms.prefetcher
            st[H_PF_STREAMS], st[H_PF_AHEAD] = p["streams"], p["ahead"]
            st[H_PF_DISTANCE] = p["trigger_distance"]
            st[H_PF_PAGE_SHIFT] = p["page"].bit_length() - 1
            st[H_PF_LEVEL] = [lv.name for lv in levels].index(p["level"])
        st[H_MEMSYS] = int(bool(ms.bus or ms.store_buffer or ms.fill_buffers or ms.prefetcher))

    def share_settings(self):
        """Give every core the running core's settings (all but its own levels, registers
        and counters)."""
        keep = list(self.PER_CORE) + list(self.COUNTERS)
        for core in range(self.cores):
            if core != self.running:
                own = self.headers[core][keep]
                self.headers[core] = self.state[:HEADER]
                self.headers[core][keep] = own

    def header(self, core):
        """A core's header as it is now (the live one for the running core)."""
        return self.state[:HEADER] if core == self.running else self.headers[core]

    def _next(self, name, own):
        """L1I/L1D feed from the first unified level; L2 from L3; the last from memory.
        An ITLB/DTLB misses to the unified TLB if there is one, the last TLB to the walker."""
        if name in TLB_NAMES:
            return own["TLB"] if name != "TLB" and "TLB" in own else MEMORY
        below = [n for n in ("L2", "L3") if n in own
                 and LEVEL_NAMES.index(n) > LEVEL_NAMES.index(name)]
        return own[below[0]] if below else MEMORY

    STAT_FIELDS = ("accesses", "hits", "misses", "writebacks", "invalidations", "evictions")
    TLB_FIELDS = ("lookups", "hits", "misses", "invalidations")
    FIELD_OF = {"accesses": L_ACCESSES, "lookups": L_ACCESSES, "hits": L_HITS,
                "misses": L_MISSES, "writebacks": L_WRITEBACKS,
                "invalidations": L_INVALIDATIONS, "evictions": L_EVICTIONS}

    def _read(self, st, core, levels, names):
        """{level name: {name: counter}} for ``levels`` of ``core``, in one gather."""
        st = self.state if st is None else st
        key = (core, names)
        if key not in self._gathers:
            words = [w for _, w in self.counter_words(core, levels, names)]
            self._gathers[key] = np.array(words, np.int64).reshape(len(levels), len(names))
        values = st[self._gathers[key]].tolist()
        return {lv.name: dict(zip(names, row)) for lv, row in zip(levels, values)}

    def counter_words(self, core, levels, names):
        """[(level name, the state words of its counters ``names``)] for ``levels`` of
        ``core``: what stats() and a call's Run (emu.run.result) gather."""
        fields = tuple(self.FIELD_OF[name] for name in names)
        own = self.core_index[core]
        return [(lv.name, np.array([HEADER + LEVEL_RECORD * own[lv.name] + f for f in fields],
                                   np.int64)) for lv in levels]

    def forget_prefetch_streams(self):
        """Every core's stream prefetcher follows no stream (memsys.c, stream_prefetch): a
        cold start does not depend on which pages the code before it missed in."""
        st = self.state
        for core in range(self.cores):
            h = self.header(core)
            if h[H_PF_STREAMS]:
                st[h[H_PF]:h[H_PF] + 4 * h[H_PF_STREAMS]] = 0
                h[H_PF_LAST] = h[H_PF_CLOCK] = 0

    def drain_memory_system(self):
        """Nothing in flight: store buffers empty, fill buffers and write-combining buffers
        free, the bus idle (for every core)."""
        self.state[self.clearing().drain] = 0

    def stats(self, st=None, core=0):
        """{level name: {accesses, hits, misses, writebacks, invalidations, evictions}}
        of one core's levels (the shared ones included)."""
        return self._read(st, core, self.caches, self.STAT_FIELDS)

    def tlb_stats(self, st=None, core=0):
        """{TLB name: {lookups, hits, misses, invalidations}} of one core."""
        return self._read(st, core, self.tlbs, self.TLB_FIELDS)

    COUNTERS = (H_INSNS, H_CYCLES, H_STALE, H_MEM_READS, H_MEM_WRITES, H_WC_FLUSHES,
                H_WC_PARTIAL, H_NT_STORES, H_UNCOUNTED, H_STOPPED, H_WALKS, H_PRIMARY_HITS,
                H_SECONDARY_HITS, H_PAGE_FAULTS, H_FAULT_EA, H_FAULT_WRITE, H_FAULT_FETCH,
                H_FAULT_PC, H_STALE_PC, H_STALE_ADDR, H_TRANSFERS, H_SNOOP_INVALIDATIONS,
                H_SERIAL_OPS, H_SERIAL_WAIT, H_FAULT_STATUS, H_FAULT_L1_ADDR, H_FAULT_L2_ADDR,
                H_ALIGN_EXCEPTIONS, H_SPLITS, H_SQ_STORES, H_SQ_STALLS, H_SQ_STALL_CYCLES,
                H_OUTER_SYNCS, H_OUTER_LINE_OPS, H_OUTER_WAIT, H_SYNC_WAITS, H_PARKS,
                H_SPIN_WAIT, H_ORDER_STALLS, H_ORDER_STALL_CYCLES, H_HOST_STOP, H_BUS_BUSY,
                H_BUS_WAIT, H_SB_STALLS, H_SB_STALL_CYCLES, H_FB_WAITS, H_PREFETCHES,
                H_PREFETCHES_DROPPED, H_PREFETCH_LATE, H_PREFETCH_LATE_CYCLES, H_HW_PREFETCHES,
                H_UNCACHED_LOADS, H_UNCACHED_STORES, H_WC_WAIT, H_EVENT_PENDING, H_EVENTS,
                H_EVENT_PENDING2, H_INTERVENTIONS, H_BAT_HITS, H_SLICES, H_ADDRESS_ONLY,
                H_MAINT_WAIT, H_IRQ_OFF_CYCLES, H_OUTER_DRAIN_WAIT)

    # words of COUNTERS that are not counts: where a fault or stale fetch was, stop flags
    NOT_COUNTS = (H_STOPPED, H_FAULT_EA, H_FAULT_WRITE, H_FAULT_FETCH, H_FAULT_PC, H_STALE_PC,
                  H_STALE_ADDR, H_FAULT_STATUS, H_FAULT_L1_ADDR, H_FAULT_L2_ADDR, H_HOST_STOP,
                  H_EVENT_PENDING, H_EVENT_PENDING2)

    def clearing(self):
        """The state words clear_stats and drain_memory_system write, for the running core
        (a core's header words are live for it, saved for the others): the places of the
        memory system's buffers are fixed when the machine is made, so each machine works
        them out once per running core."""
        running = self.running
        plan = self._clearings.get(running)
        if plan is None:
            plan = self._clearings[running] = self._clearing_for(running)
        return plan

    def _clearing_for(self, running):
        st = self.state

        def word(core, w):
            return w if core == running else self._headers_at + HEADER * core + w
        cores = range(self.cores)
        counters = list(self._counter_slots)
        counters += [self._headers_at + HEADER * k + w for k in cores for w in self.COUNTERS]
        if st[H_CORES]:
            resources = st[H_CORES] + 1 + CORE_RECORD * self.cores
            counters += range(resources, resources + RESOURCES)
        counters += range(st[H_SQ], st[H_SQ] + st[H_SQ_SLICES] * (st[H_SQ_ENTRIES] + 1)
                          + SQ_EXTRA)
        drain = list(range(st[H_MACHINE], st[H_MACHINE] + MACHINE_WORDS))
        drain += range(self.outer_traffic_at,       # the PL310's transfers in flight
                       self.outer_traffic_at + OUTER_TRAFFIC_WORDS * self.cores)
        for core in cores:
            h = self.header(core)
            drain += [word(core, H_SB_COUNT), word(core, H_SB_HEAD), word(core, H_FB_LIVE)]
            drain += range(h[H_FB], h[H_FB] + 3 * h[H_FB_ENTRIES])
            drain += [h[H_WC] + WC_WORDS * k + 3 for k in range(h[H_WC_N])]
        # each core's posted write-backs: when all are done, and each slot's
        posted = [(word(k, H_MAINT_DONE), word(k, H_CYCLES)) for k in cores]
        posted += [(self.header(k)[H_POSTED_AT] + j, word(k, H_CYCLES)) for k in cores
                   for j in range(POSTED_MAX)]
        return Clearing.of(st, counters + drain, drain, [w for w, _ in posted],
                           [c for _, c in posted])

    def clear_stats(self):
        """Zero every counter: each level's, the running header's and every core's.

        Maintenance still in flight when the clock restarts stays in flight: its time, on
        the new clock (the next call taken to start where the last one ended); the cycle
        clock restarts at 0: store queues, the store buffer, fill buffers and the bus start
        the call drained (what the caches hold stays); a profiler's samples start again.
        One library call (emu/hw/model/call.c), which Machine.call makes inside its own."""
        native.lib.emu_clear_stats(*self.clearing().arguments)


# ------------------------------------------------------------------ the model (native code)
#
# The model itself is C (emu/hw/model/cache.c, a line-for-line rendering of the design above),
# run by Unicorn's hooks without Python. These functions call the same C functions on a
# state array from Python: CacheModel and the tests feed accesses by hand through them.

def _call(name, st, *args):
    return int(getattr(native.lib, name)(native.address(st), *args))


def access(st, level, addr, write):
    """One request for the line holding ``addr`` at ``level``.

    Returns the load-to-use latency of the level that supplied the data (the level's own
    latency on a hit); a write that needs no fill returns this level's latency (no stall).
    Victim write-backs and write-throughs are carried out after the demand request."""
    return _call("emu_access", st, level, addr, int(write))


def data_access(st, addr, size, write):
    """A load or store of ``size`` bytes, once per line it touches; returns stall cycles."""
    return _call("emu_data_access", st, addr, size, int(write))


def fetch(st, addr, size, pc):
    """Instruction fetch of [addr, addr+size), once per I-cache line; checks coherence (a
    stale fetch gets bytes older than the last store to them). Returns stall cycles."""
    return _call("emu_fetch", st, addr, size, pc)


def account(st, offset, cycles):
    """Charge cycles to the instruction at ``offset`` in the code region (-1: outside it).

    With the profiler on (``H_PROFILE_PERIOD`` > 0) the instruction gets the cycles in its
    own account and a sample each time the cycle count passes a multiple of the period:
    deterministic PC sampling, as a timer interrupt every N cycles would see it."""
    native.lib.emu_account(native.address(st), offset, cycles)


def snoop(st, addr, op):
    """What one core's request does to the other cores' L1 D copies of the line at ``addr``
    (multi-core only; the protocol is MESI-like, with the L1 D line's dirty bit as M):

    * a read (OP_TOUCH) finds a dirty copy: it is written back to the shared level below
      and stays, clean (a transfer: the reader then fills from the shared level);
    * a write (OP_FLUSH) or a flush: a dirty copy is written back, every copy invalidated;
    * a clean (OP_CLEAN, e.g. dcbst) writes a dirty copy back; an invalidate drops copies.

    So a line dirty in one L1 D is in no other. Write-backs reach the shared level before
    the requester's own access goes on."""
    native.lib.emu_snoop(native.address(st), addr, op)


def serialise(st, resource, service):
    """An instruction that needs a resource all cores share and only one may use at a time
    (one tlbie in flight in the machine; the L2 controller's cache sync): it waits until the
    resource is free, by this core's cycle clock, then holds it ``service`` cycles.
    Returns the wait. One core never waits for itself.

    Cores run in time slices (Machine.run_parallel), and a core's bookings during its
    slice stand when a core behind it in time runs next: a quantum longer than the time
    between a core's uses of the resource serialises more than the hardware would."""
    return _call("emu_serialise", st, resource, service)


# PL310 (L2C-310) register offsets (PL310 TRM, ARM DDI 0246, "Register summary"; the same
# in Linux arch/arm/include/asm/hardware/cache-l2x0.h): cache sync, the dummy sync Linux
# writes instead on erratum 753970, and the three maintenance operations by physical address
OUTER_CACHE_SYNC, OUTER_DUMMY_SYNC = 0x730, 0x740
OUTER_LINE_OPS = ((0x770, OP_INVALIDATE), (0x7B0, OP_CLEAN), (0x7F0, OP_FLUSH))


def outer_cache_write(st, offset, value):
    """A store to the outer cache controller's register at ``offset``: a cache sync, or a
    clean / invalidate / clean+invalidate of the L2 line holding physical address ``value``.
    The controller takes one operation at a time from all cores (``serialise``).
    Returns the cycles the store waits: for the controller, then for the operation, and
    for memory when the line is written back. With H_OUTER_TRAFFIC (a profile's
    sync_waits_for_buffers) a sync is also done no sooner than the controller's buffers are
    empty of every core's DRAM transfers sent before it (a line operation performs that
    sync first): the wait counted in H_OUTER_DRAIN_WAIT. Other registers are not
    modelled: a store to them costs nothing more."""
    return _call("emu_outer_cache_write", st, offset, value)


def alignment(st, addr, size):
    """Cycles a misaligned access costs beyond the cache model (0 when aligned or off).

    An access of exactly H_ALIGN_SIZE bytes with an address bit of H_ALIGN_MASK set takes an
    alignment exception (64-bit PowerPC: an 8-byte load or store not 4-byte aligned), whose
    kernel handler emulates it; otherwise an access crossing an aligned H_SPLIT_MASK + 1
    boundary is done as two accesses by the hardware. Each is counted."""
    return _call("emu_alignment", st, addr, size)


def store_queue(st, addr, size, now):
    """A store enters the store queue of the L2 slice its line maps to, at cycle ``now``.

    Returns the cycles the core stalls. The model (POWER4, Mackerras 2003 section 3.1): a
    store-through L1 D sends every store to the L2, which is split into H_SQ_SLICES slices,
    each with its own queue. Line n goes to slice n mod slices (consecutive lines rotate
    through the slices; the real slice hash is not public). A slice has H_SQ_ENTRIES
    entries; a store holds one for H_SQ_SERVICE cycles from when it is accepted. A store
    that finds every entry of its slice busy stalls the core until the first one frees.
    No store gathering. A store that crosses a line boundary takes an entry per line."""
    return _call("emu_store_queue", st, addr, size, now)


def drop_line(st, level, line, way):
    """Empty the way holding ``line`` (no write-back, nothing counted)."""
    native.lib.emu_drop_line(native.address(st), level, line, way)


def invalidate_level(st, level):
    """Every line of a level invalid (iciallu, tlbia); each valid one counted."""
    native.lib.emu_invalidate_level(native.address(st), level)


def _find(st, r, line):
    """The way holding a line in its set (the level's record at ``r``), or -1."""
    return _call("emu_find", st, r, line)


def _maintain_level(st, level, addr, op):
    """Clean / flush / invalidate one line at one level. Returns 1 if it wrote data back."""
    return _call("emu_maintain_level", st, level, addr, op)


def maintain(st, addr, op, scope):
    """The architectural effect of one cache-maintenance instruction on its line.

    Returns stall cycles: a write-back a maintenance instruction forces is waited for
    (the instruction completes when the data has reached the next level)."""
    return _call("emu_maintain", st, addr, op, scope)


def nontemporal_store(st, addr, size):
    """A movnt* store: evict the line from every cache (writing it back if dirty), then
    merge the bytes into a write-combining buffer: no allocation, no read for ownership.
    A buffer holds one line; it is written out when full, when a new line needs a buffer and
    none is free (the oldest goes), or at sfence. Buffers count bytes (stores of a copy do not
    overlap)."""
    return _call("emu_nontemporal_store", st, addr, size)


def drain_write_combining(st):
    """sfence: every write-combining buffer goes out; the wait until the last transfer ends
    (0 without a bus model)."""
    return _call("emu_drain_write_combining", st)


class CacheModel:
    """The model without an emulator: feed it accesses by hand (tests, exercises).

    >>> m = CacheModel([CacheLevel("L1D", 128, 2, 32)])
    >>> m.load(0); m.load(0); m.stats()["L1D"]["hits"]
    1
    """

    def __init__(self, levels, memory_latency=100, **options):
        self.layout = Layout(levels, memory_latency=memory_latency,
                             **options)
        self.state = self.layout.state

    def on(self, core):
        """The next accesses are core ``core``'s (with ``cores`` > 1): ``m.on(1).load(0)``."""
        self.layout.switch(core)
        return self

    def load(self, addr, size=4):
        st = self.state
        return int(alignment(st, addr, size) + data_access(st, addr, size, False))

    def store(self, addr, size=4, at=None):
        """A store; with store queues, it enters them at cycle ``at`` (default: the
        model's cycle count, which nothing here advances)."""
        st = self.state
        stall = alignment(st, addr, size) + data_access(st, addr, size, True)
        if st[H_SQ_SLICES]:
            now = int(st[H_CYCLES]) if at is None else at
            stall += store_queue(st, addr, size, now + stall)
        return int(stall)

    def store_queue_stats(self):
        st = self.state
        return {"stores": int(st[H_SQ_STORES]), "stalls": int(st[H_SQ_STALLS]),
                "stall_cycles": int(st[H_SQ_STALL_CYCLES])}

    def alignment_stats(self):
        return {"exceptions": int(self.state[H_ALIGN_EXCEPTIONS]),
                "splits": int(self.state[H_SPLITS])}

    def fetch(self, addr, size=4):
        return int(fetch(self.state, addr, size, addr))

    def maintain(self, addr, op, scope=SCOPE_ALL):
        return int(maintain(self.state, addr, op, scope))

    def nontemporal_store(self, addr, size=8):
        return int(nontemporal_store(self.state, addr, size))

    def sfence(self):
        drain_write_combining(self.state)

    def stats(self, core=None):
        return self.layout.stats(core=self.layout.running if core is None else core)

    def coherence(self, core=None):
        """What a core's accesses did to the other cores: transfers, invalidations, and the
        lines other chips supplied (interventions, emu.hw.topology)."""
        h = self.layout.header(self.layout.running if core is None else core)
        return {"transfers": int(h[H_TRANSFERS]), "invalidations": int(h[H_SNOOP_INVALIDATIONS]),
                "interventions": int(h[H_INTERVENTIONS])}

    @property
    def stale_fetches(self):
        return int(self.state[H_STALE])

    @property
    def memory_traffic(self):
        return {"reads": int(self.state[H_MEM_READS]), "writes": int(self.state[H_MEM_WRITES])}
