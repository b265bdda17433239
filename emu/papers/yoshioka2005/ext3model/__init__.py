"""The kernel under iozone's write test, as guest x86 code: Linux 2.6.12's write() of a 4 KB
record into an ext3 file (ordered mode), from the system call to the page cache, the
buffer heads, the block allocator and the journal (JBD), with __copy_from_user_ll in the
middle. The routines are ``routines/x86/*_2612.S`` (one per kernel source file, each naming
the functions it stands for); this package lays out the structures they touch in guest
memory and starts them.

    >>> from emu.papers.yoshioka2005 import ext3model
    >>> k = ext3model.Kernel("2.6.12")                  # doctest: +SKIP
    >>> run = k.write_records(256)                      # 256 write()s of 4 KB
    >>> k.check()                                       # the file system is consistent

What a write() does here, in the order 2.6.12 does it (mm/filemap.c
generic_file_buffered_write, fs/ext3/inode.c, fs/buffer.c, fs/jbd/*.c):

1. ``system_call``: switch to the task's kernel stack (entry.S), ``sys_write`` ->
   ``generic_file_aio_write`` (the inode's i_sem) -> ``generic_file_buffered_write``;
2. ``__grab_cache_page``: a radix-tree look-up that misses, a page from the per-CPU free
   list (``buffered_rmqueue``), ``add_to_page_cache`` (the tree's lock, the node, the
   page's fields) and the LRU pagevec;
3. ``ext3_prepare_write``: ``journal_start`` (the journal's and the transaction's spin
   locks), ``block_prepare_write``: ``create_empty_buffers`` (a buffer head from the slab),
   ``ext3_get_block``: the double-indirect path (``__getblk`` of two indirect blocks),
   ``ext3_new_block`` (the block bitmap under ``journal_get_undo_access``, the group
   descriptor under ``journal_get_write_access``, each ``journal_dirty_metadata``), the
   splice into the indirect block and ``ext3_mark_inode_dirty`` (the inode table block);
   ``unmap_underlying_metadata`` (``__find_get_block_slow`` in the block device's tree);
4. the copy: ``__copy_from_user_ll`` (the kernel under test: 2.6.12's or the patched);
5. ``ext3_ordered_commit_write``: ``journal_dirty_data`` (a new journal head, filed on the
   transaction's data list under ``j_list_lock``), ``generic_commit_write`` (the buffer
   and page dirty, the radix tree's dirty tag, i_size and ``ext3_dirty_inode``),
   ``journal_stop``.

Memory is recycled as a kernel under memory pressure recycles it: page-cache pages come
from a zone of 128 MB per CPU, reclaimed 32 at a time (SWAP_CLUSTER_MAX) by
``shrink_list`` from the tail of the inactive list, so the page, its buffer head and its
journal head come back cold (their frames are shared 8 MB apart: ``FRAME_BYTES``); buffer
heads, journal heads and radix-tree nodes go back to their slab caches' per-CPU LIFO
arrays and come out warm; an object freed on another CPU (the disk's interrupt frees the
bios the writers took) goes to that CPU's array, and from a full one in batches to the
shared array and the slab lists, where the other CPUs refill from (mm/slab.c: no object is
handed out twice). Each file's blocks come from block groups of its own, one after
the other. What is left out is listed in ``LEFT_OUT``.

Paced writes (``Kernel.paced_writes``: a write per CPU every period, as a disk sets the
pace) run the writers' writeback as the mail's throttled writers do (``writer_chunks``, as
yoshioka2005.write_profile builds them): once every ``chunk_period`` writes a CPU's writer
writes a chunk of the oldest dirty file's pages back in its own write()
(``routines/x86/fs_writeback_2612.S``: the inode walk, mpage_writepages' tagged gang
look-up, ext3's writepage and its journal handle, then ``submit_bh`` through the block
layer, ``routines/x86/block_2612.S``, where the bio joins the file's request in the disk's
queue, or starts one), the files' dirty pages beginning ``DIRTY_FRACTION`` of a child's
page cache behind its newest (without ``writer_chunks``, pdflush's per-page stand-in writes
one page back in each pause). Each pause holds a turn of kjournald's commit over the transaction's data list
(``routines/x86/commit_2612.S``: the buffer at its head, half a commit interval old, unfiled
or written), every ``meta_every`` writes the log write of a metadata buffer
(``routines/x86/commit_meta_2612.S``: the rest of the commit, at the pace a 5 s interval's
writes dirty metadata, ``Kernel.pace_metadata``), then 2.6.12's idle loop to its ``hlt``
(``routines/x86/idle_2612.S``), halted until the next write is due. Each CPU takes the
local APIC timer's tick every 1/HZ s of its clock (``tick_cycles`` of the profile's
clock), halted or busy (``routines/x86/tick_2612.S``: the per-CPU statistics, the
scheduler's tick and idle balancing over the runqueues, the timer softirq, on CPU 0 also
do_timer): a tick in a halt ends it and the idle loop halts again after it; one that falls
in a guest call runs at the call's end. Before the writeback,
the disk's interrupt ends each request due (``routines/x86/scsi_2612.S``: from
``common_interrupt`` through the SCSI softirq to ``end_page_writeback`` of each of its pages),
on ``IRQ_CPU`` for every writer's requests; a request the file's next bio could not join
goes to the disk's driver, and is due ``REQUEST_PAGES / MAIL_WRITERS`` writes later.

Offsets: the fields are 2.6.12's, in its order, with i386 sizes (no spinlock debugging,
no CONFIG_LBD, no CONFIG_PREEMPT's break_lock: ``config`` says which options the kernel is
built with and why; CONFIG_PREEMPT is an estimate, ``PREEMPT``, the routines following
either value); where a structure is long (journal_t, struct inode)
only the fields the routines touch are placed, at the offsets the fields before them
give. Object sizes are 2.6.12's: buffer_head 48, journal_head 48, handle 20, struct page
32, radix_tree_node 276 bytes.

The package, by concept (every name is also here, where the chapter and the tests use it):
``structures`` (2.6.12's structures' offsets and sizes, the file system's geometry),
``program`` (the guest program: its routines, their equates, ``LEFT_OUT``), ``pacing`` (the
paced runs' estimates and the disk's pace), ``journal`` (the log's arithmetic, the journal,
its timer and lock-down), ``commit`` (kjournald's commit: its data loop, metadata and whole
commit), ``memory`` (the slab caches, the zone, the tasks), ``filesystem`` (the block device,
groups, files and cached metadata), ``writeback`` (pdflush's writeback, the throttled
writer's, and the disk's requests), ``kupdate`` (wb_kupdate's pass), ``checkpoint`` (the log's checkpoint,
log_do_checkpoint, its sleeps on I/O ended by the disk), ``runs`` (plain and paced runs, the
idle loop), ``tick`` (the timer tick),
``prefill`` and ``check``, ``config`` (the kernel's configuration); ``kernel`` holds the Kernel class, made of their parts.
"""
from __future__ import annotations

from .structures import (AC, ADDR_PER_BLOCK, AOPS, ARQ, ARQ_SIZE, AS, AS_HASH_SHIFT, BDEV,
                         BDEV_SIZE, BDI, BDI_SIZE, BH, BH_BITS, BH_LRU_SIZE, BH_SIZE, BIO, BIO_SIZE,
                         BJ, BLKDEV_MAX_RQ, BLOCKS_PER_GROUP, BVEC, BVEC_SIZE, CMD, CMD_SIZE, CTX,
                         DATA_PER_GROUP, DATA_START_BIT, DEFAULT_PRIO, DEF_TIMESLICE, DIND_START,
                         DISK_IRQ, DK, DS, EI, EXT3_STATE_NEW, F, FBC_BATCH, FD, FILES, FILE_SIZE,
                         FIRST_INDEX, FMODE_WRITE, FRAME_BYTES, GD, GROUP_NO, GROUP_START, H,
                         HANDLE_SIZE, HARDIRQ_OFFSET, HOST, I, INODES_PER_GROUP, INODE_SIZE,
                         INODE_TABLE_BLOCKS, IRQD, IRQ_DESC_SIZE, I_DIRTY, I_STATE_BITS, J, JH, JH_SIZE,
                         JOURNAL_SIZE, JSB, KC, KC_SIZE, KERNEL_STACK, MAPPING_SIZE, MAX_PRIO,
                         MAX_TRANSACTION_BUFFERS, META_SLOTS, MM, MM_SIZE, NR_WRITE, PAGE,
                         PAGEVEC_SIZE, PAGE_CACHE_BYTES, PAGE_STRUCT, PCPU, PCPU_SIZE,
                         PCP_STACK_MAX, PG, PG_BITS, PRIO_ARRAY_SIZE, PS, PT_ORIG_EAX, Q,
                         QUEUE_SIZE, RADIX_HEIGHT, RADIX_NODE, RAW, RAW_INODE, RCP, RCU,
                         RCU_INITIAL_BATCH, RECORD, REQUEST_SIZE, REQ_FLAGS, REVOKE_HASH, RN, RQ,
                         RQS, RR, RT, RUNQUEUE_SIZE, RW_LOCK_BIAS, SB, SB_SIZE, SCHED_LOAD_SCALE,
                         SCSI_SOFTIRQ, SD, SD_CPU_INIT, SG, SGRP, SGRP_SIZE, SG_POOL_MAX, SG_SIZE,
                         SOFTIRQ_OFFSET, SPIN_FREE, SWAP_CLUSTER_MAX, S_IFBLK, S_IFREG_644, T, TASK_SIZE, TI,
                         TIF_NEED_RESCHED, TIMER, TIMER_MAGIC, TIMER_SIZE, TIMER_SOFTIRQ, TK,
                         TK_SIZE, TRANSACTION_SIZE, TSK, TVB, TVB_SIZE, T_STATES, VFS, VSB,
                         VSB_SIZE, SEM, SOPS, WBC, PF_FLUSHER, WAIT_QUEUE_HEAD,
                         WAIT_TABLE_ENTRIES, XTIME, ZONE, ZONE_SIZE, _words, IOC, IOC_SIZE,
                         BLK_BATCH_REQ,
                         slab_limits)
from .program import KERNELS, LATE_CACHES, LEFT_OUT, ROUTINES, equates, source
from .pacing import (COMMIT_INTERVAL_S, DIRTY_FRACTION, HIGHMEM, IRQ_CPU, KJOURNALD_CPU,
                     MAIL_WRITERS, MEMORY_MB, REQUEST_PAGES, STAGGER, PacedRuns, disk_warm_writes,
                     estimate_ranges, request_pages)
from .config import PREEMPT
from .journal import (BLOCK_TAG, JOURNAL_HEADER, LOG_BLOCKS, LOG_START, MIN_LOG_RESERVED_BLOCKS,
                      TAG_UUID, checkpoint_below, log_blocks_per_commit, log_space_left,
                      tags_per_descriptor)
from .writeback import chunk_period, ratelimit_pages, sync_writeback_pages, writer_chunk_pages
from .tick import CLOCK_TICK_RATE, HZ, cyc2ns_scale, tick_cycles, tick_nsec
from .kernel import Kernel
