/*
 * __copy_user_zeroing(to, from, n): copy n bytes from user space, "rep movsl" with a byte
 * tail, zero-filling what a fault leaves uncopied.
 *
 * Follows the algorithm of the __copy_user_zeroing macro of Linux 2.6.12
 * (arch/i386/lib/usercopy.c; the same in 2.6.12.1 and 2.6.12-rc2, and the tree Yoshioka's
 * patch applies to, 2.6.12.4). In the kernel it is a macro that its callers
 * (__copy_from_user_ll and, after the patch, _mmx_memcpy_nt) expand inline; here it is
 * wrapped as a function so the book can run it on its own.
 *
 *   n <= 7:  rep movsb, n bytes.
 *   n > 7:   rep movsb of the 0-7 bytes that bring the DESTINATION to an 8-byte boundary,
 *            rep movsl of the rest / 4 words, rep movsb of the last rest % 4 bytes.
 *
 * Faults (emu.extable): each rep instruction has an exception-table entry. Its fixup counts
 * the bytes not yet copied (the remaining bytes of the alignment copy plus all after it; or
 * 4 x the remaining words plus the tail; or the remaining tail bytes), fills that many
 * destination bytes with zeros from where the copy stopped (rep stosb), and returns it.
 * Our assembler lays .section contents in place, so the fixup code and the table stand after
 * the ret, where nothing falls into them.
 *
 * Calling convention: cdecl, __copy_user_zeroing(void *to, const void *from, unsigned long n);
 * returns (eax) the number of bytes NOT copied (0 on success), as the kernel's size output.
 * Preserves ebx, esi, edi, ebp; expects the direction flag clear (the kernel's ABI).
 */
        .globl  __copy_user_zeroing
__copy_user_zeroing:
        pushl   %esi
        pushl   %edi
        pushl   %ebx
        movl    16(%esp), %edi              # to
        movl    20(%esp), %esi              # from
        movl    24(%esp), %ecx              # size
        movl    %ecx, %ebx                  # the macro's %3: bytes left after this rep
        cmpl    $7, %ecx
        jbe     1f                          # 7 bytes or fewer: bytes only
        movl    %edi, %ecx
        negl    %ecx
        andl    $7, %ecx                    # bytes to the destination's next 8-byte boundary
        subl    %ecx, %ebx
4:      rep movsb
        movl    %ebx, %ecx
        shrl    $2, %ecx                    # words
        andl    $3, %ebx                    # and the bytes after them
        .align  2, 0x90
0:      rep movsl
        movl    %ebx, %ecx
1:      rep movsb
2:      movl    %ecx, %eax                  # bytes not copied
        popl    %ebx
        popl    %edi
        popl    %esi
        ret

        .section .fixup, "ax"
5:      addl    %ebx, %ecx                  # fault in the alignment bytes
        jmp     6f
3:      leal    0(%ebx,%ecx,4), %ecx        # fault in the words: 4 per word left + the tail
6:      pushl   %ecx                        # fault in the tail bytes: ecx already
        pushl   %eax
        xorl    %eax, %eax
        rep stosb                           # zero the rest of the destination
        popl    %eax
        popl    %ecx
        jmp     2b
        .previous

        .section __ex_table, "a"
        .align  4
        .long   4b, 5b
        .long   0b, 3b
        .long   1b, 6b
        .previous

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly,
 * which the bytes above can lead astray by up to 14 bytes; this brings it back in step before
 * whatever is loaded after this file. Never executed. */
        .space  15, 0x90
