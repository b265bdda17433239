"""A figure's text alternative and its data as CSV (emu.present.describe), and the book's
renderer putting both beside the figure (emu.present.plot)."""
from __future__ import annotations

import csv
import io
from urllib.parse import unquote

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from emu.present import plot
from emu.present.describe import alt, describe, to_csv


def two_series():
    fig = go.Figure([go.Bar(x=["4 KB", "8 KB"], y=np.array([120.5, 98.0]), name="original"),
                     go.Scatter(x=["4 KB", "8 KB"], y=[60, 49], name="optimized<br>(patched)",
                                mode="lines+markers")])
    return plot.style(fig, title="Flush <b>cost</b>", x="buffer size", y="cycles")


def test_the_sentence_says_kind_title_axes_and_series():
    sentence = describe(two_series().to_dict())
    assert sentence.startswith("Bar chart and line chart titled \u201cFlush cost\u201d")
    assert "cycles against buffer size" in sentence
    assert "series: original, optimized (patched)" in sentence
    assert "<" not in sentence


def test_a_figures_own_sentence_wins_and_an_empty_one_is_refused():
    fig = alt(two_series(), "The patched flush costs half as many cycles at every size.")
    assert describe(fig.to_dict()) == "The patched flush costs half as many cycles at every size."
    assert describe(go.Figure(fig.to_plotly_json()).to_dict()).startswith("The patched")
    with pytest.raises(ValueError, match="non-empty sentence"):
        alt(two_series(), "  ")


def rows(text):
    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize("encode", [lambda f: f.to_dict(), lambda f: f.to_plotly_json()],
                         ids=["arrays", "plotly's typed arrays"])
def test_the_csv_holds_every_point_of_every_trace(encode):
    table = rows(to_csv(encode(two_series())))
    assert table[0] == ["trace", "series", "panel", "x", "y"]
    assert table[1:] == [["1", "original", "xy", "4 KB", "120.5"],
                         ["1", "original", "xy", "8 KB", "98.0"],
                         ["2", "optimized (patched)", "xy", "4 KB", "60"],
                         ["2", "optimized (patched)", "xy", "8 KB", "49"]]


def test_a_heat_map_gives_one_row_a_cell_and_panels_are_told_apart():
    heat = go.Figure(go.Heatmap(z=np.arange(6).reshape(2, 3), x=[1, 2, 3], y=["a", "b"]))
    table = rows(to_csv(heat.to_plotly_json()))
    assert table[0][3:] == ["x", "y", "z"] and len(table) == 7
    assert table[6][3:] == ["3", "b", "5"]
    panels = make_subplots(rows=1, cols=2)
    panels.add_bar(x=[1], y=[2], row=1, col=1)
    panels.add_bar(x=[1], y=[3], row=1, col=2)
    assert [r[2] for r in rows(to_csv(panels.to_dict()))[1:]] == ["xy", "x2y2"]
    assert "in 2 panels" in describe(panels.to_dict())


def test_the_book_renderer_puts_the_sentence_and_the_data_beside_the_figure():
    fig = two_series().to_dict()
    html = plot.BookHTMLRenderer().to_mimebundle(fig)["text/html"]
    key = plot.figure_id(fig)
    assert html.startswith(f'<div class="emu-figure" role="figure" aria-labelledby="{key}-alt">')
    assert f'id="{key}-alt">Bar chart and line chart' in html
    assert f'<div id="{key}" class="plotly-graph-div"' in html
    link = html.split('href="data:text/csv;charset=utf-8,', 1)[1].split('"', 1)[0]
    assert unquote(link) == to_csv(fig)
    again = plot.BookHTMLRenderer().to_mimebundle(two_series().to_dict())["text/html"]
    assert again == html                                  # the same page at every build
