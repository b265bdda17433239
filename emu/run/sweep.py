"""Sweeps: many independent runs of one function, through an executor.

A sweep is a function and a list of keyword-argument dicts, one per run (``grid`` makes
the list from axes: profiles x variants x cores, or any others)::

    from emu import sweep
    points = sweep.grid(profile=["ppc750", "ppc604"], pages=[1, 8, 64])
    results = sweep.run(flush_cycles, points)            # one result per point, in order
    table = sweep.frame(flush_cycles, points)            # the same as a DataFrame

Where the runs go (``executor``):

* by default, processes on this machine (``concurrent.futures.ProcessPoolExecutor``, one
  worker per core, at most one per run). The workers are started by a fork server, not
  forked from the caller: a Jupyter kernel has threads, and emu's keystone workers are
  pipes that two forked copies of one process must not share;
* ``"serial"``: one after the other in this process (debugging, or runs too short to be
  worth a process);
* any ``concurrent.futures.Executor`` (a ThreadPoolExecutor, a pool of your own);
* a ``dask.distributed`` ``Client``: a class's or a researcher's cluster
  (``Client("tcp://scheduler:8786")``), or a local one (``Client(processes=False)``).

``length``, a function of a point giving how long it runs (any values that sort), starts the
longest first, so that the workers end together rather than one finishing a long run alone.
The results are in the order of the points whatever the executor, however many workers
it has and whatever ``length`` gives, and they do not depend on either, provided each run depends only on its arguments:
a run that builds its own ``Machine`` (or kernel) does. A function that keeps state between
calls in a process (a cache of benches that have already run) does not qualify.

The function is sent to the workers with cloudpickle (a dependency of dask), so a
function defined in a notebook works too. A run that raises stops the sweep: ``SweepError``
names the run's parameters, and carries the worker's exception (``.error``, also the
``__cause__``) and its traceback text.

Inside ``emu.hw.estimates.moved`` (an estimate moved, or the estimates a run reads
watched), a sweep runs in the caller, whatever the executor: the moved values and the
record of what was read belong to this process (the scorecard's ranges, emu.book.ranges,
run many such sweeps at once, each in a worker of their own). There each point is a unit of
``emu.run.reuse``: kept with the estimates it read, and reused while they are unmoved. In
the book's build (``EMU_SHARED_RUNS``) every point of a library function is also shared
between processes: a point another notebook has run is read, not run again.

The CPU a sweep's runs take in other processes (the pool's workers, a process executor's, a
dask cluster's) is not in this process's ``time.process_time()``, nor in
``resource.getrusage(RUSAGE_CHILDREN)`` (the pool's workers are the fork server's children,
never reaped by this process): each point sends back its own CPU with its result, and
``workers_cpu_s()`` sums them; ``cpu_s()`` is this process's CPU with its workers'.

A sweep that runs longer than ``PROGRESS_DELAY_S`` seconds shows a progress bar (tqdm's:
the notebook bar under Jupyter, a text bar elsewhere), except while the book is being built
(``EMU_BOOK_BUILD``, see emu.present.plot), where a bar would only clutter the page.
"""
from __future__ import annotations

import functools
import itertools
import os
import pickle
import sys
import time
import traceback
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..context import headless
from ..hw import estimates
from . import reuse

PROGRESS_DELAY_S = 2.0          # "longer than a few seconds": a bar only after this
SERIAL = "serial"


class SweepError(RuntimeError):
    """A run of a sweep failed. ``parameters``: its keyword arguments; ``index``: its place
    in the sweep (from 0); ``error``: the exception it raised (None if it could not be
    brought back from the worker); ``worker_traceback``: the traceback's text."""

    def __init__(self, message, index, parameters, error=None, worker_traceback=""):
        super().__init__(message)
        self.index, self.parameters = index, parameters
        self.error, self.worker_traceback = error, worker_traceback


_WORKERS_CPU = {"s": 0.0}       # the CPU s of the points run in other processes


def workers_cpu_s():
    """CPU seconds that this process's sweeps have had run in other processes (the pool's
    workers, a process executor's, a dask cluster's) since it started: each point's own
    ``time.process_time()`` in its worker, with that of the sweep workers it started in
    turn, sent back with its result. A point run in this process (serial, a thread pool,
    inside moved estimates) is in this process's own CPU instead, and not counted here."""
    return _WORKERS_CPU["s"]


def cpu_s():
    """This process's CPU seconds with its sweeps' workers': take the difference around
    a computation (the chapters' ``claims()``) for the CPU it cost wherever it ran."""
    return time.process_time() + workers_cpu_s()


def grid(**axes):
    """Every combination of the axes' values, as keyword-argument dicts, the last axis
    varying fastest: ``grid(cpu=["a", "b"], n=[1, 2])`` is ``[{"cpu": "a", "n": 1},
    {"cpu": "a", "n": 2}, {"cpu": "b", "n": 1}, {"cpu": "b", "n": 2}]``."""
    for name, values in axes.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise ValueError(f"grid axis {name!r}: give a list of values, not {values!r}")
    names = list(axes)
    return [dict(zip(names, combo)) for combo in itertools.product(*axes.values())]


def describe(parameters):
    """``a=1, b='x'``: a run's parameters as they would be written in a call."""
    return ", ".join(f"{k}={v!r}" for k, v in parameters.items())


def run(function, points, executor=None, workers=None, progress=None, description=None,
        length=None):
    """``[function(**p) for p in points]``, the runs through ``executor`` (see the module
    notes; None: processes on this machine, ``workers`` of them, default one per core).
    ``progress``: None shows a bar for a sweep longer than ``PROGRESS_DELAY_S`` seconds
    (never in the book build), True at once, False never; ``description`` labels it.
    ``length(point)``: how long a point runs; the longest are started first."""
    points = _checked(points)
    if not callable(function):
        raise ValueError(f"sweep.run: function must be callable, not {function!r}")
    if length is not None and not callable(length):
        raise ValueError(f"sweep.run: length must be callable, not {length!r}")
    if not points:
        return []
    if length is None:
        return _run(function, points, executor, workers, progress, description)
    # sorted() is stable, so points of equal length keep their order
    order = sorted(range(len(points)), key=lambda i: length(points[i]), reverse=True)
    started = _run(function, [points[i] for i in order], executor, workers, progress,
                   description)
    results = [None] * len(points)
    for i, result in zip(order, started):
        results[i] = result
    return results


def _run(function, points, executor, workers, progress, description):
    bar = _progress_bar(len(points), progress, description or _name(function))
    try:
        if executor == SERIAL or estimates.active():
            # inside emu.hw.estimates.moved / watch: the moved values and the record of
            # what the runs read live in this process, so the runs stay here too
            return _run_serial(function, points, bar)
        if executor is None and not _main_importable():
            return _run_serial(function, points, bar)
        payload = _dumps(function)
        if executor is None:
            return _run_pool(payload, points, workers, bar)
        if _is_dask_client(executor):
            return _run_dask(executor, payload, points, bar)
        if isinstance(executor, Executor):
            return _run_executor(executor, payload, points, bar)
        raise ValueError("sweep.run: executor must be None (processes), 'serial', a "
                         "concurrent.futures.Executor or a dask.distributed Client, not "
                         f"{executor!r}")
    finally:
        _close(bar)


def frame(function, points, **options):
    """``run`` as a DataFrame: one row per point, the parameters' columns first, then the
    result's (a dict's keys; anything else in a column ``result``)."""
    import pandas as pd
    points = _checked(points)
    rows = []
    for p, result in zip(points, run(function, points, **options)):
        values = result if isinstance(result, dict) else {"result": result}
        clash = set(p) & set(values)
        if clash:
            raise ValueError(f"sweep.frame: the result of ({describe(p)}) has keys that are "
                             f"also parameters: {', '.join(sorted(clash))}")
        rows.append({**p, **values})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------- the workers

def _outcome(function, parameters):
    """What a worker sends back: ("ok", result) or ("error", exception or None, text of
    the exception, traceback). Never raises: an exception that cannot be pickled (a class
    with its own __init__ arguments) would otherwise break the pool."""
    try:
        return ("ok", function(**parameters))
    except Exception as error:        # noqa: BLE001: reported with the run's parameters
        text = f"{type(error).__name__}: {error}"
        tb = traceback.format_exc()
        try:
            pickle.loads(pickle.dumps(error))
        except Exception:             # noqa: BLE001: sent as text only
            error = None
        return ("error", error, text, tb)


def _call_pickled(payload, parameters):
    """The worker's side: unpickle the function, run it on the parameters (a unit of
    emu.run.reuse: shared with other processes where the book's build shares runs). Returns
    (its outcome, this process's id, the CPU s it took here and in the sweep workers it
    started)."""
    start = cpu_s()
    outcome = _outcome(_as_unit(_loads(payload)), {"kwargs": parameters})
    return outcome, os.getpid(), cpu_s() - start


def _counted(reply):
    """A point's outcome from ``_call_pickled``'s reply, its CPU added to the workers' when
    another process ran it (this process's own CPU has it otherwise)."""
    outcome, pid, cpu = reply
    if pid != os.getpid():
        _WORKERS_CPU["s"] += cpu
    return outcome


def _as_unit(function):
    """``function`` called as a unit of emu.run.reuse (its name the unit's): f(kwargs=p).
    A function marked ``@reuse.unit`` is one already, under the same name and arguments:
    wrapped again, its run would be kept twice, and a shared run would wait for itself."""
    if getattr(function, "unit_name", None):
        return lambda kwargs: function(**kwargs)
    return functools.partial(reuse.call, reuse.function_name(function), function, ())


def _dumps(function):
    try:
        import cloudpickle
    except ImportError:                # plain pickle: importable functions only
        return pickle.dumps(function)
    return cloudpickle.dumps(function)


def _loads(payload):
    return pickle.loads(payload)


# ---------------------------------------------------------------------- the executors

def _run_serial(function, points, bar):
    results = []
    unit = _as_unit(function)
    for i, p in enumerate(points):
        # each point a unit (emu.run.reuse): kept, and reused, while a memo records
        results.append(_unwrap(_outcome(unit, {"kwargs": p}), i, points))
        _advance(bar)
    return results


def _main_importable():
    """Can the workers import the caller's main script? They do, by its path, as
    multiprocessing's do; a script read from standard input (``python - <<EOF``) names a
    file, ``<stdin>``, that does not exist, and its sweeps run in the caller instead."""
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    return path is None or os.path.isfile(path)


def _pool_context():
    """Workers from a fork server: clean processes (no copy of the caller's threads or
    keystone pipes), quick to start once the server has imported emu.run.machine."""
    import multiprocessing
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["emu.run.machine"])
    return ctx


_POOL = {"pool": None, "workers": 0}


def _pool(workers):
    """The process pool of this process, kept between sweeps: its workers keep what they
    loaded (the modules, keystone's workers and the encodings it gave), which a run must
    not depend on and does not (each builds its own Machine), so later sweeps start at
    once. Made again for another number of workers, or after a worker died."""
    pool = _POOL["pool"]
    if pool is not None and (_POOL["workers"] != workers or getattr(pool, "_broken", False)):
        pool.shutdown(wait=False, cancel_futures=True)
        pool = None
    if pool is None:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(),
                                   initializer=_start_worker)
        _POOL.update(pool=pool, workers=workers)
    return pool


def _start_worker():
    """A pool's worker, before its first point: SIGINT ignored, glibc's mmap threshold
    fixed."""
    _ignore_interrupts()
    fix_mmap_threshold()


def _ignore_interrupts():
    """In a worker: Ctrl-C, or Jupyter's "interrupt kernel" (SIGINT to the kernel's process
    group, workers included), stops the sweep in the caller, which cancels the runs not
    started; a worker killed by it would only break the pool (and print a traceback)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: glibc's mallopt parameters (M_TRIM_THRESHOLD, M_MMAP_THRESHOLD) and the value a worker
#: keeps for both: glibc's own starting one
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, MALLOC_THRESHOLD = -1, -3, 128 << 10


def fix_mmap_threshold():
    """Keep glibc's mmap and trim thresholds where they start (mallopt). By default glibc
    raises the mmap threshold each time a block it had mmapped is freed, up to 32 MB (and
    the trim threshold to twice that), so that later blocks of that size come from the
    heap, which it then seldom gives back: a worker that makes and frees Machine after
    Machine (each with its RAM and the model's arrays) kept their freed blocks, and Dougan
    1999's ranges workers grew to 3.9-4.3 GB (session 28). A worker forked from the fork
    server inherits its raised values, so both are set. Returns whether they were (not on
    a C library without mallopt)."""
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        return all(bool(libc.mallopt(p, MALLOC_THRESHOLD))
                   for p in (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD))
    except (OSError, AttributeError):
        return False


def _run_pool(payload, points, workers, bar):
    if workers is None:
        workers = os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"sweep.run: workers must be a whole number from 1, not {workers!r}")
    return _run_executor(_pool(workers), payload, points, bar)


def _run_executor(executor, payload, points, bar):
    from concurrent.futures import FIRST_COMPLETED, wait
    futures = [executor.submit(_call_pickled, payload, p) for p in points]
    index = {f: i for i, f in enumerate(futures)}
    results = [None] * len(points)
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in sorted(done, key=index.get):
                results[index[f]] = _unwrap(_counted(_result_of(f, index[f], points)),
                                            index[f], points)
                _advance(bar)
        return results
    except BaseException:
        for f in futures:                 # the runs not started yet; running ones end
            f.cancel()
        raise


def _result_of(future, i, points):
    """A future's outcome; a worker process that died becomes an error of its run."""
    try:
        return future.result()
    except BrokenProcessPool as error:
        raise SweepError(
            f"sweep: run {i + 1} of {len(points)} ({describe(points[i])}) did not finish: "
            f"a worker process died while running it or another run ({error}). A crash "
            "in native code ends the process, not just the run; and a script that starts "
            "a sweep must do so under `if __name__ == \"__main__\":` (the workers import "
            "the script, as multiprocessing's do)", i, points[i], error) from error


def _is_dask_client(executor):
    distributed = sys.modules.get("distributed")
    return distributed is not None and isinstance(executor, distributed.Client)


def _run_dask(client, payload, points, bar):
    from distributed import as_completed
    futures = [client.submit(_call_pickled, payload, p, pure=False) for p in points]
    index = {f.key: i for i, f in enumerate(futures)}
    results = [None] * len(points)
    try:
        for f in as_completed(futures):
            i = index[f.key]
            results[i] = _unwrap(_counted(f.result()), i, points)
            _advance(bar)
    except BaseException:
        client.cancel(futures)
        raise
    return results


def _unwrap(outcome, i, points):
    if outcome[0] == "ok":
        return outcome[1]
    _, error, text, tb = outcome
    raise SweepError(f"sweep: run {i + 1} of {len(points)} ({describe(points[i])}) "
                     f"failed: {text}", i, points[i], error, tb) from error


# ---------------------------------------------------------------------------- checks

def _checked(points):
    points = list(points)
    for i, p in enumerate(points):
        if not isinstance(p, dict) or not all(isinstance(k, str) for k in p):
            raise ValueError(f"sweep: point {i} must be a dict of keyword arguments, "
                             f"not {p!r}")
    return points


def _name(function):
    return getattr(function, "__name__", None) or type(function).__name__


# --------------------------------------------------------------------------- progress

def _progress_bar(total, progress, description):
    """A tqdm bar, or None: none when asked for none, in the book build, or without tqdm.
    ``progress=None`` delays the bar: a sweep that ends sooner shows none."""
    if progress is False or (progress is None and (headless() or estimates.active())):
        return None                     # (a sweep inside moved estimates is part of a run)
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    delay = 0 if progress else PROGRESS_DELAY_S
    return tqdm(total=total, desc=description, unit="run", delay=delay, leave=False)


def _close(bar):
    """Close the bar. A notebook bar (an ipywidget) is hidden, not closed: tqdm's
    ``leave=False`` closes its widget, and the cell's output, saved with the notebook, then
    names a widget that no longer exists, which JupyterLab shows on reopening as "Error
    displaying widget: model not found"; hidden, the widget is saved with the others and
    restored, invisible. A sweep that failed leaves its bar red, as tqdm shows it."""
    if bar is None:
        return
    container = getattr(bar, "container", None)
    if container is not None:
        bar.leave = True
    bar.close()
    if container is not None and bar.n >= (bar.total or 0):
        container.layout.display = "none"


def _advance(bar):
    if bar is not None:
        bar.update(1)
