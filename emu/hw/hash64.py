"""The 64-bit PowerPC hashed page table (POWER4, PowerPC AS / Book III 2.0x): its format.

Segments: a 64-bit effective address (EA) splits into a 36-bit ESID (EA >> 28: 256 MB
segments) and an offset. The segment lookaside buffer (SLB; 64 entries on POWER4, filled by
``slbmte``) maps an ESID to a VSID; the virtual address is VSID || offset. An SLB entry is the
two doublewords ``slbmte RS, RB`` moves (QEMU target/ppc/mmu-hash64.h SLB_*; Linux 2.6
include/asm-ppc64/mmu.h SLB_*):

* ESID word (RB): ESID << 28 | V (0x08000000); RB's low 12 bits name the entry;
* VSID word (RS): VSID << 12 | Ks (0x800) | Kp (0x400) | N (0x200, no-execute segment) |
  L (0x100, large pages) | C (0x80, class).

The hashed page table (HTAB) lives in guest memory at SDR1 = HTABORG | HTABSIZE: HTABORG
(mask 0x0FFFFFFFFFFC0000) is its real address, aligned to its size, 2^(18 + HTABSIZE) bytes
(HTABSIZE is 5 bits, 256 KB minimum) [QEMU mmu-hash64.h SDR_64_HTABORG/SDR_64_HTABSIZE]. It
holds PTE groups (PTEGs) of 8 HPTEs of 16 bytes (128 bytes, one POWER4 cache line). For a
4 KB page in a 256 MB segment:

* primary hash = (low 39 bits of the VSID) XOR (the 16-bit page index, EA bits 12-27);
  secondary hash = its ones' complement (Linux include/asm-ppc64/mmu.h hpt_hash; QEMU
  ppc_hash64_htab_lookup);
* PTEG address = HTABORG + (hash & (2^(11 + HTABSIZE) - 1)) * 128 (QEMU
  ppc_hash64_hpt_mask, ppc_hash64_pteg_search; Linux htab_hash_mask);
* HPTE doubleword 0 = AVPN << 7 | SW (0x78: Linux keeps its lock bit 0x08 and "bolted"
  0x10 there) | L (0x04) | H (0x02, found by the secondary hash) | V (0x01); the AVPN is
  the virtual address >> 23, i.e. VSID << 5 | EA bits 23-27. A search matches AVPN, L, H
  and V and ignores the SW bits [QEMU HPTE64_V_*; Linux Hpte_dword0, native_hpte_insert
  "avpn = va >> 23"];
* HPTE doubleword 1 = PP0 (bit 63) | RPN << 12 | AC (0x200) | R (0x100) | C (0x80) |
  WIMG (0x78) | N (0x04, no-execute; POWER4 has it: Mackerras 2003 section 2.3) | PP (0x03)
  [QEMU HPTE64_R_*; Linux Hpte_dword1].

Access rights (QEMU ppc_hash64_pte_prot; Book III "storage protection"): the key is Ks in
supervisor state (the model runs guest code as the kernel), and with key 0 PP = 0, 1, 2
allow read/write, 3 read only; with key 1 PP = 0 allows nothing, 1 and 3 read only, 2
read/write. N or G (guarded) in the HPTE, or N in the SLB entry, forbids instruction fetch.

This module holds the format (in Python; the walker's C copy is emu/hw/model/hash64.c), the
SLB as the model keeps it, the table seen from Python (``HashedPageTable64``) and Linux's
VSID scheme of the time.
"""
from __future__ import annotations

from . import cache as c
from . import native
from .layout import CODE_BASE, HEAP_BASE
from .registers import MMURegisters

HPTE_BYTES = 16
HPTES_PER_GROUP = 8
PTEG_BYTES = HPTE_BYTES * HPTES_PER_GROUP          # 128
HTAB_MIN_SHIFT = 18                                 # 256 KB (HTABSIZE = 0)
HTAB_MAX_SIZE_FIELD = 28                            # the largest HTABSIZE (hash is 39 bits)
HTABORG_MASK = 0x0FFFFFFFFFFC0000
HTABSIZE_MASK = 0x1F
HASH_BITS_MASK = (1 << 39) - 1
VSID_LIMIT = 1 << 52                                # VSIDs are 52 bits (80-bit VA)

# HPTE doubleword 0
HPTE_V_VALID, HPTE_V_SECONDARY, HPTE_V_LARGE = 0x1, 0x2, 0x4
HPTE_V_LOCK, HPTE_V_BOLTED, HPTE_V_SW = 0x8, 0x10, 0x78
HPTE_V_COMPARE = ~HPTE_V_SW                          # AVPN, L, H and V
# HPTE doubleword 1
HPTE_R_PP, HPTE_R_N, HPTE_R_G, HPTE_R_WIMG = 0x3, 0x4, 0x8, 0x78
HPTE_R_C, HPTE_R_R, HPTE_R_PP0 = 0x80, 0x100, 1 << 63
HPTE_R_RPN_MASK = 0x0FFFFFFFFFFFF000
# SLB
SLB_ESID_V = 0x08000000
SLB_ESID_MASK = -1 << 28                           # 0xFFFFFFFFF0000000 as int64
SLB_VSID_KS, SLB_VSID_KP, SLB_VSID_N, SLB_VSID_L, SLB_VSID_C = 0x800, 0x400, 0x200, 0x100, 0x80
SLB_VSID_B = 0xC000000000000000                     # segment size: 00 = 256 MB
SLB_INDEX_MASK = 0xFFF
# scratch words of the state (st[H_SCRATCH] + k) where a refused slbmte is noted
S_SLB_PC, S_SLB_RS, S_SLB_RB = 4, 5, 6

# What a failed translation was (kept in the state's H_FAULT_STATUS; the SLB entry, or -1,
# in H_FAULT_L1_ADDR): the interrupt a real POWER4 would take
FAULT_SEGMENT = 1           # no SLB entry: data / instruction segment interrupt (0x380 / 0x480)
FAULT_NO_HPTE = 2           # neither PTEG holds a match: DSI / ISI (0x300 / 0x400)
FAULT_NO_EXECUTE = 3        # fetch from an N or G page or an N segment: ISI
FAULT_PROTECTION = 4        # PP and the key forbid the access: DSI (protection)
FAULT_NAMES = {
    FAULT_SEGMENT: "segment fault (no SLB entry for the ESID: a data or instruction segment "
                   "interrupt, 0x380 / 0x480)",
    FAULT_NO_HPTE: "page fault (no valid HPTE: DSI 0x300 / ISI 0x400)",
    FAULT_NO_EXECUTE: "no-execute fault (N or G in the HPTE, or N in the SLB entry: ISI 0x400)",
    FAULT_PROTECTION: "protection fault (PP and the SLB key forbid it: DSI 0x300)",
}


# --------------------------------------------------------- the hash, by the architecture book

MODE_HASHED64 = 5       # the model's MMU mode of this table (emu.hw.mmu has the others)

def primary_hash(vsid, ea):
    """39-bit primary hash: low 39 bits of the VSID XOR the page index (EA bits 12-27)."""
    return (vsid & HASH_BITS_MASK) ^ ((ea >> 12) & 0xFFFF)


def secondary_hash(vsid, ea):
    return ~primary_hash(vsid, ea) & HASH_BITS_MASK


def hash_mask(sdr1):
    """htab_hash_mask: PTEG-index bits a table of 2^(18 + HTABSIZE) bytes has."""
    return (1 << (11 + (sdr1 & HTABSIZE_MASK))) - 1


def pteg_address(sdr1, hash_value):
    """Where a hash's PTEG lives: HTABORG + (hash & htab_hash_mask) * 128."""
    return (sdr1 & HTABORG_MASK) + (hash_value & hash_mask(sdr1)) * PTEG_BYTES


def hpte_dword0(vsid, ea, secondary):
    """The compare doubleword of a valid 4 KB HPTE: AVPN (VSID || EA bits 23-27), H, V."""
    return (vsid << 12) | (((ea >> 23) & 0x1F) << 7) | \
        (HPTE_V_SECONDARY if secondary else 0) | HPTE_V_VALID


def hpte_dword1(rpn, pp=2, wimg=0x2, no_execute=False, referenced=False, changed=False):
    """RPN, R, C, WIMG (default M: coherent, as Linux sets on SMP), N, PP (2: read/write)."""
    if not 0 <= pp <= 7:
        raise ValueError(f"PP is a 3-bit field (PP0 || PP), not {pp}")
    return ((pp >> 2) << 63) | ((rpn << 12) & HPTE_R_RPN_MASK) | \
        (HPTE_R_R if referenced else 0) | (HPTE_R_C if changed else 0) | \
        ((wimg & 0xF) << 3) | (HPTE_R_N if no_execute else 0) | (pp & HPTE_R_PP)


def sdr1_for(htab_base, htab_size):
    """SDR1 for a table of ``htab_size`` bytes (a power of two, at least 256 KB) at a base
    aligned to its size; refuses anything else, saying why."""
    if htab_size < 1 << HTAB_MIN_SHIFT or htab_size & (htab_size - 1) or \
            htab_size > 1 << (HTAB_MIN_SHIFT + HTAB_MAX_SIZE_FIELD):
        raise ValueError(f"hash table size {htab_size:#x} must be a power of two from 256 KB "
                         "(HTABSIZE 0) to 2^46 bytes (HTABSIZE 28)")
    if htab_base % htab_size or htab_base & ~HTABORG_MASK:
        raise ValueError(f"hash table base {htab_base:#x} must be aligned to its size "
                         f"{htab_size:#x}")
    return htab_base | (htab_size.bit_length() - 1 - HTAB_MIN_SHIFT)


# ------------------------------------------------------------------------------- the SLB

def signed64(value):
    """A 64-bit pattern as the int64 the native model keeps it as."""
    value &= 2**64 - 1
    return value - 2**64 if value >> 63 else value


def slb_words(esid, vsid, index=0, ks=False, kp=False, no_execute=False, valid=True):
    """(RS, RB) of ``slbmte RS, RB`` for a 256 MB segment with 4 KB pages."""
    if not 0 <= esid < 1 << 36:
        raise ValueError(f"an ESID is 36 bits (EA >> 28), not {esid:#x}")
    if not 0 <= vsid < VSID_LIMIT:
        raise ValueError(f"a VSID is at most 52 bits, not {vsid:#x}")
    rs = (vsid << 12) | (SLB_VSID_KS if ks else 0) | (SLB_VSID_KP if kp else 0) | \
        (SLB_VSID_N if no_execute else 0)
    rb = (esid << 28) | (SLB_ESID_V if valid else 0) | index
    return rs, rb


def slbmte_problem(rs, rb, entries):
    """Why the model refuses ``slbmte RS, RB`` (None if it accepts it): what POWER4 and the
    model support is a valid index and a 256 MB segment of 4 KB pages."""
    rs, rb = rs & (2**64 - 1), rb & (2**64 - 1)
    index = rb & SLB_INDEX_MASK
    if index >= entries:
        return f"SLB entry {index} does not exist (the SLB has {entries} entries)"
    if rb & 0x07FFF000:
        return f"RB {rb:#x} has reserved bits set (0x07fff000)"
    if rs & SLB_VSID_B:
        return f"RS {rs:#x} asks for a 1 TB segment (B field), which POWER4 does not have"
    if rs & SLB_VSID_L:
        return f"RS {rs:#x} asks for large pages (L), which the model does not cover yet"
    return None


def slb_find(st, ea):
    """The SLB entry translating ``ea``'s segment (a signed 64-bit EA), or -1 (a segment
    fault); the walker's own search (emu/hw/model/hash64.c), from Python."""
    return int(native.lib.emu_slb_find(native.address(st), ea))


def slb_vsid_word(st, k):
    return st[st[c.H_SEGMENTS] + 2 * k + 1]


def load_be64(st, address):
    """A big-endian doubleword of guest RAM as the walker reads it (a signed int64); 0 (an
    invalid HPTE) outside RAM."""
    return int(native.lib.emu_load_be64(native.address(st), address))


def pp_rights(dword1, vsid_word):
    """(may read, may write) by PP0 || PP and the key (Ks: the model's guest is privileged)."""
    pp = (dword1 & HPTE_R_PP) | ((dword1 >> 61) & 4)
    if vsid_word & SLB_VSID_KS:
        return pp == 1 or pp == 2 or pp == 3, pp == 2
    return pp <= 3 or pp == 6, pp <= 2


def no_execute(dword1, vsid_word):
    """N or G in the HPTE, or N in the SLB entry: no instruction fetch."""
    return (dword1 & (HPTE_R_N | HPTE_R_G)) != 0 or (vsid_word & SLB_VSID_N) != 0


# ------------------------------------------------------- Linux's VSIDs (2.6.0-2.6.8, ppc64)
#
# include/asm-ppc64/mmu_context.h of the time: an "ordinal" of the ESID and the context (or,
# for kernel addresses, the region: EA >> 60), scattered by a multiplier and kept to 36 bits.
# (2.6.9 replaced it with proto-VSID * 200730139 mod 2^36 - 1.)

VSID_RANDOMIZER = 42470972311
VSID_MASK = 0xFFFFFFFFF                     # 36 bits
LAST_USER_CONTEXT = 0x8000


def linux_kernel_vsid(ea):
    """get_kernel_vsid(ea): (((ea >> 28) & 0x1fff) * LAST_USER_CONTEXT | ea >> 60) scattered."""
    ordinal = (((ea >> 28) & 0x1FFF) * LAST_USER_CONTEXT) | (ea >> 60)
    return (ordinal * VSID_RANDOMIZER) & VSID_MASK


def linux_user_vsid(context, ea):
    """get_vsid(context, ea): the user segment's ordinal with the mm's context number."""
    if not 0 <= context < LAST_USER_CONTEXT:
        raise ValueError(f"a context number is below {LAST_USER_CONTEXT:#x}, not {context}")
    ordinal = (((ea >> 28) & 0x1FFF) * LAST_USER_CONTEXT) | context
    return (ordinal * VSID_RANDOMIZER) & VSID_MASK


# ------------------------------------------------------------ the table, seen from Python

class MappedRanges:
    """What the 32- and 64-bit hashed page tables share: mapping whole ranges, and
    everything a routine needs, through the table's own ``insert``."""

    def map(self, start, length, **kind):
        """Entries for every page of [start, start + length)."""
        for page in range(start & ~0xFFF, start + length, 0x1000):
            self.insert(page, **kind)

    def map_machine(self):
        """Map what a routine needs to run: loaded code, the buffers allocated so far (this
        table included), and the top 64 KB of the stack."""
        m = self.machine
        self.map(CODE_BASE, m.next_code - CODE_BASE)
        self.map(HEAP_BASE, m.heap_end - HEAP_BASE)
        self.map(m.stack_top - (64 << 10), 64 << 10)


class HashedPageTable64(MappedRanges):
    """A 64-bit HTAB in a machine's guest memory (and the SLB entries of RAM's segments),
    for setting up and inspecting tables; the API of ``emu.hw.mmu.HashedPageTable``.

    Guest assembly can (routines/ppc64/hash_native_64.S) insert and invalidate HPTEs itself;
    this class writes and reads the same bytes. SLB entry n maps ESID n (the segments guest
    RAM spans) to VSID ``vsid_base + n`` unless ``vsid`` (a function of the ESID) says
    otherwise, e.g. ``lambda esid: linux_user_vsid(context, esid << 28)``.

    >>> pt = HashedPageTable64(machine)                     # doctest: +SKIP
    >>> pt.insert(0x100000)          # (HPTE address, found by the secondary hash?)  # doctest: +SKIP
    """

    def __init__(self, machine, size=1 << HTAB_MIN_SHIFT, vsid_base=0, vsid=None):
        self.machine = machine
        self.base = machine.alloc(size, align=size)
        self.size = size
        machine.mmu.sdr1 = sdr1_for(self.base, size)
        vsid = vsid or (lambda esid: vsid_base + esid)
        for esid in range(-(-machine.ram_size // (1 << 28))):
            machine.mmu.set_slb(esid, esid, vsid(esid))

    def vsid_of(self, ea):
        """The VSID the SLB gives ``ea``'s segment (ValueError if none)."""
        entry = self.machine.mmu.slb_lookup(ea)
        if entry is None:
            raise ValueError(f"no SLB entry maps the segment of {ea:#x} (ESID {ea >> 28:#x})")
        return entry[1] >> 12

    def groups(self, ea):
        """(primary PTEG address, secondary PTEG address) for an effective address."""
        vsid, sdr1 = self.vsid_of(ea), self.machine.mmu.sdr1
        return (pteg_address(sdr1, primary_hash(vsid, ea)),
                pteg_address(sdr1, secondary_hash(vsid, ea)))

    def hpte_addresses(self, ea):
        """The 16 HPTE addresses a search for ``ea`` reads: primary group, then secondary."""
        return [group + HPTE_BYTES * k for group in self.groups(ea)
                for k in range(HPTES_PER_GROUP)]

    @property
    def hash_mask(self):
        """htab_hash_mask: the number of PTEGs - 1."""
        return self.size // PTEG_BYTES - 1

    def va_of(self, ea):
        """The virtual address of ``ea``: VSID << 28 | the offset in the segment (what the
        guest routines of routines/ppc64/hash_native_64.S take)."""
        return (self.vsid_of(ea) << 28) | (ea & 0x0FFFFFFF)

    def publish(self, htab_data):
        """Write the table's address and hash mask at ``htab_data`` (two doublewords, as
        hash_native_64.S reads them: Linux's htab_data.htab and .htab_hash_mask)."""
        self._put(htab_data, self.base)
        self._put(htab_data + 8, self.hash_mask)

    def _dword(self, address):
        return int.from_bytes(self.machine.read(address, 8), "big")

    def _put(self, address, value):
        self.machine.write(address, (value & (2**64 - 1)).to_bytes(8, "big"))

    def lookup(self, ea):
        """(HPTE address, secondary) of the valid HPTE for ``ea``'s page, or None."""
        vsid = self.vsid_of(ea)
        for secondary, group in enumerate(self.groups(ea)):
            want = hpte_dword0(vsid, ea, secondary) & (2**64 - 1)     # as stored
            for k in range(HPTES_PER_GROUP):
                if self._dword(group + HPTE_BYTES * k) & HPTE_V_COMPARE == want:
                    return group + HPTE_BYTES * k, bool(secondary)
        return None

    def insert(self, ea, rpn=None, pp=2, no_execute=False, bolted=False):
        """Put an HPTE for ``ea``'s page (RPN defaults to the same page: physical =
        effective) in the first free slot of the primary PTEG, else of the secondary, as
        native_hpte_insert does; returns (HPTE address, secondary). Both groups full:
        MemoryError (the kernel would evict one with native_hpte_remove)."""
        found = self.lookup(ea)
        if found:
            return found
        vsid = self.vsid_of(ea)
        rpn = (ea >> 12) if rpn is None else rpn
        for secondary, group in enumerate(self.groups(ea)):
            for k in range(HPTES_PER_GROUP):
                hpte = group + HPTE_BYTES * k
                if not self._dword(hpte) & HPTE_V_VALID:
                    self._put(hpte + 8, hpte_dword1(rpn, pp=pp, no_execute=no_execute))
                    self._put(hpte, hpte_dword0(vsid, ea, secondary) |
                              (HPTE_V_BOLTED if bolted else 0))
                    return hpte, bool(secondary)
        raise MemoryError(f"both PTEGs for {ea:#x} are full")

    def remove(self, ea):
        """Clear ``ea``'s HPTE (the TLB may still hold it: tlbie does that)."""
        found = self.lookup(ea)
        if found:
            self._put(found[0], 0)
        return found is not None


class SLBRegisters(MMURegisters):
    """64-bit PowerPC: SDR1 (the hashed table's base and size) and each core's SLB, whose
    entries map a segment (ESID: EA >> 28) to a VSID."""

    def set_slb(self, index, esid, vsid, ks=False, kp=False, no_execute=False, core=None):
        """SLB entry ``index`` of ``core`` (None: of every core) maps ESID ``esid`` (EA >> 28)
        to ``vsid``, as ``slbmte`` would (the model's TLB entries of a segment it replaces
        are dropped)."""
        m = self.machine
        if self.state[c.H_MMU] != MODE_HASHED64:
            raise ValueError("an SLB exists only on a 64-bit hashed MMU (ppc64, mmu=True)")
        rs, rb = slb_words(esid, vsid, index, ks, kp, no_execute)
        why = slbmte_problem(rs, rb, m.profile.tlb["slb_entries"])
        if why:
            raise ValueError(why)
        running = m.model.running
        try:
            for k in self.cores(core):
                m.model.switch(k)             # slbmte acts on the running core's SLB
                native.lib.emu_slb_store(native.address(self.state), signed64(rs), signed64(rb))
        finally:
            m.model.switch(running)

    def slb(self, index):
        """SLB entry ``index`` as (ESID word: ESID << 28 | V, VSID word: VSID << 12 | flags),
        as the model holds it (entries the guest's slbmte wrote included)."""
        if not 0 <= index < self.state[c.H_SLB_ENTRIES]:
            raise ValueError(f"SLB entry {index} does not exist (the SLB has "
                             f"{int(self.state[c.H_SLB_ENTRIES])} entries)")
        at = self.state[c.H_SEGMENTS] + 2 * index
        return (int(self.state[at]) & (2**64 - 1), int(self.state[at + 1]) & (2**64 - 1))

    def slb_lookup(self, ea):
        """(entry index, VSID word) of the valid SLB entry for ``ea``'s segment, or None."""
        k = slb_find(self.state, signed64(ea))
        return None if k < 0 else (int(k), self.slb(int(k))[1])
