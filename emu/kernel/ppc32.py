"""The 32-bit PowerPC hashed-MMU backend (603e/604/750 class with a hash table: ppc750).

Every architecture-specific step is guest assembly from ``routines/ppc32`` run on the
machine, its cycles measured: ``clear_page`` and ``copy_page`` (arch/ppc/kernel/misc.S),
``flush_dcache_icache`` (misc.S ``__flush_dcache_icache``), and ``hash_page``,
``add_hash_page``, ``create_hpte``, ``flush_hash_pages`` (arch/ppc/mm/hashtable.S). The
hash table they fill is the HTAB in guest RAM at SDR1, the same bytes the ``emu.hw.mmu`` walker
searches on a TLB miss (``Machine(mmu=True)``); the segment registers get the VSIDs of the
running process on ``switch_mm``.

The kernel runs with its memory BAT-mapped (and ``hash_page`` / ``flush_hash_pages`` with
MSR[DR] off), so its own accesses never go through the TLB: on a machine built with
``mmu=True`` the backend turns the MMU model off while a kernel routine runs.

Another backend (a 603 with software TLB reload, a 405, an ARM or x86 one) implements the
same methods of ``Arch``; see ``emu.kernel.vm.Arch``.
"""
from __future__ import annotations


from ..hw import mmu
from ..context import routine
from .arch import Arch
from .pgtable import PAGE_SIZE, _PAGE_HASHPTE

# the status codes the guest routines return (see routines/ppc32/hash_low_32.S)
HPTE_STATUS = {0: "hpte_primary", 1: "hpte_secondary", 2: "hpte_evicted", 3: "hpte_updated",
               4: "preload_skipped", 16: "hash_page_refused"}
CODE_END = 0x100000        # end of the machine's code region: the "kernel text" (etext)


CONTEXT_FLUSH_PAGES = 20          # 2.1.79-2.2.0 local_flush_tlb_range: "> 20 * PAGE_SIZE"


def ctx_to_vsid(context, ea):
    """Linux's VSID for a context and an effective address (CTX_TO_VSID, arch/ppc)."""
    return (context * 897 * 16 + ((ea >> 28) & 0xF) * 0x111) & 0xFFFFFF


def hash_low_prelude(htab_base, htab_size, kvars, hash_lock=0):
    """The constants routines/ppc32/hash_low_32.S expects before it (see its header): the
    kernel patches the same instructions at boot. ``hash_lock``: mmu_hash_lock's address,
    for the SMP build (0: one CPU)."""
    bits = (htab_size // 64).bit_length() - 1
    hash_left = 31 - (6 + bits - 1)
    return (f".equ HASH_BASE, {htab_base:#x}\n"
            f".equ HASH_MSK, {((1 << bits) - 1) << 6:#x}\n"
            f".equ HASH_LEFT, {hash_left}\n.equ PI_LEFT, {max(hash_left, 10)}\n"
            f".equ KVARS, {kvars:#x}\n.equ ETEXT, {CODE_END:#x}\n"
            f".equ SMP, {int(hash_lock != 0)}\n.equ MMU_HASH_LOCK, {hash_lock:#x}\n")


def htab_size_for(total_memory):
    """The kernel's hash-table size (MMU_init_hw, arch/ppc/mm/ppc_mmu.c): one HPTE per page
    of RAM (total / 32 KB PTEGs), at least 1024 PTEGs (64 KB), rounded up to a power of 2."""
    n = max(total_memory // (PAGE_SIZE * 8), 1024)
    n = 1 << (n - 1).bit_length()
    return n * 64


class PPC32Hash(Arch):
    """The 32-bit hashed page table backend. ``htab_size`` defaults to the kernel's rule for
    ``total_memory`` (default: the machine's RAM): e.g. 192 MB (the PowerBook of Mackerras
    2003) gives 512 KB."""

    name = "ppc32-hash"
    has_exec_permission = False      # classic PowerPC PTEs have no execute bit
    zap_flush = "entry"              # flush_hash_entry at each zapped PTE (2.5)

    def __init__(self, machine, ledger, htab_size=None, total_memory=None):
        super().__init__(machine, ledger)
        if machine.isa != "ppc32":
            raise ValueError(f"the ppc32 hashed backend needs a ppc32 machine, not "
                             f"{machine.isa} ({machine.profile.name})")
        size = htab_size or htab_size_for(total_memory or machine.ram_size)
        self.htab_base = machine.alloc(size, align=size)
        self.htab_size = size
        self.sdr1 = mmu.sdr1_for(self.htab_base, size)
        machine.mmu.sdr1 = self.sdr1
        self.kvars = machine.alloc(32, align=32)        # next_slot, pteg_full, searches
        # several CPUs: the SMP build, with mmu_hash_lock on a line of its own
        self.hash_lock = machine.alloc(128, align=128) if len(machine.cpus) > 1 else 0
        prelude = hash_low_prelude(self.htab_base, size, self.kvars, self.hash_lock)
        with machine.loading():
            for name in ("clear_page.S", "copy_page.S", "flush_dcache_icache.S"):
                machine.load(routine(f"ppc32/{name}"))
            machine.load(prelude + routine("ppc32/hash_low_32.S").read_text())
        self.next_context = 1

    # ------------------------------------------------------------ running kernel routines

    def call(self, entry, *args):
        run = self.machine.call_untranslated(entry, *args)     # kernel code and data: BATs
        self.ledger.guest(entry, run)
        return run.return_value

    # ------------------------------------------------------------------ contexts

    def new_context(self):
        """mmu_context_init / get_mmu_context: the next context number, round robin."""
        ctx = self.next_context
        self.next_context += 1
        return ctx

    def switch_mm(self, mm):
        """Load the user segment registers (0-11, below TASK_SIZE) with the mm's VSIDs."""
        self.machine.mmu.set_segments({n: ctx_to_vsid(mm.context, n << 28) for n in range(12)})

    # ------------------------------------------------------------------ translations

    def lookup(self, mm, address):
        """(HPTE address, word 1) of the valid HPTE for ``address`` in ``mm``, or None."""
        vsid = ctx_to_vsid(mm.context, address)
        for secondary in (0, 1):
            h = (mmu.secondary_hash if secondary else mmu.primary_hash)(vsid, address)
            group = mmu.pteg_address(self.sdr1, h)
            want = mmu.pte_word0(vsid, address, secondary)
            raw = self.machine.read(group, 64)
            for k in range(8):
                if int.from_bytes(raw[8 * k:8 * k + 4], "big") == want:
                    return group + 8 * k, int.from_bytes(raw[8 * k + 4:8 * k + 8], "big")
        return None

    def translates(self, mm, address, write):
        """Would the hardware find a translation that permits the access (HTAB hit)?"""
        found = self.lookup(mm, address)
        if found is None:
            return False
        return (found[1] & 3) == 2 if write else True

    def tlb_miss(self, mm, address, write):
        """The hash-table miss handler: hash_page. False if it refused (a real fault)."""
        self.ledger.fixed("hash_fault_entry")
        status = self.call("hash_page", 0x400 if write else 0, address, mm.pgd.address,
                           mm.context)
        self.ledger.count(HPTE_STATUS[status])
        return status != 16

    def preload(self, mm, address, pte_page):
        """update_mmu_cache's MMU part: add_hash_page (only for young PTEs: the caller
        checks)."""
        status = self.call("add_hash_page", mm.context, address, pte_page)
        self.ledger.count(HPTE_STATUS[status])

    def flush_ptes(self, mm, address, pte_page, count):
        """Invalidate the translations of ``count`` Linux PTEs from ``address`` in one PTE
        page: flush_hash_pages, which looks only at PTEs with _PAGE_HASHPTE."""
        n = self.call("flush_hash_pages", mm.context, address, pte_page, count)
        self.ledger.count("flush_calls")
        self.ledger.count("lptes_examined", count)
        self.ledger.count("hpte_invalidated", n)
        return n

    def has_hashpte(self, pte):
        return bool(pte & _PAGE_HASHPTE)
