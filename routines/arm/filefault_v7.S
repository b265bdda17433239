/*
 * __do_fault_file: a minor fault on a cached page-cache page of an SMP ARMv7 kernel of
 * 2.6.36 from filemap_fault's find_get_page to __do_fault's pte_unmap_unlock, in one call
 * (written for the model, not copied; read in allwinner/linux-2.6.36). Its steps are the
 * routines of fault_v7.S, pagelock.S, proc_v7.S and spinlock.S the model called one by one
 * before; this file is loaded after the others, so that none of them moves.
 */
        .equ    FLT_PTEP, 76            @ fault_v7.S's thread block
@ __do_fault_file(r0 = mapping, r1 = pgoff, r2 = thread, r3 = globals; on the stack: the
@ PTE lock's word (0: none, one CPU), the Linux PTE set_pte_at stores, cpu_v7_set_pte_ext's
@ address (PK1's or not), spin_lock's and spin_unlock's): a minor fault on a cached
@ page-cache page from filemap_fault's find_get_page to __do_fault's pte_unmap_unlock, in
@ one call (mm/filemap.c 1535-1542, filemap_fault: find_get_page, lock_page; mm/memory.c
@ 2936-3060, __do_fault after ->fault: pte_offset_map_lock, pte_same, page_add_file_rmap,
@ set_pte_at, pte_unmap_unlock; read in allwinner/linux-2.6.36). The steps are the calls
@ the model made one by one (the same routines, in the same order: do_async_mmap_readahead
@ stays after lock_page, in __do_fault_map), this routine their caller. The results go to
@ the thread block: the struct page found, lock_page's waits, mk_pte's PTE. r0 = 0, or -1
@ where a step refused (no page, truncated, not uptodate, the PTE changed): nothing set.
        .equ    FLT_FOUND, 80
        .equ    FLT_WAITS, 84
        .equ    FLT_MK_PTE, 88
        .equ    PTE_EXT_NG, 0x800
        .globl  __do_fault_file
__do_fault_file:
        stmfd   sp!, {r4, r5, r8, r9, lr}
        mov     r8, r2
        mov     r9, r3
        bl      find_get_page
        str     r0, [r8, #(FLT_FOUND)]
        movs    r4, r0
        beq     9f
        bl      lock_page                       @ filemap_fault: lock_page(page)
        str     r0, [r8, #(FLT_WAITS)]
        mov     r0, r4
        mov     r1, r8
        mov     r2, r9
        mov     r3, #1
        bl      __do_fault_map
        str     r0, [r8, #(FLT_MK_PTE)]
        cmn     r0, #1
        beq     9f
        ldr     r5, [sp, #20]                   @ pte_offset_map_lock: the PTE lock
        cmp     r5, #0
        movne   r0, r5
        ldrne   r12, [sp, #32]
        blxne   r12
        ldr     r0, [r8, #(FLT_PTEP)]           @ set_pte_at: set_pte_ext(ptep, pte, nG)
        ldr     r1, [sp, #24]
        mov     r2, #(PTE_EXT_NG)
        ldr     r12, [sp, #28]
        blx     r12
        cmp     r5, #0                          @ pte_unmap_unlock
        movne   r0, r5
        ldrne   r12, [sp, #36]
        blxne   r12
        mov     r0, #0
        ldmfd   sp!, {r4, r5, r8, r9, pc}
9:      mvn     r0, #0
        ldmfd   sp!, {r4, r5, r8, r9, pc}
