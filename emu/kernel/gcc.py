"""The processes of a kernel build, as images the kernel model runs: GNU make, and gcc 2.95's
driver with its passes (cpp, cc1, as), each with ld.so and libc, every page count an
ESTIMATE (no binary was inspected) and scalable. Blanchard 2002's make -j and Mackerras
2003's build both run them (``emu.kernel.workloads.kernel_compile`` with vfork and these
passes)."""
from __future__ import annotations

from .workloads import LIBRARIES, MAKE, SH, Image, Library


def _scaled(n, scale):
    return max(1, round(n * scale)) if n else 0


def _libraries(scale):
    """ld.so and libc (emu.kernel.workloads' estimates), every page count scaled."""
    fields = ("text_pages", "data_pages", "bss_pages", "text_touched", "data_written",
              "bss_written")
    return tuple(Library(lib.name, *(_scaled(getattr(lib, f), scale) for f in fields))
                 for lib in LIBRARIES)


def _image(name, libs, text, data, bss, text_touched, data_written, bss_written, stack,
           heap, heap_written):
    return Image(name, text_pages=text, data_pages=data, bss_pages=bss,
                 text_touched=text_touched, data_written=data_written,
                 bss_written=bss_written, stack_written=stack, libs=libs,
                 heap_pages=heap, heap_written=heap_written)


# The programs of one compile step, gcc 2.95.3 and binutils as the era's distributions
# built them (PowerPC binaries: the p690 ran a 32-bit userland). Every size is an
# ESTIMATE (no binary was inspected): pages mapped and pages a run touches, the compiler
# writing far more memory than it executes (cc1's obstacks and RTL for a kernel source
# file of a few hundred KB once its headers are included).
FULL_SIZE = {
    # name: (text, data, bss, text touched, data written, bss written, stack, heap,
    #        heap written)
    "gcc": (20, 2, 1, 8, 1, 1, 2, 16, 6),          # the driver: options, spec strings
    "cpp": (30, 2, 2, 15, 2, 2, 2, 256, 120),      # the preprocessor of gcc 2.95
    "cc1": (480, 30, 20, 200, 25, 15, 8, 2048, 900),
    "as": (225, 10, 4, 50, 6, 3, 2, 256, 100),       # gas with libbfd linked in
}


# The programs a 2.5.66 Kbuild rule runs around the compiler for each object: the top
# Makefile's if_changed_dep (lines 866-874 at "Linux 2.5.66", dmgerman/history-token
# 3007e2ef10) is one command list, `set -e; echo ...; $(CC) ... -c -o $@ $<; scripts/fixdep
# $(depfile) $@ '...' > $(@D)/.$(@F).tmp; rm -f $(depfile); mv -f $(@D)/.$(@F).tmp
# $(@D)/.$(@F).cmd`, which GNU make hands to /bin/sh -c (it holds ';'), and sh forks a
# child for each external command (set and echo are built in). ESTIMATES like FULL_SIZE's,
# their ranges the images' (emu.kernel.workloads.IMAGE_RANGE): fixdep is one small C file
# (scripts/fixdep.c) that reads the depfile and every header it names; rm and mv are GNU
# fileutils 4.1's, a few tens of KB each.
KBUILD_TOOLS = {
    # name: (text, data, bss, text touched, data written, bss written, stack, heap,
    #        heap written)
    "fixdep": (3, 1, 1, 2, 1, 1, 2, 8, 4),
    "rm": (8, 1, 1, 4, 1, 1, 2, 2, 1),
    "mv": (12, 1, 1, 5, 1, 1, 2, 2, 1),
}


def kbuild_shell(libs, scale=1.0):
    """(sh, tools) of a Kbuild rule (KBUILD_TOOLS): bash (emu.kernel.workloads.SH) and
    fixdep, rm and mv, every page count multiplied by ``scale``, on ``libs`` (the
    compiler's: one libc in the page cache for all)."""
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], not {scale!r}")
    sh = (SH.text_pages, SH.data_pages, SH.bss_pages, SH.text_touched, SH.data_written,
          SH.bss_written, SH.stack_written, SH.heap_pages, SH.heap_written)
    shell = _image("sh", libs, *(_scaled(n, scale) for n in sh))
    return shell, tuple(_image(name, libs, *(_scaled(n, scale) for n in sizes))
                        for name, sizes in KBUILD_TOOLS.items())


def compiler(scale=1.0):
    """(driver, passes) of gcc 2.95: the driver image and the cpp, cc1 and as images,
    and their libraries, every page count multiplied by ``scale`` (at least one page where
    the full size has one). The book runs them at SCALE, a fraction of the estimated size,
    so that a page of the book executes in about a minute."""
    if not 0 < scale <= 1:
        raise ValueError(f"scale must be in (0, 1], not {scale!r}")
    libs = _libraries(scale)
    images = {name: _image(name, libs, *(_scaled(n, scale) for n in sizes))
              for name, sizes in FULL_SIZE.items()}
    return images["gcc"], (images["cpp"], images["cc1"], images["as"])


def make_image(scale=1.0):
    """GNU make (emu.kernel.workloads.MAKE's estimate) with its libraries, scaled."""
    sizes = (MAKE.text_pages, MAKE.data_pages, MAKE.bss_pages, MAKE.text_touched,
             MAKE.data_written, MAKE.bss_written, MAKE.stack_written, MAKE.heap_pages,
             MAKE.heap_written)
    return _image("make", _libraries(scale), *(_scaled(n, scale) for n in sizes))


#: The size the book runs the programs at: a sixteenth of the estimates (FULL_SIZE), so that
#: a page of the book with 32 CPUs and three kernels executes in about a minute
SCALE = 1 / 16
