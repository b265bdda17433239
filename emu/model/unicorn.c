/* Unicorn's own functions, reached through pointers Python gives once (emu_set_unicorn), so
 * that the library needs no Unicorn headers or link; and guest registers read with them. */
#include "state.h"

typedef void uc_engine;
typedef int (*reg_read_fn)(uc_engine *uc, int regid, void *value);
typedef int (*emu_stop_fn)(uc_engine *uc);
static reg_read_fn uc_reg_read;
static emu_stop_fn uc_emu_stop;

enum { UC_MEM_WRITE = 17 };
typedef int (*emu_start_fn)(uc_engine *uc, u64 begin, u64 until, u64 timeout, size_t count);
static emu_start_fn uc_emu_start;

EXPORT void emu_set_unicorn(void *reg_read, void *emu_stop, void *emu_start) {
    uc_reg_read = (reg_read_fn)reg_read;
    uc_emu_stop = (emu_stop_fn)emu_stop;
    uc_emu_start = (emu_start_fn)emu_start;
}

/* A guest register's value, read from native code */
static i64 guest_register(uc_engine *uc, const i64 *st, i64 reg) {
    u64 value = 0;
    uc_reg_read(uc, (int)reg, &value);
    return (i64)value & st[H_REG_WIDTH_MASK];
}

/* The guest PC (Unicorn keeps it exact inside memory hooks); asked only when needed */
static i64 guest_pc(uc_engine *uc, const i64 *st) { return guest_register(uc, st, st[H_PC_REG]); }

