"""emu: run real kernel assembly on Unicorn under an instrumented cache, MMU and cost model.

The library is in layers, each a package that may use only those below it (import-linter
checks it: ``pyproject.toml``, ``tests/test_layers.py``):

=============  ============================================================================
``course``     the chapters as assignments: handing them out, grading them
``book``       what the book's pages share: the explorer widget, the explorers, the
               scorecard
``papers``     each paper's own code: ``mackerras2003``, ``dougan1999``, ``yoshioka2005``,
               ``blanchard2002``, ``yun2011``, independent of each other
``kernel``     a small Linux kernel model whose architecture work is guest assembly
``present``    published numbers and how the book shows them: data, comparisons, claims,
               figures, statistics (beside ``kernel``: neither uses the other)
``run``        running code on the model: the Machine, several cores, exception tables,
               profiling, sweeps
``hw``         the hardware model: caches, the memory system, topology, MMUs and TLBs,
               costs, processor profiles, the native (C) model, faults, the address map
``isa``        assembling and disassembling the four instruction sets
=============  ============================================================================

``emu.context`` (where the book's routines and data are) sits under them all.

What a notebook or a student types is here, at the top, and the same everywhere::

    import emu
    m = emu.Machine("ppc750")
    m.load(emu.routine("ppc32/flush_dcache_icache.S"))
    emu.data.load("mackerras2003_table2"); emu.workloads.lat_proc("fork")
    from emu import Machine, data, plot, glue, workloads, dougan1999

Importing ``emu`` is cheap: each name loads its module when first used.
"""
from __future__ import annotations

import importlib

from .context import ROOT, ROUTINES, book_dir, routine  # noqa: F401 (the surface)

#: short name -> (module, attribute or None for the module itself)
SURFACE = {
    # running code
    "Machine": ("emu.run.machine", "Machine"), "Run": ("emu.run.result", "Run"),
    "GuestError": ("emu.hw.faults", "GuestError"),
    "GuestFault": ("emu.hw.faults", "GuestFault"),
    "PageFault": ("emu.hw.faults", "PageFault"),
    "InstructionLimitExceeded": ("emu.hw.faults", "InstructionLimitExceeded"),
    "StaleInstructionFetch": ("emu.hw.faults", "StaleInstructionFetch"),
    "AssemblyError": ("emu.isa.assemble", "AssemblyError"),
    "assemble": ("emu.isa.assemble", None),
    "load_profile": ("emu.hw.profile", "load"),
    "profile": ("emu.hw.profile", None), "cache": ("emu.hw.cache", None),
    "mmu": ("emu.hw.mmu", None),
    "machine": ("emu.run.machine", None), "parallel": ("emu.run.parallel", None),
    "extable": ("emu.run.extable", None), "profiler": ("emu.run.profiler", None),
    "kperfdiff": ("emu.run.kperfdiff", None), "sweep": ("emu.run.sweep", None),
    # the kernel model
    "kernel": ("emu.kernel", None), "workloads": ("emu.kernel.workloads", None),
    # the book's presentation
    "data": ("emu.present.data", None), "plot": ("emu.present.plot", None),
    "compare": ("emu.present.compare", None), "stats": ("emu.present.stats", None),
    "glue": ("emu.present.compare", "glue"),
    "glued": ("emu.present.compare", "glued"), "glued_md": ("emu.present.compare", "glued_md"), "Comparison": ("emu.present.compare", "Comparison"),
    "claims": ("emu.present.claims", None), "explore": ("emu.book.explore", None),
    # the papers
    "mackerras2003": ("emu.papers.mackerras2003", None),
    "dougan1999": ("emu.papers.dougan1999", None),
    "yoshioka2005": ("emu.papers.yoshioka2005", None),
    "blanchard2002": ("emu.papers.blanchard2002", None),
    "yun2011": ("emu.papers.yun2011", None), "copybench": ("emu.kernel.copybench", None),
    # the book and the course
    "explorers": ("emu.book.explorers", None), "scorecard": ("emu.book.scorecard", None),
    "handout": ("emu.course.handout", None), "grading": ("emu.course.grading", None),
    "check": ("emu.course.check", None),
}
__all__ = ["routine", "book_dir", *SURFACE]


def __getattr__(name):
    if name not in SURFACE:
        raise AttributeError(f"module 'emu' has no attribute {name!r}")
    module, attribute = SURFACE[name]
    value = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value          # loaded once
    return value


def __dir__():
    return sorted(set(globals()) | set(SURFACE))
