"""The 603 kernel without BATs (emu.kernel.ppc603, ``bats=False``, 2.2's ``nobats``): its
guest routines run translated and take TLB misses of their own; and the book's build
workload with and without BATs (Dougan 1999's "about 20%", dougan1999.bats_build)."""
import pytest

from emu.kernel.pgtable import PAGE_SIZE
from emu.kernel.ppc32 import ctx_to_vsid
from emu.papers import dougan1999 as d

STORE_MISS_HANDLER = 26        # dtlb_store_miss_603k with 2.2.0's check (KERNEL_PTES)


def _clear(k, page):
    before = k.ledger.snapshot()
    k.arch.clear_page(page)
    return k.ledger.since(before)


def test_nobats_clear_page_takes_one_store_miss_per_new_page():
    """Kernel() cleared its zero page at boot, so clear_page's code page is in the ITLB:
    clearing a new page is one DTLB store miss (its first store), the handler's 26
    instructions more than with BATs; the same page again is none."""
    nobats = d.kernel("603 page table", tlb_flush="context", bats=False)
    bats = d.kernel("603 page table", tlb_flush="context")
    page = nobats.machine.alloc(PAGE_SIZE, align=PAGE_SIZE)
    first = _clear(nobats, page)
    with_bats = _clear(bats, bats.machine.alloc(PAGE_SIZE, align=PAGE_SIZE))
    assert first.counts["kernel_tlb_misses"] == 1
    assert "kernel_tlb_misses" not in with_bats.counts
    assert first.rows["clear_page"][3] == with_bats.rows["clear_page"][3] + STORE_MISS_HANDLER
    assert "kernel_tlb_misses" not in _clear(nobats, page).counts


#: tests/kernel/test_kernel603.py's hash handler lengths: an HPTE in slot k of the primary
#: group 18 + 3k; no HPTE in either group 82 (its way out to 0x300 and the stub's branch)
HASH_PRIMARY0, HASH_NONE = 18, 82


def test_hashed_603_nobats_clear_page_hashes_the_kernels_page():
    """The 603 searching a hash table without BATs: a new page's first store misses the
    DTLB, the handler finds no HPTE and leaves for 0x300, whose branch during a kernel
    routine goes to 2.2.0's hash_page for the kernel (nobats_hash_22.S), and the retried
    store misses again and finds the new HPTE in slot k. One TLB miss of the access and
    one hash miss are counted; the same page again takes nothing."""
    from emu.hw import mmu
    nobats = d.kernel("603 hash table", tlb_flush="context", bats=False)
    bats = d.kernel("603 hash table", tlb_flush="context")
    page = nobats.machine.alloc(PAGE_SIZE, align=PAGE_SIZE)
    reloads = nobats.arch.kernel_reloads
    first = _clear(nobats, page)
    with_bats = _clear(bats, bats.machine.alloc(PAGE_SIZE, align=PAGE_SIZE))
    assert first.counts["kernel_tlb_misses"] == 1
    assert first.counts["kernel_htab_misses"] == 1
    assert nobats.arch.kernel_reloads == reloads + 1
    secondary, slot = mmu.find_pte(nobats.machine.read, nobats.arch.sdr1, 0, page)[:2]
    assert not secondary
    # the CPU takes both exceptions within the run (unlike the 604's, below, whose refused
    # fill stops the run): nothing of clear_page's block is counted again
    assert first.rows["clear_page"][3] == with_bats.rows["clear_page"][3] + HASH_NONE + \
        NOBATS_DSI + _create_hpte_empty_primary(slot) + HASH_PRIMARY0 + 3 * slot
    again = _clear(nobats, page)
    assert "kernel_tlb_misses" not in again.counts
    assert again.rows["clear_page"][3] == with_bats.rows["clear_page"][3]
    # the vectors are the model's stubs again outside the routine
    assert nobats.machine.read(0x300, 4) == nobats.arch.storage_stubs[0x300]


def test_nobats_new_context_leaves_the_kernels_segment():
    """2.2.0's set_context loads segments 0-7; without BATs segment 0 is the kernel's
    (VSID 0), so it loads 1-7 only (set_context_22.S, KERNEL_SEGMENT0)."""
    for machine, options in (("603 page table", {"tlb_flush": "context"}),
                             ("603 hash table", {"tlb_flush": "context"})):
        k = d.kernel(machine, bats=False, **options)
        k.arch.call("set_context_22", 5)
        assert k.arch.soft.regs.sr(0) & 0xFFFFFF == 0
        assert k.arch.soft.regs.sr(1) & 0xFFFFFF == ctx_to_vsid(5, 1 << 28)


def test_bats_build_kernel_misses_only_without_bats():
    """The BATs leave the kernel no TLB miss; without them its routines take some, and
    the user's misses (first touches after exec, fork and the flushes) are the same."""
    saving = d.bats_build_saving()
    bats, nobats = saving["with_bats"], saving["without_bats"]
    assert bats["kernel_tlb_misses"] == 0 < nobats["kernel_tlb_misses"]
    assert bats["user_tlb_misses"] == nobats["user_tlb_misses"] > 0
    assert nobats["cycles"] > bats["cycles"]
    assert saving["saved_percent"] == pytest.approx(
        100 * (nobats["cycles"] - bats["cycles"]) / nobats["cycles"])


def test_a_run_reads_only_its_own_processors_and_paths_estimates():
    """What lets the scorecard's range moves skip a run (emu.run.reuse): the estimates a
    run records as read. A 603 run reads no 604 estimate and no cost of a path its kernel
    never takes (the hashed MMU's hash-fault entry, on the 603 walking the page table); a
    604 run reads no 603e estimate."""
    from emu.hw import estimates
    with estimates.watch() as build:
        d.bats_build(True)
    with estimates.watch() as null604:
        d.null_syscall("604")
    assert any(n.startswith("ppc603e:") for n in build.read)
    assert not any(n.startswith("ppc604:") for n in build.read)
    assert "kernel:costs.hash_fault_entry" not in build.read
    assert any(n.startswith("ppc604:") for n in null604.read)
    assert not any(n.startswith("ppc603e:") for n in null604.read)


def test_workloads_table_without_lat_mmap_has_the_same_exec_rows():
    """claims() reads lat_proc fork and exec alone (fork for Table 1's process start, exec
    for the hit rate): without the lat_mmap rows, the same numbers."""
    full = d.workloads_table(kinds=("fork", "exec"))
    alone = d.workloads_table(kinds=("fork", "exec"), mmap_size=None)
    assert set(alone.index.get_level_values("workload")) == {"lat_proc fork", "lat_proc exec"}
    assert alone.equals(full.loc[alone.index])


# ------------------------------------------------------------------ the 604 without BATs

#: a kernel DSI on a page with a PTE, by hand (routines/ppc32/nobats_hash_22.S): the
#: prologue 32, the tests and the bl 8, nobats_hash_kernel22 to create_hpte 26 (24 before
#: session 30: the page directory from SPRG3's thread, PG_TABLES, and 2.2.0's two tophys,
#: head.S 1232-1238, where a word of the model's gave it), after it 12, the status and the
#: branch 3, the return 22
NOBATS_DSI = 32 + 8 + 26 + 12 + 3 + 22


def _create_hpte_empty_primary(slot):
    """create_hpte (hash_low_32.S) for a kernel page (writable, dirty, no _PAGE_USER) into
    empty slot ``slot`` of its primary group: word 1 12 (li, andi., cmpwi, bne, li, andi.,
    bne, li; rlwinm, andi., or, or), word 0 3, the group 7, the HASHPTE test 2, mtctr and
    addi 2, 3 a slot looked at, li and beq 2, the stores, sync and blr 5."""
    return 12 + 3 + 7 + 2 + 2 + 3 * (slot + 1) + 2 + 5


def test_604_nobats_clear_page_takes_one_hash_miss_per_new_page():
    """On the 604 without BATs a new page's clear is one DTLB miss whose search finds no
    HPTE: the DSI, 2.2.0's hash_page for the kernel (VSID 0) and the retried store, in
    clear_page's own run; the same page again takes nothing (its HPTE and TLB entry stay).
    SPRG2 is set to a user frame first, as a user hash miss's run leaves it (2.2.0's fast
    return to user mode): the DSI is delivered in the kernel, SPRG2 = 0 (head.S 1153), its
    frame below r1 (before session 29's fix it took the user's frame: 2 instructions
    fewer, the pin below would fail by 2)."""
    from emu.hw import mmu
    from emu.hw.softtlb import SPRG2
    nobats = d.kernel("604", flush="context", bats=False)
    bats = d.kernel("604", flush="context")
    page = nobats.machine.alloc(PAGE_SIZE, align=PAGE_SIZE)
    nobats.arch.cpu_regs.set_spr(SPRG2, nobats.arch.user_frame)
    reloads = nobats.arch.kernel_reloads
    first = _clear(nobats, page)
    with_bats = _clear(bats, bats.machine.alloc(PAGE_SIZE, align=PAGE_SIZE))
    assert first.counts["kernel_tlb_misses"] == 1
    assert first.counts["kernel_htab_misses"] == 1
    assert nobats.arch.kernel_reloads == reloads + 1
    secondary, slot = mmu.find_pte(nobats.machine.read, nobats.arch.sdr1, 0, page)[:2]
    assert not secondary
    assert nobats.machine.read_word(nobats.arch.user_frame) == 0    # no back chain stored
    # the block the DSI interrupted (clear_page's 5 instructions from 0x0, the dcbz at +0x8
    # refused) is counted up to the dcbz when the run stops; the dcbz, addi and bdnz once,
    # when the retried store runs them (emu_uncharge_faulted takes back the 3 counted at
    # the block's start: this pin was + 3 before)
    assert first.rows["clear_page"][3] == with_bats.rows["clear_page"][3] + NOBATS_DSI + \
        _create_hpte_empty_primary(slot)
    again = _clear(nobats, page)
    assert "kernel_tlb_misses" not in again.counts
    assert again.rows["clear_page"][3] == with_bats.rows["clear_page"][3]
    # one TLB for the kernel and the user: the backend's DTLB holds the kernel's entry
    assert nobats.arch.dtlb.find(0, page) is not None


def test_604_entry_needs_the_backends_nobats():
    from emu.kernel.entry import Entry
    with pytest.raises(ValueError, match="bats=False"):
        Entry(d.kernel("604", flush="context", bats=False))


def test_604_bats_build_kernel_misses_only_without_bats():
    """node6's rows on the 604: the BATs leave the kernel no TLB or hash-table miss; without
    them its routines take both (a hash miss is a TLB miss whose search failed), and the
    user's misses are the same."""
    saving = d.bats_build_saving("604")
    bats, nobats = saving["with_bats"], saving["without_bats"]
    assert bats["kernel_tlb_misses"] == bats["kernel_htab_misses"] == 0
    assert 0 < nobats["kernel_htab_misses"] <= nobats["kernel_tlb_misses"]
    assert bats["user_tlb_misses"] == nobats["user_tlb_misses"] > 0
    assert bats["user_htab_misses"] == nobats["user_htab_misses"] > 0
    assert nobats["cycles"] > bats["cycles"]


def test_604_nobats_a_c_paths_pte_reference_goes_through_the_dtlb():
    """The generic VM's PTE loads and stores are the kernel's data references (2.2.0's C
    paths through the kernel's mapping): without BATs on the 604 the first to a page with
    no HPTE is a DTLB miss, a failed search, the DSI as guest code from the vector to
    hash_page's rfi (nobats_dsi22, no fixed cost: NOBATS_DSI + create_hpte's instructions,
    the prologue's frame below r1 since SPRG2 = 0 in the kernel), and the search again;
    the next reference to the page hits; with BATs none costs anything. Session 29 (before,
    hash_page was called from Python after a fixed hash_fault_entry: 9 + 24 + create_hpte
    + 12 instructions of nobats_hash_call22, a fixed 30 for the rest). SPRG2 is set to a
    user frame first, as a user hash miss's run leaves it: the kernel's DSI must not take
    it (it would skip the prologue's addis and subi: 2 instructions fewer)."""
    from emu.hw import mmu
    from emu.hw.softtlb import SPRG2
    nobats = d.kernel("604", flush="context", bats=False)
    page = nobats.machine.alloc(PAGE_SIZE, align=PAGE_SIZE)
    nobats.arch.cpu_regs.set_spr(SPRG2, nobats.arch.user_frame)
    before = nobats.ledger.snapshot()
    nobats.arch.kernel_reference(page + 8, True)
    spent = nobats.ledger.since(before)
    assert spent.counts["kernel_tlb_misses"] == spent.counts["kernel_c_tlb_misses"] == 1
    assert spent.counts["kernel_htab_misses"] == 1
    assert spent.rows["kernel_table_search"][1] == 2 and "hash_fault_entry" not in spent.rows
    secondary, slot, _, word1 = mmu.find_pte(nobats.machine.read, nobats.arch.sdr1, 0, page)
    assert spent.rows["hash_page_kernel"][1] == 1
    assert spent.rows["hash_page_kernel"][3] == NOBATS_DSI + _create_hpte_empty_primary(slot)
    assert not secondary and word1 & 3 == 0    # no _PAGE_USER: PP 0 (Ks 0: read/write)
    assert nobats.machine.read_word(nobats.arch.user_frame) == 0    # no back chain stored
    again = nobats.ledger.snapshot()
    nobats.arch.kernel_reference(page + 12, False)
    assert not nobats.ledger.since(again).counts
    bats = d.kernel("604", flush="context")
    quiet = bats.ledger.snapshot()
    bats.arch.kernel_reference(page, True)
    assert not bats.ledger.since(quiet).counts and not bats.ledger.since(quiet).rows


def test_604_entry_runs_on_the_backends_nobats():
    """Entry(bats=False) on a 604 backend without BATs uses the backend's TLBs: the user's
    program, the kernel's entry path and its routines then share one ITLB and DTLB. The
    steady null call is the same 202 instructions as on a backend with BATs (no routine
    runs in the loop), and no TLB miss."""
    from emu.kernel.entry import ELF_BASE, LAT_SYSCALL_NULL, Entry
    runs = []
    for backend_bats in (True, False):
        e = Entry(d.kernel("604", flush="context", bats=backend_bats), bats=False)
        p = e.spawn(LAT_SYSCALL_NULL)
        e.run(p, ELF_BASE, 1)
        a, b = e.run(p, ELF_BASE, 10), e.run(p, ELF_BASE, 20)
        runs.append(((b.instructions - a.instructions) / 10, (b.cycles - a.cycles) / 10,
                     d.tlb_misses(b.events)))
    assert runs[1] == runs[0] and runs[0][0] == 202 and runs[0][2] == 0


# ------------------------------------------------------------------ the read-only text

@pytest.mark.parametrize("machine, options", [("604", {"flush": "context"}),
                                              ("603 hash table", {"tlb_flush": "context"}),
                                              ("603 page table", {"tlb_flush": "context"})])
def test_nobats_kernel_store_to_its_text_faults(machine, options):
    """2.2.0's mapin_ram maps the kernel's text [_stext, etext) with _PAGE_USER and no
    _PAGE_RW (arch/ppc/mm/init.c 851-857), which hash_page and the 603's handlers make PP 3,
    read only for the supervisor too. Without BATs a kernel routine's store to its text
    (clear_page over a page of code) faults and leaves the code as it was: on clear_page's
    own page, whose HPTE its fetch has just made with PP 3 (the 604: a protection fault),
    and on another text page with no HPTE (hash_page refuses the store; the 603 walking the
    page table refuses it in its handler); a data page clears."""
    from emu.hw import mmu
    from emu.hw.faults import GuestFault
    from emu.kernel.errors import KernelError
    from emu.kernel.ppc32 import CODE_END
    for which in ("own", "other"):
        k = d.kernel(machine, bats=False, **options)
        m = k.machine
        own = m.symbols["clear_page"] & -PAGE_SIZE
        page = own if which == "own" else own + 4 * PAGE_SIZE
        assert page + PAGE_SIZE <= CODE_END
        before = m.read(page, PAGE_SIZE)
        with pytest.raises((KernelError, GuestFault)):
            k.arch.clear_page(page)
        assert m.read(page, PAGE_SIZE) == before
        if which == "own" and machine != "603 page table":
            hpte = mmu.find_pte(m.read, k.arch.sdr1, 0, own)
            assert hpte is not None and hpte[3] & 3 == 3
    data = m.alloc(PAGE_SIZE, align=PAGE_SIZE)
    m.write(data + 64, b"\xff" * 4)
    k.arch.clear_page(data)
    assert m.read(data, PAGE_SIZE) == bytes(PAGE_SIZE)


def test_bats_build_lists_the_fixed_cost_paths_it_charged():
    """bats_build's ``c_paths``: each path charged from the fixed-cost table, its calls
    times the table's cycles a call, summing to ``c_path_cycles``, the most called first.
    With BATs on the 604 every hash-table miss is a user access's, whose storage
    interrupt's prologue is guest code (hash_miss_604.S, in the ``hash_page`` row since
    session 29; before, a fixed hash_fault_entry each): no fixed cost; every page allocated
    in the measured step is freed in it (the step ends as it started)."""
    from emu.kernel import costs
    run = d.bats_build(True, "604")
    paths = run["c_paths"]
    assert all(cycles == calls * costs.cycles(name) for name, (calls, cycles) in paths.items())
    assert sum(cycles for _, cycles in paths.values()) == run["c_path_cycles"]
    calls = [c for c, _ in paths.values()]
    assert calls == sorted(calls, reverse=True)
    assert "hash_fault_entry" not in paths and run["user_htab_misses"] > 0
    assert paths["alloc_page"][0] == paths["free_page"][0] > 0


def test_604_nobats_hash_page_takes_the_page_directory_from_sprg3s_thread():
    """2.2.0's DataAccess gives hash_page the current thread from SPRG3 and hash_page reads
    its PG_TABLES (head.S 465, 1232): a C path's first reference to a kernel page finds the
    PTE through the directory of the thread SPRG3 names. With SPRG3 on a thread block whose
    PG_TABLES is an empty directory, the same reference finds no PTE: the DSI goes to
    do_page_fault's way (the model's routines never take it: the run stops on the word
    there), and no HPTE is made."""
    from emu.hw import mmu
    from emu.hw.faults import GuestFault
    from emu.hw.softtlb import SPRG3
    nobats = d.kernel("604", flush="context", bats=False)
    m = nobats.machine
    empty = m.alloc(PAGE_SIZE, align=PAGE_SIZE)             # a directory with no entry
    other = m.alloc(32, align=32)                           # a thread block: PG_TABLES first
    m.write(other, empty.to_bytes(4, "big"))
    page = m.alloc(PAGE_SIZE, align=PAGE_SIZE)
    nobats.arch.cpu_regs.set_spr(SPRG3, other)
    with pytest.raises(GuestFault, match="nobats_fault22"):
        nobats.arch.kernel_reference(page + 8, True)
    assert mmu.find_pte(m.read, nobats.arch.sdr1, 0, page) is None
    nobats.arch.cpu_regs.set_spr(SPRG3, nobats.arch.thread)   # the backend's: the directory
    reloads = nobats.arch.kernel_reloads
    nobats.arch.kernel_reference(page + 8, True)
    assert nobats.arch.kernel_reloads == reloads + 1
    assert mmu.find_pte(m.read, nobats.arch.sdr1, 0, page) is not None
