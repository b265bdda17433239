"""Where the library runs: the book's files it reads (its assembly routines and published
data) and whether the book is being built. At the bottom of the layers: it imports nothing
of emu, and every layer may use it."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: set by the book's build (_ext/plotly_offline.py) for the notebooks' kernels
BUILD_ENV_VAR = "EMU_BOOK_BUILD"


def book_dir(name):
    """The book's ``routines`` or ``data`` folder: beside the package in a clone, inside it
    (emu/_book, copied there by setup.py) in an installed wheel."""
    beside = ROOT / name
    return beside if beside.is_dir() else Path(__file__).resolve().parent / "_book" / name


ROUTINES = book_dir("routines")


def routine(name):
    """Path of a routine of the book, e.g. routine("ppc32/flush_dcache_icache.S")."""
    path = ROUTINES / name
    if not path.exists():
        known = ", ".join(str(p.relative_to(ROUTINES)) for p in sorted(ROUTINES.rglob("*.S")))
        raise FileNotFoundError(f"no routine {name!r} (the book has: {known})")
    return path


def building_book() -> bool:
    """True when running inside ``jupyter-book build`` (emu.present.plot says why)."""
    return os.environ.get(BUILD_ENV_VAR, "") not in ("", "0")
