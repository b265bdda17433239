"""The book build, cold and cached: wall seconds of `jupyter-book build` into a fresh output
folder (every notebook executed: the cache is empty) and of a second build into the same
folder (nothing changed: every notebook from jupyter-cache), and each notebook's execution
seconds as jupyter-cache recorded them.

    python benchmarks/book_build.py [--out DIR] [--csv benchmarks/book_build.csv]

Run it on a quiet machine; the README's table comes from it, and with --csv each notebook's
seconds go to the file the teachers' page (book/teachers.md) shows.
"""
from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import build_units

REPO = Path(__file__).resolve().parent.parent


def build(out: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
                    "build", str(REPO), "--path-output", str(out)],
                   cwd=REPO, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def execution_seconds(out: Path) -> dict:
    """Each notebook's execution time, from the build's jupyter-cache."""
    from jupyter_cache import get_cache
    caches = [p for p in (out / "_build" / ".jupyter_cache").iterdir() if p.is_dir()]
    cache = get_cache(str(caches[0]))
    return {str(Path(r.uri).resolve().relative_to(REPO)): r.data.get("execution_seconds", 0.0)
            for r in cache.list_cache_records()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="output folder (default: a temporary one)")
    parser.add_argument("--csv", type=Path, help="write each notebook's seconds to this file "
                        "(the teachers' page reads benchmarks/book_build.csv)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="book-build-"))
    cold = build(out)
    print(f"cold build (every notebook executed): {cold:.0f} s wall", flush=True)
    cached = build(out)
    print(f"cached rebuild (nothing changed): {cached:.0f} s wall", flush=True)
    seconds = execution_seconds(out)
    for name, s in sorted(seconds.items()):
        print(f"  {name}: {s:.1f} s")
    print(f"  all notebooks: {sum(seconds.values()):.0f} s")
    build_units.print_table(build_units.unit_cpu(out / "_build"))
    if args.csv:
        write_csv(args.csv, seconds)


def write_csv(target: Path, seconds: dict):
    """page, execution_s, measured (year-month), source: the file book/teachers.md shows."""
    month = time.strftime("%Y-%m")
    with open(target, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["page", "execution_s", "measured", "source"])
        for name, s in sorted(seconds.items()):
            out.writerow([name, f"{s:.1f}", month, "python benchmarks/book_build.py"])


if __name__ == "__main__":
    main()
