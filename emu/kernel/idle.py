"""The idle task clearing free pages (Dougan 1999, section "Idle Task Page Clearing"; issue 19
item 6) on the kernel model's 603 with user programs (emu.kernel.entry).

When no process can run, Linux 2.2.0's idle task (``idled``, arch/ppc/kernel/idle.c) may
clear free pages in advance (``zero_paged``, switched on by the sysctl ``zero-paged``,
default off) and keep them on a list, ``zero_quicklist``, from which a later request for a
zeroed page takes one (``get_zero_page_fast``) instead of clearing it then. The paper tried
three ways and reports (node13 of the USENIX HTML version): pages cleared through the cache
and then used made the kernel compile take nearly twice as long (the clearing evicted the
lines of the processes that ran next); cleared with the cache inhibited and not used, no
change; cleared inhibited and used, much faster.

``IdleTask(entry)`` adds to an ``Entry`` (603, walking the page table) what the idle task
needs, all of it guest code from ``routines/ppc32/idle_22.S`` (2.2.0's zero_paged,
get_zero_page_fast, flush_hash_page, and clear_page = memset):

* **the idle task** (pid 0): a task union whose thread holds its page directory
  (``init_task.mm``'s), which maps a **window** of kernel PTEs: EA = ``WINDOW`` + physical
  address, for all of RAM (present, dirty, writable, not _PAGE_USER, cacheable), in segment
  ``WINDOW >> 28`` with a kernel VSID (Ks = 0). zero_paged clears each page through the
  window, because a page the BATs map cannot be made cache-inhibited by its PTE (a BAT takes
  precedence over the page table), and 2.2.0's BAT2 maps all of RAM: the released source
  clears through the BAT, and its ``pte_uncache`` changes a copy of the PTE anyway. So
  ``uncache=False`` is the released source (through the cache), ``uncache=True`` what the
  paper describes (the PTE gets _PAGE_NO_CACHE, the TLB entry is flushed, the stores bypass
  the cache: emu.hw.softtlb marks a page a cache-inhibited DTLB entry maps, emu.hw.memory sends
  each store to memory on its own). The TLB effects are the same either way:
  flush_tlb_page's ``tlbie`` on a 603 empties both ways of the class in both TLBs;
* **the 603's miss handlers with 2.2.0's access check** (``KERNEL_PTES``: _PAGE_USER only
  from user mode), so that the supervisor may load a kernel PTE; for a user miss two
  instructions more than the default build. Every configuration of an experiment should
  make an IdleTask, used or not, so that they all run the same handlers;
* **2.2.0's clear_page** for the kernel model's own page clearing (``clear_page22``:
  memset, 1024 word stores through the cache; the 603e allocates a line on a store miss, so
  each line is read first), instead of the model's default (2.6's dcbz);
* **the supply of cleared pages** to the kernel model's anonymous page fault
  (``Kernel.prezeroed_pages``, with ``use=True``): the paper's get_free_page() took them.
  In 2.2.0 only page-table pages did (get_pte_slow, get_pgd_slow); the book follows the
  paper.

``run(pages, uncache)`` is one idle period: the kernel model allocates ``pages`` free pages
(__get_free_pages, before the call: the guest takes them one by one) and zero_paged clears
them, up to zero_cache_water's high mark (96 pages on the list); the pages it did not take
go back. The idle period's length is what ``pages`` stands for (2.2.0 stops when
need_resched is set). The switches into and out of the idle task are not run: they are the
same whatever the idle task does. The clearing's own time costs nothing the other tasks
see (idle time), and the model charges an uncached store no bus time: the ppc603e profile
has no [bus] table (a limit for the idle task's own cycles only).
"""
from __future__ import annotations

from ..context import routine
from .entry import TASK_FIELDS
from .pgtable import PAGE_SIZE

WINDOW = 0xD0000000            # the window's EA base: a kernel segment of its own
WINDOW_SEGMENT = WINDOW >> 28
WINDOW_VSID = WINDOW_SEGMENT   # 2.2.0's kernel segments have VSIDs 8-15 (their numbers);
#                                user contexts' VSIDs (ctx_to_vsid) start at 897 * 16
WATER = (25, 96)               # zero_cache_water[2] (idle.c 2.2.0): low and high marks
# IDLE_DATA's words (routines/ppc32/idle_22.S)
ZERO_QUICKLIST, ZERO_CACHE_SZ, ZEROTOTAL, ZEROPAGE_CALLS, ZEROPAGE_HITS, WATER_LOW, \
    WATER_HIGH, IDLE_PGDIR = range(0, 32, 4)


class IdleTask:
    """The 2.2.0 idle task's page clearing on ``entry`` (module notes)."""

    def __init__(self, entry, use=True, water=WATER):
        k, m = entry.kernel, entry.machine
        if entry.kind != "603" or k.arch.reload != "pagetable":
            raise NotImplementedError(
                "the idle task's cache-inhibited clearing is modelled on the 603 walking the "
                "page table: the model sees the 603's TLB entries (and their WIMG bits); "
                "Unicorn's 604 translates through the hash table without a TLB the model "
                "can see")
        if not (isinstance(water, tuple) and len(water) == 2 and 0 <= water[0] <= water[1]):
            raise ValueError(f"water must be (low, high) with 0 <= low <= high, not {water!r}")
        self.entry, self.kernel, self.machine = entry, k, m
        self.data = m.alloc(32, align=32)
        m.load(f".equ IDLE_DATA, {self.data:#x}\n.equ WINDOW, {WINDOW:#x}\n"
               f".equ NEED_RESCHED, {TASK_FIELDS['NEED_RESCHED']:#x}\n" +
               routine("ppc32/idle_22.S").read_text())
        if entry.bats_on:            # (without BATs Entry has loaded this build already)
            m.load(".equ KERNEL_PTES, 1\n" +
                   routine("ppc32/tlbmiss_603_kernel.S").read_text(), at=0x1000)
        self.pgdir = m.alloc(PAGE_SIZE, align=PAGE_SIZE)
        m.write(self.pgdir, bytes(PAGE_SIZE))
        for index, table in entry._kernel_page_tables().items():
            self._word(self.pgdir + 4 * ((WINDOW >> 22) + index), table)
        self.task = entry._task_union(0, None)
        self.thread = self.task + TASK_FIELDS["TSS"]
        self._word(self.thread + TASK_FIELDS["TSS_PGDIR"], self.pgdir)
        m.mmu.set_segment(WINDOW_SEGMENT, WINDOW_VSID, ks=False, kp=True)
        self.water = water
        for offset, value in ((WATER_LOW, water[0]), (WATER_HIGH, water[1]),
                              (IDLE_PGDIR, self.pgdir)):
            self._word(self.data + offset, value)
        self.pages_array = m.alloc(4 * max(water[1], 1), align=32)
        self.cleared = {}                 # page address -> Page, as the guest list holds them
        k.arch.clear_routine = "clear_page22"
        k.prezeroed_pages = self.take if use else None

    def _word(self, address, value):
        self.machine.write(address, (value & 0xFFFFFFFF).to_bytes(4, "big"))

    def word(self, offset):
        """One of the idle task's kernel words (ZERO_CACHE_SZ, ZEROTOTAL, ...)."""
        return self.machine.read_word(self.data + offset)

    def run(self, pages=WATER[1], uncache=True):
        """One idle period: zero_paged over ``pages`` free pages (module notes), through
        the cache or, ``uncache=True``, cache-inhibited. Returns the guest Run."""
        k, m = self.kernel, self.machine
        if not 0 <= pages <= self.water[1]:
            raise ValueError(f"pages must be 0-{self.water[1]} (the high water mark: "
                             f"zero_paged stops there), not {pages}")
        free = [k._alloc_page("idle") for _ in range(pages)]
        for n, page in enumerate(free):
            self._word(self.pages_array + 4 * n, page.address)
        total = self.word(ZEROTOTAL)
        m.mmu.set_spr(_SPRG3, self.thread)        # the miss handlers walk the idle task's pgdir
        try:
            run = m.call("zero_paged22", self.pages_array, pages, int(uncache), self.task)
        finally:
            m.mmu.set_spr(_SPRG3, k.arch.thread)
        k.ledger.guest("zero_paged", run)
        taken = self.word(ZEROTOTAL) - total
        for page in free[:taken]:
            self.cleared[page.address] = page
        for page in free[taken:]:             # __get_free_pages' pages it did not reach
            k._put_page(page)
        k.ledger.count("idle_pages_cleared", taken)
        return run

    def take(self):
        """get_zero_page_fast (guest, in the kernel model's real mode): a cleared page off
        the list, or None."""
        if not self.cleared:
            return None
        address = self.kernel.arch.call("get_zero_page_fast22")
        return self.cleared.pop(address) if address else None


_SPRG3 = 275
