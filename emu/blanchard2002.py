"""Blanchard 2002, "The seven second kernel compile": what the chapter's pages share.

The published side: the three runs' time output and Bligh's two (data/blanchard2002_*),
the checks of the figures the paper derives from them, and the readprofile listing of the
10.31 s run with its shares.
"""
from __future__ import annotations

import math

from . import data

CHAPTER = "Blanchard 2002"


def cpu_percent_check(runs):
    """Each run with a time output: %CPU computed as (user + system) / elapsed, and whether
    the printed %CPU can come from the printed figures if they were rounded to their last
    digit (each within half a unit) or cut off there (each up to one unit short)."""
    import pandas as pd
    rows = []
    for row in runs.dropna(subset=["user_s"]).itertuples():
        busy, elapsed, printed = row.user_s + row.system_s, row.elapsed_s, row.cpu_percent
        rounded = _percent_range(busy - 0.01, busy + 0.01, elapsed - 0.005, elapsed + 0.005)
        cut = _percent_range(busy, busy + 0.02, elapsed, elapsed + 0.01)
        rows.append({"run": row.run, "computed %CPU": 100 * busy / elapsed,
                     "printed %CPU": printed,
                     "consistent if rounded": round(rounded[0]) <= printed <= round(rounded[1]),
                     "consistent if truncated": math.floor(cut[0]) <= printed
                     <= math.floor(cut[1])})
    return pd.DataFrame(rows).set_index("run")


def _percent_range(busy_low, busy_high, elapsed_low, elapsed_high):
    return 100 * busy_low / elapsed_high, 100 * busy_high / elapsed_low


def published_profile():
    """The readprofile listing of the 10.31 s run: ticks per symbol, the share of all
    ticks and of the ticks outside the idle loop (idled)."""
    listing = data.load("blanchard2002_readprofile").set_index("symbol")[["ticks"]]
    total = int(listing.loc["total", "ticks"])
    listing = listing.drop("total")
    busy = total - int(listing.loc["idled", "ticks"])
    listing["share of total"] = listing["ticks"] / total
    listing["share of busy"] = (listing["ticks"] / busy).where(listing.index != "idled")
    return listing


# ------------------------------------------------------------------ the model's kernels

#: The three kernels the chapter compares (emu.kernel.ppc64 options): 2.4's hash-table
#: locking (the 10.31 s run's kernel took __hash_page's ticks on it), 2.5's per-HPTE lock
#: bit with 2.4's page-by-page flush (the two changes apart), and 2.5.7's lock bit with the
#: batched flush under one tlbie lock (the 7.52 s run).
KERNELS = {
    "2.4: hash_table_lock, a flush per page": {"hash_lock": "global", "tlbie": "per_page"},
    "per-HPTE lock, a flush per page": {"hash_lock": "hpte", "tlbie": "per_page"},
    "2.5.7: per-HPTE lock, batched flush": {"hash_lock": "hpte", "tlbie": "batched"},
}
OLD, MIDDLE, NEW = KERNELS


def _scaled(n, scale):
    return max(1, round(n * scale)) if n else 0


def _libraries(scale):
    """ld.so and libc (emu.kernel.workloads' estimates), every page count scaled."""
    from .kernel.workloads import LIBRARIES, Library
    fields = ("text_pages", "data_pages", "bss_pages", "text_touched", "data_written",
              "bss_written")
    return tuple(Library(lib.name, *(_scaled(getattr(lib, f), scale) for f in fields))
                 for lib in LIBRARIES)


def _image(name, libs, text, data, bss, text_touched, data_written, bss_written, stack,
           heap, heap_written):
    from .kernel.workloads import Image
    return Image(name, text_pages=text, data_pages=data, bss_pages=bss,
                 text_touched=text_touched, data_written=data_written,
                 bss_written=bss_written, stack_written=stack, libs=libs,
                 heap_pages=heap, heap_written=heap_written)


# The programs of one compile step, gcc 2.95.3 and binutils as the era's distributions
# built them (PowerPC binaries: the p690 ran a 32-bit userland). Every size is an
# ESTIMATE (no binary was inspected): pages mapped and pages a run touches, the compiler
# writing far more memory than it executes (cc1's obstacks and RTL for a kernel source
# file of a few hundred KB once its headers are included).
FULL_SIZE = {
    # name: (text, data, bss, text touched, data written, bss written, stack, heap,
    #        heap written)
    "gcc": (20, 2, 1, 8, 1, 1, 2, 16, 6),          # the driver: options, spec strings
    "cpp0": (30, 2, 2, 15, 2, 2, 2, 256, 120),      # the preprocessor of gcc 2.95
    "cc1": (480, 30, 20, 200, 25, 15, 8, 2048, 900),
    "as": (225, 10, 4, 50, 6, 3, 2, 256, 100),       # gas with libbfd linked in
}


def compiler(scale=1.0):
    """(driver, passes) of gcc 2.95: the driver image and the cpp0, cc1 and as images,
    and their libraries, every page count multiplied by ``scale`` (at least one page where
    the full size has one). The chapter runs them at a fraction of the estimated size so that a page of the
    book executes in about a minute."""
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], not {scale!r}")
    libs = _libraries(scale)
    images = {name: _image(name, libs, *(_scaled(n, scale) for n in sizes))
              for name, sizes in FULL_SIZE.items()}
    return images["gcc"], (images["cpp0"], images["cc1"], images["as"])


def make_image(scale=1.0):
    """GNU make (emu.kernel.workloads.MAKE's estimate) with its libraries, scaled."""
    from .kernel.workloads import MAKE
    sizes = (MAKE.text_pages, MAKE.data_pages, MAKE.bss_pages, MAKE.text_touched,
             MAKE.data_written, MAKE.bss_written, MAKE.stack_written, MAKE.heap_pages,
             MAKE.heap_written)
    return _image("make", _libraries(scale), *(_scaled(n, scale) for n in sizes))


def compile_run(kernel_name, cpus, scale=0.125, steps=2, warmup=1, profile_every=None):
    """make -jN on the model: on every CPU a make starts and runs ``steps`` compile steps
    (make vforks, the gcc driver vforks cpp0, cc1 and as in turn), after ``warmup`` steps
    that fill the page cache (not measured); ``kernel_name`` one of KERNELS. With
    ``profile_every`` the measured call (each CPU's make starting, then its steps) is
    sampled every that many cycles on every CPU, readprofile's view. A CompileRun."""
    from . import profiler
    from .kernel import workloads
    if kernel_name not in KERNELS:
        raise ValueError(f"kernel_name must be one of {list(KERNELS)}, not {kernel_name!r}")
    driver, passes = compiler(scale)
    kernel = workloads.make_kernel(profile="power4", policy=POLICY, cores=cpus,
                                   frames=FRAMES, ram_size=RAM_SIZE,
                                   **KERNELS[kernel_name])
    parent = make_image(scale)

    def run(steps):
        return workloads.kernel_compile(steps=steps, warmup=0, program=driver, passes=passes,
                                        parent_image=parent, spawn="vfork", kernel=kernel)

    if warmup:
        run(warmup)                 # the programs into the page cache, not measured
    if profile_every is None:
        return CompileRun(kernel_name, cpus, scale, steps, run(steps), None, kernel)
    sampled = profiler.profile_run(kernel.machine, lambda: run(steps), every=profile_every)
    return CompileRun(kernel_name, cpus, scale, steps, sampled.run, sampled, kernel)


#: Page frames of the model's kernel, 64 MB for 32 CPUs' processes at once, and the
#: emulated RAM that holds them beside the 128 MB hash table of the 8 GB machine
FRAMES = 16384
RAM_SIZE = 384 << 20

#: The I-cache policy of the chapter's kernels (see the compile page): the flush of a page
#: only when it is mapped executable, as ppc64 later did with the POWER4's no-execute bit
#: (hash_page_do_lazy_icache); the paper's profile lists no I-cache flush at all.
POLICY = "lazy_exec"

#: The machine-wide locks of the hash-table code, by the labels that delimit each place
#: one is acquired in routines/ppc64 (.L<lock>_<k> to .L<lock>_<k>_end: the loop that
#: tries, spins, and takes it)
LOCKS = {"hash_table_lock": "2.4's global hash-table lock",
         "tlbie_lock": "the tlbie lock (2.5)",
         "hpte_lock": "an HPTE's lock bit (2.5)"}


def lock_ranges(machine):
    """{lock: [(start, end), ...]}: where each lock's acquiring loops are in the code."""
    import re
    ranges = {lock: [] for lock in LOCKS}
    for program in machine.programs:
        for name, start in program.symbols.items():
            m = re.fullmatch(r"\.L(\w+?)_(\d+)", name)
            if m and m.group(1) in LOCKS and f"{name}_end" in program.symbols:
                ranges[m.group(1)].append((start, program.symbols[f"{name}_end"]))
    return ranges


class CompileRun:
    """One make -jN run of the model: each CPU's Result, and the profile if sampled."""

    def __init__(self, kernel_name, cpus, scale, steps, result, sampled, kernel):
        self.kernel_name, self.cpus, self.scale, self.steps = kernel_name, cpus, scale, steps
        self.result, self.sampled, self.kernel = result, sampled, kernel
        self.runs = result.runs if hasattr(result, "runs") else [result]

    @property
    def cycles_per_step(self):
        """Kernel cycles of one compile step, the mean over the CPUs (each CPU's clock over
        its steps: its waits for locks and for the machine-wide tlbie included)."""
        return sum(r.cycles_each for r in self.runs) / len(self.runs)

    def count(self, event):
        """An event's count per compile step and CPU (the steps, without make's start)."""
        return sum(r.counts.get(event, 0) for r in self.runs) / (len(self.runs) * self.steps)

    def routine_cycles(self, routine):
        """A routine's cycles per compile step and CPU (the steps, without make's start)."""
        return sum(int(r.breakdown["cycles"].get(routine, 0)) for r in self.runs) / (
            len(self.runs) * self.steps)

    def lock_table(self):
        """Per lock: the share of the sampled cycles (every CPU, make's start and the steps)
        spent in its acquiring loops, that share of a compile step's cycles, and the
        acquisitions per CPU over the window (NaN for the HPTE bits, whose loops end in a
        branch)."""
        import pandas as pd
        if self.sampled is None:
            raise ValueError("lock_table needs a sampled run (compile_run(profile_every=N))")
        table = self.sampled.table
        total = table["cycles"].sum()
        rows = []
        for lock, spans in lock_ranges(self.kernel.machine).items():
            inside = pd.Series(False, index=table.index)
            for start, end in spans:
                inside |= (table["address"] >= start) & (table["address"] < end)
            takes = table[table["address"].isin([end - 4 for _, end in spans])]
            share = table.loc[inside, "cycles"].sum() / total if total else 0.0
            rows.append({"lock": lock, "what": LOCKS[lock], "share of kernel cycles": share,
                         "cycles per step": share * self.cycles_per_step,
                         "acquisitions per CPU": takes["hits"].sum() / self.cpus
                         if lock != "hpte_lock" else float("nan")})
        return pd.DataFrame(rows).set_index("lock")
