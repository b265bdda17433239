/*
 * proc_22: the scheduler's part of a fork, an exit and a wait of Linux 2.2.0 on one PowerPC,
 * for the book's kernel model (emu.kernel.sched22: lat_proc on the kernel model with 2.2.0's
 * scheduler as guest code). Written for this book from the algorithm, not copied; read for
 * facts in davej-history f6cce5dae (Linux 2.2.0): kernel/fork.c (do_fork 610-632: the
 * counters shared, then wake_up_process(p), "do this last"), kernel/exit.c (do_exit 347-385:
 * tsk->state = TASK_ZOMBIE, exit_notify, schedule(); sys_wait4 406-491: add_wait_queue(
 * &current->wait_chldexit, &wait) with wait = { current, NULL }, the walk of the children,
 * the signal test, current->state = TASK_INTERRUPTIBLE, schedule(), the walk again, at
 * end_wait4 remove_wait_queue), kernel/signal.c (notify_parent 557-594: send_sig_info, then
 * wake_up_interruptible(&tsk->p_pptr->wait_chldexit)) and include/linux/sched.h
 * (add_wait_queue, remove_wait_queue 645-673: write_lock_irqsave(&waitqueue_lock), the
 * list operation, write_unlock_irqrestore; on one CPU the lock is save_flags and cli, its
 * release restore_flags). Loaded after entry_22.S and sched_22.S (emu.kernel.entry), whose
 * wake_up_process22, wake_up22, schedule22, cli22 and host_stop22 it calls; the task's
 * offsets come from the prelude. r2 is current, r1 its kernel stack, as in a system call.
 *
 *   fork_wake22(r3 = p): do_fork's wake_up_process(p), then the run stops (r3 = HOST_DONE);
 *   wait4_sleep22: sys_wait4's wait queue and sleep: add_wait_queue(&current->wait_chldexit,
 *     &wait), signal_pending(current) (refused: none is ever pending), current->state =
 *     TASK_INTERRUPTIBLE, schedule(); when woken, remove_wait_queue; the run stops
 *     (HOST_DONE). The walks of the children before and after the sleep (the first finds
 *     the child running, the second a zombie, and releases it) are the kernel model's
 *     ``wait`` (emu.kernel.costs);
 *   exit_wake22(r3 = the parent's task): notify_parent's wake_up_interruptible(
 *     &parent->wait_chldexit), then the run stops (HOST_DONE);
 *   exit_schedule22: do_exit's tsk->state = TASK_ZOMBIE and schedule(), which never returns
 *     to a zombie (refused if it does). 2.2.0 sets TASK_ZOMBIE before exit_notify's
 *     wake-up; here the store follows it (the same instructions; nothing the wake-up reads).
 *
 * A child's first switch: copy_thread's frame (emu.kernel.sched22) sends int_return to
 * fork_return22, in kernel mode, where the run stops as ret_from_fork would continue to user
 * mode (the kernel model's child runs there).
 *
 * Instructions, by hand (tests/papers/test_dougan1999_proc.py), with EE on as in a system
 * call: fork_wake22 3 + wake_up_process22 (55); exit_wake22 4 + wake_up22 (87, one
 * sleeper); exit_schedule22 3 + schedule22 to the switch (a zombie: three tests fewer than
 * a sleeper's, the signal's); fork_return22 2; wait4_sleep22 74 on a queue used before, not
 * counting schedule22: 41 before it (the frame 6, wait 5, add_wait_queue's save and cli22
 * 10, the link 5, its restore_flags 9, the signal test 3, the state and the call 3) and 33
 * after (remove_wait_queue's save and cli22 10, the ring's one step 6, restore_flags 9, the
 * frame 6, the stop 2); a queue's first use 1 more (WAIT_QUEUE_HEAD).
 */
        .equ    HOST_DONE, 7
        .equ    TASK_ZOMBIE, 4          # include/linux/sched.h, 2.2.0
        .equ    WQ_TASK, 0
        .equ    WQ_NEXT, 4

        .globl  fork_wake22
fork_wake22:                            # r3 = p
        bl      wake_up_process22
        li      r3, HOST_DONE
        b       host_stop22

        .globl  fork_return22
fork_return22:                          # a child's first switch ends here
        li      r3, HOST_DONE
        b       host_stop22

        .globl  exit_wake22
exit_wake22:                            # r3 = the parent's task
        addi    r3, r3, WAIT_CHLDEXIT   # notify_parent: &tsk->p_pptr->wait_chldexit
        bl      wake_up22
        li      r3, HOST_DONE
        b       host_stop22

        .globl  exit_schedule22
exit_schedule22:
        li      r10, TASK_ZOMBIE        # tsk->state = TASK_ZOMBIE
        stw     r10, TASK_STATE(r2)
        bl      schedule22              # never returns to a zombie
        li      r3, HOST_REFUSED
        li      r4, 29
        b       host_stop22

        .globl  wait4_sleep22
wait4_sleep22:
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stw     r31, 28(r1)
        stw     r30, 24(r1)
        stw     r29, 20(r1)
        addi    r30, r1, 8              # struct wait_queue wait = { current, NULL }
        stw     r2, WQ_TASK(r30)
        li      r10, 0
        stw     r10, WQ_NEXT(r30)
        addi    r31, r2, WAIT_CHLDEXIT
        mfmsr   r29                     # add_wait_queue: write_lock_irqsave
        bl      cli22
        ADD_WAIT_QUEUE r31, r30, w4_linked      # __add_wait_queue
        RESTORE_FLAGS r29, w4_add_restore, proc_lost_interrupts22 # write_unlock_irqrestore
        lwz     r10, SIGPENDING(r2)     # signal_pending(current)
        cmpwi   0, r10, 0
        bne-    w4_signal
        li      r10, TASK_INTERRUPTIBLE # current->state = TASK_INTERRUPTIBLE
        stw     r10, TASK_STATE(r2)
        bl      schedule22
        mfmsr   r29                     # remove_wait_queue: write_lock_irqsave
        bl      cli22
        REMOVE_WAIT_QUEUE r30, w4_find, w4_found        # __remove_wait_queue
        RESTORE_FLAGS r29, w4_remove_restore, proc_lost_interrupts22 # write_unlock_irqrestore
        lwz     r29, 20(r1)
        lwz     r30, 24(r1)
        lwz     r31, 28(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        li      r3, HOST_DONE
        b       host_stop22
w4_signal:                              # -ERESTARTSYS: none is ever pending here
        li      r3, HOST_REFUSED
        li      r4, 7
        b       host_stop22
proc_lost_interrupts22:                 # do_lost_interrupts: none is ever lost here
        li      r3, HOST_REFUSED
        li      r4, 4
        b       host_stop22
