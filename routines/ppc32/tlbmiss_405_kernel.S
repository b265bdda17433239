/*
 * tlbmiss_405_kernel: the PowerPC 405's data (0x1100) and instruction (0x1200) TLB miss
 * handlers for the book's kernel model (emu.kernel.ppc405), which keeps its Linux PTEs in
 * the layout of emu.kernel.vm.
 *
 * Models DTLBMiss, ITLBMiss and finish_tlb_load in Linux arch/ppc/kernel/head_4xx.S
 * (2.6.12; the 2.5 kernel of Mackerras 2003 has the same algorithm). Written for this book
 * from the algorithm, not copied. Load with Machine.load(..., at=0x1100).
 *
 *   1. save r9-r12 and CR in SPRGs (the 405 has no shadow registers);
 *   2. the missed address: DEAR (data) or SRR0 (instruction);
 *   3. walk the two-level table: the page directory (physical, in SPRG3) indexed by EA
 *      bits 0-9, then the PTE page by EA bits 10-19; no PTE page or a PTE without PRESENT:
 *      restore and go to the storage interrupt (0x300 / 0x400), whose C handler is
 *      do_page_fault;
 *   4. mark the PTE accessed;
 *   5. the next entry round robin (Linux: tlb_4xx_index), the data word written before
 *      the tag word (EPN | SIZE 4 KB | V; its TID is the PID register); rfi.
 *
 * Where this differs from head_4xx.S, and why:
 *   - SPRG3 holds the page directory itself (Linux: the current thread, whose pgdir it
 *     loads: one lwz more);
 *   - user addresses only: no kernel-address path (swapper_pg_dir with PID 0) and no
 *     large-page PMD entries: the model's kernel runs in real mode;
 *   - the PID register is not saved and restored (only that kernel path changes it);
 *   - the model's Linux PTE is the classic PPC32 layout (emu.kernel.vm: PRESENT 0x001,
 *     DIRTY 0x080, ACCESSED 0x100, EXEC 0x200, RW 0x400), not the 40x one
 *     (include/asm-ppc/pgtable.h), whose hardware bits sit where the TLB data word has
 *     them so that Linux only clears the software bits (li; andc). Here the data word is
 *     assembled: RPN | EX (from EXEC: the same bit, 0x200) | WR (0x100) if RW and DIRTY,
 *     five instructions instead of two. Linux keeps WR in the PTE (_PAGE_HWWRITE), set by
 *     the DataStorage fast path on the first store to a writable clean page; the model
 *     grants WR as soon as the PTE is dirty, so that fast path is never needed.
 */
        .equ    SRR0, 26
        .equ    SPRG0, 272
        .equ    SPRG1, 273
        .equ    SPRG3, 275
        .equ    SPRG4W, 276             # SPRG4-7 are written as 276-279, read as 260-263
        .equ    SPRG4R, 260
        .equ    SPRG5W, 277
        .equ    SPRG5R, 261
        .equ    SPRG7W, 279
        .equ    SPRG7R, 263
        .equ    DEAR, 981
        .equ    PTE_PRESENT, 0x001
        .equ    PTE_ACCESSED, 0x100
        .equ    TLB_SIZE_4K_V, 0x00C0   # tag word: SIZE 1 (4 KB) << 7 | V

        .globl  dtlb_miss_405k
dtlb_miss_405k:                         # 0x1100: data TLB miss
        mtspr   SPRG0, r10
        mtspr   SPRG1, r11
        mtspr   SPRG4W, r12
        mtspr   SPRG5W, r9
        mfcr    r11
        mtspr   SPRG7W, r11
        mfspr   r10, DEAR               # the address that missed
        mfspr   r11, SPRG3              # the page directory (physical, page aligned)
        rlwimi  r11, r10, 12, 20, 29    # + (EA >> 22) * 4
        lwz     r12, 0(r11)             # the PTE page, or 0
        rlwinm. r9, r12, 0, 0, 19
        beq-    dtlb_bail_405k
        rlwimi  r12, r10, 22, 20, 29    # + ((EA >> 12) & 0x3ff) * 4
        lwz     r11, 0(r12)             # the Linux PTE
        andi.   r9, r11, PTE_PRESENT
        beq-    dtlb_bail_405k
        ori     r11, r11, PTE_ACCESSED
        stw     r11, 0(r12)
        li      r12, TLB_SIZE_4K_V
        rlwimi  r10, r12, 0, 20, 31     # the tag word: EPN | SIZE | V
        b       tlb_finish_405k
dtlb_bail_405k:                         # no translation: the data storage interrupt
        mfspr   r11, SPRG7R
        mtcr    r11
        mfspr   r9, SPRG5R
        mfspr   r12, SPRG4R
        mfspr   r11, SPRG1
        mfspr   r10, SPRG0
        ba      0x300

        .align  8
        .globl  itlb_miss_405k
itlb_miss_405k:                         # 0x1200: instruction TLB miss
        mtspr   SPRG0, r10
        mtspr   SPRG1, r11
        mtspr   SPRG4W, r12
        mtspr   SPRG5W, r9
        mfcr    r11
        mtspr   SPRG7W, r11
        mfspr   r10, SRR0               # the address that missed
        mfspr   r11, SPRG3
        rlwimi  r11, r10, 12, 20, 29
        lwz     r12, 0(r11)
        rlwinm. r9, r12, 0, 0, 19
        beq-    itlb_bail_405k
        rlwimi  r12, r10, 22, 20, 29
        lwz     r11, 0(r12)
        andi.   r9, r11, PTE_PRESENT
        beq-    itlb_bail_405k
        ori     r11, r11, PTE_ACCESSED
        stw     r11, 0(r12)
        li      r12, TLB_SIZE_4K_V
        rlwimi  r10, r12, 0, 20, 31
        b       tlb_finish_405k
itlb_bail_405k:                         # no translation: the instruction storage interrupt
        mfspr   r11, SPRG7R
        mtcr    r11
        mfspr   r9, SPRG5R
        mfspr   r12, SPRG4R
        mfspr   r11, SPRG1
        mfspr   r10, SPRG0
        ba      0x400

tlb_finish_405k:                        # r10 = tag word, r11 = Linux PTE
        rlwinm  r12, r11, 30, 23, 23    # RW (0x400) -> 0x100
        rlwinm  r9, r11, 1, 23, 23      # DIRTY (0x080) -> 0x100
        and     r12, r12, r9            # WR: writable and already dirty
        rlwimi  r12, r11, 0, 22, 22     # | EX from EXEC (both 0x200)
        rlwimi  r12, r11, 0, 0, 19      # | RPN
        lwz     r9, tlb_405k_index(0)   # round robin (Linux: tlb_4xx_index)
        addi    r9, r9, 1
        andi.   r9, r9, 63
        stw     r9, tlb_405k_index(0)
        tlbwe   r12, r9, 1              # the data word first ...
        tlbwe   r10, r9, 0              # ... then the tag word (TID <- PID)
        mfspr   r11, SPRG7R             # CR, r9-r12 as they were at the miss
        mtcr    r11
        mfspr   r9, SPRG5R
        mfspr   r12, SPRG4R
        mfspr   r11, SPRG1
        mfspr   r10, SPRG0
        rfi

        .align  5                       # a cache line of its own: a store next to code would
tlb_405k_index:                         # leave the I-cache copy of that line stale
        .long   0
