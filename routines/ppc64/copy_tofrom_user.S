/*
 * __copy_tofrom_user(to, from, n): copy n bytes between user and kernel space on a 64-bit
 * PowerPC (POWER4); returns the number of bytes NOT copied (0 on success).
 *
 * Follows the algorithm of __copy_tofrom_user in Linux 2.6.0, arch/ppc64/lib/copyuser.S
 * (Paul Mackerras, 2002), as Mackerras 2003 section 3.1 describes it. Written for this
 * book from that algorithm, not copied. In order:
 *
 *   1. n == 4096 and both addresses page aligned: .Lcopy_page, the six-line loop of
 *      copy_page (routines/ppc64/copy_page_power4.S explains it): five blocks of six
 *      128-byte lines, each 12 loads to start, five trips of 18 loads and 18 stores (three
 *      groups of six stores then six loads, one line after another) and 6 stores to end;
 *      then the last 256 bytes in a software-pipelined loop of four ld and four std (7
 *      trips between 3 loads before and 1 load and 4 stores after). Twelve non-volatile
 *      registers (r14-r25) are saved below the stack pointer.
 *   2. n < 16: 8 (two lwz/stw), 4, 2 and 1 bytes, chosen by the bits of n in cr7.
 *   3. otherwise bring the destination to an 8-byte boundary with a 1-, 2- and 4-byte copy,
 *      then, as routines/ppc64/memcpy.S does:
 *      a. source 8-byte aligned too: a loop of two ld and two std, software pipelined (the
 *         next doubleword is loaded before the last one is stored); an odd doubleword
 *         enters the loop half way;
 *      b. source k bytes off: only aligned doublewords S[i] are loaded, each stored
 *         doubleword is (S[i] << 8k) | (S[i+1] >> (64 - 8k)); one pipelined loop of two ld
 *         and two std, entered at one of two points for an even or an odd number of
 *         doublewords (the kernel's "3+2n loads, 2+2n stores" and "4+2n loads, 3+2n
 *         stores"). Only doublewords that hold a source byte are loaded;
 *      c. the last 1-7 bytes from the next doubleword, rotated into place and stored 4, 2,
 *         1 bytes at a time.
 *
 * Faults (emu.extable, the kernel's __ex_table): every load and store that may touch user
 * memory is listed, each with a fixup that knows how far the destination pointer is from
 * the first destination byte not yet written (or from the faulting store).
 *   - A load faults (the user source, copy_from_user): the fixup sets r3 to the first
 *     destination byte not written, then copies byte by byte from there until a load
 *     faults again: so the count is exact even when the faulting ld had run ahead of the
 *     stores or straddled the bad page. Then it ZEROES the rest of the destination (byte
 *     stores to an 8-byte boundary, std, byte stores), as 2.6.0 does, and returns the
 *     bytes not copied. (If the zeroing itself faults, it returns the same count.)
 *   - A store faults (the user destination, copy_to_user): the fixup returns
 *     to + n - (address of the faulting store). No zeroing. Stores are in increasing
 *     address order and, from 16 bytes, naturally aligned, so this is exact; below 16
 *     bytes a word store may straddle the bad page and the count starts at that store.
 *   - Any fault in the page loop: restore r14-r25 and start again with the general
 *     8-byte-aligned loop (3a), whose own fixups then count.
 * Differences from 2.6.0, all in the fault paths:
 *   - 2.6.0's fixup for the store of the second-last doubleword after the shifting loop
 *     (its label 79, std at 16(r3)) adds nothing to r3 where it needs 16, so a fault there
 *     returns 16 more than the bytes not copied (n + 16 when it is the first store); this
 *     one adds 16 and returns the exact count.
 *   - 2.6.0 moves the length's low bits into cr7 only after its page test, so its page
 *     loop's restart runs the general loop with the caller's cr7; this one sets cr7 from
 *     4096 (all clear) first.
 *   - The table is .long pairs (the book's emu.extable reads 32-bit entries; the code sits
 *     below 4 GB), where the kernel has .llong. The page loop keeps its values in r14-r25
 *     (the kernel: r20-r31).
 * The arguments are saved below the stack pointer (-24, -16, -8) for the fixups, as in
 * 2.6.0; the source line is touched (dcbt) at entry.
 *
 * In:  r3 = to, r4 = from, r5 = n
 * Out: r3 = bytes not copied
 */
        .align  7
        .globl  __copy_tofrom_user
__copy_tofrom_user:
        cmpldi  cr1, r5, 16             # cr1: fewer than 16 bytes?
        cmpdi   cr6, r5, 4096
        or      r0, r3, r4
        neg     r6, r3                  # low 3 bits: bytes up to the destination's boundary
        andi.   r0, r0, 4095            # eq: both page aligned
        std     r3, -24(r1)             # to, from, n: the fixups start from them
        crand   cr0*4+2, cr0*4+2, cr6*4+2   # eq: ... and exactly one page
        std     r4, -16(r1)
        std     r5, -8(r1)
        dcbt    0, r4
        beq     .Lcopy_page
        andi.   r6, r6, 7
        mtcrf   0x01, r5                # cr7 bits 28..31 = 8, 4, 2, 1 bytes of n
        blt     cr1, .Lshort_copy
        bne     .Ldst_unaligned

.Ldst_aligned:                          # r5 >= 9 bytes, destination 8-byte aligned,
        andi.   r0, r4, 7               # cr7 = low bits of r5, cr1 = r5 against 16
        addi    r3, r3, -16
        bne     .Lsrc_unaligned
        srdi    r7, r5, 4               # pairs of doublewords
11:     ld      r9, 0(r4)               # doubleword 0
        addi    r4, r4, -8
        mtctr   r7
        andi.   r5, r5, 7               # tail bytes (eq: none)
        bf      cr7*4+0, 4f             # even count: enter at the second load
        addi    r3, r3, 8               # odd: doubleword 0 goes first, alone
        addi    r4, r4, 8
        mr      r8, r9
        blt     cr1, 6f                 # it is the only one
2:
12:     ld      r9, 8(r4)               # the loop: load one ahead of the store
13:     std     r8, 8(r3)
4:
14:     ldu     r8, 16(r4)
15:     stdu    r9, 16(r3)
        bdnz    2b
6:
16:     std     r8, 8(r3)
        beq+    .Lreturn_0
        addi    r3, r3, 16              # r3 -> the tail
17:     ld      r9, 8(r4)               # the doubleword holding the tail
.Ldo_tail:                              # the first r5 (1..7) bytes of r9 go to r3
        bf      cr7*4+1, 1f
        rotldi  r9, r9, 32
18:     stw     r9, 0(r3)
        addi    r3, r3, 4
1:      bf      cr7*4+2, 2f
        rotldi  r9, r9, 16
19:     sth     r9, 0(r3)
        addi    r3, r3, 2
2:      bf      cr7*4+3, .Lreturn_0
        rotldi  r9, r9, 8
20:     stb     r9, 0(r3)
.Lreturn_0:
        li      r3, 0
        blr

.Lsrc_unaligned:                        # r0 = k (1..7), r3 = to - 16
        srdi    r6, r5, 3               # doublewords to store, d
        addi    r5, r5, -16
        subf    r4, r0, r4              # the aligned doubleword S0 holding the first byte
        srdi    r7, r5, 4               # loop trips: (n - 16) / 16
        sldi    r10, r0, 3              # left shift 8k
        cmpldi  cr6, r6, 3              # d against 3
        andi.   r5, r5, 7               # tail bytes (eq: none)
        mtctr   r7
        subfic  r11, r10, 64            # right shift 64 - 8k
        add     r5, r5, r0              # k + tail: over 8 when the tail needs one more S
        bt      cr7*4+0, 3f             # d odd

21:     ld      r9, 0(r4)               # d even: S0, S1, S2
22:     ld      r0, 8(r4)
        sld     r6, r9, r10
23:     ldu     r9, 16(r4)
        srd     r7, r0, r11
        sld     r8, r0, r10
        or      r7, r7, r6              # r7 = D0
        blt     cr6, 8f                 # d == 2
24:     ld      r0, 8(r4)               # S3
        b       5f

3:                                      # d odd: S0, S1 (and S2, S3)
25:     ld      r0, 0(r4)
26:     ldu     r9, 8(r4)
        sld     r8, r0, r10
        addi    r3, r3, -8
        blt     cr6, 9f                 # d == 1
27:     ld      r0, 8(r4)
        srd     r12, r9, r11
        sld     r6, r9, r10
28:     ldu     r9, 16(r4)
        or      r12, r8, r12            # r12 = D0
        srd     r7, r0, r11
        sld     r8, r0, r10
        addi    r3, r3, 16
        beq     cr6, 7f                 # d == 3

4:      or      r7, r7, r6              # the loop: two ld, two shifted std
29:     ld      r0, 8(r4)
30:     std     r12, 8(r3)
5:      srd     r12, r9, r11
        sld     r6, r9, r10
31:     ldu     r9, 16(r4)
        or      r12, r8, r12
32:     stdu    r7, 16(r3)
        srd     r7, r0, r11
        sld     r8, r0, r10
        bdnz    4b

7:
33:     std     r12, 8(r3)              # the last three (d == 3: all of them)
        or      r7, r7, r6
8:
34:     std     r7, 16(r3)              # the last two (d == 2: both)
9:      srd     r12, r9, r11            # the last one (d == 1: the only one)
        or      r12, r8, r12
35:     std     r12, 24(r3)
        bne     1f                      # tail bytes?
        li      r3, 0
        blr
1:      cmpwi   cr1, r5, 8
        addi    r3, r3, 32              # r3 -> the tail
        sld     r9, r9, r10             # what the current S holds of it
        ble     cr1, .Ldo_tail          # k + tail <= 8: all of it
36:     ld      r0, 8(r4)               # the rest from the next S
        srd     r7, r0, r11
        or      r9, r7, r9
        b       .Ldo_tail

.Ldst_unaligned:                        # r6 = 1..7 bytes to the boundary, r5 >= 16
        mtcrf   0x01, r6                # cr7 bits 29..31 = 4, 2, 1 bytes to copy
        subf    r5, r6, r5
        li      r7, 0                   # offset of the next byte
        cmpldi  cr1, r5, 16
        bf      cr7*4+3, 1f
37:     lbz     r0, 0(r4)
38:     stb     r0, 0(r3)
        addi    r7, r7, 1
1:      bf      cr7*4+2, 2f
39:     lhzx    r0, r7, r4
40:     sthx    r0, r7, r3
        addi    r7, r7, 2
2:      bf      cr7*4+1, 3f
41:     lwzx    r0, r7, r4
42:     stwx    r0, r7, r3
3:      mtcrf   0x01, r5                # the bits of what is left
        add     r4, r6, r4
        add     r3, r6, r3
        b       .Ldst_aligned

.Lshort_copy:                           # n < 16, cr7 = its bits
        bf      cr7*4+0, 1f
43:     lwz     r0, 0(r4)
44:     lwz     r9, 4(r4)
        addi    r4, r4, 8
45:     stw     r0, 0(r3)
46:     stw     r9, 4(r3)
        addi    r3, r3, 8
1:      bf      cr7*4+1, 2f
47:     lwz     r0, 0(r4)
        addi    r4, r4, 4
48:     stw     r0, 0(r3)
        addi    r3, r3, 4
2:      bf      cr7*4+2, 3f
49:     lhz     r0, 0(r4)
        addi    r4, r4, 2
50:     sth     r0, 0(r3)
        addi    r3, r3, 2
3:      bf      cr7*4+3, 4f
51:     lbz     r0, 0(r4)
52:     stb     r0, 0(r3)
4:      li      r3, 0
        blr

/*
 * Fixups for loads: make r3 the first destination byte not written yet, by what the
 * faulting load's position says about r3, then copy on byte by byte.
 */
139:                                    # lhzx, lwzx of the head: r3 + the offset
141:    add     r3, r3, r7
        b       .Lload_fault
127:                                    # +24: the odd shifting start, after r3 -= 8
128:    addi    r3, r3, 8
111:                                    # +16: r3 = to - 16, nothing stored yet
121:
122:
123:
124:
125:
126:
114:                                    # +16: an ldu after "std 8(r3)" (or first, r3 =
131:    addi    r3, r3, 8               #      to - 16)
112:                                    # +8: an ld after "stdu 16(r3)" (or first, r3 =
129:    addi    r3, r3, 8               #     to - 8)
117:                                    # +0: r3 is the first byte not written (the tails,
136:                                    #     the head's first byte, the short copy)
137:
143:
144:
147:
149:
151:
.Lload_fault:
        ld      r6, -24(r1)
        ld      r4, -16(r1)
        ld      r5, -8(r1)
        subf    r6, r6, r3              # bytes copied
        add     r4, r4, r6
        subf    r5, r6, r5              # bytes left (at least the one that faulted)
        mtctr   r5
53:     lbz     r0, 0(r4)               # as far as the bytes go
        addi    r4, r4, 1
54:     stb     r0, 0(r3)
        addi    r3, r3, 1
        bdnz    53b
        li      r3, 0                   # all of them after all
        blr

153:    mfctr   r5                      # the byte copy faulted: ctr bytes not copied,
        li      r0, 0                   # to be zeroed from r3
        mr      r4, r3
        mr      r3, r5                  # the return value
1:      andi.   r9, r4, 7               # bytes up to an 8-byte boundary
        beq     2f
55:     stb     r0, 0(r4)
        addic.  r5, r5, -1
        addi    r4, r4, 1
        bne     1b
        blr
2:      cmpldi  cr1, r5, 8
        srdi    r9, r5, 3
        andi.   r5, r5, 7
        blt     cr1, 4f
        mtctr   r9
3:
56:     std     r0, 0(r4)               # doublewords
        addi    r4, r4, 8
        bdnz    3b
4:      beqlr
        mtctr   r5
5:
57:     stb     r0, 0(r4)               # and the last bytes
        addi    r4, r4, 1
        bdnz    5b
        blr

/*
 * Fixups for stores: make r3 the address of the faulting store; everything from there on
 * was not copied.
 */
140:                                    # sthx, stwx of the head: r3 + the offset
142:    add     r3, r3, r7
        b       .Lstore_fault
135:    addi    r3, r3, 8               # +24: std 24(r3)
115:                                    # +16: stdu 16(r3), std 16(r3)
132:
134:    addi    r3, r3, 8
113:                                    # +8: std 8(r3)
116:
130:
133:    addi    r3, r3, 4
146:    addi    r3, r3, 4               # +4: stw 4(r3)
118:                                    # +0: at r3 (tails, head byte, short copy, the
119:                                    #     byte copy's stb)
120:
138:
145:
148:
150:
152:
154:
.Lstore_fault:
        ld      r6, -24(r1)
        ld      r5, -8(r1)
        add     r6, r6, r5              # to + n
        subf    r3, r3, r6              # bytes not copied
155:
156:
157:
        blr

/*
 * The whole page, page aligned: six cache lines at a time. r3 = to - 8 throughout, so
 * that a stdu at the first line steps it; r4 = from, then one doubleword on.
 */
.Lcopy_page:
        std     r14, -32(r1)            # r14-r25 below the saved arguments
        std     r15, -40(r1)
        std     r16, -48(r1)
        std     r17, -56(r1)
        std     r18, -64(r1)
        std     r19, -72(r1)
        std     r20, -80(r1)
        std     r21, -88(r1)
        std     r22, -96(r1)
        std     r23, -104(r1)
        std     r24, -112(r1)
        std     r25, -120(r1)
        li      r5, 4096/32 - 1         # 32-byte units; 24 per block, 7 left for the end
        addi    r3, r3, -8
        li      r0, 5                   # main-loop trips per block
.Lpage_block:
        addi    r5, r5, -24
        mtctr   r0
200:    ld      r19, 640(r4)            # doubleword 0 of lines 5..0
201:    ld      r18, 512(r4)
202:    ld      r17, 384(r4)
203:    ld      r16, 256(r4)
204:    ld      r15, 128(r4)
205:    ld      r14, 0(r4)
206:    ld      r25, 648(r4)            # doubleword 1 of lines 5..0
207:    ld      r24, 520(r4)
208:    ld      r23, 392(r4)
209:    ld      r22, 264(r4)
210:    ld      r21, 136(r4)
211:    ldu     r20, 8(r4)
        cmpwi   r5, 24                  # another block after this one?
.Lpage_six:
212:    std     r19, 648(r3)            # doubleword j of lines 5..0
213:    std     r18, 520(r3)
214:    std     r17, 392(r3)
215:    std     r16, 264(r3)
216:    std     r15, 136(r3)
217:    std     r14, 8(r3)
218:    ld      r11, 648(r4)            # doubleword j+2
219:    ld      r10, 520(r4)
220:    ld      r9, 392(r4)
221:    ld      r8, 264(r4)
222:    ld      r7, 136(r4)
223:    ld      r6, 8(r4)
224:    std     r25, 656(r3)            # doubleword j+1
225:    std     r24, 528(r3)
226:    std     r23, 400(r3)
227:    std     r22, 272(r3)
228:    std     r21, 144(r3)
229:    std     r20, 16(r3)
230:    ld      r19, 656(r4)            # doubleword j+3
231:    ld      r18, 528(r4)
232:    ld      r17, 400(r4)
233:    ld      r16, 272(r4)
234:    ld      r15, 144(r4)
235:    ld      r14, 16(r4)
236:    std     r11, 664(r3)            # doubleword j+2, then r3 += 24
237:    std     r10, 536(r3)
238:    std     r9, 408(r3)
239:    std     r8, 280(r3)
240:    std     r7, 152(r3)
241:    stdu    r6, 24(r3)
242:    ld      r25, 664(r4)            # doubleword j+4, then r4 += 24
243:    ld      r24, 536(r4)
244:    ld      r23, 408(r4)
245:    ld      r22, 280(r4)
246:    ld      r21, 152(r4)
247:    ldu     r20, 24(r4)
        bdnz    .Lpage_six
248:    std     r19, 648(r3)            # doubleword 15 of lines 5..0
249:    std     r18, 520(r3)
250:    std     r17, 392(r3)
251:    std     r16, 264(r3)
252:    std     r15, 136(r3)
253:    std     r14, 8(r3)
        addi    r4, r4, 640             # the next six lines
        addi    r3, r3, 648
        bge     .Lpage_block
        mtctr   r5                      # the last 256 bytes: 7 trips between
254:    ld      r7, 0(r4)               # three loads before
255:    ld      r8, 8(r4)
256:    ldu     r9, 16(r4)
1:
257:    ld      r10, 8(r4)
258:    std     r7, 8(r3)
259:    ld      r7, 16(r4)
260:    std     r8, 16(r3)
261:    ld      r8, 24(r4)
262:    std     r9, 24(r3)
263:    ldu     r9, 32(r4)
264:    stdu    r10, 32(r3)
        bdnz    1b
265:    ld      r10, 8(r4)              # and one load and four stores after
266:    std     r7, 8(r3)
267:    std     r8, 16(r3)
268:    std     r9, 24(r3)
269:    std     r10, 32(r3)
        ld      r14, -32(r1)
        ld      r15, -40(r1)
        ld      r16, -48(r1)
        ld      r17, -56(r1)
        ld      r18, -64(r1)
        ld      r19, -72(r1)
        ld      r20, -80(r1)
        ld      r21, -88(r1)
        ld      r22, -96(r1)
        ld      r23, -104(r1)
        ld      r24, -112(r1)
        ld      r25, -120(r1)
        li      r3, 0
        blr

/* a fault in the page loop: put r14-r25 back and copy the page with the general loop */
199:    ld      r14, -32(r1)
        ld      r15, -40(r1)
        ld      r16, -48(r1)
        ld      r17, -56(r1)
        ld      r18, -64(r1)
        ld      r19, -72(r1)
        ld      r20, -80(r1)
        ld      r21, -88(r1)
        ld      r22, -96(r1)
        ld      r23, -104(r1)
        ld      r24, -112(r1)
        ld      r25, -120(r1)
        ld      r3, -24(r1)
        ld      r4, -16(r1)
        li      r5, 4096
        mtcrf   0x01, r5                # cr7 = 0 (cr1 still says "not below 16")
        b       .Ldst_aligned

/* (faulting instruction, fixup) */
        .section __ex_table, "a"
        .align  2
        .long   11b, 111b
        .long   12b, 112b
        .long   13b, 113b
        .long   14b, 114b
        .long   15b, 115b
        .long   16b, 116b
        .long   17b, 117b
        .long   18b, 118b
        .long   19b, 119b
        .long   20b, 120b
        .long   21b, 121b
        .long   22b, 122b
        .long   23b, 123b
        .long   24b, 124b
        .long   25b, 125b
        .long   26b, 126b
        .long   27b, 127b
        .long   28b, 128b
        .long   29b, 129b
        .long   30b, 130b
        .long   31b, 131b
        .long   32b, 132b
        .long   33b, 133b
        .long   34b, 134b
        .long   35b, 135b
        .long   36b, 136b
        .long   37b, 137b
        .long   38b, 138b
        .long   39b, 139b
        .long   40b, 140b
        .long   41b, 141b
        .long   42b, 142b
        .long   43b, 143b
        .long   44b, 144b
        .long   45b, 145b
        .long   46b, 146b
        .long   47b, 147b
        .long   48b, 148b
        .long   49b, 149b
        .long   50b, 150b
        .long   51b, 151b
        .long   52b, 152b
        .long   53b, 153b
        .long   54b, 154b
        .long   55b, 155b
        .long   56b, 156b
        .long   57b, 157b
        .long   200b, 199b, 201b, 199b, 202b, 199b, 203b, 199b, 204b, 199b, 205b, 199b
        .long   206b, 199b, 207b, 199b, 208b, 199b, 209b, 199b, 210b, 199b, 211b, 199b
        .long   212b, 199b, 213b, 199b, 214b, 199b, 215b, 199b, 216b, 199b, 217b, 199b
        .long   218b, 199b, 219b, 199b, 220b, 199b, 221b, 199b, 222b, 199b, 223b, 199b
        .long   224b, 199b, 225b, 199b, 226b, 199b, 227b, 199b, 228b, 199b, 229b, 199b
        .long   230b, 199b, 231b, 199b, 232b, 199b, 233b, 199b, 234b, 199b, 235b, 199b
        .long   236b, 199b, 237b, 199b, 238b, 199b, 239b, 199b, 240b, 199b, 241b, 199b
        .long   242b, 199b, 243b, 199b, 244b, 199b, 245b, 199b, 246b, 199b, 247b, 199b
        .long   248b, 199b, 249b, 199b, 250b, 199b, 251b, 199b, 252b, 199b, 253b, 199b
        .long   254b, 199b, 255b, 199b, 256b, 199b, 257b, 199b, 258b, 199b, 259b, 199b
        .long   260b, 199b, 261b, 199b, 262b, 199b, 263b, 199b, 264b, 199b, 265b, 199b
        .long   266b, 199b, 267b, 199b, 268b, 199b, 269b, 199b
        .previous
