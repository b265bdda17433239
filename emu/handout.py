"""Hand out a chapter without its solutions.

Exercises in the book's notebooks are sphinx-exercise directives in Markdown cells; each
solution is a ``{solution}`` block (folded in the online book, but plain text in Jupyter). A
teacher who gives students the ``.ipynb`` wants those blocks gone, and the outputs too (the
students run the cells themselves). ``handout`` copies a notebook with:

* every fenced ``{solution}`` block (three or more backticks or colons) removed from the
  Markdown cells, and a Markdown cell left empty by that removed entirely;
* every code cell tagged ``solution`` removed (a solution that is code);
* all outputs and execution counts cleared.

    python -m emu handout notebooks/mackerras2003/01-cache-flushing.ipynb -o lab1.ipynb
"""
from __future__ import annotations

import json
import re
from pathlib import Path

_OPEN = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[a-zA-Z-]+)\}")


def strip_solutions(markdown):
    """``markdown`` without its ``{solution}`` blocks; returns (text, blocks removed)."""
    out, removed, lines, i = [], 0, markdown.split("\n"), 0
    while i < len(lines):
        opened = _OPEN.match(lines[i].strip())
        if opened and opened["name"] == "solution":
            fence = opened["fence"]
            end = i + 1
            while end < len(lines) and lines[end].strip() != fence:
                end += 1
            if end == len(lines):
                raise ValueError(f"a {{solution}} block opened with {fence} on line {i + 1} "
                                 "is never closed")
            i, removed = end + 1, removed + 1
            while out and not out[-1].strip() and i < len(lines) and not lines[i].strip():
                i += 1                      # no double blank line where the block was
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out).strip("\n"), removed


def handout(notebook, target):
    """Write ``notebook`` (a path) to ``target`` without solutions or outputs; returns the
    number of solutions removed."""
    source = Path(notebook)
    try:
        nb = json.loads(source.read_text(encoding="utf-8"))
        cells = nb["cells"]
        if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
            raise TypeError("its cells are not a list of objects")
        for k, cell in enumerate(cells):
            text = cell.get("source", "")
            if not isinstance(text, str) and not (isinstance(text, list) and
                                                  all(isinstance(t, str) for t in text)):
                raise TypeError(f"cell {k}'s source is neither text nor a list of lines")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        why = "nested too deeply" if isinstance(error, RecursionError) else error
        raise ValueError(f"{source}: not a readable notebook ({why})") from None
    kept, removed = [], 0
    for cell in cells:
        text = "".join(cell.get("source", ""))
        if cell.get("cell_type") == "code":
            if "solution" in cell.get("metadata", {}).get("tags", []):
                removed += 1
                continue
            cell["outputs"], cell["execution_count"] = [], None
        elif cell.get("cell_type") == "markdown":
            text, n = strip_solutions(text)
            removed += n
            if n and not text.strip():
                continue
            cell["source"] = text
        kept.append(cell)
    nb["cells"] = kept
    try:
        Path(target).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                                encoding="utf-8")
    except OSError as error:
        raise ValueError(f"{target}: cannot write the handout ({error.strerror})") from None
    return removed
