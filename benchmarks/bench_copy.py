"""Raw Unicorn against the instrumented model (L1 + L2 + cost model on), per ISA.

Run: python benchmarks/bench_copy.py   (or: python -m emu bench)
Prints guest memory accesses per second for a word-copy loop over 1 MB buffers, both ways,
and their ratio. The target (issue 2): instrumented >= 40% of raw and >= 10 M accesses/s.
"""
from emu.bench import report

if __name__ == "__main__":
    print(report())
