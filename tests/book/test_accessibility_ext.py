"""_ext/accessibility.py: the sidebar's expand buttons get a name, the reference list's
entries become list items (what axe-core flagged on every page of the built book)."""
import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("accessibility", REPO / "_ext" / "accessibility.py")
accessibility = importlib.util.module_from_spec(spec)
spec.loader.exec_module(accessibility)

SIDEBAR = ('<li class="toctree-l1 has-children"><a class="reference internal" href="a.html">'
           '3. Dougan &amp; co</a><details><summary><span class="toctree-toggle" '
           'role="presentation"><i class="fa-solid fa-chevron-down"></i></span></summary><ul>'
           '<li class="toctree-l1 current active has-children"><a class="current reference '
           'internal" href="#">4. Blanchard 2002</a><details open="open"><summary><span>')


def test_each_expand_button_is_named_after_its_chapter():
    fixed = accessibility.fix_page(SIDEBAR)
    assert '<details><summary aria-label="Pages of 3. Dougan &amp; co">' in fixed
    assert '<details open="open"><summary aria-label="Pages of 4. Blanchard 2002">' in fixed
    assert "<summary>" not in fixed
    assert accessibility.fix_page(fixed) == fixed                 # a second pass changes nothing


def test_citations_become_list_items_only_in_a_citation_list():
    page = ('<div role="list" class="citation-list">\n<div class="citation" id="id3" '
            'role="doc-biblioentry">')
    assert 'role="listitem"' in accessibility.fix_page(page)
    alone = '<div class="citation" role="doc-biblioentry">'
    assert accessibility.fix_page(alone) == alone
