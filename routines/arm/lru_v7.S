/*
 * ____pagevec_lru_add of a full per-CPU pagevec, on an SMP ARMv7 kernel of 2.6.36 (written
 * for the model, not copied; read in a 2.6.36 tree, allwinner/linux-2.6.36 on GitHub,
 * mm/swap.c lines 155-173, 329-381 and 405-439, include/linux/mm_inline.h 22-28):
 *
 *   ____pagevec_lru_add   lru = LRU_ACTIVE_ANON (lru_cache_add_lru's, anon_v7.S): for each
 *                         page, page_zone (the one zone) and, at the first, spin_lock_irq of
 *                         zone->lru_lock; SetPageLRU and SetPageActive (set_bit: the bitop
 *                         macro), update_page_reclaim_stat (recent_scanned[0]++ and, active,
 *                         recent_rotated[0]++; no memory cgroup), add_page_to_lru_list
 *                         (list_add onto zone->lru[LRU_ACTIVE_ANON], __inc_zone_state of
 *                         NR_ACTIVE_ANON); spin_unlock_irq; release_pages (per page
 *                         PageCompound, put_page_testzero: the pagevec's reference); then
 *                         pagevec_reinit
 *
 * The zone's fields are the model's layout, in 2.6.36's order (lru_lock, lru[5], then
 * reclaim_stat's recent_rotated[2] and recent_scanned[2]). Left out, and said so by the model:
 * a page whose last reference release_pages drops (the model frees a page when the generic
 * VM's count reaches zero, a fixed cost, and its LRU removal with it); the LRU lists are
 * never read, and a page freed and handed out again is put on the list again without the
 * list_del its free would have done (only the lines its stores touch matter here).
 */
        .equ    ZONE_LRU_LOCK, 64
        .equ    ZONE_LRU_ACTIVE_ANON, 76        @ lru[LRU_ACTIVE_ANON].list (68 + 8)
        .equ    ZONE_RECENT_ROTATED, 108
        .equ    ZONE_RECENT_SCANNED, 116
        .equ    PAGE_LRU, 24                    @ struct page: lru (next, prev)
        .equ    NR_ACTIVE_ANON, 2

@ ____pagevec_lru_add(r0 = pagevec, r1 = current, r2 = globals): r0 = the pagevec's count
@ after (0)
        .globl  ____pagevec_lru_add
____pagevec_lru_add:
        stmfd   sp!, {r4 - r10, lr}
        mov     r4, r0
        mov     r6, r1
        mov     r7, r2
        mov     r9, #0                          @ zone = NULL
        mov     r10, #0                         @ i
1:      ldr     r0, [r4]                        @ i < pagevec_count(pvec)
        cmp     r10, r0
        bge     5f
        add     r0, r4, r10, lsl #2
        ldr     r8, [r0, #8]                    @ page = pvec->pages[i]
        ldr     r0, [r8, #(PAGE_FLAGS)]         @ page_zone: zone 0 (the flags' zone bits)
        ldr     r5, [r7, #(G_ZONES)]
        cmp     r5, r9                          @ pagezone != zone: lock it (the first page)
        beq     2f
        mov     r9, r5
        add     r0, r9, #(ZONE_LRU_LOCK)
        bl      _raw_spin_lock_irq
2:      mov     r1, r8                          @ SetPageLRU
        mov     r0, #(PG_LRU)
        bl      _set_bit_le
        mov     r1, r8                          @ SetPageActive
        mov     r0, #(PG_ACTIVE)
        bl      _set_bit_le
        ldr     r0, [r9, #(ZONE_RECENT_SCANNED)]        @ update_page_reclaim_stat
        add     r0, r0, #1
        str     r0, [r9, #(ZONE_RECENT_SCANNED)]
        ldr     r0, [r9, #(ZONE_RECENT_ROTATED)]
        add     r0, r0, #1
        str     r0, [r9, #(ZONE_RECENT_ROTATED)]
        add     r0, r9, #(ZONE_LRU_ACTIVE_ANON) @ add_page_to_lru_list: list_add
        ldr     r1, [r0]                        @ head->next
        add     r2, r8, #(PAGE_LRU)
        str     r2, [r1, #4]                    @ next->prev = new
        str     r1, [r2]                        @ new->next = next
        str     r0, [r2, #4]                    @ new->prev = head
        str     r2, [r0]                        @ head->next = new
        mov     r0, r9                          @ __inc_zone_state(zone, NR_ACTIVE_ANON)
        mov     r1, #(NR_ACTIVE_ANON)
        bl      __inc_zone_state
        add     r10, r10, #1
        b       1b
5:      cmp     r9, #0                          @ spin_unlock_irq(&zone->lru_lock)
        addne   r0, r9, #(ZONE_LRU_LOCK)
        blne    _raw_spin_unlock_irq
        mov     r10, #0                         @ release_pages(pvec->pages, pvec->nr)
6:      ldr     r0, [r4]
        cmp     r10, r0
        bge     7f
        add     r0, r4, r10, lsl #2
        ldr     r0, [r0, #8]
        bl      put_page                        @ PageCompound, put_page_testzero (wp_v7.S)
        add     r10, r10, #1                    @ (zero: never here, see above)
        b       6b
7:      mov     r0, #0                          @ pagevec_reinit: nr = 0
        str     r0, [r4]
        ldmfd   sp!, {r4 - r10, pc}

@ _raw_spin_lock_irq(r0 = lock): local_irq_disable, arch_spin_lock
_raw_spin_lock_irq:
        cpsid   i
        ARCH_SPIN_LOCK r0, r1, r3               @ arch_spin_lock (arch_spinlock.S)
        mov     pc, lr

@ _raw_spin_unlock_irq(r0 = lock): arch_spin_unlock, local_irq_enable
_raw_spin_unlock_irq:
        mov     r2, #0
        dmb
        str     r2, [r0]
        dsb
        sev
        cpsie   i
        mov     pc, lr
