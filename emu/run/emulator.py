"""Unicorn's side of a Machine: one emulator per core (its translation buffer bounded, the
profile's CPU model, SSE or the 64-bit TLB mode where the ISA needs them), the Python hooks
held through weak references, and what a closed machine's emulator is."""
from __future__ import annotations

import ctypes
import mmap
import weakref

from unicorn import (UC_ARCH_ARM, UC_ARCH_PPC, UC_ARCH_X86, UC_HOOK_MEM_INVALID, UC_MODE_32,
                     UC_MODE_ARM, UC_MODE_BIG_ENDIAN, UC_MODE_PPC32, UC_MODE_PPC64, Uc,
                     arm_const, ppc_const, unicorn_const, x86_const)

from ..hw import native

TRANSLATION_BUFFER = 64 << 20   # address space for each emulator's translated code


def reserve_translation_buffer():
    """Refuse, with a Python exception, an emulator QEMU could not give its translation
    buffer (it would exit the process): reserve that much address space once, and free it."""
    try:
        mmap.mmap(-1, TRANSLATION_BUFFER, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                  prot=mmap.PROT_READ).close()
    except OSError:
        raise MemoryError(f"no address space for another emulator: Unicorn needs "
                          f"{TRANSLATION_BUFFER >> 20} MB for its translated code (a process "
                          "address-space limit? close Machines no longer used)") from None


def new_unicorn(profile):
    """A Unicorn for one core of ``profile``'s CPU."""
    arch, mode = {"ppc32": (UC_ARCH_PPC, UC_MODE_PPC32 | UC_MODE_BIG_ENDIAN),
                  "ppc64": (UC_ARCH_PPC, UC_MODE_PPC64 | UC_MODE_BIG_ENDIAN),
                  "arm": (UC_ARCH_ARM, UC_MODE_ARM),
                  "x86": (UC_ARCH_X86, UC_MODE_32)}[profile.isa]
    reserve_translation_buffer()
    uc = Uc(arch, mode)
    # QEMU reserves 1 GB of address space per emulator for translated code by default,
    # and when it cannot, exits the process ("Could not allocate dynamic translator
    # buffer", no Python exception): the book's code needs a few MB of it
    uc.ctl_set_tcg_buffer_size(TRANSLATION_BUFFER)
    if profile.unicorn_cpu != "default":
        module = {"ppc32": ppc_const, "arm": arm_const, "x86": x86_const}.get(profile.isa)
        model = getattr(module, str(profile.unicorn_cpu), None)
        if not isinstance(model, int):
            raise ValueError(f"profile {profile.name}: unicorn_cpu "
                             f"{profile.unicorn_cpu!r} is not a Unicorn CPU model of "
                             f"{profile.isa}")
        uc.ctl_set_cpu_model(model)
    if profile.isa == "x86":
        # SSE on, as Linux sets it at boot when the CPU has FXSR (CR4.OSFXSR, and
        # OSXMMEXCPT for SIMD exceptions; Intel SDM vol. 3, 2.5): without them a named
        # CPU model faults on every SSE instruction
        uc.reg_write(x86_const.UC_X86_REG_CR4,
                     uc.reg_read(x86_const.UC_X86_REG_CR4) | 1 << 9 | 1 << 10)
    if profile.isa == "ppc64":
        # PPC64 runs only in the virtual-TLB mode (see shared platform notes).
        uc.ctl_set_tlb_mode(unicorn_const.UC_TLB_VIRTUAL)
    return uc


_INVALID_HOOK = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                                 ctypes.c_int, ctypes.c_int64, ctypes.c_void_p)
_INTERRUPT_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p)


def weak_hook(machine, uc, kind, method):
    """Hook ``method(machine, uc, ...)`` on ``uc`` (UC_HOOK_MEM_INVALID or UC_HOOK_INTR)
    through weak references. Unicorn's own ``hook_add`` keeps the callback (one that holds
    the Machine) in the Uc, which the Machine keeps: a cycle, so that a discarded Machine and its
    emulator waited for a full garbage collection (2,000 Machines in a loop reached 2.8 GB).
    Returns the C callback, which the machine must keep. An exception in the method stops the
    emulator and is raised by ``emu_start``, as Unicorn's own hooks do."""
    machine_ref, uc_ref = weakref.ref(machine), weakref.ref(uc)

    def run(args):
        m, u = machine_ref(), uc_ref()
        if m is None or u is None:
            return False
        try:
            return method(m, u, *args, None)
        except BaseException as error:           # noqa: BLE001 (raised by emu_start)
            if u._hook_exception is None:
                u._hook_exception = error
            u.emu_stop()
            return False
    if kind == UC_HOOK_MEM_INVALID:
        callback = _INVALID_HOOK(lambda h, access, address, size, value, data:
                                 bool(run((access, address, size, value))))
    else:
        callback = _INTERRUPT_HOOK(lambda h, number, data: run((number,)) and None)
    native.add_hook(uc, kind, ctypes.cast(callback, ctypes.c_void_p).value, None, user_data=0)
    return callback


class Closed:
    """What a closed Machine's emulator is: any use says so."""

    def __getattr__(self, name):
        raise ValueError("this Machine is closed (its emulator was freed by close() or at the "
                         "end of its with block)")

    def _refuse(self, *args):
        return self.closed

    __getitem__ = __setitem__ = __len__ = __iter__ = __index__ = __int__ = _refuse
