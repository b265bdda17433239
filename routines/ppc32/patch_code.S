/*
 * Self-modifying code, with and without the flush the PowerPC architecture requires.
 *
 * A "slot" is two instructions in RAM: `li r3, N; blr`. call_slot runs it; patch_* rewrite
 * its first instruction to `li r3, 2` and run it again. The PowerPC I-cache does not snoop
 * stores (Mackerras 2003 section 2), so after patch_no_flush the processor may execute the
 * old `li r3, 1` from its I-cache: the model reports that fetch as stale. patch_with_flush
 * uses the sequence of the 750 user's manual for modified instructions (dcbst; sync; icbi;
 * sync; isync), the same steps as flush_dcache_icache does for a whole page.
 *
 * In:  r3 = address of the slot
 * Out: r3 = the value the slot returned
 */
        .equ    LI_R3_2, 0x38600002         # encoding of `li r3, 2`

        .globl  call_slot
call_slot:
        mflr    r0
        mtctr   r3
        bctrl                               # run the slot: it returns in r3
        mtlr    r0
        blr

        .globl  patch_no_flush
patch_no_flush:
        mflr    r0
        lis     r4, LI_R3_2@h
        ori     r4, r4, LI_R3_2@l
        stw     r4, 0(r3)                   # new instruction, still in the D-cache
        mtctr   r3
        bctrl
        mtlr    r0
        blr

        .globl  patch_with_flush
patch_with_flush:
        mflr    r0
        lis     r4, LI_R3_2@h
        ori     r4, r4, LI_R3_2@l
        stw     r4, 0(r3)
        dcbst   0, r3                       # push the new instruction out to memory
        sync
        icbi    0, r3                       # drop the old one from the I-cache
        sync
        isync
        mtctr   r3
        bctrl
        mtlr    r0
        blr
