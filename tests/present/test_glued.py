"""The prose's numbers (issue 36): {eval}`emu.glued('name:format')` gives in JupyterLab the
text the book's {glue:text}`name:format` prints (_ext/eval_glue.py turns the one into the
other for the book)."""
import sys
from pathlib import Path

import numpy as np
import pytest
from myst_nb.core.variables import format_plain_text

from emu.present.compare import Comparison, glue, glued

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_ext"))
from eval_glue import as_glue_roles  # noqa: E402


@pytest.mark.parametrize("value, spec", [
    (6.283185, ".1f"), (12345, ",d"), (np.float64(0.125), ".0%"), (np.int64(7), ""),
    (1234.5, ",.0f"), ("2.3x", ""), (Comparison(695.5, 2811, "us"), ""), (3, ".2f")])
def test_glued_text_is_what_myst_nb_prints(value, spec):
    glue(x=value)
    key = f"x:{spec}" if spec else "x"
    from emu.present.compare import gluable
    assert glued(key) == format_plain_text(repr(gluable(value)), spec)
    assert repr(glued(key)) == str(glued(key))           # JupyterLab shows it without quotes


def test_a_name_not_glued_yet_says_to_run_the_cells_above():
    with pytest.raises(NameError, match="nothing is glued as 'never_glued' yet: run the cells"):
        glued("never_glued")


def test_the_book_pastes_glue_roles_for_the_expressions():
    text = "costs {eval}`emu.glued('ratio:.1f')` times; {eval}`emu.glued_md('verdict')`; {eval}`1+1`"
    assert as_glue_roles(text) == ("costs {glue:text}`ratio:.1f` times; {glue:md}`verdict`; "
                                   "{eval}`1+1`")


def test_no_chapter_has_a_glue_role_left():
    root = Path(__file__).resolve().parents[2] / "notebooks"
    left = [str(p) for p in root.glob("**/*.ipynb") if "{glue:" in p.read_text()]
    assert left == []
