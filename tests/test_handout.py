"""python -m emu handout: a chapter without its solutions, for students."""
import json

import pytest

from emu.__main__ import main
from emu.handout import handout, strip_solutions

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


def notebook(tmp_path, cells):
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


def test_handout_drops_solutions_solution_cells_and_outputs(tmp_path):
    src = notebook(tmp_path, [
        {"cell_type": "code", "metadata": {}, "source": "1 + 1", "execution_count": 3,
         "outputs": [{"output_type": "execute_result", "data": {"text/plain": "2"}}]},
        {"cell_type": "markdown", "metadata": {}, "source": f"{EXERCISE}\n\n{SOLUTION}"},
        {"cell_type": "markdown", "metadata": {}, "source": SOLUTION},
        {"cell_type": "code", "metadata": {"tags": ["solution"]}, "source": "2 + 2",
         "execution_count": None, "outputs": []}])
    out = tmp_path / "lab.ipynb"
    assert handout(src, out) == 3
    cells = json.loads(out.read_text())["cells"]
    assert [c["cell_type"] for c in cells] == ["code", "markdown"]
    assert cells[0]["outputs"] == [] and cells[0]["execution_count"] is None
    assert cells[1]["source"] == EXERCISE


def test_cli_refuses_to_overwrite_the_chapter_and_reports_bad_files(tmp_path, capsys):
    src = notebook(tmp_path, [])
    assert main(["handout", str(src), "-o", str(src)]) == 1
    assert "overwrite" in capsys.readouterr().err
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    assert main(["handout", str(bad), "-o", str(tmp_path / "x.ipynb")]) == 1
    assert "not a readable notebook" in capsys.readouterr().err


def test_the_books_chapters_hand_out_cleanly(tmp_path):
    from pathlib import Path
    chapters = sorted(Path(__file__).resolve().parent.parent.glob("notebooks/**/*.ipynb"))
    assert chapters
    for chapter in chapters:
        out = tmp_path / chapter.name
        handout(chapter, out)
        text = out.read_text()
        assert "{solution}" not in text, chapter
