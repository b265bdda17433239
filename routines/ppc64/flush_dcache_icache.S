/*
 * flush_dcache_icache: make the instruction cache coherent with memory for one page (POWER4).
 *
 * Models __flush_dcache_icache in Linux 2.6 arch/ppc64/kernel/misc.S (later
 * arch/powerpc/kernel/misc_64.S): the 32-bit routine (routines/ppc32/flush_dcache_icache.S)
 * with 64-bit address arithmetic and POWER4's 128-byte L1 lines, which the kernel reads
 * from its boot-time cache description. Written for this book from the algorithm:
 *   1. dcbst every line of the page; 2. sync; 3. icbi every line; 4. sync; isync.
 *
 * In:  r3 = any address inside the page
 */
        .equ    PAGE_SIZE, 4096
        .equ    LINE, 128                   # POWER4 L1 D and L1 I line (profiles/power4.toml)
        .globl  flush_dcache_icache
flush_dcache_icache:
        rldicr  r3, r3, 0, 51               # round down to the page
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
