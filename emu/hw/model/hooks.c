/* The native hot path: Unicorn hooks, registered without Python callbacks (emu/native.py).
 *
 * Each hook receives the model's state array as its user-data pointer:
 *   memory_hook       every guest load and store to RAM -> the data side of the model;
 *   outer_cache_hook  stores to an outer cache controller's registers (PL310);
 *   block_hook        every basic block -> instruction count, base cycles (prefix tables),
 *                     instruction fetch through the I-cache, the instruction limit;
 *   special_hook      only at cache-maintenance, prefetch, non-temporal, TLB and SLB
 *                     instructions (a ranged code hook per run of them) -> their effect;
 *                     x86's locked read-modify-writes take theirs from the memory hook, at
 *                     their read (special_at_access: AT_ACCESS);
 *   identity_tlb_fill the PPC64 virtual-TLB mode's translation (identity);
 *   halt_fetch_hook   a return to the halt address in a scheduled run (smp.c).
 * Unicorn's own functions are reached through pointers (unicorn.c). In a run of several cores
 * (smp.c), the block hook is also the scheduler's gate and every access is ordered. */
#include "state.h"
#include <string.h>

enum { FIRST_FAULT = 1, FAULT = 2 };
/* What the block hook's common case (quick_block) did: nothing (the full path must run),
 * all, all and the machine must stop */
enum { QUICK_NO, QUICK_DONE, QUICK_STOP };
/* (PART_*, state.h: a memory hook is compiled for each set of the model's parts, memory_hook_0
 * ... memory_hook_14, so that a machine's hook holds only its own parts: Machine takes it
 * from emu.native.memory_hook_for; memory_hook has them all.) */

/* The MMU's stall for `ea`, and FAULT after a page fault, FIRST_FAULT after the first one,
 * whose PC is noted here if known (`pc` >= 0), else by stop_on_fault */
HOT i64 translate_noting(i64 *st, i64 ea, bool write, bool fetch, i64 pc, int *fault) {
    i64 faults = st[H_PAGE_FAULTS];
    i64 stall = translate(st, ea, write, fetch);
    *fault = 0;
    if (st[H_PAGE_FAULTS] != faults) {
        if (faults == 0 && pc >= 0)
            st[H_FAULT_PC] = pc;
        *fault = faults == 0 ? FIRST_FAULT : FAULT;
    }
    return stall;
}

/* A page fault stops the machine; the first one notes its PC (asked of Unicorn only now,
 * if the hook did not know it) */
static void stop_on_fault(uc_engine *uc, i64 *st, int fault, i64 pc) {
    if (fault == FIRST_FAULT && pc < 0)
        st[H_FAULT_PC] = guest_pc(uc, st);
    model_stop(uc, st);
}

/* Profiler on: each instruction of the block gets its execution, its base cycles and (the
 * first) the fetch stall, in order, so that samples land where the cycles are */
static void profile_block(i64 *st, i64 off, i64 size, i64 fetch_stall) {
    i64 counts = st[H_ICOUNT], costs = st[H_ICOST], hits = st[H_INSN_HITS];
    bool first = true;
    raise_profile_top(st, off + size);
    for (i64 k = off; k < off + size; k++) {
        if (st[counts + k + 1] - st[counts + k] == 1) {     /* an instruction starts here */
            st[hits + k] += 1;
            i64 cycles = st[costs + k + 1] - st[costs + k];
            if (first) {
                cycles += fetch_stall;
                first = false;
            }
            account(st, k, cycles);
        }
    }
}

/* The cycle at which the access being hooked (at `pc`) issues: the block hook charged the
 * whole block's base cycles at its start, so take off this instruction's and the later
 * ones' (store queues and the order of cores' accesses need the time of each access, not
 * of its block) */
HOT i64 access_time(const i64 *st, i64 pc) {
    i64 now = st[H_CYCLES];
    i64 end = st[H_BLOCK_END_COST];
    if (end >= 0) {
        i64 off = pc - st[H_CODE_BASE];
        if (off >= 0 && off < st[H_CODE_TOP])
            now -= end - st[st[H_ICOST] + off];
    }
    return now;
}

/* Cycles to the instruction at `pc` (-1: unknown) or, without the profiler, to the clock.
 * `observed`: the profiler or the scheduler may be on (else neither is: no check). */
HOT void charge(i64 *st, i64 pc, i64 cycles, bool observed) {
    if (observed && UNLIKELY(st[H_PROFILE_PERIOD] > 0))
        account(st, pc - st[H_CODE_BASE], cycles);
    else
        st[H_CYCLES] += cycles;
}

/* A data access through the memory system in time (emu/model/memsys.c): it waits for its
 * line if a prefetch or a read for ownership has it in flight; a store goes into the store
 * buffer (the core waits only when it is full); a fill from memory holds a fill buffer
 * until it arrives; a demand access may move the stream prefetcher on. */
HOT i64 memory_system_access(i64 *st, i64 address, i64 size, bool write) {
    i64 now = st[H_CYCLES];
    i64 late = st[H_FB_LIVE] > 0 ? in_flight_wait(st, address, now) : 0;
    st[H_STORE_DONE] = 0;
    st[H_FILL_READY] = -1;
    i64 stall = data_access_of(st, address, size, write, PART_MEMSYS);
    if (late && !write) {                  /* a load came before its line (a store waits in
                                            * the store buffer instead) */
        st[H_PREFETCH_LATE] += 1;
        st[H_PREFETCH_LATE_CYCLES] += late;
    }
    if (st[H_FILL_READY] >= 0 && st[H_FB_ENTRIES]) {
        /* a fill from memory holds a buffer until the access has its data (for a load,
         * when the core goes on: the L1's hit latency sooner than the line's arrival) */
        i64 unit = st[H_L1D] >= 0 ? st[H_L1D] : st[H_FIRST_LEVEL];
        fill_buffer_hold(st, address, unit >= 0 ? st[REC(unit) + L_SHIFT] : 6, now,
                         min64(st[H_FILL_READY], now + stall));
    }
    if (write && st[H_SB_ENTRIES])
        stall = store_buffer_push(st, now, max64(max64(stall, st[H_STORE_DONE]), late));
    else
        stall += late;
    if (st[H_PF_ACCESS] >= 0) {
        i64 seen = st[H_PF_ACCESS];
        st[H_PF_ACCESS] = -1;
        if (st[H_PF_STREAMS])
            stream_prefetch(st, seen, st[H_PF_MISSED] != 0);
    }
    return stall;
}

/* The model's part of one guest load or store; returns 0 or a fault. `pc`: the guest PC
 * if the hook read it (profiler, scheduler, store queues), else -1. `observed`: the
 * profiler or the scheduler may be on; a constant where it is called, so that the common
 * case, neither, is compiled without their checks. The MMU translates first: a
 * cache-inhibited page bypasses the caches. */
HOT int model_access(i64 *st, i64 address, i64 size, bool write, i64 pc, bool observed,
                     int parts) {
    if (UNLIKELY(st[H_SWALLOW] > 0) &&
            (st[H_SWALLOW_ADDR] < 0 || st[H_SWALLOW_ADDR] == address)) {
        /* the probe load (and store) QEMU makes for dcbst/dcbf/dcbi/icbi, or the load (and
         * the old value's store, on failure) of its compare-and-exchange for a
         * store-conditional: not data accesses */
        st[H_SWALLOW] -= 1;
        return 0;
    }
    if (UNLIKELY(write && st[H_NONTEMPORAL] > 0)) {
        st[H_NONTEMPORAL] = 0;
        charge(st, pc, nontemporal_store(st, address, size), observed);
        return 0;
    }
    i64 stall = observed && UNLIKELY(st[H_SCHED]) ?
        order_access(st, address, write, pc >= 0 ? access_time(st, pc) : st[H_CYCLES]) : 0;
    int fault = 0;
    if ((parts & PART_MMU) && st[H_MMU]) {
        i64 memo = st[H_MEMOS] + (write ? X_STORE : X_LOAD);
        if (!translated_as_before(st, memo, address, write ? DENY_WRITE : DENY_READ)) {
            stall += translate_noting(st, address, write, false, pc, &fault);
            if (!fault)
                note_translation(st, memo, st[H_DTLB], address);
        }
        if (UNLIKELY(st[H_XLATE_ATTR] & ATTR_INHIBITED) && !fault) {
            charge(st, pc, stall + uncached_access(st, size, write), observed);
            return fault;
        }
    }
    stall += (parts & PART_MEMSYS) && UNLIKELY(st[H_MEMSYS]) ?
        memory_system_access(st, address, size, write) :
        data_access_of(st, address, size, write, parts);
    if ((parts & (PART_ALIGN | PART_SQ)) && UNLIKELY(st[H_ACCESS_EXTRAS])) {
        if ((parts & PART_ALIGN) && (st[H_ALIGN_SIZE] | st[H_SPLIT_MASK]))
            stall += alignment(st, address, size);
        if ((parts & PART_SQ) && write && st[H_SQ_SLICES] > 0)
            stall += store_queue(st, address, size, access_time(st, pc) + stall);
    }
    charge(st, pc, stall, observed);
    return fault;
}

/* model_access with the profiler or the scheduler on: a copy of its own, out of the way */
NOINLINE int observed_access(i64 *st, i64 address, i64 size, bool write, i64 pc) {
    return model_access(st, address, size, write, pc, true, ALL_PARTS);
}

/* Is `address` in the loaded code? */
HOT bool in_loaded_code(const i64 *st, i64 address) {
    i64 off = address - st[H_CODE_BASE];
    return off >= 0 && off < st[H_CODE_TOP];
}

/* Is a store over the loaded code? Its listing, where the block hook looks for a block's
 * stores (single_store), is then void for good. */
HOT bool store_over_code(i64 *st, i64 address) {
    if (UNLIKELY(in_loaded_code(st, address))) {
        st[st[H_SCRATCH] + S_CODE_WRITTEN] = 1;
        return true;
    }
    return false;
}

/* A store with store queues on: the PC it was issued at (they need its time). That is the
 * block's only instruction that can store, when the block hook found one; else (and for a
 * store over the code) Unicorn is asked. */
HOT i64 store_pc(uc_engine *uc, i64 *st, i64 address) {
    i64 at = st[H_BLOCK_STORE];
    if (store_over_code(st, address) || at < 0)
        return guest_pc(uc, st);
    return st[H_CODE_BASE] + at;
}

/* The memory hook of a machine whose state switches on no part beyond `parts` (a constant
 * where it is called: the parts it lacks are not compiled in; those it has are still
 * tested, as in memory_hook). A machine's parts are fixed when it is made. (Its common
 * case goes by quick_access first: MEMORY_HOOK below.) */
HOT void memory_hook_of(uc_engine *uc, int access, i64 address, int size, i64 *st,
                        int parts) {
    bool write = access == UC_MEM_WRITE;
    i64 pc = -1;             /* Unicorn keeps the PC exact in hooks; read only when needed */
    int fault;
    if (UNLIKELY(st[H_PROFILE_PERIOD] > 0 || st[H_SCHED])) {
        if (write && st[H_SQ_SLICES] > 0)
            store_over_code(st, address);
        pc = guest_pc(uc, st);
        fault = observed_access(st, address, size, write, pc);
    } else {
        if ((parts & PART_SQ) && write && st[H_SQ_SLICES] > 0)
            pc = store_pc(uc, st, address);
        fault = model_access(st, address, size, write, pc, false, parts);
    }
    if (UNLIKELY(fault))
        stop_on_fault(uc, st, fault, pc);
}

/* Would `alignment` find the access misaligned (and count it, and cost it)? */
HOT bool misaligned(const i64 *st, i64 addr, i64 size) {
    i64 mask = st[H_SPLIT_MASK];
    return (size == st[H_ALIGN_SIZE] && (addr & st[H_ALIGN_MASK])) ||
           (mask && (addr & mask) + size > mask + 1);
}

/* The L1 D's record and the one line of it that [address, address+size) lies in: false
 * if there is no L1 D or the access spans two lines */
HOT bool l1d_line(const i64 *st, i64 address, i64 size, i64 *r, i64 *line) {
    if (st[H_L1D] < 0)
        return false;
    *r = REC(st[H_L1D]);
    return one_line(st, *r, address, size, line);
}

/* The memory hook's common case, in the hooks of machines with an MMU: no profiler,
 * scheduler or pending special access, the translation memo holding (a cacheable page), a
 * load or a store to a dirty line of a write-back L1 D that hits, aligned, no store queue
 * to go through. What model_access does then (counts, and no stall), with no call, so that
 * the hook saves no registers. False, and nothing done, otherwise. (Without an MMU there
 * is less to skip, and the hooks were as fast or faster without it.) */
HOT bool quick_access(i64 *st, i64 address, i64 size, bool write, int parts) {
    if (st[H_PROFILE_PERIOD] > 0 || st[H_SCHED] || st[H_SWALLOW] > 0)
        return false;
    if (write && (st[H_NONTEMPORAL] > 0 || ((parts & PART_SQ) && st[H_SQ_SLICES] > 0)))
        return false;
    i64 r, line;
    if (!l1d_line(st, address, size, &r, &line))
        return false;
    i64 s = line & (st[r + L_SETS] - 1);
    i64 m = st[st[r + L_MRU] + s];
    bool mru = (m >> MRU_WAY_BITS) == line + 1;
    /* (hit, without its touch; with store queues, whose store-through L1 D takes only
     * loads here, the set's most recent line only: the search's registers cost every load
     * more than it saves) */
    i64 way = mru ? m & WAY_MASK : (parts & PART_SQ) ? -1 : find(st, r, line);
    if (way < 0)
        return false;
    if (write && !(st[r + L_WRITE_BACK] && st[st[r + L_DIRTY] + s * st[r + L_WAYS] + way]))
        return false;
    if ((parts & PART_ALIGN) && st[H_ACCESS_EXTRAS] && misaligned(st, address, size))
        return false;
    i64 xlate = st[H_MEMOS] + (write ? X_STORE : X_LOAD);
    i64 perm = memo_permission(st, xlate, address, write ? DENY_WRITE : DENY_READ);
    if (perm < 0 || (perm & ATTR_INHIBITED))
        return false;
    use_memo(st, xlate, perm);
    if (!mru)
        touch(st, r, s, way, line + 1);
    st[r + L_ACCESSES] += 1;
    st[r + L_HITS] += 1;
    return true;
}

/* A store's common case with store queues (POWER4's store-through L1 D): no profiler,
 * scheduler or pending special access, the store the block's only one (its PC known) and
 * not over the code, the translation memo holding a cacheable page, one L1 D line known
 * absent (or its set's most recent), the L2 line its set's most recent and dirty, its
 * I-cache copies flagged as before, aligned. What model_access does then, with no call:
 * true. False, and nothing done, otherwise. (In a function of its own per hook, _store,
 * reached by a tail call: the hook's loads take fewer registers without it.) */
HOT bool quick_store(i64 *st, i64 address, i64 size, int parts) {
    if (st[H_PROFILE_PERIOD] > 0 || st[H_SCHED] || st[H_SWALLOW] > 0 ||
            st[H_NONTEMPORAL] > 0 || st[H_SQ_SLICES] <= 0 || st[H_CORES] ||
            st[H_BLOCK_STORE] < 0 || st[H_QUEUE_N] || ((parts & PART_MEMSYS) && st[H_MEMSYS]))
        return false;
    if (in_loaded_code(st, address))          /* over the code: store_over_code notes it */
        return false;
    i64 r, line;
    if (!l1d_line(st, address, size, &r, &line) || st[r + L_WRITE_BACK])
        return false;
    bool absent = known_absent(st, r, line) && !st[r + L_WRITE_ALLOCATE];
    if (!absent && (st[st[r + L_MRU] + (line & (st[r + L_SETS] - 1))] >> MRU_WAY_BITS) !=
                   line + 1)
        return false;
    i64 next = st[r + L_NEXT];
    if (next == MEMORY || !is_dirty_mru_line(st, next, address) ||
            !changed_as_before(st, line))
        return false;
    if ((parts & PART_ALIGN) && misaligned(st, address, size))
        return false;
    bool mmu = (parts & PART_MMU) && st[H_MMU];
    i64 xlate = st[H_MEMOS] + X_STORE, perm = 0;
    if (mmu && ((perm = memo_permission(st, xlate, address, DENY_WRITE)) < 0 ||
                (perm & ATTR_INHIBITED)))
        return false;
    /* what model_access does, in its order */
    if (mmu)
        use_memo(st, xlate, perm);
    st[r + L_ACCESSES] += 1;                   /* store_through_inline */
    st[r + (absent ? L_MISSES : L_HITS)] += 1;
    store_to_dirty_mru(st, next, address);
    i64 pc = st[H_CODE_BASE] + st[H_BLOCK_STORE];
    st[H_CYCLES] += store_queue(st, address, size, access_time(st, pc));
    return true;
}

/* The memo of a block at `address` (X_BLOCKS: one record per address bits 2-4) */
HOT i64 *block_memo(i64 *st, i64 address) {
    return st + st[H_MEMOS] + X_BLOCKS + ((address >> 2) & (BLOCK_MEMOS - 1)) * XB_WORDS;
}

/* Does the block being run hold an AT_ACCESS special? (Its memo says: the block hook
 * filled it for this block, which no other block hook can have replaced since.) */
HOT bool block_holds_at_access(i64 *st) {
    i64 start = st[H_BLOCK_START];
    const i64 *memo = block_memo(st, start);
    return memo[XB_ADDRESS] == start && memo[XB_SIZE1] == st[H_BLOCK_SIZE] + 1 &&
           memo[XB_AT_ACCESS];
}

NOINLINE void special_at_access(uc_engine *uc, i64 *st);

/* Each memory hook first applies an AT_ACCESS special at its instruction's read (a machine
 * with none loaded: one test; a block without one: its memo's) */
#define MEMORY_HOOK(name, parts) \
    NOINLINE void name##_full(uc_engine *uc, int access, i64 address, int size, i64 *st) { \
        memory_hook_of(uc, access, address, size, st, parts); \
    } \
    NOINLINE void name##_store(uc_engine *uc, int access, i64 address, int size, i64 *st) { \
        if (!quick_store(st, address, size, parts)) \
            name##_full(uc, access, address, size, st); \
    } \
    EXPORT void name(uc_engine *uc, int access, u64 address, int size, i64 value, \
                     void *user_data) { \
        (void)value; \
        if (UNLIKELY(((i64 *)user_data)[H_AT_ACCESS_N]) && access != UC_MEM_WRITE && \
                block_holds_at_access(user_data)) \
            special_at_access(uc, user_data); \
        if (((parts) & PART_SQ) && access == UC_MEM_WRITE) \
            name##_store(uc, access, (i64)address, size, user_data); \
        else if (((parts) & PART_MMU) && !((parts) & PART_MEMSYS)) { \
            if (!quick_access(user_data, (i64)address, size, access == UC_MEM_WRITE, parts)) \
                name##_full(uc, access, (i64)address, size, user_data); \
        } else { \
            memory_hook_of(uc, access, (i64)address, size, user_data, parts); \
        } \
    }
MEMORY_HOOK(memory_hook, ALL_PARTS)
MEMORY_HOOK(memory_hook_0, 0)   MEMORY_HOOK(memory_hook_1, 1)   MEMORY_HOOK(memory_hook_2, 2)
MEMORY_HOOK(memory_hook_3, 3)   MEMORY_HOOK(memory_hook_4, 4)   MEMORY_HOOK(memory_hook_5, 5)
MEMORY_HOOK(memory_hook_6, 6)   MEMORY_HOOK(memory_hook_7, 7)   MEMORY_HOOK(memory_hook_8, 8)
MEMORY_HOOK(memory_hook_9, 9)   MEMORY_HOOK(memory_hook_10, 10) MEMORY_HOOK(memory_hook_11, 11)
MEMORY_HOOK(memory_hook_12, 12) MEMORY_HOOK(memory_hook_13, 13) MEMORY_HOOK(memory_hook_14, 14)

/* The parts of the model beyond the caches that a machine's state switches on */
EXPORT i64 emu_parts(const i64 *st) {
    return (st[H_MMU] ? PART_MMU : 0) | (st[H_MEMSYS] ? PART_MEMSYS : 0) |
           ((st[H_ALIGN_SIZE] | st[H_SPLIT_MASK]) ? PART_ALIGN : 0) |
           (st[H_SQ_SLICES] > 0 ? PART_SQ : 0);
}

/* A load or store in the outer cache controller's register page (a hook on that range only:
 * RAM accesses never come here). Loads read the page as memory (a status of 0: nothing in
 * progress, as the PL310 performs line operations atomically). */
EXPORT void outer_cache_hook(uc_engine *uc, int access, u64 address, int size, i64 value,
                             void *user_data) {
    (void)size;
    i64 *st = user_data;
    if (access != UC_MEM_WRITE)
        return;
    i64 stall = outer_cache_write(st, (i64)address - st[H_OUTER_BASE], value & 0xFFFFFFFF);
    if (st[H_PROFILE_PERIOD] > 0)
        account(st, guest_pc(uc, st) - st[H_CODE_BASE], stall);
    else
        st[H_CYCLES] += stall;
}

/* Code ran at [address, address + size), outside the loaded programs: the machine's span
 * of such code grows */
static void note_foreign(i64 *st, i64 address, i64 size) {
    i64 *span = st + st[H_SCRATCH];
    if (span[S_FOREIGN_HI] == 0 || address < span[S_FOREIGN_LO])
        span[S_FOREIGN_LO] = address;
    if (address + size > span[S_FOREIGN_HI])
        span[S_FOREIGN_HI] = address + size;
}

/* The code offset of the only instruction in [off, off + size) that can store (by the
 * listing: emu.cost.may_write), or -1: none, or several. (The listing is void once code was
 * written over since it was loaded: S_CODE_WRITTEN, which the caller reads.)
 * H_WRITERS[k]: 1 + the offset of the last such instruction before offset k. */
static i64 single_store(const i64 *st, i64 off, i64 size) {
    const i64 *writers = st + st[H_WRITERS];
    i64 at = writers[off + size] - 1;               /* the block's last, if it has one */
    if (at < off || writers[at] - 1 >= off)          /* none, or another one before it */
        return -1;
    return at;
}

/* The block's only store by its memo, unless code was written over since it was loaded
 * (the listing is then void: S_CODE_WRITTEN) */
HOT i64 block_store(const i64 *st, const i64 *memo) {
    return st[st[H_SCRATCH] + S_CODE_WRITTEN] ? -1 : memo[XB_STORE];
}

/* Does the code at [from, to) hold an AT_ACCESS special? (The specials' table is sorted by
 * PC: the first at `from` or after, then those before `to`.) */
static bool holds_at_access(const i64 *st, i64 from, i64 to) {
    const i64 *table = st + st[H_SPECIALS];
    i64 n = st[H_NSPECIALS], lo = 0, hi = n;
    while (lo < hi) {
        i64 mid = (lo + hi) / 2;
        if (table[8 * mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (i64 k = lo; k < n && table[8 * k] < to; k++)
        if (table[8 * k + 2] & AT_ACCESS)
            return true;
    return false;
}

/* A block of the loaded code at code offset `off`: its facts from the prefix tables, into
 * its memo */
static void remember_block(i64 *st, i64 *memo, i64 address, i64 off, i64 size) {
    i64 counts = st[H_ICOUNT], costs = st[H_ICOST];
    memo[XB_ADDRESS] = address;
    memo[XB_SIZE1] = size + 1;
    memo[XB_N] = st[counts + off + size] - st[counts + off];
    memo[XB_CYCLES] = st[costs + off + size] - st[costs + off];
    memo[XB_END] = st[costs + off + size];
    memo[XB_STORE] = single_store(st, off, size);
    memo[XB_MRU_AT] = 0;
    /* (an AT_ACCESS special synchronises: a block without such an instruction by the
     * synchronising prefix sums holds none, and the table is not searched) */
    i64 syncs = st[H_SYNC_STATIC];
    memo[XB_AT_ACCESS] = st[H_AT_ACCESS_N] && st[syncs + off + size] != st[syncs + off] &&
                         holds_at_access(st, address, address + size);
    /* the block ran: its instructions' costs were read (emu.run.costreads looks, and
     * forgets the memos so that the blocks run after it come here again); its array
     * covers the loaded code, which holds the block */
    i64 *touched = (i64 *)(intptr_t)st[H_TOUCHED];
    if (touched && touched[off] < size)
        touched[off] = size;
}

/* Is the block's fetch through the L1 I (record `r`) the common case, one line that is its
 * set's most recent and not stale (fetch_hits_mru)? The same set's MRU word as when its memo
 * last found it so means the same line in the same way: its stale flag alone is read. Else
 * the tags are, and a yes is remembered. */
HOT bool fetch_as_before(i64 *st, i64 *memo, i64 r, i64 address, i64 size) {
    i64 at = memo[XB_MRU_AT];
    if (at && st[at] == memo[XB_MRU_WORD])
        return st[memo[XB_STALE_AT]] == 0;
    if (!fetch_hits_mru(st, r, address, size))
        return false;
    i64 s = (address >> st[r + L_SHIFT]) & (st[r + L_SETS] - 1);
    memo[XB_MRU_AT] = st[r + L_MRU] + s;
    memo[XB_MRU_WORD] = st[memo[XB_MRU_AT]];
    memo[XB_STALE_AT] = st[r + L_STALE] + s * st[r + L_WAYS] + (memo[XB_MRU_WORD] & WAY_MASK);
    return true;
}

/* The model's part of one basic block; returns true to stop the machine */
HOT bool model_block(i64 *st, i64 address, i64 size, int parts) {
    if (UNLIKELY(st[H_SCHED]) && sync_gate(st, address, size))
        return true;                       /* the block does not run now: nothing charged */
    if (UNLIKELY(st[H_SWALLOW_ADDR] >= 0)) {
        st[H_SWALLOW] = 0;                 /* a store-conditional QEMU failed without access */
        st[H_SWALLOW_ADDR] = -1;
    }
    i64 off = address - st[H_CODE_BASE];
    i64 *memo = block_memo(st, address);
    bool in_code = memo[XB_ADDRESS] == address && memo[XB_SIZE1] == size + 1;
    if (!in_code && off >= 0 && off + size <= st[H_CODE_TOP]) {     /* loaded code */
        remember_block(st, memo, address, off, size);
        in_code = true;
    }
    i64 n, cycles;
    if (in_code) {
        n = memo[XB_N];
        cycles = memo[XB_CYCLES];
    } else if (st[H_FIXED_WIDTH] > 0) {
        n = size / st[H_FIXED_WIDTH];
        cycles = n * st[H_DEFAULT_COST];
        note_foreign(st, address, size);
    } else {
        /* x86 code the model was not told about: foreign_insn_hook counts and charges
         * each of its instructions as it runs (their lengths are not known here) */
        n = 0;
        cycles = 0;
    }
    if (((parts & PART_SQ) && st[H_SQ_SLICES] > 0) || st[H_SCHED]) {   /* for access_time,
                                                                         * store_pc */
        st[H_BLOCK_END_COST] = in_code ? memo[XB_END] : -1;
        st[H_BLOCK_STORE] = in_code ? block_store(st, memo) : -1;
    }
    i64 stale_before = st[H_STALE];
    st[H_BLOCK_START] = address;
    st[H_BLOCK_SIZE] = size;
    st[H_INSNS] += n;
    i64 fetch_stall = fetch(st, address, size, address);
    bool stop = false;
    if ((parts & PART_MMU) && st[H_MMU] &&
            !translated_as_before(st, st[H_MEMOS] + X_FETCH, address, DENY_FETCH)) {
        int fault;
        fetch_stall += translate_noting(st, address, false, true, address, &fault);
        stop = fault != 0;
        if (!fault)
            note_translation(st, st[H_MEMOS] + X_FETCH, st[H_ITLB], address);
        /* software-loaded TLB: note the block, to undo its counts if an access faults */
        if (st[H_MMU] >= MODE_SOFT603 && st[H_MMU] <= MODE_SOFT405) {
            st[st[H_SCRATCH] + S_BLOCK_START] = address;
            st[st[H_SCRATCH] + S_BLOCK_END] = address + size;
        }
    }
    if (UNLIKELY(st[H_PROFILE_PERIOD] > 0 && in_code))
        profile_block(st, off, size, fetch_stall);
    else
        st[H_CYCLES] += cycles + fetch_stall;
    if (UNLIKELY(st[H_INSNS] > st[H_LIMIT])) {
        st[H_STOPPED] = 1;
        stop = true;
    } else if (UNLIKELY(st[H_STRICT] && st[H_STALE] > stale_before)) {
        st[H_STALE_BLOCK] = address;
        stop = true;
    }
    return stop;
}

/* The block hook's common case: no scheduler, profiler or failed store-conditional, a
 * block of the loaded code it ran before (its memo), the fetch one L1 I line that is its
 * set's most recent and not stale, the translation as before. What model_block does then,
 * with no call, so that the hook saves no registers: QUICK_DONE, or QUICK_STOP at the
 * instruction limit. QUICK_NO, and nothing done, in any other case. */
HOT int quick_block(i64 *st, i64 address, i64 size, int parts) {
    if (st[H_SCHED] || st[H_SWALLOW_ADDR] >= 0 || st[H_PROFILE_PERIOD] > 0)
        return QUICK_NO;
    i64 *memo = block_memo(st, address);
    if (memo[XB_ADDRESS] != address || memo[XB_SIZE1] != size + 1)
        return QUICK_NO;
    i64 l1i = st[H_L1I];
    if (l1i >= 0 && !fetch_as_before(st, memo, REC(l1i), address, size))
        return QUICK_NO;
    bool mmu = (parts & PART_MMU) && st[H_MMU];
    i64 xlate = st[H_MEMOS] + X_FETCH, perm = 0;
    if (mmu && (perm = memo_permission(st, xlate, address, DENY_FETCH)) < 0)
        return QUICK_NO;
    if ((parts & PART_SQ) && st[H_SQ_SLICES] > 0) {
        st[H_BLOCK_END_COST] = memo[XB_END];
        st[H_BLOCK_STORE] = block_store(st, memo);
    }
    st[H_BLOCK_START] = address;
    st[H_BLOCK_SIZE] = size;
    st[H_INSNS] += memo[XB_N];
    if (l1i >= 0) {
        st[REC(l1i) + L_ACCESSES] += 1;
        st[REC(l1i) + L_HITS] += 1;
    }
    if (mmu)
        use_memo(st, xlate, perm);
    st[H_CYCLES] += memo[XB_CYCLES];
    if (UNLIKELY(st[H_INSNS] > st[H_LIMIT])) {
        st[H_STOPPED] = 1;
        return QUICK_STOP;
    }
    return QUICK_DONE;
}

/* x86 code outside the loaded programs (a ranged code hook per instruction over the
 * addresses above and below them; Machine._hook_foreign_code): each instruction counts one
 * and costs the profile's default, and the instruction limit holds to the instruction. A
 * block translated before its addresses were loaded still calls it: skipped. */
EXPORT void foreign_insn_hook(uc_engine *uc, u64 address, uint32_t size, void *user_data) {
    i64 *st = user_data;
    if (in_loaded_code(st, (i64)address))
        return;
    st[H_INSNS] += 1;
    st[H_CYCLES] += st[H_DEFAULT_COST];
    st[H_UNCOUNTED] += 1;
    note_foreign(st, (i64)address, size);
    if (UNLIKELY(st[H_INSNS] > st[H_LIMIT]) && !st[H_STOPPED]) {
        st[H_STOPPED] = 1;
        model_stop(uc, st);
    }
}

/* The block hook, as the memory hook, compiled for the parts of a machine (those it reads:
 * the MMU, store queues): block_hook_0, _1, _8, _9; block_hook has both. The common case
 * inline (quick_block), the rest in a function of its own (_full). An interrupt (SIGINT,
 * interrupt.c) stops the run at the block, which is not counted. */
#define BLOCK_HOOK(name, parts) \
    NOINLINE bool name##_full(i64 *st, i64 address, i64 size) { \
        return model_block(st, address, size, parts); \
    } \
    EXPORT void name(uc_engine *uc, u64 address, uint32_t size, void *user_data) { \
        if (UNLIKELY(sigint_pending)) {      /* interrupt.c: stop before this block */ \
            model_stop(uc, user_data); \
            return; \
        } \
        int quick = quick_block(user_data, (i64)address, (i64)size, parts); \
        if (quick == QUICK_DONE) \
            return; \
        if (quick == QUICK_STOP || name##_full(user_data, (i64)address, (i64)size)) \
            model_stop(uc, user_data); \
    }
BLOCK_HOOK(block_hook, ALL_PARTS)
BLOCK_HOOK(block_hook_0, 0)
BLOCK_HOOK(block_hook_1, PART_MMU)
BLOCK_HOOK(block_hook_8, PART_SQ)
BLOCK_HOOK(block_hook_9, PART_MMU | PART_SQ)

/* slbmte RS, RB into the model's SLB; one the model refuses stops the machine, its PC, RS
 * and RB noted (S_SLB_*) for the error message */
static void slb_store_hooked(uc_engine *uc, i64 *st, i64 address, i64 entry) {
    i64 rs = guest_register(uc, st, st[entry + 3]);
    i64 rb = guest_register(uc, st, st[entry + 4]);
    i64 at = st[H_SCRATCH];
    if (!slb_store(st, rs, rb) && st[at + S_SLB_PC] == 0) {
        st[at + S_SLB_PC] = address;
        st[at + S_SLB_RS] = rs;
        st[at + S_SLB_RB] = rb;
        model_stop(uc, st);
    }
}

/* ------------------------------------------------ load-reserve and store-conditional */

/* lwarx/ldarx/ldrex: the reservation QEMU keeps (its address, and the bytes the load reads,
 * which a store-conditional compares) */
static void load_reserve(i64 *st, i64 ea, i64 size) {
    i64 value = 0;
    if (ea >= 0 && ea + size <= st[H_RAM_SIZE])
        memcpy(&value, (const uint8_t *)(intptr_t)st[H_RAM_PTR] + ea, (size_t)size);
    st[H_RESERVE_ADDR] = ea;
    st[H_RESERVE_VAL] = value;
    st[H_RESERVE_SIZE] = size;
}

/* stwcx./stdcx./strex: QEMU fails it at once (no access) unless the reservation is at `ea`;
 * otherwise it runs a compare-and-exchange with the reserved bytes, whose memory-hook events
 * are a load and a store (of the new value, or of the old one when it fails). Only the
 * successful store is a data access. The reservation ends either way. */
static void store_conditional(i64 *st, i64 ea, i64 size) {
    if (st[H_RESERVE_ADDR] == ea && ea >= 0 && ea + size <= st[H_RAM_SIZE]) {
        i64 now = 0, want = st[H_RESERVE_VAL];
        memcpy(&now, (const uint8_t *)(intptr_t)st[H_RAM_PTR] + ea, (size_t)size);
        st[H_SWALLOW] = now == want ? 1 : 2;
        st[H_SWALLOW_ADDR] = ea;
    }
    st[H_RESERVE_ADDR] = -1;
}

/* Take back what the block hook charged for the instructions at code offsets [from, to):
 * they did not run (a store-conditional waits for earlier cores; the rest of its block will
 * be charged again when it runs). With the profiler on, their executions, cycles and the
 * samples the cycles crossed are taken back too. */
static void uncharge(i64 *st, i64 from, i64 to) {
    i64 counts = st[H_ICOUNT], costs = st[H_ICOST];
    st[H_INSNS] -= st[counts + to] - st[counts + from];
    if (st[H_PROFILE_PERIOD] <= 0) {
        st[H_CYCLES] -= st[costs + to] - st[costs + from];
        return;
    }
    i64 period = st[H_PROFILE_PERIOD];
    raise_profile_top(st, to);
    for (i64 k = to - 1; k >= from; k--) {
        if (st[counts + k + 1] - st[counts + k] != 1)
            continue;
        i64 cycles = st[costs + k + 1] - st[costs + k];
        st[H_CYCLES] -= cycles;
        st[st[H_INSN_CYCLES] + k] -= cycles;
        st[st[H_INSN_HITS] + k] -= 1;
        while (st[H_NEXT_SAMPLE] - period > st[H_CYCLES]) {
            st[H_NEXT_SAMPLE] -= period;
            st[st[H_SAMPLES] + k] -= 1;
        }
    }
}

/* Unicorn's errors for a data access that faulted (unicorn.h: READ/WRITE_UNMAPPED,
 * WRITE/READ_PROT): the instruction did not complete; and UC_ERR_EXCEPTION, which a TLB
 * fill refused (tlb604.c) ends a run with */
enum { UC_ERR_READ_UNMAPPED = 6, UC_ERR_WRITE_UNMAPPED = 7, UC_ERR_WRITE_PROT = 12,
       UC_ERR_READ_PROT = 13, UC_ERR_EXCEPTION = 21 };

/* Did the run end at a data access's fault? (An exception counts only as the 604's refused
 * fill of a load or store: a fetch's, or another exception, is not one.) */
static bool data_fault(i64 *st, i64 err) {
    if (err == UC_ERR_EXCEPTION) {
        if (!st[H_TLB604])
            return false;
        i64 *t = tlb604_record(st);
        return t[T6_FAULT_KIND] != T6_FAULT_NONE && t[T6_FAULT_ACCESS] != UC_MEM_FETCH_ACCESS;
    }
    return err == UC_ERR_READ_UNMAPPED || err == UC_ERR_WRITE_UNMAPPED ||
           err == UC_ERR_WRITE_PROT || err == UC_ERR_READ_PROT;
}

/* A run ended by Unicorn's error `err` with the guest at `pc`: if a data access of the
 * block being run faulted there (a 604's hash miss, an unmapped page), the block hook had
 * charged the whole block, but the instructions from the faulting one to the block's end
 * did not run; a run resumed at `pc` (after the fault is handled) counts them again, and
 * one resumed at a fixup never runs them. Take them back (their base cycles, and with the
 * profiler their executions and samples: uncharge), once. A fetch fault is left alone:
 * the block at its PC never started. */
EXPORT void emu_uncharge_faulted(i64 *st, i64 pc, i64 err) {
    if (!data_fault(st, err))
        return;
    i64 start = st[H_BLOCK_START], end = start + st[H_BLOCK_SIZE];
    i64 base = st[H_CODE_BASE];
    if (pc < start || pc >= end || start < base || end - base > st[H_CODE_TOP])
        return;
    uncharge(st, pc - base, end - base);
    st[H_BLOCK_SIZE] = 0;                     /* taken back: not again */
}

/* In a run of several cores, a store-conditional is where an atomic sequence can lose its
 * reservation to another core: it runs only while its core is the earliest (its clock, the
 * rest of its block not yet run, at most the earliest other core's). True: stop before it. */
static bool store_conditional_waits(i64 *st, i64 address) {
    i64 start = st[H_BLOCK_START], end = start + st[H_BLOCK_SIZE];
    i64 base = st[H_CODE_BASE];
    if (address < start || address >= end || start < base || end - base > st[H_CODE_TOP])
        return false;
    i64 costs = st[H_ICOST];
    i64 now = st[H_CYCLES] - (st[costs + end - base] - st[costs + address - base]);
    if (now <= st[H_SYNC_BOUND])
        return false;
    uncharge(st, address - base, end - base);
    st[H_SYNC_WAITS] += 1;
    return true;
}

/* The entry of the special instruction at `address` in the table sorted by address, or -1 */
static i64 special_entry(const i64 *st, i64 address) {
    i64 first = st[H_SPECIALS];
    i64 lo = 0, hi = st[H_NSPECIALS] - 1;
    while (lo <= hi) {
        i64 mid = (lo + hi) / 2;
        i64 pc = st[first + 8 * mid];
        if (pc == address)
            return first + 8 * mid;
        if (pc < address)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* The effect of the special instruction at `address` (its table entry at `entry`), before
 * the instruction runs */
static void special_effect(uc_engine *uc, i64 *st, i64 address, i64 entry) {
    i64 op = st[entry + 1], scope = st[entry + 2] & ~AT_ACCESS;
    if (scope & SERIAL) {
        /* it holds the machine-wide resource for its own base cost (see emu.cost.SERIAL) */
        i64 off = address - st[H_CODE_BASE];
        i64 own = st[st[H_ICOST] + off + 1] - st[st[H_ICOST] + off];
        account(st, off, serialise(st, RESOURCE_SERIAL, own));
        scope &= ~SERIAL;
    }
    bool broadcast = (scope & BROADCAST) != 0;  /* an address-only transaction (HID0[ABE]) */
    scope &= ~BROADCAST;
    if (op == OP_SLB_STORE) {
        slb_store_hooked(uc, st, address, entry);
        return;
    }
    if (op == OP_TLB_WRITE || op == OP_RFI || op == OP_TLB_LOAD_D || op == OP_TLB_LOAD_I) {
        i64 *t = soft_records(st);            /* hooked only with a software-loaded TLB */
        if (op == OP_TLB_WRITE)
            soft_tlbwe(uc, st, t, address, guest_register(uc, st, st[entry + 3]),
                       guest_register(uc, st, st[entry + 4]), scope & 1);
        else if (op == OP_RFI)
            soft_rfi(uc, st, t, address);
        else
            soft_tlb_load(uc, st, t, address, op == OP_TLB_LOAD_I,
                          guest_register(uc, st, st[entry + 4]));
        return;
    }
    i64 ea = st[entry + 6];
    for (int k = 0; k < 2; k++) {
        i64 reg = st[entry + 3 + k];
        if (reg >= 0)
            ea += guest_register(uc, st, reg) * (k == 1 ? st[entry + 5] : 1);
    }
    ea &= st[H_REG_WIDTH_MASK];
    switch (op) {
    case OP_NONTEMPORAL:
        st[H_NONTEMPORAL] = 1;
        break;
    case OP_DRAIN_WC:                         /* sfence, mfence */
        account(st, address - st[H_CODE_BASE],
                drain_write_combining(st) + store_buffer_drain(st));
        break;
    case OP_DRAIN_STORES:                     /* sync, dsb, dmb, lock, xchg */
        account(st, address - st[H_CODE_BASE], store_buffer_drain(st));
        break;
    case OP_SERIALISE:                        /* eieio: only its broadcast, if any */
        if (broadcast)
            account(st, address - st[H_CODE_BASE], address_only(st, st[H_CYCLES], false));
        break;
    case OP_IRQ_OFF:                          /* cpsid i: interrupts off from here */
        st[H_IRQ_OFF_AT] = issue_time(st, address);
        break;
    case OP_IRQ_RESTORE:                      /* msr cpsr_c (local_irq_restore) */
        st[H_IRQ_OFF_CYCLES] += max64(issue_time(st, address) - st[H_IRQ_OFF_AT], 0);
        break;
    case OP_COMPLETE: {                       /* sync, dsb, write-backs posted: both */
        /* from the end of its own cycles: the posted write-backs, then (the 750's sync,
         * HID0[ABE]) its own address-only tenure once they are done */
        i64 end = issue_end(st, address);
        i64 wait = store_buffer_drain(st) + posted_drain(st, end);
        if (broadcast)
            wait += address_only(st, end + wait, true);
        account(st, address - st[H_CODE_BASE], wait);
        break;
    }
    case OP_TLB_INVALIDATE:
        if (broadcast)
            account(st, address - st[H_CODE_BASE], address_only(st, st[H_CYCLES], false));
        invalidate_page(st, ea, (scope & TLB_BROADCAST) != 0);
        if (st[H_SOFTTLB] && soft_records(st)[SW_KIND] == SW_KIND_603)
            soft_tlbie603(soft_records(st), ea);
        if (st[H_TLB604]) {
            tlb604_invalidate_class(tlb604_record(st), ea);
            tlb604_flush_unicorn(uc, tlb604_record(st));
        }
        break;
    case OP_TLB_INVALIDATE_ALL:
        invalidate_all(st, (scope & TLB_BROADCAST) != 0);
        if (st[H_SOFTTLB] && soft_records(st)[SW_KIND] == SW_KIND_405)
            soft_tlbia405(soft_records(st));
        break;
    case OP_SLB_INVALIDATE:
        slb_invalidate(st, ea);
        break;
    case OP_SLB_INVALIDATE_ALL:
        slb_invalidate_all(st);
        break;
    case OP_MTMSR:                            /* software-loaded TLBs: translation on/off */
        st[H_XLATE] = ea & 0x30;
        break;
    case OP_LOAD_RESERVE:
        load_reserve(st, ea, st[entry + 7]);
        break;
    case OP_STORE_CONDITIONAL:
        if (st[H_SCHED] && store_conditional_waits(st, address)) {
            model_stop(uc, st);               /* the instruction does not run now */
            return;
        }
        store_conditional(st, ea, st[entry + 7]);
        break;
    default: {
        st[H_SWALLOW] = st[entry + 7];
        st[H_SWALLOW_ADDR] = -1;
        i64 writes = st[H_MEM_WRITES];
        i64 stall = maintain(st, ea, op, scope, address);
        if (broadcast && st[H_MEM_WRITES] == writes)   /* no write-back: address-only */
            stall += address_only(st, issue_time(st, address) + stall, false);
        if (st[H_MMU]) {                      /* dcb*, icbi translate their EA as a load */
            int fault;
            stall += translate_noting(st, ea, false, false, address, &fault);
            if (fault)
                model_stop(uc, st);
        }
        account(st, address - st[H_CODE_BASE], stall);
    }
    }
}

/* A code hook over specials (Machine.load: one per run of adjacent ones). An AT_ACCESS
 * special, which a span may hold between two others, is left to the memory hook. */
EXPORT void special_hook(uc_engine *uc, u64 address_u64, uint32_t size, void *user_data) {
    (void)size;
    i64 *st = user_data;
    i64 address = (i64)address_u64;
    i64 entry = special_entry(st, address);
    if (entry >= 0 && !(st[entry + 2] & AT_ACCESS))
        special_effect(uc, st, address, entry);
}

/* A read in a block that holds an AT_ACCESS special (block_holds_at_access; else nothing
 * is asked of Unicorn): at the special's own instruction, its effect, as the code hook gave
 * it at the start of the instruction. Such an instruction (x86 lock-prefixed or xchg
 * read-modify-write: emu.hw.cost.AT_ACCESS) reads once, before its store and after every
 * access of the instructions before it; nothing of the model's runs in between, and a
 * memory hook earlier in an x86 block never stops the run (the model has no x86 MMU). The
 * PC is exact here: Unicorn restored it before calling the hook. */
NOINLINE void special_at_access(uc_engine *uc, i64 *st) {
    i64 pc = guest_pc(uc, st);
    i64 entry = special_entry(st, pc);
    if (entry >= 0 && (st[entry + 2] & AT_ACCESS))
        special_effect(uc, st, pc, entry);
}

/* A fetch at the (unmapped) halt address in a run that does not stop at `until` (the
 * scheduler's slices, smp.c): the routine returned. The run ends with Unicorn's
 * fetch-unmapped error, which the scheduler takes for the return; stopping here keeps
 * Python's fault hook, registered after this one, from being called for it. */
EXPORT bool halt_fetch_hook(uc_engine *uc, int type, u64 address, int size, i64 value,
                            void *user_data) {
    (void)type; (void)address; (void)size; (void)value; (void)user_data;
    uc_emu_stop(uc);
    return false;
}

typedef struct { u64 paddr; int32_t perms; } tlb_entry;

EXPORT bool identity_tlb_fill(uc_engine *uc, u64 vaddr, int access, tlb_entry *result,
                              void *user_data) {
    (void)uc; (void)access; (void)user_data;
    result->paddr = vaddr & ~(u64)0xFFF;
    result->perms = 7;                      /* UC_PROT_ALL */
    return true;
}

/* Hooks that do nothing (but read the state, as a model would): the ceiling of any
 * per-access model, for emu.bench */
EXPORT void empty_memory_hook(uc_engine *uc, int access, u64 address, int size, i64 value,
                              void *user_data) {
    (void)uc; (void)access; (void)address; (void)size; (void)value; (void)user_data;
}

EXPORT void empty_block_hook(uc_engine *uc, u64 address, uint32_t size, void *user_data) {
    (void)uc; (void)address; (void)size; (void)user_data;
}

/* Sets the byte its user data points at, before every block (benchmarks/pc_restore.py: a
 * private flag of Unicorn's, which the library itself never touches) */
EXPORT void set_byte_block_hook(uc_engine *uc, u64 address, uint32_t size, void *user_data) {
    (void)uc; (void)address; (void)size;
    *(uint8_t *)user_data = 1;
}
