/*
 * The log's checkpoint, Linux 2.6.12, written for the book from the algorithms of
 * fs/jbd/checkpoint.c of 2.6.12.1 (log_do_checkpoint and what it calls; the clean-up of the
 * checkpoint lists at a commit's start, and __try_to_free_cp_buf and
 * __journal_remove_checkpoint, which both use, are checkpoint_2612.S), with
 * journal_update_superblock (fs/jbd/journal.c) and sync_dirty_buffer (fs/buffer.c) as the
 * checkpoint reaches them. Last in the program (ext3model.ROUTINES), so that the rest keeps
 * its addresses. Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the
 * equates emu/papers/yoshioka2005/ext3model/ puts in front.
 *
 * CONFIG_PREEMPT (the equate; spinlock_2612.S): each bit spin lock here (jbd_lock_bh_state,
 * jbd_lock_bh_journal_head, their trylocks) has preempt_disable before its lock btsl, and a
 * failed trylock and each unlock preempt_enable (include/linux/spinlock.h 531-580 of
 * 2.6.12.1); the get_cpu() users and radix_tree_preload theirs (nothing without it).
 */

/* log_do_checkpoint and what it calls (fs/jbd/checkpoint.c 131-376 of 2.6.12.1, with
 * cleanup_journal_tail 395-453, journal_update_superblock of fs/jbd/journal.c 937-984,
 * sync_dirty_buffer of fs/buffer.c 2865-2886; ll_rw_block, fs/buffer.c 2831-2858, is
 * commit_2612.S's). A writer whose journal_start finds the log short of space runs it
 * (start_this_handle, fs/jbd/transaction.c 207-213 -> __log_wait_for_space, checkpoint.c
 * 78-102): the oldest checkpoint transaction's dirty buffers go to the disk in batches of
 * NR_BATCH (__flush_buffer, __flush_batch -> ll_rw_block(WRITE) -> submit_bh), the walk
 * starts again, and once it finds nothing to write __cleanup_transaction waits for the
 * first buffer still under I/O; each buffer written back leaves the list
 * (__try_to_free_cp_buf), the last one dropping the transaction; then cleanup_journal_tail
 * moves the log's tail past it and writes the journal's superblock (sync_dirty_buffer).
 * Where 2.6.12's task sleeps (wait_on_buffer in __cleanup_transaction, and in
 * sync_dirty_buffer) the routine returns the buffer it waits on, its live state in
 * ``wait`` (LDC_W_*: where it sleeps, the transaction, the buffer: what the sleeping
 * task's stack holds), and the model ends that buffer's I/O (the disk's dispatch and
 * interrupt, scsi_2612.S) before it calls log_do_checkpoint_woken(journal, wait), which
 * goes on from there; 0: the checkpoint is over. Paths no model state reaches fault
 * (ud2): a buffer another transaction holds (log_start_commit, log_wait_commit), a
 * reschedule (cond_resched_lock), an aborted journal's asserts. */
        .equ    NR_BATCH, 64
        .equ    LDC_W_WHERE, 0              # wait: 1 __cleanup_transaction, 2 superblock
        .equ    LDC_W_T, 4                  # the transaction being cleaned up
        .equ    LDC_W_BH, 8                 # the buffer waited on
        .equ    LDC_BHS, 0                  # log_do_checkpoint's frame: bhs[NR_BATCH],
        .equ    LDC_BATCH, 256              # batch_count (4 x NR_BATCH),
        .equ    LDC_DROP, 260               # drop_count,
        .equ    LDC_RETRY, 264              # retry,
        .equ    LDC_T, 268                  # transaction,
        .equ    LDC_TID, 272                # this_tid,
        .equ    LDC_LAST, 276               # last_jh
        .equ    LDC_LOCALS, 280
        .equ    LDC_JOURNAL, 300            # the arguments past 4 saved registers
        .equ    LDC_WAIT, 304
        .equ    JFS_FLUSHED, 8              # 815

/* log_do_checkpoint(journal, wait) -> the buffer it sleeps on, or 0 (283-376) */
        .globl  log_do_checkpoint
log_do_checkpoint:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $(LDC_LOCALS), %esp
        movl    LDC_JOURNAL(%esp), %ebp
        movl    $0, LDC_BATCH(%esp)         # batch_count = 0
        pushl   LDC_WAIT(%esp)              # result = cleanup_journal_tail(journal)
        pushl   %ebp
        call    cleanup_journal_tail
        addl    $8, %esp
        testl   %eax, %eax                  # result <= 0: return result (the tail moved)
        jz      ldc_return
        leal    J_LIST_LOCK(%ebp), %eax     # spin_lock(&journal->j_list_lock)
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
ldc_while:
        movl    J_CHECKPOINT_TRANSACTIONS(%ebp), %eax   # while (j_checkpoint_transactions)
        testl   %eax, %eax
        jz      ldc_done
        movl    %eax, LDC_T(%esp)           # transaction = j_checkpoint_transactions
        movl    T_TID(%eax), %ecx           # this_tid = transaction->t_tid
        movl    %ecx, LDC_TID(%esp)
        movl    T_CHECKPOINT(%eax), %edi    # jh = t_checkpoint_list (edi: next_jh = jh)
        movl    JH_CPPREV(%edi), %ecx       # last_jh = jh->b_cpprev
        movl    %ecx, LDC_LAST(%esp)
        movl    $0, LDC_DROP(%esp)          # drop_count = 0, retry = 0
        movl    $0, LDC_RETRY(%esp)
1:      movl    %edi, %esi                  # do { jh = next_jh;
        movl    JH_CPNEXT(%esi), %edi       # next_jh = jh->b_cpnext; bh = jh2bh(jh)
        movl    JH_BH(%esi), %ebx
        preempt_disable %ecx
        lock btsl $(BH_State), BH_STATE(%ebx)   # jbd_trylock_bh_state(bh) fails:
        .if     CONFIG_PREEMPT
        jnc     41f
        preempt_enable %ecx                 # bit_spin_trylock failed
        jmp     3f
41:
        .else
        jc      3f
        .endif
        leal    LDC_DROP(%esp), %eax        # retry = __flush_buffer(journal, jh, bhs,
        pushl   %eax                        # &batch_count, &drop_count)
        leal    LDC_BATCH + 4(%esp), %eax
        pushl   %eax
        leal    LDC_BHS + 8(%esp), %eax
        pushl   %eax
        pushl   %esi
        pushl   %ebp
        call    __flush_buffer
        addl    $20, %esp
        movl    %eax, LDC_RETRY(%esp)
        movl    $-8192, %eax                # cond_resched_lock(&j_list_lock): no
        andl    %esp, %eax                  # need_lockbreak without CONFIG_PREEMPT;
        testl   $8, TI_FLAGS(%eax)          # need_resched() (TIF_NEED_RESCHED, 3): not in
        jnz     ldc_fault                   # the model's checkpoints
        cmpl    LDC_LAST(%esp), %esi        # } while (jh != last_jh && !retry)
        je      4f
        cmpl    $0, LDC_RETRY(%esp)
        je      1b
        jmp     4f
3:      pushl   %ebx                        # jbd_sync_bh(journal, bh), spin_lock(list),
        pushl   %ebp                        # retry = 1, break
        call    jbd_sync_bh
        addl    $8, %esp
        leal    J_LIST_LOCK(%ebp), %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    $1, LDC_RETRY(%esp)
4:      cmpl    $0, LDC_BATCH(%esp)         # if (batch_count): __flush_batch, retry = 1
        je      5f
        leal    LDC_BATCH(%esp), %eax
        pushl   %eax
        leal    LDC_BHS + 4(%esp), %eax
        pushl   %eax
        pushl   %ebp
        call    __flush_batch
        addl    $12, %esp
        movl    $1, LDC_RETRY(%esp)
5:      movl    LDC_T(%esp), %eax           # someone cleaned it up meanwhile: done
        cmpl    J_CHECKPOINT_TRANSACTIONS(%ebp), %eax
        jne     ldc_done
        cmpl    $0, LDC_RETRY(%esp)         # if (retry) continue
        jne     ldc_while
        movl    T_TID(%eax), %ecx           # a new transaction at the same address
        cmpl    LDC_TID(%esp), %ecx
        jne     ldc_while
        pushl   LDC_WAIT(%esp)              # cleanup_ret = __cleanup_transaction(journal,
        pushl   %eax                        # transaction)
        pushl   %ebp
        call    __cleanup_transaction
        addl    $12, %esp
        cmpl    $2, %eax                    # asleep in it: return the buffer
        je      ldc_asleep
        orl     LDC_DROP(%esp), %eax        # J_ASSERT(drop_count != 0 || cleanup_ret != 0)
        jz      ldc_fault
ldc_cleaned:
        movl    LDC_T(%esp), %eax           # if (j_checkpoint_transactions != transaction)
        cmpl    J_CHECKPOINT_TRANSACTIONS(%ebp), %eax   # break
        je      ldc_while
ldc_done:
        leal    J_LIST_LOCK(%ebp), %eax     # spin_unlock(&journal->j_list_lock)
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        pushl   LDC_WAIT(%esp)              # result = cleanup_journal_tail(journal)
        pushl   %ebp
        call    cleanup_journal_tail
        addl    $8, %esp
ldc_return:
        xorl    %eax, %eax                  # return 0, unless asleep in the superblock's
        movl    LDC_WAIT(%esp), %edx        # sync_dirty_buffer
        cmpl    $2, LDC_W_WHERE(%edx)
        jne     ldc_out
ldc_asleep:
        movl    LDC_WAIT(%esp), %edx
        movl    LDC_W_BH(%edx), %eax
ldc_out:
        addl    $(LDC_LOCALS), %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
ldc_fault:
        ud2

/* log_do_checkpoint_woken(journal, wait) -> as log_do_checkpoint: its task woken where it
 * slept, the buffer's I/O ended. In __cleanup_transaction (150-154, 194-196): __brelse,
 * spin_lock(&j_list_lock), return 1, and log_do_checkpoint goes on (366-368); in the
 * superblock's sync_dirty_buffer: the rest of journal_update_superblock, and return 0. */
        .globl  log_do_checkpoint_woken
log_do_checkpoint_woken:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $(LDC_LOCALS), %esp
        movl    LDC_JOURNAL(%esp), %ebp
        movl    $0, LDC_BATCH(%esp)
        movl    LDC_WAIT(%esp), %edx
        movl    LDC_W_WHERE(%edx), %eax
        movl    $0, LDC_W_WHERE(%edx)       # awake
        movl    LDC_W_BH(%edx), %ebx
        testl   $(1 << BH_Lock), BH_STATE(%ebx) # wait_on_bit returns once it is unlocked
        jnz     ldc_fault
        cmpl    $2, %eax
        je      1f
        cmpl    $1, %eax
        jne     ldc_fault
        movl    LDC_W_T(%edx), %eax
        movl    %eax, LDC_T(%esp)
        pushl   %ebx                        # __brelse(bh)
        call    __brelse
        leal    J_LIST_LOCK(%ebp), %eax     # out_return_1: spin_lock(&j_list_lock)
        movl    %eax, (%esp)
        call    _spin_lock
        addl    $4, %esp
        jmp     ldc_cleaned                 # cleanup_ret = 1
1:      pushl   %ebp                        # journal_update_superblock's out:
        call    journal_superblock_flushed
        addl    $4, %esp
        xorl    %eax, %eax
        jmp     ldc_out

/* __flush_buffer(journal, jh, bhs, batch_count, drop_count) -> 1 to stop the walk
 * (227-269): under the buffer's state lock, which it drops. A dirty buffer, not locked, on
 * no transaction's list, joins the batch (get_bh, set_buffer_jwrite), a full batch is
 * written (__flush_batch); else it may be released (__try_to_free_cp_buf), and releasing
 * the list's last buffer stops the walk. */
        .globl  __flush_buffer
__flush_buffer:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    20(%esp), %esi              # jh
        movl    JH_BH(%esi), %ebx           # bh = jh2bh(jh)
        testl   $(1 << BH_Dirty), BH_STATE(%ebx)    # buffer_dirty && !buffer_locked &&
        jz      2f                          # b_jlist == BJ_None
        testl   $(1 << BH_Lock), BH_STATE(%ebx)
        jnz     2f
        cmpl    $(BJ_NONE), JH_JLIST(%esi)
        jne     2f
        cmpl    $0, JH_TRANSACTION(%esi)    # J_ASSERT_JH(jh, b_transaction == NULL)
        jne     9f
        lock incl BH_COUNT(%ebx)            # get_bh(bh)
        testl   $(1 << BH_JWrite), BH_STATE(%ebx)   # J_ASSERT_BH(bh, !buffer_jwrite)
        jnz     9f
        lock btsl $(BH_JWrite), BH_STATE(%ebx)      # set_buffer_jwrite(bh)
        movl    28(%esp), %edi              # bhs[*batch_count] = bh
        movl    (%edi), %eax
        movl    24(%esp), %ecx
        movl    %ebx, (%ecx,%eax,4)
        lock btrl $(BH_State), BH_STATE(%ebx)       # jbd_unlock_bh_state(bh)
        preempt_enable %edx
        incl    %eax                        # (*batch_count)++
        movl    %eax, (%edi)
        cmpl    $(NR_BATCH), %eax
        jne     1f
        pushl   %edi                        # a full batch: __flush_batch, ret = 1
        pushl   %ecx
        pushl   16+8(%esp)
        call    __flush_batch
        addl    $12, %esp
        movl    $1, %eax
        jmp     8f
1:      xorl    %eax, %eax
        jmp     8f
2:      xorl    %edi, %edi                  # last_buffer = (jh->b_cpnext == jh)
        cmpl    JH_CPNEXT(%esi), %esi
        sete    %al
        movzbl  %al, %edi
        pushl   %esi
        call    __try_to_free_cp_buf        # drops the state lock
        addl    $4, %esp
        testl   %eax, %eax
        jz      8f                          # not released: ret = 0
        movl    32(%esp), %ecx              # (*drop_count)++, ret = last_buffer
        incl    (%ecx)
        movl    %edi, %eax
8:      popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* __flush_batch(journal, bhs, batch_count) (202-216): the list lock dropped around
 * ll_rw_block(WRITE, *batch_count, bhs); then each buffer's jwrite bit cleared and its
 * reference dropped; *batch_count = 0 */
        .globl  __flush_batch
__flush_batch:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %ebx              # journal
        movl    20(%esp), %esi              # bhs
        leal    J_LIST_LOCK(%ebx), %eax     # spin_unlock(&journal->j_list_lock)
        pushl   %eax
        call    _spin_unlock
        movl    28(%esp), %eax              # ll_rw_block(WRITE, *batch_count, bhs)
        pushl   %esi
        pushl   (%eax)
        pushl   $1
        call    ll_rw_block
        addl    $12, %esp
        call    _spin_lock                  # spin_lock(&journal->j_list_lock)
        addl    $4, %esp
        movl    24(%esp), %eax
        movl    (%eax), %edi                # for (i = 0; i < *batch_count; i++)
1:      testl   %edi, %edi
        jz      2f
        movl    (%esi), %eax
        lock btrl $(BH_JWrite), BH_STATE(%eax)  # clear_buffer_jwrite(bh)
        pushl   %eax
        call    __brelse                    # __brelse(bh)
        addl    $4, %esp
        addl    $4, %esi
        decl    %edi
        jmp     1b
2:      movl    24(%esp), %eax              # *batch_count = 0
        movl    $0, (%eax)
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* __cleanup_transaction(journal, transaction, wait) -> 0, 1, or 2: asleep (131-197). For
 * each buffer of its checkpoint list: one locked (under I/O) is waited for (a reference
 * taken, the list lock dropped, wait_on_buffer: the task sleeps, ``wait`` records where,
 * and the model wakes it: log_do_checkpoint_woken); one whose state lock another CPU holds
 * is waited for (jbd_sync_bh); one a transaction holds faults (log_start_commit and
 * log_wait_commit: a buffer of the oldest transaction no later one took, in the model's
 * checkpoints); one clean and not jbddirty leaves the list and its journal head (the
 * transaction dropped with the last). Called with j_list_lock held. */
        .globl  __cleanup_transaction
__cleanup_transaction:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $8, %esp                    # 0: last_jh, 4: ret
        movl    28(%esp), %ebp              # journal
        movl    32(%esp), %eax              # transaction
        movl    $0, 4(%esp)                 # ret = 0
        movl    T_CHECKPOINT(%eax), %edi    # jh = t_checkpoint_list: none, return 0
        testl   %edi, %edi
        jz      7f
        movl    JH_CPPREV(%edi), %eax       # last_jh = jh->b_cpprev; next_jh = jh
        movl    %eax, (%esp)
1:      movl    %edi, %esi                  # do { jh = next_jh; bh = jh2bh(jh)
        movl    JH_BH(%esi), %ebx
        testl   $(1 << BH_Lock), BH_STATE(%ebx) # buffer_locked(bh): wait for it
        jnz     4f
        preempt_disable %ecx
        lock btsl $(BH_State), BH_STATE(%ebx)   # !jbd_trylock_bh_state(bh): jbd_sync_bh
        .if     CONFIG_PREEMPT
        jnc     41f
        preempt_enable %ecx                 # bit_spin_trylock failed
        jmp     5f
41:
        .else
        jc      5f
        .endif
        cmpl    $0, JH_TRANSACTION(%esi)    # jh->b_transaction: log_start_commit,
        jne     9f                          # log_wait_commit (not in the model's)
        movl    JH_CPNEXT(%esi), %edi       # next_jh = jh->b_cpnext
        testl   $((1 << BH_Dirty) | (1 << BH_JBDDirty)), BH_STATE(%ebx)
        jnz     2f                          # !buffer_dirty && !buffer_jbddirty:
        pushl   %esi
        call    __journal_remove_checkpoint
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state(bh)
        preempt_enable %eax
        pushl   %ebx
        call    journal_remove_journal_head
        call    __brelse
        addl    $4, %esp
        movl    $1, 4(%esp)                 # ret = 1
        jmp     3f
2:      lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state(bh)
        preempt_enable %eax
3:      cmpl    (%esp), %esi                # } while (jh != last_jh)
        jne     1b
7:      movl    4(%esp), %eax
        jmp     8f
4:      lock incl BH_COUNT(%ebx)            # atomic_inc(&bh->b_count)
        leal    J_LIST_LOCK(%ebp), %eax     # spin_unlock(&journal->j_list_lock)
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        testl   $(1 << BH_Lock), BH_STATE(%ebx) # wait_on_buffer(bh): still locked, sleep
        jz      6f
        movl    36(%esp), %edx              # where: here, on bh, cleaning transaction
        movl    $1, LDC_W_WHERE(%edx)
        movl    32(%esp), %eax
        movl    %eax, LDC_W_T(%edx)
        movl    %ebx, LDC_W_BH(%edx)
        movl    $2, %eax
        jmp     8f
5:      pushl   %ebx                        # jbd_sync_bh(journal, bh), then
        pushl   %ebp                        # out_return_1
        call    jbd_sync_bh
        addl    $8, %esp
        jmp     10f
6:      pushl   %ebx                        # unlocked meanwhile: no sleep; __brelse(bh)
        call    __brelse
        addl    $4, %esp
10:     leal    J_LIST_LOCK(%ebp), %eax     # out_return_1: spin_lock(&j_list_lock)
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    $1, %eax
8:      addl    $8, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* jbd_sync_bh(journal, bh) (110-117): the list lock dropped, the buffer's state lock waited
 * for (another CPU holds it) and let go, the reference taken around it dropped */
        .globl  jbd_sync_bh
jbd_sync_bh:
        pushl   %ebx
        movl    12(%esp), %ebx              # bh
        lock incl BH_COUNT(%ebx)            # get_bh(bh)
        movl    8(%esp), %eax               # spin_unlock(&journal->j_list_lock)
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_unlock
        movl    %ebx, (%esp)                # jbd_lock_bh_state(bh), jbd_unlock_bh_state
        call    jbd_lock_state
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)
        preempt_enable %ecx
        lock decl BH_COUNT(%ebx)            # put_bh(bh)
        popl    %ebx
        ret

/* cleanup_journal_tail(journal, wait) -> 1: the oldest transaction is at the log's tail
 * already; 0: the tail moved past the transactions gone (395-453): the oldest transaction
 * still in the log (the first checkpoint transaction, else the committing, else the
 * running one, else the next tid) and the block it starts at; the blocks freed, wrapping
 * past the log's end; j_free, j_tail_sequence, j_tail; then the journal's superblock
 * written and waited for (journal_update_superblock(journal, 1): ``wait`` says whether the
 * task sleeps in it) */
        .globl  cleanup_journal_tail
cleanup_journal_tail:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # journal
        leal    J_STATE_LOCK(%esi), %eax    # spin_lock(&j_state_lock), (&j_list_lock)
        pushl   %eax
        call    _spin_lock
        leal    J_LIST_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_lock
        movl    J_CHECKPOINT_TRANSACTIONS(%esi), %eax
        testl   %eax, %eax
        jnz     1f
        movl    J_COMMITTING(%esi), %eax
        testl   %eax, %eax
        jnz     1f
        movl    J_HEAD(%esi), %edi          # blocknr = j_head
        movl    J_RUNNING(%esi), %eax
        testl   %eax, %eax
        jz      2f
        movl    T_TID(%eax), %ebx           # first_tid = the running one's t_tid
        jmp     3f
2:      movl    J_TRANSACTION_SEQUENCE(%esi), %ebx  # first_tid = j_transaction_sequence
        jmp     3f
1:      movl    T_TID(%eax), %ebx           # first_tid = t_tid, blocknr = t_log_start
        movl    T_LOG_START(%eax), %edi
3:      leal    J_LIST_LOCK(%esi), %eax     # spin_unlock(&j_list_lock)
        movl    %eax, (%esp)
        call    _spin_unlock
        testl   %edi, %edi                  # J_ASSERT(blocknr != 0)
        jz      9f
        cmpl    J_TAIL_SEQUENCE(%esi), %ebx # the oldest is at the tail already:
        jne     4f                          # spin_unlock(&j_state_lock), return 1
        leal    J_STATE_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_unlock
        addl    $4, %esp
        movl    $1, %eax
        jmp     8f
4:      movl    %edi, %eax                  # freed = blocknr - j_tail
        subl    J_TAIL(%esi), %eax
        cmpl    J_TAIL(%esi), %edi          # blocknr < j_tail: + j_last - j_first
        jae     5f
        addl    J_LAST(%esi), %eax
        subl    J_FIRST(%esi), %eax
5:      addl    %eax, J_FREE(%esi)          # j_free += freed
        movl    %ebx, J_TAIL_SEQUENCE(%esi) # j_tail_sequence = first_tid
        movl    %edi, J_TAIL(%esi)          # j_tail = blocknr
        leal    J_STATE_LOCK(%esi), %eax    # spin_unlock(&j_state_lock)
        movl    %eax, (%esp)
        call    _spin_unlock
        addl    $4, %esp
        testl   $(JFS_ABORT), J_FLAGS(%esi) # not aborted: journal_update_superblock(j, 1)
        jnz     6f
        pushl   20(%esp)
        pushl   %esi
        call    journal_update_superblock
        addl    $8, %esp
6:      xorl    %eax, %eax
8:      popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journal_update_superblock(journal, wait) (fs/jbd/journal.c 937-984 with wait = 1): the
 * journal's superblock takes j_tail_sequence, j_tail and j_errno (big-endian) under
 * j_state_lock unless it needs no update (s_start 0 and no transaction outstanding); it is
 * marked dirty and written with sync_dirty_buffer (fs/buffer.c 2865-2886: locked, its dirty
 * bit cleared, a reference, end_buffer_write_sync, submit_bh, wait_on_buffer): the task
 * sleeps until the write ends (``wait``: 2, the superblock's buffer), and
 * journal_superblock_flushed finishes once it wakes; a write not needed finishes at once */
        .globl  journal_update_superblock
journal_update_superblock:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # journal
        movl    J_SUPERBLOCK(%esi), %edi    # sb = j_superblock
        movl    J_SB_BUFFER(%esi), %ebx     # bh = j_sb_buffer
        cmpl    $0, JSB_S_START(%edi)       # s_start == 0 && j_tail_sequence ==
        jne     1f                          # j_transaction_sequence: goto out
        movl    J_TAIL_SEQUENCE(%esi), %eax
        cmpl    J_TRANSACTION_SEQUENCE(%esi), %eax
        je      7f
1:      leal    J_STATE_LOCK(%esi), %eax    # spin_lock(&journal->j_state_lock)
        pushl   %eax
        call    _spin_lock
        movl    J_TAIL_SEQUENCE(%esi), %eax # s_sequence = cpu_to_be32(j_tail_sequence)
        bswap   %eax
        movl    %eax, JSB_S_SEQUENCE(%edi)
        movl    J_TAIL(%esi), %eax          # s_start = cpu_to_be32(j_tail)
        bswap   %eax
        movl    %eax, JSB_S_START(%edi)
        movl    J_ERRNO(%esi), %eax         # s_errno = cpu_to_be32(j_errno)
        bswap   %eax
        movl    %eax, JSB_S_ERRNO(%edi)
        call    _spin_unlock
        movl    %ebx, (%esp)                # mark_buffer_dirty(bh)
        call    mark_buffer_dirty
        addl    $4, %esp
        lock btsl $(BH_Lock), BH_STATE(%ebx)    # sync_dirty_buffer: lock_buffer (a
        jc      9f                          # buffer locked already would sleep: not here)
        lock btrl $(BH_Dirty), BH_STATE(%ebx)   # test_clear_buffer_dirty
        jnc     6f
        lock incl BH_COUNT(%ebx)            # get_bh
        leal    end_buffer_write_sync, %eax # b_end_io = end_buffer_write_sync
        movl    %eax, BH_END_IO(%ebx)
        pushl   %ebx                        # submit_bh(WRITE, bh)
        pushl   $1
        call    submit_bh
        addl    $8, %esp
        testl   $(1 << BH_Lock), BH_STATE(%ebx) # wait_on_buffer(bh): locked, sleep
        jz      7f
        movl    20(%esp), %edx
        movl    $2, LDC_W_WHERE(%edx)
        movl    $0, LDC_W_T(%edx)
        movl    %ebx, LDC_W_BH(%edx)
        jmp     8f
6:      lock btrl $(BH_Lock), BH_STATE(%ebx)    # clean: unlock_buffer
        pushl   %ebx
        call    wake_up_bit
        addl    $4, %esp
7:      pushl   %esi                        # out:
        call    journal_superblock_flushed
        addl    $4, %esp
8:      popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journal_superblock_flushed(journal): journal_update_superblock's out: (975-983): under
 * j_state_lock, JFS_FLUSHED set if the superblock's s_start is 0, else cleared */
        .globl  journal_superblock_flushed
journal_superblock_flushed:
        pushl   %esi
        movl    8(%esp), %esi
        leal    J_STATE_LOCK(%esi), %eax
        pushl   %eax
        call    _spin_lock
        movl    J_SUPERBLOCK(%esi), %eax
        cmpl    $0, JSB_S_START(%eax)
        je      1f
        andl    $(~JFS_FLUSHED), J_FLAGS(%esi)
        jmp     2f
1:      orl     $(JFS_FLUSHED), J_FLAGS(%esi)
2:      call    _spin_unlock
        addl    $4, %esp
        popl    %esi
        ret

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
