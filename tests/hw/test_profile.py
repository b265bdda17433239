"""emu.hw.profile and emu/hw/profiles/*.toml: every profile loads, every number has its source."""

import dataclasses
import tomllib

import pytest
from unicorn import arm_const, ppc_const, x86_const

from emu.hw import cost, profile
from emu.isa.assemble import assemble
from emu.hw.cache import CacheLevel
from emu.run.machine import Machine

NAMES = profile.names()
ISAS = {"ppc32", "ppc64", "arm", "x86"}
CONST_MODULES = {"ppc32": ppc_const, "ppc64": ppc_const, "arm": arm_const, "x86": x86_const}


def raw(name):
    with open(profile.FOLDER / f"{name}.toml", "rb") as f:
        return tomllib.load(f)


def tables(node, path="(top level)"):
    """Every table of a parsed TOML document, with a readable path."""
    yield path, node
    for key, value in node.items():
        if isinstance(value, dict):
            yield from tables(value, f"[{key}]" if path == "(top level)" else
                              f"{path[:-1]}.{key}]")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    yield from tables(item, f"[[{key}]] #{i + 1}")


def holds_a_number(table):
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in table.values())


def test_the_seven_profiles_are_there():
    assert NAMES == ["cortex-a9", "pentium4", "power4", "ppc405gp", "ppc603e", "ppc604",
                     "ppc750"]


@pytest.mark.parametrize("name", NAMES)
def test_profile_loads(name):
    p = profile.load(name)
    assert p.name == name                              # name matches the file stem
    assert p.isa in ISAS
    assert p.raw == raw(name)
    assert p.memory_latency > 0 and p.clock_mhz > 0
    assert {"L1I", "L1D"} <= {lv.name for lv in p.caches}


@pytest.mark.parametrize("name", NAMES)
def test_every_table_holding_a_number_has_a_source(name):
    checked = 0
    for path, table in tables(raw(name)):
        if holds_a_number(table):
            source = table.get("source")
            assert isinstance(source, str) and source.strip(), f"{name} {path}: no source"
            checked += 1
    assert checked >= 5          # top level, caches, memory, costs, costs.mnemonics at least


@pytest.mark.parametrize("name", NAMES)
def test_unverified_names_are_keys_of_their_table(name):
    for path, table in tables(raw(name)):
        unverified = table.get("unverified", [])
        assert isinstance(unverified, list), f"{name} {path}"
        for key in unverified:
            assert key in table and key not in ("source", "unverified"), \
                f"{name} {path}: unverified {key!r} is not a key of the table"


@pytest.mark.parametrize("name", NAMES)
def test_cache_levels_are_possible_and_ordered(name):
    p = profile.load(name)
    for level in p.caches:
        assert isinstance(level, CacheLevel) and level.check() is level
    order = ["L1I", "L1D", "L2", "L3"]
    names = [lv.name for lv in p.caches]
    assert names == sorted(names, key=order.index)      # listed from the core outwards
    # hit latencies are load-to-use totals: they grow outwards, and memory is slowest
    data_side = [lv.hit_latency for lv in p.caches if lv.name != "L1I"]
    assert data_side == sorted(data_side) and len(set(data_side)) == len(data_side)
    assert p.memory_latency > data_side[-1]


@pytest.mark.parametrize("name", NAMES)
def test_costs_have_every_class(name):
    costs = profile.load(name).costs
    for cls in ("default", "load", "store", "branch", "multiply", "divide"):
        assert isinstance(costs[cls], int) and costs[cls] >= 1, f"{name} costs.{cls}"
    for key, value in costs.get("mnemonics", {}).items():
        if key not in ("source", "unverified", "ranges"):
            assert key == key.lower() and isinstance(value, int) and value >= 1, (name, key)


@pytest.mark.parametrize("name", NAMES)
def test_unicorn_cpu_exists(name):
    p = profile.load(name)
    if p.unicorn_cpu != "default":
        assert hasattr(CONST_MODULES[p.isa], p.unicorn_cpu), p.unicorn_cpu
        assert p.unicorn_cpu.startswith("UC_CPU_")


@pytest.mark.parametrize("name", NAMES)
def test_machine_builds_for_every_profile(name):
    m = Machine(name, ram_size=2 << 20)
    assert m.isa == profile.load(name).isa
    assert [lv.name for lv in m.model.levels] == [lv.name for lv in m.profile.caches]


def test_x86_is_the_only_coherent_icache():
    assert {n for n in NAMES if profile.load(n).coherent_icache} == {"pentium4"}


def test_specific_values_are_read_exactly():
    p = profile.load("ppc750")
    assert p.cache("L1D") == CacheLevel("L1D", 32768, 8, 32, "plru", "back", True, 2)
    assert p.cache("L2") == CacheLevel("L2", 1048576, 2, 128, "lru", "back", True, 15)
    assert p.memory_latency == 80 and p.costs["divide"] == 19
    assert p.costs["mnemonics"]["dcbst"] == 5
    p4 = profile.load("pentium4")
    assert p4.cache("L1D").write_policy == "through" and not p4.cache("L1D").write_allocate
    assert p4.write_combining["buffers"] == 6 and p4.write_combining["line"] == 64


def test_missing_profile_lists_the_known_ones():
    with pytest.raises(ValueError, match="no processor profile 'ppc970'; known: cortex-a9"):
        profile.load("ppc970")


def test_load_by_path_and_missing_key(tmp_path):
    path = tmp_path / "mini.toml"
    path.write_text('name = "mini"\nisa = "ppc32"\n[memory]\nlatency = 10\nsource = "x"\n'
                    '[[caches]]\nname = "L1D"\nsize = 1024\nways = 2\nline = 32\n'
                    'source = "x"\n')
    p = profile.load(str(path))
    assert p.caches == [CacheLevel("L1D", 1024, 2, 32)]        # defaults: lru, back, ...
    assert p.unicorn_cpu == "default" and p.title == "mini"
    path.write_text('name = "broken"\nisa = "ppc32"\n')
    with pytest.raises(ValueError, match="lacks the key 'memory'"):
        profile.load(str(path))
    path.write_text('name = "bad"\nisa = "ppc32"\n[memory]\nlatency = 1\n'
                    '[[caches]]\nname = "L1D"\nsize = 1000\nways = 2\nline = 32\n')
    with pytest.raises(ValueError, match="size 1000 is not a multiple"):
        profile.load(str(path))


def test_cache_spec_overrides_geometry_and_keeps_the_rest():
    p = profile.load("ppc750")
    q = p.with_cache("l1d:0x4000:4:32")
    assert q.cache("L1D") == CacheLevel("L1D", 16384, 4, 32, "plru", "back", True, 2)
    assert p.cache("L1D").size == 32768                        # the original is unchanged
    r = p.with_cache("L3:4194304:8:128:random")                 # a new level is added
    assert [lv.name for lv in r.caches] == ["L1I", "L1D", "L2", "L3"]
    assert r.cache("L3") == CacheLevel("L3", 4194304, 8, 128, "random")
    with pytest.raises(ValueError, match="policy must be one of"):
        p.with_cache("L1D:1024:2:32:mru")
    with pytest.raises(ValueError, match="must be numbers"):
        p.with_cache("L1D:big:2:32")
    with pytest.raises(KeyError, match="no cache level L3"):
        p.cache("L3")



# ------------------------------------------- [costs.mnemonics] keys reach real instructions

# One instruction per key of any profile's [costs.mnemonics], in GNU syntax.
SAMPLES = {
    "dcbf": "dcbf 0, 3", "dcbi": "dcbi 0, 3", "dcbst": "dcbst 0, 3", "dcbt": "dcbt 0, 3",
    "dcbtst": "dcbtst 0, 3", "dcbz": "dcbz 0, 3", "dcba": "dcba 0, 3", "dccci": "dccci 0, 3",
    "icbi": "icbi 0, 3", "iccci": "iccci 0, 3", "sync": "sync", "lwsync": "lwsync",
    "ptesync": "ptesync", "eieio": "eieio", "isync": "isync", "tlbie": "tlbie 3",
    "tlbsync": "tlbsync", "tlbia": "tlbia", "tlbld": "tlbld 3", "tlbli": "tlbli 3",
    "tlbsx": "tlbsx 3, 0, 4", "tlbwe": "tlbwe 3, 4, 0", "tlbre": "tlbre 3, 4, 0",
    "mtmsr": "mtmsr 3", "mtmsrd": "mtmsrd 3", "mfspr": "mfspr 3, 272",
    "mtspr": "mtspr 272, 3", "rfi": "rfi", "rfid": "rfid", "mullw": "mullw 3, 3, 4",
    "mulhw": "mulhw 3, 3, 4", "mulhwu": "mulhwu 3, 3, 4", "divw": "divw 3, 3, 4",
    "divwu": "divwu 3, 3, 4",
    "dccmvac": "mcr p15, 0, r0, c7, c10, 1", "dccimvac": "mcr p15, 0, r0, c7, c14, 1",
    "dcimvac": "mcr p15, 0, r0, c7, c6, 1", "dccmvau": "mcr p15, 0, r0, c7, c11, 1",
    "icimvau": "mcr p15, 0, r0, c7, c5, 1", "iciallu": "mcr p15, 0, r0, c7, c5, 0",
    "icialluis": "mcr p15, 0, r0, c7, c1, 0", "bpiall": "mcr p15, 0, r0, c7, c5, 6",
    "bpiallis": "mcr p15, 0, r0, c7, c1, 6", "tlbimva": "mcr p15, 0, r0, c8, c7, 1",
    "tlbimvais": "mcr p15, 0, r0, c8, c3, 1", "tlbiasid": "mcr p15, 0, r0, c8, c7, 2",
    "tlbiasidis": "mcr p15, 0, r0, c8, c3, 2", "tlbiall": "mcr p15, 0, r0, c8, c7, 0",
    "tlbiallis": "mcr p15, 0, r0, c8, c3, 0",
    "dmb": "dmb", "dsb": "dsb", "isb": "isb", "ldrex": "ldrex r0, [r1]",
    "strex": "strex r0, r1, [r2]", "pld": "pld [r0]",
    "sfence": "sfence", "lfence": "lfence", "mfence": "mfence", "clflush": "clflush (%eax)",
    "prefetchnta": "prefetchnta (%eax)", "prefetcht0": "prefetcht0 (%eax)",
    "movntq": "movntq %mm0, (%eax)", "movnti": "movnti %eax, (%ebx)",
    "movntdq": "movntdq %xmm0, (%eax)", "emms": "emms", "lock": "lock incl (%eax)",
    "rep_movsl": "rep movsl", "fxsave": "fxsave (%eax)", "fxrstor": "fxrstor (%eax)",
    "invlpg": "invlpg (%eax)",
}
def cost_cases():
    for name in NAMES:
        for key in profile.load(name).costs.get("mnemonics", {}):
            if key in ("source", "unverified", "ranges"):
                continue
            yield pytest.param(name, key, id=f"{name}-{key}")


def charged(p, text):
    """Base cycles the cost model charges for one instruction, as Machine.load does."""
    program = assemble(text + "\n", p.isa)
    t = cost.tables(p.isa, p.costs, program.code, 0)
    starts, cycles = t.starts, t.cycles
    assert int(starts.sum()) == 1
    return int(cycles.sum())


def test_every_cost_mnemonic_has_a_sample():
    keys = {k for n in NAMES for k in profile.load(n).costs.get("mnemonics", {})}
    assert keys - {"source", "unverified", "ranges"} <= set(SAMPLES)


@pytest.mark.parametrize("name, key", list(cost_cases()))
def test_cost_mnemonic_is_charged(name, key):
    p = profile.load(name)
    # a value no class has, so that a class cost cannot pass for the mnemonic's by chance
    costs = {**p.costs, "mnemonics": {**p.costs["mnemonics"], key: 997}}
    p = dataclasses.replace(p, costs=costs)
    if key == "lock":
        # "extra cost of a locked RMW": on top of the instruction's own cost (incl: 1)
        assert charged(p, SAMPLES[key]) == 997 + 1
    else:
        assert charged(p, SAMPLES[key]) == 997


def test_extended_spr_moves_cost_like_mtspr_mfspr():
    p750, p4 = profile.load("ppc750"), profile.load("power4")
    assert charged(p750, "mtctr 3") == p750.costs["mnemonics"]["mtspr"] == 2
    assert charged(p750, "mflr 3") == p750.costs["mnemonics"]["mfspr"] == 2
    assert charged(p4, "mtlr 3") == p4.costs["mnemonics"]["mtspr"] == 3


def test_a_section_as_a_table_marks_its_estimates():
    from emu.hw.profile import section_table

    t = section_table("power4", "l2_store_queues")
    assert list(t["parameter"]) == ["slices", "entries", "service"]
    assert list(t["value"]) == [3, 4, 12]
    assert list(t["estimate"]) == [False, True, True]          # entries, service: estimates
    assert t.attrs["source"].startswith("Mackerras 2003 section 3.1")
    with pytest.raises(ValueError, match=r"no table \[nothing\]"):
        section_table("power4", "nothing")
