"""Plotly figures that draw both in the built book and in a live notebook.

Every chapter notebook starts with::

    import emu.present.plot
    emu.present.plot.setup()

``setup()`` picks how figures are turned into notebook output:

* **While the book is being built** (``jupyter-book build``), the local Sphinx
  extension ``_ext/plotly_offline.py`` sets the environment variable
  ``EMU_BOOK_BUILD=1`` and the notebook kernels inherit it. ``setup()`` then
  selects the ``"emu_book"`` renderer defined here: its output is a single
  ``text/html`` snippet made by ``plotly.io.to_html(fig, full_html=False,
  include_plotlyjs=False, include_mathjax=False)``. It carries the figure's data
  and a short script calling ``Plotly.newPlot``, but not plotly.js itself: the
  extension adds one shared ``_static/plotly.min.js`` to each page that has a
  figure. Pages stay small and nothing is fetched from the network.
  (Without this, plotly 7 emits only ``application/vnd.plotly.v1+json``, which
  myst-nb does not render, so the book would show no figure.)

* **Anywhere else** (JupyterLab, Notebook 7, VS Code, Colab, Binder), that
  snippet would draw nothing, because no plotly.js is loaded on the page. So
  ``setup()`` keeps plotly's own choice of renderer, which plotly makes from
  the environment: in JupyterLab and Notebook 7 it is ``plotly_mimetype``,
  drawn by the JupyterLab extension that ships inside the ``plotly`` pip
  package; in Colab it is ``colab`` (plotly.js from a CDN); in VS Code,
  ``vscode``. The old classic Notebook (version 6 and earlier) needs
  ``setup(renderer="notebook")``; plotly's ``PLOTLY_RENDERER`` variable works
  too.

``setup()`` also makes the ``"emu"`` look (a plain white template and a
colour-blind-safe palette) the default for every figure; ``style(fig)``
applies it, with optional titles, to one figure explicitly.
"""

from __future__ import annotations

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io.base_renderers import MimetypeRenderer

from ..context import BUILD_ENV_VAR, building_book  # noqa: F401 (the book build's flag)
from .compare import gluable, remember
from .compare import plain as _plain
from .describe import alt, describe, to_csv  # noqa: F401 (alt: a figure's own sentence)
from .narrow import NARROW_BELOW_PX, fit_wide, narrow_layout, wide_layout

RENDERER = "emu_book"
TEMPLATE = "emu"

# Okabe-Ito palette (distinguishable with the common colour-vision deficiencies).
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"]
# Colours used the same way in every chapter.
COLORS = {
    "original": "#0072B2",   # the kernel before the optimization
    "optimized": "#E69F00",  # the kernel after it
    "published": "#7f7f7f",  # numbers printed in the paper
    "emulated": "#009E73",   # numbers measured on the model
}


# Plotly's mode bar without the plotly logo and without plotly.js 4's "Share chart..."
# button (showSendToCloud is on by default there: it uploads the figure to Plotly's
# cloud service).
CONFIG = {"displaylogo": False, "showSendToCloud": False, "responsive": True}

# Run after each figure of the book is drawn: below NARROW_BELOW_PX of width it takes the
# narrow layout emu.present.narrow computed for it, and the wide one back when it grows again.
# plotly.io.to_html writes the figure's height into the style of a div around the figure
# (plotly 6 and later; of the figure's own div before), so that changes with the layout too.
_SWITCH_LAYOUT_JS = """(function (gd, narrow, wide, below) {
  if (!gd) { return; }
  var box = gd.parentElement && gd.parentElement.style.height ? gd.parentElement : gd;
  var isNarrow = false, wideHeight = box.style.height;
  function fit() {
    var want = gd.offsetWidth > 0 && gd.offsetWidth < below;
    if (want === isNarrow) { return; }
    isNarrow = want;
    box.style.height = want ? narrow.height + "px" : wideHeight;
    Plotly.relayout(gd, want ? narrow : wide);
  }
  fit();
  window.addEventListener("resize", fit);
})(document.getElementById("{plot_id}"), %s, %s, %d);"""


def book_layouts(fig_dict) -> tuple[dict, dict, dict]:
    """The figure as the book draws it first (its texts wrapped to fit the desktop column),
    the relayout to its narrow layout, and the relayout back (emu.present.narrow)."""
    import copy


    fitted = fit_wide(fig_dict)
    narrow = narrow_layout(fig_dict)
    wide = {**wide_layout(fig_dict, narrow),
            **{key: value for key, value in fitted.items() if key in narrow}}
    drawn = copy.deepcopy(fig_dict)
    fig = go.Figure(drawn) if fitted else None
    if fig is not None:
        for key, value in fitted.items():
            fig.layout[key] = value
        drawn = fig.to_dict()
    return drawn, narrow, wide


def switch_layout_script(narrow: dict, wide: dict) -> str:
    """The script that gives a drawn figure its narrow layout on narrow screens."""
    import json


    return _SWITCH_LAYOUT_JS % (json.dumps(narrow), json.dumps(wide), NARROW_BELOW_PX)


class BookHTMLRenderer(MimetypeRenderer):
    """Figure as HTML without plotly.js (the book page supplies plotly.js), fitted to the
    desktop column and switching to its narrow layout on phones (emu.present.narrow)."""

    def to_mimebundle(self, fig_dict):
        fig_dict, narrow, wide = book_layouts(fig_dict)
        html = pio.to_html(
            fig_dict,
            full_html=False,
            include_plotlyjs=False,
            include_mathjax=False,
            validate=False,
            config=CONFIG,
            post_script=switch_layout_script(narrow, wide),
            div_id=figure_id(fig_dict),
        )
        return {"text/html": accessible_figure(fig_dict, html)}


def figure_id(fig_dict) -> str:
    """A div id made from the figure (plotly's default is random: pages would change
    at every build)."""
    import hashlib
    import json


    text = json.dumps(fig_dict, sort_keys=True, default=str)
    return "emu-fig-" + hashlib.sha1(text.encode()).hexdigest()[:12]


def accessible_figure(fig_dict, html: str, controls: str = "") -> str:
    """The figure's HTML in a box of ARIA role figure named by its text alternative (read
    out), with a link that downloads its data as CSV. A div, not <figure>: inside the
    theme's <figure> plotly's annotations overran the figure on phones (measured).
    ``controls`` (HTML) goes under the figure; with controls, the text alternative is a live
    region: a screen reader reads the new figure's sentence when a control changes it."""
    from html import escape
    from urllib.parse import quote


    key = figure_id(fig_dict)
    sentence = escape(describe(fig_dict))
    data = "data:text/csv;charset=utf-8," + quote(to_csv(fig_dict))
    live = ' aria-live="polite"' if controls else ""
    return (f'<div class="emu-figure" role="figure" aria-labelledby="{key}-alt">'
            f'<p class="emu-figure-alt visually-hidden" id="{key}-alt"{live}>{sentence}</p>'
            f'{html}{controls}'
            f'<div class="emu-figure-data"><a id="{key}-csv" download="{key}.csv" '
            f'href="{data}">Download this figure\'s data (CSV)</a></div></div>')


def _register_template() -> None:
    if TEMPLATE in pio.templates:
        return
    pio.templates[TEMPLATE] = go.layout.Template(
        layout=dict(
            colorway=PALETTE,
            font=dict(size=14),
            margin=dict(l=60, r=20, t=50, b=50),
            legend=dict(bgcolor="rgba(255,255,255,0.7)"),
        )
    )


def setup(renderer: str | None = None) -> None:
    """Choose the plotly renderer and figure style for this notebook.

    ``renderer`` forces a plotly renderer name (e.g. ``"notebook"`` for the
    classic Notebook 6); by default the choice is made as described in the
    module docstring. ``plotly.io.renderers.default`` tells which is in use.
    """
    pio.renderers[RENDERER] = BookHTMLRenderer()
    if renderer is not None:
        pio.renderers.default = renderer
    elif building_book():
        pio.renderers.default = RENDERER
    _hide_cloud_buttons()
    _register_template()
    pio.templates.default = f"plotly_white+{TEMPLATE}"


def _hide_cloud_buttons() -> None:
    """The same mode bar (CONFIG) in the live renderers that take a config (JupyterLab's,
    Colab's, the classic Notebook's)."""
    for name in pio.renderers.default.split("+"):
        current = pio.renderers[name] if name in pio.renderers else None
        if isinstance(getattr(current, "config", None), dict):
            current.config.update({k: v for k, v in CONFIG.items() if k != "responsive"})


def style(fig: go.Figure, title: str | None = None, x: str | None = None,
          y: str | None = None, source: str | None = None,
          height: int = 420) -> go.Figure:
    """Apply the book's look to ``fig``; returns ``fig``.

    ``title``, ``x`` and ``y`` set the figure and axis titles; ``source`` (e.g.
    ``emu.present.data.provenance(df)``) is shown as a subtitle under the title.
    """
    _register_template()
    fig.update_layout(template=f"plotly_white+{TEMPLATE}", height=height)
    if title is not None:
        fig.update_layout(title_text=title)
    if source is not None:
        fig.update_layout(title_subtitle_text=source, margin_t=80)
    if x is not None:
        fig.update_xaxes(title=x)
    if y is not None:
        for name in _leftmost_y_axes(fig):
            fig.layout[name].title = y
    return fig


def _leftmost_y_axes(fig: go.Figure) -> list[str]:
    """The y axes (``yaxis``, ``yaxis3``...) at the left of their row of panels: one y title
    a row, not one a panel. A panel's row is its y axis's domain; its place in the row, the
    domain of the x axis it is anchored to."""
    layout = fig.layout.to_plotly_json()
    names = sorted({"yaxis", *(k for k in layout if k.startswith("yaxis"))})
    rows = {}
    for name in names:
        axis = layout.get(name, {})
        x = layout.get("xaxis" + axis.get("anchor", "x")[1:], {})
        row = tuple(axis.get("domain", (0, 1)))
        left = tuple(x.get("domain", (0, 1)))[0]
        if row not in rows or left < rows[row][0]:
            rows[row] = (left, name)
    return [name for _, name in rows.values()]


def bar_panels(df, label: str, columns: dict[str, str], colors=None,
               title: str | None = None, source: str | None = None,
               height: int = 380) -> go.Figure:
    """One panel of horizontal bars per column of ``df``, side by side.

    ``label`` names the column whose values label the bars (one bar per row, in the
    rows' order, top to bottom); ``columns`` maps each plotted column to its panel's
    title (put the unit in it). ``colors`` gives one colour per row (default: the
    palette's first). Each panel has its own x axis, so quantities of different units
    sit side by side. Returns the styled figure.
    """
    from plotly.subplots import make_subplots

    if colors is None:
        colors = [PALETTE[0]] * len(df)
    if len(colors) != len(df):
        raise ValueError(f"{len(colors)} colours for {len(df)} rows")
    fig = make_subplots(rows=1, cols=len(columns), shared_yaxes=True,
                        subplot_titles=list(columns.values()), horizontal_spacing=0.03)
    labels = list(df[label])
    for i, column in enumerate(columns, start=1):
        values = list(df[column])
        fig.add_bar(x=values, y=labels, orientation="h", marker_color=list(colors),
                    text=[f"{v:g}" for v in values], textposition="auto",
                    showlegend=False, name=column, row=1, col=i)
    fig.update_yaxes(autorange="reversed")
    return style(fig, title=title, source=source, height=height)


def plain(value):
    """emu.present.compare.plain: numpy's scalars as plain Python numbers, for myst-nb's glue."""
    return _plain(value)


def glue(name, value, display=False):
    """myst_nb.glue of ``value`` as emu.present.compare.gluable makes it (a Comparison: its
    sentence; numpy scalars: plain numbers). One name at a time, and it may be displayed;
    emu.present.compare.glue takes several."""
    from myst_nb import glue as _glue
    remember(name, value)
    return _glue(name, gluable(value), display=display)
