"""Dougan 1999, section 5: the idle task's page clearing (node13, ``IDLE_CONFIGS``): the
task that runs after it (``idle_next_task``, ``idle_task_table``,
``idle_by_working_set``)."""
from __future__ import annotations

import pandas as pd

from ...hw import estimates
from ...kernel.entry import DATA_BASE, ELF_BASE, Entry, NR_EXIT
from ...kernel.idle import IdleTask
from ...kernel.vm import PAGE_SIZE
from ...run import reuse as kept_runs
from ...run import sweep
from .mmu import kernel

# node13's configurations: (the idle task clears pages, with the cache inhibited, and the
# next page fault takes one of them)
IDLE_CONFIGS = {"no idle clearing": (False, False, False),
                "cached, used": (True, False, True),
                "uncached, not used": (True, True, False),
                "uncached, used": (True, True, True)}
LINE = 32                      # the 603e's (and 604's) cache line


def next_task_source(data_bytes, written_bytes):
    """The task that runs after the idle task (emu.kernel.idle): a process with a working set
    of ``data_bytes`` at DATA_BASE. r3 = 0: write its working set (the pages become its
    own); 1: one pass over it, a load from each cache line; 2: a pass, then a new page (r4:
    ``written_bytes`` stored from its start, the first store taking the anonymous page
    fault), then a second pass."""
    if data_bytes % LINE or not 0 < data_bytes <= 0x7FFF * LINE:
        raise ValueError(f"data_bytes must be a positive multiple of {LINE}, not {data_bytes}")
    if written_bytes % 4 or not 4 <= written_bytes <= PAGE_SIZE:
        raise ValueError(f"written_bytes must be 4-{PAGE_SIZE} in whole words, not "
                         f"{written_bytes}")
    return f"""
_start:
        mr      r30, r3
        mr      r29, r4
        cmpwi   0, r30, 0
        bne     run_task
        lis     r9, {DATA_BASE >> 16:#x}
        li      r8, {data_bytes // LINE}
        mtctr   r8
        li      r0, 1
first_write:
        stw     r0, 0(r9)
        addi    r9, r9, {LINE}
        bdnz    first_write
        b       done
run_task:
        bl      data_pass
        cmpwi   0, r30, 1
        beq     done
        li      r8, {written_bytes // 4}
        mtctr   r8
        li      r0, 0
new_page:
        stw     r0, 0(r29)
        addi    r29, r29, 4
        bdnz    new_page
        bl      data_pass
done:
        li      r3, 0
        li      r0, {NR_EXIT}
        sc
data_pass:
        lis     r9, {DATA_BASE >> 16:#x}
        li      r8, {data_bytes // LINE}
        mtctr   r8
pass_line:
        lwz     r7, 0(r9)
        addi    r9, r9, {LINE}
        bdnz    pass_line
        blr
"""


def idle_next_task(config, data_kb=8, pages=96, written_bytes=4):
    """node13 on the 603 model (emu.kernel.idle): the next task (``next_task_source``, a
    working set of ``data_kb`` KB) writes its data and makes a pass over it, blocks; the
    idle task runs zero_paged over ``pages`` free pages as ``config`` says (one of
    ``IDLE_CONFIGS``); then the task runs again: a pass, a new page (``written_bytes`` of
    it written), a pass. Returns what that last run cost, its kernel paths included (the
    page fault, the clearing or not, flush_page_to_ram): cycles, L1 D misses, line reads
    from memory, TLB misses; and the idle period's pages and uncached stores."""
    if config not in IDLE_CONFIGS:
        raise ValueError(f"config must be one of {list(IDLE_CONFIGS)}, not {config!r}")
    clears, uncache, used = IDLE_CONFIGS[config]
    data_bytes = int(data_kb * 1024)
    with estimates.setup_only():     # all before the measured run: the ledger's alone
        k = kernel("603 page table")
        entry = Entry(k)
        idle = IdleTask(entry, use=used)
        p = entry.spawn(next_task_source(data_bytes, written_bytes), "next_task",
                        data_pages=-(-data_bytes // PAGE_SIZE) + 1)
        entry.run(p, ELF_BASE, 0, 0)
        entry.run(p, ELF_BASE, 1, 0)
        idle_run = idle.run(pages, uncache) if clears else None
    before = k.ledger.snapshot()
    run = entry.run(p, ELF_BASE, 2, DATA_BASE + -(-data_bytes // PAGE_SIZE) * PAGE_SIZE)
    spent = k.ledger.since(before)
    clock = k.machine.profile.clock_mhz
    return {"config": config, "data_kb": data_kb, "idle_pages": pages if clears else 0,
            "written_bytes": written_bytes, "cycles": spent.cycles,
            "us": spent.cycles / clock,
            "l1d_misses": spent.traffic["L1D_misses"],
            "memory_reads": spent.traffic["memory_reads"],
            "tlb_misses": run.events.get("tlb_miss_exceptions", 0),
            "fault_clears": spent.counts.get("zeroed_pages", 0),
            "prezeroed_used": spent.counts.get("prezeroed_pages_used", 0),
            "idle_pages_cleared": idle.word(8) if clears else 0,
            "idle_uncached_stores": idle_run.events.get("uncached_stores", 0)
            if idle_run else 0,
            "idle_l1d_misses": idle_run.caches["L1D"]["misses"] if idle_run else 0}


@kept_runs.unit
def idle_task_table(data_kb=8, pages=96, written_bytes=4, configs=tuple(IDLE_CONFIGS)):
    """``idle_next_task`` for ``configs`` (the four by default; "no idle clearing" always):
    a DataFrame indexed by config, with each one's cycles relative to no idle clearing."""
    configs = ("no idle clearing",) + tuple(c for c in configs if c != "no idle clearing")
    df = pd.DataFrame([idle_next_task(c, data_kb, pages, written_bytes)
                       for c in configs]).set_index("config")
    df["cycles_vs_none"] = df["cycles"] / df.loc["no idle clearing", "cycles"]
    return df


def idle_by_working_set(sizes_kb=(1, 2, 4, 6, 8, 10, 12, 14, 16), pages=96, written_bytes=4):
    """``idle_next_task`` for each working-set size and configuration: a DataFrame indexed
    by (data_kb, config), each row's cycles also relative to no idle clearing at that size."""
    tables = sweep.run(idle_task_table, [dict(data_kb=kb, pages=pages,
                                              written_bytes=written_bytes) for kb in sizes_kb],
                       description="idle task by working set")
    return pd.concat(t.reset_index() for t in tables).set_index(["data_kb", "config"])
