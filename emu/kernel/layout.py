"""Layouts: what a run on a real machine leaves to chance, made a deterministic choice.

Two runs of one benchmark on one board differ in where things land and when the copies
start, not in what they do. The model makes two such choices, both fixed by ``layout``
(a whole number):

* the order of the page allocator's free list: the order in which it hands out frames, so
  which physical page (and struct page, and page-lock wait queue) each copy's pages get.
  Layout 0 is a fresh boot's (frames in address order, the lowest first); layout s > 0
  shuffles the list with ``random.Random(s)`` (a machine that has run for a while: the
  buddy allocator's lists in no address order);
* each copy's start: layout s > 0 delays copy k by a whole number of cycles drawn from
  ``random.Random(s)`` below ``START_SPREAD_US`` microseconds (LMBench's benchmp wakes its
  -P children one by one through a pipe); layout 0 starts them together.

A layout changes no cost: it is which of the equally likely machines the run sees.

A **timing** (a whole number, beside the layout) nudges only the copies' starts: timing t > 0
delays copy k by a further whole number of cycles drawn from ``random.Random("timing t")``
below ``TIMING_SPREAD_CYCLES``, less than one page fault of the model; timing 0 adds nothing.
Four copies that meet at shared locks and queues interleave differently after such a nudge,
so a family of timings measures how far a result depends on the interleaving alone, with
the pages where they were.
"""
from __future__ import annotations

import random

#: how far apart the copies may start (microseconds): a child's wake-up after benchmp's
#: start signal, a scheduler's wake-up and a context switch (a few microseconds each)
START_SPREAD_US = 10
#: how far a timing nudges a copy's start (cycles): a few hundred, under the ~1,100 cycles of
#: one of the Cortex-A9 model's page faults, and of the order of what a patch moves a copy's
#: clock within a few faults (so the nudges sample interleavings a patch's comparison mixes)
TIMING_SPREAD_CYCLES = 500


def _check(layout, what="layout"):
    if not isinstance(layout, int) or isinstance(layout, bool) or layout < 0:
        zero = "a fresh boot's" if what == "layout" else "none"
        raise ValueError(f"{what} must be a whole number from 0 ({zero}), not {layout!r}")
    return layout


def free_order(pfns, layout=0):
    """The free list (popped from its end: the last is handed out first) of the frames
    ``pfns`` (in address order) for ``layout``: 0 the lowest frame first, s > 0 shuffled by
    ``random.Random(s)``."""
    order = list(reversed(pfns))
    if _check(layout):
        random.Random(layout).shuffle(order)
    return order


def start_delays(copies, clock_mhz, layout=0, timing=0):
    """Cycles each of ``copies`` copies waits before it starts, for ``layout``: all 0 for
    layout 0, else each drawn below START_SPREAD_US microseconds at ``clock_mhz``; plus,
    for ``timing`` t > 0, each copy's nudge below TIMING_SPREAD_CYCLES."""
    delays = [0] * copies
    if _check(layout):
        rng = random.Random(f"start {layout}")     # apart from free_order's draws
        delays = [rng.randrange(START_SPREAD_US * clock_mhz) for _ in range(copies)]
    if _check(timing, "timing"):
        rng = random.Random(f"timing {timing}")
        delays = [d + rng.randrange(TIMING_SPREAD_CYCLES) for d in delays]
    return delays
