/*
 * Interrupt entry and exit of Linux 2.6.12 on i386, as macros (no code of their own), written
 * for the book from arch/i386/kernel/entry.S of 2.6.12.1: SAVE_ALL after the vector's stub has
 * pushed orig_eax, and ret_from_intr's return to a kernel context (GET_THREAD_INFO; no work to
 * check there) with RESTORE_ALL. The segment registers' loads and the iret are left out: the
 * model's interrupts are calls (scsi_2612.S's common_interrupt, tick_2612.S's timer entries).
 */
        .macro  save_all orig_eax
        pushl   $(\orig_eax)                # the vector's stub: orig_eax
        cld                                 # SAVE_ALL
        pushl   $0                          # es, ds: their loads left out
        pushl   $0
        pushl   %eax
        pushl   %ebp
        pushl   %edi
        pushl   %esi
        pushl   %edx
        pushl   %ecx
        pushl   %ebx
        .endm

        .macro  ret_from_intr_kernel
        movl    $-8192, %ebp                # ret_from_intr: GET_THREAD_INFO; a kernel
        andl    %esp, %ebp                  # context: no work to check without
        .if     CONFIG_PREEMPT              # CONFIG_PREEMPT (resume_kernel is
        cli                                 # restore_nocheck); with it, resume_kernel
        cmpl    $0, TI_PREEMPT(%ebp)        # (entry.S 160-172): preempt_count zero and
        jnz     .Lrestore_nocheck\@         # need_resched set would call
        movl    TI_FLAGS(%ebp), %ecx        # preempt_schedule_irq (the frame's EFLAGS
        testb   $8, %cl                     # test left out: the model's interrupts are
        jz      .Lrestore_nocheck\@         # calls, no iret frame), which the model does
        ud2                                 # not run: it faults
.Lrestore_nocheck\@:
        .endif
        popl    %ebx                        # RESTORE_REGS
        popl    %ecx
        popl    %edx
        popl    %esi
        popl    %edi
        popl    %ebp
        popl    %eax
        addl    $12, %esp                   # ds, es, orig_eax
        .endm
