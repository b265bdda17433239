"""Colab in one click (emu.book.colab): every notebook of the book starts with the cell that
installs the library in Colab, and that cell installs it there and does nothing elsewhere."""
from __future__ import annotations

import json
import subprocess

import pytest

from emu.book import colab
from tests.book.test_book import REPO, book_config

URL = book_config()["repository"]["url"].rstrip("/")
BRANCH = book_config()["repository"]["branch"]


def first_cells():
    for path in colab.chapter_notebooks(REPO):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        yield path.relative_to(REPO), notebook["cells"][0]


def test_every_notebook_of_the_book_starts_with_the_install_cell():
    cells = dict(first_cells())
    assert len(cells) >= 20, sorted(cells)
    want = colab.install_cell(colab.book_source(REPO))
    stale = [str(path) for path, cell in cells.items() if cell != want]
    assert not stale, f"run python -m emu.book.colab: {stale}"
    assert want["metadata"]["tags"] == ["remove-cell"]          # hidden in the online book


def run_cell(monkeypatch, environ: dict, installed: bool) -> list:
    """Run the first cell's source with ``environ`` and ``emu`` (not) importable; the
    commands it would have run."""
    import importlib.util

    calls = []
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: calls.append((cmd, kw)))
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if installed or name != "emu" else None)
    for name in (colab.COLAB_MARKER, *environ):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    exec(compile(colab.book_source(REPO), "<colab cell>", "exec"), {})
    return calls


def test_in_colab_the_cell_installs_the_library_from_the_repository(monkeypatch):
    calls = run_cell(monkeypatch, {colab.COLAB_MARKER: "release-colab_20261120-060000"},
                     installed=False)
    assert len(calls) == 1
    command, options = calls[0]
    assert command[1:5] == ["-m", "pip", "install", "-q"]
    assert command[-1] == f"git+{URL}@{BRANCH}"
    assert options == {"check": True}                    # a failed install stops Run All


@pytest.mark.parametrize("environ, installed", [({}, False), ({}, True),
                                                ({colab.COLAB_MARKER: "r"}, True)],
                         ids=["elsewhere", "elsewhere, installed", "colab, installed"])
def test_elsewhere_or_once_installed_the_cell_does_nothing(monkeypatch, environ, installed):
    assert run_cell(monkeypatch, environ, installed) == []


def test_sync_adds_the_cell_once_and_replaces_an_old_one(tmp_path):
    notebook = {"cells": [{"cell_type": "markdown", "id": "a", "metadata": {}, "source": []}]}
    assert colab.with_install_cell(notebook, "old = 1")
    assert colab.with_install_cell(notebook, "new = 2")
    assert not colab.with_install_cell(notebook, "new = 2")
    assert [c["id"] for c in notebook["cells"]] == [colab.CELL_ID, "a"]
    assert notebook["cells"][0]["source"] == ["new = 2"]


@pytest.mark.parametrize("url, branch", [("http://example.org/r", "main"),
                                         ("https://github.com/o/r", ""),
                                         ("https://github.com/o/r\"; rm", "main")])
def test_a_bad_address_is_refused(url, branch):
    with pytest.raises(ValueError, match="not a repository address"):
        colab.install_source(url, branch)
