/*
 * The timer tick of Linux 2.6.12 on an i386 SMP machine (HZ 1000: include/asm-i386/param.h
 * 5), written for the book from the algorithms of 2.6.12.1's sources:
 *   arch/i386/kernel/apic.c 1111-1175: smp_local_timer_interrupt (profile_tick, the per-CPU
 *     prof_counter, update_process_times) and smp_apic_timer_interrupt (apic_timer_irqs,
 *     irq_enter, irq_exit); entry.S's BUILD_INTERRUPT stub (SAVE_ALL, ret_from_intr);
 *   kernel/timer.c 815-830 update_process_times; 898-901 run_local_timers; 887-896
 *     run_timer_softirq; 403-424 cascade; 436-480 __run_timers; 743-812 update_wall_time;
 *     856-868 calc_load; 907-929 update_times and do_timer;
 *   kernel/sched.c 2299-2324 account_system_time; 2354-2444 scheduler_tick (2234-2239
 *     update_cpu_clock, 2208-2225 wake_priority_sleeper with CONFIG_SCHED_SMT); 2153-2195
 *     rebalance_tick; 1914-2013 load_balance; 1758-1885 find_busiest_group (889-906
 *     source_load, target_load);
 *   include/linux/rcupdate.h 126-155 rcu_pending; kernel/posix-cpu-timers.c 1268-1282
 *     run_posix_cpu_timers' early return; mm/memory.c 2211-2221 update_mem_hiwater;
 *   kernel/profile.c profile_tick/profile_hit (prof_on off); kernel/softirq.c's
 *     raise_softirq; arch/i386/kernel/timers/timer_tsc.c 64-75, 137-155 sched_clock;
 *   arch/i386/kernel/time.c timer_interrupt (IRQ0: xtime_lock, do_timer) on CPU 0.
 *
 * local_timer_tick(esp0, cpu0) is the local APIC timer's interrupt on the kernel stack whose
 * top is esp0 (current: the thread_info at its bottom): the idle task's when the tick ends a
 * halt, the writer's when it comes while the CPU is busy. cpu0: this CPU takes IRQ0 too
 * (timer_interrupt's do_timer: jiffies_64, xtime), before its local tick. What each touches is
 * in guest memory: the per-CPU kstat, irq_stat, prof_counter, rcu_data and rcu_bh_data,
 * runqueue and sched_domain (tick_areas[cpu]: the second part of each CPU's per-CPU area),
 * the task, tvec_bases, jiffies, xtime, xtime_lock, rcu_ctrlblk.
 * Left out (each named where it would run; ``ud2`` where a path the model's state never
 * takes would need code that is not here): ack_APIC_irq's EOI write and IRQ0's I/O APIC and
 * irq_desc handling and mark_offset_tsc's PIT port reads; rcu_check_callbacks (no RCU work is
 * pending in the model); a timer cascading (none in a run: the commit timer is 5 s out;
 * a timer due runs, as __run_timers runs it); find_busiest_queue and move_tasks (no runqueue holds more than one task);
 * the interactive round robin of scheduler_tick and a used-up slice's requeue (a new
 * slice is given); calc_load's count_active_tasks (every 5001 ticks) and second_overflow
 * (once a second); the SMT sibling domain (whether the mail's CPUs had Hyper-Threading
 * is not known).
 * Calling convention: cdecl; ebx, esi, edi, ebp preserved. Offsets: the equates
 * emu/papers/yoshioka2005/ext3model/ puts in front.
 */
        .equ    LOCAL_TIMER_VECTOR, 0xef    # include/asm-i386/mach-default/irq_vectors.h
        .equ    HARDIRQ_MASK, 0x0fff0000    # include/linux/hardirq.h: HARDIRQ_BITS 12 (i386)
        .equ    SOFTIRQ_MASK, 0x0000ff00
        .equ    SCHED_LOAD_SCALE, 128       # include/linux/sched.h 457
        .equ    SCHED_IDLE, 0               # enum idle_type
        .equ    NOT_IDLE, 1
        .equ    NEWLY_IDLE, 2
        .equ    SD_LOAD_BALANCE, 1
        .equ    CPU_OFFSET_STEP, 125        # sched.c 2151: HZ * cpu / NR_CPUS, NR_CPUS 8
        .equ    CPU_PROFILING, 1            # include/linux/profile.h
        .equ    DEF_TIMESLICE, 100          # sched.c: task_timeslice of a nice-0 task, in ms
        .equ    CYC2NS_SCALE_FACTOR, 10     # timer_tsc.c 65
        .equ    NSEC_PER_SEC, 1000000000
        .equ    FINENSEC, 4096              # include/linux/timex.h: 1 << (SHIFT_SCALE - 10)

/* irq_exit (kernel/softirq.c): preempt_count down; softirqs pending and not in an
 * interrupt: do_softirq. esi: this thread_info */
        .macro  tick_irq_exit
        subl    $(HARDIRQ_OFFSET), TI_PREEMPT(%esi)
        testl   $(HARDIRQ_MASK | SOFTIRQ_MASK), TI_PREEMPT(%esi)
        jnz     99f
        movl    TI_CPU(%esi), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        cmpl    $0, PCPU_SOFTIRQ_PENDING(%ecx)
        je      99f
        call    do_softirq
99:
        .endm

        .globl  local_timer_tick
local_timer_tick:
        pushl   %ebp
        movl    %esp, %ebp
        movl    8(%ebp), %esp               # the interrupted task's kernel stack
        pushl   %ebp
        cmpl    $0, 12(%ebp)
        je      1f
        call    timer_irq0_interrupt        # CPU 0: IRQ0's interrupt first
1:      call    apic_timer_interrupt
        popl    %ebp
        movl    %ebp, %esp
        popl    %ebp
        ret

/* entry.S: BUILD_INTERRUPT(apic_timer_interrupt, LOCAL_TIMER_VECTOR) */
        .globl  apic_timer_interrupt
apic_timer_interrupt:
        save_all (LOCAL_TIMER_VECTOR - 256)
        movl    %esp, %eax                  # fastcall: regs in eax
        call    smp_apic_timer_interrupt
        ret_from_intr_kernel
        ret

/* smp_apic_timer_interrupt(regs) with smp_local_timer_interrupt inline */
        .globl  smp_apic_timer_interrupt
smp_apic_timer_interrupt:
        pushl   %ebx
        pushl   %esi
        movl    $-8192, %esi                # current_thread_info()
        andl    %esp, %esi
        movl    TI_CPU(%esi), %ebx
        movl    tick_areas(,%ebx,4), %ebx   # this CPU's per-CPU area (its second part)
        incl    TK_APIC_TIMER_IRQS(%ebx)    # per_cpu(irq_stat, cpu).apic_timer_irqs++
        addl    $(HARDIRQ_OFFSET), TI_PREEMPT(%esi)     # irq_enter (after ack_APIC_irq)
        cmpl    $0, timer_hook              # profile_tick: no timer_hook (oprofile's NMI
        jne     9f                          # mode sets none)
        movl    TI_CPU(%esi), %ecx          # !user_mode(regs) && cpu in prof_cpu_mask:
        btl     %ecx, prof_cpu_mask         # profile_hit, which returns at prof_on != type
        jnc     1f
        cmpl    $(CPU_PROFILING), prof_on
        je      9f                          # profile= not given: never
1:      decl    TK_PROF_COUNTER(%ebx)       # --per_cpu(prof_counter, cpu) <= 0
        jg      2f
        movl    TK_PROF_MULTIPLIER(%ebx), %eax
        movl    %eax, TK_PROF_COUNTER(%ebx)
        cmpl    TK_PROF_OLD_MULTIPLIER(%ebx), %eax
        jne     9f                          # __setup_APIC_LVTT: the multiplier never changes
        pushl   $0                          # update_process_times(user_mode_vm(regs)): the
        call    update_process_times        # model's ticks interrupt the kernel
        addl    $4, %esp
2:      tick_irq_exit
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* update_process_times(user_tick) */
        .globl  update_process_times
update_process_times:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        movl    $-8192, %esi
        andl    %esp, %esi
        movl    TI_TASK(%esi), %edi         # p = current
        cmpl    $0, 16(%esp)
        jne     9f                          # account_user_time: not in the model
        pushl   $1                          # jiffies_to_cputime(1)
        pushl   $(HARDIRQ_OFFSET)
        pushl   %edi
        call    account_system_time
        addl    $12, %esp
        pushfl                              # run_local_timers: raise_softirq(TIMER_SOFTIRQ)
        cli                                 # local_irq_save
        movl    TI_CPU(%esi), %ecx
        movl    __per_cpu_offset(,%ecx,4), %ecx
        orl     $(1 << TIMER_SOFTIRQ), PCPU_SOFTIRQ_PENDING(%ecx)
        testl   $(HARDIRQ_MASK | SOFTIRQ_MASK), TI_PREEMPT(%esi)
        jz      9f                          # wakeup_softirqd: never from an interrupt
        popfl                               # local_irq_restore
        movl    TI_CPU(%esi), %ebx          # rcu_pending(cpu)
        movl    tick_areas(,%ebx,4), %ebx
        leal    TK_RCU_DATA(%ebx), %eax
        pushl   %eax
        leal    rcu_ctrlblk, %eax
        pushl   %eax
        call    __rcu_pending
        addl    $8, %esp
        testl   %eax, %eax
        jnz     9f                          # rcu_check_callbacks: no RCU work in the model
        leal    TK_RCU_BH_DATA(%ebx), %eax
        pushl   %eax
        leal    rcu_bh_ctrlblk, %eax
        pushl   %eax
        call    __rcu_pending
        addl    $8, %esp
        testl   %eax, %eax
        jnz     9f
        call    scheduler_tick
        pushl   %edi
        call    run_posix_cpu_timers
        addl    $4, %esp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* account_system_time(p, hardirq_offset, cputime): p->stime, the cpustat word the context
 * picks (a 64-bit add), update_mem_hiwater(p); acct_update_integrals is empty without
 * CONFIG_BSD_PROCESS_ACCT (arch/i386/defconfig) */
        .globl  account_system_time
account_system_time:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %esi              # p
        movl    $-8192, %edx
        andl    %esp, %edx
        movl    TI_CPU(%edx), %ecx
        movl    tick_areas(,%ecx,4), %ebx   # kstat_this_cpu; this_rq() at TK_RQ
        movl    20(%esp), %eax              # cputime
        addl    %eax, TSK_STIME(%esi)       # p->stime += cputime
        movl    TI_PREEMPT(%edx), %ecx
        andl    $(HARDIRQ_MASK), %ecx
        cmpl    16(%esp), %ecx              # hardirq_count() - hardirq_offset
        je      1f
        leal    TK_CPUSTAT_IRQ(%ebx), %ecx
        jmp     5f
1:      testl   $(SOFTIRQ_MASK), TI_PREEMPT(%edx)   # softirq_count()
        jz      2f
        leal    TK_CPUSTAT_SOFTIRQ(%ebx), %ecx
        jmp     5f
2:      cmpl    TK_RQ + RQS_IDLE(%ebx), %esi        # p != rq->idle
        je      3f
        leal    TK_CPUSTAT_SYSTEM(%ebx), %ecx
        jmp     5f
3:      cmpl    $0, TK_RQ + RQS_NR_IOWAIT(%ebx)     # atomic_read(&rq->nr_iowait) > 0
        jle     4f
        leal    TK_CPUSTAT_IOWAIT(%ebx), %ecx
        jmp     5f
4:      leal    TK_CPUSTAT_IDLE(%ebx), %ecx
5:      addl    %eax, (%ecx)                # cputime64_add
        adcl    $0, 4(%ecx)
        movl    TSK_MM(%esi), %ecx          # update_mem_hiwater(p): if (tsk->mm)
        testl   %ecx, %ecx
        jz      7f
        movl    MM_RSS(%ecx), %eax
        cmpl    %eax, MM_HIWATER_RSS(%ecx)
        jae     6f
        movl    %eax, MM_HIWATER_RSS(%ecx)
6:      movl    MM_TOTAL_VM(%ecx), %eax
        cmpl    %eax, MM_HIWATER_VM(%ecx)
        jae     7f
        movl    %eax, MM_HIWATER_VM(%ecx)
7:      popl    %esi
        popl    %ebx
        ret

/* __rcu_pending(rcp, rdp) -> 1 if this CPU has RCU work */
        .globl  __rcu_pending
__rcu_pending:
        movl    4(%esp), %ecx               # rcp
        movl    8(%esp), %edx               # rdp
        cmpl    $0, RCU_CURLIST(%edx)
        je      1f
        movl    RCP_COMPLETED(%ecx), %eax   # !rcu_batch_before(rcp->completed, rdp->batch)
        subl    RCU_BATCH(%edx), %eax
        jns     9f
        jmp     2f
1:      cmpl    $0, RCU_NXTLIST(%edx)       # !curlist && nxtlist
        jne     9f
2:      cmpl    $0, RCU_DONELIST(%edx)
        jne     9f
        movl    RCU_QUIESCBATCH(%edx), %eax # quiescbatch != rcp->cur || qs_pending
        cmpl    RCP_CUR(%ecx), %eax
        jne     9f
        cmpl    $0, RCU_QS_PENDING(%edx)
        jne     9f
        xorl    %eax, %eax
        ret
9:      movl    $1, %eax
        ret

/* run_posix_cpu_timers(tsk): none armed (it_prof, it_virt and it_sched expires 0), so it
 * returns at its first test */
        .globl  run_posix_cpu_timers
run_posix_cpu_timers:
        movl    4(%esp), %edx
        cmpl    $0, TSK_IT_PROF_EXPIRES(%edx)
        jne     9f
        cmpl    $0, TSK_IT_VIRT_EXPIRES(%edx)
        jne     9f
        movl    TSK_IT_SCHED_EXPIRES(%edx), %eax
        orl     TSK_IT_SCHED_EXPIRES + 4(%edx), %eax
        jnz     9f
        ret
9:      ud2                                 # an armed CPU timer: not in the model

/* sched_clock -> ns in edx:eax: cycles_2_ns(rdtsc), (cyc * cyc2ns_scale) >> 10 */
        .globl  sched_clock
sched_clock:
        cmpl    $0, use_tsc
        je      9f
        rdtsc
        movl    %edx, %ecx
        imull   cyc2ns_scale, %ecx          # the high word's product (its low 32 bits)
        mull    cyc2ns_scale
        addl    %ecx, %edx
        shrdl   $(CYC2NS_SCALE_FACTOR), %edx, %eax
        shrl    $(CYC2NS_SCALE_FACTOR), %edx
        ret
9:      ud2                                 # jiffies_64 * NSEC_PER_JIFFY: the TSC is used

/* scheduler_tick() */
        .globl  scheduler_tick
scheduler_tick:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    $-8192, %eax
        andl    %esp, %eax
        movl    TI_TASK(%eax), %esi         # p = current
        movl    TI_CPU(%eax), %ebp          # cpu
        movl    tick_areas(,%ebp,4), %ebx
        addl    $(TK_RQ), %ebx              # rq = this_rq()
        call    sched_clock                 # now
        pushl   %edx
        pushl   %eax
        movl    TSK_TIMESTAMP(%esi), %ecx   # update_cpu_clock: last = max(p->timestamp,
        movl    TSK_TIMESTAMP + 4(%esi), %edi   # rq->timestamp_last_tick)
        cmpl    RQS_TS_LAST_TICK + 4(%ebx), %edi
        ja      2f
        jb      1f
        cmpl    RQS_TS_LAST_TICK(%ebx), %ecx
        jae     2f
1:      movl    RQS_TS_LAST_TICK(%ebx), %ecx
        movl    RQS_TS_LAST_TICK + 4(%ebx), %edi
2:      subl    %ecx, %eax                  # p->sched_time += now - last
        sbbl    %edi, %edx
        addl    %eax, TSK_SCHED_TIME(%esi)
        adcl    %edx, TSK_SCHED_TIME + 4(%esi)
        popl    %eax                        # rq->timestamp_last_tick = now
        popl    %edx
        movl    %eax, RQS_TS_LAST_TICK(%ebx)
        movl    %edx, RQS_TS_LAST_TICK + 4(%ebx)
        cmpl    RQS_IDLE(%ebx), %esi        # p == rq->idle
        jne     4f
        pushl   %ebx                        # wake_priority_sleeper (CONFIG_SCHED_SMT)
        call    _spin_lock
        cmpl    $0, RQS_NR_RUNNING(%ebx)
        jne     9f                          # resched_task(rq->idle): nothing queued here
        call    _spin_unlock
        addl    $4, %esp
        pushl   $(SCHED_IDLE)               # rebalance_tick(cpu, rq, SCHED_IDLE)
        jmp     6f
4:      movl    RQS_ACTIVE(%ebx), %eax      # p->array != rq->active: not in the model
        cmpl    TSK_ARRAY(%esi), %eax
        jne     9f
        pushl   %ebx                        # spin_lock(&rq->lock)
        call    _spin_lock
        cmpl    $(MAX_RT_PRIO), TSK_PRIO(%esi)  # rt_task(p): not iozone
        jb      9f
        decl    TSK_TIME_SLICE(%esi)        # !--p->time_slice: a new slice (the requeue
        jnz     5f                          # on the expired array left out)
        movl    $(DEF_TIMESLICE), TSK_TIME_SLICE(%esi)
        movl    $0, TSK_FIRST_TIME_SLICE(%esi)
5:      call    _spin_unlock                # (the interactive round robin left out)
        addl    $4, %esp
        pushl   $(NOT_IDLE)
6:      pushl   %ebx
        pushl   %ebp
        call    rebalance_tick
        addl    $12, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* rebalance_tick(this_cpu, this_rq, idle): the runqueue's load average, then each domain
 * whose interval has passed balanced */
        .globl  rebalance_tick
rebalance_tick:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        movl    24(%esp), %ebx              # this_rq
        movl    28(%esp), %edi              # idle
        imull   $(CPU_OFFSET_STEP), 20(%esp), %esi  # j = jiffies + CPU_OFFSET(this_cpu)
        addl    jiffies, %esi
        movl    RQS_CPU_LOAD(%ebx), %ecx    # old_load
        movl    RQS_NR_RUNNING(%ebx), %eax
        shll    $7, %eax                    # this_load = nr_running * SCHED_LOAD_SCALE
        cmpl    %ecx, %eax
        jbe     1f
        incl    %ecx                        # rounded up while rising
1:      addl    %ecx, %eax
        shrl    $1, %eax
        movl    %eax, RQS_CPU_LOAD(%ebx)
        movl    RQS_SD(%ebx), %ebp          # for_each_domain(this_cpu, sd)
2:      testl   %ebp, %ebp
        jz      8f
        testl   $(SD_LOAD_BALANCE), SD_FLAGS(%ebp)
        jz      7f
        movl    SD_BALANCE_INTERVAL(%ebp), %eax
        cmpl    $(SCHED_IDLE), %edi
        je      3f
        imull   SD_BUSY_FACTOR(%ebp), %eax
3:      testl   %eax, %eax                  # msecs_to_jiffies: the identity at HZ 1000
        jnz     4f
        movl    $1, %eax
4:      movl    %esi, %ecx
        subl    SD_LAST_BALANCE(%ebp), %ecx
        cmpl    %eax, %ecx                  # j - sd->last_balance >= interval
        jb      7f
        pushl   %eax
        pushl   %edi
        pushl   %ebp
        pushl   %ebx
        pushl   36(%esp)                    # this_cpu
        call    load_balance
        addl    $16, %esp
        popl    %ecx
        testl   %eax, %eax
        jnz     9f                          # tasks pulled: not with one task a runqueue
        addl    %ecx, SD_LAST_BALANCE(%ebp)
7:      movl    SD_PARENT(%ebp), %ebp
        jmp     2b
8:      popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* load_balance(this_cpu, this_rq, sd, idle) -> tasks moved: the busiest group, none found
 * busier (out_balanced): the interval doubled up to max_interval */
        .globl  load_balance
load_balance:
        pushl   %ebx
        pushl   %esi
        movl    16(%esp), %esi              # this_rq
        movl    20(%esp), %ebx              # sd
        pushl   %esi                        # spin_lock(&this_rq->lock)
        call    _spin_lock
        addl    $4, %esp
        pushl   24(%esp)                    # find_busiest_group(sd, this_cpu, idle)
        pushl   16(%esp)
        pushl   %ebx
        call    find_busiest_group
        addl    $12, %esp
        testl   %eax, %eax
        jnz     9f                          # find_busiest_queue, move_tasks: left out
        pushl   %esi                        # out_balanced: spin_unlock(&this_rq->lock)
        call    _spin_unlock
        addl    $4, %esp
        movl    SD_BALANCE_INTERVAL(%ebx), %eax
        cmpl    SD_MAX_INTERVAL(%ebx), %eax
        jae     1f
        shll    $1, SD_BALANCE_INTERVAL(%ebx)
1:      xorl    %eax, %eax
        popl    %esi
        popl    %ebx
        ret
9:      ud2

/* find_busiest_group(sd, this_cpu, idle) -> the busiest group, or 0 when balanced: each
 * group's load from its CPUs' runqueues (target_load for this CPU's group, source_load for
 * the others), scaled by its cpu_power; then the kernel's tests of imbalance */
        .globl  find_busiest_group
find_busiest_group:
        pushl   %ebx
        pushl   %esi
        pushl   %edi
        pushl   %ebp
        subl    $20, %esp                   # max_load, this_load, total_load, total_pwr, this
        movl    $0, (%esp)
        movl    $0, 4(%esp)
        movl    $0, 8(%esp)
        movl    $0, 12(%esp)
        movl    $0, 16(%esp)
        movl    40(%esp), %eax              # sd
        movl    SD_GROUPS(%eax), %esi       # group = sd->groups
        xorl    %edi, %edi                  # busiest = NULL
1:      xorl    %ebp, %ebp                  # avg_load = 0
        movl    SGRP_CPUMASK(%esi), %edx
        movl    44(%esp), %ecx              # local_group = cpu_isset(this_cpu, group->cpumask)
        btl     %ecx, %edx
        setc    %bl
2:      bsfl    %edx, %ecx                  # for_each_cpu_mask(i, group->cpumask)
        jz      4f
        btrl    %ecx, %edx
        movl    tick_areas(,%ecx,4), %ecx
        movl    TK_RQ + RQS_NR_RUNNING(%ecx), %eax
        shll    $7, %eax                    # load_now
        testb   %bl, %bl
        jz      3f
        cmpl    TK_RQ + RQS_CPU_LOAD(%ecx), %eax    # target_load: max(cpu_load, load_now)
        jae     31f
        movl    TK_RQ + RQS_CPU_LOAD(%ecx), %eax
        jmp     31f
3:      cmpl    TK_RQ + RQS_CPU_LOAD(%ecx), %eax    # source_load: min
        jbe     31f
        movl    TK_RQ + RQS_CPU_LOAD(%ecx), %eax
31:     addl    %eax, %ebp
        jmp     2b
4:      addl    %ebp, 8(%esp)               # total_load += avg_load
        movl    SGRP_CPU_POWER(%esi), %ecx
        addl    %ecx, 12(%esp)              # total_pwr += group->cpu_power
        movl    %ebp, %eax                  # avg_load * SCHED_LOAD_SCALE / cpu_power
        shll    $7, %eax
        xorl    %edx, %edx
        divl    %ecx
        testb   %bl, %bl
        jz      5f
        movl    %eax, 4(%esp)               # this_load, this
        movl    %esi, 16(%esp)
        jmp     6f
5:      cmpl    (%esp), %eax                # avg_load > max_load: the busiest so far
        jbe     6f
        movl    %eax, (%esp)
        movl    %esi, %edi
6:      movl    SGRP_NEXT(%esi), %esi
        movl    40(%esp), %eax
        cmpl    SD_GROUPS(%eax), %esi
        jne     1b
        testl   %edi, %edi                  # !busiest || this_load >= max_load
        jz      8f
        movl    4(%esp), %ebx
        cmpl    (%esp), %ebx
        jae     8f
        movl    8(%esp), %eax               # avg_load = SCHED_LOAD_SCALE * total_load /
        shll    $7, %eax                    # total_pwr
        xorl    %edx, %edx
        divl    12(%esp)
        movl    %eax, %ebp
        cmpl    %ebp, %ebx                  # this_load >= avg_load
        jae     8f
        movl    (%esp), %eax                # 100 * max_load <= imbalance_pct * this_load
        imull   $100, %eax, %eax
        movl    40(%esp), %ecx
        movl    SD_IMBALANCE_PCT(%ecx), %ecx
        imull   %ebx, %ecx
        cmpl    %ecx, %eax
        jbe     8f
        movl    (%esp), %eax                # imbalance = min((max_load - avg_load) *
        subl    %ebp, %eax                  # busiest->cpu_power, (avg_load - this_load) *
        imull   SGRP_CPU_POWER(%edi), %eax    # this->cpu_power) / SCHED_LOAD_SCALE
        movl    %ebp, %ecx
        subl    %ebx, %ecx
        movl    16(%esp), %edx
        imull   SGRP_CPU_POWER(%edx), %ecx
        cmpl    %ecx, %eax
        jbe     61f
        movl    %ecx, %eax
61:     shrl    $7, %eax
        cmpl    $(SCHED_LOAD_SCALE), %eax
        jae     7f                          # enough to move: busiest
        movl    (%esp), %eax                # max_load - this_load >= 2 * SCHED_LOAD_SCALE
        subl    %ebx, %eax
        cmpl    $(2 * SCHED_LOAD_SCALE), %eax
        jae     7f
        call    fbg_power_gain              # pwr_move > pwr_now: busiest
        testl   %eax, %eax
        jnz     7f
        jmp     8f
7:      movl    %edi, %eax                  # return busiest
        jmp     10f
8:      xorl    %eax, %eax                  # out_balanced: busiest && (NEWLY_IDLE ||
        testl   %edi, %edi                  # (SCHED_IDLE && max_load > SCHED_LOAD_SCALE))
        jz      10f
        movl    48(%esp), %ecx
        cmpl    $(NEWLY_IDLE), %ecx
        je      7b
        cmpl    $(SCHED_IDLE), %ecx
        jne     10f
        cmpl    $(SCHED_LOAD_SCALE), (%esp)
        ja      7b
10:     addl    $20, %esp
        popl    %ebp
        popl    %edi
        popl    %esi
        popl    %ebx
        ret

/* find_busiest_group's throughput test (sched.c 1844-1865), on its frame: max_load at
 * (%esp) before the call, this_load in ebx, this at 16(%esp), busiest in edi -> 1 if pwr_move > pwr_now */
fbg_power_gain:
        pushl   %esi
        pushl   %ebp
        movl    12(%esp), %esi              # max_load
        movl    $(SCHED_LOAD_SCALE), %eax   # pwr_now = busiest->cpu_power *
        cmpl    %esi, %eax                  # min(SCALE, max_load)
        jbe     1f
        movl    %esi, %eax
1:      imull   SGRP_CPU_POWER(%edi), %eax
        movl    $(SCHED_LOAD_SCALE), %ecx   # + this->cpu_power * min(SCALE, this_load)
        cmpl    %ebx, %ecx
        jbe     2f
        movl    %ebx, %ecx
2:      movl    28(%esp), %edx
        imull   SGRP_CPU_POWER(%edx), %ecx
        addl    %ecx, %eax
        shrl    $7, %eax                    # pwr_now /= SCHED_LOAD_SCALE
        movl    %eax, %ebp
        movl    $(SCHED_LOAD_SCALE * SCHED_LOAD_SCALE), %eax    # tmp = SCALE^2 / busiest's
        xorl    %edx, %edx                  # power
        divl    SGRP_CPU_POWER(%edi)
        xorl    %ecx, %ecx                  # pwr_move
        cmpl    %eax, %esi
        jbe     3f
        movl    %esi, %ecx                  # busiest->cpu_power * min(SCALE, max_load - tmp)
        subl    %eax, %ecx
        cmpl    $(SCHED_LOAD_SCALE), %ecx
        jbe     21f
        movl    $(SCHED_LOAD_SCALE), %ecx
21:     imull   SGRP_CPU_POWER(%edi), %ecx
3:      pushl   %ecx
        movl    %esi, %eax                  # max_load * busiest's power < SCALE^2
        imull   SGRP_CPU_POWER(%edi), %eax
        movl    32(%esp), %ecx              # this
        cmpl    $(SCHED_LOAD_SCALE * SCHED_LOAD_SCALE), %eax
        jae     4f
        xorl    %edx, %edx                  # tmp = max_load * busiest's power / this's
        divl    SGRP_CPU_POWER(%ecx)
        jmp     5f
4:      movl    $(SCHED_LOAD_SCALE * SCHED_LOAD_SCALE), %eax    # SCALE^2 / this's power
        xorl    %edx, %edx
        divl    SGRP_CPU_POWER(%ecx)
5:      addl    %ebx, %eax                  # this->cpu_power * min(SCALE, this_load + tmp)
        cmpl    $(SCHED_LOAD_SCALE), %eax
        jbe     6f
        movl    $(SCHED_LOAD_SCALE), %eax
6:      imull   SGRP_CPU_POWER(%ecx), %eax
        popl    %ecx
        addl    %ecx, %eax
        shrl    $7, %eax                    # pwr_move /= SCHED_LOAD_SCALE
        cmpl    %ebp, %eax
        seta    %al
        movzbl  %al, %eax
        popl    %ebp
        popl    %esi
        ret

/* run_timer_softirq: this CPU's base run if jiffies has reached its timer_jiffies */
        .globl  run_timer_softirq
run_timer_softirq:
        movl    $-8192, %ecx
        andl    %esp, %ecx
        movl    TI_CPU(%ecx), %ecx
        movl    tvec_bases(,%ecx,4), %eax   # &__get_cpu_var(tvec_bases)
        movl    jiffies, %edx               # time_after_eq(jiffies, base->timer_jiffies)
        subl    TVB_TIMER_JIFFIES(%eax), %edx
        js      1f
        pushl   %eax
        call    __run_timers
        addl    $4, %esp
1:      ret

/* cascade(base, tv, index) -> index: every timer of tv->vec[index] added again (none in a
 * run), the list emptied */
cascade:
        movl    8(%esp), %eax               # tv
        movl    12(%esp), %ecx              # index
        leal    (%eax,%ecx,8), %edx         # head = tv->vec + index
        cmpl    %edx, (%edx)                # curr = head->next; while (curr != head)
        jne     9f                          # internal_add_timer: no timer cascades in a run
        movl    %edx, (%edx)                # INIT_LIST_HEAD(head)
        movl    %edx, 4(%edx)
        movl    %ecx, %eax
        ret
9:      ud2

/* cascade(base, &base->tvN, INDEX(N)): the vector at its offset in the base, its index
 * timer_jiffies' 6 bits above ``shift``; eax: the index it returned */
        .macro  tick_cascade tv, shift
        movl    TVB_TIMER_JIFFIES(%ebx), %eax
        shrl    $(\shift), %eax
        andl    $63, %eax
        pushl   %eax
        leal    \tv(%ebx), %eax
        pushl   %eax
        pushl   %ebx
        call    cascade
        addl    $12, %esp
        .endm

/* __run_timers(base): under its lock, each jiffy from timer_jiffies to jiffies: the
 * cascades at a tv1 wrap, then tv1's list of that jiffy (empty in the chapter's runs: the
 * commit timer is 5 s out), each timer on it taken off and its function called with the
 * lock let go */
        .globl  __run_timers
__run_timers:
        pushl   %ebx
        pushl   %esi
        movl    12(%esp), %ebx              # base
        pushl   %ebx                        # spin_lock_irq(&base->lock)
        call    _spin_lock_irq
        addl    $4, %esp
1:      movl    jiffies, %eax               # while (time_after_eq(jiffies, timer_jiffies))
        subl    TVB_TIMER_JIFFIES(%ebx), %eax
        js      8f
        movl    TVB_TIMER_JIFFIES(%ebx), %esi
        andl    $255, %esi                  # index = timer_jiffies & TVR_MASK
        jnz     3f
        tick_cascade TVB_TV2, 8             # !index: cascade tv2, then tv3, tv4, tv5
        testl   %eax, %eax                  # while the one before returns 0
        jnz     3f
        tick_cascade TVB_TV3, 14
        testl   %eax, %eax
        jnz     3f
        tick_cascade TVB_TV4, 20
        testl   %eax, %eax
        jnz     3f
        tick_cascade TVB_TV5, 26
3:      incl    TVB_TIMER_JIFFIES(%ebx)     # ++base->timer_jiffies
        leal    TVB_TV1(%ebx,%esi,8), %eax  # list_splice_init(tv1.vec + index, &work_list)
        cmpl    %eax, (%eax)
        je      1b                          # (an empty list: none due, nothing spliced)
        pushl   %edi                        # timers due (kernel/timer.c 455-480)
        pushl   %ebp
        subl    $8, %esp                    # work_list, on the stack
        movl    %esp, %ebp                  # head = &work_list
        movl    (%eax), %ecx                # __list_splice: first = list->next,
        movl    4(%eax), %edx               # last = list->prev
        movl    %ebp, 4(%ecx)               # first->prev = head
        movl    %ecx, (%ebp)                # head->next = first
        movl    %ebp, (%edx)                # last->next = at (head: work_list was empty)
        movl    %edx, 4(%ebp)               # at->prev = last
        movl    %eax, (%eax)                # INIT_LIST_HEAD(list)
        movl    %eax, 4(%eax)
4:      movl    (%ebp), %edi                # repeat: if (!list_empty(head)):
        cmpl    %ebp, %edi                  # timer = head->next
        je      7f
        movl    TIMER_FUNCTION(%edi), %esi  # fn = timer->function
        pushl   TIMER_DATA(%edi)            # data = timer->data
        movl    (%edi), %eax                # list_del(&timer->entry), its pointers
        movl    4(%edi), %ecx               # poisoned
        movl    %ecx, 4(%eax)
        movl    %eax, (%ecx)
        movl    $0x00100100, (%edi)         # LIST_POISON1
        movl    $0x00200200, 4(%edi)        # LIST_POISON2
        movl    %edi, TVB_RUNNING_TIMER(%ebx)   # set_running_timer(base, timer); smp_wmb
        movl    $0, TIMER_BASE(%edi)        # (a compiler barrier); timer->base = NULL
        pushl   %ebx                        # spin_unlock_irq(&base->lock)
        call    _spin_unlock_irq
        addl    $4, %esp
        movl    $-8192, %edi                # preempt_count = preempt_count()
        andl    %esp, %edi
        movl    TI_PREEMPT(%edi), %edi
        call    *%esi                       # fn(data)
        addl    $4, %esp
        movl    $-8192, %eax                # BUG() if fn left preempt_count changed
        andl    %esp, %eax
        cmpl    %edi, TI_PREEMPT(%eax)
        jne     9f
        pushl   %ebx                        # spin_lock_irq(&base->lock); goto repeat
        call    _spin_lock_irq
        addl    $4, %esp
        jmp     4b
7:      addl    $8, %esp
        popl    %ebp
        popl    %edi
        jmp     1b
9:      ud2
8:      movl    $0, TVB_RUNNING_TIMER(%ebx) # set_running_timer(base, NULL)
        pushl   %ebx
        call    _spin_unlock_irq
        addl    $4, %esp
        popl    %esi
        popl    %ebx
        ret

/* timer_interrupt (arch/i386/kernel/time.c) on IRQ0's interrupt, CPU 0: under
 * write_seqlock(&xtime_lock), do_timer: jiffies_64++, update_times (the wall clock a tick
 * on, calc_load's countdown); the RTC sync test (time_status's STA_UNSYNC: off). Left
 * out: do_IRQ's irq_desc and the I/O APIC, mark_offset_tsc. */
        .globl  timer_irq0_interrupt
timer_irq0_interrupt:
        save_all (~0)
        pushl   %esi
        movl    $-8192, %esi
        andl    %esp, %esi
        addl    $(HARDIRQ_OFFSET), TI_PREEMPT(%esi)     # irq_enter
        leal    xtime_lock + 4, %eax        # write_seqlock: the lock, ++sequence (smp_wmb:
        pushl   %eax                        # a compiler barrier)
        call    _spin_lock
        addl    $4, %esp
        incl    xtime_lock
        addl    $1, jiffies                 # do_timer: jiffies_64++
        adcl    $0, jiffies + 4
        movl    jiffies, %eax               # update_times: ticks = jiffies - wall_jiffies
        subl    wall_jiffies, %eax
        jz      3f
        addl    %eax, wall_jiffies
        pushl   %eax
        call    update_wall_time
        popl    %eax
3:      subl    %eax, calc_load_count       # calc_load(ticks): count -= ticks; below 0
        jns     4f                          # every LOAD_FREQ (5001) ticks: the load
        addl    $5001, calc_load_count      # averages (count_active_tasks) left out
4:      testl   $0x40, time_status          # do_timer_interrupt: STA_UNSYNC set, no RTC
        incl    xtime_lock                  # write_sequnlock
        leal    xtime_lock + 4, %eax
        pushl   %eax
        call    _spin_unlock
        addl    $4, %esp
        tick_irq_exit
        popl    %esi
        ret_from_intr_kernel
        ret

/* update_wall_time(ticks): update_wall_time_one_tick each (time_adjust, time_phase and
 * time_next_adjust: no adjtime), xtime.tv_nsec on; a second full: tv_sec on (second_overflow,
 * NTP's once a second, left out) */
update_wall_time:
        pushl   %ebx
        movl    8(%esp), %ebx
1:      decl    %ebx
        movl    time_adjust, %eax           # time_adjust_step (0: no adjtime)
        testl   %eax, %eax
        jnz     9f
        movl    tick_nsec, %ecx             # delta_nsec = tick_nsec + step * 1000
        movl    time_adj, %eax              # time_phase += time_adj
        addl    %eax, time_phase
        movl    time_phase, %eax
        cmpl    $(-FINENSEC), %eax
        jle     9f
        cmpl    $(FINENSEC), %eax
        jge     9f
        addl    %ecx, xtime + 4             # xtime.tv_nsec += delta_nsec
        cmpl    $0, time_next_adjust
        jne     9f
        cmpl    $(NSEC_PER_SEC), xtime + 4
        jb      2f
        subl    $(NSEC_PER_SEC), xtime + 4
        incl    xtime
2:      testl   %ebx, %ebx
        jnz     1b
        popl    %ebx
        ret
9:      ud2                                 # adjtime's slewing: not in the model

        .data
        .align  4
        .globl  tick_areas
tick_areas:                                 # per CPU: its per-CPU area's second part
        .long   0, 0, 0, 0, 0, 0, 0, 0
        .globl  timer_hook
timer_hook:
        .long   0
        .globl  prof_on
prof_on:
        .long   0
        .globl  prof_cpu_mask
prof_cpu_mask:
        .long   0xff                        # CPU_MASK_ALL
        .globl  use_tsc
use_tsc:
        .long   1
        .globl  cyc2ns_scale
cyc2ns_scale:
        .long   0                           # set_cyc2ns_scale(cpu_khz / 1000): ext3model
        .globl  wall_jiffies
wall_jiffies:
        .long   0
        .globl  tick_nsec
tick_nsec:
        .long   0                           # TICK_NSEC: ext3model
time_adjust:
        .long   0
time_phase:
        .long   0
time_adj:
        .long   0
time_next_adjust:
        .long   0
time_status:
        .long   0x40                        # STA_UNSYNC
calc_load_count:
        .long   5001                        # LOAD_FREQ: 5 * HZ + 1
        .align  128
        .globl  xtime_lock
xtime_lock:                                 # seqlock_t: sequence, lock
        .long   0, 1                        # (__cacheline_aligned_in_smp)
        .align  128
        .globl  rcu_ctrlblk
rcu_ctrlblk:                                # cur, completed, next_pending
        .long   -300, -300, 0               # (____cacheline_maxaligned_in_smp)
        .align  128
        .globl  rcu_bh_ctrlblk
rcu_bh_ctrlblk:
        .long   -300, -300, 0
        .text

/* Fifteen one-byte nops after the data: emu.cost reads loaded code by a linear disassembly
 * (see copy_from_user_ll.S). Never executed. */
        .space  15, 0x90
