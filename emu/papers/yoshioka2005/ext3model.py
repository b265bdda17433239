"""The kernel under iozone's write test, as guest x86 code: Linux 2.6.12's write() of a 4 KB
record into an ext3 file (ordered mode), from the system call to the page cache, the
buffer heads, the block allocator and the journal (JBD), with __copy_from_user_ll in the
middle. The routines are ``routines/x86/*_2612.S`` (one per kernel source file, each naming
the functions it stands for); this module lays out the structures they touch in guest
memory and starts them.

    >>> from emu import ext3model
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
pace) fill each pause with what the CPU does there: writeback of one page of the child's
file (``routines/x86/writeback_2612.S``: pdflush's page work in ext3's writepage and its
journal handle, then ``submit_bh`` through the block layer, ``routines/x86/block_2612.S``,
where the bio joins the file's request waiting in the disk's queue, or starts one), the page
``DIRTY_FRACTION`` of the child's page cache behind its
newest, a turn of kjournald's commit over the transaction's data list
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
no CONFIG_LBD, no CONFIG_PREEMPT); where a structure is long (journal_t, struct inode)
only the fields the routines touch are placed, at the offsets the fields before them
give. Object sizes are 2.6.12's: buffer_head 48, journal_head 48, handle 20, struct page
32, radix_tree_node 276 bytes.
"""
from __future__ import annotations

import numpy as np

from ...context import routine
from ...hw import cache as hwcache
from ...hw import estimates
from ...hw.faults import GuestHalted
from ...isa.assemble import assemble
from ...run.machine import Machine
from . import usercopy

PAGE = 4096
KERNEL_STACK = 8192                 # THREAD_SIZE: thread_info at the bottom of the stack
RECORD = 4096                       # iozone's default record (iozone.c: reclen 4096 without -r)
PAGE_CACHE_BYTES = 128 << 20        # the zone's pages per CPU: the per-page structures of
                                    # 128 MB of page cache (struct page, buffer head, journal
                                    # head, a 64th of a radix node: 4.3 MB) are twice the L2
                                    # and L3 together, so reclaim finds them cold, as it does
                                    # on a machine with GBs of page cache
FRAME_BYTES = 8 << 20               # distinct page frames per CPU (4 x the 2 MB L3): frames
                                    # are shared by struct pages 8 MB apart; a page's bytes
                                    # are never read back, and its frame was last written 8 MB
                                    # of copying before, as a frame of its own would have been
SWAP_CLUSTER_MAX = 32               # include/linux/swap.h: pages reclaimed per batch
PAGEVEC_SIZE = 14                   # include/linux/pagevec.h
FIRST_INDEX = 1 << 19               # the file's page index at the start: 2 GB into the
                                    # 8000 MB file (2,048,000 pages), in the double-indirect
                                    # range of a 4 KB-block ext3 file (pages 1036 to
                                    # 1,049,611; beyond it one more indirect level)
DIND_START = 12 + 1024              # blocks mapped by i_data[0..11] and the indirect block
ADDR_PER_BLOCK = 1024
BLOCKS_PER_GROUP = 32768            # 8 x 4096 bits of one bitmap block
GROUP_NO = 32                       # the block group of the files' inodes (a group far in)
GROUP_START = GROUP_NO * BLOCKS_PER_GROUP
DATA_START_BIT = 1024               # a group's data blocks: after its bitmaps and inode table
                                    # (bits 0-513) and, in the inodes' group, the run's
                                    # indirect blocks
DATA_PER_GROUP = BLOCKS_PER_GROUP - DATA_START_BIT

KERNELS = {"2.6.12": "x86/copy_from_user_ll.S", "patched": "x86/copy_from_user_ll_nt.S"}
LATE_CACHES = ("size128_cache",)    # built after the rest of the kernel (_build_commit_state)
#: the CPU whose pause starts a commit (Kernel.commit_pending): kjournald is one thread;
#: the model's is on CPU 0, where the disk's interrupts come (IRQ_CPU)
KJOURNALD_CPU = 0
ROUTINES = ("x86/entry_2612.S", "x86/spinlock_2612.S", "x86/jbd_2612.S", "x86/buffer_2612.S",
            "x86/ext3_2612.S", "x86/mm_2612.S", "x86/vfs_2612.S", "x86/iozone_write.S",
            "x86/idle_2612.S", "x86/writeback_2612.S", "x86/commit_2612.S",
            "x86/block_2612.S", "x86/scsi_2612.S", "x86/commit_meta_2612.S",
            "x86/timer_2612.S", "x86/checkpoint_2612.S", "x86/revoke_2612.S",
            "x86/block_dev_2612.S", "x86/tick_2612.S")

LEFT_OUT = (
    "kmap_atomic of a highmem page (a PTE write and invlpg per page; the x86 model has no MMU)",
    ("of kjournald's commit (paced writes only: one commit, started in kjournald's first "
     "pause (Kernel.commit_pending), its data loop a turn per page written, its metadata a "
     "buffer at a time at the pace a 5 s interval's writes dirty it, not after its data as "
     "2.6.12's phases order them): its end and the next commit's start, in no paced run "
     "(a whole commit runs on its own, Kernel.whole_commit, and the scored runs take their "
     "share of its once-a-commit work: yoshioka2005.commit_once_events), the commit timer "
     "firing (run_timer_softirq, commit_timeout's wake_up_process; add_timer and "
     "del_timer_sync run), a checkpoint forced by the log's space (none in runs this long, "
     "some in the mail's: yoshioka2005.mail_journal), the metadata's write-back in "
     "paced runs (the model's metadata pages belong to no mapping there, so a buffer "
     "leaving the journal sets only its page's dirty bit: wb_kupdate writes them back once "
     "dirty_expire_centisecs old, yoshioka2005.mail_writeback, and the scored runs take "
     "their share of it, Kernel.write_back_metadata)"),
    ("the disk's own timing: its driver takes a request when it can grow no more "
     "(REQUEST_PAGES, an estimate) and its interrupt ends it a quarter of that many writes "
     "later (the mail's rate); kjournald's own writes end at once, on its CPU"),
    ("the disk's interrupt's CPU moving: kirqd moves it at most every 5 s and the runs are "
     "shorter, so one CPU (IRQ_CPU) takes them all"),
    ("of the anticipatory elevator: its sort tree, front merges and anticipation (the queue's "
     "list stands for its FIFO); the unplug timer; the I/O APIC's acknowledgement and the "
     "adapter's registers"),
    "the disk: write() returns once the data is in the page cache",
    "pdflush's scheduling: each CPU's pdflush writes back in that CPU's pauses",
    "ext3's block reservation windows (one window search per ~1000 blocks)",
    ("balance_dirty_pages' throttling (a writer over vm_dirty_ratio writes back itself and "
     "sleeps): the runs stay under it"),
    ("the scheduler's switches and other tasks (kjournald, kswapd, pdflush): paced writes "
     "(Kernel.paced_writes) run the idle loop to its hlt, but neither the schedule() either "
     "side of it nor the wake-up (the runqueue's nr_running and nr_iowait are set from "
     "outside)"),
    ("of the timer tick (routines/x86/tick_2612.S; paced writes only, every 1/HZ s of each "
     "CPU's clock): in back-to-back runs (a guest call cannot be interrupted, and those runs "
     "are one call a CPU); a tick that comes while the CPU is busy waits for the end of that "
     "guest call (a write, or a piece of a pause's work) and runs on the writer's stack; "
     "ack_APIC_irq's EOI write; IRQ0's own interrupt on CPU 0 (its do_IRQ, irq_desc and "
     "I/O APIC, mark_offset_tsc's PIT reads: do_timer runs in an entry of its own just "
     "before CPU 0's local tick); rcu_check_callbacks and RCU's tasklet (the model has no "
     "RCU work pending: rcu_pending is tested); a timer firing or cascading (none due in a "
     "run); find_busiest_queue and move_tasks (no runqueue holds more than one task, so "
     "find_busiest_group finds none busier); the SMT sibling domain of CONFIG_SCHED_SMT "
     "(whether the mail's CPUs had Hyper-Threading is not known); scheduler_tick's "
     "interactive round robin and a used-up slice's requeue (a new slice is given); "
     "calc_load's averages every 5001 ticks and second_overflow once a second"),
    "file_update_time (mtime changes once per second: one ext3_dirty_inode per second)",
)

# ------------------------------------------------------------------ structures

# struct buffer_head (include/linux/buffer_head.h)
BH = dict(STATE=0, THIS_PAGE=4, PAGE=8, COUNT=12, SIZE=16, BLOCKNR=20, DATA=24, BDEV=28,
          END_IO=32, PRIVATE=36, ASSOC=40)
BH_SIZE = 48
# enum bh_state_bits, then jbd's (include/linux/jbd.h) from BH_PrivateStart
BH_BITS = dict(Uptodate=0, Dirty=1, Lock=2, Req=3, Mapped=4, New=5, Async_Write=7,
               PrivateStart=13,
               JBD=13, JWrite=14, Freed=15, Revoked=16, RevokeValid=17, JBDDirty=18,
               State=19, JournalHead=20)
# struct journal_head (include/linux/journal-head.h 14-87 of 2.6.12.1): b_modified after
# b_jlist; the slab packs the 52-byte objects back to back (journal.c 1639-1642 creates the
# cache with no flags, so kmem_cache_create aligns them to a word: mm/slab.c 1265-1274, 1334)
JH = dict(BH=0, JCOUNT=4, JLIST=8, MODIFIED=12, FROZEN=16, COMMITTED=20, TRANSACTION=24,
          NEXT_T=28, TNEXT=32, TPREV=36, CP_T=40, CPNEXT=44, CPPREV=48)
JH_SIZE = 52
BJ = dict(NONE=0, SYNCDATA=1, METADATA=2, FORGET=3, IO=4, SHADOW=5, LOGCTL=6, RESERVED=7,
          LOCKED=8)
# handle_t (struct handle_s)
H = dict(TRANSACTION=0, CREDITS=4, REF=8, ERR=12, FLAGS=16)
HANDLE_SIZE = 20
# transaction_t (struct transaction_s)
T = dict(JOURNAL=0, TID=4, STATE=8, LOG_START=12, NR_BUFFERS=16, RESERVED=20, LOCKED=24,
         BUFFERS=28, SYNC_DATA=32, FORGET=36, CHECKPOINT=40, IOBUF=44, SHADOW=48, LOG=52,
         HANDLE_LOCK=56, UPDATES=60, OUTSTANDING=64, CPNEXT=68, CPPREV=72, EXPIRES=76,
         HANDLE_COUNT=80)
TRANSACTION_SIZE = 84
# journal_t (struct journal_s): the fields the write path touches, at their offsets
J = dict(FLAGS=0, ERRNO=4, STATE_LOCK=20, BARRIER_COUNT=24, RUNNING=48, COMMITTING=52,
         WAIT_UPDATES=120, HEAD=152, TAIL=156, FREE=160, FIRST=164, LAST=168, DEV=172,
         LIST_LOCK=192, UUID=216, MAX_BUFFERS=236, COMMIT_INTERVAL=240,
         CHECKPOINT_TRANSACTIONS=56, WAIT_TRANSACTION_LOCKED=60, WAIT_LOGSPACE=72,
         WAIT_DONE_COMMIT=84,                # include/linux/jbd.h 669-675
         TRANSACTION_SEQUENCE=204, COMMIT_SEQUENCE=208,
         COMMIT_TIMER=244,            # j_commit_timer: a struct timer_list *
         REVOKE=272, REVOKE_TABLE=276,    # j_revoke, j_revoke_table[2]
         WBUF=284, WBUFSIZE=288,      # after j_commit_timer, j_revoke_lock, j_revoke,
                                      # j_revoke_table[2]
         # the model's: journal_commit_transaction's phase-3 locals, kept across the turns
         # of a commit (routines/x86/commit_meta_2612.S), and the log's control buffers
         C_DESC=296, C_TAGP=300, C_SPACE=304, C_FIRST=308, C_TAG=312, C_COMMIT=316,
         C_CTL=320, C_CTLNEXT=328)
JOURNAL_SIZE = 384
# struct jbd_revoke_table_s (fs/jbd/revoke.c 89-96); JOURNAL_REVOKE_DEFAULT_HASH
# (include/linux/jbd.h 949): 256 hash heads of 8 bytes; struct timer_list's expires
RT = dict(HASH_SIZE=0, HASH_SHIFT=4, HASH_TABLE=8)
REVOKE_HASH = 256
TIMER = dict(ENTRY=0, EXPIRES=8, LOCK=12, MAGIC=16, FUNCTION=20, DATA=24, BASE=28)
TIMER_SIZE = 32                     # struct timer_list (include/linux/timer.h 11-22)
TIMER_MAGIC = 0x4B87AD6E
# tvec_base_t (kernel/timer.c 68-77 of 2.6.12.1): a CPU's timer lists, tv1's 256 heads and
# tv2-tv5's 64 each; ____cacheline_aligned_in_smp: 128 bytes for MPENTIUM4
# (arch/i386/Kconfig 365-367, X86_L1_CACHE_SHIFT 7)
TVB = dict(LOCK=0, TIMER_JIFFIES=4, RUNNING_TIMER=8, TV1=12, TV2=12 + 8 * 256,
           TV3=12 + 8 * 320, TV4=12 + 8 * 384, TV5=12 + 8 * 448)
TVB_SIZE = 12 + 8 * 512
T_STATES = dict(RUNNING=0, LOCKED=1, RUNDOWN=2, FLUSH=3, COMMIT=4, FINISHED=5)
# struct page (include/linux/mm.h, i386, HIGHMEM with hashed page_address)
PG = dict(FLAGS=0, COUNT=4, MAPCOUNT=8, PRIVATE=12, MAPPING=16, INDEX=20, LRU_NEXT=24,
          LRU_PREV=28)
PAGE_STRUCT = 32
PG_BITS = dict(locked=0, error=1, referenced=2, uptodate=3, dirty=4, lru=5, active=6,
               private=12, writeback=13, reclaim=18)
# struct radix_tree_node (lib/radix-tree.c, RADIX_TREE_MAP_SHIFT 6)
RN = dict(COUNT=0, SLOTS=4, TAGS=260)
RADIX_NODE = 276
RADIX_HEIGHT = 4                    # 64^3 < 2,048,000 pages <= 64^4
# struct address_space (include/linux/fs.h) with its radix_tree_root
AS = dict(HOST=0, PAGE_TREE=4, TREE_LOCK=16, NRPAGES=48, A_OPS=56, BDI=64, PRIVATE_LOCK=68)
# struct backing_dev_info (include/linux/backing-dev.h), the block device's queue's
BDI = dict(RA_PAGES=0, STATE=4, CAPABILITIES=8)
BDI_SIZE = 24
# struct page_state (include/linux/page-flags.h): the first members, per CPU
PS = dict(NR_DIRTY=0, NR_WRITEBACK=4, NR_UNSTABLE=8, NR_PAGE_TABLE_PAGES=12, NR_MAPPED=16,
          NR_SLAB=20, PGPGIN=24, PGPGOUT=28)
# struct bio (include/linux/bio.h, no CONFIG_LBD: a 4-byte sector_t) and struct bio_vec
BIO = dict(SECTOR=0, NEXT=4, BDEV=8, FLAGS=12, RW=16, VCNT=20, IDX=22, PHYS_SEGMENTS=24,
           HW_SEGMENTS=26, SIZE=28, HW_FRONT_SIZE=32, HW_BACK_SIZE=36, MAX_VECS=40,
           IO_VEC=44, END_IO=48, CNT=52, PRIVATE=56, DESTRUCTOR=60, SET=64)
BIO_SIZE = 68
BVEC = dict(PAGE=0, LEN=4, OFFSET=8)
BVEC_SIZE = 12
# struct request (include/linux/blkdev.h): the fields the block layer's routines touch, in
# its order
RQ = dict(QUEUELIST=0, FLAGS=8, SECTOR=12, NR_SECTORS=16, CURRENT_NR_SECTORS=20,
          HARD_SECTOR=24, HARD_NR_SECTORS=28, HARD_CUR_SECTORS=32, BIO=36, BIOTAIL=40,
          ELEVATOR_PRIVATE=44, RQ_STATUS=48, RQ_DISK=52, ERRORS=56, START_TIME=60, NR_PHYS_SEGMENTS=64,
          BUFFER=72, REF_COUNT=76, Q=80, RL=84, WAITING=88, SPECIAL=92, END_IO=96)
REQUEST_SIZE = 160
# request_queue_t: its request list (count, starved, wait queues), the queue (noop's list),
# the fields generic_make_request and __make_request read; the lock on a line of its own
Q = dict(QUEUE_HEAD=0, LAST_MERGE=8, QUEUE_LOCK=12, RQ_COUNT=16, RQ_STARVED=24, RQ_WAIT=32,
         NR_REQUESTS=56, CONGESTION_ON=60, CONGESTION_OFF=64, MAKE_REQUEST_FN=68,
         REQUEST_FN=72, BOUNCE_PFN=76, MAX_HW_SECTORS=80, QUEUE_FLAGS=84, MAX_SECTORS=88,
         MAX_PHYS_SEGMENTS=92, MAX_HW_SEGMENTS=96, LOCK=128)
QUEUE_SIZE = 192
BLKDEV_MAX_RQ = 128                 # include/linux/blkdev.h: nr_requests
# the anticipatory elevator's struct as_rq (drivers/block/as-iosched.c), i386
ARQ = dict(REQUEST=0, AD=4, IO_CONTEXT=8, RB_NODE=12, RB_KEY=24, HASH=28, ON_HASH=36, FIFO=40,
           EXPIRES=48, IS_SYNC=52, STATE=56)
ARQ_SIZE = 60
AS_HASH_SHIFT = 6                   # as-iosched.c: as_hash_shift, 64 buckets
# struct request's flags (include/linux/blkdev.h, enum rq_flag_bits): masks
REQ_FLAGS = dict(SOFTBARRIER=4, HARDBARRIER=8, NOMERGE=32, STARTED=64, DONTPREP=128)
# struct scsi_cmnd (include/scsi/scsi_cmnd.h): the fields the routines touch, placed in
# its first line (eh_entry first); struct scatterlist (include/asm-i386/scatterlist.h)
CMD = dict(EH_ENTRY=0, DEVICE=8, REQUEST=12, USE_SG=16, BUFFER=20, BUFFLEN=24, CMND=28,
           CMD_LEN=44, RESULT=48, SERIAL=52, DONE=56)
CMD_SIZE = 64
SG = dict(PAGE=0, OFFSET=4, LENGTH=8, DMA_ADDRESS=12, DMA_LENGTH=16)
SG_SIZE = 20
SG_POOL_MAX = 128                   # scsi_lib.c: the largest sgpool, SCSI_MAX_PHYS_SEGMENTS
# the SCSI host (struct Scsi_Host's lock, host_busy and serial) and its adapter's mailbox
# and completion slot (the stand-in driver's); the disk's irq_desc_t (its action's handler
# and dev_id in it), 128 bytes apart (____cacheline_aligned on a Pentium 4 build)
HOST = dict(LOCK=0, BUSY=4, SERIAL=8, MAILBOX=12, DONE=16)
IRQD = dict(STATUS=0, HANDLER=4, DEV_ID=8, LOCK=12)
IRQ_DESC_SIZE = 128
DISK_IRQ = 24                       # an I/O APIC pin above the ISA sixteen
HARDIRQ_OFFSET = 1 << 16            # include/linux/hardirq.h: HARDIRQ_SHIFT 16
SOFTIRQ_OFFSET = 1 << 8             # SOFTIRQ_SHIFT 8
SCSI_SOFTIRQ = 4                    # include/linux/interrupt.h: HI, TIMER, NET_TX, NET_RX, SCSI
PT_ORIG_EAX = 0x24                  # arch/i386/kernel/entry.S: ORIG_EAX, the frame SAVE_ALL builds
# struct gendisk: the queue's accounting (its per-CPU disk_stats are in the per-CPU area)
DK = dict(IN_FLIGHT=0, STAMP=4, STAMP_IDLE=8)
DS = dict(READ_SECTORS=0, WRITE_SECTORS=4, READS=8, WRITES=12, READ_MERGES=16,
          WRITE_MERGES=20, READ_TICKS=24, WRITE_TICKS=28, IO_TICKS=32, TIME_IN_QUEUE=36)
RR = dict(HEIGHT=0, GFP=4, RNODE=8)  # struct radix_tree_root, at AS_PAGE_TREE
# struct address_space_operations: writepage first, prepare_write and commit_write after
# six pointers
AOPS = dict(WRITEPAGE=0, PREPARE_WRITE=24, COMMIT_WRITE=28)
MAPPING_SIZE = 84
# struct ext3_inode_info with struct inode (vfs_inode) and its address_space (i_data)
EI = dict(DATA=0, DIND=52, FLAGS=60, FILE_ACL=64, DIR_ACL=68, DTIME=72, BLOCK_GROUP=76, STATE=80,
          LAST_ALLOC_LOGICAL=84, LAST_ALLOC_PHYSICAL=88, DISKSIZE=132, EXTRA_ISIZE=140,
          TRUNCATE_SEM=144)
VFS = 164                           # struct inode inside ext3_inode_info
I = dict(INO=VFS + 32, COUNT=VFS + 36, MODE=VFS + 40, NLINK=VFS + 44, UID=VFS + 48,
         GID=VFS + 52, SIZE=VFS + 60, ATIME=VFS + 68, MTIME=VFS + 76, CTIME=VFS + 84,
         BLKBITS=VFS + 92, BLOCKS=VFS + 104, BYTES=VFS + 108, LOCK=VFS + 112,
         SEM=VFS + 116, SB=VFS + 160, FLOCK=VFS + 164, MAPPING=VFS + 168, I_DATA=VFS + 172,
         STATE=VFS + 300, GENERATION=VFS + 320)
INODE_SIZE = VFS + 360
EXT3_STATE_NEW = 8
I_DIRTY = 7                         # I_DIRTY_SYNC | I_DIRTY_DATASYNC | I_DIRTY_PAGES
# struct ext3_inode, on disk (include/linux/ext3_fs.h): 128 bytes in the inode table
RAW = dict(MODE=0, UID=2, SIZE=4, ATIME=8, CTIME=12, MTIME=16, DTIME=20, GID=24, LINKS=26,
           BLOCKS=28, FLAGS=32, BLOCK=40, GENERATION=100, FILE_ACL=104, DIR_ACL=108)
RAW_INODE = 128
# struct ext3_group_desc
GD = dict(BLOCK_BITMAP=0, INODE_BITMAP=4, INODE_TABLE=8, FREE_BLOCKS=12, FREE_INODES=14)
# super_block + ext3_sb_info, folded into one block: the fields the routines read
SB = dict(FLAGS=0, BLOCKSIZE=4, BDEV=8, JOURNAL=12, GROUP_DESC=16, FIRST_DATA_BLOCK=20,
          INODES_PER_GROUP=24, BLOCKS_PER_GROUP=28, FREE_LOCK=64, FREE_COUNT=68,
          BGL_LOCK=128)
SB_SIZE = 256
# the block device: its own address space (a radix tree the data blocks' look-ups fall out
# of) and the buffer heads of the metadata blocks it caches, (block, bh) pairs
META_SLOTS = 256
BDEV = dict(MAPPING=0, META_N=4, META=8, QUEUE=8 + 8 * META_SLOTS, DISK=12 + 8 * META_SLOTS,
            NR_SECTS=16 + 8 * META_SLOTS)   # then bd_disk's queue, the disk, its size
BDEV_SIZE = 20 + 8 * META_SLOTS
# struct file
F = dict(COUNT=0, FLAGS=4, POS=8, MAPPING=16, INODE=20, MODE=24)
FILE_SIZE = 32
# thread_info (include/asm-i386/thread_info.h) at the bottom of the kernel stack
TI = dict(TASK=0, FLAGS=8, STATUS=12, CPU=16, PREEMPT=20)
# task_struct: the fields used (journal_info is deep in the 2.6.12 struct)
TSK = dict(STATE=0, THREAD_INFO=4, ESP0=8, FILES=12, FLAGS=16, PRIO=20, RLIMIT_FSIZE=0x280, WCHAR=0x2c0,
           SYSCW=0x2c8, JOURNAL_INFO=0x2e0,
           # the scheduler's fields after prio (array, timestamp, sched_time, time_slice),
           # mm, and the CPU-time fields the tick reads (routines/x86/tick_2612.S)
           ARRAY=0x34, TIMESTAMP=0x3c, SCHED_TIME=0x4c, TIME_SLICE=0x60, FIRST_TIME_SLICE=0x64,
           MM=0x80, STIME=0x1a4, IT_PROF_EXPIRES=0x1c0, IT_VIRT_EXPIRES=0x1c4,
           IT_SCHED_EXPIRES=0x1c8)
FILES = dict(COUNT=0, MAX_FDS=4, FD=8)   # struct files_struct: fd -> struct file *
TASK_SIZE = 0x300
# kmem_cache_t (mm/slab.c): the object size, a per-CPU array (struct array_cache: a LIFO of
# freed objects) for each CPU, the cache's spinlock, the shared array (l3->shared, an
# array_cache too) and the slab lists' stand-in: a FIFO of the objects free_block gave back
# (a ring of pointers at FREE_BASE, as long as the cache has objects); each CPU's array also
# keeps the memory that CPU grows the cache from (NEXT: the next never-used object, END).
KC = dict(OBJSIZE=0, ARRAY=4, LOCK=36, SHARED=40, FREE_HEAD=44, FREE_TAIL=48, FREE_COUNT=52,
          FREE_BASE=56, FREE_END=60)  # ARRAY: 8 per-CPU pointers
KC_SIZE = 64
AC = dict(AVAIL=0, LIMIT=4, NEXT=8, START=12, END=16, BATCH=20, TOUCHED=24, ENTRY=32)


def slab_limits(objsize):
    """(limit, batchcount, shared array's limit) of a cache of ``objsize`` bytes on an SMP
    kernel: enable_cpucache and do_tune_cpucache (mm/slab.c 2697-2745, 2641-2695 of
    2.6.12.1): limit 120 up to 256 bytes, 54 to 1 KB, 24 to a page, 8 above it;
    batchcount (limit + 1) / 2; the shared array batchcount * 8 (objects up to a page)."""
    limit = (1 if objsize > 131072 else 8 if objsize > PAGE else 24 if objsize > 1024
             else 54 if objsize > 256 else 120)
    batch = (limit + 1) // 2
    return limit, batch, batch * 8 if objsize <= PAGE else 0
# the per-CPU area (__per_cpu_offset[cpu] points at it): bh_lrus, bh_accounting,
# balance_dirty_pages' ratelimits, the free-blocks percpu_counter's count, the zone's
# per_cpu_pages (a LIFO of free pages, pcp->count), radix_tree_preloads
PCPU = dict(BH_LRU=0, BH_LRU_PREV=-4, BH_LRU_LAST=28, BH_NR=32, RATELIMITS=36, FBC_COUNT=64,
            PCP_COUNT=128, PCP_STACK=132, RTP_NR=448, CPU_IDLE_STATE=480, IDLE_TIMESTAMP=484,
            PAGE_STATE=512, DISK_STATS=576,     # page_states (PS), the disk's disk_stats (DS)
            KSTAT_IRQ=616, SOFTIRQ_PENDING=620, SCSI_DONE_Q=624)  # kstat's disk irq count,
                                                # irq_stat's pending softirqs, scsi_done_q
# the per-CPU variables the timer tick touches (routines/x86/tick_2612.S), in a second part
# of each CPU's per-CPU area (tick_areas[cpu]), built after the rest of the kernel so as not
# to move it: kstat's cpustat (struct cpu_usage_stat, include/linux/kernel_stat.h 17-26: eight
# u64; its irqs[] follow in the kernel, the model's disk count is PCPU's KSTAT_IRQ),
# irq_stat's apic_timer_irqs (____cacheline_aligned, include/asm-i386/hardirq.h), apic.c's
# prof_counter, prof_multiplier and prof_old_multiplier, rcu_data and rcu_bh_data (RCU), the
# CPU's sched_domain (cpu_domains) and its runqueue (RQS)
TK = dict(CPUSTAT_USER=0, CPUSTAT_NICE=8, CPUSTAT_SYSTEM=16, CPUSTAT_SOFTIRQ=24,
          CPUSTAT_IRQ=32, CPUSTAT_IDLE=40, CPUSTAT_IOWAIT=48, CPUSTAT_STEAL=56,
          APIC_TIMER_IRQS=128, PROF_COUNTER=192, PROF_MULTIPLIER=196, PROF_OLD_MULTIPLIER=200,
          RCU_DATA=256, RCU_BH_DATA=320, SD=384, RQ=448)
# struct rcu_data (include/linux/rcupdate.h 87-102) and struct rcu_ctrlblk (64-68)
RCU = dict(QUIESCBATCH=0, PASSED_QUIESC=4, QS_PENDING=8, BATCH=12, NXTLIST=16, NXTTAIL=20,
           CURLIST=24, CURTAIL=28, DONELIST=32, DONETAIL=36, CPU=40)
RCP = dict(CUR=0, COMPLETED=4, NEXT_PENDING=8)
RCU_INITIAL_BATCH = -300            # kernel/rcupdate.c 51-54: rcu_ctrlblk's cur and completed
# struct sched_domain without CONFIG_SCHEDSTATS (include/linux/sched.h 478-496; a u64 is
# 4-aligned in an i386 struct) and struct sched_group (next, cpumask, cpu_power)
SD = dict(PARENT=0, GROUPS=4, SPAN=8, MIN_INTERVAL=12, MAX_INTERVAL=16, BUSY_FACTOR=20,
          IMBALANCE_PCT=24, CACHE_HOT_TIME=28, CACHE_NICE_TRIES=36, PER_CPU_GAIN=40,
          FLAGS=44, LAST_BALANCE=48, BALANCE_INTERVAL=52, NR_BALANCE_FAILED=56)
SGRP = dict(NEXT=0, CPUMASK=4, CPU_POWER=8)
SGRP_SIZE = 12
# struct runqueue (kernel/sched.c 200-238, CONFIG_SMP, no CONFIG_SCHEDSTATS); a prio_array
# is nr_active, a 5-word bitmap (MAX_PRIO 140) and 140 list heads: 1,144 bytes
PRIO_ARRAY_SIZE = 4 + 4 * 5 + 8 * 140
RQS = dict(LOCK=0, NR_RUNNING=4, CPU_LOAD=8, NR_SWITCHES=12, NR_UNINTERRUPTIBLE=20,
           EXPIRED_TIMESTAMP=24, TS_LAST_TICK=28, CURR=36, IDLE=40, PREV_MM=44, ACTIVE=48,
           EXPIRED=52, ARRAYS=56, BEST_EXPIRED_PRIO=56 + 2 * PRIO_ARRAY_SIZE,
           NR_IOWAIT=60 + 2 * PRIO_ARRAY_SIZE, SD=64 + 2 * PRIO_ARRAY_SIZE)
RUNQUEUE_SIZE = 88 + 2 * PRIO_ARRAY_SIZE
TK_SIZE = TK["RQ"] + RUNQUEUE_SIZE
# struct mm_struct: only the words update_mem_hiwater reads and writes, in one line (their
# 2.6.12 offsets are not placed)
MM = dict(RSS=0, TOTAL_VM=4, HIWATER_RSS=8, HIWATER_VM=12)
MM_SIZE = 64
# SD_CPU_INIT (include/linux/topology.h 107-127): the one domain of an SMP machine without
# SMT siblings; its flags SD_LOAD_BALANCE | BALANCE_NEWIDLE | BALANCE_EXEC | WAKE_AFFINE |
# WAKE_IDLE | WAKE_BALANCE (include/linux/sched.h 459-464)
SD_CPU_INIT = dict(MIN_INTERVAL=1, MAX_INTERVAL=4, BUSY_FACTOR=64, IMBALANCE_PCT=125,
                   CACHE_HOT_TIME=5 * 1000000 // 2, CACHE_NICE_TRIES=1, PER_CPU_GAIN=100,
                   FLAGS=1 | 2 | 4 | 16 | 8 | 32)
SCHED_LOAD_SCALE = 128              # include/linux/sched.h 457
MAX_PRIO = 140                      # include/linux/sched.h: MAX_RT_PRIO + 40
DEF_TIMESLICE = 100                 # kernel/sched.c: a nice-0 task's slice, ms (= jiffies)
HZ = 1000                           # include/asm-i386/param.h 5 (2.6.12: fixed; CONFIG_HZ
                                    # came in 2.6.13)
CLOCK_TICK_RATE = 1193182           # include/asm-i386/timex.h 15: the PIT's input clock
BH_LRU_SIZE = 8                     # fs/buffer.c
PCP_STACK_MAX = 72                  # pcp->high: 2.6.12 sets 6 x batch; ours holds a
                                    # reclaim batch (32) plus a bulk refill (16) and more
PCPU_SIZE = 640
# struct zone (include/linux/mmzone.h): the free pages (never-used memory of the pool, a
# stand-in for the buddy lists), the LRU lists under lru_lock (on its own cache line, as
# ZONE_PADDING puts it), the wait table; plus where the pool's struct pages and frames are
ZONE = dict(LOCK=0, FREE_NEXT=4, FREE_LEFT=8, MEM_MAP=12, FRAMES=16, PAGES_LOW=20,
            FRAME_MASK=24,
            LRU_LOCK=128, INACTIVE=132, NR_INACTIVE=140, ACTIVE=144, NR_ACTIVE=152,
            WAIT_TABLE=256, WAIT_BITS=260)
ZONE_SIZE = 320
WAIT_TABLE_ENTRIES = 4096           # wait_table_size(): at most 4096 queues of 12 bytes
WAIT_QUEUE_HEAD = 12
FBC_BATCH = 32                      # percpu_counter batch: NR_CPUS * 4 with NR_CPUS 8
# the iozone task's context, passed to the user loop
CTX = dict(TASK=0, FD=4, BUF=8, RECLEN=12, FILL=16)
NR_WRITE = 4                        # __NR_write on i386
TIF_NEED_RESCHED = 3                # include/asm-i386/thread_info.h
TIMER_SOFTIRQ = 1                   # include/linux/interrupt.h: HI_SOFTIRQ, TIMER_SOFTIRQ, ...


def tick_nsec(hz=HZ, clock_tick_rate=CLOCK_TICK_RATE):
    """TICK_NSEC (include/linux/jiffies.h 46-64 of 2.6.12.1): a tick's nanoseconds as the PIT
    can count them, SH_DIV(10^9, ACTHZ, 8), ACTHZ = SH_DIV(CLOCK_TICK_RATE, LATCH, 8) and
    LATCH = (CLOCK_TICK_RATE + HZ / 2) / HZ."""
    def sh_div(nom, den, lsh):
        return ((nom // den) << lsh) + (((nom % den) << lsh) + den // 2) // den
    latch = (clock_tick_rate + hz // 2) // hz
    return sh_div(1_000_000 * 1000, sh_div(clock_tick_rate, latch, 8), 8)


def tick_cycles(clock_mhz, hz=HZ):
    """Cycles of a ``clock_mhz`` CPU between two local APIC timer ticks (1 / HZ s): the local
    APIC timer is calibrated to HZ against the PIT at boot (apic.c calibrate_APIC_clock)."""
    return round(clock_mhz * 1_000_000) // hz


def cyc2ns_scale(clock_mhz):
    """set_cyc2ns_scale(cpu_khz / 1000) (arch/i386/kernel/timers/timer_tsc.c 64-70):
    sched_clock's ns per cycle, in 1/1024ths."""
    return (1000 << 10) // int(clock_mhz)
#: paced writes: how far apart the writers' due times are, as a fraction of a period spread
#: evenly over them (CPU k's first write due at k / cpus x stagger periods). An estimate:
#: the mail does not say in what order its disk completed the four writers' requests
STAGGER = ("yoshioka2005:pace.stagger", 1.0, 0.0, 1.0,
           ("the order in which the disk woke the four writers is not in the mail: from all "
            "at once (0, the writers due together) to evenly in turn (1, the model's)"))


#: kjournald commits every JBD_DEFAULT_MAX_COMMIT_AGE seconds (include/linux/jbd.h: 5; ext3's
#: default commit interval): paced writes run its data loop a turn per page written, on the
#: buffer at the head of the data list, which the list keeps half an interval's writes old
#: (Kernel.commit_lag: the mean age of the buffers a commit finds, written evenly over the
#: interval before it)
COMMIT_INTERVAL_S = 5


#: the journal's log: 8192 blocks (a 32 MB journal of 4 KB blocks, as MAX_TRANSACTION_BUFFERS
#: takes it), contiguous on the disk from LOG_START (journal_bmap the identity)
LOG_START, LOG_BLOCKS = 4096, 8192

#: which CPU takes the disk's interrupt: 2.6.12's i386 default configuration
#: (arch/i386/defconfig: CONFIG_IRQBALANCE=y) runs kirqd (arch/i386/kernel/io_apic.c,
#: balanced_irq: every IRQ pushed to CPU 0 at its start, then moved, one CPU at a time, at
#: most every 5 s by do_irq_balance; pending_irq_balance_cpumask is cpumask_of_cpu(new_cpu));
#: without it the I/O APIC's entry targets every online CPU in lowest-priority mode
#: (mach-default: TARGET_CPUS cpu_online_map, INT_DELIVERY_MODE dest_LowestPrio), the
#: chipset choosing. Either way one CPU takes the disk's interrupts, not each writer's own:
#: the model's is CPU 0 (kirqd's starting point); None gives each CPU its own requests'
IRQ_CPU = 0

#: paced writes: pdflush writes back one page per write (as many as are written), the page
#: dirty_background_ratio (mm/page-writeback.c: 10% in 2.6.12) of the writer's page cache
#: behind its newest; under iozone the dirty pages sit between that and vm_dirty_ratio
#: (40%), where balance_dirty_pages makes the writer write back itself
DIRTY_FRACTION = ("yoshioka2005:pace.dirty_fraction", 0.10, 0.10, 0.40,
                  ("how far behind the writer writeback runs: dirty_background_ratio (10%, "
                   "pdflush's background writeout) to vm_dirty_ratio (40%, the writers "
                   "throttled in balance_dirty_pages) of the page cache"))


#: the mail's machine's memory (MB), which balance_dirty_pages' thresholds are shares of
#: (total_pages); the model's own memory is its page-cache zone, a stand-in for a large one
MEMORY_MB = ("yoshioka2005:machine.memory_mb", 4096, 1024, 16384,
             ("the mail does not give its machine's memory: 1 GB to 16 GB (iozone's four "
              "8000 MB files were sized past it); 4 GB, the most a non-PAE i386 kernel "
              "addresses"))


#: the pages a write request holds when the disk's driver takes it: writeback's bios of one
#: file join the request at the queue's tail while the disk is busy (the disk sets the
#: pace), until the request reaches the queue's limits: max_sectors and the segments the
#: driver takes (each page a segment of its own)
REQUEST_PAGES = ("yoshioka2005:disk.request_pages", 128, 31, 128,
                 ("the mail does not name its disk's adapter: from 31 pages (the block "
                  "layer's default max_sectors, 255 sectors) to 128 (SCSI_DEFAULT_MAX_SECTORS, "
                  "1024 sectors, and MAX_PHYS_SEGMENTS, 128, include/scsi/scsi_host.h and "
                  "include/linux/blkdev.h), an adapter whose sg_tablesize is 128 or more"))
#: the disk's rate: the mail's, a page per writer per write period (its four writers'
#: pages in its elapsed time): a request of n pages is written n / MAIL_WRITERS periods
#: after the driver takes it
MAIL_WRITERS = 4


#: the log's blocks (fs/jbd/commit.c's phase 3, include/linux/jbd.h of 2.6.12.1):
#: sizeof(journal_header_t), sizeof(journal_block_tag_t), the UUID after a descriptor's
#: first tag
JOURNAL_HEADER, BLOCK_TAG, TAG_UUID = 12, 8, 16
#: __log_space_left (fs/jbd/journal.c 425): log blocks held back for control blocks
MIN_LOG_RESERVED_BLOCKS = 32


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

def request_pages():
    """REQUEST_PAGES as the model takes it."""
    return round(estimates.value(REQUEST_PAGES[0], REQUEST_PAGES[1]))


def disk_warm_writes():
    """Paced writes per CPU that bring the disk's queue to its stride: a request filled,
    and written (n + n / MAIL_WRITERS)."""
    pages = request_pages()
    return pages + -(-pages // MAIL_WRITERS)


class PacedRuns(list):
    """Kernel.paced_writes' result: each CPU's write Runs; ``busy``: each CPU's cycles not
    halted over the run (its writes, writeback in the pauses, the idle loop, the ticks);
    ``ticks`` and ``tick_cycles``: each CPU's timer ticks in the run and their cycles (each
    tick's whole call)."""
    busy: list
    ticks: list
    tick_cycles: list


def estimate_ranges():
    """[(name, nominal, low, high, why)] of this workload's estimates (emu.book.ranges)."""
    return [STAGGER, DIRTY_FRACTION, MEMORY_MB, REQUEST_PAGES]


def equates():
    """The structure offsets above as ``.equ`` lines for the routines (one source of truth:
    the routines are assembled with this text in front of them)."""
    lines = [".equ PAGE_SIZE, 4096", ".equ THREAD_SIZE, 8192",
             f".equ SIZEOF_BH, {BH_SIZE}", f".equ SIZEOF_JH, {JH_SIZE}",
             f".equ SIZEOF_HANDLE, {HANDLE_SIZE}", f".equ PAGE_STRUCT, {PAGE_STRUCT}",
             f".equ TRANSACTION_SIZE, {TRANSACTION_SIZE}",
             f".equ RADIX_NODE, {RADIX_NODE}", f".equ RADIX_HEIGHT, {RADIX_HEIGHT}",
             f".equ RAW_INODE, {RAW_INODE}", f".equ META_SLOTS, {META_SLOTS}",
             f".equ BH_LRU_SIZE, {BH_LRU_SIZE}", f".equ PAGEVEC_SIZE, {PAGEVEC_SIZE}",
             f".equ SWAP_CLUSTER_MAX, {SWAP_CLUSTER_MAX}", f".equ FBC_BATCH, {FBC_BATCH}",
             f".equ DIND_START, {DIND_START}", f".equ BLOCKS_PER_GROUP, {BLOCKS_PER_GROUP}",
             f".equ EXT3_STATE_NEW, {EXT3_STATE_NEW}", f".equ I_DIRTY, {I_DIRTY}",
             f".equ PCP_STACK_MAX, {PCP_STACK_MAX}",
             f".equ WAIT_QUEUE_HEAD, {WAIT_QUEUE_HEAD}", f".equ NR_SYSCALLS, {NR_WRITE + 1}",
             f".equ NR_WRITE, {NR_WRITE}", ".equ BDI_pdflush, 0",
             ".equ BDI_CAP_NO_ACCT_DIRTY, 1", ".equ PF_LESS_THROTTLE, 0x00100000",
             ".equ MAX_RT_PRIO, 100", ".equ BIO_UPTODATE, 0", ".equ BIO_SEG_VALID, 3",
             ".equ REQ_CMD, 16", ".equ RQ_ACTIVE, 1", ".equ RQ_INACTIVE, -1",
             ".equ QUEUE_FLAG_READFULL, 3", ".equ QUEUE_FLAG_DEAD, 5",
             ".equ QUEUE_FLAG_PLUGGED, 7", ".equ QUEUE_FLAG_DRAIN, 8",
             f".equ AS_HASH_SHIFT, {AS_HASH_SHIFT}", f".equ SIZEOF_SG, {SG_SIZE}",
             f".equ SIZEOF_IRQ_DESC, {IRQ_DESC_SIZE}", f".equ DISK_IRQ, {DISK_IRQ}",
             f".equ HARDIRQ_OFFSET, {HARDIRQ_OFFSET}", f".equ SOFTIRQ_OFFSET, {SOFTIRQ_OFFSET}",
             f".equ SCSI_SOFTIRQ, {SCSI_SOFTIRQ}", f".equ PT_ORIG_EAX, {PT_ORIG_EAX}",
             f".equ TIMER_SOFTIRQ, {TIMER_SOFTIRQ}",
             ".equ IRQ_INPROGRESS, 1", ".equ IRQ_REPLAY, 8", ".equ IRQ_WAITING, 32",
             ".equ RQ_NOMERGE_FLAGS, " + str(REQ_FLAGS["NOMERGE"] | REQ_FLAGS["STARTED"] |
                                             REQ_FLAGS["HARDBARRIER"] | REQ_FLAGS["SOFTBARRIER"])]
    lines += [f".equ REQ_{name}, {value}" for name, value in REQ_FLAGS.items()]
    for prefix, table in (("BH", BH), ("JH", JH), ("H", H), ("T", T), ("J", J), ("PG", PG),
                          ("RN", RN), ("AS", AS), ("RR", RR), ("AOPS", AOPS),
                          ("FILES", FILES), ("EI", EI), ("I", I), ("RAW", RAW),
                          ("GD", GD), ("SB", SB), ("BDEV", BDEV), ("BDI", BDI), ("PS", PS),
                          ("BIO", BIO), ("BVEC", BVEC), ("RT", RT), ("TIMER", TIMER), ("TVB", TVB), ("RQ", RQ), ("Q", Q), ("DK", DK),
                          ("DS", DS), ("ARQ", ARQ), ("CMD", CMD), ("SG", SG), ("HOST", HOST),
                          ("IRQD", IRQD),
                          ("F", F), ("TI", TI), ("TSK", TSK),
                          ("KC", KC), ("AC", AC), ("PCPU", PCPU), ("ZONE", ZONE),
                          ("CTX", CTX), ("TK", TK), ("RCU", RCU), ("RCP", RCP), ("SD", SD),
                          ("SGRP", SGRP), ("RQS", RQS), ("MM", MM)):
        lines += [f".equ {prefix}_{name}, {value}" for name, value in table.items()]
    lines += [f".equ BH_{name}, {bit}" for name, bit in BH_BITS.items()]
    lines += [f".equ BJ_{name}, {value}" for name, value in BJ.items()]
    lines += [f".equ PG_{name}, {bit}" for name, bit in PG_BITS.items()]
    return "\n".join(lines) + "\n"


def source(kernel="2.6.12"):
    """The whole guest kernel as one source text: the equates, the copy routines of
    ``kernel`` ("2.6.12" or "patched", as emu.papers.yoshioka2005.usercopy), the write path, iozone's loop."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}: choose one of {', '.join(KERNELS)}")
    files = usercopy.KERNELS[kernel] + ROUTINES
    return equates() + "".join(routine(name).read_text() for name in files)


# ------------------------------------------------------------------ the kernel in memory

RW_LOCK_BIAS = 0x01000000           # a free rwlock_t (include/asm-i386/rwlock.h)
SPIN_FREE = 1                       # a free spinlock_t (its byte is 1)
FD = 3                              # iozone's file: after stdin, stdout, stderr
XTIME = 1123977600                  # 2005-08-14, the date of the paper's runs
INODE_TABLE_BLOCKS = 512            # a group's bitmap, inode bitmap and inode table take
                                    # its first 514 blocks (16,384 inodes of 128 B)
INODES_PER_GROUP = 16384            # mke2fs: one inode per 8 KB (32768 blocks x 4 KB / 8 KB)
MAX_TRANSACTION_BUFFERS = 2048      # j_max_transaction_buffers: a quarter of a 32 MB
                                    # journal of 4 KB blocks (mke2fs's size for large file
                                    # systems); a handle takes 10 credits, gives most back
FMODE_WRITE = 2
DEFAULT_PRIO = 120                  # include/linux/sched.h: MAX_RT_PRIO + 20 (nice 0)
S_IFREG_644 = 0o100644


def _words(*values):
    return b"".join((v & 0xFFFFFFFF).to_bytes(4, "little") for v in values)


class Kernel:
    """Linux 2.6.12's write path on an emulated Xeon MP: ``cpus`` iozone children, each
    writing its own ext3 file through one journal and one zone.

    ``kernel``: "2.6.12" or "patched" (Yoshioka's __copy_from_user_ll). ``page_cache_bytes``
    and ``frame_bytes``: the zone's pages, and the distinct frames behind them, per CPU.
    ``max_records``: the most records a CPU's file will take over the Kernel's life (sizes
    its indirect blocks and its block groups). ``fpu_owner``: the iozone task's FPU state
    is live in the registers, so the patched copy's kernel_fpu_begin saves it.
    ``used_blocks``: blocks each file has already taken in its first group (to reach the
    next group sooner)."""

    def __init__(self, kernel="2.6.12", cpus=1, page_cache_bytes=PAGE_CACHE_BYTES,
                 frame_bytes=FRAME_BYTES, max_records=40_000, profile="pentium4",
                 fpu_owner=False, used_blocks=0, cores=None, irq_cpu=IRQ_CPU, ticks=True):
        if not 1 <= cpus <= 8:
            raise ValueError(f"cpus must be from 1 to 8 (NR_CPUS), not {cpus}")
        cores = cpus if cores is None else cores
        if not cpus <= cores <= 8:
            raise ValueError(f"cores must be from cpus ({cpus}) to 8, not {cores}")
        frames = frame_bytes // PAGE
        if frame_bytes % PAGE or frames < 64 or frames & (frames - 1):
            raise ValueError("frame_bytes must be a power-of-two number of pages, at least 64")
        if page_cache_bytes % frame_bytes:
            raise ValueError("page_cache_bytes must be a multiple of frame_bytes")
        if not 0 <= used_blocks < DATA_PER_GROUP:
            raise ValueError(f"used_blocks must be from 0 to {DATA_PER_GROUP - 1}")
        if irq_cpu is not None and not 0 <= irq_cpu < cpus:
            raise ValueError(f"irq_cpu must be a CPU from 0 to {cpus - 1}, or None")
        self.irq_cpu = irq_cpu
        self.ticking = ticks                # paced writes: the timer tick (deliver_ticks)
        self.metadata_mapped = False        # write_back_metadata: in the block device's cache
        self.kernel, self.cpus, self.max_records = kernel, cpus, max_records
        self.used_blocks = used_blocks
        self.pool_pages = page_cache_bytes // PAGE * cpus
        self.frame_count = frames * cpus
        self.groups_per_file = -(-(max_records + used_blocks) // DATA_PER_GROUP)
        if GROUP_NO + 1 + cpus * self.groups_per_file > 128:
            raise ValueError("the files need more block groups than one descriptor block "
                             "describes: fewer max_records or CPUs")
        self.request_pages = request_pages()
        ram = (24 << 20) + self.frame_count * PAGE + self.pool_pages * 320 + \
            cpus * self._io_ring_bytes() + self._slab_list_bytes()
        ram = -(-ram // (1 << 20)) * (1 << 20)
        self.machine = m = Machine(profile, cores=cores, ram_size=ram)
        self.program = m.load(assemble(source(kernel), "x86", m.code_start,
                                       f"the {kernel} kernel's write path"))
        self.sym = m.symbols
        self.disk_delay = -(-self.request_pages // MAIL_WRITERS)   # writes, after dispatch
        self._inflight = [[] for _ in range(cpus)]    # per CPU: (due write, request)
        self.disk_requests = [0] * cpus                # requests each CPU's disk ended,
        self.disk_cycles = [0] * cpus                  # and the driver's and interrupts' cycles
        self._next_meta_bit = INODE_TABLE_BLOCKS + 2
        self._meta = []                         # (block, bh) of the cached metadata
        self._build(fpu_owner)

    # -------------------------------------------------------------- memory helpers

    def _alloc(self, size, align=64):
        return self.machine.alloc(size, align=align)

    def _poke(self, address, data):
        self.machine.write(address, data)

    def _word(self, address, value):
        self._poke(address, _words(value))

    def _read(self, address, size=4):
        return self.machine.read_word(address, size)

    # -------------------------------------------------------------- building

    def _build(self, fpu_owner):
        m, cpus = self.machine, self.cpus
        self.pcpu = [self._alloc(PCPU_SIZE) for _ in range(cpus)]
        self._poke(self.sym["__per_cpu_offset"], _words(*self.pcpu))
        self._build_caches()
        self.zone = self._build_zone(self.pool_pages, self.frame_count)
        self.zone_normal = self._build_zone(0, 0)
        self._word(self.sym["page_zone_highmem"], self.zone)
        self._word(self.sym["page_zone_normal"], self.zone_normal)
        self._poke(self.sym["xtime"], _words(XTIME, 0))
        self._build_writeback_state()
        self.meta_page_structs = self._alloc(META_SLOTS * PAGE_STRUCT)
        self._build_journal()
        self._build_block_device()
        self._build_groups()
        self.files = [self._build_file(k) for k in range(cpus)]
        self._finish_block_device()
        self.ctx = [self._build_task(k, self.files[k]) for k in range(cpus)]
        self.pdflush = [self._build_kthread(k) for k in range(cpus)]    # writeback's task
        self.idle_ti = [self._alloc(64) for _ in range(cpus)]     # each CPU's idle task's
        for k, ti in enumerate(self.idle_ti):
            self._poke(ti, _words(0, 0, 0, 0, k, 0))
        self._build_commit_state()              # last, not to move what comes before
        self.commit_pending = False             # paced_writes: lock the running transaction
        self.lockdown = {}                      # down in kjournald's next pause
        self.halted_cycles = [0] * cpus       # paced_writes: cycles each CPU was halted,
        self.halts = [0] * cpus                # how many times it halted, and the pages
        self.written_back = [0] * cpus         # writeback wrote in its pauses, and the
        self.writeback_cycles = [0] * cpus     # cycles it took
        self.commit_lag = 0                    # paced_writes: kjournald's data loop keeps
        self.commit_turns = [0] * cpus         # the list this many writes per CPU long (0:
        self.commit_cycles = [0] * cpus        # no commit); its turns and cycles per CPU
        self.meta_every = 0                    # paced_writes: a metadata buffer logged every
        self.meta_per_commit = 0               # this many writes per CPU (0: none), of a
        self.meta_logged = 0                   # commit of this many; logged so far, and
        self.meta_cycles = [0] * cpus          # the cycles per CPU
        self.meta_turns = [0] * cpus
        self._wb_next = {}                     # CPU -> the next index writeback looks at
        self._build_tick()                     # after all the rest: it moves nothing
        if fpu_owner and self.kernel == "patched":
            usercopy.set_fpu_owner(m, True)

    def _build_tick(self):
        """What the timer tick touches (routines/x86/tick_2612.S): per CPU the second part of
        its per-CPU area (TK: kstat, irq_stat's apic_timer_irqs, prof_counter, rcu_data and
        rcu_bh_data with no RCU work, its sched_domain, its runqueue), its idle task on a
        kernel stack of its own; the sched_groups (a CPU each, SCHED_LOAD_SCALE's power, in a
        ring); sched_clock's scale and TICK_NSEC from the profile's clock; and on each
        writer's task what the scheduler reads (its array, a full slice, an mm).
        The state is the steady one of a machine up for a while: each domain's interval at
        its max_interval and its last_balance caught up (jiffies + CPU_OFFSET(cpu))."""
        m, cpus, sym = self.machine, self.cpus, self.machine.symbols
        clock = m.profile.clock_mhz
        self.tick_period = tick_cycles(clock)
        self._word(sym["cyc2ns_scale"], cyc2ns_scale(clock))
        self._word(sym["tick_nsec"], tick_nsec())
        groups = self._alloc(SGRP_SIZE * cpus, align=4)
        for k in range(cpus):
            self._poke(groups + SGRP_SIZE * k, _words(groups + SGRP_SIZE * ((k + 1) % cpus),
                                                    1 << k, SCHED_LOAD_SCALE))
        self.tick_areas, self.idle_stacks = [], []
        for k in range(cpus):
            area = self._alloc(TK_SIZE, align=128)
            stack = m.alloc(KERNEL_STACK, align=KERNEL_STACK)
            idle = self._alloc(TASK_SIZE, align=64)
            self._poke(idle, _words(0, stack, stack + KERNEL_STACK, 0, 0, MAX_PRIO))
            self._poke(stack, _words(idle, 0, 0, 0, k, 0))
            self._poke(area + TK["PROF_COUNTER"], _words(1, 1, 1))
            for rcu in (area + TK["RCU_DATA"], area + TK["RCU_BH_DATA"]):
                self._poke(rcu, _words(RCU_INITIAL_BATCH, 0, 0, 0, 0, rcu + RCU["NXTLIST"], 0,
                                       rcu + RCU["CURLIST"], 0, rcu + RCU["DONELIST"], k))
            sd, init = area + TK["SD"], SD_CPU_INIT
            self._poke(sd, _words(0, groups + SGRP_SIZE * k, (1 << cpus) - 1,
                                  init["MIN_INTERVAL"], init["MAX_INTERVAL"],
                                  init["BUSY_FACTOR"], init["IMBALANCE_PCT"],
                                  init["CACHE_HOT_TIME"], 0, init["CACHE_NICE_TRIES"],
                                  init["PER_CPU_GAIN"], init["FLAGS"],
                                  HZ * k // 8, init["MAX_INTERVAL"], 0))
            rq = area + TK["RQ"]
            arrays = rq + RQS["ARRAYS"]
            self._poke(rq, _words(SPIN_FREE))
            self._poke(rq + RQS["CURR"], _words(idle, idle, 0, arrays,
                                                arrays + PRIO_ARRAY_SIZE))
            for a in (arrays, arrays + PRIO_ARRAY_SIZE):
                heads = a + 24 + 8 * np.arange(MAX_PRIO)
                m.write(a + 24, np.repeat(heads, 2).astype(np.uint32).tobytes())
            self._poke(rq + RQS["BEST_EXPIRED_PRIO"], _words(MAX_PRIO, 0, sd))
            writer = self.ctx[k]["task"]
            mm = self._alloc(MM_SIZE)
            self._word(writer + TSK["ARRAY"], arrays)
            self._word(writer + TSK["TIME_SLICE"], DEF_TIMESLICE)
            self._word(writer + TSK["MM"], mm)
            self.tick_areas.append(area)
            self.idle_stacks.append(stack)
        self._poke(sym["tick_areas"], _words(*self.tick_areas))
        self.next_tick = [None] * cpus          # paced writes: each CPU's next tick (cycles)
        self._tick_left = [None] * cpus         # and between them, its distance ahead
        self.ticks = [0] * cpus                 # ticks delivered, and their cycles
        self.tick_cycles = [0] * cpus

    def _build_writeback_state(self):
        """What balance_dirty_pages reads: the machine's pages (MEMORY_MB), the CPUs
        online, ratelimit_pages as set_ratelimit sets it, and the block device's
        backing_dev_info, its BDI_pdflush bit set (pdflush works the device: in paced
        writes it writes back in every pause)."""
        total = round(estimates.value(MEMORY_MB[0], MEMORY_MB[1])) * (1 << 20) // PAGE
        self._word(self.sym["total_pages"], total)
        self._word(self.sym["num_online_cpus"], self.cpus)
        self.ratelimit = min(max(total // (self.cpus * 32), 16), (4096 * 1024) // PAGE)
        self._word(self.sym["ratelimit_pages"], self.ratelimit)
        self.bdi = self._alloc(BDI_SIZE)
        self._poke(self.bdi, _words(32, 1 << 0, 0))     # ra_pages, BDI_pdflush, capabilities

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

    def _build_block_device(self):
        """The block device: its address space (a radix tree of height 4 holding one
        level-3 node over the files' part of the disk, and nothing below it there) and the
        table of cached metadata buffer heads."""
        self.bdev = self._alloc(BDEV_SIZE)
        mapping = self._alloc(MAPPING_SIZE)
        top, below = self._alloc(RADIX_NODE), self._alloc(RADIX_NODE)
        self._word(top + RN["SLOTS"] + 4 * ((GROUP_START >> 18) & 63), below)
        self._word(top + RN["COUNT"], 1)
        self._word(below + RN["COUNT"], 1)          # a node of other metadata elsewhere
        self._word(below + RN["SLOTS"] + 4 * 63, below)
        self._poke(mapping + AS["PAGE_TREE"], _words(RADIX_HEIGHT, 0, top))
        self._word(mapping + AS["TREE_LOCK"], RW_LOCK_BIAS)
        self._word(self.bdev + BDEV["MAPPING"], mapping)
        self._build_queue()

    def _build_queue(self):
        """The disk's request queue (noop's list, empty; its request list's counts and
        thresholds as blk_queue_congestion_threshold sets them for BLKDEV_MAX_RQ) and its
        gendisk; the block device's size past the files' blocks; no bounce (the queue's
        bounce_pfn reaches blk_max_pfn)."""
        q = self.queue = self._alloc(QUEUE_SIZE, align=128)
        head = q + Q["QUEUE_HEAD"]
        self._poke(head, _words(head, head))
        self._word(q + Q["QUEUE_LOCK"], q + Q["LOCK"])
        self._word(q + Q["LOCK"], SPIN_FREE)
        for rw in range(2):
            wait = q + Q["RQ_WAIT"] + 12 * rw
            self._poke(wait, _words(SPIN_FREE, wait + 4, wait + 4))
        nr = BLKDEV_MAX_RQ
        self._poke(q + Q["NR_REQUESTS"], _words(nr, nr - nr // 8 + 1, nr - nr // 8 - nr // 16 - 1,
                                                self.sym["__make_request"], 0, 0xFFFFFFFF,
                                                1024))
        self._word(self.sym["blk_max_pfn"], 0xFFFFFFFF)
        pages = self.request_pages          # max_sectors and the segments the driver takes
        self._poke(q + Q["MAX_SECTORS"], _words(pages * PAGE // 512, pages, pages))
        disk = self._alloc(64)
        self._poke(self.bdev + BDEV["QUEUE"], _words(q, disk, 0xFFFFFFFF))
        buckets = 1 << AS_HASH_SHIFT        # the elevator's hash of request ends: empty
        table = self._alloc(8 * buckets)
        self._poke(table, _words(*[table + 8 * b + d for b in range(buckets) for d in (0, 0)]))
        self._word(self.sym["as_hash_table"], table)
        host = self._alloc(64)
        self._word(host + HOST["LOCK"], SPIN_FREE)
        self._word(self.sym["scsi_host"], host)
        desc = self.sym["irq_desc"] + DISK_IRQ * IRQ_DESC_SIZE
        self._poke(desc, _words(0, self.sym["host_intr"], host, SPIN_FREE))
        for pcpu in self.pcpu:              # each CPU's scsi_done_q: empty
            at = pcpu + PCPU["SCSI_DONE_Q"]
            self._poke(at, _words(at, at))

    def _metadata_block(self, group=GROUP_NO, bit=None):
        """A cached metadata block (a 4 KB block and its buffer head, its page set up
        active): bit ``bit`` of ``group``, or the next free metadata bit of the inodes'
        group. Returns (block number, bh, data address)."""
        if bit is None:
            bit = self._next_meta_bit
            self._next_meta_bit += 1
            if self._next_meta_bit > DATA_START_BIT:
                raise ValueError("the run needs more metadata blocks than the group keeps "
                                 "below its data")
        if len(self._meta) == META_SLOTS:
            raise ValueError(f"more than {META_SLOTS} cached metadata blocks: fewer "
                             "max_records or CPUs")
        block = group * BLOCKS_PER_GROUP + bit
        data = self._alloc(PAGE, align=PAGE)
        bh = self._alloc(BH_SIZE, align=16)
        page = self.meta_page_structs + PAGE_STRUCT * len(self._meta)
        flags = sum(1 << PG_BITS[b] for b in ("uptodate", "lru", "active", "referenced"))
        self._poke(page, _words(flags, 1))
        state = (1 << BH_BITS["Uptodate"]) | (1 << BH_BITS["Mapped"])
        self._poke(bh, _words(state, bh, page, 0, PAGE, block, data, self.bdev))
        self._meta.append((block, bh))
        return block, bh, data

    def _build_groups(self):
        """The super block, the group descriptor block, and the block groups: GROUP_NO holds
        the files' inodes (its inode table's first block) and the run's indirect blocks;
        the groups after it hold the files' data, ``groups_per_file`` each."""
        self.sb = sb = self._alloc(SB_SIZE, align=128)
        self.gd_block, self.gd_bh, gd_data = self._metadata_block(bit=INODE_TABLE_BLOCKS + 1)
        self.itable_block, self.itable_bh, self.itable = self._metadata_block(bit=2)
        group_desc = self._alloc(64)
        self._word(group_desc + 4 * (GROUP_NO >> 7), self.gd_bh)
        self.bitmaps = {}
        for g in range(GROUP_NO, GROUP_NO + 1 + self.cpus * self.groups_per_file):
            used = np.zeros(BLOCKS_PER_GROUP, np.uint8)
            used[:DATA_START_BIT] = 1                   # metadata, now and to come
            if (g - GROUP_NO - 1) % self.groups_per_file == 0:
                used[DATA_START_BIT:DATA_START_BIT + self.used_blocks] = 1
            block, _, data = self._metadata_block(group=g, bit=0)
            self._poke(data, np.packbits(used, bitorder="little").tobytes())
            self.bitmaps[g] = data
            self._poke(gd_data + 32 * (g & 127),
                       _words(block, block + 1, self.itable_block if g == GROUP_NO else
                              block + 2) + DATA_PER_GROUP.to_bytes(2, "little"))
        self._poke(sb, _words(0, PAGE, self.bdev, self.journal, group_desc, 0,
                              INODES_PER_GROUP, BLOCKS_PER_GROUP))
        self._poke(sb + SB["FREE_LOCK"], _words(SPIN_FREE, 10_000_000))
        self._word(sb + SB["BGL_LOCK"], SPIN_FREE)

    def block_of(self, k, offset):
        """The block CPU k's file has for its page FIRST_INDEX + offset: its groups' data
        blocks, in order."""
        offset += self.used_blocks
        group = GROUP_NO + 1 + k * self.groups_per_file + offset // DATA_PER_GROUP
        return group * BLOCKS_PER_GROUP + DATA_START_BIT + offset % DATA_PER_GROUP

    def _build_file(self, k):
        """CPU k's file: its inode (in the inode table's first block, inode k of the group),
        its address space and radix tree, its double-indirect block and the indirect blocks
        its records will need."""
        inode = self._alloc(INODE_SIZE, align=64)
        mapping = inode + I["I_DATA"]
        ino = GROUP_NO * INODES_PER_GROUP + 1 + k
        dind_block, dind_bh, dind = self._metadata_block()
        first = FIRST_INDEX - DIND_START
        count = (first + self.max_records) // ADDR_PER_BLOCK - first // ADDR_PER_BLOCK + 1
        if first // ADDR_PER_BLOCK + count > ADDR_PER_BLOCK:
            raise ValueError("the records go past the double-indirect range")
        for j in range(first // ADDR_PER_BLOCK, first // ADDR_PER_BLOCK + count):
            ind_block, _, _ = self._metadata_block()
            self._word(dind + 4 * j, ind_block)
        size = FIRST_INDEX * PAGE
        self._word(inode + EI["DIND"], dind_block)
        self._poke(inode + EI["LAST_ALLOC_LOGICAL"],
                   _words(FIRST_INDEX - 1, self.block_of(k, 0) - 1))
        self._poke(inode + EI["DISKSIZE"], _words(size, size >> 32))
        self._word(inode + EI["TRUNCATE_SEM"], 1)
        self._poke(inode + I["INO"], _words(ino, 1, S_IFREG_644, 1, 0, 0))
        self._poke(inode + I["SIZE"], _words(size, size >> 32, XTIME, 0, XTIME, 0, XTIME, 0))
        self._word(inode + I["BLKBITS"], 12)
        self._word(inode + I["BLOCKS"], FIRST_INDEX * 8)
        self._word(inode + I["LOCK"], SPIN_FREE)
        self._word(inode + I["SEM"], 1)
        self._word(inode + I["SB"], self.sb)
        self._word(inode + I["MAPPING"], mapping)
        self._word(inode + I["STATE"], I_DIRTY)
        top, level3 = self._alloc(RADIX_NODE), self._alloc(RADIX_NODE)
        self._word(top + RN["SLOTS"] + 4 * ((FIRST_INDEX >> 18) & 63), level3)
        self._word(top + RN["COUNT"], 1)
        self._poke(mapping + AS["HOST"], _words(inode, RADIX_HEIGHT, 0, top))
        self._word(mapping + AS["TREE_LOCK"], RW_LOCK_BIAS)
        self._word(mapping + AS["A_OPS"], self.sym["ext3_ordered_aops"])
        self._word(mapping + AS["PRIVATE_LOCK"], SPIN_FREE)
        self._word(mapping + AS["BDI"], self.bdi)
        file = self._alloc(FILE_SIZE)
        self._poke(file, _words(1, 1, size, size >> 32, mapping, inode, FMODE_WRITE | 1))
        return {"inode": inode, "mapping": mapping, "file": file, "ino": ino}

    def _finish_block_device(self):
        self._word(self.journal + J["DEV"], self.bdev)
        for bh in self._log_bhs:
            self._word(bh + BH["BDEV"], self.bdev)
        meta = b"".join(_words(block, bh) for block, bh in self._meta)
        self._poke(self.bdev + BDEV["META_N"], _words(len(self._meta)) + meta)

    def _map_metadata(self):
        """The metadata blocks' pages in the block device's page cache, as __getblk leaves
        them (fs/buffer.c grow_dev_page: each page in the block device's mapping at its
        block's index, PG_private, the buffer its private): the block device's tree (the
        nodes below its top node made here), its inode (dirty: I_DIRTY, as the files'),
        def_blk_aops and the disk's backing_dev_info; a dirty page with the tree's dirty tag
        and counted in CPU 0's nr_dirty, as mark_buffer_dirty would have left it (phase 7
        on kjournald's CPU). Until then the model's metadata belongs to no mapping:
        __find_get_block_slow stands for the block device's cache with its table of
        metadata (routines/x86/buffer_2612.S), and the data blocks' look-ups there
        (unmap_underlying_metadata) find the tree empty below its top."""
        mapping = self._read(self.bdev + BDEV["MAPPING"])
        inode = self._alloc(INODE_SIZE, align=64)
        self._word(inode + I["STATE"], I_DIRTY)
        self._word(inode + I["MAPPING"], mapping)
        self._word(inode + I["LOCK"], SPIN_FREE)
        self._word(mapping + AS["HOST"], inode)
        self._word(mapping + AS["A_OPS"], self.sym["blkdev_aops"])
        self._word(mapping + AS["BDI"], self.bdi)
        self._word(mapping + AS["PRIVATE_LOCK"], SPIN_FREE)
        self._word(mapping + AS["NRPAGES"], len(self._meta))
        private, dirty = 1 << PG_BITS["private"], 1 << PG_BITS["dirty"]
        dirtied = 0
        for block, bh in self._meta:
            page = self._read(bh + BH["PAGE"])
            flags = self._read(page + PG["FLAGS"])
            self._word(page + PG["FLAGS"], flags | private)
            self._poke(page + PG["PRIVATE"], _words(bh, mapping, block))
            self._radix_insert(mapping, block, page, tagged=bool(flags & dirty))
            dirtied += bool(flags & dirty)
        state = self.pcpu[KJOURNALD_CPU] + PCPU["PAGE_STATE"] + PS["NR_DIRTY"]
        self._word(state, self._read(state) + dirtied)
        self.metadata_mapped = True

    def _radix_insert(self, mapping, index, item, tagged=False):
        """radix_tree_insert into a tree of height RADIX_HEIGHT, the missing nodes made
        (each node's count: its slots in use); ``tagged``: radix_tree_tag_set of the dirty
        tag along the path."""
        node = self._read(mapping + AS["PAGE_TREE"] + RR["RNODE"])
        for level in range(RADIX_HEIGHT - 1, 0, -1):
            offset = (index >> (6 * level)) & 63
            if tagged:
                self._set_tag(node, offset)
            slot = node + RN["SLOTS"] + 4 * offset
            child = self._read(slot)
            if child == node:
                raise ValueError(f"block {index} falls under the tree's stand-in for other "
                                 "metadata")
            if not child:
                child = self._alloc(RADIX_NODE)
                self._word(slot, child)
                self._word(node + RN["COUNT"], self._read(node + RN["COUNT"]) + 1)
            node = child
        slot = node + RN["SLOTS"] + 4 * (index & 63)
        if self._read(slot):
            raise ValueError(f"block {index} is in the tree already")
        if tagged:
            self._set_tag(node, index & 63)
        self._word(slot, item)
        self._word(node + RN["COUNT"], self._read(node + RN["COUNT"]) + 1)

    def _set_tag(self, node, offset):
        """The dirty tag (tag 0: its 64 bits first in the node's tags) of slot ``offset``."""
        word = node + RN["TAGS"] + 4 * (offset >> 5)
        self._word(word, self._read(word) | 1 << (offset & 31))

    def write_back_metadata(self, measure=None):
        """wb_kupdate's write-back of the block device's dirty metadata (its pages put in
        the block device's page cache first: _map_metadata), outside paced runs, on CPU 0 from cold caches (it comes
        dirty_expire_centisecs after a commit): pdflush writes back the page of each buffer
        on the journal's checkpoint lists whose page is dirty (writeback_page ->
        blkdev_writepage -> block_write_full_page -> submit_bh), then the disk takes the
        requests and its interrupt ends them (end_buffer_async_write, end_page_writeback);
        then the next commit's start walks the checkpoint lists and releases the buffers
        written back (__journal_clean_checkpoint_list). ``measure`` as whole_commit's, each
        guest call measured. Returns {"pages": written back, "writeback": [measure of each
        page's], "disk": [each dispatch's and interrupt's], "release": the walk's,
        "released": its buffers}."""
        if not self.metadata_mapped:
            self._map_metadata()
        measure = measure or (lambda run: run().cycles)
        call, j = self.machine.call, self.journal
        mapping = self._read(self.bdev + BDEV["MAPPING"])
        dirty = [self._read(self._read(jh + JH["BH"]) + BH["BLOCKNR"])
                 for jh in self._checkpointed()
                 if self._read(self._read(self._read(jh + JH["BH"]) + BH["PAGE"]))
                 & (1 << PG_BITS["dirty"])]
        self.machine.flush_caches()
        out = {"pages": 0, "writeback": [], "disk": []}
        for block in dirty:
            def page():
                run = call("pdflush_writeback", self.pdflush[0], mapping, block)
                out["pages"] += run.return_value
                return run
            out["writeback"].append(measure(page))
        for _, _, end, _, _ in self._requests():
            runs = []

            def dispatch():
                runs.append(call("disk_dispatch", self.queue, end))
                return runs[-1]
            out["disk"].append(measure(dispatch))
            rq = runs[-1].return_value
            out["disk"].append(measure(lambda: call("disk_interrupt", self.pdflush[0], rq)))
        released = []

        def walk():
            released.append(call("__journal_clean_checkpoint_list", j))
            return released[-1]
        out["release"] = measure(walk)
        out["released"] = released[0].return_value
        return out

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
        buf = self.machine.alloc(RECORD, bytes(range(256)) * (RECORD // 256), align=PAGE)
        ctx = self._alloc(32)
        self._poke(ctx, _words(task, FD, buf, RECORD, 0x5A5A5A5A))
        return {"ctx": ctx, "task": task, "stack": stack, "buf": buf}

    def _build_kthread(self, k):
        """A kernel thread on CPU k (pdflush): its task and its kernel stack, thread_info at
        the bottom; returns the task."""
        stack = self.machine.alloc(KERNEL_STACK, align=KERNEL_STACK)
        task = self._alloc(TASK_SIZE, align=64)
        self._poke(task, _words(0, stack, stack + KERNEL_STACK, 0, 0, DEFAULT_PRIO))
        self._poke(stack, _words(task, 0, 0, 0, k, 0))
        return task

    # -------------------------------------------------------------- running

    def calls(self, records):
        """One call per CPU: iozone_write_test(ctx, records)."""
        return [("iozone_write_test", c["ctx"], records) for c in self.ctx]

    def write_records(self, records, limit=None):
        """Each CPU's child writes ``records`` records of 4 KB; returns the Run (one CPU) or
        the ParallelRun."""
        self._check_room(records)
        limit = limit or 20_000 * records + 1_000_000
        if self.cpus == 1:
            run = self.machine.call(*self.calls(records)[0], limit=limit)
            done = [run.return_value]
        else:
            run = self.machine.run_parallel(self.calls(records), limit=limit)
            done = [r.return_value for r in run.runs]
        if done != [records] * self.cpus:
            raise RuntimeError(f"the children wrote {done} records, not {records} each")
        self.written += records
        return run

    written = 0

    def paced_writes(self, records, period, phase=None):
        """Each CPU's child writes ``records`` records of 4 KB, one every ``period`` cycles
        of its clock, as a disk that completes one write per period per writer lets it
        (the writer sleeps until then); in between, its CPU runs the idle task
        (routines/x86/idle_2612.S) to its hlt and stays halted until the next write is
        due. CPU k's first write is due at ``phase[k]`` (default: k / cpus x STAGGER of a
        period, the disk serving the writers in turn). Runs on several cores
        (emu.run.parallel.run_tasks: the machine needs two at least, ``cores``); returns
        PacedRuns: [each CPU's write Runs], and each CPU's busy cycles.
        ``halted_cycles[k]``: the cycles CPU k was halted, which a cycle counter that counts
        while the processor is not stopped (GLOBAL_POWER_EVENTS) does not count."""
        if period <= 0:
            raise ValueError(f"the period must be a positive number of cycles, not {period}")
        if len(self.machine.cpus) < 2:
            raise ValueError("paced writes run as tasks: build the Kernel with cores=2 at least")
        self._check_room(records)
        if phase is None:
            stagger = estimates.value(STAGGER[0], STAGGER[1])
            phase = [round(k * period * stagger / self.cpus) for k in range(self.cpus)]

        def child(k):
            def run(task):
                base, runs, halted = task.clock, [], self.halted_cycles[k]
                ticks0, tick_cycles0 = self.ticks[k], self.tick_cycles[k]
                self._start_ticks(task, k)
                for i in range(records):
                    if i:
                        self._busy_ticks(task, k)
                        self._end_requests(task, k, self.written + i)
                        self._writeback(task, k, self.written + i)
                        if self.commit_pending and k == KJOURNALD_CPU:
                            self._lock_down_in_pause(task, k, self.written + i)
                        if self.commit_lag:
                            self._commit(task, k)
                        if self._meta_due(k, self.written + i):
                            self._commit_metadata(task, k)
                        self._busy_ticks(task, k)
                    self._idle_until(task, k, base + phase[k] + i * period)
                    runs.append(task.call("iozone_write_test", self.ctx[k]["ctx"], 1))
                    if runs[-1].return_value != 1:
                        raise RuntimeError(f"CPU {k}'s child failed a write")
                self._busy_ticks(task, k)
                busy[k] = task.clock - base - (self.halted_cycles[k] - halted)
                ticks[k] = self.ticks[k] - ticks0
                tick_cycles[k] = self.tick_cycles[k] - tick_cycles0
                self._stop_ticks(task, k)
                return runs
            return run

        busy, ticks, tick_cycles = [0] * self.cpus, [0] * self.cpus, [0] * self.cpus

        tasks = [child(k) for k in range(self.cpus)]
        tasks += [None] * (len(self.machine.cpus) - self.cpus)
        runs = PacedRuns(self.machine.run_tasks(tasks)[:self.cpus])
        runs.busy, runs.ticks, runs.tick_cycles = busy, ticks, tick_cycles
        self.written += records
        return runs

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
            run = task.call("pdflush_writeback", self.pdflush[k], mapping, index)
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
        run = task.call("journal_commit_transaction", self.journal, self.transaction, 1)
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

    def _disk_now(self, task, k, end):
        """The disk takes the request ending at sector ``end`` and ends it at once, on CPU
        k (kjournald waits for its own writes; another CPU may have taken it already)."""
        run = task.call("disk_dispatch", self.queue, end)
        self.disk_cycles[k] += run.cycles
        if run.return_value:
            self.disk_cycles[k] += task.call("disk_interrupt", self.pdflush[k],
                                             run.return_value).cycles

    def metadata_per_commit(self, writes):
        """The metadata buffers a commit logs after ``writes`` writes per CPU from the
        run's present point: those every write dirties whatever its page (the buffers on
        the running transaction's t_buffers now that are neither a group's bitmap nor an
        indirect block: the inode table's and the group descriptors' blocks), and for each
        CPU's file the indirect blocks and the groups' bitmaps its next ``writes`` pages
        reach (the model's block map)."""
        if writes <= 0:
            raise ValueError("writes must be positive")
        bitmaps = {g * BLOCKS_PER_GROUP for g in self.bitmaps}
        first, last = self.written, self.written + writes - 1
        indirect = set()
        for f in self.files:
            dind = self._block_data(self._read(f["inode"] + EI["DIND"]))
            indirect |= {self._read(dind + 4 * j) for j in range(ADDR_PER_BLOCK)} - {0}
        shared = sum(1 for bh in self._metadata_list()
                     if self._read(bh + BH["BLOCKNR"]) not in bitmaps | indirect)
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
        run = task.call("journal_write_metadata", j, t, flags)
        cycles = run.cycles
        jh = run.return_value
        if not jh:
            self.meta_cycles[k] += cycles
            return
        self.meta_logged += 1
        self.commit_logged += bool(self.committing)
        self.meta_turns[k] += 1
        self._journal_io(task, k)
        run = task.call("journal_commit_written", j, t, jh, flags)
        cycles += run.cycles
        if flags & 2:
            self._journal_io(task, k)
        cycles += task.call("journal_commit_finish", j, t, jh, flags).cycles
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

    def _idle_until(self, task, k, due):
        """CPU k idles until its clock reads ``due``: the idle loop runs to its hlt, the CPU
        stays halted (its clock moves on, its caches untouched); each timer tick due before
        then ends the halt, runs (deliver_ticks) and returns to the idle loop, which halts
        again; the interrupt that ends the wait wakes the writer (TIF_NEED_RESCHED), and the
        idle loop sees it and leaves. A CPU whose writer is already due does not idle.
        The writer sleeps meanwhile: its runqueue has no task running and one waiting for
        I/O (the disk sets the pace), as schedule() and try_to_wake_up() would leave it."""
        if task.clock >= due:
            return
        ti = self.idle_ti[k]
        self._word(ti + TI["FLAGS"], 0)
        self._writer_asleep(k, True)
        self._to_hlt(task, k)
        while self.ticking and self.next_tick[k] < due:
            self._halted_until(task, k, self.next_tick[k])
            self._tick(task, k, idle=True)
            self._to_hlt(task, k)
        self._halted_until(task, k, due)
        self.halts[k] += 1
        self._writer_asleep(k, False)
        self._word(ti + TI["FLAGS"], 1 << TIF_NEED_RESCHED)
        task.call("cpu_idle", ti, self.pcpu[k])

    def _to_hlt(self, task, k):
        """The idle loop, run to its hlt."""
        try:
            task.call("cpu_idle", self.idle_ti[k], self.pcpu[k])
            raise RuntimeError("the idle loop returned without halting")
        except GuestHalted:
            pass

    def _halted_until(self, task, k, until):
        """CPU k halted until its clock reads ``until``: the clock moves on, nothing else."""
        halted = max(0, until - task.clock)
        header = self.machine.model.header(k)
        header[hwcache.H_CYCLES] += halted
        if header[hwcache.H_PROFILE_PERIOD] > 0 and not header[hwcache.H_SAMPLE_EVENTS]:
            header[hwcache.H_NEXT_SAMPLE] += halted       # no cycle samples while halted
        self.halted_cycles[k] += halted

    def _writer_asleep(self, k, asleep):
        """CPU k's runqueue as the writer's sleep leaves it: nr_running 0 and nr_iowait 1
        while it sleeps, 1 and 0 while it runs (set from outside: the schedule() and
        try_to_wake_up() that write them are not modelled)."""
        rq = self.tick_areas[k] + TK["RQ"]
        self._word(rq + RQS["NR_RUNNING"], 0 if asleep else 1)
        self._word(rq + RQS["NR_IOWAIT"], 1 if asleep else 0)

    # -------------------------------------------------------------- the timer tick

    def _start_ticks(self, task, k):
        """CPU k's next tick at paced writes' start: as far ahead of its clock as it was at
        the end of the last paced writes (the clock restarts between profiled runs), or at
        the first the first time, the first whole tick period of the clock after now (no
        tick falls in back-to-back runs)."""
        self._writer_asleep(k, False)
        if not self.ticking:
            return
        left = self._tick_left[k]
        if left is None:
            left = (task.clock // self.tick_period + 1) * self.tick_period - task.clock
        self.next_tick[k] = task.clock + left

    def _stop_ticks(self, task, k):
        """The end of paced writes: how far CPU k's next tick is ahead of its clock."""
        if self.ticking:
            self._tick_left[k] = self.next_tick[k] - task.clock

    def _busy_ticks(self, task, k):
        """The ticks that came due while CPU k was busy (a write, or its pause's work),
        delivered at the end of that work on the writer's kernel stack: the model cannot
        interrupt a guest call, so a tick waits for the call's end (it would have come
        within it on the machine)."""
        while self.ticking and self.next_tick[k] <= task.clock:
            self._tick(task, k, idle=False)

    def _tick(self, task, k, idle):
        """One local APIC timer tick on CPU k (routines/x86/tick_2612.S: local_timer_tick),
        on the idle task's kernel stack or the writer's; CPU 0 takes IRQ0's do_timer with
        it. Returns the Run."""
        stack = self.idle_stacks[k] if idle else self.ctx[k]["stack"]
        run = task.call("local_timer_tick", stack + KERNEL_STACK, int(k == 0))
        self.ticks[k] += 1
        self.tick_cycles[k] += run.cycles
        self.next_tick[k] += self.tick_period
        return run

    def _check_room(self, records):
        if self.written + records > self.max_records:
            raise ValueError(f"{self.written} + {records} records is more than this "
                             f"Kernel was built for (max_records={self.max_records})")

    # -------------------------------------------------------------- prefill

    def prefill(self, records=None, clean_before=0, committed_before=0):
        """Put the page cache in the state ``records`` writes per CPU leave on a fresh
        Kernel (default: enough to fill the zone), without running them; each CPU's first
        ``clean_before`` pages as writeback leaves them (clean: no dirty bit on the page or
        its buffer, no dirty tag), the rest dirty; each CPU's first ``committed_before``
        pages as a commit leaves them (clean, their buffers off the data list, without a
        journal head: their heads are in the slab lists, oldest first). Without running them: the pages (taken
        from the zone 16 at a time into each CPU's list and used last-first, as
        rmqueue_bulk and buffered_rmqueue hand them out), their buffer and journal heads
        (the slabs' next objects), the radix trees with their dirty tags, the inactive
        list, the transaction's data list, the blocks in the bitmaps and the indirect
        blocks, the inode's size. The metadata buffers' journal state is left to the
        first real write. The caches see none of it: they start empty. A test compares
        the result with real writes."""
        zone_pages = self.pool_pages // self.cpus
        records = zone_pages if records is None else records
        if self.written:
            raise ValueError("prefill works on a fresh Kernel only")
        if records % 16 or not 0 < records <= zone_pages:
            raise ValueError(f"records must be a multiple of 16 from 16 to {zone_pages}")
        if not 0 <= clean_before <= records:
            raise ValueError(f"clean_before must be from 0 to the records ({records})")
        if not 0 <= committed_before <= clean_before:
            raise ValueError(f"committed_before must be from 0 to clean_before ({clean_before})")
        self._check_room(records)
        record = bytearray(self.machine.read(self.ctx[0]["buf"], RECORD))
        record[:4] = (0x5A5A5A5A).to_bytes(4, "little")          # fill_buffer's word
        for c in self.ctx:
            self._poke(c["buf"], record)
        self._poke(self.frames, bytes(record) * self.frame_count)
        order = self._prefill_pages(records)
        self._prefill_structures(order, records, clean_before, committed_before)
        self.written = records

    def _prefill_pages(self, records):
        """(CPU, offset, page slot) in the order the writes would take them: round-robin
        over the CPUs, each refilling its list 16 pages at a time from the zone."""
        next_free, order, stack = 0, [], [[] for _ in range(self.cpus)]
        for offset in range(records):
            for k in range(self.cpus):
                if not stack[k]:
                    stack[k] = list(range(next_free, next_free + 16))
                    next_free += 16
                order.append((k, offset, stack[k].pop()))
        self._word(self.zone + ZONE["FREE_NEXT"], self.mem_map + PAGE_STRUCT * next_free)
        self._word(self.zone + ZONE["FREE_LEFT"], self.pool_pages - next_free)
        return order

    def _prefill_structures(self, order, records, clean_before=0, committed_before=0):
        """The pages, buffer heads and journal heads of ``order`` (built as arrays and
        written at once), the inactive list, the transaction's data list, the trees."""
        m = self.machine
        arrays = {name: [self._read(self.caches[name] + KC["ARRAY"] + 4 * k)
                         for k in range(self.cpus)]
                  for name in ("bh_cachep", "journal_head_cache", "radix_tree_node_cachep")}
        ring = {name: np.array([self._read(ac + AC["NEXT"]) for ac in acs], np.int64)
                for name, acs in arrays.items()}
        cpu = np.array([k for k, _, _ in order], np.int64)
        offset = np.array([o for _, o, _ in order], np.int64)
        slot = np.array([p for _, _, p in order], np.int64)
        page = self.mem_map + PAGE_STRUCT * slot
        bh = ring["bh_cachep"][cpu] + BH_SIZE * offset
        jh = ring["journal_head_cache"][cpu] + JH_SIZE * offset
        mapping = np.array([f["mapping"] for f in self.files], np.int64)[cpu]
        block = np.array([self.block_of(k, o) for k, o, _ in order], np.int64)
        head = self.zone + ZONE["INACTIVE"]
        lru = page + PG["LRU_NEXT"]
        # list_add at the head, oldest first: each page's next is the one before it
        older = np.concatenate(([head], lru[:-1]))
        newer = np.concatenate((lru[1:], [head]))
        dirty = offset >= clean_before
        flags = sum(1 << PG_BITS[b] for b in ("uptodate", "lru", "referenced", "private"))
        flags = flags + dirty * (1 << PG_BITS["dirty"])
        pages = np.zeros((self.pool_pages, 8), np.uint32)
        pages[slot] = np.stack([flags, np.full_like(slot, 2),
                                np.zeros_like(slot), bh, mapping, FIRST_INDEX + offset,
                                older, newer], axis=1)
        used = int(slot.max()) + 1
        m.write(self.mem_map, pages[:used].tobytes())
        self._poke(head, _words(int(lru[-1]), int(lru[0])))
        self._word(self.zone + ZONE["NR_INACTIVE"], len(order))
        filed = offset >= committed_before     # on the data list, with a journal head
        state = sum(1 << BH_BITS[b] for b in ("Uptodate", "Mapped"))
        state = state + dirty * (1 << BH_BITS["Dirty"]) + filed * (1 << BH_BITS["JBD"])
        n = len(order)
        bhs = np.stack([state, bh, page, filed, np.full(n, PAGE), block,
                        np.zeros(n), np.full(n, self.bdev), np.zeros(n), jh * filed,
                        np.zeros(n), np.zeros(n)], axis=1).astype(np.int64).astype(np.uint32)
        t = self.transaction
        listed = jh[filed]                              # the data list, in write order
        jhs = np.zeros((n, JH_SIZE // 4), np.uint32)
        word = {field: offset // 4 for field, offset in JH.items()}
        jhs[filed, word["BH"]], jhs[filed, word["JLIST"]] = bh[filed], BJ["SYNCDATA"]
        jhs[filed, word["TRANSACTION"]] = t
        jhs[filed, word["TNEXT"]] = np.roll(listed, -1)
        jhs[filed, word["TPREV"]] = np.roll(listed, 1)
        for k in range(self.cpus):                       # each CPU's objects are contiguous
            mine = np.flatnonzero(cpu == k)
            m.write(int(bh[mine[0]]), bhs[mine].tobytes())
            m.write(int(jh[mine[0]]), jhs[mine].tobytes())
            for name, size in (("bh_cachep", BH_SIZE), ("journal_head_cache", JH_SIZE)):
                self._slab_taken(arrays[name][k], size, records)
        self._word(t + T["SYNC_DATA"], int(listed[0]) if len(listed) else 0)
        self._slab_given_back("journal_head_cache", jh[~filed])
        for k, f in enumerate(self.files):
            mine = np.flatnonzero(cpu == k)
            nodes = self._radix_fill(f["mapping"], FIRST_INDEX + offset[mine], page[mine],
                                     int(ring["radix_tree_node_cachep"][k]), dirty[mine])
            start = int(ring["radix_tree_node_cachep"][k])
            self._slab_taken(arrays["radix_tree_node_cachep"][k], RADIX_NODE,
                             (nodes - start) // RADIX_NODE)
            dind = self._block_data(self._read(f["inode"] + EI["DIND"]))
            index = FIRST_INDEX + offset[mine] - DIND_START
            for j in np.unique(index >> 10):
                ind = self._block_data(self._read(dind + 4 * int(j)))
                here = index >> 10 == j
                words = np.frombuffer(m.read(ind, PAGE), np.uint32).copy()
                words[index[here] & 1023] = block[mine][here]
                m.write(ind, words.tobytes())
        self._prefill_files(records, clean_before)

    def _slab_given_back(self, name, objects):
        """The slab lists of cache ``name`` hold ``objects`` (freed, oldest first), as the
        commit that unfiled them gave them back: through its CPU's array, whose full array
        passes them on (cache_flusharray); the stand-in's FIFO takes them in order."""
        cache = self.caches[name]
        base = self._read(cache + KC["FREE_BASE"])
        if 4 * len(objects) > self._read(cache + KC["FREE_END"]) - base:
            raise ValueError(f"{name}: more freed objects than its slab lists hold")
        self._poke(base, _words(*[int(o) for o in objects]))
        self._poke(cache + KC["FREE_HEAD"], _words(base, base + 4 * len(objects),
                                                   len(objects)))

    def _slab_taken(self, ac, objsize, count):
        """Leave the per-CPU array ``ac`` (of a cache of ``objsize`` bytes, nothing freed
        yet) as ``count`` allocations leave it: each empty array grew the cache by a batch
        (BATCHREFILL_LIMIT 16 while untouched, then batchcount: kmem_cache_alloc in
        mm_2612.S), handed out in address order; what is left of the last batch stays in
        the array."""
        if count == 0:
            return
        _, batch, _ = slab_limits(objsize)
        taken, size = 0, min(batch, 16)
        while taken < count:
            taken, size = taken + size, batch
        start = self._read(ac + AC["START"])
        left = taken - count
        self._poke(ac + AC["AVAIL"], _words(left))
        self._word(ac + AC["NEXT"], start + objsize * taken)
        self._word(ac + AC["TOUCHED"], 1)
        self._poke(ac + AC["ENTRY"], _words(*[start + objsize * (taken - 1 - i)
                                              for i in range(left)]))

    def _radix_fill(self, mapping, indices, pages, node_next, dirty):
        """radix_tree_insert of each (index, page) in order, with the dirty tag where
        ``dirty`` says: the nodes below the fixed level-3 node come from the radix node
        slab's memory at ``node_next``, in the order insertion takes them; returns where
        they end."""
        m = self.machine
        top = self._read(mapping + AS["PAGE_TREE"] + RR["RNODE"])
        level3 = self._read(top + RN["SLOTS"] + 4 * ((int(indices[0]) >> 18) & 63))
        nodes = {}                                      # address -> (count, slots, tags)

        def node(address):
            if address not in nodes:
                words = np.frombuffer(m.read(address, RADIX_NODE), np.uint32).copy()
                nodes[address] = words
            return nodes[address]

        def tag(words, offset):
            words[(RN["TAGS"] >> 2) + (offset >> 5)] |= np.uint32(1 << (offset & 31))

        for index, page, tagged in zip(indices.tolist(), pages.tolist(), dirty.tolist()):
            path = [top, level3]
            parent = level3
            for shift in (12, 6):
                words = node(parent)
                offset = (index >> shift) & 63
                child = int(words[1 + offset])
                if not child:
                    child, node_next = node_next, node_next + RADIX_NODE
                    words[1 + offset] = child
                    words[0] += 1
                    node(child)
                path.append(child)
                parent = child
            leaf = node(parent)
            leaf[1 + (index & 63)] = page
            leaf[0] += 1
            for level, address in zip((3, 2, 1, 0), path):
                if tagged:
                    tag(node(address), (index >> (6 * level)) & 63)
        for address, words in nodes.items():
            m.write(address, words.tobytes())
        return node_next

    def _prefill_files(self, records, clean_before=0):
        """Each file's size, blocks, allocation goal, on-disk inode, page count; the
        groups' bitmaps and free counts; the free blocks counter; per-CPU counts."""
        for k, f in enumerate(self.files):
            inode = f["inode"]
            size = (FIRST_INDEX + records) * PAGE
            self._poke(inode + EI["LAST_ALLOC_LOGICAL"],
                       _words(FIRST_INDEX + records - 1, self.block_of(k, records - 1)))
            self._poke(inode + EI["DISKSIZE"], _words(size, size >> 32))
            self._poke(inode + I["SIZE"], _words(size, size >> 32))
            self._word(inode + I["BLOCKS"], (FIRST_INDEX + records) * 8)
            raw = self.itable + RAW_INODE * ((f["ino"] - 1) % INODES_PER_GROUP)
            self._word(raw + RAW["SIZE"], size)
            self._word(raw + RAW["DIR_ACL"], size >> 32)
            self._word(f["mapping"] + AS["NRPAGES"], records)
            self._poke(f["file"] + F["POS"], _words(size, size >> 32))
            blocks = np.array([self.block_of(k, o) for o in range(records)], np.int64)
            for g in range(GROUP_NO + 1 + k * self.groups_per_file,
                           GROUP_NO + 1 + (k + 1) * self.groups_per_file):
                bits = np.unpackbits(np.frombuffer(self.machine.read(self.bitmaps[g], PAGE),
                                                   np.uint8), bitorder="little").copy()
                here = blocks[blocks // BLOCKS_PER_GROUP == g] % BLOCKS_PER_GROUP
                bits[here] = 1
                self._poke(self.bitmaps[g], np.packbits(bits, bitorder="little").tobytes())
                desc = self._block_data(self.gd_block) + 32 * (g & 127) + GD["FREE_BLOCKS"]
                self._poke(desc, int(BLOCKS_PER_GROUP - bits.sum()).to_bytes(2, "little"))
            pcpu = self.pcpu[k]
            self._word(pcpu + PCPU["FBC_COUNT"], -(records % FBC_BATCH))
            self._word(pcpu + PCPU["BH_NR"], records)
            self._word(pcpu + PCPU["RATELIMITS"], records % (self.ratelimit + 1))
            self._word(pcpu + PCPU["PAGE_STATE"] + PS["NR_DIRTY"], records - clean_before)
        folded = self.cpus * (records // FBC_BATCH) * FBC_BATCH
        self._word(self.sb + SB["FREE_COUNT"], 10_000_000 - folded)

    # -------------------------------------------------------------- checking

    def _bh_of_block(self, block):
        return dict(self._meta)[block]

    def check(self):
        """The file system and the kernel's structures after the writes so far, checked
        against what the writes must have left (RuntimeError naming the first thing
        wrong); returns a dict of what was found."""
        n = self.written
        facts = {"records": n, "cached_pages": 0, "data_jh": 0}
        for k, f in enumerate(self.files):
            inode = f["inode"]
            size = (FIRST_INDEX + n) * PAGE
            got = self._read(inode + I["SIZE"], 8)
            _expect(got == size, f"CPU {k}'s file: i_size {got}, not {size}")
            got = self._read(inode + EI["DISKSIZE"], 8)
            _expect(got == size, f"CPU {k}'s file: i_disksize {got}, not {size}")
            got = self._read(inode + I["BLOCKS"])
            _expect(got == (FIRST_INDEX + n) * 8, f"CPU {k}'s file: i_blocks {got}")
            raw = self.itable + RAW_INODE * ((f["ino"] - 1) % INODES_PER_GROUP)
            raw_size = self._read(raw + RAW["SIZE"]) | self._read(raw + RAW["DIR_ACL"]) << 32
            _expect(raw_size == size, f"CPU {k}'s on-disk inode: size {raw_size}")
            self._check_blocks(k, f, n)
            self._check_mapping(k, f, facts)
        self._check_journal(facts)
        self._check_locks()
        return facts

    def _check_blocks(self, k, f, n):
        """The file's blocks: taken in its groups' bitmaps, and in its indirect blocks."""
        for j in range(self.groups_per_file):
            g = GROUP_NO + 1 + k * self.groups_per_file + j
            bits = np.unpackbits(np.frombuffer(self.machine.read(self.bitmaps[g], PAGE),
                                               np.uint8), bitorder="little")
            taken = int(bits[DATA_START_BIT:].sum())
            want = min(max(self.used_blocks + n - j * DATA_PER_GROUP, 0), DATA_PER_GROUP)
            _expect(taken == want and bits[DATA_START_BIT:DATA_START_BIT + want].all(),
                    f"CPU {k}'s group {g}: {taken} blocks taken, not the first {want}")
        dind = self._block_data(self._read(f["inode"] + EI["DIND"]))
        for offset in range(n):
            index = FIRST_INDEX + offset - DIND_START
            ind = self._block_data(self._read(dind + 4 * (index >> 10)))
            slot = self._read(ind + 4 * (index & 1023))
            _expect(slot == self.block_of(k, offset),
                    f"CPU {k}'s page {FIRST_INDEX + offset}: block {slot} in its "
                    f"indirect block, not {self.block_of(k, offset)}")

    def _block_data(self, block):
        return self._read(self._bh_of_block(block) + BH["DATA"])

    def _check_mapping(self, k, f, facts):
        """Every page of the file in the page cache: in the tree at its index, holding the
        record, its buffer mapped to its block."""
        mapping = f["mapping"]
        record = bytearray(self.machine.read(self.ctx[k]["buf"], RECORD))
        pages = 0
        for p in range(self.pool_pages):
            page = self.mem_map + PAGE_STRUCT * p
            if self._read(page + PG["MAPPING"]) != mapping:
                continue
            pages += 1
            index = self._read(page + PG["INDEX"])
            _expect(self._lookup(mapping, index) == page,
                    f"CPU {k}'s page {index} is not in its radix tree")
            frame = self.frames + PAGE * (p % self.frame_count)
            _expect(self.machine.read(frame, RECORD) == record,
                    f"CPU {k}'s page {index}: its bytes are not the record written")
            bh = self._read(page + PG["PRIVATE"])
            block = self.block_of(k, index - FIRST_INDEX)
            _expect(self._read(bh + BH["BLOCKNR"]) == block,
                    f"CPU {k}'s page {index}: its buffer maps block "
                    f"{self._read(bh + BH['BLOCKNR'])}, not {block}")
            if self._read(bh + BH["STATE"]) & (1 << BH_BITS["JBD"]):
                facts["data_jh"] += 1
        nrpages = self._read(mapping + AS["NRPAGES"])
        _expect(pages == nrpages, f"CPU {k}'s mapping: nrpages {nrpages}, {pages} found")
        facts["cached_pages"] += pages

    def _lookup(self, mapping, index):
        node = self._read(mapping + AS["PAGE_TREE"] + RR["RNODE"])
        for level in range(RADIX_HEIGHT - 1, -1, -1):
            if not node:
                return 0
            node = self._read(node + RN["SLOTS"] + 4 * ((index >> (6 * level)) & 63))
        return node

    def _transactions(self):
        """The transactions alive: the first (running, or committing once locked down) and
        the running one a journal_start made after the lock-down, if any."""
        running = self.running()
        return [self.transaction] + ([running] if running not in (0, self.transaction)
                                     else [])

    def _check_journal(self, facts):
        """The transactions' data lists hold exactly the data buffers with journal heads,
        each linked both ways and filed on the list it is on; no handle is open."""
        count = 0
        for t in self._transactions():
            head = self._read(t + T["SYNC_DATA"])
            jh = head
            while jh:
                count += 1
                nxt = self._read(jh + JH["TNEXT"])
                _expect(self._read(nxt + JH["TPREV"]) == jh, "t_sync_datalist: a broken link")
                _expect(self._read(jh + JH["TRANSACTION"]) == t, "a data buffer on the list "
                        "of a transaction it is not filed on")
                bh = self._read(jh + JH["BH"])
                _expect(self._read(bh + BH["PRIVATE"]) == jh, "a data journal_head's buffer "
                        "does not point back at it")
                jh = 0 if nxt == head else nxt
                _expect(count <= self.pool_pages, "t_sync_datalist does not close")
            _expect(self._read(t + T["UPDATES"]) == 0, "a handle is still open")
        _expect(count == facts["data_jh"], f"t_sync_datalist holds {count} buffers, "
                f"{facts['data_jh']} data buffers have journal heads")
        facts["sync_datalist"] = count
        facts["t_nr_buffers"] = sum(self._read(t + T["NR_BUFFERS"])
                                    for t in self._transactions())
        for task in [c["task"] for c in self.ctx] + self.pdflush:
            _expect(self._read(task + TSK["JOURNAL_INFO"]) == 0,
                    "current->journal_info is still set")

    def _check_locks(self):
        spins = {"j_state_lock": self.journal + J["STATE_LOCK"],
                 "j_list_lock": self.journal + J["LIST_LOCK"],
                 "lru_lock": self.zone + ZONE["LRU_LOCK"]}
        for t in self._transactions():
            spins[f"t_handle_lock of {t:#x}"] = t + T["HANDLE_LOCK"]
        for f in self.files:
            spins[f"i_lock of {f['ino']}"] = f["inode"] + I["LOCK"]
            spins[f"private_lock of {f['ino']}"] = f["mapping"] + AS["PRIVATE_LOCK"]
            _expect(self._read(f["mapping"] + AS["TREE_LOCK"]) == RW_LOCK_BIAS,
                    "a tree_lock is held")
            _expect(self._read(f["inode"] + I["SEM"]) == 1, "an i_sem is held")
        for name, address in spins.items():
            _expect(self._read(address, 1) == SPIN_FREE, f"{name} is held")
        for _, bh in self._meta:
            state = self._read(bh + BH["STATE"])
            held = state & ((1 << BH_BITS["State"]) | (1 << BH_BITS["JournalHead"]) |
                            (1 << BH_BITS["Lock"]))
            _expect(not held, f"a metadata buffer's bit lock is held (state {state:#x})")


class _Caller:
    """A task stand-in for the Kernel's guest calls outside paced writes."""
    def __init__(self, call):
        self.call = call


def _expect(condition, message):
    if not condition:
        raise RuntimeError(message)
