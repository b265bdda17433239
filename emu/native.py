"""The native hot path: Unicorn hooks compiled by numba, registered without Python callbacks.

Each hook receives the model's state array as its user-data pointer (see ``emu.cache``):

* ``memory_hook``  every guest load and store to RAM -> the data side of the cache model;
* ``outer_cache_hook`` stores to an outer cache controller's registers (PL310) -> its
  maintenance operations, serialised between cores;
* ``block_hook``   every basic block -> instruction count, base cycles (prefix tables),
  instruction fetch through the I-cache, the instruction limit;
* ``special_hook`` only at the addresses of cache-maintenance, prefetch and non-temporal
  instructions (a ranged code hook per instruction) -> their architectural effect;
* ``identity_tlb_fill`` the PPC64 virtual-TLB mode's translation (identity for now).

Unicorn's own instruction-count limit installs a hidden per-instruction hook, so the limit is
enforced here, in the block hook, with ``uc_emu_stop``.
"""
from __future__ import annotations

import ctypes
from ctypes import CFUNCTYPE, byref, c_int, c_size_t, c_uint64, c_void_p, cast

import numpy as np
from numba import carray, cfunc, njit, types
from unicorn.unicorn_py3.unicorn import uclib

from . import cache as c
from . import mmu
from .cost import (OP_DRAIN_WC, OP_MTMSR, OP_NONTEMPORAL, OP_SERIALISE, OP_SLB_INVALIDATE,
                   OP_SLB_INVALIDATE_ALL, OP_SLB_STORE, OP_TLB_INVALIDATE,
                   OP_TLB_INVALIDATE_ALL, SERIAL, TLB_BROADCAST)

_reg_read = CFUNCTYPE(c_int, c_void_p, c_int, c_uint64)(
    cast(uclib.uc_reg_read, c_void_p).value)
_emu_stop = CFUNCTYPE(c_int, c_void_p)(cast(uclib.uc_emu_stop, c_void_p).value)

MEM_SIG = types.void(types.voidptr, types.int32, types.uint64, types.int32, types.int64,
                     types.voidptr)
CODE_SIG = types.void(types.voidptr, types.uint64, types.uint32, types.voidptr)
TLB_SIG = types.boolean(types.voidptr, types.uint64, types.int32, types.voidptr,
                        types.voidptr)
UC_MEM_WRITE = 17


STATE_SHAPE = (1 << 40,)     # the real length is st[H_SIZE]; a constant shape saves a load


@njit(cache=True)
def _state(ud):
    return carray(ud, STATE_SHAPE, np.int64)


@njit
def _register(uc, st, reg):
    """A guest register's value, read from native code (through the state's scratch word)."""
    scratch = st[st[c.H_SCRATCH]:st[c.H_SCRATCH] + 1]
    scratch[0] = 0
    _reg_read(uc, reg, scratch.ctypes.data)
    return scratch[0] & st[c.H_REG_WIDTH_MASK]


@njit
def _pc(uc, st):
    """The guest PC (Unicorn keeps it exact inside memory hooks); asked only when needed."""
    return _register(uc, st, st[c.H_PC_REG])


# The hooks' model work lives in cached @njit functions (compiled once, then loaded from the
# numba cache in milliseconds); the cfuncs, which call Unicorn through ctypes pointers and so
# are compiled in every process, only read the PC when needed and stop the machine.
FIRST_FAULT, FAULT = 1, 2


@njit(cache=True, inline='always')     # on the hot path: no extra call per access
def _translate(st, ea, write, fetch, pc):
    """(the MMU's stall for ``ea``, fault): FAULT after a page fault, FIRST_FAULT after the
    first one, whose PC is noted here if known (``pc`` >= 0), else by _stop_on_fault."""
    faults = st[c.H_PAGE_FAULTS]
    stall = mmu.translate(st, ea, write, fetch)
    if st[c.H_PAGE_FAULTS] == faults:
        return stall, 0
    if faults == 0 and pc >= 0:
        st[c.H_FAULT_PC] = pc
    return stall, FIRST_FAULT if faults == 0 else FAULT


@njit
def _stop_on_fault(uc, st, fault, pc):
    """A page fault stops the machine; the first one notes its PC (asked of Unicorn only
    now, if the hook did not know it)."""
    if fault == FIRST_FAULT and pc < 0:
        st[c.H_FAULT_PC] = _pc(uc, st)
    _emu_stop(uc)


@njit(cache=True)
def _profile_block(st, off, size, fetch_stall):
    """Profiler on: each instruction of the block gets its execution, its base cycles and
    (the first) the fetch stall, in order, so that samples land where the cycles are."""
    counts, costs, hits = st[c.H_ICOUNT], st[c.H_ICOST], st[c.H_INSN_HITS]
    first = True
    for k in range(off, off + size):
        if st[counts + k + 1] - st[counts + k] == 1:      # an instruction starts here
            st[hits + k] += 1
            cycles = st[costs + k + 1] - st[costs + k]
            if first:
                cycles += fetch_stall
                first = False
            c.account(st, k, cycles)


@njit(cache=True)
def _store_time(st, pc):
    """The cycle at which the store being hooked (at ``pc``) issues. The block hook charged
    the whole block's base cycles at its start, so take off those of this instruction and the
    ones after it in the block (store queues need the time of each store, not of its block)."""
    now = st[c.H_CYCLES]
    end = st[c.H_BLOCK_END_COST]
    if end >= 0:
        off = pc - st[c.H_CODE_BASE]
        if 0 <= off < st[c.H_CODE_LEN]:
            now -= end - st[st[c.H_ICOST] + off]
    return now


@njit(cache=True)
def _access(ud, address, size, write, pc):
    """The model's part of one guest load or store; returns 0 or a fault (see _translate).
    ``pc``: the guest PC if the hook read it (profiler, store queues), else -1. The state
    comes as the hook's pointer: an array made here has a constant shape (see _state)."""
    st = _state(ud)
    if st[c.H_SWALLOW] > 0:
        # the probe load (and store) QEMU makes for dcbst/dcbf/dcbi/icbi: not a data access
        st[c.H_SWALLOW] -= 1
        return 0
    if write and st[c.H_NONTEMPORAL] > 0:
        st[c.H_NONTEMPORAL] = 0
        c.nontemporal_store(st, address, size)
        return 0
    stall = c.data_access_inline(st, address, size, write)
    if st[c.H_ACCESS_EXTRAS]:
        if st[c.H_ALIGN_SIZE] | st[c.H_SPLIT_MASK]:
            stall += c.alignment(st, address, size)
        if write and st[c.H_SQ_SLICES] > 0:
            stall += c.store_queue(st, address, size, _store_time(st, pc) + stall)
    fault = 0
    if st[c.H_MMU]:
        mmu_stall, fault = _translate(st, address, write, False, pc)
        stall += mmu_stall
    if st[c.H_PROFILE_PERIOD] > 0:
        c.account(st, pc - st[c.H_CODE_BASE], stall)
    else:
        st[c.H_CYCLES] += stall
    return fault


@cfunc(MEM_SIG, nopython=True)
def memory_hook(uc, access, address_u64, size, value, ud):
    st = _state(ud)
    write = access == UC_MEM_WRITE
    pc = -1                 # Unicorn keeps the PC exact in hooks; read only when needed
    if st[c.H_PROFILE_PERIOD] > 0 or (write and st[c.H_SQ_SLICES] > 0):
        pc = _pc(uc, st)
    fault = _access(ud, np.int64(address_u64), np.int64(size), write, pc)
    if fault:
        _stop_on_fault(uc, st, fault, pc)


@cfunc(MEM_SIG, nopython=True)
def outer_cache_hook(uc, access, address_u64, size, value, ud):
    """A load or store in the outer cache controller's register page (a hook on that range
    only: RAM accesses never come here). Loads read the page as memory (a status of 0:
    nothing in progress, as the PL310 performs line operations atomically)."""
    st = _state(ud)
    if access != UC_MEM_WRITE:
        return
    stall = c.outer_cache_write(st, np.int64(address_u64) - st[c.H_OUTER_BASE],
                                value & 0xFFFFFFFF)
    if st[c.H_PROFILE_PERIOD] > 0:
        c.account(st, _pc(uc, st) - st[c.H_CODE_BASE], stall)
    else:
        st[c.H_CYCLES] += stall


@njit(cache=True)
def _block(ud, address, size):
    """The model's part of one basic block; returns True to stop the machine."""
    st = _state(ud)
    off = address - st[c.H_CODE_BASE]
    in_code = 0 <= off and off + size <= st[c.H_CODE_LEN]
    if in_code:
        counts, costs = st[c.H_ICOUNT], st[c.H_ICOST]
        n = st[counts + off + size] - st[counts + off]
        cycles = st[costs + off + size] - st[costs + off]
    elif st[c.H_FIXED_WIDTH] > 0:
        n = size // st[c.H_FIXED_WIDTH]
        cycles = n * st[c.H_DEFAULT_COST]
    else:
        n = 1                                   # x86 code the model was not told about
        cycles = st[c.H_DEFAULT_COST]
        st[c.H_UNCOUNTED] += 1
    if st[c.H_SQ_SLICES] > 0:                 # for _store_time
        st[c.H_BLOCK_END_COST] = st[st[c.H_ICOST] + off + size] if in_code else -1
    stale_before = st[c.H_STALE]
    st[c.H_BLOCK_START], st[c.H_BLOCK_SIZE] = address, size
    st[c.H_INSNS] += n
    fetch_stall = c.fetch(st, address, size, address)
    stop = False
    if st[c.H_MMU]:
        mmu_stall, fault = _translate(st, address, False, True, address)
        fetch_stall += mmu_stall
        stop = fault != 0
        # software-loaded TLB: note the block, to undo its counts if an access faults
        if mmu.softtlb.MODE_SOFT603 <= st[c.H_MMU] <= mmu.softtlb.MODE_SOFT405:
            st[st[c.H_SCRATCH] + 1] = address
            st[st[c.H_SCRATCH] + 2] = address + size
    if st[c.H_PROFILE_PERIOD] > 0 and in_code:
        _profile_block(st, off, size, fetch_stall)
    else:
        st[c.H_CYCLES] += cycles + fetch_stall
    if st[c.H_INSNS] > st[c.H_LIMIT]:
        st[c.H_STOPPED] = 1
        stop = True
    elif st[c.H_STRICT] and st[c.H_STALE] > stale_before:
        st[c.H_STALE_BLOCK] = address
        stop = True
    return stop


@cfunc(CODE_SIG, nopython=True)
def block_hook(uc, address_u64, size_u32, ud):
    if _block(ud, np.int64(address_u64), np.int64(size_u32)):
        _emu_stop(uc)


@njit
def _slb_store(uc, st, address, entry):
    """slbmte RS, RB into the model's SLB; one the model refuses stops the machine, its PC,
    RS and RB noted (emu.hash64.S_SLB_*) for the error message."""
    rs = _register(uc, st, st[entry + 3])
    rb = _register(uc, st, st[entry + 4])
    if not mmu.slb_store(st, rs, rb) and st[st[c.H_SCRATCH] + mmu.hash64.S_SLB_PC] == 0:
        at = st[c.H_SCRATCH]
        st[at + mmu.hash64.S_SLB_PC] = address
        st[at + mmu.hash64.S_SLB_RS] = rs
        st[at + mmu.hash64.S_SLB_RB] = rb
        _emu_stop(uc)


@cfunc(CODE_SIG, nopython=True)
def special_hook(uc, address_u64, size, ud):
    st = _state(ud)
    address = np.int64(address_u64)
    first, n = st[c.H_SPECIALS], st[c.H_NSPECIALS]
    lo, hi = 0, n - 1
    entry = -1
    while lo <= hi:                           # the table is sorted by address
        mid = (lo + hi) // 2
        pc = st[first + 8 * mid]
        if pc == address:
            entry = first + 8 * mid
            break
        if pc < address:
            lo = mid + 1
        else:
            hi = mid - 1
    if entry < 0:
        return
    op, scope = st[entry + 1], st[entry + 2]
    if scope & SERIAL:
        # it holds the machine-wide resource for its own base cost (see cost.SERIAL)
        off = address - st[c.H_CODE_BASE]
        own = st[st[c.H_ICOST] + off + 1] - st[st[c.H_ICOST] + off]
        c.account(st, off, c.serialise(st, 0, own))
        scope &= ~SERIAL
    if op == OP_SLB_STORE:
        _slb_store(uc, st, address, entry)
        return
    ea = st[entry + 6]
    for k in range(2):
        reg = st[entry + 3 + k]
        if reg >= 0:
            ea += _register(uc, st, reg) * (st[entry + 5] if k == 1 else 1)
    ea &= st[c.H_REG_WIDTH_MASK]
    if op == OP_NONTEMPORAL:
        st[c.H_NONTEMPORAL] = 1
    elif op == OP_DRAIN_WC:
        c.drain_write_combining(st)
    elif op == OP_TLB_INVALIDATE:
        mmu.invalidate_page(st, ea, scope & TLB_BROADCAST != 0)
    elif op == OP_TLB_INVALIDATE_ALL:
        mmu.invalidate_all(st, scope & TLB_BROADCAST != 0)
    elif op == OP_SLB_INVALIDATE:
        mmu.slb_invalidate(st, ea)
    elif op == OP_SLB_INVALIDATE_ALL:
        mmu.slb_invalidate_all(st)
    elif op == OP_SERIALISE:
        pass
    elif op == OP_MTMSR:                      # software-loaded TLBs: translation on/off
        st[c.H_XLATE] = ea & 0x30
    else:
        st[c.H_SWALLOW] = st[entry + 7]
        stall = c.maintain(st, ea, op, scope)
        if st[c.H_MMU]:                       # dcb*/icbi translate their EA as a load does
            mmu_stall, fault = _translate(st, ea, False, False, address)
            stall += mmu_stall
            if fault:
                _emu_stop(uc)
        c.account(st, address - st[c.H_CODE_BASE], stall)


@cfunc(TLB_SIG, nopython=True)
def identity_tlb_fill(uc, vaddr, access, entry, ud):
    result = carray(entry, (2,), np.uint64)
    result[0] = vaddr & ~np.uint64(0xFFF)
    result[1] = 7                       # UC_PROT_ALL
    return True


def add_hook(uc, kind, function, state, begin=1, end=0):
    """Register a numba cfunc as a Unicorn hook with the state array as its user data."""
    handle = c_size_t()
    err = uclib.uc_hook_add(uc._uch, byref(handle), kind, cast(function.address, c_void_p),
                            c_void_p(state.ctypes.data), c_uint64(begin), c_uint64(end))
    if err:
        raise RuntimeError(f"Unicorn refused a hook (error {err})")
    return handle


def remove_hook(uc, handle):
    uclib.uc_hook_del(uc._uch, handle)


__all__ = ["memory_hook", "outer_cache_hook", "block_hook", "special_hook", "identity_tlb_fill", "add_hook",
           "remove_hook", "ctypes"]
