"""Layouts (emu.kernel.layout): which frames the allocator hands out first, and when the
copies start; layout 0 is a fresh boot's, all at once."""
import pytest

from emu.kernel import layout, workloads
from emu.kernel.pages import PageAllocator
from emu.run.machine import Machine
from emu.run.parallel import current_task


def test_layout_0_hands_out_the_lowest_frame_first():
    # popped from the end: 10, 11, 12, 13
    assert layout.free_order([10, 11, 12, 13]) == [13, 12, 11, 10]
    allocator = PageAllocator(Machine("cortex-a9"), 4)
    first = allocator.base >> 12
    assert [allocator.alloc("anon").pfn for _ in range(4)] == [first + i for i in range(4)]


def test_a_shuffled_layout_hands_out_every_frame_once_in_its_own_order():
    pfns = list(range(100, 164))
    orders = {s: layout.free_order(pfns, s) for s in (1, 2)}
    for order in orders.values():
        assert sorted(order) == pfns                     # a permutation: no frame lost
        assert order != layout.free_order(pfns)          # not the boot's order
    assert orders[1] != orders[2]
    assert layout.free_order(pfns, 1) == orders[1]       # the same layout, the same order
    machine = Machine("cortex-a9")
    allocator = PageAllocator(machine, 64, layout=1)
    base = allocator.base >> 12
    expected = layout.free_order([base + i for i in range(64)], 1)
    assert [allocator.alloc("anon").pfn for _ in range(3)] == expected[::-1][:3]


def test_start_delays_are_none_for_layout_0_and_below_the_spread_otherwise():
    assert layout.start_delays(4, 1300) == [0, 0, 0, 0]
    delays = layout.start_delays(4, 1300, 3)
    assert delays == layout.start_delays(4, 1300, 3)
    assert all(0 <= d < layout.START_SPREAD_US * 1300 for d in delays)    # 13,000 cycles
    assert len(set(delays)) > 1
    assert delays != layout.start_delays(4, 1300, 4)


def test_a_bad_layout_is_refused():
    for bad in (-1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="layout must be a whole number"):
            layout.free_order([1, 2], bad)


def _fork(layout_number, copies=2):
    return workloads.lat_proc("fork", profile="cortex-a9", cpus=2, copies=copies,
                              layout=layout_number)


def test_each_copy_starts_after_its_layouts_delay():
    """Each copy's Python (its processes' set-up) starts when its core's clock has passed
    its delay; layout 0's copies start at 0."""
    for number in (0, 5):
        kernel = workloads.make_kernel(profile="cortex-a9", cores=2, layout=number)
        assert kernel.layout == number
        seen = {}

        def setup(seen=seen):
            task = current_task()
            seen[task.core] = task.clock
            return lambda: None

        workloads._measure_parallel(kernel, "nothing", setup, 0, 1)
        assert seen == dict(enumerate(layout.start_delays(2, 1300, number)))
    assert max(seen.values()) > 0


def test_the_same_layout_gives_the_same_cycles_twice():
    a, b = _fork(3), _fork(3)
    assert [r.cycles for r in a.runs] == [r.cycles for r in b.runs]
    assert a.cycles_each == b.cycles_each


def test_a_layout_changes_where_the_work_lands_not_the_work():
    """One copy of lat_proc fork in the boot's layout and a shuffled one: the same faults,
    copies, pages allocated, lines cleaned ... (every count but the cycles waited), and the
    pages it allocates are other frames."""
    runs = {n: workloads.lat_proc("fork", profile="cortex-a9", layout=n) for n in (0, 3)}
    waits = {"maintenance_wait_cycles"}
    counts = [{k: v for k, v in r.counts.items() if k not in waits} for r in runs.values()]
    assert counts[0] == counts[1] and counts[0]["pages_allocated"] > 0
    kernels = {n: workloads.make_kernel(profile="cortex-a9", layout=n) for n in (0, 3)}
    first = {n: k.allocator.alloc("anon").pfn for n, k in kernels.items()}
    base = kernels[0].allocator.base >> 12
    assert first[0] == base + 1                  # the zero page took the first frame
    assert first[3] != first[0]


def test_a_timing_nudges_each_copys_start_by_under_its_spread():
    """A timing adds to each copy's start a nudge of its own draw below TIMING_SPREAD_CYCLES
    (500: under one page fault), on top of the layout's delay; timing 0 adds nothing."""
    assert layout.start_delays(4, 1300, 0, 0) == [0, 0, 0, 0]
    nudges = layout.start_delays(4, 1300, 0, 1)
    assert all(0 <= d < layout.TIMING_SPREAD_CYCLES == 500 for d in nudges)
    assert len(set(nudges)) > 1 and nudges != layout.start_delays(4, 1300, 0, 2)
    both = layout.start_delays(4, 1300, 3, 1)
    assert both == [d + n for d, n in zip(layout.start_delays(4, 1300, 3), nudges)]
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="timing must be a whole number from 0 "
                                             r"\(none\)"):
            layout.start_delays(4, 1300, 0, bad)


def test_each_copy_starts_after_its_layouts_delay_and_its_timings_nudge():
    kernel = workloads.make_kernel(profile="cortex-a9", cores=2, layout=5, timing=2)
    assert (kernel.layout, kernel.timing) == (5, 2)
    seen = {}

    def setup():
        task = current_task()
        seen[task.core] = task.clock
        return lambda: None

    workloads._measure_parallel(kernel, "nothing", setup, 0, 1)
    assert seen == dict(enumerate(layout.start_delays(2, 1300, 5, 2)))
