/* Unicorn's own functions, reached through pointers Python gives once (emu_set_unicorn), so
 * that the library needs no Unicorn headers or link; and guest registers read with them. */
#include "state.h"

typedef void uc_engine;
typedef int (*reg_read_fn)(uc_engine *uc, int regid, void *value);
typedef int (*reg_write_fn)(uc_engine *uc, int regid, const void *value);
typedef int (*emu_stop_fn)(uc_engine *uc);
typedef int (*ctl_fn)(uc_engine *uc, int control, ...);
static reg_read_fn uc_reg_read;
static reg_write_fn uc_reg_write;
static emu_stop_fn uc_emu_stop;
static ctl_fn uc_ctl;                   /* set by emu_set_unicorn_context (softtlb_insn.c) */

enum { UC_MEM_WRITE = 17 };
typedef int (*emu_start_fn)(uc_engine *uc, u64 begin, u64 until, u64 timeout, size_t count);
static emu_start_fn uc_emu_start;

EXPORT void emu_set_unicorn(void *reg_read, void *emu_stop, void *emu_start, void *reg_write) {
    uc_reg_read = (reg_read_fn)reg_read;
    uc_reg_write = (reg_write_fn)reg_write;
    uc_emu_stop = (emu_stop_fn)emu_stop;
    uc_emu_start = (emu_start_fn)emu_start;
}

/* Whether a run stops at the `until` address given to uc_emu_start (Unicorn's default).
 * Then, after every run, however short, Unicorn invalidates the code it may have translated
 * there: ~670 host instructions for our halt address (a failed TLB fill, the page being
 * unmapped), a quarter of a short slice's cost. Not (Unicorn's "exit points" on, none set),
 * `until` is ignored and nothing is invalidated: a run ends when it is stopped, or at a
 * fault; a return to the unmapped halt address is one (halt_fetch_hook). */
enum { UC_CTL_UC_USE_EXITS = 4, UC_CTL_IO_WRITE = 1, UC_ERR_FETCH_UNMAPPED = 8 };

static void stop_at_until(uc_engine *uc, bool on) {
    uc_ctl(uc, UC_CTL_UC_USE_EXITS | (1 << 26) | (UC_CTL_IO_WRITE << 30), (int)!on);
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

