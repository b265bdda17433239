"""The MMU registers of a machine's CPU, as the machine composes them (``machine.mmu``).

This is what every architecture shares: turning translation off for a kernel's own
routines, and which cores a register write reaches. Each architecture's registers are a
subclass in its MMU module: 32-bit PowerPC's SDR1, segment registers and the software-loaded
TLBs' special-purpose registers and ARM's TTBR0 in ``emu.hw.mmu``, the 64-bit SLB in
``emu.hw.hash64``. They live in the model's state, which the native hooks read."""
from __future__ import annotations


from . import cache as c


class MMURegisters:
    """A machine's MMU registers (x86: none the model keeps, only translation on or off)."""

    def __init__(self, machine):
        self.machine = machine      # made at each use of machine.mmu: no reference cycle

    @property
    def state(self):
        return self.machine.state

    @property
    def sdr1(self):
        """The page table's base and size (PowerPC SDR1; ARM's TTBR0 is the same word)."""
        return int(self.state[c.H_SDR1])

    @sdr1.setter
    def sdr1(self, value):
        self.state[c.H_SDR1] = value

    def cores(self, core):
        """The cores a register write applies to: ``core``, or every core (None); the
        machine says which (from a task of a parallel run, its own core)."""
        return self.machine.cores_for(core)

    def translation_off(self):
        """``with``: run with the MMU model's TLB look-ups and walks off (the segment
        registers or SLB stay, so tlbie still finds its entries): how a kernel runs its own
        routines from memory mapped by BATs (32-bit) or bolted large pages (64-bit)."""
        return _TranslationOff(self.state)


class _TranslationOff:
    """translation_off's context (a class, not a generator: a kernel enters one per call)."""
    __slots__ = ("state", "saved")

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        self.saved = int(self.state[c.H_MMU])
        self.state[c.H_MMU] = 0

    def __exit__(self, kind, error, traceback):
        self.state[c.H_MMU] = self.saved
