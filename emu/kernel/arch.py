"""The backend API: what the generic VM asks of an architecture, each method guest assembly
run on the machine and charged to the ledger. Each backend (ppc32, ppc603, ppc604, ppc405,
ppc64, arm) is a subclass."""
from __future__ import annotations

from ..context import routine
from ..hw import cache as c
from .errors import KernelError
from .percpu import PerCPU
from .pgtable import PAGE_SHIFT, PGDIR_SHIFT


class Arch:
    """What the generic VM asks of an architecture. Each method runs guest assembly on the
    machine and charges it to the ledger (``call``); a backend for another MMU (the 603's
    software-loaded TLB, the 405, ARM, x86) implements the same methods.

    * ``clear_page(address)``, ``copy_page(dst, src)``: page operations;
    * ``flush_dcache_icache(address)``: make the I-cache coherent for one page;
    * ``new_context()``, ``switch_mm(mm)``: address-space identifiers and their loading;
    * ``translates(mm, address, write)``: would the hardware translate the access without
      the kernel (TLB / hash-table hit)?
    * ``tlb_miss(mm, address, write)``: the kernel's miss handler when it would not
      (``hash_page``; a software-TLB reload); False if the Linux PTE does not allow it;
    * ``preload(mm, address, pte_page)``: update_mmu_cache's MMU part (add_hash_page);
    * ``flush_ptes(mm, address, pte_page, count)``: invalidate the hardware translations
      of ``count`` consecutive Linux PTEs of one PTE page (flush_hash_pages; tlbie);
    * ``has_hashpte(pte)``: does this Linux PTE say a hardware entry may exist? (False
      in a kernel without the bit: the 1998 ones);
    * ``chose_tlb_flush(strategy)``: told the Kernel's flush strategy once, before any run.

    The page-table tree is the backend's kernel's: ``table_levels`` (the directory levels
    above the PTE pages), ``dir_bytes`` (the size of a directory entry), ``pte_index_bits``,
    ``pte_bytes``, ``dir_entry`` / ``dir_table`` (what a directory entry holds),
    ``populate`` (pmd_populate: store it), ``pgd_alloc`` / ``pgd_free``, ``new_table`` (the
    backend's work on a new table page) and ``read_pte`` / ``write_pte`` (the PTE in this
    module's bits); the defaults are PPC32's. A backend whose scan runs in guest code sets
    ``walks_flush_ranges`` and implements ``flush_range(mm, start, end)``; ``flush_pending(mm,
    addresses)`` flushes the batched strategy's recorded addresses (default: one flush_ptes
    each).

    A backend lists the Kernel TLB flush strategies it supports (``tlb_flush_strategies``,
    the first is the default). One whose strategy is ``tlbia`` (a software-loaded TLB with no
    hash table, Linux 4xx) also implements ``flush_tlb_page(mm, address)`` and
    ``flush_tlb_all()``; one whose strategy is ``asid`` (ARMv7) implements
    ``flush_tlb_page``, ``flush_tlb_range(mm, start, end)`` and ``flush_tlb_mm(mm)``; one
    whose strategy is ``context`` (2.2.0's PPC) ``flush_range_context(mm, start, end)`` and
    ``new_context_for(mm)``. A
    backend names the I-cache policy its kernel uses (``default_policy``, taken when the
    Kernel is given none). ``flush_tlb_page_nohash(mm, address)`` (after a fault widened a
    PTE's permissions) and ``destroy_context(mm)`` default to nothing. A backend with
    ``tlb_decides`` implements ``probe(mm, address, access)``: 'hit', 'miss' or
    'protection' (an entry exists but forbids the access), see ``Kernel.touch``; its
    ``tlb_miss_for(mm, address, access)`` runs the miss handler for that access (default:
    ``tlb_miss``; the 603 has separate instruction and data handlers), and
    ``storage_interrupt(mm, address, access)`` may fix a 'protection' verdict without
    do_page_fault (default: it does not; a hashed 603 runs hash_page, as Linux's DSI path did).
    """

    name = "abstract"
    has_exec_permission = False
    tlb_flush_strategies = ("scan", "immediate", "batched")
    tlb_decides = False
    # The Linux page-table tree (PPC32, include/asm-ppc/pgtable.h 2.6): the directory levels
    # above the PTE pages, each (shift, index bits) with four-byte entries, here one pgd of
    # 1024 entries, each the physical address of a PTE page of 1024 four-byte PTEs (4 MB).
    table_levels = ((PGDIR_SHIFT, 10),)
    dir_bytes = 4
    #: top-level directory entries that are the kernel's, below TASK_SIZE (the 603 without
    #: BATs: its kernel sits at EA = physical): free_pgtables leaves them
    kernel_tables = {}
    pte_index_bits = 10
    pte_bytes = 4
    # the scan strategy walks ranges in guest code (flush_range) instead of calling
    # flush_ptes per PTE page
    walks_flush_ranges = False
    default_policy = "lazy"

    current = PerCPU()       # the mm whose context a CPU has loaded (backends keeping one)
    # what the scan strategy does with a zapped PTE that has an HPTE (Kernel._zapped_hashpte):
    # "entry" (flush it at once), "gather" (batch it for tlb_flush), None (2.4's flush of the
    # whole range after the zap, and backends without a hash table)
    zap_flush = None
    # Linux 2.1.51-2.2.0 PPC (the 1998 kernels): flush_tlb_mm (fork's, dup_mmap) gives the mm
    # a new context, and exit_mmap flushes each VMA's range (zap_page_range's
    # flush_tlb_range); the 604 backend's search and context flushes set it, the Kernel's
    # own ``context`` and ``search`` strategies imply it
    flushes_as_1998 = False

    def __init__(self, machine, ledger):
        self.machine, self.ledger = machine, ledger

    def call(self, entry, *args):
        run = self.machine.call(entry, *args)
        self.ledger.guest(entry, run)
        return run.return_value

    # A kernel of several CPUs takes spin locks (routines/<isa>/spinlock.S, loaded then).
    def load_spin_locks(self):
        self.machine.load(routine(f"{self.machine.isa}/spinlock.S"))

    def lock(self, address):
        self.call("spin_lock", address)

    def unlock(self, address):
        self.call("spin_unlock", address)

    # The page routines every backend loads under these names (routines/<isa>/*.S); a
    # kernel of another era may clear pages with its own routine (``clear_routine``).
    clear_routine = "clear_page"

    def clear_page(self, address):
        self.call(self.clear_routine, address)

    def copy_page(self, dst, src):
        self.call("copy_page", dst, src)

    def flush_dcache_icache(self, address):
        """__flush_dcache_icache: dcbst each line, sync, icbi each line, sync, isync."""
        self.call("flush_dcache_icache", address)

    def lock_page(self, kernel, page):
        """lock_page of a page-cache page a fault maps, or of an anonymous page do_wp_page
        looks at: the page lock's guest code. None here: the backends of the 2.4 and 2.6.0
        chapters charge the page lock nothing (their kernels' lock is not on the paths
        they study); the ARM backend runs it (Yun 2011's PK2 is in unlock_page)."""

    def unlock_page(self, kernel, page):
        """unlock_page, after lock_page (see there)."""

    # The generic fault path (do_page_fault .. __do_fault) as the backend's guest code
    # (``fault_enter``, ``fault_exit``, ``find_get_page``, ``file_fault_mapped``), or, by
    # default, as the fixed costs of emu.kernel.costs; ``walk_takes_ptl``: the table walk
    # under page_table_lock (2.6.0's handle_mm_fault) or only an allocation (2.6.36's)
    runs_fault_path = False
    walk_takes_ptl = True

    # find_get_page: 2.6.0's under the mapping's page_lock (the generic VM's default), or,
    # from 2.6.27 on, lockless under RCU with a speculative reference (page_cache_get)
    lockless_page_cache = False

    def zap_start(self, kernel, mm, vma, fullmm):
        """unmap_vmas starts on ``vma`` (``fullmm``: exit_mmap's whole address space)."""

    def zap_pte(self, kernel, mm, vma, address, ptep, page):
        """zap_pte_range's work on one present PTE, before the generic VM clears it: by
        default the fixed cost of emu.kernel.costs."""
        kernel.ledger.fixed("zap_pte")

    def zap_ptes(self, kernel, mm, vma, start, end, entries, released):
        """zap_pte_range over one PTE page's part [start, end) of ``vma``, whose present PTEs
        are ``entries`` (address, ptep, pte, page): by default ``zap_pte`` then the generic
        VM's clear (Kernel._zap_cleared), PTE by PTE."""
        for address, ptep, pte, page in entries:
            self.zap_pte(kernel, mm, vma, address, ptep, page)
            kernel._zap_cleared(mm, address, ptep, pte, page, released)

    # fork's copy_page_range skips an area with no anon_vma (2.6.36 mm/memory.c 838-847,
    # since 2.6.14); the PowerPC backends' kernels (2.2-2.6.0) copy every area
    copy_needs_anon_vma = False

    def copy_ptes(self, kernel, dst, src, vma, start, end):
        """copy_pte_range over one PTE page's part [start, end) of ``vma`` from ``src`` to
        ``dst``: by default the generic VM's copy_one_pte (Kernel._copy_one_pte) of each
        present PTE, in order."""
        for address, ptep, pte in kernel._present_ptes(src, start, end):
            kernel._copy_one_pte(dst, src, vma, address, ptep, pte)

    def page_cache_get(self, kernel, page):
        """page_cache_get_speculative of a lockless find_get_page (lockless_page_cache)."""

    @property
    def pte_page_shift(self):
        """log2 of the bytes one PTE page maps."""
        return PAGE_SHIFT + self.pte_index_bits

    def pte_offset(self, address):
        """Bytes into its PTE page of the Linux PTE for ``address``."""
        return ((address >> PAGE_SHIFT) & ((1 << self.pte_index_bits) - 1)) * self.pte_bytes

    def dir_slot(self, depth, table, address):
        """Where, in the directory ``table`` (level ``depth``), the entry for ``address`` is."""
        shift, bits = self.table_levels[depth]
        return table + ((address >> shift) & ((1 << bits) - 1)) * self.dir_bytes

    def dir_entry(self, depth, table):
        """The directory entry (level ``depth``) that points to the page ``table``."""
        return table

    def dir_table(self, depth, entry):
        """The page a directory entry (level ``depth``) points to."""
        return entry

    def populate(self, depth, slot, table):
        """pmd_populate / pgd_populate: the directory entry at ``slot`` (level ``depth``)
        points at the new, zeroed table page ``table``."""
        self.machine.write(slot, self.dir_entry(depth, table).to_bytes(4, "big"))

    def pgd_alloc(self, kernel):
        """A new address space's top-level table: one zeroed page (a Page)."""
        return kernel._alloc_table_page("pgd_alloc")

    def pgd_free(self, kernel, pgd):
        kernel._put_page(pgd)

    def new_table(self, page, what):
        """The backend's own work on a new, zeroed page-table page ("pte_alloc",
        "pmd_alloc"): by default none."""

    def kernel_reference(self, address, write):
        """A data reference the generic VM's C paths make to kernel memory at ``address``
        (a page-table page's PTE: Kernel._read_pte / _write_pte). By default none costs
        anything (a kernel mapped by BATs or in real mode); a backend whose kernel runs
        through the TLB translates it (emu.kernel.ppc604 without BATs)."""

    def read_pte(self, ptep):
        """The Linux PTE at ``ptep``, in the generic VM's (PPC32) bits."""
        return self.machine.read_word(ptep)

    def write_pte(self, ptep, value):
        """Store a Linux PTE given in the generic VM's bits."""
        self.machine.write(ptep, (value & 0xFFFFFFFF).to_bytes(4, "big"))

    def flush_pending(self, mm, addresses):
        """The batched strategy's flush of the recorded addresses of ``mm``: one
        flush_ptes per address (a backend may do them in one go)."""
        for address in addresses:
            table = mm.pte_page(address)
            if table:
                self.flush_ptes(mm, address, table, 1)

    def flush_tlb_page_nohash(self, mm, address):
        """A fault changed the PTE of ``address`` in place (exec permission, young, dirty):
        drop a TLB entry made from the old one. The hashed MMU model keeps no TLB: nothing."""

    def destroy_context(self, mm):
        """The address space is gone: its context may be reused."""

    # what switch_mm loads, named in the error when a backend that keeps ``self.current``
    # (the mm switch_mm loaded last) is asked to work for another address space
    loaded_context = "context"

    @staticmethod
    def _require_mmu(machine, isa, mode, who, cpu, model):
        """Refuse a machine other than ``isa`` with the hardware-walked MMU model ``mode``."""
        on = machine.state[c.H_MMU]
        if machine.isa != isa or on != mode:
            raise ValueError(f"the {who} backend needs Machine('{cpu}', mmu=True) ({model}), "
                             f"not {machine.profile.name} ({machine.isa}"
                             f"{', MMU model on' if on else ''})")

    @staticmethod
    def _require_soft_tlb(machine, kind, who, cpu):
        """The machine's software-loaded TLB ``kind`` ('603', '405'); any other is refused."""
        soft = machine.soft_tlb
        if soft is None or soft.kind != kind:
            raise ValueError(f"the {who} backend needs Machine('{cpu}', mmu=True), not "
                             f"{machine.profile.name}"
                             f"{' with mmu=True' if soft else ' without the MMU model'}")
        return soft

    def _require_current(self, mm, what):
        if mm is not getattr(self, "current", None):
            raise KernelError(f"{what} for an address space whose {self.loaded_context} "
                              "is not loaded: switch_mm (Kernel.switch_to) first")

    def tlb_miss_for(self, mm, address, access):
        """A software-loaded TLB missed on ``access`` ('r', 'w', 'x'): its miss handler."""
        return self.tlb_miss(mm, address, access == "w")

    def storage_interrupt(self, mm, address, access):
        """The TLB entry forbids ``access``: True if the architecture's storage-interrupt
        path fixed it without do_page_fault (the access is then retried)."""
        return False

    def chose_tlb_flush(self, strategy):
        """The Kernel's flush strategy, told once when it is chosen (before any run): a
        backend whose kernels differ with it loads what the chosen kernel runs (the 603's
        1998 kernels: 2.2.0's hash_page, with no _PAGE_HASHPTE). Nothing by default."""
