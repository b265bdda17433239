"""Interrupt during an emulated run: Ctrl-C, or Jupyter's Interrupt button (SIGINT).

Inside Unicorn's ``emu_start`` no Python runs, so Python's SIGINT handler would wait for the
whole run to end (a runaway loop: until its instruction limit). ``interruptible()`` lets the
native model take SIGINT while the emulator runs (emu/hw/model/interrupt.c): the run stops at
its next block, and then the handler Python had gets the signal, which raises
``KeyboardInterrupt`` (or does whatever that handler does) at the ``with``. The block hooks
test one flag, so a run that is not interrupted counts exactly as before. A single call
(``Machine.call``) takes SIGINT the same way inside the library (emu/hw/model/call.c), and
gives it to Python with ``deliver_sigint``."""
from __future__ import annotations

import signal
import threading

from .native import lib


class Interrupted(BaseException):
    """Raised after a run that SIGINT stopped, so that nothing reads its half-done result;
    ``interruptible`` turns it into the signal's own handling (KeyboardInterrupt)."""


class interruptible:
    """``with interruptible():`` around code that runs the emulator. Only the main thread
    takes signals in Python, so elsewhere it does nothing. Nested uses are one."""

    def __enter__(self):
        self.catching = threading.current_thread() is threading.main_thread()
        if self.catching:
            lib.emu_sigint_catch()
        return self

    def __exit__(self, kind, error, traceback):
        if not self.catching or not lib.emu_sigint_release():
            return False
        deliver_sigint()
        return False


def stop_if_interrupted():
    """After the emulator returns: raise Interrupted if SIGINT stopped it."""
    if lib.emu_sigint_pending():
        raise Interrupted


def deliver_sigint():
    """The signal to the handler it was meant for (Python's own raises KeyboardInterrupt), and
    KeyboardInterrupt if that handler does not raise: the run did not finish."""
    try:
        signal.raise_signal(signal.SIGINT)
    except KeyboardInterrupt as interrupt:
        interrupt.__suppress_context__ = True       # not "during handling of Interrupted"
        raise
    raise KeyboardInterrupt("the emulated run was interrupted") from None
