"""The PL310 outer cache controller of cortex-a9: its memory-mapped maintenance registers,
one operation at a time for all cores (the cache sync of Linux's mb(), Yun 2011 PK2)."""
import dataclasses

import pytest

from emu.run.machine import Machine
from emu.hw.profile import load as load_profile

CODE = """
    .globl outer_sync
outer_sync:                 @ r0 = the PL310's base: outer_sync() stores 0 to CACHE_SYNC
    mov   r1, #0
    str   r1, [r0, #0x730]
    bx    lr
    .globl ram_store
ram_store:                  @ the same instructions, storing to RAM instead
    mov   r1, #0
    str   r1, [r0]
    bx    lr
    .globl clean_pa
clean_pa:                   @ r0 = base, r1 = physical address: clean the L2 line
    str   r1, [r0, #0x7B0]
    bx    lr
    .globl inv_pa
inv_pa:
    str   r1, [r0, #0x770]
    bx    lr
    .globl write_back_l1
write_back_l1:              @ store r1 at r0, then clean the L1 D line to the L2
    str   r1, [r0]
    mcr   p15, 0, r0, c7, c10, 1
    dsb
    bx    lr
    .globl inv_l1
inv_l1:                     @ invalidate the L1 D line (dcimvac)
    mcr   p15, 0, r0, c7, c6, 1
    bx    lr
    .globl load
load:
    ldr   r1, [r0]
    bx    lr
    .globl read_sync
read_sync:                  @ a load from CACHE_SYNC: nothing in progress
    ldr   r0, [r0, #0x730]
    bx    lr
    .globl clean_work_dsb
clean_work_dsb:             @ store r1 at r0, clean the line, r2 passes of a loop, dsb
    str   r1, [r0]
    mcr   p15, 0, r0, c7, c10, 1
1:  subs  r2, r2, #1
    bne   1b
    dsb
    bx    lr
    .globl clean_only
clean_only:                 @ store r1 at r0, clean the line, no barrier
    str   r1, [r0]
    mcr   p15, 0, r0, c7, c10, 1
    bx    lr
"""
SYNC, LINE_OP, MEMORY = 40, 19, 166          # cortex-a9.toml [outer_cache], [memory]
L2, CLEAN, DSB = 23, 4, 12                    # [[caches]] L2 hit_latency, [costs.mnemonics]


def machine(cores=1):
    m = Machine("cortex-a9", cores=cores)
    m.load(CODE)
    return m, m.outer_cache_base


def warm(m, entry, *args):
    m.call(entry, *args)
    return m.call(entry, *args)


def test_a_cache_sync_costs_the_controller_time_and_touches_no_cache():
    m, base = machine()
    assert base == 0x50043000
    sync = warm(m, "outer_sync", base)
    plain = warm(m, "ram_store", m.alloc(64))
    assert sync.cycles - plain.cycles == SYNC
    assert sync.events["outer_cache_syncs"] == 1 and sync.events["outer_cache_wait"] == 0
    assert sync.caches["L1D"]["accesses"] == 0 and sync.caches["L2"]["accesses"] == 0


def test_clean_by_physical_address_writes_a_dirty_l2_line_to_memory():
    m, base = machine()
    buf = m.alloc(4096)
    m.call("clean_pa", base, buf + 2048)        # (the code in the caches)
    m.call("write_back_l1", buf, 7)             # the line is dirty in the L2 now
    run = m.call("clean_pa", base, buf)
    assert run.caches["L2"]["writebacks"] == 1 and run.events["outer_cache_line_ops"] == 1
    assert run.cycles == 2 + LINE_OP + MEMORY   # two instructions, the op, the write
    again = m.call("clean_pa", base, buf)       # clean now: nothing to write
    assert again.caches["L2"]["writebacks"] == 0 and again.cycles == 2 + LINE_OP


def test_invalidate_by_physical_address_drops_the_l2_line():
    m, base = machine()
    buf = m.alloc(4096)
    m.call("load", buf)                         # the line in L1 D and L2
    m.call("inv_pa", base, buf)
    m.call("inv_l1", buf)                       # and the L1 D copy
    run = m.call("load", buf)
    assert run.caches["L2"]["misses"] == 1 and run.caches["L2"]["invalidations"] == 0


def test_syncs_from_several_cores_wait_for_each_other():
    m, base = machine(cores=4)
    m.run_parallel([("outer_sync", base)] * 4)          # warm the caches
    run = m.run_parallel([("outer_sync", base)] * 4)
    # one at a time, in core order: each waits for the syncs before it
    assert [r.events["outer_cache_wait"] for r in run.runs] == [0, SYNC, 2 * SYNC, 3 * SYNC]
    alone = m.run_parallel([("outer_sync", base)])
    assert run.cycles == alone.cycles + 3 * SYNC


def test_registers_read_as_idle_and_other_registers_cost_nothing():
    m, base = machine()
    assert warm(m, "read_sync", base).return_value == 0
    other = warm(m, "clean_pa", base - 0x7B0 + 0x100, 0)   # the control register
    assert other.events["outer_cache_line_ops"] == 0 and other.cycles == 2


def test_registers_inside_ram_are_refused():
    profile = load_profile("cortex-a9")
    inside = dataclasses.replace(profile, outer_cache={**profile.outer_cache,
                                                        "base": 0x100000})
    with pytest.raises(ValueError, match="above RAM"):
        Machine(inside)


def test_machines_without_an_outer_cache_map_no_registers():
    m = Machine("ppc750")
    assert m.outer_cache_base is None
    assert "outer_cache_syncs" not in m.call(m.load("blr\n").base).events


def test_barrier_loops_from_routines_at_the_controllers_pace():
    # routines/arm/barriers.S, 200 each on 2 and 4 cores, quantum 4 (Under the hood, §3):
    # mb() runs at one sync per 40 cycles for the machine; smp_mb() is the same on any count
    from emu import routine
    cycles = {}
    for kind in ("mb_loop", "smp_mb_loop"):
        for cores in (1, 2, 4):
            m = Machine("cortex-a9", cores=cores)
            m.load(routine("arm/barriers.S"))
            call = (kind, m.outer_cache_base, 200)
            m.run_parallel([call] * cores, quantum=4)
            cycles[kind, cores] = m.run_parallel([call] * cores, quantum=4).cycles
    assert [cycles["mb_loop", n] for n in (1, 2, 4)] == [11002, 16017, 32017]
    assert [cycles["smp_mb_loop", n] for n in (1, 2, 4)] == [2001, 2001, 2001]


# ------------------------------------------------------------ maintenance in time

@pytest.mark.parametrize("passes", [1, 2, 3, 5, 10])
def test_a_cleans_write_back_is_paid_at_the_next_dsb(passes):
    """The clean issues at cycle 1 (after the str) and its line is in the L2 23 cycles
    later; the dsb issues after the loop (str 1 + mcr 4 + 2 a pass) and waits, beyond its
    own 12, for what is left: max(0, 1 + 23 - (5 + 2 * passes + 12))."""
    m, _ = machine()
    buf = m.alloc(4096)
    r = warm(m, "clean_work_dsb", buf, 7, passes)
    wait = max(0, 1 + L2 - (5 + 2 * passes + DSB))
    assert r.events["maintenance_wait"] == wait
    assert r.cycles == 1 + CLEAN + 2 * passes + DSB + 1 + wait
    assert r.caches["L1D"]["writebacks"] == 1


def test_without_a_barrier_the_clean_costs_only_its_issue():
    m, _ = machine()
    buf = m.alloc(4096)
    r = warm(m, "clean_only", buf, 7)
    assert r.cycles == 1 + CLEAN + 1 and r.events["maintenance_wait"] == 0


def test_a_sync_on_one_core_waits_for_a_clean_on_another():
    """Core 0's line reaches the PL310 4 cycles after its clean issues (23 - 19) and holds
    it 19 (line_op): the controller is free at 1 + 4 + 19 = 24; core 1's sync, stored at
    cycle 3 (its block's end), waits 21 for it, then 40."""
    m, base = machine(cores=2)
    buf = m.alloc(4096)
    calls = [("clean_only", buf, 7), ("outer_sync", base)]
    m.run_parallel(calls)
    r = m.run_parallel(calls)
    assert r.runs[1].events["outer_cache_wait"] == 1 + (L2 - LINE_OP) + LINE_OP - 3 == 21
    assert r.runs[1].cycles == 3 + 21 + SYNC


def test_the_profile_can_pay_a_clean_on_the_spot():
    profile = load_profile("cortex-a9")
    spot = dataclasses.replace(profile, outer_cache={**profile.outer_cache,
                                                      "maintenance_in_time": False})
    m = Machine(spot)
    m.load(CODE)
    buf = m.alloc(4096)
    assert warm(m, "clean_only", buf, 7).cycles == 1 + CLEAN + L2 + 1
    bad = dataclasses.replace(profile, outer_cache={**profile.outer_cache,
                                                     "maintenance_in_time": "no"})
    with pytest.raises(ValueError, match="maintenance_in_time"):
        Machine(bad)
