/*
 * memcpy for 64-bit PowerPC (POWER4): aligned 64-bit loads and stores only.
 *
 * Models memcpy in Linux arch/ppc64/lib/memcpy.S (Paul Mackerras, 2002-2004; later
 * arch/powerpc/lib/memcpy_64.S), as Mackerras 2003 section 3.1 describes it. Written for
 * this book from the algorithm, not copied:
 *   1. fewer than 16 bytes: copy 8/4/2/1-byte pieces chosen by the bits of the length,
 *      with 32-bit loads and stores only (the hardware handles a misaligned word; a
 *      misaligned 64-bit access would take an alignment exception);
 *   2. otherwise bring the destination to an 8-byte boundary with a 1-, 2- and 4-byte copy;
 *   3. source now 8-byte aligned too: a loop of two aligned ld and two std;
 *   4. source misaligned by k bytes: load the aligned doublewords that hold the source and
 *      build each destination doubleword as (S[i] << 8k) | (S[i+1] >> (64 - 8k)): two
 *      aligned ld, two std, and the shifts and ors, per iteration. Only doublewords holding
 *      at least one source byte are loaded, so no page beyond the source is touched;
 *   5. the last 1-7 bytes: from the next doubleword (shifted into place), stored 4/2/1
 *      bytes at a time by rotating the wanted bytes to the bottom of the register.
 * The kernel has two misaligned loops, for an even and an odd number of doublewords; here
 * an odd count copies one doubleword before the loop, which then always does two: the
 * same loads and stores, one loop body. The source line is touched (dcbt) at entry, as
 * the kernel does. Returns the destination, as memcpy must.
 *
 * In:  r3 = destination, r4 = source, r5 = length in bytes
 * Out: r3 = destination
 */
        .globl  memcpy
memcpy:
        mr      r12, r3                 # the return value
        cmpldi  cr1, r5, 16
        neg     r6, r3
        andi.   r6, r6, 7               # bytes up to the destination's 8-byte boundary
        dcbt    0, r4
        blt     cr1, .Lshort
        beq     .Ldst_aligned
        mtcrf   0x01, r6                # cr7 bits 29/30/31 = 4/2/1 bytes to copy
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

.Ldst_aligned:                          # r5 >= 9 bytes left, destination 8-byte aligned
        srdi    r7, r5, 3               # doublewords
        clrldi  r5, r5, 61              # tail bytes
        andi.   r0, r4, 7               # source misalignment k
        bne     .Lsrc_unaligned
        addi    r3, r3, -8              # pointers one doubleword back for the update forms
        addi    r4, r4, -8
        andi.   r0, r7, 1
        beq     1f
        ldu     r6, 8(r4)               # an odd doubleword first
        stdu    r6, 8(r3)
1:      srdi.   r7, r7, 1
        beq     3f
        mtctr   r7
2:      ld      r6, 8(r4)               # main loop: two aligned loads, two aligned stores
        ldu     r7, 16(r4)
        std     r6, 8(r3)
        stdu    r7, 16(r3)
        bdnz    2b
3:      addi    r3, r3, 8
        addi    r4, r4, 8
        cmpdi   r5, 0
        beq     .Ldone
        ld      r6, 0(r4)               # the doubleword holding the tail bytes
        b       .Ltail

.Lsrc_unaligned:                        # r0 = k (1..7), r7 = doublewords (>= 1), r5 = tail
        sldi    r10, r0, 3              # left shift 8k
        subfic  r11, r10, 64            # right shift 64 - 8k
        add     r9, r0, r5              # k + tail: > 8 when the tail needs one more load
        subf    r4, r0, r4              # the aligned doubleword holding the first byte
        ld      r6, 0(r4)
        sld     r6, r6, r10             # invariant: r6 = current S << 8k, r4 -> current S
        addi    r3, r3, -8
        andi.   r0, r7, 1
        beq     1f
        ldu     r8, 8(r4)               # an odd doubleword first
        srd     r0, r8, r11
        or      r0, r6, r0
        stdu    r0, 8(r3)
        sld     r6, r8, r10
1:      srdi.   r7, r7, 1
        beq     3f
        mtctr   r7
2:      ld      r7, 8(r4)               # main loop: S1, S2 aligned; two shifted stores
        ldu     r8, 16(r4)
        srd     r0, r7, r11
        or      r0, r6, r0
        std     r0, 8(r3)
        sld     r7, r7, r10
        srd     r0, r8, r11
        or      r0, r7, r0
        stdu    r0, 16(r3)
        sld     r6, r8, r10
        bdnz    2b
3:      addi    r3, r3, 8
        cmpdi   r5, 0
        beq     .Ldone
        cmpdi   r9, 8
        ble     .Ltail                  # the tail bytes all come from the current S
        ld      r8, 8(r4)
        srd     r8, r8, r11
        or      r6, r6, r8

.Ltail:                                 # the first r5 (1..7) bytes of r6 go to r3
        mtcrf   0x01, r5
        bf      29, 1f
        rotldi  r6, r6, 32
        stw     r6, 0(r3)
        addi    r3, r3, 4
1:      bf      30, 2f
        rotldi  r6, r6, 16
        sth     r6, 0(r3)
        addi    r3, r3, 2
2:      bf      31, .Ldone
        rotldi  r6, r6, 8
        stb     r6, 0(r3)
.Ldone:
        mr      r3, r12
        blr

.Lshort:                                # fewer than 16 bytes
        mtcrf   0x01, r5                # cr7 bits 28/29/30/31 = 8/4/2/1 bytes
        bf      28, 1f
        lwz     r0, 0(r4)
        lwz     r9, 4(r4)
        addi    r4, r4, 8
        stw     r0, 0(r3)
        stw     r9, 4(r3)
        addi    r3, r3, 8
1:      bf      29, 2f
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
