"""The CPU the kernel model's code runs for, and values each CPU has its own of. On a machine
of several cores each CPU's Python is a task of ``emu.run.parallel.run_tasks``."""
from __future__ import annotations

from ..run.parallel import current_task


def cpu():
    """The CPU the kernel model's code runs for: a task's core in a run of several cores
    (emu.run.parallel.run_tasks), else 0."""
    task = current_task()
    return task.core if task is not None else 0


class PerCPU:
    """A value each CPU has its own of (a descriptor: ``current = PerCPU()``); a CPU that
    has not set it reads ``default()`` (None if no default is given)."""

    def __init__(self, default=None):
        self.default = default

    def __set_name__(self, owner, name):
        self.name = "_percpu_" + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        values = obj.__dict__.get(self.name)
        if values is None:
            values = obj.__dict__[self.name] = {}
        task = current_task()                       # cpu(), inlined: a hot path
        k = task.core if task is not None else 0
        value = values.get(k)
        if value is None and k not in values:
            if self.default is None:
                return None
            value = values[k] = self.default()
        return value

    def __set__(self, obj, value):
        obj.__dict__.setdefault(self.name, {})[cpu()] = value
