"""Hand out chapters as assignments, graded by nbgrader.

An exercise is written once, in its chapter notebook: the ``{exercise}`` directive in
Markdown, then (when it has a checkable answer) an *answer* cell and a *check* cell in
nbgrader's format, then the written ``{solution}``. The answer cell holds the reference
solution between ``### BEGIN SOLUTION`` and ``### END SOLUTION``; the check cell holds the
public checks, then the hidden ones between ``### BEGIN HIDDEN TESTS`` and
``### END HIDDEN TESTS``. The book runs both at every build (a solution that fails its own
checks fails the build), folds the answer (tag ``hide-input``) and leaves the check cell out
(tag ``remove-cell``).

``handout`` makes an nbgrader course folder from chapters:

* ``COURSE/source/ID/ID.ipynb``: the chapter without its written solutions (every fenced
  ``{solution}`` block, and the code cells tagged ``solution`` that compute their numbers);
* ``COURSE/release/ID/ID.ipynb``: the student notebook nbgrader generates from it (answers
  replaced by a stub, hidden checks removed, outputs cleared);
* ``COURSE/gradebook.db`` and ``COURSE/nbgrader_config.py``: nbgrader's course files.
  ``python -m emu grade`` (emu.course.grading) grades from ``source/`` and ``release/`` itself.

    python -m emu handout notebooks/00-toolkit.ipynb -o course
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-zA-Z-]+)\}")
NBGRADER = [sys.executable, "-m", "nbgrader"]
BOOK_TAGS = ("hide-cell", "hide-input", "remove-cell", "remove-input")
CONFIG = '''\
# nbgrader's configuration for this course, written by `python -m emu handout`.
c = get_config()
c.CourseDirectory.root = {root!r}
# Grading is python -m emu grade's (a sandbox per student, the checks outside it), not
# nbgrader autograde's, which runs students' code beside the checks and the gradebook.
'''


def strip_solutions(markdown):
    """``markdown`` without its ``{solution}`` blocks; returns (text, blocks removed)."""
    out, removed, lines, i = [], 0, markdown.split("\n"), 0
    while i < len(lines):
        opened = _OPEN.match(lines[i].strip())
        if opened and opened["name"] == "solution":
            fence = opened["fence"]
            end = i + 1
            while end < len(lines) and lines[end].strip() != fence:
                end += 1
            if end == len(lines):
                raise ValueError(f"a {{solution}} block opened with {fence} on line {i + 1} "
                                 "is never closed")
            i, removed = end + 1, removed + 1
            while out and not out[-1].strip() and i < len(lines) and not lines[i].strip():
                i += 1                      # no double blank line where the block was
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out).strip("\n"), removed


def read_notebook(path):
    """A notebook's JSON, or a ValueError naming the file and what is wrong with it."""
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = nb["cells"]
        if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
            raise TypeError("its cells are not a list of objects")
        for k, cell in enumerate(cells):
            text = cell.get("source", "")
            if not isinstance(text, str) and not (isinstance(text, list) and
                                                  all(isinstance(t, str) for t in text)):
                raise TypeError(f"cell {k}'s source is neither text nor a list of lines")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        why = "nested too deeply" if isinstance(error, RecursionError) else error
        raise ValueError(f"{path}: not a readable notebook ({why})") from None
    return nb


def without_solutions(nb):
    """The notebook ``nb`` (JSON) without written solutions or outputs; returns (notebook,
    solutions removed). nbgrader's own cells are kept: nbgrader strips those itself."""
    kept, removed = [], 0
    for cell in nb["cells"]:
        text = "".join(cell.get("source", ""))
        if cell.get("cell_type") == "code":
            metadata = cell.get("metadata", {})
            if "solution" in metadata.get("tags", []):
                removed += 1
                continue
            if "nbgrader" in metadata and "tags" in metadata:   # the book's folding only
                metadata["tags"] = [t for t in metadata["tags"] if t not in BOOK_TAGS]
            cell["outputs"], cell["execution_count"] = [], None
        elif cell.get("cell_type") == "markdown":
            text, n = strip_solutions(text)
            removed += n
            if n and not text.strip():
                continue
            cell["source"] = text
        kept.append(cell)
    return dict(nb, cells=kept), removed


def assignment_id(chapter):
    """The assignment's name: the chapter's folder and file, e.g. 'mackerras2003-01-cache-
    flushing' for notebooks/mackerras2003/01-cache-flushing.ipynb."""
    chapter = Path(chapter)
    parent = chapter.parent.name
    stem = chapter.stem if parent in ("notebooks", "") else f"{parent}-{chapter.stem}"
    return re.sub(r"[^A-Za-z0-9_.-]", "-", stem)


def exercises(nb):
    """The graded exercises of a notebook (JSON): {check cell's grade id: points}."""
    out = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and cell.get("cell_type") == "code":
            out[meta["grade_id"]] = meta.get("points", 0)
    return out


def run_nbgrader(course, *arguments, env=None, timeout=None):
    """Run one nbgrader command on the course folder; a failure is a ValueError with the end
    of nbgrader's log."""
    course = Path(course).resolve()
    env = dict(os.environ if env is None else env)
    # nbgrader runs alembic from PATH: the interpreter's own folder first, so that a
    # python of a virtual environment not activated still finds it
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    proc = subprocess.run(NBGRADER + list(arguments) + [f"--CourseDirectory.root={course}"],
                          cwd=course, capture_output=True, text=True, env=env,
                          timeout=timeout)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        tail = "\n".join(line for line in log.splitlines()[-15:])
        raise ValueError(f"nbgrader {arguments[0]} failed (exit {proc.returncode}):\n{tail}")
    return log


def handout(chapters, course):
    """Make the course folder ``course`` for the chapter notebooks ``chapters``; returns
    {assignment id: (student notebook, number of graded exercises)}."""
    course = Path(course)
    if isinstance(chapters, (str, Path)):
        chapters = [chapters]
    if not chapters:
        raise ValueError("handout: name at least one chapter notebook")
    new = not course.exists()
    try:
        return _handout(chapters, course)
    except BaseException:
        if new:                             # no half-made course left behind
            shutil.rmtree(course, ignore_errors=True)
        raise


def _handout(chapters, course):
    try:
        course.mkdir(parents=True, exist_ok=True)
        (course / "nbgrader_config.py").write_text(CONFIG.format(root=str(course.resolve())))
    except OSError as error:
        raise ValueError(f"{course}: cannot write the course folder ({error.strerror})") \
            from None
    made = {}
    for chapter in chapters:
        name = assignment_id(chapter)
        if name in made:
            raise ValueError(f"{chapter}: a second chapter named {name}")
        nb, _ = without_solutions(read_notebook(chapter))
        source = course / "source" / name / f"{name}.ipynb"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                          encoding="utf-8")
        run_nbgrader(course, "generate_assignment", name, "--force")
        made[name] = (course / "release" / name / f"{name}.ipynb", len(exercises(nb)))
    return made


_LABEL = re.compile(r"^:label:[ \t]*(?P<label>\S+)", re.M)
# an exercise left to the teacher's reading says why, in a MyST comment inside its block:
# % not graded: an explanation, no number to check
_NOT_GRADED = re.compile(r"^%[ \t]*not graded:[ \t]*(?P<why>.+?)[ \t]*$", re.M)


def exercise_blocks(markdown):
    """[(title, label, why not graded)] of the ``{exercise}`` blocks of a Markdown text (label
    and reason "" when the block has none)."""
    blocks, lines, i = [], markdown.split("\n"), 0
    while i < len(lines):
        opened = _OPEN.match(lines[i].strip())
        if not opened or opened["name"] != "exercise":
            i += 1
            continue
        fence, end = opened["fence"], i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = "\n".join(lines[i + 1:end])
        label, why = _LABEL.search(body), _NOT_GRADED.search(body)
        title = lines[i].strip()[opened.end():].strip()
        blocks.append((title, label["label"] if label else "", why["why"] if why else ""))
        i = end + 1
    return blocks


def exercise_table(folder):
    """Every exercise of the chapter notebooks under ``folder``: chapter (assignment id),
    label, title, the points nbgrader gives it (0: read, not graded) and, for an exercise
    that is not graded, why (its ``% not graded:`` line)."""
    import pandas as pd
    rows = []
    for chapter in sorted(Path(folder).glob("**/*.ipynb")):
        if ".ipynb_checkpoints" in chapter.parts:
            continue
        nb = read_notebook(chapter)
        points = exercises(nb)
        for cell in nb["cells"]:
            if cell.get("cell_type") != "markdown":
                continue
            for title, label, why in exercise_blocks("".join(cell.get("source", ""))):
                rows.append({"chapter": assignment_id(chapter), "exercise": label,
                             "title": title, "points": points.get(label, 0),
                             "not graded because": why})
    return pd.DataFrame(rows, columns=["chapter", "exercise", "title", "points",
                                       "not graded because"])
