/*
 * The system call and the VFS around ext3's write path in Linux 2.6.12, written for the book
 * from the algorithms of arch/i386/kernel/entry.S (system_call), fs/read_write.c
 * (sys_write with fget_light, vfs_write with rw_verify_area; do_sync_write folded into
 * generic_file_aio_write's call), fs/fs-writeback.c (__mark_inode_dirty), fs/stat.c
 * (inode_add_bytes), fs/buffer.c (__bread), kernel/sched.c (__wake_up) and kernel/wait.c
 * (wake_up_bit, __wake_up_bit).
 *
 * system_call stands in for int $0x80: the CPU would take the kernel stack from the TSS's
 * esp0; here the caller passes its task in %esi (write() has three arguments, in ebx, ecx,
 * edx, so esi is free) and system_call takes task->thread.esp0. It builds the frame the CPU
 * and SAVE_ALL build (ss, esp, eflags, cs, eip, orig_eax, es, ds, eax, ebp, edi, esi, edx,
 * ecx, ebx), calls sys_call_table[eax] with the saved ebx, ecx, edx as its arguments (as
 * i386 syscalls read them), stores the result in the frame's eax and returns as iret would.
 * Offsets: the equates yoshioka2005 ext3model puts in front. Calling convention (but
 * system_call): cdecl; ebx, esi, edi, ebp preserved.
 */

/* system_call: eax = syscall number, ebx, ecx, edx = its arguments, esi = the task */
        .globl  system_call
system_call:
        pushl   %edi                        # (edi carries the user stack below)
        movl    %esp, %edi                  # the user stack
        movl    TSK_ESP0(%esi), %esp        # the task's kernel stack
        pushl   $0x7b                       # ss
        pushl   %edi                        # esp
        pushfl                              # eflags
        pushl   $0x73                       # cs
        pushl   4(%edi)                     # eip: where the user's call returns
        pushl   %eax                        # orig_eax
        pushl   $0x7b                       # SAVE_ALL: es, ds, eax, ebp, edi, esi, edx,
        pushl   $0x7b                       # ecx, ebx
        pushl   %eax
        pushl   %ebp
        pushl   %edi
        pushl   %esi
        pushl   %edx
        pushl   %ecx
        pushl   %ebx
        movl    $-8192, %ebp                # GET_THREAD_INFO(%ebp)
        andl    %esp, %ebp
        testl   $0x1c1, TI_FLAGS(%ebp)      # _TIF_SYSCALL_TRACE | AUDIT | SECCOMP: no
        jnz     9f
        cmpl    $(NR_SYSCALLS), %eax
        jae     9f
        call    *sys_call_table(,%eax,4)
        movl    %eax, 24(%esp)              # the frame's eax
        cli                                 # syscall_exit: no work pending?
        testl   $0xffff, TI_FLAGS(%ebp)
        jnz     9f
        popl    %ebx                        # RESTORE_ALL
        popl    %ecx
        popl    %edx
        popl    %esi
        popl    %edi
        popl    %ebp
        popl    %eax
        addl    $12, %esp                   # ds, es, orig_eax
        pushl   8(%esp)                     # iret: eflags,
        popfl
        movl    12(%esp), %esp              # the user stack,
        popl    %edi                        # (the user's edi, saved on it at entry)
        ret                                 # and where the user's call returns
9:      ud2

/* sys_write(fd, buf, count) */
        .globl  sys_write
sys_write:
        pushl   %ebx
        movl    $-8192, %eax                # fget_light: current->files, one user
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        movl    TSK_FILES(%eax), %eax
        cmpl    $1, FILES_COUNT(%eax)
        jne     9f
        movl    8(%esp), %ecx               # fd
        cmpl    FILES_MAX_FDS(%eax), %ecx   # fcheck_files
        jae     9f
        movl    FILES_FD(%eax), %eax
        movl    (%eax,%ecx,4), %ebx         # file
        testl   %ebx, %ebx
        jz      9f
        leal    F_POS(%ebx), %eax           # vfs_write(file, buf, count, &pos)
        pushl   %eax
        pushl   20(%esp)
        pushl   20(%esp)
        pushl   %ebx
        call    vfs_write
        addl    $16, %esp
        popl    %ebx
        ret
9:      ud2

/* vfs_write(file, buf, count, pos) */
        .globl  vfs_write
vfs_write:
        pushl   %ebx
        movl    8(%esp), %ebx               # file
        testl   $2, F_MODE(%ebx)            # FMODE_WRITE
        jz      9f
        movl    12(%esp), %eax              # access_ok: buf + count below addr_limit
        addl    16(%esp), %eax
        jc      9f
        movl    F_INODE(%ebx), %eax         # rw_verify_area: mandatory locks?
        cmpl    $0, I_FLOCK(%eax)
        jne     9f
        pushl   20(%esp)                    # f_op->aio_write, through do_sync_write
        pushl   20(%esp)
        pushl   20(%esp)
        pushl   %ebx
        call    generic_file_aio_write
        addl    $16, %esp
        movl    $-8192, %ecx                # current->wchar += ret; current->syscw++
        andl    %esp, %ecx
        movl    TI_TASK(%ecx), %ecx
        addl    %eax, TSK_WCHAR(%ecx)
        incl    TSK_SYSCW(%ecx)
        popl    %ebx
        ret
9:      ud2

/* __mark_inode_dirty(inode, flags) (fs/fs-writeback.c 55-131 of 2.6.12.1): I_DIRTY_SYNC/
 * DATASYNC call the super block's dirty_inode (ext3_dirty_inode); an inode already this
 * dirty needs no more. Else (block_dump off) under inode_lock: the flags added to i_state;
 * a locked inode (I_LOCK: the unlocker lists it), an unhashed one not a block device's,
 * or one being freed, left so; one that was dirty already (I_DIRTY) stays where it is on
 * s_dirty or s_io. The slow path is reached in the paced runs by the first write after a
 * throttled writer's walk wrote the file back (__sync_single_inode left it I_DIRTY_PAGES
 * only: was_dirty). A clean inode's move to the head of i_sb's s_dirty, dated now, is not
 * in a run: the writers' files always keep dirty pages (the model's i_sb is ext3's own,
 * not the VFS super block the walk reads) */
        .globl  __mark_inode_dirty
__mark_inode_dirty:
        pushl   %ebx
        movl    8(%esp), %ebx               # inode
        testl   $3, 12(%esp)
        jz      1f
        pushl   %ebx                        # sb->s_op->dirty_inode(inode)
        call    ext3_dirty_inode
        addl    $4, %esp
1:      mfence                              # smp_mb() (the P4's alternative)
        movl    I_STATE(%ebx), %eax
        andl    12(%esp), %eax
        cmpl    12(%esp), %eax
        jne     2f
        popl    %ebx
        ret
2:      cmpl    $0, block_dump              # unlikely(block_dump): its printk, not in a run
        jne     9f
        leal    inode_lock, %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    12(%esp), %ecx              # flags
        movl    I_STATE(%ebx), %eax
        movl    %eax, %edx
        andl    %ecx, %edx
        cmpl    %ecx, %edx                  # dirtied meanwhile: nothing to do
        je      3f
        movl    %eax, %edx
        andl    $(I_DIRTY), %edx            # was_dirty
        orl     %ecx, %eax                  # inode->i_state |= flags
        movl    %eax, I_STATE(%ebx)
        testl   $(IS_LOCK), %eax            # locked: the unlocker lists it
        jnz     3f
        movzwl  I_MODE(%ebx), %eax          # !S_ISBLK(i_mode) && hlist_unhashed(&i_hash)
        andl    $(S_IFMT), %eax
        cmpl    $(S_IFBLK), %eax
        je      4f
        cmpl    $0, I_HASH+4(%ebx)          # i_hash.pprev
        je      3f
4:      testl   $(IS_FREEING | IS_CLEAR), I_STATE(%ebx)
        jnz     3f
        testl   %edx, %edx                  # on s_dirty or s_io already: not moved
        jz      9f                          # newly dirty: the dirty list, not in a run
3:      leal    inode_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        popl    %ebx
        ret
9:      ud2

/* inode_add_bytes(inode, bytes): i_blocks and i_bytes under i_lock */
        .globl  inode_add_bytes
inode_add_bytes:
        pushl   %ebx
        movl    8(%esp), %ebx
        leal    I_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_lock
        movl    16(%esp), %eax              # bytes
        movl    %eax, %ecx
        shrl    $9, %eax
        addl    %eax, I_BLOCKS(%ebx)        # i_blocks += bytes >> 9
        andl    $511, %ecx
        addw    %cx, I_BYTES(%ebx)
        cmpw    $512, I_BYTES(%ebx)
        jb      1f
        incl    I_BLOCKS(%ebx)
        subw    $512, I_BYTES(%ebx)
1:      call    _spin_unlock
        addl    $4, %esp
        popl    %ebx
        ret

/* __bread(bdev, block, size) -> an up-to-date buffer head (cached: no read in a run) */
        .globl  __bread
__bread:
        pushl   12(%esp)
        pushl   12(%esp)
        pushl   12(%esp)
        call    __getblk
        addl    $12, %esp
        testl   $(1 << BH_Uptodate), BH_STATE(%eax)
        jz      9f
        ret
9:      ud2

/* __wake_up(q): under the queue's lock, wake its waiters (none in a run) */
        .globl  __wake_up
__wake_up:
        pushl   %ebx
        movl    8(%esp), %ebx               # q: lock, task_list
        pushl   %ebx
        call    _spin_lock_irqsave
        movl    4(%ebx), %edx               # __wake_up_common: the list
        leal    4(%ebx), %ecx
        cmpl    %ecx, %edx
        jne     9f
        pushl   %eax
        pushl   %ebx
        call    _spin_unlock_irqrestore
        addl    $12, %esp
        popl    %ebx
        ret
9:      ud2

/* wake_up_bit(word): bit_waitqueue(word, BH_Lock): the zone's wait table at
 * hash_long(word << 5 | bit, wait_table_bits), then __wake_up_bit */
        .globl  wake_up_bit
wake_up_bit:
        movl    page_zone_normal, %ecx
        movl    4(%esp), %eax
        shll    $5, %eax
        orl     $(BH_Lock), %eax
        zone_wait_queue
        pushl   %eax
        call    __wake_up_bit
        addl    $4, %esp
        ret

/* __wake_up_bit(wq): waitqueue_active(wq)? (never in a run) */
        .globl  __wake_up_bit
__wake_up_bit:
        movl    4(%esp), %eax
        movl    4(%eax), %edx               # task_list.next
        leal    4(%eax), %eax
        cmpl    %eax, %edx
        jne     9f
        ret
9:      ud2
