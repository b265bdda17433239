/*
 * ext3's part of a write() in ordered mode (the default), after Linux 2.6.12's
 * fs/ext3/inode.c (ext3_prepare_write, ext3_ordered_commit_write, ext3_get_block,
 * ext3_get_block_handle with ext3_get_branch, ext3_find_goal and ext3_splice_branch,
 * ext3_writepage_trans_blocks, ext3_get_inode_loc, ext3_reserve_inode_write,
 * ext3_mark_iloc_dirty with ext3_do_update_inode, ext3_mark_inode_dirty,
 * ext3_dirty_inode), fs/ext3/balloc.c (ext3_new_block, ext3_try_to_allocate with
 * ext3_test_allocatable and claim_block, read_block_bitmap, ext3_get_group_desc) and
 * fs/ext3/super.c (ext3_journal_start_sb, __ext3_journal_stop); written for the book from
 * their algorithms.
 *
 * The file's block i (>= 1036, 4 KB blocks) is reached through the double-indirect block
 * (i_data[13]) and an indirect block; the indirect blocks are taken as allocated already
 * (one per 1024 data blocks: their allocation is left out). Block allocation follows the
 * goal (the block after the last one, as ext3_find_goal has it) without reservation
 * windows (one window search per ~1000 blocks is left out). DQUOT_ALLOC_BLOCK with quotas
 * off is inode_add_bytes and mark_inode_dirty, as include/linux/quotaops.h has it.
 * Offsets: the equates yoshioka2005 ext3model puts in front. Calling convention: cdecl; ebx,
 * esi, edi, ebp preserved.
 *
 * CONFIG_PREEMPT (the equate; spinlock_2612.S): each bit spin lock here (jbd_lock_bh_state,
 * jbd_lock_bh_journal_head, their trylocks) has preempt_disable before its lock btsl, and a
 * failed trylock and each unlock preempt_enable (include/linux/spinlock.h 531-580 of
 * 2.6.12.1); the get_cpu() users and radix_tree_preload theirs (nothing without it).
 */

/* ext3_journal_start_sb(sb, nblocks) -> handle */
        .globl  ext3_journal_start_sb
ext3_journal_start_sb:
        movl    4(%esp), %eax               # sb
        testl   $1, SB_FLAGS(%eax)          # MS_RDONLY
        jnz     9f
        movl    SB_JOURNAL(%eax), %eax
        testl   $1, J_FLAGS(%eax)           # is_journal_aborted
        jnz     9f
        pushl   8(%esp)
        pushl   %eax
        call    journal_start
        addl    $8, %esp
        ret
9:      ud2

/* __ext3_journal_stop(where, handle) */
        .globl  __ext3_journal_stop
__ext3_journal_stop:
        movl    8(%esp), %eax
        movl    H_ERR(%eax), %ecx
        pushl   %eax
        call    journal_stop
        addl    $4, %esp
        ret

/* ext3_writepage_trans_blocks(inode): credits for writing one page, ordered mode:
 * 2 * (blocks per page + indirects) + 2 */
        .globl  ext3_writepage_trans_blocks
ext3_writepage_trans_blocks:
        movl    4(%esp), %eax
        movl    $12, %ecx
        subl    I_BLKBITS(%eax), %ecx       # PAGE_CACHE_SHIFT - blkbits
        movl    $1, %edx
        shll    %cl, %edx                   # bpp = ext3_journal_blocks_per_page: 1
        movl    $3, %eax                    # indirects: 12 % bpp ? 5 : 3
        addl    %edx, %eax
        addl    %eax, %eax
        addl    $2, %eax
        ret

/* ext3_prepare_write(file, page, from, to): a handle for the page's credits, then
 * block_prepare_write with ext3_get_block. */
        .globl  ext3_prepare_write
ext3_prepare_write:
        pushl   %ebx
        movl    12(%esp), %eax              # page
        movl    PG_MAPPING(%eax), %eax
        movl    AS_HOST(%eax), %ebx         # inode
        pushl   %ebx
        call    ext3_writepage_trans_blocks
        movl    I_SB(%ebx), %ecx
        pushl   %eax
        pushl   %ecx
        call    ext3_journal_start_sb
        addl    $12, %esp
        pushl   $(ext3_get_block)
        pushl   24(%esp)                    # to
        pushl   24(%esp)                    # from
        pushl   24(%esp)                    # page
        call    block_prepare_write
        addl    $16, %esp
        popl    %ebx
        ret

/* ext3_ordered_commit_write(file, page, from, to): the page's buffer on the transaction's
 * data list (walk_page_buffers -> ext3_journal_dirty_data), the on-disk size, then
 * generic_commit_write and the end of the handle. */
        .globl  ext3_ordered_commit_write
ext3_ordered_commit_write:
        pushl   %ebx
        pushl   %esi
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        movl    TSK_JOURNAL_INFO(%eax), %ebx    # handle = ext3_journal_current_handle()
        movl    16(%esp), %esi              # page
        pushl   PG_PRIVATE(%esi)            # walk_page_buffers: the page's one buffer
        pushl   %ebx
        call    journal_dirty_data
        addl    $8, %esp
        movl    PG_MAPPING(%esi), %eax
        movl    AS_HOST(%eax), %ecx         # inode
        movl    PG_INDEX(%esi), %eax        # new_i_size = (index << 12) + to
        movl    %eax, %edx
        shll    $12, %eax
        shrl    $20, %edx
        addl    24(%esp), %eax
        adcl    $0, %edx
        cmpl    EI_DISKSIZE + 4(%ecx), %edx     # > i_disksize?
        jb      1f
        ja      2f
        cmpl    EI_DISKSIZE(%ecx), %eax
        jbe     1f
2:      movl    %eax, EI_DISKSIZE(%ecx)
        movl    %edx, EI_DISKSIZE + 4(%ecx)
1:      pushl   24(%esp)                    # generic_commit_write(file, page, from, to)
        pushl   24(%esp)
        pushl   %esi
        pushl   24(%esp)
        call    generic_commit_write
        addl    $16, %esp
        pushl   %ebx                        # ext3_journal_stop(handle)
        pushl   $0
        call    __ext3_journal_stop
        addl    $8, %esp
        xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

/* ext3_get_block(inode, iblock, bh_result, create) */
        .globl  ext3_get_block
ext3_get_block:
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        pushl   $1                          # extend_disksize
        pushl   20(%esp)                    # create
        pushl   20(%esp)                    # bh_result
        pushl   20(%esp)                    # iblock
        pushl   20(%esp)                    # inode
        pushl   TSK_JOURNAL_INFO(%eax)      # handle
        call    ext3_get_block_handle
        addl    $24, %esp
        ret

/* ext3_get_block_handle(handle, inode, iblock, bh_result, create, extend_disksize):
 * the double-indirect chain (two sb_bread), a new block at the goal when the indirect
 * block's slot is empty, spliced in under the truncate semaphore; map the buffer. */
        .globl  ext3_get_block_handle
ext3_get_block_handle:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $12, %esp                   # locals: 0 chain[1].bh, 4 chain[2].bh, 8 nr
        movl    36(%esp), %ebp              # inode
        movl    I_SB(%ebp), %edi            # sb
        movl    40(%esp), %esi              # iblock
        subl    $(DIND_START), %esi         # ext3_block_to_path: depth 3 under i_data[13]
        pushl   SB_BLOCKSIZE(%edi)          # ext3_get_branch: sb_bread of the dind block
        pushl   EI_DIND(%ebp)                # i_data[EXT3_DIND_BLOCK]
        pushl   SB_BDEV(%edi)
        call    __bread
        addl    $12, %esp
        movl    %eax, 0(%esp)
        movl    BH_DATA(%eax), %eax
        movl    %esi, %ecx
        shrl    $10, %ecx
        movl    (%eax,%ecx,4), %eax         # the indirect block's number
        pushl   SB_BLOCKSIZE(%edi)
        pushl   %eax
        pushl   SB_BDEV(%edi)
        call    __bread
        addl    $12, %esp
        movl    %eax, 4(%esp)
        movl    BH_DATA(%eax), %ebx
        andl    $1023, %esi
        leal    (%ebx,%esi,4), %ebx         # chain[2].p: the data block's slot
        movl    (%ebx), %eax
        movl    %eax, 8(%esp)
        testl   %eax, %eax
        jnz     3f                          # mapped already (a rewrite)
        lock decl EI_TRUNCATE_SEM(%ebp)     # down(&ei->truncate_sem)
        js      9f
        movl    40(%esp), %ecx              # ext3_find_goal: after the last block
        movl    EI_LAST_ALLOC_LOGICAL(%ebp), %eax
        incl    %eax
        cmpl    %eax, %ecx
        jne     9f                          # not sequential: ext3_find_near, not in a run
        movl    EI_LAST_ALLOC_PHYSICAL(%ebp), %eax
        incl    %eax                        # goal
        pushl   $0                          # ext3_alloc_branch -> ext3_alloc_block
        pushl   %eax
        pushl   %ebp
        pushl   44(%esp)                    # handle
        call    ext3_new_block
        addl    $16, %esp
        movl    %eax, 8(%esp)               # nr
        pushl   4(%esp)                     # ext3_splice_branch: write access to the
        pushl   36(%esp)                    # indirect block
        call    journal_get_write_access
        addl    $8, %esp
        movl    8(%esp), %eax
        movl    %eax, (%ebx)                # *where->p = where->key
        movl    40(%esp), %ecx
        movl    %ecx, EI_LAST_ALLOC_LOGICAL(%ebp)
        movl    %eax, EI_LAST_ALLOC_PHYSICAL(%ebp)
        movl    xtime, %eax                 # inode->i_ctime = CURRENT_TIME_SEC
        movl    %eax, I_CTIME(%ebp)
        movl    $0, I_CTIME + 4(%ebp)
        pushl   %ebp
        pushl   36(%esp)                    # handle
        call    ext3_mark_inode_dirty
        addl    $8, %esp
        pushl   4(%esp)                     # the indirect block
        pushl   36(%esp)
        call    journal_dirty_metadata
        addl    $8, %esp
        lock incl EI_TRUNCATE_SEM(%ebp)     # up(&ei->truncate_sem)
        jle     9f
        movl    44(%esp), %eax
        lock btsl $(BH_New), BH_STATE(%eax) # set_buffer_new(bh_result)
3:      movl    44(%esp), %eax              # map_bh(bh_result, sb, nr)
        lock btsl $(BH_Mapped), BH_STATE(%eax)
        movl    SB_BDEV(%edi), %ecx
        movl    %ecx, BH_BDEV(%eax)
        movl    8(%esp), %ecx
        movl    %ecx, BH_BLOCKNR(%eax)
        movl    SB_BLOCKSIZE(%edi), %ecx
        movl    %ecx, BH_SIZE(%eax)
        pushl   4(%esp)                     # brelse the chain's buffers
        call    __brelse
        movl    4(%esp), %eax
        movl    %eax, (%esp)
        call    __brelse
        addl    $4, %esp
        xorl    %eax, %eax
        addl    $12, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # sleeping on the semaphore, or a seek

/* ext3_get_group_desc(sb, group, bh_out) -> gdp */
        .globl  ext3_get_group_desc
ext3_get_group_desc:
        movl    4(%esp), %eax               # sb
        movl    8(%esp), %ecx               # group
        movl    SB_GROUP_DESC(%eax), %eax   # sbi->s_group_desc[group >> 7]
        movl    %ecx, %edx
        shrl    $7, %edx
        movl    (%eax,%edx,4), %eax
        movl    12(%esp), %edx
        testl   %edx, %edx
        jz      1f
        movl    %eax, (%edx)
1:      movl    BH_DATA(%eax), %eax
        andl    $127, %ecx
        shll    $5, %ecx
        addl    %ecx, %eax                  # + (group & 127) * sizeof(ext3_group_desc)
        ret

/* read_block_bitmap(sb, group) -> the bitmap's buffer head (sb_bread) */
        .globl  read_block_bitmap
read_block_bitmap:
        pushl   $0
        pushl   12(%esp)
        pushl   12(%esp)
        call    ext3_get_group_desc
        addl    $12, %esp
        movl    4(%esp), %ecx
        pushl   SB_BLOCKSIZE(%ecx)
        pushl   GD_BLOCK_BITMAP(%eax)
        pushl   SB_BDEV(%ecx)
        call    __bread
        addl    $12, %esp
        ret

/* ext3_try_to_allocate(sb, handle, group, bitmap_bh, goal) -> the bit claimed: the goal
 * if it is allocatable (free in the bitmap and in the last commit's copy), else the next
 * one that is; claimed with a locked bit set, under the buffer's journal state lock. */
        .globl  ext3_try_to_allocate
ext3_try_to_allocate:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    28(%esp), %ebx              # bitmap_bh
        movl    32(%esp), %esi              # goal (bit in the group)
        movl    BH_DATA(%ebx), %edi
1:      cmpl    $(BLOCKS_PER_GROUP), %esi
        jae     9f
        btl     %esi, (%edi)                # ext3_test_allocatable: in the bitmap?
        jc      3f
        preempt_disable %eax
2:      lock btsl $(BH_State), BH_STATE(%ebx)   # and in b_committed_data
        jc      2b
        movl    BH_PRIVATE(%ebx), %eax
        movl    JH_COMMITTED(%eax), %eax
        testl   %eax, %eax
        jz      4f
        btl     %esi, (%eax)
        jnc     4f
        lock btrl $(BH_State), BH_STATE(%ebx)
        preempt_enable %eax
3:      incl    %esi                        # find_next_usable_block: the next bit
        jmp     1b
4:      lock btrl $(BH_State), BH_STATE(%ebx)
        preempt_enable %eax
        lock btsl %esi, (%edi)              # claim_block: ext3_set_bit_atomic
        jc      3b                          # another CPU took it
        preempt_disable %eax
5:      lock btsl $(BH_State), BH_STATE(%ebx)
        jc      5b
        movl    BH_PRIVATE(%ebx), %eax
        movl    JH_COMMITTED(%eax), %eax
        testl   %eax, %eax
        jz      6f
        btl     %esi, (%eax)
        jnc     6f
        lock btrl %esi, (%edi)              # set in the last commit: give it back
        lock btrl $(BH_State), BH_STATE(%ebx)
        preempt_enable %eax
        jmp     3b
6:      lock btrl $(BH_State), BH_STATE(%ebx)
        preempt_enable %eax
        movl    %esi, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # the group is full: not in a run

/* ext3_new_block(handle, inode, goal, errp) -> a new block number: quota (inode_add_bytes,
 * mark_inode_dirty), the group's descriptor and bitmap, undo access to the bitmap, the
 * bit, write access to the descriptor, its free count under the group lock, the free
 * blocks counter, both buffers dirty in the journal. */
        .globl  ext3_new_block
ext3_new_block:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $8, %esp                    # 0: gdp_bh, 4: bitmap_bh
        movl    32(%esp), %ebp              # inode
        movl    I_SB(%ebp), %edi            # sb
        pushl   $(PAGE_SIZE)                # DQUOT_ALLOC_BLOCK(inode, 1), quotas off
        pushl   %ebp
        call    inode_add_bytes
        movl    $(I_DIRTY), 4(%esp)         # ... and mark_inode_dirty(inode)
        movl    %ebp, (%esp)
        call    __mark_inode_dirty
        addl    $8, %esp
        movl    SB_FREE_COUNT(%edi), %eax   # ext3_has_free_blocks
        testl   %eax, %eax
        jle     9f
        movl    36(%esp), %esi              # goal
        subl    SB_FIRST_DATA_BLOCK(%edi), %esi
        movl    %esi, %ebx
        shrl    $15, %ebx                   # group_no (32768 blocks a group)
        andl    $(BLOCKS_PER_GROUP - 1), %esi   # the goal's bit
        movl    %esp, %eax
        pushl   %eax                        # &gdp_bh
        pushl   %ebx
        pushl   %edi
        call    ext3_get_group_desc
        addl    $12, %esp
        cmpw    $0, GD_FREE_BLOCKS(%eax)
        je      9f
        pushl   %ebx
        pushl   %edi
        call    read_block_bitmap
        addl    $8, %esp
        movl    %eax, 4(%esp)
        pushl   %eax                        # ext3_journal_get_undo_access(handle, bitmap)
        pushl   32(%esp)
        call    journal_get_undo_access
        addl    $8, %esp
        pushl   %esi                        # ext3_try_to_allocate(sb, handle, group,
        pushl   8(%esp)                     #   bitmap_bh, goal)
        pushl   %ebx
        pushl   40(%esp)
        pushl   %edi
        call    ext3_try_to_allocate
        addl    $20, %esp
        movl    %eax, %esi                  # the bit
        pushl   0(%esp)                     # ext3_journal_get_write_access(gdp_bh)
        pushl   32(%esp)
        call    journal_get_write_access
        addl    $8, %esp
        leal    SB_BGL_LOCK(%edi), %eax     # sb_bgl_lock(sbi, group)
        pushl   %eax
        call    _spin_lock
        pushl   $0
        pushl   %ebx
        pushl   %edi
        call    ext3_get_group_desc
        addl    $12, %esp
        decw    GD_FREE_BLOCKS(%eax)        # gdp->bg_free_blocks_count - 1
        call    _spin_unlock
        addl    $4, %esp
        leal    SB_FREE_LOCK(%edi), %eax    # percpu_counter_mod(&s_freeblocks_counter, -1)
        pushl   $-1
        pushl   %eax
        call    percpu_counter_mod
        addl    $8, %esp
        pushl   4(%esp)                     # ext3_journal_dirty_metadata(bitmap_bh)
        pushl   32(%esp)
        call    journal_dirty_metadata
        addl    $8, %esp
        pushl   0(%esp)                     # ... and the group descriptor's
        pushl   32(%esp)
        call    journal_dirty_metadata
        addl    $8, %esp
        pushl   4(%esp)                     # brelse(bitmap_bh)
        call    __brelse
        addl    $4, %esp
        movl    %ebx, %eax                  # block = bit + group * 32768 + first_data_block
        shll    $15, %eax
        addl    %esi, %eax
        addl    SB_FIRST_DATA_BLOCK(%edi), %eax
        addl    $8, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # no space: not in a run

/* ext3_get_inode_loc(inode, iloc): the inode table block holding the inode (sb_getblk)
 * and the inode's offset in it; iloc = {bh, offset, block_group}. */
        .globl  ext3_get_inode_loc
ext3_get_inode_loc:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # inode
        movl    I_SB(%esi), %edi            # sb
        movl    I_INO(%esi), %eax           # ext3_get_inode_block
        decl    %eax
        xorl    %edx, %edx
        divl    SB_INODES_PER_GROUP(%edi)   # block_group, index in the group
        movl    %eax, %ebx
        shll    $7, %edx                    # * EXT3_INODE_SIZE (128)
        movl    20(%esp), %ecx
        movl    %ebx, 8(%ecx)               # iloc->block_group
        movl    %edx, %eax
        andl    $(PAGE_SIZE - 1), %eax
        movl    %eax, 4(%ecx)               # iloc->offset
        shrl    $12, %edx                   # block in the inode table
        pushl   %edx
        pushl   $0
        pushl   %ebx
        pushl   %edi
        call    ext3_get_group_desc
        addl    $12, %esp
        popl    %edx
        addl    GD_INODE_TABLE(%eax), %edx
        pushl   SB_BLOCKSIZE(%edi)          # sb_getblk(sb, block)
        pushl   %edx
        pushl   SB_BDEV(%edi)
        call    __getblk
        addl    $12, %esp
        testl   $(1 << BH_Uptodate), BH_STATE(%eax)
        jz      9f
        movl    20(%esp), %ecx
        movl    %eax, (%ecx)                # iloc->bh
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # an inode block to read: not in a run

/* ext3_reserve_inode_write(handle, inode, iloc) */
        .globl  ext3_reserve_inode_write
ext3_reserve_inode_write:
        pushl   12(%esp)
        pushl   12(%esp)
        call    ext3_get_inode_loc
        addl    $8, %esp
        movl    12(%esp), %eax
        pushl   (%eax)                      # ext3_journal_get_write_access(handle, iloc->bh)
        pushl   8(%esp)
        call    journal_get_write_access
        addl    $8, %esp
        ret

/* ext3_mark_iloc_dirty(handle, inode, iloc): ext3_do_update_inode: the in-core inode
 * copied into its 128 bytes of the inode table block, the block dirty in the journal. */
        .globl  ext3_mark_iloc_dirty
ext3_mark_iloc_dirty:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    20(%esp), %esi              # inode
        movl    24(%esp), %ecx              # iloc
        movl    (%ecx), %ebx                # bh
        lock incl BH_COUNT(%ebx)            # get_bh
        movl    BH_DATA(%ebx), %edi
        addl    4(%ecx), %edi               # raw_inode
        testl   $(EXT3_STATE_NEW), EI_STATE(%esi)
        jz      1f
        xorl    %eax, %eax                  # a new inode: memset(raw_inode, 0, 128)
        movl    $32, %ecx
        pushl   %edi
        rep stosl
        popl    %edi
1:      movl    I_MODE(%esi), %eax
        movw    %ax, RAW_MODE(%edi)
        movl    I_UID(%esi), %eax
        movw    %ax, RAW_UID(%edi)
        movl    I_GID(%esi), %eax
        movw    %ax, RAW_GID(%edi)
        movl    I_NLINK(%esi), %eax
        movw    %ax, RAW_LINKS(%edi)
        movl    EI_DISKSIZE(%esi), %eax
        movl    %eax, RAW_SIZE(%edi)
        movl    EI_DISKSIZE + 4(%esi), %eax
        movl    %eax, RAW_DIR_ACL(%edi)     # i_size_high
        movl    I_ATIME(%esi), %eax
        movl    %eax, RAW_ATIME(%edi)
        movl    I_CTIME(%esi), %eax
        movl    %eax, RAW_CTIME(%edi)
        movl    I_MTIME(%esi), %eax
        movl    %eax, RAW_MTIME(%edi)
        movl    I_BLOCKS(%esi), %eax
        movl    %eax, RAW_BLOCKS(%edi)
        movl    EI_DTIME(%esi), %eax
        movl    %eax, RAW_DTIME(%edi)
        movl    EI_FLAGS(%esi), %eax
        movl    %eax, RAW_FLAGS(%edi)
        movl    EI_FILE_ACL(%esi), %eax
        movl    %eax, RAW_FILE_ACL(%edi)
        movl    I_GENERATION(%esi), %eax
        movl    %eax, RAW_GENERATION(%edi)
        pushl   %esi                        # i_block[] = ei->i_data[]
        pushl   %edi
        leal    EI_DATA(%esi), %esi
        leal    RAW_BLOCK(%edi), %edi
        movl    $15, %ecx
        rep movsl
        popl    %edi
        popl    %esi
        pushl   %ebx                        # ext3_journal_dirty_metadata(handle, bh)
        pushl   20(%esp)
        call    journal_dirty_metadata
        addl    $8, %esp
        andl    $(0xfffffff7), EI_STATE(%esi)   # ~EXT3_STATE_NEW
        pushl   %ebx                        # brelse(bh)
        call    __brelse
        addl    $4, %esp
        lock decl BH_COUNT(%ebx)            # put_bh
        xorl    %eax, %eax
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* ext3_mark_inode_dirty(handle, inode) */
        .globl  ext3_mark_inode_dirty
ext3_mark_inode_dirty:
        subl    $12, %esp                   # struct ext3_iloc
        movl    %esp, %eax
        pushl   %eax
        pushl   24(%esp)                    # inode
        pushl   24(%esp)                    # handle
        call    ext3_reserve_inode_write
        call    ext3_mark_iloc_dirty
        addl    $24, %esp
        ret

/* ext3_dirty_inode(inode): the super block's dirty_inode: inside a running handle (a
 * nested journal_start), ext3_mark_inode_dirty. */
        .globl  ext3_dirty_inode
ext3_dirty_inode:
        pushl   %ebx
        movl    8(%esp), %eax               # inode
        pushl   $2
        pushl   I_SB(%eax)
        call    ext3_journal_start_sb
        addl    $8, %esp
        movl    %eax, %ebx
        pushl   8(%esp)
        pushl   %ebx
        call    ext3_mark_inode_dirty
        addl    $8, %esp
        pushl   %ebx
        pushl   $0
        call    __ext3_journal_stop
        addl    $8, %esp
        popl    %ebx
        ret
