/*
 * The hashed page table (HTAB) management of the 32-bit PowerPC Linux kernel: fill an HPTE
 * from a Linux PTE, and invalidate the HPTEs of a range of Linux PTEs.
 *
 * Models four routines of Linux arch/ppc/mm/hashtable.S (2.4/2.6; later
 * arch/powerpc/mm/hash_low_32.S). SMP = 1 (the loader defines it on several CPUs)
 * assembles the SMP build: hash_page, add_hash_page and flush_hash_pages hold
 * mmu_hash_lock, a spin lock (lwarx/stwcx., plain loads while it is held, isync; released
 * with eieio and a store of 0), so that one CPU at a time changes the hash table, and
 * flush_hash_pages ends with tlbsync; sync (the tlbies done on every CPU) before it
 * releases it. Not modelled: the M (coherence) bit SMP kernels set in HPTEs.
 *   hash_page         a DSI/ISI found no HPTE: walk the Linux page table, check the access,
 *                     set _PAGE_ACCESSED | _PAGE_HASHPTE (| _PAGE_DIRTY for a store), then
 *                     create_hpte;
 *   add_hash_page     update_mmu_cache's preload: set _PAGE_HASHPTE (skip if already set),
 *                     then create_hpte;
 *   create_hpte       build the two HPTE words, look for an existing HPTE (only if the old
 *                     Linux PTE had _PAGE_HASHPTE), else an empty slot in the primary PTEG,
 *                     else in the secondary PTEG, else overwrite a primary slot chosen round
 *                     robin (next_slot), skipping slots that map kernel text;
 *   flush_hash_pages  for each of `count` Linux PTEs with _PAGE_HASHPTE set: clear the bit,
 *                     search the primary then the secondary PTEG, invalidate the match,
 *                     sync; tlbie; sync.
 * Written for this book from the algorithm, not copied. Differences from the kernel, all
 * small: the routines are plain functions (arguments in r3-r6, the kernel's hash_page is
 * entered from the exception prologue); the VSID comes from the context number by the
 * kernel's CTX_TO_VSID formula (context * 897 * 16 + ESID * 0x111, trimmed to 24 bits) in
 * hash_page too, where the kernel reads it from the segment register with mfsrin; the hash
 * mask and table base are assembled in (the kernel patches the same instructions at boot);
 * addresses are physical = virtual (no tophys offset); and each routine returns a status in
 * r3 so that the model can count what happened:
 *   create_hpte / hash_page / add_hash_page:  0 empty primary slot, 1 empty secondary slot,
 *       2 a valid primary HPTE overwritten (evicted), 3 the existing HPTE updated;
 *       hash_page: 16 = no mapping or access not permitted (the kernel then runs
 *       do_page_fault); add_hash_page: 4 = _PAGE_HASHPTE was already set, nothing done.
 *   flush_hash_pages: the number of HPTEs it invalidated.
 *
 * The loader defines before this file (see emu.kernel.ppc32):
 *   HASH_BASE  physical address of the HTAB (aligned to its size)
 *   HASH_MSK   (number of PTEGs - 1) << 6
 *   HASH_LEFT  first mask bit (IBM numbering) of a hash shifted left by 6
 *   PI_LEFT    the same, for the 16-bit page index (max(HASH_LEFT, 10))
 *   KVARS      address of three words: next_slot, primary_pteg_full, htab_hash_searches
 *   ETEXT      end of kernel text (physical)
 *   SMP, MMU_HASH_LOCK  1 and the lock word's address on several CPUs (else 0, 0)
 */
        .equ    _PAGE_PRESENT, 0x001
        .equ    _PAGE_HASHPTE, 0x002
        .equ    _PAGE_USER, 0x004
        .equ    _PAGE_DIRTY, 0x080
        .equ    _PAGE_ACCESSED, 0x100
        .equ    _PAGE_RW, 0x400
        .equ    PTE_H, 0x40                 # HPTE word 0: found by the secondary hash
        .equ    HPTE_KEEP, 0x1e8            # R C W I G copied from the Linux PTE (M: SMP only)

/* hash_page(access, ea, pgdir, context): access = _PAGE_RW for a store, else 0 */
        .globl  hash_page
hash_page:
        mflr    r0
        stw     r0, 4(r1)
        .if SMP
        lis     r8, MMU_HASH_LOCK@h         # spin_lock(mmu_hash_lock): one CPU in the
        ori     r8, r8, MMU_HASH_LOCK@l     # hash table at a time
        lis     r0, 0x0fff                  # the holder's mark
        b       50f
51:     lwz     r7, 0(r8)                   # held: wait with plain loads
        cmpwi   r7, 0
        bne     51b
50:     lwarx   r7, 0, r8
        cmpwi   r7, 0
        bne-    51b
        stwcx.  r0, 0, r8
        bne-    50b
        isync
        .endif
        mr      r7, r6                      # context
        ori     r3, r3, _PAGE_USER|_PAGE_PRESENT    # what the Linux PTE must allow
        rlwimi  r5, r4, 12, 20, 29          # pgd entry: pgdir + (ea >> 22) * 4
        lwz     r8, 0(r5)                   # pmd: physical address of the PTE page
        rlwinm. r8, r8, 0, 0, 19
        beq-    90f                         # no PTE page: a real page fault
        rlwimi  r8, r4, 22, 20, 29          # the Linux PTE: + ((ea >> 12) & 0x3ff) * 4
        rlwinm  r0, r3, 32-3, 24, 24        # a store (_PAGE_RW) also sets _PAGE_DIRTY
        ori     r0, r0, _PAGE_ACCESSED|_PAGE_HASHPTE
1:      lwarx   r6, 0, r8                   # r6: the old Linux PTE
        andc.   r5, r3, r6                  # a required bit missing?
        bne-    90f
        or      r5, r0, r6                  # r5: the new Linux PTE
        stwcx.  r5, 0, r8
        bne-    1b
        mulli   r3, r7, 897*16              # VSID = context * 897 * 16 + ESID * 0x111
        rlwinm  r0, r4, 4, 28, 31
        mulli   r0, r0, 0x111
        add     r3, r3, r0
        bl      create_hpte
        .if SMP
        eieio                               # the table updates before the release
        lis     r8, MMU_HASH_LOCK@h
        ori     r8, r8, MMU_HASH_LOCK@l
        li      r0, 0
        stw     r0, 0(r8)
        .endif
        lwz     r0, 4(r1)
        mtlr    r0
        blr
90:     li      r3, 16                      # not ours to fix: do_page_fault will
        .if SMP
        eieio                               # the table updates before the release
        lis     r8, MMU_HASH_LOCK@h
        ori     r8, r8, MMU_HASH_LOCK@l
        li      r0, 0
        stw     r0, 0(r8)
        .endif
        lwz     r0, 4(r1)
        mtlr    r0
        blr

/* add_hash_page(context, va, pmdval): pmdval = physical address of the PTE page */
        .globl  add_hash_page
add_hash_page:
        mflr    r0
        stw     r0, 4(r1)
        mulli   r3, r3, 897*16              # the VSID, as in hash_page
        rlwinm  r0, r4, 4, 28, 31
        mulli   r0, r0, 0x111
        add     r3, r3, r0
        mfmsr   r10                         # interrupts and data translation off
        rlwinm  r0, r10, 0, 17, 15          # clear MSR_EE
        rlwinm  r0, r0, 0, 28, 26           # clear MSR_DR
        mtmsr   r0
        isync
        .if SMP
        lis     r9, MMU_HASH_LOCK@h         # spin_lock(mmu_hash_lock): one CPU in the
        ori     r9, r9, MMU_HASH_LOCK@l     # hash table at a time
        lis     r0, 0x0fff                  # the holder's mark
        b       50f
51:     lwz     r7, 0(r9)                   # held: wait with plain loads
        cmpwi   r7, 0
        bne     51b
50:     lwarx   r7, 0, r9
        cmpwi   r7, 0
        bne-    51b
        stwcx.  r0, 0, r9
        bne-    50b
        isync
        .endif
        mr      r8, r5
        rlwimi  r8, r4, 22, 20, 29          # the Linux PTE
1:      lwarx   r6, 0, r8
        andi.   r0, r6, _PAGE_HASHPTE
        bne     8f                          # an HPTE exists (or did): leave it
        ori     r5, r6, _PAGE_HASHPTE
        stwcx.  r5, 0, r8
        bne-    1b
        bl      create_hpte
        b       9f
8:      li      r3, 4
9:
        .if SMP
        eieio                               # the table updates before the release
        lis     r9, MMU_HASH_LOCK@h
        ori     r9, r9, MMU_HASH_LOCK@l
        li      r0, 0
        stw     r0, 0(r9)
        .endif
        mtmsr   r10
        isync
        lwz     r0, 4(r1)
        mtlr    r0
        blr

/* create_hpte: r3 = VSID, r4 = ea, r5 = new Linux PTE, r6 = old Linux PTE */
        .globl  create_hpte
create_hpte:
        /* word 1: RPN, R, C, W, I, G from the Linux PTE; PP from _PAGE_USER/_RW/_DIRTY */
        li      r9, 3                       # user, read only
        andi.   r0, r5, _PAGE_RW|_PAGE_DIRTY
        cmpwi   r0, _PAGE_RW|_PAGE_DIRTY
        bne     1f
        li      r9, 2                       # user, read/write: writable and already dirty
1:      andi.   r0, r5, _PAGE_USER
        bne     2f
        li      r9, 0                       # kernel only
2:      rlwinm  r8, r5, 0, 0, 19            # RPN
        andi.   r0, r5, HPTE_KEEP
        or      r8, r8, r0
        or      r8, r8, r9
        /* word 0: V | VSID << 7 | API (EA bits 4-9) */
        rlwinm  r5, r3, 7, 1, 24
        rlwimi  r5, r4, 10, 26, 31
        oris    r5, r5, 0x8000
        /* primary PTEG: HASH_BASE | ((VSID ^ page index) << 6 & HASH_MSK) */
        rlwinm  r0, r3, 6, HASH_LEFT, 25
        rlwinm  r9, r4, 32-6, PI_LEFT, 25
        xor     r0, r0, r9
        lis     r12, HASH_BASE@h
        ori     r12, r12, HASH_BASE@l
        or      r12, r12, r0                # r12: the primary PTEG
        li      r0, 8
        andi.   r6, r6, _PAGE_HASHPTE       # did an HPTE exist? then look for it first
        beq+    20f
        tlbie   r4                          # this CPU must reload the changed entry
        lis     r9, KVARS@h
        ori     r9, r9, KVARS@l
        lwz     r6, 8(r9)                   # htab_hash_searches++
        addi    r6, r6, 1
        stw     r6, 8(r9)
        mtctr   r0
        addi    r9, r12, -8
10:     lwzu    r6, 8(r9)                   # the primary PTEG: an HPTE with our word 0?
        cmpw    r6, r5
        bdnzf   2, 10b
        beq+    40f
        ori     r5, r5, PTE_H               # the secondary PTEG
        xoris   r9, r12, HASH_MSK@h
        xori    r9, r9, HASH_MSK@l
        addi    r9, r9, -8
        mtctr   r0
11:     lwzu    r6, 8(r9)
        cmpw    r6, r5
        bdnzf   2, 11b
        beq+    40f
        xori    r5, r5, PTE_H
20:     mtctr   r0                          # an empty slot in the primary PTEG
        addi    r9, r12, -8
21:     lwzu    r6, 8(r9)
        rlwinm. r6, r6, 0, 0, 0             # V clear?
        bdnzf   2, 21b
        li      r3, 0
        beq+    30f
        lis     r3, KVARS@h                 # primary_pteg_full++
        ori     r3, r3, KVARS@l
        lwz     r6, 4(r3)
        addi    r6, r6, 1
        stw     r6, 4(r3)
        ori     r5, r5, PTE_H               # an empty slot in the secondary PTEG
        xoris   r9, r12, HASH_MSK@h
        xori    r9, r9, HASH_MSK@l
        addi    r9, r9, -8
        mtctr   r0
22:     lwzu    r6, 8(r9)
        rlwinm. r6, r6, 0, 0, 0
        bdnzf   2, 22b
        li      r3, 1
        beq+    30f
        xori    r5, r5, PTE_H
        /* both full: overwrite a primary slot, round robin, never one mapping kernel text */
        lis     r3, KVARS@h
        ori     r3, r3, KVARS@l
        lis     r0, ETEXT@h
        ori     r0, r0, ETEXT@l
23:     lwz     r6, 0(r3)                   # next_slot = (next_slot + 8) & 56
        addi    r6, r6, 8
        andi.   r6, r6, 56
        stw     r6, 0(r3)
        add     r9, r12, r6
        lwz     r6, 4(r9)                   # the victim's RPN
        rlwinm  r6, r6, 0, 0, 19
        cmplw   r6, r0
        blt     23b
        li      r3, 2
30:     stw     r5, 0(r9)                   # a new HPTE: word 0 ...
        b       41f
40:     li      r3, 3                       # an existing HPTE: word 1 only
41:     stw     r8, 4(r9)                   # ... and word 1
        sync                                # the table update reaches memory
        blr

/* flush_hash_pages(context, va, pmdval, count) -> number of HPTEs invalidated */
        .globl  flush_hash_pages
flush_hash_pages:
        li      r7, 0                       # HPTEs invalidated
        mfmsr   r10                         # interrupts and data translation off
        rlwinm  r0, r10, 0, 17, 15
        rlwinm  r0, r0, 0, 28, 26
        mtmsr   r0
        isync
        .if SMP
        lis     r9, MMU_HASH_LOCK@h         # spin_lock(mmu_hash_lock): one CPU in the
        ori     r9, r9, MMU_HASH_LOCK@l     # hash table at a time
        lis     r0, 0x0fff                  # the holder's mark
        b       50f
51:     lwz     r8, 0(r9)                   # held: wait with plain loads
        cmpwi   r8, 0
        bne     51b
50:     lwarx   r8, 0, r9
        cmpwi   r8, 0
        bne-    51b
        stwcx.  r0, 0, r9
        bne-    50b
        isync
        .endif
        rlwimi  r5, r4, 22, 20, 29          # r5: the first Linux PTE
1:      lwz     r0, 0(r5)                   # find the first one with _PAGE_HASHPTE
        cmpwi   cr1, r6, 1
        andi.   r0, r0, _PAGE_HASHPTE
        bne     2f
        ble     cr1, 19f                    # none in the range
        addi    r4, r4, 0x1000
        addi    r5, r5, 4
        addi    r6, r6, -1
        b       1b
2:      mulli   r3, r3, 897*16              # the VSID
        rlwinm  r0, r4, 4, 28, 31
        mulli   r0, r0, 0x111
        add     r3, r3, r0
        rlwinm  r11, r3, 7, 1, 24           # word 0 to look for (API is the same for all
        rlwimi  r11, r4, 10, 26, 31         # the PTEs of one PTE page)
        oris    r11, r11, 0x8000
33:     lwarx   r8, 0, r5                   # clear _PAGE_HASHPTE (done if already clear)
        andi.   r0, r8, _PAGE_HASHPTE
        beq     8f
        rlwinm  r8, r8, 0, 31, 29
        stwcx.  r8, 0, r5
        bne-    33b
        rlwinm  r8, r3, 6, HASH_LEFT, 25    # the primary PTEG
        rlwinm  r0, r4, 32-6, PI_LEFT, 25
        xor     r8, r8, r0
        lis     r0, HASH_BASE@h
        ori     r0, r0, HASH_BASE@l
        or      r8, r8, r0
        li      r0, 8
        mtctr   r0
        addi    r12, r8, -8
3:      lwzu    r0, 8(r12)
        cmpw    r0, r11
        bdnzf   2, 3b
        beq+    5f
        ori     r11, r11, PTE_H             # the secondary PTEG
        li      r0, 8
        xoris   r12, r8, HASH_MSK@h
        xori    r12, r12, HASH_MSK@l
        addi    r12, r12, -8
        mtctr   r0
4:      lwzu    r0, 8(r12)
        cmpw    r0, r11
        bdnzf   2, 4b
        xori    r11, r11, PTE_H
        bne-    6f                          # gone already (evicted): nothing to clear
5:      li      r0, 0
        stw     r0, 0(r12)                  # invalidate the HPTE
        addi    r7, r7, 1
6:      sync
        tlbie   r4                          # and the TLB entry
        sync
8:      ble     cr1, 9f                     # all checked?
81:     addi    r6, r6, -1
        addi    r5, r5, 4
        addi    r4, r4, 0x1000
        lwz     r0, 0(r5)
        cmpwi   cr1, r6, 1
        andi.   r0, r0, _PAGE_HASHPTE
        bne     33b
        bgt     cr1, 81b
9:
19:
        .if SMP
        tlbsync                             # the tlbies done on every CPU
        sync
        eieio                               # the table updates before the release
        lis     r9, MMU_HASH_LOCK@h
        ori     r9, r9, MMU_HASH_LOCK@l
        li      r0, 0
        stw     r0, 0(r9)
        .endif
        mtmsr   r10
        isync
        mr      r3, r7
        blr
