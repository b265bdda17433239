/*
 * The kernel timer's list, Linux 2.6.12, written for the book from the algorithms of
 * kernel/timer.c of 2.6.12.1 (struct tvec_t_base_s 68-77; internal_add_timer 117-157;
 * __mod_timer 159-220; del_timer 296-319; del_timer_sync 345-370) and
 * include/linux/timer.h (struct timer_list 11-22, add_timer 85-88): kjournald's commit
 * timer (journal->j_commit_timer) is taken off its CPU's timer list before a commit
 * (del_timer_sync, fs/jbd/journal.c 163) and put on the list of the CPU whose
 * start_this_handle makes the next transaction (get_transaction, transaction.c 56-57).
 * The timer never fires in the chapter's runs (its 5 s are longer than the runs; the tick's
 * __run_timers would call it), so commit_timeout is a stand-in that faults. tvec_bases (iozone_write.S's data, beside __per_cpu_offset)
 * holds each CPU's &per_cpu(tvec_bases, cpu).
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 */
        .equ    TIMER_MAGIC_VALUE, 0x4b87ad6e   # include/linux/timer.h: TIMER_MAGIC
        .equ    LIST_POISON1, 0x00100100        # include/linux/list.h: list_del's poison
        .equ    LIST_POISON2, 0x00200200
        .equ    TVR_BITS, 8                     # timer.c 53-58 (CONFIG_BASE_SMALL off)
        .equ    TVN_BITS, 6
        .equ    NR_CPUS, 8

/* list_del(entry): unlinked, its pointers poisoned; eax, ecx clobbered */
        .macro  timer_list_del entry
        movl    (\entry), %eax              # next
        movl    4(\entry), %ecx             # prev
        movl    %ecx, 4(%eax)               # next->prev = prev
        movl    %eax, (%ecx)                # prev->next = next
        movl    $(LIST_POISON1), (\entry)
        movl    $(LIST_POISON2), 4(\entry)
        .endm

/* add_timer(timer): __mod_timer(timer, timer->expires) */
        .globl  add_timer
add_timer:
        movl    4(%esp), %eax
        pushl   TIMER_EXPIRES(%eax)
        pushl   %eax
        call    __mod_timer
        addl    $8, %esp
        ret

/* __mod_timer(timer, expires) -> 1 if it was pending: under the timer's lock (irqs off),
 * the timer taken off its old base's list, if any (both bases locked, the higher address
 * first as 2.6.12 orders them, and the old base read again), its expires set and
 * internal_add_timer on this CPU's base: the vector its distance from the base's
 * timer_jiffies picks (tv1 by the low 8 bits within 256 jiffies, tv2..tv5 by the next
 * 6-bit groups further out; a timer already due goes in tv1 at timer_jiffies), at its
 * tail (timers are FIFO). */
        .globl  __mod_timer
__mod_timer:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebx              # timer
        cmpl    $0, TIMER_FUNCTION(%ebx)    # BUG_ON(!timer->function)
        je      9f
        cmpl    $(TIMER_MAGIC_VALUE), TIMER_MAGIC(%ebx)     # check_timer
        jne     9f
        leal    TIMER_LOCK(%ebx), %eax      # spin_lock_irqsave(&timer->lock, flags)
        pushl   %eax                        # (%esp) to the end: &timer->lock
        call    _spin_lock_irqsave
        movl    %eax, %ebp                  # flags
        movl    $-8192, %eax                # new_base = &__get_cpu_var(tvec_bases)
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    tvec_bases(,%eax,4), %esi
1:      movl    TIMER_BASE(%ebx), %edi      # repeat: old_base = timer->base
        testl   %edi, %edi
        jz      3f
        cmpl    %esi, %edi
        je      3f
        jae     2f
        pushl   %esi                        # old < new: new's lock, then old's
        call    _spin_lock
        movl    %edi, (%esp)
        call    _spin_lock
        addl    $4, %esp
        jmp     21f
2:      pushl   %edi                        # else old's, then new's
        call    _spin_lock
        movl    %esi, (%esp)
        call    _spin_lock
        addl    $4, %esp
21:     cmpl    TIMER_BASE(%ebx), %edi      # cancelled meanwhile: both let go, repeat
        je      4f
        pushl   %esi
        call    _spin_unlock
        movl    %edi, (%esp)
        call    _spin_unlock
        addl    $4, %esp
        jmp     1b
3:      pushl   %esi                        # one base: spin_lock(&new_base->lock)
        call    _spin_lock
        addl    $4, %esp
        cmpl    TIMER_BASE(%ebx), %edi
        je      4f
        pushl   %esi
        call    _spin_unlock
        addl    $4, %esp
        jmp     1b
4:      testl   %edi, %edi                  # if (old_base) list_del(&timer->entry)
        jz      5f
        timer_list_del %ebx
5:      movl    28(%esp), %eax              # timer->expires = expires
        movl    %eax, TIMER_EXPIRES(%ebx)
        movl    %eax, %edx                  # internal_add_timer(new_base, timer):
        subl    TVB_TIMER_JIFFIES(%esi), %edx   # idx = expires - base->timer_jiffies
        cmpl    $(1 << TVR_BITS), %edx
        jae     6f
        andl    $((1 << TVR_BITS) - 1), %eax
        leal    TVB_TV1(%esi,%eax,8), %ecx  # tv1.vec + (expires & TVR_MASK)
        jmp     8f
6:      cmpl    $(1 << (TVR_BITS + TVN_BITS)), %edx
        jae     61f
        shrl    $(TVR_BITS), %eax
        andl    $((1 << TVN_BITS) - 1), %eax
        leal    TVB_TV2(%esi,%eax,8), %ecx
        jmp     8f
61:     cmpl    $(1 << (TVR_BITS + 2 * TVN_BITS)), %edx
        jae     62f
        shrl    $(TVR_BITS + TVN_BITS), %eax
        andl    $((1 << TVN_BITS) - 1), %eax
        leal    TVB_TV3(%esi,%eax,8), %ecx
        jmp     8f
62:     cmpl    $(1 << (TVR_BITS + 3 * TVN_BITS)), %edx
        jae     63f
        shrl    $(TVR_BITS + 2 * TVN_BITS), %eax
        andl    $((1 << TVN_BITS) - 1), %eax
        leal    TVB_TV4(%esi,%eax,8), %ecx
        jmp     8f
63:     testl   %edx, %edx                  # (signed long) idx < 0: already due
        jns     64f
        movl    TVB_TIMER_JIFFIES(%esi), %eax
        andl    $((1 << TVR_BITS) - 1), %eax
        leal    TVB_TV1(%esi,%eax,8), %ecx
        jmp     8f
64:     shrl    $(TVR_BITS + 3 * TVN_BITS), %eax    # tv5 (idx fits 32 bits on i386)
        andl    $((1 << TVN_BITS) - 1), %eax
        leal    TVB_TV5(%esi,%eax,8), %ecx
8:      movl    4(%ecx), %eax               # list_add_tail(&timer->entry, vec)
        movl    %ebx, 4(%ecx)               # vec->prev = entry
        movl    %ecx, (%ebx)                # entry->next = vec
        movl    %eax, 4(%ebx)               # entry->prev = the old tail
        movl    %ebx, (%eax)                # the old tail's next = entry
        movl    %esi, TIMER_BASE(%ebx)      # timer->base = new_base
        testl   %edi, %edi                  # old_base != new_base: its lock let go
        jz      7f
        cmpl    %esi, %edi
        je      7f
        pushl   %edi
        call    _spin_unlock
        addl    $4, %esp
7:      pushl   %esi                        # spin_unlock(&new_base->lock)
        call    _spin_unlock
        addl    $4, %esp
        popl    %eax                        # spin_unlock_irqrestore(&timer->lock, flags)
        pushl   %ebp
        pushl   %eax
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        xorl    %eax, %eax                  # ret: 1 if it was pending
        testl   %edi, %edi
        setnz   %al
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* del_timer(timer) -> 1 if it was pending: its base's lock (irqs off), the base read
 * again, off the list, timer->base NULL (smp_wmb: a compiler barrier on i386) */
        .globl  del_timer
del_timer:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # timer
        cmpl    $(TIMER_MAGIC_VALUE), TIMER_MAGIC(%ebx)     # check_timer
        jne     9f
1:      movl    TIMER_BASE(%ebx), %esi      # repeat: base = timer->base
        testl   %esi, %esi
        jz      3f
        pushl   %esi                        # spin_lock_irqsave(&base->lock, flags)
        call    _spin_lock_irqsave
        cmpl    TIMER_BASE(%ebx), %esi
        je      2f
        pushl   %eax
        pushl   %esi
        call    _spin_unlock_irqrestore
        addl    $12, %esp
        jmp     1b
2:      pushl   %eax                        # flags
        timer_list_del %ebx
        movl    $0, TIMER_BASE(%ebx)        # timer->base = NULL
        pushl   %esi
        call    _spin_unlock_irqrestore
        addl    $12, %esp
        movl    $1, %eax
        jmp     4f
3:      xorl    %eax, %eax
4:      popl    %esi
        popl    %ebx
        ret
9:      ud2

/* del_timer_sync(timer) -> the times it was taken off: del_timer, then each online CPU's
 * base checked for the timer running there (waited for), again while it is pending
 * (smp_rmb: lfence, as alternative() picks it on a CPU with SSE2) */
        .globl  del_timer_sync
del_timer_sync:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %ebx              # timer
        cmpl    $(TIMER_MAGIC_VALUE), TIMER_MAGIC(%ebx)     # check_timer
        jne     9f
        xorl    %edi, %edi                  # ret
1:      pushl   %ebx                        # del_again: ret += del_timer(timer)
        call    del_timer
        addl    $4, %esp
        addl    %eax, %edi
        xorl    %esi, %esi                  # for_each_online_cpu(i)
2:      btl     %esi, cpu_online_map
        jnc     4f
        movl    tvec_bases(,%esi,4), %eax   # base = &per_cpu(tvec_bases, i)
        cmpl    TVB_RUNNING_TIMER(%eax), %ebx
        jne     4f
3:      pause                               # running there: wait (cpu_relax)
        cmpl    TVB_RUNNING_TIMER(%eax), %ebx
        je      3b
        jmp     5f
4:      incl    %esi
        cmpl    $(NR_CPUS), %esi
        jb      2b
5:      lfence                              # smp_rmb()
        cmpl    $0, TIMER_BASE(%ebx)        # timer_pending(timer): again
        jne     1b
        movl    %edi, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* commit_timeout(data) (fs/jbd/journal.c 89-94: wake_up_process(data)): the commit
 * timer's function; it never fires in a run */
        .globl  commit_timeout
commit_timeout:
        ud2

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
