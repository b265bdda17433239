"""emu.present.switch: a figure whose controls switch between precomputed figures, checked
in Python and, in Chromium, by choosing with the keyboard from a menu and a slider."""
from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest

from emu.present import plot
from emu.present.switch import book_html, switch_frames

CONTROLS = [("policy", ["lru", "fifo"], "menu"), ("size", ["8 KB", "16 KB", "32 KB"], "slider")]


def grid(refuse=()):
    figures = {}
    for p in range(2):
        for s in range(3):
            figures[(p, s)] = (f"size {s} refused" if (p, s) in refuse else
                               plot.style(go.Figure(go.Bar(x=["a"], y=[10 * p + s])),
                                          title="bars of a title long enough to reach "
                                                "the mode bar on a phone", x="which",
                                          y="value"))
    return figures


def frames_of(page: str) -> dict:
    """The frames a page's script switches between."""
    return json.loads(re.search(r'\("emu-fig-[0-9a-f]+", (\[.*?\]), (\{.*\}), \[', page,
                                re.S)[2])


def test_every_combination_is_a_frame():
    frames = switch_frames(grid(), CONTROLS, (1, 2))
    assert sorted(frames) == ["0,0", "0,1", "0,2", "1,0", "1,1", "1,2"]
    assert frames["0,1"]["data"][0]["y"] == [1] and frames["1,2"]["data"][0]["y"] == [12]


def test_the_page_has_labelled_controls_set_to_the_default_and_each_frames_sentence():
    plot.setup()
    page = book_html(grid(refuse={(0, 0)}), CONTROLS, (1, 2), note="<p id='note'>n</p>")
    assert page.endswith("<p id='note'>n</p>") and page.count('class="plotly-graph-div"') == 1
    key = re.search(r'id="(emu-fig-[0-9a-f]+)"', page)[1]
    assert f'<label for="{key}-control0">policy</label> <select id="{key}-control0">' \
           '<option value="0">lru</option><option value="1" selected>fifo</option></select>' \
           in page
    assert f'<input type="range" id="{key}-control1" min="0" max="2" step="1" value="2" ' \
           'aria-valuetext="32 KB">' in page
    assert re.search(f'id="{key}-alt" aria-live="polite">With policy fifo and size 32 KB: '
                     'Bar chart titled', page)
    frames = frames_of(page)
    assert frames["0,0"]["alt"] == "With policy lru and size 8 KB: Not drawn: size 0 refused"
    assert frames["0,1"]["alt"].startswith("With policy lru and size 16 KB: Bar chart")
    assert frames["0,1"]["csv"].splitlines()[1].endswith(",a,1")


def test_bad_grids_are_refused():
    with pytest.raises(ValueError, match="no figure for the combinations"):
        book_html({k: v for k, v in grid().items() if k != (1, 2)}, CONTROLS, (0, 0))
    with pytest.raises(ValueError, match="default combination"):
        book_html(grid(refuse={(0, 0)}), CONTROLS, (0, 0))
    with pytest.raises(ValueError, match="kind must be one of"):
        book_html(grid(), [CONTROLS[0], ("size", ["a", "b", "c"], "knob")], (0, 0))
    with pytest.raises(ValueError, match="has no options"):
        book_html(grid(), [CONTROLS[0], ("size", [], "slider")], (0, 0))


MODEBAR_OVER_TITLE = """() => {
  const a = document.querySelector('.modebar').getBoundingClientRect();
  const b = document.querySelector('.gtitle').getBoundingClientRect();
  return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom; }"""


def test_the_keyboard_switches_the_figure_its_sentence_and_csv_and_phones_keep_their_layout(
        tmp_path):
    """book_html in Chromium, no kernel: Tab reaches the menu and the slider; a choice by
    keyboard draws its combination, reads out its sentence and offers its CSV; at 390 px
    the figure takes its narrow layout (emu.present.narrow: 12 px text) and keeps it after a
    choice; at 1280 px it keeps the wide one (the template's 14 px)."""
    from plotly.offline import get_plotlyjs

    from tests.book.test_book import CHROMIUM, CHROMIUM_ARGS, _browser_or_skip
    sync_playwright = _browser_or_skip()
    plot.setup()
    body = book_html(grid(), CONTROLS, (0, 0))
    page_file = tmp_path / "book.html"
    page_file.write_text(f"<html><head><script>{get_plotlyjs()}</script></head>"
                         f"<body style='margin:0 16px'>{body}</body></html>", encoding="utf-8")
    state = """() => { const gd = document.querySelector('.js-plotly-plot');
                       return [gd._fullData[0].y[0], gd._fullLayout.font.size]; }"""
    alt = "() => document.querySelector('.emu-figure-alt').textContent"
    csv = "() => decodeURIComponent(document.querySelector('.emu-figure-data a').href)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for width, font in ((390, 12), (1280, 14)):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                       else r.abort())
            page.goto(page_file.as_uri())
            page.wait_for_selector(".js-plotly-plot svg.main-svg")
            page.wait_for_function(f"() => ({state})()[1] === {font}")
            assert not page.evaluate(MODEBAR_OVER_TITLE)
            page.locator("body").focus()
            for _ in range(10):         # Tab until the menu has the focus
                page.keyboard.press("Tab")
                if page.evaluate("() => document.activeElement.tagName") == "SELECT":
                    break
            page.keyboard.press("ArrowDown")          # policy: fifo
            page.wait_for_function(f"() => ({state})()[0] === 10")
            page.keyboard.press("Tab")                # the slider
            assert page.evaluate("() => document.activeElement.type") == "range"
            page.keyboard.press("ArrowRight")         # size: 16 KB
            page.wait_for_function(f"() => ({state})()[0] === 11")
            assert page.evaluate(alt).startswith("With policy fifo and size 16 KB: Bar chart")
            assert page.evaluate(csv).splitlines()[1].endswith(",a,11")
            assert page.locator("output").text_content() == "16 KB"
            page.wait_for_timeout(500)
            assert page.evaluate(state) == [11, font]
            page.close()
        browser.close()
