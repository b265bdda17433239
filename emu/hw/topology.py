"""How a machine's cores sit on chips and modules, and what that does to the caches (a
profile's ``[topology]`` table; without it every core shares every level below its L1s).

* ``cores_per_chip`` cores share a chip; the levels named in ``chip_levels`` (POWER4: its
  L2) are the chip's own, one copy per chip; the levels below them stay the machine's.
* ``chips_per_module`` chips share a module (POWER4's MCM of four chips).
* A miss in a chip's own level that another chip's copy can supply is an *intervention*:
  the line comes from that chip, not from below, and costs ``on_module`` cycles when that
  chip is on the same module, ``off_module`` when it is on another. A read leaves the other
  copy in place (written back first if dirty); a write takes it away (written back first
  if dirty), as does a store that hits the chip's own copy while others hold one.
  Maintenance by address (dcbst, dcbf, dcbz...) reaches every chip's copy: PowerPC
  broadcasts it. Runs count ``interventions``.

The model of C (emu/hw/model/cache.c: ``peer_chips``) needs the layout built here
(``emu.hw.cache.Layout``): every chip's copy of a chip level records its chip and the index of
chip 0's copy, its group.
"""
from __future__ import annotations

from dataclasses import dataclass

KEYS = ("cores_per_chip", "chips_per_module", "chip_levels", "on_module", "off_module")


@dataclass(frozen=True)
class Topology:
    cores_per_chip: int = 32           # default: one chip holds every core
    chips_per_module: int = 1
    chip_levels: tuple = ()
    on_module: int = 0                 # cycles of an intervention from a chip on the module
    off_module: int = 0                # ... from a chip on another module

    def chip(self, core):
        return core // self.cores_per_chip

    def chips(self, cores):
        return -(-cores // self.cores_per_chip)


def check(table, level_names=()):
    """A Topology from a profile's ``[topology]`` table (None or empty: the default),
    refusing what the model cannot run, saying why."""
    given = {k: v for k, v in dict(table or {}).items() if k not in ("source", "unverified", "ranges")}
    if not given:
        return Topology()
    unknown = set(given) - set(KEYS)
    if unknown:
        raise ValueError(f"[topology]: unknown key(s) {', '.join(sorted(unknown))} (known: "
                         f"{', '.join(KEYS)})")
    for key in ("cores_per_chip", "chips_per_module"):
        value = given.get(key, 1)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"[topology] {key} must be a whole number of at least 1, not "
                             f"{value!r}")
    levels = tuple(given.get("chip_levels", ()))
    for name in levels:
        if name not in ("L2", "L3") or name not in level_names:
            raise ValueError(f"[topology] chip_levels: {name!r} is not an L2 or L3 of this "
                             f"profile (it has {', '.join(level_names)})")
    if levels:
        for key in ("on_module", "off_module"):
            value = given.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"[topology] {key} (the cycles of an intervention) must be a "
                                 f"whole number >= 0 when there are chip levels, not {value!r}")
    return Topology(given.get("cores_per_chip", 1), given.get("chips_per_module", 1), levels,
                    given.get("on_module", 0), given.get("off_module", 0))
