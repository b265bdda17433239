"""Each claim's range under the model's estimates, for the scorecard.

Every number the model takes without a primary source is an estimate with a plausible low
and high and the reason for them, where the number lives (``emu.hw.estimates`` names them
all: a profile's ``unverified`` values and their ``ranges``, the kernel's cost table, the
workloads' images, Yoshioka 2005's pace of writes and disk requests (``ext3model.STAGGER``,
``ext3model.REQUEST_PAGES``...), Mackerras 2003's compile steps per 405 build,
``mackerras2003.BUILD405``). A claim's **range** is the span of its emulated value when each estimate its run reads moves to its
low and to its high, one at a time, everything else as it is; the estimate that **moves it
most** is the one whose low and high put the claim furthest apart.

How it is computed (``compute``):

1. Each chapter's ``claims()`` is one run that serves all the chapter's claims. It runs
   once as it is, watched (``emu.hw.estimates.watch``): what it returns is the scorecard,
   and the estimates it read are those its claims can depend on (a profile's when the
   profile is loaded, an instruction's cost when a program holding the instruction is
   loaded, a kernel cost when it is charged, an image's pages when it is mapped).
2. Each of those estimates moves to its low and then its high (``moves``): one re-run of
   the chapter's claims each, all of them through ``emu.run.sweep`` (the process pool, one
   worker per core). A move equal to the estimate's value is no re-run.
3. Each claim's range is the lowest and highest of its values over the moves and its
   value as it is.

``grouping`` moves estimates together instead, each at its low and then all at their highs,
when one at a time costs more than the build can afford: ``"table"`` (a profile's
``[costs.mnemonics]``, its ``[memory]`` ...), ``"kind"`` (a profile's cycle estimates, its
other estimates), ``"source"`` (a profile's estimates; the kernel's generic paths and the
images' pages; the build's); ``Estimate.group``. The scorecard says which it used.

The results are kept on disk under a hash of the sources they depend on (``emu/``, its C
model and profiles, ``routines/``, ``data/``: the execution cache's, _ext/execution_cache.py),
in the book's ``_build/.ranges_cache`` (``EMU_RANGES_CACHE`` to put them elsewhere): the
same sources give the same ranges without a run.
"""
from __future__ import annotations

import importlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..context import ROOT
from ..hw import estimates
from ..hw import profile as profiles
from ..hw.model import build
from ..kernel import costs, workloads
from ..papers import blanchard2002, mackerras2003
from ..papers.yoshioka2005 import ext3model
from ..run import sweep

GROUPINGS = ("estimate", "table", "kind", "source")
#: the estimates a chapter's own model makes (its workload's sizes and pace), beside the
#: profiles' and the kernel's
CHAPTER_ESTIMATES = (blanchard2002.build_ranges, ext3model.estimate_ranges,
                     mackerras2003.estimate_ranges)
#: a profile's keys that are cycles (with its [costs] tables): moved together by "kind"
CYCLE_KEYS = {"hit_latency", "latency", "split_cycles", "exception_cycles", "service",
              "cache_sync", "line_op", "on_module", "off_module", "walk_cycles",
              "erat_miss_cycles", "micro_miss_cycles"}
#: the kernel model's work in Python beside its guest code: its generic paths' costs and
#: the workloads' images; moved together under "source"
KERNEL_WORK = ("kernel:costs", "kernel:image")
#: the files the ranges depend on, as the execution cache hashes them
SOURCES = ("emu/**/*.py", "emu/hw/model/*.c", "emu/hw/model/*.h", "emu/hw/profiles/*.toml",
           "routines/**/*.S", "data/*.csv")
CACHE_VERSION = 1


@dataclass(frozen=True)
class Estimate:
    name: str           # "ppc750:memory.latency", "kernel:costs.fork", "kernel:image.cc1"
    value: object       # as the model takes it
    low: object
    high: object
    why: str

    def group(self, grouping="estimate"):
        """What it moves with: itself (``"estimate"``); its table (``"table"``: a profile's
        ``[costs.mnemonics]``, ``[memory]`` ...); its kind (``"kind"``: a profile's cycle
        estimates, latencies and costs, together, its other estimates, sizes, policies and
        the clock, together); or its source (``"source"``: all of a profile's together, and
        the kernel model's generic paths, their costs and CPI, with the images' pages, the
        work the kernel does in Python beside its guest code). The kernel's instruction
        counts move together but for CPI, alone under "estimate", "table" and "kind"; the
        images' pages together; the build's (make -j's) estimates together."""
        if grouping == "estimate":
            return self.name
        if grouping == "source" and self.name.startswith(KERNEL_WORK):
            return "kernel:work"
        if self.name == "kernel:costs.CPI":
            return self.name
        for prefix in KERNEL_WORK + ("kernel:build",):
            if self.name.startswith(prefix + "."):
                return prefix
        source, _, rest = self.name.partition(":")
        if grouping == "source":
            return source
        path, _, key = rest.rpartition(".")
        if grouping == "table":
            return f"{source}:{path or 'profile'}"
        cycles = path == "costs" or path.startswith("costs.") or key in CYCLE_KEYS
        return f"{source}:{'cycles' if cycles else 'other'}"


def catalog():
    """Every estimate of the model: {name: Estimate}. One without a range (a profile's
    estimate whose table gives none) is refused: every estimate must say how far it may
    be off."""
    rows = []
    for name in profiles.names():
        rows += estimates.profile_estimates(profiles.load(name).raw)
    rows += costs.ranges() + workloads.image_ranges()
    for chapter_estimates in CHAPTER_ESTIMATES:
        rows += chapter_estimates()
    out = {}
    for name, value, low, high, why in rows:
        if low is None or high is None or not why:
            raise ValueError(f"estimate {name} = {value!r} has no range: give its low, "
                             f"high and why in its table's ranges")
        out[name] = Estimate(name, value, low, high, why)
    return out


def moves(read, grouping="estimate", table=None):
    """The re-runs for a run that read the estimates ``read``: [(label, {name: value})],
    each estimate (or table of them, ``grouping="table"``) at its low, then at its high;
    none equal to the values as they are. Estimates of no catalog are left out."""
    if grouping not in GROUPINGS:
        raise ValueError(f"grouping must be one of {GROUPINGS}, not {grouping!r}")
    table = catalog() if table is None else table
    known = [table[name] for name in sorted(read) if name in table]
    groups = {}
    for e in known:
        groups.setdefault(e.group(grouping), []).append(e)
    out = []
    for label, members in groups.items():
        for side in ("low", "high"):
            change = {e.name: getattr(e, side) for e in members
                      if getattr(e, side) != e.value}
            if change:
                out.append((f"{label} {side}", change))
    return out


# ---------------------------------------------------------------------------- the runs

def chapter_run(chapter, module, changes=None, rows=False):
    """One run of a chapter's claims with ``changes`` moved (a sweep's run; in a worker):
    {"values": {claim: emulated}, "read": [names]} (and the scorecard's rows with
    ``rows``), or {"error": text} when the model refuses the moved value."""
    start = time.process_time()
    try:
        with estimates.moved(changes or {}) as watch:
            claims = importlib.import_module(module).claims()
    except Exception as error:          # noqa: BLE001: a move the model cannot take
        return {"error": f"{type(error).__name__}: {error}"}
    names = [c.claim for c in claims]
    if len(set(names)) != len(names):      # a claim's range is found by its words
        repeated = sorted({n for n in names if names.count(n) > 1})
        return {"error": f"{chapter}: claims named twice: {repeated}"}
    out = {"values": {c.claim: c.emulated for c in claims if c.emulated is not None},
           "read": sorted(watch.read), "cpu_s": time.process_time() - start}
    if rows:
        out["rows"] = [c.row() for c in claims]
    return out


def sources_hash(root=ROOT):
    """A hash of the names and bytes of every file the claims depend on."""
    return build.files_digest(root, SOURCES)


def cache_folder():
    given = os.environ.get("EMU_RANGES_CACHE")
    if given:
        return Path(given)
    if (ROOT / "_config.yml").is_file():           # a clone of the book
        return ROOT / "_build" / ".ranges_cache"
    return Path.home() / ".cache" / "emu" / "ranges"


def _cache_path(chapters, grouping, key):
    name = "-".join(c.split()[0].lower() for c in chapters)
    return cache_folder() / f"{key}-{grouping}-{name}.json"


def compute(chapters, grouping="estimate", executor=None, cache=True, timing=None):
    """The claims of ``chapters`` ({chapter: the module whose claims() lists them}, as
    emu.book.scorecard.CHAPTERS) with their ranges: a dict {"rows": [row], "ranges":
    {(chapter, claim): range}, "runs": n, ...}, as ``ranges_of`` gives each range.
    ``cache``: read and write the results under the sources' hash. ``timing``: a dict
    that gets the phases' wall seconds and the re-runs' count."""
    modules = dict(chapters)
    chapters = list(modules)
    if not chapters:
        raise ValueError("compute: give at least one chapter")
    if grouping not in GROUPINGS:
        raise ValueError(f"grouping must be one of {GROUPINGS}, not {grouping!r}")
    timing = {} if timing is None else timing
    start = time.perf_counter()
    path = _cache_path(chapters, grouping, sources_hash()) if cache else None
    if path is not None and path.is_file():
        try:
            result = _decode(json.loads(path.read_text()))
            timing.update(cached=True, seconds=time.perf_counter() - start,
                          runs=result["runs"])
            return result
        except (ValueError, KeyError):
            pass                                   # a damaged file: computed again
    table = catalog()
    nominal = sweep.run(chapter_run, [{"chapter": c, "module": modules[c], "rows": True}
                                      for c in chapters],
                        executor=executor, description="scorecard")
    for chapter, run in zip(chapters, nominal):
        if "error" in run:
            raise RuntimeError(f"{chapter}'s claims failed: {run['error']}")
    timing["nominal_s"] = time.perf_counter() - start
    points, labels = [], []
    for chapter, run in zip(chapters, nominal):
        for label, change in moves(run["read"], grouping, table):
            points.append({"chapter": chapter, "module": modules[chapter],
                           "changes": change})
            labels.append(label)
    # the longest chapters first (by their claims' CPU time as they are), so that the
    # pool's cores end together
    weight = {c: r["cpu_s"] for c, r in zip(chapters, nominal)}
    order = sorted(range(len(points)), key=lambda i: -weight[points[i]["chapter"]])
    moved_runs = sweep.run(chapter_run, [points[i] for i in order], executor=executor,
                           description="ranges")
    results = [None] * len(points)
    for i, run in zip(order, moved_runs):
        results[i] = run
    timing["moves_s"] = time.perf_counter() - start - timing["nominal_s"]
    timing["nominal_cpu_s"] = {c: r["cpu_s"] for c, r in zip(chapters, nominal)}
    timing["moves_cpu_s"] = sum(r.get("cpu_s", 0) for r in results)
    out = {"rows": [row for run in nominal for row in run["rows"]],
           "read": {c: run["read"] for c, run in zip(chapters, nominal)},
           "ranges": {}, "runs": len(points), "grouping": grouping,
           "estimates": {name: [_plain(e.value), _plain(e.low), _plain(e.high), e.why]
                         for name, e in table.items()}}
    for chapter, run in zip(chapters, nominal):
        mine = [(labels[i], points[i]["changes"], results[i]) for i in range(len(points))
                if points[i]["chapter"] == chapter]
        for claim, value in run["values"].items():
            out["ranges"][(chapter, claim)] = ranges_of(claim, value, mine)
    timing.update(cached=False, seconds=time.perf_counter() - start, runs=len(points))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(f"*-{grouping}-{path.name.split('-', 2)[2]}"):
            old.unlink(missing_ok=True)            # the same chapters, older sources
        path.write_text(json.dumps(_encode(out)))
    return out


def ranges_of(claim, nominal, runs):
    """A claim's range from its value as it is and the moved runs [(label, changes,
    result)]: {"low", "high", "most" (the estimate, or table, that moves it most: its low
    and high furthest apart), "most_span", "moves" (re-runs that gave it), "failed"
    (labels of moves the model refused)}."""
    values = [nominal]
    by_estimate = {}
    failed = []
    for label, _, result in runs:
        name, _, side = label.rpartition(" ")
        if "error" in result:
            failed.append(label)
            continue
        value = result["values"].get(claim)
        if value is None or not math.isfinite(value):
            failed.append(label)
            continue
        values.append(value)
        by_estimate.setdefault(name, {})[side] = value
    most, span = None, 0.0
    for name, sides in by_estimate.items():
        width = abs(sides.get("high", nominal) - sides.get("low", nominal))
        if width > span:
            most, span = name, width
    return {"low": min(values), "high": max(values), "most": most, "most_span": span,
            "moves": len(values) - 1, "failed": failed}


def _plain(value):
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def _encode(out):
    return {**out, "version": CACHE_VERSION,
            "ranges": [[c, claim, r] for (c, claim), r in out["ranges"].items()]}


def _decode(raw):
    if raw.get("version") != CACHE_VERSION:
        raise ValueError("another version")
    return {**raw, "ranges": {(c, claim): r for c, claim, r in raw["ranges"]}}
