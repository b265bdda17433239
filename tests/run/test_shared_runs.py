"""Runs shared between processes (emu.run.reuse, EMU_SHARED_RUNS): the book's notebooks run
in parallel, and a unit two of them run with the same arguments and estimates runs once."""
from __future__ import annotations

import functools
import multiprocessing
import time
from pathlib import Path

import pytest

from emu.hw import estimates
from emu.run import reuse, sweep

RUNS = []                       # each call of the unit below, in this process


def square(x, log=None, pause=0.0):
    """The unit under test: its calls are counted (in RUNS, and in ``log``, a file, across
    processes); it reads one estimate."""
    RUNS.append(x)
    if log is not None:
        with open(log, "a") as f:
            f.write(f"{x}\n")
    time.sleep(pause)
    return {"square": x * x, "cpi": estimates.value("kernel:costs.CPI", 1.5)}


square.__module__ = "emu.tests_only"          # a library unit's name: shared
NAME = "emu.tests_only.square"


@pytest.fixture
def shared(tmp_path, monkeypatch):
    RUNS.clear()
    monkeypatch.setenv(reuse.SHARED_VARIABLE, str(tmp_path / "runs"))
    return tmp_path / "runs"


def test_without_the_folder_every_call_runs(monkeypatch):
    monkeypatch.delenv(reuse.SHARED_VARIABLE, raising=False)
    RUNS.clear()
    assert reuse.call(NAME, square, (3,)) == reuse.call(NAME, square, (3,))
    assert RUNS == [3, 3]


def test_a_unit_runs_once_then_is_read(shared):
    first = reuse.call(NAME, square, (3,))
    second = reuse.call(NAME, square, (3,))
    assert first == second == {"square": 9, "cpi": 1.5}
    assert RUNS == [3]
    assert second is not first                       # a fresh copy, as the memo gives
    assert len(list(shared.glob("*.pickle"))) == 1
    reuse.call(NAME, square, (4,))                   # other arguments: another run
    assert RUNS == [3, 4]


def test_moved_estimates_are_another_run(shared):
    reuse.call(NAME, square, (3,))
    with estimates.moved({"kernel:costs.CPI": 2.0}):
        moved = reuse.call(NAME, square, (3,))
    assert moved["cpi"] == 2.0 and RUNS == [3, 3]


def test_a_read_run_notes_the_estimates_it_read(shared):
    reuse.call(NAME, square, (3,))
    with estimates.watch() as watch:
        reuse.call(NAME, square, (3,))
    assert RUNS == [3]
    assert watch.read == {"kernel:costs.CPI"}


def test_only_the_librarys_plain_functions_are_shared(shared):
    reuse.call("tests.run.square", square, (3,))         # a name outside emu
    reuse.call("tests.run.square", square, (3,))
    reuse.call("emu.x.<locals>.square", square, (5,))    # made inside a function
    reuse.call("emu.x.<locals>.square", square, (5,))
    partial = functools.partial(square)                  # not a plain function
    reuse.call(NAME, partial, (6,))
    reuse.call(NAME, partial, (6,))
    assert RUNS == [3, 3, 5, 5, 6, 6]
    assert not list(shared.glob("*.pickle"))


def test_a_damaged_file_is_run_again(shared):
    reuse.call(NAME, square, (3,))
    (path,) = shared.glob("*.pickle")
    path.write_bytes(b"not a pickle")
    assert reuse.call(NAME, square, (3,))["square"] == 9
    assert RUNS == [3, 3]
    reuse.call(NAME, square, (3,))                       # written again, whole
    assert RUNS == [3, 3]


def test_a_memo_keeps_a_read_run_for_the_moves(shared):
    reuse.call(NAME, square, (3,))
    memo = reuse.Memo()
    with reuse.recording(memo):
        reuse.call(NAME, square, (3,))
        reuse.call(NAME, square, (3,))                   # now from the memo
    assert RUNS == [3]
    assert (memo.shared, memo.hits, memo.runs) == (1, 1, 0)
    assert [unit for unit, _, _ in memo.units()] == [NAME]


def test_a_sweeps_workers_share_their_points(shared, tmp_path):
    payload = sweep._dumps(square)                   # as a pool's worker gets it
    log = str(tmp_path / "log")
    first = sweep._call_pickled(payload, {"x": 7, "log": log})[0]     # (outcome, pid, cpu s)
    second = sweep._call_pickled(payload, {"x": 7, "log": log})[0]
    assert first == second == ("ok", {"square": 49, "cpi": 1.5})
    assert Path(log).read_text() == "7\n"


def _in_another_process(folder, log, x, pause, out):
    import os
    os.environ[reuse.SHARED_VARIABLE] = folder
    out.put(reuse.call(NAME, square, (x,), {"log": log, "pause": pause}))


def test_a_second_process_waits_for_the_first_and_reads_its_run(shared, tmp_path):
    log = str(tmp_path / "log")
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    first = context.Process(target=_in_another_process, args=(str(shared), log, 8, 1.0, out))
    first.start()
    deadline = time.monotonic() + 30
    while not Path(log).exists():                    # the first holds the lock and runs
        assert time.monotonic() < deadline
        time.sleep(0.01)
    second = context.Process(target=_in_another_process, args=(str(shared), log, 8, 1.0, out))
    second.start()
    results = [out.get(timeout=60), out.get(timeout=60)]
    first.join(30)
    second.join(30)
    assert results == [{"square": 64, "cpi": 1.5}] * 2
    assert Path(log).read_text() == "8\n"            # run once, by the first



def _cube(x):
    RUNS.append(x)
    return x ** 3


_cube.__module__ = "emu.tests_only"
cube = reuse.unit(_cube)                    # a unit of its own, as the chapters' runs are


def test_a_sweep_of_a_unit_does_not_wait_for_itself(shared):
    # a sweep's point of a @reuse.unit function is that unit (same name, same arguments):
    # wrapped twice, its shared run took its own lock twice and waited for ever
    assert cube.unit_name == "emu.tests_only._cube"
    assert _in_a_thread(lambda: sweep.run(cube, [{"x": 2}, {"x": 2}],
                                          executor="serial")) == [8, 8]
    assert RUNS == [2]
    assert _in_a_thread(lambda: sweep._call_pickled(sweep._dumps(cube), {"x": 2}))[0] == \
        ("ok", 8)
    assert RUNS == [2]


def test_a_lock_this_process_holds_is_not_waited_for(shared):
    path = shared / "a.pickle"

    def twice():
        with reuse._locked(path):
            with reuse._locked(path):
                return "held twice"
    assert _in_a_thread(twice) == "held twice"
    assert not reuse._HELD


def _in_a_thread(function, seconds=20):
    """``function()``'s result, or a failure if it has not returned in ``seconds`` (a
    process waiting for its own lock never would)."""
    import threading
    out = []
    thread = threading.Thread(target=lambda: out.append(function()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert out, f"no result in {seconds} s: waiting for itself?"
    return out[0]


def _hold(path, seconds, ready):
    with reuse._locked(path):
        ready.set()
        time.sleep(seconds)


def test_a_wait_for_another_process_has_an_end(shared):
    # another process holds a run's lock longer than a process waits: it goes on (and runs
    # the unit itself), never waits without end
    path = shared / "b.pickle"
    context = multiprocessing.get_context("fork")
    ready = context.Event()
    holder = context.Process(target=_hold, args=(path, 5.0, ready))
    holder.start()
    assert ready.wait(30)
    start = time.monotonic()
    with reuse._locked(path, wait_s=0.5):
        waited = time.monotonic() - start
    holder.join(30)
    assert 0.5 <= waited < 4.0


def test_the_builds_units_are_told_apart_by_name(shared):
    """benchmarks/build_units.py's table: each kept run under its unit's name, nominal runs
    apart from those with an estimate moved."""
    import importlib.util
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "build_units.py"
    spec = importlib.util.spec_from_file_location("build_units", path)
    build_units = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_units)
    reuse.call(NAME, square, (3,))
    reuse.call(NAME, square, (4,))
    with estimates.moved({"kernel:costs.CPI": 2.0}):
        reuse.call(NAME, square, (3,))
    nominal_s, moved_s, nominal_runs, moved_runs = build_units.unit_cpu(shared)[NAME]
    assert (nominal_runs, moved_runs) == (2, 1)
    assert nominal_s >= 0 and moved_s >= 0
