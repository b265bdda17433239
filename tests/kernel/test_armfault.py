"""The ARM backend's generic fault path as guest code (routines/arm/fault_v7.S,
emu.kernel.armfault): one minor file fault's instructions, counted by hand."""

from emu.kernel import Kernel
from emu.kernel.arm import ARMv7
from emu.kernel.armfault import stat_threshold
from emu.kernel.pages import File
from emu.kernel.pgtable import PAGE_SIZE
from emu.kernel.workloads import Image
from emu.run.machine import Machine

TINY = Image("tiny", text_pages=2, data_pages=0, bss_pages=0, text_touched=0, data_written=0,
             bss_written=0, stack_written=0)

# Instructions of each routine on the path of a minor fault on a cached file page, counted
# from routines/arm/fault_v7.S and pagelock.S (conditional instructions count, taken or not):
SPIN_LOCK_IRQSAVE, SPIN_UNLOCK_IRQRESTORE = 12, 7   # uncontended; unlock: mov dmb str dsb sev msr mov
I_SIZE_READ = 11                                    # one pass of the seqcount loop
FILEMAP_FAULT = 6 + I_SIZE_READ + 8                 # to the find_get_page call
HANDLE_MM_FAULT = 46 + FILEMAP_FAULT                # to ->fault and back
FIND_VMA_HIT, FIND_VMA_ROOT = 11, 18                # mmap_cache hit; a miss found at the root
DO_PAGE_FAULT = 52 + SPIN_LOCK_IRQSAVE + SPIN_UNLOCK_IRQRESTORE + HANDLE_MM_FAULT
ENTER = 37                                          # vector, usr_entry, abort, do_DataAbort
EXIT = 31 + SPIN_LOCK_IRQSAVE + SPIN_UNLOCK_IRQRESTORE
SPECULATIVE_GET = 19                                # page_cache_get_speculative, count >= 1
FIND_GET_PAGE = 32 + SPECULATIVE_GET + 7            # a one-level radix tree
RMAP_FIRST, RMAP_AGAIN = 25, 13                     # the first mapping (zone stat); another
DO_FAULT = 49 + I_SIZE_READ                         # + page_add_file_rmap
# filefault_v7.S __do_fault_file, the caller of find_get_page .. spin_unlock in one call:
# prologue 3, find_get_page's call and its checks 4, lock_page's 2, __do_fault_map's 5 and
# checks 3, the PTE lock 5 (its conditional moves and call count taken or not), set_pte_at 5,
# the unlock 4, epilogue 2. Session 26: before it the model made these calls itself and
# charged none of it; __do_fault's row grows by these 33 instructions, the others not
FILE_FAULT_CALLER = 3 + 4 + 2 + 5 + 3 + 5 + 5 + 4 + 2


def _remapped_file(k):
    """A process of ``k`` with a 4-page shared file mapped, its first two pages read into
    the page cache, unmapped and mapped again: (process, the new mapping's address)."""
    p = k.spawn(TINY)
    f = File("data", 4)
    at = k.mmap(p, 4 * PAGE_SIZE, "r", shared=True, file=f)
    k.touch(p, at, "r")
    k.touch(p, at + PAGE_SIZE, "r")
    k.munmap(p, at, 4 * PAGE_SIZE)
    return p, k.mmap(p, 4 * PAGE_SIZE, "r", shared=True, file=f)


def test_a_cached_page_fault_is_the_hand_count():
    # map, read a page (read into the page cache), unmap, map again: the second fault finds
    # the page in the page cache (mmap_cache cleared by the unmap: the tree's root VMA?)
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p, at = _remapped_file(k)
    k.touch(p, at, "r")                                 # mmap_cache was cleared: a walk
    before = {n: list(k.ledger.rows[n]) for n in ("do_page_fault", "find_get_page",
                                                     "__do_fault")}
    k.touch(p, at + PAGE_SIZE, "r")                     # mmap_cache hit, page cached
    after = {n: k.ledger.rows[n] for n in before}
    assert after["do_page_fault"][3] - before["do_page_fault"][3] == \
        ENTER + DO_PAGE_FAULT + FIND_VMA_HIT + EXIT
    assert after["find_get_page"][3] - before["find_get_page"][3] == FIND_GET_PAGE
    assert after["__do_fault"][3] - before["__do_fault"][3] == \
        DO_FAULT + RMAP_FIRST + FILE_FAULT_CALLER
    # the fixed estimates the guest code replaces are not charged
    for fixed in ("fault_entry", "file_fault", "page_cache_lookup"):
        assert fixed not in k.ledger.rows


def _cached_faults(in_one, cores):
    """The ledger's rows and counts of two minor faults on cached pages of a shared file
    mapping (two more pages first read into the page cache), the file fault in one guest
    call or as the steps' own calls."""
    k = Kernel(Machine("cortex-a9", mmu=True, cores=cores), arch=ARMv7)
    k.arch.maps_file_fault_in_one = in_one
    p, at = _remapped_file(k)
    before = k.ledger.snapshot()
    k.touch(p, at, "r")
    k.touch(p, at + PAGE_SIZE, "r")
    got = k.ledger.since(before)
    return got.rows, got.counts


def test_the_file_fault_in_one_call_charges_each_step_as_its_own_call_did():
    # every row the same calls and instructions, but __do_fault's, which takes the caller's 33
    # instructions a fault (and their cycles: more than one each, the first time its code is
    # fetched). Two CPUs (the PTE lock's spin_lock and spin_unlock as guest code): every other
    # row the same cycles, and the same counts. One CPU: unlock_page's mb() no longer waits a
    # cycle for set_pte_ext's clean (its dsb, now after the caller's epilogue; measured: 1 a
    # fault, maintenance_wait_cycles 2 -> 0)
    extra = 2 * FILE_FAULT_CALLER
    for cores in (2, 1):
        steps, steps_counts = _cached_faults(False, cores)
        one, one_counts = _cached_faults(True, cores)
        assert set(one) == set(steps)
        assert one["__do_fault"][1] == steps["__do_fault"][1] == 2
        assert one["__do_fault"][3] == steps["__do_fault"][3] + extra
        assert one["__do_fault"][2] > steps["__do_fault"][2] + extra
        waited = {"unlock_page"} if cores == 1 else set()
        for row in set(steps) - {"__do_fault"} - waited:
            assert one[row] == steps[row], (cores, row)
        if cores > 1:
            assert one_counts == steps_counts
            assert one["spin_lock"][1] == steps["spin_lock"][1] >= 2
        else:
            assert one["unlock_page"][2] == steps["unlock_page"][2] - 2
            steps_counts.pop("maintenance_wait_cycles")
            assert one_counts == steps_counts


def test_stat_threshold_is_vmstats():
    # mm/vmstat.c: 2 * fls(cpus) * (1 + fls(MB / 128)); 4 CPUs, 512 MB: 2 * 3 * (1 + 3)
    assert stat_threshold(512 << 8, 4) == 24
    assert stat_threshold(1 << 30, 4) == 2 * 3 * (1 + 16)     # 4 TB: fls(32768) = 16
    assert stat_threshold(1 << 35, 4) == 125                  # capped


# zap_pte_range over one PTE page (routines/arm/zap_v7.S, one guest call), counted by hand
# the same way: the call, then per present PTE the body to the page (vm_normal_page), the
# clear's call of set_pte_ext (its instructions are set_pte_ext's row), tlb_remove_tlb_entry's
# range, then by kind; mark_page_accessed is charged with the loop (zap_pte's row),
# page_remove_rmap and free_page_and_swap_cache to their own rows. Re-derived for the one loop
# (session 23): before it, a call per PTE cost 32 + 10 + ... + 6 with zap_pte_put's 4.
ZAP_CALL = 13 + 7                                   # prologue (the check's locals), epilogue
ZAP_HEAD = 27                                       # *pte to pfn_to_page
ZAP_CLEAR = 6                                       # pte_clear: set_pte_ext(pte, 0, 0)
ZAP_RANGE = 3 + 7                                   # the fullmm test, the range (not fullmm)
ZAP_FOUND = 2 + 6                                   # !page, the model's count and sum
ZAP_CALLS = 4 + 3 + 2                               # page_remove_rmap, mapcount, tlb_remove_page
ZAP_STEP, ZAP_ON = 5, 3                             # pte++ .. addr != end; *zap_work > 0
ZAP_FILE = ZAP_HEAD + ZAP_CLEAR + ZAP_RANGE + ZAP_FOUND + 3 + 8 + 3 + ZAP_CALLS + ZAP_STEP
ZAP_ANON = ZAP_HEAD + ZAP_CLEAR + ZAP_RANGE + ZAP_FOUND + 3 + 4 + ZAP_CALLS + ZAP_STEP
ZAP_ZERO = 20 + ZAP_CLEAR + ZAP_RANGE + 2 + ZAP_STEP    # the zero page: no struct page
MARK_FIRST, MARK_AGAIN = 15 + 10, 14                # SetPageReferenced's set_bit; the tests
REMOVE_LAST = 20 + 16 + 1                           # atomic_add_negative, __dec_zone_page_state
PUT = 14                                            # put_page_testzero
ZAP_ROWS = ("zap_pte", "page_remove_rmap", "free_page_and_swap_cache")


def _zapped(k, p, at, pages):
    def instructions():
        return [k.ledger.rows[r][3] if r in k.ledger.rows else 0 for r in ZAP_ROWS]
    before = instructions()
    k.munmap(p, at, pages * PAGE_SIZE)
    return [b - a for a, b in zip(before, instructions())]


def test_unmapping_a_page_is_the_hand_count():
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    f = File("data", 4)
    at = k.mmap(p, 2 * PAGE_SIZE, "r", shared=True, file=f)
    k.touch(p, at, "r")
    k.touch(p, at + PAGE_SIZE, "r")
    # each page's only mapping goes, its PG_referenced set the first time
    assert _zapped(k, p, at, 2) == [ZAP_CALL + 2 * (ZAP_FILE + MARK_FIRST) + ZAP_ON,
                                    2 * REMOVE_LAST, 2 * PUT]
    at = k.mmap(p, PAGE_SIZE, "r", shared=True, file=f)
    k.touch(p, at, "r")
    assert _zapped(k, p, at, 1) == [ZAP_CALL + ZAP_FILE + MARK_AGAIN, REMOVE_LAST, PUT]
    at = k.mmap(p, 2 * PAGE_SIZE, "rw")
    k.touch(p, at, "w")                                 # an anonymous page
    k.touch(p, at + PAGE_SIZE, "r")                     # the zero page
    assert _zapped(k, p, at, 2) == [ZAP_CALL + ZAP_ANON + ZAP_ON + ZAP_ZERO, REMOVE_LAST, PUT]
    assert all(k.ledger.rows[r][0] == "guest" for r in ZAP_ROWS)
    assert k.ledger.rows["zap_pte"][1] == 3             # one guest call per munmap's PTE page
    assert k.ledger.rows["page_remove_rmap"][1] == 4    # one call per struct page


def test_exit_zaps_a_shared_anonymous_page_without_the_range_or_the_stat():
    """exit_mmap's gather is fullmm (no range for tlb_end_vma) and a page the parent still
    maps is not its last mapping (no __dec_zone_page_state)."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    at = k.mmap(p, PAGE_SIZE, "rw")
    k.touch(p, at, "w")
    child = k.fork(p)
    vma = child.mm.find_vma(at)
    ptep = child.mm.ptep(at)
    page = k._page_of(k._read_pte(ptep))
    assert page.mapcount == 2
    before = [k.ledger.rows[r][3] if r in k.ledger.rows else 0 for r in ZAP_ROWS]
    k.arch.zap_start(k, child.mm, vma, True)
    released = []
    k.arch.zap_ptes(k, child.mm, vma, at, at + PAGE_SIZE,
                    [(at, ptep, k._read_pte(ptep), page)], released)
    after = [k.ledger.rows[r][3] for r in ZAP_ROWS]
    fullmm_range = 3                                    # the fullmm test only
    assert [b - a for a, b in zip(before, after)] == [
        ZAP_CALL + ZAP_ANON - ZAP_RANGE + fullmm_range, 14 + 1, PUT]
    assert released == [page] and page.mapcount == 1
    assert k.arch.read_pte(ptep) == 0 and k.arch.hardware_pte(ptep) == 0  # the guest's clear


# do_anonymous_page and page_add_new_anon_rmap (routines/arm/anon_v7.S), counted by hand
# the same way
ANON_HEAD_WRITE, ANON_HEAD_READ = 6, 10             # guard test, write test; the zero PTE
SET_BIT = 10                                        # _set_bit_le, one pass
INC_ZONE = 16                                       # __inc_zone_page_state, no fold
ATOMIC_ADD = 6
NEW_ANON_RMAP = (4 + 3 + SET_BIT + 2 + 3 + INC_ZONE + 11 + 6 + 3 + 5 + 5 + 6 + 2
                 + 3 + ATOMIC_ADD + 7)              # 92: to pagevec_add's slots left
UPTODATE, RSS = 1 + 5, 1 + 7                        # the calls of __SetPageUptodate, the counter
ANON_MAP = 7 + UPTODATE + 6 + 3 + 1 + 5 + RSS + 4 + NEW_ANON_RMAP + 2
ANON_COW = 6 + UPTODATE + RSS + 4 + NEW_ANON_RMAP + 1


def _instructions(k, row):
    return k.ledger.rows[row][3] if row in k.ledger.rows else 0


def test_an_anonymous_fault_is_the_hand_count():
    """A write to a new anonymous page runs do_anonymous_page's head and its map
    (page_add_new_anon_rmap included), not the fixed anon_fault; a read maps the zero
    page. The guest's struct page ends as the kernel's: uptodate, swap-backed, one mapping,
    the anon_vma's mapping and its index, the pagevec's reference; the area's first page
    took anon_vma_prepare's slow path (a new anon_vma, the model's), the second not."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    at = k.mmap(p, 4 * PAGE_SIZE, "rw")
    k.touch(p, at, "w")
    before = _instructions(k, "do_anonymous_page")
    k.touch(p, at + PAGE_SIZE, "w")
    assert _instructions(k, "do_anonymous_page") - before == ANON_HEAD_WRITE + ANON_MAP
    assert ANON_MAP == 134 and NEW_ANON_RMAP == 92
    before = _instructions(k, "do_anonymous_page")
    k.touch(p, at + 2 * PAGE_SIZE, "r")
    assert _instructions(k, "do_anonymous_page") - before == ANON_HEAD_READ
    assert "anon_fault" not in k.ledger.rows
    page = k._page_of(k._read_pte(p.mm.ptep(at + PAGE_SIZE)))
    struct = k.arch._struct_page(k, page)
    words = [k.machine.read_word(struct + 4 * i) for i in range(6)]
    block = k.arch._mms[p.mm]["vmas"][p.mm.find_vma(at)]
    anon_vma = k.machine.read_word(block + 76)
    assert anon_vma and words[4] == anon_vma + 1                # PAGE_MAPPING_ANON
    assert words[0] == 1 << 3 | 1 << 20                        # PG_uptodate, PG_swapbacked
    assert words[1:4] == [2, 0, 0]                              # get_page; _mapcount 0
    assert words[5] == p.mm.find_vma(at).pgoff + 1             # linear_page_index
    assert k.arch._free["anon_vma"] == []


def test_an_early_copy_on_write_adds_the_new_pages_anonymous_rmap():
    """A write fault on a private file page: __do_fault without page_add_file_rmap, and for
    the copy __SetPageUptodate, inc_mm_counter_fast and page_add_new_anon_rmap."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    f = File("data", 4)
    at = k.mmap(p, 4 * PAGE_SIZE, "rw", shared=False, file=f)
    k.touch(p, at, "r")                                 # the page in the page cache
    k.touch(p, at + PAGE_SIZE, "r")
    k.munmap(p, at, 4 * PAGE_SIZE)
    at = k.mmap(p, 4 * PAGE_SIZE, "rw", shared=False, file=f)
    k.touch(p, at, "w")                                 # the area's first: anon_vma made
    before = _instructions(k, "__do_fault")
    k.touch(p, at + PAGE_SIZE, "w")                     # mmap_cache hit, page cached
    assert _instructions(k, "__do_fault") - before == DO_FAULT - 2 + ANON_COW


# ____pagevec_lru_add (routines/arm/lru_v7.S) of a full pagevec, counted by hand
LOCK_IRQ, UNLOCK_IRQ = 10, 7                        # uncontended
LRU_PAGE = 9 + 2 * (3 + SET_BIT) + 6 + 7 + 3 + (INC_ZONE - 2) + 2   # one page onto the list
RELEASE_PAGE = 6 + 12 + 2                           # release_pages' put of one page
FOLD = 9 + ATOMIC_ADD + 4 + ATOMIC_ADD              # __inc_zone_state folds its count


def _folds(increments, threshold, diff=0):
    """How often a per-CPU vm_stat_diff starting at ``diff`` folds (mm/vmstat.c)."""
    folds = 0
    for _ in range(increments):
        diff += 1
        if diff > threshold:
            diff, folds = -(threshold // 2), folds + 1
    return folds


def test_a_full_pagevec_is_drained_as_guest_code():
    """Every 14th anonymous page fills this CPU's pagevec: ____pagevec_lru_add puts its 14
    pages on the zone's active anonymous list under lru_lock (PG_lru, PG_active, the
    reclaim stat, NR_ACTIVE_ANON), drops the pagevec's references and empties it."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    at = k.mmap(p, 30 * PAGE_SIZE, "rw")
    for n in range(14):
        k.touch(p, at + n * PAGE_SIZE, "w")
    threshold = stat_threshold(k.allocator.frames, 1)
    assert _instructions(k, "____pagevec_lru_add") == (
        6 + 14 * LRU_PAGE + 3 + LOCK_IRQ + 3 + 3 + UNLOCK_IRQ + 1 + 14 * RELEASE_PAGE + 3 + 3
        + FOLD * _folds(14, threshold))
    assert LRU_PAGE == 67 and RELEASE_PAGE == 20
    page = k._page_of(k._read_pte(p.mm.ptep(at)))
    struct = k.arch._struct_page(k, page)
    assert k.machine.read_word(struct) & (1 << 5 | 1 << 6) == 1 << 5 | 1 << 6   # LRU, active
    assert k.machine.read_word(struct + 4) == 1                 # the pagevec's reference gone
    for n in range(14, 30):
        k.touch(p, at + n * PAGE_SIZE, "w")
    assert k.ledger.counts.get("lru_add_drains", 0) == 2       # pages 14 and 28
    assert k.ledger.rows["____pagevec_lru_add"][1] == 2


# do_wp_page (routines/arm/wp_v7.S), counted by hand the same way
WP_HEAD_ANON, WP_HEAD_FILE, WP_HEAD_ZERO = 23, 19, 11   # vm_normal_page, PageAnon/PageKsm
REUSE_YES, REUSE_NO = 19, 12                        # reuse_swap_page (+ page_move_anon_rmap)
FLUSH_CACHE_PAGE = 3                                # not VM_EXEC: the one test
WP_REUSE_PTE = 3 + FLUSH_CACHE_PAGE + 9
WP_COPY_HEAD_PAGE, WP_COPY_HEAD_ZERO = 11 + ATOMIC_ADD + 4, 6 + 4
MK_PTE = 3 + FLUSH_CACHE_PAGE + 6 + 4 + 1            # flush_cache_page, mk_pte, dirty, write
WP_COPY_MAP_ANON = 6 + UPTODATE + 7 + 3 + 3 + MK_PTE
WP_COPY_MAP_ZERO = 6 + UPTODATE + 7 + 3 + RSS + MK_PTE
WP_COPY_MAP_FILE = 6 + UPTODATE + 7 + 3 + 3 + 6 + RSS + MK_PTE
WP_COPY_RMAP = 6 + NEW_ANON_RMAP + 1
PUT_PAGE = 12                                       # put_page: PageCompound, put_page_testzero
WP_PUT_OLD = 3 + PUT_PAGE + 2 + PUT_PAGE + 1
WP_ROWS = ("do_wp_page", "reuse_swap_page", "page_remove_rmap", "put_page")


def _cycles(k, row):
    return k.ledger.rows[row][2] if row in k.ledger.rows else 0


def _wp_instructions(k, process, address):
    before = [_instructions(k, r) for r in WP_ROWS]
    k.touch(process, address, "w")
    return [_instructions(k, r) - b for r, b in zip(WP_ROWS, before)]


def test_a_write_protect_fault_is_the_hand_count():
    """do_wp_page as guest code, not the fixed wp_fault: after fork the parent's write
    copies (page_mapcount 2: no reuse; page_remove_rmap of a mapping that is not the last,
    two put_page), then the child's write to the same address reuses the page, now mapped
    once (page_move_anon_rmap, the young-dirty-writable PTE); a write to the zero page and
    to a private file page copy without the reuse test."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    at = k.mmap(p, 4 * PAGE_SIZE, "rw")
    k.touch(p, at, "w")
    k.touch(p, at + PAGE_SIZE, "w")
    child = k.fork(p)
    k.touch(p, at, "w")                                 # the first copy: caches warmed
    k.touch(child, at, "w")
    remove_not_last = 15                                # page_remove_rmap, no zone stat
    assert _wp_instructions(k, p, at + PAGE_SIZE) == [
        WP_HEAD_ANON + WP_COPY_HEAD_PAGE + WP_COPY_MAP_ANON + WP_COPY_RMAP, REUSE_NO,
        remove_not_last, WP_PUT_OLD]
    assert WP_COPY_MAP_ANON == 42 and WP_PUT_OLD == 30
    cycles = [_cycles(k, r) for r in WP_ROWS[:2]]
    assert _wp_instructions(k, child, at + PAGE_SIZE) == [
        WP_HEAD_ANON + WP_REUSE_PTE, REUSE_YES, 0, 0]
    # warm: the parent's copy just read this struct page, the VMA's and the thread's lines
    # are cached, and the reuse has no barrier: a cycle an instruction
    assert [_cycles(k, r) - c for r, c in zip(WP_ROWS[:2], cycles)] == [
        WP_HEAD_ANON + WP_REUSE_PTE, REUSE_YES]
    page = k._page_of(k._read_pte(child.mm.ptep(at + PAGE_SIZE)))
    struct = k.arch._struct_page(k, page)
    block = k.arch._mms[child.mm]["vmas"][child.mm.find_vma(at)]
    assert k.machine.read_word(struct + 16) == k.machine.read_word(block + 76) + 1
    k.touch(p, at + 2 * PAGE_SIZE, "r")                 # the zero page
    assert _wp_instructions(k, p, at + 2 * PAGE_SIZE) == [
        WP_HEAD_ZERO + WP_COPY_HEAD_ZERO + WP_COPY_MAP_ZERO + WP_COPY_RMAP, 0, 0, 0]
    f = File("data", 4)
    fa = k.mmap(p, 4 * PAGE_SIZE, "rw", shared=False, file=f)
    k.touch(p, fa, "r")
    k.touch(p, fa + PAGE_SIZE, "r")
    k.touch(p, fa, "w")
    got = _wp_instructions(k, p, fa + PAGE_SIZE)
    # this CPU's NR_ANON_PAGES diff passes the threshold here: __inc_zone_page_state folds
    # it into the zone's and the global counter (two atomic_add)
    fold = 9 + ATOMIC_ADD + 4 + ATOMIC_ADD
    assert got[0] == WP_HEAD_FILE + WP_COPY_HEAD_PAGE + WP_COPY_MAP_FILE + WP_COPY_RMAP + fold
    assert got[1] == 0 and got[3] == WP_PUT_OLD
    assert "wp_fault" not in k.ledger.rows
    assert k.ledger.counts["wp_reuse"] == 2


def test_an_unmap_past_zap_work_stops_mid_page_and_goes_on_as_unmap_vmas_does():
    """*zap_work starts at ZAP_BLOCK_SIZE (1024 pages' worth) and each present PTE takes a
    page's: the 1025th present PTE of one unmap ends zap_pte_range mid-page, and the model
    (unmap_vmas) resets it and calls the loop again from there: one call per PTE page, plus
    one; every struct page found once (the guest's count and sum checked)."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    n = 1024 + 8
    at = k.mmap(p, n * PAGE_SIZE, "rw")
    for i in range(n):
        k.touch(p, at + i * PAGE_SIZE, "w")
    rows = k.ledger.rows
    calls = [rows[r][1] if r in rows else 0 for r in ZAP_ROWS]
    k.munmap(p, at, n * PAGE_SIZE)
    tables = ((at + n * PAGE_SIZE - 1) >> 21) - (at >> 21) + 1     # 2 MB per PTE page
    assert [rows[r][1] - c for r, c in zip(ZAP_ROWS, calls)] == [tables + 1, n, n]


# fork's copy_pte_range over one PTE page (routines/arm/copy_v7.S, one guest call), counted by
# hand the same way: the set_pte_ext calls (ptep_set_wrprotect's in the parent, set_pte_at's
# in the child) are set_pte_ext's row, the rest copy_pte's (copy_page_range in the chapter)
COPY_CALL = 15 + 18                                 # prologue; add_mm_rss_vec, check, return
COPY_RSS = 6                                        # add_mm_counter of one non-zero count
COPY_TOP, COPY_BREAK = 3, 6                         # progress >= 32; its need_resched test
COPY_NONE = COPY_TOP + 3 + 4 + 6                    # *src_pte, pte_none: progress++; the step
COPY_HEAD = COPY_TOP + 3 + 7                        # to is_cow_mapping's test
COPY_WRPROTECT = 7                                  # ptep_set_wrprotect's set_pte_at
COPY_BITS = 3 + 4                                   # mkclean, mkold; VM_PFNMAP | VM_MIXEDMAP
COPY_PAGE = 4 + 3 + 4 + 3 + 5 + 6 + 8 + 6           # vm_normal_page .. get_page, dup_rmap,
                                                    # rss[]++, the model's count and sum
COPY_SET = 6 + 3 + 6                                # set_pte_at, progress += 8, the step
COPY_ANON = COPY_HEAD + COPY_WRPROTECT + COPY_BITS + COPY_PAGE + COPY_SET
COPY_ZERO = COPY_HEAD + COPY_WRPROTECT + COPY_BITS + 4 + COPY_SET   # is_zero_pfn: no page
COPY_SHARED = COPY_HEAD + COPY_BITS + COPY_PAGE + COPY_SET          # no write-protect


def _copied(k, dst, src, vma, start, end):
    rows = ("copy_pte", "cpu_v7_set_pte_ext")
    before = [list(k.ledger.rows.get(r, ["", 0, 0, 0])) for r in rows]
    k.arch.copy_ptes(k, dst, src, vma, start, end)
    after = [k.ledger.rows[r] for r in rows]
    return [(b[1] - a[1], b[3] - a[3]) for a, b in zip(before, after)]


def test_copying_a_pte_page_is_the_hand_count():
    """Six pages of a private anonymous area: written, read (the zero page), untouched,
    then three written. Each present PTE is write-protected in the parent (set_pte_at even
    for the zero page's, already read-only) and copied old into the child; the struct
    pages take a reference and a mapping each (get_page, page_dup_rmap), as the generic
    VM's do; the fifth entry starts with progress 33 (8 + 8 + 1 + 8 + 8): need_resched."""
    from emu.kernel.mm import MM
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    at = k.mmap(p, 6 * PAGE_SIZE, "rw")
    for n, access in ((0, "w"), (1, "r"), (3, "w"), (4, "w"), (5, "w")):
        k.touch(p, at + n * PAGE_SIZE, access)
    vma, child = p.mm.find_vma(at), MM(k)
    child.insert_vma(type(vma)(vma.start, vma.end, vma.flags, anon_vma=True))
    parent_ptes = [k.machine.read_word(p.mm.ptep(at + n * PAGE_SIZE)) for n in range(6)]
    pages = [k._page_of(k._read_pte(p.mm.ptep(at + n * PAGE_SIZE))) for n in (0, 3, 4, 5)]
    assert _copied(k, child, p.mm, vma, at, at + 6 * PAGE_SIZE) == [
        (1, COPY_CALL + COPY_RSS + 4 * COPY_ANON + COPY_ZERO + COPY_NONE + COPY_BREAK),
        (10, 10 * 22)]                              # 5 present PTEs, two stores each
    assert COPY_ANON == 81 and COPY_ZERO == 46 and COPY_NONE == 16
    for n, pte in enumerate(parent_ptes):
        ptep = at + n * PAGE_SIZE
        now, copy = k.machine.read_word(p.mm.ptep(ptep)), k.machine.read_word(child.ptep(ptep))
        assert now == pte & ~0x80                   # L_PTE_WRITE off in the parent
        assert copy == (pte & ~0x82 if pte else 0)  # and YOUNG in the child: pte_mkold
    for page in pages:
        struct = k.arch._struct_page(k, page)
        assert (page.count, page.mapcount) == (2, 2)
        assert [k.machine.read_word(struct + 4), k.machine.read_word(struct + 8)] == [2, 1]
    rss = k.arch._mms[child]["block"] + 32          # mm->rss_stat: MM_FILEPAGES, ANONPAGES
    assert [k.machine.read_word(rss), k.machine.read_word(rss + 4)] == [0, 4]


def test_a_shared_areas_pte_is_copied_clean_without_a_write_protect():
    """A shared file mapping is no COW mapping: no ptep_set_wrprotect, the child's PTE
    clean and old (pte_mkclean, pte_mkold); a file page counts in rss[MM_FILEPAGES]."""
    from emu.kernel.mm import MM
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    at = k.mmap(p, PAGE_SIZE, "rw", shared=True, file=File("data", 1))
    k.touch(p, at, "w")
    vma, child = p.mm.find_vma(at), MM(k)
    child.insert_vma(type(vma)(vma.start, vma.end, vma.flags, vma.file))
    pte = k.machine.read_word(p.mm.ptep(at))
    assert _copied(k, child, p.mm, vma, at, at + PAGE_SIZE) == [
        (1, COPY_CALL + COPY_RSS + COPY_SHARED), (1, 22)]
    assert k.machine.read_word(p.mm.ptep(at)) == pte     # the parent's untouched
    assert k.machine.read_word(child.ptep(at)) == pte & ~0x42     # clean and old
    rss = k.arch._mms[child]["block"] + 32
    assert [k.machine.read_word(rss), k.machine.read_word(rss + 4)] == [1, 0]


def test_fork_skips_an_area_without_an_anon_vma_and_the_child_faults_it_in():
    """2.6.36's copy_page_range returns at once for an area with no anon_vma: a text page
    the parent read is not copied, and the child's first fetch from it is a file fault
    (find_get_page finds the page the parent mapped); a written area is copied."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    text = p.mm.vmas[0]
    k.touch(p, text.start, "x")
    at = k.mmap(p, PAGE_SIZE, "rw")
    k.touch(p, at, "w")
    assert not text.anon_vma and p.mm.find_vma(at).anon_vma
    faults, skipped = k.ledger.counts.get("faults", 0), k.ledger.counts.get(
        "copy_skipped_vmas", 0)
    child = k.fork(p)
    assert k.ledger.counts["copy_skipped_vmas"] - skipped == 1     # the text
    assert child.mm.ptep(text.start) is None or k._read_pte(child.mm.ptep(text.start)) == 0
    assert k._read_pte(child.mm.ptep(at)) != 0
    assert [v.anon_vma for v in child.mm.vmas] == [v.anon_vma for v in p.mm.vmas]
    assert k.ledger.counts.get("faults", 0) == faults
    k.touch(child, text.start, "x")
    assert k.ledger.counts["faults"] == faults + 1
    assert k._read_pte(child.mm.ptep(text.start)) >> 12 == \
        k._read_pte(p.mm.ptep(text.start)) >> 12
