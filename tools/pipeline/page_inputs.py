"""What a page's stored outputs depend on: its inputs, itemized, and one digest of them.

tools/pipeline/execute_pages.py re-executes a page when the digest differs from the one
stored in its notebook, and stores the itemized inputs beside it, so that the next run's
change report (tools/pipeline/change_report.py) can say which cell or library definition
changed. docs/maintaining.md ("What re-executes a page") says the rule in words.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tools.pipeline.library_uses import Library, uses
from tools.repository import ROOT

LIBRARY = ROOT / "chapter_lib"

_LIBRARIES: dict[tuple, Library] = {}


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
    """What a page's outputs depend on, itemized: its kernel, each of its code cells, and
    each chapter_lib definition its code reaches (tools/pipeline/library_uses.py). Stored
    in the notebook, so the next run can say which of them changed."""
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    return {"kernel": nb.metadata.get("kernelspec", {}).get("name", ""),
            "cells": [_digest(source) for source in code],
            "library": uses(code, library())}


def inputs_digest(nb, itemized: dict | None = None) -> str:
    """One digest of :func:`inputs`: a page is re-executed when it differs."""
    itemized = itemized or inputs(nb)
    return hashlib.sha256(json.dumps(itemized, sort_keys=True).encode()).hexdigest()
