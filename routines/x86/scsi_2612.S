/*
 * The disk's side of a write in Linux 2.6.12 on i386, written for the book from the
 * algorithms of drivers/scsi/scsi_lib.c (scsi_request_fn, scsi_prep_fn, scsi_init_io,
 * scsi_alloc_sgtable, scsi_free_sgtable, scsi_release_buffers, scsi_io_completion,
 * scsi_end_request, scsi_next_command), drivers/scsi/scsi.c (scsi_get_command,
 * scsi_put_command, scsi_dispatch_cmd, scsi_done, scsi_softirq, scsi_finish_command,
 * scsi_device_unbusy), drivers/scsi/sd.c (sd_init_command: a WRITE(10) command),
 * drivers/block/ll_rw_blk.c (elv_next_request, blkdev_dequeue_request, blk_rq_map_sg,
 * blk_remove_plug), drivers/block/as-iosched.c (as_remove_queued_request),
 * arch/i386/kernel/entry.S (common_interrupt: SAVE_ALL, ret_from_intr), arch/i386/kernel/irq.c
 * (do_IRQ), kernel/irq/handle.c (__do_IRQ, handle_IRQ_event) and kernel/softirq.c
 * (irq_exit, do_softirq, __do_softirq).
 *
 * disk_dispatch(q, sector) is the driver taking a request off the queue when the disk can
 * take it (the book's ext3model decides when: a request that can grow no more); it finds
 * the request ending at ``sector`` (0xffffffff: the newest), hands it to the driver and
 * returns it (0 if there is none). disk_interrupt(task, rq) is the disk's interrupt when
 * that request is written, on ``task``'s kernel stack: the adapter puts the finished
 * command where its driver looks (a store here, a DMA write there), the CPU enters
 * common_interrupt, do_IRQ runs the driver's handler, which passes the command to scsi_done,
 * and irq_exit runs the SCSI softirq, which ends the request: each of its bios
 * (__end_that_request_first -> bio_endio -> end_bio_bh_io_sync -> the buffer's b_end_io:
 * end_buffer_async_write -> end_page_writeback for writeback's pages), then
 * end_that_request_last (routines/x86/block_2612.S). Left out: the interrupt controller's
 * acknowledgement and end (an I/O APIC register each), the command's timer, the adapter's
 * own registers and the scsi_run_queue at the end (the next request is the model's
 * disk_dispatch), the segment-register loads of SAVE_ALL and the iret.
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 */
        .globl  disk_dispatch
disk_dispatch:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %esi              # q
        pushl   Q_QUEUE_LOCK(%esi)          # scsi_request_fn: the queue locked
        call    _spin_lock_irq
        addl    $4, %esp
        leal    Q_QUEUE_HEAD(%esi), %ecx    # elv_next_request: the request the elevator
        movl    24(%esp), %edx              # hands the driver
        movl    4(%ecx), %ebx               # 0xffffffff: the newest, the list's tail
        cmpl    $-1, %edx
        jne     1f
        cmpl    %ecx, %ebx
        jne     3f
        jmp     7f
1:      movl    (%ecx), %ebx                # else the one ending at sector
2:      cmpl    %ecx, %ebx
        je      7f
        movl    RQ_SECTOR(%ebx), %eax
        addl    RQ_NR_SECTORS(%ebx), %eax
        cmpl    %edx, %eax
        je      3f
        movl    (%ebx), %ebx
        jmp     2b
3:      orl     $(REQ_STARTED), RQ_FLAGS(%ebx)      # the driver has seen it
        movl    (%ebx), %ecx                # blkdev_dequeue_request: list_del_init
        movl    4(%ebx), %edx
        movl    %ecx, (%edx)
        movl    %edx, 4(%ecx)
        movl    %ebx, (%ebx)
        movl    %ebx, 4(%ebx)
        pushl   RQ_ELEVATOR_PRIVATE(%ebx)   # elv_remove_request: as_remove_queued_request
        call    as_del_arq_hash
        addl    $4, %esp
        cmpl    Q_LAST_MERGE(%esi), %ebx    # the merge hint
        jne     4f
        movl    $0, Q_LAST_MERGE(%esi)
4:      lock btrl $(QUEUE_FLAG_PLUGGED), Q_QUEUE_FLAGS(%esi)  # blk_remove_plug
        pushl   Q_QUEUE_LOCK(%esi)          # the queue unlocked for the command's set-up
        call    _spin_unlock_irq
        addl    $4, %esp
        pushl   %ebx                        # scsi_prep_fn
        pushl   %esi
        call    scsi_prep_fn
        addl    $8, %esp
        pushl   RQ_SPECIAL(%ebx)            # scsi_dispatch_cmd(cmd)
        call    scsi_dispatch_cmd
        addl    $4, %esp
        movl    %ebx, %eax
        jmp     8f
7:      pushl   Q_QUEUE_LOCK(%esi)          # nothing to take
        call    _spin_unlock_irq
        addl    $4, %esp
        xorl    %eax, %eax
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* scsi_prep_fn(q, req): a command for the request (scsi_get_command: from the host's
 * pool), its scatterlist (scsi_init_io: scsi_alloc_sgtable, blk_rq_map_sg: a segment per
 * bio_vec of each bio, none physically next to another) and its CDB (sd_init_command:
 * WRITE(10), the block and the count big-endian) */
        .globl  scsi_prep_fn
scsi_prep_fn:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    24(%esp), %ebx              # req
        pushl   scsi_cmd_cache              # scsi_get_command
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, %ebp                  # cmd
        movl    %ebx, CMD_REQUEST(%ebp)
        movl    %ebp, RQ_SPECIAL(%ebx)
        movl    scsi_host, %eax
        movl    %eax, CMD_DEVICE(%ebp)
        movl    $0, CMD_RESULT(%ebp)
        pushl   sgpool_cache                # scsi_alloc_sgtable(cmd, GFP_ATOMIC)
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, %edi                  # sg
        xorl    %ecx, %ecx                  # blk_rq_map_sg: nsegs
        movl    RQ_BIO(%ebx), %esi
1:      testl   %esi, %esi                  # rq_for_each_bio
        jz      2f
        movl    BIO_IO_VEC(%esi), %edx      # bio_for_each_segment: one bio_vec
        movl    BVEC_PAGE(%edx), %eax
        movl    %eax, SG_PAGE(%edi)
        movl    BVEC_OFFSET(%edx), %eax
        movl    %eax, SG_OFFSET(%edi)
        movl    BVEC_LEN(%edx), %eax
        movl    %eax, SG_LENGTH(%edi)
        addl    $(SIZEOF_SG), %edi
        incl    %ecx
        movl    BIO_NEXT(%esi), %esi
        jmp     1b
2:      movl    %ecx, %eax
        imull   $(SIZEOF_SG), %eax, %eax
        subl    %eax, %edi
        movl    %edi, CMD_BUFFER(%ebp)      # cmd->request_buffer = sgpnt
        movl    %ecx, CMD_USE_SG(%ebp)
        movl    RQ_NR_SECTORS(%ebx), %eax   # request_bufflen = nr_sectors << 9
        shll    $9, %eax
        movl    %eax, CMD_BUFFLEN(%ebp)
        movb    $0x2a, CMD_CMND(%ebp)       # sd_init_command: WRITE_10
        movb    $0, CMD_CMND + 1(%ebp)
        movl    RQ_SECTOR(%ebx), %eax       # the block, big-endian
        bswap   %eax
        movl    %eax, CMD_CMND + 2(%ebp)
        movb    $0, CMD_CMND + 6(%ebp)
        movl    RQ_NR_SECTORS(%ebx), %eax   # this_count, big-endian
        xchgb   %al, %ah
        movw    %ax, CMD_CMND + 7(%ebp)
        movb    $0, CMD_CMND + 9(%ebp)
        movl    $10, CMD_CMD_LEN(%ebp)
        orl     $(REQ_DONTPREP), RQ_FLAGS(%ebx)
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* scsi_dispatch_cmd(cmd): the host busy one more (under its lock), the command numbered and
 * given scsi_done, then the driver's queuecommand: the stand-in adapter's mailbox takes the
 * command (the adapter reads its CDB and scatterlist by DMA) */
        .globl  scsi_dispatch_cmd
scsi_dispatch_cmd:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # cmd
        movl    CMD_DEVICE(%ebx), %esi      # shost
        leal    HOST_LOCK(%esi), %eax
        pushl   %eax
        call    _spin_lock_irqsave
        movl    %eax, (%esp)
        leal    HOST_LOCK(%esi), %eax
        pushl   %eax
        incl    HOST_BUSY(%esi)             # scsi_dispatch_cmd runs with host_busy counted
        movl    HOST_SERIAL(%esi), %eax     # scsi_cmd_get_serial
        incl    %eax
        movl    %eax, HOST_SERIAL(%esi)
        movl    %eax, CMD_SERIAL(%ebx)
        leal    scsi_done, %eax
        movl    %eax, CMD_DONE(%ebx)
        movl    %ebx, HOST_MAILBOX(%esi)    # host->hostt->queuecommand(cmd, scsi_done)
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        popl    %esi
        popl    %ebx
        ret

/* disk_interrupt(task, rq): the disk's interrupt for rq on task's kernel stack */
        .globl  disk_interrupt
disk_interrupt:
        pushl   %ebp
        movl    %esp, %ebp
        movl    8(%ebp), %eax               # task
        movl    TSK_ESP0(%eax), %esp        # its kernel stack
        pushl   %ebp
        movl    12(%ebp), %eax              # the adapter: the finished command where its
        movl    RQ_SPECIAL(%eax), %eax      # driver will look
        movl    scsi_host, %ecx
        movl    %eax, HOST_DONE(%ecx)
        call    common_interrupt
        popl    %ebp
        movl    %ebp, %esp
        popl    %ebp
        ret

/* common_interrupt: the vector's stub pushes ~irq (orig_eax); SAVE_ALL the registers; do_IRQ
 * with the frame (fastcall: in eax); ret_from_intr to a kernel context: RESTORE_ALL */
        .globl  common_interrupt
common_interrupt:
        save_all (~DISK_IRQ)                # entry_2612.S
        movl    %esp, %eax
        call    do_IRQ
        ret_from_intr_kernel
        ret

/* do_IRQ(regs): irq_enter, __do_IRQ (the descriptor's lock and status, handle_IRQ_event:
 * the action's handler), irq_exit (the softirqs raised, run) */
        .globl  do_IRQ
do_IRQ:
        pushl   %ebx
        pushl   %esi
        movl    PT_ORIG_EAX(%eax), %ebx     # irq = ~regs->orig_eax
        notl    %ebx
        movl    $-8192, %esi                # irq_enter: preempt_count += HARDIRQ_OFFSET
        andl    %esp, %esi
        addl    $(HARDIRQ_OFFSET), TI_PREEMPT(%esi)
        movl    TI_CPU(%esi), %ecx          # kstat_this_cpu.irqs[irq]++
        movl    __per_cpu_offset(,%ecx,4), %ecx
        incl    PCPU_KSTAT_IRQ(%ecx)
        imull   $(SIZEOF_IRQ_DESC), %ebx, %ebx      # desc = irq_desc + irq
        leal    irq_desc(%ebx), %ebx
        leal    IRQD_LOCK(%ebx), %eax       # __do_IRQ: spin_lock(&desc->lock)
        pushl   %eax
        call    _spin_lock
        movl    IRQD_STATUS(%ebx), %eax     # ~(IRQ_REPLAY | IRQ_WAITING), then IRQ_INPROGRESS
        andl    $~(IRQ_REPLAY | IRQ_WAITING), %eax
        orl     $(IRQ_INPROGRESS), %eax
        movl    %eax, IRQD_STATUS(%ebx)
        call    _spin_unlock
        pushl   IRQD_DEV_ID(%ebx)           # handle_IRQ_event: action->handler(irq, dev_id)
        pushl   $(DISK_IRQ)
        call    *IRQD_HANDLER(%ebx)
        addl    $8, %esp
        call    _spin_lock                  # the lock again: IRQ_INPROGRESS off
        andl    $~(IRQ_INPROGRESS), IRQD_STATUS(%ebx)
        call    _spin_unlock
        addl    $4, %esp
        subl    $(HARDIRQ_OFFSET), TI_PREEMPT(%esi)     # irq_exit
        movl    TI_CPU(%esi), %ecx          # !in_interrupt() && local_softirq_pending()
        movl    __per_cpu_offset(,%ecx,4), %ecx
        cmpl    $0, PCPU_SOFTIRQ_PENDING(%ecx)
        je      1f
        call    do_softirq
1:      popl    %esi
        popl    %ebx
        ret

/* the adapter's interrupt handler(irq, shost): under the host lock, the finished command
 * taken from where the adapter put it, its status good, passed to scsi_done */
        .globl  host_intr
host_intr:
        pushl   %ebx
        pushl   %esi
        movl    16(%esp), %esi              # shost (dev_id)
        leal    HOST_LOCK(%esi), %eax
        pushl   %eax
        call    _spin_lock_irqsave
        movl    %eax, (%esp)
        leal    HOST_LOCK(%esi), %eax
        pushl   %eax
        movl    HOST_DONE(%esi), %ebx       # the finished command
        testl   %ebx, %ebx
        jz      9f
        movl    $0, HOST_DONE(%esi)
        movl    $0, CMD_RESULT(%ebx)        # DID_OK, SAM_STAT_GOOD
        pushl   %ebx
        call    *CMD_DONE(%ebx)             # cmd->scsi_done(cmd)
        addl    $4, %esp
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        movl    $1, %eax                    # IRQ_HANDLED
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* scsi_done(cmd): onto this CPU's scsi_done_q, SCSI_SOFTIRQ raised (irqs off already) */
        .globl  scsi_done
scsi_done:
        movl    4(%esp), %eax               # cmd
        movl    $-8192, %ecx
        andl    %esp, %ecx
        movl    TI_CPU(%ecx), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        leal    PCPU_SCSI_DONE_Q(%ecx), %edx    # list_add_tail(&cmd->eh_entry, done_q)
        pushl   %ecx
        movl    4(%edx), %ecx               # last = head->prev
        movl    %edx, CMD_EH_ENTRY(%eax)
        movl    %ecx, CMD_EH_ENTRY + 4(%eax)
        leal    CMD_EH_ENTRY(%eax), %eax
        movl    %eax, (%ecx)
        movl    %eax, 4(%edx)
        popl    %ecx
        orl     $(1 << SCSI_SOFTIRQ), PCPU_SOFTIRQ_PENDING(%ecx)    # raise_softirq_irqoff
        ret

/* do_softirq: __do_softirq: the pending bits taken (and cleared), each one's action run;
 * only TIMER_SOFTIRQ (the tick's) and SCSI_SOFTIRQ are ever raised here */
        .globl  do_softirq
do_softirq:
        pushl   %ebx
        movl    $-8192, %ecx
        andl    %esp, %ecx
        addl    $(SOFTIRQ_OFFSET), TI_PREEMPT(%ecx)     # local_bh_disable
        movl    TI_CPU(%ecx), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        xorl    %ebx, %ebx
        xchgl   %ebx, PCPU_SOFTIRQ_PENDING(%ecx)    # pending; set_softirq_pending(0)
        testl   $~((1 << TIMER_SOFTIRQ) | (1 << SCSI_SOFTIRQ)), %ebx
        jnz     9f                          # only the timer's and SCSI's are raised here
        testl   $(1 << TIMER_SOFTIRQ), %ebx # each bit's action in turn: the timer's
        jz      1f                          # (run_timer_softirq, tick_2612.S), then SCSI's
        call    run_timer_softirq
1:      testl   $(1 << SCSI_SOFTIRQ), %ebx
        jz      2f
        call    scsi_softirq                # softirq_vec[SCSI_SOFTIRQ].action
2:
        movl    $-8192, %ecx
        andl    %esp, %ecx
        subl    $(SOFTIRQ_OFFSET), TI_PREEMPT(%ecx)     # __local_bh_enable
        popl    %ebx
        ret
9:      ud2

/* scsi_softirq: this CPU's finished commands taken off its queue (list_splice_init), each
 * disposed of: good (scsi_decide_disposition: SUCCESS), scsi_finish_command */
        .globl  scsi_softirq
scsi_softirq:
        pushl   %ebx
        pushl   %esi
        movl    $-8192, %ecx
        andl    %esp, %ecx
        movl    TI_CPU(%ecx), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        leal    PCPU_SCSI_DONE_Q(%ecx), %esi
1:      movl    (%esi), %ebx                # the next command
        cmpl    %esi, %ebx
        je      2f
        movl    (%ebx), %ecx                # list_del_init(&cmd->eh_entry)
        movl    4(%ebx), %edx
        movl    %ecx, (%edx)
        movl    %edx, 4(%ecx)
        movl    %ebx, (%ebx)
        movl    %ebx, 4(%ebx)
        leal    -CMD_EH_ENTRY(%ebx), %ebx
        cmpl    $0, CMD_RESULT(%ebx)        # scsi_decide_disposition: host_byte DID_OK,
        jne     9f                          # status good: SUCCESS
        pushl   %ebx
        call    scsi_finish_command
        addl    $4, %esp
        jmp     1b
2:      popl    %esi
        popl    %ebx
        ret
9:      ud2

/* scsi_finish_command(cmd): scsi_device_unbusy (host_busy down under the host lock), then
 * scsi_io_completion(cmd, all its bytes) */
        .globl  scsi_finish_command
scsi_finish_command:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # cmd
        movl    CMD_DEVICE(%ebx), %esi
        leal    HOST_LOCK(%esi), %eax
        pushl   %eax
        call    _spin_lock_irqsave
        movl    %eax, (%esp)
        leal    HOST_LOCK(%esi), %eax
        pushl   %eax
        decl    HOST_BUSY(%esi)
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        pushl   %ebx                        # scsi_io_completion(cmd, good_bytes)
        call    scsi_io_completion
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret

/* scsi_io_completion(cmd): the scatterlist freed (scsi_release_buffers: scsi_free_sgtable),
 * then scsi_end_request(cmd, 1, its sectors): the request's bytes ended
 * (end_that_request_chunk -> __end_that_request_first), end_that_request_last under the
 * queue lock, scsi_next_command: the command back to the host's pool */
        .globl  scsi_io_completion
scsi_io_completion:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %ebx              # cmd
        movl    CMD_REQUEST(%ebx), %esi     # req
        pushl   CMD_BUFFER(%ebx)            # scsi_free_sgtable
        pushl   sgpool_cache
        call    kmem_cache_free
        addl    $8, %esp
        movl    $0, CMD_BUFFER(%ebx)
        pushl   CMD_BUFFLEN(%ebx)           # end_that_request_chunk(req, 1, bytes)
        pushl   $1
        pushl   %esi
        call    __end_that_request_first
        addl    $12, %esp
        testl   %eax, %eax
        jnz     9f                          # bytes left: not in a run
        movl    RQ_Q(%esi), %edi            # q
        pushl   Q_QUEUE_LOCK(%edi)          # spin_lock_irqsave(q->queue_lock)
        call    _spin_lock_irqsave
        movl    %eax, (%esp)
        pushl   Q_QUEUE_LOCK(%edi)
        pushl   %esi
        call    end_that_request_last
        addl    $4, %esp
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        pushl   %ebx                        # scsi_next_command -> scsi_put_command
        pushl   scsi_cmd_cache
        call    kmem_cache_free
        addl    $8, %esp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

        .data
        .globl  scsi_cmd_cache
scsi_cmd_cache:
        .long   0
        .globl  sgpool_cache
sgpool_cache:
        .long   0
        .globl  arq_pool
arq_pool:
        .long   0
        .globl  as_hash_table
as_hash_table:
        .long   0
        .globl  scsi_host
scsi_host:
        .long   0
        .globl  irq_desc
irq_desc:
        .space  SIZEOF_IRQ_DESC * (DISK_IRQ + 1), 0
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
