"""The command line: python -m emu run ... / bench."""
import json
import subprocess
import sys

import pytest

from emu.__main__ import main

FLUSH = "routines/ppc32/flush_dcache_icache.S"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "emu", *args], capture_output=True, text=True,
                          timeout=300)


def test_run_json_reports_the_flush_of_a_clean_page():
    done = run_cli("run", FLUSH, "--isa", "ppc32", "--cpu", "ppc750",
                   "--entry", "flush_dcache_icache", "--alloc", "4096", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) >= {"instructions", "cycles", "return", "caches", "events"}
    # 4 set-up instructions, 128 x (dcbst, addi, bdnz), sync, mtctr,
    # 128 x (icbi, addi, bdnz), sync, isync, blr = 4 + 384 + 2 + 384 + 3
    assert out["instructions"] == 777
    assert out["return"] == 0x100000 + 4096   # r3 walked past the first alloc page
    assert set(out["caches"]) == {"L1I", "L1D", "L2"}
    # a zeroed page was never written through the D-cache: nothing to write back
    assert out["caches"]["L1D"] == {"accesses": 0, "hits": 0, "misses": 0, "writebacks": 0,
                                    "invalidations": 0, "evictions": 0}
    assert out["events"]["stale_ifetch"] == 0


def test_args_are_passed_in_order_and_cache_override_applies(tmp_path):
    src = tmp_path / "sum.S"
    src.write_text(".globl f\nf: add r3, r3, r4\n lwz r5, 0(r5)\n add r3, r3, r5\n blr\n")
    data = tmp_path / "word.bin"
    data.write_bytes((1000).to_bytes(4, "big"))
    done = run_cli("run", str(src), "--isa", "ppc32", "--cpu", "ppc750", "--entry", "f",
                   "--arg", "0x10", "--arg", "5", "--load", str(data),
                   "--cache", "L1D:1024:2:32:fifo", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["return"] == 16 + 5 + 1000
    assert out["caches"]["L1D"]["accesses"] == 1


def test_readable_table_without_json():
    done = run_cli("run", FLUSH, "--isa", "ppc32", "--cpu", "ppc750",
                   "--entry", "flush_dcache_icache", "--alloc", "4096")
    assert done.returncode == 0
    assert "instructions" in done.stdout and "L1D" in done.stdout


@pytest.mark.parametrize("argv, words", [
    (["run", "missing.S", "--isa", "ppc32", "--cpu", "ppc750", "--entry", "f"], "cannot read"),
    (["run", FLUSH, "--isa", "ppc32", "--cpu", "nosuchcpu", "--entry", "f"], "no processor profile"),
    (["run", FLUSH, "--isa", "arm", "--cpu", "ppc750", "--entry", "f"], "not arm"),
    (["run", FLUSH, "--isa", "ppc32", "--cpu", "ppc750", "--entry", "nosuch"], "no symbol"),
    (["run", FLUSH, "--isa", "ppc32", "--cpu", "ppc750", "--entry", "flush_dcache_icache",
      "--cache", "L1D:1000:3:32"], "not a multiple"),
    (["run", FLUSH, "--isa", "ppc32", "--cpu", "ppc750", "--entry", "flush_dcache_icache",
      "--arg", "0x7000000"], "unmapped"),
])
def test_bad_input_exits_nonzero_with_one_line(argv, words, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("error: ") and words in err


def test_bad_assembly_names_the_line(tmp_path, capsys):
    src = tmp_path / "bad.S"
    src.write_text("f:\n  li r3, 1\n  lwz r3, 0(r4\n  blr\n")
    assert main(["run", str(src), "--isa", "ppc32", "--cpu", "ppc750", "--entry", "f"]) == 1
    err = capsys.readouterr().err
    assert "bad.S:3:" in err and "lwz r3, 0(r4" in err


# ------------------------------------------------------------------ --profile and kperfdiff

FLUSH_RUN = ["run", FLUSH, "--isa", "ppc32", "--cpu", "ppc750", "--entry", "flush_dcache_icache",
             "--alloc", "4096"]


def test_profile_prints_the_readprofile_table_after_the_run_table(capsys):
    assert main(FLUSH_RUN + ["--profile", "7"]) == 0
    out = capsys.readouterr().out
    run_table, profile = out.split("\n\n")
    # a clean page's flush on the 750's 60x bus, 2341 (tests/papers/test_mackerras2003.py),
    # + the cold code: a memory fill 78 and an L2 hit 13, less the 2 cycles the first sync
    # waited for the address bus, which the fetch's stall covers (1771 before the bus; 2340
    # + 91 - 1 when the sync waited from its block's end: the same 2430)
    assert "cycles              2,430" in run_table
    # 2430 // 7 = 347 samples, all in the routine (60 bytes: load 347 / 60)
    assert profile.splitlines()[1:] == [f"{347:6d} {'flush_dcache_icache':<40s} {347 / 60:8.4f}",
                                        f"{347:6d} {'total':<40s} {347 / 60:8.4f}"]


def test_profile_json_adds_the_samples_per_symbol(capsys):
    assert main(FLUSH_RUN + ["--profile", "100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["profile"] == "ppc750"              # still the processor profile
    assert out["cycles"] == 2430
    assert out["sampling"] == {"every": 100, "samples": 24, "symbols": [
        {"symbol": "flush_dcache_icache", "samples": 24, "cycles": 2430, "instructions": 777}]}


def test_saved_profiles_feed_kperfdiff(tmp_path, capsys):
    saved = tmp_path / "flush.prof"
    assert main(FLUSH_RUN + ["--profile", "7", "--profile-out", str(saved)]) == 0
    other = tmp_path / "other.prof"
    # flush_dcache_icache 253 of 506 samples = 50%, helper the other 50%
    other.write_text("   253 flush_dcache_icache\n   253 helper\n")
    capsys.readouterr()
    done = run_cli("kperfdiff", str(saved), str(other))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:4] == [
        ">> Top 1 candidates among common symbols", "%diff | symbol | flush | other", "-----",
        "50.00 | flush_dcache_icache | 100.00 | 50.00"]
    assert "50.00 | helper" in done.stdout and "among symbols only in flush" in done.stdout


@pytest.mark.parametrize("argv, words", [
    (FLUSH_RUN + ["--profile", "0"], "positive number of cycles"),
    (FLUSH_RUN + ["--profile", "often"], "not an integer"),
    (FLUSH_RUN + ["--profile-out", "x.prof"], "needs --profile"),
    (FLUSH_RUN + ["--profile", "7", "--profile-out", "/nonexistent/dir/x.prof"],
     "--profile-out /nonexistent/dir/x.prof"),
])
def test_bad_profile_options_exit_with_one_line(argv, words, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("error: ") and words in err


@pytest.mark.parametrize("content, words", [
    (None, "cannot read the profile"),
    ("   12 foo\n  lots bar\n", "bad.prof:2: expected 'samples symbol [load]'"),
    ("     0 total\n", "holds no samples"),
])
def test_kperfdiff_refuses_a_bad_file_with_one_line(tmp_path, content, words, capsys):
    good, bad = tmp_path / "good.prof", tmp_path / "bad.prof"
    good.write_text("   10 foo\n")
    if content is not None:
        bad.write_text(content)
    assert main(["kperfdiff", str(good), str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("error: ") and words in err


def test_run_with_the_mmu_reports_tlbs_and_walks():
    done = run_cli("run", FLUSH, "--isa", "ppc32", "--cpu", "ppc750",
                   "--entry", "flush_dcache_icache", "--alloc", "4096", "--mmu", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # one ITLB miss for the code page, one DTLB miss for the flushed page: two walks
    assert out["tlbs"]["ITLB"]["misses"] == 1 and out["tlbs"]["DTLB"]["misses"] == 1
    assert out["events"]["hash_walks"] == 2 and out["events"]["page_faults"] == 0


def test_mmu_on_a_profile_without_a_walker_is_one_line():
    done = run_cli("run", FLUSH, "--isa", "x86", "--cpu", "pentium4", "--entry", "x", "--mmu")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "hardware-walk" in done.stderr
