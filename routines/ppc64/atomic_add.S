/*
 * atomic64_adds: n times, add 1 to a 64-bit counter with ldarx / stdcx., as the kernel's
 * atomic64_add does on 64-bit PowerPC (include/asm-powerpc/atomic.h, 2.6: a reserved
 * load, the add, a conditional store that fails if another CPU wrote the doubleword since,
 * and a retry). No barrier: atomic64_add is not a synchronisation point.
 *
 * In:  r3 = counter (8-byte aligned), r4 = n (> 0)
 */
        .globl  atomic64_adds
atomic64_adds:
1:      ldarx   r5, 0, r3
        addi    r5, r5, 1
        stdcx.  r5, 0, r3
        bne-    1b
        addi    r4, r4, -1
        cmpdi   r4, 0
        bne     1b
        blr
