"""emu.run.costreads: an instruction's cost estimate is read by the runs that execute it,
not by those that only load it; a cost the run never executed cannot change its result,
and a unit that never executed it is reused when it moves (emu.run.reuse)."""
from __future__ import annotations

import gc

import pytest

from emu.book import ranges
from emu.hw import cost, estimates, profile
from emu.isa.assemble import assemble
from emu.run import reuse
from emu.run.machine import Machine

# f runs a sync; g a dcbz; neither runs the other's
TWO = "f:\n sync\n blr\ng:\n dcbz 0, 3\n blr\n"
SYNC, DCBZ = "ppc750:costs.mnemonics.sync", "ppc750:costs.mnemonics.dcbz"


def costs_read(watch):
    return {n for n in watch.read if ":costs." in n}


def test_a_cost_is_read_by_the_run_that_executes_it_and_not_by_the_load():
    with estimates.watch() as loaded:
        m = Machine("ppc750")
        m.load(TWO)
    assert costs_read(loaded) == set()
    with estimates.watch() as ran_f:
        m.call("f")
    with estimates.watch() as ran_g:
        m.call("g", m.alloc(4096))
    assert costs_read(ran_f) == {SYNC}
    assert costs_read(ran_g) == {DCBZ}
    with estimates.watch() as again:          # run again: noted again in a new watch
        m.call("f")
    assert costs_read(again) == {SYNC}


def _f_cycles():
    m = Machine("ppc750")
    m.load(TWO)
    return m.call("f").cycles


_f_unit = reuse.unit(_f_cycles)


def test_moving_a_cost_the_run_never_executes_leaves_it_and_reuses_its_unit():
    nominal = _f_cycles()
    with estimates.moved({DCBZ: 40}):
        assert _f_cycles() == nominal                    # dcbz is loaded, never run
    with estimates.moved({SYNC: 10}):
        assert _f_cycles() == nominal + 10 - 3           # one sync, 3 -> 10 cycles
    memo = reuse.Memo()
    with reuse.recording(memo):
        assert _f_unit() == nominal
        with estimates.moved({DCBZ: 40}):
            assert _f_unit() == nominal
        assert (memo.runs, memo.hits) == (1, 1)          # reused
        with estimates.moved({SYNC: 10}):
            assert _f_unit() == nominal + 7
        assert (memo.runs, memo.hits) == (2, 1)          # run again
    [(_, reads, _)] = memo.units()[:1]
    assert SYNC in reads and DCBZ not in reads


def test_a_machine_kept_alive_by_a_cycle_records_its_reads_when_the_watch_ends():
    with estimates.watch() as w:
        m = Machine("ppc750")
        m.load(TWO)
        m.itself = m                            # collected only by the cycle collector
        m.call("f")
        del m
    assert costs_read(w) == {SYNC}
    gc.collect()


def test_each_watch_gets_the_reads_of_the_runs_made_inside_it():
    m = Machine("ppc750")
    m.load(TWO)
    with estimates.watch() as outer:
        m.call("g", m.alloc(4096))
        with estimates.watch() as inner:
            m.call("f")
        m.call("f")
    assert costs_read(inner) == {SYNC}
    assert costs_read(outer) == {SYNC, DCBZ}


def test_a_watch_a_task_of_several_cores_enters_sees_the_runs_after_it():
    from emu.run.parallel import run_tasks
    m = Machine("ppc750", cores=2)
    m.load(TWO)
    inside = []

    def task(t):
        if t.core == 0:
            with estimates.watch() as w:
                t.call("f")
            inside.append(w)
        else:
            t.call("g", m.alloc(4096))

    with estimates.watch() as outer:
        run_tasks(m, [task, task])
    assert SYNC in costs_read(inside[0])          # its own call's sync (and maybe more)
    assert costs_read(outer) == {SYNC, DCBZ}


def test_a_program_loaded_over_code_that_ran_records_that_codes_reads_first():
    m = Machine("ppc750")
    p = m.load(TWO)
    with estimates.watch() as w:
        m.call("f")
        m.load("h:\n isync\n blr\n", at=p.base)     # over f's sync
    assert costs_read(w) == {SYNC}


def _set_up_and_measure(cpu):
    m = Machine(cpu)
    m.load(TWO)
    with estimates.setup_only():
        m.call("f")
    return m.call("g", m.alloc(4096)).cycles


@pytest.mark.parametrize("cpu, set_up", [("ppc604", True), ("ppc750", False)])
def test_code_run_in_a_set_up_is_a_set_up_read_where_the_clock_carries_nothing(cpu, set_up):
    """The 604's clock carries nothing from one call to the next: the sync run in the
    set-up is a set-up read (moving it reuses the unit). The 750's posted write-backs
    (its bus's write buffers) stay in flight across calls: an ordinary read."""
    sync = f"{cpu}:costs.mnemonics.sync"
    with estimates.watch(unit=True) as w:
        _set_up_and_measure(cpu)
    assert (sync in w.setup, sync in w.read) == (set_up, not set_up)
    assert f"{cpu}:costs.mnemonics.dcbz" in w.read
    with estimates.watch() as plain:                 # a watch not a unit's reads it all
        _set_up_and_measure(cpu)
    assert sync in plain.read


def test_a_class_cost_reaches_the_instructions_its_dispatch_group_can_change():
    """A two-issue profile whose load cost is an estimate: the lwz's cost can change the
    groups after it up to the branch that ends them, and the code after a branch target
    starts afresh. By hand: addi opens a group (1), lwz joins it (0), addi opens the next
    (1: two a group), b joins it (0) and ends it, li (1), the target li (1), addi (0)."""
    raw = {"name": "toy", "costs": {"default": 1, "load": 1, "store": 1, "branch": 1,
                                    "unverified": ["load"], "dispatch": {"width": 2}}}
    costs = estimates.watched_costs(raw)
    program = assemble("addi r3, r4, 1\nlwz r5, 0(r6)\naddi r7, r8, 1\nb 1f\nli r3, 0\n"
                       "1: li r4, 0\naddi r9, r9, 1\n", "ppc32", 0x1000)
    t = cost.tables("ppc32", costs, program.code, 0x1000)
    at = [0, 4, 8, 12, 16, 20, 24]
    assert [int(t.cycles[k]) for k in at] == [1, 0, 1, 0, 1, 1, 0]
    assert [t.read_sets[t.reads[k]] for k in at] == \
        [frozenset()] + [frozenset({"toy:costs.load"})] + [frozenset()] * 5
    assert [int(t.segments[k]) for k in at] == [0, 0, 0, 0, 16, 20, 20]


@pytest.mark.parametrize("machine", ["603 page table", "604"])
def test_a_moved_cost_changes_only_instructions_whose_reach_reads_it(machine):
    """Every instruction-cost estimate of the profile, at its low and its high, on the
    routines Dougan 1999's kernel loads: each instruction whose cycles change has the
    estimate in the reads of its reach (``segments`` to itself), so a run that executed
    none of those cannot see the move."""
    from emu.papers import dougan1999
    m = dougan1999.kernel(machine).machine
    cpu = m.profile.name
    table = ranges.catalog()
    moves = [(n, side) for n, e in table.items() if n.startswith(f"{cpu}:costs.")
             for side in (e.low, e.high) if side != e.value]
    assert len(moves) > 10
    checked = 0
    for program in m.programs:
        def tables():
            return cost.tables("ppc32", profile.load(cpu).costs, program.code,
                               program.base, entries=program.symbols.values())
        nominal = tables()
        starts = [k for k in range(len(program.code)) if nominal.starts[k]]
        for estimate, value in moves:
            with estimates.moved({estimate: value}):
                moved = tables()
            for k in starts:
                if moved.cycles[k] != nominal.cycles[k]:
                    reach = range(int(nominal.segments[k]), k + 1)
                    assert any(estimate in nominal.read_sets[nominal.reads[j]]
                               for j in reach if nominal.starts[j]), (estimate, k)
                    checked += 1
    assert checked > 100
