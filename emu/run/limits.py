"""Instruction limits: what a run may execute before it is stopped, and the grader's ceiling
over every run (a limit is how a runaway stops that no one interrupts: emu.hw.interrupt stops a
run at Ctrl-C)."""
from __future__ import annotations

import os

import numpy as np

MAX_LIMIT = 1 << 62             # an instruction limit the model's int64 counters hold


def check_limit(limit, name="limit"):
    """Refuse an instruction limit that is not a positive whole number below MAX_LIMIT."""
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or \
            not 0 < limit <= MAX_LIMIT:
        raise ValueError(f"{name} must be a whole number of instructions from 1 to "
                         f"{MAX_LIMIT:,} (2**62), not {limit!r}")
    return int(limit)


CAP_VARIABLE = "EMU_MAX_INSTRUCTIONS"
# The environment as os.environ keeps it (encoded keys and values): every call reads the
# ceiling, and os.environ.get's encoding and decoding would cost a tenth of an empty call
_ENVIRON = getattr(os.environ, "_data", None)
_CAP_KEY = os.environ.encodekey(CAP_VARIABLE) if _ENVIRON is not None else None


def _ceiling_text():
    """EMU_MAX_INSTRUCTIONS as os.environ has it now (None: unset)."""
    if _ENVIRON is None:
        return os.environ.get(CAP_VARIABLE)
    raw = _ENVIRON.get(_CAP_KEY)
    return None if raw is None else os.environ.decodevalue(raw)


def capped(limit):
    """``limit``, lowered to the grader's ceiling when one is set.

    ``python -m emu grade`` runs students' notebooks with EMU_MAX_INSTRUCTIONS in their
    kernels' environment, so that no run, whatever limit a notebook asks for, keeps the kernel
    inside Unicorn for longer than that many instructions (a bound on every run, besides the
    grader's interrupt at its time limit). A
    run under the ceiling is unchanged; one that reaches it raises InstructionLimitExceeded."""
    text = _ceiling_text()
    if text is None:
        return limit
    try:
        cap = check_limit(int(text), CAP_VARIABLE)
    except ValueError:
        raise ValueError(f"{CAP_VARIABLE}={text!r}: give a whole number of instructions from "
                         f"1 to {MAX_LIMIT:,}") from None
    return min(limit, cap)


def cap_note(limit):
    """Say so when the limit that stopped a run is the grader's ceiling."""
    text = os.environ.get(CAP_VARIABLE, "")
    return f", the grader's ceiling {CAP_VARIABLE}" if text.strip() == str(limit) else ""
