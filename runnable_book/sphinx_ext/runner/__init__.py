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

Two values are filled into each page's loader at build time: the bytes the click
downloads (summed from the files themselves, so the page announces what `make bench-run`
measures; stamped again into every written page when the build ends, stamp_download_bytes),
and where the page's reader's notebook is served. That notebook
(``book/X.ipynb``: markdown converted for Jupyter, an install cell) replaces myst-nb's copy
of the page at ``_sources/book/X.ipynb`` when the build finishes, so the header's
".ipynb" download is the notebook Binder and Colab open, and "Download as notebook"
(``notebook.mjs``) builds on it.

Pages without code cells (the landing page, references, search) get no loader. Every
page of the HTML book loads ``runner/progress.mjs`` after its first paint: the exercises a
reader has done, on 15.11 and beside its sidebar entry (not part of the click's download); it
and runner.mjs know the exercises from the page's data (runnable_book/sphinx_ext/exercises.py).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError

from runnable_book.common import built_files
from runnable_book.common.files import write_atomically
from runnable_book.sphinx_ext.edition_on_pages import LINKING_BUILDERS
from runnable_book.sphinx_ext.stamped_pages import CLICK_SIZES, pages_to_stamp

HERE = Path(__file__).parent
BUILT_STATIC = built_files.BUILT_STATIC.resolve()
LOADER = HERE / "loader.js"
LOADER_ID = "browser-run-loader"
# What the page loads from _static/runner/ on the click (the rest of the folder is the
# loader, inlined; the editor's bundle entry; this glue and its README).
SERVED = ["boot.mjs", "download_bar.mjs", "runner.mjs", "cells.mjs", "output.mjs", "ansi.mjs", "mime.mjs", "work.mjs",
          "storage.mjs", "notebook.mjs", "keys.mjs", "dom.mjs", "book_exercises.mjs", "figures.mjs", "worker.mjs",
          "downloads.mjs", "page_python.py", "display.py", "runner.css", "input.mjs", "stop_relay.mjs"]
# Fetched by the worker with matplotlib, on a cell's first import of it (not on the click).
ON_FIRST_FIGURE = ["figures.py"]
# Imported by the loader before the click only for a reader whose runtime is cached (Python
# started early); not part of the click's download.
BEFORE_THE_CLICK = ["prestart.mjs"]
# What `make assets` puts under _build/static (html_static_path) and the click fetches: the
# editor bundle, the wheel, Python's memory snapshot (restored in place of a fresh start), and
# the Pyodide files its runtime loads (the Makefile's PYODIDE_FILES), the WebAssembly as the
# gzipped copy the worker inflates (PYODIDE_WASM_GZ: a third of its size, downloads.mjs).
# With SERVED, the download the page announces.
# (Keep in step with PYODIDE_FILES: a file missing here stops the build, naming it.)
SNAPSHOT = built_files.SNAPSHOT
CLICK_ASSETS = ["runner/editor.mjs", built_files.WHEEL, SNAPSHOT, "pyodide/pyodide.mjs", "pyodide/pyodide.asm.js",
                "pyodide/pyodide.asm.wasm.gz", "pyodide/python_stdlib.zip", "pyodide/pyodide-lock.json"]
# What a page's first figure fetches once Python is up (worker.mjs): Pyodide's matplotlib and
# every wheel it needs (the manifest beside them lists each), and the first figure's compiled
# imports with matplotlib's font cache; with ON_FIRST_FIGURE, the figures' part of a click on
# a page that draws (its loader preloads them), announced with the rest.
PACKAGES_MANIFEST = "pyodide/served-packages.json"
FIRST_FIGURE = built_files.FIRST_FIGURE
# Loaded on every page of the HTML book after its first paint (not on the printed page):
# the exercise page's progress, and its count beside that page in the sidebar.
PROGRESS = "progress.mjs"
BYTES_TOKEN = "__BROWSER_RUN_BYTES__"
SNAPSHOT_BYTES_TOKEN = "__BROWSER_RUN_SNAPSHOT_BYTES__"
NOTEBOOK_TOKEN = "__BROWSER_RUN_NOTEBOOK__"
PRELOAD_TOKEN = "__BROWSER_RUN_PRELOAD__"
FIGURE_BYTES_TOKEN = "__BROWSER_RUN_FIGURE_BYTES__"
FIGURES_TOKEN = "__BROWSER_RUN_FIGURES__"
# Top-level imports that mean a page draws figures: its loader has matplotlib loaded from the
# click on (worker.mjs loads it on a cell's first import of these names anyway).
FIGURE_IMPORTS = {"matplotlib", "pylab", "mpl_toolkits"}


def is_code_cell(node) -> bool:
    # myst-nb marks each code cell's container so (myst_nb/core/render.py).
    return isinstance(node, nodes.container) and node.get("nb_element") == "cell_code"


def has_code_cells(doctree) -> bool:
    return doctree is not None and next(doctree.findall(is_code_cell), None) is not None


def imported_names(source: str) -> set[str]:
    """The top-level names a code cell imports (none if it does not parse as Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def is_folded(cell) -> bool:
    # A worked solution: the whole cell folded (myst-nb's hide-cell tag, its container's class).
    return "tag_hide-cell" in cell.get("classes", [])


def packages_to_preload(doctree) -> list[str]:
    """["matplotlib"] when one of the page's code cells a reader sees imports it, else []. Not
    for folded cells (worked solutions: on 15.11 the only figures): a reader working the
    exercises would download its 13 MB and wait behind its load for figures they may never
    draw; a folded cell run loads it then, as any cell's import does (worker.mjs)."""
    for cell in doctree.findall(is_code_cell):
        if is_folded(cell):
            continue
        for block in cell.findall(nodes.literal_block):
            if imported_names(block.astext()) & FIGURE_IMPORTS:
                return ["matplotlib"]
    return []


def figures_of(doctree) -> str:
    """How the page's figures are fetched: "click" when the loader preloads them (a cell a
    reader sees draws), "solutions" when only folded worked solutions import matplotlib (on
    running one), "" when no cell does."""
    if packages_to_preload(doctree):
        return "click"
    for block in (b for cell in doctree.findall(is_code_cell) for b in cell.findall(nodes.literal_block)):
        if imported_names(block.astext()) & FIGURE_IMPORTS:
            return "solutions"
    return ""


def click_asset(app, name: str) -> Path:
    """Where the build serves a file of CLICK_ASSETS from (html_static_path)."""
    folders = [Path(app.confdir, folder) for folder in app.config.html_static_path]
    found = next((folder / name for folder in folders if (folder / name).is_file()), None)
    if found is None:
        raise ExtensionError(f"Run in your browser: {name} is not in html_static_path ({', '.join(map(str, folders))}); "
                             "run `make assets`")
    return found


def download_bytes(app) -> int:
    """Bytes of every file the click fetches, found where the build serves them from."""
    total = sum((HERE / name).stat().st_size for name in SERVED)
    return total + sum(click_asset(app, name).stat().st_size for name in CLICK_ASSETS)


def figure_bytes(app) -> int:
    """Bytes of every file a page's first figure fetches, as the build wrote them (0: a book
    that serves no figure packages)."""
    try:
        manifest = click_asset(app, PACKAGES_MANIFEST)
    except ExtensionError:
        return 0
    wheels = sum((manifest.parent / wheel["file"]).stat().st_size for wheel in json.loads(manifest.read_text())["packages"])
    return (wheels + manifest.stat().st_size + click_asset(app, FIRST_FIGURE).stat().st_size
            + sum((HERE / name).stat().st_size for name in ON_FIRST_FIGURE))


def reader_notebook(app, docname: str) -> Path:
    return Path(app.srcdir, docname + ".ipynb")


def add_loader(app, pagename, templatename, context, doctree):
    if app.builder.name == "html" and doctree is not None:
        app.add_js_file(f"runner/{PROGRESS}", type="module")
    if not has_code_cells(doctree):
        return
    announced = app.config.browser_run_bytes or download_bytes(app)  # (0: not found at start; says what is missing)
    loader = (LOADER.read_text(encoding="utf-8")
              .replace(BYTES_TOKEN, str(announced))
              .replace(SNAPSHOT_BYTES_TOKEN, str(click_asset(app, SNAPSHOT).stat().st_size if announced else 0))
              .replace(NOTEBOOK_TOKEN, f"_sources/{pagename}.ipynb")
              .replace(PRELOAD_TOKEN, json.dumps(packages_to_preload(doctree)))
              .replace(FIGURE_BYTES_TOKEN, str(app.config.browser_run_figure_bytes or figure_bytes(app)))
              .replace(FIGURES_TOKEN, figures_of(doctree)))
    app.add_js_file(None, body=loader, id=LOADER_ID)


def copy_runner(app, exception):
    if exception is None and app.builder.format == "html":
        target = Path(app.outdir, "_static", "runner")
        target.mkdir(parents=True, exist_ok=True)
        for name in [*SERVED, *ON_FIRST_FIGURE, *BEFORE_THE_CLICK, PROGRESS]:  # (copy_asset_file would warn when a file changed)
            shutil.copyfile(HERE / name, target / name)
        # The reader's notebook of each page, where the header's .ipynb download points (a
        # linking build's are published there: edition_on_pages.py, publish_each_notebook).
        if app.builder.name in LINKING_BUILDERS:
            return
        for docname in app.env.found_docs:
            notebook = reader_notebook(app, docname)
            served = Path(app.outdir, "_sources", docname + ".ipynb")
            if notebook.is_file() and served.parent.is_dir():
                shutil.copyfile(notebook, served)


def note_download_bytes(app, config) -> None:
    """The click's bytes, summed once as the build starts (each page's loader says them)."""
    try:
        config.browser_run_bytes = download_bytes(app)
    except ExtensionError:  # a book without the runner's assets: said when a page with code needs them
        config.browser_run_bytes = 0
    config.browser_run_figure_bytes = figure_bytes(app)




def stamp_download_bytes(app, exception) -> None:
    """Every written page's loader says this build's sizes, the pages Sphinx did not write again
    included: so an incremental build announces what a clean one would. Why not a config value
    that makes Sphinx write every page again, as it was: an edit of one saved function changes
    the wheel's size by a few bytes, and every page of the book was rendered again for it (in a
    book of 200 pages, most of that edit's build: `make bench-chapters`). Here a page is read
    and, only if a size differs, written; and only the pages Sphinx wrote are read when the
    sizes are the last build's (stamped_pages.py)."""
    if exception is not None or app.builder.format != "html" or not app.config.browser_run_bytes:
        return
    sizes = {"DOWNLOAD_BYTES": app.config.browser_run_bytes, "FIGURE_BYTES": app.config.browser_run_figure_bytes,
             "SNAPSHOT_BYTES": click_asset(app, SNAPSHOT).stat().st_size}
    for page in pages_to_stamp(app, "the click's bytes", sizes, lambda: Path(app.outdir).rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        if LOADER_ID not in text:
            continue
        stamped = CLICK_SIZES.sub(lambda found: f"{found[1]}{sizes[found[2]]}{found[4]}", text)
        if stamped != text:
            write_atomically(page, stamped.encode("utf-8"))


def serve_progress_early(app) -> None:
    """progress.mjs in the site before any page is written: Sphinx versions a script's URL
    (``?v=``) by the file it finds there, so a clean build links what an incremental one does."""
    if app.builder.format == "html":
        target = Path(app.outdir, "_static", "runner")
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(HERE / PROGRESS, target / PROGRESS)


def serve_built_assets(app, config) -> None:
    """What the build makes for the page's Python (_build/static: Pyodide, the bundles, the
    wheel, the snapshot) is served from the site's _static/, whether or not the book's
    html_static_path names it (this book's does, after its own book/_static)."""
    if not any(Path(app.confdir, folder).resolve() == BUILT_STATIC for folder in config.html_static_path):
        # (relative to the book's folder, as look.py says why)
        config.html_static_path = [*config.html_static_path, os.path.relpath(BUILT_STATIC, app.confdir)]


def setup(app):
    app.connect("config-inited", serve_built_assets, priority=400)  # (before note_download_bytes reads it)
    app.connect("builder-inited", serve_progress_early)
    # (not "html": a change of size is stamped into the written pages, stamp_download_bytes)
    app.add_config_value("browser_run_bytes", 0, "", types=[int])
    app.add_config_value("browser_run_figure_bytes", 0, "", types=[int])
    app.connect("config-inited", note_download_bytes)
    app.connect("html-page-context", add_loader)
    app.connect("build-finished", copy_runner)
    app.connect("build-finished", stamp_download_bytes)  # (before offline.py lists the site's files, at 999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
