"""Sphinx glue of "Run in your browser" (ours): the inline loader, and the runner's files.

Each page with code cells gets one small inline script (``loader.js``, a few KB, no extra
request) that draws the "Run in your browser" controls beside the launch buttons and
above the first code cell. Everything heavy loads only on the click, from the book's own
``_static``: ``runner/runner.mjs`` and ``runner/worker.mjs`` (ours, this folder, copied
when the build finishes), the CodeMirror bundle ``runner/editor.mjs``, Pyodide
(``pyodide/``) and the ``chapter_lib`` wheel (``runner/chapter_lib.whl``); ``make assets``
builds the last three into ``_build/static`` (served through ``html_static_path``) from
npm (``editor.mjs`` here is the bundle's entry point) and from this repository.
README.md in this folder says how the pieces talk.

Pages without code cells (the landing page, references, search) get no loader. Every
page of the HTML book loads ``runner/progress.mjs`` after its first paint: the exercises a
reader has done, on 15.11 and beside its sidebar entry.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.util.fileutil import copy_asset_file

HERE = Path(__file__).parent
LOADER = HERE / "loader.js"
LOADER_ID = "browser-run-loader"
# What the page loads from _static/runner/ on the click (the rest of the folder is the
# loader, inlined; the editor's bundle entry; this glue and its README).
SERVED = ["runner.mjs", "figures.mjs", "worker.mjs", "figures.py", "runner.css", "progress.mjs"]
# Loaded on every page of the HTML book after its first paint (not on the printed page):
# the exercise page's progress, and its count beside that page in the sidebar.
PROGRESS = "runner/progress.mjs"


def is_code_cell(node) -> bool:
    # myst-nb marks each code cell's container so (myst_nb/core/render.py).
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def has_code_cells(doctree) -> bool:
    return doctree is not None and next(doctree.findall(is_code_cell), None) is not None


def add_loader(app, pagename, templatename, context, doctree):
    if has_code_cells(doctree):
        app.add_js_file(None, body=LOADER.read_text(encoding="utf-8"), id=LOADER_ID)
    if app.builder.name == "html" and doctree is not None:
        app.add_js_file(PROGRESS, type="module")


def copy_runner(app, exception):
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir, "_static", "runner")
        target.mkdir(parents=True, exist_ok=True)
        for name in SERVED:
            copy_asset_file(str(HERE / name), str(target / name))


def setup(app):
    app.connect("html-page-context", add_loader)
    app.connect("build-finished", copy_runner)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
