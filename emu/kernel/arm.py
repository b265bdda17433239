"""The ARMv7 backend (Cortex-A9: ``Machine("cortex-a9", mmu=True)``), as a Linux 2.6.35-era
SMP kernel runs its memory management (Yun 2011 measured 2.6.36), before and after the four
fixes of Yun 2011: PK1 (no D-cache clean in set_pte_ext), PK2 (the page lock's barriers as
smp_mb() instead of mb(), which syncs the PL310), PK3 (no D-cache flush after a
copy-on-write copy), PK4 (no D-cache clean of new page tables). Option ``fixes``, e.g.
``make_kernel(profile="cortex-a9", fixes={"PK1", "PK3"})``; none: the stock kernel.

What runs as guest code, its cycles measured and charged (routines/arm, one program):

* ``cpu_v7_set_pte_ext`` for every Linux PTE the generic VM writes (``write_pte``: the
  fault paths), for each PTE zap_pte_range clears (called from the guest's loop, zap_v7.S)
  and for fork's write-protect and copy of each PTE (called from copy_pte_range's guest
  loop, copy_v7.S, which like 2.6.36 copies only the areas with an anon_vma), or
  ``cpu_v7_set_pte_ext_pk1`` under PK1; the ledger charges both as ``cpu_v7_set_pte_ext``;
* the page-table tree: ``pgd_alloc`` (get_pgd_slow: ``__memzero`` over the user half,
  ``memcpy`` of the kernel half from swapper_pg_dir, then, before PK4, ``clean_dcache_area``
  over the 16 KB), ``pte_alloc_one`` (a page zeroed by ``clear_page``, then, before PK4,
  ``clean_dcache_area`` over its hardware half) and ``pmd_populate`` (two first-level
  entries and flush_pmd_entry's clean of their line: the SMP v7wbi flags of the time have
  TLB_DCLEAN, which later kernels dropped; none of the paper's fixes removes it);
* ``copy_user_highpage`` (copypage-v6.c v6_copy_user_highpage_nonaliasing, which 2.6.35
  uses for ARMv7): ``copy_page``, then, before PK3, ``__cpuc_flush_dcache_area``
  (``v7_flush_kern_dcache_area``) over the copy; ``clear_user_highpage``: ``clear_page``;
* TLB maintenance by ASID, no hash table (the Kernel strategy ``asid``): flush_tlb_page
  and flush_tlb_range by MVA and ASID (TLBIMVAIS, page by page), flush_tlb_mm by ASID
  (TLBIASIDIS), each with the branch-predictor invalidation and barriers of the SMP
  flags (TLB_V7_IS_BTB);
* ``cpu_v7_switch_mm`` (TTBR0 with the SMP walk attributes, CONTEXTIDR); ASIDs as
  arch/arm/mm/context.c hands them out, 255 per generation, the TLB flushed at a roll-over;
* the page lock (routines/arm/pagelock.S, 2.6.36's bit operations): ``lock_page`` where a
  file fault's filemap_fault / shmem_fault returns the page locked and where do_wp_page
  trylocks an anonymous page, ``unlock_page`` where __do_fault and do_wp_page release it:
  clear_bit_unlock and smp_mb__after_clear_bit, each barrier mb() (dsb, then the PL310's
  cache sync, a device store every core's sync queues behind) before PK2, smp_mb() (dmb)
  after; ``struct page`` (32 bytes, flags first) and the zone's wait table are in guest RAM.
  In 2.6.36's mm/, kernel/ and fs/exec.c the two barrier macros are used by unlock_page,
  end_page_writeback and the bdi code, and by unlock_buffer in fs/buffer.c: of these only
  unlock_page is on the paths lat_proc and lat_pagefault drive (read in NVIDIA's 2.6.36
  tree). The other bit operations on those paths (update_mmu_cache's test_and_set_bit of
  PG_dcache_clean, with an smp_dmb on each side) have no mb() and are not modelled;
* I-cache coherence for executable pages (policy ``sync_exec``, the default here; Yun 2011
  section 4.3 names sync_icache_dcache() as what makes PK3 safe): the page's D-cache lines
  (``v7_flush_kern_dcache_area``) and the I-cache (``__flush_icache_all``, ICIALLUIS).
  ``coherent_user_range`` runs ``v7_coherent_user_range`` (flush_icache_range).

The page tables, in guest RAM: a 16 KB pgd (order-2, 16 KB aligned) of 2048 Linux entries
of 8 bytes, each two hardware first-level pointers (PGDIR_SHIFT 21); PTE pages of two
Linux tables (+0, +1024: 512 PTEs for 2 MB) and two hardware tables (+2048, +3072), the
layout of the paper's Figure 5 and of Linux 2.6.38 on. (2.6.35-36 kept the hardware
tables in the lower half, set_pte_ext storing at ptep - 2048 and pte_alloc_one cleaning
the page's first 2048 bytes: the same stores and cleans.) Linux PTE bits are 2.6.35's
(arch/arm/include/asm/pgtable.h): PRESENT, YOUNG, DIRTY, WRITE, USER, EXEC, and a user
page's memory type WRITEALLOC with SHARED (an SMP kernel's user_pgprot); ``read_pte`` /
``write_pte`` translate from and to the generic VM's bits. The hardware lacks young and
dirty: set_pte_ext writes no hardware entry for an old PTE and a read-only one for a
clean PTE, so first accesses abort (``tlb_miss`` returns False) and the generic fault path
marks the PTE young or dirty. The kernel half of each pgd is a copy of the backend's
swapper_pg_dir, which maps the model's RAM with 1 MB sections at PAGE_OFFSET = TASK_SIZE
(a 2G/2G split: the generic VM's TASK_SIZE, the one the whole ARM model uses; a real
VMSPLIT_2G kernel's TASK_SIZE is 0x7F000000, the modules' 16 MB below it). Mainline
2.6.36 defaults to the 3G/1G split (arch/arm/Kconfig 1261-1282: VMSPLIT_3G, PAGE_OFFSET
0xC0000000) with TASK_SIZE = PAGE_OFFSET - 16 MB (arch/arm/include/asm/memory.h 34-36:
0xBF000000; the modules below PAGE_OFFSET), and Yun 2011 does not give its board's
.config: the model's split is a choice, not the paper's. What it moves: pgd_alloc zeroes
the user entries (FIRST_KERNEL_PGD_NR = TASK_SIZE / 2 MB, 8 bytes each) and copies the
kernel's (arch/arm/mm/pgd.c 20, 35-42; asm/pgtable.h 137), 8 KB and 8 KB here, 12,224 and
4,160 bytes under the 3G/1G split.

What is simulated, not run: user accesses. ``translates`` reads the first- and
second-level descriptors of the address space's pgd as the profile's table walker would
(``emu.hw.mmu.walker_word``: through the L1 D-cache on the Cortex-A9; memory's copy on a
profile with ``walk_through_l1 = false``, an older core, where a descriptor still dirty in
the L1 D is not seen) and checks the user access rights (AP, APX); the walk is not charged
and the model keeps no TLB for user accesses (as the hashed backends keep none), so a TLB
invalidation costs its cycles and counts but has no entry to drop. Kernel routines run
with the MMU model off: Linux maps lowmem with 1 MB sections, whose rare TLB misses the
model leaves out. The rest of the C around the routines is the generic fixed costs
(emu.kernel.costs).

Why PK1 and PK4 are safe on the Cortex-A9 and not before: its walker reads descriptors
through the L1 D (TTBR0 IRGN write-back); a walker that reads memory needs the clean, or
it sees the old descriptor. On such a profile the model shows it: under PK1 a new PTE is
not seen, the access aborts again, the fault path finds the PTE fine and writes it again,
and the Kernel gives up after three faults.

Outer cache: no routine here writes the PL310's registers, and none needs to. The cleans
and flushes are CP15 operations on the L1 D (what the kernel runs: clean_dcache_area,
__cpuc_flush_dcache_area); the table walk of an SMP kernel is outer-cacheable (TTBR0 RGN)
and the PL310 is the point of unification, so a line pushed out of the L1 D is where the
walker and the I-cache look. The older-walker profile reads the level below the L1 D (the
L2) likewise. The one PL310 register the kernel model writes is CACHE_SYNC, mb()'s
outer_sync in unlock_page before PK2: the core's outer-cache model charges it and queues
the cores' syncs one behind the other (emu.hw.cache, profile ``[outer_cache]``). The sync is
mainline 2.6.36's l2x0_cache_sync, under l2x0_lock with interrupts off (option
``outer_sync="atomic"``: NVIDIA's lock-free one); the cycles interrupts are off are charged
to _raw_spin_unlock_irqrestore, where perf's samples of them land. A clean's write-back is
not waited for where it is issued: the next dsb waits for it, and the PL310 takes it in turn
with every core's lines and syncs (the profile's ``maintenance_in_time``).

The generic fault path is guest code too (routines/arm/fault_v7.S, emu.kernel.armfault):
the data abort's entry and exit, do_page_fault (mmap_sem's trylock and up_read under its
wait_lock), find_vma, handle_mm_fault, filemap_fault, find_get_page (2.6.36's lockless
radix-tree walk and speculative reference: page_cache_get_speculative, atomic_inc_not_zero
on the struct page's count), __do_fault and page_add_file_rmap (a fault on a cached page,
from find_get_page to the PTE lock's release, in one guest call: routines/arm/filefault_v7.S,
each function still charged to its own row); so is zap_pte_range's work
over each PTE page an unmap reaches, one guest call (routines/arm/zap_v7.S: vm_normal_page,
pte_clear, tlb_remove_tlb_entry, mark_page_accessed, page_remove_rmap,
free_page_and_swap_cache); the
anonymous and write-protect paths' bookkeeping stays the fixed costs of emu.kernel.costs.

On several CPUs (``Machine("cortex-a9", cores=N)``, the Kernel's SMP mode) the kernel's
locks are guest spin locks (routines/arm/spinlock.S): the generic VM's, and cpu_asid_lock
around __new_context.

Limits: no IPIs (an ASID roll-over flushes this CPU's TLB only, where 2.6.36's
flush_context resets every CPU's); a CPU that finds a page locked spins on its flag until
the holder unlocks it, where __lock_page sleeps and unlock_page's wake_up_page wakes it
(nobody waits in the model's queues, so wake_up_page only looks); user accesses are not run, so the misses a flush (clean and invalidate)
causes to the user's next accesses of the page are not charged, which understates PK3;
4 KB pages only, no sections for user memory; the user address layout is the generic VM's
PPC32 one; the ASID is passed to cpu_v7_switch_mm in a register (the kernel loads it from
the mm); ASID allocation's C and the branch predictors' state are not modelled; the
sync_exec policy syncs a page where the generic VM maps it after a fault, where the kernel
does it in set_pte_at for every present user exec PTE (see emu.kernel.policy); a kernel
on one CPU runs the SMP forms of l2x0_cache_sync's lock and of the speculative reference
(a uniprocessor kernel has no lock there and no dmb in its atomics).
"""
from __future__ import annotations

from ..hw import mmu
from ..context import routine
from .arch import Arch
from .armfault import FaultPath
from .errors import KernelError
from .pages import Page
from .pgtable import (_PAGE_ACCESSED, _PAGE_DIRTY, _PAGE_EXEC, _PAGE_PRESENT, _PAGE_RW,
                      _PAGE_USER, PAGE_SHIFT, PAGE_SIZE, TASK_SIZE)

FIXES = {"PK1": "set_pte_ext without the D-cache clean of the hardware PTE",
         "PK2": "the bit operations' smp_mb__{before,after}_clear_bit as smp_mb() (dmb) "
                "instead of mb() (dsb and the PL310's cache sync), in unlock_page",
         "PK3": "copy_user_highpage without the D-cache flush of the copy",
         "PK4": "no clean_dcache_area over new page tables (pgd, PTE page)"}

# Linux PTE bits, 2.6.35 (arch/arm/include/asm/pgtable.h), beside the generic VM's bit each
# stands for
L_PTE_PRESENT, L_PTE_YOUNG, L_PTE_DIRTY, L_PTE_WRITE = 0x001, 0x002, 0x040, 0x080
L_PTE_USER, L_PTE_EXEC, L_PTE_SHARED = 0x100, 0x200, 0x400
L_PTE_MT_WRITEALLOC = 0x07 << 2
USER_MEMORY = L_PTE_MT_WRITEALLOC | L_PTE_SHARED      # a user page of an SMP kernel
BITS = ((_PAGE_PRESENT, L_PTE_PRESENT), (_PAGE_ACCESSED, L_PTE_YOUNG),
        (_PAGE_DIRTY, L_PTE_DIRTY), (_PAGE_RW, L_PTE_WRITE), (_PAGE_USER, L_PTE_USER),
        (_PAGE_EXEC, L_PTE_EXEC))
PTE_EXT_NG = 0x800                  # not global: set_pte_at's ext for a user address
PTE_HWTABLE_OFF = 2048              # the hardware tables in a PTE page
USER_TABLE = 0x31                   # _PAGE_USER_TABLE: coarse table, bit 4, domain user
PGD_BYTES = 16 << 10                # PTRS_PER_PGD 2048 x 8 bytes
USER_PGD_BYTES = (TASK_SIZE >> 21) * 8      # USER_PTRS_PER_PGD entries
# swapper_pg_dir's lowmem: 1 MB sections, kernel read/write, write-back write-allocate,
# shareable (PMD_TYPE_SECT | PMD_SECT_AP_WRITE | PMD_SECT_WBWA | PMD_SECT_S)
LOWMEM_SECTION = 0x2 | 0x400 | 0x1000 | 0xC | 0x10000
LINE = 32                           # the Cortex-A9 L1 line, which Unicorn's CTR reports
ASID_BITS = 8
ROUTINES = ("proc_v7.S", "cache_v7.S", "tlb_v7.S", "page_v7.S", "pagelock.S", "fault_v7.S",
            "zap_v7.S", "anon_v7.S", "wp_v7.S",
            "lru_v7.S", "copy_v7.S", "filefault_v7.S")
#: the macros the ARM routines share (arch_spin_lock's loop, atomic_add_return's), put
#: before each load of them
MACROS = "arch_spinlock.S"
STRUCT_PAGE = 32                    # sizeof(struct page) on 32-bit ARM of 2.6.36
PAGE_COUNT = 4                      # its atomic_t _count, after the flags
PAGES_PER_WAITQUEUE = 256           # mm/page_alloc.c: wait_table_hash_nr_entries
WAIT_QUEUE_HEAD = 12                # spinlock_t, then the list_head task_list


def routines_source(names=ROUTINES):
    """The text of the ARM routine files ``names`` (routines/arm) with the macros they share
    (MACROS) in front, what a Machine loads: the assembler has no .include, and a macro
    lasts one load. The macros assemble to no bytes, so no routine moves."""
    return "".join(routine(f"arm/{name}").read_text() for name in (MACROS, *names))


#: outer_cache.sync of the PL310 (routines/arm/pagelock.S): mainline 2.6.36's, under
#: l2x0_lock with interrupts off, or the lock-free one of NVIDIA's Tegra tree
OUTER_SYNCS = {"locked": "l2x0_cache_sync", "atomic": "l2x0_cache_sync_atomic"}
OUTER_BLOCK, OUTER_L2X0_LOCK = 64, 32   # pagelock.S's OUTER_* block: its size, the lock's place
#: where a timer-sampling profiler sees the locked sync: on the A9 perf's PMU interrupt is
#: an ordinary IRQ, masked from local_irq_save to local_irq_restore, so the samples of what
#: runs with interrupts off land on the instruction after the restore, in
#: _raw_spin_unlock_irqrestore (Yun 2011 Figure 1 lists it second of the ARM-only symbols)
IRQ_OFF_SYMBOL = "_raw_spin_unlock_irqrestore"


def outer_cache_block(machine, sync="locked"):
    """The kernel's outer_cache.sync, l2x0_base and l2x0_lock (pagelock.S's OUTER_* block)
    in guest RAM, for ``sync`` (one of OUTER_SYNCS): its address, or 0 on a machine without
    an outer cache (outer_sync does nothing). pagelock.S must be loaded."""
    if sync not in OUTER_SYNCS:
        raise ValueError(f"outer_sync must be one of {tuple(OUTER_SYNCS)}, not {sync!r}")
    if machine.outer_cache_base is None:
        return 0
    block = machine.alloc(OUTER_BLOCK, align=32)
    words = (machine.address_of(OUTER_SYNCS[sync]), machine.outer_cache_base)
    machine.write(block, b"".join(w.to_bytes(4, "little") for w in words))
    machine.write(block + OUTER_L2X0_LOCK, bytes(4))               # l2x0_lock: free
    return block


def parse_fixes(fixes):
    """A set of fix names from a name, an iterable of names or None; refuses others."""
    if fixes is None:
        return frozenset()
    names = {fixes} if isinstance(fixes, str) else set(fixes)
    for name in names:
        if name not in FIXES:
            raise ValueError(f"unknown fix {name!r}: the ARM backend knows "
                             f"{', '.join(f'{k} ({v})' for k, v in FIXES.items())}")
    return frozenset(names)


def _to_native_bits(generic):
    """The ARM bits of a generic PTE's flag bits (BITS), one by one."""
    native = 0
    for ours, theirs in BITS:
        if generic & ours:
            native |= theirs
    return native


def _from_native_bits(native):
    """The generic flag bits of an ARM PTE's bits (BITS), one by one."""
    generic = 0
    for ours, theirs in BITS:
        if native & theirs:
            generic |= ours
    return generic


# every flag of both sides is below the frame (bit 12), so a PTE's flags translate by its
# low 12 bits alone: looked up in a table made once by the loops above (a hot path: about
# 17,000 PTE reads in a four-core Yun lat_pagefault run)
assert all(ours < 0x1000 and theirs < 0x1000 for ours, theirs in BITS)
_TO_NATIVE = tuple(_to_native_bits(low) for low in range(0x1000))
_FROM_NATIVE = tuple(_from_native_bits(low) for low in range(0x1000))


def to_native(generic):
    """A generic (PPC32-bit) Linux PTE as ARM Linux 2.6.35 stores it: the frame, its bits,
    and a user page's memory type (0 stays 0: pte_clear)."""
    if not generic:
        return 0
    return (generic & 0xFFFFF000) | USER_MEMORY | _TO_NATIVE[generic & 0xFFF]


def from_native(native):
    """The generic VM's view of an ARM Linux PTE (the memory type has no counterpart)."""
    return (native & 0xFFFFF000) | _FROM_NATIVE[native & 0xFFF]


def user_may(descriptor, write):
    """Does a second-level descriptor let a user load (or store) through? A small page
    (type 2 or 3) with AP[1:0] = 10 (user read) or 11 (user read/write, unless APX)."""
    if not descriptor & 2:
        return False                # a fault entry (or a 64 KB page, which Linux never uses)
    ap, apx = (descriptor >> 4) & 3, (descriptor >> 9) & 1
    return ap == 3 and not apx if write else ap >= 2


class ARMv7(FaultPath, Arch):
    """The ARMv7 short-descriptor backend. ``fixes``: which of PK1..PK4 are applied;
    ``outer_sync``: which PL310 sync mb() calls (OUTER_SYNCS: mainline's under l2x0_lock, the
    default, or the lock-free one)."""

    name = "armv7"
    has_exec_permission = True          # XN, from L_PTE_EXEC
    tlb_flush_strategies = ("asid",)
    default_policy = "sync_exec"
    table_levels = ((21, 11),)          # pgd: 2048 entries, 2 MB each (PGDIR_SHIFT 21)
    dir_bytes = 8                       # an entry: two hardware first-level descriptors
    pte_index_bits = 9                  # 512 Linux PTEs per PTE page
    pte_bytes = 4

    def __init__(self, machine, ledger, fixes=None, outer_sync="locked"):
        super().__init__(machine, ledger)
        self._require_mmu(machine, "arm", mmu.MODE_ARM_SHORT, "ARM", "cortex-a9",
                          "an ARM machine with the short-descriptor MMU model")
        line = machine.profile.cache("L1D").line
        if line != LINE:
            raise ValueError(f"the ARM backend's routines step the line size Unicorn's "
                             f"Cortex-A9 reports ({LINE} bytes), but this profile's L1 D "
                             f"line is {line}")
        self.fixes = parse_fixes(fixes)
        machine.load(routines_source())
        self.outer_sync = outer_sync
        self.outer_cache = outer_cache_block(machine, outer_sync)
        self.swapper_pg_dir = machine.alloc(PGD_BYTES, align=PGD_BYTES)
        self._map_lowmem()
        self.free_pgds = []             # 16 KB blocks freed, handed out again first
        self.last_context = 1 << ASID_BITS  # cpu_last_asid: ASID_FIRST_VERSION
        self.asid_lock = None               # cpu_asid_lock's word (taken on several CPUs)
        self.current = None

    def load_spin_locks(self):
        """spinlock.S with the macros it shares (arch_spin_lock's loop)."""
        self.machine.load(routines_source(("spinlock.S",)))

    def _map_lowmem(self):
        """swapper_pg_dir's kernel half: the RAM as 1 MB sections at PAGE_OFFSET."""
        for mb in range(-(-self.machine.ram_size >> 20)):
            slot = self.swapper_pg_dir + (((TASK_SIZE >> 20) + mb) << 2)
            self.machine.write(slot, ((mb << 20) | LOWMEM_SECTION).to_bytes(4, "little"))

    def applied(self, fix):
        return fix in self.fixes

    # ------------------------------------------------------------ running kernel routines

    def call(self, entry, *args, charge=None):
        """A kernel routine, with the MMU model off (see the module notes), charged."""
        run = self.machine.call_untranslated(entry, *args)
        self.ledger.guest(charge or entry, run)
        return run.return_value

    def clean_dcache_area(self, start, size, why):
        """cpu_v7_dcache_clean_area over [start, start + size), charged to ``why``."""
        self.call("cpu_v7_dcache_clean_area", start, size, charge=f"clean_dcache_area ({why})")
        self.ledger.count(f"lines_cleaned:{why}", -(-size // LINE))

    # ------------------------------------------------------------------ Linux PTEs

    def dir_entry(self, depth, table):
        """The first hardware pointer of a pgd entry to the PTE page ``table``."""
        return (table + PTE_HWTABLE_OFF) | USER_TABLE

    def dir_table(self, depth, entry):
        return entry & ~(PAGE_SIZE - 1)

    def populate(self, depth, slot, table):
        """pmd_populate: both hardware pointers, then flush_pmd_entry's clean."""
        self.call("pmd_populate", slot, table)
        self.ledger.count("lines_cleaned:flush_pmd_entry")

    def read_pte(self, ptep):
        return from_native(self.machine.read_word(ptep))

    def write_pte(self, ptep, value):
        self.set_pte(ptep, to_native(value))

    def set_pte(self, ptep, native, ext=PTE_EXT_NG):
        """set_pte_at: cpu_v7_set_pte_ext with the Linux PTE ``native`` (ARM bits)."""
        pk1 = self.applied("PK1")
        self.call("cpu_v7_set_pte_ext_pk1" if pk1 else "cpu_v7_set_pte_ext", ptep, native, ext,
                  charge="cpu_v7_set_pte_ext")
        self.ledger.count("set_pte")
        if not pk1:
            self.ledger.count("lines_cleaned:set_pte")

    def native_pte(self, value):
        """The Linux PTE set_pte_at stores for the generic VM's ``value`` (write_pte's)."""
        return to_native(value)

    def pte_was_set(self, ptep):
        """set_pte's counts, for a set_pte_ext a guest routine called itself."""
        self.ledger.count("set_pte")
        if not self.applied("PK1"):
            self.ledger.count("lines_cleaned:set_pte")

    def hardware_pte(self, ptep):
        """The hardware PTE twin of the Linux PTE at ``ptep``, as stored in RAM."""
        return self.machine.read_word(ptep + PTE_HWTABLE_OFF)

    # ------------------------------------------------------------------ table pages

    def pgd_alloc(self, kernel):
        """get_pgd_slow: an order-2 block, the user half zeroed, the kernel half copied
        from swapper_pg_dir, then (before PK4) the whole 16 KB cleaned."""
        kernel.ledger.fixed("alloc_page")
        kernel.ledger.count("pages_allocated", PGD_BYTES // PAGE_SIZE)
        pgd = self.free_pgds.pop() if self.free_pgds else \
            self.machine.alloc(PGD_BYTES, align=PGD_BYTES)
        self.call("__memzero", pgd, USER_PGD_BYTES, charge="__memzero (get_pgd_slow)")
        self.call("memcpy", pgd + USER_PGD_BYTES, self.swapper_pg_dir + USER_PGD_BYTES,
                  PGD_BYTES - USER_PGD_BYTES, charge="memcpy (get_pgd_slow)")
        kernel.ledger.fixed("pgd_alloc")
        if not self.applied("PK4"):
            self.clean_dcache_area(pgd, PGD_BYTES, "get_pgd_slow")
        return Page(pgd >> PAGE_SHIFT, count=1, kind="pgtable")

    def pgd_free(self, kernel, pgd):
        """free_pgd_slow: the block goes back (free_pages(pgd, 2))."""
        kernel.ledger.fixed("free_page")
        kernel.ledger.count("pages_freed", PGD_BYTES // PAGE_SIZE)
        self.free_pgds.append(pgd.address)

    def new_table(self, page, what):
        """pte_alloc_one, after the zeroing: (before PK4) clean the hardware tables."""
        if what == "pte_alloc" and not self.applied("PK4"):
            self.clean_dcache_area(page.address + PTE_HWTABLE_OFF, PAGE_SIZE - PTE_HWTABLE_OFF,
                                   "pte_alloc_one")

    # ------------------------------------------------------------------ the page lock

    def _struct_page(self, kernel, page):
        """The address of ``page``'s struct page in guest RAM (mem_map, made at first use
        for the kernel's page frames, with the zone's wait table of empty queues)."""
        self._mem_map(kernel)
        index = page.pfn - self.mem_map_pfn
        if not 0 <= index < kernel.allocator.frames:
            raise KernelError(f"page frame {page.pfn:#x} has no struct page in mem_map")
        return self.mem_map + index * STRUCT_PAGE

    def _mem_map(self, kernel):
        """mem_map and the zone's wait table, made at first use."""
        if getattr(self, "mem_map", None) is None:
            allocator = kernel.allocator
            self.mem_map = self.machine.alloc(allocator.frames * STRUCT_PAGE)
            self.mem_map_pfn = allocator.base >> PAGE_SHIFT
            self.wait_table, self.wait_table_bits = self._wait_table(allocator.frames)

    def _wait_table(self, frames):
        """The zone's wait table as mm/page_alloc.c sizes it (a queue per 256 pages, a power
        of two from 4 to 4096), each queue empty: its task_list points at itself."""
        entries = 4
        while entries < min(frames // PAGES_PER_WAITQUEUE, 4096):
            entries *= 2
        table = self.machine.alloc(entries * WAIT_QUEUE_HEAD)
        for k in range(entries):
            head = table + k * WAIT_QUEUE_HEAD + 4
            self.machine.write(head, (head.to_bytes(4, "little")) * 2)
        return table, entries.bit_length() - 1

    def lock_page(self, kernel, page):
        """lock_page (a trylock that succeeds unless another CPU holds the page)."""
        waits = self.call("lock_page", self._struct_page(kernel, page))
        self.ledger.count("page_locks")
        self.ledger.count("page_lock_waits", waits)

    # mm/filemap.c of 2.6.36: find_get_page looks the page up under rcu_read_lock (nothing
    # on a non-preemptible kernel) and takes its reference with page_cache_get_speculative:
    # guest code (fault_v7.S, FaultPath.find_get_page)
    lockless_page_cache = True

    def unlock_page(self, kernel, page):
        """unlock_page: two mb() (each dsb and the PL310's cache sync) before PK2, two
        smp_mb() (dmb) after. The sync's own cycles are charged to the symbol a sampling
        profiler sees them in (SYNC_PROFILE)."""
        pk2 = self.applied("PK2")
        args = (self._struct_page(kernel, page), self.wait_table, self.wait_table_bits,
                self.outer_cache)
        if pk2:
            self.call("unlock_page_pk2", *args, charge="unlock_page")
            return
        run = self.machine.call_untranslated("unlock_page", *args)
        self.ledger.guest("unlock_page", run)
        # read from the run's counts (its events dictionary would decode every count)
        irq_off, parks, spin = run.counters(("irq_off_cycles", "parks", "spin_wait_cycles"))
        # the locked sync ran with interrupts off: a profiler's samples of it land after the
        # restore (IRQ_OFF_SYMBOL)
        if self.outer_sync == "locked":
            self.ledger.move("unlock_page", IRQ_OFF_SYMBOL, irq_off, calls=2)
        self.ledger.count("outer_syncs", 2)
        self.ledger.count("l2x0_lock_waits", parks)
        self.ledger.count("l2x0_lock_wait_cycles", spin)

    # ------------------------------------------------------------------ pages and caches
    # (clear_page: the Arch default, clear_user_highpage's only work on v6/v7)

    def copy_page(self, dst, src):
        """copy_user_highpage (v6 nonaliasing): copy_page, then (before PK3) flush the
        copy's D-cache lines."""
        self.call("copy_page", dst, src)
        if not self.applied("PK3"):
            self.call("v7_flush_kern_dcache_area", dst, PAGE_SIZE,
                      charge="__cpuc_flush_dcache_area (copy_user_highpage)")
            self.ledger.count("lines_flushed:copy_user_highpage", PAGE_SIZE // LINE)

    def flush_dcache_icache(self, address):
        """__sync_icache_dcache for an executable page: __flush_dcache_page (the page's
        D-cache lines) and __flush_icache_all."""
        self.call("v7_flush_kern_dcache_area", address, PAGE_SIZE,
                  charge="__cpuc_flush_dcache_area (sync_icache_dcache)")
        self.ledger.count("lines_flushed:sync_icache_dcache", PAGE_SIZE // LINE)
        self.call("__flush_icache_all")

    def coherent_user_range(self, start, end):
        """__cpuc_coherent_user_range (flush_icache_range): D to PoU and I by line."""
        self.call("v7_coherent_user_range", start, end)

    # ------------------------------------------------------------------ contexts

    def new_context(self):
        """init_new_context: no ASID yet (context.id 0); switch_mm gives one."""
        return 0

    def _new_asid(self, mm):
        """__new_context: the next ASID, under cpu_asid_lock (a guest spin lock on several
        CPUs); at a roll-over a new generation and a TLB flush."""
        kernel = mm.kernel
        if self.asid_lock is None:
            self.asid_lock = kernel.lock_word()
        with kernel.locked(self.asid_lock):
            self.last_context += 1
            if not self.last_context & ((1 << ASID_BITS) - 1):
                self.ledger.count("asid_rollovers")
                self.flush_tlb_all()
                self.last_context += 1
            mm.context = self.last_context

    def switch_mm(self, mm):
        """check_context, then cpu_v7_switch_mm (TTBR0, CONTEXTIDR)."""
        if (mm.context ^ self.last_context) >> ASID_BITS:
            self._new_asid(mm)
        self.call("cpu_v7_switch_mm", mm.pgd.address, mm.context & ((1 << ASID_BITS) - 1))
        self.machine.mmu.ttbr0 = mm.pgd.address
        self.current = mm

    def destroy_context(self, mm):
        self.free_fault_blocks(mm)
        if self.current is mm:
            self.current = None

    # ------------------------------------------------------------------ translations

    def walk(self, mm, address):
        """(first-level descriptor, second-level descriptor or None) of ``address`` in
        ``mm``, as the profile's table walker reads them now."""
        first = mmu.walker_word(self.machine, mm.pgd.address | ((address >> 20) << 2))
        if first & 3 != 1:
            return first, None
        second_at = (first & 0xFFFFFC00) | (((address >> 12) & 0xFF) << 2)
        return first, mmu.walker_word(self.machine, second_at)

    def translates(self, mm, address, write):
        """Would the walk give a small page that lets this user access through?"""
        first, second = self.walk(mm, address)
        return second is not None and user_may(second, write)

    def tlb_miss(self, mm, address, write):
        """No handler: the walk found nothing usable, a data abort (the fault path)."""
        self.ledger.count("walk_aborts")
        return False

    def preload(self, mm, address, pte_page):
        """Nothing: ARM's update_mmu_cache loads no TLB entry."""

    # ------------------------------------------------------------------ TLB flushing

    def _asid(self, mm):
        return mm.context & ((1 << ASID_BITS) - 1)

    def flush_tlb_page(self, mm, address):
        self.call("v7wbi_flush_user_tlb_page", address, self._asid(mm))
        self.ledger.count("tlb_invalidate_mva")

    flush_tlb_page_nohash = flush_tlb_page          # ptep_set_access_flags: flush_tlb_page

    def flush_tlb_range(self, mm, start, end):
        self.call("v7wbi_flush_user_tlb_range", start, end, self._asid(mm))
        self.ledger.count("tlb_invalidate_mva", -(-(end - start) // PAGE_SIZE))

    def flush_tlb_mm(self, mm):
        self.call("v7wbi_flush_user_tlb_mm", self._asid(mm))
        self.ledger.count("tlb_invalidate_asid")

    def flush_tlb_all(self):
        self.call("v7wbi_flush_tlb_all")
        self.ledger.count("tlb_invalidate_all")

    def flush_ptes(self, mm, address, pte_page, count):
        raise KernelError("flush_ptes is the hashed MMU's; ARMv7 uses the asid strategy")

    def has_hashpte(self, pte):
        return False
