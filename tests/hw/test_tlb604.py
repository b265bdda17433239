"""The 604's MMU for guest code (emu.hw.tlb604): a hand-built hash table, searched by the
native fill as the 604 UM 5.4.5 describes, with cycles derived by hand."""
import pytest

from emu.hw import mmu
from emu.hw.tlb604 import T6_FAULT_NO_HPTE, T6_FAULT_PROTECTION, T6_WALK_CYCLES, TLB604Model
from emu.run.machine import Machine

VSID, EA = 0x123, 0x10005000
PROBE = """
        .globl  probe
probe:                          # r3 = EA: a load with data translation on (supervisor)
        mfmsr   r6
        ori     r7, r6, 0x10
        mtmsr   r7
        isync
        lwz     r4, 0(r3)
        mtmsr   r6
        isync
        mr      r3, r4
        blr
        .globl  poke
poke:                           # r3 = EA, r4 = value: a store with data translation on
        mfmsr   r6
        ori     r7, r6, 0x10
        mtmsr   r7
        isync
        stw     r4, 0(r3)
        mtmsr   r6
        isync
        blr
        .globl  warm
warm:                           # r3, r4: two PTE groups into the L1 D (real mode)
        lwz     r5, 0(r3)
        lwz     r5, 32(r3)
        lwz     r5, 0(r4)
        lwz     r5, 32(r4)
        blr
"""


class Table:
    """A 64 KB hash table on a 604 Machine, with PTEs put where a test wants them."""

    def __init__(self, walk_cycles=None):
        self.m = m = Machine("ppc604")
        self.htab = m.alloc(64 << 10, align=64 << 10)
        self.sdr1 = mmu.sdr1_for(self.htab, 64 << 10)
        m.load(PROBE)
        self.tlb = TLB604Model(m, self.sdr1)
        self.tlb.set_segments([VSID if n == 1 else 0 for n in range(16)])   # Ks = 0
        if walk_cycles is not None:       # as a profile's [tlb] walk_cycles would set it
            self.tlb.t[T6_WALK_CYCLES] = walk_cycles

    def group(self, ea, secondary, vsid=VSID):
        h = (mmu.secondary_hash if secondary else mmu.primary_hash)(vsid, ea)
        return mmu.pteg_address(self.sdr1, h)

    def fill_with_others(self, ea, secondary):
        """Every slot of the group: a valid PTE of another VSID (never ``ea``'s)."""
        g = self.group(ea, secondary)
        for k in range(8):
            word0 = mmu.PTE_VALID | ((VSID + 1 + k) << 7)
            self.m.write(g + 8 * k, word0.to_bytes(4, "big") + bytes(4))

    def put(self, ea, secondary, slot, page, pp=2):
        word0 = mmu.pte_word0(VSID, ea, secondary)
        word1 = mmu.pte_word1(page >> 12, pp=pp)
        self.m.write(self.group(ea, secondary) + 8 * slot,
                     word0.to_bytes(4, "big") + word1.to_bytes(4, "big"))

    def warm(self, ea):
        self.m.call("warm", self.group(ea, False), self.group(ea, True))


@pytest.mark.parametrize("walk_cycles", (0, 5))
def test_a_pte_in_slot_2_of_the_secondary_group_costs_eleven_pte_reads(walk_cycles):
    """Primary group full of other PTEs (8 reads), then slots 0-2 of the secondary (3): 11
    PTE reads of 2 cycles each (the L1 D's load-to-use latency, both groups in the cache),
    plus the search's own walk_cycles: 22 + walk_cycles. The second load hits the DTLB."""
    t = Table(walk_cycles)
    page = t.m.alloc(4096)
    t.m.write(page, (0xCAFE).to_bytes(4, "big"))
    t.fill_with_others(EA, False)
    t.put(EA, True, 2, page)
    t.warm(EA)
    first = t.m.call("probe", EA)
    counts = t.tlb.counts()
    assert first.return_value == 0xCAFE
    assert counts["pte_reads"] == 11 and counts["htab_secondary_hits"] == 1
    assert counts["table_search_cycles"] == 22 + walk_cycles
    second = t.m.call("probe", EA)
    assert second.return_value == 0xCAFE
    assert t.tlb.counts()["table_searches"] == 1          # a DTLB hit
    assert t.tlb.entries() == [(VSID, EA)]


def test_a_search_reads_each_cold_pte_line_from_memory():
    """The same search with the groups not in the L1 D: each 32-byte line of PTEs read
    misses once (the primary group's two lines, the secondary's first: slots 0-2), each a
    stall of the profile's memory latency (30, load-to-use) less the L1 D's 2 already
    charged: 3 x 28 = 84 cycles more than warm."""
    warm, cold = Table(), Table()
    for t in (warm, cold):
        page = t.m.alloc(4096)
        t.fill_with_others(EA, False)
        t.put(EA, True, 2, page)
    warm.warm(EA)
    warm.m.call("probe", EA)
    cold.m.call("probe", EA)
    extra = cold.tlb.counts()["table_search_cycles"] - warm.tlb.counts()["table_search_cycles"]
    assert warm.tlb.counts()["table_search_cycles"] == 22
    assert extra == 3 * (30 - 2)


def test_no_pte_in_either_group_is_a_fault_after_sixteen_reads():
    t = Table()
    t.fill_with_others(EA, False)
    t.fill_with_others(EA, True)
    t.warm(EA)
    with pytest.raises(Exception):
        t.m.call("probe", EA)
    assert t.tlb.take_fault() == (T6_FAULT_NO_HPTE, EA, "r")
    counts = t.tlb.counts()
    assert counts["pte_reads"] == 16 and counts["htab_misses"] == 1
    assert counts["table_search_cycles"] == 32


def test_invalidate_all_empties_both_tlbs_and_the_next_access_searches_again():
    """After a load the DTLB holds the entry (a second load is a hit: one search); once
    every entry is invalidated it holds none, and the same load searches the table again
    (two searches), finding the PTE in slot 0 of the primary group: 1 PTE read more."""
    t = Table()
    page = t.m.alloc(4096)
    t.put(EA, False, 0, page)
    t.m.call("probe", EA)
    t.m.call("probe", EA)
    assert t.tlb.counts()["table_searches"] == 1 and t.tlb.entries() == [(VSID, EA)]
    reads = t.tlb.counts()["pte_reads"]
    t.tlb.invalidate_all()
    assert t.tlb.entries() == [] and t.tlb.entries(fetch=True) == []
    t.m.call("probe", EA)
    assert t.tlb.counts()["table_searches"] == 2
    assert t.tlb.counts()["pte_reads"] == reads + 1


def test_a_store_to_a_read_only_page_is_a_protection_fault():
    """PP = 3 (read only whatever the key): the load translates, the store is refused."""
    t = Table()
    page = t.m.alloc(4096)
    t.put(EA, False, 0, page, pp=3)
    t.m.call("probe", EA)
    with pytest.raises(Exception):
        t.m.call("poke", EA, 1)
    assert t.tlb.take_fault() == (T6_FAULT_PROTECTION, EA, "w")
    assert t.tlb.counts()["table_searches"] == 1          # the entry was in the DTLB


def three_pages_of_one_class(t):
    """Pages 64 apart (EA bits 14-19 equal) share a class of two ways."""
    pages = [EA + k * 64 * 4096 for k in range(3)]
    for ea in pages:
        t.put(ea, False, 0, t.m.alloc(4096))
    return pages


def test_a_third_page_of_a_class_evicts_the_least_recently_used():
    """A, B, then A again after Unicorn's translations were flushed (as at each user run's
    start): A's re-fill is a TLB hit that makes it the most recent, so C evicts B; A still
    hits, B searches again."""
    t = Table()
    a, b, c = three_pages_of_one_class(t)
    t.m.call("probe", a)
    t.m.call("probe", b)
    t.tlb.flush_unicorn()
    t.m.call("probe", a)
    assert t.tlb.counts()["table_searches"] == 2
    t.m.call("probe", c)
    assert t.tlb.counts()["tlb_evictions"] == 1
    assert t.tlb.entries() == sorted([(VSID, a), (VSID, c)])
    t.m.call("probe", a)
    assert t.tlb.counts()["table_searches"] == 3
    t.m.call("probe", b)
    assert t.tlb.counts()["table_searches"] == 4


def test_a_hit_unicorn_answers_itself_does_not_move_the_lru():
    """The model's limit (emu.hw.tlb604): A's second use, answered from Unicorn's own
    translations, is not seen, so C evicts A, loaded first."""
    t = Table()
    a, b, c = three_pages_of_one_class(t)
    for ea in (a, b, a, c):
        t.m.call("probe", ea)
    assert t.tlb.entries() == sorted([(VSID, b), (VSID, c)])


def test_tlbie_empties_the_class_in_both_tlbs():
    t = Table()
    t.put(EA, False, 0, t.m.alloc(4096))
    t.m.call("probe", EA)
    t.tlb.invalidate_class(EA + 64 * 4096)                # same class, another page
    assert t.tlb.entries() == []
    t.m.call("probe", EA)
    assert t.tlb.counts()["table_searches"] == 2


def test_a_profile_without_a_hardware_search_is_refused():
    with pytest.raises(ValueError, match="hardware"):
        TLB604Model(Machine("ppc603e"), 0)
