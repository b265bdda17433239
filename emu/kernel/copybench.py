"""Memory-copy measurements (Mackerras 2003 section 3; the file copies of Blanchard 2002's
build): one copy routine, one size and alignment, one cache state, one processor profile
-> cycles, cycles per byte, alignment exceptions, L2 store-queue stalls. And a call mix
drawn from Mackerras 2003's histograms.

    >>> from emu import copybench
    >>> r = copybench.measure("memcpy64", 64, src_align=1, profile="power4")  # doctest: +SKIP
    >>> r.cycles, r.cycles_per_byte, r.alignment_exceptions                  # doctest: +SKIP

Cache states (``cache=``):

``warm``     the same copy was just done: code, stack, source and destination are cached;
``cold``     the code and stack are cached (a copy of the same size ran on other buffers
             just before), but no line of the source or destination is in any cache;
``flushed``  every cache is empty, code included.

Everything is deterministic: the same arguments give the same cycles.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..context import routine as _routine_path
from ..hw import estimates
from ..run import reuse
from ..run.machine import Machine

PAGE = 4096
MAX_ALIGN = 128          # alignment offsets: 0 .. MAX_ALIGN - 1 bytes past a page boundary
CACHE_STATES = ("warm", "cold", "flushed")


@dataclass(frozen=True)
class Routine:
    path: str            # under routines/
    entry: str
    isas: tuple          # ISAs it runs on
    page: bool = False   # copies exactly one aligned page (r3 = to, r4 = from)
    title: str = ""
    user: bool = False   # returns the bytes not copied (0 on success), as copy_tofrom_user
    prelude: str = ""    # assembled before the file: its configuration's .equ lines


ROUTINES = {
    "memcpy32": Routine("ppc32/memcpy.S", "memcpy32", ("ppc32", "ppc64"), False,
                        "32-bit memcpy (misaligned lwz)"),
    "memcpy64": Routine("ppc64/memcpy.S", "memcpy", ("ppc64",), False,
                        "64-bit memcpy (aligned ld + shifts)"),
    "memcpy64_unaligned": Routine("ppc64/memcpy_unaligned.S", "memcpy_unaligned", ("ppc64",),
                                  False, "64-bit copy with misaligned ld"),
    "copy_page_simple": Routine("ppc64/copy_page_simple.S", "copy_page_simple", ("ppc64",),
                                True, "copy_page, 2 x ld/std per iteration"),
    "copy_page_power4": Routine("ppc64/copy_page_power4.S", "copy_page_power4", ("ppc64",),
                                True, "copy_page, six lines at once"),
    # the page-sized page-aligned copies (size 4096, both alignments 0) take its six-line
    # page loop; the others its memcpy-like loops
    "copy_tofrom_user64": Routine("ppc64/copy_tofrom_user.S", "__copy_tofrom_user",
                                  ("ppc64",), False,
                                  "64-bit copy_tofrom_user (page loop, shifts, fixups)",
                                  user=True),
    # the 32-bit kernel's (2.5.66 arch/ppc/lib/string.S, 128-byte lines): the paper's
    # baseline for copy_tofrom_user
    "copy_tofrom_user32": Routine("ppc32/copy_tofrom_user.S", "__copy_tofrom_user32",
                                  ("ppc32", "ppc64"), False,
                                  "32-bit copy_tofrom_user (line loop, dcbz, lwz/stw)",
                                  user=True),
    # the same code as the 750 and the 405GP run it: include/asm-ppc/cache.h of 2.5.66 gives
    # every 32-bit processor but 8xx, 403GCX and CONFIG_PPC64BRIDGE 32-byte lines and
    # MAX_COPY_PREFETCH 4 (dmgerman/history-token 3007e2ef10)
    "copy_tofrom_user32_l32": Routine("ppc32/copy_tofrom_user.S", "__copy_tofrom_user32",
                                      ("ppc32",), False,
                                      "32-bit copy_tofrom_user, 32-byte lines (6xx, 4xx)",
                                      user=True, prelude=(
                                          ".equ CACHELINE_BYTES, 32\n"
                                          ".equ LG_CACHELINE_BYTES, 5\n"
                                          ".equ MAX_COPY_PREFETCH, 4\n")),
}


@dataclass
class CopyResult:
    routine: str
    profile: str
    size: int
    src_align: int
    dst_align: int
    cache: str
    cycles: int
    instructions: int
    cycles_per_byte: float          # NaN for a zero-byte copy
    alignment_exceptions: int
    split_accesses: int
    store_queue_stalls: int         # stores that found their L2 slice's queue full
    store_queue_stall_cycles: int
    l1d_misses: int

    def to_dict(self):
        return asdict(self)


class CopyBench:
    """One machine with one copy routine loaded, and source/destination areas to copy in.

    Areas: two pairs of 4-page regions (the measured pair and a scratch pair for warming
    the code), filled with a fixed byte pattern; copies start ``align`` bytes past the
    first page boundary of a region, so sizes up to 8 KB fit."""

    def __init__(self, routine="memcpy64", profile="power4"):
        if routine not in ROUTINES:
            raise ValueError(f"no copy routine {routine!r}; known: {', '.join(ROUTINES)}")
        self.name, self.routine = routine, ROUTINES[routine]
        self.machine = Machine(profile)
        if self.machine.isa not in self.routine.isas:
            raise ValueError(f"{routine} is {'/'.join(self.routine.isas)} code; profile "
                             f"{self.machine.profile.name} is {self.machine.isa}")
        path = _routine_path(self.routine.path)
        self.machine.load(self.routine.prelude + path.read_text() if self.routine.prelude
                          else path)
        span = 4 * PAGE
        pattern = np.random.default_rng(2003).integers(0, 256, span, np.uint8).tobytes()
        self.src, self.dst, self.scratch_src, self.scratch_dst = (
            self.machine.alloc(span, pattern if k % 2 == 0 else None) for k in range(4))
        self.pattern = pattern

    def _check(self, size, src_align, dst_align, cache):
        for name, value in (("size", size), ("src_align", src_align),
                            ("dst_align", dst_align)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
                raise ValueError(f"{name} must be a whole number, not {value!r}")
        if cache not in CACHE_STATES:
            raise ValueError(f"cache must be one of {', '.join(CACHE_STATES)}, not {cache!r}")
        if self.routine.page:
            if size != PAGE or src_align or dst_align:
                raise ValueError(f"{self.name} copies one page-aligned 4096-byte page: size "
                                 f"must be 4096 and both alignments 0 (got {size}, "
                                 f"{src_align}, {dst_align})")
            return
        if not 0 <= size <= 2 * PAGE:
            raise ValueError(f"size must be from 0 to {2 * PAGE} bytes, not {size}")
        for name, value in (("src_align", src_align), ("dst_align", dst_align)):
            if not 0 <= value < MAX_ALIGN:
                raise ValueError(f"{name} must be from 0 to {MAX_ALIGN - 1}, not {value}")

    def _call(self, src, dst, size, cold=False):
        m = self.machine
        if self.routine.page:
            return m.call(self.routine.entry, dst, src, cold=cold)
        return m.call(self.routine.entry, dst, src, size, cold=cold)

    def run(self, size, src_align=0, dst_align=0, cache="warm"):
        """Copy ``size`` bytes from ``src_align`` to ``dst_align`` bytes past a page
        boundary, in the cache state ``cache``; returns a CopyResult."""
        self._check(size, src_align, dst_align, cache)
        m = self.machine
        src, dst = self.src + PAGE + src_align, self.dst + PAGE + dst_align
        if cache == "warm":
            self._call(src, dst, size)
        elif cache == "cold":
            m.flush_caches()
            self._call(self.scratch_src + PAGE + src_align, self.scratch_dst + PAGE + dst_align,
                       size)
        run = self._call(src, dst, size, cold=cache == "flushed")
        if m.read(dst, size) != self.pattern[PAGE + src_align:PAGE + src_align + size]:
            raise AssertionError(f"{self.name} copied wrong bytes ({size} bytes, src_align "
                                 f"{src_align}, dst_align {dst_align})")
        if self.routine.user and run.return_value != 0:
            raise AssertionError(f"{self.name} reports {run.return_value} bytes not copied "
                                 f"({size} bytes, src_align {src_align}, dst_align "
                                 f"{dst_align})")
        ev = run.events
        return CopyResult(self.name, m.profile.name, int(size), int(src_align),
                          int(dst_align), cache, run.cycles, run.instructions,
                          run.cycles / size if size else float("nan"),
                          ev["alignment_exceptions"], ev["split_accesses"],
                          ev.get("l2_store_queue_stalls", 0),
                          ev.get("l2_store_queue_stall_cycles", 0),
                          run.caches.get("L1D", {}).get("misses", 0))


_BENCHES: dict = {}


def bench(routine, profile="power4"):
    """The CopyBench for (routine, profile), built once per process and per value of the
    profile's moved estimates (emu.hw.estimates: a bench built as the profile is must not
    serve a run with its estimates moved); the estimates its building read are recorded as
    read again whenever it serves (the scorecard's ranges move only those a run read)."""
    key = (routine, profile, tuple(sorted(estimates.moved_under(f"{profile}:").items())))
    if key not in _BENCHES:
        with estimates.watch() as watch:
            built = CopyBench(routine, profile)
        _BENCHES[key] = (built, frozenset(watch.read))
    built, read = _BENCHES[key]
    for name in read:
        estimates.note(name)
    return built


@reuse.unit
def measure(routine, size, src_align=0, dst_align=0, cache="warm", profile="power4"):
    """One copy: see CopyBench.run."""
    return bench(routine, profile).run(size, src_align, dst_align, cache)


def sweep(routine, sizes, src_align=0, dst_align=0, cache="warm", profile="power4"):
    """A DataFrame with one row (a CopyResult) per size."""
    import pandas as pd
    return pd.DataFrame([measure(routine, s, src_align, dst_align, cache, profile).to_dict()
                         for s in sizes])


# ------------------------------------------------------------------ the paper's call mix

# Mackerras 2003 section 3, from histograms of a 64-bit kernel: the shares of calls below
# each size and the share not 8-byte aligned. What the histograms looked like inside each
# bucket was not published: see workload() for the assumptions.
PUBLISHED = {
    "memcpy": {"below_128": 0.98, "misaligned": 0.13},
    "copy_tofrom_user": {"below_128": 0.84, "below_512": 0.95, "misaligned": 0.43},
}
# Assumptions (ours, not the paper's): sizes uniform within a bucket; memcpy's 2% of
# calls of 128 bytes or more uniform in 128-4096; of copy_tofrom_user's 5% of 512 bytes or
# more ("most" page-sized and page-aligned), 4 points are whole aligned pages and 1 point
# uniform in 512-4095; a call is misaligned when its source or destination (or both) is not
# 8-byte aligned, the two offsets then uniform over the 63 pairs other than (0, 0); page
# copies are aligned, so the misaligned share is drawn from the other calls.
PAGE_SHARE = 0.04


def workload(kind="memcpy", calls=1000, seed=2003):
    """A deterministic list of copy calls with the published distribution of ``kind``
    ('memcpy' or 'copy_tofrom_user'): a DataFrame with columns size, src_align, dst_align,
    bucket. Each bucket gets its published share of the calls and the misaligned calls
    theirs, exactly up to one call (quotas, not chance draws: a draw of 400 calls would
    miss a 43% share by several points); sizes inside a bucket, the order of the calls and
    which of them are misaligned are drawn from ``seed``."""
    import pandas as pd
    if kind not in PUBLISHED:
        raise ValueError(f"kind must be one of {', '.join(PUBLISHED)}, not {kind!r}")
    if not isinstance(calls, int) or calls < 1:
        raise ValueError(f"calls must be a positive whole number, not {calls!r}")
    rng = np.random.default_rng(seed)
    p = PUBLISHED[kind]
    if kind == "memcpy":
        buckets = [("1-127", p["below_128"], 1, 127),
                   ("128-4096", 1 - p["below_128"], 128, 4096)]
    else:
        rest = 1 - p["below_512"]
        buckets = [("1-127", p["below_128"], 1, 127),
                   ("128-511", p["below_512"] - p["below_128"], 128, 511),
                   ("512-4095", rest - PAGE_SHARE, 512, 4095),
                   ("page", PAGE_SHARE, PAGE, PAGE)]
    counts = _quotas([b[1] for b in buckets], calls)
    which = rng.permutation(np.repeat(np.arange(len(buckets)), counts))
    sizes = np.array([rng.integers(buckets[k][2], buckets[k][3] + 1) for k in which])
    page = np.array([buckets[k][0] == "page" for k in which])
    # the misaligned calls: their share of all calls, among those that are not page copies
    candidates = np.flatnonzero(~page)
    count = min(round(p["misaligned"] * calls), len(candidates))
    misaligned = np.zeros(calls, dtype=bool)
    misaligned[rng.choice(candidates, size=count, replace=False)] = True
    pairs = rng.integers(1, 64, calls)                  # 1..63: (src, dst) = divmod by 8
    src_align = np.where(misaligned, pairs // 8, 0)
    dst_align = np.where(misaligned, pairs % 8, 0)
    return pd.DataFrame({"size": sizes, "src_align": src_align, "dst_align": dst_align,
                         "bucket": [buckets[k][0] for k in which]})


def _quotas(shares, total):
    """Whole numbers in proportion to ``shares`` summing to ``total`` (largest remainder)."""
    exact = np.array(shares, dtype=float) / sum(shares) * total
    counts = np.floor(exact).astype(int)
    for k in np.argsort(-(exact - counts), kind="stable")[:total - counts.sum()]:
        counts[k] += 1
    return counts


def run_workload(routine, calls, cache="warm", profile="power4", page_routine=None):
    """Run every call of a workload() DataFrame; returns one CopyResult row per call.
    Page-sized page-aligned calls go to ``page_routine`` when given (as the optimized
    copy_tofrom_user hands them to a copy_page-like loop)."""
    import pandas as pd
    rows = []
    for size, sa, da in zip(calls["size"], calls["src_align"], calls["dst_align"]):
        name = page_routine if (page_routine and size == PAGE and sa == da == 0) else routine
        rows.append(measure(name, int(size), int(sa), int(da), cache, profile).to_dict())
    return pd.DataFrame(rows)
