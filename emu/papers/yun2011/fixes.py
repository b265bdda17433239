"""Each fix as guest code alone: the routines of emu.kernel.arm before and after a patch, on
every core at once, so that what the cores share (the L2 and the PL310) shows."""
from __future__ import annotations

import pandas as pd

from ...kernel.arm import outer_cache_block, routines_source
from ...run.machine import Machine
from .board import CORES, PATCHES


#: a dirty, writable, executable user page's Linux PTE and set_pte_at's ext for a user
#: address (nG): what a fault stores (emu.kernel.arm's bits)
USER_PTE, USER_EXT = 0x003457DF, 0x800


FIX_STEPS = {
    # fix: (what the routines do, the steps before, the steps after); a step is (routine,
    # the buffers it takes); "read" is the user's next pass over the page (memcpy of it)
    "PK1": ("set_pte_ext: store a PTE",
            (("cpu_v7_set_pte_ext", "pte"),), (("cpu_v7_set_pte_ext_pk1", "pte"),)),
    "PK2": ("unlock_page",
            (("unlock_page", "lock"),), (("unlock_page_pk2", "lock"),)),
    "PK3": ("copy_user_highpage, then the user reads the copy",
            (("copy_page", "copy"), ("v7_flush_kern_dcache_area", "copy"), ("memcpy", "read")),
            (("copy_page", "copy"), ("memcpy", "read"))),
    "PK4": ("pte_alloc_one: clear a PTE page",
            (("clear_page", "table"), ("cpu_v7_dcache_clean_area", "table")),
            (("clear_page", "table"),)),
}


class FixBench:
    """The routines of emu.kernel.arm (routines/arm) on a Cortex-A9 of ``cores`` cores, each
    core with buffers of its own, so that each fix's before and after can run on every core
    at once (emu.run.parallel): the shared L2 and the PL310 are what the cores have in common.
    ``profile``: the cortex-a9 profile, or a variant of it (a Profile, e.g. another sync
    cost: emu.book.explorers.unlock_race)."""

    def __init__(self, cores, profile="cortex-a9", outer_sync="locked"):
        if cores not in CORES:
            raise ValueError(f"cores must be one of {CORES}, not {cores!r}")
        self.machine = Machine(profile, cores=cores)
        self.machine.load(routines_source())
        self.cores = cores
        self.outer_cache = outer_cache_block(self.machine, outer_sync)
        self.wait_table = self.machine.alloc(4096)
        for k in range(16):                     # 16 empty wait queues (4 bits)
            head = self.wait_table + 12 * k + 4
            self.machine.write(head, head.to_bytes(4, "little") * 2)
        self.buffers = [{name: self.machine.alloc(4096) for name in
                         ("pte", "page", "src", "dst", "out", "table")}
                        for _ in range(cores)]

    def _args(self, routine, use, k):
        b = self.buffers[k]
        outer = self.outer_cache
        return {"pte": (b["pte"] + 4 * k, USER_PTE, USER_EXT),
                "lock": (b["page"], self.wait_table, 4, outer),
                "copy": (b["dst"], b["src"]) if routine == "copy_page" else (b["dst"], 4096),
                "read": (b["out"], b["dst"], 4096),
                "table": (b["table"],) if routine == "clear_page" else
                         (b["table"] + 2048, 2048)}[use]

    def _step(self, routine, use):
        """One routine on every core at once: the ParallelRun."""
        if routine.startswith("unlock_page"):        # the page must be locked first
            self.machine.run_parallel([("lock_page", self.buffers[k]["page"])
                                       for k in range(self.cores)])
        return self.machine.run_parallel([(routine, *self._args(routine, use, k))
                                          for k in range(self.cores)])

    def measure(self, steps):
        """Run ``steps`` twice (the first warms the caches), the second measured: per step
        its ParallelRun."""
        for routine, use in steps:
            self._step(routine, use)
        return [(routine, self._step(routine, use)) for routine, use in steps]


def fix_costs(fixes=PATCHES, cores=CORES):
    """Each fix's routines before and after on 1-4 cores at once: per (fix, cores, before
    or after) the cycles until the last core finished, the mean instructions per core, L1 D
    misses and write-backs per core, the PL310 syncs and the cycles cores waited for it."""
    rows = []
    for n in cores:
        for fix in fixes:
            what, before, after = FIX_STEPS[fix]
            for label, steps in (("before", before), ("after", after)):
                runs = FixBench(n).measure(steps)
                every = [r for _, run in runs for r in run.runs]
                rows.append({"fix": fix, "what": what, "cores": n, "kernel": label,
                             "routines": " + ".join(name for name, _ in steps),
                             "cycles": sum(run.cycles for _, run in runs),
                             "instructions": sum(r.instructions for r in every) / n,
                             "L1D misses": sum(r.caches["L1D"]["misses"] for r in every) / n,
                             "L1D writebacks": sum(r.caches["L1D"]["writebacks"]
                                                   for r in every) / n,
                             "PL310 syncs": sum(r.events["outer_cache_syncs"] for r in every),
                             "PL310 wait": sum(r.events["outer_cache_wait"] for r in every)})
    return pd.DataFrame(rows)


def fix_steps_cycles(fix, cores=1):
    """The cycles of each step of a fix's before and after on ``cores`` cores (the steps
    of ``FIX_STEPS``: e.g. PK3's copy, flush and the user's read): a DataFrame."""
    what, before, after = FIX_STEPS[fix]
    rows = []
    for label, steps in (("before", before), ("after", after)):
        for routine_name, run in FixBench(cores).measure(steps):
            rows.append({"kernel": label, "step": routine_name, "cycles": run.cycles,
                         "L1D misses": run.runs[0].caches["L1D"]["misses"]})
    return pd.DataFrame(rows)

