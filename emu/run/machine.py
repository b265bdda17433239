"""A Unicorn CPU with memory, a loaded program, and the instrumented cache + cost model.

>>> m = Machine("ppc750")
>>> m.load(emu.routine("ppc32/flush_dcache_icache.S"))      # doctest: +SKIP
>>> run = m.call("flush_dcache_icache", m.alloc(4096))      # doctest: +SKIP
>>> run.cycles, run.caches["L1D"]["misses"]                 # doctest: +SKIP

The guest's address map is ``emu.hw.layout``'s; Unicorn's set-up is ``emulator``'s, each
ISA's calling convention ``calling``'s, what a call measured ``result``'s, what stopped it
``diagnose``'s, and the MMU's registers are the architecture's (``machine.mmu``, from
``emu.hw.mmu.registers_of``). Several cores run through ``emu.run.parallel``.
"""
from __future__ import annotations

import contextlib
import struct
import weakref
from pathlib import Path

import numpy as np
from unicorn import (UC_HOOK_BLOCK, UC_HOOK_CODE, UC_HOOK_INSN, UC_HOOK_INTR,
                     UC_HOOK_MEM_FETCH_UNMAPPED, UC_HOOK_MEM_INVALID, UC_HOOK_MEM_READ,
                     UC_HOOK_MEM_WRITE, UC_HOOK_TLB_FILL, UC_PROT_ALL, UC_PROT_READ,
                     UC_PROT_WRITE, UcError, x86_const)

from ..hw import cache as c
from ..hw import cost, native, softtlb
from ..hw import mmu as mmu_model
from ..hw.layout import CODE_BASE, CODE_SIZE, HALT, HEAP_BASE, MAX_RAM, MAX_SPECIALS, PAGE
from ..hw.profile import Profile, load as load_profile
from ..isa.assemble import AssemblyError, Program, assemble, assemble_file
from . import diagnose, extable, parallel
from .costreads import CostReads, clock_free
from .calling import (PC_REGISTERS, RETURN_REGISTERS, STOP_ASKED, STOP_REASONS, GuestRuns,
                      read_register)
from .emulator import Closed, new_unicorn, weak_hook
from .limits import capped, check_limit
from .parallel import DEFAULT_QUANTUM
from .result import Counts, count_layout, run_of

# x86 instructions whose results would come from the host: refused at load
HOST_RANDOM = ("rdrand", "rdseed")


def special_spans(specials, starts, base):
    """The code hooks for ``specials`` (a program's special instructions; ``starts``: its
    table of instruction starts, a byte per byte of code from ``base``): [(first pc, last
    pc)], one span for each run of specials with no other instruction between them. Unicorn
    hooks the same instructions as with a hook per special (those whose PC a hook's span
    holds), but at every hooked instruction it walks a core's whole list of code hooks (with
    a hook per special, that walk was a quarter of Yoshioka's paced x86 runs' CPU: 191
    specials, 167 of them locked instructions; 157 spans). The locked instructions are no
    longer hooked (emu.hw.cost.AT_ACCESS: the memory hook applies them at their read)."""
    spans = []
    for pc in sorted(sp.pc for sp in specials):
        if spans and not starts[spans[-1][1] - base + 1:pc - base].any():
            spans[-1][1] = pc            # the next instruction after the span's last
        else:
            spans.append([pc, pc])
    return [tuple(span) for span in spans]


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
        # the order of cores woken at one cycle: the profile's estimate (emu.run.parallel)
        self.ties = parallel.TIES[bool(profile.raw.get("smp", {}).get("hashed_ties", False))]
        self.instruction_limit = instruction_limit
        refusal = mmu and mmu_model.supported(profile)
        if refusal:
            raise ValueError(refusal)
        if mmu and cores != 1 and softtlb.kind(profile):
            raise ValueError(f"{profile.name} is a uniprocessor: its software-loaded TLB is "
                             "one CPU's own (emu.hw.softtlb), so mmu=True needs cores=1")
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
        self.ram_base_ptr = self.ram.ctypes.data + offset
        self.cpus = [new_unicorn(profile) for _ in range(cores)]
        self.uc = self.cpus[0]                  # the core that runs (core 0 but in run_parallel)
        low = 0 if soft else PAGE
        # reads of mapped RAM come straight from the buffer (writes go through Unicorn,
        # which must see a store to code it has translated)
        self._ram_view = memoryview(self.ram)[offset:offset + ram_size]
        self._ram_low, self._ram_end = low, ram_size     # the RAM's addresses: [low, end)
        self._byte_order = "big" if self.isa.startswith("ppc") else "little"
        # a word of 4 or 8 bytes read by struct from the buffer: a quarter of int.from_bytes
        # of a slice's cost, and the kernel model's page-table walks read many
        order = ">" if self._byte_order == "big" else "<"
        self._unpack_word = {4: struct.Struct(order + "I").unpack_from,
                             8: struct.Struct(order + "Q").unpack_from}
        for uc in self.cpus:
            uc.mem_map_ptr(low, ram_size - low, UC_PROT_ALL, self.ram_base_ptr + low)
        # found before any hook exists (it runs a few guest instructions)
        self.soft_tlb = softtlb.SoftTLB(self, soft) if soft else None
        self._mmu_registers = mmu_model.registers_of(self.isa)
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
        # the span of code the cores ran outside the code region: words every core shares
        # (emu.hw.cache's scratch), at a place the layout fixes
        self._foreign_at = int(st[c.H_SCRATCH]) + c.S_FOREIGN_LO
        self.guest = GuestRuns(self.isa)         # Machine.call's runs (one library call each)
        self._call_plans = {}                    # running core: (CountLayout, call block)
        st[c.H_FIXED_WIDTH] = 0 if self.isa == "x86" else 4
        st[c.H_DEFAULT_COST] = profile.costs.get("default", 1)
        st[c.H_REG_WIDTH_MASK] = -1 if self.isa == "ppc64" else 0xFFFFFFFF
        st[c.H_STRICT] = int(strict_coherence)
        st[c.H_PC_REG] = PC_REGISTERS[self.isa]
        st[c.H_RAM_PTR], st[c.H_RAM_SIZE] = self.ram_base_ptr, ram_size
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
        self._loading = 0                # open Machine.loading() blocks
        self._tables_from = None         # the lowest code offset loaded since
        self._specials = []
        self._hooks = []
        self._python_hooks = []
        self.outer_cache_base = self._map_outer_cache(profile)
        self.model.share_settings()
        # the instruction costs the runs read, recorded as they run (emu.run.costreads)
        self.cost_reads = CostReads(self.model,
                                    clock_free(self.isa, cores, st, profile.memory.prefetcher))
        weakref.finalize(self, self.cost_reads.close).atexit = False
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
            self._python_hooks += [weak_hook(self, uc, UC_HOOK_MEM_INVALID, diagnose.on_invalid),
                                   weak_hook(self, uc, UC_HOOK_INTR, diagnose.on_interrupt)]
        self._foreign_hooks = [[] for _ in self.cpus]
        if self.isa == "x86":
            self._hook_foreign_code()
        self.stop_record = None     # what a Python hook noted as the reason a run stopped
        self.count_layouts = {}     # core -> where a Run's counters are (emu.run.result)
        # a Python function (uc, number) -> True if it delivered the exception to the guest
        # itself (emu.kernel.entry: system calls, and the 604's storage interrupts)
        self.interrupt_handler = None
        self.extable = extable.ExceptionTable()     # the loaded programs' __ex_table entries
        # a kernel model's delivery of an exception a call's access raised (e.g. the 604's
        # ISI / DSI without BATs, emu.kernel.ppc604): the PC to resume at, or None
        self.storage_interrupt = None
        self.programs: list[Program] = []
        self.symbols: dict = {}
        self.next_code, self.heap_end = CODE_BASE, HEAP_BASE
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
        reads = getattr(self, "cost_reads", None)
        if reads is not None:
            reads.close()
        closed = Closed()
        self.cpus, self.uc = [], closed
        self.ram = self._ram_view = self.state = self.model = self.soft_tlb = closed
        self._ram_end = 0                   # no RAM: an access goes to the closed Unicorn
        self.guest = closed
        self._python_hooks, self._hooks = [], []

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
        in_time = outer.get("maintenance_in_time", False)
        if not isinstance(in_time, bool):
            raise ValueError(f"outer_cache.maintenance_in_time = {in_time!r}: give true or false")
        if in_time:                      # posted, no limit, in order, through the PL310
            st[c.H_POSTED], st[c.H_WB_ENTRIES] = c.POSTED_IN_ORDER, 0
        buffers = outer.get("sync_waits_for_buffers", False)
        if not isinstance(buffers, bool):
            raise ValueError(f"outer_cache.sync_waits_for_buffers = {buffers!r}: give true or "
                             "false")
        if buffers:                      # a sync waits for the cores' DRAM transfers
            st[c.H_OUTER_TRAFFIC] = self.model.outer_traffic_at
        for uc in self.cpus:
            uc.mem_map(base, PAGE, UC_PROT_READ | UC_PROT_WRITE)
            self._hooks.append(native.add_hook(uc, UC_HOOK_MEM_WRITE, native.outer_cache_hook,
                                               st, base, base + PAGE - 1))
        return base

    def _posted_barriers(self):
        """The mnemonics of the barrier that waits for every posted maintenance write-back
        (OP_COMPLETE): dsb with the A9's maintenance in time, a [maintenance] table's
        barriers (POWER4's sync). The 750's broadcast sync is one too (emu.hw.cost's
        _broadcast_only), its own address tenure after them."""
        if self.profile.outer_cache.get("maintenance_in_time"):
            return ("dsb",)
        return tuple(self.profile.memory.maintenance.get("barriers", ()))

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
        address = -(-self.heap_end // align) * align
        if address + size > self.stack_top - (1 << 20):
            raise MemoryError(f"guest RAM is full: {size} bytes do not fit below the stack "
                              f"(ram_size={self.ram_size:#x})")
        self.heap_end = address + size
        if data:
            self.write(address, bytes(data).ljust(size, b"\0"))
        elif np.frombuffer(self._ram_view[address:address + size], np.uint8).any():
            self.write(address, bytes(size))     # zeroed (RAM never written reads 0 as is)
        return address

    def write(self, address, data):
        data = bytes(data)
        end = address + len(data)
        if self._ram_low <= address and end <= self._ram_end:
            self._ram_view[address:end] = data     # _write_bytes, inlined (a kernel's
        else:                                       # many writes of a few words)
            self.uc.mem_write(address, data)
        if self._ran_code_in(address, end):
            self._forget_translations(address, len(data))
        if address < self.code_base + self._loaded_top and self.code_base < end:
            # over loaded code: its listing (the store queues' table of stores) is void
            self.state[self.state[c.H_SCRATCH] + c.S_CODE_WRITTEN] = 1

    def _write_stack(self, address, data):
        """A call's stacked arguments, straight into guest RAM (the stack is never code)."""
        self._ram_view[address:address + len(data)] = data

    def _write_bytes(self, address, data):
        if self._ram_low <= address and address + len(data) <= self._ram_end:
            self._ram_view[address:address + len(data)] = data  # RAM: the same bytes Unicorn's
        else:                                                   # mem_write would store
            self.uc.mem_write(address, data)                    # not RAM: Unicorn says why
        self._forget_translations(address, len(data))

    def _forget_translations(self, address, size):
        """Unicorn keeps the code it translated until the guest stores over it (or, on
        several cores, not even then: see emu.run.parallel); bytes the host writes over code
        would run stale, silently. Over code, every core's translations of
        [address, address + size) go."""
        end = address + size
        if self._ran_code_in(address, end):
            for uc in self.cpus:
                uc.ctl_remove_cache(address, end)

    def _ran_code_in(self, address, end):
        """Does [address, end) overlap the code region, or the span of code the cores ran
        outside it (emu.hw.cache.S_FOREIGN_LO/HI)?"""
        if self.code_base < end and address < self.code_base + self.code_size:
            return True
        # the two words as Python ints: a kernel writes guest memory thousands of times a
        # run, and numpy's scalars compare several times slower
        at = self._foreign_at
        lo, hi = self.state[at:at + 2].tolist()       # S_FOREIGN_LO, S_FOREIGN_HI
        return lo < end and address < hi

    def read(self, address, size):
        if self._ram_low <= address and address + size <= self._ram_end and size >= 0:
            return bytes(self._ram_view[address:address + size])
        return bytes(self.uc.mem_read(address, size))       # not RAM: Unicorn says why

    def read_word(self, address, size=4):
        if self._ram_low <= address and address + size <= self._ram_end and size >= 0:
            unpack = self._unpack_word.get(size)
            if unpack is not None:
                return unpack(self._ram_view, address)[0]
            return int.from_bytes(self._ram_view[address:address + size], self._byte_order)
        return int.from_bytes(self.read(address, size), self._byte_order)

    def read_words(self, address, count, stride=4):
        """``[read_word(address + stride * i) for i in range(count)]`` in one read of guest
        memory (a directory page's entries: a kernel's walk of a whole table)."""
        if count <= 0:
            return []
        if stride % 4:
            return [self.read_word(address + stride * i) for i in range(count)]
        raw = self.read(address, stride * (count - 1) + 4)
        order = ">" if self._byte_order == "big" else "<"
        return np.frombuffer(raw, order + "u4")[::stride // 4].tolist()

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
            self.next_code = -(-self.next_code // align) * align
        base = self.next_code if at is None else at
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
                             bool(self.profile.memory.store_buffer),
                             self.profile.memory.broadcasts,
                             self._posted_barriers(), program.symbols.values())
        specials = [sp for sp in tables.specials
                    if self.soft_tlb or sp.op not in cost.SOFT_TLB_OPS]
        if len(self._specials) + len(specials) > MAX_SPECIALS:
            raise MemoryError(f"{program.filename}: {len(specials)} cache-maintenance and "
                              f"special instructions, {len(self._specials)} loaded before: "
                              f"a Machine takes at most {MAX_SPECIALS}")
        self.extable.add(program)          # checks the program's __ex_table, if it has one
        self._write_bytes(program.base, bytes(program.code))     # its tables follow
        if at is None:
            self.next_code = -(-end // 64) * 64
        elif self.soft_tlb:
            self.soft_tlb.installed |= {v for v in self.soft_tlb.vectors.values()
                                        if program.base <= v < end}
        # the program's instructions replace what was there (at offset + 1: see emu.hw.cost)
        lo = program.base - self.code_base
        hi = lo + len(program.code)
        self._starts[lo + 1:hi + 1] = tables.starts
        self._cycles[lo + 1:hi + 1] = tables.cycles
        self._syncs[lo + 1:hi + 1] = tables.syncs
        self._writes[lo + 1:hi + 1] = tables.writes
        self.cost_reads.load(lo, tables)
        self._loaded_top = max(self._loaded_top, hi)
        # what the scheduler learned about the code that was here before is void
        dynamic = self.state[c.H_SYNC_DYNAMIC]
        self.state[dynamic + lo:dynamic + lo + len(program.code)] = 0
        self._specials += specials       # (machines without a software-loaded TLB ignore
        hooked = [sp for sp in specials if not sp.scope & cost.AT_ACCESS]     # its ones;
        for first, last in special_spans(hooked, tables.starts, program.base):   # the rest:
            for uc in self.cpus:                                           # memory hook)
                self._hooks.append(native.add_hook(uc, UC_HOOK_CODE, native.special_hook,
                                                   self.state, first, last))
        self._tables_from = lo if self._tables_from is None else min(self._tables_from, lo)
        if not self._loading:
            self.tables_up_to_date()
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
        for s in program.statements:
            if s.kind == "insn" and s.body.split()[0].lower().rstrip("wlq") in HOST_RANDOM:
                raise AssemblyError(
                    f"{s.body.split()[0]} would read the host's random number generator, and "
                    "runs would differ: the model has none (load a seed as data instead)",
                    program.filename, s.lineno, s.line)

    def _hook_foreign_code(self):
        """x86 code outside the loaded programs has no cost tables, and its instruction
        lengths are unknown to the block hook: a native hook on each of its instructions
        counts and charges them (emu/hw/model/hooks.c, foreign_insn_hook). It covers the
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

    @contextlib.contextmanager
    def loading(self):
        """Several loads, with the code's cost tables summed once at the end: each load on
        its own re-sums them from its start to the end of the loaded code, so a kernel that
        loads its exception vectors below its routines summed them once a vector. A call
        inside the block brings them up to date first."""
        self._loading += 1
        try:
            yield self
        finally:
            self._loading -= 1
            if not self._loading:
                self.tables_up_to_date()

    def tables_up_to_date(self):
        """Sum the cost tables from the lowest code offset loaded since they last were (every
        way of running guest code calls this first; and so the runs' instruction costs are
        recorded as read where they run: emu.run.costreads)."""
        self.cost_reads.begin_run()
        if self._tables_from is not None:
            lo, self._tables_from = self._tables_from, None
            self._update_tables(lo)

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
        st[c.H_AT_ACCESS_N] = sum(1 for s in table if s.scope & cost.AT_ACCESS)

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

    def uncharge_faulted(self, error):
        """A run (uc.emu_start) ended by ``error``, a UcError: if a data access faulted in
        the block being run, take back what the block hook charged for the instructions
        from the faulting one to the block's end (they did not run; a resumed run counts
        them again). Machine.call does it itself (emu/hw/model/call.c); a caller that runs
        Unicorn directly and resumes after a fault calls this first."""
        pc = self.uc.reg_read(PC_REGISTERS[self.isa])
        if self.isa != "ppc64":
            pc &= 0xFFFFFFFF
        native.lib.emu_uncharge_faulted(native.address(self.state), pc, error.errno)

    def resume_after_fault(self):
        """A run (of the running core, ``self.uc``) stopped on Unicorn's error: the PC it goes
        on at (the ``storage_interrupt`` handler's, else a listed access's fixup:
        emu.run.extable), or None: the fault is the call's error. Machine.call and
        run_parallel ask it (a task of run_tasks handles its core's faults in its Python)."""
        pc = self.storage_interrupt() if self.storage_interrupt else None
        return self.extable.resume(self) if pc is None else pc

    def flush_caches(self):
        """Empty every cache (as after a full write-back and invalidate) and forget the
        prefetcher's streams: a cold start, the same whatever ran before it (the streams
        trained by earlier calls had made a cold call's prefetches, and cycles, depend on
        them: Yoshioka's cold checkpoint walk right after a commit took 5,150 cycles, the
        same walk cold after another walk 5,638). The TLBs are kept."""
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
        self.model.forget_prefetch_streams()
        self.model.drain_memory_system()

    def call(self, entry, *args, limit=None, cold=False, real_mode=False):
        """Call a routine by symbol (or address) with integer arguments; returns a Run.

        ``cold``: flush_caches first (every cache empty, the prefetcher's streams forgotten,
        the TLBs kept), so that the run does not depend on the calls before it.

        ``real_mode``: on a software-loaded TLB (ppc603e, ppc405gp with ``mmu=True``), start
        with MSR[IR|DR] off instead of on (no TLB look-ups, as exception handlers run).

        Called from a task of ``emu.run.parallel.run_tasks``, the call runs on that task's
        core, in simulated time with the other cores' (its Run counts this call only)."""
        task = parallel.current_task()
        if task is not None and task.machine is self:
            if cold or real_mode:
                raise ValueError("a call from a task of run_tasks cannot be cold or in real "
                                 "mode: the other cores run on")
            return task.call_here(entry, args, limit)
        pc = self.address_of(entry)
        self.tables_up_to_date()
        if cold:
            self.flush_caches()
        limit = capped(self.instruction_limit if limit is None else check_limit(limit))
        self.stop_record = None
        guest = self.guest
        count = guest.arguments(args, self.stack_top, self._write_stack)
        if self.soft_tlb:
            self.soft_tlb.start(translate=not real_mode)
        elif real_mode:
            raise ValueError("real_mode applies to software-loaded TLBs (Machine(mmu=True) on "
                             "ppc603e or ppc405gp)")
        self.extable.taken.clear()
        # the counters cleared, the limit set, the run and its counts, in one library call
        layout, block = self._call_plan()
        error = guest.run(self.uc, pc, count, limit, block)
        while error:
            pc = self.resume_after_fault()
            if pc is None:
                raise diagnose.describe_fault(self, UcError(error)) from None
            error = guest.run(self.uc, pc)
        if guest.stop & STOP_REASONS or self.stop_record is not None or self.soft_tlb:
            diagnose.raise_stop(self)
        if guest.pc != HALT and not guest.stop & STOP_ASKED:
            raise diagnose.halted(self, guest.pc)     # no one stopped it: the guest halted
        counts = Counts(layout, guest.gathered[:],      # a copy: the next call gathers anew
                        self.soft_tlb.events() if self.soft_tlb else None)
        return run_of(self, entry, args, guest.returned, counts)

    def call_untranslated(self, entry, *args):
        """``call`` with the MMU model's look-ups off for the call, as inside
        ``mmu.translation_off()`` (a kernel's own routines, many a run: the same words
        written, without the registers' objects a ``with`` makes each time)."""
        st = self.state
        saved = int(st[c.H_MMU])
        st[c.H_MMU] = 0
        try:
            return self.call(entry, *args)
        finally:
            st[c.H_MMU] = saved

    def _call_plan(self):
        """The running core's CountLayout and call block (GuestRuns.block), made once."""
        running = self.model.running
        plan = self._call_plans.get(running)
        if plan is None:
            layout = count_layout(self, running)
            plan = self._call_plans[running] = (
                layout, self.guest.block(self.model.clearing(), layout.words,
                                         layout.counting))
        return plan

    def _call_plan_of(self, core):
        """``_call_plan`` of ``core``, whichever core's header is live (made with its
        header live: its call block's words are placed for that)."""
        plan = self._call_plans.get(core)
        if plan is None:
            self.model.switch(core)
            plan = self._call_plan()
        return plan

    def run_tasks(self, tasks, quantum=DEFAULT_QUANTUM, limit=None):
        """Run one Python function per core at once (emu.run.parallel.run_tasks): each gets its
        Task; its guest calls (``task.call`` or ``machine.call`` from its Python) run on its
        core in simulated time, and ``task.spend(cycles)`` lets time pass there."""
        return parallel.run_tasks(self, tasks, quantum,
                                  None if limit is None else check_limit(limit))

    def run_parallel(self, calls, quantum=DEFAULT_QUANTUM, limit=None, cold=False):
        """Run one call per core at the same time: ``calls`` = [(entry, arg, ...), ...],
        call k on core k (None: core k stays idle), each with its own stack. Returns a
        ParallelRun (one Run per core).

        Time is simulated and causal (emu.run.parallel explains how): the core furthest behind
        runs next; synchronising blocks (atomics, serialising instructions, blocks where
        cores shared a line) run in the order of the cores' clocks; a core never sees a
        store before it was made; a spinning core waits, parked, for the store it spins
        on. ``quantum``: how many cycles a core may run ahead of the others in code that
        does not synchronise (it bounds the error of a first encounter with a shared line,
        and trades it for speed). Cores share RAM and the levels below L1; their L1 D
        caches are kept coherent (emu.hw.cache.snoop). Code one core stores is not
        re-translated by the other cores' emulators: cross-modifying code is not modelled."""
        if limit is not None:
            limit = check_limit(limit)
        if len(self.cpus) == 1:
            return parallel.run_alone(self, calls, quantum, limit, cold)
        return parallel.run_parallel(self, calls, quantum, limit, cold)

    # ---------------------------------------------------------------- registers

    @property
    def mmu(self):
        """The MMU's registers (SDR1 and segments, the SLB, TTBR0, the soft TLB's SPRs: the
        architecture's, emu.hw.mmu and emu.hw.hash64)."""
        return self._mmu_registers(self)

    def pc(self):
        """The running core's PC."""
        return read_register(self.uc, PC_REGISTERS[self.isa])

    def return_value(self):
        return read_register(self.uc, RETURN_REGISTERS[self.isa])

    def instruction_at(self, pc):
        """The instruction at ``pc``, as text."""
        return diagnose.instruction_at(self, pc)

    def cores_for(self, core):
        """The cores a register set-up applies to: ``core``, or every core (None); from a
        task of ``emu.run.parallel.run_tasks``, None is the task's own core."""
        if core is None:
            task = parallel.current_task()
            if task is not None and task.machine is self:
                return (task.core,)
            return range(len(self.cpus))
        if not 0 <= core < len(self.cpus):
            raise ValueError(f"core {core} does not exist (the machine has {len(self.cpus)})")
        return (core,)

