"""_ext/solution_markers.py: the book shows answer cells without nbgrader's markers."""
import importlib.util
from pathlib import Path

from docutils import nodes

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("solution_markers",
                                              REPO / "_ext" / "solution_markers.py")
markers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(markers)

ANSWER = ("x = None   # the answer\n### BEGIN SOLUTION\nx = 2 + 2\n  ### END SOLUTION  \n"
          "x")


def test_the_marker_lines_go_and_the_code_stays():
    assert markers.without_markers(ANSWER) == "x = None   # the answer\nx = 2 + 2\nx"
    assert markers.without_markers("### END SOLUTION") == ""
    # a line that only mentions the words is code, not a marker
    kept = "print('### BEGIN SOLUTION is a marker')"
    assert markers.without_markers(kept) == kept


def test_only_notebook_cells_lose_their_markers():
    cell = nodes.container(classes=["cell_input"])
    cell += nodes.literal_block(ANSWER, ANSWER, language="ipython3")
    prose = nodes.container(classes=["highlight"])
    prose += nodes.literal_block(ANSWER, ANSWER)       # a code block written in a page
    doctree = nodes.document(None, None)
    doctree += [cell, prose]
    markers.strip_solution_markers(None, doctree)
    shown, written = (c.children[0] for c in (cell, prose))
    assert shown.astext() == "x = None   # the answer\nx = 2 + 2\nx"
    assert shown["language"] == "ipython3" and shown.rawsource == shown.astext()
    assert written.astext() == ANSWER
