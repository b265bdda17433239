"""emu.run.machine: real guest code on Unicorn under the cache + cost model, numbers by hand.

Memory map used in the derivations: code from 0x10000, alloc() from 0x100000, RAM 32 MB, the
stack top at 32 MB - 4 KB = 0x1FFF000. A cold instruction fetch of a block costs the memory
latency minus the L1 I latency when the line is in no cache (the block's base cycles come from
the profile's [costs]).
"""

import contextlib

import numpy as np
import pytest

from emu.hw.cache import H_RAM_PTR, H_TOUCHED, CacheLevel
from emu.hw.faults import GuestFault, InstructionLimitExceeded, StaleInstructionFetch
from emu.hw.layout import HEAP_BASE, PAGE
from emu.run.machine import Machine

PPC_ADD8 = """
.globl add8
add8:
    add r3, r3, r4
    add r3, r3, r5
    add r3, r3, r6
    add r3, r3, r7
    add r3, r3, r8
    add r3, r3, r9
    add r3, r3, r10
    blr
"""

ARM_ADD6 = """
add6:                       @ AAPCS: r0-r3, then the stack
    add r0, r0, r1
    add r0, r0, r2
    add r0, r0, r3
    ldr r1, [sp]
    add r0, r0, r1
    ldr r1, [sp, #4]
    add r0, r0, r1
    bx lr
"""

X86_ADD5 = """
add5:                       # cdecl: arguments above the return address
    movl 4(%esp), %eax
    addl 8(%esp), %eax
    addl 12(%esp), %eax
    addl 16(%esp), %eax
    addl 20(%esp), %eax
    ret
"""

# (the pinned loops avoid mtctr/mtlr: see test_profile's SPR-move cost test)
PPC_COUNT = """
count:                      # r3 = n >= 1: returns n after n trips round the loop
    li r4, 0
1:  addi r4, r4, 1
    cmpw r4, r3
    bne 1b
    mr r3, r4
    blr
"""


def machine(cpu, source, **kw):
    m = Machine(cpu, **kw)
    m.load(source)
    return m


# ---------------------------------------------------------------- calls and results

def test_ppc32_eight_register_arguments():
    m = machine("ppc750", PPC_ADD8)
    run = m.call("add8", 1, 2, 3, 4, 5, 6, 7, 8)
    assert run.return_value == 36
    assert run.instructions == 8
    # 8 instructions of cost 1 (add: default, blr: branch) + the one cold fetch of the
    # 32-byte block = one 32 B L1 I line: L1I miss, L2 miss, memory 80 -> 80 - 2 = 78
    assert run.cycles == 8 + 78
    assert run.caches["L1I"] == {"accesses": 1, "hits": 0, "misses": 1, "writebacks": 0,
                                 "invalidations": 0, "evictions": 0}
    assert run.caches["L1D"]["accesses"] == 0
    assert run.memory == {"reads": 1, "writes": 0}
    assert run.profile == "ppc750" and run.entry == "add8" and run.args == tuple(range(1, 9))


def test_ppc32_negative_result_is_masked_to_32_bits():
    m = machine("ppc750", PPC_ADD8)
    assert m.call("add8", -10, 3, 0, 0, 0, 0, 0, 0).return_value == 0xFFFFFFF9


def test_ppc64_eight_arguments_64_bit():
    m = machine("power4", PPC_ADD8)
    run = m.call("add8", 1, 2, 3, 4, 5, 6, 7, 1 << 40)
    assert run.return_value == (1 << 40) + 28
    assert run.instructions == 8
    # L1 I line 128 B: one cold fetch through L2 and L3 from memory: 351 - 4 = 347
    assert run.cycles == 8 + 347
    assert m.call("add8", -5, 0, 0, 0, 0, 0, 0, 0).return_value == (1 << 64) - 5


def test_ppc_more_than_eight_arguments_is_refused():
    m = machine("ppc750", PPC_ADD8)
    with pytest.raises(ValueError, match="at most 8 arguments"):
        m.call("add8", *range(9))


def test_arm_six_arguments_two_on_the_stack():
    m = machine("cortex-a9", ARM_ADD6)
    run = m.call("add6", 1, 2, 3, 4, 5, 600)
    assert run.return_value == 615
    assert run.instructions == 8
    # 8 instructions of cost 1; cold fetch of the 32 B block (one line): 166 - 4 = 162;
    # the two stacked arguments at sp = 0x1FFF000 - 8 share one 32 B line: a miss (162)
    # and a hit
    assert run.cycles == 8 + 162 + 162
    assert (run.caches["L1D"]["accesses"], run.caches["L1D"]["hits"]) == (2, 1)
    assert m.call("add6", -10, 0, 0, 0, 0, 0).return_value == 0xFFFFFFF6


def test_x86_five_cdecl_arguments():
    m = machine("pentium4", X86_ADD5)
    run = m.call("add5", 1, 2, 3, 4, 500)
    assert run.return_value == 510
    assert run.instructions == 6
    # 6 instructions of cost 1 (loads, ret); the 21-byte block is one 64 B line: cold
    # fetch 290 - 2 = 288; the arguments and the return address (esp = 0x1FFF000 - 24)
    # are in one 64 B line: first load misses (288), the other 4 loads and ret's pop hit
    assert run.cycles == 6 + 288 + 288
    assert (run.caches["L1D"]["accesses"], run.caches["L1D"]["hits"]) == (6, 5)
    assert run.events["instructions_outside_programs"] == 0
    assert m.call("add5", -1, 0, 0, 0, 0).return_value == 0xFFFFFFFF


# ------------------------------------------------------------ counts and cycles

@pytest.mark.parametrize("n", [1, 10, 100])
def test_loop_instruction_count(n):
    m = machine("ppc750", PPC_COUNT)
    run = m.call("count", n)
    assert run.return_value == n
    assert run.instructions == 1 + 3 * n + 2      # li; n x (addi, cmpw, bne); mr, blr


def test_loop_cycles_pinned():
    m = machine("ppc750", PPC_COUNT)
    run = m.call("count", 100)
    # ppc750 costs: li/addi/cmpw/mr default 1, bne/blr branch 1 -> 303 base cycles.
    # The 24 bytes of code are one 32 B L1 I line: the first block's fetch misses L1I and
    # L2 (memory 80: stall 78); every later block hits. No data accesses.
    assert run.cycles == 303 + 78
    assert run.caches["L1I"]["misses"] == 1 and run.caches["L1D"]["accesses"] == 0
    # warm: the line stays in the L1 I-cache
    assert m.call("count", 100).cycles == 303
    # cold=True empties the caches first
    assert m.call("count", 100, cold=True).cycles == 303 + 78


STUB = "        .globl stub\nstub:\n        li r3, 7\n        blr\n"


def _loaded_below(deferred):
    """A ppc750 machine with a stub loaded high (at=, as a kernel's vectors are placed), then
    the count loop below it, inside Machine.loading() or not."""
    m = Machine("ppc750")
    with m.loading() if deferred else contextlib.nullcontext():
        m.load(STUB, at=0x20000)
        m.load(PPC_COUNT)                      # at 0x10000: the tables above it summed again
    return m


def test_loads_together_sum_the_cost_tables_once_and_alike():
    """Machine.loading(): the tables summed once at the end equal those summed at each load,
    and a call inside the block brings them up to date first."""
    eager, deferred = _loaded_below(False), _loaded_below(True)
    same = eager.state == deferred.state
    same[H_RAM_PTR] = True                   # the host's address of each one's RAM
    same[H_TOUCHED] = True                   # and of its blocks' notes (emu.run.costreads)
    assert same.all()
    for m in (eager, deferred):
        assert m.call("count", 100).cycles == 303 + 78        # as test_loop_cycles_pinned
    m = Machine("ppc750")
    with m.loading():
        m.load(STUB, at=0x20000)
        m.load(PPC_COUNT)
        assert m._tables_from is not None                     # not summed yet
        assert m.call("count", 100).cycles == 303 + 78        # summed before the run
        assert m._tables_from is None
        m.load(STUB.replace("stub", "stub2"), at=0x30000)
        assert m._tables_from is not None
    assert m._tables_from is None and m.call("stub2").return_value == 7


def test_cycles_are_deterministic_across_fresh_machines():
    runs = [machine("cortex-a9", ARM_ADD6).call("add6", 1, 2, 3, 4, 5, 6) for _ in range(2)]
    assert runs[0].to_dict() == runs[1].to_dict()
    runs = [machine("pentium4", X86_ADD5).call("add5", 1, 2, 3, 4, 5) for _ in range(2)]
    assert runs[0].to_dict() == runs[1].to_dict()


def test_run_to_json_and_table():
    run = machine("ppc750", PPC_ADD8).call("add8", 1, 2, 3, 4, 5, 6, 7, 8)
    assert '"return": 36' in run.to_json()
    assert run.table().splitlines()[0] == "add8 on ppc750: returned 0x24"


# ---------------------------------------------------------------------- faults

FAULTS = """
load_at:
    lwz r3, 0(r3)
    blr
store_at:
    stw r4, 0(r3)
    blr
jump_to:
    mtctr r3
    bctr
spin:
    b .
"""


def test_fault_on_read_of_unmapped_memory():
    m = machine("ppc750", FAULTS)
    with pytest.raises(GuestFault) as e:
        m.call("load_at", 0x10)                    # page 0 is unmapped (null pointers)
    err, pc = e.value, m.symbols["load_at"]
    assert (err.pc, err.instruction, err.address) == (pc, "lwz r3, 0(r3)", 0x10)
    assert err.access == "read from unmapped memory"
    assert str(err) == (f"guest fault at PC {pc:#x} (load_at+0x0): lwz r3, 0(r3): read from "
                        "unmapped memory at address 0x10 (4 bytes)")


def test_fault_on_write_of_unmapped_memory():
    m = machine("ppc750", FAULTS)
    with pytest.raises(GuestFault) as e:
        m.call("store_at", 0x7FFFFFF0, 5)          # far beyond the 32 MB of RAM
    err, pc = e.value, m.symbols["store_at"]
    assert (err.pc, err.instruction, err.address) == (pc, "stw r4, 0(r3)", 0x7FFFFFF0)
    assert err.access == "write to unmapped memory"
    assert f"PC {pc:#x} (store_at+0x0): stw r4, 0(r3)" in str(err)
    assert "at address 0x7ffffff0" in str(err)


def test_fault_on_jump_to_unmapped_memory():
    m = machine("ppc750", FAULTS)
    with pytest.raises(GuestFault) as e:
        m.call("jump_to", 0x40000000)
    err = e.value
    assert (err.pc, err.address) == (0x40000000, 0x40000000)
    assert err.access == "instruction fetch from unmapped memory"
    assert err.instruction == "(no instruction: the address is not mapped)"
    assert "PC 0x40000000" in str(err)


def test_fault_on_arm_and_x86_name_the_instruction():
    m = machine("cortex-a9", "peek:\n    ldr r0, [r0, #4]\n    bx lr\n")
    with pytest.raises(GuestFault) as e:
        m.call("peek", 0x100)
    assert (e.value.instruction, e.value.address) == ("ldr r0, [r0, #4]", 0x104)
    m = machine("pentium4", "poke:\n    movl 4(%esp), %eax\n    movl $1, (%eax)\n    ret\n")
    with pytest.raises(GuestFault) as e:
        m.call("poke", 0x20)
    assert e.value.instruction == "movl $1, (%eax)"
    assert e.value.access == "write to unmapped memory" and e.value.address == 0x20


def test_instruction_limit_stops_an_endless_loop():
    m = machine("ppc750", FAULTS + PPC_COUNT)
    with pytest.raises(InstructionLimitExceeded) as e:
        m.call("spin", limit=1000)
    pc = m.symbols["spin"]
    # counted per block: 'b .' is a one-instruction block, so the 1001st trips the limit
    assert str(e.value) == (f"stopped after 1,001 instructions (the limit is 1,000) at PC "
                            f"{pc:#x} (spin+0x0): b {pc:#x}")
    assert m.call("count", 3).return_value == 3    # the machine is still usable
    m2 = Machine("ppc750", instruction_limit=50)
    m2.load(FAULTS)
    with pytest.raises(InstructionLimitExceeded, match="the limit is 50"):
        m2.call("spin")


# ------------------------------------------------------------ self-modifying code

SMC = """
bad:                        # r3 = the patch site, r4 = the new instruction
    stw r4, 0(r3)
    b patch_bad
good:
    stw r4, 0(r3)
    dcbst 0, r3
    sync
    icbi 0, r3
    sync
    isync
    b patch_good
    .align 5
patch_bad:
    li r3, 1
    blr
    .align 5
patch_good:
    li r3, 1
    blr
"""
LI_R3_2 = (14 << 26) | (3 << 21) | 2            # li r3, 2 = addi r3, 0, 2 = 0x38600002


def smc(which, strict):
    m = machine("ppc750", SMC, strict_coherence=strict)
    site = m.symbols["patch_" + which]
    assert m.call(site).return_value == 1           # runs the old code; its I-line is cached
    return m, m.call(which, site, LI_R3_2)


def test_strict_coherence_catches_missing_dcbst_icbi():
    m = machine("ppc750", SMC, strict_coherence=True)
    site = m.symbols["patch_bad"]
    m.call(site)
    with pytest.raises(StaleInstructionFetch) as e:
        m.call("bad", site, LI_R3_2)
    assert f"stale instruction fetch at PC {site:#x} (patch_bad+0x0)" in str(e.value)
    assert f"the I-cache line at {site:#x}" in str(e.value)


def test_stale_fetch_is_counted_when_not_strict():
    m, run = smc("bad", strict=False)
    assert run.return_value == 2                   # the emulator itself runs the new code
    assert run.events["stale_ifetch"] == 1
    assert run.events["first_stale_pc"] == m.symbols["patch_bad"]
    # stw, b, li, blr: 4 x 1; the 'bad' line misses L1I but hits L2 (the warm-up call filled
    # the 128 B L2 line 0x10000-0x1007f): 15 - 2 = 13; the store misses L1D and hits the
    # same L2 line: 13; patch_bad's I-line hits (stale)
    assert run.cycles == 4 + 13 + 13


@pytest.mark.parametrize("strict", [False, True])
def test_dcbst_sync_icbi_isync_makes_the_code_coherent(strict):
    m, run = smc("good", strict)
    assert run.return_value == 2
    assert run.events["stale_ifetch"] == 0 and run.events["first_stale_pc"] is None
    assert run.caches["L1D"]["writebacks"] == 1 and run.caches["L2"]["writebacks"] == 1
    assert run.caches["L1I"]["invalidations"] == 1
    # base: stw 1 + dcbst 5 + sync 3 + icbi 4 + sync 3 + isync 2 + b 1 + li 1 + blr 1 = 21;
    # fetches: line 0x10000 and line 0x10020 ('b' crosses into it) miss L1I, hit L2: 2 x 13;
    # store: L1D miss, L2 hit: 13; on the 750's 60x bus the dcbst's write-back is posted (a
    # write buffer) at the dcbst's issue and holds the data bus 4 beats of 4 cycles. The
    # block (good's 19 base cycles and both fetch misses, 45) and the store's 13 put the
    # clock at 58; the dcbst issued at 58 - 18 = 40 (its write-back 40-56), the first sync's
    # own 3 cycles end at 48: it waits 8 for the write-back, then its own address-only
    # tenure (3 bus clocks: 12); the second sync's tenure: 12; patch_good's line was
    # invalidated by icbi: refetched from L2: 13. (16 for the write-back when the sync and
    # the write-back were timed from the block's end, not their own cycles: 113.)
    assert run.cycles == 21 + 2 * 13 + 13 + 8 + 12 + 12 + 13
    assert run.events["address_only"] == 2                 # the syncs (the dcbst wrote)


# ------------------------------------------------------- maintenance is not data traffic

RANGES = """
dcbst_range:                # r3 = start, r4 = number of 32 B lines (>= 1)
1:  dcbst 0, r3
    addi r3, r3, 32
    addic. r4, r4, -1
    bne 1b
    blr
dcbz_range:
1:  dcbz 0, r3
    addi r3, r3, 32
    addic. r4, r4, -1
    bne 1b
    blr
store_range:
1:  stw r4, 0(r3)
    addi r3, r3, 32
    addic. r4, r4, -1
    bne 1b
    blr
"""


def test_dcbst_over_a_clean_page_makes_no_data_access():
    m = machine("ppc750", RANGES)
    buf = m.alloc(PAGE)
    run = m.call("dcbst_range", buf, 128)
    assert run.instructions == 4 * 128 + 1
    assert run.caches["L1D"] == {"accesses": 0, "hits": 0, "misses": 0, "writebacks": 0,
                                 "invalidations": 0, "evictions": 0}
    assert run.memory == {"reads": 1, "writes": 0}            # the code fetch only
    # 128 x (dcbst 5 + addi 1 + addic. 1 + bne 1) + blr 1 = 1025, + cold code fetch 78;
    # each dcbst broadcasts an address-only tenure (HID0[ABE]: 3 bus clocks, 12 cycles), so
    # after the first each waits 12 - 8 for the address bus
    assert run.cycles == 1025 + 78 + 127 * (12 - 8)
    assert run.events["address_only"] == 128


def test_dcbst_over_a_dirty_page_writes_every_line_back():
    m = machine("ppc750", RANGES)
    buf = m.alloc(PAGE)
    m.call("store_range", buf, 128)
    run = m.call("dcbst_range", buf, 128)
    assert run.caches["L1D"]["accesses"] == 0
    assert run.caches["L1D"]["writebacks"] == 128 and run.caches["L2"]["writebacks"] == 128
    assert run.memory == {"reads": 0, "writes": 128}
    # dcbst_range's own I-line (0x10000) was not fetched by store_range (0x10028...) but its
    # 128 B L2 line was: 13, so the first dcbst runs at 8 + 13. Each write-back is posted to
    # one of the 750's two write buffers and holds the data bus 16 cycles (4 beats); from
    # the third on a dcbst waits for a buffer, one every 16 cycles: the last at
    # 21 + 126 x 16, then blr 1. Nothing waits for the last two (no sync in the routine).
    assert run.cycles == 8 + 13 + 126 * 16 + 1


def test_dcbz_allocates_without_memory_reads_and_zeroes():
    m = machine("ppc750", RANGES)
    buf = m.alloc(PAGE, data=b"\xff" * PAGE)
    run = m.call("dcbz_range", buf, 128)
    assert (run.caches["L1D"]["accesses"], run.caches["L1D"]["misses"]) == (128, 128)
    assert run.memory["reads"] == 1                            # the code fetch only
    assert m.read(buf, PAGE) == bytes(PAGE)



def test_power4_dcbz_is_performed_in_l2():
    # POWER4's L1 D is store-through: dcbz establishes the zeroed 128 B line in L2, no read
    m = machine("power4", RANGES)
    buf = m.alloc(PAGE, data=b"\xff" * PAGE)
    run = m.call("dcbz_range", buf, 32)            # 32 steps of 32 B = 8 lines of 128 B
    assert m.read(buf, 1024) == bytes(1024) and m.read(buf + 1024, 4) == b"\xff" * 4
    assert run.caches["L1D"]["accesses"] == 0
    # L2: the code line's fill + 32 dcbz (8 new lines, then 3 more dcbz in each)
    assert (run.caches["L2"]["accesses"], run.caches["L2"]["misses"]) == (33, 9)
    assert run.memory == {"reads": 1, "writes": 0}             # the code fetch only
    # 32 x (dcbz 2 + addi 1 + addic. 1 + bne 1) + blr 1 = 161; cold code: 351 - 4 = 347
    assert run.cycles == 161 + 347

# ------------------------------------------------------------- x86 non-temporal

X86_NT = """
nt_fill:                    # (dst, qwords, value): movntq value, zero-extended, to each qword
    movl 4(%esp), %edi
    movl 8(%esp), %ecx
    movd 12(%esp), %mm0
1:  movntq %mm0, (%edi)
    addl $8, %edi
    decl %ecx
    jnz 1b
    sfence
    emms
    ret
"""


def test_movntq_lands_in_memory_through_write_combining():
    m = machine("pentium4", X86_NT)
    buf = m.alloc(PAGE)
    run = m.call("nt_fill", buf, 16, 0x11223344)
    assert run.instructions == 3 + 4 * 16 + 3
    assert run.events["nontemporal_stores"] == 16
    # 16 x 8 B into a page-aligned buffer = 2 full 64 B lines: 2 bursts, nothing partial
    assert (run.events["wc_flushes"], run.events["wc_partial_flushes"]) == (2, 0)
    # the non-temporal stores are not L1D accesses: only 3 argument loads + ret's pop
    assert run.caches["L1D"]["accesses"] == 4
    assert run.memory == {"reads": 2, "writes": 2}             # code line + stack line
    assert m.read(buf, 128) == (0x11223344).to_bytes(8, "little") * 16
    assert m.read(buf + 128, 8) == bytes(8)
    # base: 3 loads + 16 x (movntq 1, addl 1, decl 1, jnz 1) + sfence 40 + emms 12 + ret 1
    # = 120; cold code line (28 bytes): 290 - 2 = 288; cold stack line: 288. The bus
    # (emu.hw.memory: a 64 B line holds it 44 cycles): the first line's burst starts at 611
    # (its 8th movntq) and ends at 655, the second's waits for it (its 8th movntq at 643)
    # and ends at 699; the last block starts at 696, so the sfence waits 3 cycles for it
    assert run.cycles == 120 + 288 + 288 + 3
    assert (run.events["bus_busy_cycles"], run.events["bus_wait_cycles"]) == (4 * 44, 12)


def test_partial_write_combining_line_drained_by_sfence():
    m = machine("pentium4", X86_NT)
    buf = m.alloc(PAGE)
    run = m.call("nt_fill", buf, 3, 7)
    assert run.events["nontemporal_stores"] == 3
    assert (run.events["wc_flushes"], run.events["wc_partial_flushes"]) == (1, 1)
    assert m.read(buf, 32) == (7).to_bytes(8, "little") * 3 + bytes(8)


# ----------------------------------------------------------- profile overrides, alloc

TOUCH = """
touch:                      # r3 = start, r4 = number of 32 B lines: one load per line
    mtctr r4
1:  lwz r5, 0(r3)
    addi r3, r3, 32
    bdnz 1b
    blr
"""


def test_cache_override_replaces_one_level():
    m = Machine("ppc750", caches=["L1D:1024:2:32:fifo"])
    # geometry and policy from the spec; latency and write policy from the profile
    assert m.profile.cache("L1D") == CacheLevel("L1D", 1024, 2, 32, "fifo", "back", True, 2)
    assert [lv.name for lv in m.profile.caches] == ["L1I", "L1D", "L2"]
    assert m.profile.cache("L2").size == 1 << 20                 # untouched
    m.load(TOUCH)
    buf = m.alloc(2048)
    m.call("touch", buf, 64)
    # 64 lines cycled through a 1 KB (32-line) cache: the second pass misses every time
    assert m.call("touch", buf, 64).caches["L1D"]["misses"] == 64
    default = machine("ppc750", TOUCH)
    default.call("touch", buf, 64)
    assert default.call("touch", buf, 64).caches["L1D"]["misses"] == 0   # 32 KB holds it


def test_bad_cache_override_is_refused():
    with pytest.raises(ValueError, match="3 sets is not a power of two"):
        Machine("ppc750", caches=["L1D:3072:32:32"])
    with pytest.raises(ValueError, match="LEVEL:SIZE:WAYS:LINE"):
        Machine("ppc750", caches=["L1D:1024"])


def test_alloc_returns_page_aligned_zeroed_buffers():
    m = Machine("ppc750")
    m.write(HEAP_BASE, b"\xaa" * (3 * PAGE))       # dirty RAM where the heap will go
    a = m.alloc(100)
    b = m.alloc(PAGE + 1)
    c = m.alloc(8, data=b"abc")
    assert (a, b, c) == (HEAP_BASE, HEAP_BASE + PAGE, HEAP_BASE + 3 * PAGE)
    assert m.read(a, 100) == bytes(100)
    assert m.read(b, PAGE + 1) == bytes(PAGE + 1)
    assert m.read(c, 8) == b"abc" + bytes(5)
    assert m.alloc(16, align=64) == HEAP_BASE + 3 * PAGE + 64
    with pytest.raises(ValueError, match="positive size"):
        m.alloc(0)
    with pytest.raises(MemoryError, match="guest RAM is full"):
        m.alloc(64 << 20)


def test_read_word_uses_the_isa_byte_order():
    m = Machine("ppc750")
    m.write(HEAP_BASE, bytes.fromhex("11223344"))
    assert m.read_word(HEAP_BASE) == 0x11223344
    x = Machine("pentium4")
    x.write(HEAP_BASE, bytes.fromhex("11223344"))
    assert x.read_word(HEAP_BASE) == 0x44332211


def test_read_words_reads_what_read_word_reads_at_each_stride():
    for profile in ("ppc750", "pentium4"):
        m = Machine(profile)
        m.write(HEAP_BASE, bytes(range(64)))
        for stride in (4, 8, 12):
            expected = [m.read_word(HEAP_BASE + stride * i) for i in range(5)]
            assert m.read_words(HEAP_BASE, 5, stride) == expected
        assert m.read_words(HEAP_BASE, 0) == []
    assert m.read_words(HEAP_BASE, 2) == [0x03020100, 0x07060504]      # little-endian x86


def test_loading_a_program_for_another_isa_is_refused():
    from emu.isa.assemble import assemble
    m = Machine("ppc750")
    with pytest.raises(ValueError, match="program is x86, machine is ppc32"):
        m.load(assemble("nop\n", "x86"))


def test_unknown_symbol_is_named():
    m = machine("ppc750", PPC_ADD8)
    with pytest.raises(KeyError, match="no symbol 'nope'"):
        m.call("nope")


# --------------------------------------------------- other ISAs' maintenance instructions

ARM_CP15 = """
store_clean:                @ r0 = address: store, then DCCMVAC (clean D line by MVA)
    mov r1, #7
    str r1, [r0]
    mcr p15, 0, r0, c7, c10, 1
    bx lr
    .align 5
preload:                    @ pld, then load the same line
    pld [r0, #64]
    ldr r1, [r0, #64]
    bx lr
    .align 5
icache_all:                 @ ICIALLU
    mcr p15, 0, r0, c7, c5, 0
    bx lr
"""


def test_arm_cp15_clean_acts_on_l1_only():
    m = machine("cortex-a9", ARM_CP15)
    buf = m.alloc(PAGE)
    run = m.call("store_clean", buf)
    assert m.read_word(buf) == 7
    assert run.caches["L1D"]["writebacks"] == 1
    assert run.caches["L2"]["writebacks"] == 0 and run.memory["writes"] == 0
    # mov 1 + str 1 + dccmvac 4 + bx 1 = 7; cold code line 166 - 4 = 162; store miss 162;
    # the forced write-back into L2 is not waited for: no dsb follows (the profile's
    # maintenance_in_time; tests/hw/test_outer_cache.py has the dsb that waits)
    assert run.cycles == 7 + 162 + 162


def test_arm_pld_is_a_data_touch():
    m = machine("cortex-a9", ARM_CP15)
    buf = m.alloc(PAGE)
    run = m.call("preload", buf)
    # pld misses (the only miss), the load of the same line hits
    assert (run.caches["L1D"]["accesses"], run.caches["L1D"]["misses"]) == (2, 1)
    # pld 1 + ldr 1 + bx 1 = 3; cold code line 162; the pld's miss is waited for: 162
    assert run.cycles == 3 + 162 + 162


def test_arm_iciallu_empties_the_icache():
    m = machine("cortex-a9", ARM_CP15)
    buf = m.alloc(PAGE)
    m.call("store_clean", buf)             # I-line 0x10000
    m.call("preload", buf)                 # I-line 0x10020
    run = m.call("icache_all")             # I-line 0x10040, fetched before it runs
    assert run.caches["L1I"]["invalidations"] == 3
    # iciallu 32 + bx 1; its own line is cold (the L2 line is 32 B too): 166 - 4
    assert run.cycles == 32 + 1 + 162


def test_x86_clflush_writes_the_line_to_memory():
    m = machine("pentium4", "f:\n    movl 4(%esp), %eax\n    movl $5, (%eax)\n"
                "    clflush (%eax)\n    ret\n")
    buf = m.alloc(PAGE)
    run = m.call("f", buf)
    # L1D write-through, no allocate: the store goes to L2 (miss, fill from memory, dirty);
    # clflush writes it back L2 -> L3 -> memory and invalidates it in both
    assert run.caches["L1D"]["accesses"] == 3          # argument, store, ret's pop
    assert run.caches["L2"]["invalidations"] == 1 and run.caches["L3"]["invalidations"] == 1
    assert run.memory == {"reads": 3, "writes": 1}    # code, stack, buffer; the flush
    # load 1 + store 1 + clflush 40 + ret 1 = 43; cold code 288; cold stack 288; the store
    # does not stall; clflush waits for L2 -> L3 (14) and L3 -> memory (290)
    assert run.cycles == 43 + 288 + 288 + 14 + 290


def test_x86_prefetchnta_fills_only_l2():
    m = machine("pentium4", "f:\n    movl 4(%esp), %eax\n    prefetchnta 64(%eax)\n"
                "    movl 64(%eax), %ecx\n    ret\n")
    buf = m.alloc(PAGE)
    run = m.call("f", buf)
    assert run.caches["L1D"]["accesses"] == 3          # the prefetch is not an L1 access
    # 4 x 1; cold code 288; cold stack 288; the prefetch does not stall, but its line is in
    # flight for memory's 290 cycles and the load comes in the same block: it waits all of
    # them (emu.hw.memory), then L1 miss, L2 hit (7 - 2 = 5): too late to help
    assert run.cycles == 4 + 288 + 288 + 290 + 5
    assert (run.events["prefetch_late"], run.events["prefetch_late_cycles"]) == (1, 290)


# --------------------------------------------------------------- exceptions in the guest

def test_guest_exception_is_a_guest_fault():
    m = machine("pentium4", "f:\n    xorl %ecx, %ecx\n    movl $5, %eax\n    cltd\n"
                "    idivl %ecx\n    ret\n")
    with pytest.raises(GuestFault) as e:
        m.call("f")
    assert e.value.access == "interrupt 0"             # #DE, divide error
    assert e.value.instruction == "idivl %ecx" and e.value.pc == m.symbols["f"] + 8


def test_invalid_instruction_names_it():
    m = machine("cortex-a9", "f:\n    nop\n    .long 0xe7f000f0\n    bx lr\n")
    with pytest.raises(GuestFault) as e:
        m.call("f")
    assert e.value.pc == m.symbols["f"] + 4 and e.value.instruction == "udf #0"


def test_ppc_trap_names_the_trapping_instruction():
    m = machine("ppc750", "f:\n    nop\n    trap\n    blr\n")
    with pytest.raises(GuestFault) as e:
        m.call("f")
    assert e.value.pc == m.symbols["f"] + 4 and e.value.instruction == "trap"


def test_movnti_is_a_non_temporal_store():
    m = machine("pentium4", "f:\n    movl 4(%esp), %edi\n    movl $7, %eax\n"
                "    movnti %eax, (%edi)\n    movnti %eax, 4(%edi)\n    sfence\n    ret\n")
    buf = m.alloc(PAGE)
    run = m.call("f", buf)
    assert m.read(buf, 8) == (7).to_bytes(4, "little") * 2
    assert run.events["nontemporal_stores"] == 2
    assert (run.events["wc_flushes"], run.events["wc_partial_flushes"]) == (1, 1)
    assert run.caches["L1D"]["accesses"] == 2          # the argument and ret's pop only


def test_rep_movsl_counts_one_instruction_per_element():
    m = machine("pentium4", "cp:\n    movl 4(%esp), %edi\n    movl 8(%esp), %esi\n"
                "    movl 12(%esp), %ecx\n    rep movsl\n    ret\n")
    dst, src = m.alloc(PAGE), m.alloc(PAGE, data=bytes(range(256)) * 16)
    run = m.call("cp", dst, src, 100)
    # the emulator runs rep movs as one block per element, plus a last pass that finds
    # ECX = 0 and falls through: 3 movl + 101 + ret
    assert run.instructions == 3 + 101 + 1
    assert m.read(dst, 400) == bytes(range(256)) + bytes(range(144))
    assert m.read(dst + 400, 4) == bytes(4)


def test_arm_pld_with_a_shifted_index_touches_the_right_line():
    m = machine("cortex-a9", "f:\n    pld [r0, r1, lsl #2]\n    ldr r2, [r0, r1, lsl #2]\n"
                "    bx lr\n")
    buf = m.alloc(PAGE)
    run = m.call("f", buf, 64)                      # both address buf + 256
    assert (run.caches["L1D"]["accesses"], run.caches["L1D"]["misses"]) == (2, 1)


def test_code_after_a_data_word_is_counted_and_charged():
    # capstone stops at the first word it cannot decode; the cost tables must not (code
    # placed after a .long of data would otherwise run with no instructions or cycles)
    from emu.isa.assemble import assemble
    src = """
        .globl first
first:  li r3, 1
        blr
        .long 0
        .globl after
after:  li r3, 2
        addi r3, r3, 1
        blr
    """
    m = Machine("ppc750")
    m.load(assemble(src, "ppc32"))
    run = m.call("after")
    assert run.return_value == 3
    assert run.instructions == 3


def test_special_instructions_side_by_side_share_one_code_hook():
    # x86 at 0x1000: a 3-byte instruction at 0, specials at 3 (3 bytes), 6 (4 bytes) and 10
    # (3 bytes), an ordinary one at 13, a special at 15: spans 3-10 (no instruction between
    # its specials) and 15-15
    from types import SimpleNamespace
    from emu.run.machine import special_spans
    starts = np.zeros(18, dtype=np.int64)
    starts[[0, 3, 6, 10, 13, 15]] = 1
    specials = [SimpleNamespace(pc=0x1000 + off) for off in (15, 6, 3, 10)]
    assert special_spans(specials, starts, 0x1000) == [(0x1003, 0x100A), (0x100F, 0x100F)]
    assert special_spans([], starts, 0x1000) == []

