"""2.6.12's structures as the guest kernel lays them out (i386 offsets and sizes, fields in
2.6.12's order), the file system's geometry and the kernel's constants in memory.
"""
from __future__ import annotations


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
J = dict(FLAGS=0, ERRNO=4, SB_BUFFER=8, SUPERBLOCK=12, STATE_LOCK=20, BARRIER_COUNT=24,
         RUNNING=48, COMMITTING=52,
         WAIT_UPDATES=120, HEAD=152, TAIL=156, FREE=160, FIRST=164, LAST=168, DEV=172,
         LIST_LOCK=192, UUID=216, MAX_BUFFERS=236, COMMIT_INTERVAL=240,
         CHECKPOINT_TRANSACTIONS=56, WAIT_TRANSACTION_LOCKED=60, WAIT_LOGSPACE=72,
         WAIT_DONE_COMMIT=84,                # include/linux/jbd.h 669-675
         TAIL_SEQUENCE=200, TRANSACTION_SEQUENCE=204, COMMIT_SEQUENCE=208,
         COMMIT_TIMER=244,            # j_commit_timer: a struct timer_list *
         REVOKE=272, REVOKE_TABLE=276,    # j_revoke, j_revoke_table[2]
         WBUF=284, WBUFSIZE=288,      # after j_commit_timer, j_revoke_lock, j_revoke,
                                      # j_revoke_table[2]
         # the model's: journal_commit_transaction's phase-3 locals, kept across the turns
         # of a commit (routines/x86/commit_meta_2612.S), and the log's control buffers
         C_DESC=296, C_TAGP=300, C_SPACE=304, C_FIRST=308, C_TAG=312, C_COMMIT=316,
         C_CTL=320, C_CTLNEXT=328)


JOURNAL_SIZE = 384


# journal_superblock_t (include/linux/jbd.h 176-196 of 2.6.12.1): the fields
# journal_update_superblock writes, big-endian
JSB = dict(S_SEQUENCE=24, S_START=28, S_ERRNO=32)


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
AS = dict(HOST=0, PAGE_TREE=4, TREE_LOCK=16, NRPAGES=48, WRITEBACK_INDEX=52, A_OPS=56, BDI=64,
          PRIVATE_LOCK=68)


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
         MAX_PHYS_SEGMENTS=92, MAX_HW_SEGMENTS=96, NR_BATCHING=100, BDI=104, LOCK=128)
# (BDI: the queue's backing_dev_info, embedded in 2.6.12's request_queue; the model's is the
# block (Kernel.bdi) the mappings' backing_dev_info points at)


# struct io_context (include/linux/blkdev.h 74-89 of 2.6.12.1)
IOC = dict(REFCOUNT=0, PID=4, LAST_WAITED=8, NR_BATCH_REQUESTS=12, LOCK=16, AIC=20, CIC=24)


IOC_SIZE = 28
BLK_BATCH_REQ = 32                  # drivers/block/ll_rw_blk.c 71-74: q->nr_batching, and
BLK_BATCH_TIME_HZ_DIV = 50          # BLK_BATCH_TIME HZ / 50


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


# struct address_space_operations: writepage first, writepages the fourth pointer (readpage,
# sync_page between), prepare_write and commit_write after six pointers
AOPS = dict(WRITEPAGE=0, WRITEPAGES=12, PREPARE_WRITE=24, COMMIT_WRITE=28)


MAPPING_SIZE = 84


# struct ext3_inode_info with struct inode (vfs_inode) and its address_space (i_data)
EI = dict(DATA=0, DIND=52, FLAGS=60, FILE_ACL=64, DIR_ACL=68, DTIME=72, BLOCK_GROUP=76, STATE=80,
          LAST_ALLOC_LOGICAL=84, LAST_ALLOC_PHYSICAL=88, DISKSIZE=132, EXTRA_ISIZE=140,
          TRUNCATE_SEM=144)


VFS = 164                           # struct inode inside ext3_inode_info


I = dict(HASH=VFS + 0, LIST=VFS + 8, DIRTIED_WHEN=VFS + 304, INO=VFS + 32, COUNT=VFS + 36, MODE=VFS + 40,
         NLINK=VFS + 44, UID=VFS + 48,
         GID=VFS + 52, SIZE=VFS + 60, ATIME=VFS + 68, MTIME=VFS + 76, CTIME=VFS + 84,
         BLKBITS=VFS + 92, BLOCKS=VFS + 104, BYTES=VFS + 108, LOCK=VFS + 112,
         SEM=VFS + 116, SB=VFS + 160, FLOCK=VFS + 164, MAPPING=VFS + 168, I_DATA=VFS + 172,
         STATE=VFS + 300, GENERATION=VFS + 320,
         OP=VFS + 152)                  # i_op: after i_sem (20 bytes) and i_alloc_sem (16)


INODE_SIZE = VFS + 360


EXT3_STATE_NEW = 8


I_DIRTY = 7                         # I_DIRTY_SYNC | I_DIRTY_DATASYNC | I_DIRTY_PAGES


# include/linux/fs.h 1019-1027 of 2.6.12.1: i_state's other bits
I_STATE_BITS = dict(DIRTY_PAGES=4, LOCK_BIT=3, LOCK=8, FREEING=16, CLEAR=32)


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


# the VFS's struct super_block (include/linux/fs.h 756-783 of 2.6.12.1, i386, no debugging:
# s_blocksize_bits and s_dirt two bytes at 20; s_maxbytes a u64 at 24; s_umount a
# rw_semaphore of 16 bytes, s_lock a semaphore of 20), up to s_io: what wb_kupdate's pass
# touches (routines/x86/kupdate_2612.S). The model's SB above stands for EXT3_SB(sb), the
# file system's own; this is the VFS's, one for the ext3 file system and one for the
# block devices' pseudo file system (blockdev_superblock)
VSB = dict(LIST=0, DIRT=21, OP=36, ROOT=60, UMOUNT=64, LOCK=80, COUNT=100, INODES=124,
           DIRTY=132, IO=140)


VSB_SIZE = 160


# struct semaphore (include/asm-i386/semaphore.h: count, sleepers, the wait queue: its lock
# and list) and struct super_operations' write_super (include/linux/fs.h 991-1003)
SEM = dict(COUNT=0, SLEEPERS=4, WAIT=8)
SOPS = dict(WRITE_INODE=16, PUT_INODE=20, WRITE_SUPER=36)


# struct writeback_control (include/linux/writeback.h 36-58): start and end loff_t; the
# bit-fields nonblocking, encountered_congestion, for_kupdate, for_reclaim in one word
WBC = dict(BDI=0, SYNC_MODE=4, OLDER_THAN_THIS=8, NR_TO_WRITE=12, PAGES_SKIPPED=16, START=20,
           END=28, FLAGS=36)


PF_FLUSHER = 0x00001000             # include/linux/sched.h 782: current_is_pdflush


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
           IT_SCHED_EXPIRES=0x1c8,
           # thread_struct's eip and esp (switch_to saves them: routines/x86/blk_wait_2612.S),
           # io_context (after journal_info, reclaim_state, proc_dentry, backing_dev_info),
           # and the model's own mark of a task whose sleep its harness resumes
           THREAD_EIP=0x250, THREAD_ESP=0x254, IO_CONTEXT=0x2f0, HARNESS=0x2fc)


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
PCPU = dict(BH_LRU=0, BH_LRU_PREV=-4, BH_LRU_LAST=28, BH_NR=32, RATELIMITS=36,
            LRU_ADD_NR=40, LRU_ADD_ACTIVE_NR=44,    # lru_add_pvecs' and lru_add_active_pvecs'
            FBC_COUNT=64,                           # counts: only they are read (both empty)
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


RW_LOCK_BIAS = 0x01000000           # a free rwlock_t (include/asm-i386/rwlock.h)


SPIN_FREE = 1                       # a free spinlock_t (its byte is 1)


FD = 3                              # iozone's file: after stdin, stdout, stderr


XTIME = 1123977600                  # 2005-08-14, the date of the paper's runs


INODE_TABLE_BLOCKS = 512            # a group's bitmap, inode bitmap and inode table take


                                    # its first 514 blocks (16,384 inodes of 128 B)
INODES_PER_GROUP = 16384            # mke2fs: one inode per 8 KB (32768 blocks x 4 KB / 8 KB)


#: __log_space_left (fs/jbd/journal.c 425): log blocks held back for control blocks
MIN_LOG_RESERVED_BLOCKS = 32
MAX_TRANSACTION_BUFFERS = 2048      # j_max_transaction_buffers: a quarter of a 32 MB


                                    # journal of 4 KB blocks (mke2fs's size for large file
                                    # systems); a handle takes 10 credits, gives most back
FMODE_WRITE = 2


DEFAULT_PRIO = 120                  # include/linux/sched.h: MAX_RT_PRIO + 20 (nice 0)


S_IFREG_644 = 0o100644
S_IFBLK = 0o060000                  # include/linux/stat.h


def _words(*values):
    return b"".join((v & 0xFFFFFFFF).to_bytes(4, "little") for v in values)
