"""Exception tables: a load or store that faults at a listed instruction resumes at its fixup.

Linux's user-copy routines (e.g. i386 ``__copy_user_zeroing``) may touch a user address that
is not mapped. The kernel does not treat that as a bug: the faulting instruction is listed in
the ``__ex_table`` section with the address of a fixup, and the page-fault handler, finding the
PC there (``fixup_exception``), resumes at the fixup, which counts the bytes not copied, zeroes
the rest of the destination and returns. A fault at an instruction that is not listed is a
kernel oops.

A routine of the book declares its entries as the kernel's source does::

        1:      rep movsb                   # may fault
        2:      ...
                ret
                .section .fixup, "ax"
        3:      ...                         # count, zero, then
                jmp     2b
                .previous
                .section __ex_table, "a"
                .align  4
                .long   1b, 3b              # (faulting instruction, fixup)
                .previous

Our assembler has no sections: it lays their contents where they stand. So the fixup code and
the table must stand where nothing falls into them (after a ``ret`` or ``jmp``); ``add`` checks
that, and that every entry names the first byte of an instruction of the program.

``Machine`` keeps one ``ExceptionTable`` (``machine.extable``): ``load`` adds each program's
entries, and ``call`` asks ``resume`` what to do when Unicorn stops on an unmapped or
protected data address: if the PC is listed, the run goes on at the fixup (``taken`` records
it); otherwise the fault is raised as before, as a ``GuestFault`` naming the PC, the
instruction and the address (the oops). Instruction fetches are never fixed up. The cost model
charges a block whole when it enters it; the instructions of the faulting block from the
fault on did not run, and are taken back when the run stops (emu_uncharge_faulted,
emu/hw/model/hooks.c). ``run_parallel`` uses the table too, for the core that faulted
(``Machine.resume_after_fault``); a task of ``run_tasks`` gets its call's fault in its
Python.

``unmapped_page(machine, address)`` takes a page out of the guest's memory for a while: the
"user address that is not mapped" of a test.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from dataclasses import dataclass

from ..hw.faults import ACCESS_NAMES, GuestError
from ..hw.layout import HEAP_BASE, PAGE
from ..isa.assemble import Program, _split_line, _strip_block_comments

TABLE_SECTION = "__ex_table"
FIXUP_SECTION = ".fixup"
#: what an instruction may end with so that the section after it is not fallen into
UNCONDITIONAL = {"x86": ("jmp", "ret", "retl", "ud2", "iret", "iretl", "ljmp", "hlt"),
                 "ppc32": ("b", "blr", "bctr", "rfi", "trap"),
                 "ppc64": ("b", "blr", "bctr", "rfid", "trap"),
                 "arm": ("b", "bx", "udf")}
MAX_FIXUPS_PER_CALL = 10_000
DATA_ACCESSES = {"read from unmapped memory", "write to unmapped memory",
                 "read from protected memory", "write to protected memory"}
_SECTION_RE = re.compile(r"^\.(section|pushsection)\s+([^\s,]+)")


@dataclass(frozen=True)
class Entry:
    """One line of an exception table: a fault at ``insn`` resumes at ``fixup``."""
    insn: int
    fixup: int
    filename: str
    lineno: int          # the line of the .long that declared it


@dataclass(frozen=True)
class Taken:
    """A fixup taken during a call: the faulting PC, where it resumed, and the access."""
    pc: int
    fixup: int
    address: int
    access: str


class ExceptionTableError(ValueError):
    """A malformed exception table: names the file and line."""


def _sections(source, isa):
    """{line number: section name} for every line of ``source`` ("text" outside sections).
    A section directive must stand on a line of its own."""
    current, previous, out = "text", "text", {}
    stack = []
    text = _strip_block_comments(source)
    for lineno, line in enumerate(text.split("\n"), 1):
        statements = _split_line(line, isa, "att")
        directives = [s for s in statements if s.lower().startswith(
            (".section", ".pushsection", ".popsection", ".previous", ".text", ".data"))]
        if directives:
            if len(statements) > 1:
                raise ExceptionTableError(
                    f"line {lineno}: put {directives[0].split()[0]} on a line of its own "
                    f"(exception tables are found line by line)\n    {line.strip()}")
            d = directives[0]
            m = _SECTION_RE.match(d)
            if m:
                if m.group(1) == "pushsection":
                    stack.append(current)
                previous, current = current, m.group(2).strip('"')
            elif d.lower().startswith(".popsection"):
                current = stack.pop() if stack else "text"
            elif d.lower().startswith(".previous"):
                previous, current = current, previous
            elif d.lower().startswith(".text"):
                previous, current = current, "text"
            else:
                previous, current = current, "data"
        out[lineno] = current
    return out


def _ends_flow(isa, text):
    """Whether an instruction never falls through to the next (a return, jump or trap)."""
    mnemonic, _, operands = text.strip().partition(" ")
    mnemonic = mnemonic.lower()
    if isa == "arm" and mnemonic in ("pop", "ldm", "ldmia", "ldmfd"):
        return "pc" in operands.lower()
    return mnemonic in UNCONDITIONAL.get(isa, ())


def entries_of(program: Program):
    """The exception-table entries a program declares (checked), in the order written."""
    if TABLE_SECTION not in program.source and FIXUP_SECTION not in program.source:
        return []
    where = program.filename

    def fail(message, s=None):
        at = f"{where}:{s.lineno}: " if s is not None else f"{where}: "
        raise ExceptionTableError(at + message + (f"\n    {s.line.strip()}" if s else ""))

    try:
        sections = _sections(program.source, program.isa)
    except ExceptionTableError as e:
        raise ExceptionTableError(f"{where}: {e}") from None
    section_of = [sections.get(s.lineno, "text") for s in program.statements]
    starts = {s.address for s, sec in zip(program.statements, section_of)
              if s.kind in ("insn", "ldr_const")}
    order = "big" if program.isa.startswith("ppc") else "little"

    # every stretch outside the text must follow an instruction that does not fall through
    last_insn = None
    for s, sec, before in zip(program.statements, section_of, ["text"] + section_of):
        if sec != "text" and before == "text" and s.encoding and last_insn is not None:
            if not _ends_flow(program.isa, last_insn.body):
                fail(f"section {sec} follows '{last_insn.body}', which falls through into "
                     "it: our assembler lays sections in place, so put them after a return "
                     "or jump", s)
        if s.kind in ("insn", "ldr_const") and s.encoding:
            last_insn = s

    words = []
    for s, sec in zip(program.statements, section_of):
        if sec != TABLE_SECTION or not s.encoding:
            continue
        if s.kind == "align":
            continue
        if s.kind != "data" or s.width != 4:
            fail(f"{TABLE_SECTION} holds only .long pairs (instruction, fixup)", s)
        for k in range(0, len(s.encoding), 4):
            words.append((int.from_bytes(s.encoding[k:k + 4], order), s))
    if len(words) % 2:
        fail(f"{TABLE_SECTION} has an odd number of words: each entry is a pair "
             "(faulting instruction, fixup)", words[-1][1])
    entries = []
    for (insn, s), (fixup, _) in zip(words[::2], words[1::2]):
        for what, address in (("faulting instruction", insn), ("fixup", fixup)):
            if address not in starts:
                name = program.symbol_at(address) if address >= program.base else None
                fail(f"the {what} address {address:#x} ({name or 'outside the program'}) "
                     "is not the start of an instruction of this program", s)
        entries.append(Entry(insn, fixup, where, s.lineno))
    return entries


class ExceptionTable:
    """The exception-table entries of every program loaded in a machine, by faulting PC."""

    def __init__(self):
        self.entries: dict[int, Entry] = {}
        self.taken: list[Taken] = []

    def __len__(self):
        return len(self.entries)

    def __contains__(self, pc):
        return pc in self.entries

    def add(self, program: Program):
        """Add a program's entries (see ``entries_of``); returns them."""
        found = entries_of(program)
        for e in found:
            old = self.entries.get(e.insn)
            if old is not None and old.fixup != e.fixup:
                raise ExceptionTableError(
                    f"{e.filename}:{e.lineno}: instruction {e.insn:#x} already has the fixup "
                    f"{old.fixup:#x} ({old.filename}:{old.lineno}); one fixup per instruction")
        for e in found:
            self.entries[e.insn] = e
        return found

    def fixup(self, pc):
        """The fixup address for a fault at ``pc``, or None (not listed)."""
        e = self.entries.get(pc)
        return None if e is None else e.fixup

    def resume(self, machine):
        """Unicorn stopped ``machine``'s call on an error: the PC to resume at (the fixup of
        a listed data access that faulted, the fault recorded in ``taken``), or None when
        the error is to be raised as it is."""
        fault = machine.stop_record
        if not fault or fault[0] != "memory":
            return None
        access = ACCESS_NAMES.get(fault[1], "")
        if access not in DATA_ACCESSES:
            return None
        pc = fault[4] if len(fault) > 4 else machine.pc()   # the PC at the first fault
        fixup = self.fixup(pc)
        if fixup is None:
            return None
        if len(self.taken) >= MAX_FIXUPS_PER_CALL:
            raise GuestError(f"{len(self.taken):,} exception fixups in one call, the last at "
                             f"PC {pc:#x} ({machine.symbolize(pc)}): a fixup that resumes at "
                             "an instruction that faults again?")
        self.taken.append(Taken(pc, fixup, fault[2], access))
        machine.stop_record = None
        return fixup


@contextmanager
def unmapped_page(machine, address):
    """Take the page at ``address`` (page aligned, inside RAM, not page 0) out of every core's
    memory map for the duration of the block, then map the same bytes back."""
    if address % PAGE or not PAGE <= address < machine.ram_size:
        raise ValueError(f"{address:#x} is not a page of RAM (page aligned, from {PAGE:#x} to "
                         f"{machine.ram_size:#x})")
    if address < HEAP_BASE or address >= machine.stack_top - (1 << 20):
        raise ValueError(f"{address:#x} is not a heap page (code and stack stay mapped)")
    from unicorn import UC_PROT_ALL
    for uc in machine.cpus:
        uc.mem_unmap(address, PAGE)
    try:
        yield address
    finally:
        for uc in machine.cpus:
            uc.mem_map_ptr(address, PAGE, UC_PROT_ALL, machine.ram_base_ptr + address)
