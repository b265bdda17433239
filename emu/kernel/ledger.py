"""The ledger: cycles per kernel routine (guest routines measured, generic C paths fixed
costs from ``emu.kernel.costs``) and event counts, per CPU."""
from __future__ import annotations

import array
from collections import Counter
from operator import itemgetter

import numpy as np

from ..run.parallel import current_task
from . import costs as cost_table
from .percpu import PerCPU


class Book:
    """One CPU's part of the ledger.

    Its ``traffic`` of measured guest runs is summed when read: a run whose plan's keys
    the Counter already holds (GuestPlan) is kept as its gathered values, and the values
    kept are summed into the Counter when ``traffic`` is next read or set (or every
    FOLD_EVERY runs). A reader sees the same Counter, keys in the same order, as if each
    run had been added at once: a run adds its keys when they are missing, and reading
    ``traffic`` (after which the reader may clear it) makes the next run add them again."""
    __slots__ = ("rows", "counts", "_traffic", "_pending", "_installed")

    def __init__(self):
        self.rows = {}                 # name -> [kind, calls, cycles, instructions]
        self.counts = Counter()
        # what the measured guest runs did to the caches and memory: per cache level its
        # misses ("L1D_misses"), "memory_reads" (line fills) and "memory_writes",
        # "uncached_stores"
        self._traffic = Counter()
        self._pending = {}             # GuestPlan -> [the gathered values of its runs]
        self._installed = set()        # the GuestPlans whose keys _traffic holds

    @property
    def traffic(self):
        self._fold()
        self._installed.clear()         # the reader may change it
        return self._traffic

    @traffic.setter
    def traffic(self, value):
        self._fold()
        self._installed.clear()
        self._traffic = value

    def add_traffic(self, plan, values):
        """A guest run's traffic (``plan``: its GuestPlan, ``values``: its gathered counts)."""
        if plan in self._installed:
            pending = self._pending.get(plan)
            if pending is None:
                pending = self._pending[plan] = []
            pending.append(values)
            if len(pending) >= FOLD_EVERY:
                self._fold()
            return
        self._fold()
        plan.add_traffic(self._traffic, values)
        self._installed.add(plan)

    def _fold(self):
        if self._pending:
            for plan, kept in self._pending.items():
                plan.fold_traffic(self._traffic, kept)
            self._pending = {}

    def __getstate__(self):            # pickled (a run kept for reuse) with its sums made
        return self.rows, self.counts, self.traffic

    def __setstate__(self, state):
        self.rows, self.counts, self._traffic = state
        self._pending, self._installed = {}, set()


#: the most runs a Book keeps unsummed (their values: a few hundred bytes each)
FOLD_EVERY = 4096


class GuestPlan:
    """What a kernel's ledger reads of each guest run of one CountLayout
    (CountLayout.ledger_plan: its traffic and events, each [(key, position, gate)]; a
    position None reads 0, a gate's word 0 turns the value to 0), with the sum of many
    runs' traffic made in a few numpy operations."""
    __slots__ = ("traffic", "events", "_event_values")

    def __init__(self, plan):
        self.traffic, self.events = plan
        # the events' values in one C call, where none is gated (most runs have none)
        plain = all(at is not None and gate is None for _, at, gate in self.events)
        self._event_values = itemgetter(*(at for _, at, _ in self.events)) \
            if plain and len(self.events) > 1 else None

    def add_traffic(self, traffic, values):
        for key, at, gate in self.traffic:
            traffic[key] += values[at] if at is not None and (
                gate is None or values[gate]) else 0

    def add_events(self, counts, values):
        if self._event_values is not None and not any(self._event_values(values)):
            return
        for key, at, gate in self.events:
            if at is not None and (gate is None or values[gate]) and values[at]:
                counts[key] += values[at]

    def fold_traffic(self, traffic, kept):
        """add_traffic of each of ``kept`` (runs' values, in one sum per key)."""
        if all(type(v) is array.array and v.typecode == "q" for v in kept):   # a call's
            table = np.frombuffer(b"".join(kept), np.int64).reshape(len(kept), -1)
        else:                                   # lists (emu.run.result.measured's)
            table = np.array(kept, np.int64)
        for key, at, gate in self.traffic:
            if at is None:
                n = 0
            elif gate is None:
                n = int(table[:, at].sum())
            else:
                n = int(table[:, at][table[:, gate] != 0].sum())
            traffic[key] += n


_MISSES = {}                    # a cache level's name -> its traffic key ("L1D_misses")


def _misses_key(level):
    _MISSES[level] = key = f"{level}_misses"
    return key


def _add_to(rows, name, kind, calls, cycles, instructions):
    row = rows.get(name)
    if row is None:
        row = rows[name] = [kind, 0, 0, 0]
    row[1] += calls
    row[2] += cycles
    row[3] += instructions


def _on_this_cpu(part):
    """The ledger's ``part`` (rows, counts, traffic) of the CPU the code runs for."""
    return property(lambda ledger: getattr(ledger.books, part),
                    lambda ledger, value: setattr(ledger.books, part, value))


class Ledger:
    """Cycles per routine (guest routines measured, generic paths fixed) and event counts,
    per CPU (each CPU's are those of the code that ran for it). On a machine of several
    cores a generic path's fixed cycles also pass on the CPU's clock (Task.spend)."""

    books = PerCPU(Book)
    rows = _on_this_cpu("rows")
    counts = _on_this_cpu("counts")
    traffic = _on_this_cpu("traffic")

    def __init__(self, table=None):
        self.table = table or cost_table.TABLE

    def _book(self):
        book = self.books               # one look-up of the CPU for the three
        return book.rows, book.counts, book.traffic

    def _add(self, name, kind, calls, cycles, instructions=0):
        _add_to(self.books.rows, name, kind, calls, cycles, instructions)

    def fixed(self, name, times=1):
        """Charge the generic path ``name`` (``times`` passes) from the fixed-cost table."""
        if times:
            cycles = cost_table.cycles(name, self.table) * times
            self._add(name, "fixed", times, cycles)
            task = current_task()
            if task is not None:
                task.spend(cycles)

    #: what the ledger counts of a guest run's events: {its count: the run's event}
    GUEST_EVENTS = {
        # cycles spent waiting for a shared controller (the PL310's queue)
        "outer_cache_wait_cycles": "outer_cache_wait",
        # cycles the PL310's syncs waited for its buffers' DRAM transfers, every core's
        "outer_cache_drain_wait_cycles": "outer_cache_drain_wait",
        # cycles a dsb waited for cache maintenance (ARM: maintenance in time), cycles a
        # core spun parked on a lock another core held, lines moved between cores' L1s
        "maintenance_wait_cycles": "maintenance_wait",
        "spin_wait_cycles": "spin_wait_cycles",
        "line_transfers": "transfers"}
    #: its cache and memory traffic: {the traffic's name: the run's counter}
    GUEST_TRAFFIC = {"memory_reads": "memory_reads", "memory_writes": "memory_writes",
                     "uncached_stores": "uncached_stores"}

    _GUEST_COUNTERS = tuple(GUEST_TRAFFIC.values()) + tuple(GUEST_EVENTS.values())

    def guest(self, name, run):
        """Charge one measured guest routine run (and note its cache and memory traffic)."""
        book = self.books
        rows = book.rows
        row = rows.get(name)
        if row is None:
            row = rows[name] = ["guest", 0, 0, 0]
        row[1] += 1
        row[2] += run.cycles
        row[3] += run.instructions
        gathered = run.__dict__.get("_counts")       # its counts, not decoded yet
        plan = gathered and self._plan(gathered.layout)
        if plan:                # the same as below, each position looked up once a layout
            values = gathered.values
            book.add_traffic(plan, values)
            plan.add_events(book.counts, values)
            return
        counts, traffic = book.counts, book.traffic
        for level, misses in run.misses():
            traffic[_MISSES.get(level) or _misses_key(level)] += misses
        values = run.counters(self._GUEST_COUNTERS)        # one reading of the run's counts
        for key, n in zip(self.GUEST_TRAFFIC, values):
            traffic[key] += n
        for event, n in zip(self.GUEST_EVENTS, values[len(self.GUEST_TRAFFIC):]):
            if n:
                counts[event] += n

    def _plan(self, layout):
        """The layout's ledger_plan of GUEST_TRAFFIC and GUEST_EVENTS, kept on the layout per
        ledger class (looked up by the class: the plan's key is made once, not per run)."""
        plans = layout.ledger_plans
        kind = type(self)
        if kind not in plans:
            plan = layout.ledger_plan(self.GUEST_TRAFFIC, self.GUEST_EVENTS)
            plans[kind] = plan and GuestPlan(plan)
        return plans[kind]

    def move(self, source, name, cycles, calls=1, instructions=0):
        """Move ``cycles`` (and ``instructions``) of the row ``source`` to the row ``name``,
        ``calls`` calls of it (a part of a guest routine that a sampling profiler sees in
        another symbol)."""
        rows = self.books.rows          # one look-up of the CPU for both
        kind = rows[source][0]
        _add_to(rows, source, kind, 0, -cycles, -instructions)
        _add_to(rows, name, kind, calls, cycles, instructions)

    def count(self, event, n=1):
        if n:
            self.books.counts[event] += n

    @property
    def cycles(self):
        return sum(r[2] for r in self._book()[0].values())

    def snapshot(self):
        rows, counts, traffic = self._book()
        copy = Ledger(self.table)
        copy.rows = {k: list(v) for k, v in rows.items()}
        copy.counts = Counter(counts)
        copy.traffic = Counter(traffic)
        return copy

    def since(self, before):
        """What was charged (on this CPU) after the snapshot ``before``."""
        diff = Ledger(self.table)
        self._book()
        for name, (kind, calls, cycles, insns) in self.rows.items():
            b = before.rows.get(name, [kind, 0, 0, 0])
            if calls - b[1]:
                diff.rows[name] = [kind, calls - b[1], cycles - b[2], insns - b[3]]
        diff.counts = Counter({k: v - before.counts.get(k, 0) for k, v in self.counts.items()
                               if v - before.counts.get(k, 0)})
        diff.traffic = Counter({k: v - before.traffic.get(k, 0)
                                for k, v in self.traffic.items()
                                if v - before.traffic.get(k, 0)})
        return diff

    def breakdown(self):
        """Per routine: kind (guest/fixed), calls, cycles, instructions (guest), share."""
        import pandas as pd
        total = self.cycles or 1
        rows = [{"routine": name, "kind": kind, "calls": calls, "cycles": cycles,
                 "instructions": insns if kind == "guest" else None,
                 "share": cycles / total}
                for name, (kind, calls, cycles, insns) in self.rows.items()]
        df = pd.DataFrame(rows, columns=["routine", "kind", "calls", "cycles", "instructions",
                                         "share"])
        return df.sort_values("cycles", ascending=False).set_index("routine")
