/*
 * __copy_tofrom_user22(to, from, n): the user copy of Linux 2.1.51 and 2.2.0 on 32-bit
 * PowerPC, arch/ppc/lib/string.S (2.2.0, davej-history f6cce5dae: lines 220-261; 2.1.51pre1,
 * 94520e420: 219-260, the same loop, its first shift written as rlwinm.). Written for this
 * book from that algorithm: the destination brought to a word boundary a byte at a time,
 * then 8 bytes an iteration (two word loads, aligned or not, two aligned stores, the update
 * forms advancing both pointers), a word, then the bytes left. r3 = 0, the bytes not
 * copied, on success. Its __ex_table fixups are not here: the model's user buffers are
 * touched before the copies, as the benchmarks' own loops touch them, so none faults.
 * Both kernels' copy_to_user / copy_from_user (pipe_22.S) and file_read_actor
 * (filemap_22.S) call it.
 * In: r3 = to, r4 = from, r5 = n. Out: r3 = 0.
 */
        .align  5
        .globl  __copy_tofrom_user22
__copy_tofrom_user22:
        srwi.   r7, r5, 3               # 8-byte pieces
        addi    r6, r3, -4              # both pointers a word back (update forms)
        addi    r4, r4, -4
        li      r3, 0                   # the success return
        beq     2f                      # under 8 bytes
        andi.   r0, r6, 3
        mtctr   r7
        bne     5f                      # the destination not word aligned
1:      lwz     r7, 4(r4)
        lwzu    r8, 8(r4)
        stw     r7, 4(r6)
        stwu    r8, 8(r6)
        bdnz    1b
        andi.   r5, r5, 7
2:      cmplwi  0, r5, 4                # a word left?
        blt     3f
        lwzu    r0, 4(r4)
        addi    r5, r5, -4
        stwu    r0, 4(r6)
3:      cmpwi   0, r5, 0                # then the bytes
        beqlr
        mtctr   r5
        addi    r4, r4, 3
        addi    r6, r6, 3
4:      lbzu    r0, 1(r4)
        stbu    r0, 1(r6)
        bdnz    4b
        blr
5:      subfic  r0, r0, 4               # bytes to the destination's word boundary
        mtctr   r0
        subf    r5, r0, r5
6:      lbz     r7, 4(r4)
        addi    r4, r4, 1
        stb     r7, 4(r6)
        addi    r6, r6, 1
        bdnz    6b
        srwi.   r7, r5, 3
        beq     2b
        mtctr   r7
        b       1b
