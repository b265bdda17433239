"""emu.hw.cache: the cache model driven by hand, every count computed in the comments.

Conventions of the small configurations used below (all addresses well inside RAM):

* ``L1D_SMALL`` 128 B, 2-way, 32 B lines -> 2 sets; line n = addr >> 5 is in set n & 1.
* ``L2_SMALL`` 1 KB, 4-way, 32 B lines -> 8 sets, hit latency 10.
* L1 hit latency 2, memory latency 100. A load's returned stall is the serving level's
  latency minus the L1 latency: 100 - 2 = 98 from memory, 10 - 2 = 8 from L2, 0 on an L1 hit.
"""

import pytest

from emu.hw import cache as c
from emu.hw.cache import CacheLevel, CacheModel, Layout

MEM = 100


def l1d(**kw):
    return CacheLevel("L1D", 128, 2, 32, hit_latency=2, **kw)


def l1i(**kw):
    return CacheLevel("L1I", 128, 2, 32, hit_latency=2, **kw)


def l2(**kw):
    return CacheLevel("L2", 1024, 4, 32, hit_latency=10, **kw)


def two_levels(l1_kw=None, l2_kw=None, **options):
    return CacheModel([l1d(**(l1_kw or {})), l2(**(l2_kw or {}))], memory_latency=MEM,
                      **options)


def with_icache(l1d_kw=None, **options):
    return CacheModel([l1i(), l1d(**(l1d_kw or {})), l2()], memory_latency=MEM, **options)


def resident(model, name):
    """Sorted base addresses of the lines a level holds (read from the state array)."""
    st = model.state
    lv = model.layout.levels[model.layout.index[name]]
    r = c.HEADER + c.LEVEL_RECORD * model.layout.index[name]
    tags = st[st[r + c.L_TAGS]:st[r + c.L_TAGS] + lv.sets * lv.ways]
    return sorted(int(t - 1) * lv.line for t in tags if t != 0)


def stat(model, name, key):
    return model.stats()[name][key]


def counter(model, h):
    return int(model.state[h])


# ----------------------------------------------------------------------- replacement

# One set of 4 ways (128 B, 32 B lines): lines A..E all map to the only set.
A, B, C, D, E = 0, 32, 64, 96, 128


def one_set(policy, seed=1):
    return CacheModel([CacheLevel("L1D", 128, 4, 32, replacement=policy)], seed=seed)


def run(model, addresses):
    for a in addresses:
        model.load(a)
    return model


def test_lru_evicts_least_recently_used():
    # A B C D fill ways 0..3; A hits (now most recent); E evicts the oldest use: B.
    m = run(one_set("lru"), [A, B, C, D, A, E])
    assert resident(m, "L1D") == [A, C, D, E]
    assert m.stats()["L1D"] == {"accesses": 6, "hits": 1, "misses": 5, "writebacks": 0,
                                "invalidations": 0, "evictions": 1}


def test_tree_plru_differs_from_lru():
    # Tree bits: b1 root (1 = victim on the right pair), b2 over ways 0/1, b3 over ways 2/3
    # (1 = victim on the right way). Touch 0: b1=1,b2=1; touch 1: b1=1,b2=0;
    # touch 2: b1=0,b3=1; touch 3: b1=0,b3=0; touch 0 again (A hits): b1=1,b2=1.
    # Victim: b1=1 -> right pair, b3=0 -> left way = way 2 = C (LRU would pick B).
    m = run(one_set("plru"), [A, B, C, D, A, E])
    assert resident(m, "L1D") == [A, B, D, E]
    # B is still there under PLRU: a hit; under LRU the same probe misses.
    hits = stat(m, "L1D", "hits")
    m.load(B)
    assert stat(m, "L1D", "hits") == hits + 1
    lru = run(one_set("lru"), [A, B, C, D, A, E, B])
    assert stat(lru, "L1D", "hits") == 1          # only the A re-use


def test_plru_victim_follows_the_tree_after_e():
    # Continue the sequence: E filled way 2 -> touch 2: b1=0, b3=1 (b2 stays 1).
    # Next victim: b1=0 -> left pair, b2=1 -> right way = way 1 = B.
    m = run(one_set("plru"), [A, B, C, D, A, E, 160])
    assert resident(m, "L1D") == [A, D, E, 160]


def plru_walk(bits, ways, way):
    """A use of ``way``: every node on its path points away from it (1: victim on the right)."""
    node, span = 1, ways
    while span > 1:
        span >>= 1
        if way & span:
            bits &= ~(1 << node)
            node = 2 * node + 1
        else:
            bits |= 1 << node
            node = 2 * node
    return bits


@pytest.mark.parametrize("ways", [2, 4, 8, 16, 32, 64])
def test_a_plru_use_sets_the_bits_a_walk_down_the_tree_sets(ways):
    # One set: lines 0..ways-1 fill ways 0..ways-1 in order (an empty way first), then
    # hits in a scattered order (never the line just used: that hit changes nothing)
    m = CacheModel([CacheLevel("L1D", 32 * ways, ways, 32, replacement="plru")])
    r = c.HEADER + c.LEVEL_RECORD * m.layout.index["L1D"]
    order = list(range(ways)) + [(7 * k + 3) % ways for k in range(ways)]
    bits = 0
    for k, way in enumerate(order):
        if k and way == order[k - 1]:
            continue
        m.load(32 * way)
        bits = plru_walk(bits, ways, way)
        assert int(m.state[m.state[r + c.L_PLRU]]) & (1 << 64) - 1 == bits, (ways, k, way)


def test_fifo_hit_does_not_refresh():
    # Same sequence: FIFO evicts the first line filled (A) although A was just used.
    m = run(one_set("fifo"), [A, B, C, D, A, E])
    assert resident(m, "L1D") == [B, C, D, E]
    assert stat(m, "L1D", "hits") == 1
    # and the next fill evicts B (second oldest fill), not the least recently used
    m.load(160)
    assert resident(m, "L1D") == [C, D, E, 160]


def xorshift(x):
    """Reference xorshift64 (unsigned), as documented in emu.hw.cache._random."""
    mask = (1 << 64) - 1
    x ^= (x << 13) & mask
    x ^= x >> 7
    x ^= (x << 17) & mask
    return x, x & 0x7FFFFFFFFFFFFFFF


def reference_random_hits(seed, addresses, ways=4, line=32):
    """A pure-Python fully-associative random-replacement cache (one set)."""
    x, slots, hits = seed, [None] * ways, 0
    for a in addresses:
        tag = a // line
        if tag in slots:
            hits += 1
            continue
        if None in slots:
            slots[slots.index(None)] = tag
        else:
            x, r = xorshift(x)
            slots[r % ways] = tag
    return hits


# 8 lines cycled 4 times through a 4-way set: LRU would get 0 hits; random gets some.
CYCLE = [32 * k for k in range(8)] * 4


def test_random_first_victim_by_hand():
    # seed 1: x = 1 ^ 1<<13 = 0x2001; ^ x>>7 (0x40) = 0x2041; ^ x<<17 (0x40820000)
    # = 0x40822041; 0x40822041 % 4 = 1 -> way 1 (B) is replaced by E.
    assert xorshift(1)[1] == 0x40822041
    m = run(one_set("random", seed=1), [A, B, C, D, E])
    assert resident(m, "L1D") == [A, C, D, E]


def test_random_is_seeded_and_pinned():
    m1 = run(one_set("random", seed=1), CYCLE)
    again = run(one_set("random", seed=1), CYCLE)
    assert m1.stats() == again.stats()
    assert resident(m1, "L1D") == resident(again, "L1D")
    # pinned for seed 1, and equal to the independent reference model
    assert reference_random_hits(1, CYCLE) == 5
    assert m1.stats()["L1D"] == {"accesses": 32, "hits": 5, "misses": 27, "writebacks": 0,
                                 "invalidations": 0, "evictions": 23}
    assert resident(m1, "L1D") == [64, 160, 192, 224]
    # another seed, another sequence of victims (6 hits, also what the reference gives)
    m2 = run(one_set("random", seed=2), CYCLE)
    assert reference_random_hits(2, CYCLE) == 6
    assert stat(m2, "L1D", "hits") == 6
    assert resident(m2, "L1D") != resident(m1, "L1D")


def test_lru_on_the_cycle_never_hits():
    m = run(one_set("lru"), CYCLE)
    assert stat(m, "L1D", "hits") == 0
    assert stat(m, "L1D", "evictions") == 28      # 32 misses, the first 4 fill empty ways


# ------------------------------------------------------------------ write policies

def test_write_back_write_allocate():
    m = two_levels()
    # store miss: fill through L2 (miss) from memory: stall 100 - 2
    assert m.store(0) == 98
    assert m.store(0) == 0                        # hit: the line is dirty in L1
    # lines 2 and 4 (addresses 64, 128) share set 0 with line 0: the second evicts
    # line 0 (least recently used), dirty -> written back into L2, where it hits.
    assert m.load(64) == 98
    assert m.load(128) == 98
    s = m.stats()
    assert s["L1D"] == {"accesses": 4, "hits": 1, "misses": 3, "writebacks": 1,
                        "invalidations": 0, "evictions": 1}
    # L2: three fills (misses) + the write-back (hit)
    assert s["L2"] == {"accesses": 4, "hits": 1, "misses": 3, "writebacks": 0,
                       "invalidations": 0, "evictions": 0}
    assert m.memory_traffic == {"reads": 3, "writes": 0}


def test_write_through_no_allocate_l1():
    # Pentium 4 style: L1D write-through, no write-allocate, over a write-back L2.
    m = two_levels({"write_policy": "through", "write_allocate": False})
    assert m.store(0) == 0            # write-around: no fill, no stall
    # L1 miss; the write goes to L2: L2 misses, allocates (fill from memory), line dirty
    assert stat(m, "L1D", "misses") == 1 and stat(m, "L1D", "accesses") == 1
    assert stat(m, "L2", "misses") == 1
    assert m.memory_traffic == {"reads": 1, "writes": 0}
    assert resident(m, "L1D") == []
    assert m.store(0) == 0            # L1 misses again (no allocation), L2 hits
    assert m.load(0) == 8             # L1 miss, L2 hit: 10 - 2
    assert m.store(0) == 0            # L1 hit now, written through to L2 (hit)
    s = m.stats()
    assert (s["L1D"]["accesses"], s["L1D"]["hits"], s["L1D"]["misses"]) == (4, 1, 3)
    assert (s["L2"]["accesses"], s["L2"]["hits"], s["L2"]["misses"]) == (4, 3, 1)
    assert s["L1D"]["writebacks"] == 0
    assert m.memory_traffic == {"reads": 1, "writes": 0}


def test_no_allocate_at_both_levels_writes_memory():
    m = two_levels({"write_allocate": False}, {"write_allocate": False})
    assert m.store(0) == 0
    assert stat(m, "L1D", "misses") == 1 and stat(m, "L2", "misses") == 1
    assert m.memory_traffic == {"reads": 0, "writes": 1}
    assert resident(m, "L1D") == [] and resident(m, "L2") == []


def test_write_through_last_level_writes_memory_every_store():
    m = CacheModel([l1d(write_policy="through")], memory_latency=MEM)
    assert m.store(0) == 98           # write-allocate: fill (memory read), then write-through
    assert m.store(0) == 0            # hit, written through again
    assert m.memory_traffic == {"reads": 1, "writes": 2}
    assert stat(m, "L1D", "writebacks") == 0


def test_write_through_store_hit_is_not_a_fast_path_hit():
    # a write-through store must reach L2 even when it hits the set's most recent line
    m = two_levels({"write_policy": "through"})
    m.load(0)
    m.store(0)
    m.store(0)
    assert stat(m, "L2", "accesses") == 3          # fill + 2 write-throughs
    assert stat(m, "L1D", "hits") == 2


def test_dirty_evictions_per_level():
    # L1D direct-mapped 32 B (one line); L2 direct-mapped 64 B (2 sets): lines 0, 2, 4
    # (addresses 0, 64, 128) all map to L2 set 0. Levels are non-inclusive.
    m = CacheModel([CacheLevel("L1D", 32, 1, 32, hit_latency=2),
                    CacheLevel("L2", 64, 1, 32, hit_latency=10)], memory_latency=MEM)
    m.store(0)      # L1 miss, L2 miss (read 1). L1 {0 dirty}, L2 {0}
    m.store(64)     # L1 evicts dirty 0 -> queued for L2; fill 2: L2 evicts clean 0, read 2;
    #                 then the write-back of 0 misses in L2: evicts clean 2, fills 0 (read 3),
    #                 dirty. L1 {2 dirty}, L2 {0 dirty}
    m.store(128)    # L1 evicts dirty 2 -> queued; fill 4: L2 evicts dirty 0 -> memory write 1,
    #                 read 4; write-back of 2 misses: evicts clean 4, fills 2 (read 5), dirty
    s = m.stats()
    assert s["L1D"]["writebacks"] == 2 and s["L1D"]["evictions"] == 2
    assert s["L2"]["writebacks"] == 1 and s["L2"]["evictions"] == 4
    assert s["L2"]["accesses"] == 5 and s["L2"]["misses"] == 5
    assert m.memory_traffic == {"reads": 5, "writes": 1}
    assert resident(m, "L1D") == [128] and resident(m, "L2") == [64]


# ---------------------------------------------------------------------- maintenance

def test_clean_scope_all_writes_to_memory_and_keeps_the_line():
    m = two_levels()
    m.store(0)
    # L1 write-back into L2 (hit, L2 now dirty): wait 10; L2 write-back to memory: wait 100
    assert m.maintain(0, c.OP_CLEAN, c.SCOPE_ALL) == 110
    assert stat(m, "L1D", "writebacks") == 1 and stat(m, "L2", "writebacks") == 1
    assert m.memory_traffic["writes"] == 1
    assert stat(m, "L1D", "invalidations") == 0
    assert m.load(0) == 0                          # still valid in L1
    # the dirty bit was cleared: a second clean writes nothing and waits for nothing
    assert m.maintain(0, c.OP_CLEAN, c.SCOPE_ALL) == 0
    assert stat(m, "L1D", "writebacks") == 1 and stat(m, "L2", "writebacks") == 1
    assert m.memory_traffic["writes"] == 1


def test_clean_scope_l1_stops_at_l2():
    m = two_levels()
    m.store(0)
    assert m.maintain(0, c.OP_CLEAN, c.SCOPE_L1) == 10
    assert m.memory_traffic["writes"] == 0
    assert stat(m, "L2", "writebacks") == 0
    # the L2 copy is now the dirty one: a full clean writes only it
    assert m.maintain(0, c.OP_CLEAN, c.SCOPE_ALL) == 100
    assert stat(m, "L1D", "writebacks") == 1 and stat(m, "L2", "writebacks") == 1
    assert m.memory_traffic["writes"] == 1


def test_flush_writes_back_and_invalidates():
    m = two_levels()
    m.store(0)
    assert m.maintain(0, c.OP_FLUSH, c.SCOPE_ALL) == 110
    assert stat(m, "L1D", "invalidations") == 1 and stat(m, "L2", "invalidations") == 1
    assert m.memory_traffic == {"reads": 1, "writes": 1}
    assert resident(m, "L1D") == [] and resident(m, "L2") == []
    assert m.load(0) == 98                         # gone everywhere: from memory again
    assert m.memory_traffic["reads"] == 2


def test_flush_scope_l1_leaves_the_dirty_l2_copy():
    m = two_levels()
    m.store(0)
    assert m.maintain(0, c.OP_FLUSH, c.SCOPE_L1) == 10
    assert resident(m, "L1D") == [] and resident(m, "L2") == [0]
    assert stat(m, "L2", "invalidations") == 0
    assert m.load(0) == 8                          # from L2
    assert m.memory_traffic == {"reads": 1, "writes": 0}


def test_invalidate_discards_dirty_data():
    m = two_levels()
    m.store(0)
    assert m.maintain(0, c.OP_INVALIDATE, c.SCOPE_ALL) == 0
    s = m.stats()
    assert s["L1D"]["writebacks"] == 0 and s["L2"]["writebacks"] == 0
    assert s["L1D"]["invalidations"] == 1 and s["L2"]["invalidations"] == 1
    assert m.memory_traffic == {"reads": 1, "writes": 0}      # the store is lost
    assert m.load(0) == 98


def test_maintenance_of_an_absent_line_does_nothing():
    m = two_levels()
    for op in (c.OP_CLEAN, c.OP_FLUSH, c.OP_INVALIDATE):
        assert m.maintain(0x300, op) == 0
    s = m.stats()
    assert all(v == 0 for level in s.values() for v in level.values())


def test_dcbz_allocates_without_reading_memory():
    m = CacheModel([l1d()], memory_latency=MEM)
    assert m.maintain(0x40, c.OP_ZERO, c.SCOPE_L1) == 0
    assert m.memory_traffic == {"reads": 0, "writes": 0}
    assert stat(m, "L1D", "accesses") == 1 and stat(m, "L1D", "misses") == 1
    assert resident(m, "L1D") == [0x40]
    assert m.load(0x44) == 0                       # the whole line is there
    # it is dirty: flushing writes it to memory
    assert m.maintain(0x40, c.OP_FLUSH) == MEM
    assert stat(m, "L1D", "writebacks") == 1
    assert m.memory_traffic == {"reads": 0, "writes": 1}


def test_dcbz_on_a_cached_line_hits():
    m = CacheModel([l1d()], memory_latency=MEM)
    m.load(0x40)
    m.maintain(0x40, c.OP_ZERO, c.SCOPE_L1)
    assert stat(m, "L1D", "hits") == 1
    assert m.memory_traffic == {"reads": 1, "writes": 0}
    m.maintain(0x40, c.OP_CLEAN)
    assert m.memory_traffic == {"reads": 1, "writes": 1}


def test_touch_fills_l1_and_l2():
    m = two_levels()
    assert m.maintain(0, c.OP_TOUCH, c.SCOPE_L1) == 98
    assert resident(m, "L1D") == [0] and resident(m, "L2") == [0]
    assert m.load(0) == 0


def test_touch_outer_fills_only_l2():
    m = two_levels()
    assert m.maintain(0, c.OP_TOUCH_OUTER, 0) == 0     # a prefetch does not stall
    assert stat(m, "L1D", "accesses") == 0
    assert stat(m, "L2", "accesses") == 1 and stat(m, "L2", "misses") == 1
    assert m.memory_traffic["reads"] == 1
    assert resident(m, "L1D") == [] and resident(m, "L2") == [0]
    assert m.load(0) == 8                              # L1 miss, L2 hit


def test_icache_invalidate_one_line():
    m = with_icache()
    assert m.fetch(0) == 98                            # I miss, L2 miss, memory
    assert m.fetch(0) == 0
    assert m.maintain(0, c.OP_ICACHE_INVALIDATE) == 0
    assert stat(m, "L1I", "invalidations") == 1
    assert stat(m, "L1D", "accesses") == 0             # the D side is not involved
    assert m.fetch(0) == 8                             # I miss, L2 hit
    assert (stat(m, "L1I", "accesses"), stat(m, "L1I", "hits")) == (3, 1)
    m.maintain(0x200, c.OP_ICACHE_INVALIDATE)          # absent line: nothing
    assert stat(m, "L1I", "invalidations") == 1


def test_icache_invalidate_all():
    m = with_icache()
    for a in (0, 32, 64):
        m.fetch(a)
    m.maintain(0, c.OP_ICACHE_INVALIDATE_ALL)
    assert stat(m, "L1I", "invalidations") == 3
    assert resident(m, "L1I") == []
    m.fetch(32)
    assert stat(m, "L1I", "misses") == 4


# ------------------------------------------------------------------------ coherence

X = 0x100          # a code line (line 8, set 0 of L1D and L1I)


def test_store_then_fetch_of_cached_i_line_is_stale():
    m = with_icache()
    m.fetch(X)
    m.store(X)
    m.fetch(X)
    assert m.stale_fetches == 1
    assert int(m.state[c.H_STALE_ADDR]) == X and int(m.state[c.H_STALE_PC]) == X


def test_store_then_fetch_of_uncached_i_line_is_stale():
    m = with_icache()
    m.store(X)
    m.fetch(X)          # I miss, but the new bytes are still only in the D-cache
    assert m.stale_fetches == 1


def test_clean_without_icbi_is_still_stale():
    m = with_icache()
    m.fetch(X)
    m.store(X)
    m.maintain(X, c.OP_CLEAN)
    m.fetch(X)          # the I-cache still holds the old line
    assert m.stale_fetches == 1


def test_icbi_without_clean_is_stale_and_stays_stale():
    m = with_icache()
    m.fetch(X)
    m.store(X)
    m.maintain(X, c.OP_ICACHE_INVALIDATE)
    m.fetch(X)          # refetched from below the D-cache, which still holds the new bytes
    assert m.stale_fetches == 1
    m.fetch(X)          # the refilled line holds the old bytes: stale again
    assert m.stale_fetches == 2


def test_clean_and_icbi_make_the_fetch_coherent():
    m = with_icache()
    m.fetch(X)
    m.store(X)
    m.maintain(X, c.OP_CLEAN, c.SCOPE_L1)     # to the point of unification is enough
    m.maintain(X, c.OP_ICACHE_INVALIDATE)
    m.fetch(X)
    m.fetch(X)
    assert m.stale_fetches == 0


def test_flush_also_makes_the_data_reach_the_icache():
    m = with_icache()
    m.store(X)
    m.maintain(X, c.OP_FLUSH)
    m.fetch(X)
    assert m.stale_fetches == 0


def test_dirty_eviction_reaches_the_point_of_unification():
    m = with_icache()
    m.store(X)                          # line 8, set 0 of L1D
    m.load(X + 0x40)                    # line 10, set 0
    m.load(X + 0x80)                    # line 12, set 0: evicts line 8 (dirty, written back)
    assert stat(m, "L1D", "writebacks") == 1
    m.fetch(X)
    assert m.stale_fetches == 0


def test_write_through_store_and_icbi_are_coherent():
    m = with_icache({"write_policy": "through"})
    m.fetch(X)
    m.store(X)
    m.maintain(X, c.OP_ICACHE_INVALIDATE)
    m.fetch(X)
    assert m.stale_fetches == 0


def test_store_to_another_line_is_not_stale():
    m = with_icache()
    m.fetch(X)
    m.store(X + 32)
    m.fetch(X)
    assert m.stale_fetches == 0


def test_a_store_finds_the_l1i_copies_at_both_ends_of_the_lines_it_took_in():
    # A store looks for an L1 I copy to flag stale only between the lowest and highest line
    # the L1 I ever took in (a line outside them is not there). 0x100 (line 8) and 0x300
    # (line 24) share set 0 of the 2-way L1 I; 0x40 (line 2) then widens the range down.
    m = with_icache()
    m.fetch(0x100)
    m.fetch(0x300)
    m.store(0x300)
    m.fetch(0x300)
    assert m.stale_fetches == 1
    m.store(0x100)
    m.fetch(0x100)
    assert m.stale_fetches == 2
    m.fetch(0x40)
    m.store(0x40)
    m.fetch(0x40)
    assert m.stale_fetches == 3


def test_dcbz_is_a_store_for_coherence():
    m = with_icache()
    m.fetch(X)
    m.maintain(X, c.OP_ZERO, c.SCOPE_L1)
    m.fetch(X)
    assert m.stale_fetches == 1


def test_coherent_icache_never_reports():
    m = with_icache(coherent_icache=True)
    m.fetch(X)
    m.store(X)
    m.fetch(X)
    m.maintain(X, c.OP_ICACHE_INVALIDATE)
    m.fetch(X)
    assert m.stale_fetches == 0


def test_store_to_a_dirty_line_after_clean_and_icbi_is_stale_again():
    m = with_icache()
    m.store(X)
    m.maintain(X, c.OP_CLEAN, c.SCOPE_L1)
    m.maintain(X, c.OP_ICACHE_INVALIDATE)
    m.fetch(X)                          # coherent: the bytes reached the L2
    m.store(X + 4)                      # the clean D line becomes dirty again
    m.fetch(X)
    assert m.stale_fetches == 1


def test_write_around_store_reaches_below_but_the_icache_line_is_stale():
    m = with_icache({"write_allocate": False})
    m.fetch(X)
    m.store(X)                          # misses the L1 D, goes to the L2
    assert resident(m, "L1D") == []
    m.fetch(X)
    assert m.stale_fetches == 1
    m.maintain(X, c.OP_ICACHE_INVALIDATE)
    m.fetch(X)                          # the L2 has the new bytes: no clean needed
    assert m.stale_fetches == 1


def test_larger_icache_lines_are_stale_when_any_part_is_stored():
    m = CacheModel([CacheLevel("L1I", 256, 2, 64, hit_latency=2), l1d(), l2()],
                   memory_latency=MEM)
    m.fetch(X)                          # the I line 0x100..0x13F
    m.store(X + 32)                     # the second D line under it
    m.fetch(X)
    assert m.stale_fetches == 1


def test_write_through_store_hit_and_miss_counts():
    m = with_icache({"write_policy": "through", "write_allocate": False})
    assert m.store(X) == 0              # L1 D miss, no allocation: to the L2, no stall
    m.load(X)                           # allocates
    assert m.store(X) == 0              # a hit: written through
    assert (stat(m, "L1D", "accesses"), stat(m, "L1D", "hits"), stat(m, "L1D", "misses")) \
        == (3, 1, 2)
    # the L2 saw the first store (a write miss: allocated, dirty), the load's fill, the second
    # store: one miss, then two hits
    assert (stat(m, "L2", "accesses"), stat(m, "L2", "hits"), stat(m, "L2", "misses")) \
        == (3, 2, 1)
    assert m.memory_traffic == {"reads": 1, "writes": 0}


# ------------------------------------------------------------------- line crossing

def test_load_crossing_a_line_counts_two_accesses():
    m = CacheModel([l1d()], memory_latency=MEM)
    assert m.load(30, 4) == 2 * 98                 # bytes 30..33: lines 0 and 1, both miss
    assert stat(m, "L1D", "accesses") == 2
    assert m.load(28, 4) == 0                      # bytes 28..31: one line, a hit
    assert stat(m, "L1D", "accesses") == 3


def test_store_crossing_a_line_counts_two_accesses():
    m = CacheModel([l1d()], memory_latency=MEM)
    m.store(28, 8)                                 # bytes 28..35
    assert stat(m, "L1D", "accesses") == 2 and stat(m, "L1D", "misses") == 2
    assert m.memory_traffic == {"reads": 2, "writes": 0}
    m.maintain(0, c.OP_CLEAN)
    m.maintain(32, c.OP_CLEAN)
    assert stat(m, "L1D", "writebacks") == 2       # both lines were made dirty


# ----------------------------------------------------- non-temporal, write-combining

def wc_model(buffers=2):
    return two_levels(wc_buffers=buffers, wc_line=64)


def wc(model):
    return (counter(model, c.H_NT_STORES), counter(model, c.H_WC_FLUSHES),
            counter(model, c.H_WC_PARTIAL))


def test_full_line_of_movnt_is_one_burst():
    m = wc_model()
    for k in range(8):
        m.nontemporal_store(0x200 + 8 * k, 8)
    assert wc(m) == (8, 1, 0)
    assert m.memory_traffic == {"reads": 0, "writes": 1}
    assert stat(m, "L1D", "accesses") == 0 and stat(m, "L2", "accesses") == 0
    m.sfence()                                      # nothing left to drain
    assert wc(m) == (8, 1, 0)


def test_partial_line_drained_by_sfence():
    m = wc_model()
    for k in range(3):
        m.nontemporal_store(0x200 + 8 * k, 8)
    assert wc(m) == (3, 0, 0)
    assert m.memory_traffic["writes"] == 0
    m.sfence()
    assert wc(m) == (3, 1, 1)
    assert m.memory_traffic["writes"] == 1


def test_oldest_wc_buffer_goes_when_none_is_free():
    m = wc_model(buffers=2)
    for a in (0x200, 0x240, 0x280):               # three lines, two buffers
        m.nontemporal_store(a, 8)
    assert wc(m) == (3, 1, 1)                       # 0x200's buffer went out, partial
    m.sfence()
    assert wc(m) == (3, 3, 3)


def test_movnt_to_a_dirty_cached_line_writes_it_back_and_invalidates():
    m = wc_model()
    m.store(0x200)                                  # L1 dirty, L2 clean copy
    m.nontemporal_store(0x200, 8)
    s = m.stats()
    assert s["L1D"]["writebacks"] == 1 and s["L1D"]["invalidations"] == 1
    # the write-back made the L2 copy dirty; the L2 flush then wrote it to memory
    assert s["L2"]["writebacks"] == 1 and s["L2"]["invalidations"] == 1
    assert m.memory_traffic == {"reads": 1, "writes": 1}
    assert resident(m, "L1D") == [] and resident(m, "L2") == []
    m.sfence()
    assert m.memory_traffic["writes"] == 2


def test_movnt_without_wc_buffers_writes_memory_each_time():
    m = wc_model(buffers=0)
    for k in range(4):
        m.nontemporal_store(8 * k, 8)
    assert m.memory_traffic["writes"] == 4
    assert counter(m, c.H_WC_FLUSHES) == 0


# ------------------------------------------------------------ impossible geometries

@pytest.mark.parametrize("level, reason", [
    (CacheLevel("L1D", 1536, 1, 48), "line size 48 is not a power of two"),
    (CacheLevel("L1D", 1000, 2, 32), "size 1000 is not a multiple of ways x line"),
    (CacheLevel("L1D", 192, 2, 32), "3 sets is not a power of two"),
    (CacheLevel("L1D", 96, 3, 32, replacement="plru"),
     "tree pseudo-LRU needs a power-of-two number of ways, not 3"),
    (CacheLevel("L1D", 128, 2, 32, replacement="mru"), "replacement 'mru' is not one of"),
    (CacheLevel("L1D", -128, 2, 32), "size must be a positive whole number, not -128"),
    (CacheLevel("L1D", 0, 2, 32), "size must be a positive whole number, not 0"),
    (CacheLevel("L1D", 128, 0, 32), "ways must be a positive whole number"),
    (CacheLevel("L1D", 128, 2, 32, write_policy="around"), "write policy 'around'"),
    (CacheLevel("L4", 128, 2, 32), "name must be one of"),
    (CacheLevel("L1D", 128, 2, 32, hit_latency=-1), "hit latency cannot be negative"),
    (CacheLevel("L1D", 4096, 1024, 4), "at most 1023 ways"),
])
def test_impossible_geometry_is_refused_with_reason(level, reason):
    with pytest.raises(ValueError, match="cache L[14][DI]?: ") as e:
        level.check()
    assert reason in str(e.value)
    with pytest.raises(ValueError):
        CacheModel([level])


def test_possible_geometries_pass_and_sets_are_computed():
    assert CacheLevel("L1D", 32768, 8, 32).check().sets == 128
    assert CacheLevel("L2", 1572864, 24, 128).check().sets == 512     # POWER4 folded L2
    assert CacheLevel("L1I", 65536, 1, 128).check().sets == 512


def test_repeated_level_name_is_refused():
    with pytest.raises(ValueError, match="repeat a name"):
        Layout([l1d(), l1d()])


def test_levels_are_wired_core_outwards():
    lay = Layout([l1i(), l1d(), l2(), CacheLevel("L3", 4096, 4, 32)])
    nxt = [int(lay.state[c.HEADER + c.LEVEL_RECORD * i + c.L_NEXT]) for i in range(4)]
    assert nxt == [2, 2, 3, c.MEMORY]                # L1I, L1D -> L2 -> L3 -> memory


# ------------------------------------------------------------------------ latencies

def test_returned_stalls_by_serving_level():
    m = two_levels()
    assert m.load(0) == 98            # memory: 100 - 2
    assert m.load(0) == 0             # L1 hit
    m.maintain(0, c.OP_FLUSH, c.SCOPE_L1)
    assert m.load(0) == 8             # L2 hit: 10 - 2
    assert m.load(4) == 0


def test_three_levels_l3_hit_stall():
    m = CacheModel([l1d(), l2(), CacheLevel("L3", 4096, 4, 32, hit_latency=30)],
                   memory_latency=MEM)
    m.load(0)
    m.maintain(0, c.OP_FLUSH, c.SCOPE_L1)           # out of L1 (clean: nothing written)
    # Evict line 0 from L2 only: lines 8, 16, 24, 32 all map to L2 set 0 (8 sets, 4 ways,
    # LRU), so the fourth of them evicts line 0; in L3 (32 sets) only line 32 shares
    # line 0's set, and it has 4 ways: line 0 stays.
    for k in (8, 16, 24, 32):
        m.load(32 * k)
    assert 0 not in resident(m, "L2") and 0 in resident(m, "L3")
    assert m.load(0) == 28            # L3 hit: 30 - 2


def test_docstring_example():
    m = CacheModel([CacheLevel("L1D", 128, 2, 32)])
    m.load(0)
    m.load(0)
    assert m.stats()["L1D"]["hits"] == 1


def test_dcbz_in_a_write_through_l1d_leaves_no_dirty_line():
    # A write-through L1 D never holds data that is not also below it: dcbz's zeros must go
    # to L2 (POWER4 performs dcbz in the L2), so a later clean has nothing to write from L1.
    m = two_levels({"write_policy": "through", "write_allocate": False})
    m.maintain(0x40, c.OP_ZERO, c.SCOPE_L1)
    m.maintain(0x40, c.OP_CLEAN)
    assert stat(m, "L1D", "writebacks") == 0
    # and the zeros are at the point of unification: icbi alone makes the fetch coherent
    m = with_icache({"write_policy": "through", "write_allocate": False})
    m.maintain(X, c.OP_ZERO, c.SCOPE_L1)
    m.maintain(X, c.OP_ICACHE_INVALIDATE)
    m.fetch(X)
    assert m.stale_fetches == 0


def test_dcbz_in_a_write_through_l1d_reads_no_memory():
    # dcbz establishes a zeroed line: no read, at whatever level holds it (here L2)
    m = two_levels({"write_policy": "through", "write_allocate": False})
    m.maintain(0x40, c.OP_ZERO, c.SCOPE_L1)
    assert m.memory_traffic == {"reads": 0, "writes": 0}
    assert resident(m, "L2") == [0x40]
    # the zeroed line is dirty in L2: a clean writes it to memory
    m.maintain(0x40, c.OP_CLEAN)
    assert m.memory_traffic == {"reads": 0, "writes": 1}


def test_each_levels_arrays_have_their_own_words():
    # tags, dirty, stamps and stale flags per slot, PLRU bits and the MRU word per set: no
    # two arrays may share a word (the PLRU and MRU words once sat inside the stale flags)
    from emu.hw.profile import load as load_profile
    for name in ("ppc750", "cortex-a9", "power4"):
        profile = load_profile(name)
        layout = c.Layout(profile.caches, cores=2)
        st = layout.state
        spans = []
        for i, lv in enumerate(layout.levels):
            r = c.HEADER + c.LEVEL_RECORD * i
            n = lv.sets * lv.ways
            spans += [(st[r + c.L_TAGS], n), (st[r + c.L_DIRTY], n), (st[r + c.L_STAMP], n),
                      (st[r + c.L_STALE], n), (st[r + c.L_PLRU], lv.sets),
                      (st[r + c.L_MRU], lv.sets)]
        spans.sort()
        for (a, n), (b, _) in zip(spans, spans[1:]):
            assert a + n <= b, f"{name}: words {a}-{a + n} overlap the array at {b}"
