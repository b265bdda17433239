"""lat_pagefault on larger files: the report's was 400 MB, the model's 1 MB; what a fault
reads besides the user's page grows with the file."""
from __future__ import annotations

import pandas as pd

from ...kernel import workloads
from ...kernel.arm import STRUCT_PAGE
from ...kernel.armfault import NODE_BYTES
from ...run import sweep
from .board import BOARD_CORES, KERNELS, PATCHES
from .runs import _check


#: lat_pagefault's file sizes the chapter runs (MB): LMBench's smallest, then four times each
FILE_SIZES_MB = (1, 4, 16)


def pagefault_size(size_mb, kernel="stock", cores=1, l2=None):
    """lat_pagefault on a file of ``size_mb`` MB (the paper's was 400), ``cores`` copies, on
    one of KERNELS; ``l2``: another L2 for the what-if (a Machine cache spec such as
    "L2:131072:8:32"), None for the profile's. A dict: cycles a page and the cycles a page of
    each ledger row (the first copy's)."""
    _check("pagefault", kernel, cores)
    if size_mb < 1:
        raise ValueError(f"LMBench's lat_pagefault refuses a file under 1 MB, not {size_mb!r}")
    pages = size_mb << 8
    # the page frames: the kernel model's 4096 (16 MB) or, for a larger file, the file's
    # and 2048 more; the RAM: the model's 32 MB and the frames (and struct pages) beyond
    frames = max(4096, pages + 2048)
    options = {"frames": frames, "ram_size": (32 << 20) + (frames - 4096) * (4096 + 32)}
    if l2 is not None:
        options["caches"] = (l2,)
    result = workloads.lat_pagefault(pages=pages, profile="cortex-a9", cpus=BOARD_CORES,
                                     copies=cores, fixes=KERNELS[kernel], **options)
    first = getattr(result, "runs", [result])[0]
    rows = {name: int(c) / pages for name, c in first.breakdown["cycles"].items()}
    return {"MB": size_mb, "kernel": kernel, "cores": cores, "L2": l2 or "profile",
            "cycles": float(result.cycles_each), "rows": rows}


def metadata_bytes(size_mb):
    """What a fault reads of a file of ``size_mb`` MB besides the user's page, in bytes: its
    pages' struct pages, their Linux and hardware PTEs, and the radix tree's nodes (64 slots
    each), the lines a larger file spreads further than the L2 holds."""
    pages = size_mb << 8
    return pages * (STRUCT_PAGE + 2 * 4) + -(-pages // 64) * NODE_BYTES


def file_sizes(sizes=FILE_SIZES_MB, kernels=("stock", "PK1", "PK2"), cores=(1,), l2=(None,),
               executor=None):
    """``pagefault_size`` over sizes x kernels x cores x L2s (emu.run.sweep), as a DataFrame
    indexed by (L2, cores, kernel, MB): cycles a page, and PK1's and PK2's gains where the
    kernel before them is in the grid."""
    points = sweep.grid(size_mb=list(sizes), kernel=list(kernels), cores=list(cores),
                        l2=list(l2))
    df = pd.DataFrame(sweep.run(pagefault_size, points, executor=executor))
    return df.set_index(["L2", "cores", "kernel", "MB"]).sort_index()


def size_gains(sizes):
    """From ``file_sizes``: per (L2, cores, MB) the stock kernel's cycles a page and each
    patch's gain in percent of the stock time (as Table 1 computes it)."""
    cycles = sizes["cycles"].unstack("kernel")
    out = pd.DataFrame({"stock cycles": cycles["stock"]})
    previous = "stock"
    for patch in PATCHES:
        if patch in cycles:
            out[f"{patch} %"] = 100 * (cycles[previous] - cycles[patch]) / cycles["stock"]
            previous = patch
    return out

