"""The instruction costs a machine's runs read, recorded when the instructions run.

A program's cost table is made when it is loaded (emu.hw.cost), but a run's cycles depend
only on the costs of the instructions that run: a cost estimate (``ppc604:costs.mnemonics.
sync``) is read by a run that executes a sync, not by one that loads a routine holding a
sync it never reaches. The scorecard's ranges (emu.book.ranges) re-run a unit when a moved
estimate is one it read (emu.run.reuse), so each move of an instruction's cost re-runs
only the units that execute it.

The native block hook notes, for each block of the loaded code it runs for the first time
since Python last looked (emu/hw/model/hooks.c, ``remember_block``: ``H_TOUCHED``, at the
block's first offset its size). ``flush`` turns them into estimate names: each
instruction's cycles depend on the estimates of ``Tables.reads`` of the instructions from
its ``Tables.segments`` start (its own, or the start of its dispatch group's reach) to
itself; it records them as read by the watches that were current when they ran, then
clears the notes and forgets the block memos, so that a block run again afterwards is
noted again. The watches are those of the last ``begin_run`` (every way of running guest
code calls it, through ``Machine.tables_up_to_date``): a run in another context (another
unit's watch, in or out of ``estimates.setup_only``) first flushes what ran before it. A
watch that ends flushes the machines that ran inside it (``estimates.register``), and so
does a machine that is closed or collected. A run of several cores records what its
cores ran for its caller's context and for those its tasks' calls came from
(``join_context``).

Guest code run inside ``estimates.setup_only`` is a set-up read (its unit's result does not
depend on it) only on a machine whose clock carries nothing from one call to the next
(``clock_free``); elsewhere it is an ordinary read.
"""
from __future__ import annotations

import numpy as np

from ..hw import cache as c
from ..hw import estimates


def clock_free(isa, cores, state, prefetcher):
    """Does nothing of the machine's model keep a time from one guest call to the next? On
    one PowerPC core each call restarts the clock with the memory system drained
    (``Layout.clear_stats``); posted maintenance write-backs (``H_POSTED``: the 750's bus
    write buffers, POWER4's, the A9's) stay in flight across it, and a prefetcher's streams
    stay trained. x86 (rdtsc) and ARM (the interrupt mask's time) are left out."""
    return (cores == 1 and isa in ("ppc32", "ppc64") and not prefetcher and
            int(state[c.H_POSTED]) == c.POSTED_OFF)


class CostReads:
    """A machine's instruction-cost reads: the estimates each code offset's instruction
    depends on, and the runs' notes of the blocks that ran (see the module notes)."""

    def __init__(self, model, clock_free_):
        self.model = model                      # the machine's Layout (its state, cores)
        # per code offset up to the loaded code's end (grown as programs load: arrays over
        # a machine's whole code region were megabytes to clear for every machine made)
        self.touched = np.zeros(0, np.int64)   # the native notes (H_TOUCHED points here)
        self.ids = np.zeros(0, np.int32)       # the index in ``sets`` of its reads
        self.first = np.zeros(0, np.int32)     # the start of its reach
        self.sets = [frozenset()]
        self._index = {frozenset(): 0}
        self.top = 0
        self.context = ((), False)
        self.clock_free = clock_free_

    def load(self, lo, tables):
        """A program's Tables at code offset ``lo`` (its instructions replace what was
        there: what ran before is flushed first)."""
        self.flush()
        n = len(tables.reads)
        if lo + n > len(self.ids):
            self._grow(max(lo + n, 2 * len(self.ids), 1 << 16))
        index = np.array([self._intern(s) for s in tables.read_sets], np.int32)
        self.ids[lo:lo + n] = index[tables.reads]
        self.first[lo:lo + n] = tables.segments + lo
        self.top = max(self.top, lo + n)

    def _grow(self, size):
        """The arrays over ``size`` code offsets, the notes kept; every core's header
        pointed at the new notes (the old array is freed: nothing runs in between)."""
        more = size - len(self.ids)
        self.touched = np.concatenate([self.touched, np.zeros(more, np.int64)])
        self.ids = np.concatenate([self.ids, np.zeros(more, np.int32)])
        self.first = np.concatenate([self.first, np.zeros(more, np.int32)])
        for core in range(self.model.cores):
            self.model.header(core)[c.H_TOUCHED] = self.touched.ctypes.data

    def _intern(self, names):
        found = self._index.get(names)
        if found is None:
            found = self._index[names] = len(self.sets)
            self.sets.append(names)
        return found

    def begin_run(self):
        """Guest code is about to run: in another context than the last run's, what ran
        before is recorded first, and the watches of this one will be told to flush."""
        watches, setup = estimates.context()
        if watches is self.context[0] and setup == self.context[1]:
            return
        self.flush()
        self.context = (watches, setup)
        if watches:
            estimates.register(self, watches)

    def join_context(self):
        """A guest call from a task of a run of several cores (emu.run.parallel), whose
        Python may have entered a context of its own: the cores' blocks run interleaved,
        so what runs from now until the next flush is recorded for the run's context and
        the task's both (more than each read, never less), as ordinary reads."""
        watches, setup = estimates.context()
        stored, stored_setup = self.context
        if watches is stored and setup == stored_setup:
            return
        mine = {id(w) for w in stored}
        self.context = (stored + tuple(w for w in watches if id(w) not in mine), False)
        if watches:
            estimates.register(self, watches)

    def flush(self):
        """Record the instruction costs of the blocks run since the last flush as read by
        the last run's watches, and start the notes afresh."""
        if self.model is None or not self.top:
            return
        touched = self.touched[:self.top]
        starts = np.flatnonzero(touched)
        if not starts.size:
            return
        watches, setup = self.context
        if watches:
            names = self.names_run(starts, touched[starts])
            if names:
                estimates.note_into(watches, names, setup and self.clock_free)
        touched[starts] = 0
        self.model.forget_block_memos()     # a memo's block skips the note: run it again

    def names_run(self, starts, sizes):
        """The estimates the blocks at code offsets ``starts`` of ``sizes`` bytes read."""
        top = self.top
        marks = np.zeros(top + 1, np.int32)
        np.add.at(marks, self.first[starts], 1)
        np.add.at(marks, np.minimum(starts + sizes, top), -1)
        ran = np.cumsum(marks[:top]) > 0
        out = set()
        for i in np.unique(self.ids[:top][ran]):
            out |= self.sets[i]
        return out

    def close(self):
        """Flush, then let go of the machine's model (no core runs any more)."""
        self.flush()
        self.model = None
