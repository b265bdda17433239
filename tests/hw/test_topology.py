"""Chips and modules (emu.hw.topology): a chip's own L2, lines one chip supplies to another
(interventions) at the module's or the fabric's cost, maintenance that reaches every chip."""
from pathlib import Path

import pytest

from emu.hw import profile
from emu.hw.cache import CacheLevel, CacheModel, Layout, OP_FLUSH
from emu.run.machine import Machine
from emu.hw.topology import Topology, check

ROUTINES = Path(__file__).resolve().parents[2] / "routines"
SUM_WORDS = """
    .globl sum_words
sum_words:                  # r3 = sum of r4 words at r3
    mtctr r4
    li    r5, 0
1:  lwz   r6, 0(r3)
    add   r5, r5, r6
    addi  r3, r3, 4
    bdnz  1b
    mr    r3, r5
    blr
"""
# four chips of one core, two chips to a module: chips 0, 1 on module 0; 2, 3 on module 1
FOUR_CHIPS = Topology(cores_per_chip=1, chips_per_module=2, chip_levels=("L2",),
                      on_module=40, off_module=70)


def four_chips():
    l1 = lambda name: CacheLevel(name, 128, 2, 32, hit_latency=2)
    return CacheModel([l1("L1I"), l1("L1D"), CacheLevel("L2", 1024, 4, 32, hit_latency=10)],
                      memory_latency=100, cores=4, topology=FOUR_CHIPS)


def test_each_chip_has_its_own_copy_of_a_chip_level():
    lay = Layout([CacheLevel("L1I", 128, 2, 32), CacheLevel("L1D", 128, 2, 32),
                  CacheLevel("L2", 1024, 4, 32), CacheLevel("L3", 4096, 4, 32)], cores=4,
                 topology=Topology(cores_per_chip=2, chip_levels=("L2",)))
    l2 = [own["L2"] for own in lay.core_index]
    l3 = [own["L3"] for own in lay.core_index]
    assert l2[0] == l2[1] != l2[2] == l2[3]          # two chips of two cores
    assert len(set(l3)) == 1                          # the L3 stays the machine's
    assert lay.chip_of_level == {l2[0]: 0, l2[2]: 1}


def test_a_line_comes_from_another_chip_at_the_cost_of_its_distance():
    m = four_chips()
    assert m.on(0).load(0) == 98                      # from memory: 100 - 2
    assert m.on(1).load(0) == 38                      # chip 0 on its module: 40 - 2
    assert m.on(2).load(0) == 68                      # chips 0, 1 on another module: 70 - 2
    assert m.on(3).load(0) == 38                      # chip 2 is on its module
    assert [m.coherence(c)["interventions"] for c in range(4)] == [0, 1, 1, 1]
    # core 0 writes its L1 D's copy (write-back): the other cores' L1 copies go
    assert m.on(0).store(0) == 0
    assert m.coherence(0) == {"transfers": 0, "invalidations": 3, "interventions": 0}
    # core 3 reads: core 0's dirty line goes back to chip 0's L2 (a transfer), a write that
    # takes the line from chips 1-3; chip 3 misses, chip 0 (another module) supplies it,
    # written back to memory first as it is dirty
    assert m.on(3).load(0) == 68
    assert m.coherence(3) == {"transfers": 1, "invalidations": 0, "interventions": 2}
    assert m.memory_traffic == {"reads": 0, "writes": 1}          # core 3's header
    assert [m.stats(c)["L2"]["invalidations"] for c in range(4)] == [0, 1, 1, 1]
    assert m.stats(0)["L2"] == {"accesses": 2, "hits": 1, "misses": 1, "writebacks": 1,
                                "invalidations": 0, "evictions": 0}


def test_maintenance_by_address_reaches_every_chips_copy():
    m = four_chips()
    m.on(0).store(0)                                  # dirty in core 0's L1 D
    m.on(2).load(0)                                   # chip 1 gets a copy from chip 0
    m.on(0).maintain(0, OP_FLUSH)                     # dcbf on core 0
    assert [m.stats(c)["L2"]["invalidations"] for c in range(4)] == [1, 0, 1, 0]
    assert m.on(2).load(0) == 98                      # from memory again, no intervention
    assert m.coherence(2)["interventions"] == 1


def test_without_chip_levels_every_core_shares_the_l2_and_nothing_intervenes():
    m = CacheModel([CacheLevel("L1D", 128, 2, 32, hit_latency=2),
                    CacheLevel("L2", 1024, 4, 32, hit_latency=10)], memory_latency=100,
                   cores=4, topology=Topology(cores_per_chip=1, chips_per_module=2))
    assert [m.on(c).load(0) for c in range(4)] == [98, 8, 8, 8]
    assert all(m.coherence(c)["interventions"] == 0 for c in range(4))


@pytest.mark.parametrize("reader, distance", [(1, None), (2, "on_module"),
                                               (8, "off_module")])
def test_power4_reads_lines_another_chip_wrote_over_the_fabric(reader, distance):
    """p690: two cores to a chip and its L2, four chips to a module. Core 0 writes 4 KB
    (32 lines of 128 bytes); core 1 (its chip) finds them in their L2; core 2 (chip 1) and
    core 8 (chip 4, on another module) get each line, and the code's, from chip 0: each
    costs the intervention in place of the L2 hit."""
    topo = profile.load("power4").topology
    l2 = next(c for c in profile.load("power4").caches if c.name == "L2").hit_latency

    def read_on(core):
        m = Machine("power4", cores=max(core + 1, 2))
        m.load(ROUTINES / "ppc32" / "fill_words.S")
        m.load(SUM_WORDS)
        buf = m.alloc(4096)
        m.run_parallel([("fill_words", buf, 3, 1024)])
        run = m.run_parallel([None] * core + [("sum_words", buf, 1024)]).runs[core]
        assert run.return_value == 3 * 1024
        return run

    same_chip, other = read_on(1), read_on(reader)
    assert same_chip.events["interventions"] == 0
    if distance is None:
        return
    assert other.events["interventions"] == 33                    # 32 data lines + code
    assert other.caches["L2"]["misses"] == 33 and same_chip.caches["L2"]["misses"] == 0
    assert other.cycles - same_chip.cycles == 33 * (getattr(topo, distance) - l2)


@pytest.mark.parametrize("table, reason", [
    ({"cores": 2}, "unknown key"),
    ({"cores_per_chip": 0}, "cores_per_chip must be a whole number of at least 1"),
    ({"chips_per_module": 1.5}, "chips_per_module must be a whole number"),
    ({"chip_levels": ["L1D"], "on_module": 1, "off_module": 2}, "'L1D' is not an L2 or L3"),
    ({"chip_levels": ["L3"], "on_module": 1, "off_module": 2}, "'L3' is not an L2 or L3 of"),
    ({"chip_levels": ["L2"], "on_module": 1}, "off_module .* must be a whole number >= 0"),
])
def test_impossible_topologies_are_refused_with_the_reason(table, reason):
    with pytest.raises(ValueError, match=reason):
        check(table, ["L1I", "L1D", "L2"])


def test_a_profile_with_a_bad_topology_names_the_file(tmp_path):
    text = (profile.FOLDER / "power4.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("cores_per_chip = 2", "cores_per_chip = -2"))
    with pytest.raises(ValueError, match=r"profile bad.toml: \[topology\] cores_per_chip"):
        profile.load(bad)


def test_profiles_give_their_topology():
    p4 = profile.load("power4").topology
    assert (p4.cores_per_chip, p4.chips_per_module, p4.chip_levels) == (2, 4, ("L2",))
    assert p4.chip(31) == 15 and p4.chips(32) == 16
    assert profile.load("cortex-a9").topology.chip_levels == ()
    assert profile.load("ppc750").topology == Topology()
