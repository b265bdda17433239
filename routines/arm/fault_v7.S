/*
 * The generic page-fault path of an SMP ARMv7 kernel of 2.6.36, as far as it decides the
 * cost of a minor file fault (written for the model, not copied; read in mainline 2.6.36):
 *
 *   do_page_fault_enter   the data abort's way in: vector_stub and __dabt_usr's usr_entry
 *                         (arch/arm/kernel/entry-armv.S: the abort mode's three words, the
 *                         pt_regs frame), v7_early_abort (arch/arm/mm/abort-ev7.S: clrex,
 *                         DFSR, FAR), do_DataAbort (arch/arm/mm/fault.c: fsr_info[fsr_fs]),
 *                         then, through the table's pointer:
 *   do_page_fault         arch/arm/mm/fault.c: in_atomic / !mm, down_read_trylock of
 *                         mmap_sem (ARM has RWSEM_GENERIC_SPINLOCK: lib/rwsem-spinlock.c,
 *                         the semaphore's wait_lock taken with interrupts off), the perf
 *                         software event's test, __do_page_fault: find_vma, the access
 *                         check (READ_FAULT: FSR bit 11), handle_mm_fault
 *   find_vma              mm/mmap.c: mm->mmap_cache, else the rb-tree walk
 *   handle_mm_fault       mm/memory.c: __set_current_state, count_vm_event(PGFAULT) (a
 *                         per-CPU counter), pgd_offset (pud and pmd folded), the pmd's
 *                         check, pte_offset_map, then handle_pte_fault: the PTE read, and
 *                         for pte_none with vm_ops->fault do_linear_fault (pgoff) and
 *                         __do_fault's vm_fault on the stack and its call of ->fault
 *   filemap_fault         mm/filemap.c, up to find_get_page: file, mapping, inode,
 *                         i_size_read (a seqcount on SMP 32-bit: two smp_rmb), the SIGBUS
 *                         test. For a cached page filefault_v7.S's __do_fault_file then
 *                         calls find_get_page, lock_page, __do_fault_map, the PTE lock
 *                         and set_pte_ext in one guest call (else the model calls them
 *                         one by one):
 *   __do_fault_map        the rest of filemap_fault for a cached page
 *                         (do_async_mmap_readahead: VM_RandomReadHint, ra->mmap_miss,
 *                         PageReadahead; after lock_page: page->mapping, PageUptodate,
 *                         i_size_read again, ra->prev_pos), and __do_fault's after
 *                         ->fault: pte_same, mk_pte (page_to_pfn), page_add_file_rmap
 *   page_add_file_rmap    mm/rmap.c: atomic_inc_and_test(&page->_mapcount) (ARMv7's
 *                         atomic_add_return: smp_mb, ldrex/strex, smp_mb); the first
 *                         mapping __inc_zone_page_state(NR_FILE_MAPPED) (mm/vmstat.c: the
 *                         per-CPU diff, folded into the zone's and the global atomic
 *                         counters past stat_threshold); no memory cgroup
 *   do_page_fault_exit    __do_page_fault's min_flt, up_read, perf's test, do_DataAbort's
 *                         return, ret_from_exception / ret_to_user (TI_FLAGS) and
 *                         restore_user_regs (clrex, the frame's 15 words)
 *
 * find_get_page (2.6.36 mm/filemap.c, lib/radix-tree.c radix_tree_lookup_slot) is here
 * too: the radix-tree walk from the mapping's root (64 slots a node), then the speculative
 * reference (pagelock.S) and the recheck of the slot.
 *
 * The model's layout of the structures (offsets below) keeps the kernel's fields that
 * these paths read, at offsets of its own: a field's line matters, its offset within the
 * structure less. The kernel finds current from sp and its globals by address; the model
 * passes the thread block (thread_info + task_struct + the pt_regs frame on the kernel
 * stack) and a block of the globals' addresses, kept in r6 and r7 across the path. The
 * modes are not switched (the model runs in SVC mode): the vector's mode change, the user
 * registers' banked store and the exception return are left out, their loads and stores
 * kept. Interrupts are not masked on the way in (the model counts irq-off time from
 * cpsid): only the semaphore's wait_lock masks them, as the kernel's.
 */
        @ the thread block (the model's layout)
        .equ    TI_FLAGS, 0
        .equ    TI_PREEMPT, 4
        .equ    TI_CPU, 8
        .equ    TSK_STATE, 32
        .equ    TSK_MM, 36
        .equ    TSK_MIN_FLT, 40
        .equ    FLT_VMA, 64             @ what the enter found (for the model's check)
        .equ    FLT_PGOFF, 68
        .equ    FLT_PTE, 72
        .equ    FLT_PTEP, 76
        .equ    TI_REGS, 128            @ the pt_regs frame, 72 bytes
        .equ    S_PSR, 64
        .equ    S_PC, 60
        @ the globals block
        .equ    G_PER_CPU_OFFSET, 0     @ __per_cpu_offset[]
        .equ    G_VM_EVENTS, 4          @ vm_event_states (per-CPU)
        .equ    G_PERF, 8               @ perf_swevent_enabled[]
        .equ    G_FSR_INFO, 12          @ fsr_info[]
        .equ    G_CR_ALIGNMENT, 16      @ cr_alignment
        .equ    G_ABT_STACKS, 20        @ stacks[cpu] (irq, abt, und: 3 words each)
        .equ    G_MEM_MAP, 24
        .equ    G_PFN_OFFSET, 28        @ PHYS_PFN_OFFSET
        .equ    G_ZONES, 32             @ contig_page_data.node_zones
        .equ    G_VM_STAT, 36           @ vm_stat[]
        @ mm_struct
        .equ    MM_RB, 4
        .equ    MM_MMAP_CACHE, 8
        .equ    MM_PGD, 12
        .equ    SEM_ACTIVITY, 16        @ mmap_sem: activity, wait_lock, wait_list
        .equ    SEM_WAIT_LOCK, 20
        .equ    SEM_WAIT_LIST, 24
        @ vm_area_struct
        .equ    VM_START, 4
        .equ    VM_END, 8
        .equ    VM_PAGE_PROT, 16
        .equ    VM_FLAGS, 20
        .equ    VM_RB, 24               @ rb_parent_color, rb_right, rb_left
        .equ    RB_RIGHT, 4
        .equ    RB_LEFT, 8
        .equ    VM_OPS, 64
        .equ    VM_PGOFF, 68
        .equ    VM_FILE, 72
        .equ    VMO_FAULT, 8            @ vm_operations_struct: open, close, fault
        .equ    VM_READ_WRITE_EXEC, 7
        .equ    VM_WRITE, 2
        .equ    VM_RAND_READ, 0x10000
        @ file, address_space, inode
        .equ    F_MAPPING, 0
        .equ    RA_MMAP_MISS, 24        @ f_ra.mmap_miss
        .equ    RA_PREV_POS, 32         @ f_ra.prev_pos (64 bits)
        .equ    AS_HOST, 0
        .equ    AS_RNODE, 12            @ page_tree: height, gfp_mask, rnode
        .equ    I_SIZE, 32              @ i_size (64 bits), then i_size_seqcount
        .equ    I_SIZE_SEQ, 40
        @ radix_tree_node (lib/radix-tree.c): height, count, rcu_head, slots[64]
        .equ    NODE_HEIGHT, 0
        .equ    NODE_SLOTS, 16
        @ struct page (32-bit): flags, _count, _mapcount, private, mapping, index, lru
        .equ    PAGE_FLAGS, 0
        .equ    PAGE_MAPCOUNT, 8
        .equ    PAGE_MAPPING, 16
        .equ    PG_UPTODATE, 3
        .equ    PG_RECLAIM, 18          @ PageReadahead
        @ zones and per-CPU page sets
        .equ    ZONE_PAGESET, 40
        .equ    ZONE_VM_STAT, 256
        .equ    PCP_STAT_THRESHOLD, 36
        .equ    PCP_VM_STAT_DIFF, 37
        .equ    NR_FILE_MAPPED, 8       @ enum zone_stat_item
        .equ    PGFAULT, 14             @ enum vm_event_item (about: the counter's line)
        .equ    PERF_PAGE_FAULTS, 2     @ PERF_COUNT_SW_PAGE_FAULTS
        .equ    PERF_PAGE_FAULTS_MIN, 6
        .equ    TIF_WORK_MASK, 0xff
        .equ    VM_FAULT_SIGBUS, 2

@ do_page_fault_enter(r0 = address, r1 = fsr, r2 = thread, r3 = globals): r0 = 1 when
@ handle_pte_fault went into a linear file fault (filemap_fault's find_get_page next),
@ 2 for its SIGBUS, 0 when the PTE is not none or the VMA has no ->fault (the model's
@ other paths), -1 for an error (bad area, no context)
        .globl  do_page_fault_enter
do_page_fault_enter:
        stmfd   sp!, {r4 - r11, lr}
        mov     r4, r0
        mov     r5, r1
        mov     r6, r2
        mov     r7, r3
        ldr     r0, [r6, #TI_CPU]               @ vector_stub: r0, lr, spsr on the abort stack
        ldr     r8, [r7, #G_ABT_STACKS]
        add     r0, r0, r0, lsl #3              @ 9 words a CPU's stacks
        add     r8, r8, r0, lsl #2
        add     r8, r8, #12                     @ the abort mode's
        stmia   r8, {r4, lr}
        mrs     lr, spsr
        str     lr, [r8, #8]
        add     r9, r6, #(TI_REGS)              @ usr_entry: the pt_regs frame
        stmib   r9, {r1 - r12}
        ldmia   r8, {r1 - r3}
        add     r0, r9, #(S_PC)
        str     r1, [r9]
        mvn     r4, #0
        stmia   r0, {r2 - r4}                   @ pc, cpsr, orig_r0 = -1
        stmdb   r0, {r10, r11}                  @ the user's sp and lr (banked: ^)
        mov     r4, r1
        ldr     r0, [r7, #(G_CR_ALIGNMENT)]     @ alignment_trap
        clrex                                   @ v7_early_abort
        mrc     p15, 0, r1, c5, c0, 0           @ DFSR
        mrc     p15, 0, r0, c6, c0, 0           @ FAR
        mov     r0, r4                          @ (the model's: the fault given)
        mov     r1, r5
        ldr     r8, [r7, #(G_FSR_INFO)]         @ do_DataAbort: fsr_info + fsr_fs(fsr)
        and     r3, r1, #15
        and     r12, r1, #(1 << 10)
        orr     r3, r3, r12, lsr #6
        add     r8, r8, r3, lsl #4
        ldr     r3, [r8]                        @ inf->fn
        add     r2, r6, #(TI_REGS)
        blx     r3
        ldmfd   sp!, {r4 - r11, pc}

@ do_page_fault(r0 = address, r1 = fsr, r2 = regs; r6 = current, r7 = globals)
        .globl  do_page_fault
do_page_fault:
        stmfd   sp!, {r4, r5, r8 - r10, lr}
        mov     r4, r0
        mov     r5, r1
        ldr     r8, [r6, #(TSK_MM)]
        ldr     r0, [r6, #(TI_PREEMPT)]         @ in_atomic() || !mm
        cmp     r0, #0
        bne     9f
        cmp     r8, #0
        beq     9f
        add     r0, r8, #(SEM_WAIT_LOCK)        @ down_read_trylock: __down_read_trylock
        bl      _raw_spin_lock_irqsave
        mov     r9, r0
        mov     r10, #0
        ldr     r1, [r8, #(SEM_ACTIVITY)]
        ldr     r2, [r8, #(SEM_WAIT_LIST)]
        add     r3, r8, #(SEM_WAIT_LIST)
        cmp     r1, #0
        blt     1f
        cmp     r2, r3                          @ list_empty(&sem->wait_list)
        bne     1f
        add     r1, r1, #1
        str     r1, [r8, #(SEM_ACTIVITY)]
        mov     r10, #1
1:      add     r0, r8, #(SEM_WAIT_LOCK)
        mov     r1, r9
        bl      _raw_spin_unlock_irqrestore
        cmp     r10, #0
        beq     9f                              @ (the model never waits for mmap_sem)
        ldr     r0, [r7, #(G_PERF)]             @ perf_sw_event(PAGE_FAULTS): enabled?
        ldr     r0, [r0, #(PERF_PAGE_FAULTS * 4)]
        mov     r0, r8                          @ __do_page_fault: find_vma
        mov     r1, r4
        bl      find_vma
        str     r0, [r6, #(FLT_VMA)]
        cmp     r0, #0
        beq     9f
        ldr     r1, [r0, #(VM_START)]
        cmp     r1, r4
        bhi     9f                              @ (check_stack: not modelled)
        tst     r5, #(1 << 11)                  @ READ_FAULT(fsr)
        moveq   r2, #(VM_READ_WRITE_EXEC)
        movne   r2, #(VM_WRITE)
        ldr     r1, [r0, #(VM_FLAGS)]
        tst     r1, r2
        beq     9f
        mov     r1, r0                          @ handle_mm_fault(mm, vma, addr & PAGE_MASK,
        mov     r0, r8                          @                 write)
        bic     r2, r4, #0xf00
        bic     r2, r2, #0xff
        and     r3, r5, #(1 << 11)
        bl      handle_mm_fault
        ldmfd   sp!, {r4, r5, r8 - r10, pc}
9:      mvn     r0, #0
        ldmfd   sp!, {r4, r5, r8 - r10, pc}

@ find_vma(r0 = mm, r1 = address): r0 = the first VMA ending above it, or 0
        .globl  find_vma
find_vma:
        ldr     r2, [r0, #(MM_MMAP_CACHE)]
        cmp     r2, #0
        beq     1f
        ldr     r3, [r2, #(VM_END)]
        cmp     r3, r1
        bls     1f
        ldr     r3, [r2, #(VM_START)]
        cmp     r3, r1
        bls     4f                              @ the cache hit
1:      ldr     r3, [r0, #(MM_RB)]              @ the rb-tree's root
        mov     r2, #0
2:      cmp     r3, #0
        beq     3f
        ldr     r12, [r3, #(VM_END - VM_RB)]
        cmp     r12, r1
        bhi     5f
        ldr     r3, [r3, #(RB_RIGHT)]
        b       2b
5:      sub     r2, r3, #(VM_RB)
        ldr     r12, [r3, #(VM_START - VM_RB)]
        cmp     r12, r1
        bls     3f
        ldr     r3, [r3, #(RB_LEFT)]
        b       2b
3:      cmp     r2, #0
        strne   r2, [r0, #(MM_MMAP_CACHE)]
4:      mov     r0, r2
        mov     pc, lr

@ handle_mm_fault(r0 = mm, r1 = vma, r2 = address, r3 = write; r6, r7)
        .globl  handle_mm_fault
handle_mm_fault:
        stmfd   sp!, {r4, r5, lr}
        mov     r4, #0
        str     r4, [r6, #(TSK_STATE)]          @ __set_current_state(TASK_RUNNING)
        ldr     r4, [r6, #(TI_CPU)]             @ count_vm_event(PGFAULT)
        ldr     r5, [r7, #(G_PER_CPU_OFFSET)]
        ldr     r4, [r5, r4, lsl #2]
        ldr     r5, [r7, #(G_VM_EVENTS)]
        add     r4, r4, r5
        ldr     r5, [r4, #(PGFAULT * 4)]
        add     r5, r5, #1
        str     r5, [r4, #(PGFAULT * 4)]
        ldr     r4, [r0, #(MM_PGD)]             @ pgd_offset; pud, pmd folded
        mov     r5, r2, lsr #21
        add     r4, r4, r5, lsl #3
        ldr     r5, [r4]                        @ pmd_none / pmd_bad
        cmp     r5, #0
        beq     9f                              @ (the model allocates the PTE page first)
        bic     r5, r5, #0xf00                  @ pte_offset_map: the Linux table
        bic     r5, r5, #0xff
        mov     r12, r2, lsl #11                @ pte_index: address bits 20..12
        mov     r12, r12, lsr #23
        add     r5, r5, r12, lsl #2
        ldr     r4, [r5]                        @ handle_pte_fault: entry = *pte
        str     r4, [r6, #(FLT_PTE)]
        str     r5, [r6, #(FLT_PTEP)]
        cmp     r4, #0                          @ !pte_present && pte_none
        bne     8f
        ldr     r12, [r1, #(VM_OPS)]            @ vma->vm_ops && ->fault: do_linear_fault
        cmp     r12, #0
        beq     8f
        ldr     r12, [r12, #(VMO_FAULT)]
        cmp     r12, #0
        beq     8f
        ldr     r4, [r1, #(VM_START)]           @ pgoff
        sub     r4, r2, r4
        ldr     r5, [r1, #(VM_PGOFF)]
        add     r4, r5, r4, lsr #12
        str     r4, [r6, #(FLT_PGOFF)]
        sub     sp, sp, #16                     @ __do_fault: struct vm_fault on the stack
        mov     r5, #0
        stmia   sp, {r2 - r5}                   @ virtual_address, flags, pgoff, page
        mov     r0, r1
        mov     r1, sp
        blx     r12                             @ vma->vm_ops->fault(vma, &vmf)
        add     sp, sp, #16
        ldmfd   sp!, {r4, r5, pc}
8:      mov     r0, #0
        ldmfd   sp!, {r4, r5, pc}
9:      mvn     r0, #0
        ldmfd   sp!, {r4, r5, pc}

@ i_size_read(r0 = inode): r0 = the size's low word, r1 = its high word (seqcount)
i_size_read:
        ldr     r3, [r0, #(I_SIZE_SEQ)]         @ read_seqcount_begin
        dmb                                     @ smp_rmb
        ldr     r1, [r0, #(I_SIZE)]
        ldr     r2, [r0, #(I_SIZE + 4)]
        dmb                                     @ read_seqcount_retry: smp_rmb
        ldr     r12, [r0, #(I_SIZE_SEQ)]
        cmp     r12, r3
        bne     i_size_read
        mov     r0, r1
        mov     r1, r2
        mov     pc, lr

@ filemap_fault(r0 = vma, r1 = vmf), up to find_get_page: r0 = 1 (go on) or SIGBUS
        .globl  filemap_fault
filemap_fault:
        stmfd   sp!, {r4, lr}
        ldr     r4, [r1, #8]                    @ vmf->pgoff
        ldr     r0, [r0, #(VM_FILE)]
        ldr     r0, [r0, #(F_MAPPING)]
        ldr     r0, [r0, #(AS_HOST)]
        bl      i_size_read
        add     r0, r0, #0x1000                 @ (size + PAGE_SIZE - 1) >> PAGE_SHIFT
        sub     r0, r0, #1
        mov     r0, r0, lsr #12
        orr     r0, r0, r1, lsl #20
        cmp     r4, r0
        movhs   r0, #(VM_FAULT_SIGBUS)
        movlo   r0, #1
        ldmfd   sp!, {r4, pc}

@ find_get_page(r0 = mapping, r1 = offset): r0 = the struct page with a reference, or 0
        .globl  find_get_page
find_get_page:
        stmfd   sp!, {r4 - r7, lr}
        mov     r4, r0
        mov     r5, r1
1:      ldr     r2, [r4, #(AS_RNODE)]           @ radix_tree_lookup_slot
        tst     r2, #1                          @ radix_tree_is_indirect_ptr
        bne     2f
        cmp     r5, #0                          @ a direct pointer: index 0 only
        addeq   r6, r4, #(AS_RNODE)
        bne     8f
        b       4f
2:      bic     r2, r2, #1
        ldr     r3, [r2, #(NODE_HEIGHT)]
        add     r12, r3, r3, lsl #1
        mov     r12, r12, lsl #1                @ 6 * height
        cmp     r3, #5                          @ radix_tree_maxindex(height): 64^h - 1
        bhs     3f
        movs    r0, r5, lsr r12
        bne     8f
3:      sub     r12, r12, #6                    @ shift = (height - 1) * 6
6:      mov     r0, r5, lsr r12
        and     r0, r0, #63
        add     r6, r2, #(NODE_SLOTS)
        add     r6, r6, r0, lsl #2              @ the slot
        ldr     r2, [r6]
        cmp     r2, #0
        beq     8f
        sub     r12, r12, #6
        subs    r3, r3, #1
        bne     6b
4:      ldr     r7, [r6]                        @ radix_tree_deref_slot
        cmp     r7, #0
        beq     8f
        tst     r7, #1                          @ radix_tree_deref_retry
        bne     1b
        mov     r0, r7
        bl      page_cache_get_speculative
        cmp     r0, #0
        beq     1b
        ldr     r0, [r6]                        @ page != *pagep: the slot moved
        cmp     r0, r7
        bne     1b
        mov     r0, r7
        ldmfd   sp!, {r4 - r7, pc}
8:      mov     r0, #0
        ldmfd   sp!, {r4 - r7, pc}

@ __do_fault_map(r0 = struct page (locked), r1 = thread, r2 = globals, r3 = 1 to map the
@ page-cache page itself, 0 for an early copy-on-write copy): r0 = mk_pte's PTE
        .globl  __do_fault_map
__do_fault_map:
        stmfd   sp!, {r4 - r9, lr}
        mov     r4, r0
        mov     r6, r1
        mov     r7, r2
        mov     r9, r3
        ldr     r8, [r6, #(FLT_VMA)]
        ldr     r0, [r8, #(VM_FLAGS)]           @ do_async_mmap_readahead
        tst     r0, #(VM_RAND_READ)
        bne     1f
        ldr     r5, [r8, #(VM_FILE)]
        ldr     r0, [r5, #(RA_MMAP_MISS)]
        cmp     r0, #0
        subgt   r0, r0, #1
        strgt   r0, [r5, #(RA_MMAP_MISS)]
        ldr     r0, [r4, #(PAGE_FLAGS)]
        tst     r0, #(1 << PG_RECLAIM)          @ PageReadahead (never, in the model)
1:      ldr     r5, [r8, #(VM_FILE)]            @ after lock_page: truncated?
        ldr     r5, [r5, #(F_MAPPING)]
        ldr     r0, [r4, #(PAGE_MAPPING)]
        cmp     r0, r5
        bne     9f
        ldr     r0, [r4, #(PAGE_FLAGS)]         @ PageUptodate
        tst     r0, #(1 << PG_UPTODATE)
        beq     9f
        ldr     r0, [r5, #(AS_HOST)]            @ the size again
        bl      i_size_read
        ldr     r0, [r6, #(FLT_PGOFF)]          @ ra->prev_pos = offset << PAGE_SHIFT
        ldr     r5, [r8, #(VM_FILE)]
        mov     r1, r0, lsl #12
        mov     r2, r0, lsr #20
        str     r1, [r5, #(RA_PREV_POS)]
        str     r2, [r5, #(RA_PREV_POS + 4)]
        ldr     r0, [r6, #(FLT_PTEP)]           @ __do_fault: pte_same(*page_table, orig)
        ldr     r0, [r0]
        ldr     r1, [r6, #(FLT_PTE)]
        cmp     r0, r1
        bne     9f
        ldr     r0, [r7, #(G_MEM_MAP)]          @ mk_pte: page_to_pfn
        sub     r0, r4, r0
        ldr     r1, [r7, #(G_PFN_OFFSET)]
        add     r0, r1, r0, lsr #5
        ldr     r1, [r8, #(VM_PAGE_PROT)]
        orr     r5, r1, r0, lsl #12
        cmp     r9, #0
        beq     2f
        mov     r0, r4
        bl      page_add_file_rmap
2:      mov     r0, r5
        ldmfd   sp!, {r4 - r9, pc}
9:      mvn     r0, #0
        ldmfd   sp!, {r4 - r9, pc}

@ page_add_file_rmap(r0 = struct page; r6 = current, r7 = globals)
        .globl  page_add_file_rmap
page_add_file_rmap:
        stmfd   sp!, {r4, lr}
        mov     r4, r0
        add     r3, r0, #(PAGE_MAPCOUNT)
        ATOMIC_OP_RETURN add, r3, r1, r2, #1    @ atomic_add_return(1): smp_mb, loop, smp_mb
        cmp     r1, #0                          @ atomic_inc_and_test: the first mapping?
        bne     2f
        ldr     r0, [r7, #(G_ZONES)]            @ page_zone: zone 0 (the flags' zone bits)
        ldr     r1, [r0, #(ZONE_PAGESET)]       @ this_cpu_ptr(zone->pageset)
        ldr     r2, [r6, #(TI_CPU)]
        ldr     r3, [r7, #(G_PER_CPU_OFFSET)]
        ldr     r2, [r3, r2, lsl #2]
        add     r1, r1, r2
        ldrsb   r2, [r1, #(PCP_VM_STAT_DIFF + NR_FILE_MAPPED)]
        ldrsb   r3, [r1, #(PCP_STAT_THRESHOLD)]
        add     r2, r2, #1
        cmp     r2, r3
        strble  r2, [r1, #(PCP_VM_STAT_DIFF + NR_FILE_MAPPED)]
        ble     2f
        mov     r3, r3, asr #1                  @ overstep = threshold / 2
        add     r2, r2, r3
        rsb     r3, r3, #0
        strb    r3, [r1, #(PCP_VM_STAT_DIFF + NR_FILE_MAPPED)]
        add     r0, r0, #(ZONE_VM_STAT + NR_FILE_MAPPED * 4)
        bl      atomic_add                      @ zone_page_state_add: the zone's
        ldr     r0, [r7, #(G_VM_STAT)]
        add     r0, r0, #(NR_FILE_MAPPED * 4)
        bl      atomic_add                      @ and the global vm_stat
2:      ldmfd   sp!, {r4, pc}

@ atomic_add(r0 = v, r2 = i): ARMv7's atomic_add, no barriers (arch/arm/include/asm/atomic.h)
atomic_add:
1:      ldrex   r1, [r0]
        add     r1, r1, r2
        strex   r3, r1, [r0]
        teq     r3, #0
        bne     1b
        mov     pc, lr

@ do_page_fault_exit(r0 = thread, r1 = globals): the way out after handle_mm_fault
        .globl  do_page_fault_exit
do_page_fault_exit:
        stmfd   sp!, {r4 - r11, lr}
        mov     r6, r0
        mov     r7, r1
        ldr     r0, [r6, #(TSK_MIN_FLT)]        @ __do_page_fault: tsk->min_flt++
        add     r0, r0, #1
        str     r0, [r6, #(TSK_MIN_FLT)]
        ldr     r8, [r6, #(TSK_MM)]             @ up_read: __up_read
        add     r0, r8, #(SEM_WAIT_LOCK)
        bl      _raw_spin_lock_irqsave
        mov     r9, r0
        ldr     r1, [r8, #(SEM_ACTIVITY)]
        subs    r1, r1, #1
        str     r1, [r8, #(SEM_ACTIVITY)]
        bne     1f
        ldr     r2, [r8, #(SEM_WAIT_LIST)]      @ a writer waiting? (never, in the model)
        add     r3, r8, #(SEM_WAIT_LIST)
        cmp     r2, r3
1:      add     r0, r8, #(SEM_WAIT_LOCK)
        mov     r1, r9
        bl      _raw_spin_unlock_irqrestore
        ldr     r0, [r7, #(G_PERF)]             @ perf_sw_event(PAGE_FAULTS_MIN)
        ldr     r0, [r0, #(PERF_PAGE_FAULTS_MIN * 4)]
        ldr     r1, [r6, #(TI_FLAGS)]           @ ret_to_user: work pending?
        tst     r1, #(TIF_WORK_MASK)
        add     r0, r6, #(TI_REGS)              @ restore_user_regs
        ldr     r1, [r0, #(S_PSR)]
        ldr     r2, [r0, #(S_PC)]
        clrex
        ldmia   r0!, {r1 - r5, r8 - r12}        @ r0 - lr: 15 words
        ldmia   r0, {r1 - r5}
        ldmfd   sp!, {r4 - r11, pc}
