"""A run stopped by a data access's fault and resumed at it (a 604's hash miss, a page mapped
by a handler) counts each instruction once: the block hook charges a whole block when it
starts, and the part from the faulting instruction on is taken back when the run stops
(emu_uncharge_faulted, emu/hw/model/hooks.c)."""
import pytest

from emu.run.calling import PC_REGISTERS
from emu.run.machine import Machine
from emu.run.profiler import profile_call

FAR = 0x40000000                 # above the machine's RAM: unmapped until the handler maps it

# One block of four instructions, the second a load from the argument's address
FOUR = {
    "ppc750": """
        .globl four
four:   li      r4, 1
        lwz     r5, 0(r3)
        addi    r3, r4, 2
        blr
""",
    "pentium4": """
        .globl four
four:   movl    4(%esp), %edx
        movl    (%edx), %ecx
        movl    $3, %eax
        ret
""",
}


def machine_mapping_on_fault(profile):
    """A machine whose storage interrupt maps the faulting page and resumes at the faulting
    instruction (as the 604's hash_page path resumes at SRR0)."""
    m = Machine(profile)
    m.load(FOUR[profile])
    faults = []

    def map_and_resume():
        m.uc.mem_map(FAR, 0x1000)
        m.stop_record = None
        pc = m.uc.reg_read(PC_REGISTERS[m.isa]) & 0xFFFFFFFF
        faults.append(pc)
        return pc
    m.storage_interrupt = map_and_resume
    return m, faults


@pytest.mark.parametrize("profile", list(FOUR))
def test_a_faulting_access_resumed_counts_each_instruction_once(profile):
    m, faults = machine_mapping_on_fault(profile)
    run = m.call("four", FAR, cold=True)
    assert run.return_value == 3
    assert faults == [m.symbols["four"] + 4]       # the load (li and movl 4(%esp) are 4 bytes)
    # four instructions, each once: before the fix the resumed block (the load, the next
    # instruction and the return) was counted a second time, 7 (and 3 base cycles more:
    # one each on both profiles)
    assert run.instructions == 4
    m.storage_interrupt = None                   # the page is mapped now: no fault
    mapped = m.call("four", FAR, cold=True)
    assert (run.instructions, run.cycles) == (mapped.instructions, mapped.cycles)


@pytest.mark.parametrize("profile", list(FOUR))
def test_a_profiled_faulting_access_counts_each_instruction_once(profile):
    m, faults = machine_mapping_on_fault(profile)
    p = profile_call(m, "four", FAR, every=1, cold=True)
    assert len(faults) == 1
    ran = p.annotate("four")
    assert list(ran["hits"]) == [1, 1, 1, 1]
    assert p.run.instructions == 4
    assert ran["cycles"].sum() == p.run.cycles
    assert p.samples == p.run.cycles             # every=1: a sample a cycle, none twice
    m.storage_interrupt = None
    assert p.run.cycles == m.call("four", FAR, cold=True).cycles
