"""Dougan 1999, node6 and node10: the book's build workload with the kernel in the BATs or
in the TLB (``bats_build``, ``bats_build_saving``), node6's compile counts
(``node6_counts``, ``bats_compile_saving``), the 603 with and without a hash table
(``hash_table_build_saving``), and the user's and the kernel's TLB conflict
(``kernel_tlb_conflict``)."""
from __future__ import annotations

from ...hw import estimates
from ...hw import profile as hw_profile
from ...kernel import gcc, workloads
from ...kernel.entry import DATA_BASE, ELF_BASE, Entry, NR_EXIT, NR_GETPPID
from ...kernel.vm import PAGE_SIZE
from ...present import data
from ...run import reuse as kept_runs
from .mmu import hash_miss_cost, kernel, reuse
from .syscalls import tlb_misses
from .parts import PARTS

# node6's kernel compile, with the kernel mapped by PTEs and by the BATs: the paper's counts
NODE6_COUNTS = {"tlb_ptes": "TLB misses on the kernel compile, kernel mapped by PTEs (average)",
                "tlb_bats": "TLB misses on the kernel compile, kernel mapped by the BATs (average)",
                "htab_ptes": "hash-table misses on the kernel compile, kernel mapped by PTEs "
                             "(average)",
                "htab_bats": "hash-table misses on the kernel compile, kernel mapped by the BATs "
                             "(average)",
                "wall_ptes": "kernel compile wall-clock time, kernel mapped by PTEs"}
_SCALE = {"million": 1e6, "thousand": 1e3, "minutes": 60.0}


def node6_counts():
    """node6's kernel-compile counts in plain units (misses, seconds)."""
    nodes = data.load("dougan1999_node_numbers").set_index("quantity")
    return {key: float(nodes.loc[q, "value"]) * _SCALE[nodes.loc[q, "unit"].split()[0]]
            for key, q in NODE6_COUNTS.items()}


def bats_compile_saving():
    """What the misses node6 counted on the kernel compile (with the 604's monitor, node4)
    can explain of its 20% shorter
    wall clock with the kernel in the BATs: the TLB misses the BATs saved, each a hardware
    search of the hash table with its lines out of the cache (``reuse``, ``cold``: the
    model's dearest search that finds its PTE), and the hash-table misses saved, each a
    failed search, the hash-miss interrupt and hash_page from cold caches
    (``hash_miss_cost``, 2.2.0's hash_page), as a share of the compile's 10 minutes at the
    profile's clock (Table 3's 133 MHz 604; the paper gives no clock for the compile). Also the same with
    the paper's own per-miss figures (node5: up to 120 cycles a search, at least 91 more
    for the interrupt, hash_page itself not counted). Percentages of the 10 minutes."""
    counts = node6_counts()
    nodes = data.load("dougan1999_node_numbers").set_index("quantity")["value"]
    search = reuse("604", pages=256, passes=1, cold=True)[1][0]["cycles_per_miss"]
    # the compile ran a 1998 kernel: 2.2.0's hash_page, which does not search for the lost
    # HPTE first (no _PAGE_HASHPTE); the search that hits is the same in every kernel
    hash_miss = hash_miss_cost("604", cold=True, flush="context")["cycles_per_miss"]
    paper_search = float(nodes["hardware TLB reload when the PTE is in the hash table (up to)"])
    paper_interrupt = float(nodes["cycles added by the hash-table miss interrupt to invoke "
                                  "its handler (at least)"])
    tlb_saved = counts["tlb_ptes"] - counts["tlb_bats"]
    htab_saved = counts["htab_ptes"] - counts["htab_bats"]
    clock = hw_profile.load("ppc604").clock_mhz
    wall_cycles = counts["wall_ptes"] * clock * 1e6

    def share(per_search, per_hash_miss):
        cycles = (tlb_saved - htab_saved) * per_search + htab_saved * per_hash_miss
        return cycles, 100 * cycles / wall_cycles
    cycles, percent = share(search, hash_miss)
    paper_cycles, paper_percent = share(paper_search, paper_search + paper_interrupt)
    return {"tlb_misses_saved": tlb_saved, "htab_misses_saved": htab_saved,
            "search_cycles": search, "hash_miss_cycles": hash_miss, "clock_mhz": clock,
            "wall_cycles": wall_cycles, "saved_cycles": cycles, "saved_percent": percent,
            "paper_search_cycles": paper_search, "paper_interrupt_cycles": paper_interrupt,
            "paper_saved_cycles": paper_cycles, "paper_saved_percent": paper_percent}


#: the build the "about 20%" runs: the book's build workload (emu.kernel.gcc, the scale the
#: other chapters run: its programs at 1/16 of their estimated sizes, one step measured
#: after one that fills the page cache), 2.2.0's flush (the paper's kernel)
BUILD_SCALE, BUILD_STEPS, BUILD_WARMUP = gcc.SCALE, 1, 1


@kept_runs.unit
def bats_build(bats, machine="603 page table"):
    """The book's kernel-build workload (make -> sh -c -> gcc's driver and its passes,
    then fixdep, rm and mv: 2.5.66's Kbuild rule, emu.kernel.gcc; vfork as GNU make and
    gcc do) on one of ``MACHINES`` under 2.2.0's flush (the 603 walking the page table by
    default; the 604 or the hashed 603), with the kernel in the BATs or (``bats=False``,
    2.2's ``nobats``) through the TLB: the kernel's guest routines (clear_page, copy_page,
    the cache flushes, the TLB flushes) then run translated and take TLB misses of their
    own, in the classes the user's pages use (emu.kernel.ppc603; on the 604 through the
    hash table, a kernel page without an HPTE taking the DSI / ISI and hash_page:
    emu.kernel.ppc604). One compile step's cycles, the user's and the kernel's TLB misses
    and hash-table misses (the hashed MMUs'; the 603 walking the page table has none)."""
    driver, passes = gcc.compiler(BUILD_SCALE)
    with estimates.setup_only():            # its boot: before the measurement
        k = kernel(machine, bats=bats, **({"flush": "context"} if machine == "604" else
                                          {"tlb_flush": "context"}))
    r = workloads.kernel_compile(
        steps=BUILD_STEPS, warmup=BUILD_WARMUP, kernel=k, program=driver, passes=passes,
        parent_image=gcc.make_image(BUILD_SCALE), spawn="vfork",
        shell=gcc.kbuild_shell(driver.libs, BUILD_SCALE))
    return {"bats": bats, "cycles": int(r.cycles),
            "user_tlb_misses": int(r.counts.get("tlb_misses", 0)),
            "kernel_tlb_misses": int(r.counts.get("kernel_tlb_misses", 0)),
            "user_htab_misses": int(r.counts.get("htab_misses", 0)),
            "kernel_htab_misses": int(r.counts.get("kernel_htab_misses", 0)),
            # of the kernel's: the C paths' PTE loads and stores (emu.kernel.ppc604)
            "kernel_c_tlb_misses": int(r.counts.get("kernel_c_tlb_misses", 0)),
            # the C paths' fixed costs (the build's programs do no user work: the rest is
            # the kernel's guest routines and the MMU's hardware)
            "c_path_cycles": int(r.breakdown["cycles"][r.breakdown["kind"] == "fixed"].sum()),
            # the user's miss path: the 603's handler runs that loaded an entry, or the
            # 604's table searches
            "miss_handler_cycles": _rows_cycles(r, ("tlb_miss_603", "table_search")),
            # a hash-table miss's own work: on the 603 the handler's failed search, the
            # DataAccess prologue and hash_page (guest code, one run); on the 604 the
            # DSI / ISI's prologue and hash_page (one run too); and the flushes (the search
            # of a range, or the 603's tlbie)
            "hash_page_cycles": _rows_cycles(r, ("hash_page", "hash_miss_603")),
            "flush_cycles": _rows_cycles(r, PARTS["flush"]),
            # each path charged from the fixed-cost table: {row: (calls, cycles)}, the most
            # called first (the paths whose data takes no TLB or cache miss)
            "c_paths": _fixed_paths(r)}


def _fixed_paths(result):
    """A run's paths charged from the fixed-cost table (emu.kernel.costs): {row: (calls,
    cycles)}, the most called first (ties: the dearer first)."""
    fixed = result.breakdown[result.breakdown["kind"] == "fixed"]
    order = fixed.sort_values(["calls", "cycles"], ascending=False)
    return {row: (int(calls), int(cycles))
            for row, calls, cycles in zip(order.index, order["calls"], order["cycles"])}


def _rows_cycles(result, rows):
    """The cycles a run's ledger charged to ``rows``, summed (a row not charged: 0)."""
    return int(sum(result.breakdown["cycles"].get(row, 0) for row in rows))


def bats_build_saving(machine="604"):
    """The build's time saved by mapping the kernel with the BATs (``bats_build`` with and
    without, by default on the 604, node6's machine), % of the build without them, with
    both runs' counts."""
    with_bats, without = bats_build(True, machine), bats_build(False, machine)
    return {"saved_percent": 100 * (without["cycles"] - with_bats["cycles"]) /
            without["cycles"], "with_bats": with_bats, "without_bats": without}


def hash_table_build_saving():
    """node10's kernel compile "reduced by 5%": the book's build workload on the 603 with
    the kernel in the BATs (``bats_build``), its miss handlers searching a hash table (Linux/PPC
    before the paper) against walking the Linux page table (the paper's handlers, no hash
    table); % of the hashed build's cycles saved, with both runs' counts."""
    hashed, walked = bats_build(True, "603 hash table"), bats_build(True, "603 page table")
    return {"saved_percent": 100 * (hashed["cycles"] - walked["cycles"]) / hashed["cycles"],
            "hash_table": hashed, "page_table": walked}


def kernel_tlb_conflict(pages=48, bats=True, machine="603 page table", passes=(10, 20)):
    """The kernel in BATs or in the TLB (2.2's ``nobats``; emu.kernel.entry): a user program
    loads one word from each of ``pages`` data pages, then makes a null system call, over
    and over. Returns TLB misses and cycles per pass in steady state (the difference of
    runs of ``passes``, after a warm-up; the 604's: its table searches), and the
    HPTEs the prologue's hash_page made for the kernel (hashed MMUs without BATs: per pass
    in steady state, and in the warm-up). With BATs the kernel takes no TLB entry; without,
    its code, stack and data pages share the TLB's classes (and the hash table's groups)
    with the user's."""
    source = f"""
_start:
        mr      r30, r3
pass_loop:
        lis     r9, {DATA_BASE >> 16:#x}
        li      r8, {pages}
        mtctr   r8
page_loop:
        lwz     r7, 0(r9)
        addi    r9, r9, {PAGE_SIZE}
        bdnz    page_loop
        li      r0, {NR_GETPPID}
        sc
        addic.  r30, r30, -1
        bne     pass_loop
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
"""
    k = kernel(machine)
    entry = Entry(k, bats=bats)
    p = entry.spawn(source, "tlb_conflict", data_pages=pages)
    entry.run(p, ELF_BASE, passes[0])
    reloads = [entry.kernel_reloads]
    runs = []
    for n in passes:
        runs.append(entry.run(p, ELF_BASE, n))
        reloads.append(entry.kernel_reloads)
    a, b = runs
    span = passes[1] - passes[0]
    misses = (tlb_misses(b.events) - tlb_misses(a.events)) / span
    return {"machine": machine, "pages": pages, "bats": bats,
            "tlb_misses_per_pass": misses,
            "cycles_per_pass": (b.cycles + b.host_cycles - a.cycles - a.host_cycles) / span,
            "instructions_per_pass": (b.instructions - a.instructions) / span,
            "kernel_hptes_per_pass": ((reloads[2] - reloads[1]) - (reloads[1] - reloads[0]))
            / span,
            "kernel_hptes_warmup": reloads[0]}
