"""A compile step's file copies (emu.kernel.fileio): read() and write() cut
into copies as 2.5.66's do_generic_mapping_read and generic_file_aio_write_nolock cut
them, the step's traffic from its estimates, and the copies' cycles from the guest
routines. Every count by hand in the comments."""
import pytest

from emu.hw import estimates
from emu.kernel import copybench, fileio


def test_a_read_is_cut_at_page_boundaries_and_at_the_end_of_the_file():
    # a 10,000-byte file from 100, 9,000 bytes, into a buffer 8 into a page: page 0 from
    # 100 (3,996), page 1 whole, page 2 up to 9,100 (908); the buffer then 4,004 into a page
    assert fileio.read_copies(10_000, 100, 9_000, 8) == [
        (3_996, 100, 8), (4_096, 0, 4_004), (908, 0, 4_004)]
    # asking for more than the file holds stops at i_size (10,000 = 2 pages + 1,808)
    assert fileio.read_copies(10_000, 0, 20_000, 0) == [
        (4_096, 0, 0), (4_096, 0, 0), (1_808, 0, 0)]
    assert fileio.read_copies(10_000, 10_000, 100, 0) == []       # at the end: nothing
    assert fileio.read_copies(8_192, 8_192, 100, 0) == []         # a whole last page too


def test_a_write_is_cut_at_the_page_cache_pages():
    # 6,000 bytes at 5,000: 3,192 to the end of page 1, then 2,808 at the start of page 2
    assert fileio.write_copies(5_000, 6_000, 0) == [(3_192, 0, 904), (2_808, 3_192, 0)]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="count"):
        fileio.read_copies(100, 0, -1, 0)
    with pytest.raises(ValueError, match="pos"):
        fileio.write_copies(1.5, 10, 0)
    with pytest.raises(ValueError, match="files_read"):
        fileio.step_copies({**fileio.STEP_IO, "files_read": 0})


def test_the_step_copies_are_the_estimated_files_cut_into_pages():
    c = fileio.step_copies(fileio.STEP_IO)
    # cpp: 150 files of 600,000 bytes: a 2,048-byte last page each, the other 292,800
    # bytes in whole pages (71.48); the .i (300,000 = 73 pages + 992) written and read,
    # the .s (80,000 = 19 + 2,176) written and read, the .o (20,000 = 4 + 3,616) written
    assert c[(2_048, 0, 8)] == 150
    assert c[(4_096, 0, 8)] == pytest.approx(292_800 / 4_096)
    assert c[(4_096, 0, 0)] == 2 * 73 + 2 * 19 + 4
    assert (c[(992, 0, 0)], c[(2_176, 0, 0)], c[(3_616, 0, 0)]) == (2, 2, 1)
    assert len(c) == 6
    # files under half a page: the last copy is the mean file, no whole page
    small = fileio.step_copies({**fileio.STEP_IO, "files_read": 100, "bytes_read": 100_000})
    assert small[(1_000, 0, 8)] == 100 and (4_096, 0, 8) not in small


def test_the_step_cycles_weight_each_copy_from_memory_and_from_the_l1():
    copies = {(4_096, 0, 0): 2, (100, 0, 8): 3}
    for routine in fileio.ROUTINES.values():
        cold = {k: copybench.measure(routine, *k, cache="cold").cycles for k in copies}
        warm = {k: copybench.measure(routine, *k, cache="warm").cycles for k in copies}
        assert fileio.copy_cycles(routine, copies, 1.0) == sum(n * cold[k] for k, n in copies.items())
        assert fileio.copy_cycles(routine, copies, 0.25) == pytest.approx(sum(
            n * (0.25 * cold[k] + 0.75 * warm[k]) for k, n in copies.items()))
    with pytest.raises(ValueError, match="from_memory"):
        fileio.copy_cycles("copy_tofrom_user32", copies, 1.5)


def test_the_page_copies_are_where_the_power4_routine_gains():
    # a page-aligned page: the 32-bit routine's 2,164 instructions (test_copy_tofrom_user_
    # ppc32) against the six-line loop's; 8 bytes into a page it takes the general loop
    (old_page, new_page), (old_off, new_off) = (
        [copybench.measure(r, 4_096, 0, d).cycles for r in fileio.ROUTINES.values()]
        for d in (0, 8))
    assert new_page < new_off < old_off and new_page < old_page


def test_the_traffic_is_an_estimate_with_its_range_and_moves():
    from emu.book import ranges
    catalog = ranges.catalog()
    for key, value in fileio.STEP_IO.items():
        e = catalog[f"kernel:build_io.{key}"]
        assert e.low <= e.value <= e.high and e.low < e.high and e.why
    with estimates.moved({"kernel:build_io.o_bytes": 40_000}):
        assert fileio.step_io()["o_bytes"] == 40_000
    # the high end of every estimate at once still cuts (the scorecard moves them together)
    high = {k: fileio.STEP_IO_RANGES[k][1] for k in fileio.STEP_IO}
    assert fileio.step_copies(high)
