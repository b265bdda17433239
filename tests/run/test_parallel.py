"""Multi-core time (emu.run.parallel): results do not hinge on the quantum, no core sees a store
before it was made, spinning cores wait parked, store-conditionals are what QEMU makes of
them (a failed one is no store)."""
import pytest

from emu import bench
from emu.hw.faults import InstructionLimitExceeded
from emu.run.machine import Machine

FLAGS = """
store_after:            # r3 = flag, r4 = delay iterations: wait, then set the flag
    mtctr r4
1:  bdnz  1b
    li    r5, 1
    stw   r5, 0(r3)
    blr
load_after:             # r3 = flag, r4 = delay iterations: wait, then read it once
    mtctr r4
1:  bdnz  1b
    lwz   r3, 0(r3)
    blr
spin_until_set:         # r3 = flag: spin with lwarx (as a spin lock does) until it is set
1:  lwarx r4, 0, r3
    cmpwi r4, 0
    beq-  1b
    mr    r3, r4
    blr
"""


@pytest.mark.parametrize("cpu, isa", [("power4", "ppc32"), ("cortex-a9", "arm")])
def test_locked_adds_do_not_hinge_on_the_quantum_nor_beat_the_critical_section(cpu, isa):
    """Platform II's acceptance figure (emu.bench, section smp): cycles per locked add
    within 1% from quantum 10 to 1000 (the issue asks 5%), on 1 to 32 cores, and never
    below the base cycles of the critical section the lock protects."""
    for cores in (1, 2, 4, 32):
        results = [bench.locked_adds(cpu, isa, cores, quantum, adds=40)
                   for quantum in (10, 100, 1000)]
        per_add = [r.cycles_per_add for r in results]
        assert max(per_add) <= 1.01 * min(per_add), (cores, per_add)
        assert min(per_add) >= results[0].floor > 0, (cores, per_add, results[0].floor)


STORE_LOOP = """
store_loop:             # r3 = flag, r4 = n: store 1, 2, ..., n to the flag
    mtctr r4
    li    r5, 0
1:  addi  r5, r5, 1
    stw   r5, 0(r3)
    bdnz  1b
    blr
"""


def test_a_core_never_sees_a_store_before_it_was_made():
    """Core 0 stores 1, 2, ... to a flag, 3 cycles an iteration; core 1 reads it once after
    a delay of 300 iterations. Once its loop block has run, core 0 runs ahead by up to the
    quantum (1000 cycles), so the flag in RAM holds a value core 0 stored later than core
    1's clock: core 1 sees it only at the cycle it was stored (an order stall)."""
    m = Machine("ppc750", cores=2)
    m.load(FLAGS + STORE_LOOP)
    flag = m.alloc(4)
    run = m.run_parallel([("store_loop", flag, 2000), ("load_after", flag, 300)],
                         quantum=1000)
    writer, reader = run.runs
    per_iteration = writer.cycles / 2000
    value = reader.return_value
    assert 300 < value < 2000                  # a value from core 0's future
    assert reader.events["order_stalls"] == 1 and writer.events["order_stalls"] == 0
    assert reader.cycles >= value * per_iteration - 10     # not its own ~340 cycles
    assert reader.cycles > 2 * 340


def test_a_first_run_is_in_time_order():
    """Each core's first run of a block waits for the cores behind it, so core 1 reads the
    flag at its own ~40 cycles, before core 0 (a delay of 1000 iterations) sets it: it
    sees 0, whatever the quantum, and waits for nothing."""
    for quantum in (10, 1_000_000):
        m = Machine("ppc750", cores=2)
        m.load(FLAGS)
        flag = m.alloc(4)
        run = m.run_parallel([("store_after", flag, 1000), ("load_after", flag, 10)],
                             quantum=quantum)
        writer, reader = run.runs
        assert reader.return_value == 0 and reader.events["order_stalls"] == 0
        assert reader.cycles < 300 < writer.cycles


def test_a_spinning_core_waits_parked_for_the_store_that_frees_it():
    m = Machine("ppc750", cores=2)
    m.load(FLAGS)
    flag = m.alloc(4)
    run = m.run_parallel([("store_after", flag, 2000), ("spin_until_set", flag)])
    writer, spinner = run.runs
    assert spinner.return_value == 1
    assert spinner.events["parks"] >= 1 and spinner.events["spin_wait_cycles"] > 1000
    assert spinner.cycles >= writer.cycles - 100      # it saw the store when it was made
    assert spinner.instructions < 100                 # not 2,000 cycles of spinning


def test_slices_count_each_start_of_a_core():
    """A core alone runs its call in one slice; a spinner starts once, then again after each
    wait for the earlier core and each park (its wake): 3 here"""
    m = Machine("ppc750", cores=2)
    m.load(FLAGS)
    flag = m.alloc(4)
    alone = m.run_parallel([("store_after", flag, 2000), None]).runs[0]
    assert alone.events["slices"] == 1
    m.write(flag, bytes(4))
    writer, spinner = m.run_parallel([("store_after", flag, 2000),
                                      ("spin_until_set", flag)]).runs
    assert spinner.return_value == 1
    assert spinner.events["parks"] == spinner.events["sync_waits"] == 1
    assert spinner.events["slices"] == 1 + spinner.events["parks"] + \
        spinner.events["sync_waits"] == 3


SCAN = """
scan_reserved:          # r3 = table, r4 = n: the sum of n words, each read with lwarx
    mtctr r4
    li    r5, 0
1:  lwarx r6, 0, r3
    add   r5, r5, r6
    addi  r3, r3, 4
    bdnz  1b
    mr    r3, r5
    blr
"""


def test_a_loop_that_reads_on_through_a_line_is_not_taken_for_a_spin():
    """Core 0's loop synchronises (lwarx), stores nothing and re-reads one line, but reads
    a new word each pass: it is not parked, so core 1's store to the line, made long after
    core 0 has finished, neither wakes it nor shows in its sum."""
    m = Machine("ppc750", cores=2)
    m.load(FLAGS + SCAN)
    table = m.alloc(32, align=32)
    run = m.run_parallel([("scan_reserved", table, 8), ("store_after", table + 28, 1000)])
    scanner, writer = run.runs
    assert scanner.return_value == 0 and scanner.events["parks"] == 0
    assert 4 * scanner.cycles < writer.cycles


def test_cores_that_spin_on_what_no_core_writes_run_into_the_instruction_limit():
    m = Machine("ppc750", cores=2)
    m.load(FLAGS)
    flag = m.alloc(4)
    with pytest.raises(InstructionLimitExceeded, match="the limit is 20,000"):
        m.run_parallel([("spin_until_set", flag), ("spin_until_set", flag)], limit=20_000)


def test_a_machine_of_several_cores_calls_alone_as_before_after_a_parallel_run():
    m = Machine("ppc750", cores=2)
    m.load(FLAGS)
    flag = m.alloc(4)
    before = m.call("load_after", flag, 10, cold=True)
    m.run_parallel([("store_after", flag, 100), ("load_after", flag, 10)])
    m.write(flag, bytes(4))
    after = m.call("load_after", flag, 10, cold=True)
    assert (after.cycles, after.instructions) == (before.cycles, before.instructions)


def test_a_call_after_a_first_parallel_run_returns_to_its_caller():
    """Slices run without Unicorn's stop at the halt address (emu/hw/model/unicorn.c); a call of
    one core afterwards stops there again (on a fresh machine: no code at HALT is left
    translated from an earlier call)."""
    m = Machine("ppc750", cores=2)
    m.load(FLAGS)
    flag = m.alloc(4)
    m.run_parallel([("store_after", flag, 100), ("load_after", flag, 10)])
    alone = m.call("load_after", flag, 10)
    assert alone.return_value == 1 and alone.instructions == 1 + 10 + 2   # mtctr, bdnz, lwz blr


JUMP = """
jump_to:                # r3 = an address to branch to
    mtctr r3
    bctr
"""


@pytest.mark.parametrize("target", [0x804, 0x7FC, 0])
def test_a_core_that_branches_beside_the_halt_address_is_a_fault_naming_it(target):
    """A return to HALT ends a core's call; a branch to any other unmapped address, even in
    HALT's page, is a guest fault naming it, while the other core runs to its end."""
    from emu.hw.faults import GuestFault
    m = Machine("ppc750", cores=2)
    m.load(FLAGS + JUMP)
    flag = m.alloc(4)
    with pytest.raises(GuestFault, match=f"core 1, PC {target:#x} .*instruction fetch from "
                                         f"unmapped memory at address {target:#x}"):
        m.run_parallel([("store_after", flag, 100), ("jump_to", target)])


SC = """
claim:                  # r3 = word: lwarx, (r5 != 0: another store to it), stwcx.
    lwarx  r6, 0, r3
    cmpwi  r5, 0
    beq    1f
    stw    r5, 0(r3)
1:  li     r6, 1
    stwcx. r6, 0, r3
    mfcr   r3
    blr
"""


@pytest.mark.parametrize("interfere, stores, loads", [(0, 1, 1), (5, 1, 1)])
def test_a_store_conditional_is_a_store_only_when_it_succeeds(interfere, stores, loads):
    """QEMU carries out stwcx. as a compare-and-exchange: a load and a store (of the old
    value when it fails) reach the memory hooks. The model counts what the hardware does:
    the lwarx's load, and the stwcx.'s store if it succeeds. With a store between them (a
    plain stw of 5) the reservation's value no longer matches: it fails."""
    m = Machine("ppc750")
    m.load(SC)
    word = m.alloc(4)
    run = m.call("claim", word, 0, interfere)
    succeeded = bool(run.return_value & 0x20000000)       # CR0[EQ]
    assert succeeded is (interfere == 0)
    assert m.read_word(word) == (1 if succeeded else interfere)
    # L1 D accesses: the lwarx, the stw if any, the stwcx. if it succeeded
    assert run.caches["L1D"]["accesses"] == loads + (interfere != 0) + int(succeeded)


def test_hash_page_flush_and_hash_page_again_in_parallel_runs():
    """Platform II's report: on Machine("power4", mmu=True), run_parallel(hash_page...),
    then a TLB flush, then run_parallel(hash_page...) again raised "instructions were
    charged but not run". Slices now end only before a block, so nothing is charged that
    did not run: the second hash_page re-inserts the HPTE the flush took out."""
    from emu.kernel import workloads
    from emu.kernel.ppc64 import HPTE_STATUS
    from emu.kernel.pgtable import PAGE_SIZE
    from emu.hw.faults import PageFault
    from tests.kernel.test_kernel64 import A, fault_in
    k = workloads.make_kernel(profile="power4")
    p = fault_in(k)
    m = k.machine
    call = ("hash_page", 0, A, p.mm.pgd.address, p.mm.context)
    with m.mmu.translation_off():                  # kernel code runs untranslated
        first = m.run_parallel([call]).runs[0]
        k.arch.flush_range(p.mm, A & ~0x7FFF, (A & ~0x7FFF) + 8 * PAGE_SIZE)
        second = m.run_parallel([call]).runs[0]
    assert HPTE_STATUS[first.return_value] == "hpte_updated"
    assert HPTE_STATUS[second.return_value] == "hpte_primary"
    with pytest.raises(PageFault, match=r"PC 0x[0-9a-f]+ \(hash_page\+0x0\)"):
        m.run_parallel([call])                 # translated: the kernel text has no HPTE


LOCKS = """
spin_lock:              # r3: the lock word (Linux 2.6 _raw_spin_lock, include/asm-ppc)
1:  lwarx  r4, 0, r3
    cmpwi  r4, 0
    bne-   1b
    li     r4, 1
    stwcx. r4, 0, r3
    bne-   1b
    isync
    blr
spin_unlock:            # r3: the lock word (_raw_spin_unlock: sync, store 0)
    sync
    li     r4, 0
    stw    r4, 0(r3)
    blr
"""


def test_tasks_hold_a_guest_lock_across_python_work():
    """Two cores each take a guest spin lock 20 times, spend 100 cycles of Python-modelled
    work holding it, and release it: the 40 critical sections cannot overlap, so the
    machine needs at least 4,000 cycles; each task's calls return their own counts."""
    m = Machine("ppc750", cores=2)
    m.load(LOCKS)
    lock = m.alloc(4)
    held = []

    def task(t):
        for _ in range(20):
            m.call("spin_lock", lock)
            start = t.clock
            t.spend(100)
            held.append((start, t.clock, t.core))
            run = t.call("spin_unlock", lock)
            assert run.instructions == 4
        return t.clock

    clocks = m.run_tasks([task, task])
    assert max(clocks) >= 40 * 100
    spans = sorted(held)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "critical sections overlap"
    assert {core for _, _, core in held} == {0, 1}
    assert m.read_word(lock) == 0


def test_a_fault_in_a_task_reaches_the_task_and_a_failing_task_ends_the_run():
    from emu.hw.faults import GuestFault
    m = Machine("ppc750", cores=2)
    m.load(LOCKS)
    seen = []

    def handles(t):
        try:
            t.call("spin_unlock", 0x7FFFFFF0)      # outside RAM: a guest fault
        except GuestFault as fault:
            seen.append(str(fault))
        return "handled"

    def fails(t):
        t.call("spin_unlock", 0x7FFFFFF0)

    assert m.run_tasks([handles, None]) == ["handled", None]
    assert "write to unmapped memory" in seen[0] or "unmapped" in seen[0]
    with pytest.raises(GuestFault):
        m.run_tasks([fails, handles])


def test_an_error_in_a_tasks_python_ends_the_run_and_stops_the_other_tasks():
    """A task's Python raises after its first call: the run raises that error, and the
    other task, 50 calls long, is stopped at the call it is in (it never finishes); after
    the run no Python is a task's."""
    from emu.run.parallel import current_task
    m = Machine("ppc750", cores=2)
    m.load(LOCKS)
    lock = m.alloc(4)
    finished = []

    def fails(t):
        t.call("spin_unlock", lock)
        raise ValueError("boom")

    def long(t):
        for _ in range(50):
            t.call("spin_unlock", lock)
        finished.append(t.core)

    with pytest.raises(ValueError, match="boom"):
        m.run_tasks([fails, long])
    assert finished == []
    assert current_task() is None
    assert m.run_tasks([long, long]) == [None, None] and finished == [0, 1]


def test_a_task_calls_only_on_its_own_core():
    m = Machine("ppc750", cores=2)
    m.load(LOCKS)
    lock = m.alloc(4)
    tasks = []

    def first(t):
        tasks.append(t)
        t.call("spin_unlock", lock)

    def second(t):
        tasks[0].call("spin_unlock", lock)        # the other core's task

    with pytest.raises(RuntimeError, match="core 0's task calls only from its own"):
        m.run_tasks([first, second])


def test_a_tasks_call_counts_only_what_it_did():
    """spin_unlock is 4 instructions and one store: every call of a task reports that, the
    20th as the first (not the counts since the run began), while the core's clock goes on;
    the machine's own counters are left as they were (the call's are read as differences)."""
    m = Machine("ppc750", cores=2)
    m.load(LOCKS)
    lock = m.alloc(4)
    runs, clocks = [], []

    def task(t):
        for _ in range(20):
            runs.append(t.call("spin_unlock", lock))
            clocks.append(t.clock)

    m.run_tasks([task, None])
    assert {r.instructions for r in runs} == {4}
    assert {r.caches["L1D"]["accesses"] for r in runs} == {1}
    assert all(r.events["first_stale_pc"] is None and r.cycles > 0 for r in runs)
    assert clocks == sorted(clocks) and clocks[-1] >= sum(r.cycles for r in runs)
    assert m.model.stats(core=0)["L1D"]["accesses"] == 20
