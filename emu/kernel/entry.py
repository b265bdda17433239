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
  603 the model's software-TLB mirror knows the BAT too (``emu.hw.cache.H_BATS``, looked up
  natively): a kernel access the BAT translates takes no TLB look-up and is counted
  (``bat_translations``).
* **or, with ``bats=False``** (2.2's ``nobats``), the kernel through the TLB: no BAT,
  mapin_ram's kernel PTEs (present, dirty, writable, not _PAGE_USER) in every page
  directory, segment 0 the kernel's (VSID 0, Ks = 0: the book's kernel lives at EA =
  physical, below the user's addresses, where Linux's lives in segments 12-15) and
  _switch22 reloading segments 1-7. On the 603 walking the page table its miss handlers
  are built with 2.2.0's access check (``KERNEL_PTES``: _PAGE_USER only from user mode).
  On the hashed MMUs (the 604, the 603 searching a hash table) a kernel access that finds
  no HPTE takes the storage interrupt, whose prologue calls 2.2.0's hash_page in real mode
  (``KERNEL_HASH``: hash_kernel22, from the kernel's PTE, VSID 0, PP 0) and returns
  straight to the access (``kernel_reloads`` counts them); only what the page tables cannot
  answer goes on to do_page_fault.
* **per task**, an 8 KB task union in guest RAM (the task_struct at its base with the fields
  the entry code reads, its kernel stack above), SPRG3 = its thread_struct (whose first word
  is the page directory the 603's miss handlers walk) and SPRG2 = the exception frame at the
  top of its kernel stack while it runs in user mode;
* the **system-call table** (``sys_getppid22`` at 64, ``sys_exit22`` at 1, every other slot
  empty: ENOSYS) and the kernel words int_return tests (lost interrupts, bottom halves: 0).

``Entry.run(process, entry, *args)`` runs user code at ``entry`` (MSR = MSR_USER: PR, IR,
DR, EE, ME, RI) until it calls exit. On the 603 the CPU translates every user access
through its software-loaded TLB, whose misses the kernel model's guest miss handlers
resolve (emu.kernel.ppc603); on the 604 the model does (emu.hw.tlb604: Unicorn in its
virtual-TLB mode, a native fill running BAT2, the segment registers, the ITLB and DTLB and,
on a miss, the hardware table search through the cache model), and a search that finds
nothing, or a page whose PP forbids the access, is an ISI / DSI that ``Entry`` delivers as
the CPU does (SRR0, SRR1, DAR, DSISR, the vector). The kernel's words (``KDATA_WORDS``) include 2.2.0's
htab_reloads (``HTAB_RELOADS``: the HPTEs the prologue's hash_page made for user pages). The model's copy of the segment
registers is set at each entry and at each switch (the segments _switch22 loads). A ``sc`` is delivered as the CPU delivers it (SRR0 =
the next instruction, SRR1 = the MSR, translation off, the vector: here at
``entry22_base + 0xc00``, the code sitting on a 16 KB boundary so that ``LR & 0x3f00`` gives
the vector as on the hardware), and all that follows is guest code: the prologue, the
``rfi`` into DoSyscall22 with translation on, the handler, int_return and its ``rfi`` back.

**Faults.** A 603 miss handler that finds no Linux PTE (or, searching a hash table, no
HPTE) leaves for 0x300 / 0x400, where the backend keeps a one-instruction stub for its own
(Python-driven) misses; during a run the stub branches to DataAccess22 /
InstructionAccess22 instead. On the 604 the CPU's storage interrupt (no HPTE, or a store to
a read-only HPTE) is delivered there directly. On a hashed MMU (the 604, the 603 searching
a hash table) the prologue (its frame from SPRG2 when the access came from user mode)
calls 2.2.0's hash_page for a user page as guest code (``USER_HASH``: hash_page_user22 of
exception_22.S, 2.1.51's with ``version="2.1.51"``, with 2.4's _PAGE_HASHPTE under the
backend's 2.4 flushes): when the Linux PTE allows the access it makes the HPTE and returns
from the exception straight to the access, which the CPU retries (the 603: its miss
handler now finds the HPTE); no Python runs. Otherwise (and on the 603 walking the page
table) the prologue and transfer_to_handler run into ``do_page_fault22``, which stops the
run (``host_stop22``): Python runs the kernel model's fault path (``Kernel.page_fault``,
do_page_fault), then the run resumes at int_return, whose ``rfi`` retries the access: on
the 603 walking the page table it misses in the TLB again and the handler now finds the
PTE; on the hashed MMUs (1998 kernels, which preload nothing) the search misses again and
the prologue's hash_page makes the HPTE. The Python path charges its own fixed cost
(``fault_entry``), which overlaps the guest prologue it follows: a fault's cycles count its
entry twice (faults are not what the measurements here report; the steady state has none).

**Processes, pipes and switches** (``fork``, ``pipe``, ``install``): a forked child gets
a task union whose kernel stack holds an exception frame for int_return (its first switch
leaves through it to user mode at the given entry), the parent's descriptors and the kernel
model's copy-on-write address space. ``read`` and ``write`` (``routines/ppc32/pipe_22.S``)
go through sys_read/sys_write to pipe_read/pipe_write of 2.2.0 (fs/pipe.c: one kernel page
per pipe, copy_to_user / copy_from_user). A task that must wait calls
interruptible_sleep_on, whose schedule() is 2.2.0's, as guest code
(``routines/ppc32/sched_22.S``): prev off the run queue (a doubly-linked ring through
init_task, the idle task, in guest memory), the walk of the run queue with goodness(), then
switch_to into ``_switch22`` (2.2.0's _switch: the frame, SPRG3, the kernel stack, the 8
segment registers), which falls into int_return and out through the next task's frame.
Just before the switch the run stops for the kernel model to follow it (its current
process, its MMU's copy of the segments: no cycles). wake_up_interruptible is __wake_up's
walk of the wait queue (a ring of struct wait_queue on the sleepers' stacks) and
wake_up_process (add_to_runqueue, reschedule_idle), guest code too. Tasks are SCHED_OTHER
with DEF_PRIORITY; fork halves the parent's counter between the two, as do_fork does; the
model has no timer, so a counter runs out only by forks, and schedule() then recalculates
every task's (for_each_task over the task list). A run ends when a process calls exit; a
process left asleep stays so for the next run; every process asleep is a deadlock (KernelError).

**A departure of QEMU's 603, undone:** its ``tlbld`` / ``tlbli`` drop the entry for the same
page in the other way whatever its VSID (emu.hw.softtlb), so two processes that use the same
addresses (a forked pair: lat_pipe, lat_ctx, bw_pipe) would evict each other's text and
data entries at every switch, where a 603, whose entries are VSID-tagged, keeps both. On
the 603 ``Entry`` finds QEMU's TLB array (``SoftTLB.locate_tlb6``) and the native ``rfi``
hook makes the dropped entry valid again after such a load (without it: 2 TLB misses per
switch that the hardware would not take; the tests measure both).

Costs: each stretch of guest code between two stops is a ``Run`` charged to the ledger as
``user_run`` (user code and the kernel's entry path together, instructions at the
profile's costs, loads and stores through the cache model at their physical addresses:
Unicorn's memory hooks see physical addresses). User code sits outside the model's code
region, so its instructions cost the profile's default (1 cycle each); the hardware's own
exception entry and ``rfi`` latencies are not charged beyond the profile's ``rfi`` (as
elsewhere in the book). On the 604 each TLB miss of guest-run code costs its table search
(emu.hw.tlb604), counted in the run's events (``itlb_misses``, ``dtlb_misses``,
``table_search_cycles``), and a hash-table miss's prologue and hash_page are guest
instructions of the run (2.2.0's, above); only do_page_fault's path is the kernel model's
(its fixed costs, and the backend's guest routines it calls). On the 603 a user data access's hook address is physical, so the mirror counts
it as a hit without a look-up, and the hits of guest-run code do not move a class's LRU
bit: a miss replaces the way loaded earlier; and a kernel access to a user buffer
(copy_to_user), whose physical address lies in the BAT's block, is counted as a BAT
translation although the CPU translated it through the TLB (counts only; the CPU's own
translation is right).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from unicorn import UcError, ppc_const

from ..context import routine
from ..hw import cache as c
from ..hw import estimates
from ..hw.interrupt import interruptible, stop_if_interrupted
from ..hw.softtlb import (
    DAR,
    DSISR,
    MSR_DR,
    MSR_IR,
    MSR_ME,
    MSR_PR,
    S_BLOCK_END,
    S_DIVERGED,
    SPRG2,
    SPRG3,
    SRR0,
    SRR1,
)
from ..hw.tlb604 import T6_FAULT_NO_HPTE, TLB604Model
from ..isa.assemble import assemble
from ..run import diagnose
from ..run.result import measured
from .errors import KernelError
from . import kdata
from .files_cache import FilesCache
from .mm import MM
from .pages import File
from .pgtable import (
    PAGE_SIZE,
    STACK_TOP,
    TASK_SIZE,
)
from .ppc32 import ctx_to_vsid
from .ppc603 import PPC603, kernel_page_tables
from .ppc604 import PPC604

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
# (TSS) with the page directory first (the 603 handlers' THREAD_PGDIR), the kernel stack.
# The layout is the model's own (the real tss lies hundreds of bytes into the task_struct),
# but the TSS keeps the real order of the words the paths read: regs, then fs (get_fs(),
# uaccess.h's access_ok), then last_syscall, adjacent as in asm-ppc/processor.h's
# thread_struct (2.1.51: 8, 12, 16 at 94520e420; 2.2.0: 12, 16, 20 at f6cce5dae)
TASK_UNION = 8192
TASK_FIELDS = {"TASK_FLAGS": 4, "SIGPENDING": 8, "ADDR_LIMIT": 12, "NEED_RESCHED": 16,
               "PID": 20, "P_OPPTR": 24, "TASK_FILES": 28, "COUNTER": 32, "PRIORITY": 36,
               "POLICY": 40, "NEXT_RUN": 44, "PREV_RUN": 48, "TASK_MM": 52, "HAS_CPU": 56,
               "PROCESSOR": 60, "TSS": 64, "TSS_PGDIR": 0, "TSS_KSP": 4, "TSS_REGS": 8,
               "TSS_FS": 12, "TSS_LAST_SYSCALL": 16, "MM_CONTEXT": 0, "MM_PGD": 4,
               "SIGNAL": 96, "BLOCKED": 100,
               "TIMEOUT": 104,          # 2.1.51's (its schedule() reads it)
               "WAIT_CHLDEXIT": 108,    # sys_wait4's queue (emu.kernel.sched22)
               # the list of all tasks (sched.h SET_LINKS): schedule()'s recalculation
               "NEXT_TASK": 112, "PREV_TASK": 116}
# the kernel's words (KDATA): int_return's, hash_page's count, and schedule()'s, each
# where 2.2.0's image puts it (emu.kernel.kdata)
KDATA_WORDS = ("LOST_IRQS", "BH_MASK", "BH_ACTIVE", "XTIME", "KERNEL_RELOADS",
               "CONTEXT_SWTCH", "NR_RUNNING", "TQ_SCHEDULER", "IRQ_COUNT", "BH_COUNT",
               "PREVSTATE", "NEED_RESCHED", "HTAB_RELOADS", "EVENT")
USER_DS = 1                    # include/asm-ppc/uaccess.h (2.1.51, 2.2.0); KERNEL_DS 0
DEF_PRIORITY = 20              # include/linux/sched.h, 2.2.0: 20 * HZ / 100, HZ = 100
TASK_STATE, TASK_RUNNING, TASK_INTERRUPTIBLE = 0, 0, 1
# the model's files, dentries and pipe inodes (fs/pipe.c's fields, the model's offsets)
FILE_FIELDS = {"FILES_MAX": 0, "FILES_FD": 4, "F_COUNT": 0, "F_MODE": 4, "F_POS": 8,
               "F_FLAGS": 16, "F_OP": 20, "F_DENTRY": 24, "D_INODE": 8, "FOP_READ": 4,
               "FOP_WRITE": 8, "I_FLAGS": 0, "I_SEM": 4, "I_ATOMIC": 8, "I_CTIME": 12,
               "I_MTIME": 16, "I_ATIME": 20, "I_SB": 24, "PIPE_BASE": 32, "PIPE_START": 36,
               "PIPE_LEN": 40, "PIPE_LOCK": 44, "PIPE_READERS": 48, "PIPE_WRITERS": 52,
               "PIPE_WAIT": 56}
FILE_BYTES, INODE_BYTES, NR_OPEN_MODEL = 32, 64, 16
FMODE_READ, FMODE_WRITE = 1, 2
TASK_STRUCT_SIZE = 1024        # estimate: only the stack-overflow check reads it
NR_SYSCALLS = 256              # include/linux/sys.h
NR_EXIT, NR_READ, NR_WRITE, NR_GETPPID = 1, 3, 4, 64    # include/asm-ppc/unistd.h
SYSCALLS = {NR_EXIT: "sys_exit22", NR_READ: "sys_read22", NR_WRITE: "sys_write22",
            NR_GETPPID: "sys_getppid22"}
HOST_EXIT, HOST_FAULT, HOST_REFUSED, HOST_SWITCH = 1, 2, 3, 6
REFUSED = {1: "a kernel stack overflow", 2: "sys_sigreturn", 3: "a traced task (PF_TRACESYS)",
           4: "a lost interrupt", 5: "bottom halves", 6: "schedule (need_resched)",
           7: "a pending signal", 8: "a mandatory lock", 9: "SIGPIPE (no reader)",
           10: "a non-blocking pipe", 11: "a contended inode semaphore",
           12: "a pipe inode with a superblock", 13: "a bad user pointer",
           14: "every process sleeps: the programs deadlock", 15: "a real-time task",
           16: "a scheduler task queue", 17: "schedule() in an interrupt",
           19: "a task without an MMU context",
           20: "a sleep with a timeout (2.1.51's schedule: the model has no timer)",
           # filemap_22.S (emu.kernel.filemap): what a reread from the page cache never meets
           21: "a page not in the page cache (readpage)", 22: "a locked page (I/O in flight)",
           23: "a page not up to date", 24: "read-ahead (try_to_read_ahead, free_page)",
           25: "an inode's first dirtying (__mark_inode_dirty)",
           26: "default_llseek (a file without f_op->llseek)",
           27: "the last reference to a page cache page", 28: "set_bit on a misaligned word",
           # proc_22.S (emu.kernel.sched22)
           29: "schedule() returned to a zombie"}
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
# glibc's read and write stubs (li r0, __NR_...; sc; bnslr; errno and -1)
_STUBS = f"""
sys_read:
        li      r0, {NR_READ}
        sc
        bnslr
        li      r3, -1
        blr
sys_write:
        li      r0, {NR_WRITE}
        sc
        bnslr
        li      r3, -1
        blr
"""
# descriptors the workloads install: two pipes, as pipe() returns them
P1_READ, P1_WRITE, P2_READ, P2_WRITE = 3, 4, 5, 6


@functools.lru_cache(maxsize=64)
def _stub_code(text, vector):
    """The bytes of a storage-interrupt stub at ``vector`` (a run of the 603's rewrites
    its two stubs before and after every call: assembled once)."""
    return bytes(assemble(text, "ppc32", vector).code)


# Where LMBench's pipe token lives: a local variable on the stack (lat_pipe.c 1.8: `char c`
# in doit() for the parent, whose BENCH loop in main() calls it, and in main() for the
# child; lat_ctx.c 1.20: `int msg` in ctx() (main -> ctx) for the parent, in doit() (main
# -> create_daemons -> doit) for the child, and in doit_cost() (main -> pipe_cost ->
# doit_cost) for the pipe-alone overhead; LMBench 2 SCCS history, ricarkol/lmbench2
# src/SCCS/s.lat_pipe.c, s.lat_ctx.c). The programs pass &c as gcc does, `addi r4, r1, 8`:
# the first local above the SysV frame header (back chain, LR save word).
TOKEN_IN_FRAME = 8
# The depth of main()'s stack pointer below STACK_TOP is not set by the program: above it
# lie the environment and argument strings, the argv/envp arrays and the ELF auxv
# (binfmt_elf's create_elf_tables) and crt1's and __libc_start_main's frames. An estimate
# (emu.hw.estimates ``kernel:lmbench.main_sp_depth``): about 1 KB of environment, 0.5 KB of
# the rest. The token's L1 D set is its page offset's bits 5-11, so the range samples two
# other placements (an almost empty environment; a 3.5 KB one) rather than bounding it.
MAIN_SP_DEPTH = 1536
MAIN_SP_RANGE = (256, 3584, "the environment's size sets main()'s frame (an empty one to "
                 "3 KB of variables): the page offset, hence the L1 D set, of the pipe "
                 "token, a stack local, may be anywhere in a page")
FRAME_BYTES = 32               # a leaf-ish caller's frame under gcc -O (header, locals, r30/r31)
# the token's frame, in frames below main()'s: (parent, child)
LAT_PIPE_FRAMES = (1, 0)       # doit(), main()
LAT_CTX_FRAMES = (1, 2)        # ctx(), doit() under create_daemons()
PIPE_COST_FRAMES = 2           # doit_cost() under pipe_cost()


def main_sp():
    """main()'s stack pointer in an LMBench program (``MAIN_SP_DEPTH``, an estimate)."""
    depth = estimates.value("kernel:lmbench.main_sp_depth", MAIN_SP_DEPTH)
    return STACK_TOP - (int(depth) & ~15)


def stack_ranges():
    """[(name, nominal, low, high, why)]: the user stack's estimates."""
    return [("kernel:lmbench.main_sp_depth", MAIN_SP_DEPTH, *MAIN_SP_RANGE)]


def _frame_sp(frames):
    return main_sp() - FRAME_BYTES * frames


def _set_sp(sp):
    return f"""        lis     r1, {sp >> 16:#x}
        ori     r1, r1, {sp & 0xFFFF:#x}"""


def pipe_round_trip(size, frames=LAT_PIPE_FRAMES):
    """LMBench 1.x lat_pipe (lat_pipe.c 1.8, ``size`` 1) and lat_ctx's two-process ring
    (lat_ctx.c 1.20, a 4-byte token, ``LAT_CTX_FRAMES``): the parent (r3 = 0) writes
    ``size`` bytes to pipe 1 and reads them back from pipe 2, r4 times, then exits; the
    child (r3 = 1) reads pipe 1 and writes pipe 2 forever. One iteration: two writes, two
    reads, two switches. The token is a stack local of the function ``frames`` (parent,
    child) below main() (set once, outside the loop)."""
    parent, child = (_set_sp(_frame_sp(n)) for n in frames)
    return f"""
_start:
        cmpwi   0, r3, 0
        bne     child
{parent}
        mtctr   r4
parent_loop:
        li      r3, {P1_WRITE}
        addi    r4, r1, {TOKEN_IN_FRAME}
        li      r5, {size}
        bl      sys_write
        li      r3, {P2_READ}
        addi    r4, r1, {TOKEN_IN_FRAME}
        li      r5, {size}
        bl      sys_read
        bdnz    parent_loop
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
child:
{child}
child_loop:
        li      r3, {P1_READ}
        addi    r4, r1, {TOKEN_IN_FRAME}
        li      r5, {size}
        bl      sys_read
        li      r3, {P2_WRITE}
        addi    r4, r1, {TOKEN_IN_FRAME}
        li      r5, {size}
        bl      sys_write
        b       child_loop
""" + _STUBS


def pipe_alone(size, frames=PIPE_COST_FRAMES):
    """lat_ctx's overhead (``pipe_cost``): one process writes ``size`` bytes to pipe 1 and
    reads them back, r4 times: the pipe's cost without a switch (the token a stack local
    of doit_cost(), ``frames`` below main())."""
    return f"""
_start:
{_set_sp(_frame_sp(frames))}
        mtctr   r4
alone_loop:
        li      r3, {P1_WRITE}
        addi    r4, r1, {TOKEN_IN_FRAME}
        li      r5, {size}
        bl      sys_write
        li      r3, {P1_READ}
        addi    r4, r1, {TOKEN_IN_FRAME}
        li      r5, {size}
        bl      sys_read
        bdnz    alone_loop
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
""" + _STUBS


XFERSIZE = 64 << 10            # bench.h: bw_pipe's chunk
BW_PIPE = f"""
# LMBench 1.x bw_pipe (bw_pipe.c 1.10): the child (r3 = 1) writes XFERSIZE chunks forever;
# the parent (r3 = 0) reads until r4 chunks' worth has arrived, XFERSIZE at a time
_start:
        cmpwi   0, r3, 0
        bne     writer
        slwi    r31, r4, 16             # bytes to read
reader:
        li      r3, {P1_READ}
        lis     r4, {DATA_BASE >> 16:#x}
        lis     r5, {XFERSIZE >> 16:#x}
        bl      sys_read
        cmpwi   0, r3, 0
        ble     done
        subf.   r31, r3, r31
        bgt     reader
done:
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
writer:
        li      r3, {P1_WRITE}
        lis     r4, {DATA_BASE >> 16:#x}
        lis     r5, {XFERSIZE >> 16:#x}
        bl      sys_write
        b       writer
""" + _STUBS

# the instructions of one call by hand: the user's (bl, li, sc, bnslr, bdnz) and the
# kernel's (entry_22.S): the 0xc00 prologue from user mode 34, transfer_to_handler 51
# (from user mode: tss.regs stored), DoSyscall22 with sys_getppid22 and no error 30,
# int_return to user mode with EE set, no lost interrupt, bottom half, reschedule or
# signal 82
NULL_CALL_INSTRUCTIONS = {"user": 5, "prologue": 34, "transfer_to_handler": 51,
                          "DoSyscall": 30, "int_return": 82}
# the same on Linux 2.1.51's path (entry_22.S with LINUX_2_1_51, its header): the prologue
# tests SRR1[PR] and loads tss.ksp (35 + the 4 to transfer_to_handler), transfer_to_handler
# has no MSR_POW clear, SPRG2 or stack check; int_return's tests differ but count the same;
# each of head.S's SYNCs is a lone sync (exception_22.S, SYNC_HEAD): one isync fewer in
# transfer_to_handler (43 -> 42), three in int_return (82 -> 79)
NULL_CALL_INSTRUCTIONS_21 = {"user": 5, "prologue": 39, "transfer_to_handler": 42,
                             "DoSyscall": 30, "int_return": 79}
#: the sync and isync instructions of one null call on each kernel's path
NULL_CALL_SYNCS = {"2.2.0": {"sync": 4, "isync": 4}, "2.1.51": {"sync": 4, "isync": 0}}
#: the kernels whose entry and exit ``Entry`` runs (``version``)
VERSIONS = ("2.2.0", "2.1.51")

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
    """The 2.2.0 exception entry on a Kernel's 603 or 604 backend (module notes), or with
    ``version="2.1.51"`` that kernel's (routines/ppc32/entry_22.S, LINUX_2_1_51)."""

    def __init__(self, kernel, bats=True, version="2.2.0"):
        if version not in VERSIONS:
            raise ValueError(f"version must be one of {VERSIONS}, not {version!r}")
        self.version = version
        arch = kernel.arch
        if isinstance(arch, PPC603):
            self.kind = "603"
        elif isinstance(arch, PPC604):
            self.kind = "604"
        else:
            raise ValueError(f"user programs run on the 603 and 604 backends, not {arch.name}")
        self.kernel, self.machine = kernel, kernel.machine
        # without BATs on a hashed MMU the kernel's pages need HPTEs: made on demand by the
        # prologue's hash_page (entry_22.S, KERNEL_HASH)
        self.kernel_hash = not bats and (self.kind == "604" or arch.reload == "hash")
        self.bats_on = bats
        m = self.machine
        self.kdata = kdata.place(m, KDATA_WORDS, version)   # {word: address}
        self.table = m.alloc(4 * NR_SYSCALLS, align=32)
        self.tasks = {}                        # pid -> task union address
        self.mms = {}                          # MM -> the guest's mm (its context word)
        self.files_cache = FilesCache(m, version)
        self.init_task = self._task_union(1, None)   # the idle task: the run queue's head
        self._word(self.init_task + TASK_FIELDS["NEXT_RUN"], self.init_task)
        self._word(self.init_task + TASK_FIELDS["PREV_RUN"], self.init_task)
        for link in ("NEXT_TASK", "PREV_TASK"):     # the task list: init_task alone
            self._word(self.init_task + TASK_FIELDS[link], self.init_task)
        prelude = "".join(f".equ {k}, {v:#x}\n" for k, v in {
            **TASK_FIELDS, **FILE_FIELDS, "TASK_STRUCT_SIZE": TASK_STRUCT_SIZE,
            "NR_SYSCALLS": NR_SYSCALLS, "SYS_CALL_TABLE": self.table,
            "INIT_TASK": self.init_task,
            **{f"KDATA_{name}": address for name, address in self.kdata.items()}
        }.items())
        if not bats:
            prelude += ".equ KERNEL_SEGMENT0, 1\n"
        if version == "2.1.51":
            prelude += ".equ LINUX_2_1_51, 1\n"
        if self.kernel_hash:
            prelude += ".equ KERNEL_HASH, 1\n"
        user_hash = self.kind == "604" or arch.reload == "hash"
        if user_hash:                   # a user page's hash miss: hash_page in guest code
            prelude += ".equ USER_HASH, 1\n" + (".equ HASHPTE_24, 1\n" if arch.hashpte
                                                else "")
        if self.kernel_hash or user_hash:
            prelude += f".equ create_hpte, {m.symbols['create_hpte']:#x}\n"
        prelude += routine("ppc32/inline_22.S").read_text()    # the headers' inlines, shared
        self.prelude = prelude          # the offsets, for routines loaded after these
        source = prelude + "".join(routine(f"ppc32/{name}").read_text()
                                   for name in ("exception_22.S", "entry_22.S", "sched_22.S",
                                                "pipe_22.S", "copy_tofrom_user_22.S"))
        self.program = m.load(source, align=ENTRY_ALIGN)
        self.base = m.symbols["entry22_base"]
        self.stop = m.symbols["host_stop22"]
        m.load(BOOT)
        for nr, name in SYSCALLS.items():
            m.write(self.table + 4 * nr, m.symbols[name].to_bytes(4, "big"))
        # the CPU's own registers: the 603's through its soft TLB, the 604's found here
        if self.kind == "603":
            self.regs = m.soft_tlb.regs
            self.tlb6 = m.soft_tlb.locate_tlb6()   # QEMU's same-page drop undone
        else:                                 # the 604 backend has them already
            m.state[c.H_LIMIT] = 1 << 40
            self.regs = arch.cpu_regs
            m.model.clear_stats()
        # BAT2: all of RAM for the kernel, in the CPU (guest mtspr) and the 603's mirror;
        # without BATs (nobats): an invalid BAT2, kernel PTEs in every page directory,
        # segment 0 the kernel's, and the 603's miss handlers with 2.2.0's access check
        self.bat_size = bat_block(m.ram_size) if bats else 0
        batu, batl = bat_words(0, self.bat_size) if bats else (0, 0)
        if not bats:
            if self.kind == "603" and arch.reload == "pagetable":
                m.load(".equ KERNEL_PTES, 1\n" +
                       routine("ppc32/tlbmiss_603_kernel.S").read_text(), at=0x1000)
            self.kernel_tables = self._kernel_page_tables()
            self._check_int_return_page()
        sdr1 = arch.sdr1 if self.kind == "604" else 0
        m.call("entry22_boot", batu, batl, sdr1, **({"real_mode": True}
                                                      if self.kind == "603" else {}))
        self.bats = np.zeros(2 * c.BATS_PER_SIDE * c.BAT_WORDS, np.int64)
        for side in (0, 1):                    # IBAT2, DBAT2
            at = (side * c.BATS_PER_SIDE + 2) * c.BAT_WORDS
            self.bats[at + c.BAT_VS] = 1
            self.bats[at + c.BAT_START] = 0
            self.bats[at + c.BAT_SIZE] = self.bat_size
        if self.kind == "603" and bats:
            m.state[c.H_BATS] = self.bats.ctypes.data
        # the 604: its TLBs and table search for guest code (emu.hw.tlb604), in place of
        # QEMU's MMU; the backend invalidates them with its own tlbie
        self.tlb = None
        if self.kind == "604" and arch.native_tlb is not None:   # the backend's, no BATs
            if bats:
                raise ValueError("a 604 backend without BATs (bats=False) runs user programs "
                                 "with Entry(bats=False)")
            self.tlb = arch.native_tlb
        elif self.kind == "604":
            self.tlb = TLB604Model(m, arch.sdr1, self.bat_size)
            arch.native_tlb = self.tlb
        self.running = None                    # the process the CPU runs, during a run
        self.by_task = {}                      # task union address -> process
        m.interrupt_handler = self._interrupt

    # ------------------------------------------------------------------ tasks

    def _task_union(self, pid, parent_task, reuse=None):
        """A task union: the task_struct's fields (running, its pid and parent, the user
        address limit, a files table of NR_OPEN_MODEL descriptors, SCHED_OTHER with
        DEF_PRIORITY and a full counter, as INIT_TASK has them) below its kernel stack.
        ``reuse``: a freed task union, whose task_struct is cleared and whose files table
        the new task gets (emu.kernel.sched22: the pages and the slab object a released
        task gave back, which the next fork's allocations return first)."""
        m = self.machine
        if reuse is None:
            task = m.alloc(TASK_UNION, align=TASK_UNION)
        else:
            task = reuse
            files = m.read_word(task + TASK_FIELDS["TASK_FILES"])
            m.write(task, bytes(TASK_STRUCT_SIZE))
        self._word(task + TASK_FIELDS["PRIORITY"], DEF_PRIORITY)
        self._word(task + TASK_FIELDS["COUNTER"], DEF_PRIORITY)
        if reuse is not None:          # the freed files table, its descriptors cleared
            fds = self.files_cache.fd_array(files)
            m.write(fds, bytes(4 * NR_OPEN_MODEL))
        elif parent_task is None:      # INIT_TASK's init_files: the kernel's static data
            files = m.alloc(8 + 4 * NR_OPEN_MODEL, align=32)
            fds = files + 8
        else:                          # copy_files: an object of files_cache
            files = self.files_cache.alloc()
            fds = self.files_cache.fd_array(files)
        self._word(files + FILE_FIELDS["FILES_MAX"], NR_OPEN_MODEL)
        self._word(files + FILE_FIELDS["FILES_FD"], fds)
        self._word(task + TASK_FIELDS["PID"], pid)
        self._word(task + TASK_FIELDS["P_OPPTR"], parent_task or task)
        self._word(task + TASK_FIELDS["ADDR_LIMIT"], TASK_SIZE - 1)
        # start_thread's set_fs(USER_DS) (arch/ppc/kernel/process.c: 309 at 94520e420,
        # 360 at f6cce5dae): the copies' access_ok checks user pointers
        self._word(task + TASK_FIELDS["TSS"] + TASK_FIELDS["TSS_FS"], USER_DS)
        self._word(task + TASK_FIELDS["TASK_FILES"], files)
        if parent_task is not None:    # do_fork's SET_LINKS (init_task is the list's head)
            self._set_links(task)
        return task

    def _set_links(self, task):
        """sched.h's SET_LINKS: ``task`` at the tail of the task list, before init_task
        (for_each_task's order; the sibling pointers are the kernel model's)."""
        head, f = self.init_task, TASK_FIELDS
        last = self.machine.read_word(head + f["PREV_TASK"])
        self._word(task + f["NEXT_TASK"], head)
        self._word(task + f["PREV_TASK"], last)
        self._word(last + f["NEXT_TASK"], task)
        self._word(head + f["PREV_TASK"], task)

    def remove_links(self, task):
        """sched.h's REMOVE_LINKS (release, at the wait): ``task`` off the task list."""
        f, m = TASK_FIELDS, self.machine
        nxt, prev = m.read_word(task + f["NEXT_TASK"]), m.read_word(task + f["PREV_TASK"])
        self._word(nxt + f["PREV_TASK"], prev)
        self._word(prev + f["NEXT_TASK"], nxt)

    def _kernel_page_tables(self):
        """mapin_ram's page tables for all of RAM (ppc603.kernel_page_tables: the text read
        only, the rest writable): {pgd index: PTE page}."""
        return kernel_page_tables(self.machine)

    def _kernel_mappings(self, mm):
        """Without BATs: the kernel's pgd entries in ``mm``'s page directory."""
        if self.bats_on:
            return
        for index, table in self.kernel_tables.items():
            self._word(mm.pgd.address + 4 * index, table)

    def _kernel_segment(self):
        """Without BATs: segment 0 is the kernel's, VSID 0 (context 0 is never a
        process's), Ks = 0 and Kp = 1 (PP 0 pages: supervisor read/write, user nothing)."""
        if not self.bats_on:
            self.machine.mmu.set_segment(0, 0, ks=False, kp=True)
            if self.kind == "604":              # the CPU's own register
                self.regs.set_sr(0, 0x20000000)

    def _check_int_return_page(self):
        """int_return sets SPRG2 (the next exception comes from user mode) before its last
        instructions: a kernel hash miss after that would take the user's frame for its own.
        Its code fetched before SPRG2 is set loads their page, if it is the same one."""
        m = self.machine
        start, end = m.symbols["int_return"], m.symbols["ir_lost_irq"] - 4
        if start // PAGE_SIZE != end // PAGE_SIZE:
            raise KernelError("int_return crosses a page boundary: without BATs its end "
                              "could take a hash miss with SPRG2 set (move the code)")

    @property
    def kernel_reloads(self):
        """HPTEs the prologue's hash_page made for the kernel (without BATs, hashed)."""
        return self.machine.read_word(self.kdata["KERNEL_RELOADS"])

    def _word(self, address, value):
        self.machine.write(address, (value & 0xFFFFFFFF).to_bytes(4, "big"))

    def task(self, process):
        """The task union of ``process`` (made on first use; its parent: init's, pid 1)."""
        if process.pid not in self.tasks:
            parent = self.tasks.get(process.parent.pid) if process.parent else None
            task = self._task_union(process.pid + 1, parent or self.init_task)
            self.tasks[process.pid] = task
            self.by_task[task] = process
        task = self.tasks[process.pid]
        self._word(task + TASK_FIELDS["TASK_MM"], self._mm(process.mm))
        return task

    def _mm(self, mm):
        """The guest's copy of ``mm``: its context word, as 2.2 keeps it (MUNGE_CONTEXT:
        the kernel model's context number times 897, 20 bits), which get_mmu_context tests
        and _switch22 loads; written again whenever the model may have changed it."""
        if mm not in self.mms:
            self.mms[mm] = self.machine.alloc(16, align=16)
        self._word(self.mms[mm] + TASK_FIELDS["MM_CONTEXT"], (mm.context * 897) & 0xFFFFF)
        self._word(self.mms[mm] + TASK_FIELDS["MM_PGD"], mm.pgd.address)   # 2.1.51's hash_page
        return self.mms[mm]

    def _add_to_runqueue(self, process):
        """wake_up_process at fork or when a run starts (2.2.0's add_to_runqueue: after
        init_task; 2.1.51's: before it, at the back; nr_running up), unless the task is on
        the run queue already."""
        task, head = self.task(process), self.init_task
        f = TASK_FIELDS
        self._word(task + TASK_STATE, TASK_RUNNING)
        if self.machine.read_word(task + f["NEXT_RUN"]):
            return
        before, after = ((self.machine.read_word(head + f["PREV_RUN"]), head)
                         if self.version == "2.1.51" else
                         (head, self.machine.read_word(head + f["NEXT_RUN"])))
        self._word(task + f["PREV_RUN"], before)
        self._word(before + f["NEXT_RUN"], task)
        self._word(task + f["NEXT_RUN"], after)
        self._word(after + f["PREV_RUN"], task)
        running = self.kdata["NR_RUNNING"]
        self._word(running, self.machine.read_word(running) + 1)

    def run_queue(self):
        """The processes on the guest's run queue, from init_task.next_run round to it."""
        order, f = [], TASK_FIELDS
        task = self.machine.read_word(self.init_task + f["NEXT_RUN"])
        while task != self.init_task:
            order.append(self.by_task[task])
            task = self.machine.read_word(task + f["NEXT_RUN"])
        return order

    def kword(self, name):
        """One of the kernel's words (``KDATA_WORDS``), e.g. CONTEXT_SWTCH (kstat's)."""
        return self.machine.read_word(self.kdata[name])

    def _files(self, process):
        """The fd array of ``process``'s files table."""
        files = self.machine.read_word(self.task(process) + TASK_FIELDS["TASK_FILES"])
        return self.machine.read_word(files + FILE_FIELDS["FILES_FD"])

    def install(self, process, fd, file):
        """fd_install: descriptor ``fd`` of ``process`` refers to ``file`` (its count up)."""
        if not 0 <= fd < NR_OPEN_MODEL:
            raise ValueError(f"the model's files table holds {NR_OPEN_MODEL} descriptors")
        m = self.machine
        self._word(self._files(process) + 4 * fd, file)
        count = file + FILE_FIELDS["F_COUNT"]
        self._word(count, m.read_word(count) + 1)

    def pipe(self):
        """do_pipe: a pipe inode whose buffer is one kernel page (fs/pipe.c, PIPE_BUF 4 KB),
        and its read and write files (their f_op tables: pipe_read22 / pipe_write22).
        Returns (read file, write file); ``install`` gives them to processes."""
        m, k = self.machine, self.kernel
        f = FILE_FIELDS
        page = k._alloc_page("pipe").address
        inode = m.alloc(INODE_BYTES, align=32)
        dentry = m.alloc(16, align=16)
        self._word(dentry + f["D_INODE"], inode)
        for name, value in (("PIPE_BASE", page), ("PIPE_READERS", 1), ("PIPE_WRITERS", 1),
                            ("I_SEM", 1), ("I_ATOMIC", 1)):
            self._word(inode + f[name], value)
        files = []
        for mode, slot, handler in ((FMODE_READ, "FOP_READ", "pipe_read22"),
                                    (FMODE_WRITE, "FOP_WRITE", "pipe_write22")):
            ops = m.alloc(16, align=16)
            self._word(ops + f[slot], m.symbols[handler])
            file = m.alloc(FILE_BYTES, align=32)
            self._word(file + f["F_MODE"], mode)
            self._word(file + f["F_OP"], ops)
            self._word(file + f["F_DENTRY"], dentry)
            files.append(file)
        return tuple(files)

    def fork(self, parent, entry=ELF_BASE, *args):
        """A child of ``parent`` (the kernel model's fork: copy-on-write address space),
        with its descriptors, which starts at ``entry`` in user mode (r3... = ``args``)
        the first time the scheduler switches to it: its kernel stack holds an exception
        frame for int_return, as copy_thread leaves one. Runnable at once."""
        k, m = self.kernel, self.machine
        child = k.fork(parent)
        self._kernel_mappings(child.mm)
        task = self.task(child)
        parent_fds = self._files(parent)
        for fd in range(NR_OPEN_MODEL):
            file = m.read_word(parent_fds + 4 * fd)
            if file:
                self.install(child, fd, file)
        frame = self.frame(child)
        m.write(frame, bytes(INT_FRAME_SIZE))
        self._word(frame + GPR0 + 4, STACK_TOP - 64)
        for n, value in enumerate(args):
            self._word(frame + GPR0 + 4 * (3 + n), value)
        self._word(frame + NIP, entry)
        self._word(frame + MSR, MSR_USER)
        self._word(frame + TRAP, 0xC00)
        tss = task + TASK_FIELDS["TSS"]
        self._word(tss + TASK_FIELDS["TSS_KSP"], frame)
        self._word(tss + TASK_FIELDS["TSS_PGDIR"], child.mm.pgd.address)
        counter = self.task(parent) + TASK_FIELDS["COUNTER"]     # do_fork: the parent's
        left = m.read_word(counter)                              # counter shared
        self._word(task + TASK_FIELDS["COUNTER"], (left + 1) >> 1)
        self._word(counter, left >> 1)
        self._add_to_runqueue(child)
        return child

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
        self._kernel_mappings(process.mm)
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
        if self.version == "2.1.51":      # its prologue takes the kernel sp from tss.ksp
            m.write(tss + TASK_FIELDS["TSS_KSP"], (self.frame(process) + INT_FRAME_SIZE +
                                                   STACK_UNDERHEAD).to_bytes(4, "big"))
        if self.kind == "604":            # PPC32Hash's user segments, Ks = Kp = 1
            self.regs.set_srs({n: ctx_to_vsid(process.mm.context, n << 28) | 0x60000000
                               for n in range(12)})
        self._kernel_segment()
        if self.kind == "604":            # the model's copy of the CPU's segment registers
            self.tlb.set_segments([self.regs.sr(n) for n in range(16)])

    def _stubs(self, to_entry):
        """The 603's storage-interrupt stubs: to DataAccess22 / InstructionAccess22 during
        a run, to the halt address (the backend's own misses) otherwise."""
        if self.kind != "603":
            return
        for vector in (0x300, 0x400):
            code = _stub_code(f"ba {self.base + vector:#x}\n", vector) if to_entry \
                else self.kernel.arch.storage_stubs[vector]
            self.machine.write(vector, code)

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
        m.tables_up_to_date()
        m.model.clear_stats()
        st[c.H_LIMIT] = m.instruction_limit
        m.stop_record = None
        msr = m.uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        if self.kind == "603":
            st[c.H_XLATE] = msr & (MSR_IR | MSR_DR | MSR_PR)
            st[st[c.H_SCRATCH] + S_DIVERGED] = 0
            st[st[c.H_SCRATCH] + S_BLOCK_END] = 0
            for key in m.soft_tlb.exceptions:
                m.soft_tlb.exceptions[key] = 0
        before = self.tlb.counts() if self.tlb else {}
        with interruptible():          # Ctrl-C stops the run at its next block
            while True:
                try:
                    if self.tlb:
                        self.tlb.arm()
                    m.uc.emu_start(pc, self.stop)
                    break
                except UcError as error:
                    stop_if_interrupted()
                    m.uncharge_faulted(error)
                    pc = self._storage_interrupt()
                    if pc is None:
                        raise diagnose.describe_fault(m, error) from None
            stop_if_interrupted()
        diagnose.raise_stop(m)
        at = m.uc.reg_read(ppc_const.UC_PPC_REG_PC)
        if at != self.stop:
            raise KernelError(f"a user run stopped at {at:#x} ({m.symbolize(at)}), not at "
                              "host_stop22")
        run = measured(m, label, ())
        if self.tlb:
            after = self.tlb.counts()
            run.events.update({k: v - before[k] for k, v in after.items()})
        self.kernel.ledger.guest(label, run)
        return run

    def _storage_interrupt(self):
        """The 604's ISI or DSI for the access the native table search refused (no HPTE,
        or the page's PP forbids it), delivered as the CPU delivers it: SRR0 = the
        instruction (for an ISI, the address fetched), SRR1 = the MSR with the cause, DAR
        and DSISR for a DSI, translation off, the vector. Returns the vector's address, or
        None if the stop was not such a refusal."""
        fault = self.tlb.take_fault() if self.tlb else None
        if fault is None:
            return None
        kind, ea, access = fault
        uc = self.machine.uc
        pc = uc.reg_read(ppc_const.UC_PPC_REG_PC)
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        cause = 0x40000000 if kind == T6_FAULT_NO_HPTE else 0x08000000
        if access == "x":
            number = EXCP_ISI
            self.regs.set_sprs({SRR0: pc & 0xFFFFFFFF, SRR1: (msr & 0xFFFF) | cause})
        else:
            number = EXCP_DSI
            dsisr = cause | (0x02000000 if access == "w" else 0)
            self.regs.set_sprs({SRR0: pc & 0xFFFFFFFF, SRR1: msr & 0xFFFF, DAR: ea,
                                DSISR: dsisr})
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)
        self.exceptions[number] = self.exceptions.get(number, 0) + 1
        return self.base + VECTORS[number]

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
        self._add_to_runqueue(process)
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
                    return self._finish(self.running, argument, totals, events)
                if reason == HOST_REFUSED:
                    raise KernelError(f"the program reached what the entry model refuses: "
                                      f"{REFUSED.get(argument, argument)}")
                if reason not in (HOST_FAULT, HOST_SWITCH):
                    raise KernelError(f"host_stop22 with an unknown reason {reason}")
                saved = uc.context_save()
                pc = uc.reg_read(ppc_const.UC_PPC_REG_LR)
                self._stubs(False)
                before = k.ledger.cycles
                if reason == HOST_FAULT:
                    self._fault(self.running, argument - STACK_FRAME_OVERHEAD)
                    totals["faults"] += 1
                else:
                    self._switched(argument)
                totals["host_cycles"] += k.ledger.cycles - before
                uc.context_restore(saved)
        finally:
            self.running = None
            self._stubs(False)
            # SPRG3 back to the backend's thread (its kernel routines' hash_page reads it)
            self.regs.set_spr(SPRG3, self.kernel.arch.thread)

    def _switched(self, task):
        """schedule22 (routines/ppc32/sched_22.S) chose ``task`` and is about to switch to
        it: the kernel model follows (its current process and MMU context, the 604's copy
        of the segments _switch22 loads: 1-7), and the guest's mm word gets the context the
        model holds. No cycles: the choice and the switch are guest code."""
        k = self.kernel
        nxt = self.by_task[task]
        k.ledger.count("context_switches")
        k.current = nxt
        k.arch.switch_mm(nxt.mm)
        self.running = nxt
        self._mm(nxt.mm)
        if self.tlb:                            # the segments _switch22 loads: 1-7
            self.tlb.set_segments([self.regs.sr(n) if not 1 <= n <= 7 else
                                   ctx_to_vsid(nxt.mm.context, n << 28) | 0x60000000
                                   for n in range(16)])

    def _fault(self, process, frame):
        """do_page_fault22: the fault the frame describes, through the kernel model."""
        m, k = self.machine, self.kernel
        trap = m.read_word(frame + TRAP)
        if trap == 0x400:
            address, access = m.read_word(frame + NIP), "x"
        else:
            address = m.read_word(frame + FRAME_DAR)
            access = "w" if m.read_word(frame + FRAME_DSISR) & 0x02000000 else "r"
        k.ledger.count("user_faults")     # the prologue's hash_page (a hashed MMU) could not
        if self.kind == "604":
            m.uc.reg_write(ppc_const.UC_PPC_REG_MSR, MSR_ME)    # the kernel's routines run
        k.page_fault(process, address, access)                # in real mode, as in ppc32

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
