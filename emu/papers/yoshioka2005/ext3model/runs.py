"""Running the writers: write() calls back to back, or paced (a write per period, the pause
filled with writeback, the commit, the idle loop to its hlt).
"""
from __future__ import annotations

from ....hw import cache as hwcache
from ....hw import estimates
from ....hw.faults import GuestHalted
from .pacing import KJOURNALD_CPU, STAGGER, PacedRuns
from .structures import RQS, TI, TIF_NEED_RESCHED, TK
from .tick import tick_cycles


class KernelRuns:
    """The Kernel's runs: write()s back to back or paced."""

    def calls(self, records):
        """One call per CPU: iozone_write_test(ctx, records)."""
        return [("iozone_write_test", c["ctx"], records) for c in self.ctx]

    def _check_core_stacks(self):
        """Each core's own stack still says which CPU it is (Kernel.core_ti): a call made
        on it that went deeper than the thread_info below it would have written over it."""
        wrong = [k for k, ti in enumerate(self.core_ti) if self._read(ti + TI["CPU"]) != k]
        if wrong:
            raise RuntimeError(f"a call on core {wrong[0]}'s own stack went deeper than its "
                               "thread_info and wrote over it: its per-CPU data were wrong")

    def write_records(self, records, limit=None):
        """Each CPU's child writes ``records`` records of 4 KB; returns the Run (one CPU) or
        the ParallelRun."""
        self._check_room(records)
        limit = limit or 20_000 * records + 1_000_000
        if self.cpus == 1:
            run = self.machine.call(*self.calls(records)[0], limit=limit)
            done = [run.return_value]
        else:
            run = self.machine.run_parallel(self.calls(records), limit=limit)
            done = [r.return_value for r in run.runs]
        if done != [records] * self.cpus:
            raise RuntimeError(f"the children wrote {done} records, not {records} each")
        self.written += records
        return run

    written = 0

    def paced_writes(self, records, period, phase=None):
        """Each CPU's child writes ``records`` records of 4 KB, one every ``period`` cycles
        of its clock, as a disk that completes one write per period per writer lets it
        (the writer sleeps until then); in between, its CPU runs the idle task
        (routines/x86/idle_2612.S) to its hlt and stays halted until the next write is
        due. CPU k's first write is due at ``phase[k]`` (default: k / cpus x STAGGER of a
        period, the disk serving the writers in turn). Runs on several cores
        (emu.run.parallel.run_tasks: the machine needs two at least, ``cores``); returns
        PacedRuns: [each CPU's write Runs], and each CPU's busy cycles.
        ``halted_cycles[k]``: the cycles CPU k was halted, which a cycle counter that counts
        while the processor is not stopped (GLOBAL_POWER_EVENTS) does not count."""
        if period <= 0:
            raise ValueError(f"the period must be a positive number of cycles, not {period}")
        if len(self.machine.cpus) < 2:
            raise ValueError("paced writes run as tasks: build the Kernel with cores=2 at least")
        self._check_room(records)
        if self.writer_chunks and not hasattr(self, "vsb"):
            self._build_kupdate_state(metadata=False)
        if phase is None:
            stagger = estimates.value(STAGGER[0], STAGGER[1])
            phase = [round(k * period * stagger / self.cpus) for k in range(self.cpus)]

        def child(k):
            def run(task):
                base, runs, halted = task.clock, [], self.halted_cycles[k]
                self._pace_first[k] = base + phase[k]      # the disk's clock (sleep.py)
                self._writing[k] = True
                ticks0, tick_cycles0 = self.ticks[k], self.tick_cycles[k]
                self._start_ticks(task, k)
                for i in range(records):
                    if i:
                        self._busy_ticks(task, k)
                        self._end_requests(task, k, self.written + i)
                        if not self.writer_chunks:
                            self._writeback(task, k, self.written + i)
                        if not self._kjournald_elsewhere(k):    # one thread (sleep.py)
                            self._kjournald_pause(task, k, self.written + i)
                        self._busy_ticks(task, k)
                    self._idle_until(task, k, base + phase[k] + i * period)
                    runs.append(task.call("iozone_write_test", self.ctx[k]["ctx"], 1))
                    if runs[-1].return_value != 1:
                        raise RuntimeError(f"CPU {k}'s child failed a write")
                    if self.writer_chunks and self.chunk_due(k, self.written + i + 1):
                        self._writer_chunk(task, k, self.written + i + 1)
                self._writing[k] = False
                self._serve_sleepers(task, k)
                self._busy_ticks(task, k)
                busy[k] = task.clock - base - (self.halted_cycles[k] - halted)
                ticks[k] = self.ticks[k] - ticks0
                tick_cycles[k] = self.tick_cycles[k] - tick_cycles0
                self._stop_ticks(task, k)
                return runs
            return run

        busy, ticks, tick_cycles = [0] * self.cpus, [0] * self.cpus, [0] * self.cpus
        self._pace_first, self._pace_written, self._pace_period = [0] * self.cpus, \
            self.written, period

        tasks = [child(k) for k in range(self.cpus)]
        tasks += [None] * (len(self.machine.cpus) - self.cpus)
        runs = PacedRuns(self.machine.run_tasks(tasks)[:self.cpus])
        self._check_core_stacks()
        runs.busy, runs.ticks, runs.tick_cycles = busy, ticks, tick_cycles
        self.written += records
        return runs

    def _kjournald_pause(self, task, k, written):
        """kjournald's work in CPU k's pause after its ``written``-th write: the commit's
        lock-down (kjournald's CPU), a turn of its data loop, a metadata buffer logged."""
        if self.commit_pending and k == KJOURNALD_CPU:
            self._lock_down_in_pause(task, k, written)
        if self.commit_lag:
            self._commit(task, k)
        if self._meta_due(k, written):
            self._commit_metadata(task, k)

    def _idle_until(self, task, k, due):
        """CPU k idles until its clock reads ``due``: the idle loop runs to its hlt, the CPU
        stays halted (its clock moves on, its caches untouched); each timer tick due before
        then ends the halt, runs (deliver_ticks) and returns to the idle loop, which halts
        again; the interrupt that ends the wait wakes the writer (TIF_NEED_RESCHED), and the
        idle loop sees it and leaves. A CPU whose writer is already due does not idle.
        The writer sleeps meanwhile: its runqueue has no task running and one waiting for
        I/O (the disk sets the pace), as schedule() and try_to_wake_up() would leave it."""
        if task.clock >= due:
            return
        ti = self.idle_ti[k]
        self._word(ti + TI["FLAGS"], 0)
        self._writer_asleep(k, True)
        self._to_hlt(task, k)
        while self.ticking and self.next_tick[k] < due:
            self._halted_until(task, k, self.next_tick[k])
            self._tick(task, k, idle=True)
            self._to_hlt(task, k)
        self._halted_until(task, k, due)
        self.halts[k] += 1
        self._writer_asleep(k, False)
        self._word(ti + TI["FLAGS"], 1 << TIF_NEED_RESCHED)
        task.call("cpu_idle", ti, self.pcpu[k])

    def _to_hlt(self, task, k):
        """The idle loop, run to its hlt."""
        try:
            task.call("cpu_idle", self.idle_ti[k], self.pcpu[k])
            raise RuntimeError("the idle loop returned without halting")
        except GuestHalted:
            pass

    def _halted_until(self, task, k, until):
        """CPU k halted until its clock reads ``until``: the clock moves on, nothing else."""
        halted = max(0, until - task.clock)
        header = self.machine.model.header(k)
        header[hwcache.H_CYCLES] += halted
        if header[hwcache.H_PROFILE_PERIOD] > 0 and not header[hwcache.H_SAMPLE_EVENTS]:
            header[hwcache.H_NEXT_SAMPLE] += halted       # no cycle samples while halted
        self.halted_cycles[k] += halted

    def _writer_asleep(self, k, asleep):
        """CPU k's runqueue as the writer's sleep leaves it: nr_running 0 and nr_iowait 1
        while it sleeps, 1 and 0 while it runs (set from outside: the schedule() and
        try_to_wake_up() that write them are not modelled)."""
        rq = self.tick_areas[k] + TK["RQ"]
        self._word(rq + RQS["NR_RUNNING"], 0 if asleep else 1)
        self._word(rq + RQS["NR_IOWAIT"], 1 if asleep else 0)

    def _check_room(self, records):
        if self.written + records > self.max_records:
            raise ValueError(f"{self.written} + {records} records is more than this "
                             f"Kernel was built for (max_records={self.max_records})")
