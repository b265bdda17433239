"""One guest call's bookkeeping (issue 35): the native call (emu.run.calling.GuestRuns:
arguments, the run and the return value in one library call), a Run's dictionaries decoded
from its counts when first read, and a call's start (clear_stats) worked out once per
machine. Each must give exactly what the Python it replaced gave."""
from __future__ import annotations

import pickle
import threading

import pytest

from emu.course import exchange
from emu.run.machine import Machine

ADD = "add3:\n    add r3, r3, r4\n    add r3, r3, r5\n    blr\n"


def test_arguments_and_the_return_value_cross_the_native_call_whole():
    m = Machine("power4")
    m.load(ADD)
    run = m.call("add3", (1 << 63) + 1, (1 << 62), 2)     # 64-bit: no sign, no truncation
    assert run.return_value == ((1 << 63) + (1 << 62) + 3) & ((1 << 64) - 1)
    m = Machine("ppc750")
    m.load(ADD)
    assert m.call("add3", -1, 2, 0).return_value == 1         # 32-bit: wraps as the guest does
    assert m.call("add3", 0xFFFF_FFFF, 0, 0).return_value == 0xFFFF_FFFF


def test_arm_arguments_past_the_fourth_go_on_the_stack():
    m = Machine("cortex-a9")
    m.load("fifth:\n    ldr r0, [sp]\n    bx lr\n")
    assert m.call("fifth", 1, 2, 3, 4, 55).return_value == 55


def test_a_call_from_another_thread_runs_without_taking_sigint():
    m = Machine("ppc750")
    m.load(ADD)
    out = {}
    worker = threading.Thread(target=lambda: out.update(run=m.call("add3", 1, 2, 3)))
    worker.start()
    worker.join()
    assert out["run"].return_value == 6


def test_an_exception_of_a_python_hook_comes_out_of_the_call():
    m = Machine("ppc750")
    m.load("sc_call:\n    sc\n    blr\n")

    def refuse(uc, number):
        raise RuntimeError("the hook says no")
    m.interrupt_handler = refuse
    with pytest.raises(RuntimeError, match="the hook says no"):
        m.call("sc_call")


def test_a_runs_dictionaries_are_those_of_its_counters():
    """Hand-counted: li + blr are 2 instructions, one I-cache line fetched cold (both in one
    32-byte line), no data access."""
    m = Machine("ppc750")
    m.load("five:\n    li r3, 5\n    blr\n")
    run = m.call("five", cold=True)
    assert (run.return_value, run.instructions) == (5, 2)
    assert run.caches["L1I"] == {"accesses": 1, "hits": 0, "misses": 1, "writebacks": 0,
                                 "invalidations": 0, "evictions": 0}
    assert run.caches["L1D"]["accesses"] == 0
    assert run.memory == {"reads": 1, "writes": 0}
    again = m.call("five")
    assert again.caches["L1I"]["hits"] == 1 and again.memory["reads"] == 0
    assert run.caches["L1I"]["misses"] == 1         # each Run keeps its own call's counts


def test_a_runs_counters_read_without_its_dictionaries_are_theirs():
    """Run.counter and Run.misses (what a kernel's ledger reads of each call) give what the
    dictionaries give, read before them: a clean of two dirty lines on the Cortex-A9 (two
    L1 D misses filling them, then their cleans; the PL310's sync and waits are outer-cache
    events, counted only on a machine with an outer cache)."""
    m = Machine("cortex-a9")
    m.load("dirty:\n    str r1, [r0]\n    str r1, [r0, #32]\n"
           "    mcr p15, 0, r0, c7, c10, 1\n    add r2, r0, #32\n"
           "    mcr p15, 0, r2, c7, c10, 1\n    dsb\n    bx lr\n")
    buffer = m.alloc(4096, align=64)
    fresh = m.call("dirty", buffer, 7, cold=True)
    counted = {name: fresh.counter(name) for name in
               ("memory_reads", "memory_writes", "maintenance_wait", "transfers",
                "uncached_stores", "no such event")}
    misses = fresh.misses()
    assert fresh.counters(list(counted)) == list(counted.values())
    decoded = m.call("dirty", buffer, 7, cold=True)       # the same call, decoded first
    assert misses == [(level, s["misses"]) for level, s in decoded.caches.items()]
    assert dict(misses)["L1D"] == 2
    assert counted == {"memory_reads": decoded.memory["reads"],
                       "memory_writes": decoded.memory["writes"],
                       **{name: decoded.events.get(name, 0) for name in
                          ("maintenance_wait", "transfers", "uncached_stores",
                           "no such event")}}
    assert counted["transfers"] == 0 and "transfers" not in decoded.events   # one core


def test_a_runs_events_come_in_one_order_and_each_counter_reads_its_event():
    """A two-core Cortex-A9 (an outer cache, interrupts-off time, the cores' events): the
    events in the order Runs have always listed them (their dictionaries and JSON keep it),
    and Run.counter of each gives its value."""
    m = Machine("cortex-a9", cores=2)
    m.load("seven:\n    mov r0, #7\n    bx lr\n")
    run = m.call("seven")
    assert list(run.events)[:16] == [
        "stale_ifetch", "first_stale_pc", "nontemporal_stores", "wc_flushes",
        "wc_partial_flushes", "instructions_outside_programs", "alignment_exceptions",
        "split_accesses", "outer_cache_syncs", "outer_cache_line_ops", "outer_cache_wait",
        "maintenance_wait", "outer_cache_drain_wait", "irq_off_cycles", "transfers",
        "snoop_invalidations"]
    fresh = m.call("seven")
    for name, value in run.events.items():
        if name not in ("first_stale_pc", "table_walks", "section_hits", "page_hits",
                        "page_faults"):
            assert fresh.counter(name) == value, name


def test_a_run_crosses_processes_and_the_exchange_decoded():
    m = Machine("cortex-a9", cores=2)
    m.load("seven:\n    mov r0, #7\n    bx lr\n")
    run = m.call("seven")
    back = pickle.loads(pickle.dumps(run))
    assert back == run and back.events == run.events and "_counts" not in back.__dict__
    assert exchange.loads(exchange.dumps({"r": m.call("seven")}))["r"].return_value == 7


def test_a_calls_start_zeroes_every_cores_counters_and_drains_the_buffers():
    m = Machine("ppc750", cores=2)
    m.load("store:\n    stw r4, 0(r3)\n    blr\n")
    buffer = m.alloc(64)
    first = m.run_parallel([("store", buffer, 1), ("store", buffer + 32, 2)])
    assert all(r.cycles > 0 for r in first.runs)
    m.model.clear_stats()
    for core in range(2):
        header = m.model.header(core)
        assert all(header[w] == 0 for w in m.model.COUNTERS), core
    assert not m.state[m.model.clearing().drain].any()


def test_a_calls_counts_gathered_in_the_library_call_are_the_states_words():
    # Machine.call gathers its Run's words inside the native call (call.c BLOCK_GATHER):
    # they must be what CountLayout.gather reads from the state afterwards, word for word
    from emu.run.result import count_layout
    for profile, source, entry in (("ppc750", "store:\n    stw r4, 0(r3)\n    blr\n", "store"),
                                   ("pentium4", "store:\n    movl 4(%esp), %eax\n"
                                    "    movl $5, (%eax)\n    ret\n", "store")):
        m = Machine(profile)
        m.load(source)
        buffer = m.alloc(64)
        run = m.call(entry, buffer, 1)
        layout = count_layout(m, m.model.running)
        assert list(run._counts.values) == layout.gather(m.state).values
        assert run.instructions == 2 + (profile == "pentium4") and run.cycles > 0


@pytest.mark.parametrize("stop", ["limit", "halt", None])
def test_what_stopped_a_call_comes_back_from_the_library_call(stop):
    # the run's end is read from the flags call.c sets (out[CALL_STOP]): each stop still
    # raises, and the next call starts with them down
    from emu.hw.faults import GuestHalted, InstructionLimitExceeded
    m = Machine("pentium4")
    m.load("spin:\n    jmp spin\nhalt:\n    hlt\nseven:\n    movl $7, %eax\n    ret\n")
    if stop == "limit":
        with pytest.raises(InstructionLimitExceeded, match="the limit is 50"):
            m.call("spin", limit=50)
    elif stop == "halt":
        with pytest.raises(GuestHalted):
            m.call("halt")
    run = m.call("seven")
    assert (run.return_value, run.instructions) == (7, 2)


# ---- session 28: the call's set-up made once, written straight into the call's arrays

def _convention(isa, args, sp):
    """Each ISA's calling convention written out by hand (the ABI documents'): the
    (register, value) pairs a call sets and the stacked words {address: bytes}."""
    from unicorn import arm_const, ppc_const, x86_const
    from emu.hw.layout import HALT
    if isa.startswith("ppc"):               # SysV PowerPC: r3-r10; r1 and the LR
        mask = (1 << (64 if isa == "ppc64" else 32)) - 1
        return ([(ppc_const.UC_PPC_REG_3 + i, a & mask) for i, a in enumerate(args)] +
                [(ppc_const.UC_PPC_REG_1, sp - 256), (ppc_const.UC_PPC_REG_LR, HALT)], {})
    if isa == "arm":                        # AAPCS: r0-r3, the fifth on at the stack
        regs = [arm_const.UC_ARM_REG_R0, arm_const.UC_ARM_REG_R1, arm_const.UC_ARM_REG_R2,
                arm_const.UC_ARM_REG_R3]
        low = sp - 4 * len(args[4:])
        stacked = {low + 4 * i: (a & 0xFFFFFFFF).to_bytes(4, "little")
                   for i, a in enumerate(args[4:])}
        return ([(r, a & 0xFFFFFFFF) for r, a in zip(regs, args)] +
                [(arm_const.UC_ARM_REG_SP, low), (arm_const.UC_ARM_REG_LR, HALT)], stacked)
    low = sp - 4 * (len(args) + 1)          # cdecl: the return address, then the arguments
    frame = b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in (HALT, *args))
    return [(x86_const.UC_X86_REG_ESP, low)], {low: frame}


@pytest.mark.parametrize("isa", ["ppc32", "ppc64", "arm", "x86"])
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 8])
def test_the_argument_filler_and_argument_registers_follow_the_convention(isa, n):
    """GuestRuns.arguments (argument_filler) writes into the call's two arrays, and
    argument_registers lists (built on the filler since session 29), the convention written
    out by hand above: the registers in order, -1 wrapped to the ISA's width, and the same
    stacked words (AAPCS's fifth argument on, cdecl's whole frame)."""
    from emu.run.calling import GuestRuns, argument_registers
    args = tuple([-1, 7, 1 << 40, 3, 0xDEAD_BEEF, 5, 6, 99][:n])
    pairs, stacked = _convention(isa, args, 0x10000)
    listed, filled = {}, {}
    assert argument_registers(isa, None, args, 0x10000,
                              lambda at, data: listed.update({at: bytes(data)})) == pairs
    guest = GuestRuns(isa)
    count = guest.arguments(args, 0x10000, lambda at, data: filled.update({at: bytes(data)}))
    assert list(zip(guest.registers[:count], guest.values[:count])) == pairs
    assert filled == listed == stacked


def test_the_convention_by_hand_at_its_edges():
    """Spot values of _convention itself: ARM's fifth argument at sp - 4 and SP there;
    x86's frame of HALT and two words 12 bytes below sp; PowerPC's -1 as 32 bits."""
    from unicorn import arm_const, ppc_const, x86_const
    from emu.hw.layout import HALT
    pairs, stacked = _convention("arm", (1, 2, 3, 4, 0xDEAD_BEEF), 0x10000)
    assert stacked == {0xFFFC: b"\xef\xbe\xad\xde"}
    assert pairs[4] == (arm_const.UC_ARM_REG_SP, 0xFFFC)
    pairs, stacked = _convention("x86", (1, 2), 0x10000)
    assert pairs == [(x86_const.UC_X86_REG_ESP, 0xFFF4)]
    assert stacked == {0xFFF4: HALT.to_bytes(4, "little") + b"\1\0\0\0\2\0\0\0"}
    assert _convention("ppc32", (-1,), 0x10000)[0][0] == (ppc_const.UC_PPC_REG_3, 0xFFFFFFFF)


def test_a_powerpc_call_of_nine_arguments_is_refused():
    from emu.run.calling import argument_registers
    with pytest.raises(ValueError, match="at most 8"):
        argument_registers("ppc32", None, tuple(range(9)), 0x10000, lambda at, data: None)


def test_an_argument_that_is_no_number_is_refused_and_the_next_call_is_whole():
    m = Machine("ppc750")
    m.load(ADD)
    with pytest.raises(ValueError):
        m.call("add3", 1, "one", 3)
    assert m.call("add3", 1, 2, 3).return_value == 6        # nothing left half-written


def test_a_call_untranslated_turns_the_mmu_off_for_the_call_alone():
    """call_untranslated runs with the state's MMU word 0 (the hook's "translation off") and
    puts back the word it found, also when the call raises, also nested in a with of
    translation_off (which it must not undo)."""
    from emu.hw import cache as c
    m = Machine("ppc750", mmu=True)
    m.load(ADD + "bad:\n    lwz r3, 0(r3)\n    blr\n")
    mode = int(m.state[c.H_MMU])
    assert mode != 0
    seen = []
    m.interrupt_handler = None
    original = m.call

    def spying(entry, *args, **kwargs):
        seen.append(int(m.state[c.H_MMU]))
        return original(entry, *args, **kwargs)
    m.call = spying
    assert m.call_untranslated("add3", 1, 2, 3).return_value == 6
    assert seen == [0] and int(m.state[c.H_MMU]) == mode
    with pytest.raises(Exception):
        m.call_untranslated("bad", 0xFFFF_FFF0)            # unmapped: the call faults
    assert int(m.state[c.H_MMU]) == mode
    with m.mmu.translation_off():
        m.call_untranslated("add3", 1, 2, 3)
        assert int(m.state[c.H_MMU]) == 0                  # the outer with's, still
    assert int(m.state[c.H_MMU]) == mode


def test_a_tasks_call_from_another_cores_live_header_runs_on_its_own_core():
    """A task whose Python makes another core's header live before its call (as a kernel's
    per-CPU code may): the call's start makes its own core's header live again (smp.c
    emu_task_start), so the call counts on its core, and its first call's plan is made with
    its own header live. Hand-counted: mov + bx is 2 instructions, each call; core 1's
    counters see its 3 calls, core 0's none."""
    m = Machine("cortex-a9", cores=2)
    m.load("seven:\n    mov r0, #7\n    bx lr\n")
    runs = []

    def task(t):
        for _ in range(3):
            m.model.switch(0)                   # another core's header live
            runs.append(t.call("seven"))
    m.run_tasks([None, task])
    assert [(r.return_value, r.instructions) for r in runs] == [(7, 2)] * 3
    assert m.model.stats(core=1)["L1I"]["accesses"] > 0
    assert m.model.stats(core=0)["L1I"]["accesses"] == 0
    assert m._call_plans[1][0] is not m._call_plans.get(0, (None,))[0]


def test_each_tasks_call_ends_with_its_own_return_value_and_counts():
    """The scheduler's library call takes each finished call's end (emu_task_end) for the core
    whose call it was: two cores' tasks calling routines of different lengths at once get
    their own return values and instruction counts (three adds and the return: 4; 2)."""
    m = Machine("cortex-a9", cores=2)
    m.load("long:\n    add r0, r0, r1\n    add r0, r0, r2\n    add r0, r0, #1\n    bx lr\n"
           "short:\n    mov r0, #9\n    bx lr\n")
    got = {0: [], 1: []}

    def task(t):
        for i in range(5):
            run = t.call("long", i, 10, 100) if t.core == 0 else t.call("short")
            got[t.core].append((run.return_value, run.instructions))
    m.run_tasks([task, task])
    assert got[0] == [(i + 111, 4) for i in range(5)]
    assert got[1] == [(9, 2)] * 5
