"""The generic Linux VM, modelled in Python: pages, the page cache, VMAs, address spaces,
page faults, copy-on-write, fork, exec, mmap, munmap and exit.

The data structures live where the kernel keeps them when the architecture code reads them:
the page tables are in guest RAM, laid out as the backend's kernel lays them out (``Arch``:
by default PPC32's pgd page of 1024 entries pointing to PTE pages of 1024 four-byte Linux
PTEs; the 64-bit backend's pgd, pmd and PTE pages of 512 eight-byte PTEs), so the guest
``hash_page`` walks them and the guest flush routines scan them. This module speaks one
Linux PTE format, PPC32's bits (below); a backend whose kernel uses other bits translates
when it reads and writes a PTE (``Arch.read_pte`` / ``write_pte``). Page contents are in
guest RAM too (the guest ``clear_page`` and ``copy_page`` work on them). The rest (``struct
page`` fields, VMAs, the page cache index) is Python.

Costs: every architecture routine is guest assembly, measured (see the backend, e.g.
``emu.kernel.ppc32``); every generic C path is a documented fixed cost
(``emu.kernel.costs``). A ``Ledger`` records both, per routine, plus event counts.

What is simplified, and said so: user-space instructions are not run: a process "touches"
a page (``Kernel.touch``), which looks up the Linux PTE, takes the page fault if the PTE
does not allow the access, and otherwise asks the backend whether the hardware would
translate (for the hashed MMU: is there an HPTE?) and runs its miss handler if not. On a
software-loaded TLB (``Arch.tlb_decides``, the 405 and the 603) the order is the
hardware's: the TLB first, the guest miss handler on a miss (it reads the Linux PTE or a
hash table), the fault path when the handler finds no PTE or the entry forbids the
access. Those touches do not go through the cache model, and the hardware table walk of a
user access is not charged. No swap, no readahead, the I/O that fills the page cache is
free (the files LMBench uses stay cached).

Several CPUs (a Kernel on ``Machine(cores=N)``): each CPU runs its own Python, as a task of
``emu.run.parallel.run_tasks``; its guest routines run on its core in simulated time with the
others', the fixed costs of its generic paths pass on its clock, and the ledger, the
current process and the backend's loaded context are per CPU (``cpu()``, ``PerCPU``). The
kernel then takes its spin locks as guest code (routines/<isa>/spinlock.S, after the
era's kernel), where Linux 2.6.0 takes them: ``mm->page_table_lock`` around the page-table
walk of a fault and around setting its PTE (dropped while a page is allocated, cleared,
copied or read), around fork's copy of each VMA (both mms) and around unmapping (the zap
and the TLB flush); a file's ``mapping->page_lock`` around the page-cache lookup and
insertion. Other locks (tasklist_lock, the dcache, the page allocator's zone lock, which
the per-CPU free lists mostly avoid) are not modelled, and their paths stay fixed costs.
The hashed page table's own locks are the backend's guest code (emu.kernel.ppc64: the
HPTE lock bit and the tlbie lock of 2.5/2.6, or 2.4's global hash_table_lock); tlbie
itself is serialised machine-wide by the profile's [smp] list. On the Cortex-A9 the page
lock (lock_page, unlock_page) is guest code too (emu.kernel.arm: Yun 2011's PK2).
Python's own data structures change only between guest calls, one CPU at a time.
``vfork`` starts a child that shares its parent's address space until it execs or exits
(mmput drops the last user's), as GNU make and gcc's driver start theirs.
The Kernel is split along the kernel's own files: this module has its set-up, spin locks,
PTE updates, TLB and hash flushing and mmap/munmap (mm/memory.c, mm/mmap.c); ``fault``
the page faults and user accesses (mm/memory.c's fault paths), ``process`` fork, vfork,
exec, exit and wait (kernel/fork.c, fs/exec.c); the structures they work on are in
``pgtable``, ``pages``, ``mm``, ``ledger``, ``percpu`` and ``arch`` (the backend API).
"""
from __future__ import annotations


from ..run.machine import Machine
from . import policy as policies
from .errors import KernelError
from .fault import PageFaults
from .ledger import Ledger
from .mm import VMA
from .pages import PageAllocator, PageCache
from .percpu import PerCPU
from .pgtable import (PAGE_SHIFT, PAGE_SIZE, PROT, PTE_PFN_MASK, VM_GROWSDOWN, VM_SHARED,
                      _PAGE_ACCESSED, _PAGE_HASHPTE, _PAGE_PRESENT, with_hashpte)
from .ppc32 import PPC32Hash
from .process import Processes


# ------------------------------------------------------------------------ the kernel

# all backends'
TLB_FLUSH_STRATEGIES = ("scan", "immediate", "batched", "tlbia", "asid", "context")


class _Locked:
    """Kernel.locked's context (a class, not a generator: a fault enters several)."""
    __slots__ = ("kernel", "words", "held")

    def __init__(self, kernel, words):
        self.kernel, self.words = kernel, words

    def __enter__(self):
        self.held = self.kernel.smp
        if self.held:
            lock = self.kernel.arch.lock
            for word in self.words:
                lock(word)

    def __exit__(self, kind, error, traceback):
        if self.held:
            unlock = self.kernel.arch.unlock
            for word in reversed(self.words):
                unlock(word)
        return False


class Kernel(PageFaults, Processes):
    """The generic VM on one machine (of one CPU or several), with an architecture backend, an I-cache flush policy
    (``emu.kernel.policy``: eager, lazy, lazy_exec, sync_exec; None: the backend's) and a
    TLB/hash flush strategy:

    * ``scan`` (Linux 2.4-2.5 PPC32): changing a Linux PTE leaves _PAGE_HASHPTE in it;
      flush_tlb_range / flush_tlb_mm scan the Linux PTEs of the range (of every VMA) and
      flush_hash_pages invalidates the HPTEs of those with the bit set;
    * ``immediate``: the HPTE is invalidated when its Linux PTE is changed (the rmap
      information gives mm and address); the flush routines have nothing left to do;
    * ``batched``: the changed (mm, address) pairs are recorded and the flush routines
      invalidate just those (Mackerras 2003 section 4.2);
    * ``tlbia`` (Linux 4xx, include/asm-ppc/tlbflush.h): no hash table and no
      "entry exists" bit in the PTE: flush_tlb_range and flush_tlb_mm empty the whole TLB,
      flush_tlb_page invalidates the one entry (the backend's flush_tlb_all / flush_tlb_page);
    * ``asid`` (ARMv7, arch/arm/include/asm/tlbflush.h): no hash table, TLB entries tagged
      with the address space's ASID: flush_tlb_page and flush_tlb_range invalidate by
      address and ASID, page by page, flush_tlb_mm every entry of the ASID (the backend's
      flush_tlb_page, flush_tlb_range, flush_tlb_mm);
    * ``context`` (Linux 2.1.79-2.2.0 PPC, the 603 backend): flush_tlb_range of more than 20
      pages and flush_tlb_mm give the mm a new context (the old entries can never match
      again and age out); a smaller range, and flush_tlb_page, flush each page (with a hash
      table its search and tlbie, without one its tlbie; the backend's
      flush_range_context and new_context_for);
    * ``search`` (Linux 2.1.51 PPC, the 603 backend with a hash table): flush_tlb_range and
      flush_tlb_page search the hash table for every page of the range, however long
      (the backend's flush_range_search); flush_tlb_mm gives the mm a new context.
    The 1998 strategies (and the 604's 1998 flushes) are kernels without _PAGE_HASHPTE:
    the backends' hash_page there never sets it (Arch.chose_tlb_flush), so the paths below
    that keep or test it (set_pte, the zap, fork's copy) never find it set.
    flush_tlb_page (one page, e.g. after a copy-on-write) flushes that page in every strategy.
    ``tlb_flush=None`` takes the backend's default (its first strategy).
    """

    current = PerCPU()          # the process each CPU runs
    gathered = PerCPU(list)     # (mm, address) of zapped PTEs this CPU's mmu_gather holds

    def __init__(self, machine=None, policy=None, tlb_flush=None, arch=None, frames=4096,
                 cost_table_override=None, layout=0, timing=0, **arch_options):
        if machine is None:
            machine = Machine("ppc750")
        self.machine = machine
        self.ledger = Ledger(cost_table_override)
        if arch is None:
            arch = PPC32Hash
        self.arch = arch(machine, self.ledger, **arch_options) if isinstance(arch, type) \
            else arch
        self.policy = policies.get(policy or self.arch.default_policy)
        if self.policy.needs_exec_permission and not self.arch.has_exec_permission:
            self.policy_note = (f"{self.policy.name} needs a per-page execute permission that "
                                f"{self.arch.name} hardware lacks: the model enforces it in "
                                "its user accesses (a what-if)")
        else:
            self.policy_note = ""
        supported = self.arch.tlb_flush_strategies
        tlb_flush = supported[0] if tlb_flush is None else tlb_flush
        if tlb_flush not in supported:
            raise ValueError(f"tlb_flush must be one of {supported} on {self.arch.name}, "
                             f"not {tlb_flush!r}")
        self.tlb_flush = tlb_flush
        self.arch.chose_tlb_flush(tlb_flush)
        self.batch = []                     # (mm, address) waiting for a flush (batched)
        # several CPUs: the kernel's spin locks are guest code (emu.kernel docstring)
        self.smp = len(machine.cpus) > 1
        self._lock_words = []
        self._page_locks = {}               # File -> its mapping's page lock
        if self.smp:
            self.arch.load_spin_locks()
        self.layout = layout                # emu.kernel.layout: free list and copies' starts
        self.timing = timing                # emu.kernel.layout: a nudge of the copies' starts
        self.allocator = PageAllocator(machine, frames, layout)
        self.page_cache = PageCache()
        self.zero_page = self.allocator.alloc("zero")
        self.zero_page.reserved = True
        self.arch.clear_page(self.zero_page.address)
        self.processes = []
        self.next_pid = 1
        self.current = None
        # 2.2.0's schedule(), wake_up and the sleeps of fork, exit and wait as guest code
        # (emu.kernel.sched22); None: the fixed costs (context_switch, fork, exit, wait)
        self.scheduler = None
        self.prezeroed_pages = None          # a supply of cleared pages (emu.kernel.idle)
        # a program's own work between its faults: called with the pages of each run of
        # touches exec makes (a scheduled build's user time; None: no user time there)
        self.user_work = None
        self.ledger.rows.clear()             # boot is not part of any measurement
        self.ledger.counts.clear()
        self.ledger.traffic.clear()

    # ------------------------------------------------------------ spin locks (SMP)

    LOCK_SPACING = 128                  # each lock word on a line of its own (the largest
    #                                     line of the modelled CPUs: no false sharing)

    def lock_word(self):
        """A new spin lock's word in guest RAM (0 on one CPU: a uniprocessor kernel has no
        spin locks)."""
        if not self.smp:
            return 0
        if not self._lock_words:
            base = self.machine.alloc(PAGE_SIZE)
            self._lock_words = list(range(base, base + PAGE_SIZE, self.LOCK_SPACING))
        return self._lock_words.pop(0)

    def page_lock(self, file):
        """The page-cache lock of a file's mapping (2.6.0's mapping->page_lock)."""
        if file not in self._page_locks:
            self._page_locks[file] = self.lock_word()
        return self._page_locks[file]

    def locked(self, *words):
        """Hold the spin locks ``words`` (taken in order, released in reverse) around the
        block: guest spin_lock / spin_unlock on this CPU; nothing on one CPU."""
        return _Locked(self, words)

    # ------------------------------------------------------------ small helpers

    def _alloc_page(self, kind):
        self.ledger.fixed("alloc_page")
        self.ledger.count("pages_allocated")
        return self.allocator.alloc(kind)

    def _put_page(self, page):
        """put_page: drop a reference; free the frame on the last one."""
        if page.reserved:
            return
        page.count -= 1
        if page.count < 0:
            raise KernelError(f"page {page.pfn:#x}: reference count below zero")
        if page.count == 0:
            self.ledger.fixed("free_page")
            self.ledger.count("pages_freed")
            self.allocator.free(page)

    def _alloc_table_page(self, what):
        """A page-table page (pgd or PTE page): allocated and zeroed with clear_page."""
        page = self._alloc_page("pgtable")
        self.arch.clear_page(page.address)
        self.ledger.fixed(what)
        self.arch.new_table(page, what)
        return page

    def _page_of(self, pte):
        pfn = (pte & PTE_PFN_MASK) >> PAGE_SHIFT
        if pfn == self.zero_page.pfn:
            return self.zero_page
        return self.allocator.page(pfn)

    def _write_pte(self, ptep, value):
        self.arch.kernel_reference(ptep, True)       # the C path's store to the PTE page
        self.arch.write_pte(ptep, value)

    def _read_pte(self, ptep):
        self.arch.kernel_reference(ptep, False)      # and its load
        return self.arch.read_pte(ptep)

    def _set_pte(self, mm, address, ptep, value):
        """set_pte: store a new Linux PTE (``with_hashpte``); if the old PTE had an HPTE,
        the flush strategy is told (``_replaced``)."""
        old = self._read_pte(ptep)
        self._write_pte(ptep, with_hashpte(old, value))
        self._replaced(mm, address, old)

    def _replaced(self, mm, address, old):
        """A PTE that was ``old`` has been set anew: if it had _PAGE_HASHPTE, its HPTE may
        still exist, and the flush strategy is told."""
        if old & _PAGE_HASHPTE:
            self._pte_changed(mm, address)

    def _pte_alloc(self, mm, address):
        """pte_alloc_map (and, on a three-level tree, pmd_alloc): the PTE address,
        allocating (and zeroing) the missing table pages on the way down."""
        ptep = mm.ptep(address)
        if ptep is None:
            levels = self.arch.table_levels
            table = mm.pgd.address
            for depth in range(len(levels)):
                slot = self.arch.dir_slot(depth, table, address)
                entry = self.machine.read_word(slot)
                if not entry:
                    last = depth == len(levels) - 1
                    page = self._alloc_table_page("pte_alloc" if last else "pmd_alloc")
                    self.arch.populate(depth, slot, page.address)
                    entry = self.machine.read_word(slot)
                table = self.arch.dir_table(depth, entry)
            ptep = mm.ptep(address)
        return ptep

    def _kernel_wrote(self, page):
        """flush_dcache_page: the kernel changed the page's contents."""
        self.policy.kernel_wrote(self, page)

    def flush_icache_page(self, page, why):
        """Run flush_dcache_icache on a page and count it."""
        self.arch.flush_dcache_icache(page.address)
        self.ledger.count("pages_flushed")
        self.ledger.count(f"flushed:{why}")

    def switch_to(self, process):
        """The CPU to ``process``: the scheduler's switch when a guest one is attached
        (``scheduler``, emu.kernel.sched22), else the fixed cost and switch_mm."""
        if self.current is not process and self.scheduler is not None:
            self.scheduler.switch(self.current, process)
        elif self.current is not process:
            self.ledger.fixed("context_switch")
            self.arch.switch_mm(process.mm)
            self.current = process

    # ------------------------------------------------------------ TLB / hash flushing

    def _pte_changed(self, mm, address):
        """A Linux PTE with _PAGE_HASHPTE was changed or cleared."""
        if self.tlb_flush == "immediate":
            self._flush_one(mm, address)
        elif self.tlb_flush == "batched":
            self.ledger.fixed("batch_entry")
            self.batch.append((mm, address))

    def _flush_one(self, mm, address):
        table = mm.pte_page(address)
        if table:
            self.arch.flush_ptes(mm, address, table, 1)

    def _flush_batch(self, mm):
        mine = [address for owner, address in self.batch if owner is mm]
        self.batch = [entry for entry in self.batch if entry[0] is not mm]
        if mine:
            self.arch.flush_pending(mm, mine)

    def flush_tlb_page(self, mm, address):
        if self.tlb_flush == "scan" and self.arch.flushes_as_1998:
            # the 604's 1998 kernels (no _PAGE_HASHPTE): flush_hash_page's search of the
            # page's two PTE groups (2.2.0 arch/ppc/mm/init.c local_flush_tlb_page)
            self.arch.flush_range(mm, address, address + PAGE_SIZE)
        elif self.tlb_flush == "scan":
            self._flush_one(mm, address)
        elif self.tlb_flush == "batched":
            self._flush_batch(mm)
        elif self.tlb_flush == "context":    # 2.2.0: flush_hash_page of the one page
            self.arch.flush_range_context(mm, address, address + PAGE_SIZE)
        elif self.tlb_flush == "search":     # 2.1.51: flush_hash_page, its search
            self.arch.flush_range_search(mm, address, address + PAGE_SIZE)
        elif self.tlb_flush in ("tlbia", "asid"):
            self.arch.flush_tlb_page(mm, address)

    def flush_tlb_range(self, mm, start, end):
        """flush_range (arch/ppc/mm/tlb.c): one flush_hash_pages per PTE page of the range."""
        if self.tlb_flush == "context":     # 2.1.79-2.2.0: a new context above 20 pages
            self.arch.flush_range_context(mm, start, end)
            return
        if self.tlb_flush == "search":      # 2.1.51: every page of the range searched
            self.arch.flush_range_search(mm, start, end)
            return
        if self.tlb_flush == "tlbia":
            self.arch.flush_tlb_all()
            return
        if self.tlb_flush == "asid":
            self.arch.flush_tlb_range(mm, start, end)
            return
        if self.tlb_flush == "batched":
            self._flush_batch(mm)
            return
        if self.tlb_flush == "immediate":
            return
        if self.arch.walks_flush_ranges:
            self.arch.flush_range(mm, start, end)
            return
        span = self.arch.pte_page_shift
        address = start & ~(PAGE_SIZE - 1)
        while address < end:
            pmd_end = min(((address >> span) + 1) << span, end)
            table = mm.pte_page(address)
            self.ledger.fixed("flush_range_pmd")
            if table:
                count = (pmd_end - address + PAGE_SIZE - 1) >> PAGE_SHIFT
                self.arch.flush_ptes(mm, address, table, count)
            address = pmd_end

    def flush_tlb_mm(self, mm):
        """flush_tlb_mm: flush_range over every VMA (4xx: one tlbia; ARMv7: by ASID;
        2.2.0's 603: a new context)."""
        if self._flushes_as_1998:           # 2.1.51's and 2.2.0's: a new context
            self.arch.new_context_for(mm)
            return
        if self.tlb_flush == "tlbia":
            self.arch.flush_tlb_all()
            return
        if self.tlb_flush == "asid":
            self.arch.flush_tlb_mm(mm)
            return
        if self.tlb_flush == "batched":
            self._flush_batch(mm)
            return
        for vma in list(mm.vmas):
            self.flush_tlb_range(mm, vma.start, vma.end)

    # ------------------------------------------------------------ update_mmu_cache

    def update_mmu_cache(self, mm, vma, address, ptep):
        """After a fault installs a PTE: the I-cache policy, then the hash preload for a
        young PTE (arch/ppc/mm/init.c)."""
        pte = self._read_pte(ptep)
        page = self._page_of(pte)
        new = self.policy.update_mmu_cache(self, vma, page, pte)
        if new != pte:
            self._write_pte(ptep, new)
        if new & _PAGE_ACCESSED:           # the PTE page: ``ptep`` less its offset (MM.ptep)
            self.arch.preload(mm, address, ptep - self.arch.pte_offset(address))

    # ------------------------------------------------------------ mmap / munmap

    def mmap(self, process, length, prot="rw", shared=False, file=None, offset=0,
             address=None, name="", growsdown=False):
        """do_mmap: a new VMA (no pages are mapped until touched). Returns its address."""
        if length <= 0:
            raise KernelError("mmap needs a positive length")
        if offset % PAGE_SIZE:
            raise KernelError(f"mmap offset {offset:#x} is not page aligned")
        length = -(-length // PAGE_SIZE) * PAGE_SIZE
        mm = process.mm
        if address is None:
            address = mm.get_unmapped_area(length)
        elif address % PAGE_SIZE:
            raise KernelError(f"mmap address {address:#x} is not page aligned")
        flags = sum(PROT[ch] for ch in set(prot)) | (VM_SHARED if shared else 0) | \
            (VM_GROWSDOWN if growsdown else 0)
        self.ledger.fixed("vma_setup")
        mm.insert_vma(VMA(address, address + length, flags, file, offset >> PAGE_SHIFT,
                          name or (file.name if file else "anon")))
        return address

    def _present_ptes(self, mm, start, end):
        """(address, ptep, pte) of each present Linux PTE of ``mm`` in [start, end), in
        order, skipping the spans that have no PTE page: the walk zap_page_range and
        copy_page_range share. Each PTE is read when the walk reaches it."""
        span, step = self.arch.pte_page_shift, self.arch.pte_bytes
        address = start
        while address < end:
            stop = min(end, ((address >> span) + 1) << span)
            ptep = mm.ptep(address)         # one walk per PTE page (its PTEs follow)
            if ptep is None:
                address = stop
                continue
            while address < stop:
                pte = self._read_pte(ptep)
                if pte & _PAGE_PRESENT:
                    yield address, ptep, pte
                address += PAGE_SIZE
                ptep += step

    def _pte_tables(self, mm, start, end):
        """(lo, hi, entries) for each PTE page of ``mm`` that [start, end) reaches, in order:
        [lo, hi) its part of the range, ``entries`` (address, ptep, pte, page) of its present
        PTEs (zap_page_range's walk down to zap_pte_range, which runs once per PTE page)."""
        span = self.arch.pte_page_shift
        lo = start
        while lo < end:
            hi = min(end, ((lo >> span) + 1) << span)
            if mm.ptep(lo) is not None:
                entries = [(address, ptep, pte, self._page_of(pte))
                           for address, ptep, pte in self._present_ptes(mm, lo, hi)]
                yield lo, hi, entries
            lo = hi

    def _zap_range(self, mm, vma, start, end, released, fullmm=False):
        """zap_page_range: clear the present PTEs (keeping _PAGE_HASHPTE), drop the
        mappings; pages are released after the TLB flush (``released``). The backend runs
        each PTE page's zap_pte_range (Arch.zap_ptes), calling ``_zap_cleared`` for each
        present PTE."""
        self.arch.zap_start(self, mm, vma, fullmm)
        for lo, hi, entries in self._pte_tables(mm, start, end):
            self.arch.zap_ptes(self, mm, vma, lo, hi, entries, released)

    def _zap_cleared(self, mm, address, ptep, pte, page, released, cleared=False):
        """The generic VM's part of zapping one present PTE after the backend's: clear it
        (unless the backend's guest code has: ``cleared``), its HPTE, the mapping."""
        if not cleared:
            self._write_pte(ptep, pte & _PAGE_HASHPTE)
        if pte & _PAGE_HASHPTE:
            self._zapped_hashpte(mm, address)
        if not page.reserved:
            page.mapcount -= 1
            released.append(page)

    @property
    def _flushes_as_1998(self):
        """Linux 2.1.51-2.2.0 PPC's flushes (``context``, ``search``, or a backend that
        walks them itself: Arch.flushes_as_1998): flush_tlb_mm a new context, exit_mmap a
        flush_tlb_range per VMA."""
        return self.tlb_flush in ("context", "search") or self.arch.flushes_as_1998

    @property
    def _zap_flush(self):
        """What the scan kernel does with a zapped PTE's HPTE (Arch.zap_flush); the other
        strategies handle it as any changed PTE (None)."""
        return self.arch.zap_flush if self.tlb_flush == "scan" else None

    def _zapped_hashpte(self, mm, address):
        """tlb_remove_tlb_entry of a PTE with _PAGE_HASHPTE. Under the scan strategy, a
        backend whose kernel gathers unmaps (mmu_gather, 2.5 on) acts at once: 32-bit,
        flush_hash_entry (include/asm-ppc/tlb.h, 2.5: the HPTE searched and invalidated,
        one PTE); 64-bit (2.6.0 include/asm-ppc64/tlb.h) the PTE goes into this CPU's
        ppc64_tlb_batch, flushed by flush_hash_range when full and at tlb_flush. The other
        strategies treat it as any changed PTE."""
        zap = self._zap_flush
        if zap == "entry":
            self._flush_one(mm, address)
        elif zap == "gather":
            self.ledger.fixed("batch_entry")
            self.gathered.append((mm, address))
        else:
            self._pte_changed(mm, address)

    def _unmap_flush(self, mm, start=None, end=None):
        """The TLB flush at the end of an unmap (tlb_finish_mmu; a range, or the whole mm
        at exit). With the scan strategy a gathering kernel has flushed each HPTE as it
        zapped it (or gathered it, flushed here: tlb_flush); an older one (2.4's
        zap_page_range, and the software-loaded TLBs) flushes the range or the mm."""
        zap = self._zap_flush
        if zap == "gather":
            mine = [address for owner, address in self.gathered if owner is mm]
            self.gathered = [entry for entry in self.gathered if entry[0] is not mm]
            if mine:
                self.arch.flush_pending(mm, mine)
        elif zap == "entry":
            pass                            # tlb_flush: nothing left on a hashed MMU
        elif start is None and self._flushes_as_1998:     # exit_mmap's zap_page_range
            for vma in list(mm.vmas):
                self.flush_tlb_range(mm, vma.start, vma.end)
        elif start is None:
            self.flush_tlb_mm(mm)
        else:
            self.flush_tlb_range(mm, start, end)

    def munmap(self, process, address, length):
        """do_munmap of whole VMAs or parts of them; the range must be mapped."""
        if address % PAGE_SIZE or length <= 0:
            raise KernelError(f"munmap({address:#x}, {length:#x}): bad address or length")
        end = address + (-(-length // PAGE_SIZE) * PAGE_SIZE)
        mm = process.mm
        page = address
        while page < end:
            if mm.find_vma(page) is None:
                raise KernelError(f"munmap({address:#x}, {length:#x}): {page:#x} is not "
                                  "mapped")
            page += PAGE_SIZE
        self.switch_to(process)
        released = []
        for vma in [v for v in mm.vmas if v.start < end and address < v.end]:
            lo, hi = max(vma.start, address), min(vma.end, end)
            self.ledger.fixed("vma_setup")
            with self.locked(mm.page_table_lock):    # unmap_region
                self._zap_range(mm, vma, lo, hi, released)
                self._unmap_flush(mm, lo, hi)
            mm.vmas.remove(vma)
            if vma.start < lo:                  # __split_vma: anon_vma_clone
                mm.insert_vma(VMA(vma.start, lo, vma.flags, vma.file, vma.pgoff, vma.name,
                                  anon_vma=vma.anon_vma))
            if hi < vma.end:
                mm.insert_vma(VMA(hi, vma.end, vma.flags, vma.file,
                                  vma.pgoff + ((hi - vma.start) >> PAGE_SHIFT), vma.name,
                                  anon_vma=vma.anon_vma))
        for page in released:
            self._put_page(page)
