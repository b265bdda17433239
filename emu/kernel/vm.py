"""The generic Linux VM, modelled in Python: pages, the page cache, VMAs, address spaces,
page faults, copy-on-write, fork, exec, mmap, munmap and exit.

The data structures live where the kernel keeps them when the architecture code reads them:
the page tables are in guest RAM, laid out as the backend's kernel lays them out (``Arch``:
by default PPC32's pgd page of 1024 entries pointing to PTE pages of 1024 four-byte Linux
PTEs; the 64-bit backend's pgd, pmd and PTE pages of 512 eight-byte PTEs), so the guest
``hash_page`` walks them and the guest flush routines scan them. This module speaks one
Linux PTE format, PPC32's bits (below); a backend whose kernel uses other bits translates
when it reads and writes a PTE (``Arch.read_pte`` / ``write_pte``). Page contents are in
guest RAM too (the guest ``clear_page`` and ``copy_page`` work on them). The rest (``struct
page`` fields, VMAs, the page cache index) is Python.

Costs: every architecture routine is guest assembly, measured (see the backend, e.g.
``emu.kernel.ppc32``); every generic C path is a documented fixed cost
(``emu.kernel.costs``). A ``Ledger`` records both, per routine, plus event counts.

What is simplified, and said so: user-space instructions are not run: a process "touches"
a page (``Kernel.touch``), which looks up the Linux PTE, takes the page fault if the PTE
does not allow the access, and otherwise asks the backend whether the hardware would
translate (for the hashed MMU: is there an HPTE?) and runs its miss handler if not. On a
software-loaded TLB (``Arch.tlb_decides``, the 405 and the 603) the order is the
hardware's: the TLB first, the guest miss handler on a miss (it reads the Linux PTE or a
hash table), the fault path when the handler finds no PTE or the entry forbids the
access. Those touches do not go through the cache model, and the hardware table walk of a
user access is not charged. No swap, no readahead, the I/O that fills the page cache is
free (the files LMBench uses stay cached).

Several CPUs (a Kernel on ``Machine(cores=N)``): each CPU runs its own Python, as a task of
``emu.parallel.run_tasks``; its guest routines run on its core in simulated time with the
others', the fixed costs of its generic paths pass on its clock, and the ledger, the
current process and the backend's loaded context are per CPU (``cpu()``, ``PerCPU``). The
kernel then takes its spin locks as guest code (routines/<isa>/spinlock.S, after the
era's kernel), where Linux 2.6.0 takes them: ``mm->page_table_lock`` around the page-table
walk of a fault and around setting its PTE (dropped while a page is allocated, cleared,
copied or read), around fork's copy of each VMA (both mms) and around unmapping (the zap
and the TLB flush); a file's ``mapping->page_lock`` around the page-cache lookup and
insertion. Other locks (tasklist_lock, the dcache, the page allocator's zone lock, which
the per-CPU free lists mostly avoid) are not modelled, and their paths stay fixed costs.
The hashed page table's own locks are the backend's guest code (emu.kernel.ppc64: the
HPTE lock bit and the tlbie lock of 2.5/2.6, or 2.4's global hash_table_lock); tlbie
itself is serialised machine-wide by the profile's [smp] list. On the Cortex-A9 the page
lock (lock_page, unlock_page) is guest code too (emu.kernel.arm: Yun 2011's PK2).
Python's own data structures change only between guest calls, one CPU at a time.
``vfork`` starts a child that shares its parent's address space until it execs or exits
(mmput drops the last user's), as GNU make and gcc's driver start theirs.
"""
from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

from .. import cache as c
from ..parallel import current_task
from . import costs as cost_table

PAGE_SIZE = 4096
PAGE_SHIFT = 12
PTRS_PER_PTE = 1024
PGDIR_SHIFT = 22                       # one pgd entry (one PTE page) maps 4 MB
TASK_SIZE = 0x80000000                 # PPC32 default user address-space size (2.6)
TASK_UNMAPPED_BASE = TASK_SIZE // 8 * 3    # where mmap looks first (include/asm-ppc)
STACK_TOP = TASK_SIZE

# Linux PTE bits of the "classic" hashed 32-bit PowerPC (include/asm-ppc/pgtable.h,
# CONFIG_6xx, Linux 2.6; include/asm-powerpc/pte-hash32.h later)
_PAGE_PRESENT = 0x001     # software: the PTE holds a translation
_PAGE_HASHPTE = 0x002     # hash_page has made an HPTE for this PTE
_PAGE_USER = 0x004        # user access allowed
_PAGE_GUARDED = 0x008     # G
_PAGE_COHERENT = 0x010    # M
_PAGE_NO_CACHE = 0x020    # I
_PAGE_WRITETHRU = 0x040   # W
_PAGE_DIRTY = 0x080       # C: changed
_PAGE_ACCESSED = 0x100    # R: referenced
_PAGE_EXEC = 0x200        # software: exec allowed (used by the exec-fault flush policy)
_PAGE_RW = 0x400          # software: user write allowed
_PAGE_BASE = _PAGE_PRESENT | _PAGE_ACCESSED     # mk_pte's base: new PTEs are young
PTE_PFN_MASK = 0xFFFFF000

# VMA flags (include/linux/mm.h)
VM_READ, VM_WRITE, VM_EXEC, VM_SHARED = 0x1, 0x2, 0x4, 0x8
VM_GROWSDOWN = 0x100
PROT = {"r": VM_READ, "w": VM_WRITE, "x": VM_EXEC}


class SegmentationFault(Exception):
    """A user access the kernel would answer with SIGSEGV: names the address and why."""

    def __init__(self, address, reason):
        super().__init__(f"segmentation fault at {address:#010x}: {reason}")
        self.address, self.reason = address, reason


class KernelError(ValueError):
    """A bad request to the model (e.g. munmap of a range that is not mapped)."""


# ------------------------------------------------------------------------ the CPU

def cpu():
    """The CPU the kernel model's code runs for: a task's core in a run of several cores
    (emu.parallel.run_tasks), else 0."""
    task = current_task()
    return task.core if task is not None else 0


class PerCPU:
    """A value each CPU has its own of (a descriptor: ``current = PerCPU()``); a CPU that
    has not set it reads ``default()`` (None if no default is given)."""

    def __init__(self, default=None):
        self.default = default

    def __set_name__(self, owner, name):
        self.name = "_percpu_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        values = obj.__dict__.setdefault(self.name, {})
        k = cpu()
        if k not in values:
            if self.default is None:
                return None
            values[k] = self.default()
        return values[k]

    def __set__(self, obj, value):
        obj.__dict__.setdefault(self.name, {})[cpu()] = value


# ------------------------------------------------------------------------ the ledger

class Ledger:
    """Cycles per routine (guest routines measured, generic paths fixed) and event counts,
    per CPU (each CPU's are those of the code that ran for it). On a machine of several
    cores a generic path's fixed cycles also pass on the CPU's clock (Task.spend)."""

    rows = PerCPU(dict)         # name -> [kind, calls, cycles, instructions]
    counts = PerCPU(Counter)
    # what the measured guest runs did to the caches and memory: per cache level its misses
    # ("L1D_misses"), "memory_reads" (line fills) and "memory_writes", "uncached_stores"
    traffic = PerCPU(Counter)

    def __init__(self, table=None):
        self.table = table or cost_table.TABLE

    def _book(self):
        return self.rows, self.counts, self.traffic

    def _add(self, name, kind, calls, cycles, instructions=0):
        row = self._book()[0].setdefault(name, [kind, 0, 0, 0])
        row[1] += calls
        row[2] += cycles
        row[3] += instructions

    def fixed(self, name, times=1):
        """Charge the generic path ``name`` (``times`` passes) from the fixed-cost table."""
        if times:
            cycles = cost_table.cycles(name, self.table) * times
            self._add(name, "fixed", times, cycles)
            task = current_task()
            if task is not None:
                task.spend(cycles)

    def guest(self, name, run):
        """Charge one measured guest routine run (and note its cache and memory traffic)."""
        self._add(name, "guest", 1, run.cycles, run.instructions)
        traffic = self._book()[2]
        for level, stats in run.caches.items():
            traffic[f"{level}_misses"] += stats["misses"]
        traffic["memory_reads"] += run.memory["reads"]
        traffic["memory_writes"] += run.memory["writes"]
        traffic["uncached_stores"] += run.events.get("uncached_stores", 0)
        # cycles spent waiting for a shared controller (the PL310's queue): an event count
        self.count("outer_cache_wait_cycles", run.events.get("outer_cache_wait", 0))

    def count(self, event, n=1):
        if n:
            self._book()[1][event] += n

    @property
    def cycles(self):
        return sum(r[2] for r in self._book()[0].values())

    def snapshot(self):
        rows, counts, traffic = self._book()
        copy = Ledger(self.table)
        copy.rows = {k: list(v) for k, v in rows.items()}
        copy.counts = Counter(counts)
        copy.traffic = Counter(traffic)
        return copy

    def since(self, before):
        """What was charged (on this CPU) after the snapshot ``before``."""
        diff = Ledger(self.table)
        self._book()
        for name, (kind, calls, cycles, insns) in self.rows.items():
            b = before.rows.get(name, [kind, 0, 0, 0])
            if calls - b[1]:
                diff.rows[name] = [kind, calls - b[1], cycles - b[2], insns - b[3]]
        diff.counts = Counter({k: v - before.counts.get(k, 0) for k, v in self.counts.items()
                               if v - before.counts.get(k, 0)})
        diff.traffic = Counter({k: v - before.traffic.get(k, 0)
                                for k, v in self.traffic.items()
                                if v - before.traffic.get(k, 0)})
        return diff

    def breakdown(self):
        """Per routine: kind (guest/fixed), calls, cycles, instructions (guest), share."""
        import pandas as pd
        total = self.cycles or 1
        rows = [{"routine": name, "kind": kind, "calls": calls, "cycles": cycles,
                 "instructions": insns if kind == "guest" else None,
                 "share": cycles / total}
                for name, (kind, calls, cycles, insns) in self.rows.items()]
        df = pd.DataFrame(rows, columns=["routine", "kind", "calls", "cycles", "instructions",
                                         "share"])
        return df.sort_values("cycles", ascending=False).set_index("routine")


# ------------------------------------------------------------------------ physical pages

@dataclass(eq=False)
class Page:
    """struct page: where the frame is, who holds it, and PG_arch_1."""
    pfn: int
    count: int = 0            # references (page cache, mappings, the kernel)
    mapcount: int = 0         # PTEs mapping it
    arch_1: bool = False      # PG_arch_1: on PPC, "the I-cache is clean for this page"
    reserved: bool = False    # PageReserved (the zero page): never counted, never flushed
    kind: str = "free"        # anon, pagecache, pgtable, zero, arg
    mapping: object = None    # the File of a page-cache page
    index: int = 0            # its page index in the file

    @property
    def address(self):
        return self.pfn << PAGE_SHIFT


class PageAllocator:
    """Physical page frames in a region of guest RAM; a LIFO free list, like the per-CPU hot
    list (a page freed is the next one handed out)."""

    def __init__(self, machine, frames):
        self.base = machine.alloc(frames * PAGE_SIZE)
        self.frames = frames
        self.pages = {}
        self.free_list = [(self.base >> PAGE_SHIFT) + i for i in reversed(range(frames))]

    def alloc(self, kind):
        if not self.free_list:
            raise MemoryError(f"the model's {self.frames} page frames are all in use")
        pfn = self.free_list.pop()
        page = Page(pfn, count=1, kind=kind)
        self.pages[pfn] = page
        return page

    def free(self, page):
        if page.reserved:
            return
        if page.pfn not in self.pages:
            raise KernelError(f"page frame {page.pfn:#x} freed twice")
        del self.pages[page.pfn]
        page.kind = "free"
        self.free_list.append(page.pfn)

    def page(self, pfn):
        return self.pages[pfn]

    @property
    def in_use(self):
        return len(self.pages)


# ------------------------------------------------------------------------ files

@dataclass(eq=False)
class File:
    """A file whose pages the page cache holds; its bytes are a deterministic pattern."""
    name: str
    pages: int

    def content(self, index):
        tag = f"{self.name}:{index}:".encode()
        return (tag * (PAGE_SIZE // len(tag) + 1))[:PAGE_SIZE]


class PageCache:
    """(file, index) -> Page; a page is read in on first use."""

    def __init__(self):
        self.pages = {}

    def __len__(self):
        return len(self.pages)

    def lookup(self, file, index):
        return self.pages.get((id(file), index))

    def add(self, file, index, page):
        self.pages[(id(file), index)] = page


# ------------------------------------------------------------------------ address spaces

@dataclass(eq=False)
class VMA:
    """vm_area_struct: [start, end), flags, and the file + page offset (None: anonymous)."""
    start: int
    end: int
    flags: int
    file: File | None = None
    pgoff: int = 0
    name: str = ""

    @property
    def shared(self):
        return bool(self.flags & VM_SHARED)

    def file_index(self, address):
        return self.pgoff + ((address - self.start) >> PAGE_SHIFT)

    def __repr__(self):
        prot = "".join(ch if self.flags & bit else "-" for ch, bit in
                       (("r", VM_READ), ("w", VM_WRITE), ("x", VM_EXEC)))
        prot += "s" if self.shared else "p"
        return f"VMA({self.start:#010x}-{self.end:#010x} {prot} {self.name})"


class MM:
    """mm_struct: the VMAs, the pgd page in guest RAM, and the MMU context (VSIDs)."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.vmas: list[VMA] = []
        self.pgd = kernel.arch.pgd_alloc(kernel)
        self.context = kernel.arch.new_context()
        self.users = 1
        self.page_table_lock = kernel.lock_word()     # 0 on one CPU: no locks

    def find_vma(self, address):
        for vma in self.vmas:
            if vma.start <= address < vma.end:
                return vma
        return None

    def insert_vma(self, vma):
        for other in self.vmas:
            if vma.start < other.end and other.start < vma.end:
                raise KernelError(f"{vma} overlaps {other}")
        self.vmas.append(vma)
        self.vmas.sort(key=lambda v: v.start)

    def get_unmapped_area(self, length, base=TASK_UNMAPPED_BASE):
        """First fit from TASK_UNMAPPED_BASE up (2.6's bottom-up arch_get_unmapped_area)."""
        address = base
        for vma in self.vmas:
            if vma.end <= address:
                continue
            if address + length <= vma.start:
                break
            address = max(address, vma.end)
        if address + length > TASK_SIZE:
            raise KernelError(f"no room for {length:#x} bytes below TASK_SIZE")
        return address

    # -- the page table in guest memory, shaped by the backend (Arch.table_levels)
    def pte_page(self, address):
        """Physical address of the PTE page covering ``address`` (0: none): down the
        directory levels from the pgd."""
        arch, machine = self.kernel.arch, self.kernel.machine
        table = self.pgd.address
        for depth in range(len(arch.table_levels)):
            entry = machine.read_word(arch.dir_slot(depth, table, address))
            if not entry:
                return 0
            table = arch.dir_table(depth, entry)
        return table

    def ptep(self, address):
        """Address of the Linux PTE for ``address``, or None if there is no PTE page."""
        table = self.pte_page(address)
        if not table:
            return None
        arch = self.kernel.arch
        return table + ((address >> PAGE_SHIFT) & ((1 << arch.pte_index_bits) - 1)) * \
            arch.pte_bytes

    def pte(self, address):
        """The Linux PTE value for ``address`` (0 if none), in this module's bits."""
        ptep = self.ptep(address)
        return self.kernel.arch.read_pte(ptep) if ptep else 0


@dataclass(eq=False)
class Process:
    pid: int
    name: str
    mm: MM
    parent: "Process | None" = None
    children: list = field(default_factory=list)
    exited: bool = False

    def __repr__(self):
        return f"Process({self.pid}, {self.name!r})"


# ------------------------------------------------------------------------ the backend API

class Arch:
    """What the generic VM asks of an architecture. Each method runs guest assembly on the
    machine and charges it to the ledger (``call``); a backend for another MMU (the 603's
    software-loaded TLB, the 405, ARM, x86) implements the same methods.

    * ``clear_page(address)``, ``copy_page(dst, src)``: page operations;
    * ``flush_dcache_icache(address)``: make the I-cache coherent for one page;
    * ``new_context()``, ``switch_mm(mm)``: address-space identifiers and their loading;
    * ``translates(mm, address, write)``: would the hardware translate the access without
      the kernel (TLB / hash-table hit)?
    * ``tlb_miss(mm, address, write)``: the kernel's miss handler when it would not
      (``hash_page``; a software-TLB reload); False if the Linux PTE does not allow it;
    * ``preload(mm, address, pte_page)``: update_mmu_cache's MMU part (add_hash_page);
    * ``flush_ptes(mm, address, pte_page, count)``: invalidate the hardware translations
      of ``count`` consecutive Linux PTEs of one PTE page (flush_hash_pages; tlbie);
    * ``has_hashpte(pte)``: does this Linux PTE say a hardware entry may exist?

    The page-table tree is the backend's kernel's: ``table_levels`` (the directory levels
    above the PTE pages), ``dir_bytes`` (the size of a directory entry), ``pte_index_bits``,
    ``pte_bytes``, ``dir_entry`` / ``dir_table`` (what a directory entry holds),
    ``populate`` (pmd_populate: store it), ``pgd_alloc`` / ``pgd_free``, ``new_table`` (the
    backend's work on a new table page) and ``read_pte`` / ``write_pte`` (the PTE in this
    module's bits); the defaults are PPC32's. A backend whose scan runs in guest code sets
    ``walks_flush_ranges`` and implements ``flush_range(mm, start, end)``; ``flush_pending(mm,
    addresses)`` flushes the batched strategy's recorded addresses (default: one flush_ptes
    each).

    A backend lists the Kernel TLB flush strategies it supports (``tlb_flush_strategies``,
    the first is the default). One whose strategy is ``tlbia`` (a software-loaded TLB with no
    hash table, Linux 4xx) also implements ``flush_tlb_page(mm, address)`` and
    ``flush_tlb_all()``; one whose strategy is ``asid`` (ARMv7) implements
    ``flush_tlb_page``, ``flush_tlb_range(mm, start, end)`` and ``flush_tlb_mm(mm)``. A
    backend names the I-cache policy its kernel uses (``default_policy``, taken when the
    Kernel is given none). ``flush_tlb_page_nohash(mm, address)`` (after a fault widened a
    PTE's permissions) and ``destroy_context(mm)`` default to nothing. A backend with
    ``tlb_decides`` implements ``probe(mm, address, access)``: 'hit', 'miss' or
    'protection' (an entry exists but forbids the access), see ``Kernel.touch``; its
    ``tlb_miss_for(mm, address, access)`` runs the miss handler for that access (default:
    ``tlb_miss``; the 603 has separate instruction and data handlers), and
    ``storage_interrupt(mm, address, access)`` may fix a 'protection' verdict without
    do_page_fault (default: it does not; a hashed 603 runs hash_page, as Linux's DSI path did).
    """

    name = "abstract"
    has_exec_permission = False
    tlb_flush_strategies = ("scan", "immediate", "batched")
    tlb_decides = False
    # The Linux page-table tree (PPC32, include/asm-ppc/pgtable.h 2.6): the directory levels
    # above the PTE pages, each (shift, index bits) with four-byte entries, here one pgd of
    # 1024 entries, each the physical address of a PTE page of 1024 four-byte PTEs (4 MB).
    table_levels = ((PGDIR_SHIFT, 10),)
    dir_bytes = 4
    pte_index_bits = 10
    pte_bytes = 4
    # the scan strategy walks ranges in guest code (flush_range) instead of calling
    # flush_ptes per PTE page
    walks_flush_ranges = False
    default_policy = "lazy"

    current = PerCPU()       # the mm whose context a CPU has loaded (backends keeping one)
    # what the scan strategy does with a zapped PTE that has an HPTE (Kernel._zapped_hashpte):
    # "entry" (flush it at once), "gather" (batch it for tlb_flush), None (2.4's flush of the
    # whole range after the zap, and backends without a hash table)
    zap_flush = None

    def __init__(self, machine, ledger):
        self.machine, self.ledger = machine, ledger

    def call(self, entry, *args):
        run = self.machine.call(entry, *args)
        self.ledger.guest(entry, run)
        return run.return_value

    # A kernel of several CPUs takes spin locks (routines/<isa>/spinlock.S, loaded then).
    def load_spin_locks(self):
        from .. import routine
        self.machine.load(routine(f"{self.machine.isa}/spinlock.S"))

    def lock(self, address):
        self.call("spin_lock", address)

    def unlock(self, address):
        self.call("spin_unlock", address)

    # The page routines every backend loads under these names (routines/<isa>/*.S); a
    # kernel of another era may clear pages with its own routine (``clear_routine``).
    clear_routine = "clear_page"

    def clear_page(self, address):
        self.call(self.clear_routine, address)

    def copy_page(self, dst, src):
        self.call("copy_page", dst, src)

    def flush_dcache_icache(self, address):
        """__flush_dcache_icache: dcbst each line, sync, icbi each line, sync, isync."""
        self.call("flush_dcache_icache", address)

    def lock_page(self, kernel, page):
        """lock_page of a page-cache page a fault maps, or of an anonymous page do_wp_page
        looks at: the page lock's guest code. None here: the backends of the 2.4 and 2.6.0
        chapters charge the page lock nothing (their kernels' lock is not on the paths
        they study); the ARM backend runs it (Yun 2011's PK2 is in unlock_page)."""

    def unlock_page(self, kernel, page):
        """unlock_page, after lock_page (see there)."""

    @property
    def pte_page_shift(self):
        """log2 of the bytes one PTE page maps."""
        return PAGE_SHIFT + self.pte_index_bits

    def dir_slot(self, depth, table, address):
        """Where, in the directory ``table`` (level ``depth``), the entry for ``address`` is."""
        shift, bits = self.table_levels[depth]
        return table + ((address >> shift) & ((1 << bits) - 1)) * self.dir_bytes

    def dir_entry(self, depth, table):
        """The directory entry (level ``depth``) that points to the page ``table``."""
        return table

    def dir_table(self, depth, entry):
        """The page a directory entry (level ``depth``) points to."""
        return entry

    def populate(self, depth, slot, table):
        """pmd_populate / pgd_populate: the directory entry at ``slot`` (level ``depth``)
        points at the new, zeroed table page ``table``."""
        self.machine.write(slot, self.dir_entry(depth, table).to_bytes(4, "big"))

    def pgd_alloc(self, kernel):
        """A new address space's top-level table: one zeroed page (a Page)."""
        return kernel._alloc_table_page("pgd_alloc")

    def pgd_free(self, kernel, pgd):
        kernel._put_page(pgd)

    def new_table(self, page, what):
        """The backend's own work on a new, zeroed page-table page ("pte_alloc",
        "pmd_alloc"): by default none."""

    def read_pte(self, ptep):
        """The Linux PTE at ``ptep``, in the generic VM's (PPC32) bits."""
        return self.machine.read_word(ptep)

    def write_pte(self, ptep, value):
        """Store a Linux PTE given in the generic VM's bits."""
        self.machine.write(ptep, (value & 0xFFFFFFFF).to_bytes(4, "big"))

    def flush_pending(self, mm, addresses):
        """The batched strategy's flush of the recorded addresses of ``mm``: one
        flush_ptes per address (a backend may do them in one go)."""
        for address in addresses:
            table = mm.pte_page(address)
            if table:
                self.flush_ptes(mm, address, table, 1)

    def flush_tlb_page_nohash(self, mm, address):
        """A fault changed the PTE of ``address`` in place (exec permission, young, dirty):
        drop a TLB entry made from the old one. The hashed MMU model keeps no TLB: nothing."""

    def destroy_context(self, mm):
        """The address space is gone: its context may be reused."""

    # what switch_mm loads, named in the error when a backend that keeps ``self.current``
    # (the mm switch_mm loaded last) is asked to work for another address space
    loaded_context = "context"

    @staticmethod
    def _require_mmu(machine, isa, mode, who, cpu, model):
        """Refuse a machine other than ``isa`` with the hardware-walked MMU model ``mode``."""
        on = machine.state[c.H_MMU]
        if machine.isa != isa or on != mode:
            raise ValueError(f"the {who} backend needs Machine('{cpu}', mmu=True) ({model}), "
                             f"not {machine.profile.name} ({machine.isa}"
                             f"{', MMU model on' if on else ''})")

    @staticmethod
    def _require_soft_tlb(machine, kind, who, cpu):
        """The machine's software-loaded TLB ``kind`` ('603', '405'); any other is refused."""
        soft = machine.soft_tlb
        if soft is None or soft.kind != kind:
            raise ValueError(f"the {who} backend needs Machine('{cpu}', mmu=True), not "
                             f"{machine.profile.name}"
                             f"{' with mmu=True' if soft else ' without the MMU model'}")
        return soft

    def _require_current(self, mm, what):
        if mm is not getattr(self, "current", None):
            raise KernelError(f"{what} for an address space whose {self.loaded_context} "
                              "is not loaded: switch_mm (Kernel.switch_to) first")

    def tlb_miss_for(self, mm, address, access):
        """A software-loaded TLB missed on ``access`` ('r', 'w', 'x'): its miss handler."""
        return self.tlb_miss(mm, address, access == "w")

    def storage_interrupt(self, mm, address, access):
        """The TLB entry forbids ``access``: True if the architecture's storage-interrupt
        path fixed it without do_page_fault (the access is then retried)."""
        return False


# ------------------------------------------------------------------------ the kernel

TLB_FLUSH_STRATEGIES = ("scan", "immediate", "batched", "tlbia", "asid")   # all backends'


class Kernel:
    """The generic VM on one machine (of one CPU or several), with an architecture backend, an I-cache flush policy
    (``emu.kernel.policy``: eager, lazy, lazy_exec, sync_exec; None: the backend's) and a
    TLB/hash flush strategy:

    * ``scan`` (Linux 2.4-2.5 PPC32): changing a Linux PTE leaves _PAGE_HASHPTE in it;
      flush_tlb_range / flush_tlb_mm scan the Linux PTEs of the range (of every VMA) and
      flush_hash_pages invalidates the HPTEs of those with the bit set;
    * ``immediate``: the HPTE is invalidated when its Linux PTE is changed (the rmap
      information gives mm and address); the flush routines have nothing left to do;
    * ``batched``: the changed (mm, address) pairs are recorded and the flush routines
      invalidate just those (Mackerras 2003 section 4.2);
    * ``tlbia`` (Linux 4xx, include/asm-ppc/tlbflush.h): no hash table and no
      "entry exists" bit in the PTE: flush_tlb_range and flush_tlb_mm empty the whole TLB,
      flush_tlb_page invalidates the one entry (the backend's flush_tlb_all / flush_tlb_page);
    * ``asid`` (ARMv7, arch/arm/include/asm/tlbflush.h): no hash table, TLB entries tagged
      with the address space's ASID: flush_tlb_page and flush_tlb_range invalidate by
      address and ASID, page by page, flush_tlb_mm every entry of the ASID (the backend's
      flush_tlb_page, flush_tlb_range, flush_tlb_mm).
    flush_tlb_page (one page, e.g. after a copy-on-write) flushes that page in every strategy.
    ``tlb_flush=None`` takes the backend's default (its first strategy).
    """

    current = PerCPU()          # the process each CPU runs
    gathered = PerCPU(list)     # (mm, address) of zapped PTEs this CPU's mmu_gather holds

    def __init__(self, machine=None, policy=None, tlb_flush=None, arch=None, frames=4096,
                 cost_table_override=None, **arch_options):
        from . import policy as policies
        if machine is None:
            from ..machine import Machine
            machine = Machine("ppc750")
        self.machine = machine
        self.ledger = Ledger(cost_table_override)
        if arch is None:
            from .ppc32 import PPC32Hash
            arch = PPC32Hash
        self.arch = arch(machine, self.ledger, **arch_options) if isinstance(arch, type) \
            else arch
        self.policy = policies.get(policy or self.arch.default_policy)
        if self.policy.needs_exec_permission and not self.arch.has_exec_permission:
            self.policy_note = (f"{self.policy.name} needs a per-page execute permission that "
                                f"{self.arch.name} hardware lacks: the model enforces it in "
                                "its user accesses (a what-if)")
        else:
            self.policy_note = ""
        supported = self.arch.tlb_flush_strategies
        tlb_flush = supported[0] if tlb_flush is None else tlb_flush
        if tlb_flush not in supported:
            raise ValueError(f"tlb_flush must be one of {supported} on {self.arch.name}, "
                             f"not {tlb_flush!r}")
        self.tlb_flush = tlb_flush
        self.batch = []                     # (mm, address) waiting for a flush (batched)
        # several CPUs: the kernel's spin locks are guest code (emu.kernel docstring)
        self.smp = len(machine.cpus) > 1
        self._lock_words = []
        self._page_locks = {}               # File -> its mapping's page lock
        if self.smp:
            self.arch.load_spin_locks()
        self.allocator = PageAllocator(machine, frames)
        self.page_cache = PageCache()
        self.zero_page = self.allocator.alloc("zero")
        self.zero_page.reserved = True
        self.arch.clear_page(self.zero_page.address)
        self.processes = []
        self.next_pid = 1
        self.current = None
        self.prezeroed_pages = None          # a supply of cleared pages (emu.kernel.idle)
        self.ledger.rows.clear()             # boot is not part of any measurement
        self.ledger.counts.clear()
        self.ledger.traffic.clear()

    # ------------------------------------------------------------ spin locks (SMP)

    LOCK_SPACING = 128                  # each lock word on a line of its own (the largest
    #                                     line of the modelled CPUs: no false sharing)

    def lock_word(self):
        """A new spin lock's word in guest RAM (0 on one CPU: a uniprocessor kernel has no
        spin locks)."""
        if not self.smp:
            return 0
        if not self._lock_words:
            base = self.machine.alloc(PAGE_SIZE)
            self._lock_words = list(range(base, base + PAGE_SIZE, self.LOCK_SPACING))
        return self._lock_words.pop(0)

    def page_lock(self, file):
        """The page-cache lock of a file's mapping (2.6.0's mapping->page_lock)."""
        if file not in self._page_locks:
            self._page_locks[file] = self.lock_word()
        return self._page_locks[file]

    @contextmanager
    def locked(self, *words):
        """Hold the spin locks ``words`` (taken in order, released in reverse) around the
        block: guest spin_lock / spin_unlock on this CPU; nothing on one CPU."""
        if not self.smp:
            yield
            return
        for word in words:
            self.arch.lock(word)
        try:
            yield
        finally:
            for word in reversed(words):
                self.arch.unlock(word)

    # ------------------------------------------------------------ small helpers

    def _alloc_page(self, kind):
        self.ledger.fixed("alloc_page")
        self.ledger.count("pages_allocated")
        return self.allocator.alloc(kind)

    def _put_page(self, page):
        """put_page: drop a reference; free the frame on the last one."""
        if page.reserved:
            return
        page.count -= 1
        if page.count < 0:
            raise KernelError(f"page {page.pfn:#x}: reference count below zero")
        if page.count == 0:
            self.ledger.fixed("free_page")
            self.ledger.count("pages_freed")
            self.allocator.free(page)

    def _alloc_table_page(self, what):
        """A page-table page (pgd or PTE page): allocated and zeroed with clear_page."""
        page = self._alloc_page("pgtable")
        self.arch.clear_page(page.address)
        self.ledger.fixed(what)
        self.arch.new_table(page, what)
        return page

    def _page_of(self, pte):
        pfn = (pte & PTE_PFN_MASK) >> PAGE_SHIFT
        if pfn == self.zero_page.pfn:
            return self.zero_page
        return self.allocator.page(pfn)

    def _write_pte(self, ptep, value):
        self.arch.write_pte(ptep, value)

    def _read_pte(self, ptep):
        return self.arch.read_pte(ptep)

    def _set_pte(self, mm, address, ptep, value):
        """set_pte: store a new Linux PTE. _PAGE_HASHPTE of the old one is kept (an HPTE
        may still exist); if the old PTE had it, the flush strategy is told."""
        old = self._read_pte(ptep)
        self._write_pte(ptep, (old & _PAGE_HASHPTE) | (value & ~_PAGE_HASHPTE))
        if old & _PAGE_HASHPTE:
            self._pte_changed(mm, address)

    def _pte_alloc(self, mm, address):
        """pte_alloc_map (and, on a three-level tree, pmd_alloc): the PTE address,
        allocating (and zeroing) the missing table pages on the way down."""
        ptep = mm.ptep(address)
        if ptep is None:
            levels = self.arch.table_levels
            table = mm.pgd.address
            for depth in range(len(levels)):
                slot = self.arch.dir_slot(depth, table, address)
                entry = self.machine.read_word(slot)
                if not entry:
                    last = depth == len(levels) - 1
                    page = self._alloc_table_page("pte_alloc" if last else "pmd_alloc")
                    self.arch.populate(depth, slot, page.address)
                    entry = self.machine.read_word(slot)
                table = self.arch.dir_table(depth, entry)
            ptep = mm.ptep(address)
        return ptep

    def _kernel_wrote(self, page):
        """flush_dcache_page: the kernel changed the page's contents."""
        self.policy.kernel_wrote(self, page)

    def flush_icache_page(self, page, why):
        """Run flush_dcache_icache on a page and count it."""
        self.arch.flush_dcache_icache(page.address)
        self.ledger.count("pages_flushed")
        self.ledger.count(f"flushed:{why}")

    def switch_to(self, process):
        if self.current is not process:
            self.ledger.fixed("context_switch")
            self.arch.switch_mm(process.mm)
            self.current = process

    # ------------------------------------------------------------ TLB / hash flushing

    def _pte_changed(self, mm, address):
        """A Linux PTE with _PAGE_HASHPTE was changed or cleared."""
        if self.tlb_flush == "immediate":
            self._flush_one(mm, address)
        elif self.tlb_flush == "batched":
            self.ledger.fixed("batch_entry")
            self.batch.append((mm, address))

    def _flush_one(self, mm, address):
        table = mm.pte_page(address)
        if table:
            self.arch.flush_ptes(mm, address, table, 1)

    def _flush_batch(self, mm):
        mine = [address for owner, address in self.batch if owner is mm]
        self.batch = [entry for entry in self.batch if entry[0] is not mm]
        if mine:
            self.arch.flush_pending(mm, mine)

    def flush_tlb_page(self, mm, address):
        if self.tlb_flush == "scan":
            self._flush_one(mm, address)
        elif self.tlb_flush == "batched":
            self._flush_batch(mm)
        elif self.tlb_flush in ("tlbia", "asid"):
            self.arch.flush_tlb_page(mm, address)

    def flush_tlb_range(self, mm, start, end):
        """flush_range (arch/ppc/mm/tlb.c): one flush_hash_pages per PTE page of the range."""
        if self.tlb_flush == "tlbia":
            self.arch.flush_tlb_all()
            return
        if self.tlb_flush == "asid":
            self.arch.flush_tlb_range(mm, start, end)
            return
        if self.tlb_flush == "batched":
            self._flush_batch(mm)
            return
        if self.tlb_flush == "immediate":
            return
        if self.arch.walks_flush_ranges:
            self.arch.flush_range(mm, start, end)
            return
        span = self.arch.pte_page_shift
        address = start & ~(PAGE_SIZE - 1)
        while address < end:
            pmd_end = min(((address >> span) + 1) << span, end)
            table = mm.pte_page(address)
            self.ledger.fixed("flush_range_pmd")
            if table:
                count = (pmd_end - address + PAGE_SIZE - 1) >> PAGE_SHIFT
                self.arch.flush_ptes(mm, address, table, count)
            address = pmd_end

    def flush_tlb_mm(self, mm):
        """flush_tlb_mm: flush_range over every VMA (4xx: one tlbia; ARMv7: by ASID)."""
        if self.tlb_flush == "tlbia":
            self.arch.flush_tlb_all()
            return
        if self.tlb_flush == "asid":
            self.arch.flush_tlb_mm(mm)
            return
        if self.tlb_flush == "batched":
            self._flush_batch(mm)
            return
        for vma in list(mm.vmas):
            self.flush_tlb_range(mm, vma.start, vma.end)

    # ------------------------------------------------------------ update_mmu_cache

    def update_mmu_cache(self, mm, vma, address, ptep):
        """After a fault installs a PTE: the I-cache policy, then the hash preload for a
        young PTE (arch/ppc/mm/init.c)."""
        pte = self._read_pte(ptep)
        page = self._page_of(pte)
        new = self.policy.update_mmu_cache(self, vma, page, pte)
        if new != pte:
            self._write_pte(ptep, new)
        if new & _PAGE_ACCESSED:
            self.arch.preload(mm, address, mm.pte_page(address))

    # ------------------------------------------------------------ page faults

    def _vm_pte_bits(self, vma, writable):
        bits = _PAGE_BASE | _PAGE_USER
        if vma.flags & VM_EXEC:
            bits |= _PAGE_EXEC
        if writable:
            bits |= _PAGE_RW
        return bits

    def page_fault(self, process, address, access="r"):
        """do_page_fault + handle_mm_fault for a user access ('r', 'w' or 'x')."""
        mm = process.mm
        self.ledger.fixed("fault_entry")
        self.ledger.count("faults")
        vma = mm.find_vma(address)
        if vma is None:
            raise SegmentationFault(address, "no VMA maps it")
        needed = PROT[access]
        if not vma.flags & needed:
            raise SegmentationFault(address, f"{vma} does not allow {access!r}")
        write = access == "w"
        # handle_mm_fault: the table walk under mm->page_table_lock; the handlers drop it
        # to allocate, clear, copy or read a page and take it again to set the PTE
        with self.locked(mm.page_table_lock):
            ptep = self._pte_alloc(mm, address)
            pte = self._read_pte(ptep)
        if not pte & _PAGE_PRESENT:
            if vma.file is None:
                self._do_anonymous_page(mm, vma, address, ptep, write)
            else:
                self._do_no_page(mm, vma, address, ptep, write)
        elif write and not pte & _PAGE_RW:
            self._do_wp_page(mm, vma, address, ptep, pte)
        elif access == "x" and not pte & _PAGE_EXEC:
            with self.locked(mm.page_table_lock):
                self.policy.exec_fault(self, vma, self._page_of(pte))
                self._write_pte(ptep, pte | _PAGE_EXEC)
                self.arch.flush_tlb_page_nohash(mm, address)    # 4xx fault.c: _tlbie
            self.ledger.count("exec_faults")
        else:                                   # the PTE allowed it: just make it young
            with self.locked(mm.page_table_lock):
                new = pte | _PAGE_ACCESSED | (_PAGE_DIRTY if write else 0)
                self._write_pte(ptep, new)
                self.arch.flush_tlb_page_nohash(mm, address)    # ptep_set_access_flags
                self.update_mmu_cache(mm, vma, address, ptep)

    def _do_anonymous_page(self, mm, vma, address, ptep, write):
        self.ledger.fixed("anon_fault")
        if not write:                           # map the shared zero page, read only
            self.ledger.count("zero_page_maps")
            with self.locked(mm.page_table_lock):
                self._set_pte(mm, address, ptep, self.zero_page.address |
                              self._vm_pte_bits(vma, False))
                self.update_mmu_cache(mm, vma, address, ptep)
            return
        page = self._prezeroed_page()
        if page is None:
            page = self._alloc_page("anon")
            self.arch.clear_page(page.address)      # clear_user_page
            self.ledger.count("zeroed_pages")
        self._kernel_wrote(page)
        page.mapcount = 1
        self.policy.mapping_page(self, page, "anonymous")
        with self.locked(mm.page_table_lock):
            self._set_pte(mm, address, ptep, page.address | self._vm_pte_bits(vma, True) |
                          _PAGE_DIRTY)
            self.update_mmu_cache(mm, vma, address, ptep)

    def _prezeroed_page(self):
        """A page cleared in advance (Dougan 1999: the idle task's, which get_free_page()
        hands out; emu.kernel.idle supplies them through ``prezeroed_pages``), or None: the
        fault clears one itself. Kernels without an idle task have no supply."""
        if self.prezeroed_pages is None:
            return None
        page = self.prezeroed_pages()
        if page is not None:
            page.kind = "anon"
            self.ledger.count("prezeroed_pages_used")
        return page

    def _find_or_read_page(self, file, index):
        """find_get_page, or read the page into the page cache (I/O free, see above)."""
        if index >= file.pages:
            raise KernelError(f"page {index} is beyond the end of {file.name} "
                              f"({file.pages} pages)")
        with self.locked(self.page_lock(file)):      # find_get_page under the page lock
            self.ledger.fixed("page_cache_lookup")
            page = self.page_cache.lookup(file, index)
        if page is None:
            page = self._alloc_page("pagecache")
            page.mapping, page.index = file, index
            self.machine.write(page.address, file.content(index))
            self._kernel_wrote(page)
            with self.locked(self.page_lock(file)):  # add_to_page_cache
                self.page_cache.add(file, index, page)
                self.ledger.fixed("page_cache_read")
            self.ledger.count("page_cache_reads")
        page.count += 1                             # our reference
        return page

    def _do_no_page(self, mm, vma, address, ptep, write):
        self.ledger.fixed("file_fault")
        page = self._find_or_read_page(vma.file, vma.file_index(address))
        locked = page                   # ->fault returns it locked; __do_fault unlocks it
        self.arch.lock_page(self, locked)
        writable = bool(vma.flags & VM_WRITE) and vma.shared
        if write and not vma.shared:                # early copy-on-write of a private page
            new = self._alloc_page("anon")
            self.arch.copy_page(new.address, page.address)      # copy_user_page
            self._kernel_wrote(new)
            self.ledger.count("cow_copies")
            self._put_page(page)
            page, writable = new, True
        page.mapcount += 1
        # the 2.4 kernels called flush_page_to_ram twice on this path: in filemap_nopage
        # (mm/filemap.c, on the page it returns: the page-cache page or its early copy) and
        # in do_no_page (mm/memory.c) (read in 2.4.0)
        self.policy.mapping_page(self, page, "filemap_nopage")
        self.policy.mapping_page(self, page, "file" if page.kind == "pagecache" else "cow")
        bits = self._vm_pte_bits(vma, writable)
        if write:
            bits |= _PAGE_DIRTY
        with self.locked(mm.page_table_lock):
            self._set_pte(mm, address, ptep, page.address | bits)
            self.update_mmu_cache(mm, vma, address, ptep)
        self.arch.unlock_page(self, locked)

    def _do_wp_page(self, mm, vma, address, ptep, pte):
        self.ledger.fixed("wp_fault")
        old = self._page_of(pte)
        if not old.reserved and old.kind == "anon":
            # 2.6.x do_wp_page: an anonymous page is locked around reuse_swap_page
            self.arch.lock_page(self, old)
            self.arch.unlock_page(self, old)
        if not old.reserved and old.kind == "anon" and old.count == 1:
            # the only user: make it writable in place (no copy)
            self.ledger.count("wp_reuse")
            with self.locked(mm.page_table_lock):
                self._set_pte(mm, address, ptep,
                              pte | _PAGE_RW | _PAGE_DIRTY | _PAGE_ACCESSED)
                self.flush_tlb_page(mm, address)
                self.update_mmu_cache(mm, vma, address, ptep)
            return
        new = self._alloc_page("anon")
        if old.reserved:
            self.arch.clear_page(new.address)
            self.ledger.count("zeroed_pages")
        else:
            self.arch.copy_page(new.address, old.address)
            self.ledger.count("cow_copies")
        self._kernel_wrote(new)
        new.mapcount = 1
        self.policy.mapping_page(self, new, "cow")
        with self.locked(mm.page_table_lock):
            self._set_pte(mm, address, ptep, new.address | self._vm_pte_bits(vma, True) |
                          _PAGE_DIRTY)
            self.flush_tlb_page(mm, address)            # ptep_establish
            self.update_mmu_cache(mm, vma, address, ptep)
        if not old.reserved:
            old.mapcount -= 1
            self._put_page(old)

    # ------------------------------------------------------------ user accesses

    def touch(self, process, address, access="r"):
        """A user load ('r'), store ('w') or instruction fetch ('x') at ``address``: fault
        if the Linux PTE does not allow it, then make sure the hardware translates it."""
        self.switch_to(process)
        mm = process.mm
        write = access == "w"
        if self.arch.tlb_decides:
            self._touch_tlb_first(process, address, access)
            return
        for _ in range(3):
            pte = mm.pte(address)
            allowed = (pte & _PAGE_PRESENT and (not write or pte & _PAGE_RW) and
                       (access != "x" or not self.policy.needs_exec_permission or
                        pte & _PAGE_EXEC))
            if not allowed:
                self.page_fault(process, address, access)
                continue
            if self.arch.translates(mm, address, write):
                return
            self.ledger.count("tlb_misses")
            if not self.arch.tlb_miss(mm, address, write):
                self.page_fault(process, address, access)
        if not self.arch.translates(mm, address, write):
            raise KernelError(f"{address:#x} still untranslated after three faults")

    def _touch_tlb_first(self, process, address, access):
        """A software-loaded TLB: the access looks in the TLB; a miss runs the guest miss
        handler, which loads an entry from the Linux PTE or, finding none, enters the fault
        path; an entry that forbids the access (no WR for a store, no EX for a fetch) is a
        storage interrupt: the fault path. Then the access is retried, as the hardware
        retries the instruction. E.g. a first fetch under lazy_exec: miss (no PTE), fault,
        miss (entry loaded without EX), exec fault (flush, _tlbie), miss, hit."""
        mm = process.mm
        for _ in range(8):
            verdict = self.arch.probe(mm, address, access)
            if verdict == "hit":
                if not self._exec_refused_what_if(mm, address, access):
                    return
            elif verdict == "miss":
                self.ledger.count("tlb_misses")
                if self.arch.tlb_miss_for(mm, address, access):
                    continue
            elif self.arch.storage_interrupt(mm, address, access):
                continue
            self.page_fault(process, address, access)
        raise KernelError(f"{access!r} access at {address:#x} still not translated after "
                          "eight TLB misses and faults")

    def _exec_refused_what_if(self, mm, address, access):
        """A policy that needs an execute permission the hardware lacks (see policy_note):
        the model refuses a fetch from a PTE without _PAGE_EXEC, as ``touch`` does."""
        return (access == "x" and self.policy.needs_exec_permission and
                not self.arch.has_exec_permission and not mm.pte(address) & _PAGE_EXEC)

    def touch_pages(self, process, start, pages, access="r"):
        for k in range(pages):
            self.touch(process, start + k * PAGE_SIZE, access)

    # ------------------------------------------------------------ mmap / munmap

    def mmap(self, process, length, prot="rw", shared=False, file=None, offset=0,
             address=None, name="", growsdown=False):
        """do_mmap: a new VMA (no pages are mapped until touched). Returns its address."""
        if length <= 0:
            raise KernelError("mmap needs a positive length")
        if offset % PAGE_SIZE:
            raise KernelError(f"mmap offset {offset:#x} is not page aligned")
        length = -(-length // PAGE_SIZE) * PAGE_SIZE
        mm = process.mm
        if address is None:
            address = mm.get_unmapped_area(length)
        elif address % PAGE_SIZE:
            raise KernelError(f"mmap address {address:#x} is not page aligned")
        flags = sum(PROT[ch] for ch in set(prot)) | (VM_SHARED if shared else 0) | \
            (VM_GROWSDOWN if growsdown else 0)
        self.ledger.fixed("vma_setup")
        mm.insert_vma(VMA(address, address + length, flags, file, offset >> PAGE_SHIFT,
                          name or (file.name if file else "anon")))
        return address

    def _present_ptes(self, mm, start, end):
        """(address, ptep, pte) of each present Linux PTE of ``mm`` in [start, end), in
        order, skipping the spans that have no PTE page: the walk zap_page_range and
        copy_page_range share. Each PTE is read when the walk reaches it."""
        span = self.arch.pte_page_shift
        address = start
        while address < end:
            ptep = mm.ptep(address)
            if ptep is None:
                address = ((address >> span) + 1) << span
                continue
            pte = self._read_pte(ptep)
            if pte & _PAGE_PRESENT:
                yield address, ptep, pte
            address += PAGE_SIZE

    def _zap_range(self, mm, start, end, released):
        """zap_page_range: clear the present PTEs (keeping _PAGE_HASHPTE), drop the
        mappings; pages are released after the TLB flush (``released``)."""
        for address, ptep, pte in self._present_ptes(mm, start, end):
            self.ledger.fixed("zap_pte")
            self._write_pte(ptep, pte & _PAGE_HASHPTE)
            if pte & _PAGE_HASHPTE:
                self._zapped_hashpte(mm, address)
            page = self._page_of(pte)
            if not page.reserved:
                page.mapcount -= 1
                released.append(page)

    @property
    def _zap_flush(self):
        """What the scan kernel does with a zapped PTE's HPTE (Arch.zap_flush); the other
        strategies handle it as any changed PTE (None)."""
        return self.arch.zap_flush if self.tlb_flush == "scan" else None

    def _zapped_hashpte(self, mm, address):
        """tlb_remove_tlb_entry of a PTE with _PAGE_HASHPTE. Under the scan strategy, a
        backend whose kernel gathers unmaps (mmu_gather, 2.5 on) acts at once: 32-bit,
        flush_hash_entry (include/asm-ppc/tlb.h, 2.5: the HPTE searched and invalidated,
        one PTE); 64-bit (2.6.0 include/asm-ppc64/tlb.h) the PTE goes into this CPU's
        ppc64_tlb_batch, flushed by flush_hash_range when full and at tlb_flush. The other
        strategies treat it as any changed PTE."""
        zap = self._zap_flush
        if zap == "entry":
            self._flush_one(mm, address)
        elif zap == "gather":
            self.ledger.fixed("batch_entry")
            self.gathered.append((mm, address))
        else:
            self._pte_changed(mm, address)

    def _unmap_flush(self, mm, start=None, end=None):
        """The TLB flush at the end of an unmap (tlb_finish_mmu; a range, or the whole mm
        at exit). With the scan strategy a gathering kernel has flushed each HPTE as it
        zapped it (or gathered it, flushed here: tlb_flush); an older one (2.4's
        zap_page_range, and the software-loaded TLBs) flushes the range or the mm."""
        zap = self._zap_flush
        if zap == "gather":
            mine = [address for owner, address in self.gathered if owner is mm]
            self.gathered = [entry for entry in self.gathered if entry[0] is not mm]
            if mine:
                self.arch.flush_pending(mm, mine)
        elif zap == "entry":
            pass                            # tlb_flush: nothing left on a hashed MMU
        elif start is None:
            self.flush_tlb_mm(mm)
        else:
            self.flush_tlb_range(mm, start, end)

    def munmap(self, process, address, length):
        """do_munmap of whole VMAs or parts of them; the range must be mapped."""
        if address % PAGE_SIZE or length <= 0:
            raise KernelError(f"munmap({address:#x}, {length:#x}): bad address or length")
        end = address + (-(-length // PAGE_SIZE) * PAGE_SIZE)
        mm = process.mm
        page = address
        while page < end:
            if mm.find_vma(page) is None:
                raise KernelError(f"munmap({address:#x}, {length:#x}): {page:#x} is not "
                                  "mapped")
            page += PAGE_SIZE
        self.switch_to(process)
        released = []
        for vma in [v for v in mm.vmas if v.start < end and address < v.end]:
            lo, hi = max(vma.start, address), min(vma.end, end)
            self.ledger.fixed("vma_setup")
            with self.locked(mm.page_table_lock):    # unmap_region
                self._zap_range(mm, lo, hi, released)
                self._unmap_flush(mm, lo, hi)
            mm.vmas.remove(vma)
            if vma.start < lo:
                mm.insert_vma(VMA(vma.start, lo, vma.flags, vma.file, vma.pgoff, vma.name))
            if hi < vma.end:
                mm.insert_vma(VMA(hi, vma.end, vma.flags, vma.file,
                                  vma.pgoff + ((hi - vma.start) >> PAGE_SHIFT), vma.name))
        for page in released:
            self._put_page(page)

    # ------------------------------------------------------------ processes

    def _new_process(self, name, mm, parent=None):
        process = Process(self.next_pid, name, mm, parent)
        self.next_pid += 1
        if parent is not None:
            parent.children.append(process)
        self.processes.append(process)
        return process

    def spawn(self, image, args_pages=1):
        """A process running ``image`` from scratch (as init would exec it): setup only."""
        mm = MM(self)
        process = self._new_process(image.name, mm)
        self._map_image(process, image, args_pages)
        return process

    def fork(self, parent):
        """do_fork: copy the task (fixed cost) and the address space (dup_mmap)."""
        self.switch_to(parent)
        self.ledger.fixed("syscall")
        self.ledger.fixed("fork")
        self.ledger.fixed("mm_alloc")
        self.ledger.count("forks")
        old = parent.mm
        mm = MM(self)
        child = self._new_process(parent.name, mm, parent)
        for vma in old.vmas:
            self.ledger.fixed("dup_vma")
            mm.insert_vma(VMA(vma.start, vma.end, vma.flags, vma.file, vma.pgoff, vma.name))
            with self.locked(mm.page_table_lock, old.page_table_lock):   # copy_page_range
                self._copy_page_range(mm, old, vma)
        self.flush_tlb_mm(old)
        return child

    def vfork(self, parent):
        """do_fork with CLONE_VFORK | CLONE_VM, as GNU make and gcc's driver start their
        children (job.c, libiberty pexecute.c): the task is copied (fixed cost), the
        address space is shared (no page-table copy, no write-protect, no flush); the
        parent waits until the child execs or exits."""
        self.switch_to(parent)
        self.ledger.fixed("syscall")
        self.ledger.fixed("fork")
        self.ledger.count("vforks")
        parent.mm.users += 1
        return self._new_process(parent.name, parent.mm, parent)

    def _mmput(self, mm):
        """mmput: the address space goes with its last user (a vfork child shares it)."""
        mm.users -= 1
        if mm.users == 0:
            self._exit_mmap(mm)

    def _copy_page_range(self, dst, src, vma):
        cow = not vma.shared
        for address, src_ptep, pte in self._present_ptes(src, vma.start, vma.end):
            self.ledger.fixed("copy_pte")
            dst_ptep = self._pte_alloc(dst, address)
            if cow and pte & _PAGE_RW:          # ptep_set_wrprotect in the parent
                pte &= ~_PAGE_RW
                self._write_pte(src_ptep, pte)
                if pte & _PAGE_HASHPTE:
                    self._pte_changed(src, address)
            child = pte & ~(_PAGE_HASHPTE | _PAGE_ACCESSED)     # pte_mkold; no HPTE
            if vma.shared:
                child &= ~_PAGE_DIRTY
            self._write_pte(dst_ptep, child)
            page = self._page_of(pte)
            if not page.reserved:
                page.count += 1
                page.mapcount += 1

    def _exit_mmap(self, mm):
        """exit_mmap: zap every VMA, flush, free the pages, the page tables, the pgd."""
        released = []
        with self.locked(mm.page_table_lock):        # unmap_vmas, tlb_finish_mmu
            for vma in mm.vmas:
                self._zap_range(mm, vma.start, vma.end, released)
            self._unmap_flush(mm)
        for page in released:
            self._put_page(page)
        self._free_page_tables(mm.pgd.address, 0, 0)
        self.arch.pgd_free(self, mm.pgd)
        self.arch.destroy_context(mm)
        mm.vmas = []
        mm.users = 0

    def _free_page_tables(self, table, depth, base):
        """free_pgtables below one directory page (user space only): the PTE pages, and on
        a three-level tree the pmd pages, depth first."""
        levels = self.arch.table_levels
        shift, bits = levels[depth]
        for index in range(min(1 << bits, -(-(TASK_SIZE - base) >> shift))):
            entry = self.machine.read_word(table + self.arch.dir_bytes * index)
            if not entry:
                continue
            below = self.arch.dir_table(depth, entry)
            if depth + 1 < len(levels):
                self._free_page_tables(below, depth + 1, base + (index << shift))
                self.ledger.fixed("free_pmd_page")
            else:
                self.ledger.fixed("free_pte_page")
            self._put_page(self.allocator.page(below >> PAGE_SHIFT))

    def exit(self, process):
        """do_exit: the task's resources (fixed) and its address space (exit_mmap)."""
        if process.exited:
            raise KernelError(f"{process} has already exited")
        self.switch_to(process)
        self.ledger.fixed("syscall")
        self.ledger.fixed("exit")
        self._mmput(process.mm)
        process.exited = True
        self.ledger.count("exits")

    def wait(self, parent, child):
        """wait4 in the parent: reap the child (it must have exited)."""
        if child not in parent.children:
            raise KernelError(f"{child} is not a child of {parent}")
        if not child.exited:
            raise KernelError(f"{child} has not exited")
        self.switch_to(parent)
        self.ledger.fixed("syscall")
        self.ledger.fixed("wait")
        parent.children.remove(child)
        self.processes.remove(child)

    def exec(self, process, image, args_pages=1):
        """do_execve: a new address space for ``image``; the old one goes (exit_mmap)."""
        self.switch_to(process)
        self.ledger.fixed("syscall")
        self.ledger.fixed("exec")
        self.ledger.fixed("mm_alloc")
        self.ledger.count("execs")
        old = process.mm
        process.mm = MM(self)
        process.name = image.name
        self.arch.switch_mm(process.mm)             # activate_mm (no schedule: same task)
        self._mmput(old)
        self._map_image(process, image, args_pages)

    def _map_image(self, process, image, args_pages):
        """The ELF loader's mappings (text, data, bss, stack with the argument pages), the
        shared libraries' (as ld.so would map them), then the program's first run:
        the pages ``image`` says it touches."""
        for part in image.mappings():
            self.mmap(process, part["length"], part["prot"], file=part.get("file"),
                      offset=part.get("offset", 0), address=part["address"],
                      name=part["name"], growsdown=part.get("growsdown", False))
        mm = process.mm
        for k in range(args_pages):                 # copy_strings + put_dirty_page
            self.ledger.fixed("copy_strings")
            address = STACK_TOP - (k + 1) * PAGE_SIZE
            page = self._alloc_page("anon")
            self.machine.write(page.address, bytes(PAGE_SIZE))
            self._kernel_wrote(page)
            page.mapcount = 1
            self.policy.mapping_page(self, page, "exec_args")
            ptep = self._pte_alloc(mm, address)
            self._set_pte(mm, address, ptep, page.address | _PAGE_BASE | _PAGE_USER |
                          _PAGE_RW | _PAGE_DIRTY | _PAGE_EXEC)
        for address, pages, access in image.touches():
            self.touch_pages(process, address, pages, access)
