/*
 * entry_22: the exception entry and exit of Linux 2.2.0 on the PowerPC (in 2.2 all of it is
 * in arch/ppc/kernel/head.S; entry.S came with 2.3), for the book's kernel model
 * (emu.kernel.entry) on the 603 and the 604. Written for this book from the algorithm of
 * head.S v1.114 (1998/12/28), not copied:
 *
 *   SystemCall22 (vector 0xc00), DataAccess22 (0x300), InstructionAccess22 (0x400): the
 *     exception prologue, which runs untranslated (MSR[IR|DR] are off on an exception):
 *     r20 and r21 go to SPRG0 and SPRG1; SPRG2 holds the physical address of the exception
 *     frame when the exception came from user mode (int_return put it there), 0 when it came
 *     from the kernel (then the frame goes below the kernel stack pointer); CR, r22, r23,
 *     r20, r21, LR, CTR, XER, r0, r1, r2 and the back chain are stored in the frame, r22 =
 *     SRR0, r23 = SRR1, r1 = the frame, r3-r6 stored. Then the MSR the handler will run
 *     with (MSR_KERNEL, EE as it was) and `bl transfer_to_handler`, followed by two words:
 *     the handler and where it returns to;
 *   transfer_to_handler: NIP, MSR (POW cleared), r7-r19 and r24-r31 into the frame; from
 *     user mode, tss.regs = the frame (SPRG3 holds the physical address of the current
 *     thread_struct); r2 = current; TRAP = the vector (LR & 0x3f00: the code must sit on a
 *     16 KB boundary, as the vectors sit at 0 on the hardware); RESULT = 0; SPRG2 = 0 (now in
 *     the kernel); the kernel-stack overflow check; then SRR0 = the handler, SRR1 = its
 *     MSR, LR = the return word, sync; isync; rfi: into the handler with translation on;
 *   DoSyscall22: tss.last_syscall = r0; CR0[SO] cleared in the saved CR; the sigreturn
 *     number (0x7777) and a traced task are refused (the model has neither); r0 checked
 *     against NR_syscalls and the table (an empty slot: ENOSYS); the handler called with
 *     blrl; RESULT = r3; a result in the error range (-_LAST_ERRNO..-1) is negated and CR0[SO]
 *     set in the saved CR (what libc's `bnslr` tests); GPR3 = the result; on to int_return;
 *   int_return: external interrupts off (mfmsr, andc, sync; isync, mtmsr, sync; isync);
 *     if the interrupted MSR had EE: lost interrupts and bottom halves (none here: their
 *     words are 0); returning to user mode: need_resched (schedule: refused, not modelled
 *     yet), sigpending (refused), tss.ksp and SPRG2 = the frame's physical address; then
 *     CTR, LR, XER, CR, r3-r31, SRR0/SRR1 from NIP/MSR, r0, r2, r1 restored; sync; isync;
 *     rfi;
 *   _switch22 (r3 = prev's thread_struct, r4 = next's, r5 = next's context), from
 *     schedule: a full frame pushed on prev's kernel stack (r0-r31, NIP = LR, MSR without
 *     FP, LINK, CR, CTR, XER, TRAP 0x0ff0), prev's tss.ksp, SPRG3 = next's thread, next's
 *     kernel sp and current, the 8 user segment registers (VSID = context << 4 | Ks | Kp,
 *     mtsrin per 256 MB segment; no TLB or hash-table flush: entries are VSID-tagged), then
 *     int_return, which leaves through next's frame: into next's own call of schedule
 *     (a kernel frame), or to user mode (a new task's frame from fork);
 *   schedule22, sleep_on22, wake_up22: in routines/ppc32/sched_22.S (2.2.0's schedule(),
 *     interruptible_sleep_on and __wake_up as guest code), loaded after this file;
 *   sys_getppid22: current->p_opptr->pid (kernel/sched.c, two loads, as gcc compiles it);
 *   sys_exit22, do_page_fault22 and what is refused: the model's way to Python, a branch to
 *     host_stop22 with r3 = the reason and r4 = the argument: the run stops there, Python
 *     does the work (do_page_fault of the kernel model, or the end of the program) and, for
 *     a fault, resumes at LR (int_return), as do_page_fault's return would.
 *
 * LINUX_2_1_51 defined (Entry(kernel, version="2.1.51"), issue 30): the entry and exit of
 * Linux 2.1.51 instead, the kernel Dougan, Mackerras and Yodaiken started from (read for
 * facts in the davej-history import of 2.1.51pre1, commit 94520e420, arch/ppc/kernel/head.S
 * and arch/ppc/mm/init.c; nothing copied). Its shape is the same (Paul Mackerras's 1996
 * real-mode prologue, transfer_to_handler, DoSyscall, int_return, _switch); what differs:
 *   - the prologue tells user from kernel by SRR1[PR] and takes the kernel sp from the
 *     thread's tss.ksp (SPRG3, two more instructions and a load), where 2.2 keeps the
 *     frame's address in SPRG2; it stores r1 and the back chain first: 35 instructions
 *     from user mode (2.2.0: 30), 39 to transfer_to_handler for a system call (34);
 *   - transfer_to_handler stores the MSR as it was (no MSR_POW clear), sets no SPRG2 and
 *     has no kernel-stack check: 42 instructions from user mode (51);
 *   - int_return tests the global need_resched (2.2: current's) and signal & ~blocked
 *     (2.2: sigpending), and leaves only tss.ksp for the next entry (no SPRG2): 79
 *     instructions back to user mode (82);
 *   - each SYNC of head.S is a lone sync (exception_22.S's SYNC_HEAD: 2.1.51's macro was
 *     function-like and written bare), 2.2.0's `sync; isync`: in transfer_to_handler, twice
 *     and once more in int_return, twice in _switch;
 *   - DoSyscall and _switch run the same instructions as 2.2.0's (2.1.51's _switch steps the
 *     VSID by 1 from context << 4: here the kernel model's VSIDs, as below).
 * It is the oldest entry a PowerMac kernel of the tree had: PowerMac support came with
 * 2.1.48pre3 (commit cb8ca05c5) and this design with it; 2.1.16's older entry (c0711bf3d:
 * an rfi to translation before saving, stmw, the FPSCR) is the PReP-only port's.
 * The rest of that kernel as the model runs it (Dougan 1999 notebook 06): on the PowerMac,
 * mapin_ram maps all of RAM with PTEs and no BAT (nobats here); the 603 reloads its TLB
 * from the hash table (tlbmiss_603_hash.S, the same search as 2.1.51's handlers); a range
 * flush searches the hash table page by page (flush_hash_search.S); sched_22.S runs 2.1.51's
 * schedule(), goodness and wake-ups, pipe_22.S 2.1.51's sys_read / sys_write and
 * pipe_read / pipe_write.
 *
 * What the model changes: without BATs (KERNEL_SEGMENT0 defined: the kernel, at EA =
 * physical, lives in segment 0 with a VSID of its own, as 2.2's kernel segments 12-15 have)
 * _switch22 reloads segments 1-7 only; it steps the VSID by 0x111 per segment, not 1, so that
 * its VSIDs are those of the kernel model's hash_page (2.4's CTX_TO_VSID, emu.kernel.ppc32);
 * KERNELBASE is 0 (the kernel's code and data sit where they are
 * loaded; BAT2 maps all of RAM at EA = physical, supervisor only), so tophys and tovirt are
 * `addis rD, rS, 0` (one instruction each, as on Linux); on a hashed MMU (USER_HASH: the
 * 604, or the 603 searching a hash table, whose miss handler branches here) DataAccess22
 * calls hash_page for a user address as 2.2.0 does: hash_page_user22 (exception_22.S's
 * HASH_PAGE_USER22, the instructions the 603 backend's own path runs too), in the
 * gap below 0xc00 (head.S has code between its vectors too), so that nothing after the
 * vectors moves; the sys_call_table, the task's fields and the kernel's
 * words are where the prelude's equates (emu.kernel.entry) put them. With KERNEL_HASH
 * defined (no BATs on a hashed MMU: the 604, or the 603 searching a hash table), a DSI or
 * ISI for a kernel address that found no HPTE is 2.2.0's: the prologue calls hash_page
 * (hash_kernel22) in real mode and, once the HPTE is made, returns straight to the access
 * from the frame (fast_return22); anything else goes on to do_page_fault.
 */
        # include/asm-ppc/errno.h, include/linux/errno.h, linux/sched.h
        .equ    EINTR, 4
        .equ    ENOSYS, 38
        .equ    ERESTARTNOHAND, 514
        .equ    LAST_ERRNO, 516
        .equ    PF_TRACESYS, 0x20
        # the model's ways to Python (r3 at host_stop22; Python resumes at LR)
        .equ    HOST_EXIT, 1
        .equ    HOST_FAULT, 2
        .equ    HOST_REFUSED, 3
        .equ    MSR_FP, 0x2000
        .equ    TASK_STATE, 0
        .equ    TASK_INTERRUPTIBLE, 1

        .globl  entry22_base
entry22_base:
        .space  0x300


        .globl  DataAccess22
DataAccess22:                           # base + 0x300: data storage interrupt
        EXCEPTION_PROLOG da
        mfspr   r20, DSISR
.ifdef KERNEL_HASH
        andis.  r0, r20, 0x4000         # no HPTE (DSISR bit 1) ...
.ifdef USER_HASH
        beq     da_user
.else
        beq     da_slow
.endif
        mfspr   r4, DAR
        rlwinm. r0, r4, 4, 28, 31       # ... for the kernel (segment 0): hash_page
.ifdef USER_HASH
        bne     da_user
.else
        bne     da_slow
.endif
        rlwinm  r3, r20, 17, 21, 21     # DSISR's store bit (0x02000000) -> _PAGE_RW
        bl      hash_kernel22
        cmpwi   0, r3, 16
        bne     fast_return22           # made: retry the access
        lwz     r3, GPR3(r21)
        lwz     r4, GPR4(r21)
        lwz     r5, GPR5(r21)
        lwz     r6, GPR6(r21)
.else
.ifdef USER_HASH
        USER_HASH_DA
.endif
.endif
da_slow:
        stw     r20, _DSISR(r21)
        mr      r5, r20
        mfspr   r4, DAR
        stw     r4, _DAR(r21)
        addi    r3, r1, STACK_FRAME_OVERHEAD
        li      r20, MSR_KERNEL
        rlwimi  r20, r23, 0, 16, 16     # EE as it was
        bl      transfer_to_handler
        .long   do_page_fault22
        .long   int_return

        .align  8
        .globl  InstructionAccess22
InstructionAccess22:                    # base + 0x400: instruction storage interrupt
        EXCEPTION_PROLOG ia
.ifdef KERNEL_HASH
        andis.  r0, r23, 0x4000         # no HPTE (SRR1 bit 1) ...
.ifdef USER_HASH
        beq     ia_user
.else
        beq     ia_slow
.endif
        rlwinm. r0, r22, 4, 28, 31      # ... for kernel text (segment 0): hash_page
.ifdef USER_HASH
        bne     ia_user
.else
        bne     ia_slow
.endif
        li      r3, 0                   # a fetch
        mr      r4, r22
        bl      hash_kernel22
        cmpwi   0, r3, 16
        bne     fast_return22
        lwz     r5, GPR5(r21)
        lwz     r6, GPR6(r21)
.else
.ifdef USER_HASH
        USER_HASH_IA
.endif
.endif
ia_slow:
        addi    r3, r1, STACK_FRAME_OVERHEAD
        mr      r4, r22                 # the address: SRR0
        mr      r5, r23                 # SRR1: why
        li      r20, MSR_KERNEL
        rlwimi  r20, r23, 0, 16, 16
        bl      transfer_to_handler
        .long   do_page_fault22
        .long   int_return

        .align  8                       # base + 0x500: the gap up to 0xc00 holds the
vectors_gap:                            # user's hash-miss code (USER_HASH), so that
.ifdef USER_HASH                        # nothing after the vectors moves
.ifdef KERNEL_HASH
da_user:                                # not a kernel page: 2.2.0's test and call
        USER_HASH_DA
        b       da_slow
ia_user:
        USER_HASH_IA
        b       ia_slow
.endif
        HASH_PAGE_USER22
.endif
vectors_gap_end:
        .space  0xc00 - (vectors_gap_end - entry22_base)     # up to base + 0xc00

        .globl  SystemCall22
SystemCall22:                           # base + 0xc00: sc
        EXCEPTION_PROLOG sc
        stw     r3, ORIG_GPR3(r21)
        li      r20, MSR_KERNEL
        rlwimi  r20, r23, 0, 16, 16
        bl      transfer_to_handler
        .long   DoSyscall22
        .long   int_return

        .align  5
        .globl  transfer_to_handler
transfer_to_handler:
        stw     r22, _NIP(r21)
.ifndef LINUX_2_1_51                    # 2.1.51 stores the MSR as it was
        lis     r22, MSR_POW@h
        andc    r23, r23, r22
.endif
        stw     r23, _MSR(r21)
        stw     r7, GPR7(r21)
        stw     r8, GPR8(r21)
        stw     r9, GPR9(r21)
        stw     r10, GPR10(r21)
        stw     r11, GPR11(r21)
        stw     r12, GPR12(r21)
        stw     r13, GPR13(r21)
        stw     r14, GPR14(r21)
        stw     r15, GPR15(r21)
        stw     r16, GPR16(r21)
        stw     r17, GPR17(r21)
        stw     r18, GPR18(r21)
        stw     r19, GPR19(r21)
        stw     r24, GPR24(r21)
        stw     r25, GPR25(r21)
        stw     r26, GPR26(r21)
        stw     r27, GPR27(r21)
        stw     r28, GPR28(r21)
        stw     r29, GPR29(r21)
        stw     r30, GPR30(r21)
        stw     r31, GPR31(r21)
        andi.   r23, r23, MSR_PR
        mfspr   r23, SPRG3              # the current thread_struct (physical)
        beq     tth_kernel
        addi    r24, r1, STACK_FRAME_OVERHEAD
        stw     r24, TSS_REGS(r23)      # from user mode: tss.regs = this frame
tth_kernel:
        addi    r2, r23, -TSS           # current
        addis   r2, r2, 0               # tovirt
        mflr    r23
        andi.   r24, r23, 0x3f00        # the vector
        stw     r24, TRAP(r21)
        li      r22, 0
        stw     r22, RESULT(r21)
.ifndef LINUX_2_1_51                    # 2.1.51: no SPRG2, no stack check
        mtspr   SPRG2, r22              # in the kernel now
        addi    r24, r2, TASK_STRUCT_SIZE
        cmplw   0, r1, r2               # current < sp < current + TASK_STRUCT_SIZE:
        cmplw   1, r1, r24              # the kernel stack ran into the task_struct
        crand   1, 1, 4
        bgt     stack_overflow22
.endif
        lwz     r24, 0(r23)             # the handler
        lwz     r23, 4(r23)             # where it returns to
        mtspr   SRR0, r24
        mtspr   SRR1, r20
        mtlr    r23
        SYNC_HEAD
        rfi                             # into the handler, translation on

stack_overflow22:
        li      r3, HOST_REFUSED
        li      r4, 1
        b       host_stop22

        .align  5
        .globl  DoSyscall22
DoSyscall22:
        stw     r0, TSS+TSS_LAST_SYSCALL(r2)
        lwz     r11, _CCR(r1)           # CR0[SO] cleared in the saved CR
        lis     r10, 0x1000
        andc    r11, r11, r10
        stw     r11, _CCR(r1)
        cmpwi   0, r0, 0x7777           # sys_sigreturn: not modelled
        beq-    sigreturn22
        lwz     r10, TASK_FLAGS(r2)
        andi.   r10, r10, PF_TRACESYS
        bne-    traced22
        cmplwi  0, r0, NR_SYSCALLS
        bge-    ds_enosys
        lis     r10, SYS_CALL_TABLE@h
        ori     r10, r10, SYS_CALL_TABLE@l
        slwi    r0, r0, 2
        lwzx    r10, r10, r0            # the handler
        cmpwi   0, r10, 0
        beq-    ds_enosys
        mtlr    r10
        addi    r9, r1, STACK_FRAME_OVERHEAD
        blrl
        stw     r3, RESULT(r1)
        li      r10, -LAST_ERRNO
        cmplw   0, r3, r10
        blt     ds_store                # not an error
        neg     r3, r3
        cmpwi   0, r3, ERESTARTNOHAND
        bne     ds_error
        li      r3, EINTR
ds_error:
        lwz     r10, _CCR(r1)           # CR0[SO] set: an error
        oris    r10, r10, 0x1000
        stw     r10, _CCR(r1)
ds_store:
        stw     r3, GPR3(r1)
        b       int_return
ds_enosys:
        li      r3, ENOSYS
        b       ds_error

sigreturn22:
        li      r3, HOST_REFUSED
        li      r4, 2
        b       host_stop22
traced22:
        li      r3, HOST_REFUSED
        li      r4, 3
        b       host_stop22

        .align  5
        .globl  int_return
int_return:
        mfmsr   r30                     # external interrupts off
        li      r4, 0
        ori     r4, r4, MSR_EE
        andc    r30, r30, r4
        SYNC_HEAD
        mtmsr   r30
        SYNC_HEAD
        lwz     r5, _MSR(r1)
        and.    r5, r5, r4
        beq     ir_no_ee
        lis     r4, KDATA_LOST_IRQS@ha  # n_lost_interrupts
        lwz     r4, KDATA_LOST_IRQS@l(r4)
        cmpwi   0, r4, 0
        bne-    ir_lost_irq
        lis     r4, KDATA_BH_MASK@ha    # bh_mask & bh_active
        lwz     r4, KDATA_BH_MASK@l(r4)
        lis     r5, KDATA_BH_ACTIVE@ha
        lwz     r5, KDATA_BH_ACTIVE@l(r5)
        and.    r4, r4, r5
        bne-    ir_bottom_half
ir_no_ee:
        lwz     r3, _MSR(r1)            # back to user mode?
        andi.   r3, r3, MSR_PR
        beq+    ir_restore
.ifdef LINUX_2_1_51
        lis     r3, KDATA_NEED_RESCHED@ha # 2.1.51: the global need_resched
        lwz     r3, KDATA_NEED_RESCHED@l(r3)
        cmpwi   0, r3, 0
        bne-    ir_schedule
        lwz     r3, BLOCKED(r2)         # 2.1.51: signal & ~blocked
        lwz     r5, SIGNAL(r2)
        andc.   r0, r5, r3
        bne-    ir_signal
        addi    r4, r1, INT_FRAME_SIZE+STACK_UNDERHEAD
        stw     r4, TSS+TSS_KSP(r2)     # the kernel sp for the next entry (no SPRG2)
.else
        lwz     r3, NEED_RESCHED(r2)
        cmpwi   0, r3, 0
        bne-    ir_schedule
        lwz     r5, SIGPENDING(r2)
        cmpwi   0, r5, 0
        bne-    ir_signal
        addi    r4, r1, INT_FRAME_SIZE+STACK_UNDERHEAD
        stw     r4, TSS+TSS_KSP(r2)     # the kernel sp for the next entry
        addis   r3, r1, 0               # tophys
        mtspr   SPRG2, r3               # the frame of the next exception from user mode
.endif
ir_restore:
        lwz     r2, _CTR(r1)
        lwz     r0, _LINK(r1)
        mtctr   r2
        mtlr    r0
        lwz     r2, _XER(r1)
        lwz     r0, _CCR(r1)
        mtspr   XER, r2
        mtcrf   0xff, r0
        lwz     r3, GPR3(r1)
        lwz     r4, GPR4(r1)
        lwz     r5, GPR5(r1)
        lwz     r6, GPR6(r1)
        lwz     r7, GPR7(r1)
        lwz     r8, GPR8(r1)
        lwz     r9, GPR9(r1)
        lwz     r10, GPR10(r1)
        lwz     r11, GPR11(r1)
        lwz     r12, GPR12(r1)
        lwz     r13, GPR13(r1)
        lwz     r14, GPR14(r1)
        lwz     r15, GPR15(r1)
        lwz     r16, GPR16(r1)
        lwz     r17, GPR17(r1)
        lwz     r18, GPR18(r1)
        lwz     r19, GPR19(r1)
        lwz     r20, GPR20(r1)
        lwz     r21, GPR21(r1)
        lwz     r22, GPR22(r1)
        lwz     r23, GPR23(r1)
        lwz     r24, GPR24(r1)
        lwz     r25, GPR25(r1)
        lwz     r26, GPR26(r1)
        lwz     r27, GPR27(r1)
        lwz     r28, GPR28(r1)
        lwz     r29, GPR29(r1)
        lwz     r30, GPR30(r1)
        lwz     r31, GPR31(r1)
        lwz     r2, _NIP(r1)
        lwz     r0, _MSR(r1)
        mtspr   SRR0, r2
        mtspr   SRR1, r0
        lwz     r0, GPR0(r1)
        lwz     r2, GPR2(r1)
        lwz     r1, GPR1(r1)
        SYNC_HEAD
        rfi

ir_lost_irq:
        li      r3, HOST_REFUSED
        li      r4, 4
        b       host_stop22
ir_bottom_half:
        li      r3, HOST_REFUSED
        li      r4, 5
        b       host_stop22
ir_schedule:
        li      r3, HOST_REFUSED
        li      r4, 6
        b       host_stop22
ir_signal:
        li      r3, HOST_REFUSED
        li      r4, 7
        b       host_stop22

        .align  5
        .globl  _switch22
_switch22:                              # r3 = prev's tss, r4 = next's, r5 = next's context
        stwu    r1, -INT_FRAME_SIZE-STACK_UNDERHEAD(r1)
        stw     r0, GPR0(r1)
        lwz     r0, 0(r1)               # the old sp
        stw     r0, GPR1(r1)
        stw     r2, GPR2(r1)
        stw     r3, GPR3(r1)
        stw     r4, GPR4(r1)
        stw     r5, GPR5(r1)
        stw     r6, GPR6(r1)
        stw     r7, GPR7(r1)
        stw     r8, GPR8(r1)
        stw     r9, GPR9(r1)
        stw     r10, GPR10(r1)
        stw     r11, GPR11(r1)
        stw     r12, GPR12(r1)
        stw     r13, GPR13(r1)
        stw     r14, GPR14(r1)
        stw     r15, GPR15(r1)
        stw     r16, GPR16(r1)
        stw     r17, GPR17(r1)
        stw     r18, GPR18(r1)
        stw     r19, GPR19(r1)
        stw     r20, GPR20(r1)
        stw     r21, GPR21(r1)
        stw     r22, GPR22(r1)
        stw     r23, GPR23(r1)
        stw     r24, GPR24(r1)
        stw     r25, GPR25(r1)
        stw     r26, GPR26(r1)
        stw     r27, GPR27(r1)
        stw     r28, GPR28(r1)
        stw     r29, GPR29(r1)
        stw     r30, GPR30(r1)
        stw     r31, GPR31(r1)
        mflr    r20                     # the switch returns to schedule's caller
        mfmsr   r22
        li      r0, MSR_FP              # floating point off
        andc    r22, r22, r0
        stw     r20, _NIP(r1)
        stw     r22, _MSR(r1)
        stw     r20, _LINK(r1)
        mfcr    r20
        mfctr   r22
        mfspr   r23, XER
        stw     r20, _CCR(r1)
        stw     r22, _CTR(r1)
        stw     r23, _XER(r1)
        li      r0, 0x0ff0
        stw     r0, TRAP(r1)
        stw     r1, TSS_KSP(r3)         # prev's kernel sp
        sync
        addis   r0, r4, 0               # tophys
        mtspr   SPRG3, r0               # the current thread
        SYNC_HEAD
        lwz     r1, TSS_KSP(r4)         # next's kernel sp
        addi    r2, r4, -TSS            # current = next
        rlwinm  r5, r5, 4, 8, 27        # VSID = context << 4
        addis   r5, r5, 0x6000          # Ks, Kp
.ifdef KERNEL_SEGMENT0
        addi    r5, r5, 0x111           # segment 0 is the kernel's (no BATs): from 1
        li      r0, 7
        mtctr   r0
        lis     r3, 0x1000
.else
        li      r0, 8                   # TASK_SIZE / 256 MB: the user segments
        mtctr   r0
        li      r3, 0
.endif
sw_segments:
        mtsrin  r5, r3
        addi    r5, r5, 0x111           # the next segment's VSID (the kernel model's step)
        addis   r3, r3, 0x1000
        bdnz    sw_segments
        SYNC_HEAD
        b       int_return              # 2.2 falls through into it

        .align  5
        .globl  sys_getppid22
sys_getppid22:                          # current->p_opptr->pid
        lwz     r9, P_OPPTR(r2)
        lwz     r3, PID(r9)
        blr

        .globl  sys_exit22
sys_exit22:                             # the program's end: the run stops
        mr      r4, r3
        li      r3, HOST_EXIT
        b       host_stop22

.ifdef KERNEL_HASH
# hash_kernel22: 2.2.0's hash_page for a kernel address (the kernel without BATs), called by
# the DSI / ISI prologue in real mode, r21 = the frame (physical): r3 = the access
# (_PAGE_RW for a store), r4 = the address. The current thread's page directory (the
# kernel's PTE pages are in every one; 2.2.0's PG_TABLES, 2.1.51's current->mm->pgd, each
# through tophys) gives the Linux PTE; the access needs _PAGE_PRESENT
# (and _PAGE_RW for a store), not _PAGE_USER (a supervisor access); the PTE is marked
# accessed (and dirty for a store) and create_hpte (routines/ppc32/
# hash_low_32.S) makes the HPTE with VSID 0, the kernel segment's. Counts the reloads
# (2.2.0's htab_reloads, here the kernel's only). Returns create_hpte's status, or 16: no
# translation (do_page_fault's). r7-r9, r12 and r13 are kept in the frame meanwhile.
# 2.2.0 has no _PAGE_HASHPTE (include/asm-ppc/pgtable.h, davej-history f6cce5dae): the PTE
# is marked accessed (and dirty), and since the prologue calls this only for "no HPTE
# found", create_hpte goes straight to an empty slot (r6 = 0), as 2.2.0's hash_page does
# for a PTE-not-found exception (head.S: `andis. r0,r20,0x4000; bne 10f`).
hash_kernel22:
        stw     r7, GPR7(r21)
        stw     r8, GPR8(r21)
        stw     r9, GPR9(r21)
        stw     r12, GPR12(r21)
        stw     r13, GPR13(r21)
        mflr    r13
        mfspr   r5, SPRG3               # the current thread: its page directory
.ifdef LINUX_2_1_51
        lwz     r5, TASK_MM-TSS(r5)     # 2.1.51: current->mm->pgd (as hash_page_user22)
        addis   r5, r5, 0
        lwz     r5, MM_PGD(r5)
.else
        lwz     r5, TSS_PGDIR(r5)       # 2.2.0: PG_TABLES (head.S 1232)
.endif
        ori     r3, r3, _PAGE_PRESENT
        addis   r5, r5, 0               # tophys (head.S 1233)
        rlwimi  r5, r4, 12, 20, 29      # pgdir + (ea >> 22) * 4
        lwz     r8, 0(r5)               # the PTE page, or 0
        rlwinm. r8, r8, 0, 0, 19
        beq-    hk_none
        addis   r8, r8, 0               # tophys (head.S 1238)
        rlwimi  r8, r4, 22, 20, 29      # the Linux PTE
        rlwinm  r0, r3, 32-3, 24, 24    # a store also sets _PAGE_DIRTY
        ori     r0, r0, _PAGE_ACCESSED  # no _PAGE_HASHPTE in 2.1.51 / 2.2.0
        lwz     r6, 0(r8)               # r6: the old PTE (2.2.0: lwz, stw, no reservation)
        andc.   r5, r3, r6              # a required bit missing?
        bne-    hk_none
        or      r5, r0, r6
        stw     r5, 0(r8)
        li      r3, 0                   # VSID 0: the kernel's segment
        li      r6, 0                   # no HPTE found (the prologue's test): an empty slot
        bl      create_hpte
        lis     r5, KDATA_KERNEL_RELOADS@ha # htab_reloads++
        lwz     r6, KDATA_KERNEL_RELOADS@l(r5)
        addi    r6, r6, 1
        stw     r6, KDATA_KERNEL_RELOADS@l(r5)
        b       hk_out
hk_none:
        li      r3, 16
hk_out:
        mtlr    r13
        lwz     r7, GPR7(r21)
        lwz     r8, GPR8(r21)
        lwz     r9, GPR9(r21)
        lwz     r12, GPR12(r21)
        lwz     r13, GPR13(r21)
        blr

# fast_return22: back to the access that missed, from the prologue's frame, in real mode
# (2.2.0's hash_page returns this way: no transfer_to_handler, no C)
fast_return22:
        mtspr   SRR0, r22
        mtspr   SRR1, r23
        lwz     r20, _CCR(r21)
        mtcrf   0xff, r20
        lwz     r20, _LINK(r21)
        mtlr    r20
        lwz     r20, _CTR(r21)
        mtctr   r20
        lwz     r20, _XER(r21)
        mtspr   XER, r20
        lwz     r0, GPR0(r21)
        lwz     r1, GPR1(r21)
        lwz     r2, GPR2(r21)
        lwz     r3, GPR3(r21)
        lwz     r4, GPR4(r21)
        lwz     r5, GPR5(r21)
        lwz     r6, GPR6(r21)
        lwz     r22, GPR22(r21)
        lwz     r23, GPR23(r21)
        lwz     r20, GPR20(r21)
        lwz     r21, GPR21(r21)
        rfi
.endif


        .globl  do_page_fault22
do_page_fault22:                        # r3 = regs: the kernel model's do_page_fault
        mr      r4, r3
        li      r3, HOST_FAULT
        b       host_stop22             # Python resumes at LR (int_return)

        .globl  host_stop22
host_stop22:                            # a run stops before this instruction
        nop
