/*
 * barriers: n full memory barriers in a loop, built the two ways ARM Linux 2.6.3x builds
 * them on an SMP Cortex-A9 with a PL310 outer cache (arch/arm/include/asm/system.h in
 * 2.6.36, later asm/barrier.h):
 *   mb()     = dsb, then outer_sync(): a device store of 0 to the PL310's CACHE_SYNC
 *              register (arch/arm/mm/cache-l2x0.c, cache_sync), which every core shares;
 *   smp_mb() = dmb alone.
 * Yun 2011 (PK2) found the bit operations using the first where the second suffices.
 * Only the barrier is modelled: the kernel's own bookkeeping around outer_sync (a function
 * pointer call, a lock on some controllers) is left out.
 *
 * mb_loop:     r0 = the PL310's register base, r1 = n (> 0)
 * smp_mb_loop: r1 = n (> 0)
 */
        .equ    CACHE_SYNC, 0x730

        .globl  mb_loop
mb_loop:
        mov     r2, #0
1:      dsb
        str     r2, [r0, #CACHE_SYNC]   @ outer_sync
        subs    r1, r1, #1
        bne     1b
        bx      lr

        .globl  smp_mb_loop
smp_mb_loop:
1:      dmb
        subs    r1, r1, #1
        bne     1b
        bx      lr
