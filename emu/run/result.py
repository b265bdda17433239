"""What one call measured (a Run): instructions, cycles, each cache level's and TLB's
statistics, the memory system's and the MMU's events; a deterministic function of the
machine and the call."""
from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field

import numpy as np

from ..hw import cache as c
from ..hw import mmu as mmu_model

#: the Run's fields that are decoded from its counts when first read
DECODED = ("caches", "events", "memory", "tlbs")
#: Run.counter's names of the memory's counts
MEMORY_COUNTERS = {"memory_reads": "reads", "memory_writes": "writes"}


@dataclass
class Run:
    """What one call measured: a deterministic function of the machine and the call.

    A call's Run keeps the counters it read as one array (``Counts``) and makes its
    dictionaries (``caches``, ``events``, ``memory``, ``tlbs``) when one is first read: a Run
    read only for its cycles, instructions and return value (a sweep's, a test's loop's)
    never builds them."""
    profile: str
    entry: str
    args: tuple
    return_value: int
    instructions: int
    cycles: int
    caches: dict
    events: dict
    memory: dict
    tlbs: dict = field(default_factory=dict)

    @classmethod
    def counted(cls, profile, entry, args, return_value, counts):
        """A Run whose dictionaries come from ``counts`` when first read."""
        run = cls.__new__(cls)
        values, layout = counts.values, counts.layout
        run.__dict__ = {"profile": profile, "entry": entry, "args": args,
                        "return_value": return_value,
                        "instructions": values[layout.instructions_at],
                        "cycles": values[layout.cycles_at], "_counts": counts}
        return run

    def __getattr__(self, name):        # only for an attribute not set: a decoded field
        counts = self.__dict__.get("_counts")
        if counts is None or name not in DECODED:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.__dict__.update(counts.decode())
        del self.__dict__["_counts"]
        return self.__dict__[name]

    def counter(self, name):
        """One event's count (``events[name]``, 0 when the run has none of that name) or the
        memory's ``"memory_reads"`` / ``"memory_writes"``, read straight from the counts when
        the dictionaries are not made yet: a kernel's ledger reads a few of each run."""
        counts = self.__dict__.get("_counts")
        if counts is not None:
            value = counts.counter(name)
            if value is not None:
                return value
        if name in MEMORY_COUNTERS:
            return self.memory[MEMORY_COUNTERS[name]]
        return self.events.get(name, 0)

    def counters(self, names):
        """[Run.counter(name) for name in names], in one reading of the counts."""
        counts = self.__dict__.get("_counts")
        if counts is not None:
            values = counts.counters(names)
            if None not in values:
                return values
        return [self.counter(name) for name in names]

    def misses(self):
        """[(cache level, its misses)], as ``caches`` has them."""
        counts = self.__dict__.get("_counts")
        if counts is not None:
            return counts.misses()
        return [(level, stats["misses"]) for level, stats in self.caches.items()]

    def __getstate__(self):             # pickled (emu.sweep's processes) decoded, as it was
        for name in DECODED:
            getattr(self, name)
        return self.__dict__

    def to_dict(self):
        return {"profile": self.profile, "entry": self.entry, "args": list(self.args),
                "return": self.return_value, "instructions": self.instructions,
                "cycles": self.cycles, "caches": self.caches, "events": self.events,
                "memory": self.memory, **({"tlbs": self.tlbs} if self.tlbs else {})}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2)

    def cache_table(self):
        """The per-level statistics as a pandas DataFrame (one row per level)."""
        import pandas as pd
        df = pd.DataFrame.from_dict(self.caches, orient="index")
        df.index.name = "level"
        return df

    def table(self):
        lines = [f"{self.entry} on {self.profile}: returned {self.return_value:#x}",
                 f"  instructions {self.instructions:>12,}",
                 f"  cycles       {self.cycles:>12,}",
                 f"  {'level':<6}{'accesses':>12}{'hits':>12}{'misses':>12}{'writebacks':>12}"]
        for name, s in self.caches.items():
            lines.append(f"  {name:<6}{s['accesses']:>12,}{s['hits']:>12,}{s['misses']:>12,}"
                         f"{s['writebacks']:>12,}")
        for name, s in self.tlbs.items():
            lines.append(f"  {name:<6}{s['lookups']:>12,}{s['hits']:>12,}{s['misses']:>12,}"
                         f"{'':>12}")
        lines.append(f"  memory: {self.memory['reads']:,} line reads, "
                     f"{self.memory['writes']:,} writes")
        events = ", ".join(f"{k} {v}" for k, v in self.events.items() if v)
        lines.append(f"  events: {events or 'none'}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


class CountLayout:
    """Where a machine's call counters are in its state (for one core), and how a gather
    of them becomes a Run's dictionaries. What the machine is (its ISA, cores, outer cache)
    is fixed here; what a call may switch (the MMU, the memory system, the store queues)
    is read from the gathered words."""

    EVENT_WORDS = {"stale_ifetch": c.H_STALE, "first_stale_pc": c.H_STALE_PC,
                   "nontemporal_stores": c.H_NT_STORES,
                   "wc_flushes": c.H_WC_FLUSHES, "wc_partial_flushes": c.H_WC_PARTIAL,
                   "instructions_outside_programs": c.H_UNCOUNTED,
                   "alignment_exceptions": c.H_ALIGN_EXCEPTIONS, "split_accesses": c.H_SPLITS}
    STORE_QUEUE = {"l2_store_queue_stores": c.H_SQ_STORES,
                   "l2_store_queue_stalls": c.H_SQ_STALLS,
                   "l2_store_queue_stall_cycles": c.H_SQ_STALL_CYCLES}
    OUTER_CACHE = {"outer_cache_syncs": c.H_OUTER_SYNCS, "outer_cache_line_ops":
                   c.H_OUTER_LINE_OPS, "outer_cache_wait": c.H_OUTER_WAIT,
                   "maintenance_wait": c.H_MAINT_WAIT,
                   "outer_cache_drain_wait": c.H_OUTER_DRAIN_WAIT}
    CORE = {"transfers": c.H_TRANSFERS, "snoop_invalidations": c.H_SNOOP_INVALIDATIONS,
            "serialised": c.H_SERIAL_OPS, "serialise_wait": c.H_SERIAL_WAIT,
            "sync_waits": c.H_SYNC_WAITS, "parks": c.H_PARKS,
            "spin_wait_cycles": c.H_SPIN_WAIT,
            "order_stalls": c.H_ORDER_STALLS, "order_stall_cycles": c.H_ORDER_STALL_CYCLES,
            "interventions": c.H_INTERVENTIONS, "slices": c.H_SLICES}
    MEMORY_SYSTEM = {"bus_busy_cycles": c.H_BUS_BUSY, "bus_wait_cycles": c.H_BUS_WAIT,
                     "store_buffer_stalls": c.H_SB_STALLS,
                     "store_buffer_stall_cycles": c.H_SB_STALL_CYCLES,
                     "fill_buffer_waits": c.H_FB_WAITS, "prefetches": c.H_PREFETCHES,
                     "prefetches_dropped": c.H_PREFETCHES_DROPPED,
                     "hardware_prefetches": c.H_HW_PREFETCHES,
                     "prefetch_late": c.H_PREFETCH_LATE,
                     "prefetch_late_cycles": c.H_PREFETCH_LATE_CYCLES,
                     "uncached_loads": c.H_UNCACHED_LOADS,
                     "uncached_stores": c.H_UNCACHED_STORES, "wc_wait_cycles": c.H_WC_WAIT,
                     "address_only": c.H_ADDRESS_ONLY}
    IRQ_OFF = {"irq_off_cycles": c.H_IRQ_OFF_CYCLES}      # ARM's interrupts-off time
    ARM_WALKS = {"table_walks": c.H_WALKS, "section_hits": c.H_PRIMARY_HITS,
                 "page_hits": c.H_SECONDARY_HITS, "page_faults": c.H_PAGE_FAULTS}
    HASH_WALKS = {"hash_walks": c.H_WALKS, "primary_hits": c.H_PRIMARY_HITS,
                  "secondary_hits": c.H_SECONDARY_HITS, "page_faults": c.H_PAGE_FAULTS}
    #: every table of event words (decode reads them as ``gated`` and the MMU mode say), once
    TABLES = (EVENT_WORDS, STORE_QUEUE, OUTER_CACHE, IRQ_OFF, CORE, MEMORY_SYSTEM, ARM_WALKS,
              HASH_WALKS)
    SWITCHES = (c.H_INSNS, c.H_CYCLES, c.H_STALE_PC, c.H_SQ_SLICES, c.H_MEMSYS, c.H_MMU,
                c.H_MEM_READS, c.H_MEM_WRITES, c.H_IRQ_OFF_CYCLES)

    def __init__(self, machine, core):
        layout = machine.model
        self.outer_cache = machine.outer_cache_base is not None
        self.arm = machine.isa == "arm"
        self.cores = len(machine.cpus)
        words = list(self.SWITCHES)
        for table in self.TABLES:
            words += table.values()
        self.header = {w: i for i, w in enumerate(dict.fromkeys(words))}
        self.instructions_at, self.cycles_at = self.header[c.H_INSNS], self.header[c.H_CYCLES]
        gathered = [np.array(list(self.header), np.int64)]

        def picker(names, positions):
            """(names, a getter of their values' tuple from a gather's list)"""
            get = operator.itemgetter(*positions)
            return tuple(names), get if len(positions) > 1 else (lambda v: (get(v),))
        self.tables = {id(t): picker(t, [self.header[w] for w in t.values()])
                       for t in self.TABLES}
        # the event tables in decode's order, each with what turns it on: None (always),
        # False (never on this machine) or the position of a word that must be non-zero
        at = self.header
        self.gated = ((self.EVENT_WORDS, None), (self.STORE_QUEUE, at[c.H_SQ_SLICES]),
                      (self.OUTER_CACHE, None if self.outer_cache else False),
                      (self.IRQ_OFF, None if self.arm else False),
                      (self.CORE, None if self.cores > 1 else False),
                      (self.MEMORY_SYSTEM, at[c.H_MEMSYS]))
        # per cache level, then per TLB: (its name, its counters' names and getter)
        self.levels = []
        self.miss_positions = []        # per cache level: (its name, its misses' position)
        for levels, names in ((layout.caches, layout.STAT_FIELDS),
                              (layout.tlbs, layout.TLB_FIELDS)):
            own = []
            for level, level_words in layout.counter_words(core, levels, names):
                at = sum(len(g) for g in gathered)
                gathered.append(level_words)
                own.append((level, picker(names, range(at, at + len(names)))))
                if levels is layout.caches:
                    self.miss_positions.append((level, at + names.index("misses")))
            self.levels.append(own)
        self.words = np.concatenate(gathered)
        # the words that count (a task's call's share is their difference: smp.c
        # emu_task_start), not those that note a state (the MMU's mode, the memory system's
        # switch)
        self.counting = np.flatnonzero(np.isin(self.words, layout.count_words))
        self.positions = self._counter_positions()
        self._pickers = {}
        self.ledger_plans = {}          # a ledger's class -> its ledger_plan (Ledger._plan)

    def _counter_positions(self):
        """Run.counter's names: {name: (its position, or None where decode leaves its table
        out on this machine; the position of the word that turns its table on, or None)}."""
        at = self.header
        out = {}
        for table, gate in self.gated:
            for name, word in table.items():
                if name != "first_stale_pc":            # decode turns it into a PC or None
                    out[name] = (None, None) if gate is False else (at[word], gate)
        out["memory_reads"] = (at[c.H_MEM_READS], None)
        out["memory_writes"] = (at[c.H_MEM_WRITES], None)
        return out

    def gather(self, st, soft_tlb_events=None):
        """The counts of a call as they are in ``st`` now."""
        return Counts(self, st[self.words].tolist(), soft_tlb_events)

    def _table(self, table, values):
        names, get = self.tables[id(table)]
        return dict(zip(names, get(values)))

    def picker(self, names):
        """A function of a gather's values giving ``[counter(values, name) for name in
        names]``, its positions and gates looked up once (made once per tuple of names):
        a kernel's ledger reads the same few counts of every call."""
        pick = self._pickers.get(names)
        if pick is None:
            where = [self.positions.get(name) for name in names]
            if None in where:           # a name decode's other events give: read as before
                def pick(values):
                    return [self.counter(values, name) for name in names]
            else:
                where = [(0, None, None) if at is None or gate is False else (1, at, gate)
                         for at, gate in where]

                def pick(values):
                    return [values[at] if on and (gate is None or values[gate]) else 0
                            for on, at, gate in where]
            self._pickers[names] = pick
        return pick

    def ledger_plan(self, traffic, events):
        """What a kernel's ledger reads of every call (emu.kernel.ledger.Ledger.guest), its
        positions looked up once: (traffic, events), each [(its key, position, gate)]
        (``traffic``: every cache level's misses as "<level>_misses", then the counters
        ``traffic`` {key: counter}; ``events`` {key: counter}); a position None reads 0. None
        where a counter is not one of this layout's (the ledger then reads it as before)."""
        names = (tuple(traffic.items()), tuple(events.items()))
        plan = self._pickers.get(names)
        if plan is None:
            where = {name: self.positions.get(name) for _, name in names[0] + names[1]}
            if None in where.values():
                plan = self._pickers[names] = False
            else:
                def placed(pairs):
                    return [(key, *where[name]) for key, name in pairs]
                plan = self._pickers[names] = (
                    [(f"{level}_misses", at, None) for level, at in self.miss_positions]
                    + placed(names[0]), placed(names[1]))
        return plan or None

    def counter(self, values, name):
        """The count ``name`` of a gather's values as decode gives it (0 where decode leaves
        its table out); None for a name it does not know (decode's other events)."""
        where = self.positions.get(name)
        if where is None:
            return None
        at, gate = where
        if at is None or (gate is not None and not values[gate]):
            return 0
        return values[at]

    def misses(self, values):
        """[(cache level, its misses)] of a gather's values, as decode's caches have them."""
        return [(level, values[at]) for level, at in self.miss_positions]

    def decode(self, values, soft_tlb_events):
        """(caches, events, memory, tlbs) of a gather's values (a list of ints)."""
        at = self.header
        events = {}
        for table, gate in self.gated:
            if gate is None or (gate is not False and values[gate]):
                events.update(self._table(table, values))
        if not values[at[c.H_STALE]]:
            events["first_stale_pc"] = None
        mmu = values[at[c.H_MMU]]
        if mmu == mmu_model.MODE_ARM_SHORT:
            events.update(self._table(self.ARM_WALKS, values))
        elif soft_tlb_events is not None:
            events.update(soft_tlb_events)
        elif mmu:
            events.update(self._table(self.HASH_WALKS, values))
        caches, tlbs = ({level: dict(zip(names, get(values))) for level, (names, get) in own}
                        for own in self.levels)
        memory = {"reads": values[at[c.H_MEM_READS]], "writes": values[at[c.H_MEM_WRITES]]}
        return {"caches": caches, "events": events, "memory": memory, "tlbs": tlbs}


class Counts:
    """The counters of one call, gathered at its end (CountLayout): ``values`` a list of
    ints, or an int64 array.array (Machine.call's and a task's call's, copied from their gathering in one step);
    a kernel's ledger reads a few of every call, by index."""
    __slots__ = ("layout", "values", "soft_tlb_events")

    def __init__(self, layout, values, soft_tlb_events):
        self.layout, self.values, self.soft_tlb_events = layout, values, soft_tlb_events

    @property
    def instructions(self):
        return self.values[self.layout.instructions_at]

    @property
    def cycles(self):
        return self.values[self.layout.cycles_at]

    def counter(self, name):
        return self.layout.counter(self.values, name)

    def counters(self, names):
        return self.layout.picker(tuple(names))(self.values)

    def misses(self):
        return self.layout.misses(self.values)

    def decode(self):
        return self.layout.decode(self.values, self.soft_tlb_events)


def count_layout(machine, core):
    """The CountLayout of ``core`` of ``machine`` (made once)."""
    layout = machine.count_layouts.get(core)
    if layout is None:
        layout = machine.count_layouts[core] = CountLayout(machine, core)
    return layout


def measured(machine, entry, args, returned=None):
    """The Run of the call of ``entry`` with ``args`` that just ended on the running core
    (``returned``: its return value, if it has been read)."""
    layout = count_layout(machine, machine.model.running)
    counts = layout.gather(machine.state,
                           machine.soft_tlb.events() if machine.soft_tlb else None)
    return run_of(machine, entry, args,
                  machine.return_value() if returned is None else returned, counts)


def run_of(machine, entry, args, returned, counts):
    """The Run of a call of ``entry`` (a symbol, or an address) with ``args`` on ``machine``
    that returned ``returned``, its ``counts`` gathered."""
    return Run.counted(machine.profile.name, entry if isinstance(entry, str) else hex(entry),
                       tuple(args), int(returned), counts)
