/*
 * filemap_22: lseek(2) and read(2) of a regular ext2 file from the page cache in Linux 2.2.0
 * (davej-history f6cce5dae), for the book's kernel model (emu.kernel.filemap, Dougan 1999's
 * file reread). Written for this book from the algorithm of the files named, not copied.
 * sys_read is pipe_22.S's sys_read22 (fs/read_write.c 116-143), whose f_op->read is here
 * generic_file_read (fs/ext2/file.c 64-83: ext2_file_operations' read). Loaded after
 * Entry's code, by emu.kernel.filemap, whose prelude gives the structures' offsets and the
 * addresses of the kernel's data (page_hash_table, mem_map, max_readahead, xtime, event).
 *
 *   sys_lseek22 (fs/read_write.c 49-73): fget, f_dentry and d_inode tested, origin <= 2,
 *     llseek (39-47: f_op->llseek, ext2_file_lseek), fput;
 *   ext2_file_lseek22 (fs/ext2/file.c 109-137): the origin, the 4 GB test of a 32-bit long,
 *     and if the offset changes: f_pos, f_reada = 0, f_version = ++event (kernel/sched.c:80);
 *   generic_file_read22 (mm/filemap.c 772-794): access_ok, the read descriptor on the stack,
 *     do_generic_file_read with file_read_actor, written or the error;
 *   do_generic_file_read22 (561-748): get_max_readahead (425-430), the read-ahead context
 *     reset or kept, f_ramax from the request; then per page: the i_size test, page_hash and
 *     __find_page (include/linux/pagemap.h 34-65: _page_hashfn, the chain walk over struct
 *     pages, atomic_inc of count, set_bit(PG_referenced)), PageUptodate || PageLocked,
 *     generic_file_readahead inline (433-533: raend, the locked-page and the asynchronous
 *     windows, the read-ahead loop and the context update), wait_on_page, PageUptodate,
 *     the actor on page_address(page) + offset, release_page (__free_page); at the end
 *     *ppos, f_reada = 1, free_page of an unused page_cache, UPDATE_ATIME;
 *   file_read_actor22 (750-766): min(size, count), __copy_to_user, the descriptor updated;
 *   the copy is copy_tofrom_user_22.S's __copy_tofrom_user22, loaded with the entry's code;
 *   update_atime22 (fs/inode.c 790-797, fs.h 123-137's IS_NOATIME / IS_NODIRATIME /
 *     IS_RDONLY): i_atime = CURRENT_TIME (xtime.tv_sec), mark_inode_dirty (fs.h 405-409)
 *     inline, its out-of-line __mark_inode_dirty refused;
 *   __free_page22 (mm/page_alloc.c 122-131: PageReserved, atomic_dec_and_test), set_bit22
 *     (arch/ppc/kernel/bitops.c 12-27), atomic_inc22 and atomic_dec_and_test22
 *     (arch/ppc/kernel/misc.S 167-201).
 * The frames are egcs's: arch/ppc/Makefile (24-25) builds with -mmultiple, so a function
 * saving several registers does it with stmw / lmw.
 * What a reread of a file wholly in the page cache never reaches is refused (host_stop22,
 * HOST_REFUSED with emu.kernel.entry.REFUSED's reason): a page not in the cache (the
 * readpage path), a locked page (I/O in flight), a page not up to date, read-ahead's
 * try_to_read_ahead, the inode's first dirtying, an lseek without f_op->llseek.
 */
        .equ    PAGE_SIZE, 4096
        .equ    PAGE_HASH_BITS, 11              # include/linux/pagemap.h:20
        .equ    PG_locked, 0                    # include/linux/mm.h 135-147
        .equ    PG_referenced, 2
        .equ    PG_uptodate, 4
        .equ    MIN_READAHEAD, 3 * 4096         # include/linux/blkdev.h 85-86 (large)
        .equ    MAX_READAHEAD, 18 * 4096
        .equ    MS_RDONLY, 1                    # include/linux/fs.h 86-97
        .equ    MS_NOATIME, 1024
        .equ    MS_NODIRATIME, 2048
        .equ    S_IFMT, 0xf000
        .equ    S_IFDIR, 0x4000
        .equ    I_DIRTY, 1                      # include/linux/fs.h:400
        .equ    EBADF, 9
        .equ    EFAULT, 14
        .equ    EINVAL, 22
# read_descriptor_t (mm/filemap.c 543-548) on generic_file_read's stack
        .equ    DESC_WRITTEN, 0
        .equ    DESC_COUNT, 4
        .equ    DESC_BUF, 8
        .equ    DESC_ERROR, 12
        .equ    DESC_AT, 16                     # its offset in generic_file_read's frame

        .macro  REFUSE reason
        li      r3, HOST_REFUSED
        li      r4, \reason
        b       host_stop22_at
        .endm

# get_max_readahead (mm/filemap.c 425-430): the inode's device's max_readahead, or
# MAX_READAHEAD if it has none (a SCSI disk's major: drivers/block registers none)
        .macro  MAX_READAHEAD_OF inode, out
        lhz     r10, I_DEV(\inode)
        cmpwi   0, r10, 0
        beq     1f
        srwi    r10, r10, 8                     # MAJOR
        slwi    r10, r10, 2
        lis     r11, MAX_READAHEAD_TABLE@ha
        addi    r11, r11, MAX_READAHEAD_TABLE@l
        lwzx    r11, r11, r10
        cmpwi   0, r11, 0
        beq     1f
        lhz     r10, I_DEV(\inode)              # [MINOR]
        andi.   r10, r10, 0xff
        slwi    r10, r10, 2
        lwzx    \out, r11, r10
        b       2f
1:      lis     \out, MAX_READAHEAD@h
        ori     \out, \out, MAX_READAHEAD@l
2:
        .endm

        .align  5
        .globl  sys_lseek22
sys_lseek22:                            # r3 = fd, r4 = offset (off_t), r5 = origin
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stw     r31, 28(r1)
        lwz     r9, TASK_FILES(r2)      # fget
        lwz     r10, FILES_MAX(r9)
        cmplw   0, r3, r10
        bge-    ls_ebadf
        lwz     r9, FILES_FD(r9)
        slwi    r3, r3, 2
        lwzx    r31, r9, r3
        cmpwi   0, r31, 0
        beq-    ls_ebadf
        lwz     r10, F_COUNT(r31)
        addi    r10, r10, 1
        stw     r10, F_COUNT(r31)
        li      r3, -EBADF
        lwz     r9, F_DENTRY(r31)       # dentry and inode
        cmpwi   0, r9, 0
        beq-    ls_put
        lwz     r9, D_INODE(r9)
        cmpwi   0, r9, 0
        beq-    ls_put
        li      r3, -EINVAL
        cmplwi  0, r5, 2
        bgt-    ls_put
        lwz     r10, F_OP(r31)          # llseek: f_op->llseek, else default_llseek
        cmpwi   0, r10, 0
        beq-    ls_default
        lwz     r10, FOP_LSEEK(r10)
        cmpwi   0, r10, 0
        beq-    ls_default
        mtctr   r10
        mr      r7, r5                  # (file, long long offset in r5:r6, origin)
        srawi   r5, r4, 31
        mr      r6, r4
        mr      r3, r31
        bctrl
        mr      r3, r4                  # the off_t of the long long result
ls_put:
        lwz     r10, F_COUNT(r31)       # fput
        addi    r10, r10, -1
        stw     r10, F_COUNT(r31)
ls_out:
        lwz     r31, 28(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        blr
ls_ebadf:
        li      r3, -EBADF
        b       ls_out
ls_default:
        REFUSE  26

        .globl  ext2_file_lseek22
ext2_file_lseek22:                      # r3 = file, r5:r6 = offset, r7 = origin
        lwz     r9, F_DENTRY(r3)
        lwz     r9, D_INODE(r9)
        cmpwi   0, r7, 1
        beq     el_cur
        cmpwi   0, r7, 2
        bne     el_switched
        lwz     r10, I_SIZE(r9)         # case 2: offset += inode->i_size
        srawi   r11, r10, 31
        addc    r6, r6, r10
        adde    r5, r5, r11
        b       el_switched
el_cur:
        lwz     r11, F_POS(r3)          # case 1: offset += file->f_pos
        lwz     r10, F_POS+4(r3)
        addc    r6, r6, r10
        adde    r5, r5, r11
el_switched:
        cmpwi   0, r5, 0                # (unsigned long long) offset >> 32: -EINVAL
        bne-    el_einval
        lwz     r10, F_POS(r3)
        lwz     r11, F_POS+4(r3)
        cmpw    0, r10, r5
        bne     el_set
        cmpw    0, r11, r6
        beq     el_out
el_set:
        stw     r5, F_POS(r3)
        stw     r6, F_POS+4(r3)
        li      r0, 0
        stw     r0, F_READA(r3)
        lis     r9, KDATA_EVENT@ha      # f_version = ++event
        lwz     r10, KDATA_EVENT@l(r9)
        addi    r10, r10, 1
        stw     r10, KDATA_EVENT@l(r9)
        stw     r10, F_VERSION(r3)
el_out:
        mr      r3, r5
        mr      r4, r6
        blr
el_einval:
        li      r3, -1
        li      r4, -EINVAL
        blr

        .align  5
        .globl  generic_file_read22
generic_file_read22:                    # r3 = filp, r4 = buf, r5 = count, r6 = ppos
        mflr    r0
        stwu    r1, -48(r1)
        stw     r0, 52(r1)
        stw     r31, 44(r1)
        li      r31, -EFAULT
        lwz     r10, TSS+TSS_FS(r2)     # access_ok(VERIFY_WRITE, buf, count)
        cmpwi   0, r10, 0
        beq-    1f
        lis     r11, 0x8000
        cmplw   0, r5, r11
        bgt-    gfr_out
        subf    r11, r5, r11
        cmplw   0, r4, r11
        bgt-    gfr_out
1:      li      r31, 0
        cmpwi   0, r5, 0
        beq-    gfr_out
        li      r0, 0
        stw     r0, DESC_AT+DESC_WRITTEN(r1)
        stw     r5, DESC_AT+DESC_COUNT(r1)
        stw     r4, DESC_AT+DESC_BUF(r1)
        stw     r0, DESC_AT+DESC_ERROR(r1)
        mr      r4, r6
        addi    r5, r1, DESC_AT
        lis     r6, file_read_actor22@ha
        addi    r6, r6, file_read_actor22@l
        bl      do_generic_file_read22
        lwz     r31, DESC_AT+DESC_WRITTEN(r1)
        cmpwi   0, r31, 0
        bne     gfr_out
        lwz     r31, DESC_AT+DESC_ERROR(r1)
gfr_out:
        mr      r3, r31
        lwz     r31, 44(r1)
        lwz     r0, 52(r1)
        addi    r1, r1, 48
        mtlr    r0
        blr

# do_generic_file_read: r31 filp, r30 ppos, r29 desc, r28 actor, r27 inode, r26 pos,
# r25 reada_ok, r24 page_cache, r23 max_readahead, r22 page, r21 the actor's nr
        .align  5
        .globl  do_generic_file_read22
do_generic_file_read22:                 # r3 = filp, r4 = ppos, r5 = desc, r6 = actor
        mflr    r0
        stwu    r1, -64(r1)
        stw     r0, 68(r1)
        stmw    r21, 20(r1)
        mr      r31, r3
        mr      r30, r4
        mr      r29, r5
        mr      r28, r6
        lwz     r27, F_DENTRY(r31)      # inode = filp->f_dentry->d_inode
        lwz     r27, D_INODE(r27)
        MAX_READAHEAD_OF r27, r23
        li      r24, 0                  # page_cache
        lwz     r26, 4(r30)             # pos = *ppos (size_t: the loff_t's low word)
        rlwinm  r9, r26, 0, 0, 19       # pgpos
        lwz     r10, F_RAEND(r31)
        cmplw   0, r9, r10              # outside the previous read-ahead window?
        bgt     dg_reset
        lwz     r11, F_RAWIN(r31)
        add     r11, r9, r11
        cmplw   0, r11, r10
        bge     dg_keep
dg_reset:
        li      r25, 0                  # reada_ok = 0, the context reset
        li      r0, 0
        stw     r0, F_RAEND(r31)
        stw     r0, F_RALEN(r31)
        stw     r0, F_RAMAX(r31)
        stw     r0, F_RAWIN(r31)
        b       dg_ramax
dg_keep:
        li      r25, 1
dg_ramax:
        lwz     r10, DESC_COUNT(r29)    # pos + desc->count in the first half page?
        add     r10, r26, r10
        cmplwi  0, r10, PAGE_SIZE/2
        bgt     dg_needed
        li      r0, 0
        stw     r0, F_RAMAX(r31)
        b       dg_loop
dg_needed:
        rlwinm  r10, r10, 0, 0, 19      # needed = ((pos + count) & PAGE_MASK) - pgpos
        subf    r10, r9, r10
        lwz     r11, F_RAMAX(r31)
        cmplw   0, r11, r10
        bge     1f
        stw     r10, F_RAMAX(r31)
1:      cmpwi   0, r25, 0
        beq     2f
        lwz     r11, F_RAMAX(r31)
        cmplwi  0, r11, MIN_READAHEAD
        bge     2f
        li      r0, MIN_READAHEAD
        stw     r0, F_RAMAX(r31)
2:      lwz     r11, F_RAMAX(r31)
        cmplw   0, r11, r23
        ble     dg_loop
        stw     r23, F_RAMAX(r31)
dg_loop:
        lwz     r10, I_SIZE(r27)        # pos >= inode->i_size: done
        cmplw   0, r26, r10
        bge     dg_done
        srwi    r9, r27, INODE_SHIFT    # page_hash: s(i + o) & (PAGE_HASH_SIZE - 1)
        srwi    r10, r26, 12
        add     r9, r9, r10
        srwi    r10, r9, PAGE_HASH_BITS
        add     r9, r9, r10
        rlwinm  r9, r9, 2, 32-2-PAGE_HASH_BITS, 29
        lis     r10, PAGE_HASH_TABLE@ha
        addi    r10, r10, PAGE_HASH_TABLE@l
        lwzx    r22, r10, r9            # __find_page(inode, offset, *hash)
        rlwinm  r8, r26, 0, 0, 19       # offset
dg_chain:
        cmpwi   0, r22, 0
        beq-    dg_not_cached
        lwz     r10, PG_INODE(r22)
        cmpw    0, r10, r27
        bne     dg_next
        lwz     r10, PG_OFFSET(r22)
        cmpw    0, r10, r8
        beq     dg_hit
dg_next:
        lwz     r22, PG_NEXT_HASH(r22)
        b       dg_chain
dg_hit:
        addi    r3, r22, PG_COUNT       # atomic_inc(&page->count)
        bl      atomic_inc22
        li      r3, PG_referenced       # set_bit(PG_referenced, &page->flags)
        addi    r4, r22, PG_FLAGS
        bl      set_bit22
        lwz     r10, PG_FLAGS(r22)      # PageUptodate(page) || PageLocked(page)
        andi.   r0, r10, 1 << PG_uptodate
        bne     dg_readahead
        lwz     r10, PG_FLAGS(r22)
        andi.   r0, r10, 1 << PG_locked
        bne     dg_readahead
        cmpwi   0, r25, 0               # else: f_ramax down to MIN_READAHEAD
        beq     dg_wait
        lwz     r11, F_RAMAX(r31)
        cmplwi  0, r11, MIN_READAHEAD
        ble     dg_wait
        li      r0, MIN_READAHEAD
        stw     r0, F_RAMAX(r31)
        b       dg_wait
dg_readahead:                           # generic_file_readahead, inline
        MAX_READAHEAD_OF r27, r7
        lwz     r9, F_RAEND(r31)        # raend = f_raend & PAGE_MASK
        rlwinm  r9, r9, 0, 0, 19
        li      r6, 0                   # max_ahead
        lwz     r10, PG_FLAGS(r22)      # PageLocked: the synchronous window
        andi.   r0, r10, 1 << PG_locked
        bne-    dg_locked
        cmpwi   0, r25, 0               # reada_ok && f_ramax && raend >= PAGE_SIZE &&
        beq     dg_ahead                # ppos <= raend && ppos + f_ralen >= raend
        lwz     r10, F_RAMAX(r31)
        cmpwi   0, r10, 0
        beq     dg_ahead
        cmplwi  0, r9, PAGE_SIZE
        blt     dg_ahead
        rlwinm  r8, r26, 0, 0, 19
        cmplw   0, r8, r9
        bgt     dg_ahead
        lwz     r11, F_RALEN(r31)
        add     r11, r8, r11
        cmplw   0, r11, r9
        bge-    dg_async
dg_ahead:
        cmplwi  0, r6, 0                # while (ahead < max_ahead): try_to_read_ahead
        bne-    dg_async
dg_wait:
        lwz     r10, PG_FLAGS(r22)      # wait_on_page: PageLocked
        andi.   r0, r10, 1 << PG_locked
        bne-    dg_locked
        lwz     r10, PG_FLAGS(r22)      # PageUptodate, else page_read_error
        andi.   r0, r10, 1 << PG_uptodate
        beq-    dg_not_uptodate
        rlwinm  r4, r26, 0, 20, 31      # offset = pos & ~PAGE_MASK
        subfic  r5, r4, PAGE_SIZE       # nr = PAGE_SIZE - offset, at most i_size - pos
        lwz     r10, I_SIZE(r27)
        subf    r10, r26, r10
        cmplw   0, r5, r10
        ble     1f
        mr      r5, r10
1:      lis     r9, MEM_MAP_VAR@ha      # page_address: PAGE_OFFSET + PAGE_SIZE *
        lwz     r9, MEM_MAP_VAR@l(r9)   # (page - mem_map), 40-byte struct pages: the
        subf    r9, r9, r22             # exact division as egcs makes it (>> 3, then
        srawi   r9, r9, 3               # times 5's inverse mod 2^32)
        lis     r10, 0xcccc
        ori     r10, r10, 0xcccd
        mullw   r9, r9, r10
        slwi    r9, r9, 12
        addis   r9, r9, PAGE_OFFSET@h
        add     r4, r9, r4
        mr      r3, r29                 # nr = actor(desc, address, nr)
        mtctr   r28
        bctrl
        mr      r21, r3
        add     r26, r26, r21           # pos += nr
        mr      r3, r22                 # release_page
        bl      __free_page22
        cmpwi   0, r21, 0               # nr && desc->count: the next page
        beq     dg_done
        lwz     r10, DESC_COUNT(r29)
        cmpwi   0, r10, 0
        bne     dg_loop
dg_done:
        li      r0, 0                   # *ppos = pos
        stw     r0, 0(r30)
        stw     r26, 4(r30)
        li      r0, 1                   # f_reada = 1
        stw     r0, F_READA(r31)
        cmpwi   0, r24, 0               # free_page(page_cache)
        bne-    dg_free_cache
        mr      r3, r27                 # UPDATE_ATIME
        bl      update_atime22
        lmw     r21, 20(r1)
        lwz     r0, 68(r1)
        addi    r1, r1, 64
        mtlr    r0
        blr
dg_not_cached:
        REFUSE  21
dg_locked:
        REFUSE  22
dg_not_uptodate:
        REFUSE  23
dg_async:
        REFUSE  24
dg_free_cache:
        REFUSE  24

        .align  5
        .globl  file_read_actor22
file_read_actor22:                      # r3 = desc, r4 = area, r5 = size
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stmw    r29, 20(r1)             # -mmultiple (arch/ppc/Makefile 24-25)
        mr      r31, r3
        lwz     r30, DESC_COUNT(r31)    # count
        cmplw   0, r5, r30              # size = min(size, count)
        ble     1f
        mr      r5, r30
1:      mr      r29, r5
        lwz     r3, DESC_BUF(r31)       # left = __copy_to_user(desc->buf, area, size)
        bla     COPY_TOFROM_USER22      # left = __copy_to_user(...): the entry's
        cmpwi   0, r3, 0
        beq+    2f
        subf    r29, r3, r29            # size -= left; error = -EFAULT
        li      r0, -EFAULT
        stw     r0, DESC_ERROR(r31)
2:      subf    r30, r29, r30           # count - size
        stw     r30, DESC_COUNT(r31)
        lwz     r10, DESC_WRITTEN(r31)
        add     r10, r10, r29
        stw     r10, DESC_WRITTEN(r31)
        lwz     r10, DESC_BUF(r31)
        add     r10, r10, r29
        stw     r10, DESC_BUF(r31)
        mr      r3, r29
        lmw     r29, 20(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        blr

        .align  5
        .globl  update_atime22
update_atime22:                         # r3 = inode
        lwz     r9, I_SB(r3)            # IS_NOATIME
        cmpwi   0, r9, 0
        beq     1f
        lwz     r10, S_FLAGS(r9)
        andi.   r0, r10, MS_NOATIME
        bnelr
1:      lwz     r9, I_SB(r3)            # IS_NODIRATIME && S_ISDIR
        cmpwi   0, r9, 0
        beq     2f
        lwz     r10, S_FLAGS(r9)
        andi.   r0, r10, MS_NODIRATIME
        beq     2f
        lhz     r10, I_MODE(r3)
        andi.   r10, r10, S_IFMT
        cmpwi   0, r10, S_IFDIR
        beqlr
2:      lwz     r9, I_SB(r3)            # IS_RDONLY
        cmpwi   0, r9, 0
        beq     3f
        lwz     r10, S_FLAGS(r9)
        andi.   r0, r10, MS_RDONLY
        bnelr
3:      lis     r10, KDATA_XTIME@ha     # i_atime = CURRENT_TIME
        lwz     r10, KDATA_XTIME@l(r10)
        stw     r10, I_ATIME(r3)
        lwz     r10, I_STATE(r3)        # mark_inode_dirty: dirty already?
        andi.   r0, r10, I_DIRTY
        beq-    ua_mark
        blr
ua_mark:
        REFUSE  25

        .globl  __free_page22
__free_page22:                          # r3 = page
        mflr    r0                      # the frame first, as egcs makes it
        stwu    r1, -16(r1)
        stw     r0, 20(r1)
        lwz     r10, PG_FLAGS(r3)       # PageReserved
        andis.  r0, r10, 0x8000
        bne-    fp_out
        addi    r3, r3, PG_COUNT        # atomic_dec_and_test(&page->count)
        bl      atomic_dec_and_test22
        cmpwi   0, r3, 0
        bne-    fp_last
fp_out:
        lwz     r0, 20(r1)
        addi    r1, r1, 16
        mtlr    r0
        blr
fp_last:
        REFUSE  27

        .globl  set_bit22
set_bit22:                              # r3 = nr, r4 = addr
        andi.   r5, r3, 0x1f            # mask = 1 << (nr & 0x1f)
        li      r6, 1
        slw     r6, r6, r5
        srawi   r7, r3, 5               # p = addr + (nr >> 5)
        slwi    r7, r7, 2
        add     r7, r4, r7
        andi.   r0, r4, 3               # a misaligned addr: printk
        bne-    sb_printk
1:      lwarx   r5, 0, r7
        or      r5, r5, r6
        stwcx.  r5, 0, r7
        bne-    1b
        blr
sb_printk:
        REFUSE  28

        .globl  atomic_inc22
atomic_inc22:
1:      lwarx   r5, 0, r3
        addi    r5, r5, 1
        stwcx.  r5, 0, r3
        bne-    1b
        blr

        .globl  atomic_dec_and_test22
atomic_dec_and_test22:
1:      lwarx   r5, 0, r3
        subi    r5, r5, 1
        stwcx.  r5, 0, r3
        bne-    1b
        cmpwi   0, r5, 0
        li      r3, 1
        beqlr
        li      r3, 0
        blr

host_stop22_at:
        ba      HOST_STOP22
