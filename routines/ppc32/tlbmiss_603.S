/*
 * tlbmiss_603: the PowerPC 603's software TLB reload, three miss handlers at the vectors.
 *
 * Modelled on the 603 handlers of Linux 2.4/2.6 arch/ppc/kernel/head.S (InstructionTLBMiss
 * at 0x1000, DataLoadTLBMiss at 0x1100, DataStoreTLBMiss at 0x1200; Dougan 1999 describes
 * why they walk the Linux page table instead of a hash table). Written for this book from
 * the algorithm, not copied. Load with Machine.load(routine("ppc32/tlbmiss_603.S"), at=0x1000).
 *
 * The CPU enters with translation off and MSR[TGPR] set, so r0-r3 are shadow registers and
 * the interrupted program's r0-r3 are untouched. It has put the missed address in IMISS /
 * DMISS, CR0 in SRR1[0:3] and the way to replace in SRR1[WAY]. Each handler:
 *   1. takes the page directory's physical address from SPRG2 (Linux 2.4 went through
 *      SPRG3 -> current thread -> pgdir; the book keeps it in SPRG2: one mfspr);
 *   2. indexes it with EA bits 0-9 -> the page-table page (0: nothing mapped there);
 *   3. indexes that with EA bits 10-19 -> the Linux-style PTE (the book's format, emu.softtlb:
 *      page | EXEC 0x200 | RW 0x100 | DIRTY 0x004 | ACCESSED 0x002 | PRESENT 0x001);
 *   4. marks it accessed (and, for a store, dirty), builds the PTE low word for RPA
 *      (RPN | R | C if dirty | PP: 2 read/write, 3 read-only) and loads the TLB entry with
 *      tlbli / tlbld (rB = the missed address; the way comes from SRR1[WAY]);
 *   5. restores CR0 from SRR1 and returns with rfi: the faulting instruction runs again.
 * Not found (or a store to a read-only page): like Linux, leave the shadow registers, set
 * SRR1 / DSISR / DAR as an ISI or DSI would, and branch to the ISI (0x400) or DSI (0x300)
 * vector. (Dirty tracking through the C bit, which Linux does with a store miss on a clean
 * entry, is not modelled: a read/write page is loaded writable.)
 */
        .equ    DSISR, 18
        .equ    DAR, 19
        .equ    SRR1, 27
        .equ    SPRG2, 274
        .equ    DMISS, 976
        .equ    IMISS, 980
        .equ    RPA, 982
        .equ    PTE_PRESENT, 0x001
        .equ    PTE_ACCESSED, 0x002
        .equ    PTE_DIRTY, 0x004
        .equ    PTE_RW, 0x100

        .globl  itlb_miss_603
itlb_miss_603:                          # 0x1000: instruction TLB miss
        mfspr   r3, IMISS               # the instruction address that missed
        mfspr   r2, SPRG2               # the page directory (physical)
        rlwimi  r2, r3, 12, 20, 29      # + (EA >> 22) * 4
        lwz     r2, 0(r2)               # the page-table page, or 0
        rlwinm. r2, r2, 0, 0, 19
        beq-    imiss_none
        rlwimi  r2, r3, 22, 20, 29      # + ((EA >> 12) & 0x3ff) * 4
        lwz     r1, 0(r2)               # the Linux-style PTE
        andi.   r0, r1, PTE_PRESENT
        beq-    imiss_none
        ori     r1, r1, PTE_ACCESSED
        stw     r1, 0(r2)
        rlwinm  r0, r1, 24, 31, 31      # RW -> 1
        xori    r0, r0, 3               # PP: 2 read/write, 3 read-only
        rlwimi  r0, r1, 5, 24, 24       # DIRTY -> C (0x80)
        rlwimi  r0, r1, 0, 0, 19        # RPN
        ori     r0, r0, 0x100           # R
        mtspr   RPA, r0
        tlbli   r3
        mfspr   r3, SRR1
        mtcrf   0x80, r3                # CR0 as it was at the miss
        rfi
imiss_none:                             # an instruction storage interrupt
        mfspr   r3, SRR1
        rlwinm  r1, r3, 0, 16, 31       # the MSR bits of SRR1
        oris    r1, r1, 0x4000          # SRR1[1]: no translation found
        mtspr   SRR1, r1
        mtcrf   0x80, r3
        mfmsr   r0
        xoris   r0, r0, 2               # MSR[TGPR] off: the program's r0-r3 again
        mtmsr   r0
        ba      0x400

        .align  8
        .globl  dtlb_load_miss_603
dtlb_load_miss_603:                     # 0x1100: data TLB miss on a load
        mfspr   r3, DMISS               # the data address that missed
        mfspr   r2, SPRG2
        rlwimi  r2, r3, 12, 20, 29
        lwz     r2, 0(r2)
        rlwinm. r2, r2, 0, 0, 19
        beq-    dload_none
        rlwimi  r2, r3, 22, 20, 29
        lwz     r1, 0(r2)
        andi.   r0, r1, PTE_PRESENT
        beq-    dload_none
        ori     r1, r1, PTE_ACCESSED
        stw     r1, 0(r2)
        rlwinm  r0, r1, 24, 31, 31
        xori    r0, r0, 3
        rlwimi  r0, r1, 5, 24, 24
        rlwimi  r0, r1, 0, 0, 19
        ori     r0, r0, 0x100
        mtspr   RPA, r0
        tlbld   r3
        mfspr   r3, SRR1
        mtcrf   0x80, r3
        rfi
dload_none:                             # a data storage interrupt: nothing mapped
        lis     r1, 0x4000              # DSISR[1]: no translation found
dmiss_dsi:
        mtspr   DSISR, r1
        mfspr   r1, DMISS
        mtspr   DAR, r1
        mfspr   r3, SRR1
        rlwinm  r1, r3, 0, 16, 31
        mtspr   SRR1, r1
        mtcrf   0x80, r3
        mfmsr   r0
        xoris   r0, r0, 2
        mtmsr   r0
        ba      0x300

        .align  8
        .globl  dtlb_store_miss_603
dtlb_store_miss_603:                    # 0x1200: data TLB miss on a store
        mfspr   r3, DMISS
        mfspr   r2, SPRG2
        rlwimi  r2, r3, 12, 20, 29
        lwz     r2, 0(r2)
        rlwinm. r2, r2, 0, 0, 19
        beq-    dstore_none
        rlwimi  r2, r3, 22, 20, 29
        lwz     r1, 0(r2)
        andi.   r0, r1, PTE_PRESENT
        beq-    dstore_none
        andi.   r0, r1, PTE_RW
        beq-    dstore_readonly
        ori     r1, r1, PTE_ACCESSED | PTE_DIRTY
        stw     r1, 0(r2)
        rlwinm  r0, r1, 0, 0, 19        # RPN
        ori     r0, r0, 0x182           # R | C | PP 2 (read/write)
        mtspr   RPA, r0
        tlbld   r3
        mfspr   r3, SRR1
        mtcrf   0x80, r3
        rfi
dstore_none:
        lis     r1, 0x4200              # DSISR: no translation found, a store
        b       dstore_dsi
dstore_readonly:
        lis     r1, 0x0A00              # DSISR: protection violation, a store
dstore_dsi:
        mtspr   DSISR, r1
        mfspr   r1, DMISS
        mtspr   DAR, r1
        mfspr   r3, SRR1
        rlwinm  r1, r3, 0, 16, 31
        mtspr   SRR1, r1
        mtcrf   0x80, r3
        mfmsr   r0
        xoris   r0, r0, 2
        mtmsr   r0
        ba      0x300
