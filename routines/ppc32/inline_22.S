/*
 * inline_22: inline functions of Linux 2.1.51's and 2.2.0's headers, as macros for the
 * routines Entry assembles (sched_22.S, proc_22.S: emu.kernel.entry puts this file in the
 * prelude both programs share), so that each is written once however often its callers
 * inline it. Written for this book; read for facts in davej-history f6cce5dae.
 */

# include/asm-ppc/system.h's __restore_flags(flags): if EE was on and an interrupt was lost,
# __sti runs them (here: LOST, the caller's refusal, since none is ever lost); else sync;
# mtmsr; isync. LABEL names this copy's mtmsr (a symbol, as the copies written out had).
        .macro  RESTORE_FLAGS flags, label, lost
        andi.   r0, \flags, MSR_EE
        beq     \label
        lis     r9, KDATA_LOST_IRQS@ha
        lwz     r9, KDATA_LOST_IRQS@l(r9)
        cmpwi   0, r9, 0
        bne-    \lost
\label:
        sync
        mtmsr   \flags
        isync
        .endm

# include/linux/sched.h's __add_wait_queue(p, wait) (637-641 at f6cce5dae): wait->next = *p
# or, on a queue never used, WAIT_QUEUE_HEAD(p) = p - 4; *p = wait. P and WAIT are
# registers, LINKED this copy's label; r10 is used. The caller's file gives WQ_NEXT.
        .macro  ADD_WAIT_QUEUE p, wait, linked
        lwz     r10, 0(\p)
        cmpwi   0, r10, 0
        bne     \linked
        addi    r10, \p, -4
\linked:
        stw     r10, WQ_NEXT(\wait)
        stw     \wait, 0(\p)
        .endm

# include/linux/sched.h's __remove_wait_queue(p, wait) (654-663): next = wait->next, head =
# next; while ((tmp = head->next) != wait) head = tmp; head->next = next. WAIT is a
# register, FIND and FOUND this copy's labels; r9-r11 are used.
        .macro  REMOVE_WAIT_QUEUE wait, find, found
        lwz     r9, WQ_NEXT(\wait)
        mr      r10, r9
\find:
        lwz     r11, WQ_NEXT(r10)
        cmpw    0, r11, \wait
        beq     \found
        mr      r10, r11
        b       \find
\found:
        stw     r9, WQ_NEXT(r10)
        .endm
