/*
 * flush_dcache_icache: make the instruction cache coherent with memory for one page.
 *
 * Models __flush_dcache_icache in Linux arch/ppc/kernel/misc.S (2.5 era; today
 * arch/powerpc/kernel/misc_32.S), the routine at the top of Mackerras 2003 Table 1.
 * Written for this book from the algorithm, not copied:
 *   1. dcbst every cache line of the page: modified data goes out to memory;
 *   2. sync: wait until those stores are done;
 *   3. icbi every line of the page: drop any stale copy from the instruction cache;
 *   4. sync; isync: wait for the invalidations, discard already-fetched instructions.
 *
 * In:  r3 = any address inside the page
 */
        .equ    PAGE_SIZE, 4096
        .equ    LINE, 32                    # L1 line of the 750 / 603e / 604 / 405
        .globl  flush_dcache_icache
flush_dcache_icache:
        rlwinm  r3, r3, 0, 0, 19            # round down to the page (clear the low 12 bits)
        li      r4, PAGE_SIZE/LINE
        mtctr   r4
        mr      r6, r3
1:      dcbst   0, r3                       # write the line back if modified
        addi    r3, r3, LINE
        bdnz    1b
        sync
        mtctr   r4
2:      icbi    0, r6                       # invalidate the I-cache line
        addi    r6, r6, LINE
        bdnz    2b
        sync
        isync
        blr
