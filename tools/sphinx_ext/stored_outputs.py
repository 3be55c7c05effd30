"""Sphinx extension: render each notebook page from its .md, with the outputs stored in
its .ipynb, so the book shows exactly what nbval checks and never executes a page.

The page stays the .md (its source link, its ".md" download, its edit link), and the
launch buttons find the executed .ipynb beside it. That .ipynb is the reader's notebook
(markdown converted for Jupyter, an install cell of ours), so the page's markdown comes
from the .md, and only the outputs from the .ipynb: on ``source-read`` the .md is read
by jupytext and each code cell gets the outputs of its stored counterpart, matched one to
one (tools/pipeline/stored_outputs.py, :func:`page_with_stored_outputs`); code that disagrees stops
the build naming the page, the cell and the fix (``make outputs``). MyST-NB then reads
the resulting notebook through :func:`read_page`.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
from sphinx.errors import ExtensionError

from tools.pipeline.stored_outputs import REGENERATE, page_with_stored_outputs, stored_path


def read_page(text: str):
    """MyST-NB reader for .md sources: a notebook (JSON) or MyST markdown."""
    if text.lstrip().startswith("{"):
        return nbformat.reads(text, as_version=4)
    return jupytext.reads(text, fmt="md:myst")


def use_stored_outputs(app, docname: str, source: list[str]) -> None:
    md = Path(app.env.doc2path(docname))
    if md.suffix != ".md" or not stored_path(md).exists():
        return
    nb, problems = page_with_stored_outputs(md)
    if problems:
        raise ExtensionError("\n".join(problems) + f"\nRun `{REGENERATE}`.")
    # Sphinx re-reads a page when its .md changes; the outputs live in the .ipynb, so
    # a re-executed notebook must make the page outdated too.
    app.env.note_dependency(str(stored_path(md)))
    source[0] = nbformat.writes(nb) + "\n"


def setup(app):
    app.connect("source-read", use_stored_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
