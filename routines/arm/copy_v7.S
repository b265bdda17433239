/*
 * copy_pte_range over one PTE page, on an SMP ARMv7 kernel of 2.6.36 (written for the model,
 * not copied; read in a 2.6.36 tree, allwinner/linux-2.6.36 on GitHub):
 *
 *   copy_pte_range        mm/memory.c 722-782: init_rss_vec, the loop over the PTE page's
 *                         entries in [addr, end): every 32 of progress need_resched
 *                         (spin_needbreak is 0 without CONFIG_PREEMPT), pte_none
 *                         (progress++), else copy_one_pte and progress += 8; then
 *                         add_mm_rss_vec(dst_mm, rss) (454-463: sync_mm_rss only when
 *                         current->mm is dst_mm, never in fork; add_mm_counter of each
 *                         non-zero count, an atomic_long_add, include/linux/mm.h 904-907)
 *   copy_one_pte          mm/memory.c 650-720, for a present PTE: is_cow_mapping (529-532:
 *                         (vm_flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE) ->
 *                         ptep_set_wrprotect (include/asm-generic/pgtable.h 95-99, which ARM
 *                         does not override: set_pte_at of the PTE less L_PTE_WRITE, written
 *                         whether or not it was writable) and pte_wrprotect; VM_SHARED ->
 *                         pte_mkclean; pte_mkold; vm_normal_page (as zap_v7.S: ARM has no
 *                         pte_special); for a page get_page (include/linux/mm.h 319-324:
 *                         compound_head's PageTail, atomic_inc of _count), page_dup_rmap
 *                         (include/linux/rmap.h 176-179: atomic_inc of _mapcount), rss[]++ by
 *                         PageAnon; then set_pte_at(dst_mm, addr, dst_pte, pte)
 *   set_pte_at            arch/arm/include/asm/pgtable.h 281-283: set_pte_ext(ptep, pte,
 *                         addr >= TASK_SIZE ? 0 : PTE_EXT_NG), a call of the processor's
 *                         cpu_v7_set_pte_ext (PK1's or not), passed by the model
 *   atomic_inc, atomic_long_add  arch/arm/include/asm/atomic.h 37-51 (ARMv6+): a
 *                         ldrex/add/strex loop, no barrier
 *
 * What the model leaves out, and says so: swap and file PTEs (the model has none: a PTE
 * neither none nor present is copied as it is, without swap_duplicate), and with them
 * rss[MM_SWAPENTS] (init_rss_vec's third word and add_mm_rss_vec's third test: about three
 * instructions a call); sync_mm_rss's branch (its test is here, never taken); pte_alloc_map_lock,
 * pte_offset_map_nested and the two PTE locks (the model's page_table_lock of both mm is held
 * around the whole area, emu.kernel.process fork, and the PTE pointers come in as
 * arguments); the walk down copy_page_range, copy_pud_range and copy_pmd_range (in the VMA's
 * fixed dup_vma). The model's check, not the kernel's: the block at [sp, #20] takes the
 * number of struct pages found and the sum of their addresses (two stores after the loop),
 * which the generic VM compares with the pages it knows.
 */
        .equ    CPY_END, 0              @ the frame: end, progress, rss[MM_FILEPAGES],
        .equ    CPY_PROGRESS, 4         @ rss[MM_ANONPAGES], the check's count and sum
        .equ    CPY_RSS_FILE, 8
        .equ    CPY_RSS_ANON, 12
        .equ    CPY_FOUND_N, 16
        .equ    CPY_FOUND_SUM, 20
        .equ    CPY_FRAME, 24
        .equ    CPY_ARGS, 60            @ the stacked arguments: CPY_FRAME + 9 saved words
        .equ    CHECK_FOUND_N, 0        @ the model's check block
        .equ    CHECK_FOUND_SUM, 4
        .equ    MM_RSS_FILE, 32         @ mm->rss_stat.count[MM_FILEPAGES] (the model's layout)
        .equ    MM_RSS_ANON, 36         @ count[MM_ANONPAGES]
        .equ    VM_SHARED_C, 0x08
        .equ    VM_MAYWRITE_C, 0x20
        .equ    TIF_NEED_RESCHED_C, 1
        .equ    PTE_EXT_NG_C, 0x800
        .equ    USER_TASK_SIZE, 0x80000000      @ TASK_SIZE of the model's 2G/2G split

@ copy_pte_range(r0 = dst_pte, r1 = src_pte, r2 = addr, r3 = end; [sp] = vma, [sp, #4] =
@ current, [sp, #8] = globals, [sp, #12] = dst_mm, [sp, #16] = the set_pte_ext routine,
@ [sp, #20] = the model's check block): mm/memory.c 2.6.36, 722-782 with copy_one_pte
@ (650-720) inlined, over one PTE page's entries in [addr, end). r0 = the address where the
@ loop stopped (end, or earlier where need_resched broke it: never in the model).
        .globl  copy_pte_range
copy_pte_range:
        stmfd   sp!, {r4 - r11, lr}
        sub     sp, sp, #(CPY_FRAME)
        mov     r4, r0                          @ dst_pte
        mov     r5, r1                          @ src_pte
        mov     r6, r2                          @ addr
        str     r3, [sp, #(CPY_END)]
        ldr     r8, [sp, #(CPY_ARGS)]           @ vma
        ldr     r7, [sp, #(CPY_ARGS + 8)]       @ the globals
        ldr     r11, [sp, #(CPY_ARGS + 16)]     @ set_pte_ext
        mov     r0, #0                          @ progress = 0, init_rss_vec, the check's
        str     r0, [sp, #(CPY_PROGRESS)]
        str     r0, [sp, #(CPY_RSS_FILE)]
        str     r0, [sp, #(CPY_RSS_ANON)]
        str     r0, [sp, #(CPY_FOUND_N)]
        str     r0, [sp, #(CPY_FOUND_SUM)]
1:      ldr     r1, [sp, #(CPY_PROGRESS)]       @ progress >= 32
        cmp     r1, #32
        blt     2f
        mov     r1, #0
        str     r1, [sp, #(CPY_PROGRESS)]
        ldr     r2, [sp, #(CPY_ARGS + 4)]       @ need_resched(): current's TIF_NEED_RESCHED
        ldr     r2, [r2, #(TI_FLAGS)]
        tst     r2, #(1 << TIF_NEED_RESCHED_C)
        bne     9f
2:      ldr     r0, [r5]                        @ pte_none(*src_pte): progress++
        cmp     r0, #0
        bne     3f
        ldr     r1, [sp, #(CPY_PROGRESS)]
        add     r1, r1, #1
        str     r1, [sp, #(CPY_PROGRESS)]
        b       8f
3:      mov     r10, r0                         @ copy_one_pte: pte = *src_pte
        tst     r0, #(L_PTE_PRESENT_Z)
        beq     6f                              @ swap and file PTEs: none in the model
        ldr     r9, [r8, #(VM_FLAGS)]           @ is_cow_mapping(vm_flags)
        and     r1, r9, #(VM_SHARED_C | VM_MAYWRITE_C)
        cmp     r1, #(VM_MAYWRITE_C)
        bne     4f
        bic     r10, r10, #(L_PTE_WRITE_A)      @ ptep_set_wrprotect: set_pte_at(src_mm,
        mov     r0, r5                          @ addr, src_pte, pte_wrprotect(old_pte)),
        mov     r1, r10                         @ then pte = pte_wrprotect(pte)
        cmp     r6, #(USER_TASK_SIZE)
        movhs   r2, #0
        movlo   r2, #(PTE_EXT_NG_C)
        blx     r11
4:      tst     r9, #(VM_SHARED_C)              @ pte_mkclean
        bicne   r10, r10, #(L_PTE_DIRTY_Z)
        bic     r10, r10, #(L_PTE_YOUNG_Z)      @ pte_mkold
        movw    r2, #0x0400                     @ vm_normal_page: VM_PFNMAP | VM_MIXEDMAP
        movt    r2, #0x1000
        tst     r9, r2
        bne     6f
        mov     r2, r10, lsr #12                @ pte_pfn
        ldr     r3, [r7, #(G_ZERO_PFN)]         @ is_zero_pfn
        cmp     r2, r3
        beq     6f
        ldr     r3, [r7, #(G_HIGHEST_PFN)]
        cmp     r2, r3
        bhi     6f                              @ print_bad_pte's NULL
        ldr     r3, [r7, #(G_PFN_OFFSET)]       @ pfn_to_page
        sub     r2, r2, r3
        ldr     r3, [r7, #(G_MEM_MAP)]
        add     r9, r3, r2, lsl #5
        ldr     r1, [r9, #(PAGE_FLAGS)]         @ get_page: compound_head's PageTail (none
        tst     r1, #(1 << PG_TAIL)             @ in the model)
        add     r3, r9, #(PAGE_COUNT_Z)         @ atomic_inc(&page->_count)
5:      ldrex   r1, [r3]
        add     r1, r1, #1
        strex   r2, r1, [r3]
        teq     r2, #0
        bne     5b
        add     r3, r9, #(PAGE_MAPCOUNT)        @ page_dup_rmap: atomic_inc(&page->_mapcount)
5:      ldrex   r1, [r3]
        add     r1, r1, #1
        strex   r2, r1, [r3]
        teq     r2, #0
        bne     5b
        ldr     r1, [r9, #(PAGE_MAPPING)]       @ PageAnon: rss[MM_ANONPAGES]++, else
        tst     r1, #1                          @ rss[MM_FILEPAGES]++
        ldrne   r1, [sp, #(CPY_RSS_ANON)]
        addne   r1, r1, #1
        strne   r1, [sp, #(CPY_RSS_ANON)]
        ldreq   r1, [sp, #(CPY_RSS_FILE)]
        addeq   r1, r1, #1
        streq   r1, [sp, #(CPY_RSS_FILE)]
        ldr     r1, [sp, #(CPY_FOUND_N)]        @ the model's check: found++, sum += page
        add     r1, r1, #1
        str     r1, [sp, #(CPY_FOUND_N)]
        ldr     r1, [sp, #(CPY_FOUND_SUM)]
        add     r1, r1, r9
        str     r1, [sp, #(CPY_FOUND_SUM)]
6:      mov     r0, r4                          @ out_set_pte: set_pte_at(dst_mm, addr,
        mov     r1, r10                         @ dst_pte, pte)
        cmp     r6, #(USER_TASK_SIZE)
        movhs   r2, #0
        movlo   r2, #(PTE_EXT_NG_C)
        blx     r11
        ldr     r1, [sp, #(CPY_PROGRESS)]       @ progress += 8
        add     r1, r1, #8
        str     r1, [sp, #(CPY_PROGRESS)]
8:      add     r4, r4, #4                      @ dst_pte++, src_pte++, addr += PAGE_SIZE
        add     r5, r5, #4
        add     r6, r6, #4096
        ldr     r1, [sp, #(CPY_END)]            @ addr != end
        cmp     r6, r1
        bne     1b
9:      ldr     r0, [sp, #(CPY_ARGS + 12)]      @ add_mm_rss_vec(dst_mm, rss)
        ldr     r1, [sp, #(CPY_ARGS + 4)]       @ current->mm == mm: sync_mm_rss (never:
        ldr     r1, [r1, #(TSK_MM)]             @ current is the parent)
        cmp     r1, r0
        ldr     r2, [sp, #(CPY_RSS_FILE)]       @ rss[MM_FILEPAGES]: atomic_long_add
        cmp     r2, #0
        beq     5f
        add     r3, r0, #(MM_RSS_FILE)
4:      ldrex   r1, [r3]
        add     r1, r1, r2
        strex   ip, r1, [r3]
        teq     ip, #0
        bne     4b
5:      ldr     r2, [sp, #(CPY_RSS_ANON)]       @ rss[MM_ANONPAGES]
        cmp     r2, #0
        beq     6f
        add     r3, r0, #(MM_RSS_ANON)
4:      ldrex   r1, [r3]
        add     r1, r1, r2
        strex   ip, r1, [r3]
        teq     ip, #0
        bne     4b
6:      ldr     r3, [sp, #(CPY_ARGS + 20)]      @ the model's check
        ldr     r1, [sp, #(CPY_FOUND_N)]
        ldr     r2, [sp, #(CPY_FOUND_SUM)]
        str     r1, [r3, #(CHECK_FOUND_N)]
        str     r2, [r3, #(CHECK_FOUND_SUM)]
        mov     r0, r6
        add     sp, sp, #(CPY_FRAME)
        ldmfd   sp!, {r4 - r11, pc}
