/*
 * tlb_603: TLB flushing on the PowerPC 603 as Linux/ppc did it, for the book's kernel model
 * (emu.kernel.ppc603). Written for this book from the algorithms, not copied.
 *
 * tlbie_603 models _tlbie in Linux arch/ppc/kernel/misc.S (2.4 / 2.6, uniprocessor 6xx):
 * tlbie; sync. On the 603 a tlbie invalidates both ways of the address's congruence class
 * (EA bits 15-19) in the ITLB and the DTLB (MPC603e UM, tlbie). Used by flush_tlb_page
 * when there is no hash table (Hash == 0, arch/ppc/mm/tlb.c, 2.4) and by
 * flush_tlb_page_nohash after a fault changed a PTE in place (include/asm-ppc/tlbflush.h,
 * 2.6).
 *   In:  r3 = effective address.
 *
 * tlbia_603 models _tlbia in misc.S (sync; tlbia; isync) with the tlbia of a 6xx: the 603
 * has no tlbia instruction, so include/asm-ppc/ppc_asm.h (2.4 / 2.6) defines it as 1024
 * tlbie of consecutive pages from KERNELBASE (0xc0000000), enough for any 6xx TLB (the
 * 603's 32 classes are each emptied 32 times). flush_tlb_mm and flush_tlb_range call it when
 * there is no hash table (arch/ppc/mm/tlb.c, 2.4).
 */
        .equ    TLBIA_PAGES, 1024
        .equ    KERNELBASE_HI, 0xc000

        .globl  tlbie_603
tlbie_603:
        tlbie   r3
        sync
        blr

        .globl  tlbia_603
tlbia_603:
        sync
        li      r4, TLBIA_PAGES
        mtctr   r4
        lis     r4, KERNELBASE_HI
tlbia_603_next:
        tlbie   r4
        addi    r4, r4, 0x1000
        bdnz    tlbia_603_next
        isync
        blr
