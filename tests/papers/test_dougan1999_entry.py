"""User programs under the kernel model (emu.kernel.entry, issue 19 items 2-3): user code runs
translated in user mode on the 603 and 604 backends, enters the kernel through the 2.2.0
entry path (routines/ppc32/entry_22.S), takes its faults in the kernel model and resumes."""
import pytest

from emu.hw import cache as c
from emu.papers import dougan1999
from emu.kernel.entry import (CR0_SO, DATA_BASE, ELF_BASE, ENOSYS, LAT_SYSCALL_NULL,
                              NULL_CALL_INSTRUCTIONS, Entry, bat_block, bat_words)
from emu.kernel.errors import KernelError, SegmentationFault

MACHINES = ("603 page table", "603 hash table", "604")


def entry_for(machine):
    k = dougan1999.kernel(machine)
    return k, Entry(k)


def exit_with(code):
    """The program's end: exit(r3) as glibc's stub makes it."""
    return f"{code}\n        li r0, 1\n        sc\n"


@pytest.mark.parametrize("machine", MACHINES)
def test_a_null_call_runs_the_entry_path_instruction_by_instruction(machine):
    """Per getppid call (the difference of 20 and 10 calls): 5 user instructions and the
    kernel path counted by hand from entry_22.S, 197 instructions."""
    k, e = entry_for(machine)
    p = e.spawn(LAT_SYSCALL_NULL)
    e.run(p, ELF_BASE, 1)
    a, b = e.run(p, ELF_BASE, 10), e.run(p, ELF_BASE, 20)
    per_call = (b.instructions - a.instructions) / 10
    assert sum(NULL_CALL_INSTRUCTIONS.values()) == 5 + 34 + 51 + 30 + 82 == 202
    assert per_call == 202
    assert b.events["exception_8"] == 21            # 20 getppid calls and exit
    assert b.faults == 0 and a.faults == 0           # the warm-up mapped the text page


@pytest.mark.parametrize("machine", MACHINES)
def test_getppid_returns_the_parents_pid_and_the_registers_survive(machine):
    k, e = entry_for(machine)
    source = """
        li r0, 64
        sc
        mr r31, r3          # getppid(): init's pid
        lis r29, 0x1234
        ori r29, r29, 0x5678
        li r0, 64
        sc
        mr r30, r29         # r29 survived the call
""" + exit_with("li r3, 5")
    r = e.run(e.spawn(source), ELF_BASE)
    assert r.status == 5
    assert r.gprs[31] == 1                          # spawned processes are init's children
    assert r.gprs[30] == 0x12345678
    assert not r.cr & CR0_SO


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("number", [999, 200])
def test_a_bad_system_call_number_returns_enosys(machine, number):
    """Past NR_syscalls (999) or an empty slot of the table (200): ENOSYS with CR0[SO] set,
    which libc's bnslr turns into errno and -1."""
    k, e = entry_for(machine)
    source = f"""
        li r0, {number}
        sc
        mr r31, r3
        mfcr r30
""" + exit_with("li r3, 0")
    r = e.run(e.spawn(source), ELF_BASE)
    assert r.gprs[31] == ENOSYS
    assert r.gprs[30] & CR0_SO


@pytest.mark.parametrize("machine", MACHINES)
def test_faults_are_taken_in_the_kernel_model_and_the_program_resumes(machine):
    """The first fetch of the text and the first store to the data page have no Linux PTE:
    each goes through DataAccess/InstructionAccess, the kernel model's fault path, and the
    retried access; the value stored is read back."""
    k, e = entry_for(machine)
    source = f"""
        lis r9, {DATA_BASE >> 16:#x}
        lis r8, 0x00c0
        ori r8, r8, 0xffee
        stw r8, 0x10(r9)
        lwz r31, 0x10(r9)
""" + exit_with("li r3, 3")
    p = e.spawn(source)
    before = k.ledger.counts.get("faults", 0)
    r = e.run(p, ELF_BASE)
    assert r.status == 3
    assert r.gprs[31] == 0x00c0ffee
    assert r.faults == 2                            # the text's fetch, the data's store
    assert k.ledger.counts["user_faults"] == 2
    assert k.ledger.counts["faults"] - before == 2  # do_page_fault of the kernel model
    assert p.mm.pte(DATA_BASE) & 1                  # present now
    again = e.run(p, ELF_BASE)                      # mapped: no fault the second time
    assert again.faults == 0 and again.gprs[31] == 0x00c0ffee


@pytest.mark.parametrize("machine", ("603 page table", "603 hash table"))
def test_a_user_tlb_miss_is_resolved_by_the_guest_handler_and_the_code_resumes(machine):
    """On the 603, after the pages' TLB classes are emptied, the text fetch and the data
    store miss in the CPU's TLB: the kernel model's miss handlers (0x1000, 0x1200) find the
    translations and the program resumes, with no fault; the load after the store hits
    the entry the store miss loaded (read/write: the page is dirty)."""
    k, e = entry_for(machine)
    source = f"""
        lis r9, {DATA_BASE >> 16:#x}
        li r8, 77
        stw r8, 0(r9)
        lwz r31, 0(r9)
""" + exit_with("li r3, 0")
    p = e.spawn(source)
    e.run(p, ELF_BASE)
    k.arch.flush_tlb_page(p.mm, ELF_BASE)          # tlbie: the pages' classes emptied
    k.arch.flush_tlb_page(p.mm, DATA_BASE)
    r = e.run(p, ELF_BASE)
    assert r.faults == 0
    assert r.events["tlb_miss_exceptions"] == 2     # the fetch's and the store's
    assert r.events["tlb_mirror_divergences"] == 0
    assert r.gprs[31] == 77


def test_the_kernel_takes_no_tlb_entry_when_bat_mapped():
    """BAT2 maps all of RAM for the supervisor: in the steady state of the null call loop
    the 603 takes no TLB miss and every kernel access (74 per call: fetch blocks and data)
    is a BAT translation, counted natively."""
    s = dougan1999.null_syscall("603 page table")
    assert s["steady_tlb_misses"] == 0
    assert s["bat_translations_per_call"] > 50
    assert bat_block(32 << 20) == 32 << 20 and bat_block(48 << 20) == 32 << 20
    batu, batl = bat_words(0, 32 << 20)
    assert batu == 0xFF << 2 | 2 and batl == 2       # BL = 0xff (32 MB), Vs, PP = RW


def test_user_accesses_below_the_bat_are_not_bat_translations():
    """A user-mode access (PR = 1) to an address inside the supervisor-only BAT is not
    translated by it (Vp = 0): the native look-up tests the privilege."""
    k, e = entry_for("603 page table")
    st = k.machine.state
    from emu.hw.softtlb import MSR_DR, MSR_PR, lookup
    st[c.H_BAT_HITS] = 0
    st[c.H_XLATE] = MSR_DR
    lookup(st, 0x200000, False)
    assert st[c.H_BAT_HITS] == 1
    st[c.H_XLATE] = MSR_DR | MSR_PR
    lookup(st, 0x200000, False)
    assert st[c.H_BAT_HITS] == 1


def test_a_segfault_is_reported():
    k, e = entry_for("603 page table")
    source = """
        lis r9, 0x2000
        lwz r3, 0(r9)
""" + exit_with("")
    with pytest.raises(SegmentationFault):
        e.run(e.spawn(source), ELF_BASE)


def test_what_the_entry_model_refuses_is_said():
    k, e = entry_for("604")
    with pytest.raises(KernelError, match="sys_sigreturn"):
        e.run(e.spawn("li r0, 0x7777\n sc\n"), ELF_BASE)
    with pytest.raises(ValueError, match="603 and 604"):
        from emu.kernel import Kernel
        Entry(Kernel())


@pytest.mark.parametrize("machine", ("603 page table", "604"))
def test_null_syscall_is_deterministic(machine):
    a, b = dougan1999.null_syscall(machine), dougan1999.null_syscall(machine)
    assert a == b


def test_null_syscall_the_604_pays_for_its_syncs():
    """Same instructions on both; the 604's sync costs 35 cycles (the profile, from GCC's
    6xx.md), the 603's 3: four sync; isync pairs per call make the 604's call dearer."""
    t = dougan1999.null_syscall_table()
    assert (t["instructions_per_call"] == 202).all()
    assert t.loc["604", "cycles_per_call"] > t.loc["603 page table", "cycles_per_call"]
    assert t.loc["603 hash table", "cycles_per_call"] == \
        t.loc["603 page table", "cycles_per_call"]        # no TLB miss in the loop



def test_the_reason_counts_the_null_calls_sync_pairs_at_the_profiles_costs():
    """Four sync; isync pairs (entry_22.S: one before transfer_to_handler's rfi, three in
    int_return) at the 604 profile's 35 + 4 cycles: 156 cycles, all of a 156-cycle call and
    a quarter of a 624-cycle one."""
    assert dougan1999.NULL_CALL_SYNC_PAIRS == 4
    share = dougan1999._sync_pairs_share
    assert share({"profile": "ppc604", "cycles_per_call": 156}) == pytest.approx(100)
    assert share({"profile": "ppc604", "cycles_per_call": 624}) == pytest.approx(25)
    null = dougan1999.null_syscall("604")
    assert null["profile"] == "ppc604"
    assert share(null) == pytest.approx(100 * 156 / null["cycles_per_call"])

# ------------------------------------------------------------------ pipes and switches

def test_null_call_breakdown_adds_up_and_matches_null_syscall():
    """The unoptimized 604 call: the same instructions and cycles as null_syscall's; its
    four lone syncs (2.1.51's SYNC) at 35 cycles are 140 of them (before session 30, four
    sync; isync pairs: 156); warm, no miss of any kind."""
    machine, options = dougan1999.CONFIGURATIONS[("unoptimized", "604")]
    b = dougan1999.null_call_breakdown(machine, **options)
    null = dougan1999.null_syscall(machine, **options)
    assert (b["instructions"], b["cycles"]) == (null["instructions_per_call"],
                                                null["cycles_per_call"])
    assert (b["syncs"], b["isyncs"]) == (4, 0)
    assert b["sync_cycles"] == 4 * 35
    assert b["sync_cycles"] + b["other_cycles"] == b["cycles"]
    assert (b["l1i_misses"], b["l1d_misses"], b["tlb_misses"]) == (0, 0, 0)


def test_the_603_hash_table_runs_lmbench_under_every_flush():
    """fork's COW faults after a search flush go through hash_page (hash_fault): the loop
    finishes under 2.1.51's and 2.2.0's flushes, and its steady round trip, which flushes
    nothing, costs the same under all three."""
    trips = {f: dougan1999.lat_pipe("603 hash table", bats=False, version="2.1.51",
                                    tlb_flush=f)["cycles"] for f in ("search", "context", "scan")}
    assert trips["search"] == trips["context"] == trips["scan"]


from emu.kernel.entry import P1_READ, P1_WRITE, P2_READ, P2_WRITE, _STUBS  # noqa: E402
from emu.kernel.ppc32 import ctx_to_vsid  # noqa: E402


def two_processes(machine, source):
    k, e = entry_for(machine)
    parent = dougan1999._pipes_between(e, source)
    child = [p for p in k.processes if p.parent is parent][0]
    return k, e, parent, child


HANDOFF = f"""
_start:
        cmpwi   0, r3, 0
        bne     child
        li      r3, {P1_READ}           # the parent reads first: the pipe is empty, it sleeps
        lis     r4, {DATA_BASE >> 16:#x}
        addi    r4, r4, 64
        li      r5, 4
        bl      sys_read
        mr      r30, r3
        lis     r4, {DATA_BASE >> 16:#x}
        lwz     r31, 64(r4)
        li      r3, 9
        li      r0, 1
        sc
child:
        lis     r4, {DATA_BASE >> 16:#x}
        lis     r8, 0x5a5a
        ori     r8, r8, 0x1234
        stw     r8, 0(r4)
        li      r3, {P1_WRITE}
        li      r5, 4
        bl      sys_write
        li      r3, {P2_READ}           # then waits on the other pipe for ever
        lis     r4, {DATA_BASE >> 16:#x}
        li      r5, 4
        bl      sys_read
""" + _STUBS


@pytest.mark.parametrize("machine", MACHINES)
def test_a_reader_sleeps_the_writer_runs_and_the_bytes_arrive(machine):
    """The parent's read of an empty pipe sleeps (interruptible_sleep_on, schedule,
    _switch22 to the child, which starts in user mode from its fork frame); the child's
    write copies 4 bytes into the pipe's page and wakes the parent; the child's read of the
    other pipe sleeps and the switch back returns into the parent's pipe_read, which copies
    the bytes to the parent's buffer (another physical page)."""
    k, e, parent, child = two_processes(machine, HANDOFF)
    r = e.run(parent, ELF_BASE, 0)
    assert r.status == 9
    assert r.gprs[30] == 4 and r.gprs[31] == 0x5a5a1234
    counts = k.ledger.counts
    assert counts["context_switches"] == 2 and e.kword("CONTEXT_SWTCH") == 2
    assert e.run_queue() == [parent]            # the child sleeps in its read of pipe 2
    assert parent.mm.pte(DATA_BASE) & ~0xFFF != child.mm.pte(DATA_BASE) & ~0xFFF


@pytest.mark.parametrize("machine", MACHINES)
def test_the_switch_loads_the_next_tasks_eight_user_segments(machine):
    """_switch22 reloads segment registers 0-7 with the next task's VSIDs (Ks = Kp = 1):
    after the switch back, the parent's, as the kernel model's VSIDs make them."""
    k, e, parent, child = two_processes(machine, HANDOFF)
    e.run(parent, ELF_BASE, 0)
    for n in range(8):
        assert e.regs.sr(n) == ctx_to_vsid(parent.mm.context, n << 28) | 0x60000000
    assert parent.mm.context != child.mm.context


def test_every_process_asleep_is_a_deadlock():
    k, e = entry_for("603 page table")
    source = f"""
        li r3, {P1_READ}
        lis r4, {DATA_BASE >> 16:#x}
        li r5, 1
        bl sys_read
""" + _STUBS
    p = e.spawn(source)
    r, w = e.pipe()
    e.install(p, P1_READ, r)
    e.install(p, P1_WRITE, w)
    with pytest.raises(KernelError, match="deadlock"):
        e.run(p, ELF_BASE)


@pytest.mark.parametrize("machine", MACHINES)
def test_lat_pipe_round_trip(machine):
    """Per round trip: two switches (kstat's count and the kernel model's), nothing
    charged outside the guest code, and no TLB miss on
    either processor once both processes have run their loop (the 603's entries are
    VSID-tagged: both processes' entries for the same addresses stay)."""
    from emu.kernel.entry import pipe_round_trip
    k, e = entry_for(machine)
    parent = dougan1999._pipes_between(e, pipe_round_trip(1))
    e.run(parent, ELF_BASE, 0, 10)
    before, kstat = k.ledger.counts["context_switches"], e.kword("CONTEXT_SWTCH")
    r = e.run(parent, ELF_BASE, 0, 10)
    assert k.ledger.counts["context_switches"] - before == 20
    assert e.kword("CONTEXT_SWTCH") - kstat == 20 and r.host_cycles == 0
    assert r.events.get("tlb_miss_exceptions", 0) == 0
    assert r.faults == 0


def test_qemus_same_page_drop_on_the_603_is_undone():
    """QEMU 5.0's tlbld drops the other way's entry for the same page whatever its VSID;
    the 603 keeps it. With the native hook's restore turned off (no QEMU array known) the
    two processes of lat_pipe, which use the same addresses, evict each other's text and
    buffer entries at every switch: 4 misses per round trip; with it, none."""
    from emu.kernel.entry import pipe_round_trip
    from emu.hw.softtlb import SW_TLB6
    misses = {}
    for restore in (True, False):
        k, e = entry_for("603 page table")
        assert e.tlb6 is not None, k.machine.soft_tlb.tlb6_candidates  # QEMU's array found
        if not restore:
            k.machine.soft_tlb.records[SW_TLB6] = 0
        parent = dougan1999._pipes_between(e, pipe_round_trip(1))
        e.run(parent, ELF_BASE, 0, 10)
        misses[restore] = e.run(parent, ELF_BASE, 0, 10).events["tlb_miss_exceptions"]
    assert misses == {True: 0, False: 40}


def test_both_processors_run_the_same_instructions():
    """The same guest path on both (the 603 takes no TLB miss in the loop): one round trip
    of lat_pipe, 2,578 instructions, a 64 KB chunk of bw_pipe the same on both. By hand
    from the 1,888 of the fixed-cost model (issue 30, Deliver 4): per round trip two
    sleeps, two schedules, two wake-ups of a sleeper and two of an empty queue
    (routines/ppc32/sched_22.S: sleep_on22 58 and schedule22 157 instructions, where the
    Python-driven path ran 21 in sleep_on22 and its stub; a wake-up of one sleeper 87, was
    8; of an empty ring 22, was 3), and int_return 10 fewer per switch: switch_to turns
    interrupts off before _switch22, so the frame it pushes has no EE and int_return skips
    the lost-interrupt and bottom-half tests. 1888 + 2 x 194 + 2 x 79 + 2 x 19 - 2 x 10 =
    2452; since session 30 sys_read22 and sys_write22 are bodies of their own (the li, li, b
    that led into a shared one gone: 3 a read, 2 a write) and sys_write takes the inode's
    i_sem around f_op->write as 2.2.0's does; the semaphores' down and up are semaphore.h's
    inline test around misc.S's atomic_dec_return / atomic_inc_return, out of line (addi,
    bl, 6 in the routine: lwarx, subi, stwcx., bne, mr, blr; cmpwi, the branch: 10 each,
    where the model had 5: a load, an add, a store, a test; pipe_write's two at its end had
    no test: 3 each). By hand, a write: sys_write's two (20), r27-r30 saved and restored
    (8), buf and count moved to r28 and r29 (2), the call's arguments from them (2 more),
    its result kept across up (2); pipe_write's four, the first two 5 more each, the last
    two 7 more: - 2 x 3 + 2 x (-2 + 20 + 8 + 2 + 2 + 2 + 5 + 5 + 7 + 7) = 2558 (2466 with
    the i_sem and the atomics as a load, an add, a store). The four copies' access_ok as
    uaccess.h has it (tss.fs against KERNEL_DS, then n and the address against 0x80000000:
    lwz, cmpwi, beq, lis, cmplw, bgt, subf, cmplw, bgt, 9) where the model ran 2.4's
    __range_ok against addr_limit (7): 4 x 2 more, 2566. Since the kernel's words sit where
    2.2.0's image puts them (emu.kernel.kdata), no two in one object share a lis: schedule's
    in_interrupt(), bottom-half and tq_scheduler tests load five words from four objects
    with a lis each, where one lis served all five: 4 more a schedule, 2 a round trip, 2574.
    The four copies are string.S's own __copy_tofrom_user (copy_tofrom_user_22.S), where
    the model ran memcpy32: a byte's copy is its 16 instructions (srwi., two addi, li r3,0,
    beq; cmplwi, blt; cmpwi, beqlr, mtctr, two addi, lbzu, stbu, bdnz, blr) against
    memcpy32's 15 (no li): 4 more a round trip, 2578."""
    a, b = dougan1999.lat_pipe("603 page table"), dougan1999.lat_pipe("604")
    assert a["instructions"] == b["instructions"] == \
        1888 + 2 * 194 + 2 * 79 + 2 * 19 - 20 - 2 * 3 + 2 * (
            -2 + 20 + 8 + 2 + 2 + 2 + 5 + 5 + 7 + 7) + 4 * (9 - 7) + 2 * 4 + 4 == 2578
    assert a["tlb_misses"] == b["tlb_misses"] == 0
    assert dougan1999.bw_pipe("603 page table")["instructions"] == \
        dougan1999.bw_pipe("604")["instructions"]


def test_lat_ctx_is_half_a_round_trip_less_the_pipe_alone():
    c = dougan1999.lat_ctx("604")
    assert c["cycles"] == pytest.approx(c["round_trip_cycles"] / 2 - c["overhead_cycles"])
    assert 0 < c["cycles"] < c["round_trip_cycles"] / 2


def test_bw_pipe_moves_the_bytes_a_page_at_a_time():
    """Per 64 KB chunk: 16 pipe-fulls, each copied in and out by __copy_tofrom_user's loop (8 bytes
    and 5 instructions an iteration: at least 16 x 2 x 512 x 5 instructions), each with two
    schedules and two wake-ups, all guest code (nothing charged from the fixed-cost
    table)."""
    b = dougan1999.bw_pipe("604")
    assert b["instructions"] > 16 * 2 * 512 * 5
    assert b["fixed_cycles"] == 0
    assert b["mb_s"] == pytest.approx(65536 * 133e6 / b["cycles"] / 2 ** 20)


def test_bw_pipe_is_steady_after_the_warm_up():
    """bw_pipe's default (1, 2) chunks stand for longer runs: every 64 KB chunk after the
    warm-up costs the same cycles, instructions and misses, so (1, 2) and (2, 4) give the
    same."""
    unoptimized = dougan1999.CONFIGURATIONS[("unoptimized", "604")]
    for machine, options in (("603 hash table", {}), unoptimized):
        assert dougan1999.bw_pipe(machine, chunks=(1, 2), **options) == \
            dougan1999.bw_pipe(machine, chunks=(2, 4), **options)


def test_bw_file_rd_is_steady_from_its_first_timed_pass():
    """bw_file_rd's default passes (0, 1): BENCH's loop run no times and once after the
    64 KB warm-up read; every pass streams the file through the 16 KB L1 D, so the pass
    timed that way costs what one after another pass does, (1, 2), to the cycle (on a
    256 KB file here; the chapter's 8 MB measured the same on all three machines)."""
    for machine in ("604", "603 page table"):
        assert dougan1999.bw_file_rd(machine, passes=(0, 1), size=256 << 10) == \
            dougan1999.bw_file_rd(machine, passes=(1, 2), size=256 << 10)


def test_a_round_trip_depends_on_where_the_token_falls_in_the_pipes_page():
    """2.2.0's pipe never moves an emptied pipe's start back, so a token moves along the
    page: a short run is not the average. The defaults (PIPE_TRIPS, CTX_TRIPS) are within
    0.6% of runs many times as long; the short runs the chapter once used are not (the 604: lat_pipe at (2, 4) 4,448 cycles a trip, 6.7% above 4,170; lat_ctx at (5, 10)
    1,319 cycles a switch, 10% above 1,196). Re-pinned in session 30 (dougan3): the token a
    stack local and the files tables files_cache objects moved lat_ctx at CTX_TRIPS to
    1,190.0 against 1,196.4 (0.53%; was 1,106.0 against 1,108.6, within 0.5%) and at
    (5, 10) to 10% above (was 24%: > 1.2); lat_pipe at (2, 4) was 4,224 against 4,114,
    2.7% above (dougan2, after the copies' access_ok; 4,094, 4% above, before). Re-pinned
    in session 30 (dougan5) from 0.5%: with the kernel's words spread over their objects'
    places (emu.kernel.kdata) instead of one block in sets 0-1, the token's line meets them
    on more sets as it moves: lat_pipe at PIPE_TRIPS 4,075.8 against 4,121.2 (1.1% below;
    was 4,163.2 against 4,169.7, 0.16%)."""
    pipe, long_pipe = (dougan1999.lat_pipe("604", counts=c)["cycles"]
                       for c in (dougan1999.PIPE_TRIPS, (1024, 2048)))
    assert pipe == pytest.approx(long_pipe, rel=0.012)
    assert dougan1999.lat_pipe("604", counts=(2, 4))["cycles"] > 1.02 * long_pipe
    ctx, long_ctx = (dougan1999.lat_ctx("604", counts=c)["cycles"]
                     for c in (dougan1999.CTX_TRIPS, (512, 1024)))
    assert ctx == pytest.approx(long_ctx, rel=0.006)
    assert dougan1999.lat_ctx("604", counts=(5, 10))["cycles"] > 1.05 * long_ctx


def test_pipe_workloads_are_deterministic():
    assert dougan1999.lat_pipe("603 page table") == dougan1999.lat_pipe("603 page table")
    assert dougan1999.bw_pipe("604") == dougan1999.bw_pipe("604")


# ------------------------------------------------------------------ the kernel without BATs

def test_without_bats_the_kernel_loads_tlb_entries_and_runs_the_same_path():
    """nobats (603, page-table walk): the kernel's first pass takes TLB misses for its own
    pages (the handlers' 2.2.0 check: no _PAGE_USER needed from the supervisor), no access
    is a BAT translation, and the steady null call is the same 202 instructions."""
    k, e = entry_for("603 page table")
    k2 = dougan1999.kernel("603 page table")
    e2 = Entry(k2, bats=False)
    runs = {}
    for name, entry in (("bats", e), ("nobats", e2)):
        p = entry.spawn(LAT_SYSCALL_NULL)
        first = entry.run(p, ELF_BASE, 1)
        a, b = entry.run(p, ELF_BASE, 10), entry.run(p, ELF_BASE, 20)
        runs[name] = (first, (b.instructions - a.instructions) / 10, b)
    assert runs["nobats"][0].events["tlb_miss_exceptions"] > \
        runs["bats"][0].events["tlb_miss_exceptions"]
    assert "bat_translations" not in runs["nobats"][2].events
    assert runs["nobats"][1] == runs["bats"][1] == 202
    assert runs["nobats"][2].events["tlb_mirror_divergences"] == 0
    # segment 0 is the kernel's: VSID 0, Ks = 0, Kp = 1
    assert e2.regs.sr(0) == 0x20000000


def test_without_bats_kernel_and_user_pages_compete_for_the_tlb():
    """48 user pages and a null call per pass: with BATs every pass hits in the TLB; without,
    the kernel's pages share classes with the user's and both miss on every pass."""
    with_bats = dougan1999.kernel_tlb_conflict(48, bats=True)
    without = dougan1999.kernel_tlb_conflict(48, bats=False)
    assert with_bats["tlb_misses_per_pass"] == 0
    assert without["tlb_misses_per_pass"] > 4
    assert without["cycles_per_pass"] > with_bats["cycles_per_pass"]
    assert without["instructions_per_pass"] > with_bats["instructions_per_pass"]   # handlers


@pytest.mark.parametrize("machine", ["604", "603 hash table"])
@pytest.mark.parametrize("version, per_call", [("2.2.0", 202), ("2.1.51", 195)])
def test_without_bats_a_hashed_mmu_hashes_the_kernels_pages_on_demand(machine, version,
                                                                      per_call):
    """nobats on a hashed MMU: a kernel access that finds no HPTE goes from the DSI / ISI
    prologue to 2.2.0's hash_page (hash_kernel22) and straight back; the kernel's HPTEs
    have VSID 0, PP 0 for its data (supervisor only) and PP 3 for its text (read only:
    mapin_ram's _PAGE_USER without _PAGE_RW), stay in the table, and the steady null call is
    the same 202 instructions (195 on 2.1.51's path, the unoptimized kernel's: its
    prologue takes the kernel sp from the thread whether or not the kernel is in a BAT,
    and its SYNCs are lone syncs).
    With BATs the kernel makes none."""
    from emu.hw import mmu
    for bats in (True, False):
        k = dougan1999.kernel(machine)
        e = Entry(k, bats=bats, version=version)
        p = e.spawn(LAT_SYSCALL_NULL)
        e.run(p, ELF_BASE, 1)
        made = e.kernel_reloads
        hpte = mmu.find_pte(k.machine.read, k.arch.sdr1, 0, e.base + 0xc00)
        task = mmu.find_pte(k.machine.read, k.arch.sdr1, 0, e.task(p))
        a, b = e.run(p, ELF_BASE, 10), e.run(p, ELF_BASE, 20)
        assert (b.instructions - a.instructions) / 10 == per_call
        if bats:
            assert made == 0 and hpte is None and task is None
            continue
        assert made > 0 and e.kernel_reloads == made       # none after the first call
        assert hpte is not None and hpte[3] & 3 == 3         # the entry code, text: PP 3
        assert task is not None and task[3] & 3 == 0         # the task (data): PP 0
        assert e.regs.sr(0) & 0x60FFFFFF == 0x20000000       # VSID 0, Ks 0, Kp 1


def test_without_bats_the_603_hash_table_takes_the_same_tlb_misses():
    """The 603 searching a hash table loses the same TLB entries to the kernel as the 603
    walking the page table (the TLB is the same); its handler is the cheaper of the two per
    miss here, every search hitting in the primary group."""
    walk = dougan1999.kernel_tlb_conflict(48, bats=False)
    hashed = dougan1999.kernel_tlb_conflict(48, bats=False, machine="603 hash table")
    assert hashed["tlb_misses_per_pass"] == walk["tlb_misses_per_pass"] > 4
    assert hashed["kernel_hptes_per_pass"] == 0 < hashed["kernel_hptes_warmup"]


def test_the_unoptimized_configuration_changes_table_3s_loops_little():
    """Re-pinned in session 30 (dougan5): with the kernel's words where 2.2.0's image puts them
    (emu.kernel.kdata: seven objects' data, each in pages of its own, none in L1 D set 0
    nominally) the 603's pipe round trip without BATs takes 9 TLB misses (was 0: the
    words' pages compete in its 64-entry TLB; the 604's 128 entries hold them), and 2.1.51,
    whose files table is no longer beside the kernel's words in set 0, gains most: 604 / 603
    switch 6.86 / 4.52 us against 2.2.0's 8.75 / 5.38 (-22% / -16%; were 8.43 / 5.13
    against 8.95 / 5.57), pipe 26.1 / 18.5 against 30.6 / 20.9 (-15% / -11%): within 25%,
    not 9%. Before: Linux 2.1.51's entry and exit, the kernel through the TLB and the hash table, search
    flushing, the 603 reloading from a hash table: the four loops take no TLB miss in their
    steady state either way (the 603's counts) and run a few instructions fewer, so their
    times stay within 9% (the switch, half a round trip less the pipe alone, moves most,
    though its path is shorter: the two kernels' structures sit at other addresses in the
    caches). Re-pinned in session 30 (dougan3) from 5% (the switch then 3.9% on the 603):
    with the token a stack local and the files tables files_cache objects, 2.2.0's fd
    array is a page of its own (fd[3..6] in L1 D set 0, beside the task unions' first
    lines) and 2.1.51's inline in its object, so 2.1.51 now runs faster: 604 / 603 null
    call -4.7% / -5.0%, switch -5.8% / -8.0%, pipe -4.8% / -5.5%, bandwidth -0.9% / -1.4%. By hand, per pipe round trip: four system calls of 3 instructions
    fewer each on 2.1.51's path, and two switches of 3 fewer (7 segment registers reloaded,
    not 8, when segment 0 is the kernel's): 2452 - 12 - 6; 2.1.51's SYNC a lone sync (four
    isyncs fewer a call, five a switch: _switch22's two, int_return's three): - 4 x 4 - 2 x 5;
    its scheduler (routines/ppc32/sched_22.S, LINUX_2_1_51): two sleeps of 4 more (the
    null test, wait.next = NULL), two wake-ups of a sleeper of 3 fewer (add_to_runqueue's
    counter test without reschedule_idle's policy test), two schedules of 6 fewer (its
    preamble 42 instructions against 48, goodness 10 against 16, the timeout's two tests
    and r26 saved and restored 4 + 2 more): + 8 - 6 - 12; its pipe code (pipe_22.S with
    LINUX_2_1_51): a read 1 more (sys_read's dentry and inode tests 4, the four-argument
    call 2, pipe_read's entry without the f_pos test 4 fewer, no `!count` test 2 fewer, the
    signal test 1 more), a write 40 fewer (sys_write's dentry and inode tests 4 more, its
    arguments the same four moves, pipe_write's entry 4 fewer and none of its four
    semaphore operations, 10 + 10 + 10 + 10 fewer): + 2 x 1 - 2 x 40. Before session 30:
    2434 (against 2452). Both kernels' copies run the same access_ok (8 more a round trip
    on each): 2434 (was 2426). With the kernel's words where the images put them
    (emu.kernel.kdata) a lis each: 2.2.0's two schedules 4 more each, 2.1.51's 3 (its
    need_resched store, then local_irq_count, bh_active and bh_mask: a lis each, the
    tq_scheduler test not in its path): - 2 x 4 + 2 x 3, 2440. Both kernels' copies
    string.S's own __copy_tofrom_user, a li more a copy than memcpy32: 2444."""
    t3 = dougan1999.table3_configurations()
    columns = ["null_syscall_us", "ctx_switch_us", "pipe_latency_us", "pipe_bandwidth_mb_s"]
    for processor in ("604", "603"):
        before, after = t3.loc[("optimized", processor)], t3.loc[("unoptimized", processor)]
        assert (before["entry"], after["entry"]) == ("2.2.0", "2.1.51")
        assert after["null_instructions"] == before["null_instructions"] - 3 - 4 == 195
        # the 603's TLB misses without BATs run its hash-table handler (tlbmiss_603_hash.S):
        # 19 instructions each here (171 for 9; not counted by hand)
        handler = 19 * after["pipe_tlb_misses"] if processor == "603" else 0
        assert after["pipe_instructions"] - handler == \
            before["pipe_instructions"] - 12 - 6 - 16 - 10 + 8 - 6 - 12 + 2 - 80 - 2 * 4 \
            + 2 * 3 == 2444
        for column in columns:
            assert after[column] == pytest.approx(before[column], rel=0.25)
    assert t3.loc[("unoptimized", "603"), "null_tlb_misses"] == 0
    assert t3.loc[("unoptimized", "603"), "pipe_tlb_misses"] == 9
    assert t3.loc[("unoptimized", "604"), "pipe_tlb_misses"] == 0
    unopt = dougan1999.lat_pipe("603 hash table", bats=False)
    opt = dougan1999.lat_pipe("603 hash table")
    # 2.2.0 without BATs: 3 TLB misses a round trip since dougan5 (was 0), the kernel's
    # words on pages of their own; its handler 18 instructions each here (not by hand)
    assert unopt["tlb_misses"] == 3 and opt["tlb_misses"] == 0
    assert opt["instructions"] - (unopt["instructions"] - 18 * unopt["tlb_misses"]) == 2 * 3


def test_a_cold_null_call_runs_the_same_path_and_misses_what_it_touches():
    """cold_null_syscall on the 604: the warm run and the cold one (every cache and both
    TLBs emptied) run the same instructions. Warm, nothing misses in the TLBs; cold, with
    the kernel in a BAT, the only translated page is the program's code (it touches no data
    page): one ITLB miss. Without BATs the kernel's code, stack and data pages miss too.
    Each miss and each cold line costs cycles: the cold run is dearer in both."""
    bats = dougan1999.cold_null_syscall("604", flush="context")
    nobats = dougan1999.cold_null_syscall("604", bats=False, flush="search", version="2.1.51")
    for run in (bats, nobats):
        assert run["cold_instructions"] == run["warm_instructions"]
        assert run["warm_tlb_misses"] == 0
        assert run["cold_extra_cycles"] == run["cold_cycles"] - run["warm_cycles"] > 0
    assert bats["cold_tlb_misses"] == 1
    assert nobats["cold_tlb_misses"] > 1
    assert dougan1999.cold_null_syscall("604", flush="context") == bats     # deterministic


@pytest.mark.parametrize("machine", MACHINES)
def test_a_null_call_on_2_1_51s_path_by_hand(machine):
    """Linux 2.1.51's path (entry_22.S with LINUX_2_1_51): the prologue tests SRR1[PR] and
    loads tss.ksp (35, and 4 more to transfer_to_handler: 39), transfer_to_handler without
    2.2's MSR_POW clear (2), SPRG2 (1) and stack check (5): 43; DoSyscall 30; int_return's
    global need_resched (+1), signal & ~blocked (+1) and no SPRG2 (-2): 82; head.S's SYNC a
    lone sync in 2.1.51 (its function-like macro written bare: entry_22.S's SYNC_HEAD), one
    isync fewer in transfer_to_handler (42) and three in int_return (79). Before session 30:
    199. The program's result is the same."""
    from emu.kernel.entry import NULL_CALL_INSTRUCTIONS_21
    k = dougan1999.kernel(machine)
    e = Entry(k, version="2.1.51")
    p = e.spawn(LAT_SYSCALL_NULL)
    e.run(p, ELF_BASE, 1)
    a, b = e.run(p, ELF_BASE, 10), e.run(p, ELF_BASE, 20)
    assert sum(NULL_CALL_INSTRUCTIONS_21.values()) == 5 + 39 + 42 + 30 + 79 == 195
    assert (b.instructions - a.instructions) / 10 == 195
    assert b.status == 0 and b.faults == 0


def test_2_1_51s_prologue_takes_the_kernel_stack_from_the_thread():
    """On 2.1.51's path the frame is below tss.ksp (SPRG2 is not used): a stale SPRG2 changes
    nothing, and getppid still returns the parent's pid."""
    from emu.hw.softtlb import SPRG2
    from emu.kernel.entry import Entry as E
    k = dougan1999.kernel("603 page table")
    e = E(k, version="2.1.51")
    p = e.spawn(f"""
        li r0, 64
        sc
        mr r31, r3
        li r3, 0
{exit_with("")}""")
    e.run(p, ELF_BASE)
    e.regs.set_spr(SPRG2, 0x1234)
    r = e.run(p, ELF_BASE)
    assert r.gprs[31] == 1                          # init's pid: the spawned task's parent


def test_an_unknown_entry_version_is_refused():
    k = dougan1999.kernel("604")
    with pytest.raises(ValueError, match="version"):
        Entry(k, version="2.0")


# ------------------------------------------------------------------ schedule and wake_up

def _guest_call(e, name, *args, current, prev=None):
    """Call one of sched_22.S's routines in real mode with r2 = ``current`` (and r31 =
    ``prev`` for goodness22): the Run and r3."""
    from unicorn import ppc_const
    uc = e.machine.uc
    uc.reg_write(ppc_const.UC_PPC_REG_2, current)
    if prev is not None:
        uc.reg_write(ppc_const.UC_PPC_REG_31, prev)
    run = e.machine.call(name, *args, real_mode=True)
    return run, uc.reg_read(ppc_const.UC_PPC_REG_3)


def _two_tasks():
    from emu.kernel.entry import TASK_STATE
    _, e = entry_for("603 page table")
    a, b = e.spawn(exit_with("li r3, 0"), "a"), e.spawn(exit_with("li r3, 0"), "b")
    e._add_to_runqueue(a)
    e._word(e.task(b) + TASK_STATE, 1)                  # b sleeps, on no run queue
    return e, a, b


def test_wake_up_process_puts_a_sleeper_at_the_front_of_the_run_queue():
    """wake_up_process22 by hand (called in real mode: the saved MSR has no EE): the frame
    5, mr 1, save_flags and the call of cli22 2 + 8, state 2, the run-queue test 3,
    add_to_runqueue 7 and nr_running++ 4, reschedule_idle with equal counters 8 (policy 3,
    counters 5), restore_flags without EE 2 + 3, the frame back 6: 51; a task already
    queued: 5 + 1 + 10 + 2 + 3 + 5 + 6 = 32."""
    from emu.kernel.entry import TASK_FIELDS
    e, a, b = _two_tasks()
    run, _ = _guest_call(e, "wake_up_process22", e.task(b), current=e.task(a))
    assert run.instructions == 51
    assert e.run_queue() == [b, a] and e.kword("NR_RUNNING") == 2
    assert e.machine.read_word(e.task(a) + TASK_FIELDS["NEED_RESCHED"]) == 0
    run, _ = _guest_call(e, "wake_up_process22", e.task(b), current=e.task(a))
    assert run.instructions == 32 and e.run_queue() == [b, a]


def test_a_woken_task_with_more_than_three_ticks_more_preempts():
    """reschedule_idle: p->counter > current->counter + 3 sets current->need_resched."""
    from emu.kernel.entry import TASK_FIELDS
    e, a, b = _two_tasks()
    e._word(e.task(b) + TASK_FIELDS["COUNTER"], 24)     # a has DEF_PRIORITY, 20
    _guest_call(e, "wake_up_process22", e.task(b), current=e.task(a))
    assert e.machine.read_word(e.task(a) + TASK_FIELDS["NEED_RESCHED"]) == 1


def test_goodness_is_the_counter_plus_the_priority_and_one_for_the_same_mm():
    """goodness22 by hand, SCHED_OTHER with ticks left: 20 + 20, and + 1 for prev's own
    mm; 16 instructions (the yield and policy tests 5, the counter 3, the mm test 4,
    the priority 2, mr and blr 2), 17 with the + 1; no ticks left: 0 in 8 + 2."""
    from emu.kernel.entry import TASK_FIELDS
    e, a, b = _two_tasks()
    ta, tb = e.task(a), e.task(b)
    run, weight = _guest_call(e, "goodness22", tb, current=ta, prev=ta)
    assert (run.instructions, weight) == (16, 40)
    run, weight = _guest_call(e, "goodness22", ta, current=ta, prev=ta)
    assert (run.instructions, weight) == (17, 41)
    e._word(tb + TASK_FIELDS["COUNTER"], 0)
    run, weight = _guest_call(e, "goodness22", tb, current=ta, prev=ta)
    assert (run.instructions, weight) == (10, 0)


def test_wake_up_walks_the_wait_queue_ring():
    """__wake_up by hand: a queue never used (*q = 0) 5 instructions; used and empty (*q
    the head, q - 4) 22: the tests 5, the frame 6, head and next 2, the loop's test 2, the
    frame back 7."""
    e, a, _ = _two_tasks()
    q = e.machine.alloc(16)
    run, _ = _guest_call(e, "wake_up22", q + 8, current=e.task(a))
    assert run.instructions == 5
    e._word(q + 8, q + 4)
    run, _ = _guest_call(e, "wake_up22", q + 8, current=e.task(a))
    assert run.instructions == 22


def test_schedule_picks_by_goodness_not_by_queue_order():
    """Three processes: the sleeper's schedule() walks the run queue and takes the task
    with the larger counter, though it stands second in the queue."""
    from emu.kernel.entry import TASK_FIELDS, pipe_round_trip
    _, e = entry_for("603 page table")
    parent = dougan1999._pipes_between(e, pipe_round_trip(1))
    idle = e.fork(parent, ELF_BASE + 0x1000)        # never chosen: below, no ticks left
    e._word(e.task(idle) + TASK_FIELDS["COUNTER"], 0)
    e._word(e.task(parent) + TASK_FIELDS["COUNTER"], 10)   # as before the second fork,
    # which halved it: a woken child with 10 would otherwise preempt (reschedule_idle),
    # and int_return's schedule() from need_resched is what the model refuses
    assert e.run_queue()[0] is idle
    r = e.run(parent, ELF_BASE, 0, 2)
    assert r.status == 0 and idle in e.run_queue()


def test_a_pipe_round_trip_runs_the_sync_instructions_counted_by_hand():
    """dougan1999.PIPE_TRIP_SYNCS: every sync executed in the kernel during one more round
    trip of lat_pipe (a code hook on the 604, whose kernel runs at EA = physical)."""
    from unicorn import UC_HOOK_CODE

    from emu.kernel.entry import pipe_round_trip
    _, e = entry_for("604")
    parent = dougan1999._pipes_between(e, pipe_round_trip(1))
    e.run(parent, ELF_BASE, 0, 3)
    seen = []

    def hook(uc, address, size, data):
        if address < ELF_BASE and bytes(uc.mem_read(address, 4)) == bytes.fromhex("7c0004ac"):
            seen.append(address)
    e.machine.uc.hook_add(UC_HOOK_CODE, hook)
    e.machine.uc.ctl_flush_tb()
    e.run(parent, ELF_BASE, 0, 3)
    three = len(seen)
    e.run(parent, ELF_BASE, 0, 4)
    assert len(seen) - 2 * three == dougan1999.PIPE_TRIP_SYNCS == 46


#: the kernel's fixed costs (emu.kernel.costs), each at its high, CPI at its low
def _kernel_costs_moved():
    from emu.kernel import costs
    return {name: (low if name == "kernel:costs.CPI" else high)
            for name, _, low, high, _ in costs.ranges()}


@pytest.mark.parametrize("unit, machine, options", [
    ("lat_ctx", "604", {}),                  # its lat_pipe too
    ("bw_pipe", "603 page table", {}),
    ("null_syscall", "603 hash table", {"bats": False, "version": "2.1.51",
                                        "tlb_flush": "search"})])
def test_the_kernels_fixed_costs_of_a_lmbench_set_up_cannot_move_its_result(
        unit, machine, options):
    """What lets the scorecard reuse these runs when a kernel cost moves
    (emu.hw.estimates.setup_only): the costs a LMBench program's spawn, fork and warm-up
    charge go to the ledger alone (one core: no task clock; the model has no timer), and
    the result is made of the runs after them. Every kernel cost moved at once (each at
    its high, CPI at its low): read in the set-up, the result the same to the bit; the
    runs keep them as set-up reads (emu.run.reuse.SETUP), and moving one reuses the run."""
    import pickle

    from emu.hw import estimates
    from emu.run import reuse
    function = getattr(dougan1999, unit)
    memo = reuse.Memo()
    with reuse.recording(memo), estimates.watch() as nominal_reads:
        nominal = function(machine, **options)
    moved = _kernel_costs_moved()
    with estimates.moved(moved) as moved_reads:
        again = function(machine, **options)
    read = {n for n in moved_reads.read if n.startswith("kernel:costs.")}
    assert len(read) >= 10 and "kernel:costs.CPI" in read     # the set-up charged them
    assert pickle.dumps(again) == pickle.dumps(nominal)
    kept = [reads for entries in memo.entries.values() for reads, _, _ in entries]
    assert all(reads[n] == reuse.SETUP for reads in kept for n in reads
               if n.startswith("kernel:costs."))
    assert nominal_reads.read == moved_reads.read
    runs = memo.runs
    with reuse.recording(memo), estimates.moved({"kernel:costs.fork": 5000}):
        function(machine, **options)
    assert memo.runs == runs                  # a set-up cost: reused
    with reuse.recording(memo), estimates.moved({next(n for n in nominal_reads.read
                                                     if n.endswith("memory.latency")): 99}):
        function(machine, **options)
    assert memo.runs > runs                   # a profile's latency: run again


@pytest.mark.parametrize("unit, args, options", [
    ("lat_ctx", ("604",), {}),               # its lat_pipe too
    ("bw_pipe", ("603 page table",), {}),
    ("null_syscall", ("603 hash table",), {"bats": False, "version": "2.1.51",
                                           "tlb_flush": "search"})])
def test_the_instruction_costs_of_a_set_up_cannot_move_its_result(unit, args, options):
    """What lets the scorecard reuse these runs when an instruction's cost moves
    (emu.run.costreads): the guest code of their set-up (the boot, a LMBench program's
    spawn, fork and warm-up, the idle task's run) runs on a machine whose clock restarts
    at every call with nothing in flight (costreads.clock_free), and the result is made of
    the runs after it. Every instruction cost the runs executed only in their set-ups,
    moved at once to its high, then to its low: the result the same to the bit; moving
    one of them reuses the run, moving one the measured runs execute runs it again."""
    import pickle

    from emu.book import ranges
    from emu.hw import estimates
    from emu.run import reuse
    function = getattr(dougan1999, unit)
    memo = reuse.Memo()
    with reuse.recording(memo):
        nominal = function(*args, **options)
    kept = [reads for entries in memo.entries.values() for reads, _, _ in entries]
    costs = {n for reads in kept for n in reads
             if ":costs." in n and not n.startswith("kernel:")}
    measured = {n for reads in kept for n, v in reads.items() if v != reuse.SETUP}
    set_up = costs - measured
    assert set_up and costs & measured
    table = ranges.catalog()
    for side in ("high", "low"):
        moved = {n: getattr(table[n], side) for n in set_up}
        with estimates.moved(moved):
            again = function(*args, **options)
        assert pickle.dumps(again) == pickle.dumps(nominal), side
    runs = memo.runs
    first, timed = (next(n for n in sorted(names) if table[n].high != table[n].value)
                    for names in (set_up, costs & measured))
    with reuse.recording(memo), estimates.moved({first: table[first].high}):
        function(*args, **options)
    assert memo.runs == runs                  # a set-up's cost: reused
    with reuse.recording(memo), estimates.moved({timed: table[timed].high}):
        function(*args, **options)
    assert memo.runs > runs                   # a measured run's: run again


USER_MISS_SOURCE = f"""
        lis r9, {DATA_BASE >> 16:#x}
        lis r8, 0x00c0
        ori r8, r8, 0xffee
        stw r8, 0x10(r9)
        lwz r31, 0x10(r9)
""" + exit_with("li r3, 3")


def _user_hash_miss(flush, bats=True, version="2.2.0"):
    """The store of USER_MISS_SOURCE once its page is mapped and its HPTE flushed (a search
    of the page, flush_range): the run's kernel instructions by symbol, the run, the slot
    the new HPTE took, and the kernel's reload count before and after."""
    from unicorn import ppc_const

    from emu.kernel.pgtable import PAGE_SIZE
    from emu.run import profiler
    k = dougan1999.kernel("604", flush=flush)
    e = Entry(k, bats=bats, version=version)
    p = e.spawn(USER_MISS_SOURCE)
    e.run(p, ELF_BASE)                             # the faults: text, data
    m = k.machine
    m.uc.reg_write(ppc_const.UC_PPC_REG_MSR, 0x1000)     # the kernel's routine: real mode
    if flush == "hashpte":                          # 2.4's flush_hash_pages: the bit too
        k.arch.flush_ptes(p.mm, DATA_BASE, p.mm.ptep(DATA_BASE) & ~(PAGE_SIZE - 1), 1)
    else:                                           # flush_hash_page's search
        k.arch.flush_range(p.mm, DATA_BASE, DATA_BASE + PAGE_SIZE)
    assert k.arch.find_hpte(p.mm, DATA_BASE) is None
    reloads = e.kword("HTAB_RELOADS")
    profiler.count_instructions(m)
    try:
        r = e.run(p, ELF_BASE)
        by_symbol = profiler.cycles_by_symbol(m, profiler.instruction_counts(m)[0])
    finally:
        profiler.count_instructions(m, on=False)
    secondary, slot, _ = k.arch.find_hpte(p.mm, DATA_BASE)
    return by_symbol, r, 8 * secondary + slot, (reloads, e.kword("HTAB_RELOADS"))


@pytest.mark.parametrize("flush", ["context", "search"])
def test_a_user_hash_miss_on_the_604_runs_2_2_0s_hash_page_as_guest_code(flush):
    """A user store whose page has a Linux PTE but no HPTE: the CPU's search finds nothing,
    the DSI's prologue takes the frame from SPRG2 and calls hash_page (hash_page_user22),
    which makes the HPTE and returns from the exception straight to the store: no fault
    reaches do_page_fault or Python, htab_reloads counts one. Instructions by hand
    (entry_22.S): the prologue from user mode 30 + mfspr DSISR 1 + 2.2.0's test and call 7
    (DataAccess22 with its da_frame: 38); hash_page_user22 to create_hpte's bl 25 (the
    Linux PTE 12, accessed and dirty 4, r8 r9 r12 kept 3, the VSID 3, the reason 3: a
    "no HPTE" DSI takes the empty-slot search) and from the bl 35 (the bl, r8 r9 r12 3,
    SYNC's isync, 2.2.0's two nops, htab_reloads++ 6, the return 21 with its SYNC and rfi);
    create_hpte with the page dirty and writable, user, an empty slot k of the primary
    group: 25 + 3 (k + 1) + 2 + 5 = 35 + 3k (its loop: lwzu, rlwinm., bdnzf a slot)."""
    by_symbol, r, slot, (before, after) = _user_hash_miss(flush)
    assert r.status == 3 and r.gprs[31] == 0x00c0ffee
    assert r.faults == 0                              # nothing for do_page_fault
    assert r.events["htab_misses"] == 1 and r.events["exception_2"] == 1
    assert after - before == 1
    assert slot < 8                                   # a primary slot
    assert by_symbol["DataAccess22"] + by_symbol["da_frame"] == 38
    miss = {s: n for s, n in by_symbol.items() if dougan1999.part_of(s) ==
            "TLB and hash-table misses"}
    assert miss["create_hpte"] == 35 + 3 * slot
    assert sum(miss.values()) == 38 + 25 + 35 + 35 + 3 * slot
    assert "do_page_fault22" not in by_symbol


def test_a_user_hash_miss_on_the_603_runs_the_same_dataaccess_and_hash_page():
    """The same store on the 603 searching a hash table (2.2.0's flush): the CPU's data TLB
    miss runs the store handler, whose search of both groups fails (66) and whose way out
    (15: DSISR, DAR, TGPR off) leaves for 0x300, where the stub (1) branches to
    DataAccess22: the same 38 + 25 + 35 + 35 + 3k as the 604's (exception_22.S's macros),
    guest code, no fault, htab_reloads + 1; the retried store misses in the TLB again and
    the handler finds the new HPTE in primary slot k (18 + 3k)."""
    from unicorn import ppc_const

    from emu.kernel.pgtable import PAGE_SIZE
    from emu.run import profiler
    k = dougan1999.kernel("603 hash table", tlb_flush="context")
    e = Entry(k)
    p = e.spawn(USER_MISS_SOURCE)
    e.run(p, ELF_BASE)                             # the faults: text, data
    m = k.machine
    m.uc.reg_write(ppc_const.UC_PPC_REG_MSR, 0x1000)
    k.arch.flush_range_search(p.mm, DATA_BASE, DATA_BASE + PAGE_SIZE)   # the HPTE, the TLB
    assert k.arch.find_hpte(p.mm, DATA_BASE) is None
    reloads = e.kword("HTAB_RELOADS")
    profiler.count_instructions(m)
    try:
        r = e.run(p, ELF_BASE)
        by_symbol = profiler.cycles_by_symbol(m, profiler.instruction_counts(m)[0])
    finally:
        profiler.count_instructions(m, on=False)
    secondary, slot, _ = k.arch.find_hpte(p.mm, DATA_BASE)[:3]
    assert r.status == 3 and r.gprs[31] == 0x00c0ffee and r.faults == 0
    assert e.kword("HTAB_RELOADS") - reloads == 1 and not secondary
    assert by_symbol["DataAccess22"] + by_symbol["da_frame"] == 38
    assert by_symbol["create_hpte"] == 35 + 3 * slot
    handler = sum(n for s, n in by_symbol.items() if s.startswith(("dtlb_store_miss_603h",
                                                                   "dshash_", "dmiss_")))
    assert handler == (66 + 15) + (18 + 3 * slot)
    # the flush's tlbie emptied the data page's congruence class in the ITLB too, where
    # the text page sits (EA bits 15-19 both 0): its fetch misses and finds its HPTE (18)
    fetch = sum(n for s, n in by_symbol.items() if s.startswith(("itlb_miss_603h",
                                                                 "ihash_")))
    assert fetch == 18
    assert by_symbol["(unknown)"] == 1                # the stub at 0x300, outside a program
    path = sum(n for s, n in by_symbol.items() if dougan1999.part_of(s) ==
               "TLB and hash-table misses")
    assert path == handler + fetch + 38 + 25 + 35 + 35 + 3 * slot
    assert "do_page_fault22" not in by_symbol


def test_a_user_hash_miss_under_2_1_51_and_2_4():
    """The same miss on 2.1.51's path without BATs (the unoptimized kernel): its prologue
    takes 5 instructions more from user mode (35: SRR1[PR] and tss.ksp), then mfspr DSISR
    and the kernel's test (andis., beq, mfspr DAR, rlwinm., bne: not segment 0) send the
    page to 2.2.0's test and call, out of line (7); its hash_page reads current->mm->pgd (2
    more before the bl) and has no nops and no htab_reloads (8 fewer after it) and its two
    SYNCs are lone syncs (2 isyncs fewer; before session 30, 35 - 8): 35 + 1 + 5, 7, 25 + 2,
    35 - 8 - 2. With 2.4's flush (flush="hashpte": its flush_hash_pages clears
    _PAGE_HASHPTE) the PTE gets the bit again (1 more) and create_hpte is told the old PTE
    in place of the reason's test (3 fewer): 38, 25 + 1 - 3, 35."""
    by_symbol, r, slot, (before, after) = _user_hash_miss("search", bats=False,
                                                          version="2.1.51")
    miss = sum(n for s, n in by_symbol.items()
               if dougan1999.part_of(s) == "TLB and hash-table misses")
    assert r.faults == 0 and after == before            # 2.1.51 counts no reloads
    assert by_symbol["DataAccess22"] + by_symbol["da21_sp"] == 35 + 1 + 5
    assert miss - by_symbol["create_hpte"] == (35 + 1 + 5) + 7 + (25 + 2) + (35 - 8 - 2)
    hashpte, r24, _, (before, after) = _user_hash_miss("hashpte")
    miss24 = sum(n for s, n in hashpte.items()
                 if dougan1999.part_of(s) == "TLB and hash-table misses")
    assert r24.faults == 0 and after - before == 1
    assert miss24 - hashpte["create_hpte"] == 38 + (25 + 1 - 3) + 35


# ------------------------------------------------------------------ Linux 2.1.51's own paths

def _two_tasks_21():
    from emu.kernel.entry import TASK_STATE
    k = dougan1999.kernel("603 page table")
    e = Entry(k, version="2.1.51")
    a, b = e.spawn(exit_with("li r3, 0"), "a"), e.spawn(exit_with("li r3, 0"), "b")
    e._add_to_runqueue(a)
    e._word(e.task(b) + TASK_STATE, 1)                  # b sleeps, on no run queue
    return e, a, b


def test_2_1_51s_goodness_is_the_counter_and_one_for_prev():
    """2.1.51's goodness (kernel/sched.c 200-230 at 94520e420): the counter, + 1 when p is
    prev itself; no priority, no mm test. By hand: policy 3, counter 3, the prev test 2,
    (+ 1), mr and blr 2: 10 (20), 11 (21); no ticks left 8 (0)."""
    from emu.kernel.entry import TASK_FIELDS
    e, a, b = _two_tasks_21()
    ta, tb = e.task(a), e.task(b)
    run, weight = _guest_call(e, "goodness22", tb, current=ta, prev=ta)
    assert (run.instructions, weight) == (10, 20)
    run, weight = _guest_call(e, "goodness22", ta, current=ta, prev=ta)
    assert (run.instructions, weight) == (11, 21)
    e._word(tb + TASK_FIELDS["COUNTER"], 0)
    run, weight = _guest_call(e, "goodness22", tb, current=ta, prev=ta)
    assert (run.instructions, weight) == (8, 0)


def test_2_1_51s_wake_up_process_queues_at_the_back_and_sets_the_global_need_resched():
    """2.1.51's add_to_runqueue: the task goes before init_task (the back of the ring, where
    2.2.0 puts it after init_task), and a counter more than 3 above current's sets the
    global need_resched. By hand (real mode: no EE): the frame 5, mr 1, save_flags and
    cli22 2 + 8, state 2, the run-queue test 3, the counter test 5, nr_running++ 4, the
    link 7, restore_flags 2 + 3, the frame back 6: 48."""
    from emu.kernel.entry import TASK_FIELDS
    e, a, b = _two_tasks_21()
    run, _ = _guest_call(e, "wake_up_process22", e.task(b), current=e.task(a))
    assert run.instructions == 48
    assert e.run_queue() == [a, b] and e.kword("NR_RUNNING") == 2
    c = e.spawn(exit_with("li r3, 0"), "c")
    e._add_to_runqueue(c)                       # the model's own, at fork: the back too
    assert e.run_queue() == [a, b, c]
    assert e.kword("NEED_RESCHED") == 0
    c = e.spawn(exit_with("li r3, 0"), "d")
    e._word(e.task(c) + 0, 1)                           # asleep
    e._word(e.task(c) + TASK_FIELDS["COUNTER"], 24)     # a has 20
    run, _ = _guest_call(e, "wake_up_process22", e.task(c), current=e.task(a))
    assert e.kword("NEED_RESCHED") == 1 and run.instructions == 48 + 3
    assert e.machine.read_word(e.task(a) + TASK_FIELDS["NEED_RESCHED"]) == 0


@pytest.mark.parametrize("version, isyncs", [("2.2.0", 30), ("2.1.51", 4)])
def test_a_pipe_round_trip_runs_the_isync_instructions_counted_by_hand(version, isyncs):
    """The isync instructions of one lat_pipe round trip, by hand: 2.2.0's four system
    calls (SYNC before transfer_to_handler's rfi, three in int_return: 16), two switches
    (_switch22's two SYNCs, int_return's three: 10) and restore_flags in sleep_on22 and
    wake_up_process22, twice each (4): 30. 2.1.51's SYNC is a lone sync: the 4 of
    restore_flags (an inline `sync; mtmsr; isync` in both kernels' system.h) alone. The
    syncs are the same 46 in both (PIPE_TRIP_SYNCS)."""
    from unicorn import UC_HOOK_CODE

    from emu.kernel.entry import pipe_round_trip
    k = dougan1999.kernel("604")
    e = Entry(k, version=version)
    parent = dougan1999._pipes_between(e, pipe_round_trip(1))
    e.run(parent, ELF_BASE, 0, 3)
    seen = {"7c0004ac": [], "4c00012c": []}            # sync, isync

    def hook(uc, address, size, data):
        if address < ELF_BASE:                          # the kernel: EA = physical
            word = bytes(uc.mem_read(address, 4)).hex()
            if word in seen:
                seen[word].append(address)
    e.machine.uc.hook_add(UC_HOOK_CODE, hook)
    e.machine.uc.ctl_flush_tb()
    e.run(parent, ELF_BASE, 0, 3)
    three = {w: len(v) for w, v in seen.items()}
    e.run(parent, ELF_BASE, 0, 4)
    assert len(seen["4c00012c"]) - 2 * three["4c00012c"] == isyncs
    assert len(seen["7c0004ac"]) - 2 * three["7c0004ac"] == dougan1999.PIPE_TRIP_SYNCS


def test_the_copies_check_the_user_pointer_as_uaccess_h_does():
    """copy_to_user22 / copy_from_user22 (pipe_22.S): access_ok as include/asm-ppc/
    uaccess.h has it in 2.1.51 and 2.2.0, then the copy. By hand, a user task (tss.fs
    USER_DS, start_thread's): get_fs, the KERNEL_DS test and its branch 3, __user_ok 6 (lis,
    the size test and its branch, subf, the address test and its branch), the b to
    __copy_tofrom_user22 1: 10 more than that routine's own 1-byte copy; a kernel thread's
    (KERNEL_DS) 3 + 1 more; both copy the byte."""
    from emu.kernel.entry import TASK_FIELDS, USER_DS
    e, a, _ = _two_tasks()
    task, m = e.task(a), e.machine
    fs = task + TASK_FIELDS["TSS"] + TASK_FIELDS["TSS_FS"]
    assert m.read_word(fs) == USER_DS
    src, dst = m.alloc(32, align=32), m.alloc(32, align=32)
    m.write(src, b"xyz")
    plain, _ = _guest_call(e, "__copy_tofrom_user22", dst, src, 1, current=task)
    to_user, _ = _guest_call(e, "copy_to_user22", dst + 1, src + 1, 1, current=task)
    from_user, _ = _guest_call(e, "copy_from_user22", dst + 2, src + 2, 1, current=task)
    assert to_user.instructions == from_user.instructions == plain.instructions + 10
    e._word(fs, 0)                                      # KERNEL_DS: no user check
    kernel_ds, _ = _guest_call(e, "copy_to_user22", dst, src, 1, current=task)
    assert kernel_ds.instructions == plain.instructions + 4
    assert m.read(dst, 3) == b"xyz"


def test_a_copy_past_the_user_limit_is_refused():
    """A write from 0x7fffffff of 2 bytes: __user_ok fails (the address above 0x80000000 -
    2), and the model refuses the bad pointer rather than return -EFAULT."""
    from emu.kernel.entry import P1_WRITE, _STUBS
    source = f"""
_start:
        cmpwi   0, r3, 0
        bne     child
        li      r3, {P1_WRITE}
        lis     r4, 0x7fff
        ori     r4, r4, 0xffff
        li      r5, 2
        bl      sys_write
child:
        li      r3, 0
        li      r0, 1
        sc
""" + _STUBS
    _, e = entry_for("603 page table")
    parent = dougan1999._pipes_between(e, source)
    with pytest.raises(KernelError, match="a bad user pointer"):
        e.run(parent, ELF_BASE, 0)
