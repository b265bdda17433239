"""A student's own copies of the book's chapters: ``python -m emu student-copy``.

The notebooks in ``notebooks/`` are the book's: each answer cell holds its reference solution
and each check cell its hidden tests, so Run All there fills in every answer. A student's copy
is the notebook nbgrader releases (emu.course.handout: no written solutions, no hidden tests,
outputs cleared), with each answer left empty (``# your answer here``, where nbgrader puts a
``raise NotImplementedError()`` that would stop Run All at the first exercise). The copies
keep the chapters' folders (``mackerras2003/01-cache-flushing.ipynb``), and a copy that is
already there is never overwritten: it may hold the student's work.

It also gives JupyterLab the book's settings (``lab_settings.json``, into this environment's
``share/jupyter/lab/settings/overrides.d``, where packages put theirs): every cell of a
notebook rendered, not only those in view, so that jupyterlab-myst evaluates the {eval}
numbers of the whole chapter on Run All; and widget state saved with the notebook (an
explorer's controls and last figure are then in the file; JupyterLab showing them again
without a kernel is not verified)."""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from ..context import ROOT
from .handout import assignment_id, handout

CHAPTERS = ROOT / "notebooks"
NBGRADER_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
EMPTY_ANSWER = "# your answer here"
LAB_SETTINGS = Path(__file__).with_name("lab_settings.json")


def install_lab_settings(prefix=sys.prefix):
    """The book's JupyterLab settings into the environment at ``prefix``; returns the file."""
    target = Path(prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.d" / \
        "kernel-reexecuted.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(LAB_SETTINGS, target)
    return target


def book_chapters(folder=CHAPTERS):
    """Every chapter notebook of the book, in its folders' order."""
    return sorted(p for p in Path(folder).glob("**/*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts)


def copy_path(chapter, out):
    """Where a chapter's copy goes: its path under notebooks/, or its name alone."""
    chapter = Path(chapter).resolve()
    try:
        return Path(out) / chapter.relative_to(CHAPTERS)
    except ValueError:
        return Path(out) / chapter.name


def student_copies(out, chapters=None):
    """Write the students' copies of ``chapters`` (default: all) into the folder ``out``;
    returns [(copy, number of exercises with a check)]. Refuses, before writing anything, to
    overwrite a copy that exists."""
    chapters = [Path(c) for c in chapters] if chapters else book_chapters()
    targets = [copy_path(chapter, out) for chapter in chapters]
    there = [str(t) for t in targets if t.exists()]
    if there:
        raise ValueError(f"{there[0]} exists: it may hold your work. Give another folder "
                         "(-o), or move it away first")
    install_lab_settings()
    with tempfile.TemporaryDirectory() as course:
        made = handout(chapters, course)
        written = []
        for chapter, target in zip(chapters, targets):
            release, graded = made[assignment_id(chapter)]
            nb = json.loads(Path(release).read_text(encoding="utf-8"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(empty_answers(nb), indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")
            written.append((target, graded))
    return written


def empty_answers(nb):
    """The notebook with nbgrader's stub in each answer cell replaced by an empty answer."""
    for cell in nb["cells"]:
        if cell.get("cell_type") == "code":
            text = "".join(cell.get("source", ""))
            if NBGRADER_STUB in text:
                cell["source"] = text.replace(NBGRADER_STUB, EMPTY_ANSWER)
    return nb
