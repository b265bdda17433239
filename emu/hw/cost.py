"""The cost model: what each instruction costs, and which ones the cache model must see.

Cycles of a run = the base cost of every executed instruction (by mnemonic, else by class,
from the processor profile; on a profile with [costs.dispatch], the 603e and the 604, the
instructions a dispatch group takes with it cost nothing more: ``dispatch_cycles``) + the
stall of every cache miss (the latency of the level that supplied the line minus the L1
latency, which the pipeline hides) + the stall of write-backs that maintenance
instructions force. It is an in-order, blocking model: misses do not overlap.
That is pessimistic for out-of-order cores (POWER4, Pentium 4), and the chapters say so where it
matters. Stores that need no fill (write-through hits, write-around misses, write-backs of
victims) do not stall: a store buffer absorbs them.

Costs are looked up once per static instruction when a program is loaded, into two prefix-sum
tables over the code region, so the native block hook adds a whole basic block's instruction
count and base cycles with two subtractions. The estimates an instruction's cycles depend on
(its own cost's, and on a superscalar profile those its dispatch group's can: ``Tables.reads``)
are recorded as read when the instruction runs, not when it is loaded (emu.run.costreads).
"""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import cache, estimates
from ..isa.assemble import decode

CLASSES = ("load", "store", "branch", "multiply", "divide", "default")

# Special instructions: (cache-model operation, scope) per mnemonic or CP15 operation.
PPC_SPECIALS = {
    "dcbst": (cache.OP_CLEAN, cache.SCOPE_ALL), "dcbf": (cache.OP_FLUSH, cache.SCOPE_ALL),
    "dcbi": (cache.OP_INVALIDATE, cache.SCOPE_ALL), "dcbz": (cache.OP_ZERO, cache.SCOPE_L1),
    "dcba": (cache.OP_ALLOCATE, cache.SCOPE_L1), "dcbt": (cache.OP_TOUCH, cache.SCOPE_L1),
    "dcbtst": (cache.OP_TOUCH, cache.SCOPE_L1), "icbi": (cache.OP_ICACHE_INVALIDATE, 0),
}
# ARM CP15 c7 operations by (CRm, opc2): ARM ARM names. On Cortex-A9 they act on L1 only;
# the PL310 outer cache has its own (memory-mapped) maintenance.
ARM_CP15_C7 = {
    (10, 1): ("dccmvac", cache.OP_CLEAN), (11, 1): ("dccmvau", cache.OP_CLEAN),
    (14, 1): ("dccimvac", cache.OP_FLUSH), (6, 1): ("dcimvac", cache.OP_INVALIDATE),
    (5, 1): ("icimvau", cache.OP_ICACHE_INVALIDATE), (5, 0): ("iciallu",
                                                            cache.OP_ICACHE_INVALIDATE_ALL),
    (10, 4): ("dsb", None), (10, 5): ("dmb", None), (5, 4): ("isb", None),
    (1, 0): ("icialluis", cache.OP_ICACHE_INVALIDATE_ALL),      # inner shareable (SMP)
    (5, 6): ("bpiall", None), (1, 6): ("bpiallis", None),       # branch predictor: no model
}
OP_NONTEMPORAL, OP_DRAIN_WC = 100, 101
OP_TLB_INVALIDATE, OP_TLB_INVALIDATE_ALL = 200, 201      # given their effect by emu.hw.mmu
TLB_BROADCAST = 2           # scope flag of a TLB invalidation: every core's TLBs, not just its own
# ARM CP15 c8 TLB maintenance by (CRm, opc2) (ARM ARM B4.2.3, B6.1.x): c7 this core's TLB,
# c3 the inner-shareable form every core sees (ARMv7 multiprocessing extensions); c5 and c6
# name the instruction and data TLBs alone, which the model takes as the whole TLB. The
# model's entries carry no ASID: by-ASID operations invalidate everything (more, never less).
ARM_CP15_C8 = {
    (7, 0): ("tlbiall", OP_TLB_INVALIDATE_ALL, 0), (7, 1): ("tlbimva", OP_TLB_INVALIDATE, 0),
    (7, 2): ("tlbiasid", OP_TLB_INVALIDATE_ALL, 0), (7, 3): ("tlbimvaa", OP_TLB_INVALIDATE, 0),
    (5, 0): ("itlbiall", OP_TLB_INVALIDATE_ALL, 0), (5, 1): ("itlbimva", OP_TLB_INVALIDATE, 0),
    (6, 0): ("dtlbiall", OP_TLB_INVALIDATE_ALL, 0), (6, 1): ("dtlbimva", OP_TLB_INVALIDATE, 0),
    (3, 0): ("tlbiallis", OP_TLB_INVALIDATE_ALL, TLB_BROADCAST),
    (3, 1): ("tlbimvais", OP_TLB_INVALIDATE, TLB_BROADCAST),
    (3, 2): ("tlbiasidis", OP_TLB_INVALIDATE_ALL, TLB_BROADCAST),
    (3, 3): ("tlbimvaais", OP_TLB_INVALIDATE, TLB_BROADCAST),
}
OP_SERIALISE = 300          # no effect of its own: only the shared resource (multi-core)
OP_DRAIN_STORES = 301       # a barrier: the store buffer drains (emu.hw.memory)
OP_COMPLETE = 302           # dsb with maintenance in time: also waits for the write-backs
OP_IRQ_OFF, OP_IRQ_RESTORE = 303, 304   # ARM cpsid i, msr cpsr_c: how long interrupts were off
SERIAL = 4                  # scope flag: the instruction also holds the shared resource
BROADCAST = 8               # scope flag: an address-only transaction on the bus (emu.hw.memory)
# scope flag: the special's instruction always reads memory first (x86's lock-prefixed and
# xchg read-modify-writes, whose first access is the read), so the memory hook applies it at
# that read (emu/hw/model/hooks.c, special_at_access) and it needs no code hook: every code
# hook makes Unicorn walk a core's whole list of them at each hooked instruction
AT_ACCESS = 16
# Software-loaded TLBs (emu.hw.softtlb), hooked only on machines that model one: mtmsr (native:
# translation on/off), and, in Python since they need SPRs Unicorn has no register id for,
# tlbld/tlbli (603), tlbwe (405) and rfi.
OP_MTMSR, OP_TLB_LOAD_D, OP_TLB_LOAD_I, OP_TLB_WRITE, OP_RFI = 202, 203, 204, 205, 206
SOFT_TLB_OPS = {OP_MTMSR, OP_TLB_LOAD_D, OP_TLB_LOAD_I, OP_TLB_WRITE, OP_RFI}
# Load-reserve and store-conditional (the reservation's address and value, so that a failed
# store-conditional, which QEMU carries out as a compare-and-exchange with a load and a
# store of the old value, is not taken for a store; and so that a store-conditional waits,
# in a run of several cores, until its core is the earliest: emu.run.parallel).
OP_LOAD_RESERVE, OP_STORE_CONDITIONAL = 210, 211
# The 64-bit MMU's segment lookaside buffer (emu.hw.mmu, native): slbmte RS, RB; slbie RB; slbia.
OP_SLB_STORE, OP_SLB_INVALIDATE, OP_SLB_INVALIDATE_ALL = 207, 208, 209
# tlbie is broadcast to every processor (PowerPC Book III; Linux relies on it on SMP, with
# tlbsync waiting for the others); tlbiel and the 603/405's tlbia act on this core only.
PPC_TLB_BROADCAST = {"tlbie"}
PPC_TLB_SPECIALS = {"tlbie": OP_TLB_INVALIDATE, "tlbiel": OP_TLB_INVALIDATE,
                    "tlbia": OP_TLB_INVALIDATE_ALL, "mtmsr": OP_MTMSR,
                    "tlbld": OP_TLB_LOAD_D, "tlbli": OP_TLB_LOAD_I, "rfi": OP_RFI,
                    "tlbwehi": OP_TLB_WRITE, "tlbwelo": OP_TLB_WRITE,
                    "slbmte": OP_SLB_STORE, "slbie": OP_SLB_INVALIDATE,
                    "slbia": OP_SLB_INVALIDATE_ALL}
X86_SPECIALS = {
    "clflush": (cache.OP_FLUSH, cache.SCOPE_ALL),
    "prefetchnta": (cache.OP_TOUCH_OUTER, 0), "prefetcht0": (cache.OP_TOUCH_OUTER, 0),
    "prefetcht1": (cache.OP_TOUCH_OUTER, 0), "prefetcht2": (cache.OP_TOUCH_OUTER, 0),
    "movntq": (OP_NONTEMPORAL, 0), "movnti": (OP_NONTEMPORAL, 0), "movntil": (OP_NONTEMPORAL, 0),
    "movntdq": (OP_NONTEMPORAL, 0), "movntps": (OP_NONTEMPORAL, 0),
    "movntpd": (OP_NONTEMPORAL, 0), "sfence": (OP_DRAIN_WC, 0), "mfence": (OP_DRAIN_WC, 0),
}
# Instructions that order the cores (emu.run.parallel): the atomic read-modify-write sequences
# locks and counters are made of. A block holding one runs only when its core is the
# earliest (so are blocks where the cache model saw cores share a line, and serialising ones).
PPC_ATOMICS = {"lwarx", "ldarx", "lbarx", "lharx", "stwcx", "stdcx", "stbcx", "sthcx"}
PPC_RESERVE_SIZES = {"lwarx": 4, "ldarx": 8, "lbarx": 1, "lharx": 2, "stwcx": 4, "stdcx": 8,
                     "stbcx": 1, "sthcx": 2}
ARM_RESERVE_SIZES = {"ldrex": 4, "ldrexb": 1, "ldrexh": 2, "ldrexd": 8, "strex": 4,
                     "strexb": 1, "strexh": 2, "strexd": 8}
ARM_ATOMICS = {"ldrex", "ldrexb", "ldrexh", "ldrexd", "strex", "strexb", "strexh", "strexd",
               "swp", "swpb"}


# How an instruction counts in the synchronising prefix sums: an atomic 1, a serialising
# one SYNC_SERIAL, so that a block's sum says both whether it synchronises and whether it
# holds a serialising instruction (a block that does is never taken for a spin: a loop of
# tlbie over a batch reads the same lines and stores nothing, yet makes progress)
SYNC_SERIAL = 1 << 20


# the specials a memory hook can apply at their instruction's read: they read no register
AT_ACCESS_OPS = (OP_DRAIN_STORES, OP_SERIALISE)


def synchronises(isa, mnemonic, op_str):
    """Does the instruction take part in an atomic sequence between cores?"""
    m = mnemonic.lower().rstrip(".+-")
    if isa in ("ppc32", "ppc64"):
        return m in PPC_ATOMICS
    if isa == "arm":
        return m in ARM_ATOMICS
    memory = "(" in op_str or "[" in op_str
    return memory and (m.startswith("lock") or m.startswith(("xchg", "cmpxchg")))


# Memory-hook events Unicorn (QEMU) raises for these instructions that are not data accesses:
# it probes the address with a load (dcbi also with a store). Measured on 750 and 405 models.
PPC_PROBE_ACCESSES = {"dcbst": 1, "dcbf": 1, "dcbi": 2, "icbi": 1}


@dataclass
class Special:
    pc: int
    op: int
    scope: int
    base: int = -1      # Unicorn register id, or -1 for none (PPC rA = 0)
    index: int = -1
    scale: int = 1
    disp: int = 0
    swallow: int = 0    # memory-hook events of this instruction to ignore (see above); for
    #                     a load-reserve or store-conditional, the size of its access


def classify(isa, mnemonic, op_str=""):
    """The cost class of an instruction: load, store, branch, multiply, divide or default."""
    m = mnemonic.lower().rstrip(".+-")
    if isa in ("ppc32", "ppc64"):
        if m.startswith("mul"):
            return "multiply"
        if m.startswith("div"):
            return "divide"
        if m.startswith("st"):
            return "store"
        if m.startswith("l") and m not in ("li", "lis", "la"):
            return "load"
        if m.startswith("b") or m in ("rfi", "rfid", "sc"):
            return "branch"
        return "default"
    if isa == "arm":
        if re.match(r"^(ldr|ldm|pop|vldr|vldm|ldrex)", m):
            return "load"
        if re.match(r"^(str|stm|push|vstr|vstm)", m):
            return "store"
        if re.match(r"^(b|bl|bx|blx)(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)?$", m):
            return "branch"
        if re.match(r"^(mul|mla|mls|umull|smull|umlal|smlal|smul|smla)", m):
            return "multiply"
        if m in ("sdiv", "udiv"):
            return "divide"
        return "default"
    # x86
    if m.startswith("j") or m in ("call", "ret", "loop", "loope", "loopne", "calll", "retl"):
        return "branch"
    if m.startswith(("mul", "imul")):
        return "multiply"
    if m.startswith(("div", "idiv")):
        return "divide"
    if "(" in op_str or "[" in op_str:
        dest = op_str.rsplit(",", 1)[-1] if "," in op_str else ""
        return "store" if ("(" in dest) else "load"
    return "default"


# Capstone's names for instructions the profiles cost under their architectural name.
ALIASES = {"mtctr": "mtspr", "mtlr": "mtspr", "mtxer": "mtspr", "mfctr": "mfspr",
           "mflr": "mfspr", "mfxer": "mfspr", "tlbwehi": "tlbwe", "tlbwelo": "tlbwe",
           "tlbrehi": "tlbre", "tlbrelo": "tlbre", "movntil": "movnti"}


def instruction_cost(costs, isa, mnemonic, op_str=""):
    """Base cycles of one instruction from a profile's [costs] table: its mnemonic's entry
    (under capstone's or the architectural name), else its class's. A ``lock`` prefix adds
    the profile's ``lock`` cost to the instruction's own, and so does an x86 xchg with a
    memory operand, which is locked without the prefix (Intel SDM Vol. 2B, XCHG: "the
    processor's locking protocol is automatically implemented ... regardless of the presence
    or absence of the LOCK prefix")."""
    mnemonics = costs.get("mnemonics", {})
    key = mnemonic.lower().rstrip(".+-").replace(" ", "_")
    extra = 0
    if key.startswith("lock_"):
        extra, key = mnemonics.get("lock", 0), key[len("lock_"):]
        mnemonic = key
    elif isa == "x86" and key.startswith("xchg") and ("(" in op_str or "[" in op_str):
        extra = mnemonics.get("lock", 0)
    for candidate in (key, ALIASES.get(key), key.split("_", 1)[1] if key.startswith(
            ("rep_", "repz_", "repnz_", "repe_", "repne_")) else None):
        if candidate in mnemonics:
            return mnemonics[candidate] + extra
    return costs.get(classify(isa, mnemonic, op_str), costs.get("default", 1)) + extra


def _reg_id(isa, name):
    from unicorn import arm_const, ppc_const, x86_const
    name = name.strip().lower()
    if isa in ("ppc32", "ppc64"):
        n = int(name.lstrip("r%"))
        return ppc_const.UC_PPC_REG_0 + n
    if isa == "arm":
        alias = {"sb": "r9", "sl": "r10", "fp": "r11", "ip": "r12"}
        return getattr(arm_const, f"UC_ARM_REG_{alias.get(name, name).upper()}")
    return getattr(x86_const, f"UC_X86_REG_{name.upper()}")


def _arm_cp15(word, crn=7):
    """The entry of ARM_CP15_C7 (or, ``crn`` = 8, ARM_CP15_C8) for an
    MCR p15, 0, Rt, c<crn>, CRm, opc2 word, or None."""
    if (word >> 24) & 0xF != 0b1110 or (word >> 4) & 1 != 1 or (word >> 20) & 1:
        return None
    if (word >> 8) & 0xF != 15 or (word >> 16) & 0xF != crn or (word >> 21) & 7:
        return None
    table = ARM_CP15_C7 if crn == 7 else ARM_CP15_C8
    return table.get(((word & 0xF), (word >> 5) & 7))


# Barriers that wait for the store buffer to drain (emu.hw.memory), hooked only on profiles
# that model one: full syncs, data barriers, x86 fences and locked instructions.
PPC_STORE_DRAINS = {"sync", "hwsync", "msync", "ptesync"}
ARM_STORE_DRAINS = {"dsb", "dmb"}


def drains_stores(isa, mnemonic, key, op_str):
    m = mnemonic.lower()
    if isa in ("ppc32", "ppc64"):
        return m in PPC_STORE_DRAINS
    if isa == "arm":
        return m in ARM_STORE_DRAINS or key in ARM_STORE_DRAINS
    return m == "mfence" or (("(" in op_str or "[" in op_str) and
                             (m.startswith("lock") or m.startswith("xchg")))


def _broadcast_only(isa, pc, mnemonic, key, op_str):
    """The special of a broadcast instruction with no effect of its own in the model: a
    barrier (the 750's sync) completes as every posted-write-back barrier does (OP_COMPLETE:
    the store buffer, the posted write-backs, then its own tenure), anything else (eieio)
    only holds the bus."""
    if drains_stores(isa, mnemonic, key, op_str):
        return Special(pc, OP_COMPLETE, 0)
    return Special(pc, OP_SERIALISE, 0)


def analyse(isa, code, address, serialising=(), store_buffer=False, broadcasts=(),
            barriers=()):
    """Disassemble loaded code: [(address, size, cost key, class, Special or None,
    synchronises: 1 atomic, SYNC_SERIAL serialising, 0 neither)]. Instructions named in ``serialising`` (a profile's [smp] list) get the
    SERIAL flag; with ``store_buffer``, barriers get OP_DRAIN_STORES (emu.hw.memory); those
    named in ``broadcasts`` (a profile's [bus] address_only) get the BROADCAST flag; those
    named in ``barriers`` (dsb with the A9's maintenance in time, POWER4's sync) get
    OP_COMPLETE: they wait for the posted maintenance write-backs before them."""
    out = []
    for insn in decode(code, isa, address, detail=True):
        mnemonic = insn.mnemonic.lower()
        key, special = mnemonic, None
        if isa in ("ppc32", "ppc64") and mnemonic in PPC_SPECIALS:
            op, scope = PPC_SPECIALS[mnemonic]
            regs = [r.strip() for r in insn.op_str.split(",")]
            base = -1 if regs[0] in ("0", "r0") else _reg_id(isa, regs[0])
            special = Special(insn.address, op, scope, base, _reg_id(isa, regs[1]),
                              swallow=PPC_PROBE_ACCESSES.get(mnemonic, 0))
        elif isa in ("ppc32", "ppc64") and mnemonic.rstrip(".") in PPC_RESERVE_SIZES:
            m = mnemonic.rstrip(".")                # lwarx rD, rA, rB / stwcx. rS, rA, rB
            regs = [r.strip() for r in insn.op_str.split(",")]
            base = -1 if regs[1] in ("0", "r0") else _reg_id(isa, regs[1])
            special = Special(insn.address, OP_STORE_CONDITIONAL if m.startswith("st") else
                              OP_LOAD_RESERVE, 0, base, _reg_id(isa, regs[2]),
                              swallow=PPC_RESERVE_SIZES[m])
        elif isa == "arm" and mnemonic in ARM_RESERVE_SIZES:
            mem = [o for o in insn.operands if o.type == 3]   # ARM_OP_MEM: [rn]
            special = Special(insn.address, OP_STORE_CONDITIONAL if mnemonic.startswith("st")
                              else OP_LOAD_RESERVE, 0,
                              _reg_id(isa, insn.reg_name(mem[0].mem.base)),
                              swallow=ARM_RESERVE_SIZES[mnemonic])
        elif isa in ("ppc32", "ppc64") and mnemonic in PPC_TLB_SPECIALS:
            regs = [r.strip() for r in insn.op_str.split(",") if r.strip()]
            if mnemonic.startswith("tlbwe"):        # tlbwe RS, RA, WS: base RS, index RA
                special = Special(insn.address, OP_TLB_WRITE, int(mnemonic == "tlbwelo"),
                                  _reg_id(isa, regs[0]), _reg_id(isa, regs[1]))
            elif mnemonic == "slbmte":              # slbmte RS, RB: base RS, index RB
                special = Special(insn.address, OP_SLB_STORE, 0, _reg_id(isa, regs[0]),
                                  _reg_id(isa, regs[1]))
            else:
                special = Special(insn.address, PPC_TLB_SPECIALS[mnemonic],
                                  TLB_BROADCAST if mnemonic in PPC_TLB_BROADCAST else 0, -1,
                                  _reg_id(isa, regs[0]) if regs else -1)
        elif isa == "arm" and mnemonic.startswith("mcr"):
            word = int.from_bytes(insn.bytes, "little")
            rt = _reg_id(isa, f"r{(word >> 12) & 0xF}")
            found = _arm_cp15(word)
            tlb_op = _arm_cp15(word, 8)
            if found:
                key, op = found
                if op is not None:
                    special = Special(insn.address, op, cache.SCOPE_L1, rt)
            elif tlb_op:
                key, op, scope = tlb_op
                # Rt holds MVA | ASID: the by-MVA operations take the page from it
                special = Special(insn.address, op, scope, -1, rt)
        elif isa == "arm" and mnemonic == "pld":
            mem = [o for o in insn.operands if o.type == 3]   # ARM_OP_MEM
            if mem:
                m = mem[0].mem
                shift = mem[0].shift.value if mem[0].shift.type == 2 else 0   # ARM_SFT_LSL
                scale = 1 << shift
                if mem[0].subtracted:
                    scale = -scale
                special = Special(insn.address, cache.OP_TOUCH, cache.SCOPE_L1,
                                  _reg_id(isa, insn.reg_name(m.base)),
                                  _reg_id(isa, insn.reg_name(m.index)) if m.index else -1,
                                  scale, m.disp)
        elif isa == "x86" and mnemonic in X86_SPECIALS:
            op, scope = X86_SPECIALS[mnemonic]
            special = Special(insn.address, op, scope)
            mem = [o for o in insn.operands if o.type == 3]   # X86_OP_MEM
            if mem:
                m = mem[0].mem
                special.base = _reg_id(isa, insn.reg_name(m.base)) if m.base else -1
                special.index = _reg_id(isa, insn.reg_name(m.index)) if m.index else -1
                special.scale, special.disp = m.scale, m.disp
        if isa == "arm" and special is None and (mnemonic == "cpsid" or (
                mnemonic == "msr" and "cpsr_c" in insn.op_str.replace(" ", ""))):
            special = Special(insn.address, OP_IRQ_OFF if mnemonic == "cpsid" else
                              OP_IRQ_RESTORE, 0)
        if special is None and (mnemonic in barriers or key in barriers):
            special = Special(insn.address, OP_COMPLETE, 0)
        if store_buffer and special is None and drains_stores(isa, mnemonic, key,
                                                               insn.op_str):
            special = Special(insn.address, OP_DRAIN_STORES, 0)
        if key in broadcasts:
            special = special or _broadcast_only(isa, insn.address, mnemonic, key,
                                                 insn.op_str)
            special.scope |= BROADCAST
        if key in serialising:
            special = special or Special(insn.address, OP_SERIALISE, 0)
            special.scope |= SERIAL
        if (isa == "x86" and special is not None and special.op in AT_ACCESS_OPS and
                not special.scope & BROADCAST and synchronises(isa, mnemonic, insn.op_str)):
            special.scope |= AT_ACCESS
        serial = special is not None and special.scope & SERIAL != 0
        out.append((insn.address, insn.size, key, insn.op_str, special,
                    int(synchronises(isa, mnemonic, insn.op_str)) +
                    (SYNC_SERIAL if serial else 0)))
    return out


def may_write(isa, mnemonic):
    """Can the instruction write memory (raise a write event in Unicorn's memory hooks)?
    On PowerPC the stores (every st* mnemonic: stmw, stswi, stwcx. ...), the cache-block
    instructions (dcbz writes the block, dcbi's probe is a store; dcb* and icb* all
    counted) and ecowx; no other instruction. Elsewhere: True (not needed: only the POWER4
    store queues use it, emu/hw/model/hooks.c)."""
    if isa not in ("ppc32", "ppc64"):
        return True
    m = mnemonic.lower()
    return m.startswith(("st", "dcb", "icb")) or m == "ecowx"


@dataclass
class Tables:
    """Per byte of a program, 1 where an instruction starts (its base cycles, how it
    synchronises the cores: SYNC_SERIAL above, 1 where one that may write memory starts:
    may_write, and on PowerPC every word capstone cannot decode), so that prefix sums over
    the code region count what lies before each offset (emu.run.machine); and the special
    instructions. What its cycles depend on, per instruction (at its first byte): ``reads``,
    an index into ``read_sets`` (frozensets of estimate names; 0, the empty set: none), the
    estimates its own cost and its dispatch read (``dispatch_cycles``); ``segments``, the
    offset of the first instruction whose cost can change its cycles (its own; on a
    profile with dispatch groups, the first of those since a group boundary no move can
    shift: ``dispatch_cycles``'s ``segments``)."""
    starts: np.ndarray
    cycles: np.ndarray
    syncs: np.ndarray
    writes: np.ndarray
    specials: list
    reads: np.ndarray = None
    read_sets: tuple = (frozenset(),)
    segments: np.ndarray = None


#: programs' Tables worked out in this process: {key: Tables}; a kernel loads the same
#: dozen routines into every machine it makes (a sweep's runs, a scorecard move's), and
#: their analysis was a third of a small run
_TABLES = OrderedDict()
_TABLES_KEPT = 256


def tables(isa, costs, code, address, serialising=(), store_buffer=False, broadcasts=(),
           barriers=(), entries=()):
    """The Tables of a program loaded at ``address`` (kept: the same program, address and
    costs, moved values included, give the same Tables). ``entries``: the program's labels,
    where a dispatch group starts (``dispatch_cycles``). The estimates its costs read are
    not recorded as read here: they are in the Tables, for the machine to record when the
    instructions run (emu.run.costreads)."""
    entries = tuple(sorted(a for a in set(entries) if address <= a < address + len(code)))
    key = (isa, _costs_key(costs), bytes(code), address, tuple(serialising),
           bool(store_buffer), tuple(broadcasts), tuple(barriers), entries)
    found = _TABLES.get(key)
    if found is not None:
        _TABLES.move_to_end(key)
        return found
    found = _tables(isa, costs, code, address, serialising, store_buffer, broadcasts,
                    barriers, entries)
    _TABLES[key] = found
    if len(_TABLES) > _TABLES_KEPT:
        _TABLES.popitem(last=False)
    return found


def _costs_key(costs):
    """A profile's costs table as a key: its values (moved ones included) and whose they are
    (the names its reads note)."""
    mnemonics = costs.get("mnemonics") if isinstance(costs, dict) else None
    return (getattr(costs, "prefix", None), getattr(mnemonics, "prefix", None), repr(costs))


def _tables(isa, costs, code, address, serialising, store_buffer, broadcasts, barriers,
            entries=()):
    starts = np.zeros(len(code), np.int64)
    cycles = np.zeros(len(code), np.int64)
    syncs = np.zeros(len(code), np.int64)
    writes = np.zeros(len(code), np.int64)
    if isa in ("ppc32", "ppc64"):
        writes[::4] = 1                 # a word capstone cannot read might store: counted
    reads = np.zeros(len(code), np.int32)
    segments = np.arange(len(code), dtype=np.int32)
    specials = []
    rows = analyse(isa, code, address, serialising, store_buffer, broadcasts, barriers)
    base, own = [], []
    with estimates.recorded() as watch:
        for _, _, key, op_str, _, _ in rows:
            watch.read.clear()                      # this instruction's own estimates
            base.append(instruction_cost(costs, isa, key, op_str))
            own.append(frozenset(watch.read))
    first = []
    with estimates.recorded() as dispatch:          # the group's (the 603e's width ...)
        base = dispatch_cycles(isa, costs, rows, base, entries, own, first)
    read_sets = {frozenset(): 0}
    for k, ((pc, size, key, op_str, special, sync), cost_) in enumerate(zip(rows, base)):
        off = pc - address
        starts[off] = 1
        cycles[off] = cost_
        syncs[off] = int(sync)
        writes[off] = int(may_write(isa, key))
        reads[off] = read_sets.setdefault(own[k] | dispatch.read, len(read_sets))
        segments[off] = rows[first[k]][0] - address
        if special is not None:
            specials.append(special)
    return Tables(starts, cycles, syncs, writes, specials, reads, tuple(read_sets), segments)


# ------------------------------------------------------------------ dispatch groups
# A superscalar core's base cycles (a profile's [costs.dispatch]: the 603e dispatches two
# instructions a clock, the 604 four). The model groups the instructions statically, in
# program order, as the dispatcher takes them: an instruction joins the group before it (and
# costs nothing more) unless the group is full (``width``), the copies of its execution unit
# are taken (a count per unit: ``integer``, ``complex``, ``load_store``, ``branch``,
# ``float``; a unit not named has ``width`` copies), it reads a register an instruction of
# the group writes (it could dispatch, to a reservation station, but not execute in the same
# clock), or it is the target of a direct branch or a label of its program (a routine's
# entry, an exception vector: indirect targets the code does not show); a branch ends its
# group. An instruction whose own cost is not one cycle (sync, a divide, a cache operation:
# a [costs.mnemonics] entry), or that moves to or from a special register other than the
# link and count registers, the MSR or a segment register, dispatches alone at its full
# cost. With ``width`` 1 every instruction costs what it did in the one-issue model. Not
# modelled: rename buffers, the completion queue, branch prediction and misprediction,
# load-use latency beyond a group, condition-register dependences (only GPRs are tracked),
# and the CR-logical instructions' own unit (the 604's branch unit, UM Table 9-3; the
# 603e's SRU): they dispatch as integer instructions here.
DISPATCH_UNITS = ("integer", "complex", "load_store", "branch", "float")
PPC_LINK_MOVES = {"mflr", "mtlr", "mfctr", "mtctr", "mfcr"}
PPC_DISPATCH_ALONE = {"sc", "rfi", "rfid", "lmw", "stmw", "lswi", "lswx", "stswi", "stswx",
                      "mtcrf", "mcrxr", "tlbia", "tlbld", "tlbli"}
_GPR = re.compile(r"\br(\d+)\b")
_HEX_TARGET = re.compile(r"(?:^|[ ,])(0x[0-9a-f]+|\d+)$")


def _ppc_unit(m, cls):
    if m.startswith("f"):
        return "float"
    if cls in ("load", "store"):
        return "load_store"
    if cls == "branch":
        return "branch"
    if cls in ("multiply", "divide") or m in PPC_LINK_MOVES:
        return "complex"
    return "integer"


def _ppc_dispatches_alone(m, cls, cost_, mnemonics):
    return (cost_ != 1 or m in mnemonics or m in PPC_DISPATCH_ALONE or
            (m.startswith(("mt", "mf")) and m not in PPC_LINK_MOVES))


def _ppc_registers(m, cls, op_str):
    """(GPRs read, GPRs written) of a PowerPC instruction, from its operands: the first
    operand is the target of a load or an arithmetic, logical or move-from instruction
    (an insert, rlwimi and its aliases, also reads it), the base of an update form is
    written too."""
    regs = [int(r) for r in _GPR.findall(op_str)]
    if not regs:
        return frozenset(), frozenset()
    first_is_gpr = op_str.split(",")[0].strip() == f"r{regs[0]}"
    targets = cls in ("load", "default", "multiply", "divide") and first_is_gpr and \
        not m.startswith(("cmp", "tw", "mt"))
    written = {regs[0]} if targets else set()
    inserts = m.startswith(("rlwimi", "rldimi", "inslwi", "insrwi"))    # they read it too
    read = set(regs[1:] if targets and not inserts else regs)
    if cls in ("load", "store") and m.endswith(("u", "ux")) and len(regs) > 1:
        written.add(regs[1])                    # lwzu rD, d(rA) / stwux rS, rA, rB: rA
    return frozenset(read), frozenset(written)


def _branch_targets(rows):
    """The addresses direct branches in ``rows`` go to."""
    found = set()
    for pc, _, key, op_str, _, _ in rows:
        if classify("ppc32", key) == "branch":
            target = _HEX_TARGET.search(op_str.strip())
            if target:
                found.add(int(target[1], 0))
    return found


def dispatch_cycles(isa, costs, rows, base, entries=(), estimated=None, first=None):
    """Each instruction's base cycles (``base``, from ``instruction_cost``) once the profile's
    dispatch groups are formed (see above): 1 for the first of a group, 0 for the others,
    its own cost for one that dispatches alone. Unchanged without [costs.dispatch] (every
    profile but the 603e's and the 604's) or off PowerPC.

    ``first``, a list, gets for each instruction the index of the first one whose cost can
    change its cycles: itself without dispatch groups, else the first since the last point
    where a group ends whatever the costs (a branch; an instruction that dispatches alone
    for what it is, or for a cost that is no estimate: ``estimated``, each instruction's
    estimates read, empty for none; a branch target or label starts one afresh)."""
    table = costs.get("dispatch") if isinstance(costs, dict) else None
    if first is not None:
        first[:] = range(len(rows))
    if not table or isa not in ("ppc32", "ppc64"):
        return base
    width = table["width"]
    units = {unit: table[unit] for unit in DISPATCH_UNITS if unit in table}
    if width == 1:
        return base
    mnemonics = costs.get("mnemonics", {})
    targets = _branch_targets(rows) | set(entries)
    out, group, start = list(base), None, 0
    for k, (pc, _, key, op_str, _, _) in enumerate(rows):
        m = key.rstrip(".+-")
        cls = classify(isa, m, op_str)
        if pc in targets:
            start = k                   # what came before cannot reach it
        if first is not None:
            first[k] = start
        if _ppc_dispatches_alone(m, cls, base[k], mnemonics):
            group = None
            if cls == "branch" or _ppc_dispatches_alone(m, cls, 1, mnemonics) or \
                    not (estimated and estimated[k]):
                start = k + 1           # alone whatever any estimate is: a boundary
            continue
        unit = _ppc_unit(m, cls)
        read, written = _ppc_registers(m, cls, op_str)
        if (group is not None and pc not in targets and group["count"] < width and
                group["units"].get(unit, 0) < units.get(unit, width) and
                not read & group["written"]):
            out[k] = 0
            group["count"] += 1
            group["units"][unit] = group["units"].get(unit, 0) + 1
            group["written"] |= written
        else:
            group = {"count": 1, "units": {unit: 1}, "written": set(written)}
        if cls == "branch":
            group = None
            start = k + 1
    return out
