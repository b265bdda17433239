/*
 * The 64-bit PowerPC hashed page table (HTAB) management of Linux 2.6 on POWER4 (no
 * hypervisor): put an HPTE into a PTE group, and take one out again with the tlbie sequence.
 *
 * Models Linux 2.6.0-2.6.8 arch/ppc64/mm/hash_native.c (later
 * arch/powerpc/mm/book3s64/hash_native.c) and its callers:
 *   hpte_insert       native_hpte_insert: the first HPTE of the group with V clear gets
 *                     doubleword 1 (RPN | flags), eieio (so that doubleword 1 is visible
 *                     before the valid bit), then doubleword 0 (AVPN = va >> 23, bolted, H,
 *                     V), ptesync; returns the slot in the group | secondary << 3, or -1
 *                     when all eight are valid;
 *   hpte_invalidate   native_hpte_invalidate: if the HPTE at `slot` is valid and its AVPN is
 *                     va >> 23, clear doubleword 0; in either case ("even if we miss, we need
 *                     to invalidate the TLB") the tlbie sequence of include/asm-ppc64/mmu.h
 *                     tlbie(): ptesync; tlbie (the VA with its top 16 bits and page offset
 *                     cleared); eieio; tlbsync; ptesync;
 *   hash_insert       what __hash_page (arch/ppc64/mm/hash_low.S) does around it: the hash
 *                     (VSID & 0x7fffffffff) XOR page index, hpte_insert into the primary
 *                     group, else into the secondary (hash complemented);
 *   flush_hash_page   arch/ppc64/mm/hash_utils.c flush_hash_page: the slot from the hash, the
 *                     "secondary" bit and the index in the group that hash_insert returned
 *                     (Linux keeps them in the Linux PTE, _PAGE_SECONDARY / _PAGE_GROUP_IX:
 *                     Mackerras 2003 on the 64-bit kernel's spare PTE bits), then
 *                     hpte_invalidate.
 * Each holds the HPTE's lock bit (HPTE_LOCK_BIT 3 of doubleword 0, as pSeries_lock_hpte:
 * test_and_set_bit, then a plain-load spin while another CPU holds it) while it looks at
 * and changes the HPTE; with SMP = 1 (defined by the loader) the tlbie sequence is under
 * the machine-wide tlbie lock (pSeries_tlbie_lock, its address in htab_data).
 * With LPAR = 1 (a logical partition: arch/ppc64/kernel/pSeries_lpar.c of March 2002) the
 * insert and the invalidate are hypervisor calls, H_ENTER and H_REMOVE: the hypervisor's
 * work on the table is the code below, each call's own cost plpar_hcall (at the end of
 * this file: a loop of HCALL_LOOPS passes), the tlbie under the hypervisor's tlbie lock
 * (the TLBIE_LOCK word); with
 * LPAR_READS (the backend of 13 March 2002) each slot looked at is read with H_READ first;
 * with LPAR_TLBIE_LOCK (the rework of 26 March) the kernel holds pSeries_lpar_tlbie_lock
 * around H_REMOVE.
 * Written for this book from the algorithm, not copied. Differences from the kernel: no
 * eviction when both groups
 * are full (hash_insert returns -1 where the kernel would call native_hpte_remove and
 * retry; hash_low_64.S, assembled before this file, has the kernel's hash_page with
 * it); 4 KB pages only (no L bit); the caller gives the virtual address va = VSID << 28 |
 * (EA & 0x0fffffff), where the kernel computes it from get_vsid / get_kernel_vsid; the
 * table's address and hash mask are read from htab_data at the end of this file (Linux's
 * htab_data.htab and .htab_hash_mask), which the loader fills in.
 *
 * HPTE format (16 bytes; QEMU target/ppc/mmu-hash64.h, Linux include/asm-ppc64/mmu.h):
 *   doubleword 0: AVPN << 7 | SW (lock 0x08, bolted 0x10) | L 0x04 | H 0x02 | V 0x01
 *   doubleword 1: RPN << 12 | AC R C W I M G (0x3f8) | N 0x04 | PP 0x03
 */
        .ifndef SMP
        .equ    SMP, 0                      # one CPU, unless the loader defines SMP = 1
        .endif
        .ifndef GLOBAL_LOCK
        .equ    GLOBAL_LOCK, 0              # 2.5/2.6: the per-HPTE lock bit (1: 2.4's lock)
        .endif
        .ifndef TLBIE_LOCK
        .equ    TLBIE_LOCK, SMP             # the tlbie lock (2.4: hash_table_lock does it)
        .endif
        .ifndef LPAR
        .equ    LPAR, 0                     # 1: on a logical partition, hypervisor calls
        .endif
        .ifndef LPAR_READS
        .equ    LPAR_READS, 0               # 1: the March 13 2002 LPAR backend's H_READs
        .endif
        .ifndef LPAR_TLBIE_LOCK
        .equ    LPAR_TLBIE_LOCK, 0          # 1: pSeries_lpar_tlbie_lock around H_REMOVE
        .endif
        .equ    HPTE_V_VALID, 0x1
        .equ    HPTE_FLAGS, 0x3ff           # the 10 flag bits of doubleword 1
        .equ    HPTE_LOCK, 0x8              # HPTE_LOCK_BIT 3 of doubleword 0 (software use)

# the frame of a hypervisor call: LR saved and a frame made as the kernel's C caller
# (pSeries_lpar.c) did around plpar_hcall; which call it is, is said where it is used
        .macro  HCALL_FRAME
        mflr    r0
        std     r0, 16(r1)
        stdu    r1, -112(r1)
        bl      plpar_hcall
        addi    r1, r1, 112
        ld      r0, 16(r1)
        mtlr    r0
        .endm

/* hpte_insert(hpte_group, va, prpn, secondary, hpteflags, bolted): hpte_group is the
   index of the group's first HPTE (hash & htab_hash_mask) * 8 */
        .globl  hpte_insert
hpte_insert:
        .if LPAR
        HCALL_FRAME                         # H_ENTER: plpar_hcall
        .endif
        lis     r9, htab_data@h
        ori     r9, r9, htab_data@l
        ld      r9, 0(r9)                   # the HTAB
        sldi    r10, r3, 4
        add     r10, r9, r10                # r10: hptep, 16 bytes an HPTE
        li      r11, 0                      # r11: i
        li      r0, 8
        mtctr   r0
1:
        .if LPAR_READS
        HCALL_FRAME                         # H_READ of this slot: plpar_hcall
        .endif
        ld      r12, 0(r10)                 # a free slot: V clear?
        andi.   r12, r12, HPTE_V_VALID
        bne     3f
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
.Lhpte_lock_4:
        .if SMP
        eieio                               # test_and_set_bit: EIEIO_ON_SMP
        .endif
40:     ldarx   r12, 0, r10                 # lock_hpte: test_and_set_bit(HPTE_LOCK_BIT)
        ori     r0, r12, HPTE_LOCK
        stdcx.  r0, 0, r10
        bne-    40b
        .if SMP
        isync                               # ISYNC_ON_SMP
        .endif
        andi.   r0, r12, HPTE_LOCK
        beq+    42f                         # it was clear: the HPTE is ours
41:     ld      r12, 0(r10)                 # another CPU holds it: wait until it is clear
        andi.   r0, r12, HPTE_LOCK
        bne     41b
        b       40b
.Lhpte_lock_4_end:
        .endif
42:     ld      r12, 0(r10)                 # still free with the lock held?
        andi.   r12, r12, HPTE_V_VALID
        beq     2f
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
        lwsync                              # unlock_hpte: its stores before the release
43:     ldarx   r12, 0, r10                 # clear_bit(HPTE_LOCK_BIT)
        li      r0, HPTE_LOCK
        andc    r12, r12, r0
        stdcx.  r12, 0, r10
        bne-    43b
        .endif
3:      addi    r10, r10, 16
        addi    r11, r11, 1
        bdnz    1b
        li      r3, -1                      # the group is full
        blr
2:      sldi    r12, r5, 12                 # doubleword 1: RPN | flags
        andi.   r7, r7, HPTE_FLAGS
        or      r12, r12, r7
        std     r12, 8(r10)
        eieio                               # doubleword 1 before the valid bit
        srdi    r12, r4, 23                 # doubleword 0: AVPN = va >> 23 ...
        sldi    r12, r12, 7
        andi.   r6, r6, 1
        sldi    r0, r6, 1                   # ... H ...
        or      r12, r12, r0
        andi.   r8, r8, 1
        sldi    r0, r8, 4                   # ... bolted ...
        or      r12, r12, r0
        ori     r12, r12, HPTE_V_VALID      # ... V
        std     r12, 0(r10)                 # valid, and the lock bit clear: unlocked
        ptesync                             # the HPTE reaches the table walker
        sldi    r0, r6, 3
        or      r3, r11, r0                 # i | secondary << 3
        blr

/* hpte_invalidate(slot, va) -> 1 if it cleared the HPTE, 0 if the HPTE no longer matched */
        .globl  hpte_invalidate
hpte_invalidate:
        .if LPAR_TLBIE_LOCK
        lis     r8, htab_data@h          # spin_lock(&pSeries_lpar_tlbie_lock)
        ori     r8, r8, htab_data@l
        ld      r8, 40(r8)
.Llpar_tlbie_lock_1:
46:     lwarx   r0, 0, r8
        cmpwi   r0, 0
        bne-    46b
        li      r0, 1
        stwcx.  r0, 0, r8
        bne-    46b
        isync
.Llpar_tlbie_lock_1_end:
        .endif
        .if LPAR_READS
        HCALL_FRAME                         # H_READ of the HPTE: plpar_hcall
        .endif
        .if LPAR
        HCALL_FRAME                         # H_REMOVE: plpar_hcall
        .endif
        lis     r9, htab_data@h
        ori     r9, r9, htab_data@l
        ld      r9, 0(r9)
        sldi    r10, r3, 4
        add     r10, r9, r10                # r10: hptep
        srdi    r11, r4, 23                 # r11: the AVPN to find
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
.Lhpte_lock_5:
        .if SMP
        eieio                               # test_and_set_bit: EIEIO_ON_SMP
        .endif
40:     ldarx   r12, 0, r10                 # lock_hpte: test_and_set_bit(HPTE_LOCK_BIT)
        ori     r0, r12, HPTE_LOCK
        stdcx.  r0, 0, r10
        bne-    40b
        .if SMP
        isync                               # ISYNC_ON_SMP
        .endif
        andi.   r0, r12, HPTE_LOCK
        beq+    42f                         # it was clear: the HPTE is ours
41:     ld      r12, 0(r10)                 # another CPU holds it: wait until it is clear
        andi.   r0, r12, HPTE_LOCK
        bne     41b
        b       40b
.Lhpte_lock_5_end:
        .endif
42:     li      r3, 0
        ld      r12, 0(r10)
        andi.   r0, r12, HPTE_V_VALID
        beq     2f                          # not valid: nothing to clear
        srdi    r0, r12, 7
        cmpd    r0, r11
        bne     2f                          # another page's HPTE now: leave it
        li      r0, 0
        std     r0, 0(r10)                  # invalidate the HPTE (which unlocks it)
        li      r3, 1
        b       1f
2:
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
        lwsync                              # unlock_hpte: its stores before the release
43:     ldarx   r12, 0, r10                 # clear_bit(HPTE_LOCK_BIT)
        li      r0, HPTE_LOCK
        andc    r12, r12, r0
        stdcx.  r12, 0, r10
        bne-    43b
        .endif
1:      clrldi  r4, r4, 16                  # the TLB entry, hit or miss: va without its
        rldicr  r4, r4, 0, 51               # top 16 bits and its page offset
        .if TLBIE_LOCK
        lis     r9, htab_data@h             # spin_lock(&pSeries_tlbie_lock): one tlbie
        ori     r9, r9, htab_data@l         # in flight in the whole machine
        ld      r9, 16(r9)
.Ltlbie_lock_3:
44:     lwarx   r0, 0, r9
        cmpwi   r0, 0
        bne-    44b
        li      r0, 1
        stwcx.  r0, 0, r9
        bne-    44b
        isync
.Ltlbie_lock_3_end:
        .endif
        ptesync
        tlbie   r4
        eieio
        tlbsync
        ptesync
        .if TLBIE_LOCK
        lwsync                              # spin_unlock(&pSeries_tlbie_lock)
        li      r0, 0
        stw     r0, 0(r9)
        .endif
        .if LPAR_TLBIE_LOCK
        lwsync                              # spin_unlock(&pSeries_lpar_tlbie_lock)
        li      r0, 0
        stw     r0, 0(r8)
        .endif
        blr

/* hash_insert(va, prpn, hpteflags) -> i | secondary << 3, or -1 if both groups are full */
        .globl  hash_insert
hash_insert:
        mflr    r0
        std     r0, 16(r1)
        std     r28, -32(r1)
        std     r29, -24(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -144(r1)
        mr      r29, r3                     # va
        mr      r30, r4                     # prpn
        mr      r31, r5                     # hpteflags
        bl      hpt_hash
        mr      r28, r3                     # r28: the hash
        bl      group_of                    # the primary group
        mr      r4, r29
        mr      r5, r30
        li      r6, 0
        mr      r7, r31
        li      r8, 0
        bl      hpte_insert
        cmpdi   r3, -1
        bne     9f
        not     r3, r28                     # the secondary group
        bl      group_of
        mr      r4, r29
        mr      r5, r30
        li      r6, 1
        mr      r7, r31
        li      r8, 0
        bl      hpte_insert
9:      addi    r1, r1, 144
        ld      r0, 16(r1)
        mtlr    r0
        ld      r28, -32(r1)
        ld      r29, -24(r1)
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr

/* flush_hash_page(va, hidx): hidx as hash_insert returned it (i | secondary << 3) */
        .globl  flush_hash_page
flush_hash_page:
        mflr    r0
        std     r0, 16(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -128(r1)
        mr      r30, r3                     # va
        mr      r31, r4                     # hidx
        bl      hpt_hash
        andi.   r0, r31, 8                  # secondary: the complemented hash
        beq     1f
        not     r3, r3
1:      bl      group_of
        andi.   r0, r31, 7
        add     r3, r3, r0                  # slot = group + index in the group
        mr      r4, r30
        bl      hpte_invalidate
        addi    r1, r1, 128
        ld      r0, 16(r1)
        mtlr    r0
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr

/* hpt_hash(va): (VSID & 0x7fffffffff) ^ ((va >> 12) & 0xffff), VSID = va >> 28 */
hpt_hash:
        srdi    r4, r3, 28
        clrldi  r4, r4, 25                  # the low 39 bits of the VSID
        rldicl  r3, r3, 52, 48              # the page index
        xor     r3, r3, r4
        blr

/* group_of(hash): (hash & htab_hash_mask) * 8, the group's first HPTE index */
group_of:
        lis     r9, htab_data@h
        ori     r9, r9, htab_data@l
        ld      r9, 8(r9)
        and     r3, r3, r9
        sldi    r3, r3, 3
        blr

/* plpar_hcall(opcode, args...): the hypervisor call, as arch/ppc64/kernel/pSeries_hvCall.S
   (ppc64 of 15 February 2002, commit 88b42425d1 of the BitKeeper history) wraps it: CR
   saved, a 32-byte frame, `sc 1` (HSC, .long 0x44000022), the frame popped, CR restored.
   The call itself (the interrupt into hypervisor state, the hypervisor's checks, hrfid) is
   HCALL_LOOPS passes of a sixteen-cycle loop (.Lhcall_1): the profile's [hypervisor] hcall,
   an estimate. Differences: the hypervisor's work on the table runs in the callers
   (hpte_insert, hpte_invalidate, hpte_updatepp, hpte_remove, flush_hash_range), so
   nothing comes back through the out pointers (r8-r10, which are not stored or read); only
   r0 and r12 are used (the kernel's hcall may clobber every volatile register). */
        .if LPAR
        .globl  plpar_hcall
plpar_hcall:
        mfcr    r0
        std     r0, -8(r1)
        stdu    r1, -32(r1)
.Lhcall_1:
        lis     r12, htab_data@h            # sc 1 ... hrfid: HCALL_LOOPS passes
        ori     r12, r12, htab_data@l
        ld      r12, 32(r12)
90:     addic.  r12, r12, -1
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        nop
        bgt     90b
.Lhcall_1_end:
        ld      r1, 0(r1)
        ld      r0, -8(r1)
        mtcrf   0xff, r0
        blr
        .endif

/* htab_data: the HTAB's address, htab_hash_mask (PTEGs - 1) and, on several CPUs, the
   tlbie lock's address (2.5/2.6) or hash_table_lock's (2.4), filled in by the loader */
        .align  3
        .globl  htab_data
htab_data:
        .quad   0
        .quad   0
        .quad   0                           # SMP: the address of pSeries_tlbie_lock
        .quad   0                           # 2.4 SMP: the address of hash_table_lock
        .quad   0                           # LPAR: HCALL_LOOPS, a hypervisor call's passes
        .quad   0                           # LPAR, 2.5: the address of pSeries_lpar_tlbie_lock
