"""The log's checkpoint, log_do_checkpoint (routines/x86/checkpoint_2612.S), on the checkpoint
list a whole commit of the first four writes leaves. Counts worked out by hand from the routine
and from fs/jbd/checkpoint.c of 2.6.12.1 (each comment says how)."""
import pytest

from emu.hw.faults import GuestFault
from emu.papers.yoshioka2005 import ext3model as e

LOCKED, DIRTY = 1 << e.BH_BITS["Lock"], 1 << e.BH_BITS["Dirty"]


def _committed():
    """A one-CPU Kernel whose first transaction is committed (four writes): alone on
    j_checkpoint_transactions, its four metadata buffers dirty on its checkpoint list."""
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    k.write_records(4)
    k.whole_commit()
    return k


def _buffers(k):
    return [k._read(jh + e.JH["BH"]) for jh in k._checkpoint_list(k.transaction)]


def test_a_pass_over_buffers_under_io_counts_by_hand_and_sleeps_on_the_first():
    # every buffer of the list locked and clean (under I/O): cleanup_journal_tail finds the
    # oldest transaction at the log's tail (j_tail_sequence its tid: 1, 46 instructions
    # with four uncontended spin-lock calls of 4 and 3); the walk takes each buffer's state
    # lock and __flush_buffer passes it to __try_to_free_cp_buf, which keeps it (locked:
    # 13): 57 instructions a buffer, 55 the last (its loop test leaves at once); nothing
    # batched and no retry, so __cleanup_transaction (40) takes a reference on the first
    # buffer, drops j_list_lock and sleeps on it; with the prologue, the list lock, the
    # transaction's header, the tests after the walk and the way out: 143 fixed.
    # 143 + 55 + 3 x 57 = 369
    k = _committed()
    bhs = _buffers(k)
    assert len(bhs) == 4
    for bh in bhs:
        k._word(bh, (k._read(bh) | LOCKED) & ~DIRTY)
    counts = [k._read(bh + e.BH["COUNT"]) for bh in bhs]
    wait = k.checkpoint_wait
    run = k.machine.call("log_do_checkpoint", k.journal, wait)
    assert run.return_value == bhs[0]
    assert run.instructions == 143 + 55 + 3 * 57
    assert k.machine.read(wait, 12) == e._words(1, k.transaction, bhs[0])
    assert k._read(bhs[0] + e.BH["COUNT"]) == counts[0] + 1     # atomic_inc, for the wait
    assert k._read(k.journal + e.J["LIST_LOCK"]) == 1             # dropped to sleep
    # woken with its buffer still locked: the model must end the I/O first
    with pytest.raises(GuestFault, match="ud2"):
        k.machine.call("log_do_checkpoint_woken", k.journal, wait)


def test_the_checkpoint_submits_the_dirty_buffers_in_list_order_and_drops_the_transaction():
    # checkpoint.c 309-369: the first walk batches the four dirty buffers in the list's
    # order (__flush_buffer: get_bh, jwrite) and __flush_batch hands them to ll_rw_block
    # (each its own request: no two adjacent on the disk); the next walk finds each locked,
    # and __cleanup_transaction sleeps on the first; each wake-up, its request ended (the
    # disk's dispatch and interrupt), the walk releases the buffers written back, the last
    # one dropping the transaction (off j_checkpoint_transactions, kfree'd); so four sleeps
    # for four requests, then cleanup_journal_tail moves the tail to j_head (the log empty:
    # no transaction left, none running) and writes the journal's superblock, a fifth sleep
    k = _committed()
    bhs = _buffers(k)
    sectors = [k._read(bh + e.BH["BLOCKNR"]) * 8 for bh in bhs]
    j = k.journal
    head, free, tail = (k._read(j + e.J[f]) for f in ("HEAD", "FREE", "TAIL"))
    queues = []

    def measure(run):
        result = run()
        queues.append([start for _, start, _, _, _ in k._requests()])
        return result.return_value
    out = k.checkpoint(measure=measure)
    assert queues[0] == sectors                                 # submitted in list order
    assert out["checkpoint"][0] == bhs[0]                       # asleep on the first
    assert (out["buffers"], out["waits"], out["written"]) == (4, 5, 5)
    assert len(out["checkpoint"]) == 6 and len(out["disk"]) == 2 * 5
    assert k._read(j + e.J["CHECKPOINT_TRANSACTIONS"]) == 0      # the transaction dropped
    assert k._read(j + e.J["TAIL"]) == head
    assert k._read(j + e.J["FREE"]) == free + (head - tail)     # the freed blocks back
    assert k._read(j + e.J["TAIL_SEQUENCE"]) == 2               # j_transaction_sequence
    for bh in bhs:
        assert not k._read(bh) & (LOCKED | DIRTY)
        assert k._read(bh + e.BH["PRIVATE"]) == 0               # its journal head gone
    sb = k._read(j + e.J["SUPERBLOCK"])
    assert k.machine.read(sb + e.JSB["S_SEQUENCE"], 8) == \
        (2).to_bytes(4, "big") + head.to_bytes(4, "big")
    assert k._read(j + e.J["FLAGS"]) & 8 == 0                   # s_start set: not flushed
    assert k._read(k.checkpoint_wait) == 0                      # awake
    cache = k._read(k.sym["size128_cache"])                     # kfree'd: kmalloc's next
    assert k.machine.call("kmem_cache_alloc", cache).return_value == k.transaction


def test_a_checkpoint_with_the_tail_moved_already_returns_at_once():
    # checkpoint.c 296-299: cleanup_journal_tail frees the log up to the oldest transaction
    # still there and returns 0; log_do_checkpoint returns it without a walk. Here the tail
    # is behind the first transaction (j_tail_sequence 0): the tail moves to its
    # t_log_start and the superblock is written (a sleep on its buffer)
    k = _committed()
    j = k.journal
    k._word(j + e.J["TAIL_SEQUENCE"], 0)
    run = k.machine.call("log_do_checkpoint", j, k.checkpoint_wait)
    assert run.return_value == k._read(j + e.J["SB_BUFFER"])
    assert k._read(j + e.J["TAIL_SEQUENCE"]) == 1
    assert k._read(j + e.J["CHECKPOINT_TRANSACTIONS"]) == k.transaction
    assert all(k._read(bh) & DIRTY for bh in _buffers(k))       # none written


@pytest.mark.parametrize("free, left", [
    (8192, 7140),       # 8192 - 32 = 8160, less 8160 >> 3 = 1020
    (40, 7),            # 8, less 1
    (32, 0), (0, 0),    # nothing left once the reserve is taken: 0, not negative
])
def test_log_space_left_reserves_32_blocks_and_an_eighth(free, left):
    # __log_space_left, fs/jbd/journal.c 414-433 of 2.6.12.1, on the journal's j_free
    k = e.Kernel("2.6.12", cpus=1, max_records=4)
    k._word(k.journal + e.J["FREE"], free)
    assert k.machine.call("__log_space_left", k.journal).return_value == left
    assert e.log_space_left(free) == left       # the model's arithmetic says the same


def test_a_handle_finding_the_log_short_takes_the_checkpoint_path():
    # start_this_handle, transaction.c 210-214: __log_space_left (7 blocks at j_free 40)
    # below jbd_space_needed (j_max_transaction_buffers, no committing transaction) would
    # wait in __log_wait_for_space, which no run reaches: the routine's ud2
    k = e.Kernel("2.6.12", cpus=1, max_records=4)
    k._word(k.journal + e.J["FREE"], 40)
    with pytest.raises(GuestFault, match=r"start_this_handle\+.*ud2"):
        k.write_records(1)
