/*
 * Memory management under a write() in Linux 2.6.12, written for the book from the
 * algorithms of: mm/filemap.c (generic_file_aio_write, generic_file_buffered_write with
 * __grab_cache_page, filemap_copy_from_user, find_get_page, find_lock_page,
 * add_to_page_cache, unlock_page), mm/page-writeback.c (__set_page_dirty_nobuffers),
 * mm/swap.c (mark_page_accessed, __pagevec_lru_add, put_page, percpu_counter_mod),
 * mm/page_alloc.c (__alloc_pages, buffered_rmqueue, free_hot_page), mm/vmscan.c
 * (shrink_list: the reclaim of SWAP_CLUSTER_MAX pages from the tail of the inactive list),
 * mm/page-writeback.c's balance_dirty_pages_ratelimited (routines/x86/writeback_2612.S),
 * mm/slab.c (kmem_cache_alloc, kmem_cache_free, cache_alloc_refill, cache_flusharray: the
 * per-CPU arrays, the shared array, the slab lists),
 * lib/radix-tree.c (radix_tree_lookup, _insert, _delete, _tag_set, _tag_clear).
 *
 * Stand-ins, named where they are: the buddy allocator is a zone's never-used memory
 * handed out in order (zone->FREE_NEXT); the slab lists are a FIFO of the objects given back
 * (free_block's slabs, without their bufctl chains), and cache_grow hands out the next
 * never-used object of the memory the CPU grows the cache from; writeback (pdflush, kjournald's ordered
 * data) runs only in paced writes (writeback_2612.S, commit_2612.S), so otherwise reclaim
 * finds pages still dirty and does what writeback would have done to them before
 * reclaiming them (clears the page's, the buffer's and the tree's dirty state). kmap_atomic and
 * kunmap_atomic around the copy are routines/x86/highmem_2612.S's.
 * Offsets: the equates yoshioka2005 ext3model puts in front. Calling convention: cdecl (the
 * kernel's fastcall functions too); ebx, esi, edi, ebp preserved.
 *
 * CONFIG_PREEMPT (the equate; spinlock_2612.S): each bit spin lock here (jbd_lock_bh_state,
 * jbd_lock_bh_journal_head, their trylocks) has preempt_disable before its lock btsl, and a
 * failed trylock and each unlock preempt_enable (include/linux/spinlock.h 531-580 of
 * 2.6.12.1); the get_cpu() users and radix_tree_preload theirs (nothing without it).
 */

/* ---------------------------------------------------------------- mm/slab.c */

/* kmem_cache_alloc(cachep) -> an object (__cache_alloc, mm/slab.c 2146-2166 of 2.6.12.1):
 * with interrupts off, the last object this CPU's array holds (ac->entry[--ac->avail],
 * ac->touched = 1), else cache_alloc_refill's batch, else a batch of fresh objects
 * (cache_grow, then the refill's retry). Each object is handed out once until it is
 * freed. */
        .globl  kmem_cache_alloc
kmem_cache_alloc:
        pushl   %ebx
        pushfl
        cli                                 # local_irq_save
        movl    12(%esp), %ebx              # cachep
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    KC_ARRAY(%ebx,%eax,4), %ecx # ac = cachep->array[smp_processor_id()]
        movl    AC_AVAIL(%ecx), %eax
        testl   %eax, %eax
        jz      2f
1:      movl    $1, AC_TOUCHED(%ecx)        # ac->touched = 1
        decl    %eax
        movl    %eax, AC_AVAIL(%ecx)
        movl    AC_ENTRY(%ecx,%eax,4), %eax # ac->entry[--ac->avail]
        popfl                               # local_irq_restore
        popl    %ebx
        ret
2:      call    cache_alloc_refill          # (ebx cachep, ecx ac) -> eax = ac->avail
        testl   %eax, %eax
        jnz     1b
        call    cache_grow                  # a new slab, and the retry's batch from it
        jmp     1b

/* slab_ring_copy RING, OTHER, COUNT: COUNT words from (%esi) to (%edi), one at a time,
 * RING being the pointer that walks the slab lists' stand-in (the ring of pointers from
 * KC_FREE_BASE to KC_FREE_END of the cache in ebx) and wraps at its end, OTHER the plain
 * array's; eax is clobbered and COUNT ends at 0. cache_alloc_refill takes from the ring's
 * head, free_block (cache_flusharray) gives to its tail. */
        .macro  slab_ring_copy RING, OTHER, COUNT
.Lslab_ring_word\@:
        movl    (%esi), %eax
        movl    %eax, (%edi)
        addl    $4, \OTHER
        addl    $4, \RING
        cmpl    KC_FREE_END(%ebx), \RING
        jb      .Lslab_ring_on\@
        movl    KC_FREE_BASE(%ebx), \RING
.Lslab_ring_on\@:
        decl    \COUNT
        jnz     .Lslab_ring_word\@
        .endm

/* cache_alloc_refill (mm/slab.c 1994-2088): under cachep->spinlock, a batch (batchcount,
 * BATCHREFILL_LIMIT 16 while the array is untouched) from the top of the shared array, else
 * from the slab lists (the stand-in: a FIFO of the objects free_block gave back, oldest
 * first, as the head of slabs_partial is the slab freed into longest ago). Register
 * arguments ebx = cachep, ecx = ac (both kept); returns ac->avail (0: the cache must grow). */
cache_alloc_refill:
        pushl   %esi
        pushl   %edi
        pushl   %ecx
        movl    AC_BATCH(%ecx), %edx        # batchcount = ac->batchcount
        cmpl    $0, AC_TOUCHED(%ecx)
        jne     1f
        cmpl    $16, %edx
        jbe     1f
        movl    $16, %edx                   # BATCHREFILL_LIMIT
1:      pushl   %edx
        leal    KC_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_lock                  # spin_lock(&cachep->spinlock)
        addl    $4, %esp
        popl    %edx
        movl    (%esp), %ecx
        movl    KC_SHARED(%ebx), %esi       # l3->shared
        movl    AC_AVAIL(%esi), %eax
        testl   %eax, %eax
        jz      3f
        cmpl    %eax, %edx
        jbe     2f
        movl    %eax, %edx                  # batchcount = shared_array->avail
2:      movl    $1, AC_TOUCHED(%esi)        # shared_array->touched = 1
        subl    %edx, %eax
        movl    %eax, AC_AVAIL(%esi)        # shared_array->avail -= batchcount
        movl    %edx, AC_AVAIL(%ecx)        # ac->avail = batchcount
        leal    AC_ENTRY(%esi,%eax,4), %esi # memcpy(ac_entry(ac), &shared[avail], ...)
        leal    AC_ENTRY(%ecx), %edi
        movl    %edx, %ecx
        rep movsl
        jmp     6f
3:      movl    KC_FREE_COUNT(%ebx), %eax   # the slab lists' free objects
        cmpl    %eax, %edx
        jbe     4f
        movl    %eax, %edx
4:      movl    %edx, AC_AVAIL(%ecx)        # ac->avail = the batch taken (0: none)
        subl    %edx, KC_FREE_COUNT(%ebx)   # l3->free_objects -= ac->avail
        testl   %edx, %edx
        jz      6f
        leal    AC_ENTRY(%ecx), %edi
        movl    KC_FREE_HEAD(%ebx), %esi
        slab_ring_copy %esi, %edi, %edx     # ac_entry(ac)[ac->avail++] = the oldest
        movl    %esi, KC_FREE_HEAD(%ebx)
6:      leal    KC_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        popl    %ecx
        movl    AC_AVAIL(%ecx), %eax
        popl    %edi
        popl    %esi
        ret

/* cache_grow (mm/slab.c 1791-1870) and cache_alloc_refill's retry, a stand-in: a new slab
 * is the next never-used objects of the memory this CPU grows the cache from (AC_NEXT up to
 * AC_END; past it the model is out of memory: a fault, never an object handed out twice),
 * under cache_grow's two holds of cachep->spinlock; the retry takes the batch (16 while the
 * array is untouched) under the lock again. The batch goes into the array lowest address
 * last, so that the objects come out in address order (2.6.12 puts a slab's objects in
 * ascending order, and the LIFO hands them out descending). Register arguments ebx =
 * cachep, ecx = ac (both kept); returns ac->avail. */
cache_grow:
        pushl   %esi
        pushl   %edi
        pushl   %ecx
        call    slab_lock_pair              # colour_next under the lock
        call    slab_lock_pair              # the slab onto slabs_free under the lock
        leal    KC_LOCK(%ebx), %eax         # the retry: spin_lock(&cachep->spinlock)
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    (%esp), %ecx
        movl    AC_END(%ecx), %eax          # objects left: (end - next) / objsize
        subl    AC_NEXT(%ecx), %eax
        xorl    %edx, %edx
        divl    KC_OBJSIZE(%ebx)
        testl   %eax, %eax
        jz      9f
        movl    (%esp), %ecx
        movl    AC_BATCH(%ecx), %edx        # batchcount
        cmpl    $0, AC_TOUCHED(%ecx)
        jne     1f
        cmpl    $16, %edx
        jbe     1f
        movl    $16, %edx                   # BATCHREFILL_LIMIT
1:      cmpl    %eax, %edx
        jbe     2f
        movl    %eax, %edx
2:      movl    %edx, AC_AVAIL(%ecx)
        movl    KC_OBJSIZE(%ebx), %esi
        movl    %esi, %eax
        imull   %edx, %eax
        addl    AC_NEXT(%ecx), %eax         # past the batch
        movl    %eax, AC_NEXT(%ecx)
        leal    AC_ENTRY(%ecx), %edi
3:      subl    %esi, %eax
        movl    %eax, (%edi)
        addl    $4, %edi
        decl    %edx
        jnz     3b
        leal    KC_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        popl    %ecx
        movl    AC_AVAIL(%ecx), %eax
        popl    %edi
        popl    %esi
        ret
9:      ud2

/* spin_lock and spin_unlock of cachep->spinlock (ebx = cachep) */
slab_lock_pair:
        leal    KC_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_lock
        call    _spin_unlock
        addl    $4, %esp
        ret

/* kmem_cache_free(cachep, objp) (__cache_free, mm/slab.c 2282-2299): with interrupts off,
 * onto this CPU's array, whichever CPU took the object; a full array first gives its
 * oldest batch back (cache_flusharray). */
        .globl  kmem_cache_free
kmem_cache_free:
        pushl   %ebx
        pushfl
        cli                                 # local_irq_save
        movl    12(%esp), %ebx              # cachep
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    KC_ARRAY(%ebx,%eax,4), %ecx # ac
        movl    AC_AVAIL(%ecx), %eax
        cmpl    AC_LIMIT(%ecx), %eax
        jb      1f
        call    cache_flusharray            # (ebx cachep, ecx ac) -> eax = ac->avail
1:      movl    16(%esp), %edx              # objp
        movl    %edx, AC_ENTRY(%ecx,%eax,4) # ac_entry(ac)[ac->avail++] = objp
        incl    %eax
        movl    %eax, AC_AVAIL(%ecx)
        popfl
        popl    %ebx
        ret

/* cache_flusharray (mm/slab.c 2225-2273): under cachep->spinlock, the array's first
 * batchcount objects (its oldest) onto the shared array while it has room (as many as
 * fit), else to the slab lists (free_block; the stand-in's FIFO, at its tail); then the
 * rest moved down. Register arguments ebx = cachep, ecx = ac (both kept); returns
 * ac->avail. */
cache_flusharray:
        pushl   %esi
        pushl   %edi
        pushl   %ecx
        leal    KC_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_lock
        addl    $4, %esp
        movl    (%esp), %ecx
        movl    AC_BATCH(%ecx), %edx        # batchcount = ac->batchcount
        movl    KC_SHARED(%ebx), %edi
        movl    AC_LIMIT(%edi), %eax
        subl    AC_AVAIL(%edi), %eax        # max = shared->limit - shared->avail
        jz      3f
        cmpl    %eax, %edx
        jbe     2f
        movl    %eax, %edx
2:      movl    AC_AVAIL(%edi), %eax
        addl    %edx, AC_AVAIL(%edi)        # shared_array->avail += batchcount
        leal    AC_ENTRY(%edi,%eax,4), %edi # memcpy(&shared[avail], &ac_entry(ac)[0], ...)
        leal    AC_ENTRY(%ecx), %esi
        movl    %edx, %ecx
        rep movsl
        jmp     5f
3:      addl    %edx, KC_FREE_COUNT(%ebx)   # free_block: l3->free_objects += nr
        leal    AC_ENTRY(%ecx), %esi
        movl    KC_FREE_TAIL(%ebx), %edi
        movl    %edx, %ecx
        slab_ring_copy %edi, %esi, %ecx     # onto the ring's tail
        movl    %edi, KC_FREE_TAIL(%ebx)
5:      pushl   %edx
        leal    KC_LOCK(%ebx), %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        popl    %edx
        movl    (%esp), %ecx
        movl    AC_AVAIL(%ecx), %eax
        subl    %edx, %eax
        movl    %eax, AC_AVAIL(%ecx)        # ac->avail -= batchcount
        leal    AC_ENTRY(%ecx), %edi        # memmove(&entry[0], &entry[batchcount], ...)
        leal    AC_ENTRY(%ecx,%edx,4), %esi
        movl    %eax, %ecx
        rep movsl                           # upwards: the source lies above
        popl    %ecx
        movl    AC_AVAIL(%ecx), %eax
        popl    %edi
        popl    %esi
        ret

/* ---------------------------------------------------------------- lib/radix-tree.c */

/* radix_tree_lookup(root, index) -> item or NULL */
        .globl  radix_tree_lookup
radix_tree_lookup:
        pushl   %ebx
        movl    8(%esp), %eax               # root
        movl    12(%esp), %edx              # index
        movl    RR_HEIGHT(%eax), %ebx
        imull   $6, %ebx, %ecx
        subl    $6, %ecx                    # shift = (height - 1) * 6
        leal    RR_RNODE(%eax), %eax        # slot = &root->rnode
1:      testl   %ebx, %ebx
        jz      2f
        movl    (%eax), %eax                # the node
        testl   %eax, %eax
        jz      3f
        pushl   %edx
        shrl    %cl, %edx
        andl    $63, %edx
        leal    RN_SLOTS(%eax,%edx,4), %eax
        popl    %edx
        subl    $6, %ecx
        decl    %ebx
        jmp     1b
2:      movl    (%eax), %eax
3:      popl    %ebx
        ret

/* radix_tree_insert(root, index, item) -> 0: missing nodes come from the slab */
        .globl  radix_tree_insert
radix_tree_insert:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %esi              # root
        movl    RR_HEIGHT(%esi), %ebx
        imull   $6, %ebx, %ebp
        subl    $6, %ebp                    # shift
        leal    RR_RNODE(%esi), %esi        # slot
        xorl    %edi, %edi                  # node = NULL
1:      testl   %ebx, %ebx
        jz      3f
        cmpl    $0, (%esi)
        jne     2f
        pushl   radix_tree_node_cachep      # radix_tree_node_alloc
        call    kmem_cache_alloc
        addl    $4, %esp
        movl    %eax, (%esi)
        testl   %edi, %edi
        jz      2f
        incl    RN_COUNT(%edi)
2:      movl    (%esi), %edi                # node = *slot
        movl    24(%esp), %eax              # offset = (index >> shift) & 63
        movl    %ebp, %ecx
        shrl    %cl, %eax
        andl    $63, %eax
        leal    RN_SLOTS(%edi,%eax,4), %esi
        subl    $6, %ebp
        decl    %ebx
        jmp     1b
3:      cmpl    $0, (%esi)
        jne     9f
        testl   %edi, %edi
        jz      4f
        incl    RN_COUNT(%edi)
4:      movl    28(%esp), %eax
        movl    %eax, (%esi)                # *slot = item
        xorl    %eax, %eax
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # -EEXIST: not in a run

/* radix_tree_tag_set(root, index, tag): the tag's bit in every node on the path */
        .globl  radix_tree_tag_set
radix_tree_tag_set:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # root
        movl    24(%esp), %edi
        shll    $3, %edi                    # tags[tag]: 8 bytes a tag
        movl    RR_HEIGHT(%esi), %ebx
        imull   $6, %ebx, %ecx
        subl    $6, %ecx
        movl    RR_RNODE(%esi), %esi        # node
1:      movl    20(%esp), %eax
        shrl    %cl, %eax
        andl    $63, %eax                   # offset
        leal    RN_TAGS(%esi,%edi), %edx
        btsl    %eax, (%edx)                # tag_set(node, tag, offset)
        movl    RN_SLOTS(%esi,%eax,4), %esi
        subl    $6, %ecx
        decl    %ebx
        jnz     1b
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* radix_tree_delete(root, index) -> item: clear the item's slot and tags; nodes left
 * empty go back to the slab, their parents' slots cleared. */
        .globl  radix_tree_delete
radix_tree_delete:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $48, %esp                   # path[0..4]: (node, offset) pairs, 8 bytes
        movl    68(%esp), %esi              # root
        movl    RR_HEIGHT(%esi), %ebx
        imull   $6, %ebx, %ecx
        subl    $6, %ecx
        movl    $0, 0(%esp)                 # path[0].node = NULL
        leal    RR_RNODE(%esi), %edx        # the slot above the first node
        movl    %edx, 4(%esp)
        movl    %esp, %edi                  # pathp
        movl    RR_RNODE(%esi), %esi        # node
1:      testl   %esi, %esi
        jz      8f
        movl    72(%esp), %eax
        shrl    %cl, %eax
        andl    $63, %eax
        movl    %esi, 8(%edi)               # pathp[1].node, pathp[1].offset
        movl    %eax, 12(%edi)
        addl    $8, %edi
        movl    RN_SLOTS(%esi,%eax,4), %esi
        subl    $6, %ecx
        decl    %ebx
        jnz     1b
        movl    %esi, %ebp                  # ret = the item
        testl   %ebp, %ebp
        jz      8f
        pushl   %edi                        # orig_pathp
        xorl    %ebx, %ebx                  # tag 0 (dirty), then 1 (writeback)
2:      movl    (%esp), %edi
3:      movl    (%edi), %esi                # node
        testl   %esi, %esi
        jz      4f
        movl    4(%edi), %eax
        leal    RN_TAGS(%esi,%ebx,8), %edx
        btrl    %eax, (%edx)                # tag_clear
        cmpl    $0, (%edx)                  # any tag left in the node: stop going up
        jne     4f
        cmpl    $0, 4(%edx)
        jne     4f
        subl    $8, %edi
        jmp     3b
4:      incl    %ebx
        cmpl    $2, %ebx
        jb      2b
        popl    %edi
        movl    (%edi), %esi                # the leaf: *slot = NULL, then empty nodes go
        movl    4(%edi), %eax
        movl    $0, RN_SLOTS(%esi,%eax,4)
5:      decl    RN_COUNT(%esi)
        jnz     7f
        subl    $8, %edi                    # the parent's slot for it
        movl    (%edi), %edx
        testl   %edx, %edx
        jz      6f
        movl    4(%edi), %eax
        movl    $0, RN_SLOTS(%edx,%eax,4)
        pushl   %esi                        # radix_tree_node_free(node)
        pushl   radix_tree_node_cachep
        call    kmem_cache_free
        addl    $8, %esp
        movl    (%edi), %esi
        jmp     5b
6:      movl    4(%edi), %edx               # the root's own slot: the tree is empty
        movl    $0, (%edx)
        pushl   %esi
        pushl   radix_tree_node_cachep
        call    kmem_cache_free
        addl    $8, %esp
        movl    68(%esp), %eax
        movl    $0, RR_HEIGHT(%eax)
7:      movl    %ebp, %eax
        jmp     9f
8:      xorl    %eax, %eax
9:      addl    $48, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* ---------------------------------------------------------------- mm/slab.c users */

/* percpu_counter_mod(fbc, amount): this CPU's share; folded into fbc->count under
 * fbc->lock every FBC_BATCH */
        .globl  percpu_counter_mod
percpu_counter_mod:
        pushl   %ebx
        movl    $-8192, %eax
        andl    %esp, %eax
        .if     CONFIG_PREEMPT              # get_cpu(): preempt_disable (mm/swap.c 452)
        incl    TI_PREEMPT(%eax)
        .endif
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %ebx
        movl    PCPU_FBC_COUNT(%ebx), %eax
        addl    12(%esp), %eax              # count = *pcount + amount
        cmpl    $(FBC_BATCH), %eax
        jge     1f
        cmpl    $(-FBC_BATCH), %eax
        jle     1f
        movl    %eax, PCPU_FBC_COUNT(%ebx)
        preempt_enable %eax                 # put_cpu() (463)
        popl    %ebx
        ret
1:      movl    8(%esp), %ecx               # fbc: lock, then count
        pushl   %eax
        pushl   %ecx
        call    _spin_lock
        popl    %ecx
        popl    %eax
        addl    %eax, 4(%ecx)               # fbc->count += count
        movl    $0, PCPU_FBC_COUNT(%ebx)
        pushl   %ecx
        call    _spin_unlock
        addl    $4, %esp
        preempt_enable %eax                 # put_cpu()
        popl    %ebx
        ret

/* ---------------------------------------------------------------- mm/page_alloc.c */

/* buffered_rmqueue(zone) -> a free page (order 0): from this CPU's per_cpu_pages; an
 * empty list is refilled from the zone (rmqueue_bulk under zone->lock) or, with the zone's
 * free memory used up, by reclaiming SWAP_CLUSTER_MAX pages (direct reclaim). */
        .globl  buffered_rmqueue
buffered_rmqueue:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # zone
        movl    $-8192, %eax
        andl    %esp, %eax
        .if     CONFIG_PREEMPT              # get_cpu(): preempt_disable (mm/page_alloc.c
        incl    TI_PREEMPT(%eax)            # 662 of 2.6.12.1)
        .endif
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %ebx
        pushfl
        cli                                 # local_irq_save
        cmpl    $0, PCPU_PCP_COUNT(%ebx)
        jne     3f
        cmpl    $0, ZONE_FREE_LEFT(%esi)
        je      2f
        leal    ZONE_LOCK(%esi), %eax       # rmqueue_bulk(zone, 0, batch): never-used pages
        pushl   %eax
        call    _spin_lock
        movl    $16, %ecx                   # pcp->batch
1:      cmpl    $0, ZONE_FREE_LEFT(%esi)
        je      4f
        movl    ZONE_FREE_NEXT(%esi), %eax
        leal    PAGE_STRUCT(%eax), %edx
        movl    %edx, ZONE_FREE_NEXT(%esi)
        decl    ZONE_FREE_LEFT(%esi)
        movl    PCPU_PCP_COUNT(%ebx), %edx  # onto pcp->list
        movl    %eax, PCPU_PCP_STACK(%ebx,%edx,4)
        incl    PCPU_PCP_COUNT(%ebx)
        loop    1b
4:      call    _spin_unlock
        addl    $4, %esp
        jmp     3f
2:      pushl   %esi                        # try_to_free_pages -> shrink_list
        call    shrink_list
        addl    $4, %esp
        cmpl    $0, PCPU_PCP_COUNT(%ebx)
        je      9f
3:      decl    PCPU_PCP_COUNT(%ebx)        # the page freed last
        movl    PCPU_PCP_COUNT(%ebx), %eax
        movl    PCPU_PCP_STACK(%ebx,%eax,4), %eax
        popfl                               # local_irq_restore
        preempt_enable %edx                 # put_cpu() (673)
        testl   $0x3071, PG_FLAGS(%eax)     # prep_new_page: locked, dirty, lru, active,
        jnz     9f                          # private, writeback all clear
        cmpl    $0, PG_MAPPING(%eax)
        jne     9f
        andl    $(0xfffffff3), PG_FLAGS(%eax)   # ~(referenced | uptodate)
        movl    $0, PG_PRIVATE(%eax)
        movl    $1, PG_COUNT(%eax)          # set_page_refs
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # nothing reclaimable, or a bad page

/* __alloc_pages(zone) -> page: the zone's watermark, then buffered_rmqueue (one zone) */
        .globl  __alloc_pages
__alloc_pages:
        movl    4(%esp), %eax
        movl    ZONE_PAGES_LOW(%eax), %ecx  # zone_watermark_ok reads the zone's counts
        movl    ZONE_FREE_LEFT(%eax), %edx
        pushl   %eax
        call    buffered_rmqueue
        addl    $4, %esp
        ret

/* free_hot_page(page): onto this CPU's per_cpu_pages */
        .globl  free_hot_page
free_hot_page:
        movl    $-8192, %eax
        andl    %esp, %eax
        .if     CONFIG_PREEMPT              # get_cpu(): preempt_disable (mm/page_alloc.c
        incl    TI_PREEMPT(%eax)            # 618 of 2.6.12.1)
        .endif
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %edx
        movl    4(%esp), %ecx
        testl   $0x3071, PG_FLAGS(%ecx)     # free_pages_check
        jnz     9f
        pushfl
        cli
        movl    PCPU_PCP_COUNT(%edx), %eax
        cmpl    $(PCP_STACK_MAX), %eax
        jae     9f                          # over pcp->high: free_pages_bulk, not in a run
        movl    %ecx, PCPU_PCP_STACK(%edx,%eax,4)
        incl    PCPU_PCP_COUNT(%edx)
        popfl
        preempt_enable %eax                 # put_cpu() (625)
        ret
9:      ud2

/* ---------------------------------------------------------------- mm/vmscan.c */

/* shrink_list(zone): reclaim SWAP_CLUSTER_MAX pages from the tail of the zone's inactive
 * list: isolate them under lru_lock; for each, lock it, drop its referenced bit
 * (page_referenced), do what writeback would have done to it (clean the page, its buffer
 * and its tree tag), release its buffer (ext3_releasepage -> journal_try_to_free_buffers,
 * try_to_free_buffers), take it out of the page cache under the tree lock and free it to
 * this CPU's list. */
        .globl  shrink_list
shrink_list:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebp              # zone
        leal    ZONE_LRU_LOCK(%ebp), %eax
        pushl   %eax
        call    _spin_lock_irq
        addl    $4, %esp
        movl    $(SWAP_CLUSTER_MAX), %edi
        xorl    %esi, %esi                  # the isolated pages, linked through lru.next
1:      leal    ZONE_INACTIVE(%ebp), %eax
        movl    4(%eax), %ebx               # the tail: head->prev
        cmpl    %eax, %ebx
        je      2f                          # empty
        movl    4(%ebx), %ecx               # list_del: entry->prev
        movl    (%ebx), %edx
        movl    %ecx, 4(%edx)
        movl    %edx, (%ecx)
        decl    ZONE_NR_INACTIVE(%ebp)
        subl    $(PG_LRU_NEXT), %ebx        # the page
        lock btrl $(PG_lru), PG_FLAGS(%ebx) # TestClearPageLRU
        movl    %esi, PG_LRU_NEXT(%ebx)
        movl    %ebx, %esi
        decl    %edi
        jnz     1b
2:      leal    ZONE_LRU_LOCK(%ebp), %eax
        pushl   %eax
        call    _spin_unlock_irq
        addl    $4, %esp
3:      testl   %esi, %esi                  # shrink_list proper
        jz      8f
        movl    %esi, %ebx
        movl    PG_LRU_NEXT(%ebx), %esi
        lock btsl $(PG_locked), PG_FLAGS(%ebx)  # TestSetPageLocked
        jc      9f
        lock btrl $(PG_referenced), PG_FLAGS(%ebx)  # page_referenced
        pushl   %ebx
        call    writeback_done
        call    journal_try_to_free_buffers
        call    try_to_free_buffers
        call    remove_from_page_cache
        lock btrl $(PG_locked), PG_FLAGS(%ebx)  # unlock_page (no waiters)
        call    free_hot_page
        addl    $4, %esp
        jmp     3b
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* writeback_done(page): the stand-in for the writeback the model leaves out: what
 * test_clear_page_dirty, the buffer's write and end_page_writeback leave behind. */
        .globl  writeback_done
writeback_done:
        pushl   %ebx
        movl    8(%esp), %ebx               # page
        lock btrl $(PG_dirty), PG_FLAGS(%ebx)
        jnc     1f
        pushl   $-1                         # dec_page_state(nr_dirty)
        pushl   $(PS_NR_DIRTY)
        call    __mod_page_state
        addl    $8, %esp
        movl    PG_MAPPING(%ebx), %eax      # the tree's dirty tag
        leal    AS_TREE_LOCK(%eax), %ecx
        pushl   %ecx
        call    _write_lock_irq
        pushl   $0
        pushl   PG_INDEX(%ebx)
        movl    PG_MAPPING(%ebx), %eax
        leal    AS_PAGE_TREE(%eax), %eax
        pushl   %eax
        call    radix_tree_tag_clear
        addl    $12, %esp
        call    _write_unlock_irq
        addl    $4, %esp
1:      movl    PG_PRIVATE(%ebx), %eax      # the buffer written: clean
        lock btrl $(BH_Dirty), BH_STATE(%eax)
        popl    %ebx
        ret

/* radix_tree_tag_clear(root, index, tag): clear the item's tag, and the nodes' above it
 * while they have no other item tagged */
        .globl  radix_tree_tag_clear
radix_tree_tag_clear:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $40, %esp                   # path: (node, offset) per level
        movl    60(%esp), %esi              # root
        movl    RR_HEIGHT(%esi), %ebx
        imull   $6, %ebx, %ecx
        subl    $6, %ecx
        movl    RR_RNODE(%esi), %esi
        movl    %esp, %edi
1:      movl    64(%esp), %eax
        shrl    %cl, %eax
        andl    $63, %eax
        movl    %esi, (%edi)
        movl    %eax, 4(%edi)
        addl    $8, %edi
        movl    RN_SLOTS(%esi,%eax,4), %esi
        subl    $6, %ecx
        decl    %ebx
        jnz     1b
        movl    68(%esp), %ebp              # tag
2:      cmpl    %esp, %edi
        je      3f
        subl    $8, %edi
        movl    (%edi), %esi
        movl    4(%edi), %eax
        leal    RN_TAGS(%esi,%ebp,8), %edx
        btrl    %eax, (%edx)
        cmpl    $0, (%edx)
        jne     3f
        cmpl    $0, 4(%edx)
        je      2b
3:      addl    $40, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* journal_try_to_free_buffers(page) (fs/jbd/transaction.c 1621-1654 of 2.6.12.1, through
 * ext3_releasepage): the buffer's journal_head grabbed (b_jcount + 1), then under its state
 * lock __journal_try_to_free_buffer (1551-1581): a clean, unlocked buffer no later
 * transaction wants, still on a transaction's data list (BJ_SyncData, BJ_Locked) and on no
 * checkpoint list, is unfiled (__journal_unfile_buffer), journal_remove_journal_head (the
 * grab's reference keeps the head) and __brelse; then journal_put_journal_head drops the
 * grab's reference (the last one frees the head), and the state lock. A data buffer is on
 * no checkpoint list, so the checkpointed-metadata branch is not reached. */
        .globl  journal_try_to_free_buffers
journal_try_to_free_buffers:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %eax              # page
        movl    PG_PRIVATE(%eax), %ebx      # bh
        testl   $(1 << BH_JBD), BH_STATE(%ebx)
        jz      5f
        preempt_disable %eax
1:      lock btsl $(BH_JournalHead), BH_STATE(%ebx)     # journal_grab_journal_head
        jc      1b
        movl    BH_PRIVATE(%ebx), %esi      # jh
        incl    JH_JCOUNT(%esi)
        lock btrl $(BH_JournalHead), BH_STATE(%ebx)
        preempt_enable %eax
        preempt_disable %eax
2:      lock btsl $(BH_State), BH_STATE(%ebx)   # jbd_lock_bh_state
        jc      2b
        testl   $((1 << BH_Dirty) | (1 << BH_Lock)), BH_STATE(%ebx)
        jnz     4f
        cmpl    $0, JH_NEXT_T(%esi)
        jne     4f
        movl    JH_TRANSACTION(%esi), %edi
        testl   %edi, %edi
        jz      4f
        movl    T_JOURNAL(%edi), %eax
        leal    J_LIST_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        cmpl    $0, JH_CP_T(%esi)
        jne     3f
        movl    JH_JLIST(%esi), %eax
        cmpl    $(BJ_SYNCDATA), %eax
        je      6f
        cmpl    $(BJ_LOCKED), %eax
        jne     3f
6:      pushl   %esi
        call    __journal_unfile_buffer
        movl    %ebx, (%esp)
        call    journal_remove_journal_head
        addl    $4, %esp
        call    jbd_brelse                  # __brelse(bh)
3:      call    _spin_unlock
        addl    $4, %esp
4:      pushl   %esi                        # journal_put_journal_head(jh)
        call    journal_put_journal_head
        addl    $4, %esp
        lock btrl $(BH_State), BH_STATE(%ebx)   # jbd_unlock_bh_state
        preempt_enable %eax
5:      popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* try_to_free_buffers(page) (fs/buffer.c): under the mapping's private_lock, the page's
 * buffer detached (drop_buffers, __clear_page_buffers), then freed to the slab */
        .globl  try_to_free_buffers
try_to_free_buffers:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # page
        movl    PG_PRIVATE(%esi), %ebx      # bh
        movl    PG_MAPPING(%esi), %eax
        leal    AS_PRIVATE_LOCK(%eax), %eax
        pushl   %eax
        call    _spin_lock
        cmpl    $0, BH_COUNT(%ebx)          # buffer_busy
        jne     9f
        testl   $((1 << BH_Dirty) | (1 << BH_Lock) | (1 << BH_JBD)), BH_STATE(%ebx)
        jnz     9f
        lock btrl $(PG_private), PG_FLAGS(%esi)     # __clear_page_buffers
        movl    $0, PG_PRIVATE(%esi)
        lock decl PG_COUNT(%esi)            # page_cache_release
        call    _spin_unlock
        addl    $4, %esp
        pushl   %ebx                        # free_buffer_head(bh)
        pushl   bh_cachep
        call    kmem_cache_free
        addl    $8, %esp
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %eax
        decl    PCPU_BH_NR(%eax)
        popl    %esi
        popl    %ebx
        ret
9:      ud2                                 # a busy buffer: not in a run

/* remove_from_page_cache(page): __remove_from_page_cache under the tree lock, and the
 * page cache's reference */
        .globl  remove_from_page_cache
remove_from_page_cache:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # page
        movl    PG_MAPPING(%ebx), %esi
        leal    AS_TREE_LOCK(%esi), %eax
        pushl   %eax
        call    _write_lock_irq
        pushl   PG_INDEX(%ebx)
        leal    AS_PAGE_TREE(%esi), %eax
        pushl   %eax
        call    radix_tree_delete
        addl    $8, %esp
        movl    $0, PG_MAPPING(%ebx)
        decl    AS_NRPAGES(%esi)
        call    _write_unlock_irq
        addl    $4, %esp
        lock decl PG_COUNT(%ebx)            # __put_page: the page cache's reference
        popl    %esi
        popl    %ebx
        ret

/* ---------------------------------------------------------------- mm/swap.c */

/* mark_page_accessed(page): inactive, unreferenced -> referenced (a second touch would
 * activate it; pages a run touches twice are set up active) */
        .globl  mark_page_accessed
mark_page_accessed:
        movl    4(%esp), %eax
        movl    PG_FLAGS(%eax), %ecx
        testl   $(1 << PG_active), %ecx
        jnz     1f
        testl   $(1 << PG_referenced), %ecx
        jnz     1f
        lock btsl $(PG_referenced), PG_FLAGS(%eax)  # SetPageReferenced
1:      ret

/* put_page(page) (page_cache_release): drop a reference (never the last in a run) */
        .globl  put_page
put_page:
        movl    4(%esp), %eax
        lock decl PG_COUNT(%eax)
        jz      9f
        ret
9:      ud2

/* __pagevec_lru_add(pvec): the pages onto their zone's inactive list under lru_lock,
 * then release_pages drops the pagevec's references */
        .globl  __pagevec_lru_add
__pagevec_lru_add:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %esi              # pvec: nr, cold, pages[]
        movl    page_zone_highmem, %edi
        leal    ZONE_LRU_LOCK(%edi), %eax
        pushl   %eax
        call    _spin_lock_irq
        xorl    %ecx, %ecx
1:      cmpl    (%esi), %ecx
        jae     2f
        movl    8(%esi,%ecx,4), %ebx        # page
        lock btsl $(PG_lru), PG_FLAGS(%ebx) # TestSetPageLRU
        jc      9f
        leal    PG_LRU_NEXT(%ebx), %ebx     # add_page_to_inactive_list: list_add at head
        leal    ZONE_INACTIVE(%edi), %eax
        movl    (%eax), %edx                # next = head->next
        movl    %ebx, 4(%edx)               # next->prev = new
        movl    %edx, (%ebx)                # new->next = next
        movl    %eax, 4(%ebx)               # new->prev = head
        movl    %ebx, (%eax)                # head->next = new
        incl    ZONE_NR_INACTIVE(%edi)
        incl    %ecx
        jmp     1b
2:      call    _spin_unlock_irq
        addl    $4, %esp
        xorl    %ebx, %ebx                  # release_pages: put_page_testzero
3:      cmpl    (%esi), %ebx
        jae     4f
        movl    8(%esi,%ebx,4), %eax
        lock decl PG_COUNT(%eax)
        jz      9f
        incl    %ebx
        jmp     3b
4:      movl    $0, (%esi)                  # pagevec_reinit
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* ---------------------------------------------------------------- mm/page-writeback.c */

/* __set_page_dirty_nobuffers(page) (mm/page-writeback.c 617-644 of 2.6.12.1): the page
 * dirty; a page of a mapping also gets its tree's dirty tag under the tree lock, the
 * inode's I_DIRTY_PAGES (already set) */
        .globl  __set_page_dirty_nobuffers
__set_page_dirty_nobuffers:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # page
        lock btsl $(PG_dirty), PG_FLAGS(%ebx)   # TestSetPageDirty
        jc      1f
        movl    PG_MAPPING(%ebx), %esi
        testl   %esi, %esi                  # if (mapping)
        jz      1f
        leal    AS_TREE_LOCK(%esi), %eax
        pushl   %eax
        call    _write_lock_irq
        movl    AS_BDI(%esi), %eax          # mapping_cap_account_dirty
        testl   $(BDI_CAP_NO_ACCT_DIRTY), BDI_CAPABILITIES(%eax)
        jnz     2f
        pushl   $1                          # inc_page_state(nr_dirty)
        pushl   $(PS_NR_DIRTY)
        call    __mod_page_state
        addl    $8, %esp
2:      pushl   $0                          # PAGECACHE_TAG_DIRTY
        pushl   PG_INDEX(%ebx)
        leal    AS_PAGE_TREE(%esi), %eax
        pushl   %eax
        call    radix_tree_tag_set
        addl    $12, %esp
        call    _write_unlock_irq
        addl    $4, %esp
        pushl   $4                          # I_DIRTY_PAGES
        pushl   AS_HOST(%esi)
        call    __mark_inode_dirty
        addl    $8, %esp
1:      xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

/* ---------------------------------------------------------------- mm/filemap.c */

/* find_get_page(mapping, offset) -> page with a reference, or NULL */
        .globl  find_get_page
find_get_page:
        pushl   %ebx
        movl    8(%esp), %ebx               # mapping
        leal    AS_TREE_LOCK(%ebx), %eax
        pushl   %eax
        call    _read_lock_irq
        pushl   16(%esp)
        leal    AS_PAGE_TREE(%ebx), %eax
        pushl   %eax
        call    radix_tree_lookup
        addl    $8, %esp
        testl   %eax, %eax
        jz      1f
        lock incl PG_COUNT(%eax)
1:      movl    %eax, %ebx
        call    _read_unlock_irq
        addl    $4, %esp
        movl    %ebx, %eax
        popl    %ebx
        ret

/* find_lock_page(mapping, offset) -> locked page, or NULL (a new page of the file: NULL) */
        .globl  find_lock_page
find_lock_page:
        pushl   %ebx
        movl    8(%esp), %ebx
        leal    AS_TREE_LOCK(%ebx), %eax
        pushl   %eax
        call    _read_lock_irq
        pushl   16(%esp)
        leal    AS_PAGE_TREE(%ebx), %eax
        pushl   %eax
        call    radix_tree_lookup
        addl    $8, %esp
        testl   %eax, %eax
        jnz     9f                          # a cached page: rewrite, not in a run
        call    _read_unlock_irq
        addl    $4, %esp
        xorl    %eax, %eax
        popl    %ebx
        ret
9:      ud2

/* add_to_page_cache(page, mapping, offset) -> 0: into the tree under the tree lock,
 * locked, with the page cache's reference */
        .globl  add_to_page_cache
add_to_page_cache:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # page
        movl    16(%esp), %esi              # mapping
        movl    $-8192, %eax                # radix_tree_preload: this CPU's spare nodes
        andl    %esp, %eax
        .if     CONFIG_PREEMPT              # preempt_disable (lib/radix-tree.c 118 of
        incl    TI_PREEMPT(%eax)            # 2.6.12.1), the preload full: no allocation
        .endif
        movl    TI_CPU(%eax), %eax
        movl    __per_cpu_offset(,%eax,4), %eax
        movl    PCPU_RTP_NR(%eax), %eax
        leal    AS_TREE_LOCK(%esi), %eax
        pushl   %eax
        call    _write_lock_irq
        pushl   %ebx
        pushl   28(%esp)                    # offset
        leal    AS_PAGE_TREE(%esi), %eax
        pushl   %eax
        call    radix_tree_insert
        addl    $12, %esp
        lock incl PG_COUNT(%ebx)            # page_cache_get
        lock btsl $(PG_locked), PG_FLAGS(%ebx)  # SetPageLocked
        movl    %esi, PG_MAPPING(%ebx)
        movl    24(%esp), %eax              # offset
        movl    %eax, PG_INDEX(%ebx)
        incl    AS_NRPAGES(%esi)
        call    _write_unlock_irq
        addl    $4, %esp
        preempt_enable %eax                 # radix_tree_preload_end (mm/filemap.c 392)
        xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

/* zone_wait_queue: the queue of the zone's wait table (ecx: the zone) that a key (eax)
 * hashes to, into eax (hash_long(key, zone->wait_table_bits), include/linux/hash.h; the
 * zone's table as page_waitqueue, mm/filemap.c, and bit_waitqueue, kernel/wait.c, index
 * it); edx clobbered. Inline in its users (unlock_page here, vfs_2612.S's wake_up_bit,
 * writeback_2612.S's wake_up_page, fs_writeback_2612.S's wake_up_inode), as gcc inlines
 * hash_long. */
        .macro  zone_wait_queue
        imull   $0x9e370001, %eax, %eax     # hash_long: GOLDEN_RATIO_PRIME_32
        pushl   %ecx
        movl    $32, %edx
        subl    ZONE_WAIT_BITS(%ecx), %edx
        movl    %edx, %ecx
        shrl    %cl, %eax
        popl    %ecx
        imull   $(WAIT_QUEUE_HEAD), %eax, %eax
        addl    ZONE_WAIT_TABLE(%ecx), %eax
        .endm

/* unlock_page(page): clear PG_locked, then wake_up_page: the queue of the page's waiters
 * (page_waitqueue: its zone's wait_table, indexed by hash_ptr(page, wait_table_bits)) is
 * looked at by __wake_up_bit */
        .globl  unlock_page
unlock_page:
        movl    4(%esp), %eax
        lock btrl $(PG_locked), PG_FLAGS(%eax)  # TestClearPageLocked
        jnc     9f
        movl    page_zone_highmem, %ecx
        zone_wait_queue
        pushl   %eax
        call    __wake_up_bit
        addl    $4, %esp
        ret
9:      ud2

/* generic_file_aio_write(file, buf, count, ppos) (with ext3_file_write and do_sync_write
 * folded in): the inode's i_sem, generic_write_checks, remove_suid, inode_update_time,
 * then generic_file_buffered_write. */
        .globl  generic_file_aio_write
generic_file_aio_write:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # file
        movl    F_MAPPING(%esi), %eax
        movl    AS_HOST(%eax), %ebx         # inode
        lock decl I_SEM(%ebx)               # down(&inode->i_sem)
        js      9f
        testl   $0x400, F_FLAGS(%esi)       # generic_write_checks: O_APPEND
        jnz     9f
        movl    $-8192, %eax                # the RLIMIT_FSIZE of current
        andl    %esp, %eax
        movl    TI_TASK(%eax), %eax
        movl    TSK_RLIMIT_FSIZE(%eax), %eax
        movl    I_MODE(%ebx), %eax          # remove_suid: S_ISUID / S_ISGID?
        testl   $0xc00, %eax
        jnz     9f
        movl    xtime, %eax                 # inode_update_time: mtime in whole seconds
        cmpl    I_MTIME(%ebx), %eax
        jne     9f                          # a new second: mark_inode_dirty_sync, not here
        pushl   24(%esp)                    # generic_file_buffered_write(file, buf,
        pushl   24(%esp)                    #   count, ppos)
        pushl   24(%esp)
        pushl   %esi
        call    generic_file_buffered_write
        addl    $16, %esp
        lock incl I_SEM(%ebx)               # up(&inode->i_sem)
        jle     9f
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* generic_file_buffered_write(file, buf, count, ppos) -> bytes written: for each page,
 * __grab_cache_page, prepare_write, the copy, commit_write, unlock; the pages onto the
 * LRU at the end (the local pagevec). */
        .globl  generic_file_buffered_write
generic_file_buffered_write:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $88, %esp                   # lru_pvec (64), pos (8), written, bytes, index
        movl    $0, 0(%esp)                 # pagevec_init
        movl    $0, 4(%esp)
        movl    120(%esp), %eax             # ppos
        movl    (%eax), %ecx
        movl    %ecx, 64(%esp)              # pos
        movl    4(%eax), %ecx
        movl    %ecx, 68(%esp)
        movl    $0, 72(%esp)                # written
        movl    108(%esp), %eax             # file
        movl    F_MAPPING(%eax), %ebp       # mapping
1:      movl    116(%esp), %edi             # count left
        testl   %edi, %edi
        jz      8f
        movl    64(%esp), %eax              # offset, index
        movl    %eax, %esi
        andl    $(PAGE_SIZE - 1), %esi      # offset
        movl    $(PAGE_SIZE), %ecx
        subl    %esi, %ecx                  # bytes = min(PAGE_SIZE - offset, count)
        cmpl    %edi, %ecx
        jbe     2f
        movl    %edi, %ecx
2:      movl    %ecx, 76(%esp)              # bytes
        movl    112(%esp), %eax             # fault_in_pages_readable(buf, bytes)
        movb    (%eax), %dl
        movb    -1(%eax,%ecx), %dl
        movl    64(%esp), %eax              # index = pos >> 12 (44-bit pos)
        movl    68(%esp), %edx
        shrdl   $12, %edx, %eax
        movl    %eax, 80(%esp)
        pushl   %eax                        # __grab_cache_page: find_lock_page misses
        pushl   %ebp
        call    find_lock_page
        addl    $8, %esp
        pushl   page_zone_highmem           # page_cache_alloc(mapping)
        call    __alloc_pages
        addl    $4, %esp
        movl    %eax, %ebx                  # page
        pushl   80(%esp)                    # add_to_page_cache(page, mapping, index)
        pushl   %ebp
        pushl   %ebx
        call    add_to_page_cache
        addl    $12, %esp
        lock incl PG_COUNT(%ebx)            # page_cache_get
        movl    0(%esp), %eax               # pagevec_add(lru_pvec, page)
        movl    %ebx, 8(%esp,%eax,4)
        incl    %eax
        movl    %eax, 0(%esp)
        cmpl    $(PAGEVEC_SIZE), %eax
        jb      3f
        movl    %esp, %eax
        pushl   %eax
        call    __pagevec_lru_add
        addl    $4, %esp
3:      movl    AS_A_OPS(%ebp), %eax        # a_ops->prepare_write(file, page, from, to)
        movl    76(%esp), %ecx
        addl    %esi, %ecx
        pushl   %ecx
        pushl   %esi
        pushl   %ebx
        pushl   120(%esp)                   # file
        call    *AOPS_PREPARE_WRITE(%eax)
        addl    $16, %esp
        pushl   $(KM_USER0)                 # filemap_copy_from_user: kmap_atomic(page,
        pushl   %ebx                        #   KM_USER0), routines/x86/highmem_2612.S
        call    kmap_atomic
        addl    $8, %esp
        pushl   %eax                        # kaddr, for kunmap_atomic
        addl    %esi, %eax
        pushl   80(%esp)                    # __copy_from_user_inatomic(kaddr + offset,
        pushl   120(%esp)                   #   buf, bytes)
        pushl   %eax
        call    __copy_from_user_ll
        addl    $12, %esp
        popl    %ecx                        # kunmap_atomic(kaddr, KM_USER0)
        pushl   %eax
        pushl   $(KM_USER0)
        pushl   %ecx
        call    kunmap_atomic
        addl    $8, %esp
        popl    %eax
        testl   %eax, %eax                  # bytes left: a fault, not in a run
        jnz     9f
        movl    AS_A_OPS(%ebp), %eax        # a_ops->commit_write(file, page, from, to)
        movl    76(%esp), %ecx
        addl    %esi, %ecx
        pushl   %ecx
        pushl   %esi
        pushl   %ebx
        pushl   120(%esp)
        call    *AOPS_COMMIT_WRITE(%eax)
        addl    $16, %esp
        movl    76(%esp), %eax              # written += bytes; count -= bytes; pos and
        addl    %eax, 72(%esp)              # buf on
        subl    %eax, 116(%esp)
        addl    %eax, 112(%esp)
        addl    %eax, 64(%esp)
        adcl    $0, 68(%esp)
        pushl   %ebx
        call    unlock_page
        call    mark_page_accessed
        call    put_page                    # page_cache_release
        addl    $4, %esp
        pushl   %ebp
        call    balance_dirty_pages_ratelimited
        addl    $4, %esp
        movl    $-8192, %eax
        andl    %esp, %eax
        testl   $8, TI_FLAGS(%eax)          # cond_resched: TIF_NEED_RESCHED
        jnz     9f
        jmp     1b
8:      movl    120(%esp), %eax             # *ppos = pos
        movl    64(%esp), %ecx
        movl    %ecx, (%eax)
        movl    68(%esp), %ecx
        movl    %ecx, 4(%eax)
        cmpl    $0, 0(%esp)                 # pagevec_lru_add(&lru_pvec)
        je      7f
        movl    %esp, %eax
        pushl   %eax
        call    __pagevec_lru_add
        addl    $4, %esp
7:      movl    72(%esp), %eax              # written
        addl    $88, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2
