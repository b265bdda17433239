"""The native model (emu/model/*.c) is compiled here, at install time, as pycachesim does."""
import runpy

from setuptools import setup

build = runpy.run_path("emu/model/build.py")
setup(ext_modules=[build["extension"]()])
