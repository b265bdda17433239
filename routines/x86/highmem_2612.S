/*
 * Atomic kernel mappings of a page-cache page around the copy of a write(), Linux 2.6.12 on
 * i386 with CONFIG_HIGHMEM4G (two-level page tables, 4-byte PTEs), written for the book from
 * the algorithms of 2.6.12.1's arch/i386/mm/highmem.c 28-75 (kmap_atomic, kunmap_atomic without
 * CONFIG_DEBUG_HIGHMEM), include/asm-i386/tlbflush.h 48-59 (__flush_tlb_one: invlpg with
 * CONFIG_X86_INVLPG, arch/i386/defconfig 86), include/asm-i386/kmap_types.h (KM_USER0 3,
 * KM_TYPE_NR 13), include/asm-i386/fixmap.h (__fix_to_virt: FIXADDR_TOP 0xfffff000 less the
 * slot's pages), include/linux/mm.h (page_zone: zone_table[flags >> NODEZONE_SHIFT];
 * is_highmem), include/linux/hardirq.h (inc_preempt_count, dec_preempt_count), mm/filemap.c
 * 1723-1740 (filemap_copy_from_user: kmap_atomic(page, KM_USER0), the copy,
 * kunmap_atomic; routines/x86/mm_2612.S calls them).
 *
 * kmap_atomic(page, type): preempt_count up; a highmem page gets this CPU's fixmap slot
 * idx = type + KM_TYPE_NR * cpu: its PTE (kmap_pte - idx) set to the page's frame with
 * kmap_prot, and the slot's address flushed from the TLB (invlpg). The copy's first access
 * to the slot then misses the DTLB and the page walker reads the page directory entry and
 * the PTE: two loads here stand for that walk (their addresses the walker's, through the
 * cache model; the walk's own latency beyond them is not modelled). The model has no MMU, so
 * the address returned is the page's frame in guest memory (what the PTE maps; frames are
 * shared by pages FRAME_BYTES apart), highmem or not; a lowmem page gets no PTE (its address
 * is page_address's). zone_table[0] is the page cache's zone (the model's pages carry zone
 * bits 0 in their flags): the highmem zone (Kernel(highmem=True), the scored machine) or the
 * normal zone (False). kunmap_atomic(kvaddr, type): preempt_count down, then
 * preempt_check_resched() (include/linux/preempt.h 41-45: TIF_NEED_RESCHED tested,
 * preempt_schedule if set; nothing without CONFIG_PREEMPT, 58). kmap_atomic's
 * inc_preempt_count is there in either configuration ("even !CONFIG_PREEMPT needs this").
 * Calling convention: cdecl (kmap_atomic's callers pass the type on the stack; the kernel's
 * i386 build passes it the same way, kmap_atomic not being fastcall); ebx, esi, edi, ebp
 * preserved. Offsets: the equates emu/papers/yoshioka2005/ext3model/ puts in front.
 */
        .equ    KM_TYPE_NR, 13
        .equ    NODEZONE_SHIFT, 24          # 32 - MAX_NODES_SHIFT 6 - MAX_ZONES_SHIFT 2
        .equ    FIXADDR_TOP, 0xfffff000
        .equ    FIX_KMAP_BEGIN, 11          # after FIX_HOLE, FIX_VSYSCALL, FIX_APIC_BASE and
                                            # 8 IO-APICs: it moves only the slot's address

        .globl  kmap_atomic
kmap_atomic:
        movl    $-8192, %eax                # inc_preempt_count
        andl    %esp, %eax
        incl    TI_PREEMPT(%eax)
        movl    4(%esp), %edx               # page
        movl    PG_FLAGS(%edx), %ecx        # PageHighMem: page_zone(page) ...
        shrl    $(NODEZONE_SHIFT), %ecx
        movl    zone_table(,%ecx,4), %ecx
        cmpl    highmem_zone, %ecx          # ... is the node's ZONE_HIGHMEM
        jne     1f
        pushl   %ebx
        movl    TI_CPU(%eax), %eax          # idx = type + KM_TYPE_NR * smp_processor_id()
        imull   $(KM_TYPE_NR), %eax, %eax
        addl    12(%esp), %eax
        movl    %edx, %ebx                  # mk_pte(page, kmap_prot): its pfn << PAGE_SHIFT
        subl    mem_map, %ebx
        sarl    $5, %ebx                    # / sizeof(struct page)
        shll    $12, %ebx
        orl     kmap_prot, %ebx
        movl    %eax, %ecx                  # set_pte(kmap_pte - idx, pte)
        negl    %ecx
        movl    kmap_pte, %edx
        leal    (%edx,%ecx,4), %edx
        movl    %ebx, (%edx)
        shll    $12, %eax                   # vaddr = __fix_to_virt(FIX_KMAP_BEGIN + idx)
        movl    $(FIXADDR_TOP - (FIX_KMAP_BEGIN << 12)), %ecx
        subl    %eax, %ecx
        invlpg  (%ecx)                      # __flush_tlb_one(vaddr)
        shrl    $22, %ecx                   # the DTLB refill at the copy's first access: the
        movl    swapper_pg_dir(,%ecx,4), %eax   # walker's loads of the PDE and the PTE
        movl    (%edx), %eax
        popl    %ebx
        movl    4(%esp), %edx
1:      movl    page_zone_highmem, %ecx     # the frame the mapping reaches (the model's
        movl    %edx, %eax                  # memory is flat)
        subl    ZONE_MEM_MAP(%ecx), %eax
        shrl    $5, %eax                    # / PAGE_STRUCT: the page's number
        andl    ZONE_FRAME_MASK(%ecx), %eax
        shll    $12, %eax
        addl    ZONE_FRAMES(%ecx), %eax
        ret

        .globl  kunmap_atomic
kunmap_atomic:
        movl    $-8192, %eax                # dec_preempt_count
        andl    %esp, %eax
        decl    TI_PREEMPT(%eax)
        .if     CONFIG_PREEMPT              # preempt_check_resched()
        testl   $(TIF_NEED_RESCHED_BIT), TI_FLAGS(%eax)
        jz      1f
        call    preempt_schedule
1:
        .endif
        ret

        .data
        .align  4
        .globl  zone_table
zone_table:                                 # page_zone's table: entry 0 set by the Kernel
        .long   0
        .globl  highmem_zone
highmem_zone:                               # contig_page_data.node_zones + ZONE_HIGHMEM
        .long   0
        .globl  mem_map
mem_map:                                    # the first struct page: the zone's, here
        .long   0
        .globl  kmap_pte
kmap_pte:                                   # the PTE of FIX_KMAP_BEGIN (its page set by
        .long   0                           # the Kernel)
        .globl  kmap_prot
kmap_prot:
        .long   0x163                       # PAGE_KERNEL: present, rw, accessed, dirty, global
        .align  4096
        .globl  swapper_pg_dir
swapper_pg_dir:                             # the kernel's page directory (1024 PDEs)
        .space  4096, 0
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
