"""Where the build's own files for the page's Python stand: one spelling for the step that
writes them (pipeline/artefact_steps.py), the extension that announces them to the reader
(sphinx_ext/runner), the grader that runs the snapshot (grade/sandbox.py) and the browser
tools that fetch them (browser/page_runner.py). (worker.mjs, in the page, spells the
snapshot's path once more: JavaScript cannot import this.)

A name here is relative to the static folder: ``_build/static`` as `make assets` writes it
(BUILT_STATIC, Sphinx's html_static_path), ``_static/`` in the site (SITE_STATIC)."""

from __future__ import annotations

from runnable_book.repository import ROOT

BUILT_STATIC = ROOT / "_build" / "static"
SITE_STATIC = "_static"

# Python's memory once started with the library imported (pipeline/python_snapshot.mjs),
# restored in place of a fresh start.
SNAPSHOT = "runner/python-snapshot.bin.gz"
# The library, as the wheel the page's Python installs.
WHEEL = "runner/chapter_lib.whl"
# A page's first figure's compiled imports and matplotlib's font cache.
FIRST_FIGURE = "runner/first-figure.zip"
