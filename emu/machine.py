"""A Unicorn CPU with memory, a loaded program, and the instrumented cache + cost model.

>>> m = Machine("ppc750")
>>> m.load("emu/routines/ppc/...S")           # doctest: +SKIP
>>> run = m.call("flush_dcache_icache", m.alloc(4096))      # doctest: +SKIP
>>> run.cycles, run.caches["L1D"]["misses"]                 # doctest: +SKIP

Memory map (physical = virtual; one RAM region from 0, the first page left unmapped so that
a null pointer faults): code from 0x10000, data buffers from 0x100000 (``alloc``), the stack at
the top of RAM. A routine returns to a halt address (HALT, in the unmapped first page) where
emulation stops before fetching anything: Unicorn 2.1.4 invalidates the translated code at its
``until`` address on every return, which costs about 5 us per call when that address is in
mapped memory and about 1 us when it is not (measured).
"""
from __future__ import annotations

import ctypes
import json
import os
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from unicorn import (UC_ARCH_ARM, UC_ARCH_PPC, UC_ARCH_X86, UC_HOOK_BLOCK, UC_HOOK_CODE,
                     UC_HOOK_INSN, UC_HOOK_INTR, UC_HOOK_MEM_FETCH_UNMAPPED,
                     UC_HOOK_MEM_INVALID, UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE,
                     UC_HOOK_TLB_FILL, UC_MODE_32, UC_MODE_ARM, UC_MODE_BIG_ENDIAN,
                     UC_MODE_PPC32, UC_MODE_PPC64, UC_PROT_ALL, UC_PROT_READ,
                     UC_PROT_WRITE, Uc, UcError, arm_const,
                     ppc_const, unicorn_const, x86_const)

from . import cache as c
from . import cost, extable, hash64, native
from . import mmu as mmu_model
from . import softtlb
from .assemble import Program, assemble, assemble_file, decode, disassemble_one
from .profile import Profile, load as load_profile
from . import parallel
from .parallel import CORE_EVENTS, DEFAULT_QUANTUM, ParallelRun  # noqa: F401

PAGE = 0x1000
HALT = 0x800           # the return address of every call (see the module notes)
CODE_BASE, CODE_SIZE = 0x10000, 0xF0000
HEAP_BASE = 0x100000
MAX_SPECIALS = 4096
CORE_STACK = 0x8000             # each core's stack, downwards from the top of RAM
PC_REGISTERS = {"ppc32": ppc_const.UC_PPC_REG_PC, "ppc64": ppc_const.UC_PPC_REG_PC,
                "arm": arm_const.UC_ARM_REG_PC, "x86": x86_const.UC_X86_REG_EIP}
ACCESS_NAMES = {
    unicorn_const.UC_MEM_READ_UNMAPPED: "read from unmapped memory",
    unicorn_const.UC_MEM_WRITE_UNMAPPED: "write to unmapped memory",
    unicorn_const.UC_MEM_FETCH_UNMAPPED: "instruction fetch from unmapped memory",
    unicorn_const.UC_MEM_READ_PROT: "read from protected memory",
    unicorn_const.UC_MEM_WRITE_PROT: "write to protected memory",
    unicorn_const.UC_MEM_FETCH_PROT: "instruction fetch from non-executable memory",
}

# Unicorn's interrupt numbers (QEMU's exception numbers) by ISA, named in fault messages
INTERRUPT_NAMES = {
    "x86": {0: "divide error (#DE)", 1: "debug trap (#DB)", 2: "NMI", 3: "breakpoint (#BP)",
            4: "overflow (#OF, into)", 5: "BOUND range exceeded (#BR)",
            6: "invalid opcode (#UD)", 7: "device not available (#NM)",
            8: "double fault (#DF)", 10: "invalid TSS (#TS)", 11: "segment not present (#NP)",
            12: "stack-segment fault (#SS)", 13: "general protection fault (#GP)",
            14: "page fault (#PF)", 16: "x87 floating-point error (#MF)",
            17: "alignment check (#AC)", 18: "machine check (#MC)",
            19: "SIMD floating-point exception (#XM)", 0x80: "system call (int $0x80)"},
    "arm": {1: "undefined instruction", 2: "supervisor call (svc)", 3: "prefetch abort",
            4: "data abort", 5: "IRQ", 6: "FIQ", 7: "breakpoint (bkpt)",
            8: "exception return", 9: "kernel trap", 11: "hypervisor call (hvc)",
            12: "hypervisor trap", 13: "secure monitor call (smc)", 16: "semihosting call"},
    "ppc": {0: "critical input", 1: "machine check", 2: "data storage interrupt (DSI)",
            3: "instruction storage interrupt (ISI)", 4: "external interrupt",
            5: "alignment interrupt", 6: "program interrupt (a trap, or an illegal or "
            "privileged instruction)", 7: "floating-point unavailable (MSR[FP] is 0)",
            8: "system call (sc)", 10: "decrementer", 13: "data TLB miss",
            14: "instruction TLB miss", 15: "debug interrupt",
            78: "instruction TLB miss (603)", 79: "data load TLB miss (603)",
            80: "data store TLB miss (603)", 96: "illegal instruction"},
}
# instructions whose interrupt Unicorn reports with the PC past them, and its number (int:
# its operand)
TRAPS_AFTER = {"x86": {"int": None, "int3": 3, "into": 4, "int1": 1, "icebp": 1},
               "arm": {"svc": 2, "swi": 2, "hvc": 11, "smc": 13}, "ppc": {}}
# instructions that halt the CPU until an interrupt or event: no interrupt is modelled
HALTS = {"x86": ("hlt",), "arm": ("wfi", "wfe", "yield"), "ppc": ()}
# x86 instructions whose results would come from the host: refused at load
HOST_RANDOM = ("rdrand", "rdseed")

TRANSLATION_BUFFER = 64 << 20   # address space for each emulator's translated code


def _reserve_translation_buffer():
    """Refuse, with a Python exception, an emulator QEMU could not give its translation
    buffer (it would exit the process): reserve that much address space once, and free it."""
    import mmap
    try:
        mmap.mmap(-1, TRANSLATION_BUFFER, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                  prot=mmap.PROT_READ).close()
    except OSError:
        raise MemoryError(f"no address space for another emulator: Unicorn needs "
                          f"{TRANSLATION_BUFFER >> 20} MB for its translated code (a process "
                          "address-space limit? close Machines no longer used)") from None


MAX_RAM = 1 << 31               # guest RAM from 0; above it the outer cache's registers
MAX_LIMIT = 1 << 62             # an instruction limit the model's int64 counters hold


def check_limit(limit, name="limit"):
    """Refuse an instruction limit that is not a positive whole number below MAX_LIMIT."""
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or \
            not 0 < limit <= MAX_LIMIT:
        raise ValueError(f"{name} must be a whole number of instructions from 1 to "
                         f"{MAX_LIMIT:,} (2**62), not {limit!r}")
    return int(limit)


CAP_VARIABLE = "EMU_MAX_INSTRUCTIONS"


def capped(limit):
    """``limit``, lowered to the grader's ceiling when one is set.

    ``python -m emu grade`` runs students' notebooks with EMU_MAX_INSTRUCTIONS in their
    kernels' environment, so that no run, whatever limit a notebook asks for, keeps the kernel
    inside Unicorn (where no interrupt reaches it) for longer than that many instructions. A
    run under the ceiling is unchanged; one that reaches it raises InstructionLimitExceeded."""
    text = os.environ.get(CAP_VARIABLE)
    if text is None:
        return limit
    try:
        cap = check_limit(int(text), CAP_VARIABLE)
    except ValueError:
        raise ValueError(f"{CAP_VARIABLE}={text!r}: give a whole number of instructions from "
                         f"1 to {MAX_LIMIT:,}") from None
    return min(limit, cap)


def _cap_note(limit):
    """Say so when the limit that stopped a run is the grader's ceiling."""
    text = os.environ.get(CAP_VARIABLE, "")
    return f", the grader's ceiling {CAP_VARIABLE}" if text.strip() == str(limit) else ""


class GuestError(RuntimeError):
    """Something went wrong inside the guest program (not in the model)."""


class GuestFault(GuestError):
    """A memory fault or an exception in guest code: names the PC, instruction and address."""

    def __init__(self, message, pc=None, instruction=None, address=None, access=None):
        super().__init__(message)
        self.pc, self.instruction, self.address, self.access = pc, instruction, address, access


class InstructionLimitExceeded(GuestError):
    """The guest ran more instructions than allowed (runaway code, e.g. an endless loop)."""


class PageFault(GuestFault):
    """The MMU model found no translation (no PTE in either PTEG): a real kernel would now
    run its page-fault handler. Names the PC, the instruction, the address and the access."""


class SegmentFault(PageFault):
    """64-bit MMU: no SLB entry maps the address's segment (a data or instruction segment
    interrupt, 0x380 / 0x480; Linux would now run its SLB miss handler). Names the PC, the
    instruction, the address and the access."""


class TLBMissFault(PageFault):
    """Software-loaded TLB (603, 405): the CPU missed in its TLB and no miss handler is loaded
    at the vector. Names the PC, instruction, address and access."""


class InstructionStorageFault(PageFault):
    """An instruction storage interrupt (ISI, vector 0x400) with no guest handler loaded: e.g.
    a 405 fetch from a page whose TLB entry lacks the execute bit (EX), or a miss handler
    that found no translation for an instruction address. Names PC, instruction, address."""


class DataStorageFault(PageFault):
    """A data storage interrupt (DSI, vector 0x300) with no guest handler loaded: e.g. a
    miss handler that found no translation for a data address. Names PC, instruction,
    address (DAR) and access."""


class GuestHalted(GuestFault):
    """The guest halted its CPU to wait for an interrupt or event (x86 hlt, ARM wfi / wfe):
    none is modelled, so the call cannot go on. Names the PC and the instruction."""


class StaleInstructionFetch(GuestError):
    """Strict mode: the I-cache would have supplied bytes older than the last store to them."""


@dataclass
class Run:
    """What one call measured: a deterministic function of the machine and the call."""
    profile: str
    entry: str
    args: tuple
    return_value: int
    instructions: int
    cycles: int
    caches: dict
    events: dict
    memory: dict
    tlbs: dict = field(default_factory=dict)

    def to_dict(self):
        return {"profile": self.profile, "entry": self.entry, "args": list(self.args),
                "return": self.return_value, "instructions": self.instructions,
                "cycles": self.cycles, "caches": self.caches, "events": self.events,
                "memory": self.memory, **({"tlbs": self.tlbs} if self.tlbs else {})}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2)

    def cache_table(self):
        """The per-level statistics as a pandas DataFrame (one row per level)."""
        import pandas as pd
        df = pd.DataFrame.from_dict(self.caches, orient="index")
        df.index.name = "level"
        return df

    def table(self):
        lines = [f"{self.entry} on {self.profile}: returned {self.return_value:#x}",
                 f"  instructions {self.instructions:>12,}",
                 f"  cycles       {self.cycles:>12,}",
                 f"  {'level':<6}{'accesses':>12}{'hits':>12}{'misses':>12}{'writebacks':>12}"]
        for name, s in self.caches.items():
            lines.append(f"  {name:<6}{s['accesses']:>12,}{s['hits']:>12,}{s['misses']:>12,}"
                         f"{s['writebacks']:>12,}")
        for name, s in self.tlbs.items():
            lines.append(f"  {name:<6}{s['lookups']:>12,}{s['hits']:>12,}{s['misses']:>12,}"
                         f"{'':>12}")
        lines.append(f"  memory: {self.memory['reads']:,} line reads, "
                     f"{self.memory['writes']:,} writes")
        events = ", ".join(f"{k} {v}" for k, v in self.events.items() if v)
        lines.append(f"  events: {events or 'none'}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()




def memory_events(st):
    """What the memory system in time (emu.memory) saw during the call."""
    return {"bus_busy_cycles": int(st[c.H_BUS_BUSY]), "bus_wait_cycles": int(st[c.H_BUS_WAIT]),
            "store_buffer_stalls": int(st[c.H_SB_STALLS]),
            "store_buffer_stall_cycles": int(st[c.H_SB_STALL_CYCLES]),
            "fill_buffer_waits": int(st[c.H_FB_WAITS]),
            "prefetches": int(st[c.H_PREFETCHES]),
            "prefetches_dropped": int(st[c.H_PREFETCHES_DROPPED]),
            "hardware_prefetches": int(st[c.H_HW_PREFETCHES]),
            "prefetch_late": int(st[c.H_PREFETCH_LATE]),
            "prefetch_late_cycles": int(st[c.H_PREFETCH_LATE_CYCLES]),
            "uncached_loads": int(st[c.H_UNCACHED_LOADS]),
            "uncached_stores": int(st[c.H_UNCACHED_STORES]),
            "wc_wait_cycles": int(st[c.H_WC_WAIT])}


_INVALID_HOOK = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                                 ctypes.c_int, ctypes.c_int64, ctypes.c_void_p)
_INTERRUPT_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)


def _weak_hook(machine, uc, kind, method):
    """Hook ``machine.method`` on ``uc`` (UC_HOOK_MEM_INVALID or UC_HOOK_INTR) through weak
    references. Unicorn's own ``hook_add`` keeps the callback (here a bound method of the
    Machine) in the Uc, which the Machine keeps: a cycle, so that a discarded Machine and its
    emulator waited for a full garbage collection (2,000 Machines in a loop reached 2.8 GB).
    Returns the C callback, which the machine must keep. An exception in the method stops the
    emulator and is raised by ``emu_start``, as Unicorn's own hooks do."""
    machine_ref, uc_ref = weakref.ref(machine), weakref.ref(uc)

    def run(args):
        m, u = machine_ref(), uc_ref()
        if m is None or u is None:
            return False
        try:
            return getattr(m, method)(u, *args, None)
        except BaseException as error:           # noqa: BLE001 (raised by emu_start)
            if u._hook_exception is None:
                u._hook_exception = error
            u.emu_stop()
            return False
    if kind == UC_HOOK_MEM_INVALID:
        callback = _INVALID_HOOK(lambda h, access, address, size, value, data:
                                 bool(run((access, address, size, value))))
    else:
        callback = _INTERRUPT_HOOK(lambda h, number, data: run((number,)) and None)
    native.add_hook(uc, kind, ctypes.cast(callback, ctypes.c_void_p).value, None, user_data=0)
    return callback


class _Closed:
    """What a closed Machine's emulator is: any use says so."""

    def __getattr__(self, name):
        raise ValueError("this Machine is closed (its emulator was freed by close() or at the "
                         "end of its with block)")

    def _refuse(self, *args):
        return self.closed

    __getitem__ = __setitem__ = __len__ = __iter__ = __index__ = __int__ = _refuse


class Machine:
    """A processor profile's CPU (or ``cores`` of them sharing RAM and the levels below
    L1), its RAM, and the instrumented model.

    ``with Machine(...) as m:`` frees the emulators (Unicorn's translation buffers, about
    5 MB a core) and guest RAM at the end of the block; ``close()`` does so at once."""

    def __init__(self, cpu="ppc750", ram_size=32 << 20, caches=(), instruction_limit=50_000_000,
                 strict_coherence=False, seed=1, mmu=False, cores=1):
        if isinstance(cores, bool) or not isinstance(cores, int) or not 1 <= cores <= 32:
            raise ValueError(f"cores must be a whole number from 1 to 32, not {cores!r}")
        if isinstance(ram_size, bool) or not isinstance(ram_size, int):
            raise ValueError(f"ram_size must be a whole number of bytes, not {ram_size!r}")
        if ram_size > MAX_RAM:
            raise ValueError(f"ram_size {ram_size:#x} is more than the guest's 32-bit "
                             f"address space below its halt page allows ({MAX_RAM:#x})")
        check_limit(instruction_limit, "instruction_limit")
        profile = cpu if isinstance(cpu, Profile) else load_profile(cpu)
        if profile.isa not in PC_REGISTERS:
            raise ValueError(f"profile {profile.name}: isa {profile.isa!r} is not one of "
                             f"{', '.join(PC_REGISTERS)}")
        if isinstance(caches, str):
            caches = [caches]                 # one spec, not a sequence of its characters
        for spec in caches:
            profile = profile.with_cache(spec)
        if ram_size % PAGE or ram_size < HEAP_BASE + PAGE:
            raise ValueError(f"ram_size must be a multiple of 4 KB and at least 1 MB")
        self.profile, self.isa, self.ram_size = profile, profile.isa, ram_size
        self.instruction_limit = instruction_limit
        refusal = mmu and mmu_model.supported(profile)
        if refusal:
            raise ValueError(refusal)
        if mmu and cores != 1 and softtlb.kind(profile):
            raise ValueError(f"{profile.name} is a uniprocessor: its software-loaded TLB is "
                             "one CPU's own (emu.softtlb), so mmu=True needs cores=1")
        # A software-loaded TLB (603, 405) is the CPU model's own: its miss and storage
        # handlers live at the exception vectors (0x300-0x1200), so page 0 is mapped and the
        # cost tables start at 0. Elsewhere page 0 stays unmapped (a null pointer faults).
        soft = softtlb.kind(profile) if mmu else None
        self.code_start = CODE_BASE                       # where load() puts programs
        self.code_base = 0 if soft else CODE_BASE         # where the cost tables start
        self.code_size = CODE_BASE + CODE_SIZE - self.code_base
        # guest RAM is our buffer, so that the model (the page-table walker) can read it, and
        # so that every core (one Unicorn each) maps the same bytes
        self.ram = np.zeros(ram_size + PAGE, np.uint8)
        offset = -self.ram.ctypes.data % PAGE
        self._ram_base_ptr = self.ram.ctypes.data + offset
        self.cpus = [self._new_unicorn(profile) for _ in range(cores)]
        self.uc = self.cpus[0]                  # the core that runs (core 0 but in run_parallel)
        low = 0 if soft else PAGE
        # reads of mapped RAM come straight from the buffer (writes go through Unicorn,
        # which must see a store to code it has translated)
        self._ram_view = memoryview(self.ram)[offset:offset + ram_size]
        self._ram_low = low
        self._byte_order = "big" if self.isa.startswith("ppc") else "little"
        for uc in self.cpus:
            uc.mem_map_ptr(low, ram_size - low, UC_PROT_ALL, self._ram_base_ptr + low)
        # found before any hook exists (it runs a few guest instructions)
        self.soft_tlb = softtlb.SoftTLB(self, soft) if soft else None
        wc = profile.write_combining
        self.model = c.Layout(profile.caches, tlbs=mmu_model.tlb_levels(profile) if mmu else (),
                              memory_latency=profile.memory_latency, seed=seed,
                              code_base=self.code_base, code_len=self.code_size,
                              specials=MAX_SPECIALS,
                              wc_buffers=wc.get("buffers", 0), wc_line=wc.get("line", 64),
                              coherent_icache=profile.coherent_icache, cores=cores,
                              shadow_l1d=mmu and self._walk_below_l1(profile),
                              alignment=profile.alignment,
                              store_queues=profile.l2_store_queues,
                              segment_words=self._segment_words(profile, mmu),
                              memory_system=profile.memory, topology=profile.topology)
        st = self.state = self.model.state
        st[c.H_FIXED_WIDTH] = 0 if self.isa == "x86" else 4
        st[c.H_DEFAULT_COST] = profile.costs.get("default", 1)
        st[c.H_REG_WIDTH_MASK] = -1 if self.isa == "ppc64" else 0xFFFFFFFF
        st[c.H_STRICT] = int(strict_coherence)
        st[c.H_PC_REG] = PC_REGISTERS[self.isa]
        st[c.H_RAM_PTR], st[c.H_RAM_SIZE] = self._ram_base_ptr, ram_size
        if soft:
            st[c.H_MMU] = softtlb.MODE_SOFT603 if soft == "603" else softtlb.MODE_SOFT405
            st[c.H_SOFTTLB] = self.soft_tlb.records.ctypes.data     # its native hooks' records
        elif mmu:
            st[c.H_MMU] = {"arm": mmu_model.MODE_ARM_SHORT, "ppc32": mmu_model.MODE_HASHED32,
                           "ppc64": mmu_model.MODE_HASHED64}[self.isa]
            st[c.H_SLB_ENTRIES] = profile.tlb.get("slb_entries", 0) if self.isa == "ppc64" else 0
            st[c.H_WALK_CYCLES] = profile.tlb.get("walk_cycles", 0)
            st[c.H_WALK_THROUGH_L1] = not self._walk_below_l1(profile)
        self._starts = np.zeros(self.code_size + 1, np.int64)
        self._cycles = np.zeros(self.code_size + 1, np.int64)
        self._syncs = np.zeros(self.code_size + 1, np.int64)
        self._writes = np.zeros(self.code_size + 1, np.int64)
        self._loaded_top = 0             # the end of the highest program (code offset)
        self._specials = []
        self._hooks = []
        self._python_hooks = []
        self.outer_cache_base = self._map_outer_cache(profile)
        self.model.share_settings()
        for uc in self.cpus:
            self._hooks += [
                native.add_hook(uc, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
                                native.memory_hook_for(st), st, 0, ram_size - 1),
                native.add_hook(uc, UC_HOOK_BLOCK, native.block_hook_for(st), st)]
            if self.isa == "ppc64":
                self._hooks.append(native.add_hook(uc, UC_HOOK_TLB_FILL,
                                                   native.identity_tlb_fill, st))
            if self.isa == "x86":     # the time stamp counter is the model's cycles
                for insn, hook in ((x86_const.UC_X86_INS_RDTSC, native.rdtsc_hook),
                                   (x86_const.UC_X86_INS_RDTSCP, native.rdtscp_hook)):
                    self._hooks.append(native.add_hook(uc, UC_HOOK_INSN, hook, st,
                                                       instruction=insn))
            # before _on_invalid: a scheduled run's return to HALT is a fetch there
            self._hooks.append(native.add_hook(uc, UC_HOOK_MEM_FETCH_UNMAPPED,
                                               native.halt_fetch_hook, st, HALT, HALT))
            self._python_hooks += [_weak_hook(self, uc, UC_HOOK_MEM_INVALID, "_on_invalid"),
                                   _weak_hook(self, uc, UC_HOOK_INTR, "_on_interrupt")]
        self._foreign_hooks = [[] for _ in self.cpus]
        if self.isa == "x86":
            self._hook_foreign_code()
        self._fault = None
        # a Python function (uc, number) -> True if it delivered the exception to the guest
        # itself (emu.kernel.entry: system calls, and the 604's storage interrupts)
        self.interrupt_handler = None
        self.extable = extable.ExceptionTable()     # the loaded programs' __ex_table entries
        self.programs: list[Program] = []
        self.symbols: dict = {}
        self._next_code, self._heap = CODE_BASE, HEAP_BASE
        self.stack_top = ram_size - PAGE
        self._update_tables()

    # ---------------------------------------------------------------- set-up

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        """Free the emulators and guest RAM now; any later use of the machine is an error.
        (A discarded Machine frees them too, when its last reference goes.)"""
        for uc in getattr(self, "cpus", ()):
            finalizer = getattr(uc, "_Uc__finalizer", None)
            if finalizer is not None:
                finalizer()                 # uc_close, once (the Uc's own finalizer)
        closed = _Closed()
        self.cpus, self.uc = [], closed
        self.ram = self._ram_view = self.state = self.model = self.soft_tlb = closed
        self._python_hooks, self._hooks = [], []

    def _new_unicorn(self, profile):
        arch, mode = {"ppc32": (UC_ARCH_PPC, UC_MODE_PPC32 | UC_MODE_BIG_ENDIAN),
                      "ppc64": (UC_ARCH_PPC, UC_MODE_PPC64 | UC_MODE_BIG_ENDIAN),
                      "arm": (UC_ARCH_ARM, UC_MODE_ARM),
                      "x86": (UC_ARCH_X86, UC_MODE_32)}[profile.isa]
        _reserve_translation_buffer()
        uc = Uc(arch, mode)
        # QEMU reserves 1 GB of address space per emulator for translated code by default,
        # and when it cannot, exits the process ("Could not allocate dynamic translator
        # buffer", no Python exception): the book's code needs a few MB of it
        uc.ctl_set_tcg_buffer_size(TRANSLATION_BUFFER)
        if profile.unicorn_cpu != "default":
            module = {"ppc32": ppc_const, "arm": arm_const, "x86": x86_const}.get(profile.isa)
            model = getattr(module, str(profile.unicorn_cpu), None)
            if not isinstance(model, int):
                raise ValueError(f"profile {profile.name}: unicorn_cpu "
                                 f"{profile.unicorn_cpu!r} is not a Unicorn CPU model of "
                                 f"{profile.isa}")
            uc.ctl_set_cpu_model(model)
        if profile.isa == "x86":
            # SSE on, as Linux sets it at boot when the CPU has FXSR (CR4.OSFXSR, and
            # OSXMMEXCPT for SIMD exceptions; Intel SDM vol. 3, 2.5): without them a named
            # CPU model faults on every SSE instruction
            uc.reg_write(x86_const.UC_X86_REG_CR4,
                         uc.reg_read(x86_const.UC_X86_REG_CR4) | 1 << 9 | 1 << 10)
        if profile.isa == "ppc64":
            # PPC64 runs only in the virtual-TLB mode (see shared platform notes).
            uc.ctl_set_tlb_mode(unicorn_const.UC_TLB_VIRTUAL)
        return uc

    def _map_outer_cache(self, profile):
        """Map an outer cache controller's register page (a profile's [outer_cache] base:
        the PL310 of cortex-a9) in every core, its stores hooked natively. Returns the
        base, or None."""
        outer = profile.outer_cache
        if "base" not in outer:
            return None
        base = outer["base"]
        if base % PAGE or base < self.ram_size:
            raise ValueError(f"the outer cache registers at {base:#x} must be page aligned "
                             f"and above RAM (which ends at {self.ram_size:#x})")
        st = self.state
        st[c.H_OUTER_BASE] = base
        st[c.H_OUTER_SYNC_CYCLES], st[c.H_OUTER_LINE_CYCLES] = outer["cache_sync"], \
            outer["line_op"]
        for uc in self.cpus:
            uc.mem_map(base, PAGE, UC_PROT_READ | UC_PROT_WRITE)
            self._hooks.append(native.add_hook(uc, UC_HOOK_MEM_WRITE, native.outer_cache_hook,
                                               st, base, base + PAGE - 1))
        return base

    @staticmethod
    def _segment_words(profile, mmu):
        """The state's per-core segment area: 16 segment registers, or the SLB (two words
        per entry) of a 64-bit hashed MMU."""
        if mmu and profile.isa == "ppc64":
            return max(16, 2 * profile.tlb.get("slb_entries", 0))
        return 16

    @staticmethod
    def _walk_below_l1(profile):
        """An ARM table walker that does not look in the L1 D (a profile's
        ``walk_through_l1 = false``, older cores) reads memory's copy of the tables."""
        return profile.isa == "arm" and not profile.tlb.get("walk_through_l1", True)

    # ---------------------------------------------------------------- memory

    def alloc(self, size, data=None, align=PAGE):
        """A zeroed (or initialised) buffer in RAM; returns its address."""
        if data is not None:
            size = max(size, len(data))
        if size <= 0:
            raise ValueError("alloc needs a positive size")
        address = -(-self._heap // align) * align
        if address + size > self.stack_top - (1 << 20):
            raise MemoryError(f"guest RAM is full: {size} bytes do not fit below the stack "
                              f"(ram_size={self.ram_size:#x})")
        self._heap = address + size
        if data:
            self.write(address, bytes(data).ljust(size, b"\0"))
        elif np.frombuffer(self._ram_view[address:address + size], np.uint8).any():
            self.write(address, bytes(size))     # zeroed (RAM never written reads 0 as is)
        return address

    def write(self, address, data):
        data = bytes(data)
        self._write_bytes(address, data)
        if address < self.code_base + self._loaded_top and self.code_base < address + len(data):
            # over loaded code: its listing (the store queues' table of stores) is void
            self.state[self.state[c.H_SCRATCH] + c.S_CODE_WRITTEN] = 1

    def _write_bytes(self, address, data):
        self.uc.mem_write(address, data)
        self._forget_translations(address, len(data))

    def _forget_translations(self, address, size):
        """Unicorn keeps the code it translated until the guest stores over it (or, on
        several cores, not even then: see emu.parallel); bytes the host writes over code
        would run stale, silently. Over code, every core's translations of
        [address, address + size) go."""
        end = address + size
        if self._ran_code_in(address, end):
            for uc in self.cpus:
                uc.ctl_remove_cache(address, end)

    def _ran_code_in(self, address, end):
        """Does [address, end) overlap the code region, or the span of code the cores ran
        outside it (emu.cache.S_FOREIGN_LO/HI)?"""
        scratch = self.state[c.H_SCRATCH]
        spans = ((self.code_base, self.code_base + self.code_size),
                 (self.state[scratch + c.S_FOREIGN_LO], self.state[scratch + c.S_FOREIGN_HI]))
        return any(lo < end and address < hi for lo, hi in spans)

    def read(self, address, size):
        if self._ram_low <= address and address + size <= len(self._ram_view) and size >= 0:
            return bytes(self._ram_view[address:address + size])
        return bytes(self.uc.mem_read(address, size))       # not RAM: Unicorn says why

    def read_word(self, address, size=4):
        if self._ram_low <= address and address + size <= len(self._ram_view) and size >= 0:
            return int.from_bytes(self._ram_view[address:address + size], self._byte_order)
        return int.from_bytes(self.read(address, size), self._byte_order)

    # ---------------------------------------------------------------- programs

    def load(self, program, at=None, align=None):
        """Load a Program, assembly source text, or a path to a .S file; returns the Program.

        ``at``: an address to assemble and load it at instead of the next free code address,
        e.g. an exception vector (0x1000) for the miss handlers of a software-loaded TLB.
        ``align``: the next free code address rounded up to this power of two (code whose
        vectors sit at fixed offsets from its start, emu.kernel.entry)."""
        if align is not None and at is None:
            if align <= 0 or align & (align - 1):
                raise ValueError(f"align must be a power of two, not {align}")
            self._next_code = -(-self._next_code // align) * align
        base = self._next_code if at is None else at
        if isinstance(program, Program):
            if program.isa != self.isa:
                raise ValueError(f"program is {program.isa}, machine is {self.isa}")
            if program.base != base:
                program = assemble(program.source, self.isa, base, program.filename)
        elif isinstance(program, Path) or (isinstance(program, str) and "\n" not in program
                                           and program.strip().endswith((".S", ".s"))):
            program = assemble_file(program, self.isa, base)
        else:
            program = assemble(program, self.isa, base)
        end = program.base + len(program.code)
        if end > CODE_BASE + CODE_SIZE or program.base < self.code_base:
            raise MemoryError(f"the code region ({self.code_base:#x}-"
                              f"{CODE_BASE + CODE_SIZE:#x}) is full or does not hold "
                              f"{program.base:#x}-{end:#x}")
        if at is not None and at < self.code_start and end > self.code_start:
            raise MemoryError(f"a program loaded at {at:#x} must end below {self.code_start:#x}")
        if self.isa == "x86":
            self._refuse_host_values(program)
        # everything that can refuse the program comes before anything changes: a refused
        # load leaves the Machine as it was (a refusal after the first change had left
        # every later load refused too)
        tables = cost.tables(self.isa, self.profile.costs, program.code, program.base,
                             self.profile.raw.get("smp", {}).get("serialising", ()),
                             bool(self.profile.memory.store_buffer))
        specials = [sp for sp in tables.specials
                    if self.soft_tlb or sp.op not in cost.SOFT_TLB_OPS]
        if len(self._specials) + len(specials) > MAX_SPECIALS:
            raise MemoryError(f"{program.filename}: {len(specials)} cache-maintenance and "
                              f"special instructions, {len(self._specials)} loaded before: "
                              f"a Machine takes at most {MAX_SPECIALS}")
        self.extable.add(program)          # checks the program's __ex_table, if it has one
        self._write_bytes(program.base, bytes(program.code))     # its tables follow
        if at is None:
            self._next_code = -(-end // 64) * 64
        elif self.soft_tlb:
            self.soft_tlb.installed |= {v for v in self.soft_tlb.vectors.values()
                                        if program.base <= v < end}
        # the program's instructions replace what was there (at offset + 1: see emu.cost)
        lo = program.base - self.code_base
        hi = lo + len(program.code)
        self._starts[lo + 1:hi + 1] = tables.starts
        self._cycles[lo + 1:hi + 1] = tables.cycles
        self._syncs[lo + 1:hi + 1] = tables.syncs
        self._writes[lo + 1:hi + 1] = tables.writes
        self._loaded_top = max(self._loaded_top, hi)
        # what the scheduler learned about the code that was here before is void
        dynamic = self.state[c.H_SYNC_DYNAMIC]
        self.state[dynamic + lo:dynamic + lo + len(program.code)] = 0
        for sp in specials:              # (machines without a software-loaded TLB ignore
            self._specials.append(sp)    # its instructions)
            for uc in self.cpus:
                self._hooks.append(native.add_hook(uc, UC_HOOK_CODE, native.special_hook,
                                                   self.state, sp.pc, sp.pc))
        self._update_tables(lo)
        if self.isa == "x86":
            self._hook_foreign_code()
        self.programs.append(program)
        for name, value in program.symbols.items():
            if not name.startswith(".L"):
                self.symbols[name] = value
        return program

    @staticmethod
    def _refuse_host_values(program):
        """rdrand and rdseed return the host's random numbers (Unicorn offers no hook for
        them): runs would differ from process to process. Refused, naming the line."""
        from .assemble import AssemblyError
        for s in program.statements:
            if s.kind == "insn" and s.body.split()[0].lower().rstrip("wlq") in HOST_RANDOM:
                raise AssemblyError(
                    f"{s.body.split()[0]} would read the host's random number generator, and "
                    "runs would differ: the model has none (load a seed as data instead)",
                    program.filename, s.lineno, s.line)

    def _hook_foreign_code(self):
        """x86 code outside the loaded programs has no cost tables, and its instruction
        lengths are unknown to the block hook: a native hook on each of its instructions
        counts and charges them (emu/model/hooks.c, foreign_insn_hook). It covers the
        addresses below the code region and those above the highest loaded program, and is
        moved up at each load."""
        top = self.code_base + self._loaded_top
        ranges = ([(0, self.code_base - 1)] if self.code_base else []) + [(top, 0xFFFF_FFFF)]
        for k, uc in enumerate(self.cpus):
            for handle in self._foreign_hooks[k]:
                native.remove_hook(uc, handle)
            self._foreign_hooks[k] = [native.add_hook(uc, UC_HOOK_CODE,
                                                      native.foreign_insn_hook, self.state,
                                                      lo, hi) for lo, hi in ranges]

    def _update_tables(self, lo=0):
        """The prefix sums from code offset ``lo`` (what lies before it is unchanged) to the
        end of the loaded code (H_CODE_TOP; above it the tables are not read, and left
        untouched: writing a megabyte of them costs more than the rest of a Machine)."""
        st = self.state
        top = self._loaded_top
        for values, field in ((self._starts, c.H_ICOUNT), (self._cycles, c.H_ICOST),
                              (self._syncs, c.H_SYNC_STATIC)):
            prefix = st[field]
            st[prefix + lo + 1:prefix + top + 1] = np.cumsum(values[lo + 1:top + 1]) + \
                st[prefix + lo]
        # H_WRITERS: 1 + the offset of the last instruction before each offset that may
        # write memory (0: none), for the block hook's look for a block's only store
        writers = st[c.H_WRITERS]
        index = np.arange(lo + 1, top + 1)
        st[writers + lo + 1:writers + top + 1] = np.maximum.accumulate(
            np.maximum(np.where(self._writes[lo + 1:top + 1] != 0, index, 0), st[writers + lo]))
        st[c.H_CODE_TOP] = top
        self.model.forget_block_memos()     # their facts came from the tables
        if len(self._specials) > MAX_SPECIALS:
            raise MemoryError(f"more than {MAX_SPECIALS} cache-maintenance instructions")
        table = sorted(self._specials, key=lambda s: s.pc)
        at = st[c.H_SPECIALS]
        for i, s in enumerate(table):
            st[at + 8 * i:at + 8 * i + 8] = [s.pc, s.op, s.scope, s.base, s.index, s.scale,
                                             s.disp, s.swallow]
        st[c.H_NSPECIALS] = len(table)

    def address_of(self, entry):
        if isinstance(entry, int):
            return entry
        if entry not in self.symbols:
            known = ", ".join(sorted(self.symbols)) or "nothing is loaded"
            raise KeyError(f"no symbol {entry!r} (known: {known})")
        return self.symbols[entry]

    def symbolize(self, address):
        """'symbol+offset' for an address inside loaded code, else the bare address."""
        for program in self.programs:
            if program.base <= address < program.base + len(program.code):
                name = program.symbol_at(address)
                if name is not None:
                    return f"{name}+{address - program.symbols[name]:#x}"
        return f"{address:#x}"

    # ---------------------------------------------------------------- running

    def flush_caches(self):
        """Empty every cache (as after a full write-back and invalidate): a cold start."""
        st = self.state
        for i, lv in enumerate(self.model.levels):
            r = c.HEADER + c.LEVEL_RECORD * i
            n = lv.sets * lv.ways
            for key, length in ((c.L_TAGS, n), (c.L_DIRTY, n), (c.L_STAMP, n),
                                (c.L_STALE, n), (c.L_PLRU, lv.sets), (c.L_MRU, lv.sets)):
                st[st[r + key]:st[r + key] + length] = 0
            if st[r + c.L_OWNER] >= 0:         # no copy holds a line now
                st[st[r + c.L_PRESENCE_AT]:st[r + c.L_PRESENCE_AT] + c.PRESENCE_BUCKETS] = 0
        wc = self.model.headers[0][c.H_WC]
        st[wc:wc + c.WC_WORDS * st[c.H_WC_N] * len(self.cpus)] = 0
        self.model.drain_memory_system()

    def call(self, entry, *args, limit=None, cold=False, real_mode=False):
        """Call a routine by symbol (or address) with integer arguments; returns a Run.

        ``real_mode``: on a software-loaded TLB (ppc603e, ppc405gp with ``mmu=True``), start
        with MSR[IR|DR] off instead of on (no TLB look-ups, as exception handlers run).

        Called from a task of ``emu.parallel.run_tasks``, the call runs on that task's
        core, in simulated time with the other cores' (its Run counts this call only)."""
        task = parallel.current_task()
        if task is not None and task.machine is self:
            if cold or real_mode:
                raise ValueError("a call from a task of run_tasks cannot be cold or in real "
                                 "mode: the other cores run on")
            return task.call(entry, *args, limit=limit)
        pc = self.address_of(entry)
        if cold:
            self.flush_caches()
        self.model.clear_stats()
        st = self.state
        st[c.H_LIMIT] = capped(self.instruction_limit if limit is None else check_limit(limit))
        self._fault = None
        st[st[c.H_SCRATCH] + hash64.S_SLB_PC] = 0
        self._set_arguments(args)
        if self.soft_tlb:
            self.soft_tlb.start(translate=not real_mode)
        elif real_mode:
            raise ValueError("real_mode applies to software-loaded TLBs (Machine(mmu=True) on "
                             "ppc603e or ppc405gp)")
        self.extable.taken.clear()
        st[c.H_STOP_ASKED] = 0
        while True:
            try:
                self.uc.emu_start(pc, HALT)
                break
            except UcError as error:   # emu.extable: a listed access resumes at its fixup
                pc = self.extable.resume(self)
                if pc is None:
                    raise self._describe_fault(error) from None
        self._raise_stop()
        if self._pc() != HALT and not st[c.H_STOP_ASKED]:
            raise self._halted(self._pc())     # no one stopped it: the guest halted its CPU
        return self._result(entry, args)

    def _check_stop(self):
        """Raise what stopped the running core: the instruction limit, a page fault, a
        stale instruction fetch under strict coherence, a refused soft-TLB instruction."""
        st = self.state
        if self.soft_tlb and (refused := self.soft_tlb.refused()):
            raise refused
        where_core = f"core {self.model.running}: " if len(self.cpus) > 1 else ""
        if st[c.H_STOPPED]:
            where = self._pc()
            raise InstructionLimitExceeded(
                f"{where_core}stopped after {int(st[c.H_INSNS]):,} instructions (the limit is "
                f"{int(st[c.H_LIMIT]):,}{_cap_note(int(st[c.H_LIMIT]))}) at PC {where:#x} "
                f"({self.symbolize(where)}): "
                f"{self._instruction_at(where)}" + (
                    ""))
        if st[c.H_PAGE_FAULTS]:
            raise self._page_fault()
        if st[c.H_HALTED]:
            pc = int(st[c.H_HALTED]) - 1
            st[c.H_HALTED] = 0
            raise self._halted(pc)
        if st[st[c.H_SCRATCH] + hash64.S_SLB_PC]:
            at = st[c.H_SCRATCH]
            raise self._slbmte_refused(int(st[at + hash64.S_SLB_PC]),
                                       int(st[at + hash64.S_SLB_RS]),
                                       int(st[at + hash64.S_SLB_RB]))
        if st[c.H_STRICT] and st[c.H_STALE]:
            pc_stale = int(st[c.H_STALE_PC])
            raise StaleInstructionFetch(
                f"{where_core}stale instruction fetch at PC {pc_stale:#x} "
                f"({self.symbolize(pc_stale)}): the I-cache line at "
                f"{int(st[c.H_STALE_ADDR]):#x} holds bytes older than "
                "the last store to them (the D-cache was not written back, or the I-cache "
                "line was not invalidated); real hardware would execute the old instructions")

    def run_tasks(self, tasks, quantum=DEFAULT_QUANTUM, limit=None):
        """Run one Python function per core at once (emu.parallel.run_tasks): each gets its
        Task; its guest calls (``task.call`` or ``machine.call`` from its Python) run on its
        core in simulated time, and ``task.spend(cycles)`` lets time pass there."""
        return parallel.run_tasks(self, tasks, quantum,
                                  None if limit is None else check_limit(limit))

    def run_parallel(self, calls, quantum=DEFAULT_QUANTUM, limit=None, cold=False):
        """Run one call per core at the same time: ``calls`` = [(entry, arg, ...), ...],
        call k on core k (None: core k stays idle), each with its own stack. Returns a
        ParallelRun (one Run per core).

        Time is simulated and causal (emu.parallel explains how): the core furthest behind
        runs next; synchronising blocks (atomics, serialising instructions, blocks where
        cores shared a line) run in the order of the cores' clocks; a core never sees a
        store before it was made; a spinning core waits, parked, for the store it spins
        on. ``quantum``: how many cycles a core may run ahead of the others in code that
        does not synchronise (it bounds the error of a first encounter with a shared line,
        and trades it for speed). Cores share RAM and the levels below L1; their L1 D
        caches are kept coherent (emu.cache.snoop). Code one core stores is not
        re-translated by the other cores' emulators: cross-modifying code is not modelled."""
        if limit is not None:
            limit = check_limit(limit)
        if len(self.cpus) == 1:
            return parallel.run_alone(self, calls, quantum, limit, cold)
        return parallel.run_parallel(self, calls, quantum, limit, cold)

    def _set_arguments(self, args, uc=None, sp=None):
        """Registers and stack for a call by the ISA's convention (on ``uc``, default ours)."""
        args = [int(a) for a in args]
        uc, sp = uc or self.uc, self.stack_top if sp is None else sp
        if self.isa in ("ppc32", "ppc64"):
            if len(args) > 8:
                raise ValueError("PowerPC calls take at most 8 arguments (r3-r10)")
            mask = (1 << (64 if self.isa == "ppc64" else 32)) - 1
            for i, a in enumerate(args):
                uc.reg_write(ppc_const.UC_PPC_REG_3 + i, a & mask)
            uc.reg_write(ppc_const.UC_PPC_REG_1, sp - 256)
            uc.reg_write(ppc_const.UC_PPC_REG_LR, HALT)
        elif self.isa == "arm":
            regs = [arm_const.UC_ARM_REG_R0, arm_const.UC_ARM_REG_R1, arm_const.UC_ARM_REG_R2,
                    arm_const.UC_ARM_REG_R3]
            stacked = args[4:]
            sp -= 4 * len(stacked)
            for i, a in enumerate(stacked):       # arguments 5.. on the stack (AAPCS)
                uc.mem_write(sp + 4 * i, (a & 0xFFFFFFFF).to_bytes(4, "little"))
            for reg, a in zip(regs, args):
                uc.reg_write(reg, a & 0xFFFFFFFF)
            uc.reg_write(arm_const.UC_ARM_REG_SP, sp)
            uc.reg_write(arm_const.UC_ARM_REG_LR, HALT)
        else:
            words = [HALT] + args                 # cdecl: return address, then arguments
            sp -= 4 * len(words)
            uc.mem_write(sp, b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in words))
            uc.reg_write(x86_const.UC_X86_REG_ESP, sp)

    def return_value(self):
        reg = {"ppc32": ppc_const.UC_PPC_REG_3, "ppc64": ppc_const.UC_PPC_REG_3,
               "arm": arm_const.UC_ARM_REG_R0, "x86": x86_const.UC_X86_REG_EAX}[self.isa]
        return self.uc.reg_read(reg)

    def _raise_stop(self):
        """Raise what the last run recorded as the reason it stopped: a fault a hook noted,
        or a stop the model asked for (_check_stop); nothing if it recorded none."""
        if self._fault is not None:
            if self._fault[0] == "raise":
                raise self._fault[1]
            raise self._describe_fault(None)
        self._check_stop()

    def _pc(self):
        return self.uc.reg_read(PC_REGISTERS[self.isa])

    def _result(self, entry, args):
        st = self.state
        events = {"stale_ifetch": int(st[c.H_STALE]),
                  "first_stale_pc": int(st[c.H_STALE_PC]) if st[c.H_STALE] else None,
                  "nontemporal_stores": int(st[c.H_NT_STORES]),
                  "wc_flushes": int(st[c.H_WC_FLUSHES]),
                  "wc_partial_flushes": int(st[c.H_WC_PARTIAL]),
                  "instructions_outside_programs": int(st[c.H_UNCOUNTED]),
                  "alignment_exceptions": int(st[c.H_ALIGN_EXCEPTIONS]),
                  "split_accesses": int(st[c.H_SPLITS])}
        if st[c.H_SQ_SLICES]:
            events.update({"l2_store_queue_stores": int(st[c.H_SQ_STORES]),
                           "l2_store_queue_stalls": int(st[c.H_SQ_STALLS]),
                           "l2_store_queue_stall_cycles": int(st[c.H_SQ_STALL_CYCLES])})
        if self.outer_cache_base is not None:
            events.update({"outer_cache_syncs": int(st[c.H_OUTER_SYNCS]),
                           "outer_cache_line_ops": int(st[c.H_OUTER_LINE_OPS]),
                           "outer_cache_wait": int(st[c.H_OUTER_WAIT])})
        if len(self.cpus) > 1:
            events.update(parallel.events(st))
        if st[c.H_MEMSYS]:
            events.update(memory_events(st))
        if st[c.H_MMU] == mmu_model.MODE_ARM_SHORT:
            events.update({"table_walks": int(st[c.H_WALKS]),
                           "section_hits": int(st[c.H_PRIMARY_HITS]),
                           "page_hits": int(st[c.H_SECONDARY_HITS]),
                           "page_faults": int(st[c.H_PAGE_FAULTS])})
        elif self.soft_tlb:
            events.update(self.soft_tlb.events())
        elif st[c.H_MMU]:
            events.update({"hash_walks": int(st[c.H_WALKS]),
                           "primary_hits": int(st[c.H_PRIMARY_HITS]),
                           "secondary_hits": int(st[c.H_SECONDARY_HITS]),
                           "page_faults": int(st[c.H_PAGE_FAULTS])})
        return Run(self.profile.name, entry if isinstance(entry, str) else hex(entry),
                   tuple(args), int(self.return_value()), int(st[c.H_INSNS]),
                   int(st[c.H_CYCLES]), self.model.stats(core=self.model.running), events,
                   {"reads": int(st[c.H_MEM_READS]), "writes": int(st[c.H_MEM_WRITES])},
                   self.model.tlb_stats(core=self.model.running))

    # ---------------------------------------------------------------- faults

    def _stop_for(self, fault, uc=None):
        """A Python hook stops the machine: what for (raised when the run returns), and the
        flag that tells the scheduler of a parallel run (emu.parallel) why it stopped."""
        self._fault = fault
        self.state[c.H_HOST_STOP] = 1
        if uc is not None:
            uc.emu_stop()

    def _on_invalid(self, uc, access, address, size, value, user_data):
        # the first invalid access, and the PC as it is now: an instruction that stores
        # through a helper (dcbz, stmw, stswi) goes on after it, and Unicorn's PC when
        # it stops is not the instruction's (it named the halt address)
        if self._fault is None or self._fault[0] != "memory":
            self._stop_for(("memory", access, address, size, self._pc_of(uc)))
        return False

    def _pc_of(self, uc):
        return uc.reg_read(PC_REGISTERS[self.isa])

    def _on_interrupt(self, uc, number, user_data):
        if self.interrupt_handler is not None and self.interrupt_handler(uc, number):
            return                      # delivered to the guest (emu.kernel.entry)
        if number == 6 and self.isa == "ppc64":
            # tlbie and tlbsync are hypervisor-privileged on Unicorn's PPC64 model (platform
            # notes): their effect was given by the special hook; go on past them
            pc = uc.reg_read(ppc_const.UC_PPC_REG_PC)
            if self._instruction_at(pc - 4).split()[0] in ("tlbie", "tlbsync"):
                uc.reg_write(ppc_const.UC_PPC_REG_PC, pc)
                return
            if self._instruction_at(pc - 4).split()[0] == "slbmte" and \
                    self.state[c.H_MMU] == mmu_model.MODE_HASHED64:
                # Unicorn's CPU has 32 SLB entries, POWER4 64: the model took the entry
                # (special hook); go on past it unless the model refused it too
                rs, rb = self._slbmte_operands(uc, pc - 4)
                if hash64.slbmte_problem(rs, rb, self.profile.tlb["slb_entries"]) is None:
                    uc.reg_write(ppc_const.UC_PPC_REG_PC, pc)
                    return
                self._stop_for(("raise", self._slbmte_refused(pc - 4, rs, rb)), uc)
                return
        if self.soft_tlb:
            handled = self.soft_tlb.exception(number, self._pc())
            if handled is True:
                return
            if handled is not None:
                self._stop_for(("raise", handled), uc)
                return
        self._stop_for(("interrupt", number, None, None, self._pc_of(uc)), uc)

    def _instruction_at(self, pc):
        try:
            return disassemble_one(self.read(pc, 16 if self.isa == "x86" else 4), self.isa, pc)
        except UcError:
            return "(no instruction: the address is not mapped)"

    def _slbmte_operands(self, uc, pc):
        """(RS, RB) of the slbmte at ``pc``, read from the registers it names."""
        names = self._instruction_at(pc).split(None, 1)[1].split(",")
        return [uc.reg_read(ppc_const.UC_PPC_REG_0 + int(name.strip().lstrip("r%")))
                for name in names]

    def _slbmte_refused(self, pc, rs, rb):
        insn = self._instruction_at(pc)
        why = hash64.slbmte_problem(rs, rb, self.profile.tlb["slb_entries"])
        return GuestFault(f"slbmte refused at PC {pc:#x} ({self.symbolize(pc)}): {insn}: {why}",
                          pc, insn, None, "slbmte")

    def _page_fault(self):
        st = self.state
        pc, ea = int(st[c.H_FAULT_PC]), int(st[c.H_FAULT_EA])
        access = "instruction fetch" if st[c.H_FAULT_FETCH] else \
            "data store" if st[c.H_FAULT_WRITE] else "data load"
        insn = self._instruction_at(pc)
        hashes = self.mmu_describe(ea)
        kind, name = PageFault, "page fault"
        if st[c.H_MMU] == mmu_model.MODE_HASHED64:
            kind, name = {hash64.FAULT_SEGMENT: (SegmentFault, "segment fault"),
                          hash64.FAULT_NO_EXECUTE: (InstructionStorageFault,
                                                    "no-execute fault"),
                          hash64.FAULT_PROTECTION: (DataStorageFault, "protection fault")}.get(
                              int(st[c.H_FAULT_STATUS]), (PageFault, "page fault"))
        where_core = f"core {self.model.running}: " if len(self.cpus) > 1 else ""
        return kind(f"{where_core}{name} at PC {pc:#x} ({self.symbolize(pc)}): {insn}: {access} "
                    f"at address {ea:#x}, {hashes}", pc, insn, ea, access)

    def mmu_describe(self, ea):
        """Where the walker looked for ``ea``: VSID, both hashes and PTEG addresses (ARM:
        the fault status and the descriptors it read)."""
        st = self.state
        if st[c.H_MMU] == mmu_model.MODE_ARM_SHORT:
            status = int(st[c.H_FAULT_STATUS])
            kind = {mmu_model.FSR_TRANSLATION_SECTION: "translation fault (section)",
                    mmu_model.FSR_TRANSLATION_PAGE: "translation fault (page)",
                    mmu_model.FSR_PERMISSION_SECTION: "permission fault (section)",
                    mmu_model.FSR_PERMISSION_PAGE: "permission fault (page)"}.get(
                        status, f"fault status {status:#x}")
            l1, l2 = int(st[c.H_FAULT_L1_ADDR]), int(st[c.H_FAULT_L2_ADDR])
            read = f"first-level descriptor at {l1:#x}" if l1 >= 0 else \
                "the TLB entry forbids it (invalidate the entry after changing the PTE)"
            if l2 >= 0:
                read += f", second-level descriptor at {l2:#x}"
            return f"{kind} (FSR {status:#x}): {read}"
        if st[c.H_MMU] == mmu_model.MODE_HASHED64:
            return self._describe_hash64(ea)
        vsid = int(st[st[c.H_SEGMENTS] + ((ea >> 28) & 0xF)]) & 0xFFFFFF
        sdr1 = int(st[c.H_SDR1])
        h1, h2 = mmu_model.primary_hash(vsid, ea), mmu_model.secondary_hash(vsid, ea)
        return (f"VSID {vsid:#x}: no valid PTE in the primary PTEG at "
                f"{mmu_model.pteg_address(sdr1, h1):#x} (hash {h1:#x}) or the secondary at "
                f"{mmu_model.pteg_address(sdr1, h2):#x} (hash {h2:#x})")

    def _describe_hash64(self, ea):
        """64-bit: the SLB entry, VSID, both hashes and PTEG addresses, what went wrong."""
        st = self.state
        status = int(st[c.H_FAULT_STATUS])
        what = hash64.FAULT_NAMES.get(status, f"fault status {status}")
        entry = self.slb_lookup(ea)
        if entry is None:
            return f"{what}: no valid SLB entry has ESID {ea >> 28:#x}"
        index, vsid_word = entry[0], entry[1]
        vsid, sdr1 = vsid_word >> 12, int(st[c.H_SDR1])
        h1, h2 = hash64.primary_hash(vsid, ea), hash64.secondary_hash(vsid, ea)
        where = (f"SLB entry {index}: ESID {ea >> 28:#x} -> VSID {vsid:#x}; primary PTEG at "
                 f"{hash64.pteg_address(sdr1, h1):#x} (hash {h1:#x}), secondary at "
                 f"{hash64.pteg_address(sdr1, h2):#x} (hash {h2:#x})")
        if status == hash64.FAULT_NO_HPTE:
            return f"{what}: no valid HPTE in either PTEG: {where}"
        return f"{what}: {where}"

    # ---------------------------------------------------------------- MMU registers

    def _cores(self, core):
        """The cores a register set-up applies to: ``core``, or every core (None); from a
        task of ``emu.parallel.run_tasks``, None is the task's own core."""
        if core is None:
            task = parallel.current_task()
            if task is not None and task.machine is self:
                return (task.core,)
            return range(len(self.cpus))
        if not 0 <= core < len(self.cpus):
            raise ValueError(f"core {core} does not exist (the machine has {len(self.cpus)})")
        return (core,)

    def set_slb(self, index, esid, vsid, ks=False, kp=False, no_execute=False, core=None):
        """64-bit MMU: SLB entry ``index`` of ``core`` (None: of every core) maps ESID
        ``esid`` (EA >> 28) to ``vsid``, as ``slbmte`` would (the model's TLB entries of a
        segment it replaces are dropped)."""
        if self.state[c.H_MMU] != mmu_model.MODE_HASHED64:
            raise ValueError("an SLB exists only on a 64-bit hashed MMU (ppc64, mmu=True)")
        rs, rb = hash64.slb_words(esid, vsid, index, ks, kp, no_execute)
        why = hash64.slbmte_problem(rs, rb, self.profile.tlb["slb_entries"])
        if why:
            raise ValueError(why)
        running = self.model.running
        try:
            for k in self._cores(core):
                self.model.switch(k)          # slbmte acts on the running core's SLB
                mmu_model.slb_store(self.state, hash64.signed64(rs), hash64.signed64(rb))
        finally:
            self.model.switch(running)

    def slb(self, index):
        """SLB entry ``index`` as (ESID word: ESID << 28 | V, VSID word: VSID << 12 | flags),
        as the model holds it (entries the guest's slbmte wrote included)."""
        if not 0 <= index < self.state[c.H_SLB_ENTRIES]:
            raise ValueError(f"SLB entry {index} does not exist (the SLB has "
                             f"{int(self.state[c.H_SLB_ENTRIES])} entries)")
        at = self.state[c.H_SEGMENTS] + 2 * index
        return (int(self.state[at]) & (2**64 - 1), int(self.state[at + 1]) & (2**64 - 1))

    def slb_lookup(self, ea):
        """(entry index, VSID word) of the valid SLB entry for ``ea``'s segment, or None."""
        k = hash64.slb_find(self.state, hash64.signed64(ea))
        return None if k < 0 else (int(k), self.slb(int(k))[1])

    @contextmanager
    def translation_off(self):
        """Run with the MMU model's TLB look-ups and walks off (the segment registers or SLB
        stay, so tlbie still finds its entries): how a kernel runs its own routines from
        memory mapped by BATs (32-bit) or bolted large pages (64-bit)."""
        saved = int(self.state[c.H_MMU])
        self.state[c.H_MMU] = 0
        try:
            yield
        finally:
            self.state[c.H_MMU] = saved

    @property
    def ttbr0(self):
        """ARM: the translation table base (TTBR0; the first-level table is 16 KB)."""
        return int(self.state[c.H_SDR1])

    @ttbr0.setter
    def ttbr0(self, value):
        self.state[c.H_SDR1] = value

    @property
    def sdr1(self):
        return int(self.state[c.H_SDR1])

    @sdr1.setter
    def sdr1(self, value):
        self.state[c.H_SDR1] = value
        if self.soft_tlb:                    # the 603 computes HASH1/HASH2 from it
            self.soft_tlb.regs.set_spr(softtlb.SDR1, value)

    def set_segment(self, number, vsid, ks=False, kp=False, core=None):
        """Segment register ``number`` (0-15, selected by EA bits 0-3) of ``core`` (None: of
        every core) holds ``vsid`` (and, on a software-loaded TLB, the Ks/Kp key bits the
        603 puts in SRR1[KEY])."""
        if not 0 <= number < 16:
            raise ValueError("segment registers are numbered 0-15")
        if self.soft_tlb is not None and self.soft_tlb.kind == "405":
            raise ValueError(f"{self.profile.name} has no segment registers (the 405 tags "
                             "its TLB entries with a PID instead: set_spr)")
        for k in self._cores(core):
            self.state[self.model.header(k)[c.H_SEGMENTS] + number] = vsid & 0xFFFFFF
        if self.soft_tlb:
            self.soft_tlb.regs.set_sr(number, (vsid & 0xFFFFFF) | (ks << 30) | (kp << 29))

    def spr(self, number):
        """A special-purpose register of the CPU (software-loaded TLB machines)."""
        return self._soft_tlb_regs().spr(number)

    def set_spr(self, number, value):
        self._soft_tlb_regs().set_spr(number, value)

    def _soft_tlb_regs(self):
        if self.soft_tlb is None:
            raise ValueError("spr/set_spr reach the special-purpose registers of a "
                             "software-loaded TLB: Machine(mmu=True) on ppc603e or ppc405gp")
        return self.soft_tlb.regs

    def segment(self, number):
        return int(self.state[self.state[c.H_SEGMENTS] + number])

    def _instruction_ending_at(self, pc):
        """(address, text) of the instruction that ends at ``pc``, or None: the last block
        the model charged is decoded from its start (x86 instructions have no fixed
        length), else the fixed width of the ISA."""
        st = self.state
        start, size = int(st[c.H_BLOCK_START]), int(st[c.H_BLOCK_SIZE])
        if start < pc <= start + size:
            try:
                code = self.read(start, pc - start)
            except UcError:
                code = b""
            for insn in decode(code, self.isa, start):
                if insn.address + insn.size == pc:
                    return insn.address, f"{insn.mnemonic} {insn.op_str}".strip()
        if self.isa != "x86":
            return pc - 4, self._instruction_at(pc - 4)
        for length in (1, 2):            # int3, into, int1, hlt; int $n
            try:
                code = self.read(pc - length, length)
            except UcError:
                return None
            found = [i for i in decode(code, "x86", pc - length) if i.size == length]
            if found:
                return pc - length, f"{found[0].mnemonic} {found[0].op_str}".strip()
        return None

    def _trap_instruction(self, pc, names):
        """The instruction before ``pc`` if its mnemonic is one of ``names`` (Unicorn
        reports the PC past it), else None."""
        before = self._instruction_ending_at(pc)
        if before and before[1].split()[0].lower() in names:
            return before
        return None

    @staticmethod
    def _raises(insn, number, traps):
        """Does ``insn`` (text) raise interrupt ``number``?"""
        mnemonic, _, operand = insn.partition(" ")
        expected = traps[mnemonic.lower()]
        if expected is None:                 # int $n
            try:
                expected = int(operand.strip().lstrip("$"), 0)
            except ValueError:
                return False
        return expected == number

    def _where(self, pc, insn):
        where = f"PC {pc:#x} ({self.symbolize(pc)}): {insn}"
        return f"core {self.model.running}, {where}" if len(self.cpus) > 1 else where

    def _halted(self, pc):
        """The guest stopped its CPU (hlt, wfi) at ``pc`` (the PC past the instruction)."""
        isa = "ppc" if self.isa.startswith("ppc") else self.isa
        found = self._trap_instruction(pc, HALTS[isa])
        if found is None:
            insn = self._instruction_at(pc)
            return GuestHalted(f"the guest stopped at {self._where(pc, insn)}, not at its "
                               "return: no instruction of the model stops there", pc, insn,
                               None, "halt")
        at, insn = found
        return GuestHalted(f"{insn.split()[0]} at {self._where(at, insn)}: the guest halted its "
                           "CPU to wait for an interrupt or event, and the model has none: "
                           "the call cannot return", at, insn, None, "halt")

    def _describe_fault(self, error):
        fault = self._fault
        pc = fault[4] if fault and len(fault) > 4 and fault[4] is not None else self._pc()
        isa = "ppc" if self.isa.startswith("ppc") else self.isa
        if fault and fault[0] == "interrupt":
            number = fault[1]
            if isa == "ppc":
                pc -= 4    # Unicorn reports a PPC exception with the PC past its instruction
            elif (found := self._trap_instruction(pc, TRAPS_AFTER[isa])) and \
                    self._raises(found[1], number, TRAPS_AFTER[isa]):
                pc = found[0]                  # int, svc: the PC past the instruction
            name = INTERRUPT_NAMES[isa].get(number)
            if name is None and isa == "x86" and number >= 32:
                name = f"software interrupt int ${number:#x}"
            what = f"{name} (interrupt {number})" if name else f"interrupt {number}"
            insn = self._instruction_at(pc)
            return GuestFault(f"guest exception: {what} at {self._where(pc, insn)}", pc, insn,
                              None, f"interrupt {number}")
        if fault and fault[0] == "memory":
            insn = self._instruction_at(pc)
            _, access, address, size = fault[:4]
            what = ACCESS_NAMES.get(access, f"memory access of type {access}")
            return GuestFault(f"guest fault at {self._where(pc, insn)}: {what} at address "
                              f"{address:#x} ({size} bytes)", pc, insn, address, what)
        if isinstance(error, UcError) and error.errno == unicorn_const.UC_ERR_INSN_INVALID \
                and (found := self._trap_instruction(pc, HALTS[isa])):
            at, insn = found          # Unicorn cannot run wfe / yield: it names the next one
            return GuestHalted(f"{insn.split()[0]} at {self._where(at, insn)}: the guest waits "
                               "for an event, and the model has none (Unicorn cannot run "
                               "it): the call cannot return", at, insn, None, "halt")
        insn = self._instruction_at(pc)
        return GuestFault(f"guest fault at {self._where(pc, insn)}: {error}", pc, insn, None,
                          str(error))

