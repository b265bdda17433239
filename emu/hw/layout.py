"""The guest's address map (physical = virtual; one RAM region from 0).

The first page is left unmapped so that a null pointer faults; code from CODE_BASE, data
buffers from HEAP_BASE (``Machine.alloc``), the stack at the top of RAM (each core's
CORE_STACK below the one before). A routine returns to HALT, in the unmapped first page,
where emulation stops before fetching anything: Unicorn 2.1.4 invalidates the translated
code at its ``until`` address on every return, which costs about 5 us per call when that
address is in mapped memory and about 1 us when it is not (measured)."""

PAGE = 0x1000
HALT = 0x800           # the return address of every call
CODE_BASE, CODE_SIZE = 0x10000, 0xF0000
HEAP_BASE = 0x100000
CORE_STACK = 0x8000             # each core's stack, downwards from the top of RAM
MAX_RAM = 1 << 31               # guest RAM from 0; above it the outer cache's registers
MAX_SPECIALS = 4096             # cache-maintenance and special instructions a machine hooks
