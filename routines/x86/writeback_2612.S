/*
 * Writeback of one page of an ext3 file in ordered mode, Linux 2.6.12, written for the book
 * from the algorithms of mm/page-writeback.c (clear_page_dirty_for_io, test_clear_page_dirty,
 * test_set_page_writeback, test_clear_page_writeback), fs/mpage.c (mpage_writepages: the
 * page found in the mapping, locked, its dirty bit cleared for I/O, a_ops->writepage),
 * fs/ext3/inode.c (ext3_ordered_writepage: the journal handle around the write, bget_one,
 * journal_dirty_data_fn, bput_one), fs/buffer.c (__block_write_full_page: lock the buffer,
 * test_clear_buffer_dirty, mark_buffer_async_write, set_page_writeback, unlock_page,
 * submit_bh; and end_buffer_async_write) and mm/filemap.c (end_page_writeback,
 * wake_up_page).
 *
 * on_task_stack(task, writeback_page, mapping, index) (fs_writeback_2612.S) runs
 * writeback_page on pdflush's own kernel stack (its thread_info, so current is pdflush,
 * whose journal_info the handle goes in);
 * writeback_page(mapping, index) is what pdflush (background_writeout -> writeback_inodes ->
 * __writeback_single_inode -> do_writepages -> mpage_writepages) does to one dirty page;
 * end_buffer_async_write and end_page_writeback are what the disk's interrupt does when
 * its write is done (routines/x86/scsi_2612.S); the request between them is the block
 * layer's (submit_bh, routines/x86/block_2612.S: the bio, joined to the file's request in
 * the disk's queue or a request of its own). writeback_page is a per-page stand-in (the
 * paced runs' before they ran the writers' chunks; ext3model.Kernel(writer_chunks=False)):
 * one radix-tree look-up by index stands for mpage_writepages' tagged gang look-up and
 * pagevec, which, with the inode walk above them, are guest code in
 * routines/x86/fs_writeback_2612.S (run by balance_dirty_pages' throttled path below, and
 * by the paced runs' chunks; that file says who writes back in the mail's run, and in what
 * batches).
 * Returns 1 if the page was written, 0 if it is no longer in the cache or not dirty. A page
 * has one 4 KB buffer (4 KB blocks), inside i_size.
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 *
 * CONFIG_PREEMPT (the equate; spinlock_2612.S): each bit spin lock here (jbd_lock_bh_state,
 * jbd_lock_bh_journal_head, their trylocks) has preempt_disable before its lock btsl, and a
 * failed trylock and each unlock preempt_enable (include/linux/spinlock.h 531-580 of
 * 2.6.12.1); the get_cpu() users and radix_tree_preload theirs (nothing without it).
 */
        .globl  writeback_page
writeback_page:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebp              # mapping
        movl    24(%esp), %edi              # index
        pushl   %edi
        pushl   %ebp
        call    find_get_page               # a reference on the page, or NULL
        addl    $8, %esp
        testl   %eax, %eax
        jz      8f
        movl    %eax, %ebx
        lock btsl $(PG_locked), PG_FLAGS(%ebx)  # lock_page: TestSetPageLocked (uncontended)
        jc      9f
        testl   $(1 << PG_writeback), PG_FLAGS(%ebx)    # PageWriteback: not in a run
        jnz     9f
        lock btrl $(PG_dirty), PG_FLAGS(%ebx)   # clear_page_dirty_for_io: TestClearPageDirty
        jnc     7f                          # clean already: nothing to write
        movl    AS_BDI(%ebp), %eax          # mapping_cap_account_dirty
        testl   $(BDI_CAP_NO_ACCT_DIRTY), BDI_CAPABILITIES(%eax)
        jnz     1f
        pushl   $-1                         # dec_page_state(nr_dirty)
        pushl   $(PS_NR_DIRTY)
        call    __mod_page_state
        addl    $8, %esp
1:      pushl   $0                          # wbc (not looked at)
        pushl   %ebx
        movl    AS_A_OPS(%ebp), %eax
        call    *AOPS_WRITEPAGE(%eax)       # mapping->a_ops->writepage(page, wbc)
        addl    $8, %esp
        lock decl PG_COUNT(%ebx)            # page_cache_release: find_get_page's reference
        movl    $1, %eax
        jmp     6f
7:      pushl   %ebx                        # a clean page: unlock it, drop the reference
        call    unlock_page
        addl    $4, %esp
        lock decl PG_COUNT(%ebx)
8:      xorl    %eax, %eax
6:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # a page or buffer busy: not in a run

/* ext3_ordered_writepage(page, wbc): a handle (ext3_journal_start with
 * ext3_writepage_trans_blocks' credits) around block_write_full_page; the page's buffers
 * held across it (walk_page_buffers: bget_one, bput_one) and, the write started, filed on
 * the running transaction's data list (journal_dirty_data_fn -> ext3_journal_dirty_data:
 * a buffer already on it needs nothing); then ext3_journal_stop. */
        .globl  ext3_ordered_writepage
ext3_ordered_writepage:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %ebx              # page
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        cmpl    $0, TSK_JOURNAL_INFO(%eax)  # ext3_journal_current_handle(): reentered
        jne     9f
        movl    PG_MAPPING(%ebx), %eax
        movl    AS_HOST(%eax), %esi         # inode
        pushl   %esi
        call    ext3_writepage_trans_blocks
        movl    I_SB(%esi), %ecx
        pushl   %eax
        pushl   %ecx
        call    ext3_journal_start_sb       # ext3_journal_start(inode, nblocks)
        addl    $12, %esp
        movl    %eax, %edi                  # handle
        testl   $(1 << PG_private), PG_FLAGS(%ebx)
        jz      9f                          # page_has_buffers: a written page has
        movl    PG_PRIVATE(%ebx), %esi      # page_bufs
        lock incl BH_COUNT(%esi)            # walk_page_buffers(..., bget_one)
        pushl   %ebx
        call    block_write_full_page
        addl    $4, %esp
        testl   $(1 << BH_Mapped), BH_STATE(%esi)   # journal_dirty_data_fn
        jz      1f
        pushl   %esi
        pushl   %edi
        call    journal_dirty_data          # ext3_journal_dirty_data(handle, bh)
        addl    $8, %esp
1:      lock decl BH_COUNT(%esi)            # walk_page_buffers(..., bput_one)
        pushl   %edi
        pushl   $0
        call    __ext3_journal_stop         # ext3_journal_stop(handle)
        addl    $8, %esp
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* block_write_full_page(page) -> __block_write_full_page for a page inside i_size with one
 * mapped buffer: lock the buffer, take its dirty bit, mark it for an asynchronous write;
 * the page under writeback (its tags) and unlocked; then submit_bh(WRITE, bh). */
        .globl  block_write_full_page
block_write_full_page:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebx              # page
        movl    PG_MAPPING(%ebx), %ebp      # mapping
        movl    PG_INDEX(%ebx), %edi        # index
        movl    PG_PRIVATE(%ebx), %esi      # the page's buffer
        lock btsl $(BH_Lock), BH_STATE(%esi)    # lock_buffer: test_set_buffer_locked
        jc      9f
        lock btrl $(BH_Dirty), BH_STATE(%esi)   # test_clear_buffer_dirty
        movl    end_buffer_async_write_address, %eax    # mark_buffer_async_write
        movl    %eax, BH_END_IO(%esi)
        lock btsl $(BH_Async_Write), BH_STATE(%esi)
        leal    AS_TREE_LOCK(%ebp), %eax    # set_page_writeback -> test_set_page_writeback
        pushl   %eax
        call    _write_lock_irq
        lock btsl $(PG_writeback), PG_FLAGS(%ebx)   # TestSetPageWriteback
        jc      9f
        pushl   $1                          # inc_page_state(nr_writeback)
        pushl   $(PS_NR_WRITEBACK)
        call    __mod_page_state
        addl    $8, %esp
        pushl   $1                          # PAGECACHE_TAG_WRITEBACK
        pushl   %edi
        leal    AS_PAGE_TREE(%ebp), %eax
        pushl   %eax
        call    radix_tree_tag_set
        movl    $0, 8(%esp)                 # not PageDirty: the dirty tag cleared (again)
        call    radix_tree_tag_clear
        addl    $12, %esp
        call    _write_unlock_irq
        addl    $4, %esp
        pushl   %ebx
        call    unlock_page
        addl    $4, %esp
        pushl   %esi                        # submit_bh(WRITE, bh)
        pushl   $1
        call    submit_bh
        addl    $8, %esp
        xorl    %eax, %eax
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* __mod_page_state(offset, delta): this CPU's page_states (its per-CPU area), the member at
 * offset moved by delta, interrupts off (mm/page_alloc.c) */
        .globl  __mod_page_state
__mod_page_state:
        pushfl
        cli
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %eax
        addl    8(%esp), %eax               # offset
        movl    12(%esp), %ecx              # delta
        addl    %ecx, PCPU_PAGE_STATE(%eax)
        popfl
        ret

/* __read_page_state(offset) -> the member at offset summed over the online CPUs */
        .globl  __read_page_state
__read_page_state:
        pushl   %ebx
        movl    8(%esp), %edx               # offset
        xorl    %eax, %eax
        xorl    %ecx, %ecx                  # for_each_online_cpu
1:      cmpl    num_online_cpus, %ecx
        jae     2f
        movl    __per_cpu_offset(,%ecx,4), %ebx
        addl    PCPU_PAGE_STATE(%ebx,%edx), %eax
        incl    %ecx
        jmp     1b
2:      popl    %ebx
        ret

/* balance_dirty_pages_ratelimited(mapping) (mm/page-writeback.c): this CPU's count of pages
 * dirtied; every ratelimit_pages (8 while dirty_exceeded) balance_dirty_pages. */
        .globl  balance_dirty_pages_ratelimited
balance_dirty_pages_ratelimited:
        movl    ratelimit_pages, %edx
        cmpl    $0, dirty_exceeded
        je      1f
        movl    $8, %edx
1:      movl    $-8192, %eax                # get_cpu_var(ratelimits)++ >= ratelimit
        andl    %esp, %eax
        .if     CONFIG_PREEMPT              # get_cpu_var: preempt_disable (mm/page-
        incl    TI_PREEMPT(%eax)            # writeback.c 282 of 2.6.12.1)
        .endif
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %eax
        movl    PCPU_RATELIMITS(%eax), %ecx
        incl    PCPU_RATELIMITS(%eax)
        cmpl    %edx, %ecx
        jae     2f
        preempt_enable %ecx                 # put_cpu_var (288)
        ret
2:      movl    $0, PCPU_RATELIMITS(%eax)
        preempt_enable %eax                 # put_cpu_var (284)
        pushl   4(%esp)
        call    balance_dirty_pages
        addl    $4, %esp
        ret

/* get_dirty_limits, inline (gcc inlines the static function at both of balance_dirty_pages'
 * calls): get_writeback_state (nr_dirty, nr_unstable, nr_mapped, nr_writeback summed over
 * the CPUs, into the state at \wbs(%esp)); the dirty and background thresholds from
 * vm_dirty_ratio and dirty_background_ratio of total_pages, the dirty one at most half the
 * unmapped memory; a quarter more for a PF_LESS_THROTTLE or real-time task. Leaves ebx the
 * background threshold, edi the dirty one, esi nr_reclaimable (nr_dirty + nr_unstable),
 * eax nr_reclaimable + nr_writeback. */
        .macro  get_dirty_limits wbs
        xorl    %esi, %esi                  # get_writeback_state
1:      pushl   writeback_state_members(,%esi,4)
        call    __read_page_state
        addl    $4, %esp
        movl    %eax, \wbs(%esp,%esi,4)
        incl    %esi
        cmpl    $4, %esi
        jb      1b
        movl    \wbs+8(%esp), %eax         # unmapped_ratio = 100 - nr_mapped * 100 / total
        imull   $100, %eax, %eax
        xorl    %edx, %edx
        divl    total_pages
        movl    $100, %ecx
        subl    %eax, %ecx
        shrl    $1, %ecx                    # unmapped_ratio / 2
        movl    vm_dirty_ratio, %edi        # dirty_ratio
        cmpl    %ecx, %edi
        jbe     2f
        movl    %ecx, %edi
2:      cmpl    $5, %edi
        jae     3f
        movl    $5, %edi
3:      movl    dirty_background_ratio, %ebx
        cmpl    %edi, %ebx
        jb      4f
        movl    %edi, %ebx
        shrl    $1, %ebx
4:      movl    %ebx, %eax                  # background = ratio * total / 100
        mull    total_pages
        movl    $100, %ecx
        divl    %ecx
        movl    %eax, %ebx
        movl    %edi, %eax                  # dirty = ratio * total / 100
        mull    total_pages
        movl    $100, %ecx
        divl    %ecx
        movl    %eax, %edi
        movl    $-8192, %eax                # current: PF_LESS_THROTTLE or rt_task
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        testl   $(PF_LESS_THROTTLE), TSK_FLAGS(%eax)
        jnz     5f
        cmpl    $(MAX_RT_PRIO), TSK_PRIO(%eax)
        jge     6f
5:      movl    %ebx, %eax                  # a quarter more each
        shrl    $2, %eax
        addl    %eax, %ebx
        movl    %edi, %eax
        shrl    $2, %eax
        addl    %eax, %edi
6:      movl    \wbs(%esp), %eax           # nr_reclaimable = nr_dirty + nr_unstable
        addl    \wbs+4(%esp), %eax
        movl    %eax, %esi
        addl    \wbs+12(%esp), %eax        # + nr_writeback
        .endm

/* balance_dirty_pages(mapping) (mm/page-writeback.c 190-254 of 2.6.12.1): the limits;
 * nr_reclaimable + nr_writeback at most the dirty threshold, dirty_exceeded cleared, and no
 * more if pdflush is working the device (writeback_in_progress); over the background
 * threshold pdflush_operation(background_writeout): not in a run. Over the dirty
 * threshold the writer is throttled: dirty_exceeded set, and with pages to reclaim it
 * writes back write_chunk = sync_writeback_pages() = ratelimit_pages + ratelimit_pages / 2
 * pages itself (writeback_inodes with a writeback_control of its queue, WB_SYNC_NONE,
 * blocking: routines/x86/kupdate_2612.S and fs_writeback_2612.S), the limits again: under
 * the threshold, or write_chunk pages written ("we've done our duty"), it is done;
 * else blk_congestion_wait(WRITE, HZ / 10) and the loop again, not in a run (the writers'
 * sleep is the pacing's idle: Kernel.paced_writes). The wbc is built on the throttled path
 * only (it is read nowhere else). Stack: 8 nr_dirty, 12 nr_unstable, 16 nr_mapped, 20
 * nr_writeback; throttled, 48 bytes below them: the wbc at 0, pages_written 40,
 * write_chunk 44. */
        .globl  balance_dirty_pages
balance_dirty_pages:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        subl    $24, %esp
        get_dirty_limits 8
        cmpl    %edi, %eax                  # <= dirty_thresh: no throttling
        ja      10f
        movl    $0, dirty_exceeded
7:      movl    40(%esp), %eax              # mapping->backing_dev_info
        movl    AS_BDI(%eax), %eax
        testl   $(1 << BDI_pdflush), BDI_STATE(%eax)    # writeback_in_progress(bdi)
        jnz     8f
        cmpl    %ebx, %esi                  # over the background threshold: pdflush_operation
        ja      9f                          # (background_writeout): not in a run
8:      addl    $24, %esp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2
10:     subl    $48, %esp                   # throttled
        movl    ratelimit_pages, %eax       # write_chunk = sync_writeback_pages()
        movl    %eax, %ecx
        shrl    $31, %ecx                   # ratelimit_pages / 2, a signed long's
        addl    %eax, %ecx
        sarl    $1, %ecx
        addl    %eax, %ecx
        movl    %ecx, 44(%esp)
        movl    $0, 40(%esp)                # pages_written
        movl    $1, dirty_exceeded
        testl   %esi, %esi                  # nothing to reclaim: blk_congestion_wait
        jz      9b
        movl    88(%esp), %eax              # the wbc: .bdi = mapping->backing_dev_info,
        movl    AS_BDI(%eax), %eax          # WB_SYNC_NONE, no older_than_this,
        movl    %eax, WBC_BDI(%esp)         # .nr_to_write = write_chunk, the rest 0
        movl    $0, WBC_SYNC_MODE(%esp)
        movl    $0, WBC_OLDER_THAN_THIS(%esp)
        movl    %ecx, WBC_NR_TO_WRITE(%esp)
        movl    $0, WBC_PAGES_SKIPPED(%esp)
        movl    $0, WBC_START(%esp)
        movl    $0, WBC_START+4(%esp)
        movl    $0, WBC_END(%esp)
        movl    $0, WBC_END+4(%esp)
        movl    $0, WBC_FLAGS(%esp)         # not nonblocking
        pushl   %esp
        call    writeback_inodes
        addl    $4, %esp
        get_dirty_limits 56
        cmpl    %edi, %eax                  # under the threshold now: done
        jbe     11f
        movl    44(%esp), %ecx              # pages_written += write_chunk - nr_to_write
        subl    WBC_NR_TO_WRITE(%esp), %ecx
        addl    %ecx, 40(%esp)
        movl    44(%esp), %ecx
        cmpl    %ecx, 40(%esp)              # >= write_chunk: our duty done
        jb      9b                          # else blk_congestion_wait: not in a run
11:     addl    $48, %esp
        cmpl    %edi, %eax                  # if (nr_reclaimable + nr_writeback <= dirty)
        ja      7b
        movl    $0, dirty_exceeded
        jmp     7b

/* end_buffer_async_write(bh, uptodate): the buffer up to date, its async-write bit cleared
 * and the buffer unlocked under page_uptodate_lock; no other buffer of the page being
 * written, end_page_writeback. */
        .globl  end_buffer_async_write
end_buffer_async_write:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # bh
        btl     $(BH_Async_Write), BH_STATE(%ebx)
        jnc     9f                          # BUG_ON(!buffer_async_write(bh))
        movl    BH_PAGE(%ebx), %esi         # page
        lock btsl $(BH_Uptodate), BH_STATE(%ebx)    # set_buffer_uptodate
        leal    page_uptodate_lock, %ecx
        pushl   %ecx
        call    _spin_lock_irqsave
        movl    %eax, (%esp)                # the flags, for the restore
        leal    page_uptodate_lock, %ecx
        pushl   %ecx
        lock btrl $(BH_Async_Write), BH_STATE(%ebx) # clear_buffer_async_write
        lock btrl $(BH_Lock), BH_STATE(%ebx)        # unlock_buffer: clear_buffer_locked,
        pushl   %ebx                                # then wake_up_bit(&bh->b_state, BH_Lock)
        call    wake_up_bit
        addl    $4, %esp
        movl    BH_THIS_PAGE(%ebx), %eax    # the page's other buffers: none (one a page)
        cmpl    %ebx, %eax
        jne     9f
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        pushl   %esi
        call    end_page_writeback
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* end_page_writeback(page): PG_reclaim not set (the page was not written for reclaim):
 * test_clear_page_writeback under the tree lock (the writeback tag cleared), then
 * wake_up_page(page, PG_writeback): the page's queue in the zone's wait table. */
        .globl  end_page_writeback
end_page_writeback:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # page
        lock btrl $(PG_reclaim), PG_FLAGS(%ebx)     # TestClearPageReclaim
        jc      9f                          # rotate_reclaimable_page: not in a run
        movl    PG_MAPPING(%ebx), %esi
        leal    AS_TREE_LOCK(%esi), %eax
        pushl   %eax
        call    _write_lock_irq
        lock btrl $(PG_writeback), PG_FLAGS(%ebx)   # TestClearPageWriteback
        jnc     9f                          # BUG()
        pushl   $-1                         # dec_page_state(nr_writeback)
        pushl   $(PS_NR_WRITEBACK)
        call    __mod_page_state
        addl    $8, %esp
        pushl   $1                          # PAGECACHE_TAG_WRITEBACK
        pushl   PG_INDEX(%ebx)
        leal    AS_PAGE_TREE(%esi), %eax
        pushl   %eax
        call    radix_tree_tag_clear
        addl    $12, %esp
        call    _write_unlock_irq
        addl    $4, %esp
        movl    page_zone_highmem, %ecx     # wake_up_page: page_waitqueue(page), as
        movl    %ebx, %eax                  # unlock_page hashes it
        zone_wait_queue
        pushl   %eax
        call    __wake_up_bit
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

        .data
        .align  4
        .globl  writeback_state_members
writeback_state_members:                    # get_writeback_state's reads, in its order
        .long   0, 8, 16, 4                 # nr_dirty, nr_unstable, nr_mapped, nr_writeback
        .globl  ratelimit_pages
ratelimit_pages:
        .long   1024                        # set_ratelimit: total_pages / (CPUs x 32), at
                                            # most 4 MB of pages (1024): set by the Kernel
        .globl  dirty_exceeded
dirty_exceeded:
        .long   0
        .globl  total_pages
total_pages:
        .long   0                           # set by the Kernel
        .globl  num_online_cpus
num_online_cpus:
        .long   1                           # set by the Kernel
vm_dirty_ratio:
        .long   40                          # mm/page-writeback.c
dirty_background_ratio:
        .long   10
        .globl  block_dump
block_dump:
        .long   0                           # mm/page-writeback.c 88: off unless set by sysctl
        .globl  page_uptodate_lock
page_uptodate_lock:
        .long   1                           # fs/buffer.c's spinlock, free
end_buffer_async_write_address:
        .long   end_buffer_async_write      # the function's address, as a word
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
