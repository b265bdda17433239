"""The rest of the kernel's cycles (all but the copy), before and after the patch, split by
function: in the mail, from its two cycle listings; on the model, from a profiled run's
cycles and its lock spinning (emu.papers.yoshioka2005.spins).

The mail lists five functions a kernel; a function of the other listing that one does not
list had at most that listing's fifth's samples (and at least none), so each function's
change, and the change of all the functions neither lists, is an interval. The rest's total
is each listing's total implied by its rounding (oprofile.listing_total) less the copy.
"""
from __future__ import annotations

import pandas as pd

from . import oprofile
from .spins import spin_by_symbol

#: how each function of the mail's rest takes a lock in 2.6.12.1 (and in the model's
#: routines: spinlock_2612.S, jbd_2612.S): bit_spin_lock is inline (include/linux/
#: spinlock.h), so its spinning is sampled in its caller; spin_lock is out of line
#: (kernel/spinlock.c), sampled in _spin_lock
LOCKS = {
    "_spin_lock": "the spin lock itself (out of line): every sample takes a lock or spins",
    "journal_add_journal_head": "BH_JournalHead bit spin lock, inline (fs/jbd/journal.c)",
    "journal_put_journal_head": "BH_JournalHead bit spin lock, inline (fs/jbd/journal.c)",
    "do_get_write_access": "BH_State bit spin lock, inline (and lock_buffer, which sleeps)",
    "journal_dirty_metadata": "BH_State bit spin lock, inline (j_list_lock in _spin_lock)",
}
OTHERS = "other functions"      # the mail: those neither listing names


def _samples(kernel):
    """{symbol: samples} of one cycle listing, the copy left out; and the fifth's samples."""
    rows = oprofile.listing("cycles", kernel)
    fifth = int(rows["samples"].iloc[-1])
    rows = rows[rows["symbol"] != oprofile.COPY_ROUTINE[kernel]]
    return dict(zip(rows["symbol"], rows["samples"].astype(int))), fifth


def mail_rest():
    """The mail's rest of the kernel (samples), each kernel's (lowest, highest): the total
    its listing's rounding allows less the copy's samples."""
    out = {}
    for kernel in oprofile.KERNELS:
        lo, hi = oprofile.listing_total("cycles", kernel)
        rows = oprofile.listing("cycles", kernel)
        copy = int(rows[rows["symbol"] == oprofile.COPY_ROUTINE[kernel]]["samples"].iloc[0])
        out[kernel] = (lo - copy, hi - copy)
    return out


def mail_split():
    """Per function of the mail's rest that either cycle listing names: samples before and
    after (lowest, highest: a function a listing leaves out had from none to its fifth's
    samples), the fall (before - after, lowest and highest), how it takes a lock (LOCKS); a
    row OTHERS for the rest's fall that the named functions leave (those neither listing
    names), and a row "rest" for the
    whole (its bounds the listings' rounding)."""
    (before, fifth_b), (after, fifth_a) = _samples("original"), _samples("optimized")
    rows = []
    for symbol in list(before) + [s for s in after if s not in before]:
        b = (before[symbol],) * 2 if symbol in before else (0, fifth_b)
        a = (after[symbol],) * 2 if symbol in after else (0, fifth_a)
        rows.append({"symbol": symbol, "before_lo": b[0], "before_hi": b[1],
                     "after_lo": a[0], "after_hi": a[1],
                     "fall_lo": b[0] - a[1], "fall_hi": b[1] - a[0],
                     "lock": LOCKS.get(symbol, "")})
    df = pd.DataFrame(rows)
    rest = mail_rest()
    (rb_lo, rb_hi), (ra_lo, ra_hi) = rest["original"], rest["optimized"]
    fall = (rb_lo - ra_hi, rb_hi - ra_lo)
    others = {"symbol": OTHERS, "before_lo": None, "before_hi": None, "after_lo": None,
              "after_hi": None, "fall_lo": fall[0] - df["fall_hi"].sum(),
              "fall_hi": fall[1] - df["fall_lo"].sum(), "lock": ""}
    whole = {"symbol": "rest", "before_lo": rb_lo, "before_hi": rb_hi, "after_lo": ra_lo,
             "after_hi": ra_hi, "fall_lo": fall[0], "fall_hi": fall[1], "lock": ""}
    return pd.concat([df, pd.DataFrame([others, whole])], ignore_index=True)


def model_split(profiles, symbols=tuple(LOCKS)):
    """On the model (``profiles``: {"original": WriteProfile, "optimized": WriteProfile},
    paced runs), per function of ``symbols``: cycles per write before and after, the fall
    (before - after), and the cycles of its lock spinning per write before and after
    (spin_by_symbol of the cycles run) and their share of its cycles (%); a row "once a
    commit" for the commit's share of its once-a-commit work (WriteProfile.commit_share:
    measured apart, kjournald's calls with no writer beside them; its spinning not read),
    OTHERS for the rest of the rest, and
    "rest" for the whole (WriteProfile.other_events: all but the copy, whose routines have
    no spin loop)."""
    rows = {}
    for label, p in profiles.items():
        writes = p.records * p.cpus
        spins = spin_by_symbol(p.sampled["cycles"].table)
        rest = p.other_events("cycles") / writes
        once = p.commit_share("cycles") / writes
        named = 0.0
        for symbol in symbols:
            s = spins.loc[symbol] if symbol in spins.index else None
            value = (0.0, 0.0) if s is None else (s["cycles"] / writes,
                                                  s["spin_cycles"] / writes)
            rows.setdefault(symbol, {})[label] = value
            named += value[0]
        spin = spins["spin_cycles"].sum() / writes
        named_spin = sum(rows[s][label][1] for s in symbols)
        rows.setdefault("once a commit", {})[label] = (once, 0.0)
        rows.setdefault(OTHERS, {})[label] = (rest - named - once, spin - named_spin)
        rows.setdefault("rest", {})[label] = (rest, spin)
    out = []
    for symbol, by in rows.items():
        (b, sb), (a, sa) = by["original"], by["optimized"]
        out.append({"symbol": symbol, "before": b, "after": a, "fall": b - a,
                    "spin_before": sb, "spin_after": sa,
                    "spin_pct_before": 100 * sb / b if b else 0.0,
                    "spin_pct_after": 100 * sa / a if a else 0.0})
    return pd.DataFrame(out)


def points(fall, before):
    """A fall as points of the rest before (%)."""
    return 100.0 * fall / before


def split_summary(profiles):
    """The split in points of each rest before the patch (the mail's: the midpoint of its
    bounds), the mail's by bounds: its rest's fall ("mail_fall"), _spin_lock's
    ("mail_spin_lock": lowest, highest), journal_add_journal_head's ("mail_add_jh"), the
    other functions' ("mail_others": lowest, highest), and what is left of the rest's fall
    beyond _spin_lock's ("mail_beyond": lowest, highest); the model's rest's fall
    ("model_fall"), _spin_lock's ("model_spin_lock"), journal_add_journal_head's, the other
    functions' and beyond _spin_lock's, its lock spinning's share of the rest's cycles
    before and after (%) and _spin_lock's share spinning before and after (%)."""
    mail = mail_split().set_index("symbol")
    rest = mail.loc["rest"]
    before = (rest["before_lo"] + rest["before_hi"]) / 2
    fall = (rest["fall_lo"] + rest["fall_hi"]) / 2

    def bounds(symbol):
        return (float(points(mail.loc[symbol, "fall_lo"], before)),
                float(points(mail.loc[symbol, "fall_hi"], before)))
    spin_lock = bounds("_spin_lock")
    model = model_split(profiles).set_index("symbol")
    m_before = model.loc["rest", "before"]

    def m(symbol):
        return float(points(model.loc[symbol, "fall"], m_before))
    mail_fall = float(points(fall, before))
    unread = _preempt(profiles)
    return {"mail_fall": mail_fall, "mail_spin_lock": spin_lock,
            "mail_add_jh": bounds("journal_add_journal_head")[0],
            "mail_others": bounds(OTHERS),
            "mail_beyond": (mail_fall - spin_lock[1], mail_fall - spin_lock[0]),
            "model_fall": m("rest"), "model_spin_lock": m("_spin_lock"),
            "model_add_jh": m("journal_add_journal_head"), "model_others": m(OTHERS),
            "model_beyond": m("rest") - m("_spin_lock"),
            **{f"model_{key}_{when}": None if unread else
               float(model.loc[symbol, f"spin_pct_{when}"])
               for key, symbol in (("spin", "rest"), ("spin_lock_spin", "_spin_lock"))
               for when in ("before", "after")}}


def _preempt(profiles):
    """Were the runs built with CONFIG_PREEMPT (WriteProfile.facts)? Their lock loops (a
    trylock between preempt_disable and preempt_enable, spinlock_2612.S) are not the shape
    spins.spin_sites reads, so their spinning is not read: None, not 0."""
    return any(p.facts.get("preempt") for p in profiles.values())
