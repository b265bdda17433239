"""Sphinx extension: the online book shows reference answers without nbgrader's markers.

A graded exercise's answer cell holds its reference solution between ``### BEGIN SOLUTION``
and ``### END SOLUTION`` (emu.course.handout): nbgrader needs the two lines in the notebook to cut
the solution out of the students' copy. On the web page they are noise, so this extension
drops them from the code shown for each notebook cell, after myst-nb has read the notebook.
The notebooks themselves, their execution and the execution cache are untouched.

Registered in ``_config.yml`` under ``sphinx: local_extensions``.
"""
from __future__ import annotations

import re

from docutils import nodes

# the whole line of a marker, with its line break
MARKER = re.compile(r"^[ \t]*### (?:BEGIN|END) SOLUTION[ \t]*(?:\n|$)", re.M)


def without_markers(code: str) -> str:
    """``code`` without the lines that are nbgrader's solution markers."""
    return MARKER.sub("", code).rstrip("\n")


def _is_cell_input(block: nodes.literal_block) -> bool:
    """True for the code of a notebook cell (myst-nb puts it in a ``cell_input``
    container), not for a code block written in a page's text."""
    parent = block.parent
    return parent is not None and "cell_input" in parent.get("classes", [])


def strip_solution_markers(app, doctree):
    """doctree-read: the markers out of every notebook cell's code."""
    for block in list(doctree.findall(nodes.literal_block)):
        code = block.astext()
        if "SOLUTION" not in code or not _is_cell_input(block):
            continue
        shown = without_markers(code)
        if shown != code:
            block.rawsource = shown
            block.children = []
            block += nodes.Text(shown)


def setup(app):
    app.connect("doctree-read", strip_solution_markers)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
