/*
 * do_wp_page's bookkeeping on an SMP ARMv7 kernel of 2.6.36 (written for the model, not
 * copied; read in a 2.6.36 tree, allwinner/linux-2.6.36 on GitHub, mm/memory.c lines
 * 2107-2346, mm/swapfile.c 653-669, mm/rmap.c 769-780, arch/arm/mm/flush.c 77-91,
 * include/asm-generic/pgtable.h 17-25 and 84-91, arch/arm/include/asm/cachetype.h):
 *
 *   wp_page_head          vm_normal_page(vma, address, orig_pte) (ARM has no pte_special:
 *                         the VM_PFNMAP|VM_MIXEDMAP test, is_zero_pfn, highest_memmap_pfn,
 *                         pfn_to_page), then PageAnon(old_page) && !PageKsm(old_page)
 *   wp_reuse_test         after trylock_page (the model's lock_page): reuse_swap_page
 *                         (PageKsm, page_mapcount = _mapcount + 1, PageSwapCache when the count
 *                         is at most 1, count <= 1), and on reuse page_move_anon_rmap
 *                         (page->mapping = vma->anon_vma + PAGE_MAPPING_ANON)
 *   wp_reuse_pte          the reuse: flush_cache_page, pte_mkyoung, pte_mkdirty,
 *                         maybe_mkwrite, ptep_set_access_flags' pte_same; the PTE to set, 0
 *                         if unchanged (no set_pte_at, flush_tlb_page nor update_mmu_cache)
 *   wp_copy_head          the copy's start: page_cache_get(old_page) (get_page: the
 *                         compound_head test, atomic_inc), anon_vma_prepare's test of
 *                         vma->anon_vma, is_zero_pfn(pte_pfn(orig_pte))
 *   wp_copy_map           after the allocation and cow_user_page (or the zeroed page):
 *                         __SetPageUptodate, the VM_LOCKED test, pte_same(*page_table,
 *                         orig_pte) under the PTE lock, the rss counters (a file page's copy:
 *                         dec_mm_counter_fast(MM_FILEPAGES) and inc(MM_ANONPAGES); the zero
 *                         page's: inc(MM_ANONPAGES)), flush_cache_page, mk_pte, pte_mkdirty,
 *                         maybe_mkwrite; the PTE to set, -1 if *page_table changed
 *   wp_copy_rmap          page_add_new_anon_rmap (anon_v7.S) of the new page
 *   wp_put_old            the two page_cache_release of the old page (the reference
 *                         wp_copy_head took, then the mapping's: new_page = old_page), each
 *                         put_page: PageCompound, put_page_testzero (atomic_dec_and_test)
 *
 * flush_cache_page on ARMv7 (cachetype.h: v7 is never VIVT and its VIPT never aliases, so
 * cache_is_vivt and cache_is_vipt_aliasing are the constant 0) is the VM_EXEC test and, for
 * an executable area, icache_is_vivt_asid_tagged's load of cacheid: the Cortex-A9's I-cache
 * is VIPT (CTR L1Ip = 0b10), so cacheid has no CACHEID_ASID_TAGGED and nothing is flushed.
 *
 * The model calls these in do_wp_page's order around its own steps: lock_page and
 * unlock_page (pagelock.S), the allocation (a fixed cost), copy_user_highpage (copy_page
 * and, before PK3, the flush) or clear_page, ptep_clear_flush (cpu_v7_set_pte_ext with 0,
 * then flush_tlb_page), set_pte_at and update_mmu_cache (the model's calls), and
 * page_remove_rmap of the old page (zap_v7.S). Left out, and said so: the trylock's failure
 * (the model's lock_page waits), a page_mkwrite of a shared writable file mapping (no
 * workload of the ARM chapter writes one), clear_page_mlock (no VM_LOCKED area), the memory
 * cgroup (none: mem_cgroup_newpage_charge is 0), the put that frees the old page (the
 * model's free_page, a fixed cost) and anon_vma_prepare's slow path (the model's).
 */
        .equ    G_CACHEID, 48           @ the globals: cacheid
        .equ    CACHEID_ASID_TAGGED, 8
        .equ    PAGE_MAPPING_FLAGS, 3
        .equ    PAGE_MAPPING_KSM_ANON, 3
        .equ    VM_EXEC_W, 4
        .equ    TSK_RSS_FILE, 48        @ current->rss_stat.count[MM_FILEPAGES]

@ wp_page_head(r0 = orig_pte, r1 = vma, r2 = globals): r0 = the struct page (0: none, the
@ zero page), its bit 0 set when the page is anonymous and not KSM's
        .globl  wp_page_head
wp_page_head:
        ldr     r3, [r1, #(VM_FLAGS)]           @ vm_normal_page: VM_PFNMAP | VM_MIXEDMAP
        movw    ip, #0x0400
        movt    ip, #0x1000
        tst     r3, ip
        bne     9f                              @ (never, in the model)
        mov     r0, r0, lsr #12                 @ pte_pfn
        ldr     r3, [r2, #(G_ZERO_PFN)]         @ is_zero_pfn: no page
        cmp     r0, r3
        beq     9f
        ldr     r3, [r2, #(G_HIGHEST_PFN)]
        cmp     r0, r3
        bhi     9f                              @ print_bad_pte (never)
        ldr     r3, [r2, #(G_PFN_OFFSET)]       @ pfn_to_page
        sub     r0, r0, r3
        ldr     r3, [r2, #(G_MEM_MAP)]
        add     r0, r3, r0, lsl #5
        ldr     r3, [r0, #(PAGE_MAPPING)]       @ PageAnon && !PageKsm
        tst     r3, #1
        moveq   pc, lr
        and     r3, r3, #(PAGE_MAPPING_FLAGS)
        cmp     r3, #(PAGE_MAPPING_KSM_ANON)
        orrne   r0, r0, #1
        mov     pc, lr
9:      mov     r0, #0
        mov     pc, lr

@ wp_reuse_test(r0 = struct page, r1 = vma): reuse_swap_page, then page_move_anon_rmap on
@ reuse; r0 = 1 to reuse, 0 to copy
        .globl  wp_reuse_test
wp_reuse_test:
        ldr     r3, [r0, #(PAGE_MAPPING)]       @ reuse_swap_page: PageKsm
        and     r3, r3, #(PAGE_MAPPING_FLAGS)
        cmp     r3, #(PAGE_MAPPING_KSM_ANON)
        moveq   r0, #0
        moveq   pc, lr
        ldr     r3, [r0, #(PAGE_MAPCOUNT)]      @ count = page_mapcount(page)
        add     r3, r3, #1
        cmp     r3, #1
        bgt     1f
        ldr     r2, [r0, #(PAGE_FLAGS)]         @ PageSwapCache (never, in the model)
        tst     r2, #(1 << PG_SWAPCACHE)
1:      cmp     r3, #1                          @ count <= 1
        movgt   r0, #0
        movgt   pc, lr
        ldr     r3, [r1, #(VM_ANON_VMA)]        @ page_move_anon_rmap
        add     r3, r3, #1                      @ + PAGE_MAPPING_ANON
        str     r3, [r0, #(PAGE_MAPPING)]
        mov     r0, #1
        mov     pc, lr

@ flush_cache_page(r1 = vma, r3 = globals), ARMv7: nothing to flush on the Cortex-A9
flush_cache_page:
        ldr     ip, [r1, #(VM_FLAGS)]           @ vma->vm_flags & VM_EXEC
        tst     ip, #(VM_EXEC_W)
        moveq   pc, lr
        ldr     ip, [r3, #(G_CACHEID)]          @ icache_is_vivt_asid_tagged
        tst     ip, #(CACHEID_ASID_TAGGED)
        mov     pc, lr                          @ (__flush_icache_all: never on the A9)

@ wp_reuse_pte(r0 = orig_pte, r1 = vma, r2 = ptep, r3 = globals): the PTE to set, 0 if
@ *ptep is that PTE already
        .globl  wp_reuse_pte
wp_reuse_pte:
        stmfd   sp!, {r4, lr}
        mov     r4, r0
        bl      flush_cache_page
        orr     r0, r4, #(L_PTE_YOUNG)          @ pte_mkyoung
        orr     r0, r0, #(L_PTE_DIRTY)          @ pte_mkdirty
        ldr     ip, [r1, #(VM_FLAGS)]           @ maybe_mkwrite
        tst     ip, #(VM_WRITE)
        orrne   r0, r0, #(L_PTE_WRITE)
        ldr     ip, [r2]                        @ ptep_set_access_flags: !pte_same
        cmp     ip, r0
        moveq   r0, #0
        ldmfd   sp!, {r4, pc}

@ wp_copy_head(r0 = struct page or 0, r1 = vma, r2 = orig_pte, r3 = globals): r0 =
@ vma->anon_vma (0: anon_vma_prepare's slow path, the model's)
        .globl  wp_copy_head
wp_copy_head:
        stmfd   sp!, {r4 - r6, lr}
        mov     r4, r1
        mov     r5, r2
        mov     r6, r3
        cmp     r0, #0                          @ no page (the zero page): goto gotten
        beq     1f
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ page_cache_get = get_page: PageTail
        tst     r1, #(1 << PG_TAIL)
        add     r0, r0, #(PAGE_COUNT_Z)         @ atomic_inc(&page->_count)
        mov     r2, #1
        bl      atomic_add
1:      ldr     r0, [r4, #(VM_ANON_VMA)]        @ anon_vma_prepare: vma->anon_vma
        ldr     r1, [r6, #(G_ZERO_PFN)]         @ is_zero_pfn(pte_pfn(orig_pte))
        cmp     r1, r5, lsr #12
        ldmfd   sp!, {r4 - r6, pc}

@ wp_copy_map(r0 = new struct page, r1 = current, r2 = globals, r3 = vma; [sp] = address,
@ [sp, #4] = ptep, [sp, #8] = orig_pte, [sp, #12] = old struct page or 0): the PTE of the
@ new page, -1 if *ptep is no longer orig_pte
        .globl  wp_copy_map
wp_copy_map:
        stmfd   sp!, {r4 - r9, lr}
        ldr     r9, [sp, #32]                   @ ptep
        mov     r4, r0
        mov     r6, r1
        mov     r7, r2
        mov     r8, r3
        bl      set_page_uptodate
        ldr     r0, [r8, #(VM_FLAGS)]           @ VM_LOCKED && old_page (never, here)
        tst     r0, #(VM_LOCKED)
        ldr     r0, [r9]                        @ pte_same(*page_table, orig_pte)
        ldr     r1, [sp, #36]
        cmp     r0, r1
        mvnne   r0, #0
        bne     9f
        ldr     r0, [sp, #40]                   @ old_page
        cmp     r0, #0
        beq     1f                              @ none: inc_mm_counter_fast(MM_ANONPAGES)
        ldr     r0, [r0, #(PAGE_MAPPING)]       @ !PageAnon: a file page's private copy
        tst     r0, #1
        bne     2f
        ldr     r0, [r6, #(TSK_MM)]             @ dec_mm_counter_fast(mm, MM_FILEPAGES)
        ldr     r1, [r8]
        cmp     r0, r1
        ldreq   r0, [r6, #(TSK_RSS_FILE)]
        subeq   r0, r0, #1
        streq   r0, [r6, #(TSK_RSS_FILE)]
1:      bl      inc_mm_counter_anon
2:      mov     r1, r8
        mov     r3, r7
        bl      flush_cache_page
        ldr     r0, [r7, #(G_MEM_MAP)]          @ mk_pte: page_to_pfn
        sub     r0, r4, r0
        ldr     r1, [r7, #(G_PFN_OFFSET)]
        add     r0, r1, r0, lsr #5
        ldr     r1, [r8, #(VM_PAGE_PROT)]
        orr     r0, r1, r0, lsl #12
        orr     r0, r0, #(L_PTE_DIRTY)          @ pte_mkdirty
        ldr     r1, [r8, #(VM_FLAGS)]           @ maybe_mkwrite
        tst     r1, #(VM_WRITE)
        orrne   r0, r0, #(L_PTE_WRITE)
9:      ldmfd   sp!, {r4 - r9, pc}

@ wp_copy_rmap(r0 = new struct page, r1 = current, r2 = globals, r3 = vma; [sp] = address):
@ page_add_new_anon_rmap; r0 = the slots left in this CPU's pagevec
        .globl  wp_copy_rmap
wp_copy_rmap:
        stmfd   sp!, {r6, r7, lr}
        mov     r6, r1
        mov     r7, r2
        mov     r1, r3
        ldr     r2, [sp, #12]                   @ address
        bl      page_add_new_anon_rmap
        ldmfd   sp!, {r6, r7, pc}

@ wp_put_old(r0 = old struct page): two put_page; r0 = the references left
        .globl  wp_put_old
wp_put_old:
        stmfd   sp!, {r4, lr}
        mov     r4, r0
        bl      put_page
        mov     r0, r4
        bl      put_page
        ldmfd   sp!, {r4, pc}

@ put_page(r0 = struct page) (mm/swap.c): PageCompound, put_page_testzero; r0 = the count
put_page:
        ldr     r1, [r0, #(PAGE_FLAGS)]         @ PageCompound (PG_head, PG_tail)
        tst     r1, #(PG_COMPOUND_MASK)
        add     r3, r0, #(PAGE_COUNT_Z)         @ atomic_dec_and_test
        ATOMIC_OP_RETURN sub, r3, r1, r2, #1
        mov     r0, r1                          @ zero: __put_single_page (the model's)
        mov     pc, lr
