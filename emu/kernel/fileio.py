"""A compile step's file read() and write() copies on POWER4, with the 32-bit kernel's
__copy_tofrom_user or the POWER4 one (Mackerras 2003 section 3.1; Blanchard 2002's jobs:
emu.papers.blanchard2002.job_file_io), or on any processor with its own routine
(``copy_cycles``' profile: the Mackerras chapter's 750 and 405 builds, io_step).

The path, as Linux 2.5.66's mm/filemap.c has it (BitKeeper history, "Linux 2.5.66",
commit 3007e2ef10):

- read(): ``generic_file_read`` -> ``do_generic_mapping_read``, which walks the file one
  page-cache page at a time (index = pos >> PAGE_CACHE_SHIFT, offset = pos &
  ~PAGE_CACHE_MASK; nr = PAGE_CACHE_SIZE, or i_size's remainder on the last page, minus
  offset), looks each page up (``find_get_page``) and hands it to ``file_read_actor``,
  which copies min(nr, what the call still wants) with ``__copy_to_user(desc->buf, kaddr +
  offset, size)``;
- write(): ``generic_file_write`` -> ``generic_file_write_nolock`` ->
  ``generic_file_aio_write_nolock``: offset = pos & (PAGE_CACHE_SIZE - 1), bytes =
  min(PAGE_CACHE_SIZE - offset, count), the page from ``__grab_cache_page``, then
  ``prepare_write``, ``filemap_copy_from_user(page, offset, buf, bytes)``
  (``__copy_from_user(kaddr + offset, buf, bytes)``) and ``commit_write``;
- include/asm-ppc64/uaccess.h: ``__copy_to_user`` and ``__copy_from_user`` are both
  ``__copy_tofrom_user``.

``read_copies`` and ``write_copies`` cut a call into those copies; each copy runs as guest
code on the POWER4 model (``copybench``: the 32-bit kernel's routine,
routines/ppc32/copy_tofrom_user.S, or the POWER4 one, routines/ppc64/copy_tofrom_user.S).
The page-cache look-up, the system call and prepare_write/commit_write are the same code
under both routines: they decide which page a copy reads or writes and where in it (the
cut above), not what the copy costs, and they cancel in the saving; they are not run.

What a compile step reads and writes (``STEP_IO``) is an ESTIMATE, each with its range in
``STEP_IO_RANGES``: cpp reads the source and its headers whole into buffers of its own,
and the passes hand on the .i and .s and write the .o through stdio's buffers.
"""
from __future__ import annotations

from collections import Counter

from ..hw import estimates
from . import copybench

PAGE = 4096
LINE = 128      # a POWER4 cache line: copybench measures a copy by its offsets within one
#: the two routines of section 3.1: the 32-bit kernel's, the POWER4 one (copybench names)
ROUTINES = {"original": "copy_tofrom_user32", "optimized": "copy_tofrom_user64"}

#: A compile step's file traffic (gcc 2.95: cpp, cc1 and as as separate processes passing
#: temporary files, as emu.kernel.gcc runs them). ESTIMATES: no build was traced.
STEP_IO = {
    "files_read": 150,         # the .c and the headers cpp opens
    "bytes_read": 600_000,     # what those files hold in all
    "i_bytes": 300_000,        # cpp's output, cc1's input
    "s_bytes": 80_000,         # cc1's output, as's input
    "o_bytes": 20_000,         # as's output
    "malloc_offset": 8,        # where in its page a buffer of cpp's own starts
    "stdio_offset": 0,         # where in its page a stdio buffer starts
    "from_memory": 0.5,        # the share of copies whose lines come from memory
}
STEP_IO_RANGES = {
    "files_read": (60, 300, "the .c and the headers cpp opens for one kernel source file "
                            "of 2.5.66 (linux/sched.h, linux/fs.h and linux/mm.h alone pull "
                            "in dozens; include guards keep each to one read): not counted"),
    "bytes_read": (250_000, 1_500_000, "the bytes of those files, comments and #if'd-out "
                                       "code included (headers of a few KB each, a source "
                                       "file of a few to tens of KB)"),
    "i_bytes": (150_000, 600_000, "a kernel source file preprocessed: emu.kernel.gcc sizes "
                                  "cc1's memory for 'a few hundred KB' of input"),
    "s_bytes": (30_000, 200_000, "cc1's assembly for one kernel source file at -O2"),
    "o_bytes": (5_000, 60_000, "the object file as writes (code, data, relocations, "
                               "symbols)"),
    "malloc_offset": (8, 120, "cpp reads a file whole into a buffer from malloc, 8-byte "
                              "aligned; an allocation above glibc's mmap threshold starts "
                              "8 bytes (its chunk header) into a page, a smaller one "
                              "anywhere 8-aligned (the 32-bit routine's cost depends on the "
                              "offset within a 128-byte line)"),
    "stdio_offset": (0, 8, "glibc 2.2-2.3's stdio buffer of st_blksize (4 KB) came from "
                           "ALLOC_BUF, an mmap, so page-aligned: a whole page copied at a "
                           "page-aligned file position then takes the POWER4 routine's page "
                           "loop (not verified in a retrieved glibc; later glibc mallocs it, "
                           "8-aligned: 8)"),
    "from_memory": (0.0, 1.0, "share of the copies whose source and destination come from "
                              "memory (copybench's cold) rather than the L1 (warm): not "
                              "measured; cc1's working set of several MB overruns the L2 "
                              "between one pass's write and the next one's read, while "
                              "POWER4's prefetcher, which the model lacks, hides much of a "
                              "stream's latency"),
}


#: exec's copies to and from user space, Linux 2.5.66 ("Linux 2.5.66", dmgerman/history-token
#: 3007e2ef10). Facts: prepare_binprm (fs/exec.c) kernel_reads the binary's first
#: BINPRM_BUF_SIZE bytes (include/linux/binfmts.h: 128); load_elf_binary (fs/binfmt_elf.c)
#: kernel_reads its program headers (at e_phoff, right after the 52-byte ELF32 header,
#: e_phnum x 32 bytes), then PT_INTERP's path, then the interpreter's first 128 bytes, and
#: load_elf_interp its program headers; kernel_read is vfs_read, whose file_read_actor
#: copies with __copy_to_user. copy_strings (fs/exec.c) copies each argv and envp string
#: to the new stack with one copy_from_user per page it spans. PPC32 glibc's interpreter
#: is /lib/ld.so.1 (12 bytes and the NUL).
BINPRM_BUF_SIZE = 128
ELF32_EHDR, ELF32_PHDR = 52, 32
INTERP_PATH_BYTES = len("/lib/ld.so.1") + 1
#: ESTIMATES, each with its range in EXEC_IO_RANGES
EXEC_IO = {"phnum": 6, "strings": 60, "string_bytes": 24}
EXEC_IO_RANGES = {
    "phnum": (4, 8, "program headers of a dynamically linked ELF32 program or ld.so of 2003 "
                    "(PHDR, INTERP, two LOADs, DYNAMIC, NOTE; ld.so has no INTERP): none "
                    "was inspected"),
    "strings": (20, 150, "argv and envp strings of an exec in a Kbuild step: gcc's and "
                         "cpp's command lines carry 2.5.66's c_flags (a few dozen "
                         "options), as, fixdep, rm and mv a handful; the environment is "
                         "the user's plus what the top Makefile exports (ARCH, "
                         "CROSS_COMPILE, CFLAGS, ...): not counted"),
    "string_bytes": (8, 60, "a string's mean length with its NUL (an option such as "
                            "-fno-common, a path such as include/linux/autoconf.h, an "
                            "environment entry)"),
}


def estimate_ranges():
    """[(name, nominal, low, high, why)] of the step's traffic and file-system calls
    (emu.book.ranges)."""
    return ([(f"kernel:build_io.{k}", v, *STEP_IO_RANGES[k]) for k, v in STEP_IO.items()]
            + [(f"kernel:exec_io.{k}", v, *EXEC_IO_RANGES[k]) for k, v in EXEC_IO.items()]
            + [(f"kernel:fs_calls.{k}", v, *FS_CALLS_RANGES[k]) for k, v in FS_CALLS.items()])


def exec_io():
    """EXEC_IO with any moved estimate's value (emu.hw.estimates)."""
    return {k: estimates.value(f"kernel:exec_io.{k}", v) for k, v in EXEC_IO.items()}


def exec_copies(execs, io=None):
    """The __copy_tofrom_user calls of ``execs`` execs of dynamically linked programs (as
    2.5.66 makes them: EXEC_IO's notes): Counter{(size, src_offset, dst_offset): count}.
    Per exec: the binary's first 128 bytes, its program headers (from file offset 52),
    PT_INTERP's path (after them), ld.so's first 128 bytes and its program headers, into
    kmalloc'd buffers (8-byte aligned: offset 0; each offset within a POWER4 line, LINE,
    which is all copybench's cost reads of it); and the argv and envp strings, which lie
    packed in the user's memory and are packed again at the new stack's top, so each sits
    as far from an 8-byte boundary in both: spread evenly over the eight offsets."""
    if execs < 0:
        raise ValueError(f"execs must be at least 0, not {execs!r}")
    io = io or exec_io()
    phnum, strings, length = (int(io[k]) for k in ("phnum", "strings", "string_bytes"))
    headers = phnum * ELF32_PHDR
    counts = Counter()
    per_exec = [(BINPRM_BUF_SIZE, 0, 0), (headers, ELF32_EHDR, 0),
                (INTERP_PATH_BYTES, (ELF32_EHDR + headers) % LINE, 0),
                (BINPRM_BUF_SIZE, 0, 0), (headers, ELF32_EHDR, 0)]
    for copy in per_exec:
        counts[copy] += execs
    for offset in range(8):
        counts[(length, offset, offset)] += execs * strings / 8
    return counts


def mix(copies):
    """Shares of ``copies`` (a Counter as step_copies'): below 128 bytes (a POWER4 cache
    line), below 512, not 8-byte aligned (source or destination), page-sized; and the
    count. {name: value}."""
    total = sum(copies.values())
    if not total:
        raise ValueError("no copies to share out")

    def share(test):
        return sum(n for key, n in copies.items() if test(*key)) / total
    return {"calls": total,
            "below 128 bytes": share(lambda size, src, dst: size < 128),
            "below 512 bytes": share(lambda size, src, dst: size < 512),
            "not 8-byte aligned": share(lambda size, src, dst: src % 8 or dst % 8),
            "page-sized": share(lambda size, src, dst: size == PAGE)}


def step_io():
    """STEP_IO with any moved estimate's value (emu.hw.estimates)."""
    return {k: estimates.value(f"kernel:build_io.{k}", v) for k, v in STEP_IO.items()}


def _check(name, value, low=0):
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number from {low}, not {value!r}")


def read_copies(file_bytes, pos, count, buf_offset):
    """The __copy_to_user calls of one read(fd, buf, count) at file position ``pos`` of a
    file of ``file_bytes``, ``buf`` ``buf_offset`` bytes into a page, as
    do_generic_mapping_read and file_read_actor make them: [(size, src_offset,
    dst_offset)], each offset within its page."""
    for name, value in (("file_bytes", file_bytes), ("pos", pos), ("count", count),
                        ("buf_offset", buf_offset)):
        _check(name, value)
    copies, index, offset, done = [], pos // PAGE, pos % PAGE, 0
    while done < count:
        end_index = file_bytes // PAGE
        if index > end_index:
            break
        nr = PAGE
        if index == end_index:
            nr = file_bytes % PAGE
            if nr <= offset:
                break
        size = min(nr - offset, count - done)
        copies.append((size, offset, (buf_offset + done) % PAGE))
        done += size
        offset += size
        index += offset // PAGE
        offset %= PAGE
    return copies


def write_copies(pos, count, buf_offset):
    """The __copy_from_user calls of one write(fd, buf, count) at ``pos``, as
    generic_file_aio_write_nolock makes them (filemap_copy_from_user a page at a time):
    [(size, src_offset, dst_offset)], the source the user's buffer."""
    for name, value in (("pos", pos), ("count", count), ("buf_offset", buf_offset)):
        _check(name, value)
    copies, done = [], 0
    while done < count:
        offset = (pos + done) % PAGE
        size = min(PAGE - offset, count - done)
        copies.append((size, (buf_offset + done) % PAGE, offset))
        done += size
    return copies


def stdio_file(file_bytes, buf_offset, write):
    """A file written (or read) start to end through a stdio buffer of a page: one
    write() (read()) of a page per buffer-full at page-aligned positions, the last one
    short. The copies, as write_copies (read_copies) cut them."""
    _check("file_bytes", file_bytes)
    copies = []
    for pos in range(0, file_bytes, PAGE):
        count = min(PAGE, file_bytes - pos)
        copies += (write_copies(pos, count, buf_offset) if write
                   else read_copies(file_bytes, pos, count, buf_offset))
    return copies


def step_copies(io=None):
    """Every copy of a compile step with how many times it happens: Counter{(size,
    src_offset, dst_offset): count}. cpp reads ``files_read`` files of ``bytes_read`` in
    all, each whole in one read() into a buffer ``malloc_offset`` into a page (a file's
    last page holds half a page on average: one copy of 2,048 bytes a file stands for
    them, or of the mean size where the files are smaller); the .i, .s and .o go through stdio (``stdio_file``), each written once
    and, but for the .o, read once."""
    io = io or step_io()
    files, total = int(io["files_read"]), int(io["bytes_read"])
    if files < 1 or total < files:
        raise ValueError(f"files_read must be at least 1 and bytes_read at least a byte a "
                         f"file, not {files} files of {total} bytes")
    counts = Counter()
    last = min(PAGE // 2, total // files)       # files under a page hold less
    whole = read_copies(PAGE, 0, PAGE, int(io["malloc_offset"]))[0]
    tail = read_copies(last, 0, last, int(io["malloc_offset"]))[0]
    if total > files * last:
        counts[whole] += (total - files * last) / PAGE
    counts[tail] += files
    stdio = int(io["stdio_offset"])
    for name, read_too in (("i_bytes", True), ("s_bytes", True), ("o_bytes", False)):
        size = int(io[name])
        counts.update(stdio_file(size, stdio, write=True))
        if read_too:
            counts.update(stdio_file(size, stdio, write=False))
    return counts


def step_calls(io=None):
    """(read() calls, write() calls) of a compile step with the traffic ``io`` (STEP_IO's
    keys): cpp reads each file in one read(); the .i, .s and .o go through stdio a page at a
    time, each written once and, but for the .o, read once (as step_copies cuts them)."""
    io = io or step_io()
    pages = {name: -(-int(io[name]) // PAGE) for name in ("i_bytes", "s_bytes", "o_bytes")}
    reads = int(io["files_read"]) + pages["i_bytes"] + pages["s_bytes"]
    return reads, sum(pages.values())


#: A compile step's file-system calls besides read() and write(), Linux 2.5.66 and the
#: programs of its Kbuild rule (emu.kernel.gcc). Facts: scripts/fixdep.c (dmgerman/
#: history-token 3007e2ef10) reads the .d file and then every file it names the same way,
#: open(), fstat(), mmap() of the whole file (PROT_READ, MAP_PRIVATE), a scan of every byte,
#: munmap(), close() (print_deps, do_config_file); the rule's rm -f unlinks the .d file and
#: its mv -f renames fixdep's output (the top Makefile's if_changed_dep). Taken, not read
#: in their sources: cpp (gcc 2.95) opens each file it reads, fstat()s it for its size,
#: reads it whole (step_calls) and closes it; ld.so opens, fstat()s and closes the files of
#: each exec (libs_opened); their mmap()s are not counted here. ESTIMATES, with
#: FS_CALLS_RANGES:
FS_CALLS = {"failed_opens": 20, "components": 3, "libs_opened": 2}
FS_CALLS_RANGES = {
    "failed_opens": (0, 150, "cpp's opens that fail along the include path (a quoted "
                             "#include tries the including file's directory first; "
                             "<linux/...> and <asm/...> are found in the first -I "
                             "directory): not counted"),
    "components": (2, 6, "path components walked per open or stat: include/linux/sched.h "
                         "is three from the top of the tree; include/asm is a symlink to "
                         "asm-ppc (one more walk); a source file sits two to four deep"),
    "libs_opened": (1, 3, "files ld.so opens per exec of a dynamically linked program "
                          "(/etc/ld.so.cache, libc.so.6; more libraries for as, with "
                          "libbfd linked in statically: none more)"),
}


def fs_calls():
    """FS_CALLS with any moved estimate's value (emu.hw.estimates)."""
    return {k: estimates.value(f"kernel:fs_calls.{k}", v) for k, v in FS_CALLS.items()}


def step_fs_calls(execs, io=None, fs=None, kbuild=True):
    """A compile step's open(), stat(), close(), mmap(), munmap(), unlink() and rename()
    calls, the path components they walk and the file pages fixdep maps and reads (each a
    page fault), with the traffic ``io`` (STEP_IO's keys), ``fs`` (FS_CALLS') and
    ``execs`` execs: {name: count}. fixdep reads the .d file and the ``files_read`` files
    it names, whose pages are counted as step_copies cuts the files (a file's last page,
    every whole page before it). ``kbuild`` False: make runs gcc itself, without the
    rule's fixdep, rm and mv."""
    io, fs = io or step_io(), fs or fs_calls()
    files = int(io["files_read"])
    libs = execs * fs["libs_opened"]
    mapped = fixdep_files(io)
    depfile = len(mapped["depfile"])
    fixdep = files + depfile if kbuild else 0           # the .d file and the files it names
    renamed = 1 if kbuild else 0                        # rm's unlink, mv's rename
    opens = files + fixdep + libs                       # cpp, fixdep, ld.so
    lookups = opens + fs["failed_opens"] + renamed * 3  # a rename walks two names
    return {"open": opens, "failed_open": fs["failed_opens"], "stat": opens, "close": opens,
            "mmap": fixdep, "munmap": fixdep, "unlink": renamed, "rename": renamed,
            "components": lookups * fs["components"],
            "mapped_pages": sum(sum(v) for v in mapped.values()) if kbuild else 0}


#: the dependency file cpp writes (-Wp,-MD, 2.5.66's c_flags), fixdep's first file: a page
#: (a few dozen paths of 20-40 bytes)
DEPFILE_PAGES = 1


def fixdep_files(io=None):
    """The files fixdep maps in a step and each one's pages, with the traffic ``io``
    (STEP_IO's keys): {"depfile": (pages,), "source": (pages,), "headers": (pages, ...)}.
    parse_dep_file (scripts/fixdep.c, 2.5.66) maps every file the .d names but
    include/linux/autoconf.h: the .c first (gcc's -MD writes the source as the first
    prerequisite), then the headers, the ``files_read`` files cpp read. Their pages are
    step_copies' cut of them: a last page each, and the whole pages before the last ones
    (``bytes_read`` less a last page's share a file) spread evenly over the files, the
    first files taking one more where they do not divide (an ASSUMPTION: no file's size
    was counted; the total is the estimate's)."""
    io = io or step_io()
    files, total = int(io["files_read"]), int(io["bytes_read"])
    if files < 1 or total < files:
        raise ValueError(f"files_read must be at least 1 and bytes_read at least a byte a "
                         f"file, not {files} files of {total} bytes")
    last = min(PAGE // 2, total // files)
    whole = (total - files * last) // PAGE
    pages = [1 + (k + 1) * whole // files - k * whole // files for k in range(files)]
    pages.sort(reverse=True)
    return {"depfile": (DEPFILE_PAGES,), "source": (pages[0],), "headers": tuple(pages[1:])}


def copy_cycles(routine, copies, from_memory, profile="power4"):
    """Cycles of ``copies`` (step_copies()) with ``routine`` (a copybench name) on
    ``profile``'s model (by default POWER4's): each copy's cycles from memory (copybench's
    cold) and from the L1 (warm), weighted by ``from_memory``."""
    if not 0 <= from_memory <= 1:
        raise ValueError(f"from_memory must be from 0 to 1, not {from_memory!r}")
    total = 0.0
    for (size, src, dst), count in copies.items():
        cold, warm = (copybench.measure(routine, size, src, dst, cache, profile).cycles
                      for cache in ("cold", "warm"))
        total += count * (from_memory * cold + (1 - from_memory) * warm)
    return total


def step_cycles(io=None):
    """{"original": cycles, "optimized": cycles} of a compile step's file copies, and the
    copies' count and bytes: (cycles, copies, bytes)."""
    io = io or step_io()
    copies = step_copies(io)
    cycles = {kernel: copy_cycles(routine, copies, float(io["from_memory"]))
              for kernel, routine in ROUTINES.items()}
    return (cycles, sum(copies.values()),
            sum(size * n for (size, _, _), n in copies.items()))
