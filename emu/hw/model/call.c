/* One guest call from Python in one library call (emu.run.machine's Machine.call): its
 * argument registers written, the run with SIGINT taken (interrupt.c), its return value and
 * PC read. Unicorn's Python wrapper does each of these in Python, several times the cost of
 * a short run itself. */
#include <string.h>

enum { CALL_RETURN, CALL_PC, CALL_SIGINT, CALL_STOP, CALL_OUT };
/* out[CALL_STOP]: what the state says of the run's end, for Python to look closer only when
 * something is set (emu.run.diagnose.check_stop reads the words themselves) */
enum { STOP_LIMIT = 1, STOP_PAGE_FAULT = 2, STOP_HALTED = 4, STOP_SLB = 8, STOP_STALE = 16,
       STOP_ASKED = 32 };
/* A machine's call block (emu.run.calling.GuestRuns), one per running core: the addresses
 * and sizes a call passes every time, so that a call's library call takes six arguments;
 * BLOCK_GATHER: the state words a call's Run reads (emu.run.result.CountLayout.words), copied
 * to BLOCK_GATHERED when it ends. A task's call (smp.c emu_task_start), whose counters run on
 * from before it, keeps in BLOCK_START the gathered words at its start that BLOCK_COUNTING
 * marks (1: a count, whose share is its difference; 0: a word that notes a state) */
enum { BLOCK_STATE, BLOCK_ZERO, BLOCK_N_ZERO, BLOCK_MAINTENANCE, BLOCK_CLOCKS,
       BLOCK_N_MAINTENANCE, BLOCK_REGISTERS, BLOCK_VALUES, BLOCK_RETURN_REGISTER, BLOCK_OUT,
       BLOCK_UNTIL, BLOCK_GATHER, BLOCK_N_GATHER, BLOCK_GATHERED, BLOCK_COUNTING, BLOCK_START,
       BLOCK_WORDS };

/* Write regs[k] = values[k] for k < n: 0, or -1 - k when register regs[k] was refused (a
 * task's call in emu.run.parallel sets its core's registers so, before the scheduler runs
 * it). */
EXPORT i64 emu_write_registers(uc_engine *uc, i64 n, const i64 *regs, const u64 *values) {
    for (i64 k = 0; k < n; k++)
        if (uc_reg_write(uc, (int)regs[k], &values[k]))
            return -1 - k;
    return 0;
}

/* Write regs[k] = values[k] for k < n, run from `begin` until `until`; out[CALL_*] get the
 * return register, the PC and whether SIGINT came during the run (below). Returns Unicorn's error
 * code of the run (0: none), or -1 - k when register regs[k] was refused (nothing ran). */
EXPORT i64 emu_call(uc_engine *uc, const i64 *st, i64 begin, i64 until, i64 n,
                    const i64 *regs, const u64 *values, i64 return_reg, i64 catch_sigint,
                    i64 *out) {
    i64 refused = emu_write_registers(uc, n, regs, values);
    if (refused)
        return refused;
    if (catch_sigint)                   /* only Python's main thread takes signals */
        emu_sigint_catch();
    int err = uc_emu_start(uc, (u64)begin, (u64)until, 0, 0);
    out[CALL_SIGINT] = sigint_outcome(catch_sigint);
    out[CALL_RETURN] = guest_register(uc, st, return_reg);
    out[CALL_PC] = guest_pc(uc, st);
    return err;
}

/* A call's start (emu.hw.cache.Layout.clear_stats, its words worked out once per machine):
 * what is still in flight is moved onto the new clock (maintenance[k] less clocks[k], at
 * least 0), then every counter and the memory system's buffers are zeroed. */
EXPORT void emu_clear_stats(i64 *st, const i64 *zero, i64 n_zero, const i64 *maintenance,
                            const i64 *clocks, i64 n_maintenance) {
    for (i64 k = 0; k < n_maintenance; k++)
        st[maintenance[k]] = max64(0, st[maintenance[k]] - st[clocks[k]]);
    for (i64 k = 0; k < n_zero; k++)
        st[zero[k]] = 0;
    if (st[H_PROFILE_PERIOD] > 0) {     /* the profiler's samples start again (emu.run.profiler) */
        i64 n = *profile_top(st);      /* above it nothing was ever counted */
        memset(&st[st[H_SAMPLES]], 0, n * sizeof(i64));
        memset(&st[st[H_INSN_HITS]], 0, n * sizeof(i64));
        memset(&st[st[H_INSN_CYCLES]], 0, n * sizeof(i64));
        if (st[H_SAMPLE_EVENTS2])       /* a second kind of event counted in the session */
            memset(&st[st[H_SAMPLES2]], 0, n * sizeof(i64));
        st[H_NEXT_SAMPLE] = st[H_EVENT_NEXT] = st[H_EVENT_NEXT2] = st[H_PROFILE_PERIOD];
    }
}

/* What the state says of a run's end (out[CALL_STOP]). */
static i64 stop_flags(const i64 *st) {
    return (st[H_STOPPED] ? STOP_LIMIT : 0) | (st[H_PAGE_FAULTS] ? STOP_PAGE_FAULT : 0) |
           (st[H_HALTED] ? STOP_HALTED : 0) | (st[st[H_SCRATCH] + S_SLB_PC] ? STOP_SLB : 0) |
           (st[H_STRICT] && st[H_STALE] ? STOP_STALE : 0) | (st[H_STOP_ASKED] ? STOP_ASKED : 0);
}

EXPORT void emu_uncharge_faulted(i64 *st, i64 pc, i64 err);     /* hooks.c */

/* Machine.call in one library call: with `limit` > 0, the call's start (the counters cleared
 * as emu_clear_stats does, the instruction limit set, the stop flags down); with `limit` 0,
 * a run resumed after a listed access's fixup (emu.run.extable) that goes on counting. Then
 * emu_call's run with the block's n registers, out[CALL_STOP] and the gathered words. */
EXPORT i64 emu_block_call(uc_engine *uc, const i64 *block, i64 begin, i64 n, i64 limit,
                          i64 catch_sigint) {
    i64 *st = (i64 *)block[BLOCK_STATE], *out = (i64 *)block[BLOCK_OUT];
    if (limit > 0) {
        emu_clear_stats(st, (const i64 *)block[BLOCK_ZERO], block[BLOCK_N_ZERO],
                        (const i64 *)block[BLOCK_MAINTENANCE], (const i64 *)block[BLOCK_CLOCKS],
                        block[BLOCK_N_MAINTENANCE]);
        st[H_LIMIT] = limit;
        st[H_STOP_ASKED] = 0;
        st[st[H_SCRATCH] + S_SLB_PC] = 0;
    }
    i64 err = emu_call(uc, st, begin, block[BLOCK_UNTIL], n, (const i64 *)block[BLOCK_REGISTERS],
                       (const u64 *)block[BLOCK_VALUES], block[BLOCK_RETURN_REGISTER],
                       catch_sigint, out);
    if (err)                    /* a faulting access: the rest of its block did not run */
        emu_uncharge_faulted(st, out[CALL_PC], err);
    out[CALL_STOP] = stop_flags(st);
    const i64 *words = (const i64 *)block[BLOCK_GATHER];
    i64 *gathered = (i64 *)block[BLOCK_GATHERED];
    for (i64 k = 0; k < block[BLOCK_N_GATHER]; k++)
        gathered[k] = st[words[k]];
    return err;
}
