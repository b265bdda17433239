"""The profile's accounting of a scheduled build: what its jobs ask of the hash table and what a
hash_page call is made of (hash_account, hash_call_parts, hash_lock_load; what the listing
implies, listing_hash_account), the sampled run's parts (part_tree: the locks' waits, the
hypervisor calls, the tlbie sequence, the HPTE group) carried over to the measured jobs
(measured_parts, split_shares, flush_account, hash_per_call), and the kernel's cycles in the
listing's groups (build_groups)."""
from __future__ import annotations

from ...hw import estimates
from ...run import profiler
from .jobs import BUILD
from .kernels import lock_ranges
from .published import FLUSH_ROUTINES, PROFILE_GROUPS, SPLIT, SPLIT_ROWS, builds, published_groups


def hash_account(build):
    """What a scheduled build's jobs ask of the hash table, per job (scaled back to full
    size): page faults, hash_page's calls (the preloads of update_mmu_cache after a fault,
    and the misses that find no HPTE), HPTEs inserted and evicted, pages flushed, and
    hash_page's cycles (PROFILE_GROUPS' __hash_page) per call. {name: value}."""
    counts = build["counts per job"]
    calls = counts.get("preloads", 0) + counts.get("tlb_misses", 0)
    hashing = sum(build["routines"].get(r, 0) for r in PROFILE_GROUPS["__hash_page"])
    return {"page faults": counts.get("faults", 0),
            "hash_page after a fault (preload)": counts.get("preloads", 0),
            "hash misses (no HPTE)": counts.get("tlb_misses", 0),
            "HPTEs inserted": counts.get("hpte_primary", 0) + counts.get("hpte_secondary", 0),
            "HPTEs evicted": counts.get("hpte_evicted", 0),
            "pages flushed": build["flushed pages per job"],
            "hash_page cycles per call": hashing / calls if calls else float("nan"),
            "hash_page cycles per job": hashing}


#: The part of a hash_page call that is the fault entry's fixed cost (a ledger row of
#: PROFILE_GROUPS' __hash_page, not guest code)
FAULT_ENTRY = "the hash fault's entry (fixed cost)"


def hash_call_parts(build):
    """{part: cycles per hash_page call} of a scheduled build (hash_account's calls): the
    parts of the guest hash_page that are not hash_table_lock's wait at their mean per call
    over the sampled run (hash_per_call: the hypervisor calls' own cost, the HPTE group's
    loads and stores, ...; the same in every call, whoever waits), the lock's wait the rest
    of the measured jobs' cycles per call (the sampled run starts with every slot's first
    job at once, whose waits are not the measured jobs'), and the fault entry's fixed
    cost; they sum to hash_account's cycles per call."""
    counts = build["counts per job"]
    calls = counts.get("preloads", 0) + counts.get("tlb_misses", 0)
    if not calls:
        raise ValueError("the build made no hash_page call")
    guest = sum(build["routines"].get(r, 0) for r in ("hash_page", "hash_page (preload)"))
    wait = FLUSH_PARTS["hash_table_lock"]
    out = {part: cycles for part, cycles in build["hash per call"].items() if part != wait}
    out[wait] = guest / calls - sum(out.values())
    out[FAULT_ENTRY] = build["routines"].get("hash_fault_entry", 0) / calls
    return out


def hash_lock_load(build, cpus):
    """How busy 2.4's hash_table_lock is in a scheduled build of ``cpus`` CPUs, over its
    compile phase (jobs x cycles per job / slots), in CPUs on average: "waiting", the CPUs
    spinning for it (hash_page's and the flushes' hash_table_lock parts); "in hash_page",
    the CPUs in the guest hash_page and its entry; "held at most", the lock's share of the
    phase if it were held for every cycle of a call and of a flushed page that is not the
    wait (an upper bound: hash_page walks the page table before taking it). And the most
    CPUs that can wait, ``cpus`` - 1."""
    parts = hash_call_parts(build)
    counts = build["counts per job"]
    calls = counts.get("preloads", 0) + counts.get("tlb_misses", 0)
    wait = FLUSH_PARTS["hash_table_lock"]
    flushes = build["flush account"]
    phase = build["cycles per job"] / build["slots"]       # per job, in machine time
    held = (calls * (sum(parts.values()) - parts.get(wait, 0))
            + sum(flushes.values()) - flushes.get(wait, 0))
    return {"waiting": (calls * parts.get(wait, 0) + flushes.get(wait, 0)) / phase,
            "in hash_page": calls * sum(parts.values()) / phase,
            "held at most": held / phase, "most waiting": cpus - 1}


def listing_hash_account(build):
    """What the paper implies per job for the same rows (hash_account's), where it can: the
    page faults per job of the second and third builds' time output (major + minor: the
    first build's were not printed) over the build's job count (an estimate: BUILD), and
    __hash_page's cycles per job and per call from the listing's share of the first
    build's system time at its clock (per call: if the build made as many hash_page calls
    per fault as the model's ``build``). {name: value}."""
    runs = builds().set_index("run")
    jobs = build["jobs"]
    first = runs.loc["p690_10.31"]
    faults = {run: float(runs.loc[run, "major_faults"] + runs.loc[run, "minor_faults"]) / jobs
              for run in ("p690_7.52", "p690_4.83")}
    share = published_groups().loc["__hash_page", "share of kernel"]
    hashing = share * float(first.system_s) * float(first.clock_mhz) * 1e6 / jobs
    model = hash_account(build)
    per_fault = (model["hash_page after a fault (preload)"] + model["hash misses (no HPTE)"]) \
        / model["page faults"]
    return {"page faults (second build)": faults["p690_7.52"],
            "page faults (third build)": faults["p690_4.83"],
            "hash_page cycles per job": hashing,
            "CPUs in __hash_page": hashing * jobs / (float(first.clock_mhz) * 1e6)
            / float(first.elapsed_s),
            "hash_page cycles per call": hashing / (faults["p690_7.52"] * per_fault)}


def split_shares(sampled, machine, seen, measured, routines):
    """{routine: {row: share of its cycles}} for the ledger's guest routines that call
    SPLIT's (emu.run.profiler.call_tree), in the measured jobs: each row's cycles that are
    not a lock's acquiring loop at the sampled run's, times ``seen`` (measured_share), its
    loops' cycles a part of what the routine's measured cycles hold beyond those, as the
    loops divide among the rows in the sampled run (by_symbol ``measured`` and ``routines``:
    the routines' cycles per job, as run and scaled back). The sampled run starts every
    slot's first job at once, whose waits are not the measured jobs'."""
    table, inside = sampled.table, _in_lock_loops(sampled.table, machine)
    waits = profiler.call_tree(table.assign(cycles=table["cycles"].where(inside, 0)),
                               sampled.symbols, SPLIT)
    rest = profiler.call_tree(table.assign(cycles=table["cycles"].where(~inside, 0)),
                              sampled.symbols, SPLIT)
    raw, scaled = by_symbol(measured), by_symbol(routines)
    out = {}
    for name in rest:
        parts = {(row, "rest"): c for row, c in rest[name].items()}
        parts.update({(row, "wait"): c for row, c in waits.get(name, {}).items()})
        if not raw.get(name) or not {row for row, _ in parts} - {None}:
            continue
        cycles = measured_parts(parts, seen.get(name, 0), raw[name],
                                {key for key in parts if key[1] == "wait"})
        rows = {}
        for (row, _), c in cycles.items():
            rows[row] = rows.get(row, 0) + c
        out[name] = {row: c / raw[name] for row, c in rows.items() if row}
    return out


def by_symbol(routines):
    """{guest symbol: cycles} of ledger rows by their routine (``hash_page (preload)`` is
    hash_page's)."""
    out = {}
    for name, cycles in routines.items():
        out[name.split(" (")[0]] = out.get(name.split(" (")[0], 0) + cycles
    return out


def measured_share(per_slot, jobs):
    """{guest symbol: the measured jobs' calls per job over the calls in the whole sampled
    run} of a scheduled build's slots (their "calls" and "run calls")."""
    measured, run = {}, {}
    for s in per_slot:
        for name, n in by_symbol(s["calls"]).items():
            measured[name] = measured.get(name, 0) + n
        for name, n in by_symbol(s["run calls"]).items():
            run[name] = run.get(name, 0) + n
    return {name: measured.get(name, 0) / jobs / n for name, n in run.items() if n}


def measured_parts(parts, seen, cycles, waits):
    """{part: cycles per job} of a routine in the measured jobs, from ``parts`` {part:
    cycles} over the whole sampled run: a part that is not one of ``waits`` (the same in
    every call, whoever waits) at its cycles times ``seen`` (the measured jobs' calls per
    job over the run's); the waits the rest of the measured ``cycles`` per job, shared as
    in the sampled run (no wait: the rest goes to the parts in proportion). They sum to
    ``cycles``."""
    out = {part: c * seen for part, c in parts.items() if part not in waits}
    left = cycles - sum(out.values())
    waited = {part: c for part, c in parts.items() if part in waits and c}
    into = waited or out
    whole = sum(into.values())
    for part, c in into.items():
        out[part] = out.get(part, 0) + (left * c / whole if whole else 0)
    return out


def _in_lock_loops(table, machine):
    """A mask of a profile table's rows: the instructions of the locks' acquiring loops
    (lock_ranges, but the hypervisor call's own cycles, which are not a wait)."""
    import pandas as pd
    inside = pd.Series(False, index=table.index)
    for lock, spans in lock_ranges(machine).items():
        if lock in WAITS:
            for start, end in spans:
                inside |= (table["address"] >= start) & (table["address"] < end)
    return inside


#: The parts of a flushed page's cost (flush_account), each instruction of the flush's
#: tree by where it is: a lock's acquiring loop (its wait and its taking), the hypervisor
#: call's own cycles, the tlbie sequence's instructions; the rest is the scan of the Linux
#: page table and the HPTE's own loads and stores
FLUSH_PARTS = {"hash_table_lock": "taking hash_table_lock (its wait)",
               "tlbie_lock": "taking a tlbie lock (its wait)",
               "lpar_tlbie_lock": "taking a tlbie lock (its wait)",
               "hpte_lock": "an HPTE's lock bit",
               "hcall": "the hypervisor calls' own cost",
               "sequence": "the tlbie sequence (ptesync, tlbie, eieio, tlbsync)"}
#: The rest of a flush's cycles
FLUSH_REST = "the scan and the HPTE's loads and stores"
#: The locks whose acquiring loops wait for another CPU (a part that is not the same in
#: every call: measured_parts takes it as the rest of the measured jobs' cycles)
WAITS = ("hash_table_lock", "tlbie_lock", "hpte_lock", "lpar_tlbie_lock")


#: The hypervisor's HPTE routines (routines/ppc64): their loads and stores of an HPTE group
#: (not of the stack: "(r1)") are a part of their own in part_tree, the group's cache
#: misses among them
HPTE_ROUTINES = ("hpte_insert", "hpte_remove", "hpte_updatepp", "hpte_invalidate")
HPTE_GROUP = "the HPTE group's loads and stores"
MEMORY_MNEMONICS = ("ld", "ldx", "ldarx", "std", "stdx", "stdcx.", "lwz", "stw")
#: The parts of a hash_page call's cost (hash_shares): FLUSH_PARTS' (its barriers and any
#: tlbie under "the tlbie sequence"), HPTE_GROUP, and the rest
HASH_REST = "the page-table walk, the Linux PTE and the rest"


def part_tree(sampled, machine):
    """The sampled run's call tree (emu.run.profiler.call_tree) with each instruction put
    in its part: a lock's acquiring loop or the hypervisor call's (FLUSH_PARTS, by
    lock_ranges), the tlbie sequence's instructions, HPTE_GROUP; None for the rest."""
    spans = [(start, end, FLUSH_PARTS[lock])
             for lock, ranges in lock_ranges(machine).items() for start, end in ranges]
    sequence = {"ptesync", "tlbie", "eieio", "tlbsync"}

    def part(row):
        for start, end, name in spans:
            if start <= row.address < end:
                return name
        words = row.instruction.split()
        if words and words[0] in sequence:
            return FLUSH_PARTS["sequence"]
        if row.symbol in HPTE_ROUTINES and words and words[0] in MEMORY_MNEMONICS \
                and "(r1)" not in row.instruction:
            return HPTE_GROUP
        return None

    return profiler.call_tree(sampled.table, sampled.symbols, {}, part)


def _shares(tree, names, rest, fold=()):
    """{name: {part: share of its cycles}} of ``names`` in a part_tree: None's cycles and
    the ``fold`` parts' in ``rest``."""
    out = {}
    for name in names:
        parts = {}
        for row, cycles in tree.get(name, {}).items():
            key = rest if row is None or row in fold else row
            parts[key] = parts.get(key, 0) + cycles
        whole = sum(parts.values())
        if whole:
            out[name] = {row: cycles / whole for row, cycles in parts.items()}
    return out


def hash_per_call(sampled, machine, tree=None):
    """{part: cycles per call} of the guest hash_page over the whole sampled run (its
    callees' included: the hypervisor calls, the HPTE routines; part_tree's parts, the rest
    in HASH_REST), per execution of its first instruction; {} if it never ran."""
    tree = part_tree(sampled, machine) if tree is None else tree
    start = next(s.start for s in sampled.symbols if s.name == "hash_page")
    calls = int(sampled.table.loc[sampled.table["address"] == start, "hits"].sum())
    parts = _shares(tree, ("hash_page",), HASH_REST).get("hash_page", {})
    whole = sum(tree.get("hash_page", {}).values())
    return {part: share * whole / calls for part, share in parts.items()} if calls else {}


def flush_account(tree, seen, measured, routines):
    """{part: cycles per job}: the flush routines' cycles in the measured jobs (their
    ``measured`` cycles per job, as run; ``routines`` scaled back) split into FLUSH_PARTS
    and FLUSH_REST by measured_parts over the sampled run's part_tree ``tree``: a part that
    is not a lock's wait at the run's cycles times ``seen`` (measured_share), the waits the
    rest (the sampled run starts every slot's first job at once, whose waits are not the
    measured jobs')."""
    waits = {FLUSH_PARTS[lock] for lock in WAITS}
    out = {}
    for name in FLUSH_ROUTINES:
        parts = {}
        for row, cycles in tree.get(name, {}).items():
            key = FLUSH_REST if row is None or row == HPTE_GROUP else row
            parts[key] = parts.get(key, 0) + cycles
        if not measured.get(name) or not parts:
            continue
        back = routines[name] / measured[name]           # its factor to full size
        for part, c in measured_parts(parts, seen.get(name, 0), measured[name],
                                      waits).items():
            out[part] = out.get(part, 0.0) + c * back
    return out


def listing_flush_per_page(build):
    """What the readprofile listing implies a flushed page costs on the first build's
    machine, in cycles: the listing's two flush rows' share of its kernel ticks, applied to
    the first build's system time at its clock, over the build's flushed pages (a build's
    ``flushed pages per job`` times BUILD's job count, both the model's)."""
    published = published_groups()["share of kernel"]
    share = published["local_flush_tlb_range"] + published["local_flush_tlb_page"]
    first = builds().set_index("run").loc["p690_10.31"]
    jobs = estimates.value("kernel:build.jobs", BUILD["jobs"])
    cycles = share * float(first.system_s) * float(first.clock_mhz) * 1e6
    return cycles / (jobs * build["flushed pages per job"])


def build_groups(build, split=True):
    """A scheduled build's kernel cycles per job in the paper's functions (PROFILE_GROUPS),
    the rest, and each one's share of the kernel's cycles. ``split``: the hypervisor
    calls (plpar_hcall) and the flushes' HPTE invalidation (flush_hash_page) in rows of
    their own (SPLIT_ROWS), out of the routines that call them, as the listing counts
    them; without, each group holds its routines' whole cycles."""
    import pandas as pd
    routines, rows, used = build["routines"], {}, set()
    shares = build.get("split", {}) if split else {}
    apart = dict.fromkeys(SPLIT_ROWS, 0.0) if split else {}

    def own(routine):
        cycles = routines.get(routine, 0)
        for row, share in shares.get(routine.split(" (")[0], {}).items():
            apart[row] += cycles * share
            cycles -= cycles * share
        return cycles

    for name, members in PROFILE_GROUPS.items():
        rows[name] = sum(own(r) for r in members)
        used.update(members)
    rest = sum(own(r) for r in routines if r not in used)
    rows.update(apart)
    rows["the rest of the kernel"] = rest
    table = pd.DataFrame({"cycles per job": pd.Series(rows)})
    table["share of kernel"] = table["cycles per job"] / table["cycles per job"].sum()
    return table
