/*
 * set_context_22(context): Linux 2.1.79-2.2.0's set_context (arch/ppc/kernel/head.S), as
 * flush_tlb_mm's new context loads it for the running mm: the user segment registers 0-7
 * get the context's VSIDs (context * 897 * 16, + 0x111 per segment: CTX_TO_VSID).
 * Split out of flush_hash_search.S so that the 603 backend's 2.2.0 flush loads it too.
 */
        .globl  set_context_22
set_context_22:                             # r3 context
        mulli   r3, r3, 897*16              # segment 0's VSID
        li      r4, 0                       # an address in segment 0
        li      r5, 8                       # the user segments, 0-7
        mtctr   r5
1:      mtsrin  r3, r4
        addi    r3, r3, 0x111
        addis   r4, r4, 0x1000
        bdnz    1b
        sync
        isync
        blr
