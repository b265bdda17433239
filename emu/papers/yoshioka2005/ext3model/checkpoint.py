"""The log's checkpoint: log_do_checkpoint as guest code (routines/x86/checkpoint_2612.S), the
writer that runs it sleeping where 2.6.12 sleeps, on the I/O the disk's dispatch and
interrupt end.
"""
from __future__ import annotations

from .journal import LOG_START
from .structures import BH, BH_BITS, J, JH, JSB, PAGE, T, _words


class KernelCheckpoint:
    """The Kernel's checkpoints of the log."""

    def _build_journal_superblock(self):
        """The journal's superblock (j_sb_buffer, j_superblock): the block before the log
        (journal_bmap's block 0 of the journal: j_first is the next), as the first commit
        left it: s_sequence the first transaction's tid, s_start the log's first block
        (journal_update_superblock, big-endian), j_tail_sequence that tid. Built after all
        the rest: it moves nothing. ``checkpoint_wait``: the writer's record of where
        log_do_checkpoint sleeps (LDC_W_* in checkpoint_2612.S)."""
        bh = self._log_buffer()
        self._word(bh + BH["BLOCKNR"], LOG_START - 1)
        self._word(bh + BH["BDEV"], self.bdev)
        sb = self._read(bh + BH["DATA"])
        tid = self._read(self.transaction + T["TID"])
        self._poke(sb + JSB["S_SEQUENCE"], tid.to_bytes(4, "big") +
                   LOG_START.to_bytes(4, "big"))
        self._poke(self.journal + J["SB_BUFFER"], _words(bh, sb))
        self._word(self.journal + J["TAIL_SEQUENCE"], tid)
        self.checkpoint_wait = self._alloc(12)

    def checkpoint(self, call=None, k=0, measure=None):
        """log_do_checkpoint (fs/jbd/checkpoint.c 283-376 of 2.6.12.1) on CPU k, by the
        writer whose journal_start found the log short of space (__log_wait_for_space):
        each time it sleeps on a buffer's I/O, the disk takes the request holding the buffer
        and its interrupt ends it (_end_buffer_io, on CPU k), and the writer goes on
        (log_do_checkpoint_woken). ``call``: a task's call (default: the machine's);
        ``measure(run)`` as whole_commit's, each guest call measured (default: its cycles).
        Returns {"checkpoint": [measure of each of the writer's calls], "disk": [of each
        dispatch and interrupt], "buffers": the oldest transaction's checkpointed buffers
        before, "waits": the times it slept, "written": the buffers it submitted}."""
        call = call or self.machine.call
        measure = measure or (lambda run: run().cycles)
        j, wait = self.journal, self.checkpoint_wait
        oldest = self._read(j + J["CHECKPOINT_TRANSACTIONS"])
        if not oldest:
            raise RuntimeError("no transaction on the checkpoint lists")
        buffers = len(self._checkpoint_list(oldest))
        queued = len(self._requests())
        self._poke(wait, _words(0, 0, 0))
        out = {"checkpoint": [], "disk": [], "buffers": buffers, "waits": 0, "written": 0}
        entry = "log_do_checkpoint"
        while True:
            runs = []

            def step(entry=entry):
                runs.append(call(entry, j, wait))
                return runs[-1]
            out["checkpoint"].append(measure(step))
            bh = runs[-1].return_value
            if not bh:
                break
            out["waits"] += 1
            out["written"] += self._end_buffer_io(call, k, bh, measure, out["disk"])
            entry = "log_do_checkpoint_woken"
        if len(self._requests()) != queued:
            raise RuntimeError("the checkpoint left requests of its own in the disk's queue")
        return out

    def _checkpoint_list(self, t):
        """The journal heads on transaction ``t``'s checkpoint list, in order."""
        out, head = [], self._read(t + T["CHECKPOINT"])
        jh = head
        while jh:
            out.append(jh)
            jh = self._read(jh + JH["CPNEXT"])
            if jh == head:
                break
        return out

    def _end_buffer_io(self, call, k, bh, measure, runs):
        """The buffer ``bh`` a writer sleeps on: the disk takes the request holding it
        (disk_dispatch: the driver, as the sleeper's unplug lets it) and its interrupt ends
        it on CPU k (disk_interrupt: end_buffer_write_sync of each of its buffers). Each
        guest call measured into ``runs``; returns the request's buffers (its 4 KB blocks)."""
        if not self._read(bh + BH["STATE"]) & (1 << BH_BITS["Lock"]):
            raise RuntimeError("the checkpoint sleeps on a buffer not under I/O")
        sector = self._read(bh + BH["BLOCKNR"]) * (PAGE // 512)
        held = [(start, end) for _, start, end, _, _ in self._requests()
                if start <= sector < end]
        if len(held) != 1:
            raise RuntimeError(f"the buffer of sector {sector} is in {len(held)} requests")
        start, end = held[0]
        taken = []

        def dispatch():
            taken.append(call("disk_dispatch", self.queue, end))
            return taken[-1]
        runs.append(measure(dispatch))
        rq = taken[-1].return_value
        if not rq:
            raise RuntimeError(f"the disk did not take the request ending at sector {end}")
        runs.append(measure(lambda: call("disk_interrupt", self.pdflush[k], rq)))
        return (end - start) // (PAGE // 512)
