/*
 * iozone's write test (iozone -i 0, throughput mode), the loop of one child: for each
 * record, fill_buffer's one store per page of the buffer (sverify 1, iozone's default),
 * then write(fd, buf, reclen) through system_call (see vfs_2612.S). Written for the book
 * after thread_write_test in iozone.c (3.471, the version at hand; the paper's 2005
 * version is not): the record is 4 KB (iozone's default without -r) and each child writes
 * the same slice of its buffer every time.
 *
 * Then the kernel's global data the routines of this chapter use (set by yoshioka2005 ext3model):
 * the per-CPU offsets, the slab caches, the zones, xtime, the system call table and ext3's
 * address_space_operations.
 * Calling convention: cdecl, iozone_write_test(ctx, records) -> the records written;
 * ctx: task, fd, buf, reclen, fill pattern (yoshioka2005 ext3model CTX). Preserves ebx, esi,
 * edi, ebp.
 */
        .globl  iozone_write_test
iozone_write_test:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    20(%esp), %ebp              # ctx
        xorl    %edi, %edi                  # records written
1:      cmpl    24(%esp), %edi
        jae     2f
        movl    CTX_BUF(%ebp), %eax         # fill_buffer: a word at each page
        movl    CTX_FILL(%ebp), %ecx
        movl    %ecx, (%eax)
        movl    $(NR_WRITE), %eax           # write(fd, buf, reclen)
        movl    CTX_FD(%ebp), %ebx
        movl    CTX_BUF(%ebp), %ecx
        movl    CTX_RECLEN(%ebp), %edx
        movl    CTX_TASK(%ebp), %esi
        call    system_call
        cmpl    CTX_RECLEN(%ebp), %eax
        jne     2f
        incl    %edi
        jmp     1b
2:      movl    %edi, %eax
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

        .data
        .align  64
        .globl  __per_cpu_offset
__per_cpu_offset:
        .long   0, 0, 0, 0, 0, 0, 0, 0      # NR_CPUS 8
        .globl  tvec_bases
tvec_bases:                                 # &per_cpu(tvec_bases, cpu): timer_2612.S
        .long   0, 0, 0, 0, 0, 0, 0, 0
        .globl  journal_head_cache
journal_head_cache:
        .long   0
        .globl  jbd_handle_cache
jbd_handle_cache:
        .long   0
        .globl  bh_cachep
bh_cachep:
        .long   0
        .globl  radix_tree_node_cachep
radix_tree_node_cachep:
        .long   0
        .globl  size4096_cache
size4096_cache:
        .long   0
        .globl  bio_slab
bio_slab:
        .long   0
        .globl  biovec_slab
biovec_slab:
        .long   0
        .globl  request_cachep
request_cachep:
        .long   0
        .globl  blk_max_pfn
blk_max_pfn:
        .long   0
        .globl  page_zone_highmem
page_zone_highmem:
        .long   0
        .globl  page_zone_normal
page_zone_normal:
        .long   0
        .globl  xtime
xtime:
        .long   0, 0
        .globl  sys_call_table
sys_call_table:
        .long   0, 0, 0, 0, sys_write
        .globl  ext3_ordered_aops
ext3_ordered_aops:
        .long   ext3_ordered_writepage, 0, 0, 0, 0, 0, ext3_prepare_write
        .long   ext3_ordered_commit_write
        .globl  size128_cache
size128_cache:
        .long   0
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
