"""Sphinx extension: the chapters' inline numbers, {eval}`emu.glued('name:format')`, pasted
in the book from myst-nb's glued values.

A chapter's prose writes each number it computes as an inline expression, so that JupyterLab
(jupyterlab-myst) shows the number after Run All, evaluated in the student's kernel, where
myst-nb's {glue:text} roles would show as written. myst-nb's own {eval} role needs a kernel
running while the page is read (execution mode "inline"), which the book's cached execution
has not: so before myst-nb reads a notebook this extension turns each such expression back
into the glue role it stands for, {glue:text}`name:format` (emu.glued_md: {glue:md}), and
the book prints what it printed before. The notebooks themselves are untouched.

Registered in ``_config.yml`` under ``sphinx: local_extensions``.
"""
from __future__ import annotations

import re

# in the notebook's JSON text, as the prose writes it: {eval}`emu.glued('key')`
EXPRESSION = re.compile(r"\{eval\}`emu\.glued(_md)?\('([^'`\\]+)'\)`")


def as_glue_roles(text: str) -> str:
    """``text`` with each glued expression as myst-nb's glue role."""
    return EXPRESSION.sub(lambda m: f"{{glue:{'md' if m[1] else 'text'}}}`{m[2]}`", text)


def paste_glued(app, docname, source):
    """source-read: the expressions of a notebook, before myst-nb parses it (a Markdown page
    has no kernel's values to show, and may quote the expression as code)."""
    if "{eval}" in source[0] and str(app.env.doc2path(docname)).endswith(".ipynb"):
        source[0] = as_glue_roles(source[0])


def setup(app):
    app.connect("source-read", paste_glued)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
