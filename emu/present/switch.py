"""A figure whose menus and sliders switch between precomputed figures, in the browser alone.

An explorer's controls each take a handful of values, so every combination can be drawn when
the book is built; the page then needs no kernel to move. ``book_html(figures, controls,
default, note)`` gives the default combination's figure as the book's pages hold it
(emu.present.plot's book renderer: fitted to the column, each frame with its layout for
phones), the page's own controls under it, then ``note``. The controls are HTML, a labelled
``<select>`` per menu and a range input per slider, so that a keyboard and a screen reader
can use them (plotly's own menus and sliders are SVG, which neither can reach). Each choice
draws its combination's figure with ``Plotly.react`` and swaps in that figure's text
alternative (a live region: read out) and its CSV.

``controls`` is a list of ``(label, option labels, kind)``, kind ``"slider"`` or ``"menu"``;
``figures`` maps each combination, a tuple of option indices in the controls' order, to a
figure (a plotly figure or its dict) or to the message of a combination that does not draw
(shown in place of the figure, as the live explorer shows it under its controls).
"""
from __future__ import annotations

import copy
import itertools
import json
from html import escape

import plotly.graph_objects as go
import plotly.io as pio

from .describe import ALT_KEY, describe, to_csv
from .narrow import NARROW_BELOW_PX
from .plot import CONFIG, accessible_figure, book_layouts, figure_id

KINDS = ("slider", "menu")

# The book's page: its own controls (ids "<plot>-control<i>") draw the frame chosen, and swap
# in its text alternative ("<plot>-alt") and CSV ("<plot>-csv"). It waits for the page to be
# read, since the controls come after the plot's script.
_BOOK_JS = """(function (id, options, frames, state, below) {
  function start() {
    var gd = document.getElementById(id);
    if (!gd) { return; }
    var box = gd.parentElement && gd.parentElement.style.height ? gd.parentElement : gd;
    var wideHeight = box.style.height, isNarrow = false;
    var alt = document.getElementById(id + "-alt"), csv = document.getElementById(id + "-csv");
    function draw() {
      var frame = frames[state.join(",")];
      if (!frame) { return; }
      // copies: plotly keeps (and relayout changes) the objects it is given
      var narrow = isNarrow && frame.narrow ? JSON.parse(JSON.stringify(frame.narrow)) : null;
      box.style.height = narrow && narrow.height ? narrow.height + "px" : wideHeight;
      Plotly.react(gd, JSON.parse(JSON.stringify(frame.data)),
                   JSON.parse(JSON.stringify(frame.layout))).then(function () {
        if (narrow) { return Plotly.relayout(gd, narrow); }
      });
      if (alt) { alt.textContent = frame.alt; }
      if (csv) { csv.href = "data:text/csv;charset=utf-8," + encodeURIComponent(frame.csv); }
    }
    function fit() {
      var want = gd.offsetWidth > 0 && gd.offsetWidth < below;
      if (want !== isNarrow) { isNarrow = want; draw(); }
    }
    options.forEach(function (labels, i) {
      var field = document.getElementById(id + "-control" + i);
      if (!field) { return; }
      var shown = document.getElementById(id + "-control" + i + "-value");
      field.addEventListener(field.tagName === "SELECT" ? "change" : "input", function () {
        state[i] = Number(field.value);
        if (shown) {
          shown.textContent = labels[state[i]];
          field.setAttribute("aria-valuetext", labels[state[i]]);
        }
        draw();
      });
    });
    fit();
    window.addEventListener("resize", fit);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else { start(); }
})("{plot_id}", %s, %s, %s, %d);"""


def book_html(figures: dict, controls: list, default: tuple, note: str = "") -> str:
    """The switching figure as a page of the book holds it, with HTML controls (see the
    module notes); ``note`` (HTML) is put under it."""
    controls = [_checked(control) for control in controls]
    frames = {}
    for key, figure in switch_frames(figures, controls, default).items():
        drawn, narrow, _ = book_layouts(figure)
        frames[key] = {"data": drawn["data"], "layout": drawn["layout"], "narrow": narrow,
                       "alt": f"{_settings(controls, key)}: {describe(drawn)}",
                       "csv": to_csv(drawn)}
    first = frames[_key(default)]
    meta = {**(first["layout"].get("meta") or {}), ALT_KEY: first["alt"]}
    shown = {"data": first["data"], "layout": {**first["layout"], "meta": meta}}
    div_id = figure_id(shown)
    script = _BOOK_JS % (json.dumps([c[1] for c in controls]),
                         json.dumps(frames, default=_plain), json.dumps(list(default)),
                         NARROW_BELOW_PX)
    html = pio.to_html(shown, full_html=False, include_plotlyjs=False, include_mathjax=False,
                       validate=False, config=CONFIG, div_id=div_id, post_script=script)
    return accessible_figure(shown, html, _controls_html(div_id, controls, default)) + note


def _settings(controls: list, key: str) -> str:
    """The combination ``key`` in words, which starts its figure's text alternative: the
    sentence made from a figure says what kind of figure it is, not for which settings."""
    chosen = [f"{label} {options[int(k)]}" for (label, options, _), k
              in zip(controls, key.split(","))]
    return "With " + (" and ".join(chosen) if len(chosen) < 3
                      else ", ".join(chosen[:-1]) + " and " + chosen[-1])


def _controls_html(div_id: str, controls: list, default: tuple) -> str:
    """A labelled <select> per menu and a range input (its value's label beside it) per
    slider, ids ``<div_id>-control<i>``."""
    parts = []
    for i, ((label, options, kind), chosen) in enumerate(zip(controls, default)):
        name = f"{div_id}-control{i}"
        if kind == "menu":
            choices = "".join(f'<option value="{k}"{" selected" if k == chosen else ""}>'
                              f"{escape(o)}</option>" for k, o in enumerate(options))
            field = f'<select id="{name}">{choices}</select>'
        else:
            field = (f'<input type="range" id="{name}" min="0" max="{len(options) - 1}" '
                     f'step="1" value="{chosen}" aria-valuetext="{escape(options[chosen])}">'
                     f'<output for="{name}" id="{name}-value">{escape(options[chosen])}</output>')
        parts.append(f'<span class="emu-switch-control"><label for="{name}">{escape(label)}'
                     f"</label> {field}</span>")
    return (f'<div class="emu-switch" role="group" aria-label="What the figure shows">'
            f'{"".join(parts)}</div>')


def switch_frames(figures: dict, controls: list, default: tuple) -> dict[str, dict]:
    """Every combination's figure as a dict, keyed by its option indices joined with
    commas; a combination that does not draw is the default's frame saying why."""
    controls = [_checked(control) for control in controls]
    default = tuple(default)
    combinations = list(itertools.product(*(range(len(c[1])) for c in controls)))
    missing = [c for c in combinations if c not in figures]
    if missing:
        raise ValueError(f"switching: no figure for the combinations {missing[:5]}")
    if default not in figures or isinstance(figures[default], str):
        raise ValueError(f"switching: the default combination {default} must have a figure")
    return {_key(c): (_message_figure(figures[default], figures[c])
                      if isinstance(figures[c], str) else _as_dict(figures[c]))
            for c in combinations}


def _key(combination) -> str:
    return ",".join(map(str, combination))


def _checked(control) -> tuple[str, list[str], str]:
    try:
        label, options, kind = control
    except (TypeError, ValueError):
        raise ValueError(f"switching: a control is (label, option labels, kind), "
                         f"not {control!r}") from None
    options = [str(o) for o in options]
    if not options:
        raise ValueError(f"switching: control {label!r} has no options")
    if kind not in KINDS:
        raise ValueError(f"switching: control {label!r}: kind must be one of {KINDS}, "
                         f"not {kind!r}")
    return str(label), options, kind


def _as_dict(figure) -> dict:
    if isinstance(figure, go.Figure):
        return figure.to_plotly_json()
    return copy.deepcopy(figure)


def _message_figure(default, message: str) -> dict:
    """The default figure's frame, emptied, saying why this combination does not draw."""
    figure = _as_dict(default)
    figure["data"] = []
    layout = figure.setdefault("layout", {})
    layout["annotations"] = [{"text": f"Not drawn: {message}", "showarrow": False,
                              "xref": "paper", "yref": "paper", "x": 0.5, "y": 0.5}]
    layout["meta"] = {**(layout.get("meta") or {}), ALT_KEY: f"Not drawn: {message}"}
    return figure


def _plain(value):
    """numpy arrays and scalars in a figure's dict, as JSON takes them."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON: {value!r}")
