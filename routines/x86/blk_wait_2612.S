/*
 * A writer's wait for a free request in Linux 2.6.12 on i386, written for the book from the
 * algorithms of drivers/block/ll_rw_blk.c of 2.6.12.1 (get_request 1875-1959: the queue full
 * at q->nr_requests, the ioc batching rules, set_queue_congested 130-136; get_request_wait
 * 1964-1995; __make_request's call of it, 2666-2681; __freed_request 1833-1848;
 * ioc_batching and ioc_set_batching 1803-1831; put_io_context 3291, get_io_context 3336),
 * kernel/wait.c (prepare_to_wait_exclusive 79, finish_wait 97, autoremove_wake_function
 * 123) and kernel/sched.c (io_schedule 3815-3822; schedule's deactivate of a sleeping task
 * 2670-2680; __wake_up 2911-2920, __wake_up_common 2887-2901, default_wake_function 2870,
 * try_to_wake_up 962-1077, resched_task 754-767); tree: github NovantaPhotonics/
 * linux-2.6.12.1 (its HEAD, a copy of the 2.6.12.1 release).
 *
 * How the model sleeps (the harness's part, written down here and in
 * emu/papers/yoshioka2005/ext3model/sleep.py): a throttled writer's walk is one guest call,
 * on_task_stack(writer, writeback_inodes, wbc) (fs_writeback_2612.S). When get_request
 * fails and the writer is not a batcher, get_request_wait's io_schedule calls schedule(),
 * which on 2.6.12 saves the writer's esp and eip in its thread_struct (switch_to) and goes
 * on in the next task, the idle task. The model's idle task is not a guest context: it is
 * the harness's cpu_idle calls. So schedule_sleep saves the writer as switch_to does and
 * then returns from on_task_stack to the harness (the frame on_task_stack saved at the top
 * of the writer's stack), which runs the idle loop to its hlt; the writer's stack, the
 * wait entry on it and its registers stay as they were. The interrupt that frees a request
 * (another call, disk_interrupt) wakes the writer as 2.6.12 does (freed_request ->
 * __wake_up -> try_to_wake_up, TIF_NEED_RESCHED on the idle task); the idle loop sees it
 * and the harness calls task_resume(writer), the other half of switch_to: the writer's
 * esp and eip loaded, it returns from schedule into io_schedule and get_request_wait
 * tries again. The walk's end then returns from on_task_stack to task_resume's caller
 * (task_resume put its own frame where on_task_stack keeps the caller's). The guest
 * instructions are those 2.6.12 runs on the writer's side; what is not run is schedule()'s
 * choice of the next task (the only other is the idle one), its run-queue lists, and the
 * context switch's own few instructions (the segment and TLS loads, the FPU).
 *
 * Left out, each for a reason: elv_may_queue (as_may_queue: ELV_MQUEUE_MAY for a write
 * unless the anticipation waits on this very process's reads; none are read); the
 * reschedule IPI's delivery (smp_send_reschedule: the harness ends the sleeping CPU's
 * halt at the waker's clock); try_to_wake_up's choice of CPU (the woken writer stays on
 * its own: with the waker's CPU busy, load < SCHED_LOAD_SCALE/2 and this_load above it,
 * 1019-1021, out_set_cpu with cpu; wake_idle(cpu) keeps an idle cpu), recalc_task_prio
 * and the prio arrays' lists (the model's runqueues hold no lists: tick_2612.S); the ioc's
 * batch count taken down below the congestion threshold (the model's get_request runs
 * its common path, under the threshold, without get_io_context: the instructions the
 * scored runs were measured with). Calling convention: cdecl; ebx, esi, edi, ebp
 * preserved. Offsets: the equates emu/papers/yoshioka2005/ext3model/ puts in front.
 */
        .equ    TASK_RUNNING, 0             # include/linux/sched.h
        .equ    TASK_INTERRUPTIBLE, 1
        .equ    TASK_UNINTERRUPTIBLE, 2
        .equ    WQ_FLAG_EXCLUSIVE, 1        # include/linux/wait.h
        .equ    WQ_FLAGS, 0                 # wait_queue_t: flags, task, func, task_list
        .equ    WQ_TASK, 4
        .equ    WQ_FUNC, 8
        .equ    WQ_LIST, 12
        .equ    WQ_SIZE, 20
        .equ    BDI_write_congested, 1      # include/linux/backing-dev.h 17-20

/* get_request's slow paths, entered from block_2612.S's get_request with the queue locked,
 * esi the queue, ecx rw, eax rl->count[rw] + 1; they go back to its allocation
 * (get_request_alloc) or return NULL from it.
 * get_request_full: the queue fills with this allocation (count + 1 >= nr_requests): if it
 * is not marked full yet, this process becomes a batcher and the queue full; a full queue
 * refuses all but a batcher (1886-1914) */
        .globl  get_request_full
get_request_full:
        pushl   %ecx
        call    get_io_context              # ioc (edx)
        popl    %ecx
        leal    QUEUE_FLAG_READFULL(%ecx), %eax     # blk_queue_full(q, rw)
        btl     %eax, Q_QUEUE_FLAGS(%esi)
        jc      1f
        call    ioc_set_batching            # (esi q, edx ioc)
        lock btsl %eax, Q_QUEUE_FLAGS(%esi) # blk_set_queue_full(q, rw)
1:      call    ioc_batching                # (esi q, edx ioc) -> ZF clear if batching
        jz      2f
        incl    Q_RQ_COUNT(%esi,%ecx,4)     # get_rq: rl->count[rw]++
        movl    $0, Q_RQ_STARVED(%esi,%ecx,4)
        movl    Q_RQ_COUNT(%esi,%ecx,4), %eax
        cmpl    Q_CONGESTION_ON(%esi), %eax
        jb      3f
        movl    Q_BDI(%esi), %eax           # set_queue_congested(q, rw): a write's bit
        lock btsl $(BDI_write_congested), BDI_STATE(%eax)
3:      decl    IOC_NR_BATCH_REQUESTS(%edx) # ioc_batching: ioc->nr_batch_requests--
        call    put_io_context
        jmp     get_request_alloc
2:      call    put_io_context              # the queue full, not a batcher: NULL
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        addl    $4, %esp
        xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

/* get_request_congested: the count reached queue_congestion_on_threshold (1919-1920): the
 * queue's backing_dev_info marked write-congested; a batcher's batch counted down */
        .globl  get_request_congested
get_request_congested:
        movl    Q_BDI(%esi), %eax           # set_queue_congested(q, rw)
        lock btsl $(BDI_write_congested), BDI_STATE(%eax)
        pushl   %ecx
        call    get_io_context
        call    ioc_batching
        jz      1f
        decl    IOC_NR_BATCH_REQUESTS(%edx) # ioc->nr_batch_requests--
1:      call    put_io_context
        popl    %ecx
        jmp     get_request_alloc

/* get_io_context -> edx: current->io_context with a reference (atomic_inc refcount); the
 * model's writers have theirs from their first I/O (allocated with the task: the path that
 * allocates one is never run); clobbers eax. A call on no task's stack (a core's own,
 * whose thread_info names none) faults: the harness runs kjournald's calls on a task of
 * their own when the queue is near full (ext3model/sleep.py, _kjournald_call) */
        .globl  get_io_context
get_io_context:
        movl    $-8192, %eax                # current
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        testl   %eax, %eax
        jz      9f
        movl    TSK_IO_CONTEXT(%eax), %edx
        testl   %edx, %edx
        jz      9f
        lock incl IOC_REFCOUNT(%edx)
        ret
9:      ud2

/* put_io_context(edx): the reference dropped (the last is never dropped here) */
        .globl  put_io_context
put_io_context:
        lock decl IOC_REFCOUNT(%edx)
        jz      9f
        ret
9:      ud2

/* ioc_batching(esi q, edx ioc) -> ZF clear if ioc is a batcher: nr_batch_requests ==
 * q->nr_batching, or above 0 and jiffies before last_waited + BLK_BATCH_TIME */
        .globl  ioc_batching
ioc_batching:
        pushl   %eax
        movl    IOC_NR_BATCH_REQUESTS(%edx), %eax
        cmpl    Q_NR_BATCHING(%esi), %eax
        je      1f
        testl   %eax, %eax
        jle     2f
        movl    IOC_LAST_WAITED(%edx), %eax # time_before(jiffies, last_waited + BLK_BATCH_TIME)
        addl    $(BLK_BATCH_TIME), %eax
        subl    jiffies, %eax
        jle     2f
1:      popl    %eax
        testl   %esi, %esi                  # ZF clear: batching
        ret
2:      popl    %eax
        cmpl    %eax, %eax                  # ZF set: not
        ret

/* ioc_set_batching(esi q, edx ioc): a batcher, unless it is one: nr_batch_requests =
 * q->nr_batching, last_waited = jiffies; preserves eax */
        .globl  ioc_set_batching
ioc_set_batching:
        call    ioc_batching
        jnz     1f
        pushl   %eax
        movl    Q_NR_BATCHING(%esi), %eax
        movl    %eax, IOC_NR_BATCH_REQUESTS(%edx)
        movl    jiffies, %eax
        movl    %eax, IOC_LAST_WAITED(%edx)
        popl    %eax
1:      ret

/* make_request_wait: __make_request's get_request returned NULL (2633-2640): freereq =
 * get_request_wait(q, rw), then again (block_2612.S's __make_request_again), with esi q
 * and ebp freereq as __make_request keeps them */
        .globl  make_request_wait
make_request_wait:
        pushl   $1                          # WRITE
        pushl   %esi
        call    get_request_wait
        addl    $8, %esp
        movl    %eax, %ebp
        jmp     __make_request_again

/* get_request_wait(q, rw) -> request: the device unplugged (generic_unplug_device: the
 * plug removed; its request_fn is the disk's, which takes every queued request when this
 * call sleeps); then until a request comes: on rl->wait[rw], exclusive, uninterruptible;
 * get_request; none, io_schedule, then a batcher */
        .globl  get_request_wait
get_request_wait:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        subl    $(WQ_SIZE), %esp            # DEFINE_WAIT(wait): on this stack
        movl    WQ_SIZE + 16(%esp), %esi    # q
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        movl    $0, WQ_FLAGS(%esp)
        movl    %eax, WQ_TASK(%esp)         # current
        leal    autoremove_wake_function, %ecx
        movl    %ecx, WQ_FUNC(%esp)
        leal    WQ_LIST(%esp), %eax         # INIT_LIST_HEAD(&wait.task_list)
        movl    %eax, (%eax)
        movl    %eax, 4(%eax)
        pushl   Q_QUEUE_LOCK(%esi)          # generic_unplug_device(q): under the lock,
        call    _spin_lock_irq              # blk_remove_plug (the plug's timer: none)
        lock btrl $(QUEUE_FLAG_PLUGGED), Q_QUEUE_FLAGS(%esi)
        call    _spin_unlock_irq
        addl    $4, %esp
        movl    WQ_SIZE + 20(%esp), %ecx    # &rl->wait[rw]
        leal    (%ecx,%ecx,2), %ecx
        leal    Q_RQ_WAIT(%esi,%ecx,4), %edi
1:      movl    %esp, %eax                  # prepare_to_wait_exclusive(wqh, &wait, UNINT)
        pushl   $(TASK_UNINTERRUPTIBLE)
        pushl   %eax
        pushl   %edi
        call    prepare_to_wait_exclusive
        addl    $12, %esp
        pushl   $0                          # get_request(q, rw, GFP_NOIO)
        pushl   WQ_SIZE + 24(%esp)
        pushl   %esi
        call    get_request
        addl    $12, %esp
        movl    %eax, %ebx
        testl   %eax, %eax
        jnz     2f
        call    io_schedule
        call    get_io_context              # ioc_set_batching(q, get_io_context)
        call    ioc_set_batching
        call    put_io_context
2:      movl    %esp, %eax                  # finish_wait(wqh, &wait)
        pushl   %eax
        pushl   %edi
        call    finish_wait
        addl    $8, %esp
        testl   %ebx, %ebx
        jz      1b
        movl    %ebx, %eax
        addl    $(WQ_SIZE), %esp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* prepare_to_wait_exclusive(q, wait, state): WQ_FLAG_EXCLUSIVE; under q->lock, on the
 * queue's tail unless on it; current->state = state (set_current_state: xchg) */
        .globl  prepare_to_wait_exclusive
prepare_to_wait_exclusive:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # q
        movl    16(%esp), %ebx              # wait
        orl     $(WQ_FLAG_EXCLUSIVE), WQ_FLAGS(%ebx)
        pushl   %esi                        # spin_lock_irqsave(&q->lock)
        call    _spin_lock_irqsave
        addl    $4, %esp
        pushl   %eax                        # the flags
        leal    WQ_LIST(%ebx), %ecx         # list_empty(&wait->task_list)
        cmpl    %ecx, (%ecx)
        jne     1f
        leal    4(%esi), %edx               # __add_wait_queue_tail: list_add_tail
        movl    4(%edx), %eax               # prev = head->prev
        movl    %edx, (%ecx)
        movl    %eax, 4(%ecx)
        movl    %ecx, (%eax)
        movl    %ecx, 4(%edx)
1:      movl    WQ_TASK(%ebx), %ecx         # is_sync_wait: wait->task set
        testl   %ecx, %ecx
        jz      2f
        movl    24(%esp), %eax              # set_current_state(state)
        xchgl   %eax, TSK_STATE(%ecx)
2:      pushl   %esi
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        popl    %esi
        popl    %ebx
        ret

/* finish_wait(q, wait): current TASK_RUNNING; off the queue under its lock unless a
 * wake-up took it off (list_empty_careful) */
        .globl  finish_wait
finish_wait:
        pushl   %ebx
        movl    12(%esp), %ebx              # wait
        movl    $-8192, %eax                # __set_current_state(TASK_RUNNING)
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        movl    $(TASK_RUNNING), TSK_STATE(%eax)
        leal    WQ_LIST(%ebx), %ecx         # list_empty_careful: next == head == prev
        cmpl    %ecx, (%ecx)
        jne     1f
        cmpl    %ecx, 4(%ecx)
        je      2f
1:      pushl   8(%esp)                     # spin_lock_irqsave(&q->lock)
        call    _spin_lock_irqsave
        addl    $4, %esp
        pushl   %eax
        leal    WQ_LIST(%ebx), %ecx         # list_del_init
        call    wait_list_del_init
        pushl   12(%esp)
        call    _spin_unlock_irqrestore
        addl    $8, %esp
2:      popl    %ebx
        ret

/* wait_list_del_init(ecx entry): list_del_init; clobbers eax, edx */
        .globl  wait_list_del_init
wait_list_del_init:
        movl    (%ecx), %eax
        movl    4(%ecx), %edx
        movl    %eax, (%edx)
        movl    %edx, 4(%eax)
        movl    %ecx, (%ecx)
        movl    %ecx, 4(%ecx)
        ret

/* io_schedule(): this CPU's runqueue's nr_iowait up around schedule() */
        .globl  io_schedule
io_schedule:
        call    this_rq                     # eax
        lock incl RQS_NR_IOWAIT(%eax)
        call    schedule_sleep
        call    this_rq
        lock decl RQS_NR_IOWAIT(%eax)
        ret

/* this_rq() -> eax: this CPU's runqueue (tick_areas[cpu] + TK_RQ); clobbers ecx */
        .globl  this_rq
this_rq:
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_CPU(%eax), %ecx
        movl    tick_areas(,%ecx,4), %eax
        addl    $(TK_RQ), %eax
        ret

/* schedule_sleep(): schedule() of a task that has set itself TASK_UNINTERRUPTIBLE, on a
 * runqueue whose other task is the idle one: under rq->lock, deactivate_task (the
 * uninterruptible count up, nr_running down, off its array), a switch counted; then
 * switch_to the idle task: the writer's callee-saved registers on its stack, its esp and
 * eip in its thread_struct, and the harness's frame (see the top): eax 0. The lock is
 * released before the switch (finish_task_switch in the next task releases it on 2.6.12;
 * the model's next task is the harness). A task woken between prepare_to_wait and here
 * (TASK_RUNNING again) is not deactivated and goes on: schedule() picks it again, no
 * switch. A task the harness cannot resume (TSK_HARNESS 0) faults. */
        .globl  schedule_sleep
schedule_sleep:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    $-8192, %esi                # prev = current
        andl    %esp, %esi
        movl    TI_TASK(%esi), %esi
        cmpl    $0, TSK_HARNESS(%esi)
        je      9f
        call    this_rq
        movl    %eax, %ebx
        pushl   %ebx                        # spin_lock_irq(&rq->lock)
        call    _spin_lock_irq
        addl    $4, %esp
        cmpl    $(TASK_UNINTERRUPTIBLE), TSK_STATE(%esi)
        jne     2f                          # woken already (TASK_RUNNING): it runs on
        incl    RQS_NR_UNINTERRUPTIBLE(%ebx)    # deactivate_task
        decl    RQS_NR_RUNNING(%ebx)
        movl    $0, TSK_ARRAY(%esi)
        incl    RQS_NR_SWITCHES(%ebx)       # rq->nr_switches++
        pushl   %ebx
        call    _spin_unlock_irq
        addl    $4, %esp
        movl    %esp, TSK_THREAD_ESP(%esi)  # switch_to(prev, next): esp and eip saved
        leal    1f, %eax
        movl    %eax, TSK_THREAD_EIP(%esi)
        movl    TSK_ESP0(%esi), %esp        # to the harness: on_task_stack's frame
        movl    -4(%esp), %ebp
        movl    %ebp, %esp
        popl    %ebp
        xorl    %eax, %eax
        ret
2:      pushl   %ebx                        # prev is next: no switch
        call    _spin_unlock_irq
        addl    $4, %esp
1:      popl    %ebp                        # the writer again (task_resume)
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* task_resume(task): the harness's half of switch_to into a task schedule_sleep left: its
 * caller's frame where on_task_stack keeps it (so the walk's end returns to this call's
 * caller), then the task's esp and eip */
        .globl  task_resume
task_resume:
        pushl   %ebp
        movl    %esp, %ebp
        movl    8(%ebp), %eax               # task
        movl    TSK_ESP0(%eax), %ecx
        movl    %ebp, -4(%ecx)
        movl    TSK_THREAD_ESP(%eax), %esp
        movl    TSK_THREAD_EIP(%eax), %ecx
        movl    $0, TSK_THREAD_EIP(%eax)
        jmp     *%ecx

/* call_on_task(task, fn, a, b, c, d): fn(a, b, c, d) on the task's kernel stack, the
 * caller's frame where on_task_stack keeps it (so a sleep in fn returns here, and
 * task_resume resumes it): the model's harness, not kernel code, for kjournald's calls
 * when the queue is near full */
        .globl  call_on_task
call_on_task:
        pushl   %ebp
        movl    %esp, %ebp
        movl    8(%ebp), %eax               # task
        movl    TSK_ESP0(%eax), %esp        # its kernel stack
        pushl   %ebp                        # the caller's frame
        pushl   28(%ebp)
        pushl   24(%ebp)
        pushl   20(%ebp)
        pushl   16(%ebp)
        call    *12(%ebp)
        addl    $16, %esp
        popl    %ebp
        movl    %ebp, %esp
        popl    %ebp
        ret

/* freed_request_wake: block_2612.S's __blk_put_request found a waiter on rl->wait[rw]
 * (__freed_request 1840-1845): wake_up(&rl->wait[rw]), one exclusive waiter, then back
 * to blk_clear_queue_full there (freed_request_woken), with esi q and edx rw */
        .globl  freed_request_wake
freed_request_wake:
        pushl   %edx
        pushl   $0                          # key
        pushl   $1                          # nr_exclusive
        pushl   $(TASK_UNINTERRUPTIBLE | TASK_INTERRUPTIBLE)
        leal    (%edx,%edx,2), %eax
        leal    Q_RQ_WAIT(%esi,%eax,4), %eax
        pushl   %eax
        call    __wake_up_waiters
        addl    $16, %esp
        popl    %edx
        jmp     freed_request_woken

/* __wake_up_waiters(q, mode, nr_exclusive, key): 2.6.12's __wake_up, under q->lock,
 * __wake_up_common: each entry's func; an exclusive one woken counts down nr_exclusive,
 * none left ends the walk (vfs_2612.S's __wake_up is the model's stand-in for queues no
 * one waits on in a run, and keeps its place) */
        .globl  __wake_up_waiters
__wake_up_waiters:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %esi              # q
        pushl   %esi
        call    _spin_lock_irqsave
        addl    $4, %esp
        pushl   %eax                        # the flags
        movl    32(%esp), %ebp              # nr_exclusive
        movl    4(%esi), %ebx               # list_for_each_safe(tmp, next, &q->task_list)
1:      leal    4(%esi), %eax
        cmpl    %eax, %ebx
        je      2f
        movl    (%ebx), %edi                # next
        leal    -WQ_LIST(%ebx), %eax        # curr
        pushl   WQ_FLAGS(%eax)              # flags = curr->flags
        pushl   40(%esp)                    # key
        pushl   $0                          # sync
        pushl   40(%esp)                    # mode
        pushl   %eax
        call    *WQ_FUNC(%eax)
        addl    $16, %esp
        popl    %ecx
        testl   %eax, %eax
        jz      3f
        testl   $(WQ_FLAG_EXCLUSIVE), %ecx
        jz      3f
        decl    %ebp
        jz      2f
3:      movl    %edi, %ebx
        jmp     1b
2:      pushl   %esi
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* autoremove_wake_function(wait, mode, sync, key): default_wake_function (try_to_wake_up
 * of wait->task); woken, the entry off the queue (list_del_init) */
        .globl  autoremove_wake_function
autoremove_wake_function:
        pushl   %ebx
        movl    8(%esp), %ebx               # wait
        pushl   16(%esp)                    # sync
        pushl   16(%esp)                    # mode
        pushl   WQ_TASK(%ebx)
        call    try_to_wake_up
        addl    $12, %esp
        testl   %eax, %eax
        jz      1f
        pushl   %eax
        leal    WQ_LIST(%ebx), %ecx
        call    wait_list_del_init
        popl    %eax
1:      popl    %ebx
        ret

/* try_to_wake_up(p, state, sync) -> 1 if woken: under p's runqueue's lock, a task in one
 * of the states and off the arrays is activated on its own CPU (see the top), the
 * uninterruptible count down (activated -1 left out), nr_running up, on the active
 * array; it preempts the runqueue's current task (the idle: prio MAX_PRIO), so
 * resched_task sets TIF_NEED_RESCHED on it (an IPI if another CPU's: the harness's);
 * p->state = TASK_RUNNING */
        .globl  try_to_wake_up
try_to_wake_up:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # p
        movl    TSK_THREAD_INFO(%esi), %eax # task_rq_lock(p): task_cpu(p)'s runqueue
        movl    TI_CPU(%eax), %eax
        movl    tick_areas(,%eax,4), %ebx
        addl    $(TK_RQ), %ebx
        pushl   %ebx
        call    _spin_lock_irqsave
        addl    $4, %esp
        pushl   %eax                        # the flags
        xorl    %edi, %edi                  # success = 0
        movl    TSK_STATE(%esi), %eax       # old_state
        testl   24(%esp), %eax              # !(old_state & state): out
        jz      2f
        cmpl    $0, TSK_ARRAY(%esi)         # p->array: out_running
        jne     1f
        cmpl    $(TASK_UNINTERRUPTIBLE), %eax
        jne     3f
        decl    RQS_NR_UNINTERRUPTIBLE(%ebx)
3:      incl    RQS_NR_RUNNING(%ebx)        # activate_task -> __activate_task
        movl    RQS_ACTIVE(%ebx), %eax      # enqueue_task: p->array = rq->active
        movl    %eax, TSK_ARRAY(%esi)
        movl    RQS_CURR(%ebx), %ecx        # TASK_PREEMPTS_CURR(p, rq)
        movl    TSK_PRIO(%esi), %eax
        cmpl    TSK_PRIO(%ecx), %eax
        jge     4f
        movl    TSK_THREAD_INFO(%ecx), %ecx # resched_task(rq->curr)
        lock btsl $(TIF_NEED_RESCHED), TI_FLAGS(%ecx)
4:      movl    $1, %edi                    # success
1:      movl    $(TASK_RUNNING), TSK_STATE(%esi)    # out_running
2:      pushl   %ebx                        # out: task_rq_unlock
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        movl    %edi, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

        .data
        .align  4
        .globl  io_contexts
io_contexts:                                # each task's io_context (the writers', then
        .space  IOC_SIZE * 16, 0            # pdflush's: Kernel._build_task, _build_kthread)
        .text

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
