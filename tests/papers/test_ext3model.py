"""The guest kernel under iozone's write test (emu.papers.yoshioka2005.ext3model, routines/x86/*_2612.S).

Each test builds a small Kernel (a zone of a few hundred pages) unless it needs the chapter's;
Kernel.check() verifies what the writes must have left: file sizes, bitmaps, the block map
in the indirect blocks, every cached page's bytes and buffer, the radix trees, the
transaction's data list, every lock free. The counts below are worked out by hand from the
routines (each comment says how).
"""
import numpy as np
import pytest

import emu
from emu.papers.yoshioka2005 import ext3model as e
from emu.isa.assemble import assemble, decode
from emu.run.profiler import profile_call

SMALL = dict(page_cache_bytes=512 << 10, frame_bytes=256 << 10, max_records=2000)
FILES = ("spinlock", "jbd", "buffer", "ext3", "mm", "vfs", "commit", "block", "scsi")


@pytest.mark.parametrize("kernel", sorted(e.KERNELS))
def test_the_kernel_assembles_and_disassembles_in_step(kernel):
    # emu.hw.cost reads the code by linear disassembly: the data in the files must not throw
    # it out of step
    program = assemble(e.source(kernel), "x86", 0x10000)
    starts = {insn.address for insn in decode(program.code, "x86", program.base)}
    assert [s.line for s in program.statements if s.kind == "insn"
            and s.address not in starts] == []


@pytest.mark.parametrize("name", FILES)
def test_each_routine_file_names_the_kernel_sources_it_follows(name):
    header = emu.routine(f"x86/{name}_2612.S").read_text().split("*/")[0]
    assert "2.6.12" in header and "cdecl" in header
    assert any(path in header for path in ("kernel/", "fs/", "mm/", "lib/", "arch/"))


def test_one_write_puts_the_record_in_a_new_page_on_a_new_block():
    k = e.Kernel("2.6.12", **SMALL)
    k.write_records(1)
    facts = k.check()
    assert (facts["cached_pages"], facts["data_jh"], facts["sync_datalist"]) == (1, 1, 1)
    # the running transaction's metadata list: the block bitmap (undo access), the group
    # descriptor, the inode table block (three ext3_mark_inode_dirty), the indirect block
    assert facts["t_nr_buffers"] == 4
    page = k.mem_map + e.PAGE_STRUCT * 15          # rmqueue_bulk takes 16, the last first
    assert k._read(page + e.PG["INDEX"]) == e.FIRST_INDEX
    assert k._read(page + e.PG["COUNT"]) == 2      # the page cache's and the buffer's


@pytest.mark.parametrize("kernel", sorted(e.KERNELS))
def test_reclaim_recycles_pages_and_drops_their_journal_heads(kernel):
    k = e.Kernel(kernel, **SMALL)                   # a zone of 128 pages
    k.write_records(300)
    facts = k.check()
    # 128 writes take the zone's pages; the 172 after them need 6 reclaims of 32: 192
    # pages out of the cache (20 left on the CPU's free list)
    assert facts["cached_pages"] == 300 - 6 * 32
    assert facts["sync_datalist"] == facts["data_jh"] == 300 - 6 * 32
    assert k._read(k.zone + e.ZONE["NR_INACTIVE"]) == 300 - 6 * 32


def test_a_file_crosses_into_its_next_block_group():
    k = e.Kernel("patched", used_blocks=e.DATA_PER_GROUP - 10, **SMALL)
    k.write_records(40)                             # 10 in the first group, 30 in the next
    k.check()
    assert k.block_of(0, 10) == (e.GROUP_NO + 2) * e.BLOCKS_PER_GROUP + e.DATA_START_BIT


def _state(k, records):
    """What a run of writes leaves in the page cache, as comparable words."""
    def words(address, n):
        return np.frombuffer(k.machine.read(address, 4 * n), np.uint32).tolist()
    out = {"pages": words(k.mem_map, 8 * records)}
    # the data list, in order: each journal head's words with its pointers as positions
    # (the first write also gives the metadata buffers journal heads, which prefill leaves
    # to the first real write: the data heads' addresses differ, not their contents)
    head = k._read(k.transaction + e.T["SYNC_DATA"])
    jhs, jh = [], head
    while True:
        jhs.append(jh)
        jh = k._read(jh + e.JH["TNEXT"])
        if jh == head:
            break
    position = {jh: n for n, jh in enumerate(jhs)}
    links = (e.JH["TNEXT"] // 4, e.JH["TPREV"] // 4)
    out["data list"] = [[w for i, w in enumerate(words(jh, e.JH_SIZE // 4)) if i not in links] +
                        [position[k._read(jh + e.JH["TNEXT"])],
                         position[k._read(jh + e.JH["TPREV"])]] for jh in jhs]
    ac = k._read(k.caches["bh_cachep"] + e.KC["ARRAY"])
    bhs = np.array(words(k._read(ac + e.AC["START"]), 12 * records)).reshape(records, 12)
    out["buffer heads"] = [row[:9].tolist() + [position[int(row[9])]] + row[10:].tolist()
                           for row in bhs]
    out["bh slab next"] = k._read(ac + e.AC["NEXT"])
    ac = k._read(k.caches["radix_tree_node_cachep"] + e.KC["ARRAY"])
    start = k._read(ac + e.AC["START"])
    out["radix nodes"] = words(start, 2 * e.RADIX_NODE // 4)
    f = k.files[0]
    top = k._read(f["mapping"] + e.AS["PAGE_TREE"] + e.RR["RNODE"])
    out["radix top and level 3"] = words(top, e.RADIX_NODE // 4) + words(f["level3"]
                                                                          if "level3" in f
                                                                          else top, 1)
    out["zone"] = words(k.zone, e.ZONE_SIZE // 4)[:3] + words(k.zone + e.ZONE["INACTIVE"], 3)
    out["inode"] = [k._read(f["inode"] + e.I["SIZE"], 8), k._read(f["inode"] + e.I["BLOCKS"]),
                    k._read(f["inode"] + e.EI["DISKSIZE"], 8),
                    k._read(f["inode"] + e.EI["LAST_ALLOC_LOGICAL"], 8),
                    k._read(f["mapping"] + e.AS["NRPAGES"]), k._read(f["file"] + e.F["POS"], 8)]
    g = e.GROUP_NO + 1
    out["bitmap"] = k.machine.read(k.bitmaps[g], e.PAGE)
    out["group free"] = k._read(k._block_data(k.gd_block) + 32 * (g & 127) + e.GD["FREE_BLOCKS"],
                                2)
    out["free blocks"] = [k._read(k.sb + e.SB["FREE_COUNT"]),
                          k._read(k.pcpu[0] + e.PCPU["FBC_COUNT"]),
                          k._read(k.pcpu[0] + e.PCPU["BH_NR"])]
    dind = k._block_data(k._read(f["inode"] + e.EI["DIND"]))
    ind = k._block_data(k._read(dind + 4 * ((e.FIRST_INDEX - e.DIND_START) >> 10)))
    out["indirect block"] = words(ind, 1024)
    return out


def test_prefill_leaves_what_the_writes_leave():
    # the same 48 records written by the routines and by prefill: the page cache, the
    # trees, the lists, the blocks and the sizes are word for word the same
    written, filled = e.Kernel("2.6.12", **SMALL), e.Kernel("2.6.12", **SMALL)
    written.write_records(48)
    filled.prefill(48)
    filled.check()
    a, b = _state(written, 48), _state(filled, 48)
    assert a.keys() == b.keys()
    for key in a:
        assert a[key] == b[key], key


def _lock_calls(k, records):
    """How many times each lock routine ran over ``records`` writes."""
    run = profile_call(k.machine, *k.calls(records)[0], every=997)
    k.written += records
    table = run.table.set_index("address")
    return {name: int(table.loc[k.sym[name], "hits"]) for name in
            ("_spin_lock", "_spin_lock_irq", "_write_lock_irq", "_read_lock_irq")}


def test_lock_calls_per_write_by_hand():
    k = e.Kernel("2.6.12", page_cache_bytes=1 << 20, frame_bytes=256 << 10, max_records=400)
    k.write_records(64)                             # no reclaim: the zone has 256 pages
    calls = _lock_calls(k, 32)
    # _spin_lock per write: journal_start and journal_stop take j_state_lock and
    # t_handle_lock (4), create_empty_buffers the private_lock, inode_add_bytes i_lock,
    # ext3_new_block the group's lock, journal_dirty_data j_list_lock (4 more): 8; the
    # free-blocks counter folds into its total every 32 blocks (at the 96th): 1; the
    # zone's lock for each 16 pages rmqueue_bulk takes onto the CPU's list: 2; the slab
    # grows twice, each time four holds of the cache's spinlock (cache_alloc_refill finds
    # nothing, cache_grow takes it twice, the retry once): the buffer heads' 77th object
    # (batches of 16, then 60) at the 77th write, the journal heads' 77th at a write
    # before it (the first write takes five: its data buffer's and four metadata ones')
    assert calls["_spin_lock"] == 8 * 32 + 1 + 2 + 2 * 4
    assert calls["_spin_lock_irq"] == 32            # __pagevec_lru_add: the zone's lru_lock
    assert calls["_write_lock_irq"] == 2 * 32       # add_to_page_cache, the dirty tag
    assert calls["_read_lock_irq"] == 2 * 32        # find_lock_page, find_get_page (bdev)


def test_reclaim_adds_its_locks_by_hand():
    k = e.Kernel("2.6.12", **SMALL)                 # a zone of 128 pages
    k.write_records(128 + 32)                       # the first reclaim: 32 on the list
    calls = _lock_calls(k, 64)                      # two more reclaims of 32
    # each reclaimed page: j_list_lock (journal_try_to_free_buffers) and the private_lock
    # (try_to_free_buffers), the tree lock twice (writeback's tag, remove_from_page_cache);
    # each reclaim: the lru_lock once; folds of the counter at the 192nd and 224th block
    assert calls["_spin_lock"] == 8 * 64 + 2 + 2 * 64
    assert calls["_spin_lock_irq"] == 64 + 2
    assert calls["_write_lock_irq"] == 2 * 64 + 2 * 64


def test_four_cpus_write_their_files_through_one_journal():
    k = e.Kernel("patched", cpus=4, **SMALL)
    k.write_records(40)
    facts = k.check()
    assert facts["cached_pages"] == facts["sync_datalist"] == 4 * 40
    # on the transaction's metadata list: four files' bitmaps, their indirect blocks (two
    # each: page 12 of the run is the first of a new indirect block), the group descriptor
    # block and the inode table block they share
    assert (e.FIRST_INDEX + 12 - e.DIND_START) % e.ADDR_PER_BLOCK == 0
    assert facts["t_nr_buffers"] == 4 + 4 * 2 + 2


def test_the_kernel_refuses_what_it_was_not_built_for():
    with pytest.raises(ValueError, match="cpus must be from 1 to 8"):
        e.Kernel("2.6.12", cpus=9)
    with pytest.raises(ValueError, match="power-of-two"):
        e.Kernel("2.6.12", frame_bytes=3 << 12)
    with pytest.raises(ValueError, match="unknown kernel"):
        e.source("2.6.13")
    k = e.Kernel("2.6.12", **SMALL)
    with pytest.raises(ValueError, match="more than this Kernel was built for"):
        k.write_records(2001)
    k.write_records(1)
    with pytest.raises(ValueError, match="fresh Kernel"):
        k.prefill(16)


def test_paced_writes_halt_the_cpu_between_writes_for_the_rest_of_the_period():
    period, records = 400_000, 6
    k = e.Kernel("2.6.12", cpus=2, max_records=64)
    runs = k.paced_writes(records, period)
    k.check()
    assert all(r.cycles < period // 2 for rs in runs for r in rs)   # writes are short
    # CPU 0's first write is due at once, CPU 1's half a period later (the disk in turn)
    assert k.halts == [records - 1, records]
    assert runs.busy[0] > sum(r.cycles for r in runs[0]) + k.writeback_cycles[0]
    for cpu, phase in ((0, 0), (1, period // 2)):
        # write i is due at phase + i x period: the CPU is halted from the end of write i-1
        # (writeback's look in the pause, the disk driver's, and the idle loop's entry) to
        # then, so halted = phase + 5 periods - writes 0-4 - writeback - the driver, less
        # the idle loop's entries and exits, a few hundred cycles each
        writes = sum(r.cycles for r in runs[cpu][:-1])
        most = (phase + (records - 1) * period - writes - k.writeback_cycles[cpu] -
                k.disk_cycles[cpu])
        assert most - 2_000 * k.halts[cpu] <= k.halted_cycles[cpu] < most


def test_a_writer_that_is_always_due_never_halts():
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=64)
    k.paced_writes(4, 1_000)                          # a write takes far more than 1,000
    assert k.halts == [0] and k.halted_cycles == [0]
    k.check()


def test_paced_writes_need_a_second_core():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    with pytest.raises(ValueError, match="cores=2"):
        k.paced_writes(2, 100_000)
    with pytest.raises(ValueError, match="cores must be"):
        e.Kernel("2.6.12", cpus=2, cores=1)


def test_the_stagger_estimate_moves_the_writers_due_times():
    from emu.hw import estimates
    name, nominal, low, high, why = e.STAGGER
    assert (nominal, low, high) == (1.0, 0.0, 1.0) and why
    with estimates.moved({name: low}) as watch:        # all four due together
        k = e.Kernel("2.6.12", cpus=2, max_records=64)
        k.paced_writes(3, 400_000)
    assert name in watch.read
    assert k.halts == [2, 2]              # both CPUs' first writes due at once: no halt


def _tagged(k, mapping, index, tag):
    """Is ``index`` tagged ``tag`` (0 dirty, 1 writeback) in every node on its path?"""
    node = k._read(mapping + e.AS["PAGE_TREE"] + e.RR["RNODE"])
    bits = []
    for level in range(e.RADIX_HEIGHT - 1, -1, -1):
        offset = (index >> (6 * level)) & 63
        word = k._read(node + e.RN["TAGS"] + 8 * tag + 4 * (offset >> 5))
        bits.append(bool(word >> (offset & 31) & 1))
        node = k._read(node + e.RN["SLOTS"] + 4 * offset)
    return bits


def test_writeback_page_cleans_the_page_and_its_buffer_and_ends_the_write():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(8)
    mapping, index = k.files[0]["mapping"], e.FIRST_INDEX + 2
    page = k._lookup(mapping, index)
    bh = k._read(page + e.PG["PRIVATE"])
    count = k._read(page + e.PG["COUNT"])
    assert k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["dirty"] & 1
    assert _tagged(k, mapping, index, 0) == [True] * 4
    handles = k._read(k.transaction + e.T["HANDLE_COUNT"])
    assert k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping, index).return_value == 1
    # ext3_ordered_writepage's handle: one more on the transaction, and gone again
    assert k._read(k.transaction + e.T["HANDLE_COUNT"]) == handles + 1
    assert k._read(k.transaction + e.T["UPDATES"]) == 0
    # the write waits in the disk's queue: the page under writeback, its buffer locked
    flags, state = k._read(page + e.PG["FLAGS"]), k._read(bh + e.BH["STATE"])
    assert flags >> e.PG_BITS["writeback"] & 1 and state >> e.BH_BITS["Lock"] & 1
    assert _tagged(k, mapping, index, 1) == [True] * 4
    k.end_all_io()                                  # the disk takes it, its interrupt ends it
    flags, state = k._read(page + e.PG["FLAGS"]), k._read(bh + e.BH["STATE"])
    for bit in ("dirty", "writeback", "locked"):
        assert not flags >> e.PG_BITS[bit] & 1, bit
    for bit in ("Dirty", "Lock", "Async_Write"):
        assert not state >> e.BH_BITS[bit] & 1, bit
    assert state >> e.BH_BITS["Uptodate"] & 1 and state >> e.BH_BITS["JBD"] & 1
    assert k._read(bh + e.BH["END_IO"]) == k.sym["end_buffer_async_write"]
    assert k._read(page + e.PG["COUNT"]) == count            # find_get_page's ref dropped
    # its own tag gone; the upper nodes keep the dirty tag for the other 7 pages
    assert _tagged(k, mapping, index, 0) == [True, True, True, False]
    assert _tagged(k, mapping, index, 1) == [False] * 4       # the writeback tag cleared
    assert _tagged(k, mapping, index + 1, 0) == [True] * 4
    for i in (index, e.FIRST_INDEX + 9):        # clean now; not in the cache
        assert k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping, i).return_value == 0
    k.check()


def test_prefill_leaves_the_pages_writeback_passed_clean():
    k = e.Kernel("2.6.12", cpus=1, max_records=512, page_cache_bytes=8 << 20,
                 frame_bytes=8 << 20)
    k.prefill(records=64, clean_before=16)
    mapping = k.files[0]["mapping"]
    for offset, dirty in ((0, False), (15, False), (16, True), (63, True)):
        page = k._lookup(mapping, e.FIRST_INDEX + offset)
        bh = k._read(page + e.PG["PRIVATE"])
        assert bool(k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["dirty"] & 1) == dirty
        assert bool(k._read(bh + e.BH["STATE"]) >> e.BH_BITS["Dirty"] & 1) == dirty
        assert _tagged(k, mapping, e.FIRST_INDEX + offset, 0)[-1] == dirty
    k.check()
    with pytest.raises(ValueError, match="clean_before"):
        e.Kernel("2.6.12", cpus=1, max_records=512, page_cache_bytes=8 << 20,
                 frame_bytes=8 << 20).prefill(records=64, clean_before=65)


def test_paced_writes_write_back_a_page_in_each_pause():
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=512, page_cache_bytes=8 << 20,
                 frame_bytes=8 << 20)
    k.prefill(records=256, clean_before=k.writeback_point(256))
    lag = round(e.DIRTY_FRACTION[1] * k.pool_pages)            # 10% of 2,048 pages: 205
    assert k.writeback_point(256) == 256 - lag
    k.paced_writes(5, 400_000)
    assert k.written_back == [4]                    # a pause after each write but the last
    mapping = k.files[0]["mapping"]
    for offset in range(256 - lag, 256 - lag + 4):  # the oldest dirty pages, in order
        page = k._lookup(mapping, e.FIRST_INDEX + offset)
        assert not k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["dirty"] & 1
    page = k._lookup(mapping, e.FIRST_INDEX + 256 - lag + 4)
    assert k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["dirty"] & 1
    k.check()


def _bh_bits(k, bh, *bits):
    state = k._read(bh + e.BH["STATE"])
    return [bool(state >> e.BH_BITS[b] & 1) for b in bits]


def test_the_commit_writes_a_dirty_data_buffer_and_unfiles_it_when_it_comes_round_clean():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(4)                              # four dirty buffers on the data list
    mapping, t = k.files[0]["mapping"], k.transaction
    bhs = [k._read(k._lookup(mapping, e.FIRST_INDEX + o) + e.PG["PRIVATE"]) for o in range(4)]
    jhs = [k._read(bh + e.BH["PRIVATE"]) for bh in bhs]
    assert k._read(t + e.T["SYNC_DATA"]) == jhs[0]
    assert [k._read(bh + e.BH["COUNT"]) for bh in bhs] == [1] * 4     # the journal head's
    ac = k._read(k.caches["journal_head_cache"] + e.KC["ARRAY"])
    avail = k._read(ac + e.AC["AVAIL"])
    # two turns: buffers 0 and 1 are dirty, so ll_rw_block writes them (one request: the
    # second bio joins the first, blocks 0 and 1 being next to each other, and the disk
    # ends both); they stay on the list, the head moves on to buffer 2
    k.machine.call("journal_commit_transaction", k.journal, t, 2)
    assert k._queued() == 1
    k.end_all_io()
    for bh in bhs[:2]:
        assert _bh_bits(k, bh, "Dirty", "Lock", "Uptodate", "Req", "JBD") == \
            [False, False, True, True, True]
        assert k._read(bh + e.BH["END_IO"]) == k.sym["end_buffer_write_sync"]
        assert k._read(bh + e.BH["COUNT"]) == 1     # get_bh, ll_rw_block's, both released
    assert _bh_bits(k, bhs[2], "Dirty") == [True]
    assert k._read(t + e.T["SYNC_DATA"]) == jhs[2]
    assert k.check()["sync_datalist"] == 4
    # four more: 2 and 3 written, then 0 and 1, clean, off the list and their heads freed
    k.machine.call("journal_commit_transaction", k.journal, t, 4)
    k.end_all_io()
    for bh in bhs[:2]:
        assert _bh_bits(k, bh, "JBD", "Dirty") == [False, False]
        assert k._read(bh + e.BH["PRIVATE"]) == 0 and k._read(bh + e.BH["COUNT"]) == 0
    assert _bh_bits(k, bhs[3], "Dirty", "JBD") == [False, True]
    assert k._read(ac + e.AC["AVAIL"]) == avail + 2
    assert k._read(ac + e.AC["ENTRY"] + 4 * (avail + 1)) == jhs[1]      # the last freed
    assert k._read(t + e.T["SYNC_DATA"]) == jhs[2]
    page = k._lookup(mapping, e.FIRST_INDEX)       # ll_rw_block writes buffers, not pages
    assert k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["dirty"] & 1
    facts = k.check()
    assert facts["sync_datalist"] == facts["data_jh"] == 2
    # the page is still dirty, so pdflush writes it, and ext3_ordered_writepage's
    # journal_dirty_data files its buffer on the running transaction again (a new head)
    assert k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping,
                          e.FIRST_INDEX).return_value == 1
    k.end_all_io()
    assert _bh_bits(k, bhs[0], "JBD", "Dirty") == [True, False]
    assert k._read(bhs[0] + e.BH["COUNT"]) == 1
    facts = k.check()
    assert facts["sync_datalist"] == facts["data_jh"] == 3


def test_the_commit_of_an_empty_data_list_does_nothing():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    run = k.machine.call("journal_commit_transaction", k.journal, k.transaction, 3)
    assert k._read(k.transaction + e.T["SYNC_DATA"]) == 0
    assert run.cycles > 0
    k._check_locks()                                # j_list_lock taken and let go


def test_prefill_leaves_the_pages_a_commit_passed_off_the_data_list():
    k = e.Kernel("2.6.12", cpus=1, max_records=512, page_cache_bytes=8 << 20,
                 frame_bytes=8 << 20)
    k.prefill(records=64, clean_before=32, committed_before=16)
    mapping = k.files[0]["mapping"]
    for offset, filed in ((0, False), (15, False), (16, True), (63, True)):
        bh = k._read(k._lookup(mapping, e.FIRST_INDEX + offset) + e.PG["PRIVATE"])
        assert _bh_bits(k, bh, "JBD") == [filed]
        assert k._read(bh + e.BH["COUNT"]) == filed
        assert bool(k._read(bh + e.BH["PRIVATE"])) == filed
    assert k.check()["sync_datalist"] == 48
    with pytest.raises(ValueError, match="committed_before"):
        e.Kernel("2.6.12", cpus=1, max_records=512, page_cache_bytes=8 << 20,
                 frame_bytes=8 << 20).prefill(records=64, clean_before=16,
                                               committed_before=17)


def test_paced_writes_turn_the_commits_data_loop_once_in_each_pause():
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=512, page_cache_bytes=8 << 20,
                 frame_bytes=8 << 20)
    k.prefill(records=256, clean_before=k.writeback_point(256), committed_before=40)
    k.commit_lag = 216
    mapping = k.files[0]["mapping"]
    bhs = [k._read(k._lookup(mapping, e.FIRST_INDEX + o) + e.PG["PRIVATE"])
           for o in range(40, 45)]
    jhs = [k._read(bh + e.BH["PRIVATE"]) for bh in bhs]
    k.paced_writes(5, 400_000)
    assert k.commit_turns == [4] and k.commit_cycles[0] > 0
    # the slab's per-CPU array is last in, first out: each write after a pause takes the
    # journal head the loop gave back in that pause
    new = [k._read(k._read(k._lookup(mapping, e.FIRST_INDEX + 256 + i) + e.PG["PRIVATE"])
                   + e.BH["PRIVATE"]) for i in range(1, 5)]
    assert new == jhs[:4]
    # the oldest four on the list (clean: writeback passed them) are off it; the fifth not
    assert [_bh_bits(k, bh, "JBD")[0] for bh in bhs] == [False] * 4 + [True]
    assert k.check()["sync_datalist"] == 256 - 40 - 4 + 5
    # half of the writes a writer makes in 5 s at a write every 246,812 cycles at 2.2 GHz:
    # 5 x 2.2e9 / 246,812 / 2 = 1.1e10 / 493,624 = 22,284.2
    assert k.commit_age(246_812, 2_200_000_000) == 22_284


def _page_state(k, cpu, member):
    return k._read(k.pcpu[cpu] + e.PCPU["PAGE_STATE"] + e.PS[member])


def test_the_dirty_and_writeback_page_counts_follow_the_pages():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    members = [k._read(k.sym["writeback_state_members"] + 4 * i) for i in range(4)]
    assert members == [e.PS[m] for m in ("NR_DIRTY", "NR_UNSTABLE", "NR_MAPPED",
                                        "NR_WRITEBACK")]
    k.write_records(8)                              # each write dirties its page once
    assert _page_state(k, 0, "NR_DIRTY") == 8
    mapping = k.files[0]["mapping"]
    k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping, e.FIRST_INDEX + 3)
    # clear_page_dirty_for_io takes one off; TestSetPageWriteback adds one under writeback,
    # TestClearPageWriteback (the disk's interrupt) takes it off again
    assert _page_state(k, 0, "NR_DIRTY") == 7
    assert _page_state(k, 0, "NR_WRITEBACK") == 1
    k.end_all_io()
    assert _page_state(k, 0, "NR_WRITEBACK") == 0


def test_balance_dirty_pages_runs_once_in_ratelimit_pages_writes():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    # 4 GB (MEMORY_MB's nominal) of 4 KB pages over one CPU x 32 is 32,768: capped at 4 MB
    # of pages, 1,024
    assert k.ratelimit == 1024 and k._read(k.sym["total_pages"]) == 4096 * 256
    k._word(k.pcpu[0] + e.PCPU["RATELIMITS"], 1022)
    run = profile_call(k.machine, *k.calls(4)[0], every=997)
    k.written += 4
    # counts before each write 1022, 1023, 1024 (>= 1024: balance_dirty_pages, reset), 0
    table = run.table.set_index("address")
    assert int(table.loc[k.sym["balance_dirty_pages"], "hits"]) == 1
    assert k._read(k.pcpu[0] + e.PCPU["RATELIMITS"]) == 1
    k.check()


def test_balance_dirty_pages_refuses_to_throttle_a_writer():
    # over vm_dirty_ratio (40%) of the machine's pages the writer would write back itself
    # and sleep, which the model has not: the run stops there
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    total = k._read(k.sym["total_pages"])
    k._word(k.pcpu[0] + e.PCPU["PAGE_STATE"] + e.PS["NR_DIRTY"], total * 40 // 100)
    k._word(k.pcpu[0] + e.PCPU["RATELIMITS"], 1024)
    with pytest.raises(emu.GuestError, match="balance_dirty_pages"):
        k.write_records(1)


def test_a_buffers_write_goes_through_a_bio_and_a_request_and_both_come_back():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(8)
    mapping, index = k.files[0]["mapping"], e.FIRST_INDEX + 5
    bh = k._read(k._lookup(mapping, index) + e.PG["PRIVATE"])
    arrays = {name: k._read(k.caches[name] + e.KC["ARRAY"])
              for name in ("bio_slab", "biovec_slab", "request_cachep")}
    avail = {name: k._read(ac + e.AC["AVAIL"]) for name, ac in arrays.items()}
    stats = k.pcpu[0] + e.PCPU["DISK_STATS"]
    assert k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping, index).return_value == 1
    assert k._queued() == 1                         # the request waits for the disk
    k.end_all_io()
    # each object went back to its slab's per-CPU array, on top: an array that was empty
    # grew the cache by a batch of 16 (BATCHREFILL_LIMIT: untouched), handed one out and
    # took it back (16); one that had objects has as many again
    for name, ac in arrays.items():
        assert k._read(ac + e.AC["AVAIL"]) == (avail[name] or 16), name
    bio = k._read(arrays["bio_slab"] + e.AC["ENTRY"] + 4 * (k._read(arrays["bio_slab"] +
                                                                  e.AC["AVAIL"]) - 1))
    # the freed bio as bio_endio left it: all 4,096 bytes done (size 0, the sector moved on
    # by 8), its buffer, no reference
    block = k._read(bh + e.BH["BLOCKNR"])
    assert k._read(bio + e.BIO["PRIVATE"]) == bh and k._read(bio + e.BIO["SIZE"]) == 0
    assert k._read(bio + e.BIO["SECTOR"]) == 8 * block + 8
    assert k._read(bio + e.BIO["CNT"]) == 0 and k._read(bio + e.BIO["RW"]) == 1
    q = k.queue
    assert k._read(q + e.Q["QUEUE_HEAD"]) == q + e.Q["QUEUE_HEAD"]      # empty again
    assert k._read(q + e.Q["RQ_COUNT"] + 4) == 0 and k._read(q + e.Q["QUEUE_FLAGS"]) == 0
    assert k._read(stats + e.DS["WRITES"]) == 1 and k._read(stats + e.DS["WRITE_SECTORS"]) == 8
    assert k._read(k.pcpu[0] + e.PCPU["PAGE_STATE"] + e.PS["PGPGOUT"]) == 8
    k.check()


def _queue(k):
    """The queued requests, oldest first: (sector, nr_sectors, bios)."""
    head, out = k.queue + e.Q["QUEUE_HEAD"], []
    rq = k._read(head)
    while rq != head:
        bios, bio = 0, k._read(rq + e.RQ["BIO"])
        while bio:
            bios, bio = bios + 1, k._read(bio + e.BIO["NEXT"])
        out.append((k._read(rq + e.RQ["SECTOR"]), k._read(rq + e.RQ["NR_SECTORS"]), bios))
        rq = k._read(rq)
    return out


def test_bios_of_adjacent_blocks_join_the_queued_request_up_to_max_sectors():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(8)
    mapping = k.files[0]["mapping"]
    sectors = [k._sector(mapping, e.FIRST_INDEX + i) for i in range(8)]
    assert sectors == [sectors[0] + 8 * i for i in range(8)]    # blocks one after another
    k._word(k.queue + e.Q["MAX_SECTORS"], 3 * 8)    # three pages a request
    for i in range(5):
        assert k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping,
                              e.FIRST_INDEX + i).return_value == 1
    # pages 0-2 in one request (two back merges: its hash entry moved twice), 3-4 in the next:
    # page 3's bio was refused (3 x 8 + 8 > 24), the full request marked REQ_NOMERGE
    assert _queue(k) == [(sectors[0], 24, 3), (sectors[3], 16, 2)]
    first = k._read(k.queue + e.Q["QUEUE_HEAD"])
    assert k._read(first + e.RQ["FLAGS"]) & e.REQ_FLAGS["NOMERGE"]
    stats = k.pcpu[0] + e.PCPU["DISK_STATS"]
    assert k._read(stats + e.DS["WRITE_MERGES"]) == 3 and k._queued() == 2
    assert k._read(stats + e.DS["WRITE_SECTORS"]) == 5 * 8
    # the driver takes the full one (it ends where the second starts): a scatterlist of
    # three pages, a WRITE(10) of 24 sectors at its first
    rq = k.machine.call("disk_dispatch", k.queue, sectors[3]).return_value
    assert rq == first and _queue(k) == [(sectors[3], 16, 2)]
    cmd = k._read(rq + e.RQ["SPECIAL"])
    assert k._read(cmd + e.CMD["USE_SG"]) == 3 and k._read(cmd + e.CMD["BUFFLEN"]) == 3 * 4096
    cdb = k.machine.read(cmd + e.CMD["CMND"], 10)
    assert cdb[0] == 0x2A and int.from_bytes(cdb[2:6], "big") == sectors[0]
    assert int.from_bytes(cdb[7:9], "big") == 24
    sg = k._read(cmd + e.CMD["BUFFER"])
    assert [k._read(sg + e.SG_SIZE * i) for i in range(3)] == \
        [k._lookup(mapping, e.FIRST_INDEX + i) for i in range(3)]
    # its interrupt ends the three pages' writeback, and only theirs
    k.machine.call("disk_interrupt", k.pdflush[0], rq)
    for i in range(5):
        page = k._lookup(mapping, e.FIRST_INDEX + i)
        assert bool(k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["writeback"] & 1) == (i >= 3)
    assert k._read(stats + e.DS["WRITES"]) == 1 and k._queued() == 1
    assert k._read(k.pcpu[0] + e.PCPU["SOFTIRQ_PENDING"]) == 0
    k.end_all_io()
    assert k._queued() == 0 and _queue(k) == []
    k.check()


def test_a_bio_of_another_disk_never_joins_a_request():
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(2)
    mapping = k.files[0]["mapping"]
    k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping, e.FIRST_INDEX)
    rq = k._read(k.queue + e.Q["QUEUE_HEAD"])
    k._word(rq + e.RQ["RQ_DISK"], k._alloc(64))    # the queued request: another gendisk
    k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping, e.FIRST_INDEX + 1)
    assert [n for _, n, _ in _queue(k)] == [8, 8]   # elv_rq_merge_ok said no
