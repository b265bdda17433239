"""Checks that teach: what an exercise's check cell runs on a student's answer.

Each check says, when it fails, what it expected and what the student's variables hold; when
every check of a cell has run, ``passed`` says so. A check cell of a chapter reads::

    emu.check.that(isinstance(lazy_flushes, int), "a count of pages", lazy_flushes=lazy_flushes)
    emu.check.passed("mack-flush-ex1")

A failure is a ``WrongAnswer`` (an AssertionError, so nbgrader counts it as a failed test),
whose message is all the student sees: no traceback into the library is needed to read it."""
from __future__ import annotations

SHOWN_CHARS = 200       # a long value (a DataFrame, a list) is cut to this in a message


class WrongAnswer(AssertionError):
    """An answer that fails a check: its message says what was expected and what came."""


def that(condition, expected, **answers):
    """Pass if ``condition`` is true, else raise WrongAnswer saying ``expected`` (in words)
    and what each of ``answers`` (name=value) holds."""
    if condition:
        return
    raise WrongAnswer(f"Not yet. Expected: {expected}.\n{got(answers)}")


def got(answers):
    """'Got: name = value (type)' for each answer; an unanswered one (None) says so."""
    if not answers:
        return "Got: something else."
    lines = []
    for name, value in answers.items():
        if value is None:
            lines.append(f"Got: {name} = None (not answered yet: replace the None with your "
                         "answer and run its cell)")
        else:
            lines.append(f"Got: {name} = {shown(value)} ({type(value).__name__})")
    return "\n".join(lines)


def shown(value):
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + " ..."


def passed(exercise):
    """Say that the checks of ``exercise`` (its label) passed."""
    print(f"Passed: every check of {exercise} in this notebook holds for your answer.")
