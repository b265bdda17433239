/*
 * locked_adds(lock, counter, n): n times, take a spin lock, add 1 to a shared counter,
 * release the lock. Linux i386 of the 2.6 era (include/asm-i386/spinlock.h) takes the lock
 * with "lock; decb" and spins reading it; this routine uses the equivalent exchange (xchg
 * with memory is always locked on x86): swap 1 into the lock word until the old value is 0.
 * The release is a plain store of 0 (x86 stores are not reordered with earlier stores).
 * The counter is updated with ordinary loads and stores.
 *
 * In (cdecl): lock word (0: free), counter, n (> 0)
 */
        .globl  locked_adds
locked_adds:
        pushl   %ebx
        movl    8(%esp), %ecx               # lock
        movl    12(%esp), %edx              # counter
        movl    16(%esp), %ebx              # n
1:      movl    $1, %eax
        xchgl   %eax, (%ecx)                # claim: the old value comes back in eax
        testl   %eax, %eax
        jnz     1b
locked_adds_held:                           # the lock is held from here
        movl    (%edx), %eax                # the critical section
        incl    %eax
        movl    %eax, (%edx)
        movl    $0, (%ecx)                  # release
locked_adds_released:                       # to here (the critical section)
        decl    %ebx
        jnz     1b
        popl    %ebx
        ret
