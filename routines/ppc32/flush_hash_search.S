/*
 * flush_hash_search: flushing a range of user pages from the hashed page table the way the
 * PowerPC Linux kernel did in 1997-98, before Dougan, Mackerras and Yodaiken's changes, and
 * the new-context flush that replaced it for large ranges. For the book's 604 kernel model,
 * emu.kernel.ppc604 (flush="search" and flush="context") and the 603 searching a hash
 * table under 2.2.0's flush (emu.kernel.ppc603, tlb_flush="context").
 *
 * Models, from the algorithm (read for facts in Linux 2.1.51's arch/ppc/mm/init.c
 * flush_tlb_range and arch/ppc/kernel/head.S flush_hash_page, and Linux 2.2.0's
 * arch/ppc/kernel/head.S set_context; nothing copied):
 *   flush_range_search(context, start, pages)
 *                     flush_tlb_range: for every page of the range, whether or not it ever
 *                     had a hash-table entry, call flush_hash_page_search. Returns the
 *                     number of HPTEs it invalidated.
 *   flush_hash_page_search(context, va)
 *                     flush_hash_page: build the compare word (V | VSID | API) and the
 *                     primary PTEG's address, compare the 8 HPTEs of the primary group, then
 *                     (H set) the 8 of the secondary group; clear word 0 of the match, if
 *                     any; then sync; tlbie va; isync. r6 = 1 if it cleared one, else 0.
 * (set_context_22, what a new context costs the running process, is in set_context_22.S.)
 *
 * Differences from the kernel, none in the search: the VSID is the book's kernel model's
 * (context * 897 * 16 + ESID * 0x111, the later CTX_TO_VSID, which the model's hash_page
 * uses: 2.1's flush_hash_page had context << 4 | ESID, and 2.2 munged the context number
 * by 897 when it allocated it); the table base and mask are assembled in (the kernel loaded
 * Hash and Hash_mask from memory: two loads per page fewer here); set_context_22 does not
 * set Ks/Kp (the model's segment registers hold the VSID only). The loader defines HASH_BASE,
 * HASH_MSK, HASH_LEFT and PI_LEFT before this file (emu.kernel.ppc32.hash_low_prelude).
 *
 * Instructions, by hand: flush_hash_page_search, no match: 16 (tag and primary PTEG) + 24
 * (8 compares) + 1 + 6 (secondary PTEG) + 24 + 2 + 4 (sync, tlbie, isync, blr) = 77; a match
 * in slot k of the primary group: 16 + 3 (k + 1) + 1 + 3 + 4 = 27 + 3k. flush_range_search:
 * 5 + (6 + the page's) per page + 4.
 */
        .equ    PTE_H, 0x40                 # HPTE word 0: found by the secondary hash

        .globl  flush_range_search
flush_range_search:                         # r3 context, r4 start (page aligned), r5 pages
        mflr    r0
        stw     r0, 4(r1)
        li      r9, 0                       # HPTEs invalidated
        cmpwi   r5, 0
        beq     2f
1:      bl      flush_hash_page_search      # every page, an HPTE or not
        add     r9, r9, r6
        addi    r4, r4, 0x1000
        addi    r5, r5, -1
        cmpwi   r5, 0
        bne     1b
2:      lwz     r0, 4(r1)
        mtlr    r0
        mr      r3, r9
        blr

        .globl  flush_hash_page_search
flush_hash_page_search:                     # r3 context, r4 va; keeps r3, r4, r5, r9
        mulli   r7, r3, 897*16              # VSID = context * 897 * 16 + ESID * 0x111
        rlwinm  r0, r4, 4, 28, 31
        mulli   r0, r0, 0x111
        add     r7, r7, r0
        rlwinm  r11, r7, 7, 1, 24           # the compare word: VSID,
        rlwimi  r11, r4, 10, 26, 31         # API,
        oris    r11, r11, 0x8000            # V
        rlwinm  r8, r7, 6, HASH_LEFT, 25    # the primary hash << 6, masked
        rlwinm  r0, r4, 32-6, PI_LEFT, 25
        xor     r8, r8, r0
        lis     r0, HASH_BASE@h
        ori     r0, r0, HASH_BASE@l
        or      r8, r8, r0                  # the primary PTEG
        li      r0, 8
        mtctr   r0
        addi    r12, r8, -8
3:      lwzu    r0, 8(r12)                  # word 0 of the next HPTE
        cmpw    r0, r11
        bdnzf   2, 3b                       # until a match or the group is done
        beq     5f
        ori     r11, r11, PTE_H             # the secondary PTEG
        xoris   r12, r8, HASH_MSK@h
        xori    r12, r12, HASH_MSK@l
        li      r0, 8
        mtctr   r0
        addi    r12, r12, -8
4:      lwzu    r0, 8(r12)
        cmpw    r0, r11
        bdnzf   2, 4b
        li      r6, 0
        bne     6f                          # in neither group: nothing to clear
5:      li      r0, 0
        stw     r0, 0(r12)                  # invalidate the HPTE
        li      r6, 1
6:      sync
        tlbie   r4                          # and the TLB entry, found or not
        isync
        blr
