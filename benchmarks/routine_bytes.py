"""Digest every assembled program, to show a change to the assembler or to a routine's text
keeps the bytes and symbols identical (run it in two trees, then compare the two files).

Recorded: every routine under routines/ assembled on its own (with none, each one, and all
of the symbols its .ifdef/.ifndef lines test defined; a symbol it needs from the kernel model
gets a made-up value, the same in both trees), then every program the named tests assemble
(the kernel model's compositions at their bases: Dougan's entries, the Yoshioka write path).

    PYTHONPATH=. python benchmarks/routine_bytes.py OUT.json [TEST_FILE ...]
    python benchmarks/routine_bytes.py --compare BEFORE.json AFTER.json

(from the tree's root; the other tree's copy is run with PYTHONPATH=that tree, so that its emu
and its routines are the ones read: `git archive REV | tar -x -C /tmp/before` gives one).
Session 18 compared 0fe0d00 with the .macro routines: tests/papers/test_dougan1999_entry.py,
test_dougan1999_idle.py, test_ext3model.py, tests/kernel/test_kernel64.py, test_kernel603.py,
test_kernel_smp.py, test_kernel.py.
"""
import hashlib
import json
import re
import sys
from pathlib import Path

import emu.isa.assemble as asm
from emu.context import ROUTINES

UNKNOWN_RE = re.compile(r"unknown symbol '([^']+)'|(\w+) is not a \.equ symbol defined above")
REGISTER_RE = re.compile(r"[rc]\d+|cr\d|sp|lr|pc|ip|fp|sl|sb|lsl|lsr|asr|ror", re.IGNORECASE)
RECORDS = set()


def digest(program):
    symbols = json.dumps(sorted(program.symbols.items()))
    return hashlib.sha256(program.code + symbols.encode()).hexdigest()[:16]


def tree_free(filename):
    """A routine's path without the tree it is in (the two trees' paths differ)."""
    return re.sub(r"^.*/(routines/)", r"\1", filename)


def recording(assembled):
    def wrapper(source, isa, base, filename):
        program = assembled(source, isa, base, filename)
        RECORDS.add((isa, base, tree_free(filename), len(program.code), digest(program)))
        return program
    wrapper.cache_clear = assembled.cache_clear
    return wrapper


def missing_symbol(message, known):
    """The symbol an error says is missing: named by the parser, or the first name in
    the operands keystone could not resolve (a label of another file)."""
    m = UNKNOWN_RE.search(message)
    if m:
        return m.group(1) or m.group(2)
    m = re.search(r"cannot assemble '([^']*)': (Cannot find a symbol|Invalid operand)", message)
    if m:
        operands = m.group(1).partition(" ")[2]
        names = [n for n in asm.SYMBOL_RE.findall(operands)
                 if not REGISTER_RE.fullmatch(n) and n not in known and n[0] != "$"]
        return names[0] if names else None
    return None


def standalone(path, isa, defines):
    """The routine with ``defines`` set and every other symbol it lacks made up."""
    made_up = {}
    for _ in range(300):
        prelude = "".join(f".equ {s}, 1\n" for s in defines) + \
            "".join(f".equ {s}, {v:#x}\n" for s, v in made_up.items())
        try:
            return asm.assemble(prelude + path.read_text(), isa, 0x10000, str(path.name))
        except asm.AssemblyError as e:
            name = missing_symbol(e.message, set(made_up) | set(defines))
            if not name:
                return None
            made_up[name] = 0x1000 + 0x40 * len(made_up)
    return None


def routines():
    for path in sorted(ROUTINES.rglob("*.S")):
        isa = path.parent.name
        tested = sorted(set(re.findall(r"^\s*\.ifn?def\s+(\w+)", path.read_text(), re.MULTILINE)))
        for defines in [[]] + [[s] for s in tested] + ([tested] if len(tested) > 1 else []):
            program = standalone(path, isa, defines)
            RECORDS.add((isa, 0x10000, f"{path.parent.name}/{path.name} {defines}",
                         -1 if program is None else len(program.code),
                         program and digest(program)))


def main(out, tests):
    asm._assembled = recording(asm._assembled)
    routines()
    if tests:
        import pytest
        pytest.main(["-q", "-x", "-p", "no:cacheprovider", *tests])
    rows = sorted(RECORDS, key=lambda r: tuple(map(str, r)))
    Path(out).write_text(json.dumps(rows, indent=0))
    print(f"{len(rows)} programs, {sum(r[3] > 0 for r in rows)} assembled")


def compare(before, after):
    a, b = ({(r[0], r[1], tree_free(r[2]), *r[3:]) for r in json.loads(Path(f).read_text())}
            for f in (before, after))
    for row in sorted(a - b, key=str):
        print("only before:", row)
    for row in sorted(b - a, key=str):
        print("only after: ", row)
    print(f"{len(a)} before, {len(b)} after, {len(a & b)} identical")
    return 0 if a == b else 1


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    main(sys.argv[1], sys.argv[2:])
