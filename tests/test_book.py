"""The book builds, and its pages work in a real browser with no network.

The tests marked ``book`` build the whole book once per test module into a
temporary folder, executing every notebook (a notebook error or any Sphinx
warning fails the build). ``test_pages_in_browser`` then serves the HTML on
127.0.0.1 and opens every page in headless Chromium with all non-local requests
blocked. It checks
that every plotly figure has drawn (an ``svg.main-svg`` inside it), that there
is no JavaScript error, no failed or refused local request, and no attempt to
reach another host.

Environment:
  CI                 if set, a missing Chromium or playwright fails instead of skipping
  EMU_BOOK_HTML      use this already-built _build/html instead of building again
  EMU_BOOK_SHOTS     save a full-page PNG of every page into this folder
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

REPO = Path(__file__).resolve().parent.parent
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


def book_pages(html: Path) -> tuple[list[str], list[str]]:
    """(notebook pages, other pages) as paths relative to the HTML root.

    A page's source is copied to _sources/ under its original suffix, so the
    notebooks are the pages whose source ends in .ipynb.
    """
    notebooks, others = [], []
    for src in sorted((html / "_sources").rglob("*")):
        if src.suffix not in (".ipynb", ".md"):
            continue
        page = src.relative_to(html / "_sources").with_suffix(".html").as_posix()
        (notebooks if src.suffix == ".ipynb" else others).append(page)
    return notebooks, others


def _is_local(url: str) -> bool:
    return urlsplit(url).hostname in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:", "about:"))


def check_page(context, url: str, shots: Path | None) -> dict:
    """Open one page; return what went wrong and how many figures it drew."""
    errors, failed, external = [], [], []
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and errors.append(f"console: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"exception: {e}"))
    page.on("requestfailed", lambda r: _is_local(r.url) and failed.append(f"{r.url}: {r.failure}"))
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.url}: HTTP {r.status}"))

    def route(r):
        if _is_local(r.request.url):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(url, wait_until="load")
    try:
        page.wait_for_function(FIGURES_DRAWN_JS, timeout=FIGURE_TIMEOUT_MS)
    except Exception:
        pass  # reported below, figure by figure
    figures = page.evaluate(FIGURE_REPORT_JS)
    page.wait_for_timeout(300)  # let late console messages arrive
    if shots is not None:
        name = urlsplit(url).path.strip("/").replace("/", "_") or "index"
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
    page.close()
    return {"errors": errors, "failed": failed, "external": external,
            "figures": len(figures),
            "undrawn": [f["id"] for f in figures if not f["drawn"]]}


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
def test_pages_in_browser(sync_playwright_api, book_html, server):
    sync_playwright = sync_playwright_api
    notebooks, others = book_pages(book_html)
    assert notebooks, f"no notebook page found under {book_html}"
    shots = os.environ.get("EMU_BOOK_SHOTS")
    shots = Path(shots) if shots else None
    if shots:
        shots.mkdir(parents=True, exist_ok=True)

    problems, figures_on_notebooks = {}, 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            for rel in notebooks + others:
                result = check_page(context, f"{server}/{rel}", shots)
                if rel in notebooks:
                    figures_on_notebooks += result["figures"]
                bad = {k: result[k] for k in ("errors", "failed", "external", "undrawn") if result[k]}
                if bad:
                    problems[rel] = bad
        finally:
            browser.close()

    assert not problems, "pages with problems:\n" + "\n".join(
        f"  {page}: {bad}" for page, bad in problems.items())
    # The book is about measurements: if no notebook shows a figure, figure output
    # is being lost somewhere (e.g. a notebook that forgot emu.plot.setup()).
    assert figures_on_notebooks > 0, "no plotly figure on any notebook page"


def mini_book(tmp_path, name, code):
    """A one-notebook book with the repository's _config.yml and _ext: its source folder
    and the command that builds it (into tmp_path / "out")."""
    import shutil

    import nbformat

    src = tmp_path / "src"
    (src / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / "_config.yml", src / "_config.yml")
    shutil.copytree(REPO / "_ext", src / "_ext")
    (src / "intro.md").write_text("# Mini book\n")
    (src / "_toc.yml").write_text(
        f"format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/{name}\n")
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {name}"), nbformat.v4.new_code_cell(code)]
    nbformat.write(nb, src / "notebooks" / f"{name}.ipynb")
    command = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
               "build", str(src), "--path-output", str(tmp_path / "out")]
    return src, command


@pytest.mark.book
def test_failing_notebook_fails_the_build(tmp_path):
    """The book's own _config.yml (not -W) makes a raising cell fail the build."""
    src, command = mini_book(tmp_path, "bad", "raise RuntimeError('deliberate-failure')")
    proc = subprocess.run(command, cwd=src, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0, "a notebook that raises did not fail the build"
    assert "deliberate-failure" in proc.stdout + proc.stderr


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


# --- emu.plot, without a browser -------------------------------------------------

@pytest.fixture
def restore_plotly():
    import plotly.io as pio

    renderer, template = pio.renderers.default, pio.templates.default
    yield pio
    pio.renderers.default, pio.templates.default = renderer, template


def test_book_renderer_emits_small_html_without_plotlyjs(monkeypatch, restore_plotly):
    import plotly.graph_objects as go

    import emu.plot

    monkeypatch.setenv(emu.plot.BUILD_ENV_VAR, "1")
    emu.plot.setup()
    assert restore_plotly.renderers.default == emu.plot.RENDERER
    fig = emu.plot.style(go.Figure(go.Bar(x=["a", "b"], y=[1, 2])), title="t")
    bundle = restore_plotly.renderers[emu.plot.RENDERER].to_mimebundle(fig.to_dict())
    assert list(bundle) == ["text/html"]
    html = bundle["text/html"]
    assert "Plotly.newPlot" in html and 'class="plotly-graph-div"' in html
    assert "<script src" not in html and "MathJax" not in html
    assert len(html) < 50_000  # plotly.js itself (4.8 MB) is not inlined


def test_setup_outside_book_keeps_plotly_choice(monkeypatch, restore_plotly):
    import emu.plot

    monkeypatch.delenv(emu.plot.BUILD_ENV_VAR, raising=False)
    restore_plotly.renderers.default = "plotly_mimetype"
    emu.plot.setup()
    assert restore_plotly.renderers.default == "plotly_mimetype"
    emu.plot.setup(renderer="notebook")
    assert restore_plotly.renderers.default == "notebook"


def test_plain_numbers_for_glue():
    import numpy as np

    from emu.plot import plain

    assert repr(plain(np.float64(229.76))) == "229.76"       # not np.float64(229.76)
    assert type(plain(np.int64(3))) is int and plain(np.int64(3)) == 3
    assert type(plain(np.float32(0.5))) is float
    assert plain(True) is True and plain("fell") == "fell"
    assert f"{float(repr(plain(np.float64(2.5)))):.1f}" == "2.5"


@pytest.mark.book
def test_exercises_are_numbered_per_chapter_page(book_html):
    """Each page's exercises count from 1 after the page's own number (issue 17: they ran
    across the whole book): Exercise 1.1 in chapter 1, Exercise 3.5.1 on page 3.5."""
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
