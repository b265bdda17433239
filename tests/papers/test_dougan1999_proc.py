"""lat_proc on Dougan 1999's 2.2.0 kernels with 2.2.0's scheduler as guest code
(emu.kernel.sched22, routines/ppc32/proc_22.S): the instructions of one fork+exit+wait's
scheduler paths by hand against the ledger's guest rows, the fixed costs that stopped
counting them, and the kernels without it unchanged."""
import pytest

from emu.hw import estimates
from emu.kernel import costs, workloads
from emu.kernel.entry import DEF_PRIORITY, TASK_FIELDS
from emu.kernel.errors import KernelError
from emu.kernel.sched22 import GuestScheduler
from emu.papers.dougan1999 import mmu

# by hand, with EE on as in a system call (routines/ppc32/sched_22.S's, entry_22.S's and
# proc_22.S's headers and listings)
WAKE_UP_PROCESS = 55          # a task on no run queue, counters within 3, EE on
WAKE_UP = 87                  # one sleeper, EE on
SCHEDULE = 161                # prev asleep, one other task queued (157 + kdata's 4 lis)
SCHEDULE_END = 22             # after _switch22 returns: mr, bl, enable22 11, the epilogue 9
SIGNAL_TEST = 3               # a sleeper's signal test, which a zombie skips
SWITCH = 97                   # _switch22: the frame 49, ksp, SPRG3, 2 SYNCs, 8 segments 32
INT_RETURN_NO_EE = 62         # int_return to a kernel frame without EE (_switch22's)
INT_RETURN_EE = 72            # ... with EE: the lost-interrupt and bottom-half tests, 10
WAIT4 = 41 + 33               # wait4_sleep22 before and after its schedule22
FORK_WAKE, EXIT_WAKE, EXIT_SCHEDULE, FORK_RETURN = 3, 4, 3, 2


def guest_kernel(machine):
    with estimates.setup_only():
        k = mmu.kernel(machine, **mmu.FLUSHES_22[machine])
        GuestScheduler(k)
    return k


def lat_proc_rows(machine, kind="fork", guest=True, **options):
    if guest:
        k = guest_kernel(machine)
    else:
        with estimates.setup_only():
            k = mmu.kernel(machine, **mmu.FLUSHES_22[machine])
    return workloads.lat_proc(kind, kernel=k, **options)


@pytest.mark.parametrize("machine, kind", [(m, "fork") for m in mmu.MACHINES] +
                         [("603 page table", "exec")])
def test_one_fork_exit_wait_runs_the_scheduler_by_hand(machine, kind):
    """One iteration: the parent's fork wakes the child (fork_wake22); its sys_wait4
    sleeps (wait4_sleep22: add_wait_queue, TASK_INTERRUPTIBLE, schedule22), switching to
    the child (_switch22, int_return through copy_thread's frame, with EE, to
    fork_return22); the child's exit wakes the parent (exit_wake22's wake_up22), becomes a
    zombie and schedules (its schedule22 never ends: 3 fewer tests, no end), switching back
    (_switch22, int_return through the parent's switch frame, without EE), and the parent's
    schedule22 ends and its sys_wait4 removes it from the queue."""
    r = lat_proc_rows(machine, kind)
    rows = r.ledger.rows
    assert rows["wake_up_process22"][1:4:2] == [1, FORK_WAKE + WAKE_UP_PROCESS]
    assert rows["wake_up22"][1:4:2] == [1, EXIT_WAKE + WAKE_UP]
    parent = WAIT4 + SCHEDULE + SWITCH + INT_RETURN_EE + FORK_RETURN
    child = EXIT_SCHEDULE + SCHEDULE - SCHEDULE_END - SIGNAL_TEST + SWITCH + INT_RETURN_NO_EE
    assert rows["schedule22"][1] == 4             # two runs a switch: stopped at it
    assert rows["schedule22"][3] == parent + child == 704
    assert r.counts["context_switches"] == 2


@pytest.mark.parametrize("machine", mmu.MACHINES)
def test_the_fixed_costs_stop_counting_what_runs_as_guest_code(machine):
    """With the guest scheduler no context_switch is charged, and fork, exit and wait are
    charged less their wake-ups and wait queue (fork_task, exit_task, wait_reap); every
    other fixed row is what the fixed-cost kernel charges."""
    fixed = {}
    for guest in (False, True):
        rows = lat_proc_rows(machine, guest=guest).ledger.rows
        fixed[guest] = {n: row[2] for n, row in rows.items() if row[0] == "fixed"}
    before, after = fixed[False], fixed[True]
    assert before["context_switch"] == 2 * costs.cycles("context_switch") == 450
    assert "context_switch" not in after
    for whole, part in (("fork", "fork_task"), ("exit", "exit_task"), ("wait", "wait_reap")):
        assert before[whole] == costs.cycles(whole) and after[part] == costs.cycles(part)
        assert whole not in after and part not in before
    assert {n: c for n, c in before.items() if n not in (
        "context_switch", "fork", "exit", "wait")} == \
        {n: c for n, c in after.items() if n not in ("fork_task", "exit_task", "wait_reap")}
    # what became guest code: the switches, 50 + 50 instructions of wake-ups, 40 of the
    # wait queue, at CPI 1.5
    assert sum(before.values()) - sum(after.values()) == 450 + 75 + 75 + 60


def test_the_split_estimates_leave_the_fixed_kernels_alone():
    """fork, exit and wait keep their counts (the other chapters charge them); the guest
    kernels' parts are them less 50, 50 and 40 instructions."""
    table = costs.TABLE
    assert [table[n][0] for n in ("fork", "exit", "wait", "context_switch")] == \
        [2500, 1500, 800, 150]
    assert [table[n][0] for n in ("fork_task", "exit_task", "wait_reap")] == \
        [2450, 1450, 760]


def test_a_released_task_union_is_the_next_forks():
    """alloc_task_struct after a release: the same pages (the warm-up's child's union is
    the measured child's)."""
    k = guest_kernel("604")
    scheduler = k.scheduler
    seen = []
    forked = scheduler.forked

    def record(parent, child):
        forked(parent, child)
        seen.append(scheduler.entry.tasks[child.pid])
    scheduler.forked = record
    workloads.lat_proc("fork", kernel=k, iterations=2)
    assert len(seen) == 3 and len(set(seen)) == 1


def test_the_fifth_fork_recalculates_the_counters():
    """do_fork halves the parent's counter (20, 10, 5, 2, 1, 0): the fifth child starts with
    none, and the parent's schedule22 finds every runnable counter spent, so it walks the
    task list (the parent and the child; init_task is its head, a reaped child is off it):
    per task 9 instructions (the test, 2 loads, the shift, the add, the store, the next
    link, the branch back), the first link and the last test 3: 21. That sleep's schedule22
    also tests its prev's policy (the parent's counter is spent: an exhausted SCHED_RR task
    goes to the back), 3 more, and goodness22 of the child takes its no-ticks exit, 10
    instructions for 16. Both counters are then (0 >> 1) + DEF_PRIORITY."""
    k = guest_kernel("604")
    r = workloads.lat_proc("fork", kernel=k, warmup=1, iterations=4)
    recalculation, round_robin_test, no_ticks = 9 * 2 + 3, 3, 10 - 16
    assert r.ledger.rows["schedule22"][3] == \
        4 * 704 + recalculation + round_robin_test + no_ticks
    e = k.scheduler.entry
    parent = next(p for p in k.processes if p.parent is None)
    counter = e.machine.read_word(e.task(parent) + TASK_FIELDS["COUNTER"])
    assert counter == DEF_PRIORITY == 20


def test_a_switch_schedule_would_not_make_is_refused():
    """A second spawned process: the current one is no parent of it."""
    k = guest_kernel("603 page table")
    workloads.lat_proc("fork", kernel=k)
    with pytest.raises(KernelError, match="from a parent to its child"):
        workloads.lat_proc("fork", kernel=k)


def test_vfork_is_refused_under_the_guest_scheduler():
    """Its parent's sleep (the vfork semaphore, up at the child's exec or exit) is not
    written as guest code: refused rather than charged as a fixed cost."""
    k = guest_kernel("604")
    parent = k.spawn(workloads.LAT_PROC)
    with pytest.raises(KernelError, match="vfork"):
        k.vfork(parent)
