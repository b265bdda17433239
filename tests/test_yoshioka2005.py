"""Yoshioka 2005's headline results, asserted on the model (emu.yoshioka):

* the L3 misses of the copy fall by orders of magnitude (one per destination line before;
  none after);
* the rest of the kernel (the working set) misses less in the L3 with the patch;
* the cycles of a large copy to a cold destination fall, to the bus time of its writes;
* and where non-temporal copying loses: data read back at once, a hot destination.

Counts worked out by hand are derived in the comments. The write tests use the chapter's
configuration (a prefilled 128 MB page cache) with a short run.
"""
import pytest

from emu import yoshioka as y
from emu.profile import load

LINE = 64
P4 = load("pentium4")
BEAT = P4.memory.bus["cycles_per_beat"]
LINE_ON_BUS = LINE // P4.memory.bus["bytes_per_beat"] * BEAT     # 8 beats: 44 cycles


@pytest.fixture(scope="module")
def profiles():
    return {label: y.write_profile(kernel, records=256, warm=2048)
            for label, kernel in y.KERNELS.items()}


def test_the_old_copy_misses_the_l3_once_per_destination_line(profiles):
    before = profiles["original"]
    # a 4 KB record into a page no cache holds: 64 reads for ownership, each an L3 read
    # miss (the hardware prefetcher takes some of them ahead: the same lines)
    assert before.per_write("l3_misses", "copy") == pytest.approx(4096 // LINE, abs=0.5)


def test_the_patched_copy_does_not_miss_the_l3(profiles):
    before, after = profiles["original"], profiles["optimized"]
    assert after.copy_events("l3_misses") * 100 < before.copy_events("l3_misses")
    assert after.copy_events("l3_misses") == 0
    listing = after.listing("l3_misses")
    assert "_mmx_memcpy_nt" not in set(listing[listing["events"] > 0]["symbol"])


def test_the_working_set_misses_less_with_the_patch(profiles):
    before, after = profiles["original"], profiles["optimized"]
    assert after.other_events("l3_misses") < before.other_events("l3_misses")
    # the wait-table lines unlock_page and wake_up_bit look at stay cached
    b = before.listing("l3_misses").set_index("symbol")["events"]
    a = after.listing("l3_misses").set_index("symbol")["events"]
    assert b.get("__wake_up_bit", 0) > 0 and a.get("__wake_up_bit", 0) == 0


def test_the_copy_takes_fewer_cycles_with_the_patch(profiles):
    before, after = profiles["original"], profiles["optimized"]
    change = y.change(before.copy_events("cycles"), after.copy_events("cycles"))
    assert change["direction"] == "fell" and change["ratio"] < 0.6


def test_the_listings_are_laid_out_like_the_papers(profiles):
    table = y.side_by_side(profiles, "l3_misses")
    assert list(table.columns) == ["kernel", "rank", "published symbol", "published %",
                                   "emulated symbol", "emulated %"]
    top = table[(table["kernel"] == "original") & (table["rank"] == 1)].iloc[0]
    assert (top["published symbol"], top["emulated symbol"]) == ("__copy_from_user_ll",
                                                                 "__copy_from_user_ll")
    assert top["published %"] == 63.4603
    memory = profiles["original"].memory_table()
    assert memory["references"].is_monotonic_decreasing
    assert memory["l3_misses"].sum() == profiles["original"].events("l3_misses")
    assert memory["references"].sum() == profiles["original"].events("references")


def test_a_large_cold_copy_falls_to_the_bus_time_of_its_writes():
    old = y.copy_cost(4096, None, "cold destination")
    nt = y.copy_cost(4096, 1, "cold destination")
    # non-temporal: 64 full write-combining lines, one after the other on the bus
    assert nt["cycles"] == pytest.approx(64 * LINE_ON_BUS, rel=0.01)
    assert nt["l3_misses"] == 0
    # 2.6.12: each line read for ownership and, later, written back: twice the bus time
    assert old["cycles"] >= 2 * 64 * LINE_ON_BUS
    assert old["l3_misses"] == pytest.approx(64, abs=0.1)


@pytest.mark.parametrize("condition", ["read back at once", "hot destination"])
def test_non_temporal_loses_when_the_data_is_used_soon(condition):
    for size in (512, 4096):
        old = y.copy_cost(size, None, condition)["cycles"]
        nt = y.copy_cost(size, 1, condition)["cycles"]
        assert nt > old


def test_the_fpu_save_makes_small_non_temporal_copies_lose():
    # with the task's FPU state live, the copy saves it (fxsave) and the task restores it
    # (fxrstor): a fixed cost a 64-byte copy cannot earn back, a 4 KB one can
    assert y.copy_cost(64, 1, "task owns the FPU")["cycles"] > \
        y.copy_cost(64, None, "task owns the FPU")["cycles"]
    assert y.copy_cost(4096, 1, "task owns the FPU")["cycles"] < \
        y.copy_cost(4096, None, "task owns the FPU")["cycles"]


def test_the_threshold_decides_which_copy_runs():
    # the patch's n < 512: a 511-byte copy takes 2.6.12's path, a 512-byte one the
    # non-temporal one (no L3 miss); a threshold of 1024 moves the 512-byte copy back
    assert y.copy_cost(511, 512, "cold destination")["l3_misses"] > 0
    assert y.copy_cost(512, 512, "cold destination")["l3_misses"] == 0
    assert y.copy_cost(512, 1024, "cold destination")["l3_misses"] > 0


def test_crossover_reads_the_sweep():
    sweep = y.copy_sweep([256, 4096], ["cold destination", "hot destination"])
    assert y.crossover(sweep, "cold destination") == 256
    assert y.crossover(sweep, "hot destination") is None
    with pytest.raises(ValueError, match="condition must be one of"):
        y.copy_cost(64, None, "warm")


def test_the_papers_cpu_time_by_hand():
    df = y.cpu_time()
    # listing 1: 281538 samples are 15.2083%, so about 1,851,216 in all; a sample is
    # 100,000 cycles of a 2.2 GHz CPU
    assert df.loc["original", "CPU s"] == pytest.approx(281538 / 0.152083 * 1e5 / 2.2e9,
                                                        rel=1e-5)
    assert df.loc["original", "copy cycles per page"] == pytest.approx(
        281538 * 1e5 / (4 * 8000 * 256))
    assert df.loc["optimized", "copy CPU s"] == pytest.approx(120717 * 1e5 / 2.2e9)
    assert df.loc["original", "busy %"] == pytest.approx(100 * df.loc["original", "CPU s"] /
                                                         (4 * 229.76))


def test_change_states_direction_ratio_and_difference():
    assert y.change(10, 4) == {"direction": "fell", "ratio": 0.4, "difference": -6}
    assert y.change(4, 10)["direction"] == "rose"
    assert y.published_copy_change("l3_misses") == {
        "before": 37017, "after": 89, "direction": "fell", "ratio": 89 / 37017,
        "difference": 89 - 37017}
