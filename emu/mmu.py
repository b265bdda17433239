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

The 64-bit format (POWER4; ``emu.hash64`` describes it, with its sources) works the same
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
the core that runs them. Software-loaded TLBs (emu.softtlb) stay on one core.

A walk costs the cache stalls of its PTE reads; a fixed sequencing overhead of the search
hardware is not charged (no documented figure was found): a profile may set ``walk_cycles`` in
its ``[tlb]`` table, with the source. Unicorn itself runs with physical = effective addresses;
the model decides hits, misses, walks and faults, not where the bytes come from.
"""
from __future__ import annotations

import numpy as np
from numba import carray, njit

from . import cache as c
from . import hash64, softtlb
from .cache import CacheLevel
from .hash64 import HashedPageTable64     # noqa: F401  (the 64-bit table's Python side)

PTE_VALID = 0x80000000
PTE_SECONDARY = 0x40
PTEG_BYTES = 64
PTES_PER_GROUP = 8
HTAB_MIN = 64 << 10                 # 64 KB (HTABMASK = 0) up to 32 MB (HTABMASK = 0x1FF)

MODE_OFF, MODE_HASHED32 = 0, 1
MODE_ARM_SHORT = 4      # ARMv7 short descriptors (below); 2 and 3 are emu.softtlb's 603 and 405
MODE_HASHED64 = 5       # the 64-bit hashed page table behind an SLB (emu.hash64)


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
    (loaded code, buffers so far, the stack): the 64-bit or 32-bit HTAB, or ARM tables."""
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


# ------------------------------------------------------------------------ native hot path

@njit(cache=True)
def _load_be32(st, address):
    """A big-endian word of guest RAM, read by the model (not by the guest)."""
    if address < 0 or address + 4 > st[c.H_RAM_SIZE]:
        return -1
    ram = carray(c._pointer(st[c.H_RAM_PTR] + address), (4,), np.uint8)
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


# A TLB entry keeps the page's permissions, in the level's per-way "dirty" word (unused by
# a TLB): what it forbids, so that 0 (the 32-bit hashed-table PTEs as modelled) forbids nothing.
DENY_WRITE, DENY_FETCH, IS_SECTION, DENY_READ = 1, 2, 4, 8


@njit(cache=True, inline='always')
def _needs(write, fetch):
    return DENY_WRITE if write else DENY_FETCH if fetch else DENY_READ


@njit(cache=True)
def walk_hashed64(st, ea, write, fetch):
    """Search the 64-bit HTAB for ``ea``: its SLB entry, the primary PTEG, the secondary.
    Returns (found and permitted, stall, the TLB entry's permission word)."""
    st[c.H_WALKS] += 1
    k = hash64.slb_find(st, ea)
    if k < 0:
        return _hash64_fault(st, hash64.FAULT_SEGMENT, -1), 0, 0
    vsid_word = hash64.slb_vsid_word(st, k)
    if fetch and vsid_word & hash64.SLB_VSID_N:       # checked before the search (QEMU)
        return _hash64_fault(st, hash64.FAULT_NO_EXECUTE, k), 0, 0
    vsid = (vsid_word >> 12) & (hash64.VSID_LIMIT - 1)
    stall = st[c.H_WALK_CYCLES]
    for secondary in range(2):
        h = hash64.secondary_hash(vsid, ea) if secondary else hash64.primary_hash(vsid, ea)
        group = hash64.pteg_address(st[c.H_SDR1], h)
        want = hash64.hpte_dword0(vsid, ea, secondary)
        for j in range(hash64.HPTES_PER_GROUP):
            hpte = group + hash64.HPTE_BYTES * j
            stall += c.data_access(st, hpte, hash64.HPTE_BYTES, False)
            if hash64.load_be64(st, hpte) & hash64.HPTE_V_COMPARE == want:
                perm = _permissions64(hash64.load_be64(st, hpte + 8), vsid_word)
                if perm & _needs(write, fetch):
                    return _hash64_fault(st, _denial64(perm, fetch), k), stall, perm
                st[c.H_SECONDARY_HITS if secondary else c.H_PRIMARY_HITS] += 1
                return True, stall, perm
    return _hash64_fault(st, hash64.FAULT_NO_HPTE, k), stall, 0


@njit(cache=True)
def _permissions64(dword1, vsid_word):
    """A TLB entry's permission word from an HPTE's doubleword 1 and its SLB entry."""
    may_read, may_write = hash64.pp_rights(dword1, vsid_word)
    perm = 0 if may_write else DENY_WRITE
    if not may_read:
        perm |= DENY_READ | DENY_FETCH
    if hash64.no_execute(dword1, vsid_word):
        perm |= DENY_FETCH
    return perm


@njit(cache=True, inline='always')
def _denial64(perm, fetch):
    """A fetch denied while reads are allowed is no-execute (N, G); the rest is PP."""
    if fetch and not perm & DENY_READ:
        return hash64.FAULT_NO_EXECUTE
    return hash64.FAULT_PROTECTION


@njit(cache=True)
def _hash64_fault(st, status, slb_entry):
    """Note the first fault's kind (and the SLB entry it used); False, for the walker."""
    if st[c.H_PAGE_FAULTS] == 0:
        st[c.H_FAULT_STATUS] = status
        st[c.H_FAULT_L1_ADDR] = slb_entry
    return False


@njit(cache=True, inline='always')     # into the hooks
def translate(st, ea, write, fetch):
    """One translation of ``ea`` through the TLB(s) and, on a miss, the walker.

    Returns stall cycles; a failed walk (or an access the TLB entry forbids) records a page
    fault (the first one's address and kind are kept) for the hook to stop the machine."""
    if softtlb.MODE_SOFT603 <= st[c.H_MMU] <= softtlb.MODE_SOFT405:
        return softtlb.lookup(st, ea, fetch)     # the CPU translated; the model counts
    level = st[c.H_ITLB] if fetch else st[c.H_DTLB]
    if level < 0:
        return 0
    r = c.HEADER + c.LEVEL_RECORD * level
    page = ea >> st[r + c.L_SHIFT]
    s = page & (st[r + c.L_SETS] - 1)
    way = c._hit(st, r, page, s)
    if way >= 0:                              # the common case, inline: a first-level hit
        st[r + c.L_ACCESSES] += 1
        st[r + c.L_HITS] += 1
        perm = st[st[r + c.L_DIRTY] + s * st[r + c.L_WAYS] + way]
        if perm & _needs(write, fetch):
            _denied(st, ea, write, fetch, perm)
        return 0
    return _miss(st, level, ea, write, fetch)


@njit(cache=True)
def _permissions(st, level, ea):
    """The permission word of ``ea``'s entry at a TLB level (-1 if absent)."""
    r = c.HEADER + c.LEVEL_RECORD * level
    page = ea >> st[r + c.L_SHIFT]
    way = c._find(st, r, page)
    if way < 0:
        return -1
    return st[r + c.L_DIRTY] + (page & (st[r + c.L_SETS] - 1)) * st[r + c.L_WAYS] + way


@njit(cache=True)
def _page_fault(st, ea, write, fetch):
    if st[c.H_PAGE_FAULTS] == 0:
        st[c.H_FAULT_EA] = ea
        st[c.H_FAULT_WRITE] = write
        st[c.H_FAULT_FETCH] = fetch
    st[c.H_PAGE_FAULTS] += 1


@njit(cache=True)
def _denied(st, ea, write, fetch, perm):
    """The TLB holds the page but forbids this access: a permission fault, from the entry
    (no walk: the table may have changed, but until the entry is invalidated it is what
    the hardware uses)."""
    if st[c.H_MMU] == MODE_HASHED64:
        _hash64_fault(st, _denial64(perm, fetch), -1)
    else:
        _short_fault(st, FSR_PERMISSION_SECTION if perm & IS_SECTION else FSR_PERMISSION_PAGE,
                     -1, -1)
    _page_fault(st, ea, write, fetch)


@njit(cache=True)
def _miss(st, level, ea, write, fetch):
    """translate beyond a first-level hit: the TLBs below, then the walker."""
    first = level
    while level != c.MEMORY:
        r = c.HEADER + c.LEVEL_RECORD * level
        if not c._level(st, level, ea, False):
            if level == first:
                return 0
            perm = st[_permissions(st, level, ea)]    # a hit below: its entry goes up
            st[_permissions(st, first, ea)] = perm
            if perm & _needs(write, fetch):
                _denied(st, ea, write, fetch, perm)
            return st[r + c.L_LATENCY]
        level = st[r + c.L_NEXT]
    perm = 0
    if st[c.H_MMU] == MODE_ARM_SHORT:
        found, stall, perm = walk_short(st, ea, write, fetch)
    elif st[c.H_MMU] == MODE_HASHED64:
        found, stall, perm = walk_hashed64(st, ea, write, fetch)
    else:
        found, stall = walk_hashed32(st, ea)
    if found:
        level = first
        while level != c.MEMORY:
            st[_permissions(st, level, ea)] = perm
            level = st[c.HEADER + c.LEVEL_RECORD * level + c.L_NEXT]
    else:
        _page_fault(st, ea, write, fetch)
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
def _core_tlbs(st, core):
    """The first I-side and D-side TLB levels of ``core`` (-1: none) and where its segment
    registers (or SLB) are."""
    table = st[c.H_CORES]
    if table == 0:
        return st[c.H_ITLB], st[c.H_DTLB], st[c.H_SEGMENTS]
    at = table + 1 + c.CORE_RECORD * core
    return st[at + c.T_ITLB], st[at + c.T_DTLB], st[at + c.T_SEGMENTS]


@njit(cache=True)
def _tlb_levels(st, core):
    """Every TLB level of ``core``, once each (a unified TLB ends both sides' chains)."""
    itlb, dtlb, _ = _core_tlbs(st, core)
    out = np.full(4, -1, np.int64)
    n = 0
    for level in (itlb, dtlb):
        while level >= 0:
            seen = False
            for k in range(n):
                seen |= out[k] == level
            if not seen:
                out[n] = level
                n += 1
            level = st[c.HEADER + c.LEVEL_RECORD * level + c.L_NEXT]
    return out[:n]


@njit(cache=True)
def _cores_reached(st, broadcast):
    """The cores a TLB invalidation reaches: all of them when it is broadcast (tlbie, ARM's
    inner-shareable forms), else the one that runs it."""
    if broadcast and st[c.H_CORES]:
        return 0, st[st[c.H_CORES]]
    return st[c.H_CORE], st[c.H_CORE] + 1


@njit(cache=True)
def invalidate_page(st, ea, broadcast=False):
    """tlbie: the entries for ``ea``'s page in every TLB level of this core (``broadcast``:
    of every core). On the 64-bit hashed MMU the operand is a virtual address (tlbie64),
    also while a kernel routine runs untranslated (H_MMU off, the SLB kept:
    emu.kernel.ppc64)."""
    hashed64 = st[c.H_MMU] == MODE_HASHED64 or st[c.H_SLB_ENTRIES] > 0
    first, end = _cores_reached(st, broadcast)
    for core in range(first, end):
        if hashed64:
            tlbie64(st, ea, core)
            continue
        for level in _tlb_levels(st, core):
            c._maintain_level(st, level, ea, c.OP_INVALIDATE)


@njit(cache=True)
def invalidate_all(st, broadcast=False):
    """tlbia (or a full flush): every TLB entry of this core (``broadcast``: of every core)."""
    first, end = _cores_reached(st, broadcast)
    for core in range(first, end):
        for level in _tlb_levels(st, core):
            c.invalidate_level(st, level)


# ------------------------------------ the 64-bit MMU's TLB and SLB instructions (emu.hash64)
#
# The model's TLB levels are tagged by effective page (Unicorn runs physical = effective),
# where POWER4's TLB is tagged by virtual page. So that an entry never outlives the segment
# mapping it was made under, whatever changes an SLB entry also drops the model's TLB
# entries in that segment (the hardware's ERATs are flushed likewise; its TLB would keep
# them, and a re-established segment walks again here).

@njit(cache=True)
def tlbie64(st, rb, core):
    """tlbie RB on ``core``: RB holds the virtual address without its top 16 bits (Linux's
    __tlbie clears them, include/asm-ppc64/mmu.h), so VSID bits 0-19 and the page index.
    Every valid entry of the core's SLB whose VSID agrees in those bits has the page's
    entries invalidated."""
    vsid_bits = (rb >> 28) & 0xFFFFF
    base = _core_tlbs(st, core)[2]
    for k in range(st[c.H_SLB_ENTRIES]):
        esid_word = st[base + 2 * k]
        if esid_word & hash64.SLB_ESID_V and \
                (st[base + 2 * k + 1] >> 12) & 0xFFFFF == vsid_bits:
            ea = (esid_word & hash64.SLB_ESID_MASK) | (rb & 0x0FFFF000)
            for level in _tlb_levels(st, core):
                c._maintain_level(st, level, ea, c.OP_INVALIDATE)


@njit(cache=True)
def _drop_segment(st, esid_word, only_unmapped):
    """Drop the model's TLB entries in a segment (``esid_word``'s; with ``only_unmapped``,
    in every segment no valid SLB entry maps any more)."""
    segment = esid_word & hash64.SLB_ESID_MASK
    for level in _tlb_levels(st, st[c.H_CORE]):
        r = c.HEADER + c.LEVEL_RECORD * level
        ways = st[r + c.L_WAYS]
        for slot in range(st[r + c.L_SETS] * ways):
            tag = st[st[r + c.L_TAGS] + slot]
            if tag == 0:
                continue
            ea = (tag - 1) << st[r + c.L_SHIFT]
            gone = hash64.slb_find(st, ea) < 0 if only_unmapped else                 ea & hash64.SLB_ESID_MASK == segment
            if gone:
                c.drop_line(st, level, tag - 1, slot % ways)
                st[r + c.L_INVALIDATIONS] += 1


@njit(cache=True)
def slb_store(st, rs, rb):
    """slbmte RS, RB: SLB entry RB[52:63] = (RB's ESID | V, RS). Returns False (and changes
    nothing) for what the model refuses (hash64.slbmte_problem says why)."""
    if st[c.H_MMU] != MODE_HASHED64:
        return True
    k = rb & hash64.SLB_INDEX_MASK
    if k >= st[c.H_SLB_ENTRIES] or rb & 0x07FFF000 or (rs >> 62) & 3 or \
            rs & hash64.SLB_VSID_L:
        return False
    at = st[c.H_SEGMENTS] + 2 * k
    esid_word = rb & ~hash64.SLB_INDEX_MASK
    if st[at] != esid_word or st[at + 1] != rs:
        if st[at] & hash64.SLB_ESID_V:
            _drop_segment(st, st[at], False)
        if esid_word & hash64.SLB_ESID_V:
            _drop_segment(st, esid_word, False)
    st[at], st[at + 1] = esid_word, rs
    return True


@njit(cache=True)
def slb_invalidate(st, rb):
    """slbie RB: the SLB entry of RB's ESID made invalid, and its segment's TLB entries."""
    if st[c.H_MMU] != MODE_HASHED64:
        return
    k = hash64.slb_find(st, rb)
    if k >= 0:
        at = st[c.H_SEGMENTS] + 2 * k
        st[at] &= ~hash64.SLB_ESID_V
        _drop_segment(st, st[at], False)


@njit(cache=True)
def slb_invalidate_all(st):
    """slbia: every SLB entry but entry 0 invalid (Book III; QEMU helper_slbia)."""
    if st[c.H_MMU] != MODE_HASHED64:
        return
    for k in range(1, st[c.H_SLB_ENTRIES]):
        st[st[c.H_SEGMENTS] + 2 * k] &= ~hash64.SLB_ESID_V
    _drop_segment(st, 0, True)


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


@njit(cache=True)
def _load_le32(st, address):
    if address < 0 or address + 4 > st[c.H_RAM_SIZE]:
        return -1
    ram = carray(c._pointer(st[c.H_RAM_PTR] + address), (4,), np.uint8)
    return np.int64(ram[0]) | (np.int64(ram[1]) << 8) | (np.int64(ram[2]) << 16) | \
        (np.int64(ram[3]) << 24)


@njit(cache=True)
def _descriptor(st, address):
    """(descriptor, stall) as the table walker reads it.

    Through the L1 D (Cortex-A9 with write-back walks) it is a load and sees the newest
    bytes. Otherwise it reads the level below the L1 D, which holds memory's copy: a
    descriptor stored but still dirty in the L1 D is seen as it was before (the shadow)."""
    l1d = st[c.H_L1D]
    if st[c.H_WALK_THROUGH_L1] or l1d < 0:
        return _load_le32(st, address), c.data_access(st, address, 4, False)
    stall = c.access(st, st[c.H_FIRST_LEVEL], address, False)    # (memory if no L2)
    r = c.HEADER + c.LEVEL_RECORD * l1d
    line = address >> st[r + c.L_SHIFT]
    way = c._find(st, r, line)
    if way >= 0 and st[r + c.L_SHADOW]:
        slot = (line & (st[r + c.L_SETS] - 1)) * st[r + c.L_WAYS] + way
        if st[st[r + c.L_DIRTY] + slot]:
            words = max((1 << st[r + c.L_SHIFT]) >> 3, 1)
            offset = address & ((1 << st[r + c.L_SHIFT]) - 1)
            word = st[st[r + c.L_SHADOW] + slot * words + (offset >> 3)]
            return (word >> (8 * (offset & 4))) & 0xFFFFFFFF, stall
    return _load_le32(st, address), stall


@njit(cache=True)
def _short_fault(st, status, l1_addr, l2_addr):
    if st[c.H_PAGE_FAULTS] == 0:
        st[c.H_FAULT_STATUS] = status
        st[c.H_FAULT_L1_ADDR] = l1_addr
        st[c.H_FAULT_L2_ADDR] = l2_addr
    return False


@njit(cache=True)
def walk_short(st, va, write, fetch):
    """The ARMv7 table walk for ``va``. Returns (found and permitted, stall, the entry's
    permission word for the TLB)."""
    st[c.H_WALKS] += 1
    l1_addr = (st[c.H_SDR1] & 0xFFFFC000) | ((va >> 20) << 2)
    first, stall = _descriptor(st, l1_addr)
    kind = first & 3
    if kind == 2:                                         # section (or supersection)
        perm = IS_SECTION | (DENY_WRITE if first & 0x8000 else 0) | \
            (DENY_FETCH if first & 0x10 else 0)
        if perm & _needs(write, fetch):
            return _short_fault(st, FSR_PERMISSION_SECTION, l1_addr, -1), stall, perm
        st[c.H_PRIMARY_HITS] += 1
        return True, stall, perm
    if kind != 1:
        return _short_fault(st, FSR_TRANSLATION_SECTION, l1_addr, -1), stall, 0
    l2_addr = (first & 0xFFFFFC00) | (((va >> 12) & 0xFF) << 2)
    second, more = _descriptor(st, l2_addr)
    stall += more
    kind = second & 3
    if kind == 0:
        return _short_fault(st, FSR_TRANSLATION_PAGE, l1_addr, l2_addr), stall, 0
    xn = second & 1 if kind >= 2 else (second >> 15) & 1
    perm = (DENY_WRITE if second & 0x200 else 0) | (DENY_FETCH if xn else 0)
    if perm & _needs(write, fetch):
        return _short_fault(st, FSR_PERMISSION_PAGE, l1_addr, l2_addr), stall, perm
    st[c.H_SECONDARY_HITS] += 1
    return True, stall, perm


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
        machine.ttbr0 = self.base
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
        from .machine import CODE_BASE, HEAP_BASE
        self.map_range(CODE_BASE, m._next_code - CODE_BASE)
        self.map_range(HEAP_BASE, m._heap + (8 << 10) - HEAP_BASE)  # PTE pages it adds
        self.map_range(m.stack_top - (64 << 10), 64 << 10)
