"""emu.run.sweep: a grid of independent runs through an executor, in the grid's order, the same
results whatever runs them; a failed run named by its parameters; the progress bar."""
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from emu.run import sweep
from emu.book.explorers import cache_spec, flush_cost

L1D = cache_spec("L1D", 32768, 8, 32, "plru")      # the 750's own (its profile)
L2 = cache_spec("L2", 1048576, 2, 128)


def test_grid_is_every_combination_last_axis_fastest():
    assert sweep.grid(cpu=["a", "b"], n=[1, 2]) == [
        {"cpu": "a", "n": 1}, {"cpu": "a", "n": 2}, {"cpu": "b", "n": 1}, {"cpu": "b", "n": 2}]
    assert sweep.grid() == [{}]
    with pytest.raises(ValueError, match="grid axis 'cpu': give a list"):
        sweep.grid(cpu="ppc750")


def test_points_must_be_keyword_dicts():
    with pytest.raises(ValueError, match="point 1 must be a dict"):
        sweep.run(flush_cost, [{"pages": 1}, (1, 2)])
    with pytest.raises(ValueError, match="function must be callable"):
        sweep.run(42, [{}])
    assert sweep.run(flush_cost, []) == []


# One page written then flushed: every one of its 4096 / 32 = 128 lines is dirty in the L1
# D, so 128 write-backs; flushed again, none. 777 instructions either way (128 dcbst and 128
# icbi, each with its addi and bdnz: 768, and 9 around them).
FLUSH_POINTS = sweep.grid(state=["written", "flushed again"], pages=[1, 2], l1d=[L1D], l2=[L2])


def _check_flush_results(results):
    assert [r["l1d_writebacks_per_page"] for r in results] == [128, 128, 0, 0]
    assert all(r["instructions_per_page"] == 777 for r in results)


def test_serial_gives_the_hand_counted_results():
    _check_flush_results(sweep.run(flush_cost, FLUSH_POINTS, executor="serial"))


def test_processes_give_the_same_results_in_order_whatever_the_workers():
    serial = sweep.run(flush_cost, FLUSH_POINTS, executor="serial")
    for workers in (1, 2, 3):
        assert sweep.run(flush_cost, FLUSH_POINTS, workers=workers) == serial
    _check_flush_results(serial)


def test_any_concurrent_futures_executor():
    serial = sweep.run(flush_cost, FLUSH_POINTS, executor="serial")
    with ThreadPoolExecutor(2) as pool:
        assert sweep.run(flush_cost, FLUSH_POINTS, executor=pool) == serial


def test_a_dask_client():
    distributed = pytest.importorskip("distributed")
    serial = sweep.run(flush_cost, FLUSH_POINTS, executor="serial")
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        assert sweep.run(flush_cost, FLUSH_POINTS, executor=client) == serial
        with pytest.raises(sweep.SweepError, match=r"run 2 of 2 \(x=0\) failed: "
                                                   "ZeroDivisionError"):
            sweep.run(lambda x: 1 / x, [{"x": 1}, {"x": 0}], executor=client)


def test_a_function_defined_here_goes_to_the_processes_by_value():
    offset = 1000
    results = sweep.run(lambda a, b: a * b + offset, sweep.grid(a=[1, 2], b=[3, 4]), workers=2)
    assert results == [1003, 1004, 1006, 1008]


def test_frame_puts_parameters_first_then_the_results():
    df = sweep.frame(flush_cost, FLUSH_POINTS[:2], executor="serial")
    assert list(df.columns[:4]) == ["state", "pages", "l1d", "l2"]
    assert list(df["l1d_writebacks_per_page"]) == [128, 128]
    squares = sweep.frame(lambda n: n * n, sweep.grid(n=[2, 3]), executor="serial")
    assert list(squares["result"]) == [4, 9]
    with pytest.raises(ValueError, match="keys that are also parameters: n"):
        sweep.frame(lambda n: {"n": n}, [{"n": 1}], executor="serial")


@pytest.mark.parametrize("executor", ["serial", None])
def test_a_failed_run_is_named_by_its_parameters(executor):
    points = sweep.grid(pages=[1], l1d=[L1D, "L1D:32768:12:32"], l2=[L2])
    with pytest.raises(sweep.SweepError) as caught:
        sweep.run(flush_cost, points, executor=executor)
    error = caught.value
    assert "run 2 of 2 (pages=1, l1d='L1D:32768:12:32', l2='L2:1048576:2:128') failed: " \
           "ValueError: cache L1D: size 32768 is not a multiple of ways x line = 12 x 32" \
           in str(error)
    assert error.index == 1 and error.parameters == points[1]
    assert isinstance(error.error, ValueError) and error.__cause__ is error.error
    assert "flush_cost" in error.worker_traceback


class _Unpicklable(Exception):
    def __init__(self, a, b):            # pickle cannot make it again from its args
        super().__init__(f"{a} and {b}")


def _raise_unpicklable(n):
    raise _Unpicklable(n, "two")


def test_an_exception_that_cannot_come_back_is_reported_as_text():
    with pytest.raises(sweep.SweepError, match=r"run 1 of 1 \(n=7\) failed: "
                                               r"_Unpicklable: 7 and two") as caught:
        sweep.run(_raise_unpicklable, [{"n": 7}], workers=1)
    assert caught.value.error is None


def _die(n):
    if n == 2:
        os._exit(3)                       # as a crash in native code would end the worker
    return n


def test_a_worker_that_dies_ends_the_sweep_with_a_clear_error_and_the_next_sweep_works():
    with pytest.raises(sweep.SweepError, match="did not finish: a worker process died"):
        sweep.run(_die, sweep.grid(n=[1, 2, 3]), workers=1)
    assert sweep.run(_die, sweep.grid(n=[1, 3]), workers=1) == [1, 3]


class _SubmitOrder(ThreadPoolExecutor):
    """One thread, noting each point's pages as it is handed a run."""
    def __init__(self):
        super().__init__(1)
        self.order = []

    def submit(self, fn, payload, point):
        self.order.append(point["pages"])
        return super().submit(fn, payload, point)


def _ten_times(pages):
    return pages * 10


def test_length_starts_the_longest_first_and_keeps_the_results_in_the_points_order():
    # pages 1, 3, 2, 3 by length: the two 3s first in their own order (a stable sort), then 2,
    # then 1; the results in the points' order, from an executor and from serial runs
    points = [{"pages": n} for n in (1, 3, 2, 3)]
    with _SubmitOrder() as executor:
        results = sweep.run(_ten_times, points, length=lambda p: p["pages"], executor=executor)
    assert executor.order == [3, 3, 2, 1]
    assert results == [10, 30, 20, 30]
    assert sweep.run(_ten_times, points, length=lambda p: p["pages"], executor="serial") == results
    with pytest.raises(ValueError, match="length must be callable"):
        sweep.run(flush_cost, FLUSH_POINTS, length=3)


def test_bad_executor_and_workers_are_refused():
    with pytest.raises(ValueError, match="executor must be None"):
        sweep.run(flush_cost, FLUSH_POINTS, executor="threads")
    with pytest.raises(ValueError, match="workers must be a whole number from 1"):
        sweep.run(flush_cost, FLUSH_POINTS, workers=0)


def test_progress_bar_text_outside_jupyter_and_none_in_the_book_build(capsys, monkeypatch):
    monkeypatch.delenv("EMU_BOOK_BUILD", raising=False)
    sweep.run(lambda n: n, sweep.grid(n=[1, 2, 3]), executor="serial", progress=True,
              description="three runs")
    err = capsys.readouterr().err
    assert "three runs" in err and "0/3 " in err       # tqdm's text bar, 3 runs
    # the default: no bar for a sweep shorter than PROGRESS_DELAY_S
    sweep.run(lambda n: n, sweep.grid(n=[1, 2, 3]), executor="serial")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("EMU_BOOK_BUILD", "1")
    assert sweep._progress_bar(3, None, "x") is None
    sweep.run(lambda n: n, sweep.grid(n=[1, 2, 3]), executor="serial", progress=False)
    assert capsys.readouterr().err == ""


def test_a_script_on_standard_input_sweeps_in_the_caller():
    # multiprocessing's workers import the main script by its path; read from standard
    # input it is '<stdin>', no file, and every worker died (BrokenProcessPool)
    import subprocess
    import sys
    script = ("from emu import sweep\n"
              "print(sweep.run(pow, sweep.grid(base=[2, 3], exp=[2, 10]), progress=False))\n")
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[4, 1024, 9, 59049]"


def test_a_notebook_bar_is_hidden_not_closed_when_done():
    """A closed widget leaves the saved notebook an output naming a widget that no longer
    exists (JupyterLab: "model not found" on reopening, issue 36); a bar that is done is
    hidden and kept, one that failed stays shown."""
    pytest.importorskip("ipywidgets")
    from tqdm.notebook import tqdm as notebook_tqdm
    done = notebook_tqdm(total=2, leave=False, display=False)
    done.update(2)
    sweep._close(done)
    assert done.container.comm is not None                  # not closed: saved, restored
    assert done.container.layout.display == "none"
    failed = notebook_tqdm(total=2, leave=False, display=False)
    failed.update(1)
    sweep._close(failed)
    assert failed.container.layout.display != "none"
    assert failed.container.children[1].bar_style == "danger"


def _spin(seconds):
    """Burn ``seconds`` of this thread's CPU; return its process id."""
    import time
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    return os.getpid()


def test_the_workers_cpu_comes_back_with_their_results_and_is_counted_once():
    import time
    points = [{"seconds": 0.3}] * 2
    sweep.run(_spin, [{"seconds": 0.05}] * 4, workers=2)    # the workers' imports done
    before = sweep.workers_cpu_s()
    pids = sweep.run(_spin, points, workers=2)
    assert os.getpid() not in pids                  # the pool's workers ran them
    spent = sweep.workers_cpu_s() - before
    # each point's 0.3 s, and no more than its unpickling and bookkeeping (getrusage's
    # RUSAGE_CHILDREN saw none of it: the fork server's children are not this process's)
    assert 0.6 <= spent < 0.6 + 0.5
    # runs in this process are in its own CPU: not counted again
    for executor in ("serial", ThreadPoolExecutor(max_workers=2)):
        before, own = sweep.workers_cpu_s(), time.process_time()
        assert sweep.run(_spin, points, executor=executor) == [os.getpid()] * 2
        assert sweep.workers_cpu_s() == before
        assert time.process_time() - own >= 0.6
    # a failed run's CPU is counted too (it was spent)
    before = sweep.workers_cpu_s()
    with pytest.raises(sweep.SweepError):
        sweep.run(_raise_after_spinning, [{"seconds": 0.3}], workers=1)
    assert sweep.workers_cpu_s() - before >= 0.3


def _raise_after_spinning(seconds):
    _spin(seconds)
    raise ValueError("spun")


_FRAGMENTS = """
import sys
from emu.run import sweep
if sys.argv[1] == "fixed":
    assert sweep.fix_mmap_threshold()
def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) // 1024
big = bytearray(30 << 20)        # mmapped; freed, it raises glibc's threshold to 30 MB
del big
start, pins = rss_mb(), []
for mb in range(1, 21):          # 1..20 MB, each followed by a small block that stays
    block = bytearray(mb << 20)
    pins.append(bytearray(64 << 10))
    del block
print(rss_mb() - start)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux's /proc")
def test_a_worker_keeps_glibcs_malloc_thresholds_fixed():
    """A freed 30 MB block raises glibc's mmap threshold to 30 MB and its trim threshold
    to 60 MB; blocks of 1 to 20 MB made and freed one after the other, a small block kept
    after each, then come from the heap, and 24 MB of it stayed resident here (glibc
    2.3x); with both thresholds fixed (fix_mmap_threshold, what each pool worker does)
    each block is mmapped and given back when freed: 1 MB."""
    import subprocess
    import sys
    grown = {mode: int(subprocess.run([sys.executable, "-c", _FRAGMENTS, mode], check=True,
                                      capture_output=True, text=True).stdout)
             for mode in ("fixed", "default")}
    if grown["default"] < 10:
        pytest.skip("this C library gives the heap back without help")
    assert grown["fixed"] <= 2
