/*
 * ARMv7 TLB maintenance of an SMP kernel, after Linux 2.6.35's arch/arm/mm/tlb-v7.S
 * (v7wbi_flush_user_tlb_range) and the v7wbi cases of arch/arm/include/asm/tlbflush.h
 * (local_flush_tlb_page, local_flush_tlb_mm, local_flush_tlb_all: inline C there, routines
 * here). The inner-shareable forms (CRm = c3) reach every core of the cluster; each
 * maintenance is followed by the branch-predictor invalidation and barriers of the
 * TLB_V7_IS_BTB flag. Written for the model, not copied.
 *
 * An address operand is the page's address with the ASID in its low 8 bits.
 */
        .equ    ASID_MASK, 0xff

@ v7wbi_flush_user_tlb_page(r0 = user address, r1 = ASID)
        .globl  v7wbi_flush_user_tlb_page
v7wbi_flush_user_tlb_page:
        mov     r0, r0, lsr #12
        and     r1, r1, #(ASID_MASK)
        orr     r0, r1, r0, lsl #12             @ page | ASID
        dsb                                     @ the PTE store is visible to the walker
        mcr     p15, 0, r0, c8, c3, 1           @ TLBIMVAIS
        mov     r0, #0
        mcr     p15, 0, r0, c7, c1, 6           @ BPIALLIS
        dsb
        isb
        mov     pc, lr

@ v7wbi_flush_user_tlb_range(r0 = start, r1 = end, r2 = ASID): one TLBIMVAIS per page
        .globl  v7wbi_flush_user_tlb_range
v7wbi_flush_user_tlb_range:
        dsb
        mov     r0, r0, lsr #12
        mov     r1, r1, lsr #12
        and     r2, r2, #(ASID_MASK)
        orr     r0, r2, r0, lsl #12             @ first page | ASID
        mov     r1, r1, lsl #12
1:      mcr     p15, 0, r0, c8, c3, 1           @ TLBIMVAIS
        add     r0, r0, #4096
        cmp     r0, r1
        blo     1b
        mov     ip, #0
        mcr     p15, 0, ip, c7, c1, 6           @ BPIALLIS
        dsb
        mov     pc, lr

@ v7wbi_flush_user_tlb_mm(r0 = ASID): every entry of the address space
        .globl  v7wbi_flush_user_tlb_mm
v7wbi_flush_user_tlb_mm:
        and     r0, r0, #(ASID_MASK)
        dsb
        mcr     p15, 0, r0, c8, c3, 2           @ TLBIASIDIS
        mov     r0, #0
        mcr     p15, 0, r0, c7, c1, 6           @ BPIALLIS
        dsb
        isb
        mov     pc, lr

@ v7wbi_flush_tlb_all(): every entry (an ASID roll-over)
        .globl  v7wbi_flush_tlb_all
v7wbi_flush_tlb_all:
        mov     r0, #0
        dsb
        mcr     p15, 0, r0, c8, c3, 0           @ TLBIALLIS
        mcr     p15, 0, r0, c7, c1, 6           @ BPIALLIS
        dsb
        isb
        mov     pc, lr
