/*
 * An inode's writeback, Linux 2.6.12, written for the book from the algorithms of 2.6.12.1's
 * sources (the NovantaPhotonics/linux-2.6.12.1 tree, Makefile 2.6.12.1):
 *   fs/fs-writeback.c 243-271 __writeback_single_inode, 153-238 __sync_single_inode,
 *     136-141 write_inode, 693-697 writeback_release (sync_sb_inodes, 303-388, and
 *     writeback_inodes, 409-444, are routines/x86/kupdate_2612.S's);
 *   fs/inode.c 221-231 __iget, 1089-1101 iput, 1272-1279 wake_up_inode;
 *   arch/i386/lib/dec_and_lock.c 13-41 _atomic_dec_and_lock; fs/bad_inode.c 118-121;
 *   fs/ext3/inode.c 2716-2731 ext3_write_inode;
 *   mm/page-writeback.c 553-560 do_writepages (include/linux/mpage.h 24-28
 *     generic_writepages), 741-754 clear_page_dirty_for_io, 809-818 mapping_tagged;
 *   fs/mpage.c 629-750 mpage_writepages;
 *   mm/swap.c 383-389 pagevec_lookup_tag, 255-260 __pagevec_release, 162-172 lru_add_drain,
 *     207-243 release_pages; include/linux/pagevec.h (PAGEVEC_SIZE 14, pagevec_release);
 *   mm/filemap.c 652-667 find_get_pages_tag;
 *   lib/radix-tree.c 558-605 __lookup_tag, 620-642 radix_tree_gang_lookup_tag, 157-160
 *     radix_tree_maxindex (height_to_maxindex, 61 and its __maxindex), 740-751
 *     radix_tree_tagged; kernel/sched.c 3737-3744 cond_resched.
 *
 * Who runs it, and in what batches, in the mail's steady state (four writers of 8000 MB
 * each, far more than memory): mm/page-writeback.c of 2.6.12.1 --
 *   - the writer, in write(): generic_file_buffered_write calls
 *     balance_dirty_pages_ratelimited for each page it dirties (routines/x86/mm_2612.S);
 *     every ratelimit_pages (46, set by set_ratelimit 502-509: total_pages / (CPUs x 32),
 *     at most 4 MB of pages: 1024 pages at 4 GB and 4 CPUs) pages dirtied on its CPU, or
 *     every 8 once dirty_exceeded (274-276), balance_dirty_pages (190-254);
 *   - over the dirty threshold (nr_dirty + nr_unstable + nr_writeback > dirty_thresh,
 *     212), the writer sets dirty_exceeded and writes back itself, on its own CPU:
 *     writeback_inodes with a writeback_control of its queue (.bdi), WB_SYNC_NONE, no
 *     older_than_this and nr_to_write = write_chunk = sync_writeback_pages() = 1.5 x
 *     ratelimit_pages (57-60, 197: 1536 pages); .nonblocking is 0 (202-207), so neither
 *     sync_sb_inodes (335) nor mpage_writepages (646, 728) skips or stops at a congested
 *     queue: the writer's submit_bh sleeps for a free request (get_request_wait) when
 *     the queue is full. It is not pdflush, so writeback_acquire does not stop it (360);
 *     the inode it writes is the oldest-dirtied on s_io not under writeback by another
 *     (__writeback_single_inode 249-252 skips an I_LOCKed one), not necessarily its own
 *     file, and a written inode still dirty goes to the head of s_dirty, re-dated
 *     (213-215): the four files taken in turn. mpage_writepages finishes the pagevec it
 *     holds when nr_to_write reaches 0 (726-727: done only ends the outer loop), so a
 *     chunk is 1536 pages rounded up to whole pagevecs of 14 dirty pages: 1540;
 *   - dirty + writeback stays over the threshold across the chunk (submitting a page
 *     moves it from nr_dirty to nr_writeback: only the disk's completions lower the sum),
 *     so the chunk ends by "done our duty" (230-232: pages_written >= write_chunk), not
 *     by blk_congestion_wait (234, reached only when the writeback wrote less than the
 *     chunk); dirty_exceeded stays set while the sum is over (237-238);
 *   - pdflush: balance_dirty_pages starts background_writeout (253) unless
 *     writeback_in_progress (240: BDI_pdflush, held only while a pdflush writes an inode).
 *     background_writeout (318-350) is .nonblocking: with the writers keeping the queue's
 *     request list full, sync_sb_inodes finds the queue congested and skips the file
 *     system (335-338), and mpage_writepages stops at congestion (646-649, 728-731), so
 *     pdflush sleeps in blk_congestion_wait (345) and, having met congestion, tries again
 *     (346) until the dirty memory is under the background threshold, which the writers
 *     keep it over: it writes back a page only when it finds the queue uncongested.
 *   So the writers write the file pages back, each about as many pages as it dirties (the
 *   disk's rate is the writers' rate), in chunks of 1540 pages through writeback_inodes
 *   on the writer's own CPU, between which it sleeps (in get_request_wait, or in the
 *   pacing's idle); pdflush's share is small and not counted here.
 *
 * Stand-ins: the model's inode->i_sb is EXT3_SB's folded super block (structures.SB), the
 * VFS super block wb_kupdate walks is kupdate's VSB: sync_sb_inodes passes its sb to
 * __writeback_single_inode, __sync_single_inode, write_inode and iput as an argument for
 * inode->i_sb (one push more at each call). get_cpu_var's preempt_disable/put_cpu_var's
 * preempt_enable (CONFIG_PREEMPT only) are left out here (balance_dirty_pages_ratelimited,
 * routines/x86/writeback_2612.S, has them). Paths no run takes
 * are ``ud2``: a data-integrity sync (WB_SYNC_ALL: waits), a range, a page locked by
 * another (__lock_page's sleep), writepage's error, an inode being freed, a last iput
 * (iput_final), a page freed by release_pages, pages waiting in the per-CPU LRU pagevecs
 * (generic_file_buffered_write adds its pages through its own lru_pvec), a reschedule.
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 */
        .equ    WB_SYNC_NONE, 0             # include/linux/writeback.h 25-29
        .equ    WB_SYNC_ALL, 1
        .equ    WB_SYNC_HOLD, 2
        .equ    WBC_NONBLOCKING, 1          # kupdate_2612.S's: the bitfield word's bits
        .equ    WBC_CONGESTION, 2
        .equ    WBC_FOR_KUPDATE, 4
        .equ    BDI_write_congested, 1      # include/linux/backing-dev.h 17-20
        .equ    PAGECACHE_TAG_DIRTY, 0      # include/linux/fs.h
        .equ    PF_MEMALLOC, 0x00000800     # include/linux/sched.h
        .equ    PG_reserved, 11             # include/linux/page-flags.h 67
        .equ    TIF_NEED_RESCHED_MASK, 8    # 1 << TIF_NEED_RESCHED

/* on_task_stack(task, fn, a, b): fn(a, b) on the task's kernel stack (its thread_info, so
 * current is the task): the model's harness, not kernel code, for pdflush's per-page
 * stand-in (writeback_page(mapping, index) on pdflush's stack) and a throttled writer's
 * balance_dirty_pages(mapping) or writeback_inodes(wbc) on the writer's (a one-argument fn
 * leaves b unread) */
        .globl  on_task_stack
on_task_stack:
        pushl   %ebp
        movl    %esp, %ebp
        movl    8(%ebp), %eax               # task
        movl    TSK_ESP0(%eax), %esp        # its kernel stack
        pushl   %ebp                        # the caller's frame
        pushl   20(%ebp)                    # b
        pushl   16(%ebp)                    # a
        call    *12(%ebp)                   # fn
        addl    $8, %esp
        popl    %ebp
        movl    %ebp, %esp
        popl    %ebp
        ret

/* __writeback_single_inode(inode, sb, wbc): an inode another is writing back is moved to
 * s_dirty and skipped (not a data-integrity sync); else __sync_single_inode */
        .globl  __writeback_single_inode
__writeback_single_inode:
        movl    4(%esp), %eax               # inode
        movl    12(%esp), %ecx              # wbc
        cmpl    $(WB_SYNC_ALL), WBC_SYNC_MODE(%ecx)
        je      1f
        testl   $(IS_LOCK), I_STATE(%eax)
        jz      1f
        movl    8(%esp), %edx               # list_move(&inode->i_list, &sb->s_dirty)
        leal    VSB_DIRTY(%edx), %edx
        leal    I_LIST(%eax), %eax
        call    wb_list_move
        xorl    %eax, %eax
        ret
1:      testl   $(IS_LOCK), I_STATE(%eax)   # WB_SYNC_ALL on a locked inode: __wait_on_bit
        jnz     9f
        jmp     __sync_single_inode         # a tail call: the same arguments
9:      ud2

/* __sync_single_inode(inode, sb, wbc): I_LOCK set and I_DIRTY taken, inode_lock dropped
 * around do_writepages (and write_inode if the inode itself was dirty); then the inode's
 * list: still tagged dirty, redirtied (kupdate: at the tail of s_dirty; else re-dated at
 * its head); dirtied again meanwhile, s_dirty; clean and in use, inode_in_use. */
        .globl  __sync_single_inode
__sync_single_inode:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebx              # inode
        movl    28(%esp), %esi              # wbc
        movl    I_MAPPING(%ebx), %edi       # mapping
        movl    I_STATE(%ebx), %eax
        testl   $(IS_LOCK), %eax            # BUG_ON(inode->i_state & I_LOCK)
        jnz     9f
        movl    %eax, %ebp
        andl    $(I_DIRTY), %ebp            # dirty
        orl     $(IS_LOCK), %eax
        andl    $~(I_DIRTY), %eax
        movl    %eax, I_STATE(%ebx)
        leal    inode_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        pushl   %esi
        pushl   %edi
        call    do_writepages
        addl    $8, %esp
        pushl   %eax                        # ret
        testl   $3, %ebp                    # I_DIRTY_SYNC | I_DIRTY_DATASYNC: write_inode
        jz      1f
        xorl    %eax, %eax                  # wait = wbc->sync_mode == WB_SYNC_ALL
        cmpl    $(WB_SYNC_ALL), WBC_SYNC_MODE(%esi)
        sete    %al
        pushl   %eax
        pushl   %ebx
        pushl   36(%esp)                    # sb
        call    write_inode
        addl    $12, %esp
        cmpl    $0, (%esp)                  # if (ret == 0) ret = err
        jne     1f
        movl    %eax, (%esp)
1:      cmpl    $(WB_SYNC_ALL), WBC_SYNC_MODE(%esi)
        je      9f                          # filemap_fdatawait: not in the model
        leal    inode_lock, %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        andl    $~(IS_LOCK), I_STATE(%ebx)
        testl   $(IS_FREEING), I_STATE(%ebx)
        jnz     9f                          # an inode being freed: not in the model
        movl    28(%esp), %edx              # sb
        leal    VSB_DIRTY(%edx), %edx
        testl   $(I_DIRTY), I_STATE(%ebx)
        jnz     4f
        pushl   %edx
        pushl   $(PAGECACHE_TAG_DIRTY)
        pushl   %edi
        call    mapping_tagged
        addl    $8, %esp
        popl    %edx
        testl   %eax, %eax
        jz      5f
        orl     $(IS_DIRTY_PAGES), I_STATE(%ebx)    # pages left dirty: redirty the inode
        leal    I_LIST(%ebx), %eax
        testl   $(WBC_FOR_KUPDATE), WBC_FLAGS(%esi)
        jz      3f
        call    wb_list_move_tail           # kupdate: the tail of s_dirty
        jmp     6f
3:      movl    jiffies, %ecx               # else re-dated, at the head of s_dirty
        movl    %ecx, I_DIRTIED_WHEN(%ebx)
        call    wb_list_move
        jmp     6f
4:      leal    I_LIST(%ebx), %eax          # redirtied meanwhile: s_dirty
        call    wb_list_move
        jmp     6f
5:      cmpl    $0, I_COUNT(%ebx)           # clean: in use (the writers hold it open)
        je      9f                          # unused: not in the model
        leal    I_LIST(%ebx), %eax
        leal    inode_in_use, %edx
        call    wb_list_move
6:      pushl   %ebx
        call    wake_up_inode
        addl    $4, %esp
        popl    %eax                        # ret
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* write_inode(sb, inode, sync): the super block's write_inode unless the inode is bad */
write_inode:
        movl    4(%esp), %eax               # sb (inode->i_sb)
        movl    VSB_OP(%eax), %eax
        movl    SOPS_WRITE_INODE(%eax), %eax
        testl   %eax, %eax
        jz      1f
        pushl   %eax
        pushl   12(%esp)
        call    is_bad_inode
        addl    $4, %esp
        popl    %ecx
        testl   %eax, %eax
        jnz     1f
        pushl   12(%esp)                    # sync
        pushl   12(%esp)                    # inode
        call    *%ecx
        addl    $8, %esp
        ret
1:      xorl    %eax, %eax
        ret

/* is_bad_inode(inode) */
        .globl  is_bad_inode
is_bad_inode:
        movl    4(%esp), %eax
        leal    bad_inode_ops, %ecx
        cmpl    %ecx, I_OP(%eax)
        sete    %al
        movzbl  %al, %eax
        ret

/* ext3_write_inode(inode, wait): not from reclaim, not inside a handle; without wait,
 * nothing to do (the inode's changes are in the running transaction) */
        .globl  ext3_write_inode
ext3_write_inode:
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax         # current
        testl   $(PF_MEMALLOC), TSK_FLAGS(%eax)
        jnz     1f
        cmpl    $0, TSK_JOURNAL_INFO(%eax)  # ext3_journal_current_handle(): -EIO
        jne     9f
        cmpl    $0, 8(%esp)                 # wait: ext3_force_commit, not in the model
        jne     9f
1:      xorl    %eax, %eax
        ret
9:      ud2

/* do_writepages(mapping, wbc): nothing to write, 0; ext3's ordered a_ops have no
 * writepages, so generic_writepages: mpage_writepages(mapping, wbc, NULL) */
        .globl  do_writepages
do_writepages:
        movl    8(%esp), %eax               # wbc
        cmpl    $0, WBC_NR_TO_WRITE(%eax)
        jle     1f
        movl    4(%esp), %ecx
        movl    AS_A_OPS(%ecx), %ecx
        cmpl    $0, AOPS_WRITEPAGES(%ecx)
        jne     9f                          # a file system's writepages: not in the model
        pushl   $0                          # get_block
        pushl   %eax                        # wbc
        pushl   12(%esp)                    # mapping
        call    mpage_writepages
        addl    $12, %esp
        ret
1:      xorl    %eax, %eax
        ret
9:      ud2

/* mpage_writepages(mapping, wbc, get_block = NULL): from mapping->writeback_index, the
 * dirty-tagged pages a pagevec (14) at a time (pagevec_lookup_tag), each locked, skipped
 * if under writeback or clean, else its dirty bit taken (clear_page_dirty_for_io) and
 * a_ops->writepage; done when nr_to_write reaches 0 (the pagevec still finished) or, for
 * a nonblocking caller, when the queue is congested; the pagevec released after each;
 * from index 0 again if the first look-up found nothing (the end of the file reached
 * without a page written); writeback_index left where the walk stopped.
 * Frame: pvec 0-63 (nr, cold, pages[14]), index 64, done 68, scanned 72, ret 76,
 * writepage 80; saved registers 84-99; mapping 104, wbc 108, get_block 112. */
        .globl  mpage_writepages
mpage_writepages:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $84, %esp
        movl    104(%esp), %ebp             # mapping
        movl    108(%esp), %esi             # wbc
        testl   $(WBC_NONBLOCKING), WBC_FLAGS(%esi)
        jz      1f
        movl    AS_BDI(%ebp), %eax          # bdi_write_congested(bdi)
        testl   $(1 << BDI_write_congested), BDI_STATE(%eax)
        jz      1f
        orl     $(WBC_CONGESTION), WBC_FLAGS(%esi)
        xorl    %eax, %eax
        jmp     12f
1:      cmpl    $0, 112(%esp)               # get_block: direct to BIO, not ext3 ordered's
        jne     9f
        movl    AS_A_OPS(%ebp), %eax
        movl    AOPS_WRITEPAGE(%eax), %eax
        movl    %eax, 80(%esp)              # writepage
        movl    $0, 0(%esp)                 # pagevec_init(&pvec, 0)
        movl    $0, 4(%esp)
        movl    $0, 68(%esp)                # done
        movl    $0, 72(%esp)                # scanned
        movl    $0, 76(%esp)                # ret
        cmpl    $(WB_SYNC_NONE), WBC_SYNC_MODE(%esi)
        jne     9f                          # a whole-file sweep: not in the model
        movl    AS_WRITEBACK_INDEX(%ebp), %eax
        movl    %eax, 64(%esp)              # index: from the last walk's end
        movl    WBC_START(%esi), %eax       # wbc->start || wbc->end: a range, not in the
        orl     WBC_START+4(%esi), %eax     # model (end stays -1, is_range 0)
        orl     WBC_END(%esi), %eax
        orl     WBC_END+4(%esi), %eax
        jnz     9f
2:      cmpl    $0, 68(%esp)                # retry: while (!done && index <= end &&
        jne     10f
        movl    64(%esp), %eax              # min(end - index, PAGEVEC_SIZE - 1) + 1
        notl    %eax                        # end - index, end = -1
        cmpl    $(PAGEVEC_SIZE - 1), %eax
        jbe     3f
        movl    $(PAGEVEC_SIZE - 1), %eax
3:      incl    %eax
        pushl   %eax
        pushl   $(PAGECACHE_TAG_DIRTY)
        leal    72(%esp), %eax              # &index
        pushl   %eax
        pushl   %ebp
        leal    16(%esp), %eax              # &pvec
        pushl   %eax
        call    pagevec_lookup_tag
        addl    $20, %esp
        testl   %eax, %eax
        jz      10f
        movl    $1, 72(%esp)                # scanned
        xorl    %edi, %edi                  # i
4:      cmpl    0(%esp), %edi
        jae     8f
        movl    8(%esp,%edi,4), %ebx        # page
        lock btsl $(PG_locked), PG_FLAGS(%ebx)  # lock_page: TestSetPageLocked
        jc      9f                          # locked by another: __lock_page, not in a run
        cmpl    %ebp, PG_MAPPING(%ebx)      # truncated meanwhile
        jne     6f
        testl   $(1 << PG_writeback), PG_FLAGS(%ebx)
        jnz     6f                          # PageWriteback: skipped
        lock btrl $(PG_dirty), PG_FLAGS(%ebx)   # clear_page_dirty_for_io: TestClearPageDirty
        jnc     6f
        movl    AS_BDI(%ebp), %eax          # mapping_cap_account_dirty
        testl   $(BDI_CAP_NO_ACCT_DIRTY), BDI_CAPABILITIES(%eax)
        jnz     5f
        pushl   $-1                         # dec_page_state(nr_dirty)
        pushl   $(PS_NR_DIRTY)
        call    __mod_page_state
        addl    $8, %esp
5:      pushl   %esi                        # (*writepage)(page, wbc)
        pushl   %ebx
        call    *88(%esp)
        addl    $8, %esp
        testl   %eax, %eax
        jnz     9f                          # an error, or WRITEPAGE_ACTIVATE: not in a run
        decl    WBC_NR_TO_WRITE(%esi)       # if (--nr_to_write <= 0) done = 1
        jg      7f
        movl    $1, 68(%esp)
7:      testl   $(WBC_NONBLOCKING), WBC_FLAGS(%esi)
        jz      11f
        movl    AS_BDI(%ebp), %eax
        testl   $(1 << BDI_write_congested), BDI_STATE(%eax)
        jz      11f
        orl     $(WBC_CONGESTION), WBC_FLAGS(%esi)
        movl    $1, 68(%esp)
        jmp     11f
6:      pushl   %ebx                        # unlock_page, continue
        call    unlock_page
        addl    $4, %esp
11:     incl    %edi
        jmp     4b
8:      cmpl    $0, 0(%esp)                 # pagevec_release(&pvec)
        je      13f
        movl    %esp, %eax
        pushl   %eax
        call    __pagevec_release
        addl    $4, %esp
13:     call    cond_resched
        jmp     2b
10:     cmpl    $0, 72(%esp)                # the end reached with nothing done: from 0
        jne     14f
        cmpl    $0, 68(%esp)
        jne     14f
        movl    $1, 72(%esp)
        movl    $0, 64(%esp)
        jmp     2b
14:     movl    64(%esp), %eax              # mapping->writeback_index = index
        movl    %eax, AS_WRITEBACK_INDEX(%ebp)
        movl    76(%esp), %eax              # no bio: writepage submitted each page
12:     addl    $84, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* pagevec_lookup_tag(pvec, mapping, &index, tag, nr_pages) -> pvec->nr */
        .globl  pagevec_lookup_tag
pagevec_lookup_tag:
        pushl   %ebx
        movl    8(%esp), %ebx               # pvec
        leal    8(%ebx), %eax               # pvec->pages
        pushl   %eax
        pushl   28(%esp)                    # nr_pages
        pushl   28(%esp)                    # tag
        pushl   28(%esp)                    # index
        pushl   28(%esp)                    # mapping
        call    find_get_pages_tag
        addl    $20, %esp
        movl    %eax, (%ebx)
        popl    %ebx
        ret

/* find_get_pages_tag(mapping, &index, tag, nr_pages, pages) -> found: under the tree's
 * read lock, the gang look-up, a reference on each page, *index past the last */
        .globl  find_get_pages_tag
find_get_pages_tag:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # mapping
        leal    AS_TREE_LOCK(%ebx), %eax
        pushl   %eax
        call    _read_lock_irq
        addl    $4, %esp
        pushl   20(%esp)                    # tag
        pushl   28(%esp)                    # nr_pages
        movl    24(%esp), %eax              # *index
        pushl   (%eax)
        pushl   40(%esp)                    # pages
        leal    AS_PAGE_TREE(%ebx), %eax
        pushl   %eax
        call    radix_tree_gang_lookup_tag
        addl    $20, %esp
        movl    28(%esp), %edx              # pages
        xorl    %ecx, %ecx
1:      cmpl    %eax, %ecx                  # page_cache_get each
        jae     2f
        movl    (%edx,%ecx,4), %esi
        lock incl PG_COUNT(%esi)
        incl    %ecx
        jmp     1b
2:      testl   %eax, %eax
        jz      3f
        movl    -4(%edx,%eax,4), %ecx       # *index = pages[ret - 1]->index + 1
        movl    PG_INDEX(%ecx), %ecx
        incl    %ecx
        movl    16(%esp), %esi
        movl    %ecx, (%esi)
3:      movl    %eax, %esi
        leal    AS_TREE_LOCK(%ebx), %eax
        pushl   %eax
        call    _read_unlock_irq
        addl    $4, %esp
        movl    %esi, %eax
        popl    %esi
        popl    %ebx
        ret

/* radix_tree_gang_lookup_tag(root, results, first_index, max_items, tag) -> found:
 * __lookup_tag from first_index on until max_items are found, the tree's last index
 * passed, or the index wraps */
        .globl  radix_tree_gang_lookup_tag
radix_tree_gang_lookup_tag:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $4, %esp                    # next_index
        movl    24(%esp), %eax              # root
        movl    RR_HEIGHT(%eax), %eax
        movl    height_to_maxindex(,%eax,4), %ebp   # max_index
        movl    32(%esp), %esi              # cur_index
        xorl    %ebx, %ebx                  # ret
1:      cmpl    36(%esp), %ebx              # while (ret < max_items)
        jae     2f
        cmpl    %ebp, %esi
        ja      2f
        pushl   40(%esp)                    # tag
        leal    4(%esp), %eax
        pushl   %eax                        # &next_index
        movl    44(%esp), %eax              # max_items - ret
        subl    %ebx, %eax
        pushl   %eax
        pushl   %esi                        # cur_index
        movl    44(%esp), %eax              # results + ret
        leal    (%eax,%ebx,4), %eax
        pushl   %eax
        pushl   44(%esp)                    # root
        call    __lookup_tag
        addl    $24, %esp
        addl    %eax, %ebx
        movl    (%esp), %esi                # cur_index = next_index
        testl   %esi, %esi
        jnz     1b
2:      movl    %ebx, %eax
        addl    $4, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* __lookup_tag(root, results, index, max_items, &next_index, tag) -> found: down the tree
 * to the first node slot at or after index with the tag set (index moved to each skipped
 * slot's next boundary); at the bottom, the tagged items from there to the node's end,
 * at most max_items. Registers: ebx height, ecx shift, esi node, edi index, ebp found. */
        .globl  __lookup_tag
__lookup_tag:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %eax              # root
        movl    RR_HEIGHT(%eax), %ebx
        imull   $6, %ebx, %ecx
        subl    $6, %ecx                    # shift = (height - 1) * RADIX_TREE_MAP_SHIFT
        movl    RR_RNODE(%eax), %esi        # slot = root->rnode
        movl    28(%esp), %edi              # index
        xorl    %ebp, %ebp                  # nr_found
        movl    40(%esp), %edx              # tag: tags[tag] at RN_TAGS + 8 x tag
        leal    RN_TAGS(%esi,%edx,8), %edx
1:      testl   %ebx, %ebx                  # while (height > 0)
        jz      8f
        movl    %edi, %eax                  # i = (index >> shift) & RADIX_TREE_MAP_MASK
        shrl    %cl, %eax
        andl    $63, %eax
2:      cmpl    $64, %eax                   # for (; i < RADIX_TREE_MAP_SIZE; i++)
        jae     8f
        btl     %eax, (%edx)                # tag_get(slot, tag, i)
        jc      3f
        pushl   %eax                        # index &= ~((1 << shift) - 1);
        movl    $1, %eax                    # index += 1 << shift
        shll    %cl, %eax
        leal    -1(%eax), %edx
        notl    %edx
        andl    %edx, %edi
        addl    %eax, %edi
        popl    %eax
        movl    40(%esp), %edx              # (the tags' address, edx reused)
        leal    RN_TAGS(%esi,%edx,8), %edx
        testl   %edi, %edi                  # 32-bit wraparound
        jz      8f
        incl    %eax
        jmp     2b
3:      cmpl    $0, RN_SLOTS(%esi,%eax,4)   # BUG_ON(slot->slots[i] == NULL)
        je      9f
        decl    %ebx                        # height--
        jnz     6f
        movl    %edi, %eax                  # the bottom: j = index & RADIX_TREE_MAP_MASK
        andl    $63, %eax
4:      cmpl    $64, %eax
        jae     8f
        incl    %edi                        # index++
        btl     %eax, (%edx)
        jnc     5f
        movl    RN_SLOTS(%esi,%eax,4), %ecx # results[nr_found++] = slot->slots[j]
        testl   %ecx, %ecx                  # BUG_ON(slot->slots[j] == NULL)
        jz      9f
        pushl   %edx
        movl    28(%esp), %edx              # results
        movl    %ecx, (%edx,%ebp,4)
        popl    %edx
        incl    %ebp
        cmpl    32(%esp), %ebp              # nr_found == max_items
        je      8f
5:      incl    %eax
        jmp     4b
6:      subl    $6, %ecx                    # shift -= RADIX_TREE_MAP_SHIFT
        movl    RN_SLOTS(%esi,%eax,4), %esi # slot = slot->slots[i]
        movl    40(%esp), %edx
        leal    RN_TAGS(%esi,%edx,8), %edx
        jmp     1b
8:      movl    36(%esp), %eax              # *next_index = index
        movl    %edi, (%eax)
        movl    %ebp, %eax
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* __pagevec_release(pvec): lru_add_drain, release_pages, pagevec_reinit */
        .globl  __pagevec_release
__pagevec_release:
        pushl   %ebx
        movl    8(%esp), %ebx
        call    lru_add_drain
        pushl   4(%ebx)                     # cold
        pushl   (%ebx)                      # nr
        leal    8(%ebx), %eax
        pushl   %eax                        # pages
        call    release_pages
        addl    $12, %esp
        movl    $0, (%ebx)
        popl    %ebx
        ret

/* lru_add_drain(): this CPU's lru_add_pvecs and lru_add_active_pvecs, empty in a run */
        .globl  lru_add_drain
lru_add_drain:
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %eax
        cmpl    $0, PCPU_LRU_ADD_NR(%eax)
        jne     9f                          # __pagevec_lru_add: not in a run
        cmpl    $0, PCPU_LRU_ADD_ACTIVE_NR(%eax)
        jne     9f
        ret
9:      ud2

/* release_pages(pages, nr, cold): each page's reference dropped (put_page_testzero); a
 * page whose count reaches zero would be taken off the LRU and freed: none in a run, so
 * no zone's lru_lock is taken and pages_to_free stays empty */
        .globl  release_pages
release_pages:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # pages
        xorl    %ecx, %ecx
1:      cmpl    16(%esp), %ecx
        jge     2f
        movl    (%esi,%ecx,4), %ebx
        testl   $(1 << PG_reserved), PG_FLAGS(%ebx)
        jnz     3f
        lock decl PG_COUNT(%ebx)            # put_page_testzero
        jz      9f                          # the last reference: freed, not in a run
3:      incl    %ecx
        jmp     1b
2:      popl    %esi
        popl    %ebx
        ret
9:      ud2

/* mapping_tagged(mapping, tag): radix_tree_tagged under the tree's read lock */
        .globl  mapping_tagged
mapping_tagged:
        pushl   %ebx
        movl    8(%esp), %ebx
        leal    AS_TREE_LOCK(%ebx), %eax    # read_lock_irqsave (kernel/spinlock.c's
        pushfl                              # _read_lock_irqsave, inline here)
        cli
1:      lock subl $1, (%eax)
        jns     2f
        lock incl (%eax)
        jmp     1b
2:      movl    RR_RNODE+AS_PAGE_TREE(%ebx), %ecx   # radix_tree_tagged
        xorl    %edx, %edx
        testl   %ecx, %ecx
        jz      3f
        movl    16(%esp), %eax              # tag
        leal    RN_TAGS(%ecx,%eax,8), %ecx
        cmpl    $0, (%ecx)                  # tags[tag][0], tags[tag][1]
        jne     4f
        cmpl    $0, 4(%ecx)
        je      3f
4:      movl    $1, %edx
3:      lock incl AS_TREE_LOCK(%ebx)        # read_unlock_irqrestore
        popfl
        movl    %edx, %eax
        popl    %ebx
        ret

/* cond_resched(): need_resched() (TIF_NEED_RESCHED) */
        .globl  cond_resched
cond_resched:
        movl    $-8192, %eax
        andl    %esp, %eax
        testl   $(TIF_NEED_RESCHED_MASK), TI_FLAGS(%eax)
        jnz     9f                          # __cond_resched: not in a run
        xorl    %eax, %eax
        ret
9:      ud2

/* __iget(inode): a reference; the first one moves a clean inode to inode_in_use */
        .globl  __iget
__iget:
        movl    4(%esp), %eax
        cmpl    $0, I_COUNT(%eax)
        je      9f                          # an unused inode: not in the model
        lock incl I_COUNT(%eax)
        ret
9:      ud2

/* iput(sb, inode): the super block's put_inode (ext3 has none), then
 * atomic_dec_and_lock(&i_count, &inode_lock): the count above one, a cmpxchg */
        .globl  iput
iput:
        movl    4(%esp), %eax               # sb (inode->i_sb)
        movl    8(%esp), %ecx               # inode
        cmpl    $(IS_CLEAR), I_STATE(%ecx)  # BUG_ON(inode->i_state == I_CLEAR)
        je      9f
        movl    VSB_OP(%eax), %eax
        cmpl    $0, SOPS_PUT_INODE(%eax)
        jne     9f                          # a put_inode: not ext3's
        movl    I_COUNT(%ecx), %eax         # _atomic_dec_and_lock: repeat
1:      leal    -1(%eax), %edx
        testl   %edx, %edx
        jz      9f                          # the last reference: iput_final, not in a run
        lock cmpxchgl %edx, I_COUNT(%ecx)
        jne     1b
        ret
9:      ud2

/* wake_up_inode(inode): smp_mb, wake_up_bit(&inode->i_state, __I_LOCK): the zone's wait
 * table at hash_long(word << 5 | bit), as vfs_2612.S's wake_up_bit hashes a buffer's */
        .globl  wake_up_inode
wake_up_inode:
        mfence                              # smp_mb() (the P4's alternative)
        movl    page_zone_normal, %ecx
        movl    4(%esp), %eax
        addl    $(I_STATE), %eax
        shll    $5, %eax
        orl     $(IS_LOCK_BIT), %eax
        zone_wait_queue
        pushl   %eax
        call    __wake_up_bit
        addl    $4, %esp
        ret

/* list_move(eax = entry, edx = head): unlinked, added after the head; ecx clobbered */
wb_list_move:
        pushl   %ebx
        movl    (%eax), %ecx                # __list_del(entry->prev, entry->next)
        movl    4(%eax), %ebx
        movl    %ebx, 4(%ecx)
        movl    %ecx, (%ebx)
        movl    (%edx), %ecx                # list_add(entry, head)
        movl    %eax, 4(%ecx)
        movl    %ecx, (%eax)
        movl    %edx, 4(%eax)
        movl    %eax, (%edx)
        popl    %ebx
        ret

/* list_move_tail(eax = entry, edx = head): unlinked, added before the head */
wb_list_move_tail:
        pushl   %ebx
        movl    (%eax), %ecx
        movl    4(%eax), %ebx
        movl    %ebx, 4(%ecx)
        movl    %ecx, (%ebx)
        movl    4(%edx), %ecx               # list_add_tail(entry, head)
        movl    %eax, 4(%edx)
        movl    %edx, (%eax)
        movl    %ecx, 4(%eax)
        movl    %eax, (%ecx)
        popl    %ebx
        ret

        .data
        .align  4
height_to_maxindex:                         # lib/radix-tree.c's __maxindex(0..6), shift 6
        .long   0, 63, 4095, 262143, 16777215, 0x3fffffff, 0xffffffff
        .globl  inode_in_use
inode_in_use:                               # fs/inode.c: LIST_HEAD(inode_in_use)
        .long   inode_in_use, inode_in_use
        .globl  bad_inode_ops
bad_inode_ops:                              # fs/bad_inode.c's (its address is all used)
        .long   0
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
