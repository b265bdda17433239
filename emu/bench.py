"""How fast the model is (``python -m emu bench``), in sections that print as they go:

* ``startup``: CPU and wall seconds for a new process to reach its first result (import,
  ``Machine("ppc750")``, assemble and run ``flush_dcache_icache`` on a page), cold (a fresh
  copy of the sources: the native model is compiled and Python's bytecode written, as on
  the first run after an install) and warm (a later process);
* ``smp``: cycles per locked add on 1-32 cores at several quanta (emu.run.parallel), the
  critical section's floor, and the wall time;
* ``call``: CPU microseconds of one ``Machine.call`` of an empty routine (one instruction,
  the return) against Unicorn's own start and stop of one instruction (a ``nop``, on a
  Unicorn of the same CPU model without hooks), measured in the same run: what a guest call
  costs above the emulator's floor;
* ``kernel``: CPU seconds of kernel-model workloads (many short guest calls);
* ``scorecard``: wall and CPU seconds of the book's scorecard, its claims alone and with
  their ranges under the model's estimates (emu.book.ranges), cold and warm, and the re-runs;
* ``copy``: throughput of the instrumented model against bare Unicorn, per ISA. Three runs
  execute the same word-copy loop over the same buffers: a plain Unicorn with no hooks
  (raw), the same with native hooks that do nothing on every RAM access and block (the
  ceiling of any per-access model), and a ``Machine`` with the profile's L1 + L2 (and L3)
  cache model and the cost model on (instrumented). The figure is guest memory accesses
  per second. Where the two buffers sit matters to Unicorn itself (see LAYOUTS), so each
  layout is measured.
"""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from unicorn import (
    UC_HOOK_BLOCK,
    UC_HOOK_MEM_READ,
    UC_HOOK_MEM_WRITE,
    UC_HOOK_TLB_FILL,
    UC_PROT_ALL,
)

from .book.scorecard import RANGES_GROUPING
from .context import routine
from .hw import cache as c
from .hw import native
from .hw.layout import HALT
from .hw.mmu import page_table
from .kernel import workloads
from .run.calling import set_arguments
from .run.emulator import new_unicorn
from .run.machine import Machine

# One word-copy loop per ISA: dst, src, number of words. Two accesses per iteration.
COPY_LOOPS = {
    "ppc32": ("ppc750", """
copy_words:
    mtctr r5
1:  lwz   r6, 0(r4)
    stw   r6, 0(r3)
    addi  r4, r4, 4
    addi  r3, r3, 4
    bdnz  1b
    blr
"""),
    "ppc64": ("power4", """
copy_words:
    mtctr r5
1:  ld    r6, 0(r4)
    std   r6, 0(r3)
    addi  r4, r4, 8
    addi  r3, r3, 8
    bdnz  1b
    blr
"""),
    "arm": ("cortex-a9", """
copy_words:
1:  ldr   r3, [r1], #4
    str   r3, [r0], #4
    subs  r2, r2, #1
    bne   1b
    bx    lr
"""),
    "x86": ("pentium4", """
copy_words:
    movl  4(%esp), %edi
    movl  8(%esp), %esi
    movl  12(%esp), %ecx
1:  movl  (%esi), %eax
    movl  %eax, (%edi)
    addl  $4, %esi
    addl  $4, %edi
    decl  %ecx
    jnz   1b
    ret
"""),
}


# Where the destination buffer sits. "adjacent": right after the source, so that each source
# page and its destination page, 256 pages (1 MiB) apart, share an entry of QEMU's
# direct-mapped 256-entry soft TLB: every access of the bare run goes through QEMU's victim
# TLB or a refill, which slows raw Unicorn 2.2-2.9x here. "offset": one page further, so that
# they do not collide. The instrumented run pays for the collision too, but it is a smaller
# share of its time; so the ratio is higher and the rate lower with "adjacent".
LAYOUTS = {"adjacent": 0, "offset": 4096}


def place_buffers(machine, size, layout):
    """(source, destination) of ``size`` bytes each, placed as ``layout`` says."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    src = machine.alloc(size)
    if LAYOUTS[layout]:
        machine.alloc(LAYOUTS[layout])
    return src, machine.alloc(size)


def _timed(function, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def _bare_unicorn(machine, isa, hooks):
    """The same CPU model, memory and code in a Unicorn of its own: no hooks at all, or
    native hooks that do nothing (on RAM accesses and blocks, as the model's are)."""
    uc = new_unicorn(machine.profile)
    uc.mem_map(0x1000, machine.ram_size - 0x1000, UC_PROT_ALL)
    uc.mem_write(0x1000, machine.read(0x1000, 0x100000 - 0x1000))
    if isa == "ppc64":
        native.add_hook(uc, UC_HOOK_TLB_FILL, native.identity_tlb_fill, machine.state)
    if hooks:
        native.add_hook(uc, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, native.empty_memory_hook,
                        machine.state, 0, machine.ram_size - 1)
        native.add_hook(uc, UC_HOOK_BLOCK, native.empty_block_hook, machine.state)
    return uc


@dataclass
class Throughput:
    """Guest memory accesses per second of one copy, three ways."""
    raw: float              # bare Unicorn
    empty_hooks: float      # native hooks that do nothing: the ceiling of per-access hooks
    instrumented: float     # the cache and cost model on
    accesses: int           # per timed run
    counted: int            # the L1 D accesses the model counted in one run


def measure(isa, buffer_bytes=1 << 20, passes=4, repeat=5, mmu=False, layout="adjacent"):
    """Throughput of the copy loop on ``isa``; with ``mmu`` the TLBs and the hashed page
    table walker are on too (every page mapped). ``layout``: see LAYOUTS."""
    cpu, source = COPY_LOOPS[isa]
    machine = Machine(cpu, ram_size=64 << 20, mmu=mmu)
    machine.load(source)
    word = 8 if isa == "ppc64" else 4
    words = buffer_bytes // word
    src, dst = place_buffers(machine, buffer_bytes, layout)
    if mmu:
        page_table(machine)
    entry = machine.address_of("copy_words")

    def instrumented():
        """One timed run; returns the L1 D accesses the model counted in it."""
        return sum(machine.call("copy_words", dst, src, words).caches["L1D"]["accesses"]
                   for _ in range(passes))

    def bare(uc):
        def run():
            for _ in range(passes):
                set_arguments(machine.isa, uc, (dst, src, words), machine.stack_top)
                uc.emu_start(entry, HALT)
        return run

    runs = {"raw": bare(_bare_unicorn(machine, isa, False)),
            "empty_hooks": bare(_bare_unicorn(machine, isa, True)),
            "instrumented": instrumented}
    runs["raw"]()                         # compile and warm every run before timing
    runs["empty_hooks"]()
    counted = instrumented()
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):               # interleaved, so that machine noise hits all alike
        for name, run in runs.items():
            best[name] = min(best[name], _timed(run, 1))
    accesses = 2 * words * passes
    return Throughput(*(accesses / best[name] for name in runs), accesses, counted)


MMU_ROWS = ("ppc32", "ppc64")      # the hashed page tables (32- and 64-bit)


COPY_HEADER = ("| ISA | profile | layout | raw Unicorn | empty native hooks | instrumented "
               "| instrumented / raw | instrumented / empty hooks |",
               "|---|---|---|---:|---:|---:|---:|---:|")


def copy_rows(isas=("ppc32", "ppc64", "arm", "x86"), layouts=tuple(LAYOUTS), repeat=5,
              **options):
    """The copy table, a line at a time as each row is measured (every ISA, and with the
    MMU on where it is modelled, in each layout)."""
    yield from COPY_HEADER
    runs = [(isa, False) for isa in isas] + [(isa, True) for isa in MMU_ROWS if isa in isas]
    for layout in layouts:
        for isa, mmu in runs:
            t = measure(isa, mmu=mmu, layout=layout, repeat=repeat, **options)
            label = f"{isa} + MMU on" if mmu else isa
            yield (f"| {label} | {COPY_LOOPS[isa][0]} | {layout} | {t.raw / 1e6:.1f} "
                   f"| {t.empty_hooks / 1e6:.1f} | {t.instrumented / 1e6:.1f} "
                   f"| {t.instrumented / t.raw:.2f} | {t.instrumented / t.empty_hooks:.2f} |")
    yield ""
    yield f"M guest memory accesses per second (best of {repeat})."


def report(isas=("ppc32", "ppc64", "arm", "x86"), layouts=tuple(LAYOUTS), repeat=5,
           **options):
    """The copy table as one text."""
    return "\n".join(copy_rows(isas, layouts, repeat, **options))


# ------------------------------------------------------------------------------ start-up

FIRST_RESULT = """
import emu
from emu import Machine
m = Machine("ppc750")
m.load(emu.routine("ppc32/flush_dcache_icache.S"))
run = m.call("flush_dcache_icache", m.alloc(4096))
assert run.instructions == 777, run
"""


def _child_seconds(code, **popen):
    """(CPU seconds, wall seconds) of ``python -c code`` in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          **popen)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"the start-up probe failed:\n{done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime), wall


def fresh_copy(into):
    """A copy of the emu sources with nothing built (no native library, no bytecode) and
    the one routine the probe runs: what a first run after an install starts from."""
    package = Path(__file__).resolve().parent
    shutil.copytree(package, Path(into) / "emu", ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", ".model-build.lock"))
    target = Path(into) / "routines" / "ppc32"
    target.mkdir(parents=True)
    shutil.copy(routine("ppc32/flush_dcache_icache.S"), target)
    return Path(into)


def startup(repeat=5):
    """{"cold": (cpu, wall), "warm": (cpu, wall)}: seconds to the first result. Cold: one
    run in a fresh copy of the sources (it compiles the native model, as pip install does,
    and writes the bytecode); warm: the best of ``repeat`` runs of the installed package."""
    with tempfile.TemporaryDirectory() as tmp:
        root = fresh_copy(tmp)
        env = dict(os.environ, PYTHONPATH=str(root))
        cold = _child_seconds(FIRST_RESULT, cwd=root, env=env)
    warm = min((_child_seconds(FIRST_RESULT) for _ in range(repeat)), key=lambda t: t[0])
    return {"cold": cold, "warm": warm}


def startup_rows(repeat=5):
    yield "| start-up to the first result | CPU s | wall s |"
    yield "|---|---:|---:|"
    times = startup(repeat)
    yield (f"| cold: a fresh copy of the sources (compiles the native model) "
           f"| {times['cold'][0]:.2f} | {times['cold'][1]:.2f} |")
    yield f"| warm: a later process (best of {repeat}) | {times['warm'][0]:.2f} " \
          f"| {times['warm'][1]:.2f} |"


SECTIONS = {"startup": startup_rows, "copy": copy_rows}


# ------------------------------------------------------------------------- several cores

LOCK_CPUS = (("power4", "ppc32"), ("cortex-a9", "arm"))
LOCK_CORES = (1, 2, 4, 8, 16, 32)
LOCK_QUANTA = (10, 100, 1000)


@dataclass
class LockedAdds:
    """n cores x ``adds`` locked adds (routines/<isa>/spin_lock_add.S) at one quantum."""
    cycles_per_add: float   # the machine's cycles (the slowest core) / all adds
    floor: int              # base cycles of the critical section: no add can take less
    instructions: int
    wall: float             # seconds
    slices: int             # times a core was started (emu.run.parallel): the scheduler's work


def locked_adds(cpu, isa, cores, quantum, adds=100, repeat=1):
    """One contended run (a fresh machine); ``wall``: the best of ``repeat`` such runs, each
    on a fresh machine (the same cycles every time: runs are deterministic)."""
    walls = []
    for _ in range(repeat):
        machine = Machine(cpu, cores=cores)
        program = machine.load(routine(f"{isa}/spin_lock_add.S"))
        lock, counter = machine.alloc(4), machine.alloc(4)
        start = time.perf_counter()
        run = machine.run_parallel([("locked_adds", lock, counter, adds)] * cores,
                                   quantum=quantum)
        walls.append(time.perf_counter() - start)
        if machine.read_word(counter) != adds * cores:
            raise RuntimeError(f"{cpu}, {cores} cores: the counter lost increments")
    wall = min(walls)
    costs = machine.state[machine.state[c.H_ICOST]:]
    held, released = (program.symbols[s] - machine.code_base for s in
                      ("locked_adds_held", "locked_adds_released"))
    return LockedAdds(run.cycles / (adds * cores), int(costs[released] - costs[held]),
                      run.instructions, wall,
                      sum(r.events.get("slices", 1) for r in run.runs))  # one core: one call


def smp_rows(cpus=LOCK_CPUS, cores=LOCK_CORES, quanta=LOCK_QUANTA, adds=100, repeat=3):
    """Cycles per locked add for 1-32 cores at several quanta (emu.run.parallel): they should
    not depend on the quantum, nor fall below the critical section's base cycles."""
    yield ("| profile | cores | " + " | ".join(f"cycles/add, quantum {q}" for q in quanta) +
           " | spread | critical section | slices/add | guest insn/slice | wall s (all quanta) "
           "| guest M insn/s |")
    yield "|---|---:|" + "---:|" * len(quanta) + "---:|---:|---:|---:|---:|---:|"
    for cpu, isa in cpus:
        for n in cores:
            results = [locked_adds(cpu, isa, n, q, adds, repeat) for q in quanta]
            per_add = [r.cycles_per_add for r in results]
            wall = sum(r.wall for r in results)
            rate = sum(r.instructions for r in results) / wall / 1e6
            slices = sum(r.slices for r in results)
            yield (f"| {cpu} | {n} | " + " | ".join(f"{x:.1f}" for x in per_add) +
                   f" | {max(per_add) / min(per_add) - 1:.2%} | {results[0].floor} "
                   f"| {slices / (len(results) * adds * n):.1f} "
                   f"| {sum(r.instructions for r in results) / slices:.1f} "
                   f"| {wall:.2f} | {rate:.1f} |")
    yield ""
    yield (f"{adds} locked adds per core; spread: (largest - smallest) / smallest over the "
           "quanta (cycles); slices: the times a core was started (uc_emu_start), over all "
           f"quanta; wall: each quantum's best of {repeat} runs, each on a fresh machine.")


def independent_copies(isa, cores, quantum, size=64 << 10, repeat=3):
    """Each core copies a buffer of its own (the copy loop of COPY_LOOPS): (cycles of the
    slowest core in the first run after a warming one, guest instructions per second in
    the best of ``repeat`` such runs)."""
    cpu, source = COPY_LOOPS[isa]
    machine = Machine(cpu, cores=cores, ram_size=64 << 20)
    machine.load(source)
    calls = []
    for _ in range(cores):
        src, dst = machine.alloc(size), machine.alloc(size)
        calls.append(("copy_words", dst, src, size // (8 if isa == "ppc64" else 4)))
    machine.run_parallel(calls, quantum=quantum)         # warm the caches and the code
    runs, walls = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        runs.append(machine.run_parallel(calls, quantum=quantum))
        walls.append(time.perf_counter() - start)
    return runs[0].cycles, runs[0].instructions / min(walls)


def copies_rows(isas=("ppc32", "arm"), cores=32, quanta=(10, 100, 1000)):
    """Cores that share nothing but the L2: the quantum decides how finely their accesses
    interleave there, so it shows in the cycles once a core's lead exceeds the time it
    takes to use a line (lax synchronisation's error); and it decides the speed."""
    yield ("| profile | cores | " + " | ".join(f"cycles, quantum {q}" for q in quanta) +
           " | " + " | ".join(f"M insn/s, quantum {q}" for q in quanta) + " |")
    yield "|---|---:|" + "---:|" * (2 * len(quanta))
    for isa in isas:
        results = [independent_copies(isa, cores, q) for q in quanta]
        yield (f"| {COPY_LOOPS[isa][0]} | {cores} | " +
               " | ".join(f"{cycles:,}" for cycles, _ in results) + " | " +
               " | ".join(f"{rate / 1e6:.1f}" for _, rate in results) + " |")
    yield ""
    yield ("Each core copies 64 KB of its own, word by word (the copy loop above); cycles of "
           "the first run after a warming one, speed of the best of 3.")


def smp_all_rows():
    yield from smp_rows()
    yield ""
    yield from copies_rows()


SECTIONS["smp"] = smp_all_rows


# ------------------------------------------------------------------------ kernel workloads

KERNEL_WORKLOADS = (("lat_proc shell", "ppc750", 1), ("lat_proc shell", "ppc405gp", 1),
                    ("kernel_compile", "ppc405gp", 1),
                    # the SMP kernel (emu.run.parallel.run_tasks): each CPU's Python a task
                    ("lat_proc fork", "cortex-a9", 4), ("lat_proc fork", "power4", 8))


def kernel_seconds(name, profile, cpus=1, repeat=3):
    """(CPU seconds, guest calls) of one run of a kernel-model workload (emu.kernel), best of
    ``repeat`` after a warm-up: these make many short guest calls, so Python's share of
    each call shows. ``cpus`` > 1: LMBench's -P, a copy per CPU (lat_proc only)."""
    run = {"lat_proc shell": lambda: workloads.lat_proc("shell", profile=profile, cpus=cpus),
           "lat_proc fork": lambda: workloads.lat_proc("fork", profile=profile, cpus=cpus),
           "kernel_compile": lambda: workloads.kernel_compile(profile=profile)}[name]
    calls = [0]
    original = Machine.call

    def counted(self, *args, **kwargs):
        calls[0] += 1
        return original(self, *args, **kwargs)
    run()
    best = float("inf")
    Machine.call = counted
    try:
        for _ in range(repeat):
            calls[0] = 0
            start = time.process_time()
            run()
            best = min(best, time.process_time() - start)
    finally:
        Machine.call = original
    return best, calls[0]


def kernel_rows(workloads=KERNEL_WORKLOADS):
    yield "| workload | profile | CPUs | CPU s | guest calls | us per call |"
    yield "|---|---|---:|---:|---:|---:|"
    for name, profile, cpus in workloads:
        seconds, calls = kernel_seconds(name, profile, cpus)
        yield (f"| {name} | {profile} | {cpus} | {seconds:.2f} | {calls:,} "
               f"| {seconds / calls * 1e6:.0f} |")


SECTIONS["kernel"] = kernel_rows


# ------------------------------------------------------------------------ one guest call

# each ISA's one-instruction routine: a nop for Unicorn alone, then the return Machine.call runs
EMPTY_ROUTINES = {"ppc32": ("ppc750", "one_nop:\n    nop\nempty:\n    blr\n"),
                  "ppc64": ("power4", "one_nop:\n    nop\nempty:\n    blr\n"),
                  "arm": ("cortex-a9", "one_nop:\n    nop\nempty:\n    bx lr\n"),
                  "x86": ("pentium4", "one_nop:\n    nop\nempty:\n    ret\n")}


def call_micros(isa, calls=5000, repeat=5):
    """(CPU us per ``Machine.call`` of an empty routine, CPU us per bare ``emu_start`` of one
    instruction), best of ``repeat`` interleaved rounds of ``calls`` each."""
    profile, source = EMPTY_ROUTINES[isa]
    machine = Machine(profile)
    machine.load(source)
    nop, empty = machine.address_of("one_nop"), machine.address_of("empty")
    uc = _bare_unicorn(machine, isa, hooks=False)

    def guest_calls():
        for _ in range(calls):
            machine.call("empty")

    def bare_starts():
        for _ in range(calls):
            uc.emu_start(nop, empty)

    runs = {"call": guest_calls, "bare": bare_starts}
    best = dict.fromkeys(runs, float("inf"))
    for run in runs.values():              # warm: translate the blocks, fill the caches
        run()
    for _ in range(repeat):                # interleaved, so that machine noise hits both
        for name, run in runs.items():
            start = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - start)
    return best["call"] / calls * 1e6, best["bare"] / calls * 1e6


def task_call_micros(isa="arm", cores=4, calls=5000, repeat=5):
    """CPU us per ``Machine.call`` of an empty routine from a task of ``run_tasks`` (one
    core's Python on a machine of ``cores``: how the SMP kernel model calls), best of
    ``repeat`` rounds of ``calls``."""
    profile, source = EMPTY_ROUTINES[isa]
    machine = Machine(profile, cores=cores)
    machine.load(source)

    def task(_):
        for _ in range(calls):
            machine.call("empty")
    machine.run_tasks([task])                # warm
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        machine.run_tasks([task])
        best = min(best, time.process_time() - start)
    return best / calls * 1e6


def call_rows(isas=tuple(EMPTY_ROUTINES)):
    yield "| ISA | profile | Machine.call, us | bare emu_start, us | call / bare |"
    yield "|---|---|---:|---:|---:|"
    bare_of = {}
    for isa in isas:
        call, bare = call_micros(isa)
        bare_of[isa] = bare
        yield (f"| {isa} | {EMPTY_ROUTINES[isa][0]} | {call:.1f} | {bare:.1f} "
               f"| {call / bare:.1f} |")
    if "arm" in bare_of:
        call = task_call_micros("arm")
        yield (f"| arm, from a task of 4 cores | cortex-a9 | {call:.1f} | {bare_of['arm']:.1f} "
               f"| {call / bare_of['arm']:.1f} |")
    yield ""
    yield ("CPU microseconds per call, best of 5 rounds of 5,000; issue 35's aim: a call "
           "within 2x of the bare start. The last row calls from a task of "
           "emu.run.parallel.run_tasks, as the SMP kernel model does.")


SECTIONS["call"] = call_rows


# -------------------------------------------------------------------------- the scorecard

SCORECARD_PROBE = """
import json, time
from emu.book import scorecard
from emu.run import sweep
if __name__ == "__main__":
    timing = {{}}
    start = time.perf_counter()
    card = scorecard.scorecard(ranges={grouping!r}, timing=timing, reuse_runs={reuse!r})
    summary = scorecard.range_summary(card) if {grouping!r} else {{}}
    print(json.dumps({{"seconds": time.perf_counter() - start, "claims": len(card),
                      "timing": timing, "workers_cpu_s": sweep.workers_cpu_s(), **summary}},
                     default=str))
"""


def scorecard_seconds(grouping, cache_folder, reuse=True):
    """(CPU seconds, wall seconds, the probe's report) of the book's scorecard in a new
    process (its claims, with their ranges moved by ``grouping``, or None for the claims
    alone; ``reuse``: a move re-runs only the runs it reaches, emu.run.reuse), the ranges
    kept in ``cache_folder``: an empty one is the cold case. The probe runs from a file, so
    that emu.run.sweep's pool runs it (a script read from ``-c`` sweeps in the caller).
    The CPU is the probe's (RUSAGE_CHILDREN) and its sweep workers' (emu.run.sweep's
    ``workers_cpu_s``: the pool's workers are the fork server's children, not reaped with
    the probe, and getrusage never sees them)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "scorecard_probe.py"
        script.write_text(SCORECARD_PROBE.format(grouping=grouping, reuse=reuse))
        env = dict(os.environ, EMU_RANGES_CACHE=str(cache_folder))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=env)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"the scorecard probe failed:\n{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    import json
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return cpu + report["workers_cpu_s"], wall, report


#: the scorecard's runs measured: (label, grouping, reuse): the claims alone, the ranges as
#: before emu.run.reuse (by source, each move re-running a chapter's whole claims), and the
#: book's (RANGES_GROUPING, a move re-running only the runs it reaches)
SCORECARD_RUNS = (("claims alone", None, True),
                  ("ranges by source, whole re-runs (before)", "source", False),
                  ("ranges as the book moves them, runs reused", RANGES_GROUPING, True))


def scorecard_rows(runs=SCORECARD_RUNS):
    """The scorecard's wall and CPU time (the probe's and its pool workers'), alone and with
    its ranges, cold (an empty ranges cache) and warm (the same sources: the cache read), the
    re-runs the ranges took and the CPU of the claims and of the moves as each run measured
    its own, and the units the moves ran and reused. Issue 35's budget: the scorecard
    with its ranges in 60 s of wall time, cold."""
    yield ("| scorecard | cache | wall s | CPU s | workers' CPU s (claims + moves) | re-runs "
           "| units run / reused | claims | with a range | paper inside |")
    yield "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for label, grouping, reuse in runs:
        with tempfile.TemporaryDirectory() as cache:
            for state in ("cold", "warm") if grouping else ("cold",):
                cpu, wall, report = scorecard_seconds(grouping, cache, reuse)
                t = report["timing"]
                workers = "" if not grouping or t.get("cached") else \
                    f"{sum(t['nominal_cpu_s'].values()):.0f} + {t['moves_cpu_s']:.0f}"
                units = "" if not grouping or t.get("cached") else \
                    f"{t['units_run']} / {t['units_reused']}"
                yield (f"| {label} | {state} | {wall:.1f} | {cpu:.1f} | {workers} "
                       f"| {t.get('runs', 0) if grouping else 0} | {units} "
                       f"| {report['claims']} | {report.get('ranged', '')} "
                       f"| {report.get('inside', '')} |")


SECTIONS["scorecard"] = scorecard_rows


# ------------------------------------------------------------------------------ the page

def marker(section, end=False):
    return f"<!-- {'/' if end else ''}bench:{section} -->"


def write_page(path, section, lines, when=None):
    """Put ``lines`` (a section's table, as printed) into the Markdown page at ``path``
    between its markers ``<!-- bench:SECTION -->`` and ``<!-- /bench:SECTION -->``, with the
    date and the machine. ``section`` None only checks that the page has every section's
    markers (before a long measurement, so that a wrong page is refused at once)."""
    page = Path(path)
    text = page.read_text()
    for name in SECTIONS if section is None else (section,):
        if text.count(marker(name)) != 1 or text.count(marker(name, True)) != 1 or \
                text.index(marker(name)) > text.index(marker(name, True)):
            raise ValueError(f"{path}: the page needs one {marker(name)} ... "
                             f"{marker(name, True)} pair for the {name} section")
    if section is None:
        return
    when = when or time.strftime("%d %B %Y")
    stamp = (f"Measured on {when}, on {os.cpu_count()} cores (`python -m emu bench "
             f"--section {section} --page {path}`).")
    start = text.index(marker(section)) + len(marker(section))
    end = text.index(marker(section, True))
    body = "\n".join(line for line in lines).strip("\n")
    page.write_text(text[:start] + "\n" + body + "\n\n" + stamp + "\n" + text[end:])
