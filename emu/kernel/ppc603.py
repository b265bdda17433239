"""The PowerPC 603 backend (ppc603e, the software-loaded TLB of Dougan 1999), with the two TLB
reload strategies the paper compares: ``reload="hash"``, the 603 emulating the 604 (its
miss handlers search a hashed page table the kernel keeps, as Linux/PPC did on the 603
until 2.1/2.2), and ``reload="pagetable"``, the optimisation (the handlers walk the Linux
page table; "We can actually speed things up by eliminating the hash table entirely").

What runs as guest code on Unicorn's 603e CPU, its cycles measured and charged:

* the TLB miss handlers at 0x1000 / 0x1100 / 0x1200 (instruction, data load, data store),
  modelled on arch/ppc/kernel/head.S: ``routines/ppc32/tlbmiss_603_hash.S`` searches the
  primary, then the secondary PTE group at HASH1 / HASH2 for the compare word ICMP / DCMP;
  ``routines/ppc32/tlbmiss_603_kernel.S`` walks the Linux page table (the pgdir of the
  thread in SPRG3), marks the PTE accessed (a store: dirty) and builds the RPA word. Both
  load the CPU's own TLB with ``tlbli`` / ``tlbld`` into the way SRR1[WAY] names;
* hash only: a user page's hash-table miss as 2.2.0 takes it: the handler's way out
  (DataAddressInvalid / InstructionAddressInvalid) branches to DataAccess /
  InstructionAccess, whose prologue calls hash_page (head.S 455-500, 679-702, 783-805 at
  davej-history f6cce5dae): ``routines/ppc32/hash_miss_603.S``, built from
  ``exception_22.S``'s macros, the instructions the 604's user-mode entry runs
  (entry_22.S's hash_page_user22 and its 2.1.51 and 2.4 variants, by the Kernel's flush:
  ``chose_tlb_flush``), its create_hpte, ``add_hash_page`` (update_mmu_cache's preload) and
  ``flush_hash_pages`` (routines/ppc32/hash_low_32.S, the routines the ppc750 backend runs);
* ``_tlbie`` and ``_tlbia`` (``routines/ppc32/tlb_603.S``; the 603 has no tlbia instruction:
  Linux runs 1024 tlbie), ``clear_page``, ``copy_page``, ``flush_dcache_icache``.

The kernel's own code runs in real mode (MSR[IR|DR] off), as on the 405 backend: Linux maps
its lowmem with BATs, the miss handlers run untranslated on the hardware too. With
``bats=False`` (2.2's ``nobats``, either reload) the kernel's routines run translated
instead, through the TLB (see ``PPC603``); the ledger counts their misses once per access
(``kernel_tlb_misses``) and, with the hash table, the kernel's pages that had no HPTE
(``kernel_htab_misses``: the handler leaves for 0x300 / 0x400, which during a kernel
routine branch to 2.2.0's hash_page for the kernel, routines/ppc32/nobats_hash_22.S).

What is simulated: user accesses (``Kernel.touch``). The hardware decides first
(``tlb_decides``): ``probe`` searches the CPU's TLB as the 603 does: the access's congruence
class (EA bits 15-19) in the ITLB (a fetch) or the DTLB, an entry for the page whose compare
word has the mm's VSID (entries are VSID-tagged: no flush on a context switch); then PP with
key 1 (Linux sets Ks = Kp = 1 in user segment registers): PP 0 no access, PP 2 read/write,
PP 1 / 3 read only. emu.hw.softtlb records every entry from the ``tlbld`` / ``tlbli`` hooks and
drops a whole class on each ``tlbie``, as the 603 does, and keeps the classes' LRU bit.

How a TLB miss is charged: by running the guest handler for that access. The model sets the
SPRs the 603 sets on the exception: IMISS / DMISS (the address), ICMP / DCMP (V | VSID |
API), HASH1 / HASH2 (the PTE groups at SDR1: MPC603e UM 5.5.2), SRR1 (KEY, I/D, WAY chosen
as the 603 does, an empty way else the LRU one, S/L, a real-mode MSR) and SRR0 = the halt
address; the handler's ``rfi`` ends the call. A handler that finds nothing leaves for the
storage-interrupt vector, where the model's one-instruction stub:

* pagetable: ends the call; the fault path follows (``Kernel.page_fault``, fixed cost
  ``fault_entry``);
* hash: branches to the DSI / ISI path (hash_miss_603.S), which runs in the same call: the
  prologue (its frame from SPRG2, ``user_frame``: the model's SRR1 has MSR[PR], a user
  access) and hash_page, which, if the Linux PTE allows the access, makes the HPTE and
  returns from the exception (``rfi`` to SRR0, the halt address): the retried access misses
  again and the handler finds the new HPTE. Else hash_page returns and the call ends at
  the halt address (da_slow, ia_slow) where 2.2.0 goes on to do_page_fault: the fault
  path follows. The run is charged as ``hash_miss_603``; there is no fixed cost.

A store to an entry loaded read only (a clean page: PP 3) is a DSI. Hash: Linux's DSI path
runs hash_page (``storage_interrupt``: the same guest path, entered at user_dsi603 with
DSISR's protection and store bits), which sets _PAGE_DIRTY and makes the HPTE writable
(and tlbie-s the entry); pagetable: hash_page is a ``blr`` on a 603 without a hash table
(MMU_init_hw, 2.4/2.6), so do_page_fault marks the PTE dirty and flush_tlb_page_nohash
tlbie-s the entry; the next miss goes to the store handler.

Flushing. Hash: the Kernel strategies of the hashed MMU (scan, the default, immediate,
batched) with flush_hash_pages, whose tlbie also empties the TLB class; update_mmu_cache
preloads young PTEs with add_hash_page. Pagetable: Linux 2.4's Hash == 0 paths
(arch/ppc/mm/tlb.c), the Kernel's ``tlbia`` strategy: flush_tlb_mm and flush_tlb_range run
_tlbia, flush_tlb_page _tlbie; no preload (update_mmu_cache returns when Hash == 0).
flush_tlb_page_nohash is _tlbie in both. Either reload also runs 2.2.0's own flush
(``tlb_flush="context"``, Dougan 1999's kernel): a range of more than 20 pages, and
flush_tlb_mm, give the mm a new context (set_context_22); a smaller range flushes each page
(hash: flush_range_search, the search of both groups and tlbie; pagetable: tlbie). The hash
reload also runs Linux 2.1.51's (``tlb_flush="search"``, the paper's unoptimized kernel):
flush_tlb_range and flush_tlb_page search for every page of the range, however long;
flush_tlb_mm gives the mm a new context, as 2.2.0's does (arch/ppc/mm/init.c of 2.1.51).
Those two kernels have no _PAGE_HASHPTE: with either 1998 flush the hash reload runs their
hash_page (hash_page_user22 without HASHPTE_24, with LINUX_2_1_51 for 2.1.51: no bit; the
PTE groups searched for the old HPTE only on a protection violation) and no preload (their
update_mmu_cache is empty); see ``chose_tlb_flush``.

Counts in the ledger: ``tlb_misses`` (the Kernel: misses seen by accesses),
``tlb_entries_loaded``, ``tlb_miss_no_pte`` (the handler and, for hash, hash_page found no
translation), ``tlbie`` / ``tlbia`` (the flush routines' calls);
hash only: ``htab_primary_hits`` / ``htab_secondary_hits`` (the handler found the HPTE),
``htab_misses`` (it did not: hash_page ran), ``tlb_miss_retries`` (the access after
hash_page), ``hash_page_dsi`` (the DSI path's hash_page), the HPTE status counts of
emu.kernel.ppc32 (hash_page_user22 returns none: the model reads the table after the run,
``_hash_miss``). ``tlb_miss_summary`` turns them into the hash-table hit rate on a TLB
miss and the cycles per TLB miss. In the LMBench-like workloads a process touches each page
once, so most misses are first touches, which find no HPTE (hash_page runs, often only to
find no PTE either); a working set larger than the TLB, touched again, misses pages whose
HPTEs are still there (the tests measure both).

Limits: user addresses only (the kernel's own TLB misses are modelled only with
``bats=False`` and only for its guest routines (segment 0 the kernel's: 2.2.0's
set_context then loads 1-7); its C paths are fixed costs that touch no
memory; the misses of the kernel's vmalloc space are not modelled); the hardware's exception entry costs the profile's
``[tlb] exception_entry`` per miss (an estimate; ledger row ``tlb_miss_entry``); the
handlers' loads of the HTAB and the page table go through the cache model, the simulated
user accesses do not; the 603's changed-bit
miss (a store through an entry with C = 0 raises the store miss) never happens here, since
both strategies load C = 1 whenever PP = 2; QEMU 5.0's ``tlbld`` also drops an entry for the
same page in the other way whatever its VSID, which the 603 does not: the record follows the
603 (the CPU's own TLB is never used to translate a user access here). Linux 2.2's
flush_tlb_mm gave the mm a new context (new VSIDs, the stale entries left to age out)
instead of flushing; the model follows 2.4 by default (tlbia, or the hash strategies
above) and 2.2.0 with ``tlb_flush="context"``.
"""
from __future__ import annotations

from unicorn import ppc_const

from ..hw import mmu
from ..context import routine
from ..hw.layout import HALT
from ..isa.assemble import assemble
from ..hw.softtlb import (DAR, DCMP, DMISS, DSISR, HASH1, HASH2, ICMP, IMISS, MSR_DR, MSR_IR,
                          MSR_ME, MSR_PR, SPRG2, SPRG3, SRR0, SRR1)
from .ppc32 import (CODE_END, CONTEXT_FLUSH_PAGES, HPTE_STATUS, ctx_to_vsid,
                    hash_low_prelude, htab_size_for)
from .arch import Arch
from .errors import KernelError
from .pgtable import (_PAGE_ACCESSED, _PAGE_DIRTY, _PAGE_HASHPTE, _PAGE_PRESENT, _PAGE_RW,
                      _PAGE_USER, PAGE_SIZE, TASK_SIZE)

RELOADS = ("pagetable", "hash")
MISS_VECTORS = {"x": 0x1000, "r": 0x1100, "w": 0x1200}   # MPC603e UM: ITLB, DTLB load, store
HANDLERS = {"hash": "ppc32/tlbmiss_603_hash.S", "pagetable": "ppc32/tlbmiss_603_kernel.S"}
#: the ledger rows of the 603's TLB-miss path: the handler runs (a hash-table miss's run
#: goes on into DataAccess and hash_page: ``hash_miss_603``) and their exception entries
HANDLER_ROWS = ("tlb_miss_603", "hash_miss_603")
MISS_ROWS = HANDLER_ROWS + ("tlb_miss_entry",)
ROUTINE_LINE = 32                      # LINE in clear_page.S, copy_page.S, flush_dcache_icache.S
# The storage-interrupt vectors: a handler that finds nothing lands here (module notes)
STORAGE_INTERRUPT_STUB = f"ba {HALT:#x}\n"
SRR1_KEY, SRR1_FETCH, SRR1_STORE = 1 << 19, 1 << 18, 1 << 16   # the 603's miss SRR1 bits
SRR1_WAY_SHIFT = 17
USER_SEGMENTS = TASK_SIZE >> 28        # segment registers below TASK_SIZE
THREAD_PGDIR = 0                       # tlbmiss_603_kernel.S: the pgdir in the thread block
# hash: the thread block's other words (routines/ppc32/hash_miss_603.S), as 2.1.51's
# hash_page and prologue read them: the mm pointer (the block itself, whose word 0 is the
# pgdir: MM_PGD 0) and the kernel stack pointer (tss.ksp)
THREAD_MM, THREAD_KSP = 4, 8
KERNEL_STACK = 512                     # the backend's kernel stack: one exception frame
INT_FRAME_SIZE, STACK_UNDERHEAD = 192, 64   # exception_22.S: the frame below the stack top
#: the kernel whose DataAccess / hash_page the hash reload runs, by the Kernel's flush
#: (chose_tlb_flush): 2.1.51's and 2.2.0's, else 2.4's Linux PTE (_PAGE_HASHPTE)
USER_HASH_KERNELS = {"search": "2.1.51", "context": "2.2.0"}
# DSISR of a DSI (603 UM 5.5.2 / head.S): no HPTE, a protection violation, a store
DSISR_PROTECTION, DSISR_STORE = 0x08000000, 0x02000000
# without BATs on the hashed 603, the hash-table code runs in real mode (2.4's hash_low.S;
# hash_page itself runs inside the miss's run, hash_miss_603.S); every other kernel routine
# translates
REAL_MODE_ROUTINES = frozenset({"add_hash_page", "flush_hash_pages"})
#: the DAR before a kernel routine runs (``PPC603._call_walking``): no access refused yet
NO_DAR = 0xFFFFFFFF
KERNEL_PTE_BITS = _PAGE_PRESENT | _PAGE_ACCESSED | _PAGE_DIRTY | _PAGE_RW   # mapin_ram's
#: mapin_ram's bits for the kernel's text, [_stext, etext) (2.2.0 arch/ppc/mm/init.c 851-857,
#: davej-history f6cce5dae): no _PAGE_RW, and _PAGE_USER ("On the powerpc, no user access
#: forces R/W kernel access"), which hash_page and the 603's handlers turn into PP 3 (head.S
#: 1252-1255, 643-646: _PAGE_USER -> both PP bits, less the low one with _PAGE_HWWRITE): read
#: only for the supervisor too. The model's text is its code region, below CODE_END.
KERNEL_TEXT_PTE_BITS = _PAGE_PRESENT | _PAGE_ACCESSED | _PAGE_USER


def kernel_page_tables(machine):
    """mapin_ram's page tables for all of RAM (2.2.0 builds them whether or not BATs map
    it; with ``nobats`` they are what the TLB loads): one PTE page per 4 MB, each page
    present and accessed, mapped to itself (the book's kernel sits at EA = physical, in
    segment 0); the text read only (``KERNEL_TEXT_PTE_BITS``), the rest dirty and writable,
    without _PAGE_USER. Returns {pgd index: PTE page}; every address space's page directory
    gets these entries, as pgd_alloc copies the kernel's part of swapper_pg_dir."""
    def pte(address):
        return address | (KERNEL_TEXT_PTE_BITS if address < CODE_END else KERNEL_PTE_BITS)
    tables = {}
    for index in range(-(-machine.ram_size // (4 << 20))):
        table = machine.alloc(PAGE_SIZE)
        base = index << 22
        machine.write(table, b"".join(pte(base + (k << 12)).to_bytes(4, "big")
                                      for k in range(1024) if base + (k << 12) < machine.ram_size))
        tables[index] = table
    return tables


def miss_registers(vsid, address, sdr1, access, way, user=False):
    """The SPRs a 603 sets on a TLB miss of ``access`` ('r', 'w', 'x') at ``address`` in a
    segment of ``vsid`` (MPC603e UM 5.5.2; QEMU ppc6xx_tlb miss paths), with SRR0 the halt
    address and SRR1 a real-mode MSR (the model's call returns there), KEY 1 (Kp: a user
    access, Linux's segment registers) and WAY = ``way``; ``user``: with MSR[PR], as a user
    program's miss has it (the hash reload's DSI path reads it: _PAGE_USER, 2.1.51's
    prologue; the rfi back to the halt address then leaves PR set, real mode)."""
    fetch, store = access == "x", access == "w"
    srr1 = SRR1_KEY | (SRR1_FETCH if fetch else 0) | (way << SRR1_WAY_SHIFT) | \
        (SRR1_STORE if store else 0) | MSR_ME | (MSR_PR if user else 0)
    return {SRR0: HALT, SRR1: srr1,
            IMISS if fetch else DMISS: address,
            ICMP if fetch else DCMP: mmu.pte_word0(vsid, address, False),
            HASH1: mmu.pteg_address(sdr1, mmu.primary_hash(vsid, address)),
            HASH2: mmu.pteg_address(sdr1, mmu.secondary_hash(vsid, address))}


def user_task_words(machine, thread):
    """What a user hash miss's DataAccess path (routines/ppc32/exception_22.S) reads of the
    running task, written into the thread block at ``thread`` (SPRG3): the mm pointer
    2.1.51's hash_page follows (the block itself: MM_PGD 0) and the kernel stack pointer
    2.1.51's prologue takes. Returns SPRG2's frame at the top of that stack (2.2.0's) and
    the word of 2.2.0's htab_reloads."""
    stack = machine.alloc(KERNEL_STACK, align=32)
    top = stack + KERNEL_STACK
    machine.write(thread + THREAD_MM, thread.to_bytes(4, "big"))
    machine.write(thread + THREAD_KSP, top.to_bytes(4, "big"))
    return top - INT_FRAME_SIZE - STACK_UNDERHEAD, machine.alloc(4, align=4)


def load_user_hash(machine, kernel, htab_reloads_word, handlers, fetch_equates):
    """2.2.0's DataAccess / InstructionAccess for a user page's hash-table miss as guest
    code: ``handlers`` (routines/ppc32/hash_miss_603.S or _604.S) from exception_22.S's
    macros, of ``kernel`` ("2.1.51", "2.2.0", or "2.4": 2.2.0's with 2.4's _PAGE_HASHPTE);
    ``fetch_equates`` say where a fetch's missed address is (the 603's IMISS, the 604's
    DAR: the model's SRR0 is the halt address)."""
    equates = {"TSS_PGDIR": THREAD_PGDIR, "TSS": 0, "TASK_MM": THREAD_MM, "MM_PGD": 0,
               "TSS_KSP": THREAD_KSP, "HALT": HALT,
               "create_hpte": machine.symbols["create_hpte"],
               "KDATA_HTAB_RELOADS": htab_reloads_word, **fetch_equates}
    prelude = "".join(f".equ {name}, {value:#x}\n" for name, value in equates.items())
    prelude += {"2.1.51": ".equ LINUX_2_1_51, 1\n", "2.4": ".equ HASHPTE_24, 1\n"}.get(
        kernel, "")
    machine.load(prelude + routine("ppc32/exception_22.S").read_text() +
                 routine(handlers).read_text())


class PPC603(Arch):
    """The 603 backend. Needs ``Machine("ppc603e", mmu=True)`` (emu.hw.softtlb runs the CPU
    model's software-loaded TLB). ``reload``: "pagetable" (the default: what Linux/PPC
    shipped from 2.2 on) or "hash"; ``htab_size`` / ``total_memory`` size the hash table as
    emu.kernel.ppc32 does (hash only). ``bats=False`` (2.2's ``nobats``): the kernel's
    routines run translated, through the TLB, as a kernel not mapped by a BAT does: segment
    0 is the kernel's (VSID 0, Ks = 0), every page directory holds mapin_ram's kernel PTEs
    (``kernel_page_tables``), so the kernel's pages share the TLB's classes with the
    user's; the pagetable handlers take 2.2.0's access check (KERNEL_PTES), and with the
    hash table a kernel page with no HPTE gets one from 2.2.0's hash_page
    (``_kernel_hash_misses``; the hash-table code itself runs in real mode,
    ``REAL_MODE_ROUTINES``). Only the routines that run as guest code take kernel TLB misses; the C paths'
    fixed costs touch no memory and take none (as with BATs)."""

    name = "ppc603"
    has_exec_permission = False        # PP has no execute bit; the segment's N bit is unused
    tlb_decides = True
    loaded_context = "segment registers"

    def __init__(self, machine, ledger, reload="pagetable", htab_size=None,
                 total_memory=None, bats=True):
        super().__init__(machine, ledger)
        soft = self._require_soft_tlb(machine, "603", "603", "ppc603e")
        if reload not in RELOADS:
            raise ValueError(f"reload must be one of {RELOADS}, not {reload!r}")
        if reload == "pagetable" and (htab_size or total_memory):
            raise ValueError("reload='pagetable' has no hash table: htab_size and "
                             "total_memory apply to reload='hash'")
        lines = {lv.name: lv.line for lv in machine.profile.caches if lv.name in ("L1I", "L1D")}
        if any(line != ROUTINE_LINE for line in lines.values()):
            raise ValueError(f"the 603 backend's page routines step {ROUTINE_LINE}-byte cache "
                             f"lines (the 603e's), but this profile's L1 lines are {lines}")
        soft.identity_only = False      # user pages map to other frames; see emu.hw.softtlb
        self.soft, self.reload, self.bats = soft, reload, bats
        self.entry_cycles = machine.profile.tlb.get("exception_entry", 0)   # per miss
        self.name = f"ppc603 ({reload})"
        self.tlb_flush_strategies = ("scan", "immediate", "batched", "context", "search") \
            if reload == "hash" else ("tlbia", "context")
        self.thread = machine.alloc(32, align=32)       # the current thread: its pgdir
        soft.regs.set_spr(SPRG3, self.thread)
        with machine.loading():
            if reload == "hash":
                self._load_hash_table(htab_size or htab_size_for(total_memory or
                                                                 machine.ram_size))
            handlers = routine(HANDLERS[reload]).read_text()
            machine.load(handlers if bats else ".equ KERNEL_PTES, 1\n" + handlers,
                         at=MISS_VECTORS["x"])
            machine.load(STORAGE_INTERRUPT_STUB, at=0x300)
            machine.load(STORAGE_INTERRUPT_STUB, at=0x400)
            for name in ("clear_page.S", "copy_page.S", "flush_dcache_icache.S", "tlb_603.S"):
                machine.load(routine(f"ppc32/{name}"))
            machine.load(("" if bats else ".equ KERNEL_SEGMENT0, 1\n") +    # nobats: 1-7
                         routine("ppc32/set_context_22.S").read_text())
        self.next_context = 1
        self.current = None             # the mm whose segment registers are loaded
        self.kernel_tables = {}
        if not bats:                    # nobats: swapper_pg_dir until a process runs
            self.kernel_tables = kernel_page_tables(machine)
            swapper = machine.alloc(PAGE_SIZE, align=PAGE_SIZE)
            self._kernel_mappings(swapper)
            machine.write(self.thread + THREAD_PGDIR, swapper.to_bytes(4, "big"))
            machine.mmu.set_segment(0, 0, ks=False, kp=True)
        # _PAGE_HASHPTE exists: a hash table under 2.4's flushes (chose_tlb_flush)
        self.hashpte = reload == "hash"
        # the storage-interrupt vectors' stubs outside a user run (Entry switches them): the
        # halt address, or with a hash table its DataAccess path (chose_tlb_flush)
        self.storage_stubs = {vector: assemble(STORAGE_INTERRUPT_STUB, "ppc32", vector).code
                              for vector in (0x300, 0x400)}
        self.user_hash = None           # hash: the kernel of that path, once loaded
        if reload == "hash":
            self.user_frame, self.htab_reloads_word = user_task_words(self.machine,
                                                                      self.thread)
        if not bats and reload == "hash":
            self._kernel_hash_misses()

    def _kernel_hash_misses(self):
        """nobats with a hash table: the kernel's pages need HPTEs too. A kernel routine's
        miss handler that finds none leaves for 0x300 / 0x400, which during the routine's
        run branch to 2.2.0's hash_page path for the kernel (routines/ppc32/
        nobats_hash_22.S: the page directory is the thread's, the one the backend keeps
        at SPRG3), back to the access; outside it they stay the model's stubs (a user
        miss's hash_page is the backend's DataAccess path, ``_load_user_hash``)."""
        m = self.machine
        self.nobats_reloads = m.alloc(8, align=8)
        m.load(f".equ create_hpte, {m.symbols['create_hpte']:#x}\n"
               f".equ NOBATS_RELOADS, {self.nobats_reloads:#x}\n" +
               routine("ppc32/nobats_hash_22.S").read_text())
        self.kernel_stubs = {vector: assemble(f"ba {m.symbols[name]:#x}\n", "ppc32",
                                              vector).code
                             for vector, name in ((0x300, "nobats_dsi22"),
                                                  (0x400, "nobats_isi22"))}

    @property
    def kernel_reloads(self):
        """HPTEs hash_page made for the kernel's own pages (without BATs, hashed)."""
        return self.machine.read_word(self.nobats_reloads)

    def chose_tlb_flush(self, strategy):
        """The 1998 kernels' flushes (``context``, ``search``) with a hash table are 2.1.51's
        and 2.2.0's kernels, which have no _PAGE_HASHPTE: their hash_page replaces 2.4's,
        and update_mmu_cache preloads nothing. The hash reload's DataAccess path is that
        kernel's (``_load_user_hash``)."""
        if self.reload != "hash":
            return
        if strategy in USER_HASH_KERNELS:
            self.hashpte = False
        self._load_user_hash(USER_HASH_KERNELS.get(strategy, "2.4"))

    def _load_user_hash(self, kernel):
        """Hash: the user hash miss's guest path (``load_user_hash``: hash_miss_603.S, the
        fetch's address from IMISS) of ``kernel``; the 0x300 / 0x400 stubs branch there."""
        m = self.machine
        load_user_hash(m, kernel, self.htab_reloads_word, "ppc32/hash_miss_603.S",
                       {"IMISS": IMISS, "FETCH_FROM_IMISS": 1})
        self.user_hash = kernel
        self.storage_stubs = {vector: assemble(f"ba {m.symbols[name]:#x}\n", "ppc32",
                                               vector).code
                              for vector, name in ((0x300, "user_dsi603"),
                                                   (0x400, "user_isi603"))}
        self._write_stubs(self.storage_stubs)

    @property
    def htab_reloads(self):
        """2.2.0's htab_reloads: the HPTEs the backend's DataAccess path made for user
        pages (2.1.51 has no such count)."""
        return self.machine.read_word(self.htab_reloads_word)

    def _load_hash_table(self, size):
        """The HTAB at SDR1 (the 603 computes HASH1/HASH2 from it) and hash_low_32.S."""
        machine = self.machine
        self.htab_base = machine.alloc(size, align=size)
        self.htab_size = size
        self.sdr1 = mmu.sdr1_for(self.htab_base, size)
        machine.mmu.sdr1 = self.sdr1
        self.kvars = machine.alloc(32, align=32)        # next_slot, pteg_full, searches
        machine.load(hash_low_prelude(self.htab_base, size, self.kvars) +
                     routine("ppc32/hash_low_32.S").read_text() +
                     routine("ppc32/flush_hash_search.S").read_text())

    # ------------------------------------------------------------ running kernel routines

    def call(self, entry, *args):
        """A kernel routine, in real mode (see the module notes), charged to the ledger."""
        return self._call_as(entry, entry, *args)

    def _call_as(self, label, entry, *args):
        if self.bats:
            run = self.machine.call(entry, *args, real_mode=True)
            hash_misses = 0
        elif self.reload != "hash":
            run = self._call_walking(entry, *args)
            hash_misses = 0
        elif entry in REAL_MODE_ROUTINES:       # real mode on the hardware too
            run = self.machine.call(entry, *args, real_mode=True)
            hash_misses = 0
        else:
            reloads = self.kernel_reloads
            self._write_stubs(self.kernel_stubs)
            try:
                run = self.machine.call(entry, *args)
            finally:
                self._write_stubs(self.storage_stubs)
            hash_misses = self.kernel_reloads - reloads
            self.ledger.count("kernel_htab_misses", hash_misses)
        self.ledger.guest(label, run)
        if not self.bats:               # the kernel's own misses, through the TLB, once per
            self.ledger.count("kernel_tlb_misses",     # access (not the retry's)
                              run.events.get("tlb_miss_exceptions", 0) - hash_misses)
        return run.return_value

    def _call_walking(self, entry, *args):
        """A kernel routine translated on the 603 walking the page table. An access its
        handler refuses (a store to the read-only text) leaves for the DSI at 0x300, whose C
        handler (do_page_fault) would oops on a kernel address; the model's stub there ends
        the call as if it had returned, so the handler's DAR, set to ``NO_DAR`` before the
        call, tells: a refused access is an error, not a short run."""
        self.soft.regs.set_spr(DAR, NO_DAR)
        run = self.machine.call(entry, *args)
        dar = self.soft.regs.spr(DAR)
        if dar != NO_DAR:
            raise KernelError(f"kernel routine {entry}: its access at {dar:#x} was refused "
                              "by the page's Linux PTE (the DSI: do_page_fault's oops)")
        return run

    def _write_stubs(self, stubs):
        """The vectors' branches. Unicorn drops its translations of the code written
        (Machine.write) by the address as the CPU would translate it now: in real mode, as
        the vectors run (after a translated routine the MSR still has IR and DR, and the
        kernel's segment need not translate 0x300 then)."""
        uc = self.machine.uc
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, msr & ~(MSR_IR | MSR_DR))
        try:
            for vector, code in stubs.items():
                self.machine.write(vector, code)
        finally:
            uc.reg_write(ppc_const.UC_PPC_REG_MSR, msr)

    # ------------------------------------------------------------------ contexts

    def new_context(self):
        """The next context number, round robin (its VSIDs: ctx_to_vsid)."""
        ctx = self.next_context
        self.next_context += 1
        return ctx

    def destroy_context(self, mm):
        if self.current is mm:
            self.current = None

    def switch_mm(self, mm):
        """set_context: the user segment registers get the mm's VSIDs with Ks = Kp = 1, and
        the thread's pgdir (the pagetable handlers' page directory) becomes the mm's."""
        first = 0 if self.bats else 1                   # nobats: 0 is the kernel's
        self.machine.mmu.set_segments({n: ctx_to_vsid(mm.context, n << 28)
                                       for n in range(first, USER_SEGMENTS)}, ks=True, kp=True)
        self._kernel_mappings(mm.pgd.address)
        self.machine.write(self.thread + THREAD_PGDIR, mm.pgd.address.to_bytes(4, "big"))
        self.current = mm

    def _kernel_mappings(self, pgd):
        """nobats: the kernel's entries in the page directory at ``pgd``."""
        for index, table in self.kernel_tables.items():
            self.machine.write(pgd + 4 * index, table.to_bytes(4, "big"))

    # ------------------------------------------------------------------ translations

    def compare_word(self, mm, address):
        """ICMP / DCMP: word 0 of a primary HPTE for ``address`` (V | VSID | API), the tag
        of the TLB entry ``tlbld`` / ``tlbli`` load for it."""
        return mmu.pte_word0(ctx_to_vsid(mm.context, address), address, False)

    def lookup(self, mm, address, fetch=False):
        """(way, compare word, RPA word) of the ITLB (``fetch``) or DTLB entry translating
        ``address`` in ``mm``, or None."""
        return self.soft.search603(address, self.compare_word(mm, address), fetch)

    @staticmethod
    def _permits(rpa, access):
        """PP with key 1: 0 no access, 2 read/write, 1 and 3 read only."""
        pp = rpa & 3
        return pp != 0 and (access != "w" or pp == 2)

    def probe(self, mm, address, access):
        """The 603's check of one user access: 'miss' (no entry: a TLB miss exception),
        'protection' (PP forbids it: a storage interrupt), 'hit' (the class's LRU bit moves)."""
        fetch = access == "x"
        found = self.lookup(mm, address, fetch)
        if found is None:
            return "miss"
        if not self._permits(found[2], access):
            return "protection"
        self.soft.use603(fetch, address, found[0])
        return "hit"

    def translates(self, mm, address, write):
        found = self.lookup(mm, address, False)
        return found is not None and self._permits(found[2], "w" if write else "r")

    def find_hpte(self, mm, address):
        """Where the hash handler will find ``address``'s HPTE: (secondary?, slot, HPTE
        address, word 1), or None (hash only)."""
        return mmu.find_pte(self.machine.read, self.sdr1, ctx_to_vsid(mm.context, address),
                            address)

    # ------------------------------------------------------------------ TLB misses

    def _run_miss_handler(self, mm, address, access):
        """One TLB miss exception: the SPRs as the 603 sets them, then the guest handler
        and, with a hash table whose search fails, 2.2.0's DataAccess / InstructionAccess
        and hash_page (``_load_user_hash``), all one run: charged as ``tlb_miss_603``, or
        ``hash_miss_603`` when the search failed. True if it loaded an entry for
        ``address``."""
        fetch = access == "x"
        way = self.soft.victim603(fetch, address)
        hashed = self.reload == "hash"
        registers = miss_registers(ctx_to_vsid(mm.context, address), address,
                                   self.sdr1 if hashed else 0, access, way, user=hashed)
        if hashed:
            registers[SPRG2] = self.user_frame      # the prologue's frame (from user mode)
        self.soft.regs.set_sprs(registers)
        self.ledger._add("tlb_miss_entry", "hardware", 1, self.entry_cycles)
        run = self.machine.call(MISS_VECTORS[access], real_mode=True)
        loaded = self.lookup(mm, address, fetch) is not None
        self.ledger.guest("hash_miss_603" if hashed and not loaded else "tlb_miss_603", run)
        return loaded

    def tlb_miss_for(self, mm, address, access):
        """The miss handler for ``access`` (see the module notes). True if an entry was
        loaded, False if there is no translation (the fault path follows)."""
        self._require_current(mm, "a TLB miss")
        if self.reload == "pagetable":
            loaded = self._run_miss_handler(mm, address, access)
            self.ledger.count("tlb_entries_loaded" if loaded else "tlb_miss_no_pte")
            return loaded
        return self._hash_miss(mm, address, access)

    def tlb_miss(self, mm, address, write):
        return self.tlb_miss_for(mm, address, "w" if write else "r")

    def _hash_miss(self, mm, address, access):
        """The hash reload's miss: the handler's search; if it fails, in the same run, the
        DataAccess path's hash_page (guest code) makes the HPTE from the Linux PTE, and
        the retried access misses again and finds it; or hash_page refuses (False: the
        fault path follows)."""
        if self.user_hash is None:
            raise KernelError("the hash reload's DataAccess path is loaded when the Kernel "
                              "chooses its flush (chose_tlb_flush)")
        found = self.find_hpte(mm, address)        # what the handler's search will find
        full = found is None and self._primary_full(mm, address)
        loaded = self._run_miss_handler(mm, address, access)
        if loaded != (found is not None):
            raise KernelError(f"the hash miss handler {'loaded' if loaded else 'missed'} "
                              f"{address:#x}, but the HTAB {'lacks' if loaded else 'holds'} "
                              "its HPTE")
        if found is not None:
            self.ledger.count("htab_secondary_hits" if found[0] else "htab_primary_hits")
            self.ledger.count("tlb_entries_loaded")
            return True
        self.ledger.count("htab_misses")
        made = self.find_hpte(mm, address)
        if made is None:                            # hash_page refused: do_page_fault
            self.ledger.count(HPTE_STATUS[16])
            self.ledger.count("tlb_miss_no_pte")
            return False
        self.ledger.count(HPTE_STATUS[1 if made[0] else 2 if full else 0])
        # the retried access misses again; the handler now finds the new HPTE
        self.ledger.count("tlb_miss_retries")
        if not self._run_miss_handler(mm, address, access):
            raise KernelError(f"hash_page inserted an HPTE for {address:#x} that the miss "
                              "handler did not find")
        self.ledger.count("tlb_entries_loaded")
        return True

    def _primary_full(self, mm, address):
        """Every HPTE of ``address``'s primary PTE group valid (create_hpte then tries the
        secondary group, and evicts if that is full too)."""
        group = mmu.pteg_address(self.sdr1, mmu.primary_hash(ctx_to_vsid(mm.context,
                                                                         address), address))
        words = self.machine.read(group, 64)
        return all(words[k] & 0x80 for k in range(0, 64, 8))

    def storage_interrupt(self, mm, address, access):
        """Hash: a store to an entry loaded read only (a clean page) is a DSI (DSISR:
        protection, store), whose DataAccess path runs hash_page as guest code
        (``_load_user_hash``): it marks the PTE dirty, makes the HPTE writable and
        tlbie-s the entry (head.S DataAccess, 2.2). True if it did. Pagetable:
        do_page_fault does it (False)."""
        if self.reload != "hash" or access != "w":
            return False
        self._require_current(mm, "a data storage interrupt")
        self.ledger.count("hash_page_dsi")
        self.soft.regs.set_sprs({SRR0: HALT, SRR1: MSR_PR | MSR_ME, DAR: address,
                                 DSISR: DSISR_PROTECTION | DSISR_STORE,
                                 SPRG2: self.user_frame})
        run = self.machine.call("user_dsi603", real_mode=True)
        self.ledger.guest("hash_page_dsi", run)
        made = self.find_hpte(mm, address)
        writable = made is not None and self._permits(made[3], "w")
        self.ledger.count(HPTE_STATUS[3 if writable else 16])
        return writable

    def preload(self, mm, address, pte_page):
        """update_mmu_cache: add_hash_page (hash; young PTEs only: the caller checks);
        nothing without a hash table (2.4: it returns when Hash == 0), nor in 2.1.51 and
        2.2.0 (include/asm-ppc/pgtable.h: ``update_mmu_cache(vma, addr, pte) do { } while
        (0)``)."""
        if self.hashpte:
            status = self.call("add_hash_page", mm.context, address, pte_page)
            self.ledger.count(HPTE_STATUS[status])

    # ------------------------------------------------------------------ flushing

    def flush_ptes(self, mm, address, pte_page, count):
        """Hash: flush_hash_pages over ``count`` Linux PTEs of one PTE page (its tlbie
        empties each TLB class too). Returns the HPTEs invalidated."""
        if self.reload != "hash":
            raise KernelError("flush_ptes is the hash table's; reload='pagetable' uses the "
                              "tlbia strategy")
        if not self.hashpte:
            raise KernelError("flush_ptes reads _PAGE_HASHPTE, which the 1998 kernels "
                              "(tlb_flush 'context', 'search') do not have: they search")
        n = self.call("flush_hash_pages", mm.context, address, pte_page, count)
        self.ledger.count("flush_calls")
        self.ledger.count("lptes_examined", count)
        self.ledger.count("hpte_invalidated", n)
        return n

    def flush_tlb_page(self, mm, address):
        """_tlbie: the page's congruence class, both ways, both TLBs."""
        self.call("tlbie_603", address)
        self.ledger.count("tlbie")

    flush_tlb_page_nohash = flush_tlb_page

    def flush_tlb_all(self):
        """_tlbia: 1024 tlbie (the 603 has no tlbia)."""
        self.call("tlbia_603")
        self.ledger.count("tlbia")

    def new_context_for(self, mm):
        """2.2.0's flush_tlb_mm (the ``context`` strategy): the mm gets a new context, its
        old TLB entries (old VSIDs) can never match again and age out; set_context loads
        the new one at once if the mm is the running one."""
        mm.context = self.new_context()
        self.ledger.count("new_contexts")
        if self.current is mm:
            self.call("set_context_22", mm.context)
            self.switch_mm(mm)

    def flush_range_context(self, mm, start, end):
        """2.2.0's flush_tlb_range (the ``context`` strategy): more than
        ``CONTEXT_FLUSH_PAGES`` pages, a new context; fewer, flush_hash_page of each page:
        with a hash table its search of both groups and tlbie (flush_range_search, as the
        604's), on a 603 without one the page's tlbie."""
        start &= ~(PAGE_SIZE - 1)
        end = min(end, TASK_SIZE)
        pages = max(0, -(-(end - start) // PAGE_SIZE))
        if pages > CONTEXT_FLUSH_PAGES:
            self.new_context_for(mm)
            return
        if self.reload == "hash":
            self.flush_range_search(mm, start, end)
            return
        for k in range(pages):
            self.flush_tlb_page(mm, start + k * PAGE_SIZE)

    def flush_range_search(self, mm, start, end):
        """Linux 2.1.51's flush_tlb_range (the ``search`` strategy; arch/ppc/mm/init.c):
        flush_hash_page of every page of the range, however long, whether or not it ever
        had an HPTE: the search of both groups, then tlbie (flush_range_search, the
        routine the 604's ``search`` flush runs)."""
        if self.reload != "hash":
            raise KernelError("flush_range_search searches the hash table; "
                              "reload='pagetable' has none")
        start &= ~(PAGE_SIZE - 1)
        end = min(end, TASK_SIZE)
        pages = max(0, -(-(end - start) // PAGE_SIZE))
        if pages:
            n = self.call("flush_range_search", mm.context, start, pages)
            self.ledger.count("pages_searched", pages)
            self.ledger.count("hpte_invalidated", n)

    def has_hashpte(self, pte):
        return self.hashpte and bool(pte & _PAGE_HASHPTE)


def tlb_miss_summary(spent):
    """The TLB-miss figures of a ledger (or a workloads Result): misses the accesses saw,
    guest handler runs, cycles of the miss path (the handlers with, on a hash-table miss,
    DataAccess and hash_page in the same run, and each run's exception entry) per miss,
    and the hash-table hit rate on a TLB miss (the share of first handler runs that found
    the HPTE; Dougan 1999: 80-98%)."""
    ledger = getattr(spent, "ledger", None) or spent
    counts, rows = ledger.counts, ledger.rows
    misses = counts.get("tlb_misses", 0)
    htab_misses = counts.get("htab_misses", 0)
    hits = counts.get("htab_primary_hits", 0) + counts.get("htab_secondary_hits", 0)
    cycles = sum(rows.get(row, [None, 0, 0])[2] for row in MISS_ROWS)
    return {"tlb_misses": misses,
            "handler_runs": sum(rows.get(row, [None, 0])[1] for row in HANDLER_ROWS),
            "miss_cycles": cycles,
            "cycles_per_miss": cycles / misses if misses else 0.0,
            "htab_hit_rate": hits / (hits + htab_misses) if hits + htab_misses else None,
            "htab_primary_share": counts.get("htab_primary_hits", 0) / hits if hits else None}
