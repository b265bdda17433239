/*
 * __copy_from_user_ll(to, from, n) of Linux 2.6.12: copy n bytes from user space, choosing
 * between the two copies by alignment. Load it together with copy_user_zeroing_intel.S
 * (emu.usercopy.load(machine, "2.6.12") does).
 *
 * Follows arch/i386/lib/usercopy.c of Linux 2.6.12 (2.6.12.1 and the 2.6.12.4 tree Yoshioka's
 * patch applies to are the same), with CONFIG_X86_INTEL_USERCOPY (set for Pentium 4 kernels):
 *   BUG_ON((long)n < 0)                       -> ud2 (an invalid-opcode exception);
 *   if (movsl_is_ok(to, from, n))            n < 64, or to and from agree in the bits of
 *       __copy_user_zeroing(to, from, n);    movsl_mask.mask (7 on the P4: the same offset
 *   else                                     in an 8-byte word): the rep movsl copy,
 *       n = __copy_user_zeroing_intel(...);  expanded inline as the kernel's macro is;
 *   return n;                                else the unrolled copy (a call).
 *
 * Calling convention: cdecl, __copy_from_user_ll(void *to, const void __user *from,
 * unsigned long n); returns (eax) the number of bytes NOT copied (the rest of the destination
 * zero-filled). Preserves ebx, esi, edi, ebp.
 */
        .globl  __copy_from_user_ll
__copy_from_user_ll:
        pushl   %esi
        pushl   %edi
        pushl   %ebx
        movl    16(%esp), %edi              # to
        movl    20(%esp), %esi              # from
        movl    24(%esp), %ecx              # n
        testl   %ecx, %ecx
        js      .Lbug
        cmpl    $63, %ecx                   # movsl_is_ok(to, from, n):
        jbe     .Lmovsl                     #   n < 64,
        movl    %edi, %eax
        xorl    %esi, %eax
        testl   %eax, movsl_mask            #   or (to ^ from) & movsl_mask.mask == 0
        jz      .Lmovsl
        pushl   %ecx
        pushl   %esi
        pushl   %edi
        call    __copy_user_zeroing_intel
        addl    $12, %esp
        jmp     .Lout
.Lmovsl:                                    # __copy_user_zeroing(to, from, n), inline
        movl    %ecx, %ebx
        cmpl    $7, %ecx
        jbe     1f
        movl    %edi, %ecx
        negl    %ecx
        andl    $7, %ecx
        subl    %ecx, %ebx
4:      rep movsb
        movl    %ebx, %ecx
        shrl    $2, %ecx
        andl    $3, %ebx
        .align  2, 0x90
0:      rep movsl
        movl    %ebx, %ecx
1:      rep movsb
2:      movl    %ecx, %eax                  # n = bytes not copied
.Lout:
        popl    %ebx
        popl    %edi
        popl    %esi
        ret
.Lbug:
        ud2                                 # BUG_ON((long)n < 0)

        .section .fixup, "ax"
5:      addl    %ebx, %ecx
        jmp     6f
3:      leal    0(%ebx,%ecx,4), %ecx
6:      pushl   %ecx
        pushl   %eax
        xorl    %eax, %eax
        rep stosb
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

/* movsl_mask.mask: 7 on the P4 (family 15; arch/i386/kernel/cpu/intel.c, init_intel). */
        .globl  movsl_mask
movsl_mask:
        .long   7

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly,
 * which the bytes above can lead astray by up to 14 bytes; this brings it back in step before
 * whatever is loaded after this file. Never executed. */
        .space  15, 0x90
