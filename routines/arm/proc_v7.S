/*
 * The ARMv7 processor functions the kernel model calls, after Linux 2.6.35's
 * arch/arm/mm/proc-v7.S (written for the model, not copied):
 *
 *   cpu_v7_set_pte_ext        set_pte_ext(): store a Linux PTE, derive the hardware PTE
 *                             from it, store that 2048 bytes higher, clean its D-cache line
 *   cpu_v7_set_pte_ext_pk1    the same without the clean (Yun 2011's PK1: the Cortex-A9's
 *                             table walker reads through the L1 D-cache)
 *   cpu_v7_dcache_clean_area  clean_dcache_area(): clean the D-cache lines of a range
 *   cpu_v7_switch_mm          switch_mm(): TTBR0 and CONTEXTIDR (the ASID)
 *
 * Linux PTE bits (arch/arm/include/asm/pgtable.h, 2.6.35): PRESENT 0x1, YOUNG 0x2, memory
 * type 0x3c, DIRTY 0x40, WRITE 0x80, USER 0x100, EXEC 0x200, SHARED 0x400. Hardware small
 * page (ARM ARM B3.6.1): XN 0x1, type 0x2, B 0x4, C 0x8, AP[1:0] 0x30, TEX 0x1c0, APX 0x200,
 * S 0x400, nG 0x800. Hardware tables 2048 bytes above the Linux ones: emu.kernel.arm.
 */
        .equ    L_PTE_PRESENT, 0x1
        .equ    L_PTE_YOUNG, 0x2
        .equ    L_PTE_MT_TEX0, 0x10     @ memory-type bit that becomes TEX[0]
        .equ    L_PTE_DIRTY, 0x40
        .equ    L_PTE_WRITE, 0x80
        .equ    L_PTE_USER, 0x100
        .equ    L_PTE_EXEC, 0x200
        .equ    L_PTE_SOFT_BITS, 0x3f0  @ bits 4-9: Linux's, not the hardware's
        .equ    PTE_TYPE_MASK, 0x3
        .equ    PTE_EXT_XN, 0x1
        .equ    PTE_SMALL_AP0, 0x12     @ small page (type 2), AP[0]: kernel read/write
        .equ    PTE_EXT_AP1, 0x20
        .equ    PTE_EXT_TEX1, 0x40
        .equ    PTE_EXT_APX, 0x200
        .equ    PTE_EXT_APX_AP0, 0x210
        .equ    HW_PTE_OFFSET, 2048
        @ TTBR0 walk attributes of an SMP kernel: inner write-back write-allocate (IRGN),
        @ shareable, not outer shareable, outer write-back write-allocate (RGN)
        .equ    TTB_FLAGS_SMP, 0x6a

@ cpu_v7_set_pte_ext(r0 = address of the Linux PTE, r1 = Linux PTE, r2 = extra hardware
@ bits: nG for a user address)
        .globl  cpu_v7_set_pte_ext
cpu_v7_set_pte_ext:
        str     r1, [r0]                        @ the Linux PTE
        bic     r3, r1, #(L_PTE_SOFT_BITS)
        bic     r3, r3, #(PTE_TYPE_MASK)        @ keep the frame, C, B and S
        orr     r3, r3, r2
        orr     r3, r3, #(PTE_SMALL_AP0)
        tst     r1, #(L_PTE_MT_TEX0)            @ write-allocate memory: TEX = 001
        orrne   r3, r3, #(PTE_EXT_TEX1)
        tst     r1, #(L_PTE_WRITE)              @ not writable, or writable but clean:
        tstne   r1, #(L_PTE_DIRTY)              @ read-only, so that the first store faults
        orreq   r3, r3, #(PTE_EXT_APX)          @ and the kernel marks the page dirty
        tst     r1, #(L_PTE_USER)
        orrne   r3, r3, #(PTE_EXT_AP1)          @ user access; a read-only user page stays
        tstne   r3, #(PTE_EXT_APX)              @ writable by the kernel:
        bicne   r3, r3, #(PTE_EXT_APX_AP0)      @ AP = 10, user read-only
        tst     r1, #(L_PTE_EXEC)
        orreq   r3, r3, #(PTE_EXT_XN)
        tst     r1, #(L_PTE_YOUNG)              @ old or not present: no hardware entry,
        tstne   r1, #(L_PTE_PRESENT)            @ so that the next access faults and the
        moveq   r3, #0                          @ kernel marks the PTE young
        str     r3, [r0, #(HW_PTE_OFFSET)]!     @ the hardware PTE
        mcr     p15, 0, r0, c7, c10, 1          @ clean its line to memory (DCCMVAC)
        mov     pc, lr

@ cpu_v7_set_pte_ext_pk1: as above, the hardware PTE left in the L1 D-cache (PK1)
        .globl  cpu_v7_set_pte_ext_pk1
cpu_v7_set_pte_ext_pk1:
        str     r1, [r0]
        bic     r3, r1, #(L_PTE_SOFT_BITS)
        bic     r3, r3, #(PTE_TYPE_MASK)
        orr     r3, r3, r2
        orr     r3, r3, #(PTE_SMALL_AP0)
        tst     r1, #(L_PTE_MT_TEX0)
        orrne   r3, r3, #(PTE_EXT_TEX1)
        tst     r1, #(L_PTE_WRITE)
        tstne   r1, #(L_PTE_DIRTY)
        orreq   r3, r3, #(PTE_EXT_APX)
        tst     r1, #(L_PTE_USER)
        orrne   r3, r3, #(PTE_EXT_AP1)
        tstne   r3, #(PTE_EXT_APX)
        bicne   r3, r3, #(PTE_EXT_APX_AP0)
        tst     r1, #(L_PTE_EXEC)
        orreq   r3, r3, #(PTE_EXT_XN)
        tst     r1, #(L_PTE_YOUNG)
        tstne   r1, #(L_PTE_PRESENT)
        moveq   r3, #0
        str     r3, [r0, #(HW_PTE_OFFSET)]!
        mov     pc, lr

@ cpu_v7_dcache_clean_area(r0 = start, r1 = bytes > 0): DCCMVAC on each line, then dsb.
@ The line size comes from the Cache Type Register, as the kernel's dcache_line_size does.
        .globl  cpu_v7_dcache_clean_area
cpu_v7_dcache_clean_area:
        mrc     p15, 0, r3, c0, c0, 1           @ CTR
        lsr     r3, r3, #16
        and     r3, r3, #0xf                    @ DminLine: log2(words per line)
        mov     r2, #4
        mov     r2, r2, lsl r3                  @ bytes per line
1:      mcr     p15, 0, r0, c7, c10, 1          @ clean the line (DCCMVAC)
        add     r0, r0, r2
        subs    r1, r1, r2
        bhi     1b
        dsb
        mov     pc, lr

@ cpu_v7_switch_mm(r0 = physical address of the pgd, r1 = context ID, i.e. the ASID; the
@ kernel loads it from mm->context.id): a reserved context ID while TTBR0 changes, so that
@ no walk under the new table is tagged with the old ASID
        .globl  cpu_v7_switch_mm
cpu_v7_switch_mm:
        mov     r2, #0
        orr     r0, r0, #(TTB_FLAGS_SMP)
        mcr     p15, 0, r2, c13, c0, 1          @ CONTEXTIDR = 0
        isb
        mcr     p15, 0, r0, c2, c0, 0           @ TTBR0
        isb
        mcr     p15, 0, r1, c13, c0, 1          @ CONTEXTIDR = the ASID
        isb
        mov     pc, lr
