"""The ledger: cycles per kernel routine (guest routines measured, generic C paths fixed
costs from ``emu.kernel.costs``) and event counts, per CPU."""
from __future__ import annotations

from collections import Counter

from ..run.parallel import current_task
from . import costs as cost_table
from .percpu import PerCPU


class Ledger:
    """Cycles per routine (guest routines measured, generic paths fixed) and event counts,
    per CPU (each CPU's are those of the code that ran for it). On a machine of several
    cores a generic path's fixed cycles also pass on the CPU's clock (Task.spend)."""

    rows = PerCPU(dict)         # name -> [kind, calls, cycles, instructions]
    counts = PerCPU(Counter)
    # what the measured guest runs did to the caches and memory: per cache level its misses
    # ("L1D_misses"), "memory_reads" (line fills) and "memory_writes", "uncached_stores"
    traffic = PerCPU(Counter)

    def __init__(self, table=None):
        self.table = table or cost_table.TABLE

    def _book(self):
        return self.rows, self.counts, self.traffic

    def _add(self, name, kind, calls, cycles, instructions=0):
        row = self._book()[0].setdefault(name, [kind, 0, 0, 0])
        row[1] += calls
        row[2] += cycles
        row[3] += instructions

    def fixed(self, name, times=1):
        """Charge the generic path ``name`` (``times`` passes) from the fixed-cost table."""
        if times:
            cycles = cost_table.cycles(name, self.table) * times
            self._add(name, "fixed", times, cycles)
            task = current_task()
            if task is not None:
                task.spend(cycles)

    def guest(self, name, run):
        """Charge one measured guest routine run (and note its cache and memory traffic)."""
        self._add(name, "guest", 1, run.cycles, run.instructions)
        traffic = self._book()[2]
        for level, stats in run.caches.items():
            traffic[f"{level}_misses"] += stats["misses"]
        traffic["memory_reads"] += run.memory["reads"]
        traffic["memory_writes"] += run.memory["writes"]
        traffic["uncached_stores"] += run.events.get("uncached_stores", 0)
        # cycles spent waiting for a shared controller (the PL310's queue): an event count
        self.count("outer_cache_wait_cycles", run.events.get("outer_cache_wait", 0))
        # cycles a dsb waited for cache maintenance (ARM: maintenance in time), cycles a
        # core spun parked on a lock another core held, lines moved between cores' L1s
        self.count("maintenance_wait_cycles", run.events.get("maintenance_wait", 0))
        self.count("spin_wait_cycles", run.events.get("spin_wait_cycles", 0))
        self.count("line_transfers", run.events.get("transfers", 0))

    def move(self, source, name, cycles, calls=1):
        """Move ``cycles`` of the row ``source`` to the row ``name``, ``calls`` calls of it (a
        part of a guest routine that a sampling profiler sees in another symbol)."""
        kind = self._book()[0][source][0]
        self._add(source, kind, 0, -cycles)
        self._add(name, kind, calls, cycles)

    def count(self, event, n=1):
        if n:
            self._book()[1][event] += n

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
