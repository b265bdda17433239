"""The memory system in time: what a miss costs beyond the latency of the level that serves
it, when the processor's profile describes it (each part is optional; a profile without it
keeps the simpler rule of emu.hw.cost: a miss stalls for its level's latency, a store that
needs no fill stalls nobody). The model is C (emu/hw/model/memsys.c); this module reads and
checks the profile's tables.

* ``[bus]``: the bus to memory. A transfer occupies it for ``ceil(bytes / bytes_per_beat)``
  beats of ``cycles_per_beat`` core cycles; a transfer waits until the bus is free. A line
  fill from memory takes ``[memory] latency`` from when its transfer starts, so fills that
  queue behind each other (prefetches, read-for-ownership, write-backs, write-combining
  flushes) take longer: the copy of a large buffer becomes bound by the bus's bandwidth.
  A partial write-combining flush (fewer bytes than a line) occupies the bus for
  ``partial_write_beats`` beats per 8 bytes (Pentium 4: partial writes run at 1/8 of the
  bus's rate). ``sector``: a transfer to or from memory carries at most this many bytes (a
  sectored last level, the 750's L2, fills and writes back one sector of its line).
  A split address bus (the 60x bus of the 750): ``address_tenure``, in beats, is what one
  address tenure holds it. The mnemonics in ``address_only`` (those HID0[ABE] broadcasts)
  run an address-only transaction: the instruction waits until its tenure can start, a
  barrier (sync) until its tenure has ended. ``write_buffers``: a write-back a maintenance
  instruction forces (dcbst, dcbf of a modified line) is posted to one of them and the
  core goes on, waiting only for a free buffer; a broadcast sync waits until every posted
  write-back has reached memory, then for its own tenure. Without ``write_buffers`` such
  an instruction waits for its write-back's latency, as before. (One of the three forms of
  posted write-backs, below.) Each request starts at the instruction's issue, and the sync
  is the barrier every form has (OP_COMPLETE: it waits from the end of its own cycles).
* ``[maintenance]``: posted write-backs where no bus is modelled (POWER4): a write-back a
  maintenance instruction forces takes one of ``write_backs`` slots (the L2's machines) and
  is done its latency through the levels it passes after it starts; the core waits only
  for a free slot, and the mnemonics in ``barriers`` (sync) wait until all are done.

Posted write-backs are one mechanism in the C model (memsys.c, post_write_back and
posted_drain), which the profile sets one of three ways: ``[bus] write_buffers`` (the 750:
done when its bus tenures end; a broadcast sync waits), ``[maintenance]`` (POWER4: done its
latency after it starts), ``[outer_cache] maintenance_in_time`` (the Cortex-A9: no limit,
done in order, each through the PL310; dsb waits).
* ``[store_buffer]``: stores retire into a buffer of ``entries`` and complete in order: a
  store that hits completes at once, one that misses when its line has arrived
  (read-for-ownership); the core waits only when the buffer is full, or at a barrier
  that drains it (sync, sfence, mfence, a locked instruction, dsb/dmb).
* ``[fill_buffers]``: ``entries`` line fills from memory may be in flight at once (demand
  misses, read-for-ownership, prefetches); a fill waits for a free one. A prefetch
  (dcbt, pld, prefetchnta, the hardware prefetcher) does not stall the core: its line is
  in the cache from the moment it is requested but usable only when it arrives, and an
  access before then waits for the rest (``prefetch_late``). With every buffer busy a
  prefetch is dropped (``when_full = "drop"``, Pentium 4) or waits (``"wait"``, the
  Cortex-A9's PLD, which is never dropped).
* ``[prefetcher]``: a hardware stream prefetcher (Pentium 4) at a level below the L1 D:
  it watches the demand requests that reach its level (the L1 D's misses). Two misses
  within ``trigger_distance`` bytes, in one page of ``page`` bytes, start a stream (one of
  ``streams``); each further request along a stream keeps ``ahead`` lines requested ahead
  of it, into ``level``, never across the page.

Cache-inhibited pages (PowerPC WIMG I, ARM non-cacheable memory types), found by the MMU
model's walk, bypass the caches: every access is a bus transaction of its own size, a load
waiting ``[memory] latency`` from the transfer's start.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field

POSTED_MAX = 16          # emu/hw/model/state.h: the words a core holds them in
KEYS = {
    "bus": {"bytes_per_beat": int, "cycles_per_beat": float, "partial_write_beats": int,
            "address_tenure": int, "write_buffers": int, "address_only": list,
            "sector": int},
    "store_buffer": {"entries": int},
    "fill_buffers": {"entries": int, "when_full": str},
    "prefetcher": {"streams": int, "ahead": int, "trigger_distance": int, "page": int,
                   "level": str},
    "maintenance": {"write_backs": int, "barriers": list},
}
REQUIRED = {"bus": ("bytes_per_beat", "cycles_per_beat"), "store_buffer": ("entries",),
            "fill_buffers": ("entries",),
            "prefetcher": ("streams", "ahead", "trigger_distance", "page", "level"),
            "maintenance": ("write_backs", "barriers")}


@dataclass(frozen=True)
class MemorySystem:
    """A profile's memory-system tables, checked (empty dicts: not modelled)."""
    bus: dict = field(default_factory=dict)
    store_buffer: dict = field(default_factory=dict)
    fill_buffers: dict = field(default_factory=dict)
    prefetcher: dict = field(default_factory=dict)
    maintenance: dict = field(default_factory=dict)

    @property
    def bus_beat_millicycles(self):
        return round(self.bus["cycles_per_beat"] * 1000) if self.bus else 0

    @property
    def address_tenure_cycles(self):
        """Core cycles of one address tenure (0: the address bus is not modelled)."""
        return math.ceil(self.bus.get("address_tenure", 0) * self.bus["cycles_per_beat"]) \
            if self.bus else 0

    @property
    def broadcasts(self):
        """Mnemonics that run an address-only transaction on the bus (HID0[ABE])."""
        return frozenset(self.bus.get("address_only", ())) if self.bus else frozenset()


def _power_of_two(value):
    return value > 0 and not value & (value - 1)


def check(tables, levels=()):
    """A MemorySystem from a profile's raw tables, refusing what the model cannot run."""
    out = {}
    names = [lv.name for lv in levels]
    for table, types in KEYS.items():
        given = {k: v for k, v in dict(tables.get(table) or {}).items()
                 if k not in ("source", "unverified", "ranges")}
        if not given:
            out[table] = {}
            continue
        unknown = set(given) - set(types)
        missing = [k for k in REQUIRED[table] if k not in given]
        if unknown or missing:
            raise ValueError(f"[{table}]: " + "; ".join(
                ([f"unknown key(s) {', '.join(sorted(unknown))}"] if unknown else []) +
                ([f"missing {', '.join(missing)}"] if missing else [])))
        for key, value in given.items():
            kind = types[key]
            if kind is list:
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise ValueError(f"[{table}] {key} must be a list of mnemonics, "
                                     f"not {value!r}")
                continue
            if kind is str:
                if not isinstance(value, str):
                    raise ValueError(f"[{table}] {key} must be text, not {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                    (kind is int and not isinstance(value, int)) or value <= 0:
                raise ValueError(f"[{table}] {key} must be a positive "
                                 f"{'whole number' if kind is int else 'number'}, "
                                 f"not {value!r}")
        out[table] = given
    if out["fill_buffers"].get("when_full", "drop") not in ("drop", "wait"):
        raise ValueError(f"[fill_buffers] when_full must be 'drop' or 'wait', not "
                         f"{out['fill_buffers']['when_full']!r}")
    p = out["prefetcher"]
    if p:
        below = [n for n in names if n in ("L2", "L3")]
        if p["level"] not in below:
            raise ValueError(f"[prefetcher] level {p['level']!r} is not a level below the "
                             f"L1 D of this profile ({', '.join(below) or 'it has none'}): "
                             "the prefetcher watches the requests that reach its level")
        if not _power_of_two(p["page"]):
            raise ValueError(f"[prefetcher] page must be a power of two, not {p['page']}")
        if not out["fill_buffers"]:
            raise ValueError("[prefetcher] needs [fill_buffers]: its prefetches are fills in "
                             "flight")
    if out["bus"].get("write_buffers", 0) > POSTED_MAX:
        raise ValueError(f"[bus] write_buffers: the model holds at most {POSTED_MAX}")
    if out["maintenance"].get("write_backs", 0) > POSTED_MAX:
        raise ValueError(f"[maintenance] write_backs: the model holds at most {POSTED_MAX}")
    if out["maintenance"] and out["bus"].get("write_buffers"):
        raise ValueError("[maintenance] and [bus] write_buffers both post write-backs: "
                         "give one")
    if out["bus"].get("address_only") and not out["bus"].get("address_tenure"):
        raise ValueError("[bus] address_only needs address_tenure: what a broadcast holds")
    if out["bus"] and not _power_of_two(out["bus"]["bytes_per_beat"]):
        raise ValueError(f"[bus] bytes_per_beat must be a power of two, not "
                         f"{out['bus']['bytes_per_beat']}")
    return MemorySystem(**out)
