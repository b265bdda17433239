"""Sphinx extension: plotly figures that draw with no network, and two page fixes.

What it does, at build time:

* Copies ``plotly.min.js`` from the installed ``plotly`` Python package into the
  HTML output's ``_static/`` folder (so the JavaScript always matches the Python
  package that produced the figures) and adds a ``<script>`` tag for it to every
  page that contains a plotly figure. No CDN, no require.js.
* Sets the environment variable ``EMU_BOOK_BUILD=1`` in the build process, so the
  notebook kernels that myst-nb starts inherit it. ``emu.present.plot.setup()`` reads it
  to choose the renderer that emits HTML without an embedded copy of plotly.js.
  It also puts the repository root first on ``PYTHONPATH`` for those kernels, so
  notebooks import the checked-out ``emu`` package.
* Removes duplicate ``<script>`` entries from each page (sphinx-thebe adds its
  inline configuration script twice, which raises "Identifier 'THEBE_JS_URL' has
  already been declared" in the browser).

Registered in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PLOTLY_JS = "plotly.min.js"
BUILD_ENV_VAR = "EMU_BOOK_BUILD"
# Marker that plotly.io.to_html puts on every figure <div>.
_FIGURE_MARKER = 'class="plotly-graph-div"'


def _plotly_js_source() -> Path:
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: is the plotly package complete?")
    return path


def _copy_plotly_js(app):
    """builder-inited: put plotly.min.js into <outdir>/_static/.

    Copied before the pages are written, so that Sphinx finds the file and adds
    its checksum to the URL (``plotly.min.js?v=...``): a browser then fetches it
    again when the plotly package is upgraded.
    """
    if app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_plotly_js_source(), static / PLOTLY_JS)


def _page_context(app, pagename, templatename, context, doctree):
    """html-page-context: load plotly.js where needed, drop duplicate scripts."""
    if _FIGURE_MARKER in context.get("body", ""):
        # Called from this event, add_js_file affects this page only. The tag is a
        # plain blocking <script> in <head>: the figures' inline scripts in the
        # body run after it has loaded.
        app.add_js_file(PLOTLY_JS, priority=400)
    scripts = context.get("script_files")
    if scripts:
        seen, unique = set(), []
        for script in scripts:
            key = _script_key(script)
            if key not in seen:
                seen.add(key)
                unique.append(script)
        scripts[:] = unique


def _script_key(script):
    if isinstance(script, str):
        return script
    # Sphinx stores an inline script's filename as None or as "" depending on when
    # it was added; both mean "no src", so they must compare equal here.
    filename = os.fspath(getattr(script, "filename", None) or "")
    attrs = getattr(script, "attributes", {}) or {}
    return (filename, tuple(sorted((k, str(v)) for k, v in attrs.items())))


def setup(app):
    os.environ[BUILD_ENV_VAR] = "1"
    root = str(Path(app.confdir).resolve())
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])

    _plotly_js_source()  # fail early, with a clear message, if plotly.js is missing
    app.connect("html-page-context", _page_context)
    app.connect("builder-inited", _copy_plotly_js)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
