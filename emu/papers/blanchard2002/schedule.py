"""make -j as a scheduler on the model (scheduled_build): job slots on the CPUs, gcc's passes
with their user time between their faults; the build's jobs (build_job_cycles) scheduled as
2.4's recursive make (make_tree's directories, each make its own -j14 slots, a directory's
objects after its subdirectories', then its ld -r: recursive_make, recursive_schedule) or as
one make -j over them all (list_schedule), then the serial link; a build with each job's
file I/O and loading added (with_file_io)."""
from __future__ import annotations

import collections
import heapq
import itertools

from ...hw import estimates
from ...kernel import workloads
from ...kernel.gcc import make_image
from ...kernel.percpu import cpu
from ...run import profiler, reuse
from ...run.parallel import current_task
from . import make_tree
from .accounts import flush_account, hash_per_call, measured_share, part_tree, split_shares
from .job_io import EXEC_ROWS, FILE_IO_ROWS
from .jobs import (BUILD, PASS_SHARES, back_factors, job_images, job_weights, page_ratio,
                   per_process_charges, scaled_back, user_fraction)
from .kernels import LPAR, POLICY, SCALE, _options, memory_for
from .published import builds
from .timeline import _record_lock_calls


#: What the elapsed times' compile phase leaves out (each elapsed claim says so)
ELAPSED_MISSING = ("; not in the model: each job's own kernel time (every job has the "
                   "measured jobs' mean), the makes' own work (reading the Makefiles and "
                   ".depend, a shell forked for each command) and 2.4.18's own tree (with "
                   "Martin's config, which no source gives: 2.4.0-prerelease's under the "
                   "i386 defconfig stands in, its shape scaled to the estimated job count)")


#: Where a program's user time falls among its faults in scheduled_build: the chapter's
#: (the image's touches in order, each region's pages faulted back to back, then the user
#: time of those pages), and the bound of every fault at exec
FAULT_TIMINGS = {"as_touched": "each touched region's faults in a row, then its user time",
                 "at_exec": "every fault at exec, then all the program's user time",
                 "per_page": "each touched page's fault, then its user time"}


class _PageAtATime:
    """An image whose touched regions come a page at a time (FAULT_TIMINGS' per_page: the
    shortest stretches of faults, the same at any scale)."""

    def __init__(self, image):
        self._image = image

    def __getattr__(self, name):
        return getattr(self._image, name)

    def touches(self):
        return [(address + k * PAGE_BYTES, 1, access)
                for address, pages, access in self._image.touches() for k in range(pages)]


PAGE_BYTES = 4096


@reuse.unit
def scheduled_build(kernel_name, cpus, slots=None, scale=None, build=None, lpar=LPAR,
                    clock_mhz=None, faults="as_touched", timeline=False, ties=None):
    """make -j on the model as a scheduler: ``slots`` job slots (default one per CPU, see
    BUILD_RANGES) on ``cpus`` CPUs, the others idle. Each slot's first job fills the page
    cache (not measured); then ``cpus`` measured jobs start as slots free. A job is gcc's
    driver and its passes, each program's user time spent between its faults (its share of
    the job's, spread over the pages it touches). The images at ``scale``, each page they
    touch with the full size's user time, and the per-process paths charged at the scale of
    the pages (PER_PROCESS_COSTS), so that the mix of user, page and per-process work is the
    full build's; the totals are scaled back by page_ratio(scale) but the per-process
    events and misses, which a job has as many of at any scale (PER_PROCESS_EVENTS,
    MISS_ROWS): each counted once per job, as at full size. ``lpar``: in a logical partition, as the first two builds ran (LPAR).
    ``clock_mhz``: the CPUs' clock (default the first build's, 1,100): the user cycles and
    the link's are the first build's at its clock, in seconds at this one (the same work
    at a faster clock; the profile's latencies stay in core cycles). A dict: kernel cycles
    per job, the build's user and system time, its compile phase (the build's jobs,
    build_job_cycles: the measured jobs' mean cycles beyond their user time and each job's
    own user time, less its share of the directories' ld -r's; scheduled as 2.4's
    recursive make on the CPUs: recursive_make, recursive_schedule) and elapsed time
    (compile phase + the serial link, which needs every job's object), %CPU, each job's
    cycles ("job cycles"), the ld -r's ("ld -r cycles", in all) and the kernel's routines;
    "flat compile_s", the compile phase as one make -j``slots`` over the jobs with their
    whole user time ("flat job cycles": list_schedule, the chapter's before session 28).
    ``faults``: where a program's
    user time falls among its faults (FAULT_TIMINGS): "as_touched" (the chapter's), or
    "at_exec", all of it after the program's last fault (every fault in one burst at exec:
    a bound, to measure what bursts do to the locks), or "per_page", each page's fault then
    its user time (stretches of one fault, whatever the scale). ``timeline``: also give
    "timeline", the lock-taking calls (cpu, start, end, routine: _record_lock_calls) and
    the measured jobs (cpu, start, end), on the CPUs' clocks, and each flush's pages
    (flush_meetings and flush_waits read it). ``ties``: how the scheduler orders CPUs at
    the same cycle (emu.run.parallel.TIES; default the machine's, the lower-numbered CPU
    first): which of the spinning CPUs one store wakes takes the lock."""
    options = _options(kernel_name)
    slots = _checked(cpus, slots, faults)
    scale = SCALE if scale is None else scale
    build = {**{k: estimates.value(f"kernel:build.{k}", v) for k, v in BUILD.items()},
             **(build or {})}
    first = builds().set_index("run").loc["p690_10.31"]
    first_clock = float(first.clock_mhz) * 1e6
    clock = first_clock if clock_mhz is None else float(clock_mhz) * 1e6
    if not clock > 0:
        raise ValueError(f"clock_mhz must be positive, not {clock_mhz!r}")
    user_per_job = (float(first.user_s) - build["link_s"]) * first_clock / build["jobs"]
    link_s = build["link_s"] * first_clock / clock    # the link's cycles, at this clock
    user_s = float(first.user_s) * first_clock / clock
    driver, *passes = job_images(scale)
    ratio = page_ratio(scale)
    parent_image = make_image(scale)
    frames, ram_size = memory_for(scale)
    kernel = workloads.make_kernel(profile="power4", policy=POLICY, cores=cpus,
                                   frames=frames, ram_size=ram_size, lpar=lpar, **options)
    if ties is not None:
        kernel.machine.ties = ties
    per_page = {image.name: PASS_SHARES[image.name] * user_per_job /
                max(1, sum(p for _, p, _ in image.touches()))
                for image in job_images(1.0)}        # the full size's, per page touched
    weight, user, pending = {}, {}, {}               # the running job's, per CPU

    def user_work(image, pages):
        cycles = round(per_page.get(image.name, 0) * pages * weight.get(cpu(), 0))
        user[cpu()] = user.get(cpu(), 0) + cycles
        if faults == "at_exec":
            pending[cpu()] = pending.get(cpu(), 0) + cycles
        else:
            current_task().spend(cycles)

    def run_program(process, image):
        kernel.exec(process, _PageAtATime(image) if faults == "per_page" else image)
        current_task().spend(pending.pop(cpu(), 0))  # "at_exec": its user time after them

    kernel.user_work = user_work
    calls, measured_jobs, flushed = [], [], []
    if timeline:
        _record_lock_calls(kernel, calls, flushed)
    weights = job_weights(slots + cpus, build["spread"])
    queue = list(range(slots, slots + cpus))         # the measured jobs, in make's order

    def job(parent, w):
        weight[cpu()] = w
        child = kernel.vfork(parent)
        run_program(child, driver)
        for image in passes:
            grandchild = kernel.vfork(child)
            run_program(grandchild, image)
            kernel.exit(grandchild)
            kernel.wait(child, grandchild)
        kernel.exit(child)
        kernel.wait(parent, child)

    def slot(t):
        whole = kernel.ledger.snapshot()             # the slot's whole run, profiled
        parent = kernel.spawn(parent_image)
        job(parent, weights[cpu()])                  # the page cache filled
        out = {"jobs": 0, "kernel": 0, "busy": 0, "user": 0, "routines": {}, "tlbie": 0,
               "counts": {}, "calls": {}}
        while queue:
            w = weights[queue.pop(0)]
            before, start, ran = kernel.ledger.snapshot(), t.clock, user.get(cpu(), 0)
            job(parent, w)
            measured_jobs.append((cpu(), start, t.clock))
            _add_job(out, kernel.ledger.since(before), t.clock - start,
                     user.get(cpu(), 0) - ran)
        out["run calls"] = {name: row[1] for name, row in kernel.ledger.since(whole).rows.items()}
        return out

    with estimates.moved(per_process_charges(scale)):
        sampled = profiler.profile_run(kernel.machine,
                                       lambda: kernel.machine.run_tasks([slot] * slots))
    per_slot = sampled.run
    jobs, measured, counts = _per_job(per_slot)
    once = back_factors(scale, counts)
    routines = scaled_back(measured, ratio, once)
    counts = scaled_back(counts, ratio, once)
    kernel_in = sum(s["kernel"] for s in per_slot) / jobs
    kernel_per_job = kernel_in * ratio - sum(cycles * (ratio - once[r])
                                             for r, cycles in measured.items() if r in once)
    user_in = sum(s["user"] for s in per_slot) / jobs
    waits = sum(s["busy"] for s in per_slot) / jobs - kernel_in - user_in
    busy_per_job = kernel_per_job + user_in / user_fraction(scale) + waits * ratio
    tree = part_tree(sampled, kernel.machine)
    seen = measured_share(per_slot, jobs)
    system_s = build["jobs"] * kernel_per_job / clock
    # each of the build's jobs: the measured jobs' mean beyond their user time, and its own
    schedule = build_schedule(busy_per_job - user_in / user_fraction(scale), user_per_job,
                              build["link_s"] * first_clock, build, cpus=cpus, slots=slots,
                              clock_mhz=clock / 1e6, link_s=link_s, user_s=user_s,
                              system_s=system_s)
    return {"kernel": kernel_name, "cpus": cpus, "slots": slots, "scale": scale, "lpar": lpar,
            "clock_mhz": clock / 1e6, "jobs": build["jobs"],
            "kernel cycles per job": kernel_per_job, "cycles per job": busy_per_job,
            "user cycles per job": user_per_job, "user_s": user_s, "system_s": system_s,
            "link_s": link_s, **schedule,
            "routines": routines, "counts per job": counts,
            "split": split_shares(sampled, kernel.machine, seen, measured, routines),
            "flushed pages per job": counts.get("tlbie", 0),
            "page ratio": ratio,
            "flush account": flush_account(tree, seen, measured, routines),
            "hash per call": hash_per_call(sampled, kernel.machine, tree),
            **({"timeline": {"calls": calls, "jobs": measured_jobs, "flushed": flushed}}
               if timeline else {})}


def _checked(cpus, slots, faults):
    """scheduled_build's ``slots`` (default one per CPU), its arguments checked."""
    if faults not in FAULT_TIMINGS:
        raise ValueError(f"faults must be one of {[*FAULT_TIMINGS]}, not {faults!r}")
    slots = cpus if slots is None else slots
    if not 1 <= slots <= cpus:
        raise ValueError(f"slots must be from 1 to cpus ({cpus}), not {slots!r}")
    return slots


def _add_job(out, spent, busy, user):
    """One measured job added to its slot's totals: the ledger's ``spent`` over the job,
    the cycles it took on its CPU (``busy``) and its user cycles."""
    out["jobs"] += 1
    out["kernel"] += spent.cycles
    out["busy"] += busy
    out["user"] += user
    out["tlbie"] += spent.counts.get("tlbie", 0)
    for event, n in spent.counts.items():
        out["counts"][event] = out["counts"].get(event, 0) + n
    for name, (_, calls, cycles, _) in spent.rows.items():
        out["routines"][name] = out["routines"].get(name, 0) + cycles
        out["calls"][name] = out["calls"].get(name, 0) + calls


def _per_job(per_slot):
    """The measured jobs' count, and their routines' cycles and events per job (as run)."""
    jobs = sum(s["jobs"] for s in per_slot)
    measured, counts = {}, {}
    for s in per_slot:
        for name, cycles in s["routines"].items():
            measured[name] = measured.get(name, 0) + cycles / jobs
        for event, n in s["counts"].items():
            counts[event] = counts.get(event, 0) + n / jobs
    return jobs, measured, counts


def build_job_cycles(other_cycles, user_per_job, jobs, spread):
    """The cycles of each of a build's ``jobs`` (rounded to a whole job), in make's order:
    ``other_cycles`` each (a job's kernel time and its waits outside it) and its own user
    time, ``user_per_job`` times its weight (job_weights: job k's at any count, so the jobs
    a scheduled build runs are the build's first)."""
    return [other_cycles + user_per_job * w
            for w in job_weights(int(round(jobs)), spread)]


def list_schedule(durations, slots):
    """The time make -j``slots`` takes to run jobs of ``durations`` (cycles), in make's order:
    each job starts when a slot frees, on the slot that frees first (the lowest-numbered at a
    tie), as GNU make starts its next job when one ends; the end of the last one (the
    compile phase's critical path; the link, which needs every object, starts then)."""
    if slots < 1:
        raise ValueError(f"slots must be at least 1, not {slots!r}")
    free = [(0, slot) for slot in range(slots)]      # (when it frees, the slot)
    end = 0
    for cycles in durations:
        if cycles < 0:
            raise ValueError(f"a job's cycles must not be negative, not {cycles!r}")
        at, slot = heapq.heappop(free)
        heapq.heappush(free, (at + cycles, slot))
        end = max(end, at + cycles)
    return end


class _Make:
    """One make of a recursive build: its phases, each a list of jobs started in order as
    its ``slots`` free, the next phase once all of one are done (first_rule: sub_dirs, then
    all_targets; in all_targets the objects, then the ld -r). A job is cycles on a CPU, or
    a _Make (a sub-make, which holds its parent's slot until it ends)."""

    def __init__(self, phases, slots):
        self.phases = [list(phase) for phase in phases]
        self.slots, self.parent, self.running, self.queue = slots, None, 0, None


class _Run:
    """A recursive_schedule's state: the jobs waiting for a CPU ((cycles, their make), first
    come first served) and when the top make ended."""

    def __init__(self):
        self.ready, self.end = collections.deque(), None


def _start(make, now, run):
    """Start ``make``'s next phase that has jobs; with none left, ``make`` ends."""
    while make.phases:
        make.queue = collections.deque(make.phases.pop(0))
        if make.queue:
            _fill(make, now, run)
            return
    if make.parent is None:
        run.end = now
    else:
        _job_done(make.parent, now, run)


def _fill(make, now, run):
    """Start ``make``'s next jobs while it has a free slot."""
    while make.queue and make.running < make.slots:
        job = make.queue.popleft()
        make.running += 1
        if isinstance(job, _Make):
            job.parent = make
            _start(job, now, run)
        else:
            run.ready.append((job, make))


def _job_done(make, now, run):
    """One of ``make``'s jobs ended at ``now``: its slot takes the next job, or, the phase
    done, the next phase starts."""
    make.running -= 1
    if make.queue:
        _fill(make, now, run)
    elif not make.running:
        _start(make, now, run)


def recursive_schedule(top, cpus):
    """The cycles a recursive build (``top``, a _Make, and its sub-makes) takes on ``cpus``
    CPUs: each make starts its jobs in its order as its slots free; a compile or a link then
    waits for a CPU (first come, first served) and runs there to its end. Its end is the
    top make's. Each _Make runs once."""
    if cpus < 1:
        raise ValueError(f"cpus must be at least 1, not {cpus!r}")
    run, running, order, free, now = _Run(), [], itertools.count(), cpus, 0
    _start(top, now, run)
    while True:
        while free and run.ready:
            cycles, make = run.ready.popleft()
            if cycles < 0:
                raise ValueError(f"a job's cycles must not be negative, not {cycles!r}")
            heapq.heappush(running, (now + cycles, next(order), make))
            free -= 1
        if not running:
            return run.end
        now, _, make = heapq.heappop(running)
        free += 1
        _job_done(make, now, run)


def recursive_make(job_cycles, link_cycles, slots=make_tree.MAKE_J, tree=None):
    """The top _Make of 2.4's recursive make (make_tree) for a build whose compile jobs take
    ``job_cycles`` (in make's order: make_tree.make_order; the tree's shape, their number:
    make_tree.tree_jobs) and whose serial link takes ``link_cycles``: each directory's make
    runs its subdirectories' makes side by side, then a make of its objects and its ld -r,
    which reads as much per object as the link does (``link_cycles`` over the tree's
    compiles: make_tree.ld_r_share). ``tree``: (TREE, SUBDIRS, TOP_OBJECTS), default
    make_tree's."""
    tree, subdirs, top = tree or (make_tree.TREE, make_tree.SUBDIRS, make_tree.TOP_OBJECTS)
    counts = make_tree.tree_jobs(len(job_cycles), tree, subdirs, top)
    linked = make_tree.linked_objects(tree)
    per_object = link_cycles / make_tree.compiles(tree, top)
    jobs = iter(job_cycles)

    def take(n):
        return [next(jobs) for _ in range(n)]

    def directory(path):
        _, subs, _ = tree[path]
        below = [directory(f"{path}/{sub}") for sub in subs]     # first_rule: sub_dirs
        targets = [take(counts[path])]                            # then all_targets
        if linked[path]:
            targets.append([per_object * linked[path]])           # ld -r (or ar)
        return _Make([below, [_Make(targets, slots)]], slots)

    own = take(counts[""])
    return _Make([own + [directory(path) for path in subdirs]], slots)


def build_schedule(other_cycles, user_per_job, link_cycles, build, **machine):
    """A build's compile phases (_compile_phases' dict) from its jobs' cycles beyond their
    user time (``other_cycles``), their mean user time (``user_per_job``) and the link's
    cycles, ``build`` BUILD's values (jobs, spread), ``machine`` the rest _compile_phases
    reads (cpus, slots, clock_mhz, link_s, user_s, system_s). The directories' ld -r's read
    make_tree.ld_r_share of the link's objects; their cycles come out of the compiles' user
    time, each job's by its weight (the first build's user time holds them; the measured
    jobs keep theirs)."""
    ld_r = link_cycles * make_tree.ld_r_share()
    jobs, spread = build["jobs"], build["spread"]
    weights = sum(job_weights(int(round(jobs)), spread))      # each job's share by weight
    return _compile_phases({
        "job cycles": build_job_cycles(other_cycles, user_per_job - ld_r / weights, jobs,
                                       spread),
        "flat job cycles": build_job_cycles(other_cycles, user_per_job, jobs, spread),
        "link cycles": link_cycles, "ld -r cycles": ld_r, **machine})


def _compile_phases(build):
    """{"compile_s", "flat compile_s", "elapsed_s", "cpu_percent", and the inputs}: a build's
    (scheduled_build's dict, or the parts of it named here) compile phase as 2.4's recursive
    make (recursive_make of its "job cycles" and "link cycles" on its "cpus"), and as one
    make -j"slots" over its "flat job cycles" (list_schedule); the elapsed time, the
    recursive phase then the serial link, and %CPU."""
    clock = build["clock_mhz"] * 1e6
    top = recursive_make(build["job cycles"], build["link cycles"])
    compile_s = recursive_schedule(top, build["cpus"]) / clock
    elapsed_s = compile_s + build["link_s"]
    return {**{k: build[k] for k in ("job cycles", "flat job cycles", "link cycles",
                                     "ld -r cycles")},
            "compile_s": compile_s, "elapsed_s": elapsed_s,
            "flat compile_s": list_schedule(build["flat job cycles"], build["slots"]) / clock,
            "cpu_percent": 100 * (build["user_s"] + build["system_s"]) / elapsed_s}


def with_file_io(build, io, loading=None):
    """A scheduled build (scheduled_build's dict) with each job's file I/O (job_file_io's
    dict ``io``) and, if given, its processes' loading (job_exec_io's ``loading``) added:
    their cycles in the job's kernel time (FILE_IO_ROWS and EXEC_ROWS in the routines), the
    system time, each job's cycles and the compile phases (a job's CPU is busy for them:
    _compile_phases again), the elapsed time and %CPU recomputed. A new dict."""
    rows = {row: io[part] for part, row in FILE_IO_ROWS.items()}
    if loading is not None:
        rows.update({row: loading[part] for part, row in EXEC_ROWS.items()})
    added = sum(rows.values())
    clock = build["clock_mhz"] * 1e6
    out = dict(build)
    out["routines"] = {**build["routines"], **rows}
    out["kernel cycles per job"] = build["kernel cycles per job"] + added
    out["cycles per job"] = build["cycles per job"] + added
    out["system_s"] = build["system_s"] + build["jobs"] * added / clock
    for jobs in ("job cycles", "flat job cycles"):
        out[jobs] = [cycles + added for cycles in build[jobs]]
    out.update(_compile_phases(out))
    out["file I/O cycles per job"] = added
    return out
