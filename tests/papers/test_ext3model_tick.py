"""The timer tick of the paced runs (routines/x86/tick_2612.S, ext3model.Kernel._tick):
instruction counts derived by hand from the routines, the ticks a run of N cycles takes,
a tick ending a halt."""
import pytest

from emu.hw import cache as hwcache
from emu.hw.faults import GuestFault
from emu.papers.yoshioka2005 import ext3model as e


def test_the_tick_period_and_the_constants_come_from_the_clock_and_the_pit():
    assert e.tick_cycles(2200) == 2_200_000             # 1 ms of a 2.2 GHz clock, HZ 1000
    # TICK_NSEC: LATCH = (1193182 + 500) // 1000 = 1193; ACTHZ = SH_DIV(1193182, 1193, 8)
    # = (1000 << 8) + ((182 << 8) + 596) // 1193 = 256000 + 39; TICK_NSEC = SH_DIV(10^9,
    # 256039, 8) = (3905 << 8) + ((167705 << 8) + 128019) // 256039 = 999680 + 168
    assert e.tick_nsec() == 999_848
    assert e.cyc2ns_scale(2200) == 465                  # (1000 << 10) // 2200


def _cpu_clock(k, cpu):
    return int(k.machine.model.header(cpu)[hwcache.H_CYCLES])


def test_a_tick_on_an_idle_cpu_takes_the_instructions_counted_by_hand():
    # CPU 1 of two, on its idle task's stack, the built state (jiffies 0, its base's
    # timer_jiffies 0, no RCU work, its domain balanced up to now). Counted from the
    # routines: local_timer_tick 11, apic_timer_interrupt 24 (SAVE_ALL 11, ret_from_intr's
    # GET_THREAD_INFO 2 and RESTORE_ALL 8), smp_apic_timer_interrupt 35 (with irq_exit's 8),
    # update_process_times 47,
    # account_system_time 28 (the idle word), __rcu_pending 15 twice, scheduler_tick 64
    # (sched_clock 10, update_cpu_clock 15 with p->timestamp == the runqueue's 0,
    # wake_priority_sleeper's lock and unlock 13), rebalance_tick 39 (its domain not due:
    # j - last_balance = 0 < 4), run_posix_cpu_timers 9, do_softirq 20, run_timer_softirq
    # 11 and __run_timers 113 (jiffies 0 >= timer_jiffies 0: one jiffy, index 0: four
    # cascades of empty lists, 11 + 11 + 11 + 9 to call them and 9 in each) = 431
    k = e.Kernel("2.6.12", cpus=2, max_records=64)
    top = k.idle_stacks[1] + e.KERNEL_STACK
    assert k.machine.call("local_timer_tick", top, 0).instructions == 431
    # the next: no timers to run (jiffies 0 < timer_jiffies 1: run_timer_softirq 8, no
    # __run_timers: 431 - 113 - 11 + 8), and update_cpu_clock takes the runqueue's newer
    # timestamp (2 more loads): 317
    assert k.machine.call("local_timer_tick", top, 0).instructions == 317
    # CPU 0 takes IRQ0 first: the call to it 1, timer_irq0_interrupt 86 (SAVE_ALL 11,
    # irq_enter with esi saved 4, write_seqlock 9, jiffies_64 2, update_times 7 and
    # update_wall_time's 23, calc_load 2, time_status 1, write_sequnlock 8, irq_exit 7, esi
    # restored 1, ret_from_intr 10, ret 1);
    # then its local tick runs two jiffies (0 and 1) in __run_timers, 10 more: 431 + 97
    top0 = k.idle_stacks[0] + e.KERNEL_STACK
    assert k.machine.call("local_timer_tick", top0, 1).instructions == 528
    sym = k.machine.symbols
    assert k._read(sym["jiffies"]) == 1
    assert k._read(sym["xtime"] + 4) == e.tick_nsec()     # the wall clock one tick on
    idle = k.tick_areas[1] + e.TK["CPUSTAT_IDLE"]
    assert k._read(idle) == 2 and k._read(k.tick_areas[1] + e.TK["APIC_TIMER_IRQS"]) == 2


def test_paced_writes_take_a_tick_at_each_tick_period_of_each_cpus_clock():
    k = e.Kernel("2.6.12", cpus=2, max_records=64)
    start = [_cpu_clock(k, cpu) for cpu in range(2)]
    runs = k.paced_writes(24, 500_000)
    k.check()
    period = k.tick_period
    for cpu in range(2):
        end = _cpu_clock(k, cpu)
        # every whole multiple of the tick period in (start, end] of the CPU's own clock
        assert runs.ticks[cpu] == end // period - start[cpu] // period > 0
    # CPU 0 takes IRQ0's do_timer with each: jiffies counts its ticks, xtime moves with them
    assert k._read(k.machine.symbols["jiffies"]) == runs.ticks[0]
    assert k._read(k.machine.symbols["xtime"] + 4) == runs.ticks[0] * e.tick_nsec()
    assert all(c > 0 for c in runs.tick_cycles)


def test_a_tick_during_a_halt_ends_it_and_runs_on_the_idle_task():
    # a write every 3 ms: most ticks come while the CPU is halted, where the writer sleeps
    # on I/O (nr_iowait 1, the idle task current: cpustat's iowait); a tick that comes
    # during a write waits for its end and is the writer's (system); none is both
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=64)
    runs = k.paced_writes(8, 3_000_000)
    area = k.tick_areas[0]
    iowait = k._read(area + e.TK["CPUSTAT_IOWAIT"])
    system = k._read(area + e.TK["CPUSTAT_SYSTEM"])
    assert iowait + system == runs.ticks[0] == k._read(area + e.TK["APIC_TIMER_IRQS"])
    assert iowait >= runs.ticks[0] - 8 and iowait > 0      # at most one tick a write
    # each task's stime counts its own ticks: the writer's the busy ones
    assert k._read(k.ctx[0]["task"] + e.TSK["STIME"]) == system
    idle_task = k._read(k.idle_stacks[0] + e.TI["TASK"])
    assert k._read(idle_task + e.TSK["STIME"]) == iowait
    # the ticks' cycles are the CPU's, not halted time (GLOBAL_POWER_EVENTS counts them)
    writes = sum(r.cycles for r in runs[0])
    assert runs.busy[0] >= writes + runs.tick_cycles[0]
    # the idle loop halts again after each tick in a halt: still one wake-up a pause
    assert k.halts == [7]


def test_a_kernel_without_ticks_takes_none():
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=64, ticks=False)
    runs = k.paced_writes(8, 3_000_000)
    assert runs.ticks == [0] and k._read(k.machine.symbols["jiffies"]) == 0
    assert k._read(k.tick_areas[0] + e.TK["CPUSTAT_IOWAIT"]) == 0


@pytest.mark.parametrize("nr_running, cpu_load, busiest", [
    # one task on CPU 0 (load 128) and CPU 1 idle: avg_load 64, imbalance min(64 x 128,
    # 64 x 128) / 128 = 64 < 128; max - this = 128 < 256; pwr_now = 128 x 128 / 128 = 128;
    # pwr_move: max_load 128 is not above tmp = 128 (nothing), tmp = 16384 / 128 = 128,
    # 128 x min(128, 0 + 128) / 128 = 128: no gain, balanced (idle but max_load not > 128)
    (1, 128, False),
    # two tasks, cpu_load 200: source_load min(200, 256) = 200; avg 100, imbalance 100 <
    # 128, 200 < 256; pwr_now 128; pwr_move 128 x min(128, 200 - 128) + 128 x min(128,
    # 0 + 128) = 9216 + 16384, / 128 = 200 > 128: CPU 0's group is the busiest
    (2, 200, True),
    # three tasks, cpu_load 384: avg 192, imbalance min(192, 192) x 128 / 128 = 192 >= 128
    (3, 384, True),
])
def test_find_busiest_group_tests_imbalance_as_the_kernel_does(nr_running, cpu_load, busiest):
    k = e.Kernel("2.6.12", cpus=2, max_records=64)
    rq0 = k.tick_areas[0] + e.TK["RQ"]
    k._word(rq0 + e.RQS["NR_RUNNING"], nr_running)
    k._word(rq0 + e.RQS["CPU_LOAD"], cpu_load)
    sd1 = k.tick_areas[1] + e.TK["SD"]
    group0 = k._read(k._read(sd1 + e.SD["GROUPS"]) + e.SGRP["NEXT"])
    run = k.machine.call("find_busiest_group", sd1, 1, 0)          # SCHED_IDLE
    assert run.return_value == (group0 if busiest else 0)


def test_a_cpu_never_idle_takes_its_ticks_on_the_writer():
    # a writer always due never halts: every tick comes while the CPU is busy, waits for
    # the end of the write or pause it fell in, and is the writer's (cpustat's system, its
    # stime); jiffies still counts CPU 0's ticks
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=256)
    start = _cpu_clock(k, 0)
    runs = k.paced_writes(200, 1_000)
    assert k.halts == [0]
    area = k.tick_areas[0]
    ticks = _cpu_clock(k, 0) // k.tick_period - start // k.tick_period
    assert runs.ticks[0] == ticks > 0
    assert k._read(area + e.TK["CPUSTAT_SYSTEM"]) == ticks
    assert k._read(area + e.TK["CPUSTAT_IOWAIT"]) == k._read(area + e.TK["CPUSTAT_IDLE"]) == 0
    assert k._read(k.ctx[0]["task"] + e.TSK["STIME"]) == ticks
    assert k._read(k.machine.symbols["jiffies"]) == ticks


def _commit_timer(k):
    return k._read(k.journal + e.J["COMMIT_TIMER"])


def test_the_commit_timer_stays_pending_through_a_paced_run_at_five_seconds():
    # the lock-down in the pause after write 1; write 2 (due at 1,000,000 cycles, before CPU
    # 0's first tick at 2,200,000) makes the next transaction at jiffies 0: get_transaction's
    # t_expires = 0 + j_commit_interval (5000 at HZ 1000), on the commit timer. jiffies moves
    # only in CPU 0's do_timer, one a tick
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=64)
    assert k.commit_timer_left() == 0x7FFFFFFF            # the built transaction's: none due
    k.commit_pending = True
    runs = k.paced_writes(12, 1_000_000)
    jiffies = k._read(k.sym["jiffies"])
    assert jiffies == runs.ticks[0] > 0
    assert k._read(k.running() + e.T["EXPIRES"]) == 5000
    assert k.commit_timer_left() == 5000 - jiffies
    timer = _commit_timer(k)
    assert k._read(timer + e.TIMER["BASE"]) != 0          # still on CPU 0's list
    k.check()


def test_a_commit_timer_due_in_a_run_is_run_by_the_ticks_run_timers():
    # a commit interval of 2 jiffies: the transaction write 2 makes at jiffies 0 expires at
    # 2. CPU 0's first tick (jiffies 0 -> 1) runs jiffies 0 and 1 (timer_jiffies 0 -> 2),
    # its second (jiffies 2) runs jiffy 2, whose tv1 list holds the timer: __run_timers
    # takes it off (its entry poisoned, its base NULL, the base's running_timer set) and
    # calls commit_timeout, the stand-in for wake_up_process(kjournald), which faults
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=64)
    k._word(k.journal + e.J["COMMIT_INTERVAL"], 2)
    k.commit_pending = True
    with pytest.raises(GuestFault, match="commit_timeout"):
        k.paced_writes(12, 1_000_000)
    timer = _commit_timer(k)
    base = k._read(k.sym["tvec_bases"])
    assert k._read(k.sym["jiffies"]) == 2
    assert k._read(base + e.TVB["TIMER_JIFFIES"]) == 3
    assert k._read(timer + e.TIMER["EXPIRES"]) == 2
    assert (k._read(timer), k._read(timer + 4)) == (0x00100100, 0x00200200)
    assert k._read(timer + e.TIMER["BASE"]) == 0
    assert k._read(base + e.TVB["RUNNING_TIMER"]) == timer
    vec = base + e.TVB["TV1"] + 8 * 2                     # tv1's list of jiffy 2: emptied
    assert (k._read(vec), k._read(vec + 4)) == (vec, vec)
