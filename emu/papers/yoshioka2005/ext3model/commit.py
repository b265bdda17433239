"""kjournald's commit: the data loop's turns in the paced runs' pauses, the metadata buffers
logged at the pace a commit interval dirties them, and a whole commit as guest code.
"""
from __future__ import annotations

from .journal import LOG_BLOCKS, LOG_START
from .pacing import COMMIT_INTERVAL_S, KJOURNALD_CPU
from .structures import (ADDR_PER_BLOCK, BH, BLOCKS_PER_GROUP, DIND_START, EI, FIRST_INDEX, JH,
                         META_SLOTS, PAGE, T)


class _Caller:
    """A task stand-in for the Kernel's guest calls outside paced writes."""
    def __init__(self, call):
        self.call = call


class KernelCommit:
    """The Kernel's commit: kjournald's turns, the metadata's log writes, a whole commit."""

    def _lock_down_in_pause(self, task, k, written):
        """In CPU k's pause after its ``written``-th write: kjournald starts the commit
        (lock_down), the other CPUs' writers running on; ``self.lockdown`` keeps the handles
        open on the transaction when it began (the ones it waits for), its cycles and where
        in the run it came."""
        updates = self._read(self.transaction + T["UPDATES"])
        run = self.lock_down(task.call)
        self.lockdown = {"cpu": k, "write": written, "open_handles": updates,
                         "cycles": run.cycles}
        self.commit_pending = False

    def commit_state(self):
        """Where the metadata buffers are, read from the journal: ``committing``: on the
        committing transaction's lists; ``taken``: of those, the ones a writer has taken
        for the running transaction meanwhile (b_next_transaction, do_get_write_access);
        ``frozen``: with a frozen copy (b_frozen_data); ``running``: filed on the running
        transaction (new to it, or refiled there by the commit's phase 7); ``refiled``: of
        those, the ones the commit logged and refiled (on its checkpoint list)."""
        out = dict(committing=0, taken=0, frozen=0, running=0, refiled=0)
        running = self.running()
        for _, bh in self._meta:
            jh = self._read(bh + BH["PRIVATE"])
            if not jh:
                continue
            on = self._read(jh + JH["TRANSACTION"])
            if self.committing and on == self.committing:
                out["committing"] += 1
                out["taken"] += bool(running) and self._read(jh + JH["NEXT_T"]) == running
            elif on and on == running and running != self.committing:
                out["running"] += 1
                out["refiled"] += bool(self.committing) and \
                    self._read(jh + JH["CP_T"]) == self.committing
            out["frozen"] += bool(self._read(jh + JH["FROZEN"]))
        return out

    def commit_age(self, period, clock_hz):
        """The writes per CPU a commit's data buffers are, on the mean, behind the newest:
        half of those a writer makes in a commit interval at a write every ``period``
        cycles of a ``clock_hz`` clock."""
        if period <= 0 or clock_hz <= 0:
            raise ValueError("the period and the clock must be positive")
        return round(COMMIT_INTERVAL_S * clock_hz / period / 2)

    def _commit(self, task, k):
        """In CPU k's pause: kjournald's data loop, one turn (routines/x86/commit_2612.S):
        the buffer at the head of the transaction's data list is unfiled (clean) or written
        (dirty)."""
        run = self._kjournald_call(task, k, "journal_commit_transaction", self.journal,
                                   self.transaction, 1)
        self.commit_turns[k] += 1
        self.commit_cycles[k] += run.cycles
        sync = self.sym["end_buffer_write_sync"]
        for _, start, end, _, end_io in self._requests():
            if end_io == sync and not self._in_log(start):  # buffers it wrote: kjournald
                self._disk_now(task, k, end)                # waits for them
        self.commit_cycles[k] += self._end_commit(task)

    def _end_commit(self, task):
        """Phase 8 of a locked-down commit (journal_commit_end, commit_meta_2612.S): once
        its commit block is written and its data list is empty, as 2.6.12 reaches it (its
        data first, commit.c 437), the transaction is finished and goes on the checkpoint
        list. Returns its cycles (0 when not due, or done)."""
        if (self.commit_end_held or not self.commit_block or self.commit_ended or
                self._read(self.transaction + T["SYNC_DATA"])):
            return 0
        self.commit_ended = True
        self.commit_end_run = task.call("journal_commit_end", self.journal, self.transaction)
        return self.commit_end_run.cycles

    def whole_commit(self, measure=None):
        """kjournald's whole commit of the running transaction, outside paced runs, on CPU
        0 (kjournald's), from cold caches (as a commit interval of writes leaves them:
        notebook 02 measures how often the L3 turns over in one): the parts a commit does
        once, each measured by ``measure(run)`` (``run()`` makes its guest call and returns
        the Run; default: its cycles): del_timer_sync, the lock-down, the revoke records
        (fs/jbd/commit.c 426; revoke_2612.S), and after each metadata buffer logged (the
        first behind a descriptor block, the last followed by the commit block) and the
        data loop run until the data list is empty, phase 8; then the next commit's start
        walks the checkpoint list this one left (__journal_clean_checkpoint_list, its
        buffers still dirty: none written back yet), right after ("clean") and from cold
        caches ("clean_cold"), measured too. Returns {part: measure} of those, the
        per-buffer parts' cycles ("metadata": all buffers, "data": all turns) and the counts
        "buffers" (logged, and walked) and "turns"."""
        measure = measure or (lambda run: run().cycles)
        call, here = self.machine.call, _Caller(self.machine.call)
        j, t = self.journal, self.transaction
        self.machine.flush_caches()

        def del_timer():
            run = self._del_commit_timer(call)
            self.del_timer_cycles = run.cycles
            return run
        out = {"del_timer_sync": measure(del_timer),
               "lock_down": measure(lambda: self._journal_lock_down(call)),
               "revoke_records": measure(lambda: call("journal_write_revoke_records", j, t))}
        meta, data, turns = sum(self.meta_cycles), sum(self.commit_cycles), 0
        self.commit_end_held = True
        while not self.commit_block:
            self._commit_metadata(here, KJOURNALD_CPU)
        while self._read(t + T["SYNC_DATA"]):
            self._commit(here, KJOURNALD_CPU)
            turns += 1
        self.commit_end_held = False
        out["metadata"] = sum(self.meta_cycles) - meta
        out["data"] = sum(self.commit_cycles) - data

        def end():
            if not self._end_commit(here):
                raise RuntimeError("the commit did not reach phase 8")
            return self.commit_end_run
        out["commit_end"] = measure(end)
        for part, cold in (("clean", False), ("clean_cold", True)):
            def walk():
                run = call("__journal_clean_checkpoint_list", j, cold=cold)
                if run.return_value:
                    raise RuntimeError("a buffer of the commit was written back before its "
                                       "walk")
                return run
            out[part] = measure(walk)
        out.update(buffers=self.commit_logged, turns=turns)
        return out

    def shared_metadata(self):
        """The metadata buffers every commit logs whatever the writes' pages: those on the
        running transaction's t_buffers now that are neither a group's bitmap nor an
        indirect block (the inode table's and the group descriptors' blocks). Each commit
        dirties them again, so each sits on the newest committed transaction's checkpoint
        list only (commit.c phase 7 moves a buffer from its older one)."""
        bitmaps = {g * BLOCKS_PER_GROUP for g in self.bitmaps}
        indirect = set()
        for f in self.files:
            dind = self._block_data(self._read(f["inode"] + EI["DIND"]))
            indirect |= {self._read(dind + 4 * j) for j in range(ADDR_PER_BLOCK)} - {0}
        return sum(1 for bh in self._metadata_list()
                   if self._read(bh + BH["BLOCKNR"]) not in bitmaps | indirect)

    def metadata_per_commit(self, writes):
        """The metadata buffers a commit logs after ``writes`` writes per CPU from the
        run's present point: those every write dirties whatever its page (the buffers on
        the running transaction's t_buffers now that are neither a group's bitmap nor an
        indirect block: the inode table's and the group descriptors' blocks), and for each
        CPU's file the indirect blocks and the groups' bitmaps its next ``writes`` pages
        reach (the model's block map)."""
        if writes <= 0:
            raise ValueError("writes must be positive")
        first, last = self.written, self.written + writes - 1
        shared = self.shared_metadata()
        per_file = 0
        for k in range(self.cpus):
            slots = ((FIRST_INDEX + last - DIND_START) >> 10) - \
                ((FIRST_INDEX + first - DIND_START) >> 10) + 1
            groups = (self.block_of(k, last) // BLOCKS_PER_GROUP -
                      self.block_of(k, first) // BLOCKS_PER_GROUP + 1)
            per_file += slots + groups
        return shared + per_file

    def _metadata_list(self):
        """The buffer heads on the running transaction's t_buffers, in order."""
        head = self._read(self.transaction + T["BUFFERS"])
        out, jh = [], head
        while jh:
            out.append(self._read(jh + JH["BH"]))
            jh = self._read(jh + JH["TNEXT"])
            if jh == head or len(out) > META_SLOTS:
                break
        return out

    def pace_metadata(self, writes):
        """Paced writes log the metadata a commit interval of ``writes`` writes per CPU
        dirties (metadata_per_commit) at the pace of those writes: a buffer every
        ``writes x cpus / per commit`` writes of a CPU, the CPUs in turn."""
        self.meta_per_commit = self.metadata_per_commit(writes)
        self.meta_shared = self.shared_metadata()
        self.meta_every = max(1, round(writes * self.cpus / self.meta_per_commit))

    def _meta_due(self, k, written):
        every = self.meta_every
        return bool(every) and (written + k * every // self.cpus) % every == 0

    def _commit_metadata(self, task, k):
        """In CPU k's pause: kjournald logs one metadata buffer, the head of t_buffers
        (routines/x86/commit_meta_2612.S): phase 3 (a descriptor block first if it is a
        commit's first buffer), the log's writes ended on the disk, phases 4 and 5 (and
        for a commit's last buffer the commit block, written), then phase 7. A commit
        that kjournald has locked down (lock_down) begins at its first buffer and ends at
        the one that empties its t_buffers; else the commits are meta_per_commit buffers
        long."""
        n = self.meta_per_commit
        if self.commit_block:               # the locked-down commit has logged it all
            return
        if self.committing:
            first, last = self.commit_logged == 0, len(self._metadata_list()) == 1
        else:
            first, last = self.meta_logged % n == 0, self.meta_logged % n == n - 1
        flags = first | last << 1
        j, t = self.journal, self.transaction
        run = self._kjournald_call(task, k, "journal_write_metadata", j, t, flags)
        cycles = run.cycles
        jh = run.return_value
        if not jh:
            self.meta_cycles[k] += cycles
            return
        self.meta_logged += 1
        self.commit_logged += bool(self.committing)
        self.meta_turns[k] += 1
        self._journal_io(task, k)
        run = self._kjournald_call(task, k, "journal_commit_written", j, t, jh, flags)
        cycles += run.cycles
        if flags & 2:
            self._journal_io(task, k)
        cycles += self._kjournald_call(task, k, "journal_commit_finish", j, t, jh,
                                       flags).cycles
        self.commit_block = bool(self.committing) and bool(flags & 2)
        self.meta_cycles[k] += cycles + self._end_commit(task)

    def _journal_io(self, task, k):
        """The log's queued writes (metadata blocks, descriptor, commit block), written and
        ended on CPU k: kjournald waits for them."""
        for _, start, end, _, _ in self._requests():
            if self._in_log(start):
                self._disk_now(task, k, end)

    @staticmethod
    def _in_log(sector):
        return LOG_START * (PAGE // 512) <= sector < (LOG_START + LOG_BLOCKS) * (PAGE // 512)
