"""The hardware model: what a processor of a paper is made of, and what it costs.

``cache`` (levels, coherence between cores, the outer cache's maintenance registers) over
the native model (``native``, C in ``model/``, compiled at install; Unicorn calls its hooks
directly), ``memory`` (the memory system in time), ``topology`` (cores, chips, shared
levels), the MMUs and TLBs (``mmu``: 32-bit hashed and ARM short descriptors; ``hash64``:
the 64-bit hashed table and SLB; ``softtlb``: the 603's and 405's software-loaded TLBs),
each with its architecture's registers, ``cost`` (cycles per instruction), ``profile`` (the
processor profiles in ``profiles/``, every number with its source), ``faults`` (what goes
wrong in guest code) and ``layout`` (the guest's address map). May use ``emu.isa``."""
