/*
 * idle_22: the idle task's page clearing of Linux 2.2.0 and the page clearing it competes
 * with, for the book's kernel model (emu.kernel.idle, Dougan 1999 section "Idle Task Page
 * Clearing"). Written for this book from the algorithm of arch/ppc/kernel/idle.c v1.57
 * (1998/12/28), include/asm-ppc/page.h and arch/ppc/lib/string.S of 2.2.0, not copied:
 *
 *   zero_paged22 (r3 = an array of free pages, r4 = how many, r5 = 1 to uncache each page
 *     while it is cleared, r6 = current, the idle task): zero_paged. If the list of cleared
 *     pages holds zero_cache_water[0] (25) or more, nothing; else, while it holds fewer than
 *     zero_cache_water[1] (96) and need_resched is clear: take a free page
 *     (__get_free_pages(GFP_ATOMIC, 0): here the next word of the array, which the kernel
 *     model filled; none left: return), find its kernel PTE (find_pte: the page directory
 *     of the idle task, then the PTE page), mark it cache-inhibited (pte_uncache), flush
 *     its TLB entry (flush_tlb_page), store 0 into each of its 1024 words (testing
 *     need_resched before each store, as the C loop does), make it cacheable again
 *     (pte_cache), flush again, push the page on zero_quicklist (its first word links to
 *     the old head: lwarx / stwcx.), and count it (zero_cache_sz, zerototal: atomic_inc);
 *   get_zero_page_fast22: get_zero_page_fast: count the call; if the list is not empty, pop
 *     its head (lwarx / stwcx.), count the hit, zero_cache_sz - 1, store 0 into the page's
 *     first word (the link) and return the page; else return 0;
 *   clear_page22 (r3 = the page): clear_page, which 2.2.0 defines as memset(page, 0,
 *     PAGE_SIZE): 1024 word stores (stwu), through the cache;
 *   flush_hash_page22 (r3 = context, r4 = the address): 2.2.0's flush_hash_page on a 603
 *     (NO_RELOAD_HTAB, the processor version tells it is 603-like): tlbie; isync.
 *
 * What the model changes, and why:
 *   - pte_uncache and pte_cache change the PTE in memory (r5 = 1). In 2.2.0 they are inline
 *     functions that take the PTE by value and so change a copy: the released source clears
 *     its pages through the cache whatever it asks. r5 = 0 gives that behaviour (the PTE is
 *     left as it is); r5 = 1 what the paper describes, stores that bypass the cache.
 *   - The page is cleared through a window of kernel PTEs (EA = WINDOW + physical address,
 *     its PTE pages in the idle task's page directory), not at its BAT-mapped address:
 *     a BAT takes precedence over the page table, so a page the BATs map cannot be made
 *     cache-inhibited by its PTE. In 2.2.0 the BATs map all of RAM that fits them, which is
 *     the second reason the released source's clearing went through the cache.
 *   - __get_free_pages is the kernel model's (Python), done before the call: the array.
 *   - need_resched set ends the clearing (2.2.0 calls schedule() and goes on later; the
 *     model's idle period ends instead).
 *   - The counters are uniprocessor: no sync in the list push (2.2.0 has one under SMP).
 *
 * The prelude (emu.kernel.idle) gives IDLE_DATA (the words below), WINDOW and NEED_RESCHED.
 */
        .equ    PVR, 287
        .equ    PVR_603_LIKE, 0x1300    # @h of head.S's mask: bits 3, 6, 7 (603, 603e, 603ev)
        .equ    PAGE_SIZE, 4096
        .equ    PTE_NO_CACHE, 0x020     # _PAGE_NO_CACHE: WIMG I
        # the kernel's words (IDLE_DATA + ...)
        .equ    ZERO_QUICKLIST, 0
        .equ    ZERO_CACHE_SZ, 4
        .equ    ZEROTOTAL, 8
        .equ    ZEROPAGE_CALLS, 12
        .equ    ZEROPAGE_HITS, 16
        .equ    WATER_LOW, 20           # zero_cache_water[0]
        .equ    WATER_HIGH, 24          # zero_cache_water[1]
        .equ    IDLE_PGDIR, 28          # init_task.mm's page directory (physical)

        .globl  zero_paged22
zero_paged22:
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stw     r28, 16(r1)
        stw     r29, 20(r1)
        stw     r30, 24(r1)
        stw     r31, 28(r1)
        mr      r2, r6                  # r2 = current, as the kernel keeps it
        mr      r30, r3                 # the free pages, as __get_free_pages hands them out
        mr      r29, r4                 # how many are left
        mr      r28, r5                 # uncache?
        lis     r11, IDLE_DATA@h
        ori     r11, r11, IDLE_DATA@l
        lwz     r9, ZERO_CACHE_SZ(r11)
        lwz     r10, WATER_LOW(r11)
        cmpw    0, r9, r10
        bge     zp_done                 # enough pages cleared already
zp_page:
        lwz     r9, ZERO_CACHE_SZ(r11)
        lwz     r10, WATER_HIGH(r11)
        cmpw    0, r9, r10
        bge     zp_done
        lwz     r9, NEED_RESCHED(r2)
        cmpwi   0, r9, 0
        bne     zp_done
        cmpwi   0, r29, 0               # __get_free_pages(GFP_ATOMIC, 0) == 0: return
        beq     zp_done
        lwz     r31, 0(r30)             # pageptr
        addi    r30, r30, 4
        subi    r29, r29, 1
        addis   r3, r31, WINDOW@h       # the address the page is cleared through
        bl      find_pte22              # r3 = its PTE
        mr      r12, r3
        cmpwi   0, r28, 0               # pte_uncache
        beq     zp_flush1
        lwz     r9, 0(r12)
        ori     r9, r9, PTE_NO_CACHE
        stw     r9, 0(r12)
zp_flush1:
        li      r3, 0                   # flush_tlb_page: a kernel address, context 0
        addis   r4, r31, WINDOW@h
        bl      flush_hash_page22
        addis   r8, r31, WINDOW@h
        li      r7, 0
        li      r6, 0                   # bytecount
zp_word:
        lwz     r9, NEED_RESCHED(r2)    # if (current->need_resched) schedule();
        cmpwi   0, r9, 0
        bne     zp_done
        stwx    r7, r8, r6
        addi    r6, r6, 4
        cmplwi  0, r6, PAGE_SIZE - 1
        ble     zp_word
        cmpwi   0, r28, 0               # pte_cache
        beq     zp_flush2
        lwz     r9, 0(r12)
        rlwinm  r9, r9, 0, 27, 25       # clear _PAGE_NO_CACHE (0x20)
        stw     r9, 0(r12)
zp_flush2:
        li      r3, 0
        addis   r4, r31, WINDOW@h
        bl      flush_hash_page22
        lis     r11, IDLE_DATA@h
        ori     r11, r11, IDLE_DATA@l
zp_push:                                # zero_quicklist = page, *page = old head
        lwarx   r9, 0, r11
        stw     r9, 0(r31)
        mr      r9, r31
        stwcx.  r9, 0, r11
        bne-    zp_push
        addi    r10, r11, ZERO_CACHE_SZ # atomic_inc(&zero_cache_sz)
zp_inc1:
        lwarx   r9, 0, r10
        addic   r9, r9, 1
        stwcx.  r9, 0, r10
        bne-    zp_inc1
        addi    r10, r11, ZEROTOTAL     # atomic_inc(&quicklists.zerototal)
zp_inc2:
        lwarx   r9, 0, r10
        addic   r9, r9, 1
        stwcx.  r9, 0, r10
        bne-    zp_inc2
        b       zp_page
zp_done:
        lwz     r28, 16(r1)
        lwz     r29, 20(r1)
        lwz     r30, 24(r1)
        lwz     r31, 28(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        blr

# find_pte (arch/ppc/mm/init.c): the PTE of r3 in init_task.mm, or 0 (pgd_offset, pmd_offset
# (folded), pte_offset); the page directory and its entries hold physical addresses here
find_pte22:
        lis     r11, IDLE_DATA@h
        ori     r11, r11, IDLE_DATA@l
        lwz     r9, IDLE_PGDIR(r11)
        rlwinm  r10, r3, 12, 20, 29     # (address >> 22) * 4
        lwzx    r9, r9, r10             # the PTE page, or 0
        rlwinm. r9, r9, 0, 0, 19
        beq     fp_none
        rlwinm  r10, r3, 22, 20, 29     # ((address >> 12) & 0x3ff) * 4
        add     r3, r9, r10
        blr
fp_none:
        li      r3, 0
        blr

        .globl  flush_hash_page22
flush_hash_page22:                      # r3 = context, r4 = the address
        mfspr   r0, PVR
        rlwinm  r0, r0, 16, 27, 31
        lis     r9, PVR_603_LIKE
        rlwnm.  r0, r9, r0, 0, 0
        beq     fhp_hash                # not 603-like: the hash-table search (not modelled)
        tlbie   r4
        isync
        blr
fhp_hash:
        li      r3, -1
        blr

        .globl  get_zero_page_fast22
get_zero_page_fast22:
        lis     r11, IDLE_DATA@h
        ori     r11, r11, IDLE_DATA@l
        addi    r10, r11, ZEROPAGE_CALLS        # atomic_inc(&quicklists.zeropage_calls)
gz_calls:
        lwarx   r9, 0, r10
        addic   r9, r9, 1
        stwcx.  r9, 0, r10
        bne-    gz_calls
        lwz     r9, ZERO_QUICKLIST(r11)
        cmpwi   0, r9, 0
        beq     gz_none
gz_pop:                                 # page = zero_quicklist, zero_quicklist = *page
        lwarx   r3, 0, r11
        lwz     r9, 0(r3)
        stwcx.  r9, 0, r11
        bne-    gz_pop
        addi    r10, r11, ZEROPAGE_HITS         # atomic_inc(&quicklists.zeropage_hits)
gz_hits:
        lwarx   r9, 0, r10
        addic   r9, r9, 1
        stwcx.  r9, 0, r10
        bne-    gz_hits
        addi    r10, r11, ZERO_CACHE_SZ         # atomic_dec(&zero_cache_sz)
gz_dec:
        lwarx   r9, 0, r10
        addic   r9, r9, -1
        stwcx.  r9, 0, r10
        bne-    gz_dec
        li      r9, 0
        stw     r9, 0(r3)               # the link word: the page is all zeroes again
        blr
gz_none:
        li      r3, 0
        blr

        .globl  clear_page22
clear_page22:                           # memset(page, 0, PAGE_SIZE): word stores
        li      r4, 0
        li      r0, PAGE_SIZE / 4
        mtctr   r0
        addi    r6, r3, -4
cp_word:
        stwu    r4, 4(r6)
        bdnz    cp_word
        blr
