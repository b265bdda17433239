"""Writeback in the paced runs' pauses (pdflush's page work, writeback_2612.S) and the disk's
requests: filled, dispatched and ended by the disk's interrupt (scsi_2612.S).
"""
from __future__ import annotations

from ....hw import estimates
from .pacing import DIRTY_FRACTION, MEMORY_MB, STAGGER
from .structures import (BDI_SIZE, BH, BIO, BVEC, FIRST_INDEX, PAGE,
                         PAGEVEC_SIZE, PG, Q, RQ,
                         SWAP_CLUSTER_MAX, WBC, _words)


def ratelimit_pages(memory_mb, cpus):
    """set_ratelimit (mm/page-writeback.c 502-509 of 2.6.12.1): total_pages / (CPUs x 32),
    at least 16, at most 4 MB of pages."""
    total = memory_mb * (1 << 20) // PAGE
    return min(max(total // (cpus * 32), 16), (4096 * 1024) // PAGE)


def sync_writeback_pages(ratelimit):
    """The nr_to_write of a throttled writer's walk: sync_writeback_pages()
    (mm/page-writeback.c 57-60 of 2.6.12.1), ratelimit + ratelimit / 2."""
    return ratelimit + ratelimit // 2


def writer_chunk_pages(ratelimit):
    """The pages a throttled writer writes back at a balance_dirty_pages (mm/page-writeback.c
    190-254): nr_to_write = sync_writeback_pages(), and mpage_writepages finishes the
    pagevec (PAGEVEC_SIZE) it holds when nr_to_write reaches 0 (fs/mpage.c 726-727), so
    whole pagevecs when the file has that many dirty pages."""
    return -(-sync_writeback_pages(ratelimit) // PAGEVEC_SIZE) * PAGEVEC_SIZE


def chunk_period(ratelimit):
    """Writes of one CPU per chunk of its throttled writer in the steady state: each write
    dirties a page, and what is dirtied is written back (the dirty pages hover at
    vm_dirty_ratio), all of it by the writers' chunks (background_writeout sleeps on the
    congested queue), so a CPU writes back writer_chunk_pages in a chunk once per that many
    writes. balance_dirty_pages looks every ratelimit pages (mm/page-writeback.c 276-292),
    so the chunks come at those looks, ratelimit / chunk pages of them on the mean (2 in 3
    at 1,024 and 1,540); the model runs the mean period, a chunk every chunk pages."""
    return writer_chunk_pages(ratelimit)


class KernelWriteback:
    """The Kernel's writeback and the disk's requests."""

    def _build_writeback_state(self):
        """What balance_dirty_pages reads: the machine's pages (MEMORY_MB), the CPUs
        online, ratelimit_pages as set_ratelimit sets it, and the block device's
        backing_dev_info, its BDI_pdflush bit set (pdflush works the device: in paced
        writes it writes back in every pause)."""
        total = round(estimates.value(MEMORY_MB[0], MEMORY_MB[1])) * (1 << 20) // PAGE
        self._word(self.sym["total_pages"], total)
        self._word(self.sym["num_online_cpus"], self.cpus)
        self.ratelimit = ratelimit_pages(total * PAGE >> 20, self.cpus)
        self._word(self.sym["ratelimit_pages"], self.ratelimit)
        self.bdi = self._alloc(BDI_SIZE)
        self._poke(self.bdi, _words(32, 1 << 0, 0))     # ra_pages, BDI_pdflush, capabilities

    def throttled_writeback(self, pages, k=0, measure=None):
        """CPU k's writer, throttled in balance_dirty_pages, writes back ``pages`` pages
        itself: writeback_inodes with a writeback_control of its queue, WB_SYNC_NONE,
        blocking, nr_to_write ``pages`` (routines/x86/kupdate_2612.S, fs_writeback_2612.S:
        sync_sb_inodes, __writeback_single_inode, mpage_writepages' tagged gang look-up and
        pagevecs, ext3_ordered_writepage), on the writer's kernel stack. Returns
        (measure's result, default the Run's cycles; the pages written). The files' inodes
        come back from it dirty (I_DIRTY_PAGES): the model's write path, whose
        __mark_inode_dirty has no slow path, cannot write after it."""
        if not hasattr(self, "vsb"):
            self._build_kupdate_state()
        wbc = self._alloc(64)
        self._ask_walk(wbc, pages)
        measure = measure or (lambda run: run().cycles)
        result = measure(lambda: self.machine.call("on_task_stack", self.ctx[k]["task"],
                                                   self.sym["writeback_inodes"], wbc))
        if self._asleep(self.ctx[k]["task"]):
            raise RuntimeError("the walk found the request queue full and slept in "
                               "get_request_wait: only paced runs resume a sleep (the disk "
                               "frees requests there)")
        return result, self._pages_walked(wbc, pages)

    def _ask_walk(self, wbc, pages):
        """``wbc`` as a throttled writer's: its queue's, WB_SYNC_NONE, blocking, nr_to_write
        ``pages``."""
        self._poke(wbc, _words(self.bdi, 0, 0, pages, 0, 0, 0, 0, 0, 0))

    def _pages_walked(self, wbc, pages):
        """The pages a walk asked for ``pages`` wrote: what it left of nr_to_write (a long)
        taken off."""
        left = self._read(wbc + WBC["NR_TO_WRITE"])
        return pages - (left - (1 << 32) if left >= 1 << 31 else left)

    def chunk_offset(self, k):
        """Where CPU k's chunks fall in the period (chunk_period writes): after its writes
        whose count is this many past a multiple of the period. The writers' chunks spread
        over the period as their writes over a write period: k / cpus x STAGGER of it (an
        estimate: the mail does not say how its writers' looks at the dirty pages fell)."""
        period = chunk_period(self.ratelimit)
        stagger = estimates.value(STAGGER[0], STAGGER[1])
        return round(k * period * stagger / self.cpus)

    def chunk_due(self, k, count):
        """Does CPU k's writer write back a chunk in its write number ``count`` (from 1)?"""
        return (count - self.chunk_offset(k)) % chunk_period(self.ratelimit) == 0

    def _writer_chunk(self, task, k, count):
        """CPU k's writer, throttled in its write number ``count``, writes back a chunk: in
        balance_dirty_pages (mm/page-writeback.c 213-227 of 2.6.12.1), writeback_inodes
        with a writeback_control of its queue, WB_SYNC_NONE, blocking, nr_to_write
        sync_writeback_pages() (routines/x86/kupdate_2612.S and fs_writeback_2612.S: the
        walk from the oldest dirty inode of the file system, whichever writer's file it
        is), on the writer's kernel stack; then the disk takes every request queued, one
        after the other at its pace (disk_delay writes each: the disk is the writers'
        only pace, so it writes a chunk's pages in the period's writes). The throttled
        path's two get_dirty_limits around the walk are not run (the model's page state
        counts its own pages, not the machine's; they read the state only). A walk that
        finds the queue full sleeps in get_request_wait (sleep.py: _walk_chunk)."""
        chunk = sync_writeback_pages(self.ratelimit)
        wbc = self._chunk_wbc(k)
        self._ask_walk(wbc, chunk)
        cycles = self._walk_chunk(task, k, count, wbc)
        self.chunks[k] += 1
        self.chunk_pages[k] += self._pages_walked(wbc, chunk)
        self.chunk_cycles[k] += cycles
        self.most_queued = max(self.most_queued, self._queued())
        self._take_queued(task, k, count)

    def _chunk_wbc(self, k):
        """CPU k's writer's writeback_control (balance_dirty_pages' is on its stack; the
        model's is one block per CPU, made once)."""
        if not hasattr(self, "_wbcs"):
            self._wbcs = [self._alloc(64) for _ in range(self.cpus)]
        return self._wbcs[k]

    def writeback_point(self, written):
        """The number of a child's first ``written`` pages writeback has passed: all but the
        last DIRTY_FRACTION of a CPU's share of the page cache."""
        lag = round(estimates.value(DIRTY_FRACTION[0], DIRTY_FRACTION[1]) *
                    self.pool_pages / self.cpus)
        return max(0, written - lag)

    def _writeback(self, task, k, written):
        """In CPU k's pause after its child's ``written``-th write: pdflush writes back one
        page of the child's file (routines/x86/writeback_2612.S), the one DIRTY_FRACTION of
        the child's page cache behind its newest (the next still in the cache and dirty)."""
        newest = FIRST_INDEX + written - 1
        # the first page not yet passed before the last write: prefill's clean_before
        start = max(self._wb_next.get(k, 0), FIRST_INDEX + self.writeback_point(written - 1))
        mapping = self.files[k]["mapping"]
        index = start
        for index in range(start, min(start + SWAP_CLUSTER_MAX, newest + 1)):
            run = task.call("on_task_stack", self.pdflush[k], self.sym["writeback_page"],
                            mapping, index)
            self.writeback_cycles[k] += run.cycles
            if run.return_value:                    # else gone, or clean
                self.written_back[k] += 1
                self._take_full(task.call, k, written, mapping, index)
                break
        self._wb_next[k] = index + 1

    def _requests(self):
        """The queued requests, oldest first: (request, first sector, end sector, the
        mapping of its first bio's page, its first buffer's b_end_io)."""
        head, out = self.queue + Q["QUEUE_HEAD"], []
        rq = self._read(head)
        while rq != head:
            sector = self._read(rq + RQ["SECTOR"])
            bio = self._read(rq + RQ["BIO"])
            page = self._read(self._read(bio + BIO["IO_VEC"]) + BVEC["PAGE"])
            bh = self._read(bio + BIO["PRIVATE"])
            out.append((rq, sector, sector + self._read(rq + RQ["NR_SECTORS"]),
                        self._read(page + PG["MAPPING"]), self._read(bh + BH["END_IO"])))
            rq = self._read(rq)
        return out

    def _take_full(self, call, k, written, mapping, index):
        """After writeback submitted the page ``index``: if its bio started a request of
        its own, the disk takes the file's request before it, which can grow no more (it
        ends where the bio starts, or, an indirect block or a new group between, it is the
        file's oldest)."""
        sector = self._sector(mapping, index)
        queued = [r for r in self._requests() if r[3] == mapping]
        if not any(start == sector for _, start, _, _, _ in queued):
            return                                  # the bio joined a request
        before = [end for _, start, end, _, _ in queued if start != sector]
        if before:
            end = sector if sector in before else before[0]
            self._dispatch(call, k, written, end)

    def _queued(self):
        """Write requests the queue's request list holds (rl->count[WRITE])."""
        return self._read(self.queue + Q["RQ_COUNT"] + 4)

    def _sector(self, mapping, index):
        """The first sector of the block of the file's page ``index``."""
        bh = self._read(self._lookup(mapping, index) + PG["PRIVATE"])
        return self._read(bh + BH["BLOCKNR"]) * (PAGE // 512)

    def _dispatch(self, call, k, written, sector):
        """The disk takes the request that ends at ``sector``:
        routines/x86/scsi_2612.S's disk_dispatch; its
        interrupt comes ``disk_delay`` writes of CPU k later (_end_requests)."""
        run = call("disk_dispatch", self.queue, sector)
        self.disk_cycles[k] += run.cycles
        rq = run.return_value
        if rq:
            self._inflight[k].append((written + self.disk_delay, rq))

    def _end_requests(self, task, k, written):
        """CPU k takes the disk's interrupt for each request due by its ``written``-th write
        (on pdflush's stack, the task the CPU runs in the pause): for every CPU's requests
        if it is ``irq_cpu``, for none if another is, for its own if ``irq_cpu`` is None."""
        if self.irq_cpu is not None and k != self.irq_cpu:
            return                                  # another CPU takes the interrupts
        cpus = [k] if self.irq_cpu is None else range(self.cpus)
        due = [rq for c in cpus for when, rq in self._inflight[c] if when <= written]
        for c in cpus:
            self._inflight[c] = [(w, rq) for w, rq in self._inflight[c] if w > written]
        for rq in due:
            self.disk_cycles[k] += task.call("disk_interrupt", self.pdflush[k], rq).cycles
            self.disk_requests[k] += 1
        if due:
            self._uncongest()
            self._wake_sleepers(task.clock)     # the writers those interrupts woke

    def end_all_io(self, k=0):
        """Outside a run: the disk takes every queued request, newest first, and ends it,
        and ends those in flight, on CPU k (tests, and a state with no I/O under way)."""
        call = self.machine.call
        while True:
            rq = call("disk_dispatch", self.queue, 0xFFFFFFFF).return_value
            if not rq:
                break
            self._inflight[k].append((0, rq))
        for cpu in range(self.cpus):
            for _, rq in self._inflight[cpu]:
                call("disk_interrupt", self.pdflush[k], rq)
            self._inflight[cpu] = []

    def _disk_now(self, task, k, end):
        """The disk takes the request ending at sector ``end`` and ends it at once, on CPU
        k (kjournald waits for its own writes; another CPU may have taken it already)."""
        run = task.call("disk_dispatch", self.queue, end)
        self.disk_cycles[k] += run.cycles
        if run.return_value:
            self.disk_cycles[k] += task.call("disk_interrupt", self.pdflush[k],
                                             run.return_value).cycles
