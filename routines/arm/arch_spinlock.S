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
