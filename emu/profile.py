"""Processor profiles: the TOML files in ``emu/profiles/``, every number with its source."""
from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import cache as _cache
from . import memory as _memory
from .memory import MemorySystem
from . import topology as _topology
from .topology import Topology
from .cache import CacheLevel, REPLACEMENT

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
    memory: MemorySystem = field(default_factory=MemorySystem)  # emu.memory's tables
    topology: Topology = field(default_factory=Topology)          # emu.topology's table

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


def parse_cache_spec(spec, base=None):
    """'LEVEL:SIZE:WAYS:LINE[:POLICY]' -> CacheLevel; other settings from the base profile."""
    parts = spec.split(":")
    if len(parts) not in (4, 5):
        raise ValueError(f"cache spec {spec!r} is not LEVEL:SIZE:WAYS:LINE[:POLICY]")
    name = parts[0].upper()
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


def load(name):
    """Load a profile by name (``ppc750``) or by path to a TOML file."""
    path = Path(name)
    if not path.suffix:
        path = FOLDER / f"{name}.toml"
    if not path.exists():
        raise ValueError(f"no processor profile {name!r}; known: {', '.join(names())}")
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    try:
        caches = [CacheLevel(c["name"], c["size"], c["ways"], c["line"],
                             c.get("replacement", "lru"), c.get("write_policy", "back"),
                             bool(c.get("write_allocate", True)),
                             c.get("hit_latency", 1)).check()
                  for c in raw.get("caches", [])]
        alignment = _numbers(raw.get("alignment", {}))
        queues = _numbers(raw.get("l2_store_queues", {}))
        try:
            _cache._set_alignment(np.zeros(_cache.HEADER, np.int64), alignment)
            _cache._check_store_queues(queues, caches)
            memory = _memory.check(raw, caches)
            topology = _topology.check(raw.get("topology"), [c.name for c in caches])
        except ValueError as e:
            raise ValueError(f"profile {path.name}: {e}") from None
        return Profile(raw["name"], raw.get("title", raw["name"]), raw["isa"],
                       raw.get("unicorn_cpu", "default"), raw.get("clock_mhz", 0), caches,
                       raw["memory"]["latency"], raw.get("costs", {}), raw.get("tlb", {}),
                       raw.get("write_combining", {}), raw.get("outer_cache", {}), raw,
                       alignment, queues, memory, topology)
    except KeyError as e:
        raise ValueError(f"profile {path.name} lacks the key {e}") from None


def _numbers(table):
    """A table's settings without its provenance keys (source, unverified)."""
    return {k: v for k, v in table.items() if k not in ("source", "unverified")}
