"""emu.hw.profile.variant: a copy of a profile with some values changed, as the exercises ask."""
import pytest

from emu.hw import profile
from emu.kernel import copybench


def test_a_variant_changes_only_the_named_values(tmp_path):
    path = profile.variant("power4", {"l2_store_queues.entries": 6,
                                      "alignment.exception_cycles": 3}, folder=tmp_path)
    changed, original = profile.load(path), profile.load("power4")
    assert path.parent == tmp_path
    assert changed.l2_store_queues["entries"] == 6 and changed.alignment["exception_cycles"] == 3
    # the TLB's own 'entries' (a later table) and everything else stay the original's
    assert changed.tlb == original.tlb and changed.caches == original.caches
    assert changed.l2_store_queues["service"] == original.l2_store_queues["service"]
    assert changed.raw["l2_store_queues"]["source"] == original.raw["l2_store_queues"]["source"]


def test_a_dotted_table_and_comments_are_kept():
    path = profile.variant("pentium4", {"costs.mnemonics.lock": 50})
    line = next(l for l in path.read_text().split("\n") if l.startswith("lock ="))
    assert line.startswith("lock = 50 ") and "# extra cost of a locked RMW" in line
    assert profile.load(path).raw["costs"]["mnemonics"]["lock"] == 50


def test_the_same_changes_give_the_same_file_and_other_changes_another(tmp_path):
    # named by its contents, so that a run kept under its path is reused (the exercise and
    # its check each make the same variant)
    lock50 = profile.variant("pentium4", {"costs.mnemonics.lock": 50}, folder=tmp_path)
    text = lock50.read_text()
    assert profile.variant("pentium4", {"costs.mnemonics.lock": 50}, folder=tmp_path) == lock50
    assert lock50.read_text() == text
    lock60 = profile.variant("pentium4", {"costs.mnemonics.lock": 60}, folder=tmp_path)
    assert lock60 != lock50 and profile.load(lock60).raw["costs"]["mnemonics"]["lock"] == 60
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([lock50.name, lock60.name])


def test_the_model_runs_a_variant():
    # six entries of 12 cycles per slice keep up with the simple copy_page loop (4 stall)
    simple = "copy_page_simple"
    assert copybench.measure(simple, 4096).store_queue_stall_cycles > 0
    six = profile.variant("power4", {"l2_store_queues.entries": 6})
    assert copybench.measure(simple, 4096, profile=str(six)).store_queue_stall_cycles == 0


@pytest.mark.parametrize("changes, message", [
    ({"nope.x": 1}, r"profile ppc750 has no table \[nope\]"),
    ({"memory.nokey": 1}, r"table \[memory\] of profile ppc750 has no key 'nokey'"),
    ({"latency": 1}, "name the table and the key"),
    ({"memory.latency": -5}, "memory.latency = -5: give a whole number of cycles"),
    ({"memory.latency": "fast"}, "a number or true/false, not 'fast'"),
    ({}, "give a dict"),
])
def test_bad_changes_are_refused_naming_the_place(changes, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        profile.variant("ppc750", changes, folder=tmp_path)
    assert not list(tmp_path.glob("*.toml")), "a refused variant leaves no file"


def test_an_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="no processor profile 'ppc9000'"):
        profile.variant("ppc9000", {"memory.latency": 1})
