"""A bubblewrap sandbox for one student's notebook (Debian's ``bubblewrap``, as Flatpak uses).

What the student's code sees and may do:

* a filesystem of its own: the system's ``/usr``, Python, the virtual environment and the
  library (``emu/``, ``routines/``, ``data/``) read-only; an empty home and ``/tmp`` (tmpfs,
  bounded); the job (the cells to run) read-only. Nothing else: not the course folder, not
  the other submissions, not the teacher's home, not ``/etc``; no folder of the host's is
  writable (the result leaves through a pipe, so no student can fill the grader's disk);
* no network (its own network namespace: 127.0.0.1 is the sandbox's own), its own process
  and IPC namespaces, a new session (no terminal to type into);
* an unprivileged user: as root the sandbox drops to uid/gid 65534 (nobody) with no
  capabilities (``setpriv``), so the process limit counts; as a teacher, the teacher's uid
  outside, mapped to 65534 inside;
* limits (``prlimit``): address space, processes, CPU seconds, file size, open files, no
  core files, each process; and, watched by the grader, the resident memory of all the
  sandbox's processes together and a wall-clock limit, past which it kills the sandbox.

When the sandbox ends, its process namespace ends with it (bubblewrap's pid 1): no process
started inside survives, however it detached; the tmpfs are gone with it.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..context import book_dir

NOBODY = 65534
HOME = "/home/student"
MAX_LINE = 16 << 20                # the longest result line the grader reads
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Limits:
    """What one student's sandbox may use."""
    memory_mb: int = 4096          # resident memory of all its processes together
    address_mb: int = 16384        # address space of each process (Unicorn reserves much:
    #                                Blanchard 2002's 32 emulated CPUs, 2.9 GB, 0.4 resident)
    processes: int = 256           # tasks (threads count) of the sandbox's user
    cpu_s: int = 1200              # CPU seconds of each process
    file_mb: int = 64              # largest file written
    tmp_mb: int = 256              # the home and /tmp, each
    wall_s: float = 1200           # the whole run, after which it is killed


class SandboxError(RuntimeError):
    """The sandbox could not run (not the student's fault)."""


def bwrap():
    return shutil.which("bwrap")


def readonly_paths():
    """Host paths the student's code needs, read-only: the interpreter, the environment and
    the library with its routines and data."""
    package = Path(__file__).resolve().parents[1]          # emu
    paths = [Path(sys.base_prefix), Path(sys.prefix), package]
    paths += [book_dir("routines"), book_dir("data")]
    paths = [p.resolve() for p in paths if p.exists()]
    usr = Path("/usr")
    out = []
    for path in sorted(set(paths)):
        if path == usr or usr in path.parents:
            continue
        if any(p in path.parents for p in out):
            continue
        out.append(path)
    return out


def exposes(path):
    """True if the sandbox would show ``path`` (a course or submissions folder) to a
    student."""
    path = Path(path).resolve()
    return any(path == p or p in path.parents for p in [Path("/usr"), *readonly_paths()])


def _ancestors(paths):
    """The folders above ``paths``, made traversable in the sandbox (bubblewrap copies the
    host's mode, e.g. /root's 0700)."""
    out = []
    for path in paths:
        for parent in reversed(path.parents):
            if str(parent) != "/" and parent not in out:
                out.append(parent)
    return out


def _system_binds():
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib64", "lib32", "libx32", "sbin"):
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    if Path("/etc/ld.so.cache").exists():
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return args


def command(inner, job, etc, limits, env=None):
    """The bwrap command line that runs ``inner`` (argv) in the sandbox; ``job`` (a file) is
    /job.json, ``etc`` holds passwd and group; ``env`` is added to the sandbox's clean
    environment."""
    root = os.geteuid() == 0
    paths = readonly_paths()
    args = [bwrap(), "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox",
            "--clearenv"]
    if not root:
        args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY)]
    args += _system_binds()
    size = str(limits.tmp_mb << 20)
    scratch = ("/dev/shm", "/tmp", HOME)
    # the scratch folders first, then the read-only paths: a venv or a clone under /tmp
    # (CI's, a teacher's) stays visible on top of the sandbox's own /tmp.
    # /dev/shm writable: multiprocessing's locks live there (emu.run.sweep's process pool)
    args += ["--proc", "/proc", "--dev", "/dev"]
    for folder in scratch:
        args += ["--size", size, "--perms", "1777", "--tmpfs", folder]
    for folder in _ancestors(paths + [Path(HOME)]):
        if str(folder) not in scratch:
            args += ["--perms", "0755", "--dir", str(folder)]
    for path in paths:
        args += ["--ro-bind", str(path), str(path)]
    for name in ("passwd", "group"):
        args += ["--ro-bind", str(Path(etc) / name), f"/etc/{name}"]
    args += ["--ro-bind", str(job), "/job.json", "--chdir", HOME]
    env = {**(env or {}), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": HOME,
           "USER": "student", "LOGNAME": "student", "LANG": "C.UTF-8",
           "IPYTHONDIR": f"{HOME}/.ipython", "MPLCONFIGDIR": "/tmp/matplotlib",
           "PYTHONDONTWRITEBYTECODE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    for key, value in env.items():
        args += ["--setenv", key, value]
    args.append("--")
    if root:
        args += ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    args += prlimit(limits, root) + inner
    return args


def _tasks_of(uid):
    """Tasks (processes and threads) of ``uid`` now: RLIMIT_NPROC counts them all."""
    count = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid == uid:
                count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count


def prlimit(limits, root):
    """prlimit's command prefix. The process limit counts every task of the user; as a
    teacher (not root) that user is the teacher's, so it is what they run now plus ours."""
    processes = limits.processes + (0 if root else _tasks_of(os.getuid()))
    mb = 1 << 20
    return ["prlimit", f"--as={limits.address_mb * mb}", f"--nproc={processes}",
            f"--cpu={int(limits.cpu_s)}", f"--fsize={limits.file_mb * mb}",
            "--nofile=1024", "--core=0", "--"]


def _etc(folder):
    etc = Path(folder) / "etc"
    etc.mkdir()
    (etc / "passwd").write_text(f"student:x:{NOBODY}:{NOBODY}:student:{HOME}:/bin/sh\n")
    (etc / "group").write_text(f"student:x:{NOBODY}:\n")
    for name in ("passwd", "group"):
        (etc / name).chmod(0o644)
    return etc


def run(inner, job_text, limits, folder, env=None):
    """Run ``inner`` (argv, reading /job.json) in a sandbox; ``folder`` is a private temporary
    folder of the grader's. ``inner`` gets, as its last argument, the number of a file
    descriptor to write its result to, one line at a time. Returns (its exit status, or why
    it was killed: "time" or "memory"; the last line written, or None; the log's path)."""
    folder = Path(folder)
    job = folder / "job.json"
    job.write_text(job_text, encoding="utf-8")
    job.chmod(0o644)
    read, write = os.pipe()
    argv = command(inner + [str(write)], job, _etc(folder), limits, env)
    return supervise(argv, limits, folder / "log.txt", read, write)


def supervise(argv, limits, log, read, write, **popen):
    """Run ``argv`` in a new session, the pipe's ``write`` end passed on, output to ``log``;
    kill its process group when it ends, at the wall-clock limit or when its processes hold
    more than the memory limit. Returns (exit status, "time" or "memory"; the last line
    read from the pipe or None; ``log``)."""
    lines = LastLine(read)
    try:
        with open(log, "wb") as sink:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=sink, stderr=sink,
                                    start_new_session=True, pass_fds=(write,), **popen)
    finally:
        os.close(write)
    try:
        code = _watch(proc, limits)
    finally:
        kill(proc)
    return code, lines.last(), Path(log)


def _watch(proc, limits, every_s=0.2):
    """Wait for ``proc``: its exit status, or "time" or "memory" (the resident memory of it
    and all its descendants, polled: no cgroup needed)."""
    deadline = time.monotonic() + limits.wall_s
    while True:
        try:
            return proc.wait(timeout=every_s)
        except subprocess.TimeoutExpired:
            pass
        if time.monotonic() > deadline:
            return "time"
        if resident_mb(proc.pid) > limits.memory_mb:
            return "memory"


def resident_mb(root):
    """Resident memory of ``root`` and its descendants, in MB (shared pages counted in each
    process: an overestimate, never an underestimate)."""
    children = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(pid))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total / (1 << 20)


class LastLine:
    """Reads a pipe to its end in a thread, keeping only the last complete line (at most
    ``limit`` bytes: longer lines are dropped), so that neither memory nor a writer that never
    stops can hold up the grader."""

    def __init__(self, fd, limit=MAX_LINE):
        self.limit, self.line = limit, None
        self.thread = threading.Thread(target=self._read, args=(fd,), daemon=True)
        self.thread.start()

    def _read(self, fd):
        partial, dropping = b"", False
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                *lines, rest = (partial + chunk).split(b"\n")
                for line in lines:
                    if not dropping:
                        self.line = line
                    dropping = False
                partial = rest
                if len(partial) > self.limit:
                    partial, dropping = b"", True

    def last(self, wait_s=10):
        """The last line, once the writers are gone (or after ``wait_s`` seconds: in
        --trusted mode a detached process may keep the pipe open)."""
        self.thread.join(wait_s)
        return self.line


def kill(proc):
    """Kill bwrap's process group; its pid 1 dies with it (--die-with-parent), and with that
    every process in the sandbox's pid namespace."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


_PROBE = {}


def check():
    """None if a sandbox starts here (it runs a command as an unprivileged user with no
    network), else why not. Tried once per process."""
    if "why" in _PROBE:
        return _PROBE["why"]
    why = None
    if bwrap() is None:
        why = "bwrap is not installed (Debian: apt-get install bubblewrap)"
    else:
        probe = ("import os, socket\n"
                 "assert os.getuid() != 0 and os.geteuid() != 0, 'runs as root'\n"
                 "s = socket.socket()\n"
                 "try:\n"
                 "    s.connect(('10.255.255.1', 9)); raise SystemExit('network reachable')\n"
                 "except OSError:\n"
                 "    pass\n"
                 "import sys; os.write(int(sys.argv[-1]), b'ok\\n')\n")
        with tempfile.TemporaryDirectory(prefix="emu-probe-") as folder:
            try:
                code, line, log = run([sys.executable, "-c", probe], "{}",
                                      Limits(wall_s=60), folder)
            except OSError as error:
                code, line, log = -1, None, None
                why = f"bwrap cannot start ({error})"
            if why is None and (code != 0 or line != b"ok"):
                tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log \
                    else []
                why = f"bwrap failed (exit {code}): {' | '.join(tail)}"
    _PROBE["why"] = why
    return why

