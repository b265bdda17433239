"""LMBench-like workloads on the kernel model: lat_proc (fork, exec, shell), lat_pagefault,
lat_mmap, and ``kernel_compile`` (a kernel compile's process pattern, dominated by data
pages: Mackerras 2003 section 2.3, Table 3). Each returns a ``Result``: cycles and
microseconds per iteration at the profile's clock, the per-routine breakdown (guest
routines measured, generic paths fixed) and counts.

Steady state, as LMBench measures it: each workload runs ``warmup`` iterations first (the
programs' pages are then in the page cache and, under the lazy policy, already flushed),
then ``iterations`` measured ones.

What the workloads do is LMBench 2's (its SCCS history, read for facts): lat_proc forks a
child that exits (``fork``), execs the dynamically linked ``hello`` (``exec``) or runs
``/bin/sh -c hello`` (``shell``); lat_mmap stores every 16 KB over a tenth of the mapping.
lat_pagefault is LMBench 3.0's (which Yun 2011 ran): the pages in a random order, the time
of a loop that only maps and unmaps subtracted. Each choice names its source file where it
is made.

Process images are parameters. The defaults are **estimates** of plausible sizes for a
2003 PowerPC Linux system, not measurements (no binary was inspected): a page count here
is "pages the program maps" / "pages its run touches", and so are the pages the forked
child and the parent touch between forks (CHILD_RUNS, PARENT_RUNS). Change them and say so.

A hashed-MMU kernel is sized like the machine of the paper (the profile's ``[system]``): its
hash table is the one Linux gave that much RAM.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..hw import estimates, softtlb
from ..hw.profile import load as load_profile
from ..run.machine import Machine
from ..run.parallel import current_task
from .arm import ARMv7
from .layout import start_delays
from .pages import File
from .percpu import cpu
from .pgtable import PAGE_SIZE, STACK_TOP, TASK_UNMAPPED_BASE
from .ppc32 import PPC32Hash
from .ppc64 import PPC64Hash, htab_size_for
from .ppc405 import PPC405
from .ppc603 import PPC603
from .vm import Kernel

ELF_BASE = 0x10000000        # where PPC32 executables are linked (the ld default script)


@dataclass(eq=False)
class _ElfParts:
    """What a library and a program share: text and data pages from one file, anonymous
    bss, and how many pages of each a run touches."""
    name: str
    text_pages: int
    data_pages: int
    bss_pages: int
    text_touched: int
    data_written: int
    bss_written: int

    def __post_init__(self):
        self.file = File(self.name, self.text_pages + self.data_pages)

    def _parts(self, base):
        """(part, address, pages, prot, file, file offset, touched, access) of text, data
        and bss, laid out one after the other from ``base``; the pages touched are the
        estimate's, times the image's factor where it is moved (``touched``)."""
        data = base + self.text_pages * PAGE_SIZE
        text_touched = self.text_touched if isinstance(self, Library) else \
            self.touched(self.text_touched, self.text_pages)
        return [("text", base, self.text_pages, "rx", self.file, 0, text_touched, "x"),
                ("data", data, self.data_pages, "rw", self.file, self.text_pages * PAGE_SIZE,
                 self.touched(self.data_written, self.data_pages), "w"),
                ("bss", data + self.data_pages * PAGE_SIZE, self.bss_pages, "rw", None, 0,
                 self.touched(self.bss_written, self.bss_pages), "w")]

    def touched(self, pages, of):
        """``pages`` touched of ``of`` mapped, times the factor of the estimate
        ``kernel:image.NAME`` (1 unless moved, emu.hw.estimates; recorded as read): at
        least one page where the estimate has one, at most those mapped."""
        factor = estimates.value(f"kernel:image.{self.name}", 1.0)
        if factor == 1.0 or not pages:
            return pages
        return min(of, max(1, round(pages * factor)))


@dataclass(eq=False)
class Library(_ElfParts):
    """A shared library as ld.so maps it: text (r-x) and data (rw-, private) from its file,
    bss anonymous; how many pages the run touches of each."""


@dataclass(eq=False)
class Image(_ElfParts):
    """A program: its ELF mappings, its libraries, and what one run of it touches
    (instruction fetches from text, stores to data, bss, heap and stack). The heap is the
    brk area (anonymous, read-write, right after bss) as malloc grows it during the run."""
    stack_written: int = 2
    stack_vma_pages: int = 32
    libs: tuple = ()
    heap_pages: int = 0
    heap_written: int = 0

    def __post_init__(self):
        super().__post_init__()
        for n, k in (("text", "text_touched"), ("data", "data_written"),
                     ("bss", "bss_written"), ("heap", "heap_written")):
            if getattr(self, k) > getattr(self, f"{n}_pages"):
                raise ValueError(f"{self.name}: {k} exceeds {n}_pages")

    def _layout(self):
        """(name, address, pages, prot, file, file offset, touched, access) per mapping."""
        parts = self._parts(ELF_BASE)
        bss = parts[-1]
        parts.append(("heap", bss[1] + bss[2] * PAGE_SIZE, self.heap_pages, "rw", None, 0,
                      self.touched(self.heap_written, self.heap_pages), "w"))
        base = TASK_UNMAPPED_BASE
        for lib in self.libs:
            parts += [(f"{lib.name} {what}", *rest) for what, *rest in lib._parts(base)]
            base += (lib.text_pages + lib.data_pages + lib.bss_pages) * PAGE_SIZE
        return [p for p in parts if p[2] > 0]

    def mappings(self):
        out = [{"name": f"{self.name} {n}" if n in ("text", "data", "bss", "heap") else n,
                "address": a, "length": pages * PAGE_SIZE, "prot": prot, "file": f,
                "offset": off} for n, a, pages, prot, f, off, _, _ in self._layout()]
        out.append({"name": "stack", "address": STACK_TOP - self.stack_vma_pages * PAGE_SIZE,
                    "length": self.stack_vma_pages * PAGE_SIZE, "prot": "rw",
                    "growsdown": True})
        return out

    def touches(self):
        out = [(a, touched, access) for _, a, _, _, _, _, touched, access in self._layout()
               if touched]
        if self.stack_written:
            stack = self.touched(self.stack_written, self.stack_vma_pages)
            out.append((STACK_TOP - stack * PAGE_SIZE, stack, "w"))
        return out


# Default images: estimates (see the module docstring), not measurements. The libraries of
# a 2003 PowerPC distribution (glibc 2.2/2.3): ld.so about 100 KB of text, libc about 1.2
# MB; a run of a program touches a part of each (startup, relocation, its calls, exit).
LD_SO = Library("ld.so", text_pages=25, data_pages=2, bss_pages=1, text_touched=15,
                data_written=2, bss_written=1)
LIBC = Library("libc.so.6", text_pages=300, data_pages=10, bss_pages=3, text_touched=60,
               data_written=6, bss_written=2)
LIBRARIES = (LD_SO, LIBC)
# LMBench 2 links its programs dynamically: src/Makefile builds each with $(CC) $(CFLAGS)
# $(LDFLAGS) ... lmbench.a $(LDLIBS), no -static (SCCS history of src/Makefile to 1.56,
# 2000), and scripts/lmbench copies that hello to /tmp/hello for lat_proc (scripts/lmbench,
# SCCS). hello.c is one write() and a return: a page of text (main and the startup
# files), a page of data (its GOT, which ld.so relocates) and a page of bss (the PPC32
# PLT, which ld.so writes as it binds calls).
HELLO = Image("hello", text_pages=1, data_pages=1, bss_pages=1, text_touched=1,
              data_written=1, bss_written=1, stack_written=2, libs=(LD_SO, LIBC))
# lat_proc itself: lat_proc.c and the parts of lmbench.a it calls (the timing loop, the
# statistics), dynamically linked like hello
LAT_PROC = Image("lat_proc", text_pages=8, data_pages=2, bss_pages=2, text_touched=4,
                 data_written=1, bss_written=2, stack_written=3, libs=(LD_SO, LIBC))
# /bin/sh: bash 2.05 of a 2003 distribution, about 600 KB of text
SH = Image("sh", text_pages=150, data_pages=20, bss_pages=8, text_touched=40,
           data_written=8, bss_written=4, stack_written=3, libs=(LD_SO, LIBC))
# A kernel-compile step, for ``compile`` (estimates, not measurements: no binary was
# inspected). cc1 of a 2003 gcc (3.2/3.3) is a ~3 MB program; compiling one kernel source
# file executes a part of it, and writes much more memory than it executes: its data and
# bss, a heap of a few MB (obstacks, RTL and tree nodes, the GC arena), the stack.
CC1 = Image("cc1", text_pages=750, data_pages=40, bss_pages=30, text_touched=150,
            data_written=30, bss_written=20, stack_written=8, libs=(LD_SO, LIBC),
            heap_pages=1024, heap_written=600)
# make, which forks once per compile step (a small part of it runs between steps)
MAKE = Image("make", text_pages=40, data_pages=4, bss_pages=2, text_touched=10,
             data_written=2, bss_written=1, stack_written=2, libs=(LD_SO, LIBC),
             heap_pages=64, heap_written=20)
#: The images whose page counts are estimates (these, and gcc 2.95's passes in emu.kernel.gcc:
#: gcc, cpp, cc1, as), each moved as a whole by a factor on the pages a run touches of it
#: (emu.hw.estimates: ``kernel:image.NAME``; a library's text touched stays, since the
#: child's exit path lies just past it: CHILD_EXIT_RUNS)
IMAGE_RANGE = (0.5, 2.0, "page counts from the era's distributions' sizes, no binary "
               "inspected: a run of the program may touch half as many pages or twice as many")
ESTIMATED_IMAGES = ("ld.so", "libc.so.6", "hello", "lat_proc", "sh", "make", "gcc", "cpp",
                    "cc1", "as", "fixdep", "rm", "mv")


def image_ranges():
    """[(name, nominal, low, high, why)] of the images' estimates (factors on their
    pages touched)."""
    return [(f"kernel:image.{name}", 1.0, *IMAGE_RANGE) for name in ESTIMATED_IMAGES]


# What a forked child of lat_proc runs (LMBench 2 src/lat_proc.c 1.14: fork(), then in the
# child exit(1) for `fork`, close(1) and execve or execlp for `exec` and `shell`): libc's
# fork() returning in the child (its atfork handlers) and lat_proc's own code (pages the
# parent runs too: mapped, only their HPTEs are new), and for `fork` libc's exit path
# (exit, _IO_cleanup, _exit), on pages of libc text the parent never runs in its loop (it
# never exits while it measures), so each child faults them in again; stores to its stack
# and to libc's data (copy-on-write). Estimates: (mapping, first page, pages, access);
# libc's first ``text_touched`` pages are those every run of a program touches.
CHILD_RUNS = (("libc.so.6 text", 0, 1, "x"), ("text", 0, 1, "x"), ("stack", 0, 2, "w"),
              ("libc.so.6 data", 0, 1, "w"))
CHILD_EXIT_RUNS = (("libc.so.6 text", LIBC.text_touched, 3, "x"),)
CHILD_EXEC_RUNS = (("libc.so.6 text", LIBC.text_touched + 3, 1, "x"),)   # close, execve
# What the parent does between wait() returning and the next fork(): the benchmark loop
# (lat_proc's text) and libc's fork() and waitpid() wrappers (a page of libc text, the
# page the child returns through too), its stack and libc's data (estimates).
PARENT_RUNS = (("libc.so.6 text", 0, 1, "x"), ("text", 0, 2, "x"), ("stack", 0, 1, "w"),
               ("libc.so.6 data", 0, 1, "w"))


@dataclass
class Result:
    """One workload's measured iterations."""
    workload: str
    profile: str
    clock_mhz: float
    policy: str
    tlb_flush: str
    iterations: int
    cycles: int                     # all measured iterations
    counts: dict
    breakdown: object = field(repr=False)     # pandas DataFrame, per routine
    ledger: object = field(repr=False, default=None)
    per: str = "iteration"
    per_count: int = 1

    @property
    def cycles_each(self):
        """Cycles per iteration (or per page, for lat_pagefault)."""
        return self.cycles / (self.iterations * self.per_count)

    @property
    def us(self):
        """Microseconds per iteration (per page for lat_pagefault) at the profile's clock."""
        return self.cycles_each / self.clock_mhz

    def summary(self):
        c = self.counts
        return {"workload": self.workload, "policy": self.policy, "tlb_flush": self.tlb_flush,
                f"cycles per {self.per}": self.cycles_each, f"us per {self.per}": self.us,
                "pages flushed": c.get("pages_flushed", 0),
                "flush_dcache_icache cycles": int(self.breakdown["cycles"].get(
                    "flush_dcache_icache", 0)),
                "faults": c.get("faults", 0), "exec faults": c.get("exec_faults", 0),
                "TLB misses": c.get("tlb_misses", 0), "COW copies": c.get("cow_copies", 0),
                "zeroed pages": c.get("zeroed_pages", 0),
                "HPTEs inserted": sum(c.get(k, 0) for k in ("hpte_primary", "hpte_secondary",
                                                            "hpte_evicted")),
                "HPTEs evicted": c.get("hpte_evicted", 0),
                "HPTEs invalidated": c.get("hpte_invalidated", 0)}


# The procedures of Mackerras 2003 Table 1 that the model charges, each with the model's
# routines (guest assembly or fixed costs) that stand for it. ppc6xx_idle (idle time) and
# copy_tofrom_user (system-call copies) have no counterpart: the workloads neither idle nor
# copy to user space.
TABLE1_PROCEDURES = {
    "flush_dcache_icache": ("flush_dcache_icache",),
    "do_page_fault": ("fault_entry",),
    "copy_page": ("copy_page",),
    "clear_page": ("clear_page",),
    "do_no_page": ("file_fault", "page_cache_lookup"),
    "add_hash_page": ("add_hash_page",),
    "flush_hash_page": ("flush_hash_pages",),
    "do_anonymous_page": ("anon_fault",),
}


def by_procedure(result, procedures=TABLE1_PROCEDURES):
    """Cycles per kernel procedure (a readprofile-like view of ``result``'s breakdown):
    each procedure sums the model routines listed for it."""
    import pandas as pd
    cycles = result.breakdown["cycles"]
    return pd.Series({name: int(sum(cycles.get(r, 0) for r in routines))
                      for name, routines in procedures.items()}, name="cycles")


def make_kernel(policy=None, tlb_flush=None, profile="ppc750", **options):
    """A Kernel on a new machine of ``profile``, with that processor's backend: the 405's
    software-loaded TLB (emu.kernel.ppc405, MMU model on) for ppc405gp, the 603's
    (emu.kernel.ppc603, MMU model on; ``reload="pagetable"`` or ``"hash"``) for ppc603e,
    the 64-bit hashed page table (emu.kernel.ppc64, MMU model on) for power4, ARMv7 short
    descriptors (emu.kernel.arm, MMU model on; option ``fixes``) for cortex-a9, else the
    32-bit hashed one. ``policy=None``: the backend's kernel's I-cache policy (lazy; ARM:
    sync_exec)."""
    machine_options = {k: options.pop(k) for k in ("ram_size", "mmu", "cores", "caches")
                       if k in options}
    described = load_profile(profile)
    if softtlb.kind(described) == "405" and "arch" not in options:
        options["arch"] = PPC405
        machine_options["mmu"] = True
    elif softtlb.kind(described) == "603" and "arch" not in options:
        options["arch"] = PPC603
        machine_options["mmu"] = True
    elif described.isa == "ppc64" and "arch" not in options:
        options["arch"] = PPC64Hash
        machine_options["mmu"] = True
    elif described.isa == "arm" and "arch" not in options:
        options["arch"] = ARMv7
        machine_options["mmu"] = True
    _size_like_the_papers_machine(described, options, machine_options)
    return Kernel(Machine(profile, **machine_options), policy=policy, tlb_flush=tlb_flush,
                  **options)


def _size_like_the_papers_machine(described, options, machine_options):
    """A hashed-MMU kernel sizes its hash table by the machine's RAM: that of the machine
    the paper measured (the profile's [system] memory_mb: the PowerBook's 192 MB give 512
    KB, the pSeries 650's 8 GB 128 MB), unless ``total_memory`` or ``htab_size`` is given.
    The emulated RAM grows to hold a table that large."""
    arch = options.get("arch")
    hashed = arch is None or (isinstance(arch, type) and issubclass(arch, (PPC32Hash,
                                                                           PPC64Hash)))
    if not hashed or "htab_size" in options or "total_memory" in options or \
            described.system_memory is None:
        return
    options["total_memory"] = described.system_memory
    if isinstance(arch, type) and issubclass(arch, PPC64Hash):
        table = htab_size_for(described.system_memory)      # aligned to its size in RAM
        machine_options.setdefault("ram_size", max(32 << 20, 2 * table + (32 << 20)))


@dataclass
class ParallelResult:
    """N copies of a workload, one per CPU at once (LMBench's -P N): each CPU's Result (its
    cycles are its clock's, so they include the time it waited for the others' locks and
    for shared resources), and the mean."""
    runs: list

    @property
    def cpus(self):
        return len(self.runs)

    @property
    def cycles_each(self):
        """Mean over the CPUs of each one's cycles per iteration (per page, ...)."""
        return sum(r.cycles_each for r in self.runs) / len(self.runs)

    @property
    def us(self):
        return self.cycles_each / self.runs[0].clock_mhz

    def table(self):
        """One row per CPU: cycles and microseconds per iteration, and its counts."""
        import pandas as pd
        per = self.runs[0].per
        return pd.DataFrame([{"cpu": k, f"cycles per {per}": r.cycles_each,
                              f"us per {per}": r.us, "spin_lock calls":
                              r.breakdown["calls"].get("spin_lock", 0),
                              "faults": r.counts.get("faults", 0)}
                             for k, r in enumerate(self.runs)]).set_index("cpu")


def _measure_parallel(kernel, name, setup, warmup, iterations, per="iteration",
                      per_count=1, copies=None):
    """Every CPU of the kernel's machine (the first ``copies`` of them, if given) runs
    ``setup()`` (its copy's processes; it returns the copy's ``once``), ``warmup``
    iterations, then ``iterations`` measured ones, all at once (emu.run.parallel.run_tasks).
    A ParallelResult."""
    if iterations < 1:
        raise ValueError("iterations must be at least 1")

    profile = kernel.machine.profile
    delays = start_delays(len(kernel.machine.cpus), profile.clock_mhz, kernel.layout,
                          kernel.timing)

    def task(t):
        t.spend(delays[t.core])          # the layout's start and timing (emu.kernel.layout)
        once = setup()
        for _ in range(warmup):
            once()
        start, before = t.clock, kernel.ledger.snapshot()
        for _ in range(iterations):
            once()
        spent = kernel.ledger.since(before)          # this CPU's (a per-CPU ledger)
        return Result(name, profile.name, profile.clock_mhz, kernel.policy.name,
                      kernel.tlb_flush, iterations, t.clock - start, dict(spent.counts),
                      spent.breakdown(), spent, per, per_count)

    return ParallelResult(kernel.machine.run_tasks([task] * (copies or
                                                              len(kernel.machine.cpus))))


def _measure(kernel, name, once, warmup, iterations, per="iteration", per_count=1):
    """``once`` run ``warmup`` times, then ``iterations`` times measured (on one CPU): what
    the ledger charged in those. The warm-up is set-up (``estimates.setup_only``): the
    fixed costs it charges go to the ledger alone (one CPU: no task clock), before the
    snapshot the result is measured from."""
    if iterations < 1:
        raise ValueError("iterations must be at least 1")
    with estimates.setup_only():
        for _ in range(warmup):
            once()
    before = kernel.ledger.snapshot()
    for _ in range(iterations):
        once()
    spent = kernel.ledger.since(before)
    profile = kernel.machine.profile
    return Result(name, profile.name, profile.clock_mhz, kernel.policy.name,
                  kernel.tlb_flush, iterations, spent.cycles, dict(spent.counts),
                  spent.breakdown(), spent, per, per_count)


def _run(kernel, process, image, what, first, pages, access):
    """The process accesses ``pages`` pages of a mapping of ``image`` from its page
    ``first``: its ``text``, ``data``, ``bss`` or ``heap``, a library's (``libc.so.6
    text``...), or the ``stack`` (from its top down)."""
    if what == "stack":
        kernel.touch_pages(process, STACK_TOP - (first + pages) * PAGE_SIZE, pages, access)
        return
    parts = {name: (address, size) for name, address, size, *_ in image._layout()}
    if what not in parts:
        raise ValueError(f"{image.name} has no mapping {what!r} (it has "
                         f"{', '.join(parts)}, stack)")
    address, size = parts[what]
    if first + pages > size:
        raise ValueError(f"{image.name} {what}: pages {first}-{first + pages - 1} are beyond "
                         f"its {size}")
    kernel.touch_pages(process, address + first * PAGE_SIZE, pages, access)


def _runs(kernel, process, image, runs):
    """``_run`` each of ``runs``; a statically linked image has no library mappings, and
    skips the runs of library code (its own text holds that code)."""
    names = {name for name, *_ in image._layout()}
    for what, first, pages, access in runs:
        if what.split()[0] in {lib.name for lib in LIBRARIES} and what not in names:
            continue
        _run(kernel, process, image, what, first, pages, access)


def lat_proc(kind="fork", policy=None, tlb_flush=None, profile="ppc750", warmup=1,
             iterations=1, parent_image=LAT_PROC, program=HELLO, shell=SH, kernel=None,
             cpus=1, copies=None, **options):
    """LMBench lat_proc: ``fork`` (fork, the child exits, the parent waits), ``exec`` (the
    child execs ``program``, which runs and exits), ``shell`` (the child execs ``shell``,
    which forks and execs ``program`` as ``sh -c`` would, and waits for it). ``cpus`` > 1:
    a machine of that many CPUs running ``copies`` copies at once (LMBench's -P; default one
    per CPU), one per CPU, a ParallelResult. (One copy on a machine of several CPUs is -P 1
    on an SMP kernel: its locks are taken, uncontended.)"""
    if kind not in ("fork", "exec", "shell"):
        raise ValueError(f"lat_proc runs fork, exec or shell, not {kind!r}")
    k = kernel or make_kernel(policy, tlb_flush, profile, **_cores(cpus, options))
    copies = _copies(k, copies)
    if len(k.machine.cpus) > 1:
        return _measure_parallel(k, f"lat_proc {kind}",
                                 lambda: _lat_proc_copy(k, kind, parent_image, program, shell),
                                 warmup, iterations, copies=copies)
    with estimates.setup_only():            # the parent's start: before the measurement
        once = _lat_proc_copy(k, kind, parent_image, program, shell)
    return _measure(k, f"lat_proc {kind}", once, warmup, iterations)


def _copies(kernel, copies):
    """How many copies run at once (LMBench's -P): one per CPU by default, at most that."""
    cpus = len(kernel.machine.cpus)
    if copies is None:
        return cpus
    if not isinstance(copies, int) or isinstance(copies, bool) or not 1 <= copies <= cpus:
        raise ValueError(f"copies must be a whole number from 1 to the machine's {cpus} "
                         f"CPUs, not {copies!r}")
    return copies


def _cores(cpus, options):
    if not isinstance(cpus, int) or isinstance(cpus, bool) or cpus < 1:
        raise ValueError(f"cpus must be a whole number of at least 1, not {cpus!r}")
    return dict(options, cores=cpus) if cpus > 1 else options


def _lat_proc_copy(k, kind, parent_image, program, shell):
    """One copy of lat_proc: its parent process; returns one iteration."""
    parent = k.spawn(parent_image)

    def once():
        child = k.fork(parent)
        _runs(k, child, parent_image, CHILD_RUNS)
        if kind == "fork":
            _runs(k, child, parent_image, CHILD_EXIT_RUNS)
        else:
            _runs(k, child, parent_image, CHILD_EXEC_RUNS)
        if kind == "exec":
            k.exec(child, program)
        elif kind == "shell":
            # sh -c PROG: bash, compiled with ONESHOT (its config-top.h default since 2.0),
            # execs a single simple command in place, without forking for it
            k.exec(child, shell)
            k.exec(child, program)
        k.exit(child)
        k.wait(parent, child)
        _runs(k, parent, parent_image, PARENT_RUNS)

    return once


def kernel_compile(steps=4, policy=None, tlb_flush=None, profile="ppc405gp", warmup=1,
                   program=CC1, parent_image=MAKE, kernel=None, passes=None, spawn="fork",
                   cpus=1, user_cycles=0, stagger=0, shell=None, fixdep_files=None,
                   **options):
    """A kernel compile's process pattern: per compile step, make starts a child that execs
    ``program`` (cc1), which runs (the pages its image says it touches: some text pages
    executed, many data, bss, heap and stack pages written) and exits; make waits, then
    runs a little. Dominated by data pages: what the 405's execute-permission deferral
    (lazy_exec) avoids flushing (Mackerras 2003 section 2.3, Table 3). ``warmup`` steps
    first (the programs are then in the page cache, flushed clean), then ``steps``
    measured ones; reported per step.

    ``passes``: ``program`` is then the compiler driver (gcc), which starts each of
    ``passes`` (cpp, cc1, as) in turn as a process of its own and waits for it, as gcc's
    driver runs its passes. ``spawn``: how make and the driver start a child, ``fork``
    (a copy of the address space, copy-on-write) or ``vfork`` (shared until the exec:
    GNU make's job.c and libiberty's pexecute.c use it). ``cpus`` > 1: make -j, one
    compile job per CPU at once (a ParallelResult). ``user_cycles``: what each program
    then computes in user mode, after the pages of its run (on several CPUs it passes on
    the CPU's clock, outside the kernel's ledger; one CPU alone has nobody to wait for).
    ``stagger``: CPU k starts its make k x that many cycles late, so that the jobs are not
    in step (a real make -j's are not). ``shell``: (sh, tools), make runs each step as a
    command list through ``sh -c`` (a Kbuild rule: emu.kernel.gcc.kbuild_shell): make's
    child execs sh, which forks a child for ``program`` (with its passes) and then one for
    each of ``tools``, waiting for each (bash forks for every external command of a list;
    its one-command exec in place, lat_proc's shell, does not apply). ``fixdep_files``
    (emu.kernel.fileio.fixdep_files, with ``shell``'s fixdep; one CPU): fixdep maps and
    reads them through the fault path (FixdepReads), and rm's unlink of the .d file
    truncates its pages from the page cache; what that costs in the measured steps
    is kept as the result's ``unscaled`` (the files' own size, whatever the programs')."""
    if spawn not in ("fork", "vfork"):
        raise ValueError(f"spawn must be 'fork' or 'vfork', not {spawn!r}")
    if fixdep_files is not None and (shell is None or cpus != 1):
        raise ValueError("fixdep_files needs the Kbuild rule's shell and one CPU")
    k = kernel or make_kernel(policy, tlb_flush, profile, **_cores(cpus, options))
    start = k.vfork if spawn == "vfork" else k.fork
    reads = FixdepReads(k, fixdep_files, warmup) if fixdep_files is not None else None

    def tool_run(process, tool):
        _compile(k, process, tool, (), start, user_cycles)
        if reads is not None and tool.name == "fixdep":
            reads.run(process)
        if reads is not None and tool.name == "rm":
            reads.remove_depfile()

    def copy():
        _user_time(stagger * cpu())
        parent = k.spawn(parent_image)

        def once():
            if reads is not None:
                reads.step += 1
            child = start(parent)
            if spawn == "fork":             # the child's own run before its exec (COW)
                _runs(k, child, parent_image, CHILD_RUNS + CHILD_EXEC_RUNS)
            if shell is None:
                _compile(k, child, program, passes, start, user_cycles)
            else:
                sh, tools = shell
                k.exec(child, sh)
                _sh_command(k, child, sh, lambda p: _compile(k, p, program, passes, start,
                                                             user_cycles))
                for tool in tools:
                    _sh_command(k, child, sh, lambda p, t=tool: tool_run(p, t))
            k.exit(child)
            k.wait(parent, child)
            _runs(k, parent, parent_image, PARENT_RUNS)
        return once

    if len(k.machine.cpus) > 1:
        return _measure_parallel(k, "kernel compile", copy, warmup, steps,
                                 per="compile step")
    with estimates.setup_only():            # make's start: before the measurement
        once = copy()
    result = _measure(k, "kernel compile", once, warmup, steps, per="compile step")
    if reads is not None:
        result.unscaled = reads.measured()
    return result


class FixdepReads:
    """fixdep's reads of a compile step through the model's own paths (scripts/fixdep.c,
    2.5.66: print_deps, then parse_dep_file's do_config_file for each file the .d names):
    each file mmap()ed whole, PROT_READ and MAP_PRIVATE, every word of it scanned (a load
    from each page: a read fault that maps the page-cache page, do_no_page with its
    flush_page_to_ram calls, update_mmu_cache), munmap()ed. ``files``:
    emu.kernel.fileio.fixdep_files. The headers are the same files every step, cached
    since cpp first read them; the source and the .d are new each step, put in the page
    cache by cpp's read() and write() (Kernel.fill_page_cache, uncharged: the file I/O's),
    new pages whose PG_arch_1 is clear (2.5.66 mm/page_alloc.c prep_new_page clears it on
    every page allocated).
    The open(), fstat(), close() and the system calls' round trips are not run here
    (costed with the rest of the step's file-system calls: the Mackerras chapter's
    fs_step). What the reads cost in the steps after ``warmup`` is kept by row
    (``measured``)."""

    def __init__(self, kernel, files, warmup):
        self.kernel, self.warmup, self.step = kernel, warmup, 0
        self.headers = [File(f"include/header{n}.h", pages)
                        for n, pages in enumerate(files["headers"])]
        self.source_pages, self.depfile_pages = files["source"], files["depfile"]
        self.new_files = []             # each step's source and .d (kept: the page cache
        self.rows, self.counts = {}, {}  # is keyed by the File's identity)

    def run(self, process):
        """fixdep's reads in ``process`` (fixdep, exec'd): the .d, the source, the
        headers."""
        k, step = self.kernel, self.step
        new = [File(f"step{step}.o.d", sum(self.depfile_pages)),
               File(f"step{step}.c", sum(self.source_pages))]
        self.new_files += new
        for file in new:
            k.fill_page_cache(file)
        self.depfile = new[0]

        def reads():
            for file in new + self.headers:
                address = k.mmap(process, file.pages * PAGE_SIZE, "r", file=file)
                k.touch_pages(process, address, file.pages, "r")
                k.munmap(process, address, file.pages * PAGE_SIZE)
        self._kept(reads)

    def remove_depfile(self):
        """The rule's ``rm -f $(depfile)`` after fixdep (2.5.25's Rules.make 529-540,
        if_changed_dep, the tree the paper built; 2.5.66's the same): the unlink of the .d
        file, whose last iput truncates its pages from the page cache
        (Kernel.truncate_file). The unlink's own call is costed with the step's other
        file-system calls (the Mackerras chapter's fs_step)."""
        self._kept(lambda: self.kernel.truncate_file(self.depfile))

    def _kept(self, work):
        """Run ``work``, keeping what it costs by row in the steps after ``warmup``."""
        k, step = self.kernel, self.step
        before = k.ledger.snapshot() if step > self.warmup else None
        work()
        if before is not None:
            spent = k.ledger.since(before)
            for name, (kind, calls, cycles, _) in spent.rows.items():
                row = self.rows.setdefault(name, [0, 0])
                row[0] += calls
                row[1] += cycles
            for key, n in spent.counts.items():
                self.counts[key] = self.counts.get(key, 0) + n

    def measured(self):
        """{"rows": {row: (calls, cycles)}, "counts": {count: n}} of the measured steps."""
        return {"rows": {name: tuple(v) for name, v in self.rows.items()},
                "counts": dict(self.counts)}


def _compile(k, process, program, passes, start, user_cycles):
    """``process`` execs ``program``, which runs and starts each of ``passes`` in turn."""
    k.exec(process, program)
    _user_time(user_cycles)
    for image in passes or ():
        _run_pass(k, process, image, start, user_cycles)


def _sh_command(k, sh_process, sh, run):
    """sh runs one external command of a list: it forks (bash's make_child), the child
    runs its side of fork and the exec path (CHILD_RUNS, CHILD_EXEC_RUNS) and ``run``s the
    command in the child, which exits; sh waits and runs on (PARENT_RUNS)."""
    child = k.fork(sh_process)
    _runs(k, child, sh, CHILD_RUNS + _exec_runs(sh))
    run(child)
    k.exit(child)
    k.wait(sh_process, child)
    _runs(k, sh_process, sh, PARENT_RUNS)


def _exec_runs(image):
    """CHILD_EXEC_RUNS on ``image``'s own libc (a scaled one has fewer pages): the page
    just past the three after those every run touches, or its last."""
    libc = next((lib for lib in image.libs if lib.name == LIBC.name), None)
    if libc is None:
        return ()
    return (("libc.so.6 text", min(libc.text_touched + 3, libc.text_pages - 1), 1, "x"),)


def _run_pass(k, driver, image, start, user_cycles=0):
    """The compiler driver runs one pass: a child that execs ``image``, which runs and
    exits; the driver waits for it."""
    child = start(driver)
    k.exec(child, image)
    _user_time(user_cycles)
    k.exit(child)
    k.wait(driver, child)


def _user_time(cycles):
    """A program's own work in user mode: time on this CPU's clock (several CPUs)."""
    task = current_task()
    if cycles and task is not None:
        task.spend(cycles)


def lat_pagefault(pages=256, policy=None, tlb_flush=None, profile="ppc750", warmup=1,
                  iterations=1, kernel=None, cpus=1, copies=None, **options):
    """LMBench 3.0 lat_pagefault (src/lat_pagefault.c, read for facts): each copy (one per
    CPU with ``cpus`` > 1, LMBench's -P) opens the same file, maps it read-only and shared
    and draws a random order of its pages (``permutation``); an iteration reads one byte of
    every page in that order, unmaps the file and maps it again (the msync(MS_INVALIDATE)
    after each mmap has nothing to do for a cached file, and the model leaves it out). A
    second loop that only unmaps and maps (benchmark_mmap, run first) is timed too, and
    LMBench reports the difference per page: the fault, and what unmapping a page that
    was touched adds. Reported per page (a Result, or a ParallelResult of one per CPU),
    its cycles, breakdown and counts the two loops' difference. Both loops run on one
    kernel, the mapping loop first, as LMBench runs them. ``copies``: as lat_proc's."""
    k = kernel or make_kernel(policy, tlb_flush, profile, **_cores(cpus, options))
    copies = _copies(k, copies)
    data = File("lat_pagefault.data", pages)
    mapped = _lat_pagefault_loop(k, data, pages, False, warmup, iterations, copies)
    touched = _lat_pagefault_loop(k, data, pages, True, warmup, iterations, copies)
    if isinstance(touched, ParallelResult):
        return ParallelResult([_less(t, m) for t, m in zip(touched.runs, mapped.runs)])
    return _less(touched, mapped)


def permutation(count, seed):
    """A random order of ``count`` pages: LMBench's permutation() shuffles the page offsets
    with rand() seeded by the process's pid (Fisher-Yates); the model shuffles the same way
    with Python's generator seeded by the model's pid, a different but fixed order."""
    import random
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


def _lat_pagefault_loop(k, data, pages, touch, warmup, iterations, copies):
    """One of lat_pagefault's two loops on every CPU of ``k``: ``touch`` (benchmark) or not
    (benchmark_mmap)."""
    size = pages * PAGE_SIZE

    def copy():
        process = k.spawn(HELLO)
        order = permutation(pages, process.pid)
        where = [k.mmap(process, size, "r", shared=True, file=data)]    # initialize

        def once():
            if touch:
                for page in order:
                    k.touch(process, where[0] + page * PAGE_SIZE, "r")
            k.munmap(process, where[0], size)
            where[0] = k.mmap(process, size, "r", shared=True, file=data)
        return once

    name = "lat_pagefault" if touch else "lat_pagefault (mmap loop)"
    if len(k.machine.cpus) > 1:
        return _measure_parallel(k, name, copy, warmup, iterations, per="page",
                                 per_count=pages, copies=copies)
    return _measure(k, name, copy(), warmup, iterations, per="page", per_count=pages)


def _less(touched, mapped):
    """The Result of ``touched`` less ``mapped`` (LMBench's t_combined - t_mmap): cycles,
    the per-routine breakdown (rows that differ) and the counts."""
    import pandas as pd
    a, b = touched.breakdown, mapped.breakdown
    rows = []
    for name in a.index.union(b.index):
        got = [a.loc[name, c] if name in a.index else 0 for c in ("calls", "cycles")]
        less = [b.loc[name, c] if name in b.index else 0 for c in ("calls", "cycles")]
        calls, cycles = got[0] - less[0], got[1] - less[1]
        if calls or cycles:
            kind = a.loc[name, "kind"] if name in a.index else b.loc[name, "kind"]
            insns = None if kind == "fixed" else \
                (a["instructions"].get(name, 0) or 0) - (b["instructions"].get(name, 0) or 0)
            rows.append({"routine": name, "kind": kind, "calls": calls, "cycles": cycles,
                         "instructions": insns})
    cycles = touched.cycles - mapped.cycles
    frame = pd.DataFrame(rows, columns=["routine", "kind", "calls", "cycles", "instructions"])
    frame["share"] = frame["cycles"] / (cycles or 1)
    frame = frame.sort_values("cycles", ascending=False).set_index("routine")
    counts = {key: touched.counts.get(key, 0) - mapped.counts.get(key, 0)     # in a fixed order
              for key in dict.fromkeys([*touched.counts, *mapped.counts])}
    return Result(touched.workload, touched.profile, touched.clock_mhz, touched.policy,
                  touched.tlb_flush, touched.iterations, cycles,
                  {key: n for key, n in counts.items() if n}, frame, None, touched.per,
                  touched.per_count)


# LMBench 2 lat_mmap (src/lat_mmap.c 1.11): mapit() maps the file shared and read/write,
# stores one byte every PSIZE = 16 KB over the first tenth of the mapping (N = 10; the
# sequential case, the one scripts/lmbench runs), and unmaps it
LAT_MMAP_STRIDE = 16 << 10
LAT_MMAP_PART = 10


def lat_mmap(size=1 << 20, policy=None, tlb_flush=None, profile="ppc750", warmup=1,
             iterations=1, kernel=None, **options):
    """LMBench lat_mmap: mmap ``size`` bytes of a cached file (shared, read/write), store
    to one byte every 16 KB over its first tenth (LAT_MMAP_STRIDE, LAT_MMAP_PART), munmap.
    Reported per mmap + stores + munmap."""
    k = kernel or make_kernel(policy, tlb_flush, profile, **options)
    with estimates.setup_only():            # its start: before the measurement
        process = k.spawn(LAT_PROC)
    pages = -(-size // PAGE_SIZE)
    data = File("lat_mmap.data", pages)

    def once():
        where = k.mmap(process, size, "rw", shared=True, file=data)
        for offset in range(0, size // LAT_MMAP_PART, LAT_MMAP_STRIDE):
            k.touch(process, where + offset, "w")
        k.munmap(process, where, size)

    return _measure(k, "lat_mmap", once, warmup, iterations)
