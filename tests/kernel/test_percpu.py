"""emu.kernel.percpu: a PerCPU value follows the core whose Python runs (a task of
emu.run.parallel.run_tasks), read without current_task() on the hot path: each task sees its
core's value across its guest calls (the scheduler switching between the tasks), and outside
a run of tasks the Python is CPU 0's."""
from emu.kernel.percpu import PerCPU, cpu
from emu.run.machine import Machine

ANSWER = "answer:\n li 3, 7\n blr\n"


class _Holder:
    value = PerCPU()
    items = PerCPU(list)


def test_outside_tasks_the_value_is_cpu_0s():
    h = _Holder()
    assert h.value is None and cpu() == 0
    h.value = "zero"
    h.items.append(1)
    assert h.value == "zero" and h.items == [1]
    assert h.__dict__["_percpu_value"] == {0: "zero"}


def test_each_task_reads_its_own_cores_value_across_its_calls():
    m = Machine("ppc750", cores=2)
    m.load(ANSWER)
    h = _Holder()
    h.value = "main"                # CPU 0's, set outside the tasks
    seen = []

    def task(t):
        if t.core == 1:
            assert h.value is None          # core 1 has not set it: the default
            h.value = "one"
        for _ in range(3):
            t.call("answer")                # the other task runs between the calls
            h.items.append(t.core)
            seen.append((t.core, cpu(), h.value))
        return len(h.items)

    assert m.run_tasks([task, task]) == [3, 3]
    assert sorted(set(seen)) == [(0, 0, "main"), (1, 1, "one")]
    assert h.__dict__["_percpu_items"] == {0: [0, 0, 0], 1: [1, 1, 1]}
    assert h.value == "main" and cpu() == 0     # back on CPU 0 after the run
