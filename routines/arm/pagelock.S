/*
 * The page lock of an SMP ARMv7 kernel of 2.6.36 (written for the model, not copied), the
 * path where Yun 2011 found PK2:
 *
 *   _test_and_set_bit_le  arch/arm/lib/testsetbit.S with the testop macro of
 *                         arch/arm/lib/bitops.h (ARMv6K+: a byte ldrexb/strexb loop between
 *                         two smp_dmb; returns the bit's old value)
 *   _clear_bit_le         arch/arm/lib/clearbit.S, the bitop macro: the same loop, no barrier
 *   trylock_page          include/linux/pagemap.h: test_and_set_bit_lock(PG_locked), which
 *                         asm-generic/bitops/lock.h makes test_and_set_bit
 *   lock_page             trylock_page until it succeeds (see below)
 *   unlock_page           mm/filemap.c: clear_bit_unlock (asm-generic/bitops/lock.h:
 *                         smp_mb__before_clear_bit, then clear_bit), smp_mb__after_clear_bit,
 *                         wake_up_page (kernel/wait.c __wake_up_bit: page_waitqueue's hash,
 *                         then waitqueue_active; nobody waits in the model's runs)
 *   unlock_page_pk2       the same with Yun 2011's PK2: smp_mb__{before,after}_clear_bit
 *                         as smp_mb() (dmb) where arch/arm/include/asm/bitops.h has mb()
 *
 * mb() on an SMP v7 kernel (arch/arm/include/asm/system.h) is dsb, then outer_sync():
 * outer_cache.sync, if set (arch/arm/include/asm/outercache.h), which for the PL310 is
 * l2x0_cache_sync (arch/arm/mm/cache-l2x0.c). Mainline 2.6.36 takes l2x0_lock around it:
 * spin_lock_irqsave (kernel/spinlock.c _raw_spin_lock_irqsave: local_irq_save, then
 * arch_spin_lock), cache_sync() (a writel_relaxed of 0 to CACHE_SYNC, 0x730; cache_wait
 * is empty on the PL310, whose operations are atomic), spin_unlock_irqrestore
 * (_raw_spin_unlock_irqrestore: arch_spin_unlock, then local_irq_restore). NVIDIA's 2.6.36
 * Tegra tree (an Android kernel of the paper's kind) has a lock-free l2x0_cache_sync with
 * CONFIG_CACHE_PL310: l2x0_cache_sync_atomic below. Which one outer_cache.sync points at is
 * the model's choice (emu.kernel.arm, option ``outer_sync``). smp_mb() is dmb.
 *
 * The kernel finds outer_cache, l2x0_base and l2x0_lock as globals; the model passes the
 * address of one block holding them (OUTER_*, below; 0: no outer cache) in a register.
 * arch_spin_lock spins on ldrex without 2.6.36's wfene (the model has no events: wfe halts
 * it); arch_spin_unlock is 2.6.36's (arch/arm/include/asm/spinlock.h): smp_mb, the store,
 * then dsb and sev (CONFIG_CPU_32v6K). preempt_disable/enable and lockdep are left out.
 *
 * struct page: flags in its first word, PG_locked bit 0 (include/linux/page-flags.h). The
 * kernel finds the zone's wait table and l2x0_base in memory; the model passes them in
 * registers. lock_page: where the kernel's __lock_page sleeps on the page's wait queue
 * until unlock_page wakes it, the model's CPU spins reading the flag byte (the model has
 * no scheduler), and returns how many times it found the page locked.
 */
        .equ    PG_LOCKED, 0
        .equ    CACHE_SYNC, 0x730
        .equ    WAIT_QUEUE_HEAD, 12         @ spinlock_t, then the list_head task_list
        .equ    TASK_LIST, 4
        .equ    PAGE_COUNT, 4               @ struct page's atomic_t _count
        .equ    OUTER_SYNC_FN, 0            @ outer_cache.sync (0: none)
        .equ    OUTER_L2X0_BASE, 4          @ l2x0_base
        .equ    OUTER_L2X0_LOCK, 32         @ l2x0_lock, on a line of its own

@ _test_and_set_bit_le(r0 = bit number, r1 = address): r0 = the bit's old value
        .globl  _test_and_set_bit_le
_test_and_set_bit_le:
        and     r3, r0, #7                      @ the bit in its byte
        mov     r2, #1
        add     r1, r1, r0, lsr #3              @ its byte
        mov     r3, r2, lsl r3                  @ the mask
        dmb                                     @ smp_dmb
1:      ldrexb  r2, [r1]
        ands    r0, r2, r3                      @ the old bit
        orr     r2, r2, r3
        strexb  ip, r2, [r1]
        cmp     ip, #0
        bne     1b
        dmb                                     @ smp_dmb
        cmp     r0, #0
        movne   r0, #1
        mov     pc, lr

@ _clear_bit_le(r0 = bit number, r1 = address)
        .globl  _clear_bit_le
_clear_bit_le:
        mov     r2, #1
        and     r3, r0, #7
        add     r1, r1, r0, lsr #3
        mov     r3, r2, lsl r3
1:      ldrexb  r2, [r1]
        bic     r2, r2, r3
        strexb  r0, r2, [r1]
        cmp     r0, #0
        bne     1b
        mov     pc, lr

@ trylock_page(r0 = struct page): r0 = 1 if it was locked already (not taken), else 0
        .globl  trylock_page
trylock_page:
        mov     r1, r0
        mov     r0, #(PG_LOCKED)
        b       _test_and_set_bit_le

@ lock_page(r0 = struct page): r0 = how many tries found it locked
        .globl  lock_page
lock_page:
        stmfd   sp!, {r4, r5, lr}
        mov     r4, r0
        mov     r5, #0
1:      mov     r0, r4
        bl      trylock_page
        cmp     r0, #0
        beq     3f
        add     r5, r5, #1
2:      ldrb    r0, [r4]                        @ wait until the holder unlocks it
        tst     r0, #(1 << PG_LOCKED)
        bne     2b
        b       1b
3:      mov     r0, r5
        ldmfd   sp!, {r4, r5, pc}

@ page_cache_get_speculative(r0 = struct page): r0 = 1 if it took a reference, 0 if the
@ count was 0. include/linux/pagemap.h of 2.6.36 on SMP: get_page_unless_zero, that is
@ atomic_add_unless(&page->_count, 1, 0) (include/linux/atomic.h: read, then
@ atomic_cmpxchg until it holds), ARMv7's atomic_cmpxchg (arch/arm/include/asm/atomic.h):
@ smp_mb, an ldrex / teq / strexeq loop, smp_mb
        .globl  page_cache_get_speculative
page_cache_get_speculative:
        add     r3, r0, #(PAGE_COUNT)
        ldr     r1, [r3]                        @ c = atomic_read(&page->_count)
1:      cmp     r1, #0
        moveq   r0, #0
        moveq   pc, lr
        add     r2, r1, #1
        dmb                                     @ atomic_cmpxchg(v, c, c + 1): smp_mb
2:      ldrex   ip, [r3]
        mov     r0, #0
        teq     ip, r1
        strexeq r0, r2, [r3]
        teq     r0, #0
        bne     2b
        dmb                                     @ smp_mb
        cmp     ip, r1                          @ the old value was c: done
        movne   r1, ip
        bne     1b
        mov     r0, #1
        mov     pc, lr

@ outer_sync(r0 = the outer cache block, 0 if none): outer_cache.sync(), if it is set
        .globl  outer_sync
outer_sync:
        cmp     r0, #0
        moveq   pc, lr
        ldr     r1, [r0, #(OUTER_SYNC_FN)]
        cmp     r1, #0
        moveq   pc, lr
        bx      r1                              @ the sync function returns to our caller

@ _raw_spin_lock_irqsave(r0 = lock): r0 = the flags (the CPSR before interrupts went off)
        .globl  _raw_spin_lock_irqsave
_raw_spin_lock_irqsave:
        mrs     r2, cpsr                        @ local_irq_save
        cpsid   i
        ARCH_SPIN_LOCK r0, r1, r3               @ arch_spin_lock (arch_spinlock.S)
        mov     r0, r2
        mov     pc, lr

@ _raw_spin_unlock_irqrestore(r0 = lock, r1 = flags)
        .globl  _raw_spin_unlock_irqrestore
_raw_spin_unlock_irqrestore:
        mov     r2, #0
        dmb                                     @ arch_spin_unlock: smp_mb
        str     r2, [r0]
        dsb
        sev
        msr     cpsr_c, r1                      @ local_irq_restore
        mov     pc, lr

@ l2x0_cache_sync(r0 = the outer cache block): mainline, under l2x0_lock
        .globl  l2x0_cache_sync
l2x0_cache_sync:
        stmfd   sp!, {r4, r5, lr}
        mov     r4, r0
        add     r0, r4, #(OUTER_L2X0_LOCK)
        bl      _raw_spin_lock_irqsave
        mov     r5, r0
        ldr     r1, [r4, #(OUTER_L2X0_BASE)]     @ cache_sync
        mov     r2, #0
        str     r2, [r1, #(CACHE_SYNC)]
        add     r0, r4, #(OUTER_L2X0_LOCK)
        mov     r1, r5
        bl      _raw_spin_unlock_irqrestore
        ldmfd   sp!, {r4, r5, pc}

@ l2x0_cache_sync_atomic(r0 = the outer cache block): NVIDIA's Tegra 2.6.36, no lock
        .globl  l2x0_cache_sync_atomic
l2x0_cache_sync_atomic:
        ldr     r1, [r0, #(OUTER_L2X0_BASE)]
        mov     r2, #0
        str     r2, [r1, #(CACHE_SYNC)]
        mov     pc, lr

@ wake_up_page(r0 = struct page, r1 = the zone's wait table, r2 = its bits): the page's
@ wait queue (hash_ptr: the address times GOLDEN_RATIO_PRIME_32, its top bits), and
@ whether anyone waits on it (r0 = 1) or not (0); the waking itself is not modelled
        .globl  wake_up_page
wake_up_page:
        movw    r3, #0x0001
        movt    r3, #0x9e37                     @ GOLDEN_RATIO_PRIME_32
        mul     r0, r0, r3
        rsb     r2, r2, #32
        mov     r0, r0, lsr r2                  @ the hash
        add     r0, r0, r0, lsl #1
        add     r0, r1, r0, lsl #2              @ &wait_table[hash]
        ldr     r1, [r0, #(TASK_LIST)]!         @ task_list.next
        subs    r0, r1, r0                      @ waitqueue_active: not its own head
        movne   r0, #1
        mov     pc, lr

@ unlock_page(r0 = struct page, r1 = wait table, r2 = its bits, r3 = the outer cache block, 0 if none)
        .globl  unlock_page
unlock_page:
        stmfd   sp!, {r4 - r7, lr}
        mov     r4, r0
        mov     r5, r1
        mov     r6, r2
        mov     r7, r3
        dsb                                     @ smp_mb__before_clear_bit: mb()
        mov     r0, r7
        bl      outer_sync
        mov     r0, #(PG_LOCKED)
        mov     r1, r4
        bl      _clear_bit_le
        dsb                                     @ smp_mb__after_clear_bit: mb()
        mov     r0, r7
        bl      outer_sync
        mov     r0, r4
        mov     r1, r5
        mov     r2, r6
        bl      wake_up_page
        ldmfd   sp!, {r4 - r7, pc}

@ unlock_page_pk2: the same, the barriers smp_mb() (PK2)
        .globl  unlock_page_pk2
unlock_page_pk2:
        stmfd   sp!, {r4 - r7, lr}
        mov     r4, r0
        mov     r5, r1
        mov     r6, r2
        mov     r7, r3
        dmb                                     @ smp_mb__before_clear_bit: smp_mb()
        mov     r0, #(PG_LOCKED)
        mov     r1, r4
        bl      _clear_bit_le
        dmb                                     @ smp_mb__after_clear_bit: smp_mb()
        mov     r0, r4
        mov     r1, r5
        mov     r2, r6
        bl      wake_up_page
        ldmfd   sp!, {r4 - r7, pc}
