"""The book's explorers: one per page that has one, each a measurement (a plain function of
its settings, run once per point of a sweep: emu.run.sweep), a figure, and the controls
(emu.book.explore). In a notebook::

    from emu import explorers
    explorers.flush_explorer().show()

The built book, which has no kernel, shows each explorer as one figure switching between
precomputed combinations (emu.book.explore); where a control's every value would cost the
build too much, its ``online`` values are a subset, which the page names. What each grid
cost, measured 2026-11-28 (CPU seconds of its draws in one process, a busy machine): store
loop 4.9, flush 2.7, copy 21.4, lat_mmap 5.5, cores 3.0, unlock 1.2; 39 s in all, within
the build's allowance of about 40 s for them.

The controls offer what the processor's documentation allows, with the source beside
each list (the profiles' own sources: emu/hw/profiles/*.toml); other values a reader may try
in code (``flush_cost(..., l1d="L1D:...")``). Some combinations the controls allow are
impossible geometries (a size that is not a multiple of ways x line): the explorer shows
the library's refusal and keeps the last figure.
"""
from __future__ import annotations

import plotly.graph_objects as go

from ..context import routine
from ..context import routine as routine_path
from ..hw.profile import load
from ..papers import dougan1999
from ..papers import yoshioka2005 as yoshioka
from ..papers.yun2011 import FixBench
from ..present import plot
from ..run import sweep
from ..run.machine import Machine
from .explore import Control, Explorer, kb

PAGE = 4096
POLICIES = ("lru", "plru", "fifo", "random")
WAYS = (1, 2, 4, 6, 8, 12, 16)      # 6 and 12 ways: caches that exist, geometries that may not
LINES = (16, 32, 64, 128)


def cache_spec(level, size, ways, line, policy=None):
    """The ``LEVEL:SIZE:WAYS:LINE[:POLICY]`` string Machine(caches=[...]) takes."""
    return f"{level}:{size}:{ways}:{line}" + (f":{policy}" if policy else "")


def _check_caches(profile, *specs):
    """Refuse an impossible geometry here, in this process, before any run starts: the
    library's ValueError names the level and the reason."""
    described = load(profile)
    for spec in specs:
        described = described.with_cache(spec)
    return described


def _l1d_controls(size, ways, line, policy, sizes, online_ways):
    """The L1 D's controls; online (the built book's figure), every size, the ways of
    ``online_ways`` and only the default line and policy (the grid's cost: see above)."""
    return {
        "size": Control("L1 D size", sizes, size, format=kb),
        "ways": Control("ways", WAYS, ways, widget="dropdown", online=online_ways),
        "line": Control("line (bytes)", LINES, line, widget="dropdown", online=(line,)),
        "policy": Control("replacement", POLICIES, policy, widget="dropdown",
                          online=(policy,)),
    }


# ----------------------------------------------------------------------- the toolkit

STORE_LOOP_KB = (4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256)
STORE_ROUTINES = {"fill_words": "stores (fill_words)",
                  "memcpy32": "loads and stores (memcpy32, source and destination)"}


def store_loop(kb_touched, l1d, routine="fill_words"):
    """The PowerPC 750 with its L1 D replaced by ``l1d`` runs ``routine`` over buffers of
    ``kb_touched`` KB twice; the second pass is measured (the first leaves the caches as a
    loop leaves them). ``fill_words`` writes the KB; ``memcpy32`` copies half of them into
    the other half (source and destination together touch the KB). Returns the L1 D's
    accesses, misses and write-backs, and cycles per byte touched."""
    if routine not in STORE_ROUTINES:
        raise ValueError(f"routine must be one of {', '.join(STORE_ROUTINES)}, not {routine!r}")
    size = kb_touched * 1024
    m = Machine("ppc750", caches=[l1d])
    if routine == "fill_words":
        m.load(routine_path("ppc32/fill_words.S"))
        buffer = m.alloc(size)
        call = ("fill_words", buffer, 0x60000000, size // 4)
    else:
        m.load(routine_path("ppc32/memcpy.S"))
        src, dst = m.alloc(size // 2), m.alloc(size // 2)
        call = ("memcpy32", dst, src, size // 2)
    m.call(*call)
    run = m.call(*call)
    l1d_stats = run.caches["L1D"]
    return {"accesses": l1d_stats["accesses"], "misses": l1d_stats["misses"],
            "writebacks": l1d_stats["writebacks"],
            "miss_percent": 100 * l1d_stats["misses"] / l1d_stats["accesses"],
            "cycles_per_byte": run.cycles / size}


def store_loop_figure(size=32768, ways=8, line=32, policy="plru", routine="fill_words",
                      executor=None):
    """L1 D miss rate and cycles per byte of ``store_loop`` against the KB touched."""
    from plotly.subplots import make_subplots
    l1d = cache_spec("L1D", size, ways, line, policy)
    _check_caches("ppc750", l1d)
    points = sweep.grid(kb_touched=list(STORE_LOOP_KB), l1d=[l1d], routine=[routine])
    df = sweep.frame(store_loop, points, executor=executor, description="store loop")
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08)
    fig.add_scatter(x=df["kb_touched"], y=df["miss_percent"], mode="lines+markers",
                    name="L1 D misses", marker_color=plot.COLORS["emulated"], row=1, col=1)
    fig.add_scatter(x=df["kb_touched"], y=df["cycles_per_byte"], mode="lines+markers",
                    name="cycles per byte", marker_color=plot.COLORS["original"], row=2, col=1)
    fig.add_vline(x=size / 1024, line_dash="dot")
    fig.update_xaxes(type="log", tickvals=list(STORE_LOOP_KB))
    fig.update_xaxes(title="KB touched per pass (dotted: the L1 D size)", row=2, col=1)
    fig.update_yaxes(title="L1 D misses (%)", row=1, col=1)
    fig.update_yaxes(title="cycles per byte", row=2, col=1)
    fig.update_layout(showlegend=False)
    return plot.style(fig, title="A loop's second pass on the 750 (model)",
                      source=f"{routine}; L1 D {kb(size)}, {ways}-way, {line} B lines, {policy}",
                      height=520)


def store_loop_explorer():
    """The toolkit's explorer: the 750's L1 D geometry and policy against a loop's misses.
    Defaults: the 750's L1 D (32 KB, 8-way, 32 B lines, pseudo-LRU: MPC750 UM p.148)."""
    controls = _l1d_controls(32768, 8, 32, "plru", (4096, 8192, 16384, 32768, 65536, 131072),
                             online_ways=(1, 8))
    controls["routine"] = Control("routine", tuple(STORE_ROUTINES), "fill_words")
    return Explorer(store_loop_figure, controls)


# ------------------------------------------------------------------- Mackerras 2003

FLUSH_PAGES = (1, 2, 4, 8, 16, 32, 64)
# The 750's backside L2 (IBM PPC750 datasheet): 256 KB or 512 KB with 64 B lines, 1 MB
# with 128 B lines, 2-way; the PowerBook's is 1 MB.
L2_750 = {262144: 64, 524288: 64, 1048576: 128}


def flush_cost(pages, l1d, l2, state="written"):
    """flush_dcache_icache on each of ``pages`` pages the PowerPC 750 (its L1 D and L2
    replaced by ``l1d``, ``l2``) has just written with fill_words, in order: cycles and
    write-backs per page flushed. ``state="flushed again"``: the same pages flushed a
    second time (nothing left to write back)."""
    if state not in ("written", "flushed again"):
        raise ValueError(f"state must be 'written' or 'flushed again', not {state!r}")
    m = Machine("ppc750", caches=[l1d, l2])
    m.load(routine("ppc32/fill_words.S"))
    m.load(routine("ppc32/flush_dcache_icache.S"))
    buffer = m.alloc(pages * PAGE)
    m.call("fill_words", buffer, 0x60000000, pages * PAGE // 4)   # nops: every line dirty
    rounds = 2 if state == "flushed again" else 1
    for _ in range(rounds):
        runs = [m.call("flush_dcache_icache", buffer + i * PAGE) for i in range(pages)]
    return {"cycles_per_page": sum(r.cycles for r in runs) / pages,
            "l1d_writebacks_per_page": sum(r.caches["L1D"]["writebacks"] for r in runs) / pages,
            "l2_writebacks_per_page": sum(r.caches["L2"]["writebacks"] for r in runs) / pages,
            "instructions_per_page": sum(r.instructions for r in runs) / pages}


def flush_figure(size=32768, ways=8, line=32, policy="plru", l2_size=1048576, executor=None):
    """Cycles per page of flush_dcache_icache against the pages written before it."""
    l1d = cache_spec("L1D", size, ways, line, policy)
    l2 = cache_spec("L2", l2_size, 2, L2_750[l2_size])
    _check_caches("ppc750", l1d, l2)
    points = sweep.grid(state=["written", "flushed again"], pages=list(FLUSH_PAGES),
                        l1d=[l1d], l2=[l2])
    df = sweep.frame(flush_cost, points, executor=executor, description="flushes")
    fig = go.Figure()
    for state, color in (("written", "original"), ("flushed again", "optimized")):
        d = df[df["state"] == state]
        fig.add_scatter(x=d["pages"], y=d["cycles_per_page"], mode="lines+markers",
                        name=f"pages {state}", marker_color=plot.COLORS[color])
    fig.add_vline(x=size / PAGE, line_dash="dot")
    fig.update_xaxes(type="log", tickvals=list(FLUSH_PAGES))
    return plot.style(fig, title="flush_dcache_icache per page (750 model)",
                      source=f"L1 D {kb(size)}, {ways}-way, {line} B lines, {policy}; "
                             f"L2 {kb(l2_size)}",
                      x="pages written, then flushed (dotted: the L1 D size)",
                      y="cycles per page flushed", height=440)


def flush_explorer():
    """Mackerras 2003's explorer: the flush's cost against the 750's cache geometry.
    Defaults: the PowerBook's 750 (L1 D 32 KB, 8-way, 32 B, pseudo-LRU; 1 MB L2)."""
    controls = _l1d_controls(32768, 8, 32, "plru", (8192, 16384, 32768, 65536),
                             online_ways=(8,))
    controls["l2_size"] = Control("L2 size", tuple(L2_750), 1048576, format=kb)
    return Explorer(flush_figure, controls)


# -------------------------------------------------------------------- Yoshioka 2005

COPY_SIZES = (64, 128, 256, 512, 1024, 2048, 4096, 8192)
THRESHOLDS = (64, 128, 256, 512, 1024, 2048, 4096)
# IA-32 Optimization Reference Manual, Table 1-1: the Xeon's L2 256 or 512 KB (models 0-2,
# 7 clocks), the Xeon MP's L3 0.5-2 MB (14 clocks), both 8-way with 64 B lines.
L2_XEON = (262144, 524288)
L3_XEON_MP = (524288, 1048576, 2097152)


def copy_curve(threshold, condition, l2_size=524288, l3_size=2097152, sizes=COPY_SIZES):
    """Copies of each of ``sizes`` bytes, in that order, by one __copy_from_user_ll
    (``threshold`` None: 2.6.12's; else the patched one with its test at ``threshold``)
    under ``condition`` (emu.papers.yoshioka2005.CONDITIONS), on a bench of its own: the Xeon MP
    model with its L2 and L3 of those sizes. Cycles and L3 misses per copy at each size,
    as CopyBench.run gives them (one bench for all sizes, as yoshioka.copy_sweep runs)."""
    described = _check_caches("pentium4", cache_spec("L2", l2_size, 8, 64),
                              cache_spec("L3", l3_size, 8, 64))
    bench = yoshioka.CopyBench(threshold, profile=described)
    runs = [bench.run(size, condition) for size in sizes]
    return {"size": list(sizes), "cycles": [r["cycles"] for r in runs],
            "l3_misses": [r["l3_misses"] for r in runs]}


def copy_figure(threshold=512, condition="cold destination", l2_size=524288,
                l3_size=2097152, executor=None):
    """Cycles per byte copied against the size: 2.6.12's copy and the patched one with its
    threshold at ``threshold``."""
    if condition not in yoshioka.CONDITIONS:
        raise ValueError(f"condition must be one of {', '.join(yoshioka.CONDITIONS)}")
    _check_caches("pentium4", cache_spec("L2", l2_size, 8, 64), cache_spec("L3", l3_size, 8, 64))
    points = sweep.grid(threshold=[None, threshold], condition=[condition],
                        l2_size=[l2_size], l3_size=[l3_size])
    curves = sweep.run(copy_curve, points, executor=executor, description="copies")
    fig = go.Figure()
    for curve, name, color in ((curves[0], "2.6.12", "original"),
                               (curves[1], f"patched, non-temporal from {threshold} B",
                                "optimized")):
        fig.add_scatter(x=curve["size"], y=[c / s for c, s in zip(curve["cycles"], curve["size"])],
                        mode="lines+markers", name=name, marker_color=plot.COLORS[color])
    fig.add_vline(x=threshold, line_dash="dot")
    fig.update_xaxes(type="log", tickvals=list(COPY_SIZES))
    return plot.style(fig, title="__copy_from_user_ll (Xeon MP model)",
                      source=f"{condition}; L2 {kb(l2_size)}, L3 {kb(l3_size)}",
                      x="bytes copied (dotted: the threshold)", y="cycles per byte copied",
                      height=440)


def copy_explorer():
    """Yoshioka 2005's explorer: the copy's cycles against size, threshold, use of the data
    and the Xeon MP's L2 and L3 (defaults: the book's pentium4 profile, 512 KB and 2 MB)."""
    return Explorer(copy_figure, {
        "threshold": Control("threshold (bytes)", THRESHOLDS, 512, online=(128, 512, 2048)),
        "condition": Control("use of the data", tuple(yoshioka.CONDITIONS), "cold destination",
                             widget="dropdown"),
        "l2_size": Control("L2", L2_XEON, 524288, format=kb, online=(524288,)),
        "l3_size": Control("L3", L3_XEON_MP, 2097152, format=kb, online=(2097152,)),
    })


# --------------------------------------------------------------------- Dougan 1999

MMAP_SIZES = (64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20)
# The 604's L1 D: 16 KB, 4-way, 32 B lines; the 604e's 32 KB (604 UM p.36/37, 214).
L1D_604 = (16384, 32768)
# The hash table: 64 KB (the kernel model's default for its 32 MB of RAM: htab_size_for)
# to 1 MB; the architecture allows 64 KB to 32 MB (MPC603e UM 1.3.5).
HTAB_SIZES = (65536, 131072, 262144, 524288, 1048576)
CLOCK_MHZ_604 = 133


def mmap_figure(l1d_size=16384, ways=4, htab_size=65536, executor=None):
    """LMBench lat_mmap against the mapping size on the 604 model, the three range flushes
    of emu.papers.dougan1999.FLUSHES, with the L1 D and the hash table of those sizes."""
    l1d = cache_spec("L1D", l1d_size, ways, 32)
    _check_caches("ppc604", l1d)
    mm = dougan1999.mmap_latency(MMAP_SIZES, caches=(l1d,), htab_size=htab_size,
                                 executor=executor)
    cycles = mm["cycles"].unstack("flush")
    fig = go.Figure()
    colors = {"search": "original", "context": "optimized", "hashpte": "emulated"}
    for flush, label in dougan1999.FLUSHES.items():
        fig.add_scatter(x=cycles.index, y=cycles[flush] / CLOCK_MHZ_604, mode="lines+markers",
                        name=label, marker_color=plot.COLORS[colors[flush]])
    fig.update_xaxes(type="log", tickvals=list(cycles.index))
    fig.update_yaxes(type="log", dtick=1)
    return plot.style(fig, title="lat_mmap on the 604 model",
                      source=f"L1 D {kb(l1d_size)}, {ways}-way; hash table {kb(htab_size)}",
                      x="mapping size (KB)", y="microseconds per iteration at 133 MHz",
                      height=440)


def mmap_explorer():
    """Dougan 1999's explorer: lat_mmap's flushes against the 604's L1 D and hash table
    (defaults: the book's ppc604 profile and its kernel model's 64 KB table)."""
    return Explorer(mmap_figure, {
        "l1d_size": Control("L1 D (604: 16 KB, 604e: 32 KB)", L1D_604, 16384, format=kb),
        "ways": Control("ways", WAYS, 4, widget="dropdown", online=(4,)),
        "htab_size": Control("hash table", HTAB_SIZES, 65536, format=kb,
                             online=(65536, 1048576)),
    })


# ------------------------------------------------------------- the toolkit: cores

# The papers' multiprocessors: POWER4 (Blanchard 2002's p690; the 32-bit routine, as
# emu.bench runs it), the Cortex-A9 MPCore (Yun 2011), the Xeon MP (Yoshioka 2005).
LOCK_PROFILES = {"power4": "ppc32", "cortex-a9": "arm", "pentium4": "x86"}
LOCK_CORES = (1, 2, 4, 8, 16)
LOCK_LAYOUTS = ("separate lines", "one line")


def locked_adds(profile, cores, adds=100, quantum=100, layout="separate lines"):
    """``cores`` cores of ``profile`` each take a spin lock ``adds`` times to add 1 to a
    shared counter (routines/<isa>/spin_lock_add.S), run together in simulated time
    (Machine.run_parallel at ``quantum``); the lock and the counter on separate cache lines
    or on one. Returns the machine's cycles per add (its slowest core's clock / all adds)."""
    if profile not in LOCK_PROFILES:
        raise ValueError(f"profile must be one of {', '.join(LOCK_PROFILES)}, not {profile!r}")
    if layout not in LOCK_LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LOCK_LAYOUTS)}, not {layout!r}")
    m = Machine(profile, cores=cores)
    m.load(routine(f"{LOCK_PROFILES[profile]}/spin_lock_add.S"))
    lock = m.alloc(128, align=128)               # 128 B: the longest line of the three
    counter = lock + 8 if layout == "one line" else m.alloc(128, align=128)
    run = m.run_parallel([("locked_adds", lock, counter, adds)] * cores, quantum=quantum)
    if m.read_word(counter) != adds * cores:
        raise RuntimeError(f"{profile}, {cores} cores: the counter lost increments")
    return {"cycles_per_add": run.cycles / (adds * cores)}


def locked_adds_figure(adds=100, quantum=100, layout="separate lines", executor=None):
    """Cycles per locked add against the cores, one line per profile of LOCK_PROFILES."""
    points = sweep.grid(profile=list(LOCK_PROFILES), cores=list(LOCK_CORES), adds=[adds],
                        quantum=[quantum], layout=[layout])
    df = sweep.frame(locked_adds, points, executor=executor, description="locked adds")
    fig = go.Figure()
    for profile, color in zip(LOCK_PROFILES, plot.PALETTE):
        d = df[df["profile"] == profile]
        fig.add_scatter(x=d["cores"], y=d["cycles_per_add"], mode="lines+markers",
                        name=profile, marker_color=color)
    fig.update_xaxes(type="log", tickvals=list(LOCK_CORES))
    fig.update_yaxes(type="log", dtick=1)
    return plot.style(fig, title="A spin lock shared by all cores (model)",
                      source=f"{adds} adds per core; lock and counter on {layout}; "
                             f"quantum {quantum} cycles",
                      x="cores", y="cycles per add (the machine's)", height=420)


def locked_adds_explorer():
    """The toolkit's several-cores explorer: profiles x cores, the sweep of emu.run.sweep's
    notes, with the quantum (the cycles should not depend on it: emu.run.parallel), the adds per
    core and where the lock and the counter sit."""
    return Explorer(locked_adds_figure, {
        "adds": Control("adds per core", (50, 100, 200), 100, online=(100,)),
        "quantum": Control("quantum (cycles)", (10, 100, 1000), 100),
        "layout": Control("lock and counter on", LOCK_LAYOUTS, "separate lines"),
    })


# ------------------------------------------------------------- Yun 2011: the PL310's sync

#: the PL310's cache sync in cycles: the profile's 40 is an estimate (no document gives
#: it), so the explorer offers a range around it
SYNC_CYCLES = (10, 20, 40, 80, 160)
BARRIERS = {"mb": "mb(): dsb + the PL310's sync (stock)", "smp_mb": "smp_mb(): dmb (PK2)"}


def unlock_race(cores, barrier="mb", cache_sync=40, outer_sync="locked"):
    """``cores`` Cortex-A9 cores each unlock a page of their own at the same moment
    (routines/arm/pagelock.S: unlock_page with mb(), or unlock_page_pk2 with smp_mb()), on
    a profile whose PL310 sync costs ``cache_sync`` cycles, the sync mainline's under
    l2x0_lock or the lock-free one (``outer_sync``). The cycles until the last core is
    done, and how long the cores waited for the PL310 in all."""
    import dataclasses

    if barrier not in BARRIERS:
        raise ValueError(f"barrier must be one of {', '.join(BARRIERS)}, not {barrier!r}")
    profile = load("cortex-a9")
    profile = dataclasses.replace(profile, outer_cache={**profile.outer_cache,
                                                        "cache_sync": cache_sync})
    bench = FixBench(cores, profile=profile, outer_sync=outer_sync)
    routine = "unlock_page" if barrier == "mb" else "unlock_page_pk2"
    (_, run), = bench.measure(((routine, "lock"),))
    return {"cycles": run.cycles,
            "pl310_wait": sum(r.events["outer_cache_wait"] for r in run.runs)}


def unlock_figure(cache_sync=40, executor=None):
    """Cycles of an unlock on 1-4 cores at once, mb() against smp_mb()."""
    points = sweep.grid(cores=[1, 2, 3, 4], barrier=list(BARRIERS), cache_sync=[cache_sync])
    df = sweep.frame(unlock_race, points, executor=executor, description="unlocks")
    fig = go.Figure()
    for (barrier, label), color in zip(BARRIERS.items(), plot.PALETTE):
        d = df[df["barrier"] == barrier]
        fig.add_scatter(x=d["cores"], y=d["cycles"], mode="lines+markers", name=label,
                        marker_color=color)
    return plot.style(fig, title="unlock_page on every core at once (model)",
                      source=f"the PL310's cache sync: {cache_sync} cycles (the profile: 40, "
                             "an estimate)",
                      x="cores", y="cycles until the last core is done", height=380)


def unlock_explorer():
    """Yun 2011's PK2 page: the unlock race against the PL310's sync cost."""
    return Explorer(unlock_figure, {
        "cache_sync": Control("PL310 cache sync (cycles)", SYNC_CYCLES, 40),
    })
