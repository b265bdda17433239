"""Software-loaded TLBs: 603 (tlbld/tlbli, IMISS/DMISS, ICMP/DCMP, HASH1/HASH2) and 405
(tlbwe/tlbre/tlbsx/tlbia, EX), with the miss handlers in guest assembly. Numbers by hand."""
import pytest

from emu import routine
from emu.hw.faults import DataStorageFault, GuestError, InstructionStorageFault, TLBMissFault
from emu.run.machine import Machine
from emu.hw.softtlb import (DAR, DCMP, DMISS, HASH1, HASH2, ICMP, IMISS, PTE_ACCESSED, PTE_DIRTY,
                         PTE_EXEC, PTE_PRESENT, PTE_RW, SRR0, SRR1, LinuxPageTable)
from unicorn import ppc_const

R = ppc_const.UC_PPC_REG_0
HANDLER_603 = 22        # instructions of a 603 I/D load miss handler that finds its PTE
HANDLER_603_STORE = 21  # the store miss handler (no PP choice, one more RW test)
HANDLER_405 = 35        # 405: 16 (save, walk) + 19 (tlb_finish_405 .. rfi)

ROUTINES = """
touch:                  # r3 = address - 4, r4 = a value: load, then store, by update forms
    cmpwi r4, 0x77
    lwzu  r5, 4(r3)
    stwu  r4, 8(r3)
    mfcr  r6            # CR0 as the cmpwi left it, across the miss handlers
    blr
store:
    stwu  r4, 8(r3)
    blr
load4:                  # load from r3, r4, r5, r6 in order
    lwz   r7, 0(r3)
    lwz   r7, 0(r4)
    lwz   r7, 0(r5)
    lwz   r7, 0(r6)
    blr
touch_pages:            # r3 = base, r4 = pages: one load per page, two passes
    li    r6, 2
1:  mtctr r4
    mr    r5, r3
2:  lwz   r7, 0(r5)
    addi  r5, r5, 4096
    bdnz  2b
    addi  r6, r6, -1
    cmpwi r6, 0
    bne   1b
    blr
call_r3:                # call the code at r3
    mtctr r3
    bctr
"""

RETURN_R3_SRR0 = """
        mfspr r3, 26            # SRR0: the faulting instruction
        mfspr r4, 19            # DAR
        ba    0x800             # the call's halt address, emu.hw.layout.HALT (real mode: no miss)
"""


def reg(m, n):
    return m.uc.reg_read(R + n)


def machine_603(buf_size=8192):
    m = Machine("ppc603e", mmu=True)
    m.load(routine("ppc32/tlbmiss_603.S"), at=0x1000)
    m.load(ROUTINES)
    buf = m.alloc(buf_size)                  # 0x100000: the first buffer
    m.mmu.sdr1 = 0x00FE0000                      # HTABORG 0xFE0000, HTABMASK 0 (64 KB)
    for n in range(16):
        m.mmu.set_segment(n, 0x123456 + n)
    pt = LinuxPageTable(m)
    pt.map_machine()
    return m, buf, pt


def machine_405(buf_size=8192):
    m = Machine("ppc405gp", mmu=True)
    m.load(routine("ppc32/tlbmiss_405.S"), at=0x1100)
    m.load(ROUTINES)
    buf = m.alloc(buf_size)
    pt = LinuxPageTable(m)
    pt.map_machine()
    return m, buf, pt


# ------------------------------------------------------------------------------------ 603

def test_603_data_load_miss_round_trip_and_its_registers():
    m, buf, pt = machine_603()
    assert buf == 0x100000
    m.write(buf + 4, (0x11223344).to_bytes(4, "big"))
    run = m.call("touch", buf, 0x77)
    # lwzu ran exactly once (r3 = buf + 4, then stwu: + 8), its load and the store landed
    assert (reg(m, 3), reg(m, 5)) == (buf + 12, 0x11223344)
    assert m.read_word(buf + 12) == 0x77
    assert reg(m, 6) >> 28 == 0b0010          # CR0 = EQ from cmpwi, restored from SRR1
    # what the data-load miss handler saw: EA 0x100004 in segment 0 (VSID 0x123456)
    fetch, load = m.soft_tlb.deliveries
    assert (load["vector"], load["dmiss"]) == (0x1100, 0x100004)
    # DCMP = V | VSID << 7 | API (EA bits 4-9 = 0) = 0x80000000 | 0x091A2B00
    assert load["dcmp"] == 0x891A2B00
    # hash = 0x23456 ^ 0x100 = 0x23556; (hash << 6) & 0xFFC0 = 0x5580
    assert load["hash1"] == 0x00FE5580
    # secondary = ~0x23556 & 0x7FFFF = 0x5CAA9; << 6 & 0xFFC0 = 0xAA40
    assert load["hash2"] == 0x00FEAA40
    assert load["srr0"] == m.symbols["touch"] + 4             # the lwzu
    # SRR1: CR0 (EQ: 0b0010) in bits 0-3, I/D 0, WAY 0, S/L 0 (load), MSR ME|IR|DR
    assert load["srr1"] == 0x20000000 | 0x1030
    # one ITLB miss (the code page), one DTLB miss (the lwzu; the stwu then hits)
    assert run.tlbs["ITLB"] == {"lookups": 3, "hits": 2, "misses": 1, "invalidations": 0}
    assert run.tlbs["DTLB"] == {"lookups": 3, "hits": 2, "misses": 1, "invalidations": 0}
    assert run.events["tlb_miss_exceptions"] == 2
    assert run.events["tlb_mirror_divergences"] == 0
    # 5 routine instructions + two handlers; the handler marked the PTE accessed
    assert run.instructions == 5 + 2 * HANDLER_603
    assert pt.pte(buf) == buf | PTE_PRESENT | PTE_RW | PTE_ACCESSED


def test_603_instruction_miss_registers():
    m, buf, pt = machine_603()
    m.call("touch", buf, 0)
    fetch = m.soft_tlb.deliveries[0]
    touch = m.symbols["touch"]
    assert (fetch["vector"], fetch["imiss"], fetch["srr0"]) == (0x1000, touch, touch)
    # code at 0x10000: segment 0, API 0: V | 0x123456 << 7
    assert fetch["icmp"] == 0x891A2B00
    # hash = 0x23456 ^ 0x10 = 0x23446 -> 0x1180; secondary 0x5CBB9 -> 0xEE40
    assert (fetch["hash1"], fetch["hash2"]) == (0x00FE1180, 0x00FEEE40)
    # SRR1: CR0 0 (nothing compared yet), I/D = 1 (bit 13), WAY 0, MSR ME|IR|DR
    assert fetch["srr1"] == 0x00040000 | 0x1030


def test_603_data_store_miss_sets_dirty_and_srr1_store_bit():
    m, buf, pt = machine_603()
    run = m.call("store", buf + 4096 - 8, 0x55)     # stwu to buf + 4096: the second page
    assert reg(m, 3) == buf + 4096 and m.read_word(buf + 4096) == 0x55
    store = m.soft_tlb.deliveries[1]
    assert (store["vector"], store["dmiss"]) == (0x1200, buf + 4096)
    srr1 = store["srr1"]
    assert srr1 & 0x00010000 and not srr1 & 0x00040000     # S/L = store, I/D = data
    assert srr1 & 0x00020000 == 0                           # WAY 0: the set was empty
    assert pt.pte(buf + 4096) & (PTE_ACCESSED | PTE_DIRTY) == PTE_ACCESSED | PTE_DIRTY
    assert run.tlbs["DTLB"]["misses"] == 1 and run.instructions == 2 + HANDLER_603 + HANDLER_603_STORE


def test_603_two_way_lru_replacement_in_one_set():
    m, buf, pt = machine_603(3 * 32 * 4096)
    a, b, c = buf, buf + 32 * 4096, buf + 64 * 4096        # 32 sets: the same DTLB set
    run = m.call("load4", a, b, a, c)
    # a -> way 0, b -> way 1, a hits, c replaces the LRU entry b (way 1)
    def ways():
        return [(d["dmiss"], d["srr1"] >> 17 & 1) for d in m.soft_tlb.deliveries
                if d["vector"] == 0x1100]
    assert run.tlbs["DTLB"]["misses"] == 3 and ways() == [(a, 0), (b, 1), (c, 1)]
    run = m.call("load4", b, a, c, a)
    # b replaces a (way 0, LRU), a replaces c (way 1), c replaces b (way 0), a hits
    assert run.tlbs["DTLB"]["misses"] == 3 and ways() == [(b, 0), (a, 1), (c, 0)]
    run = m.call("load4", a, c, c, a)
    assert run.tlbs["DTLB"]["misses"] == 0 and run.tlbs["DTLB"]["lookups"] == 4


def test_603_miss_and_hit_counts_of_a_loop_over_pages():
    m, buf, pt = machine_603(80 * 4096)
    run = m.call("touch_pages", buf, 80)
    # pass 1: 80 misses. 32 sets: sets 0-15 hold 3 pages (k, k+32, k+64), sets 16-31 two.
    # Pass 2: in sets 0-15 LRU evicts each page just before it is used again: 3 misses
    # each (48); sets 16-31 hit.
    assert run.tlbs["DTLB"] == {"lookups": 160 + 128, "hits": 160, "misses": 128,
                                "invalidations": 0}
    assert run.tlbs["ITLB"]["misses"] == 1
    # routine: li + 2 x (mtctr, mr + 80 x (lwz, addi, bdnz) + addi, cmpwi, bne) + blr = 492
    assert run.instructions == 492 + 129 * HANDLER_603
    assert run.events["tlb_mirror_divergences"] == 0


def test_603_unmapped_page_goes_to_the_dsi_path():
    m, buf, pt = machine_603()
    pt.unmap(buf)
    with pytest.raises(DataStorageFault) as err:
        m.call("touch", buf, 1)
    fault = err.value
    assert fault.pc == m.symbols["touch"] + 4 and fault.address == buf + 4
    assert fault.access == "data load" and fault.instruction.startswith("lwzu")
    assert "no handler is loaded at 0x300" in str(fault)


def test_603_dsi_handler_in_the_guest():
    m, buf, pt = machine_603()
    m.load(RETURN_R3_SRR0, at=0x300)
    pt.unmap(buf + 4096)
    m.call("store", buf + 4096 - 8, 1)
    assert (reg(m, 3), reg(m, 4)) == (m.symbols["store"], buf + 4096)


def test_603_unmapped_code_goes_to_the_isi_path():
    m, buf, pt = machine_603()
    code = m.alloc(4096)                    # allocated after map_machine: not mapped
    with pytest.raises(InstructionStorageFault) as err:
        m.call("call_r3", code)
    assert err.value.pc == err.value.address == code


def test_603_without_miss_handlers_a_miss_is_a_clear_error():
    m = Machine("ppc603e", mmu=True)
    m.load(ROUTINES)
    with pytest.raises(TLBMissFault, match="no miss handler is loaded at vector 0x1000"):
        m.call("touch", 0x100000, 0)


# ------------------------------------------------------------------------------------ 405

TLB_405 = """
write_read:             # r3 = entry, r4 = tag word, r5 = data word: tlbwe both, tlbre both
    tlbwe r5, r3, 1
    tlbwe r4, r3, 0
    tlbre r6, r3, 0
    tlbre r7, r3, 1
    blr
search:                 # r3 = EA, r4 = PID: tlbsx. -> r3 = index, r4 = CR
    mtspr 945, r4
    tlbsx. r3, 0, r3
    mfcr  r4
    li    r5, 0
    mtspr 945, r5
    blr
flush_all:
    tlbia
    isync
    blr
"""


def test_405_tlbwe_tlbre_round_trip():
    m, buf, pt = machine_405()
    m.load(TLB_405)
    # entry 40: page 0x123000, SIZE 1 (4 KB) << 7 | V 0x40; data: same page | EX | WR.
    # (Unicorn 2.1.4's 405 reads back no ZSEL/WIMG bits in the data word: not tested)
    run = m.call("write_read", 40, 0x001230C0, 0x00123300)
    assert (reg(m, 6), reg(m, 7)) == (0x001230C0, 0x00123300)
    assert run.tlbs["TLB"]["invalidations"] == 0


def test_405_tlbsx_finds_an_entry_by_address_and_pid():
    m, buf, pt = machine_405()
    m.load(TLB_405)
    m.call("search", 0x00ABC000, 5)          # (entries are written with the PID register)
    m.load("""
write_pid5:             # an entry for page 0xABC000 tagged TID 5
    li    r6, 5
    mtspr 945, r6
    tlbwe r5, r3, 1
    tlbwe r4, r3, 0
    li    r6, 0
    mtspr 945, r6
    blr
""")
    m.call("write_pid5", 50, 0x00ABC0C0, 0x00ABC100)
    m.call("search", 0x00ABC123, 5)
    assert reg(m, 3) == 50 and reg(m, 4) >> 28 == 0b0010       # found: CR0[EQ]
    m.call("search", 0x00ABC123, 6)
    assert reg(m, 4) >> 28 == 0b0000                            # other PID: not found


def test_405_tlbia_invalidates_everything():
    m, buf, pt = machine_405()
    m.load(TLB_405)
    m.call("touch", buf, 0)                 # the code page and the buffer's page
    run = m.call("flush_all")
    # both entries go; the blr after isync is fetched again: the code page misses
    assert run.tlbs["TLB"] == {"lookups": 3, "hits": 2, "misses": 1, "invalidations": 2}
    assert m.soft_tlb.deliveries[0]["srr0"] == m.symbols["flush_all"] + 8
    run = m.call("touch", buf, 0)
    assert run.tlbs["TLB"]["misses"] == 1 and run.events["tlb_miss_exceptions"] == 1


def test_405_miss_vectors_to_the_handler_and_retries():
    m, buf, pt = machine_405()
    m.write(buf + 4, (0xCAFE).to_bytes(4, "big"))
    run = m.call("touch", buf, 0x77)
    assert (reg(m, 3), reg(m, 5), m.read_word(buf + 12)) == (buf + 12, 0xCAFE, 0x77)
    assert reg(m, 6) >> 28 == 0b0010
    assert run.tlbs["TLB"] == {"lookups": 6, "hits": 4, "misses": 2, "invalidations": 0}
    assert run.instructions == 5 + 2 * HANDLER_405
    fetch, load = m.soft_tlb.deliveries
    assert (fetch["vector"], fetch["srr0"]) == (0x1200, m.symbols["touch"])
    assert (load["vector"], load["srr0"], load["dear"]) == (0x1100, m.symbols["touch"] + 4,
                                                          buf + 4)
    # round-robin: the code page went to entry 1, the data page to entry 2
    assert m.read_word(m.symbols["tlb_4xx_next"]) == 2


def test_405_execute_permission():
    m, buf, pt = machine_405()
    page = m.alloc(4096)
    m.write(page, bytes.fromhex("3860002a" "4e800020"))   # li r3, 42; blr
    pt.map(page, exec=False)                             # a data page: no EX
    with pytest.raises(InstructionStorageFault) as err:
        m.call("call_r3", page)
    fault = err.value
    assert fault.pc == fault.address == page and fault.access == "instruction fetch"
    assert "lacks EX" in str(fault) and fault.instruction.startswith("li")
    # with a guest ISI handler loaded, it is delivered there (SRR0 = the page)
    m.load(RETURN_R3_SRR0, at=0x400)
    assert m.call("call_r3", page).return_value == page
    # mapped executable, it runs
    pt.map(page, exec=True)
    m2, _, pt2 = machine_405()
    page2 = m2.alloc(4096)
    m2.write(page2, bytes.fromhex("3860002a" "4e800020"))
    pt2.map(page2, exec=True)
    assert m2.call("call_r3", page2).return_value == 42


def test_405_data_word_rewrite_of_a_valid_entry_without_its_tag_is_refused():
    m, buf, pt = machine_405()
    m.load(TLB_405 + """
set_data:               # r3 = entry, r5 = data word, then a load that misses
    tlbwe r5, r3, 1
    lwz   r6, 0(r4)
    blr
""")
    m.call("write_read", 40, 0x001230C0, 0x00123300)
    with pytest.raises(GuestError, match="clears an entry's valid bit"):
        m.call("set_data", 40, buf, 0x00123100)


@pytest.mark.parametrize("tag, data, says", [
    (0x00123140, 0x00123300, r"tlbwe at 0x[0-9a-f]+ writes a 16 KB page \(SIZE 2\) into "
                             r"entry 40: the model's TLB holds 4 KB pages only"),
    (0x001230C0, 0x00456300, r"tlbwe at 0x[0-9a-f]+ maps page 0x123000 to 0x456000 in "
                             r"entry 40: the soft-TLB model needs identity translations"),
])
def test_405_tlbwe_the_model_cannot_mirror_is_refused(tag, data, says):
    m, buf, pt = machine_405()
    m.load(TLB_405)
    with pytest.raises(GuestError, match=says):
        m.call("write_read", 40, tag, data)
    m.soft_tlb.identity_only = False            # the kernel model's setting: allowed
    if data != 0x00123300:
        m.call("write_read", 40, tag, data)
        assert m.soft_tlb.search405(0x123456, 0)[0] == 40


def test_603_tlbld_of_another_frame_is_refused_unless_the_kernel_model_allows_it():
    m, buf, pt = machine_603()
    m.load("""
load_other:             # r3 = EA: tlbld it to frame 0x456000 (RPA), way SRR1[WAY] = 0
    lis   r4, 0x0045
    ori   r4, r4, 0x6002
    mtspr 982, r4
    li    r4, 0
    mtspr 27, r4
    tlbld r3
    blr
""")
    with pytest.raises(GuestError, match=r"tlbld at 0x[0-9a-f]+ loads page 0x200000 -> "
                                         r"0x456000: .* needs identity translations"):
        m.call("load_other", 0x200000, real_mode=True)
    m.soft_tlb.identity_only = False
    m.call("load_other", 0x200000, real_mode=True)
    assert m.soft_tlb.entries603[False, (0x200000 >> 12) % 32][0][::2] == (0x200, 0x456002)


# ------------------------------------------------------------------------------ both

@pytest.mark.parametrize("make", [machine_603, machine_405])
def test_cycles_are_deterministic(make):
    runs = []
    for _ in range(2):
        m, buf, pt = make(80 * 4096)
        runs.append(m.call("touch_pages", buf, 80).to_dict())
    assert runs[0] == runs[1]


def test_405_loop_over_pages_round_robin():
    m, buf, pt = machine_405(80 * 4096)
    run = m.call("touch_pages", buf, 80)
    # Round-robin over 64 entries (write k goes to entry (k + 1) % 64) is FIFO: the 80 data
    # pages cycle through a 64-entry TLB, so all 160 loads miss. The code page C, used after
    # every handler's rfi, is written at writes 0, 65 and 130 (each time 64 writes after it
    # was loaded, it has been overwritten and misses again): 3 misses; 163 writes in all.
    tlb = run.tlbs["TLB"]
    assert tlb["misses"] == run.events["tlb_miss_exceptions"] == 160 + 3
    assert tlb["lookups"] == tlb["hits"] + tlb["misses"]
    assert run.events["tlb_mirror_divergences"] == 0
    assert run.instructions == 492 + 163 * HANDLER_405


# ---- session 29: a switch_mm's segment registers in one write of the saved CPU

def test_603_segments_set_together_read_back_as_set_one_at_a_time():
    """set_segments writes the model's copy and the CPU's own segment registers (VSID, Ks
    at bit 30, Kp at bit 29) as set_segment does one by one; registers not named keep
    theirs."""
    m, _, _ = machine_603()
    m.mmu.set_segments({1: 0xABCDEF, 2: 0x1000001}, ks=True, kp=True)   # 24 bits kept
    regs = m.soft_tlb.regs
    assert regs.sr(1) == 0xABCDEF | 1 << 30 | 1 << 29
    assert regs.sr(2) == 0x000001 | 1 << 30 | 1 << 29
    assert regs.sr(3) == 0x123456 + 3                      # machine_603's, no keys
    assert (m.mmu.segment(1), m.mmu.segment(2)) == (0xABCDEF, 0x000001)
    with pytest.raises(ValueError, match="0-15"):
        m.mmu.set_segments({4: 1, 16: 1})
    assert regs.sr(4) == 0x123456 + 4                      # nothing written by a refusal


def test_603_registers_read_after_a_guest_run_are_the_runs_not_a_kept_copy():
    """The CPU's registers are read from one context kept for the reads (Unicorn's
    context_save would allocate one each time): it is saved anew at each read, so a value
    the guest changed since the last read is seen."""
    m, buf, _ = machine_603()
    regs = m.soft_tlb.regs
    regs.set_spr(SRR0, 0x1234)
    assert regs.spr(SRR0) == 0x1234
    m.load("set_srr0:\n    mtspr 26, r3\n    blr\n")
    m.call("set_srr0", 0x5678)
    assert regs.spr(SRR0) == 0x5678
    assert regs.sprs(SRR0, SRR1)[0] == 0x5678


def _with_stale_copy(tlb, valid):
    """``tlb``'s saved state as locate_tlb6 reads it, with one more pointer: to a copy of
    QEMU's array (an earlier emulator's, freed) holding both probes, their entries
    ``valid`` or not."""
    import ctypes
    import struct
    size = 2 * 2 * 12 * tlb.classes603                 # data and fetch, two ways, 12 bytes
    stale = ctypes.create_string_buffer(size)
    probes = [(tlb.PROBE_EA, tlb.PROBE_CMP, tlb.PROBE_RPA),
              (tlb.PROBE_EA + 0x1000, tlb.PROBE_CMP ^ 0x00F0F0F0, tlb.PROBE_RPA + 0x1000)]
    for ea, cmp_word, rpa in probes:
        word = cmp_word if valid else cmp_word & 0x7FFFFFFF
        struct.pack_into("<III", stale, 12 * ((ea >> 12) % tlb.classes603), word, rpa, ea)
    real = type(tlb)._saved_state
    tlb._saved_state = lambda: real(tlb) + struct.pack("<Q", ctypes.addressof(stale))
    return stale


def test_603_qemus_tlb_array_is_told_from_a_stale_copy_by_the_tlbie():
    """Two pointers fit both probes: the live array is the one whose first probe the tlbie
    then invalidated; the stale copy (still valid) is not taken."""
    m, _, _ = machine_603()
    live = m.soft_tlb.locate_tlb6()
    assert live is not None and m.soft_tlb.tlb6_candidates == 1
    stale = _with_stale_copy(m.soft_tlb, valid=True)
    assert m.soft_tlb.locate_tlb6() == live and m.soft_tlb.tlb6_candidates == 1
    del stale


def test_603_no_tlb_array_found_is_a_clear_error():
    """When no pointer fits (here the state the search reads is cut to nothing), the runs
    could not undo QEMU's same-page drop: an error, not silently other cycles."""
    from emu.hw.softtlb import TlbArrayNotFound
    m, _, _ = machine_603()
    m.soft_tlb._saved_state = lambda: b""
    with pytest.raises(TlbArrayNotFound, match="0 pointers"):
        m.soft_tlb.locate_tlb6()


def test_603_readable_spans_join_mappings_that_touch():
    """/proc/self/maps lists touching mappings with other flags as two lines (a library's
    r-x and r-- parts, say): the search joins them, so that an array lying across such a
    boundary is still seen whole. This process has such pairs to join."""
    from emu.hw.softtlb import SoftTLB
    lines = 0
    with open("/proc/self/maps") as maps:
        touching = []
        for line in maps:
            span, perms = line.split()[:2]
            if perms.startswith("r"):
                start, end = (int(x, 16) for x in span.split("-"))
                touching.append(bool(lines) and start == previous)
                previous, lines = end, lines + 1
    spans = SoftTLB._readable_spans()
    assert any(touching) and len(spans) < lines
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))    # sorted, none touching
