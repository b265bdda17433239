"""The journal's buffer bookkeeping and the slab allocator as 2.6.12 has them
(routines/x86/jbd_2612.S, mm_2612.S; emu.papers.yoshioka2005.ext3model). Each expectation
is worked out by hand from fs/jbd/journal.c, fs/jbd/transaction.c and mm/slab.c of
2.6.12.1 (the comments cite the lines)."""
from types import SimpleNamespace

import pytest

from emu.hw.faults import GuestFault, InstructionLimitExceeded
from emu.papers.yoshioka2005 import ext3model as e


def _bits(k, bh, *bits):
    state = k._read(bh + e.BH["STATE"])
    return [bool(state >> e.BH_BITS[b] & 1) for b in bits]


def _written(k, offset=0):
    """The page, buffer head and journal head of the first file's ``offset``th record."""
    page = k._lookup(k.files[0]["mapping"], e.FIRST_INDEX + offset)
    bh = k._read(page + e.PG["PRIVATE"])
    return page, bh, k._read(bh + e.BH["PRIVATE"])


def test_put_journal_head_keeps_a_head_a_checkpoint_still_holds():
    # journal.c 1857-1869 and 1795-1831: at b_jcount 0 with no transaction, the head leaves
    # the buffer only if no next transaction and no checkpoint holds it either
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    _, bh, jh = _written(k)
    assert k._read(bh + e.BH["COUNT"]) == 1                 # the journal head's reference
    k._poke(jh + e.JH["JCOUNT"], e._words(1))
    k._poke(jh + e.JH["TRANSACTION"], e._words(0))
    k._poke(jh + e.JH["CP_T"], e._words(k.transaction))     # on a checkpoint list
    k.machine.call("journal_put_journal_head", jh)
    # kept: b_jcount 0, still the buffer's head; get_bh and the last __brelse cancel out
    assert k._read(jh + e.JH["JCOUNT"]) == 0 and k._read(bh + e.BH["PRIVATE"]) == jh
    assert _bits(k, bh, "JBD", "JournalHead") == [True, False]
    assert k._read(bh + e.BH["COUNT"]) == 1
    # off the checkpoint, the next put frees it: the buffer loses the head and its
    # reference (get_bh, then __brelse twice), the head goes on top of the CPU's array
    ac = k._read(k.caches["journal_head_cache"] + e.KC["ARRAY"])
    avail = k._read(ac + e.AC["AVAIL"])
    k._poke(jh + e.JH["JCOUNT"], e._words(1))
    k._poke(jh + e.JH["CP_T"], e._words(0))
    k.machine.call("journal_put_journal_head", jh)
    assert _bits(k, bh, "JBD") == [False] and k._read(bh + e.BH["PRIVATE"]) == 0
    assert k._read(bh + e.BH["COUNT"]) == 0 and k._read(jh + e.JH["BH"]) == 0
    assert k._read(ac + e.AC["AVAIL"]) == avail + 1
    assert k._read(ac + e.AC["ENTRY"] + 4 * avail) == jh


def test_a_dirty_buffer_filed_as_metadata_gives_its_dirty_bit_to_the_journal():
    # transaction.c 1943-1948 and 1989-1990: filed on BJ_Metadata, a dirty buffer's dirty
    # bit is cleared and its jbddirty bit set; 1526-1527: unlinked again (refiled on the
    # data list), jbddirty is cleared and mark_buffer_dirty sets the dirty bit back
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    t = k.transaction
    _, bh, jh = _written(k)
    assert _bits(k, bh, "Dirty", "JBDDirty") == [True, False]
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["SYNCDATA"]
    assert k._read(t + e.T["NR_BUFFERS"]) == 4              # the write's metadata buffers
    k.machine.call("__journal_file_buffer", jh, t, e.BJ["METADATA"])
    assert _bits(k, bh, "Dirty", "JBDDirty") == [False, True]
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["METADATA"]
    assert k._read(t + e.T["NR_BUFFERS"]) == 5 and k._read(t + e.T["SYNC_DATA"]) == 0
    k.machine.call("__journal_file_buffer", jh, t, e.BJ["SYNCDATA"])
    assert _bits(k, bh, "Dirty", "JBDDirty") == [True, False]
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["SYNCDATA"]
    assert k._read(t + e.T["NR_BUFFERS"]) == 4 and k._read(t + e.T["SYNC_DATA"]) == jh
    k.check()


def _dirty_tagged(k, mapping, index):
    """Is ``index`` tagged dirty in each node on its path, top first?"""
    node = k._read(mapping + e.AS["PAGE_TREE"] + e.RR["RNODE"])
    bits = []
    for level in range(e.RADIX_HEIGHT - 1, -1, -1):
        offset = (index >> (6 * level)) & 63
        bits.append(bool(k._read(node + e.RN["TAGS"] + 4 * (offset >> 5)) >> (offset & 31) & 1))
        node = k._read(node + e.RN["SLOTS"] + 4 * offset)
    return bits


def test_unlinking_a_jbddirty_buffer_gives_the_vm_a_dirty_page():
    # transaction.c 1524-1527: __journal_temp_unlink_buffer ends with
    # test_clear_buffer_jbddirty -> mark_buffer_dirty (buffer.c), which dirties the clean
    # page: its flag, its tree's dirty tag, nr_dirty + 1 (page-writeback.c 617-644)
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    mapping = k.files[0]["mapping"]
    assert k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping,
                          e.FIRST_INDEX).return_value == 1
    k.end_all_io()                                          # page and buffer clean
    page, bh, jh = _written(k)
    dirty = k._read(k.pcpu[0] + e.PCPU["PAGE_STATE"] + e.PS["NR_DIRTY"])
    assert not k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["dirty"] & 1
    assert not any(_dirty_tagged(k, mapping, e.FIRST_INDEX))
    k._poke(bh + e.BH["STATE"], e._words(k._read(bh + e.BH["STATE"]) |
                                         1 << e.BH_BITS["JBDDirty"]))
    k.machine.call("__journal_temp_unlink_buffer", jh)
    assert _bits(k, bh, "Dirty", "JBDDirty") == [True, False]
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["NONE"]
    assert k._read(k.transaction + e.T["SYNC_DATA"]) == 0
    assert k._read(page + e.PG["FLAGS"]) >> e.PG_BITS["dirty"] & 1
    assert k._read(k.pcpu[0] + e.PCPU["PAGE_STATE"] + e.PS["NR_DIRTY"]) == dirty + 1
    assert _dirty_tagged(k, mapping, e.FIRST_INDEX) == [True] * e.RADIX_HEIGHT


def _on_cpu(k, cpu, entry, *args):
    """Call ``entry`` as CPU ``cpu``: the call's stack's thread_info says so."""
    info = ((k.machine.stack_top - 1) & ~(e.KERNEL_STACK - 1)) + e.TI["CPU"]
    k._poke(info, e._words(cpu))
    try:
        return k.machine.call(entry, *args).return_value
    finally:
        k._poke(info, e._words(0))


def test_an_object_freed_on_another_cpu_is_never_handed_out_twice_while_live():
    # the disk's pattern: CPU 1 takes bios, CPU 0 (the interrupt's) frees them. mm/slab.c:
    # CPU 0's array (limit 120) passes its oldest 60 to the shared array when full
    # (cache_flusharray 2225-2273), and CPU 1's empty array refills 60 from it
    # (cache_alloc_refill 1994-2088); CPU 1's memory only grows while nothing comes back
    k = e.Kernel("2.6.12", cpus=2, max_records=64)
    cache = k.caches["bio_slab"]
    size, bound = k._io_rings()["bio_slab"]       # what the writes can hold (on main: the ring)
    ac1 = k._read(cache + e.KC["ARRAY"] + 4)
    start = k._read(ac1 + e.AC["START"])
    live = _on_cpu(k, 1, "kmem_cache_alloc", cache)
    assert live == start                    # the first of a batch of 16 (untouched)
    seen = []
    for _ in range(bound + 64):             # past CPU 1's memory: it must come round
        obj = _on_cpu(k, 1, "kmem_cache_alloc", cache)
        assert obj != live
        seen.append(obj)
        _on_cpu(k, 0, "kmem_cache_free", cache, obj)
    assert (size, e.slab_limits(size)) == (128, (120, 60, 480))
    # CPU 1 grew the cache by 16, 60 and 60 (x and 135 more); its 136th allocation found
    # CPU 0's first flush (the frees 1-60, at the 121st free) in the shared array and took
    # it, the last freed first; from then on each of its refills finds the next flush
    assert k._read(ac1 + e.AC["NEXT"]) == start + size * 136
    assert seen[135:195] == seen[59::-1]
    assert seen[195:255] == seen[119:59:-1]


def _committing(k):
    """The write's transaction made the committing one, a new running transaction and a
    handle on it: (committing, running, handle)."""
    old = k.transaction
    new = k._alloc(e.TRANSACTION_SIZE)
    k._poke(new, e._words(k.journal, 2))                    # t_journal, t_tid, T_RUNNING
    k._word(new + e.T["HANDLE_LOCK"], e.SPIN_FREE)
    handle = k._alloc(e.HANDLE_SIZE)
    k._poke(handle, e._words(new, 8, 1))
    return old, new, handle


def test_a_writer_gets_a_frozen_copy_of_a_buffer_under_commit():
    # transaction.c 612-684 and 702-715: the inode table's buffer is on the committing
    # transaction's t_buffers (BJ_Metadata); a handle of the new running transaction gets
    # write access: jbd_kmalloc (the size-4096 cache: its array had a batch), start again,
    # b_frozen_data = the copy of the buffer's 4 KB, b_next_transaction = the new one;
    # the buffer stays on the committing transaction's list
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    old, new, handle = _committing(k)
    jh = k._read(k.itable_bh + e.BH["PRIVATE"])
    assert k._read(jh + e.JH["TRANSACTION"]) == old
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["METADATA"]
    ac = k._read(k.caches["size4096_cache"] + e.KC["ARRAY"])
    avail = k._read(ac + e.AC["AVAIL"])
    top = k._read(ac + e.AC["ENTRY"] + 4 * (avail - 1))
    k.machine.call("do_get_write_access", handle, jh, 0)
    assert k._read(jh + e.JH["FROZEN"]) == top and k._read(ac + e.AC["AVAIL"]) == avail - 1
    assert k.machine.read(top, e.PAGE) == k.machine.read(k.itable, e.PAGE)
    assert k._read(jh + e.JH["NEXT_T"]) == new and k._read(jh + e.JH["TRANSACTION"]) == old
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["METADATA"]
    assert _bits(k, k.itable_bh, "State", "Lock") == [False, False]
    # again: b_next_transaction is this one, nothing more (595-597)
    k.machine.call("do_get_write_access", handle, jh, 0)
    assert k._read(ac + e.AC["AVAIL"]) == avail - 1


def test_a_buffer_the_commit_is_past_needs_no_frozen_copy():
    # transaction.c 661-683: on the committing transaction's BJ_Forget list (its log
    # write done) and without force_copy, the writer only becomes its next transaction
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    old, new, handle = _committing(k)
    jh = k._read(k.gd_bh + e.BH["PRIVATE"])
    k._word(jh + e.JH["JLIST"], e.BJ["FORGET"])
    ac = k._read(k.caches["size4096_cache"] + e.KC["ARRAY"])
    avail = k._read(ac + e.AC["AVAIL"])
    k.machine.call("do_get_write_access", handle, jh, 0)
    assert k._read(jh + e.JH["FROZEN"]) == 0 and k._read(ac + e.AC["AVAIL"]) == avail
    assert k._read(jh + e.JH["NEXT_T"]) == new


def test_prefill_gives_the_heads_a_commit_freed_back_to_the_slab():
    # 48 writes of which a commit has passed the first 16 (clean, off the data list): their
    # 16 journal heads (the first 16 of the cache's memory, in write order) are free in the
    # slab lists; the array keeps what is left of the batches the 48 took (16 + 60 = 76)
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.prefill(48, clean_before=32, committed_before=16)
    cache = k.caches["journal_head_cache"]
    ac = k._read(cache + e.KC["ARRAY"])
    start = k._read(ac + e.AC["START"])
    base = k._read(cache + e.KC["FREE_BASE"])
    assert k._read(cache + e.KC["FREE_COUNT"]) == 16
    assert k._read(cache + e.KC["FREE_HEAD"]) == base
    assert k._read(cache + e.KC["FREE_TAIL"]) == base + 4 * 16
    assert [k._read(base + 4 * i) for i in range(16)] == [start + e.JH_SIZE * i
                                                          for i in range(16)]
    assert k._read(ac + e.AC["AVAIL"]) == 76 - 48
    assert k._read(ac + e.AC["NEXT"]) == start + e.JH_SIZE * 76


def test_a_handle_waits_while_the_running_transaction_is_locked_down():
    # transaction.c 147-156: journal_start on a T_LOCKED transaction lets j_state_lock go
    # and waits; once the commit has switched to a new running transaction, the handle
    # starts on that one
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    j, t = k.journal, k.transaction
    task = k._alloc(e.TASK_SIZE)                            # the call's current task
    k._word(((k.machine.stack_top - 1) & ~(e.KERNEL_STACK - 1)) + e.TI["TASK"], task)
    k._word(t + e.T["STATE"], 1)                            # T_LOCKED
    with pytest.raises(InstructionLimitExceeded):
        k.machine.call("journal_start", j, 8, limit=20_000)
    assert k._read(j + e.J["STATE_LOCK"]) == e.SPIN_FREE    # not held while it waits
    k._word(task + e.TSK["JOURNAL_INFO"], 0)                # that call never returned
    new = k._alloc(e.TRANSACTION_SIZE)
    k._poke(new, e._words(j, 2))                            # the new one, T_RUNNING
    k._word(new + e.T["HANDLE_LOCK"], e.SPIN_FREE)
    k._word(j + e.J["RUNNING"], new)
    handle = k.machine.call("journal_start", j, 8).return_value
    assert k._read(handle + e.H["TRANSACTION"]) == new
    assert k._read(new + e.T["UPDATES"]) == 1 and k._read(t + e.T["UPDATES"]) == 0


def test_refiling_a_buffer_a_later_transaction_took_moves_it_there():
    # transaction.c 2013-2042: after the commit, a buffer with a next transaction goes to
    # that transaction's t_buffers with its jbddirty bit, and without a dirty bit (no
    # mark_buffer_dirty: the bit was taken off before the unlink); one without is unfiled
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    old, new, handle = _committing(k)
    jh = k._read(k.itable_bh + e.BH["PRIVATE"])
    k.machine.call("do_get_write_access", handle, jh, 0)   # the frozen copy, next = new
    k._word(k.itable_bh + e.BH["STATE"], k._read(k.itable_bh + e.BH["STATE"]) |
            1 << e.BH_BITS["JBDDirty"])
    buffers = k._read(old + e.T["NR_BUFFERS"])
    k.machine.call("__journal_refile_buffer", jh)
    assert k._read(jh + e.JH["TRANSACTION"]) == new and k._read(jh + e.JH["NEXT_T"]) == 0
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["METADATA"]
    assert k._read(new + e.T["BUFFERS"]) == jh and k._read(new + e.T["NR_BUFFERS"]) == 1
    assert k._read(old + e.T["NR_BUFFERS"]) == buffers - 1
    assert _bits(k, k.itable_bh, "JBDDirty", "Dirty") == [True, False]
    # the group descriptor's, no next transaction: unfiled, its jbddirty bit given to the
    # VM as a dirty bit (__journal_temp_unlink_buffer)
    gd = k._read(k.gd_bh + e.BH["PRIVATE"])
    k._word(k.gd_bh + e.BH["STATE"], k._read(k.gd_bh + e.BH["STATE"]) |
            1 << e.BH_BITS["JBDDirty"])
    k.machine.call("__journal_refile_buffer", gd)
    assert k._read(gd + e.JH["TRANSACTION"]) == 0 and k._read(gd + e.JH["JLIST"]) == 0
    assert _bits(k, k.gd_bh, "JBDDirty", "Dirty") == [False, True]
    assert k._read(old + e.T["NR_BUFFERS"]) == buffers - 2


def _spin_free(k, address):
    return k._read(address, 1) == e.SPIN_FREE


def test_the_commit_locks_the_running_transaction_down_and_waits_for_its_handles():
    # commit.c 214-231 of 2.6.12.1: T_LOCKED under j_state_lock; with a handle open
    # (t_updates 1) both locks are let go while kjournald waits
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    j, t = k.journal, k.transaction
    k._word(t + e.T["UPDATES"], 1)
    with pytest.raises(InstructionLimitExceeded):
        k.machine.call("journal_lock_down", j, limit=20_000)
    assert k._read(t + e.T["STATE"]) == e.T_STATES["LOCKED"]
    assert _spin_free(k, j + e.J["STATE_LOCK"]) and _spin_free(k, t + e.T["HANDLE_LOCK"])
    assert k.running() == t and k._read(j + e.J["COMMITTING"]) == 0
    # the handle gone (and the call that never returned started again): 289-294, the
    # transaction is the committing one, none runs; revoke.c 480-491: j_revoke the other
    # table, its 256 heads emptied (they held stale links here)
    k._word(t + e.T["UPDATES"], 0)
    k._word(t + e.T["STATE"], e.T_STATES["RUNNING"])
    other = k._read(j + e.J["REVOKE_TABLE"] + 4)
    heads = k._read(other + e.RT["HASH_TABLE"])
    k.machine.write(heads, b"\xab" * 8 * e.REVOKE_HASH)
    head = k._read(j + e.J["HEAD"])
    k.lock_down()
    assert k._read(t + e.T["STATE"]) == e.T_STATES["FLUSH"]
    assert k._read(j + e.J["COMMITTING"]) == t and k.running() == 0 and k.committing == t
    assert k._read(t + e.T["LOG_START"]) == head
    assert k._read(j + e.J["REVOKE"]) == other
    assert all(k._read(heads + 8 * i) == k._read(heads + 8 * i + 4) == heads + 8 * i
               for i in range(e.REVOKE_HASH))
    assert _spin_free(k, j + e.J["STATE_LOCK"]) and _spin_free(k, j + e.J["LIST_LOCK"])
    with pytest.raises(RuntimeError, match="under way"):
        k.lock_down()


def test_the_first_handle_after_the_lock_down_makes_a_new_running_transaction():
    # transaction.c 96-139 and get_transaction 47-63: j_running_transaction NULL, so a
    # transaction_t from kmalloc (size-128: its CPU's array was empty, the cache grew by
    # BATCHREFILL_LIMIT 16 objects and hands out the first), zeroed, tid j_transaction_sequence (2: the first was
    # 1), T_RUNNING, t_expires = jiffies (0) + j_commit_interval (5 s at HZ 1000), the
    # commit timer's expires the same; the handle starts on it
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    j, old = k.journal, k.transaction
    k.lock_down()
    ac = k._read(k.caches["size128_cache"] + e.KC["ARRAY"])
    start = k._read(ac + e.AC["START"])
    task = k._alloc(e.TASK_SIZE)                            # the call's current task
    k._word(((k.machine.stack_top - 1) & ~(e.KERNEL_STACK - 1)) + e.TI["TASK"], task)
    handle = k.machine.call("journal_start", j, 8).return_value
    new = k.running()
    assert new == start                                     # a grown batch goes out in
                                                            # address order (_slab_taken)
    assert k._read(ac + e.AC["AVAIL"]) == 15
    assert k._read(handle + e.H["TRANSACTION"]) == new
    assert (k._read(new + e.T["JOURNAL"]), k._read(new + e.T["TID"]),
            k._read(new + e.T["STATE"])) == (j, 2, e.T_STATES["RUNNING"])
    assert k._read(j + e.J["TRANSACTION_SEQUENCE"]) == 3
    assert k._read(new + e.T["EXPIRES"]) == 5000
    assert k._read(k._read(j + e.J["COMMIT_TIMER"]) + e.TIMER["EXPIRES"]) == 5000
    assert k._read(new + e.T["UPDATES"]) == 1 and k._read(old + e.T["UPDATES"]) == 0
    assert _spin_free(k, new + e.T["HANDLE_LOCK"]) and _spin_free(k, j + e.J["STATE_LOCK"])
    for name in ("BUFFERS", "SYNC_DATA", "NR_BUFFERS", "FORGET", "CHECKPOINT"):
        assert k._read(new + e.T[name]) == 0, name


def test_writepage_steals_its_buffer_from_the_committing_transactions_data_list():
    # transaction.c 966-1058: pdflush's ext3_ordered_writepage meets its buffer on the
    # committing transaction's t_sync_datalist, clean (block_write_full_page took the dirty
    # bit): off that list, filed on the running transaction's as BJ_SyncData
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(2)
    old = k.transaction
    k.lock_down()
    mapping = k.files[0]["mapping"]
    page, bh, jh = _written(k)
    second = _written(k, 1)[2]
    assert k._read(old + e.T["SYNC_DATA"]) == jh
    assert k.machine.call("on_task_stack", k.pdflush[0], k.sym["writeback_page"], mapping,
                          e.FIRST_INDEX).return_value == 1
    new = k.running()
    assert k._read(jh + e.JH["TRANSACTION"]) == new
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["SYNCDATA"]
    assert k._read(new + e.T["SYNC_DATA"]) == jh
    assert k._read(jh + e.JH["TNEXT"]) == k._read(jh + e.JH["TPREV"]) == jh
    assert k._read(old + e.T["SYNC_DATA"]) == second        # the other stays for the commit
    assert k._read(second + e.JH["TNEXT"]) == second
    k.end_all_io()
    facts = k.check()
    assert facts["sync_datalist"] == facts["data_jh"] == 2


def test_paced_writes_start_the_commit_and_the_writers_take_its_buffers_meanwhile():
    # kjournald's first pause (CPU 0, after write 5) locks the transaction down with the
    # metadata the first four writes dirtied (the inode table's, the group descriptors',
    # each file's bitmap and indirect block: 2 + 2 x 2); the writers' next writes take the
    # inode table's and the group descriptors' buffers for the new running transaction:
    # do_get_write_access makes each a frozen copy (BJ_Metadata on the committing one)
    k = e.Kernel("2.6.12", cpus=2, max_records=256)
    k.write_records(4)
    k.commit_pending = True
    k.paced_writes(3, 300_000)
    assert k.lockdown["cpu"] == 0 and k.lockdown["write"] == 5 and not k.commit_pending
    assert k.committing == k.transaction and k.running() not in (0, k.transaction)
    for bh in (k.itable_bh, k.gd_bh):
        jh = k._read(bh + e.BH["PRIVATE"])
        assert k._read(jh + e.JH["TRANSACTION"]) == k.committing
        assert k._read(jh + e.JH["NEXT_T"]) == k.running()
        assert k._read(jh + e.JH["FROZEN"])
    state = k.commit_state()
    assert state["committing"] == 6 and state["taken"] >= 2 and state["frozen"] >= 2
    assert state["refiled"] == 0
    # the commit logs the head of its t_buffers, the inode table's (commit.c phase 3 from
    # the frozen copy, journal.c 307-312), and phase 7 (commit.c 713-800) frees the frozen
    # copy, puts the buffer on the commit's checkpoint list and refiles it to the running
    # transaction the writer took it for (transaction.c 2013-2042), jbddirty
    jh = k._read(k.itable_bh + e.BH["PRIVATE"])
    k.meta_per_commit = 6
    k._commit_metadata(SimpleNamespace(call=k.machine.call), 0)    # a task stand-in
    assert k._read(jh + e.JH["TRANSACTION"]) == k.running()
    assert k._read(jh + e.JH["JLIST"]) == e.BJ["METADATA"]
    assert k._read(jh + e.JH["NEXT_T"]) == 0 and k._read(jh + e.JH["FROZEN"]) == 0
    assert k._read(jh + e.JH["CP_T"]) == k.committing
    assert _bits(k, k.itable_bh, "JBDDirty", "Dirty", "State") == [True, False, False]
    assert k.commit_state()["refiled"] == 1
    k.end_all_io()
    k.check()


def _metadata_heads(k, t):
    """The journal heads on ``t``'s t_buffers, in list order."""
    first = jh = k._read(t + e.T["BUFFERS"])
    out = []
    while jh:
        out.append(jh)
        jh = k._read(jh + e.JH["TNEXT"])
        if jh == first:
            break
    return out


def test_a_handle_pays_a_credit_for_each_buffer_it_first_dirties_and_gives_back_the_rest():
    # ext3_prepare_write's handle reserves ext3_writepage_trans_blocks, ordered mode, a
    # block a page: 2 x (1 + 3 indirects) + 2 = 10 credits (start_this_handle adds them to
    # t_outstanding_credits, transaction.c 221 of 2.6.12.1). The first write dirties 4
    # metadata buffers, each the first time in the transaction (b_modified 0 -> 1, one
    # credit each, 1107-1116); journal_stop gives back the 6 left (1348): 10 - 6 = 4
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    t = k.transaction
    heads = _metadata_heads(k, t)
    assert len(heads) == 4 and k._read(t + e.T["OUTSTANDING"]) == 4
    assert [k._read(jh + e.JH["MODIFIED"]) for jh in heads] == [1] * 4
    # the second write dirties the same 4 buffers, already modified: it keeps all 10
    k.write_records(1)
    assert _metadata_heads(k, t) == heads and k._read(t + e.T["OUTSTANDING"]) == 4
    # commit.c 296-311: the commit's phase 2 clears b_modified on its buffers, the credits
    # it holds stay; so the next transaction's first write (the frozen copies' writer)
    # pays a credit again for each of the 4, though none is on its own t_buffers yet
    k.lock_down()
    assert [k._read(jh + e.JH["MODIFIED"]) for jh in heads] == [0] * 4
    assert k._read(t + e.T["OUTSTANDING"]) == 4
    k.write_records(1)
    new = k.running()
    assert new != t and k._read(new + e.T["OUTSTANDING"]) == 4
    assert k._read(new + e.T["NR_BUFFERS"]) == 0
    assert [k._read(jh + e.JH["MODIFIED"]) for jh in heads] == [1] * 4
    k.check()


def test_a_handle_with_no_credit_left_is_the_kernels_assertion():
    # transaction.c 1114: J_ASSERT_JH(jh, handle->h_buffer_credits > 0) when a buffer is
    # first modified. After the lock-down the committing transaction's 4 buffers have
    # b_modified 0: a handle of 1 credit pays it for the first and faults on the second
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    k.lock_down()
    task = k._alloc(e.TASK_SIZE)                            # the call's current task
    k._word(((k.machine.stack_top - 1) & ~(e.KERNEL_STACK - 1)) + e.TI["TASK"], task)
    handle = k.machine.call("journal_start", k.journal, 1).return_value
    first, second = _metadata_heads(k, k.committing)[:2]
    k.machine.call("journal_dirty_metadata", handle, k._read(first + e.JH["BH"]))
    assert k._read(handle + e.H["CREDITS"]) == 0 and k._read(first + e.JH["MODIFIED"]) == 1
    with pytest.raises(GuestFault, match="journal_dirty_metadata.*ud2"):
        k.machine.call("journal_dirty_metadata", handle, k._read(second + e.JH["BH"]))


def _timer_list(k, head):
    """The timers on the list at ``head``, in order."""
    out, entry = [], k._read(head)
    while entry != head:
        out.append(entry)
        entry = k._read(entry)
    return out


def test_the_commit_timer_leaves_its_list_at_the_commit_and_joins_the_next_by_its_expiry():
    # built: the first transaction's timer (t_expires 0x7fffffff, timer_jiffies 0) is in
    # tv5, index (0x7fffffff >> 26) & 63 = 31 (timer.c 150-151); kjournald's
    # del_timer_sync (journal.c 163) takes it off before the lock-down (base NULL, the
    # list empty, list_del's poison in its links); the first handle after it makes a
    # transaction expiring at 5000 (jiffies 0 + 5 s at HZ 1000): 256 <= 5000 < 2^14, so
    # tv2, index (5000 >> 8) & 63 = 19 (126-128), on the list of the CPU that made it (0)
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(1)
    timer = k._read(k.journal + e.J["COMMIT_TIMER"])
    base = k._read(k.sym["tvec_bases"])
    tv5 = base + e.TVB["TV5"] + 8 * 31
    assert _timer_list(k, tv5) == [timer] and k._read(timer + e.TIMER["BASE"]) == base
    k.lock_down()
    assert _timer_list(k, tv5) == [] and k._read(timer + e.TIMER["BASE"]) == 0
    assert (k._read(timer), k._read(timer + 4)) == (0x00100100, 0x00200200)
    k.write_records(1)
    tv2 = base + e.TVB["TV2"] + 8 * 19
    assert _timer_list(k, tv2) == [timer] and k._read(timer + e.TIMER["BASE"]) == base
    assert k._read(timer + e.TIMER["EXPIRES"]) == 5000
    assert _spin_free(k, base + e.TVB["LOCK"]) and _spin_free(k, timer + e.TIMER["LOCK"])
    # every other head of the base's 512 still empty
    heads = [base + e.TVB["TV1"] + 8 * i for i in range(512)]
    assert [h for h in heads if k._read(h) != h] == [tv2]


def test_a_call_on_a_cores_own_stack_takes_that_cpus_slab_array():
    # mm/slab.c 2146-2166: __cache_alloc takes from ac = cachep->array[smp_processor_id()];
    # a call the model makes on core 2's own stack (no task: kjournald's turns, the disk's
    # dispatch) is the kernel on CPU 2, so it takes CPU 2's array (a fresh cache: empty, so
    # the first BATCHREFILL_LIMIT 16 of CPU 2's own objects, handed out lowest first) and
    # leaves CPU 0's as it was
    k = e.Kernel("2.6.12", cpus=4, max_records=64)
    cache = k.caches["journal_head_cache"]
    arrays = [k._read(cache + e.KC["ARRAY"] + 4 * cpu) for cpu in range(4)]
    before = [k._read(ac + e.AC["AVAIL"]) for ac in arrays]
    start = k._read(arrays[2] + e.AC["NEXT"])
    got = k.machine.run_tasks([None, None,
                               lambda task: task.call("kmem_cache_alloc", cache).return_value])
    assert got[2] == start
    after = [k._read(ac + e.AC["AVAIL"]) for ac in arrays]
    assert after[2] == 15 and [after[c] for c in (0, 1, 3)] == [before[c] for c in (0, 1, 3)]
    assert [k._read(ti + e.TI["CPU"]) for ti in k.core_ti] == [0, 1, 2, 3]
