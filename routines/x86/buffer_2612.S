/*
 * Buffer heads as ext3's write path uses them, after fs/buffer.c of Linux 2.6.12, written
 * for the book from its algorithms: __find_get_block (the per-CPU LRU of eight buffer heads,
 * lookup_bh_lru, then __find_get_block_slow), __getblk, __brelse, alloc_buffer_head and
 * create_empty_buffers, __block_prepare_write / block_prepare_write (a page of one 4 KB
 * block, written whole), unmap_underlying_metadata, mark_buffer_dirty and
 * generic_commit_write / __block_commit_write.
 *
 * __getblk_slow stands in for 2.6.12's (find_get_page in the block device's cache, the
 * page's buffers, grow_buffers): the metadata blocks a run uses are all cached, so it
 * finds the block's buffer head in the block device's table of them (BDEV_META) and
 * installs it in the LRU, as bh_lru_install does.
 * Offsets: the equates yoshioka2005 ext3model puts in front. Calling convention: cdecl (the
 * kernel's fastcall functions too); ebx, esi, edi, ebp preserved.
 */

/* __find_get_block(bdev, block, size) -> bh with a reference, or NULL */
        .globl  __find_get_block
__find_get_block:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    $-8192, %eax                # lookup_bh_lru: this CPU's bh_lrus
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %esi
        leal    PCPU_BH_LRU(%esi), %esi     # lru->bhs
        movl    16(%esp), %ecx              # bdev
        movl    20(%esp), %edx              # block
        xorl    %edi, %edi                  # i
1:      movl    (%esi,%edi,4), %ebx
        testl   %ebx, %ebx
        jz      2f
        cmpl    BH_BDEV(%ebx), %ecx
        jne     2f
        cmpl    BH_BLOCKNR(%ebx), %edx
        jne     2f
        movl    24(%esp), %eax
        cmpl    BH_SIZE(%ebx), %eax
        je      3f
2:      incl    %edi
        cmpl    $(BH_LRU_SIZE), %edi
        jb      1b
        pushl   %edx                        # not in the LRU: the block device's cache
        pushl   %ecx
        call    __find_get_block_slow
        addl    $8, %esp
        movl    %eax, %ebx
        testl   %eax, %eax
        jz      6f
        jmp     5f
3:      testl   %edi, %edi                  # found at i: move it to the front
        jz      4f
        movl    -4(%esi,%edi,4), %eax
        movl    %eax, (%esi,%edi,4)
        decl    %edi
        jmp     3b
4:      movl    %ebx, (%esi)
        lock incl BH_COUNT(%ebx)            # get_bh(bh)
5:      pushl   BH_PAGE(%ebx)               # touch_buffer(bh)
        call    mark_page_accessed
        addl    $4, %esp
        movl    %ebx, %eax
6:      popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* __find_get_block_slow(bdev, block) -> bh or NULL: the block's page in the block device's
 * own page cache (find_get_page); a run looks up only data blocks here
 * (unmap_underlying_metadata), which that cache does not hold. */
        .globl  __find_get_block_slow
__find_get_block_slow:
        movl    4(%esp), %eax               # bdev
        movl    BDEV_MAPPING(%eax), %eax    # bd_inode->i_mapping
        pushl   8(%esp)                     # index = block (4 KB blocks, 4 KB pages)
        pushl   %eax
        call    find_get_page
        addl    $8, %esp
        testl   %eax, %eax
        jnz     9f
        ret
9:      ud2                                 # a cached data block: not in a run

/* __getblk(bdev, block, size) -> bh with a reference */
        .globl  __getblk
__getblk:
        pushl   12(%esp)
        pushl   12(%esp)
        pushl   12(%esp)
        call    __find_get_block
        addl    $12, %esp
        testl   %eax, %eax
        jnz     1f
        jmp     __getblk_slow               # tail call with the same arguments
1:      ret

/* __getblk_slow(bdev, block, size): the block's buffer head from the table of cached
 * metadata, installed at the front of this CPU's LRU (which keeps a reference on each of
 * its eight), one reference for the caller. */
        .globl  __getblk_slow
__getblk_slow:
        pushl   %ebx
        pushl   %esi
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %esi
        movl    12(%esp), %ecx              # bdev
        movl    BDEV_META_N(%ecx), %edx
        leal    BDEV_META(%ecx), %ecx
        movl    16(%esp), %eax              # block
1:      testl   %edx, %edx
        jz      9f
        cmpl    (%ecx), %eax
        je      2f
        addl    $8, %ecx
        decl    %edx
        jmp     1b
2:      movl    4(%ecx), %ebx               # bh
        lock incl BH_COUNT(%ebx)            # bh_lru_install: the LRU's reference
        movl    PCPU_BH_LRU_LAST(%esi), %eax    # the evictee
        movl    $(BH_LRU_SIZE - 1), %ecx
3:      movl    PCPU_BH_LRU_PREV(%esi,%ecx,4), %edx
        movl    %edx, PCPU_BH_LRU(%esi,%ecx,4)
        loop    3b
        movl    %ebx, PCPU_BH_LRU(%esi)
        testl   %eax, %eax
        jz      4f
        lock decl BH_COUNT(%eax)            # __brelse(evictee)
4:      lock incl BH_COUNT(%ebx)            # the caller's reference
        movl    %ebx, %eax
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # a block the run did not set up

/* __brelse(bh): drop a reference */
        .globl  __brelse
__brelse:
        movl    4(%esp), %eax
        cmpl    $0, BH_COUNT(%eax)
        je      1f
        lock decl BH_COUNT(%eax)
1:      ret

/* alloc_buffer_head() -> bh: a buffer head from the slab (the per-CPU array returns the
 * one freed last, by reclaim), counted in the per-CPU bh_accounting. */
        .globl  alloc_buffer_head
alloc_buffer_head:
        pushl   bh_cachep
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    $-8192, %edx
        andl    %esp, %edx
        movl    TI_CPU(%edx), %edx
        movl    __per_cpu_offset(,%edx,4), %edx
        incl    PCPU_BH_NR(%edx)            # __get_cpu_var(bh_accounting).nr++
        ret

/* create_empty_buffers(page, blocksize, b_state): one buffer head for the page's one
 * block (alloc_page_buffers), attached under mapping->private_lock. */
        .globl  create_empty_buffers
create_empty_buffers:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # page
        call    alloc_buffer_head
        movl    %eax, %ebx
        movl    $0, BH_BDEV(%ebx)
        movl    %ebx, BH_THIS_PAGE(%ebx)    # a ring of one
        movl    $-1, BH_BLOCKNR(%ebx)
        movl    20(%esp), %eax
        movl    %eax, BH_STATE(%ebx)        # b_state
        movl    $0, BH_COUNT(%ebx)
        movl    16(%esp), %eax
        movl    %eax, BH_SIZE(%ebx)
        movl    %esi, BH_PAGE(%ebx)         # set_bh_page
        movl    $0, BH_DATA(%ebx)           # a highmem page: b_data is the offset, 0
        movl    $0, BH_END_IO(%ebx)
        movl    $0, BH_PRIVATE(%ebx)
        movl    PG_MAPPING(%esi), %eax
        leal    AS_PRIVATE_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        lock incl PG_COUNT(%esi)            # attach_page_buffers: page_cache_get
        lock btsl $(PG_private), PG_FLAGS(%esi)     # SetPagePrivate
        movl    %ebx, PG_PRIVATE(%esi)
        call    _spin_unlock
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret

/* block_prepare_write(page, from, to, get_block) */
        .globl  block_prepare_write
block_prepare_write:
        movl    4(%esp), %eax
        movl    PG_MAPPING(%eax), %eax
        pushl   16(%esp)                    # get_block
        pushl   16(%esp)                    # to
        pushl   16(%esp)                    # from
        pushl   16(%esp)                    # page
        pushl   AS_HOST(%eax)               # inode
        call    __block_prepare_write
        addl    $20, %esp
        ret

/* __block_prepare_write(inode, page, from, to, get_block): the page's buffer; an unmapped
 * one gets its block from get_block, and a new block's old buffer in the block device's
 * cache is unmapped. A whole-page write reads and zeroes nothing. */
        .globl  __block_prepare_write
__block_prepare_write:
        pushl   %ebx
        pushl   %esi
        movl    16(%esp), %esi              # page
        testl   $(1 << PG_private), PG_FLAGS(%esi)
        jnz     1f
        pushl   $0
        pushl   $(PAGE_SIZE)
        pushl   %esi
        call    create_empty_buffers
        addl    $12, %esp
1:      movl    PG_PRIVATE(%esi), %ebx      # head = page_buffers(page)
        testl   $(1 << BH_New), BH_STATE(%ebx)
        jz      2f
        lock btrl $(BH_New), BH_STATE(%ebx)
2:      testl   $(1 << BH_Mapped), BH_STATE(%ebx)
        jnz     3f
        pushl   $1                          # get_block(inode, block, bh, 1)
        pushl   %ebx
        pushl   PG_INDEX(%esi)              # block = page->index (4 KB blocks)
        pushl   24(%esp)                    # inode
        call    *44(%esp)
        addl    $16, %esp
        testl   $(1 << BH_New), BH_STATE(%ebx)
        jz      3f
        lock btrl $(BH_New), BH_STATE(%ebx) # clear_buffer_new
        pushl   BH_BLOCKNR(%ebx)
        pushl   BH_BDEV(%ebx)
        call    unmap_underlying_metadata
        addl    $8, %esp
3:      xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

/* unmap_underlying_metadata(bdev, block): a block newly given to a file may still have a
 * buffer in the block device's cache from its life as metadata; look for it. */
        .globl  unmap_underlying_metadata
unmap_underlying_metadata:
        pushl   8(%esp)
        pushl   8(%esp)
        call    __find_get_block_slow
        addl    $8, %esp
        ret

/* mark_buffer_dirty(bh): the buffer, then its page, dirty */
        .globl  mark_buffer_dirty
mark_buffer_dirty:
        movl    4(%esp), %eax
        testl   $(1 << BH_Dirty), BH_STATE(%eax)
        jnz     1f
        lock btsl $(BH_Dirty), BH_STATE(%eax)   # test_set_buffer_dirty
        jc      1f
        pushl   BH_PAGE(%eax)
        call    __set_page_dirty_nobuffers
        addl    $4, %esp
1:      ret

/* generic_commit_write(file, page, from, to): the buffer up to date and dirty, the page up
 * to date; past the end of the file, the new size and mark_inode_dirty. */
        .globl  generic_commit_write
generic_commit_write:
        pushl   %ebx
        pushl   %esi
        movl    16(%esp), %esi              # page
        movl    PG_MAPPING(%esi), %eax
        movl    AS_HOST(%eax), %ebx         # inode
        pushl   24(%esp)                    # __block_commit_write(inode, page, from, to)
        pushl   24(%esp)
        pushl   %esi
        pushl   %ebx
        call    __block_commit_write
        addl    $16, %esp
        movl    PG_INDEX(%esi), %eax        # pos = (index << 12) + to: 44 bits
        movl    %eax, %edx
        shll    $12, %eax
        shrl    $20, %edx
        addl    24(%esp), %eax
        adcl    $0, %edx
        cmpl    I_SIZE + 4(%ebx), %edx      # pos > inode->i_size?
        jb      1f
        ja      2f
        cmpl    I_SIZE(%ebx), %eax
        jbe     1f
2:      movl    %eax, I_SIZE(%ebx)          # i_size_write
        movl    %edx, I_SIZE + 4(%ebx)
        pushl   $(I_DIRTY)                  # mark_inode_dirty(inode)
        pushl   %ebx
        call    __mark_inode_dirty
        addl    $8, %esp
1:      xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

/* __block_commit_write(inode, page, from, to) */
        .globl  __block_commit_write
__block_commit_write:
        pushl   %ebx
        movl    12(%esp), %eax              # page
        movl    PG_PRIVATE(%eax), %ebx      # its buffer
        lock btsl $(BH_Uptodate), BH_STATE(%ebx)    # set_buffer_uptodate
        pushl   %ebx
        call    mark_buffer_dirty
        addl    $4, %esp
        movl    12(%esp), %eax
        lock btsl $(PG_uptodate), PG_FLAGS(%eax)    # SetPageUptodate
        xorl    %eax, %eax
        popl    %ebx
        ret
