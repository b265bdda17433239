"""A student's own copies (issue 36): `python -m emu student-copy` writes the chapters with
empty answers, without solutions and hidden checks, and never overwrites a copy."""
import json

import pytest

from emu.__main__ import main
from emu.context import ROOT

CHAPTER = ROOT / "notebooks" / "00-toolkit.ipynb"


def test_a_students_copy_has_empty_answers_and_no_hidden_checks(tmp_path, capsys):
    out = tmp_path / "mine"
    assert main(["student-copy", str(CHAPTER), "-o", str(out)]) == 0
    copy = out / "00-toolkit.ipynb"
    assert str(copy) in capsys.readouterr().out
    text = copy.read_text()
    for absent in ("BEGIN SOLUTION", "HIDDEN TESTS", "NotImplementedError", "{solution}"):
        assert absent not in text
    cells = json.loads(text)["cells"]
    answers = [c for c in cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")]
    assert answers and all("# your answer here" in "".join(c["source"]) for c in answers)
    assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code")
    # again: the copy may hold the student's work, so it is refused, before anything is done
    assert main(["student-copy", str(CHAPTER), "-o", str(out)]) == 1
    assert "00-toolkit.ipynb exists: it may hold your work" in capsys.readouterr().err
