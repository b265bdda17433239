"""The native model (emu/hw/model/*.c): its constants are Python's, its copies of the
architecture's formulas agree with the Python ones, and a stale build is detected and
rebuilt."""
import random
from pathlib import Path

import pytest

from emu.hw import cache, cost, hash64, mmu, native, softtlb, tlb604
from emu.hw.model import build, constants

PYTHON_MODULES = (cache, mmu, hash64, softtlb, tlb604, cost, native)


def test_every_constant_of_the_header_is_exported():
    """(If not: python -m emu.hw.model.constants rewrites model.c's table.)"""
    assert set(constants.header_names()) == set(native.constants())


def test_the_c_constants_are_the_python_ones():
    """Every constant the C model shares with Python has the same value in both."""
    checked = 0
    for name, value in native.constants().items():
        for module in PYTHON_MODULES:
            if isinstance(getattr(module, name, None), int):
                assert getattr(module, name) == value, f"{module.__name__}.{name}"
                checked += 1
    assert checked > 150            # the H_*, L_* and OP_* fields at least


def test_the_c_hashes_agree_with_the_python_ones():
    rng = random.Random(7)
    lib = native.lib
    for _ in range(2000):
        vsid24, vsid52 = rng.getrandbits(24), rng.getrandbits(52)
        ea = rng.getrandbits(32)
        sdr1 = rng.getrandbits(16) << 16 | rng.getrandbits(9)
        h = mmu.primary_hash(vsid24, ea)
        assert lib.emu_primary_hash(vsid24, ea) == h
        assert lib.emu_pteg_address(sdr1, h) == mmu.pteg_address(sdr1, h)
        assert lib.emu_pte_word0(vsid24, ea, 1) == mmu.pte_word0(vsid24, ea, True)
        h64 = hash64.primary_hash(vsid52, ea)
        assert lib.emu_hash64_primary_hash(vsid52, ea) == h64
        sdr1_64 = (rng.getrandbits(20) << 18) | rng.getrandbits(5)
        assert lib.emu_hash64_pteg_address(sdr1_64, h64) == hash64.pteg_address(sdr1_64, h64)
        assert lib.emu_hash64_hpte_dword0(vsid52, ea, 0) == \
            hash64.signed64(hash64.hpte_dword0(vsid52, ea, False))
        dword1, vsid_word = hash64.signed64(rng.getrandbits(64)), rng.getrandbits(20) << 8
        read, write = hash64.pp_rights(dword1, vsid_word)
        assert lib.emu_pp_rights(dword1, vsid_word) == int(read) | 2 * int(write)
        assert bool(lib.emu_no_execute(dword1, vsid_word)) == hash64.no_execute(dword1,
                                                                               vsid_word)


def test_the_library_records_the_sources_it_was_built_from(tmp_path):
    """A library built from other sources is stale (emu.hw.native rebuilds it at import); a
    fresh build records the current sources' hash."""
    want = build.source_hash()
    path = build.library_path(Path(native.__file__).parent)
    assert native._built_from(path, want)
    assert not native._built_from(path, "0" * 16)
    assert not native._built_from(tmp_path / "missing.so", want)
    built = build.build_in_place(tmp_path)
    assert native._built_from(built, want)
    assert list(tmp_path.iterdir()) == [built]       # no temporary file left behind


def test_a_source_change_changes_the_hash(tmp_path):
    for path in build.sources():
        (tmp_path / path.name).write_bytes(path.read_bytes())
    assert build.source_hash(tmp_path) == build.source_hash()
    (tmp_path / "cache.c").write_text((tmp_path / "cache.c").read_text() + "\n/* edit */\n")
    assert build.source_hash(tmp_path) != build.source_hash()


def test_a_compile_error_is_reported_with_the_compiler_output(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "FLAGS", build.FLAGS + ["-DEMU_BROKEN=1", "-include",
                                                       str(tmp_path / "broken.h")])
    (tmp_path / "broken.h").write_text("#error this model does not compile\n")
    with pytest.raises(OSError, match="this model does not compile"):
        build.build_in_place(tmp_path)
    assert list(tmp_path.iterdir()) == [tmp_path / "broken.h"]


def test_a_source_tree_builds_its_model_at_import_and_rebuilds_it_after_an_edit(tmp_path):
    """A fresh copy of the sources has no library: importing emu.hw.native compiles it; after
    an edit of a C file the next import compiles it again (the library's recorded hash)."""
    import os
    import subprocess
    import sys
    from emu.bench import fresh_copy
    root = fresh_copy(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(root))
    probe = ("import emu.hw.native as n; from emu.hw.model import build; "
             "print(n.lib.emu_source_hash().decode() == build.source_hash(), n.lib._name)")

    def run():
        done = subprocess.run([sys.executable, "-c", probe], cwd=root, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    library = build.library_path(root / "emu" / "hw")
    assert not library.exists()
    assert run() == ["True", str(library)]
    first = library.stat().st_mtime_ns
    source = root / "emu" / "hw" / "model" / "cache.c"
    source.write_text(source.read_text() + "\n/* an edit */\n")
    assert run() == ["True", str(library)]
    assert library.stat().st_mtime_ns != first


# A machine's memory and block hooks are compiled with only the parts of the model its
# profile has (emu.hw.native.PART_*)
# (the 750's [bus], the 60x bus, is a memory-system part)
PARTS = [("ppc750", False, native.PART_ALIGN | native.PART_MEMSYS),
         ("ppc750", True, native.PART_ALIGN | native.PART_MMU | native.PART_MEMSYS),
         ("power4", False, native.PART_ALIGN | native.PART_SQ),
         ("power4", True, native.PART_ALIGN | native.PART_SQ | native.PART_MMU),
         ("cortex-a9", False, 0), ("cortex-a9", True, native.PART_MMU),
         ("pentium4", False, native.PART_MEMSYS)]


@pytest.mark.parametrize("cpu, with_mmu, parts", PARTS)
def test_a_machines_hooks_have_its_parts_and_run_as_those_with_all(
        cpu, with_mmu, parts, monkeypatch):
    from emu import bench
    from emu.run.machine import Machine
    isa = {"ppc750": "ppc32", "power4": "ppc64", "cortex-a9": "arm", "pentium4": "x86"}[cpu]
    runs = []
    for every_part in (False, True):
        if every_part:
            monkeypatch.setattr(native, "memory_hook_for", lambda state: native.memory_hook)
            monkeypatch.setattr(native, "block_hook_for", lambda state: native.block_hook)
        m = Machine(cpu, ram_size=8 << 20, mmu=with_mmu)
        assert native.lib.emu_parts(native.address(m.state)) == parts
        m.load(bench.COPY_LOOPS[isa][1])
        src, dst = bench.place_buffers(m, 64 << 10, "offset")
        if with_mmu:
            mmu.page_table(m)
        words = (64 << 10) // (8 if isa == "ppc64" else 4)
        runs.append([m.call("copy_words", dst, src, words).to_dict() for _ in range(2)])
    assert runs[0] == runs[1]


def test_code_loaded_over_code_that_ran_is_charged_as_the_new_code():
    # The block hook keeps a block's instructions and cycles from the code's tables (block
    # memos, emu/hw/model/hooks.c); a load over code that ran rewrites the tables, and the same
    # address and size now hold other instructions: two mullw (9 cycles warm), then two addi
    slow = ".globl f\nf:\n    mullw 3, 3, 3\n    mullw 3, 3, 3\n    blr\n"
    fast = ".globl f\nf:\n    addi 3, 3, 1\n    addi 3, 3, 1\n    blr\n"
    from emu.run.machine import Machine

    def warm(m):
        m.call("f", 3)
        return m.call("f", 3)

    fresh = Machine("ppc750")
    fresh.load(fast)
    m = Machine("ppc750")
    base = m.load(slow).base
    assert warm(m).cycles == 9
    m.load(fast, at=base)
    run = warm(m)
    assert (run.cycles, run.instructions, run.return_value) == (warm(fresh).cycles, 3, 5)
    assert run.cycles == 3


def test_a_block_fetches_through_the_l1_i_again_once_its_line_is_invalidated():
    # The block hook remembers where a block's fetch last found its line the set's most
    # recent (fetch_as_before, emu/hw/model/hooks.c). Between two runs of a loop, with no other
    # code run (so its blocks' memos stay), its line is invalidated from the host: the next
    # run's first fetch misses again; a store over it (through the data side) makes the run
    # after stale. Both fail if the memo is trusted without checking the set.
    from emu.hw import cache as c
    from emu.run.machine import Machine
    m = Machine("ppc750")
    loop = m.load(".globl loop\nloop:\n    mtctr 3\n1:  addi 4, 4, 1\n    bdnz 1b\n"
                  "    blr\n").base
    m.call("loop", 50)
    again = m.call("loop", 50)
    assert (again.caches["L1I"]["misses"], again.caches["L1I"]["hits"]) == (0, 51)
    c.maintain(m.state, loop, c.OP_ICACHE_INVALIDATE, c.SCOPE_ALL)
    after = m.call("loop", 50)
    assert after.caches["L1I"]["misses"] == 1 and after.events["stale_ifetch"] == 0
    c.data_access(m.state, loop + 4, 4, True)   # a store over the addi, through the L1 D
    assert m.call("loop", 50).events["stale_ifetch"] > 0
