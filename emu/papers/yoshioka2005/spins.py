"""Lock spinning in a profiled x86 run, read from its per-instruction table (a SampledRun's
``table``: hits and cycles of every instruction), and the mail's rest of the kernel split by
function.

A spin loop of 2.6.12's locks has one shape in the routines (routines/x86/spinlock_2612.S
after include/asm-i386/spinlock.h; bit_spin_lock of include/linux/spinlock.h, inline in its
callers in routines/x86/jbd_2612.S and the others):

    1: lock <acquire> ...       # the attempt
       j<got it>  3f
       [lock <undo> ...]        # the rwlocks' failed attempt undone
    2: pause                    # cpu_relax
       <test> ...
       j<held>    2b
       jmp        1b            # try again

The spin is what runs after a failed attempt: the rows between the attempt's branch and the
``jmp`` back (their cycles hold a parked core's wait: emu.run.parallel charges it to the spin
loop), and the attempts ``jmp`` sends back (the attempt and its branch again, at their mean
cycles: the table does not tell a retried attempt's cycles from a first one's). A ``pause``
loop whose ``jmp`` goes back to no locked instruction waits for something else (a
transaction's updates, a commit's lock-down, a buffer leaving the shadow list: sleeps in
2.6.12, waits here), and so does the loop of ``lock_buffer`` (the BH_Lock bit: 2.6.12's
__lock_buffer sleeps on it, fs/buffer.c): those are ``kind`` "wait", not spinning.
"""
from __future__ import annotations

import re

import pandas as pd

from .ext3model.structures import BH_BITS

#: the bit locks 2.6.12 spins on (bit_spin_lock): jbd_lock_bh_state, jbd_lock_bh_journal_head
#: (include/linux/jbd.h of 2.6.12.1); BH_Lock is lock_buffer's, which sleeps
SPIN_BITS = frozenset({BH_BITS["State"], BH_BITS["JournalHead"]})
_BIT_LOCK = re.compile(r"lock bts[wlq]? \$(0x[0-9a-f]+|\d+),")
_JUMP = re.compile(r"jmp (0x[0-9a-f]+)$")


def _kind(attempt):
    """"lock" if ``attempt`` (a locked instruction's text) takes a spin lock, else "wait"."""
    bit = _BIT_LOCK.match(attempt)
    if bit:
        return "lock" if int(bit.group(1), 0) in SPIN_BITS else "wait"
    return "lock" if attempt.startswith("lock ") else "wait"


def spin_sites(table):
    """One row per ``pause`` loop of ``table`` (a SampledRun's per-instruction table): its
    symbol, the ``pause``'s address, the attempt it goes back to (the locked instruction, ""
    for none), ``kind`` ("lock" or "wait"), ``iterations`` (the pause's executions: a parked
    core's are not executed), ``retries`` (the jmp back's executions) and ``cycles``: the
    spin's, the loop's rows and the retried attempts (see the module's note)."""
    rows = []
    for symbol, code in table.sort_values("address").groupby("symbol", sort=False):
        code = code.reset_index(drop=True)
        where = {a: i for i, a in enumerate(code["address"])}
        for i in code.index[code["instruction"] == "pause"]:
            rows.append({"symbol": symbol, "address": int(code.at[i, "address"]),
                         **_site(code, where, i)})
    columns = ["symbol", "address", "attempt", "kind", "attempts", "iterations", "retries",
               "cycles"]
    return pd.DataFrame(rows, columns=columns)


def _site(code, where, pause):
    """The loop of the ``pause`` at row ``pause`` of one symbol's ``code``."""
    iterations = int(code.at[pause, "hits"])
    end = pause
    while end + 1 < len(code) and not code.at[end, "instruction"].startswith(
            ("jmp", "ret", "call")):
        end += 1
    back = _JUMP.match(code.at[end, "instruction"])
    start = where.get(int(back.group(1), 16)) if back else None
    # the attempt, its branch and at most an undo before the pause: else the jmp goes back
    # further (a wait that starts over: do_get_write_access's shadow list) or nowhere
    if start is None or not 2 <= pause - start <= 3 or \
            not code.at[start, "instruction"].startswith("lock "):
        return {"attempt": "", "kind": "wait", "attempts": 0, "iterations": iterations,
                "retries": 0,
                "cycles": int(code.loc[pause:end, "cycles"].sum())}
    retries = int(code.at[end, "hits"])
    attempt = code.loc[start:start + 1]
    mean = sum(int(c) / int(h) for c, h in zip(attempt["cycles"], attempt["hits"]) if h)
    return {"attempt": code.at[start, "instruction"],
            "kind": _kind(code.at[start, "instruction"]),
            "attempts": int(code.at[start, "hits"]), "iterations": iterations,
            "retries": retries,
            "cycles": int(code.loc[start + 2:end, "cycles"].sum()) + round(retries * mean)}


def spin_by_symbol(table):
    """Per symbol of ``table``: its cycles, the cycles of its lock spins (spin_sites' kind
    "lock") and their share (%), iterations and retries; symbols that ran, most cycles
    first."""
    cycles = table.groupby("symbol")["cycles"].sum()
    sites = spin_sites(table)
    spins = sites[sites["kind"] == "lock"].groupby("symbol")[
        ["cycles", "iterations", "retries"]].sum()
    df = pd.DataFrame({"cycles": cycles}).join(
        spins.rename(columns={"cycles": "spin_cycles"})).fillna(0).astype(int)
    df = df[df["cycles"] > 0]
    df["spin_percent"] = 100.0 * df["spin_cycles"] / df["cycles"]
    df.index.name = "symbol"
    return df.sort_values(["cycles"], ascending=False)
