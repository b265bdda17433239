"""Issue 16: random and mutated inputs on every ISA, in a child process (tests/run/fuzz_child.py).

Bounded (a fixed number of cases and a time limit), seeded and deterministic. What is
asserted: the child is not killed by a signal and ends within its bound; every error is one
of the library's classes (AssemblyError, ExceptionTableError, GuestError and its subclasses,
MemoryError for a program larger than the code region) and names a line or a PC; the same
seed gives the same outcomes, results and cycles in another process.
"""
import json
import subprocess
import sys
from pathlib import Path

CHILD = Path(__file__).with_name("fuzz_child.py")
SEED, CASES, BOUND_S = 16, 400, 240


def run_child():
    proc = subprocess.run([sys.executable, str(CHILD), str(SEED), str(CASES)],
                          capture_output=True, text=True, timeout=BOUND_S)
    assert proc.returncode == 0, f"the child ended with {proc.returncode}: {proc.stderr[-2000:]}"
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_random_and_mutated_inputs_crash_nothing_and_name_their_place():
    first = run_child()
    assert len(first) == CASES
    unexpected = [r for r in first if r["outcome"] == "unexpected"]
    assert unexpected == []
    unnamed = [r for r in first if r["outcome"] == "error" and not r["named"]]
    assert unnamed == []
    kinds = {(r["isa"], r["kind"]) for r in first}
    assert {isa for isa, _ in kinds} == {"ppc32", "ppc64", "arm", "x86"}
    assert {kind for _, kind in kinds} == {"mutant", "bytes", "bytes2"}
    # every outcome is reached: runs that return, assembly errors, guest faults, limits
    assert {r.get("error") for r in first} >= {None, "AssemblyError", "GuestFault",
                                              "InstructionLimitExceeded"}
    # the same in another process (no host value reaches a run)
    second = run_child()
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa
    assert strip(second) == strip(first)
