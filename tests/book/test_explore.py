"""emu.book.explore: controls from a spec, a redraw on every change, refused combinations shown
in the message line (the explorer keeps working), the static figure in the book build."""
import json
import re

import plotly.graph_objects as go
import pytest

from emu.book.explore import Control, Explorer, kb
from emu.book.explorers import cache_spec, store_loop


def lines(size, ways, line):
    """A figure of one trace: the geometry's number of lines and of sets; refuses what the
    cache model refuses (through the library's own check)."""
    from emu.hw.profile import parse_cache_spec
    level = parse_cache_spec(cache_spec("L1D", size, ways, line))
    return go.Figure(go.Scatter(x=["lines", "sets"], y=[size // line, level.sets]))


def make():
    return Explorer(lines, {
        "size": Control("size", [8192, 16384, 32768], 32768, format=kb),
        "ways": Control("ways", [1, 2, 4, 6, 8], 8),
        "line": Control("line", [32, 64], 32),
    })


def test_controls_from_the_spec():
    ex = make()
    w = ex.widget()
    assert set(ex.widgets) == {"size", "ways", "line"}
    assert type(ex.widgets["size"]).__name__ == "ToggleButtons"      # three options
    assert type(ex.widgets["ways"]).__name__ == "SelectionSlider"    # more than three numbers
    assert ex.widgets["size"].label == "32 KB" and ex.widgets["size"].value == 32768
    assert w is ex.widget()                                          # made once


def test_first_draw_is_the_defaults():
    ex = make()
    assert list(ex.figure.data[0].y) == [1024, 128]          # 32 KB / 32 B; / 8 ways
    assert ex.error is None


def test_a_widget_change_redraws_with_the_new_value():
    ex = make()
    ex.widget()
    ex.widgets["ways"].value = 2
    assert list(ex.figure.data[0].y) == [1024, 512]
    ex.widgets["line"].value = 64
    assert list(ex.figure.data[0].y) == [512, 256]
    assert ex.values == {"size": 32768, "ways": 2, "line": 64}


def test_a_refused_combination_shows_the_library_error_and_keeps_the_figure():
    ex = make()
    ex.widget()
    before = ex.figure
    ex.widgets["ways"].value = 6                   # 32768 is not a multiple of 6 x 32
    assert ex.figure is before
    assert ex.error == ("ValueError: cache L1D: size 32768 is not a multiple of ways x line "
                        "= 6 x 32")
    assert "not a multiple of ways x line" in ex._message.value
    assert "color:#b00020" in ex._message.value
    ex.widgets["ways"].value = 4                   # the explorer still works
    assert list(ex.figure.data[0].y) == [1024, 256]
    assert ex.error is None and ex._message.value == ""


def test_set_is_what_the_controls_do_and_moves_the_widgets():
    ex = make()
    ex.widget()
    ex.set(size=8192, ways=1)
    assert list(ex.figure.data[0].y) == [256, 256]
    assert ex.widgets["size"].value == 8192 and ex.widgets["ways"].value == 1
    with pytest.raises(ValueError, match="no control 'colour'"):
        ex.set(colour="red")
    with pytest.raises(ValueError, match="3 is not an option of control 'ways'"):
        ex.set(ways=3)


def test_a_redraw_of_a_real_run():
    """The L1 D's misses of a store loop's second pass over 64 KB: more than the 32 KB
    cache, so under LRU every line misses again: 65536 / 32 = 2048 misses; with 64 B
    lines 1024. Over 16 KB (it fits) none."""
    def draw(line, kb_touched):
        r = store_loop(kb_touched, cache_spec("L1D", 32768, 8, line, "lru"))
        return go.Figure(go.Bar(y=[r["misses"], r["accesses"]]))
    ex = Explorer(draw, {"line": Control("line", [32, 64], 32),
                         "kb_touched": Control("KB", [16, 64], 64)})
    ex.widget()
    assert list(ex.figure.data[0].y) == [2048, 16384]
    ex.widgets["line"].value = 64
    assert list(ex.figure.data[0].y) == [1024, 16384]
    ex.widgets["kb_touched"].value = 16
    assert list(ex.figure.data[0].y) == [0, 4096]


def test_show_in_the_book_build_is_the_switching_figure(monkeypatch):
    """In the build: one HTML figure, every combination of the online options a frame
    (a refused one saying why), a menu or slider per control that moves, a line naming
    what it offers; no widget. Elsewhere: the controls, the message, the figure."""
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    monkeypatch.setenv("EMU_BOOK_BUILD", "1")
    ex = Explorer(lines, {
        "size": Control("size", [8192, 16384, 32768], 32768, format=kb),
        "ways": Control("ways", [1, 2, 4, 6, 8], 8, online=(6, 8)),
        "line": Control("line", [32, 64], 32, online=(32,)),
    })
    grid = ex.online_grid()
    assert len(grid) == 3 * 2 and {v["line"] for v in grid} == {32}
    figures = ex.online_figures(executor="serial")
    assert figures[(1, 1, 0)]["data"][0]["y"] == [512, 64]         # 16 KB, 8-way, 32 B
    assert figures[(0, 0, 0)].startswith("ValueError: cache L1D: size 8192 is not a multiple")
    ex.show()
    assert ex.widgets == {} and len(shown) == 1
    page = shown[0]["text/html"]
    frames = json.loads(re.search(r'\("emu-fig-\w+", \[.*?\], (\{.*\}), \[\d+, \d+\], \d+\);',
                                  page, re.S)[1])
    assert sorted(frames) == ["0,0", "0,1", "1,0", "1,1", "2,0", "2,1"]
    assert frames["2,1"]["data"][0]["y"] == [1024, 128]              # the defaults
    assert frames["0,0"]["data"] == []                               # refused, and says so
    assert frames["0,0"]["alt"].startswith("With size 8 KB and ways 6: Not drawn: ValueError")
    assert re.search(r'<label for="[\w-]+">size</label> <select [^>]+><option value="0">8 KB'
                     r'</option><option value="1">16 KB</option><option value="2" selected>'
                     r'32 KB</option></select>', page)               # 3 sizes: a menu
    assert re.search(r'<label for="[\w-]+">ways</label> <input type="range" [^>]*max="1" '
                     r'step="1" value="1" aria-valuetext="8">', page)   # 5 numbers: a slider
    assert "line: 32 (the notebook: 32, 64)" in page and "ways: 6, 8 (the notebook:" in page
    ex.set(ways=4)                  # a value the online figure does not offer: refused
    with pytest.raises(ValueError, match="ways 4 is not one of the online figure's values"):
        ex.show()
    monkeypatch.setenv("EMU_BOOK_BUILD", "0")
    ex.show()
    assert type(shown[-1]).__name__ == "VBox"       # the controls, the message, the figure


def test_show_where_a_program_runs_the_notebook_is_the_figure_alone(monkeypatch):
    """EMU_HEADLESS (the grader's kernels): the figure for the settings, no widget (nbclient
    can lose its next request after one) and no grid of online figures."""
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append(obj))
    monkeypatch.delenv("EMU_BOOK_BUILD", raising=False)
    monkeypatch.setenv("EMU_HEADLESS", "1")
    ex = Explorer(lines, {"size": Control("size", [16384, 32768], 32768, format=kb),
                          "ways": Control("ways", [4, 8], 8), "line": Control("line", [32], 32)})
    ex.show()
    assert shown == [ex.figure] and ex.widgets == {}
    monkeypatch.setenv("EMU_HEADLESS", "0")
    ex.show()
    assert type(shown[-1]).__name__ == "VBox"


def test_bad_specs_are_refused():
    with pytest.raises(ValueError, match="the default 3 is not one of its options"):
        Control("ways", [1, 2], 3)
    with pytest.raises(ValueError, match="online must be some of its options"):
        Control("ways", [1, 2], 2, online=(1,))
    with pytest.raises(ValueError, match="online must be some of its options"):
        Control("ways", [1, 2], 2, online=(2, 4))
    with pytest.raises(ValueError, match="control 'ways' must be a Control"):
        Explorer(lines, {"ways": [1, 2]})
    with pytest.raises(ValueError, match="the default settings do not draw: ValueError: "
                                         "cache L1D: size 32768 is not a multiple"):
        Explorer(lines, {"size": Control("size", [32768], 32768),
                         "ways": Control("ways", [6], 6), "line": Control("line", [32], 32)})


def test_kb_labels():
    assert [kb(v) for v in (512, 8192, 1 << 20, 3 << 19)] == ["512 B", "8 KB", "1 MB", "1.5 MB"]
