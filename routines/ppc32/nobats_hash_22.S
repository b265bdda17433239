/*
 * nobats_hash_22.S: Linux 2.2.0's hash-table miss path for the kernel's own accesses when
 * the kernel is not mapped by the BATs (2.2's "nobats", __map_without_bats), for the
 * kernel routines the model calls outside a user run on the 604 (emu.kernel.ppc604 with
 * bats=False: clear_page, copy_page, the cache and TLB flushes, run translated as the real
 * kernel runs them) and for the model's C paths' data references (their PTE loads and
 * stores: ppc604 kernel_reference, whose DSI the backend delivers at nobats_dsi22 with
 * SRR0 the halt address, where the rfi ends the run). emu.kernel.entry has the same path
 * for a user run (entry_22.S, KERNEL_HASH); this file stands alone so that the backend
 * needs no task or frame of Entry's. The backend delivers both with SPRG2 = 0 (in the
 * kernel: transfer_to_handler's, head.S 1153), so the frame goes below r1.
 *
 * Written for this book from the algorithm of Linux 2.2.0 (read for facts in
 * davej-history, commit f6cce5dae; nothing copied):
 *   - arch/ppc/mm/init.c 806-885, mapin_ram: without BATs every page of RAM gets a Linux
 *     PTE in the kernel's page table (map_page), present and accessed, the data writable
 *     and dirty; the hash table holds none of them until a miss puts it there;
 *   - arch/ppc/kernel/head.S 400-425, EXCEPTION_PROLOG: from the kernel (SPRG2 = 0) the
 *     frame goes below the current stack pointer; CR, r20-r23, LR, CTR, XER, r0-r6 saved;
 *   - head.S 448-461, DataAccess (InstructionAccess alike): a "no HPTE" exception calls
 *     hash_page with the access (MSR_PR -> _PAGE_USER: 0 from the kernel; DSISR store ->
 *     _PAGE_RW);
 *   - head.S 1212-1404, hash_page: the current thread's page directory (SPRG3's
 *     PG_TABLES, head.S 465 and 1232-1233, through tophys: the kernel's entries are in
 *     every one) gives the Linux PTE (tophys of the PTE page, 1238), which must allow the
 *     access; it is marked accessed (dirty for a store), the HPTE made with the
 *     segment's VSID (0: the kernel's segment here) and hash_page returns straight to the
 *     access from the frame (no transfer_to_handler, no C).
 * The HPTE is create_hpte's (hash_low_32.S), as for exception_22.S's hash_page_user22 and
 * entry_22.S's hash_kernel22. A kernel access with no PTE (do_page_fault's) does not happen in the
 * model's routines: it stops the run (an illegal instruction).
 *
 * The prelude (emu.kernel.ppc603 / ppc604) defines create_hpte and NOBATS_RELOADS (the count
 * of HPTEs made for the kernel). SPRG3 holds the current thread, as on 2.2.0: the backend's
 * thread block (whose page directory it writes at each switch_mm, as 2.2.0's switch_mm
 * sets the thread's PG_TABLES) or, inside a user program's run, emu.kernel.entry's task.
 *
 * Instructions, by hand, for a DSI on a kernel page with a PTE: 32 (the prologue) + 8
 * (the tests and the bl) + 26 (nobats_hash_kernel22 up to create_hpte, its bl included)
 * + create_hpte + 12 (after it) + 3 (the status, the branch) + 22 (the return, its rfi):
 * 103 + create_hpte's (101 before session 30: the page directory from a word of the model's
 * and no tophys).
 */
        .equ    XER, 1
        .equ    DSISR, 18
        .equ    DAR, 19
        .equ    SRR0, 26
        .equ    SRR1, 27
        .equ    SPRG0, 272
        .equ    SPRG1, 273
        .equ    SPRG2, 274
        .equ    SPRG3, 275
        # thread_struct's pg_tables (2.2.0's PG_TABLES, offset 4 there): the first word of
        # the model's thread blocks (ppc603.THREAD_PGDIR, emu.kernel.entry's TSS_PGDIR)
        .equ    NB_PG_TABLES, 0
        # struct pt_regs (2.2.0 include/asm-ppc/ptrace.h) after a 16-byte frame header
        .equ    NB_GPR0, 16
        .equ    NB_GPR1, 20
        .equ    NB_GPR2, 24
        .equ    NB_GPR3, 28
        .equ    NB_GPR4, 32
        .equ    NB_GPR5, 36
        .equ    NB_GPR6, 40
        .equ    NB_GPR7, 44
        .equ    NB_GPR8, 48
        .equ    NB_GPR9, 52
        .equ    NB_GPR12, 64
        .equ    NB_GPR13, 68
        .equ    NB_GPR20, 96
        .equ    NB_GPR21, 100
        .equ    NB_GPR22, 104
        .equ    NB_GPR23, 108
        .equ    NB_CTR, 156
        .equ    NB_LINK, 160
        .equ    NB_XER, 164
        .equ    NB_CCR, 168
        .equ    NB_FRAME, 192 + 64      # INT_FRAME_SIZE + STACK_UNDERHEAD
        .equ    NB_PRESENT, 0x001
        .equ    NB_ACCESSED, 0x100

        # EXCEPTION_PROLOG from the kernel (head.S 400-425)
        .macro  NOBATS_PROLOG name
        mtspr   SPRG0, r20
        mtspr   SPRG1, r21
        mfcr    r20
        mfspr   r21, SPRG2              # the frame, if from user mode (0: the kernel's)
        cmpwi   0, r21, 0
        bne     \name\()_frame
        addis   r21, r1, 0              # tophys(kernel sp): KERNELBASE is 0 here
        subi    r21, r21, NB_FRAME
\name\()_frame:
        stw     r20, NB_CCR(r21)
        stw     r22, NB_GPR22(r21)
        stw     r23, NB_GPR23(r21)
        mfspr   r20, SPRG0
        stw     r20, NB_GPR20(r21)
        mfspr   r22, SPRG1
        stw     r22, NB_GPR21(r21)
        mflr    r20
        stw     r20, NB_LINK(r21)
        mfctr   r22
        stw     r22, NB_CTR(r21)
        mfspr   r20, XER
        stw     r20, NB_XER(r21)
        mfspr   r22, SRR0
        mfspr   r23, SRR1
        stw     r0, NB_GPR0(r21)
        stw     r1, NB_GPR1(r21)
        stw     r2, NB_GPR2(r21)
        stw     r1, 0(r21)              # the back chain
        addis   r1, r21, 0              # tovirt
        stw     r3, NB_GPR3(r21)
        stw     r4, NB_GPR4(r21)
        stw     r5, NB_GPR5(r21)
        stw     r6, NB_GPR6(r21)
        .endm

        .globl  nobats_dsi22
nobats_dsi22:                           # the DSI of a kernel routine's data access
        NOBATS_PROLOG nbd
        mfspr   r20, DSISR
        andis.  r0, r20, 0x4000         # no HPTE (DSISR bit 1) ...
        beq     nobats_fault22
        mfspr   r4, DAR
        rlwinm. r0, r4, 4, 28, 31       # ... in the kernel's segment (0)
        bne     nobats_fault22
        rlwinm  r3, r20, 17, 21, 21     # DSISR's store bit -> _PAGE_RW
        bl      nobats_hash_kernel22
        cmpwi   0, r3, 16
        beq     nobats_fault22
        b       nobats_return22

        .globl  nobats_isi22
nobats_isi22:                           # the ISI of a kernel routine's fetch
        NOBATS_PROLOG nbi
        andis.  r0, r23, 0x4000         # no HPTE (SRR1 bit 1) ...
        beq     nobats_fault22
        rlwinm. r0, r22, 4, 28, 31      # ... for the kernel's text (segment 0)
        bne     nobats_fault22
        li      r3, 0                   # a fetch
        mr      r4, r22
        bl      nobats_hash_kernel22
        cmpwi   0, r3, 16
        beq     nobats_fault22
        b       nobats_return22

nobats_fault22:                         # do_page_fault's: not in the model's routines
        .long   0

# hash_page for a kernel address: r3 = the access, r4 = the address, r21 = the frame
nobats_hash_kernel22:
        stw     r7, NB_GPR7(r21)
        stw     r8, NB_GPR8(r21)
        stw     r9, NB_GPR9(r21)
        stw     r12, NB_GPR12(r21)
        stw     r13, NB_GPR13(r21)
        mflr    r13
        mfspr   r5, SPRG3               # the current thread (DataAccess's r5, head.S 465)
        lwz     r5, NB_PG_TABLES(r5)    # its page directory (hash_page, head.S 1232)
        ori     r3, r3, NB_PRESENT
        addis   r5, r5, 0               # tophys (head.S 1233)
        rlwimi  r5, r4, 12, 20, 29      # pgdir + (ea >> 22) * 4
        lwz     r8, 0(r5)               # the PTE page, or 0
        rlwinm. r8, r8, 0, 0, 19
        beq-    nb_none
        addis   r8, r8, 0               # tophys (head.S 1238)
        rlwimi  r8, r4, 22, 20, 29      # the Linux PTE
        rlwinm  r0, r3, 32-3, 24, 24    # a store also sets _PAGE_DIRTY
        ori     r0, r0, NB_ACCESSED
        lwz     r6, 0(r8)
        andc.   r5, r3, r6              # a required bit missing?
        bne-    nb_none
        or      r5, r0, r6
        stw     r5, 0(r8)               # accessed (and dirty)
        li      r3, 0                   # VSID 0: the kernel's segment
        li      r6, 0                   # no HPTE found: an empty slot
        bl      create_hpte
        lis     r5, NOBATS_RELOADS@ha   # the kernel's reloads (2.2.0's htab_reloads)
        lwz     r6, NOBATS_RELOADS@l(r5)
        addi    r6, r6, 1
        stw     r6, NOBATS_RELOADS@l(r5)
        b       nb_out
nb_none:
        li      r3, 16
nb_out:
        mtlr    r13
        lwz     r7, NB_GPR7(r21)
        lwz     r8, NB_GPR8(r21)
        lwz     r9, NB_GPR9(r21)
        lwz     r12, NB_GPR12(r21)
        lwz     r13, NB_GPR13(r21)
        blr

# back to the access from the frame, in real mode (2.2.0's hash_page return)
nobats_return22:
        mtspr   SRR0, r22
        mtspr   SRR1, r23
        lwz     r20, NB_CCR(r21)
        mtcrf   0xff, r20
        lwz     r20, NB_LINK(r21)
        mtlr    r20
        lwz     r20, NB_CTR(r21)
        mtctr   r20
        lwz     r20, NB_XER(r21)
        mtspr   XER, r20
        lwz     r0, NB_GPR0(r21)
        lwz     r1, NB_GPR1(r21)
        lwz     r2, NB_GPR2(r21)
        lwz     r3, NB_GPR3(r21)
        lwz     r4, NB_GPR4(r21)
        lwz     r5, NB_GPR5(r21)
        lwz     r6, NB_GPR6(r21)
        lwz     r22, NB_GPR22(r21)
        lwz     r23, NB_GPR23(r21)
        lwz     r20, NB_GPR20(r21)
        lwz     r21, NB_GPR21(r21)
        rfi
