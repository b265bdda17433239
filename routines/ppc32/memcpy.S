/*
 * memcpy for 32-bit PowerPC: word copies with possibly misaligned loads.
 *
 * Models memcpy in Linux arch/ppc/lib/string.S (2.4-2.6; Paul Mackerras), the routine
 * Mackerras 2003 section 3 describes: on current PowerPC implementations a misaligned
 * 32-bit load is slower than an aligned one but faster than aligned loads plus the shifts
 * to line the bytes up, so the loop simply loads from wherever the source is. Written for
 * this book from the algorithm, not copied:
 *   1. 8 bytes or more: copy single bytes until the destination is word aligned;
 *   2. a loop of two word loads (aligned or not) and two aligned word stores, 8 bytes per
 *      iteration, with the update forms advancing both pointers;
 *   3. one more word if 4 or more bytes are left, then a byte loop for the rest.
 * Runs unchanged on a 64-bit machine (the paper's baseline on POWER4 ran the ppc32
 * routines): lengths are below 4 GB, and the 32-bit compares look at the low word only.
 *
 * In:  r3 = destination, r4 = source, r5 = length in bytes
 * Out: r3 = destination (never changed)
 */
        .globl  memcpy32
memcpy32:
        addi    r6, r3, -4              # both pointers one word back (update forms)
        addi    r4, r4, -4
        srwi.   r7, r5, 3               # 8-byte pieces
        beq     .Lwords                 # fewer than 8 bytes: no alignment step
        andi.   r0, r6, 3               # destination misalignment
        bne     .Lalign
.Lloop_setup:
        mtctr   r7
1:      lwz     r7, 4(r4)               # possibly misaligned
        lwzu    r8, 8(r4)
        stw     r7, 4(r6)
        stwu    r8, 8(r6)
        bdnz    1b
        andi.   r5, r5, 7
.Lwords:
        cmplwi  r5, 4
        blt     .Lbytes
        lwzu    r0, 4(r4)
        addi    r5, r5, -4
        stwu    r0, 4(r6)
.Lbytes:
        cmpwi   r5, 0
        beqlr
        mtctr   r5
        addi    r4, r4, 3               # byte update forms: one byte back
        addi    r6, r6, 3
2:      lbzu    r0, 1(r4)
        stbu    r0, 1(r6)
        bdnz    2b
        blr

.Lalign:                                # r0 = destination & 3 (1..3)
        subfic  r0, r0, 4               # bytes to the word boundary
        subf    r5, r0, r5
        mtctr   r0
3:      lbz     r7, 4(r4)
        addi    r4, r4, 1
        stb     r7, 4(r6)
        addi    r6, r6, 1
        bdnz    3b
        srwi.   r7, r5, 3
        beq     .Lwords
        b       .Lloop_setup
