"""A chapter in JupyterLab, as a student runs it (issue 36), in headless Chromium.

One chapter (Mackerras 2003, cache flushing: prose with computed numbers, exercises, an
explorer) is opened in a real JupyterLab server: Run All ends without an error output; the
prose shows numbers where its {eval} expressions are (jupyterlab-myst), never the roles;
exercises and solutions render as boxes; changing an explorer control redraws its figure;
Interrupt ends a cell stuck in a 10**15-instruction loop within seconds, the kernel
alive after it; saved, the notebook holds the explorer's widget state with its last figure.
A notebook with an explorer and a sweep's progress bar, saved and reopened in a new server
(a new kernel, without the widgets' models), shows the explorer's figure again and no
"model not found" (the bar, once closed, used to leave one: emu.run.sweep now hides it).

Needs Chromium and playwright (skipped without them, failed under CI, as tests/book/test_book.py).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emu.course.copies import install_lab_settings
from tests.book.test_book import CHROMIUM, CHROMIUM_ARGS, _browser_or_skip

REPO = Path(__file__).resolve().parents[2]
CHAPTER = REPO / "notebooks" / "mackerras2003" / "01-cache-flushing.ipynb"
RUN_ALL_TIMEOUT_S = 600
LONG_CELL = "spin = emu.Machine('ppc750'); spin.load('spin:\\n b spin\\n'); spin.call('spin', limit=10**15)"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_lab(folder):
    """A JupyterLab server on 127.0.0.1 serving ``folder``; returns (process, url)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "EMU_BOOK_BUILD"}
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}",
               "--ServerApp.ip=127.0.0.1", "--ServerApp.token=", "--ServerApp.password=",
               f"--ServerApp.root_dir={folder}", "--ServerApp.disable_check_xsrf=True"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    server = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(1)
    server.terminate()
    server.wait(30)
    pytest.fail("JupyterLab did not start within 120 s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 serving a copy of the chapter, with the settings
    `python -m emu student-copy` installs; yields (playwright, url, folder)."""
    sync_playwright = _browser_or_skip()
    install_lab_settings()
    folder = tmp_path_factory.mktemp("lab")
    shutil.copy(CHAPTER, folder / CHAPTER.name)
    server, url = start_lab(folder)
    try:
        yield sync_playwright, url, folder
    finally:
        server.terminate()
        server.wait(30)


def busy(page):
    """Is a code cell still queued or running ([*])?"""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.jp-InputPrompt'))
        .some(p => p.textContent.includes('*'))""")


def all_run(page):
    """Has every code cell run ([n] in its prompt, none queued)?"""
    return page.evaluate(r"""() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))
        .every(p => /\[\d+\]/.test(p.textContent))""")


def error_outputs(page):
    """The text of every error shown in an output (Run All stops at the first)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'))
        .map(o => o.innerText).filter(t => /Error|Traceback/.test(t))""")


def wait_idle(page, timeout_s, every_cell=False):
    """Until no cell is queued or running (and, with ``every_cell``, every one has run: a
    loaded machine may take seconds to queue the cells of Run All)."""
    deadline = time.monotonic() + timeout_s
    time.sleep(2)
    while busy(page) or (every_cell and not all_run(page) and not error_outputs(page)):
        if time.monotonic() > deadline:
            pytest.fail(f"cells still running after {timeout_s} s")
        time.sleep(1)


def unevaluated(page):
    """The indexes of the Markdown cells whose rendered text still shows an expression."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.jp-MarkdownCell'))
        .map((c, k) => [k, (c.querySelector('.jp-MarkdownOutput') || c).innerText])
        .filter(([k, text]) => text.includes('emu.glued')).map(([k]) => k)""")


def expression_cells(notebook):
    """How many Markdown cells of ``notebook`` hold an expression (``{eval}``, a glue)."""
    import nbformat
    cells = nbformat.read(notebook, as_version=4).cells
    return sum(1 for c in cells if c.cell_type == "markdown" and
               ("{eval}" in c.source or "{glue" in c.source))


def menu(page, top, item):
    page.click(f".lm-MenuBar-itemLabel:text-is('{top}')")
    page.click(f".lm-Menu-itemLabel:text-is('{item}')")


def started(page):
    """Has any code cell been queued or run ([*] or [n] in its prompt)?"""
    return page.evaluate(r"""() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))
        .some(p => /\[(\*|\d+)\]/.test(p.textContent))""")


def what_the_page_shows(page):
    """The kernel's status and any dialog's text: why a Run All may not have started."""
    return page.evaluate("""() => ({
        kernel: (document.querySelector('.jp-Notebook-ExecutionIndicator') || {}).dataset,
        dialogs: Array.from(document.querySelectorAll('.jp-Dialog')).map(d => d.innerText)})""")


def run_all(page, tries=3, wait_s=60):
    """Run All, clicked again if no cell has started after ``wait_s``: a loaded machine may
    lose the request (in one CI run the kernel was idle, the menu clicked, and no cell ever
    ran: the notebook autosaved two minutes later without an execution count)."""
    for _ in range(tries):
        menu(page, "Run", "Run All Cells")
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if started(page):
                return
            time.sleep(1)
    pytest.fail(f"Run All started no cell in {tries} tries: {what_the_page_shows(page)}")


def test_a_chapter_runs_reads_and_stops_in_jupyterlab(lab):
    sync_playwright, url, folder = lab
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(f"{url}/lab/tree/{CHAPTER.name}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                               timeout=120_000)

        run_all(page)
        wait_idle(page, RUN_ALL_TIMEOUT_S, every_cell=True)
        errors = error_outputs(page)
        assert errors == [], errors[0][-3000:]

        # the prose: numbers, not roles; exercises and solutions as boxes. Under Run All,
        # jupyterlab-myst 2.7 now and then leaves cells' expressions unevaluated (shown as
        # code): one or two on a quiet machine, 5 of the chapter's 13 on a loaded one (a
        # pre-check, 30 November 2026); running such a cell again renders them, as
        # book/how-to-use.md tells students. Run All must render some by itself.
        rerun = unevaluated(page)
        assert len(rerun) < expression_cells(CHAPTER), \
            f"{len(rerun)} cells left their expressions as code: Run All rendered none"
        for k in rerun:
            page.locator(".jp-MarkdownCell").nth(k).click()
            page.keyboard.press("Shift+Enter")
        time.sleep(3)
        assert unevaluated(page) == []
        prose = page.evaluate("""() => Array.from(document.querySelectorAll('.jp-MarkdownCell'))
            .map(c => c.innerText).join('\\n')""")
        assert "{eval}" not in prose and "emu.glued" not in prose and "{glue" not in prose
        assert "NameError" not in prose
        assert re.search(r"execute the same \d[\d,]* instructions", prose), prose[:2000]
        assert re.search(r"costs?\s+(only\s+)?\d+\.\d+\s+times as much", prose)
        assert page.locator("text=/Exercise \\d/").count() >= 4
        assert page.locator("text=/Solution to/").count() >= 4

        # an explorer control redraws its figure
        explorer = page.locator(".jp-CodeCell", has_text="flush_explorer()")
        figure = explorer.locator(".js-plotly-plot").first
        figure.wait_for(timeout=60_000)
        before = figure.evaluate("gd => JSON.stringify(gd.data.map(t => t.y))")
        explorer.locator(".noUi-handle").first.focus()      # the L1 D size: 32 KB -> 16 KB
        page.keyboard.press("ArrowLeft")
        deadline = time.monotonic() + 180
        while figure.evaluate("gd => JSON.stringify(gd.data.map(t => t.y))") == before:
            assert time.monotonic() < deadline, "the explorer's figure did not change"
            time.sleep(1)

        # Interrupt ends a long emulated run; the kernel stays
        page.locator(".jp-Notebook .jp-Cell").last.click()
        page.keyboard.press("Escape")
        page.keyboard.press("b")
        page.keyboard.press("Enter")
        page.keyboard.insert_text(LONG_CELL)
        page.keyboard.press("Shift+Enter")
        time.sleep(3)
        assert busy(page), "the long cell should still be running"
        started = time.monotonic()
        menu(page, "Kernel", "Interrupt Kernel")
        page.wait_for_selector("text=KeyboardInterrupt", timeout=10_000)
        assert time.monotonic() - started < 5
        wait_idle(page, 30)

        # saved: the explorer's widgets with their last figure in the notebook's metadata
        page.keyboard.press("Control+s")
        time.sleep(3)
        browser.close()
    nb = json.loads((folder / CHAPTER.name).read_text())
    errors = [(k, o.get("ename")) for k, cell in enumerate(nb["cells"])
              for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    long_cell = next(k for k, cell in enumerate(nb["cells"])
                     if "spin.call" in "".join(cell["source"]))
    assert errors == [(long_cell, "KeyboardInterrupt")]
    state = nb["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    figures = [o for model in state.values() if model["model_name"] == "OutputModel"
               for o in model["state"].get("outputs", [])
               if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert figures, "the explorer's figure is saved with its widgets"


EXPLORER_CELL = """import emu.present.plot; emu.present.plot.setup()
from emu.run import sweep
sweep.run(lambda x: x, [{"x": 1}], executor="serial", progress=True)
from emu import explorers
explorers.unlock_explorer().show()"""


# the values a figure draws (plotly keeps arrays as typed arrays in _fullData)
Y_VALUES = "gd => JSON.stringify((gd._fullData || []).map(t => Array.from(t.y)))"


def shown_outputs(page):
    """The text of each output of the notebook (an output widget's, within its own)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('.jp-Cell .jp-OutputArea-output'))
        .map(o => o.innerText)""")


def test_an_explorer_survives_save_and_reopen(tmp_path):
    """Issue 36: run an explorer (after a sweep that showed its progress bar), change a
    control, save; in a new server (a new kernel: no widget models) the notebook shows the
    explorer's last figure, restored from the widget state saved with it, and no error."""
    import nbformat
    sync_playwright = _browser_or_skip()
    install_lab_settings()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(EXPLORER_CELL)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    nbformat.write(notebook, tmp_path / "explorer.ipynb")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        server, url = start_lab(tmp_path)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{url}/lab/tree/explorer.ipynb")
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=120_000)
            run_all(page, wait_s=30)
            figure = page.locator(".jp-OutputArea .js-plotly-plot").first
            try:
                figure.wait_for(timeout=300_000)
            except Exception:
                page.screenshot(path=str(tmp_path / "no-figure.png"))
                raise AssertionError(f"no figure; outputs: {shown_outputs(page)}") from None
            page.wait_for_function(f"() => ({Y_VALUES})("
                                   "document.querySelector('.js-plotly-plot')) !== '[]'")
            before = figure.evaluate(Y_VALUES)
            page.locator(".noUi-handle").first.focus()      # the sync: 40 -> 20 cycles
            page.keyboard.press("ArrowLeft")
            deadline = time.monotonic() + 180
            while figure.evaluate(Y_VALUES) == before:
                assert time.monotonic() < deadline, "the explorer's figure did not change"
                time.sleep(1)
            after = figure.evaluate(Y_VALUES)
            wait_idle(page, 60)
            page.keyboard.press("Escape")
            page.keyboard.press("Control+s")
            time.sleep(3)
            page.close()
        finally:
            server.terminate()
            server.wait(30)
        saved = json.loads((tmp_path / "explorer.ipynb").read_text())
        assert "widgets" in saved["metadata"], "the widget state is saved"
        server, url = start_lab(tmp_path)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{url}/lab/tree/explorer.ipynb")
            figure = page.locator(".jp-OutputArea .js-plotly-plot").first
            figure.wait_for(timeout=120_000)
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']",
                                   timeout=120_000)
            time.sleep(5)                  # every output rendered (or its error shown)
            outputs = shown_outputs(page)
            assert figure.evaluate(Y_VALUES) == after
            assert page.locator(".jp-Notebook .js-plotly-plot").count() == 1
            assert not [t for t in outputs if "Error displaying widget" in t], outputs
        finally:
            browser.close()
            server.terminate()
            server.wait(30)
