/*
 * kjournald's commit of metadata, Linux 2.6.12, written for the book from the algorithms of
 * fs/jbd/commit.c (journal_commit_transaction: phase 3, the loop over t_buffers, lines
 * 446-599 of 2.6.12.1; phase 4, the t_iobuf_list and t_shadow_list, 614-671; phase 5, the
 * t_log_list, 673-698; phase 6, journal_write_commit_record, 103-162; phase 7, the
 * t_forget list, 713-800; journal_end_buffer_io_sync, 28-36), fs/jbd/journal.c
 * (journal_write_metadata_buffer 282-378, journal_next_log_block 569-583,
 * journal_get_descriptor_buffer 629-647), fs/jbd/transaction.c (__journal_file_buffer,
 * __journal_temp_unlink_buffer, __journal_unfile_buffer, __journal_refile_buffer) and
 * fs/jbd/checkpoint.c (__buffer_unlink, __journal_remove_checkpoint,
 * __journal_insert_checkpoint).
 *
 * A turn logs one metadata buffer, the one at the head of the transaction's t_buffers (the
 * buffers the writes dirtied: bitmaps, group descriptors, the inode table, indirect
 * blocks), in three calls that the book's ext3model makes in a pause, completing the log's
 * writes on the disk in between (kjournald waits for them):
 *   journal_write_metadata(journal, transaction, flags): phase 3 for the buffer (flags
 *     bit 0: the commit's first, so a descriptor block first, written ahead of it as
 *     wbuf[0] is, though its later tags are added after: 2.6.12 writes the batch at the end;
 *     bit 1: its last, so the descriptor's last tag); returns its journal_head, or 0 if
 *     t_buffers is empty;
 *   journal_commit_written(journal, transaction, jh, flags): phases 4 and 5 (the temporary
 *     buffer freed, the original filed BJ_Forget; the descriptor unfiled), and for the last
 *     buffer phase 6's commit block submitted;
 *   journal_commit_finish(journal, transaction, jh, flags): the commit block released, and
 *     phase 7 for the buffer: its committed copy freed (the bitmaps' undo copy: the next
 *     journal_get_undo_access makes it afresh), off any older checkpoint list and onto this
 *     commit's, unfiled (b_transaction NULL: the next write files it again).
 * The transaction is the committing one (journal_lock_down below made it so; the writers
 * run on a new running transaction), and each phase takes the buffer's state lock as
 * 2.6.12 does, only for its own work: a writer that reaches a buffer under commit gets a
 * frozen copy of it (do_get_write_access, jbd_2612.S) or, while the log write is under
 * way (BJ_Shadow), waits; phase 7 refiles a buffer a writer took meanwhile to the running
 * transaction (__journal_refile_buffer). journal_bmap is the identity (the log contiguous on the disk);
 * __getblk of a log block is the journal's control buffer for it (J_C_CTL: descriptor,
 * commit); a buffer leaving the journal is marked dirty (__journal_temp_unlink_buffer), but
 * the model's metadata pages belong to no mapping (the block device's tree does not hold
 * them), so only the page's dirty bit is set: the checkpoint's write-back is left out.
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 *
 * CONFIG_PREEMPT (the equate; spinlock_2612.S): each bit spin lock here (jbd_lock_bh_state,
 * jbd_lock_bh_journal_head, their trylocks) has preempt_disable before its lock btsl, and a
 * failed trylock and each unlock preempt_enable (include/linux/spinlock.h 531-580 of
 * 2.6.12.1); the get_cpu() users and radix_tree_preload theirs (nothing without it).
 */
        .equ    JFS_MAGIC_BE, 0x98393bc0    # cpu_to_be32(JFS_MAGIC_NUMBER 0xc03b3998), read LE
        .equ    JFS_DESCRIPTOR_BLOCK, 1
        .equ    JFS_COMMIT_BLOCK, 2
        .equ    JFS_FLAG_ESCAPE, 1
        .equ    JFS_FLAG_SAME_UUID, 2
        .equ    JFS_FLAG_LAST_TAG, 8
        .equ    JOURNAL_HEADER, 12          # sizeof(journal_header_t)
        .equ    BLOCK_TAG, 8                # sizeof(journal_block_tag_t)

/* journal_lock_down(journal) -> the committing transaction: journal_commit_transaction's
 * first job (fs/jbd/commit.c 205-294 of 2.6.12.1): under j_state_lock the running
 * transaction is locked down (T_LOCKED: a journal_start now waits, transaction.c 147-156),
 * its open handles are waited for (t_updates to 0 under t_handle_lock; the schedule() on
 * j_wait_updates is the model's CPU waiting, both locks released, as start_this_handle's
 * wait), its t_reserved_list found empty (each of the runs' handles dirties what it
 * reserved), the checkpoint lists cleaned (commit.c 278-280: __journal_clean_checkpoint_list,
 * checkpoint_2612.S, which ends at once when no transaction is on them), the revoke table
 * switched (revoke.c 480-491: the other table's 256 hash heads emptied), and the
 * transaction made the committing one (T_FLUSH, j_running_transaction NULL: the next
 * journal_start makes a new running transaction, t_log_start = j_head), the waiters on
 * j_wait_transaction_locked woken; then phase 2's first loop (296-311): b_modified
 * cleared on each buffer of t_buffers. */
        .globl  journal_lock_down
journal_lock_down:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # journal
        movl    J_RUNNING(%esi), %ebx       # commit_transaction = j_running_transaction
        testl   %ebx, %ebx                  # J_ASSERTs: a running transaction, no commit
        jz      9f                          # under way, T_RUNNING
        cmpl    $0, J_COMMITTING(%esi)
        jne     9f
        cmpl    $0, T_STATE(%ebx)
        jne     9f
        leal    J_STATE_LOCK(%esi), %eax
        pushl   %eax                        # 8(%esp) below: &j_state_lock
        call    _spin_lock
        movl    $1, T_STATE(%ebx)           # t_state = T_LOCKED
        leal    T_HANDLE_LOCK(%ebx), %eax
        pushl   %eax                        # (%esp): &t_handle_lock
        call    _spin_lock
1:      cmpl    $0, T_UPDATES(%ebx)         # while (t_updates)
        je      3f
        call    _spin_unlock                # t_handle_lock, j_state_lock released,
        pushl   4(%esp)                     # schedule(): the CPU waits for the last
        call    _spin_unlock                # journal_stop
        addl    $4, %esp
2:      pause
        cmpl    $0, T_UPDATES(%ebx)
        jne     2b
        pushl   4(%esp)
        call    _spin_lock
        addl    $4, %esp
        call    _spin_lock
        jmp     1b
3:      call    _spin_unlock                # t_handle_lock
        addl    $4, %esp
        movl    T_OUTSTANDING(%ebx), %eax   # J_ASSERT(t_outstanding_credits <=
        cmpl    J_MAX_BUFFERS(%esi), %eax   # j_max_transaction_buffers)
        ja      9f
        cmpl    $0, T_RESERVED(%ebx)        # t_reserved_list: empty in the runs
        jne     9f
        leal    J_LIST_LOCK(%esi), %eax     # under j_list_lock,
        pushl   %eax
        call    _spin_lock
        pushl   %esi                        # __journal_clean_checkpoint_list
        call    __journal_clean_checkpoint_list     # (checkpoint_2612.S)
        addl    $4, %esp
        call    _spin_unlock
        addl    $4, %esp
        movl    J_REVOKE(%esi), %eax        # journal_switch_revoke_table
        movl    J_REVOKE_TABLE(%esi), %ecx
        cmpl    %ecx, %eax
        jne     4f
        movl    J_REVOKE_TABLE+4(%esi), %ecx
4:      movl    %ecx, J_REVOKE(%esi)
        movl    RT_HASH_SIZE(%ecx), %edx
        movl    RT_HASH_TABLE(%ecx), %edi
5:      movl    %edi, (%edi)                # INIT_LIST_HEAD(&hash_table[i])
        movl    %edi, 4(%edi)
        addl    $8, %edi
        decl    %edx
        jnz     5b
        movl    $3, T_STATE(%ebx)           # t_state = T_FLUSH
        movl    %ebx, J_COMMITTING(%esi)    # j_committing_transaction = commit_transaction
        movl    $0, J_RUNNING(%esi)         # j_running_transaction = NULL
        movl    J_HEAD(%esi), %eax          # t_log_start = j_head
        movl    %eax, T_LOG_START(%ebx)
        leal    J_WAIT_TRANSACTION_LOCKED(%esi), %eax
        pushl   %eax                        # wake_up(&j_wait_transaction_locked)
        call    __wake_up
        addl    $4, %esp
        call    _spin_unlock                # j_state_lock
        leal    J_LIST_LOCK(%esi), %eax     # phase 2's start (296-311): under j_list_lock,
        movl    %eax, (%esp)                # each buffer's b_modified dropped, so the next
        call    _spin_lock                  # transaction's handles take a credit for it
        movl    T_BUFFERS(%ebx), %edx       # again (journal_dirty_metadata)
        testl   %edx, %edx
        jz      7f
        movl    JH_TNEXT(%edx), %edx        # jh = new_jh = t_buffers->b_tnext
        movl    %edx, %ecx
6:      movl    $0, JH_MODIFIED(%ecx)       # new_jh->b_modified = 0
        movl    JH_TNEXT(%ecx), %ecx
        cmpl    %edx, %ecx                  # while (new_jh != jh)
        jne     6b
7:      call    _spin_unlock
        addl    $4, %esp
        movl    %ebx, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

        .globl  journal_write_metadata
journal_write_metadata:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebp              # journal
        movl    24(%esp), %edi              # commit_transaction
        leal    J_LIST_LOCK(%ebp), %eax     # jh = t_buffers (under j_list_lock here: the
        pushl   %eax                        # writers file on the same transaction)
        call    _spin_lock
        movl    T_BUFFERS(%edi), %esi
        call    _spin_unlock
        addl    $4, %esp
        testl   %esi, %esi
        jz      8f
        movl    JH_BH(%esi), %ebx           # bh_in
        pushl   %ebx                        # jbd_lock_bh_state(bh_in), to the end of phase 3
        call    jbd_lock_state
        addl    $4, %esp
        cmpl    JH_TRANSACTION(%esi), %edi  # still on t_buffers (a writer cannot take it
        jne     9f                          # off: the fast path leaves BJ_Metadata be)
        cmpl    $(BJ_METADATA), JH_JLIST(%esi)
        jne     9f
        testl   $1, 28(%esp)                # the commit's first buffer: a descriptor
        jz      1f
        cmpl    J_COMMITTING(%ebp), %edi    # phase 3's start (445): t_state = T_COMMIT, for
        jne     2f                          # a locked-down commit (the model's commits at
        movl    $4, T_STATE(%edi)           # a pace, on the running one, stay T_RUNNING)
2:      pushl   %ebp
        call    journal_get_descriptor_buffer
        addl    $4, %esp
        movl    %eax, J_C_DESC(%ebp)
        movl    JH_BH(%eax), %ecx
        movl    BH_DATA(%ecx), %edx         # the header, big-endian
        movl    $(JFS_MAGIC_BE), (%edx)
        movl    $(JFS_DESCRIPTOR_BLOCK << 24), 4(%edx)
        movl    T_TID(%edi), %eax
        bswap   %eax
        movl    %eax, 8(%edx)
        leal    JOURNAL_HEADER(%edx), %edx  # tagp, space_left, first_tag
        movl    %edx, J_C_TAGP(%ebp)
        movl    BH_SIZE(%ecx), %eax
        subl    $(JOURNAL_HEADER), %eax
        movl    %eax, J_C_SPACE(%ebp)
        movl    $1, J_C_FIRST(%ebp)
        lock btsl $(BH_JWrite), BH_STATE(%ecx)  # set_buffer_jwrite, set_buffer_dirty
        lock btsl $(BH_Dirty), BH_STATE(%ecx)
        pushl   $(BJ_LOGCTL)                # journal_file_buffer(descriptor, BJ_LogCtl)
        pushl   %edi
        pushl   J_C_DESC(%ebp)
        call    journal_file_buffer
        addl    $12, %esp
        movl    J_C_DESC(%ebp), %eax        # wbuf[0]: written ahead of the buffers
        pushl   JH_BH(%eax)
        call    journal_submit_buffer
        addl    $4, %esp
1:      pushl   %ebp                        # blocknr = journal_next_log_block()
        call    journal_next_log_block
        addl    $4, %esp
        lock incl BH_COUNT(%ebx)            # atomic_inc(&bh->b_count)
        lock btsl $(BH_JWrite), BH_STATE(%ebx)
        pushl   %eax                        # flags = journal_write_metadata_buffer()
        pushl   %esi
        pushl   %edi
        call    journal_write_metadata_buffer
        addl    $12, %esp                   # eax: flags, edx: new_jh
        movl    JH_BH(%edx), %ecx
        lock btsl $(BH_JWrite), BH_STATE(%ecx)
        pushl   %ecx                        # wbuf: the new buffer
        xorl    %ecx, %ecx                  # tag_flag
        testl   $1, %eax
        jz      2f
        orl     $(JFS_FLAG_ESCAPE), %ecx
2:      cmpl    $0, J_C_FIRST(%ebp)
        jne     3f
        orl     $(JFS_FLAG_SAME_UUID), %ecx
3:      movl    J_C_TAGP(%ebp), %edx        # the tag, big-endian
        movl    BH_BLOCKNR(%ebx), %eax
        bswap   %eax
        movl    %eax, (%edx)
        bswap   %ecx
        movl    %ecx, 4(%edx)
        movl    %edx, J_C_TAG(%ebp)         # the last tag set up
        addl    $(BLOCK_TAG), %edx
        subl    $(BLOCK_TAG), J_C_SPACE(%ebp)
        cmpl    $0, J_C_FIRST(%ebp)
        je      4f
        movl    J_UUID(%ebp), %eax          # memcpy(tagp, j_uuid, 16)
        movl    %eax, (%edx)
        movl    J_UUID+4(%ebp), %eax
        movl    %eax, 4(%edx)
        movl    J_UUID+8(%ebp), %eax
        movl    %eax, 8(%edx)
        movl    J_UUID+12(%ebp), %eax
        movl    %eax, 12(%edx)
        addl    $16, %edx
        subl    $16, J_C_SPACE(%ebp)
        movl    $0, J_C_FIRST(%ebp)
4:      movl    %edx, J_C_TAGP(%ebp)
        call    journal_submit_buffer       # start_journal_io: the new buffer
        addl    $4, %esp
        testl   $2, 28(%esp)                # the last: the end-of-descriptor marker
        jz      5f
        movl    J_C_TAG(%ebp), %edx
        orl     $(JFS_FLAG_LAST_TAG << 24), 4(%edx)
5:      lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state(bh_in): 2.6.12 holds
        preempt_enable %eax
        movl    %esi, %eax                  # it only inside journal_write_metadata_buffer
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journal_submit_buffer(bh): start_journal_io for one buffer: lock_buffer,
 * clear_buffer_dirty, set_buffer_uptodate, b_end_io = journal_end_buffer_io_sync,
 * submit_bh(WRITE, bh) */
        .globl  journal_submit_buffer
journal_submit_buffer:
        movl    4(%esp), %ecx
1:      lock btsl $(BH_Lock), BH_STATE(%ecx)
        jc      9f                          # under I/O: not in a run
        lock btrl $(BH_Dirty), BH_STATE(%ecx)
        lock btsl $(BH_Uptodate), BH_STATE(%ecx)
        leal    journal_end_buffer_io_sync, %eax
        movl    %eax, BH_END_IO(%ecx)
        pushl   %ecx
        pushl   $1
        call    submit_bh
        addl    $8, %esp
        ret
9:      ud2

/* journal_end_buffer_io_sync(bh, uptodate): the log buffers' b_end_io */
        .globl  journal_end_buffer_io_sync
journal_end_buffer_io_sync:
        movl    4(%esp), %eax
        cmpl    $0, 8(%esp)
        je      9f                          # an I/O error: not in a run
        lock btsl $(BH_Uptodate), BH_STATE(%eax)
        lock btrl $(BH_Lock), BH_STATE(%eax)    # unlock_buffer
        pushl   %eax
        call    wake_up_bit
        addl    $4, %esp
        ret
9:      ud2

/* journal_write_metadata_buffer(transaction, jh_in, blocknr) -> eax flags, edx new_jh:
 * a temporary buffer head for the log block, over the frozen copy if there is one, else
 * over the buffer's own data (no copy), unless its first word is the journal's magic
 * number (then a frozen copy, escaped); the original filed BJ_Shadow, the new one BJ_IO.
 * Called with bh_in's state lock held (journal_write_metadata's). */
        .globl  journal_write_metadata_buffer
journal_write_metadata_buffer:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    24(%esp), %esi              # jh_in
        movl    JH_BH(%esi), %ebx           # bh_in
        call    alloc_buffer_head
        movl    %eax, %ebp                  # new_bh
        xorl    %edi, %edi                  # flags: do_escape | done_copy_out << 1
        movl    JH_FROZEN(%esi), %edx       # the data: the frozen copy, or bh_in's
        testl   %edx, %edx
        jz      1f
        orl     $2, %edi
        jmp     2f
1:      movl    BH_DATA(%ebx), %edx
2:      cmpl    $(JFS_MAGIC_BE), (%edx)     # kmap_atomic: the first word
        jne     4f
        orl     $1, %edi                    # need_copy_out, do_escape
        testl   $2, %edi
        jnz     3f
        pushl   size4096_cache              # jbd_rep_kmalloc(b_size): the frozen copy
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, JH_FROZEN(%esi)
        pushl   %esi
        pushl   %edi
        movl    %eax, %edi                  # memcpy(tmp, data, b_size)
        movl    BH_DATA(%ebx), %esi
        movl    BH_SIZE(%ebx), %ecx
        shrl    $2, %ecx
        rep movsl
        popl    %edi
        popl    %esi
        orl     $2, %edi
        movl    JH_FROZEN(%esi), %edx
3:      movl    $0, (%edx)                  # escape: the magic number cleared in the copy
4:      movl    $0, BH_STATE(%ebp)          # new_bh->b_state = 0; init_buffer
        movl    $0, BH_END_IO(%ebp)
        movl    $0, BH_PRIVATE(%ebp)
        movl    $1, BH_COUNT(%ebp)
        movl    %edx, BH_DATA(%ebp)         # set_bh_page: the page and the data
        movl    BH_PAGE(%ebx), %eax         # (the frozen copy's page: its slab's, the
        movl    %eax, BH_PAGE(%ebp)         # original's kept here)
        pushl   %edx
        pushl   %ebp                        # new_jh = journal_add_journal_head(new_bh)
        call    journal_add_journal_head
        addl    $4, %esp
        popl    %edx
        movl    %eax, %edx
        movl    $0, JH_TRANSACTION(%edx)
        movl    BH_SIZE(%ebx), %eax
        movl    %eax, BH_SIZE(%ebp)
        movl    20(%esp), %eax              # transaction->t_journal->j_dev
        movl    T_JOURNAL(%eax), %eax
        movl    J_DEV(%eax), %eax
        movl    %eax, BH_BDEV(%ebp)
        movl    28(%esp), %eax              # blocknr
        movl    %eax, BH_BLOCKNR(%ebp)
        lock btsl $(BH_Mapped), BH_STATE(%ebp)
        lock btsl $(BH_Dirty), BH_STATE(%ebp)
        pushl   %edx
        movl    24(%esp), %eax              # journal_file_buffer(jh_in, BJ_Shadow): bh_in's
        movl    T_JOURNAL(%eax), %eax       # state lock held already
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        pushl   $(BJ_SHADOW)
        pushl   32(%esp)
        pushl   %esi
        call    __journal_file_buffer
        addl    $12, %esp
        call    _spin_unlock
        addl    $4, %esp
        movl    (%esp), %edx
        pushl   $(BJ_IO)                    # journal_file_buffer(new_jh, BJ_IO)
        pushl   28(%esp)
        pushl   %edx
        call    journal_file_buffer
        addl    $12, %esp
        popl    %edx
        movl    %edi, %eax
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* journal_file_buffer(jh, transaction, jlist): under the buffer's state lock and
 * j_list_lock, __journal_file_buffer */
        .globl  journal_file_buffer
journal_file_buffer:
        pushl   %ebx
        movl    8(%esp), %eax
        movl    JH_BH(%eax), %ebx
        pushl   %ebx
        call    jbd_lock_state
        movl    16(%esp), %eax              # transaction->t_journal->j_list_lock
        movl    T_JOURNAL(%eax), %eax
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        pushl   24(%esp)
        pushl   24(%esp)
        pushl   24(%esp)
        call    __journal_file_buffer
        addl    $12, %esp
        call    _spin_unlock
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state
        preempt_enable %ecx
        addl    $4, %esp
        popl    %ebx
        ret

/* journal_unfile_buffer(journal, jh): under the buffer's state lock and j_list_lock,
 * __journal_unfile_buffer */
        .globl  journal_unfile_buffer
journal_unfile_buffer:
        pushl   %ebx
        movl    12(%esp), %eax
        movl    JH_BH(%eax), %ebx
        pushl   %ebx
        call    jbd_lock_state
        movl    12(%esp), %eax
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        pushl   20(%esp)
        call    __journal_unfile_buffer
        addl    $4, %esp
        call    _spin_unlock
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)
        preempt_enable %ecx
        addl    $4, %esp
        popl    %ebx
        ret

/* __journal_unfile_buffer(jh) (fs/jbd/transaction.c 1530-1534 of 2.6.12.1): off its list
 * (a jbddirty buffer marked dirty for the VM: __journal_temp_unlink_buffer), b_transaction
 * = NULL */
        .globl  __journal_unfile_buffer
__journal_unfile_buffer:
        movl    4(%esp), %eax
        pushl   %eax
        call    __journal_temp_unlink_buffer
        popl    %eax
        movl    $0, JH_TRANSACTION(%eax)
        ret

/* __journal_refile_buffer(jh) (fs/jbd/transaction.c 2013-2042 of 2.6.12.1): a buffer no
 * later transaction wants is unfiled (__journal_unfile_buffer); one a later transaction
 * took write access to (b_next_transaction: it has a frozen copy or was past the log)
 * moves to that transaction's t_buffers (BJ_Metadata) with its jbddirty bit kept
 * (test_clear_buffer_jbddirty before the unlink, so that no mark_buffer_dirty runs, and
 * set again after). */
        .globl  __journal_refile_buffer
__journal_refile_buffer:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # jh
        cmpl    $0, JH_NEXT_T(%esi)
        jne     1f
        pushl   %esi                        # no next transaction: just drop it
        call    __journal_unfile_buffer
        addl    $4, %esp
        jmp     3f
1:      movl    JH_BH(%esi), %ebx
        pushl   $0                          # was_dirty = test_clear_buffer_jbddirty(bh)
        lock btrl $(BH_JBDDirty), BH_STATE(%ebx)
        jnc     2f
        movl    $1, (%esp)
2:      pushl   %esi
        call    __journal_temp_unlink_buffer
        addl    $4, %esp
        movl    JH_NEXT_T(%esi), %eax       # b_transaction = b_next_transaction
        movl    %eax, JH_TRANSACTION(%esi)
        movl    $0, JH_NEXT_T(%esi)
        pushl   $(BJ_METADATA)              # __journal_file_buffer(jh, b_transaction,
        pushl   %eax                        # BJ_Metadata)
        pushl   %esi
        call    __journal_file_buffer
        addl    $12, %esp
        popl    %eax
        testl   %eax, %eax
        jz      3f
        lock btsl $(BH_JBDDirty), BH_STATE(%ebx)    # set_buffer_jbddirty(bh)
3:      popl    %esi
        popl    %ebx
        ret

/* jbd_lock_state(bh): jbd_lock_bh_state */
        .globl  jbd_lock_state
jbd_lock_state:
        preempt_disable %eax                # bit_spin_lock (CONFIG_PREEMPT only)
        movl    4(%esp), %eax
1:      lock btsl $(BH_State), BH_STATE(%eax)
        jnc     3f
2:
        .if     CONFIG_PREEMPT              # preempt_enable, cpu_relax, preempt_disable;
        preempt_enable %eax                 # bh loaded again (eax the one register this
        pause                               # function clobbers)
        preempt_disable %eax
        movl    4(%esp), %eax
        .else
        pause
        .endif
        testl   $(1 << BH_State), BH_STATE(%eax)
        jnz     2b
        jmp     1b
3:      ret

/* journal_next_log_block(journal) -> blocknr: j_head, moved on (wrapping at j_last);
 * journal_bmap the identity */
        .globl  journal_next_log_block
journal_next_log_block:
        pushl   %ebx
        movl    8(%esp), %ebx
        leal    J_STATE_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_lock
        movl    J_HEAD(%ebx), %eax
        leal    1(%eax), %ecx
        decl    J_FREE(%ebx)
        cmpl    J_LAST(%ebx), %ecx
        jne     1f
        movl    J_FIRST(%ebx), %ecx
1:      movl    %ecx, J_HEAD(%ebx)
        movl    %eax, %ebx
        call    _spin_unlock
        addl    $4, %esp
        movl    %ebx, %eax
        popl    %ebx
        ret

/* journal_get_descriptor_buffer(journal) -> jh: the next log block's buffer (__getblk:
 * the journal's control buffer, descriptor or commit in turn), locked, zeroed, up to date,
 * unlocked, with a journal_head */
        .globl  journal_get_descriptor_buffer
journal_get_descriptor_buffer:
        pushl   %ebx
        pushl   %edi
        movl    12(%esp), %ebx              # journal
        pushl   %ebx
        call    journal_next_log_block
        addl    $4, %esp
        movl    J_C_CTLNEXT(%ebx), %ecx     # __getblk(j_dev, blocknr, j_blocksize)
        xorl    $1, J_C_CTLNEXT(%ebx)
        movl    J_C_CTL(%ebx,%ecx,4), %edx
        movl    %eax, BH_BLOCKNR(%edx)
        lock incl BH_COUNT(%edx)
        movl    %edx, %ebx
1:      lock btsl $(BH_Lock), BH_STATE(%ebx)    # lock_buffer
        jc      9f
        movl    BH_DATA(%ebx), %edi         # memset(b_data, 0, j_blocksize)
        movl    BH_SIZE(%ebx), %ecx
        shrl    $2, %ecx
        xorl    %eax, %eax
        rep stosl
        lock btsl $(BH_Uptodate), BH_STATE(%ebx)
        lock btrl $(BH_Lock), BH_STATE(%ebx)    # unlock_buffer
        pushl   %ebx
        call    wake_up_bit
        call    journal_add_journal_head
        addl    $4, %esp
        popl    %edi
        popl    %ebx
        ret
9:      ud2

/* journal_commit_written(journal, transaction, jh, flags): phase 4 for the buffer (the
 * temporary buffer unfiled and freed, the original filed BJ_Forget); for the commit's last
 * buffer phase 5 (the descriptor unfiled and released) and phase 6's commit block
 * submitted (journal_write_commit_record: its header written eight times over, as the
 * buglet has it; sync_dirty_buffer's submission, with end_buffer_write_sync) */
        .globl  journal_commit_written
journal_commit_written:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebp              # journal
        movl    24(%esp), %edi              # commit_transaction
        movl    T_IOBUF(%edi), %esi         # jh = t_iobuf_list->b_tprev
        movl    JH_TPREV(%esi), %esi
        movl    JH_BH(%esi), %ebx
        testl   $(1 << BH_Lock), BH_STATE(%ebx)
        jnz     9f                          # still under I/O: the model waited for it
        lock btrl $(BH_JWrite), BH_STATE(%ebx)  # clear_buffer_jwrite
        pushl   %esi
        pushl   %ebp
        call    journal_unfile_buffer
        addl    $4, %esp
        call    journal_put_journal_head
        addl    $4, %esp
        pushl   %ebx                        # __brelse, free_buffer_head
        call    __brelse
        addl    $4, %esp
        pushl   %ebx
        call    free_buffer_head
        addl    $4, %esp
        movl    T_SHADOW(%edi), %esi        # jh = t_shadow_list->b_tprev: the original
        movl    JH_TPREV(%esi), %esi
        cmpl    28(%esp), %esi
        jne     9f
        movl    JH_BH(%esi), %ebx
        lock btrl $(BH_JWrite), BH_STATE(%ebx)
        pushl   $(BJ_FORGET)                # journal_file_buffer(jh, commit_transaction,
        pushl   %edi                        # BJ_Forget): its state lock and j_list_lock
        pushl   %esi
        call    journal_file_buffer
        addl    $12, %esp
        pushl   %ebx                        # wake_up_bit(BH_Unshadow)
        call    wake_up_bit
        call    __brelse
        addl    $4, %esp
        testl   $2, 32(%esp)
        jz      8f
        movl    T_LOG(%edi), %esi           # phase 5: the descriptor
        movl    JH_TPREV(%esi), %esi
        movl    JH_BH(%esi), %ebx
        testl   $(1 << BH_Lock), BH_STATE(%ebx)
        jnz     9f
        lock btrl $(BH_JWrite), BH_STATE(%ebx)
        pushl   %esi
        pushl   %ebp
        call    journal_unfile_buffer
        addl    $4, %esp
        call    journal_put_journal_head
        addl    $4, %esp
        pushl   %ebx
        call    __brelse
        addl    $4, %esp
        pushl   %ebp                        # phase 6: journal_write_commit_record
        call    journal_get_descriptor_buffer
        addl    $4, %esp
        movl    %eax, J_C_COMMIT(%ebp)
        movl    JH_BH(%eax), %ebx
        movl    BH_DATA(%ebx), %edx
        movl    T_TID(%edi), %eax
        bswap   %eax
        movl    BH_SIZE(%ebx), %ecx
1:      movl    $(JFS_MAGIC_BE), (%edx)     # for (i = 0; i < b_size; i += 512): the same
        movl    $(JFS_COMMIT_BLOCK << 24), 4(%edx)  # header each time
        movl    %eax, 8(%edx)
        subl    $512, %ecx
        jg      1b
        lock btsl $(BH_Dirty), BH_STATE(%ebx)   # set_buffer_dirty; sync_dirty_buffer:
        lock btsl $(BH_Lock), BH_STATE(%ebx)    # lock_buffer, test_clear_buffer_dirty,
        jc      9f                              # get_bh, end_buffer_write_sync, submit_bh
        lock btrl $(BH_Dirty), BH_STATE(%ebx)
        lock incl BH_COUNT(%ebx)
        leal    end_buffer_write_sync, %eax
        movl    %eax, BH_END_IO(%ebx)
        pushl   %ebx
        pushl   $1
        call    submit_bh
        addl    $8, %esp
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journal_commit_finish(journal, transaction, jh, flags): the commit block released (its
 * getblk's reference, its journal_head) for the last buffer; then phase 7 for the buffer
 * on t_forget, under its state lock and j_list_lock: its committed copy freed (the frozen
 * one, if any, becomes it), off its old checkpoint list, onto this transaction's (it is
 * jbddirty), refiled (unfiled, or moved to the transaction a writer took it for) */
        .globl  journal_commit_finish
journal_commit_finish:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebp              # journal
        movl    24(%esp), %edi              # commit_transaction
        testl   $2, 32(%esp)
        jz      1f
        movl    J_C_COMMIT(%ebp), %esi      # wait_on_buffer: done; put_bh,
        movl    JH_BH(%esi), %ebx           # journal_put_journal_head
        testl   $(1 << BH_Lock), BH_STATE(%ebx)
        jnz     9f
        lock decl BH_COUNT(%ebx)
        pushl   %esi
        call    journal_put_journal_head
        addl    $4, %esp
1:      movl    T_FORGET(%edi), %esi        # jh = t_forget
        cmpl    28(%esp), %esi
        jne     9f
        movl    JH_BH(%esi), %ebx
        pushl   %ebx                        # jbd_lock_bh_state(bh)
        call    jbd_lock_state
        addl    $4, %esp
        movl    JH_COMMITTED(%esi), %eax    # undo-protected committed data: freed
        testl   %eax, %eax
        jz      2f
        pushl   %eax
        pushl   size4096_cache
        call    kmem_cache_free
        addl    $8, %esp
        movl    JH_FROZEN(%esi), %eax       # the frozen copy becomes the committed one
        movl    %eax, JH_COMMITTED(%esi)
        movl    $0, JH_FROZEN(%esi)
        jmp     3f
2:      movl    JH_FROZEN(%esi), %eax
        testl   %eax, %eax
        jz      3f
        pushl   %eax
        pushl   size4096_cache
        call    kmem_cache_free
        addl    $8, %esp
        movl    $0, JH_FROZEN(%esi)
3:      leal    J_LIST_LOCK(%ebp), %eax
        pushl   %eax
        call    _spin_lock
        movl    JH_CP_T(%esi), %edx         # __journal_remove_checkpoint: __buffer_unlink
        testl   %edx, %edx                  # (the model's transaction, also the committing
        jz      4f                          # one, is never dropped)
        movl    $0, JH_CP_T(%esi)
        movl    JH_CPNEXT(%esi), %eax
        movl    JH_CPPREV(%esi), %ecx
        movl    %ecx, JH_CPPREV(%eax)       # jh->b_cpnext->b_cpprev = jh->b_cpprev
        movl    %eax, JH_CPNEXT(%ecx)       # jh->b_cpprev->b_cpnext = jh->b_cpnext
        cmpl    T_CHECKPOINT(%edx), %esi
        jne     4f
        movl    %eax, T_CHECKPOINT(%edx)
        cmpl    %eax, %esi
        jne     4f
        movl    $0, T_CHECKPOINT(%edx)
4:      testl   $(1 << BH_JBDDirty), BH_STATE(%ebx)
        jz      9f                          # forgotten buffers: not in a run
        movl    %edi, JH_CP_T(%esi)         # __journal_insert_checkpoint(jh, transaction)
        movl    T_CHECKPOINT(%edi), %eax
        testl   %eax, %eax
        jnz     5f
        movl    %esi, JH_CPNEXT(%esi)
        movl    %esi, JH_CPPREV(%esi)
        jmp     6f
5:      movl    %eax, JH_CPNEXT(%esi)
        movl    JH_CPPREV(%eax), %ecx
        movl    %ecx, JH_CPPREV(%esi)
        movl    %esi, JH_CPNEXT(%ecx)
        movl    %esi, JH_CPPREV(%eax)
6:      movl    %esi, T_CHECKPOINT(%edi)
        pushl   %esi                        # refile for checkpoint writeback
        call    __journal_refile_buffer
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state
        preempt_enable %ecx
        call    _spin_unlock
        addl    $4, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journal_commit_end(journal, commit_transaction): phase 8, after the last buffer's phase
 * 7 (fs/jbd/commit.c 802-844 of 2.6.12.1): under j_state_lock and j_list_lock the
 * transaction is T_FINISHED, j_commit_sequence its tid, j_committing_transaction NULL;
 * j_state_lock released, the transaction goes to the tail of j_checkpoint_transactions
 * (its t_checkpoint_list holds the buffers phase 7 put there; one with none would be
 * dropped, __journal_drop_transaction, which no run reaches: each commit logs metadata);
 * then the waiters on j_wait_done_commit are woken. */
        .globl  journal_commit_end
journal_commit_end:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # journal
        movl    16(%esp), %ebx              # commit_transaction
        cmpl    $4, T_STATE(%ebx)           # J_ASSERT(t_state == T_COMMIT)
        jne     9f
        leal    J_STATE_LOCK(%esi), %eax
        pushl   %eax
        call    _spin_lock
        leal    J_LIST_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_lock
        movl    $5, T_STATE(%ebx)           # t_state = T_FINISHED
        cmpl    J_COMMITTING(%esi), %ebx    # J_ASSERT(commit_transaction ==
        jne     9f                          # j_committing_transaction)
        movl    T_TID(%ebx), %eax           # j_commit_sequence = t_tid
        movl    %eax, J_COMMIT_SEQUENCE(%esi)
        movl    $0, J_COMMITTING(%esi)      # j_committing_transaction = NULL
        leal    J_STATE_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_unlock
        cmpl    $0, T_CHECKPOINT(%ebx)      # t_checkpoint_list NULL: dropped (not run)
        je      9f
        movl    J_CHECKPOINT_TRANSACTIONS(%esi), %eax
        testl   %eax, %eax
        jnz     1f
        movl    %ebx, J_CHECKPOINT_TRANSACTIONS(%esi)   # the first: a list of one
        movl    %ebx, T_CPNEXT(%ebx)
        movl    %ebx, T_CPPREV(%ebx)
        jmp     2f
1:      movl    %eax, T_CPNEXT(%ebx)        # t_cpnext = j_checkpoint_transactions
        movl    T_CPPREV(%eax), %ecx        # t_cpprev = t_cpnext->t_cpprev
        movl    %ecx, T_CPPREV(%ebx)
        movl    %ebx, T_CPPREV(%eax)        # t_cpnext->t_cpprev = commit_transaction
        movl    %ebx, T_CPNEXT(%ecx)        # t_cpprev->t_cpnext = commit_transaction
2:      leal    J_LIST_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_unlock
        leal    J_WAIT_DONE_COMMIT(%esi), %eax
        movl    %eax, (%esp)                # wake_up(&journal->j_wait_done_commit)
        call    __wake_up
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* free_buffer_head(bh): back to the slab, bh_accounting.nr - 1 */
        .globl  free_buffer_head
free_buffer_head:
        pushl   4(%esp)
        pushl   bh_cachep
        call    kmem_cache_free
        addl    $8, %esp
        movl    $-8192, %edx
        andl    %esp, %edx
        movl    TI_CPU(%edx), %edx
        movl    __per_cpu_offset(,%edx,4), %edx
        decl    PCPU_BH_NR(%edx)
        ret

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
