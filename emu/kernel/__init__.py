"""A small Linux kernel model: the generic VM in Python (``vm``), architecture work as
measured guest assembly (backends ``ppc32``: the 32-bit PowerPC hashed MMU, ppc750;
``ppc405``: the 405's software-loaded TLB with its execute bit, ppc405gp; ``ppc603``: the
603's software-loaded TLB, reloaded from a hash table or from the Linux page table,
ppc603e; ``ppc64``: the 64-bit hashed page table of POWER4, whose Linux PTEs record the
HPTE's slot; ``arm``: ARMv7 short descriptors on a Cortex-A9, with Yun 2011's fixes PK1,
PK3, PK4 as an option), I-cache flush policies (``policy``), the fixed costs of the generic
C paths (``costs``), and LMBench-like workloads plus a kernel-compile pattern
(``workloads``; ``profile="ppc405gp"`` picks the 405 backend, ``profile="ppc603e"`` the 603
one with ``reload="pagetable"`` or ``"hash"``, ``profile="power4"`` the 64-bit one,
``profile="cortex-a9"`` the ARM one: ``workloads.lat_proc("fork", profile="cortex-a9",
fixes={"PK1"})``).

>>> from emu.kernel import Kernel, workloads                   # doctest: +SKIP
>>> r = workloads.lat_proc("exec", policy="lazy")              # doctest: +SKIP
>>> r.cycles, r.us, r.counts["pages_flushed"], r.breakdown     # doctest: +SKIP
>>> workloads.kernel_compile(policy="lazy_exec", profile="ppc405gp").summary()  # doctest: +SKIP
"""
from .errors import KernelError, SegmentationFault
from .ledger import Ledger
from .mm import MM, VMA, Process
from .pages import File, Page, PageAllocator, PageCache
from .vm import Kernel

__all__ = ["Kernel", "Ledger", "Page", "PageAllocator", "PageCache", "File", "VMA", "MM",
           "Process", "SegmentationFault", "KernelError"]
