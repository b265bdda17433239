"""What Unicorn's restore of the guest PC costs each hooked access, and what skipping it would
buy (evidence for issue 2's speed target; the library does not skip it).

Before it calls a memory hook, Unicorn 2.1.4 restores the guest PC (cpu_restore_state, in
load_helper/store_helper of qemu/accel/tcg/cputlb.c) unless its private flag
``uc_struct.skip_sync_pc_on_exit`` is set; no API sets that flag. This script sets it from a
block hook (at the byte offset it has in the 2.1.4 build from PyPI, checked below), in the
"offset" layout of emu.bench, and prints M guest memory accesses per second:

  raw, do-nothing hooks, do-nothing hooks without the restore, instrumented, instrumented
  without the restore (checked to give the same cycles, instructions and cache statistics). Where the model reads the PC on
  every store (power4's store queues), the last is not measured: it would read a stale PC.

Run: python benchmarks/pc_restore.py [ISA ...]
"""
import ctypes
import sys

import unicorn
from unicorn import UC_HOOK_BLOCK
from unicorn.ppc_const import UC_PPC_REG_PC

from emu import Machine, bench
from emu.hw import cache as c
from emu.hw import native
from emu.hw.layout import HALT
from emu.run.calling import set_arguments

SKIP_FLAG = 0x3a32      # offsetof(struct uc_struct, skip_sync_pc_on_exit), unicorn 2.1.4 x86-64


def _skip_restore(uc, state):
    """Set the flag before every block (native.set_byte_block_hook writes the byte it is
    given)."""
    native.add_hook(uc, UC_HOOK_BLOCK, native.set_byte_block_hook, state,
                    user_data=uc._uch.value + SKIP_FLAG)


def check_flag():
    """Refuse to poke anything unless the byte behaves as the flag: Unicorn sets it when the
    PC is written (uc_reg_write) and emu_start clears it."""
    if unicorn.__version__ != "2.1.4":
        raise SystemExit(f"the flag's offset is known for unicorn 2.1.4 only, not "
                         f"{unicorn.__version__}")
    probe = Machine("ppc750")
    flag = ctypes.c_uint8.from_address(probe.uc._uch.value + SKIP_FLAG)
    probe.load("f:\n blr\n")
    probe.call("f")
    cleared = flag.value
    probe.uc.reg_write(UC_PPC_REG_PC, probe.address_of("f"))
    if (cleared, flag.value) != (0, 1):
        raise SystemExit(f"byte {SKIP_FLAG:#x} of uc_struct does not behave as "
                         f"skip_sync_pc_on_exit ({cleared}, {flag.value})")
    flag.value = 0


def measure(isa, repeat=5, passes=4, size=1 << 20):
    cpu, source = bench.COPY_LOOPS[isa]
    words = size // (8 if isa == "ppc64" else 4)
    runs = {}
    for skip in (False, True):
        machine = Machine(cpu, ram_size=64 << 20)
        machine.load(source)
        src, dst = bench.place_buffers(machine, size, "offset")
        if skip:     # before the first run: Unicorn puts block hooks in the translated code
            _skip_restore(machine.uc, machine.state)
        entry = machine.address_of("copy_words")
        tag = " no restore" if skip else ""
        reads_pc = machine.state[c.H_SQ_SLICES] > 0

        def instrumented(machine=machine, src=src, dst=dst):
            return [machine.call("copy_words", dst, src, words) for _ in range(passes)][-1]
        if not (skip and reads_pc):
            runs["instrumented" + tag] = instrumented
        for hooks in ((False, True) if not skip else (True,)):
            uc = bench._bare_unicorn(machine, isa, hooks)
            if skip:
                _skip_restore(uc, machine.state)

            def bare(uc=uc, machine=machine, src=src, dst=dst, entry=entry):
                for _ in range(passes):
                    set_arguments(machine.isa, uc, (dst, src, words), machine.stack_top)
                    uc.emu_start(entry, HALT)
            runs[("empty hooks" if hooks else "raw") + tag] = bare
    results = {name: run() for name, run in runs.items() if name.startswith("instr")}
    same = {(r.cycles, r.instructions, str(r.caches)) for r in results.values()}
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for name, run in runs.items():       # interleaved, as in emu.bench
            best[name] = min(best[name], bench._timed(run, 1))
    rate = {name: 2 * words * passes / t / 1e6 for name, t in best.items()}
    return rate, len(same) == 1 if len(results) == 2 else None


def main(isas):
    check_flag()
    names = ("raw", "empty hooks", "empty hooks no restore", "instrumented",
             "instrumented no restore")
    print("| ISA | " + " | ".join(names) + " | same cycles |")
    print("|---|" + "---:|" * len(names) + "---|")
    for isa in isas:
        rate, same = measure(isa)
        raw = rate["raw"]
        cells = [f"{rate[n]:.1f}" if n == "raw" else f"{rate[n]:.1f} ({rate[n] / raw:.2f})"
                 if n in rate else "-" for n in names]
        note = {True: "yes", False: "NO", None: "- (its store queues read the PC)"}[same]
        print(f"| {isa} | " + " | ".join(cells) + f" | {note} |")
    print("\nM guest memory accesses per second (ratio to raw), best of 5, layout 'offset'.")


if __name__ == "__main__":
    main(sys.argv[1:] or list(bench.COPY_LOOPS))
