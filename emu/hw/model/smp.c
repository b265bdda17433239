/* Multi-core time: the scheduler that runs the cores' Unicorns in time slices, in the order
 * of their cycle clocks, and keeps what one core sees of another causal.
 * emu/parallel.py explains the design and why; in short:
 *
 * - Slices end only at block boundaries, decided in the block hook before the block runs
 *   (Unicorn then stops with the PC at the block: nothing is charged that did not run).
 * - The runnable core with the lowest clock runs next. It may run ahead of the others by up
 *   to the quantum (cycles) in ordinary code, but a *synchronising* block (an atomic
 *   instruction, a serialising one, or one where the cache model saw the core share a line
 *   with another) runs only while its core is the earliest: synchronisation happens in
 *   time order.
 * - Every store is stamped (line, sequence number, cycle, core). An access to a line another
 *   core stored to later than this core's clock waits until then: no core sees a store
 *   before it was made. (The transfer itself is the cache model's: snoop.)
 * - A core that spins (it re-enters the same synchronising block having stored nothing,
 *   read the same addresses as in its pass before, and only lines nobody has written
 *   since; the block holds no serialising instruction) is parked until a store to one of
 *   those lines wakes it, at the writer's clock; the cycles it spun are charged to the
 *   spin loop.
 */
#include "state.h"
#include <string.h>

static i64 *globals_of(i64 *st) {
    i64 t = st[H_CORES];
    return st + t + 1 + CORE_RECORD * st[t] + RESOURCES;
}

static i64 *core_record(i64 *st, i64 k) { return st + st[H_CORES] + 1 + CORE_RECORD * k; }

static i64 *saved_header(i64 *st, i64 k) { return st + globals_of(st)[G_HEADERS] + HEADER * k; }

/* A core's header: the live one for the running core */
static i64 *header_of(i64 *st, i64 k) {
    return k == globals_of(st)[G_RUNNING] ? st : saved_header(st, k);
}

static void switch_core(i64 *st, i64 k) {
    i64 *g = globals_of(st);
    if (g[G_RUNNING] == k)
        return;
    memcpy(saved_header(st, g[G_RUNNING]), st, HEADER * sizeof(i64));
    memcpy(st, saved_header(st, k), HEADER * sizeof(i64));
    g[G_RUNNING] = k;
}

/* ------------------------------------------------------------------ write stamps */

static i64 *stamp_of(i64 *st, i64 line) {
    i64 *g = globals_of(st);
    u64 h = ((u64)line * 0x9E3779B97F4A7C15ULL) >> 32;
    return st + g[G_STAMPS] + STAMP_WORDS * (i64)(h & (u64)g[G_STAMP_MASK]);
}

/* A store to `line` at cycle `when` by the running core wakes the cores spinning on it */
static void wake_watchers(i64 *st, i64 line, i64 when) {
    i64 n = st[st[H_CORES]];
    i64 *g = globals_of(st);
    for (i64 k = 0; k < n && g[G_NPARKED] > 0; k++) {
        i64 *r = core_record(st, k);
        if (r[T_STATUS] != CORE_PARKED)
            continue;
        for (i64 w = 0; w < r[T_NWATCH]; w++) {
            if (r[T_WATCH + w] != line)
                continue;
            i64 clock = header_of(st, k)[H_CYCLES];
            r[T_WAIT] = when > clock ? when - clock : 0;
            r[T_STATUS] = CORE_RUNNABLE;
            g[G_NPARKED] -= 1;
            /* the running core may not synchronise past the woken one any more */
            i64 woken = clock + r[T_WAIT];
            if (woken < st[H_SYNC_BOUND])
                st[H_SYNC_BOUND] = woken;
            break;
        }
    }
}

/* The ordering part of one access by the running core (scheduled runs only): wait for a
 * store another core made later than this core's clock; stamp a store; note the lines a
 * possible spin reads. Returns the wait. */
static i64 order_access(i64 *st, i64 address, bool write, i64 now) {
    i64 *g = globals_of(st);
    i64 me = st[H_CORE];
    i64 line = address >> g[G_STAMP_SHIFT];
    i64 *stamp = stamp_of(st, line);
    i64 wait = 0;
    if (stamp[0] == line + 1 && stamp[3] != me && stamp[2] > now) {
        wait = stamp[2] - now;
        st[H_ORDER_STALLS] += 1;
        st[H_ORDER_STALL_CYCLES] += wait;
    }
    if (write) {
        g[G_WRITE_SEQ] += 1;
        stamp[0] = line + 1;
        stamp[1] = g[G_WRITE_SEQ];
        stamp[2] = now + wait;
        stamp[3] = me;
        st[H_STORES_SINCE] += 1;
        if (g[G_NPARKED] > 0)
            wake_watchers(st, line, now + wait);
    } else if (st[H_WATCHING]) {
        st[H_READ_SIGNATURE] = (i64)(((u64)st[H_READ_SIGNATURE] ^ (u64)address) *
                                     0x9E3779B97F4A7C15ULL);
        i64 *r = core_record(st, me);
        i64 w = 0;
        while (w < r[T_NWATCH] && r[T_WATCH + w] != line)
            w++;
        if (w == r[T_NWATCH]) {
            if (w == WATCHES) {
                st[H_WATCHING] = 0;               /* reads too much to be a spin */
                r[T_NWATCH] = 0;
            } else {
                r[T_WATCH + w] = line;
                r[T_WATCH + WATCHES + w] = g[G_WRITE_SEQ];
                r[T_NWATCH] = w + 1;
            }
        }
    }
    return wait;
}

/* Has no line the running core watches been written since it read it? */
static bool watched_unchanged(i64 *st) {
    i64 *r = core_record(st, st[H_CORE]);
    for (i64 w = 0; w < r[T_NWATCH]; w++)
        if (stamp_of(st, r[T_WATCH + w])[1] > r[T_WATCH + WATCHES + w])
            return false;
    return true;
}

/* ------------------------------------------------------------------ the block gate */

static bool synchronising(const i64 *st, i64 address, i64 size) {
    i64 off = address - st[H_CODE_BASE];
    if (off < 0 || off + size > st[H_CODE_TOP])
        return false;
    i64 prefix = st[H_SYNC_STATIC];
    return st[prefix + off + size] != st[prefix + off] || st[st[H_SYNC_DYNAMIC] + off];
}

/* Does the block hold a serialising instruction (emu.cost.SYNC_SERIAL)? Such a block is
 * never a spin: a loop of tlbie over a batch stores nothing and re-reads its lines */
static bool serialising(const i64 *st, i64 address, i64 size) {
    i64 prefix = st[H_SYNC_STATIC], off = address - st[H_CODE_BASE];
    return st[prefix + off + size] - st[prefix + off] >= SYNC_SERIAL;
}

/* Before a block runs in a scheduled run: true to stop the core here (nothing charged):
 * its slice is over, it must wait for an earlier core before it synchronises, or it spins
 * and parks. */
/* Has this core run the block at `address` before (in this run)? A core's first run of a
 * block is ordered as a synchronising block's is, so that the coherence events that teach
 * the scheduler which blocks synchronise happen in time order, whatever the quantum. The
 * blocks a core has run: an open-addressed set per core (once it is 3/4 full, every block
 * counts as run before). */
static bool run_before(i64 *st, i64 address, bool note) {
    i64 *set = st + st[H_SEEN];
    u64 mask = SEEN_ENTRIES - 1;
    for (u64 k = ((u64)address * 0x9E3779B97F4A7C15ULL) >> 52;; k++) {
        i64 *slot = set + (k & mask);
        if (*slot == address + 1)
            return true;
        if (*slot == 0) {
            if (st[H_SEEN_N] >= SEEN_ENTRIES / 4 * 3)
                return true;
            if (note) {
                *slot = address + 1;
                st[H_SEEN_N] += 1;
            }
            return false;
        }
    }
}

static bool sync_gate(i64 *st, i64 address, i64 size) {
    if (st[H_CYCLES] >= st[H_SLICE_END])
        return true;
    if (!synchronising(st, address, size)) {
        if (run_before(st, address, false))
            return false;
        if (st[H_CYCLES] > st[H_SYNC_BOUND]) {   /* a first run waits for the cores behind */
            st[H_SYNC_WAITS] += 1;
            return true;
        }
        run_before(st, address, true);
        return false;
    }
    if (st[H_CYCLES] > st[H_SYNC_BOUND]) {
        st[H_SYNC_WAITS] += 1;
        return true;
    }
    i64 *r = core_record(st, st[H_CORE]);
    bool again = st[H_LAST_SYNC_BLOCK] == address;
    if (!st[H_NO_PARK] && again && st[H_STORES_SINCE] == 0 && st[H_WATCHING] &&
            r[T_NWATCH] > 0 && st[H_READ_SIGNATURE] == st[H_LAST_READ_SIGNATURE] &&
            !serialising(st, address, size) && watched_unchanged(st)) {
        st[H_PARK] = 1;
        return true;
    }
    /* the addresses this pass read, for the next pass to compare with (a first pass
     * compares with nothing) */
    st[H_LAST_READ_SIGNATURE] = again ? st[H_READ_SIGNATURE] : -1;
    st[H_READ_SIGNATURE] = 0;
    st[H_LAST_SYNC_BLOCK] = address;
    st[H_STORES_SINCE] = 0;
    st[H_WATCHING] = 1;
    r[T_NWATCH] = 0;
    return false;
}

/* ------------------------------------------------------------------ the scheduler */

enum { RUN_ALL_DONE, RUN_CORE_DONE, RUN_STOPPED, RUN_ERROR };

/* The core of the lowest clock among some, and the lowest clock of the others */
typedef struct { i64 core, clock, next; } earliest;
#define NO_CORE ((earliest){-1, NEVER_CYCLE, NEVER_CYCLE})

/* Which of two cores at the same clock goes first: with G_TIES 0 the lower-numbered
 * (a fixed priority), with G_TIES 1 the one a hash of (clock, core) puts first (no core
 * favoured: a different order at each clock). Ties are common where one store wakes
 * several spinning cores, which all wake at the writer's clock (wake_watchers): the first
 * to run takes the lock. */
static u64 tie_key(i64 core, i64 clock) {
    return ((u64)clock * 0x9E3779B97F4A7C15ULL) ^ ((u64)(core + 1) * 0xC2B2AE3D27D4EB4FULL);
}

static void note_clock(earliest *e, i64 core, i64 clock, bool hashed) {
    if (clock < e->clock || (hashed && clock == e->clock && e->core >= 0 &&
                             tie_key(core, clock) < tie_key(e->core, clock))) {
        e->next = e->clock;
        e->clock = clock;
        e->core = core;
    } else if (clock < e->next) {
        e->next = clock;
    }
}

/* A woken core's spin, charged to its spin loop (so that a profile samples it there) */
static void charge_spin(i64 *st, i64 *r) {
    i64 wait = r[T_WAIT];
    r[T_WAIT] = 0;
    st[H_SPIN_WAIT] += wait;
    account(st, r[T_SPIN_BLOCK] - st[H_CODE_BASE], wait);
}

EXPORT void emu_uncharge_faulted(i64 *st, i64 pc, i64 err);     /* hooks.c */

static bool stopped_by_model(const i64 *st) {
    return st[H_STOPPED] || st[H_PAGE_FAULTS] || st[H_HOST_STOP] ||
           st[st[H_SCRATCH] + S_SLB_PC] || (st[H_STRICT] && st[H_STALE]);
}

/* Run the cores whose status is CORE_RUNNABLE (their T_PC set, their registers ready) until
 * one finishes (RUN_CORE_DONE: its header is live for Python to read its result), stops on
 * a fault (RUN_STOPPED, RUN_ERROR with Unicorn's error) or all are done. `core` is set to
 * the core concerned. A core's Unicorn runs its slices without stopping at `until` (a
 * slice is too short to pay for what that costs: unicorn.c); `unbounded` notes whose. */
static i64 run_cores(i64 *st, uc_engine **ucs, i64 quantum, i64 halt, i64 *core, i64 *error,
                     u64 *unbounded) {
    i64 n = st[st[H_CORES]];
    i64 *g = globals_of(st);
    for (;;) {
        /* one pass over the cores' records: the earliest runnable core and the clock of the
         * next (the bound of its slice), and the same for the parked ones */
        earliest runnable = NO_CORE, parked = NO_CORE;
        i64 running = g[G_RUNNING];
        i64 *r = core_record(st, 0), *saved = saved_header(st, 0);
        for (i64 j = 0; j < n; j++, r += CORE_RECORD, saved += HEADER) {
            i64 status = r[T_STATUS];
            if (status == CORE_RUNNABLE || status == CORE_PARKED)
                note_clock(status == CORE_RUNNABLE ? &runnable : &parked, j,
                           (j == running ? st : saved)[H_CYCLES] + r[T_WAIT], g[G_TIES]);
        }
        i64 k = runnable.core, earliest_parked = parked.core;
        bool no_park = false;
        /* the others' earliest clock: the next runnable core's */
        i64 others = runnable.next;
        if (k < 0) {
            if (earliest_parked < 0)
                return RUN_ALL_DONE;
            /* every core left spins on lines none of them writes: let the earliest run a
             * whole slice without parking (a spin with a timeout ends; a deadlock runs into
             * the instruction limit); it runs until it passes the parked cores too: each
             * gets its turn, so a core that only seemed to spin (it holds what the others
             * wait for) goes on */
            k = earliest_parked;
            core_record(st, k)[T_STATUS] = CORE_RUNNABLE;
            g[G_NPARKED] -= 1;
            no_park = true;
            others = parked.next;
        }
        switch_core(st, k);
        r = core_record(st, k);
        if (r[T_WAIT] > 0)
            charge_spin(st, r);
        st[H_SLICE_END] = others == NEVER_CYCLE ? NEVER_CYCLE : others + quantum;
        st[H_SYNC_BOUND] = others;
        st[H_NO_PARK] = no_park;
        st[H_PARK] = 0;
        st[H_STOP_ASKED] = 0;
        st[H_SLICES] += 1;
        if (!(*unbounded >> k & 1)) {
            stop_at_until(ucs[k], false);
            *unbounded |= (u64)1 << k;
        }
        int err = uc_emu_start(ucs[k], (u64)r[T_PC], (u64)halt, 0, 0);
        i64 pc = guest_pc(ucs[k], st);
        r[T_PC] = pc;
        *core = k;
        if (sigint_pending)                /* interrupt.c: Python raises KeyboardInterrupt */
            return RUN_STOPPED;
        if (err == UC_ERR_FETCH_UNMAPPED && pc == halt)
            err = 0;                       /* the call returned (halt_fetch_hook) */
        if (err) {
            /* a data access's fault mid-block: the rest of the block, charged at its start,
             * did not run (a resumed call counts it again): take it back, as a call does */
            emu_uncharge_faulted(st, pc, err);
            *error = err;
            return RUN_ERROR;
        }
        if (stopped_by_model(st))
            return RUN_STOPPED;
        if (pc == halt) {
            r[T_STATUS] = CORE_DONE;
            return RUN_CORE_DONE;
        }
        if (!st[H_STOP_ASKED]) {           /* no one asked: the guest halted (hlt, wfi) */
            st[H_HALTED] = pc + 1;
            return RUN_STOPPED;
        }
        if (st[H_PARK]) {
            st[H_PARK] = 0;
            r[T_STATUS] = CORE_PARKED;
            r[T_SPIN_BLOCK] = pc;
            g[G_NPARKED] += 1;
            st[H_PARKS] += 1;
        }
    }
}

EXPORT void emu_task_end(uc_engine *uc, const i64 *block);

/* run_cores, SIGINT taken meanwhile as emu_call takes it (*sigint: interrupt.c
 * sigint_outcome); when a core's call ended and `blocks` gives it a task's call block
 * (emu.run.parallel.run_tasks), the call's end is taken there too (emu_task_end) */
EXPORT i64 emu_run_parallel(i64 *st, uc_engine **ucs, i64 quantum, i64 halt, i64 *core,
                            i64 *error, i64 catch_sigint, i64 *sigint, const i64 *const *blocks) {
    *sigint = 0;
    if (st[st[H_CORES]] > MAX_CORES)
        return RUN_ERROR;
    u64 unbounded = 0;
    if (catch_sigint)                   /* only Python's main thread takes signals */
        emu_sigint_catch();
    i64 code = run_cores(st, ucs, quantum, halt, core, error, &unbounded);
    if (code == RUN_CORE_DONE && blocks[*core])
        emu_task_end(ucs[*core], blocks[*core]);
    *sigint = sigint_outcome(catch_sigint);
    for (i64 k = 0; k < MAX_CORES; k++)     /* Python's runs of one core stop at `until` */
        if (unbounded >> k & 1)
            stop_at_until(ucs[k], true);
    return code;
}

EXPORT void emu_switch_core(i64 *st, i64 k) { switch_core(st, k); }

/* ------------------------------------------------------------------ a task's call */

/* A call of a task of emu.run.parallel.run_tasks on core k, made ready for the scheduler in
 * one library call (its call block `block`, call.c): core k's header made live (the task's
 * Python may have made another's), its n argument registers written, its record runnable
 * from `begin`, the counts at its start kept (BLOCK_START) and its instruction limit `limit`
 * instructions on. Returns 0, or -1 - j when register j was refused (nothing else done but
 * the switch). */
EXPORT i64 emu_task_start(uc_engine *uc, const i64 *block, i64 k, i64 begin, i64 n, i64 limit) {
    switch_core((i64 *)block[BLOCK_STATE], k);
    i64 refused = emu_write_registers(uc, n, (const i64 *)block[BLOCK_REGISTERS],
                                      (const u64 *)block[BLOCK_VALUES]);
    if (refused)
        return refused;
    i64 *st = (i64 *)block[BLOCK_STATE], *r = core_record(st, k);
    r[T_PC] = begin;
    r[T_STATUS] = CORE_RUNNABLE;
    const i64 *words = (const i64 *)block[BLOCK_GATHER], *counting = (const i64 *)block[BLOCK_COUNTING];
    i64 *start = (i64 *)block[BLOCK_START];
    for (i64 j = 0; j < block[BLOCK_N_GATHER]; j++)
        start[j] = counting[j] ? st[words[j]] : 0;
    st[H_LIMIT] = st[H_INSNS] + limit;
    return 0;
}

/* The end of a task's call (RUN_CORE_DONE: its core's header live): BLOCK_GATHERED gets the
 * words its Run reads less those at its start; out[CALL_RETURN] the return register. */
EXPORT void emu_task_end(uc_engine *uc, const i64 *block) {
    const i64 *st = (const i64 *)block[BLOCK_STATE], *words = (const i64 *)block[BLOCK_GATHER],
              *start = (const i64 *)block[BLOCK_START];
    i64 *gathered = (i64 *)block[BLOCK_GATHERED], *out = (i64 *)block[BLOCK_OUT];
    for (i64 j = 0; j < block[BLOCK_N_GATHER]; j++)
        gathered[j] = st[words[j]] - start[j];
    out[CALL_RETURN] = guest_register(uc, st, block[BLOCK_RETURN_REGISTER]);
}
