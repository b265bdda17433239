"""What a figure shows, for readers who cannot see it, and its data, for readers who want it.

``describe(fig_dict)`` is the figure's text alternative, one sentence made from the figure
itself (its kind, title, axes and series), unless its maker wrote one: ``alt(fig, text)``
keeps that sentence in the figure's ``layout.meta``. ``to_csv(fig_dict)`` is every trace's
points as CSV, one row a point, so the numbers behind a figure can be taken away from the
page. The book's renderer (emu.present.plot) puts both beside every figure it draws.
"""
from __future__ import annotations

import base64
import csv
import io
import re

import numpy as np

ALT_KEY = "alt"
# Columns a trace's points may have, in the order the CSV gives them.
_POINT_KEYS = ("x", "y", "z", "text")
_KINDS = {"bar": "bar chart", "heatmap": "heat map", "histogram": "histogram",
          "box": "box plot", "pie": "pie chart", "table": "table"}


def alt(fig, text: str):
    """Give ``fig`` the text alternative ``text`` (one sentence saying what it shows)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a figure's text alternative must be a non-empty sentence")
    meta = fig.layout.meta if isinstance(fig.layout.meta, dict) else {}
    fig.update_layout(meta={**meta, ALT_KEY: text.strip()})
    return fig


def describe(fig_dict: dict) -> str:
    """The figure's text alternative: its maker's (``alt``), else one made from it."""
    layout = fig_dict.get("layout", {}) or {}
    meta = layout.get("meta")
    if isinstance(meta, dict) and meta.get(ALT_KEY):
        return str(meta[ALT_KEY])
    traces = fig_dict.get("data", []) or []
    title = _plain_text(_title(layout.get("title")))
    kinds = sorted({_kind(t) for t in traces}) or ["empty figure"]
    sentence = " and ".join(kinds).capitalize()
    if title:
        sentence += f" titled \u201c{title}\u201d"
    axes = _axes(layout)
    if axes:
        sentence += f", {axes}"
    names = [_plain_text(str(t["name"])) for t in traces if t.get("name")]
    names = list(dict.fromkeys(n for n in names if n))
    panels = len({t.get("xaxis", "x") for t in traces})
    if panels > 1:
        sentence += f", in {panels} panels"
    if names:
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        sentence += f"; series: {shown}"
    return sentence + ". Its data can be downloaded as CSV."


def to_csv(fig_dict: dict) -> str:
    """Every trace's points as CSV: trace number, series name, panel, then x, y, z, text
    (the columns any trace has)."""
    traces = fig_dict.get("data", []) or []
    columns = [k for k in _POINT_KEYS if any(_values(t.get(k)) is not None for t in traces)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["trace", "series", "panel", *columns])
    for number, trace in enumerate(traces, start=1):
        values = {k: _values(trace.get(k)) for k in columns}
        if trace.get("type") == "heatmap" and values.get("z") is not None:
            rows = _heatmap_rows(values)
        else:
            length = max((len(v) for v in values.values() if v is not None), default=0)
            rows = [[_at(values[k], i) for k in columns] for i in range(length)]
        name = _plain_text(str(trace.get("name", "")))
        panel = trace.get("xaxis", "x") + trace.get("yaxis", "y")
        for row in rows:
            writer.writerow([number, name, panel, *row])
    return out.getvalue()


def _heatmap_rows(values: dict) -> list[list]:
    z = np.atleast_2d(np.asarray(values["z"], dtype=object))
    xs, ys = values.get("x"), values.get("y")
    rows = []
    for i in range(z.shape[0]):
        for j in range(z.shape[1]):
            row = {"x": _at(xs, j) if xs is not None else j,
                   "y": _at(ys, i) if ys is not None else i, "z": z[i, j], "text": ""}
            rows.append([row[k] for k in values])
    return rows


def _values(value):
    """A trace's column as a list (plotly's base64 typed arrays decoded), or None."""
    if value is None or isinstance(value, (str, int, float)):
        return None if value is None else [value]
    if isinstance(value, dict) and "bdata" in value:
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
        return array.tolist()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return list(value)


def _at(values, i):
    if values is None:
        return ""
    if len(values) == 1:
        return values[0]
    return values[i] if i < len(values) else ""


def _kind(trace: dict) -> str:
    kind = trace.get("type", "scatter")
    if kind in _KINDS:
        return _KINDS[kind]
    if kind in ("scatter", "scattergl"):
        mode = trace.get("mode", "lines")
        return "line chart" if "lines" in mode else "scatter plot"
    return f"{kind} chart"


def _title(title) -> str:
    if isinstance(title, dict):
        return title.get("text", "") or ""
    return title or ""


def _axes(layout: dict) -> str:
    x = _plain_text(_title(layout.get("xaxis", {}).get("title")))
    y = _plain_text(_title(layout.get("yaxis", {}).get("title")))
    if x and y:
        return f"{y} against {x}"
    return f"{x or y} on an axis" if x or y else ""


def _plain_text(text: str) -> str:
    """A plotly label without its HTML tags and line breaks."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text or "")).strip()
