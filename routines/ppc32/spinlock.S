/*
 * spin_lock(lock), spin_unlock(lock): the kernel's spin locks on an SMP 32-bit PowerPC,
 * after Linux 2.6's include/asm-ppc/spinlock.h (_raw_spin_lock / _raw_spin_unlock): spin
 * with lwarx until the lock word reads 0, claim it with stwcx., isync so that nothing of the
 * critical section runs before the lock is held; release with a sync (the section's stores
 * visible first) and a plain store of 0. The kernel model (emu.kernel.vm) takes them on a
 * machine of several cores; a uniprocessor kernel has none.
 *
 * In: r3 = the lock word (0: free)
 */
        .globl  spin_lock
spin_lock:
1:      lwarx   r4, 0, r3
        cmpwi   r4, 0
        bne-    1b
        li      r4, 1
        stwcx.  r4, 0, r3
        bne-    1b
        isync
        blr

        .globl  spin_unlock
spin_unlock:
        sync
        li      r4, 0
        stw     r4, 0(r3)
        blr
