"""Software-loaded TLBs: the PowerPC 603 and 405, with the miss handlers in guest assembly.

How it works (design "a": the CPU model's own soft TLB, measured on Unicorn 2.1.4):

* Unicorn's 603 and 405 CPU models (QEMU 5.0) implement the software-loaded TLBs themselves
  when MSR[IR|DR] are set: a 603 keeps a 64-entry 2-way ITLB and DTLB loaded by ``tlbli`` /
  ``tlbld``; on a miss it sets IMISS/DMISS, ICMP/DCMP (V|VSID|API) and HASH1/HASH2 (the PTEG
  addresses from SDR1) and raises exception 78/79/80 (I-fetch / D-load / D-store). A 405
  keeps a 64-entry unified TLB written by ``tlbwe``, read by ``tlbre``, searched by ``tlbsx``,
  cleared by ``tlbia``; a miss sets DEAR and raises 14 (instruction) / 13 (data); a fetch
  from an entry without EX raises 3 (instruction storage). The exceptions are precise: the
  faulting instruction has not executed, its memory hook has not fired.
* Unicorn does not *deliver* these exceptions to the guest: its interrupt hook is called
  instead (with the PC one instruction past the faulting one). This module delivers them as
  the hardware would: SRR0 (the faulting instruction), SRR1 (603: CR0, KEY, I/D, WAY, S/L and
  MSR bits; 405: MSR), the new MSR (translation off; 603 TLB misses set MSR[TGPR], which
  swaps in the shadow r0-r3) and the vector (0x1000/0x1100/0x1200, 0x300/0x400). Unicorn
  cannot write SRR0/SRR1 directly, so they are written into the CPU state saved by
  ``uc_context_save``, at offsets found at start-up by storing marker values with guest
  ``mtspr`` and searching for them (checked, never assumed).
* Two QEMU 5.0 departures from the hardware are corrected or refused: its ``rfi`` copies
  SRR1 bit 14 (the 603's WAY) into MSR[TGPR], leaving the shadow registers swapped in, so each
  ``rfi`` clears that bit of SRR1 first (a hook at the ``rfi``); its 405 ``tlbwe`` of the data
  word (WS=1) clears the entry's valid bit, so writing the data word of a valid entry is
  refused (write the data word first, then the tag, as Linux's head_4xx.S does).
* The model's TLB levels (emu.hw.cache levels whose line is a page, on the native hot path)
  mirror the CPU's: ``tlbld``/``tlbli`` load the way SRR1[WAY] names, ``tlbwe`` the entry RA
  names, ``tlbie``/``tlbia`` invalidate. These instructions and ``rfi`` are hooked natively
  (emu/hw/model/softtlb_insn.c): the hooks read the SPRs they need (SRR1, RPA, ICMP/DCMP, PID)
  from the CPU state Unicorn saves, at the offsets found below, and run no Python. Every
  translated access looks the model TLB up natively (a hit calls no Python); a CPU miss is
  counted as a lookup that missed when its exception arrives. SRR1[WAY] is chosen by the
  model's replacement (an invalid way, else the LRU one: MPC603e UM 5.4.2 "LRU"). A
  translated access the mirror does not hold is counted as a divergence (tests expect 0).

Limits, refused with a message where detectable: translations must be the identity
(RPN = EPN) because Unicorn's memory hooks report physical addresses, and the model tags
its entries by page; 405 entries must be 4 KB pages; the 405 shadow I/D TLBs are not
modelled (their misses are hidden in hardware and cost nothing here); TLB entries are tagged by
effective page only (not VSID / TID), so changing segment registers or the 405 PID without
invalidating would make the mirror diverge (counted); a 603 TLB-miss exception's entry
costs the profile's ``[tlb] exception_entry`` (an estimate), the 405's nothing, and ``rfi``
costs the profile's instruction cost.

The 405's entries are also recorded by index (tag word, the TID the PID register gave it,
data word, valid: ``SoftTLB.records``, kept by the native hooks), so that Python can search the CPU's
TLB as ``tlbsx`` does (``SoftTLB.search405``). A user of the 405 TLB whose translated
accesses never run as guest code (the kernel model, emu.kernel.ppc405: the kernel runs in
real mode, user accesses are simulated) may set ``identity_only = False`` to load entries
with RPN != EPN; a translated guest access through such an entry is not supported (the
mirror, tagged by EPN, would count it as a divergence).

The 603's entries are recorded too (``entries603``: page, compare word, RPA word per way of
each congruence class, and the class's LRU way), by the ``tlbld``/``tlbli`` hooks and the
``tlbie`` hook, which empties both ways of the class in the ITLB and the DTLB, as the 603
(and QEMU) do; ``search603`` / ``victim603`` serve the kernel model
(emu.kernel.ppc603), which also sets ``identity_only = False``. One departure of QEMU 5.0 is
not followed: its ``tlbld``/``tlbli`` also drop the other way's entry for the same page,
whatever its VSID; the 603 keeps both. The records follow the 603; the CPU's own TLB does
too once ``SoftTLB.locate_tlb6`` has found QEMU's array (emu.kernel.entry calls it: there
guest user code runs through that TLB), the native rfi hook then making the dropped entry
valid again. A 603 DTLB entry whose RPA word has WIMG I (cache-inhibited) makes the data
accesses to its physical page bypass the caches (emu.hw.memory: each one a bus transaction of
its own size; counted as ``uncached_loads`` / ``uncached_stores``): the hook sees only the
physical address, and the architecture requires every translation of a page to agree on I,
so a page an inhibited entry maps is inhibited however it is reached, a BAT's alias included
(software must not mix them). Capstone 5 decodes ``tlbld r0`` as the 4xx ``tlbwe``
(the same opcode): the model does not see it; load with another register.
"""
from __future__ import annotations

import collections
import ctypes
import weakref

import numpy as np
from unicorn import UcError, ppc_const
from unicorn.unicorn_const import UC_CTL_IO_WRITE, UC_CTL_TLB_FLUSH

from ..isa.assemble import assemble
from . import cache as c
from . import native
from .faults import DataStorageFault, GuestError, InstructionStorageFault, TLBMissFault
from .layout import HALT, HEAP_BASE

# Unicorn/QEMU exception numbers (target/ppc/cpu.h, POWERPC_EXCP_*), measured to arrive here
EXCP_DSI, EXCP_ISI, EXCP_DTLB, EXCP_ITLB = 2, 3, 13, 14
EXCP_IFTLB, EXCP_DLTLB, EXCP_DSTLB = 78, 79, 80
TLB_MISSES = {EXCP_IFTLB, EXCP_DLTLB, EXCP_DSTLB, EXCP_DTLB, EXCP_ITLB}

# SPR numbers
SRR0, SRR1, DSISR, DAR, SDR1 = 26, 27, 18, 19, 25
SPRG0, SPRG1, SPRG2, SPRG3 = 272, 273, 274, 275
DMISS, DCMP, HASH1, HASH2, IMISS, ICMP, RPA = 976, 977, 978, 979, 980, 981, 982
PID405, DEAR405, ESR405, EVPR405 = 945, 981, 980, 982

MSR_TGPR, MSR_ME, MSR_PR, MSR_IR, MSR_DR = 1 << 17, 1 << 12, 1 << 14, 0x20, 0x10
XLATE = MSR_IR | MSR_DR

MODE_SOFT603, MODE_SOFT405 = 2, 3

VECTORS = {
    "603": {EXCP_IFTLB: 0x1000, EXCP_DLTLB: 0x1100, EXCP_DSTLB: 0x1200, EXCP_DSI: 0x300,
            EXCP_ISI: 0x400},
    "405": {EXCP_DTLB: 0x1100, EXCP_ITLB: 0x1200, EXCP_DSI: 0x300, EXCP_ISI: 0x400},
}

# Scratch words of the state (st[H_SCRATCH] + k; word 0 is _register's)
S_BLOCK_START, S_BLOCK_END, S_DIVERGED = 1, 2, 3

# The records the native instruction hooks keep (emu/hw/model/state.h, SW_*)
(SW_KIND, SW_IDENTITY, SW_PENDING, SW_SPR_BASE, SW_CONTEXT, SW_FLUSH_CONTROL, SW_ERROR,
 SW_ERROR_PC, SW_ERROR_A, SW_ERROR_B, SW_ERROR_C, SW_CLASSES, SW_TLB6, SW_RESTORE,
 SW_RESTORE_PTE0, SW_RESTORE_EPN) = range(16)
SW_TAG405, SW_DATA405, SW_TID405, SW_VALID405 = 16, 80, 144, 208
SW_E603, SW_MRU603, SW_INHIBITED603, SW_WORDS = 272, 784, 848, 849
SW_KIND_603, SW_KIND_405, SW_MAX_CLASSES = 1, 2, 32
SW_ERR_PENDING, SW_ERR_IDENTITY_603, SW_ERR_PAGE_SIZE, SW_ERR_IDENTITY_405 = 1, 2, 3, 4
SPR_SRR1, SPR_DCMP, SPR_ICMP, SPR_RPA, SPR_PID405 = 27, 977, 981, 982, 945

# The book's Linux-style PTE (one word per 4 KB page, in a two-level table like Linux's:
# a 1024-entry page directory of page-table-page addresses, 1024 PTEs per page-table page).
PTE_PRESENT, PTE_ACCESSED, PTE_DIRTY = 0x001, 0x002, 0x004
PTE_RW, PTE_EXEC = 0x100, 0x200          # the 405 TLB data word's WR and EX positions


def kind(profile):
    """'603' or '405' for a profile whose TLB is software-loaded and modelled, else None."""
    if profile.isa != "ppc32" or profile.tlb.get("reload") != "software":
        return None
    cpu = profile.unicorn_cpu
    if "603" in cpu:
        return "603"
    if "405" in cpu:
        return "405"
    return None


# --------------------------------------------------------------------- native (C) side
#
# The mirror's look-ups run in the hooks (emu/hw/model/softtlb.c); the exception and
# instruction hooks below call its other functions.

def lookup(st, ea, fetch):
    """One translated access: a look-up in the model TLB (a mirror of the CPU's, which has
    already translated it). Real-mode accesses look nothing up. Returns stall cycles (0)."""
    return int(native.lib.emu_softtlb_lookup(native.address(st), ea, int(fetch)))


def count_miss(st, fetch):
    """The CPU missed: one look-up that missed."""
    native.lib.emu_softtlb_count_miss(native.address(st), int(fetch))


def victim_way(st, fetch, ea):
    """The way the next load into ``ea``'s set replaces: an invalid one, else the LRU one."""
    return int(native.lib.emu_softtlb_victim_way(native.address(st), int(fetch), ea))


def load_way(st, fetch, ea, way):
    """tlbli/tlbld/tlbwe: ``ea``'s page into ``way`` of its set (what was there is evicted).
    Returns the page evicted + 1 (0: none)."""
    return int(native.lib.emu_softtlb_load_way(native.address(st), int(fetch), ea, way))


def drop_way(st, way):
    """A 405 tlbwe of an invalid tag: entry ``way`` of the unified TLB is emptied. Returns
    the page dropped + 1 (0: none)."""
    return int(native.lib.emu_softtlb_drop_way(native.address(st), way))


# ------------------------------------------------------------------ the CPU's own registers

#: a 603 TLB entry's valid bit in its compare word (QEMU's pte0; tlbie clears it)
PTE_VALID_BIT = 0x80000000


class TlbArrayNotFound(RuntimeError):
    """QEMU's array of 603 TLB entries could not be told apart in the CPU's saved state
    (SoftTLB.locate_tlb6)."""


class CpuRegisters:
    """SPRs and segment registers Unicorn has no register id for, read and written through
    the saved CPU context. Offsets are found by storing markers with guest code (run before
    any hook is installed) and searching the saved context for them."""

    MARKERS = {SRR0: 0x5A17C0DE, SRR1: 0x6B28D1EF}

    def __init__(self, uc, scratch, segments=True):
        sr_markers = (0x0A1B2C3D & 0xFFFFFF, 0x0B1C2D3E & 0xFFFFFF) if segments else ()
        lines = []
        for spr, value in self.MARKERS.items():
            lines += [f"lis r3, {value >> 16:#x}", f"ori r3, r3, {value & 0xFFFF:#x}",
                      f"mtspr {spr}, r3"]
        for n, value in zip((0, 15), sr_markers):
            lines += [f"lis r3, {value >> 16:#x}", f"ori r3, r3, {value & 0xFFFF:#x}",
                      f"mtsr {n}, r3"]
        lines.append("nop")
        code = assemble("\n".join(lines), "ppc32", scratch).code
        uc.mem_write(scratch, code)
        uc.emu_start(scratch, scratch + len(code) - 4)
        uc.mem_write(scratch, bytes(len(code)))
        raw = bytes(uc.context_save())
        self.uc = uc

        words = np.frombuffer(raw, dtype="<u4", count=len(raw) // 4)

        def find(value):
            """The offsets of the aligned words of the saved context equal to ``value``."""
            return (4 * np.flatnonzero(words == value)).tolist()

        srr0, srr1 = find(self.MARKERS[SRR0]), find(self.MARKERS[SRR1])
        bases = {a - 4 * SRR0 for a in srr0} & {a - 4 * SRR1 for a in srr1}
        sr_bases = {None}
        if segments:                    # the 405 has no segment registers
            sr0, sr15 = find(sr_markers[0]), find(sr_markers[1])
            sr_bases = {a for a in sr0} & {a - 60 for a in sr15}
        if len(bases) != 1 or len(sr_bases) != 1:
            raise RuntimeError("could not locate SRR0/SRR1 and the segment registers in "
                               "Unicorn's saved CPU context: this Unicorn build differs from "
                               "the one the soft-TLB model was written for (2.1.4)")
        self.spr_base, self.sr_base = bases.pop(), sr_bases.pop()
        for spr in self.MARKERS:
            self.set_spr(spr, 0)
        for n in (0, 15) if segments else ():
            self.set_sr(n, 0)

    def _saved(self):
        """The CPU saved into this object's own context (made once: Unicorn's context_save
        allocates one each time) and its address."""
        ctx = getattr(self, "_ctx", None)
        if ctx is None:
            ctx = self._ctx = self.uc.context_save()
            self._ctx_at = ctypes.cast(ctx.context, ctypes.c_void_p).value
        else:
            self.uc.context_update(ctx)
        return ctx, self._ctx_at

    def _read(self, offset):
        _, base = self._saved()
        return int.from_bytes(ctypes.string_at(base + offset, 4), "little")

    def _write(self, values, watch=None):
        """Words {offset: value} written into the saved CPU, restored in one; returns the
        word at offset ``watch`` before the write (None without one)."""
        ctx, base = self._saved()
        before = None if watch is None else \
            int.from_bytes(ctypes.string_at(base + watch, 4), "little")
        for offset, value in values.items():
            ctypes.memmove(base + offset, (value & 0xFFFFFFFF).to_bytes(4, "little"), 4)
        self.uc.context_restore(ctx)
        return before

    def spr(self, n):
        return self._read(self.spr_base + 4 * n)

    def sprs(self, *numbers):
        _, base = self._saved()
        at = base + self.spr_base
        return [int.from_bytes(ctypes.string_at(at + 4 * n, 4), "little") for n in numbers]

    def set_spr(self, n, value):
        self._write({self.spr_base + 4 * n: value})

    def set_sprs(self, values):
        self._write({self.spr_base + 4 * n: v for n, v in values.items()})

    def set_sprs_and_segment(self, values, n, segment):
        """``set_sprs`` and ``set_sr(n, segment)`` in one write of the saved context; QEMU's
        translations are dropped only if the segment register changed."""
        at = self.sr_base + 4 * n
        words = {self.spr_base + 4 * k: v for k, v in values.items()}
        if self._write({**words, at: segment}, watch=at) != segment:
            self.flush_translations()   # made with the old VSID

    def sr(self, n):
        return self._read(self.sr_base + 4 * n)

    def set_sr(self, n, value):
        self.set_srs({n: value})

    def set_srs(self, values):
        """Segment registers {n: value}, in one write of the saved CPU (and one flush)."""
        self._write({self.sr_base + 4 * n: v for n, v in values.items()})
        self.flush_translations()       # made with the old VSIDs

    def flush_translations(self):
        """Empty QEMU's own translation cache (its softmmu TLB, in front of the CPU's TLB).
        Needed when a TLB entry is replaced: QEMU 5.0's 603 tlbld/tlbli and 405 tlbwe (after
        its data word cleared V) do not flush the replaced page, which then keeps translating
        without a miss. Unicorn offers only a full flush; it changes no result, only speed."""
        from unicorn.unicorn_const import UC_CTL_IO_WRITE, UC_CTL_TLB_FLUSH
        self.uc.ctl(UC_CTL_TLB_FLUSH, UC_CTL_IO_WRITE)


# --------------------------------------------------------------- the machine's Python side

class SoftTLB:
    """Delivers the CPU's TLB-miss and storage exceptions to guest handlers and keeps the
    model's TLB a mirror of the CPU's. Owned by a Machine with ``mmu=True`` on ppc603e or
    ppc405gp; the machine calls ``start``, ``exception`` and ``instruction``."""

    @property
    def m(self):
        """The machine (a weak reference: a Machine and its SoftTLB do not keep each other
        alive, so a discarded Machine frees its emulators at once)."""
        return self._machine()

    def __init__(self, machine, which):
        self._machine, self.kind = weakref.ref(machine), which     # (the machine owns us)
        self.regs = CpuRegisters(machine.uc, HEAP_BASE, segments=which == "603")
        self.vectors = VECTORS[which]
        self.installed = set()           # vector addresses a program has been loaded at
        # The records the native instruction hooks keep (emu/hw/model/softtlb_insn.c): the 405's
        # entries (tag word: EPN, SIZE, V; data word; the TID the PID gave it; valid), and the
        # 603's, per I/D, congruence class and way (page + 1, compare word ICMP/DCMP, RPA
        # word) with the way each class used last (MPC603e UM 5.4.2: LRU per class), so
        # that Python can search the TLB as the CPU does (emu.kernel.ppc603, ppc405).
        tlb = machine.profile.tlb
        self.classes603 = tlb.get("dtlb_entries", 64) // tlb.get("dtlb_ways", 2)
        if not 1 <= self.classes603 <= SW_MAX_CLASSES:
            raise ValueError(f"a {which} TLB of {self.classes603} congruence classes: the "
                             f"model records at most {SW_MAX_CLASSES}")
        self.records = np.zeros(SW_WORDS, np.int64)
        r = self.records
        self.tag405, self.data405 = r[SW_TAG405:SW_TAG405 + 64], r[SW_DATA405:SW_DATA405 + 64]
        self.tid405, self.valid405 = r[SW_TID405:SW_TID405 + 64], r[SW_VALID405:SW_VALID405 + 64]
        self._context = machine.uc.context_save()       # the buffer the hooks save the CPU to
        r[SW_KIND] = SW_KIND_603 if which == "603" else SW_KIND_405
        r[SW_SPR_BASE] = self.regs.spr_base
        r[SW_CONTEXT] = ctypes.cast(self._context.context, ctypes.c_void_p).value
        r[SW_FLUSH_CONTROL] = (UC_CTL_IO_WRITE << 30) | UC_CTL_TLB_FLUSH
        r[SW_CLASSES] = self.classes603
        self.identity_only = True        # see the module notes
        self.exceptions = {"tlb_miss_exceptions": 0, "storage_exceptions": 0}
        # the 603's TLB-miss exception entry (profile [tlb] exception_entry, an estimate),
        # charged per miss the guest takes (the 405's is not modelled)
        self.entry_cycles = tlb.get("exception_entry", 0) if which == "603" else 0
        # the last exceptions delivered, with the registers the handler saw (the SPRs
        # themselves are overwritten by later misses, e.g. the return to the halt address)
        self.deliveries = collections.deque(maxlen=64)
        if which == "405":
            self.regs.set_spr(EVPR405, 0)   # vectors at 0 + offset, like the 603 with IP = 0

    # ---- QEMU's own 603 TLB array
    PROBE_EA, PROBE_CMP, PROBE_RPA = 0x0F0F5000, 0x80ABCDE1, 0x00123002

    def locate_tlb6(self):
        """Find QEMU 5.0's array of 603 TLB entries (``env->tlb.tlb6``: 12 bytes each, the
        compare word, the RPA word and the EPN; data entries first, class + 32 x way) and
        tell the native hooks where its pointer lies in the saved CPU state, so that they
        can undo QEMU's departure (its tlbld drops the other way's entry for the same page
        whatever its VSID; softtlb_insn.c restore_other_way). Found by loading known entries
        with a guest tlbld in real mode and searching the saved state for a pointer (read
        only where /proc/self/maps says it may be read) to an array holding them: two probes
        of different congruence classes, since the state holds other pointers too, and one
        may lead to memory that happens to hold the first probe's entry (an array of an
        earlier emulator); the entries are then removed again (tlbie). Should more than one
        pointer fit (a stale copy of a freed array: earlier emulators in this process ran the
        same probes), the live one is the one whose entry the tlbie invalidated. Returns the
        offset; raises TlbArrayNotFound if no pointer fits, since the native hooks could then
        not undo QEMU's drop and the run's cycles would silently differ.
        ``tlb6_candidates`` says how many fitted."""
        m = self.m
        if self.kind != "603":
            return None
        if "probe_tlbld603" not in m.symbols:
            m.load("        .globl probe_tlbld603\nprobe_tlbld603:\n        tlbld r3\n"
                   "        blr\n        .globl probe_tlbie603\nprobe_tlbie603:\n"
                   "        tlbie r3\n        blr\n")
        identity = self.identity_only
        self.identity_only = False
        probes = [(self.PROBE_EA, self.PROBE_CMP, self.PROBE_RPA),
                  (self.PROBE_EA + 0x1000, self.PROBE_CMP ^ 0x00F0F0F0, self.PROBE_RPA + 0x1000)]
        found, readable, failure = None, [], ""
        try:
            readable = self._readable_spans()
            for ea, cmp_word, rpa in probes:
                self.regs.set_sprs({DCMP: cmp_word, RPA: rpa, SRR1: 0})
                m.call("probe_tlbld603", ea, real_mode=True)
                holding = self._pointers_to_entry(self._saved_state(), readable,
                                                  ea, cmp_word, rpa)
                found = holding if found is None else [o for o in found if o in holding]
        except OSError as error:
            found, failure = [], f" ({type(error).__name__}: {error})"
        finally:
            for ea, _, _ in probes:
                m.call("probe_tlbie603", ea, real_mode=True)
            self.identity_only = identity
        if len(found) > 1:                  # the live array's entry is invalid now
            ea, cmp_word, rpa = probes[0]
            found = self._pointers_to_entry(self._saved_state(), readable, ea,
                                            cmp_word & ~PTE_VALID_BIT, rpa, among=found)
        self.tlb6_candidates = len(found)
        if len(found) != 1:
            raise TlbArrayNotFound(
                f"QEMU's 603 TLB array: {len(found)} pointers in the saved CPU state fit the "
                f"probes{failure}, where one was expected (SoftTLB.locate_tlb6); without it "
                f"the 603's runs would not undo QEMU's same-page drop and their cycles would differ")
        self.records[SW_TLB6] = found[0]
        return found[0]

    def _saved_state(self):
        """The CPU's state as Unicorn saves it (where QEMU's pointer to its TLB array is)."""
        return bytes(self.m.uc.context_save())

    @staticmethod
    def _readable_spans():
        """The host address ranges this process may read (/proc/self/maps), adjacent ones
        joined: an array may lie across the boundary of two mappings (the file lists
        mappings that touch as two lines when their flags differ)."""
        spans = []
        with open("/proc/self/maps") as maps:
            for line in maps:
                span, perms = line.split()[:2]
                if perms.startswith("r"):
                    start, end = (int(x, 16) for x in span.split("-"))
                    if spans and spans[-1][1] == start:
                        spans[-1] = (spans[-1][0], end)
                    else:
                        spans.append((start, end))
        return spans

    def _pointers_to_entry(self, raw, readable, ea, cmp_word, rpa, among=None):
        """The offsets in the saved CPU state ``raw`` (only those ``among``, if given) of
        pointers to a readable array whose data entry of ``ea``'s congruence class (way 0)
        is (cmp_word, rpa, ea)."""
        nr = (ea >> 12) % self.classes603
        size = 12 * 4 * self.classes603
        if not readable:
            return []
        words = np.frombuffer(raw, dtype="<u8", count=len(raw) // 8)
        starts, ends = (np.array(column, dtype=np.uint64) for column in zip(*sorted(readable)))
        span = np.searchsorted(starts, words, side="right") - 1     # the one that may hold it
        end = ends[np.maximum(span, 0)]                              # (spans do not overlap)
        held = (words >= 0x10000) & (span >= 0) & (words < end) & (end - words >= size)
        offsets = []
        for k in np.flatnonzero(held).tolist():
            offset, pointer = 8 * k, int(words[k])
            if among is not None and offset not in among:
                continue
            entry = ctypes.string_at(pointer + 12 * nr, 12)
            if [int.from_bytes(entry[i:i + 4], "little") for i in (0, 4, 8)] == \
                    [cmp_word, rpa, ea]:
                offsets.append(offset)
        return offsets

    # ---- registers
    def _reg(self, reg_id):
        return self.m.uc.reg_read(reg_id) & 0xFFFFFFFF

    def start(self, translate=True):
        """Before a call: translation on (MSR[IR|DR]) or, ``translate=False``, off (real
        mode, as exception handlers and a kernel on pinned entries run); prefix 0."""
        uc, st = self.m.uc, self.m.state
        msr = (XLATE if translate else 0) | MSR_ME
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, msr)
        st[c.H_XLATE] = msr & XLATE
        st[st[c.H_SCRATCH] + S_DIVERGED] = 0
        st[st[c.H_SCRATCH] + S_BLOCK_END] = 0
        self.records[SW_ERROR] = 0
        for k in self.exceptions:
            self.exceptions[k] = 0
        self.deliveries.clear()

    # ---- exceptions
    def _uncount_rest_of_block(self, pc):
        """The block hook counted the whole block; the instructions from the faulting one on
        did not execute (they run again after the handler, in a new block)."""
        st = self.m.state
        start, end = st[st[c.H_SCRATCH] + S_BLOCK_START], st[st[c.H_SCRATCH] + S_BLOCK_END]
        if not start <= pc < end:
            return
        base = st[c.H_CODE_BASE]
        if 0 <= pc - base and end - base <= st[c.H_CODE_TOP]:
            counts, costs = st[c.H_ICOUNT], st[c.H_ICOST]
            st[c.H_INSNS] -= st[counts + end - base] - st[counts + pc - base]
            st[c.H_CYCLES] -= st[costs + end - base] - st[costs + pc - base]
        else:
            n = (end - pc) // 4
            st[c.H_INSNS] -= n
            st[c.H_CYCLES] -= n * st[c.H_DEFAULT_COST]
        st[st[c.H_SCRATCH] + S_BLOCK_END] = 0

    def exception(self, number, reported_pc):
        """Unicorn's interrupt hook: deliver ``number`` to the guest. Returns True if handled
        (delivered, or the end of the call), else a fault to raise (or None: not ours)."""
        m, st, uc = self.m, self.m.state, self.m.uc
        if number not in self.vectors and not (number in (6, 96) and
                                               reported_pc - 4 in (0x300, 0x400)):
            return None
        msr = uc.reg_read(ppc_const.UC_PPC_REG_MSR)
        pc = (reported_pc - 4) & 0xFFFFFFFF
        if number not in self.vectors:
            # the guest branched to an ISI/DSI vector where no handler is loaded
            return self._storage_fault_from_guest(pc)
        fetch = number in (EXCP_IFTLB, EXCP_ITLB, EXCP_ISI)
        if self.kind == "603":
            ea = {EXCP_IFTLB: IMISS, EXCP_DLTLB: DMISS, EXCP_DSTLB: DMISS, EXCP_DSI: DAR}
            ea = self.regs.spr(ea[number]) if number in ea else pc
            store = number == EXCP_DSTLB or (number == EXCP_DSI and
                                             self.regs.spr(DSISR) & 0x02000000)
        else:
            ea = pc if fetch else self.regs.spr(DEAR405)
            store = not fetch and bool(self.regs.spr(ESR405) & 0x00800000)
        if number in TLB_MISSES:
            if fetch and ea & ~0xFFF == HALT & ~0xFFF:
                st[c.H_STOP_ASKED] = 1        # the return to the halt address: the call ends
                uc.emu_stop()
                return True
            count_miss(st, fetch)
            self.exceptions["tlb_miss_exceptions"] += 1
            st[c.H_CYCLES] += self.entry_cycles      # the exception's own entry (603)
        else:
            self.exceptions["storage_exceptions"] += 1
        if not fetch:
            self._uncount_rest_of_block(pc)
        srr0 = ea if fetch and number != EXCP_ISI else pc
        vector = self.vectors[number]
        insn = m.instruction_at(srr0)
        access = "instruction fetch" if fetch else "data store" if store else "data load"
        where = f"PC {srr0:#x} ({m.symbolize(srr0)}): {insn}"
        if vector not in self.installed:
            if number in TLB_MISSES:
                return TLBMissFault(
                    f"TLB miss at {where}: {access} at address {ea:#x}, and no miss handler "
                    f"is loaded at vector {vector:#x} (load one with Machine.load(..., "
                    f"at={vector:#x}))", srr0, insn, ea, access)
            cls = InstructionStorageFault if fetch else DataStorageFault
            why = "the page is not executable (its TLB entry lacks EX)" if \
                self.kind == "405" and number == EXCP_ISI else "protection violation"
            return cls(f"{'instruction' if fetch else 'data'} storage interrupt at {where}: "
                       f"{access} at address {ea:#x}: {why}; no handler at vector "
                       f"{vector:#x}", srr0, insn, ea, access)
        if self.kind == "603" and number in TLB_MISSES:
            sr = self.regs.sr(ea >> 28)
            key = (sr >> 29) & 1 if msr & MSR_PR else (sr >> 30) & 1
            way = victim_way(st, fetch, ea)
            cr0 = uc.reg_read(ppc_const.UC_PPC_REG_CR0) & 0xF
            srr1 = (cr0 << 28) | (key << 19) | (int(fetch) << 18) | (way << 17) | \
                (int(store) << 16) | (msr & 0xFFFF)
            new_msr = (msr & MSR_ME) | MSR_TGPR
        elif self.kind == "603":
            srr1 = (msr & 0xFFFF) | (0x08000000 if number == EXCP_ISI else 0)
            new_msr = msr & MSR_ME
        else:
            srr1 = msr
            new_msr = msr & MSR_ME
        self.regs.set_sprs({SRR0: srr0, SRR1: srr1})
        seen = {"exception": number, "vector": vector, "srr0": srr0, "srr1": srr1, "ea": ea}
        if self.kind == "603":
            seen.update(zip(("imiss", "icmp", "dmiss", "dcmp", "hash1", "hash2"),
                            self.regs.sprs(IMISS, ICMP, DMISS, DCMP, HASH1, HASH2)))
        else:
            seen.update(zip(("dear", "esr"), self.regs.sprs(DEAR405, ESR405)))
        self.deliveries.append(seen)
        uc.reg_write(ppc_const.UC_PPC_REG_MSR, new_msr)
        uc.reg_write(ppc_const.UC_PPC_REG_PC, vector)
        st[c.H_XLATE] = new_msr & XLATE
        return True

    def _storage_fault_from_guest(self, vector_pc):
        """A miss handler found no translation and went on to the ISI/DSI vector, where no
        handler is loaded: report what the guest's SPRs say."""
        m = self.m
        srr0, dar, dsisr = self.regs.sprs(SRR0, DAR, DSISR)
        if self.kind == "405":
            dar = self.regs.spr(DEAR405)
        insn = m.instruction_at(srr0)
        where = f"PC {srr0:#x} ({m.symbolize(srr0)}): {insn}"
        if vector_pc == 0x400:
            return InstructionStorageFault(
                f"instruction storage interrupt at {where}: the TLB miss handler found no "
                f"translation for {srr0:#x}, and no handler is loaded at 0x400",
                srr0, insn, srr0, "instruction fetch")
        access = "data store" if dsisr & 0x02000000 else "data load"
        return DataStorageFault(
            f"data storage interrupt at {where}: {access} at address {dar:#x} (DSISR "
            f"{dsisr:#010x}): the TLB miss handler found no translation, and no handler is "
            f"loaded at 0x300", srr0, insn, dar, access)

    @property
    def identity_only(self):
        return bool(self.records[SW_IDENTITY])

    @identity_only.setter
    def identity_only(self, value):
        self.records[SW_IDENTITY] = int(bool(value))

    # ---- what the native instruction hooks refused (they stop the run; Python says why)
    def refused(self):
        """The GuestError a refused tlbwe, tlbld/tlbli or rfi recorded (cleared), or None."""
        r = self.records
        if not r[SW_ERROR]:
            return None
        code, pc, a, b, k = (int(v) for v in r[SW_ERROR:SW_ERROR_C + 1])
        r[SW_ERROR] = 0
        if code == SW_ERR_PENDING:
            pending = [i for i in range(64) if a >> i & 1]
            why = (f"rfi at {pc:#x} after tlbwe of the data word (WS=1) of valid TLB entries "
                   f"{pending} without their tag word: Unicorn 2.1.4's 405 (QEMU 5.0) clears "
                   "an entry's valid bit when its data word is written, unlike the hardware; "
                   "write the tag word (WS=0) after the data word, as Linux's head_4xx.S does")
        elif code == SW_ERR_IDENTITY_603:
            why = (f"{'tlbli' if k else 'tlbld'} at {pc:#x} loads page {a & ~0xFFF:#x} -> "
                   f"{b & ~0xFFF:#x}: the soft-TLB model needs identity translations (RPN = "
                   "EPN), because Unicorn's memory hooks report physical addresses")
        elif code == SW_ERR_PAGE_SIZE:
            why = (f"tlbwe at {pc:#x} writes a {4 ** a} KB page (SIZE {a}) into entry {b}: "
                   "the model's TLB holds 4 KB pages only (SIZE 1)")
        else:
            why = (f"tlbwe at {pc:#x} maps page {a & ~0xFFF:#x} to {b & ~0xFFF:#x} in entry "
                   f"{k}: the soft-TLB model needs identity translations (RPN = EPN), because "
                   "Unicorn's memory hooks report physical addresses")
        return GuestError(why)

    # ---- the 603's entries, as recorded (see __init__)
    def _entry603(self, fetch, ea, way):
        cls = (ea >> 12) % self.classes603
        return SW_E603 + 4 * ((int(bool(fetch)) * self.classes603 + cls) * 2 + way)

    @property
    def entries603(self):
        """{(fetch, class): [way 0, way 1]}, each (page, compare word, RPA word) or None."""
        out = {}
        r = self.records
        for fetch in (False, True):
            for cls in range(self.classes603):
                at = SW_E603 + 4 * ((int(fetch) * self.classes603 + cls) * 2)
                ways = [(int(r[at + 4 * w]) - 1, int(r[at + 4 * w + 1]), int(r[at + 4 * w + 2]))
                        if r[at + 4 * w] else None for w in (0, 1)]
                if any(ways):
                    out[fetch, cls] = ways
        return out

    def search603(self, ea, cmp, fetch):
        """(way, compare word, RPA word) of the valid entry for ``ea``'s page whose compare
        word is ``cmp`` (the VSID tags it: no flush on a context switch), or None."""
        r = self.records
        for way in (0, 1):
            at = self._entry603(fetch, ea, way)
            if r[at] == (ea >> 12) + 1 and r[at + 1] == cmp:
                return way, int(r[at + 1]), int(r[at + 2])
        return None

    def _mru603(self, fetch, ea):
        return SW_MRU603 + int(bool(fetch)) * self.classes603 + (ea >> 12) % self.classes603

    def use603(self, fetch, ea, way):
        """A translation through ``way``: it becomes the class's most recently used."""
        self.records[self._mru603(fetch, ea)] = way

    def victim603(self, fetch, ea):
        """The way a load into ``ea``'s class replaces (SRR1[WAY]): an empty one, else the
        least recently used."""
        r = self.records
        for way in (0, 1):
            if not r[self._entry603(fetch, ea, way)]:
                return way
        return 1 - int(r[self._mru603(fetch, ea)])

    def search405(self, ea, pid):
        """The 405 TLB entry translating ``ea`` for ``pid`` as ``tlbsx`` finds it: valid, the
        same 4 KB page, TID = ``pid`` or 0 (TID 0 matches every PID: 405GP UM, TLB entry
        fields). Returns (index, tag word, data word) or None. Several matches are an error
        (undefined on the hardware; Linux never creates them)."""
        k = native.lib.emu_softtlb_search405(native.address(self.m.state), ea, pid)
        if k == -2:
            raise RuntimeError(f"several TLB entries translate {ea:#x} for PID {pid}: a "
                               "multiple hit, undefined on the 405")
        if k < 0:
            return None
        return k, int(self.tag405[k]), int(self.data405[k])

    def events(self):
        st = self.m.state
        out = {**self.exceptions,
               "tlb_mirror_divergences": int(st[st[c.H_SCRATCH] + S_DIVERGED])}
        if st[c.H_BATS]:
            out["bat_translations"] = int(st[c.H_BAT_HITS])
        if st[c.H_UNCACHED_LOADS] or st[c.H_UNCACHED_STORES]:
            out["uncached_loads"] = int(st[c.H_UNCACHED_LOADS])
            out["uncached_stores"] = int(st[c.H_UNCACHED_STORES])
        return out


# ------------------------------------------------------------ the page table, from Python

class LinuxPageTable:
    """A two-level page table like Linux/ppc32's, in guest RAM, walked by the guest's miss
    handlers (routines/ppc32/tlbmiss_603.S, tlbmiss_405.S): a 4 KB page directory of 1024
    words, each the physical address of a page-table page or 0; a page-table page of 1024
    PTEs in the book's format (PTE_* above: page | EXEC | RW | DIRTY | ACCESSED | PRESENT).
    The directory's address goes in SPRG2 (603 handlers) or SPRG3 (405 handlers). Pages are
    mapped to themselves (physical = effective)."""

    def __init__(self, machine):
        self.m = machine
        self.pgd = machine.alloc(4096)
        self.tables = {}
        sprg = SPRG2 if machine.soft_tlb.kind == "603" else SPRG3
        machine.soft_tlb.regs.set_spr(sprg, self.pgd)

    def _pte_address(self, ea, create):
        top = ea >> 22
        if top not in self.tables:
            if not create:
                return None
            self.tables[top] = self.m.alloc(4096)
            self.m.write(self.pgd + 4 * top, self.tables[top].to_bytes(4, "big"))
        return self.tables[top] + 4 * ((ea >> 12) & 0x3FF)

    def map(self, start, length=4096, rw=True, exec=True):
        for page in range(start & ~0xFFF, start + length, 0x1000):
            pte = page | PTE_PRESENT | (PTE_RW if rw else 0) | (PTE_EXEC if exec else 0)
            self.m.write(self._pte_address(page, True), pte.to_bytes(4, "big"))

    def unmap(self, start, length=4096):
        for page in range(start & ~0xFFF, start + length, 0x1000):
            at = self._pte_address(page, False)
            if at is not None:
                self.m.write(at, bytes(4))

    def pte(self, ea):
        at = self._pte_address(ea, False)
        return 0 if at is None else self.m.read_word(at)

    def map_machine(self):
        """Map what a routine needs: loaded code, buffers allocated so far (this table too)
        and the top 64 KB of the stack."""
        m = self.m
        self.map(m.code_start, m.next_code - m.code_start)
        self.map(HEAP_BASE, m.heap_end - HEAP_BASE, exec=False)
        self.map(m.stack_top - (64 << 10), 64 << 10, exec=False)


__all__ = ["LinuxPageTable", "SoftTLB", "CpuRegisters", "kind", "lookup", "UcError"]
