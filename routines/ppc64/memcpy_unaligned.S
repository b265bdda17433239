/*
 * memcpy_unaligned: a 64-bit copy that ignores the source's misalignment.
 *
 * Not a kernel routine: strategy 1 of Mackerras 2003 section 3 (load at misaligned
 * addresses, store at aligned ones) applied to 64-bit loads, the choice the paper rejects
 * for 64-bit PowerPC because every 8-byte load that is not 4-byte aligned takes an
 * alignment exception, which the kernel's handler (arch/ppc64/kernel/align.c,
 * fix_alignment) emulates. It has the shape of memcpy in arch/ppc64/lib/memcpy.S
 * (routines/ppc64/memcpy.S): the same short copy and destination alignment, then one loop
 * of two ld and two std whatever the source alignment, and a tail of 4/2/1-byte pieces
 * (misaligned 32-bit loads are done in hardware). Written for this book.
 *
 * In:  r3 = destination, r4 = source, r5 = length in bytes
 * Out: r3 = destination
 */
        .globl  memcpy_unaligned
memcpy_unaligned:
        mr      r12, r3
        cmpldi  cr1, r5, 16
        neg     r6, r3
        andi.   r6, r6, 7               # bytes up to the destination's 8-byte boundary
        dcbt    0, r4
        blt     cr1, .Lshort
        beq     .Ldst_aligned
        mtcrf   0x01, r6
        subf    r5, r6, r5
        bf      31, 1f
        lbz     r0, 0(r4)
        addi    r4, r4, 1
        stb     r0, 0(r3)
        addi    r3, r3, 1
1:      bf      30, 2f
        lhz     r0, 0(r4)
        addi    r4, r4, 2
        sth     r0, 0(r3)
        addi    r3, r3, 2
2:      bf      29, .Ldst_aligned
        lwz     r0, 0(r4)
        addi    r4, r4, 4
        stw     r0, 0(r3)
        addi    r3, r3, 4

.Ldst_aligned:
        srdi    r7, r5, 3               # doublewords
        clrldi  r5, r5, 61              # tail bytes
        addi    r3, r3, -8
        addi    r4, r4, -8
        andi.   r0, r7, 1
        beq     1f
        ldu     r6, 8(r4)               # misaligned source: an alignment exception
        stdu    r6, 8(r3)
1:      srdi.   r7, r7, 1
        beq     3f
        mtctr   r7
2:      ld      r6, 8(r4)               # two loads (each may trap), two aligned stores
        ldu     r7, 16(r4)
        std     r6, 8(r3)
        stdu    r7, 16(r3)
        bdnz    2b
3:      addi    r3, r3, 8
        addi    r4, r4, 8
        mtcrf   0x01, r5
        b       .Lpieces

.Lshort:
        mtcrf   0x01, r5                # cr7 bits 28/29/30/31 = 8/4/2/1 bytes
        bf      28, .Lpieces
        lwz     r0, 0(r4)
        lwz     r9, 4(r4)
        addi    r4, r4, 8
        stw     r0, 0(r3)
        stw     r9, 4(r3)
        addi    r3, r3, 8
.Lpieces:
        bf      29, 2f
        lwz     r0, 0(r4)
        addi    r4, r4, 4
        stw     r0, 0(r3)
        addi    r3, r3, 4
2:      bf      30, 3f
        lhz     r0, 0(r4)
        addi    r4, r4, 2
        sth     r0, 0(r3)
        addi    r3, r3, 2
3:      bf      31, 4f
        lbz     r0, 0(r4)
        stb     r0, 0(r3)
4:      mr      r3, r12
        blr
