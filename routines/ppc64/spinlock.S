/*
 * spin_lock(lock), spin_unlock(lock): the kernel's spin locks on 64-bit PowerPC (POWER4),
 * after Linux 2.6.0's include/asm-ppc64/spinlock.h (_raw_spin_lock / _raw_spin_unlock): a
 * 32-bit lock word, lwarx until it reads 0, claimed with stwcx., then isync; released with
 * lwsync (the section's stores ordered before the release) and a plain store of 0. Taken
 * by the kernel model on a machine of several cores only.
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
        lwsync
        li      r4, 0
        stw     r4, 0(r3)
        blr
