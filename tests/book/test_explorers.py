"""The book's explorers (emu.book.explorers): driven through their widgets, each redraw shows the
values its measurement gives for the new settings; what can be counted by hand is."""
import pytest

from emu.book import explorers as X
from emu.papers import dougan1999


def ys(explorer, trace=0):
    return [float(v) for v in explorer.figure.data[trace].y]


def test_store_loop_explorer():
    ex = X.store_loop_explorer()
    ex.widget()
    kb = list(X.STORE_LOOP_KB)
    # the 750's L1 D: 32 KB. fill_words' second pass misses nothing up to 32 KB and, from
    # 48 KB (LRU-like: the pass evicts each line before it comes round), one store in
    # eight: a 32 B line holds 8 words. 12.5%.
    miss = dict(zip(kb, ys(ex)))
    assert all(miss[k] == 0 for k in kb if k <= 32)
    assert all(miss[k] == 12.5 for k in kb if k >= 48)
    ex.widgets["line"].value = 64                    # 16 words a line: 6.25%
    miss = dict(zip(kb, ys(ex)))
    assert all(miss[k] == 6.25 for k in kb if k >= 48) and miss[32] == 0
    ex.widgets["size"].value = 8192                  # the cliff moves to 8 KB
    miss = dict(zip(kb, ys(ex)))
    assert miss[8] == 0 and miss[16] == 6.25
    direct = X.store_loop(16, X.cache_spec("L1D", 8192, 8, 64, "plru"))
    assert ys(ex, 1)[kb.index(16)] == direct["cycles_per_byte"]


def test_store_loop_explorer_shows_a_refused_geometry_and_recovers():
    ex = X.store_loop_explorer()
    ex.widget()
    before = ex.figure
    ex.widgets["ways"].value = 12                   # 32 KB of 32 B lines is not 12-way
    assert ex.figure is before
    assert ex.error == ("ValueError: cache L1D: size 32768 is not a multiple of ways x line "
                        "= 12 x 32")
    assert "not a multiple of ways x line" in ex._message.value
    ex.widgets["policy"].value = "plru"             # still refused, still no traceback
    assert ex.error is not None
    ex.widgets["ways"].value = 16
    assert ex.error is None and ex.figure is not before


def test_flush_explorer():
    ex = X.flush_explorer()
    ex.widget()
    written, again = ys(ex, 0), ys(ex, 1)
    one = X.flush_cost(1, X.cache_spec("L1D", 32768, 8, 32, "plru"),
                       X.cache_spec("L2", 1048576, 2, 128))
    assert written[0] == one["cycles_per_page"]
    assert len(set(again)) == 1 and again[0] < written[0]     # clean pages: the same cost
    ex.widgets["l2_size"].value = 262144                       # 64 B lines (the datasheet)
    l2 = X.cache_spec("L2", 262144, 2, 64)
    assert ys(ex, 0)[-1] == X.flush_cost(64, X.cache_spec("L1D", 32768, 8, 32, "plru"),
                                         l2)["cycles_per_page"]


def test_a_16_byte_line_leaves_half_the_page_dirty():
    """The routine steps 32 bytes (the 750's line, compiled into the kernel): with 16 B
    lines in the model it writes back 128 of the page's 256 dirty lines."""
    r = X.flush_cost(1, X.cache_spec("L1D", 32768, 8, 16, "plru"),
                     X.cache_spec("L2", 1048576, 2, 128))
    assert r["l1d_writebacks_per_page"] == 128
    full = X.flush_cost(1, X.cache_spec("L1D", 32768, 8, 32, "plru"),
                        X.cache_spec("L2", 1048576, 2, 128))
    assert full["l1d_writebacks_per_page"] == 128 and full["instructions_per_page"] == 777


def test_copy_curve_takes_the_path_the_threshold_says():
    """Into a cold destination, 2.6.12's copy reads every destination line for ownership:
    one L3 miss per 64 B line. The patched copy from its threshold on is non-temporal: none."""
    curve = X.copy_curve(512, "cold destination", sizes=(256, 512))
    assert curve["l3_misses"][0] == pytest.approx(256 / 64, abs=0.01)
    assert curve["l3_misses"][1] < 0.01
    with pytest.raises(ValueError, match=r"cache L3: 3 sets is not a power of two \(size / "
                                         r"\(ways x line\) = 1536 / \(8 x 64\)\)"):
        X.copy_curve(512, "cold destination", l3_size=1536)


def test_copy_explorer():
    ex = X.copy_explorer()
    ex.widget()
    old, patched = ys(ex, 0), ys(ex, 1)
    sizes = list(X.COPY_SIZES)
    assert len(old) == len(patched) == len(sizes)
    ex.widgets["threshold"].value = 2048
    curve = X.copy_curve(2048, "cold destination")
    assert ys(ex, 1) == [c / s for c, s in zip(curve["cycles"], sizes)]
    assert ys(ex, 0) == old                                    # 2.6.12's does not move
    assert ex.figure.layout.shapes[0].x0 == 2048


def test_mmap_explorer():
    ex = X.mmap_explorer()
    ex.widget()
    labels = [t.name for t in ex.figure.data]
    assert labels == list(dougan1999.FLUSHES.values())
    search, context = ys(ex, 0), ys(ex, 1)
    # 64 KB is 16 pages, not more than the 20 above which 2.2.0 takes a new context:
    # both flushes search every page; the one store's DSI runs 2.1.51's DataAccess and
    # hash_page under "search", 2.2.0's under "context" (measured: 5 cycles apart in
    # session 29, -3 since session 30, when 2.1.51's SYNCs became lone syncs, two isyncs
    # fewer at 4 cycles: tests/papers/test_dougan1999_mmu.py)
    assert (search[0] - context[0]) * X.CLOCK_MHZ_604 == pytest.approx(5 - 8)
    ex.widgets["htab_size"].value = 262144
    mm = dougan1999.mmap_latency(X.MMAP_SIZES, caches=(X.cache_spec("L1D", 16384, 4, 32),),
                                 htab_size=262144, executor="serial")
    expected = mm["cycles"].unstack("flush")["search"] / X.CLOCK_MHZ_604
    assert ys(ex, 0) == list(expected)


def test_locked_adds_explorer():
    ex = X.locked_adds_explorer()
    ex.widget()
    assert [t.name for t in ex.figure.data] == list(X.LOCK_PROFILES)
    before = [ys(ex, i) for i in range(3)]
    ex.widgets["quantum"].value = 1000        # the cores' order follows their clocks:
    assert [ys(ex, i) for i in range(3)] == before       # the quantum changes nothing
    ex.widgets["layout"].value = "one line"
    expected = X.locked_adds("cortex-a9", 4, layout="one line", quantum=1000)
    assert ys(ex, 1)[X.LOCK_CORES.index(4)] == expected["cycles_per_add"]
    with pytest.raises(ValueError, match="profile must be one of power4, cortex-a9, pentium4"):
        X.locked_adds("ppc603e", 2)


def test_unlock_explorer_follows_the_pl310s_sync_cost():
    """Yun 2011's PK2 page: unlock_page on 1-4 cores at once, mainline's sync under
    l2x0_lock. One core: the routine's 187 cycles outside the PL310's two syncs (41 + 22 of
    unlock_page's own, 2 x 62 of the locked sync path) plus the two syncs; four cores: the
    eight syncs back to back plus a handover of the lock between them that does not depend
    on the sync's cost. smp_mb() (PK2) never reaches the PL310: 51 cycles on any count."""
    ex = X.unlock_explorer()
    ex.widget()
    rest = set()
    for sync in (40, 160):
        ex.widgets["cache_sync"].value = sync
        stock, pk2 = ys(ex, 0), ys(ex, 1)
        assert stock[0] == 187 + 2 * sync and stock[3] > 8 * sync
        rest.add(stock[3] - 8 * sync)
        assert pk2 == [51, 51, 51, 51]
    assert len(rest) == 1
    # the lock-free sync: the eight syncs back to back and the 46 cycles around them
    for sync in (40, 160):
        assert X.unlock_race(4, "mb", sync, "atomic")["cycles"] == 8 * sync + 46
    with pytest.raises(ValueError, match="barrier must be one of"):
        X.unlock_race(2, barrier="wmb")


def test_the_online_figure_of_a_real_explorer(monkeypatch):
    """The toolkit's several-cores explorer in the book build: one frame per point of its
    online grid (3 quanta x 2 layouts; 100 adds only), each with the three profiles' traces,
    its menus named after the explorer's controls; a frame holds what the measurement gives
    for its settings (counted here again for one point)."""
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setenv("EMU_BOOK_BUILD", "1")
    ex = X.locked_adds_explorer()
    figures = ex.online_figures(executor="serial")
    assert len(figures) == len(ex.online_grid()) == 3 * 2
    for figure in figures.values():
        assert [t["name"] for t in figure["data"]] == list(X.LOCK_PROFILES)
    one_line_q10 = decoded(figures[(0, 0, 1)]["data"][1]["y"])[X.LOCK_CORES.index(4)]
    assert one_line_q10 == X.locked_adds("cortex-a9", 4, quantum=10,
                                         layout="one line")["cycles_per_add"]
    ex.show()
    page = shown[0]["text/html"]
    assert page.count("<select ") == 2 and "adds per core: 100 (the notebook: " \
        "50, 100, 200)" in page
    assert page_menus(page) == [
        ("quantum (cycles)", ["10", "100", "1000"]),
        ("lock and counter on", ["separate lines", "one line"])]


def page_menus(page):
    """Each <select> of a page: its label and its options."""
    import re
    menus = re.findall(r'<label for="[^"]+">([^<]+)</label> <select [^>]*>(.*?)</select>', page)
    return [(label, re.findall(r"<option [^>]*>([^<]*)</option>", options))
            for label, options in menus]


def decoded(values):
    """A figure dict's array: plotly writes numpy arrays as base64 (``bdata``)."""
    import base64

    import numpy as np
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"]).tolist()
    return list(values)
