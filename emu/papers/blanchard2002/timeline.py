"""A scheduled build's timeline of the calls that take 2.4's hash_table_lock (_record_lock_calls:
hash_page calls and range flushes on the CPUs' clocks), and what it says: how the hash_page
calls meet the other CPUs' flushes (flush_meetings) and what the flushes wait behind
(flush_waits)."""
from __future__ import annotations

import bisect
import math

from ...kernel.percpu import cpu
from ...kernel.ppc64 import unpack
from ...run.parallel import current_task


#: The guest routines that take 2.4's hash_table_lock: a hash_page call (a miss or a
#: fault's preload) and a range flush (flush_hash_page under the lock, page by page)
HASH_CALLS = ("hash_page", "hash_page (preload)")
RANGE_FLUSH = "flush_tlb_range_pages"


def _record_lock_calls(kernel, timeline, flushed):
    """Append (cpu, start, end, routine) to ``timeline`` for each of ``kernel``'s guest
    calls of HASH_CALLS and RANGE_FLUSH (on its CPU's clock: the call's wait included),
    and each RANGE_FLUSH's HPTEs flushed (its tlbie sequences: a page each) to ``flushed``,
    in the same order as the flushes in ``timeline``."""
    call = kernel.arch.call

    def recorded(entry, *args, charge=None):
        start = current_task().clock
        value = call(entry, *args, charge=charge)
        if (charge or entry) in (*HASH_CALLS, RANGE_FLUSH):
            timeline.append((cpu(), start, current_task().clock, charge or entry))
        if (charge or entry) == RANGE_FLUSH:
            flushed.append(unpack(value)[2])
        return value
    kernel.arch.call = recorded


def _union(intervals):
    """[(start, end)] of ``intervals``' union, sorted and disjoint."""
    out = []
    for a, z in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], z))
        elif z > a:
            out.append((a, z))
    return out


def _inside(union, t):
    """Whether ``t`` falls in one of ``union``'s intervals (_union's)."""
    k = bisect.bisect_right(union, (t, math.inf)) - 1
    return k >= 0 and union[k][0] <= t < union[k][1]


def _covered(union, start, end):
    """The cycles of [start, end) inside ``union`` (_union's)."""
    return sum(max(0, min(z, end) - max(a, start)) for a, z in union)


def flush_meetings(timeline):
    """How the measured jobs' hash_page calls meet the other CPUs' range flushes (2.4's
    hash_table_lock: the flush takes it page by page) in a scheduled_build's ``timeline``:
    "calls meeting a flush", the share of the calls that start while another CPU is in
    RANGE_FLUSH; "time in others' flushes", the share of the measured jobs' time another
    CPU is (what the first would be if the calls fell at random times); "cycles a call,
    meeting" and "cycles a call, not meeting" (wait included); "extra a call from
    meetings": the calls meeting a flush times their cycles beyond a call not meeting,
    per call of all."""
    jobs, calls = timeline["jobs"], timeline["calls"]
    flushes = [(c, a, z) for c, a, z, name in calls if name == RANGE_FLUSH]
    others = {c: _union([(a, z) for k, a, z in flushes if k != c]) for c, _, _ in jobs}
    meeting, alone = [], []
    for c, a, z, name in calls:
        if name not in HASH_CALLS or not any(s <= a < e for k, s, e in jobs if k == c):
            continue
        met = _inside(others[c], a)
        (meeting if met else alone).append(z - a)
    total = len(meeting) + len(alone)
    if not total:
        raise ValueError("the timeline holds no hash_page call of a measured job")
    covered = sum(_covered(others[c], s, e) for c, s, e in jobs)
    spent = sum(e - s for _, s, e in jobs)

    def mean(values):
        return sum(values) / len(values) if values else float("nan")
    extra = (mean(meeting) - mean(alone)) * len(meeting) / total if meeting and alone \
        else 0.0
    return {"calls meeting a flush": len(meeting) / total,
            "time in others' flushes": covered / spent,
            "cycles a call, meeting": mean(meeting), "cycles a call, not meeting": mean(alone),
            "extra a call from meetings": extra}


class _Busy:
    """How many of a set of intervals run at each time, integrated: ``within(a, z)``, the
    sum of their cycles inside [a, z) (a cumulative sum over their sorted ends, so a
    window costs a bisection, not a pass over the intervals)."""

    def __init__(self, intervals):
        steps = {}
        for a, z in intervals:
            if z > a:
                steps[a] = steps.get(a, 0) + 1
                steps[z] = steps.get(z, 0) - 1
        self.times, self.running, self.before = sorted(steps), [], []
        running, total, last = 0, 0, None
        for t in self.times:
            total += running * (t - last) if last is not None else 0
            running += steps[t]
            self.before.append(total)            # the integral up to t
            self.running.append(running)         # how many run from t on
            last = t

    def _integral(self, t):
        k = bisect.bisect_right(self.times, t) - 1
        if k < 0:
            return 0
        return self.before[k] + self.running[k] * (t - self.times[k])

    def within(self, a, z):
        return self._integral(z) - self._integral(a)

    def at(self, t):
        """How many run at ``t`` (one that starts at ``t`` runs, one that ends does not)."""
        k = bisect.bisect_right(self.times, t) - 1
        return self.running[k] if k >= 0 else 0


def _others(spans, cpus):
    """{cpu: _Busy of ``spans``' intervals (cpu, start, end) on the other CPUs}: all of
    them less the CPU's own, each a _Busy, read together by _within_others."""
    return _Busy([(a, z) for _, a, z in spans]), {
        c: _Busy([(a, z) for k, a, z in spans if k == c]) for c in cpus}


def _others_at(busy, c, t):
    """How many other CPUs than ``c`` are in ``busy``'s (_others) intervals at ``t``."""
    everyone, own = busy
    return everyone.at(t) - (own[c].at(t) if c in own else 0)


def _within_others(busy, c, a, z):
    """The cycles of [a, z) the other CPUs than ``c`` spend in ``busy``'s (_others)
    intervals, summed over those CPUs."""
    everyone, own = busy
    return everyone.within(a, z) - (own[c].within(a, z) if c in own else 0)


def flush_waits(timeline):
    """What the measured jobs' range flushes (RANGE_FLUSH: 2.4's flush_hash_page takes
    hash_table_lock page by page) wait behind, in a scheduled_build's ``timeline``: each
    flush of at least one page that starts in a measured job of its CPU, by what the other
    CPUs do during it: "meeting a flush" (another CPU flushes at some time during it),
    "meeting hash_page only" (another CPU is in a HASH_CALLS call, none flushes) or
    "alone". {category: (share of the flushed pages, cycles a flushed page)}; "extra a
    page from <category>", that category's cycles a page beyond an alone flush's times its
    share of the pages; "pages starting in another's flush", the share of the pages whose
    flush starts while another CPU flushes (flush_meetings' "time in others' flushes" is
    the share if flushes started at random times); "others flushing, during a flush" and "others in hash_page, during
    a flush", how many other CPUs are in a flush or a hash_page call on average over the
    flushes' time; and "..., over the jobs", the same over the measured jobs' whole time
    (what a flush would meet at a random time)."""
    jobs, calls = timeline["jobs"], timeline["calls"]
    flushes = [(c, a, z) for c, a, z, name in calls if name == RANGE_FLUSH]
    pages = timeline["flushed"]
    if len(pages) != len(flushes):
        raise ValueError("the timeline's flushed pages do not match its flushes")
    cpus = {c for c, _, _ in jobs}
    flushing = _others(flushes, cpus)
    hashing = _others([(c, a, z) for c, a, z, name in calls if name in HASH_CALLS], cpus)
    measured = {c: sorted((s, e) for k, s, e in jobs if k == c) for c in cpus}
    kinds = ("meeting a flush", "meeting hash_page only", "alone")
    cycles, counted = dict.fromkeys(kinds, 0), dict.fromkeys(kinds, 0)
    during = {"flush": 0, "hash": 0}
    starting = 0                                  # pages whose flush starts in another's
    for (c, a, z), n in zip(flushes, pages):
        if not n or z <= a or not any(s <= a < e for s, e in measured.get(c, ())):
            continue
        starting += n if _others_at(flushing, c, a) else 0
        others_flushing = _within_others(flushing, c, a, z)
        others_hashing = _within_others(hashing, c, a, z)
        kind = kinds[0] if others_flushing else kinds[1] if others_hashing else kinds[2]
        cycles[kind] += z - a
        counted[kind] += n
        during["flush"] += others_flushing
        during["hash"] += others_hashing
    total = sum(counted.values())
    if not total:
        raise ValueError("the timeline holds no flush of a measured job")
    spent = sum(cycles.values())
    per_page = {k: cycles[k] / counted[k] if counted[k] else float("nan") for k in kinds}
    out = {k: (counted[k] / total, per_page[k]) for k in kinds}
    for k in kinds[:2]:
        out[f"extra a page from {k}"] = (per_page[k] - per_page["alone"]) * counted[k] / \
            total if counted[k] and counted["alone"] else 0.0
    job_time = sum(e - s for _, s, e in jobs)
    out["pages starting in another's flush"] = starting / total
    out["others flushing, during a flush"] = during["flush"] / spent
    out["others in hash_page, during a flush"] = during["hash"] / spent
    out["others flushing, over the jobs"] = sum(
        _within_others(flushing, c, s, e) for c, s, e in jobs) / job_time
    out["others in hash_page, over the jobs"] = sum(
        _within_others(hashing, c, s, e) for c, s, e in jobs) / job_time
    return out
