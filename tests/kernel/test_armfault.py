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


def test_a_cached_page_fault_is_the_hand_count():
    # map, read a page (read into the page cache), unmap, map again: the second fault finds
    # the page in the page cache (mmap_cache cleared by the unmap: the tree's root VMA?)
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    f = File("data", 4)
    at = k.mmap(p, 4 * PAGE_SIZE, "r", shared=True, file=f)
    k.touch(p, at, "r")
    k.touch(p, at + PAGE_SIZE, "r")
    k.munmap(p, at, 4 * PAGE_SIZE)
    at = k.mmap(p, 4 * PAGE_SIZE, "r", shared=True, file=f)
    k.touch(p, at, "r")                                 # mmap_cache was cleared: a walk
    before = {n: list(k.ledger.rows[n]) for n in ("do_page_fault", "find_get_page",
                                                     "__do_fault")}
    k.touch(p, at + PAGE_SIZE, "r")                     # mmap_cache hit, page cached
    after = {n: k.ledger.rows[n] for n in before}
    assert after["do_page_fault"][3] - before["do_page_fault"][3] == \
        ENTER + DO_PAGE_FAULT + FIND_VMA_HIT + EXIT
    assert after["find_get_page"][3] - before["find_get_page"][3] == FIND_GET_PAGE
    assert after["__do_fault"][3] - before["__do_fault"][3] == DO_FAULT + RMAP_FIRST
    # the fixed estimates the guest code replaces are not charged
    for fixed in ("fault_entry", "file_fault", "page_cache_lookup"):
        assert fixed not in k.ledger.rows


def test_stat_threshold_is_vmstats():
    # mm/vmstat.c: 2 * fls(cpus) * (1 + fls(MB / 128)); 4 CPUs, 512 MB: 2 * 3 * (1 + 3)
    assert stat_threshold(512 << 8, 4) == 24
    assert stat_threshold(1 << 30, 4) == 2 * 3 * (1 + 16)     # 4 TB: fls(32768) = 16
    assert stat_threshold(1 << 35, 4) == 125                  # capped


# zap_pte_range's work on one present PTE (routines/arm/zap_v7.S), counted by hand the same
# way: the body to the page (vm_normal_page, tlb_remove_tlb_entry's range), then by kind
ZAP_HEAD = 32                                       # to pfn_to_page
ZAP_RANGE = 10                                      # tlb_remove_tlb_entry, not fullmm
ZAP_STEP = 6                                        # the loop's step and the return
ZAP_FILE = ZAP_HEAD + ZAP_RANGE + 5 + 8 + 3 + ZAP_STEP  # PageAnon, young, rss
ZAP_ANON = ZAP_HEAD + ZAP_RANGE + 5 + 4 + ZAP_STEP      # PageAnon, rss
ZAP_ZERO = 25 + ZAP_RANGE + 2 + ZAP_STEP            # the zero page: no struct page
MARK_FIRST, MARK_AGAIN = 15 + 10, 14                # SetPageReferenced's set_bit; the tests
REMOVE_LAST = 20 + 16 + 1                           # atomic_add_negative, __dec_zone_page_state
PUT = 4 + 14                                        # the mapcount check, put_page_testzero
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
    assert _zapped(k, p, at, 2) == [2 * (ZAP_FILE + MARK_FIRST), 2 * REMOVE_LAST, 2 * PUT]
    at = k.mmap(p, PAGE_SIZE, "r", shared=True, file=f)
    k.touch(p, at, "r")
    assert _zapped(k, p, at, 1) == [ZAP_FILE + MARK_AGAIN, REMOVE_LAST, PUT]
    at = k.mmap(p, 2 * PAGE_SIZE, "rw")
    k.touch(p, at, "w")                                 # an anonymous page
    k.touch(p, at + PAGE_SIZE, "r")                     # the zero page
    assert _zapped(k, p, at, 2) == [ZAP_ANON + ZAP_ZERO, REMOVE_LAST, PUT]
    assert all(k.ledger.rows[r][0] == "guest" for r in ZAP_ROWS)
    assert "zap_pte" not in k.ledger.rows or k.ledger.rows["zap_pte"][1] == 5


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
    k.arch.zap_pte(k, child.mm, vma, at, ptep, page)
    after = [k.ledger.rows[r][3] for r in ZAP_ROWS]
    fullmm_range = 3                                    # the fullmm test only
    assert [b - a for a, b in zip(before, after)] == [
        ZAP_ANON - ZAP_RANGE + fullmm_range, 14 + 1, PUT]


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


def test_a_full_pagevec_is_drained_by_the_model():
    """Every 14th anonymous page fills this CPU's pagevec: the model empties it, counted."""
    k = Kernel(Machine("cortex-a9", mmu=True), arch=ARMv7)
    p = k.spawn(TINY)
    at = k.mmap(p, 30 * PAGE_SIZE, "rw")
    for n in range(30):
        k.touch(p, at + n * PAGE_SIZE, "w")
    assert k.ledger.counts.get("lru_add_drains", 0) == 2       # pages 14 and 28
