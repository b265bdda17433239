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
