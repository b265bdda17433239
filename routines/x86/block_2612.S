/*
 * The block layer under a buffer's write in Linux 2.6.12, written for the book from the
 * algorithms of fs/buffer.c (submit_bh, end_bio_bh_io_sync), fs/bio.c (bio_alloc_bioset,
 * bio_init, bio_put, bio_destructor, bio_endio), drivers/block/ll_rw_blk.c (submit_bio,
 * generic_make_request, __make_request, ll_back_merge_fn, get_request, rq_init,
 * drive_stat_acct, disk_round_stats, add_request, blkdev_dequeue_request,
 * __end_that_request_first, end_that_request_last, __blk_put_request, freed_request),
 * drivers/block/elevator.c (elv_try_last_merge, elv_rq_merge_ok) and the anticipatory
 * elevator, drivers/block/as-iosched.c (as_merge, as_find_arq_hash, as_add_arq_hash,
 * as_del_arq_hash, as_merged_request, as_set_request, as_put_request).
 *
 * submit_bh(rw, bh) builds a bio for the buffer (a bio and its one bio_vec from their slabs)
 * and submits it (generic_make_request -> q->make_request_fn = __make_request): under the
 * queue lock the elevator looks for a queued request that ends where the bio starts (the
 * last merge hint, then the anticipatory elevator's hash of request ends), and the bio joins
 * it (a back merge) while the request stays within the queue's max_sectors and segment
 * limits; else the bio gets a request of its own (its as_rq from the elevator's pool, on the
 * hash). The request waits in the queue, growing, while the disk is busy: the disk's driver
 * takes it (routines/x86/scsi_2612.S) and its interrupt ends it later, each of its bios in
 * turn (bio_endio -> end_bio_bh_io_sync -> the buffer's b_end_io). Left out of the elevator:
 * its sort tree, the front merges it allows (a file written forwards makes none), the
 * attempt to merge a grown request with the next (attempt_back_merge: the next request is
 * another file's) and its anticipation (reads only). The queue's list stands for its FIFO.
 * A full queue, the congestion mark and the wait for a request (get_request's slow paths,
 * get_request_wait, freed_request's wake-up) are routines/x86/blk_wait_2612.S's, reached
 * by jumps from here (their code there, so that this file's code keeps its addresses).
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
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
 * within the queue's limit and the queue alive; then q->make_request_fn(q, bio) */
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
        addl    $8, %esp
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* __make_request(q, bio): no bounce (the queue's bounce_pfn covers all memory); the queue
 * locked; a queued request the bio can join at its end (elv_merge: as_merge) takes it
 * (ll_back_merge_fn, then the bio on its tail, the sectors and the merge accounted,
 * elv_merged_request); else an empty queue is plugged and the bio gets a new request
 * (get_request, the queue unlocked meanwhile, then the merge tried again), filled from the
 * bio, accounted and added (the queue's tail; the elevator's hash) */
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
1:                                          # again (blk_wait_2612.S comes back here)
        .globl  __make_request_again
__make_request_again:
        pushl   Q_QUEUE_LOCK(%esi)          # spin_lock_irq(q->queue_lock)
        call    _spin_lock_irq
        addl    $4, %esp
        leal    Q_QUEUE_HEAD(%esi), %eax    # elv_queue_empty: nothing to merge with
        cmpl    %eax, (%eax)
        je      4f
        pushl   %ebx                        # elv_merge(q, &req, bio): as_merge
        pushl   %esi
        call    as_merge
        addl    $8, %esp
        testl   %eax, %eax
        jz      3f                          # ELEVATOR_NO_MERGE
        movl    %eax, %edi                  # req: ELEVATOR_BACK_MERGE
        pushl   %ebx
        pushl   %edi
        pushl   %esi
        call    ll_back_merge_fn            # q->back_merge_fn(q, req, bio)
        addl    $12, %esp
        testl   %eax, %eax
        jz      3f                          # too big: a request of its own
        movl    RQ_BIOTAIL(%edi), %eax      # req->biotail->bi_next = bio
        movl    %ebx, BIO_NEXT(%eax)
        movl    %ebx, RQ_BIOTAIL(%edi)
        movl    BIO_SIZE(%ebx), %eax        # nr_sectors = bio_sectors(bio)
        shrl    $9, %eax
        addl    %eax, RQ_NR_SECTORS(%edi)   # req->nr_sectors = req->hard_nr_sectors += nr
        addl    %eax, RQ_HARD_NR_SECTORS(%edi)
        pushl   $0                          # drive_stat_acct(req, nr_sectors, 0)
        pushl   %eax
        pushl   %edi
        call    drive_stat_acct
        addl    $12, %esp
        pushl   %edi                        # elv_merged_request(q, req)
        pushl   %esi
        call    as_merged_request
        addl    $8, %esp
        testl   %ebp, %ebp                  # out: a request got on the first pass would go
        jnz     9f                          # back (__blk_put_request): not in a run
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        addl    $4, %esp
        xorl    %eax, %eax
        jmp     8f
4:      lock btsl $(QUEUE_FLAG_PLUGGED), Q_QUEUE_FLAGS(%esi)    # blk_plug_device
3:      testl   %ebp, %ebp                  # get_rq
        jnz     2f
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        movl    %esi, (%esp)
        pushl   $1                          # WRITE
        pushl   %esi
        call    get_request
        addl    $12, %esp
        testl   %eax, %eax
        jz      make_request_wait           # get_request_wait (blk_wait_2612.S)
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
        leal    Q_QUEUE_HEAD(%esi), %eax    # __elv_add_request: the FIFO's tail
        movl    4(%eax), %ecx               # last = head->prev
        movl    %eax, RQ_QUEUELIST(%ebp)
        movl    %ecx, RQ_QUEUELIST + 4(%ebp)
        movl    %ebp, (%ecx)
        movl    %ebp, 4(%eax)
        pushl   %ebp                        # as_add_request: the request on the hash
        call    as_add_arq_hash
        addl    $4, %esp
        movl    %ebp, Q_LAST_MERGE(%esi)    # rq_mergeable: the merge hint
        pushl   Q_QUEUE_LOCK(%esi)
        call    _spin_unlock_irq
        addl    $4, %esp
        xorl    %eax, %eax
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* get_request(q, rw) -> request: the request list's count under the queue lock, then a
 * request from its slab (blk_alloc_request: rq->flags = rw; noop keeps no private data),
 * rq_init, rq->rl, and the elevator's as_rq (as_set_request) */
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
        jae     get_request_full            # the queue full (blk_wait_2612.S)
        incl    Q_RQ_COUNT(%esi,%ecx,4)     # rl->count[rw]++
        movl    $0, Q_RQ_STARVED(%esi,%ecx,4)
        cmpl    Q_CONGESTION_ON(%esi), %eax # queue_congestion_on_threshold
        jae     get_request_congested       # reached: blk_wait_2612.S
        .globl  get_request_alloc
get_request_alloc:
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
        pushl   arq_pool                    # elv_set_request -> as_set_request: an as_rq
        call    kmem_cache_alloc            # from the elevator's pool
        addl    $4, %esp
        movl    %ebx, ARQ_REQUEST(%eax)     # arq->request = rq
        movl    $0, ARQ_IO_CONTEXT(%eax)
        movl    $0, ARQ_STATE(%eax)         # AS_RQ_PRESCHED
        leal    ARQ_HASH(%eax), %ecx        # INIT_LIST_HEAD(&arq->hash), on_hash = 0
        movl    %ecx, ARQ_HASH(%eax)
        movl    %ecx, ARQ_HASH + 4(%eax)
        movl    $0, ARQ_ON_HASH(%eax)
        leal    ARQ_FIFO(%eax), %ecx        # INIT_LIST_HEAD(&arq->fifo)
        movl    %ecx, ARQ_FIFO(%eax)
        movl    %ecx, ARQ_FIFO + 4(%eax)
        movl    %eax, RQ_ELEVATOR_PRIVATE(%ebx)
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
        pushl   %edx                        # elv_put_request -> as_put_request: the as_rq
        pushl   RQ_ELEVATOR_PRIVATE(%ebx)   # back to its pool
        pushl   arq_pool
        call    kmem_cache_free
        addl    $8, %esp
        popl    %edx
        movl    $0, RQ_ELEVATOR_PRIVATE(%ebx)
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
        jne     freed_request_wake          # a waiter: wake_up (blk_wait_2612.S)
        .globl  freed_request_woken
freed_request_woken:
        leal    QUEUE_FLAG_READFULL(%edx), %eax     # blk_clear_queue_full(q, rw)
        lock btrl %eax, Q_QUEUE_FLAGS(%esi)
1:      popl    %esi
        popl    %ebx
        ret
9:      ud2


/* as_merge(q, bio) -> the request the bio can join at its end, or 0 (ELEVATOR_NO_MERGE):
 * elv_try_last_merge (q->last_merge, if mergeable and elv_rq_merge_ok and it ends where the
 * bio starts), then the hash of request ends (as_find_arq_hash: a request found no longer
 * mergeable loses its place there, as_remove_merge_hints), each checked by elv_rq_merge_ok
 * (same direction, same disk). The front merge through the sort tree is left out: a file
 * written forwards has none. */
        .globl  as_merge
as_merge:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # q
        movl    20(%esp), %edi              # bio
        movl    Q_LAST_MERGE(%esi), %ebx    # elv_try_last_merge
        testl   %ebx, %ebx
        jz      1f
        testl   $(RQ_NOMERGE_FLAGS), RQ_FLAGS(%ebx)     # rq_mergeable
        jnz     1f
        call    elv_rq_merge_ok             # (ebx: rq, edi: bio) -> ZF clear if ok
        jz      1f
        movl    RQ_SECTOR(%ebx), %eax       # elv_try_merge: rq->sector + nr_sectors
        addl    RQ_NR_SECTORS(%ebx), %eax   # == bio->bi_sector: a back merge
        cmpl    BIO_SECTOR(%edi), %eax
        je      8f
1:      movl    BIO_SECTOR(%edi), %eax      # as_find_arq_hash(ad, bio->bi_sector)
        call    as_hash_bucket              # eax: the bucket's list head
        movl    %eax, %ecx
        movl    (%ecx), %edx                # entry = hash_list->next
2:      cmpl    %ecx, %edx
        je      7f                          # the end of the bucket: no merge
        leal    -ARQ_HASH(%edx), %eax       # list_entry_hash(entry)
        movl    (%edx), %edx                # next = entry->next
        movl    ARQ_REQUEST(%eax), %ebx     # __rq = arq->request
        testl   $(RQ_NOMERGE_FLAGS), RQ_FLAGS(%ebx)
        jz      3f
        pushl   %ecx                        # !rq_mergeable: as_remove_merge_hints
        pushl   %edx
        pushl   %eax
        call    as_del_arq_hash
        addl    $4, %esp
        popl    %edx
        popl    %ecx
        cmpl    Q_LAST_MERGE(%esi), %ebx
        jne     2b
        movl    $0, Q_LAST_MERGE(%esi)
        jmp     2b
3:      movl    RQ_SECTOR(%ebx), %eax       # rq_hash_key(__rq) == offset
        addl    RQ_NR_SECTORS(%ebx), %eax
        cmpl    BIO_SECTOR(%edi), %eax
        jne     2b
        call    elv_rq_merge_ok
        jz      7f
8:      movl    %ebx, %eax
        jmp     6f
7:      xorl    %eax, %eax
6:      popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* elv_rq_merge_ok(rq in ebx, bio in edi): ZF clear if the bio may join the request: the same
 * data direction and the same disk (no special request: none is) */
        .globl  elv_rq_merge_ok
elv_rq_merge_ok:
        movl    RQ_FLAGS(%ebx), %eax        # rq_data_dir(rq) == bio_data_dir(bio)
        xorl    BIO_RW(%edi), %eax
        testl   $1, %eax
        jnz     1f
        movl    BIO_BDEV(%edi), %eax        # rq->rq_disk == bio->bi_bdev->bd_disk
        movl    BDEV_DISK(%eax), %eax
        cmpl    RQ_RQ_DISK(%ebx), %eax
        jne     1f
        testl   %ebx, %ebx                  # ZF clear: ok
        ret
1:      xorl    %eax, %eax                  # ZF set: no
        ret

/* as_hash_bucket(sector in eax) -> eax: &ad->hash[AS_HASH_FN(sector)]:
 * hash_long(sector >> 3, as_hash_shift 6) */
        .globl  as_hash_bucket
as_hash_bucket:
        shrl    $3, %eax                    # AS_HASH_BLOCK
        imull   $0x9e370001, %eax, %eax     # hash_long: GOLDEN_RATIO_PRIME_32
        shrl    $(32 - AS_HASH_SHIFT), %eax
        shll    $3, %eax                    # a list_head each
        addl    as_hash_table, %eax
        ret

/* as_add_arq_hash(rq): the request's as_rq on the hash under its end sector (list_add) */
        .globl  as_add_arq_hash
as_add_arq_hash:
        pushl   %ebx
        movl    8(%esp), %edx               # rq
        movl    RQ_ELEVATOR_PRIVATE(%edx), %ebx     # arq
        cmpl    $0, ARQ_ON_HASH(%ebx)
        jne     9f                          # BUG_ON(arq->on_hash)
        movl    RQ_SECTOR(%edx), %eax       # rq_hash_key: sector + nr_sectors
        addl    RQ_NR_SECTORS(%edx), %eax
        call    as_hash_bucket              # eax: the bucket's head
        movl    (%eax), %ecx                # list_add(&arq->hash, head)
        leal    ARQ_HASH(%ebx), %edx
        movl    %ecx, (%edx)
        movl    %eax, 4(%edx)
        movl    %edx, 4(%ecx)
        movl    %edx, (%eax)
        movl    $1, ARQ_ON_HASH(%ebx)
        popl    %ebx
        ret
9:      ud2

/* as_del_arq_hash(arq): off the hash (list_del_init), on_hash = 0 */
        .globl  as_del_arq_hash
as_del_arq_hash:
        movl    4(%esp), %eax               # arq
        cmpl    $0, ARQ_ON_HASH(%eax)
        je      1f
        movl    $0, ARQ_ON_HASH(%eax)
        movl    ARQ_HASH(%eax), %ecx        # list_del_init(&arq->hash)
        movl    ARQ_HASH + 4(%eax), %edx
        movl    %ecx, (%edx)
        movl    %edx, 4(%ecx)
        leal    ARQ_HASH(%eax), %ecx
        movl    %ecx, ARQ_HASH(%eax)
        movl    %ecx, ARQ_HASH + 4(%eax)
1:      ret

/* as_merged_request(q, req): the end sector moved, so the hash entry moves (as_del_arq_hash,
 * as_add_arq_hash); a back merge leaves the sort key; the request is the merge hint */
        .globl  as_merged_request
as_merged_request:
        movl    8(%esp), %edx               # req
        pushl   RQ_ELEVATOR_PRIVATE(%edx)
        call    as_del_arq_hash
        addl    $4, %esp
        pushl   8(%esp)
        call    as_add_arq_hash
        addl    $4, %esp
        movl    4(%esp), %eax               # q->last_merge = req
        movl    8(%esp), %edx
        movl    %edx, Q_LAST_MERGE(%eax)
        ret

/* ll_back_merge_fn(q, req, bio) -> 1 if the bio fits at the request's end: its sectors
 * within q->max_sectors, one more segment (a page of its own: the model's pages are never
 * physically next to each other) within max_hw_segments and max_phys_segments; else the
 * request is marked REQ_NOMERGE and stops being the merge hint */
        .globl  ll_back_merge_fn
ll_back_merge_fn:
        pushl   %ebx
        movl    8(%esp), %ecx               # q
        movl    12(%esp), %ebx              # req
        movl    16(%esp), %edx              # bio
        movl    BIO_SIZE(%edx), %eax        # req->nr_sectors + bio_sectors(bio)
        shrl    $9, %eax
        addl    RQ_NR_SECTORS(%ebx), %eax
        cmpl    Q_MAX_SECTORS(%ecx), %eax
        ja      1f
        movzwl  RQ_NR_PHYS_SEGMENTS + 2(%ebx), %eax     # ll_new_hw_segment
        incl    %eax
        cmpl    Q_MAX_HW_SEGMENTS(%ecx), %eax
        ja      1f
        movzwl  RQ_NR_PHYS_SEGMENTS(%ebx), %eax
        incl    %eax
        cmpl    Q_MAX_PHYS_SEGMENTS(%ecx), %eax
        ja      1f
        addl    $0x00010001, RQ_NR_PHYS_SEGMENTS(%ebx)  # nr_phys_segments, nr_hw_segments
        movl    $1, %eax
        popl    %ebx
        ret
1:      orl     $(REQ_NOMERGE), RQ_FLAGS(%ebx)
        cmpl    Q_LAST_MERGE(%ecx), %ebx
        jne     2f
        movl    $0, Q_LAST_MERGE(%ecx)
2:      xorl    %eax, %eax
        popl    %ebx
        ret

/* Eleven one-byte nops at the end: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. Eleven, not fifteen, so that what comes after
 * keeps its place: __blk_put_request's jump to freed_request_wake (blk_wait_2612.S) took
 * four bytes more than the short jump to a ud2 it replaced. */
        .space  11, 0x90
