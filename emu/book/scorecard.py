"""The reproduction scorecard: every chapter's claims (``emu.present.claims.Claim``, listed by
each paper's ``claims()``) gathered into one table for the book's scorecard page, its
headline (the claims in each verdict) and the page's table, which a reader sorts and
filters."""
from __future__ import annotations

import html
import importlib

import pandas as pd

from ..present.claims import VERDICTS

#: chapter -> the module whose claims() lists its claims
CHAPTERS = {"Dougan 1999": "emu.papers.dougan1999",
            "Blanchard 2002": "emu.papers.blanchard2002",
            "Mackerras 2003": "emu.papers.mackerras2003",
            "Yoshioka 2005": "emu.papers.yoshioka2005",
            "Yun 2011": "emu.papers.yun2011"}


def scorecard(chapters=None):
    """Every claim of the chapters (all by default) as a DataFrame, one row per claim."""
    rows = []
    for chapter in chapters or CHAPTERS:
        if chapter not in CHAPTERS:
            raise ValueError(f"no chapter {chapter!r} (the book has: {', '.join(CHAPTERS)})")
        module = importlib.import_module(CHAPTERS[chapter])
        rows += [claim.row() for claim in module.claims()]
    return pd.DataFrame(rows)


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
                 ("stand-in", "stand-in"), ("why", "reason"))

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


def _details(row):
    """The claim's details under it: kind, source, tolerance, stand-in, reason."""
    parts = [f"{label}: {html.escape(str(row[key]))}" for label, key in CLAIM_DETAILS
             if row.get(key) not in (None, "") and row[key] == row[key]]
    return f'<br><small>{"; ".join(parts)}</small>' if parts else ""


def html_table(card, page_prefix="../", table_id="scorecard-table"):
    """The scorecard as a self-contained HTML table a reader can sort (click a header) and
    filter (by chapter and verdict): no library, no request leaving the page. Each claim
    links to the page that computes it (``page_prefix``: from the page showing the table to
    the book's root)."""
    options = {}
    for column in ("chapter", "verdict"):
        values = [v for v in (VERDICTS if column == "verdict" else card[column].unique())
                  if v in set(card[column])]
        options[column] = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>'
                                  for v in values)
    selects = "".join(
        f'<label style="margin-right:1em">{column} <select data-column="{column}">'
        f'<option value="">all</option>{options[column]}</select></label>'
        for column in ("chapter", "verdict"))
    head = "".join(f'<th style="cursor:pointer" title="sort">{html.escape(h)}</th>'
                   for h, _, _ in TABLE_COLUMNS)
    rows = []
    for _, row in card.iterrows():
        cells = []
        for _, key, number in TABLE_COLUMNS:
            cell = _cell(row[key], number)
            if key == "claim":
                link = html.escape(f"{page_prefix}{row['page']}.html")
                cell = cell.replace(f">{html.escape(row['claim'])}<",
                                    f'><a href="{link}">{html.escape(row["claim"])}</a>'
                                    f'{_details(row)}<', 1)
            cells.append(cell)
        rows.append(f'<tr data-chapter="{html.escape(row["chapter"])}" '
                    f'data-verdict="{html.escape(row["verdict"])}">{"".join(cells)}</tr>')
    return (f'<div id="{table_id}" class="scorecard-table">'
            f'<p>{selects} <span class="claims-shown">{len(card)}</span> of {len(card)} '
            f'claims shown; click a column\'s header to sort by it.</p>'
            f'<table class="table" style="overflow-wrap:anywhere">'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            f'</div>' + _SCRIPT % {"id": table_id})
