"""Raw Unicorn, Unicorn with do-nothing native hooks, and the instrumented model (L1 + L2 +
cost model on), per ISA, in two buffer layouts (see emu.bench.LAYOUTS).

Run: python benchmarks/bench_copy.py   (or: python -m emu bench [--isa ISA] [--layout L])
Prints guest memory accesses per second for a word-copy loop over 1 MB buffers, three ways,
and the ratios to raw. The target (issue 2): instrumented >= 40% of raw and >= 10 M
accesses/s; README "Speed" says where it stands.
"""
from emu.bench import report

if __name__ == "__main__":
    print(report())
