"""The book builds, and its pages work in a real browser with no network.

The tests marked ``book`` build the whole book once per test module into a
temporary folder, executing every notebook (a notebook error or any Sphinx
warning fails the build). The browser tests then serve the HTML on 127.0.0.1
and open, in headless Chromium, every page of the table of contents (_toc.yml,
so a page added there is checked without changing this file) and the search
and index pages, at a desktop width (1280 px) and a phone's (390 px). Every
request is routed: one that leaves 127.0.0.1 is refused and reported. They check
that every plotly figure has drawn (an ``svg.main-svg`` inside it) and that its
titles, legend, labels and notes lie inside it (on a phone the legend also stays
off the plot), that there is no JavaScript error and no failed local request,
that the page itself never scrolls sideways, and, at desktop width, that no cell
output does either. Separate tests click the sidebar toggles at both widths,
search for a routine's name, and check the launch links (Binder, Colab, the
repository) against _config.yml. Every page is audited by axe-core (axe-playwright-python):
no serious or critical violation, at either width; every figure has a text alternative and
its data as a CSV download.

Environment:
  CI                 if set, a missing Chromium or playwright fails instead of skipping
  EMU_BOOK_HTML      use this already-built _build/html instead of building again
  EMU_BOOK_SHOTS     save a full-page PNG of every page, at each width, into this folder
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
BUILD_TIMEOUT_S = 3600
FIGURE_TIMEOUT_MS = 30_000
# Every figure div made by plotly.io.to_html has class plotly-graph-div; plotly.js
# adds js-plotly-plot when it draws, and the plot itself is an svg.main-svg.
FIGURES_DRAWN_JS = """() => {
  const divs = document.querySelectorAll('.plotly-graph-div, .js-plotly-plot');
  return Array.from(divs).every(d => d.querySelector('svg.main-svg'));
}"""
FIGURE_REPORT_JS = """() => Array.from(document.querySelectorAll('.plotly-graph-div, .js-plotly-plot'))
  .map(d => ({id: d.id, drawn: !!d.querySelector('svg.main-svg')}))"""


def _browser_or_skip():
    """Return playwright's sync_playwright, or skip (fail under CI) if unusable."""
    problem = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - depends on the machine
        problem, sync_playwright = f"playwright is not installed ({exc})", None
    if problem is None and not os.access(CHROMIUM, os.X_OK):
        problem = f"{CHROMIUM} not found (apt-get install chromium)"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"browser check impossible under CI: {problem}")
        pytest.skip(problem)
    return sync_playwright


def build_book(out: Path) -> Path:
    """Run ``jupyter-book build`` into ``out``; return the HTML folder."""
    cmd = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
           "build", str(REPO), "--path-output", str(out), "-W", "--keep-going"]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT_S)
    log = proc.stdout + proc.stderr
    (out / "build.log").write_text(log)
    if proc.returncode != 0:
        pytest.fail(f"jupyter-book build failed (exit {proc.returncode}); "
                    f"full log in {out / 'build.log'}; last lines:\n{log[-6000:]}")
    html = out / "_build" / "html"
    assert (html / "index.html").is_file(), f"no index.html in {html}"
    return html


@pytest.fixture(scope="module")
def book_html(tmp_path_factory) -> Path:
    prebuilt = os.environ.get("EMU_BOOK_HTML")
    if prebuilt:
        return Path(prebuilt)
    return build_book(tmp_path_factory.mktemp("book"))


@pytest.fixture(scope="module")
def server(book_html):
    class QuietHandler(SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(QuietHandler, directory=str(book_html))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def toc_files(toc: Path = REPO / "_toc.yml") -> list[str]:
    """Every file of the table of contents (root, parts, chapters, sections), in order,
    without its suffix, as _toc.yml names it."""
    import yaml

    spec = yaml.safe_load(toc.read_text(encoding="utf-8"))
    files = [spec["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(str(Path(entry["file"]).with_suffix("")))
            walk(entry.get("sections"))

    for part in spec.get("parts", []):
        walk(part.get("chapters"))
    walk(spec.get("chapters"))
    return files


# Sphinx's own pages, beside the toc's.
SPECIAL_PAGES = ["search.html", "genindex.html"]


def book_pages(html: Path) -> tuple[list[str], list[str]]:
    """(notebook pages, other pages) of the toc, as paths relative to the HTML root.

    A page's source is copied to _sources/ under its original suffix, so the
    notebooks are the pages whose source ends in .ipynb. A toc entry without a
    page is an error.
    """
    notebooks, others = [], []
    for name in toc_files():
        page = f"{name}.html"
        assert (html / page).is_file(), f"{name} is in _toc.yml but {page} was not built"
        source = html / "_sources" / f"{name}.ipynb"
        (notebooks if source.is_file() else others).append(page)
    return notebooks, others


def _is_local(url: str) -> bool:
    return urlsplit(url).hostname in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:", "about:"))


# Elements of a drawn figure that must lie inside it: the title, the legend, the axis
# titles, the notes and the tick labels.
FIGURE_LAYOUT_JS = r"""(narrow) => {
  const problems = [];
  const shown = r => r.width > 0 && r.height > 0;
  const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const svg = gd.querySelector('svg.main-svg');
    if (!svg) { continue; }
    const box = svg.getBoundingClientRect();
    const title = gd.querySelector('.gtitle');
    const name = (title && title.textContent.slice(0, 50)) || gd.id;
    if (narrow && box.width >= 600) { problems.push(`${name}: ${box.width} px wide on a phone`); }
    const parts = gd.querySelectorAll(
      '.gtitle, .legend, .g-xtitle, .g-ytitle, .annotation, .xtick text, .ytick text');
    for (const el of parts) {
      const r = el.getBoundingClientRect();
      if (shown(r) && (r.left < box.left - 2 || r.right > box.right + 2 ||
                       r.top < box.top - 2 || r.bottom > box.bottom + 2)) {
        problems.push(`${name}: ${el.getAttribute('class') || el.tagName} ` +
                      `"${el.textContent.slice(0, 40)}" is cut off`);
      }
    }
    const legend = gd.querySelector('.legend');
    if (narrow && legend && shown(legend.getBoundingClientRect())) {
      for (const plot of gd.querySelectorAll('.nsewdrag')) {
        if (overlap(legend.getBoundingClientRect(), plot.getBoundingClientRect())) {
          problems.push(`${name}: the legend covers the plot`);
        }
      }
    }
    const modebar = gd.querySelector('.modebar');
    if (narrow && modebar && title && overlap(modebar.getBoundingClientRect(),
                                               title.getBoundingClientRect())) {
      problems.push(`${name}: the mode bar covers the title`);
    }
    for (const button of gd.querySelectorAll('.modebar-btn')) {
      const what = button.getAttribute('data-title') || '';
      if (/share|plotly/i.test(what) || /plot\.ly|plotly\.com/.test(button.getAttribute('href') || '')) {
        problems.push(`${name}: mode bar button "${what}"`);
      }
    }
  }
  return problems;
}"""
# The page itself scrolling sideways, and (at desktop width) a cell output that does.
SIDEWAYS_JS = """(outputsToo) => {
  const problems = [];
  const page = document.documentElement;
  if (page.scrollWidth > window.innerWidth + 1) {
    problems.push(`the page is ${page.scrollWidth} px wide in a ${window.innerWidth} px window`);
  }
  if (outputsToo) {
    for (const el of document.querySelectorAll('div.cell_output *')) {
      const style = getComputedStyle(el).overflowX;
      if ((style === 'auto' || style === 'scroll') && el.scrollWidth > el.clientWidth + 1) {
        problems.push(`an output scrolls sideways (${el.scrollWidth} px in ${el.clientWidth}): ` +
                      `"${el.innerText.slice(0, 60)}"`);
      }
    }
  }
  return problems;
}"""
WIDTHS = {"desktop": 1280, "phone": 390}


def new_context(browser, width: int, external: list):
    """A browser context of ``width`` px whose every request is routed: local ones go on,
    any other is refused and recorded in ``external`` (web sockets too)."""
    context = browser.new_context(viewport={"width": width, "height": 900})

    def route(r):
        if _is_local(r.request.url):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()

    def route_socket(ws):
        external.append(ws.url)
        ws.close()

    context.route("**/*", route)
    context.route_web_socket(lambda url: True, route_socket)
    return context


def check_page(context, url: str, width: int, shots: Path | None) -> dict:
    """Open one page; return what went wrong and how many figures it drew."""
    errors, failed = [], []
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"exception: {e}"))
    page.on("requestfailed", lambda r: _is_local(r.url) and failed.append(f"{r.url}: {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.url}: HTTP {r.status}"))
    page.goto(url, wait_until="load")
    try:
        page.wait_for_function(FIGURES_DRAWN_JS, timeout=FIGURE_TIMEOUT_MS)
    except Exception:
        pass  # reported below, figure by figure
    page.wait_for_timeout(500)  # late console messages; the narrow layout's relayout
    figures = page.evaluate(FIGURE_REPORT_JS)
    narrow = width < 600
    layout = page.evaluate(FIGURE_LAYOUT_JS, narrow) + page.evaluate(SIDEWAYS_JS, not narrow)
    unlabelled = page.evaluate(FIGURE_ACCESS_JS)
    violations = axe_violations(page)
    if shots is not None:
        name = urlsplit(url).path.strip("/").replace("/", "_") or "index"
        page.screenshot(path=str(shots / f"{width}_{name}.png"), full_page=True)
    page.close()
    return {"errors": errors, "failed": failed, "layout": layout,
            "figures": len(figures), "unlabelled": unlabelled, "axe": violations,
            "undrawn": [f["id"] for f in figures if not f["drawn"]]}


# Every figure sits in a box of role figure named by its text alternative (a sentence saying what it
# shows) and offers its data as a CSV download (emu.present.plot.accessible_figure).
FIGURE_ACCESS_JS = r"""() => Array.from(document.querySelectorAll('.plotly-graph-div')).flatMap(gd => {
  const figure = gd.closest('.emu-figure[role=figure]');
  if (!figure) { return [`${gd.id}: not in a figure with a text alternative`]; }
  const named = document.getElementById(figure.getAttribute('aria-labelledby') || '');
  const problems = [];
  if (!named || named.textContent.trim().split(' ').length < 4) {
    problems.push(`${gd.id}: no sentence for its text alternative`);
  }
  const link = figure.querySelector('a[download$=".csv"]');
  if (!link || !link.href.startsWith('data:text/csv') ||
      decodeURIComponent(link.href.split(',').slice(1).join(',')).split('\n').length < 2) {
    problems.push(`${gd.id}: no CSV of its data`);
  }
  return problems;
})"""
# axe-core impacts that fail a page (issue 34); minor and moderate ones do not.
AXE_FAILING = ("serious", "critical")


def axe_results(page) -> list[dict]:
    """axe-core's violations on the open page (axe-playwright-python injects its bundled
    axe.min.js: nothing is fetched)."""
    from axe_playwright_python.sync_playwright import Axe

    # preload off: axe-core would fetch each stylesheet again for one rule
    # (css-orientation-lock) and resolves theme.css's @import "../basic.css" against the
    # page, not the stylesheet: a 404 on every page that is axe's, not the book's.
    options = {"resultTypes": ["violations"], "preload": False}
    return Axe().run(page, options=options).response["violations"]


def axe_violations(page) -> list[str]:
    """The serious and critical violations, each as 'rule (impact): first elements'."""
    return [f"{v['id']} ({v['impact']}): " + ", ".join(
                " ".join(map(str, n["target"])) for n in v["nodes"][:3])
            for v in axe_results(page) if v["impact"] in AXE_FAILING]


@pytest.fixture(scope="module")
def browser(sync_playwright_api):
    with sync_playwright_api() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def sync_playwright_api():
    return _browser_or_skip()


@pytest.mark.book
def test_book_builds_with_local_plotly(book_html):
    notebooks, others = book_pages(book_html)
    assert notebooks, f"no notebook page found under {book_html}"
    assert (book_html / "_static" / "plotly.min.js").stat().st_size > 1_000_000
    for rel in notebooks + others:
        text = (book_html / rel).read_text(encoding="utf-8")
        assert text.count("THEBE_JS_URL =") <= 1, f"{rel}: duplicate thebe script"
        if 'class="plotly-graph-div"' in text:
            assert "_static/plotly.min.js" in text, f"{rel}: figures but no plotly.js"
            assert "cdn.plot.ly" not in text, f"{rel}: plotly.js from a CDN"


@pytest.mark.book
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_pages_in_browser(browser, book_html, server, width):
    notebooks, others = book_pages(book_html)
    assert notebooks, f"no notebook page found under {book_html}"
    shots = os.environ.get("EMU_BOOK_SHOTS")
    shots = Path(shots) if shots else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)

    problems, figures_on_notebooks, external = {}, 0, []
    context = new_context(browser, width, external)
    try:
        for rel in notebooks + others + SPECIAL_PAGES:
            result = check_page(context, f"{server}/{rel}", width, shots)
            if rel in notebooks:
                figures_on_notebooks += result["figures"]
            bad = {k: result[k] for k in ("errors", "failed", "undrawn", "layout", "unlabelled",
                                          "axe") if result[k]}
            if bad:
                problems[rel] = bad
    finally:
        context.close()

    assert not external, f"requests that left 127.0.0.1: {sorted(set(external))}"
    assert not problems, f"pages with problems at {width} px:\n" + "\n".join(
        f"  {page}: {bad}" for page, bad in problems.items())
    # The book is about measurements: if no notebook shows a figure, figure output
    # is being lost somewhere (e.g. a notebook that forgot emu.present.plot.setup()).
    assert figures_on_notebooks > 0, "no plotly figure on any notebook page"


# Each control of each online explorer on a page (emu.present.switch), by keyboard: the
# figure is drawn again (plotly gives gd.data a new array, which loses the mark set here),
# and its text alternative changes to name the new setting.
EXPLORER_KEYS_JS = r"""async () => {
  const problems = [];
  const wait = ms => new Promise(r => setTimeout(r, ms));
  for (const group of document.querySelectorAll('.emu-switch')) {
    const figure = group.closest('.emu-figure');
    const gd = figure.querySelector('.js-plotly-plot');
    const alt = figure.querySelector('.emu-figure-alt');
    for (const field of group.querySelectorAll('select, input[type=range]')) {
      const label = figure.querySelector(`label[for="${field.id}"]`);
      if (!label || !label.textContent.trim()) { problems.push(`${field.id}: no label`); }
      const last = field.tagName === 'SELECT' ? field.options.length - 1 : Number(field.max);
      if (last < 1) { continue; }
      const before = alt.textContent;
      gd.data.emuMark = true;
      field.focus();
      if (document.activeElement !== field) { problems.push(`${field.id}: takes no focus`); }
      field.value = String(Number(field.value) === last ? 0 : Number(field.value) + 1);
      field.dispatchEvent(new Event(field.tagName === 'SELECT' ? 'change' : 'input'));
      for (let i = 0; i < 50 && gd.data.emuMark; i++) { await wait(100); }
      if (gd.data.emuMark) { problems.push(`${field.id}: the figure was not drawn again`); }
      if (alt.textContent === before) { problems.push(`${field.id}: the same text alternative`); }
    }
  }
  return problems;
}"""


@pytest.mark.book
@pytest.mark.parametrize("width", WIDTHS.values(), ids=WIDTHS.keys())
def test_online_explorers_move_without_a_kernel(browser, book_html, server, width):
    """Every explorer's figure in the built book: each control labelled, focusable, and
    each change draws another precomputed figure with its own text alternative."""
    notebooks, _ = book_pages(book_html)
    pages = [rel for rel in notebooks if 'class="emu-switch"' in
             (book_html / rel).read_text(encoding="utf-8")]
    assert len(pages) >= 5, f"online explorers on only {pages}"
    external, problems = [], {}
    context = new_context(browser, width, external)
    try:
        for rel in pages:
            page = context.new_page()
            page.goto(f"{server}/{rel}", wait_until="load")
            page.wait_for_function(FIGURES_DRAWN_JS, timeout=FIGURE_TIMEOUT_MS)
            found = page.evaluate(EXPLORER_KEYS_JS)
            if found:
                problems[rel] = found
            page.close()
    finally:
        context.close()
    assert not external and not problems, (external, problems)


VISIBLE_JS = """(selector) => Array.from(document.querySelectorAll(selector)).some(el => {
  const r = el.getBoundingClientRect(), s = getComputedStyle(el);
  return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0 && r.height > 0
         && r.right > 0 && r.left < window.innerWidth;
})"""
SEARCH_TRIGGERS_JS = """() => Array.from(document.querySelectorAll('.search-button-field, .search-button'))
  .filter(el => { const r = el.getBoundingClientRect(), s = getComputedStyle(el);
                  return s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0
                         && r.height > 0; }).length"""


def wait_visible(page, selector, visible=True):
    page.wait_for_function(f"(s) => ({VISIBLE_JS})(s) === {str(visible).lower()}", arg=selector,
                           timeout=5_000)


@pytest.mark.book
def test_sidebar_toggles_open_and_close_the_navigation(browser, book_html, server):
    """The toggles work when clicked, on a desktop and on a phone (they did nothing with
    sphinx-book-theme 1.3.0 and pydata-sphinx-theme 0.17.1), and one search field shows."""
    notebooks, _ = book_pages(book_html)
    chapter, other_chapter = notebooks[0], notebooks[-1]      # the first has sections
    external = []
    desktop = new_context(browser, WIDTHS["desktop"], external)
    page = desktop.new_page()
    page.goto(f"{server}/{chapter}")
    assert page.evaluate(SEARCH_TRIGGERS_JS) == 1, "not exactly one search field on a desktop"
    wait_visible(page, ".bd-sidebar-primary")
    page.locator(".primary-toggle:visible").first.click()
    wait_visible(page, ".bd-sidebar-primary", visible=False)      # collapsed
    page.locator(".primary-toggle:visible").first.click()
    wait_visible(page, ".bd-sidebar-primary")                     # back
    desktop.close()

    phone = new_context(browser, WIDTHS["phone"], external)
    page = phone.new_page()
    page.goto(f"{server}/{chapter}")
    assert page.evaluate(SEARCH_TRIGGERS_JS) == 1, "not exactly one search button on a phone"
    wait_visible(page, ".bd-sidebar-primary", visible=False)
    page.locator(".primary-toggle:visible").first.click()
    wait_visible(page, ".bd-sidebar-primary")                     # the navigation opens
    page.keyboard.press("Escape")
    wait_visible(page, ".bd-sidebar-primary", visible=False)
    page.locator(".secondary-toggle:visible").first.click()
    wait_visible(page, ".bd-sidebar-secondary")                   # the page's contents
    page.keyboard.press("Escape")
    page.locator(".primary-toggle:visible").first.click()         # and a link in it works
    target = other_chapter.rsplit("/", 1)[-1]
    page.locator(f".bd-sidebar-primary a[href$='{target}']:visible").first.click()
    page.wait_for_url(f"**/{other_chapter}")
    phone.close()
    assert not external, f"requests that left 127.0.0.1: {external}"


@pytest.mark.book
def test_search_finds_a_routine(browser, book_html, server):
    external = []
    context = new_context(browser, WIDTHS["desktop"], external)
    page = context.new_page()
    page.goto(f"{server}/search.html?q=flush_dcache_icache")
    results = page.locator("ul.search li a")
    results.first.wait_for(timeout=20_000)
    found = [results.nth(i).get_attribute("href") for i in range(results.count())]
    context.close()
    assert any("mackerras2003/01-cache-flushing.html" in h for h in found), found
    assert not external, f"requests that left 127.0.0.1: {external}"


def book_config() -> dict:
    import yaml

    return yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))


@pytest.mark.book
def test_launch_links_are_well_formed(book_html):
    """Every notebook page opens its own notebook on Binder and Colab, from the repository
    of _config.yml, on its branch; the repository and issue buttons point there too."""
    import re

    config = book_config()
    repo = config["repository"]["url"].rstrip("/")
    owner_repo = urlsplit(repo).path.strip("/")
    branch = config["repository"]["branch"]
    assert re.fullmatch(r"[\w.-]+/[\w.-]+", owner_repo), repo
    binder = config["launch_buttons"]["binderhub_url"].rstrip("/")
    colab = config["launch_buttons"]["colab_url"].rstrip("/")
    notebooks, _ = book_pages(book_html)
    for rel in notebooks:
        # the page's source: a notebook, or a MyST text notebook (book/teachers.md), which
        # the build also copies to _sources as .ipynb
        sources = [rel[:-len(".html")] + s for s in (".ipynb", ".md")]
        notebook = next((s for s in sources if (REPO / s).is_file()), None)
        assert notebook, f"{rel}: no source among {sources}"
        hrefs = set(re.findall(r'href="(https?://[^"]+)"', (book_html / rel).read_text()))
        want = {f"{binder}/v2/gh/{owner_repo}/{branch}?urlpath=lab/tree/{notebook}",
                f"{colab}/github/{owner_repo}/blob/{branch}/{notebook}", repo}
        assert want <= hrefs, f"{rel}: missing {want - hrefs}"
        issues = [h for h in hrefs if h.startswith(f"{repo}/issues/new?")]
        assert len(issues) == 1, f"{rel}: {issues}"
        for href in want | set(issues):
            parts = urlsplit(href)
            assert parts.scheme == "https" and parts.netloc and " " not in href, href
            assert "//" not in parts.path and "None" not in href, href


def test_the_repository_address_is_written_once():
    """The placeholder address lives in _config.yml; pages take it from there, and the
    notebooks' Colab install cell is made from it (python -m emu.book.colab; tests/book/
    test_colab.py checks that every copy is in step)."""
    import json

    from emu.book.colab import CELL_ID

    address = book_config()["repository"]["url"]
    sources = [p for p in REPO.rglob("*") if p.suffix in (".md", ".ipynb", ".yml", ".py", ".txt")
               and not any(part.startswith((".", "_build")) for part in p.relative_to(REPO).parts)]

    def written(path):
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            return any(address in "".join(c["source"]) for c in cells if c.get("id") != CELL_ID)
        return address in path.read_text(encoding="utf-8", errors="ignore")

    assert [p for p in sources if written(p)] == [REPO / "_config.yml"]


def test_binder_installs_the_book_and_its_library():
    """Binder (repo2docker) reads binder/: the book's requirements, written once at the root,
    then the library itself, on a Python the package accepts."""
    requirements = (REPO / "binder" / "requirements.txt").read_text().split("\n")
    assert "-r ../requirements.txt" in requirements
    post_build = (REPO / "binder" / "postBuild")
    assert os.access(post_build, os.X_OK)
    assert "pip install --no-cache-dir -e ." in post_build.read_text()
    runtime = (REPO / "binder" / "runtime.txt").read_text().strip()
    assert runtime == "python-3.11"
    assert 'requires-python = ">=3.11"' in (REPO / "pyproject.toml").read_text()
    assert "jupyterlab==" in (REPO / "requirements.txt").read_text()


@pytest.mark.book
def test_papers_are_cited_and_the_index_has_entries(book_html):
    """references.bib's five papers on the references page; each chapter's page cites its
    paper; the intro cites all five; the general index lists the routines."""
    import re

    references = (book_html / "book" / "references.html").read_text()
    keys = re.findall(r"^@\w+\{(\w+),", (REPO / "references.bib").read_text(), re.M)
    assert sorted(keys) == ["blanchard2002", "dougan1999", "mackerras2003", "yoshioka2005",
                            "yun2011"]
    for title in ("Optimizing the Idle Task and Other MMU Tricks",
                  "The seven second kernel compile",
                  "Low-level Optimizations in the PowerPC Linux Kernels",
                  "[PATCH] reduce cache pollution of __copy_from_user_ll()",
                  "Improving Performance of ARM Linux Kernel"):             # as printed
        assert title in references, title
    intro = (book_html / "book" / "intro.html").read_text()
    assert intro.count('href="references.html#id') >= 5
    for chapter in ("dougan1999", "blanchard2002", "mackerras2003", "yoshioka2005",
                    "yun2011"):
        assert f"../notebooks/{chapter}/index.html" in intro, chapter    # the roadmap
        page = (book_html / "notebooks" / chapter / "index.html").read_text()
        assert "book/references.html#id" in page, chapter
    index = (book_html / "genindex.html").read_text()
    for entry in ("flush_dcache_icache", "__copy_from_user_ll", "software TLB reload",
                  "smp_mb__after_clear_bit"):
        assert entry in index, entry


def mini_book(tmp_path, name, code, **more):
    """A mini book with the repository's _config.yml and _ext, one notebook per name (``name``
    running ``code``; ``more``: other names and their code): its source folder and the
    command that builds it (into tmp_path / "out")."""
    import shutil

    import nbformat

    src = tmp_path / "src"
    (src / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / "_config.yml", src / "_config.yml")
    shutil.copy(REPO / "references.bib", src / "references.bib")   # named in _config.yml
    shutil.copytree(REPO / "_ext", src / "_ext")
    (src / "intro.md").write_text("# Mini book\n")
    notebooks = {name: code, **more}
    (src / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n" + "".join(
        f"  - file: notebooks/{n}\n" for n in notebooks))
    for n, c in notebooks.items():
        nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
            "name": "python3", "display_name": "Python 3", "language": "python"}})
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {n}"), nbformat.v4.new_code_cell(c)]
        nbformat.write(nb, src / "notebooks" / f"{n}.ipynb")
    command = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
               "build", str(src), "--path-output", str(tmp_path / "out")]
    return src, command


@pytest.mark.book
def test_failing_notebook_fails_the_build(tmp_path):
    """The book's own _config.yml (not -W) makes a raising cell fail the build, also when
    it ran beside another (_ext/execution_cache.py leaves it to myst-nb to report)."""
    src, command = mini_book(tmp_path, "bad", "raise RuntimeError('deliberate-failure')",
                             good="1 + 1")
    proc = subprocess.run(command, cwd=src, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0, "a notebook that raises did not fail the build"
    assert "deliberate-failure" in proc.stdout + proc.stderr
    if (os.cpu_count() or 1) > 1:
        assert "myst-nb runs it again" in proc.stdout + proc.stderr


@pytest.mark.book
def test_a_rebuild_executes_only_what_could_change(tmp_path):
    """jupyter-cache keyed by the sources (_ext/execution_cache.py): a second build executes
    nothing; a new data file (a source the notebooks may read) runs them again."""
    runs = tmp_path / "runs.txt"
    src, command = mini_book(tmp_path, "counted", f"open({str(runs)!r}, 'a').write('x')")

    def build():
        proc = subprocess.run(command, cwd=src, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
        return runs.read_text().count("x")

    assert build() == 1
    assert build() == 1                                 # cached: not executed again
    (src / "data").mkdir()
    (src / "data" / "new.csv").write_text("a,source,table,page\n1,s,t,p\n")
    assert build() == 2                                 # a source changed: executed again
    caches = list((tmp_path / "out" / "_build" / ".jupyter_cache").iterdir())
    assert len(caches) == 1                             # the old cache was removed


@pytest.mark.book
def test_notebooks_execute_at_once(tmp_path):
    """_ext/execution_cache.py runs the notebooks to execute two at a time: each of these two
    waits for the other to start, which one after the other never happens (the wait gives
    up after a minute and its notebook raises)."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: the build executes one notebook at a time")
    flags = tmp_path / "flags"
    flags.mkdir()

    def waits_for(me, other):
        return (f"import pathlib, time\nflags = pathlib.Path({str(flags)!r})\n"
                f"(flags / {me!r}).touch()\nfor _ in range(600):\n"
                f"    if (flags / {other!r}).exists():\n        break\n"
                f"    time.sleep(0.1)\nelse:\n    raise RuntimeError('ran alone')\n")

    src, command = mini_book(tmp_path, "first", waits_for("first", "second"),
                             second=waits_for("second", "first"))
    proc = subprocess.run(command, cwd=src, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert "executing 2 notebooks, 2 at once" in proc.stdout
    assert "Using cached notebook" in proc.stdout       # myst-nb read the results


# --- emu.present.plot, without a browser -------------------------------------------------

@pytest.fixture
def restore_plotly():
    import plotly.io as pio

    renderer, template = pio.renderers.default, pio.templates.default
    yield pio
    pio.renderers.default, pio.templates.default = renderer, template


def test_book_renderer_emits_small_html_without_plotlyjs(monkeypatch, restore_plotly):
    import plotly.graph_objects as go

    import emu.present.plot

    monkeypatch.setenv(emu.present.plot.BUILD_ENV_VAR, "1")
    emu.present.plot.setup()
    assert restore_plotly.renderers.default == emu.present.plot.RENDERER
    fig = emu.present.plot.style(go.Figure(go.Bar(x=["a", "b"], y=[1, 2])), title="t")
    bundle = restore_plotly.renderers[emu.present.plot.RENDERER].to_mimebundle(fig.to_dict())
    assert list(bundle) == ["text/html"]
    html = bundle["text/html"]
    assert "Plotly.newPlot" in html and 'class="plotly-graph-div"' in html
    assert "<script src" not in html and "MathJax" not in html
    assert len(html) < 50_000  # plotly.js itself (4.8 MB) is not inlined


def test_setup_outside_book_keeps_plotly_choice(monkeypatch, restore_plotly):
    import emu.present.plot

    monkeypatch.delenv(emu.present.plot.BUILD_ENV_VAR, raising=False)
    restore_plotly.renderers.default = "plotly_mimetype"
    emu.present.plot.setup()
    assert restore_plotly.renderers.default == "plotly_mimetype"
    emu.present.plot.setup(renderer="notebook")
    assert restore_plotly.renderers.default == "notebook"


def test_plain_numbers_for_glue():
    import numpy as np

    from emu.present.plot import plain

    assert repr(plain(np.float64(229.76))) == "229.76"       # not np.float64(229.76)
    assert type(plain(np.int64(3))) is int and plain(np.int64(3)) == 3
    assert type(plain(np.float32(0.5))) is float
    assert plain(True) is True and plain("fell") == "fell"
    assert f"{float(repr(plain(np.float64(2.5)))):.1f}" == "2.5"


@pytest.mark.book
def test_exercises_are_numbered_per_chapter_page(book_html):
    """Each page's exercises count from 1 after the page's own number (issue 17: they ran
    across the whole book): Exercise 1.1 in chapter 1, Exercise 3.1.1 on page 3.1."""
    import re
    notebooks, _ = book_pages(book_html)
    pages_with_exercises = 0
    for rel in notebooks:
        text = (book_html / rel).read_text(encoding="utf-8")
        titles = re.findall(r'<span class="caption-number">Exercise ([0-9.]+) </span>', text)
        if not titles:
            continue
        pages_with_exercises += 1
        number = re.search(r'<h1>[^<]*<span class="section-number">([0-9.]+)\. </span>', text)
        assert number, f"{rel}: exercises on a page without a number"
        assert titles == [f"{number[1]}.{k}" for k in range(1, len(titles) + 1)], rel
    assert pages_with_exercises >= 10


@pytest.mark.book
def test_a_papers_pages_count_from_one_and_answers_show_no_markers(book_html):
    """Issue 17: the chapter index pages' own headings took the numbers 3.1-3.4, so a paper's
    first page was 3.5; they are rubrics now, so its pages are N.1, N.2, ... in the sidebar
    and in their titles. The answer cells show no nbgrader markers, the check cells and the
    exercises' '% not graded' lines are not on the pages."""
    import re
    chapters = sorted(p.parent for p in (book_html / "notebooks").glob("*/index.html"))
    assert len(chapters) >= 3
    for chapter in chapters:
        index = (chapter / "index.html").read_text(encoding="utf-8")
        number = re.search(r'<h1>[^<]*<span class="section-number">([0-9]+)\. </span>', index)
        assert number, f"{chapter.name}: the chapter has no number"
        assert 'class="rubric"' in index and '<h2><span class="section-number">' not in index
        links = re.findall(r'<a class="reference internal" href="([0-9][^"/]*\.html)">'
                           r'([0-9.]+)\. ', index)
        assert links, f"{chapter.name}: no section pages in the sidebar"
        assert [n for _, n in links] == [f"{number[1]}.{k}" for k in range(1, len(links) + 1)]
        first = (chapter / links[0][0]).read_text(encoding="utf-8")
        assert f'<span class="section-number">{number[1]}.1. </span>' in first
    notebooks, _ = book_pages(book_html)
    for rel in notebooks:
        text = (book_html / rel).read_text(encoding="utf-8")
        for hidden in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "not graded:"):
            assert hidden not in text, f"{rel}: {hidden!r} on the page"
