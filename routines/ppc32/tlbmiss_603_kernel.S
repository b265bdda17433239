/*
 * tlbmiss_603_kernel: the PowerPC 603's TLB miss handlers that walk the Linux page table
 * directly, with no hash table at all (Dougan 1999: "We can actually speed things up by
 * eliminating the hash table entirely"). For the book's kernel model, emu.kernel.ppc603 with
 * reload="pagetable", which keeps its Linux PTEs in the layout of emu.kernel.vm.
 *
 * Models InstructionTLBMiss (0x1000), DataLoadTLBMiss (0x1100) and DataStoreTLBMiss
 * (0x1200) of Linux arch/ppc/kernel/head.S: the NO_RELOAD_HTAB version of 2.2.1 (the
 * paper's kernel), which 2.4 and 2.6 kept on the 603 (Hash == 0: no hash table is
 * allocated), and their way out InstructionAddressInvalid / DataAddressInvalid. The
 * permission test and the PTE-to-RPA conversion are those of 2.4 / 2.6, whose PTE bits the
 * model uses. Written for this book from the algorithm, not copied. Load at 0x1000.
 *
 * The CPU enters with translation off and MSR[TGPR] set (r0-r3 are shadow registers), CR0 in
 * SRR1[0:3], the missed address in IMISS / DMISS. Each handler:
 *   1. keeps CTR in r0 (Linux does, a leftover of the hash-search handlers; its way out
 *      restores it);
 *   2. finds the page directory: SPRG3 holds the current thread (physical), whose pgdir
 *      field switch_mm set;
 *   3. indexes it with EA bits 0-9 (the PTE page, 0: nothing mapped), then the PTE page with
 *      EA bits 10-19 (the Linux PTE);
 *   4. checks the access: _PAGE_USER | _PAGE_PRESENT (a store also _PAGE_RW); refused: the
 *      way out;
 *   5. marks the PTE accessed (a store also dirty) and stores it back;
 *   6. builds the RPA word: the PTE's RPN, R, C, W, I, G bits sit where the hardware PTE has
 *      them (include/asm-ppc/pgtable.h); PP = 2 (read/write) if the page is writable and
 *      already dirty, else 3 (read only), 0 if not a user page; the software bits and M
 *      are cleared. A store sets dirty first, so it always loads PP 2;
 *   7. tlbli / tlbld of the missed address into the way SRR1[WAY] names; CR0 back; rfi.
 * No translation: report it as the storage interrupt would (ISI: SRR1 bit 1; DSI: DSISR bit
 * 1, bit 6 for a store, and DAR), TGPR off, on to 0x400 / 0x300, whose C handler is
 * do_page_fault.
 *
 * With KERNEL_PTES defined (emu.kernel.entry's kernel without BATs, 2.2's `nobats`), the
 * access check is 2.2.0's: _PAGE_USER is required only when SRR1[PR] says the access came
 * from user mode (two instructions more), so the kernel's own pages, mapped without
 * _PAGE_USER, load with PP 0 (supervisor read/write under a Ks = 0 segment); its text,
 * mapped with _PAGE_USER and without _PAGE_RW (2.2.0 mapin_ram), loads with PP 3 and a
 * store to it is refused: the way out to 0x300 (emu.kernel.ppc603 raises).
 *
 * Differences from head.S: user addresses only (the model's kernel runs in real mode; 2.4+
 * also tests for a kernel address first: three instructions more); the thread's pgdir is a
 * physical address (Linux: virtual, then tophys: one addis more); TGPR is cleared with rlwinm
 * (Linux: xoris; one instruction either way); the ISI way out does not set DSISR and DAR and
 * no way out fixes up little-endian addresses (the model is big-endian).
 */
        .equ    DSISR, 18
        .equ    DAR, 19
        .equ    SRR1, 27
        .equ    SPRG3, 275
        .equ    DMISS, 976
        .equ    IMISS, 980
        .equ    RPA, 982
        .equ    THREAD_PGDIR, 0         # offset of pgdir in the model's thread block
        .equ    PTE_PRESENT, 0x001
        .equ    PTE_USER, 0x004
        .equ    PTE_DIRTY, 0x080
        .equ    PTE_ACCESSED, 0x100
        .equ    PTE_RW, 0x400
        .equ    PTE_NOT_HW, 0xe14       # EXEC, RW, 0x800, USER, M: not in the RPA word
        .equ    PTE_NOT_HW_PP1, 0xe15   # the same and PP's low bit: PP 2

        .globl  itlb_miss_603k
itlb_miss_603k:                         # 0x1000: instruction TLB miss
        mfctr   r0
        mfspr   r3, IMISS               # the instruction address that missed
        mfspr   r2, SPRG3               # the current thread ...
        lwz     r2, THREAD_PGDIR(r2)    # ... and its page directory
        rlwimi  r2, r3, 12, 20, 29      # + (EA >> 22) * 4
        lwz     r2, 0(r2)               # the PTE page, or 0
        rlwinm. r2, r2, 0, 0, 19
        beq-    imiss_none_603k
        rlwimi  r2, r3, 22, 20, 29      # + ((EA >> 12) & 0x3ff) * 4
        lwz     r3, 0(r2)               # the Linux PTE
.ifdef KERNEL_PTES
        mfspr   r1, SRR1                # 2.2.0: _PAGE_USER only for a user access
        rlwinm  r1, r1, 32-12, 29, 29   # MSR[PR] (0x4000) -> _PAGE_USER (0x004)
        ori     r1, r1, PTE_PRESENT
.else
        li      r1, PTE_USER | PTE_PRESENT
.endif
        andc.   r1, r1, r3              # a required bit missing?
        bne-    imiss_none_603k
        ori     r3, r3, PTE_ACCESSED
        stw     r3, 0(r2)
        rlwinm  r1, r3, 32-10, 31, 31   # RW -> 1
        rlwinm  r2, r3, 32-7, 31, 31    # DIRTY -> 1
        and     r1, r1, r2              # writable: RW and already dirty
        rlwimi  r3, r3, 32-1, 30, 30    # USER -> PP's high bit
        rlwimi  r3, r3, 32-1, 31, 31    # ... and its low bit: PP 3, or 0 if not a user page
        ori     r1, r1, PTE_NOT_HW
        andc    r1, r3, r1              # PP 2 if writable; software bits and M cleared
        mtspr   RPA, r1
        mfspr   r3, IMISS
        tlbli   r3
        mfspr   r3, SRR1
        mtcrf   0x80, r3                # CR0 as it was at the miss
        rfi
imiss_none_603k:                        # no translation: the ISI path (do_page_fault)
        mfspr   r3, SRR1
        mtctr   r0
        rlwinm  r2, r3, 0, 16, 31       # the MSR bits of SRR1 ...
        oris    r2, r2, 0x4000          # ... and bit 1: no translation found
        mtspr   SRR1, r2
        mtcrf   0x80, r3
        mfmsr   r0
        rlwinm  r0, r0, 0, 15, 13       # MSR[TGPR] off: the program's r0-r3 again
        sync                            # head.S: "some chip revs have problems here"
        mtmsr   r0
        ba      0x400

        .align  8
        .globl  dtlb_load_miss_603k
dtlb_load_miss_603k:                    # 0x1100: data TLB miss on a load
        mfctr   r0
        mfspr   r3, DMISS
        mfspr   r2, SPRG3
        lwz     r2, THREAD_PGDIR(r2)
        rlwimi  r2, r3, 12, 20, 29
        lwz     r2, 0(r2)
        rlwinm. r2, r2, 0, 0, 19
        beq-    dmiss_none_603k
        rlwimi  r2, r3, 22, 20, 29
        lwz     r3, 0(r2)
.ifdef KERNEL_PTES
        mfspr   r1, SRR1                # 2.2.0: _PAGE_USER only for a user access
        rlwinm  r1, r1, 32-12, 29, 29   # MSR[PR] (0x4000) -> _PAGE_USER (0x004)
        ori     r1, r1, PTE_PRESENT
.else
        li      r1, PTE_USER | PTE_PRESENT
.endif
        andc.   r1, r1, r3
        bne-    dmiss_none_603k
        ori     r3, r3, PTE_ACCESSED
        stw     r3, 0(r2)
        rlwinm  r1, r3, 32-10, 31, 31
        rlwinm  r2, r3, 32-7, 31, 31
        and     r1, r1, r2
        rlwimi  r3, r3, 32-1, 30, 30
        rlwimi  r3, r3, 32-1, 31, 31
        ori     r1, r1, PTE_NOT_HW
        andc    r1, r3, r1
        mtspr   RPA, r1
        mfspr   r3, DMISS
        tlbld   r3
        mfspr   r3, SRR1
        mtcrf   0x80, r3
        rfi

        .align  8
        .globl  dtlb_store_miss_603k
dtlb_store_miss_603k:                   # 0x1200: data TLB miss on a store
        mfctr   r0
        mfspr   r3, DMISS
        mfspr   r2, SPRG3
        lwz     r2, THREAD_PGDIR(r2)
        rlwimi  r2, r3, 12, 20, 29
        lwz     r2, 0(r2)
        rlwinm. r2, r2, 0, 0, 19
        beq-    dmiss_none_603k
        rlwimi  r2, r3, 22, 20, 29
        lwz     r3, 0(r2)
.ifdef KERNEL_PTES
        mfspr   r1, SRR1                # 2.2.0: _PAGE_USER only for a user access
        rlwinm  r1, r1, 32-12, 29, 29   # MSR[PR] (0x4000) -> _PAGE_USER (0x004)
        ori     r1, r1, PTE_RW | PTE_PRESENT
.else
        li      r1, PTE_RW | PTE_USER | PTE_PRESENT
.endif
        andc.   r1, r1, r3
        bne-    dmiss_none_603k
        ori     r3, r3, PTE_ACCESSED | PTE_DIRTY
        stw     r3, 0(r2)
        rlwimi  r3, r3, 32-1, 30, 30    # USER -> PP's high bit: PP 2, or 0
        li      r1, PTE_NOT_HW_PP1
        andc    r1, r3, r1
        mtspr   RPA, r1
        mfspr   r3, DMISS
        tlbld   r3
        mfspr   r3, SRR1
        mtcrf   0x80, r3
        rfi

dmiss_none_603k:                        # no translation: the DSI path (do_page_fault)
        mfspr   r3, SRR1
        mtctr   r0
        rlwinm  r1, r3, 9, 6, 6         # SRR1[S/L] -> DSISR bit 6: a store
        oris    r1, r1, 0x4000          # DSISR bit 1: no translation found
        mtspr   DSISR, r1
        mfspr   r1, DMISS
        mtspr   DAR, r1
        rlwinm  r2, r3, 0, 16, 31       # SRR1: the MSR bits only
        mtspr   SRR1, r2
        mtcrf   0x80, r3
        mfmsr   r0
        rlwinm  r0, r0, 0, 15, 13       # MSR[TGPR] off
        sync
        mtmsr   r0
        ba      0x300
