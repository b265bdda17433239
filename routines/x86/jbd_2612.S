/*
 * The journal (JBD) as ext3's write path meets it in Linux 2.6.12: fs/jbd/transaction.c
 * (journal_start, start_this_handle, journal_stop, do_get_write_access,
 * journal_get_write_access, journal_get_undo_access, journal_dirty_data,
 * journal_dirty_metadata, __journal_file_buffer, __journal_temp_unlink_buffer),
 * fs/jbd/journal.c (journal_add_journal_head, journal_put_journal_head) and
 * fs/jbd/revoke.c (journal_cancel_revoke). Written for the book from those functions'
 * algorithms: their common paths, the first touch of a buffer by a running transaction,
 * and do_get_write_access's paths for a buffer a committing transaction holds (the wait on
 * BJ_Shadow, the frozen copy), which the paced runs reach once kjournald has locked the
 * running transaction down (commit_meta_2612.S: journal_lock_down), and a new running
 * transaction (start_this_handle) and writepage's buffer taken from the committing one
 * (journal_dirty_data).
 *
 * What matters for the caches is what each touches, and every locked instruction the C
 * code executes is here (bit spin locks on bh->b_state, get_bh/put_bh, set/clear_bit):
 *   jbd_lock_bh_state(bh)          lock btsl $BH_State, b_state   (bit_spin_lock; spins)
 *   jbd_unlock_bh_state(bh)        lock btrl $BH_State, b_state   (clear_bit is locked)
 *   jbd_lock_bh_journal_head(bh)   the same on BH_JournalHead
 * With CONFIG_PREEMPT (include/linux/spinlock.h 531-580 of 2.6.12.1, bit_spin_lock,
 * bit_spin_trylock, bit_spin_unlock) each lock is preceded by preempt_disable, its wait
 * loop does preempt_enable, cpu_relax, preempt_disable, and each unlock is followed by
 * preempt_enable (the macros of spinlock_2612.S; nothing without it).
 * Structure offsets are the equates yoshioka2005 ext3model puts in front of this file.
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved.
 */

/* journal_add_journal_head(bh) -> jh: a journal_head for the buffer (a new one, zeroed,
 * from the slab if it has none), b_jcount + 1. */
        .globl  journal_add_journal_head
journal_add_journal_head:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # bh
        xorl    %esi, %esi                  # new_jh = NULL
        testl   $(1 << BH_JBD), BH_STATE(%ebx)
        jnz     1f
        pushl   journal_head_cache          # journal_alloc_journal_head()
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, %esi
        xorl    %eax, %eax                  # memset(new_jh, 0, sizeof(*new_jh))
        movl    %eax, JH_BH(%esi)
        movl    %eax, JH_JCOUNT(%esi)
        movl    %eax, JH_JLIST(%esi)
        movl    %eax, JH_MODIFIED(%esi)
        movl    %eax, JH_FROZEN(%esi)
        movl    %eax, JH_COMMITTED(%esi)
        movl    %eax, JH_TRANSACTION(%esi)
        movl    %eax, JH_NEXT_T(%esi)
        movl    %eax, JH_TNEXT(%esi)
        movl    %eax, JH_TPREV(%esi)
        movl    %eax, JH_CP_T(%esi)
        movl    %eax, JH_CPNEXT(%esi)
        movl    %eax, JH_CPPREV(%esi)
1:
        preempt_disable %eax
31:      lock btsl $(BH_JournalHead), BH_STATE(%ebx)     # jbd_lock_bh_journal_head
        jnc     3f
2:
        preempt_enable %eax
        pause                               # cpu_relax()
        preempt_disable %eax
        testl   $(1 << BH_JournalHead), BH_STATE(%ebx)
        jnz     2b
        jmp     31b
3:      testl   $(1 << BH_JBD), BH_STATE(%ebx)
        jnz     4f
        testl   %esi, %esi                  # another CPU took it off in between: retry
        jnz     5f
        lock btrl $(BH_JournalHead), BH_STATE(%ebx)
        preempt_enable %eax
        popl    %esi
        popl    %ebx
        jmp     journal_add_journal_head
5:      lock btsl $(BH_JBD), BH_STATE(%ebx) # set_buffer_jbd(bh)
        movl    %esi, BH_PRIVATE(%ebx)      # bh->b_private = jh
        movl    %ebx, JH_BH(%esi)           # jh->b_bh = bh
        lock incl BH_COUNT(%ebx)            # get_bh(bh)
        xorl    %esi, %esi                  # consumed
4:      movl    BH_PRIVATE(%ebx), %eax
        incl    JH_JCOUNT(%eax)             # jh->b_jcount++
        lock btrl $(BH_JournalHead), BH_STATE(%ebx)     # jbd_unlock_bh_journal_head
        preempt_enable %eax
        testl   %esi, %esi
        jz      6f
        pushl   %esi                        # not needed after all: back to the slab
        pushl   journal_head_cache
        call    kmem_cache_free
        addl    $8, %esp
6:      movl    BH_PRIVATE(%ebx), %eax
        popl    %esi
        popl    %ebx
        ret

/* journal_put_journal_head(jh) (fs/jbd/journal.c 1857-1869 of 2.6.12.1): b_jcount - 1;
 * at 0 with no transaction, __journal_remove_journal_head (1795-1831): get_bh, and only a
 * head no transaction, next transaction or checkpoint holds leaves the buffer (b_private
 * and b_bh cleared, clear_buffer_jbd, __brelse, the head back to its slab); then __brelse.
 * A head kept for the checkpoint leaves the buffer's count as it was. */
        .globl  journal_put_journal_head
journal_put_journal_head:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # jh
        movl    JH_BH(%esi), %ebx           # bh = jh2bh(jh)
        preempt_disable %eax
1:      lock btsl $(BH_JournalHead), BH_STATE(%ebx)
        jnc     3f
2:
        preempt_enable %eax
        pause                               # cpu_relax()
        preempt_disable %eax
        testl   $(1 << BH_JournalHead), BH_STATE(%ebx)
        jnz     2b
        jmp     1b
3:      decl    JH_JCOUNT(%esi)             # --jh->b_jcount
        jnz     4f
        cmpl    $0, JH_TRANSACTION(%esi)    # !jh->b_jcount && !jh->b_transaction
        jne     4f
        lock incl BH_COUNT(%ebx)            # __journal_remove_journal_head: get_bh(bh)
        cmpl    $0, JH_NEXT_T(%esi)
        jne     5f
        cmpl    $0, JH_CP_T(%esi)
        jne     5f                          # "journal_head was locked": kept
        movl    $0, BH_PRIVATE(%ebx)        # bh->b_private = NULL
        movl    $0, JH_BH(%esi)             # jh->b_bh = NULL
        lock btrl $(BH_JBD), BH_STATE(%ebx) # clear_buffer_jbd(bh)
        call    jbd_brelse                  # __brelse(bh)
        pushl   %esi                        # journal_free_journal_head(jh)
        pushl   journal_head_cache
        call    kmem_cache_free
        addl    $8, %esp
5:      call    jbd_brelse                  # __brelse(bh)
4:      lock btrl $(BH_JournalHead), BH_STATE(%ebx)
        preempt_enable %eax
        popl    %esi
        popl    %ebx
        ret

/* __brelse(bh in ebx) (fs/buffer.c 1288-1296): put_bh of a held buffer; a free one is the
 * kernel's warning, a fault here */
jbd_brelse:
        cmpl    $0, BH_COUNT(%ebx)          # atomic_read(&buf->b_count)
        je      9f
        lock decl BH_COUNT(%ebx)            # put_bh(buf)
        ret
9:      ud2

/* journal_start(journal, nblocks) -> handle: nested in a running handle, h_ref + 1;
 * else a new handle (slab, zeroed), current->journal_info = handle, start_this_handle. */
        .globl  journal_start
journal_start:
        pushl   %ebx
        pushl   %edi
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %edi         # current
        movl    TSK_JOURNAL_INFO(%edi), %eax
        testl   %eax, %eax
        jz      1f
        incl    H_REF(%eax)                 # handle->h_ref++
        jmp     2f
1:      pushl   jbd_handle_cache            # new_handle(nblocks)
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, %ebx
        xorl    %eax, %eax
        movl    %eax, H_TRANSACTION(%ebx)
        movl    %eax, H_ERR(%ebx)
        movl    %eax, H_FLAGS(%ebx)
        movl    16(%esp), %eax
        movl    %eax, H_CREDITS(%ebx)
        movl    $1, H_REF(%ebx)
        movl    %ebx, TSK_JOURNAL_INFO(%edi)    # current->journal_info = handle
        pushl   %ebx
        pushl   16(%esp)                    # journal
        call    start_this_handle
        addl    $8, %esp
        movl    %ebx, %eax
2:      popl    %edi
        popl    %ebx
        ret

/* start_this_handle(journal, handle) (fs/jbd/transaction.c 80-220 of 2.6.12.1): join the
 * running transaction under j_state_lock and t_handle_lock, taking the handle's credits;
 * with no running transaction (the commit has just locked the last one down and made it the
 * committing one), a new one (96-105, 132-139: jbd_kmalloc with the lock released, then
 * get_transaction under it). */
        .globl  start_this_handle
start_this_handle:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # journal
        movl    20(%esp), %edi              # handle
        movl    H_CREDITS(%edi), %eax       # nblocks > j_max_transaction_buffers?
        cmpl    J_MAX_BUFFERS(%esi), %eax
        ja      9f
10:     leal    J_STATE_LOCK(%esi), %eax    # repeat: spin_lock(&journal->j_state_lock)
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        testl   $(JFS_ABORT), J_FLAGS(%esi) # is_journal_aborted, j_errno
        jnz     9f
        cmpl    $0, J_ERRNO(%esi)
        jne     9f
        cmpl    $0, J_BARRIER_COUNT(%esi)   # journal locked for a barrier?
        jne     9f
        movl    J_RUNNING(%esi), %ebx       # transaction = journal->j_running_transaction
        testl   %ebx, %ebx
        jz      20f                         # none: alloc_transaction
13:     cmpl    $1, T_STATE(%ebx)           # T_LOCKED: locked down for commit (transaction.c
        jne     12f                         # 147-156): unlock, wait until the commit lets
        leal    J_STATE_LOCK(%esi), %eax    # it go (schedule() on j_wait_transaction_locked:
        pushl   %eax                        # the model's CPU waits), then start again
        call    _spin_unlock
        addl    $4, %esp
11:     pause
        cmpl    J_RUNNING(%esi), %ebx       # a new running transaction
        jne     10b
        cmpl    $1, T_STATE(%ebx)
        je      11b
        jmp     10b
12:
        leal    T_HANDLE_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    T_OUTSTANDING(%ebx), %eax   # needed = t_outstanding_credits + nblocks
        addl    H_CREDITS(%edi), %eax
        cmpl    J_MAX_BUFFERS(%esi), %eax
        ja      9f
        pushl   %esi                        # __log_space_left(journal) <
        call    __log_space_left            # jbd_space_needed(journal) (transaction.c
        addl    $4, %esp                    # 210-214): __log_wait_for_space, a path the
        movl    J_MAX_BUFFERS(%esi), %edx   # runs never take; jbd_space_needed (jbd.h
        movl    J_COMMITTING(%esi), %ecx    # 1045-1052): j_max_transaction_buffers, plus
        testl   %ecx, %ecx                  # a committing transaction's outstanding
        jz      14f                         # credits
        addl    T_OUTSTANDING(%ecx), %edx
14:     cmpl    %edx, %eax
        jl      9f
        movl    %ebx, H_TRANSACTION(%edi)   # handle->h_transaction = transaction
        movl    H_CREDITS(%edi), %eax
        addl    %eax, T_OUTSTANDING(%ebx)
        incl    T_UPDATES(%ebx)
        incl    T_HANDLE_COUNT(%ebx)
        leal    T_HANDLE_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_unlock
        leal    J_STATE_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_unlock
        addl    $4, %esp
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
20:     leal    J_STATE_LOCK(%esi), %eax    # alloc_transaction (96-105): unlock, then
        pushl   %eax                        # new_transaction = jbd_kmalloc(sizeof
        call    _spin_unlock                # (transaction_t)): kmalloc's size-128 cache
        addl    $4, %esp
        pushl   size128_cache
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, %ebx                  # memset(new_transaction, 0, sizeof(*...))
        pushl   %edi
        movl    %eax, %edi
        movl    $(TRANSACTION_SIZE / 4), %ecx
        xorl    %eax, %eax
        rep stosl
        popl    %edi
        leal    J_STATE_LOCK(%esi), %eax    # repeat: spin_lock(&journal->j_state_lock)
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        cmpl    $0, J_RUNNING(%esi)
        jne     21f
        movl    %esi, T_JOURNAL(%ebx)       # get_transaction (47-63): t_journal,
        movl    $0, T_STATE(%ebx)           # T_RUNNING, t_tid = j_transaction_sequence++,
        movl    J_TRANSACTION_SEQUENCE(%esi), %eax
        movl    %eax, T_TID(%ebx)
        incl    J_TRANSACTION_SEQUENCE(%esi)
        movl    jiffies, %eax               # t_expires = jiffies + j_commit_interval
        addl    J_COMMIT_INTERVAL(%esi), %eax
        movl    %eax, T_EXPIRES(%ebx)
        movl    $1, T_HANDLE_LOCK(%ebx)     # spin_lock_init(&t_handle_lock)
        movl    J_COMMIT_TIMER(%esi), %ecx  # j_commit_timer->expires = t_expires,
        movl    %eax, TIMER_EXPIRES(%ecx)   # add_timer (timer_2612.S): on this CPU's
        pushl   %ecx                        # timer list
        call    add_timer
        addl    $4, %esp
        movl    %ebx, J_RUNNING(%esi)       # j_running_transaction = transaction
        jmp     13b
21:     leal    J_STATE_LOCK(%esi), %eax    # another CPU made one meanwhile: this one is
        pushl   %eax                        # freed (2.6.12 frees it at out:, after the
        call    _spin_unlock                # handle has started; here before it repeats)
        addl    $4, %esp
        pushl   %ebx
        pushl   size128_cache
        call    kmem_cache_free
        addl    $8, %esp
        jmp     10b
9:      ud2                                 # a path the runs never take (abort, barrier, log space)

/* __log_space_left(journal) (fs/jbd/journal.c 414-433): the free log blocks, less
 * MIN_LOG_RESERVED_BLOCKS, less an eighth of the rest for descriptor blocks; 0 if none. */
        .globl  __log_space_left
__log_space_left:
        movl    4(%esp), %eax               # journal
        movl    J_FREE(%eax), %eax          # left = j_free - MIN_LOG_RESERVED_BLOCKS
        subl    $(MIN_LOG_RESERVED_BLOCKS), %eax
        jle     1f
        movl    %eax, %edx                  # left -= left >> 3
        sarl    $3, %edx
        subl    %edx, %eax
        ret
1:      xorl    %eax, %eax
        ret

/* journal_stop(handle): nested, h_ref - 1; else give back the unused credits, leave the
 * transaction (waking j_wait_updates when the last handle goes), free the handle. */
        .globl  journal_stop
journal_stop:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %edi              # handle
        movl    H_TRANSACTION(%edi), %ebx   # transaction
        movl    T_JOURNAL(%ebx), %esi       # journal
        decl    H_REF(%edi)
        jnz     8f
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        movl    $0, TSK_JOURNAL_INFO(%eax)  # current->journal_info = NULL
        leal    J_STATE_LOCK(%esi), %eax
        pushl   %eax
        call    _spin_lock
        leal    T_HANDLE_LOCK(%ebx), %eax
        movl    %eax, (%esp)
        call    _spin_lock
        addl    $4, %esp
        movl    H_CREDITS(%edi), %eax
        subl    %eax, T_OUTSTANDING(%ebx)
        decl    T_UPDATES(%ebx)
        jnz     1f
        leal    J_WAIT_UPDATES(%esi), %eax  # wake_up(&journal->j_wait_updates)
        pushl   %eax
        call    __wake_up
        addl    $4, %esp
1:      movl    T_OUTSTANDING(%ebx), %eax   # too big or too old: the runs never get here
        cmpl    J_MAX_BUFFERS(%esi), %eax
        ja      9f
        leal    T_HANDLE_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_unlock
        leal    J_STATE_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_unlock
        movl    %edi, (%esp)                # jbd_free_handle(handle)
        pushl   jbd_handle_cache
        call    kmem_cache_free
        addl    $8, %esp
8:      xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journaled_list JLIST, YES, NO: to YES when b_jlist JLIST (a register) is a list whose
 * buffers' dirty bit belongs to the journal (BJ_Metadata, BJ_Reserved, BJ_Shadow,
 * BJ_Forget: __journal_file_buffer's test, transaction.c 1960-1964, and
 * __jbd_unexpected_dirty_buffer's caller's), else to NO. */
        .macro  journaled_list JLIST, YES, NO
        cmpl    $(BJ_METADATA), \JLIST
        je      \YES
        cmpl    $(BJ_RESERVED), \JLIST
        je      \YES
        cmpl    $(BJ_SHADOW), \JLIST
        je      \YES
        cmpl    $(BJ_FORGET), \JLIST
        jne     \NO
        .endm

/* jlist_head T, LIST1, BJ1, LIST2, BJ2, COUNT, FOUND, OTHER: the list head in transaction
 * T (a register) of b_jlist eax, into ecx, as __journal_file_buffer's and
 * __journal_temp_unlink_buffer's switch finds it: LIST1 and LIST2 tested first (each
 * caller keeps its own order), then t_buffers (BJ_Metadata), whose t_nr_buffers COUNT
 * moves (incl when filing, decl when unlinking); then to FOUND, or to OTHER for the
 * commit's lists (jbd_list_offset). */
        .macro  jlist_head T, LIST1, BJ1, LIST2, BJ2, COUNT, FOUND, OTHER
        leal    \LIST1(\T), %ecx
        cmpl    $(\BJ1), %eax
        je      \FOUND
        leal    \LIST2(\T), %ecx
        cmpl    $(\BJ2), %eax
        je      \FOUND
        cmpl    $(BJ_METADATA), %eax
        jne     \OTHER
        leal    T_BUFFERS(\T), %ecx        # BJ_Metadata
        \COUNT  T_NR_BUFFERS(\T)
        .endm

/* __journal_file_buffer(jh, transaction, jlist) (fs/jbd/transaction.c 1922-1991 of
 * 2.6.12.1): file the buffer on one of the transaction's lists (called with j_list_lock
 * and the bh state lock held). A buffer filed as journaled metadata (BJ_Metadata,
 * BJ_Reserved, BJ_Shadow, BJ_Forget) gives its dirty bit to the journal: was_dirty =
 * test_clear_buffer_dirty || test_clear_buffer_jbddirty, and set_buffer_jbddirty once
 * filed; BJ_None only sets b_transaction. */
        .globl  __journal_file_buffer
__journal_file_buffer:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   $0                          # was_dirty
        movl    20(%esp), %esi              # jh
        movl    24(%esp), %edi              # transaction
        movl    JH_BH(%esi), %ebx           # bh
        movl    28(%esp), %eax              # jlist
        cmpl    $0, JH_TRANSACTION(%esi)
        je      1f
        cmpl    JH_JLIST(%esi), %eax        # already there
        je      8f
1:
        journaled_list %eax, 5f, 6f
5:      lock btrl $(BH_Dirty), BH_STATE(%ebx)       # test_clear_buffer_dirty(bh)
        jc      9f
        lock btrl $(BH_JBDDirty), BH_STATE(%ebx)    # || test_clear_buffer_jbddirty(bh)
        jnc     6f
9:      movl    $1, (%esp)                  # was_dirty = 1
6:      cmpl    $0, JH_TRANSACTION(%esi)
        je      1f
        pushl   %esi                        # on another list: off it
        call    __journal_temp_unlink_buffer
        addl    $4, %esp
        movl    28(%esp), %eax
1:      movl    %edi, JH_TRANSACTION(%esi)  # jh->b_transaction = transaction
        cmpl    $(BJ_NONE), %eax
        je      8f
        jlist_head %edi, T_SYNC_DATA, BJ_SYNCDATA, T_RESERVED, BJ_RESERVED, incl, 2f, 7f
2:      movl    (%ecx), %edx                # __blist_add_buffer(list, jh)
        testl   %edx, %edx
        jnz     3f
        movl    %esi, JH_TNEXT(%esi)        # the first: a ring of one
        movl    %esi, JH_TPREV(%esi)
        movl    %esi, (%ecx)
        jmp     4f
3:      movl    JH_TPREV(%edx), %ecx        # last = first->b_tprev
        movl    %ecx, JH_TPREV(%esi)
        movl    %edx, JH_TNEXT(%esi)
        movl    %esi, JH_TNEXT(%ecx)        # last->b_tnext = first->b_tprev = jh
        movl    %esi, JH_TPREV(%edx)
4:      movl    %eax, JH_JLIST(%esi)        # jh->b_jlist = jlist
        cmpl    $0, (%esp)
        je      8f
        lock btsl $(BH_JBDDirty), BH_STATE(%ebx)    # set_buffer_jbddirty(bh)
8:      addl    $4, %esp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
7:      movl    jbd_list_offset(,%eax,4), %ecx  # the commit's lists (commit_meta_2612.S)
        addl    %edi, %ecx
        jmp     2b

/* The offset in transaction_t of the list of each b_jlist (BJ_None has none) */
        .data
jbd_list_offset:
        .long   0, T_SYNC_DATA, T_BUFFERS, T_FORGET, T_IOBUF, T_SHADOW, T_LOG, T_RESERVED
        .long   T_LOCKED
        .text

/* __journal_temp_unlink_buffer(jh) (fs/jbd/transaction.c 1478-1528 of 2.6.12.1): off its
 * transaction list (BJ_None: on none), b_jlist = BJ_None, and a buffer the journal held
 * dirty (jbddirty) is exposed to the VM again: mark_buffer_dirty. */
        .globl  __journal_temp_unlink_buffer
__journal_temp_unlink_buffer:
        pushl   %esi
        movl    8(%esp), %esi               # jh
        movl    JH_TRANSACTION(%esi), %edx
        movl    JH_JLIST(%esi), %eax
        cmpl    $(BJ_NONE), %eax
        je      6f
        jlist_head %edx, T_RESERVED, BJ_RESERVED, T_SYNC_DATA, BJ_SYNCDATA, decl, 1f, 4f
1:      cmpl    (%ecx), %esi                # __blist_del_buffer(list, jh)
        jne     2f
        movl    JH_TNEXT(%esi), %eax
        cmpl    %eax, %esi
        jne     3f
        xorl    %eax, %eax                  # the only one
3:      movl    %eax, (%ecx)
2:      movl    JH_TPREV(%esi), %eax
        movl    JH_TNEXT(%esi), %edx
        movl    %edx, JH_TNEXT(%eax)        # jh->b_tprev->b_tnext = jh->b_tnext
        movl    %eax, JH_TPREV(%edx)        # jh->b_tnext->b_tprev = jh->b_tprev
        movl    $(BJ_NONE), JH_JLIST(%esi)
        movl    JH_BH(%esi), %eax
        lock btrl $(BH_JBDDirty), BH_STATE(%eax)    # test_clear_buffer_jbddirty(bh)
        jnc     6f
        pushl   %eax
        call    mark_buffer_dirty           # expose it to the VM
        addl    $4, %esp
6:      popl    %esi
        ret
4:      movl    jbd_list_offset(,%eax,4), %ecx  # the commit's lists
        addl    %edx, %ecx
        jmp     1b

/* do_get_write_access(handle, jh, force_copy) (fs/jbd/transaction.c 524-730 of 2.6.12.1):
 * lock the buffer and its journal state; a buffer this transaction already has (as its
 * transaction or its next) is done; one with a frozen copy already gets this transaction
 * as its next; one the committing transaction holds: while the commit writes the primary
 * copy to the log (BJ_Shadow) the writer waits for it to leave BJ_Shadow (627-645: it
 * sleeps on BH_Unshadow; the model's CPU waits, and starts again), else, unless the commit
 * is past it (BJ_Forget, no force_copy), the writer makes a frozen copy for the commit
 * (661-682: jbd_kmalloc with the state unlocked, then start again; 703-715: the buffer's
 * bytes copied, b_data being the page's lowmem address kmap_atomic gives) and becomes its
 * next transaction; one no transaction has is filed as BJ_Reserved. Then
 * journal_cancel_revoke, and a frozen buffer not used is freed. */
        .globl  do_get_write_access
do_get_write_access:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $8, %esp                    # frozen_buffer = NULL, need_copy = 0
        movl    $0, (%esp)
        movl    $0, 4(%esp)
        movl    28(%esp), %edi              # handle
        movl    32(%esp), %esi              # jh
        movl    H_TRANSACTION(%edi), %ebp   # transaction
        movl    JH_BH(%esi), %ebx           # bh
1:      lock btsl $(BH_Lock), BH_STATE(%ebx)    # repeat: lock_buffer(bh)
        jnc     3f
2:      pause
        testl   $(1 << BH_Lock), BH_STATE(%ebx)
        jnz     2b
        jmp     1b
3:
        preempt_disable %eax
30:      lock btsl $(BH_State), BH_STATE(%ebx)   # jbd_lock_bh_state(bh)
        jnc     5f
4:
        preempt_enable %eax
        pause                               # cpu_relax()
        preempt_disable %eax
        testl   $(1 << BH_State), BH_STATE(%ebx)
        jnz     4b
        jmp     30b
5:      testl   $(1 << BH_Dirty), BH_STATE(%ebx)    # buffer_dirty(bh) of a buffer in a
        jz      6f                                  # transaction: jbd_unexpected_dirty_
        cmpl    $0, JH_TRANSACTION(%esi)            # buffer (transaction.c 491-511, 564-
        je      6f                                  # 580): a journaled one's dirty bit
        movl    JH_JLIST(%esi), %eax                # moves to BH_JBDDirty
        journaled_list %eax, 10f, 6f
10:     lock btrl $(BH_Dirty), BH_STATE(%ebx)       # test_clear_buffer_dirty
        jnc     6f
        lock btsl $(BH_JBDDirty), BH_STATE(%ebx)    # set_bit(BH_JBDDirty)
6:      lock btrl $(BH_Lock), BH_STATE(%ebx)    # unlock_buffer(bh)
        pushl   %ebx                        # wake_up_buffer(bh)
        call    wake_up_bit
        addl    $4, %esp
        cmpl    JH_TRANSACTION(%esi), %ebp  # this transaction has it: done
        je      7f
        cmpl    JH_NEXT_T(%esi), %ebp
        je      7f
        cmpl    $0, JH_FROZEN(%esi)         # a copy-out exists already
        je      11f
        movl    %ebp, JH_NEXT_T(%esi)       # b_next_transaction = transaction
        jmp     7f
11:     cmpl    $0, JH_TRANSACTION(%esi)
        je      14f
        cmpl    $(BJ_SHADOW), JH_JLIST(%esi)    # owned by the committing transaction
        jne     12f
        lock btrl $(BH_State), BH_STATE(%ebx)   # on the shadow list: unlock and wait
        preempt_enable %eax
13:     pause
        cmpl    $(BJ_SHADOW), JH_JLIST(%esi)
        je      13b
        jmp     1b                          # goto repeat
12:     cmpl    $(BJ_FORGET), JH_JLIST(%esi)
        jne     15f
        cmpl    $0, 36(%esp)                # force_copy
        je      16f
15:     movl    (%esp), %eax
        testl   %eax, %eax
        jnz     17f
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state, then
        preempt_enable %eax
        pushl   size4096_cache              # frozen_buffer = jbd_kmalloc(b_size, GFP_NOFS)
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, (%esp)
        jmp     1b                          # goto repeat
17:     movl    %eax, JH_FROZEN(%esi)       # jh->b_frozen_data = frozen_buffer
        movl    $0, (%esp)                  # frozen_buffer = NULL
        movl    $1, 4(%esp)                 # need_copy = 1
16:     movl    %ebp, JH_NEXT_T(%esi)       # jh->b_next_transaction = transaction
        jmp     7f
14:     movl    T_JOURNAL(%ebp), %eax       # no transaction: file it as BJ_Reserved
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        pushl   $(BJ_RESERVED)
        pushl   %ebp
        pushl   %esi
        call    __journal_file_buffer
        addl    $12, %esp
        call    _spin_unlock
        addl    $4, %esp
7:      cmpl    $0, 4(%esp)                 # done: need_copy?
        je      8f
        pushl   %esi
        pushl   %edi
        movl    JH_FROZEN(%esi), %edi       # memcpy(b_frozen_data, source + offset, b_size)
        movl    BH_DATA(%ebx), %esi
        movl    BH_SIZE(%ebx), %ecx
        shrl    $2, %ecx
        rep movsl
        popl    %edi
        popl    %esi
8:      lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state(bh)
        preempt_enable %eax
        pushl   %esi
        pushl   %edi
        call    journal_cancel_revoke
        addl    $8, %esp
        movl    (%esp), %eax                # out: kfree(frozen_buffer) if not used
        testl   %eax, %eax
        jz      9f
        pushl   %eax
        pushl   size4096_cache
        call    kmem_cache_free
        addl    $8, %esp
9:      xorl    %eax, %eax
        addl    $8, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* journal_cancel_revoke(handle, jh): trust a valid revoke bit (test_set_buffer_revokevalid,
 * then test_clear_buffer_revoked: two locked bit operations); a revoked buffer would need
 * the revoke table, which no run has. */
        .globl  journal_cancel_revoke
journal_cancel_revoke:
        movl    8(%esp), %eax               # jh
        movl    JH_BH(%eax), %eax           # bh
        lock btsl $(BH_RevokeValid), BH_STATE(%eax)
        jnc     1f
        lock btrl $(BH_Revoked), BH_STATE(%eax)
        jc      9f
        xorl    %eax, %eax
        ret
1:      lock btrl $(BH_Revoked), BH_STATE(%eax)     # not valid yet: clear_buffer_revoked
        xorl    %eax, %eax
        ret
9:      ud2

/* journal_get_write_access(handle, bh) */
        .globl  journal_get_write_access
journal_get_write_access:
        pushl   %ebx
        pushl   12(%esp)                    # bh
        call    journal_add_journal_head
        movl    %eax, %ebx                  # jh
        pushl   $0
        pushl   %eax
        pushl   20(%esp)                    # handle
        call    do_get_write_access
        movl    %ebx, (%esp)
        call    journal_put_journal_head
        addl    $16, %esp
        xorl    %eax, %eax
        popl    %ebx
        ret

/* journal_get_undo_access(handle, bh): write access, and the first time in a transaction a
 * copy of the buffer as the last commit left it (b_committed_data: the block bitmap, so
 * that blocks freed in this transaction are not reused before it commits). */
        .globl  journal_get_undo_access
journal_get_undo_access:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    20(%esp), %esi              # bh
        pushl   %esi
        call    journal_add_journal_head
        movl    %eax, %ebx                  # jh
        pushl   $1
        pushl   %eax
        pushl   28(%esp)                    # handle
        call    do_get_write_access
        addl    $16, %esp
        cmpl    $0, JH_COMMITTED(%ebx)
        jne     2f
        pushl   size4096_cache              # jbd_kmalloc(bh->b_size)
        call    kmem_cache_alloc
        addl    $4, %esp
        preempt_disable %edx
1:      lock btsl $(BH_State), BH_STATE(%esi)
        jc      1b
        cmpl    $0, JH_COMMITTED(%ebx)      # another CPU made the copy meanwhile
        jne     3f
        movl    %eax, JH_COMMITTED(%ebx)
        movl    %eax, %edi                  # memcpy(b_committed_data, b_data, b_size)
        pushl   %esi
        movl    BH_DATA(%esi), %esi
        movl    $1024, %ecx
        rep movsl
        popl    %esi
        lock btrl $(BH_State), BH_STATE(%esi)
        preempt_enable %edx
        jmp     2f
3:      lock btrl $(BH_State), BH_STATE(%esi)
        preempt_enable %edx
        pushl   %eax                        # jbd_slab_free(committed_data)
        pushl   size4096_cache
        call    kmem_cache_free
        addl    $8, %esp
2:      pushl   %ebx
        call    journal_put_journal_head
        addl    $4, %esp
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* journal_dirty_metadata(handle, bh) (fs/jbd/transaction.c 1094-1162 of 2.6.12.1): the
 * first time a buffer is dirtied in its transaction (b_modified 0: a commit's phase 2 clears
 * it, commit_meta_2612.S) it takes one of the handle's credits (1107-1116; none left is
 * the kernel's J_ASSERT, a fault here); a buffer already on the transaction's metadata list
 * needs nothing more (the fast path); else it is marked jbddirty and filed as BJ_Metadata. */
        .globl  journal_dirty_metadata
journal_dirty_metadata:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %edi              # handle
        movl    20(%esp), %ebx              # bh
        movl    H_TRANSACTION(%edi), %edi   # transaction
        movl    BH_PRIVATE(%ebx), %esi      # jh = bh2jh(bh)
        preempt_disable %eax
1:      lock btsl $(BH_State), BH_STATE(%ebx)   # jbd_lock_bh_state
        jnc     3f
2:
        preempt_enable %eax
        pause                               # cpu_relax()
        preempt_disable %eax
        testl   $(1 << BH_State), BH_STATE(%ebx)
        jnz     2b
        jmp     1b
3:      cmpl    $0, JH_MODIFIED(%esi)       # if (jh->b_modified == 0)
        jne     6f
        movl    $1, JH_MODIFIED(%esi)       # jh->b_modified = 1
        movl    16(%esp), %eax              # handle
        cmpl    $0, H_CREDITS(%eax)         # J_ASSERT(h_buffer_credits > 0)
        jle     9f
        decl    H_CREDITS(%eax)             # handle->h_buffer_credits--
6:      cmpl    JH_TRANSACTION(%esi), %edi
        jne     4f
        cmpl    $(BJ_METADATA), JH_JLIST(%esi)
        je      5f                          # fast path
4:      lock btsl $(BH_JBDDirty), BH_STATE(%ebx)    # set_buffer_jbddirty
        cmpl    JH_TRANSACTION(%esi), %edi
        jne     5f
        movl    T_JOURNAL(%edi), %eax
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        pushl   $(BJ_METADATA)
        pushl   %edi
        pushl   %esi
        call    __journal_file_buffer
        addl    $12, %esp
        call    _spin_unlock
        addl    $4, %esp
5:      lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state
        preempt_enable %eax
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journal_dirty_data(handle, bh): ordered mode's data buffer: a journal_head, filed on the
 * transaction's t_sync_datalist (written out before the transaction commits). */
        .globl  journal_dirty_data
journal_dirty_data:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %edi              # handle
        movl    20(%esp), %ebx              # bh
        pushl   %ebx
        call    journal_add_journal_head
        addl    $4, %esp
        movl    %eax, %esi                  # jh
        preempt_disable %eax
1:      lock btsl $(BH_State), BH_STATE(%ebx)   # jbd_lock_bh_state
        jnc     3f
2:
        preempt_enable %eax
        pause                               # cpu_relax()
        preempt_disable %eax
        testl   $(1 << BH_State), BH_STATE(%ebx)
        jnz     2b
        jmp     1b
3:      movl    H_TRANSACTION(%edi), %eax
        movl    T_JOURNAL(%eax), %eax
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax                        # (kept on the stack for the unlock)
        call    _spin_lock
        testl   $(1 << BH_Mapped), BH_STATE(%ebx)
        jz      5f
        movl    H_TRANSACTION(%edi), %eax
        cmpl    $0, JH_TRANSACTION(%esi)
        je      4f
        cmpl    JH_TRANSACTION(%esi), %eax  # ours already (a rewrite): nothing to do
        je      5f
        movl    JH_JLIST(%esi), %ecx        # the committing transaction's (transaction.c
        cmpl    $(BJ_SYNCDATA), %ecx        # 966-1058 of 2.6.12.1: writepage's buffer
        je      6f                          # after the commit began): on BJ_None,
        cmpl    $(BJ_NONE), %ecx            # BJ_SyncData or BJ_Locked it is stolen,
        je      6f                          # else not journaled (no_journal: not in a
        cmpl    $(BJ_LOCKED), %ecx          # run)
        jne     9f
6:      testl   $(1 << BH_Dirty), BH_STATE(%ebx)
        jnz     9f                          # dirty: sync_dirty_buffer (writepage has
        pushl   %esi                        # cleaned it: not in a run); unfile from commit
        call    __journal_temp_unlink_buffer
        addl    $4, %esp
        movl    H_TRANSACTION(%edi), %eax   # b_transaction = handle->h_transaction, then
        movl    %eax, JH_TRANSACTION(%esi)  # (1050-1057, on BJ_None now) filed as data
4:      pushl   $(BJ_SYNCDATA)
        pushl   %eax
        pushl   %esi
        call    __journal_file_buffer
        addl    $12, %esp
5:      call    _spin_unlock
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state
        preempt_enable %eax
        pushl   %esi
        call    journal_put_journal_head
        addl    $4, %esp
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2
