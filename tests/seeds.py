"""The papers' text (../shared/seeds, or EMU_SEEDS_DIR), for tests that check published
numbers against the lines their provenance names (the fixture is conftest's seed_lines)."""
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SEEDS = Path(os.environ.get("EMU_SEEDS_DIR", REPO.parent / "shared" / "seeds"))


def line_numbers(page):
    """The seed lines a provenance cell names: 'seed line 18' or 'seed lines 7-13'."""
    m = re.search(r"seed lines? (\d+)(?:-(\d+))?", page)
    assert m, page
    first = int(m.group(1))
    return range(first, int(m.group(2) or first) + 1)
