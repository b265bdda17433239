"""Memory copying (Mackerras 2003 section 3): alignment costs, POWER4's L2 store queues, and
the copy routines, every count computed by hand in the comments.

Store-queue geometry used by the model tests (``sq_model``): L1 D 128 B, 2-way, 32 B lines,
store-through, no write-allocate; L2 1 KB, 4-way, 32 B lines; two slices of two entries,
each held 10 cycles. Line n = addr >> 5 goes to slice n % 2.
"""

import pytest

from emu import cache as c
from emu.cache import CacheLevel, CacheModel


# ------------------------------------------------------------------ the model: store queues

def sq_model(slices=2, entries=2, service=10):
    levels = [CacheLevel("L1D", 128, 2, 32, write_policy="through", write_allocate=False,
                         hit_latency=2),
              CacheLevel("L2", 1024, 4, 32, hit_latency=10)]
    return CacheModel(levels, memory_latency=100,
                      store_queues={"slices": slices, "entries": entries, "service": service})


def test_store_queue_full_slice_stalls_until_an_entry_frees():
    m = sq_model()
    # lines 0, 2, 4 are all slice 0; at cycle 0 the first two take the two entries (busy
    # until 10); the third waits 10 cycles and holds entry 0 until 20
    assert [m.store(a, 8, at=0) for a in (0, 64, 128)] == [0, 0, 10]
    assert m.store_queue_stats() == {"stores": 3, "stalls": 1, "stall_cycles": 10}


def test_store_queue_alternating_slices_do_not_stall():
    m = sq_model()
    # lines 0, 1, 2, 3 alternate slices 0, 1, 0, 1: two stores per slice fit its two entries
    assert [m.store(a, 8, at=0) for a in (0, 32, 64, 96)] == [0, 0, 0, 0]
    assert m.store_queue_stats() == {"stores": 4, "stalls": 0, "stall_cycles": 0}


def test_store_queue_entries_free_with_time():
    m = sq_model()
    # slice 0 at cycles 0, 1, 2: entries busy until 10 and 11; the third waits 10 - 2 = 8
    # and holds entry 0 until 20. At cycle 5 the earliest entry frees at 11: 6 cycles.
    assert [m.store(0, 8, at=t) for t in (0, 1, 2)] == [0, 0, 8]
    assert m.store(64, 8, at=5) == 6
    # at 30 every entry is free again (busy until 20 and 21)
    assert m.store(128, 8, at=30) == 0
    assert m.store_queue_stats() == {"stores": 5, "stalls": 2, "stall_cycles": 14}


def test_store_crossing_a_line_takes_an_entry_in_each_slice():
    m = sq_model(entries=1)
    # bytes 30..33: line 0 (slice 0) and line 1 (slice 1), one entry each
    assert m.store(30, 4, at=0) == 0
    assert m.store_queue_stats()["stores"] == 2
    # both slices busy until 10: a store to line 1 at cycle 4 waits 6
    assert m.store(32, 4, at=4) == 6


def test_store_queue_counts_even_on_l1_hits():
    m = sq_model()
    m.load(0)                                # the line is in the L1 D now
    assert m.store(0, 4, at=0) == 0          # a write-through hit still goes to the L2
    assert m.stats()["L1D"]["hits"] == 1
    assert m.store_queue_stats()["stores"] == 1


def test_store_queues_need_a_store_through_l1_and_an_l2():
    with pytest.raises(ValueError, match="write_policy 'through'"):
        CacheModel([CacheLevel("L1D", 128, 2, 32), CacheLevel("L2", 1024, 4, 32)],
                   store_queues={"slices": 3, "entries": 4, "service": 12})
    with pytest.raises(ValueError, match="the levels have none"):
        CacheModel([CacheLevel("L1D", 128, 2, 32, write_policy="through")],
                   store_queues={"slices": 3, "entries": 4, "service": 12})
    with pytest.raises(ValueError, match="missing service"):
        CacheModel(
            [CacheLevel("L1D", 128, 2, 32, write_policy="through"),
             CacheLevel("L2", 1024, 4, 32)], store_queues={"slices": 3, "entries": 4})
    with pytest.raises(ValueError, match="entries must be a positive whole number"):
        sq_model(entries=0)


# ------------------------------------------------------------------ the model: alignment

def align_model(**rules):
    return CacheModel([CacheLevel("L1D", 1024, 2, 32, hit_latency=2)], memory_latency=100,
                      alignment=rules)


def test_alignment_exception_on_8_byte_access_not_word_aligned():
    m = align_model(exception_size=8, exception_align=4, exception_cycles=300)
    m.load(0)                                 # fill line 0: later loads there hit
    assert m.load(0, 8) == 0                  # aligned
    assert m.load(4, 8) == 0                  # word aligned: done in hardware
    assert m.load(1, 8) == 300                # not word aligned: the handler's 300 cycles
    assert m.store(2, 8) == 300
    assert m.load(1, 4) == 0                  # only 8-byte accesses trap
    assert m.alignment_stats() == {"exceptions": 2, "splits": 0}


def test_split_access_across_a_doubleword():
    m = align_model(split_boundary=8, split_cycles=1)
    m.load(0)
    assert [m.load(a, 4) for a in (0, 2, 4, 5, 7)] == [0, 0, 0, 1, 1]   # 5..8, 7..10 cross 8
    assert m.load(7, 1) == 0 and m.load(7, 2) == 1
    assert m.alignment_stats() == {"exceptions": 0, "splits": 3}


@pytest.mark.parametrize("rules, message", [
    ({"exception_size": 8, "exception_align": 3}, "powers of two"),
    ({"split_boundary": 6}, "split_boundary must be a power of two"),
    ({"exception_cycles": -1}, "whole number >= 0"),
    ({"exceptoin_size": 8}, "unknown key"),
])
def test_bad_alignment_rules_are_refused(rules, message):
    with pytest.raises(ValueError, match=message):
        align_model(**rules)
