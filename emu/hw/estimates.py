"""The model's estimates, moved and watched.

Every number the model takes without a primary source is marked as an **estimate** where
it lives: a processor profile's ``unverified`` list (each with its plausible low and high,
and why, in the table's ``ranges``), the kernel's cost table (``emu.kernel.costs``: the
instruction counts of the generic C paths and their CPI) and the page counts of the
workloads' process images (``emu.kernel.workloads``). Each has a name:

* ``"ppc750:memory.latency"``, ``"ppc750:caches.L2.hit_latency"``,
  ``"ppc750:costs.mnemonics.sync"``: a profile's value (``profile:table.key``; a cache level
  by its name);
* ``"kernel:costs.fork"`` (the instructions of fork's C path), ``"kernel:costs.CPI"``;
* ``"kernel:image.cc1"``: the pages a run of an image touches, as a factor of its estimate.

``moved(changes)`` runs code with some estimates at other values: inside it, a profile
loaded, a kernel cost charged or an image mapped takes the moved value; on leaving, every
value is the file's again. It holds for this thread or task only (a ``ContextVar``), and a
sweep started inside it runs in the caller (``emu.run.sweep``), where the move applies.
``watch()`` records the estimates a run reads (``Watch.read``): a profile's estimates
when it is loaded (its instruction costs when an instruction of that cost runs: a
machine's ``emu.run.costreads``, which records them when the block's watch ends, or the
run's context changes, as ``readers``), a kernel cost when it is charged, an image's when
it is mapped. The scorecard's ranges
(``emu.book.ranges``) move each estimate a claim's run reads, one at a time, to its low
and its high.

    with estimates.moved({"ppc750:memory.latency": 100}):
        cycles = run_on_ppc750()          # the same run, memory at 100 cycles
"""
from __future__ import annotations

import contextlib
import weakref
from contextvars import ContextVar
from dataclasses import dataclass, field

#: The estimates of this thread or task: (the moved values, the watches recording reads)
_STATE: ContextVar = ContextVar("emu_estimates", default=({}, ()))


@dataclass
class Watch:
    """What a ``watch()`` saw: the names of the estimates read inside it. A unit's watch
    (``unit=True``, emu.run.reuse) keeps the estimates read inside a ``setup_only`` block
    apart, in ``setup``: its result does not depend on them. ``readers``: what ran inside
    it and records its reads later ({id: a weak reference to an object whose ``flush()``
    records them}: a machine's instruction costs, emu.run.costreads), told to record them
    when the watch ends."""
    read: set = field(default_factory=set)
    unit: bool = False
    setup: set = field(default_factory=set)
    readers: dict = field(default_factory=dict, repr=False, compare=False)


#: the prefixes of the estimates a ``setup_only`` block reads without its unit's result
#: depending on them (empty: none)
_SETUP: ContextVar = ContextVar("emu_estimates_setup", default=())


def active():
    """Is any estimate moved or watched here? (A sweep then runs in the caller.)"""
    moved_, watches = _STATE.get()
    return bool(moved_) or bool(watches)


def current():
    """The moved estimates here: {name: value} (a copy)."""
    return dict(_STATE.get()[0])


@contextlib.contextmanager
def moved(changes=None, unit=False):
    """Run the block with the estimates ``changes`` ({name: value}) moved, on top of any
    moved around it; yields a ``Watch`` of the estimates read inside (``unit``: a unit's,
    see ``setup_only``). Everything is as before on leaving, however the block ends."""
    changes = dict(changes or {})
    for name in changes:
        if not isinstance(name, str) or ":" not in name:
            raise ValueError(f"an estimate's name is 'profile:table.key' or 'kernel:...', "
                             f"not {name!r}")
    outer, watches = _STATE.get()
    watch = Watch(unit=unit)
    token = _STATE.set(({**outer, **changes}, watches + (watch,)))
    try:
        yield watch
    finally:
        try:
            _flush_readers(watch)
        finally:
            _STATE.reset(token)


def _flush_readers(watch):
    """Let what ran inside ``watch`` and records its reads later record them now."""
    for ref in list(watch.readers.values()):
        reader = ref()
        if reader is not None:
            reader.flush()
    watch.readers.clear()


@contextlib.contextmanager
def recorded():
    """A ``Watch`` of the estimates read inside the block, and no other: the watches around
    it do not see them (what a program's cost tables read, emu.hw.cost, is recorded when
    its instructions run, emu.run.costreads)."""
    moved_, _ = _STATE.get()
    watch = Watch()
    token = _STATE.set((moved_, (watch,)))
    try:
        yield watch
    finally:
        _STATE.reset(token)


def context():
    """Where a read would be recorded now: (the watches, whether inside ``setup_only``).
    The same watches are the same tuple, so ``is`` tells a change of context."""
    return _STATE.get()[1], bool(_SETUP.get())


def register(reader, watches):
    """``reader`` (an object with ``flush()``) records reads made inside ``watches`` later:
    each is to tell it to when it ends."""
    ref = weakref.ref(reader)
    for w in watches:
        w.readers[id(reader)] = ref


def note_into(watches, names, setup=False):
    """Record ``names`` as read by ``watches`` (a context() of earlier), as a unit's
    set-up read them with ``setup``."""
    for w in watches:
        (w.setup if setup and w.unit else w.read).update(names)


def run_moved(function, changes, **arguments):
    """``function(**arguments)`` with the estimates ``changes`` moved: a sweep's run that
    moves its own estimates in its worker (``sweep.run(estimates.run_moved, [{"function":
    f, "changes": {...}, ...}])``), where a sweep inside ``moved`` would run in the caller."""
    with moved(changes):
        return function(**arguments)


def watch(unit=False):
    """``moved()`` with nothing moved: the block's reads, recorded."""
    return moved(unit=unit)


@contextlib.contextmanager
def setup_only(prefixes=("kernel:costs.",)):
    """A unit's set-up (emu.run.reuse): the estimates named ``prefixes...`` read inside
    the block are recorded as read by the watches around it, except that a unit's watch
    keeps them apart (``Watch.setup``), so that moving one of them reuses the unit's kept
    result instead of running it again. Exact only where the unit's result cannot depend
    on them, which the caller must make sure of: the kernel's fixed costs (the default)
    charged on one core go to the ledger's rows alone (``Ledger.fixed``: a task's clock
    moves only on a machine of several cores), never to the machine's clock, memory,
    caches or TLBs, and the model has no timer, so a result made of what the machine did
    after the block (differences of runs, their events) is the same whatever they are.
    tests/papers/test_dougan1999_entry.py moves them all and compares the results.

    The instruction costs of the guest code run inside the block are set-up reads too,
    on a machine whose clock carries nothing from one call to the next
    (emu.run.costreads.clock_free: one core, no posted write-backs or prefetch streams;
    every call restarts the clock with the memory system drained): the caller's result,
    made of what ran after the block, does not contain the block's cycles.
    tests/papers/test_dougan1999_entry.py moves those too."""
    token = _SETUP.set(tuple(prefixes))
    try:
        yield
    finally:
        _SETUP.reset(token)


def _record(watches, name, setup=False):
    """``name`` read by each of ``watches``; a unit's keeps it apart when it is a set-up
    read (``setup``, or inside ``setup_only`` and named by its prefixes)."""
    prefixes = _SETUP.get()
    setup = setup or bool(prefixes) and name.startswith(prefixes)
    for w in watches:
        (w.setup if setup and w.unit else w.read).add(name)


def note(name, setup=False):
    """Record that the run read the estimate ``name`` (``setup``: as a unit's set-up read
    it, ``setup_only``)."""
    _record(_STATE.get()[1], name, setup)


def value(name, nominal):
    """The estimate ``name``: its moved value here, else ``nominal``; recorded as read."""
    moved_, watches = _STATE.get()
    if watches:
        _record(watches, name)
    return moved_.get(name, nominal)


def moved_under(prefix):
    """The moved estimates whose names start with ``prefix`` ({name: value})."""
    return {k: v for k, v in _STATE.get()[0].items() if k.startswith(prefix)}


# ------------------------------------------------------------------ processor profiles

PROVENANCE = ("source", "unverified", "ranges")


def profile_tables(raw):
    """(dotted path, table) of every table of a profile's raw TOML that may list
    estimates: ``""`` (the profile's own keys), ``memory``, ``costs``, ``costs.mnemonics``,
    ``caches.L2`` ..."""
    out = [("", raw)]                  # the profile's own keys (clock_mhz ...)
    for level in raw.get("caches", []):
        if isinstance(level, dict):
            out.append((f"caches.{level.get('name', '?')}", level))

    def walk(prefix, table):
        for key, sub in table.items():
            if isinstance(sub, dict) and key not in PROVENANCE:
                path = f"{prefix}.{key}" if prefix else key
                out.append((path, sub))
                walk(path, sub)
    walk("", {k: v for k, v in raw.items() if k != "caches"})
    return out


def profile_estimates(raw):
    """Every estimate of a profile's raw TOML: [(name, nominal, low, high, why)], low,
    high and why None where its table gives no range."""
    name = raw.get("name", "?")
    out = []
    for path, table in profile_tables(raw):
        ranges = table.get("ranges", {})
        for key in table.get("unverified", ()):
            if key not in table:
                continue            # a listed key the table leaves at the model's default
            low, high, why = (tuple(ranges[key]) + (None, None, None))[:3] \
                if key in ranges else (None, None, None)
            out.append((f"{name}:{path}.{key}" if path else f"{name}:{key}", table[key], low,
                        high, why))
    return out


def apply_to_profile(raw):
    """A profile's raw TOML (as read) with its moved estimates set, and every estimate it
    holds recorded as read except its instruction costs (recorded when an instruction of
    that cost runs, emu.run.costreads, or when a caller looks one up: ``WatchedCosts``).
    Refuses a moved name the profile does not have."""
    name = raw.get("name", "?")
    moved_ = moved_under(f"{name}:")
    _, watches = _STATE.get()
    if not moved_ and not watches:
        return raw
    tables = dict(profile_tables(raw))
    for estimate, value_ in moved_.items():
        path, _, key = estimate[len(name) + 1:].rpartition(".")
        if path not in tables or key not in tables[path]:
            raise ValueError(f"{estimate}: profile {name} has no such value")
        tables[path][key] = value_
    if watches:
        for path, table in tables.items():
            if path == "costs" or path.startswith("costs."):
                continue
            for key in table.get("unverified", ()):
                note(f"{name}:{path}.{key}" if path else f"{name}:{key}")
    return raw


class WatchedCosts(dict):
    """A profile's [costs] (or [costs.mnemonics]) table that records an estimate as read
    when a cost is looked up: by a caller's own arithmetic (a chapter's share of a cost),
    or by ``emu.hw.cost`` making a program's tables, which keeps each instruction's reads
    for the machine to record when it runs (emu.run.costreads)."""

    def __init__(self, table, prefix):
        super().__init__(table)
        self.prefix = prefix
        self.estimated = frozenset(table.get("unverified", ()))

    def __getitem__(self, key):
        if key in self.estimated:
            note(self.prefix + key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        if key in self.estimated and key in self:
            note(self.prefix + key)
        return super().get(key, default)

    def __reduce__(self):
        return (_watched, (dict(self), self.prefix))


def _watched(table, prefix):
    return WatchedCosts(table, prefix)


def watched_costs(raw):
    """The profile's [costs] as ``WatchedCosts`` (its mnemonics' and dispatch tables too)."""
    name = raw.get("name", "?")
    costs = dict(raw.get("costs", {}))
    if isinstance(costs.get("mnemonics"), dict):
        costs["mnemonics"] = WatchedCosts(costs["mnemonics"], f"{name}:costs.mnemonics.")
    if isinstance(costs.get("dispatch"), dict):
        costs["dispatch"] = WatchedCosts(costs["dispatch"], f"{name}:costs.dispatch.")
    return WatchedCosts(costs, f"{name}:costs.")
