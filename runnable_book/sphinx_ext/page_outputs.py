"""Sphinx extension: render each notebook page from its .md, with the outputs stored in
its .ipynb, so the book shows exactly what nbval checks and never executes a page.

The page stays the .md (its source link, its ".md" download, its edit link), and the
launch buttons find the executed .ipynb beside it. That .ipynb is the reader's notebook
(markdown converted for Jupyter, an install cell of ours), so the page's markdown comes
from the .md, and only the outputs from the .ipynb: on ``source-read`` the .md is read
by jupytext and each code cell gets the outputs of its stored counterpart, matched one to
one (runnable_book/pipeline/execute_pages.py, :func:`page_with_stored_outputs`); code that disagrees stops
the build naming the page, the cell and the fix (``make outputs``). MyST-NB then reads
the resulting notebook through :func:`read_page`.

A notebook has no line numbers, so MyST-NB numbers a cell's lines from ``10000 × (its index
+ 1)`` (a duplicate label was reported at "line 30005"), unless the notebook carries a
``source_map``: where each cell starts in its text file, which MyST-NB's own reader of MyST
notebooks records. We record it the same way (:func:`cell_lines`), so every warning names
the .md's line: a markdown cell's own line, a code cell's opening fence.

A page is read again when what it shows of its stored notebook changes, not whenever the
stored notebook does: every stored notebook's install cell names its edition's library by
content, so a change to one saved function rewrites every stored notebook, and Sphinx, which
goes by a dependency's time, read and wrote every page again (a book of 200 pages: minutes).
The dependency noted is ``_build/shown-outputs/<page>.sha256``, the digest of the stored
notebook less that cell's source (which no page shows) and the digest of the cells' sources
(which names it), rewritten at each build's start only when it changes
(:func:`record_shown_outputs`; a notebook whose file is unchanged since is not read again).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jupytext
import nbformat
from myst_nb.core.read import read_myst_markdown_notebook
from sphinx.errors import ExtensionError

from runnable_book.common.files import file_identity, write_atomically
from runnable_book.pipeline.execute_pages import DIGEST_KEY, FAILED_RUNS, REGENERATE, page_with_stored_outputs, stored_path
from runnable_book.pipeline.install_cell import INSTALL_TAG
from runnable_book.repository import ROOT

SHOWN = ROOT / "_build" / "shown-outputs"


def read_page(text: str):
    """MyST-NB reader for .md sources: a notebook (JSON) or MyST markdown."""
    if text.lstrip().startswith("{"):
        return nbformat.reads(text, as_version=4)
    nb = jupytext.reads(text, fmt="md:myst")  # a page with no stored notebook yet
    nb.metadata["source_map"] = cell_lines(text, nb)
    return nb


def use_stored_outputs(app, docname: str, source: list[str]) -> None:
    md = Path(app.env.doc2path(docname))
    if md.suffix != ".md" or not stored_path(md).exists():
        return
    nb, problems = page_with_stored_outputs(md)
    if problems:
        raise ExtensionError("\n".join(problems) + f"\nRun `{REGENERATE}`.")
    # Sphinx re-reads a page when its .md changes; the outputs live in the .ipynb, so
    # a re-executed notebook must make the page outdated too (through what the page shows of it).
    app.env.note_dependency(str(shown_record(md)))
    failed_run = FAILED_RUNS / stored_path(md).name  # a failed run, shown until the page runs again
    if failed_run.is_file():
        app.env.note_dependency(str(failed_run))
    nb.metadata["source_map"] = cell_lines(md.read_text(encoding="utf-8"), nb, md)
    source[0] = nbformat.writes(nb) + "\n"


def shown_record(md: Path) -> Path:
    """_build/shown-outputs/book/x.sha256 for book/x.md (by its path in the book: two pages of one
    name in two folders have two records)."""
    page = md.resolve()
    where = page.relative_to(ROOT) if page.is_relative_to(ROOT) else Path(page.name)
    return SHOWN / where.with_suffix(".sha256")


def shown_digest(stored: bytes) -> str:
    """The digest of a stored notebook less what no page shows: the install cell's source,
    and the digest of every cell's source (metadata.runnable_book.sources_sha256)."""
    notebook = json.loads(stored)
    for cell in notebook.get("cells", []):
        if INSTALL_TAG in cell.get("metadata", {}).get("tags", []):
            cell["source"] = ""
    notebook.get("metadata", {}).get(DIGEST_KEY, {}).pop("sources_sha256", None)
    return hashlib.sha256(json.dumps(notebook, sort_keys=True).encode()).hexdigest() + "\n"


def record_shown_outputs(app) -> None:
    """Before Sphinx looks for outdated pages: each stored notebook's shown_digest, in its
    record, rewritten only when it changed; computed again only for a notebook whose file is
    not the one last seen (its size, times and inode, kept in _build/shown-outputs/files.json)."""
    from runnable_book.pipeline.pages import notebook_pages

    seen_file = SHOWN / "files.json"
    try:
        seen = json.loads(seen_file.read_text())
    except (OSError, ValueError):
        seen = {}
    now = {}
    for md in notebook_pages():
        stored, record = stored_path(md), shown_record(md)
        if not stored.is_file():
            continue
        identity = file_identity(stored)
        now[str(stored)] = identity
        if seen.get(str(stored)) == identity and record.is_file():
            continue
        digest = shown_digest(stored.read_bytes())
        if not record.is_file() or record.read_text() != digest:
            write_atomically(record, digest)
    SHOWN.mkdir(parents=True, exist_ok=True)
    write_atomically(seen_file, json.dumps(now))


def cell_lines(text: str, nb, md: Path | None = None) -> list[int]:
    """MyST-NB's ``source_map`` for nb, read from its page's text: where each cell starts.

    MyST-NB reports line ``start + 2 + (the line within the cell, from 0)``; we choose
    each start so that this is the .md's line. (Its reader's starts are one line off
    for a markdown cell after two blank lines, and name a code cell's second line.)
    """
    by_myst_nb = read_myst_markdown_notebook(text, add_source_map=True)
    if [cell.source for cell in by_myst_nb.cells] != [cell.source for cell in nb.cells]:
        raise ExtensionError(f"{md or 'a page'}: MyST-NB and jupytext split it into different cells, "
                             "so its warnings could not name the page's lines")
    lines = text.splitlines()
    starts = []
    for cell, start in zip(by_myst_nb.cells, by_myst_nb.metadata["source_map"]):
        if cell.cell_type == "code":
            fence = start - 1
            starts.append(fence - 1)
        else:  # the cell's first line of text, at or after where MyST-NB starts it
            first = cell.source.splitlines()[0] if cell.source else None
            starts.append(lines.index(first, start) - 1 if first in lines[start:] else start)
    return starts


def setup(app):
    app.connect("builder-inited", record_shown_outputs)
    app.connect("source-read", use_stored_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
