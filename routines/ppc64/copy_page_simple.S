/*
 * copy_page_simple: copy one 4 KB page, two 64-bit loads and two stores per iteration.
 *
 * The baseline of Mackerras 2003 section 3.1: "a simple copy_page implementation which has
 * two 64-bit loads and stores per iteration in its main loop", against which the POWER4
 * six-line loop (routines/ppc64/copy_page_power4.S, Linux arch/ppc64/lib/copypage.S) was
 * measured. Written for this book: the loop of the aligned case of arch/ppc64/lib/memcpy.S
 * with the page size fixed.
 *
 * In:  r3 = destination page, r4 = source page (both page aligned)
 */
        .equ    PAGE_SIZE, 4096
        .globl  copy_page_simple
copy_page_simple:
        li      r0, PAGE_SIZE/16
        mtctr   r0
        addi    r3, r3, -8              # pointers one doubleword back for the update forms
        addi    r4, r4, -8
1:      ld      r6, 8(r4)
        ldu     r7, 16(r4)
        std     r6, 8(r3)
        stdu    r7, 16(r3)
        bdnz    1b
        blr
