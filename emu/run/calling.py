"""Each ISA's calling convention: where a call's arguments go, where its result comes back,
and which register is the PC. A routine returns to HALT (emu.hw.layout)."""
from __future__ import annotations

from unicorn import arm_const, ppc_const, x86_const

from ..hw.layout import HALT

PC_REGISTERS = {"ppc32": ppc_const.UC_PPC_REG_PC, "ppc64": ppc_const.UC_PPC_REG_PC,
                "arm": arm_const.UC_ARM_REG_PC, "x86": x86_const.UC_X86_REG_EIP}
RETURN_REGISTERS = {"ppc32": ppc_const.UC_PPC_REG_3, "ppc64": ppc_const.UC_PPC_REG_3,
                    "arm": arm_const.UC_ARM_REG_R0, "x86": x86_const.UC_X86_REG_EAX}


def set_arguments(isa, uc, args, sp):
    """Registers and stack of ``uc`` for a call of ``args`` by the ISA's convention, its stack
    pointer from ``sp`` down."""
    args = [int(a) for a in args]
    if isa in ("ppc32", "ppc64"):
        if len(args) > 8:
            raise ValueError("PowerPC calls take at most 8 arguments (r3-r10)")
        mask = (1 << (64 if isa == "ppc64" else 32)) - 1
        for i, a in enumerate(args):
            uc.reg_write(ppc_const.UC_PPC_REG_3 + i, a & mask)
        uc.reg_write(ppc_const.UC_PPC_REG_1, sp - 256)
        uc.reg_write(ppc_const.UC_PPC_REG_LR, HALT)
    elif isa == "arm":
        regs = [arm_const.UC_ARM_REG_R0, arm_const.UC_ARM_REG_R1, arm_const.UC_ARM_REG_R2,
                arm_const.UC_ARM_REG_R3]
        stacked = args[4:]
        sp -= 4 * len(stacked)
        for i, a in enumerate(stacked):       # arguments 5.. on the stack (AAPCS)
            uc.mem_write(sp + 4 * i, (a & 0xFFFFFFFF).to_bytes(4, "little"))
        for reg, a in zip(regs, args):
            uc.reg_write(reg, a & 0xFFFFFFFF)
        uc.reg_write(arm_const.UC_ARM_REG_SP, sp)
        uc.reg_write(arm_const.UC_ARM_REG_LR, HALT)
    else:
        words = [HALT] + args                 # cdecl: return address, then arguments
        sp -= 4 * len(words)
        uc.mem_write(sp, b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in words))
        uc.reg_write(x86_const.UC_X86_REG_ESP, sp)
