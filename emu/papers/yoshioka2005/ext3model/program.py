"""The guest program: the routines (routines/x86/*_2612.S) and the copy of the kernel under test,
assembled with the structures' equates in front of them; what the model leaves out.
"""
from __future__ import annotations

from ....context import routine
from .. import usercopy
from .pacing import MEMORY_MB, REQUEST_PAGES
from .writeback import ratelimit_pages, writer_chunk_pages
from .structures import (AC, AOPS, ARQ, AS, AS_HASH_SHIFT, BDEV, BDI, BH, BH_BITS, BH_LRU_SIZE,
                         BH_SIZE, BIO, BJ, BLOCKS_PER_GROUP, BVEC, CMD, CTX, DIND_START, DISK_IRQ,
                         DK, DS, EI, EXT3_STATE_NEW, F, FBC_BATCH, FILES, GD, H, HANDLE_SIZE,
                         HARDIRQ_OFFSET, HOST, I, I_STATE_BITS, IRQD, IRQ_DESC_SIZE, I_DIRTY, J, JH, JH_SIZE, KC,
                         META_SLOTS, MIN_LOG_RESERVED_BLOCKS, MM, NR_WRITE, PAGEVEC_SIZE,
                         PAGE_STRUCT, PCPU, PCP_STACK_MAX,
                         PG, PG_BITS, PS, PT_ORIG_EAX, Q, RADIX_HEIGHT, RADIX_NODE, RAW, RAW_INODE,
                         RCP, RCU, REQ_FLAGS, RN, RQ, RQS, RR, RT, SB, SCSI_SOFTIRQ, SD, SG, SGRP,
                         SG_SIZE, SOFTIRQ_OFFSET, SWAP_CLUSTER_MAX, T, TI, TIMER, TIMER_SOFTIRQ, TK,
                         TRANSACTION_SIZE, TSK, TVB, WAIT_QUEUE_HEAD, ZONE, VSB, SEM, SOPS, WBC,
                         JSB, IOC, IOC_SIZE, BLK_BATCH_TIME_HZ_DIV, TIF_NEED_RESCHED)
from .tick import HZ


KERNELS = {"2.6.12": "x86/copy_from_user_ll.S", "patched": "x86/copy_from_user_ll_nt.S"}


LATE_CACHES = ("size128_cache",)    # built after the rest of the kernel (_build_commit_state)


ROUTINES = ("x86/entry_2612.S", "x86/spinlock_2612.S", "x86/jbd_2612.S", "x86/buffer_2612.S",
            "x86/ext3_2612.S", "x86/mm_2612.S", "x86/vfs_2612.S", "x86/iozone_write.S",
            "x86/idle_2612.S", "x86/writeback_2612.S", "x86/commit_2612.S",
            "x86/block_2612.S", "x86/scsi_2612.S", "x86/commit_meta_2612.S",
            "x86/timer_2612.S", "x86/checkpoint_2612.S", "x86/revoke_2612.S",
            "x86/block_dev_2612.S", "x86/tick_2612.S", "x86/kupdate_2612.S",
            "x86/highmem_2612.S", "x86/checkpoint_log_2612.S", "x86/fs_writeback_2612.S",
            "x86/blk_wait_2612.S")      # last: what it adds moves no code before it


#: a throttled writer's chunk in the mail's run (4 CPUs, MEMORY_MB's nominal memory)
_CHUNK = writer_chunk_pages(ratelimit_pages(MEMORY_MB[1], 4))


LEFT_OUT = (
    ("the MMU (the x86 model has none): kmap_atomic's PTE write, its invlpg and the page "
     "walker's two loads at the copy's first access are guest code (routines/x86/"
     "highmem_2612.S), the walk's latency beyond its loads and the TLB's other misses are not"),
    ("of kjournald's commit (paced writes only: one commit, started in kjournald's first "
     "pause (Kernel.commit_pending), its data loop a turn per page written, its metadata a "
     "buffer at a time at the pace a 5 s interval's writes dirty it, not after its data as "
     "2.6.12's phases order them): its end and the next commit's start, in no paced run "
     "(a whole commit runs on its own, Kernel.whole_commit, and the scored runs take their "
     "share of its once-a-commit work: yoshioka2005.commit_once_events), the commit timer "
     "firing: its 5 s never fall in a run (Kernel.commit_timer_left), and commit_timeout's "
     "wake_up_process is a stand-in that faults (add_timer, del_timer_sync and the tick's "
     "__run_timers, which would call it, run), a checkpoint forced by the log's space in "
     "a paced run (in the mail's run a writer's journal_start finds the log short about "
     "once a commit interval, yoshioka2005.mail_journal, tens of thousands of writes per "
     "CPU apart: the scored runs take their share of one, log_do_checkpoint as guest code "
     "on a transaction of the model's own commit, Kernel.checkpoint, its sleeps on the "
     "I/O ended by the disk's dispatch and interrupt, yoshioka2005.commit_once_events; "
     "__log_wait_for_space's loop and j_checkpoint_sem around it are not guest code), the "
     "metadata's write-back in paced runs by anything else (the model's metadata pages "
     "belong to no mapping there, so a buffer leaving the journal sets only its page's "
     "dirty bit: in the mail's run the throttled writers hold the disk's queue congested, "
     "so neither background_writeout nor wb_kupdate reaches the block device's inode and "
     "the log's checkpoints write the metadata back, yoshioka2005.mail_writeback and "
     "mail_journal; wb_kupdate's pass is guest code, routines/x86/kupdate_2612.S, "
     "Kernel.kupdate_pass, to where the model's state stops it, at the files' young "
     "inodes; its retries while the queue is congested (blk_congestion_wait, a tenth of a "
     "second) are not)"),
    ("the disk's own timing: its driver takes a request when it can grow no more "
     "(REQUEST_PAGES, an estimate) and its interrupt ends it a quarter of that many writes "
     "later (the mail's rate); kjournald's own writes end at once, on its CPU"),
    ("the disk's interrupt's CPU moving: kirqd moves it at most every 5 s and the runs are "
     "shorter, so one CPU (IRQ_CPU) takes them all"),
    ("of the anticipatory elevator: its sort tree, front merges and anticipation (the queue's "
     "list stands for its FIFO); the unplug timer; the I/O APIC's acknowledgement and the "
     "adapter's registers"),
    "the disk: write() returns once the data is in the page cache",
    ("of who writes the file pages back, and in what batches (in the mail's steady state "
     f"the throttled writers, each in its own write(), a chunk of {_CHUNK:,} pages: "
     "sync_writeback_pages, 1.5 x ratelimit_pages, in whole pagevecs, through "
     "writeback_inodes, __writeback_single_inode and mpage_writepages' tagged gang look-up, "
     "while pdflush's background_writeout finds the queue congested and sleeps, as "
     "routines/x86/fs_writeback_2612.S argues from the sources; the paced runs run the walk "
     f"as guest code, a chunk every {_CHUNK:,} writes a CPU, each run whole periods: "
     "ext3model.chunk_period, yoshioka2005.writebatch.period_writes): balance_dirty_pages' "
     "looks between chunks (every ratelimit_pages writes, of which ratelimit / chunk "
     "throttle on the mean: the model runs the mean period) and the throttled path's "
     "get_dirty_limits around the walk (the model's page state counts its own pages, not "
     "the machine's); where a writer's chunk falls in the period (k / cpus of it, as "
     "STAGGER spreads the writes); the disk's driver taking a chunk's requests while the "
     "walk fills them (it takes them after the walk, one after the other at the disk's "
     "pace)"),
    "ext3's block reservation windows (one window search per ~1000 blocks)",
    ("balance_dirty_pages' sleep (blk_congestion_wait: a chunk writes its whole "
     "write_chunk, its walk blocking on a full queue rather than stopping at a congested "
     "one, so the writer's duty is done without it); of the writer's wait for a free "
     "request (get_request / get_request_wait, drivers/block/ll_rw_blk.c 1875-1995 of "
     "2.6.12.1, guest code in routines/x86/blk_wait_2612.S, the sleep resumed by "
     "ext3model/sleep.py): elv_may_queue (a write may queue), try_to_wake_up's choice of "
     "CPU (the writer stays on its own), the batch count taken down below the congestion "
     "threshold and clear_queue_congested's instructions (the common path is the one the "
     "scored runs had). At the nominal estimates a chunk's requests, "
     f"{-(-_CHUNK // REQUEST_PAGES[1])} of {REQUEST_PAGES[1]} pages, stay far below the "
     "congestion threshold (113 of 128; the scored runs' most is kernel_facts' "
     "most_queued) and no writer sleeps; the writers' chunks together (STAGGER 0) in "
     f"requests of {REQUEST_PAGES[2]} pages fill the queue, and a writer that is not a "
     "batcher sleeps until the disk's interrupt frees a request (kernel_facts' sleeps)"),
    ("the scheduler's switches and other tasks (kjournald, kswapd, pdflush): paced writes "
     "(Kernel.paced_writes) run the idle loop to its hlt, but neither the schedule() either "
     "side of it nor the wake-up (the runqueue's nr_running and nr_iowait are set from "
     "outside); a writer's sleep on a full request queue runs both sides as guest code "
     "(blk_wait_2612.S: schedule_sleep's deactivate and switch, try_to_wake_up), but not "
     "schedule()'s choice of the next task and its run-queue lists"),
    ("of the timer tick (routines/x86/tick_2612.S; paced writes only, every 1/HZ s of each "
     "CPU's clock): in back-to-back runs (a guest call cannot be interrupted, and those runs "
     "are one call a CPU); a tick that comes while the CPU is busy waits for the end of that "
     "guest call (a write, or a piece of a pause's work) and runs on the writer's stack; "
     "ack_APIC_irq's EOI write; IRQ0's own interrupt on CPU 0 (its do_IRQ, irq_desc and "
     "I/O APIC, mark_offset_tsc's PIT reads: do_timer runs in an entry of its own just "
     "before CPU 0's local tick); rcu_check_callbacks and RCU's tasklet (the model has no "
     "RCU work pending: rcu_pending is tested); a timer cascading (none due in a run; a "
     "timer due runs: the commit timer's commit_timeout above); find_busiest_queue and "
     "move_tasks (no runqueue holds more than one task, so "
     "find_busiest_group finds none busier); the SMT sibling domain of CONFIG_SCHED_SMT "
     "(whether the mail's CPUs had Hyper-Threading is not known); scheduler_tick's "
     "interactive round robin and a used-up slice's requeue (a new slice is given); "
     "calc_load's averages every 5001 ticks and second_overflow once a second"),
    "file_update_time (mtime changes once per second: one ext3_dirty_inode per second)",
    ("of CONFIG_PREEMPT (config.PREEMPT, off in the scored runs; routines/x86/spinlock_2612.S "
     "and the files it names follow it): spinlock_t's and rwlock_t's break_lock word (the "
     "structures keep their offsets without it, so the lock functions make none of its "
     "stores); the preempt_disable/preempt_enable of the throttled writer's walk "
     "(fs_writeback_2612.S's get_cpu_var) and of the patched copy's kernel_fpu_begin/_end "
     "(mmx_memcpy_nt.S, whose thread state is a fixed block); preempt_schedule and "
     "preempt_schedule_irq past their tests (a writer's TIF_NEED_RESCHED is never set in a "
     "run: they fault if reached); spins' reading of the lock loops knows their shape "
     "without CONFIG_PREEMPT only (with it, the tried xchgb loops read as waits)"),
)


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
             ".equ KM_USER0, 3",              # include/asm-i386/kmap_types.h
             ".equ JFS_ABORT, 2",             # include/linux/jbd.h 813
             f".equ MIN_LOG_RESERVED_BLOCKS, {MIN_LOG_RESERVED_BLOCKS}",
             ".equ S_IFMT, 0xF000", ".equ S_IFBLK, 0x6000",     # include/linux/stat.h
             ".equ BDI_CAP_NO_ACCT_DIRTY, 1", ".equ PF_LESS_THROTTLE, 0x00100000",
             ".equ MAX_RT_PRIO, 100", ".equ BIO_UPTODATE, 0", ".equ BIO_SEG_VALID, 3",
             ".equ REQ_CMD, 16", ".equ RQ_ACTIVE, 1", ".equ RQ_INACTIVE, -1",
             ".equ QUEUE_FLAG_READFULL, 3", ".equ QUEUE_FLAG_DEAD, 5",
             ".equ QUEUE_FLAG_PLUGGED, 7", ".equ QUEUE_FLAG_DRAIN, 8",
             f".equ AS_HASH_SHIFT, {AS_HASH_SHIFT}", f".equ SIZEOF_SG, {SG_SIZE}",
             f".equ SIZEOF_IRQ_DESC, {IRQ_DESC_SIZE}", f".equ DISK_IRQ, {DISK_IRQ}",
             f".equ HARDIRQ_OFFSET, {HARDIRQ_OFFSET}", f".equ SOFTIRQ_OFFSET, {SOFTIRQ_OFFSET}",
             f".equ SCSI_SOFTIRQ, {SCSI_SOFTIRQ}", f".equ PT_ORIG_EAX, {PT_ORIG_EAX}",
             f".equ TIMER_SOFTIRQ, {TIMER_SOFTIRQ}", f".equ TIF_NEED_RESCHED, {TIF_NEED_RESCHED}",
             f".equ BLK_BATCH_TIME, {HZ // BLK_BATCH_TIME_HZ_DIV}", f".equ IOC_SIZE, {IOC_SIZE}",
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
                          ("SGRP", SGRP), ("RQS", RQS), ("MM", MM), ("VSB", VSB),
                          ("SEM", SEM), ("SOPS", SOPS), ("WBC", WBC),
                          ("JSB", JSB), ("IS", I_STATE_BITS), ("IOC", IOC)):
        lines += [f".equ {prefix}_{name}, {value}" for name, value in table.items()]
    lines += [f".equ BH_{name}, {bit}" for name, bit in BH_BITS.items()]
    lines += [f".equ BJ_{name}, {value}" for name, value in BJ.items()]
    lines += [f".equ PG_{name}, {bit}" for name, bit in PG_BITS.items()]
    return "\n".join(lines) + "\n"


def source(kernel="2.6.12", preempt=0):
    """The whole guest kernel as one source text: the equates, the copy routines of
    ``kernel`` ("2.6.12" or "patched", as emu.papers.yoshioka2005.usercopy), the write path,
    iozone's loop; ``preempt``: CONFIG_PREEMPT, 0 or 1 (config.PREEMPT)."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}: choose one of {', '.join(KERNELS)}")
    if preempt not in (0, 1):
        raise ValueError(f"preempt is CONFIG_PREEMPT, 0 or 1, not {preempt!r}")
    files = usercopy.KERNELS[kernel] + ROUTINES
    return (equates() + f".equ CONFIG_PREEMPT, {preempt}\n" +
            "".join(routine(name).read_text() for name in files))
