/*
 * locked_adds: n times, take a spin lock, add 1 to a shared counter, release the lock.
 * The lock and unlock follow Linux's ARMv6+ spin locks of the 2.6.3x era
 * (arch/arm/include/asm/spinlock.h, arch_spin_lock / arch_spin_unlock): spin with ldrex
 * until the lock word reads 0, claim it with strex (which fails if another CPU touched the
 * word since the ldrex), then smp_mb (dmb); release with smp_mb and a plain store of 0.
 * The counter is updated with ordinary loads and stores.
 *
 * In:  r0 = lock word (0: free), r1 = counter, r2 = n (> 0)
 */
        .globl  locked_adds
locked_adds:
1:      ldrex   r3, [r0]            @ spin while the lock is held
        cmp     r3, #0
        bne     1b
        mov     r3, #1
        strex   r12, r3, [r0]       @ r12 = 0 if the claim succeeded
        cmp     r12, #0
        bne     1b
locked_adds_held:                   @ the lock is held from here
        dmb                         @ smp_mb: the critical section after the lock
        ldr     r3, [r1]
        add     r3, r3, #1
        str     r3, [r1]
        dmb                         @ smp_mb: the critical section before the release
        mov     r3, #0
        str     r3, [r0]
locked_adds_released:               @ to here (the critical section)
        subs    r2, r2, #1
        bne     1b
        bx      lr
