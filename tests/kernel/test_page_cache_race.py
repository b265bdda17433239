"""Two CPUs fault the same file page in at once (emu.kernel.fault, _page_cache_read): both
miss in the page cache and both read the page, but the insert looks for the slot under the
mapping's lock, so the second finds the first's page there (add_to_page_cache's -EEXIST),
frees its own and maps the first's (mm/filemap.c of 2.6.0 and 2.6.36, page_cache_read)."""
import pytest

from emu.hw import cache as c
from emu.kernel import workloads
from emu.kernel.pages import File
from emu.kernel.pgtable import PAGE_SHIFT, PAGE_SIZE
from emu.kernel.workloads import Image

TINY = Image("tiny", text_pages=2, data_pages=0, bss_pages=0, text_touched=0, data_written=0,
             bss_written=0, stack_written=0)


@pytest.mark.parametrize("profile", ["cortex-a9", "ppc750"])
def test_two_cpus_reading_one_page_in_share_the_winners(profile):
    k = workloads.make_kernel(profile=profile, cores=2)
    f = File("shared", 4)
    maps = []
    for _ in range(2):
        p = k.spawn(TINY)
        maps.append((p, k.mmap(p, 4 * PAGE_SIZE, "r", shared=True, file=f)))
    model = k.machine.model                 # both CPUs take the fault at the same moment
    start = max(int(model.header(j)[c.H_CYCLES]) for j in range(2)) + 20000

    def task(t):
        p, at = maps[t.core]
        k.switch_to(p)                      # each CPU's context switch first
        t.spend(start - t.clock)
        before = k.ledger.snapshot()
        k.touch(p, at, "r")
        return p, at, dict(k.ledger.since(before).counts)

    (p0, at0, c0), (p1, at1, c1) = k.machine.run_tasks([task, task])
    # both missed; one read the page in, the other lost the insert and freed its page
    assert sorted([c0.get("page_cache_reads", 0), c1.get("page_cache_reads", 0)]) == [0, 1]
    assert sorted([c0.get("page_cache_races_lost", 0),
                   c1.get("page_cache_races_lost", 0)]) == [0, 1]
    loser = c0 if c0.get("page_cache_races_lost") else c1
    assert loser["pages_freed"] == 1
    page = k.page_cache.lookup(f, 0)
    assert len(k.page_cache) == 1
    # both PTEs map the page cache's page: the cache's reference and one per mapping
    assert {p0.mm.pte(at0) >> PAGE_SHIFT, p1.mm.pte(at1) >> PAGE_SHIFT} == {page.pfn}
    assert (page.count, page.mapcount) == (3, 2)
    # no other page of the file anywhere: the loser's went back to the free list
    assert [q for q in k.allocator.pages.values() if q.mapping is f] == [page]
    assert (page.pfn in k.allocator.free_list) is False
