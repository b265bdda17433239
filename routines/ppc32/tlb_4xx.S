/*
 * tlb_4xx: the 405's TLB maintenance and address-space switch, as Linux/ppc does them on
 * 40x. Written for this book from the algorithms, not copied.
 *
 * tlbie_405 models _tlbie in Linux arch/ppc/kernel/misc.S (2.6.12, CONFIG_40x): the 405
 * has no tlbie instruction (illegal on it), so search the TLB for the address with
 * tlbsx. (under the PID register, i.e. the current address space) and, if an entry is
 * found, write its tag word with the entry's own index: an index below 64 has the V bit
 * (0x40) clear, so the entry becomes invalid. flush_tlb_page, flush_tlb_page_nohash and
 * the exec fault of do_page_fault use it (include/asm-ppc/tlbflush.h, arch/ppc/mm/fault.c).
 *   In:  r3 = effective address.  Out: r3 = the entry's index, or -1 if none matched.
 *
 * tlbia_405 models __tlbia for 40x in include/asm-ppc/tlbflush.h (2.6.12): sync; tlbia;
 * isync. flush_tlb_mm and flush_tlb_range use it: the whole TLB goes.
 *
 * set_context_405 models set_context in arch/ppc/kernel/head_4xx.S (sync; mtspr PID;
 * isync, which also empties the shadow TLBs), called by switch_mm with the next mm's
 * context; it also puts the mm's page directory in SPRG3 for tlbmiss_405_kernel.S (Linux:
 * _switch in entry.S puts the next thread there, whose pgdir switch_mm set).
 *   In:  r3 = context (PID, 1-255), r4 = page directory (physical).
 */
        .equ    PID, 945
        .equ    SPRG3, 275

        .globl  tlbie_405
tlbie_405:
        tlbsx.  r3, 0, r3               # CR0[EQ]: found, r3 = its index
        bne-    tlbie_405_none
        sync
        tlbwe   r3, r3, 0               # tag word = index < 64: V clear
        isync
        blr
tlbie_405_none:
        li      r3, -1
        blr

        .globl  tlbia_405
tlbia_405:
        sync
        tlbia
        isync
        blr

        .globl  set_context_405
set_context_405:
        sync
        mtspr   PID, r3
        mtspr   SPRG3, r4
        isync
        blr

