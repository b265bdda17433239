/*
 * _mmx_memcpy_nt(to, from, len): Yoshioka's non-temporal copy from user space, for copies of
 * 512 bytes or more (LKML, August 2005, "reduce cache pollution of __copy_from_user_ll()").
 *
 * Follows the _mmx_memcpy_nt of the patch to Linux 2.6.12.4 arch/i386/lib/usercopy.c, itself
 * _mmx_memcpy of arch/i386/lib/mmx.c (2.6.12) with prefetchnta for the 3DNow! prefetch and
 * movntq for the movq stores:
 *   - in_interrupt() (preempt_count & (HARDIRQ_MASK | SOFTIRQ_MASK)): no FPU; copy with
 *     __copy_user_zeroing and return its result;
 *   - kernel_fpu_begin();
 *   - prefetchnta the first five lines, from+0 .. from+256;
 *   - i = len / 64 blocks; while i > 5: prefetchnta 320 bytes (five lines) ahead, then
 *     movq 4 x 8 bytes into mm0-mm3 and movntq them out, twice (64 bytes);
 *   - the last five blocks without the prefetch;
 *   - kernel_fpu_end();
 *   - the len % 64 bytes left with __copy_user_zeroing (expanded inline, as the kernel's
 *     macro is); return what it did not copy.
 * As posted, the patch has NO sfence after the movntq stores (2.6.12's own K7 movntq loops in
 * mmx.c have one, "since movntq is weakly-ordered"; so do the kernel's later nocache copies,
 * e.g. 2.6.18's __copy_user_zeroing_intel_nocache) and no emms. _mmx_memcpy_nt_sfence below
 * (the book's, not the patch's) adds the sfence after the copy for comparison.
 * The movq loads have NO exception-table entries either: a fault in the 64-byte loop is not
 * fixed up (the kernel would oops on a bad user address instead of returning -EFAULT); only
 * the tail, through __copy_user_zeroing, and the prefetches have entries.
 *
 * kernel_fpu_begin / kernel_fpu_end as Linux 2.6.12 has them (arch/i386/kernel/i387.c,
 * include/asm-i386/i387.h): if the current task owns the FPU (TS_USEDFPU in thread_info's
 * status) its state is saved with fxsave + fnclex (the P4 has FXSR; the kernel picks
 * fnsave + fwait only on CPUs without it) and TS_USEDFPU is cleared; otherwise only clts.
 * kernel_fpu_end is stts(): set CR0.TS. Nothing is restored at the end: the task's state comes
 * back lazily, when it next touches the FPU, MMX or SSE registers and takes the
 * device-not-available trap, whose math_state_restore does clts + fxrstor and sets TS_USEDFPU
 * again; math_state_restore below is that work, to call after a copy to charge it.
 * preempt_disable/preempt_enable are left out (a kernel without CONFIG_PREEMPT); the thread
 * state is a fixed block (preempt_count, thread_status, task_fxsave), not found through esp.
 *
 * The prefetch fixups are kept from mmx.c: if a prefetch faults, its fixup overwrites the
 * prefetch instructions with a short jump over them (0xEB 0x1A: the 28 bytes of the first set;
 * 0xEB 0x05: the 7-byte prefetchnta 320(%esi)) and resumes. Prefetches never fault on the
 * P4 (nor in the emulator), so these never run; the encodings keep the sizes they rely on.
 *
 * Calling convention: cdecl, _mmx_memcpy_nt(void *to, const void *from, size_t len); returns
 * (eax) the bytes NOT copied. Preserves ebx, esi, edi, ebp; clobbers mm0-mm3 and sets CR0.TS.
 */
        .equ    TS_USEDFPU, 0x0001
        .equ    IRQ_MASK, 0x0fffff00        # HARDIRQ_MASK | SOFTIRQ_MASK: bits 8-27
        .equ    X86_CR0_TS, 0x8

        .globl  kernel_fpu_begin
kernel_fpu_begin:
        testl   $(TS_USEDFPU), thread_status
        jz      .Lfpu_free
        fxsave  task_fxsave                 # __save_init_fpu(current)
        fnclex
        andl    $0xfffffffe, thread_status  # ~TS_USEDFPU
        ret
.Lfpu_free:
        clts
        ret

        .globl  math_state_restore
math_state_restore:
        clts
        fxrstor task_fxsave                 # restore_fpu(current)
        orl     $(TS_USEDFPU), thread_status
        ret

        .globl  _mmx_memcpy_nt_sfence
_mmx_memcpy_nt_sfence:
        pushl   12(%esp)
        pushl   12(%esp)
        pushl   12(%esp)
        call    _mmx_memcpy_nt
        addl    $12, %esp
        sfence
        ret

        .globl  _mmx_memcpy_nt
_mmx_memcpy_nt:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    16(%esp), %edi              # to
        movl    20(%esp), %esi              # from
        movl    24(%esp), %ebx              # len
        testl   $(IRQ_MASK), preempt_count    # in_interrupt()
        jnz     .Lin_interrupt
        call    kernel_fpu_begin
        movl    %ebx, %edx
        shrl    $6, %edx                    # i = len / 64
.Lprefetch_set:
        prefetchnta (%esi)                  # these five are 28 bytes
        prefetchnta 64(%esi)
        prefetchnta 128(%esi)
        prefetchnta 192(%esi)
        prefetchnta 256(%esi)
.Lprefetch_set_end:
        cmpl    $5, %edx
        jle     .Lno_prefetch
.Lprefetch_320:
        prefetchnta 320(%esi)               # 7 bytes
.Lblock:
        movq    (%esi), %mm0
        movq    8(%esi), %mm1
        movq    16(%esi), %mm2
        movq    24(%esi), %mm3
        movntq  %mm0, (%edi)
        movntq  %mm1, 8(%edi)
        movntq  %mm2, 16(%edi)
        movntq  %mm3, 24(%edi)
        movq    32(%esi), %mm0
        movq    40(%esi), %mm1
        movq    48(%esi), %mm2
        movq    56(%esi), %mm3
        movntq  %mm0, 32(%edi)
        movntq  %mm1, 40(%edi)
        movntq  %mm2, 48(%edi)
        movntq  %mm3, 56(%edi)
        addl    $64, %esi
        addl    $64, %edi
        decl    %edx
        cmpl    $5, %edx
        jg      .Lprefetch_320
.Lno_prefetch:
        testl   %edx, %edx
        jle     .Lblocks_done
.Llast_blocks:
        movq    (%esi), %mm0
        movq    8(%esi), %mm1
        movq    16(%esi), %mm2
        movq    24(%esi), %mm3
        movntq  %mm0, (%edi)
        movntq  %mm1, 8(%edi)
        movntq  %mm2, 16(%edi)
        movntq  %mm3, 24(%edi)
        movq    32(%esi), %mm0
        movq    40(%esi), %mm1
        movq    48(%esi), %mm2
        movq    56(%esi), %mm3
        movntq  %mm0, 32(%edi)
        movntq  %mm1, 40(%edi)
        movntq  %mm2, 48(%edi)
        movntq  %mm3, 56(%edi)
        addl    $64, %esi
        addl    $64, %edi
        decl    %edx
        jg      .Llast_blocks
.Lblocks_done:
        movl    %cr0, %eax                  # kernel_fpu_end(): stts()
        orl     $(X86_CR0_TS), %eax
        movl    %eax, %cr0
        movl    %ebx, %ecx
        andl    $63, %ecx                   # i = len % 64
        jz      .Lreturn
.Lzeroing:                                  # __copy_user_zeroing(to, from, i), inline
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
2:
.Lreturn:
        movl    %ecx, %eax                  # bytes not copied
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
.Lin_interrupt:
        movl    %ebx, %ecx                  # __copy_user_zeroing(to, from, len); return len
        jmp     .Lzeroing

        .section .fixup, "ax"
.Lfix_prefetch_set:
        movw    $0x1AEB, .Lprefetch_set     # jmp over the 26 bytes after it
        jmp     .Lprefetch_set_end
.Lfix_prefetch_320:
        movw    $0x05EB, .Lprefetch_320     # jmp over the 5 bytes after it
        jmp     .Lblock
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
        .long   .Lprefetch_set, .Lfix_prefetch_set
        .long   .Lprefetch_320, .Lfix_prefetch_320
        .long   4b, 5b
        .long   0b, 3b
        .long   1b, 6b
        .previous

/* The current task's state the routines above read and write, on a page of its own (code
 * pages are not written). The test harness and emu.usercopy set these words. */
        .data
        .align  4096
        .globl  preempt_count
preempt_count:
        .long   0                           # in_interrupt() when bits 8-27 are set
        .globl  thread_status
thread_status:
        .long   0                           # TS_USEDFPU: the task's FPU state is live
        .align  16
        .globl  task_fxsave
task_fxsave:
        .space  512                         # fxsave area (16-byte aligned)
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly,
 * which the bytes above can lead astray by up to 14 bytes; this brings it back in step before
 * whatever is loaded after this file. Never executed. */
        .space  15, 0x90
