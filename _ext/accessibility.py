"""Sphinx extension: the fixes that make the book's pages pass an axe-core audit (issue 34).

The themes and extensions write three things that axe-core counts as serious or critical
(tests/book/test_book.py audits every page):

* the sidebar's expand buttons are ``<summary>`` elements holding only an icon, so a screen
  reader announces a nameless control: each gets ``aria-label="Pages of <chapter>"``;
* sphinxcontrib-bibtex's reference list is a ``role="list"`` whose entries have the
  deprecated ``role="doc-biblioentry"``, so the list has no list items: they become
  ``role="listitem"``;
* links in the striped rows of tables (light grey) are 4.3:1 against it, under the 4.5:1
  of WCAG AA: _static/book.css darkens them (no change here).

The first two are written by templates outside a page's body, so they are fixed in the
written HTML files once the build has finished.

Registered in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

# The sidebar's chapter link, then the <details> that folds its pages.
_SUMMARY = re.compile(r'(<a class="[^"]*reference internal[^"]*" href="[^"]*">(?P<title>[^<]*)</a>'
                      r'<details[^>]*>)<summary>')
_BIBLIOENTRY = 'role="doc-biblioentry"'


def fix_page(text: str) -> str:
    """The page ``text`` with its nameless summaries named and its citations list items."""
    def name(match):
        title = html.unescape(match["title"]).strip()
        return f'{match[1]}<summary aria-label="{html.escape("Pages of " + title)}">'

    text = _SUMMARY.sub(name, text)
    if 'class="citation-list"' in text:
        text = text.replace(_BIBLIOENTRY, 'role="listitem"')
    return text


def _fix_pages(app, exception):
    """build-finished: rewrite every HTML page of the output."""
    if exception is not None or app.builder.format != "html":
        return
    for path in Path(app.outdir).rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        fixed = fix_page(text)
        if fixed != text:
            path.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _fix_pages)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
