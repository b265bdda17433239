"""The MMU model: hash functions by hand, the HTAB in guest memory, TLBs, page faults."""
import pytest

from emu.hw import mmu
from emu.bench import COPY_LOOPS
from emu.hw.faults import PageFault
from emu.run.machine import Machine
from emu.hw.mmu import HashedPageTable

COPY = COPY_LOOPS["ppc32"][1] + """
load4:                      # touch four addresses (r3..r6), in order
    lwz   r7, 0(r3)
    lwz   r7, 0(r4)
    lwz   r7, 0(r5)
    lwz   r7, 0(r6)
    blr
invalidate:                 # tlbie, as flush_tlb_page does after clearing the PTE
    tlbie r3
    sync
    blr
touch_order:                # load a, store b, load a, load c, load a
    lwz   r7, 0(r3)
    stw   r7, 0(r4)
    lwz   r7, 0(r3)
    lwz   r7, 0(r5)
    lwz   r7, 0(r3)
    blr
refetch:                    # tlbie the page this code is on, then go on in it
    tlbie r3
    sync
    b     refetched         # (a new block, on the same page)
refetched:
    blr
"""


# ------------------------------------------------------------------ by the architecture book

def test_primary_and_secondary_hash():
    # VSID 0x123456: low 19 bits 0x23456; EA 0x12345000: page index 0x2345
    assert mmu.primary_hash(0x123456, 0x12345000) == 0x23456 ^ 0x2345 == 0x21713
    assert mmu.secondary_hash(0x123456, 0x12345000) == 0x5E8EC


def test_pteg_address_uses_htabmask_bits():
    # hash 0x21713 << 6 = 0x85C4C0. A 64 KB table keeps bits 6-15 of that: 0xC4C0
    assert mmu.pteg_address(0x00FE0000, 0x21713) == 0x00FEC4C0
    # a 128 KB table (HTABMASK 1) also takes bit 16 (set here) from the hash
    assert mmu.pteg_address(0x00FE0001, 0x21713) == 0x00FFC4C0


def test_pte_compare_word():
    # V | VSID << 7 | H | API (EA bits 4-9 = 0x12345000 >> 22 & 0x3f = 8)
    assert mmu.pte_word0(0x123456, 0x12345000, False) == 0x891A2B08
    assert mmu.pte_word0(0x123456, 0x12345000, True) == 0x891A2B48


def test_sdr1_refuses_bad_tables():
    assert mmu.sdr1_for(0x200000, 0x20000) == 0x200001
    with pytest.raises(ValueError, match="power of two"):
        mmu.sdr1_for(0x200000, 0x18000)
    with pytest.raises(ValueError, match="aligned"):
        mmu.sdr1_for(0x210000, 0x20000)


# ------------------------------------------------------------------------ the HTAB in RAM

def machine():
    m = Machine("ppc750", mmu=True)
    m.load(COPY)
    return m


def test_insertion_goes_to_the_secondary_group_when_the_primary_is_full():
    m = machine()
    pt = HashedPageTable(m)                 # segment n has VSID n
    # EA = n << 28 | (P ^ n) << 12 has primary hash n ^ (P ^ n) = P for every segment n
    P = 0x155
    eas = [n << 28 | (P ^ n) << 12 for n in range(9)]
    primary, secondary = pt.groups(eas[0])
    assert all(pt.groups(ea)[0] == primary for ea in eas)
    placed = [pt.insert(ea) for ea in eas]
    assert placed[:8] == [(primary + 8 * k, False) for k in range(8)]
    assert placed[8] == (pt.groups(eas[8])[1], True)
    assert pt.lookup(eas[8]) == placed[8]
    assert pt.remove(eas[3]) and pt.lookup(eas[3]) is None


def test_walks_and_tlb_misses_of_a_copy():
    m = machine()
    src, dst = m.alloc(64 << 10), m.alloc(64 << 10)
    pt = HashedPageTable(m)
    pt.map_machine()
    run = m.call("copy_words", dst, src, 16 << 10)
    # 16 source + 16 destination pages miss the DTLB once each; the code page the ITLB
    assert run.tlbs["DTLB"] == {"lookups": 32768, "hits": 32736, "misses": 32,
                                "invalidations": 0}
    assert run.tlbs["ITLB"]["misses"] == 1
    assert run.events["hash_walks"] == 33 and run.events["primary_hits"] == 33
    assert run.events["page_faults"] == 0
    # each walk found its PTE in the first slot: one PTE read through the L1 D each
    assert run.caches["L1D"]["accesses"] == 32768 + 33


def test_a_missing_pte_is_a_page_fault_naming_pc_instruction_and_address():
    m = machine()
    src, dst = m.alloc(8192), m.alloc(8192)
    pt = HashedPageTable(m)
    pt.map_machine()
    pt.remove(dst + 4096)
    with pytest.raises(PageFault) as err:
        m.call("copy_words", dst, src, 2048)
    fault = err.value
    assert fault.address == dst + 4096 and fault.access == "data store"
    assert fault.instruction.startswith("stw")
    assert fault.pc == m.symbols["copy_words"] + 8
    assert "no valid PTE in the primary PTEG" in str(fault)


def test_a_stale_tlb_entry_translates_until_tlbie():
    m = machine()
    buf = m.alloc(4096)
    pt = HashedPageTable(m)
    pt.map_machine()
    m.call("load4", buf, buf, buf, buf)         # the DTLB now holds the page
    pt.remove(buf)                              # the PTE is gone from the table ...
    run = m.call("load4", buf, buf, buf, buf)   # ... but the TLB still translates
    assert run.events["page_faults"] == 0 and run.events["hash_walks"] == 0
    m.call("invalidate", buf)
    with pytest.raises(PageFault):
        m.call("load4", buf, buf, buf, buf)


def test_a_tlbie_between_two_blocks_on_one_page_makes_the_second_fetch_miss():
    # The block hook keeps the last fetch's translation (emu/hw/model/mmu.c); the tlbie of the
    # code's own page between two blocks on it must still make the next fetch miss the ITLB
    m = machine()
    HashedPageTable(m).map_machine()
    page = m.symbols["refetch"] & ~0xFFF
    assert m.symbols["refetched"] & ~0xFFF == page
    m.call("refetch", page)                       # warm: the page's PTE is in the caches
    run = m.call("refetch", page)
    # the first block hits the ITLB; tlbie drops the entry; the second block misses
    assert run.tlbs["ITLB"] == {"lookups": 2, "hits": 1, "misses": 1, "invalidations": 1}
    assert run.events["hash_walks"] == 1


def three_pages_of_one_dtlb_set():
    """A ppc750 with the MMU on, every page mapped, and three pages that share a DTLB set
    (64 sets)"""
    m = machine()
    base = m.alloc(3 * 64 * 4096)
    HashedPageTable(m).map_machine()
    return m, (base, base + 64 * 4096, base + 128 * 4096)


def test_a_load_on_the_page_of_the_last_load_still_makes_its_entry_the_most_recent():
    # The hooks keep the last load's translation (emu/hw/model/mmu.c); a store's to another
    # page of the same DTLB set comes between: the second load of a must make a the set's
    # most recent again, so that c evicts b, and the last load of a hits
    m, (a, b, c) = three_pages_of_one_dtlb_set()
    run = m.call("touch_order", a, b, c)
    assert run.tlbs["DTLB"]["misses"] == 3 and run.tlbs["DTLB"]["hits"] == 2   # a, b, c


def test_an_l1d_hit_on_a_line_not_its_sets_most_recent_makes_it_so_with_the_mmu_on():
    # With the MMU on, the memory hook's common case (emu/hw/model/hooks.c, quick_access) takes
    # L1 D hits itself: one on a line that is not its set's most recent must make it so.
    # A 2-way LRU L1 D of 16 sets: a, b, c share a set; b, a (a is used), c evicts b, a hits
    m = Machine("ppc750", mmu=True, caches="L1D:1024:2:32:lru")
    m.load(COPY)
    buf = m.alloc(4096)
    HashedPageTable(m).map_machine()
    a, b, c = buf, buf + 512, buf + 1024
    m.call("load4", a, a, a, a)                  # the page in the DTLB, a in the L1 D
    run = m.call("load4", b, a, c, a)
    assert (run.caches["L1D"]["hits"], run.caches["L1D"]["misses"]) == (2, 2)
    assert run.tlbs["DTLB"]["misses"] == 0


def test_dtlb_lru_replacement_in_a_two_way_set():
    m, (a, b, c) = three_pages_of_one_dtlb_set()
    m.call("load4", a, b, a, b)                                       # set: a, b (MRU)
    assert m.call("load4", a, b, c, a).tlbs["DTLB"]["misses"] == 2   # c evicts a, a evicts b
    assert m.call("load4", c, a, b, a).tlbs["DTLB"]["misses"] == 1   # b evicts c
    assert m.call("load4", c, b, a, b).tlbs["DTLB"]["misses"] == 3   # LRU b, then a, then c


def test_profiles_without_a_walker_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="pentium4 reloads its TLB by hardware-walk on x86"):
        Machine("pentium4", mmu=True)


def test_cycles_are_deterministic_with_the_mmu_on():
    runs = []
    for _ in range(2):
        m = machine()
        src, dst = m.alloc(16384), m.alloc(16384)
        HashedPageTable(m).map_machine()
        runs.append(m.call("copy_words", dst, src, 4096).to_dict())
    assert runs[0] == runs[1]


def test_cache_maintenance_translates_its_address():
    from emu import routine
    m = Machine("ppc750", mmu=True)
    m.load(routine("ppc32/flush_dcache_icache.S"))
    page = m.alloc(4096)
    HashedPageTable(m).map_machine()
    run = m.call("flush_dcache_icache", page)
    # 128 dcbst + 128 icbi look up the DTLB: one miss (one walk), 255 hits; plus the ITLB's
    assert run.tlbs["DTLB"]["lookups"] == 256 and run.tlbs["DTLB"]["misses"] == 1
    assert run.events["hash_walks"] == 2
