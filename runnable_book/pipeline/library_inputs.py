"""What chapter_lib is made of: a digest that a prose edit leaves as it is.

The build's ``lib`` step runs whenever a page changes (doit goes by files), and generating the
library reads every page's marked cells, checks every import of it and runs pyflakes on each
module: on a book of 200 pages, a prose edit's library step was most of what the tool added to
Jupyter Book's own work (`make bench-chapters`, profiled). The step is left out when this
digest is the one recorded after the library was last generated without an error.

What the library is made of, conservatively (anything here changed: generate again):

* the book: _toc.yml, _config.yml, pyproject.toml, every file of chapter_lib/ as it is now
  (generated or hand-written: a hand edit is a change), and every tool's code (runnable_book/);
* each page in the book's order: its front matter, title, and each code cell's source and
  metadata (its ``# @save`` and ``# @solution`` cells, its imports of the library), and the
  whole page where it may have exercises (the words ``Exercise ``: the points, hints and the packages
  the exercises' modules are made from);
* Python's version and those of the packages that read pages and check modules.

A page that does not read gives no digest (None): the step runs and names the problem.
"""

from __future__ import annotations

import json

from runnable_book.pipeline.pages import BookError, _parsed_page, page_title, pages_in_toc_order
from runnable_book.pipeline.synced_pages import digest_of_inputs
from runnable_book.repository import ROOT, named, tool_code

RECORD = ROOT / "_build" / "digests" / "library-inputs.sha256"
PACKAGES = ("jupytext", "markdown-it-py", "mdit-py-plugins", "myst-parser", "pyflakes", "PyYAML")
EXERCISES = "Exercise "  # (book_shape.read_exercises': a page without these words has no exercises)


def library_inputs() -> str | None:
    """The digest of everything the library is generated from (this module's list)."""
    sha = digest_of_inputs(PACKAGES, [
        ROOT / "_toc.yml", ROOT / "_config.yml", ROOT / "pyproject.toml",
        *sorted(p for p in (ROOT / "chapter_lib").rglob("*") if p.is_file() and "__pycache__" not in p.parts),
        *tool_code()])
    try:
        for md in pages_in_toc_order():
            text = md.read_text()
            sha.update(named(md).encode() + b"\0")
            if EXERCISES in text:
                sha.update(text.encode() + b"\0")
                continue
            nb = _parsed_page(md, text)  # (read, not changed: no copy)
            code = [[cell.source, cell.metadata] for cell in nb.cells if cell.cell_type == "code"]
            sha.update(json.dumps([nb.metadata, page_title(nb), code], sort_keys=True).encode() + b"\0")
    except BookError:
        return None
    return sha.hexdigest()


def unchanged() -> bool:
    """Whether the library was last generated, without an error, from what it is made of now."""
    recorded = RECORD.read_text() if RECORD.is_file() else None
    return recorded is not None and recorded == library_inputs()


def record() -> None:
    """After the library was generated without an error (and written): what it was made from."""
    digest = library_inputs()
    if digest is not None:
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(digest)
