"""Blanchard 2002, "The seven second kernel compile": what the chapter's pages share.

The published side: the three runs' time output and Bligh's two (data/blanchard2002_*),
the checks of the figures the paper derives from them, and the readprofile listing of the
10.31 s run with its shares, also grouped as the model's profile is (``published``).

The model's side: the three kernels the chapter compares (KERNELS: emu.kernel.ppc64's
hash_lock and tlbie options; ``kernels``), gcc 2.95's processes as images (estimates, scaled
down for run time), make -jN on Machine("power4", cores=N) with its profile and the cycles
spent acquiring each lock (compile_run, scaling_point; ``runs``), one range flush counted
instruction by instruction (range_flush; ``kernels``), make -j as a scheduler
(scheduled_build; ``schedule``) with what its jobs are and how a scaled job is set at full
size (``jobs``), what a job reads, writes and loads (``job_io``), when its calls take the
locks (``timeline``), what a job asks of the hash table and what a hash_page call is made of
(hash_account, hash_call_parts, hash_lock_load; ``accounts``), the directories 2.4's
recursive make walks and the compiles of each (``make_tree``), the scaled builds' bias
measured at full size (``fullsize``), and the scorecard's claims (here).

Every name of the modules is also the package's (``blanchard2002.scheduled_build``), as the
chapter's notebooks and tests use them.
"""
from __future__ import annotations

from ...hw import estimates
from ...kernel.gcc import FULL_SIZE, compiler, make_image  # noqa: F401 (the chapter's)
from ...present import data
from ...present.claims import EFFECT, QUANTITY, Claim, not_modelled
# Every name of the modules is the package's too (blanchard2002.<name>, as the
# notebooks, the tests and emu.book read them)
from . import make_tree  # noqa: F401 (2.4's recursive make: its tree)
from .accounts import (FAULT_ENTRY, FLUSH_PARTS, FLUSH_REST, HASH_REST, HPTE_GROUP,
                       HPTE_ROUTINES, MEMORY_MNEMONICS, WAITS, build_groups,
                       by_symbol, flush_account, hash_account, hash_call_parts,
                       hash_lock_load, hash_per_call, listing_flush_per_page,
                       listing_hash_account, measured_parts, measured_share,
                       part_tree, split_shares)  # noqa: F401
from .fullsize import (FLUSH_WAITS, FULL_SIZE_BUILDS, FULL_SIZE_FIRST_BUILD,
                       FULL_SIZE_FIRST_BUILD_HASHED, FULL_SIZE_MEASURED,
                       FULL_SIZE_SECOND_BUILD, FULL_SIZE_SECOND_MEASURED,
                       FULL_SIZE_THIRD_BUILD, SHARES, STALE_TOLERANCE, _bias_note,
                       _second_bias_note, _third_bias_note, as_scheduled,
                       full_size_values, scale_bias)  # noqa: F401
from .job_io import (BINPRM_BUF_SIZE, ELF32_EHDR, ELF32_PHDR, EXEC_ROWS,
                     FILE_IO_ROUTINE, FILE_IO_ROUTINES, FILE_IO_ROWS, LOADER,
                     LOADER_RANGES, job_calls, job_exec_io, job_file_io,
                     loader_ranges)  # noqa: F401
from .jobs import (ARGS_PAGES, BUILD, BUILD_RANGES, FLUSH_ROWS, HPTE_COUNTS,
                   KIND_ROWS, MISS_ROWS, PAGE_KINDS, PASS_SHARES, PER_PROCESS_COSTS,
                   PER_PROCESS_EVENTS, back_factors, build_ranges, faulted_pages,
                   flush_kinds, job_images, job_pages, job_weights, page_kinds,
                   page_ratio, per_process_charges, scaled_back, user_fraction)  # noqa: F401
from .kernels import (FLUSH_MNEMONICS, FRAMES, FULL_FRAMES, FULL_RAM_SIZE, KERNELS,
                      LOCKS, LPAR, MIDDLE, NEW, OLD, POLICY, PROFILED, RAM_SIZE,
                      SCALE, THIRD, VARIANTS, _options, icache_flush_anatomy,
                      lock_ranges, memory_for, range_flush)  # noqa: F401
from .published import (FLUSH_ROUTINES, PROFILE_GROUPS, SPLIT, SPLIT_ROWS, builds,
                        cpu_percent_check, listing_floor, published_groups,
                        published_profile)  # noqa: F401
from .runs import (CompileRun, compile_run, file_fault_share, grouped_profile,
                   lock_tree, scaling_point)  # noqa: F401
from .schedule import (ELAPSED_MISSING, FAULT_TIMINGS, PAGE_BYTES, build_job_cycles,
                       build_schedule, list_schedule, recursive_make, recursive_schedule,
                       scheduled_build, with_file_io)  # noqa: F401
from .timeline import (HASH_CALLS, RANGE_FLUSH, flush_meetings, flush_waits)  # noqa: F401

CHAPTER = "Blanchard 2002"

PAGES = {"published": "notebooks/blanchard2002/01-published",
         "make": "notebooks/blanchard2002/03-make-j",
         "left out": "notebooks/blanchard2002/04-what-is-left-out"}


def _make_note(*named):
    """An elapsed row's statement of what 2.4's recursive make does to each ``named`` build
    ((name, a scheduled build)): its compile phase against one make -j over the same jobs
    (the chapter's schedule before session 28), and its ld -r's seconds."""
    parts = [f"the {name} build's {b['compile_s'] - b['flat compile_s']:+.2f} s "
             f"(its ld -r's {b['ld -r cycles'] / (b['clock_mhz'] * 1e6):.2f} CPU s in all)"
             for name, b in named]
    return ("; 2.4's recursive make (make_tree: 2.4.0-prerelease's directories, each make its "
            "own -j14 slots, a directory's objects after its subdirectories', then its "
            "ld -r) moves the compile phase's end, against one make -j over the same jobs "
            "(the chapter's schedule before): " + ", ".join(parts))

def claims(scale=None):
    """The chapter's claims beside the model's values (emu.present.claims), from make -j as
    a scheduler on the model (scheduled_build: 2.4's locking on 24 CPUs, 2.5.7 on 32, one
    job slot per CPU, gcc's user time between its faults, in a logical partition as the
    paper's two builds: LPAR): the system times, the first build's profile, the elapsed
    times (the first build's user time an input), each job's file read() and write() and
    its processes' loading added (job_file_io, job_exec_io, with_file_io); the third build
    as THIRD runs it;
    Bligh's, which the model cannot run (not modelled)."""
    runs = builds().set_index("run")
    io, loading = job_file_io(), job_exec_io()
    old = with_file_io(scheduled_build(OLD, 24, scale=scale), io, loading)
    new = with_file_io(scheduled_build(NEW, 32, scale=scale), io, loading)
    first, second, third = (runs.loc[r] for r in ("p690_10.31", "p690_7.52", "p690_4.83"))
    model, published = build_groups(old, split=False), published_groups()
    flushes = ["local_flush_tlb_range", "local_flush_tlb_page"]
    inputs = ("the first build's user time is the model's input (the same for both), the "
              "job count and the link are estimates")
    scaled = (SCALE if scale is None else scale) == SCALE

    nominal = not estimates.current()          # the bias was measured at the nominal ones
    today = {"system_s": old["system_s"], "elapsed_s": old["elapsed_s"],
             "__hash_page": 100 * model.loc["__hash_page", "share of kernel"],
             "flushes": 100 * model.loc[flushes, "share of kernel"].sum()}

    def bias(name, what):
        return _bias_note(name, what, today[name] if nominal else None) if scaled else ""

    def second_bias(name, what):
        return _second_bias_note(name, what) if scaled else ""

    def third_bias(what):
        return _third_bias_note(what) if scaled else ""
    out = [
        Claim(CHAPTER, "system time: 2.5.7 on 32 CPUs / 2.4's locking on 24", kind=EFFECT,
              neutral=1, digits=3, unit="", published=second.system_s / first.system_s,
              published_from=(first.system_s, second.system_s),
              emulated=new["system_s"] / old["system_s"], page=PAGES["make"],
              source="time outputs (sections 4 and 5.3)",
              reason="make -j scheduled, user time between the faults, in a partition: "
                     "every HPTE insert and removal a hypervisor call, whose cost is an "
                     "estimate that moves this ratio more than any other (its range on the "
                     "scorecard)" + bias("system_s", "system time, this ratio's denominator,")
                     + second_bias("system_s", "system time")),
        Claim(CHAPTER, "system time of the first build (2.4's locking, 24 CPUs)",
              kind=QUANTITY, unit="s", digits=1, published=float(first.system_s),
              emulated=old["system_s"], page=PAGES["make"],
              source="time output (section 4)",
              reason="the model's kernel has the faults, exec, fork and exit and their "
                     "hypervisor calls (cost estimated) and each job's file read() and "
                     "write() copies (their traffic estimated) and exec's and ld.so's reads "
                     "of the binaries, not the other system calls (open, stat, brk, mmap: "
                     "path look-ups, the dentry cache); the job count is an estimate; the "
                     "programs run at SCALE, each kind of page scaled back by its own ratio "
                     "and each process's events counted once (page_ratio, back_factors): a "
                     "job's counts are the full size's, the cost of an event not quite "
                     "(page 04's account)" + bias("system_s", "system time")),
        Claim(CHAPTER, "__hash_page's share of the kernel's ticks (24 CPUs)", kind=QUANTITY,
              unit="%", digits=1,
              published=100 * published.loc["__hash_page", "share of kernel"],
              emulated=100 * model.loc["__hash_page", "share of kernel"],
              source="readprofile listing (section 4.1)", page=PAGES["make"],
              reason="the lock's wait is in hash_page in both; the model's hash_page also "
                     "holds its hypervisor calls, which the listing counts apart "
                     "(hpte_create_valid_pSeriesLP, plpar_hcall; the chapter's profile "
                     "shows the model's plpar_hcall apart too); the model's kernel lacks "
                     "much of the rest (the listing's last row)"
                     + bias("__hash_page", "__hash_page share (%)")),
        Claim(CHAPTER, "the TLB flushes' share of the kernel's ticks (24 CPUs)",
              kind=QUANTITY, unit="%", digits=1,
              published=100 * published.loc[flushes, "share of kernel"].sum(),
              emulated=100 * model.loc[flushes, "share of kernel"].sum(),
              source="readprofile listing (section 4.1)", page=PAGES["make"],
              reason="2.4 takes hash_table_lock for every unmapped page and, in a "
                     "partition, calls the hypervisor under it; the model counts that in the "
                     "flush, the listing in flush_hash_page (too few ticks to be listed; the "
                     "chapter's profile splits the scan from it); "
                     "sync and hcall costs are estimates" + bias("flushes", "flushes' share (%)")),
        Claim(CHAPTER, "elapsed time: 2.5.7 on 32 CPUs / 2.4's locking on 24", kind=EFFECT,
              neutral=1, digits=2, unit="", published=float(second.elapsed_s /
                                                            first.elapsed_s),
              published_from=(first.elapsed_s, second.elapsed_s),
              emulated=new["elapsed_s"] / old["elapsed_s"], page=PAGES["make"],
              source="time outputs (sections 4 and 5.3)",
              reason="the compile phase (the build's jobs, each its user time and the "
                     "measured jobs' kernel time, run as 2.4's recursive make on the CPUs: "
                     "its critical path) and the serial link: " + inputs
                     + _make_note(("first", old), ("second", new))
                     + bias("elapsed_s", "elapsed time, this ratio's denominator,")
                     + second_bias("elapsed_s", "elapsed time") + ELAPSED_MISSING),
        Claim(CHAPTER, "elapsed time of the first build (2.4's locking, 24 CPUs)",
              kind=QUANTITY, unit="s", digits=2, published=float(first.elapsed_s),
              emulated=old["elapsed_s"], page=PAGES["make"],
              source="time output (section 4)",
              reason="mostly its user time over 24 CPUs, its jobs run as 2.4's recursive "
                     "make until the last directory is linked, then the link: " + inputs
                     + _make_note(("first", old)) + bias("elapsed_s", "elapsed time")
                     + ELAPSED_MISSING),
    ]
    third_build = with_file_io(scheduled_build(**THIRD, scale=scale,
                                               clock_mhz=float(third.clock_mhz)), io,
                               loading)
    machine = (f"2.5.7's kernel (the third is not named) on 32 CPUs at "
               f"{float(third.clock_mhz) / 1000:.1f} GHz, no partition: the kernel writes "
               "its HPTEs and runs its tlbies itself")
    out += [
        Claim(CHAPTER, "system time: the 4.83 s run / the 7.52 s run", kind=EFFECT, neutral=1,
              unit="", digits=3, page=PAGES["make"],
              published=float(third.system_s / second.system_s),
              published_from=(second.system_s, third.system_s),
              emulated=third_build["system_s"] / new["system_s"],
              source="time outputs (sections 5.3 and 6)",
              reason=machine + "; against the partitioned 2.5.7: no hypervisor calls, and the "
                     "same kernel cycles are fewer seconds at the faster clock; whatever "
                     "else the third kernel changed is not in the model"
                     + third_bias("the ratio")),
        Claim(CHAPTER, "system time of the third build (32 CPUs, 1.3 GHz, no partition)",
              kind=QUANTITY, unit="s", digits=1, published=float(third.system_s),
              emulated=third_build["system_s"], page=PAGES["make"],
              source="time output (section 6)",
              reason=machine + "; as for the first build, the model's kernel has the "
                     "jobs' file read() and write() copies but not the other system calls' "
                     "work" + third_bias("the system time")),
        Claim(CHAPTER, "elapsed time: the 4.83 s run / the 7.52 s run", kind=EFFECT, neutral=1,
              unit="", digits=2, page=PAGES["make"],
              published=float(third.elapsed_s / second.elapsed_s),
              published_from=(second.elapsed_s, third.elapsed_s),
              emulated=third_build["elapsed_s"] / new["elapsed_s"],
              source="time outputs (sections 5.3 and 6)",
              reason="the compile phase (the jobs run as 2.4's recursive make on 32 CPUs, "
                     "its critical path) and the serial link, both at the "
                     "faster clock: the first build's user time and the link's cycles are "
                     "inputs (the third build printed less user time than that at its "
                     "clock), the job count and the link estimates"
                     + _make_note(("second", new), ("third", third_build)) + ELAPSED_MISSING),
        Claim(CHAPTER, "elapsed time of the third build (32 CPUs, 1.3 GHz, no partition)",
              kind=QUANTITY, unit="s", digits=2, published=float(third.elapsed_s),
              emulated=third_build["elapsed_s"], page=PAGES["make"],
              source="time output (section 6)",
              reason="mostly the first build's user time (the model's input) over 32 CPUs "
                     "at 1.3 GHz, its jobs run as 2.4's recursive make until the last "
                     "directory is linked, then the link: " + inputs
                     + _make_note(("third", third_build)) + ELAPSED_MISSING),
    ]
    bligh = data.load("blanchard2002_bligh").set_index("run")["elapsed_s"]
    out.append(not_modelled(
        CHAPTER, "Bligh's NUMA-Q build: patched / 2.4.18 elapsed time", kind=EFFECT,
        neutral=1, unit="", published=float(bligh["bligh_patched"] / bligh["bligh_2.4.18"]),
        published_from=tuple(bligh), source="section 2", page=PAGES["published"],
        missing="an x86 build: the 16-way NUMA-Q's 700 MHz Pentium IIIs, its NUMA memory "
                "and 2.4.18's x86 paging (a page table the hardware walks, no hash table, "
                "so none of the ppc64 locks the model runs) have no profile or kernel in "
                "the model, and Bligh's patches (NUMA memory allocation and scheduling, "
                "section 2) are not listed: neither build can run"))
    return out


#: Published numbers of the chapter's data that are context, not results
CONTEXT = {
    "blanchard2002_readprofile": "the listing behind the two share claims",
    "blanchard2002_page_faults": "the builds' fault counts, which the papers state and "
                                 "do not discuss as results",
    "blanchard2002_text_numbers": "the machine's facts, the profile's settings and the text "
                                  "restating the time outputs",
    ("blanchard2002_time_outputs", "user_s"): "user time: the first build's is the "
                                              "model's input (scheduled_build)",
    ("blanchard2002_time_outputs", "cpus"): "the machine",
    ("blanchard2002_time_outputs", "clock_mhz"): "the machine",
    ("blanchard2002_time_outputs", "cpu_percent"): "the CPUs busy, which the text restates",
    ("blanchard2002_bligh", "cpus"): "the machine",
    ("blanchard2002_bligh", "clock_mhz"): "the machine",
    ("blanchard2002_bligh", "ram_gb"): "the machine",
    ("blanchard2002_bligh", "make_j"): "the build's setting",
}
