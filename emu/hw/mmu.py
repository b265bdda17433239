"""The MMU model: TLBs and the PowerPC hashed page tables (32- and 64-bit), over guest memory.

A TLB is modelled as a cache whose lines are pages (``CacheLevel`` with ``line`` = page size),
so it shares the cache model's replacement policies, statistics and native hot path. On a miss
in the last TLB the *walker* searches the hashed page table (HTAB) that lives in guest memory at
SDR1, exactly as the 603e/604/750 hardware does (MPC603e UM 1.3.5; QEMU target/ppc/mmu-hash32):

* the effective address's top 4 bits select a segment register, which gives a 24-bit VSID;
* primary hash = (low 19 bits of VSID) XOR (16-bit page index); secondary hash = its complement;
* PTEG address = HTABORG | ((hash << 6) & ((HTABMASK << 16) | 0xFFC0)); a PTEG is 8 PTEs of
  8 bytes; a PTE matches when word 0 = V | VSID << 7 | H << 6 | API (API = EA bits 4-9).

The walker reads the PTEs from guest RAM, so whatever guest assembly stored there (inserted,
invalidated, left stale) is what it finds, and each PTE it reads is a load through the data
cache model (assumed: the 60x table-search logic reads PTEs as cacheable accesses). A search
that fails in both PTEGs is a page fault: the machine stops and raises ``PageFault``.

The 64-bit format (POWER4; ``emu.hw.hash64`` describes it, with its sources) works the same
way with an SLB in front: the walker finds the segment's SLB entry (the ESID, EA >> 28, gives
a VSID; none is a segment fault), hashes (low 39 bits of the VSID) XOR (page index) into
128-byte PTEGs of eight 16-byte HPTEs at SDR1, compares doubleword 0 (AVPN | L | H | V) and
takes the access rights from doubleword 1 (PP with the SLB key, N) and the SLB entry (N).
POWER4's I-ERAT and D-ERAT are the first TLB levels, the 1024-entry TLB the second. ``tlbie``
(RB = the virtual address) invalidates the entries of every segment whose VSID matches RB;
``slbmte``, ``slbie`` and ``slbia`` change the model's SLB as the guest runs them.

On a machine of several cores (``Machine(cores=N, mmu=True)``) each core has its own TLBs
and segment registers or SLB, and all walk the one table in shared RAM (through their own
L1 D). ``tlbie`` and ARM's inner-shareable TLB operations (c8, c3) invalidate in every
core, as the architectures broadcast them; ``tlbiel``, ``tlbia`` and ARM's c8, c7 forms in
the core that runs them. Software-loaded TLBs (emu.hw.softtlb) stay on one core.

A walk costs the cache stalls of its PTE reads; a fixed sequencing overhead of the search
hardware is not charged (no documented figure was found): a profile may set ``walk_cycles`` in
its ``[tlb]`` table, with the source. Unicorn itself runs with physical = effective addresses;
the model decides hits, misses, walks and faults, not where the bytes come from.
"""
from __future__ import annotations

from . import cache as c
from . import hash64, native, softtlb
from .cache import CacheLevel
from .hash64 import (MODE_HASHED64, HashedPageTable64,  # noqa: F401 (the 64-bit table's side)
                     SLBRegisters)
from .layout import CODE_BASE, HEAP_BASE
from .registers import MMURegisters

PTE_VALID = 0x80000000
PTE_SECONDARY = 0x40
PTEG_BYTES = 64
PTES_PER_GROUP = 8
HTAB_MIN = 64 << 10                 # 64 KB (HTABMASK = 0) up to 32 MB (HTABMASK = 0x1FF)

MODE_OFF, MODE_HASHED32 = 0, 1
MODE_ARM_SHORT = 4      # ARMv7 short descriptors (below); 2 and 3 are emu.hw.softtlb's 603 and 405


# ----------------------------------------------------------- the hash, by the architecture book

def primary_hash(vsid, ea):
    """19-bit primary hash: low 19 bits of the VSID XOR the 16-bit page index (EA bits 4-19)."""
    return (vsid & 0x7FFFF) ^ ((ea >> 12) & 0xFFFF)


def secondary_hash(vsid, ea):
    return ~primary_hash(vsid, ea) & 0x7FFFF


def pteg_address(sdr1, hash_value):
    """Where the PTE group for a hash lives: HTABORG, with HTABMASK selecting hash bits."""
    htaborg, htabmask = sdr1 & 0xFFFF0000, sdr1 & 0x1FF
    return htaborg | ((hash_value << 6) & ((htabmask << 16) | 0xFFC0))


def pte_word0(vsid, ea, secondary):
    """The compare word of a valid PTE: V, VSID, H (found by the secondary hash), API."""
    return PTE_VALID | ((vsid & 0xFFFFFF) << 7) | (PTE_SECONDARY if secondary else 0) | \
        ((ea >> 22) & 0x3F)


def find_pte(read, sdr1, vsid, ea):
    """Search the hashed page table as the MMU does, primary group then secondary:
    (secondary?, slot, PTE address, word 1) of ``ea``'s valid PTE, or None. ``read(address,
    size)`` reads guest memory."""
    for secondary in (False, True):
        h = (secondary_hash if secondary else primary_hash)(vsid, ea)
        group = pteg_address(sdr1, h)
        want = pte_word0(vsid, ea, secondary)
        raw = read(group, 64)
        for slot in range(8):
            if int.from_bytes(raw[8 * slot:8 * slot + 4], "big") == want:
                return (secondary, slot, group + 8 * slot,
                        int.from_bytes(raw[8 * slot + 4:8 * slot + 8], "big"))
    return None


def pte_word1(rpn, wimg=0, pp=2, referenced=False, changed=False):
    """RPN (physical page number), R, C, WIMG, PP (2: read/write)."""
    return (rpn << 12) | (0x100 if referenced else 0) | (0x80 if changed else 0) | \
        ((wimg & 0xF) << 3) | (pp & 3)


def sdr1_for(htab_base, htab_size):
    """SDR1 for a table of ``htab_size`` bytes (a power of two, 64 KB-32 MB) at a base aligned
    to its size; refuses anything else, saying why."""
    if htab_size < HTAB_MIN or htab_size > 32 << 20 or htab_size & (htab_size - 1):
        raise ValueError(f"hash table size {htab_size:#x} must be a power of two from 64 KB "
                         "to 32 MB")
    if htab_base % htab_size:
        raise ValueError(f"hash table base {htab_base:#x} must be aligned to its size "
                         f"{htab_size:#x}")
    return htab_base | ((htab_size >> 16) - 1)


# ---------------------------------------------------------------- TLB levels from a profile

def tlb_levels(profile):
    """The profile's TLBs as page-lined cache levels: split ITLB + DTLB, or one unified TLB."""
    t = profile.tlb
    page = t.get("page_size", 4096)
    repl = t.get("replacement", "lru")
    repl = repl if repl in c.REPLACEMENT else "lru"
    if "itlb_entries" in t and "dtlb_entries" in t and "main_entries" not in t:
        return [CacheLevel("ITLB", t["itlb_entries"] * page, t["itlb_ways"], page, repl),
                CacheLevel("DTLB", t["dtlb_entries"] * page, t["dtlb_ways"], page, repl)]
    if "ierat_entries" in t and "entries" in t:
        # POWER4: the effective-address-tagged I-ERAT and D-ERAT (named ITLB and DTLB here)
        # in front of the unified TLB; an ERAT miss that hits the TLB costs the profile's
        # erat_miss_cycles (0 if it gives none)
        return [CacheLevel("ITLB", t["ierat_entries"] * page, t["ierat_ways"], page, repl),
                CacheLevel("DTLB", t["derat_entries"] * page, t["derat_ways"], page, repl),
                CacheLevel("TLB", t["entries"] * page, t["ways"], page, repl,
                           hit_latency=t.get("erat_miss_cycles", 0))]
    if "entries" in t:
        return [CacheLevel("TLB", t["entries"] * page, t["ways"], page, repl)]
    if "main_entries" in t:
        # micro-TLBs in front of a unified main TLB (Cortex-A9): a micro miss that hits the
        # main TLB costs the main TLB's hit latency
        return [CacheLevel("ITLB", t["itlb_entries"] * page, t["itlb_ways"], page, repl),
                CacheLevel("DTLB", t["dtlb_entries"] * page, t["dtlb_ways"], page, repl),
                CacheLevel("TLB", t["main_entries"] * page, t["main_ways"], page, repl,
                           hit_latency=t.get("micro_miss_cycles", 0))]
    raise ValueError(f"profile {profile.name} describes no TLB")


def page_table(machine):
    """The page table a machine's MMU walks, made in its RAM and mapping what a routine needs
    (loaded code, buffers so far, the stack): the 64-bit or 32-bit HTAB, or ARM tables.
    The 405 has none to make (None): its TLB is loaded by guest code, the miss handler at
    its vector, from the kernel's own tables (emu.kernel's ppc405gp backend)."""
    if machine.soft_tlb is not None and machine.soft_tlb.kind == "405":
        return None
    if machine.isa == "arm":
        table = ShortDescriptorTables(machine)
    elif machine.state[c.H_MMU] == MODE_HASHED64:
        table = HashedPageTable64(machine)
    else:
        table = HashedPageTable(machine)
    table.map_machine()
    return table


def supported(profile):
    """Why the MMU model cannot run this profile yet, or None if it can."""
    if profile.isa == "arm" and profile.tlb.get("reload") == "hardware-walk":
        return None
    if profile.isa == "ppc32" and profile.tlb.get("reload") == "software":
        if softtlb.kind(profile) is None:
            return (f"{profile.name} reloads its TLB in software, but the model knows the "
                    f"software-loaded TLBs of the 603 and the 405 only, not Unicorn CPU "
                    f"{profile.unicorn_cpu}")
        return None
    if profile.isa == "ppc64" and profile.tlb.get("reload") == "hardware-hash":
        if "slb_entries" not in profile.tlb:
            return f"{profile.name} searches a 64-bit hash table but its [tlb] gives no slb_entries"
        return None
    if profile.isa != "ppc32" or profile.tlb.get("reload") != "hardware-hash":
        return (f"the MMU model so far covers 32- and 64-bit PowerPC with a hardware-searched "
                f"hash table (ppc604, ppc750, power4), a software-loaded TLB (ppc603e, "
                f"ppc405gp) or ARMv7 short descriptors (cortex-a9); "
                f"{profile.name} reloads its TLB by "
                f"{profile.tlb.get('reload', 'an unknown method')} on {profile.isa}")
    return None


# ------------------------------------------------------------------ native (C) model
#
# The translation itself is C (emu/hw/model/mmu.c), run by Unicorn's hooks: the TLB look-up
# (a hit inline in the hooks), the walkers below, and the invalidations. These functions
# call it from Python.

# A TLB entry keeps the page's permissions, in the level's per-way "dirty" word (unused by
# a TLB): what it forbids, so that 0 (the 32-bit hashed-table PTEs as modelled) forbids nothing.
DENY_WRITE, DENY_FETCH, IS_SECTION, DENY_READ = 1, 2, 4, 8


def translate(st, ea, write, fetch):
    """One translation of ``ea`` through the TLB(s) and, on a miss, the walker.

    Returns stall cycles; a failed walk (or an access the TLB entry forbids) records a page
    fault (the first one's address and kind are kept) for the hook to stop the machine."""
    return int(native.lib.emu_translate(native.address(st), ea, int(write), int(fetch)))


def walk_hashed32(st, ea):
    """Search the HTAB for ``ea``: primary PTEG, then secondary. Returns (found, stall)."""
    found, stall = native.call_with_out(native.lib.emu_walk_hashed32, native.address(st), ea)
    return bool(found), stall


def invalidate_page(st, ea, broadcast=False):
    """tlbie: the entries for ``ea``'s page in every TLB level of this core (``broadcast``:
    of every core). On the 64-bit hashed MMU the operand is a virtual address (tlbie64:
    RB holds VSID bits 0-19 and the page index; every valid SLB entry whose VSID agrees has
    the page's entries invalidated), also while a kernel routine runs untranslated (H_MMU
    off, the SLB kept: emu.kernel.ppc64)."""
    native.lib.emu_invalidate_page(native.address(st), ea, int(broadcast))


def invalidate_all(st, broadcast=False):
    """tlbia (or a full flush): every TLB entry of this core (``broadcast``: of every core)."""
    native.lib.emu_invalidate_all(native.address(st), int(broadcast))


# ------------------------------------ the 64-bit MMU's TLB and SLB instructions (emu.hw.hash64)
#
# The model's TLB levels are tagged by effective page (Unicorn runs physical = effective),
# where POWER4's TLB is tagged by virtual page. So that an entry never outlives the segment
# mapping it was made under, whatever changes an SLB entry also drops the model's TLB
# entries in that segment (the hardware's ERATs are flushed likewise; its TLB would keep
# them, and a re-established segment walks again here).

def slb_store(st, rs, rb):
    """slbmte RS, RB: SLB entry RB[52:63] = (RB's ESID | V, RS). Returns False (and changes
    nothing) for what the model refuses (hash64.slbmte_problem says why)."""
    return bool(native.lib.emu_slb_store(native.address(st), rs, rb))


def slb_invalidate(st, rb):
    """slbie RB: the SLB entry of RB's ESID made invalid, and its segment's TLB entries."""
    native.lib.emu_slb_invalidate(native.address(st), rb)


def slb_invalidate_all(st):
    """slbia: every SLB entry but entry 0 invalid (Book III; QEMU helper_slbia)."""
    native.lib.emu_slb_invalidate_all(native.address(st))


# ------------------------------------------------- ARMv7 short descriptors (ARM ARM B3.5)
#
# TTBR0 (kept in H_SDR1) holds the 16 KB first-level table (TTBCR.N = 0). A first-level
# descriptor (VA bits 31-20 index it) is a fault (type 0), a pointer to a 1 KB second-level
# table (1) or a 1 MB section (2); a second-level descriptor (VA bits 19-12) is a fault (0),
# a 64 KB large page (1) or a 4 KB small page (2, 3: bit 0 is XN). APX (section bit 15, page
# bit 9) makes the page read-only; XN forbids instruction fetch. Domains are taken as client
# and every access as privileged, so APX and XN are the permissions that matter (Linux
# emulates the dirty bit with APX and marks data pages XN).

FSR_TRANSLATION_SECTION, FSR_TRANSLATION_PAGE = 0x5, 0x7     # DFSR/IFSR status codes
FSR_PERMISSION_SECTION, FSR_PERMISSION_PAGE = 0xD, 0xF

def _descriptor(st, address):
    """(descriptor, stall) as the table walker reads it.

    Through the L1 D (Cortex-A9 with write-back walks) it is a load and sees the newest
    bytes. Otherwise it reads the level below the L1 D, which holds memory's copy: a
    descriptor stored but still dirty in the L1 D is seen as it was before (the shadow)."""
    return native.call_with_out(native.lib.emu_descriptor, native.address(st), address)


# ------------------------------------------------------------ the table, seen from Python

class HashedPageTable(hash64.MappedRanges):
    """A 32-bit HTAB in a machine's guest memory, for setting up and inspecting tables.

    Guest assembly can (and in the book does) insert and invalidate PTEs itself; this class
    writes and reads the same bytes. Segment register n gets VSID ``vsid_base + n`` unless
    told otherwise.

    >>> pt = HashedPageTable(machine)                       # doctest: +SKIP
    >>> pt.insert(0x100000)          # (PTE address, found by the secondary hash?)  # doctest: +SKIP
    """

    def __init__(self, machine, size=HTAB_MIN, vsid_base=0):
        self.machine = machine
        self.base = machine.alloc(size, align=size)
        self.size = size
        machine.mmu.sdr1 = sdr1_for(self.base, size)
        for n in range(16):
            machine.mmu.set_segment(n, vsid_base + n)

    def _vsid(self, ea):
        return self.machine.mmu.segment((ea >> 28) & 0xF)

    def groups(self, ea):
        """(primary PTEG address, secondary PTEG address) for an effective address."""
        vsid, sdr1 = self._vsid(ea), self.machine.mmu.sdr1
        return (pteg_address(sdr1, primary_hash(vsid, ea)),
                pteg_address(sdr1, secondary_hash(vsid, ea)))

    def _word(self, address):
        return int.from_bytes(self.machine.read(address, 4), "big")

    def lookup(self, ea):
        """(PTE address, secondary) of the valid PTE for ``ea``'s page, or None."""
        vsid = self._vsid(ea)
        for secondary, group in enumerate(self.groups(ea)):
            want = pte_word0(vsid, ea, secondary)
            for k in range(PTES_PER_GROUP):
                if self._word(group + 8 * k) == want:
                    return group + 8 * k, bool(secondary)
        return None

    def insert(self, ea, rpn=None, pp=2):
        """Put a PTE for ``ea``'s page (RPN defaults to the same page: physical = effective)
        in the first free slot of the primary PTEG, else of the secondary; returns
        (PTE address, secondary). Both groups full: MemoryError, as hash_page would evict."""
        found = self.lookup(ea)
        if found:
            return found
        vsid = self._vsid(ea)
        rpn = (ea >> 12) if rpn is None else rpn
        for secondary, group in enumerate(self.groups(ea)):
            for k in range(PTES_PER_GROUP):
                pte = group + 8 * k
                if not self._word(pte) & PTE_VALID:
                    self.machine.write(pte + 4, pte_word1(rpn, pp=pp).to_bytes(4, "big"))
                    self.machine.write(pte, pte_word0(vsid, ea, secondary).to_bytes(4, "big"))
                    return pte, bool(secondary)
        raise MemoryError(f"both PTEGs for {ea:#x} are full")

    def remove(self, ea):
        """Clear the valid bit of ``ea``'s PTE (the TLB may still hold it: tlbie does that)."""
        found = self.lookup(ea)
        if found:
            self.machine.write(found[0], (self._word(found[0]) & ~PTE_VALID).to_bytes(4, "big"))
        return found is not None


def walker_word(machine, address):
    """The 32-bit descriptor at ``address`` as the machine's ARM table walker would read it
    now, without counting or caching anything (``_descriptor``'s view, from Python): guest
    RAM; but a walker that reads below the L1 D (a profile's ``walk_through_l1 = false``)
    gets memory's copy of a line that is still dirty in the L1 D."""
    st = machine.state
    word = int.from_bytes(machine.read(address, 4), "little")
    l1d = int(st[c.H_L1D])
    if st[c.H_WALK_THROUGH_L1] or l1d < 0:
        return word
    r = c.HEADER + c.LEVEL_RECORD * l1d
    if not st[r + c.L_SHADOW]:
        return word
    shift, sets, ways = int(st[r + c.L_SHIFT]), int(st[r + c.L_SETS]), int(st[r + c.L_WAYS])
    line = address >> shift
    first = (line & (sets - 1)) * ways
    for slot in range(first, first + ways):
        if st[st[r + c.L_TAGS] + slot] == line + 1:
            if not st[st[r + c.L_DIRTY] + slot]:
                return word
            words = max((1 << shift) >> 3, 1)
            offset = address & ((1 << shift) - 1)
            kept = int(st[st[r + c.L_SHADOW] + slot * words + (offset >> 3)])
            return (kept >> (8 * (offset & 4))) & 0xFFFFFFFF
    return word


# Linux's ARM PTE bits (arch/arm/include/asm/pgtable-2level.h, 3.x): the "Linux" PTE keeps
# young and dirty, which the hardware PTE lacks
L_PTE_PRESENT, L_PTE_YOUNG, L_PTE_DIRTY, L_PTE_RDONLY, L_PTE_USER, L_PTE_XN = \
    0x1, 0x2, 0x40, 0x80, 0x100, 0x200
PTE_HWTABLE_OFF = 2048          # hardware tables at +2048 and +3072 of the PTE page


class ShortDescriptorTables:
    """ARMv7 short-descriptor tables in a machine's guest memory, in Linux's layout.

    The 16 KB first-level table is at TTBR0. Linux gives each pair of first-level entries
    (2 MB) one 4 KB PTE page: its two Linux tables at +0 and +1024 and the two hardware
    tables the walker reads at +2048 and +3072; the first-level entries point at the
    hardware ones. ``map`` writes both PTEs as ``set_pte_ext`` would (guest assembly can do
    the same: the walker reads these bytes). Physical = virtual unless told otherwise.
    """

    def __init__(self, machine):
        self.machine = machine
        self.base = machine.alloc(16 << 10, align=16 << 10)
        machine.mmu.ttbr0 = self.base
        self.pte_pages = {}

    def _word(self, address):
        return int.from_bytes(self.machine.read(address, 4), "little")

    def _put(self, address, value):
        self.machine.write(address, (value & 0xFFFFFFFF).to_bytes(4, "little"))

    def first_level_address(self, va):
        return self.base | ((va >> 20) << 2)

    def pte_page(self, va):
        """The 4 KB PTE page for ``va``'s 2 MB, allocated and hooked in on first use."""
        pair = va >> 21
        if pair not in self.pte_pages:
            page = self.machine.alloc(4096)
            self.pte_pages[pair] = page
            first = self.first_level_address(pair << 21)
            self._put(first, (page + PTE_HWTABLE_OFF) | 1)            # coarse page table
            self._put(first + 4, (page + PTE_HWTABLE_OFF + 1024) | 1)
        return self.pte_pages[pair]

    def pte_addresses(self, va):
        """(Linux PTE address, hardware PTE address) of ``va``'s page."""
        linux = self.pte_page(va) + 4 * ((va >> 12) & 0x1FF)
        return linux, linux + PTE_HWTABLE_OFF

    @staticmethod
    def hardware_pte(pa, writable=True, executable=True):
        """Small page, AP = 0b11, write-back cacheable (C and B); APX if read-only, XN if
        not executable."""
        return (pa & ~0xFFF) | 0x30 | 0xC | 0x2 | (0 if writable else 0x200) | \
            (0 if executable else 0x1)

    def map(self, va, pa=None, writable=True, executable=True):
        """Map ``va``'s 4 KB page: the Linux PTE (present, young, dirty if writable) and the
        hardware PTE; returns the hardware PTE's address."""
        pa = va if pa is None else pa
        linux, hardware = self.pte_addresses(va)
        self._put(linux, (pa & ~0xFFF) | L_PTE_PRESENT | L_PTE_YOUNG | L_PTE_USER |
                  (L_PTE_DIRTY if writable else L_PTE_RDONLY) |
                  (0 if executable else L_PTE_XN))
        self._put(hardware, self.hardware_pte(pa, writable, executable))
        return hardware

    def map_range(self, start, length, **kind):
        for page in range(start & ~0xFFF, start + length, 0x1000):
            self.map(page, **kind)

    def section(self, va, pa=None, writable=True, executable=True):
        """A 1 MB section (first-level descriptor type 2)."""
        pa = va if pa is None else pa
        self._put(self.first_level_address(va), (pa & 0xFFF00000) | 0xC00 | 0xC | 0x2 |
                  (0 if writable else 0x8000) | (0 if executable else 0x10))

    def unmap(self, va):
        linux, hardware = self.pte_addresses(va)
        self._put(linux, 0)
        self._put(hardware, 0)

    def map_machine(self):
        """Map what a routine needs: loaded code, the buffers so far, the stack's top 64 KB."""
        m = self.machine
        self.map_range(CODE_BASE, m.next_code - CODE_BASE)
        self.map_range(HEAP_BASE, m.heap_end + (8 << 10) - HEAP_BASE)  # PTE pages it adds
        self.map_range(m.stack_top - (64 << 10), 64 << 10)


class SegmentRegisters(MMURegisters):
    """32-bit PowerPC: SDR1 (the hashed table's base and size), the 16 segment registers, and
    on a software-loaded TLB (603, 405; ``Machine(mmu=True)``) the special-purpose registers
    its miss handlers use."""

    @MMURegisters.sdr1.setter
    def sdr1(self, value):
        self.state[c.H_SDR1] = value
        soft = self.machine.soft_tlb
        if soft:                             # the 603 computes HASH1/HASH2 from it
            soft.regs.set_spr(softtlb.SDR1, value)

    def set_segment(self, number, vsid, ks=False, kp=False, core=None):
        """Segment register ``number`` (0-15, selected by EA bits 0-3) of ``core`` (None: of
        every core) holds ``vsid`` (and, on a software-loaded TLB, the Ks/Kp key bits the
        603 puts in SRR1[KEY])."""
        self.set_segments({number: vsid}, ks, kp, core)

    def set_segments(self, vsids, ks=False, kp=False, core=None):
        """``set_segment`` of each {number: vsid}, the same keys for all: on a
        software-loaded TLB one write of the CPU's saved context for them all (a kernel's
        switch_mm sets a dozen at once)."""
        m = self.machine
        if any(not 0 <= number < 16 for number in vsids):
            raise ValueError("segment registers are numbered 0-15")
        if m.soft_tlb is not None and m.soft_tlb.kind == "405":
            raise ValueError(f"{m.profile.name} has no segment registers (the 405 tags "
                             "its TLB entries with a PID instead: set_spr)")
        for k in self.cores(core):
            at = m.model.header(k)[c.H_SEGMENTS]
            for number, vsid in vsids.items():
                self.state[at + number] = vsid & 0xFFFFFF
        if m.soft_tlb:
            m.soft_tlb.regs.set_srs({number: (vsid & 0xFFFFFF) | (ks << 30) | (kp << 29)
                                     for number, vsid in vsids.items()})

    def segment(self, number):
        return int(self.state[self.state[c.H_SEGMENTS] + number])

    def spr(self, number):
        """A special-purpose register of the CPU (software-loaded TLB machines)."""
        return self._soft_tlb_regs().spr(number)

    def set_spr(self, number, value):
        self._soft_tlb_regs().set_spr(number, value)

    def _soft_tlb_regs(self):
        if self.machine.soft_tlb is None:
            raise ValueError("spr/set_spr reach the special-purpose registers of a "
                             "software-loaded TLB: Machine(mmu=True) on ppc603e or ppc405gp")
        return self.machine.soft_tlb.regs


class TranslationTableBase(MMURegisters):
    """ARMv7: the translation table base (TTBR0; the first-level table is 16 KB)."""

    ttbr0 = MMURegisters.sdr1


def registers_of(isa):
    """The class of an ISA's MMU registers, which a machine composes as ``.mmu``."""
    return {"ppc32": SegmentRegisters, "ppc64": SLBRegisters,
            "arm": TranslationTableBase}.get(isa, MMURegisters)
