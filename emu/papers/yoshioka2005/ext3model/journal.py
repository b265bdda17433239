"""The journal (JBD): the log's arithmetic (descriptor tags, log space, the checkpoint
threshold), the journal in guest memory, kjournald's commit timer and the lock-down of the
running transaction.
"""
from __future__ import annotations

import numpy as np

from .pacing import COMMIT_INTERVAL_S
from .program import LATE_CACHES
from .structures import (BH_BITS, BH_SIZE, J, JH, JOURNAL_SIZE, MAX_TRANSACTION_BUFFERS,
                         MIN_LOG_RESERVED_BLOCKS, PAGE,
                         PAGE_STRUCT, REVOKE_HASH, SPIN_FREE, T, TIMER, TIMER_MAGIC, TIMER_SIZE,
                         TRANSACTION_SIZE, TVB, TVB_SIZE, _words)


#: the journal's log: 8192 blocks (a 32 MB journal of 4 KB blocks, as MAX_TRANSACTION_BUFFERS
#: takes it), contiguous on the disk from LOG_START (journal_bmap the identity)
LOG_START, LOG_BLOCKS = 4096, 8192


#: the log's blocks (fs/jbd/commit.c's phase 3, include/linux/jbd.h of 2.6.12.1):
#: sizeof(journal_header_t), sizeof(journal_block_tag_t), the UUID after a descriptor's
#: first tag
JOURNAL_HEADER, BLOCK_TAG, TAG_UUID = 12, 8, 16




def tags_per_descriptor(blocksize=PAGE):
    """Metadata buffers one descriptor block lists (commit.c 494-575 of 2.6.12.1): it
    starts with ``space_left = b_size - header`` (495) and the descriptor in wbuf (499);
    each buffer takes a tag (561), the first 16 bytes more for the UUID (566); the batch is
    written when wbuf holds j_wbufsize buffers (blocksize / tag, journal.c 741-742) or
    ``space_left < tag + 16`` (573-575)."""
    space, bufs = blocksize - JOURNAL_HEADER, 1
    while True:
        space -= BLOCK_TAG + (TAG_UUID if bufs == 1 else 0)
        bufs += 1
        if bufs == blocksize // BLOCK_TAG or space < BLOCK_TAG + 16:
            return bufs - 1


def log_blocks_per_commit(buffers):
    """Log blocks a commit of ``buffers`` metadata buffers writes: a copy of each, a
    descriptor block for each tags_per_descriptor() of them, and the commit block."""
    if buffers <= 0:
        raise ValueError("a commit logs one metadata buffer at least")
    return buffers + -(-buffers // tags_per_descriptor()) + 1


def log_space_left(free):
    """__log_space_left (fs/jbd/journal.c 414-433 of 2.6.12.1): the free log blocks, less
    MIN_LOG_RESERVED_BLOCKS, less an eighth for descriptor blocks."""
    left = free - MIN_LOG_RESERVED_BLOCKS
    return 0 if left <= 0 else left - (left >> 3)


def checkpoint_below(log_blocks=LOG_BLOCKS, committing_credits=0):
    """The fewest free log blocks at which a journal_start goes on without a checkpoint:
    below it start_this_handle waits in __log_wait_for_space, which runs log_do_checkpoint
    (fs/jbd/transaction.c 210-213, checkpoint.c 78-98), when __log_space_left is less than
    jbd_space_needed (include/linux/jbd.h 1045-1052): j_max_transaction_buffers (j_maxlen /
    4, journal.c 850) plus a committing transaction's t_outstanding_credits."""
    needed = log_blocks // 4 + committing_credits
    free = needed
    while log_space_left(free) < needed:
        free += 1
    return free


class KernelJournal:
    """The Kernel's journal, its commit timer and the lock-down of its transaction."""

    def _build_journal(self):
        self.journal = j = self._alloc(JOURNAL_SIZE, align=128)
        self.transaction = t = self._alloc(TRANSACTION_SIZE, align=128)
        self._word(j + J["STATE_LOCK"], SPIN_FREE)
        self._word(j + J["LIST_LOCK"], SPIN_FREE)
        self._word(j + J["RUNNING"], t)
        self._word(j + J["MAX_BUFFERS"], MAX_TRANSACTION_BUFFERS)
        self._word(j + J["FREE"], 4 * MAX_TRANSACTION_BUFFERS)
        self._word(j + J["COMMIT_INTERVAL"], COMMIT_INTERVAL_S * 1000)    # at HZ 1000
        wbufsize = PAGE // 8                # blocksize / sizeof(journal_block_tag_t)
        self._poke(j + J["WBUF"], _words(self._alloc(4 * wbufsize), wbufsize))
        queue = j + J["WAIT_UPDATES"]
        self._poke(queue, _words(SPIN_FREE, queue + 4, queue + 4))
        self._poke(j + J["HEAD"], _words(LOG_START, LOG_START, LOG_BLOCKS, LOG_START,
                                         LOG_START + LOG_BLOCKS))
        self._poke(j + J["UUID"], bytes(range(0x11, 0x21)))
        ctl = [self._log_buffer() for _ in range(2)]
        self._poke(j + J["C_CTL"], _words(*ctl, 0))
        self._word(t + T["JOURNAL"], j)
        self._word(t + T["TID"], 1)
        self._word(t + T["HANDLE_LOCK"], SPIN_FREE)
        self._word(t + T["EXPIRES"], 0x7FFFFFFF)

    def _build_commit_state(self):
        """What a commit's start and end and a new running transaction touch: kmalloc's
        size-128 cache, j_transaction_sequence (the first transaction's tid is 1), the wait
        queues of j_wait_transaction_locked and j_wait_done_commit, the timer lists and the
        commit timer (_build_timers), the two revoke tables (each 256 empty hash heads,
        j_revoke the first)."""
        self._build_caches(LATE_CACHES)
        j = self.journal
        self._word(j + J["TRANSACTION_SEQUENCE"], 2)
        for name in ("WAIT_TRANSACTION_LOCKED", "WAIT_LOGSPACE", "WAIT_DONE_COMMIT"):
            queue = j + J[name]
            self._poke(queue, _words(SPIN_FREE, queue + 4, queue + 4))
        self._build_timers()
        tables = []
        for _ in range(2):
            table, heads = self._alloc(12), self._alloc(8 * REVOKE_HASH)
            self._poke(heads, _words(*[heads + 8 * i + d for i in range(REVOKE_HASH)
                                       for d in (0, 0)]))
            self._poke(table, _words(REVOKE_HASH, 8, heads))
            tables.append(table)
        self._poke(j + J["REVOKE"], _words(tables[0], *tables))
        self.committing = 0                 # the committing transaction, once locked down,
        self.commit_logged = 0              # and the metadata buffers it has logged
        self.commit_block = False           # its commit block written (phase 6)
        self.commit_ended = False           # its phase 8 run (journal_commit_end)
        self.commit_end_held = False        # whole_commit: phase 8 waits to be measured
        self.del_timer_cycles = 0           # kjournald's del_timer_sync before it

    def _build_timers(self):
        """Each CPU's timer lists (tvec_bases: every head empty, timer_jiffies = jiffies,
        0), the online CPUs, and kjournald's commit timer, on CPU 0's list for the first
        transaction (its t_expires), where internal_add_timer puts it."""
        bases = []
        for _ in range(self.cpus):
            base = self._alloc(TVB_SIZE, align=128)
            heads = base + TVB["TV1"] + 8 * np.arange(512)
            self._poke(base, _words(SPIN_FREE, 0, 0))
            self.machine.write(base + TVB["TV1"],
                               np.repeat(heads, 2).astype(np.uint32).tobytes())
            bases.append(base)
        self._poke(self.sym["tvec_bases"], _words(*bases))
        # the model's CPUs online (idle_2612.S's word says all 8; del_timer_sync reads
        # the base of each online CPU, and the model builds the bases of its own)
        self._word(self.sym["cpu_online_map"], (1 << self.cpus) - 1)
        timer = self._alloc(TIMER_SIZE)
        self._poke(timer, _words(0, 0, 0, SPIN_FREE, TIMER_MAGIC, self.sym["commit_timeout"],
                                 0, 0))
        self._word(self.journal + J["COMMIT_TIMER"], timer)
        self._add_timer(timer, bases[0], self._read(self.transaction + T["EXPIRES"]))

    def _add_timer(self, timer, base, expires):
        """internal_add_timer (kernel/timer.c 117-157) from Python, for the built state:
        ``timer`` at the tail of the vector of ``base`` that ``expires`` picks."""
        idx = (expires - self._read(base + TVB["TIMER_JIFFIES"])) & 0xFFFFFFFF
        if idx < 1 << 8:
            vec = base + TVB["TV1"] + 8 * (expires & 255)
        elif idx < 1 << 31:
            level = next(n for n in range(1, 5) if idx < 1 << (8 + 6 * n) or n == 4)
            vec = base + TVB[f"TV{level + 1}"] + 8 * ((expires >> (8 + 6 * (level - 1))) & 63)
        else:
            raise ValueError("a timer already due: not in the built state")
        tail = self._read(vec + 4)
        self._poke(timer, _words(vec, tail, expires))
        self._word(vec + 4, timer)
        self._word(tail, timer)
        self._word(timer + TIMER["BASE"], base)

    def commit_timer_left(self):
        """Jiffies before kjournald's commit timer expires: its expires less jiffies, signed
        as time_after compares them (include/linux/jiffies.h). A tick's __run_timers calls
        its function (commit_timeout, a stand-in that faults) once jiffies reach it."""
        timer = self._read(self.journal + J["COMMIT_TIMER"])
        left = (self._read(timer + TIMER["EXPIRES"]) - self._read(self.sym["jiffies"])) & 0xFFFFFFFF
        return left - (1 << 32) if left >> 31 else left

    def running(self):
        """The journal's running transaction (0 between a lock-down and the next
        journal_start)."""
        return self._read(self.journal + J["RUNNING"])

    def lock_down(self, call=None):
        """kjournald starts a commit: del_timer_sync takes the commit timer off its list
        (routines/x86/timer_2612.S; its cycles in ``del_timer_cycles``), then
        journal_lock_down (routines/x86/commit_meta_2612.S) locks the running transaction down, waits for its handles and makes it the
        committing one; the data loop and the metadata's log writes then run on it, the
        writers on the new running transaction the next journal_start makes. ``call``:
        the task's call in a paced run (default: the machine's). Returns the Run."""
        call = call or self.machine.call
        # kjournald (fs/jbd/journal.c 160-164): the commit timer off its list first
        self.del_timer_cycles = self._del_commit_timer(call).cycles
        return self._journal_lock_down(call)

    def _del_commit_timer(self, call):
        """del_timer_sync of the commit timer, before a commit of the first transaction."""
        if self.committing:
            raise RuntimeError("a commit is under way already")
        if self.running() != self.transaction:
            raise RuntimeError("the model commits its first transaction only")
        return call("del_timer_sync", self._read(self.journal + J["COMMIT_TIMER"]))

    def _journal_lock_down(self, call):
        """journal_lock_down of the running transaction, checked; returns the Run."""
        run = call("journal_lock_down", self.journal)
        if run.return_value != self.transaction:
            raise RuntimeError("journal_lock_down did not lock the running transaction down")
        self.committing = self.transaction
        return run

    def _log_buffer(self):
        """A buffer head and its 4 KB for the log's control blocks (descriptor, commit):
        what __getblk finds for a log block."""
        data = self._alloc(PAGE, align=PAGE)
        bh = self._alloc(BH_SIZE, align=16)
        page = self._alloc(PAGE_STRUCT)
        state = (1 << BH_BITS["Uptodate"]) | (1 << BH_BITS["Mapped"])
        self._poke(bh, _words(state, bh, page, 0, PAGE, LOG_START, data))
        self._log_bhs = getattr(self, "_log_bhs", []) + [bh]
        return bh

    def _checkpointed(self):
        """The journal heads on the checkpoint lists, transaction by transaction."""
        out, first = [], self._read(self.journal + J["CHECKPOINT_TRANSACTIONS"])
        t = first
        while t:
            head = jh = self._read(t + T["CHECKPOINT"])
            while jh:
                out.append(jh)
                jh = self._read(jh + JH["CPNEXT"])
                if jh == head:
                    break
            t = self._read(t + T["CPNEXT"])
            if t == first:
                break
        return out
