"""The reader's notebook of a page (book/X.ipynb): its cells converted and assembled.

runnable_book/pipeline/myst_to_notebook.py converts each markdown cell from MyST to CommonMark;
this module builds the notebook around them:

==========================================  ==================================================
in book/X.md                                in the reader's notebook
==========================================  ==================================================
(nothing: the page has code)                a first cell of ours (:func:`install_cell`)
a code cell's ``mystnb.figure`` caption     a markdown cell after the code cell: the numbered
                                            caption, and the alt text in a closed ``<details>``
a code cell tagged ``hide-cell``            folded: ``jupyter.source_hidden``/``outputs_hidden``;
                                            a run of them (a worked solution) also goes under
                                            a heading of its own, collapsed
                                            (``jp-MarkdownHeadingCollapsed``): JupyterLab shows
                                            a cell's outputs again when it runs, a collapsed
                                            section keeps them out of sight after Run All
citations anywhere on the page              a References cell at the end (author-date)
==========================================  ==================================================

The install cell installs what the page needs and the kernel lacks (Colab, a bare Jupyter):
this edition's ``chapter_lib`` (never the repository's newest: runnable_book/pipeline/install_cell.py),
matplotlib (the ``figures`` extra) where the page draws a figure, each only when missing;
when that install fails it stops in that cell, saying in one sentence what it could not
install and from where, what pip said (once) and what to do. It exists only in the
notebook: the HTML page is rendered from the .md, which does not need it. `make outputs`
runs it as the kernel's first cell, so the notebook's execution counts start at 1 with it.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path

import nbformat

from runnable_book.pipeline import edition
from runnable_book.pipeline.install_cell import INSTALL_TAG, edition_install_cell
from runnable_book.repository import ROOT, tool_code
from runnable_book.pipeline.parse_cache import kept_parse
from runnable_book.pipeline.myst_to_notebook import (
    BIBFILE, REFERENCES_ANCHOR, Context, bibliography, caption_markdown, cite_names, convert_markdown,
    entry_markdown, figure_numbers, reference_anchor,
)

# Tags of the cells this module adds, so tools can tell them from the .md's cells (and
# INSTALL_TAG, the install cell's: runnable_book/pipeline/install_cell.py).
CAPTION_TAG = "caption"
REFERENCES_TAG = "references"
SECTION_TAG = "folded-section"  # the heading above a worked solution, collapsed
SECTION_HEADING = "###"  # under the page's "## Exercise N": collapses until the next exercise
FOLDED = {  # MyST-NB's tags -> JupyterLab's fold state (the HTML shows a "show" button)
    "hide-cell": {"source_hidden": True, "outputs_hidden": True},
    "hide-input": {"source_hidden": True},
    "hide-output": {"outputs_hidden": True},
}


def draws_figures(nb) -> bool:
    return any("matplotlib" in c.source for c in nb.cells if c.cell_type == "code" and not is_added_cell(c))


def page_install_cell(nb, published: edition.Edition | None = None, wheel_sha256: str | None = None,
                      root: Path = ROOT):
    """The install cell for a page with code (None for a page without): the committed
    notebook's, or with ``published`` the one of the copy the site publishes
    (runnable_book/pipeline/install_cell.py)."""
    if not any(c.cell_type == "code" and not is_added_cell(c) for c in nb.cells):
        return None
    cell = edition_install_cell(draws_figures(nb), published, wheel_sha256, root)
    # `make outputs` runs it first in the kernel that makes the outputs (execute_pages.py):
    # then the page's first code cell was execution 2, and this one execution 1.
    first = next(c for c in nb.cells if c.cell_type == "code" and not is_added_cell(c))
    if first.get("execution_count") == 2:
        cell.execution_count = 1
    return cell


def published_notebook(reader, published: edition.Edition, wheel_sha256: str | None, root: Path = ROOT):
    """The reader's notebook as the site publishes it: its install cell names the edition and
    installs its library from the site's wheel (sha256 checked) or the edition's commit."""
    reader = copy.deepcopy(reader)
    for index, cell in enumerate(reader.cells):
        if INSTALL_TAG in cell.metadata.get("tags", []):
            reader.cells[index].source = page_install_cell(reader, published, wheel_sha256, root).source
    return reader


def is_added_cell(cell) -> bool:
    """A cell this module adds (not one of the .md's cells)."""
    return bool({INSTALL_TAG, CAPTION_TAG, REFERENCES_TAG, SECTION_TAG} & set(cell.metadata.get("tags", [])))


def section_heading(cell, ctx: Context):
    """The collapsed heading that opens a run of hidden cells: "Worked solution 3", taken from
    the first hidden cell's "show" prompt (the words before its colon), else "Hidden cells"."""
    prompt = cell.metadata.get("mystnb", {}).get("code_prompt_show", "")
    title = prompt.split(":", 1)[0].strip() or "Hidden cells"
    cell = markdown_cell(f"{SECTION_HEADING} {title}", [SECTION_TAG])
    cell.metadata["jp-MarkdownHeadingCollapsed"] = True
    return cell


def markdown_cell(source: str, tags: list[str] | None = None, folded: dict | None = None):
    metadata = {}
    if folded:
        metadata["jupyter"] = dict(folded)
    if tags:
        metadata["tags"] = tags
    return nbformat.v4.new_markdown_cell(source, metadata=metadata)


def reader_cells(md: Path, nb) -> list:
    """The cells of the reader's notebook, from the page's notebook (with its outputs)."""
    return [c for c in [page_install_cell(nb)] if c is not None] + kept_converted_cells(md, nb)


def kept_converted_cells(md: Path, nb) -> list:
    """converted_cells, kept by everything they are made from (runnable_book/pipeline/parse_cache.py):
    a change to the library gives every page's notebook a new install cell and converts no
    page's text differently, and converting a page's markdown is most of writing its notebook
    (in a book of 200 pages, seconds on every edit of a saved function)."""
    key = f"{md.resolve()}\0{conversion_inputs()}\0{json.dumps(nb, sort_keys=True)}"
    return kept_parse("reader-cells", key, Path(__file__), lambda: converted_cells(md, nb))


@functools.cache
def conversion_inputs() -> str:
    """What converting any page depends on besides the page (read once a process, as the book's
    figure numbers and bibliography are): the tool's code, _config.yml, the .bib file and the
    figures' numbers through the book, the committed diagrams (a drawing turned top to bottom
    is shown so), pybtex's version."""
    from runnable_book.pipeline.draw_diagrams import DIAGRAMS
    from runnable_book.pipeline.synced_pages import digest_of_inputs

    sha = digest_of_inputs(("pybtex",), [ROOT / "_config.yml", *filter(None, [BIBFILE]), *tool_code(),
                                         *sorted(DIAGRAMS.glob("*.svg"))])
    sha.update(json.dumps(figure_numbers(), sort_keys=True).encode())
    return sha.hexdigest()


def converted_cells(md: Path, nb) -> list:
    """The page's cells as the reader's notebook has them, after its install cell: markdown
    converted, figures captioned, worked solutions folded, the References at the end."""
    cells: list = []
    cited: list[str] = []
    in_section = False  # inside a run of hidden cells (and the markdown that closes it)
    for number, cell in enumerate(nb.cells, start=1):
        ctx = Context(md, number, cited)
        hidden = cell.cell_type == "code" and "hide-cell" in cell.metadata.get("tags", [])
        if hidden and not in_section:
            cells.append(section_heading(cell, ctx))
        # A section runs from its first hidden cell to the next heading of the page.
        in_section = (in_section or hidden) and not (cell.cell_type == "markdown" and cell.source.startswith("#"))
        cell = copy.deepcopy(cell)
        if cell.cell_type == "markdown":
            cell.source = convert_markdown(cell.source, ctx).strip("\n")
            cells.append(cell)
            continue
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        mystnb = cell.metadata.pop("mystnb", {})  # Sphinx-only: prompts, figure options
        folded = {}
        for tag in cell.metadata.get("tags", []):
            folded.update(FOLDED.get(tag, {}))
        if folded:
            cell.metadata["jupyter"] = folded
        cells.append(cell)
        figure = mystnb.get("figure")
        if figure is not None:
            label = figure.get("name")
            number = figure_numbers().get(label) if label else None
            if number is None:
                raise ctx.error("a figure needs mystnb.figure.name to be numbered as the HTML numbers it")
            alt = mystnb.get("image", {}).get("alt")
            # Not folded, even under a folded figure: a folded markdown cell shows its raw
            # source on one line, and the caption reads best as rendered text.
            cells.append(markdown_cell(caption_markdown(label, number, figure.get("caption", ""), alt, ctx),
                                       [CAPTION_TAG]))
    if cited:
        entries = "\n".join(f'- <a id="{reference_anchor(key)}"></a>{entry_markdown(key)}'
                            for key in sorted(cited, key=sort_key))
        cells.append(markdown_cell(f'<a id="{REFERENCES_ANCHOR}"></a>\n\n## References\n\n{entries}',
                                   [REFERENCES_TAG]))
    return cells


def sort_key(key: str) -> tuple:
    entry = bibliography()[key]
    return (cite_names(key).lower(), entry.fields.get("year", ""), key)


def reader_notebook(md: Path, nb):
    """The reader's notebook of page md, from its notebook (nb: the .md's cells, executed)."""
    # (its own copy of all but the cells, which reader_cells makes: a copy of the page's cells
    # with their outputs, thrown away at once, was most of this function's time)
    reader = nbformat.from_dict({key: copy.deepcopy(value) for key, value in nb.items() if key != "cells"})
    reader.cells = reader_cells(md, nb)
    return reader
