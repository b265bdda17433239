"""Dougan, Mackerras, Yodaiken 1999's published numbers (data/dougan1999_*.csv) against the paper.

The surviving text of the paper is shared/seeds/003_486eed2572b7b565.txt (the Analysis section
and Table 3). These tests read that file and check that every number in the CSV files is printed
there, on the line the row's provenance names, in the row's printed form; and, the other way
round, that every number printed in the surviving text is in a CSV file.
"""
import re

import pytest

from emu.present import data
from tests.seeds import line_numbers as seed_line_numbers

TABLE3 = "dougan1999_table3_lmbench"
MACHINES = "dougan1999_table3_machines"
TEXT = "dougan1999_text_numbers"
NAMES = (TABLE3, MACHINES, TEXT)

SEED_NAME = "003_486eed2572b7b565.txt"
# CI runs in a clone with shared/ beside it; a work tree has it one level up as well.

COLUMNS = ("null_syscall", "ctx_switch", "pipe_latency", "pipe_bandwidth")
UNITS = {"null_syscall": "us", "ctx_switch": "us", "pipe_latency": "us",
         "pipe_bandwidth": "mb_s"}


def test_table3_exactly_as_printed():
    df = data.load(TABLE3).set_index("os")
    assert list(df.index) == ["Linux/PPC", "Unoptimized Linux/PPC", "Rhapsody 5.0", "MkLinux",
                              "AIX"]
    assert list(df["null_syscall_us"]) == [2, 18, 15, 19, 11]
    assert list(df["ctx_switch_us"]) == [6, 28, 64, 64, 24]
    assert list(df["pipe_latency_us"]) == [28, 78, 161, 235, 89]
    assert list(df["pipe_bandwidth_mb_s"]) == [52, 36, 9, 15, 21]
    assert df.loc["Linux/PPC", "kernel"] == "optimized"
    assert df.loc["Unoptimized Linux/PPC", "kernel"] == "original"
    assert set(df["kernel"].iloc[2:]) == {"other"}
    assert data.provenance(df.reset_index()) == \
        "Source: Dougan 1999, Table 3, Analysis section (seed lines 7-13)."


def test_table3_rows_are_the_seed_lines(seed_lines):
    # the header and each row, rebuilt from the printed cells, is the paper's line
    assert seed_lines[7].startswith("Table 3: LmBench summary")
    assert seed_lines[8] == "OS Null syscall ctx switch pipe lat. pipe bw"
    df = data.load(TABLE3)
    for i, row in enumerate(df.itertuples()):
        printed = " ".join([row.os] + [getattr(row, c + "_printed") for c in COLUMNS])
        assert seed_lines[9 + i] == printed
        assert 9 + i in seed_line_numbers(row.page)


def test_printed_cells_read_as_the_numbers(seed_lines):
    df = data.load(TABLE3)
    for c in COLUMNS:
        unit = "MB/s" if c == "pipe_bandwidth" else r"$\mu$s"
        for printed, value in zip(df[c + "_printed"], df[f"{c}_{UNITS[c]}"]):
            number, printed_unit = printed.split(" ", 1)
            assert printed_unit == unit
            assert float(number) == value


def test_footnote_machines(seed_lines):
    df = data.load(MACHINES).set_index("os")
    assert list(df.index) == list(data.load(TABLE3)["os"])
    assert set(df["mhz"]) == {133} and set(df["processor"]) == {604}
    assert df.loc["AIX", "machine"] == "IBM 43P"
    assert set(df.drop("AIX")["machine"]) == {"PowerMac 9500"}
    footnote = seed_lines[14]
    for row in df.itertuples():
        assert f"{row.mhz_printed} {row.processor} {row.machine}" in footnote
        assert row.mhz_printed == f"{row.mhz}MHz"
        assert 14 in seed_line_numbers(row.page)


def text(quantity):
    df = data.load(TEXT)
    match = df[df["quantity"] == quantity]
    assert len(match) == 1, quantity
    return match.iloc[0]


def test_text_numbers():
    assert text("hash-table hit rate on a TLB miss (low end)")["value"] == 80
    assert text("hash-table hit rate on a TLB miss (high end)")["value"] == 98
    speedup = text("system speed-up from less user/kernel conflict for TLB entries (about)")
    assert (speedup["value"], speedup["value_printed"]) == (20, "about 20%")
    mmap = text("mmap() latency improvement from avoiding hash-table searches")
    assert (mmap["value"], mmap["value_printed"], mmap["unit"]) == (80, "80 times", "times")
    assert text("TLB size of the 604 relative to the 603")["value"] == 2
    assert text("cache size of the 604 relative to the 603")["value"] == 2


def test_text_numbers_are_printed_on_their_lines(seed_lines):
    df = data.load(TEXT)
    for row in df.itertuples():
        lines = [seed_lines[n] for n in seed_line_numbers(row.page)]
        assert any(row.value_printed in line for line in lines), row.quantity
        # and the value is a number in the printed text ('double' reads as 2)
        numbers = [float(n) for n in re.findall(r"\d+", row.value_printed)]
        assert row.value in numbers or (row.value_printed == "double" and row.value == 2)


def test_every_number_in_the_surviving_text_is_in_data(seed_lines):
    """The paper's prose (not Table 3, not the page furniture) holds only these numbers."""
    prose = "\n".join(seed_lines[16:31])
    # page furniture: the table's name, the reference [1], the web address
    prose = prose.replace("[1]", "").replace("Table 3", "")
    printed = sorted(int(n) for n in re.findall(r"\d+", prose))
    df = data.load(TEXT)
    # '604' and '603' name processors, not quantities
    quantities = sorted(n for n in printed if n not in (603, 604))
    assert quantities == sorted(int(v) for v in df["value"] if v != 2)
    assert prose.count("double") == 1  # one "double", two rows: TLB and cache
    assert "double the size TLB and cache" in prose


def test_every_dataset_names_the_paper():
    for name in NAMES:
        df = data.load(name)
        assert set(df["source"]) == {"Dougan 1999"}
        assert df["page"].str.contains("seed line").all()


def test_bar_panels_plot_table3_as_loaded():
    from emu.present import plot

    df = data.load(TABLE3)
    columns = {"null_syscall_us": "null syscall (us)", "pipe_bandwidth_mb_s": "pipe bw (MB/s)"}
    colors = [plot.COLORS.get(k, plot.COLORS["published"]) for k in df["kernel"]]
    fig = plot.bar_panels(df, "os", columns, colors=colors, source=data.provenance(df))
    assert len(fig.data) == 2
    syscall, bandwidth = fig.data
    assert list(syscall.y) == list(df["os"]) and list(syscall.x) == [2, 18, 15, 19, 11]
    assert list(bandwidth.x) == [52, 36, 9, 15, 21]
    assert (syscall.xaxis, bandwidth.xaxis) == ("x", "x2")  # one axis per unit
    assert list(syscall.marker.color[:2]) == [plot.COLORS["optimized"], plot.COLORS["original"]]
    assert [a.text for a in fig.layout.annotations] == list(columns.values())
    assert "Dougan 1999, Table 3" in fig.layout.title.subtitle.text
    with pytest.raises(ValueError, match="2 colours for 5 rows"):
        plot.bar_panels(df, "os", columns, colors=colors[:2])


def test_node13_and_node6_numbers_as_printed():
    """node13 (idle task page clearing) and node6 (the kernel mapped by the BATs), from the
    USENIX HTML version: each value beside the printed words or the printed magnitude."""
    idle = data.load("dougan1999_node13_idle_task")
    assert list(zip(idle["configuration"], idle["value"], idle["value_printed"])) == [
        ("cached, used", 2, "nearly twice as long"),
        ("uncached, not used", 1, "no performance loss or gain"),
        ("uncached, not used", 1, "didn't change")]
    nodes = data.load("dougan1999_node_numbers")
    node6 = nodes[nodes["page"].str.startswith("node6")]
    assert list(node6["value"]) == [219, 197, 10, 1, 813, 20, 4, 10, 8, 20]
    assert (node6["subject"] == "kernel compile").all()
