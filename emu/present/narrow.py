"""A figure's layout for phones: what the book's figures switch to when they are narrow.

Plotly lays a figure out for one width. On a phone (a 390 px screen leaves the figure about
358 px) a legend on the right takes half the width, one-line titles are cut off at the edge,
long category labels push the bars out, and panels side by side leave each a sliver.
``narrow_layout(fig)`` returns the changes, as ``Plotly.relayout`` keys, that lay the same
figure out for ``DESIGN_PX``: the legend below the plot, plotly's mode bar stood on end at the
right edge (lying along the top, it covered the title's end), titles, axis titles and long
category labels wrapped onto several lines, side-by-side panels stacked, margins that grow
to fit the labels (plotly's automargin) and a figure tall enough for all of it.
``wide_layout(fig, narrow)`` gives the figure's own values of the same keys, to switch back,
and ``fit_wide(fig)`` wraps what the book's column on a desktop (``WIDE_PX``) would cut off.
``emu.present.plot``'s book renderer draws the figure fitted to the desktop column and switches to
the narrow layout and back as the figure's width crosses ``NARROW_BELOW_PX`` (a phone, a
phone turned sideways, a window made narrow).

Text widths are estimated, character by character, in the widest font plotly may be given
(``char_em``), so that a wrapped line errs on the short side. The browser test
(tests/book/test_book.py) checks the result on every figure of the book at 390 px.
"""

from __future__ import annotations

import re

NARROW_BELOW_PX = 600   # a figure narrower than this switches to its narrow layout
DESIGN_PX = 340         # the width the narrow layout is made for (a 390 px phone's figure)
WIDE_PX = 640           # the book's column on a desktop (688 px in a 1280 px window), less a margin
FONT_PX = 12            # tick labels and text in the narrow layout
TITLE_PX = 15
SUBTITLE_PX = 11
LEGEND_PX = 11
ANNOTATION_PX = 10
MIN_PANEL_PX = 220      # the least height of one panel's plot area
PANEL_GAP_PX = 56       # between stacked panels: the upper one's tick labels, the next title
CATEGORY_LABEL_PX = 120  # category labels beside horizontal bars wrap at this width
CATEGORY_LABEL_MIN_PX = 48  # labels under vertical bars wrap at their share, or this
WIDE_LABEL_SHARE = 0.4  # on a desktop, labels beside horizontal bars wrap past this share
MARGIN_PX = 8
MODEBAR_PX = 30         # plotly's mode bar, stood on end at the right edge: titles end before it

_AXIS = re.compile(r"^[xy]axis\d*$")


# Widths of characters in font sizes, rounded up from Verdana's: the widest of the fonts plotly
# asks for ("Open Sans", verdana, arial, sans-serif; iPhones have Verdana), so that an
# estimated line is at least as wide as the drawn one.
_NARROW_CHARS, _PUNCTUATION = set("fijlrtI"), set(".,:;'!|")


def char_em(c: str) -> float:
    if c == " " or c in _NARROW_CHARS or c in _PUNCTUATION:
        return 0.36
    if c in "mMW":
        return 0.97
    if c == "w":
        return 0.81
    if c.isupper():
        return 0.74
    if c.islower() or c.isdigit() or c == "_":
        return 0.64
    return 0.66


def text_px(text: str, font_px: float) -> float:
    """Estimated width of one line of ``text`` (no markup) at ``font_px``."""
    return font_px * sum(map(char_em, text))


def wrap(text: str, width_px: float, font_px: float) -> str:
    """``text`` broken at spaces into lines that fit ``width_px`` at ``font_px``, joined by
    plotly's ``<br>``. Lines already broken by ``<br>`` stay broken; a word longer than a
    line stays whole."""
    lines = []
    for part in re.split(r"<br\s*/?>", text):
        line = ""
        for word in part.split():
            candidate = f"{line} {word}" if line else word
            if line and text_px(candidate, font_px) > width_px:
                lines.append(line)
                candidate = word
            line = candidate
        lines.append(line)
    return "<br>".join(lines)


def line_count(text: str) -> int:
    return len(re.split(r"<br\s*/?>", text))


def _layout(fig) -> dict:
    fig = fig if isinstance(fig, dict) else fig.to_dict()
    return fig.get("layout", {}) or {}


def _data(fig) -> list:
    fig = fig if isinstance(fig, dict) else fig.to_dict()
    return fig.get("data", []) or []


def _text(value) -> str | None:
    """A title's text, whether plotly stores it as a string or as {"text": ...}."""
    if isinstance(value, dict):
        value = value.get("text")
    return value if isinstance(value, str) and value else None


def lookup(layout: dict, key: str):
    """The value at a relayout key (``"xaxis2.title.text"``, ``"annotations[1].x"``) of
    ``layout``, or None where the layout does not set it."""
    node = layout
    for part in key.split("."):
        name, _, index = part.partition("[")
        if not isinstance(node, dict) or name not in node:
            return None
        node = node[name]
        if index:
            i = int(index.rstrip("]"))
            if not isinstance(node, list) or i >= len(node):
                return None
            node = node[i]
    return node


def axis_names(fig) -> list[str]:
    """Every axis of the figure (``xaxis``, ``yaxis2``...): those the layout sets and those
    its traces refer to, x axes first."""
    names = {k for k in _layout(fig) if _AXIS.match(k)}
    for trace in _data(fig):
        for letter in "xy":
            ref = trace.get(f"{letter}axis", letter)
            names.add(f"{letter}axis{ref[1:]}")
    names.update({"xaxis", "yaxis"})
    return sorted(names, key=lambda n: (n[0], int(n[5:] or 1)))


def categories(fig, axis: str) -> list[str]:
    """The category labels (strings) that traces put on ``axis``, in order of first use."""
    letter, ref = axis[0], axis[0] + axis[5:]
    seen = {}
    for trace in _data(fig):
        if trace.get(f"{letter}axis", letter) != ref:
            continue
        values = trace.get(letter)
        if values is None or isinstance(values, (str, dict)):
            continue
        for v in values:
            if isinstance(v, str):
                seen.setdefault(v, None)
    return list(seen)


def columns_of_panels(fig) -> list[tuple[str, str]]:
    """The (x axis, y axis) of each panel when the figure has two or more panels side by
    side in one row (as make_subplots(rows=1, cols=N) makes them), left to right; else []."""
    layout = _layout(fig)
    panels = []
    for name in axis_names(fig):
        if name[0] != "x" or "domain" not in layout.get(name, {}):
            continue
        y = "yaxis" + layout[name].get("anchor", "y")[1:]
        panels.append((layout[name]["domain"][0], name, y))
    y_domains = {tuple(layout.get(y, {}).get("domain", (0, 1))) for _, _, y in panels}
    if len(panels) < 2 or len(y_domains) != 1:
        return []
    return [(x, y) for _, x, y in sorted(panels)]


def legend_rows(fig) -> int:
    """Rows a horizontal legend needs at ``DESIGN_PX``, entries packed left to right."""
    layout = _layout(fig)
    if layout.get("showlegend") is False:
        return 0
    names = [t.get("name") or "" for t in _data(fig) if t.get("showlegend", True) is not False]
    if len(names) < 2 and layout.get("showlegend") is not True:
        return 0
    rows, used = 0, DESIGN_PX
    for name in names:
        width = 40 + text_px(name, LEGEND_PX)    # the symbol and the gaps, then the name
        if used + width > DESIGN_PX:
            rows, used = rows + 1, 0
        used += width
    return rows


def _panel_px(fig, y_axis: str, label_lines: int) -> int:
    """Plot-area height for one panel: at least MIN_PANEL_PX, more for many category rows."""
    rows = len(categories(fig, y_axis))
    return max(MIN_PANEL_PX, rows * (label_lines * (FONT_PX + 3) + 8) + 16)


def _wrapped_categories(fig, axis: str, width_px: float, font: float = FONT_PX - 1) -> dict:
    """Tick labels for a category axis whose labels are wider than ``width_px``: the same
    categories, their labels wrapped. Under vertical bars (an x axis) only when every word
    fits: plotly turns labels that do not, and a turned label reads better whole."""
    labels = categories(fig, axis)
    spec = _layout(fig).get(axis, {})
    if not labels or "ticktext" in spec or max(text_px(x, font) for x in labels) <= width_px:
        return {}
    if axis[0] == "x" and max(text_px(w, font) for x in labels for w in x.split()) > width_px:
        return {}
    return {f"{axis}.tickmode": "array", f"{axis}.tickvals": labels,
            f"{axis}.ticktext": [wrap(label, width_px, font) for label in labels]}


def _title(layout: dict, panel_title_px: float, width_px: float = DESIGN_PX,
           title_px: float = TITLE_PX, subtitle_px: float = SUBTITLE_PX) -> tuple[dict, int]:
    """The title and the subtitle wrapped to ``width_px`` into one text (a smaller span for
    the subtitle: plotly does not place a multi-line title and a subtitle without overlap),
    above the plot area and the panels' titles, at the left edge; and its height in px."""
    title = _text(layout.get("title"))
    subtitle = _text(lookup(layout, "title.subtitle"))
    if not title and not subtitle:
        return {}, 0
    width = width_px - 2 * MARGIN_PX - MODEBAR_PX
    text = wrap(title or "", width, title_px)
    lines = line_count(text)
    if subtitle:
        small = wrap(subtitle, width, subtitle_px)
        text += f'<br><span style="font-size:{round(subtitle_px)}px">{small}</span>'
        lines += line_count(small)
    patch = {"title.text": text, "title.font.size": title_px, "title.subtitle.text": "",
             "title.automargin": True, "title.yref": "paper", "title.y": 1,
             "title.yanchor": "bottom", "title.x": 0, "title.xref": "container",
             "title.xanchor": "left", "title.pad.l": MARGIN_PX,
             "title.pad.b": int(panel_title_px) + 6, "margin.t": MARGIN_PX}
    return patch, int(lines * title_px * 1.4 + panel_title_px + 6)


def _axes(fig, panels: list, patch: dict) -> int:
    """Automargin, smaller fonts, wrapped titles and category labels on every axis; returns
    the most lines a y category label takes."""
    layout = _layout(fig)
    label_lines = 1
    for axis in axis_names(fig):
        patch[f"{axis}.automargin"] = True
        patch[f"{axis}.tickfont.size"] = FONT_PX - 1
        axis_title = _text(lookup(layout, f"{axis}.title"))
        if axis_title:
            room = DESIGN_PX if axis[0] == "x" else MIN_PANEL_PX
            patch[f"{axis}.title.text"] = wrap(axis_title, room - 2 * MARGIN_PX, FONT_PX)
            patch[f"{axis}.title.font.size"] = FONT_PX
        if axis[0] == "y":
            wrapped = _wrapped_categories(fig, axis, CATEGORY_LABEL_PX)
            if wrapped:
                label_lines = max(label_lines, *map(line_count, wrapped[f"{axis}.ticktext"]))
        else:   # labels under vertical bars: each has its category's share of the width
            per_category = DESIGN_PX / max(1, len(categories(fig, axis)))
            wrapped = _wrapped_categories(fig, axis, max(per_category - 4, CATEGORY_LABEL_MIN_PX))
        patch.update(wrapped)
    return label_lines


def _annotations(layout: dict, patch: dict) -> None:
    """Notes on the plot (a published value's label on its line): a smaller font, wrapped
    to most of the width. Panel titles have been set by then and are left alone."""
    for i, annotation in enumerate(layout.get("annotations", []) or []):
        key = f"annotations[{i}]"
        if f"{key}.text" not in patch and _text(annotation.get("text")):
            patch[f"{key}.text"] = wrap(annotation["text"], 0.75 * DESIGN_PX, ANNOTATION_PX)
            patch[f"{key}.font.size"] = ANNOTATION_PX


def narrow_layout(fig) -> dict:
    """The relayout that lays ``fig`` (a plotly Figure or its dict) out for ``DESIGN_PX``;
    see the module's docstring."""
    layout = _layout(fig)
    patch = {"font.size": FONT_PX, "margin.l": MARGIN_PX, "margin.r": MARGIN_PX,
             "margin.t": MARGIN_PX, "margin.b": MARGIN_PX,
             "legend.orientation": "h", "legend.x": 0, "legend.xanchor": "left",
             "legend.yref": "container", "legend.y": 0, "legend.yanchor": "bottom",
             "legend.font.size": LEGEND_PX, "modebar.orientation": "v"}
    panels = columns_of_panels(fig) or [("xaxis", "yaxis")]
    label_lines = _axes(fig, panels, patch)
    heights = [_panel_px(fig, y, label_lines) for _, y in panels]
    panel_title_px = _stack_panels(fig, panels, heights, patch) if len(panels) > 1 else 0
    title_patch, top = _title(layout, panel_title_px)
    patch.update(title_patch)
    _annotations(layout, patch)
    x_title_lines = max(line_count(patch.get(f"{x}.title.text", "")) for x, _ in panels)
    bottom = 40 + 18 * x_title_lines + legend_rows(fig) * (LEGEND_PX + 10) + MARGIN_PX
    plot_px = sum(heights) + _gap_px(fig, panels) * (len(heights) - 1)
    patch["height"] = max(int(layout.get("height") or 0), top + plot_px + bottom)
    return patch


def _gap_px(fig, panels) -> int:
    """Between stacked panels: the upper one's tick labels and axis title, the next one's
    title."""
    layout = _layout(fig)
    has_title = any(_text(lookup(layout, f"{x}.title")) for x, _ in panels)
    return PANEL_GAP_PX + (FONT_PX + 8 if has_title else 0)


def _stack_panels(fig, panels, heights, patch) -> int:
    """Put side-by-side panels one above the other (top to bottom = left to right), each
    with its own tick labels and its title above it; returns the height of the top panel's
    title, which sits above the plot area."""
    layout = _layout(fig)
    gap = _gap_px(fig, panels)
    total = sum(heights) + gap * (len(heights) - 1)
    titles = _subplot_titles(fig, panels)
    top_px = 0
    for (x, y), height, title in zip(panels, heights, titles):
        upper = round(1 - top_px / total, 4)
        lower = round(1 - (top_px + height) / total, 4)
        patch[f"{x}.domain"] = [0, 1]
        patch[f"{y}.domain"] = [lower, upper]
        if layout.get(y, {}).get("showticklabels") is False:
            patch[f"{y}.showticklabels"] = True
        if title is not None:
            text = wrap(layout["annotations"][title]["text"], DESIGN_PX, FONT_PX + 1)
            patch.update({f"annotations[{title}].x": 0.5, f"annotations[{title}].y": upper,
                          f"annotations[{title}].xanchor": "center",
                          f"annotations[{title}].yanchor": "bottom",
                          f"annotations[{title}].text": text,
                          f"annotations[{title}].font.size": FONT_PX + 1})
        top_px += height + gap
    first = titles[0]
    if first is None:
        return 0
    return line_count(patch[f"annotations[{first}].text"]) * (FONT_PX + 6)


def _subplot_titles(fig, panels) -> list[int | None]:
    """For each panel, the index of the annotation make_subplots put above it as its title
    (centred over the panel at the top of its domain, in paper coordinates), or None."""
    layout = _layout(fig)
    annotations = layout.get("annotations", []) or []
    found = []
    for x, y in panels:
        x0, x1 = layout[x]["domain"]
        top = layout.get(y, {}).get("domain", [0, 1])[1]
        match = None
        for i, a in enumerate(annotations):
            if (a.get("xref") == "paper" and a.get("yref") == "paper"
                    and abs(a.get("x", -1) - (x0 + x1) / 2) < 1e-6
                    and abs(a.get("y", -1) - top) < 1e-6):
                match = i
        found.append(match)
    return found


def _font_px(layout: dict) -> float:
    """The figure's base font size: its own, its template's, or plotly's 12."""
    return float(lookup(layout, "font.size") or lookup(layout, "template.layout.font.size")
                 or 12)


def _label_px(fig, axis: str, font_px: float) -> float:
    """Estimated width of an axis's tick labels: its longest category, or a number's."""
    labels = categories(fig, axis)
    return max((text_px(x, font_px) for x in labels), default=5 * font_px * 0.64)


def fit_wide(fig, width_px: float = WIDE_PX) -> dict:
    """Relayout for a figure ``width_px`` wide (the book's column on a desktop) where texts
    would be cut off: panels' titles wrapped to their panel, then, if the title or those
    titles need more lines, the title block as in the narrow layout (``_title``), and x axes'
    titles wrapped to the room around their plot. Empty when everything fits."""
    layout = _layout(fig)
    font = _font_px(layout)
    patch = {}
    panels = columns_of_panels(fig) or [("xaxis", "yaxis")]
    titles = _subplot_titles(fig, panels) if len(panels) > 1 else [None]
    panel_lines = 0
    for (x, y), index in zip(panels, titles):
        x0, x1 = lookup(layout, f"{x}.domain") or [0, 1]
        if index is not None:
            annotation = layout["annotations"][index]
            size = float(lookup(annotation, "font.size") or font)
            text = wrap(annotation["text"], (x1 - x0) * width_px, size)
            if text != annotation["text"]:
                patch[f"annotations[{index}].text"] = text
            panel_lines = max(panel_lines, line_count(text) * (size + 4))
        # category labels beside horizontal bars wider than WIDE_LABEL_SHARE of the
        # column: plotly's automargin stops short of them and cuts them off at the left
        wrapped = _wrapped_categories(fig, y, WIDE_LABEL_SHARE * width_px, font)
        if wrapped:
            patch.update(wrapped)
            lines = max(map(line_count, wrapped[f"{y}.ticktext"]))
            rows = len(categories(fig, y))
            needed = rows * (lines * (font + 3) + 6) + 160     # the title, x axis, legend
            if needed > int(layout.get("height") or 450):
                patch["height"] = needed
        labels = min(_label_px(fig, y, font), WIDE_LABEL_SHARE * width_px) + 60
        plot = (x1 - x0) * (width_px - labels)
        room = plot + 2 * min(labels, 40)               # a centred title may overhang a little
        axis_title = _text(lookup(layout, f"{x}.title"))
        if axis_title and text_px(axis_title, font) > room:
            patch[f"{x}.title.text"] = wrap(axis_title, max(room, 120), font)
    title = _text(layout.get("title")) or ""
    title_px = float(lookup(layout, "title.font.size") or 1.4 * font)
    if any(k.startswith("annotations") for k in patch) or \
            text_px(title, title_px) > width_px - 2 * MARGIN_PX:
        patch.update(_title(layout, panel_lines, width_px, title_px, 0.85 * font)[0])
    return patch


def wide_layout(fig, narrow: dict) -> dict:
    """The figure's own values of the keys ``narrow`` changes (None, which plotly reads as
    its default, where the figure sets none): the relayout back from the narrow layout."""
    layout = _layout(fig)
    return {key: lookup(layout, key) for key in narrow}
