/*
 * flush_tlb_range_pages(context, pgdir, start, end) -> packed counts: a range flushed one
 * page at a time, as Linux 2.4's ppc64 kernel did it (arch/ppc64/mm/init.c
 * local_flush_tlb_range: walk the Linux PTEs of the range; for each one with
 * _PAGE_HASHPTE clear its HPTE flags (pte_update) and call flush_hash_page,
 * arch/ppc64/kernel/htab.c, which takes the lock, invalidates the one HPTE and runs a
 * whole ptesync; tlbie; eieio; tlbsync; ptesync sequence for it). Each page's flush is flush_hash_page_lpte (hash_low_64.S): under 2.4's
 * hash_table_lock (GLOBAL_LOCK = 1) or, with the per-HPTE lock bit, under the tlbie lock
 * (GLOBAL_LOCK = 0: the 2.5 locking without the batched flush, for comparison).
 *
 * Written for this book from the algorithm, not copied. Differences from 2.4: a plain
 * function (arguments in r3-r6) for user addresses only; flush_hash_page_lpte is 2.6's
 * flush_hash_page: it runs the tlbie sequence even when the HPTE no longer matches (2.4
 * skipped it then, and computed the tlbie's address from the HPTE it cleared). Assembled after hash_low_64.S and hash_native_64.S, whose
 * pte_page_of and flush_hash_page_lpte it calls. Packed counts as hash_low_64.S's: HPTEs
 * invalidated (bits 0-15), tlbie issued (16-31), tlbie sequences (32-47).
 */
        .globl  flush_tlb_range_pages
flush_tlb_range_pages:
        mflr    r0
        std     r0, 16(r1)
        std     r22, -80(r1)
        std     r23, -72(r1)
        std     r24, -64(r1)
        std     r25, -56(r1)
        std     r28, -32(r1)
        std     r29, -24(r1)
        std     r30, -16(r1)
        std     r31, -8(r1)
        stdu    r1, -192(r1)
        mr      r31, r3                     # context
        mr      r30, r4                     # pgdir
        mr      r29, r5                     # the address
        mr      r28, r6                     # end
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
        mr      r3, r31                     # flush_hash_page: this page alone, its own
        mr      r4, r29                     # lock and its own synchronising sequence
        mr      r5, r22
        bl      flush_hash_page_lpte
        add     r25, r25, r3
6:      addi    r29, r29, 4096
        addi    r23, r23, 8
        cmpld   r29, r24
        blt     4b
        b       1b
8:      mr      r3, r25
        addi    r1, r1, 192
        ld      r0, 16(r1)
        mtlr    r0
        ld      r22, -80(r1)
        ld      r23, -72(r1)
        ld      r24, -64(r1)
        ld      r25, -56(r1)
        ld      r28, -32(r1)
        ld      r29, -24(r1)
        ld      r30, -16(r1)
        ld      r31, -8(r1)
        blr
