"""Sphinx extension: "Run in your browser" on every page with code cells (ours).

Each such page gets one small inline script (``sphinx_browser_run_loader.js``, a few KB,
no extra request) that draws the "Run in your browser" controls beside the launch
buttons and above the first code cell. Everything heavy loads only on the click, from
the book's own ``_static``: ``runner/runner.mjs`` (ours, from ``book/_static/runner``),
the CodeMirror bundle ``runner/editor.mjs``, Pyodide (``pyodide/``) and the
``chapter_lib`` wheel (``runner/chapter_lib.whl``); ``make assets`` builds the last three
into ``_build/static`` from npm and from this repository.

Pages without code cells (the landing page, references, search) get nothing.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes

LOADER = Path(__file__).with_name("sphinx_browser_run_loader.js")
LOADER_ID = "browser-run-loader"


def is_code_cell(node) -> bool:
    # myst-nb marks each code cell's container so (myst_nb/core/render.py).
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def has_code_cells(doctree) -> bool:
    return doctree is not None and next(doctree.findall(is_code_cell), None) is not None


def add_loader(app, pagename, templatename, context, doctree):
    if has_code_cells(doctree):
        app.add_js_file(None, body=LOADER.read_text(encoding="utf-8"), id=LOADER_ID)


def setup(app):
    app.connect("html-page-context", add_loader)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
