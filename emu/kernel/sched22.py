"""Linux 2.2.0's scheduler under the kernel model's processes: the switches, the wake-ups
and the sleeps of a fork, an exit and a wait as 2.2.0's guest code, in place of the fixed
costs (issue 30, Deliver 4: Dougan 1999's lat_proc on its 2.2.0 kernels).

``GuestScheduler(kernel)`` attaches an ``Entry`` (emu.kernel.entry: each process's task
union and kernel stack in guest memory, the run queue through init_task, schedule22,
wake_up22 and wake_up_process22 of routines/ppc32/sched_22.S, _switch22 and int_return of
entry_22.S) and the driver routines of routines/ppc32/proc_22.S, and becomes the kernel's
``scheduler``: the generic paths (emu.kernel.process) call it where 2.2.0 schedules.

* ``forked``: do_fork's last step. The child's task union gets copy_thread's frame (int_return
  leaves it, in kernel mode, at fork_return22, where ret_from_fork would go on to user mode:
  the kernel model's child runs from there), the counters are shared as do_fork shares them
  (the parent's halved, the child's the same), and the parent runs wake_up_process(child).
  2.2.0's child leaves int_return for user mode through copy_thread's copy of the parent's
  frame (MSR with PR and EE); the model's frame has EE but not PR, so int_return runs its
  lost-interrupt and bottom-half tests but not the ten instructions of its return to user
  mode (need_resched, sigpending, the kernel sp, SPRG2).
* ``switch``: a running process gives up the CPU here only by waiting for its child
  (sys_wait4: add_wait_queue on its wait_chldexit, TASK_INTERRUPTIBLE, schedule()): the
  guest's schedule() must choose the process the kernel model switches to. It sleeps inside
  schedule22, its frame on its kernel stack.
* ``exited``: exit_notify's wake_up_interruptible(&parent->wait_chldexit), then
  TASK_ZOMBIE and schedule(), which switches to the parent: its frame resumes it inside its
  schedule22, and its sys_wait4 removes itself from the queue; the run stops there.

Each stretch of guest code between two stops is charged to the ledger under the routine it
is for: ``wake_up_process22`` (fork), ``wake_up22`` (exit), ``schedule22`` (the sleeps with
their switches, _switch22 and int_return included, and the wait queue of sys_wait4). At
each switch the run stops for the kernel model to follow (Entry._switched: its current
process, its MMU context; no cycles). What stays in the fixed costs: fork_task, exit_task,
wait_reap (emu.kernel.costs: fork, exit, wait less what runs here).

* ``reaped``: sys_wait4's release frees the zombie's task union; the next fork's
  alloc_task_struct gets it back (__get_free_pages returns the pages freed last), and its
  files table (copy_files' slab object).

The first process (the kernel model's spawn) is put on the run queue as it starts, with no
guest code (set-up); the processes are that one and its children: a switch the guest's
schedule() would not make (to a second spawned process, to a process not the current one's
child) is refused (KernelError). The model has no timer: fork halves the parent's counter
each time (kernel/fork.c 610-611), so from DEF_PRIORITY's 20 ticks every fifth fork finds
every runnable counter spent, and schedule22 recalculates them over the task list
(SET_LINKS at the task's making, REMOVE_LINKS at its release: Entry).
"""
from __future__ import annotations

from unicorn import ppc_const

from ..context import routine
from ..hw.softtlb import SPRG3
from .entry import (GPR0, HOST_REFUSED, HOST_SWITCH, INT_FRAME_SIZE, MSR, MSR_EE,
                    MSR_KERNEL, NIP, REFUSED, TASK_FIELDS, TRAP, Entry)
from .errors import KernelError

HOST_DONE = 7                  # proc_22.S: the driver's end
# what proc_22.S takes from the files loaded before it
CONSTANTS = {"MSR_EE": MSR_EE, "TASK_STATE": 0, "TASK_INTERRUPTIBLE": 1,
             "HOST_REFUSED": HOST_REFUSED}
CALLED = ("wake_up_process22", "wake_up22", "schedule22", "cli22", "host_stop22")


class GuestScheduler:
    """2.2.0's scheduler for a Kernel on the 603 or 604 backend (module notes)."""

    def __init__(self, kernel, entry=None):
        self.kernel = kernel
        self.entry = entry or Entry(kernel)
        m = kernel.machine
        equs = "".join(f".equ {name}, {value:#x}\n" for name, value in
                       {**CONSTANTS, **{n: m.symbols[n] for n in CALLED}}.items())
        m.load(self.entry.prelude + equs + routine("ppc32/proc_22.S").read_text())
        kernel.scheduler = self
        self.freed = []                     # task unions released, the last freed last

    # ------------------------------------------------------------------ the kernel's calls

    def switch(self, prev, nxt):
        """The kernel model runs ``nxt`` where ``prev`` ran: ``prev`` waits for its child."""
        if prev is None:                    # the first process starts: set-up
            k = self.kernel
            k.arch.switch_mm(nxt.mm)
            k.current = nxt
            self.entry._add_to_runqueue(nxt)
            return
        if prev.exited:
            raise KernelError(f"{prev} has exited: its schedule() chose the next process")
        if nxt.parent is not prev:
            raise KernelError(f"the guest scheduler switches from a parent to its child "
                              f"(sys_wait4), not from {prev} to {nxt}")
        self._run(prev, "wait4_sleep22", (), "schedule22", expect=nxt)

    def forked(self, parent, child):
        """do_fork's end: copy_thread's frame, the counters shared, wake_up_process."""
        e, m = self.entry, self.kernel.machine
        if self.freed:                      # alloc_task_struct: the pages freed last
            union = e._task_union(child.pid + 1, e.task(parent), reuse=self.freed.pop())
            e.tasks[child.pid] = union
            e.by_task[union] = child
        task = e.task(child)
        frame = e.frame(child)
        m.write(frame, bytes(INT_FRAME_SIZE))
        for offset, value in ((GPR0 + 4, frame), (GPR0 + 8, task),
                              (NIP, m.symbols["fork_return22"]),
                              (MSR, MSR_KERNEL | MSR_EE), (TRAP, 0xC00)):
            e._word(frame + offset, value)
        e._word(task + TASK_FIELDS["TSS"] + TASK_FIELDS["TSS_KSP"], frame)
        counter = e.task(parent) + TASK_FIELDS["COUNTER"]   # kernel/fork.c 610-611
        shared = m.read_word(counter) >> 1
        e._word(counter, shared)
        e._word(task + TASK_FIELDS["COUNTER"], shared)
        self._run(parent, "fork_wake22", (task,), "wake_up_process22")

    def exited(self, process):
        """do_exit's end: the parent woken (notify_parent), TASK_ZOMBIE, schedule()."""
        if process.parent is None:
            raise KernelError(f"{process} has no parent to wake (the guest scheduler's "
                              "processes are a spawned parent and its children)")
        parent = process.parent
        self._run(process, "exit_wake22", (self.entry.task(parent),), "wake_up22")
        self._run(process, "exit_schedule22", (), "schedule22", expect=parent)

    def reaped(self, child):
        """sys_wait4's release: the zombie's task union freed (free_task_struct; its files
        table's object went back to files_cache at its exit), for the next fork."""
        task = self.entry.tasks.pop(child.pid)
        del self.entry.by_task[task]
        self.entry.remove_links(task)
        self.freed.append(task)

    # ------------------------------------------------------------------ running

    def _run(self, process, routine_name, args, label, expect=None):
        """Guest code of ``process`` in a system call (kernel mode, EE on, its kernel stack)
        from ``routine_name`` to proc_22.S's end, the switches followed on the way."""
        e, k = self.entry, self.kernel
        m = k.machine
        uc = m.uc
        live = [p for p in k.processes if p.pid in e.tasks and not p.exited]
        for p in live + [process]:          # the guest's mm words: the model's contexts
            e.task(p)
        task = e.task(process)
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        e.regs.set_spr(SPRG3, task + TASK_FIELDS["TSS"])
        uc.reg_write(ppc_const.UC_PPC_REG_1, e.frame(process))
        uc.reg_write(ppc_const.UC_PPC_REG_2, task)
        for n, value in enumerate(args):
            uc.reg_write(ppc_const.UC_PPC_REG_3 + n, value)
        uc.reg_write(ppc_const.UC_PPC_REG_LR, 0)
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_KERNEL | MSR_EE)
        pc = m.symbols[routine_name]
        switched = None
        e.running = process
        try:
            while True:
                e._segment(pc, label)
                reason = uc.reg_read(ppc_const.UC_PPC_REG_3)
                argument = uc.reg_read(ppc_const.UC_PPC_REG_4)
                if reason == HOST_DONE:
                    break
                if reason == HOST_REFUSED:
                    raise KernelError(f"the scheduler reached what the model refuses: "
                                      f"{REFUSED.get(argument, argument)}")
                if reason != HOST_SWITCH:
                    raise KernelError(f"host_stop22 with an unknown reason {reason}")
                saved = uc.context_save()
                pc = uc.reg_read(ppc_const.UC_PPC_REG_LR)
                switched = e.by_task[argument]
                e._switched(argument)
                uc.context_restore(saved)
        finally:
            e.running = None
            e.regs.set_spr(SPRG3, k.arch.thread)
            uc.reg_write(ppc_const.UC_PPC_REG_MSR, msr)
        if expect is not None and switched is not expect:
            raise KernelError(f"schedule() chose {switched}, the kernel model {expect}")
