/*
 * The journal's checkpoint lists at a commit's start, Linux 2.6.12, written for the book
 * from the algorithms of fs/jbd/checkpoint.c of 2.6.12.1: __journal_clean_checkpoint_list
 * (468-508), __try_to_free_cp_buf (53-70), __journal_remove_checkpoint (527-570) with
 * __buffer_unlink (32-45), and __journal_drop_transaction (610-637). kjournald runs the
 * clean-up under j_list_lock before each commit's phase 1 (fs/jbd/commit.c 278-280:
 * journal_lock_down in commit_meta_2612.S calls it): every buffer of every transaction on
 * j_checkpoint_transactions whose state lock it gets (jbd_trylock_bh_state) and which is
 * written back (on no journal list, neither locked nor dirty) leaves the checkpoint list
 * and its journal head (journal_remove_journal_head, commit_2612.S) and is released; a
 * transaction left with no checkpointed buffer is dropped: off the journal's ring of
 * checkpoint transactions and freed (kfree: kmalloc's size-128 cache, where
 * get_transaction's jbd_kmalloc took it, jbd_2612.S). The walk stops early when the CPU's
 * task must reschedule (need_resched). Returns the buffers released.
 * The wake_up of j_wait_logspace after a drop (567) is the model's __wake_up.
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 *
 * CONFIG_PREEMPT (the equate; spinlock_2612.S): each bit spin lock here (jbd_lock_bh_state,
 * jbd_lock_bh_journal_head, their trylocks) has preempt_disable before its lock btsl, and a
 * failed trylock and each unlock preempt_enable (include/linux/spinlock.h 531-580 of
 * 2.6.12.1); the get_cpu() users and radix_tree_preload theirs (nothing without it).
 */

/* __journal_clean_checkpoint_list(journal) -> buffers released; j_list_lock held */
        .globl  __journal_clean_checkpoint_list
__journal_clean_checkpoint_list:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $16, %esp                   # 0: last_transaction, 4: ret,
        movl    36(%esp), %ebp              # 8: transaction, 12: last_jh; journal
        movl    $0, 4(%esp)                 # ret = 0
        movl    J_CHECKPOINT_TRANSACTIONS(%ebp), %edi   # transaction =
        testl   %edi, %edi                  # j_checkpoint_transactions: none, out
        jz      8f
        movl    T_CPPREV(%edi), %eax        # last_transaction = transaction->t_cpprev
        movl    %eax, (%esp)                # (edi: next_transaction = transaction)
1:      movl    %edi, 8(%esp)               # transaction = next_transaction
        movl    T_CPNEXT(%edi), %edi        # next_transaction = transaction->t_cpnext
        movl    8(%esp), %eax
        movl    T_CHECKPOINT(%eax), %ebx    # jh = t_checkpoint_list (ebx: next_jh)
        testl   %ebx, %ebx
        jz      5f
        movl    JH_CPPREV(%ebx), %eax       # last_jh = jh->b_cpprev
        movl    %eax, 12(%esp)
2:      movl    %ebx, %esi                  # jh = next_jh
        movl    JH_CPNEXT(%esi), %ebx       # next_jh = jh->b_cpnext
        movl    JH_BH(%esi), %eax           # jbd_trylock_bh_state(jh2bh(jh)):
        preempt_disable %ecx
        lock btsl $(BH_State), BH_STATE(%eax)   # bit_spin_trylock
        .if     CONFIG_PREEMPT
        jnc     41f
        preempt_enable %ecx                 # bit_spin_trylock failed
        jmp     3f
41:
        .else
        jc      3f                          # another CPU holds it: pass it by
        .endif
        pushl   %esi
        call    __try_to_free_cp_buf        # drops the state lock
        addl    $4, %esp
        addl    %eax, 4(%esp)               # ret += released
3:      movl    $-8192, %eax                # need_resched(): TIF_NEED_RESCHED (3) in
        andl    %esp, %eax                  # current_thread_info()->flags
        testl   $8, TI_FLAGS(%eax)
        jnz     8f
        cmpl    12(%esp), %esi              # while (jh != last_jh)
        jne     2b
5:      movl    8(%esp), %eax               # while (transaction != last_transaction)
        cmpl    (%esp), %eax
        jne     1b
8:      movl    4(%esp), %eax
        addl    $16, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* __try_to_free_cp_buf(jh) -> 1 if released: under the buffer's state lock, which it drops */
        .globl  __try_to_free_cp_buf
__try_to_free_cp_buf:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # jh
        movl    JH_BH(%esi), %ebx           # bh = jh2bh(jh)
        cmpl    $(BJ_NONE), JH_JLIST(%esi)  # b_jlist == BJ_None, !buffer_locked,
        jne     1f                          # !buffer_dirty: written back
        testl   $((1 << BH_Lock) | (1 << BH_Dirty)), BH_STATE(%ebx)
        jnz     1f
        pushl   %esi
        call    __journal_remove_checkpoint
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state(bh)
        preempt_enable %eax
        pushl   %ebx
        call    journal_remove_journal_head
        call    __brelse                    # the reference journal_remove_journal_head
        addl    $4, %esp                    # leaves for its caller
        movl    $1, %eax
        popl    %esi
        popl    %ebx
        ret
1:      lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state(bh)
        preempt_enable %eax
        xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

/* __journal_remove_checkpoint(jh): off its transaction's checkpoint list (__buffer_unlink);
 * the transaction's last one, and the transaction not the committing one: dropped */
        .globl  __journal_remove_checkpoint
__journal_remove_checkpoint:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # jh
        movl    JH_CP_T(%esi), %ebx         # transaction = jh->b_cp_transaction
        testl   %ebx, %ebx
        jz      2f                          # not on a transaction: out
        movl    $0, JH_CP_T(%esi)           # __buffer_unlink: jh->b_cp_transaction = NULL
        movl    JH_CPNEXT(%esi), %eax
        movl    JH_CPPREV(%esi), %ecx
        movl    %ecx, JH_CPPREV(%eax)       # jh->b_cpnext->b_cpprev = jh->b_cpprev
        movl    %eax, JH_CPNEXT(%ecx)       # jh->b_cpprev->b_cpnext = jh->b_cpnext
        cmpl    T_CHECKPOINT(%ebx), %esi    # the list's head: the next one heads it,
        jne     1f
        movl    %eax, T_CHECKPOINT(%ebx)
        cmpl    %eax, %esi                  # or, the last one, none
        jne     1f
        movl    $0, T_CHECKPOINT(%ebx)
1:      cmpl    $0, T_CHECKPOINT(%ebx)      # buffers left: out
        jne     2f
        movl    T_JOURNAL(%ebx), %eax       # journal = transaction->t_journal
        cmpl    J_COMMITTING(%eax), %ebx    # the committing transaction stays
        je      2f
        pushl   %ebx
        pushl   %eax
        call    __journal_drop_transaction
        movl    (%esp), %eax                # wake_up(&journal->j_wait_logspace)
        leal    J_WAIT_LOGSPACE(%eax), %eax
        movl    %eax, (%esp)
        call    __wake_up
        addl    $8, %esp
2:      popl    %esi
        popl    %ebx
        ret

/* __journal_drop_transaction(journal, transaction): off j_checkpoint_transactions' ring,
 * its lists all empty (the J_ASSERTs), then kfree */
        .globl  __journal_drop_transaction
__journal_drop_transaction:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # journal
        movl    16(%esp), %ebx              # transaction
        movl    T_CPNEXT(%ebx), %eax
        testl   %eax, %eax
        jz      1f
        movl    T_CPPREV(%ebx), %ecx
        movl    %ecx, T_CPPREV(%eax)        # t_cpnext->t_cpprev = t_cpprev
        movl    %eax, T_CPNEXT(%ecx)        # t_cpprev->t_cpnext = t_cpnext
        cmpl    J_CHECKPOINT_TRANSACTIONS(%esi), %ebx
        jne     1f
        movl    %eax, J_CHECKPOINT_TRANSACTIONS(%esi)
        cmpl    %eax, %ebx                  # the ring's only one: none left
        jne     1f
        movl    $0, J_CHECKPOINT_TRANSACTIONS(%esi)
1:      cmpl    $5, T_STATE(%ebx)           # J_ASSERT(t_state == T_FINISHED)
        jne     9f
        movl    T_BUFFERS(%ebx), %eax       # t_buffers, t_sync_datalist, t_forget,
        orl     T_SYNC_DATA(%ebx), %eax     # t_checkpoint_list, t_updates: all empty
        orl     T_FORGET(%ebx), %eax
        orl     T_CHECKPOINT(%ebx), %eax
        orl     T_UPDATES(%ebx), %eax
        jnz     9f
        cmpl    J_COMMITTING(%esi), %ebx    # neither committing nor running
        je      9f
        cmpl    J_RUNNING(%esi), %ebx
        je      9f
        pushl   %ebx                        # kfree(transaction)
        pushl   size128_cache
        call    kmem_cache_free
        addl    $8, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
