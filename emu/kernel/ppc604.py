"""The PowerPC 604 backend of Dougan 1999: the hashed page table searched by hardware, with the
604's own TLBs in front of it, and the three ways a kernel of the time flushed a range.

``PPC32Hash`` (emu.kernel.ppc32) asks only "is there an HPTE?": it has no TLB, so a TLB miss
that the hardware resolves from the hash table costs nothing there. This backend adds what
the 604 does (IBM PowerPC 604 RISC Microprocessor User's Manual, ch. 5):

* **TLBs**: an ITLB and a DTLB of the profile's size (ppc604: 128 entries, 2-way, LRU; UM
  p. 5-3), indexed by EA bits 14-19 (64 congruence classes; UM Figure 5-7), each entry
  tagged by the VSID and the page (the segment registers are loaded per process and nothing
  is flushed on a switch). A hit costs nothing; a store through an entry with PP = 3 (a
  clean page: hash_page makes it read-only until the first store) is a DSI, handled by
  ``hash_page`` as Linux's DataAccess path does (``storage_interrupt``).
* **The hardware table search** on a TLB miss (UM 5.4.5, Figures 5-9 and 5-10): the PTEs of
  the primary group, then of the secondary group, fetched one after the other and compared.
  The model reads them through the L1 D cache model (``emu.hw.mmu.walk_hashed32``: the stall of
  each miss) and charges each PTE fetch the L1 D's load-to-use latency from the profile
  (``hit_latency``, 2 cycles on the 604), one after the other, plus the profile's
  ``[tlb] walk_cycles`` (0: no figure for the search's own sequencing was found; the paper's
  "up to 120 cycles" is a measurement the model is compared with, not an input). So a hit in
  slot k of the primary group costs 2 (k + 1) cycles plus stalls, and a search of both
  groups that finds nothing 32 plus stalls. Not modelled: the R and C updates the hardware
  makes to the PTE (Linux's HPTEs are made with R set, and C with a writable dirty page),
  speculative accesses (the search waits until an access is in order).
* **A hash-table miss** is an ISI/DSI, run as guest code from the exception to hash_page's
  return (``_hash_page``): 2.2.0's DataAccess / InstructionAccess prologue and hash_page
  (routines/ppc32/hash_miss_604.S, from exception_22.S's macros: the instructions
  entry_22.S runs for the 604 under emu.kernel.entry, 2.1.51's under ``flush="search"``,
  2.2.0's with 2.4's _PAGE_HASHPTE under ``"hashpte"``), in one run charged to the ledger
  row ``hash_page`` (``hash_page_dsi`` for a store to a clean page), with no fixed cost.
  The model sets what the CPU would hold: SRR0 the halt address (the ``rfi`` back to the
  access ends the run), SRR1 with MSR[PR] (a user access), DAR and DSISR (for the ISI the
  fetched address in DAR: hash_miss_604.S), SPRG2 the frame and SPRG3 the backend's thread
  block (``ppc603.user_task_words``), and the address's segment register. The access is then
  retried: a second TLB miss, whose search finds the new HPTE. If the Linux PTE does not
  allow the access, hash_page returns, the run ends where 2.2.0 goes on to do_page_fault,
  and the kernel model's fault path follows. The CPU's own exception entry (its cycles
  before the vector's first instruction) is not charged, as in emu.kernel.entry's runs.

The 1998 modes (``flush="search"``, ``"context"``: Linux 2.1.51 and 2.2.0) have no
_PAGE_HASHPTE (2.2.0's include/asm-ppc/pgtable.h: its software bits end at _PAGE_HWWRITE
0x200), so nothing in them reads or sets it: their hash_page (hash_page_user22 without
HASHPTE_24, 2.2.0 head.S) searches the PTE groups for the old HPTE only on a protection
violation, the DSI of ``storage_interrupt``; update_mmu_cache preloads nothing (an empty
macro in both kernels), so after do_page_fault the retried access takes the hash miss; flush_tlb_page is
flush_hash_page's search of the page (one page of ``flush_range``, 2.2.0 arch/ppc/mm/init.c
local_flush_tlb_page); 2.4's ``flush_ptes`` (flush_hash_pages, which skips a PTE without the
bit) refuses to run.

These Python TLBs serve the backend's own (Python-driven) accesses: ``Kernel.touch``,
the mmap and fork workloads. Guest code run by ``emu.kernel.entry`` goes through the native
model of the same TLBs and search (emu.hw.tlb604), which ``_tlbie`` invalidates too; its
hash-table misses on user pages take the DSI / ISI into 2.2.0's prologue and hash_page as
guest code (routines/ppc32/entry_22.S, hash_page_user22), with no fixed cost, and only a
miss hash_page cannot resolve comes to the kernel model's do_page_fault.

**Without BATs** (``bats=False``, 2.2's ``nobats``: mapin_ram puts every page of RAM in the
kernel's page table, 2.2.0 arch/ppc/mm/init.c 806-885) the kernel's routines run translated
(MSR_KERNEL) through the native model's TLBs, which the backend creates (no BAT) and whose
entries the Python-driven user accesses share (``NativeTLBView``: one ITLB and one DTLB for
kernel and user, as on the hardware); a kernel page with no HPTE is a DSI / ISI, delivered by
the backend as the CPU does into 2.2.0's hash_page for the kernel (routines/ppc32/
nobats_hash_22.S, in real mode, back to the access), and so is a miss of the kernel model's
C paths' PTE loads and stores (``kernel_reference``: the DSI run from the vector to
hash_page's rfi, no fixed cost). Both are delivered with SPRG2 = 0, as in the kernel
(transfer_to_handler's, 2.2.0 head.S 1153): a user hash miss's run leaves SPRG2 at the
user's frame, as 2.2.0's return to user mode does. The hash-table code runs in real mode as
on the hardware (``REAL_MODE_ROUTINES``). The kernel's misses are counted once per access
(``kernel_tlb_misses``), its hash-table misses too (``kernel_htab_misses``). The kernel's
text is read only, as mapin_ram maps it (_PAGE_USER and no _PAGE_RW: create_hpte's PP 3,
``ppc603.KERNEL_TEXT_PTE_BITS``): a kernel store to it is refused (a protection fault on an
HPTE, or hash_page's refusal without one) and stops the run with an error.

``tlbie`` (in the guest flush routines) invalidates both ways of the page's congruence class
in both TLBs, as the 603 does (an assumption for the 604: its manual's text on this was not
checked); the model applies it after each flush routine to the pages the routine tlbie-d.

The flush of a range (``flush``), the subject of the paper's "80 times" (node11):

* ``"hashpte"`` (default): the later kernel's scan (Linux 2.4 ``flush_hash_pages``): only the
  Linux PTEs with _PAGE_HASHPTE are searched for, so a page that never had an HPTE costs a
  load of its PTE. The "look only where entries can be" of the paper.
* ``"search"``: Linux 2.1.51-2.1.78 (and 2.1.34's C version): flush_tlb_range calls
  flush_hash_page for **every page** of the range, which searches both PTE groups whether or
  not the page ever had an HPTE (routines/ppc32/flush_hash_search.S).
* ``"context"``: Linux 2.1.79-2.2.0: a range of more than ``CONTEXT_FLUSH_PAGES`` (20) pages
  is flushed by flush_tlb_mm, which gives the mm a new context (new VSIDs: the old HPTEs and
  TLB entries can never match again and stay behind as "zombies"), loaded with set_context
  if the mm is the running one; smaller ranges are searched page by page as in ``search``.

In all three the flush runs once per unmapped range, after the zap (2.2's and 2.4's
zap_page_range then flush_tlb_range; ``hashpte`` is the generic VM's ``scan`` strategy, one
flush_hash_pages per PTE page of the range), not per zapped PTE as in PPC32Hash (2.5).
"""
from __future__ import annotations

from unicorn import ppc_const

from ..hw import mmu
from ..context import routine
from ..hw.layout import HALT
from ..hw.softtlb import DAR, DSISR, MSR_PR, SPRG2, SPRG3, SRR0, SRR1, CpuRegisters
from ..hw.tlb604 import T6_CLOCK, T6_ENTRIES, T6_ENTRY_WORDS, T6_FAULT_NO_HPTE, TLB604Model
from .ppc603 import (DSISR_PROTECTION, DSISR_STORE, THREAD_PGDIR, USER_HASH_KERNELS,
                     kernel_page_tables, load_user_hash, user_task_words)
from .ppc32 import (CONTEXT_FLUSH_PAGES, HPTE_STATUS, PPC32Hash, ctx_to_vsid,
                    hash_low_prelude)
from .errors import KernelError
from .pgtable import _PAGE_HASHPTE, PAGE_SHIFT, PAGE_SIZE, TASK_SIZE

FLUSHES = ("hashpte", "search", "context")
CLASS_SHIFT = 12                  # EA bits 14-19 (IBM numbering) select the class
MSR_ME, MSR_KERNEL = 0x1000, 0x1032           # 2.2.0's MSR_KERNEL: ME | IR | DR | RI
#: without BATs, the routines that run in real mode on the hardware too (the hash-table
#: code: head.S's hash_page with MSR_DR off, 2.4's hash_low.S); every other one translates
REAL_MODE_ROUTINES = frozenset({"hash_page", "add_hash_page",
                                "flush_hash_pages", "create_hpte"})
KERNEL_SEGMENT = 0x20000000        # segment 0 without BATs: Ks = 0, Kp = 1, VSID 0
USER_SEGMENT = 0x60000000          # Ks = Kp = 1
#: the "no HPTE found" bit of DSISR (a DSI) and of SRR1 (an ISI): head.S's andis. 0x4000
NO_HPTE = 0x40000000


class TLB604:
    """One of the 604's TLBs: ``entries`` in ``ways`` ways, LRU within a congruence class,
    entries tagged by (VSID, effective page)."""

    def __init__(self, entries, ways):
        self.ways = ways
        self.classes = entries // ways
        self.sets = [[None] * ways for _ in range(self.classes)]
        self.order = [list(range(ways)) for _ in range(self.classes)]    # LRU first

    def index(self, address):
        return (address >> CLASS_SHIFT) & (self.classes - 1)

    def find(self, vsid, address):
        """(way, HPTE word 1) of the entry for the page, or None."""
        s = self.index(address)
        tag = (vsid, address >> PAGE_SHIFT)
        for way, entry in enumerate(self.sets[s]):
            if entry is not None and entry[0] == tag:
                return way, entry[1]
        return None

    def use(self, address, way):
        order = self.order[self.index(address)]
        order.remove(way)
        order.append(way)

    def load(self, vsid, address, word1):
        """The search's result goes into an invalid way, else the least recently used."""
        s = self.index(address)
        ways = self.sets[s]
        way = ways.index(None) if None in ways else self.order[s][0]
        ways[way] = ((vsid, address >> PAGE_SHIFT), word1)
        self.use(address, way)
        return way

    def invalidate_class(self, address):
        """tlbie: both ways of the address's congruence class."""
        self.sets[self.index(address)] = [None] * self.ways

    def invalidate_all(self):
        for s in range(self.classes):
            self.sets[s] = [None] * self.ways

    def valid(self):
        return sum(e is not None for ways in self.sets for e in ways)


class NativeTLBView:
    """One of the 604's TLBs held by the native model of guest code (emu.hw.tlb604), seen
    with ``TLB604``'s methods: without BATs the kernel's routines (guest code) and the
    Python-driven user accesses then share one ITLB and one DTLB, as on the hardware. The
    entries are the native record's (tag ((VSID << 20) | page) + 1, word 1, a use clock:
    emu/hw/model/tlb604.c), the victim its (an invalid way, else the least recently used)."""

    def __init__(self, model, fetch):
        self.model, self.t = model, model.t
        self.ways, self.classes = model.ways, model.classes
        self.base = 0 if fetch else self.classes

    def _slot(self, address, way):
        k = (self.base + ((address >> 12) & (self.classes - 1))) * self.ways + way
        return T6_ENTRIES + T6_ENTRY_WORDS * k

    @staticmethod
    def _tag(vsid, address):
        return ((vsid << 20) | ((address >> PAGE_SHIFT) & 0xFFFFF)) + 1

    def find(self, vsid, address):
        tag = self._tag(vsid, address)
        for way in range(self.ways):
            at = self._slot(address, way)
            if self.t[at] == tag:
                return way, int(self.t[at + 1])
        return None

    def use(self, address, way):
        self.t[T6_CLOCK] += 1
        self.t[self._slot(address, way) + 2] = self.t[T6_CLOCK]

    def load(self, vsid, address, word1):
        victim = None
        for way in range(self.ways):
            at = self._slot(address, way)
            if victim is None or (self.t[victim] != 0 and
                                  (self.t[at] == 0 or self.t[at + 2] < self.t[victim + 2])):
                victim, chosen = at, way
        self.t[victim], self.t[victim + 1] = self._tag(vsid, address), word1
        self.use(address, chosen)
        self.model.flush_unicorn()      # Unicorn may hold the page it replaced
        return chosen

    def invalidate_class(self, address):
        self.model.invalidate_class(address)

    def invalidate_all(self):
        self.model.invalidate_all()

    def valid(self):
        return sum(int(self.t[self._slot(cls << 12, way)] != 0)
                   for cls in range(self.classes) for way in range(self.ways))


class PPC604(PPC32Hash):
    """The 604: ``Kernel(Machine("ppc604"), arch=PPC604, flush=...)`` (the MMU model of the
    Machine stays off: the backend runs the TLBs and the search, see the module notes)."""

    name = "ppc604"
    tlb_decides = True
    tlb_flush_strategies = ("scan",)

    def __init__(self, machine, ledger, flush="hashpte", htab_size=None, total_memory=None,
                 bats=True):
        if flush not in FLUSHES:
            raise ValueError(f"flush must be one of {FLUSHES}, not {flush!r}")
        if machine.profile.tlb.get("reload") != "hardware-hash" or machine.isa != "ppc32":
            raise ValueError(f"the 604 backend needs a 32-bit PowerPC that searches the hash "
                             f"table in hardware, not {machine.profile.name}")
        super().__init__(machine, ledger, htab_size=htab_size, total_memory=total_memory)
        tlb = machine.profile.tlb
        self.itlb = TLB604(tlb["itlb_entries"], tlb["itlb_ways"])
        self.dtlb = TLB604(tlb["dtlb_entries"], tlb["dtlb_ways"])
        l1d = next(lv for lv in machine.profile.caches if lv.name == "L1D")
        self.pte_read_cycles = l1d.hit_latency          # each PTE fetch of the search
        self.walk_cycles = tlb.get("walk_cycles", 0)
        self.flush = flush
        self.name = f"ppc604 ({flush})"
        # how the generic VM flushes (emu.kernel.vm.Kernel._unmap_flush, flush_tlb_range)
        self.zap_flush = None             # one flush per unmapped range, after the zap
        self.walks_flush_ranges = flush != "hashpte"
        self.flushes_as_1998 = flush != "hashpte"      # fork a new context, exit by VMA
        self.hashpte = flush == "hashpte"        # _PAGE_HASHPTE exists (2.4), or not (1998)
        machine.load(hash_low_prelude(self.htab_base, self.htab_size, self.kvars) +
                     ("" if bats else ".equ KERNEL_SEGMENT0, 1\n") +     # nobats: 1-7
                     routine("ppc32/flush_hash_search.S").read_text() +
                     routine("ppc32/set_context_22.S").read_text())
        self.current = None
        self.native_tlb = None            # guest code's TLBs (emu.hw.tlb604), set by Entry
        self.bats, self.kernel_tables = bats, {}
        # the CPU's SPRs and segment registers (before the TLB's hook, without BATs)
        self.cpu_regs = CpuRegisters(machine.uc, machine.alloc(PAGE_SIZE))
        self.thread = self.machine.alloc(32, align=32)  # SPRG3's thread block (switch_mm)
        self.user_frame, self.htab_reloads_word = user_task_words(self.machine, self.thread)
        self.user_hash = USER_HASH_KERNELS.get(flush, "2.4")
        load_user_hash(self.machine, self.user_hash, self.htab_reloads_word,
                       "ppc32/hash_miss_604.S", {"FETCH_FROM_DAR": 1})
        if not bats:
            self._without_bats()

    # ------------------------------------------------------------------ without BATs

    def _without_bats(self):
        """2.2's ``nobats`` (mapin_ram with __map_without_bats, 2.2.0 arch/ppc/mm/init.c
        806-885): the kernel's pages are Linux PTEs in every page directory
        (ppc603.kernel_page_tables: present and accessed, the text read only, the rest
        dirty and writable, at EA = physical in segment 0, VSID 0) and reach the TLBs through the hash table: the kernel's routines
        run translated by the native model (emu.hw.tlb604, no BAT), whose TLBs the user's
        accesses share (``NativeTLBView``), and a kernel access that finds no HPTE takes the
        ISI / DSI whose prologue runs hash_page (routines/ppc32/nobats_hash_22.S)."""
        m = self.machine
        self.kernel_tables = kernel_page_tables(m)
        self.nobats_reloads = m.alloc(8, align=8)   # the kernel's reloads
        m.load(f".equ create_hpte, {m.symbols['create_hpte']:#x}\n"
               f".equ NOBATS_RELOADS, {self.nobats_reloads:#x}\n" +
               routine("ppc32/nobats_hash_22.S").read_text())
        # SPRG3: the current thread, whose PG_TABLES hash_page reads (head.S 465, 1232)
        self.cpu_regs.set_spr(SPRG3, self.thread)
        swapper = m.alloc(PAGE_SIZE, align=PAGE_SIZE)        # swapper_pg_dir
        self._kernel_mappings(swapper)
        self.native_tlb = TLB604Model(m, self.sdr1, 0)
        self.itlb = NativeTLBView(self.native_tlb, True)
        self.dtlb = NativeTLBView(self.native_tlb, False)
        self._load_segments(None)
        m.storage_interrupt = self._kernel_storage_interrupt

    @property
    def htab_reloads(self):
        """2.2.0's htab_reloads: the HPTEs the backend's DataAccess path made for user
        pages (2.1.51 has no such count)."""
        return self.machine.read_word(self.htab_reloads_word)

    def _kernel_mappings(self, pgd):
        """The kernel's entries in the page directory at ``pgd`` (pgd_alloc copies them from
        swapper_pg_dir), which becomes the one hash_page reads: the thread's PG_TABLES
        (SPRG3's; 2.2.0's switch_mm sets it)."""
        for index, table in self.kernel_tables.items():
            self.machine.write(pgd + 4 * index, table.to_bytes(4, "big"))
        self.machine.write(self.thread + THREAD_PGDIR, pgd.to_bytes(4, "big"))

    def _load_segments(self, mm):
        """Without BATs: segment 0 the kernel's, 1-11 the mm's (the model's copies: the
        Python walker's and the native TLB's)."""
        words = [KERNEL_SEGMENT] + [
            USER_SEGMENT | ctx_to_vsid(mm.context if mm else 0, n << 28) for n in range(1, 12)]
        self.machine.mmu.set_segment(0, 0, ks=False, kp=True)
        self.native_tlb.set_segments(words + [KERNEL_SEGMENT] * 4)

    @property
    def kernel_reloads(self):
        """HPTEs hash_page made for the kernel's own pages (without BATs)."""
        return self.machine.read_word(self.nobats_reloads)

    def _kernel_storage_interrupt(self):
        """A kernel routine's access found no HPTE (no BATs): the ISI / DSI delivered as the
        CPU does (SRR0 = the instruction, SRR1 = the MSR with the cause for an ISI; DAR and
        DSISR for a DSI; translation off), at nobats_hash_22.S's prologue, with SPRG2 = 0
        (in the kernel: a user hash miss's run leaves it at the user's frame, as 2.2.0's
        fast return to user mode does). Returns its address, or None if the stop was not
        such a fault."""
        fault = self.native_tlb.take_fault()
        if fault is None:
            return None
        kind, ea, access = fault
        if kind != T6_FAULT_NO_HPTE:
            raise KernelError(f"a kernel routine's {access!r} access at {ea:#x} was refused "
                              "by its page's PP bits")
        m = self.machine
        uc = m.uc
        pc = uc.reg_read(ppc_const.UC_PPC_REG_PC) & 0xFFFFFFFF
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR) & 0xFFFF
        if access == "x":     # SPRG2 = 0: in the kernel (_kernel_dsi)
            self.cpu_regs.set_sprs({SRR0: pc, SRR1: msr | NO_HPTE, SPRG2: 0})
            vector = "nobats_isi22"
        else:
            self.cpu_regs.set_sprs({SRR0: pc, SRR1: msr, DAR: ea, SPRG2: 0,
                                    DSISR: NO_HPTE | (DSISR_STORE if access == "w" else 0)})
            vector = "nobats_dsi22"
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)
        m.stop_record = None
        self.ledger.count("kernel_htab_misses")
        return m.symbols[vector]

    def kernel_reference(self, address, write):
        """Without BATs, a C path's data reference to a kernel page (a PTE load or store of
        the generic VM) goes through the DTLB as on the hardware (with BATs: nothing): a
        miss is the hardware search (ledger row ``kernel_table_search``), and a search that
        finds no HPTE the DSI as guest code (``_kernel_dsi``: 2.2.0's prologue and
        hash_page for the kernel, ledger row ``hash_page_kernel``), then the search again.
        Counted with the routines' misses (``kernel_tlb_misses``, ``kernel_htab_misses``)
        and apart (``kernel_c_tlb_misses``)."""
        if self.bats:
            return
        found = self.dtlb.find(0, address)
        if found is not None:
            self.dtlb.use(address, found[0])
            return
        self.ledger.count("kernel_tlb_misses")
        self.ledger.count("kernel_c_tlb_misses")
        hpte = self._search_kernel(address)
        if hpte is None:
            self.ledger.count("kernel_htab_misses")
            self.ledger.guest("hash_page_kernel", self._kernel_dsi(address, write))
            hpte = self._search_kernel(address)
            if hpte is None:
                raise KernelError(f"no kernel PTE for the C path's reference at {address:#x}")
        self.dtlb.load(0, address, hpte[3])

    def _kernel_dsi(self, address, write):
        """The DSI of a kernel-mode data access that found no HPTE, as the CPU delivers it,
        run from the vector to hash_page's rfi (nobats_dsi22: 2.2.0 head.S 396-425's
        EXCEPTION_PROLOG from the kernel, DataAccess 455-466, hash_page 1212-1402). What
        differs from a user's miss: SRR1 without MSR[PR], so DataAccess asks hash_page for
        no _PAGE_USER (the Linux PTE need only be present, and writable for a store), and
        SPRG2 = 0, as transfer_to_handler leaves it in the kernel (head.S 1153), so the
        frame goes below the kernel stack pointer. The model's SRR0 is the halt address and
        its SRR1 has no MSR[IR|DR] (the rfi ends the run in real mode, as for the user's:
        ``_run_user_hash``); the MSR the caller had is put back."""
        uc = self.machine.uc
        self.cpu_regs.set_sprs({SRR0: HALT, SRR1: MSR_ME, DAR: address, SPRG2: 0,
                                DSISR: NO_HPTE | (DSISR_STORE if write else 0)})
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)      # the exception: real mode
        try:
            return self.machine.call_untranslated("nobats_dsi22")
        finally:
            uc.reg_write(ppc_const.UC_PPC_REG_MSR, msr)

    def _search_kernel(self, address):
        """The hardware search for a kernel page (VSID 0), charged to
        ``kernel_table_search``: find_pte's (secondary?, slot, address, word 1) or None."""
        found = mmu.find_pte(self.machine.read, self.sdr1, 0, address)
        self._charge_search(address, found, "kernel_table_search")
        return found

    def call(self, entry, *args):
        """A kernel routine: with BATs in real mode (PPC32Hash); without, translated through
        the TLBs and the hash table (MSR_KERNEL), but for the hash-table code, which runs in
        real mode on the hardware too (``REAL_MODE_ROUTINES``). The routine's TLB misses
        are counted once per access (``kernel_tlb_misses``), its hash-table misses too
        (``kernel_htab_misses``); their prologues and hash_page are part of its run."""
        if self.bats or entry in REAL_MODE_ROUTINES:
            return super().call(entry, *args)
        m, tlb = self.machine, self.native_tlb
        before = tlb.counts()
        hash_misses = self.ledger.counts.get("kernel_htab_misses", 0)
        tlb.arm()
        m.uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_KERNEL)
        try:
            run = m.call(entry, *args)
        finally:
            m.uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)
        after = tlb.counts()
        self.ledger.guest(entry, run)
        # once per access, as the user's are counted: the search after hash_page is not one
        retries = self.ledger.counts.get("kernel_htab_misses", 0) - hash_misses
        self.ledger.count("kernel_tlb_misses", sum(after[k] - before[k] for k in
                                                   ("itlb_misses", "dtlb_misses")) - retries)
        return run.return_value

    # ------------------------------------------------------------------ contexts

    def switch_mm(self, mm):
        super().switch_mm(mm)
        self.current = mm
        self.machine.write(self.thread + THREAD_PGDIR, mm.pgd.address.to_bytes(4, "big"))
        if not self.bats:
            self._kernel_mappings(mm.pgd.address)
            self._load_segments(mm)

    def destroy_context(self, mm):
        if self.current is mm:
            self.current = None

    def vsid(self, mm, address):
        return ctx_to_vsid(mm.context, address)

    # ------------------------------------------------------------------ the TLBs

    def tlb(self, access):
        return self.itlb if access == "x" else self.dtlb

    @staticmethod
    def _permits(word1, access):
        """PP with key 1 (user segments): 0 no access, 2 read/write, 1 and 3 read only."""
        pp = word1 & 3
        return pp != 0 and (access != "w" or pp == 2)

    def probe(self, mm, address, access):
        tlb = self.tlb(access)
        found = tlb.find(self.vsid(mm, address), address)
        if found is None:
            return "miss"
        if not self._permits(found[1], access):
            return "protection"
        tlb.use(address, found[0])
        return "hit"

    def translates(self, mm, address, write):
        found = self.dtlb.find(self.vsid(mm, address), address)
        return found is not None and self._permits(found[1], "w" if write else "r")

    def find_hpte(self, mm, address):
        """Where the search finds ``address``'s HPTE: (secondary?, slot, word 1), or None."""
        found = mmu.find_pte(self.machine.read, self.sdr1, self.vsid(mm, address), address)
        return None if found is None else (found[0], found[1], found[3])

    def _search(self, mm, address):
        """The hardware table search: charged to the ledger row ``table_search``; returns
        what it found (find_hpte)."""
        found = self.find_hpte(mm, address)
        self.ledger.count("pte_reads", self._charge_search(address, found, "table_search"))
        return found

    def _charge_search(self, address, found, row):
        """The hardware search of ``address`` that found ``found`` (find_pte's, or None),
        checked against the native search and charged to the ledger's ``row``: the PTEs it
        read (the primary group's 8, then the secondary's, up to the one found)."""
        hit, stall = mmu.walk_hashed32(self.machine.state, address)
        if hit != (found is not None):
            raise KernelError(f"the search model and the HTAB disagree at {address:#x}")
        reads = 16 if found is None else 8 * found[0] + found[1] + 1
        self.ledger._add(row, "hardware", 1,
                         self.walk_cycles + reads * self.pte_read_cycles + stall)
        return reads

    def tlb_miss_for(self, mm, address, access):
        """A TLB miss: the hardware search; on a hash miss, the ISI / DSI's hash_page (guest
        code, ``_hash_page``) and a second search. True if an entry was loaded, False if the
        Linux PTE forbids the access."""
        self._require_current(mm, "a TLB miss")
        found = self._search(mm, address)
        if found is not None:
            self.ledger.count("htab_secondary_hits" if found[0] else "htab_primary_hits")
        else:
            self.ledger.count("htab_misses")
            found = self._hash_page(mm, address, access)
            if found is None:
                self.ledger.count("tlb_miss_no_pte")
                return False
            self.ledger.count("tlb_miss_retries")       # the retried access's search
            self.ledger.count("pte_reads", self._charge_search(address, found, "table_search"))
        self.tlb(access).load(self.vsid(mm, address), address, found[2])
        self.ledger.count("tlb_entries_loaded")
        return True

    def tlb_miss(self, mm, address, write):
        return self.tlb_miss_for(mm, address, "w" if write else "r")

    def _hash_page(self, mm, address, access, label="hash_page", protection=False):
        """The ISI / DSI of a user ``access`` at ``address`` as guest code, one run from the
        vector to hash_page's return from the exception (hash_miss_604.S: 2.2.0's
        prologue and hash_page, 2.1.51's or 2.4's by the flush; a ``protection``
        violation's DSI searches the PTE groups for the old HPTE and tlbie-s it), charged
        to ``label``. The outcome is read from the table after the run (hash_page_user22
        returns no status), counted as the HPTE status of emu.kernel.ppc32. Returns where
        the search now finds the HPTE (find_hpte's), or None if hash_page made or updated
        none that allows the access. Without ``protection`` the search just found no HPTE
        (the caller's)."""
        old = self.find_hpte(mm, address) if protection else None
        full = old is None and self._primary_full(mm, address)
        run = self._run_user_hash(mm, address, access, protection)
        self.ledger.guest(label, run)
        made = self.find_hpte(mm, address)
        if made is None or not self._permits(made[2], access):
            made, status = None, 16     # refused: do_page_fault
        elif old is not None:
            status = 3                  # the HPTE updated: create_hpte tlbie-d the page
            self._tlbie(address)
        else:
            status = 1 if made[0] else 2 if full else 0
        self.ledger.count(HPTE_STATUS[status])
        return made

    def _run_user_hash(self, mm, address, access, protection):
        """The exception as the CPU delivers it (the registers the model sets: module
        notes), then the guest run; the MSR the run leaves (the rfi's user MSR) is put
        back to the kernel routines' real mode."""
        uc = self.machine.uc
        if access == "x":
            sprs = {SRR1: MSR_ME | MSR_PR | NO_HPTE, DAR: address}
            vector = "user_isi604"
        else:
            reason = DSISR_PROTECTION if protection else NO_HPTE
            sprs = {SRR1: MSR_ME | MSR_PR, DAR: address,
                    DSISR: reason | (DSISR_STORE if access == "w" else 0)}
            vector = "user_dsi604"
        sprs.update({SRR0: HALT, SPRG2: self.user_frame, SPRG3: self.thread})
        segment = address >> 28
        self.cpu_regs.set_sprs_and_segment(sprs, segment, USER_SEGMENT |
                                           ctx_to_vsid(mm.context, segment << 28))
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)      # the exception: real mode
        try:
            return self.machine.call_untranslated(vector)
        finally:
            uc.reg_write(ppc_const.UC_PPC_REG_MSR, msr)

    def _primary_full(self, mm, address):
        """Every HPTE of ``address``'s primary PTE group valid (create_hpte then tries the
        secondary group, and evicts if that is full too)."""
        group = mmu.pteg_address(self.sdr1, mmu.primary_hash(self.vsid(mm, address),
                                                             address))
        words = self.machine.read(group, 64)
        return all(words[k] & 0x80 for k in range(0, 64, 8))

    def storage_interrupt(self, mm, address, access):
        """A store through a read-only entry (a clean page): DSI (DSISR: protection,
        store), whose hash_page marks the PTE dirty and makes the HPTE writable (tlbie: the
        next store misses and searches)."""
        if access != "w":
            return False
        self._require_current(mm, "a data storage interrupt")
        self.ledger.count("hash_page_dsi")
        return self._hash_page(mm, address, "w", "hash_page_dsi", protection=True) is not None

    # ------------------------------------------------------------------ flushing

    def _tlbie(self, address):
        self.itlb.invalidate_class(address)
        self.dtlb.invalidate_class(address)
        if self.native_tlb is not None:
            self.native_tlb.invalidate_class(address)

    def preload(self, mm, address, pte_page):
        """update_mmu_cache: 2.4's add_hash_page; nothing in the 1998 modes (2.1.51's and
        2.2.0's include/asm-ppc/pgtable.h: ``update_mmu_cache(vma, addr, pte) do { } while
        (0)``): the retried access takes the hash miss."""
        if self.hashpte:
            super().preload(mm, address, pte_page)

    def has_hashpte(self, pte):
        return self.hashpte and bool(pte & _PAGE_HASHPTE)

    def flush_ptes(self, mm, address, pte_page, count):
        """flush_hash_pages over ``count`` Linux PTEs; its tlbie of each PTE that had
        _PAGE_HASHPTE empties that page's TLB class (2.4 only: the 1998 kernels search)."""
        if not self.hashpte:
            raise KernelError(f"flush_ptes reads _PAGE_HASHPTE, which the 1998 kernels "
                              f"(flush={self.flush!r}) do not have: they search (flush_range)")
        words = self.machine.read(pte_page + ((address >> PAGE_SHIFT) & 0x3FF) * 4, 4 * count)
        marked = [address + k * PAGE_SIZE for k in range(count)
                  if int.from_bytes(words[4 * k:4 * k + 4], "big") & _PAGE_HASHPTE]
        n = super().flush_ptes(mm, address, pte_page, count)
        for page in marked:
            self._tlbie(page)
        return n

    def flush_range(self, mm, start, end):
        """flush_tlb_range of the 1998 kernels (``search``, ``context``: module notes)."""
        start &= ~(PAGE_SIZE - 1)
        end = min(end, TASK_SIZE)
        pages = max(0, -(-(end - start) // PAGE_SIZE))
        if self.flush == "context" and pages > CONTEXT_FLUSH_PAGES:
            self.new_context_for(mm)
            return
        n = self.call("flush_range_search", mm.context, start, pages)
        self.ledger.count("pages_searched", pages)
        self.ledger.count("hpte_invalidated", n)
        for k in range(pages):
            self._tlbie(start + k * PAGE_SIZE)

    def new_context_for(self, mm):
        """flush_tlb_mm of 2.1.79-2.2: a new context for the mm (its old HPTEs and TLB
        entries become unreachable), loaded now (set_context) if it is the running mm."""
        mm.context = self.new_context()
        self.ledger.count("new_contexts")
        if self.current is mm:
            self.call("set_context_22", mm.context)
            super().switch_mm(mm)
            if not self.bats:
                self._load_segments(mm)
