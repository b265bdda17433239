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
for the runs around it. Outside ``recording`` a unit is the plain function. An estimate a
unit read only in its set-up (``emu.hw.estimates.setup_only``: the kernel's fixed costs of
a LMBench program's spawn, fork and warm-up, which its measured runs cannot see) is kept as
``SETUP``: any value of it gives the kept result.

The reuse is exact as far as a unit's result depends only on its arguments and the
estimates it reads (emu.run.sweep's condition for a run: the same holds in a worker of a
pool). The scorecard's tests compare every claim re-run with and without it.

    memo = reuse.Memo()
    with reuse.recording(memo):
        claims = chapter.claims()                       # every unit run, and kept
    with reuse.recording(memo), estimates.moved({"ppc604:memory.latency": 40}):
        moved = chapter.claims()     # only the units that read ppc604's latency run

**Shared between processes** (``EMU_SHARED_RUNS``, a folder: the book's build sets it, one
per version of the sources, _ext/execution_cache.py): a unit of the library (a module-level
function of ``emu``, whose code the folder's version fixes) run with the same arguments and
moved estimates in two processes runs once. The book's notebooks run in parallel and several
run the same grid (Yun's Table 1 page and the scorecard): the first process to reach a run
takes its lock and runs it, the others wait for it and read its result (a pickle, with the
estimates it read, noted again where it is read; a wait has an end, LOCK_WAIT_S, after which
the waiting process runs the unit itself: the same result, twice). Unset (a reader's or student's run), a
unit is run as above.
"""
from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import inspect
import os
import pickle
import tempfile
import time
from contextvars import ContextVar
from pathlib import Path

from ..hw import estimates

#: the memo of this thread or task (``recording``), None: no reuse
_MEMO: ContextVar = ContextVar("emu_reuse_memo", default=None)
#: the CPU seconds of the units run inside the one running now (for its own share)
_INNER: ContextVar = ContextVar("emu_reuse_inner", default=None)
#: inside ``nominal_only``: the units run here are run only with the estimates as they are
_NOMINAL: ContextVar = ContextVar("emu_reuse_nominal", default=False)
#: an estimate's value in a kept run's key when it was not moved
AS_IT_IS = "as it is"
#: in place of its value, an estimate the unit read only in its set-up
#: (``emu.hw.estimates.setup_only``): any value of it gives the kept result
SETUP = "set-up only"
#: the folder where processes share units' results (see the module notes); unset: none
SHARED_VARIABLE = "EMU_SHARED_RUNS"
#: what else a run's result may depend on besides its arguments and estimates: the grader's
#: instruction ceiling (emu.run.limits)
_ENVIRONMENT = ("EMU_MAX_INSTRUCTIONS",)


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
        # units read from the shared folder (another process ran them), and their CPU there
        self.shared, self.shared_cpu_s = 0, 0.0
        # the keys of units run inside ``nominal_only``: no moved re-run runs them
        self.nominal = set()

    def find(self, key, moved):
        for memo in (self, self.base):
            for reads, blob, _ in (memo.entries.get(key, ()) if memo is not None else ()):
                if all(v == SETUP or moved.get(name, AS_IT_IS) == v
                       for name, v in reads.items()):
                    return reads, blob
        return None

    def keep(self, key, reads, blob, cpu_s):
        self.entries.setdefault(key, []).append((reads, blob, cpu_s))

    def nominal_cpu_s(self):
        """The CPU seconds of the units run inside ``nominal_only`` (no moved re-run runs
        them, whole or not)."""
        return sum(cpu for key, kept in self.entries.items() if key in self.nominal
                   for _, _, cpu in kept)

    def units(self):
        """[(unit's name, estimates read, cpu s)] of every kept run (of this memo only); a
        unit run inside ``nominal_only`` reads none here: no move re-runs it."""
        return [(key[0], [] if key in self.nominal else
                 sorted(n for n, v in reads.items() if v != SETUP), cpu)
                for key, kept in self.entries.items() for reads, _, cpu in kept]


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


@contextlib.contextmanager
def nominal_only():
    """Within the block, the units are ones a chapter runs only with its estimates as they
    are (say, runs that give a claim's spread alone, which a moved re-run does not read):
    ``Memo.units`` lists them as reading no estimate, so that a plan of moves counts none
    re-running them. What they compute is unchanged."""
    token = _NOMINAL.set(True)
    try:
        yield
    finally:
        _NOMINAL.reset(token)


def key(name, args, kwargs, function=None):
    """A unit's key: (its name, a digest of its arguments' pickle), or None when the
    arguments cannot be pickled (such a call is run, never kept). With ``function``, the
    arguments as it binds them, its defaults filled in: a call by position and one by
    keyword, or one that leaves a default out and one that gives it, are the same run (a
    notebook's sweep and a chapter's claims then share it)."""
    if function is not None:
        bound = _bound(function, args, kwargs)
        if bound is not None:
            args, kwargs = (), bound
    try:
        blob = pickle.dumps((args, sorted(kwargs.items())), protocol=4)
    except Exception:  # noqa: BLE001
        return None                     # an argument pickle cannot take
    return name, hashlib.sha256(blob).hexdigest()


@functools.lru_cache(maxsize=256)
def _signature(function):
    return inspect.signature(function)


def _bound(function, args, kwargs):
    """{parameter: value} of ``function(*args, **kwargs)`` with its defaults, the keyword
    arguments a ``**`` parameter takes among them; None when the call does not bind (the
    function then says why) or the function has no signature."""
    try:
        bound = _signature(function).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    out = {}
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            out.update(value)
        else:
            out[name] = value
    return out


def call(name, function, args=(), kwargs=None):
    """``function(*args, **kwargs)`` as the unit ``name``: its kept result when the memo
    holds one for these arguments and the estimates as they are moved now, else run
    (watched) and kept."""
    kwargs = kwargs or {}
    memo = _MEMO.get()
    folder = shared_folder(name) if shareable(function) else None
    if memo is None and folder is None:
        return function(*args, **kwargs)
    k = key(name, args, kwargs, function)
    if k is None:
        return function(*args, **kwargs)
    moved = estimates.current()
    if memo is not None and _NOMINAL.get():
        memo.nominal.add(k)
    found = memo.find(k, moved) if memo is not None else None
    if found is not None:
        reads, blob = found
        _noted(reads)
        memo.hits += 1
        return pickle.loads(blob)
    if folder is not None:
        return _shared_call(folder, memo, k, moved, function, args, kwargs)
    result, reads, blob, cpu, _ = _run(function, args, kwargs, moved)
    if memo is not None:
        _kept_in(memo, k, name, reads, blob, cpu)
    return result


def _noted(reads):
    for estimate, value in reads.items():   # the runs around it read them too
        estimates.note(estimate, setup=value == SETUP)


def _kept_in(memo, k, name, reads, blob, cpu):
    memo.runs += 1
    memo.ran.append(name)
    memo.cpu_s += cpu
    if blob is not None:
        memo.keep(k, reads, blob, cpu)


def _run(function, args, kwargs, moved):
    """Run a unit, watched: (its result, the estimates it read {name: moved value or
    AS_IT_IS}, the result's pickle or None, its own CPU s, its CPU s with the units it
    called)."""
    start = time.process_time()
    inner = [0.0]
    token = _INNER.set(inner)
    try:
        with estimates.watch(unit=True) as watch:
            result = function(*args, **kwargs)
    finally:
        _INNER.reset(token)
    cpu = time.process_time() - start
    outer = _INNER.get()
    if outer is not None:
        outer[0] += cpu
    total = cpu
    cpu -= inner[0]                     # its own share: the units it called are kept apart
    try:
        blob = pickle.dumps(result, protocol=4)
    except Exception:  # noqa: BLE001
        blob = None                     # a result pickle cannot take: not kept
    reads = {n: moved.get(n, AS_IT_IS) for n in watch.read}
    reads.update({n: SETUP for n in watch.setup - watch.read})
    return result, reads, blob, cpu, total


# --------------------------------------------------------------- shared between processes

def shared_folder(name):
    """The folder where the unit ``name`` is shared between processes, or None: when
    EMU_SHARED_RUNS is set and ``name`` is a module-level function of the library (whose
    code the folder's version of the sources fixes; a notebook's own function, or one made
    inside another, may differ between processes under one name)."""
    folder = os.environ.get(SHARED_VARIABLE)
    if not folder or not name.startswith("emu.") or "<" in name:
        return None
    return Path(folder)


def shareable(function):
    """Is ``function`` a plain function (not a partial, a method or an object that keeps
    state), so that its name and arguments say what it computes?"""
    return inspect.isfunction(function)


def _shared_path(folder, k, moved):
    environment = [(v, os.environ.get(v)) for v in _ENVIRONMENT]
    text = repr((k, sorted((n, repr(v)) for n, v in moved.items()), environment))
    return folder / (hashlib.sha256(text.encode()).hexdigest() + ".pickle")


#: the shared runs' lock files this process holds (a unit inside itself: held once)
_HELD = set()
#: how long a process waits for another's run of a unit before running it itself (the
#: same result, computed twice: never a wait without end, whatever units hold each other)
LOCK_WAIT_S = 900.0


@contextlib.contextmanager
def _locked(path, wait_s=None):
    """Hold ``path``'s lock file (another process holding it: wait, at most ``wait_s``,
    LOCK_WAIT_S by default, then go on without it). Re-entrant in a process: a second lock
    of one file from the same process would wait for itself."""
    if path in _HELD:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + (LOCK_WAIT_S if wait_s is None else wait_s)
    with open(path.with_suffix(".lock"), "a+b") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    held = False
                    break
                time.sleep(0.02)
        if held:
            _HELD.add(path)
        try:
            yield
        finally:
            if held:
                _HELD.discard(path)
                fcntl.flock(lock, fcntl.LOCK_UN)


def _read_shared(path):
    """(reads, blob, cpu s, total cpu s) kept at ``path``, or None (none, or damaged); the
    entry's last item, the unit's name (read by benchmarks/build_units.py), is left out."""
    try:
        with open(path, "rb") as f:
            entry = pickle.load(f)
        reads, blob, cpu, total, _ = entry
        return reads, blob, cpu, total
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError):
        return None


def _write_shared(path, entry):
    """``entry`` to ``path`` whole or not at all (a reader never sees half a file)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
    with os.fdopen(handle, "wb") as f:
        pickle.dump(entry, f, protocol=4)
    os.replace(temporary, path)


def _shared_call(folder, memo, k, moved, function, args, kwargs):
    """A unit through the shared folder: read if another process ran it, else run and
    written (under its lock, so that it runs once); kept in ``memo`` too when recording."""
    path = _shared_path(folder, k, moved)
    with _locked(path):
        entry = _read_shared(path)
        if entry is None:
            result, reads, blob, cpu, total = _run(function, args, kwargs, moved)
            if blob is not None:                # a result pickle cannot take: not shared
                _write_shared(path, (reads, blob, cpu, total, k[0]))
            if memo is not None:
                _kept_in(memo, k, k[0], reads, blob, cpu)
            return result
    reads, blob, cpu, total = entry
    _noted(reads)
    if memo is not None:
        memo.shared += 1
        memo.shared_cpu_s += total
        memo.keep(k, reads, blob, cpu)
    return pickle.loads(blob)


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
