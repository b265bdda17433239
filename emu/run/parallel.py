"""Several cores at once: ``Machine(cpu, cores=N).run_parallel(calls)``, in simulated time.

Each core is a Unicorn of its own; all map the same RAM, so a store one makes is at once in
the bytes every other reads. Time is the model's: each core has a cycle clock. What makes a
run *causal* is that no core sees another's store at a simulated time before that store was
made, and that cores synchronise (locks, atomics, shared lines) in the order of their clocks.
The scheduler is C (emu/hw/model/smp.c); it runs the cores in time slices, and decides, in the
block hook before each basic block runs, whether the core may run that block now:

* **Lowest clock first, bounded lead.** The runnable core whose clock is furthest behind runs
  next (at a tie, the lower-numbered core, or an order hashed from the clock and the core:
  ``Machine.ties``, TIES). In ordinary code it may run ahead of the earliest other core by up to ``quantum``
  cycles (lax synchronisation, as in Graphite and Sniper: Miller et al., HPCA 2010; Carlson
  et al., SC 2011); its slice then ends before its next block.
* **Synchronising blocks run in time order.** A block that holds an atomic instruction
  (lwarx/stwcx., ldrex/strex, x86 ``lock`` and ``xchg``), a serialising one (a profile's
  [smp] list) or in which the cache model saw this core share a line with another (a dirty
  line transferred, a copy invalidated, the outer cache controller used: learned as the run
  goes) runs only while its core is the earliest. So lock hand-overs, counters and shared
  resources are used in the order of simulated time, whatever the quantum: the quantum only
  bounds how far unsynchronised code runs ahead, and the first encounter of a shared line
  (before the block is known to synchronise) is the only place where it shows.
* **Write stamps.** Every store in a parallel run stamps its line (cycle, core, a sequence
  number). An access to a line that another core stored to at a later cycle than this core's
  clock waits until that cycle (``order_stalls``): a core never observes a store before it
  happened. The transfer itself costs what the cache model charges (``emu.hw.cache.snoop``).
* **Spinning cores park.** A core that re-enters the same synchronising block having stored
  nothing, having read the same addresses as in its pass before, and only lines nobody
  wrote since, is spinning (a loop that walks a table reads new addresses each pass, and
  one that holds a serialising instruction, a tlbie over a batch, is never taken for a
  spin): it is parked until a
  store to one of the lines it read wakes it, at the writer's clock (on hardware, the spin
  would see the store when the invalidation reached it). The cycles it spun are charged to
  the spin loop (``spin_wait_cycles``; a profile samples them there); the iterations it would
  have executed are not counted as instructions. If every core left is parked, the earliest
  runs a whole slice without parking: a spin with a timeout ends, a deadlock runs into the
  instruction limit.

The quantum is lax synchronisation's one error: within it, the order in which cores' accesses
reach a shared level (the L2) is the order the slices run in. Cores that each copy their own
buffer through a shared L2 give the same cycles for any quantum up to about the time a core
takes to use a line (100 cycles and less on ppc750 and cortex-a9; emu.bench, section smp)
and fewer above it, as longer bursts interleave less. The default, 100 cycles, is inside that
range; locks and shared lines do not depend on it at all (synchronising blocks).

Slices end only at block boundaries, decided before the block runs (Unicorn then stops with
the PC at the block's start), so nothing is charged that did not run. A core whose data access
faults mid-block stops there, and the rest of that block (charged at its start) is taken
back (smp.c, as a single core's call does); ``run_parallel`` then resumes the core where
``Machine.call`` would (``Machine.resume_after_fault``: a storage interrupt's handler, an
exception table's fixup) or raises the fault; a task of ``run_tasks`` gets it in its Python. Atomic sequences stay
atomic across cores: Unicorn's lwarx/stwcx. and ldrex/strex reservations are checked by value
at the store, and a reservation survives the end of a slice (measured), as on hardware
between instructions; the value check admits the ABA case, which a lock or a counter cannot
produce. The interleaving is deterministic: it depends on the simulated clocks only.

Why this design and not another (see also the ZSim paper, Sanchez and Kozyrakis, ISCA 2013,
whose bound-weave phases model contention after the fact and so cannot change which core
wins a lock): the model sees every access in a hook *before* it happens but cannot undo one,
and Unicorn can stop a core only before a block; so ordering is enforced at block
granularity, where it matters (synchronising blocks), and everywhere else a bounded lead keeps
the number of slices, each a ``uc_emu_start`` of a few microseconds, small.

What it does not model: the order of two cores' accesses inside the same cycle window
smaller than a block (the block's base cycles are charged at its start); cross-modifying code
(one core's Unicorn does not see another's stores to code it has translated).
"""
from __future__ import annotations

import contextvars
import ctypes
import threading
from dataclasses import dataclass

import greenlet
from unicorn import UcError

from ..hw import cache as c
from ..hw import native
from ..hw.layout import CORE_STACK, HALT
from . import diagnose
from .calling import MAIN_THREAD, set_arguments, take_sigint
from .limits import capped
from .result import Counts, measured, run_of

CORE_EVENTS = ("transfers", "snoop_invalidations", "serialised", "serialise_wait",
               "sync_waits", "parks", "spin_wait_cycles", "order_stalls")
RUN_ALL_DONE, RUN_CORE_DONE, RUN_STOPPED, RUN_ERROR = range(4)
DEFAULT_QUANTUM = 100

_run_cores = native.lib.emu_run_parallel
_run_cores.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                       ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                       ctypes.c_int64, ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p]
_run_cores.restype = ctypes.c_int64


class _Scheduler:
    """The native scheduler's runs (smp.c emu_run_parallel) of a machine's cores at
    ``quantum``: ``run`` returns its code, ``core`` and ``error`` what it says of the core
    concerned. Ctrl-C stops a run at its next block (emu.hw.interrupt), taken inside the
    library call. A core given a task's call block (``task_block``) has its call's end taken
    in the same library call (smp.c emu_task_end). Its arguments are made once (ctypes
    converts a Python int at every call)."""

    def __init__(self, machine, quantum):
        n = len(machine.cpus)
        self._cpus = (ctypes.c_void_p * n)(*[uc._uch.value for uc in machine.cpus])
        self._blocks = (ctypes.c_void_p * n)()
        self._core, self._error, self._sigint = (ctypes.c_int64(0) for _ in range(3))
        self._arguments = (ctypes.c_void_p(native.address(machine.state)), self._cpus,
                           ctypes.c_int64(quantum), ctypes.c_int64(HALT),
                           ctypes.byref(self._core), ctypes.byref(self._error),
                           ctypes.c_int64(threading.get_ident() == MAIN_THREAD),
                           ctypes.byref(self._sigint), self._blocks)

    def task_block(self, core, block):
        """Take the end of ``core``'s calls by its call block (GuestRuns.block's address)."""
        self._blocks[core] = block

    def run(self):
        code = _run_cores(*self._arguments)
        if self._sigint.value:
            take_sigint(self._sigint.value)
        return code

    @property
    def core(self):
        return self._core.value

    @property
    def error(self):
        return self._error.value


@dataclass
class ParallelRun:
    """What a run on several cores measured: one Run per core (its own caches, the shared
    levels as the whole machine left them), and the time until the last core finished."""
    runs: list              # runs[k]: core k's Run, None if core k had no call
    quantum: int

    @property
    def cycles(self):
        return max(run.cycles for run in self.runs if run)

    @property
    def instructions(self):
        return sum(run.instructions for run in self.runs if run)

    def to_dict(self):
        return {"cycles": self.cycles, "instructions": self.instructions,
                "quantum": self.quantum,
                "cores": [run.to_dict() if run else None for run in self.runs]}

    def table(self):
        """One row per core: cycles, instructions, L1 D misses, coherence and waits."""
        import pandas as pd
        rows = [{"core": k, "entry": run.entry, "return": run.return_value,
                 "instructions": run.instructions, "cycles": run.cycles,
                 "L1D misses": run.caches.get("L1D", {}).get("misses", 0),
                 **{key: run.events.get(key, 0) for key in CORE_EVENTS}}
                for k, run in enumerate(self.runs) if run]
        return pd.DataFrame(rows).set_index("core")

    def __str__(self):
        return (f"{len(self.runs)} cores, {self.cycles:,} cycles (the slowest core), "
                f"{self.instructions:,} instructions\n{self.table().to_string()}")


def _calls(machine, calls):
    calls = [call if call is None or isinstance(call, (tuple, list)) else (call,)
             for call in calls]
    if not 1 <= len(calls) <= len(machine.cpus) or all(call is None for call in calls):
        raise ValueError(f"{len(calls)} calls for {len(machine.cpus)} cores: give one call "
                         "per core, at most, and at least one")
    return calls


#: How the scheduler orders cores at the same clock (``Machine.ties``, default the first):
#: the lower-numbered core first, or in an order a hash of the clock and the core gives (no
#: core favoured). It decides which of several spinning cores, woken by one store at the
#: same cycle, takes a released lock; the order on hardware is the interconnect's, which
#: no document of the modelled machines gives, so a run can be made under either: a
#: multi-core profile marks it an estimate (``[smp] hashed_ties``, false: the first), which
#: the scorecard's ranges move (emu.book.ranges).
TIES = ("lowest core", "hashed")


def tie_order(machine):
    """The index in TIES of ``machine``'s ``ties`` (absent: the first)."""
    ties = getattr(machine, "ties", TIES[0])
    if ties not in TIES:
        raise ValueError(f"a machine's ties must be one of {TIES}, not {ties!r}")
    return TIES.index(ties)


def _prepare(machine, calls, entries, limit):
    """Counters zeroed, the scheduler's tables reset, each called core's registers, stack and
    entry point set and its status runnable."""
    model, st = machine.model, machine.state
    model.clear_stats()
    model.share_settings()
    g = model.globals
    st[g + c.G_NPARKED] = st[g + c.G_WRITE_SEQ] = 0
    st[g + c.G_TIES] = tie_order(machine)
    stamps = st[g + c.G_STAMPS]
    st[stamps:stamps + c.STAMP_WORDS * c.STAMP_ENTRIES] = 0      # clocks restart at 0
    for k in range(len(machine.cpus)):
        header = model.header(k)
        header[c.H_LIMIT] = capped(machine.instruction_limit if limit is None else limit)
        header[c.H_SCHED] = 1
        st[header[c.H_SEEN]:header[c.H_SEEN] + c.SEEN_ENTRIES] = 0      # no block run yet
        header[c.H_SEEN_N] = 0
        header[c.H_LAST_SYNC_BLOCK] = -1
        for field in (c.H_STORES_SINCE, c.H_PARK, c.H_NO_PARK, c.H_WATCHING,
                      c.H_READ_SIGNATURE, c.H_LAST_READ_SIGNATURE):
            header[field] = 0
        record = st[c.H_CORES] + 1 + c.CORE_RECORD * k
        st[record + c.T_STATUS:record + c.CORE_RECORD] = 0
        if k < len(calls) and calls[k] is not None:
            set_arguments(machine.isa, machine.cpus[k], calls[k][1:],
                          machine.stack_top - k * CORE_STACK)
            st[record + c.T_STATUS] = c.CORE_RUNNABLE
            st[record + c.T_PC] = entries[k]


def _check_quantum(quantum):
    if not isinstance(quantum, int) or isinstance(quantum, bool) or quantum < 1:
        raise ValueError(f"the quantum is a positive number of cycles, not {quantum!r}")


def run_alone(machine, calls, quantum=DEFAULT_QUANTUM, limit=None, cold=False):
    """A machine of one core: its one call, as Machine.call runs it (no other core can
    interleave), returned as a ParallelRun."""
    calls = _calls(machine, calls)
    _check_quantum(quantum)
    return ParallelRun([machine.call(calls[0][0], *calls[0][1:], limit=limit, cold=cold)],
                       quantum)


def run_parallel(machine, calls, quantum=DEFAULT_QUANTUM, limit=None, cold=False):
    """Run one call per core at the same time (see Machine.run_parallel); a ParallelRun."""
    calls = _calls(machine, calls)
    _check_quantum(quantum)
    entries = [call and machine.address_of(call[0]) for call in calls]
    machine.tables_up_to_date()
    if cold:
        machine.flush_caches()
    _prepare(machine, calls, entries, limit)
    model, st = machine.model, machine.state
    scheduler = _Scheduler(machine, quantum)
    runs = [None] * len(calls)
    machine.stop_record = None
    machine.extable.taken.clear()
    try:
        while True:
            for uc in machine.cpus:
                uc._hook_exception = None
            code = scheduler.run()
            k = scheduler.core
            machine.uc = machine.cpus[k]        # its header is the live one
            raised = [uc._hook_exception for uc in machine.cpus if uc._hook_exception]
            if raised:
                raise raised[0]
            if code == RUN_ALL_DONE:
                break
            if code == RUN_CORE_DONE:
                runs[k] = measured(machine, calls[k][0], calls[k][1:])
            elif code == RUN_ERROR:
                resume = machine.resume_after_fault()     # as Machine.call's run would
                if resume is None:
                    raise diagnose.describe_fault(machine, UcError(scheduler.error))
                machine.stop_record = None
                model.header(k)[c.H_HOST_STOP] = 0              # the fault hook's stop
                st[st[c.H_CORES] + 1 + c.CORE_RECORD * k + c.T_PC] = resume
            else:
                diagnose.raise_stop(machine)
                raise RuntimeError(f"core {k} stopped at {machine.pc():#x} for no reason "
                                   "the model recorded")
    finally:
        for k in range(len(machine.cpus)):
            model.header(k)[c.H_SCHED] = 0
        model.switch(0)
        machine.uc = machine.cpus[0]
    return ParallelRun(runs, quantum)


# ------------------------------------------------------------------ tasks: Python per core

_runs_of_tasks = 0          # run_tasks under way (none: no greenlet is a task's, a fast path)


class _TaskGreenlet(greenlet.greenlet):
    """The greenlet a task's Python runs on (its Task in ``task``)."""
    task = None


def current_task():
    """The Task whose Python this is (a core's in run_tasks), else None."""
    if not _runs_of_tasks:
        return None
    return getattr(_current_greenlet(), "task", None)


_current_greenlet = greenlet.getcurrent


class TaskAborted(Exception):
    """The run a task belonged to ended with an error elsewhere: its Python stops."""


class Task:
    """One core's Python in ``run_tasks``: a function run in a greenlet of its own (a
    coroutine on the caller's thread), whose guest calls (``call``, or ``Machine.call``
    from its Python) run on its core, in simulated time with the other cores', and whose
    ``spend`` lets time pass on its core for work the model does in Python (a kernel's
    generic paths). Only one task's Python runs at a time, switching to the scheduler at
    its calls, so a run is deterministic. (Greenlets, not threads: a switch costs about a
    microsecond, a hand-over between threads tens.)"""

    def __init__(self, machine, core, function):
        self.machine, self.core, self.function = machine, core, function
        self.result = None
        self._greenlet = None
        # bound once: a task makes thousands of calls (each looked these up twice)
        self._join_context = machine.cost_reads.join_context
        self._to_scheduler = None

    # ---- in the task's greenlet
    def _main(self, _):
        try:
            return ("done", self.function(self))
        except TaskAborted:
            return ("done", None)
        except BaseException as error:          # handed to the scheduler, raised there
            return ("error", error)

    def call(self, entry, *args, limit=None):
        """A guest call on this task's core; returns its Run (this call's counts only)."""
        if current_task() is not self:
            raise RuntimeError(f"core {self.core}'s task calls only from its own Python")
        return self.call_here(entry, args, limit)

    def call_here(self, entry, args, limit=None):
        """``call`` from this task's own Python (its caller has checked: Machine.call)."""
        self._join_context()                        # its context's watches see the run
        kind, value = self._to_scheduler(("call", entry, args, limit))
        if kind == "abort":
            raise TaskAborted()
        if kind == "error":
            raise value
        return value

    def spend(self, cycles):
        """``cycles`` pass on this task's core (work modelled in Python, between calls)."""
        self.machine.model.header(self.core)[c.H_CYCLES] += int(cycles)

    @property
    def clock(self):
        return int(self.machine.model.header(self.core)[c.H_CYCLES])

    @property
    def started(self):
        return self._greenlet is not None

    @property
    def ended(self):
        return self.started and self._greenlet.dead

    # ---- in the scheduler's
    def _step(self, reply=None):
        """Let the task run until it makes a call or ends; what it asked for."""
        if self._greenlet is None:
            self._greenlet = _TaskGreenlet(self._main)
            self._greenlet.task = self
            # a new greenlet starts in an empty context: the task runs in the caller's
            # (its moved estimates, emu.hw.estimates, and the record of what it reads)
            self._greenlet.gr_context = contextvars.copy_context()
            self._to_scheduler = self._greenlet.parent.switch
        return self._greenlet.switch(reply)


def _run_ended(machine, entry, args, plan):
    """The Run of the task's call of ``entry`` that just ended on the running core (its
    ``plan``, Machine._call_plan, kept the counts at its start; the scheduler's library call
    gathered them at its end, emu_task_end): its counts less those."""
    layout, block = plan
    returned, values = machine.guest.ended_task(block)
    soft_tlb = machine.soft_tlb
    return run_of(machine, entry, args, returned,
                  Counts(layout, values, soft_tlb.events() if soft_tlb else None))


def run_tasks(machine, tasks, quantum=DEFAULT_QUANTUM, limit=None):
    """Run ``tasks[k]`` (a function of its Task, or None) for core k, all at once in
    simulated time: each task's guest calls run on its core, the cores interleaved by the
    scheduler as in run_parallel, and a task's Python continues when its call has ended.
    Returns [what each task returned]; each core's clock goes on across its calls (read
    ``Task.clock`` or the Run each call returns)."""
    if len(machine.cpus) < 2:
        raise ValueError("run_tasks needs a machine of several cores (Machine(cores=N))")
    if not 1 <= len(tasks) <= len(machine.cpus) or all(t is None for t in tasks):
        raise ValueError(f"{len(tasks)} tasks for {len(machine.cpus)} cores: give one per "
                         "core, at most, and at least one")
    _check_quantum(quantum)
    _prepare(machine, [None] * len(machine.cpus), [], limit)
    model, st = machine.model, machine.state
    live = {k: Task(machine, k, t) for k, t in enumerate(tasks) if t is not None}
    started = {}                                 # core -> (entry, args, its call plan)
    scheduler = _Scheduler(machine, quantum)
    guest = machine.guest
    stacks = [machine.stack_top - k * CORE_STACK for k in range(len(machine.cpus))]
    cpus, arguments, start_task = machine.cpus, guest.arguments, guest.start_task
    write_stack, address_of = machine._write_stack, machine.address_of
    plans = {}                  # core -> its call plan, its block given to the scheduler

    def plan_of(k):
        plan = plans.get(k)
        if plan is None:
            plan = plans[k] = machine._call_plan_of(k)
            scheduler.task_block(k, plan[1][0])
        return plan

    def hand(k, reply=None, is_live=False):
        """Give task k control (its core's header live: its Python may set the core's
        registers; ``is_live``: it is, as the scheduler leaves the core it returns for);
        set up the call it asks for, or note its end."""
        if not is_live:
            model.switch(k)
        machine.uc = cpus[k]
        request = live[k]._step(reply)
        if request[0] == "call":
            _, entry, args, call_limit = request
            uc = machine.uc = cpus[k]
            count = arguments(args, stacks[k], write_stack)
            plan = plan_of(k)
            # the task's Python may have made another core's header live: the start makes
            # core k's live again (smp.c emu_task_start)
            start_task(uc, plan[1], k, address_of(entry), count,
                       call_limit or limit or machine.instruction_limit)
            started[k] = (entry, args, plan)
        elif request[0] == "done":
            live[k].result = request[1]
            del live[k]
        else:
            abort()
            raise request[1]

    def abort():
        for task in list(live.values()):
            if task.started and not task.ended:
                task._step(("abort", None))
        live.clear()

    global _runs_of_tasks
    machine.tables_up_to_date()
    machine.stop_record = None
    _runs_of_tasks += 1
    try:
        for k in list(live):
            hand(k)
        results = {}
        while live:
            code = scheduler.run()
            k = scheduler.core
            machine.uc = machine.cpus[k]
            if code == RUN_ALL_DONE:
                raise RuntimeError("tasks are waiting but no core has a call to run")
            if code == RUN_CORE_DONE:
                entry, args, plan = started.pop(k)
                run = _run_ended(machine, entry, args, plan)
                task = live[k]
                hand(k, ("ok", run), is_live=True)
                if k not in live:
                    results[k] = task.result
                continue
            fault = diagnose.describe_fault(machine, UcError(scheduler.error)) \
                if code == RUN_ERROR else _stop_reason(machine)
            machine.stop_record = None
            model.header(k)[c.H_HOST_STOP] = 0
            record = st[c.H_CORES] + 1 + c.CORE_RECORD * k
            st[record + c.T_STATUS] = c.CORE_IDLE
            task = live[k]
            hand(k, ("error", fault))           # the task may handle it (or end with it)
            if k not in live:
                results[k] = task.result
    finally:
        abort()
        _runs_of_tasks -= 1
        for k in range(len(machine.cpus)):
            model.header(k)[c.H_SCHED] = 0
        model.switch(0)
        machine.uc = machine.cpus[0]
    return [results.get(k) for k in range(len(tasks))]


def _stop_reason(machine):
    """The exception a stopped core's state describes (it stopped for one)."""
    try:
        diagnose.raise_stop(machine)
    except Exception as error:                  # noqa: BLE001 (it is what we return)
        return error
    return RuntimeError(f"core stopped at {machine.pc():#x} for no reason the model "
                        "recorded")
