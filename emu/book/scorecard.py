"""The reproduction scorecard: every chapter's claims (``emu.present.claims.Claim``, listed by
each paper's ``claims()``) gathered into one table for the book's scorecard page, its
headline (the claims in each verdict) and the page's table, which a reader sorts and
filters."""
from __future__ import annotations

import html
import importlib
import math

import pandas as pd
import plotly.graph_objects as go

from ..hw import profile
from ..present import plot
from ..present.claims import BANDS, VERDICTS
from . import ranges as _ranges

#: chapter -> the module whose claims() lists its claims
CHAPTERS = {"Dougan 1999": "emu.papers.dougan1999",
            "Blanchard 2002": "emu.papers.blanchard2002",
            "Mackerras 2003": "emu.papers.mackerras2003",
            "Yoshioka 2005": "emu.papers.yoshioka2005",
            "Yun 2011": "emu.papers.yun2011"}


#: how the book's scorecard moves each chapter's estimates (emu.book.ranges.GROUPINGS), chosen
#: by what it costs (each chapter's plan, the page's table; benchmarks/README.md). A move
#: re-runs only the chapter's runs that read a moved estimate (emu.run.reuse). Measured on
#: 29 November 2026 (CPU s of the runs the moves re-run, one at a time / by source): Dougan
#: 226 / 15 (116 / 6 moves: its LMBench programs are small runs, one machine each), Mackerras
#: 374 / 17, Blanchard 1366 / 58, Yoshioka 1036 / 87, Yun 3408 / 156 (every run of these three
#: reads nearly every estimate: one at a time re-runs the whole claims each time). The page's
#: budget (about 300 s of wall on 2 cores, cold, its claims' 75 CPU s included) takes the
#: three by source (301) and one more chapter one at a time: Dougan's, the cheaper. "split"
#: (by source, then each claim's top source one at a time) costs Dougan both (every source
#: is some claim's top) and the others a whole re-run per estimate of a profile. On 1
#: December Yoshioka's paced runs became whole periods of the throttled writers' chunks,
#: about 4x its runs' CPU (benchmarks/README.md); its grouping stays by source.
RANGES_GROUPING = {"Dougan 1999": "estimate", "Mackerras 2003": "source",
                   "Blanchard 2002": "source", "Yoshioka 2005": "source",
                   "Yun 2011": "source"}
#: the words for a grouping in a claim's note
GROUPING_WORDS = {"estimate": "one at a time", "table": "by table", "kind": "by kind",
                  "source": "by source", "split": "by source, then those of its top source "
                                                   "one at a time"}
#: the columns ``scorecard(ranges=...)`` adds
RANGE_COLUMNS = ("range low", "range high", "moved most by", "published inside",
                 "range moves", "range in spread", "range note")


def scorecard(chapters=None, ranges=None, executor=None, timing=None, reuse_runs=True):
    """Every claim of the chapters (all by default) as a DataFrame, one row per claim.
    ``ranges``: a grouping of the estimates (``RANGES_GROUPING``, or any of
    emu.book.ranges.GROUPINGS) to give each claim its range under the model's estimates
    (``RANGE_COLUMNS``; computed through emu.run.sweep, ``executor`` as it takes it, and
    kept on disk under the sources' hash; ``reuse_runs`` False: each move re-runs a
    chapter's whole claims, as before emu.run.reuse); None: the claims alone."""
    for chapter in chapters or ():
        if chapter not in CHAPTERS:
            raise ValueError(f"no chapter {chapter!r} (the book has: {', '.join(CHAPTERS)})")
    if ranges is not None:
        chosen = {c: CHAPTERS[c] for c in chapters or CHAPTERS}
        if isinstance(ranges, dict):
            ranges = {c: ranges[c] for c in chosen}
        result = _ranges.compute(chosen, grouping=ranges, executor=executor, timing=timing,
                                 reuse_runs=reuse_runs)
        return with_ranges(pd.DataFrame(result["rows"]), result)
    rows = []
    for chapter in chapters or CHAPTERS:
        module = importlib.import_module(CHAPTERS[chapter])
        rows += [claim.row() for claim in module.claims()]
    return pd.DataFrame(rows)


def with_ranges(card, result):
    """The scorecard with each claim's range (``RANGE_COLUMNS``) from emu.book.ranges'
    ``compute`` result: a claim without an emulated value, or whose moves all failed,
    says so in its note."""
    card = card.copy()
    columns = {c: [] for c in RANGE_COLUMNS}
    labels = _estimate_labels()
    for _, row in card.iterrows():
        r = result["ranges"].get((row["chapter"], row["claim"]))
        if r is None or row["status"] != "run":
            why = {"not modelled": "no range: not modelled", "input": "no range: an input"}
            note = why.get(row["status"], "no range: its run gave no value")
            for c, v in zip(RANGE_COLUMNS, (math.nan, math.nan, "", None, 0, None, note)):
                columns[c].append(v)
            continue
        inside = bool(r["low"] <= row["published"] <= r["high"])
        note = f"{r['moves']} re-runs, estimates moved " + grouping_note(result, row["chapter"])
        if r["failed"]:
            note += f"; the model refused {len(r['failed'])}: {', '.join(r['failed'])}"
        in_spread = _inside_spread(row, r) if r["moves"] else None
        if r["moves"] == 0:
            note = "no range: no estimate it reads could move" if not r["failed"] else note
        else:
            note += _spread_words(row, in_spread)
        for c, v in zip(RANGE_COLUMNS, (r["low"], r["high"],
                                         labels.get(r["most"], r["most"] or ""), inside,
                                         r["moves"], in_spread, note)):
            columns[c].append(v)
    for c, values in columns.items():
        card[c] = values
    card.attrs["ranges"] = {k: result.get(k) for k in ("grouping", "split", "plan",
                                                        "moves_by_chapter", "runs")}
    return card


def _inside_spread(row, r):
    """For a claim with a spread (its runs over what a machine leaves to chance: layouts,
    timings), whether the estimates' range lies inside it: the estimates then move the
    value less than one run varies by chance, and the range says little of them. None: the
    claim has no spread."""
    low, high = row.get("spread low"), row.get("spread high")
    if low is None or high is None or low != low or high != high:
        return None
    return bool(low <= r["low"] and r["high"] <= high)


def _spread_words(row, in_spread):
    """The range note's words on the spread (``_inside_spread``'s answer)."""
    if in_spread is None:
        return ""
    low, high = row["spread low"], row["spread high"]
    over = row.get("spread over") or "its runs"
    if in_spread:
        return (f"; the range lies inside the spread of {over} ({low:.3g} to {high:.3g}): "
                f"the estimates move the value less than one run varies by chance")
    return f"; the range reaches beyond the spread of {over} ({low:.3g} to {high:.3g})"


def grouping_note(result, chapter):
    """How a chapter's estimates were moved and why, from emu.book.ranges.compute's result
    (its grouping, and what one at a time would have cost: its plan)."""
    grouping = result["grouping"]
    grouping = grouping if isinstance(grouping, str) else grouping[chapter]
    words = GROUPING_WORDS[grouping]
    if grouping == "split":
        tops = result.get("split", {}).get(chapter, [])
        words = f"by source, then those of {', '.join(tops) or 'no source'} one at a time"
    plan = result.get("plan", {}).get(chapter, {}).get("estimate")
    if grouping == "estimate" or not plan:
        return words
    return (f"{words}: one at a time would re-run {plan['moves']} times, "
            f"{plan['cpu_s']:.0f} CPU s of its runs")


def grouping_table(result):
    """Per chapter: its grouping, the re-runs it took, and what each grouping would cost
    (re-runs, and the CPU seconds of the runs they re-run), from compute's plan
    (``result``: its result, or a card's ``attrs["ranges"]``)."""
    rows = []
    for chapter, plans in result.get("plan", {}).items():
        grouping = result["grouping"]
        row = {"chapter": chapter,
               "grouping": grouping if isinstance(grouping, str) else grouping[chapter],
               "re-runs": result.get("moves_by_chapter", {}).get(chapter)}
        for g, p in plans.items():
            row[f"{g}: re-runs"] = p["moves"]
            row[f"{g}: CPU s"] = round(p["cpu_s"])
        row["one at a time, whole claims: CPU s"] = round(plans["estimate"]["full_cpu_s"])
        rows.append(row)
    return pd.DataFrame(rows).set_index("chapter") if rows else pd.DataFrame()


def _estimate_labels():
    """A group's name as the page shows it ("power4:cycles" -> "power4's cycle estimates")."""
    out = {"kernel:costs": "the kernel's C-path costs",
           "kernel:costs.CPI": "the kernel's CPI", "kernel:image": "the images' pages",
           "kernel:work": "the kernel's C-path costs and the images' pages",
           "kernel:build": "the build's estimates (make -j's jobs, link, spread)",
           "yoshioka2005": "Yoshioka 2005's pace of writes and disk requests",
           "yoshioka2005:other": "Yoshioka 2005's pace of writes and disk requests"}
    for name in profile.names():
        out[f"{name}:cycles"] = f"{name}'s cycle estimates"
        out[f"{name}:other"] = f"{name}'s other estimates"
        out[name] = f"{name}'s estimates"
    return out


def range_summary(card):
    """How many claims with a range hold the published value inside it, of how many; of
    those with a spread too (``spread``), how many have their range inside the spread
    (``range in spread``)."""
    ranged = card[card["range moves"] > 0] if "range moves" in card else card.iloc[0:0]
    in_spread = ranged.get("range in spread", pd.Series(dtype=object))
    return {"ranged": int(len(ranged)), "inside": int(ranged["published inside"].sum()),
            "no range": int(len(card) - len(ranged)), "spread": int(in_spread.notna().sum()),
            "range in spread": int(in_spread.eq(True).sum())}


def range_figure(card):
    """Each claim's range beside its published value, in the units of its verdict: the
    magnitude (the share of the published effect, or emulated / published), so that the
    paper's value is 1 for every claim. A bar from the range's low to its high, a dot at the
    value as it is; the band of ``BANDS``' first shaded."""
    rows = card[card["range moves"] > 0].copy()

    def magnitude(row, value):
        if row["kind"] == "effect":
            return (value - row["neutral"]) / (row["published"] - row["neutral"])
        return value / row["published"]
    rows = rows[rows["magnitude"].notna()]
    ends = [sorted((magnitude(r, r["range low"]), magnitude(r, r["range high"])))
            for _, r in rows.iterrows()]
    labels = [f"{c.split()[0]}: {t}" for c, t in zip(rows["chapter"], rows["claim"])]
    limit = BANDS[0][1]
    fig = go.Figure()
    fig.add_vrect(x0=1 / limit, x1=limit, fillcolor=plot.PALETTE[2], opacity=0.15,
                  line_width=0)
    fig.add_vline(x=1, line_color="black", line_width=1)
    fig.add_scatter(x=[(lo + hi) / 2 for lo, hi in ends], y=labels, mode="markers",
                    marker=dict(size=0.1, opacity=0), showlegend=False, hoverinfo="skip",
                    error_x=dict(type="data", symmetric=False,
                                 array=[(hi - lo) / 2 for lo, hi in ends],
                                 arrayminus=[(hi - lo) / 2 for lo, hi in ends],
                                 thickness=6, width=0, color=plot.PALETTE[0]))
    fig.add_scatter(x=list(rows["magnitude"]), y=labels, mode="markers", name="as it is",
                    marker=dict(color="black", size=6),
                    customdata=[[lo, hi] for lo, hi in ends],
                    hovertemplate="%{y}<br>as it is: %{x:.3g}<br>range: %{customdata[0]:.3g}"
                                  " to %{customdata[1]:.3g}<extra></extra>")
    fig.update_yaxes(autorange="reversed", tickfont=dict(size=9))
    fig.update_xaxes(range=[-1, 3], zeroline=True)
    return plot.style(fig, title="Each claim's range under the model's estimates",
                      x="magnitude: share of the published effect, or emulated / published "
                        "(the paper = 1)", height=max(420, 16 * len(rows) + 140))


def headline(card):
    """The number of claims in each verdict (``VERDICTS``' order, every verdict listed)."""
    counts = card["verdict"].value_counts()
    return {verdict: int(counts.get(verdict, 0)) for verdict in VERDICTS}


# ------------------------------------------------------------------ the page's table

#: The table's columns: (header, row key, formatted as a number)
TABLE_COLUMNS = (("chapter", "chapter", False), ("claim", "claim", False),
                 ("published", "published", True), ("emulated", "emulated", True),
                 ("unit", "unit", False), ("magnitude", "magnitude", True),
                 ("verdict", "verdict", False))
#: What each claim's cell says under it, in small type: (label, row key). The book's column
#: holds seven columns without scrolling sideways; these would not fit as columns.
CLAIM_DETAILS = (("kind", "kind"), ("source", "source"), ("no change within", "no change within"),
                 ("stand-in", "stand-in"), ("why", "reason"),
                 ("moved most by", "moved most by"), ("range", "range note"))

_SCRIPT = """
<script>
(function () {
  var root = document.getElementById("%(id)s");
  var body = root.querySelector("tbody");
  var filters = root.querySelectorAll("select");
  function apply() {
    var want = {};
    filters.forEach(function (f) { want[f.dataset.column] = f.value; });
    var shown = 0;
    body.querySelectorAll("tr").forEach(function (tr) {
      var ok = Object.keys(want).every(function (c) {
        return !want[c] || tr.dataset[c] === want[c]; });
      tr.style.display = ok ? "" : "none";
      if (ok) { shown += 1; }
    });
    root.querySelector(".claims-shown").textContent = shown;
  }
  filters.forEach(function (f) { f.addEventListener("change", apply); });
  root.querySelectorAll("th").forEach(function (th, i) {
    th.addEventListener("click", function () {
      var up = th.dataset.order !== "up";
      th.dataset.order = up ? "up" : "down";
      var rows = Array.prototype.slice.call(body.querySelectorAll("tr"));
      rows.sort(function (a, b) {
        var x = a.children[i].dataset.sort, y = b.children[i].dataset.sort;
        var nx = parseFloat(x), ny = parseFloat(y);
        var r = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
        return up ? r : -r;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
</script>
"""


def _cell(value, number):
    if number:
        if value is None or value != value:            # None or NaN
            return '<td data-sort="">&ndash;</td>'
        value = float(value)                             # numpy's repr is np.float64(...)
        return f'<td data-sort="{value!r}" style="text-align:right">{value:.4g}</td>'
    text = "" if value is None else str(value)
    return f'<td data-sort="{html.escape(text)}">{html.escape(text)}</td>'


def _in_range(row):
    """"inside", "outside" or "no range": the published value against the claim's range."""
    inside = row.get("published inside")
    return "no range" if inside is None or inside != inside else \
        ("inside" if inside else "outside")


def _range_line(row, key):
    """The small line under the emulated value (its range) or the verdict (the paper's
    value inside or outside it); none without ranges."""
    if "range low" not in row:
        return ""
    if key == "emulated":
        low, high = row["range low"], row["range high"]
        if low != low:
            return ""
        return f'<br><small>range {float(low):.4g} to {float(high):.4g}</small>'
    return f'<br><small>paper {_in_range(row)} the range</small>' \
        if _in_range(row) != "no range" else ""


def _spread_line(row):
    """The small line under the emulated value giving its spread over the runs it averages
    ("3 layouts 2.1 to 6.3"); none for a claim without one."""
    low, high = row.get("spread low"), row.get("spread high")
    if low is None or low != low:
        return ""
    return (f'<br><small>{html.escape(str(row["spread over"]))} '
            f'{float(low):.4g} to {float(high):.4g}</small>')


def _spread_verdict_line(row):
    """The small line under the verdict saying where the spread's ends fall when they are
    not in the verdict's band (``Claim.spread_note``); none otherwise."""
    note = row.get("spread verdicts")
    return f'<br><small>{html.escape(note)}</small>' if note else ""


def _details(row):
    """The claim's details under it: kind, source, tolerance, stand-in, reason."""
    parts = [f"{label}: {html.escape(str(row[key]))}" for label, key in CLAIM_DETAILS
             if row.get(key) not in (None, "") and row[key] == row[key]]
    return f'<br><small>{"; ".join(parts)}</small>' if parts else ""


def html_table(card, page_prefix="../", table_id="scorecard-table"):
    """The scorecard as a self-contained HTML table a reader can sort (click a header) and
    filter (by chapter and verdict, and with ranges by whether the paper's value is inside
    the claim's range; under the emulated value its spread, where the claim has one, and
    its range): no library, no request leaving the page. Each claim
    links to the page that computes it (``page_prefix``: from the page showing the table to
    the book's root)."""
    card = card.copy()
    ranged = "range low" in card
    filters = ("chapter", "verdict") + (("range",) if ranged else ())
    if ranged:
        card["range"] = [_in_range(row) for _, row in card.iterrows()]
    options = {}
    for column in filters:
        order = VERDICTS if column == "verdict" else \
            ("inside", "outside", "no range") if column == "range" else card[column].unique()
        values = [v for v in order if v in set(card[column])]
        options[column] = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>'
                                  for v in values)
    selects = "".join(
        f'<label style="margin-right:1em">{column} <select data-column="{column}">'
        f'<option value="">all</option>{options[column]}</select></label>'
        for column in filters)
    head = "".join(f'<th style="cursor:pointer" title="sort">{html.escape(h)}</th>'
                   for h, _, _ in TABLE_COLUMNS)
    rows = []
    for _, row in card.iterrows():
        cells = []
        for _, key, number in TABLE_COLUMNS:
            cell = _cell(row[key], number)
            if key in ("emulated", "verdict"):
                spread = _spread_line(row) if key == "emulated" else _spread_verdict_line(row)
                cell = cell[:-len("</td>")] + spread + _range_line(row, key) + "</td>"
            if key == "claim":
                link = html.escape(f"{page_prefix}{row['page']}.html")
                cell = cell.replace(f">{html.escape(row['claim'])}<",
                                    f'><a href="{link}">{html.escape(row["claim"])}</a>'
                                    f'{_details(row)}<', 1)
            cells.append(cell)
        extra = f' data-range="{html.escape(row["range"])}"' if ranged else ""
        rows.append(f'<tr data-chapter="{html.escape(row["chapter"])}" '
                    f'data-verdict="{html.escape(row["verdict"])}"{extra}>{"".join(cells)}</tr>')
    return (f'<div id="{table_id}" class="scorecard-table">'
            f'<p>{selects} <span class="claims-shown">{len(card)}</span> of {len(card)} '
            f'claims shown; click a column\'s header to sort by it.</p>'
            f'<table class="table" style="overflow-wrap:anywhere">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'</div>' + _SCRIPT % {"id": table_id})
