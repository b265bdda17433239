"""Dispatch groups (emu.hw.cost.dispatch_cycles, issue 30): the 603e dispatches two
instructions a clock, the 604 four; every other profile keeps one-issue costs. Each count
below is worked out by hand from the rules in emu/hw/cost.py."""
from __future__ import annotations

import pytest

from emu.hw import cost, estimates, profile
from emu.isa.assemble import assemble, decode
from emu.run.machine import Machine

BASE = 0x1000
# 11 instructions: two independent adds and a load (a 604 group of three), an add reading
# both adds, a sync (alone), mflr and the store of its result, a branch over one li to a
# label, two li.
MIXED = """addi r3, r4, 1
addi r5, r6, 1
lwz r7, 0(r8)
add r9, r3, r5
sync
mflr r0
stw r0, 4(r1)
b 1f
li r3, 0
1: li r4, 0
li r5, 0
"""


def cycles(name, source, entries=()):
    p = assemble(source, "ppc32", BASE)
    t = cost.tables("ppc32", profile.load(name).costs, p.code, BASE, entries=entries)
    return [int(x) for x in t.cycles[t.starts == 1]]


def test_the_604_groups_four_a_clock_by_unit_and_dependence():
    # addi r3 opens a group (1); addi r5 takes the second SCIU (0); lwz the LSU (0); add
    # reads r3 and r5, written in the group: a new group (1); sync alone (35, the profile's);
    # mflr opens a group on the MCIU (1); stw reads r0, written by mflr: a new group (1);
    # b joins it on the BPU (0) and ends it; li r3 (1); li r4 is b's target (1); li r5 (0)
    assert cycles("ppc604", MIXED) == [1, 0, 0, 1, 35, 1, 1, 0, 1, 1, 0]


def test_the_603e_groups_two_a_clock_on_its_one_integer_unit():
    # addi r3 (1); addi r5 needs the one IU: a new group (1); lwz joins on the LSU (0); add
    # reads r5: new (1); sync (3); mflr on the SRU (1, the profile's mfspr); stw reads r0:
    # new (1); b joins (0); li r3 (1); li r4, the target (1); li r5 needs the IU (1)
    assert cycles("ppc603e", MIXED) == [1, 1, 0, 1, 3, 1, 1, 0, 1, 1, 1]


def test_a_label_starts_a_group():
    # without the label li r4 would join li r3's group on the 604's second SCIU
    source = "li r3, 0\nli r4, 0\n"
    assert cycles("ppc604", source) == [1, 0]
    assert cycles("ppc604", source, entries=(BASE + 4,)) == [1, 1]


def test_an_update_form_writes_its_base():
    # lwzu writes r3 and its base r1: the addi reading r1 waits for a new group, the one
    # reading r4 joins it
    assert cycles("ppc604", "lwzu r3, 4(r1)\naddi r5, r1, 0\n") == [1, 1]
    assert cycles("ppc604", "lwzu r3, 4(r1)\naddi r5, r4, 0\n") == [1, 0]


def test_an_insert_reads_its_target():
    # rlwimi r3 merges into r3: it reads the r3 li wrote, a new group; rlwinm does not
    assert cycles("ppc604", "li r3, 0\nrlwimi r3, r4, 2, 0, 29\n") == [1, 1]
    assert cycles("ppc604", "li r3, 0\nrlwinm r3, r4, 2, 0, 29\n") == [1, 0]


@pytest.mark.parametrize("name", ["ppc603e", "ppc604"])
def test_width_one_is_the_one_issue_model(name):
    one_issue = [cost.instruction_cost(profile.load(name).costs, "ppc32", i.mnemonic, i.op_str)
                 for i in decode(assemble(MIXED, "ppc32", BASE).code, "ppc32", BASE)]
    with estimates.moved({f"{name}:costs.dispatch.width": 1}):
        assert cycles(name, MIXED) == one_issue


@pytest.mark.parametrize("name", [n for n in profile.names()
                                  if profile.load(n).isa in ("ppc32", "ppc64")
                                  and n not in ("ppc603e", "ppc604")])
def test_the_other_powerpc_profiles_keep_one_issue_costs(name):
    costs = profile.load(name).costs
    one_issue = [cost.instruction_cost(costs, "ppc32", i.mnemonic, i.op_str)
                 for i in decode(assemble(MIXED, "ppc32", BASE).code, "ppc32", BASE)]
    assert cycles(name, MIXED) == one_issue


def test_a_604_run_saves_the_grouped_cycles_and_nothing_else():
    """A loop of 8 passes on the 604, against the same run one instruction a clock (width
    moved to 1). Grouped: li r4, 8 (1); mtctr reads r4: a new group (1), li r4, 0 joins
    it (0); each pass: lwz at the label (1), li r5 joins (0), addi reads r5 (1), add reads
    r6 (1), addi r4 joins (0), bdnz joins and ends the group (0): 3; blr (1). One at a
    time: 3 + 8 x 6 + 1 = 52; grouped: 2 + 8 x 3 + 1 = 27. The same instructions, the same
    cache misses: 25 cycles fewer, all of them base cycles."""
    source = """loop8:
    li r4, 8
    mtctr r4
    li r4, 0
again:
    lwz r3, 0(r1)
    li r5, 1
    addi r6, r5, 0
    add r3, r5, r6
    addi r4, r4, 1
    bdnz again
    blr
"""
    runs = {}
    for width in (4, 1):
        with estimates.moved({"ppc604:costs.dispatch.width": width}):
            m = Machine("ppc604")
            m.load(source)
            m.call("loop8")
            runs[width] = m.call("loop8")
    wide, narrow = runs[4], runs[1]
    assert wide.instructions == narrow.instructions
    assert narrow.cycles - wide.cycles == 52 - 27


def test_an_x86_xchg_with_memory_costs_a_locked_instruction():
    """xchg with a memory operand is locked without the prefix (Intel SDM Vol. 2B, XCHG):
    it is charged the profile's ``lock`` cost as ``lock``-prefixed instructions are; a
    register exchange is not."""
    costs = profile.load("pentium4").costs
    lock = costs["mnemonics"]["lock"]
    plain = cost.instruction_cost(costs, "x86", "xchgb", "%dl, %al")
    assert cost.instruction_cost(costs, "x86", "xchgb", "%dl, (%eax)") == plain + lock
    assert cost.instruction_cost(costs, "x86", "xchgl", "%ebx, 0x24(%ecx)") == \
        cost.instruction_cost(costs, "x86", "xchgl", "%ebx, %ecx") + lock
    assert cost.instruction_cost(costs, "x86", "lock decb", "(%eax)") == \
        cost.instruction_cost(costs, "x86", "decb", "(%eax)") + lock
