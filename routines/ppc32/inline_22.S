/*
 * flags_22: include/asm-ppc/system.h's __restore_flags(flags) of Linux 2.1.51 and 2.2.0, inline
 * in each caller, as a macro for the routines Entry assembles (sched_22.S, proc_22.S:
 * emu.kernel.entry puts this file in the prelude both programs share). If EE was on and an
 * interrupt was lost, __sti runs them (here: LOST, the caller's refusal, since none is ever
 * lost); else sync; mtmsr; isync. LABEL names this copy's mtmsr (a symbol, as the copies
 * written out had). Written for this book; read for facts in davej-history f6cce5dae.
 */
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
