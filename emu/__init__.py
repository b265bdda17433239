"""emu: run real kernel assembly on Unicorn under an instrumented cache, MMU and cost model.

Modules read like the book's concepts: ``assemble`` (GNU-style source to bytes), ``machine``
(a CPU, its memory, calling a routine), ``cache`` (the cache model), ``cost`` (cycles),
``profile`` (processor profiles), ``data`` (the published numbers), ``plot`` (figures).
Importing ``emu`` itself is cheap; the emulator loads when ``emu.machine`` is first used.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
