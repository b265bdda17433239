/*
 * __copy_user_zeroing_intel(to, from, n): the unrolled copy Linux uses on Intel CPUs when
 * source and destination are differently aligned (CONFIG_X86_INTEL_USERCOPY).
 *
 * Follows __copy_user_zeroing_intel of Linux 2.6.12 (arch/i386/lib/usercopy.c, unchanged in
 * 2.6.12.1 and in the 2.6.12.4 tree Yoshioka's patch applies to). Per 64-byte block:
 *   - load the word at +32, and the word at +64 too when more than 67 bytes are left (the
 *     next block): touching the lines early, as a prefetch would;
 *   - copy the 64 bytes as eight pairs of movl loads into eax/edx and two movl stores;
 *   - size -= 64, from += 64, to += 64; again while more than 63 bytes are left.
 * Then the rest: rep movsl of rest / 4 words and rep movsb of rest % 4 bytes.
 *
 * PRECONDITION: n >= 64. The loop is entered without a test, so a smaller n copies 64 bytes
 * anyway and the count wraps below zero (unsigned: huge) and the loop runs on. The kernel only
 * calls it through __movsl_is_ok, which chooses it for n >= 64 only; emu.usercopy refuses
 * smaller sizes for this entry.
 *
 * Faults (emu.extable): every load of the loop has an exception-table entry whose fixup zeroes
 * the `size` bytes from the current destination pointer, i.e. from the start of the block that
 * faulted (the block's bytes already stored are zeroed again), and returns size. A fault in
 * the rep movsl goes first to a fixup that counts 4 per word left plus the tail; a fault in
 * the rep movsb zeroes the bytes left. As in the kernel's table, the stores have no entries:
 * the destination of copy_from_user is kernel memory (__copy_user_intel, the copy TO user
 * space, lists its stores instead).
 *
 * Calling convention: cdecl, __copy_user_zeroing_intel(void *to, const void *from,
 * unsigned long n); returns (eax) the number of bytes NOT copied. Clobbers eax, ecx, edx as
 * the kernel's asm does; preserves ebx, esi, edi, ebp.
 */
        .globl  __copy_user_zeroing_intel
__copy_user_zeroing_intel:
        pushl   %esi
        pushl   %edi
        movl    12(%esp), %edi              # to
        movl    16(%esp), %esi              # from
        movl    20(%esp), %ecx              # size
        .align  2, 0x90
0:      movl    32(%esi), %eax              # touch the block's second line
        cmpl    $67, %ecx
        jbe     2f
1:      movl    64(%esi), %eax              # and the next block's first line
        .align  2, 0x90
2:      movl    0(%esi), %eax
21:     movl    4(%esi), %edx
        movl    %eax, 0(%edi)
        movl    %edx, 4(%edi)
3:      movl    8(%esi), %eax
31:     movl    12(%esi), %edx
        movl    %eax, 8(%edi)
        movl    %edx, 12(%edi)
4:      movl    16(%esi), %eax
41:     movl    20(%esi), %edx
        movl    %eax, 16(%edi)
        movl    %edx, 20(%edi)
10:     movl    24(%esi), %eax
51:     movl    28(%esi), %edx
        movl    %eax, 24(%edi)
        movl    %edx, 28(%edi)
11:     movl    32(%esi), %eax
61:     movl    36(%esi), %edx
        movl    %eax, 32(%edi)
        movl    %edx, 36(%edi)
12:     movl    40(%esi), %eax
71:     movl    44(%esi), %edx
        movl    %eax, 40(%edi)
        movl    %edx, 44(%edi)
13:     movl    48(%esi), %eax
81:     movl    52(%esi), %edx
        movl    %eax, 48(%edi)
        movl    %edx, 52(%edi)
14:     movl    56(%esi), %eax
91:     movl    60(%esi), %edx
        movl    %eax, 56(%edi)
        movl    %edx, 60(%edi)
        addl    $-64, %ecx
        addl    $64, %esi
        addl    $64, %edi
        cmpl    $63, %ecx
        ja      0b
5:      movl    %ecx, %eax
        shrl    $2, %ecx                    # words left
        andl    $3, %eax                    # bytes after them
        cld
6:      rep movsl
        movl    %eax, %ecx
7:      rep movsb
8:      movl    %ecx, %eax                  # bytes not copied
        popl    %edi
        popl    %esi
        ret

        .section .fixup, "ax"
9:      leal    0(%eax,%ecx,4), %ecx        # fault in the words: 4 per word left + the tail
16:     pushl   %ecx
        pushl   %eax
        xorl    %eax, %eax
        rep stosb                           # zero the rest of the destination
        popl    %eax
        popl    %ecx
        jmp     8b
        .previous

        .section __ex_table, "a"
        .align  4
        .long   0b, 16b
        .long   1b, 16b
        .long   2b, 16b
        .long   21b, 16b
        .long   3b, 16b
        .long   31b, 16b
        .long   4b, 16b
        .long   41b, 16b
        .long   10b, 16b
        .long   51b, 16b
        .long   11b, 16b
        .long   61b, 16b
        .long   12b, 16b
        .long   71b, 16b
        .long   13b, 16b
        .long   81b, 16b
        .long   14b, 16b
        .long   91b, 16b
        .long   6b, 9b
        .long   7b, 16b
        .previous

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly,
 * which the bytes above can lead astray by up to 14 bytes; this brings it back in step before
 * whatever is loaded after this file. Never executed. */
        .space  15, 0x90
