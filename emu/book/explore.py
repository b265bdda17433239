"""Explorers: controls that re-run a routine and redraw its figure, when a kernel is live.

An explorer is a drawing function and its controls::

    from emu.book.explore import Control, Explorer, kb
    explorer = Explorer(draw, {
        "size": Control("L1 D size", [8192, 16384, 32768], 32768, format=kb),
        "policy": Control("replacement", ["lru", "plru", "fifo", "random"], "lru"),
    })
    explorer.show()

``draw(**values)`` runs what it needs (a sweep, see emu.run.sweep, for anything longer) and
returns a plotly figure. The explorer draws once for the defaults when it is made.

``show()`` then decides what the reader gets:

* **while the book is being built** (``EMU_BOOK_BUILD``, see emu.present.plot), the page must not
  hold a widget: a built page has no kernel to talk to, and myst-nb would render a widget
  as an empty box or its text repr (and fetch the widget manager from a CDN). So the
  explorer draws every combination of its controls' online options (``Control.online``;
  all its options unless a subset is given, to keep the build's time) through one sweep
  (emu.run.sweep), and the page gets one figure whose menus and sliders switch between
  them in the browser (emu.present.switch), with a line saying which values it offers;
* **with a live kernel** (JupyterLab, Notebook, Colab, Binder), the controls, a line for
  messages and the figure. Changing a control re-runs ``draw`` with the new values and
  redraws the figure. A combination ``draw`` refuses (a cache size not divisible by
  ways x line: the library raises ``ValueError`` naming it) is shown in the message line
  and the last good figure stays: the explorer keeps working.

``set(name=value, ...)`` does what a control does, from code (the tests drive explorers
through their widgets and through ``set``); ``figure`` is the figure shown, ``error`` the
message of the last refused combination (None after a good draw).
"""
from __future__ import annotations

import functools
import html
import inspect
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

from ..context import building_book, headless
from ..present import switch
from ..run import sweep
from ..run.sweep import SweepError


def kb(value):
    """A byte count as the controls label it: 512 B, 32 KB, 1 MB, 1.5 MB."""
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if value >= size:
            return f"{value / size:g} {unit}"
    return f"{value} B"


@dataclass(frozen=True)
class Control:
    """One control: its ``label``, the ``options`` it offers (values; ``format`` labels
    them, default ``str``) and the ``default`` value, which must be one of them.
    ``widget``: "dropdown", "slider" (a selection slider, for ordered numbers) or
    "toggle" (buttons, for a few choices); "auto" picks a slider for more than three
    numbers, buttons for up to three options, else a dropdown."""
    label: str
    options: tuple
    default: Any
    format: Callable[[Any], str] = str
    widget: str = "auto"
    help: str = field(default="", compare=False)
    online: tuple | None = None     # the options the book's online figure offers (None: all)

    def __post_init__(self):
        object.__setattr__(self, "options", tuple(self.options))
        if not self.options:
            raise ValueError(f"control {self.label!r}: no options")
        if self.default not in self.options:
            raise ValueError(f"control {self.label!r}: the default {self.default!r} is not "
                             f"one of its options {list(self.options)}")
        if self.online is not None:
            object.__setattr__(self, "online", tuple(self.online))
            stray = [o for o in self.online if o not in self.options]
            if stray or self.default not in self.online:
                raise ValueError(f"control {self.label!r}: online must be some of its options "
                                 f"{list(self.options)} with the default {self.default!r}, "
                                 f"not {list(self.online)}")
        if self.widget not in ("auto", "dropdown", "slider", "toggle"):
            raise ValueError(f"control {self.label!r}: widget must be auto, dropdown, "
                             f"slider or toggle, not {self.widget!r}")

    def kind(self):
        if self.widget != "auto":
            return self.widget
        numbers = all(isinstance(o, (int, float)) and not isinstance(o, bool)
                      for o in self.options)
        if numbers and len(self.options) > 3:
            return "slider"
        return "toggle" if len(self.options) <= 3 else "dropdown"

    def online_options(self):
        """The options the book's online figure offers, in the options' order."""
        if self.online is None:
            return self.options
        return tuple(o for o in self.options if o in self.online)

    def labelled(self):
        """[(label, value)] as ipywidgets' selection widgets take them."""
        return [(self.format(o), o) for o in self.options]


class Explorer:
    """A figure and the controls that redraw it (see the module notes)."""

    def __init__(self, draw, controls, title=None):
        if not callable(draw):
            raise ValueError(f"Explorer: draw must be callable, not {draw!r}")
        self.draw, self.title = draw, title
        self.controls = dict(controls)
        for name, control in self.controls.items():
            if not isinstance(control, Control):
                raise ValueError(f"Explorer: control {name!r} must be a Control, "
                                 f"not {control!r}")
        self.values = {name: c.default for name, c in self.controls.items()}
        self.figure = None
        self.error = None
        self.widgets = {}            # name -> its ipywidget, once widget() has made them
        self._box = self._message = self._output = None
        self._quiet = False
        if self.redraw() is None:     # the defaults must draw: the page's static figure
            raise ValueError(f"Explorer: the default settings do not draw: {self.error}")

    # ------------------------------------------------------------------ drawing

    def set(self, **values):
        """Change some controls' values and redraw, as the widgets do. A name or value the
        controls do not offer is refused (ValueError); a combination ``draw`` refuses
        leaves ``error`` set and the figure as it was. Returns the figure shown."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"Explorer: no control {name!r} (the controls: "
                                 f"{', '.join(self.controls)})")
            if value not in self.controls[name].options:
                raise ValueError(f"Explorer: {value!r} is not an option of control "
                                 f"{name!r} ({list(self.controls[name].options)})")
        self.values.update(values)
        for name, value in values.items():      # keep the widgets in step
            widget = self.widgets.get(name)
            if widget is not None and widget.value != value:
                self._quiet = True            # one redraw below, not one per widget
                try:
                    widget.value = value
                finally:
                    self._quiet = False
        self.redraw()
        return self.figure

    def redraw(self):
        """Run ``draw`` on the current values. Returns the new figure, or None (and sets
        ``error``) when the values are refused or the run fails."""
        try:
            figure = self.draw(**self.values)
        except Exception as error:      # noqa: BLE001: shown to the reader, not raised
            self.error = _message_of(error)
            self._show_message(f"Not drawn ({_settings(self)}): {self.error}", error=True)
            return None
        if self.title and not figure.layout.title.text:
            figure.update_layout(title_text=self.title)
        self.figure, self.error = figure, None
        self._show_message("")
        self._show_figure()
        return figure

    # ------------------------------------------------------------------ showing

    def show(self):
        """The switching figure in the book build; the figure alone where a program runs
        the notebook (emu.context.headless: the grader's kernels); the controls and the
        figure elsewhere (see the module notes). Without ipywidgets, the static figure and
        a note."""
        from IPython.display import display
        if building_book():
            display({"text/html": self.online_html(), "text/plain": repr(self.figure)},
                     raw=True)
            return
        if headless():                  # a program runs the notebook: no widgets
            display(self.figure)
            return
        try:
            box = self.widget()
        except ImportError:
            print("(pip install ipywidgets for the controls; the figure is for the "
                  "default settings)")
            display(self.figure)
            return
        display(box)

    # ------------------------------------------------------------ the online figure

    def online_grid(self):
        """Every combination of the controls' online options, as ``{name: value}`` dicts,
        the last control varying fastest."""
        names = list(self.controls)
        options = [self.controls[n].online_options() for n in names]
        return [dict(zip(names, combo)) for combo in itertools.product(*options)]

    def online_figures(self, executor=None):
        """{combination (each control's option index): figure dict, or the message of a
        combination ``draw`` refuses}, every combination of ``online_grid`` drawn through
        one sweep (``executor``: emu.run.sweep's; each draw's own sweeps run in its worker).
        The defaults' figure is the one already drawn."""
        combos, points = [], []
        for values in self.online_grid():
            combos.append(self._index_of(values))
            points.append({"values": values})
        drawn = {combos.index(self._index_of(self.values)): self.figure.to_plotly_json()} \
            if self.figure is not None and self.error is None else {}
        todo = [i for i in range(len(points)) if i not in drawn]
        results = sweep.run(functools.partial(_drawn, self.draw, self.title),
                            [points[i] for i in todo], executor=executor,
                            description="online figure")
        drawn.update(zip(todo, results))
        return {combos[i]: drawn[i] for i in range(len(combos))}

    def online_html(self, executor=None):
        """The book's figure: the switching figure over ``online_figures`` and the line
        saying which values it offers (emu.present.switch.book_html). A control with one
        online option gets no menu (the line names its value)."""
        moving = [k for k, c in enumerate(self.controls.values())
                  if len(c.online_options()) > 1]
        controls = [(c.label, [c.format(o) for o in c.online_options()],
                     "slider" if c.kind() == "slider" else "menu")
                    for k, c in enumerate(self.controls.values()) if k in moving]
        figures = {tuple(combo[k] for k in moving): figure
                   for combo, figure in self.online_figures(executor).items()}
        default = self._index_of(self.values)
        return switch.book_html(figures, controls, tuple(default[k] for k in moving),
                                self.online_note())

    def online_note(self):
        """What the online figure offers, control by control, as a paragraph of HTML."""
        parts, fewer = [], False
        for control in self.controls.values():
            offered = ", ".join(control.format(o) for o in control.online_options())
            if len(control.online_options()) < len(control.options):
                fewer = True
                offered += " (the notebook: " + ", ".join(control.format(o)
                                                         for o in control.options) + ")"
            parts.append(f"{control.label}: {offered}")
        rest = (" Run the notebook (JupyterLab, Binder, Colab) for the others." if fewer
                else "")
        return ('<p class="emu-switch-note">This figure offers, without a kernel, every '
                "combination of " + html.escape("; ".join(parts)) + "." + rest + "</p>")

    def _index_of(self, values):
        """A combination of values as the option indices of the online figure."""
        for name, control in self.controls.items():
            if values[name] not in control.online_options():
                raise ValueError(f"Explorer: {control.label} {control.format(values[name])} "
                                 "is not one of the online figure's values "
                                 f"({', '.join(map(control.format, control.online_options()))})")
        return tuple(self.controls[n].online_options().index(values[n]) for n in self.controls)

    def widget(self):
        """The controls, the message line and the figure, as one ipywidgets box (made
        once)."""
        if self._box is not None:
            return self._box
        import ipywidgets as w
        rows = []
        for name, control in self.controls.items():
            widget = _make_widget(w, control, self.values[name])
            widget.observe(lambda change, name=name: self._changed(name, change["new"]),
                           names="value")
            self.widgets[name] = widget
            rows.append(widget)
        self._message = w.HTML("")
        self._output = w.Output()
        self._box = w.VBox([w.HBox(rows, layout=w.Layout(flex_flow="row wrap")),
                            self._message, self._output])
        self._put_figure()
        return self._box

    def _changed(self, name, value):
        if self._quiet:
            return
        self.values[name] = value
        self._show_message("Running ...")
        # inside the output area: what the run displays (a sweep's progress bar) shows there;
        # from a widget's callback it would otherwise reach no cell
        with self._output:
            self.redraw()

    def _show_message(self, text, error=False):
        if self._message is None:
            return
        import html
        style = "color:#b00020" if error else "color:#555"
        self._message.value = f'<span style="{style}">{html.escape(text)}</span>' if text \
            else ""

    def _show_figure(self):
        """After a control's change (inside ``with output:``, where a redraw's sweep shows
        its bar): the figure in place of what the area showed."""
        if self._output is None or self.figure is None:
            return
        from IPython.display import clear_output, display
        with self._output:
            clear_output(wait=True)
            display(self.figure)

    def _put_figure(self):
        """The first figure, as the explorer is made, put in the output area's outputs in
        one update. Not displayed inside ``with output:``: done in the cell that displays
        the explorer, that left the kernel deaf to the next cell's request now and then
        (measured under nbclient: a notebook of eight explorers stalled in 2 runs of 5 that
        way, in none of 8 this way)."""
        if self._output is None or self.figure is None:
            return
        bundle = _mime_bundle(self.figure)
        if not bundle:                     # a renderer that gives none (a browser's)
            self._show_figure()
            return
        self._output.outputs = ({"output_type": "display_data", "data": bundle,
                                 "metadata": {}},)


def _mime_bundle(figure):
    """The figure as plotly's default renderers give it to a notebook ({} if they give
    nothing, as a browser's renderer does)."""
    import plotly.io as pio
    try:
        return pio.renderers._build_mime_bundle(figure.to_dict(), renderers_string=None)
    except (AttributeError, TypeError, ValueError):      # a plotly without it
        return {}


def _drawn(draw, title, values):
    """One combination of an explorer's online figure, in a sweep's worker: the figure as a
    dict, or the message of a combination ``draw`` refuses (shown in its place). A draw's
    own sweep runs in this worker (a pool's workers start no pools)."""
    options = {"executor": sweep.SERIAL} if "executor" in inspect.signature(draw).parameters \
        else {}
    try:
        figure = draw(**values, **options)
    except Exception as error:      # noqa: BLE001: shown to the reader in the figure
        return _message_of(error)
    if title and not figure.layout.title.text:
        figure.update_layout(title_text=title)
    return figure.to_plotly_json()


def _make_widget(w, control, value):
    kind = control.kind()
    options = control.labelled()
    common = dict(options=options, value=value, description=control.label,
                  style={"description_width": "initial"})
    if kind == "slider":
        widget = w.SelectionSlider(continuous_update=False, **common)
    elif kind == "toggle":
        widget = w.ToggleButtons(**common)
    else:
        widget = w.Dropdown(layout=w.Layout(width="max-content"), **common)
    if control.help:
        widget.tooltip = control.help
    return widget


def _message_of(error):
    """The library's message, with its class: ``ValueError: cache L1D: size ...``. A sweep's
    error already names the run and the class."""
    if isinstance(error, SweepError):
        return str(error).split(" failed: ", 1)[-1]
    return f"{type(error).__name__}: {error}"


def _settings(explorer):
    return ", ".join(f"{explorer.controls[n].label} {explorer.controls[n].format(v)}"
                     for n, v in explorer.values.items())
