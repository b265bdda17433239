"""Each ISA's calling convention: where a call's arguments go, where its result comes back,
and which register is the PC. A routine returns to HALT (emu.hw.layout)."""
from __future__ import annotations

import array
import ctypes
import functools
import struct
import sys
import threading

import numpy as np
from unicorn import arm_const, ppc_const, x86_const
from unicorn.unicorn_py3.unicorn import uclib

from ..hw import native
from ..hw.interrupt import Interrupted, deliver_sigint
from ..hw.layout import HALT

PC_REGISTERS = {"ppc32": ppc_const.UC_PPC_REG_PC, "ppc64": ppc_const.UC_PPC_REG_PC,
                "arm": arm_const.UC_ARM_REG_PC, "x86": x86_const.UC_X86_REG_EIP}
RETURN_REGISTERS = {"ppc32": ppc_const.UC_PPC_REG_3, "ppc64": ppc_const.UC_PPC_REG_3,
                    "arm": arm_const.UC_ARM_REG_R0, "x86": x86_const.UC_X86_REG_EAX}


# Unicorn's Python wrapper picks a ctypes class for each register access: most of what a
# short call's argument registers cost. Every register a call sets or reads is a whole
# number at most 64 bits wide, so one 64-bit buffer serves them all (on a little-endian
# host, a 32-bit register is its first four bytes).
_WORD = ctypes.c_uint64()
_DIRECT = sys.byteorder == "little"


def write_register(uc, reg, value):
    """``uc.reg_write(reg, value)`` for a whole-number register, in one library call."""
    if not _DIRECT:
        return uc.reg_write(reg, value)
    _WORD.value = value
    if uclib.uc_reg_write(uc._uch, reg, ctypes.byref(_WORD)):
        uc.reg_write(reg, value)            # refused: Unicorn's wrapper raises its UcError
    return None


def read_register(uc, reg):
    """``uc.reg_read(reg)`` of a whole-number register, in one library call."""
    if not _DIRECT:
        return uc.reg_read(reg)
    _WORD.value = 0
    if uclib.uc_reg_read(uc._uch, reg, ctypes.byref(_WORD)):
        return uc.reg_read(reg)
    return _WORD.value


def set_arguments(isa, uc, args, sp):
    """Registers and stack of ``uc`` for a call of ``args`` by the ISA's convention, its stack
    pointer from ``sp`` down."""
    for reg, value in argument_registers(isa, uc, args, sp):
        write_register(uc, reg, value)


def argument_registers(isa, uc, args, sp, write=None):
    """[(register, value)] of a call of ``args`` by the ISA's convention, its stack pointer
    from ``sp`` down; the arguments that go on the stack are written to ``uc``'s memory (by
    ``write(address, data)`` if given: the machine's own RAM, without Unicorn's wrapper).
    The convention is ``argument_filler``'s (one place): this lists what it fills."""
    registers = array.array("q", bytes(8 * MAX_REGISTERS))
    values = array.array("Q", bytes(8 * MAX_REGISTERS))
    n = _FILLERS[isa](registers, values, args, sp, write or uc.mem_write)
    return list(zip(registers[:n], values[:n]))


@functools.lru_cache(maxsize=None)
def _stack_words(n):
    """The packing of ``n`` little-endian 32-bit words."""
    return struct.Struct(f"<{n}I")


ARM_ARGUMENTS = (arm_const.UC_ARM_REG_R0, arm_const.UC_ARM_REG_R1, arm_const.UC_ARM_REG_R2,
                 arm_const.UC_ARM_REG_R3)


def argument_filler(isa):
    """``fill(registers, values, args, sp, write)``: each ISA's calling convention, its
    argument registers and their values written straight into a GuestRuns's two arrays (a
    call's most frequent Python: no list of pairs made and copied), the stack pointer from
    ``sp`` down; returns how many registers. The arguments that go on the stack are written
    by ``write(address, data)``. PowerPC: r3-r10, r1 256 below ``sp``, LR; ARM (AAPCS):
    r0-r3, the fifth on at ``sp`` down, SP, LR; x86 (cdecl): the return address and every
    argument on the stack, ESP."""
    if isa in ("ppc32", "ppc64"):
        mask = (1 << (64 if isa == "ppc64" else 32)) - 1

        def fill(registers, values, args, sp, write):
            n = len(args)
            if n > 8:
                raise ValueError("PowerPC calls take at most 8 arguments (r3-r10)")
            i = 0
            for a in args:
                values[i] = int(a) & mask
                i += 1
            registers[:n + 2] = _PPC_REGISTERS[n]
            values[n] = sp - 256
            values[n + 1] = HALT
            return n + 2
        return fill
    if isa == "arm":
        def fill(registers, values, args, sp, write):
            n = len(args)
            if n > 4:                       # arguments 5.. on the stack (AAPCS)
                stacked = [int(a) & 0xFFFFFFFF for a in args[4:]]
                sp -= 4 * len(stacked)
                for i, a in enumerate(stacked):
                    write(sp + 4 * i, a.to_bytes(4, "little"))
                n, args = 4, args[:4]
            i = 0
            for a in args:                  # (a loop over the arguments: most calls')
                values[i] = int(a) & 0xFFFFFFFF
                i += 1
            registers[:n + 2] = _ARM_REGISTERS[n]
            values[n] = sp
            values[n + 1] = HALT
            return n + 2
        return fill
    if isa == "x86":
        def fill(registers, values, args, sp, write):
            words = [int(a) & 0xFFFFFFFF for a in args]
            sp -= 4 * (len(words) + 1)          # cdecl: return address, then arguments
            write(sp, _stack_words(len(words) + 1).pack(HALT, *words))
            registers[0], values[0] = x86_const.UC_X86_REG_ESP, sp
            return 1
        return fill
    raise ValueError(f"no calling convention for isa {isa!r}")


# argument count -> the registers a call sets, in order (its arguments', the stack pointer,
# the link register)
_PPC_REGISTERS = {n: array.array("q", [ppc_const.UC_PPC_REG_3 + i for i in range(n)] +
                                 [ppc_const.UC_PPC_REG_1, ppc_const.UC_PPC_REG_LR])
                  for n in range(9)}
_ARM_REGISTERS = {n: array.array("q", list(ARM_ARGUMENTS[:n]) + [arm_const.UC_ARM_REG_SP,
                                                               arm_const.UC_ARM_REG_LR])
                  for n in range(5)}
#: each ISA's filler, for argument_registers
_FILLERS = {isa: argument_filler(isa) for isa in PC_REGISTERS}


MAX_REGISTERS = 16                  # a call's argument registers and the ones the ISA sets
WORD_MASK = (1 << 64) - 1
MAIN_THREAD = threading.main_thread().ident
SIGINT_CAME, SIGINT_FOR_OUTER = 1, 2        # emu/hw/model/interrupt.c sigint_outcome


def take_sigint(outcome):
    """A run's SIGINT outcome from the library (interrupt.c ``sigint_outcome``): one that
    came goes to the handler Python had (KeyboardInterrupt); one an outer catch takes ends
    the run with Interrupted."""
    if outcome == SIGINT_CAME:
        deliver_sigint()
    if outcome == SIGINT_FOR_OUTER:
        raise Interrupted


# out[CALL_STOP]'s flags (emu/hw/model/call.c): the state noted a reason to stop, or someone
# asked the run to stop
STOP_REASONS, STOP_ASKED = 31, 32


class GuestRuns:
    """A machine's runs from Python through the native model's ``emu_block_call``: the call's
    start (the counters cleared), the argument registers, the run with SIGINT taken
    (emu.hw.interrupt), the return value and what stopped it in one library call, where
    Unicorn's Python wrapper would take several times the cost of a short run itself. After
    ``run``: ``returned`` (the return register), ``pc``, ``stop`` (STOP_* flags). A call's
    argument registers are written into its arrays first (``arguments``), then ``run`` or
    ``start_task`` is told how many."""

    def __init__(self, isa):
        self.return_register = RETURN_REGISTERS[isa]
        self._fill_arguments = argument_filler(isa)
        # the library reads and writes these in place (array.array: an item is set or read
        # in a fraction of a numpy array's time)
        self.registers = array.array("q", bytes(8 * MAX_REGISTERS))
        self.values = array.array("Q", bytes(8 * MAX_REGISTERS))
        self.out = array.array("q", bytes(8 * 4))
        self._at = [a.buffer_info()[0] for a in (self.registers, self.values, self.out)]
        self._blocks = []           # (the Clearing, the words, the block) of each block
        self._block = self.gathered = None          # the last call's
        self.returned = self.pc = self.stop = None

    def block(self, clearing, words, counting):
        """A call block (call.c BLOCK_*) for a core's Clearing (emu.hw.cache) and the words
        its Runs read (emu.run.result.CountLayout.words; ``counting``: the positions of
        those that count, whose share of a task's call is their difference): (its address,
        the array the words are gathered into). Made once per core by its Machine, which
        keeps it."""
        registers_at, values_at, out_at = self._at
        gathered = array.array("q", bytes(8 * len(words)))
        counts = np.zeros(len(words), np.int64)
        counts[counting] = 1
        start = np.zeros(len(words), np.int64)
        block = np.array(clearing.arguments + (
            registers_at, values_at, self.return_register, out_at, HALT,
            native.address(words), len(words), gathered.buffer_info()[0],
            native.address(counts), native.address(start)), np.int64)
        self._blocks.append((clearing, words, counts, start, block))   # the addresses stay valid
        return native.address(block), gathered

    def arguments(self, args, sp, write):
        """Make ``args`` the next call's argument registers by the ISA's convention
        (argument_registers: its stack pointer from ``sp`` down, stacked words written by
        ``write``); returns how many registers the call sets."""
        return self._fill_arguments(self.registers, self.values, args, sp, write)

    def run(self, uc, pc, count=0, limit=0, block=None):
        """Run ``uc`` from ``pc`` to HALT with the first ``count`` registers ``arguments``
        made set first;
        returns Unicorn's error code of the run (0: none). With ``limit``, the call starts
        first, by its ``block`` (``block()``): the counters zeroed, the instruction limit set,
        the stop flags down, and at its end the state's words are gathered (``gathered``, an
        array); without, a run resumed goes on counting. SIGINT during the run raises
        KeyboardInterrupt, and an exception a Python hook raised comes out here, as from
        Unicorn's own ``emu_start``."""
        uc._hook_exception = None
        if limit:
            self._block, self.gathered = block
        error = native.lib.emu_block_call(uc._uch, self._block, pc, count, limit,
                                          threading.get_ident() == MAIN_THREAD)
        if error < 0:
            self._refused(uc, error)
        returned, pc, sigint, self.stop = self.out.tolist()
        self.returned, self.pc = returned & WORD_MASK, pc & WORD_MASK
        if sigint:
            take_sigint(sigint)
        if not error and uc._hook_exception is not None:
            raise uc._hook_exception
        return error

    def start_task(self, uc, block, core, pc, count, limit):
        """A task's call on ``core`` (emu.run.parallel.run_tasks), made ready for the
        scheduler by its ``block`` in one library call: its header made live (if another
        core's was), the first ``count`` registers ``arguments`` made set, the core runnable
        from ``pc``, the counts at its start kept, the limit ``limit`` instructions on."""
        refused = native.lib.emu_task_start(uc._uch, block[0], core, pc, count, limit)
        if refused:
            self._refused(uc, refused)

    def ended_task(self, block):
        """(the return register, the gathered words less those at the start: an array the
        caller may keep) of a task's call that has ended, whose end the library has taken
        (emu_task_end: the scheduler does, for a core given its block, emu.run.parallel)."""
        return self.out[0] & WORD_MASK, block[1][:]

    def _refused(self, uc, code):
        """A register refused (``code``: -1 - its index): Unicorn's own wrapper says why."""
        register, value = self.registers[-1 - code], self.values[-1 - code]
        uc.reg_write(register, value)
        raise ValueError(f"register {register} refused the value {value:#x}")
