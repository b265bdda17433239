/*
 * The block layer under a buffer's write in Linux 2.6.12, written for the book from the
 * algorithms of fs/buffer.c (submit_bh, end_bio_bh_io_sync), fs/bio.c (bio_alloc_bioset,
 * bio_init, bio_put, bio_destructor, bio_endio) and drivers/block/ll_rw_blk.c (submit_bio,
 * generic_make_request, __make_request, get_request, rq_init, drive_stat_acct,
 * disk_round_stats, add_request, __end_that_request_first, end_that_request_last,
 * __blk_put_request, freed_request), with drivers/block/noop-iosched.c's queue (a list) in
 * place of the anticipatory elevator.
 *
 * submit_bh(rw, bh) builds a bio for the buffer (a bio and its one bio_vec from their slabs),
 * submits it (generic_make_request -> q->make_request_fn = __make_request: the queue locked,
 * a request from its slab, filled from the bio, accounted, queued); then the disk, which the
 * model has not, completes it at once (disk_complete_request: the request taken off the
 * queue, __end_that_request_first -> bio_endio -> end_bio_bh_io_sync -> the buffer's
 * b_end_io, end_that_request_last -> __blk_put_request), and submit_bh's bio_put frees the
 * bio. The queue is therefore empty at every submission, so __make_request never reaches
 * the elevator's merge (elv_merge: on the machine, a write queued behind others merges
 * with the one before it); the unplug timer, the SCSI command and the driver's interrupt
 * entry are left out. Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets:
 * the equates emu/papers/yoshioka2005/ext3model.py puts in front.
 */
        .globl  submit_bh
submit_bh:
        pushl   %ebx
        pushl   %esi
        movl    16(%esp), %ebx              # bh
        testl   $(1 << BH_Lock), BH_STATE(%ebx)
        jz      9f                          # BUG_ON(!buffer_locked(bh))
        testl   $(1 << BH_Mapped), BH_STATE(%ebx)
        jz      9f                          # BUG_ON(!buffer_mapped(bh))
        cmpl    $0, BH_END_IO(%ebx)
        je      9f                          # BUG_ON(!bh->b_end_io)
        lock btsl $(BH_Req), BH_STATE(%ebx) # test_set_buffer_req
        pushl   $1                          # bio = bio_alloc(GFP_NOIO, 1)
        call    bio_alloc
        addl    $4, %esp
        movl    %eax, %esi
        movl    BH_BLOCKNR(%ebx), %eax      # bi_sector = b_blocknr * (b_size >> 9)
        movl    BH_SIZE(%ebx), %ecx
        shrl    $9, %ecx
        imull   %ecx, %eax
        movl    %eax, BIO_SECTOR(%esi)
        movl    BH_BDEV(%ebx), %eax
        movl    %eax, BIO_BDEV(%esi)
        movl    BIO_IO_VEC(%esi), %edx
        movl    BH_PAGE(%ebx), %eax
        movl    %eax, BVEC_PAGE(%edx)
        movl    BH_SIZE(%ebx), %eax
        movl    %eax, BVEC_LEN(%edx)
        movl    BH_DATA(%ebx), %eax         # bh_offset: b_data within its page
        andl    $(PAGE_SIZE - 1), %eax
        movl    %eax, BVEC_OFFSET(%edx)
        movw    $1, BIO_VCNT(%esi)
        movw    $0, BIO_IDX(%esi)
        movl    BH_SIZE(%ebx), %eax
        movl    %eax, BIO_SIZE(%esi)
        leal    end_bio_bh_io_sync, %eax
        movl    %eax, BIO_END_IO(%esi)
        movl    %ebx, BIO_PRIVATE(%esi)
        lock incl BIO_CNT(%esi)             # bio_get
        pushl   %esi
        pushl   16(%esp)                    # rw
        call    submit_bio
        addl    $8, %esp
        pushl   %esi
        call    bio_put
        addl    $4, %esp
        xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* bio_alloc(nr_iovecs) -> bio (bio_alloc_bioset on fs_bio_set): a bio from bio_slab,
 * bio_init, a bio_vec array from the smallest biovec slab (nr_iovecs 1) */
        .globl  bio_alloc
bio_alloc:
        pushl   %ebx
        cmpl    $1, 8(%esp)
        jne     9f                          # one vector only: a buffer's page
        pushl   bio_slab                    # mempool_alloc(bio_pool): the slab first
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, %ebx
        xorl    %eax, %eax                  # bio_init
        movl    %eax, BIO_NEXT(%ebx)
        movl    $(1 << BIO_UPTODATE), BIO_FLAGS(%ebx)
        movl    %eax, BIO_RW(%ebx)
        movl    %eax, BIO_VCNT(%ebx)        # bi_vcnt, bi_idx
        movl    %eax, BIO_PHYS_SEGMENTS(%ebx)   # bi_phys_segments, bi_hw_segments
        movl    %eax, BIO_HW_FRONT_SIZE(%ebx)
        movl    %eax, BIO_HW_BACK_SIZE(%ebx)
        movl    %eax, BIO_SIZE(%ebx)
        movl    %eax, BIO_MAX_VECS(%ebx)
        movl    %eax, BIO_END_IO(%ebx)
        movl    $1, BIO_CNT(%ebx)           # atomic_set(&bio->bi_cnt, 1)
        movl    %eax, BIO_PRIVATE(%ebx)
        pushl   biovec_slab                 # bvec_alloc_bs(gfp, 1, &idx): pool 0
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    $1, BIO_MAX_VECS(%ebx)      # bvec_slabs[0].nr_vecs (idx 0 in bi_flags)
        movl    %eax, BIO_IO_VEC(%ebx)
        leal    bio_destructor, %eax
        movl    %eax, BIO_DESTRUCTOR(%ebx)
        movl    %ebx, %eax
        popl    %ebx
        ret
9:      ud2

/* bio_put(bio): the last reference frees it through bi_destructor */
        .globl  bio_put
bio_put:
        movl    4(%esp), %eax
        lock decl BIO_CNT(%eax)             # atomic_dec_and_test
        jnz     1f
        movl    $0, BIO_NEXT(%eax)
        pushl   %eax
        call    *BIO_DESTRUCTOR(%eax)
        addl    $4, %esp
1:      ret

/* bio_destructor(bio): its vectors and itself back to their pools (mempool_free: the slab) */
        .globl  bio_destructor
bio_destructor:
        pushl   %ebx
        movl    8(%esp), %ebx
        pushl   BIO_IO_VEC(%ebx)
        pushl   biovec_slab
        call    kmem_cache_free
        addl    $8, %esp
        pushl   %ebx
        pushl   bio_slab
        call    kmem_cache_free
        addl    $8, %esp
        popl    %ebx
        ret

/* submit_bio(rw, bio): bi_rw, the pages-out count (mod_page_state(pgpgout)), then
 * generic_make_request */
        .globl  submit_bio
submit_bio:
        pushl   %ebx
        movl    12(%esp), %ebx              # bio
        cmpl    $0, BIO_SIZE(%ebx)
        je      9f
        movl    8(%esp), %eax
        movl    %eax, BIO_RW(%ebx)
        movl    BIO_SIZE(%ebx), %eax        # count = bio_sectors(bio)
        shrl    $9, %eax
        pushl   %eax
        pushl   $(PS_PGPGOUT)
        call    __mod_page_state
        addl    $8, %esp
        pushl   %ebx
        call    generic_make_request
        addl    $4, %esp
        popl    %ebx
        ret
9:      ud2

/* generic_make_request(bio): the sector within the device, the device's queue, the bio
 * within the queue's limit and the queue alive; then q->make_request_fn(q, bio), and the
 * disk's completion */
        .globl  generic_make_request
generic_make_request:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # bio
        movl    BIO_BDEV(%ebx), %esi        # bdev
        movl    BIO_SIZE(%ebx), %ecx
        shrl    $9, %ecx                    # nr_sectors
        movl    BDEV_NR_SECTS(%esi), %eax   # maxsector: bd_inode->i_size >> 9
        subl    %ecx, %eax
        jb      9f
        cmpl    BIO_SECTOR(%ebx), %eax
        jb      9f                          # handle_bad_sector
        movl    BDEV_QUEUE(%esi), %esi      # q = bdev_get_queue(bdev)
        cmpl    Q_MAX_HW_SECTORS(%esi), %ecx
        ja      9f                          # bio too big
        testl   $(1 << QUEUE_FLAG_DEAD), Q_QUEUE_FLAGS(%esi)
        jnz     9f
        pushl   %ebx                        # (no partition to remap)
        pushl   %esi
        call    *Q_MAKE_REQUEST_FN(%esi)
        call    disk_complete_request       # the disk: (q), at once
        addl    $8, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* __make_request(q, bio): no bounce (the queue's bounce_pfn covers all memory); the queue
 * locked; an empty queue is plugged and gets a new request (get_request, the queue unlocked
 * meanwhile), filled from the bio, accounted and added (noop: the queue's tail) */
        .globl  __make_request
__make_request:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %esi              # q
        movl    24(%esp), %ebx              # bio
        movl    Q_BOUNCE_PFN(%esi), %eax    # blk_queue_bounce: bounce_pfn >= blk_max_pfn
        cmpl    blk_max_pfn, %eax
        jb      9f
        xorl    %ebp, %ebp                  # freereq = NULL
1:      pushl   Q_QUEUE_LOCK(%esi)          # again: spin_lock_irq(q->queue_lock)
        call    _spin_lock_irq
        addl    $4, %esp
        leal    Q_QUEUE_HEAD(%esi), %eax    # elv_queue_empty (noop: list_empty)
        cmpl    %eax, (%eax)
        jne     9f                          # a queued request: the merge (not in a run)
        lock btsl $(QUEUE_FLAG_PLUGGED), Q_QUEUE_FLAGS(%esi)    # blk_plug_device
        testl   %ebp, %ebp                  # get_rq
        jnz     2f
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        movl    %esi, (%esp)
        pushl   $1                          # WRITE
        pushl   %esi
        call    get_request
        addl    $12, %esp
        testl   %eax, %eax
        jz      9f                          # get_request_wait: not in a run
        movl    %eax, %ebp
        jmp     1b
2:      orl     $(REQ_CMD), RQ_FLAGS(%ebp)  # the request from the bio
        movl    $0, RQ_ERRORS(%ebp)
        movl    BIO_SECTOR(%ebx), %eax
        movl    %eax, RQ_SECTOR(%ebp)
        movl    %eax, RQ_HARD_SECTOR(%ebp)
        movl    BIO_SIZE(%ebx), %eax
        shrl    $9, %eax
        movl    %eax, RQ_NR_SECTORS(%ebp)
        movl    %eax, RQ_HARD_NR_SECTORS(%ebp)
        movl    %eax, RQ_CURRENT_NR_SECTORS(%ebp)   # bio_cur_sectors: one vector
        movl    %eax, RQ_HARD_CUR_SECTORS(%ebp)
        orl     $(1 << BIO_SEG_VALID), BIO_FLAGS(%ebx)  # bio_phys_segments: recounted
        movl    $0x00010001, BIO_PHYS_SEGMENTS(%ebx)    # one page: one each
        movl    $0x00010001, RQ_NR_PHYS_SEGMENTS(%ebp)
        movl    $0, RQ_BUFFER(%ebp)         # bio_data: a highmem page has no address
        movl    $0, RQ_WAITING(%ebp)
        movl    %ebx, RQ_BIO(%ebp)
        movl    %ebx, RQ_BIOTAIL(%ebp)
        movl    BIO_BDEV(%ebx), %eax
        movl    BDEV_DISK(%eax), %eax
        movl    %eax, RQ_RQ_DISK(%ebp)
        movl    jiffies, %eax
        movl    %eax, RQ_START_TIME(%ebp)
        pushl   $1                          # add_request: drive_stat_acct(req, nr, 1)
        pushl   RQ_NR_SECTORS(%ebp)
        pushl   %ebp
        call    drive_stat_acct
        addl    $12, %esp
        leal    Q_QUEUE_HEAD(%esi), %eax    # __elv_add_request: noop's list_add_tail
        movl    4(%eax), %ecx               # last = head->prev
        movl    %eax, RQ_QUEUELIST(%ebp)
        movl    %ecx, RQ_QUEUELIST + 4(%ebp)
        movl    %ebp, (%ecx)
        movl    %ebp, 4(%eax)
        movl    %ebp, Q_LAST_MERGE(%esi)    # rq_mergeable: the merge hint
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        addl    $4, %esp
        xorl    %eax, %eax
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* get_request(q, rw) -> request: the request list's count under the queue lock, then a
 * request from its slab (blk_alloc_request: rq->flags = rw; noop keeps no private data),
 * rq_init, rq->rl */
        .globl  get_request
get_request:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # q
        testl   $(1 << QUEUE_FLAG_DRAIN), Q_QUEUE_FLAGS(%esi)
        jnz     9f
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_lock_irq
        addl    $4, %esp
        movl    16(%esp), %ecx              # rw
        movl    Q_RQ_COUNT(%esi,%ecx,4), %eax
        incl    %eax
        cmpl    Q_NR_REQUESTS(%esi), %eax
        jae     9f                          # the queue full: not in a run
        incl    Q_RQ_COUNT(%esi,%ecx,4)     # rl->count[rw]++
        movl    $0, Q_RQ_STARVED(%esi,%ecx,4)
        cmpl    Q_CONGESTION_ON(%esi), %eax # queue_congestion_on_threshold: not reached
        jae     9f
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        addl    $4, %esp
        pushl   request_cachep              # blk_alloc_request: mempool_alloc
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, %ebx
        movl    16(%esp), %ecx
        movl    %ecx, RQ_FLAGS(%ebx)        # rq->flags = rw
        leal    RQ_QUEUELIST(%ebx), %eax    # rq_init
        movl    %eax, RQ_QUEUELIST(%ebx)
        movl    %eax, RQ_QUEUELIST + 4(%ebx)
        movl    %esi, RQ_Q(%ebx)
        movl    $(RQ_ACTIVE), RQ_RQ_STATUS(%ebx)
        xorl    %eax, %eax
        movl    %eax, RQ_BIO(%ebx)
        movl    %eax, RQ_BIOTAIL(%ebx)
        movl    %eax, RQ_BUFFER(%ebx)
        movl    $1, RQ_REF_COUNT(%ebx)
        movl    %eax, RQ_WAITING(%ebx)
        movl    %eax, RQ_SPECIAL(%ebx)
        movl    %eax, RQ_NR_PHYS_SEGMENTS(%ebx)
        movl    %eax, RQ_END_IO(%ebx)
        leal    Q_RQ_COUNT(%esi), %eax      # rq->rl = &q->rq
        movl    %eax, RQ_RL(%ebx)
        movl    %ebx, %eax
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* drive_stat_acct(rq, nr_sectors, new_io): the disk's write sectors (this CPU's
 * disk_stats), and for a new request the queue's time accounting and in_flight */
        .globl  drive_stat_acct
drive_stat_acct:
        movl    4(%esp), %eax               # rq
        movl    RQ_RQ_DISK(%eax), %edx
        testl   %edx, %edx
        jz      1f
        movl    $-8192, %ecx                # __disk_stat_add(disk, write_sectors, nr)
        andl    %esp, %ecx
        movl    TI_CPU(%ecx), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        movl    8(%esp), %eax
        addl    %eax, PCPU_DISK_STATS + DS_WRITE_SECTORS(%ecx)
        cmpl    $0, 12(%esp)
        jne     2f
        incl    PCPU_DISK_STATS + DS_WRITE_MERGES(%ecx)
1:      ret
2:      pushl   %edx
        call    disk_round_stats
        popl    %edx
        incl    DK_IN_FLIGHT(%edx)
        ret

/* disk_round_stats(disk): time_in_queue and io_ticks up to now (jiffies) */
        .globl  disk_round_stats
disk_round_stats:
        pushl   %ebx
        movl    8(%esp), %ebx               # disk
        movl    $-8192, %ecx
        andl    %esp, %ecx
        movl    TI_CPU(%ecx), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        movl    jiffies, %eax               # now
        movl    %eax, %edx
        subl    DK_STAMP(%ebx), %edx
        imull   DK_IN_FLIGHT(%ebx), %edx
        addl    %edx, PCPU_DISK_STATS + DS_TIME_IN_QUEUE(%ecx)
        movl    %eax, DK_STAMP(%ebx)
        cmpl    $0, DK_IN_FLIGHT(%ebx)
        je      1f
        movl    %eax, %edx
        subl    DK_STAMP_IDLE(%ebx), %edx
        addl    %edx, PCPU_DISK_STATS + DS_IO_TICKS(%ecx)
1:      movl    %eax, DK_STAMP_IDLE(%ebx)
        popl    %ebx
        ret

/* disk_complete_request(q): the disk's stand-in: its driver takes the request at the
 * queue's head (elv_next_request, blkdev_dequeue_request; the plug pulled), writes it at
 * once, and its interrupt ends it: __end_that_request_first for all its bytes, then
 * end_that_request_last under the queue lock. */
        .globl  disk_complete_request
disk_complete_request:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # q
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_lock_irq
        addl    $4, %esp
        lock btrl $(QUEUE_FLAG_PLUGGED), Q_QUEUE_FLAGS(%esi)  # blk_remove_plug
        leal    Q_QUEUE_HEAD(%esi), %eax
        movl    (%eax), %ebx                # elv_next_request: the head
        cmpl    %eax, %ebx
        je      9f
        movl    (%ebx), %ecx                # blkdev_dequeue_request: list_del_init
        movl    4(%ebx), %edx
        movl    %ecx, (%edx)
        movl    %edx, 4(%ecx)
        movl    %ebx, (%ebx)
        movl    %ebx, 4(%ebx)
        cmpl    Q_LAST_MERGE(%esi), %ebx    # elv_remove_request: the hint
        jne     1f
        movl    $0, Q_LAST_MERGE(%esi)
1:      pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        addl    $4, %esp
        movl    RQ_HARD_NR_SECTORS(%ebx), %eax  # the interrupt: end_that_request_first
        shll    $9, %eax
        pushl   %eax
        pushl   $1
        pushl   %ebx
        call    __end_that_request_first
        addl    $12, %esp
        testl   %eax, %eax
        jnz     9f                          # bytes left: not in a run
        pushl   Q_QUEUE_LOCK(%esi)          # spin_lock_irqsave(q->queue_lock)
        call    _spin_lock_irq
        movl    %ebx, (%esp)
        call    end_that_request_last
        movl    Q_QUEUE_LOCK(%esi), %eax
        movl    %eax, (%esp)
        call    _spin_unlock_irq
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* __end_that_request_first(req, uptodate, nr_bytes) -> 0 when the request is done: each
 * whole bio ended (bio_endio) and unlinked */
        .globl  __end_that_request_first
__end_that_request_first:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # req
        movl    $0, RQ_ERRORS(%esi)
1:      movl    RQ_BIO(%esi), %ebx
        testl   %ebx, %ebx
        jz      2f
        movl    BIO_SIZE(%ebx), %eax        # nbytes
        cmpl    20(%esp), %eax
        ja      9f                          # a partial bio: not in a run
        subl    %eax, 20(%esp)
        movl    BIO_NEXT(%ebx), %ecx        # req->bio = bio->bi_next
        movl    %ecx, RQ_BIO(%esi)
        pushl   $0                          # bio_endio(bio, nbytes, 0)
        pushl   %eax
        pushl   %ebx
        call    bio_endio
        addl    $12, %esp
        jmp     1b
2:      xorl    %eax, %eax                  # all of it: done
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* bio_endio(bio, bytes_done, error) */
        .globl  bio_endio
bio_endio:
        movl    4(%esp), %eax               # bio
        movl    8(%esp), %ecx
        subl    %ecx, BIO_SIZE(%eax)
        shrl    $9, %ecx
        addl    %ecx, BIO_SECTOR(%eax)
        cmpl    $0, BIO_END_IO(%eax)
        je      1f
        pushl   12(%esp)
        pushl   12(%esp)
        pushl   %eax
        call    *BIO_END_IO(%eax)
        addl    $12, %esp
1:      ret

/* end_bio_bh_io_sync(bio, bytes_done, err): the whole bio done, the buffer's b_end_io with
 * BIO_UPTODATE, and the bio's reference dropped */
        .globl  end_bio_bh_io_sync
end_bio_bh_io_sync:
        pushl   %ebx
        movl    8(%esp), %ebx               # bio
        movl    $1, %eax
        cmpl    $0, BIO_SIZE(%ebx)
        jne     1f
        movl    BIO_FLAGS(%ebx), %eax       # test_bit(BIO_UPTODATE, &bio->bi_flags)
        shrl    $(BIO_UPTODATE), %eax
        andl    $1, %eax
        pushl   %eax
        movl    BIO_PRIVATE(%ebx), %eax     # bh
        pushl   %eax
        call    *BH_END_IO(%eax)
        movl    %ebx, (%esp)
        call    bio_put
        addl    $8, %esp
        xorl    %eax, %eax
1:      popl    %ebx
        ret

/* end_that_request_last(req): the disk's write count and ticks, its queue time, in_flight;
 * then __blk_put_request: the request back to its slab, the request list's count down */
        .globl  end_that_request_last
end_that_request_last:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # req
        movl    RQ_RQ_DISK(%ebx), %esi
        movl    $-8192, %ecx                # __disk_stat_inc(disk, writes), write_ticks
        andl    %esp, %ecx
        movl    TI_CPU(%ecx), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        incl    PCPU_DISK_STATS + DS_WRITES(%ecx)
        movl    jiffies, %eax
        subl    RQ_START_TIME(%ebx), %eax
        addl    %eax, PCPU_DISK_STATS + DS_WRITE_TICKS(%ecx)
        pushl   %esi
        call    disk_round_stats
        addl    $4, %esp
        decl    DK_IN_FLIGHT(%esi)
        cmpl    $0, RQ_END_IO(%ebx)
        jne     9f
        movl    RQ_Q(%ebx), %esi            # __blk_put_request(req->q, req)
        movl    RQ_RL(%ebx), %edx
        decl    RQ_REF_COUNT(%ebx)
        jnz     1f
        movl    $(RQ_INACTIVE), RQ_RQ_STATUS(%ebx)
        movl    $0, RQ_Q(%ebx)
        movl    $0, RQ_RL(%ebx)
        testl   %edx, %edx
        jz      1f
        movl    RQ_FLAGS(%ebx), %edx        # rw = rq_data_dir(req)
        andl    $1, %edx
        pushl   %edx
        pushl   %ebx                        # blk_free_request: mempool_free
        pushl   request_cachep
        call    kmem_cache_free
        addl    $8, %esp
        popl    %edx                        # freed_request(q, rw)
        decl    Q_RQ_COUNT(%esi,%edx,4)
        movl    Q_RQ_COUNT(%esi,%edx,4), %eax
        incl    %eax
        cmpl    Q_NR_REQUESTS(%esi), %eax
        ja      1f
        leal    (%edx,%edx,2), %eax         # waitqueue_active(&rl->wait[rw]): its list
        leal    Q_RQ_WAIT + 4(%esi,%eax,4), %eax
        cmpl    %eax, (%eax)
        jne     9f                          # a waiter: not in a run
        leal    QUEUE_FLAG_READFULL(%edx), %eax     # blk_clear_queue_full(q, rw)
        lock btrl %eax, Q_QUEUE_FLAGS(%esi)
1:      popl    %esi
        popl    %ebx
        ret
9:      ud2


/* Fifteen one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
