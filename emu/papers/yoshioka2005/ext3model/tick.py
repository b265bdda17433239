"""The local APIC timer's tick (routines/x86/tick_2612.S): its period from 2.6.12's HZ and the
clock, and its delivery in the paced runs, halted or busy.
"""
from __future__ import annotations

import numpy as np

from .structures import (DEF_TIMESLICE, KERNEL_STACK, MAX_PRIO, MM_SIZE, PRIO_ARRAY_SIZE, RCU,
                         RCU_INITIAL_BATCH, RQS, SCHED_LOAD_SCALE, SD_CPU_INIT, SGRP_SIZE,
                         SPIN_FREE, TASK_SIZE, TK, TK_SIZE, TSK, _words)


HZ = 1000                           # include/asm-i386/param.h 5 (2.6.12: fixed; CONFIG_HZ


                                    # came in 2.6.13)
CLOCK_TICK_RATE = 1193182           # include/asm-i386/timex.h 15: the PIT's input clock


def tick_nsec(hz=HZ, clock_tick_rate=CLOCK_TICK_RATE):
    """TICK_NSEC (include/linux/jiffies.h 46-64 of 2.6.12.1): a tick's nanoseconds as the PIT
    can count them, SH_DIV(10^9, ACTHZ, 8), ACTHZ = SH_DIV(CLOCK_TICK_RATE, LATCH, 8) and
    LATCH = (CLOCK_TICK_RATE + HZ / 2) / HZ."""
    def sh_div(nom, den, lsh):
        return ((nom // den) << lsh) + (((nom % den) << lsh) + den // 2) // den
    latch = (clock_tick_rate + hz // 2) // hz
    return sh_div(1_000_000 * 1000, sh_div(clock_tick_rate, latch, 8), 8)


def tick_cycles(clock_mhz, hz=HZ):
    """Cycles of a ``clock_mhz`` CPU between two local APIC timer ticks (1 / HZ s): the local
    APIC timer is calibrated to HZ against the PIT at boot (apic.c calibrate_APIC_clock)."""
    return round(clock_mhz * 1_000_000) // hz


def cyc2ns_scale(clock_mhz):
    """set_cyc2ns_scale(cpu_khz / 1000) (arch/i386/kernel/timers/timer_tsc.c 64-70):
    sched_clock's ns per cycle, in 1/1024ths."""
    return (1000 << 10) // int(clock_mhz)


class KernelTick:
    """The Kernel's timer tick in the paced runs."""

    def _build_tick(self):
        """What the timer tick touches (routines/x86/tick_2612.S): per CPU the second part of
        its per-CPU area (TK: kstat, irq_stat's apic_timer_irqs, prof_counter, rcu_data and
        rcu_bh_data with no RCU work, its sched_domain, its runqueue), its idle task on a
        kernel stack of its own; the sched_groups (a CPU each, SCHED_LOAD_SCALE's power, in a
        ring); sched_clock's scale and TICK_NSEC from the profile's clock; and on each
        writer's task what the scheduler reads (its array, a full slice, an mm).
        The state is the steady one of a machine up for a while: each domain's interval at
        its max_interval and its last_balance caught up (jiffies + CPU_OFFSET(cpu))."""
        m, cpus, sym = self.machine, self.cpus, self.machine.symbols
        clock = m.profile.clock_mhz
        self.tick_period = tick_cycles(clock)
        self._word(sym["cyc2ns_scale"], cyc2ns_scale(clock))
        self._word(sym["tick_nsec"], tick_nsec())
        groups = self._alloc(SGRP_SIZE * cpus, align=4)
        for k in range(cpus):
            self._poke(groups + SGRP_SIZE * k, _words(groups + SGRP_SIZE * ((k + 1) % cpus),
                                                    1 << k, SCHED_LOAD_SCALE))
        self.tick_areas, self.idle_stacks = [], []
        for k in range(cpus):
            area = self._alloc(TK_SIZE, align=128)
            stack = m.alloc(KERNEL_STACK, align=KERNEL_STACK)
            idle = self._alloc(TASK_SIZE, align=64)
            self._poke(idle, _words(0, stack, stack + KERNEL_STACK, 0, 0, MAX_PRIO))
            self._poke(stack, _words(idle, 0, 0, 0, k, 0))
            self._poke(area + TK["PROF_COUNTER"], _words(1, 1, 1))
            for rcu in (area + TK["RCU_DATA"], area + TK["RCU_BH_DATA"]):
                self._poke(rcu, _words(RCU_INITIAL_BATCH, 0, 0, 0, 0, rcu + RCU["NXTLIST"], 0,
                                       rcu + RCU["CURLIST"], 0, rcu + RCU["DONELIST"], k))
            sd, init = area + TK["SD"], SD_CPU_INIT
            self._poke(sd, _words(0, groups + SGRP_SIZE * k, (1 << cpus) - 1,
                                  init["MIN_INTERVAL"], init["MAX_INTERVAL"],
                                  init["BUSY_FACTOR"], init["IMBALANCE_PCT"],
                                  init["CACHE_HOT_TIME"], 0, init["CACHE_NICE_TRIES"],
                                  init["PER_CPU_GAIN"], init["FLAGS"],
                                  HZ * k // 8, init["MAX_INTERVAL"], 0))
            rq = area + TK["RQ"]
            arrays = rq + RQS["ARRAYS"]
            self._poke(rq, _words(SPIN_FREE))
            self._poke(rq + RQS["CURR"], _words(idle, idle, 0, arrays,
                                                arrays + PRIO_ARRAY_SIZE))
            for a in (arrays, arrays + PRIO_ARRAY_SIZE):
                heads = a + 24 + 8 * np.arange(MAX_PRIO)
                m.write(a + 24, np.repeat(heads, 2).astype(np.uint32).tobytes())
            self._poke(rq + RQS["BEST_EXPIRED_PRIO"], _words(MAX_PRIO, 0, sd))
            writer = self.ctx[k]["task"]
            mm = self._alloc(MM_SIZE)
            self._word(writer + TSK["ARRAY"], arrays)
            self._word(writer + TSK["TIME_SLICE"], DEF_TIMESLICE)
            self._word(writer + TSK["MM"], mm)
            self.tick_areas.append(area)
            self.idle_stacks.append(stack)
        self._poke(sym["tick_areas"], _words(*self.tick_areas))
        self.next_tick = [None] * cpus          # paced writes: each CPU's next tick (cycles)
        self._tick_left = [None] * cpus         # and between them, its distance ahead
        self.ticks = [0] * cpus                 # ticks delivered, and their cycles
        self.tick_cycles = [0] * cpus

    def _start_ticks(self, task, k):
        """CPU k's next tick at paced writes' start: as far ahead of its clock as it was at
        the end of the last paced writes (the clock restarts between profiled runs), or at
        the first the first time, the first whole tick period of the clock after now (no
        tick falls in back-to-back runs)."""
        self._writer_asleep(k, False)
        if not self.ticking:
            return
        left = self._tick_left[k]
        if left is None:
            left = (task.clock // self.tick_period + 1) * self.tick_period - task.clock
        self.next_tick[k] = task.clock + left

    def _stop_ticks(self, task, k):
        """The end of paced writes: how far CPU k's next tick is ahead of its clock."""
        if self.ticking:
            self._tick_left[k] = self.next_tick[k] - task.clock

    def _busy_ticks(self, task, k):
        """The ticks that came due while CPU k was busy (a write, or its pause's work),
        delivered at the end of that work on the writer's kernel stack: the model cannot
        interrupt a guest call, so a tick waits for the call's end (it would have come
        within it on the machine)."""
        while self.ticking and self.next_tick[k] <= task.clock:
            self._tick(task, k, idle=False)

    def _tick(self, task, k, idle):
        """One local APIC timer tick on CPU k (routines/x86/tick_2612.S: local_timer_tick),
        on the idle task's kernel stack or the writer's; CPU 0 takes IRQ0's do_timer with
        it. Returns the Run."""
        stack = self.idle_stacks[k] if idle else self.ctx[k]["stack"]
        run = task.call("local_timer_tick", stack + KERNEL_STACK, int(k == 0))
        self.ticks[k] += 1
        self.tick_cycles[k] += run.cycles
        self.next_tick[k] += self.tick_period
        return run
