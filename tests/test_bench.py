"""The throughput benchmark's accounting (no timing is asserted: speed is for benchmarks/)."""
from pathlib import Path

import pytest

from emu import bench
from emu.run.machine import Machine

QEMU_TLB_ENTRIES = 256        # QEMU's default soft TLB: direct-mapped, indexed by page number


@pytest.mark.parametrize("isa", ["ppc32", "ppc64", "arm", "x86"])
def test_the_figure_counts_every_guest_access_once(isa):
    t = bench.measure(isa, buffer_bytes=4096, passes=2, repeat=1)
    words = 4096 // (8 if isa == "ppc64" else 4)
    assert t.accesses == 2 * 2 * words
    # x86 also reads its three stacked arguments and pops the return address, per call
    assert t.counted == t.accesses + (2 * 4 if isa == "x86" else 0)
    assert t.raw > 0 and t.empty_hooks > 0 and t.instrumented > 0


def test_layouts_place_the_pages_in_one_qemu_tlb_entry_or_not():
    for layout, gap, same_entry in (("adjacent", 0, True), ("offset", 4096, False)):
        machine = Machine("ppc750", ram_size=8 << 20)
        src, dst = bench.place_buffers(machine, 1 << 20, layout)
        assert dst - src == (1 << 20) + gap
        pages = [(a >> 12) % QEMU_TLB_ENTRIES for a in (src, dst)]
        assert (pages[0] == pages[1]) is same_entry


def test_a_bad_layout_is_refused():
    with pytest.raises(ValueError, match="layout must be one of adjacent, offset, not 'far'"):
        bench.measure("ppc32", layout="far")


def test_the_report_has_a_row_per_isa_and_layout():
    text = bench.report(("arm",), ("offset",), buffer_bytes=4096, passes=1, repeat=1)
    rows = [line for line in text.splitlines() if line.startswith("| arm")]
    assert [row.split(" | ")[2] for row in rows] == ["offset"]
    assert "empty native hooks" in text.splitlines()[0]


def _pc_restore_benchmark():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).parent.parent / "benchmarks" / "pc_restore.py"
    spec = importlib.util.spec_from_file_location("pc_restore", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_skipping_unicorns_pc_restore_changes_speed_not_results():
    """benchmarks/pc_restore.py pokes Unicorn's private flag only after checking the byte
    behaves as the flag; with it set the model counts exactly what it counts without it
    (where the model reads no PC on accesses: power4's store queues do, and are left out)."""
    pc_restore = _pc_restore_benchmark()
    pc_restore.check_flag()
    for isa, same in (("ppc32", True), ("arm", True), ("x86", True), ("ppc64", None)):
        rate, result = pc_restore.measure(isa, repeat=1, passes=2, size=1 << 14)
        assert result is same
        assert ("instrumented no restore" in rate) is (same is not None)


def test_the_startup_probe_reaches_its_result_cold_and_warm():
    """The probe asserts the routine's instruction count itself; cold compiles the model."""
    times = bench.startup(repeat=1)
    assert set(times) == {"cold", "warm"}
    assert all(cpu > 0 and wall > 0 for cpu, wall in times.values())
    lines = list(bench.startup_rows(repeat=1))
    assert lines[2].startswith("| cold") and lines[3].startswith("| warm")


def test_the_kernel_section_counts_the_guest_calls_of_every_cpu():
    """On several CPUs the kernel's guest calls are its tasks' (emu.run.parallel.run_tasks):
    they are counted too, each CPU's fork, exit and wait, and more than one CPU's worth."""
    from emu import bench
    _, one = bench.kernel_seconds("lat_proc fork", "cortex-a9", 1, repeat=1)
    _, two = bench.kernel_seconds("lat_proc fork", "cortex-a9", 2, repeat=1)
    assert one > 0 and two > 2 * one
    header, rule, row = bench.kernel_rows([("lat_proc fork", "cortex-a9", 2)])
    assert "CPUs" in header and row.startswith("| lat_proc fork | cortex-a9 | 2 |")


@pytest.mark.parametrize("isa", ["ppc32", "ppc64", "arm", "x86"])
def test_the_call_section_runs_one_instruction_each_way(isa):
    """The empty routine is one instruction (the return) and the bare start one nop: both
    are what the section says, on every ISA."""
    profile, source = bench.EMPTY_ROUTINES[isa]
    m = Machine(profile)
    m.load(source)
    assert m.call("empty").instructions == 1
    assert m.address_of("empty") - m.address_of("one_nop") in (1, 2, 4)   # one nop
    call, bare = bench.call_micros(isa, calls=20, repeat=1)
    assert call > 0 and bare > 0


def test_the_command_line_offers_every_section():
    from emu import __main__ as cli
    assert sorted(cli.BENCH_SECTIONS) == sorted(bench.SECTIONS)


def test_the_page_gets_each_measured_table_between_its_markers(tmp_path):
    """bench --page: a section's lines replace what stood between its markers, the rest of the
    page (prose, other sections) is kept, and the stamp names the date and the command."""
    page = tmp_path / "speed.md"
    sections = "".join(f"## {s}\n{bench.marker(s)}\nold {s}\n{bench.marker(s, True)}\nprose {s}\n"
                       for s in bench.SECTIONS)
    page.write_text("# Speed\n" + sections)
    bench.write_page(page, None, [])                  # every section's markers are there
    bench.write_page(page, "kernel", ["| a | b |", "|---|---|", "| 1 | 2 |", ""],
                     when="1 December 2026")
    text = page.read_text()
    assert "old kernel" not in text and "| 1 | 2 |" in text
    assert "old copy" in text and "prose kernel" in text and "prose copy" in text
    assert "Measured on 1 December 2026" in text and "--section kernel" in text
    between = text.split(bench.marker("kernel"))[1].split(bench.marker("kernel", True))[0]
    assert between.startswith("\n| a | b |") and between.count("| 1 | 2 |") == 1


def test_a_page_without_a_sections_markers_is_refused(tmp_path):
    page = tmp_path / "speed.md"
    page.write_text(f"{bench.marker('copy')}\nx\n{bench.marker('copy', True)}\n")
    with pytest.raises(ValueError, match="startup"):
        bench.write_page(page, None, [])
    page.write_text(f"{bench.marker('copy', True)}\nx\n{bench.marker('copy')}\n")
    with pytest.raises(ValueError, match="copy"):
        bench.write_page(page, "copy", ["| x |"])


def test_the_speed_page_has_every_sections_markers():
    bench.write_page(Path(__file__).resolve().parents[1] / "benchmarks" / "README.md", None, [])
