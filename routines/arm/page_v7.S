/*
 * Page and table helpers of the ARM kernel model (written for the model, not copied):
 *
 *   copy_page     arch/arm/lib/copy_page.S: 4 KB, four registers per ldm/stm, 64 bytes per
 *                 loop with preloads two and three lines ahead (L1_CACHE_BYTES = 32); the
 *                 last 64 bytes without preloads
 *   __memzero     arch/arm/lib/memzero.S, its aligned path: 64 bytes per loop (r0 word
 *                 aligned, r1 a multiple of 64: the model's callers check)
 *   clear_page    clear_page(): memset(page, 0, PAGE_SIZE), i.e. __memzero(page, 4096)
 *   memcpy        arch/arm/lib/memcpy.S, its aligned main loop: eight registers per ldm/stm,
 *                 a preload ahead (word-aligned, a multiple of 32 bytes)
 *   pmd_populate  arch/arm/include/asm/pgalloc.h __pmd_populate + flush_pmd_entry (SMP
 *                 v7wbi flags: TLB_DCLEAN and TLB_WB): the two first-level entries of a 2 MB
 *                 pair point at the PTE page's two hardware tables; the entries' line is
 *                 cleaned, then dsb
 */
        .equ    PAGE_SZ, 4096
        .equ    COPY_COUNT, 63              @ PAGE_SZ / 64 - 1: the last chunk is separate
        .equ    HW_TABLES, 2048             @ the hardware tables in a PTE page
        .equ    HW_TABLE_SIZE, 1024         @ 256 descriptors
        .equ    USER_TABLE, 0x31            @ _PAGE_USER_TABLE: coarse table, bit 4, domain 1

@ copy_page(r0 = to, r1 = from)
        .globl  copy_page
copy_page:
        stmfd   sp!, {r4, lr}
        pld     [r1, #0]
        pld     [r1, #32]
        mov     r2, #(COPY_COUNT)
        ldmia   r1!, {r3, r4, ip, lr}
1:      pld     [r1, #64]
        pld     [r1, #96]
2:      stmia   r0!, {r3, r4, ip, lr}
        ldmia   r1!, {r3, r4, ip, lr}
        stmia   r0!, {r3, r4, ip, lr}
        ldmia   r1!, {r3, r4, ip, lr}
        stmia   r0!, {r3, r4, ip, lr}
        ldmia   r1!, {r3, r4, ip, lr}
        subs    r2, r2, #1
        stmia   r0!, {r3, r4, ip, lr}
        ldmgt   r1!, {r3, r4, ip, lr}
        bgt     1b
        ldmeq   r1!, {r3, r4, ip, lr}           @ the last 64 bytes: no preloads
        beq     2b
        ldmfd   sp!, {r4, pc}

@ __memzero(r0 = start, r1 = bytes)
        .globl  __memzero
__memzero:
        mov     r2, #0
        str     lr, [sp, #-4]!
        mov     r3, #0
        mov     ip, #0
        mov     lr, #0
1:      subs    r1, r1, #64
        stmge   r0!, {r2, r3, ip, lr}
        stmge   r0!, {r2, r3, ip, lr}
        stmge   r0!, {r2, r3, ip, lr}
        stmge   r0!, {r2, r3, ip, lr}
        bgt     1b
        ldr     pc, [sp], #4

@ clear_page(r0 = page)
        .globl  clear_page
clear_page:
        mov     r1, #(PAGE_SZ)
        b       __memzero

@ memcpy(r0 = to, r1 = from, r2 = bytes): returns to
        .globl  memcpy
memcpy:
        stmfd   sp!, {r0, r4 - r8, lr}
        pld     [r1, #0]
1:      pld     [r1, #32]
        ldmia   r1!, {r3 - r8, ip, lr}
        subs    r2, r2, #32
        stmia   r0!, {r3 - r8, ip, lr}
        bgt     1b
        ldmfd   sp!, {r0, r4 - r8, pc}

@ pmd_populate(r0 = the pair's first-level entries, r1 = physical address of the PTE page)
        .globl  pmd_populate
pmd_populate:
        add     r1, r1, #(HW_TABLES)
        orr     r1, r1, #(USER_TABLE)
        str     r1, [r0]                        @ the first MB: hardware table 0
        add     r1, r1, #(HW_TABLE_SIZE)
        str     r1, [r0, #4]                    @ the second MB: hardware table 1
        mcr     p15, 0, r0, c7, c10, 1          @ flush_pmd_entry: clean the entries' line
        dsb
        mov     pc, lr
