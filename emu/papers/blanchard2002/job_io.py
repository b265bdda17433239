"""What a compile job reads, writes and loads beyond what the model's exec charges: its file
read() and write() copies (job_file_io) and exec's and ld.so's reads of the binaries
(job_exec_io), each copy run as guest code, with their system calls and page-cache look-ups."""
from __future__ import annotations

from ...hw import estimates
from ...kernel import copybench, costs, fileio
from ...kernel.gcc import compiler
from ...run import reuse


#: The __copy_tofrom_user a job's read() and write() copies run (emu.kernel.copybench's
#: name): the 32-bit kernel's, 32-bit loads and stores in a line loop. The March 2002 ppc64
#: kernels predate the POWER4 routine Mackerras wrote in 2003, whose paper measured it
#: against "the copy_tofrom_user and memcpy routines from the ppc32 kernel" (Mackerras 2003
#: section 3.1, seed line 223); FILE_IO_ROUTINES names both, the POWER4 one as the other end.
FILE_IO_ROUTINE = "copy_tofrom_user32"
FILE_IO_ROUTINES = {"the ppc32 kernel's (2002's)": "copy_tofrom_user32",
                    "Mackerras's POWER4 routine (2003)": "copy_tofrom_user64"}
#: the ledger-style rows a job's file I/O adds to a build's routines
FILE_IO_ROWS = {"copies": "__copy_tofrom_user (file I/O)",
                "calls": "read()/write() entry and return",
                "lookups": "find_get_page (file I/O)"}


def job_calls(io):
    """(read() calls, write() calls) of a compile job with the traffic ``io``
    (emu.kernel.fileio.STEP_IO's keys): cpp reads each file in one read(); the .i, .s and
    .o go through stdio a page at a time, each written once and, but for the .o, read once
    (as fileio.step_copies cuts them: fileio.step_calls)."""
    return fileio.step_calls(io)


@reuse.unit
def job_file_io(routine=None):
    """A compile job's file read() and write() on POWER4, cycles: its copies as 2.5.66's
    mm/filemap.c cuts them (emu.kernel.fileio.step_copies, the traffic an estimate with
    ranges: kernel:build_io.*), each run as guest code (copybench, ``routine``: default
    FILE_IO_ROUTINE; fileio's mix of copies from memory and from the L1); a system call's
    round trip per read() and write() (emu.kernel.costs "syscall", measured) and a
    page-cache look-up per copy (find_get_page, one per page a call touches: costs
    "page_cache_lookup"). {"copies", "calls", "lookups": cycles; "read() calls", "write()
    calls", "copies made", "bytes": counts}."""
    routine = routine or FILE_IO_ROUTINE
    if routine not in copybench.ROUTINES or not copybench.ROUTINES[routine].user:
        raise ValueError(f"routine must be a copy_tofrom_user of copybench.ROUTINES, "
                         f"not {routine!r}")
    io = fileio.step_io()
    copies = fileio.step_copies(io)
    reads, writes = job_calls(io)
    made = sum(copies.values())
    return {"copies": fileio.copy_cycles(routine, copies, float(io["from_memory"])),
            "calls": (reads + writes) * costs.cycles("syscall"),
            "lookups": made * costs.cycles("page_cache_lookup"),
            "read() calls": reads, "write() calls": writes, "copies made": made,
            "bytes": sum(size * n for (size, _, _), n in copies.items())}


#: What exec and ld.so do per process that the model's exec leaves out. Facts:
#: BINPRM_BUF_SIZE, exec's first read of a binary (include/linux/binfmts.h, 2.4 and 2.5;
#: prepare_binprm, and load_elf_binary again for the interpreter), and the ELF32 sizes
#: (the ELF specification: Elf32_Ehdr 52 bytes, the program headers after it, 32 each).
BINPRM_BUF_SIZE = 128
ELF32_EHDR, ELF32_PHDR = 52, 32
#: ESTIMATES (ranges in LOADER_RANGES): program headers of a binary and of ld.so, the
#: bytes ld.so's open_verify reads of a library, its system calls per library
LOADER = {"phnum": 6, "ldso_read": 512, "ldso_calls": 6}
LOADER_RANGES = {
    "phnum": (4, 8, "a dynamically linked ELF32 binary of 2002: PHDR, INTERP, two LOADs, "
                    "DYNAMIC, NOTE; none was inspected"),
    "ldso_read": (512, 832, "glibc 2.2-2.3's open_verify reads a library's first bytes "
                            "into a buffer of FILEBUF_SIZE (not verified in a retrieved "
                            "glibc: 512 or 832)"),
    "ldso_calls": (5, 9, "open, read, fstat, two mmaps, close per library; mprotect, "
                         "a failed open per search-path entry more"),
}
#: the rows a process's loading adds to a build's routines
EXEC_ROWS = {"copies": "__copy_tofrom_user (exec and ld.so)",
             "calls": "ld.so's system calls",
             "lookups": "find_get_page (exec and ld.so)"}


def loader_ranges():
    """[(name, nominal, low, high, why)] of LOADER's estimates (emu.book.ranges)."""
    return [(f"kernel:loader.{k}", v, *LOADER_RANGES[k]) for k, v in LOADER.items()]


@reuse.unit
def job_exec_io(routine=None):
    """What a compile job's four execs (the driver and its passes, emu.kernel.gcc's images)
    read and call besides what the model's exec charges: exec's kernel_reads of the
    binary's first BINPRM_BUF_SIZE bytes and its program headers, and the same of the
    interpreter (ld.so) when the image has one; then ld.so, per other library, a read of
    its first bytes and its system calls (their mmaps' VMA work the model charges already).
    Each read cut by fileio.read_copies into __copy_tofrom_user copies run as guest code
    (copybench, ``routine``: default FILE_IO_ROUTINE, fileio's from_memory mix), a
    page-cache look-up per copy, a system call's round trip per ld.so call (costs
    "syscall"). Cycles per job: {"copies", "calls", "lookups"}; and "reads"."""
    from collections import Counter
    routine = routine or FILE_IO_ROUTINE
    loader = {k: estimates.value(f"kernel:loader.{k}", v) for k, v in LOADER.items()}
    headers = int(loader["phnum"]) * ELF32_PHDR
    driver, passes = compiler(1.0)
    copies, reads, calls = Counter(), 0, 0
    whole = 1 << 20                                     # any file longer than its headers

    def read(pos, count):
        copies.update(fileio.read_copies(whole, pos, count, 0))

    for image in (driver, *passes):
        names = [lib.name for lib in image.libs]
        for _ in range(2 if "ld.so" in names else 1):   # the binary, then its interpreter
            read(0, BINPRM_BUF_SIZE)
            read(ELF32_EHDR, headers)
            reads += 2
        for _ in (n for n in names if n != "ld.so"):
            read(0, int(loader["ldso_read"]))
            reads += 1
            calls += int(loader["ldso_calls"])
    from_memory = float(fileio.step_io()["from_memory"])
    return {"copies": fileio.copy_cycles(routine, copies, from_memory),
            "calls": calls * costs.cycles("syscall"),
            "lookups": sum(copies.values()) * costs.cycles("page_cache_lookup"),
            "reads": reads}
