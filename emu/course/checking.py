"""The checks, run by the grader on a student's exported answers (never in the student's
sandbox).

    python -m emu.course.checking JOB.json RESULT.json

JOB holds the chapter as the teacher wrote it (its cells, the check cells with their hidden
checks), minus the reference answers, and the student's answers as plain data
(emu.course.exchange). The chapter's cells run in order in a fresh IPython shell; in place of each
answer cell the student's exported values are set; each check cell runs with a time limit
and passes if it raises nothing. No code of the student's runs here: what their notebook
computed arrives as data. An answer whose value is not plain data (a function, an object of
their own) makes its exercise ``manual``: the teacher grades it by hand.

RESULT: {grade id: "passed" | "failed" | "timed out" | "manual"} and the errors of the
chapter's own cells (which would make every later check fail: the teacher should know).
"""
from __future__ import annotations

import json
import os
import signal
import sys

from . import exchange


class CheckTimeout(Exception):
    """A check cell ran past its time limit."""


def _alarm(signum, frame):
    raise CheckTimeout("the check ran past its time limit")


def _shell():
    from IPython.core.interactiveshell import InteractiveShell
    return InteractiveShell.instance()


def _run(shell, source, timeout=None):
    """Run one cell; returns None or the exception it raised."""
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        result = shell.run_cell(source, store_history=False, silent=True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return result.error_in_exec or result.error_before_exec


def _inject(shell, text):
    """Set the student's exported values; returns the names whose values were not plain."""
    if text is None:
        return set()
    try:
        values = exchange.loads(text)
    except (ValueError, RecursionError):
        return set()
    not_plain = set()
    for name, value in values.items():
        if isinstance(value, exchange.NotPlain):
            not_plain.add(name)
            shell.user_ns.pop(name, None)
        else:
            shell.user_ns[name] = value
    return not_plain


def run(job):
    signal.signal(signal.SIGALRM, _alarm)
    shell = _shell()
    results, errors, not_plain = {}, [], set()
    for k, cell in enumerate(job["cells"]):
        kind, grade_id = cell["kind"], cell.get("grade_id")
        if kind == "answer":
            not_plain |= _inject(shell, job["exports"].get(grade_id))
        elif kind == "check":
            if not_plain & set(job["needs"].get(grade_id, [])):
                results[grade_id] = "manual"
                continue
            error = _run(shell, cell["source"], job["timeout"])
            results[grade_id] = "passed" if error is None else \
                "timed out" if isinstance(error, CheckTimeout) else "failed"
        else:
            error = _run(shell, cell["source"], job["timeout"])
            if error is not None:
                errors.append(f"cell {k}: {type(error).__name__}: {str(error)[:200]}")
    return {"checks": results, "chapter_errors": errors}


def main(argv):
    job_path, target = argv
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    result = run(job)
    tmp = f"{target}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(result, f)
    os.replace(tmp, target)


if __name__ == "__main__":
    main(sys.argv[1:])
