/*
 * wb_kupdate's pass, Linux 2.6.12: pdflush's periodic write-back of "old" data, every
 * dirty_writeback_centisecs (500: 5 s), written for the book from the algorithms of
 * 2.6.12.1's sources (the NovantaPhotonics/linux-2.6.12.1 tree, Makefile 2.6.12.1):
 *   mm/page-writeback.c 391-431 wb_kupdate (83 dirty_writeback_centisecs, 88
 *     dirty_expire_centisecs, 110-116 get_writeback_state, 33 MAX_WRITEBACK_PAGES 1024);
 *   fs/super.c 342-359 sync_supers, 328-335 write_super, 320-324 drop_super, 151-156
 *     put_super, 112-121 __put_super, 130-142 __put_super_and_need_restart;
 *   fs/ext3/super.c 2036-2041 ext3_write_super (down_trylock of s_lock, which write_super
 *     holds: arch/i386/kernel/semaphore.c 157-177 __down_trylock; s_dirt cleared);
 *   fs/fs-writeback.c 409-441 writeback_inodes (the superblocks newest first), 303-390
 *     sync_sb_inodes (s_dirty spliced onto s_io unless kupdate finds s_io in use; the
 *     oldest inode first: its queue's capabilities, congestion, its age against the pass's
 *     start and older_than_this, writeback_acquire 674-677);
 *   kernel/timer.c 266-281 mod_timer (timer_pending: include/linux/timer.h 59-62);
 *   include/asm-i386/rwsem.h 98-118 __down_read, 123-141 __down_read_trylock, 186-207
 *     __up_read; include/asm-i386/semaphore.h down/up/down_trylock's inline parts.
 *
 * pdflush_kupdate(task) runs wb_kupdate on pdflush's kernel stack (current is pdflush,
 * PF_FLUSHER set). The model's state, as the mail's run leaves it: the ext3 file system's
 * super block dirty (s_dirt: ext3_new_block sets it at each block allocated, fs/ext3/
 * balloc.c), its dirty inodes the writers' files, re-dirtied young by background writeout
 * (fs-writeback.c 213-215), so the pass stops at the first of them (older_than_this); the
 * block device's pseudo super block holding the block device's inode (the metadata's
 * pages), which stops the pass either as young (dirtied under dirty_expire_centisecs ago)
 * or, once old, at writeback_acquire: pdflush's background writeout holds BDI_pdflush on
 * the disk's queue (the model's backing_dev_info has it set: ext3model.writeback). Paths
 * the model's state never takes are ``ud2``: blk_congestion_wait (no congested queue),
 * a memory-backed queue, destroy_super, the rwsem and semaphore slow paths. An inode that
 * passes the tests is written (__writeback_single_inode and below: routines/x86/
 * fs_writeback_2612.S; sync_sb_inodes 363-386 here): in the model's state none does for
 * wb_kupdate, and a throttled writer's writeback_inodes (balance_dirty_pages, .bdi its
 * queue) writes its chunk through it.
 * A symbol's address as an operand is taken with leal (the assembler cannot take it as an
 * immediate before the symbol is defined): one instruction more than gcc's at each.
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 */
        .equ    HZ, 1000                    # include/asm-i386/param.h
        .equ    MAX_WRITEBACK_PAGES, 1024
        .equ    WBC_NONBLOCKING, 1          # the bitfield word's bits, in declaration order
        .equ    WBC_CONGESTION, 2
        .equ    WBC_FOR_KUPDATE, 4
        .equ    WB_SYNC_HOLD, 2             # include/linux/writeback.h 28
        .equ    BDI_CAP_NO_WRITEBACK, 2     # include/linux/backing-dev.h 45
        .equ    BDI_write_congested, 1      # enum bdi_state, 17-20
        .equ    PF_FLUSHER, 0x00001000      # include/linux/sched.h 782
        .equ    WB_FRAME, 64                # wbc 0-39, oldest_jif 40, wbs 44-59, nr_to_write 60

/* pdflush_kupdate(task): wb_kupdate on the task's kernel stack */
        .globl  pdflush_kupdate
pdflush_kupdate:
        pushl   %ebp
        movl    %esp, %ebp
        movl    8(%ebp), %eax               # task
        movl    TSK_ESP0(%eax), %esp        # its kernel stack
        pushl   %ebp
        call    wb_kupdate
        popl    %ebp
        movl    %ebp, %esp
        popl    %ebp
        ret

/* (x * HZ) / 100 as gcc computes a signed division by 100: eax in, edx out; ecx clobbered */
        .macro  centisecs_to_jiffies
        imull   $(HZ), %eax, %ecx
        movl    %ecx, %eax
        movl    $0x51eb851f, %edx
        imull   %edx
        sarl    $5, %edx
        sarl    $31, %ecx
        subl    %ecx, %edx
        .endm

        .globl  wb_kupdate
wb_kupdate:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $(WB_FRAME), %esp
        movl    $0, WBC_BDI(%esp)           # the writeback_control's initializer
        movl    $0, WBC_SYNC_MODE(%esp)     # WB_SYNC_NONE
        leal    40(%esp), %eax
        movl    %eax, WBC_OLDER_THAN_THIS(%esp)
        movl    $0, WBC_NR_TO_WRITE(%esp)
        movl    $0, WBC_PAGES_SKIPPED(%esp)
        movl    $0, WBC_START(%esp)
        movl    $0, WBC_START+4(%esp)
        movl    $0, WBC_END(%esp)
        movl    $0, WBC_END+4(%esp)
        movl    $(WBC_NONBLOCKING | WBC_FOR_KUPDATE), WBC_FLAGS(%esp)
        call    sync_supers
        xorl    %esi, %esi                  # get_writeback_state
1:      pushl   writeback_state_members(,%esi,4)
        call    __read_page_state
        addl    $4, %esp
        movl    %eax, 44(%esp,%esi,4)
        incl    %esi
        cmpl    $4, %esi
        jb      1b
        movl    dirty_expire_centisecs, %eax    # oldest_jif
        centisecs_to_jiffies
        movl    jiffies, %eax
        subl    %edx, %eax
        movl    %eax, 40(%esp)
        movl    jiffies, %ebx               # start_jif
        movl    dirty_writeback_centisecs, %eax # next_jif = start_jif + the period
        centisecs_to_jiffies
        leal    (%ebx,%edx), %edi
        movl    44(%esp), %esi              # nr_to_write = nr_dirty + nr_unstable
        addl    48(%esp), %esi
        addl    inodes_stat, %esi           # + nr_inodes - nr_unused
        subl    inodes_stat+4, %esi
2:      testl   %esi, %esi                  # while (nr_to_write > 0)
        jle     4f
        andl    $~(WBC_CONGESTION), WBC_FLAGS(%esp)
        movl    $(MAX_WRITEBACK_PAGES), WBC_NR_TO_WRITE(%esp)
        pushl   %esp
        call    writeback_inodes
        addl    $4, %esp
        movl    WBC_NR_TO_WRITE(%esp), %eax
        testl   %eax, %eax
        jle     3f
        testl   $(WBC_CONGESTION), WBC_FLAGS(%esp)
        jnz     9f                          # blk_congestion_wait: not in the model
        jmp     4f                          # all the old data is written
3:      subl    $(MAX_WRITEBACK_PAGES), %esi
        addl    %eax, %esi
        jmp     2b
4:      movl    jiffies, %eax               # time_before(next_jif, jiffies + HZ)
        addl    $(HZ), %eax
        movl    %edi, %ecx
        subl    %eax, %ecx
        jns     5f
        movl    %eax, %edi
5:      cmpl    $0, dirty_writeback_centisecs
        je      6f
        pushl   %edi
        pushl   wb_timer
        call    mod_timer
        addl    $8, %esp
6:      addl    $(WB_FRAME), %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* mod_timer(timer, expires): the same expiry on a pending timer returns 1, else __mod_timer */
        .globl  mod_timer
mod_timer:
        movl    4(%esp), %eax
        movl    8(%esp), %edx
        cmpl    $0, TIMER_FUNCTION(%eax)    # BUG_ON(!timer->function)
        je      9f
        cmpl    $(TIMER_MAGIC_VALUE), TIMER_MAGIC(%eax)     # check_timer (timer_2612.S's equate)
        jne     9f
        cmpl    %edx, TIMER_EXPIRES(%eax)
        jne     1f
        cmpl    $0, TIMER_BASE(%eax)        # timer_pending
        je      1f
        movl    $1, %eax
        ret
1:      jmp     __mod_timer                 # a tail call: the same arguments
9:      ud2

/* sync_supers(): every dirty super block written (write_super), the list walked again from
 * its head after each */
        .globl  sync_supers
sync_supers:
        pushl   %ebx
1:      leal    sb_lock, %eax                    # restart
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    super_blocks, %ebx
2:      leal    super_blocks, %eax
        cmpl    %eax, %ebx
        je      4f
        cmpb    $0, VSB_DIRT(%ebx)
        jne     3f
        movl    VSB_LIST(%ebx), %ebx
        jmp     2b
3:      incl    VSB_COUNT(%ebx)
        leal    sb_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        leal    VSB_UMOUNT(%ebx), %eax      # down_read(&sb->s_umount)
        lock incl (%eax)
        js      9f
        pushl   %ebx
        call    write_super
        call    drop_super
        addl    $4, %esp
        jmp     1b
4:      leal    sb_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        popl    %ebx
        ret
9:      ud2

/* write_super(sb): under lock_super, the file system's write_super if the super block is
 * mounted and dirty */
write_super:
        pushl   %ebx
        movl    8(%esp), %ebx
        leal    VSB_LOCK(%ebx), %eax        # lock_super: down(&sb->s_lock)
        lock decl (%eax)
        js      9f
        cmpl    $0, VSB_ROOT(%ebx)
        je      1f
        cmpb    $0, VSB_DIRT(%ebx)
        je      1f
        movl    VSB_OP(%ebx), %eax
        movl    SOPS_WRITE_SUPER(%eax), %eax
        testl   %eax, %eax
        jz      1f
        pushl   %ebx
        call    *%eax
        addl    $4, %esp
1:      leal    VSB_LOCK(%ebx), %eax        # unlock_super: up(&sb->s_lock)
        lock incl (%eax)
        jle     9f
        popl    %ebx
        ret
9:      ud2

/* drop_super(sb): up_read(&sb->s_umount), put_super */
drop_super:
        movl    4(%esp), %ecx
        leal    VSB_UMOUNT(%ecx), %eax
        movl    $-1, %edx                   # -RWSEM_ACTIVE_READ_BIAS
        lock xaddl %edx, (%eax)
        js      9f
        leal    sb_lock, %eax                    # put_super
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    4(%esp), %ecx
        decl    VSB_COUNT(%ecx)             # __put_super: the last reference is not ours
        jz      9f
        leal    sb_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        ret
9:      ud2

/* ext3_write_super(sb): down_trylock of s_lock (held by write_super: its slow path,
 * __down_trylock) must fail; s_dirt cleared */
        .globl  ext3_write_super
ext3_write_super:
        pushl   %ebx
        movl    8(%esp), %ebx
        leal    VSB_LOCK(%ebx), %ecx        # down_trylock
        lock decl (%ecx)
        js      1f
        ud2                                 # it was free: BUG()
1:      pushl   %ecx
        call    __down_trylock
        addl    $4, %esp
        testl   %eax, %eax
        jz      9f
        movb    $0, VSB_DIRT(%ebx)
        popl    %ebx
        ret
9:      ud2

/* __down_trylock(sem) -> 1: under the wait queue's lock the sleepers (and this failed try)
 * added back to the count; not negative, wake_up_locked (an empty wait list) */
__down_trylock:
        pushl   %ebx
        movl    8(%esp), %ebx
        leal    SEM_WAIT(%ebx), %eax
        pushl   %eax
        call    _spin_lock_irqsave
        addl    $4, %esp
        pushl   %eax                        # flags
        movl    SEM_SLEEPERS(%ebx), %eax    # sleepers = sem->sleepers + 1
        incl    %eax
        movl    $0, SEM_SLEEPERS(%ebx)
        lock addl %eax, SEM_COUNT(%ebx)     # atomic_add_negative
        js      1f
        movl    SEM_WAIT+4(%ebx), %eax      # wake_up_locked: __wake_up_common's walk
        leal    SEM_WAIT+4(%ebx), %ecx
        cmpl    %ecx, %eax
        jne     9f                          # a sleeper: not in the model
1:      leal    SEM_WAIT(%ebx), %eax
        pushl   %eax
        call    _spin_unlock_irqrestore
        addl    $8, %esp
        movl    $1, %eax
        popl    %ebx
        ret
9:      ud2

/* writeback_inodes(wbc): each super block with dirty or parked inodes, newest first, its
 * inodes written (sync_sb_inodes under inode_lock, s_umount read-held), until nr_to_write
 * is used up */
        .globl  writeback_inodes
writeback_inodes:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # wbc
        leal    sb_lock, %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
1:      movl    super_blocks+4, %ebx        # restart: super_blocks.prev
2:      leal    super_blocks, %eax
        cmpl    %eax, %ebx
        je      6f
        leal    VSB_DIRTY(%ebx), %eax       # list_empty(&sb->s_dirty)
        cmpl    %eax, (%eax)
        jne     3f
        leal    VSB_IO(%ebx), %eax          # list_empty(&sb->s_io)
        cmpl    %eax, (%eax)
        je      5f
3:      incl    VSB_COUNT(%ebx)
        leal    sb_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        leal    VSB_UMOUNT(%ebx), %ecx      # down_read_trylock(&sb->s_umount)
        movl    (%ecx), %eax
7:      movl    %eax, %edx
        addl    $1, %edx                    # RWSEM_ACTIVE_READ_BIAS
        jle     4f
        lock cmpxchgl %edx, (%ecx)
        jnz     7b
        cmpl    $0, VSB_ROOT(%ebx)
        je      8f
        leal    inode_lock, %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        pushl   %esi
        pushl   %ebx
        call    sync_sb_inodes
        addl    $8, %esp
        leal    inode_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
8:      leal    VSB_UMOUNT(%ebx), %eax      # up_read
        movl    $-1, %edx
        lock xaddl %edx, (%eax)
        js      9f
4:      leal    sb_lock, %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        leal    VSB_LIST(%ebx), %eax        # __put_super_and_need_restart
        cmpl    %eax, (%eax)
        je      9f                          # the super block removed: not in the model
        decl    VSB_COUNT(%ebx)
        jz      9f                          # BUG_ON(sb->s_count == 0)
5:      cmpl    $0, WBC_NR_TO_WRITE(%esi)
        jle     6f
        movl    VSB_LIST+4(%ebx), %ebx      # sb->s_list.prev
        jmp     2b
6:      leal    sb_lock, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* sync_sb_inodes(sb, wbc): s_dirty spliced onto s_io (kupdate: only if s_io is empty);
 * the oldest parked inode's tests, in 2.6.12's order. Every inode of the model's state
 * stops wb_kupdate's walk (young, or its queue held by another pdflush); an inode that
 * passes is written (__writeback_single_inode, fs_writeback_2612.S), pdflush holding the
 * queue around it (writeback_acquire, writeback_release), then put (iput) and the walk
 * goes on while nr_to_write lasts. inode->i_sb is passed as the sb (the model's i_sb is
 * EXT3_SB's folded block). */
        .globl  sync_sb_inodes
sync_sb_inodes:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebx              # sb
        movl    24(%esp), %esi              # wbc
        movl    jiffies, %ebp               # start (livelock avoidance)
        testl   $(WBC_FOR_KUPDATE), WBC_FLAGS(%esi)
        jz      1f
        leal    VSB_IO(%ebx), %eax
        cmpl    %eax, (%eax)
        jne     2f
1:      leal    VSB_DIRTY(%ebx), %eax       # list_splice_init(&sb->s_dirty, &sb->s_io)
        movl    (%eax), %ecx                # first
        cmpl    %eax, %ecx
        je      2f
        movl    4(%eax), %edx               # last
        leal    VSB_IO(%ebx), %edi
        pushl   %ebp
        movl    (%edi), %ebp                # at = head->next
        movl    %edi, 4(%ecx)               # first->prev = head
        movl    %ecx, (%edi)                # head->next = first
        movl    %ebp, (%edx)                # last->next = at
        movl    %edx, 4(%ebp)               # at->prev = last
        popl    %ebp
        movl    %eax, (%eax)                # INIT_LIST_HEAD(s_dirty)
        movl    %eax, 4(%eax)
2:      leal    VSB_IO(%ebx), %eax          # while (!list_empty(&sb->s_io))
        movl    4(%eax), %edi               # s_io.prev
        cmpl    %eax, %edi
        je      8f
        subl    $(I_LIST), %edi             # the inode
        movl    I_MAPPING(%edi), %eax
        movl    AS_BDI(%eax), %edx          # its backing_dev_info
        testl   $(BDI_CAP_NO_WRITEBACK), BDI_CAPABILITIES(%edx)
        jnz     9f                          # a memory-backed queue: not in the model
        testl   $(WBC_NONBLOCKING), WBC_FLAGS(%esi)
        jz      3f
        testl   $(1 << BDI_write_congested), BDI_STATE(%edx)
        jz      3f
        orl     $(WBC_CONGESTION), WBC_FLAGS(%esi)
        cmpl    blockdev_superblock, %ebx
        jne     8f                          # skip a congested file system
        leal    I_LIST(%edi), %eax          # list_move(&inode->i_list, &sb->s_dirty)
        pushl   %edx
        call    kupdate_list_move_dirty
        popl    %edx
        jmp     2b
3:      cmpl    $0, WBC_BDI(%esi)           # a queue asked for (kupdate asks for none,
        je      3f                          # a throttled writer for its own)
        cmpl    WBC_BDI(%esi), %edx
        je      3f
        cmpl    blockdev_superblock, %ebx
        jne     8f                          # the file system has the wrong queue
        leal    I_LIST(%edi), %eax          # a block device on the wrong queue: skipped
        pushl   %edx
        call    kupdate_list_move_dirty
        popl    %edx
        jmp     2b
3:      movl    I_DIRTIED_WHEN(%edi), %eax  # time_after(dirtied_when, start)
        movl    %ebp, %ecx
        subl    %eax, %ecx
        js      8f
        movl    WBC_OLDER_THAN_THIS(%esi), %ecx
        testl   %ecx, %ecx
        jz      4f
        movl    (%ecx), %ecx                # time_after(dirtied_when, *older_than_this)
        subl    %eax, %ecx
        js      8f
4:      movl    $-8192, %eax                # current_is_pdflush()
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        testl   $(PF_FLUSHER), TSK_FLAGS(%eax)
        jz      5f
        lock btsl $(BDI_pdflush), BDI_STATE(%edx)   # writeback_acquire
        jc      8f                          # another pdflush flushes this queue
5:      testl   $(IS_FREEING), I_STATE(%edi)    # BUG_ON(inode->i_state & I_FREEING)
        jnz     9f
        pushl   %edx                        # bdi, for writeback_release
        pushl   %edi
        call    __iget
        addl    $4, %esp
        pushl   WBC_PAGES_SKIPPED(%esi)     # pages_skipped
        pushl   %esi                        # __writeback_single_inode(inode, wbc), sb
        pushl   %ebx                        # for inode->i_sb (routines/x86/
        pushl   %edi                        # fs_writeback_2612.S)
        call    __writeback_single_inode
        addl    $12, %esp
        cmpl    $(WB_SYNC_HOLD), WBC_SYNC_MODE(%esi)
        je      9f                          # sys_sync's hold: not in the model
        movl    $-8192, %eax                # current_is_pdflush(): writeback_release
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        testl   $(PF_FLUSHER), TSK_FLAGS(%eax)
        jz      6f
        movl    4(%esp), %edx
        btl     $(BDI_pdflush), BDI_STATE(%edx) # BUG_ON(!writeback_in_progress(bdi))
        jnc     9f
        lock btrl $(BDI_pdflush), BDI_STATE(%edx)
6:      popl    %eax                        # pages skipped meanwhile: locked buffers,
        cmpl    %eax, WBC_PAGES_SKIPPED(%esi)   # the inode skipped for now
        je      7f
        leal    I_LIST(%edi), %eax
        call    kupdate_list_move_dirty
7:      addl    $4, %esp
        leal    inode_lock, %eax
        pushl   %eax
        call    _spin_unlock
        call    cond_resched
        pushl   %edi
        pushl   %ebx
        call    iput                        # iput(inode), sb for inode->i_sb
        addl    $8, %esp
        call    _spin_lock                  # inode_lock, still on the stack
        addl    $4, %esp
        cmpl    $0, WBC_NR_TO_WRITE(%esi)
        jg      2b
        jmp     8f
9:      ud2
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* list_move(eax = entry, the s_dirty of ebx's super block): unlinked, added at the head;
 * eax, ecx, edx clobbered */
kupdate_list_move_dirty:
        movl    (%eax), %ecx                # __list_del
        movl    4(%eax), %edx
        movl    %edx, 4(%ecx)
        movl    %ecx, (%edx)
        leal    VSB_DIRTY(%ebx), %edx       # list_add(entry, head)
        movl    (%edx), %ecx
        movl    %eax, 4(%ecx)
        movl    %ecx, (%eax)
        movl    %edx, 4(%eax)
        movl    %eax, (%edx)
        ret

        .data
        .align  4
        .globl  super_blocks
super_blocks:                               # fs/super.c: LIST_HEAD(super_blocks), set by
        .long   super_blocks, super_blocks  # the Kernel (its super blocks, oldest first)
        .globl  sb_lock
sb_lock:
        .long   1
        .globl  inode_lock
inode_lock:
        .long   1
        .globl  inodes_stat
inodes_stat:                                # nr_inodes, nr_unused: set by the Kernel
        .long   0, 0
        .globl  blockdev_superblock
blockdev_superblock:
        .long   0
dirty_writeback_centisecs:
        .long   500                         # mm/page-writeback.c 83
dirty_expire_centisecs:
        .long   3000                        # 88
        .globl  wb_timer
wb_timer:                                   # &wb_timer: its struct timer_list is made by the
        .long   0                           # Kernel (TIMER_MAGIC's bytes read as code here
                                            # would be an xchg, a special, to the cost model)
        .globl  ext3_sops
ext3_sops:                                  # struct super_operations: write_super at 36
        .long   0, 0, 0, 0, ext3_write_inode, 0, 0, 0, 0, ext3_write_super
        .text

/* wb_timer_fn: the timer's function (pdflush_operation(wb_kupdate)): never due in a run */
        .globl  wb_timer_fn
wb_timer_fn:
        ud2

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
