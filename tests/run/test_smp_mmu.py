"""The MMU model on several cores: private TLBs, one page table in shared RAM, and TLB
invalidations that reach every core (tlbie, ARM's inner-shareable forms) or only their own
(tlbiel, ARM's c8,c7 forms)."""
import pytest

from emu.hw.faults import PageFault
from emu.run.machine import Machine
from emu.hw.mmu import HashedPageTable, HashedPageTable64, ShortDescriptorTables

PPC32 = """
load1:                      # one load at r3
    lwz   r7, 0(r3)
    blr
invalidate:                 # flush_tlb_page's broadcast invalidation
    tlbie r3
    sync
    blr
"""
PPC64 = """
load1:
    ld    r7, 0(r3)
    blr
tlbie_va:                   # every core's entries for the virtual address in r3
    ptesync
    tlbie r3
    eieio
    tlbsync
    ptesync
    blr
tlbiel_va:                  # this core's only
    ptesync
    tlbiel r3
    ptesync
    blr
"""
ARM = """
    .globl touch
touch:
    ldr   r1, [r0]
    bx    lr
    .globl tlbimva
tlbimva:                    @ this core's TLB (c8, c7, 1)
    mcr   p15, 0, r0, c8, c7, 1
    dsb
    bx    lr
    .globl tlbimvais
tlbimvais:                  @ every core's (inner shareable: c8, c3, 1)
    mcr   p15, 0, r0, c8, c3, 1
    dsb
    bx    lr
    .globl tlbiallis
tlbiallis:
    mcr   p15, 0, r0, c8, c3, 0
    dsb
    bx    lr
"""


def walks(run, name):
    return [r.events[name] for r in run.runs]


def both_touch(m, entry, address):
    """Each core loads ``address`` once, at the same time; the walks each made."""
    return m.run_parallel([(entry, address), (entry, address)])


# ------------------------------------------------------------------ 32-bit hashed page table

def ppc32_machine():
    m = Machine("ppc750", mmu=True, cores=2)
    m.load(PPC32)
    buf = m.alloc(4096)
    pt = HashedPageTable(m)
    pt.map_machine()
    return m, pt, buf


def test_each_core_has_its_own_tlb_and_walks_the_shared_table():
    m, _, buf = ppc32_machine()
    first = both_touch(m, "load1", buf)
    # each core misses its own DTLB and ITLB once: two walks each
    assert walks(first, "hash_walks") == [2, 2]
    assert [r.tlbs["DTLB"]["misses"] for r in first.runs] == [1, 1]
    again = both_touch(m, "load1", buf)
    assert walks(again, "hash_walks") == [0, 0]


def test_tlbie_on_one_core_invalidates_the_page_in_every_core():
    m, _, buf = ppc32_machine()
    both_touch(m, "load1", buf)
    run = m.run_parallel([("invalidate", buf), None])
    assert run.runs[0].tlbs["DTLB"]["invalidations"] == 1
    assert m.model.tlb_stats(core=1)["DTLB"]["invalidations"] == 1
    # both cores walk again; the code page stayed in the ITLBs
    assert walks(both_touch(m, "load1", buf), "hash_walks") == [1, 1]


def test_a_page_fault_names_the_core():
    m, pt, buf = ppc32_machine()
    pt.remove(buf)
    with pytest.raises(PageFault, match=r"^core 1: page fault at PC .*lwz.*data load at "
                                        rf"address {buf:#x}"):
        m.run_parallel([None, ("load1", buf)])


def test_segment_registers_are_per_core():
    m, _, _ = ppc32_machine()
    m.mmu.set_segment(3, 0x333, core=1)
    assert m.mmu.segment(3) == 3                       # core 0 keeps the identity VSID
    m.model.switch(1)
    assert m.mmu.segment(3) == 0x333
    m.model.switch(0)
    with pytest.raises(ValueError, match="core 2 does not exist"):
        m.mmu.set_segment(3, 0x333, core=2)


# ------------------------------------------------------------------ 64-bit hashed page table

def ppc64_machine():
    m = Machine("power4", mmu=True, cores=2)
    m.load(PPC64)
    buf = m.alloc(4096)
    pt = HashedPageTable64(m)
    pt.map_machine()
    return m, pt, buf


def test_power4_tlbie_reaches_both_cores_and_tlbiel_only_its_own():
    m, pt, buf = ppc64_machine()
    both_touch(m, "load1", buf)
    m.run_parallel([("tlbiel_va", pt.va_of(buf)), None])
    assert walks(both_touch(m, "load1", buf), "hash_walks") == [1, 0]
    m.run_parallel([None, ("tlbie_va", pt.va_of(buf))])
    assert walks(both_touch(m, "load1", buf), "hash_walks") == [1, 1]


def test_each_core_has_its_own_slb():
    m, _, _ = ppc64_machine()
    m.mmu.set_slb(5, 0xA, 0x77, core=1)
    assert m.mmu.slb(5)[0] == 0                        # core 0's entry 5 is still empty
    m.model.switch(1)
    assert m.mmu.slb(5) == (0xA << 28 | 1 << 27, 0x77 << 12)
    m.model.switch(0)


# ------------------------------------------------------------------ ARMv7 short descriptors

def arm_machine():
    m = Machine("cortex-a9", mmu=True, cores=2)
    m.load(ARM)
    buf = m.alloc(4096)
    tables = ShortDescriptorTables(m)
    tables.map_machine()
    return m, buf


def test_arm_local_and_inner_shareable_tlb_invalidation():
    m, buf = arm_machine()
    both_touch(m, "touch", buf)
    m.run_parallel([("tlbimva", buf), None])       # core 0's entry only
    assert walks(both_touch(m, "touch", buf), "table_walks") == [1, 0]
    m.run_parallel([None, ("tlbimvais", buf)])     # both cores' entries
    assert walks(both_touch(m, "touch", buf), "table_walks") == [1, 1]
    m.run_parallel([("tlbiallis", 0), None])       # everything, code pages included ...
    # ... but core 0 fetched its next instructions and walked the code page again
    assert walks(both_touch(m, "touch", buf), "table_walks") == [1, 2]


def test_software_loaded_tlbs_stay_on_one_core():
    with pytest.raises(ValueError, match="ppc603e is a uniprocessor.*cores=1"):
        Machine("ppc603e", mmu=True, cores=2)
