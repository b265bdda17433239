"""The kernel's memory: the slab caches and their per-CPU arrays, the zone of page-cache pages,
the iozone tasks and the kernel threads.
"""
from __future__ import annotations

import numpy as np

from .program import LATE_CACHES
from .structures import (BH_SIZE, CMD_SIZE, DEFAULT_PRIO, FD, HANDLE_SIZE, JH_SIZE, KC, KC_SIZE,
                         KERNEL_STACK, PAGE, PAGE_STRUCT, RADIX_NODE, RECORD, REQUEST_SIZE,
                         SG_POOL_MAX, SG_SIZE, SPIN_FREE, TASK_SIZE, TSK, WAIT_QUEUE_HEAD,
                         WAIT_TABLE_ENTRIES, ZONE, ZONE_SIZE, _words, slab_limits)


class KernelMemory:
    """The Kernel's slab caches, zone and tasks."""

    def _build_caches(self, names=None):
        """The slab caches (mm/slab.c): per CPU an array of freed objects (its limit and
        batch as enable_cpucache sets them) and the memory that CPU grows the cache from
        (``count`` objects: a bound, not a size: the cache takes only what its live and
        cached objects need, and running past it faults); the shared array; the slab
        lists' FIFO, room for every object."""
        self.caches = getattr(self, "caches", {})
        for name, (objsize, count) in self._cache_sizes().items():
            if (name in LATE_CACHES) != (names == LATE_CACHES):
                continue
            limit, batch, shared = slab_limits(objsize)
            cache = self._alloc(KC_SIZE)
            arrays = []
            for _ in range(self.cpus):
                grown = self._alloc(objsize * count, align=PAGE if objsize >= PAGE else 64)
                ac = self._alloc(32 + 4 * limit)
                self._poke(ac, _words(0, limit, grown, grown, grown + objsize * count, batch))
                arrays.append(ac)
            shared_ac = self._alloc(32 + 4 * max(shared, 1))
            self._poke(shared_ac, _words(0, shared))
            fifo = self._alloc(4 * count * self.cpus)
            self._poke(cache, _words(objsize, *arrays))
            self._poke(cache + KC["LOCK"], _words(SPIN_FREE, shared_ac, fifo, fifo, 0, fifo,
                                                  fifo + 4 * count * self.cpus))
            self._word(self.sym[name], cache)
            self.caches[name] = cache

    def _cache_sizes(self):
        """{cache: (object size, objects a CPU may grow it by)}: the most the CPU's writes
        can hold at once, and room for the free objects the other CPUs' arrays and the
        shared array can keep from it (a CPU grows the cache only when its array, the
        shared array and the slab lists are empty)."""
        pages = self.pool_pages // self.cpus
        held = {"journal_head_cache": (JH_SIZE, pages + 512),
                "bh_cachep": (BH_SIZE, pages + 512),
                "jbd_handle_cache": (HANDLE_SIZE, 16),
                "radix_tree_node_cachep": (RADIX_NODE, pages // 32 + 64),
                "size4096_cache": (PAGE, 4), **self._io_rings(),
                "size128_cache": (128, 8)}     # kmalloc(sizeof(transaction_t)): the
                                               # running transactions start_this_handle makes
        out = {}
        for name, (objsize, count) in held.items():
            limit, _, shared = slab_limits(objsize)
            out[name] = (objsize, count + self.cpus * limit + shared)
        return out

    def _slab_list_bytes(self):
        """The slab lists' FIFOs (a pointer for every object of every CPU's memory) and the
        room for free objects that _cache_sizes adds to each CPU's memory."""
        out = 0
        for objsize, count in self._cache_sizes().values():
            limit, _, shared = slab_limits(objsize)
            out += 4 * count * self.cpus + objsize * (self.cpus * limit + shared) * self.cpus
        return out

    def _io_rings(self):
        """The slab caches of the I/O a write-back makes: {name: (object size, objects a
        CPU may grow the cache by)}. The disk's interrupt frees them on the CPU that takes
        it (IRQ_CPU), into that CPU's array, whose full array passes a batch to the shared
        array or the slab lists, where the writers' CPUs refill from (mm/slab.c: no object
        is handed out twice); as 2.6.12 grows a cache on demand (cache_grow), the count is
        only a bound on the memory: as many as the Kernel's writes could ever hold (a bio
        and bio_vec a page written back, a request, as_rq, command and scatterlist a
        request), and a run that needs more faults."""
        bios = self.max_records + 4 * self.request_pages
        requests = 2 * self.max_records // self.request_pages + 64
        return {"bio_slab": (128, bios),            # sizeof(struct bio), cache-line aligned
                "biovec_slab": (16, bios),          # biovec-1: one bio_vec
                "request_cachep": (REQUEST_SIZE, requests),
                "arq_pool": (64, requests),         # as_rq, 60 bytes, cache-line aligned
                "scsi_cmd_cache": (CMD_SIZE, requests),
                "sgpool_cache": (SG_SIZE * SG_POOL_MAX, requests)}

    def _io_ring_bytes(self):
        return sum(size * count + PAGE for size, count in self._io_rings().values())

    def _build_zone(self, pages, frames):
        """A zone: ``pages`` never-used pages (struct pages; ``frames`` frames behind them,
        page p on frame p mod frames), empty LRU lists, a wait table of 4096 empty
        queues."""
        zone = self._alloc(ZONE_SIZE, align=128)
        table = self._alloc(WAIT_TABLE_ENTRIES * WAIT_QUEUE_HEAD)
        heads = np.zeros((WAIT_TABLE_ENTRIES, 3), np.uint32)
        addresses = table + WAIT_QUEUE_HEAD * np.arange(WAIT_TABLE_ENTRIES, dtype=np.uint64)
        heads[:, 0] = SPIN_FREE
        heads[:, 1] = heads[:, 2] = (addresses + 4).astype(np.uint32)   # empty list
        self._poke(table, heads.tobytes())
        mem_map = self._alloc(max(pages, 1) * PAGE_STRUCT)
        frame_base = self._alloc(frames * PAGE, align=PAGE) if frames else 0
        self._poke(zone + ZONE["LOCK"], _words(SPIN_FREE, mem_map, pages, mem_map, frame_base,
                                               0, max(frames - 1, 0)))
        for head in ("INACTIVE", "ACTIVE"):
            at = zone + ZONE[head]
            self._poke(at, _words(at, at))
        self._word(zone + ZONE["LRU_LOCK"], SPIN_FREE)
        self._poke(zone + ZONE["WAIT_TABLE"], _words(table, 12))
        if pages:
            self.mem_map, self.frames = mem_map, frame_base
        return zone

    def _build_highmem(self):
        """kmap_atomic's state (routines/x86/highmem_2612.S): zone_table's entry for the
        page cache's pages (the highmem zone if ``highmem``, else the normal one), the
        node's highmem zone, mem_map (the zone's first page), and the fixmap's page of PTEs,
        kmap_pte its last entry (the slots count down from it, KM_TYPE_NR a CPU)."""
        self._word(self.sym["zone_table"], self.zone if self.highmem else self.zone_normal)
        self._word(self.sym["highmem_zone"], self.zone)
        self._word(self.sym["mem_map"], self.mem_map)
        ptes = self._alloc(PAGE, align=PAGE)
        self._word(self.sym["kmap_pte"], ptes + PAGE - 4)

    def _build_task(self, k, file):
        """CPU k's iozone child: its kernel stack with thread_info at the bottom, its task,
        its descriptor table (fd 3: the file), its 4 KB record buffer."""
        stack = self.machine.alloc(KERNEL_STACK, align=KERNEL_STACK)
        task = self._alloc(TASK_SIZE, align=64)
        files = self._alloc(16 + 4 * 32)
        fds = files + 16
        self._poke(files, _words(1, 32, fds))
        self._word(fds + 4 * FD, file["file"])
        self._poke(task, _words(0, stack, stack + KERNEL_STACK, files, 0, DEFAULT_PRIO))
        self._word(task + TSK["RLIMIT_FSIZE"], 0xFFFFFFFF)
        self._poke(stack, _words(task, 0, 0, 0, k, 0))
        self._give_io_context(task, k, resumable=True)
        buf = self.machine.alloc(RECORD, bytes(range(256)) * (RECORD // 256), align=PAGE)
        ctx = self._alloc(32)
        self._poke(ctx, _words(task, FD, buf, RECORD, 0x5A5A5A5A))
        return {"ctx": ctx, "task": task, "stack": stack, "buf": buf}

    def _build_kthread(self, k, io_slot=None, resumable=False):
        """A kernel thread on CPU k (pdflush's, by default): its task and its kernel stack,
        thread_info at the bottom, its io_context (io_contexts[io_slot], pdflush's 8 + k);
        ``resumable``: a task whose sleeps the harness resumes. Returns the task."""
        stack = self.machine.alloc(KERNEL_STACK, align=KERNEL_STACK)
        task = self._alloc(TASK_SIZE, align=64)
        self._poke(task, _words(0, stack, stack + KERNEL_STACK, 0, 0, DEFAULT_PRIO))
        self._poke(stack, _words(task, 0, 0, 0, k, 0))
        self._give_io_context(task, 8 + k if io_slot is None else io_slot, resumable)
        return task
