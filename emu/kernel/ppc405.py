"""The PowerPC 405 backend (ppc405gp, the Walnut board of Mackerras 2003): a software-loaded
64-entry unified TLB with an execute-permission bit, and no hash table.

What runs as guest code on Unicorn's 405 CPU, its cycles measured and charged:

* ``clear_page``, ``copy_page``, ``flush_dcache_icache`` (routines/ppc32, 32-byte lines: the
  405GP's L1 line, profiles/ppc405gp.toml);
* the TLB miss handler (``routines/ppc32/tlbmiss_405_kernel.S`` at 0x1100/0x1200, modelled on
  head_4xx.S): it walks the Linux page table in guest RAM, marks the PTE accessed and loads
  an entry with ``tlbwe`` into the CPU's own TLB, EX and WR taken from the PTE;
* ``_tlbie`` (tlbsx + tlbwe), ``__tlbia`` and ``set_context`` (``routines/ppc32/tlb_4xx.S``).

The kernel's own code runs in real mode (MSR[IR|DR] off): Linux maps the 405's kernel
lowmem with large pages (arch/ppc/mm/4xx_mmu.c mmu_mapin_ram, 16 MB entries), whose rare
misses the model leaves out, and the miss handlers run untranslated on the hardware too.

What is simulated: user accesses (``Kernel.touch``), as on every backend: no user
instruction runs. Here the hardware decides first (``tlb_decides``): ``probe`` searches the
CPU's TLB as ``tlbsx`` does (valid entry, same page, TID = the mm's PID or 0; emu.hw.softtlb
records every entry from the ``tlbwe``/``tlbia`` hooks) and checks WR for a store and EX
for a fetch, as the 405 does before raising the data / instruction storage interrupt.

How a TLB miss is charged: by running the guest miss handler for that address. The model
writes DEAR = the address, SRR0 = the halt address and SRR1 = a real-mode MSR, as the
exception would, and calls the data-miss vector; the handler's ``rfi`` ends the call. An
instruction miss runs the same data-miss entry: the two entries differ only in the SPR
they read the address from (SRR0 or DEAR) and their bail-out vector, so they take the same
cycles, and the instruction entry cannot be run for a simulated fetch (its ``rfi`` would
resume the fetch). A handler that finds no PTE branches to the storage-interrupt vector,
where a two-instruction stub ends the call; the fault path (``Kernel.page_fault``, fixed
cost ``fault_entry``) takes over. The exception entry itself (the hardware's vectoring)
costs nothing beyond the handler's instructions.

Execute permission: the 405's EX bit, from the Linux PTE's _PAGE_EXEC (``has_exec_permission``).
Under ``lazy_exec`` update_mmu_cache leaves _PAGE_EXEC out for a page whose PG_arch_1 is
clear, the handler loads an entry without EX, the fetch is an instruction storage interrupt,
and the fault path flushes, sets _PAGE_EXEC and ``_tlbie``-s the entry (arch/ppc/mm/fault.c,
2.6.12, CONFIG_4xx), so the next fetch misses and reloads it with EX.

TLB flushing is Linux 4xx's (the Kernel strategy ``tlbia``): flush_tlb_mm and
flush_tlb_range run ``sync; tlbia; isync``, flush_tlb_page and flush_tlb_page_nohash run
``_tlbie`` (include/asm-ppc/tlbflush.h, 2.6.12). There is no TLB preload: update_mmu_cache
(arch/ppc/mm/init.c, 2.6.12) preloads only the hash table of CONFIG_PPC_STD_MMU.

Limits: 4 KB pages only (emu.hw.softtlb); kernel addresses and large pages are not handled by
the miss handler; the 405's shadow I/D TLBs are not modelled; the zone protection register
(ZPR) is not modelled (every user entry is readable); the DataStorage fast path that sets
_PAGE_HWWRITE on a first store does not exist here (the handler grants WR to a dirty
writable PTE; a store to a clean writable page goes through Kernel.page_fault instead);
context stealing is not modelled (more than 255 live address spaces are refused).
"""
from __future__ import annotations

from ..context import routine
from ..hw.layout import HALT
from ..hw.softtlb import DEAR405, MSR_ME, SRR0, SRR1
from .arch import Arch
from .errors import KernelError

TLB_WR, TLB_EX = 0x100, 0x200          # TLB data word: write and execute permission
FIRST_CONTEXT, LAST_CONTEXT = 1, 255   # 4xx PIDs (include/asm-ppc/mmu_context.h; 0: kernel)
DATA_MISS_VECTOR = 0x1100
ROUTINE_LINE = 32                      # LINE in clear_page.S, copy_page.S, flush_dcache_icache.S
# The storage-interrupt vectors: the handler's bail-out lands here (see the module notes)
STORAGE_INTERRUPT_STUB = f"li r3, 1\nba {HALT:#x}\n"


class PPC405(Arch):
    """The 405 backend. Needs ``Machine("ppc405gp", mmu=True)`` (emu.hw.softtlb runs the CPU
    model's software-loaded TLB)."""

    name = "ppc405"
    has_exec_permission = True          # the TLB data word's EX bit
    tlb_flush_strategies = ("tlbia",)
    tlb_decides = True
    loaded_context = "PID"

    def __init__(self, machine, ledger):
        super().__init__(machine, ledger)
        soft = self._require_soft_tlb(machine, "405", "405", "ppc405gp")
        lines = {lv.name: lv.line for lv in machine.profile.caches if lv.name in ("L1I", "L1D")}
        if any(line != ROUTINE_LINE for line in lines.values()):
            raise ValueError(f"the 405 backend's page routines step {ROUTINE_LINE}-byte cache "
                             f"lines (the 405GP's), but this profile's L1 lines are {lines}")
        soft.identity_only = False      # user pages map to other frames; see emu.hw.softtlb
        self.soft = soft
        with machine.loading():
            machine.load(routine("ppc32/tlbmiss_405_kernel.S"), at=DATA_MISS_VECTOR)
            machine.load(STORAGE_INTERRUPT_STUB, at=0x300)
            machine.load(STORAGE_INTERRUPT_STUB, at=0x400)
            for name in ("clear_page.S", "copy_page.S", "flush_dcache_icache.S", "tlb_4xx.S"):
                machine.load(routine(f"ppc32/{name}"))
        self.in_use = set()             # live contexts (Linux: context_map)
        self.next_context = FIRST_CONTEXT
        self.current = None             # the mm whose PID and page directory are loaded

    # ------------------------------------------------------------ running kernel routines

    def call(self, entry, *args):
        """A kernel routine, in real mode (see the module notes), charged to the ledger."""
        run = self.machine.call(entry, *args, real_mode=True)
        self.ledger.guest(entry, run)
        return run.return_value

    # ------------------------------------------------------------------ contexts

    def new_context(self):
        """get_mmu_context: the first free PID from next_mmu_context on, wrapping."""
        span = LAST_CONTEXT - FIRST_CONTEXT + 1
        for k in range(span):
            ctx = FIRST_CONTEXT + (self.next_context - FIRST_CONTEXT + k) % span
            if ctx not in self.in_use:
                self.in_use.add(ctx)
                self.next_context = ctx % LAST_CONTEXT + 1
                return ctx
        raise KernelError(f"all {span} 405 PIDs are in use: Linux would steal one "
                          "(steal_context), which the model does not do")

    def destroy_context(self, mm):
        self.in_use.discard(mm.context)
        if self.current is mm:
            self.current = None

    def switch_mm(self, mm):
        """set_context: the mm's PID (the TID of the entries the handler loads, and what
        tlbsx matches) and its page directory for the miss handler."""
        self.call("set_context_405", mm.context, mm.pgd.address)
        self.current = mm

    # ------------------------------------------------------------------ translations

    def lookup(self, mm, address):
        """(index, tag word, data word) of the TLB entry translating ``address`` in
        ``mm``, or None."""
        return self.soft.search405(address, mm.context)

    def probe(self, mm, address, access):
        """The 405's check of one user access: 'miss' (no entry: a TLB miss exception),
        'protection' (a store without WR, a fetch without EX: a storage interrupt), 'hit'."""
        found = self.lookup(mm, address)
        if found is None:
            return "miss"
        needed = {"w": TLB_WR, "x": TLB_EX}.get(access, 0)
        return "protection" if found[2] & needed != needed else "hit"

    def translates(self, mm, address, write):
        return self.probe(mm, address, "w" if write else "r") == "hit"

    def tlb_miss(self, mm, address, write):
        """Run the guest miss handler for ``address`` (see the module notes). True if it
        loaded an entry, False if it found no PTE (the fault path follows)."""
        self._require_current(mm, "a TLB miss")
        self.soft.regs.set_sprs({DEAR405: address, SRR0: HALT, SRR1: MSR_ME})
        run = self.machine.call(DATA_MISS_VECTOR, 0, real_mode=True)
        self.ledger.guest("tlb_miss_405", run)
        loaded = run.return_value == 0
        self.ledger.count("tlb_entries_loaded" if loaded else "tlb_miss_no_pte")
        return loaded

    def preload(self, mm, address, pte_page):
        """Nothing: 4xx update_mmu_cache loads no TLB entry (arch/ppc/mm/init.c, 2.6.12)."""

    # ------------------------------------------------------------------ flushing

    def flush_tlb_page(self, mm, address):
        """_tlbie: tlbsx under the current PID, then an invalid tag into the entry found."""
        self._require_current(mm, "_tlbie")
        if self.call("tlbie_405", address) != 0xFFFFFFFF:
            self.ledger.count("tlb_invalidated")

    flush_tlb_page_nohash = flush_tlb_page

    def flush_tlb_all(self):
        """__tlbia: sync; tlbia; isync."""
        self.call("tlbia_405")
        self.ledger.count("tlbia")

    def flush_ptes(self, mm, address, pte_page, count):
        """The hashed MMU's flush_hash_pages has no 405 counterpart: the Kernel's ``tlbia``
        strategy calls flush_tlb_page / flush_tlb_all instead."""
        raise KernelError("flush_ptes is the hashed MMU's; the 405 uses the tlbia strategy")

    def has_hashpte(self, pte):
        return False                    # _PAGE_HASHPTE is 0 on 4xx (include/asm-ppc/pgtable.h)
