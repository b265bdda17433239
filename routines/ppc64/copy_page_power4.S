/*
 * copy_page_power4: copy one 4 KB page working on six cache lines at once (POWER4).
 *
 * Models copy_page in Linux arch/ppc64/lib/copypage.S (Paul Mackerras, 2002; later
 * arch/powerpc/lib/copypage_64.S), as Mackerras 2003 section 3.1 describes it: POWER4's
 * L1 D is store-through, so every store goes to the L2, which is three interleaved slices
 * with a store queue each; stores that go to each slice in turn keep all three queues
 * busy. The main loop works on six 128-byte lines (offsets 0, 128, ..., 640) and has 18
 * loads and 18 stores, in three groups of six stores followed by six loads. Written for
 * this book from that description and the kernel file's structure, not copied:
 *   1. five blocks of six lines (3840 bytes). For each: load doublewords 0 and 1 of the six
 *      lines, then 5 iterations of the main loop, each storing three doublewords of every
 *      line and loading the next three (loads run two doublewords ahead of stores), then
 *      store doubleword 15 of every line. The fifth iteration also loads doubleword 16 of
 *      each line, i.e. doubleword 0 of the next line, still inside the page, and drops it:
 *      the kernel's loop does the same.
 *   2. the last 256 bytes: eight iterations of four loads and four stores.
 * Within a group the lines go from the sixth to the first, so that the first line's
 * access, last, can use the update form (ldu/stdu) to advance the pointer by 24 bytes
 * (the load pointer runs 16 bytes ahead of the store pointer).
 * Twelve non-volatile registers (r14-r25) are saved below the stack pointer, as the kernel
 * saves twelve, to hold 18 values in flight.
 *
 * In:  r3 = destination page, r4 = source page (both page aligned)
 */
        .equ    LINE, 128
        .globl  copy_page_power4
copy_page_power4:
        std     r14, -8(r1)             # r14-r25 saved below the stack pointer
        std     r15, -16(r1)
        std     r16, -24(r1)
        std     r17, -32(r1)
        std     r18, -40(r1)
        std     r19, -48(r1)
        std     r20, -56(r1)
        std     r21, -64(r1)
        std     r22, -72(r1)
        std     r23, -80(r1)
        std     r24, -88(r1)
        std     r25, -96(r1)
        addi    r3, r3, -8              # both pointers one doubleword back:
        addi    r4, r4, -8              # the update forms then add 24
        li      r12, 5                  # blocks of six lines
.Lblock:
        ld      r19, 648(r4)            # doubleword 0 of lines 5..0
        ld      r18, 520(r4)
        ld      r17, 392(r4)
        ld      r16, 264(r4)
        ld      r15, 136(r4)
        ld      r14, 8(r4)
        ld      r25, 656(r4)            # doubleword 1 of lines 5..0
        ld      r24, 528(r4)
        ld      r23, 400(r4)
        ld      r22, 272(r4)
        ld      r21, 144(r4)
        ldu     r20, 16(r4)             # r4 -> doubleword 1 of line 0
        li      r0, 5                   # main-loop iterations per block
        mtctr   r0
.Lsix:
        std     r19, 648(r3)            # six stores: doubleword j of lines 5..0
        std     r18, 520(r3)
        std     r17, 392(r3)
        std     r16, 264(r3)
        std     r15, 136(r3)
        std     r14, 8(r3)
        ld      r11, 648(r4)            # six loads: doubleword j+2
        ld      r10, 520(r4)
        ld      r9, 392(r4)
        ld      r8, 264(r4)
        ld      r7, 136(r4)
        ld      r6, 8(r4)
        std     r25, 656(r3)            # doubleword j+1
        std     r24, 528(r3)
        std     r23, 400(r3)
        std     r22, 272(r3)
        std     r21, 144(r3)
        std     r20, 16(r3)
        ld      r19, 656(r4)            # doubleword j+3
        ld      r18, 528(r4)
        ld      r17, 400(r4)
        ld      r16, 272(r4)
        ld      r15, 144(r4)
        ld      r14, 16(r4)
        std     r11, 664(r3)            # doubleword j+2 (then r3 += 24)
        std     r10, 536(r3)
        std     r9, 408(r3)
        std     r8, 280(r3)
        std     r7, 152(r3)
        stdu    r6, 24(r3)
        ld      r25, 664(r4)            # doubleword j+4 (then r4 += 24)
        ld      r24, 536(r4)
        ld      r23, 408(r4)
        ld      r22, 280(r4)
        ld      r21, 152(r4)
        ldu     r20, 24(r4)
        bdnz    .Lsix
        std     r19, 648(r3)            # doubleword 15 of lines 5..0
        std     r18, 520(r3)
        std     r17, 392(r3)
        std     r16, 264(r3)
        std     r15, 136(r3)
        std     r14, 8(r3)
        addi    r3, r3, 5*LINE + 8      # to the next block: 120 + 8 + 640 = 768
        addi    r4, r4, 5*LINE - 8      # from doubleword 16 of line 0 back to -8 of the next block
        addic.  r12, r12, -1
        bne     .Lblock
        li      r0, 8                   # the last 256 bytes, 32 per iteration
        mtctr   r0
.Ltail:
        ld      r6, 8(r4)
        ld      r7, 16(r4)
        ld      r8, 24(r4)
        ldu     r9, 32(r4)
        std     r6, 8(r3)
        std     r7, 16(r3)
        std     r8, 24(r3)
        stdu    r9, 32(r3)
        bdnz    .Ltail
        ld      r14, -8(r1)
        ld      r15, -16(r1)
        ld      r16, -24(r1)
        ld      r17, -32(r1)
        ld      r18, -40(r1)
        ld      r19, -48(r1)
        ld      r20, -56(r1)
        ld      r21, -64(r1)
        ld      r22, -72(r1)
        ld      r23, -80(r1)
        ld      r24, -88(r1)
        ld      r25, -96(r1)
        blr
