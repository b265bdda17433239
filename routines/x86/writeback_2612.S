/*
 * Writeback of one page of an ext3 file in ordered mode, Linux 2.6.12, written for the book
 * from the algorithms of mm/page-writeback.c (clear_page_dirty_for_io, test_clear_page_dirty,
 * test_set_page_writeback, test_clear_page_writeback), fs/mpage.c (mpage_writepages: the
 * page found in the mapping, locked, its dirty bit cleared for I/O), fs/buffer.c
 * (__block_write_full_page: lock the buffer, test_clear_buffer_dirty,
 * mark_buffer_async_write, set_page_writeback, unlock_page, submit_bh; and
 * end_buffer_async_write) and mm/filemap.c (end_page_writeback, wake_up_page).
 *
 * writeback_page(mapping, index) is what pdflush (background_writeout -> writeback_inodes ->
 * __writeback_single_inode -> do_writepages) does to one dirty page, and what the disk's
 * interrupt does when its write is done, run back to back: the request between them (bio,
 * generic_make_request, the elevator, the SCSI driver) is left out, and so are
 * mpage_writepages' tagged gang look-up (one radix-tree look-up by index stands for it) and
 * ext3_ordered_writepage's handle around block_write_full_page (journal_start,
 * journal_dirty_data on a buffer already on the running transaction's list, journal_stop:
 * they need pdflush's own task and stack). Returns 1 if the page was written, 0 if it is no
 * longer in the cache or not dirty. A page has one 4 KB buffer (4 KB blocks).
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model.py puts in front.
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
        leal    AS_TREE_LOCK(%ebp), %eax    # clear_page_dirty_for_io -> test_clear_page_dirty
        pushl   %eax
        call    _write_lock_irq
        lock btrl $(PG_dirty), PG_FLAGS(%ebx)   # TestClearPageDirty
        jnc     7f                          # clean already: nothing to write
        pushl   $0                          # PAGECACHE_TAG_DIRTY
        pushl   %edi
        leal    AS_PAGE_TREE(%ebp), %eax
        pushl   %eax
        call    radix_tree_tag_clear
        addl    $12, %esp
        call    _write_unlock_irq
        addl    $4, %esp
        movl    PG_PRIVATE(%ebx), %esi      # __block_write_full_page: the page's buffer
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
        /* submit_bh(WRITE, bh): the block layer and the disk are not modelled; the disk's
         * interrupt, when the write is done, calls the buffer's b_end_io */
        pushl   $1                          # uptodate
        pushl   %esi
        call    *BH_END_IO(%esi)
        addl    $8, %esp
        lock decl PG_COUNT(%ebx)            # page_cache_release: find_get_page's reference
        movl    $1, %eax
        jmp     6f
7:      call    _write_unlock_irq           # a clean page: unlock it, drop the reference
        addl    $4, %esp
        pushl   %ebx
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
        imull   $0x9e370001, %eax, %eax     # hash_long: GOLDEN_RATIO_PRIME_32
        pushl   %ecx
        movl    $32, %edx
        subl    ZONE_WAIT_BITS(%ecx), %edx
        movl    %edx, %ecx
        shrl    %cl, %eax
        popl    %ecx
        imull   $(WAIT_QUEUE_HEAD), %eax, %eax
        addl    ZONE_WAIT_TABLE(%ecx), %eax
        pushl   %eax
        call    __wake_up_bit
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

        .data
        .align  4
        .globl  page_uptodate_lock
page_uptodate_lock:
        .long   1                           # fs/buffer.c's spinlock, free
end_buffer_async_write_address:
        .long   end_buffer_async_write      # the function's address, as a word
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
