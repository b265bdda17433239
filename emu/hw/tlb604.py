"""The 604's MMU for guest code: its ITLB and DTLB and the hardware table search, run
natively on every page Unicorn has no translation of (emu/hw/model/tlb604.c).

Unicorn is switched to its virtual-TLB mode, so QEMU's own 604 MMU (which searched the hash
table for free, with no TLB the model saw) is no longer used: a native ``UC_HOOK_TLB_FILL``
hook translates each page as the 604 does (IBM PowerPC 604 RISC Microprocessor User's
Manual, ch. 5):

* MSR[IR] (fetch) or MSR[DR] (data) clear: real mode, EA = physical;
* a supervisor access below the kernel's BAT block (``bat_size``: mapin_ram's BAT2, Vs
  only, EA = physical) is the BAT's (``bat_fills``); the BAT is searched in parallel with
  the TLB on the hardware, so it costs nothing;
* otherwise the segment register (``set_segments``: the model's copy, kept by the kernel
  model at each switch) gives the VSID, and the ITLB or DTLB (profile ``[tlb]``: 128
  entries, 2-way, so 64 classes indexed by EA bits 14-19, UM Figure 5-7; LRU) is looked up
  with the tag (VSID, page). A miss (``itlb_misses``, ``dtlb_misses``) runs the table
  search (UM 5.4.5, Figures 5-9 and 5-10): the eight PTEs of the primary group, then the
  eight of the secondary, each read through the L1 D model and charged the L1 D's
  load-to-use latency (``pte_cycles``) plus its stall, one after the other, plus
  ``walk_cycles`` (the profile's estimate of the search's own sequencing). The PTE found goes
  into an invalid way, else the LRU way. A PTE in slot k of the primary group costs
  ``walk_cycles + (k + 1) * pte_cycles`` with every PTE in the cache; in slot k of the
  secondary ``walk_cycles + (9 + k) * pte_cycles``; a search that finds nothing
  ``walk_cycles + 16 * pte_cycles``, and is an ISI / DSI (``fault``);
* the page's PP bits with the segment's key (Ks for the supervisor, Kp for the user) give
  the rights; an access they refuse is a protection ISI / DSI.

Unicorn keeps its own translations of pages; the model flushes all of them whenever one of
its TLB entries is replaced (``evictions``) or a ``tlbie`` invalidates a class, so Unicorn
never holds a page the model's TLBs have lost: the next access to it comes back to the fill.
Limits: a hit that Unicorn answers from its own translations does not move the model's LRU
(only the fills and re-fills after a flush do), and a branch chained by Unicorn within a
page is not translated again. Neither reference nor change bits are set in the PTE (Linux
makes its HPTEs with R set, and C with a dirty writable page).
"""
from __future__ import annotations

import numpy as np
from unicorn import UC_HOOK_TLB_FILL, unicorn_const
from unicorn.ppc_const import UC_PPC_REG_MSR
from unicorn.unicorn_const import UC_CTL_IO_WRITE, UC_CTL_TLB_FLUSH

from . import cache as c
from . import native

# the record's words (state.h T6_*)
(T6_ST, T6_CLASSES, T6_WAYS, T6_WALK_CYCLES, T6_PTE_CYCLES, T6_MSR_REG, T6_FLUSH_CONTROL,
 T6_BAT_SIZE, T6_SDR1, T6_FAULT_KIND, T6_FAULT_EA, T6_FAULT_ACCESS, T6_ITLB_MISSES,
 T6_DTLB_MISSES, T6_SEARCHES, T6_SEARCH_CYCLES, T6_PTE_READS, T6_PRIMARY, T6_SECONDARY,
 T6_HASH_MISSES, T6_PROTECTION, T6_EVICTIONS, T6_FLUSHES, T6_CLOCK, T6_BAT_FILLS) = range(25)
T6_SEGMENTS, T6_ENTRIES, T6_ENTRY_WORDS = 32, 48, 3
T6_FAULT_NONE, T6_FAULT_NO_HPTE, T6_FAULT_PROTECTION = 0, 1, 2
UC_MEM_WRITE, UC_MEM_FETCH = 17, 18
COUNTERS = {"itlb_misses": T6_ITLB_MISSES, "dtlb_misses": T6_DTLB_MISSES,
            "table_searches": T6_SEARCHES, "table_search_cycles": T6_SEARCH_CYCLES,
            "pte_reads": T6_PTE_READS, "htab_primary_hits": T6_PRIMARY,
            "htab_secondary_hits": T6_SECONDARY, "htab_misses": T6_HASH_MISSES,
            "protection_faults": T6_PROTECTION, "tlb_evictions": T6_EVICTIONS,
            "unicorn_flushes": T6_FLUSHES, "bat_fills": T6_BAT_FILLS}
fetch_hook = native._hook("tlb604_fill")


class TLB604Model:
    """The native 604 MMU of one Machine (module notes). ``sdr1``: the hash table;
    ``bat_size``: the kernel's BAT block from EA 0 (0: none); ``walk_cycles`` and the PTE
    read latency come from the profile (``[tlb] walk_cycles``, the L1 D's ``hit_latency``)."""

    def __init__(self, machine, sdr1, bat_size=0):
        tlb = machine.profile.tlb
        if tlb.get("reload") != "hardware-hash" or machine.isa != "ppc32":
            raise ValueError(f"the 604 MMU model needs a 32-bit PowerPC that searches the hash "
                             f"table in hardware, not {machine.profile.name}")
        if tlb["itlb_entries"] != tlb["dtlb_entries"] or tlb["itlb_ways"] != tlb["dtlb_ways"]:
            raise ValueError("the 604 MMU model needs ITLB and DTLB of one shape")
        classes = tlb["dtlb_entries"] // tlb["dtlb_ways"]
        if classes & (classes - 1):
            raise ValueError(f"{classes} TLB classes: a power of two is needed")
        self.machine = m = machine
        l1d = next(lv for lv in machine.profile.caches if lv.name == "L1D")
        self.ways = tlb["dtlb_ways"]
        self.classes = classes
        self.t = np.zeros(T6_ENTRIES + T6_ENTRY_WORDS * 2 * classes * self.ways, np.int64)
        t = self.t
        t[T6_ST] = m.state.ctypes.data
        t[T6_CLASSES], t[T6_WAYS] = classes, self.ways
        t[T6_WALK_CYCLES] = tlb.get("walk_cycles", 0)
        t[T6_PTE_CYCLES] = l1d.hit_latency
        t[T6_MSR_REG] = UC_PPC_REG_MSR
        t[T6_FLUSH_CONTROL] = (UC_CTL_IO_WRITE << 30) | UC_CTL_TLB_FLUSH
        t[T6_BAT_SIZE] = bat_size
        t[T6_SDR1] = sdr1
        m.uc.ctl_set_tlb_mode(unicorn_const.UC_TLB_VIRTUAL)
        self.hook = native.add_hook(m.uc, UC_HOOK_TLB_FILL, fetch_hook, None,
                                    user_data=t.ctypes.data)
        m.state[c.H_TLB604] = t.ctypes.data
        self.flush_unicorn()

    def arm(self):
        """Before each run: no fault pending, and Unicorn's translations flushed, so that
        the hits of the run before are seen again (they move the LRU)."""
        self.flush_unicorn()
        self.t[T6_FAULT_KIND] = T6_FAULT_NONE

    def flush_unicorn(self):
        self.machine.uc.ctl(UC_CTL_TLB_FLUSH, UC_CTL_IO_WRITE)

    def set_segments(self, words):
        """The 16 segment registers' values (T, Ks, Kp, N, VSID), as the CPU holds them."""
        for n, word in enumerate(words):
            self.t[T6_SEGMENTS + n] = word
        self.flush_unicorn()

    def invalidate_all(self):
        """Every entry of both TLBs invalid (a cold start; the 604 has no tlbia, a kernel
        would issue a tlbie per class)."""
        self.t[T6_ENTRIES:] = 0
        self.flush_unicorn()

    def invalidate_class(self, address):
        """tlbie ``address``: both ways of its class, in both TLBs."""
        for k in range(2):
            cls = (k * self.classes + ((address >> 12) & (self.classes - 1))) * self.ways
            for way in range(self.ways):
                self.t[T6_ENTRIES + T6_ENTRY_WORDS * (cls + way)] = 0
        self.flush_unicorn()

    def entries(self, fetch=False):
        """The valid (VSID, EA page) tags of the ITLB (``fetch``) or DTLB."""
        base = 0 if fetch else self.classes * self.ways
        tags = self.t[T6_ENTRIES:].reshape(-1, T6_ENTRY_WORDS)[base:base + self.classes *
                                                             self.ways, 0]
        return sorted(((int(g) - 1) >> 20, ((int(g) - 1) & 0xFFFFF) << 12) for g in tags if g)

    def counts(self):
        return {name: int(self.t[at]) for name, at in COUNTERS.items()}

    def take_fault(self):
        """The fault the last fill refused: (kind, EA, access 'r' 'w' 'x'), or None; cleared."""
        kind = int(self.t[T6_FAULT_KIND])
        if kind == T6_FAULT_NONE:
            return None
        self.t[T6_FAULT_KIND] = T6_FAULT_NONE
        access = {UC_MEM_WRITE: "w", UC_MEM_FETCH: "x"}.get(int(self.t[T6_FAULT_ACCESS]), "r")
        return kind, int(self.t[T6_FAULT_EA]), access

    def close(self):
        self.machine.state[c.H_TLB604] = 0
        native.remove_hook(self.machine.uc, self.hook)
