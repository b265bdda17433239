"""kmap_atomic and kunmap_atomic around the copy (routines/x86/highmem_2612.S): the
instructions a highmem page adds, counted by hand, the PTE they write, preempt_count."""
from emu.papers.yoshioka2005 import ext3model as e


def _written(highmem, cpus=1):
    k = e.Kernel("2.6.12", cpus=cpus, max_records=40, highmem=highmem)
    k.write_records(8)
    return k, k.write_records(1)


def test_a_highmem_page_adds_the_pte_write_and_the_invlpg_counted_by_hand():
    # the same write on the same state, its page highmem or lowmem: kmap_atomic's highmem
    # branch (ebx saved and restored 2, idx 3, mk_pte 5, set_pte 5, vaddr 3, invlpg 1,
    # the walker's two loads with the PDE's index 3, the page reloaded 1) = 23
    (_, high), (_, low) = _written(True), _written(False)
    assert high.instructions - low.instructions == 23
    # the invlpg's cost (pentium4.toml: 100, an estimate) is in the difference's cycles
    assert high.cycles - low.cycles >= 23 - 1 + 100


def test_the_pte_maps_the_page_just_written_and_preempt_count_is_restored():
    for cpus in (1, 2):
        k, _ = _written(True, cpus)
        for cpu in range(cpus):
            f = k.files[cpu]
            page = k._lookup(f["mapping"], e.FIRST_INDEX + k.written - 1)
            idx = 3 + 13 * cpu                      # KM_USER0 + KM_TYPE_NR * cpu
            pte = k._read(k._read(k.sym["kmap_pte"]) - 4 * idx)
            assert pte == ((page - k.mem_map) // e.PAGE_STRUCT) << 12 | 0x163
            assert k._read(k.ctx[cpu]["stack"] + e.TI["PREEMPT"]) == 0


def test_a_lowmem_page_gets_no_pte():
    k, _ = _written(False)
    ptes = k._read(k.sym["kmap_pte"])
    assert all(k._read(ptes - 4 * i) == 0 for i in range(13 * 2))
