"""emu.present.switch: a figure whose menus and slider switch between precomputed figures,
checked in Python and, in Chromium, by choosing from a menu and a slider."""
from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest

from emu.present.switch import switch_frames, switching

CONTROLS = [("policy", ["lru", "fifo"], "menu"), ("size", ["8 KB", "16 KB", "32 KB"], "slider")]


def grid(refuse=()):
    figures = {}
    for p in range(2):
        for s in range(3):
            figures[(p, s)] = (f"size {s} refused" if (p, s) in refuse else
                               go.Figure(go.Bar(x=["a"], y=[10 * p + s], name=f"p{p}s{s}")))
    return figures


def test_every_combination_is_a_frame_with_its_controls_set():
    figure, script = switching(grid(), CONTROLS, (1, 2))
    assert figure["data"][0]["y"] == [12]
    assert [m["active"] for m in figure["layout"]["updatemenus"]] == [1]
    assert figure["layout"]["sliders"][0]["active"] == 2
    assert [b["label"] for b in figure["layout"]["updatemenus"][0]["buttons"]] == [
        "policy: lru", "policy: fifo"]
    frames = switch_frames(grid(), CONTROLS, (1, 2))
    assert json.dumps(frames["1,2"]) in script
    assert sorted(frames) == ["0,0", "0,1", "0,2", "1,0", "1,1", "1,2"]
    assert frames["0,1"]["data"][0]["y"] == [1]
    assert frames["0,1"]["layout"]["sliders"][0]["active"] == 1
    assert "{plot_id}" in script


def test_a_refused_combination_says_why_and_bad_grids_are_refused():
    frame = switch_frames(grid(refuse={(0, 0)}), CONTROLS, (1, 1))["0,0"]
    assert frame["data"] == [] and "size 0 refused" in frame["layout"]["annotations"][0]["text"]
    with pytest.raises(ValueError, match="no figure for the combinations"):
        switching({k: v for k, v in grid().items() if k != (1, 2)}, CONTROLS, (0, 0))
    with pytest.raises(ValueError, match="default combination"):
        switching(grid(refuse={(0, 0)}), CONTROLS, (0, 0))
    with pytest.raises(ValueError, match="kind must be one of"):
        switching(grid(), [CONTROLS[0], ("size", ["a", "b", "c"], "knob")], (0, 0))


def test_choosing_in_the_browser_draws_the_precomputed_figure(tmp_path):
    """Open the figure in Chromium with no kernel: a menu choice and a slider step each
    draw their combination's bars."""
    import plotly.io as pio

    from tests.book.test_book import CHROMIUM, CHROMIUM_ARGS, _browser_or_skip
    from emu.present.plot import CONFIG
    sync_playwright = _browser_or_skip()
    figure, script = switching(grid(), CONTROLS, (0, 0))
    html = pio.to_html(figure, include_plotlyjs=True, full_html=True, config=CONFIG,
                       post_script=script, div_id="fig", validate=False)
    page_file = tmp_path / "switch.html"
    page_file.write_text(html, encoding="utf-8")
    bar_value = "() => document.getElementById('fig').data[0].y[0]"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                   else r.abort())
        page.goto(page_file.as_uri())
        page.wait_for_selector("#fig svg.main-svg")
        assert page.evaluate(bar_value) == 0
        page.locator("#fig .updatemenu-header").first.click()
        page.locator("#fig .updatemenu-dropdown-button").nth(1).click()   # policy: fifo
        page.wait_for_function(f"() => ({bar_value})() === 10")
        # the slider's rail takes the click, at the step's label (32 KB)
        label = page.locator("#fig .slider-label", has_text=re.compile("^32 KB$")).bounding_box()
        rail = page.locator("#fig .slider-rail-touch-rect").first.bounding_box()
        page.mouse.click(label["x"] + label["width"] / 2, rail["y"] + rail["height"] / 2)
        page.wait_for_function(f"() => ({bar_value})() === 12")
        browser.close()


def test_the_book_figure_switches_and_keeps_its_phone_layout(tmp_path):
    """book_html in Chromium, no kernel: at 390 px the figure takes its narrow layout
    (emu.present.narrow: 12 px text) and keeps it after a menu choice draws another
    combination; at 1280 px it keeps the wide one (the template's 14 px)."""
    from plotly.offline import get_plotlyjs

    from emu.present import plot
    from emu.present.switch import book_html
    from tests.book.test_book import CHROMIUM, CHROMIUM_ARGS, _browser_or_skip
    sync_playwright = _browser_or_skip()
    plot.setup()
    figures = {k: plot.style(f, title="bars", x="which", y="value") if not isinstance(f, str)
               else f for k, f in grid().items()}
    body = book_html(figures, CONTROLS, (0, 0), note="<p id='note'>offers</p>")
    assert body.count('class="plotly-graph-div"') == 1 and body.endswith("<p id='note'>offers</p>")
    page_file = tmp_path / "book.html"
    page_file.write_text(f"<html><head><script>{get_plotlyjs()}</script></head>"
                         f"<body style='margin:0 16px'>{body}</body></html>", encoding="utf-8")
    state = """() => { const gd = document.querySelector('.js-plotly-plot');
                       return [gd._fullData[0].y[0], gd._fullLayout.font.size]; }"""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for width, font in ((390, 12), (1280, 14)):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                       else r.abort())
            page.goto(page_file.as_uri())
            page.wait_for_selector(".js-plotly-plot svg.main-svg")
            page.wait_for_function(f"() => ({state})()[1] === {font}")
            page.locator(".updatemenu-header").first.click()
            page.locator(".updatemenu-dropdown-button").nth(1).click()     # policy: fifo
            page.wait_for_function(f"() => ({state})()[0] === 10")
            page.wait_for_timeout(500)
            assert page.evaluate(state) == [10, font]
            page.close()
        browser.close()
