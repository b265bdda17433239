/*
 * copy_page: copy one 4 KB page, prefetching the source with dcbt and establishing each
 * destination line with dcbz so that the old destination is never read from memory.
 *
 * Models copy_page(to, from) in Linux arch/ppc/kernel/misc.S (2.6; later
 * arch/powerpc/kernel/misc_32.S) for a 32-byte L1 line and MAX_COPY_PREFETCH = 4 (the PPC32
 * value in include/asm-ppc/cache.h). The kernel uses it for copy-on-write copies
 * (copy_user_page); Mackerras 2003 Table 1 lists it. Written for this book from the
 * algorithm, not copied:
 *   1. touch the first four source lines (dcbt) so that their fills start early;
 *   2. for each of the first 124 lines: touch the source line four lines ahead, dcbz the
 *      destination line, copy 32 bytes as eight word loads and stores (two groups of
 *      four loads then four stores, with update forms advancing the pointers);
 *   3. the last four lines the same way, but the dcbt points at the current line, so the
 *      routine never prefetches past the end of the source page.
 *
 * In:  r3 = destination page, r4 = source page (both page aligned)
 */
        .equ    PAGE_SIZE, 4096
        .equ    LINE, 32
        .equ    PREFETCH, 4                 # MAX_COPY_PREFETCH for 32-byte lines
        .globl  copy_page
copy_page:
        addi    r3, r3, -4                  # the update forms pre-increment by 4 ... 16
        addi    r4, r4, -4
        li      r5, 4                       # dcbz offset: the next destination line
        li      r0, PREFETCH
        mtctr   r0
        li      r11, 4
1:      dcbt    r11, r4                     # start the fills of the first four lines
        addi    r11, r11, LINE
        bdnz    1b
        li      r0, PAGE_SIZE/LINE - PREFETCH
        mtctr   r0
2:      dcbt    r11, r4                     # four lines ahead
        dcbz    r5, r3                      # the destination line, zeroed in the cache
        lwz     r6, 4(r4)
        lwz     r7, 8(r4)
        lwz     r8, 12(r4)
        lwzu    r9, 16(r4)
        stw     r6, 4(r3)
        stw     r7, 8(r3)
        stw     r8, 12(r3)
        stwu    r9, 16(r3)
        lwz     r6, 4(r4)
        lwz     r7, 8(r4)
        lwz     r8, 12(r4)
        lwzu    r9, 16(r4)
        stw     r6, 4(r3)
        stw     r7, 8(r3)
        stw     r8, 12(r3)
        stwu    r9, 16(r3)
        bdnz    2b
        li      r0, PREFETCH                # the tail: no prefetch beyond the page
        mtctr   r0
        li      r11, 4
3:      dcbt    r11, r4                     # the current line: already in the cache
        dcbz    r5, r3
        lwz     r6, 4(r4)
        lwz     r7, 8(r4)
        lwz     r8, 12(r4)
        lwzu    r9, 16(r4)
        stw     r6, 4(r3)
        stw     r7, 8(r3)
        stw     r8, 12(r3)
        stwu    r9, 16(r3)
        lwz     r6, 4(r4)
        lwz     r7, 8(r4)
        lwz     r8, 12(r4)
        lwzu    r9, 16(r4)
        stw     r6, 4(r3)
        stw     r7, 8(r3)
        stw     r8, 12(r3)
        stwu    r9, 16(r3)
        bdnz    3b
        blr
