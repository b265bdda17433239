"""The 64-bit PowerPC hashed-MMU backend (POWER4: ``Machine("power4", mmu=True)``), as the
Linux 2.6.0-2.6.8 ppc64 kernel ran it on the pSeries 650 of Mackerras 2003 (Table 5).

What runs as guest code, its cycles measured and charged (routines/ppc64):

* ``clear_page`` (dcbz per 128-byte line), ``copy_page`` (the six-line POWER4 loop,
  ``copy_page_power4.S``; option ``copy_page="simple"``: the two-doubleword loop of
  ``copy_page_simple.S`` it was measured against), ``flush_dcache_icache`` (128-byte lines);
* the hash table work, ``hash_native_64.S`` + ``hash_low_64.S`` assembled together:
  ``hash_page`` (walk the three-level Linux page table, check the access, insert into the
  primary then the secondary group, evict when both are full, record the group and slot
  in the Linux PTE), ``flush_tlb_page``, ``flush_tlb_range`` (the scan) and
  ``flush_hash_range`` (one ptesync ... tlbie x N ... eieio; tlbsync; ptesync per batch),
  ``flush_hash_page_lpte`` (one HPTE, straight from the slot the Linux PTE records).

The 64-bit difference Mackerras 2003 section 4.1 describes: the Linux PTE keeps
_PAGE_SECONDARY (0x8000) and the 3-bit slot _PAGE_GROUP_IX (0x7000) beside _PAGE_HASHPTE
(0x400) (include/asm-ppc64/pgtable.h, 2.6.0), so a flush reads exactly one HPTE.

The Linux page table (include/asm-ppc64/pgtable.h, 2.6.0): three levels. A pgd page of
four-byte entries (PGDIR_SHIFT 31), each the page number of a pmd page of 1024 four-byte
entries (PMD_SHIFT 21), each the page number << 2 of a PTE page of 512 eight-byte PTEs
(2 MB). A PTE holds the page number << 16 and the bits above. The generic VM speaks the
PPC32 bits: ``read_pte`` / ``write_pte`` translate, and a write keeps the HPTE slot bits
of a PTE that keeps _PAGE_HASHPTE (as the kernel's set_pte / pte_update keep
_PAGE_HPTEFLAGS).

TLB flush strategies (Kernel ``tlb_flush``), the two of Table 5:

* ``scan`` (2.6.0-2.6.3, arch/ppc64/mm/init.c): flush_tlb_range / flush_tlb_mm (per VMA)
  scan the Linux PTEs of the range for _PAGE_HASHPTE in guest code, collect them in the
  per-CPU batch and flush it with flush_hash_range; flush_tlb_page flushes one page;
* ``batched`` (what Linux ppc64 adopted in early 2004: arch/ppc64/mm/tlb.c, where
  pte_update calls hpte_update, which records the address and the old PTE in
  ppc64_tlb_batch; Mackerras 2003 section 4.2): the addresses are recorded when the PTEs
  change (the generic VM's batch, a fixed ``batch_entry`` cost each, standing for
  hpte_update's C), and __flush_tlb_pending flushes them: flush_hash_page for one,
  flush_hash_range for more, in batches of PPC64_TLB_BATCH_NR = 192;
* ``immediate`` works too (flush_tlb_page at each change) but the paper did not measure it
  on 64-bit ("we did not test the variant which invalidates the HPTE at the time that the
  LPTE is modified", section 4.2).

update_mmu_cache preloads (arch/ppc64/mm/init.c, 2.6.0): for a young PTE it calls
__hash_page with access = pte & (_PAGE_USER | _PAGE_RW), trap 0x300: the guest hash_page
with that access (a writable page so preloaded is marked dirty, as the kernel's is).

What is simulated, not run: user accesses (``translates`` searches the HTAB in Python, as
the 32-bit backend does); the kernel's own accesses: the kernel's memory is bolted with
16 MB pages (htab_initialize), whose rare ERAT and TLB misses the model leaves out, so a
kernel routine runs with the MMU model off (its tlbie still acts on the model's TLB,
through the SLB: emu.hw.mmu.invalidate_page); the SLB: switch_mm writes the user segments'
entries (ESIDs 0-7, below TASK_SIZE) from Python, where 2.6 loads them on SLB misses.

Several CPUs (``Machine("power4", cores=N)``): the kernel's locks are guest code, as in
2.6.0 (arch/ppc64/mm/hash_utils.c hash_page; arch/ppc64/kernel/pSeries_htab.c, the native
hash table, no hypervisor): hash_page runs under the mm's page_table_lock; every HPTE is
locked by its own bit (HPTE_LOCK_BIT, set with ldarx/stdcx. as test_and_set_bit does)
while it is inserted, evicted, updated or invalidated: the per-PTE locking that replaced
2.4's global hash_table_lock (Blanchard 2002 section 5.2); and every tlbie sequence is
under the machine-wide tlbie lock, which POWER4 needs (one tlbie in flight at a time),
taken once per flush_hash_range batch (section 5.3). The HPTE lock bit is taken on one
CPU too, as the uniprocessor kernel did; the tlbie lock and the bit operations' barriers
(eieio, isync) only in the SMP build.

2.4's locking (``hash_lock="global"``, with ``tlbie="per_page"``; Blanchard 2002 sections
4.1 and 5.2): as 2.4's arch/ppc64/kernel/htab.c, one spin lock, hash_table_lock (a line of
its own), held by hash_page around its whole HPTE work (after the page_table_lock and the
access check) and by flush_hash_page around each single invalidation with its own tlbie
sequence; no HPTE lock bits and no separate tlbie lock (the global lock serialises the
tlbies); a range is flushed page by page (init.c local_flush_tlb_range:
routines/ppc64/flush_tlb_range_24.S), and an unmap flushes its range after the zap (no
TLB gather). ``tlbie="per_page"`` with ``hash_lock="hpte"`` keeps 2.5's lock bits and
tlbie lock but flushes page by page: the two changes of the paper apart. Labels
.Lhash_table_lock_<k>, .Ltlbie_lock_<k> and .Lhpte_lock_<k> (to ..._end) delimit each
place a lock is acquired (emu.papers.blanchard2002.lock_ranges). The 2.4 variant's differences
from 2.4: its hpte_updatepp and eviction are 2.6's (an evicted HPTE gets no tlbie).
``hash_lock="global_hash"`` (with ``tlbie="per_page"``): hash_table_lock around hash_page
only, and each flush's tlbie under the tlbie lock instead (no hash_table_lock in
flush_hash_page): what the readprofile listing of Blanchard 2002's first build, which shows
no flush_hash_page, suggests. No commit of the time has it: flush_hash_page takes
hash_table_lock (spin_lock_irqsave) in the ppc64 htab.c of 15 February 2002 (88b42425d1)
and of 13 March 2002 (1cf747c749), and the rework of 26 March (6dc8733cff) removed the lock
altogether. In a partition its flush's tlbie is under the hypervisor's tlbie lock alone.

In a logical partition (``lpar=True``; Blanchard 2002 section 3.2, the first two builds):
the kernel's HPTE inserts, updates and removes are hypervisor calls, as
arch/ppc64/kernel/pSeries_lpar.c made them in March 2002 (BitKeeper history as tokens, github
dmgerman/history-token). The hypervisor's work on the table runs as guest code (the same
search, lock bit, stores and tlbie sequence as the native path), and each call's own cost,
``sc 1`` to ``hrfid``, is the profile's [hypervisor] hcall (an estimate), spent as a loop
in one subroutine, plpar_hcall (as pSeries_hvCall.S wraps the call: CR saved, a frame;
the loop between labels .Lhcall_1 and its _end), whose leaf callers save LR and make a
frame as the kernel's C callers did: H_ENTER per group tried (hpte_insert), H_REMOVE per HPTE removed
(hpte_invalidate, eviction, and each entry of flush_hash_range, which on an LPAR has no
batched tlbie: the hypervisor runs a whole sequence per H_REMOVE), H_PROTECT per update.
The hypervisor's tlbie is under its own tlbie lock (the ``tlbie_lock`` word, in every
kernel). With the 2.4 locking (``hash_lock="global"``) the backend is that of 13 March 2002
(commit 1cf747c749): H_READ of each slot looked at before the H_ENTER, H_READ of the HPTE
before H_REMOVE and H_PROTECT, everything under hash_table_lock. With 2.5's (the rework of
26 March 2002, commit 6dc8733cff) the H_ENTER lets the hypervisor pick the slot and the
flushes hold pSeries_lpar_tlbie_lock (``lpar_tlbie_lock``) around their H_REMOVEs, once per
flush_hash_range batch (the commit retakes it per entry, a self-deadlock on SMP; the model
takes it once, as its comment intends). No H_BULK_REMOVE: the kernels of 2002 had none.
The rework's LPAR eviction was a panic stub; the model's evicts as native, plus an H_REMOVE.

Limits: the global tlbie always (the kernel uses tlbiel for an mm that ran on this CPU
only); the user address layout is the generic VM's PPC32 one
(a 32-bit process below 2 GB); the no-execute-bit lazy I-cache flush of __hash_page on
POWER4 (CPU_FTR_NOEXECUTE) is not modelled (the generic I-cache policies apply); the
generic C paths cost the same cycles as on the 750 (emu.kernel.costs); in the batched
strategy the Linux PTE's HPTE flags are cleared at flush time (Python, covered by
``batch_entry``) instead of in pte_update; 4 KB pages only.
"""
from __future__ import annotations

from collections import deque

from ..hw import hash64, mmu
from ..context import routine
from .arch import Arch
from .errors import KernelError
from .percpu import cpu
from .pgtable import (_PAGE_ACCESSED, _PAGE_COHERENT, _PAGE_DIRTY, _PAGE_EXEC, _PAGE_GUARDED,
                      _PAGE_HASHPTE, _PAGE_NO_CACHE, _PAGE_PRESENT, _PAGE_RW, _PAGE_USER,
                      _PAGE_WRITETHRU, PAGE_SHIFT, PAGE_SIZE, TASK_SIZE)

MASK64 = 2**64 - 1

# Linux PTE bits of ppc64 (include/asm-ppc64/pgtable.h, 2.6.0), beside the generic VM's
# (PPC32) bit each stands for
L_PRESENT, L_USER, L_RW, L_HASHPTE, L_EXEC = 0x001, 0x002, 0x004, 0x400, 0x800
L_SLOT = 0xF000                 # _PAGE_SECONDARY 0x8000 | _PAGE_GROUP_IX 0x7000
PTE_SHIFT = 16                  # the page number's place in the PTE
BITS = ((_PAGE_PRESENT, L_PRESENT), (_PAGE_USER, L_USER), (_PAGE_RW, L_RW),
        (_PAGE_GUARDED, 0x008), (_PAGE_COHERENT, 0x010), (_PAGE_NO_CACHE, 0x020),
        (_PAGE_WRITETHRU, 0x040), (_PAGE_DIRTY, 0x080), (_PAGE_ACCESSED, 0x100),
        (_PAGE_HASHPTE, L_HASHPTE), (_PAGE_EXEC, L_EXEC))

# the status codes of the guest hash_page (routines/ppc64/hash_low_64.S)
HPTE_STATUS = {0: "hpte_primary", 1: "hpte_secondary", 2: "hpte_evicted", 3: "hpte_updated",
               16: "hash_page_refused"}
BATCH_NR = 192                  # PPC64_TLB_BATCH_NR (include/asm-ppc64/tlbflush.h)
BATCH_BYTES = 3 * BATCH_NR * 8  # pte[], addr[], vaddr[] (hash_low_64.S BATCH_*)
USER_SEGMENTS = TASK_SIZE >> 28             # ESIDs 0-7 hold user space
HCALL_PASS = 16                 # cycles of one pass of an hcall loop (16 instructions)
FIRST_USER_CONTEXT = 1          # context 0 is the kernel's (as recalled, unverified)


#: copy_page's routine (option ``copy_page``): the POWER4 six-line loop the kernel adopted,
#: or the simple two-doubleword loop Mackerras 2003 section 3.1 measured it against
COPY_PAGES = {"power4": "copy_page_power4", "simple": "copy_page_simple"}


def htab_size_for(total_memory):
    """The kernel's hash-table size: one PTEG per two pages of RAM (RAM rounded up to a
    power of two), at least 2^11 PTEGs = 256 KB (arch/ppc64/kernel/prom.c
    early_init_devtree, 2.6; htab_initialize: "the number of PTEGs [equals] one half the
    number of real pages"). 32 MB gives 4096 PTEGs, 512 KB."""
    rounded = 1 << (max(total_memory, 1) - 1).bit_length()
    return max(rounded >> (PAGE_SHIFT + 1), 1 << 11) * hash64.PTEG_BYTES


# 2.5/2.6's per-HPTE lock bit; 2.4's hash_table_lock; hash_table_lock around hash_page only,
# the flushes under the tlbie lock (a variant no commit has: what the listing implies)
HASH_LOCKS = ("hpte", "global", "global_hash")
TLBIE_MODES = ("batched", "per_page")


def _locking(hash_lock, tlbie):
    """The kernel's hash-table locking and TLB flushing, checked: 2.4's global lock came
    with the page-by-page flush (the batched flush_hash_range is 2.5's)."""
    if hash_lock not in HASH_LOCKS:
        raise ValueError(f"hash_lock must be one of {HASH_LOCKS} (per-HPTE lock bit, 2.4's "
                         f"global hash_table_lock), not {hash_lock!r}")
    if tlbie not in TLBIE_MODES:
        raise ValueError(f"tlbie must be one of {TLBIE_MODES}, not {tlbie!r}")
    if hash_lock.startswith("global") and tlbie == "batched":
        raise ValueError("the global hash_table_lock kernel (2.4) flushes page by page: "
                         "give tlbie='per_page' with hash_lock='global'")
    return hash_lock, tlbie


def unpack(value):
    """(HPTEs invalidated, tlbie issued, tlbie sequences) from a guest flush's return."""
    return value & 0xFFFF, (value >> 16) & 0xFFFF, (value >> 32) & 0xFFFF


def to_native(generic, old=0):
    """A generic (PPC32-bit) Linux PTE as the ppc64 kernel stores it. A PTE that keeps
    _PAGE_HASHPTE keeps the old PTE's slot bits (set_pte keeps _PAGE_HPTEFLAGS)."""
    native = ((generic & 0xFFFFF000) >> PAGE_SHIFT) << PTE_SHIFT
    for ours, theirs in BITS:
        if generic & ours:
            native |= theirs
    if generic & _PAGE_HASHPTE:
        native |= old & L_SLOT
    return native


def from_native(native):
    """The generic VM's view of a ppc64 Linux PTE (the slot bits have no counterpart)."""
    generic = (native >> PTE_SHIFT) << PAGE_SHIFT
    for ours, theirs in BITS:
        if native & theirs:
            generic |= ours
    return generic


def hcall_cycles(profile):
    """A hypervisor call's own cycles, ``sc 1`` to ``hrfid`` (the profile's [hypervisor]
    hcall, an estimate): the routines spend them as a loop of HCALL_PASS-cycle passes
    (sixteen instructions a pass: few passes, little emulation time)."""
    table = profile.raw.get("hypervisor")
    if not table or "hcall" not in table:
        raise ValueError(f"profile {profile.name} has no [hypervisor] hcall: an LPAR "
                         "kernel needs a hypervisor call's cost")
    return int(table["hcall"])


class PPC64Hash(Arch):
    """The 64-bit hashed page table backend. ``htab_size`` defaults to the kernel's rule for
    ``total_memory`` (default: the machine's RAM)."""

    name = "ppc64-hash"
    has_exec_permission = False      # POWER4 has N, but the model does not use it (above)
    zap_flush = "gather"              # zapped PTEs batched, flushed at tlb_flush (2.6.0)
    tlb_flush_strategies = ("scan", "batched", "immediate")
    table_levels = ((31, 10), (21, 10))     # pgd (PGDIR_SHIFT 31), pmd (PMD_SHIFT 21)
    pte_index_bits = 9                       # 512 PTEs of 8 bytes per PTE page
    pte_bytes = 8
    walks_flush_ranges = True

    def __init__(self, machine, ledger, htab_size=None, total_memory=None, hash_lock="hpte",
                 tlbie="batched", lpar=False, copy_page="power4"):
        super().__init__(machine, ledger)
        self.hash_lock, self.tlbie = _locking(hash_lock, tlbie)
        if copy_page not in COPY_PAGES:
            raise ValueError(f"copy_page must be one of {list(COPY_PAGES)}, not {copy_page!r}")
        self.copy_page_entry = COPY_PAGES[copy_page]
        self.lpar = bool(lpar)
        # 2.4 zaps a range, then flushes it page by page (local_flush_tlb_range); 2.5's
        # TLB gather batches the zapped PTEs for one flush_hash_range
        self.zap_flush = "gather" if self.tlbie == "batched" else None
        self._require_mmu(machine, "ppc64", mmu.MODE_HASHED64, "ppc64 hashed", "power4",
                          "a ppc64 machine with the 64-bit hashed MMU model")
        size = htab_size or htab_size_for(total_memory or machine.ram_size)
        self.htab_base = machine.alloc(size, align=size)
        self.htab_size = size
        self.sdr1 = hash64.sdr1_for(self.htab_base, size)
        machine.mmu.sdr1 = self.sdr1
        self.kvars = machine.alloc(8)                   # the pseudo-timebase
        # ppc64_tlb_batch: one per CPU (ppc64_tlb_batch[smp_processor_id()])
        self.batches = [machine.alloc(BATCH_BYTES) for _ in machine.cpus]
        for name in ("clear_page.S", f"{self.copy_page_entry}.S", "flush_dcache_icache.S"):
            machine.load(routine(f"ppc64/{name}"))
        # several CPUs: the SMP build (the tlbie lock, the barriers of the bit operations)
        smp = len(machine.cpus) > 1
        global_lock = self.hash_lock.startswith("global")
        # the variant: flush_hash_page without hash_table_lock, its tlbie under the tlbie lock
        flush_hash_lock = self.hash_lock == "global"
        # the SMP build's machine-wide locks, each on a line of its own: 2.4's hash_table_lock
        # (__cacheline_aligned_in_smp, htab.c) or 2.5's tlbie lock; on an LPAR the tlbie
        # lock is the hypervisor's (every kernel's), and 2.5 takes pSeries_lpar_tlbie_lock
        # around its H_REMOVEs
        tlbie_lock = smp and (self.lpar or not flush_hash_lock)
        self.tlbie_lock = machine.alloc(128, align=128) if tlbie_lock else 0
        self.hash_table_lock = machine.alloc(128, align=128) if smp and global_lock else 0
        lpar_lock = smp and self.lpar and not global_lock
        self.lpar_tlbie_lock = machine.alloc(128, align=128) if lpar_lock else 0
        self.hcall_cycles = hcall_cycles(machine.profile) if self.lpar else 0
        # one program: hash_low_64.S calls hash_native_64.S's hpt_hash, group_of and
        # hpte_insert; htab_data, at the end of the latter, holds the table's address and
        # mask, and the locks' addresses; flush_tlb_range_24.S is 2.4's page-by-page flush
        machine.load(f".equ KVARS, {self.kvars:#x}\n.equ SMP, {int(smp)}\n"
                     f".equ GLOBAL_LOCK, {int(global_lock)}\n"
                     f".equ HASH_TABLE_LOCK, {int(smp and global_lock)}\n"
                     f".equ TLBIE_LOCK, {int(tlbie_lock)}\n"
                     f".equ FLUSH_HASH_LOCK, {int(smp and flush_hash_lock)}\n"
                     f".equ LPAR, {int(self.lpar)}\n"
                     f".equ LPAR_READS, {int(self.lpar and global_lock)}\n"
                     f".equ LPAR_TLBIE_LOCK, {int(lpar_lock)}\n" +
                     "".join(routine(f"ppc64/{name}").read_text() for name in
                             ("hash_low_64.S", "hash_native_64.S", "flush_tlb_range_24.S")))
        htab_data = machine.symbols["htab_data"]        # htab_data.htab, .htab_hash_mask
        machine.write(htab_data, b"".join(value.to_bytes(8, "big") for value in (
            self.htab_base, size // hash64.PTEG_BYTES - 1, self.tlbie_lock,
            self.hash_table_lock, max(1, round(self.hcall_cycles / HCALL_PASS)),
            self.lpar_tlbie_lock)))
        self.free_contexts = deque(range(FIRST_USER_CONTEXT, hash64.LAST_USER_CONTEXT))

    # ------------------------------------------------------------ running kernel routines

    def call(self, entry, *args, charge=None):
        run = self.machine.call_untranslated(entry, *args)  # kernel memory: bolted large pages
        self.ledger.guest(charge or entry, run)
        return run.return_value

    @property
    def batch(self):
        """This CPU's ppc64_tlb_batch."""
        return self.batches[cpu()]

    # ------------------------------------------------------------------ Linux PTEs

    def dir_entry(self, depth, table):
        """pgd_set: the pmd page's page number; pmd_set: the PTE page's page number << 2."""
        return (table >> PAGE_SHIFT) << (2 if depth == 1 else 0)

    def dir_table(self, depth, entry):
        return (entry >> (2 if depth == 1 else 0)) << PAGE_SHIFT

    def native_pte(self, ptep):
        return self.machine.read_word(ptep, 8)

    def read_pte(self, ptep):
        return from_native(self.native_pte(ptep))

    def write_pte(self, ptep, value):
        native = to_native(value, self.native_pte(ptep))
        self.machine.write(ptep, native.to_bytes(8, "big"))

    def has_hashpte(self, pte):
        return bool(pte & _PAGE_HASHPTE)

    # ------------------------------------------------------------------ pages and caches
    # (clear_page and flush_dcache_icache: the Arch defaults, on the 64-bit routines)

    def copy_page(self, dst, src):
        self.call(self.copy_page_entry, dst, src, charge="copy_page")

    # ------------------------------------------------------------------ contexts

    def new_context(self):
        """init_new_context: the context at the head of the free queue (contexts come back
        at its tail: destroy_context)."""
        if not self.free_contexts:
            raise KernelError("all ppc64 user contexts are in use")
        return self.free_contexts.popleft()

    def destroy_context(self, mm):
        self.free_contexts.append(mm.context)

    def vsid(self, mm, address):
        """get_vsid(context, ea) of the time (emu.hw.hash64.linux_user_vsid)."""
        return hash64.linux_user_vsid(mm.context, address)

    def switch_mm(self, mm):
        """The user segments' SLB entries (entries 1-8; the kernel's are bolted apart) with
        the mm's VSIDs, SLB_VSID_USER = Kp | Ks (include/asm-ppc64/mmu.h)."""
        for esid in range(USER_SEGMENTS):
            self.machine.mmu.set_slb(1 + esid, esid, self.vsid(mm, esid << 28), ks=True, kp=True)

    # ------------------------------------------------------------------ translations

    def lookup(self, mm, address):
        """(HPTE address, doubleword 1, secondary) of ``address``'s valid HPTE, or None."""
        vsid = self.vsid(mm, address)
        for secondary in (0, 1):
            h = (hash64.secondary_hash if secondary else hash64.primary_hash)(vsid, address)
            group = hash64.pteg_address(self.sdr1, h)
            want = hash64.hpte_dword0(vsid, address, secondary) & MASK64
            raw = self.machine.read(group, hash64.PTEG_BYTES)
            for k in range(hash64.HPTES_PER_GROUP):
                d0 = int.from_bytes(raw[16 * k:16 * k + 8], "big")
                if d0 & ~hash64.HPTE_V_SW & MASK64 == want:
                    return group + 16 * k, int.from_bytes(raw[16 * k + 8:16 * k + 16],
                                                          "big"), bool(secondary)
        return None

    def translates(self, mm, address, write):
        """An HTAB hit that permits the access (a store needs PP 2)."""
        found = self.lookup(mm, address)
        return found is not None and (not write or found[1] & hash64.HPTE_R_PP == 2)

    def tlb_miss(self, mm, address, write):
        """The hash-table miss handler: hash_page. False if it refused (a real fault)."""
        self.ledger.fixed("hash_fault_entry")
        with mm.kernel.locked(mm.page_table_lock):      # hash_page (hash_utils.c) takes it
            status = self.call("hash_page", L_RW if write else 0, address, mm.pgd.address,
                               mm.context)
        self.ledger.count(HPTE_STATUS[status])
        return status != 16

    def preload(self, mm, address, pte_page):
        """update_mmu_cache: __hash_page with access = pte & (_PAGE_USER | _PAGE_RW)."""
        ptep = mm.ptep(address)
        access = self.native_pte(ptep) & (L_USER | L_RW)
        status = self.call("hash_page", access, address, mm.pgd.address, mm.context,
                           charge="hash_page (preload)")
        self.ledger.count(HPTE_STATUS[status])
        self.ledger.count("preloads")

    # ------------------------------------------------------------------ flushing

    def _counted(self, packed, kind):
        invalidated, tlbies, sequences = unpack(packed)
        self.ledger.count(kind)
        self.ledger.count("hpte_invalidated", invalidated)
        self.ledger.count("tlbie", tlbies)
        self.ledger.count("tlbsync", sequences)
        return invalidated

    def flush_ptes(self, mm, address, pte_page, count):
        """One page (flush_tlb_page: the scan's and immediate's single-page flush); more
        go to flush_range."""
        if count != 1:
            return self.flush_range(mm, address, address + count * PAGE_SIZE)
        packed = self.call("flush_tlb_page", mm.context, mm.pgd.address, address)
        if unpack(packed)[1]:
            self.ledger.count("flush_hash_page")
        return self._counted(packed, "flush_calls")

    def flush_range(self, mm, start, end):
        """The scan: __flush_tlb_range in guest code, batched (2.5/2.6: flush_hash_range
        per batch) or page by page (2.4's local_flush_tlb_range: flush_hash_page each)."""
        if self.tlbie == "per_page":
            packed = self.call("flush_tlb_range_pages", mm.context, mm.pgd.address, start,
                               end)
            self.ledger.count("flush_hash_page", unpack(packed)[2])
            return self._counted(packed, "flush_calls")
        packed = self.call("flush_tlb_range", mm.context, mm.pgd.address, start, end,
                           self.batch)
        self.ledger.count("flush_hash_range", unpack(packed)[2])
        return self._counted(packed, "flush_calls")

    def flush_pending(self, mm, addresses):
        """__flush_tlb_pending of the batched strategy: the recorded entries (address, old
        PTE with its slot), 192 at a time; one goes to flush_hash_page, more to
        flush_hash_range."""
        entries = []
        for address in addresses:
            ptep = mm.ptep(address)
            native = self.native_pte(ptep) if ptep else 0
            if native & L_HASHPTE:
                entries.append((address, native))
                self.machine.write(ptep, (native & ~(L_HASHPTE | L_SLOT)).to_bytes(8, "big"))
        for first in range(0, len(entries), BATCH_NR):
            self._flush_entries(mm, entries[first:first + BATCH_NR])

    def _flush_entries(self, mm, entries):
        if len(entries) == 1:
            address, native = entries[0]
            packed = self.call("flush_hash_page_lpte", mm.context, address, native)
            self.ledger.count("flush_hash_page")
            self._counted(packed, "flush_calls")
            return
        ptes = b"".join(native.to_bytes(8, "big") for _, native in entries)
        addrs = b"".join(address.to_bytes(8, "big") for address, _ in entries)
        self.machine.write(self.batch, ptes)
        self.machine.write(self.batch + BATCH_NR * 8, addrs)
        packed = self.call("flush_hash_range", mm.context, self.batch, len(entries))
        self.ledger.count("flush_hash_range")
        self._counted(packed, "flush_calls")
