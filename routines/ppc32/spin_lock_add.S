/*
 * locked_adds: n times, take a spin lock, add 1 to a shared counter, release the lock.
 * The lock and unlock follow Linux's 32-bit PowerPC spin locks of the 2.6 era
 * (include/asm-ppc/spinlock.h, _raw_spin_lock / _raw_spin_unlock): spin with lwarx until the
 * lock word reads 0, claim it with stwcx., isync so that nothing of the critical section
 * runs before the lock is held; release with a sync (all stores of the critical section
 * visible first) and a plain store of 0. The counter itself is updated with ordinary loads
 * and stores: only the lock makes it correct on several CPUs.
 *
 * In:  r3 = lock word (0: free), r4 = counter, r5 = n (> 0)
 * Out: r3 = the lock word's address
 */
        .globl  locked_adds
locked_adds:
1:      lwarx   r6, 0, r3           # spin while the lock is held
        cmpwi   r6, 0
        bne-    1b
        li      r6, 1
        stwcx.  r6, 0, r3           # claim it, unless another CPU wrote it since lwarx
        bne-    1b
locked_adds_held:                   # the lock is held from here
        isync
        lwz     r7, 0(r4)           # the critical section
        addi    r7, r7, 1
        stw     r7, 0(r4)
        sync                        # spin_unlock: order the section before the release
        li      r6, 0
        stw     r6, 0(r3)
locked_adds_released:               # to here (the critical section)
        addi    r5, r5, -1
        cmpwi   r5, 0
        bne     1b
        blr

/*
 * atomic_adds: n times atomic_inc(counter) without a lock: lwarx, add, stwcx., retry on
 * failure (include/asm-ppc/atomic.h, atomic_add).
 *
 * In:  r3 = counter, r4 = n (> 0)
 */
        .globl  atomic_adds
atomic_adds:
1:      lwarx   r5, 0, r3
        addi    r5, r5, 1
        stwcx.  r5, 0, r3
        bne-    1b
        addi    r4, r4, -1
        cmpwi   r4, 0
        bne     1b
        blr
