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
