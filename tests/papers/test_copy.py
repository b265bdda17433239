"""Memory copying (Mackerras 2003 section 3): alignment costs, POWER4's L2 store queues, and
the copy routines, every count computed by hand in the comments.

Store-queue geometry used by the model tests (``sq_model``): L1 D 128 B, 2-way, 32 B lines,
store-through, no write-allocate; L2 1 KB, 4-way, 32 B lines; two slices of two entries,
each held 10 cycles. Line n = addr >> 5 goes to slice n % 2.
"""

import pytest

from emu.hw import cache as c
from emu.hw.cache import CacheLevel, CacheModel


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


def test_store_queue_takes_the_entry_freeing_first_even_out_of_time_order():
    # One slice of four entries, each held 10 cycles (line 0, slice 0 of one). In time
    # order the entries free in the order they were taken (a ring); a store earlier than the
    # one before (another core's, or Python's at=) has the slice searched. At 0 four stores
    # fill it (busy until 10); at 20 two take entries 0 and 1 (until 30); at 3 and 4 the
    # entries freeing first are 2 and 3 (at 10): waits 7 and 6, busy until 20; at 5 the
    # first to free are those (20), not the ring's next, entry 0 (30): a wait of 15, not 25.
    m = sq_model(slices=1, entries=4)
    times = (0, 0, 0, 0, 20, 20, 3, 4, 5)
    assert [m.store(0, 8, at=t) for t in times] == [0, 0, 0, 0, 0, 0, 7, 6, 15]
    # the clock restarts at a cleared model: in order again, the ring from a drained queue
    m.layout.clear_stats()
    assert [m.store(0, 8, at=t) for t in (0, 0, 0, 0, 1)] == [0, 0, 0, 0, 9]


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


# ------------------------------------------------------------------ the routines copy right

import random                                                     # noqa: E402

import emu                                                        # noqa: E402
from emu.kernel import copybench                                         # noqa: E402
from emu.hw.faults import GuestFault                       # noqa: E402
from emu.run.machine import Machine

SIZES = list(range(0, 65)) + [127, 128, 129, 4096]
ALIGNS = range(8)
MEMCPYS = [("power4", "ppc64/memcpy.S", "memcpy"),
           ("power4", "ppc64/memcpy_unaligned.S", "memcpy_unaligned"),
           ("power4", "ppc32/memcpy.S", "memcpy32"),
           ("ppc750", "ppc32/memcpy.S", "memcpy32")]
SENTINEL = 0xEE
WINDOW = 64             # bytes checked on each side of the destination


class Guarded:
    """A machine with the routine loaded and this layout (G = an unmapped guard page):
    G | A1 A2 | G | B1 B2 | G. The source pages A hold a random pattern; any access to a
    guard page is a GuestFault."""

    def __init__(self, cpu, path):
        self.m = Machine(cpu)
        self.m.load(emu.routine(path))
        base = self.m.alloc(7 * 4096)
        self.a, self.b = base + 4096, base + 4 * 4096
        for page in (0, 3, 6):
            self.m.uc.mem_unmap(base + page * 4096, 4096)
        self.pattern = bytes(random.Random(3).randrange(256) for _ in range(2 * 4096))
        self.m.write(self.a, self.pattern)
        self.m.write(self.b, bytes([SENTINEL]) * 2 * 4096)

    def copy(self, entry, src, dst, n):
        """Run one copy and check it: the n bytes arrive, and nothing within WINDOW bytes
        around the destination (inside B) changes. Returns the Run."""
        lo, hi = max(dst - WINDOW, self.b), min(dst + n + WINDOW, self.b + 2 * 4096)
        run = self.m.call(entry, dst, src, n)
        got = self.m.read(lo, hi - lo)
        want = bytearray([SENTINEL]) * (hi - lo)
        want[dst - lo:dst - lo + n] = self.pattern[src - self.a:src - self.a + n]
        assert got == bytes(want), (entry, hex(src), hex(dst), n)
        assert run.return_value == dst, "memcpy returns the destination"
        self.m.write(lo, bytes([SENTINEL]) * (hi - lo))
        return run


@pytest.fixture(scope="module", params=MEMCPYS, ids=lambda p: f"{p[2]}-{p[0]}")
def guarded(request):
    cpu, path, entry = request.param
    return Guarded(cpu, path), entry


def test_copies_crossing_a_page_edge(guarded):
    g, entry = guarded
    a2, b2 = g.a + 4096, g.b + 4096
    for n in SIZES:                 # starts 24 + 0..7 bytes before the edge between pages
        for sa in ALIGNS:
            for da in ALIGNS:
                g.copy(entry, a2 - 24 + sa, b2 - 24 + da, n)


def test_copies_ending_exactly_at_a_guard_page(guarded):
    g, entry = guarded
    end_a, end_b = g.a + 2 * 4096, g.b + 2 * 4096
    for n in SIZES:                 # k = 0: the last byte is the last before the guard
        for k in ALIGNS:
            for j in ALIGNS:
                g.copy(entry, end_a - n - k, end_b - n - j, n)


def test_copies_starting_right_after_a_guard_page(guarded):
    g, entry = guarded
    for n in SIZES:
        for sa in ALIGNS:
            for da in ALIGNS:
                g.copy(entry, g.a + sa, g.b + da, n)


def test_a_guard_page_faults():
    g = Guarded("power4", "ppc64/memcpy.S")
    with pytest.raises(GuestFault, match="unmapped memory"):
        g.m.call("memcpy", g.b, g.a + 2 * 4096 - 13, 14)     # one byte too many


@pytest.mark.parametrize("name", ["copy_page_simple", "copy_page_power4"])
def test_copy_page_copies_the_page_and_nothing_else(name):
    m = Machine("power4")
    m.load(emu.routine(f"ppc64/{name}.S"))
    base = m.alloc(5 * 4096)
    src, dst = base + 4096, base + 3 * 4096
    for page in (0, 2, 4):                                   # guards around both pages
        m.uc.mem_unmap(base + page * 4096, 4096)
    pattern = bytes(random.Random(4).randrange(256) for _ in range(4096))
    m.write(src, pattern)
    m.call(name, dst, src)
    assert m.read(dst, 4096) == pattern


# ------------------------------------------------------------------ exact counts and cycles

def counts(cpu, path, entry, n, sa, da):
    g = Guarded(cpu, path)
    run = g.copy(entry, g.a + sa, g.b + da, n)
    return run.events["alignment_exceptions"], run.events["split_accesses"]


def test_alignment_exceptions_counted_exactly():
    # 64 bytes, destination aligned, source 1 byte off: 8 ld, none 4-byte aligned
    assert counts("power4", "ppc64/memcpy_unaligned.S", "memcpy_unaligned", 64, 1, 0) == (8, 0)
    # source 4 bytes off: every ld is word aligned, done in hardware
    assert counts("power4", "ppc64/memcpy_unaligned.S", "memcpy_unaligned", 64, 4, 0) == (0, 0)
    # destination 3 off: 5 head bytes (stb, stw) take the source to 5 mod 8; 59 bytes
    # left = 7 misaligned ld + a 3-byte tail (lhz, lbz)
    assert counts("power4", "ppc64/memcpy_unaligned.S", "memcpy_unaligned", 64, 0, 3) == (7, 0)
    # the shifting memcpy never loads a doubleword at a misaligned address
    assert counts("power4", "ppc64/memcpy.S", "memcpy", 64, 1, 0) == (0, 0)


def test_split_accesses_counted_exactly_on_the_750():
    # 64 bytes, destination aligned, source 1 off: 8 iterations of lwz at 1 and 5 mod 8;
    # the one at 5 covers bytes 5..8 and crosses the doubleword: 8 split loads
    assert counts("ppc750", "ppc32/memcpy.S", "memcpy32", 64, 1, 0) == (0, 8)
    assert counts("ppc750", "ppc32/memcpy.S", "memcpy32", 64, 0, 0) == (0, 0)


def test_store_queue_stall_in_one_block():
    # five std to one 128 B line (one slice, 4 entries of 12 cycles) at cycles t..t+4 of
    # one block: the fifth waits for the first entry, free at t + 12: 12 - 4 = 8 cycles
    # (charging every store at its block's end would give 12)
    m = Machine("power4")
    m.load(".globl five\nfive:\n" + "".join(f"std 0, {8 * k}(3)\n" for k in range(5)) +
           "blr\n")
    run = m.call("five", m.alloc(4096))
    assert run.events["l2_store_queue_stores"] == 5
    assert run.events["l2_store_queue_stalls"] == 1
    assert run.events["l2_store_queue_stall_cycles"] == 8


def test_a_line_a_store_missed_is_a_hit_once_a_load_took_it_into_the_l1d():
    # POWER4's L1 D is store-through and takes no line in on a store: the hook remembers
    # the line a store missed (emu/hw/model/cache.c, known_absent) until the L1 D takes a line
    # in. Store (miss), load (miss: the line comes in), store to the same line: a hit
    m = Machine("power4")
    m.load(".globl sls\nsls:\nstd 4, 0(3)\nld 5, 0(3)\nstd 4, 8(3)\nblr\n")
    l1d = m.call("sls", m.alloc(4096), 7).caches["L1D"]
    assert (l1d["accesses"], l1d["hits"], l1d["misses"]) == (3, 1, 2)


def test_a_store_to_a_line_the_l1i_took_in_since_the_last_store_to_it_makes_it_stale():
    # A store through POWER4's L1 D flags the I-cache copies of its line; the hook skips a
    # second store's flagging while the L1 I took no line in (emu/hw/model/cache.c,
    # line_changed). Store over `target` (not in the L1 I), run it (the L1 I takes its line
    # in, fresh), store over it again: that store flags it, and the second run is stale
    m = Machine("power4")
    m.load(".globl sms\nsms:\n    mflr 0\n    lwz 4, 0(3)\n    stw 4, 0(3)\n    bl target\n"
           "    stw 4, 0(3)\n    bl target\n    mtlr 0\n    blr\n" + "    nop\n" * 64 +
           "target:\n    blr\n")
    target = m.symbols["target"]
    run = m.call("sms", target)
    assert (run.events["stale_ifetch"], run.events["first_stale_pc"]) == (1, target)


# The store queues time a store at its PC. A block whose listing holds one instruction that
# can store (emu.hw.cost.may_write) gets it from the block hook, not from Unicorn
# (emu/hw/model/hooks.c, single_store); code written over since it was loaded voids that.
# Below, four stores fill one slice's queue (4 entries of 12 cycles): a fifth one waits for
# the first entry, and its wait depends on its own issue cycle (one after the fourth's).
PATCH = """
.globl patch
patch:                  # r3: a line; r4: the word at patch_slot; r5: where to store it
    stw   4, 0(5)       # (the guest writes over its own code; 0(5) = 0(r5))
    std   0, 0(3)
    std   0, 8(3)
    std   0, 16(3)
    b     1f
1:  std   0, 24(3)      # this block's listing: one store...
patch_slot:
    nop                 # ...and a nop, where a fifth store may be written
    blr
"""
FIFTH = "std   0, 32(3)"


def _patch_run(loaded, written=None, by_guest=False):
    """One call of `patch` on POWER4: `loaded` at patch_slot in the listing, `written` put
    over it after loading (by the host, or by the guest's own stw)."""
    from emu.isa.assemble import assemble
    m = Machine("power4")
    m.load(PATCH.replace("    nop ", f"    {loaded} "))
    slot = m.address_of("patch_slot")
    word = int.from_bytes(assemble(written or loaded, "ppc64", slot).code[:4], "big")
    if written and not by_guest:
        m.write(slot, word.to_bytes(4, "big"))
    target = slot if by_guest else m.alloc(8)     # the guest's stw: over the slot, or aside
    return m.call("patch", m.alloc(4096), word, target)


def test_the_store_queues_time_a_store_written_over_loaded_code_at_its_own_pc():
    for by_guest in (False, True):
        want = _patch_run(FIFTH, by_guest=by_guest)       # the fifth store in the listing
        assert want.events["l2_store_queue_stalls"] == 1
        got = _patch_run("nop", FIFTH, by_guest)
        assert got.events == want.events and got.cycles == want.cycles, by_guest


def test_every_powerpc_instruction_that_can_write_memory_is_named():
    from emu.hw.cost import may_write
    for m in ("stb", "sth", "stw", "stwu", "std", "stdu", "stdx", "stmw", "stswi", "stwcx.",
              "stdcx.", "stfd", "stfs", "stvx", "dcbz", "dcbi", "dcbst", "dcbf", "icbi",
              "ecowx"):
        assert may_write("ppc64", m) and may_write("ppc32", m), m
    for m in ("lwz", "ld", "ldu", "lwarx", "lmw", "addi", "mr", "bdnz", "blr", "mtctr", "sync",
              "isync", "tlbie", "slbmte", "cmpwi", "rlwinm", "mfspr", "rfid"):
        assert not may_write("ppc64", m), m


def test_the_block_hooks_store_gives_the_pc_unicorn_gives():
    """Every routine below runs alike with the block hook's store PCs and with Unicorn's
    (the shortcut off, as after code is written over)."""
    cases = [("ppc64/memcpy.S", "memcpy", lambda m: (m.alloc(4096), m.alloc(4096) + 3, 3000)),
             ("ppc64/copy_page_power4.S", "copy_page_power4",
              lambda m: (m.alloc(4096), m.alloc(4096))),
             ("ppc64/clear_page.S", "clear_page", lambda m: (m.alloc(4096),)),
             ("ppc64/flush_dcache_icache.S", "flush_dcache_icache", lambda m: (m.alloc(4096),)),
             ("ppc64/atomic_add.S", "atomic64_adds", lambda m: (m.alloc(8), 50)),
             ("ppc32/spin_lock_add.S", "locked_adds",
              lambda m: (m.alloc(4), m.alloc(4), 50))]
    for path, entry, args in cases:
        runs = []
        for shortcut in (True, False):
            m = Machine("power4")
            m.load(emu.routine(path))
            m.state[m.state[c.H_SCRATCH] + c.S_CODE_WRITTEN] = int(not shortcut)
            runs.append(m.call(entry, *args(m)).to_dict())
        assert runs[0] == runs[1], path


def test_other_profiles_have_no_store_queues():
    m = Machine("ppc750")
    m.load(".globl one\none:\nstw 0, 0(3)\nblr\n")
    assert "l2_store_queue_stalls" not in m.call("one", m.alloc(4096)).events


@pytest.mark.parametrize("cache, simple, six_line", [
    # (cycles, store-queue stall cycles) of one page copy; deterministic, pinned
    ("warm", (1479, 192), (1193, 34)),
    ("cold", (7111, 192), (6825, 34)),
])
def test_six_line_copy_page_is_faster_on_power4(cache, simple, six_line):
    a = copybench.measure("copy_page_simple", 4096, cache=cache)
    b = copybench.measure("copy_page_power4", 4096, cache=cache)
    assert (a.cycles, a.store_queue_stall_cycles) == simple
    assert (b.cycles, b.store_queue_stall_cycles) == six_line
    assert b.cycles < a.cycles


def test_flushed_caches_favour_the_small_loop():
    # everything cold, code too: the six-line routine's 5 I-cache lines and its 12
    # register saves to a cold stack cost more than its shorter loop saves
    a = copybench.measure("copy_page_simple", 4096, cache="flushed")
    b = copybench.measure("copy_page_power4", 4096, cache="flushed")
    assert (a.cycles, b.cycles) == (7458, 7537)


# ------------------------------------------------------------------ emu.kernel.copybench

def test_measure_reports_cycles_per_byte_and_exceptions():
    r = copybench.measure("memcpy64_unaligned", 4096, src_align=1)
    assert r.alignment_exceptions == 512 and r.cycles_per_byte == r.cycles / 4096
    s = copybench.measure("memcpy64", 4096, src_align=1)
    assert s.alignment_exceptions == 0 and s.cycles < r.cycles


@pytest.mark.parametrize("call, message", [
    (lambda: copybench.measure("memmove", 8), "no copy routine 'memmove'"),
    (lambda: copybench.measure("memcpy64", 8, profile="ppc750"), "is ppc64 code"),
    (lambda: copybench.measure("memcpy64", -1), "size must be from 0"),
    (lambda: copybench.measure("memcpy64", 8, src_align=128), "src_align must be from 0"),
    (lambda: copybench.measure("memcpy64", 8, cache="hot"), "cache must be one of"),
    (lambda: copybench.measure("copy_page_power4", 100), "size must be 4096"),
    (lambda: copybench.workload("strcpy"), "kind must be one of"),
    (lambda: copybench.workload("memcpy", 0), "positive whole number"),
])
def test_bad_input_is_refused_clearly(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_workload_is_deterministic_and_follows_the_published_shares():
    w = copybench.workload("copy_tofrom_user", 2000)
    assert w.equals(copybench.workload("copy_tofrom_user", 2000))
    # quotas: 84% of 2000 = 1680 under 128 B, 95% = 1900 under 512 B, 4% = 80 whole pages,
    # 43% = 860 misaligned (none of them a page)
    assert ((w["size"] < 128).sum(), (w["size"] < 512).sum()) == (1680, 1900)
    misaligned = (w["src_align"] > 0) | (w["dst_align"] > 0)
    assert misaligned.sum() == 860
    pages = w[w["size"] == 4096]
    assert len(pages) == 80 and (pages[["src_align", "dst_align"]] == 0).all().all()
    m = copybench.workload("memcpy", 2000)
    assert (m["size"] < 128).sum() == 1960
    assert ((m["src_align"] > 0) | (m["dst_align"] > 0)).sum() == 260
    assert m["size"].min() >= 1 and m["size"].max() <= 4096
    # 400 calls (the chapter's draw): the shares to the call
    w = copybench.workload("copy_tofrom_user", 400)
    assert ((w["size"] < 128).sum(), (w["size"] < 512).sum(), (w["src_align"] > 0).sum() +
            ((w["src_align"] == 0) & (w["dst_align"] > 0)).sum()) == (336, 380, 172)


def test_a_kept_copy_bench_serves_only_the_estimates_it_was_built_with():
    """copybench keeps a bench per process: one built with power4's memory at 351 cycles
    must not serve a run with it at 420 (the scorecard's ranges move it in a pool worker),
    and serving records the estimates its building read, as building does."""
    from emu.hw import estimates
    plain = copybench.bench("memcpy32")
    with estimates.watch() as watch:
        assert copybench.bench("memcpy32") is plain
    assert "power4:memory.latency" in watch.read
    cold = {"size": 4096, "cache": "cold"}
    with estimates.moved({"power4:memory.latency": 420}):
        slow = copybench.bench("memcpy32")
        moved_cycles = copybench.measure("memcpy32", **cold).cycles
    assert slow is not plain
    assert moved_cycles > copybench.measure("memcpy32", **cold).cycles     # misses cost more
