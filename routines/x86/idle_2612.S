/*
 * The idle task of Linux 2.6.12 on i386, written for the book from the algorithm of
 * arch/i386/kernel/process.c: cpu_idle's inner loop (while !need_resched(): clear the
 * per-CPU cpu_idle_state, rmb, take pm_idle or default_idle, test cpu_is_offline, note
 * jiffies in the per-CPU irq_stat's idle_timestamp, call it) and default_idle (hlt_counter 0 and hlt_works_ok:
 * local_irq_disable, then safe_halt, "sti; hlt", unless need_resched is set meanwhile).
 * pm_idle is NULL: a 2.2 GHz Xeon MP (NetBurst, no MONITOR/MWAIT) and no idle= option.
 *
 * The CPU halts at the hlt: the model stops there (emu.hw.faults.GuestHalted), lets the
 * halted time pass, and takes the interrupt that ends it as the wake-up of a writer
 * (TIF_NEED_RESCHED set); the call after it finds need_resched set and leaves the loop,
 * where 2.6.12 calls schedule() (not modelled). Calling convention: cdecl,
 * cpu_idle(idle thread_info, per-CPU area); returns 0; preserves ebx, esi, edi, ebp.
 * current_thread_info() would be esp & ~8191: the caller passes it instead (the model's
 * calls run on their core's stack, not on the idle task's).
 */

/* default_idle(thread_info): halts the CPU until the next interrupt */
        .globl  default_idle
default_idle:
        movl    4(%esp), %edx
        cmpl    $0, hlt_counter
        jne     2f
        cli                                 # local_irq_disable
        testl   $8, TI_FLAGS(%edx)
        jnz     1f
        sti                                 # safe_halt: sti; hlt
        hlt
        ret
1:      sti                                 # local_irq_enable
        ret
2:      pause                               # cpu_relax: rep; nop
        ret


        .globl  cpu_idle
cpu_idle:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # the idle task's thread_info
        movl    16(%esp), %esi              # this CPU's per-CPU area
1:      testl   $8, TI_FLAGS(%ebx)          # need_resched: 1 << TIF_NEED_RESCHED (3)
        jnz     2f
        cmpl    $0, PCPU_CPU_IDLE_STATE(%esi)   # cpu_idle_state: cleared when set
        je      3f
        movl    $0, PCPU_CPU_IDLE_STATE(%esi)
3:      lfence                              # rmb(): lfence on SSE2 CPUs (alternative())
        movl    TI_CPU(%ebx), %ecx          # cpu_is_offline(smp_processor_id()): never
        btl     %ecx, cpu_online_map        # here, but tested (play_dead not modelled)
        movl    pm_idle, %eax
        testl   %eax, %eax
        jnz     4f
        movl    default_idle_address, %eax
4:      movl    jiffies, %ecx
        movl    %ecx, PCPU_IDLE_TIMESTAMP(%esi) # irq_stat.idle_timestamp = jiffies
        pushl   %ebx
        call    *%eax
        addl    $4, %esp
        jmp     1b
2:      xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret

        .data
        .align  4
        .globl  pm_idle
pm_idle:
        .long   0
        .globl  hlt_counter
hlt_counter:
        .long   0
default_idle_address:
        .long   default_idle                # the C's function pointer, as a word
        .globl  jiffies
jiffies:                                    # jiffies_64 (its low word is jiffies)
        .long   0, 0
        .globl  cpu_online_map
cpu_online_map:
        .long   0xff                        # NR_CPUS 8, all online
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
