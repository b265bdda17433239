"""Runs kept for reuse while estimates move: a chapter's claims re-run per estimate re-run
only the runs that read it.

The scorecard's ranges (``emu.book.ranges``) re-run a chapter's claims with one estimate
(or a group of them) moved. A chapter's claims come from several independent runs (a
LMBench program on one CPU, a build on another), and most of them do not read the moved
estimate: their results are the same as without the move. A **unit** is such a run: a
function marked ``@reuse.unit`` in a chapter's module, or a point of ``emu.run.sweep``
(run in the caller whenever estimates are moved or watched). Inside ``recording(memo)``
every unit's result is kept in ``memo`` under its name and arguments with the estimates it
read (``emu.hw.estimates.watch``) and the moved values they had; a later call with the same
name and arguments, where each of those estimates has the value it had then, gives the kept
result (a fresh copy: its pickle) instead of running, and records the same estimates as read
for the runs around it. Outside ``recording`` a unit is the plain function.

The reuse is exact as far as a unit's result depends only on its arguments and the
estimates it reads (emu.run.sweep's condition for a run: the same holds in a worker of a
pool). The scorecard's tests compare every claim re-run with and without it.

    memo = reuse.Memo()
    with reuse.recording(memo):
        claims = chapter.claims()                       # every unit run, and kept
    with reuse.recording(memo), estimates.moved({"ppc604:memory.latency": 40}):
        moved = chapter.claims()     # only the units that read ppc604's latency run
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import pickle
import time
from contextvars import ContextVar

from ..hw import estimates

#: the memo of this thread or task (``recording``), None: no reuse
_MEMO: ContextVar = ContextVar("emu_reuse_memo", default=None)
#: the CPU seconds of the units run inside the one running now (for its own share)
_INNER: ContextVar = ContextVar("emu_reuse_inner", default=None)
#: an estimate's value in a kept run's key when it was not moved
AS_IT_IS = "as it is"


class Memo:
    """Kept runs: {key: [(reads, pickled result, cpu s)]}, a key a unit's name and
    arguments, ``reads`` {estimate: its moved value or ``AS_IT_IS``} when it ran, ``cpu s``
    its own CPU time (without the units it called); several entries for one key (the same
    run under other moves). ``base``: another Memo read
    before this one and never written (a worker's copy of the nominal runs). ``hits``,
    ``runs`` count the calls reused and run; ``ran`` names the units run, ``cpu_s`` their
    CPU time."""

    def __init__(self, base=None):
        self.entries = {}
        self.base = base
        self.hits, self.runs, self.cpu_s = 0, 0, 0.0
        self.ran = []

    def find(self, key, moved):
        for memo in (self, self.base):
            for reads, blob, _ in (memo.entries.get(key, ()) if memo is not None else ()):
                if all(moved.get(name, AS_IT_IS) == v for name, v in reads.items()):
                    return reads, blob
        return None

    def keep(self, key, reads, blob, cpu_s):
        self.entries.setdefault(key, []).append((reads, blob, cpu_s))

    def units(self):
        """[(unit's name, estimates read, cpu s)] of every kept run (of this memo only)."""
        return [(key[0], sorted(reads), cpu) for key, kept in self.entries.items()
                for reads, _, cpu in kept]


@contextlib.contextmanager
def recording(memo):
    """Within the block, units keep their results in ``memo`` and reuse those it holds."""
    if not isinstance(memo, Memo):
        raise TypeError(f"reuse.recording takes a reuse.Memo, not {memo!r}")
    token = _MEMO.set(memo)
    try:
        yield memo
    finally:
        _MEMO.reset(token)


def key(name, args, kwargs):
    """A unit's key: (its name, a digest of its arguments' pickle), or None when the
    arguments cannot be pickled (such a call is run, never kept)."""
    try:
        blob = pickle.dumps((args, sorted(kwargs.items())), protocol=4)
    except Exception:  # noqa: BLE001
        return None                     # an argument pickle cannot take
    return name, hashlib.sha256(blob).hexdigest()


def call(name, function, args=(), kwargs=None):
    """``function(*args, **kwargs)`` as the unit ``name``: its kept result when the memo
    holds one for these arguments and the estimates as they are moved now, else run
    (watched) and kept."""
    kwargs = kwargs or {}
    memo = _MEMO.get()
    if memo is None:
        return function(*args, **kwargs)
    k = key(name, args, kwargs)
    if k is None:
        return function(*args, **kwargs)
    moved = estimates.current()
    found = memo.find(k, moved)
    if found is not None:
        reads, blob = found
        for estimate in reads:
            estimates.note(estimate)        # the runs around it read them too
        memo.hits += 1
        return pickle.loads(blob)
    start = time.process_time()
    inner = [0.0]
    token = _INNER.set(inner)
    try:
        with estimates.watch() as watch:
            result = function(*args, **kwargs)
    finally:
        _INNER.reset(token)
    cpu = time.process_time() - start
    outer = _INNER.get()
    if outer is not None:
        outer[0] += cpu
    cpu -= inner[0]                     # its own share: the units it called are kept apart
    memo.runs += 1
    memo.ran.append(name)
    memo.cpu_s += cpu
    try:
        blob = pickle.dumps(result, protocol=4)
    except Exception:  # noqa: BLE001
        return result                   # a result pickle cannot take: not kept
    memo.keep(k, {n: moved.get(n, AS_IT_IS) for n in watch.read}, blob, cpu)
    return result


def unit(function):
    """Mark a chapter's run as a unit (see the module notes): named by its module and
    qualified name."""
    name = f"{function.__module__}.{function.__qualname__}"

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return call(name, function, args, kwargs)
    wrapper.unit_name = name
    return wrapper


def function_name(function):
    """The unit name of a sweep's function: its module and qualified name."""
    return f"{getattr(function, '__module__', '?')}." \
           f"{getattr(function, '__qualname__', None) or type(function).__name__}"
