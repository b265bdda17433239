"""emu.hw.estimates: moving an estimate changes what the model charges, by hand-checkable
cycles, and only inside the block; watching records what a run read."""
import pytest

from emu.hw import estimates
from emu.hw.profile import load
from emu.kernel import costs
from emu.run import sweep
from emu.run.machine import Machine

SYNCS = "f:\n sync\n sync\n sync\n blr\n"


def sync_cycles():
    m = Machine("ppc750")
    m.load(SYNCS)
    return m.call("f").cycles


def test_a_moved_instruction_cost_changes_the_cycles_by_hand_and_is_undone():
    before = sync_cycles()
    assert load("ppc750").costs["mnemonics"]["sync"] == 3
    with estimates.moved({"ppc750:costs.mnemonics.sync": 10}):
        moved = sync_cycles()
    assert moved - before == 3 * (10 - 3)            # three syncs, 7 cycles more each
    assert sync_cycles() == before


def test_a_moved_kernel_cost_and_cpi_by_hand():
    assert costs.cycles("fork") == round(2500 * 1.5)
    with estimates.moved({"kernel:costs.fork": 1000}):
        assert costs.cycles("fork") == 1500
        with estimates.moved({"kernel:costs.CPI": 2.0}):    # on top of the outer move
            assert costs.cycles("fork") == 2000
            assert costs.cycles("exit") == 3000
    assert costs.cycles("fork") == 3750
    assert costs.cycles("syscall") == 140                    # measured: no estimate


def test_a_move_is_undone_when_the_block_raises():
    with pytest.raises(RuntimeError):
        with estimates.moved({"ppc750:memory.latency": 100}):
            assert load("ppc750").memory_latency == 100
            raise RuntimeError
    assert load("ppc750").memory_latency == 80
    assert not estimates.active()


def test_a_moved_name_the_profile_lacks_is_refused():
    with estimates.moved({"ppc750:memory.nonsense": 1}):
        with pytest.raises(ValueError, match="no such value"):
            load("ppc750")
    with pytest.raises(ValueError, match="name"):
        with estimates.moved({"latency": 1}):
            pass


def test_a_moved_image_touches_more_pages():
    from emu.kernel.workloads import CC1
    touched = dict((a, n) for a, n, _ in CC1.touches())
    with estimates.moved({"kernel:image.cc1": 2.0}):
        doubled = dict((a, n) for a, n, _ in CC1.touches())
    text = min(touched)
    assert doubled[text] == 2 * touched[text] == 300


def _memory_latency():
    return load("ppc750").memory_latency


def test_a_sweep_inside_a_move_runs_here_with_the_move():
    points = [{}, {}]
    with estimates.moved({"ppc750:memory.latency": 64}):
        assert sweep.run(_memory_latency, points) == [64, 64]
    assert sweep.run(_memory_latency, points, executor="serial") == [80, 80]


def test_each_run_of_a_sweep_moves_its_own_estimates_in_its_worker():
    points = [{"function": _memory_latency, "changes": {"ppc750:memory.latency": v}}
              for v in (64, 100)] + [{"function": _memory_latency, "changes": {}}]
    assert sweep.run(estimates.run_moved, points, workers=2) == [64, 100, 80]
    assert not estimates.active() and _memory_latency() == 80


def test_watch_records_the_estimates_a_run_reads():
    with estimates.watch() as w:
        sync_cycles()
    assert "ppc750:memory.latency" in w.read
    assert "ppc750:caches.L2.hit_latency" in w.read
    assert "ppc750:costs.mnemonics.sync" in w.read           # the program holds a sync
    assert "ppc750:costs.mnemonics.dcbz" not in w.read       # and no dcbz
    assert not any(name.startswith(("ppc604:", "kernel:")) for name in w.read)
    with estimates.watch() as w:
        costs.cycles("exec")
    assert w.read == {"kernel:costs.exec", "kernel:costs.CPI"}


def test_tasks_on_several_cores_see_the_move_and_are_watched():
    # each core's Python runs in a greenlet of its own, which starts in an empty context
    # unless run_tasks hands it the caller's
    from emu.run.parallel import run_tasks
    m = Machine("ppc750", cores=2)
    m.load(SYNCS)

    def task(t):
        t.call("f")
        return costs.cycles("fork")

    with estimates.moved({"kernel:costs.fork": 1000}) as w:
        assert run_tasks(m, [task, task]) == [1500, 1500]
    assert "kernel:costs.fork" in w.read
    assert run_tasks(m, [task, task]) == [3750, 3750]


def test_every_estimate_of_every_profile_has_its_range_and_loads_at_both_ends():
    from emu.book.ranges import catalog
    from emu.hw.profile import names
    table = catalog()                  # refuses an estimate without low, high and why
    for name in names():
        raw = load(name).raw
        for path, sub in estimates.profile_tables(raw):
            extra = set(sub.get("ranges", {})) - set(sub.get("unverified", ()))
            assert not extra, f"{name} {path}: ranges of values not listed as estimates"
    profiles = set(names())
    for e in table.values():
        if e.name.split(":")[0] not in profiles:   # the kernel's and the chapters' own
            continue                                 # (their modules' tests move them)
        assert type(e.low) is type(e.value) or isinstance(e.value, (int, float)), e
        for side in (e.low, e.high):
            with estimates.moved({e.name: side}):
                load(e.name.split(":")[0])         # a value the model can take


def test_a_programs_kept_tables_note_the_estimates_they_read_when_run_and_follow_a_move():
    # emu.hw.cost keeps a program's tables for the next machine that loads it: loading
    # notes no instruction cost (emu.run.costreads notes them as they run), and a run of
    # the kept tables notes the same as the first; a moved cost must not take them
    reads = []
    for _ in range(2):
        with estimates.watch() as loaded:
            m = Machine("ppc750")
            m.load(SYNCS)
        assert not {n for n in loaded.read if ":costs." in n}
        with estimates.watch() as w:
            m.call("f")
        reads.append({n for n in w.read if ":costs." in n})
    assert reads[0] == reads[1] == {"ppc750:costs.mnemonics.sync"}
    before = sync_cycles()
    with estimates.moved({"ppc750:costs.mnemonics.sync": 10}):
        assert sync_cycles() - before == 3 * (10 - 3)
    assert sync_cycles() == before


@pytest.mark.parametrize("name", ["cortex-a9", "power4", "pentium4"])
def test_the_tie_order_of_a_multicore_profile_is_an_estimate_the_scorecard_can_move(name):
    """Which of several cores woken at one cycle goes first is no document's: each
    multi-core profile marks it an estimate (false: the lower-numbered core; true: hashed),
    a Machine takes it from the profile, a move to true gives the hashed order, and a
    value that is not true or false is refused."""
    from emu.book.ranges import catalog
    estimate = catalog()[f"{name}:smp.hashed_ties"]
    assert (estimate.value, estimate.low, estimate.high) == (False, False, True)
    assert Machine(name, cores=2).ties == "lowest core"
    with estimates.moved({estimate.name: True}) as w:
        assert Machine(name, cores=2).ties == "hashed"
    assert estimate.name in w.read
    assert Machine(name, cores=2).ties == "lowest core"
    with estimates.moved({estimate.name: 1}), pytest.raises(ValueError, match="true or false"):
        Machine(name, cores=2)
