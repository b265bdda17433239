"""python -m emu handout: chapters as nbgrader assignments (solutions out, checks in place)."""
import json
import re
from pathlib import Path

import pytest

from emu.__main__ import main
from emu.course.handout import (assignment_id, exercise_blocks, exercise_table, exercises,
                         strip_solutions, without_solutions)

REPO = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(REPO.glob("notebooks/**/*.ipynb"))
EXERCISE = "```{exercise} Sum\n:label: ex1\nAdd 2 and 2.\n```"
SOLUTION = "```{solution} ex1\n:class: dropdown\nFour.\n```"


def test_strip_removes_each_solution_block_and_keeps_the_exercise():
    text, n = strip_solutions(f"## Exercises\n\n{EXERCISE}\n\n{SOLUTION}\n\nAfter.")
    assert n == 1
    assert text == f"## Exercises\n\n{EXERCISE}\n\nAfter."
    four = "````{solution} ex1\n```python\nx = 4\n```\n````"      # a longer fence nests code
    assert strip_solutions(f"{EXERCISE}\n\n{four}") == (EXERCISE, 1)


def test_an_unclosed_solution_is_an_error_naming_the_line():
    with pytest.raises(ValueError, match="line 6 is never closed"):
        strip_solutions(f"{EXERCISE}\n\n```{{solution}} ex1\nFour.")


def test_without_solutions_drops_written_solutions_and_outputs_but_keeps_nbgrader_cells():
    nb = {"cells": [
        {"cell_type": "code", "metadata": {}, "source": "1 + 1", "execution_count": 3,
         "outputs": [{"output_type": "execute_result", "data": {"text/plain": "2"}}]},
        {"cell_type": "markdown", "metadata": {}, "source": f"{EXERCISE}\n\n{SOLUTION}"},
        {"cell_type": "markdown", "metadata": {}, "source": SOLUTION},
        {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "2 + 2",
         "execution_count": None, "outputs": []},
        {"cell_type": "code", "source": "x = 4", "execution_count": 1, "outputs": [],
         "metadata": {"tags": ["hide-cell", "other"], "nbgrader": {"solution": True}}}]}
    out, removed = without_solutions(nb)
    assert removed == 3
    assert [c["cell_type"] for c in out["cells"]] == ["code", "markdown", "code"]
    assert out["cells"][0]["outputs"] == [] and out["cells"][0]["execution_count"] is None
    assert out["cells"][1]["source"] == EXERCISE
    assert out["cells"][2]["metadata"]["tags"] == ["other"]     # the book's folding is gone


def test_assignment_names_come_from_the_chapter_path():
    assert assignment_id("notebooks/00-toolkit.ipynb") == "00-toolkit"
    assert assignment_id("notebooks/mackerras2003/01-cache-flushing.ipynb") == \
        "mackerras2003-01-cache-flushing"


def test_cli_refuses_to_overwrite_a_chapter_and_reports_bad_files(tmp_path, capsys):
    chapter = tmp_path / "chapter.ipynb"
    chapter.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4,
                                   "nbformat_minor": 5}))
    assert main(["handout", str(chapter), "-o", str(chapter)]) == 1
    assert "overwrite" in capsys.readouterr().err
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    assert main(["handout", str(bad), "-o", str(tmp_path / "course")]) == 1
    assert "bad.ipynb: not a readable notebook" in capsys.readouterr().err


def graded_cells(chapter):
    """(answer cells, check cells) of a chapter, by grade id."""
    nb = json.loads(chapter.read_text())
    answers, checks = {}, {}
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader")
        if meta:
            (checks if meta["grade"] else answers)[meta["grade_id"]] = (cell, meta)
    return nb, answers, checks


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_each_graded_exercise_has_an_answer_public_and_hidden_checks(chapter):
    nb, answers, checks = graded_cells(chapter)
    labels = set(re.findall(r":label: (\S+)", "".join(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")))
    for grade_id, (cell, meta) in checks.items():
        text = "".join(cell["source"])
        assert grade_id in labels, f"{grade_id}: a check cell is named after its exercise"
        assert f"{grade_id}-answer" in answers, f"{grade_id}: no answer cell"
        assert meta["points"] > 0 and meta["locked"] and not meta["solution"]
        public, _, hidden = text.partition("### BEGIN HIDDEN TESTS")
        assert "emu.check.that(" in public and "emu.check.that(" in hidden, \
            f"{grade_id}: public and hidden checks (emu.check: they say what they expected)"
        assert "### END HIDDEN TESTS" in hidden
        assert "remove-cell" in cell["metadata"].get("tags", []), "the book leaves checks out"
    for grade_id, (cell, meta) in answers.items():
        text = "".join(cell["source"])
        assert grade_id.removesuffix("-answer") in checks, f"{grade_id}: no check cell"
        assert meta["solution"] and not meta["grade"]
        assert text.count("### BEGIN SOLUTION") == 1 == text.count("### END SOLUTION")
        assert "hide-cell" in cell["metadata"].get("tags", []), "the book folds the answer"


def test_the_books_chapters_lose_their_written_solutions():
    graded = 0
    for chapter in CHAPTERS:
        nb, _ = without_solutions(json.loads(chapter.read_text()))
        text = json.dumps(nb)
        assert "{solution}" not in text, chapter
        graded += len(exercises(nb))
    assert graded >= 25


def test_exercise_blocks_give_title_label_and_why_not_graded():
    essay = ("```{exercise} Why\n:label: ex2\nExplain.\n\n"
             "% not graded: an explanation  \n```")
    text = f"## Exercises\n\n{EXERCISE}\n\n{SOLUTION}\n\n{essay}\n\n```{{exercise}}\nNo label.\n```"
    assert exercise_blocks(text) == [("Sum", "ex1", ""), ("Why", "ex2", "an explanation"),
                                     ("", "", "")]
    # a reason outside its exercise's block belongs to no exercise
    assert exercise_blocks(f"{EXERCISE}\n% not graded: stray") == [("Sum", "ex1", "")]


def test_every_exercise_of_the_book_is_graded_or_says_why_not():
    table = exercise_table(REPO / "notebooks")
    assert len(table) >= 30 and table["exercise"].is_unique
    read = table[table["points"] == 0]
    assert (read["not graded because"] != "").all(), \
        f"exercises read without a reason: {list(read[read['not graded because'] == '']['exercise'])}"
    graded = table[table["points"] > 0]
    assert (graded["not graded because"] == "").all(), "a graded exercise with a reason not to be"
    assert len(graded) > 3 * len(read)


def test_handout_needs_no_activated_environment_and_leaves_no_half_made_course(tmp_path):
    """nbgrader runs alembic from PATH: a python of a virtual environment that is not
    activated found none (issue 28). A chapter nbgrader refuses leaves no course folder."""
    import os
    import subprocess
    import sys
    from test_grading_hostile import chapter
    good, bad = chapter(), chapter()
    bad["cells"].append(json.loads(json.dumps(bad["cells"][2])))     # a grade id twice
    (tmp_path / "notebooks").mkdir()
    env = dict(os.environ, PATH="/usr/bin:/bin")
    for name, nb in (("good", good), ("bad", bad)):
        (tmp_path / "notebooks" / f"{name}.ipynb").write_text(json.dumps(nb))
        proc = subprocess.run([sys.executable, "-m", "emu", "handout",
                               str(tmp_path / "notebooks" / f"{name}.ipynb"), "-o",
                               str(tmp_path / name)], env=env, capture_output=True, text=True)
        if name == "good":
            assert proc.returncode == 0, proc.stderr
            assert (tmp_path / "good" / "release" / "good" / "good.ipynb").exists()
        else:
            assert proc.returncode == 1 and "generate_assignment failed" in proc.stderr
            assert not (tmp_path / "bad").exists()
