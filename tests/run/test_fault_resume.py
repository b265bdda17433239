"""A run stopped by a data access's fault and resumed at it (a 604's hash miss, a page mapped
by a handler) counts each instruction once: the block hook charges a whole block when it
starts, and the part from the faulting instruction on is taken back when the run stops
(emu_uncharge_faulted, emu/hw/model/hooks.c)."""
import pytest

from emu.hw import cache as c
from emu.hw.faults import GuestFault
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


def machine_mapping_on_fault(profile, cores=1):
    """A machine whose storage interrupt maps the faulting page (on the faulting core's
    Unicorn) and resumes at the faulting instruction (as the 604's hash_page path resumes at
    SRR0)."""
    m = Machine(profile, cores=cores)
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


# ------------------------------------------------------------- several cores (smp.c)
# A scheduled run (run_tasks, run_parallel) ends a core's slice at Unicorn's error with the
# faulting block charged whole (the block hook charges at the block's start): smp.c's
# run_cores takes back the rest of it there, as emu_block_call does for Machine.call.

def counts_of(m, core):
    """A core's instructions and clock so far (its header: they go on across its calls)."""
    header = m.model.header(core)
    return int(header[c.H_INSNS]), int(header[c.H_CYCLES])


def task_calling_four(resume_after_fault):
    """A task that calls ``four`` on FAR; where the load faults (the page unmapped on its
    core), it maps the page on its core and calls again at the load (the registers the
    first call set, r4 = 1 or %edx = FAR, are still the core's: the resumed call returns 3
    as the whole call does), as a kernel's Python resumes a user access after its fault."""
    def task(t):
        m = t.machine
        try:
            run = t.call("four", FAR)
            faulted = None
        except GuestFault as fault:
            if not resume_after_fault:
                raise
            faulted = fault.pc
            m.uc.mem_map(FAR, 0x1000)          # m.uc: this task's core's Unicorn
            run = t.call(fault.pc, FAR)
        return run.return_value, faulted, counts_of(m, t.core)
    return task


@pytest.mark.parametrize("profile", list(FOUR))
def test_a_task_resumed_after_a_faulting_access_counts_each_instruction_once(profile):
    faulted_m = Machine(profile, cores=2)
    faulted_m.load(FOUR[profile])
    mapped_m = Machine(profile, cores=2)
    mapped_m.load(FOUR[profile])
    for uc in mapped_m.cpus:
        uc.mem_map(FAR, 0x1000)
    load = faulted_m.symbols["four"] + 4
    faulted = faulted_m.run_tasks([task_calling_four(True)] * 2)
    mapped = mapped_m.run_tasks([task_calling_four(False)] * 2)
    for core in range(2):
        value, pc, (instructions, cycles) = faulted[core]
        assert (value, pc) == (3, load)
        # li (or movl 4(%esp)) in the call that faulted, then the load, the next instruction
        # and the return in the resumed one: 4; before smp.c took back the faulting block's
        # rest, 7, and 3 base cycles more (one each on both profiles)
        assert instructions == 4
        assert mapped[core][:2] == (3, None)
        assert (instructions, cycles) == mapped[core][2]


@pytest.mark.parametrize("profile", list(FOUR))
def test_a_parallel_run_resumed_after_faulting_accesses_counts_each_instruction_once(profile):
    m, faults = machine_mapping_on_fault(profile, cores=2)
    mapped = Machine(profile, cores=2)
    mapped.load(FOUR[profile])
    for uc in mapped.cpus:
        uc.mem_map(FAR, 0x1000)
    run = m.run_parallel([("four", FAR), ("four", FAR)])
    assert faults == [m.symbols["four"] + 4] * 2     # each core's load, on its own Unicorn
    # each core 4 instructions (7 before smp.c took back the faulting block's rest), and the
    # cycles of the run with the page mapped on both
    assert [r.instructions for r in run.runs] == [4, 4]
    assert [r.return_value for r in run.runs] == [3, 3]
    by_hand = mapped.run_parallel([("four", FAR), ("four", FAR)])
    assert [r.cycles for r in run.runs] == [r.cycles for r in by_hand.runs]


@pytest.mark.parametrize("profile", list(FOUR))
def test_a_parallel_run_stopped_by_a_faulting_access_counts_what_ran(profile):
    m = Machine(profile, cores=2)
    m.load(FOUR[profile])
    with pytest.raises(GuestFault) as fault:
        m.run_parallel([("four", FAR), ("four", FAR)])
    assert fault.value.pc == m.symbols["four"] + 4
    # core 0 (the earliest: both clocks at 0, the lower number first) ran the li (or movl
    # 4(%esp)) and faulted at the load: 1 instruction counted, not the block's 4
    assert counts_of(m, 0)[0] == 1
