"""The POWER4 __copy_tofrom_user (routines/ppc64/copy_tofrom_user.S, after Linux 2.6.0
arch/ppc64/lib/copyuser.S; Mackerras 2003 section 3.1): it copies right at every size and
alignment, takes the six-line page loop for exactly the page-sized page-aligned copies, and a
fault in the source or the destination returns the bytes not copied (zeroing the rest of the
destination after a source fault), through the exception table (emu.run.extable). Every count
is computed by hand in the comments.

Layout of the machine (G = a guard page, never mapped): G | A1 A2 A3 | G | B1 B2 B3 | G.
The A pages hold a random pattern (the source), the B pages a sentinel byte (the
destination). A fault test takes A2 or B2 out of the map for one call (extable.unmapped_page).
"""
import random

import pytest

import emu
from emu.kernel import copybench
from emu.run import extable
from emu.isa.assemble import assemble
from emu.hw.layout import PAGE
from emu.run.machine import Machine

ENTRY = "__copy_tofrom_user"
SOURCE = "ppc64/copy_tofrom_user.S"
SENTINEL = 0xEE
WINDOW = 64                   # bytes checked on each side of the destination
OFF = 64                      # where an in-page copy starts: OFF + alignment past a page


class Bench:
    def __init__(self):
        self.m = Machine("power4")
        self.m.load(emu.routine(SOURCE))
        base = self.m.alloc(9 * PAGE)
        self.a, self.b = base + PAGE, base + 5 * PAGE
        for page in (0, 4, 8):
            self.m.uc.mem_unmap(base + page * PAGE, PAGE)
        self.pattern = bytes(random.Random(2003).randrange(256) for _ in range(3 * PAGE))
        self.m.write(self.a, self.pattern)
        self.clear()

    def clear(self):
        self.m.write(self.b, bytes([SENTINEL]) * 3 * PAGE)

    def src_bytes(self, src, n):
        return self.pattern[src - self.a:src - self.a + n]

    def copy(self, src, dst, n):
        """One copy that must succeed: returns 0, the n bytes arrive, and nothing within
        WINDOW bytes around the destination changes. Returns the Run."""
        lo, hi = max(dst - WINDOW, self.b), min(dst + n + WINDOW, self.b + 3 * PAGE)
        run = self.m.call(ENTRY, dst, src, n)
        got = self.m.read(lo, hi - lo)
        want = bytearray([SENTINEL]) * (hi - lo)
        want[dst - lo:dst - lo + n] = self.src_bytes(src, n)
        assert (run.return_value, got) == (0, bytes(want)), (hex(src), hex(dst), n)
        assert self.m.extable.taken == []
        self.m.write(lo, bytes([SENTINEL]) * (hi - lo))
        return run


@pytest.fixture(scope="module")
def bench():
    return Bench()


# ------------------------------------------------------------------ it copies right

def test_every_size_to_1100_at_every_alignment(bench):
    for n in range(0, 1101):
        for sa in range(8):
            for da in range(8):
                bench.copy(bench.a + OFF + sa, bench.b + OFF + da, n)


@pytest.mark.parametrize("n", [1101, 1536, 2047, 2048, 2049, 3000, 4088, 4095, 4096, 4097,
                               4104, 5000, 6143, 8191, 8192])
def test_large_sizes_at_every_alignment(bench, n):
    for sa in range(8):
        for da in range(8):
            bench.copy(bench.a + OFF + sa, bench.b + OFF + da, n)


@pytest.mark.parametrize("n", [16, 100, 4095, 4096, 4097, 8192])
def test_other_offsets(bench, n):
    # page aligned (the page loop at 4096), 8-byte aligned but not page aligned, and
    # offsets of more than a doubleword, where only the low 3 bits may matter
    for sa, da in [(0, 0), (8, 0), (0, 8), (120, 8), (128, 0), (0, 4088), (9, 17), (13, 4),
                   (255, 100), (127, 1)]:
        if sa + n <= 3 * PAGE and da + n <= 3 * PAGE:
            bench.copy(bench.a + sa, bench.b + da, n)


def test_no_byte_outside_the_source_is_read(bench):
    # copies that end exactly at the guard page after A (or B), or start right after the
    # one before it: a load of a doubleword that holds no source byte would fault there,
    # and its fixup would make the copy return a count (copy() wants 0 and no fixup taken)
    end = bench.a + 3 * PAGE
    for n in list(range(0, 70)) + [127, 128, 129, 1000, 4096]:
        for k in range(8):
            for da in range(8):
                bench.copy(end - n - k, bench.b + OFF + da, n)
                bench.copy(bench.a + k, bench.b + OFF + da, n)
                # and the destination up to its own guard page
                bench.copy(bench.a + OFF + k, bench.b + 3 * PAGE - n - da, n)


# ------------------------------------------------------------------ the paths, counted

def test_a_page_aligned_page_takes_the_page_loop(bench):
    run = bench.copy(bench.a + PAGE, bench.b + PAGE, 4096)
    # entry to "beq .Lcopy_page": 11 (cmpldi cmpdi or neg andi. std crand std std dcbt beq)
    # set-up: 12 std + li + addi + li = 15
    # a block of six lines: addi mtctr + 12 loads + cmpwi = 15; the main loop 5 trips of
    #   36 loads and stores + bdnz = 185; 6 std + 2 addi + bge = 9; 209 per block, 5 blocks
    #   (r5 = 127 - 24 k: 103 79 55 31 7, another block while it is >= 24): 1045
    # the last 256 bytes: mtctr + 3 loads = 4, 7 trips of 4 ld + 4 std + bdnz = 63,
    #   1 ld + 4 std = 5; then 12 ld + li + blr = 14
    assert run.instructions == 11 + 15 + 5 * (15 + 5 * 37 + 9) + 4 + 7 * 9 + 5 + 14 == 1157
    assert run.events["alignment_exceptions"] == 0


def test_a_page_that_is_not_page_aligned_takes_the_general_loops(bench):
    # 8-byte aligned but not page aligned: entry 15 (to "bne .Ldst_unaligned", not taken);
    # andi. addi bne srdi = 4; ld addi mtctr andi. bf (taken: 4096 = 256 pairs, even) = 5;
    # the loop entered at its ldu: ldu stdu bdnz = 3, then 255 trips of 5 = 1275;
    # std beq+ = 2; li blr = 2
    run = bench.copy(bench.a + 8, bench.b + 8, 4096)
    assert run.instructions == 15 + 4 + 5 + 3 + 255 * 5 + 2 + 2 == 1306
    # source 3 bytes off, destination aligned: entry 15; andi. addi bne = 3; the shift
    # set-up 11 (srdi addi subf srdi sldi cmpldi andi. mtctr subfic add bt); d = 512
    # doublewords, even: 3 ld + 4 shifts/or + blt + ld + b = 10; the loop (ctr 255)
    # entered half way: 8, then 254 trips of 11 = 2794; std or std srd or std bne li blr = 9
    run = bench.copy(bench.a + 3, bench.b, 4096)
    assert run.instructions == 15 + 3 + 11 + 10 + 8 + 254 * 11 + 9 == 2850
    assert run.events["alignment_exceptions"] == 0
    # the destination misaligned: not the page loop either (more instructions than 1306)
    assert bench.copy(bench.a, bench.b + 1, 4096).instructions > 1306


def test_small_copies_counted_by_hand(bench):
    # 0 bytes: entry 14 (to "blt cr1, .Lshort_copy", taken); 4 bf taken + li + blr = 6
    assert bench.copy(bench.a, bench.b, 0).instructions == 20
    # 7 bytes: 14; bf (no 8) 1; 4: bf lwz addi stw addi 5; 2: 5; 1: bf lbz stb 3; li blr 2
    assert bench.copy(bench.a + 1, bench.b + 2, 7).instructions == 14 + 1 + 5 + 5 + 3 + 2
    # 21 bytes, to 3 past a doubleword, from 1 past: entry 15; .Ldst_unaligned with 5 bytes
    # to the boundary (bits 4 and 1): mtcrf subf li cmpldi 4, bf lbz stb addi 4, bf 1,
    # bf lwzx stwx 3, mtcrf add add b 4 = 16; 16 bytes left, source now 6 off:
    # .Ldst_aligned andi. addi bne 3, shift set-up 11, d = 2 (even): ld ld sld ldu srd sld
    # or blt = 8, then std, srd or std, bne (no tail) li blr = 7
    run = bench.copy(bench.a + 1, bench.b + 3, 21)
    assert run.instructions == 15 + 16 + 3 + 11 + 8 + 7 == 60


# ------------------------------------------------------------------ faults

def fault_offsets(n):
    """Bytes before the hole, for an n-byte copy: every offset in the first 24 (all source
    alignments), and some later ones."""
    return sorted({f for f in list(range(24)) + [n // 2, n // 2 + 3, n - 9, n - 8, n - 2, n - 1]
                   if 0 <= f < n})


FAULT_SIZES = list(range(1, 48)) + [63, 64, 65, 127, 128, 129, 200, 255, 256, 1000, 1100]


def test_a_source_fault_returns_the_bytes_not_copied_and_zeroes_the_rest(bench):
    m = bench.m
    hole = bench.a + PAGE                        # A2
    checked = 0
    with extable.unmapped_page(m, hole):
        for n in FAULT_SIZES:
            for f in fault_offsets(n):           # f source bytes before the hole
                src = hole - f
                for da in range(8):
                    dst = bench.b + OFF + da
                    run = m.call(ENTRY, dst, src, n)
                    assert run.return_value == n - f, (n, f, da)
                    got = m.read(dst - WINDOW, n + 2 * WINDOW)
                    want = (bytes([SENTINEL]) * WINDOW + bench.src_bytes(src, f) +
                            bytes(n - f) + bytes([SENTINEL]) * WINDOW)
                    assert got == want, (n, f, da)
                    # the last fault is the byte copy's, at the hole's first byte
                    assert m.extable.taken and m.extable.taken[-1].address == hole
                    bench.clear()
                    checked += 1
    assert checked > 3000


def stored_pieces(n):
    """(offset, size) of the stores of a copy below 16 bytes, in order: 8 bytes as two
    words, then 4, 2, 1 (the bits of n)."""
    pieces, at = [], 0
    for size, words in ((8, (4, 4)), (4, (4,)), (2, (2,)), (1, (1,))):
        if n & size:
            for w in words:
                pieces.append((at, w))
                at += w
    return pieces


def not_copied_on_store_fault(n, f, dst):
    """Bytes the routine reports not copied when the destination's first unwritable byte is
    at offset f: from 16 bytes every store is naturally aligned (1-, 2-, 4-byte head stores,
    then doublewords, then the 4/2/1-byte tail), so none straddles the hole and the count is
    exact; below 16 a word or halfword store at any alignment may straddle it, and the count
    starts at that store."""
    if n >= 16:
        return n - f
    start = next(at for at, size in stored_pieces(n) if at + size > f)
    return n - start


def test_a_destination_fault_returns_the_bytes_not_copied(bench):
    m = bench.m
    hole = bench.b + PAGE                        # B2
    checked = 0
    with extable.unmapped_page(m, hole):
        for n in FAULT_SIZES:
            for f in fault_offsets(n):           # f destination bytes before the hole
                dst = hole - f
                for sa in range(8):
                    src = bench.a + OFF + sa
                    run = m.call(ENTRY, dst, src, n)
                    want = not_copied_on_store_fault(n, f, dst)
                    assert run.return_value == want, (n, f, sa)
                    done = n - want
                    assert m.read(dst - WINDOW, WINDOW + done) == (
                        bytes([SENTINEL]) * WINDOW + bench.src_bytes(src, done)), (n, f, sa)
                    assert m.extable.taken and m.extable.taken[-1].address >= hole - 7
                    m.write(dst - WINDOW, bytes([SENTINEL]) * (WINDOW + f))
                    checked += 1
    assert checked > 3000
    # from 16 bytes the count is the exact one
    assert not_copied_on_store_fault(16, 5, 0) == 11
    # 13 bytes = 8 + 4 + 1: stores at 0, 4 (the 8) and 8 (the 4) and 12 (the 1); a hole
    # 6 bytes in falls inside the second word: 13 - 4 = 9
    assert not_copied_on_store_fault(13, 6, 0) == 9


def test_the_store_fixup_2_6_0_got_wrong(bench):
    # 16 bytes from a source 1 byte off: two shifted doublewords, both stored after the
    # loop, the first by the store 2.6.0 listed with a fixup that added nothing to r3
    # (to - 16 there), so it reported 32 bytes not copied of 16
    m = bench.m
    hole = bench.b + PAGE
    with extable.unmapped_page(m, hole):
        assert m.call(ENTRY, hole, bench.a + 1, 16).return_value == 16
        assert m.call(ENTRY, hole - 8, bench.a + 1, 16).return_value == 8
        assert m.call(ENTRY, hole - 8, bench.a + 1, 24).return_value == 16


def test_a_source_fault_whose_zeroing_faults_too(bench):
    # the source ends 100 bytes in, the destination 300 bytes in: 100 bytes copied, 200
    # zeroed, then the zeroing stops at the destination's hole; the count is the source's
    m = bench.m
    src_hole, dst_hole = bench.a + PAGE, bench.b + PAGE
    with extable.unmapped_page(m, src_hole), extable.unmapped_page(m, dst_hole):
        run = m.call(ENTRY, dst_hole - 300, src_hole - 100, 1000)
    assert run.return_value == 900
    assert m.read(dst_hole - 300, 300) == bench.src_bytes(src_hole - 100, 100) + bytes(200)
    assert m.extable.taken[-1].address == dst_hole
    bench.clear()


def test_a_fault_in_the_page_loop_starts_again_with_the_general_loop(bench):
    m = bench.m
    src, dst = bench.a + PAGE, bench.b + PAGE
    with extable.unmapped_page(m, src):
        run = m.call(ENTRY, dst, src, 4096)
    assert run.return_value == 4096
    assert m.read(dst, 4096) == bytes(4096)          # all zeroed
    # the page loop's first load (line 5, 640 bytes in), then the general loop's first
    # (doubleword 0), then the byte copy's first: all three fixups
    assert [t.address for t in m.extable.taken] == [src + 640, src, src]
    bench.clear()
    with extable.unmapped_page(m, dst):
        run = m.call(ENTRY, dst, src, 4096)
    assert run.return_value == 4096
    # the page loop's first store (line 5's first doubleword), then the general loop's
    # first (its stdu of doubleword 0)
    assert [(t.address, t.access) for t in m.extable.taken] == [
        (dst + 640, "write to unmapped memory"), (dst, "write to unmapped memory")]
    # and with both mapped again it copies
    bench.copy(src, dst, 4096)


def test_a_fault_in_the_page_loop_keeps_the_callers_registers():
    # r14-r25 are the caller's (non-volatile): saved by the page loop, put back by its
    # fixup before the general loop runs
    m = Machine("power4")
    m.load("""
        .globl  keeps
keeps:                          # r3..r5 as for the copy; returns r14 + ... + r25
        mflr    r0
        std     r0, 16(r1)
        stdu    r1, -256(r1)
        li      r14, 1
        li      r15, 2
        li      r16, 3
        li      r17, 4
        li      r18, 5
        li      r19, 6
        li      r20, 7
        li      r21, 8
        li      r22, 9
        li      r23, 10
        li      r24, 11
        li      r25, 12
        bl      __copy_tofrom_user
        std     r3, 128(r1)
        add     r3, r14, r15
        add     r3, r3, r16
        add     r3, r3, r17
        add     r3, r3, r18
        add     r3, r3, r19
        add     r3, r3, r20
        add     r3, r3, r21
        add     r3, r3, r22
        add     r3, r3, r23
        add     r3, r3, r24
        add     r3, r3, r25
        ld      r4, 128(r1)
        mulli   r3, r3, 10000
        add     r3, r3, r4
        addi    r1, r1, 256
        ld      r0, 16(r1)
        mtlr    r0
        blr
""" + emu.routine(SOURCE).read_text())     # one program: bl needs the symbol
    base = m.alloc(3 * PAGE)
    src, dst = base, base + PAGE
    with extable.unmapped_page(m, src):
        assert m.call("keeps", dst, src, 4096).return_value == 78 * 10000 + 4096
    assert m.call("keeps", dst, src, 4096).return_value == 78 * 10000


# ------------------------------------------------------------------ the table itself

MEMORY_OPS = ("ld", "ldu", "std", "stdu", "lbz", "stb", "lhz", "sth", "lwz", "stw",
              "lhzx", "sthx", "lwzx", "stwx")


def test_every_access_off_the_stack_is_listed_and_nothing_else():
    # every load and store that does not address the stack (r1) may touch user memory and
    # must have a fixup; nothing else is listed
    program = assemble(emu.routine(SOURCE).read_text(), "ppc64", 0x10000, SOURCE)
    listed = {e.insn for e in extable.entries_of(program)}
    user, stack = set(), 0
    for s in program.statements:
        if s.kind != "insn":
            continue
        mnemonic, _, operands = s.body.partition(" ")
        if mnemonic not in MEMORY_OPS:
            assert s.address not in listed, s.body
            continue
        base = operands.split("(")[-1].rstrip(")") if "(" in operands else \
            operands.split(",")[-1]
        if base.strip() in ("1", "r1"):
            stack += 1
            assert s.address not in listed, s.body
        else:
            user.add(s.address)
    assert user == listed
    # 47 in the general code and its fixups: 24 loads (4 in the aligned loop and its
    # tail, 9 in the shifting one and its tail, 3 in the head, 7 in the short copy, the
    # byte copy's lbz) and 23 stores (3 + 3 tail, 6, 3 head, 5 short, the byte copy's stb,
    # 3 zeroing); 70 in the page loop: 12 + 36 + 6 per block, 3 + 8 + 5 at the end.
    # The stack: 3 argument saves, 3 + 2 reloads in the two fixup paths, 12 saves and
    # 12 restores in the page loop, 12 + 2 in its fixup
    assert len(listed) == 47 + 70
    body = {s.address: s.body for s in program.statements if s.kind == "insn"}
    loads = [a for a in listed if body[a].startswith("l")]
    # page loop: 12 + 18 + 3 + 4 + 1 loads, 18 + 6 + 4 + 4 stores
    assert (len(loads), len(listed) - len(loads)) == (24 + 38, 23 + 32)
    assert stack == 3 + 3 + 2 + 12 + 12 + 12 + 2


# ------------------------------------------------------------------ emu.kernel.copybench

def test_copybench_runs_it_and_checks_it_returns_zero():
    r = copybench.measure("copy_tofrom_user64", 4096)
    assert r.instructions == 1157                   # the page loop, as counted above
    assert r.routine == "copy_tofrom_user64" and r.cycles_per_byte == r.cycles / 4096
    assert copybench.measure("copy_tofrom_user64", 4096, src_align=3).instructions == 2850
    assert copybench.measure("copy_tofrom_user64", 21, 1, 3).instructions == 60
    small = copybench.measure("copy_tofrom_user64", 100, src_align=5, dst_align=2)
    assert small.alignment_exceptions == 0 and small.cycles > 0
    with pytest.raises(ValueError, match="is ppc64 code"):
        copybench.measure("copy_tofrom_user64", 8, profile="ppc750")


def test_the_page_loop_beats_the_general_loop_and_the_32_bit_copy():
    # warm caches, one 4096-byte copy on power4 (deterministic, pinned): the page loop
    # against the same routine's aligned two-doubleword loop (not page aligned: 8 bytes
    # on), the 64-bit memcpy and the 32-bit one; the page loop's stores go to six lines in
    # turn, so it waits little on the L2's store queues
    page = copybench.measure("copy_tofrom_user64", 4096)
    general = copybench.measure("copy_tofrom_user64", 4096, src_align=8, dst_align=8)
    memcpy64 = copybench.measure("memcpy64", 4096)
    memcpy32 = copybench.measure("memcpy32", 4096)
    assert (page.cycles, page.store_queue_stall_cycles) == (1212, 43)
    assert (general.cycles, general.store_queue_stall_cycles) == (1500, 192)
    assert (memcpy64.cycles, memcpy32.cycles) == (1498, 3022)
    assert page.cycles < general.cycles and page.cycles < memcpy64.cycles < memcpy32.cycles
    # the book's copy_page_power4 has the same six-line main loop (its own block count and
    # end loop, and no entry tests or argument saves): 10 instructions and 19 cycles fewer
    copy_page = copybench.measure("copy_page_power4", 4096)
    assert (page.instructions - copy_page.instructions, page.cycles - copy_page.cycles) == (
        10, 19)
