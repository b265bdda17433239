"""What stopped a call, said in words: the instruction limit, a page fault and where the
walker looked, a stale instruction fetch, a guest exception or memory fault naming its PC,
instruction and address, a halted CPU; and the Python hooks that note such a stop while
Unicorn runs (``on_invalid``, ``on_interrupt``). Each function takes the Machine."""
from __future__ import annotations

import functools

from unicorn import UcError, ppc_const, unicorn_const

from ..hw import cache as c
from ..hw import hash64
from ..hw import mmu as mmu_model
from ..hw.faults import (ACCESS_NAMES, HALTS, INTERRUPT_NAMES, TRAPS_AFTER, DataStorageFault,
                         GuestFault, GuestHalted, InstructionLimitExceeded,
                         InstructionStorageFault, PageFault, SegmentFault,
                         StaleInstructionFetch)
from ..isa.assemble import decode, disassemble_one
from .calling import PC_REGISTERS
from .limits import cap_note


def check_stop(m):
    """Raise what stopped the running core: the instruction limit, a page fault, a
    stale instruction fetch under strict coherence, a refused soft-TLB instruction."""
    st = m.state
    if m.soft_tlb and (refused := m.soft_tlb.refused()):
        raise refused
    where_core = f"core {m.model.running}: " if len(m.cpus) > 1 else ""
    if st[c.H_STOPPED]:
        where = m.pc()
        raise InstructionLimitExceeded(
            f"{where_core}stopped after {int(st[c.H_INSNS]):,} instructions (the limit is "
            f"{int(st[c.H_LIMIT]):,}{cap_note(int(st[c.H_LIMIT]))}) at PC {where:#x} "
            f"({m.symbolize(where)}): "
            f"{instruction_at(m, where)}")
    if st[c.H_PAGE_FAULTS]:
        raise _page_fault(m)
    if st[c.H_HALTED]:
        pc = int(st[c.H_HALTED]) - 1
        st[c.H_HALTED] = 0
        raise halted(m, pc)
    if st[st[c.H_SCRATCH] + hash64.S_SLB_PC]:
        at = st[c.H_SCRATCH]
        raise _slbmte_refused(m, int(st[at + hash64.S_SLB_PC]), int(st[at + hash64.S_SLB_RS]),
                              int(st[at + hash64.S_SLB_RB]))
    if st[c.H_STRICT] and st[c.H_STALE]:
        pc_stale = int(st[c.H_STALE_PC])
        raise StaleInstructionFetch(
            f"{where_core}stale instruction fetch at PC {pc_stale:#x} "
            f"({m.symbolize(pc_stale)}): the I-cache line at "
            f"{int(st[c.H_STALE_ADDR]):#x} holds bytes older than "
            "the last store to them (the D-cache was not written back, or the I-cache "
            "line was not invalidated); real hardware would execute the old instructions")


def raise_stop(m):
    """Raise what the last run recorded as the reason it stopped: a fault a hook noted,
    or a stop the model asked for (check_stop); nothing if it recorded none."""
    if m.stop_record is not None:
        if m.stop_record[0] == "raise":
            raise m.stop_record[1]
        raise describe_fault(m, None)
    check_stop(m)


def stop_for(m, fault, uc=None):
    """A Python hook stops the machine: what for (raised when the run returns), and the
    flag that tells the scheduler of a parallel run (emu.run.parallel) why it stopped."""
    m.stop_record = fault
    m.state[c.H_HOST_STOP] = 1
    if uc is not None:
        uc.emu_stop()


def on_invalid(m, uc, access, address, size, value, user_data):
    # the first invalid access, and the PC as it is now: an instruction that stores
    # through a helper (dcbz, stmw, stswi) goes on after it, and Unicorn's PC when
    # it stops is not the instruction's (it named the halt address)
    if m.stop_record is None or m.stop_record[0] != "memory":
        stop_for(m, ("memory", access, address, size, pc_of(m, uc)))
    return False


def pc_of(m, uc):
    return uc.reg_read(PC_REGISTERS[m.isa])


def on_interrupt(m, uc, number, user_data):
    if m.interrupt_handler is not None and m.interrupt_handler(uc, number):
        return                      # delivered to the guest (emu.kernel.entry)
    if number == 6 and m.isa == "ppc64":
        # tlbie and tlbsync are hypervisor-privileged on Unicorn's PPC64 model (platform
        # notes): their effect was given by the special hook; go on past them
        pc = uc.reg_read(ppc_const.UC_PPC_REG_PC)
        if instruction_at(m, pc - 4).split()[0] in ("tlbie", "tlbsync"):
            uc.reg_write(ppc_const.UC_PPC_REG_PC, pc)
            return
        if instruction_at(m, pc - 4).split()[0] == "slbmte" and \
                m.state[c.H_MMU] == mmu_model.MODE_HASHED64:
            # Unicorn's CPU has 32 SLB entries, POWER4 64: the model took the entry
            # (special hook); go on past it unless the model refused it too
            rs, rb = _slbmte_operands(m, uc, pc - 4)
            if hash64.slbmte_problem(rs, rb, m.profile.tlb["slb_entries"]) is None:
                uc.reg_write(ppc_const.UC_PPC_REG_PC, pc)
                return
            stop_for(m, ("raise", _slbmte_refused(m, pc - 4, rs, rb)), uc)
            return
    if m.soft_tlb:
        handled = m.soft_tlb.exception(number, m.pc())
        if handled is True:
            return
        if handled is not None:
            stop_for(m, ("raise", handled), uc)
            return
    stop_for(m, ("interrupt", number, None, None, pc_of(m, uc)), uc)


def instruction_at(m, pc):
    try:
        return _disassembled(m.read(pc, 16 if m.isa == "x86" else 4), m.isa, pc)
    except UcError:
        return "(no instruction: the address is not mapped)"


@functools.lru_cache(maxsize=4096)
def _disassembled(code, isa, pc):
    """disassemble_one, kept by its bytes and address: on PPC64 every tlbie and tlbsync
    interrupts (on_interrupt asks what the instruction was), thousands a build."""
    return disassemble_one(code, isa, pc)


def _slbmte_operands(m, uc, pc):
    """(RS, RB) of the slbmte at ``pc``, read from the registers it names."""
    names = instruction_at(m, pc).split(None, 1)[1].split(",")
    return [uc.reg_read(ppc_const.UC_PPC_REG_0 + int(name.strip().lstrip("r%")))
            for name in names]


def _slbmte_refused(m, pc, rs, rb):
    insn = instruction_at(m, pc)
    why = hash64.slbmte_problem(rs, rb, m.profile.tlb["slb_entries"])
    return GuestFault(f"slbmte refused at PC {pc:#x} ({m.symbolize(pc)}): {insn}: {why}",
                      pc, insn, None, "slbmte")


def _page_fault(m):
    st = m.state
    pc, ea = int(st[c.H_FAULT_PC]), int(st[c.H_FAULT_EA])
    access = "instruction fetch" if st[c.H_FAULT_FETCH] else \
        "data store" if st[c.H_FAULT_WRITE] else "data load"
    insn = instruction_at(m, pc)
    hashes = mmu_describe(m, ea)
    kind, name = PageFault, "page fault"
    if st[c.H_MMU] == mmu_model.MODE_HASHED64:
        kind, name = {hash64.FAULT_SEGMENT: (SegmentFault, "segment fault"),
                      hash64.FAULT_NO_EXECUTE: (InstructionStorageFault,
                                                "no-execute fault"),
                      hash64.FAULT_PROTECTION: (DataStorageFault, "protection fault")}.get(
                          int(st[c.H_FAULT_STATUS]), (PageFault, "page fault"))
    where_core = f"core {m.model.running}: " if len(m.cpus) > 1 else ""
    return kind(f"{where_core}{name} at PC {pc:#x} ({m.symbolize(pc)}): {insn}: {access} "
                f"at address {ea:#x}, {hashes}", pc, insn, ea, access)


def mmu_describe(m, ea):
    """Where the walker looked for ``ea``: VSID, both hashes and PTEG addresses (ARM:
    the fault status and the descriptors it read)."""
    st = m.state
    if st[c.H_MMU] == mmu_model.MODE_ARM_SHORT:
        status = int(st[c.H_FAULT_STATUS])
        kind = {mmu_model.FSR_TRANSLATION_SECTION: "translation fault (section)",
                mmu_model.FSR_TRANSLATION_PAGE: "translation fault (page)",
                mmu_model.FSR_PERMISSION_SECTION: "permission fault (section)",
                mmu_model.FSR_PERMISSION_PAGE: "permission fault (page)"}.get(
                    status, f"fault status {status:#x}")
        l1, l2 = int(st[c.H_FAULT_L1_ADDR]), int(st[c.H_FAULT_L2_ADDR])
        read = f"first-level descriptor at {l1:#x}" if l1 >= 0 else \
            "the TLB entry forbids it (invalidate the entry after changing the PTE)"
        if l2 >= 0:
            read += f", second-level descriptor at {l2:#x}"
        return f"{kind} (FSR {status:#x}): {read}"
    if st[c.H_MMU] == mmu_model.MODE_HASHED64:
        return _describe_hash64(m, ea)
    vsid = int(st[st[c.H_SEGMENTS] + ((ea >> 28) & 0xF)]) & 0xFFFFFF
    sdr1 = int(st[c.H_SDR1])
    h1, h2 = mmu_model.primary_hash(vsid, ea), mmu_model.secondary_hash(vsid, ea)
    return (f"VSID {vsid:#x}: no valid PTE in the primary PTEG at "
            f"{mmu_model.pteg_address(sdr1, h1):#x} (hash {h1:#x}) or the secondary at "
            f"{mmu_model.pteg_address(sdr1, h2):#x} (hash {h2:#x})")


def _describe_hash64(m, ea):
    """64-bit: the SLB entry, VSID, both hashes and PTEG addresses, what went wrong."""
    st = m.state
    status = int(st[c.H_FAULT_STATUS])
    what = hash64.FAULT_NAMES.get(status, f"fault status {status}")
    entry = m.mmu.slb_lookup(ea)
    if entry is None:
        return f"{what}: no valid SLB entry has ESID {ea >> 28:#x}"
    index, vsid_word = entry[0], entry[1]
    vsid, sdr1 = vsid_word >> 12, int(st[c.H_SDR1])
    h1, h2 = hash64.primary_hash(vsid, ea), hash64.secondary_hash(vsid, ea)
    where = (f"SLB entry {index}: ESID {ea >> 28:#x} -> VSID {vsid:#x}; primary PTEG at "
             f"{hash64.pteg_address(sdr1, h1):#x} (hash {h1:#x}), secondary at "
             f"{hash64.pteg_address(sdr1, h2):#x} (hash {h2:#x})")
    if status == hash64.FAULT_NO_HPTE:
        return f"{what}: no valid HPTE in either PTEG: {where}"
    return f"{what}: {where}"


def _instruction_ending_at(m, pc):
    """(address, text) of the instruction that ends at ``pc``, or None: the last block
    the model charged is decoded from its start (x86 instructions have no fixed
    length), else the fixed width of the ISA."""
    st = m.state
    start, size = int(st[c.H_BLOCK_START]), int(st[c.H_BLOCK_SIZE])
    if start < pc <= start + size:
        try:
            code = m.read(start, pc - start)
        except UcError:
            code = b""
        found = _ending_at(m.isa, start, code)
        if found is not None:
            return found
    if m.isa != "x86":
        return pc - 4, instruction_at(m, pc - 4)
    for length in (1, 2):            # int3, into, int1, hlt; int $n
        try:
            code = m.read(pc - length, length)
        except UcError:
            return None
        found = [i for i in decode(code, "x86", pc - length) if i.size == length]
        if found:
            return pc - length, f"{found[0].mnemonic} {found[0].op_str}".strip()
    return None


@functools.lru_cache(maxsize=256)
def _ending_at(isa, start, code):
    """(address, text) of the instruction of ``code`` (decoded from ``start``) that ends
    where ``code`` ends, or None. Kept by the code's bytes: a kernel's idle loop halts at
    the same hlt thousands of times a run (emu.papers.yoshioka2005's paced writers)."""
    for insn in decode(code, isa, start):
        if insn.address + insn.size == start + len(code):
            return insn.address, f"{insn.mnemonic} {insn.op_str}".strip()
    return None


def _trap_instruction(m, pc, names):
    """The instruction before ``pc`` if its mnemonic is one of ``names`` (Unicorn
    reports the PC past it), else None."""
    before = _instruction_ending_at(m, pc)
    if before and before[1].split()[0].lower() in names:
        return before
    return None


def _raises(insn, number, traps):
    """Does ``insn`` (text) raise interrupt ``number``?"""
    mnemonic, _, operand = insn.partition(" ")
    expected = traps[mnemonic.lower()]
    if expected is None:                 # int $n
        try:
            expected = int(operand.strip().lstrip("$"), 0)
        except ValueError:
            return False
    return expected == number


def _where(m, pc, insn):
    where = f"PC {pc:#x} ({m.symbolize(pc)}): {insn}"
    return f"core {m.model.running}, {where}" if len(m.cpus) > 1 else where


def halted(m, pc):
    """The guest stopped its CPU (hlt, wfi) at ``pc`` (the PC past the instruction)."""
    isa = "ppc" if m.isa.startswith("ppc") else m.isa
    found = _trap_instruction(m, pc, HALTS[isa])
    if found is None:
        insn = instruction_at(m, pc)
        return GuestHalted(f"the guest stopped at {_where(m, pc, insn)}, not at its "
                           "return: no instruction of the model stops there", pc, insn,
                           None, "halt")
    at, insn = found
    return GuestHalted(f"{insn.split()[0]} at {_where(m, at, insn)}: the guest halted its "
                       "CPU to wait for an interrupt or event, and the model has none: "
                       "the call cannot return", at, insn, None, "halt")


def describe_fault(m, error):
    fault = m.stop_record
    pc = fault[4] if fault and len(fault) > 4 and fault[4] is not None else m.pc()
    isa = "ppc" if m.isa.startswith("ppc") else m.isa
    if fault and fault[0] == "interrupt":
        number = fault[1]
        if isa == "ppc":
            pc -= 4    # Unicorn reports a PPC exception with the PC past its instruction
        elif (found := _trap_instruction(m, pc, TRAPS_AFTER[isa])) and \
                _raises(found[1], number, TRAPS_AFTER[isa]):
            pc = found[0]                  # int, svc: the PC past the instruction
        name = INTERRUPT_NAMES[isa].get(number)
        if name is None and isa == "x86" and number >= 32:
            name = f"software interrupt int ${number:#x}"
        what = f"{name} (interrupt {number})" if name else f"interrupt {number}"
        insn = instruction_at(m, pc)
        return GuestFault(f"guest exception: {what} at {_where(m, pc, insn)}", pc, insn,
                          None, f"interrupt {number}")
    if fault and fault[0] == "memory":
        insn = instruction_at(m, pc)
        _, access, address, size = fault[:4]
        what = ACCESS_NAMES.get(access, f"memory access of type {access}")
        return GuestFault(f"guest fault at {_where(m, pc, insn)}: {what} at address "
                          f"{address:#x} ({size} bytes)", pc, insn, address, what)
    if isinstance(error, UcError) and error.errno == unicorn_const.UC_ERR_INSN_INVALID \
            and (found := _trap_instruction(m, pc, HALTS[isa])):
        at, insn = found          # Unicorn cannot run wfe / yield: it names the next one
        return GuestHalted(f"{insn.split()[0]} at {_where(m, at, insn)}: the guest waits "
                           "for an event, and the model has none (Unicorn cannot run "
                           "it): the call cannot return", at, insn, None, "halt")
    insn = instruction_at(m, pc)
    return GuestFault(f"guest fault at {_where(m, pc, insn)}: {error}", pc, insn, None,
                      str(error))
