/*
 * copy_loop(ring, ring_bytes, from, n, count, reread, fpu_owner, offset): the book's harness for
 * Yoshioka 2005's copy size sweep (not kernel code). count times, __copy_from_user_ll(to,
 * from, n) into the next n bytes of a ring of destinations (rounded up to 64-byte lines;
 * a ring larger than the caches makes every destination cold, a ring of n bytes keeps
 * one hot destination); with reread, the copied bytes are then read back, a word at a
 * time, as a consumer of the data soon after the copy would (a checksum, a pipe reader);
 * with fpu_owner, the task's FPU state is live before each copy (TS_USEDFPU set, as after
 * the task's own floating-point or SSE code) and is restored after it, as the
 * device-not-available trap's math_state_restore would when the task next uses the FPU.
 * Load it after emu.usercopy's kernel (the __copy_from_user_ll to measure) and
 * mmx_memcpy_nt.S (thread_status, math_state_restore), which 2.6.12's kernel lacks.
 * offset: where in the ring to start (the offset after the last copy is left in
 * copy_loop_next, for the next call to go on from).
 * Calling convention: cdecl; returns the sum of the words read back (0 without reread).
 */
        .globl  copy_loop
copy_loop:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    48(%esp), %ebp              # the ring's offset
        xorl    %ebx, %ebx                  # the sum read back
1:      cmpl    $0, 36(%esp)                # count
        je      5f
        cmpl    $0, 44(%esp)                # fpu_owner: the task's state is live
        je      2f
        orl     $1, thread_status           # TS_USEDFPU, and CR0.TS clear: the task
        clts                                # owns the FPU, its state in the registers
2:      movl    20(%esp), %edi              # to = ring + offset
        addl    %ebp, %edi
        pushl   32(%esp)                    # __copy_from_user_ll(to, from, n)
        pushl   32(%esp)
        pushl   %edi
        call    __copy_from_user_ll
        addl    $12, %esp
        cmpl    $0, 44(%esp)
        je      3f
        testl   $1, thread_status           # the copy took the FPU (kernel_fpu_begin
        jnz     3f                          # saved the task's state and cleared the bit):
        call    math_state_restore          # the task's next FPU use traps and restores it
3:      cmpl    $0, 40(%esp)                # reread the copied words
        je      4f
        movl    32(%esp), %ecx
        shrl    $2, %ecx
        jz      4f
6:      addl    (%edi), %ebx
        addl    $4, %edi
        decl    %ecx
        jnz     6b
4:      movl    32(%esp), %eax              # offset += n rounded up to 64; wrap
        addl    $63, %eax
        andl    $-64, %eax
        addl    %eax, %ebp
        movl    %ebp, %eax
        addl    32(%esp), %eax
        cmpl    24(%esp), %eax
        jbe     7f
        xorl    %ebp, %ebp
7:      decl    36(%esp)
        jmp     1b
5:      movl    %ebp, copy_loop_next
        movl    %ebx, %eax
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

        .data
        .globl  copy_loop_next
copy_loop_next:
        .long   0
        .text

/* Fifteen one-byte nops after the data (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
