/*
 * __copy_tofrom_user32(to, from, n): the 32-bit PowerPC kernel's user copy, the routine
 * Mackerras 2003 section 3.1 compared the POWER4 one against ("the copy_tofrom_user and
 * memcpy routines from the ppc32 kernel (thus using only 32-bit loads and stores)").
 * Returns the number of bytes NOT copied (0 on success).
 *
 * Follows __copy_tofrom_user in Linux 2.5.66, arch/ppc/lib/string.S (lines 406-599 of
 * the BitKeeper history's "Linux 2.5.66" commit 3007e2ef10), by default in the
 * configuration of a 64-bit processor running that code: include/asm-ppc/cache.h gives
 * CONFIG_PPC64BRIDGE (POWER3/POWER4) 128-byte lines and MAX_COPY_PREFETCH 1. A prelude
 * that sets CACHELINE_BYTES, LG_CACHELINE_BYTES and MAX_COPY_PREFETCH gives another
 * (emu.kernel.copybench's copy_tofrom_user32_l32: the 750's and the 405GP's 32-byte lines
 * and MAX_COPY_PREFETCH 4, string.S 431-455: a copy of more than four lines first touches
 * four source lines ahead, a shorter one one). Written for this book from that
 * algorithm, not copied. In order:
 *
 *   1. bring the destination to a cache-line boundary: single bytes to a word boundary,
 *      then words (lwzu/stwu); a copy shorter than that goes straight to step 3;
 *   2. whole lines: touch the source line (dcbt 4(r4); or MAX_COPY_PREFETCH lines), then
 *      per line touch the one that far ahead,
 *      establish the destination line with dcbz (no read of memory for it) and copy it in
 *      eight groups of four lwz and four stw (COPY_16_BYTES): 32 loads and 32 stores a
 *      128-byte line (two groups, 8 and 8, a 32-byte one), the source loaded from wherever it is (a misaligned word is cheaper
 *      than the shifts on the era's 32-bit processors: the paper, section 3);
 *   3. the rest in words, then bytes.
 *
 * Faults (emu.extable, the kernel's __ex_table): every load and store listed, as in
 * 2.5.66. The fixup works out the bytes not copied as r5 + (ctr << r3), r9 saying a read
 * (0) or a write (1) fault; after a read fault it goes on byte by byte until a load faults
 * again and then zeroes the rest of the destination; after a write fault it returns the
 * count. Differences from 2.5.66: the table stands after the code (the book's assembler
 * lays a section where it stands, emu.extable), and the entry point's name.
 *
 * In:  r3 = to, r4 = from, r5 = n
 * Out: r3 = bytes not copied
 */
/* The configuration (include/asm-ppc/cache.h of 2.5.66): a prelude may set it; by default
 * CONFIG_PPC64BRIDGE's, 128-byte lines and MAX_COPY_PREFETCH 1. The 6xx's and 4xx's (the
 * 750, the 405GP; neither 8xx nor 403GCX): 32-byte lines, MAX_COPY_PREFETCH 4 */
        .ifndef CACHELINE_BYTES
        .equ    CACHELINE_BYTES, 128
        .equ    LG_CACHELINE_BYTES, 7
        .equ    MAX_COPY_PREFETCH, 1
        .endif
        .equ    CACHELINE_MASK, CACHELINE_BYTES - 1

/* four words, each load and store listed in the table under 8<n>0 .. 8<n>7 */
        .macro  COPY_16_BYTES_WITHEX n
8\n\()0:        lwz     r7, 4(r4)
8\n\()1:        lwz     r8, 8(r4)
8\n\()2:        lwz     r9, 12(r4)
8\n\()3:        lwzu    r10, 16(r4)
8\n\()4:        stw     r7, 4(r6)
8\n\()5:        stw     r8, 8(r6)
8\n\()6:        stw     r9, 12(r6)
8\n\()7:        stwu    r10, 16(r6)
        .endm

/* the fixups of group n: the n groups of the line already done leave the count */
        .macro  COPY_16_BYTES_EXCODE n
9\n\()0:        addi    r5, r5, -(16 * \n)
        b       104f
9\n\()1:        addi    r5, r5, -(16 * \n)
        b       105f
        .endm

        .macro  COPY_16_BYTES_EXTABLE n
        .long   8\n\()0b, 9\n\()0b
        .long   8\n\()1b, 9\n\()0b
        .long   8\n\()2b, 9\n\()0b
        .long   8\n\()3b, 9\n\()0b
        .long   8\n\()4b, 9\n\()1b
        .long   8\n\()5b, 9\n\()1b
        .long   8\n\()6b, 9\n\()1b
        .long   8\n\()7b, 9\n\()1b
        .endm

        .globl  __copy_tofrom_user32
__copy_tofrom_user32:
        addi    r4, r4, -4              # both pointers one word back (update forms)
        addi    r6, r3, -4
        neg     r0, r3
        andi.   r0, r0, CACHELINE_MASK  # bytes to the destination's next line
        beq     58f
        cmplw   cr0, r5, r0             # fewer than that in all?
        blt     63f
        andi.   r8, r0, 3               # bytes to a word boundary first
        mtctr   r8
        beq+    61f
70:     lbz     r9, 4(r4)
71:     stb     r9, 4(r6)
        addi    r4, r4, 1
        addi    r6, r6, 1
        bdnz    70b
61:     subf    r5, r0, r5
        srwi.   r0, r0, 2               # then words to the line
        mtctr   r0
        beq     58f
72:     lwzu    r9, 4(r4)
73:     stwu    r9, 4(r6)
        bdnz    72b

58:     srwi.   r0, r5, LG_CACHELINE_BYTES      # whole lines
        clrlwi  r5, r5, 32 - LG_CACHELINE_BYTES
        li      r11, 4
        beq     63f
        .if     MAX_COPY_PREFETCH > 1
        cmpwi   cr0, r0, MAX_COPY_PREFETCH      # a long copy touches that many lines
        li      r7, 1                           # ahead, a short one one line
        li      r3, 4
        ble     111f
        li      r7, MAX_COPY_PREFETCH
111:    mtctr   r7
112:    dcbt    r3, r4
        addi    r3, r3, CACHELINE_BYTES
        bdnz    112b
        .else
        li      r3, CACHELINE_BYTES + 4         # MAX_COPY_PREFETCH 1: one line ahead
        dcbt    r11, r4
        .endif
        mtctr   r0
53:     dcbt    r3, r4
54:     dcbz    r11, r6
        COPY_16_BYTES_WITHEX 0
        COPY_16_BYTES_WITHEX 1
        .if     CACHELINE_BYTES >= 64
        COPY_16_BYTES_WITHEX 2
        COPY_16_BYTES_WITHEX 3
        .endif
        .if     CACHELINE_BYTES >= 128
        COPY_16_BYTES_WITHEX 4
        COPY_16_BYTES_WITHEX 5
        COPY_16_BYTES_WITHEX 6
        COPY_16_BYTES_WITHEX 7
        .endif
        bdnz    53b

63:     srwi.   r0, r5, 2               # the rest: words
        mtctr   r0
        beq     64f
30:     lwzu    r0, 4(r4)
31:     stwu    r0, 4(r6)
        bdnz    30b
64:     andi.   r0, r5, 3               # then bytes
        mtctr   r0
        beq+    65f
40:     lbz     r0, 4(r4)
41:     stb     r0, 4(r6)
        addi    r4, r4, 1
        addi    r6, r6, 1
        bdnz    40b
65:     li      r3, 0
        blr

/* read fault, first bytes */
100:    li      r9, 0
        b       90f
/* write fault, first bytes */
101:    li      r9, 1
90:     subf    r5, r8, r5
        li      r3, 0
        b       99f
/* read fault, first words */
102:    li      r9, 0
        b       91f
/* write fault, first words */
103:    li      r9, 1
91:     li      r3, 2
        b       99f

/* a fault in the line loop: group n's fixup takes off the groups done, then 104 or 105 */
        COPY_16_BYTES_EXCODE 0
        COPY_16_BYTES_EXCODE 1
        .if     CACHELINE_BYTES >= 64
        COPY_16_BYTES_EXCODE 2
        COPY_16_BYTES_EXCODE 3
        .endif
        .if     CACHELINE_BYTES >= 128
        COPY_16_BYTES_EXCODE 4
        COPY_16_BYTES_EXCODE 5
        COPY_16_BYTES_EXCODE 6
        COPY_16_BYTES_EXCODE 7
        .endif

/* read fault in the line loop */
104:    li      r9, 0
        b       92f
/* write fault (or dcbz's) in the line loop */
105:    li      r9, 1
92:     li      r3, LG_CACHELINE_BYTES
        b       99f
/* read fault in the last words */
108:    li      r9, 0
        b       93f
/* write fault in the last words */
109:    li      r9, 1
93:     andi.   r5, r5, 3
        li      r3, 2
        b       99f
/* read fault in the last bytes */
110:    li      r9, 0
        b       94f
/* write fault in the last bytes */
111:    li      r9, 1
94:     li      r5, 0
        li      r3, 0

/* bytes not copied: r5 + (ctr << r3); r9: 0 read, 1 write */
99:     mfctr   r0
        slw     r3, r0, r3
        add.    r3, r3, r5
        beq     120f                    # (cannot happen)
        cmpwi   cr0, r9, 0
        bne     120f
/* a read fault: go on a byte at a time while the source lets us */
        mtctr   r3
130:    lbz     r0, 4(r4)
131:    stb     r0, 4(r6)
        addi    r4, r4, 1
        addi    r6, r6, 1
        bdnz    130b
/* then zero the rest of the destination: r3 bytes from 4(r6) */
132:    mfctr   r3
        srwi.   r0, r3, 2
        li      r9, 0
        mtctr   r0
        beq     113f
112:    stwu    r9, 4(r6)
        bdnz    112b
113:    andi.   r0, r3, 3
        mtctr   r0
        beq     120f
114:    stb     r9, 4(r6)
        addi    r6, r6, 1
        bdnz    114b
120:    blr

/* (faulting instruction, fixup) */
        .section __ex_table, "a"
        .align  2
        .long   70b, 100b
        .long   71b, 101b
        .long   72b, 102b
        .long   73b, 103b
        .long   54b, 105b
        COPY_16_BYTES_EXTABLE 0
        COPY_16_BYTES_EXTABLE 1
        .if     CACHELINE_BYTES >= 64
        COPY_16_BYTES_EXTABLE 2
        COPY_16_BYTES_EXTABLE 3
        .endif
        .if     CACHELINE_BYTES >= 128
        COPY_16_BYTES_EXTABLE 4
        COPY_16_BYTES_EXTABLE 5
        COPY_16_BYTES_EXTABLE 6
        COPY_16_BYTES_EXTABLE 7
        .endif
        .long   30b, 108b
        .long   31b, 109b
        .long   40b, 110b
        .long   41b, 111b
        .long   130b, 132b
        .long   131b, 120b
        .long   112b, 120b
        .long   114b, 120b
        .previous
