/*
 * pipe_22: read(2) and write(2) on a pipe in Linux 2.2.0 (fs/read_write.c sys_read and
 * sys_write, fs/pipe.c pipe_read and pipe_write, include/asm-ppc/uaccess.h copy_to_user
 * and copy_from_user), for the book's kernel model (emu.kernel.entry). Written for this
 * book from the algorithm, not copied. Loaded after entry_22.S, whose sleep_on22 and
 * wake_up22 it calls, and before copy_tofrom_user_22.S (__copy_tofrom_user22); the
 * structures' offsets come from the prelude (emu.kernel.entry).
 *
 *   sys_read22 / sys_write22 (r3 = fd, r4 = buf, r5 = count): fget (current->files->fd[fd],
 *     its count up), the file's mode, locks_verify_area (no mandatory lock on the inode),
 *     f_op->read / write with &f_pos (a write between down and up of the inode's i_sem:
 *     semaphore.h's inline down / up around misc.S's atomic_dec_return / atomic_inc_return,
 *     out of line, as guest code; a write's buf, count and f_op->write kept in r27-r29
 *     across down, its result across up), fput; -EBADF / -EINVAL as the C code returns them;
 *   pipe_read22: while the pipe is empty or locked: no writer (or count 0) returns 0, a
 *     pending signal -ERESTARTSYS, else interruptible_sleep_on(PIPE_WAIT); then, locked,
 *     chunks of min(count, bytes left, bytes to the end of the page) copied to the user
 *     with copy_to_user, the start moved round the 4 KB page; unlocked, wake_up on
 *     PIPE_WAIT, UPDATE_ATIME, the count read (-EAGAIN if none and a writer is left);
 *   pipe_write22: no reader: -EPIPE (the SIGPIPE is not sent: refused); an atomic write if
 *     count <= PIPE_BUF (wait until that much is free), else any free space; the inode's
 *     i_sem up and i_atomic_write down (uncontended: DOWN / UP below);
 *     while bytes are left: wait while too little is free or the pipe is locked (no reader,
 *     a signal: return), then, locked, chunks of min(count, free, bytes to the end of the
 *     page) copied from the user at the pipe's end; unlocked, wake_up; i_ctime = i_mtime
 *     = CURRENT_TIME, mark_inode_dirty (a pipe's inode has no superblock: a test);
 *     i_atomic_write up, i_sem down; the count written;
 *   LINUX_2_1_51 (Entry(version="2.1.51")): Linux 2.1.51's (davej-history 94520e420,
 *     fs/read_write.c 118-188, fs/pipe.c 36-125): sys_read / sys_write test f_dentry and
 *     d_inode after fget and call f_op with (inode, file, buf, count); pipe_read and
 *     pipe_write have no f_pos test, test a signal as current->signal & ~current->blocked,
 *     pipe_read returns 0 on an empty pipe only when no writer is left (no `!count`), and
 *     pipe_write takes no semaphore (sys_write holds i_sem; i_atomic_write came later);
 *     UPDATE_ATIME and mark_inode_dirty as the model has them for 2.2.0;
 *   copy_to_user22 / copy_from_user22: access_ok (current->tss.fs, __user_ok), then
 *     __copy_tofrom_user22, both kernels' arch/ppc/lib/string.S loop.
 * O_NONBLOCK pipes are refused (the benchmarks block).
 */
        .equ    FMODE_READ, 1
        .equ    FMODE_WRITE, 2
        .equ    O_NONBLOCK, 0x800
        .equ    S_MANDLOCK, 0x40
        .equ    PIPE_BUF, 4096
        .equ    EBADF, 9
        .equ    EINVAL, 22
        .equ    EAGAIN, 11
        .equ    ESPIPE, 29
        .equ    EPIPE, 32
        .equ    ERESTARTSYS, 512

# sys_read / sys_write (fs/read_write.c): one body, written out for each (a read's file
# is all that lives across the call; a write's inode too, for its i_sem: r30). WRITE = 1:
# down(&inode->i_sem) before f_op->write and up after it (2.2.0's sys_write, lines 169-171
# at f6cce5dae; 2.1.51's, 181-183 at 94520e420), uncontended: a decrement and a test.
# LINUX_2_1_51: after fget, 2.1.51 tests file->f_dentry and dentry->d_inode (a null one is
# -EBADF), locks_verify_area reads the inode it has, and f_op's read / write takes (inode,
# file, buf, count) where 2.2.0's takes (file, buf, count, &file->f_pos).
        .macro  SYS_RW mode, slot, write, inode
        mflr    r0
        stwu    r1, -32(r1)
        stw     r0, 36(r1)
        stw     r31, 28(r1)
.if \write
        stw     r30, 24(r1)
        stw     r29, 20(r1)
        stw     r28, 16(r1)
        stw     r27, 12(r1)
        mr      r29, r4                 # buf and count, live across down()
        mr      r28, r5
.endif
        lwz     r9, TASK_FILES(r2)      # fget
        lwz     r10, FILES_MAX(r9)
        cmplw   0, r3, r10
        bge-    rw_ebadf\write
        lwz     r9, FILES_FD(r9)
        slwi    r3, r3, 2
        lwzx    r31, r9, r3
        cmpwi   0, r31, 0
        beq-    rw_ebadf\write
        lwz     r10, F_COUNT(r31)
        addi    r10, r10, 1
        stw     r10, F_COUNT(r31)
.ifdef LINUX_2_1_51
        lwz     \inode, F_DENTRY(r31)   # dentry = file->f_dentry
        cmpwi   0, \inode, 0
        beq-    rw_ebadf_put\write
        lwz     \inode, D_INODE(\inode) # inode = dentry->d_inode
        cmpwi   0, \inode, 0
        beq-    rw_ebadf_put\write
        lwz     r10, F_MODE(r31)
        andi.   r10, r10, \mode
        beq-    rw_ebadf_put\write
        lwz     r10, I_FLAGS(\inode)    # locks_verify_area: mandatory locks?
.else
        lwz     r10, F_MODE(r31)
        andi.   r10, r10, \mode
        beq-    rw_ebadf_put\write
        lwz     \inode, F_DENTRY(r31)   # locks_verify_area: mandatory locks?
        lwz     \inode, D_INODE(\inode)
        lwz     r10, I_FLAGS(\inode)
.endif
        andi.   r10, r10, S_MANDLOCK
        bne-    rw_refused
        lwz     r10, F_OP(r31)
        cmpwi   0, r10, 0
        beq-    rw_einval_put\write
.if \write
        lwz     r27, \slot(r10)         # f_op->write, live across down()
        cmpwi   0, r27, 0
        beq-    rw_einval_put\write
        DOWN    r30, I_SEM              # down(&inode->i_sem)
        mtctr   r27
.ifdef LINUX_2_1_51
        mr      r3, r30                 # (inode, file, buf, count)
        mr      r4, r31
        mr      r5, r29
        mr      r6, r28
.else
        mr      r3, r31                 # (file, buf, count, &file->f_pos)
        mr      r4, r29
        mr      r5, r28
        addi    r6, r31, F_POS
.endif
        bctrl
        mr      r29, r3                 # the result, across up()
        UP      r30, I_SEM              # up(&inode->i_sem)
        mr      r3, r29
.else
        lwz     r10, \slot(r10)         # f_op->read
        cmpwi   0, r10, 0
        beq-    rw_einval_put\write
        mtctr   r10
.ifdef LINUX_2_1_51
        mr      r6, r5                  # (inode, file, buf, count)
        mr      r5, r4
        mr      r4, r31
        mr      r3, \inode
.else
        mr      r3, r31                 # (file, buf, count, &file->f_pos)
        addi    r6, r31, F_POS
.endif
        bctrl
.endif
rw_put\write:
        lwz     r10, F_COUNT(r31)       # fput
        addi    r10, r10, -1
        stw     r10, F_COUNT(r31)
rw_out\write:
.if \write
        lwz     r27, 12(r1)
        lwz     r28, 16(r1)
        lwz     r29, 20(r1)
        lwz     r30, 24(r1)
.endif
        lwz     r31, 28(r1)
        lwz     r0, 36(r1)
        addi    r1, r1, 32
        mtlr    r0
        blr
rw_ebadf\write:
        li      r3, -EBADF
        b       rw_out\write
rw_ebadf_put\write:
        li      r3, -EBADF
        b       rw_put\write
rw_einval_put\write:
        li      r3, -EINVAL
        b       rw_put\write
        .endm

# include/asm-ppc/semaphore.h's down() / down_interruptible() and up() (2.2.0 lines 60-78;
# 2.1.51's, 60-78, the same): atomic_dec_return(&sem->count) < 0 (or atomic_inc_return <= 0)
# calls __down (__up): here refused, the model's semaphores are never contended. The inode
# is in INODE, OFFSET the semaphore's count
        .macro  DOWN inode, offset
        addi    r3, \inode, \offset
        bl      atomic_dec_return22
        cmpwi   0, r3, 0
        blt-    pipe_contended
        .endm
        .macro  UP inode, offset
        addi    r3, \inode, \offset
        bl      atomic_inc_return22
        cmpwi   0, r3, 0
        ble-    pipe_contended
        .endm

# arch/ppc/kernel/misc.S's atomic_inc_return and atomic_dec_return (out of line in both
# kernels: 2.2.0 misc.S 173-191, 2.1.51 misc.S 166-184, the same loops): a lwarx / stwcx.
# loop, the new value in r3
        .globl  atomic_inc_return22
atomic_inc_return22:
1:      lwarx   r5, 0, r3
        addi    r5, r5, 1
        stwcx.  r5, 0, r3
        bne-    1b
        mr      r3, r5
        blr
        .globl  atomic_dec_return22
atomic_dec_return22:
1:      lwarx   r5, 0, r3
        subi    r5, r5, 1
        stwcx.  r5, 0, r3
        bne-    1b
        mr      r3, r5
        blr

# a pending signal: 2.2.0's signal_pending(current) (its sigpending word), 2.1.51's
# current->signal & ~current->blocked
        .macro  SIGNAL_PENDING target
.ifdef LINUX_2_1_51
        lwz     r10, SIGNAL(r2)
        lwz     r11, BLOCKED(r2)
        andc.   r10, r10, r11
        bne-    \target
.else
        lwz     r10, SIGPENDING(r2)
        cmpwi   0, r10, 0
        bne-    \target
.endif
        .endm

        .globl  sys_read22
sys_read22:
        SYS_RW  FMODE_READ, FOP_READ, 0, r11
        .globl  sys_write22
sys_write22:
        SYS_RW  FMODE_WRITE, FOP_WRITE, 1, r30
rw_refused:
        li      r3, HOST_REFUSED
        li      r4, 8
        b       host_stop22

        .align  5
        .globl  pipe_read22
pipe_read22:                            # r3 = file, r4 = buf, r5 = count, r6 = ppos
        mflr    r0
        stwu    r1, -48(r1)
        stw     r0, 52(r1)
        stw     r26, 20(r1)
        stw     r27, 24(r1)
        stw     r28, 28(r1)
        stw     r29, 32(r1)
        stw     r30, 36(r1)
        stw     r31, 40(r1)
.ifdef LINUX_2_1_51                    # 2.1.51: (inode, file, buf, count), no f_pos test
        mr      r31, r4
        mr      r30, r5                 # buf
        mr      r29, r6                 # count
        li      r28, 0                  # read
        mr      r27, r3                 # the inode
.else
        mr      r31, r3
        mr      r30, r4                 # buf
        mr      r29, r5                 # count
        li      r28, 0                  # read
        lwz     r27, F_DENTRY(r31)      # the inode
        lwz     r27, D_INODE(r27)
        addi    r10, r31, F_POS
        cmpw    0, r6, r10
        bne-    pr_espipe
.endif
        lwz     r10, F_FLAGS(r31)
        andi.   r10, r10, O_NONBLOCK
        bne-    pipe_nonblock
pr_wait:
        lwz     r10, PIPE_LEN(r27)
        cmpwi   0, r10, 0
        bne     pr_locked
        lwz     r10, PIPE_WRITERS(r27)  # empty: no writer, or nothing asked: 0
        cmpwi   0, r10, 0
        beq-    pr_zero
.ifndef LINUX_2_1_51                    # 2.1.51: no writer only
        cmpwi   0, r29, 0
        beq-    pr_zero
.endif
        b       pr_sleep
pr_locked:
        lwz     r10, PIPE_LOCK(r27)
        cmpwi   0, r10, 0
        beq     pr_go
pr_sleep:
        SIGNAL_PENDING pr_erestart
        addi    r3, r27, PIPE_WAIT
        bl      sleep_on22
        b       pr_wait
pr_go:
        lwz     r10, PIPE_LOCK(r27)
        addi    r10, r10, 1
        stw     r10, PIPE_LOCK(r27)
pr_loop:
        cmpwi   0, r29, 0
        ble     pr_done
        lwz     r9, PIPE_LEN(r27)       # size
        cmpwi   0, r9, 0
        beq     pr_done
        lwz     r8, PIPE_START(r27)
        subfic  r26, r8, PIPE_BUF       # PIPE_MAX_RCHUNK
        cmplw   0, r26, r29
        ble     pr_c1
        mr      r26, r29
pr_c1:
        cmplw   0, r26, r9
        ble     pr_c2
        mr      r26, r9
pr_c2:
        add     r28, r28, r26
        lwz     r4, PIPE_BASE(r27)      # pipebuf
        add     r4, r4, r8
        add     r8, r8, r26
        andi.   r8, r8, PIPE_BUF-1
        stw     r8, PIPE_START(r27)
        subf    r9, r26, r9
        stw     r9, PIPE_LEN(r27)
        subf    r29, r26, r29
        mr      r3, r30
        mr      r5, r26
        bl      copy_to_user22
        add     r30, r30, r26
        b       pr_loop
pr_done:
        lwz     r10, PIPE_LOCK(r27)
        addi    r10, r10, -1
        stw     r10, PIPE_LOCK(r27)
        addi    r3, r27, PIPE_WAIT
        bl      wake_up22
        cmpwi   0, r28, 0
        beq-    pr_none
        lis     r10, KDATA_XTIME@ha     # UPDATE_ATIME
        lwz     r10, KDATA_XTIME@l(r10)
        stw     r10, I_ATIME(r27)
        mr      r3, r28
        b       pr_out
pr_none:
        lwz     r10, PIPE_WRITERS(r27)
        li      r3, 0
        cmpwi   0, r10, 0
        beq     pr_out
        li      r3, -EAGAIN
        b       pr_out
pr_zero:
        li      r3, 0
        b       pr_out
pr_espipe:
        li      r3, -ESPIPE
        b       pr_out
pr_erestart:
        li      r3, -ERESTARTSYS
pr_out:
        lwz     r26, 20(r1)
        lwz     r27, 24(r1)
        lwz     r28, 28(r1)
        lwz     r29, 32(r1)
        lwz     r30, 36(r1)
        lwz     r31, 40(r1)
        lwz     r0, 52(r1)
        addi    r1, r1, 48
        mtlr    r0
        blr

        .align  5
        .globl  pipe_write22
pipe_write22:                           # r3 = file, r4 = buf, r5 = count, r6 = ppos
        mflr    r0
        stwu    r1, -48(r1)
        stw     r0, 52(r1)
        stw     r25, 16(r1)
        stw     r26, 20(r1)
        stw     r27, 24(r1)
        stw     r28, 28(r1)
        stw     r29, 32(r1)
        stw     r30, 36(r1)
        stw     r31, 40(r1)
.ifdef LINUX_2_1_51                    # 2.1.51: (inode, file, buf, count), no f_pos test
        mr      r31, r4
        mr      r30, r5                 # buf
        mr      r29, r6                 # count
        li      r28, 0                  # written
        mr      r27, r3
.else
        mr      r31, r3
        mr      r30, r4                 # buf
        mr      r29, r5                 # count
        li      r28, 0                  # written
        lwz     r27, F_DENTRY(r31)
        lwz     r27, D_INODE(r27)
        addi    r10, r31, F_POS
        cmpw    0, r6, r10
        bne-    pw_espipe
.endif
        lwz     r10, PIPE_READERS(r27)
        cmpwi   0, r10, 0
        beq-    pipe_sigpipe
        li      r25, 1                  # free: atomic up to PIPE_BUF, else any space
        cmplwi  0, r29, PIPE_BUF
        bgt     pw_free
        mr      r25, r29
pw_free:
.ifndef LINUX_2_1_51                    # 2.1.51: no i_atomic_write (sys_write holds i_sem)
        UP      r27, I_SEM              # up(&inode->i_sem)
        DOWN    r27, I_ATOMIC           # down_interruptible(&inode->i_atomic_write)
.endif
pw_outer:
        cmpwi   0, r29, 0
        ble     pw_finish
pw_wait:
        lwz     r9, PIPE_LEN(r27)       # PIPE_FREE = PIPE_BUF - len
        subfic  r9, r9, PIPE_BUF
        cmplw   0, r9, r25
        blt     pw_sleep
        lwz     r10, PIPE_LOCK(r27)
        cmpwi   0, r10, 0
        beq     pw_go
pw_sleep:
        lwz     r10, PIPE_READERS(r27)
        cmpwi   0, r10, 0
        beq-    pipe_sigpipe
        SIGNAL_PENDING pw_erestart
        lwz     r10, F_FLAGS(r31)
        andi.   r10, r10, O_NONBLOCK
        bne-    pipe_nonblock
        addi    r3, r27, PIPE_WAIT
        bl      sleep_on22
        b       pw_wait
pw_go:
        lwz     r10, PIPE_LOCK(r27)
        addi    r10, r10, 1
        stw     r10, PIPE_LOCK(r27)
pw_loop:
        cmpwi   0, r29, 0
        ble     pw_unlock
        lwz     r9, PIPE_LEN(r27)
        subfic  r25, r9, PIPE_BUF       # free
        cmpwi   0, r25, 0
        beq     pw_unlock
        lwz     r8, PIPE_START(r27)     # PIPE_END = (start + len) & (PIPE_BUF - 1)
        add     r8, r8, r9
        andi.   r8, r8, PIPE_BUF-1
        subfic  r26, r8, PIPE_BUF       # PIPE_MAX_WCHUNK
        cmplw   0, r26, r29
        ble     pw_c1
        mr      r26, r29
pw_c1:
        cmplw   0, r26, r25
        ble     pw_c2
        mr      r26, r25
pw_c2:
        lwz     r3, PIPE_BASE(r27)      # pipebuf
        add     r3, r3, r8
        add     r28, r28, r26
        add     r9, r9, r26
        stw     r9, PIPE_LEN(r27)
        subf    r29, r26, r29
        mr      r4, r30
        mr      r5, r26
        bl      copy_from_user22
        add     r30, r30, r26
        b       pw_loop
pw_unlock:
        lwz     r10, PIPE_LOCK(r27)
        addi    r10, r10, -1
        stw     r10, PIPE_LOCK(r27)
        addi    r3, r27, PIPE_WAIT
        bl      wake_up22
        li      r25, 1
        b       pw_outer
pw_finish:
        lis     r10, KDATA_XTIME@ha     # i_ctime = i_mtime = CURRENT_TIME
        lwz     r10, KDATA_XTIME@l(r10)
        stw     r10, I_CTIME(r27)
        stw     r10, I_MTIME(r27)
        lwz     r10, I_SB(r27)          # mark_inode_dirty: no superblock, nothing to do
        cmpwi   0, r10, 0
        bne-    pipe_dirty_sb
.ifndef LINUX_2_1_51
        UP      r27, I_ATOMIC           # up(&inode->i_atomic_write)
        DOWN    r27, I_SEM              # down(&inode->i_sem)
.endif
        mr      r3, r28
pw_out:
        lwz     r25, 16(r1)
        lwz     r26, 20(r1)
        lwz     r27, 24(r1)
        lwz     r28, 28(r1)
        lwz     r29, 32(r1)
        lwz     r30, 36(r1)
        lwz     r31, 40(r1)
        lwz     r0, 52(r1)
        addi    r1, r1, 48
        mtlr    r0
        blr
pw_espipe:
        li      r3, -ESPIPE
        b       pw_out
pw_erestart:
        li      r3, HOST_REFUSED        # a signal in the middle of a write: not modelled
        li      r4, 7
        b       host_stop22

pipe_sigpipe:
        li      r3, HOST_REFUSED
        li      r4, 9
        b       host_stop22
pipe_nonblock:
        li      r3, HOST_REFUSED
        li      r4, 10
        b       host_stop22
pipe_contended:
        li      r3, HOST_REFUSED
        li      r4, 11
        b       host_stop22
pipe_dirty_sb:
        li      r3, HOST_REFUSED
        li      r4, 12
        b       host_stop22

# access_ok(type, addr, n) as include/asm-ppc/uaccess.h has it (2.1.51: lines 26-29 at
# 94520e420; 2.2.0: 28-31 at f6cce5dae, the same test): __kernel_ok (current->tss.fs is
# KERNEL_DS, 0) or __user_ok (n <= 0x80000000 and addr <= 0x80000000 - n). copy_to_user /
# copy_from_user (lines 208-222 at 94520e420, 211-225 at f6cce5dae) call
# __copy_tofrom_user when it holds.
        .macro  ACCESS_OK addr
        lwz     r10, TSS+TSS_FS(r2)     # get_fs()
        cmpwi   0, r10, 0               # __kernel_ok: KERNEL_DS
        beq-    1f
        lis     r11, 0x8000             # __user_ok
        cmplw   0, r5, r11              # n <= 0x80000000
        bgt-    cu_fail
        subf    r11, r5, r11
        cmplw   0, \addr, r11           # addr <= 0x80000000 - n
        bgt-    cu_fail
1:
        .endm

        .align  5
        .globl  copy_to_user22
copy_to_user22:                         # r3 = to (user), r4 = from, r5 = n
        ACCESS_OK r3                    # access_ok(VERIFY_WRITE, to, n)
        b       __copy_tofrom_user22
        .globl  copy_from_user22
copy_from_user22:                       # r3 = to, r4 = from (user), r5 = n
        ACCESS_OK r4                    # access_ok(VERIFY_READ, from, n)
        b       __copy_tofrom_user22
cu_fail:
        li      r3, HOST_REFUSED        # a bad user pointer: not modelled
        li      r4, 13
        b       host_stop22
