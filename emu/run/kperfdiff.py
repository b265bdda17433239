"""kperfdiff: which symbols to look at first, given two profiles of the same work.

The idea is Yun 2011's (section 3): profile one benchmark on two systems, turn each symbol's
samples into a percentage of its profile's samples, and rank the symbols both profiles share by
how far their percentages differ; list the symbols found in only one profile separately, by
their own percentage (they are often the architecture-specific code). Output has the layout of
that paper's Figures 1 and 2: one section for common symbols (``%diff | symbol | A | B``) and
one per profile for the symbols only it has (``%time | symbol``).

>>> table = diff({"f": 50, "g": 50}, {"f": 10, "h": 90})
>>> print(format(table, names=("arm", "x86")))          # doctest: +SKIP
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .profiler import SampledRun, read_samples

COMMON, ONLY_A, ONLY_B = "common", "only a", "only b"
COLUMNS = ["symbol", "section", "samples_a", "samples_b", "percent_a", "percent_b", "diff"]


def samples_of(profile):
    """{symbol: samples > 0} of a SampledRun, a saved profile file, or a mapping."""
    if isinstance(profile, SampledRun):
        counts = profile.sampled()
    elif isinstance(profile, (str, Path)):
        counts = read_samples(profile)
    elif isinstance(profile, Mapping):
        counts = dict(profile)
    else:
        raise TypeError(f"cannot read samples from a {type(profile).__name__}")
    # a symbol with no samples was not seen by the profiler: it is absent, not common
    counts = {name: int(n) for name, n in counts.items() if n}
    if any(n < 0 for n in counts.values()):
        raise ValueError("sample counts cannot be negative")
    if not counts:
        raise ValueError("a profile without samples has no percentages to compare")
    return counts


def percentages(counts):
    total = sum(counts.values())
    return {name: n * 100.0 / total for name, n in counts.items()}


def diff(a, b):
    """One row per symbol of either profile: its section (common, only a, only b), samples
    and percentage in each, and ``diff`` = |percent_a - percent_b| (for a symbol in one
    profile only, its own percentage). Sections in that order, each by ``diff`` descending."""
    a, b = samples_of(a), samples_of(b)
    pa, pb = percentages(a), percentages(b)
    rows = []
    for name in a.keys() | b.keys():
        section = COMMON if name in a and name in b else ONLY_A if name in a else ONLY_B
        rows.append({"symbol": name, "section": section,
                     "samples_a": a.get(name, 0), "samples_b": b.get(name, 0),
                     "percent_a": pa.get(name, 0.0), "percent_b": pb.get(name, 0.0),
                     "diff": abs(pa.get(name, 0.0) - pb.get(name, 0.0))})
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["order"] = df["section"].map({COMMON: 0, ONLY_A: 1, ONLY_B: 2})
    df = df.sort_values(["order", "diff", "symbol"], ascending=[True, False, True])
    return df.drop(columns="order").reset_index(drop=True)


def format(table, names=("A", "B"), top=5):
    """The text of a diff table: the ``top`` rows of each section (all if top is None)."""
    a, b = names
    sections = [
        (COMMON, "common symbols", f"%diff | symbol | {a} | {b}",
         lambda r: f"{r.diff:.2f} | {r.symbol} | {r.percent_a:.2f} | {r.percent_b:.2f}"),
        (ONLY_A, f"symbols only in {a}", "%time | symbol",
         lambda r: f"{r.percent_a:.2f} | {r.symbol}"),
        (ONLY_B, f"symbols only in {b}", "%time | symbol",
         lambda r: f"{r.percent_b:.2f} | {r.symbol}"),
    ]
    blocks = []
    for section, what, header, line in sections:
        rows = table[table["section"] == section]
        if top is not None:
            rows = rows.head(top)
        lines = [f">> Top {len(rows)} candidates among {what}", header, "-----"]
        lines += [line(r) for r in rows.itertuples()] or ["(none)"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def compare_files(path_a, path_b, top=5):
    """kperfdiff of two saved profiles, named by their file names (the command line's work)."""
    names = (Path(path_a).stem, Path(path_b).stem)
    if names[0] == names[1]:
        names = (str(path_a), str(path_b))
    return format(diff(Path(path_a), Path(path_b)), names=names, top=top)
