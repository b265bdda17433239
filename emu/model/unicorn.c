/* Unicorn's own functions, reached through pointers Python gives once (emu_set_unicorn), so
 * that the library needs no Unicorn headers or link; and guest registers read with them. */
#include "state.h"

typedef void uc_engine;
typedef int (*reg_read_fn)(uc_engine *uc, int regid, void *value);
typedef int (*reg_write_fn)(uc_engine *uc, int regid, const void *value);
typedef int (*emu_stop_fn)(uc_engine *uc);
static reg_read_fn uc_reg_read;
static reg_write_fn uc_reg_write;
static emu_stop_fn uc_emu_stop;

enum { UC_MEM_WRITE = 17 };
typedef int (*emu_start_fn)(uc_engine *uc, u64 begin, u64 until, u64 timeout, size_t count);
static emu_start_fn uc_emu_start;

EXPORT void emu_set_unicorn(void *reg_read, void *emu_stop, void *emu_start, void *reg_write) {
    uc_reg_read = (reg_read_fn)reg_read;
    uc_reg_write = (reg_write_fn)reg_write;
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

/* The model stops the machine (a slice's end, a fault, a refused instruction): noted, so
 * that a stop no one asked for is known for what it is, the guest halting its CPU */
static void model_stop(uc_engine *uc, i64 *st) {
    st[H_STOP_ASKED] = 1;
    uc_emu_stop(uc);
}

/* x86 rdtsc / rdtscp (Unicorn's instruction hooks; the instruction itself is skipped): the
 * time stamp counter is the model's cycle count of the core, not the host's, so that runs
 * are the same in every process. rdtscp's TSC_AUX (ecx) is the core's number, as Linux sets
 * it. Unicorn's x86 register ids: */
enum { X86_REG_EAX = 19, X86_REG_ECX = 22, X86_REG_EDX = 24 };
static void write_register(uc_engine *uc, int reg, u64 value) { uc_reg_write(uc, reg, &value); }

EXPORT uint32_t rdtsc_hook(uc_engine *uc, void *user_data) {
    const i64 *st = user_data;
    u64 tsc = (u64)st[H_CYCLES];
    write_register(uc, X86_REG_EAX, tsc & 0xFFFFFFFFu);
    write_register(uc, X86_REG_EDX, tsc >> 32);
    return 1;
}

EXPORT uint32_t rdtscp_hook(uc_engine *uc, void *user_data) {
    const i64 *st = user_data;
    write_register(uc, X86_REG_ECX, (u64)st[H_CORE]);
    return rdtsc_hook(uc, user_data);
}

