"""wb_kupdate's pass (routines/x86/kupdate_2612.S, ext3model.Kernel.kupdate_pass):
instruction counts derived by hand from the routines, and what the pass leaves."""
import pytest

from emu.hw.faults import GuestFault
from emu.papers.yoshioka2005 import ext3model as e


def _kernel():
    k = e.Kernel("2.6.12", cpus=1, max_records=20)
    k.write_records(4)
    return k


def _instructions(k, old):
    return k.kupdate_pass(old=old, measure=lambda run: run().instructions)


def test_a_pass_takes_the_instructions_counted_by_hand():
    # One CPU, jiffies 0, super_blocks: the block devices' (clean) then ext3's (s_dirt).
    # pdflush_kupdate 10; wb_kupdate's own 101 (frame 5, the wbc 11, sync_supers' call 1,
    # get_writeback_state 1 + 4 x 7, oldest_jif 11, start and next_jif 10, nr_to_write 4,
    # one turn of the loop 13 (nr_to_write left at 1024: all the old data written), the
    # next_jif test 5, mod_timer's call 6, the return 6); __read_page_state 4 x 14 (one
    # CPU); sync_supers 73 (two walks of the list: 37 to the dirty ext3 super block and the
    # call, 26 back to the head, the lock's 9) with write_super 21, ext3_write_super 13,
    # __down_trylock 35 (its down_trylock fails: write_super holds s_lock), drop_super 24;
    # writeback_inodes 151 (63 for each super block, newest first, 25 around them) and
    # sync_sb_inodes 57 for each (s_dirty spliced onto the empty s_io, 15; the oldest
    # inode dirtied at jiffies 0, after oldest_jif = -3000: the walk ends there); mod_timer
    # 9 to its tail call and __mod_timer 82 (mod_timer called alone: 91) = 689
    k = _kernel()
    k._build_kupdate_state()
    assert k.machine.call("mod_timer", k._read(k.sym["wb_timer"]), 5000).instructions == 91
    k = _kernel()
    assert _instructions(k, old=False) == 689
    # the next pass, the block device's inode due (dirtied 3001 jiffies ago): mod_timer
    # finds the timer pending at the same expiry, 12 (-79); s_dirty empty and s_io in use
    # in each super block, 3 more each in writeback_inodes (+6) and no splice (-15 each);
    # the block device's inode passes the age tests (3 more) and current_is_pdflush (5),
    # and writeback_acquire finds BDI_pdflush held (2): +7 = 593
    assert _instructions(k, old=True) == 593
    # young again: 593 - 7 = 586
    assert _instructions(k, old=False) == 586


def test_a_pass_cleans_the_super_block_rearms_its_timer_and_writes_nothing():
    k = _kernel()
    dirty = k._read(k.pcpu[0] + e.PCPU["PAGE_STATE"] + e.PS["NR_DIRTY"])
    k.kupdate_pass()
    assert k._read(k.vsb["ext3"] + e.VSB["DIRT"], 1) == 0             # ext3_write_super
    timer = k._read(k.sym["wb_timer"])
    assert k._read(timer + e.TIMER["EXPIRES"]) == 5000                 # 500 centisecs on
    assert k._read(timer + e.TIMER["BASE"]) != 0                       # pending
    io = k.vsb["ext3"] + e.VSB["IO"]                                   # the files parked
    assert k._read(io + 4) == k.files[0]["inode"] + e.I["LIST"]
    assert k._read(k.vsb["ext3"] + e.VSB["DIRTY"]) == k.vsb["ext3"] + e.VSB["DIRTY"]
    assert k._read(k.pcpu[0] + e.PCPU["PAGE_STATE"] + e.PS["NR_DIRTY"]) == dirty
    assert k._read(k.vsb["ext3"] + e.VSB["COUNT"]) == 1 << 30          # references dropped
    assert k._read(k.vsb["ext3"] + e.VSB["UMOUNT"]) == 0               # s_umount free


def test_a_due_inode_with_its_queue_free_reaches_writeback_which_is_not_modelled():
    k = _kernel()
    k.kupdate_pass()
    k._word(k.bdi + e.BDI["STATE"], 0)          # no other pdflush on the disk's queue
    with pytest.raises(GuestFault):
        k.kupdate_pass(old=True)
