"""Processor profiles: the TOML files in ``emu/hw/profiles/``, every number with its source."""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import cache as _cache
from . import estimates as _estimates
from . import memory as _memory
from .memory import MemorySystem
from . import topology as _topology
from .topology import Topology
from .cache import CacheLevel, REPLACEMENT
from .cost import DISPATCH_UNITS

FOLDER = Path(__file__).with_name("profiles")


@dataclass
class Profile:
    name: str
    title: str
    isa: str
    unicorn_cpu: str
    clock_mhz: float
    caches: list
    memory_latency: int
    costs: dict
    tlb: dict = field(default_factory=dict)
    write_combining: dict = field(default_factory=dict)
    outer_cache: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)
    alignment: dict = field(default_factory=dict)        # [alignment] without source keys
    l2_store_queues: dict = field(default_factory=dict)  # [l2_store_queues], likewise
    memory: MemorySystem = field(default_factory=MemorySystem)  # emu.hw.memory's tables
    topology: Topology = field(default_factory=Topology)          # emu.hw.topology's table

    @property
    def system_memory(self):
        """The RAM of the machine the paper measured this processor in (``[system]``
        memory_mb, in bytes), or None."""
        mb = self.raw.get("system", {}).get("memory_mb")
        return None if mb is None else int(mb) << 20

    @property
    def coherent_icache(self):
        """x86 keeps instruction fetch coherent with stores in hardware."""
        return self.isa == "x86"

    def cache(self, name):
        for level in self.caches:
            if level.name == name:
                return level
        raise KeyError(f"profile {self.name} has no cache level {name}")

    def with_cache(self, spec):
        """A copy with one level replaced or added: 'L1D:32768:8:32[:policy]'."""
        level = parse_cache_spec(spec, self)
        caches = [lv for lv in self.caches if lv.name != level.name] + [level]
        order = ("L1I", "L1D", "L2", "L3")
        caches.sort(key=lambda lv: order.index(lv.name))
        return dataclasses.replace(self, caches=caches)


def names():
    return sorted(p.stem for p in FOLDER.glob("*.toml"))


def section_table(name, section):
    """One table of a profile (``alignment``, ``l2_store_queues``...) for reading: a row per
    parameter with its value and whether it is an estimate (named in the table's
    ``unverified`` list); the table's source in ``.attrs["source"]``."""
    import pandas as pd

    table = load(name).raw.get(section)
    if not isinstance(table, dict):
        raise ValueError(f"profile {name!r} has no table [{section}]")
    unverified = set(table.get("unverified", ()))
    rows = [{"parameter": key, "value": value, "estimate": key in unverified}
            for key, value in table.items() if key not in ("source", "unverified", "ranges")]
    frame = pd.DataFrame(rows, columns=["parameter", "value", "estimate"])
    frame.attrs["source"] = table.get("source", "")
    return frame


def parse_cache_spec(spec, base=None):
    """'LEVEL:SIZE:WAYS:LINE[:POLICY]' -> CacheLevel; other settings from the base profile."""
    parts = spec.split(":")
    if len(parts) not in (4, 5):
        raise ValueError(f"cache spec {spec!r} is not LEVEL:SIZE:WAYS:LINE[:POLICY]")
    name = parts[0].upper()
    if name not in ("L1I", "L1D", "L2", "L3"):
        raise ValueError(f"cache spec {spec!r}: the level must be L1I, L1D, L2 or L3 (a "
                         "profile's TLBs are set in its [tlb] table)")
    try:
        size, ways, line = (int(p, 0) for p in parts[1:4])
    except ValueError:
        raise ValueError(f"cache spec {spec!r}: size, ways and line must be numbers") from None
    policy = parts[4].lower() if len(parts) == 5 else None
    if policy is not None and policy not in REPLACEMENT:
        raise ValueError(f"cache spec {spec!r}: policy must be one of {', '.join(REPLACEMENT)}")
    template = None
    if base is not None:
        template = next((lv for lv in base.caches if lv.name == name), None)
    if template is None:
        template = CacheLevel(name, size, ways, line)
    return dataclasses.replace(template, size=size, ways=ways, line=line,
                               replacement=policy or template.replacement).check()


_PARSED = {}          # path -> (its stat, its TOML): every Machine loads its profile


def _parsed(path):
    """The TOML of ``path``, parsed once per version of the file (a fresh copy each time:
    the caller's estimates change it)."""
    info = path.stat()
    stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
    kept = _PARSED.get(path)
    if kept is None or kept[0] != stamp:
        with open(path, "rb") as f:
            kept = _PARSED[path] = (stamp, tomllib.load(f))
    return copy.deepcopy(kept[1])


def load(name):
    """Load a profile by name (``ppc750``) or by path to a TOML file."""
    path = Path(name)
    if not path.suffix:
        path = FOLDER / f"{name}.toml"
    if not path.exists():
        raise ValueError(f"no processor profile {name!r}; known: {', '.join(names())}")
    try:
        raw = _parsed(path)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"profile {path}: not a readable TOML file ({e})") from None
    try:
        try:
            raw = _estimates.apply_to_profile(raw)      # moved estimates (emu.hw.estimates)
            check_schema(raw)
            caches = [CacheLevel(c["name"], c["size"], c["ways"], c["line"],
                                 c.get("replacement", "lru"), c.get("write_policy", "back"),
                                 c.get("write_allocate", True),
                                 c.get("hit_latency", 1)).check()
                      for c in raw.get("caches", [])]
            alignment = _numbers(raw.get("alignment", {}))
            queues = _numbers(raw.get("l2_store_queues", {}))
            _cache._set_alignment(np.zeros(_cache.HEADER, np.int64), alignment)
            _cache._check_store_queues(queues, caches)
            memory = _memory.check(raw, caches)
            topology = _topology.check(raw.get("topology"), [c.name for c in caches])
        except ValueError as e:
            raise ValueError(f"profile {path.name}: {e}") from None
        return Profile(raw["name"], raw.get("title", raw["name"]), raw["isa"],
                       raw.get("unicorn_cpu", "default"), raw.get("clock_mhz", 0), caches,
                       raw["memory"]["latency"], _estimates.watched_costs(raw), raw.get("tlb", {}),
                       raw.get("write_combining", {}), raw.get("outer_cache", {}), raw,
                       alignment, queues, memory, topology)
    except KeyError as e:
        raise ValueError(f"profile {path.name} lacks the key {e}") from None



def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    raise ValueError(f"a profile value must be a number or true/false, not {value!r}")


def _set_value(lines, table, key, value, profile):
    """Set ``key`` of ``[table]`` in a profile's lines, keeping the line's comment."""
    import re
    header = f"[{table}]"
    starts = [i for i, line in enumerate(lines) if line.strip() == header]
    if not starts:
        raise ValueError(f"profile {profile} has no table {header}")
    setting = re.compile(rf"^(\s*{re.escape(key)}\s*=\s*)([^#]*?)(\s*(#.*)?)$")
    for i in range(starts[0] + 1, len(lines)):
        if lines[i].lstrip().startswith("["):             # the next table: not found
            break
        found = setting.match(lines[i])
        if found:
            lines[i] = found[1] + _toml_value(value) + found[3]
            return
    raise ValueError(f"table {header} of profile {profile} has no key {key!r}")


_variants = None          # the process's folder of profile variants, removed at its exit


def _variant_folder():
    global _variants
    if _variants is None:
        _variants = tempfile.TemporaryDirectory(prefix="emu-profiles-")
    return Path(_variants.name)


def variant(name, changes, folder=None):
    """A copy of the profile ``name`` with some of its values changed: the path of the new
    TOML file (in ``folder``, or a temporary folder removed when the process ends), which
    ``Machine``, ``copybench`` and the kernel workloads take wherever they take a profile's name. ``changes`` maps
    ``"table.key"`` to the new value, e.g. ``{"l2_store_queues.entries": 6}`` or
    ``{"costs.mnemonics.lock": 50}``. Everything else, comments and sources included, is the
    original's; the copy is checked as any profile is (``load``). The same changes give
    the same path (the file is named by its contents), so runs kept under it are reused."""
    source = load(name)                           # a bad name is refused here
    if not isinstance(changes, dict) or not changes:
        raise ValueError("changes: give a dict of 'table.key': value, e.g. "
                         "{'l2_store_queues.entries': 6}")
    path = Path(name) if Path(name).suffix else FOLDER / f"{name}.toml"
    lines = path.read_text(encoding="utf-8").split("\n")
    for dotted, value in changes.items():
        table, _, key = str(dotted).rpartition(".")
        if not table:
            raise ValueError(f"{dotted!r}: name the table and the key, e.g. 'memory.latency'")
        _set_value(lines, table, key, value, source.name)
    folder = Path(folder) if folder is not None else _variant_folder()
    folder.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines)
    # named by its contents: the same changes give the same path, so that a run kept under
    # it (emu.run.reuse: a unit's key holds its arguments) is reused, not run again
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    target = folder / f"{source.name}-variant-{digest}.toml"
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return target
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        written = Path(scratch) / target.name
        written.write_text(text, encoding="utf-8")
        load(written)                             # a value the model cannot take is refused
        os.replace(written, target)               # whole, even with another process at it
    return target

ISAS = ("ppc32", "ppc64", "arm", "x86")
# the largest cycle count a profile may give one event: no latency of a modelled machine comes
# near it, and the model's 64-bit counters cannot wrap from it (an int64 latency wrapped)
MAX_CYCLES = 1 << 24
TLB_COUNTS = ("itlb_entries", "itlb_ways", "dtlb_entries", "dtlb_ways", "entries", "ways",
              "main_entries", "main_ways", "ierat_entries", "ierat_ways", "derat_entries",
              "derat_ways", "slb_entries", "page_size", "ibat", "dbat")
TLB_CYCLES = ("walk_cycles", "erat_miss_cycles", "micro_miss_cycles")


def check_schema(raw):
    """Refuse values of a profile's raw tables that the model would misread: cycles that
    are negative, fractional or huge (negative latencies gave negative cycles, a 2**63
    latency wrapped), a flag that is not true or false (the string "no" was read as true),
    an unknown ISA or Unicorn CPU model. Names the table and key."""
    def cycles(where, value):
        if isinstance(value, bool) or not isinstance(value, int) or \
                not 0 <= value <= MAX_CYCLES:
            raise ValueError(f"{where} = {value!r}: give a whole number of cycles from 0 "
                             f"to {MAX_CYCLES:,}")

    def flag(where, value):
        if not isinstance(value, bool):
            raise ValueError(f"{where} = {value!r}: give true or false")
    for key in ("name", "isa", "memory"):
        if key not in raw:
            raise KeyError(key)                  # "lacks the key"
    for key in ("name", "isa"):
        if not isinstance(raw.get(key), str):
            raise ValueError(f"{key} = {raw.get(key)!r}: give it as text")
    if raw["isa"] not in ISAS:
        raise ValueError(f"isa = {raw['isa']!r}: give one of {', '.join(ISAS)}")
    cpu = raw.get("unicorn_cpu", "default")
    if cpu != "default":
        from unicorn import arm_const, ppc_const, x86_const
        module = {"ppc32": ppc_const, "ppc64": ppc_const, "arm": arm_const,
                  "x86": x86_const}[raw["isa"]]
        prefix = {"ppc32": "UC_CPU_PPC32_", "ppc64": "UC_CPU_PPC64_", "arm": "UC_CPU_ARM_",
                  "x86": "UC_CPU_X86_"}[raw["isa"]]
        if not isinstance(cpu, str) or not cpu.startswith(prefix) or \
                not isinstance(getattr(module, cpu, None), int):
            raise ValueError(f"unicorn_cpu = {cpu!r}: give 'default' or a Unicorn CPU model "
                             f"of the ISA ({prefix}...)")
    clock = raw.get("clock_mhz", 0)
    if isinstance(clock, bool) or not isinstance(clock, (int, float)) or not 0 <= clock < 1e6:
        raise ValueError(f"clock_mhz = {clock!r}: give a number of MHz")
    if not isinstance(raw.get("caches", []), list):
        raise ValueError("caches: give an array of [[caches]] tables")
    for c in raw.get("caches", []):
        if not isinstance(c, dict):
            raise ValueError("caches: give an array of [[caches]] tables")
        name = f"caches.{c.get('name', '?')}"
        if "hit_latency" in c:
            cycles(f"{name}.hit_latency", c["hit_latency"])
        if "write_allocate" in c:
            flag(f"{name}.write_allocate", c["write_allocate"])
    smp = raw.get("smp", {})
    if not isinstance(smp, dict):
        raise ValueError("smp: give a table")
    if "hashed_ties" in smp:
        flag("smp.hashed_ties", smp["hashed_ties"])
    memory = raw["memory"]
    if not isinstance(memory, dict):
        raise ValueError("memory: give a table")
    cycles("memory.latency", memory["latency"])
    costs = raw.get("costs", {})
    if not isinstance(costs, dict):
        raise ValueError("costs: give a table")
    for key, value in costs.items():
        if key in ("source", "unverified", "ranges"):
            continue
        if key == "mnemonics":
            if not isinstance(value, dict):
                raise ValueError("costs.mnemonics: give a table")
            for mnemonic, v in value.items():
                if mnemonic not in ("source", "unverified", "ranges"):
                    cycles(f"costs.mnemonics.{mnemonic}", v)
        elif key == "dispatch":
            _check_dispatch(value)
        else:
            cycles(f"costs.{key}", value)
    tlb = raw.get("tlb", {})
    if not isinstance(tlb, dict):
        raise ValueError("tlb: give a table")
    for key in TLB_COUNTS:
        if key in tlb and (isinstance(tlb[key], bool) or not isinstance(tlb[key], int) or
                           not 0 <= tlb[key] <= 1 << 30):
            raise ValueError(f"tlb.{key} = {tlb[key]!r}: give a whole number from 0")
    for key in TLB_CYCLES:
        if key in tlb:
            cycles(f"tlb.{key}", tlb[key])
    if "walk_through_l1" in tlb:
        flag("tlb.walk_through_l1", tlb["walk_through_l1"])
    outer = raw.get("outer_cache", {})
    for key in ("maintenance_in_time", "sync_waits_for_buffers"):
        if key in outer:
            flag(f"outer_cache.{key}", outer[key])


def _check_dispatch(table):
    """[costs.dispatch] (emu.hw.cost.dispatch_cycles): a whole width from 1 and a count from
    1 for each unit named."""
    if not isinstance(table, dict):
        raise ValueError("costs.dispatch: give a table")
    width = table.get("width")
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"costs.dispatch.width = {width!r}: give a whole number from 1")
    for unit in DISPATCH_UNITS:
        count = table.get(unit, 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"costs.dispatch.{unit} = {count!r}: give a whole number from 1")
    unknown = set(table) - set(DISPATCH_UNITS) - {"width", "source", "unverified", "ranges"}
    if unknown:
        raise ValueError(f"costs.dispatch: unknown keys {sorted(unknown)} (the units are "
                         f"{', '.join(DISPATCH_UNITS)})")


def _numbers(table):
    """A table's settings without its provenance keys (source, unverified)."""
    return {k: v for k, v in table.items() if k not in ("source", "unverified", "ranges")}
