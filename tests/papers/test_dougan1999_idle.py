"""The idle task clearing pages (emu.kernel.idle, routines/ppc32/idle_22.S; Dougan 1999 node13,
issue 19 item 6): 2.2.0's zero_paged as guest code on the 603 model, cache-inhibited stores
through a 603 TLB entry's WIMG I bit, the list of cleared pages and the task that runs next."""
import pytest

from emu.papers import dougan1999
from emu.kernel.entry import Entry
from emu.kernel.idle import ZERO_CACHE_SZ, ZEROTOTAL, IdleTask
from emu.kernel.pgtable import PAGE_SIZE
from emu.hw.softtlb import SW_INHIBITED603

# zero_paged22's instructions, counted by hand from idle_22.S: the prologue 17 and the way
# out (the loop's tests when no page is left: 4 + 3 + 2, the epilogue 8); per page: the
# loop's tests and taking the page 12, the window address 1, find_pte 1 + 10, 1, pte_uncache
# 5 (2 when the PTE is left alone), flush_tlb_page 3 + 8, the word loop's set-up 3, 1,024
# words x 7 (need_resched test, store, count), pte_cache 5 (2), the second flush 3 + 8, the
# data address 2, the list push 5, two atomic_incs 2 x 5, the branch back 1
PROLOGUE_AND_EXIT = 17 + 9 + 8
PER_PAGE_UNCACHED = 12 + 1 + 11 + 1 + 5 + 11 + 3 + 1024 * 7 + 5 + 11 + 2 + 5 + 10 + 1
PER_PAGE_CACHED = PER_PAGE_UNCACHED - 6
STORE_MISS_HANDLER = 26        # dtlb_store_miss_603k with 2.2.0's check (KERNEL_PTES)
WORDS, LINES = PAGE_SIZE // 4, PAGE_SIZE // 32


def idle_task(**options):
    k = dougan1999.kernel("603 page table")
    entry = Entry(k)
    return k, IdleTask(entry, **options)


@pytest.mark.parametrize("uncache", [True, False])
def test_zero_paged_runs_its_instructions_by_hand(uncache):
    k, idle = idle_task()
    run = idle.run(3, uncache=uncache)
    per_page = PER_PAGE_UNCACHED if uncache else PER_PAGE_CACHED
    misses = run.events["tlb_miss_exceptions"]
    assert misses == 3                      # one window page each, loaded by its first store
    assert run.instructions == PROLOGUE_AND_EXIT + 3 * per_page + misses * STORE_MISS_HANDLER


def test_a_cache_inhibited_page_is_1024_stores_that_reach_memory_one_by_one():
    k, idle = idle_task()
    uncached = idle.run(2, uncache=True)
    cached = idle.run(2, uncache=False)
    assert uncached.events["uncached_stores"] == 2 * WORDS
    assert "uncached_stores" not in cached.events
    # through the cache the same stores are L1 D accesses: 1,024 more per page, less the
    # PTE's load and store of pte_uncache and of pte_cache, which only the uncached run does
    assert cached.caches["L1D"]["accesses"] - uncached.caches["L1D"]["accesses"] == \
        2 * (WORDS - 4)
    # the 603e allocates on a store miss: each line of a page cleared through the cache is
    # read from memory; uncached, only the list's link (the page's first word) is
    assert cached.memory["reads"] >= 2 * LINES
    assert uncached.memory["reads"] < 2 * LINES // 8


def test_the_inhibited_entries_are_gone_after_the_clearing():
    """pte_cache and flush_tlb_page: no TLB entry maps the pages inhibited any more, so the
    next task's stores to them are cached."""
    k, idle = idle_task()
    idle.run(4, uncache=True)
    assert k.machine.soft_tlb.records[SW_INHIBITED603] == 0


def test_cleared_pages_are_zero_and_come_back_last_in_first_out():
    k, idle = idle_task()
    m = k.machine
    coming = [pfn << 12 for pfn in reversed(k.allocator.free_list[-3:])]
    for address in coming:                      # what the pages held before
        m.write(address, b"\xab" * PAGE_SIZE)
    idle.run(3, uncache=True)
    assert sorted(idle.cleared) == sorted(coming)
    assert idle.word(ZERO_CACHE_SZ) == 3 and idle.word(ZEROTOTAL) == 3
    page = idle.take()
    assert page.address == coming[-1]           # the last one pushed
    assert m.read(page.address, PAGE_SIZE) == bytes(PAGE_SIZE)   # its link cleared too
    assert idle.word(ZERO_CACHE_SZ) == 2
    for address in coming[:2]:                  # still listed: all zero but the link
        assert m.read(address + 4, PAGE_SIZE - 4) == bytes(PAGE_SIZE - 4)


def test_the_water_marks_stop_the_clearing():
    k, idle = idle_task(water=(2, 3))
    free = len(k.allocator.free_list)
    idle.run(3, uncache=True)
    assert idle.word(ZEROTOTAL) == 3
    idle.take()
    idle.take()                                 # one page left: below the low mark
    run = idle.run(3, uncache=True)
    assert idle.word(ZEROTOTAL) == 5            # up to the high mark, 3 on the list
    assert run.events["uncached_stores"] == 2 * WORDS
    assert len(k.allocator.free_list) == free - 5   # the page it did not reach went back
    idle.run(2, uncache=True)
    assert idle.word(ZEROTOTAL) == 5            # at the high mark: nothing to do


def test_the_anonymous_fault_takes_a_cleared_page_only_when_used():
    for use, taken in ((True, 1), (False, 0)):
        k, idle = idle_task(use=use)
        idle.run(2, uncache=True)
        p = k.spawn(dougan1999.BARE)
        heap = k.mmap(p, PAGE_SIZE, "rw")
        before = k.ledger.snapshot()
        k.touch(p, heap, "w")
        spent = k.ledger.since(before)
        assert spent.counts.get("prezeroed_pages_used", 0) == taken
        assert spent.counts.get("zeroed_pages", 0) == 1 - taken
        # the kernel's own clearing is 2.2.0's memset, 1,024 word stores (li, li, mtctr,
        # addi; stwu and bdnz per word; blr): the PTE page's, and the page's when not taken
        kind, calls, cycles, instructions = spent.rows["clear_page22"]
        assert calls == 2 - taken
        assert instructions == calls * (4 + 2 * WORDS + 1)


def test_the_next_task_after_each_way_of_clearing():
    """node13's directions at an 8 KB working set, from the cache misses counted by hand:
    the fault's clear_page allocates a page of lines; clearing through the cache in the idle
    task evicts the task's whole working set; uncached clearing leaves it."""
    table = dougan1999.idle_task_table(data_kb=8)
    working_set = 8 * 1024 // 32
    none, cu, unu, uu = (table.loc[c] for c in dougan1999.IDLE_CONFIGS)
    assert none["fault_clears"] == unu["fault_clears"] == 1
    assert cu["prezeroed_used"] == uu["prezeroed_used"] == 1
    assert none["l1d_misses"] >= LINES
    assert cu["l1d_misses"] >= working_set             # every line of it again
    assert abs(unu["l1d_misses"] - none["l1d_misses"]) < 16    # the cache left alone
    assert uu["l1d_misses"] < 16                       # neither the clear nor the evictions
    assert uu["cycles"] < none["cycles"] < unu["cycles"] < cu["cycles"]
    assert unu["idle_uncached_stores"] == 96 * WORDS   # up to the high-water mark
    assert cu["idle_l1d_misses"] >= 96 * LINES


def test_the_idle_task_needs_the_603_walking_the_page_table():
    for machine in ("603 hash table", "604"):
        k = dougan1999.kernel(machine)
        with pytest.raises(NotImplementedError, match="603 walking the page table"):
            IdleTask(Entry(k))
    k, idle = idle_task()
    with pytest.raises(ValueError, match="pages must be 0-96"):
        idle.run(97)
    with pytest.raises(ValueError, match="config must be one of"):
        dougan1999.idle_next_task("sometimes")
    with pytest.raises(ValueError, match="written_bytes"):
        dougan1999.next_task_source(8192, 6)


def test_idle_task_table_of_some_configurations_is_the_full_tables_rows():
    """claims() runs only the configurations it scores (each run is a kernel of its own):
    the same numbers as the full table's rows."""
    full = dougan1999.idle_task_table()
    some = dougan1999.idle_task_table(configs=("uncached, not used",))
    assert list(some.index) == ["no idle clearing", "uncached, not used"]
    assert some.equals(full.loc[list(some.index)])
