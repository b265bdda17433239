"""Sphinx extension: a rebuild executes only the notebooks whose results could change.

The book executes its notebooks through myst-nb's jupyter-cache (``execute_notebooks:
cache`` in _config.yml), as the QuantEcon lectures do: a notebook whose cells are unchanged
is not executed again. Its results also depend on the library and the files it reads, which
jupyter-cache does not see; so the cache lives in a folder named after a hash of all of
them (``SOURCES``: emu/, its C model and profiles, routines/, data/, requirements.txt,
_config.yml). Change any of them and every notebook runs again; the older caches are
removed. A fresh clone has no cache and executes everything: the README's build command and
CI always start from scratch.

Runs are shared between the notebooks of one build: the library's units (emu.run.reuse,
every point of an emu.run.sweep) that two notebooks run with the same arguments run once,
in ``_build/.shared_runs/<the sources' hash>`` (``EMU_SHARED_RUNS``).

myst-nb executes the notebooks one after the other as Sphinx reads them. So before it reads,
the notebooks it would execute run here, ``execution_workers`` at once (a process each
starts the notebook's kernel; default: one per core), and their results go into the same
cache; myst-nb then finds each in the cache. A notebook that fails here is left out of the
cache, and myst-nb runs it again and reports its error as it always does. A notebook that
``nb_execution_excludepatterns`` excludes, or one written as text (a MyST ``.md``
notebook), is left to myst-nb.

Registered in ``_config.yml`` under ``sphinx: local_extensions``.
"""
from __future__ import annotations

import multiprocessing
import os
import shutil
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path, PurePosixPath

import nbformat
from sphinx.util import logging

from emu.hw.model.build import files_digest

SOURCES = ("emu/**/*.py", "emu/hw/model/*.c", "emu/hw/model/*.h", "emu/hw/profiles/*.toml",
           "routines/**/*.S", "data/*.csv", "requirements.txt", "_config.yml")
CACHE_FOLDER = ".jupyter_cache"
#: where the notebooks executed in one build share their runs (emu.run.reuse: a grid two
#: notebooks run is run once), per version of the sources like the cache
SHARED_RUNS_FOLDER = ".shared_runs"
SHARED_RUNS_VARIABLE = "EMU_SHARED_RUNS"
logger = logging.getLogger(__name__)


def sources_hash(root: Path) -> str:
    """A hash of the names and bytes of every file the notebooks' results depend on."""
    return files_digest(root, SOURCES)


def _cache_per_sources(app, config):
    """config-inited: point myst-nb's cache at the folder of the current sources, and the
    notebooks' shared runs (emu.run.reuse) at theirs."""
    if config.nb_execution_mode != "cache":
        return
    digest = sources_hash(Path(app.confdir).resolve())
    config.nb_execution_cache_path = str(_current(Path(app.outdir).parent / CACHE_FOLDER,
                                                  digest))
    if SHARED_RUNS_VARIABLE not in os.environ:      # the notebooks' kernels inherit it
        os.environ[SHARED_RUNS_VARIABLE] = str(
            _current(Path(app.outdir).parent / SHARED_RUNS_FOLDER, digest))


def _current(base, digest):
    """``base``/``digest``, the folders of other digests under ``base`` removed."""
    current = base / digest
    if base.is_dir():
        for old in base.iterdir():
            if old.is_dir() and old != current:
                shutil.rmtree(old, ignore_errors=True)
    return current


def _to_execute(app, docnames):
    """The notebooks (.ipynb) among ``docnames`` that myst-nb would execute: not excluded,
    not in the cache. [(path, notebook)]"""
    from jupyter_cache import get_cache

    cache = get_cache(app.config.nb_execution_cache_path)
    out = []
    for docname in docnames:
        path = Path(app.env.doc2path(docname))
        if path.suffix != ".ipynb":
            continue
        if any(PurePosixPath(path.as_posix()).match(pattern)
               for pattern in app.config.nb_execution_excludepatterns):
            continue
        notebook = nbformat.read(path, as_version=4)
        try:
            cache.match_cache_notebook(notebook)
        except KeyError:
            out.append((path, notebook))
    return out


def _execute(path, timeout, allow_errors):
    """In a worker process: the notebook at ``path`` executed in its own folder, as myst-nb
    does it; (the executed notebook as JSON or None, seconds, the error's text or None)."""
    from jupyter_cache.executors.utils import single_nb_execution

    notebook = nbformat.read(path, as_version=4)
    result = single_nb_execution(notebook, cwd=str(Path(path).parent), timeout=timeout,
                                 allow_errors=allow_errors, meta_override=True)
    if result.err is not None:
        return None, result.time, result.exc_string
    return nbformat.writes(result.nb), result.time, None


def _execute_in_parallel(app, env, docnames):
    """env-before-read-docs: run the notebooks myst-nb would execute, several at once, into
    its cache."""
    config = app.config
    workers = config.execution_workers or os.cpu_count() or 1
    if config.nb_execution_mode != "cache" or workers < 2:
        return
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    pending = _to_execute(app, docnames)
    if len(pending) < 2:
        return
    cache = get_cache(config.nb_execution_cache_path)
    logger.info(f"[execution_cache] executing {len(pending)} notebooks, {workers} at once")
    context = multiprocessing.get_context("spawn")      # no fork of Sphinx's process
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(_execute, str(path), config.nb_execution_timeout,
                               config.nb_execution_allow_errors): path
                   for path, _ in pending}
        for future in as_completed(futures):
            path = futures[future]
            executed, seconds, error = future.result()
            if error is not None:
                logger.warning(f"[execution_cache] {path} failed ({seconds:.1f} s); "
                               f"myst-nb runs it again to report the error")
                continue
            cache.cache_notebook_bundle(
                CacheBundleIn(nbformat.reads(executed, as_version=4), str(path),
                              data={"execution_seconds": seconds}),
                check_validity=False, overwrite=True)
            logger.info(f"[execution_cache] {path}: executed in {seconds:.2f} seconds")


def setup(app):
    app.add_config_value("execution_workers", 0, "env")
    app.connect("config-inited", _cache_per_sources, priority=900)
    app.connect("env-before-read-docs", _execute_in_parallel)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
