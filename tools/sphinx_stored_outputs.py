"""Sphinx extension: render each notebook page from its .md, with the outputs stored in
its paired .ipynb, so the book shows exactly what nbval checks and never executes a page.

The page stays the .md (its source link, its ".md" download, its edit link), and the
launch buttons find the executed .ipynb beside it. On ``source-read`` the .md text of a
paired page is swapped for the stored notebook after checking that the two hold the same
cells; a disagreement stops the build naming the page, the cell and the fix
(``make outputs``). MyST-NB then reads every .md through :func:`read_page`.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import nbformat
from sphinx.errors import ExtensionError

from tools.stored_outputs import REGENERATE, pairing_problems, stored_path


def read_page(text: str):
    """MyST-NB reader for .md sources: a stored notebook (JSON) or MyST markdown."""
    if text.lstrip().startswith("{"):
        return nbformat.reads(text, as_version=4)
    return jupytext.reads(text, fmt="md:myst")


def use_stored_outputs(app, docname: str, source: list[str]) -> None:
    md = Path(app.env.doc2path(docname))
    if md.suffix != ".md" or not stored_path(md).exists():
        return
    problems = pairing_problems(md)
    if problems:
        raise ExtensionError("\n".join(problems) + f"\nRun `{REGENERATE}`.")
    # Sphinx re-reads a page when its .md changes; the outputs live in the .ipynb, so
    # a re-executed notebook must make the page outdated too.
    app.env.note_dependency(str(stored_path(md)))
    source[0] = stored_path(md).read_text()


def setup(app):
    app.connect("source-read", use_stored_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
