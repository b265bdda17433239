"""The i386 copy_from_user routines of Linux 2.6.12 and of Yoshioka 2005's patch, as the book
runs them: which routine files go together, the kernel state they read, and calls that refuse
sizes the kernel never passes.

    >>> from emu.run.machine import Machine
    >>> from emu import usercopy
    >>> m = Machine("pentium4")
    >>> usercopy.load(m, "patched")                      # doctest: +SKIP
    >>> run = usercopy.call(m, "__copy_from_user_ll", to, frm, 4096)   # doctest: +SKIP

Kernels (``load``): ``"2.6.12"`` is ``__copy_from_user_ll`` choosing between the rep movsl copy
(inline) and ``__copy_user_zeroing_intel``; ``"patched"`` adds ``_mmx_memcpy_nt`` for copies
of 512 bytes or more. Single routines (``load_routine``): ``__copy_user_zeroing``,
``__copy_user_zeroing_intel``, ``_mmx_memcpy_nt`` (with ``_mmx_memcpy_nt_sfence``,
``kernel_fpu_begin`` and ``math_state_restore``). Every entry is cdecl (to, from, n) and
returns the bytes not copied.
"""
from __future__ import annotations

from ...context import routine
from ...isa.assemble import assemble

KERNELS = {
    "2.6.12": ("x86/copy_user_zeroing_intel.S", "x86/copy_from_user_ll.S"),
    "patched": ("x86/copy_user_zeroing_intel.S", "x86/mmx_memcpy_nt.S",
                "x86/copy_from_user_ll_nt.S"),
}
ROUTINES = {
    "__copy_user_zeroing": ("x86/copy_user_zeroing.S",),
    "__copy_user_zeroing_intel": ("x86/copy_user_zeroing_intel.S",),
    "_mmx_memcpy_nt": ("x86/mmx_memcpy_nt.S",),
}
#: the smallest size each entry is correct for (the kernel calls it with no smaller one)
MIN_SIZE = {"__copy_user_zeroing_intel": 64}
MAX_SIZE = (1 << 31) - 1       # BUG_ON((long)n < 0) above this
IRQ_MASK = 0x0FFFFF00          # HARDIRQ_MASK | SOFTIRQ_MASK (include/linux/hardirq.h, 2.6.12)
SOFTIRQ_OFFSET = 0x100
TS_USEDFPU = 0x0001            # include/asm-i386/thread_info.h, 2.6.12


def source(files):
    """The routine files, one after the other, as one source text (how the book links)."""
    return "".join(routine(name).read_text() for name in files)


def _load(machine, files, what):
    if machine.isa != "x86":
        raise ValueError(f"the {what} routines are x86 code; the machine is {machine.isa} "
                         f"({machine.profile.name})")
    program = assemble(source(files), "x86", filename=" + ".join(files))
    return machine.load(program)


def load(machine, kernel="2.6.12"):
    """Load ``__copy_from_user_ll`` of ``kernel`` ("2.6.12" or "patched") and what it calls."""
    if kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}: choose one of {', '.join(KERNELS)}")
    return _load(machine, KERNELS[kernel], kernel)


def load_routine(machine, name):
    """Load one routine on its own (``__copy_user_zeroing``, ``__copy_user_zeroing_intel`` or
    ``_mmx_memcpy_nt``)."""
    if name not in ROUTINES:
        raise ValueError(f"unknown routine {name!r}: choose one of {', '.join(ROUTINES)}")
    return _load(machine, ROUTINES[name], name)


def check_size(entry, n):
    """Refuse a size the kernel never passes to ``entry`` (ValueError saying why)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"the size is a whole number of bytes, not {n!r}")
    if not 0 <= n <= MAX_SIZE:
        raise ValueError(f"size {n} is outside 0..{MAX_SIZE}: the kernel's BUG_ON((long)n < 0) "
                         "stops larger ones")
    low = MIN_SIZE.get(entry, 0)
    if n < low:
        raise ValueError(f"{entry} copies at least {low} bytes (its loop has no entry test; "
                         f"__copy_from_user_ll calls it only for n >= 64), not {n}")


def call(machine, entry, to, frm, n, **kwargs):
    """``machine.call(entry, to, frm, n)`` after ``check_size``; returns the Run."""
    check_size(entry, n)
    return machine.call(entry, to, frm, n, **kwargs)


def _word(machine, symbol):
    if symbol not in machine.symbols:
        raise ValueError(f"{symbol} is not loaded: load _mmx_memcpy_nt (the patched kernel) "
                         "first")
    return machine.symbols[symbol]


def set_in_interrupt(machine, on=True):
    """Make in_interrupt() true (a softirq is running: preempt_count += SOFTIRQ_OFFSET) or
    false: _mmx_memcpy_nt then copies with __copy_user_zeroing, without the FPU."""
    address = _word(machine, "preempt_count")
    count = machine.read_word(address)
    count = (count | SOFTIRQ_OFFSET) if on else (count & ~IRQ_MASK)
    machine.write(address, count.to_bytes(4, "little"))


def set_fpu_owner(machine, on=True):
    """Whether the current task's FPU state is live in the registers (TS_USEDFPU): then
    kernel_fpu_begin saves it with fxsave first."""
    address = _word(machine, "thread_status")
    status = machine.read_word(address)
    status = (status | TS_USEDFPU) if on else (status & ~TS_USEDFPU)
    machine.write(address, status.to_bytes(4, "little"))
