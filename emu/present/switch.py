"""A figure whose menus and slider switch between precomputed figures, in the browser alone.

An explorer's controls each take a handful of values, so every combination can be drawn when
the book is built; the page then needs no kernel to move. ``switching(figures, controls,
default)`` takes the figures of every combination and returns one figure (the default's, with
a dropdown menu or a slider per control, plotly's own ``updatemenus`` and ``sliders`` whose
method is ``skip``) and the script that, on each choice, draws the combination chosen with
``Plotly.react``. The script is for ``plotly.io.to_html``'s ``post_script`` (it names the
figure as ``{plot_id}``).

``book_html(figures, controls, default, note)`` is the same figure as the book's pages hold
it (emu.present.plot's book renderer: fitted to the column, each frame with its layout for
phones, the text alternative and CSV of the default's figure) with ``note`` under it.

``controls`` is a list of ``(label, option labels, kind)``, kind ``"slider"`` or ``"menu"``;
``figures`` maps each combination, a tuple of option indices in the controls' order, to a
figure (a plotly figure or its dict) or to the message of a combination that does not draw
(shown in place of the figure, as the live explorer shows it under its controls).
"""
from __future__ import annotations

import copy
import itertools
import json

import plotly.graph_objects as go
import plotly.io as pio

from .narrow import NARROW_BELOW_PX
from .plot import CONFIG, accessible_figure, book_layouts, figure_id

KINDS = ("slider", "menu")
_UNDER_AXIS_PX = 50     # the controls start this far under the plot: its x axis title is there
_MENU_ROW_PX = 45       # a row of menus
_SLIDER_PX = 90         # a slider, its value above it and its labels under it

_SWITCH_JS = """(function (gd, names, frames, state, below) {
  if (!gd) { return; }
  var box = gd.parentElement && gd.parentElement.style.height ? gd.parentElement : gd;
  var wideHeight = box.style.height, isNarrow = false;
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
  }
  function fit() {
    var want = gd.offsetWidth > 0 && gd.offsetWidth < below;
    if (want !== isNarrow) { isNarrow = want; draw(); }
  }
  gd.on("plotly_buttonclicked", function (e) {
    var i = names.indexOf(e.menu.name);
    if (i >= 0) { state[i] = e.active; draw(); }
  });
  gd.on("plotly_sliderchange", function (e) {
    var i = names.indexOf(e.slider.name);
    if (i >= 0) { state[i] = e.slider.active; draw(); }
  });
  if (below > 0) { fit(); window.addEventListener("resize", fit); }
})(document.getElementById("{plot_id}"), %s, %s, %s, %d);"""


def switching(figures: dict, controls: list, default: tuple) -> tuple[dict, str]:
    """The default combination's figure with the controls, and the script that switches it
    (see the module notes)."""
    frames = switch_frames(figures, controls, default)
    return frames[_key(default)], switch_script(frames, len(controls), default)


def switch_script(frames: dict, n_controls: int, default: tuple, narrow_below: int = 0) -> str:
    """The script that draws the frame of each choice. A frame may carry ``narrow``, the
    ``Plotly.relayout`` keys of its layout for phones (emu.present.narrow), taken while the
    figure is narrower than ``narrow_below`` px (0: never)."""
    names = [f"control{i}" for i in range(n_controls)]
    return _SWITCH_JS % (json.dumps(names), json.dumps(frames, default=_plain),
                         json.dumps(list(default)), narrow_below)


def _key(combination) -> str:
    return ",".join(map(str, combination))


def book_html(figures: dict, controls: list, default: tuple, note: str = "") -> str:
    """The switching figure as a page of the book holds it (see the module notes);
    ``note`` (HTML) is put under it."""
    frames = {}
    for key, frame in switch_frames(figures, controls, default).items():
        drawn, narrow, _ = book_layouts(frame)
        frames[key] = {"data": drawn["data"], "layout": drawn["layout"], "narrow": narrow}
    first = frames[_key(default)]
    shown = {"data": first["data"], "layout": first["layout"]}
    html = pio.to_html(shown, full_html=False, include_plotlyjs=False, include_mathjax=False,
                       validate=False, config=CONFIG, div_id=figure_id(shown),
                       post_script=switch_script(frames, len(controls), default,
                                                 NARROW_BELOW_PX))
    return accessible_figure(shown, html) + note


def switch_frames(figures: dict, controls: list, default: tuple) -> dict[str, dict]:
    """Every combination's figure, as the page holds it: keyed by its option indices joined
    with commas, each with the controls set to it."""
    controls = [_checked(control) for control in controls]
    default = tuple(default)
    combinations = list(itertools.product(*(range(len(c[1])) for c in controls)))
    missing = [c for c in combinations if c not in figures]
    if missing:
        raise ValueError(f"switching: no figure for the combinations {missing[:5]}")
    if default not in figures or isinstance(figures[default], str):
        raise ValueError(f"switching: the default combination {default} must have a figure")
    frames = {}
    for combination in combinations:
        figure = figures[combination]
        if isinstance(figure, str):
            figure = _message_figure(figures[default], figure)
        frames[_key(combination)] = _with_controls(figure, controls, combination)
    return frames


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
    return figure


def _with_controls(figure, controls, combination) -> dict:
    """``figure`` as a dict whose layout has the controls, set to ``combination``: under the
    plot and its x axis title (above it the title and subtitle take the room), a row of
    menus opening upwards, then one slider under another."""
    figure = _as_dict(figure)
    layout = figure.setdefault("layout", {})
    menus, sliders = [], []
    menu_controls = [i for i, c in enumerate(controls) if c[2] == "menu"]
    top = _UNDER_AXIS_PX
    for place, i in enumerate(menu_controls):
        label, options, _ = controls[i]
        menus.append({"name": f"control{i}", "type": "dropdown", "active": combination[i],
                      "direction": "up", "showactive": True,
                      "x": place / len(menu_controls), "xanchor": "left",
                      "y": 0, "yanchor": "top", "pad": {"t": top},
                      "buttons": [{"label": f"{label}: {o}", "method": "skip", "args": []}
                                  for o in options]})
    top += _MENU_ROW_PX if menus else 0
    for i, (label, options, kind) in enumerate(controls):
        if kind == "slider":
            sliders.append({"name": f"control{i}", "active": combination[i],
                            "currentvalue": {"prefix": f"{label}: "},
                            "pad": {"t": top}, "len": 1.0, "x": 0, "y": 0,
                            "yanchor": "top",
                            "steps": [{"label": o, "method": "skip", "args": []}
                                      for o in options]})
            top += _SLIDER_PX
    layout["updatemenus"], layout["sliders"] = menus, sliders
    added = top - _UNDER_AXIS_PX     # the controls' own height, under the axis title's margin
    margin = dict(layout.get("margin") or {})
    margin["b"] = margin.get("b", 50) + added
    layout["margin"] = margin
    if layout.get("height"):          # the plot keeps its height; the controls get their own
        layout["height"] += added
    return figure


def _plain(value):
    """numpy arrays and scalars in a figure's dict, as JSON takes them."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON: {value!r}")
