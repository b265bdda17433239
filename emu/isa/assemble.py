"""Assemble and disassemble GNU-style source for ppc32, ppc64, arm (A32) and x86 (32-bit).

Keystone does the instruction encoding, but it is fragile: it drops some statements without an
error, does not know GNU numeric local labels, and can crash the process. So this module is a
small GNU-as front end around it:

* it parses comments, labels (including ``1:`` / ``1b`` / ``1f``), and the directives a kernel
  ``.S`` file uses (``.globl .equ .set .long .word .byte .align .space .ascii`` ...) itself,
  and conditional assembly (``.if``/``.ifdef``/``.ifndef``, ``.elseif``, ``.else``,
  ``.endif`` on numbers and ``.equ`` symbols: a routine's SMP build, say), and macros
  (``.macro NAME ARG[=DEFAULT]`` ... ``.endm``, as GNU as: ``\\ARG``, ``\\@`` the number of
  the expansion for labels of their own, ``\\()``, ``.exitm``, ``.purgem``); an expanded line
  keeps its line number in the macro, and an error there names the use's line too;
* it lays the code out itself and hands keystone one instruction at a time, with every symbol
  already replaced by its value, so each statement's encoding is checked (nothing is dropped
  silently) and every error names the file, the line number and the line;
* keystone runs in a child process (``_keystone_worker.py``): a crash there becomes an
  ``AssemblyError``, never a dead notebook kernel.
"""
from __future__ import annotations

import ast
import bisect
import dataclasses
import functools
import json
import operator
import os
import re
import platform
import select
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

ISAS = ("ppc32", "ppc64", "arm", "x86")
BIG_ENDIAN = {"ppc32": True, "ppc64": True, "arm": False, "x86": False}
NOP = {"ppc32": bytes.fromhex("60000000"), "ppc64": bytes.fromhex("60000000"),
       "arm": bytes.fromhex("0000a0e1"), "x86": b"\x90"}      # ori 0,0,0 / mov r0,r0 / nop
# .word is 4 bytes on ARM (tc-arm overrides it), 2 bytes elsewhere (GNU as default).
DATA_SIZES = {".byte": 1, ".short": 2, ".hword": 2, ".half": 2, ".2byte": 2, ".long": 4,
              ".int": 4, ".4byte": 4, ".quad": 8, ".8byte": 8, ".word": None}
IGNORED_DIRECTIVES = {
    ".text", ".data", ".bss", ".section", ".previous", ".pushsection", ".popsection", ".type",
    ".size", ".file", ".ident", ".machine", ".arm", ".syntax", ".fpu", ".cpu", ".arch",
    ".eabi_attribute", ".note", ".local", ".weak", ".hidden", ".ltorg", ".pool", ".func",
    ".endfunc", ".abiversion", ".option", ".nolist", ".list", ".protected", ".code32",
    ".cfi_startproc", ".cfi_endproc", ".cfi_sections", ".cfi_def_cfa_offset", ".cfi_offset",
    ".cfi_restore", ".cfi_adjust_cfa_offset", ".cfi_def_cfa_register", ".cfi_rel_offset",
    ".loc", ".p2alignl",
}
CONDITIONALS = (".if", ".ifdef", ".ifndef", ".elseif", ".else", ".endif")
SYMBOL_RE = re.compile(r"[A-Za-z_.$][\w.$]*")
# a .if condition may compare two expressions (not <<, >>)
COMPARISON_RE = re.compile(r"(.+?)\s*(==|!=|<>|<=|>=|(?<![<>])<(?![<=>])|(?<![<>])>(?![>=]))\s*(.+)")
COMPARISONS = {"==": operator.eq, "!=": operator.ne, "<>": operator.ne, "<=": operator.le,
               ">=": operator.ge, "<": operator.lt, ">": operator.gt}
PREFIXES = {"rep", "repe", "repz", "repne", "repnz", "lock"}
WORKER = Path(__file__).with_name("_keystone_worker.py")
WORKER_TIMEOUT_S = 30
# Bounds on one program: every statement is a request to keystone (about 0.1 ms each, and
# several passes), so a 1 MB source took a minute; nothing bounded the bytes .space could add
# (2.7 GB from 40 lines). The largest routine of the book has 702 lines, 27 KB.
MAX_SOURCE_CHARS = 1 << 20
MAX_STATEMENTS = 1 << 15
MAX_PROGRAM_BYTES = 64 << 20


def _shorten(text, most):
    """``text``, or its start and how long it was (a 5,000-digit operand, a 1 MB line)."""
    return text if len(text) <= most else f"{text[:most - 40]}... ({len(text):,} characters)"


class AssemblyError(ValueError):
    """Bad assembly source: names the file, the line number and the line."""

    def __init__(self, message, filename="<source>", lineno=None, line=None, expansion=""):
        if expansion:
            message = f"{message} ({expansion})"
        self.message, self.filename, self.lineno, self.line = message, filename, lineno, line
        where = f"{filename}:{lineno}: " if lineno else f"{filename}: "
        text = where + _shorten(message, 400)
        if line is not None:
            text += f"\n    {_shorten(line.strip(), 200)}"
        super().__init__(text)


@dataclass
class Statement:
    """One statement of the source, as laid out in memory."""
    lineno: int
    line: str                   # the source line it came from
    kind: str                   # insn | data | bytes | align | space | ldr_const
    body: str                   # instruction text, or the directive's arguments
    syntax: str = ""            # x86: att | intel
    width: int = 0              # data: bytes per value; align: alignment
    address: int = 0
    encoding: bytes = b""
    expansion: str = ""         # "in macro X (used on line N)" for a line a macro gave


#: Program.instruction_texts' disassemblies by (isa, base, code, instructions), the oldest
#: dropped past _TEXTS_KEPT
_TEXTS, _TEXTS_KEPT = {}, 8


@dataclass
class Program:
    """Assembled code: bytes to load at ``base``, its symbols and a listing."""
    isa: str
    base: int
    code: bytes
    symbols: dict
    globals: list
    statements: list
    filename: str = "<source>"
    source: str = ""

    def address(self, symbol):
        if symbol not in self.symbols:
            names = ", ".join(sorted(s for s in self.symbols if not s.startswith(".L")))
            raise KeyError(f"no symbol {symbol!r} in {self.filename} (it defines: {names})")
        return self.symbols[symbol]

    def instructions(self):
        """(address, size) of every instruction statement, in address order."""
        return [(s.address, len(s.encoding)) for s in self.statements
                if s.kind in ("insn", "ldr_const")]

    def instruction_texts(self, isa=None):
        """{address: 'mnemonic operands'} of every instruction statement as ``isa``'s
        disassembler reads it (the program's own by default; a machine's may differ),
        disassembled once per program and ISA (a profile's table lists them all, a paced
        run profiles many times)."""
        isa = isa or self.isa
        memo = self.__dict__.setdefault("_instruction_texts", {})
        texts = memo.get(isa)
        if texts is None:
            # the same code at the same place reads the same (a chapter builds many
            # Machines of one kernel: each its own Program)
            key = (isa, self.base, self.code, tuple(self.instructions()))
            texts = _TEXTS.get(key)
            if texts is None:
                texts = {address: disassemble_one(self.code[address - self.base:
                                                            address - self.base + size],
                                                  isa, address)
                         for address, size in key[3]}
                if len(_TEXTS) >= _TEXTS_KEPT:
                    _TEXTS.pop(next(iter(_TEXTS)))
                _TEXTS[key] = texts
            memo[isa] = texts
        return texts

    def symbol_at(self, address):
        """The nearest symbol at or below an address (for profiles and fault messages); of
        several at one address, the first defined. A bisection of the symbols' addresses,
        sorted once (a guest halt names its PC, thousands of times in a paced run)."""
        index = self.__dict__.get("_symbol_index")
        if index is None or index[0] != len(self.symbols):
            first = {}
            for name, value in self.symbols.items():
                if not name.startswith(".L") and value not in first:
                    first[value] = name
            values = sorted(first)
            index = (len(self.symbols), values, [first[v] for v in values])
            self._symbol_index = index
        _, values, names = index
        i = bisect.bisect_right(values, address)
        return names[i - 1] if i else None

    def listing(self):
        lines = []
        for s in self.statements:
            if s.encoding:
                shown = s.encoding[:8].hex() + ("..." if len(s.encoding) > 8 else "")
                lines.append(f"{s.address:08x}  {shown:<19}  {s.line.strip()}")
        return "\n".join(lines)


# ---------------------------------------------------------------- source text -> statements

LABEL_RE = re.compile(r"^\s*([A-Za-z_.$][\w.$]*|\d+)\s*:(?!:)")
EQUALS_RE = re.compile(r"^\s*([A-Za-z_.$][\w.$]*)\s*=\s*(.+)$")
NUMERIC_REF_RE = re.compile(r"(?<![\w.$])(\d+)([bf])(?![\w.$])")
PPC_REG_RE = re.compile(r"(?<![\w.$%])%?([rf])(\d{1,2})(?![\w.$])")
DOT_RE = re.compile(r"(?<![\w.$])\.(?![\w.$])")       # '.', the statement's own address
MNEMONIC_RE = re.compile(r"^[A-Za-z_][\w.]*[+-]?$")
SYMBOL_RE = re.compile(r"(?<![\w.$%])([A-Za-z_.$][\w.$]*)")


def _strip_block_comments(text, filename="<source>"):
    """Remove /* ... */ comments, keeping newlines so line numbers stay right. One pass over
    the text (a regular expression took minutes on many unclosed comments: each was searched
    to the end of the text); an unclosed comment is an error naming its line."""
    out, at = [], 0
    while (start := text.find("/*", at)) >= 0:
        end = text.find("*/", start + 2)
        if end < 0:
            lineno = text.count("\n", 0, start) + 1
            raise AssemblyError("this /* comment is never closed (no */ below it)", filename,
                                lineno, text[text.rfind("\n", 0, start) + 1:].split("\n")[0])
        out += [text[at:start], "\n" * text.count("\n", start, end)]
        at = end + 2
    return "".join(out) + text[at:]


def _comment_chars(isa, syntax):
    if isa == "arm":
        return ("@", "//")
    if isa == "x86" and syntax == "intel":
        return ("#", ";")
    return ("#",)


def _split_line(line, isa, syntax):
    """Cut the comment off a line and split it into statements at ';' separators."""
    if isa == "arm" and line.lstrip().startswith("#"):
        return []                      # a whole-line '#' comment (cpp line markers)
    comments = _comment_chars(isa, syntax)
    separator = None if (isa == "x86" and syntax == "intel") else ";"
    if '"' not in line:                # no string: the comment and separators by find/split
        cuts = [at for at in (line.find(c) for c in comments) if at >= 0]
        text = line[:min(cuts)] if cuts else line
        parts = text.split(separator) if separator else [text]
        return [s.strip() for s in parts if s.strip()]
    statements, current, quote = [], "", None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            current += ch
            if ch == "\\" and i + 1 < len(line):
                current += line[i + 1]
                i += 1
            elif ch == quote:
                quote = None
        elif ch == '"':
            quote = ch
            current += ch
        elif any(line.startswith(c, i) for c in comments):
            break
        elif ch == separator:
            statements.append(current)
            current = ""
        else:
            current += ch
        i += 1
    statements.append(current)
    return [s.strip() for s in statements if s.strip()]


class _Parser:
    def __init__(self, isa, filename):
        self.isa, self.filename = isa, filename
        self.syntax = "att" if isa == "x86" else ""
        self.statements: list[Statement] = []
        self.labels: dict[str, int] = {}       # name -> index of the statement it precedes
        self.equates: dict[str, tuple] = {}    # name -> (expression, lineno, line)
        self.globals: list[str] = []
        self.global_lines: dict[str, tuple] = {}
        self.numeric_count: dict[str, int] = {}
        self.forward_refs: list[tuple] = []    # (1f, the name it became, lineno, line)
        self.pending_prefix = ""
        self.prefix_line = (None, None)
        self.conditions: list[list] = []       # open .if blocks: [taking, taken, lineno, line]
        self.macros: dict[str, Macro] = {}
        self.defining: Macro | None = None     # the .macro whose body is being read
        self.expanding: list[tuple] = []       # (macro, the use's line number): innermost last
        self.expansions = 0                    # \@: how many macros were expanded before
        self.exit_macro = False                # .exitm seen: skip the rest of this expansion

    def where(self):
        """Which expansion the current line came from ('' outside macros)."""
        if not self.expanding:
            return ""
        macro, use = self.expanding[-1]
        text = f"in macro {macro.name}, used on line {use}"
        if len(self.expanding) > 1:
            outer, first = self.expanding[0]
            text += (f", inside {len(self.expanding) - 1} more expansion(s) from macro "
                     f"{outer.name} used on line {first}")
        return text

    def error(self, message, lineno, line):
        return AssemblyError(message, self.filename, lineno, line, self.where())

    def parse(self, source):
        text = _strip_block_comments(source, self.filename)
        self.lines(enumerate(text.split("\n"), 1))
        if self.defining:
            raise self.error(f".macro {self.defining.name} without its .endm",
                             self.defining.lineno, self.defining.line)
        if self.conditions:
            raise self.error(".if without its .endif", *self.conditions[-1][2:])
        if self.pending_prefix:
            raise self.error(f"prefix {self.pending_prefix.strip()!r} is not followed by an "
                             "instruction", *self.prefix_line)
        for ref, name, lineno, line in self.forward_refs:
            if name not in self.labels:       # else keystone names our internal .L1$0
                raise self.error(f"'{ref}' refers forward to a label {ref[:-1]}: that is not "
                                 "defined below", lineno, line)
        return self

    def lines(self, numbered):
        """Read numbered source lines: a .macro's body is kept, everything else parsed."""
        for lineno, line in numbered:
            if self.defining:
                self.macro_line(lineno, line)
                continue
            for stmt in _split_line(line, self.isa, self.syntax):
                try:
                    self.statement(stmt, lineno, line)
                except AssemblyError:
                    raise
                except (ValueError, IndexError, OverflowError, RecursionError,
                        MemoryError) as e:        # every error names its line
                    raise self.error(f"cannot read this statement: {e}", lineno,
                                     line) from None
                if len(self.statements) > MAX_STATEMENTS:
                    raise self.error(f"more than {MAX_STATEMENTS:,} statements: the largest "
                                     "routine of the book has 702 lines", lineno, line)
                if self.defining or self.exit_macro:
                    break                 # (the rest of a .macro line is not read)
            if self.exit_macro:
                return

    def macro_line(self, lineno, line):
        """One line of the body of the .macro being defined: kept as it is, up to the
        .endm that closes it (a .macro inside the body nests)."""
        first = _split_line(line, self.isa, self.syntax)[:1]
        word = first[0].split(None, 1)[0].lower() if first else ""
        macro = self.defining
        if word == ".macro":
            macro.depth += 1
        elif word in (".endm", ".endmacro"):
            if macro.depth == 0:
                self.defining = None
                macro.check_references(self)
                self.macros[macro.name.lower()] = macro
                return
            macro.depth -= 1
        macro.body.append((lineno, line))

    def define_macro(self, args, lineno, line):
        """.macro NAME [ARG[=DEFAULT][:req|:vararg]][, ...]: its body follows, to .endm."""
        name, _, rest = args.replace("\t", " ").partition(" ")
        name = name.rstrip(",")
        if not SYMBOL_RE.fullmatch(name):
            raise self.error(f".macro needs a name, not {name!r}", lineno, line)
        if name.lower() in self.macros:           # (GNU as: names in any case are one)
            first = self.macros[name.lower()]
            raise self.error(f"macro {name} is already defined on line {first.lineno}",
                             lineno, line)
        params = []
        for piece in _macro_pieces(rest):
            m = MACRO_PARAM_RE.fullmatch(piece)
            if not m:
                raise self.error(f"cannot read the macro parameter {piece!r}", lineno, line)
            param, qualifier, default = m.group(1), m.group(2), m.group(3)
            if any(p[0] == param for p in params):
                raise self.error(f"macro {name} names its parameter {param} twice", lineno,
                                 line)
            if params and params[-1][2] == "vararg":
                raise self.error("only the last parameter may be :vararg", lineno, line)
            params.append((param, _unquote(default or ""), (qualifier or "").lower()))
        self.defining = Macro(name, params, lineno, line)

    def expand(self, macro, args, lineno, line):
        """A macro's use: its body with the arguments in place, read line by line (each
        keeps its own line number in the macro; an error names the use's line too)."""
        if len(self.expanding) >= MAX_MACRO_DEPTH:
            raise self.error(f"macro {macro.name} is used more than {MAX_MACRO_DEPTH} deep "
                             "(a recursion without end?)", lineno, line)
        values = self.macro_arguments(macro, args, lineno, line)
        number, self.expansions = str(self.expansions), self.expansions + 1
        body = [(n, macro.substitute(text, values, number)) for n, text in macro.body]
        self.expanding.append((macro, lineno))
        depth = len(self.conditions)
        try:
            self.lines(body)
            if self.defining:
                raise self.error(f".macro {self.defining.name} inside macro {macro.name} "
                                 "without its .endm", self.defining.lineno,
                                 self.defining.line)
            if len(self.conditions) > depth and not self.exit_macro:
                raise self.error(".if without its .endif in the macro",
                                 *self.conditions[-1][2:])
            del self.conditions[depth:]       # (.exitm leaves the macro's .if blocks)
        finally:
            self.expanding.pop()
            self.exit_macro = False

    def macro_arguments(self, macro, args, lineno, line):
        """name -> value: positional arguments in order, NAME=VALUE by name, then the
        defaults; an argument the macro does not have is an error."""
        names = [p[0] for p in macro.params]
        values, position = {}, 0
        pieces = _macro_pieces(args)
        for k, piece in enumerate(pieces):
            m = re.fullmatch(r"([A-Za-z_][\w$]*)\s*=(?!=)\s*(.*)", piece, re.DOTALL)
            if m:
                if m.group(1) not in names:
                    raise self.error(f"macro {macro.name} has no parameter {m.group(1)} "
                                     f"(it has: {', '.join(names) or 'none'})", lineno, line)
                values[m.group(1)] = _unquote(m.group(2))
                position = names.index(m.group(1)) + 1
                continue
            if position >= len(names):
                raise self.error(f"macro {macro.name} takes {len(names)} arguments: "
                                 f"{piece!r} is one too many", lineno, line)
            if macro.params[position][2] == "vararg":
                values[names[position]] = ", ".join(pieces[k:])
                break
            values[names[position]] = _unquote(piece)
            position += 1
        for param, default, qualifier in macro.params:
            if param not in values and qualifier == "req":
                raise self.error(f"macro {macro.name} needs its argument {param}", lineno,
                                 line)
            values.setdefault(param, default)
        return values

    def define_label(self, name, lineno, line):
        if name.isdigit():
            k = self.numeric_count.get(name, 0)
            self.numeric_count[name] = k + 1
            name = f".L{name}${k}"
        if name in self.labels or name in self.equates:
            raise self.error(f"symbol {name!r} is defined twice", lineno, line)
        self.labels[name] = len(self.statements)

    def numeric_refs(self, text, lineno, line):
        """Rewrite 1b/1f into the unique names the numeric labels were given."""
        def rename(m):
            k = self.numeric_count.get(m.group(1), 0)
            k = k - 1 if m.group(2) == "b" else k
            if k < 0:
                raise self.error(f"'{m.group(0)}' refers back to a label {m.group(1)}: "
                                 "that is not defined above", lineno, line)
            if m.group(2) == "f":
                self.forward_refs.append((m.group(0), f".L{m.group(1)}${k}", lineno, line))
            return f".L{m.group(1)}${k}"
        return NUMERIC_REF_RE.sub(rename, text)

    def add(self, kind, body, lineno, line, width=0):
        self.statements.append(Statement(lineno, line, kind, body, self.syntax, width,
                                         expansion=self.where()))

    def statement(self, stmt, lineno, line):
        name = stmt.split(None, 1)[0].lower() if stmt.startswith(".") else ""
        if name in CONDITIONALS:
            return self.conditional(name, stmt[len(name):].strip(), lineno, line)
        if not all(c[0] for c in self.conditions):
            return                              # inside a block whose condition is false
        while (m := LABEL_RE.match(stmt)):
            self.define_label(m.group(1), lineno, line)
            stmt = stmt[m.end():].strip()
        if not stmt:
            return
        word, _, args = stmt.replace("\t", " ").partition(" ")
        if word.lower() in self.macros:
            return self.expand(self.macros[word.lower()], args.strip(), lineno, line)
        if (m := EQUALS_RE.match(stmt)) and not stmt.startswith("."):
            return self.equate(m.group(1), m.group(2), lineno, line)
        if stmt.startswith("."):
            return self.directive(stmt, lineno, line)
        self.instruction(stmt, lineno, line)

    def conditional(self, name, args, lineno, line):
        """Conditional assembly, as GNU as: .if EXPR / .ifdef SYM / .ifndef SYM, .elseif
        EXPR, .else, .endif. A condition may use numbers and .equ symbols defined above it
        (a label's address is not known while parsing)."""
        if name in (".if", ".ifdef", ".ifndef"):
            outer = all(c[0] for c in self.conditions)
            value = outer and self.condition(name, args, lineno, line)
            self.conditions.append([value, value, lineno, line])
            return
        if not self.conditions:
            raise self.error(f"{name} without an .if above it", lineno, line)
        block = self.conditions[-1]
        outer = all(c[0] for c in self.conditions[:-1])
        if name == ".endif":
            self.conditions.pop()
        elif block[1] is None:
            raise self.error(f"{name} after the .else of the .if on line {block[2]}", lineno,
                             line)
        elif name == ".else":
            block[0], block[1] = outer and not block[1], None
        else:                                   # .elseif
            block[0] = outer and not block[1] and self.condition(".if", args, lineno, line)
            block[1] = block[1] or block[0]

    def condition(self, name, args, lineno, line):
        if name != ".if":
            if not SYMBOL_RE.fullmatch(args):
                raise self.error(f"{name} needs one symbol name", lineno, line)
            return (args in self.equates or args in self.labels) == (name == ".ifdef")
        if not args:
            raise self.error(".if needs a condition", lineno, line)

        def lookup(symbol, seen=()):
            if symbol in self.labels:
                raise ValueError(f"a label ({symbol}) has no value while the .if is read")
            if symbol in seen:
                raise ValueError(f"{symbol} is defined in terms of itself")
            if symbol not in self.equates:
                raise ValueError(f"{symbol} is not a .equ symbol defined above")
            return evaluate(self.equates[symbol][0], lambda n: lookup(n, seen + (symbol,)))
        try:
            m = COMPARISON_RE.fullmatch(args)
            if m:
                left, right = evaluate(m.group(1), lookup), evaluate(m.group(3), lookup)
                return COMPARISONS[m.group(2)](left, right)
            return evaluate(args, lookup) != 0
        except ValueError as e:
            raise self.error(f"cannot evaluate the .if condition: {e}", lineno, line) from None

    def equate(self, name, expr, lineno, line):
        if name in self.labels:
            raise self.error(f"symbol {name!r} is already a label", lineno, line)
        if name in self.equates and self.equates[name][0] != self.numeric_refs(expr, lineno,
                                                                                line):
            # GNU as lets .set change a value part-way; here a symbol has one value for the
            # whole file, so every use would silently get the last one
            raise self.error(f"symbol {name!r} is already defined on line "
                             f"{self.equates[name][1]}: it cannot take another value",
                             lineno, line)
        self.equates[name] = (self.numeric_refs(expr, lineno, line), lineno, line)

    def directive(self, stmt, lineno, line):
        name, _, args = stmt.partition(" ")
        if "\t" in name:
            name, _, rest = name.partition("\t")
            args = rest + " " + args
        name, args = name.lower(), args.strip()
        args = self.numeric_refs(args, lineno, line)
        if name == ".macro":
            self.define_macro(args, lineno, line)
        elif name in (".endm", ".endmacro"):
            raise self.error(f"{name} without a .macro above it", lineno, line)
        elif name == ".exitm":
            if not self.expanding:
                raise self.error(".exitm outside a macro", lineno, line)
            self.exit_macro = True
        elif name == ".purgem":
            if args.lower() not in self.macros:
                raise self.error(f".purgem: no macro {args!r} is defined", lineno, line)
            del self.macros[args.lower()]
        elif name in (".globl", ".global"):
            for a in args.split(","):
                if a.strip():
                    self.globals.append(a.strip())
                    self.global_lines[a.strip()] = (lineno, line)
        elif name in (".equ", ".set", ".equiv"):
            sym, _, expr = args.partition(",")
            if not sym.strip() or not expr.strip():
                raise self.error(f"{name} needs a name and a value", lineno, line)
            self.equate(sym.strip(), expr.strip(), lineno, line)
        elif name in DATA_SIZES:
            width = DATA_SIZES[name] or (4 if self.isa == "arm" else 2)
            self.add("data", args, lineno, line, width)
        elif name in (".ascii", ".asciz", ".string"):
            try:
                end = b"" if name == ".ascii" else b"\0"     # .asciz ends each string
                data = b"".join(_string_literal(s) + end for s in _split_operands(args))
            except ValueError as e:
                raise self.error(str(e), lineno, line) from None
            self.statements.append(Statement(lineno, line, "bytes", args, encoding=data,
                                             expansion=self.where()))
        elif name in (".align", ".balign", ".p2align"):
            if not _split_operands(args):
                raise self.error(f"{name} needs an alignment", lineno, line)
            self.add("align", f"{name} {args}", lineno, line)
        elif name in (".space", ".skip", ".zero"):
            if not _split_operands(args):
                raise self.error(f"{name} needs a number of bytes", lineno, line)
            self.add("space", args, lineno, line)
        elif name in (".intel_syntax", ".att_syntax"):
            if self.isa != "x86":
                raise self.error(f"{name} is for x86 only", lineno, line)
            if (name, args) in ((".intel_syntax", "prefix"), (".att_syntax", "noprefix")):
                raise self.error(f"{name} {args} is not supported", lineno, line)
            self.syntax = "intel" if name == ".intel_syntax" else "att"
        elif name in (".thumb", ".code", ".code16", ".force_thumb", ".thumb_func"):
            if name == ".code" and args == "32":
                return
            raise self.error("only A32 (ARM) code is supported, not Thumb", lineno, line)
        elif name in IGNORED_DIRECTIVES or name.startswith(".cfi_"):
            return
        else:
            raise self.error(f"unknown or unsupported directive {name}", lineno, line)

    def instruction(self, stmt, lineno, line):
        mnemonic, _, operands = stmt.partition(" ")
        if "\t" in mnemonic:
            mnemonic, _, rest = mnemonic.partition("\t")
            operands = rest + " " + operands
        if not MNEMONIC_RE.match(mnemonic):
            # keystone hangs on statements that do not start with a word: refuse them here
            raise self.error(f"{mnemonic!r} is not an instruction mnemonic", lineno, line)
        operands = self.numeric_refs(operands.strip(), lineno, line)
        why = _keystone_problem(operands) or _operand_problem(self.isa, operands)
        if why:
            raise self.error(f"cannot assemble {stmt!r}: {why}", lineno, line)
        if self.isa == "x86" and mnemonic.lower() in PREFIXES and operands and \
                not re.match(r"^[A-Za-z][A-Za-z0-9]*(\s|$)", operands):
            # keystone waits forever on a prefix before anything but an instruction
            raise self.error(f"{mnemonic} must be followed by an instruction, not "
                             f"{_shorten(operands, 40)!r}", lineno, line)
        if self.isa == "x86" and mnemonic.lower() in PREFIXES and not operands:
            self.pending_prefix += mnemonic + " "      # "rep; movsl": join with what follows
            self.prefix_line = (lineno, line)
            return
        if self.isa in ("ppc32", "ppc64"):
            operands = PPC_REG_RE.sub(lambda m: m.group(2), operands)
        text = (self.pending_prefix + mnemonic + " " + operands).strip()
        self.pending_prefix = ""
        if self.isa == "x86" and self.syntax == "intel":
            text = _intel_string_ops(text)
        if self.isa == "arm":
            m = re.match(r"^ldr(\w*)\s+(\w+)\s*,\s*=\s*(.+)$", text, re.I)
            if m:
                if m.group(1):
                    raise self.error("conditional 'ldr rX, =value' is not supported", lineno, line)
                self.add("ldr_const", f"{m.group(2)},{m.group(3)}", lineno, line)
                return
        self.add("insn", text, lineno, line)


# GNU as's default limit on macros inside macros (-max-macro-nest, gas/macro.c)
MAX_MACRO_DEPTH = 100
MACRO_PARAM_RE = re.compile(r"([A-Za-z_][\w$]*)(?:\s*:\s*(req|vararg))?(?:\s*=\s*(.*))?",
                            re.IGNORECASE | re.DOTALL)
MACRO_REF_RE = re.compile(r"\\(@|\(\)|[A-Za-z_][\w$]*)")


@dataclass
class Macro:
    """A .macro: its parameters (name, default, qualifier) and body lines (number, text)."""
    name: str
    params: list
    lineno: int
    line: str
    body: list = dataclasses.field(default_factory=list)
    depth: int = 0                  # .macro lines inside the body not yet closed

    def check_references(self, parser):
        """Every \\NAME outside a string must be a parameter (a typo would otherwise
        reach the instruction as a backslash)."""
        names = {p[0] for p in self.params}
        for lineno, text in self.body:
            unquoted = re.sub(r'"(\\.|[^"\\])*"', '""', text)
            for m in MACRO_REF_RE.finditer(unquoted):
                if m.group(1) not in ("@", "()") and m.group(1) not in names:
                    raise parser.error(f"macro {self.name} has no parameter "
                                       f"{m.group(1)} (it has: "
                                       f"{', '.join(sorted(names)) or 'none'})", lineno, text)

    def substitute(self, text, values, number):
        """A body line with \\ARG, \\@ (the expansion's number) and \\() replaced."""
        def value(m):
            ref = m.group(1)
            if ref == "@":
                return number
            if ref == "()":
                return ""
            return values.get(ref, m.group(0))       # (a \\n in a string stays)
        return MACRO_REF_RE.sub(value, text)


def _macro_pieces(text):
    """A .macro's parameters or a use's arguments: separated by commas, or by blanks when
    there is no comma (GNU as takes both)."""
    pieces = _split_operands(text)
    if len(pieces) == 1 and "," not in text:
        pieces = _blank_pieces(pieces[0])
    return pieces


def _blank_pieces(text):
    """Split at blanks outside quotes and brackets, keeping NAME = VALUE together."""
    text = re.sub(r"\s*=\s*", "=", text)
    parts, depth, quote, current = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch == '"':
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch.isspace() and depth == 0:
            if current:
                parts.append(current)
            current = ""
            continue
        current += ch
    return parts + ([current] if current else [])


def _unquote(text):
    """GNU as drops the double quotes around a macro argument ("a b" is one argument)."""
    text = text.strip()
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


_CLOSES = {"(": ")", "[": "]", "{": "}"}


def _bracket_problem(text):
    """An unbalanced bracket: keystone hangs on some (PowerPC 'lwz 3, 4(5))') and silently
    reads others as if closed (x86 Intel 'mov eax, [esp+4')."""
    opened, quote = [], None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in _CLOSES:
            opened.append(ch)
        elif ch in _CLOSES.values():
            if not opened or _CLOSES[opened.pop()] != ch:
                return f"unexpected '{ch}'"
    return f"missing '{_CLOSES[opened[-1]]}'" if opened else None


def _operand_problem(isa, operands):
    """Why the operands must not reach keystone, or None. PowerPC operands are expressions
    (d(rA) included): keystone's PowerPC parser loops forever on many malformed ones (a
    trailing operator or backquote, 'r3+'), so each must read as an expression."""
    why = _bracket_problem(operands)
    if why:
        return why
    if "::" in operands:              # keystone's x86 and ARM parsers wait forever on it
        return "'::' is not part of any operand"
    if isa not in ("ppc32", "ppc64"):
        return None
    for operand in _split_operands(operands):
        # x@ha, x@l(r3): the suffix ends the expression; an @ elsewhere ('$ @ha -1') can
        # make keystone wait forever
        bare = re.sub(r"@(l|h|ha|hi)(?=\s*(\(.*\))?\s*$)", "", operand.strip())
        if "@" in bare:
            return f"cannot read the operand {operand!r} (@l, @h, @ha, @hi end an expression)"
        try:
            text = SYMBOL_RE.sub("_s", _character_constants(PPC_REG_RE.sub(r"\2", bare)))
            text = _numbers_to_python(text)
            if not _ppc_operand(ast.parse(text, mode="eval").body, tail=True):
                raise ValueError(operand)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return f"cannot read the operand {operand!r}"
    return None


def _ppc_operand(node, tail=False):
    """Is ``node`` a PowerPC operand: an integer expression, or one ending in D(RA) (Python
    reads -8(r1) as -(8(1)) and x+4(r1) as x+(4(1)): the call may only end the operand)?
    Anything else Python reads ('( )', '{0-3}', '0(3) % x') can make keystone wait forever."""
    if isinstance(node, ast.Call):                # D(RA): one expression in parentheses
        return tail and not node.keywords and len(node.args) == 1 and \
            _ppc_operand(node.func, tail=True) and _ppc_operand(node.args[0])
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int)
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.BinOp):
        return type(node.op) in _BINOPS and _ppc_operand(node.left) and \
            _ppc_operand(node.right, tail)
    if isinstance(node, ast.UnaryOp):
        return type(node.op) in _UNOPS and _ppc_operand(node.operand, tail)
    return False


NUMBER_RE = re.compile(r"(?<![\w.$])(0[xX][0-9a-fA-F]+|\d+)(?![\w.$])")
LONG_NUMBER_RE = re.compile(r"(?<![\w.])(0[xX][0-9a-fA-F]{23,}|\d{25,})")


@functools.lru_cache(maxsize=1 << 16)
def _keystone_problem(text):
    """Why keystone must not see an instruction, or None: it crashes on non-ASCII text and
    (PowerPC) loops forever on a negative number of 64 bits or more."""
    bad = next((ch for ch in text if not ch.isascii()), None)
    if bad:
        return f"non-ASCII character {bad!r}"
    if m := LONG_NUMBER_RE.search(text):    # (x86 $n and ARM #n too; Python refuses to
        digits = m.group(1)                  # read more than 4,300 digits)
        return f"the number {digits[:12]}... ({len(digits)} digits) does not fit in 64 bits"
    for m in NUMBER_RE.finditer(text):
        digits = m.group(1)
        if int(digits, 0 if digits[:2].lower() == "0x" else 10) >> 64:
            return f"the number {digits} does not fit in 64 bits"
    return None


def _intel_string_ops(text):
    """Keystone's Intel syntax wants explicit operands for string instructions."""
    sizes = {"b": "byte", "w": "word", "d": "dword"}
    m = re.match(r"^((?:rep\w*\s+)?)(movs|stos|lods)([bwd])$", text.strip(), re.I)
    if not m:
        return text
    prefix, op, size = m.group(1), m.group(2).lower(), sizes[m.group(3).lower()]
    acc = {"byte": "al", "word": "ax", "dword": "eax"}[size]
    operands = {"movs": f"{size} ptr es:[edi], {size} ptr [esi]",
                "stos": f"{size} ptr es:[edi], {acc}", "lods": f"{acc}, {size} ptr [esi]"}[op]
    return f"{prefix}{op} {operands}"


def _split_operands(text):
    """Split at top-level commas (not inside quotes or parentheses)."""
    parts, depth, quote, current = [], 0, None, ""
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _string_literal(text):
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise ValueError(f"expected a string in double quotes, got {text}")
    # GNU as stores a non-ASCII character as its UTF-8 bytes (a bytes literal refuses it)
    utf8 = "".join(ch if ch.isascii() else "".join(f"\\x{b:02x}" for b in ch.encode())
                   for ch in text)
    try:
        return ast.literal_eval("b" + utf8)
    except (SyntaxError, ValueError):
        raise ValueError(f"cannot read the string {text} (a bad escape?)") from None


# ------------------------------------------------------------------------- expressions

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.LShift: operator.lshift,
           ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.BitXor: operator.xor}
_UNOPS = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}
_PPC_SUFFIX = {"l": lambda v: v & 0xFFFF, "h": lambda v: (v >> 16) & 0xFFFF,
               "hi": lambda v: ((v + 0x8000) >> 16) & 0xFFFF,
               "ha": lambda v: ((v + 0x8000) >> 16) & 0xFFFF}


_ESCAPES = {"n": 10, "t": 9, "r": 13, "b": 8, "f": 12, "v": 11, "a": 7, "0": 0,
            "\\": 92, "'": 39, '"': 34}


def _character_constant(m):
    text = m.group(1)
    if len(text) == 2 and text[1] not in _ESCAPES:        # '\x', '\u', '\8'
        raise ValueError(f"cannot read the character constant {m.group(0)}")
    return str(_ESCAPES[text[1]] if len(text) == 2 else ord(text))


def _character_constants(text):
    """GNU character constants ('c', and the older 'c without a closing quote) as numbers."""
    return re.sub(r"'(\\?.)'?", _character_constant, text)


def _numbers_to_python(text):
    """GNU number syntax to Python: 010 is octal, / divides integers."""
    text = re.sub(r"(?<![\w.])0([0-7]+)\b", lambda m: str(int(m.group(1), 8)), text)
    return re.sub(r"(?<!/)/(?!/)", "//", text)


# No constant of a kernel routine needs more bits. The bound keeps a typo such as
# 1 << (1 << 40) (128 GB) or a chain of squaring symbols from exhausting memory.
MAX_VALUE_BITS = 256


def _apply(op, left, right, expr):
    if op is ast.LShift and right > MAX_VALUE_BITS:
        raise ValueError(f"{expr!r} needs more than {MAX_VALUE_BITS} bits")
    result = _BINOPS[op](left, right)
    if result.bit_length() > MAX_VALUE_BITS:
        raise ValueError(f"{expr!r} needs more than {MAX_VALUE_BITS} bits")
    return result


def evaluate(expr, lookup):
    """Evaluate a GNU-as integer expression; lookup(name) gives a symbol's value."""
    try:
        return _evaluate(expr, lookup)
    except (RecursionError, MemoryError):
        # Python's parser and this evaluator recurse per operator and per symbol
        raise ValueError(f"the expression is nested too deeply: {expr[:60]!r}") from None


def _evaluate(expr, lookup):
    expr = expr.strip()
    suffix = None
    m = re.match(r"^(.*)@(l|h|ha|hi)$", expr)
    if m:
        expr, suffix = m.group(1), m.group(2)
    names = {}

    def name_of(m):
        key = f"_s{len(names)}"
        names[key] = lookup(m.group(1))
        return key
    expr_chars = _character_constants(expr)
    pyexpr = SYMBOL_RE.sub(name_of, expr_chars)
    pyexpr = _numbers_to_python(pyexpr)
    try:
        tree = ast.parse(pyexpr, mode="eval")
    except SyntaxError:
        raise ValueError(f"cannot read the expression {expr!r}") from None

    def value(node):
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            if node.value.bit_length() > MAX_VALUE_BITS:
                raise ValueError(f"{expr!r} needs more than {MAX_VALUE_BITS} bits")
            return node.value
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _apply(type(node.op), value(node.left), value(node.right), expr)
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNOPS:
            return _UNOPS[type(node.op)](value(node.operand))
        raise ValueError(f"cannot evaluate {expr!r}")
    try:
        result = value(tree)
    except ZeroDivisionError:
        raise ValueError(f"division by zero in {expr!r}") from None
    return _PPC_SUFFIX[suffix](result) if suffix else result


# ------------------------------------------------------------------------------ keystone

def _worker_command():
    """The keystone worker's command line: on Linux under ``setarch -R`` (no address-space
    randomisation) where that works. Whether keystone crashes on some bad statements depends
    on where its memory lands: the same statements after the same history crashed it in 11
    of 20 processes and gave an error in the others (tests/run/test_fuzz.py's case 144, a
    mutant of zap_v7.S), and in 12 of 12 with randomisation off gave the same error. So a
    process's result would otherwise depend on the host, not on its input."""
    return _fixed_layout() + [sys.executable, str(WORKER)]


@functools.lru_cache(maxsize=1)
def _fixed_layout():
    """``setarch <machine> -R`` if this host runs it (a sandbox may refuse the personality
    change), else nothing."""
    setarch = shutil.which("setarch") if sys.platform.startswith("linux") else None
    if setarch is None:
        return []
    prefix = [setarch, platform.machine(), "-R"]
    try:
        ok = subprocess.run(prefix + ["true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return prefix if ok else []


class _Keystone:
    """A keystone worker process, started on first use and again after a crash.

    One worker per ISA and syntax: keystone's AT&T mode reads plain numbers as hex and that
    setting leaks into other engines of the same process (measured: after an AT&T engine
    was made, a PPC engine encoded ``addi 3,3,12`` with 0x12), so AT&T gets its own process
    and its decimal numbers are written in hex before they reach it."""
    workers: dict = {}

    def __init__(self):
        self.proc = subprocess.Popen(_worker_command(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.pending = b""          # bytes read from the worker but not yet consumed

    @classmethod
    def get(cls, key):
        worker = cls.workers.get(key)
        if worker is None or worker.proc.poll() is not None:
            worker = cls.workers[key] = cls()
        return worker

    def _readline(self):
        """One answer line, or "crashed" (end of file) or "hung" (no answer in time)."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], WORKER_TIMEOUT_S)
            if not ready:
                return "hung"
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return "crashed"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    @classmethod
    def encode(cls, isa, items):
        """Encode [(text, address, syntax)] of one syntax; one answer dict per item, or
        fewer if the worker died or hung: then the last answer is an error for its item."""
        key = (isa, items[0][2])
        worker = cls.get(key)
        worker.proc.stdin.write((json.dumps({"isa": isa, "items": items}) + "\n").encode())
        worker.proc.stdin.flush()
        answers = []
        for _ in items:
            line = worker._readline()
            if isinstance(line, str):
                worker.proc.kill()
                worker.proc.wait()
                del cls.workers[key]
                why = "crashed" if line == "crashed" else \
                    f"did not answer in {WORKER_TIMEOUT_S} s"
                answers.append({"error": f"the keystone assembler {why} on this statement"})
                return answers
            answers.append(json.loads(line))
        return answers


# Encodings already asked of keystone: (isa, text, address, syntax) -> answer. Bounded: the
# least recently used entries go first (a long session assembling many programs must not
# grow without end). A plain dict keeps insertion order; a hit is moved to the end.
ENCODING_CACHE_ENTRIES = 1 << 16
_ENCODING_CACHE: dict = {}
# One conversation with the keystone workers at a time: each worker is one pipe, and two
# threads writing requests and reading answers at once got each other's bytes (measured:
# four threads assembling different programs got wrong machine code for most of them).
_KEYSTONE_LOCK = threading.Lock()


def _cached(key):
    answer = _ENCODING_CACHE.pop(key, None)
    if answer is not None:
        _ENCODING_CACHE[key] = answer               # now the most recently used
    return answer


def _remember(key, answer):
    _ENCODING_CACHE[key] = answer
    while len(_ENCODING_CACHE) > ENCODING_CACHE_ENTRIES:
        del _ENCODING_CACHE[next(iter(_ENCODING_CACHE))]


# Instructions whose encoding depends on their own address: relative branches (x86: jumps,
# calls, loops; PowerPC: every b* mnemonic). Any other x86 or PowerPC instruction encodes the
# same at every address (its symbols are numbers by now), so its answer is cached by its text
# alone: a layout that moves code asked keystone again for every instruction after the move
# (the Yoshioka write path: 15,744 requests for 3,437 instructions). ARM keeps the address
# in every key (pc-relative loads and adr take a label).
_RELATIVE_RE = {"x86": re.compile(r"(?:(?:rep\w*|lock|bnd|notrack)\s+)*(j|l?call|loop|xbegin)",
                                  re.IGNORECASE),
                "ppc32": re.compile(r"b", re.IGNORECASE),
                "ppc64": re.compile(r"b", re.IGNORECASE)}


def _cache_key(isa, request):
    """The encoding cache's key: the address only where the encoding can depend on it."""
    text, address, syntax = request
    relative = _RELATIVE_RE.get(isa)
    if relative is not None and not relative.match(text):
        address = None
    return (isa, text, address, syntax)


def _encode_instructions(isa, requests):
    """requests: [(text, address, syntax)] -> list of answers, cached."""
    with _KEYSTONE_LOCK:
        found = {}
        for request in dict.fromkeys(requests):
            answer = _cached(_cache_key(isa, request))
            if answer is not None:
                found[request] = answer
        todo = [r for r in dict.fromkeys(requests) if r not in found]
        for syntax in sorted({r[2] for r in todo}):
            batch = [r for r in todo if r[2] == syntax]
            while batch:
                answers = _Keystone.encode(isa, [list(r) for r in batch])
                for request, answer in zip(batch, answers):
                    found[request] = answer
                    if "the keystone assembler" not in answer.get("error", ""):
                        _remember(_cache_key(isa, request), answer)   # not a crash
                batch = batch[len(answers):]
                if answers and "the keystone assembler" in answers[-1].get("error", ""):
                    break             # report the crash; the rest were not tried
    return [found.get(r) or {"error": "not encoded (an earlier statement crashed the "
                                      "assembler)"} for r in requests]


DECIMAL_RE = re.compile(r"(?<![\w.%])(\d+)(?![\w.$])")


@functools.lru_cache(maxsize=1 << 16)
def _att_decimals_to_hex(text):
    """Keystone's AT&T mode reads 12 as 0x12: write every decimal number in hex."""
    mnemonic, _, operands = text.partition(" ")
    def to_hex(m):
        digits = m.group(1)
        if len(digits) > 24:          # more than 64 bits: _keystone_problem refuses it
            return digits
        return hex(int(digits, 8) if len(digits) > 1 and digits[0] == "0" else int(digits))
    return (mnemonic + " " + DECIMAL_RE.sub(to_hex, operands)).strip()


# ------------------------------------------------------------------------ ARM coprocessor

_ARM_CONDITIONS = {c: i for i, c in enumerate(
    "eq ne cs cc mi pl vs vc hi ls ge lt gt le al".split())}
_ARM_CONDITIONS.update(hs=2, lo=3, **{"": 14})
_ARM_REGS = {**{f"r{i}": i for i in range(16)}, "sb": 9, "sl": 10, "fp": 11, "ip": 12,
             "sp": 13, "lr": 14, "pc": 15}
_MCR_RE = re.compile(r"^(mcr|mrc)(\w\w)?\s+p(\d+)\s*,\s*(\d+)\s*,\s*(\w+)\s*,\s*c(\d+)\s*,"
                     r"\s*c(\d+)\s*(?:,\s*(\d+))?\s*$", re.I)


def _encode_arm_coprocessor(text):
    """Encode MCR/MRC ourselves: keystone has been seen to crash on CP15 barrier forms."""
    m = _MCR_RE.match(text.strip())
    if not m:
        return None
    op, cond, cp, opc1, rt, crn, crm, opc2 = m.groups()
    cond = (cond or "").lower()
    if cond not in _ARM_CONDITIONS or rt.lower() not in _ARM_REGS:
        raise ValueError(f"bad condition or register in {text!r}")
    values = [int(cp), int(opc1), int(crn), int(crm), int(opc2 or 0)]
    if values[0] > 15 or values[1] > 7 or values[2] > 15 or values[3] > 15 or values[4] > 7:
        raise ValueError(f"coprocessor field out of range in {text!r}")
    word = (_ARM_CONDITIONS[cond] << 28) | (0b1110 << 24) | (values[1] << 21) \
        | ((op.lower() == "mrc") << 20) | (values[2] << 16) | (_ARM_REGS[rt.lower()] << 12) \
        | (values[0] << 8) | (values[4] << 5) | (1 << 4) | values[3]
    return word.to_bytes(4, "little")


# --------------------------------------------------------------------------- the assembler

class _Assembler:
    MAX_PASSES = 12

    def __init__(self, parsed: _Parser, base):
        self.p, self.isa, self.base = parsed, parsed.isa, base
        self.addresses = None          # label -> address in the current layout
        self.resolving = set()
        self.equate_values = {}        # name, or (name, here), -> value in this layout
        self.uses = {}                 # equate -> the kinds of symbol it reads, transitively
        self.fixed_texts = {}          # instruction text -> its text with symbols as numbers,
                                       # where no label or '.' is read (any pass, any address)

    def error(self, message, s: Statement):
        return AssemblyError(message, self.p.filename, s.lineno, s.line, s.expansion)

    def lookup(self, name, here):
        if name == ".":
            return here
        if name in self.p.labels:
            if self.addresses is None:
                return here             # first pass: a placeholder in branch range
            return self.addresses[name]
        if name in self.p.equates:
            # each symbol once per layout (a chain of symbols that each use the one before
            # twice would otherwise take 2**length evaluations), and once per address only
            # if its value depends on the address: it reads '.', or a label in the first
            # pass (where a label stands for the address)
            uses = self.symbol_kinds(name)
            key = (name, here) if "." in uses or ("label" in uses and self.addresses is None) \
                else name
            if key not in self.equate_values:
                self.equate_values[key] = self.evaluate_equate(name, here)
            return self.equate_values[key]
        raise ValueError(f"unknown symbol {name!r}")

    def symbol_kinds(self, name):
        """What an equate's expression reads, through the equates it names: {'.', 'label'}
        or part of it (a cycle reads nothing more here: evaluating it is the error)."""
        equates, stack = self.p.equates, [(name, False)]
        while stack:                        # depth first, without recursion: a chain of
            symbol, done = stack.pop()      # 3,000 equates is an evaluation error, later
            refs = SYMBOL_RE.findall(equates[symbol][0])
            if done:
                kinds = self.uses[symbol]
                for ref in refs:
                    if ref == ".":
                        kinds.add(".")
                    elif ref in self.p.labels:
                        kinds.add("label")
                    elif ref in equates:
                        kinds |= self.uses[ref]
            elif symbol not in self.uses:
                self.uses[symbol] = set()   # (in progress: a cycle stops here)
                stack.append((symbol, True))
                stack += [(ref, False) for ref in refs if ref in equates
                          and ref not in self.uses]
        return self.uses[name]

    def evaluate_equate(self, name, here):
        if name in self.resolving:
            raise ValueError(f"symbol {name!r} is defined in terms of itself")
        self.resolving.add(name)
        try:
            expr, _, _ = self.p.equates[name]
            return evaluate(expr, lambda n: self.lookup(n, here))
        finally:
            self.resolving.discard(name)

    def substitute(self, s: Statement, text):
        """Replace every known symbol in an instruction's operands by its value. A text
        that names no label and no '.', even through its equates, reads the same in every
        pass: it is kept (most of a routine's instructions name only offsets and SPRs)."""
        if text in self.fixed_texts:
            return self.fixed_texts[text]
        mnemonic, _, operands = text.partition(" ")
        labels, equates = self.p.labels, self.p.equates    # (a set of both made per
        fixed = True                                       # statement was quadratic)

        def value(m):
            nonlocal fixed
            name = m.group(1)
            if name not in labels and name not in equates:
                return name
            fixed = fixed and name not in labels and not self.symbol_kinds(name)
            v = self.lookup(name, s.address)
            return hex(v) if v >= 0 else f"(-{hex(-v)})"
        operands = SYMBOL_RE.sub(value, operands)
        operands, dots = DOT_RE.subn(hex(s.address), operands)
        result = (mnemonic + " " + operands).strip()
        if fixed and not dots:
            self.fixed_texts[text] = result
        return result

    def ldr_const_text(self, s: Statement):
        reg, expr = s.body.split(",", 1)
        v = evaluate(expr, lambda n: self.lookup(n, s.address))
        if not -(1 << 31) <= v < 1 << 32:
            raise ValueError(f"{v:#x} does not fit in 32 bits")
        v &= 0xFFFFFFFF
        return [f"movw {reg}, #{v & 0xFFFF}", f"movt {reg}, #{v >> 16}"]

    def encode_data(self, s: Statement):
        if s.kind == "bytes":
            return s.encoding
        lookup = lambda n: self.lookup(n, s.address)          # noqa: E731
        if s.kind == "data":
            out = b""
            order = "big" if BIG_ENDIAN[self.isa] else "little"
            for operand in _split_operands(s.body):
                v = evaluate(operand, lookup)
                if not -(1 << (8 * s.width - 1)) <= v < (1 << (8 * s.width)):
                    raise ValueError(f"{v} does not fit in {s.width} bytes")
                out += (v & ((1 << (8 * s.width)) - 1)).to_bytes(s.width, order)
            return out
        if s.kind == "space":
            args = _split_operands(s.body)
            n = evaluate(args[0], lookup)
            fill = evaluate(args[1], lookup) if len(args) > 1 else 0
            if not 0 <= n <= MAX_PROGRAM_BYTES:
                raise ValueError(f".space of {n} bytes: give 0 to {MAX_PROGRAM_BYTES:,}")
            return bytes([fill & 0xFF]) * n
        if s.kind == "align":
            name, _, args = s.body.partition(" ")
            arg = evaluate(_split_operands(args)[0], lookup)
            power_of_two = name == ".p2align" or (name == ".align" and self.isa != "x86")
            if power_of_two and not 0 <= arg <= 16:
                raise ValueError(f"{name} {arg}: give a power of two from 0 to 16")
            align = 1 << arg if power_of_two else arg
            if align <= 0 or align & (align - 1) or align > (1 << 16):
                raise ValueError(f"alignment {align} is not a power of two up to 65536")
            s.width = align                         # for the next layout
            gap = -s.address % align
            nop = NOP[self.isa]
            return nop * (gap // len(nop)) if gap % len(nop) == 0 else b"\0" * gap
        raise AssertionError(s.kind)

    def encode_pass(self):
        """Encode every statement at its current address; returns the encodings."""
        requests, where = [], []
        encodings = [b""] * len(self.p.statements)
        self.equate_values = {}        # the layout (label addresses) may have changed
        total = 0
        for i, s in enumerate(self.p.statements):
            total += len(encodings[i - 1]) if i else 0
            if total > MAX_PROGRAM_BYTES:
                raise self.error(f"the program is larger than {MAX_PROGRAM_BYTES >> 20} MB "
                                 "here", self.p.statements[i - 1])
            try:
                if s.kind == "insn":
                    if self.isa == "arm":
                        word = _encode_arm_coprocessor(s.body)
                        if word is not None:
                            encodings[i] = word
                            continue
                    texts = [self.substitute(s, s.body)]
                elif s.kind == "ldr_const":
                    texts = self.ldr_const_text(s)
                else:
                    encodings[i] = self.encode_data(s)
                    continue
            except AssemblyError:
                raise
            except (ValueError, IndexError, OverflowError, RecursionError, MemoryError) as e:
                raise self.error(str(e) or type(e).__name__, s) from None
            if self.isa == "x86" and s.syntax == "att":
                texts = [_att_decimals_to_hex(t) for t in texts]
            address = s.address
            for text in texts:
                why = _keystone_problem(text)
                if why:
                    raise self.error(f"cannot assemble {text!r}: {why}", s)
                requests.append((text, address, s.syntax))
                where.append(i)
                address += 4        # only ldr_const has two parts, both 4 bytes (A32)
        answers = _encode_instructions(self.isa, requests)
        for i, (text, _, _), answer in zip(where, requests, answers):
            s = self.p.statements[i]
            code = bytes.fromhex(answer.get("hex", ""))
            if "error" in answer or not code or answer.get("count", 0) < 1:
                raise self.error(self.explain(text, answer), s)
            encodings[i] += code
        return encodings

    def explain(self, text, answer):
        why = answer.get("error") or "keystone encoded nothing for it"
        complaints = [ln.strip() for ln in answer.get("stderr", "").splitlines()
                      if "error" in ln.lower()]
        if complaints:
            why += f" ({complaints[0]})"
        unknown = [n for n in SYMBOL_RE.findall(text.partition(" ")[2])
                   if n.startswith(".L")]
        if unknown:
            why += f"; undefined local label {unknown[0]}"
        return f"cannot assemble {text!r}: {why}"

    def layout(self, sizes):
        address = self.base
        for s, size in zip(self.p.statements, sizes):
            s.address = address
            if s.kind == "align" and s.width:       # its padding at this layout's address
                size = -address % s.width           # (as encode gives it): an alignment's
            address += size                         # change settles in the same pass
        labels = {}
        for name, index in self.p.labels.items():
            labels[name] = (self.p.statements[index].address if index < len(self.p.statements)
                            else address)
        return labels

    def run(self):
        # First pass: labels stand for the statement's own address (in range of any branch);
        # then lay out with the sizes found and encode again until the sizes settle.
        sizes = [8 if s.kind == "ldr_const" else 4 if s.kind == "insn" else 0
                 for s in self.p.statements]
        self.layout(sizes)
        encodings = self.encode_pass()
        for _ in range(self.MAX_PASSES):
            sizes = [len(e) for e in encodings]
            self.addresses = self.layout(sizes)
            encodings = self.encode_pass()
            if [len(e) for e in encodings] == sizes:
                break
        else:
            changing = next(s for s, e, n in zip(self.p.statements, encodings, sizes)
                            if len(e) != n)
            raise self.error("the layout did not settle: this statement's size keeps "
                             "changing", changing)
        for s, e in zip(self.p.statements, encodings):
            s.encoding = e
        return encodings


def assemble(source, isa, base=0x10000, filename="<source>"):
    """Assemble GNU-style source for ``isa`` at address ``base``; returns a Program."""
    if isa not in ISAS:
        raise ValueError(f"unknown ISA {isa!r}: choose one of {', '.join(ISAS)}")
    if not isinstance(source, str):
        raise TypeError(f"assemble takes the source as text, not {type(source).__name__}")
    if len(source) > MAX_SOURCE_CHARS:
        raise AssemblyError(f"the source is {len(source):,} characters: at most "
                            f"{MAX_SOURCE_CHARS:,} are read (the largest routine of the book "
                            "is 27,091)", filename)
    source = source.removeprefix("\ufeff")     # a byte-order mark some editors save first
    # CR LF (Windows) and a lone CR (classic Mac OS) end lines too: read as one line, a
    # CR-only file assembled to nothing after its first comment
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    program = _assembled(source, isa, base, filename)
    # each caller its own Program (the statements themselves are never changed)
    return dataclasses.replace(program, symbols=dict(program.symbols),
                               globals=list(program.globals),
                               statements=list(program.statements))


@functools.lru_cache(maxsize=512)
def _assembled(source, isa, base, filename):
    """A source's Program, assembled once: the chapters load the same routines into many
    machines (Dougan 1999's claims load 257 programs), and assembling is pure."""
    parsed = _Parser(isa, filename).parse(source)
    for name in parsed.globals:
        if name not in parsed.labels and name not in parsed.equates:
            raise AssemblyError(f".globl names {name!r}, which is never defined", filename,
                                *parsed.global_lines[name])
    assembler = _Assembler(parsed, base)
    encodings = assembler.run()
    symbols = dict(assembler.addresses or {})
    for name in parsed.equates:
        try:
            symbols[name] = assembler.lookup(name, base)
        except ValueError as e:
            _, lineno, line = parsed.equates[name]
            raise AssemblyError(str(e), filename, lineno, line) from None
    return Program(isa, base, b"".join(encodings), symbols, parsed.globals,
                   parsed.statements, filename, source)


def assemble_file(path, isa, base=0x10000):
    path = Path(path)
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise AssemblyError(f"cannot read the file: {e}", str(path)) from None
    return assemble(source, isa, base, filename=str(path))


# ---------------------------------------------------------------------------- disassembly

@functools.lru_cache(maxsize=None)
def _capstone(isa, detail=False):
    """One capstone decoder per ISA and detail (making one costs ~0.5 ms: a profile's
    instruction table decodes thousands of instructions one at a time)."""
    import capstone as cs
    arch, mode = {
        "ppc32": (cs.CS_ARCH_PPC, cs.CS_MODE_32 | cs.CS_MODE_BIG_ENDIAN),
        "ppc64": (cs.CS_ARCH_PPC, cs.CS_MODE_64 | cs.CS_MODE_BIG_ENDIAN),
        "arm": (cs.CS_ARCH_ARM, cs.CS_MODE_ARM),
        "x86": (cs.CS_ARCH_X86, cs.CS_MODE_32),
    }[isa]
    md = cs.Cs(arch, mode)
    if isa == "x86":
        md.syntax = cs.CS_OPT_SYNTAX_ATT
    md.detail = detail
    return md


def decode(code, isa, address=0, detail=False):
    """Capstone's instructions in ``code``, all of them: capstone stops at the first word it
    cannot decode (a ``.long`` or ``.quad`` of data), so decoding resumes past such a word
    (4 bytes on PowerPC and ARM, 1 on x86) and code placed after data is still seen."""
    md = _capstone(isa, bool(detail))
    code, step, offset = bytes(code), 1 if isa == "x86" else 4, 0
    while offset < len(code):
        for insn in md.disasm(code[offset:], address + offset):
            offset = insn.address + insn.size - address
            yield insn
        if offset < len(code):
            offset += step                  # capstone stopped here: not an instruction


def disassemble(code, isa, address=0):
    """[(address, bytes, mnemonic, operands)] for the instructions in ``code``."""
    return [(i.address, bytes(i.bytes), i.mnemonic, i.op_str)
            for i in decode(code, isa, address)]


def disassemble_one(code, isa, address=0):
    """'mnemonic operands' of the first instruction, or a description of the raw bytes."""
    found = disassemble(code, isa, address)
    if not found or found[0][0] != address:       # (decode resumes past bytes it cannot read)
        if isa == "x86":
            return f".byte {', '.join(f'{b:#04x}' for b in bytes(code[:4]))} (not an " \
                "instruction capstone can decode)"
        return f".long 0x{bytes(code[:4]).hex()} (not a valid instruction)"
    _, _, mnemonic, operands = found[0]
    return f"{mnemonic} {operands}".strip()
