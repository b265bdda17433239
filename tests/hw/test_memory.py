"""The memory system in time (emu.hw.memory, emu/hw/model/memsys.c), by hand on a toy profile:
memory latency 100, a bus of 8-byte beats at 2 cycles (a 64-byte line holds it 16 cycles),
one 1 KB L1 D of 64-byte lines, every instruction 1 cycle. A block's base cycles are charged
at its start, so every access of a one-block routine happens at that count."""
import pytest

from emu.hw import cache as c
from emu.hw import memory
from emu.run.machine import Machine
from emu.hw.mmu import HashedPageTable, pte_word1

BASE = """
name = "toy"
title = "toy"
isa = "{isa}"
unicorn_cpu = "{cpu}"
clock_mhz = 100
source = "tests/hw/test_memory.py"

[[caches]]
name = "L1D"
size = 1024
ways = 2
line = 64
write_policy = "back"
write_allocate = true
hit_latency = 1
source = "toy"

[memory]
latency = 100
source = "toy"

[costs]
default = 1
load = 1
store = 1
branch = 1
multiply = 1
divide = 1
source = "toy"

[bus]
bytes_per_beat = 8
cycles_per_beat = 2
partial_write_beats = 8
source = "toy"
"""
TLB = """
[tlb]
itlb_entries = 16
itlb_ways = 2
dtlb_entries = 16
dtlb_ways = 2
reload = "hardware-hash"
page_size = 4096
source = "toy"
"""


def toy(tmp_path, extra="", isa="ppc32", cpu="UC_CPU_PPC32_750_V3_1"):
    path = tmp_path / "toy.toml"
    path.write_text(BASE.format(isa=isa, cpu=cpu) + extra)
    return str(path)


PREFETCH = """
two_prefetches:         # r3, r4: two lines; prefetch both, then load both (one block)
    dcbt  0, r3
    dcbt  0, r4
    lwz   r5, 0(r3)
    lwz   r6, 0(r4)
    blr
"""


def lines(m, n=2):
    base = m.alloc(64 * 64)
    return [base + 64 * k for k in range(n)]            # different sets of the L1 D


def test_prefetches_queue_on_the_bus_and_a_load_waits_for_the_rest(tmp_path):
    """Both dcbt at cycle 5 (the block's 5 instructions): the first line's transfer starts
    at 5 and arrives at 105; the second waits for the bus until 21 and arrives at 121. The
    first load waits 105 - 5 = 100, the second 121 - 105 = 16: 121 cycles."""
    m = Machine(toy(tmp_path, '\n[fill_buffers]\nentries = 2\nsource = "toy"\n'))
    m.load(PREFETCH)
    run = m.call("two_prefetches", *lines(m))
    assert run.cycles == 121
    e = run.events
    assert (e["prefetches"], e["prefetch_late"], e["prefetch_late_cycles"]) == (2, 2, 116)
    assert (e["bus_busy_cycles"], e["bus_wait_cycles"]) == (32, 16)
    assert run.memory["reads"] == 2


def test_without_fill_buffers_a_prefetch_is_a_load(tmp_path):
    """The simpler model: each dcbt waits for its line (100 - the L1's 1 cycle), the loads
    hit: 5 + 99 + 99 = 203."""
    m = Machine(toy(tmp_path))
    m.load(PREFETCH)
    assert m.call("two_prefetches", *lines(m)).cycles == 203


@pytest.mark.parametrize("when_full, cycles, dropped", [("drop", 204, 1), ("wait", 205, 0)])
def test_a_prefetch_that_finds_every_fill_buffer_busy(tmp_path, when_full, cycles, dropped):
    """One fill buffer. Dropped (Pentium 4): the second load misses at 105, its transfer
    starts then (the bus has been free since 21) and takes 100 - 1: 204. Waiting (the
    Cortex-A9's PLD): the second dcbt waits until the first line arrives at 105, its line
    arrives at 205, the first load no longer waits, the second waits 100: 205."""
    m = Machine(toy(tmp_path, f'\n[fill_buffers]\nentries = 1\nwhen_full = "{when_full}"\n'
                              'source = "toy"\n'))
    m.load(PREFETCH)
    run = m.call("two_prefetches", *lines(m))
    assert run.cycles == cycles
    assert run.events["prefetches_dropped"] == dropped


STORES = """
three_stores:           # r3, r4, r6: three lines; a store to each (one block)
    stw   r5, 0(r3)
    stw   r5, 0(r4)
    stw   r5, 0(r6)
    blr
three_stores_sync:
    stw   r5, 0(r3)
    stw   r5, 0(r4)
    stw   r5, 0(r6)
    sync
    blr
"""


def test_store_misses_wait_in_the_store_buffer_not_in_the_core(tmp_path):
    """A store buffer of 2. At cycle 4 each store misses and asks for its line: they arrive
    at 104, 120 and 136 (the bus), and the stores complete 1 cycle sooner (the L1 hit
    latency the pipeline hides). The third finds the buffer full and waits for the first:
    4 + 99 = 103 cycles, the other stores still in flight when the routine returns. With a
    sync before the return (base 5) it waits for the last store: 5 + 131 = 136."""
    extra = ('\n[store_buffer]\nentries = 2\nsource = "toy"\n'
             '\n[fill_buffers]\nentries = 4\nsource = "toy"\n')
    m = Machine(toy(tmp_path, extra))
    m.load(STORES)
    a, b, c = lines(m, 3)
    run = m.call("three_stores", a, b, 0, c)
    assert run.cycles == 103
    assert (run.events["store_buffer_stalls"], run.events["store_buffer_stall_cycles"]) == \
        (1, 99)
    assert run.memory["reads"] == 3 and run.events["bus_busy_cycles"] == 48
    m2 = Machine(toy(tmp_path, extra))
    m2.load(STORES)
    a, b, c = lines(m2, 3)
    assert m2.call("three_stores_sync", a, b, 0, c).cycles == 136


def test_without_a_store_buffer_a_store_miss_waits_for_its_line(tmp_path):
    """The simpler model: a write-allocate store miss stalls like a load: 4 + 3 x 99, the
    bus free each time (each fill is waited for before the next store)."""
    m = Machine(toy(tmp_path))
    m.load(STORES)
    a, b, c = lines(m, 3)
    assert m.call("three_stores", a, b, 0, c).cycles == 4 + 3 * 99


STREAM = """
four_lines:             # r3: four consecutive lines, one load each (one block)
    lwz   r5, 0(r3)
    lwz   r5, 64(r3)
    lwz   r5, 128(r3)
    lwz   r5, 192(r3)
    blr
"""


L2 = """
[[caches]]
name = "L2"
size = 4096
ways = 4
line = 64
write_policy = "back"
write_allocate = true
hit_latency = 5
source = "toy"
"""


def test_the_stream_prefetcher_keeps_two_lines_ahead(tmp_path):
    """An L2 of 5 cycles, the prefetcher at it. Miss at 5 (line a, arrives 105: the core
    resumes at 104), miss at 104 (a+1: the bus free again, arrives 204): two misses 64
    bytes apart start a stream, which asks for a+2 and a+3 at 104 (the bus: 120-136 and
    136-152; they arrive at 220 and 236). The load of a+2 at 203 waits 17 for it, then 5 - 1
    for the L2 (224), and moves the stream on (a+4); a+3 at 224 waits 12 + 4: 240 cycles."""
    extra = (L2 + '\n[fill_buffers]\nentries = 4\nsource = "toy"\n'
             '\n[prefetcher]\nstreams = 2\nahead = 2\ntrigger_distance = 128\npage = 4096\n'
             'level = "L2"\nsource = "toy"\n')
    m = Machine(toy(tmp_path, extra))
    m.load(STREAM)
    run = m.call("four_lines", m.alloc(4096))
    assert run.cycles == 240
    e = run.events
    assert e["hardware_prefetches"] == 4 and run.memory["reads"] == 6
    assert (e["prefetch_late"], e["prefetch_late_cycles"]) == (2, 29)


UNCACHED = """
load_one:               # r3: one load
    lwz   r5, 0(r3)
    blr
store_one:
    stw   r5, 0(r3)
    blr
"""


@pytest.mark.parametrize("wimg, load_cycles, store_cycles, l1d_accesses",
                         [(0, 2, 2, 1), (0x4, 102, 4, 0)])
def test_a_cache_inhibited_page_bypasses_the_caches(tmp_path, wimg, load_cycles,
                                                    store_cycles, l1d_accesses):
    """With the MMU on, a page whose PTE has WIMG I set: a load is a bus transaction of its
    own that waits for memory (100 cycles, nothing cached: the next load waits again); a
    store is posted, the core waiting for its one beat on the bus (2 cycles). Measured on a
    second call (the TLB warm): base 2 cycles; cached, the load and the store hit the
    L1 D."""
    m = Machine(toy(tmp_path, TLB), mmu=True)
    m.load(UNCACHED)
    page = m.alloc(4096)
    table = HashedPageTable(m)
    table.map_machine()
    pte, _ = table.lookup(page)
    m.write(pte + 4, pte_word1(page >> 12, wimg=wimg).to_bytes(4, "big"))
    for entry, cycles in (("load_one", load_cycles), ("store_one", store_cycles)):
        m.call(entry, page)
        run = m.call(entry, page)
        assert run.cycles == cycles, entry
        assert run.caches["L1D"]["accesses"] == l1d_accesses, entry
        key = "uncached_loads" if entry == "load_one" else "uncached_stores"
        assert run.events[key] == (1 if wimg else 0)


WC = """
movnti4:
    movl  4(%esp), %edi
    movl  $1, %eax
    movnti %eax, (%edi)
    {fence}
    ret
"""


@pytest.mark.parametrize("fence, extra_cycles", [("nop", 0), ("sfence", 16)])
def test_sfence_waits_for_a_partial_write_combining_buffer(tmp_path, fence, extra_cycles):
    """One write-combining buffer holds 4 bytes when the sfence empties it: one 8-byte piece
    of a partial write, which holds the bus for 8 beats (1/8 of its rate): 16 cycles that
    the sfence waits for (a nop in its place costs the same 1 cycle and waits for nothing)."""
    extra = '\n[write_combining]\nbuffers = 1\nline = 64\nsource = "toy"\n'
    m = Machine(toy(tmp_path, extra, isa="x86", cpu="default"))
    m.load(WC.format(fence=fence))
    buf = m.alloc(4096)
    m.call("movnti4", buf)
    run = m.call("movnti4", buf)
    baseline = Machine(toy(tmp_path, extra, isa="x86", cpu="default"))
    baseline.load(WC.format(fence="nop"))
    b = baseline.alloc(4096)
    baseline.call("movnti4", b)
    assert run.cycles - baseline.call("movnti4", b).cycles == extra_cycles
    assert run.events["wc_partial_flushes"] == (1 if fence == "sfence" else 0)


# The 60x bus's address bus ([bus] address_tenure, address_only, write_buffers: the 750):
# an address tenure of 3 bus clocks is 6 cycles on the toy's bus; a 64-byte write-back holds
# the data bus 8 beats, 16 cycles.
ABE = """address_tenure = 3
address_only = ["dcbst", "sync"]
write_buffers = 2
"""
THREE_DCBST = """
three_dcbst:            # r3, r4, r5: three lines; one block of 5 instructions
    dcbst 0, r3
    dcbst 0, r4
    dcbst 0, r5
    sync
    blr
dirty_three:
    stw   r3, 0(r3)
    stw   r4, 0(r4)
    stw   r5, 0(r5)
    blr
"""


def test_a_broadcast_dcbst_of_a_clean_line_holds_the_address_bus(tmp_path):
    """The block's 5 base cycles are charged at its start; each instruction asks for the bus
    at its issue (the clock less its own and the later instructions' base cycles). The first
    dcbst issues at 0 and its tenure takes the address bus at once (0-6); the second, at 1,
    waits for it until 6 (6-12: the clock 5 -> 10), the third, at 10 - 3 = 7, until 12
    (12-18: clock 15). The sync's own cycle ends at 15 - 2 + 1 = 14; it waits for its own
    tenure, 18-24: 10 cycles, clock 25. Four address-only transactions. Without ABE's list
    nothing is broadcast: the 5 base cycles."""
    m = Machine(toy(tmp_path, ABE))
    m.load(THREE_DCBST)
    run = m.call("three_dcbst", *lines(m, 3))
    assert run.cycles == 25
    assert run.events["address_only"] == 4
    plain = Machine(toy(tmp_path))
    plain.load(THREE_DCBST)
    assert plain.call("three_dcbst", *lines(plain, 3)).cycles == 5


def test_dirty_write_backs_are_posted_and_the_sync_waits_for_them(tmp_path):
    """Each dirty dcbst's write-back leaves at its issue (0, 1, 2) and books the data bus:
    0-16, 16-32, 32-48, and its address tenure: 0-6, 6-12. The first two take the two
    write buffers (free at 16 and 32); the third waits for the first, from 2 to 16 (the
    clock 5 -> 19), and its tenure runs 16-22. The sync's own cycle ends at 19 - 2 + 1 =
    18: it waits for the last write-back (48), then its own tenure (48-54), 36 cycles, and
    the blr's cycle is after it: 55; the same flush waiting for each write-back (no write
    buffers) takes 5 + 3 x 100 = 305."""
    m = Machine(toy(tmp_path, ABE))
    m.load(THREE_DCBST)
    three = lines(m, 3)
    m.call("dirty_three", *three)
    run = m.call("three_dcbst", *three)
    assert run.cycles == 55
    assert run.caches["L1D"]["writebacks"] == 3
    assert (run.events["address_only"], run.events["bus_busy_cycles"]) == (1, 48)
    waiting = Machine(toy(tmp_path))
    waiting.load(THREE_DCBST)
    three = lines(waiting, 3)
    waiting.call("dirty_three", *three)
    assert waiting.call("three_dcbst", *three).cycles == 305


def test_a_sectored_level_moves_one_sector_on_the_bus(tmp_path):
    """[bus] sector = 32: a 64-byte line's write-back holds the bus 4 beats (8 cycles), not
    8: the three write-backs (from their issues, 0, 1, 2) end at 8, 16, 24; the third dcbst
    waits for the first buffer from 2 to 8 (the clock 5 -> 11), its tenure 12-18 (after
    the second's, 6-12); the sync's cycle ends at 10, it waits for the last write-back
    until 24 and its tenure ends at 30: clock 11 + 20 = 31."""
    m = Machine(toy(tmp_path, ABE + "sector = 32\n"))
    m.load(THREE_DCBST)
    three = lines(m, 3)
    m.call("dirty_three", *three)
    run = m.call("three_dcbst", *three)
    assert run.cycles == 31
    assert run.events["bus_busy_cycles"] == 24


@pytest.mark.parametrize("tables, why", [
    ({"bus": {"bytes_per_beat": 6, "cycles_per_beat": 1}}, "power of two"),
    ({"bus": {"bytes_per_beat": 8}}, "missing cycles_per_beat"),
    ({"store_buffer": {"entries": 0}}, "positive whole number"),
    ({"fill_buffers": {"entries": 2, "when_full": "later"}}, "'drop' or 'wait'"),
    ({"prefetcher": {"streams": 2, "ahead": 2, "trigger_distance": 128, "page": 4096,
                     "level": "L1D"}}, "not a level below the L1 D"),
    ({"prefetcher": {"streams": 2, "ahead": 2, "trigger_distance": 128, "page": 4096,
                     "level": "L2"}}, "needs \\[fill_buffers\\]"),
    ({"store_buffer": {"entries": 2, "depth": 3}}, "unknown key"),
    ({"bus": {"bytes_per_beat": 8, "cycles_per_beat": 2, "address_only": ["sync"]}},
     "needs address_tenure"),
    ({"bus": {"bytes_per_beat": 8, "cycles_per_beat": 2, "address_only": "sync"}},
     "list of mnemonics"),
    ({"bus": {"bytes_per_beat": 8, "cycles_per_beat": 2, "write_buffers": 17}}, "at most 16"),
    ({"maintenance": {"write_backs": 17, "barriers": ["sync"]}}, "at most 16"),
    ({"maintenance": {"write_backs": 2}}, "missing barriers"),
    ({"maintenance": {"write_backs": 2, "barriers": ["sync"]},
      "bus": {"bytes_per_beat": 8, "cycles_per_beat": 2, "write_buffers": 2}}, "give one"),
])
def test_impossible_memory_systems_are_refused_with_the_reason(tables, why):
    from emu.hw.cache import CacheLevel
    with pytest.raises(ValueError, match=why):
        memory.check(tables, [CacheLevel("L1D", 1024, 2, 64), CacheLevel("L2", 4096, 4, 64)])


# x86's locked read-modify-writes drain the store buffer (emu.hw.cost.drains_stores); the
# memory hook applies them at the instruction's read (emu.hw.cost.AT_ACCESS), not a code hook
LOCKED_STORES = """
locked_stores:          # 4(%esp): lines to store to, one an iteration; 8(%esp): a lock word;
    movl  4(%esp), %edi # 12(%esp): the iterations
    movl  8(%esp), %esi
    movl  12(%esp), %ecx
1:  {lock} incl (%esi)  # the loop's branch target: from the second iteration, a block's first
    movl  %ecx, (%edi)
    addl  $64, %edi
    decl  %ecx
    jnz   1b
    ret
"""


@pytest.mark.parametrize("iterations", [1, 2, 4])
def test_a_locked_instruction_drains_the_store_buffer_at_its_own_instruction(tmp_path,
                                                                            iterations):
    """Every instruction costs 1, a store buffer of 8 (the core never waits for a full one).
    Each iteration's store misses a line of its own and completes 99 cycles after it is
    asked (its line arrives 100 later, the bus free by then: the stores are 99 cycles apart
    in the locked loop). The first block runs the three loads and the first iteration (8
    cycles); each later iteration is a block of its own, 5 cycles charged at its start, and
    its `lock incl`, the block's first instruction, waits for the store before it: 99 - 5
    = 94 cycles. The first iteration's lock has only loads before it: it waits for nothing.
    The same loop with a plain `incl` (the same cost and accesses) waits for no store, so
    the difference is 94 x (iterations - 1): 0, 94, 282."""
    extra = ('\n[store_buffer]\nentries = 8\nsource = "toy"\n'
             '\n[fill_buffers]\nentries = 4\nsource = "toy"\n')
    cycles = {}
    for lock in ("lock", ""):
        m = Machine(toy(tmp_path, extra, isa="x86", cpu="default"))
        m.load(LOCKED_STORES.format(lock=lock))
        assert m.state[c.H_AT_ACCESS_N] == (1 if lock else 0)
        lines, word = m.alloc(4096), m.alloc(64)
        cycles[lock] = m.call("locked_stores", lines, word, iterations).cycles
    assert cycles["lock"] - cycles[""] == 94 * (iterations - 1)


STORE_AND_LOCK = """
store_and_lock:         # 4(%esp): a line to store to; 8(%esp): a lock word (one block)
    movl  4(%esp), %edi
    movl  8(%esp), %esi
    {first}
    {second}
    ret
warm:                   # 4(%esp): a word whose line (and the stack's) it loads
    movl  4(%esp), %esi
    movl  (%esi), %eax
    ret
"""


@pytest.mark.parametrize("order, wait", [(("store", "lock"), 99), (("lock", "store"), 0)])
def test_a_locked_instruction_drains_only_the_stores_before_it_in_its_block(tmp_path, order,
                                                                          wait):
    """One block: a store that misses (it completes 99 cycles after it is asked) and a
    `lock incl`. Every access of the block comes at the same count of the clock (the
    block's cycles are charged at its start), so a lock after the store waits its whole 99
    cycles, and one before it waits for nothing: the drain happens at its own instruction,
    between the accesses before it and those after. Against the same block with a plain
    `incl`, the lock word's line and the stack's loaded first (else the plain `incl`'s miss
    would wait for the store's line on the bus, 16 cycles, and the lock's would not)."""
    extra = ('\n[store_buffer]\nentries = 8\nsource = "toy"\n'
             '\n[fill_buffers]\nentries = 4\nsource = "toy"\n')
    body = {"store": "movl  %ecx, (%edi)", "lock": "{lock} incl (%esi)"}
    cycles = {}
    for lock in ("lock", ""):
        m = Machine(toy(tmp_path, extra, isa="x86", cpu="default"))
        source = STORE_AND_LOCK.format(first=body[order[0]], second=body[order[1]])
        m.load(source.replace("{lock}", lock))
        line, word = m.alloc(4096), m.alloc(64)
        m.call("warm", word)
        cycles[lock] = m.call("store_and_lock", line, word).cycles
    assert cycles["lock"] - cycles[""] == wait
