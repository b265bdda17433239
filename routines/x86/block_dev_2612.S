/*
 * The block device's page cache, Linux 2.6.12, written for the book from fs/block_dev.c of
 * 2.6.12.1: the block device's address_space_operations (def_blk_aops, 786-794), of which
 * writeback uses writepage, blkdev_writepage (174-177): block_write_full_page(page,
 * blkdev_get_block, wbc), a tail call here (routines/x86/writeback_2612.S's
 * block_write_full_page: the metadata's buffers are mapped, so blkdev_get_block is not
 * called). It is how a metadata page of ext3 (a bitmap, the group descriptors, the inode
 * table, an indirect block) goes to the disk once the journal has let it go:
 * wb_kupdate -> writeback_inodes -> sync_sb_inodes(blockdev_superblock) ->
 * __writeback_single_inode -> mpage_writepages -> blkdev_writepage
 * (routines/x86/writeback_2612.S's writeback_page does mpage_writepages' part for a page).
 * Calling convention: cdecl. Offsets: the equates emu/papers/yoshioka2005/ext3model/
 * puts in front.
 */

/* blkdev_writepage(page, wbc) */
        .globl  blkdev_writepage
blkdev_writepage:
        jmp     block_write_full_page

        .data
        .align  4
        .globl  blkdev_aops
blkdev_aops:                                # def_blk_aops: writepage first (AOPS_WRITEPAGE)
        .long   blkdev_writepage
        .long   0, 0, 0, 0, 0, 0, 0         # readpage ... commit_write: not used here
        .text

/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
