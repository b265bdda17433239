/*
 * kjournald's commit of ordered data, Linux 2.6.12, written for the book from the algorithms
 * of fs/jbd/commit.c (journal_commit_transaction: phase 2, the write_out_data loop over
 * t_sync_datalist, and inverted_lock), fs/jbd/journal.c (journal_remove_journal_head,
 * journal_brelse_array), fs/jbd/transaction.c (__journal_unfile_buffer) and fs/buffer.c
 * (ll_rw_block, end_buffer_write_sync).
 *
 * journal_commit_transaction(journal, transaction, nr) runs nr turns of the data loop: each
 * turn takes the buffer at the head of the transaction's data list and moves the head on
 * (t_sync_datalist = jh->b_tnext); a buffer still dirty (writeback has not reached it) is
 * taken for ll_rw_block(WRITE) and stays on the list, to be unfiled when the loop comes
 * round to it again; a clean one (pdflush wrote it) comes off the list and loses its
 * journal_head (journal_remove_journal_head, put_bh). The buffers taken are written
 * together at the end, as the loop does when it leaves (bufs < j_wbufsize).
 * kjournald runs its commit every j_commit_interval (5 s); the book runs its data loop a
 * turn at a time in the pauses between writes (emu.papers.yoshioka2005.ext3model), one turn
 * per page written, as many as the commits make over a run. The rest of the commit (the
 * metadata buffers' log writes, descriptor and commit blocks, the checkpoint lists: some two
 * hundred buffers per commit against the tens of thousands of data buffers) is
 * routines/x86/commit_meta_2612.S, with the lock-down that makes the transaction the
 * committing one (journal_lock_down).
 * submit_bh is the block layer's (routines/x86/block_2612.S).
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 *
 * CONFIG_PREEMPT (the equate; spinlock_2612.S): each bit spin lock here (jbd_lock_bh_state,
 * jbd_lock_bh_journal_head, their trylocks) has preempt_disable before its lock btsl, and a
 * failed trylock and each unlock preempt_enable (include/linux/spinlock.h 531-580 of
 * 2.6.12.1); the get_cpu() users and radix_tree_preload theirs (nothing without it).
 */
        .globl  journal_commit_transaction
journal_commit_transaction:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebp              # journal
        movl    24(%esp), %edi              # commit_transaction
        pushl   $0                          # bufs
        leal    J_LIST_LOCK(%ebp), %eax     # write_out_data: spin_lock(&j_list_lock)
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
1:      cmpl    $0, 32(%esp)                # nr turns left
        je      6f
        decl    32(%esp)
        movl    T_SYNC_DATA(%edi), %esi     # jh = t_sync_datalist
        testl   %esi, %esi
        jz      6f                          # the list is empty
        movl    JH_TNEXT(%esi), %eax        # t_sync_datalist = jh->b_tnext
        movl    %eax, T_SYNC_DATA(%edi)
        movl    JH_BH(%esi), %ebx           # bh = jh2bh(jh)
        testl   $(1 << BH_Lock), BH_STATE(%ebx)
        jnz     9f                          # buffer_locked: under I/O, not in a run
        testl   $(1 << BH_Dirty), BH_STATE(%ebx)
        jz      3f
        lock incl BH_COUNT(%ebx)            # dirty: get_bh(bh), wbuf[bufs++] = bh
        movl    J_WBUF(%ebp), %eax
        movl    (%esp), %ecx
        movl    %ebx, (%eax,%ecx,4)
        incl    %ecx
        movl    %ecx, (%esp)
        cmpl    J_WBUFSIZE(%ebp), %ecx
        jae     9f                          # a full wbuf: more than a run's turns
        jmp     1b
3:
        preempt_disable %eax
        lock btsl $(BH_State), BH_STATE(%ebx)   # clean: inverted_lock, jbd_trylock_bh_state
        jc      9f                          # lost: unlock, schedule (not in a run)
        pushl   %esi                        # __journal_unfile_buffer(jh)
        call    __journal_temp_unlink_buffer
        addl    $4, %esp
        movl    $0, JH_TRANSACTION(%esi)
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state
        preempt_enable %eax
        pushl   %ebx
        call    journal_remove_journal_head
        addl    $4, %esp
        lock decl BH_COUNT(%ebx)            # put_bh(bh): the journal_head's reference
        jmp     1b                          # lock_need_resched: no other task wants it
6:      leal    J_LIST_LOCK(%ebp), %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        popl    %esi                        # bufs
        testl   %esi, %esi
        jz      8f
        pushl   J_WBUF(%ebp)                # ll_rw_block(WRITE, bufs, wbuf)
        pushl   %esi
        pushl   $1
        call    ll_rw_block
        addl    $12, %esp
        pushl   %esi                        # journal_brelse_array(wbuf, bufs)
        pushl   J_WBUF(%ebp)
        call    journal_brelse_array
        addl    $8, %esp
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* journal_remove_journal_head(bh) (fs/jbd/journal.c 1795-1851 of 2.6.12.1): under the bh's
 * journal-head bit lock, get_bh; a journal_head no transaction holds and no one references
 * leaves the buffer and goes back to the slab (the links cleared, clear_buffer_jbd,
 * __brelse, journal_free_journal_head). Either way the caller must __brelse once. */
        .globl  journal_remove_journal_head
journal_remove_journal_head:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # bh
        preempt_disable %eax
1:      lock btsl $(BH_JournalHead), BH_STATE(%ebx)     # jbd_lock_bh_journal_head
        jnc     3f
2:
        preempt_enable %eax
        pause                               # cpu_relax()
        preempt_disable %eax
        testl   $(1 << BH_JournalHead), BH_STATE(%ebx)
        jnz     2b
        jmp     1b
3:      movl    BH_PRIVATE(%ebx), %esi      # jh = bh2jh(bh)
        lock incl BH_COUNT(%ebx)            # get_bh(bh)
        cmpl    $0, JH_JCOUNT(%esi)
        jne     4f                          # referenced: the journal_head stays
        movl    JH_TRANSACTION(%esi), %eax
        orl     JH_NEXT_T(%esi), %eax
        orl     JH_CP_T(%esi), %eax
        jnz     4f
        cmpl    $0, JH_FROZEN(%esi)         # no frozen or committed copy to free
        jne     9f
        cmpl    $0, JH_COMMITTED(%esi)
        jne     9f
        movl    $0, BH_PRIVATE(%ebx)        # bh->b_private = NULL
        movl    $0, JH_BH(%esi)             # jh->b_bh = NULL
        lock btrl $(BH_JBD), BH_STATE(%ebx) # clear_buffer_jbd
        lock decl BH_COUNT(%ebx)            # __brelse(bh)
        pushl   %esi                        # journal_free_journal_head(jh)
        pushl   journal_head_cache
        call    kmem_cache_free
        addl    $8, %esp
        jmp     5f
4:                                          # kept: get_bh's reference stays, for
5:      lock btrl $(BH_JournalHead), BH_STATE(%ebx)     # the caller's __brelse; unlock
        preempt_enable %eax
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* ll_rw_block(rw, nr, bhs): WRITE only: each buffer not locked already is locked, gets a
 * reference and end_buffer_write_sync as its b_end_io, and goes to submit_bh if it was
 * dirty (test_clear_buffer_dirty); else it is unlocked and released. */
        .globl  ll_rw_block
ll_rw_block:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        cmpl    $1, 16(%esp)                # rw == WRITE
        jne     9f
        movl    20(%esp), %edi              # nr
        movl    24(%esp), %esi              # bhs
1:      testl   %edi, %edi
        jz      8f
        movl    (%esi), %ebx                # bh
        addl    $4, %esi
        decl    %edi
        lock btsl $(BH_Lock), BH_STATE(%ebx)    # test_set_buffer_locked
        jc      1b
        lock incl BH_COUNT(%ebx)            # get_bh
        leal    end_buffer_write_sync, %eax # bh->b_end_io = end_buffer_write_sync
        movl    %eax, BH_END_IO(%ebx)
        lock btrl $(BH_Dirty), BH_STATE(%ebx)   # test_clear_buffer_dirty
        jnc     2f
        pushl   %ebx
        pushl   $1
        call    submit_bh
        addl    $8, %esp
        jmp     1b
2:      lock btrl $(BH_Lock), BH_STATE(%ebx)    # clean meanwhile: unlock_buffer, put_bh
        pushl   %ebx
        call    wake_up_bit
        addl    $4, %esp
        lock decl BH_COUNT(%ebx)
        jmp     1b
8:      popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* end_buffer_write_sync(bh, uptodate): up to date, unlocked (waking its waiters), released */
        .globl  end_buffer_write_sync
end_buffer_write_sync:
        pushl   %ebx
        movl    8(%esp), %ebx               # bh
        cmpl    $0, 12(%esp)
        je      9f                          # an I/O error: not in a run
        lock btsl $(BH_Uptodate), BH_STATE(%ebx)    # set_buffer_uptodate
        lock btrl $(BH_Lock), BH_STATE(%ebx)        # unlock_buffer
        pushl   %ebx
        call    wake_up_bit
        addl    $4, %esp
        lock decl BH_COUNT(%ebx)            # put_bh
        popl    %ebx
        ret
9:      ud2

/* journal_brelse_array(b, n): __brelse of each */
        .globl  journal_brelse_array
journal_brelse_array:
        movl    4(%esp), %edx               # b
        movl    8(%esp), %ecx               # n
1:      testl   %ecx, %ecx
        jz      2f
        movl    (%edx), %eax
        lock decl BH_COUNT(%eax)
        addl    $4, %edx
        decl    %ecx
        jmp     1b
2:      ret

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
