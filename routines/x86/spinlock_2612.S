/*
 * Spin locks and read-write locks of Linux 2.6.12 on i386 SMP, out of line as kernel/spinlock.c
 * has them (CONFIG_SMP, no CONFIG_PREEMPT, no spinlock debugging), with the lock strings of
 * include/asm-i386/spinlock.h:
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
 * A free rwlock holds RW_LOCK_BIAS (0x01000000). cli/sti are the irq variants' local_irq_*.
 * Calling convention: cdecl, the lock's address; eax is clobbered, nothing else.
 */
        .equ    RW_LOCK_BIAS, 0x01000000

        .globl  _spin_lock
_spin_lock:
        movl    4(%esp), %eax
1:      lock decb (%eax)
        jns     3f
2:      pause
        cmpb    $0, (%eax)
        jle     2b
        jmp     1b
3:      ret

        .globl  _spin_unlock
_spin_unlock:
        movl    4(%esp), %eax
        movb    $1, (%eax)
        ret

        .globl  _write_lock_irq
_write_lock_irq:
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

        .globl  _write_unlock_irq
_write_unlock_irq:
        movl    4(%esp), %eax
        lock addl $(RW_LOCK_BIAS), (%eax)
        sti
        ret

        .globl  _read_lock_irq
_read_lock_irq:
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

        .globl  _read_unlock_irq
_read_unlock_irq:
        movl    4(%esp), %eax
        lock incl (%eax)
        sti
        ret

/* _spin_lock_irqsave(lock) -> flags: pushf; cli; then as _spin_lock. */
        .globl  _spin_lock_irqsave
_spin_lock_irqsave:
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

/* _spin_unlock_irqrestore(lock, flags): movb $1; popf. */
        .globl  _spin_unlock_irqrestore
_spin_unlock_irqrestore:
        movl    4(%esp), %eax
        movb    $1, (%eax)
        pushl   8(%esp)
        popfl
        ret

/* _spin_lock_irq(lock): cli, then as _spin_lock */
        .globl  _spin_lock_irq
_spin_lock_irq:
        movl    4(%esp), %eax
        cli
1:      lock decb (%eax)
        jns     3f
2:      pause
        cmpb    $0, (%eax)
        jle     2b
        jmp     1b
3:      ret

/* _spin_unlock_irq(lock): movb $1; sti */
        .globl  _spin_unlock_irq
_spin_unlock_irq:
        movl    4(%esp), %eax
        movb    $1, (%eax)
        sti
        ret
