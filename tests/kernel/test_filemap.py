"""2.2.0's read path from the page cache as guest code (emu.kernel.filemap,
routines/ppc32/filemap_22.S): the hash function by hand, the chains the file's pages make,
the data a reread brings to the user, and one pass's instructions counted by hand."""
import numpy as np
import pytest

from emu.kernel import filemap
from emu.kernel.entry import DATA_BASE, ELF_BASE, Entry
from emu.kernel.filemap import CachedFile, page_hashfn
from emu.papers.dougan1999 import kernel
from emu.hw.cache import H_CODE_BASE
from emu.run import profiler

KB = 1024


def test_page_hashfn_by_hand():
    # inode 0x1234560, sizeof's lowest bit 4 (shift 2): i = 0x48d158; the page at 0x5000:
    # o = 5; x = 0x48d15d = 4,772,189; x >> 11 = 2,330; 4,774,519 & 2047 = 631
    assert page_hashfn(0x1234560, 0x5000, 2) == 631
    # shift 3: i = 0x2468ac (2,386,092) + 5 = 2,386,097; >> 11 = 1,165; 2,387,262 & 2047
    # = 2,387,262 - 1,165 * 2048 = 1342
    assert page_hashfn(0x1234560, 0x5000, 3) == 1342
    # the offset's low 12 bits do not count
    assert page_hashfn(0x1234560, 0x5fff & ~0xfff, 2) == 631


def _reread(size, machine="604"):
    k = kernel(machine)
    entry = Entry(k)
    cached = CachedFile(entry, size)
    p = entry.spawn(filemap.bw_file_rd(DATA_BASE), "bw_file_rd", data_pages=16)
    entry.install(p, filemap.FD, cached.file)
    return k, entry, cached, p


def test_chains_of_a_file_as_large_as_the_table():
    """2,048 consecutive page indices over 2,048 buckets: s(x) adds x >> 11, which steps
    once in the run, so one bucket is skipped and one holds two pages (the later one, added
    later, at the head); every other page heads its own chain."""
    _, _, cached, _ = _reread(8 << 20)
    depths = [cached.chain_depth(n * 4096) for n in range(2048)]
    assert depths.count(1) == 2047 and depths.count(2) == 1


def test_a_reread_brings_the_file_to_the_user():
    """Each word of the file its index + 1: the user's sum (r31, over two passes of a
    128 KB file) is the words' sum twice, so every page was found and copied whole."""
    size = 128 * KB
    k, entry, cached, p = _reread(size)
    words = np.arange(1, size // 4 + 1, dtype=">u4")
    k.machine.write(cached.pages, words.tobytes())
    entry.run(p, ELF_BASE, size, 1)                          # the buffer's faults
    run = entry.run(p, ELF_BASE, size, 2)
    assert run.faults == 0 and run.status == 0
    assert run.gprs[31] == (2 * int(words.astype(np.uint64).sum())) & 0xFFFFFFFF


# One pass of a 128 KB file (two reads of 16 pages) in filemap_22.S's code, by hand
# (routines/ppc32/filemap_22.S):
# - sys_lseek22 with ext2_file_lseek22, f_pos 128 KB -> 0: 38 + 26 + 9 = 73;
# - each read: generic_file_read22 36, do_generic_file_read22's prologue and read-ahead
#   context 50 (the first read keeps it: reada_ok = 1; the second resets it: the same
#   count), its end with update_atime22 (the inode dirty already) 39: 125;
# - each page found at the head of its chain, reada_ok = 0: the i_size test and the hash
#   13, the chain 8, atomic_inc 7 and set_bit 16, PageUptodate 3, generic_file_readahead
#   22 (max_readahead 12 on a SCSI disk: no table), wait_on_page and PageUptodate 6, nr 6,
#   page_address 10, the actor's call 3; file_read_actor22 27 (its registers saved and
#   restored by stmw / lmw) and __copy_tofrom_user22 2,573 (512 iterations of 5, and 13:
#   copy_tofrom_user_22.S, the entry's code, which the pipes' copies share),
#   release_page 27 (__free_page22 and atomic_dec_and_test22) and the loop's tests 5:
#   2,726; with reada_ok = 1 (the first read's) 5 more (the f_ramax and raend tests)
PASS_128K = 73 + 2 * 125 + 16 * 2731 + 16 * 2726


def _span(program, name):
    """The bytes of ``program`` from symbol ``name`` to its next global label (a local
    one, ".L...", is inside the routine) or the program's end."""
    start, end = program.symbols[name], program.base + len(program.code)
    later = [a for n, a in program.symbols.items()
             if start < a < end and not n.startswith(".L")]
    return start, min(later, default=end)


def test_one_pass_instructions_by_hand():
    k, entry, cached, p = _reread(128 * KB)
    m = k.machine
    entry.run(p, ELF_BASE, 128 * KB, 1)
    program = next(pr for pr in m.programs if "sys_lseek22" in pr.symbols)
    spans = [(program.base, program.base + len(program.code)),
             _span(entry.program, "__copy_tofrom_user22")]
    counts = []
    for passes in (1, 2):
        profiler.count_instructions(m)
        try:
            entry.run(p, ELF_BASE, 128 * KB, passes)
            hits = profiler.instruction_counts(m)[0]
        finally:
            profiler.count_instructions(m, on=False)
        base = int(m.state[H_CODE_BASE])
        counts.append([int(hits[a - base:b - base].sum()) for a, b in spans])
    assert counts[1][1] - counts[0][1] == 32 * 2573
    assert sum(counts[1]) - sum(counts[0]) == PASS_128K


def test_refuses_the_2_1_51_kernel():
    with pytest.raises(ValueError):
        CachedFile(Entry(kernel("604"), version="2.1.51"), 64 * KB)


@pytest.mark.parametrize("moved", [{"kernel:pagecache.inode_size_shift": 6},
                                   {"kernel:pagecache.hash_table_offset": 4064}])
def test_the_guest_hash_follows_the_moved_estimates(moved):
    """The guest's _page_hashfn and the table's place move with the estimates: a reread at
    either end of their ranges still finds every page (a miss would be refused)."""
    from emu.hw import estimates
    with estimates.moved(moved):
        k, entry, cached, p = _reread(64 * KB)
        assert cached.shift == moved.get("kernel:pagecache.inode_size_shift", 2)
        entry.run(p, ELF_BASE, 64 * KB, 1)
        assert entry.run(p, ELF_BASE, 64 * KB, 1).faults == 0
