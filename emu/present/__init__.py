"""The published numbers and how the book shows them beside the model's: ``data`` (the
papers' tables as CSV with provenance), ``compare`` (an emulated value beside a published
one), ``claims`` (a paper's claim and its verdict), ``plot`` and ``narrow`` (figures in the
book and in a notebook), ``stats`` (what a noisy benchmark can resolve). Knows nothing of
the machine or the kernel: the papers' code on top joins them. May use ``emu.context``
only."""
