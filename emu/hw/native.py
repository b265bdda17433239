"""The native model: the C library (emu/hw/model/*.c) that every guest memory access runs in.

Unicorn calls the library's hooks directly (no Python per access): ``memory_hook``,
``outer_cache_hook``, ``block_hook``, ``special_hook``, ``identity_tlb_fill`` (see
emu/hw/model/hooks.c). Each receives the model's state array (``emu.hw.cache.Layout``) as its
user data. Python reaches the same model functions through ``lib`` (ctypes), e.g.
``emu.hw.cache.data_access`` for the hand-fed ``CacheModel``.

The library is compiled when the project is installed (setup.py, like pycachesim's
backend). It records a hash of the sources it was built from: in a source tree whose C
files have changed since (a developer's edit), importing this module rebuilds it in place
(a few seconds), so the model that runs is always the one the sources say.

This module imports nothing else from emu: the model's Python modules (cache, mmu, hash64,
softtlb) call down into it.
"""
from __future__ import annotations

import ctypes
import fcntl
from ctypes import byref, c_int64, c_size_t, c_uint64, c_void_p, cast

from unicorn.unicorn_py3.unicorn import uclib

from .model import build


def _load():
    """The library, rebuilt first if it is missing or older than its sources."""
    package_dir = build.HERE.parent          # the library sits in this package (emu.hw)
    path = build.library_path(package_dir)
    want = build.source_hash()
    if not _built_from(path, want):
        path = _rebuild(package_dir, want)
    lib = ctypes.CDLL(str(path))
    lib.emu_source_hash.restype = ctypes.c_char_p
    if lib.emu_source_hash().decode() != want:
        raise ImportError(f"the native model at {path} does not match its sources")
    return lib


def _built_from(path, want):
    """Was the library at ``path`` built from sources of hash ``want``? (Read from the file,
    not by loading it: a process cannot load a second library of the same path.)"""
    try:
        with open(path, "rb") as f:
            return b"emu-source-hash:" + want.encode() in f.read()
    except OSError:
        return False


def _rebuild(package_dir, want):
    """Build the library in place, one process at a time (a lock beside it)."""
    try:
        with open(package_dir / ".model-build.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = build.library_path(package_dir)
            if _built_from(path, want):         # another process built it meanwhile
                return path
            return build.build_in_place(package_dir)
    except OSError as error:
        raise ImportError(f"the native model (emu/hw/model/*.c) is not built for these sources "
                          f"and could not be rebuilt in {package_dir}: {error}; run `pip "
                          f"install -e .` in the project") from None


lib = _load()

# What Python calls: name -> argument kinds ('p' the state array's address, 'i' an int64,
# 'o' a pointer to an int64 the function writes); every function returns an int64 (or
# nothing, where the result is ignored).
_SIGNATURES = {
    "emu_access": "piii", "emu_data_access": "piii", "emu_fetch": "piii",
    "emu_maintain": "piii", "emu_maintain_level": "piii", "emu_alignment": "pii",
    "emu_store_queue": "piii", "emu_nontemporal_store": "pii",
    "emu_drain_write_combining": "p", "emu_account": "pii", "emu_snoop": "pii",
    "emu_serialise": "pii", "emu_outer_cache_write": "pii", "emu_invalidate_level": "pi",
    "emu_drop_line": "piii", "emu_find": "pii", "emu_hit": "piii", "emu_changed": "pii",
    "emu_slb_find": "pi", "emu_load_be64": "pi", "emu_hash64_pteg_address": "ii",
    "emu_hash64_hpte_dword0": "iii", "emu_hash64_primary_hash": "ii", "emu_pp_rights": "ii",
    "emu_no_execute": "ii", "emu_softtlb_lookup": "pii", "emu_softtlb_count_miss": "pi",
    "emu_softtlb_victim_way": "pii", "emu_softtlb_load_way": "piii",
    "emu_softtlb_drop_way": "pi", "emu_softtlb_search405": "pii", "emu_translate": "piii", "emu_invalidate_page": "pii",
    "emu_invalidate_all": "pi", "emu_slb_store": "pii", "emu_slb_invalidate": "pi",
    "emu_slb_invalidate_all": "p", "emu_descriptor": "pio", "emu_walk_hashed32": "pio",
    "emu_primary_hash": "ii", "emu_pteg_address": "ii", "emu_pte_word0": "iii",
    "emu_constant_value": "i", "emu_parts": "p", "emu_write_registers": "pipp", "emu_clear_stats": "ppippi",
    "emu_block_call": "ppiiii", "emu_task_start": "ppiiii", "emu_task_end": "pp",
    "emu_switch_core": "pi", "emu_uncharge_faulted": "pii",
}
_KINDS = {"p": c_void_p, "i": c_int64, "o": ctypes.POINTER(c_int64)}
for _name, _kinds in _SIGNATURES.items():
    _function = getattr(lib, _name)
    _function.argtypes = [_KINDS[k] for k in _kinds]
    _function.restype = c_int64
lib.emu_constant_name.argtypes = [c_int64]
lib.emu_constant_name.restype = ctypes.c_char_p
lib.emu_set_unicorn(cast(uclib.uc_reg_read, c_void_p), cast(uclib.uc_emu_stop, c_void_p),
                  cast(uclib.uc_emu_start, c_void_p), cast(uclib.uc_reg_write, c_void_p))
lib.emu_set_unicorn_context(cast(uclib.uc_context_save, c_void_p),
                            cast(uclib.uc_context_restore, c_void_p),
                            cast(uclib.uc_ctl, c_void_p))


def address(state):
    """The host address of a state array (what the library's functions take)."""
    return state.ctypes.data


def call_with_out(function, *args):
    """(result, out) of a library function whose last argument is an int64 it writes."""
    out = c_int64(0)
    result = function(*args, byref(out))
    return result, out.value


def constants():
    """{name: value} of every constant the library's state.h defines."""
    out, k = {}, 0
    while (name := lib.emu_constant_name(k)) is not None:
        out[name.decode()] = lib.emu_constant_value(k)
        k += 1
    return out


def _hook(name):
    return cast(getattr(lib, name), c_void_p).value


memory_hook = _hook("memory_hook")
# The parts of the model beyond the caches a machine may have (state.h PART_*): the MMU, the
# memory system in time, alignment rules, store queues (which need a store-through L1 D).
# Its memory and block hooks are compiled for the parts it has.
PART_MMU, PART_MEMSYS, PART_ALIGN, PART_SQ, ALL_PARTS = 1, 2, 4, 8, 15
# memory_hook compiled without the parts a machine lacks, indexed by the parts it has
MEMORY_HOOKS = [_hook(f"memory_hook_{parts}") for parts in range(ALL_PARTS)] + [memory_hook]


def memory_hook_for(state):
    """The memory hook for a machine's state, once it is set up: the parts it switches on
    (H_MMU, H_MEMSYS, the alignment rules, H_SQ_SLICES) are fixed for the machine's life
    (translation_off turns the MMU off only for a while, which its hook tests)."""
    return MEMORY_HOOKS[lib.emu_parts(address(state))]


# block_hook compiled for the parts it reads (the MMU, store queues), as above
_BLOCK_PARTS = PART_MMU | PART_SQ
BLOCK_HOOKS = {parts: _hook(f"block_hook_{parts}") for parts in (0, PART_MMU, PART_SQ,
                                                                 _BLOCK_PARTS)}


def block_hook_for(state):
    """The block hook for a machine's state (see memory_hook_for)."""
    return BLOCK_HOOKS[lib.emu_parts(address(state)) & _BLOCK_PARTS]
outer_cache_hook = _hook("outer_cache_hook")
block_hook = _hook("block_hook")
special_hook = _hook("special_hook")
foreign_insn_hook = _hook("foreign_insn_hook")      # x86 code outside loaded programs
identity_tlb_fill = _hook("identity_tlb_fill")
halt_fetch_hook = _hook("halt_fetch_hook")          # a return to HALT in a scheduled run
rdtsc_hook = _hook("rdtsc_hook")                    # x86 rdtsc / rdtscp: the model's cycles
rdtscp_hook = _hook("rdtscp_hook")
empty_memory_hook = _hook("empty_memory_hook")      # hooks that do nothing: emu.bench
empty_block_hook = _hook("empty_block_hook")
set_byte_block_hook = _hook("set_byte_block_hook")  # benchmarks/pc_restore.py


def add_hook(uc, kind, function, state, begin=1, end=0, user_data=None, instruction=None):
    """Register one of the library's hooks (an address above) on ``uc`` with the state
    array as its user data (or the raw pointer ``user_data``); ``instruction``: the
    instruction of a UC_HOOK_INSN hook."""
    handle = c_size_t()
    data = c_void_p(user_data if user_data is not None else address(state))
    extra = () if instruction is None else (ctypes.c_int(instruction),)
    err = uclib.uc_hook_add(uc._uch, byref(handle), kind, c_void_p(function), data,
                            c_uint64(begin), c_uint64(end), *extra)
    if err:
        raise RuntimeError(f"Unicorn refused a hook (error {err})")
    return handle


def remove_hook(uc, handle):
    uclib.uc_hook_del(uc._uch, handle)


__all__ = ["lib", "address", "constants", "memory_hook", "outer_cache_hook", "block_hook",
           "special_hook", "identity_tlb_fill", "add_hook", "remove_hook"]
