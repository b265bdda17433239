/*
 * set_context_22(context): Linux 2.1.79-2.2.0's set_context (arch/ppc/kernel/head.S), as
 * flush_tlb_mm's new context loads it for the running mm: the user segment registers 0-7
 * get the context's VSIDs (context * 897 * 16, + 0x111 per segment: CTX_TO_VSID).
 * Split out of flush_hash_search.S so that the 603 backend's 2.2.0 flush loads it too.
 * With KERNEL_SEGMENT0 (a kernel without BATs, emu.kernel.ppc603 / ppc604 bats=False)
 * segment 0 stays the kernel's (VSID 0) and only 1-7 are loaded.
 */
        .globl  set_context_22
set_context_22:                             # r3 context
        mulli   r3, r3, 897*16              # segment 0's VSID
.ifdef KERNEL_SEGMENT0
        addi    r3, r3, 0x111               # without BATs segment 0 is the kernel's (the
        lis     r4, 0x1000                  # book's kernel sits at EA = physical): 1-7,
        li      r5, 7                       # as _switch22 loads them (entry_22.S)
.else
        li      r4, 0                       # an address in segment 0
        li      r5, 8                       # the user segments, 0-7
.endif
        mtctr   r5
1:      mtsrin  r3, r4
        addi    r3, r3, 0x111
        addis   r4, r4, 0x1000
        bdnz    1b
        sync
        isync
        blr
