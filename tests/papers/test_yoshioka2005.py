"""Yoshioka 2005's headline results, asserted on the model (emu.papers.yoshioka2005):

* the L3 misses of the copy fall by orders of magnitude (one per destination line before;
  none after);
* the rest of the kernel (the working set) misses less in the L3 with the patch;
* a large copy to a cold destination takes the bus time of its writes (copy bench);
* and where non-temporal copying loses: data read back at once, a hot destination.

Counts worked out by hand are derived in the comments. The write tests use the chapter's
configuration (a prefilled 128 MB page cache) with a short run.
"""
import pandas as pd
import pytest

from emu.papers import yoshioka2005 as y
from emu.papers.yoshioka2005 import ext3model
from emu.hw.profile import load

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


def test_change_gives_the_direction_ratio_and_difference():
    # by hand: 300 -> 120 fell to 0.4 (-180); 120 -> 300 rose to 2.5; 0 -> 3 an infinite ratio
    assert y.change(300, 120) == {"direction": "fell", "ratio": 0.4, "difference": -180}
    assert y.change(120, 300) == {"direction": "rose", "ratio": 2.5, "difference": 180}
    assert y.change(7, 7)["direction"] == "unchanged"
    assert y.change(0, 3)["ratio"] == float("inf")


def test_the_listings_are_laid_out_like_the_papers(profiles):
    table = y.side_by_side(profiles, "l3_misses")
    assert list(table.columns) == ["kernel", "rank", "published symbol", "published %",
                                   "emulated symbol", "emulated %"]
    # each side's own first row: the mail's listing 2, and the model's most-missing symbol
    top = table[(table["kernel"] == "original") & (table["rank"] == 1)].iloc[0]
    listing = profiles["original"].listing("l3_misses")
    assert top["published symbol"] == "__copy_from_user_ll" and top["published %"] == 63.4603
    first = listing.iloc[0]
    assert (top["emulated symbol"], top["emulated %"]) == (first["symbol"],
                                                          round(float(first["percent"]), 4))
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


# ------------------------------------------------------------------ the chapter's helpers

def test_compare_states_direction_ratio_and_difference_against_the_paper():
    c = y.compare(42.88, 45.0)
    assert c["direction"] == "model higher"
    assert c["ratio"] == pytest.approx(45.0 / 42.88)
    assert c["difference"] == pytest.approx(2.12)
    assert y.compare(0.24, 0.0) == {"direction": "model lower", "ratio": 0.0,
                                    "difference": -0.24}
    assert y.compare(0, 0) == {"direction": "equal", "ratio": 1.0, "difference": 0}
    assert y.compare(0, 3)["ratio"] == float("inf")


def test_the_comparison_table_sets_the_papers_numbers_beside_the_models(profiles):
    table = y.comparison_table(profiles).set_index("claim")
    before, after = profiles["original"], profiles["optimized"]
    row = table.loc["copy's cycles, after / before (%)"]
    assert row["paper"] == pytest.approx(100 * 120717 / 281538)        # the mail's 42.88%
    assert row["model"] == pytest.approx(100 * after.copy_events("cycles") /
                                         before.copy_events("cycles"))
    row = table.loc["copy's L3 misses, after / before (%)"]
    assert row["paper"] == pytest.approx(100 * 89 / 37017)             # the mail's 0.24%
    assert (row["model"], row["direction"]) == (0.0, "model lower")
    # the shares are the listings' printed percentages
    assert table.loc["copy's share of cycles, before (%)", "paper"] == 15.2083
    assert table.loc["copy's share of L3 misses, after (%)", "paper"] == 0.5673
    assert table.loc["copy's share of memory references, before (%)", "paper"] == 7.4379
    # every row: ratio model / paper, difference model - paper
    for claim, r in table.iterrows():
        assert r["difference"] == pytest.approx(r["model"] - r["paper"]), claim
        assert r["ratio"] == pytest.approx(r["model"] / r["paper"]), claim
    assert len(table) == 11


def test_published_rest_is_the_implied_total_less_the_copy():
    from emu.papers.yoshioka2005 import oprofile
    lo, hi = oprofile.listing_total("l3_misses", "original")
    assert y.published_rest("l3_misses", "original") == pytest.approx((lo + hi) / 2 - 37017)
    # listing 2: 37017 samples are 63.4603%, so the total is 58331 (58330.91-58331.00)
    assert y.published_rest("l3_misses", "original") == pytest.approx(58331 - 37017, abs=0.1)


def test_the_sfence_variant_costs_at_least_its_fence():
    plain = y.CopyBench(1).run(4096)
    fenced = y.CopyBench(1, sfence=True)
    r = fenced.run(4096)
    assert r["l3_misses"] == 0
    # the copy then the fence: at least the fence's own (estimated) cost more, so the
    # dispatcher did call the fenced entry
    assert r["cycles"] >= plain["cycles"] + P4.raw["costs"]["mnemonics"]["sfence"]
    with pytest.raises(ValueError, match="needs the patched dispatcher"):
        y.CopyBench(None, sfence=True)


def test_the_threshold_sweep_runs_the_dispatcher_at_each_threshold():
    sizes = [64, 128, 4096]
    sweep = y.threshold_sweep([128, None], sizes, ["cold destination"])
    misses = {(t if t == t else None, s): m for t, s, m in
              zip(sweep["threshold"], sweep["size"], sweep["l3_misses"])}
    # below the threshold 2.6.12's copy: one read for ownership per destination line;
    # from the threshold on the non-temporal copy: none
    assert misses[(128, 64)] == pytest.approx(1, abs=0.01)
    assert misses[(128, 128)] == 0 and misses[(128, 4096)] == 0
    for size in sizes:
        assert misses[(None, size)] == pytest.approx(size // LINE, abs=0.01)
    mix = y.threshold_mix(sweep).set_index("threshold")
    # every size moves the same bytes: the mean of cycles per KB over the sizes
    for t in (128, None):
        d = sweep[sweep["threshold"] == t] if t else sweep[sweep["threshold"].isna()]
        expect = sum(c * 1024 / s for c, s in zip(d["cycles"], d["size"])) / len(sizes)
        assert mix.loc[t if t else "never", "cycles_per_kb"] == pytest.approx(expect)
    assert mix.loc["never", "over 2.6.12"] == 1.0
    assert mix.loc[128, "over 2.6.12"] < 1          # cold destinations: the patch wins
    assert y.best_threshold(y.threshold_mix(sweep), "cold destination") == 128


def test_profile_table_matches_the_profile_file():
    import tomllib
    from emu.hw.profile import FOLDER
    raw = tomllib.loads((FOLDER / "pentium4.toml").read_text())
    table = y.profile_table().set_index(["part", "parameter"])
    levels = {c["name"]: c for c in raw["caches"]}
    assert table.loc[("L2", "size"), "value"] == "524288"
    assert not table.loc[("L2", "size"), "estimate"]
    assert table.loc[("L3", "size"), "estimate"]                # the mail's part is not known
    assert table.loc[("memory", "latency"), "estimate"]
    assert table.loc[("bus", "cycles_per_beat"), "value"] == "5.5"   # 2200 MHz / 400 MT/s
    for (part, key), r in table.iterrows():
        src = levels.get(part) or (raw["costs"]["mnemonics"] if part == "costs" else raw[part])
        assert r["value"] == str(src[key]), (part, key)
        assert r["estimate"] == (key in src.get("unverified", [])), (part, key)


def test_bus_wait_per_write_sums_every_cpu():
    one = y.write_profile("2.6.12", records=20, warm=20, counters=("cycles",))
    run = one.sampled["cycles"].run
    assert one.bus_wait_per_write() == run.events["bus_wait_cycles"] / 20 > 0
    two = y.write_profile("2.6.12", records=20, warm=20, cpus=2, counters=("cycles",))
    runs = two.sampled["cycles"].run.runs
    assert two.bus_wait_per_write() == sum(r.events["bus_wait_cycles"] for r in runs) / 40


def test_the_write_period_is_the_mails_elapsed_time_per_page_of_one_child():
    # 229.76 s x 2.2e9 Hz / (8000 MB / 4 KB = 2,048,000 pages per child)
    assert y.write_period() == 246_812          # 246,812.5, rounded to even
    assert y.write_period("optimized") == 239_486


def test_the_elapsed_gain_bound_by_hand():
    from types import SimpleNamespace as N

    def profile(busy):
        run = [[N(cycles=busy), N(cycles=busy)]]          # one CPU, two writes: back to back
        return y.WriteProfile("k", 1, 2, {"cycles": N(run=run)}, None, period=1_000)

    before, after = profile(300), profile(200)
    # the saving, 100 cycles a write, off a 1,000-cycle period: 1000 / 900 - 1
    assert y.elapsed_gain_bound(before, after) == pytest.approx(100 / 9)
    assert before.busy_percent() == pytest.approx(30.0)
    assert y.WriteProfile("k", 1, 2, {}, None).busy_percent() == 100.0
    # paced: the busy cycles the run counted (writes, writeback, idle loop), per write
    paced = ext3model.PacedRuns([[N(cycles=300)] * 2])
    paced.busy = [900]
    p = y.WriteProfile("k", 1, 2, {"cycles": N(run=paced)}, None, period=1_000)
    assert p.busy_cycles_per_write() == 450 and p.busy_percent() == pytest.approx(45.0)


def test_a_paced_profile_samples_no_halted_cycle():
    # (the per-page stand-in, writer_chunks False: with the writers' chunks a paced run is
    # whole periods of 1,540 writes, test_ext3model_writer_chunks.py)
    paced = y.write_profile("2.6.12", records=8, warm=8, counters=("cycles",), paced=True,
                            writer_chunks=False)
    sampled = paced.sampled["cycles"]
    k = paced.machine_kernel
    # the disk's queue warmed first (disk_warm_writes paced writes), then the profiled 8:
    # each run's first write due at once, a halt before each of the others, each a period
    # less a write and its pause's work (writeback, the commit's turn, the block layer, the
    # disk's driver and interrupt: well under a fifth of a period), so more than four
    # fifths of a period each
    halts = (ext3model.disk_warm_writes() - 1) + 7
    assert k.halts == [halts]
    assert k.halted_cycles[0] > halts * y.write_period() * 4 // 5
    executed = int(sampled.by_symbol()["cycles"].sum())   # the instructions' cycles
    # one sample per 997 executed cycles: the halted ones, 7 periods, would give ~1,700 more
    assert abs(sampled.samples - executed // 997) <= 2


def test_the_reasons_say_the_direction_the_run_gives():
    """A reason that states which way the model differs takes the word from the row."""
    copy = y.SCORECARD_REASONS["copy's cycles, after / before (%)"]
    assert "saves relatively more" in copy(pd.Series({"paper": 42.9, "model": 27.3}))
    assert "saves relatively less" in copy(pd.Series({"paper": 42.9, "model": 50.0}))
    rest = y.SCORECARD_REASONS["rest of the kernel's cycles, after / before (%)"]
    split = {"mail_fall": 15.5, "mail_spin_lock": (2.7, 5.2), "mail_beyond": (10.3, 12.8),
             "mail_add_jh": 2.3, "mail_others": (8.4, 14.2), "model_fall": 1.3,
             "model_spin_lock": 0.02, "model_add_jh": 0.16, "model_others": 1.4,
             "model_beyond": 1.28, "model_spin_before": 0.13, "model_spin_after": 0.1}
    text = rest(pd.Series({"paper": 84.5, "model": 98.7}), split)
    assert "changes by -1.3%, the mail's by -15.5%" in text
    assert "falls 2.7 to 5.2 points in the mail and 0.02 on the model" in text
    assert "0.13% of the rest's cycles before the patch and 0.10% after" in text
    assert "the mail's rest falls 10.3 to 12.8 points, the model's 1.3" in text
    assert "costs more cycles" in y.busy_reason(pd.Series({"paper": 9.2, "model": 17.7}))
    assert "costs fewer cycles" in y.busy_reason(pd.Series({"paper": 9.2, "model": 5.0}))


def test_both_kernels_at_once_give_the_same_profiles_and_facts_without_the_kernel(profiles):
    """kernel_profiles runs the two write tests in a sweep's workers: each profile comes
    back without its Kernel (a Machine does not cross processes), with the same cycles as
    the run here and the facts the chapter reads of the Kernel."""
    both = y.kernel_profiles(records=256, warm=2048)
    for label, here in profiles.items():
        there = both[label]
        assert there.machine_kernel is None and here.machine_kernel is not None
        assert there.per_write("cycles") == here.per_write("cycles")
        assert there.facts == y.kernel_facts(here.machine_kernel) == here.facts
    k = profiles["original"].machine_kernel
    assert profiles["original"].facts["writeback_lag"] == \
        k.pool_pages - k.writeback_point(k.pool_pages)


def test_the_mails_journal_by_hand():
    # 229.76 s over 5 s: 45.952 commits; 190 buffers a commit: 192 log blocks; 8192 - 2372
    # = 5820 blocks before a journal_start must checkpoint: 5820 / 192 = 30.3125 commits,
    # 151.5625 s, before the log first fills (writeback writes none of the metadata back),
    # then a transaction checkpointed each commit: 45.952 - 30.3125 = 15.6395; on the
    # checkpoint lists at a commit's start, on average over the run, (30.3125^2 / 2 +
    # 15.6395 x 30.3125) / 45.952 = 20.3146 transactions
    j = y.mail_journal(190)
    assert j["commits"] == pytest.approx(45.952)
    assert j["log_blocks_per_commit"] == 192
    assert j["log_transactions"] == pytest.approx(30.3125)
    assert j["log_full_s"] == pytest.approx(151.5625)
    assert j["checkpoints"] == pytest.approx(15.6395)
    assert j["checkpoint_transactions"] == pytest.approx(20.31459, rel=1e-6)
    assert j["commit_writes"] == y.commit_writes()
    # a 32768-block log: 32768 - 9394 = 23374 blocks, 121.74 commits: never full in the
    # run, no checkpoint; the lists hold half the run's commits on average
    big = y.mail_journal(190, log_blocks=32768)
    assert big["log_transactions"] == pytest.approx(23374 / 192)
    assert big["checkpoints"] == 0
    assert big["checkpoint_transactions"] == pytest.approx(45.952 / 2)


def test_a_paced_profile_counts_its_share_of_the_commits_once_a_commit_work():
    # a run of 250 writes per CPU is 250 / 44,568 of a commit interval: that share of a
    # commit's once-a-commit events joins the run's, in the rest of the kernel
    class Sampled:
        run = None

        def by_symbol(self):
            return pd.DataFrame({"symbol": ["__copy_from_user_ll", "journal_stop"],
                                 "samples": [30, 10], "cycles": [30_000, 10_000]})

    once = {"cycles": 1_000_000.0, "l3_misses": 4000.0}
    p = y.WriteProfile("2.6.12", 4, 250, {"cycles": Sampled(), "l3_misses": Sampled()},
                       None, period=1000, once=once)
    share = 250 / 44_568
    assert y.commit_writes() == 44_568
    assert p.commit_share("cycles") == pytest.approx(1e6 * share)
    assert p.events("cycles") == pytest.approx(40_000 + 1e6 * share)
    assert p.copy_events("cycles") == 30_000
    assert p.other_events("cycles") == pytest.approx(10_000 + 1e6 * share)
    assert p.events("l3_misses") == pytest.approx(40 + 4000 * share)     # sampled every 1
    assert p.commit_share("references") == 0
    back_to_back = y.WriteProfile("2.6.12", 4, 250, {"cycles": Sampled()}, None)
    assert back_to_back.events("cycles") == 40_000


def test_the_commits_once_a_commit_events_spread_the_cold_walk_over_the_mails_buffers():
    # one CPU, 400 buffers a commit (402 log blocks: 5820 / 402 = 14.4776 commits fill the
    # log, then 45.952 - 14.4776 = 31.4744 checkpoints), 100 of them every commit's: on the
    # lists at a commit's start (14.4776^2 / 2 + 31.4744 x 14.4776) / 45.952 = 12.19696
    # transactions of 300 own buffers each, and the 100 once: 3,759.09 buffers walked, each
    # at the events of the model's cold walk of its own 4 (times 3,759.09 / 4), plus the
    # events of the parts done once a commit (del_timer_sync, the lock-down, the revoke
    # records, phase 8), each counter's own; a walk from cold caches costs more than the
    # one right after the commit; the revoke records read table 0's 2 KB of heads (32
    # lines) from memory; and the metadata's write-back by the checkpoints: 31.4744
    # transactions' 300 own buffers over 45.952 commits, 205.482 buffers a commit interval,
    # each at the events per buffer of the model's checkpoint of its commit's 4 (its
    # log_do_checkpoint, the disk's dispatches and interrupts); and one wb_kupdate pass
    # a commit interval (both 5 s), from cold caches, its events each counter's own
    once = y.commit_once_events("2.6.12", 1, 400, meta_shared=100)
    walked, checkpointed = 100 + 12.19696 * 300, 31.47439 * 300 / 45.952
    parts, events = once["parts"], once["part_events"]
    assert parts["buffers"] == 4
    assert (once["walked"], once["checkpointed"]) == pytest.approx((walked, checkpointed),
                                                                   rel=1e-5)
    assert once["kupdate_passes"] == 1
    for metric in ("cycles", "references", "l3_misses"):
        fixed = sum(events[metric][p] for p in y.ONCE_PARTS)
        assert once["fixed"][metric] == fixed
        assert once[metric] == pytest.approx(fixed + events[metric]["clean_cold"] * walked / 4 +
                                             events[metric]["checkpoint"] * checkpointed +
                                             events[metric]["kupdate"], rel=1e-5)
    assert events["l3_misses"]["checkpoint"] > 0
    assert events["cycles"] == {p: parts[p] for p in events["cycles"]}
    assert parts["clean_cold"] > parts["clean"]
    assert events["l3_misses"]["revoke_records"] >= 32
    assert all(events["l3_misses"][p] > 0 for p in ("del_timer_sync", "lock_down",
                                                      "kupdate", "kupdate_old"))


def test_the_mails_writeback_by_hand():
    # 4 GB (MEMORY_MB's nominal): 1,048,576 pages; background at 10%: 104,857 (integer
    # division, as get_dirty_limits), throttling at 40%: 419,430; four files of 8000 MB,
    # 8,192,000 pages in 229.76 s: 35,654.6 pages a second, the background threshold
    # passed after 104,857 / 35,654.6 = 2.94 s; kupdate's write-back of the metadata at most
    # every 30 to 35 s:
    # 229.76 / 35 = 6.56 to 229.76 / 30 = 7.66 times; 1,000 metadata blocks over 30 s of
    # writes (6 intervals x 44,568 writes x 4 children = 1,069,632): 0.000935 a write
    wb = y.mail_writeback(1000)
    assert (wb["total_pages"], wb["background_pages"], wb["dirty_pages"]) == \
        (1_048_576, 104_857, 419_430)
    assert wb["file_pages"] == 2_048_000
    assert wb["pages_per_s"] == pytest.approx(8_192_000 / 229.76)
    assert wb["background_s"] == pytest.approx(104_857 * 229.76 / 8_192_000)
    assert wb["meta_passes"] == pytest.approx((229.76 / 35, 229.76 / 30))
    assert wb["meta_pages_per_write"] == pytest.approx(1000 / 1_069_632)
    # 128 requests: congested from 128 - 16 + 1 = 113, uncongested below 128 - 16 - 8 - 1
    assert wb["congestion"] == (113, 103, 128)


def test_a_direct_write_profile_and_a_sweeps_point_of_it_are_one_run():
    # write_profile is a unit (emu.run.reuse): notebook 02's exercise calls it, its check
    # runs the same arguments as a sweep's point; kept in one memo, the point is the call's
    from emu.run import reuse, sweep
    memo = reuse.Memo()
    args = dict(records=4, warm=4, counters=("cycles",))
    with reuse.recording(memo):
        direct = y.write_profile("2.6.12", **args)
        (point,) = sweep.run(y.write_profile, [dict(kernel="2.6.12", **args)],
                             executor="serial")
    assert (memo.runs, memo.hits) == (1, 1)
    assert point.per_write("cycles") == direct.per_write("cycles") > 0
    assert point.machine_kernel is None and direct.machine_kernel is not None


def test_copy_costs_runs_the_longest_bench_first_and_gives_each_threshold_its_own(
        monkeypatch):
    # a threshold whose bench has a history runs it again on its fresh bench: it goes first,
    # and the results come back under their thresholds, as bench_runs gives them alone
    history = [(64, "cold destination")]
    monkeypatch.setattr(y, "_HISTORY", {128: list(history)})
    monkeypatch.setattr(y, "_BENCHES", {})
    seen, run, bench_runs = [], y.sweep.run, y.bench_runs

    def serial(function, points, **options):       # in this process, in the order started
        return run(function, points, **{**options, "executor": "serial"})

    def watched(threshold, history, runs):
        seen.append(threshold)
        return bench_runs(threshold, history, runs)
    monkeypatch.setattr(y.sweep, "run", serial)
    monkeypatch.setattr(y, "bench_runs", watched)
    runs = [(256, "cold destination")]
    out = y.copy_costs(runs, [None, 128])
    assert seen == [128, None]
    assert out[128] == bench_runs(128, history, runs)
    assert out[None] == bench_runs(None, [], runs)
    assert out[128] != out[None]
    assert y._HISTORY == {128: history + runs, None: runs}


def test_every_special_of_a_loaded_kernel_is_hooked_and_no_other_instruction():
    # Yoshioka's patched write path on two cores: its 237 specials in 202 spans, each core
    # a hook per span; every instruction start inside a span is a special's (191 in 157
    # before wb_kupdate's pass: kupdate_2612.S's 9 locked instructions, each a span; 200 in
    # 166 before log_do_checkpoint's: checkpoint_log_2612.S's 16 locked instructions, in 15
    # spans, jbd_sync_bh's last two adjacent; 216 in 181 before the inode walk's:
    # sync_sb_inodes' writeback_release and fs_writeback_2612.S's 10, each a span; 227 in
    # 192 before the wait for a request's: blk_wait_2612.S's 9 locked instructions and
    # prepare_to_wait_exclusive's xchgl, each a span)
    from emu.run.machine import special_spans
    k = ext3model.Kernel("patched", cpus=1, cores=2, max_records=100,
                         page_cache_bytes=ext3model.FRAME_BYTES)
    m = k.machine
    program = m.programs[0]
    lo = program.base - m.code_base + 1          # the machine's tables: offset + 1
    starts = m._starts[lo:lo + len(program.code)]
    spans = special_spans(m._specials, starts, program.base)
    pcs = {s.pc for s in m._specials}
    assert len(pcs) == 237 and len(spans) == 202
    inside = {program.base + i for i in starts.nonzero()[0]
              if any(a <= program.base + i <= b for a, b in spans)}
    assert inside == pcs
