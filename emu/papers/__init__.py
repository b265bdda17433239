"""Each paper's own code, what its chapter's notebooks share: ``mackerras2003``, ``dougan1999``,
``yoshioka2005`` (with Linux 2.6.12's write path into ext3 and the i386 user copies),
``blanchard2002``, ``yun2011``. The papers are independent of each other (import-linter
checks it); what two of them share lives below them (a kernel build's processes:
``emu.kernel.gcc``; copy routines by size, alignment and cache state, ``emu.kernel.copybench``;
a compile step's file copies, ``emu.kernel.fileio``). May use every layer below: ``kernel``, ``present``, ``run``, ``hw``,
``isa``."""
