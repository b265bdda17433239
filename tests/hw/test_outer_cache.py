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


# ------------------------------------------------------------ the PL310's buffers in time

def test_a_sync_waits_for_another_cores_line_fill_from_dram():
    """Core 0's load misses the L1 D and the L2 at cycle 2 (its block's end: ldr, bx): the
    line fill holds the PL310's buffer until its data arrives, 2 + 166 = 168. Core 1's sync,
    stored at cycle 3 (mov, str, bx), has the controller at once (no sync or line before it)
    and is done when the buffers are empty: max(3 + 40, 168) = 168, 125 cycles beyond its
    own 40. Core 0 pays its miss: 2 + 166 less the L1's 4 already in the load's cost."""
    m, base = machine(cores=2)
    warmed, fresh = m.alloc(4096), m.alloc(4096)
    m.run_parallel([("load", warmed), ("outer_sync", base)])      # the code in the caches
    r = m.run_parallel([("load", fresh), ("outer_sync", base)])   # a line never read
    assert r.runs[0].memory["reads"] == 1 and r.runs[0].cycles == 2 + MEMORY - 4
    assert r.runs[1].events["outer_cache_drain_wait"] == 2 + MEMORY - (3 + SYNC) == 125
    assert r.runs[1].events["outer_cache_wait"] == 0
    assert r.runs[1].cycles == 3 + SYNC + 125 == 2 + MEMORY


def test_without_the_buffers_in_time_the_sync_costs_its_own_cycles():
    profile = load_profile("cortex-a9")
    off = dataclasses.replace(profile, outer_cache={**profile.outer_cache,
                                                     "sync_waits_for_buffers": False})
    m = Machine(off, cores=2)
    m.load(CODE)
    base = m.outer_cache_base
    warmed, fresh = m.alloc(4096), m.alloc(4096)
    m.run_parallel([("load", warmed), ("outer_sync", base)])
    r = m.run_parallel([("load", fresh), ("outer_sync", base)])
    assert r.runs[1].cycles == 3 + SYNC and r.runs[1].events["outer_cache_drain_wait"] == 0
    bad = dataclasses.replace(profile, outer_cache={**profile.outer_cache,
                                                     "sync_waits_for_buffers": 1})
    with pytest.raises(ValueError, match="sync_waits_for_buffers"):
        Machine(bad)


def test_a_cores_own_fill_is_done_before_its_next_sync():
    """A blocking core waits for its own fill: by the sync its buffers are empty again
    (the sync's cycles are its own 40 beyond the load's)."""
    m, base = machine()
    warmed, fresh = m.alloc(4096), m.alloc(4096)
    m.call("load", warmed)
    load = m.call("load", fresh)
    m.call("outer_sync", base)
    sync = m.call("outer_sync", base)
    assert load.cycles == 2 + MEMORY - 4 and sync.cycles == 3 + SYNC
    assert sync.events["outer_cache_drain_wait"] == 0


def _traffic(m, core, prev, cur):
    """Set core's two records of DRAM transfers: (issue, done) each."""
    from emu.hw import cache as c
    at = m.model.outer_traffic_at + c.OUTER_TRAFFIC_WORDS * core
    m.state[at + c.OT_PREV_ISSUE], m.state[at + c.OT_PREV_DONE] = prev
    m.state[at + c.OT_ISSUE], m.state[at + c.OT_DONE] = cur


@pytest.mark.parametrize("now, expected", [
    # a sync at `now` on core 0; core 1 sent evictions (done 143 cycles after: memory's 166
    # less the L2's 23) at 100 and at 300, core 2 a line fill at 250 (done 250 + 166 = 416)
    (50, 0),                          # before all of them: its own 40
    (120, 243 - (120 + SYNC)),        # core 1's first eviction only (done 243): 83
    (260, 416 - (260 + SYNC)),        # that and core 2's fill (416): 116
    (320, 443 - (320 + SYNC)),        # core 1's second (443) is the last done: 83
    (500, 0),                         # all done before it
])
def test_a_sync_waits_only_for_transfers_sent_before_it(now, expected):
    """The filter by time (outer_buffers_empty_at): a core's records up to a quantum ahead
    of the syncing core are not yet sent in its time."""
    from emu.hw import cache as c
    m, base = machine(cores=4)
    evict = MEMORY - L2
    _traffic(m, 1, (100, 100 + evict), (300, 300 + evict))
    _traffic(m, 2, (0, 0), (250, 250 + MEMORY))
    st = m.model.header(0)
    st[c.H_CYCLES] = now
    before = int(st[c.H_OUTER_DRAIN_WAIT])
    stall = c.outer_cache_write(m.state, c.OUTER_CACHE_SYNC, 0)
    assert stall == SYNC + expected
    assert int(m.model.header(0)[c.H_OUTER_DRAIN_WAIT]) - before == expected


def test_a_line_operation_syncs_first_then_holds_the_controller():
    """A Clean Line by PA at cycle 10 with core 1's fill in flight until 176 (sent at 10):
    the initial Cache Sync waits 166, then the operation's own 19 (the L2 line is clean)."""
    from emu.hw import cache as c
    m, base = machine(cores=2)
    _traffic(m, 1, (0, 0), (10, 10 + MEMORY))
    st = m.model.header(0)
    st[c.H_CYCLES] = 10
    assert c.outer_cache_write(m.state, 0x7B0, 0x1000) == MEMORY + LINE_OP
