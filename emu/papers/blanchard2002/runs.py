"""make -jN on the model as compile runs: on every CPU a make runs its compile steps
(compile_run), a CompileRun scaled back to full size with the cycles spent acquiring each
lock (CompileRun.lock_table), its profile in the listing's groups (grouped_profile), and one
run summed up in plain values for a sweep (scaling_point)."""
from __future__ import annotations

from ...hw import estimates
from ...kernel import workloads
from ...kernel.gcc import compiler, make_image
from ...run import profiler
from .jobs import PER_PROCESS_COSTS, back_factors, flush_kinds, page_ratio, per_process_charges
from .kernels import FRAMES, LOCKS, POLICY, RAM_SIZE, SCALE, _options, lock_ranges
from .published import PROFILE_GROUPS


def compile_run(kernel_name, cpus, scale=None, steps=2, warmup=1, profile_every=None,
                user_cycles=0, stagger=0, policy=None, lpar=False):
    """make -jN on the model: on every CPU a make starts and runs ``steps`` compile steps
    (make vforks, the gcc driver vforks cpp, cc1 and as in turn), after ``warmup`` steps
    that fill the page cache (not measured); ``kernel_name`` one of KERNELS. With
    ``profile_every`` the measured call (each CPU's make starting, then its steps) is
    sampled every that many cycles on every CPU, readprofile's view. ``user_cycles``: each
    program's own work after its pages, ``stagger`` the cycles between the CPUs' starts
    (kernel_compile); ``policy`` the I-cache flush policy (default POLICY); ``lpar``: in a
    logical partition (hypervisor calls, emu.kernel.ppc64). ``scale`` defaults to SCALE.
    As in scheduled_build, the per-process paths are charged at the pages' scale
    (per_process_charges) and the CompileRun scales each step back to full size by kind of
    page, each process's events once (page_ratio, back_factors); ``user_cycles`` and
    ``stagger`` are cycles of the run as it runs (at ``scale``). A CompileRun."""
    options = _options(kernel_name)
    scale = SCALE if scale is None else scale
    driver, passes = compiler(scale)
    kernel = workloads.make_kernel(profile="power4", policy=policy or POLICY, cores=cpus,
                                   frames=FRAMES, ram_size=RAM_SIZE, lpar=lpar,
                                   **options)
    parent = make_image(scale)

    def run(steps):
        return workloads.kernel_compile(steps=steps, warmup=0, program=driver, passes=passes,
                                        parent_image=parent, spawn="vfork", kernel=kernel,
                                        user_cycles=user_cycles, stagger=stagger)

    with estimates.moved(per_process_charges(scale)):  # the full size's mix, as in a build
        if warmup:
            run(warmup)             # the programs into the page cache, not measured
        if profile_every is None:
            return CompileRun(kernel_name, cpus, scale, steps, run(steps), None, kernel)
        sampled = profiler.profile_run(kernel.machine, lambda: run(steps), every=profile_every)
    return CompileRun(kernel_name, cpus, scale, steps, sampled.run, sampled, kernel)


class CompileRun:
    """One make -jN run of the model: each CPU's Result, and the profile if sampled. Its
    per-step values are scaled back to full size as a scheduled build's are: each ledger
    row and count by its factor (back_factors of the run's counts per step and CPU: a kind
    of page by its own page_ratio, each process's events once), the rest by page_ratio;
    ``run_cycles_per_step`` is the run's own, at its scale."""

    def __init__(self, kernel_name, cpus, scale, steps, result, sampled, kernel):
        self.kernel_name, self.cpus, self.scale, self.steps = kernel_name, cpus, scale, steps
        self.result, self.sampled, self.kernel = result, sampled, kernel
        self.runs = result.runs if hasattr(result, "runs") else [result]
        self.ratio = page_ratio(scale)
        counts = {}
        for r in self.runs:
            for event, n in r.counts.items():
                counts[event] = counts.get(event, 0) + n / (len(self.runs) * steps)
        self.factors = back_factors(scale, counts, flush_kinds(kernel.policy.name))

    def factor(self, name):
        """A ledger row's or count's factor to full size."""
        return self.factors.get(name, self.ratio)

    def _per_step(self, column, rows=None):
        """{ledger row: its ``column`` per compile step and CPU, as run}."""
        out = {}
        for r in self.runs:
            table = r.breakdown if rows is None else r.breakdown[rows(r.breakdown)]
            for name, value in table[column].items():
                out[name] = out.get(name, 0) + int(value) / (len(self.runs) * self.steps)
        return out

    def routines(self):
        """{ledger row: cycles per compile step and CPU}, scaled back to full size."""
        return {name: cycles * self.factor(name)
                for name, cycles in self._per_step("cycles").items()}

    @property
    def cycles_per_step(self):
        """Kernel cycles of one compile step, the mean over the CPUs, scaled back to full
        size: every guest routine's cycles (its waits for locks and for the machine-wide
        tlbie included) and every generic path's fixed cost; the programs' user time is not
        in it."""
        return sum(self.routines().values())

    @property
    def run_cycles_per_step(self):
        """cycles_per_step as the run ran it, at its scale (not scaled back)."""
        return sum(_kernel_cycles(r) for r in self.runs) / (len(self.runs) * self.steps)

    @property
    def elapsed_per_step(self):
        """Each CPU's clock over a step (kernel and user time), the mean, scaled back: the
        kernel's cycles by their factors, the rest of the clock (user time, waits outside
        the kernel) by page_ratio."""
        clock = sum(r.cycles_each for r in self.runs) / len(self.runs)
        return self.cycles_per_step + (clock - self.run_cycles_per_step) * self.ratio

    def guest_cycles_per_step(self):
        """The guest routines' part of cycles_per_step (what the profiler samples)."""
        guest = self._per_step("cycles", lambda b: b["kind"] == "guest")
        return sum(cycles * self.factor(name) for name, cycles in guest.items())

    def run_count(self, event):
        """An event's count per compile step and CPU as run, at the run's scale."""
        return sum(r.counts.get(event, 0) for r in self.runs) / (len(self.runs) * self.steps)

    def count(self, event):
        """An event's count per compile step and CPU (the steps, without make's start),
        scaled back to full size."""
        return self.run_count(event) * self.factor(event)

    def calls(self, routine):
        """A ledger row's calls per compile step and CPU, scaled back to full size (a
        per-process path's once: PER_PROCESS_COSTS, charged at the pages' scale)."""
        once = routine in PER_PROCESS_COSTS
        return self._per_step("calls").get(routine, 0) * (1 if once else self.factor(routine))

    def routine_cycles(self, routine):
        """A routine's cycles per compile step and CPU (the steps, without make's start),
        scaled back to full size."""
        return self.routines().get(routine, 0)

    def lock_table(self):
        """Per lock: the cycles per compile step in its acquiring loops, scaled back (each
        guest routine's scaled-back cycles times the loops' share of that routine's call
        tree, lock_tree, over the sampled window: make's start and the steps), their share
        of the step's kernel cycles, and the acquisitions per CPU over the sampled window as
        run, at the run's scale (NaN for the HPTE bits, whose loops end in a branch): a
        per-page flush takes a lock per page, a batched one per batch, which the scale
        changes apart."""
        import pandas as pd
        if self.sampled is None:
            raise ValueError("lock_table needs a sampled run (compile_run(profile_every=N))")
        table = self.sampled.table
        tree = lock_tree(self.sampled, self.kernel.machine)
        guest = self._per_step("cycles", lambda b: b["kind"] == "guest")
        kernel = self.cycles_per_step
        rows = []
        for lock, spans in lock_ranges(self.kernel.machine).items():
            takes = table[table["address"].isin([end - 4 for _, end in spans])]
            cycles = sum(c * self.factor(name) * _share(tree, name.split(" (")[0], lock)
                         for name, c in guest.items())
            rows.append({"lock": lock, "what": LOCKS[lock],
                         "share of kernel cycles": cycles / kernel,
                         "cycles per step": cycles,
                         "acquisitions per CPU": takes["hits"].sum() / self.cpus
                         if lock not in ("hpte_lock", "hcall") else float("nan")})
        return pd.DataFrame(rows).set_index("lock")


def lock_tree(sampled, machine):
    """The sampled run's call tree (emu.run.profiler.call_tree) with each instruction of a
    lock's acquiring loop put in its lock (LOCKS' names, by lock_ranges); None the rest."""
    spans = [(start, end, lock) for lock, ranges in lock_ranges(machine).items()
             for start, end in ranges]

    def part(row):
        return next((lock for start, end, lock in spans if start <= row.address < end), None)

    return profiler.call_tree(sampled.table, sampled.symbols, {}, part)


def _share(tree, symbol, part):
    """``part``'s share of ``symbol``'s cycles in a call tree (0 if it did not run)."""
    parts = tree.get(symbol, {})
    whole = sum(parts.values())
    return parts.get(part, 0) / whole if whole else 0.0


def _kernel_cycles(result):
    return int(result.breakdown["cycles"].sum())


def grouped_profile(run):
    """Cycles per compile step and CPU of the paper's functions (PROFILE_GROUPS), of the
    rest of the model's kernel, and each one's share of the kernel cycles (a CompileRun's
    routines, scaled back to full size)."""
    import pandas as pd
    cycles = run.routines()                          # per step and CPU, scaled back
    rows, used = {}, set()
    for name, routines in PROFILE_GROUPS.items():
        rows[name] = sum(cycles.get(r, 0) for r in routines)
        used.update(routines)
    rows["the rest of the kernel"] = sum(v for r, v in cycles.items() if r not in used)
    table = pd.DataFrame({"cycles per step": pd.Series(rows)})
    table["share of kernel"] = table["cycles per step"] / table["cycles per step"].sum()
    return table


def scaling_point(kernel_name, cpus, scale=None, steps=1, warmup=1, every=997,
                  user_cycles=0, stagger=0, lpar=False):
    """One make -jN run, summed up in plain values (for emu.run.sweep): cycles per step,
    the lock table, the grouped profile and counts, scaled back to full size as
    CompileRun's are, and the sampled symbols (the run's samples, at its scale); "run
    cycles per step" the run's own."""
    run = compile_run(kernel_name, cpus, scale, steps, warmup, every, user_cycles, stagger,
                      lpar=lpar)
    locks = run.lock_table()
    return {"kernel": kernel_name, "cpus": cpus, "user cycles": user_cycles,
            "cycles per step": run.cycles_per_step,
            "run cycles per step": run.run_cycles_per_step,
            "elapsed per step": run.elapsed_per_step,
            "locks": locks.drop(columns="what").to_dict("index"),
            "profile": grouped_profile(run).to_dict("index"),
            "symbols": run.sampled.by_symbol().set_index("symbol")["samples"].to_dict(),
            "faults": run.count("faults"), "tlbie": run.count("tlbie"),
            "tlbsync": run.count("tlbsync"),
            "file faults": run.calls("file_fault")}


def file_fault_share(run):
    """The share of a CompileRun's page faults that were on pages of files (do_no_page),
    both scaled back to full size."""
    faults = run.count("faults")
    return run.calls("file_fault") / faults if faults else 0.0
