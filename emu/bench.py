"""Throughput of the instrumented model against bare Unicorn, per ISA (``python -m emu bench``).

Both runs execute the same word-copy loop over the same buffers. The raw run is a plain Unicorn
instance with no hooks; the instrumented run is a ``Machine`` with the profile's L1 + L2 (and
L3) cache model and the cost model on. The figure is guest memory accesses per second.
"""
from __future__ import annotations

import time

from unicorn import UC_PROT_ALL

from .machine import Machine

# One word-copy loop per ISA: dst, src, number of words. Two accesses per iteration.
COPY_LOOPS = {
    "ppc32": ("ppc750", """
copy_words:
    mtctr r5
1:  lwz   r6, 0(r4)
    stw   r6, 0(r3)
    addi  r4, r4, 4
    addi  r3, r3, 4
    bdnz  1b
    blr
"""),
    "ppc64": ("power4", """
copy_words:
    mtctr r5
1:  ld    r6, 0(r4)
    std   r6, 0(r3)
    addi  r4, r4, 8
    addi  r3, r3, 8
    bdnz  1b
    blr
"""),
    "arm": ("cortex-a9", """
copy_words:
1:  ldr   r3, [r1], #4
    str   r3, [r0], #4
    subs  r2, r2, #1
    bne   1b
    bx    lr
"""),
    "x86": ("pentium4", """
copy_words:
    movl  4(%esp), %edi
    movl  8(%esp), %esi
    movl  12(%esp), %ecx
1:  movl  (%esi), %eax
    movl  %eax, (%edi)
    addl  $4, %esi
    addl  $4, %edi
    decl  %ecx
    jnz   1b
    ret
"""),
}


def _timed(function, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - start)
    return best


def measure(isa, buffer_bytes=1 << 20, passes=4, repeat=5, mmu=False):
    """(raw accesses/s, instrumented accesses/s) for the copy loop on ``isa``; with ``mmu``
    the TLBs and the hashed page table walker are on too (every page mapped)."""
    cpu, source = COPY_LOOPS[isa]
    machine = Machine(cpu, ram_size=64 << 20, mmu=mmu)
    machine.load(source)
    word = 8 if isa == "ppc64" else 4
    words = buffer_bytes // word
    src, dst = machine.alloc(buffer_bytes), machine.alloc(buffer_bytes)
    if mmu:
        from .mmu import page_table
        page_table(machine)
    accesses = 2 * words * passes

    def instrumented():
        for _ in range(passes):
            machine.call("copy_words", dst, src, words)

    # the same CPU model, memory and code in a bare Unicorn: no hooks at all
    raw = machine._new_unicorn(machine.profile)
    raw.mem_map(0x1000, machine.ram_size - 0x1000, UC_PROT_ALL)
    raw.mem_write(0x1000, machine.read(0x1000, 0x100000 - 0x1000))
    if isa == "ppc64":
        from . import native
        from unicorn import UC_HOOK_TLB_FILL
        native.add_hook(raw, UC_HOOK_TLB_FILL, native.identity_tlb_fill, machine.state)
    entry = machine.address_of("copy_words")

    def bare():
        for _ in range(passes):
            machine._set_arguments((dst, src, words), uc=raw)
            raw.emu_start(entry, 0xF000)

    instrumented()                      # compile and warm both before timing
    bare()
    t_raw = t_model = float("inf")
    for _ in range(repeat):             # alternate, so that machine noise hits both alike
        t_raw = min(t_raw, _timed(bare, 1))
        t_model = min(t_model, _timed(instrumented, 1))
    return accesses / t_raw, accesses / t_model


MMU_ROWS = ("ppc32", "ppc64")      # the hashed page tables (32- and 64-bit)


def report(isas=("ppc32", "ppc64", "arm", "x86"), **options):
    """Measure every ISA (and, where modelled, with the MMU on); the table as text."""
    rows = ["| ISA | profile | raw Unicorn (M accesses/s) | instrumented (M accesses/s) "
            "| ratio |", "|---|---|---:|---:|---:|"]
    runs = [(isa, False) for isa in isas] + [(isa, True) for isa in MMU_ROWS if isa in isas]
    for isa, mmu in runs:
        raw, model = measure(isa, mmu=mmu, **options)
        label = f"{isa} + MMU on" if mmu else isa
        rows.append(f"| {label} | {COPY_LOOPS[isa][0]} | {raw / 1e6:.1f} | {model / 1e6:.1f} "
                    f"| {model / raw:.2f} |")
    return "\n".join(rows)
