"""The 32-bit kernel's __copy_tofrom_user (routines/ppc32/copy_tofrom_user.S, after Linux
2.5.66 arch/ppc/lib/string.S with 128-byte lines), run on the POWER4 model as Mackerras 2003
section 3.1's baseline: it copies right at every size and alignment tried, its instruction
counts follow its loops (counted by hand below), and a fault in the source or the
destination returns the bytes not copied through the exception table (the rest of the
destination zeroed after a source fault).

Layout: G | A1 A2 A3 | G | B1 B2 B3 | G (G never mapped); A holds a pattern, B a sentinel.
"""
import random

import pytest

import emu
from emu.hw.layout import PAGE
from emu.kernel import copybench
from emu.run import extable
from emu.run.machine import Machine

ENTRY = "__copy_tofrom_user32"
SENTINEL = 0xEE


def _bench(profile, source):
    """A machine with the routine ``source`` loaded: a source and a destination of three
    pages each between unmapped pages, the source a random pattern."""
    m = Machine(profile)
    m.load(source)
    base = m.alloc(9 * PAGE)
    for page in (0, 4, 8):
        m.uc.mem_unmap(base + page * PAGE, PAGE)
    a, b = base + PAGE, base + 5 * PAGE
    pattern = bytes(random.Random(2566).randrange(256) for _ in range(3 * PAGE))
    m.write(a, pattern)
    return m, a, b, pattern


@pytest.fixture(scope="module")
def bench():
    return _bench("power4", emu.routine("ppc32/copy_tofrom_user.S"))


def _copy(bench, src_off, dst_off, n):
    m, a, b, pattern = bench
    m.write(b, bytes([SENTINEL]) * 3 * PAGE)
    run = m.call(ENTRY, b + dst_off, a + src_off, n)
    want = bytearray([SENTINEL]) * 3 * PAGE
    want[dst_off:dst_off + n] = pattern[src_off:src_off + n]
    return run, m.read(b, 3 * PAGE) == bytes(want)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 15, 16, 100, 127, 128, 129, 255, 256, 300,
                               1000, 4095, 4096, 4100, 8192])
@pytest.mark.parametrize("src, dst", [(0, 0), (3, 0), (0, 5), (1, 127), (8, 8), (64, 2)])
def test_it_copies_every_size_and_alignment_and_nothing_else(bench, n, src, dst):
    run, right = _copy(bench, PAGE // 2 + src if n <= PAGE else src,
                       PAGE // 2 + dst if n <= PAGE else dst, n)
    assert right and run.return_value == 0


def test_a_page_aligned_page_takes_the_line_loop():
    # entry 5 (addi, addi, neg, andi., beq: already on a line); 58: srwi., clrlwi, li, beq
    # = 4; li, dcbt, mtctr = 3; 32 lines of dcbt, dcbz, 32 lwz/stw pairs (64), bdnz = 67
    # each; 63: srwi., mtctr, beq = 3; 64: andi., mtctr, beq = 3; li, blr = 2
    r = copybench.measure("copy_tofrom_user32", 4096)
    assert r.instructions == 5 + 4 + 3 + 32 * 67 + 3 + 3 + 2 == 2164


def test_a_destination_8_bytes_into_a_line_first_copies_words_to_the_line():
    # 120 bytes to the line: entry 5 + cmplw, blt, andi., mtctr, beq (5); 61: subf,
    # srwi., mtctr, beq (4); 30 words of lwzu, stwu, bdnz (90); 58: 4; 3; 3976 bytes = 31
    # lines (2077) and 8 bytes; 63: 3 + 2 words (6); 64: 3; 2
    r = copybench.measure("copy_tofrom_user32", 4096, dst_align=8)
    assert r.instructions == 5 + 5 + 4 + 90 + 4 + 3 + 31 * 67 + 3 + 6 + 3 + 2 == 2202


def test_a_source_fault_copies_what_it_can_then_zeroes_the_rest(bench):
    m, a, b, pattern = bench
    hole = a + PAGE                                # A2 out of the map
    m.write(b, bytes([SENTINEL]) * PAGE)
    with extable.unmapped_page(m, hole):
        run = m.call(ENTRY, b, hole - 60, 100)
    assert run.return_value == 40
    assert m.read(b, 60) == pattern[PAGE - 60:PAGE] and m.read(b + 60, 40) == bytes(40)
    assert m.read(b + 100, 8) == bytes([SENTINEL]) * 8


def _copy_onto_a_hole(bench):
    """300 bytes copied to 100 bytes before an unmapped page (B2 out of the map): the
    bytes not copied, and whether the first 100 arrived."""
    m, a, b, pattern = bench
    hole = b + PAGE
    with extable.unmapped_page(m, hole):
        run = m.call(ENTRY, hole - 100, a, 300)
    return run.return_value, m.read(hole - 100, 100) == pattern[:100]


def test_a_destination_fault_in_the_line_loop_returns_the_bytes_not_copied(bench):
    # 100 bytes to the line (25 words), then dcbz faults on the first line at B2: 200
    # bytes left = one line (ctr 1, << 7) and 72 (r5)
    assert _copy_onto_a_hole(bench) == (200, True)


# ------------------------------------------------- the 6xx's and 4xx's configuration
# (copybench "copy_tofrom_user32_l32": 2.5.66 include/asm-ppc/cache.h gives the 750 and the
# 405GP 32-byte lines and MAX_COPY_PREFETCH 4; the same file, its prelude's .equ lines)

@pytest.fixture(scope="module", params=["ppc750", "ppc405gp"])
def bench32(request):
    routine = copybench.ROUTINES["copy_tofrom_user32_l32"]
    return _bench(request.param,
                  routine.prelude + emu.routine("ppc32/copy_tofrom_user.S").read_text())


@pytest.mark.parametrize("n", [0, 1, 31, 32, 33, 40, 100, 127, 128, 129, 160, 161, 4095,
                               4096, 8192])
@pytest.mark.parametrize("src, dst", [(0, 0), (3, 0), (0, 5), (1, 31), (8, 8)])
def test_with_32_byte_lines_it_copies_every_size_and_alignment(bench32, n, src, dst):
    run, right = _copy(bench32, PAGE // 2 + src if n <= PAGE else src,
                       PAGE // 2 + dst if n <= PAGE else dst, n)
    assert right and run.return_value == 0


@pytest.mark.parametrize("profile", ["ppc750", "ppc405gp"])
def test_with_32_byte_lines_a_page_prefetches_four_lines_then_takes_the_line_loop(profile):
    # entry 5; 58: srwi., clrlwi, li, beq = 4; 128 lines > MAX_COPY_PREFETCH: cmpwi, li,
    # li, ble, li = 5, mtctr 1, four of dcbt, addi, bdnz = 12; mtctr 1; 128 lines of dcbt,
    # dcbz, 16 lwz/stw, bdnz = 19 each; 63: 3; 64: 3; li, blr = 2
    r = copybench.measure("copy_tofrom_user32_l32", 4096, profile=profile)
    assert r.instructions == 5 + 4 + 5 + 1 + 12 + 1 + 128 * 19 + 3 + 3 + 2 == 2468


@pytest.mark.parametrize("profile", ["ppc750", "ppc405gp"])
def test_with_32_byte_lines_a_one_line_copy_prefetches_one_line(profile):
    # 40 bytes from a line's start: entry 5; 58: 4 (one line, 8 bytes left); cmpwi, li,
    # li, ble taken = 4; mtctr 1, one dcbt, addi, bdnz = 3; mtctr 1; one line 19; 63: 3 +
    # 2 words of lwzu, stwu, bdnz (6); 64: 3; 2
    r = copybench.measure("copy_tofrom_user32_l32", 40, profile=profile)
    assert r.instructions == 5 + 4 + 4 + 1 + 3 + 1 + 19 + 3 + 6 + 3 + 2 == 51


def test_with_32_byte_lines_a_destination_fault_returns_the_bytes_not_copied(bench32):
    # 4 bytes to the line (one word), 296 left: 9 lines and 8 bytes; three lines copied,
    # then dcbz faults on the line at B2: ctr 6 (<< 5) + 8 = 200 bytes not copied
    assert _copy_onto_a_hole(bench32) == (200, True)
