"""Grade a folder of submitted notebooks: each student's code in a sandbox, the checks outside
it; a CSV of scores per exercise and a feedback file per student.

``python -m emu grade COURSE SUBMISSIONS -o scores.csv`` takes a course folder made by
``python -m emu handout`` (emu.course.handout) and a folder of students' notebooks, one per student
(``alice.ipynb``, or ``alice/anything.ipynb``). For each student:

1. the file is **checked** first: a safe name, a readable notebook, this assignment's answer
   cells each once, no grade id twice. A file that fails is *refused* (the row says why);
2. the released notebook, its answer cells holding the student's code, runs in a **sandbox**
   (emu.course.sandbox: no network, nothing of the course or of other students, an unprivileged
   user, limits on memory, processes, CPU, files and time; killed whole afterwards) with a
   time limit per cell (``--timeout``) and an instruction ceiling on every emulated run
   (``--max-instructions``). After each answer cell, the variables the checks read leave the
   sandbox as plain data (emu.course.exchange);
3. the **checks**, hidden ones included, run in a process of the grader's (emu.course.checking) on
   those values; the student's code never sees them and cannot change their outcome.

Only the grader writes the CSV (atomically, after every student) and the feedback files
(``COURSE/feedback/ASSIGNMENT/STUDENT.html``: the score per exercise and the student's own
answer cells with their outputs; no check, no reference answer). nbgrader's gradebook is not
used for scores. Each student's row has a status: ``graded``, ``refused: why``, ``timed
out``, ``killed: more than N MB of memory``, ``crashed: why`` or ``needs manual grading:
exercises`` (an answer that is not plain data, e.g. a function); a student stopped at a limit
keeps what their answers had given by then. ``emu grade`` ends within (student limit + check limit) per student.
"""
from __future__ import annotations

import ast
import csv
import html
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..run.limits import check_limit
from . import sandbox
from .handout import read_notebook

DEFAULT_TIMEOUT_S = 120
DEFAULT_MAX_INSTRUCTIONS = 50_000_000      # the library's default instruction limit
DEFAULT_STUDENT_S = 1200                   # a student's whole notebook, and their checks
STUDENT = re.compile(r"^[A-Za-z0-9_@-][A-Za-z0-9_.@-]{0,63}$")
MAX_NOTEBOOK_BYTES = 20 << 20
MAX_OUTPUT_CHARS = 20_000                  # per output, in the feedback
RESTARTS = 3                               # new kernels per student


class Refused(ValueError):
    """A submitted file the grader will not run."""


def _check_limits(timeout, max_instructions, student_timeout=DEFAULT_STUDENT_S):
    for name, value in (("--timeout", timeout), ("--student-timeout", student_timeout)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"{name} {value!r}: give a positive number of seconds")
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


def _row_name(name):
    """A name that is safe in a CSV cell, for a row whose file was refused."""
    return re.sub(r"[^A-Za-z0-9_.@-]", "_", name)[:64] or "_"


def submissions(folder):
    """[(student, notebook path or None, why refused or None)] for every entry of the folder
    (hidden files and folders skipped); a ValueError only if the folder itself is unusable."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder of submitted notebooks")
    found, seen = [], set()
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") and not path.name.endswith(".ipynb"):
            continue                        # .ipynb_checkpoints, .DS_Store
        student, notebook, why = _entry(path)
        if student in seen:
            student, notebook, why = _row_name(path.name), None, "a second submission " \
                f"from {student}"
        seen.add(student)
        found.append((student, notebook, why))
    if not found:
        raise ValueError(f"{folder}: no submitted notebook (STUDENT.ipynb or STUDENT/*.ipynb)")
    return found


def _entry(path):
    name = path.name[:-len(".ipynb")] if path.name.endswith(".ipynb") else path.name
    if path.is_symlink():
        return _row_name(name), None, "a link, not a file"
    if path.is_file() and not path.name.endswith(".ipynb"):
        return _row_name(name), None, "not a notebook (.ipynb)"
    if path.is_dir():
        notebooks = [n for n in sorted(path.rglob("*.ipynb"))
                     if ".ipynb_checkpoints" not in n.parts]
        if len(notebooks) != 1:
            return _row_name(name), None, f"a student's folder must hold one notebook, " \
                f"not {len(notebooks)}"
        path = notebooks[0]
    if not STUDENT.match(name):
        return _row_name(name), None, "a student's name may hold letters, digits and _ . @ -" \
            " only (not starting with .)"
    return name, path, None


# -- the assignment: what runs where ------------------------------------------------------

def _grade_meta(cell):
    """A code cell's nbgrader metadata ({} for any other cell, or metadata not a dict)."""
    if not isinstance(cell, dict) or cell.get("cell_type") != "code":
        return {}
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def _python(source):
    """A cell's code as Python (IPython's magics turned into calls), or None."""
    from IPython.core.inputtransformer2 import TransformerManager
    try:
        return ast.parse(TransformerManager().transform_cell(source))
    except (SyntaxError, ValueError):
        return None


def _assigned(source):
    """Top-level names a cell binds."""
    tree = _python(source)
    names = set()
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def _read(source):
    """Names a cell reads."""
    tree = _python(source)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Load)} if tree else set()


def _text(cell):
    return "".join(cell.get("source", ""))


class Assignment:
    """An assignment of a course: its released cells, its checks and points."""

    def __init__(self, course, name):
        self.name = name
        self.source = read_notebook(Path(course) / "source" / name / f"{name}.ipynb")
        self.release = read_notebook(Path(course) / "release" / name / f"{name}.ipynb")
        cells = [c for c in self.source["cells"] if c.get("cell_type") == "code"]
        self.points, self.answers, self.exports, self.needs = {}, set(), {}, {}
        answer_names = set()
        for k, cell in enumerate(cells):
            meta = _grade_meta(cell)
            if meta.get("grade") and not meta.get("solution"):
                self.points[meta["grade_id"]] = float(meta.get("points", 0))
            elif meta.get("solution"):
                later = set().union(*[_read(_text(c)) for c in cells[k + 1:]])
                names = _assigned(_text(cell)) & later
                self.answers.add(meta["grade_id"])
                self.exports[meta["grade_id"]] = sorted(names)
                answer_names |= names
        for cell in cells:
            meta = _grade_meta(cell)
            if meta.get("grade_id") in self.points:     # what the check reads, not makes
                text = _text(cell)
                self.needs[meta["grade_id"]] = sorted((_read(text) - _assigned(text)) &
                                                      answer_names)

    def validate(self, path):
        """{answer grade id: the student's code} from a submitted file, or Refused."""
        try:
            if path.stat().st_size > MAX_NOTEBOOK_BYTES:
                raise Refused(f"larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
            nb = read_notebook(path)
        except OSError as error:
            raise Refused(f"cannot read it ({error.strerror})") from None
        except ValueError as error:
            raise Refused(str(error).split(": ", 1)[-1]) from None
        if nb.get("nbformat") != 4:
            raise Refused("not a version-4 notebook")
        ids = [_grade_meta(c).get("grade_id") for c in nb["cells"]]
        if not all(i is None or isinstance(i, str) for i in ids):
            raise Refused("a grade id that is not text")
        ids = [i for i in ids if i is not None]
        twice = sorted({str(i) for i in ids if ids.count(i) > 1})
        if twice:
            raise Refused(f"grade id {twice[0]} appears more than once (a pasted copy of "
                          "a cell?)")
        known = self.answers | set(self.points)
        if not set(ids) & self.answers:
            raise Refused(f"not a notebook of {self.name} (none of its answer cells)")
        strange = sorted(str(i) for i in set(ids) - known)
        if strange:
            raise Refused(f"cell {strange[0][:60]} is not part of {self.name}")
        answers = {}
        for cell in nb["cells"]:
            meta = _grade_meta(cell)
            if meta.get("grade_id") in self.answers:
                answers[meta["grade_id"]] = _text(cell)
        missing = sorted(self.answers - set(answers))
        if missing:
            raise Refused(f"the answer cell {missing[0]} is missing (start from the "
                          "released notebook)")
        return answers

    def sandbox_job(self, answers, timeout):
        """What runs in the sandbox: the released code cells, the student's answers in
        place; no check cell."""
        cells = []
        for cell in self.release["cells"]:
            meta = _grade_meta(cell)
            if cell.get("cell_type") != "code" or meta.get("grade"):
                continue
            grade_id = meta.get("grade_id") if meta.get("solution") else None
            if grade_id:
                cells.append({"source": answers[grade_id], "grade_id": grade_id,
                              "export": self.exports[grade_id]})
            else:
                cells.append({"source": _text(cell), "grade_id": None})
        return {"cells": cells, "timeout": timeout, "max_output": MAX_OUTPUT_CHARS,
                "restarts": RESTARTS}

    def check_job(self, exports, timeout):
        """What the grader's checker runs: the teacher's chapter, no reference answer."""
        cells = []
        for cell in self.source["cells"]:
            if cell.get("cell_type") != "code":
                continue
            meta = _grade_meta(cell)
            if meta.get("solution"):
                cells.append({"kind": "answer", "grade_id": meta["grade_id"]})
            elif meta.get("grade"):
                cells.append({"kind": "check", "grade_id": meta["grade_id"],
                              "source": _text(cell)})
            else:
                cells.append({"kind": "code", "source": _text(cell)})
        return {"cells": cells, "exports": exports, "needs": self.needs, "timeout": timeout}


# -- running one student ------------------------------------------------------------------

def _env(max_instructions, home):
    """The environment of the grader's processes: the instruction ceiling, no widgets (no
    one sees them, and nbclient can lose its next request after one: emu.context.headless),
    a private IPython folder (no startup files of anyone's), plotly drawing nowhere."""
    keep = ("PATH", "LANG", "LC_ALL", "VIRTUAL_ENV", "SYSTEMROOT", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(EMU_MAX_INSTRUCTIONS=str(max_instructions), EMU_HEADLESS="1", HOME=str(home),
               IPYTHONDIR=str(Path(home) / ".ipython"), PLOTLY_RENDERER="json",
               MPLCONFIGDIR=str(Path(home) / "mpl"), PYDEVD_DISABLE_FILE_VALIDATION="1")
    return env


def _execute(job, limits, folder, trusted, max_instructions):
    """Run the student's cells; returns (the sandbox's result or None, None or why it was
    killed: "time" or "memory")."""
    inner = [sys.executable, "-m", "emu.course.sandboxed", "/job.json"]
    if trusted:
        code, line = _run_trusted(job, limits, folder, max_instructions)
    else:
        code, line, _ = sandbox.run(inner, json.dumps(job), limits, folder,
                                    {"EMU_MAX_INSTRUCTIONS": str(max_instructions),
                                     "EMU_HEADLESS": "1"})
    try:
        result = json.loads(line) if line else None
    except (ValueError, RecursionError):
        result = None
    return (result if isinstance(result, dict) else None), \
        (code if code in ("time", "memory") else None)


def _run_trusted(job, limits, folder, max_instructions):
    """``--trusted``: the same cells without a sandbox, as the teacher, with the same limits
    (prlimit) and the same kill of the process group; nothing stops the code from reading
    or writing what the teacher can, or from outliving its student."""
    folder = Path(folder)
    (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
    home = folder / "home"
    home.mkdir()
    read, write = os.pipe()
    argv = sandbox.prlimit(limits, True) + [sys.executable, "-m", "emu.course.sandboxed",
                                             str(folder / "job.json"), str(write)]
    code, line, _ = sandbox.supervise(argv, limits, folder / "log.txt", read, write,
                                      cwd=home, env=_env(max_instructions, home))
    return code, line


def _check(assignment, exports, timeout, limits, folder, max_instructions):
    """Run the checks in the grader's own process; returns ({grade id: outcome}, why not)."""
    folder = Path(folder)
    job, target, home = folder / "check.json", folder / "checked.json", folder / "checker"
    home.mkdir()
    job.write_text(json.dumps(assignment.check_job(exports, timeout)), encoding="utf-8")
    with open(folder / "check-log.txt", "wb") as sink:
        # the checks are the teacher's, but they run the model on the student's values:
        # the same limits as the student's run
        argv = sandbox.prlimit(limits, os.geteuid() == 0) + [
            sys.executable, "-m", "emu.course.checking", str(job), str(target)]
        proc = subprocess.Popen(argv, cwd=home, env=_env(max_instructions, home),
                                stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=limits.wall_s)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            sandbox.kill(proc)
    if code is None:
        return None, "timed out"
    try:
        return json.loads(target.read_text())["checks"], None
    except (OSError, ValueError, KeyError):
        tail = (folder / "check-log.txt").read_text(errors="replace").strip().splitlines()
        return None, f"crashed: the checks did not finish ({' | '.join(tail[-2:])[:200]})"


def grade_one(assignment, notebook, options):
    """One student: (status, {exercise: outcome}, the sandbox's result or None)."""
    try:
        answers = assignment.validate(notebook)
    except Refused as why:
        return f"refused: {why}", {}, None
    with tempfile.TemporaryDirectory(prefix="emu-grade-") as folder:
        run_dir, check_dir = Path(folder) / "run", Path(folder) / "check"
        run_dir.mkdir()
        check_dir.mkdir()
        result, killed = _execute(assignment.sandbox_job(answers, options["timeout"]),
                                  options["limits"], run_dir, options["trusted"],
                                  options["max_instructions"])
        killed = {"time": "timed out", "memory": "killed: more than "
                  f"{options['limits'].memory_mb} MB of memory"}.get(killed)
        if result is None:                  # nothing came back: no checks to run
            return killed or "crashed: the notebook's run left no result", {}, None
        exports = result.get("exports")
        exports = {k: v for k, v in exports.items() if k in assignment.answers and
                   isinstance(v, str)} if isinstance(exports, dict) else {}
        outcomes, why = _check(assignment, exports, options["timeout"], options["limits"],
                               check_dir, options["max_instructions"])
    if why:
        return why, {}, result
    if killed:
        return killed, outcomes, result
    manual = sorted(k for k, v in outcomes.items() if v == "manual")
    if manual:
        return f"needs manual grading: {', '.join(manual)}", outcomes, result
    return "graded", outcomes, result


# -- the CSV and the feedback -------------------------------------------------------------

def score(assignment, outcomes):
    by_exercise = {k: (p if outcomes.get(k) == "passed" else 0.0)
                   for k, p in assignment.points.items()}
    return by_exercise, sum(by_exercise.values())


def _atomic_write(target, text):
    target = Path(target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_csv(assignment, rows, target):
    """One row per student: student, status, each exercise's score, total, out of."""
    exercises = sorted(assignment.points)
    out_of = sum(assignment.points.values())
    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["student", "status", *exercises, "total", "out_of"])
    for student, status, outcomes in rows:
        by_exercise, total = score(assignment, outcomes)
        out.writerow([student, status, *(f"{by_exercise[e]:g}" for e in exercises),
                      f"{total:g}", f"{out_of:g}"])
    _atomic_write(target, text.getvalue())
    return exercises


OUTCOME = {"passed": "passed", "failed": "failed", "timed out": "the check timed out",
           "manual": "left to the teacher (the answer is not plain data)"}


def feedback(assignment, student, status, outcomes, result):
    """The student's feedback page: status, score per exercise, their answer cells and the
    outputs those produced. No check and no reference answer is in it."""
    by_exercise, total = score(assignment, outcomes)
    e = html.escape
    rows = "".join(f"<tr><td>{e(k)}</td><td>{by_exercise[k]:g} / {p:g}</td>"
                   f"<td>{e(OUTCOME.get(outcomes.get(k), 'not graded'))}</td></tr>"
                   for k, p in sorted(assignment.points.items()))
    cells = ""
    answers = (result or {}).get("answers") if isinstance(result, dict) else None
    for grade_id, answer in sorted((answers or {}).items()):
        if grade_id not in assignment.answers or not isinstance(answer, dict):
            continue
        outputs = answer.get("outputs") if isinstance(answer.get("outputs"), list) else []
        shown = "".join(f"<pre>{e(str(o.get('text', ''))[:MAX_OUTPUT_CHARS + 200])}</pre>"
                        for o in outputs[:50] if isinstance(o, dict))
        cells += (f"<h3>{e(grade_id)} ({e(str(answer.get('status', ''))[:40])})</h3>"
                  f"{shown or '<p>(no output)</p>'}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{e(assignment.name)}: "
            f"{e(student)}</title></head><body><h1>{e(assignment.name)}: {e(student)}</h1>"
            f"<p>Status: {e(status)}</p><p>Score: {total:g} of "
            f"{sum(assignment.points.values()):g}</p><table><tr><th>exercise</th>"
            f"<th>score</th><th>result</th></tr>{rows}</table>"
            f"<h2>Your answer cells' output</h2>{cells}</body></html>\n")


# -- the class ------------------------------------------------------------------------------

def bound_s(n_students, student_timeout):
    """The longest ``emu grade`` may take, start-ups aside: each student's run and checks
    killed at their limits."""
    return n_students * 2 * student_timeout


def grade(course, folder, target, assignment=None, timeout=DEFAULT_TIMEOUT_S,
          max_instructions=DEFAULT_MAX_INSTRUCTIONS, student_timeout=DEFAULT_STUDENT_S,
          memory_mb=sandbox.Limits.memory_mb, trusted=False, progress=None):
    """Grade the notebooks in ``folder`` against ``course``'s assignment; write the CSV
    ``target`` and the feedback files; returns [(student, status, {exercise: score}, total,
    out of)]."""
    _check_limits(timeout, max_instructions, student_timeout)
    course, target = Path(course), Path(target)
    if not target.parent.is_dir():
        raise ValueError(f"{target}: its folder does not exist")
    if not trusted:
        why = sandbox.check()
        if why:
            raise ValueError(f"no sandbox for the students' code: {why}. Pass --trusted "
                             "only if you trust every submission's code")
        for place in (course, Path(folder), target.parent):
            if sandbox.exposes(place):
                raise ValueError(f"{place}: inside what the sandbox shows students; move it")
    name = find_assignment(course, assignment)
    work = Assignment(course, name)
    entries = submissions(folder)
    limits = sandbox.Limits(memory_mb=memory_mb, cpu_s=int(student_timeout),
                            wall_s=student_timeout)
    options = {"timeout": timeout, "limits": limits, "trusted": trusted,
               "max_instructions": max_instructions}
    if progress:
        progress(f"{len(entries)} submission(s) of {name}: at most "
                 f"{bound_s(len(entries), student_timeout):g} s")
    feedback_dir = course / "feedback" / name
    feedback_dir.mkdir(parents=True, exist_ok=True)
    rows, out = [], []
    for student, notebook, why in entries:
        started = time.monotonic()
        if why:
            status, outcomes, result = f"refused: {why}", {}, None
        else:
            status, outcomes, result = grade_one(work, notebook, options)
        rows.append((student, status, outcomes))
        write_csv(work, rows, target)
        if notebook is not None:
            _atomic_write(feedback_dir / f"{student}.html",
                          feedback(work, student, status, outcomes, result))
        by_exercise, total = score(work, outcomes)
        out.append((student, status, by_exercise, total, sum(work.points.values())))
        if progress:
            progress(f"{student}: {status} ({time.monotonic() - started:.0f} s)")
    return out


