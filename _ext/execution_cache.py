"""Sphinx extension: a rebuild executes only the notebooks whose results could change.

The book executes its notebooks through myst-nb's jupyter-cache (``execute_notebooks:
cache`` in _config.yml), as the QuantEcon lectures do: a notebook whose cells are unchanged
is not executed again. Its results also depend on the library and the files it reads, which
jupyter-cache does not see; so the cache lives in a folder named after a hash of all of
them (``SOURCES``: emu/, its C model and profiles, routines/, data/, requirements.txt,
_config.yml). Change any of them and every notebook runs again; the older caches are
removed. A fresh clone has no cache and executes everything: the README's build command and
CI always start from scratch.

Registered in ``_config.yml`` under ``sphinx: local_extensions``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from emu.hw.model.build import files_digest

SOURCES = ("emu/**/*.py", "emu/hw/model/*.c", "emu/hw/model/*.h", "emu/hw/profiles/*.toml",
           "routines/**/*.S", "data/*.csv", "requirements.txt", "_config.yml")
CACHE_FOLDER = ".jupyter_cache"


def sources_hash(root: Path) -> str:
    """A hash of the names and bytes of every file the notebooks' results depend on."""
    return files_digest(root, SOURCES)


def _cache_per_sources(app, config):
    """config-inited: point myst-nb's cache at the folder of the current sources."""
    if config.nb_execution_mode != "cache":
        return
    base = Path(app.outdir).parent / CACHE_FOLDER
    current = base / sources_hash(Path(app.confdir).resolve())
    if base.is_dir():
        for old in base.iterdir():
            if old.is_dir() and old != current:
                shutil.rmtree(old, ignore_errors=True)
    config.nb_execution_cache_path = str(current)


def setup(app):
    app.connect("config-inited", _cache_per_sources, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
