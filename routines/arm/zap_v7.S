/*
 * zap_pte_range over one PTE page, on an SMP ARMv7 kernel of 2.6.36 (written for the model,
 * not copied; read in a 2.6.36 tree, allwinner/linux-2.6.36 on GitHub, mm/memory.c 891-986):
 *
 *   zap_pte_range         the loop over the PTE page's entries in [addr, end) (905-980): *pte,
 *                         pte_none ((*zap_work)--), (*zap_work) -= PAGE_SIZE, pte_present,
 *                         vm_normal_page (ARM has no pte_special: the VM_PFNMAP|VM_MIXEDMAP
 *                         test, is_zero_pfn, highest_memmap_pfn, pfn_to_page),
 *                         ptep_get_and_clear_full (arch/arm's pte_clear: set_pte_ext(pte,
 *                         __pte(0), 0), a call of the processor's cpu_v7_set_pte_ext),
 *                         tlb_remove_tlb_entry (arch/arm/include/asm/tlb.h: the range that
 *                         tlb_end_vma's flush_tlb_range flushes, unless fullmm), PageAnon;
 *                         for a file page pte_dirty, pte_young, VM_SequentialReadHint and
 *                         mark_page_accessed; rss[]--, page_remove_rmap, the
 *                         page_mapcount check, tlb_remove_page (ARM's 2.6.36 tlb.h:
 *                         free_page_and_swap_cache at once, no gather), and the loop's
 *                         step and test (addr != end && *zap_work > 0)
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
 * The model calls zap_pte_range once per PTE page (emu.kernel.armfault zap_ptes) and charges
 * each function it calls to its own symbol (set_pte_ext, page_remove_rmap with
 * __dec_zone_page_state, free_page_and_swap_cache: page_remove_rmap is one of the paper's
 * Figure 2), the loop and mark_page_accessed to zap_pte_range (inlined in unmap_vmas).
 *
 * What the model leaves out, and says so: set_page_dirty of a dirty shared file page (no
 * workload of the ARM chapter writes a shared file mapping: the test only); activate_page
 * (the model's page-cache pages are not on the LRU, so PageLRU is clear: in a repeated
 * benchmark the kernel's page is active and referenced after its second unmap, and takes
 * the same tests as here from then on); swap and file PTEs (the model has none: the loop
 * steps over a PTE that is neither none nor present). pte_offset_map_lock and
 * pte_unmap_unlock: the model's page_table_lock is taken around the whole unmap (exit_mmap,
 * unmap_region), not per PTE page; init_rss_vec, add_mm_rss_vec and unmap_vmas' walk down to
 * the PTE page stay in the VMA's fixed cost. rss[] and *zap_work, on the kernel's stack, are
 * in the model's mmu_gather block (the per-CPU mmu_gathers: mm, fullmm, range_start,
 * range_end, then these); so are the model's check's two words, TLB_FOUND_N and
 * TLB_FOUND_SUM, which the kernel does not have (two stores a call, and the count and sum
 * kept on the stack as the loop goes).
 */
        .equ    TLB_FULLMM, 4
        .equ    TLB_RANGE_START, 8
        .equ    TLB_RANGE_END, 12
        .equ    TLB_ZAP_WORK, 16
        .equ    TLB_RSS_FILE, 20
        .equ    TLB_RSS_ANON, 24
        .equ    TLB_FOUND_N, 28
        .equ    TLB_FOUND_SUM, 32
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

@ zap_pte_range(r0 = pte, r1 = addr, r2 = end, r3 = vma; [sp] = current, [sp, #4] =
@ globals, [sp, #8] = tlb, [sp, #12] = the set_pte_ext routine): mm/memory.c 2.6.36, 891-986,
@ the loop over one PTE page's entries in [addr, end): a none PTE (*zap_work)--; a present one
@ (*zap_work) -= PAGE_SIZE, vm_normal_page, ptep_get_and_clear_full (pte_clear:
@ set_pte_ext(pte, 0, 0), the processor's routine), tlb_remove_tlb_entry, then for a page
@ rss[]--, mark_page_accessed (a young file page), page_remove_rmap, the page_mapcount check
@ and tlb_remove_page (free_page_and_swap_cache); the loop ends at end or when *zap_work
@ drops to 0 (unmap_vmas then resets it). r0 = the address where the loop stopped. The model's
@ check, not the kernel's: the tlb block's TLB_FOUND_N and TLB_FOUND_SUM take the number of
@ struct pages found and the sum of their addresses (two stores after the loop), which the
@ generic VM compares with the pages it knows.
        .globl  zap_pte_range
zap_pte_range:
        stmfd   sp!, {r4 - r11, lr}
        sub     sp, sp, #12                     @ end, found, sum (the model's check)
        ldr     r6, [sp, #48]                   @ current
        ldr     r7, [sp, #52]                   @ the globals
        ldr     r9, [sp, #56]                   @ tlb
        ldr     r11, [sp, #60]                  @ set_pte_ext
        mov     r4, r0
        mov     r5, r1
        mov     r8, r3
        str     r2, [sp]
        mov     r0, #0
        str     r0, [sp, #4]
        str     r0, [sp, #8]
1:      ldr     r0, [r4]                        @ ptent = *pte
        ldr     r1, [r9, #(TLB_ZAP_WORK)]
        cmp     r0, #0                          @ pte_none: (*zap_work)--
        subeq   r1, r1, #1
        streq   r1, [r9, #(TLB_ZAP_WORK)]
        beq     7f
        sub     r1, r1, #4096                   @ (*zap_work) -= PAGE_SIZE
        str     r1, [r9, #(TLB_ZAP_WORK)]
        tst     r0, #(L_PTE_PRESENT_Z)
        beq     7f                              @ swap and file PTEs: none in the model
        mov     r10, #0                         @ vm_normal_page
        ldr     r1, [r8, #(VM_FLAGS)]
        movw    r2, #0x0400                     @ VM_PFNMAP | VM_MIXEDMAP
        movt    r2, #0x1000
        tst     r1, r2                          @ no struct page (NULL), but still cleared
        bne     2f
        mov     r2, r0, lsr #12                 @ pte_pfn
        ldr     r3, [r7, #(G_ZERO_PFN)]         @ is_zero_pfn
        cmp     r2, r3
        beq     2f
        ldr     r3, [r7, #(G_HIGHEST_PFN)]
        cmp     r2, r3
        bhi     2f                              @ print_bad_pte's NULL: cleared too
        ldr     r3, [r7, #(G_PFN_OFFSET)]       @ pfn_to_page
        sub     r2, r2, r3
        ldr     r3, [r7, #(G_MEM_MAP)]
        add     r10, r3, r2, lsl #5
2:      str     r0, [sp, #-4]!                  @ ptep_get_and_clear_full: the old ptent,
        mov     r0, r4                          @ then pte_clear = set_pte_ext(pte, 0, 0)
        mov     r1, #0
        mov     r2, #0
        blx     r11
        ldr     r0, [sp], #4
        ldr     r1, [r9, #(TLB_FULLMM)]         @ tlb_remove_tlb_entry
        cmp     r1, #0
        bne     3f
        ldr     r1, [r9, #(TLB_RANGE_START)]
        cmp     r5, r1
        strlo   r5, [r9, #(TLB_RANGE_START)]
        ldr     r1, [r9, #(TLB_RANGE_END)]
        add     r2, r5, #4096
        cmp     r2, r1
        strhi   r2, [r9, #(TLB_RANGE_END)]
3:      cmp     r10, #0                         @ !page: continue
        beq     7f
        ldr     r1, [sp, #4]                    @ the model's check: found++, sum += page
        add     r1, r1, #1
        str     r1, [sp, #4]
        ldr     r1, [sp, #8]
        add     r1, r1, r10
        str     r1, [sp, #8]
        ldr     r1, [r10, #(PAGE_MAPPING)]      @ PageAnon
        tst     r1, #1
        beq     4f
        ldr     r1, [r9, #(TLB_RSS_ANON)]       @ rss[MM_ANONPAGES]--
        sub     r1, r1, #1
        str     r1, [r9, #(TLB_RSS_ANON)]
        b       6f
4:      tst     r0, #(L_PTE_DIRTY_Z)            @ set_page_dirty: not modelled (see above)
        tst     r0, #(L_PTE_YOUNG_Z)
        beq     5f
        ldr     r1, [r8, #(VM_FLAGS)]           @ VM_SequentialReadHint
        tst     r1, #(VM_SEQ_READ)
        bne     5f
        mov     r0, r10
        bl      mark_page_accessed
5:      ldr     r1, [r9, #(TLB_RSS_FILE)]       @ rss[MM_FILEPAGES]--
        sub     r1, r1, #1
        str     r1, [r9, #(TLB_RSS_FILE)]
6:      mov     r0, r10                         @ page_remove_rmap(page)
        mov     r1, r6
        mov     r2, r7
        bl      page_remove_rmap
        ldr     r1, [r10, #(PAGE_MAPCOUNT)]     @ page_mapcount(page) < 0: print_bad_pte
        adds    r1, r1, #1
        bmi     7f
        mov     r0, r10                         @ tlb_remove_page
        bl      free_page_and_swap_cache
7:      add     r4, r4, #4                      @ pte++, addr += PAGE_SIZE
        add     r5, r5, #4096
        ldr     r1, [sp]                        @ addr != end
        cmp     r5, r1
        beq     8f
        ldr     r1, [r9, #(TLB_ZAP_WORK)]       @ *zap_work > 0
        cmp     r1, #0
        bgt     1b
8:      ldr     r1, [sp, #4]                    @ the model's check
        ldr     r2, [sp, #8]
        str     r1, [r9, #(TLB_FOUND_N)]
        str     r2, [r9, #(TLB_FOUND_SUM)]
        mov     r0, r5
        add     sp, sp, #12
        ldmfd   sp!, {r4 - r11, pc}

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
