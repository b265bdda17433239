/* The model's state: one flat int64 array, laid out by emu.cache.Layout (Python).
 *
 * Every index below has the same name and value in Python (emu.cache, emu.mmu, emu.hash64,
 * emu.softtlb, emu.cost); tests/hw/test_native.py checks that they agree, through the table
 * emu_constants[] the library exports. The meaning of each field is documented in Python,
 * where the layout is built; here they are only named.
 */
#ifndef EMU_STATE_H
#define EMU_STATE_H

#include <stdint.h>
#include <stdbool.h>

typedef int64_t i64;
typedef uint64_t u64;

/* ---- header fields (emu.cache H_*) */
enum {
    H_SWALLOW, H_NONTEMPORAL, H_L1I, H_L1D, H_INSNS, H_CYCLES, H_LIMIT, H_STALE,
    H_CODE_BASE, H_CODE_LEN, H_ICOUNT, H_ICOST, H_STRICT, H_FIXED_WIDTH, H_DEFAULT_COST,
    H_FIRST_LEVEL, H_COHERENT_I, H_QUEUE, H_QUEUE_N, H_MEM_LAT, H_MEM_READS, H_MEM_WRITES,
    H_SIZE, H_NLEVELS, H_STOPPED, H_STALE_PC, H_STALE_ADDR, H_STALE_BLOCK, H_RNG,
    H_SPECIALS, H_NSPECIALS, H_WC, H_WC_N, H_WC_LINE, H_WC_FLUSHES, H_WC_PARTIAL,
    H_NT_STORES, H_REG_WIDTH_MASK, H_SCRATCH, H_UNCOUNTED,
    H_PROFILE_PERIOD, H_NEXT_SAMPLE, H_PC_REG, H_SAMPLES, H_INSN_HITS, H_INSN_CYCLES,
    H_MMU, H_ITLB, H_DTLB, H_SDR1, H_SEGMENTS, H_RAM_PTR, H_RAM_SIZE,
    H_WALKS, H_PRIMARY_HITS, H_SECONDARY_HITS, H_PAGE_FAULTS,
    H_FAULT_EA, H_FAULT_WRITE, H_FAULT_FETCH, H_WALK_CYCLES, H_FAULT_PC,
    H_XLATE,
    H_CORES = 64, H_CORE, H_TRANSFERS, H_SNOOP_INVALIDATIONS, H_SERIAL_OPS, H_SERIAL_WAIT,
    H_WALK_THROUGH_L1, H_FAULT_STATUS, H_FAULT_L1_ADDR, H_FAULT_L2_ADDR,
    H_ALIGN_SIZE, H_ALIGN_MASK, H_ALIGN_CYCLES, H_SPLIT_MASK, H_SPLIT_CYCLES,
    H_ALIGN_EXCEPTIONS, H_SPLITS,
    H_SQ, H_SQ_SLICES, H_SQ_ENTRIES, H_SQ_SERVICE, H_SQ_SHIFT,
    H_SQ_STORES, H_SQ_STALLS, H_SQ_STALL_CYCLES, H_BLOCK_END_COST,
    H_SLB_ENTRIES,
    H_ACCESS_EXTRAS,
    H_OUTER_BASE, H_OUTER_SYNC_CYCLES, H_OUTER_LINE_CYCLES,
    H_OUTER_SYNCS, H_OUTER_LINE_OPS, H_OUTER_WAIT,
    H_BLOCK_START, H_BLOCK_SIZE,
    H_SCHED, H_SLICE_END, H_SYNC_BOUND, H_LAST_SYNC_BLOCK, H_STORES_SINCE, H_PARK, H_NO_PARK,
    H_WATCHING,
    H_SYNC_STATIC, H_SYNC_DYNAMIC,
    H_SYNC_WAITS, H_PARKS, H_SPIN_WAIT, H_ORDER_STALLS, H_ORDER_STALL_CYCLES,
    H_HOST_STOP,
    H_RESERVE_ADDR, H_RESERVE_VAL, H_RESERVE_SIZE, H_SWALLOW_ADDR,
    H_SQ_LINE, H_SQ_SLICE,
    H_MACHINE, H_BUS_BEAT_BYTES, H_BUS_BEAT_MC, H_BUS_PARTIAL_BEATS,
    H_SB, H_SB_ENTRIES, H_SB_HEAD, H_SB_COUNT,
    H_FB, H_FB_ENTRIES, H_FB_DROP, H_FB_LIVE,
    H_PF, H_PF_STREAMS, H_PF_AHEAD, H_PF_DISTANCE, H_PF_PAGE_SHIFT, H_PF_LEVEL, H_PF_CLOCK,
    H_STORE_DONE, H_FILL_READY, H_PREFETCHING, H_PF_ACCESS, H_PF_MISSED, H_XLATE_ATTR,
    H_BUS_BUSY, H_BUS_WAIT, H_SB_STALLS, H_SB_STALL_CYCLES, H_FB_WAITS, H_PREFETCHES,
    H_PREFETCHES_DROPPED, H_PREFETCH_LATE, H_PREFETCH_LATE_CYCLES, H_HW_PREFETCHES,
    H_UNCACHED_LOADS, H_UNCACHED_STORES, H_WC_WAIT, H_MEMSYS,
    H_SAMPLE_EVENTS, H_EVENT_NEXT, H_EVENT_PENDING, H_EVENTS,
    H_CHIP, H_CHIPS_PER_MODULE, H_ON_MODULE, H_OFF_MODULE, H_INTERVENTIONS,
    H_SEEN, H_SEEN_N, H_READ_SIGNATURE, H_LAST_READ_SIGNATURE, H_CODE_TOP, H_SOFTTLB,
    H_STOP_ASKED, H_HALTED, H_BATS, H_BAT_HITS, H_SLICES, H_PF_LAST, H_WRITERS,
    H_BLOCK_STORE,
    H_MEMOS, H_ABSENT_LINE, H_ABSENT_FILLS, H_CHANGED_LINE, H_CHANGED_IFILLS,
    H_ADDR_TENURE, H_WB_ENTRIES, H_ADDRESS_ONLY, H_BUS_SECTOR,
    H_MAINT_DONE, H_MAINT_WAIT, H_POSTED, H_IRQ_OFF_AT, H_IRQ_OFF_CYCLES, H_TLB604,
    H_POSTED_AT, H_OUTER_TRAFFIC, H_OUTER_DRAIN_WAIT, H_AT_ACCESS_N, H_TOUCHED,
    H_SAMPLE_EVENTS2, H_EVENT_NEXT2, H_EVENT_PENDING2, H_SAMPLES2,
    HEADER = 208
};
/* ---- a core's memos (st[H_MEMOS] + X_*, emu/model/mmu.c and cache.c): what the hooks
 * found last, kept so that the next access like it skips a look-up. Each is checked against
 * the state it summarises before it is used, or forgotten where that state changes.
 * Translation memos, one each for fetches, loads and stores (XM_* words from X_FETCH,
 * X_LOAD, X_STORE): the page + 1, the TLB's shift, where the entry's tag, its set's MRU word
 * and its permission word are, the MRU word when the entry is the set's most recent, the
 * TLB's record, the set. (H_ABSENT_LINE, H_ABSENT_FILLS, in the header itself, where a
 * store reads them sooner: the line a store found absent from a store-through L1 D that
 * takes no line in on a store, + 1, and that L1 D's L_FILLS then.) */
enum { XM_PAGE, XM_SHIFT, XM_TAG_AT, XM_MRU_AT, XM_MRU_WORD, XM_PERM_AT, XM_REC, XM_SET,
       XM_WORDS = 8 };
/* Block memos (BLOCK_MEMOS records of XB_* words from X_BLOCKS, by the block's address): a
 * block of the loaded code's static facts from the prefix tables: its address, size + 1,
 * instructions, base cycles, the cost table at its end, its only store by the listing
 * (single_store before S_CODE_WRITTEN, which is read at each use); and where its fetch
 * last found its one L1 I line the set's most recent (fetch_as_before): the index of that
 * set's MRU word (0: not known), the word then, the index of that way's stale flag; and
 * whether it holds an AT_ACCESS special (the memory hook reads the PC only then). Python
 * forgets them when it rewrites the tables (Caches.forget_block_memos, at each load). */
enum { XB_ADDRESS, XB_SIZE1, XB_N, XB_CYCLES, XB_END, XB_STORE, XB_MRU_AT, XB_MRU_WORD,
       XB_STALE_AT, XB_AT_ACCESS, XB_WORDS = 10 };
enum { X_FETCH = 0, X_LOAD = XM_WORDS, X_STORE = 2 * XM_WORDS, X_BLOCKS = 3 * XM_WORDS,
       BLOCK_MEMOS = 8, MEMO_WORDS = X_BLOCKS + BLOCK_MEMOS * XB_WORDS };
/* ---- the store queues' block (st[H_SQ]): slices x entries slots (the cycle each entry
 * frees), then each slice's ring head, then SQ_LAST, the latest time a store reached a queue,
 * and SQ_DISORDERED, set once a store came earlier than the one before (emu/model/cache.c
 * store_queue). Cleared whole when the clock restarts. */
enum { SQ_LAST, SQ_DISORDERED, SQ_EXTRA = 2 };
/* ---- the machine's own words (st[H_MACHINE] + M_*): when the (data) bus is free, when the
 * address bus is free (emu.hw.memory) */
enum { M_BUS_FREE, M_ADDR_FREE, MACHINE_WORDS = 2 };
/* ---- posted maintenance write-backs (emu/hw/model/cache.c, post_write_back): H_POSTED says
 * when one is done (POSTED_OFF: not posted, the instruction waits for it). Each core holds
 * H_WB_ENTRIES of them in flight (0: no limit) in POSTED_MAX words from st[H_POSTED_AT], the
 * cycle each slot's write-back is done. */
enum { POSTED_OFF, POSTED_BUS, POSTED_LATENCY, POSTED_IN_ORDER, POSTED_MAX = 16 };
/* ---- the PL310's buffers in time (emu/hw/model/memsys.c, outer_traffic): per core, from
 * st[H_OUTER_TRAFFIC] (0: not modelled), its last two cycles of DRAM traffic through the
 * controller (a line fill, an eviction) and when each cycle's transfers are done */
enum { OT_PREV_ISSUE, OT_PREV_DONE, OT_ISSUE, OT_DONE, OUTER_TRAFFIC_WORDS };
/* ---- the blocks a core has run in a run of several cores (emu/model/smp.c) */
enum { SEEN_ENTRIES = 4096 };
/* ---- a serialising instruction's weight in the synchronising prefix sums (emu.cost) */
enum { SYNC_SERIAL = 1 << 20 };
/* ---- write-combining buffers: per buffer its line + 1, bytes, fill order, free cycle */
enum { WC_WORDS = 4 };
/* ---- events a profile can sample (emu.profiler): per level kind (L_KIND: L1I, L1D, L2,
 * L3, ITLB, DTLB, TLB) a bit for read hit, read miss, write hit, write miss; and these */
enum { EVENT_MEMORY_READ = 28, EVENT_MEMORY_WRITE = 29, EVENT_WALK = 30 };
/* ---- a TLB entry's attributes beside its permissions (DENY_*) */
enum { ATTR_INHIBITED = 16 };
#define NEVER_CYCLE ((i64)1 << 62)

/* The profiler's counts' high-water mark: 1 + the highest code offset a count (of any core,
 * into any of the profiler's arrays or a core's own, emu.run.profiler.own_counts) reached
 * since the state was made; a word after the four arrays (emu.hw.cache.Layout). Above it
 * every array is still zero, so a call's start clears, and a read copies, only below it. */
static inline i64 *profile_top(i64 *st) { return &st[st[H_SAMPLES2] + st[H_CODE_LEN] + 1]; }
static inline void raise_profile_top(i64 *st, i64 end) {
    i64 *top = profile_top(st);
    if (end > *top)
        *top = end;
}

/* ---- the core table (multi-core): per core, then the resources, then the globals */
enum { T_ITLB, T_DTLB, T_SEGMENTS, T_STATUS, T_PC, T_WAIT, T_SPIN_BLOCK,
       T_NWATCH, T_WATCH, WATCHES = 4, CORE_RECORD = T_WATCH + 2 * WATCHES };
enum { CORE_IDLE, CORE_RUNNABLE, CORE_PARKED, CORE_DONE };
enum { MAX_CORES = 32 };         /* emu.cache.Caches refuses more */
/* ---- which copies of a private or chip level hold a line of each bucket (multi-core;
 * emu/model/cache.c): per bucket a mask of owners, then per owner its level's index */
enum { PRESENCE_BUCKETS = 1 << 14, PRESENCE_BLOCK = PRESENCE_BUCKETS + MAX_CORES };
enum { RESOURCES = 4, RESOURCE_SERIAL = 0, RESOURCE_OUTER_CACHE = 1 };
enum { G_RUNNING, G_NPARKED, G_WRITE_SEQ, G_STAMPS, G_STAMP_MASK, G_STAMP_SHIFT, G_HEADERS,
       G_TIES, GLOBALS = 8, STAMP_WORDS = 4 };

/* ---- per-level record fields */
enum {
    L_SETS, L_WAYS, L_SHIFT, L_MRU, L_TAGS, L_DIRTY, L_ACCESSES, L_HITS,
    L_STALE, L_REPL, L_PLRU, L_STAMP, L_CLOCK, L_LATENCY, L_WRITE_BACK, L_NEXT,
    L_WRITE_ALLOCATE, L_MISSES, L_WRITEBACKS, L_INVALIDATIONS, L_EVICTIONS, L_IS_ICACHE,
    L_SHADOW, L_KIND, L_CHIP, L_GROUP, L_PEER, L_OWNER, L_PRESENCE_AT, L_LINES_LO,
    L_LINES_HI, L_FILLS,
    LEVEL_RECORD = 32
};
enum { REPL_LRU, REPL_PLRU, REPL_FIFO, REPL_RANDOM };
#define MEMORY (-1)
#define MRU_WAY_BITS 10
#define WAY_MASK ((1 << MRU_WAY_BITS) - 1)

/* ---- maintenance operations (emu.cache OP_*) and scopes */
enum {
    OP_CLEAN, OP_FLUSH, OP_INVALIDATE, OP_ZERO, OP_TOUCH, OP_ICACHE_INVALIDATE,
    OP_ICACHE_INVALIDATE_ALL, OP_ALLOCATE, OP_TOUCH_OUTER
};
enum { SCOPE_L1, SCOPE_ALL };

/* ---- special instructions (emu.cost OP_*, scope flags) */
enum {
    OP_NONTEMPORAL = 100, OP_DRAIN_WC = 101,
    OP_TLB_INVALIDATE = 200, OP_TLB_INVALIDATE_ALL = 201,
    OP_MTMSR = 202, OP_TLB_LOAD_D = 203, OP_TLB_LOAD_I = 204, OP_TLB_WRITE = 205, OP_RFI = 206,
    OP_SLB_STORE = 207, OP_SLB_INVALIDATE = 208, OP_SLB_INVALIDATE_ALL = 209,
    OP_LOAD_RESERVE = 210, OP_STORE_CONDITIONAL = 211,
    OP_SERIALISE = 300, OP_DRAIN_STORES = 301, OP_COMPLETE = 302,
    OP_IRQ_OFF = 303, OP_IRQ_RESTORE = 304
};
/* AT_ACCESS: a special whose instruction always reads memory first (x86 locked and xchg
 * read-modify-writes), applied by the memory hook at that read instead of by a code hook
 * (hooks.c, special_at_access) */
enum { TLB_BROADCAST = 2, SERIAL = 4, BROADCAST = 8, AT_ACCESS = 16 };

/* ---- MMU modes (emu.mmu, emu.softtlb) */
enum { MODE_OFF, MODE_HASHED32, MODE_SOFT603, MODE_SOFT405, MODE_ARM_SHORT, MODE_HASHED64 };
/* a TLB entry's permission word: what it forbids */
enum { DENY_WRITE = 1, DENY_FETCH = 2, IS_SECTION = 4, DENY_READ = 8 };
/* ARM fault status codes */
enum { FSR_TRANSLATION_SECTION = 0x5, FSR_TRANSLATION_PAGE = 0x7,
       FSR_PERMISSION_SECTION = 0xD, FSR_PERMISSION_PAGE = 0xF };

/* ---- scratch words (st[H_SCRATCH] + k), one set for the machine: every core's header
 * points at the same words. S_FOREIGN_LO/HI: the span of the code any core ran outside the
 * loaded programs (0, 0: none), so that bytes the host writes over it are not run stale
 * from Unicorn's translations (Machine.write). S_CODE_WRITTEN: the host or the guest wrote
 * over loaded code, whose listing (H_WRITERS) then no longer says what runs there */
enum { S_REGISTER = 0, S_BLOCK_START = 1, S_BLOCK_END = 2, S_DIVERGED = 3,
       S_SLB_PC = 4, S_SLB_RS = 5, S_SLB_RB = 6, S_FOREIGN_LO = 7, S_FOREIGN_HI = 8,
       S_CODE_WRITTEN = 9, SCRATCH_WORDS = 10 };

/* ---- the 32-bit hashed page table (emu.mmu) */
#define PTE_VALID 0x80000000LL
#define PTE_SECONDARY 0x40
#define PTES_PER_GROUP 8

/* ---- the 64-bit hashed page table (emu.hash64) */
#define HPTE_BYTES 16
#define HPTES_PER_GROUP 8
#define PTEG64_BYTES (HPTE_BYTES * HPTES_PER_GROUP)
#define HTABORG_MASK 0x0FFFFFFFFFFC0000LL
#define HTABSIZE_MASK 0x1F
#define HASH_BITS_MASK ((1LL << 39) - 1)
#define VSID_LIMIT (1LL << 52)
#define HPTE_V_VALID 0x1
#define HPTE_V_SECONDARY 0x2
#define HPTE_V_SW 0x78
#define HPTE_V_COMPARE (~(i64)HPTE_V_SW)
#define HPTE_R_PP 0x3
#define HPTE_R_N 0x4
#define HPTE_R_G 0x8
#define SLB_ESID_V 0x08000000LL
#define SLB_ESID_MASK (-(1LL << 28))
#define SLB_VSID_KS 0x800
#define SLB_VSID_N 0x200
#define SLB_VSID_L 0x100
#define SLB_INDEX_MASK 0xFFF
enum { FAULT_SEGMENT = 1, FAULT_NO_HPTE = 2, FAULT_NO_EXECUTE = 3, FAULT_PROTECTION = 4 };

/* ---- software-loaded TLBs (emu.softtlb): MSR bits */
/* ---- a software-loaded TLB's own records (emu.softtlb; st[H_SOFTTLB] is their address):
 * settings, a failed instruction's error, where QEMU's 603 TLB array is (its pointer's
 * offset in the saved CPU state, 0: unknown) and an entry of it to make valid again (its
 * index + 1, compare word, EPN), the 405's 64 entries (tag, data, TID, valid) and
 * the 603's (per I/D, congruence class and way: page + 1, compare word, RPA word, spare;
 * per I/D and class the way used last; how many valid DTLB entries are cache-inhibited) */
enum { SW_KIND, SW_IDENTITY, SW_PENDING, SW_SPR_BASE, SW_CONTEXT, SW_FLUSH_CONTROL,
       SW_ERROR, SW_ERROR_PC, SW_ERROR_A, SW_ERROR_B, SW_ERROR_C, SW_CLASSES,
       SW_TLB6, SW_RESTORE, SW_RESTORE_PTE0, SW_RESTORE_EPN,
       SW_TAG405 = 16, SW_DATA405 = 80, SW_TID405 = 144, SW_VALID405 = 208,
       SW_E603 = 272, SW_MRU603 = 784, SW_INHIBITED603 = 848, SW_WORDS = 849 };
enum { SW_KIND_603 = 1, SW_KIND_405 = 2, SW_MAX_CLASSES = 32 };
enum { SW_ERR_PENDING = 1, SW_ERR_IDENTITY_603 = 2, SW_ERR_PAGE_SIZE = 3,
       SW_ERR_IDENTITY_405 = 4 };
enum { SPR_SRR1 = 27, SPR_DCMP = 977, SPR_ICMP = 981, SPR_RPA = 982, SPR_PID405 = 945 };
#define RPA_WIMG_I 0x20               /* a 603 RPA word's (a PTE's word 1) I bit */
#define MSR_TGPR 0x20000
#define MSR_PR 0x4000
#define MSR_IR 0x20
#define MSR_DR 0x10

/* ---- the BATs a software-loaded TLB's model knows (st[H_BATS] is their address, 0: none):
 * 4 instruction then 4 data BATs, each valid for supervisor, valid for user, first physical
 * address, size (emu.kernel.entry: BATs that map EA = physical) */
enum { BAT_VS, BAT_VP, BAT_START, BAT_SIZE, BAT_WORDS, BATS_PER_SIDE = 4 };
/* ---- the 604's TLBs and table search (tlb604.c; emu.hw.tlb604 builds the record) */
enum { T6_ST, T6_CLASSES, T6_WAYS, T6_WALK_CYCLES, T6_PTE_CYCLES, T6_MSR_REG, T6_FLUSH_CONTROL,
       T6_BAT_SIZE, T6_SDR1, T6_FAULT_KIND, T6_FAULT_EA, T6_FAULT_ACCESS, T6_ITLB_MISSES,
       T6_DTLB_MISSES, T6_SEARCHES, T6_SEARCH_CYCLES, T6_PTE_READS, T6_PRIMARY, T6_SECONDARY,
       T6_HASH_MISSES, T6_PROTECTION, T6_EVICTIONS, T6_FLUSHES, T6_CLOCK, T6_BAT_FILLS,
       T6_SEGMENTS = 32, T6_ENTRIES = 48, T6_ENTRY_WORDS = 3,
       T6_FAULT_NONE = 0, T6_FAULT_NO_HPTE = 1, T6_FAULT_PROTECTION = 2 };

/* ---- PL310 register offsets (emu.cache OUTER_*) */
#define OUTER_CACHE_SYNC 0x730
#define OUTER_DUMMY_SYNC 0x740

/* ---- parts of the model beyond the caches that a machine may have (emu.native): the MMU,
 * the memory system in time, alignment rules, store queues (which need a store-through L1 D:
 * emu.cache refuses them without one) */
enum { PART_MMU = 1, PART_MEMSYS = 2, PART_ALIGN = 4, PART_SQ = 8, ALL_PARTS = 15 };

/* a level's record */
#define REC(level) (HEADER + LEVEL_RECORD * (level))

/* Python's floor division and modulo (numbers the model divides may be negative: 64-bit
 * effective addresses above 2^63 are negative int64) */
static inline i64 floor_div(i64 a, i64 b) {
    i64 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline i64 floor_mod(i64 a, i64 b) {
    i64 m = a % b;
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
static inline i64 max64(i64 a, i64 b) { return a > b ? a : b; }
static inline i64 min64(i64 a, i64 b) { return a < b ? a : b; }

/* (The build's flags, emu/model/build.py, are GCC's and Clang's: AT_LOAD, which runs a
 * function when the library is loaded, has no fallback.) */
#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#define HOT static inline __attribute__((always_inline))
#define NOINLINE static __attribute__((noinline))
#define AT_LOAD __attribute__((constructor))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define EXPORT
#define HOT static inline
#define NOINLINE static
#define UNLIKELY(x) (x)
#endif

#endif
