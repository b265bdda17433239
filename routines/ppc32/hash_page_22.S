/*
 * hash_page_22: the hash-table miss handler of Linux 2.1.51 and 2.2.0 (the kernels Dougan
 * 1999 measured), for the book's 603 and 604 kernel models in their 1998 modes
 * (emu.kernel.ppc604 flush="search"/"context", emu.kernel.ppc603 reload="hash" with
 * tlb_flush="search"/"context").
 *
 * Written for this book from the algorithm of hash_page in arch/ppc/kernel/head.S (read for
 * facts in davej-history's Linux 2.2.0, commit f6cce5dae, head.S lines 1212-1404, and
 * 2.1.51pre1, commit 94520e420, head.S from line 690; nothing copied). What sets it apart
 * from the later hash_page of routines/ppc32/hash_low_32.S:
 *   - those kernels have no _PAGE_HASHPTE (include/asm-ppc/pgtable.h of 2.2.0: the software
 *     bits end at _PAGE_HWWRITE 0x200): the Linux PTE gets _PAGE_ACCESSED (and _PAGE_DIRTY
 *     for a store) and nothing says an HPTE was made;
 *   - whether to look for an existing HPTE is decided by why the exception came: "See
 *     whether it was a PTE not found exception or a protection violation" (DSISR / SRR1
 *     bit 1). Not found: straight to an empty slot. A protection violation (a store to a
 *     page whose HPTE is read only): tlbie, then the primary and the secondary PTEG are
 *     searched for the HPTE, whose word 1 is rewritten;
 *   - the PTE is updated with a plain store (a uniprocessor kernel; 2.2.0's SMP build held
 *     hash_table_lock instead of using lwarx/stwcx.).
 * The HPTE words and the slot choice are create_hpte's (hash_low_32.S, loaded before this
 * file), called with r6 = _PAGE_HASHPTE for a protection violation (its "look for the
 * existing HPTE first", with the tlbie) and 0 for a PTE not found: the same searches as
 * 2.2.0's inline code. The one difference in the work: create_hpte counts its searches
 * and full primary groups in KVARS where 2.2.0 counted htab_reloads and htab_evicts.
 *
 * hash_page_22(access, ea, pgdir, context, protection): access = _PAGE_RW for a store, else
 * 0; protection = 1 when the exception was a protection violation, 0 when no HPTE was
 * found. Returns create_hpte's status (0-3), or 16: no mapping or the access is not
 * permitted (do_page_fault follows).
 *
 * Instructions, by hand, for an allowed access: 4 (frame, arguments) + 5 (the PTE page) + 4
 * (the PTE, its check) + 4 (accessed, dirty, store) + 3 (not found; 4 for a protection
 * violation) + 4 (VSID) + 1 (bl) = 25 (26) before create_hpte, 3 after it; the later
 * hash_page (hash_low_32.S, one CPU) runs 22 and 3. The loader defines create_hpte (its
 * address in hash_low_32.S) before this file.
 */
        .equ    _PAGE_PRESENT, 0x001
        .equ    _PAGE_HASHPTE, 0x002        # only as create_hpte's "search first" flag
        .equ    _PAGE_USER, 0x004
        .equ    _PAGE_ACCESSED, 0x100

        .globl  hash_page_22
hash_page_22:
        mflr    r0
        stw     r0, 4(r1)
        mr      r11, r7                     # protection violation?
        mr      r7, r6                      # context
        ori     r3, r3, _PAGE_USER|_PAGE_PRESENT    # what the Linux PTE must allow
        rlwimi  r5, r4, 12, 20, 29          # pgd entry: pgdir + (ea >> 22) * 4
        lwz     r8, 0(r5)                   # the PTE page, or 0
        rlwinm. r8, r8, 0, 0, 19
        beq-    90f                         # no PTE page: do_page_fault
        rlwimi  r8, r4, 22, 20, 29          # the Linux PTE: + ((ea >> 12) & 0x3ff) * 4
        lwz     r6, 0(r8)
        andc.   r5, r3, r6                  # a required bit missing?
        bne-    90f
        rlwinm  r0, r3, 32-3, 24, 24        # _PAGE_RW access -> _PAGE_DIRTY
        ori     r0, r0, _PAGE_ACCESSED
        or      r5, r0, r6
        stw     r5, 0(r8)                   # the PTE: accessed (and dirty)
        li      r6, 0                       # not found: an empty slot
        cmpwi   r11, 0
        beq+    1f
        li      r6, _PAGE_HASHPTE           # protection: create_hpte searches, tlbie
1:      mulli   r3, r7, 897*16              # VSID = context * 897 * 16 + ESID * 0x111
        rlwinm  r0, r4, 4, 28, 31
        mulli   r0, r0, 0x111
        add     r3, r3, r0
        bl      create_hpte
        lwz     r0, 4(r1)
        mtlr    r0
        blr
90:     li      r3, 16                      # not ours to fix: do_page_fault will
        lwz     r0, 4(r1)
        mtlr    r0
        blr
