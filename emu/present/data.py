"""Published numbers, loaded with their provenance.

Each file ``data/<name>.csv`` holds numbers copied from one of the papers. Every
row says where it comes from, in three columns that must be present and
non-empty on every row:

``source``  the document, e.g. ``Mackerras 2003``
``table``   the table or figure, e.g. ``Table 2``
``page``    the page or section, e.g. ``p.5`` or ``section 2.2``

Numbers are stored as the paper prints them, and parsed exactly (each decimal
text becomes the nearest float, ``float(text)``; nothing is rescaled). Where the
paper prints something that is not a plain number (LMBench's ``23.K``), the file
keeps the verbatim text in a column whose name ends in ``_printed`` and the
reading of it as a number in the column without the suffix. Columns ending in
``_printed`` and the provenance columns are always read as text, so a printed
``795.`` stays ``"795."``.

    >>> from emu import data
    >>> df = data.load("mackerras2003_table2_lmbench")
    >>> data.provenance(df)
    'Source: Mackerras 2003, Table 2, section 2.2.'

See ``data/README.md`` for the convention in full.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pandas as pd

from ..context import book_dir

PROVENANCE_COLUMNS = ("source", "table", "page")
TEXT_SUFFIX = "_printed"

#: The repository's data/ folder (next to the emu/ package; inside it in a wheel).
DATA_DIR = book_dir("data")


def data_dir() -> Path:
    """Folder searched by :func:`load`: ``$EMU_DATA_DIR`` if set, else ``data/``."""
    return Path(os.environ.get("EMU_DATA_DIR", DATA_DIR))


def load(name: str, directory: str | os.PathLike | None = None) -> pd.DataFrame:
    """Return ``<directory>/<name>.csv`` (default: the repository's data/) as a DataFrame.

    Raises ``FileNotFoundError`` if there is no such file and ``ValueError`` if
    the file breaks the provenance convention.
    """
    base = Path(directory) if directory is not None else data_dir()
    path = base / (name if name.endswith(".csv") else f"{name}.csv")
    if not path.is_file():
        available = sorted(p.stem for p in base.glob("*.csv"))
        raise FileNotFoundError(f"no dataset {name!r}: {path} does not exist "
                                f"(available: {', '.join(available) or 'none'})")
    return read_csv(path)


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read and check one CSV file that follows the data/ convention."""
    path = Path(path)
    _check_provenance(path)
    with path.open(newline="", encoding="utf-8") as f:
        header = next(csv.reader(f))
    text_columns = {c: str for c in header
                    if c in PROVENANCE_COLUMNS or c.endswith(TEXT_SUFFIX)}
    # pandas' default float parser rounds correctly (same result as float(text)).
    df = pd.read_csv(path, dtype=text_columns, encoding="utf-8")
    df.attrs["path"] = str(path)
    return df


def _check_provenance(path: Path) -> None:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"{path}: empty file (expected a header with "
                             f"{', '.join(PROVENANCE_COLUMNS)})") from None
        missing = [c for c in PROVENANCE_COLUMNS if c not in header]
        if missing:
            raise ValueError(f"{path}: missing provenance column(s) "
                             f"{', '.join(missing)}; every dataset needs "
                             f"{', '.join(PROVENANCE_COLUMNS)}")
        index = {c: header.index(c) for c in PROVENANCE_COLUMNS}
        rows = 0
        for row in reader:
            if not row:  # blank line
                continue
            rows += 1
            # reader.line_num is the file line of this row (the header is line 1)
            for col, i in index.items():
                if i >= len(row) or not row[i].strip():
                    raise ValueError(f"{path}, line {reader.line_num} (data row {rows}): "
                                     f"empty provenance cell {col!r}")
        if rows == 0:
            raise ValueError(f"{path}: no data rows")


def provenance(df: pd.DataFrame) -> str:
    """A one-line caption naming where the rows of ``df`` come from.

    Distinct (source, table, page) triples are listed in order of appearance,
    e.g. ``'Source: Mackerras 2003, Table 2, section 2.2.'``; rows of one source, table and
    section that each name their seed lines are named together, their lines as ranges
    (``'section 4.5 (seed lines 440-459)'``, not twenty triples).
    """
    missing = [c for c in PROVENANCE_COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"no provenance: column(s) {', '.join(missing)} missing")
    places: dict[tuple, list[int] | None] = {}       # (source, table, page) -> seed lines
    for row in df[list(PROVENANCE_COLUMNS)].itertuples(index=False):
        source, table, page = (str(v) for v in row)
        lines = _SEED_LINES.fullmatch(page)
        if lines is None:
            places.setdefault((source, table, page), None)
            continue
        first, last = int(lines["first"]), int(lines["last"] or lines["first"])
        places.setdefault((source, table, lines["where"]), []).extend(range(first, last + 1))
    named = [", ".join((source, table, page if lines is None else
                        f"{page} ({_seed_line_ranges(lines)})"))
             for (source, table, page), lines in places.items()]
    return "Source: " + "; ".join(named) + "."


# a page cell that ends by naming its seed lines: "section 4.5 (seed line 440)", "... lines 7-13)"
_SEED_LINES = re.compile(r"(?P<where>.*) \(seed lines? (?P<first>\d+)(?:-(?P<last>\d+))?\)")


def _seed_line_ranges(lines: list[int]) -> str:
    """'seed line 14', 'seed lines 440-459', 'seed lines 67-68, 76-80'."""
    numbers = sorted(set(lines))
    spans, start = [], numbers[0]
    for previous, n in zip(numbers, numbers[1:] + [None]):
        if n != previous + 1:
            spans.append(str(start) if start == previous else f"{start}-{previous}")
            start = n
    return ("seed line " if len(numbers) == 1 else "seed lines ") + ", ".join(spans)
