"""The model's kernels and machine: the three kernels the chapter compares and the profiled
variant (KERNELS, VARIANTS: emu.kernel.ppc64's hash_lock and tlbie options), the partitioned
and the bare builds (LPAR, THIRD), the programs' scale and the memory that holds them
(SCALE, memory_for), the I-cache policy and what one flush of a page costs (POLICY,
icache_flush_anatomy), the machine-wide locks by where their acquiring loops are in the code
(LOCKS, lock_ranges), and one range flush counted instruction by instruction (range_flush)."""
from __future__ import annotations

import re

from ...kernel import gcc, workloads
from ...run import profiler


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

#: The profiled kernel as its listing suggests (emu.kernel.ppc64 ``global_hash``): 2.4's
#: hash_table_lock around hash_page, the flushes under a tlbie lock of their own. No commit
#: of the time has it (flush_hash_page takes hash_table_lock in htab.c of 15 February and
#: 13 March 2002, commits 88b42425d1 and 1cf747c749; 26 March's rework dropped the lock):
#: a hypothesis the chapter runs beside the kernels of KERNELS.
VARIANTS = {"2.4's lock for hash_page only, flushes under the tlbie lock":
            {"hash_lock": "global_hash", "tlbie": "per_page"}}
PROFILED = next(iter(VARIANTS))


def _options(kernel_name):
    """The ppc64 options of one of KERNELS or VARIANTS, by name."""
    options = {**KERNELS, **VARIANTS}.get(kernel_name)
    if options is None:
        raise ValueError(f"kernel_name must be one of {[*KERNELS, *VARIANTS]}, "
                         f"not {kernel_name!r}")
    return options


#: The first two builds ran in a logical partition (section 3.2: "all but the final run"):
#: the kernel's HPTE inserts and removes are hypervisor calls (emu.kernel.ppc64 ``lpar``;
#: the 2.4-locking kernel with the LPAR backend of 13 March 2002, which also reads each
#: HPTE it looks at with H_READ; 2.5.7 with the rework's of 26 March, whose flushes take
#: pSeries_lpar_tlbie_lock). The scheduled builds, and so the claims, run so.
LPAR = True

#: The third build (section 6: "a 32way pSeries p690 with 1.3GHz CPUs and logical
#: partitioning turned off"): the paper names no kernel for it and says only that the
#: clock and the partitioning changed, so the model runs the second build's kernel (2.5.7's
#: lock bits and batched flush) on the bare machine: its HPTEs written and its tlbies run by
#: the kernel itself (emu.kernel.ppc64, lpar=False), at the run's clock in the data.
THIRD = {"kernel_name": NEW, "cpus": 32, "lpar": False}

#: The size the chapter runs the programs at (emu.kernel.gcc.SCALE)
SCALE = gcc.SCALE


#: Page frames of the model's kernel, 64 MB for 32 CPUs' processes at once, and the
#: emulated RAM that holds them beside the 128 MB hash table of the 8 GB machine
FRAMES = 16384
RAM_SIZE = 384 << 20
#: ... and at full size: 32 CPUs' cc1s of about a thousand written pages each, with the
#: page cache, need four times the frames (their RAM beside the hash table)
FULL_FRAMES = 4 * FRAMES
FULL_RAM_SIZE = 768 << 20


def memory_for(scale):
    """(frames, ram_size) of the kernel that runs the programs at ``scale``: FRAMES and
    RAM_SIZE up to twice SCALE, FULL_FRAMES and FULL_RAM_SIZE above."""
    return (FRAMES, RAM_SIZE) if scale <= 2 * SCALE else (FULL_FRAMES, FULL_RAM_SIZE)

#: The I-cache policy of the chapter's kernels: early 2.5's ppc64 (emu.kernel.policy's
#: ``pagecache``, from arch/ppc64/mm/init.c of the time): a page-cache page flushed once
#: when first mapped, every copy-on-write copy flushed, fresh zeroed pages never.
POLICY = "pagecache"


def icache_flush_anatomy():
    """What one __flush_dcache_icache costs on the POWER4 model, by the state of the page:
    a page whose lines are clean (flushed once already: the code warm), and a page just
    cleared by clear_page (dcbz establishes its 32 lines modified in the L2, as a fresh
    copy-on-write copy has them). Cycles, and the write-backs each level made."""
    kernel = workloads.make_kernel(profile="power4", policy="lazy", cores=1)
    machine = kernel.machine
    page = kernel.allocator.alloc("anon").address

    def call(entry):
        with machine.mmu.translation_off():          # kernel memory, as the kernel runs it
            return machine.call(entry, page)

    call("flush_dcache_icache")                       # the routine's code into the L1 I
    clean = call("flush_dcache_icache")
    call("clear_page")
    dirty = call("flush_dcache_icache")
    return {state: {"cycles": run.cycles, "instructions": run.instructions,
                    "L2 write-backs": run.caches["L2"]["writebacks"],
                    "L3 write-backs": run.caches["L3"]["writebacks"],
                    "memory writes": run.memory["writes"]}
            for state, run in (("clean", clean), ("just cleared", dirty))}

#: The machine-wide locks of the hash-table code, by the labels that delimit each place
#: one is acquired in routines/ppc64 (.L<lock>_<k> to .L<lock>_<k>_end: the loop that
#: tries, spins, and takes it)
LOCKS = {"hash_table_lock": "2.4's global hash-table lock",
         "tlbie_lock": "the tlbie lock (2.5; in a partition, the hypervisor's)",
         "hpte_lock": "an HPTE's lock bit (2.5)",
         "lpar_tlbie_lock": "pSeries_lpar_tlbie_lock (2.5 in a partition)",
         "hcall": "a hypervisor call's own cycles (in a partition; not a lock)"}


def lock_ranges(machine):
    """{lock: [(start, end), ...]}: where each lock's acquiring loops are in the code."""
    ranges = {lock: [] for lock in LOCKS}
    for program in machine.programs:
        for name, start in program.symbols.items():
            m = re.fullmatch(r"\.L(\w+?)_(\d+)", name)
            if m and m.group(1) in LOCKS and f"{name}_end" in program.symbols:
                ranges[m.group(1)].append((start, program.symbols[f"{name}_end"]))
    return ranges


#: The instructions a flush's cost is made of: the tlbie sequence's (ptesync, tlbie,
#: eieio, tlbsync) and a lock word taken (stwcx.: hash_table_lock or the tlbie lock)
FLUSH_MNEMONICS = ("tlbie", "ptesync", "tlbsync", "eieio", "stwcx.", "stdcx.", "isync",
                   "lwsync")


def range_flush(kernel_name, pages, cores=2, lpar=False):
    """A process's ``pages`` written pages (each with its HPTE) flushed as one range, as
    unmapping them does, on a kernel of ``cores`` CPUs (one CPU: no locks are built in):
    the flush's cycles on CPU 0 alone and the executions of FLUSH_MNEMONICS; ``lpar``: in
    a logical partition (each HPTE removed by an H_REMOVE hypervisor call)."""
    from collections import Counter
    options = _options(kernel_name)
    if not isinstance(pages, int) or pages < 1:
        raise ValueError(f"pages must be a whole number of at least 1, not {pages!r}")
    kernel = workloads.make_kernel(profile="power4", cores=cores, policy=POLICY, lpar=lpar,
                                   **options)
    process = kernel.spawn(workloads.HELLO)
    where = kernel.mmap(process, pages * 4096, "rw")
    kernel.touch_pages(process, where, pages, "w")
    before = kernel.ledger.cycles
    sampled = profiler.profile_run(kernel.machine, lambda: kernel.arch.flush_range(
        process.mm, where, where + pages * 4096), every=997)
    counts = Counter()
    table = sampled.table
    for row in table[table["hits"] > 0].itertuples():
        counts[row.instruction.split()[0]] += row.hits
    return {"kernel": kernel_name, "pages": pages, "lpar": lpar,
            "cycles": kernel.ledger.cycles - before,
            **{m: counts[m] for m in FLUSH_MNEMONICS}}
