/*
 * zap_pte_range's work on one present PTE, on an SMP ARMv7 kernel of 2.6.36 (written for
 * the model, not copied; read in a 2.6.36 tree, allwinner/linux-2.6.36 on GitHub):
 *
 *   zap_pte               mm/memory.c zap_pte_range's loop body for a present PTE: the
 *                         read of *pte, pte_none, *zap_work -= PAGE_SIZE, pte_present,
 *                         vm_normal_page (ARM has no pte_special: the VM_PFNMAP|VM_MIXEDMAP
 *                         test, is_zero_pfn, highest_memmap_pfn, pfn_to_page),
 *                         tlb_remove_tlb_entry (arch/arm/include/asm/tlb.h: the range that
 *                         tlb_end_vma's flush_tlb_range flushes, unless fullmm), PageAnon;
 *                         for a file page pte_dirty, pte_young, VM_SequentialReadHint and
 *                         mark_page_accessed; rss[]--, page_remove_rmap, the
 *                         page_mapcount check, tlb_remove_page (ARM's 2.6.36 tlb.h:
 *                         free_page_and_swap_cache at once, no gather), the loop's step
 *   mark_page_accessed    mm/swap.c: PageActive, PageUnevictable, PageReferenced, PageLRU
 *                         (each test_bit a load: the flags word is volatile), then
 *                         SetPageReferenced: set_bit, arch/arm/lib/setbit.S's bitop macro
 *   page_remove_rmap      mm/rmap.c: atomic_add_negative(-1, &page->_mapcount) (ARMv7's
 *                         atomic_add_return: smp_mb, ldrex/strex, smp_mb); the last
 *                         mapping __dec_zone_page_state(NR_ANON_PAGES or NR_FILE_MAPPED)
 *                         (mm/vmstat.c, the mirror of page_add_file_rmap's increment in
 *                         fault_v7.S); page_test_dirty is 0 and PageHuge 0 on ARM; no
 *                         memory cgroup
 *   free_page_and_swap_cache  mm/swap_state.c: free_swap_cache's PageSwapCache test, then
 *                         page_cache_release = put_page (mm/swap.c): PageCompound (PG_head,
 *                         PG_tail), put_page_testzero (atomic_dec_and_test: smp_mb,
 *                         ldrex/strex, smp_mb). The free on the last reference is the
 *                         model's free_page (a fixed cost, charged when its count drops).
 *
 * The model calls zap_pte, page_remove_rmap and zap_pte_put one after the other, so that
 * each function's cycles are charged to its own symbol (page_remove_rmap is one in the
 * paper's Figure 2); the loop's step is at the end of zap_pte rather than of zap_pte_put,
 * mark_page_accessed (mm/swap.c) is charged with zap_pte, __dec_zone_page_state with
 * page_remove_rmap, and zap_pte_put's page_mapcount check (3 instructions of
 * zap_pte_range) with free_page_and_swap_cache.
 *
 * What the model leaves out, and says so: ptep_get_and_clear's store of the cleared PTE is
 * the model's set_pte_ext call (cpu_v7_set_pte_ext, its own symbol), made after this
 * routine, not between vm_normal_page and tlb_remove_tlb_entry; set_page_dirty of a dirty
 * shared file page (no workload of the ARM chapter writes a shared file mapping: the test
 * only); activate_page (the model's page-cache pages are not on the LRU, so PageLRU is
 * clear: in a repeated benchmark the kernel's page is active and referenced after its
 * second unmap, and takes the same tests as here from then on). The per-call part of
 * zap_pte_range (pte_offset_map_lock: the model's page_table_lock, init_rss_vec,
 * add_mm_rss_vec) and unmap_vmas' walk down to it stay in the VMA's fixed cost. rss[] and
 * *zap_work, on the kernel's stack, are in the model's mmu_gather block (the per-CPU
 * mmu_gathers: mm, fullmm, range_start, range_end, then these).
 */
        .equ    TLB_FULLMM, 4
        .equ    TLB_RANGE_START, 8
        .equ    TLB_RANGE_END, 12
        .equ    TLB_ZAP_WORK, 16
        .equ    TLB_RSS_FILE, 20
        .equ    TLB_RSS_ANON, 24
        .equ    G_ZERO_PFN, 40
        .equ    G_HIGHEST_PFN, 44
        .equ    PAGE_COUNT_Z, 4
        .equ    PG_REFERENCED, 2
        .equ    PG_LRU, 5
        .equ    PG_ACTIVE, 6
        .equ    PG_COMPOUND_MASK, 0xC000  @ PG_head (14) | PG_tail (15)
        .equ    PG_SWAPCACHE, 16
        .equ    PG_UNEVICTABLE, 21
        .equ    NR_ANON_PAGES, 7
        .equ    VM_SEQ_READ, 0x8000
        .equ    L_PTE_PRESENT_Z, 0x001
        .equ    L_PTE_YOUNG_Z, 0x002
        .equ    L_PTE_DIRTY_Z, 0x040

@ zap_pte(r0 = pte, r1 = addr, r2 = vma, r3 = current; [sp] = globals, [sp, #4] = tlb):
@ the loop body to rss[]-- and the loop's step; r0 = the struct page whose mapping goes
@ (page_remove_rmap and zap_pte_put next: calls of their own, the profile's symbols), 0
@ for none (the zero page)
        .globl  zap_pte
zap_pte:
        stmfd   sp!, {r4 - r10, lr}
        ldr     r7, [sp, #32]                   @ the globals
        ldr     r9, [sp, #36]                   @ tlb
        mov     r4, r0
        mov     r5, r1
        mov     r8, r2
        mov     r6, r3
        mov     r10, #0
        ldr     r0, [r4]                        @ ptent = *pte
        cmp     r0, #0                          @ pte_none
        beq     8f
        ldr     r1, [r9, #(TLB_ZAP_WORK)]       @ (*zap_work) -= PAGE_SIZE
        sub     r1, r1, #4096
        str     r1, [r9, #(TLB_ZAP_WORK)]
        tst     r0, #(L_PTE_PRESENT_Z)
        beq     8f
        ldr     r1, [r8, #(VM_FLAGS)]           @ vm_normal_page
        movw    r2, #0x0400                     @ VM_PFNMAP | VM_MIXEDMAP
        movt    r2, #0x1000
        tst     r1, r2
        bne     8f
        mov     r2, r0, lsr #12                 @ pte_pfn
        ldr     r3, [r7, #(G_ZERO_PFN)]         @ is_zero_pfn
        cmp     r2, r3
        beq     1f
        ldr     r3, [r7, #(G_HIGHEST_PFN)]
        cmp     r2, r3
        bhi     8f
        ldr     r3, [r7, #(G_PFN_OFFSET)]       @ pfn_to_page
        sub     r2, r2, r3
        ldr     r3, [r7, #(G_MEM_MAP)]
        add     r10, r3, r2, lsl #5
1:      ldr     r1, [r9, #(TLB_FULLMM)]         @ tlb_remove_tlb_entry
        cmp     r1, #0
        bne     2f
        ldr     r1, [r9, #(TLB_RANGE_START)]
        cmp     r5, r1
        strlo   r5, [r9, #(TLB_RANGE_START)]
        ldr     r1, [r9, #(TLB_RANGE_END)]
        add     r2, r5, #4096
        cmp     r2, r1
        strhi   r2, [r9, #(TLB_RANGE_END)]
2:      cmp     r10, #0                         @ no page: continue
        beq     7f
        ldr     r1, [r10, #(PAGE_MAPPING)]      @ PageAnon
        tst     r1, #1
        beq     3f
        ldr     r1, [r9, #(TLB_RSS_ANON)]       @ rss[MM_ANONPAGES]--
        sub     r1, r1, #1
        str     r1, [r9, #(TLB_RSS_ANON)]
        b       7f
3:      tst     r0, #(L_PTE_DIRTY_Z)            @ set_page_dirty: not modelled (see above)
        tst     r0, #(L_PTE_YOUNG_Z)
        beq     4f
        ldr     r1, [r8, #(VM_FLAGS)]           @ VM_SequentialReadHint
        tst     r1, #(VM_SEQ_READ)
        bne     4f
        mov     r0, r10
        bl      mark_page_accessed
4:      ldr     r1, [r9, #(TLB_RSS_FILE)]       @ rss[MM_FILEPAGES]--
        sub     r1, r1, #1
        str     r1, [r9, #(TLB_RSS_FILE)]
7:      add     r4, r4, #4                      @ pte++, addr += PAGE_SIZE, *zap_work > 0
        add     r5, r5, #4096
        ldr     r1, [r9, #(TLB_ZAP_WORK)]
        cmp     r1, #0
        mov     r0, r10
        ldmfd   sp!, {r4 - r10, pc}
8:      mov     r0, #0
        ldmfd   sp!, {r4 - r10, pc}

@ zap_pte_put(r0 = struct page): the rest of the loop body after page_remove_rmap: the
@ page_mapcount check (print_bad_pte), then tlb_remove_page = free_page_and_swap_cache
        .globl  zap_pte_put
zap_pte_put:
        ldr     r1, [r0, #(PAGE_MAPCOUNT)]      @ page_mapcount(page) < 0
        adds    r1, r1, #1
        bmi     9f
        b       free_page_and_swap_cache
9:      mov     pc, lr

@ mark_page_accessed(r0 = struct page)
mark_page_accessed:
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ !PageActive
        tst     r1, #(1 << PG_ACTIVE)
        bne     1f
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ !PageUnevictable
        tst     r1, #(1 << PG_UNEVICTABLE)
        bne     1f
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ PageReferenced
        tst     r1, #(1 << PG_REFERENCED)
        beq     1f
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ PageLRU: never, in the model (see above)
        tst     r1, #(1 << PG_LRU)
1:      ldr     r1, [r0, #(PAGE_FLAGS)]         @ else if (!PageReferenced)
        tst     r1, #(1 << PG_REFERENCED)
        movne   pc, lr
        mov     r1, r0                          @ SetPageReferenced
        mov     r0, #(PG_REFERENCED)
        b       _set_bit_le

@ _set_bit_le(r0 = bit number, r1 = address): the bitop macro of arch/arm/lib/bitops.h
@ (ARMv6K+): a byte ldrexb/strexb loop, no barrier
_set_bit_le:
        mov     r2, #1
        and     r3, r0, #7
        add     r1, r1, r0, lsr #3
        mov     r3, r2, lsl r3
1:      ldrexb  r2, [r1]
        orr     r2, r2, r3
        strexb  r0, r2, [r1]
        cmp     r0, #0
        bne     1b
        mov     pc, lr

@ page_remove_rmap(r0 = struct page, r1 = current, r2 = globals; the model passes these two,
@ which the kernel finds from sp and by address)
        .globl  page_remove_rmap
page_remove_rmap:
        stmfd   sp!, {r4, r6, r7, lr}
        mov     r4, r0
        mov     r6, r1
        mov     r7, r2
        add     r3, r0, #(PAGE_MAPCOUNT)
        ATOMIC_OP_RETURN sub, r3, r1, r2, #1    @ atomic_add_return(-1): smp_mb, loop, smp_mb
        cmp     r1, #0                          @ atomic_add_negative: the last mapping?
        bge     2f
        ldr     r0, [r4, #(PAGE_MAPPING)]       @ PageAnon
        tst     r0, #1
        movne   r1, #(NR_ANON_PAGES)
        moveq   r1, #(NR_FILE_MAPPED)
        mov     r0, r4
        bl      __dec_zone_page_state
2:      ldmfd   sp!, {r4, r6, r7, pc}

@ __dec_zone_page_state(r0 = struct page, r1 = item; r6 = current, r7 = globals)
__dec_zone_page_state:
        stmfd   sp!, {r4, r5, lr}
        ldr     r0, [r0, #(PAGE_FLAGS)]         @ page_zone: zone 0 (the flags' zone bits)
        ldr     r0, [r7, #(G_ZONES)]
        ldr     r2, [r0, #(ZONE_PAGESET)]       @ this_cpu_ptr(zone->pageset)
        ldr     r3, [r6, #(TI_CPU)]
        ldr     ip, [r7, #(G_PER_CPU_OFFSET)]
        ldr     r3, [ip, r3, lsl #2]
        add     r2, r2, r3
        add     r4, r2, r1                      @ p = pcp->vm_stat_diff + item
        ldrsb   r3, [r4, #(PCP_VM_STAT_DIFF)]   @ (*p)--
        sub     r3, r3, #1
        strb    r3, [r4, #(PCP_VM_STAT_DIFF)]
        ldrsb   ip, [r2, #(PCP_STAT_THRESHOLD)]
        cmn     r3, ip                          @ *p < -threshold?
        bge     1f
        mov     ip, ip, asr #1                  @ overstep = threshold / 2
        sub     r2, r3, ip                      @ zone_page_state_add(*p - overstep)
        strb    ip, [r4, #(PCP_VM_STAT_DIFF)]   @ *p = overstep
        mov     r5, r1
        add     r0, r0, #(ZONE_VM_STAT)
        add     r0, r0, r5, lsl #2
        mov     r4, r2
        bl      atomic_add                      @ the zone's
        ldr     r0, [r7, #(G_VM_STAT)]
        add     r0, r0, r5, lsl #2
        mov     r2, r4
        bl      atomic_add                      @ and the global vm_stat
1:      ldmfd   sp!, {r4, r5, pc}

@ free_page_and_swap_cache(r0 = struct page)
free_page_and_swap_cache:
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ free_swap_cache: PageSwapCache (never)
        tst     r1, #(1 << PG_SWAPCACHE)
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ put_page: PageCompound
        tst     r1, #(PG_COMPOUND_MASK)
        add     r3, r0, #(PAGE_COUNT_Z)         @ put_page_testzero: atomic_dec_and_test
        ATOMIC_OP_RETURN sub, r3, r1, r2, #1
        cmp     r1, #0                          @ zero: __page_cache_release (the model's)
        mov     pc, lr
