/*
 * ARMv7 D- and I-cache maintenance the kernel model calls, after Linux 2.6.35's
 * arch/arm/mm/cache-v7.S and arch/arm/include/asm/cacheflush.h (written for the model):
 *
 *   v7_flush_kern_dcache_area  __cpuc_flush_dcache_area(): clean and invalidate the D-cache
 *                              lines of a range (DCCIMVAC), then dsb. flush_dcache_page and,
 *                              before Yun 2011's PK3, copy_user_highpage run it on a page.
 *   v7_coherent_user_range     __cpuc_coherent_user_range(): per line, clean the D-cache to
 *                              the point of unification and invalidate the I-cache line;
 *                              then the branch predictor, dsb, isb (flush_icache_range)
 *   __flush_icache_all         invalidate the whole I-cache, inner shareable (SMP)
 *
 * These act on the L1 caches only (CP15 maintenance does not reach the PL310 outer cache,
 * which Linux maintains through its registers, outer_*_range): see emu.kernel.arm.
 */

@ v7_flush_kern_dcache_area(r0 = start, r1 = bytes)
        .globl  v7_flush_kern_dcache_area
v7_flush_kern_dcache_area:
        mrc     p15, 0, r3, c0, c0, 1           @ CTR: the D-cache line size
        lsr     r3, r3, #16
        and     r3, r3, #0xf
        mov     r2, #4
        mov     r2, r2, lsl r3
        add     r1, r0, r1                      @ end
1:      mcr     p15, 0, r0, c7, c14, 1          @ clean and invalidate the line (DCCIMVAC)
        add     r0, r0, r2
        cmp     r0, r1
        blo     1b
        dsb
        mov     pc, lr

@ v7_coherent_user_range(r0 = start, r1 = end)
        .globl  v7_coherent_user_range
v7_coherent_user_range:
        mrc     p15, 0, r3, c0, c0, 1
        lsr     r3, r3, #16
        and     r3, r3, #0xf
        mov     r2, #4
        mov     r2, r2, lsl r3
        sub     r3, r2, #1
        bic     r0, r0, r3                      @ from the start of its line
1:      mcr     p15, 0, r0, c7, c11, 1          @ clean the D line to PoU (DCCMVAU)
        dsb
        mcr     p15, 0, r0, c7, c5, 1           @ invalidate the I line (ICIMVAU)
        add     r0, r0, r2
        cmp     r0, r1
        blo     1b
        mov     r0, #0
        mcr     p15, 0, r0, c7, c1, 6           @ branch predictors, inner shareable
        dsb
        isb
        mov     pc, lr

@ __flush_icache_all(): ICIALLUIS (an inline asm statement in the kernel)
        .globl  __flush_icache_all
__flush_icache_all:
        mov     r0, #0
        mcr     p15, 0, r0, c7, c1, 0
        mov     pc, lr
