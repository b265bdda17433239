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

1. Each chapter's ``claims()`` runs once as it is, watched (``emu.hw.estimates.watch``):
   what it returns is the scorecard, and the estimates it read are those its claims can
   depend on (a profile's when the profile is loaded, an instruction's cost when a program
   holding the instruction is loaded, a kernel cost when it is charged, an image's pages
   when it is mapped). Its **units** (``emu.run.reuse``: the chapter's independent runs, a
   ``@reuse.unit`` function or a sweep's point) are kept with the estimates each read.
2. Each of those estimates moves to its low and then its high (``moves``): one re-run of
   the chapter's claims each, all of them through ``emu.run.sweep`` (the process pool, one
   worker per core). A re-run runs only the units that read a moved estimate; the others'
   results are taken from step 1 (the same numbers: tests/book/test_ranges.py). A move
   equal to the estimate's value is no re-run. A unit does not re-run for an estimate it
   read only in its set-up (``emu.hw.estimates.setup_only``: the kernel's fixed costs of a
   single-CPU workload's boot, start and warm-up, which reach the ledger alone, never the
   machine, and which its measured part does not read): the move still runs, and reuses it.
   A unit run only with the estimates as they are (``emu.run.reuse.nominal_only``: Yun
   2011's runs nudged in time, which give its claims' spreads alone) is in no move's plan.
3. Each claim's range is the lowest and highest of its values over the moves and its
   value as it is.

``grouping`` moves estimates together instead, each at its low and then all at their highs,
when one at a time costs more than the build can afford: ``"table"`` (a profile's
``[costs.mnemonics]``, its ``[memory]`` ...), ``"kind"`` (a profile's cycle estimates, its
other estimates), ``"source"`` (a profile's estimates; the kernel's generic paths and the
images' pages; the build's); ``Estimate.group``. ``"split"`` moves by source first, then
one at a time the estimates of each claim's top source (the source that moved it most), so
that "moved most by" names an estimate. A grouping may be given per chapter;
``plan`` says what each would cost from the units step 1 kept (the CPU of the units each
move re-runs). The scorecard says which each claim got.

The results are kept on disk under a hash of the sources they depend on (``emu/``, its C
model and profiles, ``routines/``, ``data/``: the execution cache's, _ext/execution_cache.py),
in the book's ``_build/.ranges_cache`` (``EMU_RANGES_CACHE`` to put them elsewhere): the
same sources give the same ranges without a run.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import math
import os
import pickle
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..context import ROOT
from ..hw import estimates
from ..hw import profile as profiles
from ..hw.model import build
from ..kernel import costs, entry, filemap, files_cache, kdata, workloads
from ..papers import blanchard2002, mackerras2003
from ..papers.yoshioka2005 import ext3model
from ..run import reuse, sweep

GROUPINGS = ("estimate", "table", "kind", "source", "split")
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
CACHE_VERSION = 2


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
    rows += (costs.ranges() + workloads.image_ranges() + entry.stack_ranges()
             + files_cache.estimate_ranges() + kdata.estimate_ranges()
             + filemap.estimate_ranges())
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
    grouping = "source" if grouping == "split" else grouping    # its first stage
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

def chapter_run(chapter, module, changes=None, rows=False, keep=None, reuse_from=None):
    """One run of a chapter's claims with ``changes`` moved (a sweep's run; in a worker):
    {"values": {claim: emulated}, "read": [names], "cpu_s", "reused", "ran"} (and the
    scorecard's rows with ``rows``), or {"error": text} when the model refuses the moved
    value. The chapter's units (emu.run.reuse) are kept in a memo: ``keep``, a file to
    write it to (the run as it is: its "units" too, [(name, estimates read, own CPU s)]);
    ``reuse_from``, a file a run as it is wrote, whose units this run reuses where the
    move leaves what they read as it was (none if the file is missing: run in full)."""
    start = time.process_time()
    memo = reuse.Memo(base=_kept(reuse_from))
    try:
        with reuse.recording(memo), estimates.moved(changes or {}) as watch:
            claims = importlib.import_module(module).claims()
    except Exception as error:          # noqa: BLE001: a move the model cannot take
        return {"error": f"{type(error).__name__}: {error}"}
    names = [c.claim for c in claims]
    if len(set(names)) != len(names):      # a claim's range is found by its words
        repeated = sorted({n for n in names if names.count(n) > 1})
        return {"error": f"{chapter}: claims named twice: {repeated}"}
    out = {"values": {c.claim: c.emulated for c in claims if c.emulated is not None},
           # its CPU here, and that of the units another process ran for it (the book's
           # build shares runs between notebooks: emu.run.reuse)
           "read": sorted(watch.read),
           "cpu_s": time.process_time() - start + memo.shared_cpu_s,
           "reused": memo.hits, "ran": memo.runs, "units_cpu_s": memo.cpu_s,
           "shared": memo.shared}
    if rows:
        out["rows"] = [c.row() for c in claims]
    if keep is not None:
        out["units"], out["nominal_cpu_s"] = memo.units(), memo.nominal_cpu_s()
        Path(keep).parent.mkdir(parents=True, exist_ok=True)
        with open(keep, "wb") as f:
            pickle.dump(memo.entries, f, protocol=4)
    return out


#: the memos this worker has read: {path: Memo}
_KEPT = {}


def _kept(path):
    """The memo a run as it is kept in ``path`` (read once per worker), or None."""
    if path is None:
        return None
    if path not in _KEPT:
        try:
            with open(path, "rb") as f:
                entries = pickle.load(f)
        except OSError:
            return None                       # another machine's worker: no reuse
        memo = reuse.Memo()
        memo.entries = entries
        _KEPT.clear()                         # one chapter's at a time is enough
        _KEPT[path] = memo
    return _KEPT[path]


def plan(units, claims_cpu_s, read, grouping="estimate", table=None, nominal_cpu_s=0.0):
    """What the moves of ``grouping`` would cost a chapter whose run as it is made
    ``units`` ([(name, estimates read, own CPU s)]) in ``claims_cpu_s`` CPU seconds and
    read ``read``: {"moves": n, "cpu_s": the CPU of the units each move re-runs, plus the
    claims' own work outside any unit, summed; "full_cpu_s": the same moves each re-running
    the whole claims, less ``nominal_cpu_s``, its units run only as it is, which a moved
    run skips}. A unit re-runs when a moved estimate is one it read."""
    table = catalog() if table is None else table
    outside = max(claims_cpu_s - sum(cpu for _, _, cpu in units), 0.0)
    reads = [(set(r), cpu) for _, r, cpu in units]
    cpu = 0.0
    chosen = moves(read, grouping, table)
    for _, change in chosen:
        cpu += outside + sum(c for r, c in reads if not r.isdisjoint(change))
    return {"moves": len(chosen), "cpu_s": cpu,
            "full_cpu_s": len(chosen) * (claims_cpu_s - nominal_cpu_s)}


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
    return cache_folder() / f"{key}-{_grouping_label(grouping)}-{name}.json"


def _grouping_label(grouping):
    """A file name's word for a grouping: its name, or for one per chapter a digest."""
    if isinstance(grouping, str):
        return grouping
    text = json.dumps(sorted(grouping.items()))
    return "mixed" + hashlib.sha256(text.encode()).hexdigest()[:8]


def groupings_of(chapters, grouping):
    """{chapter: grouping}: ``grouping`` one of GROUPINGS for every chapter, or a dict
    naming one for each chapter."""
    per = {c: grouping for c in chapters} if isinstance(grouping, str) else dict(grouping)
    for c in chapters:
        if per.get(c) not in GROUPINGS:
            raise ValueError(f"grouping for {c!r} must be one of {GROUPINGS}, not "
                             f"{per.get(c)!r}")
    return per


def compute(chapters, grouping="estimate", executor=None, cache=True, timing=None,
            reuse_runs=True, table=None):
    """The claims of ``chapters`` ({chapter: the module whose claims() lists them}, as
    emu.book.scorecard.CHAPTERS) with their ranges: a dict {"rows": [row], "ranges":
    {(chapter, claim): range}, "runs": n, "grouping": {chapter: grouping}, "plan":
    {chapter: {grouping: plan()}} ...}, as ``ranges_of`` gives each range. ``grouping``:
    one of GROUPINGS, or {chapter: one of them}. ``reuse_runs``: a move re-runs only the
    chapter's units (emu.run.reuse) that read a moved estimate, the others kept from the
    run as it is (False: each move re-runs the whole claims; the values are the same).
    ``cache``: read and write the results under the sources' hash. ``timing``: a dict
    that gets the phases' wall seconds and the re-runs' count. ``table``: the estimates
    (catalog()'s by default)."""
    modules = dict(chapters)
    chapters = list(modules)
    if not chapters:
        raise ValueError("compute: give at least one chapter")
    per_chapter = groupings_of(chapters, grouping)
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
    table = catalog() if table is None else table
    workers_before = sweep.workers_cpu_s()
    with tempfile.TemporaryDirectory(prefix="emu-ranges-") as folder:
        kept = {c: (str(Path(folder) / f"{i}.pickle") if reuse_runs else None)
                for i, c in enumerate(chapters)}
        nominal = sweep.run(chapter_run, [{"chapter": c, "module": modules[c], "rows": True,
                                           "keep": kept[c]} for c in chapters],
                            executor=executor, description="scorecard")
        for chapter, run in zip(chapters, nominal):
            if "error" in run:
                raise RuntimeError(f"{chapter}'s claims failed: {run['error']}")
        timing["nominal_s"] = time.perf_counter() - start
        weight = {c: r["cpu_s"] for c, r in zip(chapters, nominal)}
        points, labels = [], []
        for chapter, run in zip(chapters, nominal):
            first = "source" if per_chapter[chapter] == "split" else per_chapter[chapter]
            for label, change in moves(run["read"], first, table):
                points.append({"chapter": chapter, "module": modules[chapter],
                               "changes": change, "reuse_from": kept[chapter]})
                labels.append(label)
        results = _run_moves(points, weight, executor)
        # "split": the estimates of each claim's top source, one at a time
        split = {}
        for chapter, run in zip(chapters, nominal):
            if per_chapter[chapter] != "split":
                continue
            mine = [(labels[i], points[i]["changes"], results[i]) for i in range(len(points))
                    if points[i]["chapter"] == chapter]
            tops = {ranges_of(claim, value, mine)["most"]
                    for claim, value in run["values"].items()} - {None}
            split[chapter] = sorted(tops)
            inside = [n for n in run["read"] if n in table and
                      table[n].group("source") in tops]
            for label, change in moves(inside, "estimate", table):
                points.append({"chapter": chapter, "module": modules[chapter],
                               "changes": change, "reuse_from": kept[chapter]})
                labels.append(label)
        results += _run_moves(points[len(results):], weight, executor)
    timing["moves_s"] = time.perf_counter() - start - timing["nominal_s"]
    timing["nominal_cpu_s"] = {c: r["cpu_s"] for c, r in zip(chapters, nominal)}
    timing["moves_cpu_s"] = sum(r.get("cpu_s", 0) for r in results)
    # the sweeps' workers' CPU as emu.run.sweep counts it (each point's, its unpickling
    # included); the figures above are the chapter runs' own
    timing["workers_cpu_s"] = sweep.workers_cpu_s() - workers_before
    timing["units_run"] = sum(r.get("ran", 0) for r in results)
    timing["units_reused"] = sum(r.get("reused", 0) for r in results)
    out = {"rows": [row for run in nominal for row in run["rows"]],
           "read": {c: run["read"] for c, run in zip(chapters, nominal)},
           "ranges": {}, "runs": len(points), "grouping": per_chapter, "split": split,
           "plan": {c: {g: plan(run.get("units", []), run["cpu_s"], run["read"], g, table,
                               run.get("nominal_cpu_s", 0.0))
                        for g in GROUPINGS if g != "split"}
                    for c, run in zip(chapters, nominal)},
           "moves_by_chapter": {c: sum(p["chapter"] == c for p in points) for c in chapters},
           "estimates": {name: [_plain(e.value), _plain(e.low), _plain(e.high), e.why]
                         for name, e in table.items()}}
    for chapter, run in zip(chapters, nominal):
        mine = [(labels[i], points[i]["changes"], results[i]) for i in range(len(points))
                if points[i]["chapter"] == chapter]
        among = (lambda label: label in table) if chapter in split else None
        for claim, value in run["values"].items():
            out["ranges"][(chapter, claim)] = ranges_of(claim, value, mine, among)
    timing.update(cached=False, seconds=time.perf_counter() - start, runs=len(points))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        for old in path.parent.glob(f"*-{path.name.split('-', 1)[1]}"):
            old.unlink(missing_ok=True)            # the same chapters, older sources
        path.write_text(json.dumps(_encode(out)))
    return out


def _run_moves(points, weight, executor):
    """The moved runs of ``points``, in their order: one chapter's together (a worker reads
    its kept runs once), the longest chapters first (``weight``: their claims' CPU time as
    they are), so that the cores end together."""
    if not points:
        return []
    return sweep.run(chapter_run, points, executor=executor, description="ranges",
                     length=lambda p: (weight[p["chapter"]], p["chapter"]))


def ranges_of(claim, nominal, runs, among=None):
    """A claim's range from its value as it is and the moved runs [(label, changes,
    result)]: {"low", "high", "most" (the estimate, or table, that moves it most: its low
    and high furthest apart; ``among``: a test of the labels it may name, where one that
    passes moved it), "most_span", "moves" (re-runs that gave it), "failed" (labels of
    moves the model refused)}."""
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
    widths = {name: abs(sides.get("high", nominal) - sides.get("low", nominal))
              for name, sides in by_estimate.items()}
    if among is not None and any(among(n) and w > 0 for n, w in widths.items()):
        widths = {n: w for n, w in widths.items() if among(n)}
    most, span = None, 0.0
    for name, width in widths.items():
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
