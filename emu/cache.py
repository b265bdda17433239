"""The cache model: levels, replacement, write policies, maintenance, I/D coherence.

Every guest memory access runs through this model inside a native (numba) hook, so its state is
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

The functions here are plain ``@njit`` functions of that array, so tests can call them directly
and check hit/miss counts by hand (``CacheModel`` wraps them for that), while ``emu.native``
calls the same functions from the Unicorn hooks.

Levels are non-inclusive, as in pycachesim: a miss at level k asks level k+1 (the level's
``next``), a dirty victim is written to level k+1, and nothing is evicted from above when a
level below evicts. ``accesses`` counts every request a level receives (reads from the level
above, write-throughs and write-backs), so ``accesses == hits + misses``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

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
# MMU (emu.mmu): mode (0 off), TLB level indices, SDR1, the 16 segment registers' offset, the
# host address of guest RAM, walk statistics, the first page fault, the walk's fixed cost
H_MMU, H_ITLB, H_DTLB, H_SDR1, H_SEGMENTS, H_RAM_PTR, H_RAM_SIZE = range(46, 53)
H_WALKS, H_PRIMARY_HITS, H_SECONDARY_HITS, H_PAGE_FAULTS = range(53, 57)
H_FAULT_EA, H_FAULT_WRITE, H_FAULT_FETCH, H_WALK_CYCLES, H_FAULT_PC = range(57, 62)
# software-loaded TLBs (emu.softtlb): the CPU's MSR[IR|DR] as the model last saw them
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
H_SQ_STORES, H_SQ_STALLS, H_SQ_STALL_CYCLES, H_BLOCK_END_COST = range(86, 90)
# 64-bit hashed page table (emu.hash64): the SLB's number of entries. The SLB lives where the
# 32-bit segment registers do (H_SEGMENTS): two words per entry, ESID|V and VSID|flags
H_SLB_ENTRIES = 90
# the alignment rules or the store queues above configured: one test on
# the hot path for the profiles that have none
H_ACCESS_EXTRAS = 91
# an outer cache controller's maintenance registers (PL310, outer_cache_write): where they are
# mapped, the cycles a cache sync and a line operation hold the controller, and counters
H_OUTER_BASE, H_OUTER_SYNC_CYCLES, H_OUTER_LINE_CYCLES = range(92, 95)
H_OUTER_SYNCS, H_OUTER_LINE_OPS, H_OUTER_WAIT = range(95, 98)
# the last block the block hook charged (its address and size in bytes): a time slice of
# Machine.run_parallel may end inside it, and the instructions it did not run are given back
H_BLOCK_START, H_BLOCK_SIZE = 98, 99
QUEUE_ENTRIES = 256
HEADER = 104

# ---- the core table (multi-core only): the core count, then per core the level indices of
# its private L1 I, L1 D, ITLB and DTLB (-1: none) and where its segment registers (or SLB)
# are, then each serialising resource's busy-until time in cycles
T_L1I, T_L1D, T_ITLB, T_DTLB, T_SEGMENTS = range(5)
CORE_RECORD = 5
RESOURCES = 4
# the resources: one for the instructions a profile's [smp] list names (the tlbie of the
# whole machine), one for the outer cache controller
RESOURCE_SERIAL, RESOURCE_OUTER_CACHE = 0, 1
PRIVATE = ("L1I", "L1D") + TLB_NAMES    # per core; L2 and L3 are shared by all cores

# ---- per-level record fields (an L1 hit reads only the first eight)
(L_SETS, L_WAYS, L_SHIFT, L_MRU, L_TAGS, L_DIRTY, L_ACCESSES, L_HITS,
 L_STALE, L_REPL, L_PLRU, L_STAMP, L_CLOCK, L_LATENCY, L_WRITE_BACK, L_NEXT,
 L_WRITE_ALLOCATE, L_MISSES, L_WRITEBACKS, L_INVALIDATIONS, L_EVICTIONS, L_IS_ICACHE,
 L_SHADOW) = range(23)
# L_SHADOW (L1 D only, when a table walker reads below it): per way, memory's copy of a dirty
# line, taken when the line became dirty; 0 when not kept
# ---- maintenance operations (what a dcb*/icbi/CP15 c7/clflush/prefetch does to a line)
OP_CLEAN, OP_FLUSH, OP_INVALIDATE, OP_ZERO, OP_TOUCH, OP_ICACHE_INVALIDATE, \
    OP_ICACHE_INVALIDATE_ALL, OP_ALLOCATE, OP_TOUCH_OUTER = range(9)
SCOPE_L1, SCOPE_ALL = 0, 1

MRU_WAY_BITS = 10       # mru[set] = (line + 1) << 10 | way of the set's most recent use
WAY_MASK = (1 << MRU_WAY_BITS) - 1
LEVEL_RECORD = 24


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
        if self.size % (self.ways * self.line):
            refuse(f"size {self.size} is not a multiple of ways x line = "
                   f"{self.ways} x {self.line}")
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


class Layout:
    """Builds the state array for a list of levels (and TLBs), for one core or several.

    With ``cores`` > 1 each core has its own copy of the private levels (L1 I, L1 D, TLBs)
    and all share L2 and L3. The header in the state belongs to the core that runs; each
    core's own header is in ``headers`` (``emu.machine`` swaps them between time slices)."""

    def __init__(self, levels, memory_latency=100, seed=1,
                 code_base=0, code_len=0, extra=0, specials=0, wc_buffers=0, wc_line=64,
                 coherent_icache=False, tlbs=(), cores=1, shadow_l1d=False, alignment=None,
                 store_queues=None, segment_words=16):
        levels = [lv.check() for lv in levels]
        tlbs = [t.check() for t in tlbs]
        if any(lv.name in TLB_NAMES for lv in levels) or \
                any(t.name not in TLB_NAMES for t in tlbs):
            raise ValueError("caches are L1I/L1D/L2/L3 and TLBs ITLB/DTLB/TLB")
        if not isinstance(cores, int) or not 1 <= cores <= 32:
            raise ValueError(f"cores must be a whole number from 1 to 32, not {cores!r}")
        self.caches, self.tlbs, self.cores = levels, tlbs, cores
        levels = levels + tlbs
        names = [lv.name for lv in levels]
        if len(set(names)) != len(names):
            raise ValueError(f"cache levels repeat a name: {names}")
        # core 0's levels first (so that one core lays out as it always did), then the
        # private levels of cores 1.. in the same order
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
        self.specials_at = size
        size += 8 * specials
        wc_at = size
        size += 3 * wc_buffers * cores
        queue = size
        size += 2 * QUEUE_ENTRIES
        profile_arrays = size
        size += 3 * (code_len + 1)
        segments = size                 # per core: 16 segment registers, or the SLB
        size += segment_words * cores
        scratch = size
        size += 8 + extra
        queues = _check_store_queues(store_queues, levels)
        sq_at = size
        size += queues[0] * queues[1]
        table = size if cores > 1 else 0
        size += 1 + CORE_RECORD * cores + RESOURCES if cores > 1 else 0
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
        st[H_COHERENT_I] = int(coherent_icache)
        st[H_REG_WIDTH_MASK] = -1
        st[H_CORES] = table
        _set_alignment(st, alignment)
        st[H_SQ], st[H_SQ_SLICES], st[H_SQ_ENTRIES], st[H_SQ_SERVICE], st[H_SQ_SHIFT] = \
            sq_at, *queues
        st[H_ACCESS_EXTRAS] = int((st[H_ALIGN_SIZE] | st[H_SPLIT_MASK] | st[H_SQ_SLICES]) != 0)
        st[H_BLOCK_END_COST] = -1
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
            st[r + L_SHADOW] = shadows[i]
        self.headers = np.zeros((cores, HEADER), np.int64)
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
            header[H_WC] = wc_at + 3 * wc_buffers * core
            if table:
                st[table + 1 + CORE_RECORD * core:table + 1 + CORE_RECORD * (core + 1)] = \
                    header[[H_L1I, H_L1D, H_ITLB, H_DTLB, H_SEGMENTS]]
        if table:
            st[table] = cores
        st[:HEADER] = self.headers[0]
        self.state, self.running = st, 0

    def switch(self, core):
        """Make ``core`` the running core: its header goes live, the last one's is saved."""
        if core != self.running:
            self.headers[self.running] = self.state[:HEADER]
            self.state[:HEADER] = self.headers[core]
            self.running = core

    PER_CORE = (H_CORE, H_L1I, H_L1D, H_ITLB, H_DTLB, H_SEGMENTS, H_WC)

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

    def stats(self, st=None, core=0):
        """{level name: {accesses, hits, misses, writebacks, invalidations, evictions}}
        of one core's levels (the shared ones included)."""
        st = self.state if st is None else st
        out = {}
        for lv in self.caches:
            r = HEADER + LEVEL_RECORD * self.core_index[core][lv.name]
            out[lv.name] = {"accesses": int(st[r + L_ACCESSES]), "hits": int(st[r + L_HITS]),
                            "misses": int(st[r + L_MISSES]),
                            "writebacks": int(st[r + L_WRITEBACKS]),
                            "invalidations": int(st[r + L_INVALIDATIONS]),
                            "evictions": int(st[r + L_EVICTIONS])}
        return out

    def tlb_stats(self, st=None, core=0):
        """{TLB name: {lookups, hits, misses, invalidations}} of one core."""
        st = self.state if st is None else st
        out = {}
        for lv in self.tlbs:
            r = HEADER + LEVEL_RECORD * self.core_index[core][lv.name]
            out[lv.name] = {"lookups": int(st[r + L_ACCESSES]), "hits": int(st[r + L_HITS]),
                            "misses": int(st[r + L_MISSES]),
                            "invalidations": int(st[r + L_INVALIDATIONS])}
        return out

    COUNTERS = (H_INSNS, H_CYCLES, H_STALE, H_MEM_READS, H_MEM_WRITES, H_WC_FLUSHES,
                H_WC_PARTIAL, H_NT_STORES, H_UNCOUNTED, H_STOPPED, H_WALKS, H_PRIMARY_HITS,
                H_SECONDARY_HITS, H_PAGE_FAULTS, H_FAULT_EA, H_FAULT_WRITE, H_FAULT_FETCH,
                H_FAULT_PC, H_STALE_PC, H_STALE_ADDR, H_TRANSFERS, H_SNOOP_INVALIDATIONS,
                H_SERIAL_OPS, H_SERIAL_WAIT, H_FAULT_STATUS, H_FAULT_L1_ADDR, H_FAULT_L2_ADDR,
                H_ALIGN_EXCEPTIONS, H_SPLITS, H_SQ_STORES, H_SQ_STALLS, H_SQ_STALL_CYCLES,
                H_OUTER_SYNCS, H_OUTER_LINE_OPS, H_OUTER_WAIT)

    def clear_stats(self):
        """Zero every counter: each level's, the running header's and every core's."""
        st = self.state
        for i in range(len(self.levels)):
            r = HEADER + LEVEL_RECORD * i
            for field in (L_ACCESSES, L_HITS, L_MISSES, L_WRITEBACKS, L_INVALIDATIONS,
                          L_EVICTIONS):
                st[r + field] = 0
        for header in [st[:HEADER]] + list(self.headers):
            header[list(self.COUNTERS)] = 0
        if st[H_CORES]:
            resources = st[H_CORES] + 1 + CORE_RECORD * self.cores
            st[resources:resources + RESOURCES] = 0
        # the cycle clock restarts at 0: store queues start the call drained
        st[st[H_SQ]:st[H_SQ] + st[H_SQ_SLICES] * st[H_SQ_ENTRIES]] = 0
        if st[H_PROFILE_PERIOD] > 0:
            n = st[H_CODE_LEN] + 1
            for h in (H_SAMPLES, H_INSN_HITS, H_INSN_CYCLES):
                st[st[h]:st[h] + n] = 0
            st[H_NEXT_SAMPLE] = st[H_PROFILE_PERIOD]


# ------------------------------------------------------------------ the model (native code)

@intrinsic
def _pointer(typingctx, address):
    """An int64 host address as a pointer (for carray over guest RAM)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))
    return types.voidptr(types.int64), codegen


@njit(cache=True, inline='always')
def _random(st):
    """xorshift64: the 'random' replacement policy, seeded and so deterministic."""
    x = st[H_RNG]
    x ^= (x << 13)
    x ^= (x >> 7) & 0x01FFFFFFFFFFFFFF
    x ^= (x << 17)
    st[H_RNG] = x
    return x & 0x7FFFFFFFFFFFFFFF


@njit(cache=True, inline='always')
def _plru_touch(st, r, s, way):
    """Tree PLRU: point every node on the way's path away from it."""
    ways = st[r + L_WAYS]
    if ways < 2:
        return
    at = st[r + L_PLRU] + s
    bits = st[at]
    node = 1
    span = ways
    while span > 1:
        span >>= 1
        if way & span:
            bits &= ~(1 << node)          # bit 0: the next victim is on the left
            node = 2 * node + 1
        else:
            bits |= (1 << node)           # bit 1: the next victim is on the right
            node = 2 * node
    st[at] = bits


@njit(cache=True, inline='always')
def _plru_victim(st, r, s):
    ways = st[r + L_WAYS]
    bits = st[st[r + L_PLRU] + s]
    node = 1
    way = 0
    span = ways
    while span > 1:
        span >>= 1
        if (bits >> node) & 1:
            way += span
            node = 2 * node + 1
        else:
            node = 2 * node
    return way


@njit(cache=True, inline='always')
def _find(st, r, line):
    """The way holding a line in its set, or -1."""
    ways = st[r + L_WAYS]
    first = st[r + L_TAGS] + (line & (st[r + L_SETS] - 1)) * ways
    tag = line + 1
    for w in range(ways):
        if st[first + w] == tag:
            return w
    return -1


@njit(cache=True, inline='always')
def _touch(st, r, s, way, tag):
    """A use of a way: the set's most-recent-use record and the replacement state.

    Using the set's most recent line again changes no policy's state (LRU order, PLRU bits,
    FIFO order, random), which is what makes the shortcut in _hit exact."""
    st[st[r + L_MRU] + s] = (tag << MRU_WAY_BITS) | way
    repl = st[r + L_REPL]
    if repl == 0:
        clock = st[r + L_CLOCK] + 1
        st[r + L_CLOCK] = clock
        st[st[r + L_STAMP] + s * st[r + L_WAYS] + way] = clock
    elif repl == 1:
        _plru_touch(st, r, s, way)


@njit(cache=True, inline='always')
def _hit(st, r, line, s):
    """The way holding ``line`` in set ``s``, its use recorded; -1 if absent. Counts nothing.

    The set's most recent line is found without a search. This is the model's hottest
    function: it is inlined into its callers."""
    tag = line + 1
    m = st[st[r + L_MRU] + s]
    if m >> MRU_WAY_BITS == tag:
        return m & WAY_MASK
    ways = st[r + L_WAYS]
    first = st[r + L_TAGS] + s * ways
    for way in range(ways):
        if st[first + way] == tag:
            _touch(st, r, s, way, tag)
            return way
    return -1


@njit(cache=True, inline='always')
def _victim(st, r, s):
    """An invalid way if there is one, else the policy's choice."""
    ways = st[r + L_WAYS]
    first = s * ways
    tags = st[r + L_TAGS]
    for w in range(ways):
        if st[tags + first + w] == 0:
            return w
    repl = st[r + L_REPL]
    if repl == 1:
        return _plru_victim(st, r, s)
    if repl == 3:
        return _random(st) % ways
    stamps = st[r + L_STAMP] + first          # LRU: oldest use; FIFO: oldest fill
    best = 0
    for w in range(1, ways):
        if st[stamps + w] < st[stamps + best]:
            best = w
    return best


@njit(cache=True, inline='always')
def _send_write(st, level, addr):
    """A write that stalls nobody (write-through, write-around, victim write-back): queued
    for the level below, or counted as a memory write."""
    if level == MEMORY:
        st[H_MEM_WRITES] += 1
        return
    n = st[H_QUEUE_N]
    st[st[H_QUEUE] + 2 * n] = level
    st[st[H_QUEUE] + 2 * n + 1] = addr
    st[H_QUEUE_N] = n + 1


@njit(cache=True, inline='always')
def _write_back(st, r, line):
    """A dirty line leaves ``level`` for the level below."""
    st[r + L_WRITEBACKS] += 1
    addr = line << st[r + L_SHIFT]
    _send_write(st, st[r + L_NEXT], addr)


@njit(cache=True)
def _snapshot(st, r, slot, line):
    """A clean L1 D line is about to become dirty: keep memory's copy of it for a table
    walker that reads below the L1 D. (A memory hook runs before the store, so guest RAM
    still holds the old bytes.)"""
    words = max((1 << st[r + L_SHIFT]) >> 3, 1)
    ram = carray(_pointer(st[H_RAM_PTR] + (line << st[r + L_SHIFT])), (words,), np.int64)
    at = st[r + L_SHADOW] + slot * words
    for k in range(words):
        st[at + k] = ram[k]


@njit(cache=True, inline='always')
def _make_dirty(st, r, slot, line):
    d = st[r + L_DIRTY] + slot
    if st[d] == 0 and st[r + L_SHADOW]:
        _snapshot(st, r, slot, line)
    st[d] = 1


@njit(cache=True, inline='always')
def _install(st, level, r, s, line):
    """Put a line into set ``s``: choose a victim, write it back if dirty; returns the way."""
    ways = st[r + L_WAYS]
    way = _victim(st, r, s)
    slot = s * ways + way
    old = st[st[r + L_TAGS] + slot]
    if old != 0:
        st[r + L_EVICTIONS] += 1
        if st[st[r + L_DIRTY] + slot]:
            _write_back(st, r, old - 1)
    st[st[r + L_TAGS] + slot] = line + 1
    st[st[r + L_DIRTY] + slot] = 0
    st[st[r + L_STALE] + slot] = 0
    if st[r + L_REPL] == 2:                  # FIFO: the fill time is what counts
        st[r + L_CLOCK] += 1
        st[st[r + L_STAMP] + slot] = st[r + L_CLOCK]
    _touch(st, r, s, way, line + 1)
    return way


@njit(cache=True, inline='always')
def _level(st, level, addr, write):
    """This level's part of a request; True when the line must be filled from below."""
    r = HEADER + LEVEL_RECORD * level
    shift = st[r + L_SHIFT]
    line = addr >> shift
    s = line & (st[r + L_SETS] - 1)
    ways = st[r + L_WAYS]
    st[r + L_ACCESSES] += 1
    way = _hit(st, r, line, s)
    if way >= 0:
        st[r + L_HITS] += 1
        if write:
            if st[r + L_WRITE_BACK]:
                _make_dirty(st, r, s * ways + way, line)
            else:
                _send_write(st, st[r + L_NEXT], addr)
        return False
    st[r + L_MISSES] += 1
    if write and not st[r + L_WRITE_ALLOCATE]:
        _send_write(st, st[r + L_NEXT], addr)       # write-around: no fill, no stall
        return False
    way = _install(st, level, r, s, line)
    if write:
        if st[r + L_WRITE_BACK]:
            _make_dirty(st, r, s * ways + way, line)
        else:
            _send_write(st, st[r + L_NEXT], addr)
    return True


@njit(cache=True, inline='always')
def _down(st, level, addr, write):
    """Walk a request down from ``level`` until a level has the line; its latency."""
    while level != MEMORY:
        r = HEADER + LEVEL_RECORD * level
        if not _level(st, level, addr, write):
            return st[r + L_LATENCY]
        level = st[r + L_NEXT]
        write = False                       # below a miss, the request is the fill (a read)
    if write:
        st[H_MEM_WRITES] += 1
    else:
        st[H_MEM_READS] += 1
    return st[H_MEM_LAT]


@njit(cache=True)
def _drain(st):
    """Carry out the queued writes (each may queue more further down)."""
    while st[H_QUEUE_N] > 0:
        n = st[H_QUEUE_N] - 1
        st[H_QUEUE_N] = n
        _down(st, st[st[H_QUEUE] + 2 * n], st[st[H_QUEUE] + 2 * n + 1], True)


# _drain's body inlined where every store of a store-through L1 D runs it (data_access)
_drain_inline = njit(cache=True, inline='always')(_drain.py_func)


@njit(cache=True)
def access(st, level, addr, write):
    """One request for the line holding ``addr`` at ``level``.

    Returns the load-to-use latency of the level that supplied the data (the level's own
    latency on a hit); a write that needs no fill returns this level's latency (no stall).
    Victim write-backs and write-throughs are carried out after the demand request."""
    latency = _down(st, level, addr, write)
    _drain(st)
    return latency


# ------------------------------------------------------------------ data side and fetch side

@njit(cache=True)
def account(st, offset, cycles):
    """Charge cycles to the instruction at ``offset`` in the code region (-1: outside it).

    With the profiler on (``H_PROFILE_PERIOD`` > 0) the instruction gets the cycles in its
    own account and a sample each time the cycle count passes a multiple of the period:
    deterministic PC sampling, as a timer interrupt every N cycles would see it."""
    st[H_CYCLES] += cycles
    period = st[H_PROFILE_PERIOD]
    if period <= 0 or offset < 0 or offset > st[H_CODE_LEN]:
        return
    st[st[H_INSN_CYCLES] + offset] += cycles
    while st[H_CYCLES] >= st[H_NEXT_SAMPLE]:
        st[st[H_SAMPLES] + offset] += 1
        st[H_NEXT_SAMPLE] += period


@njit(cache=True, inline='always')
def _core_count(st):
    """How many cores the state models (one when it has no core table)."""
    return st[st[H_CORES]] if st[H_CORES] else 1


@njit(cache=True, inline='always')
def _l1_of(st, core, icache):
    """Core ``core``'s L1 I (``icache``) or L1 D level, -1 if it has none."""
    table = st[H_CORES]
    if table == 0:
        return st[H_L1I] if icache else st[H_L1D]
    return st[table + 1 + CORE_RECORD * core + (T_L1I if icache else T_L1D)]


@njit(cache=True, inline='always')
def _flag_stale(st, l1i, addr, length):
    r = HEADER + LEVEL_RECORD * l1i
    shift = st[r + L_SHIFT]
    ways = st[r + L_WAYS]
    for line in range(addr >> shift, ((addr + length - 1) >> shift) + 1):
        way = _find(st, r, line)
        if way >= 0:
            st[st[r + L_STALE] + (line & (st[r + L_SETS] - 1)) * ways + way] = 1


@njit(cache=True)
def _changed(st, addr, length):
    """Bytes [addr, addr + length) changed on the data side: I-cache copies are now stale,
    in every core (no I-cache here snoops stores)."""
    if st[H_COHERENT_I]:
        return
    for k in range(_core_count(st)):
        l1i = _l1_of(st, k, True)
        if l1i >= 0:
            _flag_stale(st, l1i, addr, length)


_changed_inline = njit(cache=True, inline='always')(_changed.py_func)     # as _drain_inline


@njit(cache=True)
def _dirty_in(st, l1d, addr, length):
    r = HEADER + LEVEL_RECORD * l1d
    shift = st[r + L_SHIFT]
    ways = st[r + L_WAYS]
    for line in range(addr >> shift, ((addr + length - 1) >> shift) + 1):
        way = _find(st, r, line)
        if way >= 0 and st[st[r + L_DIRTY] + (line & (st[r + L_SETS] - 1)) * ways + way]:
            return True
    return False


@njit(cache=True)
def _dirty_in_l1d(st, addr, length):
    """Is any L1 D line over [addr, addr + length) dirty (not yet at the point of
    unification), in any core?"""
    for k in range(_core_count(st)):
        l1d = _l1_of(st, k, False)
        if l1d >= 0 and _dirty_in(st, l1d, addr, length):
            return True
    return False


@njit(cache=True)
def snoop(st, addr, op):
    """What one core's request does to the other cores' L1 D copies of the line at ``addr``
    (multi-core only; the protocol is MESI-like, with the L1 D line's dirty bit as M):

    * a read (OP_TOUCH) finds a dirty copy: it is written back to the shared level below
      and stays, clean (a transfer: the reader then fills from the shared level);
    * a write (OP_FLUSH) or a flush: a dirty copy is written back, every copy invalidated;
    * a clean (OP_CLEAN, e.g. dcbst) writes a dirty copy back; an invalidate drops copies.

    So a line dirty in one L1 D is in no other. Write-backs reach the shared level before
    the requester's own access goes on."""
    if st[H_CORES] == 0:
        return
    me = st[H_CORE]
    for k in range(_core_count(st)):
        level = _l1_of(st, k, False)
        if k == me or level < 0:
            continue
        r = HEADER + LEVEL_RECORD * level
        line = addr >> st[r + L_SHIFT]
        way = _find(st, r, line)
        if way < 0:
            continue
        slot = (line & (st[r + L_SETS] - 1)) * st[r + L_WAYS] + way
        if op != OP_INVALIDATE and st[st[r + L_DIRTY] + slot]:
            _write_back(st, r, line)
            st[st[r + L_DIRTY] + slot] = 0
            st[H_TRANSFERS] += 1
            _drain(st)
        if op == OP_FLUSH or op == OP_INVALIDATE:
            drop_line(st, level, line, way)
            st[r + L_INVALIDATIONS] += 1
            st[H_SNOOP_INVALIDATIONS] += 1


@njit(cache=True)
def serialise(st, resource, service):
    """An instruction that needs a resource all cores share and only one may use at a time
    (one tlbie in flight in the machine; the L2 controller's cache sync): it waits until the
    resource is free, by this core's cycle clock, then holds it ``service`` cycles.
    Returns the wait. One core never waits for itself.

    Cores run in time slices (Machine.run_parallel), and a core's bookings during its
    slice stand when a core behind it in time runs next: a quantum longer than the time
    between a core's uses of the resource serialises more than the hardware would."""
    st[H_SERIAL_OPS] += 1
    table = st[H_CORES]
    if table == 0:
        return 0
    at = table + 1 + CORE_RECORD * st[table] + resource
    now = st[H_CYCLES]
    start = max(now, st[at])
    st[at] = start + service
    st[H_SERIAL_WAIT] += start - now
    return start - now


# PL310 (L2C-310) register offsets (PL310 TRM, ARM DDI 0246, "Register summary"; the same
# in Linux arch/arm/include/asm/hardware/cache-l2x0.h): cache sync, the dummy sync Linux
# writes instead on erratum 753970, and the three maintenance operations by physical address
OUTER_CACHE_SYNC, OUTER_DUMMY_SYNC = 0x730, 0x740
OUTER_LINE_OPS = ((0x770, OP_INVALIDATE), (0x7B0, OP_CLEAN), (0x7F0, OP_FLUSH))


@njit(cache=True)
def outer_cache_write(st, offset, value):
    """A store to the outer cache controller's register at ``offset``: a cache sync, or a
    clean / invalidate / clean+invalidate of the L2 line holding physical address ``value``.
    The controller takes one operation at a time from all cores (emu.cache.serialise).
    Returns the cycles the store waits: for the controller, then for the operation, and
    for memory when the line is written back. Other registers are not modelled: a store to
    them costs nothing more."""
    if offset == OUTER_CACHE_SYNC or offset == OUTER_DUMMY_SYNC:
        st[H_OUTER_SYNCS] += 1
        service = st[H_OUTER_SYNC_CYCLES]
    else:
        op = -1
        for register, line_op in OUTER_LINE_OPS:
            if offset == register:
                op = line_op
        if op < 0:
            return 0
        st[H_OUTER_LINE_OPS] += 1
        service = st[H_OUTER_LINE_CYCLES]
        level = st[H_FIRST_LEVEL]
        if level != MEMORY and _maintain_level(st, level, value, op):
            service += st[H_MEM_LAT]
    wait = serialise(st, RESOURCE_OUTER_CACHE, service)
    st[H_OUTER_WAIT] += wait
    return wait + service


@njit(cache=True)
def alignment(st, addr, size):
    """Cycles a misaligned access costs beyond the cache model (0 when aligned or off).

    An access of exactly H_ALIGN_SIZE bytes with an address bit of H_ALIGN_MASK set takes an
    alignment exception (64-bit PowerPC: an 8-byte load or store not 4-byte aligned), whose
    kernel handler emulates it; otherwise an access crossing an aligned H_SPLIT_MASK + 1
    boundary is done as two accesses by the hardware. Each is counted."""
    if size == st[H_ALIGN_SIZE] and addr & st[H_ALIGN_MASK]:
        st[H_ALIGN_EXCEPTIONS] += 1
        return st[H_ALIGN_CYCLES]
    mask = st[H_SPLIT_MASK]
    if mask and (addr & mask) + size > mask + 1:
        st[H_SPLITS] += 1
        return st[H_SPLIT_CYCLES]
    return 0


@njit(cache=True)
def store_queue(st, addr, size, now):
    """A store enters the store queue of the L2 slice its line maps to, at cycle ``now``.

    Returns the cycles the core stalls. The model (POWER4, Mackerras 2003 section 3.1): a
    store-through L1 D sends every store to the L2, which is split into H_SQ_SLICES slices,
    each with its own queue. Line n goes to slice n mod slices (consecutive lines rotate
    through the slices; the real slice hash is not public). A slice has H_SQ_ENTRIES
    entries; a store holds one for H_SQ_SERVICE cycles from when it is accepted. A store
    that finds every entry of its slice busy stalls the core until the first one frees.
    No store gathering. A store that crosses a line boundary takes an entry per line."""
    shift = st[H_SQ_SHIFT]
    slices, entries, service = st[H_SQ_SLICES], st[H_SQ_ENTRIES], st[H_SQ_SERVICE]
    stall = 0
    for line in range(addr >> shift, ((addr + size - 1) >> shift) + 1):
        first = st[H_SQ] + (line % slices) * entries
        free = first                        # the entry that frees first (lowest on a tie)
        for k in range(first + 1, first + entries):
            if st[k] < st[free]:
                free = k
        t = now + stall
        if st[free] > t:
            st[H_SQ_STALLS] += 1
            st[H_SQ_STALL_CYCLES] += st[free] - t
            stall += st[free] - t
            t = st[free]
        st[free] = t + service
        st[H_SQ_STORES] += 1
    return stall


@njit(cache=True)
def data_access(st, addr, size, write):
    """A load or store of ``size`` bytes; once per line it touches. Returns stall cycles.

    The common case, an L1 hit within one line, is handled here; the rest in _data_lines."""
    l1 = st[H_L1D]
    if l1 >= 0:
        r = HEADER + LEVEL_RECORD * l1
        shift = st[r + L_SHIFT]
        line = addr >> shift
        if line == (addr + size - 1) >> shift:
            s = line & (st[r + L_SETS] - 1)
            way = _hit(st, r, line, s)
            if way >= 0 and (not write or st[r + L_WRITE_BACK]):
                st[r + L_ACCESSES] += 1
                st[r + L_HITS] += 1
                if write:
                    dirty = st[r + L_DIRTY] + s * st[r + L_WAYS] + way
                    if st[dirty] == 0:          # a clean line becomes dirty
                        _make_dirty(st, r, s * st[r + L_WAYS] + way, line)
                        _changed(st, line << shift, 1 << shift)
                        if st[H_CORES]:             # other cores' copies are invalid now
                            snoop(st, addr, OP_FLUSH)
                return 0
            if write and not st[r + L_WRITE_BACK] and (way >= 0 or not st[r + L_WRITE_ALLOCATE]):
                # a store through (or around) the L1: it goes on below and stalls nobody
                st[r + L_ACCESSES] += 1
                st[r + L_HITS if way >= 0 else r + L_MISSES] += 1
                if st[H_CORES]:
                    snoop(st, addr, OP_FLUSH)
                _send_write(st, st[r + L_NEXT], addr)
                _drain_inline(st)
                _changed_inline(st, line << shift, 1 << shift)
                return 0
    return _data_lines(st, addr, size, write)


# data_access's body inlined into the memory hook (no call per access); callers elsewhere
# (the table walkers) share one compiled data_access
data_access_inline = njit(cache=True, inline='always')(data_access.py_func)


@njit(cache=True)
def _data_lines(st, addr, size, write):
    """data_access beyond an L1 hit: misses, line-crossing accesses, stores past the L1."""
    l1 = st[H_L1D]
    if l1 < 0:                                  # no L1 D: straight to the first unified level
        latency = access(st, st[H_FIRST_LEVEL], addr, write)
        if write:
            _changed(st, addr, size)
        return latency
    r = HEADER + LEVEL_RECORD * l1
    shift = st[r + L_SHIFT]
    base_latency = st[r + L_LATENCY]
    stall = 0
    for line in range(addr >> shift, ((addr + size - 1) >> shift) + 1):
        if st[H_CORES]:
            snoop(st, line << shift, OP_FLUSH if write else OP_TOUCH)
        stall += access(st, l1, line << shift, write) - base_latency
        if write:
            _changed(st, line << shift, 1 << shift)
    return stall


@njit(cache=True, inline='always')     # into the block hook
def fetch(st, addr, size, pc):
    """Instruction fetch of [addr, addr+size): once per I-cache line; checks coherence.

    Returns stall cycles. The common case, the set's most recent line again and not stale,
    is handled here; the rest in _fetch_lines."""
    l1 = st[H_L1I]
    if l1 < 0:
        return 0
    r = HEADER + LEVEL_RECORD * l1
    shift = st[r + L_SHIFT]
    line = addr >> shift
    if line == (addr + size - 1) >> shift:
        s = line & (st[r + L_SETS] - 1)
        m = st[st[r + L_MRU] + s]
        if m >> MRU_WAY_BITS == line + 1 and \
                st[st[r + L_STALE] + s * st[r + L_WAYS] + (m & WAY_MASK)] == 0:
            st[r + L_ACCESSES] += 1
            st[r + L_HITS] += 1
            return 0
    return _fetch_lines(st, addr, size, pc)


@njit(cache=True)
def _fetch_lines(st, addr, size, pc):
    """fetch beyond the common case: a stale fetch is one that gets bytes older than the
    last store to them, from a flagged I-cache line, or from below while the D line is dirty."""
    l1 = st[H_L1I]
    r = HEADER + LEVEL_RECORD * l1
    shift = st[r + L_SHIFT]
    ways = st[r + L_WAYS]
    base_latency = st[r + L_LATENCY]
    stall = 0
    for line in range(addr >> shift, ((addr + size - 1) >> shift) + 1):
        a = line << shift
        flags = st[r + L_STALE] + (line & (st[r + L_SETS] - 1)) * ways
        cached = _find(st, r, line) >= 0
        stall += access(st, l1, a, False) - base_latency
        way = _find(st, r, line)
        if not cached and not st[H_COHERENT_I] and _dirty_in_l1d(st, a, 1 << shift):
            st[flags + way] = 1                 # filled with the old bytes from below
        if st[flags + way]:
            if st[H_STALE] == 0:
                st[H_STALE_PC] = pc
                st[H_STALE_ADDR] = a
            st[H_STALE] += 1
    return stall


# ------------------------------------------------------------------------- maintenance



@njit(cache=True)
def drop_line(st, level, line, way):
    """Empty the way holding ``line`` (no write-back, nothing counted)."""
    r = HEADER + LEVEL_RECORD * level
    s = line & (st[r + L_SETS] - 1)
    slot = s * st[r + L_WAYS] + way
    if st[st[r + L_MRU] + s] >> MRU_WAY_BITS == line + 1:
        st[st[r + L_MRU] + s] = 0
    st[st[r + L_TAGS] + slot] = 0
    st[st[r + L_DIRTY] + slot] = 0


@njit(cache=True)
def invalidate_level(st, level):
    """Every line of a level invalid (iciallu, tlbia); each valid one counted."""
    r = HEADER + LEVEL_RECORD * level
    for k in range(st[r + L_SETS] * st[r + L_WAYS]):
        if st[st[r + L_TAGS] + k] != 0:
            st[st[r + L_TAGS] + k] = 0
            st[r + L_INVALIDATIONS] += 1
    for k in range(st[r + L_SETS]):
        st[st[r + L_MRU] + k] = 0


@njit(cache=True)
def _maintain_level(st, level, addr, op):
    """Clean / flush / invalidate one line at one level. Returns 1 if it wrote data back."""
    r = HEADER + LEVEL_RECORD * level
    shift = st[r + L_SHIFT]
    line = addr >> shift
    way = _find(st, r, line)
    if way < 0:
        return 0
    slot = (line & (st[r + L_SETS] - 1)) * st[r + L_WAYS] + way
    wrote = 0
    if op != OP_INVALIDATE and st[st[r + L_DIRTY] + slot]:
        _write_back(st, r, line)
        st[st[r + L_DIRTY] + slot] = 0
        wrote = 1
    if op != OP_CLEAN:
        drop_line(st, level, line, way)
        st[r + L_INVALIDATIONS] += 1
    return wrote


@njit(cache=True)
def _establish(st, level, addr):
    """Allocate a line at a level without reading it from below (dcbz, dcba): dirty."""
    r = HEADER + LEVEL_RECORD * level
    shift = st[r + L_SHIFT]
    line = addr >> shift
    s = line & (st[r + L_SETS] - 1)
    ways = st[r + L_WAYS]
    st[r + L_ACCESSES] += 1
    way = _hit(st, r, line, s)
    if way >= 0:
        st[r + L_HITS] += 1
    else:
        st[r + L_MISSES] += 1
        way = _install(st, level, r, s, line)
        _drain(st)
    _make_dirty(st, r, s * ways + way, line)


@njit(cache=True)
def _icache_invalidate(st, addr):
    """icbi / ICIMVAU: the line leaves the L1 I of every core (icbi is broadcast)."""
    for k in range(_core_count(st)):
        l1i = _l1_of(st, k, True)
        if l1i >= 0:
            _maintain_level(st, l1i, addr, OP_INVALIDATE)


@njit(cache=True)
def maintain(st, addr, op, scope):
    """The architectural effect of one cache-maintenance instruction on its line.

    Returns stall cycles: a write-back a maintenance instruction forces is waited for
    (the instruction completes when the data has reached the next level)."""
    l1d = st[H_L1D]
    stall = 0
    if op == OP_ICACHE_INVALIDATE:
        _icache_invalidate(st, addr)
        return 0
    if op == OP_ICACHE_INVALIDATE_ALL:
        if st[H_L1I] >= 0:
            invalidate_level(st, st[H_L1I])
        return 0
    # by address, an operation reaches every core's L1 D (PowerPC dcb* are broadcast; Linux
    # sets the A9's ACTLR.FW so that maintenance by MVA is too)
    if st[H_CORES] and op != OP_TOUCH_OUTER:
        snoop(st, addr, OP_FLUSH if op == OP_ZERO or op == OP_ALLOCATE else op)
    if op == OP_TOUCH:
        if l1d >= 0:
            r = HEADER + LEVEL_RECORD * l1d
            return access(st, l1d, addr, False) - st[r + L_LATENCY]
        return 0
    if op == OP_TOUCH_OUTER:                  # prefetch into the first unified level only
        level = st[H_FIRST_LEVEL]
        if level != MEMORY:
            access(st, level, addr, False)
        return 0
    if op == OP_ZERO or op == OP_ALLOCATE:
        level = l1d if l1d >= 0 else st[H_FIRST_LEVEL]
        # a store-through level holds nothing that is not below it: the line is
        # established further out (POWER4 performs dcbz in its L2)
        while level != MEMORY and not st[HEADER + LEVEL_RECORD * level + L_WRITE_BACK]:
            level = st[HEADER + LEVEL_RECORD * level + L_NEXT]
        if level == MEMORY:
            st[H_MEM_WRITES] += 1
        else:
            _establish(st, level, addr)
        if op == OP_ZERO:                       # zeros over the whole block: a store
            unit = l1d if l1d >= 0 else level
            shift = st[HEADER + LEVEL_RECORD * unit + L_SHIFT] if unit >= 0 else 0
            _changed(st, (addr >> shift) << shift, 1 << shift)
        return 0
    # clean / flush / invalidate: L1 D only, or every data level from L1 D outwards
    level = l1d if l1d >= 0 else st[H_FIRST_LEVEL]
    while level != MEMORY:
        r = HEADER + LEVEL_RECORD * level
        wrote = _maintain_level(st, level, addr, op)
        _drain(st)
        if wrote:
            nxt = st[r + L_NEXT]
            stall += st[H_MEM_LAT] if nxt == MEMORY else \
                st[HEADER + LEVEL_RECORD * nxt + L_LATENCY]
        if scope == SCOPE_L1:
            break
        level = st[r + L_NEXT]
    return stall


# ------------------------------------------------------------- write-combining (x86 movnt*)

@njit(cache=True)
def _wc_drain(st, k):
    """Write one write-combining buffer out: a full line is one burst, else a partial write."""
    wc = st[H_WC] + 3 * k
    if st[wc] == 0:
        return
    st[H_WC_FLUSHES] += 1
    if st[wc + 1] < st[H_WC_LINE]:
        st[H_WC_PARTIAL] += 1
    st[H_MEM_WRITES] += 1
    st[wc] = 0
    st[wc + 1] = 0


@njit(cache=True)
def nontemporal_store(st, addr, size):
    """A movnt* store: evict the line from every cache (writing it back if dirty), then
    merge the bytes into a write-combining buffer: no allocation, no read for ownership.
    A buffer holds one line; it is written out when full, when a new line needs a buffer and
    none is free (the oldest goes), or at sfence. Buffers count bytes (stores of a copy do not
    overlap)."""
    st[H_NT_STORES] += 1
    level = st[H_L1D] if st[H_L1D] >= 0 else st[H_FIRST_LEVEL]
    while level != MEMORY:
        _maintain_level(st, level, addr, OP_FLUSH)
        _drain(st)
        level = st[HEADER + LEVEL_RECORD * level + L_NEXT]
    _changed(st, addr, size)
    n = st[H_WC_N]
    if n == 0:
        st[H_MEM_WRITES] += 1
        return 0
    line = addr // st[H_WC_LINE]
    chosen = -1
    for k in range(n):
        if st[st[H_WC] + 3 * k] == line + 1:
            chosen = k
    if chosen < 0:
        oldest = 0
        for k in range(n):
            wc = st[H_WC] + 3 * k
            if st[wc] == 0:
                chosen = k
                break
            if st[wc + 2] < st[st[H_WC] + 3 * oldest + 2]:
                oldest = k
        if chosen < 0:
            _wc_drain(st, oldest)
            chosen = oldest
        wc = st[H_WC] + 3 * chosen
        st[wc] = line + 1
        st[wc + 2] = st[H_NT_STORES]
    wc = st[H_WC] + 3 * chosen
    st[wc + 1] += size
    if st[wc + 1] >= st[H_WC_LINE]:
        _wc_drain(st, chosen)
    return 0


@njit(cache=True)
def drain_write_combining(st):
    for k in range(st[H_WC_N]):
        _wc_drain(st, k)


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
        """What a core's accesses did to the other cores: transfers, invalidations."""
        h = self.layout.header(self.layout.running if core is None else core)
        return {"transfers": int(h[H_TRANSFERS]), "invalidations": int(h[H_SNOOP_INVALIDATIONS])}

    @property
    def stale_fetches(self):
        return int(self.state[H_STALE])

    @property
    def memory_traffic(self):
        return {"reads": int(self.state[H_MEM_READS]), "writes": int(self.state[H_MEM_WRITES])}
