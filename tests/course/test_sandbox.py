"""emu.course.sandbox (bubblewrap per student) and emu.course.exchange (answers leaving it as plain data)."""
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from emu.course import exchange, sandbox
from emu.kernel.workloads import Image
from emu.run.machine import Machine
from emu.run.result import Run

needs_bwrap = pytest.mark.skipif(sandbox.bwrap() is None and not os.environ.get("CI"),
                                 reason="bubblewrap is not installed (.ci/run installs it)")


def test_plain_values_cross_unchanged():
    values = {"n": 42, "x": 2.5, "nan": float("nan"), "s": "µs", "t": (1, (2, 3)), "l": [1, None],
              "st": {2, 3}, "fs": frozenset({"a"}), "d": {(1, 2): {"k": True}},
              "i64": np.int64(7), "f32": np.float32(0.5), "b": np.bool_(True)}
    back = exchange.loads(exchange.dumps(values))
    assert math.isnan(back.pop("nan")) and math.isnan(values.pop("nan"))
    assert back == values
    assert type(back["t"]) is tuple and type(back["fs"]) is frozenset
    assert type(back["i64"]) is np.int64 and type(back["f32"]) is np.float32


def test_the_librarys_dataclasses_cross_rebuilt_by_their_constructor():
    m = Machine("ppc750")
    m.load("five:\n    li r3, 5\n    blr\n")
    run = m.call("five")
    back = exchange.loads(exchange.dumps({"run": run}))["run"]
    assert type(back) is Run and back == run
    image = Image("big", 300, 10, 10, 200, 5, 5)
    back = exchange.loads(exchange.dumps({"i": image}))["i"]
    assert type(back) is Image and back.file.pages == image.file.pages


@dataclass
class Mine:
    x: int = 0


def test_what_is_not_plain_data_is_named_not_sent():
    sent = exchange.loads(exchange.dumps({"f": lambda P: P, "o": Mine(), "a": np.zeros(3),
                                          "ok": 1}))
    assert sent["ok"] == 1
    for name in ("f", "o", "a"):
        assert isinstance(sent[name], exchange.NotPlain)


@pytest.mark.parametrize("text, why", [
    ('{"x": {"$dataclass": "os:system", "fields": {}}}', "not a class of the library"),
    ('{"x": {"$dataclass": "emu.run.machine:Machine", "fields": {}}}', "not a dataclass"),
    ('{"x": {"$dataclass": "emu.run.result:Run", "fields": {"cycles": 1}}}', "fields"),
    ('{"x": {"$numpy": "O", "value": 1}}', "numpy"),
    ('{"x": {"$eval": "1"}}', "unknown tag"),
    ('{"x": {"$float": "1e999999"}}', "nan, inf"),
    ('{"not a name": 1}', "not a variable name"),
    ('[1]', "not an object"),
])
def test_a_forged_export_is_refused(text, why):
    with pytest.raises(ValueError, match=why):
        exchange.loads(text)


def test_deep_or_large_exports_are_refused():
    with pytest.raises(ValueError):
        exchange.loads('{"x": ' + "[" * 100 + "]" * 100 + "}")
    with pytest.raises(ValueError, match="exceed"):
        exchange.loads('{"x": "' + "a" * (exchange.MAX_BYTES + 1) + '"}')


@needs_bwrap
def test_the_sandbox_starts_here_unprivileged_and_offline():
    assert sandbox.check() is None


@needs_bwrap
def test_the_sandbox_shows_only_what_it_binds_and_kills_everything_at_the_end(tmp_path):
    """As root here: uid 65534, no capabilities; no course, home or repository; a detached
    grandchild is gone when the run ends; the wall-clock limit kills a runaway."""
    secret = tmp_path / "secret"
    secret.write_text("s")
    orphan = f"emu-sandbox-orphan-{os.getpid()}-{tmp_path.name}"     # this run's only
    probe = f"""
import os, subprocess, sys
status = open('/proc/self/status').read()
print(os.getuid(), os.getgid(), [l for l in status.splitlines() if l.startswith('CapEff')])
home = '{Path.home()}'
print(os.path.exists({str(secret)!r}), os.path.exists('{Path(__file__).parent}'),
      'HOME', sorted(os.listdir(home)) if os.path.exists(home) else [])
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', {orphan!r}],
                 start_new_session=True)
writable = []
for place in ['/', '/job.json', '/usr', sys.prefix, os.path.dirname(os.__file__),
              {str(Path(sandbox.__file__).parent)!r}, '/tmp', '/home/student']:
    try:
        if os.path.isdir(place):
            open(os.path.join(place, 'w'), 'w').close()
        else:
            open(place, 'a').close()
        writable.append(place)
    except OSError:
        pass
print('WRITABLE', writable)
"""
    folder = tmp_path / "run"
    folder.mkdir()
    code, out, log = sandbox.run([sys.executable, "-c", probe], "{}", sandbox.Limits(wall_s=60),
                                 folder)
    text = log.read_text()
    assert code == 0, text
    assert "65534 65534 ['CapEff:\\t0000000000000000']" in text
    assert "WRITABLE ['/tmp', '/home/student']" in text
    assert "False False" in text                        # the test's folder, the tests
    home = Path.home()                      # of the teacher's home, only what Python needs
    needed = sorted({p.relative_to(home).parts[0] for p in sandbox.readonly_paths()
                     if home in p.parents})
    assert f"HOME {needed}" in text
    # the namespace's end kills the orphan; its exit may take a moment after the run returns
    deadline = time.monotonic() + 5
    while survivors(orphan) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert survivors(orphan) == []
    started = time.monotonic()
    folder = tmp_path / "runaway"
    folder.mkdir()
    code, _, _ = sandbox.run([sys.executable, "-c", "while True: pass"], "{}",
                             sandbox.Limits(wall_s=3), folder)
    assert code == "time" and time.monotonic() - started < 10


@needs_bwrap
def test_the_sandboxs_resident_memory_is_watched_across_its_processes(tmp_path):
    """Three processes of 150 MB each: none near its address-space limit, together past the
    sandbox's 300 MB: the sandbox is killed."""
    probe = """
import os, time
for _ in range(2):
    if os.fork() == 0:
        break
hoard = b'x' * (150 << 20)
time.sleep(30)
"""
    started = time.monotonic()
    code, _, _ = sandbox.run([sys.executable, "-c", probe], "{}",
                             sandbox.Limits(memory_mb=300, wall_s=60), tmp_path)
    assert code == "memory" and time.monotonic() - started < 20


@needs_bwrap
def test_limits_hold_in_the_sandbox(tmp_path):
    probe = """
import os, resource
try:
    bytearray(600 << 20)
    print('memory: allowed')
except MemoryError:
    print('memory: refused')
try:
    open('/tmp/big', 'wb').write(b'x' * (40 << 20))
    print('file: written')
except OSError as error:
    print('file:', error.errno)
pids = []
try:
    for _ in range(100):
        pid = os.fork()
        if pid == 0:
            import time; time.sleep(5); os._exit(0)
        pids.append(pid)
    print('forks: all')
except OSError:
    print('forks:', len(pids))
"""
    code, _, log = sandbox.run([sys.executable, "-c", probe], "{}",
                               sandbox.Limits(address_mb=512, file_mb=32, processes=20,
                                              wall_s=60), tmp_path)
    text = log.read_text()
    assert "memory: refused" in text and "file: 27" in text, text      # EFBIG
    forks = int(text.split("forks:")[1].split()[0])
    assert forks < 20, text


@needs_bwrap
def test_a_sweep_runs_on_processes_in_the_sandbox(tmp_path):
    """emu.run.sweep's process pool needs multiprocessing's locks (in /dev/shm): Blanchard
    2002's make -j chapter sweeps 1-32 CPUs so."""
    probe = ("from emu import sweep\nimport sys, os\n"
             "if __name__ == '__main__':\n"
             "    out = sweep.run(dict, [dict(x=-1), dict(x=-3)], executor=None)\n"
             "    os.write(int(sys.argv[-1]), repr(out).encode() + b'\\n')\n")
    code, line, log = sandbox.run([sys.executable, "-c", probe], "{}",
                                  sandbox.Limits(wall_s=120), tmp_path)
    assert (code, line) == (0, b"[{'x': -1}, {'x': -3}]"), log.read_text()[-2000:]


def test_the_result_pipe_keeps_the_last_whole_line_and_drops_longer_ones():
    read, write = os.pipe()
    lines = sandbox.LastLine(read, limit=100)
    os.write(write, b"first\n" + b"x" * 300 + b"\nsecond\npart")
    os.close(write)
    assert lines.last() == b"second"
    read, write = os.pipe()
    lines = sandbox.LastLine(read, limit=100)
    os.write(write, b"ok\n" + b"y" * 300)       # a line too long, never ended
    os.close(write)
    assert lines.last() == b"ok"


def test_course_folders_inside_the_sandboxes_view_are_named():
    import emu
    assert sandbox.exposes(Path(emu.__file__).parent / "course")
    assert sandbox.exposes("/usr/local/course")
    assert not sandbox.exposes("/tmp/course")


def survivors(marker):
    """The pids of running processes whose command line holds ``marker``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except OSError:
            continue
    return found
