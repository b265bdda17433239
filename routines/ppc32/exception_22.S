/*
 * exception_22: what Linux 2.2.0's exception entry (routines/ppc32/entry_22.S, loaded by
 * emu.kernel.entry) and the 603 backend's own hash-table miss path
 * (routines/ppc32/hash_miss_603.S, loaded by emu.kernel.ppc603) share, so that both run the
 * same instructions: the equates of the SPRs, struct pt_regs, the MSR and the model's Linux
 * PTE bits; head.S's EXCEPTION_PROLOG; DataAccess's and InstructionAccess's call to hash_page
 * (USER_HASH_DA / USER_HASH_IA) and hash_page itself for a user page (HASH_PAGE_USER22). It
 * defines symbols and macros only and emits no code: the loader puts it before the file that
 * uses it. Written for this book from the algorithm of head.S v1.114 (davej-history
 * f6cce5dae), not copied; see entry_22.S's header for the prologue's two versions.
 *
 * The user of HASH_PAGE_USER22 defines before it: TSS_PGDIR (2.2.0) or TASK_MM, TSS and
 * MM_PGD (LINUX_2_1_51), KDATA_HTAB_RELOADS (2.2.0's htab_reloads), create_hpte (from
 * hash_low_32.S); of EXCEPTION_PROLOG under LINUX_2_1_51, TSS_KSP; of USER_HASH_DA /
 * USER_HASH_IA, the labels da_slow / ia_slow (do_page_fault's way).
 */
# head.S's SYNC (entry_22.S: transfer_to_handler's rfi, int_return's mtmsr and rfi,
# _switch's SPRG3 and segments; hash_page's rfi below): 2.2.0's `#define SYNC sync;
# isync`. 2.1.51 defined it as a function-like macro, `#define SYNC() sync; isync` (head.S
# lines 33-35 at 94520e420), and wrote it bare, `SYNC`, which cpp does not expand without
# its parentheses; gas, which lowercased mnemonics (read.c's IGNORE_OPCODE_CASE), then
# assembled each as a lone `sync`. The object-like macro came with 2.1.79 (ae04feb38).
        .macro  SYNC_HEAD
        sync
.ifndef LINUX_2_1_51
        isync
.endif
        .endm

        .equ    XER, 1
        .equ    DSISR, 18
        .equ    DAR, 19
        .equ    SRR0, 26
        .equ    SRR1, 27
        .equ    SPRG0, 272
        .equ    SPRG1, 273
        .equ    SPRG2, 274
        .equ    SPRG3, 275
        # struct pt_regs (include/asm-ppc/ptrace.h, 2.2.0) after a 16-byte frame header
        .equ    STACK_FRAME_OVERHEAD, 16
        .equ    GPR0, 16
        .equ    GPR1, 20
        .equ    GPR2, 24
        .equ    GPR3, 28
        .equ    GPR4, 32
        .equ    GPR5, 36
        .equ    GPR6, 40
        .equ    GPR7, 44
        .equ    GPR8, 48
        .equ    GPR9, 52
        .equ    GPR10, 56
        .equ    GPR11, 60
        .equ    GPR12, 64
        .equ    GPR13, 68
        .equ    GPR14, 72
        .equ    GPR15, 76
        .equ    GPR16, 80
        .equ    GPR17, 84
        .equ    GPR18, 88
        .equ    GPR19, 92
        .equ    GPR20, 96
        .equ    GPR21, 100
        .equ    GPR22, 104
        .equ    GPR23, 108
        .equ    GPR24, 112
        .equ    GPR25, 116
        .equ    GPR26, 120
        .equ    GPR27, 124
        .equ    GPR28, 128
        .equ    GPR29, 132
        .equ    GPR30, 136
        .equ    GPR31, 140
        .equ    _NIP, 144
        .equ    _MSR, 148
        .equ    ORIG_GPR3, 152
        .equ    _CTR, 156
        .equ    _LINK, 160
        .equ    _XER, 164
        .equ    _CCR, 168
        .equ    TRAP, 176
        .equ    _DAR, 180
        .equ    _DSISR, 184
        .equ    RESULT, 188
        .equ    INT_FRAME_SIZE, 192     # sizeof(struct pt_regs) + STACK_FRAME_OVERHEAD
        .equ    STACK_UNDERHEAD, 64
        # include/asm-ppc/processor.h
        .equ    MSR_POW, 0x40000
        .equ    MSR_EE, 0x8000
        .equ    MSR_PR, 0x4000
        .equ    MSR_KERNEL, 0x1032      # ME | IR | DR | RI
        # the model's Linux PTE bits (2.4's layout, emu.kernel.pgtable)
        .equ    _PAGE_PRESENT, 0x001
        .equ    _PAGE_HASHPTE, 0x002
        .equ    _PAGE_ACCESSED, 0x100
.ifdef LINUX_2_1_51
        .equ    WEIRD_DSISR, 0x8470     # DataAccess's "weird error?" mask (2.1.51)
.else
        .equ    WEIRD_DSISR, 0xa470     # (2.2.0)
.endif

        # head.S's EXCEPTION_PROLOG (a cpp macro there), at each vector below: NAME gives
        # the labels of this copy (NAME21_sp, NAME_frame: head.S's local 1:)
        .macro  EXCEPTION_PROLOG name
.ifdef LINUX_2_1_51
        mtspr   SPRG0, r20
        mtspr   SPRG1, r21
        mfcr    r20
        mfspr   r21, SRR1               # 2.1.51: from user or kernel by SRR1[PR]
        andi.   r21, r21, MSR_PR
        mr      r21, r1                 # from the kernel: the current sp
        beq     \name\()21_sp
        mfspr   r21, SPRG3              # from user: the thread's kernel sp (tss.ksp)
        lwz     r21, TSS_KSP(r21)
\name\()21_sp:
        addis   r21, r21, 0             # tophys
        subi    r21, r21, INT_FRAME_SIZE+STACK_UNDERHEAD
        stw     r1, GPR1(r21)
        stw     r1, 0(r21)              # the back chain
        addis   r1, r21, 0              # tovirt: the kernel sp
        stw     r20, _CCR(r21)
        stw     r22, GPR22(r21)
        stw     r23, GPR23(r21)
        mfspr   r20, SPRG0
        stw     r20, GPR20(r21)
        mfspr   r22, SPRG1
        stw     r22, GPR21(r21)
        mflr    r20
        stw     r20, _LINK(r21)
        mfctr   r22
        stw     r22, _CTR(r21)
        mfspr   r20, XER
        stw     r20, _XER(r21)
        mfspr   r22, SRR0
        mfspr   r23, SRR1
        stw     r0, GPR0(r21)
        stw     r2, GPR2(r21)
        stw     r3, GPR3(r21)
        stw     r4, GPR4(r21)
        stw     r5, GPR5(r21)
        stw     r6, GPR6(r21)
.else
        mtspr   SPRG0, r20
        mtspr   SPRG1, r21
        mfcr    r20
        mfspr   r21, SPRG2              # the frame, if from user mode
        cmpwi   0, r21, 0
        bne     \name\()_frame
        addis   r21, r1, 0              # tophys(kernel sp)
        subi    r21, r21, INT_FRAME_SIZE+STACK_UNDERHEAD
\name\()_frame:
        stw     r20, _CCR(r21)
        stw     r22, GPR22(r21)
        stw     r23, GPR23(r21)
        mfspr   r20, SPRG0
        stw     r20, GPR20(r21)
        mfspr   r22, SPRG1
        stw     r22, GPR21(r21)
        mflr    r20
        stw     r20, _LINK(r21)
        mfctr   r22
        stw     r22, _CTR(r21)
        mfspr   r20, XER
        stw     r20, _XER(r21)
        mfspr   r22, SRR0
        mfspr   r23, SRR1
        stw     r0, GPR0(r21)
        stw     r1, GPR1(r21)
        stw     r2, GPR2(r21)
        stw     r1, 0(r21)              # the back chain
        addis   r1, r21, 0              # tovirt: the kernel sp
        stw     r3, GPR3(r21)
        stw     r4, GPR4(r21)
        stw     r5, GPR5(r21)
        stw     r6, GPR6(r21)
.endif
        .endm

        # 2.2.0's DataAccess / InstructionAccess call to hash_page (head.S 458-466,
        # 485-492) for a user page's miss on the 604 (USER_HASH): in line, or with
        # KERNEL_HASH out of line (da_user, ia_user: below the vectors), where the kernel
        # test sends what is not a kernel page
        .macro  USER_HASH_DA
        andis.  r0, r20, WEIRD_DSISR    # a weird error? else try to put a PTE
        bne     da_slow
        mfspr   r3, DAR                 # into the hash table
        rlwinm  r4, r23, 32-12, 29, 29  # MSR_PR -> _PAGE_USER
        rlwimi  r4, r20, 17, 21, 21     # DSISR's store bit -> _PAGE_RW
        mfspr   r5, SPRG3               # the current thread (physical)
        bl      hash_page_user22        # back here only if do_page_fault must run
        .endm
        .macro  USER_HASH_IA
        andis.  r0, r23, 0x4000         # no PTE found? then try to put one
        beq     ia_slow
.ifdef FETCH_FROM_IMISS
        mfspr   r3, IMISS               # (the 603 backend: SRR0 is the model's halt address)
.else
.ifdef FETCH_FROM_DAR
        mfspr   r3, DAR                 # (the 604 backend's own ISI: the same reason)
.else
        mr      r3, r22                 # into the hash table
.endif
.endif
        rlwinm  r4, r23, 32-12, 29, 29  # MSR_PR -> _PAGE_USER
        mr      r20, r23                # SRR1 has the reason bits
        mfspr   r5, SPRG3               # the current thread (physical)
        bl      hash_page_user22
        .endm

# hash_page_user22: the hash-table miss of a user page on a hashed MMU (the 604's hardware
# or the 603's miss handler searched the hash table and found no HPTE, or a store met a
# read-only HPTE), called by DataAccess22 / InstructionAccess22 (entry_22.S) or
# user_dsi603 / user_isi603 (hash_miss_603.S) or user_dsi604 / user_isi604 (hash_miss_604.S)
# in real mode as 2.2.0's DataAccess calls hash_page
# (head.S 455-479, 483-500): r3 = the address, r4 = the access (_PAGE_USER from MSR_PR,
# _PAGE_RW for a store), r5 = the current thread (SPRG3), r20 = the reason (DSISR, or SRR1
# for a fetch), r21 = the frame. Written from the algorithm of hash_page, head.S 1212-1402
# (2.2.0; 2.1.51's at its head.S 690-813), not copied: the thread's page directory (2.2.0:
# PG_TABLES; 2.1.51: current->mm->pgd) gives the Linux PTE, which must allow the access, else
# back to the caller (hash_page_out: do_page_fault follows); the PTE gets _PAGE_ACCESSED (and
# _PAGE_DIRTY for a store: the model's PTE has no _PAGE_HWWRITE), the VSID comes from the
# segment register (mfsrin), the HPTE from create_hpte (hash_low_32.S: the same words and
# slot choice as 2.2.0's inline search, r6 = _PAGE_HASHPTE asking it to tlbie and look for
# the existing HPTE first on a protection violation, as 2.2.0 does when the reason's "no
# PTE" bit is clear); then SYNC (create_hpte's sync, and isync), 2.2.0's two nops and its
# htab_reloads++, and the return from the exception straight from the frame (XER not
# restored: "we haven't used xer"), SYNC, rfi: the access is retried.
# With HASHPTE_24 (the backend's flush="hashpte", 2.4's Linux PTE with _PAGE_HASHPTE) the
# PTE also gets _PAGE_HASHPTE and create_hpte sees the old PTE (2.4's rule: look for the
# existing HPTE when the old PTE had the bit), so that 2.4's flushes find what it made.
# What the model adds: create_hpte is a call (2.2.0's search is inline), so r8, r9 and r12
# (create_hpte's, and the user's) are kept in the frame meanwhile: 6 loads and stores 2.2.0
# does not run. 2.1.51's SYNC is a lone sync (SYNC_HEAD above).
        .macro  HASH_PAGE_USER22
hash_page_user22:
.ifdef LINUX_2_1_51
        lwz     r5, TASK_MM-TSS(r5)     # current->mm (physical)
        addis   r5, r5, 0
        lwz     r5, MM_PGD(r5)          # its pgd
.else
        lwz     r5, TSS_PGDIR(r5)       # the thread's page directory (PG_TABLES)
.endif
        addis   r5, r5, 0               # tophys
        rlwimi  r5, r3, 12, 20, 29      # + (ea >> 22) * 4
        lwz     r5, 0(r5)               # the pmd entry
        rlwinm. r5, r5, 0, 0, 19        # the PTE page
        beq-    hpu_out                 # no mapping
        addis   r2, r5, 0               # tophys
        rlwimi  r2, r3, 22, 20, 29      # + ((ea >> 12) & 0x3ff) * 4
        lwz     r6, 0(r2)               # the Linux PTE
        ori     r4, r4, _PAGE_PRESENT
        andc.   r0, r4, r6              # access & ~permission
        bne-    hpu_out                 # not permitted
        ori     r0, r6, _PAGE_ACCESSED
        rlwinm  r5, r4, 32-3, 24, 24    # a _PAGE_RW access -> _PAGE_DIRTY
        or      r5, r5, r0
.ifdef HASHPTE_24
        ori     r5, r5, _PAGE_HASHPTE
.endif
        stw     r5, 0(r2)               # the PTE: accessed (dirty)
        stw     r8, GPR8(r21)
        stw     r9, GPR9(r21)
        stw     r12, GPR12(r21)
        mr      r4, r3                  # create_hpte's ea
        mfsrin  r3, r4                  # the segment register: its VSID
        rlwinm  r3, r3, 0, 8, 31
.ifndef HASHPTE_24
        andis.  r0, r20, 0x4000         # no PTE found: an empty slot
        li      r6, 0
        bne     hpu_make
        li      r6, _PAGE_HASHPTE       # a protection violation: tlbie, the HPTE searched for
hpu_make:
.endif
        bl      create_hpte             # (LR comes back from the frame below)
        lwz     r8, GPR8(r21)
        lwz     r9, GPR9(r21)
        lwz     r12, GPR12(r21)
.ifndef LINUX_2_1_51                    # SYNC: create_hpte ended with its sync
        isync
.endif
.ifndef LINUX_2_1_51
        nop
        nop
        lis     r2, KDATA_HTAB_RELOADS@h     # htab_reloads++
        ori     r2, r2, KDATA_HTAB_RELOADS@l
        addis   r2, r2, 0               # tophys
        lwz     r3, 0(r2)
        addi    r3, r3, 1
        stw     r3, 0(r2)
.endif
        lwz     r3, _CCR(r21)           # the return from the exception
        lwz     r4, _LINK(r21)
        lwz     r5, _CTR(r21)
        mtcrf   0xff, r3
        mtlr    r4
        mtctr   r5
        lwz     r0, GPR0(r21)
        lwz     r1, GPR1(r21)
        lwz     r2, GPR2(r21)
        lwz     r3, GPR3(r21)
        lwz     r4, GPR4(r21)
        lwz     r5, GPR5(r21)
        lwz     r6, GPR6(r21)
        mtspr   SRR1, r23
        mtspr   SRR0, r22
        lwz     r20, GPR20(r21)
        lwz     r22, GPR22(r21)
        lwz     r23, GPR23(r21)
        lwz     r21, GPR21(r21)
        SYNC_HEAD
        rfi
hpu_out:
        blr
        .endm
