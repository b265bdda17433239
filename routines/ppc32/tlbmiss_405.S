/*
 * tlbmiss_405: the PowerPC 405's software TLB reload, data (0x1100) and instruction (0x1200)
 * TLB miss handlers and the code they share.
 *
 * Modelled on Linux 2.6 arch/ppc/kernel/head_4xx.S (DataTLBMiss, InstructionTLBMiss,
 * finish_tlb_load). Written for this book from the algorithm, not copied. Load with
 * Machine.load(routine("ppc32/tlbmiss_405.S"), at=0x1100).
 *
 * The 405 has no shadow registers: the handler saves r10-r12 in SPRG0-SPRG2, r9 in SPRG5 and CR in SPRG4,
 * and restores them before rfi. The missed address is DEAR (data) or SRR0 (instruction).
 * The walk is the same two-level Linux-style table as the 603's (emu.softtlb, PTE format
 * page | EXEC 0x200 | RW 0x100 | DIRTY 0x004 | ACCESSED 0x002 | PRESENT 0x001; the page
 * directory's physical address in SPRG3). The PTE's EXEC and RW bits sit where the TLB data
 * word has EX and WR, so the data word is RPN | (PTE & 0x300). The entry to replace is
 * chosen round-robin (Linux's tlb_4xx_index), the data word written before the tag word
 * (V | SIZE 4 KB | EPN), which the tag's TID takes from the PID register.
 * Not found: restore and branch to the DSI (0x300) or ISI (0x400) vector, as Linux does.
 */
        .equ    SRR0, 26
        .equ    SPRG0, 272
        .equ    SPRG1, 273
        .equ    SPRG2, 274
        .equ    SPRG3, 275
        .equ    SPRG4W, 276             # SPRG4, written
        .equ    SPRG4R, 260             # SPRG4, read
        .equ    SPRG5W, 277
        .equ    SPRG5R, 261
        .equ    DEAR, 981
        .equ    PTE_PRESENT, 0x001
        .equ    PTE_ACCESSED, 0x002
        .equ    TLB_SIZE_4K_V, 0x00C0   # tag word: SIZE 1 (4 KB) << 7 | V

        .globl  dtlb_miss_405
dtlb_miss_405:                          # 0x1100: data TLB miss
        mtspr   SPRG0, r10
        mtspr   SPRG1, r11
        mtspr   SPRG2, r12
        mtspr   SPRG5W, r9
        mfcr    r11
        mtspr   SPRG4W, r11
        mfspr   r10, DEAR               # the address that missed
        mfspr   r11, SPRG3              # the page directory (physical)
        rlwimi  r11, r10, 12, 20, 29    # + (EA >> 22) * 4
        lwz     r11, 0(r11)             # the page-table page, or 0
        rlwinm. r11, r11, 0, 0, 19
        beq-    dtlb_miss_405_none
        rlwimi  r11, r10, 22, 20, 29    # + ((EA >> 12) & 0x3ff) * 4
        lwz     r12, 0(r11)             # the Linux-style PTE
        andi.   r9, r12, PTE_PRESENT
        bne+    tlb_finish_405
dtlb_miss_405_none:                     # no translation: restore, then the storage interrupt
        mfspr   r11, SPRG4R
        mtcr    r11
        mfspr   r9, SPRG5R
        mfspr   r12, SPRG2
        mfspr   r11, SPRG1
        mfspr   r10, SPRG0
        ba      0x300

        .align  8
        .globl  itlb_miss_405
itlb_miss_405:                          # 0x1200: instruction TLB miss
        mtspr   SPRG0, r10
        mtspr   SPRG1, r11
        mtspr   SPRG2, r12
        mtspr   SPRG5W, r9
        mfcr    r11
        mtspr   SPRG4W, r11
        mfspr   r10, SRR0               # the address that missed
        mfspr   r11, SPRG3              # the page directory (physical)
        rlwimi  r11, r10, 12, 20, 29    # + (EA >> 22) * 4
        lwz     r11, 0(r11)             # the page-table page, or 0
        rlwinm. r11, r11, 0, 0, 19
        beq-    itlb_miss_405_none
        rlwimi  r11, r10, 22, 20, 29    # + ((EA >> 12) & 0x3ff) * 4
        lwz     r12, 0(r11)             # the Linux-style PTE
        andi.   r9, r12, PTE_PRESENT
        bne+    tlb_finish_405
itlb_miss_405_none:                     # no translation: restore, then the storage interrupt
        mfspr   r11, SPRG4R
        mtcr    r11
        mfspr   r9, SPRG5R
        mfspr   r12, SPRG2
        mfspr   r11, SPRG1
        mfspr   r10, SPRG0
        ba      0x400

tlb_finish_405:                         # r10 = EA, r11 = &PTE, r12 = PTE
        ori     r12, r12, PTE_ACCESSED
        stw     r12, 0(r11)
        rlwinm  r11, r12, 0, 0, 19      # the data word: RPN ...
        rlwimi  r11, r12, 0, 22, 23     # ... | EX | WR from the PTE's EXEC | RW
        lwz     r12, tlb_4xx_next(0)    # round-robin replacement (Linux: tlb_4xx_index)
        addi    r12, r12, 1
        andi.   r12, r12, 63
        stw     r12, tlb_4xx_next(0)
        tlbwe   r11, r12, 1             # the data word first ...
        rlwinm  r11, r10, 0, 0, 19      # ... then the tag word: EPN
        ori     r11, r11, TLB_SIZE_4K_V #   | SIZE 4 KB | V (its TID is the PID register)
        tlbwe   r11, r12, 0
        mfspr   r11, SPRG4R             # CR, r9-r12 as they were at the miss
        mtcr    r11
        mfspr   r9, SPRG5R
        mfspr   r12, SPRG2
        mfspr   r11, SPRG1
        mfspr   r10, SPRG0
        rfi

        .align  5                       # a cache line of its own: a store next to code would
tlb_4xx_next:                           # leave the I-cache copy of that line stale
                                        # (the entry written last)
        .long   0
