"""A small Linux kernel model: the generic VM in Python (``vm``), architecture work as
measured guest assembly (``ppc32``: the 32-bit PowerPC hashed MMU), I-cache flush policies
(``policy``), the fixed costs of the generic C paths (``costs``), and LMBench-like
workloads (``workloads``).

>>> from emu.kernel import Kernel, workloads                   # doctest: +SKIP
>>> r = workloads.lat_proc("exec", policy="lazy")              # doctest: +SKIP
>>> r.cycles, r.us, r.counts["pages_flushed"], r.breakdown     # doctest: +SKIP
"""
from .vm import (MM, VMA, File, Kernel, KernelError, Ledger, Page, PageAllocator, PageCache,
                 Process, SegmentationFault)

__all__ = ["Kernel", "Ledger", "Page", "PageAllocator", "PageCache", "File", "VMA", "MM",
           "Process", "SegmentationFault", "KernelError"]
