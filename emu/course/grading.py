"""Grade a folder of submitted notebooks with nbgrader; write a CSV of scores per exercise.

``python -m emu grade COURSE SUBMISSIONS -o scores.csv`` takes a course folder made by
``python -m emu handout`` (emu.course.handout) and a folder of students' notebooks, one per student
(``alice.ipynb``, or ``alice/anything.ipynb``), and runs ``nbgrader autograde`` on them with:

* a **time limit** per cell (``--timeout``, seconds): nbgrader interrupts a cell that runs
  longer, records the error, and goes on with the next cell;
* an **instruction limit** per emulated run (``--max-instructions``): the kernels get
  ``EMU_MAX_INSTRUCTIONS`` in their environment, a ceiling on every Machine's instruction
  limit (emu.run.limits.capped), because inside Unicorn no interrupt reaches the kernel;
* a kernel that **dies** in a cell (a crash in native code, a student who calls keystone
  directly) is restarted, the cells before it run again, and the cell is recorded as an error
  (``RecoveringExecute``): nbgrader alone would give up the whole submission.

So a runaway loop, a crash or an exception costs the exercise it is in, not the others. The
CSV has one row per student: each exercise's score (named by its check cell), the total and
the maximum.
"""
from __future__ import annotations

import csv
import os
import re
import shutil
from pathlib import Path

from ..run.limits import check_limit
from .handout import run_nbgrader

DEFAULT_TIMEOUT_S = 120
DEFAULT_MAX_INSTRUCTIONS = 50_000_000      # the library's default instruction limit
STUDENT = re.compile(r"^[A-Za-z0-9_.@-]+$")

try:                                        # nbgrader is a requirement, but emu works without
    from nbclient.exceptions import DeadKernelError
    from nbclient.util import ensure_async, run_sync
    from nbformat.v4 import new_output
    from nbgrader.preprocessors import Execute
except ImportError:                         # pragma: no cover - only without nbgrader
    Execute = object


class RecoveringExecute(Execute):
    """nbgrader's Execute preprocessor, which survives a kernel that dies in a cell.

    The cell gets an error output naming what happened; a new kernel runs the cells before it
    again (not those that killed a kernel), and execution goes on with the next cell."""

    def preprocess(self, nb, resources=None, km=None):
        self._killers = set()
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell, resources, index):
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self.log.error("The kernel died in cell %d; restarting it", index)
            self._killers.add(index)
            cell.outputs = [new_output(
                "error", ename="DeadKernelError",
                evalue="the kernel died while running this cell (a crash or a runaway in "
                       "native code); the grader restarted it and ran the cells before again",
                traceback=[])]
            self._restart()
            for before in range(index):
                if before not in self._killers:
                    self.execute_cell(self.nb.cells[before], before, store_history=True)
            return cell, self.resources

    def _restart(self):
        run_sync(self._async_restart)()

    async def _async_restart(self):
        await ensure_async(self.kc.stop_channels())
        await ensure_async(self.km.restart_kernel(now=True))
        await self.async_start_new_kernel_client()


def _check_limits(timeout, max_instructions):
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"--timeout {timeout!r}: give a positive number of seconds per cell")
    check_limit(max_instructions, "--max-instructions")


def find_assignment(course, assignment=None):
    """The assignment to grade: ``assignment``, or the course's only one."""
    names = sorted(p.name for p in (Path(course) / "source").glob("*") if p.is_dir())
    if not names:
        raise ValueError(f"{course}: no assignment in source/ (make the course with "
                         "python -m emu handout)")
    if assignment is None:
        if len(names) > 1:
            raise ValueError(f"{course} has {len(names)} assignments ({', '.join(names)}): "
                             "name one with --assignment")
        return names[0]
    if assignment not in names:
        raise ValueError(f"{course}: no assignment {assignment!r} (there are: "
                         f"{', '.join(names)})")
    return assignment


def submissions(folder):
    """{student: notebook} from a folder of ``STUDENT.ipynb`` files or ``STUDENT/`` folders
    that hold one notebook each."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder of submitted notebooks")
    found = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix == ".ipynb":
            student, notebook = path.stem, path
        elif path.is_dir():
            notebooks = sorted(path.rglob("*.ipynb"))
            notebooks = [n for n in notebooks if ".ipynb_checkpoints" not in n.parts]
            if len(notebooks) != 1:
                raise ValueError(f"{path}: a student's folder must hold one notebook, "
                                 f"not {len(notebooks)}")
            student, notebook = path.name, notebooks[0]
        else:
            continue
        if not STUDENT.match(student):
            raise ValueError(f"{path}: a student's name may hold letters, digits and _ . @ - "
                             f"only, not {student!r}")
        if student in found:
            raise ValueError(f"{path}: a second submission from {student}")
        found[student] = notebook
    if not found:
        raise ValueError(f"{folder}: no submitted notebook (STUDENT.ipynb or STUDENT/*.ipynb)")
    return found


def scores(course, assignment):
    """[(student, {exercise: score}, total, out of)] from the course's gradebook."""
    from nbgrader.api import Gradebook
    db = f"sqlite:///{Path(course).resolve() / 'gradebook.db'}"
    rows = []
    with Gradebook(db) as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            by_exercise = {}
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.cell.cell_type == "code":
                        by_exercise[grade.name] = float(grade.score)
            rows.append((submission.student_id, by_exercise, float(submission.score),
                         float(submission.max_score)))
    return sorted(rows)


def write_csv(rows, target):
    """One row per student: student, each exercise's score, total, out of."""
    exercises = sorted({name for _, by_exercise, _, _ in rows for name in by_exercise})
    with open(target, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["student", *exercises, "total", "out_of"])
        for student, by_exercise, total, out_of in rows:
            out.writerow([student, *(f"{by_exercise.get(e, 0.0):g}" for e in exercises),
                          f"{total:g}", f"{out_of:g}"])
    return exercises


def grade(course, folder, target, assignment=None, timeout=DEFAULT_TIMEOUT_S,
          max_instructions=DEFAULT_MAX_INSTRUCTIONS):
    """Grade the notebooks in ``folder`` against ``course``'s assignment; write the CSV
    ``target``; returns its rows (as ``scores``)."""
    _check_limits(timeout, max_instructions)
    course = Path(course)
    name = find_assignment(course, assignment)
    submitted = submissions(folder)
    for student, notebook in submitted.items():
        place = course / "submitted" / student / name
        if place.exists():
            shutil.rmtree(place)
        place.mkdir(parents=True)
        shutil.copyfile(notebook, place / f"{name}.ipynb")
    env = dict(os.environ, EMU_MAX_INSTRUCTIONS=str(max_instructions))
    run_nbgrader(course, "autograde", name, "--force",
                 f"--Execute.timeout={int(timeout)}", env=env)
    rows = [row for row in scores(course, name) if row[0] in submitted]
    try:
        write_csv(rows, target)
    except OSError as error:
        raise ValueError(f"{target}: cannot write the scores ({error.strerror})") from None
    return rows

