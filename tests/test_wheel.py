"""A wheel of the project (what `pip install git+...`, Colab and Binder install) carries the
book's routines and published data, and finds them without a clone."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECK = """
import emu, emu.present.data
from emu.run.machine import Machine
assert str(emu.ROUTINES).startswith({where!r}), emu.ROUTINES
assert str(emu.present.data.data_dir()).startswith({where!r}), emu.present.data.data_dir()
m = Machine("ppc750")
m.load(emu.routine("ppc32/flush_dcache_icache.S"))
print(m.call("flush_dcache_icache", m.alloc(4096)).instructions,
      emu.present.data.load("mackerras2003_table2_lmbench").shape[0])
"""


def test_a_wheel_carries_the_routines_and_the_data(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps",
                    "--no-build-isolation", "-q", "-w", str(tmp_path / "dist")],
                   check=True, capture_output=True, timeout=600)
    wheel = next((tmp_path / "dist").glob("emu-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if n.startswith("emu/_book/")}
    want = {f"emu/_book/{p.relative_to(ROOT).as_posix()}"
            for p in [*ROOT.glob("routines/**/*.S"), *ROOT.glob("data/*.csv")]}
    assert want and want == shipped
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {k: v for k, v in os.environ.items() if k not in ("EMU_DATA_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "-c", CHECK.format(where=str(site))], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["777", "2"]        # the routine ran; Table 2's two rows
