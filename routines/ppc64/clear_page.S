/*
 * clear_page: zero one 4 KB page with dcbz, one 128-byte cache line per instruction (POWER4).
 *
 * Models clear_page() of Linux 2.6 include/asm-ppc64/page.h (an inline dcbz loop whose
 * line size and count come from the boot-time cache description, 128 bytes on POWER4;
 * later arch/powerpc/include/asm/page_64.h). The kernel zeroes every fresh anonymous page
 * and every new page-table page with it. Written for this book from the algorithm, not
 * copied: dcbz establishes each line zeroed and modified without reading memory.
 *
 * In:  r3 = page address (page aligned)
 */
        .equ    PAGE_SIZE, 4096
        .equ    LINE, 128                   # POWER4 L1 D line (profiles/power4.toml)
        .globl  clear_page
clear_page:
        li      r0, PAGE_SIZE/LINE
        mtctr   r0
1:      dcbz    0, r3                       # a zeroed, modified line, no read from memory
        addi    r3, r3, LINE
        bdnz    1b
        blr
