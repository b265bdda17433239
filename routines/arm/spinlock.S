/*
 * spin_lock(lock), spin_unlock(lock): the kernel's spin locks on ARMv7 SMP, after Linux
 * 2.6.3x's arch/arm/include/asm/spinlock.h (arch_spin_lock / arch_spin_unlock): ldrex until
 * the lock word reads 0, claim it with strex (which fails if another CPU wrote the word
 * since), then smp_mb (dmb); release with smp_mb, a plain store of 0, then dsb and sev
 * (CONFIG_CPU_32v6K: the dsb also waits for cache maintenance before it). The lock's wfene
 * is left out (the model has no events: a waiting core spins). Taken by the kernel model on a
 * machine of several cores only. The lock's loop is the ARCH_SPIN_LOCK macro
 * (arch_spinlock.S, which emu.kernel.arm.routines_source puts before this file): teq as
 * 2.6.36 has it, where this file had cmp (the same Z flag, one ALU cycle each on the model).
 *
 * In: r0 = the lock word (0: free)
 */
        .globl  spin_lock
spin_lock:
        ARCH_SPIN_LOCK r0, r1, r2               @ arch_spinlock.S, loaded before this file
        bx      lr

        .globl  spin_unlock
spin_unlock:
        dmb
        mov     r1, #0
        str     r1, [r0]
        dsb                                     @ 2.6.3x (CONFIG_CPU_32v6K): dsb, then sev
        sev
        bx      lr
