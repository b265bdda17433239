"""The numbers and directions the Mackerras 2003 chapter states in its prose.

The chapter's notebooks print these; the prose quotes them. If a model change moves one, this
test fails and the prose must be re-read (and the number updated) before it passes again.
"""
from types import SimpleNamespace

import pytest

import emu
from emu.papers import mackerras2003
from emu.present import data, stats
from emu.kernel import workloads
from emu.hw.faults import StaleInstructionFetch
from emu.run.machine import Machine

LI_R3_1_BLR = bytes.fromhex("38600001" "4e800020") * 512
LI_R3_2_BLR = bytes.fromhex("38600002" "4e800020") * 512


def flush_after_fill(words, again=False):
    m = Machine("ppc750")
    m.load(emu.routine("ppc32/fill_words.S"))
    m.load(emu.routine("ppc32/flush_dcache_icache.S"))
    page = m.alloc(4096)
    m.call("fill_words", page, 0x60000000, words)
    run = m.call("flush_dcache_icache", page)
    return m.call("flush_dcache_icache", page) if again else run


def test_one_page_flush_dirty_half_and_clean():
    # clean: the same page flushed a second time, as in the notebook
    dirty, half, clean = flush_after_fill(1024), flush_after_fill(512), \
        flush_after_fill(1024, again=True)
    assert dirty.instructions == half.instructions == clean.instructions == 777
    # By hand, on the 750's 60x bus ([bus]: 4 core cycles a bus clock, an address tenure of
    # 3 clocks = 12 cycles, a 32-byte write-back 4 beats = 16 cycles, two write buffers). A
    # block's base cycles are charged at its start, so each loop's dcbst happens 7 cycles
    # (dcbst 5, addi, bdnz) after the one before; the first at 12 (5 of set-up before it).
    # clean: each dcbst broadcasts an address-only tenure; the address bus takes one every
    # 12 cycles, so 127 of them wait 5; the sync (at 11 after the last dcbst: sync, mtctr
    # and the first icbi's block) waits 1 for the bus and 12 for its own tenure, the final
    # one 12: 1680 (the core's cycles, before the bus) + 127 x 5 + 1 + 12 + 12 = 2340.
    # dirty: the data bus ends a write-back every 16 cycles; a dcbst waits for one of the
    # two buffers, so dcbst k runs at 12 + 16 (k - 1) from the third on: the last at 2028,
    # its write-back ends at 2060. The sync (at 2039) waits for it and its tenure: 2072;
    # 127 icbi iterations x 6 and the last block's 6 cycles: 2840, its sync 12: 2852; the
    # first call's I-cache misses add 13 (the second, before the first sync, is hidden in
    # its wait): 2865.
    # half: 64 dirty lines as above (the 64th at 1004), then 64 clean dcbst, one per 12
    # cycles on the address bus from 1016 to 1772; the sync waits 13 (its tenure from 1784),
    # the icbi loop and last block 768, the last sync 12: 2576, and the I-cache misses 25
    # (13, and 12 of the second's 13 no longer hidden in the sync's 1-cycle bus wait): 2601.
    assert (dirty.cycles, half.cycles, clean.cycles) == (2865, 2601, 2340)
    # 4096 / 32-byte lines: every dirty line is written back by dcbst, through L2 to memory
    assert dirty.caches["L1D"]["writebacks"] == dirty.caches["L2"]["writebacks"] == 128
    assert half.caches["L1D"]["writebacks"] == 64
    assert clean.caches["L1D"]["writebacks"] == 0


def reuse_frame(flush):
    m = Machine("ppc750", strict_coherence=True)
    m.load(emu.routine("ppc32/copy_page.S"))
    m.load(emu.routine("ppc32/flush_dcache_icache.S"))
    frame = m.alloc(4096, LI_R3_1_BLR)
    new_code = m.alloc(4096, LI_R3_2_BLR)
    assert m.call(frame).return_value == 1
    m.call("copy_page", frame, new_code)
    if flush:
        m.call("flush_dcache_icache", frame)
    return m.call(frame).return_value


def test_a_reused_frame_without_the_flush_is_a_stale_fetch():
    with pytest.raises(StaleInstructionFetch, match="0x100000"):
        reuse_frame(flush=False)
    assert reuse_frame(flush=True) == 2


@pytest.fixture(scope="module")
def policies():
    return {(kind, policy): workloads.lat_proc(kind, policy=policy)
            for kind in ("fork", "exec", "shell") for policy in ("eager", "lazy")}


def test_lazy_flushes_fewer_pages_than_eager(policies):
    flushed = {key: r.counts["pages_flushed"] for key, r in policies.items()}
    # derived page by page in tests/kernel/test_kernel.py (two flushes per eager file fault, the
    # child's exit path in libc, the dynamically linked hello)
    assert flushed == {("fork", "eager"): 9, ("fork", "lazy"): 3, ("exec", "eager"): 181,
                       ("exec", "lazy"): 17, ("shell", "eager"): 453, ("shell", "lazy"): 42}
    for kind in ("fork", "exec", "shell"):
        assert policies[kind, "lazy"].cycles < policies[kind, "eager"].cycles
    ratios = [policies[kind, "lazy"].us / policies[kind, "eager"].us
              for kind in ("fork", "exec", "shell")]
    # (0.8978, 0.5926, 0.5760 before the 60x bus: a dirty page's flush, the lazy policy's
    # only kind, cost 8.25 clean ones; it costs 1.22 now)
    assert ratios == pytest.approx([0.7997, 0.3661, 0.3389], abs=5e-5)


def test_lazy_keeps_only_the_flushes_of_pages_the_kernel_wrote(policies):
    eager, lazy = policies["shell", "eager"].counts, policies["shell", "lazy"].counts
    assert (eager["flushed:file"], eager["flushed:cow"], eager["flushed:anonymous"],
            eager["flushed:exec_args"]) == (192, 28, 14, 2)
    assert lazy["pages_flushed"] == eager["flushed:cow"] + eager["flushed:anonymous"]


def test_flush_share_beside_table1(policies):
    procedures = list(workloads.TABLE1_PROCEDURES)
    table1 = data.load("mackerras2003_table1_profile_ppc750").set_index("procedure")
    published = table1.loc[procedures]
    assert published["original"]["flush_dcache_icache"] / published["original"].sum() == \
        pytest.approx(0.710, abs=5e-4)
    shares = []
    for policy in ("eager", "lazy"):
        cycles = workloads.by_procedure(policies["shell", policy])
        shares.append(cycles["flush_dcache_icache"] / cycles.sum())
    assert shares == pytest.approx([0.777, 0.279], abs=5e-4)
    # 411 clean pages' flushes of 2,340 cycles and 42 dirty ones of about 2,864 (the first
    # test's pages); 120,296 / 42 = 2,864.2: the cold I-cache of some flushes varies
    assert workloads.by_procedure(policies["shell", "eager"])["flush_dcache_icache"] == \
        411 * 2340 + 120296 == 1082036
    assert workloads.by_procedure(policies["shell", "lazy"])["flush_dcache_icache"] == 120296


def test_a_static_program_running_200_text_pages_gains_more():
    """The exercise's static program. Eager: filemap_nopage flushes its 200 text pages, its
    data page and libc's execve page (202), do_no_page the text and libc pages again
    (201; the data page's copy goes as copy-on-write); copy-on-write copies 4 (the child's
    2 stack pages and libc data page, big's data page), the argument page and big's other
    stack page: 409. Lazy: only the 5 pages the kernel wrote into."""
    big = workloads.Image("big", text_pages=300, data_pages=2, bss_pages=1, text_touched=200,
                          data_written=1, bss_written=0)
    runs = {p: workloads.lat_proc("exec", policy=p, program=big) for p in ("eager", "lazy")}
    assert (runs["eager"].counts["pages_flushed"], runs["lazy"].counts["pages_flushed"]) == (409, 5)
    assert runs["lazy"].us / runs["eager"].us == pytest.approx(0.1832, abs=5e-5)


@pytest.fixture(scope="module")
def strategies():
    out = {}
    for strategy in ("scan", "immediate", "batched"):
        for kind in ("fork", "exec", "shell"):
            out[kind, strategy] = workloads.lat_proc(kind, tlb_flush=strategy)
        out["mmap", strategy] = workloads.lat_mmap(tlb_flush=strategy)
    return out


def test_pte_strategies_trade_scans_against_per_entry_calls(strategies):
    cycles = {k: r.cycles for k, r in strategies.items()}
    for kind in ("fork", "exec", "shell"):       # the scan examines many empty LPTEs
        assert cycles[kind, "immediate"] < cycles[kind, "batched"] < cycles[kind, "scan"]
        assert strategies[kind, "scan"].counts["lptes_examined"] > \
            strategies[kind, "immediate"].counts["lptes_examined"]
    # mmap (LMBench's stores every 16 KB over a tenth of 1 MB: 7 pages): the 2.5 kernel
    # invalidates each HPTE as munmap zaps its PTE (flush_hash_entry), whatever the
    # strategy; the scan and immediate kernels do the same work, batched adds its batch
    assert cycles["mmap", "scan"] == cycles["mmap", "immediate"] < cycles["mmap", "batched"]
    assert [strategies["mmap", s].counts["flush_calls"]
            for s in ("scan", "immediate", "batched")] == [7, 7, 7]
    # fork under the scan flushes (and refills) the parent's unchanged text HPTEs too
    assert [strategies["fork", s].counts["hpte_invalidated"]
            for s in ("scan", "immediate", "batched")] == [13, 10, 10]
    change = cycles["shell", "immediate"] / cycles["shell", "scan"] - 1
    # (-0.00504 before the 60x bus: the flushes around it cost less now)
    assert change == pytest.approx(-0.00988, abs=5e-6)
    assert stats.runs_needed(abs(change * 32.09), 1.42) == 316
    assert stats.runs_needed(abs(change * 8.51), 1.42) == 4480


def test_noise_numbers_of_section_4():
    assert stats.runs_needed(0.59, 1.42) == 92
    assert stats.runs_needed(0.16, 1.42) == 1238
    assert stats.resolvable_difference(1.42, 2) == pytest.approx(6.11, abs=5e-3)
    assert stats.resolvable_difference(1.42, 7) == pytest.approx(1.65, abs=5e-3)


@pytest.fixture(scope="module")
def compiles():
    out = {}
    for policy in ("lazy", "lazy_exec"):
        out[policy, "cold"] = workloads.kernel_compile(policy=policy, steps=1, warmup=0)
        out[policy, "steady"] = workloads.kernel_compile(policy=policy, steps=2, warmup=1)
    return out


def test_the_405_deferral_leaves_only_first_executions(compiles):
    flushed = {k: r.counts.get("pages_flushed", 0) / r.iterations for k, r in compiles.items()}
    # (cold: 822 and 150 before issue 15; the child's close and execve now run a page of
    # libc text the parent never runs, executed for the first time once)
    assert flushed == {("lazy", "cold"): 823, ("lazy", "steady"): 671,
                       ("lazy_exec", "cold"): 151, ("lazy_exec", "steady"): 0}
    assert compiles["lazy_exec", "cold"].counts["exec_faults"] == 151
    drop = 1 - compiles["lazy_exec", "steady"].us / compiles["lazy", "steady"].us
    assert drop == pytest.approx(0.711, abs=5e-4)


def test_a_cc1_running_300_text_pages_is_flushed_300_times():
    from dataclasses import replace
    big = replace(workloads.CC1, text_touched=300)
    r = workloads.kernel_compile(steps=1, warmup=0, policy="lazy_exec", program=big)
    # and libc's execve page, run for the first time by the child
    assert r.counts["pages_flushed"] == r.counts["exec_faults"] == 300 + 1


def test_table_ticks_against_system_time_at_hz_100():
    """The notebook's consistency check of the paper's numbers, from the data files."""
    t1 = data.load("mackerras2003_table1_profile_ppc750").set_index("procedure")
    t3 = data.load("mackerras2003_table3_profile_ppc405").set_index("procedure")
    saved = [t.loc["flush_dcache_icache", "original"] - t.loc["flush_dcache_icache", "optimized"]
             for t in (t1, t3)]
    assert saved == [3789, 1654]
    text = data.load("mackerras2003_text_numbers").set_index(["page", "quantity", "kernel"])
    builds = [text.loc[(page, f"kernel compiles profiled ({table})", "both"), "value"]
              for page, table in (("section 2.1", "Table 1"), ("section 2.3", "Table 3"))]
    assert [round(s / b / 100, 2) for s, b in zip(saved, builds)] == [12.63, 8.27]


def test_batched_beats_scan_on_the_64_bit_kernel():
    cycles, syncs = {}, {}
    for kind in ("fork", "exec", "shell"):
        for strategy in ("scan", "batched"):
            r = workloads.lat_proc(kind, tlb_flush=strategy, profile="power4")
            cycles[kind, strategy], syncs[kind, strategy] = r.cycles, r.counts["tlbsync"]
    # re-measured when every HPTE operation took its HPTE's lock bit, as the kernel's do
    # (0.1-0.3% more; the order of the strategies is unchanged); then for issue 15 (the
    # dynamic LMBench programs, HPTEs gathered at zap, the 8 GB machine's 128 MB table):
    # fork 80,093 / 73,326, exec 179,793 / 170,252, shell 878,468 / 849,383 before
    # fork 89,902 / 82,444, exec 444,805 / 437,539, shell 1,046,115 / 1,038,841 before the
    # write-backs of dcbst were posted ([maintenance]): each flush_dcache_icache of a page
    # modified in the L2 (3, 17 and 42 of them) costs 2,197 cycles instead of 15,692
    # (tests/papers/test_blanchard2002.py), 13,495 less
    saved = 15692 - 2197
    assert cycles == {("fork", "scan"): 89902 - 3 * saved, ("fork", "batched"): 82444 - 3 * saved,
                      ("exec", "scan"): 444805 - 17 * saved,
                      ("exec", "batched"): 437539 - 17 * saved,
                      ("shell", "scan"): 1046115 - 42 * saved,
                      ("shell", "batched"): 1038841 - 42 * saved}
    # scan: a tlbsync per VMA with HPTEs at fork (4), one per gathered exit or exec;
    # batched: one per flush batch
    assert [syncs[k, s] for k in ("fork", "exec", "shell") for s in ("scan", "batched")] == \
        [5, 2, 6, 3, 7, 4]


@pytest.mark.parametrize("saved_us, word", [(1.0, "smaller"), (20_000.0, "larger")])
def test_the_saving_reason_says_which_way_the_run_went(saved_us, word):
    """The paper's lat_proc savings are 136 us (fork) to 12 ms (shell) (Table 2): a run
    saving 1 us says 'smaller', one saving 20 ms 'larger'."""
    run = lambda us: SimpleNamespace(us=us, cycles=1000, breakdown={"cycles": {}})
    runs = {(kind, policy): run(40_000.0 - (saved_us if policy == "lazy" else 0))
            for kind in mackerras2003.LAT_PROC for policy in ("eager", "lazy")}
    saving = [c for c in mackerras2003.lmbench_claims(runs)
              if c.claim.endswith("time saved per iteration")]
    assert len(saving) == 3
    assert all(f"its saving is {word}" in c.reason for c in saving)


# ------------------------------------------------------------------ the 405 in seconds

def _step(us):
    """A stand-in for one compile step's Result: its kernel time."""
    return SimpleNamespace(us=us)


def _table3():
    return data.load("mackerras2003_table3_profile_ppc405").set_index("procedure")


def test_the_405s_floating_point_emulation_is_table_3s_ticks_per_build():
    # ProgramCheckException 4766 + do_mathemu 4475 + record_exception 1369 + fmul 731
    # + fsub 658 = 11,999 ticks of 10 ms over the 2 builds profiled
    assert mackerras2003.fp_emulation_s(_table3()) == pytest.approx(11999 * 0.01 / 2)


def test_the_405_build_claims_are_steps_times_seconds():
    claims = {c.claim: c for c in mackerras2003.ppc405_build_claims(
        _step(30_000.0), _step(5_000.0), _table3())}
    saved = claims["PPC405 kernel compile system time saved per build"]
    # 400 steps (the estimate) of 25 ms saved: 10 s, against 147.7 - 139.0 s
    assert saved.emulated == pytest.approx(10.0) and saved.published == pytest.approx(8.7)
    assert claims["PPC405 kernel compile system time per build, before"].emulated == \
        pytest.approx(12.0)
    # 10 s of the build's 147.7 + 1457.9 s
    overall = claims["PPC405 kernel compile overall time reduction"]
    assert overall.emulated == pytest.approx(100 * 10.0 / (147.7 + 1457.9))
    assert claims["PPC405 kernel compile user time: after / before"].emulated is None
    from emu.hw import estimates
    with estimates.moved({"kernel:build405.jobs": 250}):
        fewer = mackerras2003.ppc405_build_claims(_step(30_000.0), _step(5_000.0), _table3())
    assert fewer[0].emulated == pytest.approx(250 * 0.025)


def test_the_build_count_is_an_estimate_with_its_range():
    from emu.book import ranges
    estimate = ranges.catalog()["kernel:build405.jobs"]
    assert estimate.low < estimate.value < estimate.high and estimate.why


# ------------------------------------------------------------------ section 3

def test_the_copy_build_claims_scale_the_papers_system_time():
    def build(cycles):
        import pandas as pd
        return SimpleNamespace(cycles=cycles, iterations=2, breakdown=pd.DataFrame(
            {"calls": [20]}, index=["copy_page"]))
    claims = {c.claim: c for c in mackerras2003.copy_claims(
        {"simple": build(1_000_000), "power4": build(990_000)})}
    system = claims["POWER4 kernel compile system time: optimized copies / original"]
    assert system.emulated == pytest.approx(0.99) and system.published == \
        pytest.approx(8.19 / 8.30)
    assert "10 a step" in system.reason and "500 cycles less a copy" in system.reason
    overall = claims["POWER4 kernel compile overall improvement"]
    assert overall.emulated == pytest.approx(100 * 8.30 * 0.01 / (8.30 + 78.84))


def test_the_socket_gain_is_largest_for_aligned_cached_copies():
    warm, cold, misaligned = mackerras2003.bw_unix_gain()
    assert warm > cold > 0 and warm > misaligned > 0


def test_the_iteration_gap_divides_the_papers_saving_by_the_models_cost_per_flush():
    def run(us, flushed):
        return SimpleNamespace(us=us, iterations=2, counts={"pages_flushed": 2 * flushed})
    runs = {(kind, "eager"): run(1000.0, 110) for kind in mackerras2003.LAT_PROC}
    runs.update({(kind, "lazy"): run(500.0, 10) for kind in mackerras2003.LAT_PROC})
    gap = mackerras2003.iteration_gap(runs)
    # 100 flushes skipped for 500 us: 5 us each; the paper's exec saves 5065 - 2254 us
    assert gap.loc["flushes skipped", "exec"] == 100
    assert gap.loc["us saved per skipped flush", "exec"] == 5.0
    assert gap.loc["skipped flushes the paper's saving takes", "exec"] == (5065 - 2254) / 5
    assert gap.loc["lazy time: paper / model", "fork"] == 659 / 500
