"""What a page's stored outputs depend on: its inputs, itemized, and one digest of them.

runnable_book/pipeline/execute_pages.py re-executes a page when the digest differs from the one
stored in its notebook, and stores the itemized inputs beside it, so that the next run's
change report (runnable_book/pipeline/change_report.py) can say which cell or library definition
changed. docs/maintaining.md ("What re-executes a page") says the rule in words.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from runnable_book.pipeline.library_uses import Library, uses
from runnable_book.repository import ROOT

LIBRARY = ROOT / "chapter_lib"

_LIBRARIES: dict[tuple, Library] = {}

# How make outputs (and nbval, to compare) starts the kernel that executes a page: an input
# of every page, so that a change here re-executes the book as a clean build would.
# Every figure is stored twice, made by the same run of the page's code: as PNG (what the
# HTML shows) and as SVG, vectors that the PDF prints (myst-nb picks by builder:
# nb_mime_priority_overrides in _config.yml). Our kernel setup, not the chapter's code: the
# cells are unchanged. The SVG's element ids (svg.hashsalt, named for the tool) and date
# (SOURCE_DATE_EPOCH) are fixed, so a re-executed page stores the same bytes.
KERNEL_SETUP = {
    "arguments": ["--InlineBackend.figure_formats=png", "--InlineBackend.figure_formats=svg",
                  "--InlineBackend.rc=svg.hashsalt=runnable-book",
                  "--IPKernelApp.log_level=ERROR"],  # not its warning that it listens on TCP, once per page
    "environment": {"SOURCE_DATE_EPOCH": "0"},
}


def library(root: Path | None = None) -> Library:
    """chapter_lib parsed once per process while its files are unchanged."""
    root = root or LIBRARY
    files = sorted(root.rglob("*.py"))
    key = (root, *((f, f.stat().st_mtime_ns, f.stat().st_size) for f in files))
    if key not in _LIBRARIES:
        _LIBRARIES.clear()
        _LIBRARIES[key] = Library(root)
    return _LIBRARIES[key]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def inputs(nb) -> dict:
    """What a page's outputs depend on, itemized: its kernel and how it is started, each of
    its code cells, and each chapter_lib definition its code reaches
    (runnable_book/pipeline/library_uses.py). Stored in the notebook, so the next run can say which
    of them changed."""
    code = tuple(c.source for c in nb.cells if c.cell_type == "code")
    setup = _digest(json.dumps(KERNEL_SETUP, sort_keys=True))
    return json.loads(_inputs(nb.metadata.get("kernelspec", {}).get("name", ""), setup, code, library()))


@functools.lru_cache(maxsize=8)
def _inputs(kernel: str, kernel_setup: str, code: tuple[str, ...], parsed: Library) -> str:
    """inputs(), as JSON (each caller gets its own copy), by all they are made from: a page's
    notebook is asked for them twice as it is written (is it stale? its record), and the
    library's reach is the cost."""
    return json.dumps({"kernel": kernel,
                       "kernel_setup": kernel_setup,
                       "cells": [_digest(source) for source in code],
                       "library": uses(list(code), parsed)})


def inputs_digest(nb, itemized: dict | None = None) -> str:
    """One digest of :func:`inputs`: a page is re-executed when it differs."""
    itemized = itemized or inputs(nb)
    return hashlib.sha256(json.dumps(itemized, sort_keys=True).encode()).hexdigest()
