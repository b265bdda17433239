"""What the kernel model raises: a user access Linux would answer with SIGSEGV, and a bad
request to the model."""
from __future__ import annotations


class SegmentationFault(Exception):
    """A user access the kernel would answer with SIGSEGV: names the address and why."""

    def __init__(self, address, reason):
        super().__init__(f"segmentation fault at {address:#010x}: {reason}")
        self.address, self.reason = address, reason


class KernelError(ValueError):
    """A bad request to the model (e.g. munmap of a range that is not mapped)."""
