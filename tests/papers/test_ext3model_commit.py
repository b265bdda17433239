"""kjournald's commit of metadata (routines/x86/commit_meta_2612.S) and the CPU that takes the
disk's interrupt (ext3model.IRQ_CPU). Counts worked out by hand from the routines and from
fs/jbd/commit.c, journal.c and checkpoint.c of 2.6.12 (each comment says how)."""
import pytest

from emu.hw import estimates
from emu.hw.faults import GuestFault
from emu.papers.yoshioka2005 import ext3model as e

MAGIC = bytes.fromhex("c03b3998")       # JFS_MAGIC_NUMBER, big-endian on the disk


class _Here:
    """A task stand-in: the Kernel's guest calls on its machine, outside paced writes."""
    def __init__(self, k):
        self.k = k

    def call(self, *args):
        return self.k.machine.call(*args)


def _be(k, address):
    return int.from_bytes(k.machine.read(address, 4), "big")


def _logged_kernel(writes=4):
    """A one-CPU Kernel after ``writes`` writes: the metadata they dirtied on t_buffers."""
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(writes)
    return k


def test_the_first_writes_dirty_four_metadata_buffers_and_a_commit_counts_the_intervals():
    k = _logged_kernel()
    blocks = [k._read(bh + e.BH["BLOCKNR"]) for bh in k._metadata_list()]
    # the inode table's block (quota, splice, size: ext3_mark_inode_dirty), the data group's
    # bitmap (journal_get_undo_access), the group descriptors' block, the indirect block
    g = e.GROUP_NO * e.BLOCKS_PER_GROUP
    assert blocks[0] == k.itable_block and blocks[2] == k.gd_block
    assert blocks[1] == (e.GROUP_NO + 1) * e.BLOCKS_PER_GROUP          # bit 0 of group 33
    assert g < blocks[3] < g + e.DATA_START_BIT and len(blocks) == 4
    # an interval of 44,569 writes from page 4 (index 2^19 + 4, 1036 mapped before the
    # double-indirect range): indirect slots 523,256 >> 10 = 510 to (524,288 + 44,572 -
    # 1036) = 567,824 >> 10 = 554, 45 of them; offsets 4 to 44,572 of the file's groups
    # (31,744 data blocks each): groups 33 and 34, 2 bitmaps; and the two shared
    assert k.metadata_per_commit(44_569) == 2 + 45 + 2
    # of the four logged, the two every commit logs again: the inode table's and the group
    # descriptors' blocks (the bitmap and the indirect block are the file's own)
    assert k.shared_metadata() == 2
    with pytest.raises(ValueError, match="positive"):
        k.metadata_per_commit(0)


def test_a_commit_logs_each_buffer_behind_a_descriptor_and_ends_with_a_commit_block():
    k = _logged_kernel()
    j, t = k.journal, k.transaction
    bhs = k._metadata_list()
    jhs = [k._read(bh + e.BH["PRIVATE"]) for bh in bhs]
    counts = [k._read(bh + e.BH["COUNT"]) for bh in bhs]
    bitmap_jh = jhs[1]
    assert k._read(bitmap_jh + e.JH["COMMITTED"])               # the undo copy
    k.meta_per_commit = 4
    for _ in range(4):
        k._commit_metadata(_Here(k), 0)
    assert k.meta_logged == 4 and k.meta_turns == [4] and k._queued() == 0
    # the log: a descriptor, the four buffers, the commit block (journal_next_log_block six
    # times from j_first)
    assert k._read(j + e.J["HEAD"]) == e.LOG_START + 6
    assert k._read(j + e.J["FREE"]) == e.LOG_BLOCKS - 6
    # the descriptor (control buffer 0): header, then a tag per buffer, the first followed
    # by the journal's uuid; SAME_UUID (2) on the others, LAST_TAG (8) on the last
    desc, commit = (k._read(j + e.J["C_CTL"] + 4 * i) for i in range(2))
    data = k._read(desc + e.BH["DATA"])
    assert k.machine.read(data, 4) == MAGIC and _be(k, data + 4) == 1 and _be(k, data + 8) == 1
    assert k._read(desc + e.BH["BLOCKNR"]) == e.LOG_START
    tags, at = [], data + 12
    for i in range(4):
        tags.append((_be(k, at), _be(k, at + 4)))
        at += 8 + (16 if i == 0 else 0)
    assert tags == [(k._read(bh + e.BH["BLOCKNR"]), f) for bh, f in zip(bhs, (0, 2, 2, 10))]
    assert k.machine.read(data + 20, 16) == bytes(range(0x11, 0x21))
    assert _be(k, at) == 0                                      # the rest zeroed
    # the commit block: its header (type 2, tid 1) at offset 0, the next log block
    cdata = k._read(commit + e.BH["DATA"])
    assert k.machine.read(cdata, 4) == MAGIC and _be(k, cdata + 4) == 2
    assert k._read(commit + e.BH["BLOCKNR"]) == e.LOG_START + 5
    for ctl in (desc, commit):                  # released: no journal head, no reference
        assert k._read(ctl + e.BH["COUNT"]) == 0 and not k._read(ctl + e.BH["PRIVATE"])
    # every list of the transaction empty but the data list; the four on its checkpoint
    # list (each inserted at the head: 3, 2, 1, 0 round the ring), unfiled, jbddirty clear
    for name in ("BUFFERS", "NR_BUFFERS", "FORGET", "IOBUF", "SHADOW", "LOG"):
        assert k._read(t + e.T[name]) == 0, name
    ring, jh = [], k._read(t + e.T["CHECKPOINT"])
    for _ in range(4):
        ring.append(jh)
        assert k._read(jh + e.JH["CP_T"]) == t and k._read(jh + e.JH["TRANSACTION"]) == 0
        assert k._read(jh + e.JH["JLIST"]) == e.BJ["NONE"]
        jh = k._read(jh + e.JH["CPNEXT"])
    assert ring == jhs[::-1] and jh == ring[0]
    assert [k._read(bh + e.BH["COUNT"]) for bh in bhs] == counts
    assert not any(k._read(bh + e.BH["STATE"]) >> e.BH_BITS["JBDDirty"] & 1 for bh in bhs)
    # the temporary buffer heads back to the slab (bh_accounting as before)
    assert k._read(k.pcpu[0] + e.PCPU["BH_NR"]) == 4
    # phase 7 freed the bitmap's committed copy: the next write's undo access copies the
    # bitmap afresh, and files the four buffers again
    assert k._read(bitmap_jh + e.JH["COMMITTED"]) == 0
    k.write_records(1)
    assert k._read(bitmap_jh + e.JH["COMMITTED"])
    assert len(k._metadata_list()) == 4
    k.check()


def test_a_block_that_starts_with_the_magic_number_is_logged_from_an_escaped_copy():
    k = _logged_kernel()
    itable = k._metadata_list()[0]
    data = k._read(itable + e.BH["DATA"])
    k.machine.write(data, MAGIC)        # the inode table's first word: the journal's magic
    k.meta_per_commit = 1               # one buffer: the commit's first and last
    logged = []
    orig = k.machine.call

    def spy(name, *args, **kw):
        if name == "disk_dispatch":     # the log's write: the page of the temporary buffer
            logged.append(orig(name, *args, **kw))
            return logged[-1]
        return orig(name, *args, **kw)
    k.machine.call = spy
    k._commit_metadata(_Here(k), 0)
    # its tag: ESCAPE (1) | LAST_TAG (8); the original keeps the magic number; the frozen
    # copy (jbd_rep_kmalloc, from the 4 KB slab) was freed in phase 7 (no committed data)
    desc = k._read(k.journal + e.J["C_CTL"])
    tag = k._read(desc + e.BH["DATA"]) + 12
    assert _be(k, tag) == k.itable_block and _be(k, tag + 4) == 1 | 8
    assert k.machine.read(data, 4) == MAGIC
    jh = k._read(itable + e.BH["PRIVATE"])
    assert k._read(jh + e.JH["FROZEN"]) == 0
    ac = k._read(k.caches["size4096_cache"] + e.KC["ARRAY"])
    freed = k._read(ac + e.AC["ENTRY"] + 4 * (k._read(ac + e.AC["AVAIL"]) - 1))
    assert k.machine.read(freed, 4) == bytes(4)           # its first word cleared
    assert k.machine.read(freed + 4, 60) == k.machine.read(data + 4, 60)
    # two requests: the descriptor (block 4096) with the buffer behind it (4097: a back
    # merge), then the commit block
    assert len(logged) == 2 and all(logged)


def test_paced_writes_log_a_metadata_buffer_every_so_many_writes_per_cpu():
    k = e.Kernel("2.6.12", cpus=2, max_records=256)
    k.write_records(4)
    k.pace_metadata(400)
    # 2 shared + per file 2 indirect slots (523,256 >> 10 = 510 to 523,655 >> 10 = 511) and
    # 1 group: 8 a commit; 400 writes x 2 CPUs / 8 = 100 writes per CPU apart
    assert (k.meta_per_commit, k.meta_every) == (8, 100)
    assert k.meta_shared == 2
    k.paced_writes(160, 300_000)
    # the pauses come after writes 5 to 163 (4 + i, i from 1): CPU 0 logs at 100, CPU 1 (half
    # a period of turns on: 100 x 1 // 2) at 50 and 150
    assert k.meta_turns == [1, 2] and k.meta_logged == 3
    assert all(c > 0 for c in k.meta_cycles)
    k.check()


@pytest.mark.parametrize("irq_cpu, takes", [(0, [True, False]), (None, [True, True])])
def test_one_cpu_takes_the_disks_interrupts_unless_each_takes_its_own(irq_cpu, takes):
    name = e.REQUEST_PAGES[0]
    with estimates.moved({name: 31}):
        k = e.Kernel("2.6.12", cpus=2, max_records=512, page_cache_bytes=512 << 10,
                     frame_bytes=256 << 10, irq_cpu=irq_cpu)
        k.prefill(records=64, clean_before=64 - 40)
        k.write_records(8)
        k.paced_writes(80, 300_000)
    assert [n > 0 for n in k.disk_requests] == takes
    assert sum(k.disk_requests) >= 2            # each file's first full request, at least
    k.end_all_io()
    k.check()
    with pytest.raises(ValueError, match="irq_cpu"):
        e.Kernel("2.6.12", cpus=2, irq_cpu=2)


def test_a_locked_down_commit_ends_with_a_commit_block_after_its_last_buffer():
    # the transaction the first four writes made, locked down: its four buffers are its
    # whole commit whatever the interval's estimate (100 here): a descriptor before the
    # first, the commit block after the fourth (journal_next_log_block six times)
    k = _logged_kernel()
    k.lock_down()
    k.meta_per_commit = 100
    for _ in range(4):
        k._commit_metadata(_Here(k), 0)
    assert k.commit_logged == 4 and k._metadata_list() == []
    assert k._read(k.journal + e.J["HEAD"]) == e.LOG_START + 6
    commit = k._read(k.journal + e.J["C_CTL"] + 4)
    cdata = k._read(commit + e.BH["DATA"])
    assert k.machine.read(cdata, 4) == MAGIC and _be(k, cdata + 4) == 2
    assert k._read(commit + e.BH["BLOCKNR"]) == e.LOG_START + 5


def test_a_commit_ends_once_its_data_and_metadata_are_out_and_goes_on_the_checkpoint_list():
    # commit.c 445: the first buffer's phase 3 makes the transaction T_COMMIT; its four
    # data buffers are still on t_sync_datalist when the commit block is written, so
    # phase 8 waits for the data loop (2.6.12 writes the data first: 437). Each dirty
    # page takes a turn to be written and, written, another to be unfiled: 8 turns. Then
    # 802-843: T_FINISHED, j_commit_sequence its tid (1), no committing transaction, the
    # transaction alone on j_checkpoint_transactions (its four buffers on its checkpoint
    # list), and the next writes on a new running transaction
    k = _logged_kernel()
    k.lock_down()
    k.meta_per_commit = 100
    t, j = k.transaction, k.journal
    for _ in range(4):
        k._commit_metadata(_Here(k), 0)
    assert k._read(t + e.T["STATE"]) == e.T_STATES["COMMIT"] and not k.commit_ended
    turns = 0
    while not k.commit_ended:
        k._commit(_Here(k), 0)
        turns += 1
        assert turns <= 8
    assert turns == 8 and k._read(t + e.T["SYNC_DATA"]) == 0
    assert k._read(t + e.T["STATE"]) == e.T_STATES["FINISHED"]
    assert (k._read(j + e.J["COMMIT_SEQUENCE"]), k._read(j + e.J["COMMITTING"])) == (1, 0)
    assert k._read(j + e.J["CHECKPOINT_TRANSACTIONS"]) == t
    assert k._read(t + e.T["CPNEXT"]) == k._read(t + e.T["CPPREV"]) == t
    cp, n = k._read(t + e.T["CHECKPOINT"]), 1
    jh = k._read(cp + e.JH["CPNEXT"])
    while jh != cp:
        jh, n = k._read(jh + e.JH["CPNEXT"]), n + 1
    assert n == 4
    k._commit_metadata(_Here(k), 0)                         # nothing more to log
    assert k.commit_logged == 4
    k.write_records(1)
    assert k.running() not in (0, t)
    k.check()


def _checkpoint_list(k, t):
    """The journal heads on transaction ``t``'s checkpoint list, in order."""
    head, out = k._read(t + e.T["CHECKPOINT"]), []
    jh = head
    while jh and (not out or jh != head):
        out.append(jh)
        jh = k._read(jh + e.JH["CPNEXT"])
    return out


def test_the_next_commit_releases_the_written_back_checkpoint_buffers_and_drops_the_transaction():
    # checkpoint.c 468-508 of 2.6.12.1, as the phase-8 test above leaves the journal: the
    # finished transaction alone on j_checkpoint_transactions with its four buffers, each
    # dirty (phase 7's __journal_refile_buffer -> __journal_temp_unlink_buffer marks a
    # buffer leaving the journal dirty), so none is released (__try_to_free_cp_buf 58: not
    # written back). Two written back (the dirty bit cleared, as the end of their write
    # leaves them) are released: off the list (__buffer_unlink), their journal heads gone
    # (b_private NULL, BH_JBD clear) and the journal's reference on each dropped (b_count
    # - 1); then the last two, and the transaction, with no checkpointed buffer left, is
    # dropped (610-637): the ring empty, the transaction back in kmalloc's size-128 cache
    # (the CPU's array: one more object, the transaction on top)
    k = _logged_kernel()
    k.lock_down()
    k.meta_per_commit = 100
    t, j = k.transaction, k.journal
    for _ in range(4):
        k._commit_metadata(_Here(k), 0)
    while not k.commit_ended:
        k._commit(_Here(k), 0)

    def clean():
        return k.machine.call("__journal_clean_checkpoint_list", j).return_value

    jhs = _checkpoint_list(k, t)
    bhs = [k._read(jh + e.JH["BH"]) for jh in jhs]
    dirty = 1 << e.BH_BITS["Dirty"]
    assert len(jhs) == 4 and all(k._read(bh + e.BH["STATE"]) & dirty for bh in bhs)
    assert clean() == 0 and _checkpoint_list(k, t) == jhs
    counts = [k._read(bh + e.BH["COUNT"]) for bh in bhs]
    for bh in bhs[:2]:
        k._word(bh + e.BH["STATE"], k._read(bh + e.BH["STATE"]) & ~dirty)
    assert clean() == 2 and _checkpoint_list(k, t) == jhs[2:]
    for bh, count in zip(bhs[:2], counts):
        assert k._read(bh + e.BH["PRIVATE"]) == 0
        assert not k._read(bh + e.BH["STATE"]) & (1 << e.BH_BITS["JBD"])
        assert k._read(bh + e.BH["COUNT"]) == count - 1
    assert k._read(j + e.J["CHECKPOINT_TRANSACTIONS"]) == t
    ac = k._read(k._read(k.sym["size128_cache"]) + e.KC["ARRAY"])
    avail = k._read(ac + e.AC["AVAIL"])
    for bh in bhs[2:]:
        k._word(bh + e.BH["STATE"], k._read(bh + e.BH["STATE"]) & ~dirty)
    assert clean() == 2 and k._read(t + e.T["CHECKPOINT"]) == 0
    assert k._read(j + e.J["CHECKPOINT_TRANSACTIONS"]) == 0
    assert k._read(ac + e.AC["AVAIL"]) == avail + 1
    assert k._read(ac + e.AC["ENTRY"] + 4 * avail) == t
    assert clean() == 0                                     # nothing on the ring


def test_a_buffer_another_cpu_holds_is_passed_by():
    # jbd_trylock_bh_state fails on a buffer whose state lock is held (checkpoint.c 493):
    # the walk goes on to the next, and the held one stays on the list, dirty or not
    k = _logged_kernel()
    k.lock_down()
    k.meta_per_commit = 100
    t, j = k.transaction, k.journal
    for _ in range(4):
        k._commit_metadata(_Here(k), 0)
    while not k.commit_ended:
        k._commit(_Here(k), 0)
    jhs = _checkpoint_list(k, t)
    bhs = [k._read(jh + e.JH["BH"]) for jh in jhs]
    for bh in bhs:
        k._word(bh + e.BH["STATE"], k._read(bh + e.BH["STATE"]) & ~(1 << e.BH_BITS["Dirty"]))
    held = bhs[1]
    k._word(held + e.BH["STATE"], k._read(held + e.BH["STATE"]) | (1 << e.BH_BITS["State"]))
    assert k.machine.call("__journal_clean_checkpoint_list", j).return_value == 3
    assert _checkpoint_list(k, t) == [jhs[1]]
    assert k._read(j + e.J["CHECKPOINT_TRANSACTIONS"]) == t


def test_the_logs_arithmetic_by_hand():
    # a descriptor of 4096 bytes: 4084 after its header; the first tag 8 + 16 (UUID) leaves
    # 4060, each further one 8; full once fewer than 24 are left: 4060 - 8 x 505 = 20, so
    # 506 tags (wbuf's 512 would allow 511)
    assert e.tags_per_descriptor() == 506
    assert e.log_blocks_per_commit(190) == 190 + 1 + 1
    assert e.log_blocks_per_commit(506) == 508 and e.log_blocks_per_commit(507) == 510
    with pytest.raises(ValueError):
        e.log_blocks_per_commit(0)
    # __log_space_left: 2372 free -> 2340 - (2340 >> 3 = 292) = 2048, j_maxlen / 4 of 8192:
    # enough; 2371 -> 2339 - 292 = 2047: a checkpoint first
    assert e.log_space_left(2372) == 2048 and e.log_space_left(2371) == 2047
    assert e.log_space_left(32) == 0
    assert e.checkpoint_below() == 2372
    # with a commit of 190 credits under way: 2238 needed, 2589 - 32 = 2557 - 319 = 2238
    assert e.checkpoint_below(committing_credits=190) == 2589


def _cycles_and_l3_misses(run):
    r = run()
    return r.cycles, r.caches["L3"]["misses"], r.caches["L1I"]["misses"]


def test_a_whole_commit_runs_its_parts_once_and_walks_its_own_buffers():
    # the four buffers of the first four writes: logged, 8 data turns (the phase-8 test
    # above), phase 8, then the walk finds the four still dirty and releases none (a cold
    # walk misses the L3); each part done once a commit is measured by its Run (here its
    # cycles and L3 misses), from cold caches at the commit's start
    k = _logged_kernel()
    out = k.whole_commit(measure=_cycles_and_l3_misses)
    assert (out["buffers"], out["turns"]) == (4, 8)
    assert k.commit_ended and out["commit_end"][0] == k.commit_end_run.cycles
    assert out["del_timer_sync"][0] == k.del_timer_cycles
    assert len(_checkpoint_list(k, k.transaction)) == 4
    assert out["clean_cold"][0] > out["clean"][0] > 0
    # right after the commit the walk's data is warm: its L3 misses are at most the code
    # lines of the walk the commit had not run (one since do_softirq's timer dispatch moved
    # the code after scsi_2612.S), and fewer than the cold walk's
    assert out["clean"][1] <= out["clean"][2] and out["clean"][1] < out["clean_cold"][1]
    assert out["del_timer_sync"][1] > 0         # cold: the timer's lines come from memory
    assert all(out[p][0] > 0 for p in ("lock_down", "revoke_records", "commit_end"))
    assert out["metadata"] > 0 and out["data"] > 0


def test_the_revoke_records_look_at_every_head_of_the_table_phase_1_switched_away_from():
    # revoke.c 514-530: after the lock-down's switch j_revoke is table 1, so the records
    # come from table 0: 5 instructions to pick it (the jne taken), 4 to start the loop,
    # 256 empty heads x 5 (cmpl, jne, addl, decl, jnz), the ret: 9 + 1280 + 1 = 1290;
    # before a switch (j_revoke table 0) the mov of table 1 as well: 1291. A cold call
    # reads the 32 lines of table 0's 2 KB of heads from memory.
    k = _logged_kernel()
    j, t = k.journal, k.transaction
    tables = [k._read(j + e.J["REVOKE_TABLE"] + 4 * i) for i in range(2)]
    assert k.machine.call("journal_write_revoke_records", j, t).instructions == 1291
    k.lock_down()
    assert k._read(j + e.J["REVOKE"]) == tables[1]
    run = k.machine.call("journal_write_revoke_records", j, t, cold=True)
    assert run.instructions == 1290
    assert run.caches["L1D"]["misses"] >= 2048 // 64
    # a record on table 0 (a block revoked in the transaction): not in the model, a fault
    head = k._read(tables[0] + e.RT["HASH_TABLE"]) + 8 * 17
    k._word(head, head + 64)
    with pytest.raises(GuestFault, match="journal_write_revoke_records.*ud2"):
        k.machine.call("journal_write_revoke_records", j, t)
