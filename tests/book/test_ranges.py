"""emu.book.ranges: which estimates a chapter's run depends on, the moves, each claim's
range (hand-checked on a chapter of two claims), and the cache under the sources' hash."""
import pickle

import pytest
import ranges_runs_chapter as toy

from emu.book import ranges as R
from emu.book import scorecard as S
from emu.hw import estimates
from emu.run import reuse

TINY = {"Tiny": "ranges_chapter"}


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    monkeypatch.setattr(S, "CHAPTERS", {**S.CHAPTERS, **TINY})
    monkeypatch.setenv("EMU_RANGES_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_run_reads_the_estimates_it_depends_on(tiny):
    run = R.chapter_run("Tiny", "ranges_chapter")
    read = set(run["read"])
    assert {"kernel:costs.fork", "kernel:costs.CPI", "ppc750:memory.latency",
            "ppc750:costs.mnemonics.sync"} <= read
    assert "kernel:costs.exec" not in read and "ppc750:costs.mnemonics.dcbz" not in read
    assert not any(n.startswith(("ppc604:", "power4:")) for n in read)


def test_ranges_by_hand_one_estimate_at_a_time(tiny):
    result = R.compute(TINY, grouping="estimate", executor="serial", cache=False)
    fork = result["ranges"][("Tiny", "fork's C path")]
    # fork: 2500 instructions (1250-5000) at CPI 1.5 (1.0-2.5): 3750 as it is
    assert (fork["low"], fork["high"]) == (round(1250 * 1.5), round(5000 * 1.5))
    assert fork["most"] == "kernel:costs.fork"                 # 5625 apart; CPI 3750
    assert fork["most_span"] == round(5000 * 1.5) - round(1250 * 1.5)
    syncs = result["ranges"][("Tiny", "three syncs")]
    rows = {r["claim"]: r for r in result["rows"]}
    nominal = rows["three syncs"]["emulated"]
    # sync costs 2 to 6 on the 750 (3 as it is): three of them, a tenth of the cycles
    assert syncs["low"] <= nominal - 0.3 and syncs["high"] >= nominal + 0.9
    for claim, row in rows.items():
        r = result["ranges"][("Tiny", claim)]
        assert r["low"] <= row["emulated"] <= r["high"]
        assert r["moves"] > 0 and not r["failed"]


def test_grouping_moves_fewer_and_says_which(tiny):
    read = R.chapter_run("Tiny", "ranges_chapter")["read"]
    table = R.catalog()
    one = R.moves(read, "estimate", table)
    by_table = R.moves(read, "table", table)
    by_kind = R.moves(read, "kind", table)
    assert len(one) > len(by_table) > len(by_kind) >= 2
    labels = {label for label, _ in by_kind}
    assert {"ppc750:cycles low", "ppc750:cycles high", "kernel:costs.CPI low"} <= labels
    change = dict(by_kind)["ppc750:cycles high"]
    assert change["ppc750:costs.mnemonics.sync"] == 6 and change["ppc750:memory.latency"] == 100
    assert all(v != table[n].value for _, c in one for n, v in c.items())   # no idle re-run
    with pytest.raises(ValueError, match="grouping"):
        R.moves(read, "nonsense", table)


def test_by_source_the_kernels_work_moves_as_one_and_the_build_apart():
    """Under "source" the kernel's C-path costs (CPI too) and the images' pages are one group,
    the kernel's work beside its guest code; the build's estimates are their own group under
    every grouping but one at a time."""
    e = lambda name: R.Estimate(name, 1, 0, 2, "why")        # noqa: E731
    assert {e(n).group("source") for n in ("kernel:costs.fork", "kernel:costs.CPI",
                                            "kernel:image.cc1")} == {"kernel:work"}
    assert [e("kernel:costs.CPI").group(g) for g in ("table", "kind")] == ["kernel:costs.CPI"] * 2
    assert e("kernel:image.cc1").group("kind") == "kernel:image"
    assert {e("kernel:build.jobs").group(g) for g in ("table", "kind", "source")} == \
        {"kernel:build"}
    assert e("kernel:build.jobs").group("estimate") == "kernel:build.jobs"
    assert e("ppc750:memory.latency").group("source") == "ppc750"


def test_the_range_of_a_claim_the_moves_never_reach():
    r = R.ranges_of("c", 5.0, [("a low", {}, {"values": {"c": 5.0}}),
                               ("a high", {}, {"error": "ValueError: refused"})])
    assert (r["low"], r["high"], r["most"], r["failed"]) == (5.0, 5.0, None, ["a high"])
    r = R.ranges_of("c", 5.0, [("a low", {}, {"values": {"c": 4.0}}),
                               ("b low", {}, {"values": {"c": 5.5}}),
                               ("b high", {}, {"values": {"c": 7.0}})])
    assert (r["low"], r["high"], r["most"], r["most_span"]) == (4.0, 7.0, "b", 1.5)


def test_the_cache_key_changes_with_any_source(tmp_path):
    for name, text in (("emu/a.py", "x = 1\n"), ("routines/ppc32/f.S", "blr\n"),
                       ("data/t.csv", "a\n1\n"), ("emu/hw/profiles/p.toml", "x = 1\n"),
                       ("notes.txt", "not a source\n")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    first = R.sources_hash(tmp_path)
    (tmp_path / "notes.txt").write_text("changed, but not a source\n")
    assert R.sources_hash(tmp_path) == first
    for name in ("emu/a.py", "routines/ppc32/f.S", "data/t.csv", "emu/hw/profiles/p.toml"):
        before = R.sources_hash(tmp_path)
        (tmp_path / name).write_text((tmp_path / name).read_text() + "# changed\n")
        assert R.sources_hash(tmp_path) != before, name


def test_the_cache_serves_the_same_sources_and_not_others(tiny, monkeypatch):
    timing = {}
    first = R.compute(TINY, grouping="kind", executor="serial", timing=timing)
    assert timing["cached"] is False and timing["runs"] == first["runs"] > 0
    again = R.compute(TINY, grouping="kind", executor="serial", timing=timing)
    assert timing["cached"] is True and again["ranges"] == first["ranges"]
    assert again["rows"] == first["rows"]
    monkeypatch.setattr(R, "sources_hash", lambda root=None: "another")
    R.compute(TINY, grouping="kind", executor="serial", timing=timing)
    assert timing["cached"] is False
    assert len(list(tiny.glob("*-kind-tiny.json"))) == 1          # the older one removed


def test_the_scorecard_rows_gain_their_ranges(tiny):
    card = S.scorecard(["Tiny"], ranges="estimate", executor="serial")
    row = card.set_index("claim").loc["fork's C path"]
    assert (row["range low"], row["range high"]) == (1875, 7500)
    assert row["moved most by"] == "kernel:costs.fork"
    assert bool(row["published inside"]) is True                # 4000 in 1875-7500
    assert S.range_summary(card)["ranged"] == 2
    html = S.html_table(card)
    assert "range 1875 to 7500" in html and 'data-range="inside"' in html
    assert '<select data-column="range">' in html
    assert 'data-range' not in S.html_table(card.drop(columns=list(S.RANGE_COLUMNS)))
    S.range_figure(card)


# ------------------------------------------------- a move re-runs only the runs it reaches

TOY = {"Toy": "ranges_runs_chapter"}
TOY_TABLE = {n: R.Estimate(n, v, lo, hi, why) for n, v, lo, hi, why in toy.ESTIMATES}


def _toy(reuse_runs):
    toy.CALLS.update(first=0, second=0)
    return R.compute(TOY, grouping="estimate", executor="serial", cache=False,
                     reuse_runs=reuse_runs, table=TOY_TABLE)


def test_a_move_re_runs_only_the_runs_that_read_it():
    """a=1 (0-3), b=2 (1-2: no high move), c=5 (4-30): five moves. The first run
    (10 a + b = 12) reads a and b, the second (2 c = 10) reads c: a low, a high and b low
    re-run the first only, c low and c high the second only; with the run as it is, the
    first runs 1 + 3 times and the second 1 + 2."""
    result = _toy(reuse_runs=True)
    assert result["runs"] == 5
    assert toy.CALLS == {"first": 4, "second": 3}
    x, y = result["ranges"][("Toy", "X")], result["ranges"][("Toy", "Y")]
    # X = 10 a + b: a low 2, a high 32, b low 11; c leaves it at 12
    assert (x["low"], x["high"], x["most"], x["most_span"]) == (2, 32, "toy:a", 30)
    # Y = X + 2 c: a low 12, a high 42, b low 21, c low 20, c high 72
    assert (y["low"], y["high"], y["most"], y["most_span"]) == (12, 72, "toy:c", 52)
    assert x["moves"] == y["moves"] == 5 and not x["failed"]


def test_reuse_gives_the_ranges_of_whole_re_runs():
    kept = _toy(reuse_runs=True)
    whole = _toy(reuse_runs=False)
    assert toy.CALLS == {"first": 6, "second": 6}               # each move runs both
    assert kept["ranges"] == whole["ranges"] and kept["rows"] == whole["rows"]


def test_the_plan_counts_the_cpu_of_the_runs_a_move_reaches():
    units = [("first", ["toy:a", "toy:b"], 2.0), ("second", ["toy:c"], 5.0)]
    plan = R.plan(units, 7.5, ["toy:a", "toy:b", "toy:c"], "estimate", TOY_TABLE)
    # five moves; each pays the 0.5 s outside the runs: 3 x 2.0 + 2 x 5.0 + 5 x 0.5
    assert plan == {"moves": 5, "cpu_s": 18.5, "full_cpu_s": 37.5}


def test_the_key_is_the_unit_and_its_arguments():
    assert reuse.key("f", (1,), {"a": 2, "b": 3}) == reuse.key("f", (1,), {"b": 3, "a": 2})
    assert reuse.key("f", (1,), {}) != reuse.key("f", (2,), {})
    assert reuse.key("f", (1,), {}) != reuse.key("g", (1,), {})
    assert reuse.key("f", (lambda: 0,), {}) is None            # unpicklable: never kept


def test_a_call_by_position_by_keyword_or_with_its_default_is_one_run():
    def f(a, b=2, **more):
        return a + b

    one = reuse.key("f", (1,), {}, f)
    assert one == reuse.key("f", (), {"a": 1}, f) == reuse.key("f", (1, 2), {}, f) \
        == reuse.key("f", (), {"b": 2, "a": 1}, f)
    assert reuse.key("f", (1,), {"c": 3, "d": 4}, f) == \
        reuse.key("f", (), {"d": 4, "c": 3, "a": 1}, f)      # ** arguments in any order
    assert one != reuse.key("f", (1, 3), {}, f) != reuse.key("f", (1,), {"c": 3}, f)
    # a call the function refuses is keyed as given (the run then says why)
    assert reuse.key("f", (), {"z": 1}, f) == reuse.key("f", (), {"z": 1})


def test_a_unit_called_by_keyword_reuses_the_run_by_position():
    memo = reuse.Memo()
    toy.CALLS.update(first=0, second=0)
    with reuse.recording(memo):
        assert toy.first(10) == toy.first(scale=10) == {"value": 12}
    assert toy.CALLS["first"] == 1 and memo.hits == 1 and memo.runs == 1


def test_a_kept_run_serves_only_the_values_it_read():
    memo = reuse.Memo()
    toy.CALLS.update(first=0, second=0)
    with reuse.recording(memo):
        assert toy.first(10) == {"value": 12}
        with estimates.moved({"toy:c": 30}):                   # not read by first
            assert toy.first(10) == {"value": 12}
        with estimates.moved({"toy:a": 3}) as watch:
            assert toy.first(10) == {"value": 32}
        with estimates.moved({"toy:a": 3}) as again:           # kept under a = 3 too
            assert toy.first(10) == {"value": 32}
    assert toy.CALLS["first"] == 2 and memo.hits == 2 and memo.runs == 2
    assert watch.read == again.read == {"toy:a", "toy:b"}      # a reuse reads them too
    kept = reuse.key(toy.first.unit_name, (10,), {}, toy.first.__wrapped__)
    result = pickle.loads(memo.entries[kept][0][1])
    result["value"] = -1                                       # a caller's copy only
    with reuse.recording(memo):
        assert toy.first(10) == {"value": 12}
    assert toy.first(10) == {"value": 12} and toy.CALLS["first"] == 3   # no memo: run


def test_an_estimate_read_only_in_a_units_set_up_reuses_it():
    """toy.prepared reads toy:c in its set-up only: moving it reuses the kept run (which
    the runs around it still record as reading toy:c), moving toy:a runs it again; the
    plan's units list toy:a alone."""
    memo = reuse.Memo()
    toy.PREPARED[0] = 0
    with reuse.recording(memo), estimates.watch() as nominal:
        assert toy.prepared(10) == 10
    with reuse.recording(memo), estimates.moved({"toy:c": 30}) as moved_c:
        assert toy.prepared(10) == 10
    with reuse.recording(memo), estimates.moved({"toy:a": 3}):
        assert toy.prepared(10) == 30
    assert toy.PREPARED[0] == 2 and memo.hits == 1 and memo.runs == 2
    assert nominal.read == moved_c.read == {"toy:a", "toy:c"}
    assert [reads for _, reads, _ in memo.units()] == [["toy:a"], ["toy:a"]]
    with reuse.recording(reuse.Memo()), estimates.moved({"toy:c": 30}):
        toy.prepared(10)
    assert toy.PREPARED[0] == 3            # another memo: nothing kept, run


def test_a_unit_run_only_as_it_is_is_in_no_moves_plan():
    """A unit run inside ``reuse.nominal_only`` (a claim's spread, which no move reads) is
    kept and reused as any other, but the plan's units list it as reading nothing: the three
    moves (a low, a high, b low) re-run the first unit's 1.0 s each, never the other's."""
    memo = reuse.Memo()
    toy.CALLS.update(first=0, second=0)
    with reuse.recording(memo), estimates.watch():
        toy.first(10)
        with reuse.nominal_only():
            assert toy.first(20) == {"value": 22}       # 20 a + b
    assert toy.CALLS["first"] == 2 and memo.runs == 2
    reads = sorted(r for _, r, _ in memo.units())
    assert reads == [[], ["toy:a", "toy:b"]]
    units = [(n, r, 1.0) for n, r, _ in memo.units()]
    plan = R.plan(units, 2.0, ["toy:a", "toy:b"], "estimate", TOY_TABLE)
    assert plan == {"moves": 3, "cpu_s": 3 * 1.0, "full_cpu_s": 3 * 2.0}
    # a whole re-run under a move skips the nominal unit too: 3 x (2.0 - its 1.0)
    assert 0 <= memo.nominal_cpu_s() <= memo.cpu_s       # the second unit's alone
    assert R.plan(units, 2.0, ["toy:a", "toy:b"], "estimate", TOY_TABLE,
                  nominal_cpu_s=1.0)["full_cpu_s"] == 3 * 1.0


def test_split_moves_the_source_then_the_top_sources_estimates():
    """"split": toy's three estimates together (low: a 0, b 1, c 4; high: a 3, c 30), then,
    toy being both claims' top source, each alone (the five moves above): seven."""
    toy.CALLS.update(first=0, second=0)
    result = R.compute(TOY, grouping="split", executor="serial", cache=False,
                       table=TOY_TABLE)
    assert result["runs"] == 7 and result["split"] == {"Toy": ["toy"]}
    x, y = result["ranges"][("Toy", "X")], result["ranges"][("Toy", "Y")]
    assert (x["low"], x["high"], x["most"]) == (1, 32, "toy:a")     # 0 + 1; 30 + 2
    assert (y["low"], y["high"], y["most"]) == (9, 92, "toy:c")     # 1 + 8; 32 + 60
    assert toy.CALLS == {"first": 1 + 2 + 3, "second": 1 + 2 + 2}


def test_each_claim_says_its_grouping_and_why(tiny):
    card = S.scorecard(["Tiny"], ranges={"Tiny": "source"}, executor="serial")
    note = card.set_index("claim").loc["fork's C path", "range note"]
    plan = card.attrs["ranges"]["plan"]["Tiny"]["estimate"]
    assert note.startswith(f"{card.attrs['ranges']['moves_by_chapter']['Tiny']} re-runs, "
                           "estimates moved by source: one at a time would re-run "
                           f"{plan['moves']} times")
    table = S.grouping_table(card.attrs["ranges"])
    assert table.loc["Tiny", "grouping"] == "source"
    assert table.loc["Tiny", "estimate: re-runs"] == plan["moves"]
    card = S.scorecard(["Tiny"], ranges="estimate", executor="serial")
    assert card["range note"].str.endswith("estimates moved one at a time").all()


def test_a_chapters_claims_are_the_same_with_its_runs_reused(tmp_path):
    """Mackerras 2003, two moves: the 405 build's make -j jobs (read outside any run: no run
    re-runs) and the 405's memory latency (only the runs on the 405 re-run: its two builds
    and the copies its build makes through its own __copy_tofrom_user): every claim's value
    and every estimate read are those of a whole re-run."""
    chapter, module = "Mackerras 2003", "emu.papers.mackerras2003"
    keep = tmp_path / "kept.pickle"
    nominal = R.chapter_run(chapter, module, keep=str(keep))
    assert nominal["ran"] == len(nominal["units"]) > 10
    table = R.catalog()
    for name, runs in (("kernel:build405.jobs", set()),
                       ("ppc405gp:memory.latency", {"emu.papers.mackerras2003.build_run",
                                                    "emu.kernel.copybench.measure"})):
        assert name in nominal["read"]
        reading = [unit for unit, reads, _ in nominal["units"] if name in reads]
        assert set(reading) == runs
        assert reading.count("emu.papers.mackerras2003.build_run") == (2 if runs else 0)
        change = {name: table[name].high}
        kept = R.chapter_run(chapter, module, changes=change, reuse_from=str(keep))
        whole = R.chapter_run(chapter, module, changes=change)
        assert kept["values"] == whole["values"] and kept["read"] == whole["read"]
        assert kept["values"] != nominal["values"]
        assert kept["ran"] == len(reading) and kept["reused"] > 0


def test_a_range_is_read_against_the_claims_spread():
    """A claim whose runs spread by chance (layouts, timings): a range inside the spread
    says so, one beyond it says that; a claim without a spread gets neither."""
    import pandas as pd
    rows = [{"chapter": "C", "claim": c, "status": "run", "published": 5.0,
             "spread low": lo, "spread high": hi, "spread over": over}
            for c, lo, hi, over in (("inside", 1.0, 9.0, "6 runs"),
                                    ("beyond", 2.0, 4.0, "3 layouts"),
                                    ("none", None, None, ""))]
    ranges = {("C", c): {"low": 2.5, "high": 7.5, "moves": 4, "failed": [], "most": "x:y"}
              for c in ("inside", "beyond", "none")}
    card = S.with_ranges(pd.DataFrame(rows), {"ranges": ranges, "grouping": "source",
                                              "plan": {}})
    notes = card.set_index("claim")["range note"]
    assert "lies inside the spread of 6 runs (1 to 9)" in notes["inside"]
    assert "reaches beyond the spread of 3 layouts (2 to 4)" in notes["beyond"]
    assert "spread" not in notes["none"]
    answers = card.set_index("claim")["range in spread"]
    assert (answers["inside"], answers["beyond"], answers["none"]) == (True, False, None)
    summary = S.range_summary(card)
    assert (summary["ranged"], summary["spread"], summary["range in spread"]) == (3, 2, 1)
