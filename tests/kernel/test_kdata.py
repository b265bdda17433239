"""The kernel's words where 2.2.0's image puts them (emu.kernel.kdata): offsets by hand
from the sources' definitions, and the estimates moving an area's place."""
from emu.hw import estimates
from emu.kernel.entry import KDATA_WORDS
from emu.kernel.kdata import AREAS, PAGE, estimate_ranges, nominal, place
from tests.kernel.test_files_cache import Memory     # a machine's allocator alone


def test_offsets_in_their_objects_by_hand():
    """sched.o .data: 5 words before tq_scheduler (+20), then 19 words (+24..+96) and task[512]
    (+100..+2148) to kstat, whose context_swtch is at 3 + 3 + 20 + 4 + 128 + 5 words = 652:
    +2800. fork.o: nr_tasks, nr_running (+4). softirq.o: bh_active, bh_mask (+0, +4)."""
    at = place(Memory(), KDATA_WORDS)
    offsets = nominal()
    sched = at["TQ_SCHEDULER"] - 20
    assert sched % PAGE == offsets["sched"]
    assert at["CONTEXT_SWTCH"] - sched == 6 * 4 + 19 * 4 + 512 * 4 + 652 == 2800
    assert at["NR_RUNNING"] % PAGE == offsets["fork"] + 4
    assert (at["BH_ACTIVE"] % PAGE, at["BH_MASK"] % PAGE) == (offsets["softirq"],
                                                               offsets["softirq"] + 4)
    assert at["PREVSTATE"] % PAGE == offsets["sched_aligned"] + 4
    assert at["HTAB_RELOADS"] % PAGE == offsets["fault"]


def test_no_two_objects_share_a_page_or_an_l1d_set_nominally():
    """Each area in pages of its own in link order; the nominal places on distinct sets
    of the 604's L1D (128 sets of 32 bytes: the address mod 4 KB)."""
    at = place(Memory(), KDATA_WORDS)
    by_area = {}
    from emu.kernel.kdata import PLACES
    for word, (area, _) in PLACES.items():
        by_area.setdefault(area, set()).add(at[word] // PAGE)
    pages = [p for ps in by_area.values() for p in ps]
    assert len(pages) == len(set(pages)) == len(AREAS) - 1     # irq_data: 2.1.51's only
    sets = {at[w] % PAGE // 32 for w in ("HTAB_RELOADS", "TQ_SCHEDULER", "NR_RUNNING",
                                         "BH_ACTIVE", "PREVSTATE", "LOST_IRQS", "XTIME")}
    assert len(sets) == 7 and 0 not in sets


def test_an_areas_estimate_moves_it_and_its_range_keeps_it_in_its_pages():
    at = place(Memory(), KDATA_WORDS)
    with estimates.moved({"kernel:kdata.fork": 0}):
        moved = place(Memory(), KDATA_WORDS)
    assert moved["NR_RUNNING"] % PAGE == 4 != at["NR_RUNNING"] % PAGE
    for name, value, low, high, why in estimate_ranges():
        span = dict((a, s) for a, _, s in AREAS)[name.split(".")[-1]]
        assert low <= value <= high and high + span <= PAGE and why


def test_2_1_51_sched_data_is_shorter_and_its_lost_interrupts_initialised():
    """2.1.51's sched.c: 3 words, 14 time_ words (+12..+64), need_resched +68; 6 words from
    +72, task[512] from +96, kstat +2144, context_swtch 256 into it (3 + 20 + 4 + 32 + 5
    words): +2400. lost_interrupts .data of irq.o (+0), not COMMON."""
    at = place(Memory(), KDATA_WORDS, "2.1.51")
    sched = at["TQ_SCHEDULER"] - 20
    assert at["NEED_RESCHED"] - sched == (3 + 14) * 4 == 68
    assert at["CONTEXT_SWTCH"] - sched == (3 + 14 + 1 + 6) * 4 + 512 * 4 + 256 == 2400
    assert at["LOST_IRQS"] % PAGE == nominal()["irq_data"]
    assert at["LOST_IRQS"] < at["HTAB_RELOADS"]        # arch/ppc/kernel before arch/ppc/mm
