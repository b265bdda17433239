"""A deterministic sampling profiler of one call (or of a run on several cores), read like
Linux ``readprofile`` and, for events other than cycles, like ``oprofile``.

    p = profile_call(machine, "flush_dcache_icache", buf, every=7)
    print(p.text())           # ticks, symbol, load: as readprofile prints them
    p.by_symbol()             # the same as a DataFrame, with cycles and executions
    print(p.annotate_text("flush_dcache_icache"))         # per instruction
    p.save("before.prof")     # for python -m emu kperfdiff before.prof after.prof

The native hooks (``emu.hw.native``) do the counting: with ``H_PROFILE_PERIOD`` set to N cycles,
every instruction gets its executions and its cycles (base cost and every stall it caused),
and a *sample* each time the machine's cycle count passes a multiple of N, as a timer
interrupt every N cycles would see the PC. So samples are a deterministic function of the
call, and their total is ``cycles // N``. With ``event=`` another kind (``L3_read_misses``,
``memory_reads``, ...; see ``event_mask``), a sample falls every N such events, on the
instruction whose access caused it, as oprofile's event counters sample on overflow. This
module turns those per-address arrays into per-symbol and per-instruction tables.
``own_counts`` counts one core's calls into arrays of that core's own (a kernel model that
charges one guest call's cycles to the functions it calls, emu.kernel.armfault's
zap_pte_range, while other cores run).

A saved profile is the text of :meth:`SampledRun.text`: readprofile's three columns
(``ticks symbol load``), a ``total`` line, and ``#`` comment lines. :func:`read_samples` reads
it (and real readprofile output) back; ``emu.run.kperfdiff`` compares two of them.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..hw import cache as c
from ..hw.cache import H_CODE_BASE
from ..isa.assemble import disassemble_one

UNKNOWN = "(unknown)"


@dataclass(frozen=True)
class Symbol:
    """A named range [start, end) of loaded code: from a label to the next label."""
    name: str
    start: int
    end: int

    @property
    def size(self):
        return self.end - self.start


# ------------------------------------------------------------------ running a profile

# Events besides cycles (oprofile's model: a sample every N events of one kind): a level's
# requests, by "<level>_[read_|write_]<hits|misses>" (L1 hits are not watched: an L1 hit
# takes the model's fast path), summed with "+", and these.
NAMED_EVENTS = {"memory_reads": c.EVENT_MEMORY_READ, "memory_writes": c.EVENT_MEMORY_WRITE,
                "table_walks": c.EVENT_WALK}


def event_mask(event, machine):
    """The state's mask of EVENT bits for an event name (0 for "cycles"); a name the model
    cannot count is refused, saying why."""
    if event == "cycles":
        return 0
    mask = 0
    levels = {lv.name for lv in machine.model.levels}
    for part in str(event).split("+"):
        part = part.strip()
        if part in NAMED_EVENTS:
            mask |= 1 << NAMED_EVENTS[part]
            continue
        fields = part.split("_")
        if len(fields) not in (2, 3) or fields[-1] not in ("hits", "misses") or \
                (len(fields) == 3 and fields[1] not in ("read", "write")):
            raise ValueError(f"unknown event {part!r}: give cycles, "
                             f"{', '.join(NAMED_EVENTS)}, or <level>_[read_|write_]hits|misses "
                             "(e.g. L3_read_misses), joined with '+'")
        level, kinds = fields[0], fields[1:-1] or ["read", "write"]
        if level not in c.LEVEL_KINDS or level not in levels:
            raise ValueError(f"event {part!r}: {machine.profile.name} has no level {level} "
                             f"(it has {', '.join(sorted(levels))})")
        miss = fields[-1] == "misses"
        if level in ("L1I", "L1D") and not miss:
            raise ValueError(f"event {part!r}: L1 hits are not counted per event (they take "
                             "the model's fast path); sample cycles or the L1's misses")
        for kind in kinds:
            mask |= 1 << (4 * c.LEVEL_KINDS.index(level) + 2 * (kind == "write") + miss)
    return mask


def _period(every, event):
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every <= 0:
        raise ValueError(f"the sampling period must be a positive number of "
                         f"{'cycles' if event == 'cycles' else 'events'}, not {every!r}")


def _profiled(machine, every, event, run):
    """Run ``run()`` with the profiler on; the per-instruction arrays after it."""
    return profile_session(machine, run, (event,), every)[event]


def profile_session(machine, run, events, every=1):
    """``run()`` (as profile_run runs it) profiled as one oprofile session counting one
    kind of event or two at once, both sampled every ``every`` events (or "cycles", alone):
    {event: SampledRun}, each with the same run, executions and cycles, and its own
    samples. The counting takes nothing from the run, so two events counted in one run give
    what each would give counted alone in it."""
    events = _session(events)
    if len(events) == 2 and "cycles" in events:
        raise ValueError("a session samples cycles alone (a sample every N cycles); count "
                         "two events, or cycles in a session of its own")
    _period(every, events[0])
    fields = (c.H_INSN_HITS, c.H_INSN_CYCLES) + SAMPLE_ARRAYS[:len(events)]
    result, arrays = _run_profiled(machine, every, events, run, fields)
    symbols = symbol_table(machine.programs)
    return {event: SampledRun(result, int(every), symbols,
                              _instruction_table(machine, symbols, *arrays[:2], samples),
                              event)
            for event, samples in zip(events, arrays[2:])}


#: the state's per-instruction samples of a session's first event and of its second
SAMPLE_ARRAYS = (c.H_SAMPLES, c.H_SAMPLES2)


def _session(events):
    """A session's events as a tuple: one, or two different ones (the model's counters)."""
    events = tuple(events)
    if not 1 <= len(events) <= 2 or len(set(events)) != len(events):
        raise ValueError(f"a session counts one event or two different ones, not {events!r}")
    return events


def _run_profiled(machine, every, events, run, fields):
    """``run()`` with the profiler on, sampling ``events`` (one or two names): what it
    returned, and copies of the profiler's arrays ``fields`` after it."""
    st = machine.state
    masks = [event_mask(event, machine) for event in events] + [0]
    headers = [machine.model.header(k) for k in range(len(machine.cpus))]
    for h in headers:
        h[c.H_PROFILE_PERIOD], h[c.H_SAMPLE_EVENTS], h[c.H_SAMPLE_EVENTS2] = every, *masks[:2]
    try:
        result = run()
        arrays = [_code_array(st, field) for field in fields]
    finally:
        for h in headers:       # later calls run unprofiled (and a little faster)
            h[c.H_PROFILE_PERIOD] = h[c.H_SAMPLE_EVENTS] = h[c.H_SAMPLE_EVENTS2] = 0
    return result, arrays


def count_events(machine, call, event):
    """``call()``, one guest call on ``machine`` (a call's start clears the profiler's
    counts), with every ``event`` (an event name, as profile_call takes it) counted in the
    loaded code: (what ``call()`` returned, the events). The total profile_call(...,
    every=1, event=event) samples, without its per-instruction table (a part of a kernel's
    work, measured on its own)."""
    result, counts = count_session(machine, call, (event,))
    return result, counts[event]


def count_session(machine, call, events):
    """count_events of one event or two at once (as profile_session counts them): (what
    ``call()`` returned, {event: events})."""
    events = _session(events)
    if "cycles" in events:
        raise ValueError("count_events counts events; a call's cycles are its Run's")
    result, arrays = _run_profiled(machine, 1, events, call, SAMPLE_ARRAYS[:len(events)])
    return result, {event: int(samples.sum()) for event, samples in zip(events, arrays)}


def profile_call(machine, entry, *args, every=997, event="cycles", cold=False, limit=None):
    """Call ``entry`` on ``machine``, a sample every ``every`` cycles (or events of the
    kind ``event`` names: see event_mask); returns a SampledRun. The default period is
    prime, so it does not lock onto a loop whose cycle count divides a round number (a
    125-cycle loop sampled every 1000 cycles is always seen at one PC)."""
    _period(every, event)
    return _profiled(machine, every, event,
                     lambda: machine.call(entry, *args, limit=limit, cold=cold))


def profile_parallel(machine, calls, every=997, event="cycles", cold=False, limit=None,
                     **options):
    """``machine.run_parallel(calls)`` profiled, as oprofile profiles every CPU of a
    machine: each core samples its own cycles (or events), all into one table."""
    _period(every, event)
    return _profiled(machine, every, event,
                     lambda: machine.run_parallel(calls, limit=limit, cold=cold, **options))


def profile_run(machine, run, every=997, event="cycles"):
    """``run()``, any Python that calls into ``machine`` (a kernel workload of many guest
    calls, on one CPU or several), profiled as profile_parallel profiles one parallel
    call: each core samples its own cycles (or events), all into one table; the
    SampledRun's ``run`` is what ``run()`` returned."""
    _period(every, event)
    return _profiled(machine, every, event, run)


def count_instructions(machine, on=True):
    """Turn on (or off) the per-instruction counts (executions and cycles) without samples,
    for a caller that reads them after each of many runs (``instruction_counts``): each
    call into the machine starts them from zero."""
    for k in range(len(machine.cpus)):
        h = machine.model.header(k)
        h[c.H_PROFILE_PERIOD] = (1 << 62) if on else 0
        h[c.H_SAMPLE_EVENTS] = h[c.H_SAMPLE_EVENTS2] = 0


def instruction_counts(machine, whole=True):
    """The executions and cycles of every instruction of the code region since the last
    call into the machine began (``count_instructions`` on): two arrays by code offset;
    not ``whole``, they end at counted_top (all above it is zero), whose copy is cheaper
    for a caller that reads them after each of many calls."""
    st = machine.state
    return _code_array(st, c.H_INSN_HITS, whole), _code_array(st, c.H_INSN_CYCLES, whole)


class CodeSpans:
    """Groups of code ranges ([[(start, end), ...], ...]) that ``own_counts`` zeroes and
    sums together: their offsets in the code region, made once, so that each call zeroes
    them in two numpy operations and sums every group in two more (``own_counts.sums``),
    not two a range."""

    def __init__(self, machine, groups):
        base = int(machine.state[H_CODE_BASE])
        offsets, starts, firsts, at = [], [], [], 0
        for group in groups:
            starts.append(at)
            firsts.append(group[0][0] - base)
            for start, end in group:
                if end <= start:
                    raise ValueError(f"CodeSpans: an empty range ({start:#x}, {end:#x})")
                offsets.append(np.arange(start - base, end - base))
                at += end - start
        self.offsets = np.concatenate(offsets)
        self.starts, self.firsts = np.array(starts), np.array(firsts)
        self._placed = {}

    def placed(self, hits, cycles):
        """(the state's indices of the spans' counts in arrays at ``hits`` and ``cycles``,
        the executions' then the cycles', and those of each group's first instruction's
        executions): made once per pair of arrays (a core's), not at every call."""
        at = self._placed.get((hits, cycles))
        if at is None:
            at = self._placed[(hits, cycles)] = (
                np.concatenate([hits + self.offsets, cycles + self.offsets]),
                hits + self.firsts)
        return at


class own_counts:
    """Around calls of one ``core`` (a context manager): the executions and cycles of each of
    its instructions in ``spans`` (a CodeSpans), counted into arrays of
    that core's own, so that other cores running at the same time (a parallel run) add
    nothing, and a profiler of the whole machine sees none of them. ``.counts(start, end)``:
    (executions, cycles) summed over [start, end) after the block. The model charges the
    same cycles with the counts on as off (account, emu/hw/model/cache.c)."""

    def __init__(self, machine, core, spans):
        if not isinstance(spans, CodeSpans):
            raise TypeError(f"own_counts: give the code as a CodeSpans, not {spans!r}")
        self.machine, self.core, self.spans = machine, core, spans
        model = machine.model
        self.base = int(machine.state[H_CODE_BASE])
        n = int(machine.state[c.H_CODE_LEN]) + 1
        self.hits = model.own_counts_at + 2 * n * core
        self.cycles = self.hits + n

    def __enter__(self):
        st, h = self.machine.state, self.machine.model.header(self.core)
        if h[c.H_PROFILE_PERIOD] > 0:
            raise RuntimeError("own_counts: this core is being profiled already")
        st[self.spans.placed(self.hits, self.cycles)[0]] = 0
        self._saved = h[c.H_INSN_HITS], h[c.H_INSN_CYCLES], h[c.H_NEXT_SAMPLE]
        h[c.H_INSN_HITS], h[c.H_INSN_CYCLES] = self.hits, self.cycles
        h[c.H_PROFILE_PERIOD] = h[c.H_NEXT_SAMPLE] = 1 << 62      # counts, no samples
        return self

    def __exit__(self, *exc):
        h = self.machine.model.header(self.core)
        h[c.H_PROFILE_PERIOD] = 0
        h[c.H_INSN_HITS], h[c.H_INSN_CYCLES], h[c.H_NEXT_SAMPLE] = self._saved
        return False

    def sums(self):
        """For each group of the spans: (executions of its first range's first instruction,
        executions, cycles), as Python ints."""
        st, spans = self.machine.state, self.spans
        both, firsts = spans.placed(self.hits, self.cycles)
        counts = st[both]
        n = len(spans.offsets)
        return list(zip(st[firsts].tolist(), np.add.reduceat(counts[:n], spans.starts).tolist(),
                        np.add.reduceat(counts[n:], spans.starts).tolist()))

    def counts(self, start, end):
        st, a, b = self.machine.state, start - self.base, end - self.base
        return (int(st[self.hits + a:self.hits + b].sum()),
                int(st[self.cycles + a:self.cycles + b].sum()))


def cycles_by_symbol(machine, cycles):
    """{symbol: cycles} of an array of ``instruction_counts``'s cycles, by ``symbol_table``."""
    code_base = int(machine.state[H_CODE_BASE])
    symbols = symbol_table(machine.programs)
    out = {}
    for offset in np.flatnonzero(cycles):
        name = symbol_of(symbols, code_base + int(offset))
        out[name] = out.get(name, 0) + int(cycles[offset])
    return out


def _code_array(st, field, whole=True):
    """A copy of one of the profiler's arrays (indexed by offset in the code region): what
    lies below the counts' high-water mark (counted_top) copied, the rest zero as it is;
    not ``whole``, only what lies below the mark."""
    start, length, top = int(st[field]), int(st[c.H_CODE_LEN]) + 1, counted_top(st)
    out = np.zeros(length if whole else top, np.int64)
    out[:top] = st[start:start + top]
    return out


def counted_top(st):
    """1 + the highest code offset any of the profiler's counts reached since the state was
    made (the model's high-water mark, after the four arrays: emu/hw/model/state.h
    profile_top): above it every array is zero, and a call's start clears only below it."""
    return int(st[int(st[c.H_SAMPLES2]) + int(st[c.H_CODE_LEN]) + 1])


def symbol_table(programs):
    """The symbols of loaded programs, in address order; local ``.L`` labels are not symbols,
    so what they label counts for the symbol that encloses them (as in a kernel profile)."""
    symbols = []
    for program in programs:
        end = program.base + len(program.code)
        names = {}                                  # address -> the name shown for it
        for name, address in program.symbols.items():
            # equates (.equ LINE, 32) are symbols too, but not inside the code
            if name.startswith(".L") or not program.base <= address < end:
                continue
            # two labels on one address: prefer a .globl one, the name callers use
            if address not in names or (name in program.globals
                                        and names[address] not in program.globals):
                names[address] = name
        starts = sorted(names)
        for start, stop in zip(starts, starts[1:] + [end]):
            symbols.append(Symbol(names[start], start, stop))
    return sorted(symbols, key=lambda s: s.start)


def symbol_of(symbols, address):
    """The name of the symbol whose range holds ``address``, else UNKNOWN."""
    return _symbol_in(symbols, [s.start for s in symbols], address)


def _symbol_in(symbols, starts, address):
    """symbol_of with the symbols' starts listed once (a table looks up every instruction)."""
    i = bisect.bisect_right(starts, address) - 1
    if i >= 0 and address < symbols[i].end:
        return symbols[i].name
    return UNKNOWN


def _instruction_table(machine, symbols, hits, cycles, samples):
    """One row per instruction of the loaded programs, plus any other address that got counts:
    address, symbol, hits (executions), cycles, samples, instruction (disassembled)."""
    code_base = int(machine.state[H_CODE_BASE])      # 0 on software-loaded-TLB machines
    text = {}
    for program in machine.programs:
        text.update(program.instruction_texts(machine.isa))
    for offset in np.flatnonzero(hits | cycles | samples):
        address = code_base + int(offset)
        if address not in text:                     # executed bytes no program listed
            width = 16 if machine.isa == "x86" else 4
            text[address] = disassemble_one(machine.read(address, width), machine.isa, address)
    rows, starts = [], [s.start for s in symbols]
    for address in sorted(text):
        offset = address - code_base
        rows.append({"address": address, "symbol": _symbol_in(symbols, starts, address),
                     "hits": int(hits[offset]), "cycles": int(cycles[offset]),
                     "samples": int(samples[offset]), "instruction": text[address]})
    columns = ["address", "symbol", "hits", "cycles", "samples", "instruction"]
    return pd.DataFrame(rows, columns=columns)


# ------------------------------------------------------------------ the result

class SampledRun:
    """Samples, cycles and executions of one call, per instruction and per symbol."""

    def __init__(self, run, every, symbols, table, event="cycles"):
        self.run = run                    # the Run (or ParallelRun) of the call
        self.every = every                # the sampling period in cycles (or events)
        self.event = event                # what was sampled: cycles, or an event name
        self.symbols = symbols            # [Symbol] of the loaded code
        self.table = table                # per-instruction DataFrame

    @property
    def samples(self):
        return int(self.table["samples"].sum())

    def by_symbol(self):
        """Per symbol that ran: samples, share (% of all samples), cycles, instructions
        executed and size in bytes; most samples first."""
        t = self.table
        grouped = t.groupby("symbol")[["samples", "cycles", "hits"]].sum()
        grouped = grouped[(grouped != 0).any(axis=1)].rename(columns={"hits": "instructions"})
        total = self.samples
        sizes = {}
        for s in self.symbols:              # one name in two programs: both ranges count
            sizes[s.name] = sizes.get(s.name, 0) + s.size
        df = grouped.reset_index()
        df["share"] = df["samples"] * 100.0 / total if total else 0.0
        df["size"] = [sizes.get(name, 0) for name in df["symbol"]]
        df = df.sort_values(["samples", "cycles", "symbol"], ascending=[False, False, True])
        return df[["symbol", "samples", "share", "cycles", "instructions", "size"]] \
            .reset_index(drop=True)

    def sampled(self):
        """{symbol: samples} of the symbols that got at least one sample."""
        df = self.by_symbol()
        return {name: int(n) for name, n in zip(df["symbol"], df["samples"]) if n > 0}

    def text(self):
        """readprofile's output: ticks, symbol, load (ticks per byte of the symbol), for the
        symbols with samples, most first, then the total (load over all the code's bytes)."""
        run = self.run
        what = getattr(run, "entry", None) or \
            " + ".join(sorted({r.entry for r in run.runs if r}))
        where = getattr(run, "profile", None) or \
            f"{next(r.profile for r in run.runs if r)} x {len(run.runs)} cores"
        lines = [f"# {what} on {where}: {run.cycles} cycles, {run.instructions} "
                 f"instructions, a sample every {self.every} {self.event}"]
        df = self.by_symbol()
        for name, samples, size in zip(df["symbol"], df["samples"], df["size"]):
            if samples > 0:
                lines.append(_readprofile_line(samples, name, size))
        code_size = sum(s.size for s in self.symbols)
        lines.append(_readprofile_line(self.samples, "total", code_size))
        return "\n".join(lines)

    def save(self, path):
        """Write :meth:`text` to a file that ``kperfdiff`` (and read_samples) can read."""
        Path(path).write_text(self.text() + "\n")

    def annotate(self, symbol=None):
        """Per instruction of one symbol (default: of every symbol that ran), in address
        order: address, symbol, hits, cycles, samples, instruction."""
        names = list(self.by_symbol()["symbol"]) if symbol is None else [symbol]
        if symbol is not None and symbol not in set(self.table["symbol"]):
            known = ", ".join(sorted(set(self.table["symbol"])))
            raise KeyError(f"no symbol {symbol!r} in this profile (it has: {known})")
        rows = self.table[self.table["symbol"].isin(names)]
        return rows.sort_values("address").reset_index(drop=True)

    def annotate_text(self, symbol=None):
        """:meth:`annotate` as text: one block per symbol, hottest symbol first."""
        rows = self.annotate(symbol)
        summary = self.by_symbol().set_index("symbol")
        names = list(summary.index) if symbol is None else [symbol]
        return "\n\n".join(_annotated_block(name, rows[rows["symbol"] == name],
                                              summary.loc[name] if name in summary.index
                                              else None) for name in names)

    def to_dict(self):
        """For JSON: the run, the period, the per-symbol table and the instructions that ran."""
        symbols = [{"symbol": r.symbol, "samples": int(r.samples), "share": float(r.share),
                    "cycles": int(r.cycles), "instructions": int(r.instructions),
                    "size": int(r.size)} for r in self.by_symbol().itertuples()]
        ran = self.table[(self.table[["hits", "cycles", "samples"]] != 0).any(axis=1)]
        instructions = [{"address": int(r.address), "symbol": r.symbol, "hits": int(r.hits),
                         "cycles": int(r.cycles), "samples": int(r.samples),
                         "instruction": r.instruction} for r in ran.itertuples()]
        return {"run": self.run.to_dict(), "every": self.every, "event": self.event,
                "samples": self.samples,
                "symbols": symbols, "instructions": instructions}

    def __str__(self):
        return self.text()


def call_tree(table, symbols, categories, instruction_category=None):
    """Each symbol's cycles over the run, its callees' included, by category, as gprof
    divides a callee's time among its callers: a call from ``bl X`` gets X's mean cycles
    per call (X's total over the executions of its first instruction), each category in
    proportion. ``categories`` {symbol: name}: a named symbol's cycles, and those of the
    unnamed symbols it calls, go to its name (the innermost named one wins); the rest to
    None. ``instruction_category(row)``, if given, names single instructions (a row of the
    table: a lock's spin loop, a tlbie), innermost of all: their cycles go to that name
    wherever they are called from (None: the symbol's rules). Returns {symbol: {category:
    cycles}} for the symbols that ran. Exact for a callee whose calls all cost alike; the
    code may not recurse."""
    by_start = {s.start: s.name for s in symbols}
    ran = table[table["hits"] > 0]
    own = {}                                         # symbol -> {category: cycles}
    for row in ran.itertuples():
        name = instruction_category(row) if instruction_category else None
        parts = own.setdefault(row.symbol, {})
        parts[name] = parts.get(name, 0) + row.cycles
    calls = {by_start[a]: int(h) for a, h in zip(ran["address"], ran["hits"]) if a in by_start}
    sites = {}                                      # caller -> [(callee, executions)]
    for row in ran.itertuples():
        words = row.instruction.split()
        if words and words[0] == "bl" and len(words) > 1:
            callee = symbol_of(symbols, int(words[-1], 0))
            sites.setdefault(row.symbol, []).append((callee, int(row.hits)))
    done = {}

    def total(name, stack=()):
        if name in done:
            return done[name]
        if name in stack:
            raise ValueError(f"call_tree: {name} recurses ({' -> '.join(stack)})")
        out = {None: 0, **own.get(name, {})}
        for callee, hits in sites.get(name, ()):
            whole, n = total(callee, stack + (name,)), calls.get(callee, 0)
            for category, cycles in whole.items():
                out[category] = out.get(category, 0) + (cycles * hits / n if n else 0)
        if name in categories:
            out[categories[name]] = out.get(categories[name], 0) + out.pop(None, 0)
        done[name] = out
        return out

    return {name: total(name) for name in own}


def _annotated_block(name, rows, summary):
    """A symbol's heading (its row of by_symbol, None if it did not run), then its
    instructions with their counts."""
    if summary is None:
        head = f"{name}: did not run"
    else:
        head = (f"{name}: {int(summary['samples'])} samples ({summary['share']:.2f}%), "
                f"{int(summary['cycles'])} cycles, {int(summary['instructions'])} instructions")
    lines = [head, f"  {'address':>8}  {'hits':>8}  {'cycles':>8}  {'samples':>7}  instruction"]
    for r in rows.itertuples():
        lines.append(f"  {r.address:08x}  {r.hits:>8}  {r.cycles:>8}  {r.samples:>7}"
                     f"  {r.instruction}")
    return "\n".join(lines)


def _readprofile_line(ticks, name, size):
    """One line as readprofile prints it; a symbol of unknown size has no load."""
    if size <= 0:
        return f"{ticks:6d} {name}"
    return f"{ticks:6d} {name:<40s} {ticks / size:8.4f}"


# ------------------------------------------------------------------ saved profiles

def read_samples(path):
    """{symbol: samples} from a saved profile (or readprofile output): lines of
    ``ticks symbol [load]``; ``#`` lines, blank lines and the ``total`` line are skipped.
    Raises ValueError naming the file (and line) when it cannot be read or parsed."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"cannot read the profile {path}: "
                         f"{getattr(e, 'strerror', None) or e}") from None
    counts = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) not in (2, 3) or not fields[0].isdigit() \
                or (len(fields) == 3 and not _is_number(fields[2])):
            raise ValueError(f"{path}:{lineno}: expected 'samples symbol [load]', "
                             f"got {line.strip()[:80]!r}")
        ticks, name = int(fields[0]), fields[1]
        if name == "total":
            continue
        if name in counts:
            raise ValueError(f"{path}:{lineno}: symbol {name!r} is listed twice")
        counts[name] = ticks
    if not any(counts.values()):
        raise ValueError(f"the profile {path} holds no samples")
    return counts


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
