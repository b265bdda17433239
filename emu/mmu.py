"""The MMU model: TLBs and the 32-bit PowerPC hashed page table, over guest memory.

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

A walk costs the cache stalls of its PTE reads; a fixed sequencing overhead of the search
hardware is not charged (no documented figure was found): a profile may set ``walk_cycles`` in
its ``[tlb]`` table, with the source. Unicorn itself runs with physical = effective addresses;
the model decides hits, misses, walks and faults, not where the bytes come from.
"""
from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

from . import cache as c
from . import softtlb
from .cache import CacheLevel

PTE_VALID = 0x80000000
PTE_SECONDARY = 0x40
PTEG_BYTES = 64
PTES_PER_GROUP = 8
HTAB_MIN = 64 << 10                 # 64 KB (HTABMASK = 0) up to 32 MB (HTABMASK = 0x1FF)

MODE_OFF, MODE_HASHED32 = 0, 1


# ----------------------------------------------------------- the hash, by the architecture book

@njit(cache=True)
def primary_hash(vsid, ea):
    """19-bit primary hash: low 19 bits of the VSID XOR the 16-bit page index (EA bits 4-19)."""
    return (vsid & 0x7FFFF) ^ ((ea >> 12) & 0xFFFF)


@njit(cache=True)
def secondary_hash(vsid, ea):
    return ~primary_hash(vsid, ea) & 0x7FFFF


@njit(cache=True)
def pteg_address(sdr1, hash_value):
    """Where the PTE group for a hash lives: HTABORG, with HTABMASK selecting hash bits."""
    htaborg, htabmask = sdr1 & 0xFFFF0000, sdr1 & 0x1FF
    return htaborg | ((hash_value << 6) & ((htabmask << 16) | 0xFFC0))


@njit(cache=True)
def pte_word0(vsid, ea, secondary):
    """The compare word of a valid PTE: V, VSID, H (found by the secondary hash), API."""
    return PTE_VALID | ((vsid & 0xFFFFFF) << 7) | (PTE_SECONDARY if secondary else 0) | \
        ((ea >> 22) & 0x3F)


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
    if "itlb_entries" in t and "dtlb_entries" in t:
        return [CacheLevel("ITLB", t["itlb_entries"] * page, t["itlb_ways"], page, repl),
                CacheLevel("DTLB", t["dtlb_entries"] * page, t["dtlb_ways"], page, repl)]
    if "entries" in t:
        return [CacheLevel("TLB", t["entries"] * page, t["ways"], page, repl)]
    raise ValueError(f"profile {profile.name} describes no TLB")


def supported(profile):
    """Why the MMU model cannot run this profile yet, or None if it can."""
    if profile.isa == "ppc32" and profile.tlb.get("reload") == "software":
        if softtlb.kind(profile) is None:
            return (f"{profile.name} reloads its TLB in software, but the model knows the "
                    f"software-loaded TLBs of the 603 and the 405 only, not Unicorn CPU "
                    f"{profile.unicorn_cpu}")
        return None
    if profile.isa != "ppc32" or profile.tlb.get("reload") != "hardware-hash":
        return (f"the MMU model so far covers 32-bit PowerPC with a hardware-searched hash "
                f"table (ppc604, ppc750) or a software-loaded TLB (ppc603e, ppc405gp); "
                f"{profile.name} reloads its TLB by "
                f"{profile.tlb.get('reload', 'an unknown method')} on {profile.isa}")
    return None


# ------------------------------------------------------------------------ native hot path

@intrinsic
def _pointer(typingctx, address):
    """An int64 host address as a pointer (for carray over guest RAM)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))
    return types.voidptr(types.int64), codegen


@njit(cache=True)
def _load_be32(st, address):
    """A big-endian word of guest RAM, read by the model (not by the guest)."""
    if address < 0 or address + 4 > st[c.H_RAM_SIZE]:
        return -1
    ram = carray(_pointer(st[c.H_RAM_PTR] + address), (4,), np.uint8)
    return (np.int64(ram[0]) << 24) | (np.int64(ram[1]) << 16) | (np.int64(ram[2]) << 8) | \
        np.int64(ram[3])


@njit(cache=True)
def walk_hashed32(st, ea):
    """Search the HTAB for ``ea``: primary PTEG, then secondary. Returns (found, stall)."""
    st[c.H_WALKS] += 1
    vsid = st[st[c.H_SEGMENTS] + ((ea >> 28) & 0xF)] & 0xFFFFFF
    stall = st[c.H_WALK_CYCLES]
    for secondary in range(2):
        h = secondary_hash(vsid, ea) if secondary else primary_hash(vsid, ea)
        group = pteg_address(st[c.H_SDR1], h)
        want = pte_word0(vsid, ea, secondary)
        for k in range(PTES_PER_GROUP):
            pte = group + 8 * k
            stall += c.data_access(st, pte, 8, False)
            if _load_be32(st, pte) == want:
                st[c.H_SECONDARY_HITS if secondary else c.H_PRIMARY_HITS] += 1
                return True, stall
    return False, stall


@njit(cache=True)
def translate(st, ea, write, fetch):
    """One translation of ``ea`` through the TLB(s) and, on a miss, the walker.

    Returns stall cycles; a failed walk records a page fault (the first one's address and
    kind are kept) for the hook to stop the machine."""
    if st[c.H_MMU] >= softtlb.MODE_SOFT603:
        return softtlb.lookup(st, ea, fetch)     # the CPU translated; the model counts
    level = st[c.H_ITLB] if fetch else st[c.H_DTLB]
    if level < 0:
        return 0
    r = c.HEADER + c.LEVEL_RECORD * level
    page = ea >> st[r + c.L_SHIFT]
    s = page & (st[r + c.L_SETS] - 1)
    if c._hit(st, r, page, s) >= 0:           # the common case, inline: a first-level hit
        st[r + c.L_ACCESSES] += 1
        st[r + c.L_HITS] += 1
        return 0
    return _miss(st, level, ea, write, fetch)


@njit(cache=True)
def _miss(st, level, ea, write, fetch):
    """translate beyond a first-level hit: the TLBs below, then the walker."""
    while level != c.MEMORY:
        if not c._level(st, level, ea, False):
            return 0                      # a TLB hit (a level below the first adds nothing)
        level = st[c.HEADER + c.LEVEL_RECORD * level + c.L_NEXT]
    found, stall = walk_hashed32(st, ea)
    if not found:
        if st[c.H_PAGE_FAULTS] == 0:
            st[c.H_FAULT_EA] = ea
            st[c.H_FAULT_WRITE] = write
            st[c.H_FAULT_FETCH] = fetch
        st[c.H_PAGE_FAULTS] += 1
        _forget(st, ea, fetch)
    return stall


@njit(cache=True)
def _forget(st, ea, fetch):
    """A failed walk loads nothing: empty the entries the lookup just allocated."""
    level = st[c.H_ITLB] if fetch else st[c.H_DTLB]
    while level != c.MEMORY:
        r = c.HEADER + c.LEVEL_RECORD * level
        page = ea >> st[r + c.L_SHIFT]
        way = c._find(st, r, page)
        if way >= 0:
            c.drop_line(st, level, page, way)
        level = st[r + c.L_NEXT]


@njit(cache=True)
def invalidate_page(st, ea):
    """tlbie: the entries for ``ea``'s page in every TLB (a unified TLB reached from both
    sides is simply found empty the second time)."""
    for level in (st[c.H_ITLB], st[c.H_DTLB]):
        while level >= 0:
            c._maintain_level(st, level, ea, c.OP_INVALIDATE)
            level = st[c.HEADER + c.LEVEL_RECORD * level + c.L_NEXT]


@njit(cache=True)
def invalidate_all(st):
    """tlbia (or a full flush): every TLB entry. TLB records follow the cache records."""
    first = st[c.H_NLEVELS]
    for level in (st[c.H_ITLB], st[c.H_DTLB]):
        if 0 <= level < first:
            first = level
    for level in range(first, st[c.H_NLEVELS]):
        c.invalidate_level(st, level)


# ------------------------------------------------------------ the table, seen from Python

class HashedPageTable:
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
        machine.sdr1 = sdr1_for(self.base, size)
        for n in range(16):
            machine.set_segment(n, vsid_base + n)

    def _vsid(self, ea):
        return self.machine.segment((ea >> 28) & 0xF)

    def groups(self, ea):
        """(primary PTEG address, secondary PTEG address) for an effective address."""
        vsid, sdr1 = self._vsid(ea), self.machine.sdr1
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

    def map(self, start, length):
        """PTEs for every page of [start, start + length)."""
        for page in range(start & ~0xFFF, start + length, 0x1000):
            self.insert(page)

    def map_machine(self):
        """Map what a routine needs to run: loaded code, the buffers allocated so far (this
        table included), and the top 64 KB of the stack."""
        m = self.machine
        from .machine import CODE_BASE, HEAP_BASE
        self.map(CODE_BASE, m._next_code - CODE_BASE)
        self.map(HEAP_BASE, m._heap - HEAP_BASE)
        self.map(m.stack_top - (64 << 10), 64 << 10)
