"""The sampling profiler (emu.run.profiler) and kperfdiff, checked against hand-computed counts."""
import pytest

from emu import routine
from emu.hw import cache as c
from emu.run import kperfdiff
from emu.hw.faults import InstructionLimitExceeded
from emu.hw.layout import CODE_BASE
from emu.run.machine import Machine
from emu.run.profiler import (UNKNOWN, CodeSpans, count_instructions, counted_top,
                              cycles_by_symbol, instruction_counts, own_counts, profile_call,
                              read_samples)

# Two functions: busy loops n times (three instructions per iteration) and then branches
# to tail, which returns. No loads or stores, and on the ppc750 profile every instruction
# here costs 1 cycle, so once the I-cache is warm cycles == instructions.
#   busy: li + n x (addi, addic., bne) + b  = 3n + 2 instructions (20 bytes)
#   tail: mr + blr                          = 2 instructions      (8 bytes)
TWO_FUNCTIONS = """
        .globl  busy
busy:                           # r3 = n > 0; returns 3n
        li      r4, 0
.Lloop: addi    r4, r4, 3
        addic.  r3, r3, -1
        bne     .Lloop
        b       tail
        .globl  tail
tail:   mr      r3, r4
        blr
"""
N = 10


@pytest.fixture(scope="module")
def warm():
    """A ppc750 with TWO_FUNCTIONS loaded and called once: its I-cache holds the code."""
    m = Machine("ppc750")
    m.load(TWO_FUNCTIONS)
    assert m.call("busy", N).return_value == 3 * N
    return m


@pytest.fixture(scope="module")
def flush():
    m = Machine("ppc750")
    m.load(routine("ppc32/flush_dcache_icache.S"))
    return m, m.alloc(4096)


# ------------------------------------------------------------------ totals and determinism

@pytest.mark.parametrize("every", [1, 7, 100, 5000])
def test_samples_add_up_to_cycles_over_the_period(flush, every):
    m, buf = flush
    p = profile_call(m, "flush_dcache_icache", buf, every=every, cold=True)
    # the cold flush of a clean page on the 750's 60x bus (derived in tests/test_cli.py)
    assert p.run.cycles == 2430
    assert p.samples == 2430 // every
    table = p.by_symbol()
    # every cycle and every instruction is charged to some instruction
    assert table["cycles"].sum() == p.run.cycles
    assert table["instructions"].sum() == p.run.instructions == 777


def test_profiling_leaves_the_cycle_count_alone_and_switches_itself_off(flush):
    m, buf = flush
    plain = m.call("flush_dcache_icache", buf, cold=True)
    profiled = profile_call(m, "flush_dcache_icache", buf, every=3, cold=True)
    assert profiled.run.to_dict() == plain.to_dict()
    assert m.state[c.H_PROFILE_PERIOD] == 0


# A load from each 64-byte line of a buffer in turn (pentium4: its stream prefetcher follows
# misses along a 4 KB page, emu/hw/model/memsys.c stream_prefetch)
WALK_X86 = """
        .globl walk
walk:                           # (buf, lines)
        movl    4(%esp), %edx
        movl    8(%esp), %ecx
        xorl    %eax, %eax
1:      addl    (%edx), %eax
        addl    $64, %edx
        decl    %ecx
        jnz     1b
        ret
"""


def test_a_cold_call_on_x86_is_the_same_after_other_calls_and_when_profiled():
    # a cold call used to keep the prefetcher's streams: after a 16-line walk of the page,
    # its stream ran ahead of an 8-line walk from the page's start, which then got no
    # prefetches (2,916 cycles against a fresh machine's 1,762), and a profile_call made
    # after other calls looked as if the profiler changed the cycles
    def walker():
        m = Machine("pentium4")
        m.load(WALK_X86)
        return m, m.alloc(8192)
    m, buf = walker()
    fresh = m.call("walk", buf, 8, cold=True)
    assert fresh.to_dict()["events"]["hardware_prefetches"] > 0
    m, buf = walker()
    m.call("walk", buf, 16, cold=True)
    assert m.call("walk", buf, 8, cold=True).to_dict() == fresh.to_dict()
    m.call("walk", buf, 16, cold=True)
    profiled = profile_call(m, "walk", buf, 8, every=7, cold=True)
    assert profiled.run.to_dict() == fresh.to_dict()
    assert profiled.by_symbol()["cycles"].sum() == fresh.cycles


def test_the_same_call_twice_gives_the_same_profile(flush):
    m, buf = flush
    first = profile_call(m, "flush_dcache_icache", buf, every=13, cold=True)
    second = profile_call(m, "flush_dcache_icache", buf, every=13, cold=True)
    assert first.to_dict() == second.to_dict()
    assert first.text() == second.text()
    assert first.samples == 2430 // 13 > 0


def test_the_period_is_switched_off_when_the_guest_fails():
    m = Machine("ppc750")
    m.load(".globl spin\nspin: b spin\n")
    with pytest.raises(InstructionLimitExceeded):
        profile_call(m, "spin", every=10, limit=1000)
    assert m.state[c.H_PROFILE_PERIOD] == 0


@pytest.mark.parametrize("every", [0, -5, 2.5, True, "7"])
def test_the_period_must_be_a_positive_whole_number(warm, every):
    with pytest.raises(ValueError, match="positive number of cycles"):
        profile_call(warm, "busy", N, every=every)
    assert warm.state[c.H_PROFILE_PERIOD] == 0


# ------------------------------------------------------------------ per symbol

def test_every_cycle_sampled_gives_each_symbol_its_instructions(warm):
    p = profile_call(warm, "busy", N, every=1)
    assert p.run.cycles == p.run.instructions == 3 * N + 4
    table = p.by_symbol().set_index("symbol")
    assert list(table.index) == ["busy", "tail"]        # most samples first
    assert table.loc["busy", "instructions"] == table.loc["busy", "samples"] == 3 * N + 2
    assert table.loc["tail", "instructions"] == table.loc["tail", "samples"] == 2
    assert table.loc["busy", "share"] == pytest.approx(100 * 32 / 34)
    assert table.loc["tail", "share"] == pytest.approx(100 * 2 / 34)
    assert table.loc["busy", "size"] == 20 and table.loc["tail", "size"] == 8
    assert ".Lloop" not in table.index                  # a local label is not a symbol


def test_counts_without_samples_give_each_call_its_own_cycles_by_symbol(warm):
    # by hand (as above): busy 3N + 2 instructions, tail 2, one cycle each on a warm 750
    count_instructions(warm)
    try:
        for _ in range(2):              # each call starts the counts from zero
            warm.call("busy", N)
            hits, cycles = instruction_counts(warm)
            assert cycles_by_symbol(warm, cycles) == {"busy": 3 * N + 2, "tail": 2}
            assert hits.sum() == 3 * N + 4
    finally:
        count_instructions(warm, on=False)
    warm.call("busy", N)                # off: nothing counted, the last counts left as they were
    assert instruction_counts(warm)[1].sum() == 3 * N + 4


def test_readprofile_text_lists_ticks_symbol_and_load(warm):
    p = profile_call(warm, "busy", N, every=1)
    lines = p.text().splitlines()
    assert lines[0].startswith("# busy on ppc750: 34 cycles")
    # load = ticks / bytes of the symbol: 32 / 20, 2 / 8, and 34 / 28 over all the code
    assert lines[1:] == [f"{32:6d} {'busy':<40s} {1.6:8.4f}",
                         f"{2:6d} {'tail':<40s} {0.25:8.4f}",
                         f"{34:6d} {'total':<40s} {34 / 28:8.4f}"]


def test_a_sample_every_five_cycles_lands_on_the_fifth_instructions(warm):
    # 34 one-cycle instructions: samples at instructions 5, 10, ..., 30. Instruction 1 is li,
    # iteration i is instructions 3i-1 (addi), 3i (addic.), 3i+1 (bne), 32 is b, 33-34 tail:
    # 5, 20 -> addi; 15, 30 -> addic.; 10, 25 -> bne.
    p = profile_call(warm, "busy", N, every=5)
    table = p.by_symbol().set_index("symbol")
    assert table.loc["busy", "samples"] == 6
    assert table.loc["tail", "samples"] == 0 and table.loc["tail", "instructions"] == 2
    assert "tail" not in p.text()          # readprofile lists only symbols with ticks
    rows = p.annotate("busy")
    assert list(rows["address"]) == [CODE_BASE + 4 * k for k in range(5)]
    assert list(rows["hits"]) == [1, N, N, N, 1]
    assert list(rows["samples"]) == [0, 2, 2, 2, 0]
    assert list(rows["cycles"]) == [1, N, N, N, 1]
    assert rows["instruction"][1] == "addi r4, r4, 3"


def test_annotate_text_shows_the_loop_body_with_its_hit_count(warm):
    text = profile_call(warm, "busy", N, every=5).annotate_text("busy")
    lines = text.splitlines()
    assert lines[0] == "busy: 6 samples (100.00%), 32 cycles, 32 instructions"
    loop = [line for line in lines if "addic." in line]
    assert len(loop) == 1 and loop[0].split()[:4] == [f"{CODE_BASE + 8:08x}", "10", "10", "2"]


def test_annotate_of_everything_and_of_a_missing_symbol(warm):
    p = profile_call(warm, "busy", N, every=5)
    assert list(p.annotate()["symbol"]) == ["busy"] * 5 + ["tail"] * 2
    with pytest.raises(KeyError, match="no symbol 'nosuch'"):
        p.annotate("nosuch")


def test_a_cold_start_charges_the_fetch_miss_to_the_first_instruction(warm):
    # all 28 bytes are in one 32-byte I-cache line: one miss to memory, 80 - 2 cycles of stall
    p = profile_call(warm, "busy", N, every=5, cold=True)
    assert p.run.cycles == 3 * N + 4 + 78
    first = p.annotate("busy").iloc[0]
    assert (first["hits"], first["cycles"], first["samples"]) == (1, 79, 79 // 5)


def test_code_outside_any_symbol_is_unknown_and_aliases_keep_the_global_name():
    m = Machine("ppc750")
    # two instructions before the first label; "entry" and the global "helper" share an
    # address; numeric label 1 is local
    m.load("  li r3, 1\n  b entry\nentry:\n  .globl helper\nhelper:\n"
           "1: addi r3, r3, 1\n  cmpwi r3, 4\n  blt 1b\n  blr\n")
    p = profile_call(m, CODE_BASE, every=1, cold=False)
    table = p.by_symbol().set_index("symbol")
    assert set(table.index) == {UNKNOWN, "helper"}
    assert table.loc[UNKNOWN, "instructions"] == 2
    assert table.loc["helper", "instructions"] == 3 * 3 + 1     # r3 = 2, 3, 4, then blr
    assert f"{int(table.loc[UNKNOWN, 'samples']):6d} {UNKNOWN}" in p.text().splitlines()


# ------------------------------------------------------------------ saved profiles

def test_a_saved_profile_reads_back_as_samples_per_symbol(warm, tmp_path):
    p = profile_call(warm, "busy", N, every=1)
    p.save(tmp_path / "busy.prof")
    assert read_samples(tmp_path / "busy.prof") == {"busy": 32, "tail": 2}


@pytest.mark.parametrize("text, words", [
    ("  12 foo 0.5\n  x bar\n", ":2: expected 'samples symbol [load]'"),
    ("  12 foo bar baz\n", ":1: expected"),
    ("  12 foo notanumber\n", ":1: expected"),
    ("  12 foo\n   3 foo\n", ":2: symbol 'foo' is listed twice"),
    ("# nothing\n     0 total\n", "holds no samples"),
])
def test_a_bad_saved_profile_is_refused_with_its_line(tmp_path, text, words):
    path = tmp_path / "bad.prof"
    path.write_text(text)
    with pytest.raises(ValueError) as error:
        read_samples(path)
    assert words in str(error.value) and "bad.prof" in str(error.value)


def test_a_missing_profile_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="cannot read the profile"):
        read_samples(tmp_path / "nope.prof")


# ------------------------------------------------------------------ kperfdiff

# A: 100 samples -> foo 50%, bar 30%, only_a 20%
# B: 200 samples -> foo 10%, bar 50%, only_b 30%, also_b 10%
A_PROFILE = "# A\n    50 foo    0.5000\n    30 bar    0.1\n    20 only_a\n   100 total   0.2\n"
B_PROFILE = "    20 foo\n   100 bar\n    60 only_b\n    20 also_b\n   200 total\n"


@pytest.fixture
def two_files(tmp_path):
    a, b = tmp_path / "arm.prof", tmp_path / "x86.prof"
    a.write_text(A_PROFILE)
    b.write_text(B_PROFILE)
    return a, b


def test_kperfdiff_ranks_common_symbols_by_the_difference_of_their_shares(two_files):
    table = kperfdiff.diff(*two_files)
    # foo |50 - 10| = 40 ranks above bar |30 - 50| = 20, though bar has more samples
    common = table[table["section"] == kperfdiff.COMMON]
    assert list(common["symbol"]) == ["foo", "bar"]
    assert list(common["diff"]) == pytest.approx([40.0, 20.0])
    assert list(common["percent_a"]) == pytest.approx([50.0, 30.0])
    assert list(common["percent_b"]) == pytest.approx([10.0, 50.0])
    only_a = table[table["section"] == kperfdiff.ONLY_A]
    assert list(only_a["symbol"]) == ["only_a"] and list(only_a["percent_a"]) == [20.0]
    only_b = table[table["section"] == kperfdiff.ONLY_B]
    assert list(only_b["symbol"]) == ["only_b", "also_b"]
    assert list(only_b["percent_b"]) == pytest.approx([30.0, 10.0])
    assert list(table["section"]) == ["common"] * 2 + ["only a"] + ["only b"] * 2


def test_kperfdiff_text_has_the_three_sections(two_files):
    text = kperfdiff.format(kperfdiff.diff(*two_files), names=("arm", "x86"), top=1)
    assert text == "\n".join([
        ">> Top 1 candidates among common symbols",
        "%diff | symbol | arm | x86",
        "-----",
        "40.00 | foo | 50.00 | 10.00",
        "",
        ">> Top 1 candidates among symbols only in arm",
        "%time | symbol",
        "-----",
        "20.00 | only_a",
        "",
        ">> Top 1 candidates among symbols only in x86",
        "%time | symbol",
        "-----",
        "30.00 | only_b",
    ])


def test_kperfdiff_of_profiles_and_mappings():
    # mappings: a symbol with no samples is absent, not common
    table = kperfdiff.diff({"f": 3, "g": 1, "h": 0}, {"f": 1, "h": 1})
    assert list(table["symbol"]) == ["f", "g", "h"]
    assert list(table["section"]) == ["common", "only a", "only b"]
    assert list(table["diff"]) == pytest.approx([25.0, 25.0, 50.0])
    with pytest.raises(ValueError, match="without samples"):
        kperfdiff.diff({"f": 0}, {"f": 1})


def test_kperfdiff_of_two_runs_of_the_same_routine(warm):
    # every cycle sampled: busy has 3n + 2 of 3n + 4 samples
    short = profile_call(warm, "busy", 10, every=1)
    long = profile_call(warm, "busy", 20, every=1)
    table = kperfdiff.diff(short, long).set_index("symbol")
    assert table.loc["busy", "percent_a"] == pytest.approx(100 * 32 / 34)
    assert table.loc["busy", "percent_b"] == pytest.approx(100 * 62 / 64)
    assert table.loc["busy", "diff"] == pytest.approx(table.loc["tail", "diff"])
    assert table.loc["tail", "diff"] == pytest.approx(100 * (2 / 34 - 2 / 64))


# ------------------------------------------------------------------ event sampling

EVENTS_SRC = """
touch10:                # r3: a buffer; loads from 10 lines (32 B apart)
    li    r4, 10
    mtctr r4
1:  lwz   r5, 0(r3)
    addi  r3, r3, 32
    bdnz  1b
    blr
touch5:
    li    r4, 5
    mtctr r4
1:  lwz   r5, 0(r3)
    addi  r3, r3, 32
    bdnz  1b
    blr
both:                   # r3: touch10, then touch5 on the next 5 lines
    mflr  r31
    bl    touch10
    bl    touch5
    mtlr  r31
    blr
"""


def test_an_event_profile_counts_events_by_hand():
    """A sample every L1 D miss: touch10 misses 10 lines, touch5 the 5 after them; every
    miss is its load's, so the profile is 10 and 5. Every 3rd miss: the 3rd, 6th and 9th
    are touch10's, the 12th and 15th touch5's."""
    from emu.run.profiler import profile_call
    for every, expected in ((1, {"touch10": 10, "touch5": 5}), (3, {"touch10": 3, "touch5": 2})):
        m = Machine("ppc750")
        m.load(EVENTS_SRC)
        p = profile_call(m, "both", m.alloc(4096), every=every, event="L1D_misses")
        assert p.sampled() == expected
        loads = p.annotate("touch10")
        assert loads[loads["instruction"].str.startswith("lwz")]["samples"].sum() == \
            expected["touch10"]
        assert "a sample every %d L1D_misses" % every in p.text()


def test_counting_a_calls_events_gives_the_profiles_total_without_its_table():
    """touch10 then touch5: 15 L1 D misses by hand, as an every-miss profile totals them;
    the call's Run comes back; cycles are not an event to count."""
    from emu.run.profiler import count_events, profile_call
    m = Machine("ppc750")
    m.load(EVENTS_SRC)
    buf = m.alloc(4096)
    run, events = count_events(m, lambda: m.call("both", buf, cold=True), "L1D_misses")
    assert events == 15 and run.cycles > 0
    p = profile_call(m, "both", buf, every=1, event="L1D_misses", cold=True)
    assert p.samples == events and p.run.cycles == run.cycles
    with pytest.raises(ValueError, match="cycles"):
        count_events(m, lambda: m.call("both", buf), "cycles")


def test_an_event_profile_of_several_cores_adds_their_samples():
    from emu.run.profiler import profile_parallel
    m = Machine("ppc750", cores=2)
    m.load(EVENTS_SRC)
    bufs = [m.alloc(4096), m.alloc(4096)]
    p = profile_parallel(m, [("touch10", bufs[0]), ("touch10", bufs[1])], every=1,
                         event="L1D_misses")
    assert p.sampled() == {"touch10": 20}
    cycles = profile_parallel(m, [("touch10", bufs[0]), ("touch5", bufs[1])], every=7)
    assert cycles.samples == sum(r.cycles // 7 for r in cycles.run.runs)
    assert "x 2 cores" in cycles.text()


def test_a_session_counts_two_events_as_each_alone():
    """Two kinds of event in one run (oprofile's session of two counters): the L1 D misses
    by hand (10 and 5, as above), the L2's read misses per instruction as a profile of them
    alone gives, the same cycles; on two cores each core's events are added."""
    from emu.run.profiler import profile_call, profile_parallel, profile_session
    m = Machine("ppc750")
    m.load(EVENTS_SRC)
    buf = m.alloc(4096)
    both = profile_session(m, lambda: m.call("both", buf, cold=True),
                           ("L1D_misses", "L2_read_misses"))
    assert both["L1D_misses"].sampled() == {"touch10": 10, "touch5": 5}
    for event, p in both.items():
        alone = profile_call(m, "both", buf, every=1, event=event, cold=True)
        assert p.table["samples"].tolist() == alone.table["samples"].tolist()
        assert p.run.cycles == alone.run.cycles and p.event == event
    m = Machine("ppc750", cores=2)
    m.load(EVENTS_SRC)
    calls = [("touch10", m.alloc(4096)), ("touch5", m.alloc(4096))]
    two = profile_session(m, lambda: m.run_parallel(calls, cold=True),
                          ("L2_read_misses", "L1D_misses"))
    assert two["L1D_misses"].sampled() == {"touch10": 10, "touch5": 5}
    alone = profile_parallel(m, calls, every=1, event="L2_read_misses", cold=True)
    assert two["L2_read_misses"].sampled() == alone.sampled()


@pytest.mark.parametrize("events, why", [(("cycles", "L1D_misses"), "cycles alone"),
                                         (("L1D_misses",) * 2, "two different"),
                                         (("L1D_misses", "L2_read_misses", "memory_reads"),
                                          "two different")])
def test_a_session_of_cycles_and_events_or_of_three_is_refused(events, why):
    from emu.run.profiler import profile_session
    m = Machine("ppc750")
    m.load(EVENTS_SRC)
    buf = m.alloc(4096)
    with pytest.raises(ValueError, match=why):
        profile_session(m, lambda: m.call("both", buf), events)


@pytest.mark.parametrize("event, why", [("L1D_hits", "L1 hits are not counted"),
                                        ("L3_misses", "has no level L3"),
                                        ("L2_reads", "unknown event")])
def test_events_the_model_cannot_count_are_refused(event, why):
    from emu.run.profiler import profile_call
    m = Machine("ppc750")
    m.load(EVENTS_SRC)
    with pytest.raises(ValueError, match=why):
        profile_call(m, "both", m.alloc(4096), every=1, event=event)


def test_call_tree_gives_each_caller_its_callees_mean_cost_by_category():
    """A calls B twice and C once; B (named "b") costs 30 cycles over 3 calls (the third
    from outside A), C (unnamed) costs 5 of its own. A's 10 own
    cycles stay None; A gets 2 x 10 of B's as "b" and C's 5 as None."""
    import pandas as pd
    from emu.run.profiler import Symbol, call_tree
    symbols = [Symbol("A", 0, 16), Symbol("B", 16, 24), Symbol("C", 24, 32)]
    table = pd.DataFrame([
        {"address": 0, "symbol": "A", "hits": 1, "cycles": 4, "instruction": "mflr r0"},
        {"address": 4, "symbol": "A", "hits": 1, "cycles": 2, "instruction": "bl 0x10"},
        {"address": 8, "symbol": "A", "hits": 1, "cycles": 2, "instruction": "bl 0x10"},
        {"address": 12, "symbol": "A", "hits": 1, "cycles": 2, "instruction": "bl 0x18"},
        {"address": 16, "symbol": "B", "hits": 3, "cycles": 30, "instruction": "nop"},
        {"address": 24, "symbol": "C", "hits": 1, "cycles": 5, "instruction": "blr"}])
    tree = call_tree(table, symbols, {"B": "b"})
    assert tree["A"] == {None: 15, "b": 20}
    assert tree["B"] == {"b": 30} and tree["C"] == {None: 5}


def test_call_tree_puts_named_instructions_in_their_category_from_every_caller():
    """As above, with B's one instruction split: its second half (address 20, 12 cycles
    over its 3 executions) named "spin" by instruction_category. B: 18 cycles "b", 12
    "spin"; A, which makes 2 of B's 3 calls, gets 2/3 of each: 12 "b", 8 "spin"."""
    import pandas as pd
    from emu.run.profiler import Symbol, call_tree
    symbols = [Symbol("A", 0, 16), Symbol("B", 16, 24), Symbol("C", 24, 32)]
    table = pd.DataFrame([
        {"address": 0, "symbol": "A", "hits": 1, "cycles": 4, "instruction": "mflr r0"},
        {"address": 4, "symbol": "A", "hits": 1, "cycles": 2, "instruction": "bl 0x10"},
        {"address": 8, "symbol": "A", "hits": 1, "cycles": 2, "instruction": "bl 0x10"},
        {"address": 12, "symbol": "A", "hits": 1, "cycles": 2, "instruction": "bl 0x18"},
        {"address": 16, "symbol": "B", "hits": 3, "cycles": 18, "instruction": "nop"},
        {"address": 20, "symbol": "B", "hits": 3, "cycles": 12, "instruction": "lwarx r0"},
        {"address": 24, "symbol": "C", "hits": 1, "cycles": 5, "instruction": "blr"}])
    tree = call_tree(table, symbols, {"B": "b"},
                     lambda row: "spin" if row.instruction.startswith("lwarx") else None)
    assert tree["B"] == {"b": 18, "spin": 12}
    assert tree["A"] == {None: 15, "b": 12, "spin": 8}


# ------------------------------------------------------------------ a core's own counts

def _busy_ranges(m):
    busy, tail = m.address_of("busy"), m.address_of("tail")
    return [(busy, tail), (tail, tail + 8)]


def test_own_counts_are_each_cores_alone_while_cores_run_at_once():
    # two cores run busy at the same time, core 0 with n = 50, core 1 with n = 100 (152 and
    # 302 cycles, each longer than the scheduler's 100-cycle quantum, so their slices
    # interleave): each core's own counts are its call's alone (by hand, as above: 3n + 2 in
    # busy, 2 in tail)
    m = Machine("ppc750", cores=2)
    m.load(TWO_FUNCTIONS)
    got = {}

    def task(t):
        n = 50 * (t.core + 1)
        ranges = _busy_ranges(m)
        with own_counts(m, t.core, CodeSpans(m, [ranges])) as counted:
            run = t.call("busy", n)
        got[t.core] = ([counted.counts(*r)[0] for r in ranges], counted.counts(*ranges[0])[1]
                       + counted.counts(*ranges[1])[1], run.cycles)

    m.run_tasks([task, task])
    for core, n in ((0, 50), (1, 100)):
        hits, cycles, run_cycles = got[core]
        assert hits == [3 * n + 2, 2]
        assert cycles == run_cycles                     # every cycle of the call, in its symbols


def test_own_counts_leave_the_cycles_and_the_profiler_alone(warm):
    plain = warm.call("busy", N).cycles
    with own_counts(warm, 0, CodeSpans(warm, [_busy_ranges(warm)])) as counted:
        run = warm.call("busy", N)
    assert run.cycles == plain == counted.counts(*_busy_ranges(warm)[0])[1] + 2
    assert warm.model.header(0)[c.H_PROFILE_PERIOD] == 0        # switched off after
    with pytest.raises(TypeError, match="give the code as a CodeSpans"):
        own_counts(warm, 0, _busy_ranges(warm))
    p = profile_call(warm, "busy", N, every=1)                   # the profiler's own arrays
    assert p.by_symbol().set_index("symbol").loc["busy", "instructions"] == 3 * N + 2


# Below busy and tail, 4 KB further on: far returns 7 (li + blr, one block of 8 bytes).
FAR = TWO_FUNCTIONS + """
        .space  4096
        .globl  far
far:    li      r3, 7
        blr
"""


def test_a_call_clears_and_reads_the_counts_up_to_their_high_water_mark():
    m = Machine("ppc750")
    m.load(FAR)
    st, base = m.state, int(m.state[c.H_CODE_BASE])
    count_instructions(m)
    try:
        assert m.call("far").return_value == 7
        # the highest count yet is far's block's: the mark is its end
        assert counted_top(st) == m.address_of("far") + 8 - base
        hits_far = instruction_counts(m)[0]
        assert hits_far.sum() == 2 and hits_far[m.address_of("far") - base] == 1
        m.call("busy", N)
        # the mark stays where far left it; below it this call's start cleared far's counts
        assert counted_top(st) == m.address_of("far") + 8 - base
        hits, cycles = instruction_counts(m)
        assert len(hits) == int(st[c.H_CODE_LEN]) + 1
        assert hits[m.address_of("far") - base] == 0
        assert hits.sum() == 3 * N + 4
        short_hits, short_cycles = instruction_counts(m, whole=False)
        assert len(short_hits) == len(short_cycles) == counted_top(st)
        assert (short_hits == hits[:counted_top(st)]).all()
        assert (short_cycles == cycles[:counted_top(st)]).all()
        assert not hits[counted_top(st):].any()
    finally:
        count_instructions(m, on=False)
