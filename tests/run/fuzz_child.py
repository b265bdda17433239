"""The child process of tests/run/test_fuzz.py: random and mutated inputs on every ISA.

    python tests/run/fuzz_child.py SEED CASES

Prints one JSON line per case: {"case", "isa", "kind", "outcome", "error", "message"}. An
error of a class the library does not promise, or a crash, is for the parent to judge (a
signal kills this process: the parent sees its exit status)."""
import json
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import emu.isa.assemble as asm                                       # noqa: E402
from emu.isa.assemble import AssemblyError, assemble                 # noqa: E402
from emu.run.extable import ExceptionTableError                      # noqa: E402
from emu.hw.faults import GuestError                      # noqa: E402
from emu.run.machine import Machine

CPUS = {"ppc32": "ppc750", "ppc64": "power4", "arm": "cortex-a9", "x86": "pentium4"}
TOKENS = ["0", "-1", "0x7fffffff", "1 << 70", "9" * 40, "r3", "%eax", "(", ")", ",", "[", "]",
          ".", ":", "#", "@", ";", "/*", "*/", '"', "'", "\\", ".space", ".align", ".long",
          ".if", ".endif", "1b", "1f", "label", "\t", "$", "=", "+", "*", "<<", "\x00", "é"]
LIMIT = 20_000


def mutate(rng, source):
    lines = source.split("\n")
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(len(lines))
        how = rng.randrange(6)
        line = lines[k]
        if how == 0:
            del lines[k]
        elif how == 1:
            lines.insert(k, lines[rng.randrange(len(lines))])
        elif how == 2 and line:
            at = rng.randrange(len(line) + 1)
            lines[k] = line[:at] + rng.choice(TOKENS) + line[at:]
        elif how == 3 and line:
            at = rng.randrange(len(line))
            lines[k] = line[:at] + line[at + 1:]
        elif how == 4:
            j = rng.randrange(len(lines))
            lines[k], lines[j] = lines[j], lines[k]
        else:
            lines[k] = " ".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 5)))
    return "\n".join(lines)


def names_a_place(error):
    """Does the error name a line (assembly) or a PC (guest)?"""
    if isinstance(error, AssemblyError):
        return error.lineno is not None
    if isinstance(error, ExceptionTableError):
        return re.match(r"^\S+\.S:\d+: ", str(error)) is not None
    if isinstance(error, GuestError):
        return "PC 0x" in str(error)
    return False


def outcome(case, isa, kind, run):
    started = time.process_time()
    record = {"case": case, "isa": isa, "kind": kind}
    try:
        result = run()
        record.update(outcome="ok", result=result)
    except (AssemblyError, ExceptionTableError, GuestError) as error:
        record.update(outcome="error", error=type(error).__name__, message=str(error)[:300],
                      named=names_a_place(error))
    except MemoryError as error:              # a program too large for the code region
        record.update(outcome="error", error="MemoryError", message=str(error)[:300],
                      named="code region" in str(error))
    except Exception as error:                # noqa: BLE001 (the parent judges it)
        record.update(outcome="unexpected", error=type(error).__name__,
                      message=str(error)[:300])
    record["seconds"] = round(time.process_time() - started, 3)
    print(json.dumps(record), flush=True)
    return record


def main(seed, cases):
    rng = random.Random(seed)
    asm.WORKER_TIMEOUT_S = 10
    routines = {isa: sorted((ROOT / "routines" / isa.replace("ppc32", "ppc32")).glob("*.S"))
                for isa in CPUS}
    machines = {isa: Machine(cpu, instruction_limit=LIMIT) for isa, cpu in CPUS.items()}
    pairs = {isa: Machine(cpu, instruction_limit=LIMIT, cores=2)
             for isa, cpu in (("ppc32", "ppc750"), ("arm", "cortex-a9"))}
    for case in range(cases):
        isa = rng.choice(sorted(CPUS))
        kind = rng.choice(["mutant", "mutant", "bytes", "bytes2"])
        if kind == "bytes2" and isa not in pairs:
            kind = "bytes"

        def run_mutant():
            path = rng.choice(routines[isa])
            source = mutate(rng, path.read_text())
            program = assemble(source, isa, filename=path.name)
            m = Machine(CPUS[isa], instruction_limit=LIMIT)
            with m:
                m.load(program)
                entries = [s for s in program.globals if s in program.symbols] or \
                    [s for s in program.symbols if not s.startswith(".L")]
                if entries:
                    buf = m.alloc(8192)
                    r = m.call(rng.choice(entries), buf, buf + 4096, 64, 1)
                    return [r.return_value, r.instructions, r.cycles]

        code = bytes(rng.randrange(256) for _ in range(rng.choice([4, 16, 64, 256])))

        def run_bytes():
            m = machines[isa]
            at = m.alloc(4096, code)
            r = m.call(at, at, at + 1024, 16, 1)
            return [r.return_value, r.instructions, r.cycles]

        def run_two():
            m = pairs[isa]
            a, b = m.alloc(4096, code), m.alloc(4096, code[::-1])
            r = m.run_parallel([(a, a + 2048), (b, b + 2048)], limit=LIMIT)
            return [[x.return_value, x.instructions, x.cycles] for x in r.runs]
        outcome(case, isa, kind, {"mutant": run_mutant, "bytes": run_bytes,
                                  "bytes2": run_two}[kind])


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
