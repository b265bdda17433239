"""A throttled writer's sleep in get_request_wait (routines/x86/blk_wait_2612.S, from
drivers/block/ll_rw_blk.c 1875-1995 of 2.6.12.1), and the interrupt that wakes it.

Why this is faithful. The writer's walk (writeback_inodes on its kernel stack) is one guest
call. When get_request finds the queue full and the writer is not a batcher, 2.6.12's
get_request_wait puts it on rl->wait[WRITE] and calls io_schedule; schedule() saves its
esp and eip (switch_to) and the CPU goes on in the idle task. The guest does exactly that,
and the model's idle task being the harness's calls, schedule_sleep's switch returns from
the walk's call to here: the writer's stack, its wait entry and registers stay in guest
memory as the kernel leaves them. Here the CPU runs the idle loop (cpu_idle, idle_2612.S)
to its hlt and stays halted; a timer tick, or the disk's interrupt if this CPU takes them,
ends the halt and the idle loop runs again. The disk's interrupt that puts a request back
(disk_interrupt -> end_that_request_last -> freed_request) wakes one exclusive waiter as
2.6.12 does (__wake_up_common, try_to_wake_up, resched_task: TIF_NEED_RESCHED on the idle
task of the writer's CPU); when the idle loop sees it, task_resume is the other half of
switch_to, and the walk goes on in get_request_wait, which tries get_request again (now a
batcher, ioc_set_batching). Nothing here decides who waits or who wakes: the guest does.

How time passes. The disk's clock is the paced writes' (its pace is a write per writer per
period, pacing.MAIL_WRITERS): a request's interrupt is due by a write number (Kernel
._inflight). A writer that sleeps does not write, but time goes on: write number n of CPU k
is the time its n-th write is due on its pace (``_write_due``), so a CPU that sleeps takes
an interrupt due by write n (if it takes the disk's interrupts, Kernel.irq_cpu) halted, at
that time; an awake CPU takes it, as before, in its pause after that write. Another CPU's
interrupt that wakes a sleeping writer sends it a reschedule IPI (smp_send_reschedule),
which ends its halt at the waker's clock: the model moves the sleeper's clock back from
the end of the halt it was given (its next tick) to the waker's (``_wake_sleepers``), which
the scheduler allows because the sleeper has run nothing since (its pending call, cpu_idle
at the halt's end, runs only when its clock is the earliest, emu.run.parallel); within the
scheduler's quantum of that end, the halt ends at its end. The requests the walk queued
before it slept are the disk's at once (get_request_wait's generic_unplug_device runs the
queue's request_fn; the model's disk takes every queued request, as after a walk), their
interrupts due from the write the time has reached.
"""
from __future__ import annotations

from types import SimpleNamespace

from ....hw import cache as hwcache
from ....hw.faults import GuestHalted
from ....run.parallel import DEFAULT_QUANTUM
from .structures import BDI, IOC, IOC_SIZE, Q, RQS, TI, TIF_NEED_RESCHED, TK, TSK, _words

BDI_WRITE_CONGESTED = 1             # include/linux/backing-dev.h 17-20: enum bdi_state

#: a sleep longer than this many cycles (ten seconds at 2.2 GHz) is a writer no interrupt
#: wakes: the model stops there rather than halting for ever
SLEEP_LIMIT_CYCLES = 22_000_000_000


class KernelSleep:
    """The Kernel's sleeps of a throttled writer on a full request queue."""

    def _give_io_context(self, task, slot, resumable):
        """``task``'s io_context (io_contexts[slot], static guest data: 2.6.12 allocates one
        at a task's first I/O, a path the model's runs never take), its own reference held;
        ``resumable``: a task whose sleep the harness resumes (the writers)."""
        ioc = self.sym["io_contexts"] + IOC_SIZE * slot
        self._poke(ioc, _words(1, slot + 1))
        self._word(task + TSK["IO_CONTEXT"], ioc)
        self._word(task + TSK["HARNESS"], int(resumable))

    def _asleep(self, writer):
        """Did ``writer``'s call end in schedule_sleep (its thread_struct holds its eip)?"""
        return self._read(writer + TSK["THREAD_EIP"]) != 0

    def _walk_chunk(self, task, k, count, wbc):
        """CPU k's writer walks its chunk (writeback_inodes on its stack), sleeping in
        get_request_wait as often as the queue is full; returns the walk's cycles (the
        CPU's sleeps, idle and halted, not counted)."""
        writer = self.ctx[k]["task"]
        run = task.call("on_task_stack", writer, self.sym["writeback_inodes"], wbc)
        return self._resume_while_asleep(task, k, writer, run, count)[0]

    def _resume_while_asleep(self, task, k, sleeper, run, count=None, writer=True):
        """After ``run``, the call of ``sleeper`` (CPU k's writer, or kjournald with
        ``writer`` False): while it is asleep in get_request_wait, the disk takes the
        queued requests (from write ``count`` on, if given), the CPU sleeps until its
        sleeper is woken and the call resumes. Returns the cycles of its calls and the last
        call's Run."""
        cycles = run.cycles
        while self._asleep(sleeper):
            self.most_queued = max(self.most_queued, self._queued())
            first = self._write_now(k, task.clock)
            self._take_queued(task, k, first if count is None else max(count, first))
            self._sleep_until_woken(task, k, writer=writer)
            run = task.call("task_resume", sleeper)
            cycles += run.cycles
        return cycles, run

    def _kjournald_call(self, task, k, entry, *args):
        """kjournald's call of ``entry`` in CPU k's pause. Below nr_congestion_off as a
        call on the core's stack, as before (its log writes cannot fill the queue from
        there: a call submits a block or two); from there on, on a kjournald task of the
        CPU's own (call_on_task), so that a log write that finds the queue full sleeps in
        get_request_wait as a writer does and is resumed. Returns the Run, or after a
        sleep its cycles and its return value."""
        if self._queued() < self._read(self.queue + Q["CONGESTION_OFF"]):
            return task.call(entry, *args)
        kjournald = self._kjournald_task(k)
        self._kjournald_busy = k
        try:
            run = task.call("call_on_task", kjournald, self.sym[entry], *args)
            cycles, run = self._resume_while_asleep(task, k, kjournald, run, writer=False)
        finally:
            self._kjournald_busy = None
        return SimpleNamespace(cycles=cycles, return_value=run.return_value)

    def _kjournald_elsewhere(self, k):
        """Is kjournald in a call on another CPU than k (_kjournald_call's, asleep on a
        full queue or not)? kjournald is one thread: another CPU's pause then has no turn of
        it to run."""
        return self._kjournald_busy not in (None, k)

    def _kjournald_task(self, k):
        """CPU k's kjournald task for _kjournald_call: a task and kernel stack of its own
        (thread_info on CPU k), an io_context, resumable; made at its first use (no run at
        the nominal estimates makes one: nothing they allocate moves)."""
        if not hasattr(self, "_kjournald_tasks"):
            self._kjournald_tasks = {}
        if k not in self._kjournald_tasks:
            task = self._build_kthread(k, io_slot=12 + k, resumable=True)
            rq = self.tick_areas[k] + TK["RQ"]       # running: on its CPU's active array
            self._word(task + TSK["ARRAY"], self._read(rq + RQS["ACTIVE"]))
            self._kjournald_tasks[k] = task
        return self._kjournald_tasks[k]

    def _take_queued(self, task, k, first):
        """The disk takes every queued request, one after the other at its pace: the j-th's
        interrupt due by write ``first`` + (j + 1) disk_delay (CPU k's, _end_requests)."""
        for j, (_, _, end, _, _) in enumerate(self._requests()):
            run = task.call("disk_dispatch", self.queue, end)
            self.disk_cycles[k] += run.cycles
            if run.return_value:
                self._inflight[k].append((first + (j + 1) * self.disk_delay, run.return_value))

    def _sleep_until_woken(self, task, k, writer=True):
        """CPU k's writer sleeps (schedule_sleep left it): the CPU runs the idle loop to its
        hlt, takes the interrupts due (its ticks; the disk's if it takes them), and halts in
        between, until its writer is woken (see the module's text)."""
        ti, start = self.idle_stacks[k], task.clock
        # schedule() cleared the idle task's need_resched when it last left it
        self._word(ti + TI["FLAGS"], 0)
        (self.sleeps if writer else self.kjournald_sleeps)[k] += 1
        self._sleeping[k] = True
        woken = self._idle_pass(task, k)
        while not woken:
            if self.irq_cpu in (None, k):
                self._end_requests(task, k, self._write_now(k, task.clock))
            if self._resched(k):
                woken = self._idle_pass(task, k)
                break
            self._halt_for_wake(task, k, self._next_event(k, start))
            woken = self._idle_pass(task, k)
            self._halting[k] = None
            if not woken and self.ticking and self.next_tick[k] <= task.clock:
                self._tick(task, k, idle=True)
            if task.clock - start > SLEEP_LIMIT_CYCLES:
                raise RuntimeError(f"CPU {k}'s writer slept {task.clock - start:,} cycles in "
                                   "get_request_wait and no interrupt woke it")
        self._sleeping[k] = False
        self.sleep_cycles[k] += task.clock - start

    def _serve_sleepers(self, task, k):
        """After CPU k's last write, if it takes the disk's interrupts and a writer slept in
        this run: while another CPU still writes, the disk goes on interrupting, so CPU k
        idles halted and takes the interrupts when due (and its ticks), as a CPU whose writer
        sleeps does: a writer asleep then is woken as it would be (a run's end is the
        model's window, not the machine's). In a run where no writer slept it does nothing:
        CPU k's run ends at its last write, as before."""
        slept = any(self.sleeps) or any(self.kjournald_sleeps)
        if self.irq_cpu != k or not slept:
            return
        start = task.clock
        self._word(self.idle_ti[k] + TI["FLAGS"], 0)    # the idle loop runs (as _idle_until)
        self._writer_asleep(k, True)        # its writer waits on the disk meanwhile
        while any(self._sleeping) or any(self._writing):
            self._end_requests(task, k, self._write_now(k, task.clock))
            self._to_hlt(task, k)
            self._halted_until(task, k, self._next_event(k, start))
            self.halts[k] += 1
            if self.ticking and self.next_tick[k] <= task.clock:
                self._tick(task, k, idle=True)
            if task.clock - start > SLEEP_LIMIT_CYCLES:
                raise RuntimeError(f"CPU {k} served sleeping writers {task.clock - start:,} "
                                   "cycles after its last write and none woke")
        self._writer_asleep(k, False)

    def _idle_pass(self, task, k):
        """The idle loop (cpu_idle, on the idle task's thread_info): True if it leaves (its
        need_resched set), False if it halts."""
        try:
            task.call("cpu_idle", self.idle_stacks[k], self.pcpu[k])
        except GuestHalted:
            return False
        return True

    def _resched(self, k):
        """Is CPU k's idle task's TIF_NEED_RESCHED set (its writer woken)?"""
        return bool(self._read(self.idle_stacks[k] + TI["FLAGS"]) & (1 << TIF_NEED_RESCHED))

    def _next_event(self, k, start):
        """When CPU k's halt ends unless a wake-up ends it sooner: its next tick, or the next
        disk interrupt due if it takes them, at the latest the sleep's limit."""
        until = [start + SLEEP_LIMIT_CYCLES + 1]
        if self.ticking:
            until.append(self.next_tick[k])
        if self.irq_cpu in (None, k):
            cpus = [k] if self.irq_cpu is None else range(self.cpus)
            due = [when for c in cpus for when, _ in self._inflight[c]]
            if due:
                until.append(self._write_due(k, min(due)))
        return min(until)

    def _halt_for_wake(self, task, k, until):
        """CPU k halted until ``until``: noted, so that a wake-up from another CPU may end
        the halt sooner (_wake_sleepers)."""
        if until <= task.clock:
            return
        self._halting[k] = (task.clock, until)
        self._halted_until(task, k, until)
        self.halts[k] += 1

    def _uncongest(self):
        """__freed_request's clear_queue_congested (drivers/block/ll_rw_blk.c 1837-1838,
        114-125): the queue's write-congested bit cleared once its count is below
        nr_congestion_off. Its instructions are left out of the model's freed_request
        (block_2612.S: a test on every freed request, which would change the instructions
        the scored runs were measured with, where the queue never congests); its effect is
        the harness's, after the interrupts (congestion_wqh has no waiters: nothing in the
        model calls blk_congestion_wait)."""
        state = self.bdi + BDI["STATE"]
        congested = self._read(state) & (1 << BDI_WRITE_CONGESTED)
        if congested and self._queued() < self._read(self.queue + Q["CONGESTION_OFF"]):
            self._word(state, self._read(state) & ~(1 << BDI_WRITE_CONGESTED))

    def _wake_sleepers(self, clock):
        """After an interrupt at ``clock`` (the running CPU's): each CPU halted for a
        sleeping writer whose need_resched it set ends its halt at that clock (the
        reschedule IPI), not at the end it was given."""
        for j, halt in enumerate(self._halting):
            if halt is None or not self._resched(j):
                continue
            start, until = halt
            at = max(start, clock)
            if at + DEFAULT_QUANTUM >= until:
                continue                # the halt ends at its end, within the quantum
            back = until - at
            header = self.machine.model.header(j)
            header[hwcache.H_CYCLES] -= back
            if header[hwcache.H_PROFILE_PERIOD] > 0 and not header[hwcache.H_SAMPLE_EVENTS]:
                header[hwcache.H_NEXT_SAMPLE] -= back
            self.halted_cycles[j] -= back
            self._halting[j] = None
            self.ipi_wakes[j] += 1

    def _write_due(self, k, n):
        """When CPU k's write number ``n`` is due on its pace (paced_writes)."""
        return self._pace_first[k] + (n - self._pace_written - 1) * self._pace_period

    def _write_now(self, k, clock):
        """The number of CPU k's latest write due at ``clock`` on its pace."""
        return self._pace_written + 1 + (clock - self._pace_first[k]) // self._pace_period

    def io_context_batch(self, k):
        """CPU k's writer's io_context: (nr_batch_requests, last_waited)."""
        ioc = self._read(self.ctx[k]["task"] + TSK["IO_CONTEXT"])
        return (self._read(ioc + IOC["NR_BATCH_REQUESTS"]), self._read(ioc + IOC["LAST_WAITED"]))
