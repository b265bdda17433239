"""Lock spinning read from a profiled run's instructions (emu.papers.yoshioka2005.spins), and
the mail's rest of the kernel split by function (restsplit), checked by hand."""
import pandas as pd
import pytest

from emu.context import routine
from emu.isa.assemble import assemble
from emu.papers.yoshioka2005 import restsplit, spins
from emu.run.machine import Machine
from emu.run.profiler import profile_call, profile_parallel

RELEASE = """
        .globl  release_after
release_after:                          # release_after(lock, n): n turns of a loop, then
        movl    4(%esp), %eax           # spin_unlock(lock)
        movl    8(%esp), %ecx
1:      decl    %ecx
        jnz     1b
        movb    $1, (%eax)
        ret
"""


def _machine(cores):
    m = Machine("pentium4", cores=cores)
    src = routine("x86/spinlock_2612.S").read_text() + RELEASE
    m.load(assemble(src, "x86", m.code_start, "spinlock_2612.S and release_after"))
    lock = m.alloc(64)
    return m, lock


def _site(table, symbol):
    sites = spins.spin_sites(table).set_index("symbol")
    return sites.loc[symbol]


def test_a_free_lock_takes_no_spin():
    m, lock = _machine(1)
    m.write(lock, bytes([1]))                   # a lock byte of 1 is free
    run = profile_call(m, "_spin_lock", lock, every=997)
    site = _site(run.table, "_spin_lock")
    assert site["kind"] == "lock" and site["attempt"] == "lock decb (%eax)"
    assert (site["iterations"], site["retries"], site["cycles"]) == (0, 0, 0)
    assert spins.spin_by_symbol(run.table).loc["_spin_lock", "spin_percent"] == 0


def test_a_lock_held_by_hand_spins_until_its_release():
    """Core 1 holds the lock (its byte 0, written by hand) for 5,000 turns of a loop, then
    frees it; core 0's _spin_lock fails once, spins, and retries once. Its spin is every
    cycle of its call but the argument's load, the first attempt and the ret (the retry
    charged at the attempts' mean), and lasts at least from the end of its first attempt to
    core 1's store."""
    m, lock = _machine(2)
    m.write(lock, bytes([0]))
    run = profile_parallel(m, [("_spin_lock", lock), ("release_after", lock, 5000)],
                           every=997)
    spinner, holder = run.run.runs
    t = run.table.set_index("address")
    code = t[t["symbol"] == "_spin_lock"]
    load, attempt, branch = code.iloc[0], code.iloc[1], code.iloc[2]
    ret = code.iloc[-1]
    assert attempt["hits"] == branch["hits"] == 2              # the attempt and the retry
    first = attempt["cycles"] / 2 + branch["cycles"] / 2       # the attempts' mean
    site = _site(run.table, "_spin_lock")
    assert site["retries"] == 1 and site["attempts"] == 2 and site["iterations"] > 0
    assert site["cycles"] == round(spinner.cycles - load["cycles"] - first - ret["cycles"])
    store = holder.cycles - 1                   # the holder's ret after its store: 1 cycle
    assert site["cycles"] >= store - (load["cycles"] + first)
    assert spinner.cycles >= store
    by = spins.spin_by_symbol(run.table)
    assert by.loc["_spin_lock", "spin_cycles"] == site["cycles"]
    assert "release_after" not in by[by["spin_cycles"] > 0].index


def _table(rows):
    """A per-instruction table as a SampledRun's: (address, symbol, hits, cycles, text)."""
    return pd.DataFrame([{"address": a, "symbol": s, "hits": h, "cycles": c, "samples": 0,
                          "instruction": i} for a, s, h, c, i in rows])


@pytest.mark.parametrize("bit, kind", [(0x13, "lock"), (0x14, "lock"), (2, "wait")])
def test_a_bit_lock_spins_unless_it_is_lock_buffers(bit, kind):
    """BH_State (19) and BH_JournalHead (20) are bit spin locks; BH_Lock (2) is
    lock_buffer's, which sleeps in 2.6.12. The spin: the loop's rows (10 + 30 + 10 + 1
    cycles) and the one retry at the attempts' mean ((100 + 300) / 2 + (2 + 2) / 2)."""
    table = _table([
        (0x10, "f", 2, 400, f"lock btsl ${bit:#x}, (%ebx)"),
        (0x14, "f", 2, 4, "jae 0x20"),
        (0x16, "f", 10, 10, "pause"),
        (0x18, "f", 10, 30, "testl $0x80000, (%ebx)"),
        (0x1e, "f", 10, 10, "jne 0x16"),
        (0x1f, "f", 1, 1, "jmp 0x10"),
        (0x20, "f", 1, 1, "retl")])
    site = _site(table, "f")
    assert site["kind"] == kind
    assert (site["attempts"], site["iterations"], site["retries"]) == (2, 10, 1)
    assert site["cycles"] == 10 + 30 + 10 + 1 + 200 + 2
    spun = spins.spin_by_symbol(table).loc["f", "spin_cycles"]
    assert spun == (site["cycles"] if kind == "lock" else 0)


def test_a_wait_that_starts_over_is_not_a_spin():
    """A pause loop whose jmp goes back further than its attempt (do_get_write_access's wait
    for the shadow list, back to lock_buffer) or to no locked instruction, and cpu_relax
    before a ret: waits, their cycles the loop's own rows."""
    table = _table([
        (0x10, "g", 1, 100, "lock btsl $0x13, (%ebx)"),
        (0x14, "g", 1, 2, "jae 0x18"),
        (0x16, "g", 1, 500, "movl (%esi), %eax"),
        (0x18, "g", 1, 1, "lock btrl $0x13, (%ebx)"),
        (0x1c, "g", 4, 4, "pause"),
        (0x1e, "g", 4, 8, "cmpl $4, (%esi)"),
        (0x21, "g", 4, 4, "je 0x1c"),
        (0x23, "g", 1, 1, "jmp 0x10"),
        (0x30, "h", 3, 3, "pause"),
        (0x32, "h", 3, 3, "retl")])
    sites = spins.spin_sites(table).set_index("symbol")
    assert sites.loc["g", "kind"] == "wait" and sites.loc["g", "cycles"] == 4 + 8 + 4 + 1
    assert sites.loc["h", "kind"] == "wait" and sites.loc["h", "attempt"] == ""
    assert spins.spin_by_symbol(table)["spin_cycles"].sum() == 0


def test_the_mails_rest_split_by_hand():
    """From the listings: _spin_lock 81,069 before, not in the top five after (at most the
    fifth's 38,886); journal_add_journal_head 75,523 -> 38,886; journal_dirty_metadata not
    in the first (at most its fifth's 52,634) -> 52,550. The rest: each listing's total
    (its rounding's interval) less the copy's samples (281,538 and 120,717)."""
    df = restsplit.mail_split().set_index("symbol")
    assert tuple(df.loc["_spin_lock", ["fall_lo", "fall_hi"]]) == (81069 - 38886, 81069)
    assert tuple(df.loc["journal_add_journal_head", ["fall_lo", "fall_hi"]]) == (36637,) * 2
    assert tuple(df.loc["do_get_write_access", ["fall_lo", "fall_hi"]]) == (-2281,) * 2
    assert tuple(df.loc["journal_put_journal_head", ["fall_lo", "fall_hi"]]) == (-3454,) * 2
    assert tuple(df.loc["journal_dirty_metadata", ["fall_lo", "fall_hi"]]) == (-52550, 84)
    rest = df.loc["rest"]
    # 281,538 / 15.2083% and 120,717 / 8.3454%, to within the rounding of the percentages
    assert abs(rest["before_lo"] - (281538 / 0.152083 - 281538)) < 10
    assert abs(rest["after_hi"] - (120717 / 0.083454 - 120717)) < 10
    listed_lo = (81069 - 38886) + 36637 - 2281 - 3454 - 52550
    listed_hi = 81069 + 36637 - 2281 - 3454 + 84
    others = df.loc[restsplit.OTHERS]
    assert others["fall_lo"] == pytest.approx(rest["fall_lo"] - listed_hi)
    assert others["fall_hi"] == pytest.approx(rest["fall_hi"] - listed_lo)


def test_the_models_rest_split_adds_up_to_the_rest_by_hand():
    """A paced profile of 10 writes on one CPU: the copy's 30,000 cycles, _spin_lock's 366
    (a spin of 5 + 50 + 5 + 1 and one retry at (300 + 3) / 3: 162), journal_stop's 9,634,
    and the commit's once-a-commit 44,568 cycles, of which 10 / 44,568 fall to the run."""
    from emu.papers import yoshioka2005 as y
    table = _table([
        (0x10, "__copy_from_user_ll", 1, 30_000, "rep movsl (%esi), %es:(%edi)"),
        (0x20, "_spin_lock", 3, 300, "lock decb (%eax)"),
        (0x22, "_spin_lock", 3, 3, "jns 0x2a"),
        (0x24, "_spin_lock", 5, 5, "pause"),
        (0x26, "_spin_lock", 5, 50, "cmpb $0, (%eax)"),
        (0x28, "_spin_lock", 5, 5, "jle 0x24"),
        (0x29, "_spin_lock", 1, 1, "jmp 0x20"),
        (0x2a, "_spin_lock", 2, 2, "retl"),
        (0x40, "journal_stop", 1, 9634, "movl (%eax), %eax")])

    class Sampled:
        run = None

        def __init__(self):
            self.table = table

        def by_symbol(self):
            df = table.groupby("symbol")[["samples", "cycles"]].sum().reset_index()
            return df

    assert y.commit_writes() == 44_568
    p = y.WriteProfile("2.6.12", 1, 10, {"cycles": Sampled()}, None, period=1000,
                       once={"cycles": 44_568.0})
    df = restsplit.model_split({"original": p, "optimized": p}).set_index("symbol")
    assert df.loc["_spin_lock", "before"] == pytest.approx(36.6)
    assert df.loc["_spin_lock", "spin_before"] == pytest.approx(16.2)
    assert df.loc["_spin_lock", "spin_pct_before"] == pytest.approx(100 * 162 / 366)
    assert df.loc["journal_add_journal_head", "before"] == 0
    assert df.loc["once a commit", "before"] == pytest.approx(1.0)
    assert df.loc[restsplit.OTHERS, "before"] == pytest.approx(963.4)
    assert df.loc["rest", "before"] == pytest.approx((366 + 9634 + 10) / 10)
    assert df.loc["rest", "spin_before"] == pytest.approx(16.2)
    assert (df["fall"] == 0).all()
    split = restsplit.split_summary({"original": p, "optimized": p})
    assert split["model_spin_before"] == pytest.approx(100 * 16.2 / 1001.0)
    # a CONFIG_PREEMPT build's lock loops are not the shape spins reads: not read, not 0
    p.facts["preempt"] = 1
    split = restsplit.split_summary({"original": p, "optimized": p})
    assert split["model_spin_before"] is split["model_spin_lock_spin_after"] is None
    assert "not read" in y.rest_cycles_reason(type("Row", (), {"model": 100.0}), split)
