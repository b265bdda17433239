"""An inode's writeback as guest code (routines/x86/fs_writeback_2612.S, kupdate_2612.S's
sync_sb_inodes, writeback_2612.S's balance_dirty_pages): the tagged gang look-up and
mpage_writepages counted by hand, and the throttled writer's chunk from the sources'
arithmetic."""
import pytest

from emu.papers.yoshioka2005 import ext3model as e
from emu.papers.yoshioka2005.ext3model.structures import _words

F = e.FIRST_INDEX                   # the files' first page: 2^19


def _kernel(records):
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(records)
    return k


def _state(k, member):
    return k._read(k.pcpu[0] + e.PCPU["PAGE_STATE"] + e.PS[member])


def _signed(v):
    return v - (1 << 32) if v >= 1 << 31 else v


def test_the_gang_look_up_finds_the_dirty_tagged_pages_in_the_instructions_counted_by_hand():
    # 20 pages written, F .. F + 19 tagged dirty, all in one leaf (F is 64-aligned): the
    # tree of height 4 (shift 18, 12, 6, 0), the path's slots 2, 0, 0 tagged.
    k = _kernel(20)
    mapping = k.files[0]["mapping"]
    root = mapping + e.AS["PAGE_TREE"]
    results = k._alloc(64)
    run = k.machine.call("radix_tree_gang_lookup_tag", root, results, F, 14, 0)
    assert run.return_value == 14
    assert [k._read(results + 4 * i) for i in range(14)] == \
        [k._lookup(mapping, F + i) for i in range(14)]
    # __lookup_tag: 13 in, 18 at each level above the leaf (its slot tagged: 2 + 3 + 2 + 2
    # + 2 + 2 + 5), the leaf 13 to its tagged slot and 2 for j, 17 an item for 13 items
    # and 15 for the 14th (max_items reached), 8 out = 326; radix_tree_gang_lookup_tag 10
    # in, 21 a turn, 2 (ret == max_items), 7 out = 40
    assert run.instructions == 40 + 326
    # from index 0: the top node's slots 0 and 1 skipped first, 18 each = 402
    run = k.machine.call("radix_tree_gang_lookup_tag", root, results, 0, 14, 0)
    assert run.return_value == 14 and run.instructions == 402
    # past the last tagged page: nothing, the tree walked to its end
    run = k.machine.call("radix_tree_gang_lookup_tag", root, results, F + 20, 14, 0)
    assert run.return_value == 0
    # the writeback tag: none of the pages is under writeback
    run = k.machine.call("radix_tree_gang_lookup_tag", root, results, 0, 14, 1)
    assert run.return_value == 0


def test_mpage_writepages_over_a_pagevec_of_pages_under_writeback_takes_the_hand_count():
    # 14 pages written, each tagged dirty and (set here) under writeback: mpage_writepages
    # looks them up from writeback_index 0, locks each, finds it under writeback, unlocks
    # it; releases the pagevec; the next look-up from F + 14 finds nothing.
    k = _kernel(14)
    mapping = k.files[0]["mapping"]
    pages = [k._lookup(mapping, F + i) for i in range(14)]
    for page in pages:
        k._word(page + e.PG["FLAGS"],
                k._read(page + e.PG["FLAGS"]) | 1 << e.PG_BITS["writeback"])
    counts = [k._read(page + e.PG["COUNT"]) for page in pages]
    wbc = k._alloc(64)
    k._poke(wbc, _words(0, 0, 0, 14, 0, 0, 0, 0, 0, 0))
    run = k.machine.call("mpage_writepages", mapping, wbc, 0)
    assert run.return_value == 0
    # mpage_writepages' own: 28 in; the first turn 19 + 2 + 14 x 14 (lock, mapping, the
    # writeback bit, unlock's call, the loop) + 2 + 6 + 8 (cond_resched's call and its 6,
    # the jump); the second turn 19 + 2 + 3 + 6 out = 28 + 233 + 30 = 291 (with the unlocks'
    # calls, 3 each, in the 14). unlock_page 23 each: 322. __pagevec_release 156 (12 + 9
    # lru_add_drain + release_pages 4 + 14 x 9 + 5). The look-ups: pagevec_lookup_tag 13 +
    # find_get_pages_tag 129 (14 found, _read_lock_irq 5, _read_unlock_irq 4) + the gang
    # look-up from 0, 402 = 544; then 13 + 40 + the gang look-up from F + 14 with no tagged
    # page left: four __lookup_tag calls, 982 (the leaf's 50 slots skipped, 18 each),
    # 1198 (the level-2 node's 63), 1180 (the level-3 node's 63), 1126 (the top's 61),
    # and 10 + 4 x 21 + 4 + 7 around them = 4591, 4644 in all
    own = 28 + (19 + 2 + 14 * 14 + 2 + 6 + 8) + (19 + 2 + 3 + 6)
    assert run.instructions == own + 14 * 23 + 156 + 544 + 4644
    assert _signed(k._read(wbc + e.WBC["NR_TO_WRITE"])) == 14      # nothing written
    assert k._read(mapping + e.AS["WRITEBACK_INDEX"]) == F + 14
    assert [k._read(page + e.PG["COUNT"]) for page in pages] == counts
    assert not any(k._read(page + e.PG["FLAGS"]) & 1 << e.PG_BITS["locked"] for page in pages)


def test_writeback_inodes_writes_whole_pagevecs_past_nr_to_write():
    # mpage_writepages finishes the pagevec it holds when nr_to_write reaches 0 (fs/mpage.c
    # 726-727): 24 asked, two pagevecs of 14 written
    k = _kernel(40)
    k._build_kupdate_state()
    task = k.ctx[0]["task"]
    wbc = k._alloc(64)
    k._poke(wbc, _words(k.bdi, 0, 0, 24, 0, 0, 0, 0, 0, 0))
    run = k.machine.call("on_task_stack", task, k.sym["writeback_inodes"], wbc)
    assert run.return_value is not None
    assert _signed(k._read(wbc + e.WBC["NR_TO_WRITE"])) == -4
    assert (_state(k, "NR_DIRTY"), _state(k, "NR_WRITEBACK")) == (12, 28)
    mapping, inode = k.files[0]["mapping"], k.files[0]["inode"]
    assert k._read(mapping + e.AS["WRITEBACK_INDEX"]) == F + 28
    written = [k._lookup(mapping, F + i) for i in (0, 27)]
    assert all(k._read(p + e.PG["FLAGS"]) & 1 << e.PG_BITS["writeback"] for p in written)
    # still tagged dirty: redirtied (I_DIRTY_PAGES), re-dated, at the head of s_dirty
    assert k._read(inode + e.I["STATE"]) == e.I_STATE_BITS["DIRTY_PAGES"]
    assert k._read(inode + e.I["DIRTIED_WHEN"]) == k._read(k.sym["jiffies"])
    dirty = k.vsb["ext3"] + e.VSB["DIRTY"]
    assert k._read(dirty) == inode + e.I["LIST"]
    assert k._read(inode + e.I["COUNT"]) == 1                          # __iget, iput


def test_a_throttled_writer_writes_back_its_chunk_itself():
    # balance_dirty_pages over the dirty threshold: total_pages 100 (dirty_thresh 40, as
    # vm_dirty_ratio 40 of 100 with nothing mapped), ratelimit_pages 16 (set_ratelimit's
    # least): write_chunk 16 + 8 = 24, written as two pagevecs, 28 pages; dirty + writeback
    # still 60 > 40, so the writer is done by "our duty" (28 >= 24) and dirty_exceeded
    # stays set; pdflush is on the queue (BDI_pdflush): no background_writeout
    k = _kernel(60)
    k._build_kupdate_state()
    k._word(k.sym["total_pages"], 100)
    k._word(k.sym["ratelimit_pages"], 16)
    assert e.writer_chunk_pages(16) == 28
    task = k.ctx[0]["task"]
    mapping = k.files[0]["mapping"]
    k.machine.call("on_task_stack", task, k.sym["balance_dirty_pages"], mapping)
    assert (_state(k, "NR_DIRTY"), _state(k, "NR_WRITEBACK")) == (32, 28)
    assert k._read(k.sym["dirty_exceeded"]) == 1
    assert k._read(mapping + e.AS["WRITEBACK_INDEX"]) == F + 28


def test_the_chunk_of_the_mails_machine_from_the_sources_arithmetic():
    # set_ratelimit at 4 GB (MEMORY_MB) and 4 CPUs: 1,048,576 / 128 = 8192 pages, at most
    # 4 MB (1024); sync_writeback_pages 1024 + 512 = 1536; whole pagevecs of 14: 110 x 14
    assert e.ratelimit_pages(4096, 4) == 1024
    assert e.writer_chunk_pages(1024) == 1540
    assert e.ratelimit_pages(256, 4) == 512 and e.writer_chunk_pages(512) == 770   # 256 MB


def test_a_page_locked_by_another_faults():
    k = _kernel(14)
    mapping = k.files[0]["mapping"]
    page = k._lookup(mapping, F)
    k._word(page + e.PG["FLAGS"], k._read(page + e.PG["FLAGS"]) | 1 << e.PG_BITS["locked"])
    wbc = k._alloc(64)
    k._poke(wbc, _words(0, 0, 0, 14, 0, 0, 0, 0, 0, 0))
    with pytest.raises(Exception):
        k.machine.call("mpage_writepages", mapping, wbc, 0)


def test_the_mails_chunk_and_the_walk_against_the_stand_in():
    from emu.papers.yoshioka2005 import writebatch
    assert writebatch.mail_chunk_pages(4) == {"ratelimit": 1024, "write_chunk": 1536,
                                              "chunk_pages": 1540}
    # 28 pages each way: the walk finds them with two gang look-ups, the stand-in with 28
    # look-ups by index; both write each page with the same writepage
    cost = writebatch.walk_against_stand_in(pages=28, written=40)
    assert set(cost) == {"walk", "stand_in"}
    assert cost["walk"]["instructions"] < cost["stand_in"]["instructions"]
