"""User programs under the kernel model: guest code running translated in user mode, entering
the kernel through the exception entry of Linux 2.2.0 (``routines/ppc32/entry_22.S``) on the
603 and the 604 backends (Dougan 1999, issue 19 items 2-3).

``Entry(kernel)`` attaches to a Kernel whose backend is ``PPC603`` (either reload) or
``PPC604`` and makes what a 2.2.0 kernel has at boot:

* **BAT2 maps all of RAM for the kernel** (``mapin_ram``, arch/ppc/mm/init.c: the largest
  power-of-two block that fits in RAM, supervisor only, read/write, cacheable), set by a
  guest routine with ``mtspr``, so the CPU (Unicorn's 603e / 604) translates the kernel's
  accesses with it. The book's kernel is linked where it sits: its BAT maps EA = physical
  (KERNELBASE is 0 here, 0xc0000000 on Linux; the block and its cost are the same). On the
  603 the model's software-TLB mirror knows the BAT too (``emu.cache.H_BATS``, looked up
  natively): a kernel access the BAT translates takes no TLB look-up and is counted
  (``bat_translations``). The 2.2 ``nobats`` option (the kernel through the TLB) is not
  modelled yet.
* **per task**, an 8 KB task union in guest RAM (the task_struct at its base with the fields
  the entry code reads, its kernel stack above), SPRG3 = its thread_struct (whose first word
  is the page directory the 603's miss handlers walk) and SPRG2 = the exception frame at the
  top of its kernel stack while it runs in user mode;
* the **system-call table** (``sys_getppid22`` at 64, ``sys_exit22`` at 1, every other slot
  empty: ENOSYS) and the kernel words int_return tests (lost interrupts, bottom halves: 0).

``Entry.run(process, entry, *args)`` runs user code at ``entry`` (MSR = MSR_USER: PR, IR,
DR, EE, ME, RI) until it calls exit. The CPU translates every user access itself: on the
603 through its software-loaded TLB, whose misses the kernel model's guest miss handlers
resolve (emu.kernel.ppc603); on the 604 by its hardware search of the hash table (QEMU's),
whose misses are storage interrupts. A ``sc`` is delivered as the CPU delivers it (SRR0 =
the next instruction, SRR1 = the MSR, translation off, the vector: here at
``entry22_base + 0xc00``, the code sitting on a 16 KB boundary so that ``LR & 0x3f00`` gives
the vector as on the hardware), and all that follows is guest code: the prologue, the
``rfi`` into DoSyscall22 with translation on, the handler, int_return and its ``rfi`` back.

**Faults.** A 603 miss handler that finds no Linux PTE leaves for 0x300 / 0x400, where the
backend keeps a one-instruction stub for its own (Python-driven) misses; during a run the
stub branches to DataAccess22 / InstructionAccess22 instead. On the 604 the CPU's storage
interrupt (no HPTE) is delivered there directly. The prologue and transfer_to_handler run as
guest code into ``do_page_fault22``, which stops the run (``host_stop22``): Python runs the
kernel model's fault path (``Kernel.page_fault`` on the 603: do_page_fault; on the 604
``Kernel.touch``: hash_page, and do_page_fault if the Linux PTE does not allow the access),
then the run resumes at int_return, whose ``rfi`` retries the access: on the 603 it misses
in the TLB again and the handler now finds the PTE. Those Python paths charge their own
fixed costs (``fault_entry``, ``hash_fault_entry``), which overlap the guest prologue they
follow: a fault's cycles count its entry twice (faults are not what the measurements here
report; the steady state has none).

Costs: each stretch of guest code between two stops is a ``Run`` charged to the ledger as
``user_run`` (user code and the kernel's entry path together, instructions at the
profile's costs, loads and stores through the cache model at their physical addresses:
Unicorn's memory hooks see physical addresses). User code sits outside the model's code
region, so its instructions cost the profile's default (1 cycle each); the hardware's own
exception entry and ``rfi`` latencies are not charged beyond the profile's ``rfi`` (as
elsewhere in the book). On the 604 the CPU's table search is QEMU's and costs nothing here:
the model's 604 TLB (emu.kernel.ppc604) is not consulted by guest-run code (a limit; the
null system call, with the kernel in a BAT, takes no TLB misses in its steady state on
either CPU). On the 603 a user data access's hook address is physical, so the mirror counts
it as a hit without a look-up, and the hits of guest-run code do not move a class's LRU
bit: a miss replaces the way loaded earlier.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from unicorn import UcError, ppc_const

from .. import cache as c
from .. import routine
from ..assemble import assemble
from ..softtlb import (DAR, DSISR, MSR_DR, MSR_IR, MSR_ME, MSR_PR, S_BLOCK_END, S_DIVERGED,
                       SPRG2, SPRG3, SRR0, SRR1, CpuRegisters)
from .ppc32 import ctx_to_vsid
from .ppc603 import PPC603, STORAGE_INTERRUPT_STUB
from .ppc604 import PPC604
from .vm import MM, PAGE_SIZE, STACK_TOP, File, KernelError, Process

MSR_EE, MSR_RI = 0x8000, 0x2
MSR_KERNEL = MSR_ME | MSR_IR | MSR_DR | MSR_RI       # include/asm-ppc/processor.h, 2.2.0
MSR_USER = MSR_KERNEL | MSR_PR | MSR_EE
EXCP_DSI, EXCP_ISI, EXCP_SYSCALL = 2, 3, 8            # Unicorn/QEMU exception numbers
VECTORS = {EXCP_DSI: 0x300, EXCP_ISI: 0x400, EXCP_SYSCALL: 0xC00}
ENTRY_ALIGN = 0x4000           # the entry code's base: LR & 0x3f00 is the vector offset
ELF_BASE = 0x10000000          # where the user program is linked
DATA_BASE = ELF_BASE + 0x400000

# struct pt_regs (include/asm-ppc/ptrace.h, 2.2.0) after the 16-byte frame header
STACK_FRAME_OVERHEAD, INT_FRAME_SIZE, STACK_UNDERHEAD = 16, 192, 64
GPR0, NIP, MSR, CTR, LINK, XER, CCR, TRAP, FRAME_DAR, FRAME_DSISR, RESULT = \
    16, 144, 148, 156, 160, 164, 168, 176, 180, 184, 188
# the model's task union: the task_struct's fields the entry code reads, the thread_struct
# (TSS) with the page directory first (the 603 handlers' THREAD_PGDIR), the kernel stack
TASK_UNION = 8192
TASK_FIELDS = {"TASK_FLAGS": 4, "SIGPENDING": 8, "NEED_RESCHED": 16, "PID": 20,
               "P_OPPTR": 24, "TSS": 64, "TSS_PGDIR": 0, "TSS_KSP": 4, "TSS_REGS": 8,
               "TSS_LAST_SYSCALL": 12}
TASK_STRUCT_SIZE = 1024        # estimate: only the stack-overflow check reads it
NR_SYSCALLS = 256              # include/linux/sys.h
NR_EXIT, NR_GETPPID = 1, 64    # include/asm-ppc/unistd.h
SYSCALLS = {NR_EXIT: "sys_exit22", NR_GETPPID: "sys_getppid22"}
HOST_EXIT, HOST_FAULT, HOST_REFUSED = 1, 2, 3
REFUSED = {1: "a kernel stack overflow", 2: "sys_sigreturn", 3: "a traced task (PF_TRACESYS)",
           4: "a lost interrupt", 5: "bottom halves", 6: "schedule (need_resched)",
           7: "a pending signal"}
ENOSYS = 38
CR0_SO = 0x10000000
# BATs: IBAT2U/L and DBAT2U/L (mapin_ram's BAT2)
IBAT2U, IBAT2L, DBAT2U, DBAT2L, SDR1 = 532, 533, 540, 541, 25

# LMBench 1.x lat_syscall null (lat_syscall.c 1.11: BENCH(getppid(), 0)): getppid() in a
# loop of r3 iterations, through glibc's system-call stub (li r0, __NR_getppid; sc; bnslr;
# on an error, errno and -1), then exit(0)
LAT_SYSCALL_NULL = f"""
        .globl  _start
_start:
        mtctr   r3
lat_loop:
        bl      getppid
        bdnz    lat_loop
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
getppid:
        li      r0, {NR_GETPPID}
        sc
        bnslr
        li      r3, -1
        blr
"""
# the instructions of one call by hand: the user's (bl, li, sc, bnslr, bdnz) and the
# kernel's (entry_22.S): the 0xc00 prologue from user mode 34, transfer_to_handler 51
# (from user mode: tss.regs stored), DoSyscall22 with sys_getppid22 and no error 30,
# int_return to user mode with EE set, no lost interrupt, bottom half, reschedule or
# signal 82
NULL_CALL_INSTRUCTIONS = {"user": 5, "prologue": 34, "transfer_to_handler": 51,
                          "DoSyscall": 30, "int_return": 82}

BOOT = f"""
        .globl  entry22_boot
entry22_boot:                   # r3 = BATU, r4 = BATL, r5 = SDR1 (0: none)
        mtspr   {IBAT2U}, r3
        mtspr   {IBAT2L}, r4
        mtspr   {DBAT2U}, r3
        mtspr   {DBAT2L}, r4
        cmpwi   0, r5, 0
        beq     boot_done
        mtspr   {SDR1}, r5
boot_done:
        isync
        blr
"""


def bat_block(ram_size):
    """mapin_ram's BAT2: the largest power-of-two block from 128 KB to 256 MB that fits in
    RAM."""
    size = 1 << (ram_size.bit_length() - 1)
    return max(128 << 10, min(size, 256 << 20))


def bat_words(start, size):
    """(BATU, BATL) mapping ``size`` bytes at ``start`` (EA = physical), supervisor only
    (Vs = 1, Vp = 0), WIMG 0 (cacheable, write-back), PP = 2 (read/write): setbat."""
    bl = (size >> 17) - 1
    return start | (bl << 2) | 0x2, start | 0x2


@dataclass(eq=False)
class ProgramFile(File):
    """An executable's text: the page cache reads its pages from the assembled code."""
    code: bytes = b""

    def content(self, index):
        return self.code[index * PAGE_SIZE:(index + 1) * PAGE_SIZE].ljust(PAGE_SIZE, b"\0")


@dataclass
class UserRun:
    """What one ``Entry.run`` did: the exit status, the registers the program left in its
    last exception frame (r0-r31 and CR), the guest instructions and cycles of its runs
    (user code and kernel entry path), the cycles the kernel model charged in Python (fault
    paths), the stops, and the CPU's events summed over the runs."""
    status: int
    gprs: list
    cr: int
    instructions: int
    cycles: int
    host_cycles: int
    faults: int
    events: dict


class Entry:
    """The 2.2.0 exception entry on a Kernel's 603 or 604 backend (module notes)."""

    def __init__(self, kernel, bats=True):
        arch = kernel.arch
        if isinstance(arch, PPC603):
            self.kind = "603"
        elif isinstance(arch, PPC604):
            self.kind = "604"
        else:
            raise ValueError(f"user programs run on the 603 and 604 backends, not {arch.name}")
        if not bats:
            raise NotImplementedError("the kernel through the TLB (2.2's nobats) is not "
                                      "modelled yet: its kernel PTEs and VSIDs are to come")
        self.kernel, self.machine = kernel, kernel.machine
        m = self.machine
        self.kdata = m.alloc(32, align=32)
        self.table = m.alloc(4 * NR_SYSCALLS, align=32)
        prelude = "".join(f".equ {k}, {v:#x}\n" for k, v in {
            **TASK_FIELDS, "TASK_STRUCT_SIZE": TASK_STRUCT_SIZE, "NR_SYSCALLS": NR_SYSCALLS,
            "SYS_CALL_TABLE": self.table, "KDATA": self.kdata, "KDATA_LOST_IRQS": self.kdata,
            "KDATA_BH_MASK": self.kdata + 4, "KDATA_BH_ACTIVE": self.kdata + 8}.items())
        self.program = m.load(prelude + routine("ppc32/entry_22.S").read_text(),
                              align=ENTRY_ALIGN)
        self.base = m.symbols["entry22_base"]
        self.stop = m.symbols["host_stop22"]
        m.load(BOOT)
        for nr, name in SYSCALLS.items():
            m.write(self.table + 4 * nr, m.symbols[name].to_bytes(4, "big"))
        # the CPU's own registers: the 603's through its soft TLB, the 604's found here
        if self.kind == "603":
            self.regs = m.soft_tlb.regs
        else:
            scratch = m.alloc(PAGE_SIZE)
            m.state[c.H_LIMIT] = 1 << 40
            self.regs = CpuRegisters(m.uc, scratch)
            m.model.clear_stats()
        # BAT2: all of RAM for the kernel, in the CPU (guest mtspr) and the 603's mirror
        self.bat_size = bat_block(m.ram_size)
        batu, batl = bat_words(0, self.bat_size)
        sdr1 = arch.sdr1 if self.kind == "604" else 0
        m.call("entry22_boot", batu, batl, sdr1, **({"real_mode": True}
                                                      if self.kind == "603" else {}))
        self.bats = np.zeros(2 * c.BATS_PER_SIDE * c.BAT_WORDS, np.int64)
        for side in (0, 1):                    # IBAT2, DBAT2
            at = (side * c.BATS_PER_SIDE + 2) * c.BAT_WORDS
            self.bats[at + c.BAT_VS] = 1
            self.bats[at + c.BAT_START] = 0
            self.bats[at + c.BAT_SIZE] = self.bat_size
        if self.kind == "603":
            m.state[c.H_BATS] = self.bats.ctypes.data
        self.tasks = {}                        # pid -> task union address
        self.init_task = self._task_union(1, None)
        self.running = None                    # the process of the run under way
        m.interrupt_handler = self._interrupt

    # ------------------------------------------------------------------ tasks

    def _task_union(self, pid, parent_task):
        m = self.machine
        task = m.alloc(TASK_UNION, align=TASK_UNION)
        m.write(task + TASK_FIELDS["PID"], pid.to_bytes(4, "big"))
        m.write(task + TASK_FIELDS["P_OPPTR"],
                (parent_task or task).to_bytes(4, "big"))
        return task

    def task(self, process):
        """The task union of ``process`` (made on first use; its parent: init's, pid 1)."""
        if process.pid not in self.tasks:
            parent = self.tasks.get(process.parent.pid) if process.parent else None
            self.tasks[process.pid] = self._task_union(process.pid + 1,
                                                       parent or self.init_task)
        return self.tasks[process.pid]

    def frame(self, process):
        """The exception frame a user-mode exception of ``process`` uses (SPRG2)."""
        return self.task(process) + TASK_UNION - INT_FRAME_SIZE - STACK_UNDERHEAD

    def spawn(self, source, name="a.out", data_pages=1, stack_pages=4):
        """A process whose text is ``source`` (assembly, linked at ELF_BASE), with
        ``data_pages`` of anonymous read-write data at DATA_BASE and a stack below
        STACK_TOP. Nothing is mapped until touched: the first fetch faults."""
        k = self.kernel
        code = assemble(source, "ppc32", ELF_BASE).code
        text = ProgramFile(name, -(-len(code) // PAGE_SIZE), code=code)
        process = k._new_process(name, MM(k))
        k.mmap(process, text.pages * PAGE_SIZE, "rx", file=text, address=ELF_BASE,
               name="text")
        if data_pages:
            k.mmap(process, data_pages * PAGE_SIZE, "rw", address=DATA_BASE, name="data")
        k.mmap(process, stack_pages * PAGE_SIZE, "rw", address=STACK_TOP -
               stack_pages * PAGE_SIZE, name="stack", growsdown=True)
        self.task(process)
        return process

    # ------------------------------------------------------------------ running

    def _enter(self, process):
        """The CPU state of ``process`` in user mode: its mm, SPRG3 = its thread, SPRG2 =
        its exception frame; on the 604 the CPU's segment registers (the model's
        set_segment keeps only its own copy there)."""
        k, m = self.kernel, self.machine
        k.switch_to(process)
        task = self.task(process)
        tss = task + TASK_FIELDS["TSS"]
        m.write(tss + TASK_FIELDS["TSS_PGDIR"], process.mm.pgd.address.to_bytes(4, "big"))
        self.regs.set_sprs({SPRG3: tss, SPRG2: self.frame(process)})
        if self.kind == "604":
            for n in range(12):           # PPC32Hash's user segments, Ks = Kp = 1
                self.regs.set_sr(n, ctx_to_vsid(process.mm.context, n << 28) | 0x60000000)

    def _stubs(self, to_entry):
        """The 603's storage-interrupt stubs: to DataAccess22 / InstructionAccess22 during
        a run, to the halt address (the backend's own misses) otherwise."""
        if self.kind != "603":
            return
        for vector in (0x300, 0x400):
            target = self.base + vector if to_entry else None
            text = f"ba {target:#x}\n" if to_entry else STORAGE_INTERRUPT_STUB
            self.machine.write(vector, assemble(text, "ppc32", vector).code)

    def _interrupt(self, uc, number):
        """Deliver a system call (and, on the 604, a storage interrupt) as the CPU does."""
        if self.running is None:
            return False
        if number != EXCP_SYSCALL and not (self.kind == "604" and number in (EXCP_DSI,
                                                                              EXCP_ISI)):
            return False
        reported = uc.reg_read(ppc_const.UC_PPC_REG_PC)
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        if number == EXCP_SYSCALL:
            srr0, srr1 = reported, msr & 0xFFFF          # the instruction after sc
        elif number == EXCP_ISI:
            srr0, srr1 = reported - 4, (msr & 0xFFFF) | 0x40000000   # no translation
        else:
            srr0, srr1 = reported - 4, msr & 0xFFFF
        self.regs.set_sprs({SRR0: srr0 & 0xFFFFFFFF, SRR1: srr1})
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)
        uc.reg_write(ppc_const.UC_PPC_REG_PC, self.base + VECTORS[number])
        if self.kind == "603":
            st = self.machine.state
            st[c.H_XLATE] = 0
        self.exceptions[number] = self.exceptions.get(number, 0) + 1
        return True

    def _segment(self, pc, label):
        """Guest code from ``pc`` to the next stop at host_stop22: a Run."""
        m = self.machine
        st = m.state
        m.model.clear_stats()
        st[c.H_LIMIT] = m.instruction_limit
        m._fault = None
        msr = m.uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        if self.kind == "603":
            st[c.H_XLATE] = msr & (MSR_IR | MSR_DR | MSR_PR)
            st[st[c.H_SCRATCH] + S_DIVERGED] = 0
            st[st[c.H_SCRATCH] + S_BLOCK_END] = 0
            for key in m.soft_tlb.exceptions:
                m.soft_tlb.exceptions[key] = 0
        try:
            m.uc.emu_start(pc, self.stop)
        except UcError as error:
            raise m._describe_fault(error) from None
        if m._fault is not None:
            if m._fault[0] == "raise":
                raise m._fault[1]
            raise m._describe_fault(None)
        m._check_stop()
        at = m.uc.reg_read(ppc_const.UC_PPC_REG_PC)
        if at != self.stop:
            raise KernelError(f"a user run stopped at {at:#x} ({m.symbolize(at)}), not at "
                              "host_stop22")
        run = m._result(label, ())
        self.kernel.ledger.guest(label, run)
        return run

    def run(self, process, entry=ELF_BASE, *args, label="user_run"):
        """Run ``process``'s code from ``entry`` in user mode (r3... = ``args``) until it
        calls exit; faults go through the kernel model and the program resumes. Returns a
        UserRun."""
        k, m = self.kernel, self.machine
        uc = m.uc
        self._enter(process)
        for n in range(32):
            uc.reg_write(ppc_const.UC_PPC_REG_0 + n, 0)
        for n, value in enumerate(args):
            uc.reg_write(ppc_const.UC_PPC_REG_3 + n, value & 0xFFFFFFFF)
        uc.reg_write(ppc_const.UC_PPC_REG_1, STACK_TOP - 64)
        uc.reg_write(ppc_const.UC_PPC_REG_LR, 0)
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_USER)
        self.exceptions = {}
        totals = {"instructions": 0, "cycles": 0, "host_cycles": 0, "faults": 0}
        events = {}
        pc = entry
        self.running = process
        try:
            while True:
                self._stubs(True)
                run = self._segment(pc, label)
                totals["instructions"] += run.instructions
                totals["cycles"] += run.cycles
                for key, value in run.events.items():
                    if isinstance(value, int):
                        events[key] = events.get(key, 0) + value
                reason = uc.reg_read(ppc_const.UC_PPC_REG_3)
                argument = uc.reg_read(ppc_const.UC_PPC_REG_4)
                if reason == HOST_EXIT:
                    return self._finish(process, argument, totals, events)
                if reason == HOST_REFUSED:
                    raise KernelError(f"the program reached what the entry model refuses: "
                                      f"{REFUSED.get(argument, argument)}")
                if reason != HOST_FAULT:
                    raise KernelError(f"host_stop22 with an unknown reason {reason}")
                saved = uc.context_save()
                resume = uc.reg_read(ppc_const.UC_PPC_REG_LR)
                self._stubs(False)
                before = k.ledger.cycles
                self._fault(process, argument - STACK_FRAME_OVERHEAD)
                totals["host_cycles"] += k.ledger.cycles - before
                totals["faults"] += 1
                uc.context_restore(saved)
                pc = resume
        finally:
            self.running = None
            self._stubs(False)
            if self.kind == "603":
                self.regs.set_spr(SPRG3, self.kernel.arch.thread)

    def _fault(self, process, frame):
        """do_page_fault22: the fault the frame describes, through the kernel model."""
        m, k = self.machine, self.kernel
        trap = m.read_word(frame + TRAP)
        if trap == 0x400:
            address, access = m.read_word(frame + NIP), "x"
        else:
            address = m.read_word(frame + FRAME_DAR)
            access = "w" if m.read_word(frame + FRAME_DSISR) & 0x02000000 else "r"
        k.ledger.count("user_faults")
        if self.kind == "604":
            m.uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)    # the kernel's routines run
            k.touch(process, address, access)                 # in real mode, as in ppc32
        else:
            k.page_fault(process, address, access)

    def _finish(self, process, status, totals, events):
        m = self.machine
        frame = self.frame(process)
        words = m.read(frame, INT_FRAME_SIZE)

        def word(offset):
            return int.from_bytes(words[offset:offset + 4], "big")

        gprs = [word(GPR0 + 4 * n) for n in range(32)]
        return UserRun(status, gprs, word(CCR), totals["instructions"], totals["cycles"],
                       totals["host_cycles"], totals["faults"],
                       {**events, **{f"exception_{n}": v for n, v in self.exceptions.items()}})
