"""The paced runs' writeback as 2.6.12.1 has it in the mail's run: the throttled writers'
chunks (ext3model.KernelWriteback._writer_chunk), a period of them per run
(writebatch.period_writes), and __mark_inode_dirty's slow path (routines/x86/vfs_2612.S),
which the first write after a chunk takes."""
import pytest

from emu.hw import estimates
from emu.papers.yoshioka2005 import ext3model as e
from emu.papers.yoshioka2005 import writebatch

F = e.FIRST_INDEX
I_DIRTY_SYNC, I_DIRTY_PAGES = 1, 4


def test_the_period_from_the_sources_constants():
    # set_ratelimit: 4 GB is 1,048,576 pages; / (4 x 32) = 8192, at most 4 MB of pages:
    # 1024 (on one CPU 32,768, the same 1024). sync_writeback_pages: 1024 + 512 = 1536,
    # whole pagevecs of 14: 110 x 14 = 1540 pages a chunk; a page dirtied a write and all
    # of it written back by the chunks: a chunk every 1540 writes of a CPU
    assert estimates.value(e.MEMORY_MB[0], e.MEMORY_MB[1]) == 4096
    assert writebatch.period_writes(4) == 1540
    assert writebatch.period_writes(1) == 1540
    assert e.chunk_period(1024) == 1540
    assert e.chunk_period(512) == 770           # 256 MB: 512 + 256 = 768, 55 pagevecs
    assert e.chunk_period(16) == 28             # the least ratelimit: 24, two pagevecs


def test_the_writers_chunks_spread_over_the_period_as_their_writes():
    k = e.Kernel("2.6.12", cpus=4, max_records=64)
    # STAGGER 1: CPU k at k / 4 of 1540 writes
    assert [k.chunk_offset(c) for c in range(4)] == [0, 385, 770, 1155]
    assert [n for n in range(1, 3081) if k.chunk_due(1, n)] == [385, 1925]
    with estimates.moved({e.STAGGER[0]: 0.0}):
        assert [k.chunk_offset(c) for c in range(4)] == [0, 0, 0, 0]


def _inode_call(state, flags, mode=e.S_IFREG_644, hashed=True):
    k = e.Kernel("2.6.12", cpus=1, max_records=64)
    inode = k.files[0]["inode"]
    k._word(inode + e.I["STATE"], state)
    k._poke(inode + e.I["MODE"], mode.to_bytes(2, "little"))
    if not hashed:
        k._word(inode + e.I["HASH"] + 4, 0)
    run = k.machine.call("__mark_inode_dirty", inode, flags)
    return k, inode, run


@pytest.mark.parametrize("state, mode, hashed, instructions", [
    # in: pushl, movl, testl $3, jz (no dirty_inode for I_DIRTY_PAGES), mfence, movl,
    # andl, cmpl, jne = 9; the fast path's popl, ret: 11
    (I_DIRTY_PAGES, e.S_IFREG_644, True, 11),
    # the slow path: block_dump's cmpl, jne; leal, pushl, call, _spin_lock's movl, lock
    # decb, jns, ret, addl (10); flags and i_state read, the "dirtied meanwhile" movl,
    # andl, cmpl, je, was_dirty's movl, andl, |= flags, stored (10); I_LOCK's testl, jnz
    # (2); S_ISBLK's movzwl, andl, cmpl, je (4); pprev's cmpl, je (2); I_FREEING|I_CLEAR's
    # testl, jnz (2); was_dirty's testl, jz (2); out: leal, pushl, call, _spin_unlock's
    # movl, movb, ret, addl, popl, ret (9): 9 + 41
    (I_DIRTY_SYNC, e.S_IFREG_644, True, 50),
    # locked: out after I_LOCK's test: 9 + 10 + 10 + 2 + 9
    (I_DIRTY_SYNC | e.I_STATE_BITS["LOCK"], e.S_IFREG_644, True, 40),
    # unhashed: out at pprev's je: 9 + 10 + 10 + 2 + 4 + 2 + 9
    (I_DIRTY_SYNC, e.S_IFREG_644, False, 46),
    # a block device's, unhashed: S_ISBLK's je past pprev: 9 + 10 + 10 + 2 + 4 + 2 + 2 + 9
    (I_DIRTY_SYNC, e.S_IFBLK, False, 48),
])
def test_mark_inode_dirty_counted_by_hand(state, mode, hashed, instructions):
    k, inode, run = _inode_call(state, I_DIRTY_PAGES, mode, hashed)
    assert run.instructions == instructions
    assert k._read(inode + e.I["STATE"]) == state | I_DIRTY_PAGES
    assert k._read(k.sym["inode_lock"]) & 0xFF == 1             # released


def test_a_clean_inode_newly_dirty_faults():
    with pytest.raises(Exception, match="ud2|Invalid"):
        _inode_call(0, I_DIRTY_PAGES)


def _paced_with_a_chunk(ratelimit=16, written=60):
    """One CPU's writer, the period cut to ``ratelimit``'s chunk (28 pages at 16): the run
    of one period after ``written`` writes, its chunk after its write number 84."""
    k = e.Kernel("2.6.12", cpus=1, cores=2, max_records=written + 64, writer_chunks=True)
    k.write_records(written)
    k.ratelimit = ratelimit
    period = e.chunk_period(ratelimit)
    runs = k.paced_writes(period, 300_000)
    return k, runs, period


def test_a_period_holds_one_chunk_of_the_oldest_dirty_pages():
    k, runs, period = _paced_with_a_chunk()
    assert k.chunks == [1] and k.chunk_pages == [28] and k.written_back == [0]
    mapping = k.files[0]["mapping"]
    dirty = 1 << e.PG_BITS["dirty"]
    # the walk started at the file's first dirty page: the 28 oldest written back
    flags = [k._read(k._lookup(mapping, F + i) + e.PG["FLAGS"]) for i in range(30)]
    assert [bool(f & dirty) for f in flags] == [False] * 28 + [True] * 2
    # the chunk's requests went to the disk (none left on the queue); at most 13 counted
    assert k._requests() == [] and 1 <= k.most_queued < 113
    # the write after the chunk took __mark_inode_dirty's slow path (the walk left the
    # inode I_DIRTY_PAGES; the write's ext3_new_block marks it I_DIRTY): 41 instructions
    # where the next write's fast path has popl, ret, 39 more
    i = 84 - 60                     # the first write after write number 84
    assert runs[0][i].instructions - runs[0][i + 1].instructions == 39


def test_the_stand_in_is_off_with_the_chunks_and_on_without():
    k, _, _ = _paced_with_a_chunk()
    assert k.written_back == [0]
    plain = e.Kernel("2.6.12", cpus=1, cores=2, max_records=124)
    plain.write_records(60)
    plain.paced_writes(28, 300_000)
    assert plain.chunks == [0] and plain.written_back[0] > 0


def test_paced_profiles_with_chunks_are_whole_periods():
    from emu.papers import yoshioka2005 as y
    with pytest.raises(ValueError, match="whole periods"):
        y.write_profile("2.6.12", records=250, warm=10, cpus=1, paced=True,
                        counters=("cycles",))
