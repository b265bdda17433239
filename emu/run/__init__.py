"""Running code on the hardware model: the ``machine`` (a profile's CPU or cores, RAM,
loading programs, calling routines), its parts (``emulator``: Unicorn's set-up; ``calling``:
each ISA's calling convention; ``result``: what a call measured; ``diagnose``: what stopped
a call, in words), ``parallel`` (several cores in simulated time), ``extable`` (exception
table fixups), ``profiler`` and ``kperfdiff`` (sampled profiles), ``sweep`` (many
independent runs on processes or a cluster). May use ``emu.hw`` and ``emu.isa``."""
