"""What goes wrong in guest code: the library's exception classes, each naming the PC, the
instruction and the address, and the names of the faults and interrupts it reports. At the
bottom of the hardware model: the MMUs raise these, the machine reports them."""
from __future__ import annotations

from unicorn import unicorn_const

ACCESS_NAMES = {
    unicorn_const.UC_MEM_READ_UNMAPPED: "read from unmapped memory",
    unicorn_const.UC_MEM_WRITE_UNMAPPED: "write to unmapped memory",
    unicorn_const.UC_MEM_FETCH_UNMAPPED: "instruction fetch from unmapped memory",
    unicorn_const.UC_MEM_READ_PROT: "read from protected memory",
    unicorn_const.UC_MEM_WRITE_PROT: "write to protected memory",
    unicorn_const.UC_MEM_FETCH_PROT: "instruction fetch from non-executable memory",
}

# Unicorn's interrupt numbers (QEMU's exception numbers) by ISA, named in fault messages
INTERRUPT_NAMES = {
    "x86": {0: "divide error (#DE)", 1: "debug trap (#DB)", 2: "NMI", 3: "breakpoint (#BP)",
            4: "overflow (#OF, into)", 5: "BOUND range exceeded (#BR)",
            6: "invalid opcode (#UD)", 7: "device not available (#NM)",
            8: "double fault (#DF)", 10: "invalid TSS (#TS)", 11: "segment not present (#NP)",
            12: "stack-segment fault (#SS)", 13: "general protection fault (#GP)",
            14: "page fault (#PF)", 16: "x87 floating-point error (#MF)",
            17: "alignment check (#AC)", 18: "machine check (#MC)",
            19: "SIMD floating-point exception (#XM)", 0x80: "system call (int $0x80)"},
    "arm": {1: "undefined instruction", 2: "supervisor call (svc)", 3: "prefetch abort",
            4: "data abort", 5: "IRQ", 6: "FIQ", 7: "breakpoint (bkpt)",
            8: "exception return", 9: "kernel trap", 11: "hypervisor call (hvc)",
            12: "hypervisor trap", 13: "secure monitor call (smc)", 16: "semihosting call"},
    "ppc": {0: "critical input", 1: "machine check", 2: "data storage interrupt (DSI)",
            3: "instruction storage interrupt (ISI)", 4: "external interrupt",
            5: "alignment interrupt", 6: "program interrupt (a trap, or an illegal or "
            "privileged instruction)", 7: "floating-point unavailable (MSR[FP] is 0)",
            8: "system call (sc)", 10: "decrementer", 13: "data TLB miss",
            14: "instruction TLB miss", 15: "debug interrupt",
            78: "instruction TLB miss (603)", 79: "data load TLB miss (603)",
            80: "data store TLB miss (603)", 96: "illegal instruction"},
}
# instructions whose interrupt Unicorn reports with the PC past them, and its number (int:
# its operand)
TRAPS_AFTER = {"x86": {"int": None, "int3": 3, "into": 4, "int1": 1, "icebp": 1},
               "arm": {"svc": 2, "swi": 2, "hvc": 11, "smc": 13}, "ppc": {}}
# instructions that halt the CPU until an interrupt or event: no interrupt is modelled
HALTS = {"x86": ("hlt",), "arm": ("wfi", "wfe", "yield"), "ppc": ()}


class GuestError(RuntimeError):
    """Something went wrong inside the guest program (not in the model)."""


class GuestFault(GuestError):
    """A memory fault or an exception in guest code: names the PC, instruction and address."""

    def __init__(self, message, pc=None, instruction=None, address=None, access=None):
        super().__init__(message)
        self.pc, self.instruction, self.address, self.access = pc, instruction, address, access


class InstructionLimitExceeded(GuestError):
    """The guest ran more instructions than allowed (runaway code, e.g. an endless loop)."""


class PageFault(GuestFault):
    """The MMU model found no translation (no PTE in either PTEG): a real kernel would now
    run its page-fault handler. Names the PC, the instruction, the address and the access."""


class SegmentFault(PageFault):
    """64-bit MMU: no SLB entry maps the address's segment (a data or instruction segment
    interrupt, 0x380 / 0x480; Linux would now run its SLB miss handler). Names the PC, the
    instruction, the address and the access."""


class TLBMissFault(PageFault):
    """Software-loaded TLB (603, 405): the CPU missed in its TLB and no miss handler is loaded
    at the vector. Names the PC, instruction, address and access."""


class InstructionStorageFault(PageFault):
    """An instruction storage interrupt (ISI, vector 0x400) with no guest handler loaded: e.g.
    a 405 fetch from a page whose TLB entry lacks the execute bit (EX), or a miss handler
    that found no translation for an instruction address. Names PC, instruction, address."""


class DataStorageFault(PageFault):
    """A data storage interrupt (DSI, vector 0x300) with no guest handler loaded: e.g. a
    miss handler that found no translation for a data address. Names PC, instruction,
    address (DAR) and access."""


class GuestHalted(GuestFault):
    """The guest halted its CPU to wait for an interrupt or event (x86 hlt, ARM wfi / wfe):
    none is modelled, so the call cannot go on. Names the PC and the instruction."""


class StaleInstructionFetch(GuestError):
    """Strict mode: the I-cache would have supplied bytes older than the last store to them."""
