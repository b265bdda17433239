"""The ARMv7 short-descriptor walker: descriptors by hand, Linux's layout, faults, and a
walker that reads through the L1 D or below it."""
import dataclasses

import pytest

from emu.hw import mmu
from emu.hw.faults import PageFault
from emu.run.machine import Machine
from emu.hw.mmu import ShortDescriptorTables
from emu.hw.profile import load as load_profile

CODE = """
    .globl touch
touch:                      @ load one word at r0
    ldr   r1, [r0]
    bx    lr
    .globl poke
poke:                       @ store r1 at r0
    str   r1, [r0]
    bx    lr
    .globl set_pte_touch
set_pte_touch:              @ *r0 = r1 (a new hardware PTE), then load from r2
    str   r1, [r0]
    dsb
    ldr   r1, [r2]
    bx    lr
    .globl set_pte_clean_touch
set_pte_clean_touch:        @ the same, cleaning the PTE's line first (cpu_v7_set_pte_ext)
    str   r1, [r0]
    mcr   p15, 0, r0, c7, c10, 1
    dsb
    ldr   r1, [r2]
    bx    lr
"""
UNMAPPED = 0x01000000


def machine(walk_through_l1=True):
    profile = load_profile("cortex-a9")
    profile = dataclasses.replace(profile, tlb={**profile.tlb,
                                                "walk_through_l1": walk_through_l1})
    m = Machine(profile, mmu=True)
    m.load(CODE)
    buf = m.alloc(64 << 10)
    tables = ShortDescriptorTables(m)
    tables.map_machine()
    return m, tables, buf


def test_linux_layout_by_hand():
    m, t, buf = machine()
    va = 0x00345000                       # 2 MB pair 1, Linux index (va >> 12) & 511 = 0x145
    assert t.first_level_address(va) == t.base + 4 * 3
    linux, hardware = t.pte_addresses(va)
    page = t.pte_page(va)
    assert linux == page + 4 * 0x145 and hardware == linux + 2048
    # the pair's first-level entries point at the hardware tables, +2048 and +3072
    assert t._word(t.base + 4 * 2) == (page + 2048) | 1
    assert t._word(t.base + 4 * 3) == (page + 3072) | 1
    t.map(va, writable=False, executable=False)
    assert t._word(hardware) == 0x00345000 | 0x30 | 0xC | 0x2 | 0x200 | 0x1
    assert t._word(linux) == 0x00345000 | mmu.L_PTE_PRESENT | mmu.L_PTE_YOUNG | \
        mmu.L_PTE_USER | mmu.L_PTE_RDONLY | mmu.L_PTE_XN


def test_a_page_walk_reads_two_descriptors_and_a_section_one():
    m, t, buf = machine()
    run = m.call("touch", buf)
    # the fetch of touch and the load: two walks, both small pages
    assert (run.events["table_walks"], run.events["page_hits"]) == (2, 2)
    assert run.tlbs["DTLB"]["misses"] == 1 and run.tlbs["TLB"]["misses"] == 2
    t.section(0x00800000)
    run = m.call("touch", 0x00812344)
    assert (run.events["table_walks"], run.events["section_hits"]) == (1, 1)


def test_a_micro_tlb_miss_that_hits_the_main_tlb_costs_its_latency():
    m, t, buf = machine()
    pages = [buf + 0x1000 * k for k in range(16)]
    m.call("touch", pages[0])                       # warm: code page and pages[0] mapped
    for p in pages[1:]:
        m.call("touch", p)
    m.call("touch", pages[0])
    hot = m.call("touch", pages[0])                 # every lookup and load hits
    assert hot.tlbs["DTLB"]["hits"] == 1            # 32 micro entries hold all 16 pages
    # flush only the micro DTLB: the next lookup misses it and hits the main TLB
    from emu.hw import cache as c
    c.invalidate_level(m.state, m.model.index["DTLB"])
    again = m.call("touch", pages[0])
    assert again.tlbs["DTLB"]["misses"] == 1 and again.tlbs["TLB"]["hits"] == 1
    assert again.events["table_walks"] == 0
    assert again.cycles - hot.cycles == 7           # profile: micro_miss_cycles (7-cpu.com)


def test_translation_and_permission_faults_name_status_and_descriptors():
    m, t, buf = machine()
    with pytest.raises(PageFault, match=r"data load at address 0x1000000, translation fault "
                                        r"\(section\) \(FSR 0x5\): first-level descriptor at"):
        m.call("touch", UNMAPPED)
    t.unmap(buf)
    with pytest.raises(PageFault, match=r"translation fault \(page\) \(FSR 0x7\): "
                                        r"first-level descriptor at 0x[0-9a-f]+, second-level"):
        m.call("touch", buf)
    t.map(buf, writable=False)
    m.call("touch", buf)                            # reading a read-only page is fine
    # the TLB now holds the read-only entry: the store is refused by it, without a walk
    with pytest.raises(PageFault, match=r"data store .* permission fault \(page\) "
                                        r"\(FSR 0xf\): the TLB entry forbids it"):
        m.call("poke", buf + 4, 1)
    from emu.hw import cache as c
    c.invalidate_level(m.state, m.model.index["DTLB"])
    c.invalidate_level(m.state, m.model.index["TLB"])
    with pytest.raises(PageFault, match=r"data store .* permission fault \(page\) "
                                        r"\(FSR 0xf\): first-level descriptor at 0x[0-9a-f]+, "
                                        r"second-level"):
        m.call("poke", buf + 4, 1)                  # found by the walk this time
    t.map(buf)                                      # writable, as Linux's dirty fault does
    c.invalidate_level(m.state, m.model.index["DTLB"])
    c.invalidate_level(m.state, m.model.index["TLB"])
    m.call("poke", buf + 4, 1)


def test_executing_from_an_execute_never_page_faults():
    m, t, buf = machine()
    from emu.hw.layout import CODE_BASE
    t.map(CODE_BASE, executable=False)
    with pytest.raises(PageFault, match=r"instruction fetch at address 0x10000, permission "
                                        r"fault \(page\)"):
        m.call("touch", buf)


@pytest.mark.parametrize("through_l1, clean, faults", [
    (True, False, False),      # Cortex-A9: the walker sees the PTE in the L1 D
    (False, False, True),      # an older walker reads memory: the new PTE is not there yet
    (False, True, False),      # unless set_pte cleaned its line to memory first
])
def test_a_pte_still_dirty_in_the_l1d(through_l1, clean, faults):
    m, t, buf = machine(walk_through_l1=through_l1)
    target = buf + 0x8000
    t.unmap(target)
    hardware = t.pte_addresses(target)[1]
    entry = "set_pte_clean_touch" if clean else "set_pte_touch"
    pte = ShortDescriptorTables.hardware_pte(target)
    if faults:
        with pytest.raises(PageFault, match="translation fault \\(page\\)"):
            m.call(entry, hardware, pte, target)
    else:
        run = m.call(entry, hardware, pte, target)
        assert run.events["page_faults"] == 0


def test_walks_are_deterministic():
    def once():
        m, t, buf = machine()
        return m.call("touch", buf + 0x4000).cycles
    assert once() == once()
