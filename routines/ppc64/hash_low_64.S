/*
 * The 64-bit PowerPC kernel's side of the hash table: fill an HPTE from a Linux PTE on a
 * hash miss, and invalidate HPTEs straight from the slot the Linux PTE records.
 *
 * Models Linux 2.6.0-2.6.3 ppc64 (POWER4, no hypervisor); SMP = 1 (the loader defines
 * it on several CPUs) assembles the SMP build: the tlbie lock (pSeries_tlbie_lock, its
 * address in htab_data) around each tlbie sequence, once per flush_hash_range batch, and
 * the eieio / isync of the bit operations. Every HPTE operation (hpte_updatepp,
 * hpte_remove, flush_hash_range's invalidations, hash_native_64.S's hpte_insert and
 * hpte_invalidate) holds the HPTE's lock bit (HPTE_LOCK_BIT 3: pSeries_lock_hpte, a
 * test_and_set_bit on doubleword 0, spinning on a plain load while another CPU holds
 * it; pSeries_unlock_hpte: lwsync, clear_bit; storing a new doubleword 0 unlocks too):
 *   hash_page          arch/ppc64/mm/hash_utils.c hash_page + find_linux_pte +
 *                      __hash_page: walk the three-level Linux page table (pgd, pmd, PTE
 *                      page of 512 eight-byte PTEs), check the access, compute
 *                      new = old | _PAGE_ACCESSED (| _PAGE_DIRTY for a store) and the PP
 *                      bits (computeHptePP: 2, or 3 unless the page is writable and dirty);
 *                      if the old PTE has _PAGE_HASHPTE, update the PP bits of the HPTE at
 *                      its recorded slot (hpte_updatepp), else insert an HPTE into the
 *                      primary group, then the secondary; both full: hpte_remove evicts
 *                      one from the secondary group (the primary when the timebase is odd)
 *                      and the insertion is retried; the Linux PTE then records
 *                      _PAGE_HASHPTE, _PAGE_SECONDARY and the slot (_PAGE_GROUP_IX);
 *   hpte_updatepp      arch/ppc64/kernel/pSeries_htab.c pSeries_hpte_updatepp: new PP bits
 *                      if the slot still holds our AVPN, then the tlbie sequence either way;
 *   hpte_remove        pSeries_hpte_remove: from a "random" slot of the group (the
 *                      timebase's low bits), the first valid non-bolted HPTE is cleared,
 *                      without a tlbie, as the kernel does;
 *   flush_hash_page_lpte  hash_utils.c flush_hash_page(context, ea, pte): the VSID, the
 *                      slot from the PTE's _PAGE_SECONDARY / _PAGE_GROUP_IX, then
 *                      hpte_invalidate (hash_native_64.S): one HPTE read, no PTEG search;
 *   flush_tlb_page     arch/ppc64/mm/init.c local_flush_tlb_page, user addresses: if the PTE
 *                      has _PAGE_HASHPTE, clear the HPTE flags and flush_hash_page;
 *   flush_hash_range   pSeries_flush_hash_range: invalidate each batch entry at its slot,
 *                      then ONE ptesync; tlbie x N; eieio; tlbsync; ptesync;
 *   flush_tlb_range    init.c __flush_tlb_range (the "original" of Mackerras 2003 Table 5):
 *                      scan the Linux PTEs of [start, end); each with _PAGE_HASHPTE has its
 *                      HPTE flags cleared atomically and goes into the per-CPU batch
 *                      (ppc64_tlb_batch, PPC64_TLB_BATCH_NR = 192 entries), which
 *                      flush_hash_range empties when full and at the end.
 * Written for this book from the algorithm, not copied. Differences from the kernel: plain
 * functions (arguments in r3-r7; the kernel's hash_page is reached from the DSI/ISI
 * prologue, and most of this is C there; the caller holds the mm's page_table_lock, as
 * hash_page does); every flush uses the global tlbie (the kernel uses tlbiel when the mm has
 * run on this CPU only and the CPU has it); the timebase that picks an eviction victim is
 * a counter in kernel memory (KVARS), so that runs repeat; the lazy I-cache flush through
 * the no-execute bit (__hash_page, CPU_FTR_NOEXECUTE) is left out; 4 KB pages only.
 *
 * Status codes, for the model's counts. hash_page: 0 new HPTE in the primary group, 1 in
 * the secondary, 2 after an eviction, 3 the existing HPTE updated, 16 refused (no PTE or
 * the access is not allowed: do_page_fault's turn). The flush routines return, packed:
 * HPTEs invalidated (bits 0-15), tlbie issued (16-31), tlbie sequences, i.e. tlbsync
 * (32-47).
 *
 * Linux PTE (include/asm-ppc64/pgtable.h, 2.6.0): page number << PTE_SHIFT (16) | PRESENT
 * 0x1 | USER 0x2 | RW 0x4 | G M I W 0x8-0x40 | DIRTY 0x80 | ACCESSED 0x100 | FILE 0x200 |
 * HASHPTE 0x400 | EXEC 0x800 | GROUP_IX 0x7000 | SECONDARY 0x8000. The pgd and pmd have
 * four-byte entries: the pgd entry is the pmd page's page number (PGDIR_SHIFT 31), the pmd
 * entry the PTE page's page number << 2 (PMD_SHIFT 21).
 *
 * With HASH_TABLE_LOCK (2.4 on several CPUs) hash_page and flush_hash_page_lpte take
 * hash_table_lock; FLUSH_HASH_LOCK = 0 leaves the flush out of it (a hypothesis of the
 * book, no kernel's: emu.kernel.ppc64 hash_lock="global_hash"), its tlbie then under
 * the tlbie lock (TLBIE_LOCK = 1).
 *
 * Assembled in one source with hash_native_64.S (hpte_insert, hpte_invalidate,
 * flush_hash_page, hpt_hash, group_of, htab_data), which comes after this file; the loader
 * defines KVARS (a doubleword: the pseudo-timebase) first.
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
        .ifndef HASH_TABLE_LOCK
        .equ    HASH_TABLE_LOCK, 0          # 2.4 on several CPUs: the global lock's spins
        .endif
        .ifndef FLUSH_HASH_LOCK
        .equ    FLUSH_HASH_LOCK, HASH_TABLE_LOCK    # 0: flushes leave hash_table_lock alone
        .endif
        .equ    _PAGE_PRESENT, 0x001
        .equ    _PAGE_USER, 0x002
        .equ    _PAGE_RW, 0x004
        .equ    _PAGE_DIRTY, 0x080
        .equ    _PAGE_ACCESSED, 0x100
        .equ    _PAGE_HASHPTE, 0x400
        .equ    _PAGE_SECONDARY, 0x8000
        .equ    _PAGE_HPTEFLAGS, 0xf400     # HASHPTE | SECONDARY | GROUP_IX
        .equ    PTE_SHIFT, 16
        .equ    HPTE_COPY, 0x1f8            # R C W I M G: copied from the Linux PTE
        .equ    HPTE_V_BOLTED, 0x10
        .equ    HPTE_LOCK, 0x8              # HPTE_LOCK_BIT 3 of doubleword 0 (software use)
        .equ    PGDIR_SHIFT, 31
        .equ    PMD_SHIFT, 21
        .equ    PTRS_PER_PGD, 1024
        .equ    BATCH_NR, 192               # PPC64_TLB_BATCH_NR
        .equ    BATCH_ADDR, 1536            # the batch: pte[192], addr[192], vaddr[192]
        .equ    BATCH_VADDR, 3072

# the frame of a hypervisor call: LR saved and a frame made as the kernel's C caller
# (pSeries_lpar.c) did around plpar_hcall; which call it is, is said where it is used
# (purged at the end of this file: hash_native_64.S, assembled after it, defines its own)
        .macro  HCALL_FRAME
        mflr    r0
        std     r0, 16(r1)
        stdu    r1, -112(r1)
        bl      plpar_hcall
        addi    r1, r1, 112
        ld      r0, 16(r1)
        mtlr    r0
        .endm

/* get_vsid(context, ea): ((ESID & 0x1fff) << 15 | context) * VSID_RANDOMIZER, 36 bits
   (include/asm-ppc64/mmu_context.h, 2.6.0) */
        .globl  get_vsid
get_vsid:
        rldicl  r4, r4, 36, 51              # (ea >> 28) & 0x1fff
        sldi    r4, r4, 15                  # * LAST_USER_CONTEXT
        or      r3, r3, r4
        lis     r4, 0x9
        ori     r4, r4, 0xe377
        sldi    r4, r4, 16
        ori     r4, r4, 0x9b97              # VSID_RANDOMIZER = 42470972311
        mulld   r3, r3, r4
        clrldi  r3, r3, 28                  # VSID_MASK
        blr

/* pte_page_of(pgdir, ea) -> r3: the PTE page for ea (0: none); r5: where that answer ends
   (the next PTE page's boundary, or the next pgd entry's when there is no pmd page) */
pte_page_of:
        srdi    r5, r4, PGDIR_SHIFT
        andi.   r5, r5, PTRS_PER_PGD-1
        sldi    r6, r5, 2
        lwzx    r6, r3, r6                  # pgd entry: the pmd page's number
        cmpwi   r6, 0
        bne     1f
        addi    r5, r5, 1
        sldi    r5, r5, PGDIR_SHIFT
        li      r3, 0
        blr
1:      sldi    r6, r6, 12                  # the pmd page
        rldicl  r7, r4, 64-PMD_SHIFT, 54    # (ea >> 21) & 0x3ff
        sldi    r7, r7, 2
        lwzx    r7, r6, r7                  # pmd entry: the PTE page's number << 2
        srdi    r5, r4, PMD_SHIFT
        addi    r5, r5, 1
        sldi    r5, r5, PMD_SHIFT
        srwi    r7, r7, 2
        sldi    r3, r7, 12
        blr

/* find_linux_pte(pgdir, ea) -> the Linux PTE's address, 0 if no PTE page */
find_linux_pte:
        mflr    r8
        bl      pte_page_of
        mtlr    r8
        cmpdi   r3, 0
        beq     9f
        rldicl  r5, r4, 52, 55              # (ea >> 12) & 0x1ff
        sldi    r5, r5, 3
        add     r3, r3, r5
9:      blr

/* slot_of(va, lpte) -> the HPTE's index in the table: the group the PTE's
   _PAGE_SECONDARY names, + _PAGE_GROUP_IX */
slot_of:
        mflr    r11
        mr      r12, r4
        bl      hpt_hash
        andi.   r0, r12, _PAGE_SECONDARY
        beq     1f
        not     r3, r3
1:      bl      group_of
        rldicl  r0, r12, 52, 61             # (lpte >> 12) & 7
        add     r3, r3, r0
        mtlr    r11
        blr

/* pseudo_tb() -> the "timebase": a counter, incremented per read */
pseudo_tb:
        lis     r9, KVARS@h
        ori     r9, r9, KVARS@l
        ld      r3, 0(r9)
        addi    r0, r3, 1
        std     r0, 0(r9)
        blr

/* hash_page(access, ea, pgdir, context) -> status; access = _PAGE_RW for a store, else 0 */
        .globl  hash_page
hash_page:
        mflr    r0
        std     r0, 16(r1)
        std     r20, -96(r1)
        std     r21, -88(r1)
        std     r22, -80(r1)
        std     r23, -72(r1)
        std     r24, -64(r1)
        std     r25, -56(r1)
        std     r26, -48(r1)
        std     r27, -40(r1)
        std     r28, -32(r1)
        std     r29, -24(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -208(r1)
        ori     r30, r3, _PAGE_PRESENT|_PAGE_USER   # what the Linux PTE must allow
        mr      r31, r4                     # ea
        mr      r29, r6                     # context
        mr      r3, r5
        mr      r4, r31
        bl      find_linux_pte
        mr.     r28, r3                     # r28: ptep
        beq-    90f
        mr      r3, r29
        mr      r4, r31
        bl      get_vsid
        sldi    r3, r3, 28
        clrldi  r0, r31, 36
        or      r27, r3, r0                 # r27: va = VSID << 28 | (ea & 0x0fffffff)
        ld      r26, 0(r28)                 # r26: the old Linux PTE
        andc.   r0, r30, r26                # a required bit missing?
        bne-    90f
        .if HASH_TABLE_LOCK
        lis     r9, htab_data@h             # spin_lock(&hash_table_lock), 2.4's global
        ori     r9, r9, htab_data@l         # lock of the whole hash table (htab.c)
        ld      r9, 24(r9)
.Lhash_table_lock_1:
80:     lwarx   r0, 0, r9
        cmpwi   r0, 0
        bne-    80b
        li      r0, 1
        stwcx.  r0, 0, r9
        bne-    80b
        isync
.Lhash_table_lock_1_end:
        ld      r26, 0(r28)                 # old_pte = *ptep, under the lock
        .endif
        ori     r25, r26, _PAGE_ACCESSED    # r25: the new Linux PTE
        andi.   r0, r30, _PAGE_RW
        beq     1f
        ori     r25, r25, _PAGE_DIRTY
1:      srdi    r0, r25, 2                  # PP = USER | !(RW && DIRTY) (computeHptePP)
        srdi    r9, r25, 7
        and     r0, r0, r9
        andi.   r0, r0, 1
        xori    r0, r0, 1
        andi.   r9, r25, _PAGE_USER
        srdi    r10, r9, 1
        and     r0, r0, r10
        or      r24, r9, r0                 # r24: newpp
        andi.   r0, r26, _PAGE_HASHPTE
        beq+    20f
        mr      r3, r27                     # an HPTE may exist: at the slot the PTE records
        mr      r4, r26
        bl      slot_of
        mr      r4, r24
        mr      r5, r27
        bl      hpte_updatepp
        cmpdi   r3, -1
        beq     15f
        std     r25, 0(r28)
        li      r3, 3
        b       99f
15:     li      r0, 0                       # gone (evicted): forget it, insert afresh
        ori     r0, r0, _PAGE_HPTEFLAGS
        andc    r26, r26, r0
20:     mr      r3, r27
        bl      hpt_hash
        mr      r22, r3                     # r22: the hash
        srdi    r21, r26, PTE_SHIFT         # r21: the page number
        li      r23, 0                      # r23: 2 once something was evicted
        li      r0, 0
        ori     r0, r0, _PAGE_HPTEFLAGS
        andc    r25, r25, r0
        ori     r25, r25, _PAGE_HASHPTE
        andi.   r20, r25, HPTE_COPY
        or      r20, r20, r24               # r20: HPTE flags
21:     mr      r3, r22                     # the primary group
        bl      group_of
        mr      r4, r27
        mr      r5, r21
        li      r6, 0
        mr      r7, r20
        li      r8, 0
        bl      hpte_insert
        cmpdi   r3, -1
        bne+    30f
        not     r3, r22                     # the secondary group
        bl      group_of
        mr      r4, r27
        mr      r5, r21
        li      r6, 1
        mr      r7, r20
        li      r8, 0
        bl      hpte_insert
        cmpdi   r3, -1
        bne+    30f
        bl      pseudo_tb                   # both full: evict, then try again
        andi.   r0, r3, 1
        not     r3, r22                     # from the secondary group ...
        beq     22f
        mr      r3, r22                     # ... or, on an odd timebase, the primary
22:     bl      group_of
        bl      hpte_remove
        li      r23, 2
        b       21b
30:     sldi    r0, r3, 12                  # record the slot: SECONDARY | GROUP_IX
        andi.   r0, r0, _PAGE_HPTEFLAGS
        or      r25, r25, r0
        std     r25, 0(r28)
        srdi    r3, r3, 3                   # 0: primary, 1: secondary ...
        cmpdi   r23, 0
        beq     99f
        mr      r3, r23                     # ... 2: after an eviction
        b       99f
90:     li      r3, 16
99:
        .if HASH_TABLE_LOCK
        cmpdi   r3, 16                      # refused before the lock was taken
        beq     98f
        lis     r9, htab_data@h             # spin_unlock(&hash_table_lock)
        ori     r9, r9, htab_data@l
        ld      r9, 24(r9)
        lwsync
        li      r0, 0
        stw     r0, 0(r9)
98:
        .endif
        addi    r1, r1, 208
        ld      r0, 16(r1)
        mtlr    r0
        ld      r20, -96(r1)
        ld      r21, -88(r1)
        ld      r22, -80(r1)
        ld      r23, -72(r1)
        ld      r24, -64(r1)
        ld      r25, -56(r1)
        ld      r26, -48(r1)
        ld      r27, -40(r1)
        ld      r28, -32(r1)
        ld      r29, -24(r1)
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr

/* hpte_updatepp(slot, newpp, va) -> 0, or -1 if the slot no longer holds va's HPTE */
        .globl  hpte_updatepp
hpte_updatepp:
        .if LPAR_READS
        HCALL_FRAME                         # H_READ of the HPTE: plpar_hcall
        .endif
        .if LPAR
        HCALL_FRAME                         # H_PROTECT: plpar_hcall
        .endif
        lis     r9, htab_data@h
        ori     r9, r9, htab_data@l
        ld      r9, 0(r9)
        sldi    r10, r3, 4
        add     r10, r9, r10                # hptep
        srdi    r11, r5, 23                 # the AVPN to find
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
.Lhpte_lock_1:
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
.Lhpte_lock_1_end:
        .endif
42:     li      r3, -1
        ld      r12, 0(r10)
        andi.   r0, r12, 1
        beq     2f                          # not valid
        srdi    r0, r12, 7
        cmpd    r0, r11
        bne     2f                          # another page's HPTE now
        addi    r9, r10, 8
1:      ldarx   r12, 0, r9                  # set_pp_bit: the low three bits of doubleword 1
        rldimi  r12, r4, 0, 61
        stdcx.  r12, 0, r9
        bne-    1b
        li      r3, 0
2:
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
        lwsync                              # unlock_hpte: its stores before the release
43:     ldarx   r12, 0, r10                 # clear_bit(HPTE_LOCK_BIT)
        li      r0, HPTE_LOCK
        andc    r12, r12, r0
        stdcx.  r12, 0, r10
        bne-    43b
        .endif
        clrldi  r5, r5, 16                  # out of the TLB too, hit or miss
        rldicr  r5, r5, 0, 51
        .if TLBIE_LOCK
        lis     r9, htab_data@h             # spin_lock(&pSeries_tlbie_lock): one tlbie
        ori     r9, r9, htab_data@l         # sequence in flight in the whole machine
        ld      r9, 16(r9)
.Ltlbie_lock_1:
44:     lwarx   r0, 0, r9
        cmpwi   r0, 0
        bne-    44b
        li      r0, 1
        stwcx.  r0, 0, r9
        bne-    44b
        isync
.Ltlbie_lock_1_end:
        .endif
        ptesync
        tlbie   r5
        eieio
        tlbsync
        ptesync
        .if TLBIE_LOCK
        lwsync                              # spin_unlock(&pSeries_tlbie_lock)
        li      r0, 0
        stw     r0, 0(r9)
        .endif
        blr

/* hpte_remove(hpte_group) -> the slot cleared in the group, or -1 if all are bolted or free */
        .globl  hpte_remove
hpte_remove:
        .if LPAR
        HCALL_FRAME                         # H_REMOVE: plpar_hcall
        .endif
        mflr    r11
        mr      r12, r3
        bl      pseudo_tb
        mtlr    r11
        andi.   r10, r3, 7                  # the first slot to look at: "mftb() & 7"
        lis     r9, htab_data@h
        ori     r9, r9, htab_data@l
        ld      r9, 0(r9)
        sldi    r12, r12, 4
        add     r12, r9, r12                # the group's first HPTE
        li      r0, 8
        mtctr   r0
1:      sldi    r11, r10, 4
        ldx     r9, r12, r11
        andi.   r0, r9, 0x11                # V and not bolted?
        cmpdi   r0, 1
        bne     3f
        add     r7, r12, r11                # r7: hptep
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
.Lhpte_lock_2:
        .if SMP
        eieio                               # test_and_set_bit: EIEIO_ON_SMP
        .endif
40:     ldarx   r9, 0, r7                   # lock_hpte: test_and_set_bit(HPTE_LOCK_BIT)
        ori     r0, r9, HPTE_LOCK
        stdcx.  r0, 0, r7
        bne-    40b
        .if SMP
        isync                               # ISYNC_ON_SMP
        .endif
        andi.   r0, r9, HPTE_LOCK
        beq+    42f                         # it was clear: the HPTE is ours
41:     ld      r9, 0(r7)                   # another CPU holds it: wait until it is clear
        andi.   r0, r9, HPTE_LOCK
        bne     41b
        b       40b
.Lhpte_lock_2_end:
        .endif
42:     ld      r9, 0(r7)                   # still so with the lock held?
        andi.   r0, r9, 0x11
        cmpdi   r0, 1
        beq     2f
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
        lwsync                              # unlock_hpte: its stores before the release
43:     ldarx   r9, 0, r7                   # clear_bit(HPTE_LOCK_BIT)
        li      r0, HPTE_LOCK
        andc    r9, r9, r0
        stdcx.  r9, 0, r7
        bne-    43b
        .endif
3:      addi    r10, r10, 1
        andi.   r10, r10, 7
        bdnz    1b
        li      r3, -1
        blr
2:      li      r0, 0
        std     r0, 0(r7)                   # invalidated (and unlocked); no tlbie (as the
        mr      r3, r10                     # kernel)
        blr

/* flush_hash_page_lpte(context, ea, lpte) -> packed counts: flush_hash_page with the VSID
   computed here and the slot taken from the Linux PTE */
        .globl  flush_hash_page_lpte
flush_hash_page_lpte:
        mflr    r0
        std     r0, 16(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -128(r1)
        mr      r30, r4                     # ea
        mr      r31, r5                     # the Linux PTE
        bl      get_vsid
        sldi    r3, r3, 28
        clrldi  r0, r30, 36
        or      r3, r3, r0                  # va
        rldicl  r4, r31, 52, 60             # hidx = (lpte >> 12) & 0xf
        .if FLUSH_HASH_LOCK
        lis     r9, htab_data@h             # spin_lock(&hash_table_lock), 2.4's global
        ori     r9, r9, htab_data@l         # lock of the whole hash table (htab.c)
        ld      r9, 24(r9)
.Lhash_table_lock_2:
80:     lwarx   r0, 0, r9
        cmpwi   r0, 0
        bne-    80b
        li      r0, 1
        stwcx.  r0, 0, r9
        bne-    80b
        isync
.Lhash_table_lock_2_end:
        .endif
        bl      flush_hash_page
        .if FLUSH_HASH_LOCK
        lis     r9, htab_data@h             # spin_unlock(&hash_table_lock)
        ori     r9, r9, htab_data@l
        ld      r9, 24(r9)
        lwsync
        li      r0, 0
        stw     r0, 0(r9)
        .endif
        oris    r3, r3, 1                   # one tlbie ...
        li      r0, 1
        sldi    r0, r0, 32
        or      r3, r3, r0                  # ... in one sequence
        addi    r1, r1, 128
        ld      r0, 16(r1)
        mtlr    r0
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr

/* flush_tlb_page(context, pgdir, ea) -> packed counts */
        .globl  flush_tlb_page
flush_tlb_page:
        mflr    r0
        std     r0, 16(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -128(r1)
        mr      r30, r3                     # context
        mr      r31, r5                     # ea
        mr      r3, r4
        mr      r4, r5
        bl      find_linux_pte
        cmpdi   r3, 0
        beq     9f
1:      ldarx   r5, 0, r3                   # pte_update(ptep, _PAGE_HPTEFLAGS, 0)
        andi.   r0, r5, _PAGE_HASHPTE
        beq     9f                          # no HPTE was made: nothing to flush
        li      r0, 0
        ori     r0, r0, _PAGE_HPTEFLAGS
        andc    r6, r5, r0
        stdcx.  r6, 0, r3
        bne-    1b
        mr      r3, r30
        mr      r4, r31
        bl      flush_hash_page_lpte
        b       99f
9:      li      r3, 0
99:     addi    r1, r1, 128
        ld      r0, 16(r1)
        mtlr    r0
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr

/* flush_hash_range(context, batch, number) -> packed counts: each entry's HPTE cleared at
   its slot, then one tlbie sequence for all of them */
        .globl  flush_hash_range
flush_hash_range:
        mflr    r0
        std     r0, 16(r1)
        std     r24, -64(r1)
        std     r25, -56(r1)
        std     r26, -48(r1)
        std     r27, -40(r1)
        std     r28, -32(r1)
        std     r29, -24(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -176(r1)
        mr      r31, r3                     # context
        mr      r30, r4                     # the batch
        mr      r29, r5                     # number
        li      r28, 0                      # i
        li      r27, 0                      # HPTEs invalidated
        .if LPAR_TLBIE_LOCK                 # pSeries_lpar_flush_hash_range: the lock once
        lis     r9, htab_data@h          # spin_lock(&pSeries_lpar_tlbie_lock)
        ori     r9, r9, htab_data@l
        ld      r9, 40(r9)
.Llpar_tlbie_lock_2:
46:     lwarx   r0, 0, r9
        cmpwi   r0, 0
        bne-    46b
        li      r0, 1
        stwcx.  r0, 0, r9
        bne-    46b
        isync
.Llpar_tlbie_lock_2_end:
        .endif
1:      cmpd    r28, r29
        bge     5f
        sldi    r26, r28, 3
        ldx     r24, r30, r26               # batch->pte[i]
        addi    r9, r30, BATCH_ADDR
        ldx     r25, r9, r26                # batch->addr[i]
        mr      r3, r31
        mr      r4, r25
        bl      get_vsid
        sldi    r3, r3, 28
        clrldi  r0, r25, 36
        or      r25, r3, r0                 # va
        addi    r9, r30, BATCH_VADDR
        stdx    r25, r9, r26                # batch->vaddr[i]
        mr      r3, r25
        mr      r4, r24
        bl      slot_of
        lis     r9, htab_data@h
        ori     r9, r9, htab_data@l
        ld      r9, 0(r9)
        sldi    r10, r3, 4
        add     r10, r9, r10                # hptep: the one HPTE this entry can be
        .if LPAR
        bl      plpar_hcall                 # H_REMOVE of this entry (LR saved at entry)
        .endif
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
.Lhpte_lock_3:
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
.Lhpte_lock_3_end:
        .endif
42:     ld      r12, 0(r10)
        andi.   r0, r12, 1
        beq     3f                          # "even if we miss, we need to invalidate the TLB"
        srdi    r0, r12, 7
        srdi    r11, r25, 23
        cmpd    r0, r11
        bne     3f
        li      r0, 0
        std     r0, 0(r10)                  # invalidate the HPTE (which unlocks it)
        addi    r27, r27, 1
        b       2f
3:
        .if GLOBAL_LOCK == 0                # 2.4: hash_table_lock instead
        lwsync                              # unlock_hpte: its stores before the release
43:     ldarx   r12, 0, r10                 # clear_bit(HPTE_LOCK_BIT)
        li      r0, HPTE_LOCK
        andc    r12, r12, r0
        stdcx.  r12, 0, r10
        bne-    43b
        .endif
2:
        .if LPAR                            # the hypervisor's tlbie for this entry alone,
        clrldi  r4, r25, 16                 # under its own tlbie lock
        rldicr  r4, r4, 0, 51
        .if TLBIE_LOCK
        lis     r9, htab_data@h          # the hypervisor's tlbie lock
        ori     r9, r9, htab_data@l
        ld      r9, 16(r9)
.Ltlbie_lock_4:
46:     lwarx   r0, 0, r9
        cmpwi   r0, 0
        bne-    46b
        li      r0, 1
        stwcx.  r0, 0, r9
        bne-    46b
        isync
.Ltlbie_lock_4_end:
        .endif
        ptesync
        tlbie   r4
        eieio
        tlbsync
        ptesync
        .if TLBIE_LOCK
        lwsync                              # the hypervisor's tlbie lock released
        li      r0, 0
        stw     r0, 0(r9)
        .endif
        .endif
        addi    r28, r28, 1
        b       1b
5:
        .if LPAR
        .if LPAR_TLBIE_LOCK
        lis     r9, htab_data@h
        ori     r9, r9, htab_data@l
        ld      r9, 40(r9)
        lwsync                              # spin_unlock(&pSeries_lpar_tlbie_lock)
        li      r0, 0
        stw     r0, 0(r9)
        .endif
        .else
        .if TLBIE_LOCK
        lis     r24, htab_data@h            # spin_lock(&pSeries_tlbie_lock): one tlbie
        ori     r24, r24, htab_data@l       # sequence in flight in the whole machine
        ld      r24, 16(r24)
.Ltlbie_lock_2:
44:     lwarx   r0, 0, r24
        cmpwi   r0, 0
        bne-    44b
        li      r0, 1
        stwcx.  r0, 0, r24
        bne-    44b
        isync
.Ltlbie_lock_2_end:
        .endif
        ptesync                             # the table updates reach the walker, then ...
        li      r28, 0
6:      cmpd    r28, r29
        bge     7f
        sldi    r26, r28, 3
        addi    r9, r30, BATCH_VADDR
        ldx     r4, r9, r26
        clrldi  r4, r4, 16
        rldicr  r4, r4, 0, 51
        tlbie   r4                          # ... one tlbie per page ...
        addi    r28, r28, 1
        b       6b
7:      eieio                               # ... and one wait for all of them
        tlbsync
        ptesync
        .if TLBIE_LOCK
        lwsync                              # spin_unlock(&pSeries_tlbie_lock)
        li      r0, 0
        stw     r0, 0(r24)
        .endif
        .endif
        sldi    r3, r29, 16
        or      r3, r3, r27
        .if LPAR
        sldi    r0, r29, 32                 # a sequence per entry
        .else
        li      r0, 1
        sldi    r0, r0, 32
        .endif
        or      r3, r3, r0
        addi    r1, r1, 176
        ld      r0, 16(r1)
        mtlr    r0
        ld      r24, -64(r1)
        ld      r25, -56(r1)
        ld      r26, -48(r1)
        ld      r27, -40(r1)
        ld      r28, -32(r1)
        ld      r29, -24(r1)
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr

/* flush_tlb_range(context, pgdir, start, end, batch) -> packed counts (the scan) */
        .globl  flush_tlb_range
flush_tlb_range:
        mflr    r0
        std     r0, 16(r1)
        std     r22, -80(r1)
        std     r23, -72(r1)
        std     r24, -64(r1)
        std     r25, -56(r1)
        std     r26, -48(r1)
        std     r27, -40(r1)
        std     r28, -32(r1)
        std     r29, -24(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -192(r1)
        mr      r31, r3                     # context
        mr      r30, r4                     # pgdir
        mr      r29, r5                     # the address
        mr      r28, r6                     # end
        mr      r27, r7                     # the batch
        li      r26, 0                      # entries in the batch
        li      r25, 0                      # packed counts so far
1:      cmpld   r29, r28
        bge     8f
        mr      r3, r30
        mr      r4, r29
        bl      pte_page_of
        cmpld   r5, r28                     # this PTE page's part of the range
        ble     2f
        mr      r5, r28
2:      mr      r24, r5
        cmpdi   r3, 0
        bne     3f
        mr      r29, r24                    # no PTE page: nothing mapped there
        b       1b
3:      rldicl  r0, r29, 52, 55
        sldi    r0, r0, 3
        add     r23, r3, r0                 # the first Linux PTE
4:      ld      r0, 0(r23)
        andi.   r0, r0, _PAGE_HASHPTE
        beq     6f
5:      ldarx   r22, 0, r23                 # clear the HPTE flags, keep the old PTE
        li      r0, 0
        ori     r0, r0, _PAGE_HPTEFLAGS
        andc    r0, r22, r0
        stdcx.  r0, 0, r23
        bne-    5b
        andi.   r0, r22, _PAGE_HASHPTE
        beq     6f
        sldi    r9, r26, 3
        stdx    r22, r27, r9                # batch->pte[i]
        addi    r10, r27, BATCH_ADDR
        stdx    r29, r10, r9                # batch->addr[i]
        addi    r26, r26, 1
        cmpdi   r26, BATCH_NR
        bne     6f
        mr      r3, r31                     # the batch is full: flush it
        mr      r4, r27
        mr      r5, r26
        bl      flush_hash_range
        add     r25, r25, r3
        li      r26, 0
6:      addi    r29, r29, 4096
        addi    r23, r23, 8
        cmpld   r29, r24
        blt     4b
        b       1b
8:      cmpdi   r26, 0
        beq     9f
        mr      r3, r31
        mr      r4, r27
        mr      r5, r26
        bl      flush_hash_range
        add     r25, r25, r3
9:      mr      r3, r25
        addi    r1, r1, 192
        ld      r0, 16(r1)
        mtlr    r0
        ld      r22, -80(r1)
        ld      r23, -72(r1)
        ld      r24, -64(r1)
        ld      r25, -56(r1)
        ld      r26, -48(r1)
        ld      r27, -40(r1)
        ld      r28, -32(r1)
        ld      r29, -24(r1)
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr

        .purgem HCALL_FRAME                 # hash_native_64.S defines its own
