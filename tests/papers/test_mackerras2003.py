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
from emu.hw import estimates
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
    # block's base cycles are charged at its start; an instruction asks for the bus at its
    # issue (the clock less its own and its block's later base cycles) and a sync waits from
    # the end of its own 3. The first block (5 of set-up, the first dcbst's 7) ends at 12, its
    # dcbst issues at 5; the loop's dcbst issue 7 cycles after the one before plus any wait.
    # clean: each dcbst's address-only tenure; the address bus takes one every 12 cycles, so
    # dcbst k >= 2 issues at 12 (k - 1) and waits 5 (127 x 5); the last's tenure ends at
    # 1541, the clock 1536. The next block (sync, mtctr, the first icbi's 6: 11) ends at
    # 1547; the sync's own cycles end at 1539: it waits 2 for the bus and 12 for its tenure
    # (14); 127 icbi iterations x 6 and the last block's 6, its sync 12: 1680 (the core's
    # cycles, before the bus) + 635 + 14 + 12 = 2341.
    # dirty: the data bus ends a write-back every 16 cycles, the k-th at 16 k + 5 (the first
    # from 5); dcbst k >= 4 waits for one of the two buffers until the (k - 2)-th's ends, and
    # the clock is then 7 on: the last posts at 16 x 126 + 5 = 2021, clock 2028, and its
    # write-back ends at 2053. The sync block ends at 2039, the sync's own cycles at 2031:
    # both write buffers still full, it waits 22 for the last write-back and 12 for its
    # tenure (2053-2065): the clock 2073;
    # 127 icbi iterations x 6 and the last block's 6: 2841, its sync 12: 2853; the first
    # call's I-cache misses add 13 (the second, at the sync's block, is hidden in its wait):
    # 2866.
    # half: 64 dirty lines as above (the 64th posts at 997, its tenure 997-1009, clock
    # 1004), then 64 clean dcbst, one per 12 cycles on the address bus, the last issuing at
    # 1760 (tenure 1765-1777, clock 1772); the sync's cycles end at 1775 and finds the
    # buffers empty (the last write-back ended at 1029): it waits 2 for the bus and its
    # tenure: 1797; the icbi loop and last block 768, the last sync 12:
    # 2577, and the I-cache misses 24 (13, and 11 of the second's 13: only 2 are hidden in
    # the sync's bus wait): 2601.
    assert (dirty.cycles, half.cycles, clean.cycles) == (2866, 2601, 2341)
    # 4096 / 32-byte lines: every dirty line is written back by dcbst, through L2 to memory
    assert dirty.caches["L1D"]["writebacks"] == dirty.caches["L2"]["writebacks"] == 128
    assert half.caches["L1D"]["writebacks"] == 64
    assert clean.caches["L1D"]["writebacks"] == 0


def test_one_write_buffer_moves_the_wait_from_the_sync_into_the_loop():
    """[bus] write_buffers at its range's low end (1, the 750GX's 2 the nominal): each dirty
    dcbst k >= 2 waits for the one buffer until the (k - 1)-th write-back ends (16 k - 11),
    9 cycles a line, so the loop ends at 2044 instead of 2028; the data bus still ends the
    last write-back at 2053, so the sync (its own cycles ending at 2047) waits 6 for it and
    12 for its tenure: 2073, the same as with two buffers, and 2853 at the end. But the
    cold I-cache's second miss (13, at the sync's block) is hidden in a 6-cycle wait now,
    not a 22-cycle one: 2853 + 13 + 7 = 2873. Half dirty: the 64th dcbst ends at 1020 (not
    1004), the 64 clean ones each wait 5 for the address bus from there (the last tenure
    1781-1793, clock 1788), the sync waits 2 + 12: 1813, then 768 + 12: 2593, and the misses
    13 + 11: 2617. A clean page has no write-back: 2341 either way."""
    with estimates.moved({"ppc750:bus.write_buffers": 1}):
        dirty, half, clean = flush_after_fill(1024), flush_after_fill(512), \
            flush_after_fill(1024, again=True)
    assert (dirty.cycles, half.cycles, clean.cycles) == (2873, 2617, 2341)


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
    # only kind, cost 8.25 clean ones; it costs 1.22 now). Each flush's sync waiting from
    # its own cycles (not its block's end) costs it one cycle more, and nothing else moved:
    # from 56,057 / 70,097, 221,600 / 605,360 and 493,090 / 1,454,830 (0.7997, 0.3661,
    # 0.3389), one cycle a flushed page: (56,057 + 3) / (70,097 + 9), (221,600 + 17) /
    # (605,360 + 181), (493,090 + 42) / (1,454,830 + 453)
    assert ratios == pytest.approx([0.79965, 0.36598, 0.33886], abs=5e-6)


def test_lazy_keeps_only_the_flushes_of_pages_the_kernel_wrote(policies):
    eager, lazy = policies["shell", "eager"].counts, policies["shell", "lazy"].counts
    assert (eager["flushed:file"], eager["flushed:cow"], eager["flushed:anonymous"],
            eager["flushed:exec_args"]) == (192, 28, 14, 2)
    assert lazy["pages_flushed"] == eager["flushed:cow"] + eager["flushed:anonymous"]


def test_the_images_high_end_hardly_grows_an_exec(policies):
    """Every image lat_proc runs at its range's high end (twice the pages each run touches,
    at most those it maps; a library's text touched stays). fork runs no image in its
    iteration (the child's and parent's runs are fixed lists): 9 and 3 flushes as before.
    exec: hello maps one page of text, data and bss, so its run cannot grow, nor can ld.so's
    data (2 mapped) and bss (1); libc's data written grows 6 -> 10 (all it maps, not 12),
    its bss 2 -> 3, hello's stack 2 -> 4. Eager flushes a written file data page twice
    (filemap_nopage, then its copy-on-write copy) and an anonymous page once: 181 + 4 x 2
    + 1 + 2 = 192; lazy only the copies and zeroed pages: 17 + 4 + 1 + 2 = 24."""
    high = mackerras2003.lat_proc_runs(executor="serial", images=workloads.IMAGE_RANGE[1])
    flushed = {key: r.counts["pages_flushed"] for key, r in high.items()}
    assert [flushed["fork", p] for p in ("eager", "lazy")] == [9, 3]
    assert [flushed["exec", p] for p in ("eager", "lazy")] == [192, 24]
    assert [policies["exec", p].counts["pages_flushed"] for p in ("eager", "lazy")] == [181, 17]


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
    # the flush's cycles below over the procedures' sums, 1,392,685 and 430,534 (1,392,232
    # and 430,492 before, plus the flushes' one cycle each: 453 and 42): 0.77727 (0.777)
    # and 0.27951 (0.279 before, now past the 5e-4 of 0.279: pinned closer)
    assert shares == pytest.approx([0.77727, 0.27951], abs=5e-6)
    # 411 clean pages' flushes of 2,341 cycles and 42 dirty ones of about 2,865 (the first
    # test's pages); 120,338 / 42 = 2,865.2: the cold I-cache of some flushes varies
    assert workloads.by_procedure(policies["shell", "eager"])["flush_dcache_icache"] == \
        411 * 2341 + 120338 == 1082489
    assert workloads.by_procedure(policies["shell", "lazy"])["flush_dcache_icache"] == 120338


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
    # 212,048 / 1,157,408 before the sync waited from its own cycles; one cycle a flush:
    # (212,048 + 5) / (1,157,408 + 409) = 0.18315
    assert runs["lazy"].us / runs["eager"].us == pytest.approx(0.18315, abs=5e-6)


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
    # (316 and 4,480 at -0.0098785, before each of the 42 flushes of both runs cost one
    # cycle more: (488,219 + 42) / (493,090 + 42) - 1 = -0.0098777; the runs needed grow as
    # 1 / change^2, 316.04 and 4,480.6 the old counts scaled, so each passes an integer)
    assert stats.runs_needed(abs(change * 32.09), 1.42) == 317
    assert stats.runs_needed(abs(change * 8.51), 1.42) == 4481


def test_noise_numbers_of_section_4():
    assert stats.runs_needed(0.59, 1.42) == 92
    assert stats.runs_needed(0.16, 1.42) == 1238
    assert stats.resolvable_difference(1.42, 2) == pytest.approx(6.11, abs=5e-3)
    assert stats.resolvable_difference(1.42, 7) == pytest.approx(1.65, abs=5e-3)


def test_each_pte_table_gets_the_papers_noise_as_its_tolerance():
    from emu.papers import mackerras2003
    # Table 4 (the 750): 1.42 s, 2 runs a row: t(0.975, 2) = 4.3027 x 1.42 x 1 = 6.11 s
    assert mackerras2003.pte_noise("ppc750")["tolerance"] == pytest.approx(6.11, abs=5e-3)
    # Table 5 (POWER4), no noise given: 1.42 / 335.80 of its 86.64 s = 0.36637 s, 6 runs a
    # row: t(0.975, 10) = 2.22814 x 0.36637 x sqrt(2 / 6) = 0.4713 s
    power4 = mackerras2003.pte_noise("power4")
    assert power4["tolerance"] == pytest.approx(0.4713, abs=5e-4)
    assert "assumption" in power4["tolerance_source"]


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

def _table3():
    return data.load("mackerras2003_table3_profile_ppc405").set_index("procedure")


def test_the_405s_floating_point_emulation_is_table_3s_ticks_per_build():
    # ProgramCheckException 4766 + do_mathemu 4475 + record_exception 1369 + fmul 731
    # + fsub 658 = 11,999 ticks of 10 ms over the 2 builds profiled
    assert mackerras2003.fp_emulation_s(_table3()) == pytest.approx(11999 * 0.01 / 2)


def test_the_405_build_claims_are_steps_times_seconds():
    claims = {c.claim: c for c in mackerras2003.ppc405_build_claims(
        30_000.0, 5_000.0, _table3())}
    saved = claims["PPC405 kernel compile system time saved per build"]
    # 427 steps (counted: BUILD405) of 25 ms saved: 10.675 s, against 147.7 - 139.0 s;
    # 427 x 30 ms = 12.81 s before
    assert saved.emulated == pytest.approx(10.675) and saved.published == pytest.approx(8.7)
    assert claims["PPC405 kernel compile system time per build, before"].emulated == \
        pytest.approx(12.81)
    # 10.675 s of the build's 147.7 + 1457.9 s
    overall = claims["PPC405 kernel compile overall time reduction"]
    assert overall.emulated == pytest.approx(100 * 10.675 / (147.7 + 1457.9))
    assert claims["PPC405 kernel compile user time: after / before"].emulated is None
    from emu.hw import estimates
    with estimates.moved({"kernel:build405.jobs": 250}):
        fewer = mackerras2003.ppc405_build_claims(30_000.0, 5_000.0, _table3())
    assert fewer[0].emulated == pytest.approx(250 * 0.025)


def test_the_build_count_is_an_estimate_with_its_range():
    from emu.book import ranges
    estimate = ranges.catalog()["kernel:build405.jobs"]
    assert estimate.low < estimate.value < estimate.high and estimate.why


# ------------------------------------------------------------------ section 3

def test_the_copy_build_claims_add_the_file_copies_to_the_full_size_step(monkeypatch):
    def build(cycles):
        import pandas as pd
        # every cycle in rows that grow with the programs' size (none per process)
        return SimpleNamespace(cycles=cycles, iterations=2, clock_mhz=1000, counts={},
                               scale=1 / 16,
                               breakdown=pd.DataFrame({"calls": [20], "cycles": [cycles]},
                                                      index=["copy_page"]))
    # the copies alone (no read() or write() calls, free look-ups)
    monkeypatch.setattr(mackerras2003, "file_io_step", lambda execs: {
        "original": {"files": 3_000_000, "calls": 0, "lookups": 0},
        "optimized": {"files": 2_000_000, "calls": 0, "lookups": 0},
        "copies": 300, "bytes": 1_200_000})
    no_fs = dict.fromkeys(mackerras2003.FS_PATHS, 0.0)       # no other file-system work
    monkeypatch.setattr(mackerras2003, "fs_step", lambda build: no_fs)
    claims = {c.claim: c for c in mackerras2003.copy_claims(
        {"simple": build(1_000_000), "power4": build(990_000)})}
    # a full-size step (the builds ran at 1/16): the VM 8,000,000 and 7,920,000 cycles, with
    # the file copies 11,000,000 and 9,920,000
    system = claims["POWER4 kernel compile system time: optimized copies / original"]
    assert system.emulated == pytest.approx(9_920_000 / 11_000_000)
    assert system.published == pytest.approx(8.19 / 8.30)
    assert "160 copy-on-write copies" in system.reason and "1,000,000 cycles less" in system.reason
    # 427 steps (counted: BUILD405) of 1,080,000 cycles at 1,000 MHz: 0.46116 s, of them
    # 427 x 1 ms = 0.427 s from the file copies and 427 x 80 us = 0.034 s from copy_page
    saved = claims["POWER4 kernel compile system time saved per build"]
    assert saved.emulated == pytest.approx(0.46116) and saved.published == pytest.approx(0.11)
    assert "0.43 s from the file copies, 0.03 s from copy_page" in saved.reason
    assert "4.70 s against the paper's 8.3" in saved.reason       # 427 x 11 ms
    overall = claims["POWER4 kernel compile overall improvement"]
    ratio = 9_920_000 / 11_000_000
    assert overall.emulated == pytest.approx(100 * 8.30 * (1 - ratio) / (8.30 + 78.84))


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


def test_a_kbuild_step_runs_sh_then_gcc_fixdep_rm_and_mv():
    # 2.5.66's if_changed_dep (top Makefile 866-874) is one command list that make hands to
    # sh -c; sh forks for gcc, fixdep, rm and mv (set and echo are built in). By hand, per
    # step: make vforks a child (1) that execs sh; sh forks 4 children, each execs its
    # command; gcc vforks cpp, cc1 and as (3): vforks 1 + 3 = 4, forks 4, execs sh + gcc +
    # 3 passes + 3 tools = 8, exits and waits 8. Without the rule: make vforks gcc (1 + 3
    # vforks), 4 execs (gcc and its passes), 4 exits.
    plain = mackerras2003.build_run("ppc750", "lazy", kbuild=False)
    rule = mackerras2003.build_run("ppc750", "lazy")

    def per_step(run, event):
        return run.counts.get(event, 0) / run.iterations

    assert [per_step(plain, e) for e in ("vforks", "forks", "execs", "exits")] == [4, 0, 4, 4]
    assert [per_step(rule, e) for e in ("vforks", "forks", "execs", "exits")] == [4, 4, 8, 8]
    assert rule.breakdown.loc["wait", "calls"] / rule.iterations == 8
    # sh's forks copy-on-write: its children and sh itself copy pages the plain step never
    # copied, and the rule's four more programs are flushed and faulted in
    assert per_step(rule, "cow_copies") > per_step(plain, "cow_copies")
    assert rule.cycles / rule.iterations > plain.cycles / plain.iterations


def test_the_kbuild_tools_share_the_compilers_libraries():
    from emu.kernel import gcc
    driver, _ = gcc.compiler(gcc.SCALE)
    sh, tools = gcc.kbuild_shell(driver.libs, gcc.SCALE)
    assert [t.name for t in tools] == ["fixdep", "rm", "mv"]
    assert all(image.libs is driver.libs for image in (sh, *tools))
    # bash's 150 text pages at a sixteenth: round(9.375) = 9; its 40 touched: round(2.5) = 2
    assert (sh.text_pages, sh.text_touched) == (9, 2)
    with pytest.raises(ValueError, match="scale"):
        gcc.kbuild_shell(driver.libs, 0)


def _scaled_build(rows, iterations=2, clock_mhz=1000):
    import pandas as pd
    return SimpleNamespace(iterations=iterations, clock_mhz=clock_mhz, counts={"execs": 16},
                           scale=1 / 16,
                           breakdown=pd.DataFrame({"cycles": rows.values()}, index=rows.keys()),
                           cycles=sum(rows.values()))


def test_a_full_size_step_keeps_each_process_once(monkeypatch):
    build = _scaled_build({"exec": 6_000, "clear_page": 1_000, "mystery": 10})
    # exec is once per process: 6,000 / 2 steps; clear_page grows with the pages: 1,000 / 2
    # x 16 (the build ran at 1/16)
    assert mackerras2003.full_step(build) == {"exec": 3_000, "clear_page": 8_000,
                                              "mystery": 80}
    monkeypatch.setattr(mackerras2003, "file_io_step", lambda execs: {
        "original": {"files": 100, "calls": 20, "lookups": 4}})
    monkeypatch.setattr(mackerras2003, "fs_step", lambda build: {
        "calls": 0.0, "walks": 0.0, "files": 0.0, "maps": 0.0})
    account = mackerras2003.step_account({"run": build}, jobs=500)
    cycles = account["run", "cycles per step"]
    assert cycles["fork, exec, exit, wait"] == 3_000
    assert cycles["page faults: entry, allocation, zeroing, hashing"] == 8_000
    assert cycles["other"] == 80
    assert cycles["file read()/write(): system calls (entry and return)"] == 20
    assert cycles["total"] == 3_000 + 8_000 + 80 + 100 + 20 + 4
    # 500 steps of 11,204 cycles at 1,000 MHz
    assert account.loc["total", ("run", "s per build")] == pytest.approx(500 * 11_204 / 1e9)


def test_a_steps_file_io_charges_a_call_per_read_and_write_and_a_lookup_per_copy():
    from emu.kernel import costs, fileio
    io = mackerras2003.file_io_step(8)
    reads, writes = fileio.step_calls()
    # STEP_IO: 150 files read whole; the .i (300,000 bytes: 74 pages), .s (80,000: 20) and .o
    # (20,000: 5) written a page at a time, the .i and .s read back: 150 + 74 + 20 reads,
    # 99 writes
    assert (reads, writes) == (244, 99)
    assert io["original"]["calls"] == io["optimized"]["calls"] == 343 * costs.cycles("syscall")
    files = sum(fileio.step_copies().values())
    assert io["original"]["lookups"] == files * costs.cycles("page_cache_lookup")
    # the 8 execs' copies besides: 5 header and path reads and 60 strings each
    assert io["copies"] == files + 8 * (5 + 60)
    assert io["original"]["files"] > io["optimized"]["files"]


def test_an_exec_copies_its_headers_and_its_strings():
    from emu.kernel import fileio
    copies = fileio.exec_copies(2, {"phnum": 6, "strings": 16, "string_bytes": 24})
    # per exec: 128 bytes of the binary and of ld.so from offset 0; 6 x 32 = 192 bytes of
    # program headers from offset 52, twice; ld.so's path, 13 bytes, from 52 + 192 = 244,
    # 116 into its 128-byte line
    assert copies[(128, 0, 0)] == 4 and copies[(192, 52, 0)] == 4
    assert copies[(13, 116, 0)] == 2
    # 16 strings of 24 bytes, two at each of the eight offsets, per exec
    assert all(copies[(24, k, k)] == 4 for k in range(8))
    mix = fileio.mix(copies)
    # 2 x (5 + 16) = 42 calls; below 128: the path and the strings (2 + 32); not 8-aligned:
    # the headers (4), the path (2) and the strings off 0 (28)
    assert mix["calls"] == 42
    assert mix["below 128 bytes"] == pytest.approx(34 / 42)
    assert mix["below 512 bytes"] == 1
    assert mix["not 8-byte aligned"] == pytest.approx(34 / 42)
    assert mix["page-sized"] == 0


def test_the_counted_mix_of_a_step_with_eight_execs():
    build = SimpleNamespace(counts={"execs": 8}, iterations=1)
    mix = mackerras2003.counted_mix(build)
    # By hand from fileio.STEP_IO: cpp's 150 files, each a last copy of 2,048 bytes, and
    # (600,000 - 150 x 2,048) / 4,096 = 71.48 whole pages; the .i (300,000 bytes: 73 pages
    # and 960 bytes) written and read, 74 + 74; the .s (80,000: 19 pages and 2,176) 20 + 20;
    # the .o (20,000: 4 and 3,616) written, 5: 414.48 copies, none below 512 bytes, all
    # 8-byte aligned (offsets 0 and 8). The 8 execs: 5 reads and 60 strings each, 520 copies;
    # below 128: ld.so's path and the strings, 61 each; not aligned: the two header reads
    # from 52, the path from 116, 7/8 of the strings: 55.5 each
    assert mix["files"]["calls"] == pytest.approx(414.484375)
    assert mix["exec"]["calls"] == 520
    total = 414.484375 + 520
    assert mix["all"]["below 128 bytes"] == pytest.approx(8 * 61 / total)
    assert mix["all"]["below 512 bytes"] == pytest.approx(520 / total)
    assert mix["all"]["not 8-byte aligned"] == pytest.approx(8 * 55.5 / total)
    claims = {c.claim: c for c in mackerras2003.counted_mix_claims(build)}
    small = claims["copy_tofrom_user calls below 128 bytes (a build's, counted)"]
    assert small.published == 84 and small.emulated == pytest.approx(100 * 8 * 61 / total)
    assert claims["memcpy calls below 128 bytes (a build's)"].emulated is None


def test_a_steps_file_system_calls_are_cpps_fixdeps_and_ld_sos():
    from emu.kernel import fileio
    calls = fileio.step_fs_calls(8)
    # STEP_IO: 150 files of 600,000 bytes; FS_CALLS: 20 failed opens, 3 components, 2 files
    # ld.so opens per exec. Opens: cpp's 150, fixdep's .d file and its 150, ld.so's 8 x 2
    assert calls["open"] == calls["stat"] == calls["close"] == 150 + 151 + 16
    assert calls["mmap"] == calls["munmap"] == 151
    # walked: 317 opens, 20 failed ones, rm's unlink (1 name), mv's rename (2): 340 x 3
    assert calls["components"] == 340 * 3
    # fixdep's pages: a last page a file (150) and the whole pages before them: (600,000 -
    # 150 x 2,048) // 4,096 = 71; and the .d file's one page
    assert calls["mapped_pages"] == 150 + 71 + 1
    # without the Kbuild rule (make runs gcc itself: 4 execs): no fixdep, rm or mv
    plain = fileio.step_fs_calls(4, kbuild=False)
    assert plain["open"] == 150 + 8 and plain["components"] == (158 + 20) * 3
    assert plain["mmap"] == plain["unlink"] == plain["rename"] == plain["mapped_pages"] == 0


def test_a_steps_file_system_work_is_costed_from_its_calls_and_the_builds_faults():
    import pandas as pd
    from emu.kernel import costs
    # a build whose file faults cost 1,000 cycles a call in all, and a zap_pte 100, with a
    # flush_hash_range of 50 cycles for every two PTEs zapped
    rows = {"fault_entry": (10, 4_000), "file_fault": (10, 3_000),
            "page_cache_lookup": (10, 2_000), "hash_page (preload)": (10, 1_000),
            "zap_pte": (20, 2_000), "flush_hash_range": (10, 500)}
    build = SimpleNamespace(iterations=1, counts={"execs": 8}, breakdown=pd.DataFrame(
        {"calls": [c for c, _ in rows.values()], "cycles": [y for _, y in rows.values()]},
        index=list(rows)))
    fs = mackerras2003.fs_step(build)
    # 317 opens + 20 failed + 317 stats + 317 closes + 151 mmaps + 151 munmaps + 2
    assert fs["calls"] == 1_275 * costs.cycles("syscall")
    assert fs["walks"] == 1_020 * costs.cycles("path_component")
    assert fs["files"] == (319 * costs.cycles("open_file") + 317 * costs.cycles("stat_file")
                           + 317 * costs.cycles("close_file"))
    # a page: 400 + 300 + 200 + 100 (the fault) + 100 (zap_pte) + 25 (50 per two PTEs)
    assert fs["maps"] == 302 * costs.cycles("vma_setup") + 222 * 1_125
    # a build that ran fixdep's reads itself (build_run's Kbuild rule) has them in its
    # rows: fs_step then charges none, and the rest as before
    ran = SimpleNamespace(**vars(build), unscaled={"rows": {"file_fault": (1, 150)},
                                                   "counts": {}})
    fs_ran = mackerras2003.fs_step(ran)
    assert fs_ran["maps"] == 0.0
    assert {k: v for k, v in fs_ran.items() if k != "maps"} == \
        {k: v for k, v in fs.items() if k != "maps"}


def test_fixdeps_files_are_the_d_file_the_source_and_the_headers_cut_as_cpp_reads_them():
    from emu.kernel import fileio
    files = fileio.fixdep_files()
    # STEP_IO: 150 files of 600,000 bytes: a last page each and (600,000 - 150 x 2,048) //
    # 4,096 = 71 whole pages before them, one more for each of the first 71 files (the
    # source first): 71 files of two pages, 79 of one
    assert files["depfile"] == (1,) and files["source"] == (2,)
    assert len(files["headers"]) == 149
    assert files["headers"].count(2) == 70 and files["headers"].count(1) == 79
    pages = sum(sum(v) for v in files.values())
    assert pages == fileio.step_fs_calls(8)["mapped_pages"] == 150 + 71 + 1


def _fixdep_step_counts(policy, profile="ppc750"):
    """Two steps of fixdep's reads of a .d file of one page, a source of two and headers of
    one and two pages (the second step measured), on a fresh kernel: the measured rows and
    counts, and the kernel's ledger."""
    k = workloads.make_kernel(policy, None, profile)
    process = k.spawn(workloads.HELLO)
    reads = workloads.FixdepReads(k, {"depfile": (1,), "source": (2,), "headers": (1, 2)},
                                  warmup=1)
    for _ in range(2):
        reads.step += 1
        reads.run(process)
    return reads.measured()


def test_fixdeps_reads_go_through_the_fault_path_and_its_flushes():
    # the measured step maps 4 files of 1 + 2 + 1 + 2 = 6 pages: a read fault each, an
    # mmap and a munmap a file (8 VMA operations). The eager 750 flushes each page twice
    # (filemap_nopage and do_no_page: 2.5.66's two flush_page_to_ram calls): 12
    eager = _fixdep_step_counts("eager")
    assert eager["counts"]["faults"] == 6
    assert eager["counts"]["pages_flushed"] == 12
    assert eager["rows"]["vma_setup"][0] == 8
    assert eager["rows"]["flush_dcache_icache"][0] == 12
    # the headers were read into the page cache in the warm-up step; the source and the .d
    # are filled by cpp (uncharged): no page-cache read is charged in the measured step
    assert "page_cache_read" not in eager["rows"]
    # lazy: a header page's PG_arch_1 was set when the warm-up step mapped it; the new
    # source (2 pages) and .d (1) have it clear: 3 flushes, in update_mmu_cache
    lazy = _fixdep_step_counts("lazy")
    assert lazy["counts"]["faults"] == 6 and lazy["counts"]["pages_flushed"] == 3
    # the 405 deferring to the first fetch: nothing is executed, nothing is flushed
    deferred = _fixdep_step_counts("lazy_exec", "ppc405gp")
    assert deferred["counts"].get("pages_flushed", 0) == 0
    assert deferred["rows"]["vma_setup"][0] == 8


def test_a_full_size_step_keeps_fixdeps_reads_at_their_own_size():
    build = _scaled_build({"exec": 6_000, "flush_dcache_icache": 1_000, "vma_setup": 300})
    # of the two steps' flush cycles, 400 were fixdep's reads (200 a step), as were all the
    # VMA operations' (a PER_PROCESS row: as run either way)
    build.unscaled = {"rows": {"flush_dcache_icache": (4, 400), "vma_setup": (2, 300)},
                      "counts": {}}
    step = mackerras2003.full_step(build)
    # flush: (1,000 - 400) / 2 steps x 16 + 400 / 2 = 4,800 + 200
    assert step == {"exec": 3_000, "flush_dcache_icache": 5_000, "vma_setup": 150}
    assert mackerras2003.unscaled_step(build) == {"flush_dcache_icache": 200,
                                                  "vma_setup": 150}


@pytest.mark.parametrize("profile, routine", [("ppc750", "copy_tofrom_user32_l32"),
                                              ("ppc405gp", "copy_tofrom_user32_l32"),
                                              ("power4", "copy_tofrom_user64")])
def test_a_steps_copies_run_on_every_processor_through_its_own_copy_routine(profile, routine):
    from emu.kernel import costs, fileio
    build = SimpleNamespace(profile=profile, iterations=2, counts={"execs": 16})
    io = mackerras2003.io_step(build)
    copies = fileio.step_copies() + fileio.exec_copies(8)       # 16 execs in two steps
    assert io["files"] == fileio.copy_cycles(routine, copies, 0.5, profile)
    # read(): 150 files + 74 pages of .i + 20 of .s; write(): 74 + 20 + 5 of .o (STEP_IO
    # cut a page at a time): 343 round trips; a look-up per file copy
    assert io["calls"] == 343 * costs.cycles("syscall")
    assert io["lookups"] == sum(fileio.step_copies().values()) * costs.cycles("page_cache_lookup")


def test_a_steps_cycles_are_its_vm_work_its_copies_and_its_other_file_calls(monkeypatch):
    monkeypatch.setattr(mackerras2003, "vm_step_cycles", lambda build: 1_000.0)
    monkeypatch.setattr(mackerras2003, "io_step", lambda build: {"files": 200.0, "calls": 30.0,
                                                                 "lookups": 4.0})
    monkeypatch.setattr(mackerras2003, "fs_step", lambda build: {"calls": 5.0, "maps": 0.5})
    assert mackerras2003.step_cycles(object()) == 1_000 + 234 + 5.5


def test_rm_truncates_the_d_file_from_the_page_cache_and_frees_its_page():
    from emu.kernel import costs
    k = workloads.make_kernel("lazy", None, "ppc750")
    process = k.spawn(workloads.HELLO)
    reads = workloads.FixdepReads(k, {"depfile": (1,), "source": (2,), "headers": (1,)},
                                  warmup=0)
    reads.step += 1
    reads.run(process)
    depfile, source = reads.new_files
    page = k.page_cache.lookup(depfile, 0)
    assert page is not None and page.count == 1 and page.mapcount == 0   # the cache's own
    cached = len(k.page_cache)
    reads.remove_depfile()
    # the .d's one page leaves the cache and is freed (the LIFO free list: the next page
    # allocated); the source stays, as a real build keeps it
    assert k.page_cache.lookup(depfile, 0) is None and len(k.page_cache) == cached - 1
    assert k.page_cache.lookup(source, 0) is not None
    assert k.allocator.alloc("anon").pfn == page.pfn
    rows, counts = reads.measured()["rows"], reads.measured()["counts"]
    assert counts["pages_truncated"] == 1 and counts["pages_freed"] == 1
    assert rows["truncate_page"] == (1, costs.cycles("truncate_page"))
    assert rows["free_page"] == (1, costs.cycles("free_page"))


def test_a_file_still_mapped_is_not_truncated():
    from emu.kernel import KernelError
    from emu.kernel.pages import File
    k = workloads.make_kernel("lazy", None, "ppc750")
    process = k.spawn(workloads.HELLO)
    file = File("mapped.h", 1)
    address = k.mmap(process, 4096, "r", file=file)
    k.touch_pages(process, address, 1, "r")
    with pytest.raises(KernelError, match="still mapped"):
        k.truncate_file(file)
