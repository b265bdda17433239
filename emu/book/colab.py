"""Colab in one click: every chapter notebook opens with a cell that installs the library.

Colab runs a notebook on a fresh machine without ``emu``; the first cell installs it from the
book's repository (``_config.yml``'s ``repository``) when it runs there, and does nothing
anywhere else (the book build, JupyterLab, Binder, where ``emu`` is installed). The online
book hides it (tag ``remove-cell``). The cell cannot import ``emu`` (it is what installs it),
so its source is plain Python written here once and copied into the notebooks::

    python -m emu.book.colab          # rewrite every chapter notebook's first cell

A test checks that every notebook of the table of contents starts with this cell.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

# Colab sets this variable in its kernels (and only there).
COLAB_MARKER = "COLAB_RELEASE_TAG"
TAG = "remove-cell"
CELL_ID = "colab-install"

_SOURCE = '''# In Colab: install the book's library (emu) from its repository; elsewhere: nothing.
import importlib.util, os, subprocess, sys
if "{marker}" in os.environ and importlib.util.find_spec("emu") is None:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    "git+{url}@{branch}"], check=True)'''


def install_source(repo_url: str, branch: str) -> str:
    """The first cell's source for the repository ``repo_url`` on ``branch``."""
    if not repo_url.startswith("https://") or not branch or any(c in repo_url + branch
                                                                 for c in "\"' \n@"):
        raise ValueError(f"not a repository address and branch: {repo_url!r}, {branch!r}")
    return _SOURCE.format(marker=COLAB_MARKER, url=repo_url.rstrip("/"), branch=branch)


def book_source(root: Path) -> str:
    """The first cell's source for the book at ``root`` (its _config.yml)."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    repository = config["repository"]
    return install_source(repository["url"], repository.get("branch", "main"))


def install_cell(source: str) -> dict:
    """The cell, as a notebook file stores it (its lines as a list)."""
    return {"cell_type": "code", "execution_count": None, "id": CELL_ID,
            "metadata": {"tags": [TAG]}, "outputs": [],
            "source": source.splitlines(keepends=True)}


def with_install_cell(notebook: dict, source: str) -> bool:
    """Put the install cell first in ``notebook`` (a notebook file's JSON, replacing an older
    install cell); True if that changed it."""
    cells = notebook["cells"]
    cell = install_cell(source)
    if cells and cells[0].get("id") == CELL_ID:
        if cells[0] == cell:
            return False
        cells.pop(0)
    cells.insert(0, cell)
    return True


def chapter_notebooks(root: Path) -> list[Path]:
    """The notebooks of the table of contents (_toc.yml), in its order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = []

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [root / f"{f}.ipynb" for f in files if (root / f"{f}.ipynb").is_file()]


def sync(root: Path) -> list[Path]:
    """Give every chapter notebook under ``root`` the install cell; the notebooks changed."""
    source = book_source(root)
    changed = []
    for path in chapter_notebooks(root):
        # JSON edited in place (not nbformat's writer, which reorders keys): the diff is
        # the cell.
        notebook = json.loads(path.read_text(encoding="utf-8"))
        if with_install_cell(notebook, source):
            text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
            path.write_text(text, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for path in sync(root):
        print(f"updated {path.relative_to(root)}")
