/*
 * Spin locks and read-write locks of Linux 2.6.12 on i386 SMP, out of line as kernel/spinlock.c
 * has them (CONFIG_SMP, no spinlock debugging), with the lock strings of
 * include/asm-i386/spinlock.h, in either configuration of CONFIG_PREEMPT (the equate
 * CONFIG_PREEMPT, 0 or 1, which emu/papers/yoshioka2005/ext3model puts in front:
 * ext3model.PREEMPT; 0 when this file is assembled alone). Without it (kernel/spinlock.c
 * 61-151 of 2.6.12.1: preempt_disable() empty, include/linux/preempt.h 55-58):
 *
 *   _spin_lock(lock):       1: lock; decb (lock); jns 3f
 *                           2: rep;nop (pause); cmpb $0,(lock); jle 2b; jmp 1b; 3:
 *                           (a lock byte of 1 is free, 0 or below is held)
 *   _spin_unlock(lock):     movb $1,(lock)
 *   _write_lock_irq(rw):    cli; lock; subl $RW_LOCK_BIAS,(rw); jnz: undo and spin
 *                           (__write_lock_failed, arch/i386/kernel/semaphore.c)
 *   _write_unlock_irq(rw):  lock; addl $RW_LOCK_BIAS,(rw); sti
 *   _read_lock_irq(rw):     cli; lock; subl $1,(rw); js: undo and spin (__read_lock_failed)
 *   _read_unlock_irq(rw):   lock; incl (rw); sti
 *
 * With CONFIG_PREEMPT (kernel/spinlock.c 153-239, BUILD_LOCK_OPS; 241-300 the unlocks):
 * preempt_disable() is inc_preempt_count (include/linux/preempt.h 29-33: thread_info's
 * preempt_count, found from esp), then the lock is tried (_raw_spin_trylock: xchgb of 0
 * with the lock byte, taken if the old byte was > 0, include/asm-i386/spinlock.h 121-130;
 * _raw_read_trylock: lock decl, then a read of the count, >= 0 taken, else lock incl;
 * _raw_write_trylock: lock subl RW_LOCK_BIAS, zero taken, else lock addl it back, 231-249);
 * contended, preempt_enable() and spin by hand on spin_can_lock / read_can_lock /
 * write_can_lock while break_lock is set, preempt_disable() and try again. The irq
 * variants' loop does local_irq_save (pushfl; popl; cli) before each try and
 * local_irq_restore after a failed one; _x_lock_irq is _x_lock_irqsave (the flags dropped).
 * Each unlock is the !PREEMPT one followed by preempt_enable() (preempt.h 47-51:
 * dec_preempt_count, then TIF_NEED_RESCHED tested, preempt_schedule called if set).
 * Left out with CONFIG_PREEMPT: spinlock_t's and rwlock_t's break_lock word (the
 * structures keep their !PREEMPT offsets, ext3model.structures), so neither the contended
 * path's "break_lock = 1" nor the taken path's "break_lock = 0" store is made (one store to
 * the lock's own line); and the callers here keep ecx and edx across a lock call (the
 * !PREEMPT convention the routines were written to), so the PREEMPT lock functions, which
 * need a second register for xchgb, save and restore edx (a pushl and a popl that the
 * compiled kernel does not have; the hand-counted tests count them).
 * Calling convention: cdecl, the lock's address; eax is clobbered, nothing else.
 */
        .ifndef CONFIG_PREEMPT
        .equ    CONFIG_PREEMPT, 0
        .endif
        .equ    TIF_NEED_RESCHED_BIT, 8     # 1 << TIF_NEED_RESCHED (3),
                                            # include/asm-i386/thread_info.h

/* preempt_disable(), preempt_enable(), preempt_enable_no_resched(), as macros for every
 * routine's inline users (include/linux/preempt.h of 2.6.12.1): nothing without
 * CONFIG_PREEMPT; with it, current_thread_info() (esp & -THREAD_SIZE) into \reg, the
 * scratch register, and its preempt_count up or down, preempt_enable then testing
 * TIF_NEED_RESCHED and calling preempt_schedule if set. */
        .macro  preempt_disable reg
        .if     CONFIG_PREEMPT
        movl    $-8192, \reg
        andl    %esp, \reg
        incl    TI_PREEMPT(\reg)
        .endif
        .endm

        .macro  preempt_enable_no_resched reg
        .if     CONFIG_PREEMPT
        movl    $-8192, \reg
        andl    %esp, \reg
        decl    TI_PREEMPT(\reg)
        .endif
        .endm

        .macro  preempt_enable reg
        .if     CONFIG_PREEMPT
        movl    $-8192, \reg
        andl    %esp, \reg
        decl    TI_PREEMPT(\reg)
        testl   $(TIF_NEED_RESCHED_BIT), TI_FLAGS(\reg)
        jz      .Lpreempt_on\@
        call    preempt_schedule
.Lpreempt_on\@:
        .endif
        .endm

        .equ    RW_LOCK_BIAS, 0x01000000

        .globl  _spin_lock
_spin_lock:
        .if     CONFIG_PREEMPT
        preempt_disable %eax
        pushl   %edx                        # kept for the callers (see above)
        movl    8(%esp), %eax
1:      xorl    %edx, %edx                  # _raw_spin_trylock: xchgb 0 with the byte
        xchgb   %dl, (%eax)
        testb   %dl, %dl
        jle     2f                          # old byte > 0: taken
        popl    %edx
        ret
2:      preempt_enable %edx
3:      pause                               # while (!spin_can_lock(lock)) cpu_relax()
        cmpb    $0, (%eax)
        jle     3b
        preempt_disable %edx
        jmp     1b
        .else
        movl    4(%esp), %eax
1:      lock decb (%eax)
        jns     3f
2:      pause
        cmpb    $0, (%eax)
        jle     2b
        jmp     1b
3:      ret
        .endif

        .globl  _spin_unlock
_spin_unlock:
        movl    4(%esp), %eax
        movb    $1, (%eax)
        preempt_enable %eax
        ret

/* CONFIG_PREEMPT's _x_lock_irqsave loop (BUILD_LOCK_OPS) for a lock in eax, edx scratch:
 * preempt_disable; then each try: local_irq_save into \flags (pushfl; popl; cli), \try
 * (jumps to .Ltaken\@ when taken), else local_irq_restore, preempt_enable, spin while
 * \free finds it held, preempt_disable, again. */
        .macro  preempt_lock_irqsave try, free, flags
        preempt_disable %edx
.Ltry\@:
        pushfl                              # local_irq_save(flags)
        popl    \flags
        cli
        \try   .Ltaken\@
        pushl   \flags                      # local_irq_restore(flags)
        popfl
        preempt_enable %edx
.Lspin\@:
        pause                               # while (!x_can_lock(lock)) cpu_relax()
        \free   .Lspin\@
        preempt_disable %edx
        jmp     .Ltry\@
.Ltaken\@:
        .endm

/* the trylocks, each jumping to \taken when the lock is taken (lock in eax, edx scratch) */
        .macro  write_trylock taken
        lock subl $(RW_LOCK_BIAS), (%eax)   # atomic_sub_and_test(RW_LOCK_BIAS, count)
        jz      \taken
        lock addl $(RW_LOCK_BIAS), (%eax)
        .endm
        .macro  write_busy spin
        cmpl    $(RW_LOCK_BIAS), (%eax)     # !write_can_lock
        jne     \spin
        .endm
        .macro  read_trylock taken
        lock decl (%eax)                    # atomic_dec(count); atomic_read(count) >= 0
        movl    (%eax), %edx
        testl   %edx, %edx
        jns     \taken
        lock incl (%eax)
        .endm
        .macro  read_busy spin
        cmpl    $0, (%eax)                  # !read_can_lock: (int)lock > 0
        jle     \spin
        .endm
        .macro  spin_trylock taken
        xorl    %edx, %edx                  # _raw_spin_trylock
        xchgb   %dl, (%eax)
        testb   %dl, %dl
        jg      \taken
        .endm
        .macro  spin_busy spin
        cmpb    $0, (%eax)                  # !spin_can_lock
        jle     \spin
        .endm

        .globl  _write_lock_irq
_write_lock_irq:
        .if     CONFIG_PREEMPT
        pushl   %edx                        # _write_lock_irqsave(lock), its flags dropped
        pushl   %ecx
        movl    12(%esp), %eax
        preempt_lock_irqsave write_trylock, write_busy, %ecx
        popl    %ecx
        popl    %edx
        ret
        .else
        movl    4(%esp), %eax
        cli
1:      lock subl $(RW_LOCK_BIAS), (%eax)
        jz      3f
        lock addl $(RW_LOCK_BIAS), (%eax)   # __write_lock_failed: undo, wait until free
2:      pause
        cmpl    $(RW_LOCK_BIAS), (%eax)
        jne     2b
        jmp     1b
3:      ret
        .endif

        .globl  _write_unlock_irq
_write_unlock_irq:
        movl    4(%esp), %eax
        lock addl $(RW_LOCK_BIAS), (%eax)
        sti
        preempt_enable %eax
        ret

        .globl  _read_lock_irq
_read_lock_irq:
        .if     CONFIG_PREEMPT
        pushl   %edx                        # _read_lock_irqsave(lock), its flags dropped
        pushl   %ecx
        movl    12(%esp), %eax
        preempt_lock_irqsave read_trylock, read_busy, %ecx
        popl    %ecx
        popl    %edx
        ret
        .else
        movl    4(%esp), %eax
        cli
1:      lock subl $1, (%eax)
        jns     3f
        lock incl (%eax)                    # __read_lock_failed: undo, wait for the writer
2:      pause
        cmpl    $1, (%eax)
        js      2b
        jmp     1b
3:      ret
        .endif

        .globl  _read_unlock_irq
_read_unlock_irq:
        movl    4(%esp), %eax
        lock incl (%eax)
        sti
        preempt_enable %eax
        ret

/* _spin_lock_irqsave(lock) -> flags: pushf; cli; then as _spin_lock. */
        .globl  _spin_lock_irqsave
_spin_lock_irqsave:
        .if     CONFIG_PREEMPT
        pushl   %edx
        pushl   %ecx
        movl    12(%esp), %eax
        preempt_lock_irqsave spin_trylock, spin_busy, %ecx
        movl    %ecx, %eax                  # the flags, returned
        popl    %ecx
        popl    %edx
        ret
        .else
        movl    4(%esp), %ecx
        pushfl
        popl    %eax                        # the flags, returned
        cli
1:      lock decb (%ecx)
        jns     3f
2:      pause
        cmpb    $0, (%ecx)
        jle     2b
        jmp     1b
3:      ret
        .endif

/* _spin_unlock_irqrestore(lock, flags): movb $1; popf. */
        .globl  _spin_unlock_irqrestore
_spin_unlock_irqrestore:
        movl    4(%esp), %eax
        movb    $1, (%eax)
        pushl   8(%esp)
        popfl
        preempt_enable %eax
        ret

/* _spin_lock_irq(lock): cli, then as _spin_lock */
        .globl  _spin_lock_irq
_spin_lock_irq:
        .if     CONFIG_PREEMPT
        pushl   %edx                        # _spin_lock_irqsave(lock), its flags dropped
        pushl   %ecx
        movl    12(%esp), %eax
        preempt_lock_irqsave spin_trylock, spin_busy, %ecx
        popl    %ecx
        popl    %edx
        ret
        .else
        movl    4(%esp), %eax
        cli
1:      lock decb (%eax)
        jns     3f
2:      pause
        cmpb    $0, (%eax)
        jle     2b
        jmp     1b
3:      ret
        .endif

/* _spin_unlock_irq(lock): movb $1; sti */
        .globl  _spin_unlock_irq
_spin_unlock_irq:
        movl    4(%esp), %eax
        movb    $1, (%eax)
        sti
        preempt_enable %eax
        ret

/* preempt_schedule (kernel/sched.c 2788-2800 of 2.6.12.1): a non-zero preempt_count or
 * interrupts disabled, return; else it would schedule(), which the model does not run: a
 * stand-in that faults there (ud2), so a run that reached it would say so. */
        .if     CONFIG_PREEMPT
        .globl  preempt_schedule
preempt_schedule:
        pushl   %eax
        movl    $-8192, %eax
        andl    %esp, %eax
        cmpl    $0, TI_PREEMPT(%eax)        # ti->preempt_count
        jne     1f
        pushfl                              # irqs_disabled(): !(flags & X86_EFLAGS_IF)
        testl   $0x200, (%esp)
        popfl
        jz      1f
        ud2                                 # schedule(): not modelled
1:      popl    %eax
        ret
        .endif
