"""Yoshioka 2005's published numbers (data/yoshioka2005_*.csv) against the mail's own text.

Every value below is read from the copy of the mail in shared/seeds/002_608c957b4f34e6a9.txt;
the tests check the CSV files hold it exactly, and that the numbers agree with each other the
way the mail says they do (the percentages and ratios recompute from the samples within the
printed rounding).
"""
import math

import pytest

from emu.papers.yoshioka2005 import oprofile
from emu.present import data

CYCLES = "yoshioka2005_top5_cycles"
MEMORY = "yoshioka2005_top5_memory"
SETUP = "yoshioka2005_oprofile_setup"
IOZONE = "yoshioka2005_iozone"
TEXT = "yoshioka2005_text_numbers"


def rows(name, kernel):
    df = data.load(name)
    return df[df["kernel"] == kernel].sort_values("rank")


def test_cycle_listings_exactly_as_printed():
    before = rows(CYCLES, "original")
    assert list(before["symbol"]) == ["__copy_from_user_ll", "_spin_lock",
                                      "journal_add_journal_head", "do_get_write_access",
                                      "journal_put_journal_head"]
    assert list(before["samples"]) == [281538, 81069, 75523, 63674, 52634]
    assert list(before["percent"]) == [15.2083, 4.3792, 4.0796, 3.4396, 2.8432]
    after = rows(CYCLES, "optimized")
    assert list(after["symbol"]) == ["_mmx_memcpy_nt", "do_get_write_access",
                                     "journal_put_journal_head", "journal_dirty_metadata",
                                     "journal_add_journal_head"]
    assert list(after["samples"]) == [120717, 65955, 56088, 52550, 38886]
    assert list(after["percent"]) == [8.3454, 4.5596, 3.8775, 3.6329, 2.6883]
    assert set(data.load(CYCLES)["app_name"]) == {"vmlinux"}
    assert set(before["samples_file"]) == {"pattern9-0-cpu4-0-08141700/summary.out"}
    assert set(after["samples_file"]) == {"pattern9-0-cpu4-0-08141627/summary.out"}


def test_memory_listings_exactly_as_printed():
    before = rows(MEMORY, "original")
    assert list(before["symbol"]) == ["__copy_from_user_ll", "_spin_lock",
                                      "journal_add_journal_head", "__find_get_block",
                                      "journal_dirty_metadata"]
    assert list(before["references_samples"]) == [120801, 84139, 66027, 60400, 60032]
    assert list(before["references_percent"]) == [7.4379, 5.1806, 4.0654, 3.7189, 3.6963]
    assert list(before["l3_misses_samples"]) == [37017, 885, 656, 250, 120]
    assert list(before["l3_misses_percent"]) == [63.4603, 1.5172, 1.1246, 0.4286, 0.2057]
    after = rows(MEMORY, "optimized")
    assert list(after["symbol"]) == ["_mmx_memcpy_nt", "journal_dirty_metadata",
                                     "journal_put_journal_head", "do_get_write_access",
                                     "__getblk"]
    assert list(after["references_samples"]) == [90918, 83654, 57836, 48236, 44546]
    assert list(after["references_percent"]) == [6.3079, 5.8039, 4.0127, 3.3466, 3.0906]
    assert list(after["l3_misses_samples"]) == [89, 177, 348, 165, 21]
    assert list(after["l3_misses_percent"]) == [0.5673, 1.1283, 2.2183, 1.0518, 0.1339]


def test_counter_setup_as_printed():
    df = data.load(SETUP)
    assert set(df["cpu"]) == {"P4 / Xeon"}
    mhz = df.groupby("kernel")["cpu_mhz"].agg(set)
    assert mhz["original"] == {2200.91} and mhz["optimized"] == {2200.93}
    assert set(df["cpu_mhz_printed"]) == {"2200.91 MHz (estimated)", "2200.93 MHz (estimated)"}
    cycles = df[df["event"] == "GLOBAL_POWER_EVENTS"]
    assert len(cycles) == 2
    assert set(cycles["unit_mask_printed"]) == {"0x01"} and set(cycles["count"]) == {100000}
    bsq = df[df["event"] == "BSQ_CACHE_REFERENCE"]
    assert len(bsq) == 4 and set(bsq["count"]) == {3000}
    assert sorted(set(bsq["unit_mask_printed"])) == ["0x200", "0x3f"]
    assert set(bsq[bsq["unit_mask_printed"] == "0x200"]["unit_mask_description"]) == \
        {"read 3rd level cache miss"}
    # the numeric reading is the printed hex
    for printed, value in zip(df["unit_mask_printed"], df["unit_mask"]):
        assert int(printed, 16) == value


def test_iozone_run_as_printed():
    df = data.load(IOZONE).set_index("kernel")
    assert df.loc["original", "elapsed_s"] == 229.76
    assert df.loc["optimized", "elapsed_s"] == 222.94
    assert set(df["command"]) == {"iozone -CMR -i 0 -+n -+u -s 8000MB -t 4"}
    assert set(df["runs"]) == {5}
    assert set(df["kernel_version"]) == {"linux-2.6.12.4", "linux-2.6.12.4 with the patch"}


def text(quantity, kernel):
    df = data.load(TEXT)
    match = df[(df["quantity"] == quantity) & (df["kernel"] == kernel)]
    assert len(match) == 1, (quantity, kernel)
    return match.iloc[0]


@pytest.mark.parametrize("metric", sorted(oprofile.METRICS))
@pytest.mark.parametrize("kernel", oprofile.KERNELS)
def test_percentages_recompute_from_the_samples(metric, kernel):
    # one total must make every printed percentage round right (4 decimals)
    lo, hi = oprofile.listing_total(metric, kernel)
    assert lo <= hi
    _, samples, percent, _ = oprofile.METRICS[metric]
    total = (lo + hi) / 2
    for row in oprofile.listing(metric, kernel).itertuples():
        assert round(getattr(row, samples) / total * 100, 4) == getattr(row, percent)


def test_the_l3_miss_totals_are_whole_numbers_the_rounding_pins_down():
    # 37017 is 63.4603% of 58331 and of no other whole number; 89 is 0.5673% of 15688
    for kernel, total in (("original", 58331), ("optimized", 15688)):
        lo, hi = oprofile.listing_total("l3_misses", kernel)
        assert [n for n in range(math.ceil(lo), math.floor(hi) + 1)] == [total]


def test_a_mistyped_sample_count_breaks_the_listing(tmp_path, monkeypatch):
    text_ = (data.DATA_DIR / f"{CYCLES}.csv").read_text().replace(",81069,", ",81096,")
    (tmp_path / f"{CYCLES}.csv").write_text(text_)
    monkeypatch.setenv("EMU_DATA_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="cycles, original: no total fits every row"):
        oprofile.listing_total("cycles", "original")


def test_implied_total_refuses_bad_input():
    with pytest.raises(ValueError, match="positive whole number"):
        oprofile.implied_total(-5, 10.0)
    with pytest.raises(ValueError, match="positive whole number"):
        oprofile.implied_total(2.5, 10.0)
    with pytest.raises(ValueError, match="at most 100"):
        oprofile.implied_total(5, 0.0)
    with pytest.raises(ValueError, match="at most 100"):
        oprofile.implied_total(5, float("nan"))
    with pytest.raises(ValueError, match="unknown metric 'misses'"):
        oprofile.listing_total("misses", "original")
    with pytest.raises(ValueError, match="unknown kernel 'patched'"):
        oprofile.listing("cycles", "patched")


def test_the_text_restates_the_listings():
    cycles, memory = data.load(CYCLES), data.load(MEMORY)
    first = lambda df, k: df[(df["kernel"] == k) & (df["rank"] == 1)].iloc[0]  # noqa: E731
    assert text("L3 miss share of __copy_from_user_ll", "original")["value"] == \
        first(memory, "original")["l3_misses_percent"] == 63.4603
    assert text("memory access share of __copy_from_user_ll", "original")["value"] == \
        first(memory, "original")["references_percent"] == 7.4379
    assert text("cycle samples of the copy routine", "original")["value"] == \
        first(cycles, "original")["samples"] == 281538
    assert text("cycle samples of the copy routine", "optimized")["value"] == \
        first(cycles, "optimized")["samples"] == 120717
    assert text("L3 miss samples of the copy routine", "original")["value"] == 37017
    assert text("L3 miss samples of the copy routine", "optimized")["value"] == \
        first(memory, "optimized")["l3_misses_samples"] == 89
    assert text("L3 miss share of the copy routine", "optimized")["value"] == 0.5673


def test_the_ratios_recompute_from_the_samples():
    # "(120717/281538==42.88%)"
    ratio = text("cycle samples of the copy routine after/before", "optimized/original")
    assert ratio["value_printed"] == "(120717/281538==42.88%)"
    assert round(120717 / 281538 * 100, 2) == ratio["value"] == 42.88
    # "It is 0.24% of the original implementation": 89 / 37017
    assert round(89 / 37017 * 100, 2) == \
        text("L3 miss samples of the copy routine after/before", "optimized/original")["value"]


def test_the_elapsed_time_gain_recomputes_as_a_speedup():
    df = data.load(IOZONE).set_index("kernel")
    before, after = df.loc["original", "elapsed_s"], df.loc["optimized", "elapsed_s"]
    gain = text("elapsed time gain", "optimized/original")
    assert gain["value_printed"] == "(229.76/222.94= 3.06% gain)"
    # the printed 3.06% is the ratio less one; the time itself fell by 2.97%
    assert round((before / after - 1) * 100, 2) == gain["value"] == 3.06
    assert round((before - after) / before * 100, 2) == 2.97


def test_provenance_names_the_mail():
    for name in (CYCLES, MEMORY, SETUP, IOZONE, TEXT):
        df = data.load(name)
        assert set(df["source"]) == {"Yoshioka 2005"}
        assert df["page"].str.contains("seed lines").all()
    assert data.provenance(data.load(CYCLES)) == (
        "Source: Yoshioka 2005, Top 5 CPU cycle (before the patch), mail listing 1 "
        "(seed lines 8-18); Yoshioka 2005, Top 5 CPU cycle (after the patch), mail listing 3 "
        "(seed lines 37-47).")


@pytest.mark.parametrize("metric", sorted(oprofile.METRICS))
def test_top5_figure_puts_before_and_after_side_by_side(metric):
    fig = oprofile.top5_figure(metric)
    assert len(fig.data) == 2
    left, right = fig.data
    assert list(left.y)[0] == "__copy_from_user_ll" and list(right.y)[0] == "_mmx_memcpy_nt"
    _, _, percent, _ = oprofile.METRICS[metric]
    assert list(left.x) == list(oprofile.listing(metric, "original")[percent])
    assert left.xaxis == "x" and right.xaxis == "x2"
    assert "Yoshioka 2005" in fig.layout.title.subtitle.text
    # the copy routine stands out in each kernel's colour
    from emu.present.plot import COLORS
    assert left.marker.color[0] == COLORS["original"]
    assert right.marker.color[0] == COLORS["optimized"]
    assert set(left.marker.color[1:]) == {COLORS["published"]}


def test_top5_figure_in_samples_and_bad_choices():
    fig = oprofile.top5_figure("l3_misses", value="samples")
    assert list(fig.data[0].x) == [37017, 885, 656, 250, 120]
    with pytest.raises(ValueError, match="unknown metric"):
        oprofile.top5_figure("time")
    with pytest.raises(ValueError, match="'percent' or 'samples'"):
        oprofile.top5_figure("cycles", value="share")
