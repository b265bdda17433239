"""What one call measured (a Run): instructions, cycles, each cache level's and TLB's
statistics, the memory system's and the MMU's events; a deterministic function of the
machine and the call."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..hw import cache as c
from ..hw import mmu as mmu_model

@dataclass
class Run:
    """What one call measured: a deterministic function of the machine and the call."""
    profile: str
    entry: str
    args: tuple
    return_value: int
    instructions: int
    cycles: int
    caches: dict
    events: dict
    memory: dict
    tlbs: dict = field(default_factory=dict)

    def to_dict(self):
        return {"profile": self.profile, "entry": self.entry, "args": list(self.args),
                "return": self.return_value, "instructions": self.instructions,
                "cycles": self.cycles, "caches": self.caches, "events": self.events,
                "memory": self.memory, **({"tlbs": self.tlbs} if self.tlbs else {})}

    def to_json(self):
        return json.dumps(self.to_dict(), indent=2)

    def cache_table(self):
        """The per-level statistics as a pandas DataFrame (one row per level)."""
        import pandas as pd
        df = pd.DataFrame.from_dict(self.caches, orient="index")
        df.index.name = "level"
        return df

    def table(self):
        lines = [f"{self.entry} on {self.profile}: returned {self.return_value:#x}",
                 f"  instructions {self.instructions:>12,}",
                 f"  cycles       {self.cycles:>12,}",
                 f"  {'level':<6}{'accesses':>12}{'hits':>12}{'misses':>12}{'writebacks':>12}"]
        for name, s in self.caches.items():
            lines.append(f"  {name:<6}{s['accesses']:>12,}{s['hits']:>12,}{s['misses']:>12,}"
                         f"{s['writebacks']:>12,}")
        for name, s in self.tlbs.items():
            lines.append(f"  {name:<6}{s['lookups']:>12,}{s['hits']:>12,}{s['misses']:>12,}"
                         f"{'':>12}")
        lines.append(f"  memory: {self.memory['reads']:,} line reads, "
                     f"{self.memory['writes']:,} writes")
        events = ", ".join(f"{k} {v}" for k, v in self.events.items() if v)
        lines.append(f"  events: {events or 'none'}")
        return "\n".join(lines)

    def __str__(self):
        return self.table()


def core_events(st):
    """The multi-core events of the running core's header."""
    return {"transfers": int(st[c.H_TRANSFERS]),
            "snoop_invalidations": int(st[c.H_SNOOP_INVALIDATIONS]),
            "serialised": int(st[c.H_SERIAL_OPS]),
            "serialise_wait": int(st[c.H_SERIAL_WAIT]),
            "sync_waits": int(st[c.H_SYNC_WAITS]),
            "parks": int(st[c.H_PARKS]),
            "spin_wait_cycles": int(st[c.H_SPIN_WAIT]),
            "order_stalls": int(st[c.H_ORDER_STALLS]),
            "order_stall_cycles": int(st[c.H_ORDER_STALL_CYCLES]),
            "interventions": int(st[c.H_INTERVENTIONS]),
            "slices": int(st[c.H_SLICES])}


def memory_events(st):
    """What the memory system in time (emu.hw.memory) saw during the call."""
    return {"bus_busy_cycles": int(st[c.H_BUS_BUSY]), "bus_wait_cycles": int(st[c.H_BUS_WAIT]),
            "store_buffer_stalls": int(st[c.H_SB_STALLS]),
            "store_buffer_stall_cycles": int(st[c.H_SB_STALL_CYCLES]),
            "fill_buffer_waits": int(st[c.H_FB_WAITS]),
            "prefetches": int(st[c.H_PREFETCHES]),
            "prefetches_dropped": int(st[c.H_PREFETCHES_DROPPED]),
            "hardware_prefetches": int(st[c.H_HW_PREFETCHES]),
            "prefetch_late": int(st[c.H_PREFETCH_LATE]),
            "prefetch_late_cycles": int(st[c.H_PREFETCH_LATE_CYCLES]),
            "uncached_loads": int(st[c.H_UNCACHED_LOADS]),
            "uncached_stores": int(st[c.H_UNCACHED_STORES]),
            "wc_wait_cycles": int(st[c.H_WC_WAIT]),
            "address_only": int(st[c.H_ADDRESS_ONLY])}


def measured(machine, entry, args):
    """The Run of the call of ``entry`` with ``args`` that just ended on the running core."""
    st = machine.state
    events = {"stale_ifetch": int(st[c.H_STALE]),
              "first_stale_pc": int(st[c.H_STALE_PC]) if st[c.H_STALE] else None,
              "nontemporal_stores": int(st[c.H_NT_STORES]),
              "wc_flushes": int(st[c.H_WC_FLUSHES]),
              "wc_partial_flushes": int(st[c.H_WC_PARTIAL]),
              "instructions_outside_programs": int(st[c.H_UNCOUNTED]),
              "alignment_exceptions": int(st[c.H_ALIGN_EXCEPTIONS]),
              "split_accesses": int(st[c.H_SPLITS])}
    if st[c.H_SQ_SLICES]:
        events.update({"l2_store_queue_stores": int(st[c.H_SQ_STORES]),
                       "l2_store_queue_stalls": int(st[c.H_SQ_STALLS]),
                       "l2_store_queue_stall_cycles": int(st[c.H_SQ_STALL_CYCLES])})
    if machine.outer_cache_base is not None:
        events.update({"outer_cache_syncs": int(st[c.H_OUTER_SYNCS]),
                       "outer_cache_line_ops": int(st[c.H_OUTER_LINE_OPS]),
                       "outer_cache_wait": int(st[c.H_OUTER_WAIT]),
                       "maintenance_wait": int(st[c.H_MAINT_WAIT])})
    if machine.isa == "arm":
        events["irq_off_cycles"] = int(st[c.H_IRQ_OFF_CYCLES])
    if len(machine.cpus) > 1:
        events.update(core_events(st))
    if st[c.H_MEMSYS]:
        events.update(memory_events(st))
    if st[c.H_MMU] == mmu_model.MODE_ARM_SHORT:
        events.update({"table_walks": int(st[c.H_WALKS]),
                       "section_hits": int(st[c.H_PRIMARY_HITS]),
                       "page_hits": int(st[c.H_SECONDARY_HITS]),
                       "page_faults": int(st[c.H_PAGE_FAULTS])})
    elif machine.soft_tlb:
        events.update(machine.soft_tlb.events())
    elif st[c.H_MMU]:
        events.update({"hash_walks": int(st[c.H_WALKS]),
                       "primary_hits": int(st[c.H_PRIMARY_HITS]),
                       "secondary_hits": int(st[c.H_SECONDARY_HITS]),
                       "page_faults": int(st[c.H_PAGE_FAULTS])})
    return Run(machine.profile.name, entry if isinstance(entry, str) else hex(entry),
               tuple(args), int(machine.return_value()), int(st[c.H_INSNS]),
               int(st[c.H_CYCLES]), machine.model.stats(core=machine.model.running), events,
               {"reads": int(st[c.H_MEM_READS]), "writes": int(st[c.H_MEM_WRITES])},
               machine.model.tlb_stats(core=machine.model.running))
