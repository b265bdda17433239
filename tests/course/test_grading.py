"""python -m emu handout + grade: the toolkit chapter as an assignment, graded in a sandbox.

Four students: one submits the reference answers, one a wrong answer, one a loop that never
ends, one a crash (the kernel killed by SIGSEGV, as a keystone crash inside the kernel process
would; and an assembler error from emu). Each fault costs only the exercise it is in, and the
CSV says so. Slow: the chapter runs twice per student, in the sandbox and in the checker.
(Hostile students: tests/test_grading_hostile.py.)
"""
import csv
import json
import os

from pathlib import Path

import pytest

from emu.course import sandbox
from emu.__main__ import main
from emu.course.grading import find_assignment, submissions
from emu.hw.faults import InstructionLimitExceeded
from emu.run.machine import Machine

# the grader needs bubblewrap: without it these skip, except in CI (.ci/run installs it)
needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None and not os.environ.get("CI"),
                                reason="bubblewrap (bwrap) is not installed")
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
TOOLKIT = NOTEBOOKS / "00-toolkit.ipynb"
NAME = "00-toolkit"


def answer_cells(notebook):
    return {c["metadata"]["nbgrader"]["grade_id"]: c for c in notebook["cells"]
            if c["metadata"].get("nbgrader", {}).get("solution")}


def submission(course, folder, student, answers, name=NAME):
    """The student notebook with each answer cell's code replaced: by ``answers[grade id]``,
    or else by the reference solution (the source's code without nbgrader's markers)."""
    source = json.loads((course / "source" / name / f"{name}.ipynb").read_text())
    released = json.loads((course / "release" / name / f"{name}.ipynb").read_text())
    reference = answer_cells(source)
    for grade_id, cell in answer_cells(released).items():
        code = "".join(reference[grade_id]["source"])
        code = code.replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION\n", "")
        cell["source"] = answers.get(grade_id, code)
    (folder / f"{student}.ipynb").write_text(json.dumps(released))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    folder = tmp_path_factory.mktemp("course") / "course"
    assert main(["handout", str(TOOLKIT), "-o", str(folder)]) == 0
    return folder


def test_the_student_notebook_has_no_solutions_hidden_checks_or_outputs(course):
    text = (course / "release" / NAME / f"{NAME}.ipynb").read_text()
    released = json.loads(text)
    assert "{solution}" not in text and "BEGIN SOLUTION" not in text
    assert "HIDDEN TESTS" not in text and "wide_writebacks == 64" not in text
    assert "raise NotImplementedError()" in text
    assert all(not c.get("outputs") for c in released["cells"] if c["cell_type"] == "code")
    # the public checks are there, the reference answer is not
    assert "a 4 KB page has 128 lines of 32 bytes" in text
    assert "replace(\n    \".equ    LINE, 32\"" not in text


@needs_bwrap
def test_grading_four_students(course, tmp_path, capsys):
    subs = tmp_path / "submitted"
    subs.mkdir()
    submission(course, subs, "correct", {})
    submission(course, subs, "wrong", {
        "toolkit-ex1-answer": "wide_writebacks, wide_instructions = 128, 777"})
    submission(course, subs, "runaway", {"toolkit-ex2-answer": "while True:\n    pass"})
    submission(course, subs, "crash", {
        # keystone refuses a non-ASCII statement: emu raises AssemblyError in this cell
        "toolkit-ex1-answer": 'Machine("ppc750").load("n\\u00f6p\\n")',
        "toolkit-ex3-answer": "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"})
    scores = tmp_path / "scores.csv"
    assert main(["grade", str(course), str(subs), "-o", str(scores), "--timeout", "15"]) == 0
    assert "correct: 5 of 5 (graded)" in capsys.readouterr().out
    with open(scores, newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    columns = ["toolkit-ex1", "toolkit-ex2", "toolkit-ex3", "total", "out_of"]
    table = {student: [float(row[c]) for c in columns] for student, row in rows.items()}
    assert {row["status"] for row in rows.values()} == {"graded"}
    assert table == {
        "correct": [2, 2, 1, 5, 5],
        "wrong": [0, 2, 1, 3, 5],         # the wrong count fails its hidden check only
        "runaway": [2, 0, 1, 3, 5],       # interrupted after 15 s; later cells still ran
        "crash": [0, 2, 0, 2, 5],         # the error and the dead kernel cost their own
    }


def test_grading_refuses_bad_folders_and_limits(course, tmp_path, capsys):
    assert find_assignment(course) == NAME
    with pytest.raises(ValueError, match="no assignment 'lab9'"):
        find_assignment(course, "lab9")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no submitted notebook"):
        submissions(tmp_path / "empty")
    (tmp_path / "two" / "bob").mkdir(parents=True)
    for name in ("a.ipynb", "b.ipynb"):
        (tmp_path / "two" / "bob" / name).write_text("{}")
    assert submissions(tmp_path / "two") == [
        ("bob", None, "a student's folder must hold one notebook, not 2")]
    for option, value in (("--timeout", "0"), ("--max-instructions", "-5"),
                          ("--student-timeout", "0"), ("--memory", "x")):
        assert main(["grade", str(course), str(tmp_path / "two"), "-o", "x.csv",
                     option, value]) == 1
        assert option in capsys.readouterr().err


def test_the_instruction_ceiling_stops_a_run_and_says_whose_it_is(monkeypatch):
    m = Machine("ppc750")
    m.load("loop: b loop\n")
    monkeypatch.setenv("EMU_MAX_INSTRUCTIONS", "1000")
    with pytest.raises(InstructionLimitExceeded, match="limit is 1,000, the grader's ceiling"):
        m.call("loop")
    monkeypatch.setenv("EMU_MAX_INSTRUCTIONS", "lots")
    with pytest.raises(ValueError, match="EMU_MAX_INSTRUCTIONS='lots'"):
        m.call("loop")
    monkeypatch.delenv("EMU_MAX_INSTRUCTIONS")
    with pytest.raises(InstructionLimitExceeded, match="limit is 5,000\\)"):
        m.call("loop", limit=5000)          # no ceiling: the call's own limit


@needs_bwrap
def test_the_graders_kernels_run_without_widgets(tmp_path, monkeypatch):
    """Both ways a student's notebook runs (the sandbox, or trusted) set EMU_HEADLESS: no
    explorer widget or progress bar, after which nbclient can lose its next request."""
    from emu.course import grading
    seen = []
    monkeypatch.setattr(sandbox, "run", lambda inner, job, limits, folder, env:
                        seen.append(env) or (0, "", ""))
    grading._execute({}, sandbox.Limits(), tmp_path, False, 1000)
    assert seen[0]["EMU_HEADLESS"] == "1" and seen[0]["EMU_MAX_INSTRUCTIONS"] == "1000"
    assert grading._env(1000, tmp_path)["EMU_HEADLESS"] == "1"


def test_an_answer_one_step_off_the_models_boundary_scores_nothing(tmp_path):
    """Mackerras 2003's copy exercises: the hidden checks run the model again at the answer
    and one step beside it, so answers one step off (a queue one entry short, a trap one cycle
    too dear, a size 8 bytes short) pass the public checks and score nothing."""
    course, name = tmp_path / "course", "mackerras2003-02-memory-copying"
    assert main(["handout", str(NOTEBOOKS / "mackerras2003" / "02-memory-copying.ipynb"),
                 "-o", str(course)]) == 0
    subs = tmp_path / "submitted"
    subs.mkdir()
    submission(course, subs, "off", {
        "mack-copy-ex1-answer": "entries_needed, longest_service = 5, 10",
        "mack-copy-ex2-answer": "break_even_cycles = 4",
        "mack-copy-ex3-answer": "largest_win_32 = 328"}, name=name)
    scores = tmp_path / "scores.csv"
    assert main(["grade", str(course), str(subs), "-o", str(scores)]) == 0
    with open(scores, newline="") as f:
        row = next(csv.DictReader(f))
    assert [float(row[c]) for c in ("mack-copy-ex1", "mack-copy-ex2", "mack-copy-ex3",
                                    "out_of")] == [0, 0, 0, 4]


def test_the_checks_read_from_the_sandbox_only_what_the_answers_make(tmp_path):
    """The variables exported after each answer cell: those its reference answer binds and a
    later cell reads; a check needs those it reads without binding them itself (the
    kperfdiff check's own `alone` DataFrame is not the student's)."""
    from emu.course.grading import Assignment
    course = tmp_path / "course"
    assert main(["handout", str(NOTEBOOKS / "01-under-the-hood.ipynb"), "-o", str(course)]) == 0
    work = Assignment(course, "01-under-the-hood")
    assert work.needs == {"tk2-quantum": ["waits_quantum_1000", "waits_quantum_4"],
                          "tk2-kperfdiff": ["only_as_shipped", "removed_by"]}
    assert set(work.exports["tk2-kperfdiff-answer"]) >= {"only_as_shipped", "removed_by"}
    assert work.points == {"tk2-quantum": 2.0, "tk2-kperfdiff": 2.0}
