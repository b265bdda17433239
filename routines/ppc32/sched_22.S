/*
 * sched_22: schedule(), interruptible_sleep_on() and wake_up_interruptible() of Linux 2.2.0
 * on one PowerPC, for the book's kernel model (emu.kernel.entry). Written for this book from
 * the algorithm, not copied; read for facts in the Linux 2.2.0pre2 import of Dave Jones's
 * history tree (davej-history, commit c828dfb94, December 31 1998): kernel/sched.c
 * (schedule, goodness, wake_up_process, reschedule_idle, __wake_up, interruptible_sleep_on
 * and its SLEEP_ON macros), include/linux/sched.h (__add_wait_queue,
 * __remove_wait_queue), include/linux/wait.h (WAIT_QUEUE_HEAD), include/asm-ppc/
 * spinlock.h and system.h (a uniprocessor's locks: spin_lock_irq is cli(), the irqsave
 * forms save the MSR and cli(), restore_flags is inline), arch/ppc/kernel/misc.S (__cli,
 * __sti, _disable_interrupts, _enable_interrupts) and arch/ppc/kernel/process.c
 * (_switch_to, the same in 2.1.51). It replaces the fixed costs the kernel model used to
 * charge for them (issue 30, Deliver 4). Loaded after entry_22.S, whose _switch22 and
 * host_stop22 it calls; the task's and the kernel's offsets come from the prelude
 * (emu.kernel.entry). r2 is current, as in the kernel.
 *
 *   cli22 / sti22 / enable22: misc.S's __cli (= _disable_interrupts: r3 = the old EE,
 *     sync before the mtmsr), __sti (lost interrupts tested first) and _enable_interrupts
 *     (nothing if the saved EE was off), called with bl as the C code calls them;
 *   sleep_on22(r3 = q): interruptible_sleep_on: current->state = TASK_INTERRUPTIBLE; a
 *     struct wait_queue {task, next} on the stack, wait.task = current; write_lock_irqsave
 *     (mfmsr, cli); __add_wait_queue (wait.next = *q, or WAIT_QUEUE_HEAD(q) = q - 4 when the
 *     queue was never used: the head's `next` is *q itself; *q = &wait); schedule();
 *     write_lock_irq (cli); __remove_wait_queue (from wait.next round the ring to the
 *     entry before wait, which then points past it); write_unlock_irqrestore
 *     (restore_flags: lost interrupts tested if EE was on, then sync; mtmsr; isync);
 *   wake_up22(r3 = q): __wake_up(q, TASK_INTERRUPTIBLE): if q and *q, walk the ring from
 *     *q to the head, calling wake_up_process for each waiter whose state has the mode;
 *   wake_up_process22(r3 = p): spin_lock_irqsave; p->state = RUNNING; if p is on no run
 *     queue (next_run 0): add_to_runqueue (at the front, after init_task; nr_running++)
 *     and reschedule_idle (current->need_resched = 1 if p is not SCHED_OTHER or
 *     p->counter > current->counter + 3); spin_unlock_irqrestore;
 *   schedule22: prev = current, this_cpu = prev->processor, in_interrupt()
 *     (local_irq_count + local_bh_count: refused if not 0), bottom halves (bh_active &
 *     bh_mask: refused if any), run_task_queue(&tq_scheduler) (a test: empty),
 *     spin_lock_irq, prev->need_resched = 0, the SCHED_RR test, prev's state
 *     (interruptible with a signal pending: running again; not running:
 *     del_from_runqueue), aligned_data[this_cpu].prevstate; p = init_task.next_run;
 *     spin_unlock_irq; the scheduler proper: c = -1000, next = the idle task (init_task),
 *     the walk of the run queue back round to init_task with goodness(p, prev)
 *     (SCHED_YIELD, a real-time policy, counter, +1 for the same mm, + priority), keeping
 *     the first best; c == 0 (every runnable counter spent: the model has no timer, but
 *     do_fork halves the parent's) recalculates every task's counter, for_each_task over
 *     the task list (sched.h SET_LINKS' next_task ring through init_task), then goes on
 *     with the task chosen (2.2.0 and 2.1.51 alike: kernel/sched.c 719-726 at f6cce5dae,
 *     452-459 at 94520e420); if next != prev: kstat.context_swtch++,
 *     get_mmu_context(next) (a context exists: a test), switch_to (process.c's
 *     _switch_to: s = _disable_interrupts(), _switch22(&prev->tss, &next->tss,
 *     next->mm->context), _enable_interrupts(s) when prev runs again). The SMP parts
 *     (has_cpu, processor, the average slice, __schedule_tail) are not built.
 *
 * What the model changes: before get_mmu_context the run stops at host_stop22 (r3 =
 * HOST_SWITCH, r4 = next) for the kernel model to follow the switch (its current process,
 * its MMU's segment copy), which costs no cycles; the idle task chosen means every task
 * sleeps, which the model calls a deadlock (HOST_REFUSED 14); a lost interrupt (none ever
 * is) is refused; CHECK_STACK and SHOW_TASK_SWITCHES are off, as in the default build.
 *
 * LINUX_2_1_51 defined (Entry(kernel, version="2.1.51")): Linux 2.1.51's own (kernel/sched.c
 * of davej-history 94520e420, include/linux/sched.h, include/asm-ppc/spinlock.h and
 * system.h, arch/ppc/kernel/misc.S and process.c: cli, sti, restore_flags and switch_to
 * as 2.2.0's): schedule22 and goodness22 below the .else (their notes there);
 * wake_up_process22 with 2.1.51's add_to_runqueue (the global need_resched if p's counter
 * is more than 3 above current's, nr_running++, p queued before init_task: at the back);
 * wake_up22 as wake_up_interruptible (p->state == TASK_INTERRUPTIBLE); sleep_on22 as
 * __sleep_on (if (!p) return; wait = { current, NULL }). By hand: goodness22 10 (another
 * task), 11 (prev), 8 (no ticks); wake_up_process22 48 in real mode (51 on 2.2.0);
 * schedule22 6 fewer than 2.2.0's (its preamble 42 against 48 to the walk, goodness 6
 * fewer, the timeout's tests and r26 4 + 2 more); sleep_on22 4 more.
 *
 * Instructions, by hand (tests/papers/test_dougan1999_entry.py): cli22 8, sti22 9;
 * goodness22 16 (another mm), 17 (the same), 10 (no ticks left); wake_up_process22 51 (a
 * task on no run queue, counters within 3; 4 more when the saved MSR had EE, as in a
 * system call: 55) or 32 (queued already); wake_up22 5 (a queue never used), 22 (used,
 * empty), 87 (one sleeper, EE on); with EE on, sleep_on22 58 and schedule22 157 (prev
 * asleep, one other task queued: one goodness22 in the walk, the switch; 161 since the
 * kernel's words sit where 2.2.0's image puts them, emu.kernel.kdata: four lis more), not
 * counting _switch22 and int_return. Their sync instructions: sleep_on22 3, schedule22 4,
 * wake_up_process22 2.
 */
        .equ    TASK_RUNNING, 0
        .equ    SCHED_OTHER, 0
        .equ    SCHED_RR, 2
        .equ    SCHED_YIELD, 0x10
        .equ    HOST_SWITCH, 6
        .equ    WQ_TASK, 0
        .equ    WQ_NEXT, 4
        .equ    SCHED_DATA_SIZE, 32     # aligned_data[]: one cache line a CPU

        .macro  SWITCH_TO_NEXT
        # the switch to next (r27) from prev (r31), as both kernels' schedule() ends:
        # the kernel model told, get_mmu_context, then switch_to's _switch with
        # interrupts off (2.1.51 and 2.2.0: kernel/sched.c, arch/ppc/kernel/process.c)
        li      r3, HOST_SWITCH         # the kernel model follows the switch
        mr      r4, r27
        bl      host_stop22
        lwz     r9, TASK_MM(r27)        # get_mmu_context(next)
        lwz     r10, MM_CONTEXT(r9)
        cmpwi   0, r10, 0
        beq-    sch_no_context
        bl      cli22                   # _switch_to: s = _disable_interrupts()
        mr      r28, r3
        addi    r3, r31, TSS            # _switch(&prev->tss, &new->tss, new->mm->context)
        addi    r4, r27, TSS
        lwz     r9, TASK_MM(r27)
        lwz     r5, MM_CONTEXT(r9)
        bl      _switch22
        mr      r3, r28                 # _enable_interrupts(s): prev runs again
        bl      enable22
        .endm


# misc.S's __cli (and _disable_interrupts, the same code): r3 = the old EE bit
        .globl  cli22
cli22:
        mfmsr   r0
        rlwinm  r3, r0, 17, 31, 31
        li      r4, 0
        ori     r4, r4, MSR_EE
        andc    r0, r0, r4
        sync                            # "some chip revs have problems here"
        mtmsr   r0
        blr

# misc.S's _enable_interrupts(r3 = the EE bit to restore), falling into __sti
        .globl  enable22
enable22:
        cmpwi   0, r3, 0
        beqlr
        .globl  sti22
sti22:                                  # __sti: lost interrupts first, then EE on
        lis     r4, KDATA_LOST_IRQS@ha
        lwz     r4, KDATA_LOST_IRQS@l(r4)
        mfmsr   r3
        ori     r3, r3, MSR_EE
        cmpwi   0, r4, 0
        bne-    lost_interrupts22
        sync
        mtmsr   r3
        blr
lost_interrupts22:                      # do_lost_interrupts: none is ever lost here
        li      r3, HOST_REFUSED
        li      r4, 4
        b       host_stop22

        .globl  sleep_on22
sleep_on22:                             # interruptible_sleep_on(r3 = q)
.ifdef LINUX_2_1_51
        cmpwi   0, r3, 0                # 2.1.51's __sleep_on: if (!p) return
        beqlr-
.endif
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stw     r31, 28(r1)
        stw     r30, 24(r1)
        stw     r29, 20(r1)
        mr      r31, r3
        li      r10, TASK_INTERRUPTIBLE
        stw     r10, TASK_STATE(r2)
        addi    r30, r1, 8              # struct wait_queue wait, on the stack
        stw     r2, WQ_TASK(r30)        # wait.task = current
.ifdef LINUX_2_1_51
        li      r10, 0                  # 2.1.51: wait = { current, NULL }
        stw     r10, WQ_NEXT(r30)
.endif
        mfmsr   r29                     # write_lock_irqsave: save_flags, cli
        bl      cli22
        ADD_WAIT_QUEUE r31, r30, so_linked      # __add_wait_queue
        bl      schedule22
        bl      cli22                   # write_lock_irq
        REMOVE_WAIT_QUEUE r30, so_find, so_found        # __remove_wait_queue
        RESTORE_FLAGS r29, so_restore, lost_interrupts22   # write_unlock_irqrestore
        lwz     r29, 20(r1)
        lwz     r30, 24(r1)
        lwz     r31, 28(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        blr

        .globl  wake_up22
wake_up22:                              # __wake_up(r3 = q, TASK_INTERRUPTIBLE)
        cmpwi   0, r3, 0
        beqlr
        lwz     r4, 0(r3)               # next = *q
        cmpwi   0, r4, 0
        beqlr
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stw     r31, 28(r1)
        stw     r30, 24(r1)
        stw     r29, 20(r1)
        addi    r30, r3, -4             # head = WAIT_QUEUE_HEAD(q)
        mr      r31, r4
wu_loop:
        cmpw    0, r31, r30
        beq     wu_done
        lwz     r29, WQ_TASK(r31)       # p = next->task
        lwz     r31, WQ_NEXT(r31)       # next = next->next
        lwz     r10, TASK_STATE(r29)
.ifdef LINUX_2_1_51
        cmpwi   0, r10, TASK_INTERRUPTIBLE      # 2.1.51: p->state == TASK_INTERRUPTIBLE
        bne     wu_loop
.else
        andi.   r10, r10, TASK_INTERRUPTIBLE    # 2.2.0: p->state & mode
        beq     wu_loop
.endif
        mr      r3, r29
        bl      wake_up_process22
        b       wu_loop
wu_done:
        lwz     r29, 20(r1)
        lwz     r30, 24(r1)
        lwz     r31, 28(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        blr

        .globl  wake_up_process22
wake_up_process22:                      # r3 = p
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stw     r31, 28(r1)
        stw     r30, 24(r1)
        mr      r31, r3
        mfmsr   r30                     # spin_lock_irqsave: save_flags, cli
        bl      cli22
        li      r10, TASK_RUNNING
        stw     r10, TASK_STATE(r31)
        lwz     r10, NEXT_RUN(r31)      # on a run queue already?
        cmpwi   0, r10, 0
        bne     wp_out
.ifdef LINUX_2_1_51
        lwz     r10, COUNTER(r31)       # 2.1.51's add_to_runqueue: the global
        lwz     r11, COUNTER(r2)        # need_resched if p->counter > current's + 3
        addi    r11, r11, 3
        cmpw    0, r10, r11
        ble     wp_add
        li      r10, 1
        lis     r9, KDATA_NEED_RESCHED@ha
        stw     r10, KDATA_NEED_RESCHED@l(r9)
wp_add:
        lis     r9, KDATA_NR_RUNNING@ha # nr_running++
        lwz     r10, KDATA_NR_RUNNING@l(r9)
        addi    r10, r10, 1
        stw     r10, KDATA_NR_RUNNING@l(r9)
        lis     r9, INIT_TASK@h         # at the back: before init_task
        ori     r9, r9, INIT_TASK@l
        lwz     r11, PREV_RUN(r9)       # (p->prev_run = init_task.prev_run)->next_run = p
        stw     r11, PREV_RUN(r31)
        stw     r31, NEXT_RUN(r11)
        stw     r9, NEXT_RUN(r31)       # p->next_run = &init_task
        stw     r31, PREV_RUN(r9)       # init_task.prev_run = p
.else
        lis     r9, INIT_TASK@h         # add_to_runqueue: after init_task
        ori     r9, r9, INIT_TASK@l
        lwz     r11, NEXT_RUN(r9)
        stw     r9, PREV_RUN(r31)
        stw     r31, NEXT_RUN(r9)
        stw     r11, NEXT_RUN(r31)
        stw     r31, PREV_RUN(r11)
        lis     r9, KDATA_NR_RUNNING@ha # nr_running++
        lwz     r10, KDATA_NR_RUNNING@l(r9)
        addi    r10, r10, 1
        stw     r10, KDATA_NR_RUNNING@l(r9)
        lwz     r10, POLICY(r31)        # reschedule_idle
        cmpwi   0, r10, SCHED_OTHER
        bne-    wp_resched
        lwz     r10, COUNTER(r31)
        lwz     r11, COUNTER(r2)
        addi    r11, r11, 3
        cmpw    0, r10, r11
        ble     wp_out
wp_resched:
        li      r10, 1
        stw     r10, NEED_RESCHED(r2)
.endif
wp_out:
        RESTORE_FLAGS r30, wp_restore, lost_interrupts22   # spin_unlock_irqrestore
        lwz     r30, 24(r1)
        lwz     r31, 28(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        blr

.ifndef LINUX_2_1_51
        .globl  schedule22
schedule22:
        mflr    r0
        stwu    r1, -48(r1)
        stw     r0, 52(r1)
        stw     r31, 44(r1)
        stw     r30, 40(r1)
        stw     r29, 36(r1)
        stw     r28, 32(r1)
        stw     r27, 28(r1)
        mr      r31, r2                 # prev = current
        lwz     r28, PROCESSOR(r31)     # this_cpu = prev->processor
        lis     r9, KDATA_IRQ_COUNT@ha
        lwz     r10, KDATA_IRQ_COUNT@l(r9)      # in_interrupt()
        lis     r9, KDATA_BH_COUNT@ha
        lwz     r11, KDATA_BH_COUNT@l(r9)
        add.    r10, r10, r11
        bne-    sch_in_interrupt
        lis     r9, KDATA_BH_ACTIVE@ha
        lwz     r10, KDATA_BH_ACTIVE@l(r9)      # bh_active & bh_mask
        lis     r9, KDATA_BH_MASK@ha
        lwz     r11, KDATA_BH_MASK@l(r9)
        and.    r10, r10, r11
        bne-    sch_bottom_half
        lis     r9, KDATA_TQ_SCHEDULER@ha
        lwz     r10, KDATA_TQ_SCHEDULER@l(r9)   # run_task_queue(&tq_scheduler)
        cmpwi   0, r10, 0
        bne-    sch_task_queue
        bl      cli22                   # spin_lock_irq(&runqueue_lock)
        li      r10, 0
        stw     r10, NEED_RESCHED(r31)
        lwz     r10, COUNTER(r31)       # an exhausted SCHED_RR task to the back
        cmpwi   0, r10, 0
        bne+    sch_state
        lwz     r10, POLICY(r31)
        cmpwi   0, r10, SCHED_RR
        beq-    sch_round_robin
sch_state:
        lwz     r10, TASK_STATE(r31)
        cmpwi   0, r10, TASK_RUNNING
        beq     sch_proper
        cmpwi   0, r10, TASK_INTERRUPTIBLE
        bne     sch_del
        lwz     r11, SIGPENDING(r31)
        cmpwi   0, r11, 0
        beq     sch_del
        li      r10, TASK_RUNNING
        stw     r10, TASK_STATE(r31)
        b       sch_proper
sch_del:                                # del_from_runqueue(prev)
        lis     r9, KDATA_NR_RUNNING@ha
        lwz     r11, NEXT_RUN(r31)
        lwz     r12, PREV_RUN(r31)
        lwz     r10, KDATA_NR_RUNNING@l(r9)
        addi    r10, r10, -1
        stw     r10, KDATA_NR_RUNNING@l(r9)
        stw     r12, PREV_RUN(r11)
        stw     r11, NEXT_RUN(r12)
        li      r10, 0
        stw     r10, NEXT_RUN(r31)
        stw     r10, PREV_RUN(r31)
sch_proper:
        lwz     r10, TASK_STATE(r31)    # sched_data->prevstate = prev->state
        slwi    r11, r28, 5             # &aligned_data[this_cpu]
        lis     r9, KDATA_PREVSTATE@ha
        addi    r9, r9, KDATA_PREVSTATE@l
        stwx    r10, r9, r11
        lis     r29, INIT_TASK@h
        ori     r29, r29, INIT_TASK@l
        lwz     r30, NEXT_RUN(r29)      # p = init_task.next_run
        bl      sti22                   # spin_unlock_irq
        li      r28, -1000              # c
        mr      r27, r29                # next = idle_task
sch_walk:
        cmpw    0, r30, r29             # while (p != &init_task)
        beq     sch_walked
        mr      r3, r30
        bl      goodness22
        cmpw    0, r3, r28
        ble     sch_next
        mr      r28, r3                 # c = weight, next = p
        mr      r27, r30
sch_next:
        lwz     r30, NEXT_RUN(r30)
        b       sch_walk
sch_walked:
        cmpwi   0, r28, 0               # every counter spent: recalculate
        beq-    sch_recalculate
sch_chosen:
        cmpw    0, r27, r29             # the idle task: every task sleeps
        beq-    sch_deadlock
        cmpw    0, r27, r31
        beq     sch_out
        lis     r9, KDATA_CONTEXT_SWTCH@ha # kstat.context_swtch++
        lwz     r10, KDATA_CONTEXT_SWTCH@l(r9)
        addi    r10, r10, 1
        stw     r10, KDATA_CONTEXT_SWTCH@l(r9)
        SWITCH_TO_NEXT
sch_out:
        lwz     r27, 28(r1)
        lwz     r28, 32(r1)
        lwz     r29, 36(r1)
        lwz     r30, 40(r1)
        lwz     r31, 44(r1)
        lwz     r0, 52(r1)
        addi    r1, r1, 48
        mtlr    r0
        blr

# goodness22(r3 = p), r31 = prev: the weight, in r3
        .globl  goodness22
goodness22:
        lwz     r10, POLICY(r3)
        andi.   r11, r10, SCHED_YIELD
        bne-    gd_yield
        cmpwi   0, r10, SCHED_OTHER
        bne-    gd_realtime
        lwz     r11, COUNTER(r3)        # weight = p->counter
        cmpwi   0, r11, 0
        beq     gd_out
        lwz     r12, TASK_MM(r3)        # the same mm: +1
        lwz     r10, TASK_MM(r31)
        cmpw    0, r12, r10
        bne     gd_priority
        addi    r11, r11, 1
gd_priority:
        lwz     r12, PRIORITY(r3)
        add     r11, r11, r12
gd_out:
        mr      r3, r11
        blr
gd_yield:                               # the yield bit cleared, weight 0
        rlwinm  r10, r10, 0, 28, 26
        stw     r10, POLICY(r3)
        li      r3, 0
        blr
.else
# Linux 2.1.51's schedule() (kernel/sched.c 376-465 at 94520e420, uniprocessor: the
# scheduler_lock, release_kernel_lock and reacquire_kernel_lock are empty, this_cpu 0): the
# global need_resched cleared; local_irq_count tested (no local_bh_count, no tq_scheduler,
# no aligned_data); the exhausted SCHED_RR test; prev's state by its switch (interruptible:
# signal & ~blocked makes it runnable, else its timeout, live to the end: a callee-saved
# register; a timeout is refused, the model has no timer; then del_from_runqueue); the
# walk with 2.1.51's goodness; kstat.context_swtch++, the timer's test, get_mmu_context,
# switch_to (process.c 144-163: _disable_interrupts, _switch, _enable_interrupts), the
# timer's test again.
        .globl  schedule22
schedule22:
        mflr    r0
        stwu    r1, -48(r1)
        stw     r0, 52(r1)
        stw     r31, 44(r1)
        stw     r30, 40(r1)
        stw     r29, 36(r1)
        stw     r28, 32(r1)
        stw     r27, 28(r1)
        stw     r26, 24(r1)
        lis     r9, KDATA_NEED_RESCHED@ha # need_resched = 0
        li      r10, 0
        stw     r10, KDATA_NEED_RESCHED@l(r9)
        mr      r31, r2                 # prev = current
        lis     r9, KDATA_IRQ_COUNT@ha
        lwz     r10, KDATA_IRQ_COUNT@l(r9)      # local_irq_count[this_cpu]
        cmpwi   0, r10, 0
        bne-    sch_in_interrupt
        lis     r9, KDATA_BH_ACTIVE@ha
        lwz     r10, KDATA_BH_ACTIVE@l(r9)      # bh_active & bh_mask: do_bottom_half
        lis     r9, KDATA_BH_MASK@ha
        lwz     r11, KDATA_BH_MASK@l(r9)
        and.    r10, r10, r11
        bne-    sch_bottom_half
        bl      cli22                   # spin_lock_irq(&runqueue_lock)
        lwz     r10, COUNTER(r31)       # an exhausted SCHED_RR task to the back
        cmpwi   0, r10, 0
        bne+    sch_21_state
        lwz     r10, POLICY(r31)
        cmpwi   0, r10, SCHED_RR
        beq-    sch_round_robin
sch_21_state:
        li      r26, 0                  # timeout = 0
        lwz     r10, TASK_STATE(r31)    # switch (prev->state)
        cmpwi   0, r10, TASK_INTERRUPTIBLE
        beq     sch_21_interruptible
        cmpwi   0, r10, TASK_RUNNING
        beq     sch_21_proper
        b       sch_21_del
sch_21_interruptible:
        lwz     r11, SIGNAL(r31)        # prev->signal & ~prev->blocked
        lwz     r12, BLOCKED(r31)
        andc.   r11, r11, r12
        bne     sch_21_runnable
        lwz     r26, TIMEOUT(r31)       # timeout = prev->timeout
        cmpwi   0, r26, 0
        bne-    sch_timeout
sch_21_del:                                # del_from_runqueue(prev)
        lis     r9, KDATA_NR_RUNNING@ha
        lwz     r11, NEXT_RUN(r31)
        lwz     r12, PREV_RUN(r31)
        lwz     r10, KDATA_NR_RUNNING@l(r9)
        addi    r10, r10, -1
        stw     r10, KDATA_NR_RUNNING@l(r9)
        stw     r12, PREV_RUN(r11)
        stw     r11, NEXT_RUN(r12)
        li      r10, 0
        stw     r10, NEXT_RUN(r31)
        stw     r10, PREV_RUN(r31)
        b       sch_21_proper
sch_21_runnable:
        li      r10, TASK_RUNNING
        stw     r10, TASK_STATE(r31)
sch_21_proper:
        lis     r29, INIT_TASK@h
        ori     r29, r29, INIT_TASK@l
        lwz     r30, NEXT_RUN(r29)      # p = init_task.next_run
        bl      sti22                   # spin_unlock_irq
        li      r28, -1000              # c
        mr      r27, r29                # next = idle_task
sch_21_walk:
        cmpw    0, r30, r29             # while (p != &init_task)
        beq     sch_21_walked
        mr      r3, r30
        bl      goodness22
        cmpw    0, r3, r28
        ble     sch_21_next
        mr      r28, r3                 # c = weight, next = p
        mr      r27, r30
sch_21_next:
        lwz     r30, NEXT_RUN(r30)
        b       sch_21_walk
sch_21_walked:
        cmpwi   0, r28, 0               # every counter spent: recalculate
        beq-    sch_recalculate
sch_chosen:
        cmpw    0, r27, r29             # the idle task: every task sleeps
        beq-    sch_deadlock
        cmpw    0, r27, r31
        beq     sch_21_out
        lis     r9, KDATA_CONTEXT_SWTCH@ha # kstat.context_swtch++
        lwz     r10, KDATA_CONTEXT_SWTCH@l(r9)
        addi    r10, r10, 1
        stw     r10, KDATA_CONTEXT_SWTCH@l(r9)
        cmpwi   0, r26, 0               # if (timeout): add_timer (never here)
        bne-    sch_timeout
        SWITCH_TO_NEXT
        cmpwi   0, r26, 0               # if (timeout): del_timer
        bne-    sch_timeout
sch_21_out:
        lwz     r26, 24(r1)
        lwz     r27, 28(r1)
        lwz     r28, 32(r1)
        lwz     r29, 36(r1)
        lwz     r30, 40(r1)
        lwz     r31, 44(r1)
        lwz     r0, 52(r1)
        addi    r1, r1, 48
        mtlr    r0
        blr

# 2.1.51's goodness(p, prev, this_cpu) (kernel/sched.c 200-230), r3 = p, r31 = prev: a
# real-time policy 1000 + rt_priority; else p->counter, +1 if p is prev (no priority, no
# mm, no SCHED_YIELD: 2.2.0 added them)
        .globl  goodness22
goodness22:
        lwz     r10, POLICY(r3)
        cmpwi   0, r10, SCHED_OTHER
        bne-    gd_realtime
        lwz     r11, COUNTER(r3)        # weight = p->counter
        cmpwi   0, r11, 0
        beq     gd_out
        cmpw    0, r3, r31              # p == prev: +1
        bne     gd_out
        addi    r11, r11, 1
gd_out:
        mr      r3, r11
        blr
sch_timeout:
        li      r4, 20
        b       sch_refused
.endif
gd_realtime:                            # 1000 + rt_priority: no real-time task here
        li      r3, HOST_REFUSED
        li      r4, 15
        b       host_stop22

sch_task_queue:
        li      r4, 16
        b       sch_refused
sch_in_interrupt:
        li      r4, 17
        b       sch_refused
sch_bottom_half:
        li      r4, 5
        b       sch_refused
sch_round_robin:
        li      r4, 15
        b       sch_refused
sch_recalculate:                        # for_each_task(p) (init_task's next_task round
        lwz     r10, NEXT_TASK(r29)     # to it): p->counter = (p->counter >> 1) +
sch_recalc_task:                        # p->priority; tasklist_lock's read_lock is empty
        cmpw    0, r10, r29             # on one CPU. Then on, with next as chosen
        beq     sch_chosen
        lwz     r11, COUNTER(r10)
        lwz     r12, PRIORITY(r10)
        srawi   r11, r11, 1
        add     r11, r11, r12
        stw     r11, COUNTER(r10)
        lwz     r10, NEXT_TASK(r10)
        b       sch_recalc_task
sch_no_context:
        li      r4, 19
        b       sch_refused
sch_deadlock:
        li      r4, 14
sch_refused:
        li      r3, HOST_REFUSED
        b       host_stop22
