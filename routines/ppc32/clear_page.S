/*
 * clear_page: zero one 4 KB page with dcbz, one cache line per instruction.
 *
 * Models clear_pages(page, order) with order 0 in Linux arch/ppc/kernel/misc.S (2.6; later
 * arch/powerpc/kernel/misc_32.S), which clear_page() calls; the kernel zeroes every fresh
 * anonymous page and every new page-table page with it (Mackerras 2003 Table 1 lists it).
 * Written for this book from the algorithm, not copied: dcbz establishes each line in the
 * D-cache already zeroed and modified, so the old contents are never read from memory; the
 * only memory traffic is the write-back of the lines it displaces.
 *
 * In:  r3 = page address (page aligned)
 */
        .equ    PAGE_SIZE, 4096
        .equ    LINE, 32                    # L1 line of the 750 / 603e / 604 / 405
        .globl  clear_page
clear_page:
        li      r0, PAGE_SIZE/LINE
        mtctr   r0
1:      dcbz    0, r3                       # a zeroed, modified line, no read from memory
        addi    r3, r3, LINE
        bdnz    1b
        blr
