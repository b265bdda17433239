"""Table 3's time by part (emu.papers.dougan1999.table3_parts): where the model's cycles of a
null call, a context switch and a pipe round trip go, on both kernels, checked by hand."""
import pytest

from emu.kernel.entry import Entry
from emu.papers import dougan1999 as d

#: symbols of the loaded code that no part names: boot, the fault and exit paths the kernel
#: model takes over, refusals, and the routines fork and exec use (not in Table 3's loops)
NOT_IN_THE_LOOPS = {"boot_done", "entry22_boot", "entry22_base", "do_page_fault22",
                    "sys_exit22", "sigreturn22", "traced22", "clear_page", "copy_page",
                    "flush_dcache_icache", "probe_tlbie603", "probe_tlbld603"}


@pytest.fixture(scope="module")
def parts():
    return d.table3_parts()


@pytest.mark.parametrize("kind", ["optimized", "unoptimized"])
def test_parts_match_the_chapters_own_runs(parts, kind):
    machine, options = d.CONFIGURATIONS[(kind, "604")]
    assert parts.loc[("null call", kind), "cycles"] == \
        d.null_syscall(machine, **options)["cycles_per_call"]
    assert parts.loc[("pipe latency", kind), "cycles"] == d.lat_pipe(machine, **options)["cycles"]
    assert parts.loc[("context switch", kind), "cycles"] == \
        pytest.approx(d.lat_ctx(machine, **options)["cycles"])
    named = [*d.PARTS, d.REST]
    for column in d.PART_COLUMNS:
        row = parts.loc[(column, kind)]
        assert row[named].sum() == pytest.approx(row["cycles"])


@pytest.mark.parametrize("kind", ["optimized", "unoptimized"])
def test_a_null_call_by_hand(parts, kind):
    # the user's loop: 5 instructions a call (sc, the loop's count and branch: the 195 of
    # 2.1.51's call are 5 + 39 + 42 + 30 + 79), each in its own dispatch group on the 604
    # (a label, a branch before it, sc alone): 5 cycles, warm; sys_getppid22: two loads
    # that hit and blr: the second load reads the first's r9 (a new group) and blr joins
    # it: 2 cycles (3 one at a time). No TLB miss, no flush in the steady loop; the rest
    # is the entry.
    row = parts.loc[("null call", kind)]
    assert row[d.REST] == 5
    assert row["the call's own work"] == 2
    assert row["TLB and hash-table misses"] == row["flush"] == row["tlb_misses"] == 0
    assert row["scheduler and switch"] == 0
    assert row["entry and exit"] == row["cycles"] - 7          # 5 + 2


def test_the_published_cycles_are_table_3_at_133_mhz(parts):
    assert parts.loc[("null call", "unoptimized"), "published_cycles"] == pytest.approx(18 * 133)
    assert parts.loc[("context switch", "optimized"), "published_cycles"] == pytest.approx(6 * 133)
    assert parts.loc[("pipe latency", "unoptimized"), "published_cycles"] == \
        pytest.approx(78 * 133)


@pytest.mark.parametrize("machine, options, version", [
    ("604", {"flush": "search"}, "2.1.51"), ("603 hash table", {"tlb_flush": "search"}, "2.1.51"),
    ("603 page table", {"tlb_flush": "context"}, "2.2.0")])
def test_every_routine_of_the_loops_has_a_part(machine, options, version):
    k = d.kernel(machine, **options)
    Entry(k, bats=version == "2.2.0", version=version)
    rest = {name for p in k.machine.programs for name, at in p.symbols.items()
            if p.base <= at < p.base + len(p.code) and not name.startswith(".L")
            and d.part_of(name) == d.REST}
    assert rest <= NOT_IN_THE_LOOPS
