"""Checks that teach (issue 36): a failing check says what it expected and what the answer
holds; a passing cell says so."""
import pytest

from emu.course import check


def test_a_failing_check_says_what_it_expected_and_what_it_got():
    with pytest.raises(AssertionError) as e:
        check.that(False, "a count of pages", lazy_flushes=3.5, keeps={"cow"})
    assert str(e.value) == ("Not yet. Expected: a count of pages.\n"
                            "Got: lazy_flushes = 3.5 (float)\nGot: keeps = {'cow'} (set)")


def test_an_unanswered_exercise_is_named_as_such():
    with pytest.raises(check.WrongAnswer, match="flushes_300 = None \\(not answered yet"):
        check.that(False, "a count of pages", flushes_300=None)


def test_a_passing_check_is_silent_and_passed_says_so(capsys):
    check.that(True, "anything", x=1)
    assert capsys.readouterr().out == ""
    check.passed("mack-flush-ex1")
    assert "every check of mack-flush-ex1" in capsys.readouterr().out


def test_every_check_cell_uses_checks_that_teach():
    import json
    from pathlib import Path
    root = Path(__file__).resolve().parents[2] / "notebooks"
    for path in root.glob("**/*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            grading = cell.get("metadata", {}).get("nbgrader", {})
            if grading.get("grade") and cell["cell_type"] == "code":
                text = "".join(cell["source"])
                assert "assert " not in text, (path, grading["grade_id"])
                assert text.rstrip().endswith(f'emu.check.passed("{grading["grade_id"]}")')
