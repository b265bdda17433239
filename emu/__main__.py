"""Command line: ``python -m emu run FILE.S --isa ISA --cpu PROFILE --entry SYMBOL ...``,
``python -m emu kperfdiff A B``, ``python -m emu handout CHAPTER... -o COURSE``,
``python -m emu student-copy [CHAPTER...] [-o FOLDER]``,
``python -m emu grade COURSE SUBMISSIONS -o SCORES.csv`` and ``python -m emu bench``. A bad input exits non-zero with
one clear line."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# emu.bench.SECTIONS, named here so that the command line starts without importing the
# model (tests/test_bench.py checks the two agree)
BENCH_SECTIONS = ["startup", "smp", "kernel", "call", "copy", "scorecard"]


def _parser():
    p = argparse.ArgumentParser(prog="python -m emu", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="assemble a routine and call it on a processor model")
    run.add_argument("file", help="assembly source (.S)")
    run.add_argument("--isa", required=True, choices=["ppc32", "ppc64", "arm", "x86"])
    run.add_argument("--cpu", required=True, help="processor profile, e.g. ppc750")
    run.add_argument("--entry", required=True, help="symbol to call")
    run.add_argument("--arg", action="append", default=[], type=lambda s: ("int", s),
                     dest="args", metavar="N", help="an integer argument (0x.. allowed)")
    run.add_argument("--alloc", action="append", type=lambda s: ("alloc", s), dest="args",
                     metavar="BYTES", help="pass a zeroed page-aligned buffer of BYTES")
    run.add_argument("--load", action="append", type=lambda s: ("load", s), dest="args",
                     metavar="FILE", help="pass a buffer holding FILE's bytes")
    run.add_argument("--cache", action="append", default=[], metavar="LEVEL:SIZE:WAYS:LINE[:POLICY]",
                     help="override one cache level of the profile")
    run.add_argument("--limit", type=int, default=50_000_000, help="instruction limit")
    run.add_argument("--mmu", action="store_true", help="TLBs and the hashed page table on "
                     "(every loaded and allocated page mapped; ppc32 hash-table profiles)")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("--profile", metavar="N", help="sample the PC every N cycles and print "
                     "a readprofile table per symbol")
    run.add_argument("--profile-out", metavar="FILE", help="save the profile (for kperfdiff)")
    run.add_argument("--event", default="cycles", metavar="NAME",
                     help="with --profile: sample every N of these events instead of cycles "
                     "(e.g. L3_read_misses, L2_read_hits+L3_read_hits, memory_reads)")
    diff = sub.add_parser("kperfdiff", help="rank the symbols of two saved profiles by the "
                          "difference of their share of samples")
    diff.add_argument("a", help="a profile saved by run --profile-out")
    diff.add_argument("b", help="the profile to compare it with")
    diff.add_argument("--top", default="5", metavar="N",
                      help="rows per section (default 5; 0 for all)")
    hand = sub.add_parser("handout", help="make an nbgrader course folder from chapters: "
                          "the student notebooks (no solutions, no hidden checks, no outputs) "
                          "and the autograder")
    hand.add_argument("chapters", nargs="+", metavar="CHAPTER", help="a chapter's .ipynb")
    hand.add_argument("-o", "--output", required=True, metavar="COURSE",
                      help="the course folder to write (release/ holds the student notebooks)")
    copy = sub.add_parser("student-copy", help="a student's own copies of the chapters: "
                          "answers empty, no solutions, no hidden checks (book/how-to-use.md)")
    copy.add_argument("chapters", nargs="*", metavar="CHAPTER",
                      help="a chapter's .ipynb (default: every chapter of the book)")
    copy.add_argument("-o", "--output", default="my-chapters", metavar="FOLDER",
                      help="where to write them (default: my-chapters)")
    grade = sub.add_parser("grade", help="grade a folder of submitted notebooks (STUDENT.ipynb "
                           "or STUDENT/*.ipynb) and write a CSV of scores per exercise")
    grade.add_argument("course", help="the course folder made by handout")
    grade.add_argument("submissions", help="the folder of submitted notebooks")
    grade.add_argument("-o", "--output", required=True, metavar="SCORES.csv")
    grade.add_argument("--assignment", help="which chapter (needed when the course has several)")
    grade.add_argument("--timeout", default="120", metavar="SECONDS",
                       help="time limit per cell (default 120)")
    grade.add_argument("--max-instructions", default="50000000", metavar="N",
                       help="ceiling on the instructions of any emulated run (default 50,000,000)")
    grade.add_argument("--student-timeout", default="1200", metavar="SECONDS",
                       help="time limit of one student's whole notebook, and of their checks "
                       "(default 1200)")
    grade.add_argument("--memory", default="4096", metavar="MB",
                       help="resident memory of a student's sandbox, all its processes together "
                       "(default 4096)")
    grade.add_argument("--trusted", action="store_true",
                       help="run the students' code without a sandbox (only for code you trust)")
    bench = sub.add_parser("bench", help="how fast the model is: start-up, and throughput "
                           "against raw Unicorn per ISA (prints each row as it is measured)")
    bench.add_argument("--section", action="append",
                       choices=BENCH_SECTIONS,
                       help="what to measure (default: all)")
    bench.add_argument("--isa", action="append", choices=["ppc32", "ppc64", "arm", "x86"])
    bench.add_argument("--layout", action="append", choices=["adjacent", "offset"],
                       help="where the destination buffer sits (default: both; see emu.bench)")
    bench.add_argument("--page", help="also write each measured table into this Markdown page "
                       "between its markers (benchmarks/README.md)")
    return p


def _int(text):
    try:
        return int(text, 0)
    except ValueError:
        raise ValueError(f"{text!r} is not an integer") from None


def _period(text):
    every = _int(text)
    if not 0 < every <= 1 << 62:
        raise ValueError(f"--profile {text}: the period must be a positive number of cycles, "
                         "at most 2**62")
    return every


def run(options):
    from .run.machine import Machine
    every = _period(options.profile) if options.profile is not None else None
    if options.profile_out and every is None:
        raise ValueError("--profile-out needs --profile N (the sampling period)")
    if options.event != "cycles" and every is None:
        raise ValueError("--event needs --profile N (a sample every N events)")
    machine = Machine(options.cpu, caches=options.cache, instruction_limit=options.limit,
                      mmu=options.mmu)
    if machine.isa != options.isa:
        raise ValueError(f"profile {options.cpu} is {machine.isa}, not {options.isa}")
    machine.load(Path(options.file))
    args = []
    for kind, value in options.args or []:
        if kind == "int":
            args.append(_int(value))
        elif kind == "alloc":
            args.append(machine.alloc(_int(value)))
        else:
            try:
                data = Path(value).read_bytes()
            except OSError as e:
                raise ValueError(f"--load {value}: {e.strerror}") from None
            args.append(machine.alloc(max(len(data), 1), data))
    if options.mmu:
        from .hw.mmu import page_table
        page_table(machine)
    if every is None:
        result = machine.call(options.entry, *args)
        print(result.to_json() if options.json else result.table())
        return
    from .run.profiler import profile_call
    profile = profile_call(machine, options.entry, *args, every=every, event=options.event)
    if options.profile_out:
        try:
            profile.save(options.profile_out)
        except OSError as e:
            raise ValueError(f"--profile-out {options.profile_out}: {e.strerror}") from None
    if options.json:
        out = profile.run.to_dict()
        # not "profile": the run's own "profile" key already names the processor profile
        out["sampling"] = {"every": every, "samples": profile.samples, "symbols": [
            {"symbol": r.symbol, "samples": int(r.samples), "cycles": int(r.cycles),
             "instructions": int(r.instructions)} for r in profile.by_symbol().itertuples()]}
        print(json.dumps(out, indent=2))
    else:
        print(profile.run.table() + "\n\n" + profile.text())


def kperfdiff(options):
    from .run.kperfdiff import compare_files
    top = _int(options.top)
    if top < 0:
        raise ValueError(f"--top {options.top}: give a number of rows, or 0 for all")
    print(compare_files(options.a, options.b, top=top or None))


def handout(options):
    from .course.handout import handout as make_course
    for chapter in options.chapters:
        if Path(options.output).resolve() == Path(chapter).resolve():
            raise ValueError("handout: the course folder would overwrite a chapter; give "
                             "another -o")
    made = make_course(options.chapters, options.output)
    for name, (student, graded) in made.items():
        print(f"{name}: student notebook {student} ({graded} graded exercise(s))")
    print(f"autograder: {Path(options.output) / 'gradebook.db'} (python -m emu grade "
          f"{options.output} SUBMISSIONS -o scores.csv)")


def student_copy(options):
    from .course.copies import student_copies
    written = student_copies(options.output, options.chapters)
    for copy, checked in written:
        print(f"{copy} ({checked} exercise(s) with a check)")
    print(f"open them with: jupyter lab {options.output}")


def grade(options):
    from .course.grading import grade as run_grader
    values = {}
    for option in ("timeout", "student_timeout", "memory"):
        try:
            values[option] = _int(getattr(options, option))
        except ValueError:
            values[option] = 0
        if values[option] < 1:
            raise ValueError(f"--{option.replace('_', '-')} {getattr(options, option)}: give "
                             "a whole number, at least 1")
    rows = run_grader(options.course, options.submissions, options.output,
                      assignment=options.assignment, timeout=values["timeout"],
                      max_instructions=_int(options.max_instructions),
                      student_timeout=values["student_timeout"], memory_mb=values["memory"],
                      trusted=options.trusted, progress=lambda line: print(line, flush=True))
    for student, status, _, total, out_of in rows:
        print(f"{student}: {total:g} of {out_of:g} ({status})")
    print(f"scores per exercise: {options.output}")


def bench(options):
    from .bench import COPY_LOOPS, LAYOUTS, SECTIONS, write_page
    arguments = {"copy": (tuple(options.isa or COPY_LOOPS), tuple(options.layout or LAYOUTS))}
    if options.page:
        write_page(options.page, None, [])          # a page without markers: refused first
    for section in options.section or SECTIONS:
        lines = []
        for line in SECTIONS[section](*arguments.get(section, ())):
            print(line, flush=True)
            lines.append(line)
        print(flush=True)
        if options.page:
            write_page(options.page, section, lines)


def main(argv=None):
    options = _parser().parse_args(argv)
    from .hw.faults import GuestError
    from .isa.assemble import AssemblyError
    try:
        {"run": run, "kperfdiff": kperfdiff, "handout": handout, "grade": grade,
         "student-copy": student_copy, "bench": bench}[options.command](options)
    except (AssemblyError, GuestError, ValueError, KeyError, MemoryError, OSError,
            RecursionError) as error:
        message = str(error.args[0]) if isinstance(error, KeyError) and error.args else \
            str(error)
        if isinstance(error, KeyError) and " " not in message:
            message = f"unknown name {message!r}"     # a bare key said nothing ("error: x")
        if isinstance(error, RecursionError):
            message = "the input is nested too deeply to read"
        first = message.splitlines()[0]
        detail = " | ".join(line.strip() for line in message.splitlines()[1:])
        print(f"error: {first}" + (f" [{detail}]" if detail else ""), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
