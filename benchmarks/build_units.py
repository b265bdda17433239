"""Where a book build's CPU goes: the units (emu.run.reuse) its notebooks ran, from the
shared runs it kept (``_build/.shared_runs``), each unit function's CPU seconds and runs
with the estimates as they are ("nominal": the chapters' and the scorecard's own runs) and
with some moved (the scorecard's ranges). A unit's CPU is its own, without the units it
called; the work outside units (imports, plotting, Sphinx) is not in it.

    python benchmarks/build_units.py [BUILD_FOLDER]     # default: ./_build

`benchmarks/book_build.py` prints the same table after its cold build.
"""
from __future__ import annotations

import argparse
import collections
import pickle
from pathlib import Path

#: a kept run's estimate value when it was not moved, or read only in set-up (emu.run.reuse)
UNMOVED = ("as it is", "set-up only")


def unit_cpu(build: Path) -> dict:
    """{unit name: [nominal CPU s, moved CPU s, nominal runs, moved runs]} of the shared runs
    under ``build`` (a build's ``_build`` folder, or the shared runs' folder itself)."""
    folder = build / ".shared_runs" if (build / ".shared_runs").is_dir() else build
    out = collections.defaultdict(lambda: [0.0, 0.0, 0, 0])
    for path in folder.rglob("*.pickle"):
        with open(path, "rb") as f:
            entry = pickle.load(f)
        reads, cpu, name = entry[0], entry[2], entry[4] if len(entry) > 4 else "(unnamed)"
        moved = any(v not in UNMOVED for v in reads.values())
        row = out[name]
        row[int(moved)] += cpu
        row[2 + int(moved)] += 1
    return dict(out)


def print_table(units: dict, top: int = 25):
    total = [sum(v[i] for v in units.values()) for i in range(4)]
    print(f"units' CPU: {total[0] + total[1]:.0f} s ({total[0]:.0f} nominal in {total[2]} runs,"
          f" {total[1]:.0f} moved in {total[3]} runs)")
    print(f"  {'nominal s':>9} {'moved s':>8} {'runs':>6}  unit")
    for name, (nominal, moved, n, m) in sorted(units.items(),
                                                key=lambda kv: -(kv[1][0] + kv[1][1]))[:top]:
        print(f"  {nominal:9.1f} {moved:8.1f} {n + m:6d}  {name}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", type=Path, default=Path("_build"),
                        help="the build's _build folder (default ./_build)")
    args = parser.parse_args()
    print_table(unit_cpu(args.build))


if __name__ == "__main__":
    main()
