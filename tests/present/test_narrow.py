"""emu.present.narrow: the phone-width layout of a figure, and the book renderer that switches to it.
(The drawn result, at 390 px, is checked on every figure of the book in test_book.py.)"""
import json

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from emu.present import narrow
from emu.present.narrow import DESIGN_PX, narrow_layout, text_px, wide_layout, wrap


def test_text_width_is_summed_per_character():
    # M 0.97, l 0.36, a 0.64, space 0.36, digit 0.64, capital 0.74 (font sizes)
    assert text_px("Ml", 10) == pytest.approx(13.3)
    assert text_px("a 1B", 10) == pytest.approx(6.4 + 3.6 + 6.4 + 7.4)


def test_wrap_breaks_at_spaces_and_keeps_breaks_and_long_words():
    # "aaa" is 19.2 px at 10 px, "aaa bbb" 42 px
    assert wrap("aaa bbb", 30, 10) == "aaa<br>bbb"
    assert wrap("aaa bbb", 50, 10) == "aaa bbb"
    assert wrap("aaa<br>bbb", 500, 10) == "aaa<br>bbb"
    assert wrap("a_very_long_symbol_name x", 30, 10) == "a_very_long_symbol_name<br>x"


def apply(fig, patch):
    """Set every relayout key on a plotly Figure: an unknown attribute is a ValueError."""
    for key, value in patch.items():
        fig.layout[key] = value
    return fig


def legend_figure():
    fig = go.Figure()
    for name in ("every page searched (1998)", "new context above 20 pages (2.2.0)",
                 "only pages with _PAGE_HASHPTE (2.4)"):
        fig.add_bar(name=name, x=["64 KB", "1024 KB"], y=[1, 2])
    fig.update_layout(title_text="The flush alone at munmap, with a title far too long for a phone",
                      title_subtitle_text="emulated (ppc604 kernel model), with its source",
                      height=380, yaxis_title="cycles (+1, log scale)")
    return fig


def test_legend_below_titles_wrapped_to_the_width_left_by_the_mode_bar():
    fig = legend_figure()
    patch = narrow_layout(fig)
    assert patch["legend.orientation"] == "h" and patch["legend.yref"] == "container"
    assert (patch["legend.y"], patch["legend.yanchor"]) == (0, "bottom")
    assert patch["modebar.orientation"] == "v"     # down the right edge, not over the title
    title, _, subtitle = patch["title.text"].partition("<br><span")
    assert title.count("<br>") >= 1               # the title takes two lines or more
    for line in title.split("<br>"):
        assert text_px(line, narrow.TITLE_PX) <= (DESIGN_PX - 2 * narrow.MARGIN_PX
                                                  - narrow.MODEBAR_PX)
    assert "emulated (ppc604 kernel model)" in subtitle and patch["title.subtitle.text"] == ""
    assert patch["height"] > 380                    # three legend rows and a longer title
    apply(fig, patch)                                # every key is a plotly attribute


def test_wide_layout_gives_back_the_figures_own_values():
    fig = legend_figure()
    patch = narrow_layout(fig)
    wide = wide_layout(fig, patch)
    assert set(wide) == set(patch)
    assert wide["title.text"] == fig.layout.title.text
    assert wide["title.subtitle.text"] == "emulated (ppc604 kernel model), with its source"
    assert wide["height"] == 380 and wide["legend.orientation"] is None
    restored = apply(apply(go.Figure(fig), patch), wide)
    assert restored.layout.title.text == fig.layout.title.text
    assert restored.layout.legend.orientation is None


def test_panels_side_by_side_are_stacked_with_their_titles():
    fig = make_subplots(rows=1, cols=3, subplot_titles=["cycles", "references", "misses"],
                        shared_yaxes=True)
    for col in (1, 2, 3):
        fig.add_bar(x=[1, 2], y=["before", "after"], orientation="h", row=1, col=col)
    fig.update_layout(height=300)
    patch = narrow_layout(fig)
    assert narrow.columns_of_panels(fig) == [("xaxis", "yaxis"), ("xaxis2", "yaxis2"),
                                             ("xaxis3", "yaxis3")]
    domains = [patch[f"yaxis{n}.domain"] for n in ("", "2", "3")]
    assert domains[0][1] == 1 and domains[-1][0] == 0
    for upper, lower in zip(domains, domains[1:]):
        assert upper[0] > lower[1]                  # top to bottom, with a gap between
    assert all(patch[f"xaxis{n}.domain"] == [0, 1] for n in ("", "2", "3"))
    assert patch["yaxis2.showticklabels"] is True   # shared labels: each panel has its own
    for i, domain in enumerate(domains):            # each title sits on its panel
        assert patch[f"annotations[{i}].y"] == domain[1]
        assert patch[f"annotations[{i}].x"] == 0.5
    assert patch["height"] >= 3 * narrow.MIN_PANEL_PX
    apply(fig, patch)


def test_one_panel_or_a_grid_is_not_stacked():
    assert narrow.columns_of_panels(legend_figure()) == []
    grid = make_subplots(rows=2, cols=2)
    assert narrow.columns_of_panels(grid) == []


def test_long_category_labels_are_wrapped_beside_horizontal_bars():
    labels = ["Dougan 1999: pipe latency, Linux/PPC (133 MHz 604)", "short"]
    fig = go.Figure(go.Bar(x=[1, 2], y=labels, orientation="h"))
    patch = narrow_layout(fig)
    assert patch["yaxis.tickvals"] == labels
    wrapped = patch["yaxis.ticktext"]
    assert wrapped[1] == "short" and wrapped[0].replace("<br>", " ") == labels[0]
    for line in wrapped[0].split("<br>"):
        assert text_px(line, narrow.FONT_PX - 1) <= narrow.CATEGORY_LABEL_PX
    assert "xaxis.tickvals" not in patch            # numbers on x: nothing to wrap


def test_labels_under_bars_stay_whole_when_a_word_cannot_fit():
    fig = go.Figure(go.Bar(x=[f"copy_tofrom_user: case {i}" for i in range(6)], y=[1] * 6))
    assert "xaxis.ticktext" not in narrow_layout(fig)   # plotly turns them instead


def test_book_renderer_switches_layouts_and_hides_the_cloud_button(monkeypatch):
    import plotly.io as pio

    import emu.present.plot

    fig = legend_figure()
    html = emu.present.plot.BookHTMLRenderer().to_mimebundle(fig.to_dict())["text/html"]
    assert json.dumps(narrow_layout(fig.to_dict())) in html
    assert f", {narrow.NARROW_BELOW_PX});" in html
    assert '"showSendToCloud": false' in html and '"displaylogo": false' in html
    assert "{plot_id}" not in html                  # plotly put the figure's id in its place
    monkeypatch.setattr(pio.renderers, "default", "colab")
    monkeypatch.setattr(pio.renderers["colab"], "config", {})
    emu.present.plot.setup()
    assert pio.renderers["colab"].config == {"displaylogo": False, "showSendToCloud": False}


def test_desktop_fit_wraps_only_what_would_be_cut_off():
    fits = go.Figure(go.Bar(x=["a", "b"], y=[1, 2]))
    fits.update_layout(title_text="A short title", xaxis_title="bytes")
    assert narrow.fit_wide(fits) == {}
    long = make_subplots(rows=1, cols=2, subplot_titles=["before the patch (__copy_from_user_ll)",
                                                         "after"])
    long.add_bar(x=[1], y=["a"], orientation="h", row=1, col=1)
    long.add_bar(x=[1], y=["a"], orientation="h", row=1, col=2)
    long.update_layout(title_text="Table 3's columns: published (133 MHz 604) and the kernel "
                                  "model at 133 MHz", title_subtitle_text="Source: Dougan 1999")
    patch = narrow.fit_wide(long, width_px=640)
    assert patch["annotations[0].text"] == "before the patch<br>(__copy_from_user_ll)"
    assert "annotations[1].text" not in patch                 # "after" fits its panel
    assert patch["title.text"].count("<br>") == 2             # two lines, then the subtitle
    assert patch["title.subtitle.text"] == "" and patch["title.automargin"] is True
    assert patch["title.pad.b"] > 2 * 16                      # room for the panel titles
    apply(long, patch)


def test_desktop_fit_wraps_long_labels_beside_bars_and_makes_room():
    # the scorecard's claims beside horizontal bars: a label of ~90 characters is wider than
    # plotly's automargin allows in a 640 px column, and was cut off at the left
    claims = ["Dougan 1999: idle task clears pages through the cache, the pages used: "
              "time / no clearing", "short"]
    fig = go.Figure(go.Bar(x=[1, 2], y=claims, orientation="h"))
    fig.update_layout(height=120 + 34 * 2, font_size=12)
    patch = narrow.fit_wide(fig, width_px=640)
    text = patch["yaxis.ticktext"]
    assert text[1] == "short" and patch["yaxis.tickvals"] == claims
    assert all(narrow.text_px(line, 12) <= 0.4 * 640 for line in text[0].split("<br>"))
    lines = narrow.line_count(text[0])
    assert lines == 3                                       # ~560 px into 256 px lines
    assert patch["height"] == 2 * (lines * (12 + 3) + 6) + 160
    assert narrow.fit_wide(go.Figure(go.Bar(x=[1], y=["short"], orientation="h"))) == {}


def test_a_y_title_goes_on_the_left_panel_of_each_row():
    """style(y=...) on panels side by side: one y title a row (on the panel at the left),
    not one a panel; a single plot keeps its own."""
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go
    from emu.present import plot
    grid = make_subplots(rows=2, cols=3)
    for row in (1, 2):
        for col in (1, 2, 3):
            grid.add_bar(x=[1], y=[1], row=row, col=col)
    plot.style(grid, y="cycles")
    titles = {name: grid.layout[name].title.text
              for name in ("yaxis", "yaxis2", "yaxis3", "yaxis4", "yaxis5", "yaxis6")}
    assert titles == {"yaxis": "cycles", "yaxis2": None, "yaxis3": None,
                      "yaxis4": "cycles", "yaxis5": None, "yaxis6": None}
    single = plot.style(go.Figure(go.Bar(x=[1], y=[2])), y="cycles")
    assert single.layout.yaxis.title.text == "cycles"
