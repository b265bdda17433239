/* One guest call from Python in one library call (emu.run.machine's Machine.call): its
 * argument registers written, the run with SIGINT taken (interrupt.c), its return value and
 * PC read. Unicorn's Python wrapper does each of these in Python, several times the cost of
 * a short run itself. */

enum { CALL_RETURN, CALL_PC, CALL_SIGINT, CALL_OUT };

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
    /* 1: SIGINT came (give it to Python's handler now); 2: it came inside an outer catch,
     * which gives it */
    out[CALL_SIGINT] = catch_sigint && emu_sigint_release() ? 1 : sigint_pending ? 2 : 0;
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
}
