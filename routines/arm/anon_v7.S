/*
 * The anonymous fault's bookkeeping on an SMP ARMv7 kernel of 2.6.36 (written for the model,
 * not copied; read in a 2.6.36 tree, allwinner/linux-2.6.36 on GitHub):
 *
 *   anon_fault_head       mm/memory.c do_anonymous_page up to the page's allocation:
 *                         pte_unmap (nothing without highmem PTEs), check_stack_guard_page
 *                         (VM_GROWSDOWN at vm_start; the VM_GROWSUP test is the constant 0 on
 *                         ARM), the FAULT_FLAG_WRITE test; a read: my_zero_pfn, pfn_pte with
 *                         vm_page_prot (pte_mkspecial is the identity on ARM), returned; a
 *                         write: anon_vma_prepare's test of vma->anon_vma (mm/rmap.c)
 *   anon_fault_map        after alloc_zeroed_user_highpage_movable: __SetPageUptodate
 *                         (smp_wmb, then a plain set of the bit), mk_pte (page_to_pfn),
 *                         pte_mkwrite(pte_mkdirty) for a VM_WRITE area, pte_none(*page_table),
 *                         inc_mm_counter_fast (SPLIT_RSS_COUNTING, as NR_CPUS 4 >=
 *                         SPLIT_PTLOCK_CPUS 4 makes it: current->rss_stat when current->mm
 *                         is the fault's mm), then page_add_new_anon_rmap
 *   anon_cow_map          __do_fault's early copy-on-write after copy_user_highpage:
 *                         __SetPageUptodate, then inc_mm_counter_fast and
 *                         page_add_new_anon_rmap (anon_vma_prepare's test before the copy's
 *                         allocation, a load and a branch, is left out)
 *   page_add_new_anon_rmap  mm/rmap.c: SetPageSwapBacked (set_bit: the bitop macro),
 *                         atomic_set(&page->_mapcount, 0) (a store), __inc_zone_page_state
 *                         (NR_ANON_PAGES) (mm/vmstat.c __inc_zone_state), __page_set_anon_rmap
 *                         (PageAnon of the new page, then mapping = anon_vma +
 *                         PAGE_MAPPING_ANON and index = linear_page_index), page_evictable
 *                         (mm/vmscan.c: page_mapping's PageSwapCache and anonymous tests give
 *                         no mapping, so mapping_unevictable is 0; PageMlocked; is_mlocked_vma's
 *                         VM_LOCKED | VM_SPECIAL test), lru_cache_add_lru(LRU_ACTIVE_ANON)
 *                         (mm/swap.c: PageActive, PageUnevictable, then __lru_cache_add:
 *                         this CPU's lru_add_pvecs[LRU_ACTIVE_ANON], get_page (compound_head's
 *                         PageTail, atomic_inc of _count: no barriers), pagevec_add)
 *
 * r6 = current (the thread block) and r7 = the globals, as in fault_v7.S. anon_fault_map runs
 * under the model's page_table_lock, where the kernel takes the PTE lock after mk_pte: the
 * lock is held for __SetPageUptodate and mk_pte's few instructions too. Left out, and said so
 * by the model: anon_vma_prepare's first call in an area (the anon_vma's and its chain's slab
 * allocations, anon_vma_lock and page_table_lock: the model writes vma->anon_vma, uncharged);
 * ____pagevec_lru_add when a pagevec fills (every 14th page) is lru_v7.S's, the model's call; no memory
 * cgroup (mem_cgroup_newpage_charge is 0); preempt_disable is a compiler barrier (no
 * CONFIG_PREEMPT). update_mmu_cache and set_pte_at are the model's calls of their own.
 */
        .equ    VM_ANON_VMA, 76         @ vm_area_struct (the model's layout)
        .equ    VM_GROWSDOWN, 0x100
        .equ    VM_LOCKED_SPECIAL, 0xC6400      @ VM_LOCKED | VM_SPECIAL (IO, DONTEXPAND, RESERVED, PFNMAP)
        .equ    VM_LOCKED, 0x2000
        .equ    TSK_RSS_ANON, 52        @ current->rss_stat: events, count[MM_FILEPAGES], count[MM_ANONPAGES]
        .equ    PAGE_INDEX, 20
        .equ    PG_SWAPBACKED, 20
        .equ    PG_MLOCKED, 22
        .equ    PG_TAIL, 15
        .equ    LRU_PVEC_ANON, 448      @ the per-CPU lru_add_pvecs[LRU_ACTIVE_ANON]
        .equ    PAGEVEC_SIZE, 14
        .equ    L_PTE_DIRTY_A, 0x040
        .equ    L_PTE_WRITE_A, 0x080

@ anon_fault_head(r0 = address, r1 = write, r2 = vma, r3 = globals): a read: the zero page's
@ PTE; a write: vma->anon_vma (0: anon_vma_prepare's slow path, the model's)
        .globl  anon_fault_head
anon_fault_head:
        ldr     ip, [r2, #(VM_FLAGS)]           @ check_stack_guard_page
        tst     ip, #(VM_GROWSDOWN)
        beq     1f
        ldr     ip, [r2, #(VM_START)]
        bic     r0, r0, #0xFF0
        bic     r0, r0, #0x00F
        cmp     r0, ip                          @ the stack's lowest page (never, in the model)
1:      cmp     r1, #0                          @ FAULT_FLAG_WRITE
        ldrne   r0, [r2, #(VM_ANON_VMA)]        @ anon_vma_prepare: vma->anon_vma
        movne   pc, lr
        ldr     r0, [r3, #(G_ZERO_PFN)]         @ pfn_pte(my_zero_pfn(address), prot)
        ldr     r1, [r2, #(VM_PAGE_PROT)]
        orr     r0, r1, r0, lsl #12
        mov     pc, lr

@ anon_fault_map(r0 = struct page, r1 = current, r2 = globals, r3 = vma; [sp] = address,
@ [sp, #4] = ptep): the PTE do_anonymous_page sets, -1 if *ptep is not none
        .globl  anon_fault_map
anon_fault_map:
        stmfd   sp!, {r4 - r9, lr}
        ldr     r5, [sp, #28]                   @ address
        ldr     r9, [sp, #32]                   @ ptep
        mov     r4, r0
        mov     r6, r1
        mov     r7, r2
        mov     r8, r3
        bl      set_page_uptodate
        ldr     r0, [r7, #(G_MEM_MAP)]          @ mk_pte: page_to_pfn
        sub     r0, r4, r0
        ldr     r1, [r7, #(G_PFN_OFFSET)]
        add     r0, r1, r0, lsr #5
        ldr     r1, [r8, #(VM_PAGE_PROT)]
        orr     r0, r1, r0, lsl #12
        ldr     r1, [r8, #(VM_FLAGS)]
        tst     r1, #(VM_WRITE)
        orrne   r0, r0, #(L_PTE_DIRTY_A | L_PTE_WRITE_A)
        mov     r3, r0
        ldr     r1, [r9]                        @ pte_none(*page_table)
        mov     r9, r3
        cmp     r1, #0
        mvnne   r9, #0                          @ not none: release (never, in the model)
        bne     1f
        bl      inc_mm_counter_anon
        mov     r0, r4
        mov     r1, r8
        mov     r2, r5
        bl      page_add_new_anon_rmap
1:      mov     r0, r9
        ldmfd   sp!, {r4 - r9, pc}

@ anon_cow_map(r0 = struct page, r1 = current, r2 = globals, r3 = vma; [sp] = address)
        .globl  anon_cow_map
anon_cow_map:
        stmfd   sp!, {r4 - r9, lr}
        ldr     r5, [sp, #28]                   @ address
        mov     r4, r0
        mov     r6, r1
        mov     r7, r2
        mov     r8, r3
        bl      set_page_uptodate
        bl      inc_mm_counter_anon
        mov     r0, r4
        mov     r1, r8
        mov     r2, r5
        bl      page_add_new_anon_rmap
        ldmfd   sp!, {r4 - r9, pc}

@ __SetPageUptodate(r4 = struct page): smp_wmb, then __set_bit(PG_uptodate)
set_page_uptodate:
        dmb
        ldr     r0, [r4, #(PAGE_FLAGS)]
        orr     r0, r0, #(1 << PG_UPTODATE)
        str     r0, [r4, #(PAGE_FLAGS)]
        mov     pc, lr

@ inc_mm_counter_fast(vma->vm_mm, MM_ANONPAGES) (r6 = current, r8 = vma)
inc_mm_counter_anon:
        ldr     r0, [r6, #(TSK_MM)]
        ldr     r1, [r8]                        @ vma->vm_mm
        cmp     r0, r1
        ldreq   r0, [r6, #(TSK_RSS_ANON)]
        addeq   r0, r0, #1
        streq   r0, [r6, #(TSK_RSS_ANON)]
        mov     pc, lr                          @ (another mm: add_mm_counter, never here)

@ page_add_new_anon_rmap(r0 = struct page, r1 = vma, r2 = address; r6 = current, r7 =
@ globals): r0 = the slots left in this CPU's pagevec (0: it is full, the model drains it)
        .globl  page_add_new_anon_rmap
page_add_new_anon_rmap:
        stmfd   sp!, {r4, r5, r8, lr}
        mov     r4, r0
        mov     r8, r1
        mov     r5, r2
        mov     r1, r4                          @ SetPageSwapBacked
        mov     r0, #(PG_SWAPBACKED)
        bl      _set_bit_le
        mov     r0, #0                          @ atomic_set(&page->_mapcount, 0)
        str     r0, [r4, #(PAGE_MAPCOUNT)]
        mov     r0, r4
        mov     r1, #(NR_ANON_PAGES)
        bl      __inc_zone_page_state
        ldr     r0, [r4, #(PAGE_MAPPING)]       @ __page_set_anon_rmap: PageAnon
        tst     r0, #1
        bne     1f
        ldr     r0, [r8, #(VM_ANON_VMA)]
        add     r0, r0, #1                      @ + PAGE_MAPPING_ANON
        str     r0, [r4, #(PAGE_MAPPING)]
        ldr     r0, [r8, #(VM_START)]           @ linear_page_index
        sub     r0, r5, r0
        ldr     r1, [r8, #(VM_PGOFF)]
        add     r0, r1, r0, lsr #12
        str     r0, [r4, #(PAGE_INDEX)]
1:      ldr     r1, [r4, #(PAGE_MAPPING)]       @ page_evictable: page_mapping
        ldr     r0, [r4, #(PAGE_FLAGS)]         @ PageSwapCache (never, in the model)
        tst     r0, #(1 << PG_SWAPCACHE)
        bne     2f
        tst     r1, #1                          @ anonymous: no mapping, so evictable
        beq     2f                              @ (a file's: mapping_unevictable, never)
        ldr     r0, [r4, #(PAGE_FLAGS)]         @ PageMlocked
        tst     r0, #(1 << PG_MLOCKED)
        bne     2f
        ldr     r0, [r8, #(VM_FLAGS)]           @ is_mlocked_vma
        movw    r1, #:lower16:VM_LOCKED_SPECIAL
        movt    r1, #:upper16:VM_LOCKED_SPECIAL
        and     r0, r0, r1
        cmp     r0, #(VM_LOCKED)
2:      ldr     r0, [r4, #(PAGE_FLAGS)]         @ lru_cache_add_lru: PageActive
        tst     r0, #(1 << PG_ACTIVE)
        bne     3f
        ldr     r0, [r4, #(PAGE_FLAGS)]         @ PageUnevictable
        tst     r0, #(1 << PG_UNEVICTABLE)
3:      ldr     r1, [r6, #(TI_CPU)]             @ __lru_cache_add: this CPU's pagevec
        ldr     r2, [r7, #(G_PER_CPU_OFFSET)]
        ldr     r2, [r2, r1, lsl #2]
        ldr     r5, [r7, #(G_VM_EVENTS)]        @ the per-CPU areas' base
        add     r5, r5, r2
        add     r5, r5, #(LRU_PVEC_ANON)
        ldr     r0, [r4, #(PAGE_FLAGS)]         @ get_page: compound_head's PageTail
        tst     r0, #(1 << PG_TAIL)
        add     r0, r4, #(PAGE_COUNT_Z)         @ atomic_inc(&page->_count)
        mov     r2, #1
        bl      atomic_add
        ldr     r1, [r5]                        @ pagevec_add: pages[nr++] = page
        add     r2, r5, r1, lsl #2
        str     r4, [r2, #8]
        add     r1, r1, #1
        str     r1, [r5]
        rsb     r0, r1, #(PAGEVEC_SIZE)         @ pagevec_space
        ldmfd   sp!, {r4, r5, r8, pc}

@ __inc_zone_page_state(r0 = struct page, r1 = item; r6 = current, r7 = globals)
__inc_zone_page_state:
        ldr     r0, [r0, #(PAGE_FLAGS)]         @ page_zone: zone 0 (the flags' zone bits)
        ldr     r0, [r7, #(G_ZONES)]
@ __inc_zone_state(r0 = zone, r1 = item; r6 = current, r7 = globals)
__inc_zone_state:
        stmfd   sp!, {r4, r5, lr}
        ldr     r2, [r0, #(ZONE_PAGESET)]       @ this_cpu_ptr(zone->pageset)
        ldr     r3, [r6, #(TI_CPU)]
        ldr     ip, [r7, #(G_PER_CPU_OFFSET)]
        ldr     r3, [ip, r3, lsl #2]
        add     r2, r2, r3
        add     r4, r2, r1                      @ p = pcp->vm_stat_diff + item
        ldrsb   r3, [r4, #(PCP_VM_STAT_DIFF)]   @ (*p)++
        add     r3, r3, #1
        strb    r3, [r4, #(PCP_VM_STAT_DIFF)]
        ldrsb   ip, [r2, #(PCP_STAT_THRESHOLD)]
        cmp     r3, ip                          @ *p > threshold?
        ble     1f
        mov     ip, ip, asr #1                  @ overstep = threshold / 2
        add     r2, r3, ip                      @ zone_page_state_add(*p + overstep)
        rsb     ip, ip, #0
        strb    ip, [r4, #(PCP_VM_STAT_DIFF)]   @ *p = -overstep
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
