"""The report's board and the kernels Table 1 compares: the four patches applied one on top of
the other, the four LMBench benchmarks, and the copies at once (1-4) on the four-core board."""
from __future__ import annotations


PATCHES = ("PK1", "PK2", "PK3", "PK4")


#: the kernels of Table 1: each patch on top of the ones before it
KERNELS = {"stock": frozenset(), "PK1": frozenset({"PK1"}),
           "PK2": frozenset({"PK1", "PK2"}), "PK3": frozenset({"PK1", "PK2", "PK3"}),
           "PK4": frozenset(PATCHES)}


BENCHMARKS = ("fork", "exec", "shell", "pagefault")


CORES = (1, 2, 3, 4)


#: the report's board: every run is on its four cores, ``cores`` the copies at once (-P), so
#: that one copy runs an SMP kernel, its locks taken uncontended, as -P 1 did on the board
BOARD_CORES = 4


#: LMBench's program for each benchmark column of Table 1
PROGRAMS = {"fork": "lat_proc fork", "exec": "lat_proc exec", "shell": "lat_proc shell",
            "pagefault": "lat_pagefault"}

