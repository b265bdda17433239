/*
 * tlbmiss_603_hash: the PowerPC 603's TLB miss handlers when the kernel keeps a hashed page
 * table for it as for the 604, and the 603 "emulates the 604": it searches the hash table
 * (HTAB) in software. For the book's kernel model, emu.kernel.ppc603 with reload="hash".
 *
 * Models InstructionTLBMiss (0x1000), DataLoadTLBMiss (0x1100) and DataStoreTLBMiss
 * (0x1200) of Linux arch/ppc/kernel/head.S built without NO_RELOAD_HTAB (2.1 / 2.2.1; the
 * handlers follow the example handlers of the MPC603e User's Manual, chapter 5; the search
 * and the found path are instruction for instruction 2.1.51's, read in davej-history's
 * import of 2.1.51pre1, commit 94520e420: Table 3's unoptimized kernel), with their
 * way out InstructionAddressInvalid / DataAddressInvalid into the ISI / DSI path, whose
 * hash_page (routines/ppc32/hash_low_32.S; arch/ppc/mm/hashtable.S later) inserts the
 * missing HPTE from the Linux PTE; the access is then retried and misses again, this time
 * finding the HPTE. Written for this book from the algorithm, not copied. Load at 0x1000.
 *
 * The CPU enters with translation off and MSR[TGPR] set (r0-r3 are shadow registers), CR0 in
 * SRR1[0:3], and has computed what the search needs (MPC603e UM 5.5.2): HASH1 and HASH2, the
 * physical addresses of the primary and secondary PTE groups (from SDR1, the segment's VSID
 * and the page index, as the 604's hardware walk computes them), and ICMP / DCMP, the word 0
 * a matching HPTE has in the primary group (V | VSID | API). Each handler:
 *   1. keeps the interrupted program's CTR in r0 (the search counts with CTR);
 *   2. compares word 0 of the eight HPTEs of the primary group with the compare word;
 *   3. none matched: the same in the secondary group, with H (0x40) set in the compare word;
 *   4. found: word 1 (RPN, R, C, WIMG, PP) into RPA, then tlbli / tlbld of the missed
 *      address (IMISS / DMISS) into the way SRR1[WAY] names; CTR and CR0 back; rfi;
 *   5. in neither group: report "no translation" as the storage interrupt would (ISI:
 *      SRR1 bit 1; DSI: DSISR bit 1, bit 6 for a store, and DAR), TGPR off, on to 0x400 /
 *      0x300.
 * The store handler is the load handler with tlbld: a store to a read-only HPTE (PP 3, a
 * clean page) loads the entry, then raises a DSI, whose hash_page sets _PAGE_DIRTY and
 * makes the HPTE writable.
 *
 * Differences from head.S, none in the search: TGPR is cleared with rlwinm (Linux: xoris,
 * which toggles it; one instruction either way; clearing also works when the kernel model
 * enters the handler without TGPR); the ISI way out does not set DSISR and DAR ("shouldn't
 * be needed", head.S says) and no way out fixes up little-endian addresses (the model is
 * big-endian): three and two instructions fewer on a miss of the hash table; the found
 * path swaps r0 and r3 (Linux: tlbld r0), because capstone 5 decodes "tlbld r0" as the 4xx
 * "tlbwe" (the same opcode, 31/978), which the cost model would not see as a TLB load.
 */
        .equ    DSISR, 18
        .equ    DAR, 19
        .equ    SRR1, 27
        .equ    DMISS, 976
        .equ    DCMP, 977
        .equ    HASH1, 978
        .equ    HASH2, 979
        .equ    IMISS, 980
        .equ    ICMP, 981
        .equ    RPA, 982
        .equ    PTE_H, 0x40             # word 0: found through the secondary hash

        .globl  itlb_miss_603h
itlb_miss_603h:                         # 0x1000: instruction TLB miss
        mfctr   r0                      # the program's CTR: back before rfi
        mfspr   r2, HASH1               # the primary PTE group
        mfspr   r3, ICMP                # word 0 of a matching HPTE
ihash_group:
        li      r1, 8                   # eight HPTEs per group
        mtctr   r1
        addi    r2, r2, -8
ihash_next:
        lwzu    r1, 8(r2)               # word 0 of the next HPTE
        cmpw    r1, r3
        bdnzf   2, ihash_next           # until it matches or the group is done
        bne-    ihash_secondary
        lwz     r1, 4(r2)               # word 1: RPN, R, C, WIMG, PP
        mtctr   r0
        mfspr   r0, SRR1
        mtcrf   0x80, r0                # CR0 as it was at the miss
        mfspr   r3, IMISS
        mtspr   RPA, r1
        tlbli   r3
        rfi
ihash_secondary:
        andi.   r1, r3, PTE_H           # the secondary group searched already?
        bne-    imiss_none_603h
        mfspr   r2, HASH2
        ori     r3, r3, PTE_H
        b       ihash_group
imiss_none_603h:                        # not in the hash table: the ISI path (hash_page)
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
        .globl  dtlb_load_miss_603h
dtlb_load_miss_603h:                    # 0x1100: data TLB miss on a load
        mfctr   r0
        mfspr   r2, HASH1
        mfspr   r3, DCMP
dlhash_group:
        li      r1, 8
        mtctr   r1
        addi    r2, r2, -8
dlhash_next:
        lwzu    r1, 8(r2)
        cmpw    r1, r3
        bdnzf   2, dlhash_next
        bne-    dlhash_secondary
        lwz     r1, 4(r2)
        mtctr   r0
        mfspr   r0, SRR1
        mtcrf   0x80, r0
        mfspr   r3, DMISS
        mtspr   RPA, r1
        tlbld   r3
        rfi
dlhash_secondary:
        andi.   r1, r3, PTE_H
        bne-    dmiss_none_603h
        mfspr   r2, HASH2
        ori     r3, r3, PTE_H
        b       dlhash_group

        .align  8
        .globl  dtlb_store_miss_603h
dtlb_store_miss_603h:                   # 0x1200: data TLB miss on a store
        mfctr   r0
        mfspr   r2, HASH1
        mfspr   r3, DCMP
dshash_group:
        li      r1, 8
        mtctr   r1
        addi    r2, r2, -8
dshash_next:
        lwzu    r1, 8(r2)
        cmpw    r1, r3
        bdnzf   2, dshash_next
        bne-    dshash_secondary
        lwz     r1, 4(r2)
        mtctr   r0
        mfspr   r0, SRR1
        mtcrf   0x80, r0
        mfspr   r3, DMISS
        mtspr   RPA, r1
        tlbld   r3
        rfi
dshash_secondary:
        andi.   r1, r3, PTE_H
        bne-    dmiss_none_603h
        mfspr   r2, HASH2
        ori     r3, r3, PTE_H
        b       dshash_group

dmiss_none_603h:                        # not in the hash table: the DSI path (hash_page)
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
