"""A compile job and the build's jobs: the build's estimates (BUILD, BUILD_RANGES), the programs
a job execs and the pages it faults in by kind (job_images, page_kinds, job_pages), each
job's user time (job_weights, PASS_SHARES), and how a job run at a scale is set at full size:
each kind of page by its own ratio, each process's events once (page_ratio, back_factors,
per_process_charges, user_fraction)."""
from __future__ import annotations

from ...hw import estimates
from ...kernel import costs
from ...kernel.gcc import compiler
from .job_io import loader_ranges
from .published import FLUSH_ROUTINES


#: The build as scheduled_build runs it. ``user_s`` and ``clock_mhz`` are the first build's
#: time output and machine (data/blanchard2002_time_outputs: an input, the same for every
#: kernel); everything else is an ESTIMATE, its [low, high, why] in BUILD_RANGES.
BUILD = {
    "jobs": 600,        # gcc runs (one .c file each) in the build
    "link_s": 1.0,      # the serial final link (vmlinux, then bzImage's tools), one CPU
    "spread": 0.5,      # a job's user time: (1 - spread .. 1 + spread) x the mean
}
BUILD_RANGES = {
    "jobs": (350, 900, "no count of the objects of 2.4.18 with Martin's config was found: "
                       "a 2.4 i386 server configuration builds several hundred; the one "
                       "counted, 2.4.0-prerelease under arch/i386/defconfig, compiles 353 "
                       "(make_tree.TREE, data/derived/kbuild24_tree.py)"),
    "link_s": (0.3, 2.5, "not printed: ld of a ~1,000-object vmlinux and the boot tools; "
                         "2.5 s is the most the first build's 1957% CPU leaves on 24 CPUs"),
    "spread": (0.0, 0.9, "source files differ in size: from all alike to tenfold apart"),
    "slots": ("14", "cpus", "MAKE=\"make -j14\": each sub-make its own 14 job slots (a -j "
                           "given to a sub-make leaves GNU make's jobserver), so from 14 "
                           "jobs to one per CPU"),
}


#: The kernel's generic paths whose cost is per process, not per page (emu.kernel.costs):
#: a scaled build charges them at 1 / page_ratio(scale) of their cost, so that they take the
#: full build's share of a job's time, and scaled back by page_ratio they count once per
#: process (a process's page tables count here: few, whatever its size)
PER_PROCESS_COSTS = ("fork", "exit", "wait", "exec", "copy_strings", "context_switch",
                     "schedule", "wake_up", "mm_alloc", "vma_setup", "dup_vma", "pgd_alloc",
                     "pmd_alloc", "pte_alloc", "free_pte_page", "free_pmd_page",
                     "flush_range_pmd")
#: The ledger's counts and rows of per-process events: a job has as many at any scale (its
#: four processes' vforks, execs and exits, their system calls, a range flush per VMA at
#: exit), so they are not scaled back
PER_PROCESS_EVENTS = ("forks", "vforks", "execs", "exits", "flush_calls", "syscall")
#: The ledger's rows of a hash miss (a touch that finds no HPTE): in a build, the first
#: store to exec's argument page (copy_strings maps it without an HPTE), one per exec at
#: any scale; a miss beyond one per exec (an evicted HPTE's page touched again) scales with
#: the pages
MISS_ROWS = ("hash_page", "hash_fault_entry")
#: The kinds of page a compile job faults in (page_kinds), which scale apart: a process
#: has at least one data page of each library and program at any scale
PAGE_KINDS = ("text", "data", "anon")
#: The ledger's rows and counts of one kind of page (from the model's fault paths,
#: emu.kernel.fault: a written file page is copied, its copy flushed from the D-cache; an
#: anonymous page is zeroed; both allocate a page and free it at exit; a file page is
#: looked up in the page cache); the others (the hash table's, the flushes', the fault
#: entry's) serve every kind
KIND_ROWS = {"copy_page": ("data",), "flush_dcache_icache": ("data",),
             "cow_copies": ("data",), "pages_flushed": ("data",), "flushed:cow": ("data",),
             "anon_fault": ("anon",), "clear_page": ("anon",), "zeroed_pages": ("anon",),
             "file_fault": ("text", "data"), "page_cache_lookup": ("text", "data"),
             "alloc_page": ("data", "anon"), "free_page": ("data", "anon"),
             "pages_allocated": ("data", "anon"), "pages_freed": ("data", "anon")}
#: KIND_ROWS' rows of the I-cache flushes, whose kind of page is the policy's (flush_kinds)
FLUSH_ROWS = ("flush_dcache_icache", "pages_flushed", "flushed:update_mmu_cache",
              "flushed:exec_fault")
#: The ledger's counts of HPTEs inserted and flushed: one a page hashed, exec's argument
#: pages among them
HPTE_COUNTS = ("hpte_primary", "hpte_secondary", "flush_hash_page", "hpte_invalidated",
               "tlbie", "tlbsync")
#: exec's argument pages (copy_strings writes them and maps them before the program runs):
#: the stack's first pages, which a run's touches include and which never fault
ARGS_PAGES = 1


#: a job's user time, each program's share (ESTIMATE: cc1 compiles, the rest is small)
PASS_SHARES = {"gcc": 0.02, "cpp": 0.13, "cc1": 0.75, "as": 0.10}

#: the golden ratio's fraction: job k's user time weight from its k-th multiple, a
#: deterministic sequence spread evenly over [0, 1) (no random numbers)
_PHI = 0.6180339887498949


def build_ranges():
    """[(name, nominal, low, high, why)] of BUILD's and LOADER's estimates (emu.book.ranges'
    catalog)."""
    return [(f"kernel:build.{k}", v, *BUILD_RANGES[k]) for k, v in BUILD.items()] + \
        loader_ranges()


def job_weights(count, spread):
    """The user-time weights of ``count`` jobs, mean 1, within 1 +- ``spread``."""
    if not 0 <= spread < 1:
        raise ValueError(f"spread must be in [0, 1), not {spread!r}")
    return [1 - spread + 2 * spread * ((k * _PHI) % 1) for k in range(count)]


def job_images(scale):
    """The images a compile job execs at ``scale``: gcc's driver, cpp, cc1 and as."""
    driver, passes = compiler(scale)
    return (driver, *passes)


def page_kinds(image):
    """{kind: pages} a run of ``image`` faults in, by kind: "text" (file pages read),
    "data" (file pages written: a copy-on-write copy each), "anon" (bss, heap and stack:
    a zeroed page each); the stack's less exec's argument pages, which exec maps itself."""
    files = {m["address"]: m.get("file") is not None for m in image.mappings()}
    kinds = dict.fromkeys(PAGE_KINDS, 0)
    for address, pages, access in image.touches():
        kinds["text" if access == "x" else "data" if files.get(address) else "anon"] += pages
    kinds["anon"] -= ARGS_PAGES
    return kinds


def faulted_pages(image):
    """The pages a run of ``image`` faults in: those it touches but exec's argument page."""
    return sum(page_kinds(image).values())


def job_pages(scale):
    """{kind: pages} a compile job faults in at ``scale`` (page_kinds over job_images)."""
    out = dict.fromkeys(PAGE_KINDS, 0)
    for image in job_images(scale):
        for kind, pages in page_kinds(image).items():
            out[kind] += pages
    return out


def page_ratio(scale, kinds=PAGE_KINDS):
    """A job's faulted pages of ``kinds`` at full size over those at ``scale``
    (emu.kernel.gcc rounds each page count to a whole page, at least one: a process's few
    pages, its data pages most, do not shrink with the scale). What scales with the
    images' sizes is scaled back by this, not by 1 / scale."""
    full, small = job_pages(1.0), job_pages(scale)
    return sum(full[k] for k in kinds) / sum(small[k] for k in kinds)


def _part_once(n, fixed, ratio):
    """The factor to full size of ``n`` events a job runs, ``fixed`` of them per process
    (once at any scale), the rest scaling by ``ratio``."""
    fixed = min(n, max(0.0, fixed))
    return ((n - fixed) * ratio + fixed) / n if n else ratio


def back_factors(scale, counts, flushed=("data",)):
    """{ledger row or count: its factor to full size} for a build at ``scale`` whose jobs
    counted ``counts`` each (the ledger's counts per job, as run): per-process events once
    (PER_PROCESS_EVENTS); the rows and counts of one kind of page by page_ratio of their
    kinds (KIND_ROWS); where such counts hold per-process work too, that part once: the
    hash misses on exec's argument pages (one per exec) and their HPTEs and flushes
    (HPTE_COUNTS, FLUSH_ROUTINES), the page tables and argument pages among the pages
    allocated and zeroed. The rest take page_ratio(scale). ``flushed``: the kinds of page
    the I-cache policy flushes (flush_kinds: the chapter's POLICY, copies)."""
    ratio = page_ratio(scale)
    out = {name: page_ratio(scale, kinds) for name, kinds in KIND_ROWS.items()}
    out.update(dict.fromkeys(FLUSH_ROWS, page_ratio(scale, flushed)))
    out.update(dict.fromkeys(PER_PROCESS_EVENTS, 1.0))
    pages = job_pages(scale)
    execs = counts.get("execs", 0)
    args = min(counts.get("tlb_misses", 0), execs * ARGS_PAGES)   # hashed once per exec
    out["tlb_misses"] = _part_once(counts.get("tlb_misses", 0), args, ratio)
    out.update(dict.fromkeys(MISS_ROWS, out["tlb_misses"]))
    hashed = counts.get("tlbie", 0)
    out.update(dict.fromkeys((*HPTE_COUNTS, *FLUSH_ROUTINES), _part_once(hashed, args, ratio)))
    allocated = counts.get("pages_allocated", 0)
    tables = allocated - pages["data"] - pages["anon"]   # page tables and argument pages
    alloc = _part_once(allocated, tables, page_ratio(scale, ("data", "anon")))
    out.update(dict.fromkeys(("alloc_page", "free_page", "pages_allocated", "pages_freed"),
                             alloc))
    zeroed = counts.get("zeroed_pages", 0)
    cleared = tables - execs * ARGS_PAGES            # page tables: cleared, like a bss page
    out["clear_page"] = _part_once(zeroed + cleared, cleared, page_ratio(scale, ("anon",)))
    return out


def user_fraction(scale):
    """The share of a full-size job's user time a job at ``scale`` runs when each page
    touched carries the full size's user time per page (scheduled_build): sum over the
    programs of PASS_SHARES times their touched pages at ``scale`` over those at full size."""
    def touched(image):
        return sum(pages for _, pages, _ in image.touches())
    return sum(PASS_SHARES[small.name] * touched(small) / touched(full)
               for small, full in zip(job_images(scale), job_images(1.0)))


def per_process_charges(scale):
    """{estimate: value}: the generic paths whose cost is per process (PER_PROCESS_COSTS)
    at 1 / page_ratio(scale) of their cost, for a run at ``scale`` whose totals are scaled
    back by page_ratio (so that they count once per process and the run's mix of page and
    per-process work is the full size's); {} at full size."""
    ratio = page_ratio(scale)
    if ratio == 1:
        return {}
    return {f"kernel:costs.{name}": estimates.value(f"kernel:costs.{name}", n) / ratio
            for name, (n, measured, _) in costs.TABLE.items()
            if measured is None and name in PER_PROCESS_COSTS}


def flush_kinds(policy):
    """The kinds of page an I-cache flush policy flushes in a compile job (FLUSH_ROWS,
    emu.kernel.policy): the chapter's pagecache a copy-on-write copy (data: the page-cache
    pages were flushed when the cache was filled); lazy every page written since its last
    flush, the zeroed ones too (data and anon); lazy_exec and sync_exec a page executed
    after it was written (text); eager every page mapped."""
    return {"lazy": ("data", "anon"), "lazy_exec": ("text",), "sync_exec": ("text",),
            "eager": PAGE_KINDS}.get(policy, ("data",))


def scaled_back(per_job, ratio, once):
    """Per-job totals of a scaled build as the full build's: each scaled by ``ratio``
    (page_ratio) but ``once``, {name: factor}, the per-process parts' own factors."""
    return {name: value * once.get(name, ratio) for name, value in per_job.items()}
