"""The native model (emu/hw/model/*.c) is compiled here, at install time, as pycachesim does.

A wheel (``pip install git+...``, Colab, Binder) also carries the book's routines and published
data: routines/ and data/ live beside the package in a clone, and are copied into it
(emu/_book/) when it is built, where emu.ROUTINES and emu.present.data look when there is no clone.
"""
import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

BOOK_FILES = {"routines": "**/*.S", "data": "*.csv"}


class build_py_with_book_files(build_py):
    def run(self):
        super().run()
        if self.editable_mode:          # an editable install reads the clone itself
            return
        here = Path(__file__).resolve().parent
        for folder, pattern in BOOK_FILES.items():
            for path in sorted((here / folder).glob(pattern)):
                target = Path(self.build_lib) / "emu" / "_book" / path.relative_to(here)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)


build = runpy.run_path("emu/hw/model/build.py")
setup(ext_modules=[build["extension"]()], cmdclass={"build_py": build_py_with_book_files})
