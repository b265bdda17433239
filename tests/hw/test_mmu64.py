"""The 64-bit hashed page table (POWER4): hashes and PTEG addresses by hand, the SLB, the
HTAB in guest RAM searched by the walker, the guest's own insertion and invalidation."""
import pytest

from emu import routine
from emu.hw import hash64
from emu.bench import COPY_LOOPS
from emu.hw.faults import DataStorageFault, GuestFault, InstructionStorageFault, PageFault, SegmentFault
from emu.run.machine import Machine
from emu.hw.mmu import HashedPageTable64

TOOLS = COPY_LOOPS["ppc64"][1] + """
load4:                      # touch four addresses (r3..r6), in order
    ld    r7, 0(r3)
    ld    r7, 0(r4)
    ld    r7, 0(r5)
    ld    r7, 0(r6)
    blr
store1:
    std   r4, 0(r3)
    blr
clear_hpte:                 # doubleword 0 := 0, without the tlbie sequence
    li    r0, 0
    std   r0, 0(r3)
    blr
tlbie_va:                   # the kernel's tlbie sequence for the virtual address in r3
    ptesync
    tlbie r3
    eieio
    tlbsync
    ptesync
    blr
slb_move:                   # slbmte r3, r4, then a load from r5
    slbmte r3, r4
    isync
    ld    r7, 0(r5)
    blr
slb_kill:                   # slbie r3, then (in the same block) a load from r4
    slbie r3
    ld    r7, 0(r4)
    blr
slb_all:
    slbia
    isync
    ld    r7, 0(r3)
    blr
"""


# ------------------------------------------------------------------ by the architecture book

def test_primary_and_secondary_hash():
    # VSID 0x123456789 (low 39 bits: itself); EA 0x12345000: page index (EA >> 12) & 0xffff
    # = 0x2345. 0x...6789 ^ 0x2345 = 0x...44cc
    assert hash64.primary_hash(0x123456789, 0x12345000) == 0x1234544CC
    # the complement, 39 bits: 0x7fffffffff - 0x1234544cc
    assert hash64.secondary_hash(0x123456789, 0x12345000) == 0x7EDCBABB33
    # only the VSID's low 39 bits count: 0xf800000001234 keeps 0x1234, the page index is
    # 0x1234 too, so the primary hash is 0 and the secondary all ones
    assert hash64.primary_hash(0xF800000001234, 0x01234000) == 0
    assert hash64.secondary_hash(0xF800000001234, 0x01234000) == 0x7FFFFFFFFF


def test_pteg_addresses_for_two_table_sizes():
    # 256 KB at 0x40000: HTABSIZE 0, hash mask 2^11 - 1 = 0x7ff
    sdr1 = hash64.sdr1_for(0x40000, 256 << 10)
    assert sdr1 == 0x40000
    # primary 0x1234544cc & 0x7ff = 0x4cc; * 128 = 0x26600
    assert hash64.pteg_address(sdr1, 0x1234544CC) == 0x40000 + 0x26600 == 0x66600
    # secondary 0x7edcbabb33 & 0x7ff = 0x333; * 128 = 0x19980
    assert hash64.pteg_address(sdr1, 0x7EDCBABB33) == 0x59980
    # 1 MB at 0x100000: HTABSIZE 2, mask 0x1fff: 0x44cc & 0x1fff = 0x4cc, 0xbb33 -> 0x1b33
    sdr1 = hash64.sdr1_for(0x100000, 1 << 20)
    assert sdr1 == 0x100002
    assert hash64.pteg_address(sdr1, 0x1234544CC) == 0x100000 + 0x4CC * 128 == 0x126600
    assert hash64.pteg_address(sdr1, 0x7EDCBABB33) == 0x100000 + 0x1B33 * 128 == 0x1D9980


def test_hpte_doublewords():
    # dword 0: VSID << 12 = 0x123456789000; EA bits 23-27: 0x12345000 >> 23 = 0x24, & 0x1f
    # = 4, << 7 = 0x200; V = 1 (H = 2 for the secondary)
    assert hash64.hpte_dword0(0x123456789, 0x12345000, False) == 0x123456789201
    assert hash64.hpte_dword0(0x123456789, 0x12345000, True) == 0x123456789203
    # dword 1: RPN 0x12345 << 12 | M (0x10) | PP 2; N adds 4; PP 3 (read only) instead of 2
    assert hash64.hpte_dword1(0x12345) == 0x12345012
    assert hash64.hpte_dword1(0x12345, no_execute=True) == 0x12345016
    assert hash64.hpte_dword1(0x12345, pp=3) == 0x12345013


def test_sdr1_refuses_bad_tables():
    with pytest.raises(ValueError, match="power of two from 256 KB"):
        hash64.sdr1_for(0x100000, 128 << 10)
    with pytest.raises(ValueError, match="aligned"):
        hash64.sdr1_for(0x140000, 1 << 20)


def test_linux_vsids_of_the_time():
    # get_kernel_vsid(0xc000000000000000): ordinal = (0 * 0x8000) | 0xc; 0xc * 42470972311
    # (= 0x9e3779b97) = 0x76a99b4b14, kept to 36 bits
    assert hash64.linux_kernel_vsid(0xC000000000000000) == 0x6A99B4B14
    # get_vsid(1, 0x10000000): ordinal = 1 * 0x8000 | 1 = 0x8001; * 0x9e3779b97 =
    # 0x4f1c5b1431b97, kept to 36 bits
    assert hash64.linux_user_vsid(1, 0x10000000) == 0x5B1431B97
    with pytest.raises(ValueError, match="context"):
        hash64.linux_user_vsid(0x8000, 0)


# ------------------------------------------------------------------------ the HTAB in RAM

def machine(**options):
    m = Machine("power4", mmu=True, **options)
    m.load(TOOLS)
    return m


def test_insertion_goes_to_the_secondary_group_when_the_primary_is_full():
    m = machine(ram_size=96 << 20)
    pt = HashedPageTable64(m)                  # 256 KB: hash mask 0x7ff; ESID 0 -> VSID 0
    # page index P + k * 0x800 hashes (VSID 0) to P + k * 0x800, & 0x7ff = P, for every k
    P = 0x155
    eas = [(P + k * 0x800) << 12 for k in range(9)]
    primary, secondary = pt.groups(eas[0])
    assert primary == pt.base + P * 128
    assert secondary == pt.base + (~P & 0x7FF) * 128 == pt.base + 0x6AA * 128
    placed = [pt.insert(ea) for ea in eas]
    assert placed[:8] == [(primary + 16 * k, False) for k in range(8)]
    assert placed[8] == (secondary, True)
    pt.map_machine()
    # the walker finds the ninth by the secondary hash, after reading the 8 primary HPTEs
    run = m.call("load4", eas[8], eas[8], eas[8], eas[8])
    assert (run.events["hash_walks"], run.events["primary_hits"],
            run.events["secondary_hits"]) == (2, 1, 1)      # the code page, then eas[8]
    assert run.caches["L1D"]["accesses"] == 4 + 1 + 9
    assert pt.remove(eas[3]) and pt.lookup(eas[3]) is None


def test_walks_and_erat_tlb_misses_of_a_copy():
    m = machine()
    src, dst = m.alloc(64 << 10), m.alloc(64 << 10)
    HashedPageTable64(m).map_machine()
    run = m.call("copy_words", dst, src, 8 << 10)
    # 16 source + 16 destination pages miss the D-ERAT (DTLB) once each, the code page the
    # I-ERAT (ITLB); all 33 miss the TLB behind them and are walked
    assert run.tlbs["DTLB"] == {"lookups": 16384, "hits": 16352, "misses": 32,
                                "invalidations": 0}
    assert run.tlbs["ITLB"]["misses"] == 1
    assert run.tlbs["TLB"] == {"lookups": 33, "hits": 0, "misses": 33, "invalidations": 0}
    assert (run.events["hash_walks"], run.events["primary_hits"],
            run.events["secondary_hits"], run.events["page_faults"]) == (33, 33, 0, 0)
    # each walk found its HPTE in the first slot: one 16-byte HPTE read through the L1 D
    assert run.caches["L1D"]["accesses"] == 16384 + 33


def test_a_missing_hpte_is_a_page_fault_naming_pc_instruction_address_and_groups():
    m = machine()
    src, dst = m.alloc(8192), m.alloc(8192)       # 0x100000, 0x102000
    pt = HashedPageTable64(m)                     # at 0x140000 (aligned to its 256 KB)
    pt.map_machine()
    assert pt.remove(dst + 4096)
    with pytest.raises(PageFault) as err:
        m.call("copy_words", dst, src, 1024)
    fault = err.value
    assert type(fault) is PageFault
    assert fault.address == dst + 4096 == 0x103000 and fault.access == "data store"
    assert fault.instruction.startswith("std")
    assert fault.pc == m.symbols["copy_words"] + 8
    # VSID 0, page index 0x103: hash 0x103, PTEG 0x140000 + 0x103 * 128 = 0x148180;
    # secondary 0x7ffffffefc & 0x7ff = 0x6fc, PTEG 0x140000 + 0x6fc * 128 = 0x177e00
    assert str(fault).endswith(
        "no valid HPTE in either PTEG: SLB entry 0: ESID 0x0 -> VSID 0x0; primary PTEG at "
        "0x148180 (hash 0x103), secondary at 0x177e00 (hash 0x7ffffffefc)")
    assert str(fault).startswith(f"page fault at PC {fault.pc:#x} (copy_words+0x8): std")


def test_no_execute_pages_fault_on_fetch_only():
    m = machine()
    m.load("elsewhere:\n    li r3, 7\n    blr\n", at=0x20000)    # page 0x20, not mapped yet
    pt = HashedPageTable64(m)
    pt.map_machine()
    pt.insert(0x20000, no_execute=True)
    assert m.call("load4", 0x20000, 0x20000, 0x20000, 0x20000).events["page_faults"] == 0
    with pytest.raises(InstructionStorageFault) as err:
        m.call("elsewhere")
    assert err.value.address == 0x20000 and err.value.access == "instruction fetch"
    assert "no-execute fault at PC 0x20000" in str(err.value)
    pt.remove(0x20000)                          # executable now, but the TLB entry the
    pt.insert(0x20000)                          # loads made still says N ...
    with pytest.raises(InstructionStorageFault):
        m.call("elsewhere")
    m.call("tlbie_va", pt.va_of(0x20000))       # ... until tlbie (as native_hpte_updatepp)
    assert m.call("elsewhere").return_value == 7


def test_pp_read_only_page_refuses_stores():
    m = machine()
    buf = m.alloc(4096)
    pt = HashedPageTable64(m)
    pt.map_machine()
    pt.remove(buf)
    pt.insert(buf, pp=3)                          # key 0 (Ks clear), PP 3: read only
    assert m.call("load4", buf, buf, buf, buf).events["page_faults"] == 0
    with pytest.raises(DataStorageFault, match="protection fault .* data store"):
        m.call("store1", buf, 1)


def test_a_page_outside_every_segment_is_a_segment_fault():
    m = machine()
    HashedPageTable64(m).map_machine()
    m.call("load4", 0x10000, 0x10000, 0x10000, 0x10000)
    with pytest.raises(SegmentFault, match="no valid SLB entry has ESID 0x0") as err:
        m.call("slb_kill", 0, 0x100000)           # slbie ESID 0: the code's segment too
    assert err.value.pc == m.symbols["slb_kill"] + 4 and err.value.address == 0x100000
    assert str(err.value).startswith("segment fault at PC 0x10070 (slb_kill+0x4): ld r7")


# ------------------------------------------------------- the guest's own HTAB management

def guest(**options):
    """A machine with hash_native_64.S loaded and told where the table is."""
    m = machine(**options)
    m.load(routine("ppc64/hash_native_64.S"))
    buf = m.alloc(3 * 4096)
    pt = HashedPageTable64(m)
    pt.publish(m.symbols["htab_data"])
    pt.map_machine()
    for page in range(buf, buf + 3 * 4096, 4096):    # the guest maps these itself
        pt.remove(page)
    return m, pt, buf


def test_the_guest_inserts_and_the_walker_finds_it():
    m, pt, buf = guest()
    assert m.call("hash_insert", pt.va_of(buf), buf >> 12, 0x12).return_value == 0
    assert pt.lookup(buf) == (pt.groups(buf)[0], False)
    assert m.read_word(pt.groups(buf)[0], 8) == hash64.hpte_dword0(0, buf, False)
    assert m.read_word(pt.groups(buf)[0] + 8, 8) == (buf & ~0xFFF) | 0x12
    run = m.call("load4", buf, buf + 8, buf + 16, buf + 24)
    assert (run.events["hash_walks"], run.events["primary_hits"],
            run.events["page_faults"]) == (1, 1, 0)


def test_the_guest_fills_the_secondary_group_when_the_primary_is_full():
    m, pt, buf = guest(ram_size=96 << 20)
    page = buf >> 12                              # VSID 0: the hash is the page index
    for k in range(1, 9):                         # 8 other pages with the same primary PTEG
        pt.insert((page + k * 0x800) << 12)
    hidx = m.call("hash_insert", pt.va_of(buf), page, 0x12).return_value
    assert hidx == 0 | 1 << 3                     # slot 0 of the secondary group
    assert pt.lookup(buf) == (pt.groups(buf)[1], True)
    run = m.call("load4", buf, buf, buf, buf)
    assert run.events["secondary_hits"] == 1


def test_the_guest_invalidates_and_the_next_access_faults():
    m, pt, buf = guest()
    va = pt.va_of(buf)
    hidx = m.call("hash_insert", va, buf >> 12, 0x12).return_value
    m.call("load4", buf, buf, buf, buf)               # the D-ERAT and TLB hold the page
    run = m.call("flush_hash_page", va, hidx)
    assert run.return_value == 1 and pt.lookup(buf) is None
    # tlbie dropped the page from the D-ERAT and the TLB (the I-ERAT never held it)
    assert run.tlbs["DTLB"]["invalidations"] == 1 and run.tlbs["TLB"]["invalidations"] == 1
    with pytest.raises(PageFault) as err:
        m.call("load4", buf, buf, buf, buf)
    assert err.value.address == buf and err.value.instruction.startswith("ld")


def test_a_stale_tlb_entry_translates_until_the_tlbie_sequence():
    m, pt, buf = guest()
    va = pt.va_of(buf)
    hidx = m.call("hash_insert", va, buf >> 12, 0x12).return_value
    m.call("load4", buf, buf, buf, buf)
    hpte = pt.groups(buf)[0]
    m.call("clear_hpte", hpte)                    # gone from the table, not from the TLB ...
    assert pt.lookup(buf) is None
    run = m.call("load4", buf, buf, buf, buf)     # ... so it still translates, no walk
    assert run.events["page_faults"] == 0 and run.events["hash_walks"] == 0
    # a second page stays in the TLB when the first is flushed
    other = buf + 4096
    m.call("hash_insert", pt.va_of(other), other >> 12, 0x12)
    m.call("load4", other, other, other, other)
    assert m.call("flush_hash_page", va, hidx).return_value == 0    # no HPTE left to clear
    assert m.call("load4", other, other, other, other).events["hash_walks"] == 0
    with pytest.raises(PageFault):
        m.call("load4", buf, buf, buf, buf)


# ------------------------------------------------------------------------------- the SLB

def test_the_guest_slbmte_is_what_the_walker_uses():
    m = machine()
    buf = m.alloc(4096)
    pt = HashedPageTable64(m)                     # ESID 0 -> VSID 0
    pt.map_machine()
    m.mmu.set_slb(0, 0, 0x55)                         # the same pages under VSID 0x55 too
    pt.map_machine()
    m.mmu.set_slb(0, 0, 0)
    pt.remove(buf)                                # buf only under VSID 0x55
    rs, rb = hash64.slb_words(0, 0x55, index=0)
    assert (rs, rb) == (0x55000, 0x08000000)
    run = m.call("slb_move", rs, rb, buf)
    assert m.mmu.slb(0) == (0x08000000, 0x55000)
    # walks: the first block (VSID 0); slbmte drops segment 0's entries (the code page's
    # I-ERAT and TLB entries), so the block after isync walks again (VSID 0x55); then buf
    assert (run.events["hash_walks"], run.events["primary_hits"],
            run.events["page_faults"]) == (3, 3, 0)
    assert run.tlbs["ITLB"]["invalidations"] == 1 and run.tlbs["TLB"]["invalidations"] == 1


def test_slbmte_beyond_unicorns_32_entries_and_refusals():
    m = machine()
    HashedPageTable64(m).map_machine()
    rs, rb = hash64.slb_words(5, 0x77, index=40, kp=True)
    m.call("slb_move", rs, rb, 0x10000)            # POWER4 has 64 entries, Unicorn's CPU 32
    assert m.mmu.slb(40) == (5 << 28 | 0x08000000, 0x77 << 12 | 0x400)
    assert m.mmu.slb_lookup(5 << 28) == (40, 0x77400)
    with pytest.raises(GuestFault, match="slbmte refused .* large pages"):
        m.call("slb_move", rs | hash64.SLB_VSID_L, rb, 0x10000)
    with pytest.raises(GuestFault, match="SLB entry 64 does not exist"):
        m.call("slb_move", rs, (5 << 28) | 0x08000000 | 64, 0x10000)
    with pytest.raises(ValueError, match="large pages|does not exist"):
        m.mmu.set_slb(64, 1, 1)


def test_slbia_keeps_entry_zero():
    m = machine()
    HashedPageTable64(m).map_machine()
    m.mmu.set_slb(3, 7, 0x99)
    run = m.call("slb_all", 0x10000)
    assert m.mmu.slb(3)[0] == 7 << 28 and m.mmu.slb(0)[0] == 0x08000000
    assert run.events["page_faults"] == 0


def test_cycles_are_deterministic_with_the_mmu_on():
    runs = []
    for _ in range(2):
        m = machine()
        src, dst = m.alloc(16384), m.alloc(16384)
        HashedPageTable64(m).map_machine()
        runs.append(m.call("copy_words", dst, src, 2048).to_dict())
    assert runs[0] == runs[1]


def test_page_table_picks_the_64_bit_format():
    from emu.hw import mmu
    m = machine()
    table = mmu.page_table(m)
    assert isinstance(table, HashedPageTable64) and m.mmu.sdr1 == table.base
    assert table.lookup(m.symbols["copy_words"]) is not None


def test_the_slb_exists_only_on_the_64_bit_hashed_mmu():
    with pytest.raises(ValueError, match="only on a 64-bit hashed MMU"):
        Machine("power4").mmu.set_slb(0, 0, 0)


def test_a_table_with_linux_user_vsids():
    from emu.hw.hash64 import linux_user_vsid
    m = machine()
    src, dst = m.alloc(8192), m.alloc(8192)
    pt = HashedPageTable64(m, vsid=lambda esid: linux_user_vsid(1, esid << 28))
    pt.map_machine()
    # context 1, ESID 0: ordinal 1, VSID 0x9e3779b97 (36 bits already). The code page 0x10:
    # hash 0x9e3779b97 ^ 0x10 = 0x9e3779b87, & 0x7ff = 0x387: PTEG at base + 0x387 * 128
    assert m.mmu.slb(0) == (0x08000000, 0x9E3779B97 << 12)
    assert pt.lookup(0x10000) == (pt.base + 0x1C380, False)
    run = m.call("copy_words", dst, src, 1024)
    assert run.events["primary_hits"] == run.events["hash_walks"] == 5   # code + 2 + 2 pages
