/*
 * arch_spin_lock's loop, one macro for every ARM routine that takes a spin lock (the kernel
 * model's spin_lock in spinlock.S, _raw_spin_lock_irqsave in pagelock.S, _raw_spin_lock_irq
 * in lru_v7.S). Written for the model after 2.6.36's arch/arm/include/asm/spinlock.h
 * (arch_spin_lock, lines 42-60 in allwinner/linux-2.6.36): ldrex the lock word, teq with 0,
 * try again while it is held; strex 1 (the status is 0 if no other CPU wrote the word since),
 * try again if the strex failed; then smp_mb (dmb). The kernel's asm does it with one
 * register and conditional instructions (teq; wfene; strexeq; teqeq; bne 1b, the 1 in a
 * register the compiler loaded); the model's loop branches back while the lock is held and
 * moves the 1 into place itself, which the three routines did before this macro (their
 * bytes are unchanged: tests/kernel/test_arch_spinlock.py). The wfene is left out (the model
 * has no events: a waiting core spins on ldrex).
 *
 *   ARCH_SPIN_LOCK lock, tmp, status    lock: the register holding the lock word's address;
 *                                       tmp, status: two scratch registers (clobbered)
 *
 * The loop's label is the local 1 (as each routine had it): a 1b after the macro refers to it.
 */
        .macro  ARCH_SPIN_LOCK lock, tmp, status
1:      ldrex   \tmp, [\lock]
        teq     \tmp, #0
        bne     1b
        mov     \tmp, #1
        strex   \status, \tmp, [\lock]
        teq     \status, #0
        bne     1b
        dmb                                     @ smp_mb
        .endm

/*
 * atomic_add_return / atomic_sub_return's loop (2.6.36 arch/arm/include/asm/atomic.h, ARMv6+):
 * smp_mb, then ldrex the counter, apply the operation, strex it back and try again if the
 * strex failed, then smp_mb; the new value is left in val. atomic_dec_and_test,
 * atomic_inc_and_test and atomic_add_negative are this with a test of val after it.
 *
 *   ATOMIC_OP_RETURN op, addr, val, status, operand
 *       op: add or sub; addr: the register holding the counter's address; val, status: two
 *       scratch registers (val returns the new value); operand: what op adds or takes away
 *
 * The loop's label is the local 1, as in ARCH_SPIN_LOCK.
 */
        .macro  ATOMIC_OP_RETURN op, addr, val, status, operand
        dmb
1:      ldrex   \val, [\addr]
        \op     \val, \val, \operand
        strex   \status, \val, [\addr]
        teq     \status, #0
        bne     1b
        dmb
        .endm
