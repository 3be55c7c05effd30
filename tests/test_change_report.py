"""The change report tells no false changes: it compares what is stored with what is stored.

Every page that draws a figure, re-executed with no input changed, reports "0 with changed
outputs" (its figures' stored bytes did not change: before, the report digested the kernel's
raw SVG, whose element ids the stored notebook renames, and called each figure changed). One
figure's data changed reports exactly that figure, by the digest of the bytes now stored. In a
scratch copy of the repository; the pages are the book's own, found by what their code draws.
"""

from __future__ import annotations

import re

import nbformat
import pytest

from runnable_book.pipeline import book_shape, change_report, execute_pages
from runnable_book.pipeline.pages import code_cells, notebook_pages, read_page
from runnable_book.pipeline.reader_notebook import draws_figures
from runnable_book.repository import ROOT

pytestmark = pytest.mark.long  # (pages executed, twice each)


def report_of(printed: str) -> list[str]:
    assert "Change report:" in printed, printed[-3000:]
    return printed[printed.index("Change report:"):].splitlines()


def test_every_figure_page_run_again_unchanged_reports_no_changed_output(scratch_repository):
    pages = [md for md in notebook_pages() if draws_figures(read_page(md))]
    assert pages, "the book has no page that draws a figure"
    done = scratch_repository.run("-m", "runnable_book.pipeline.execute_pages", "sync",
                                  *(str(md.relative_to(ROOT)) for md in pages), "--force")
    report = report_of(done.stdout)
    assert report[0] == (f"Change report: {len(pages)} of {len(notebook_pages())} pages executed, "
                         "0 with changed outputs"), "\n".join(report)
    assert report[1:] == [f"  {md.stem}: executed because FORCE=1; outputs unchanged" for md in pages], "\n".join(report)


def a_figure_with_one_axes() -> tuple:
    """(page, rank of the cell among its code cells, the cell's source, the axes' name): the
    first captioned figure drawn on one axes (``fig, ax = plt.subplots(...)``)."""
    for md in notebook_pages():
        cells = [c for c in read_page(md).cells if c.cell_type == "code"]
        for cell in book_shape.figure_cells(md):
            axes = re.search(r"^\w+, (\w+) = plt\.subplots\(.*$", cell.source, re.M)
            if axes:
                return md, next(i for i, c in enumerate(cells) if c.source == cell.source), cell.source, axes
    raise AssertionError("no captioned figure is drawn on one axes")


def figure_digest(notebook, rank: int) -> str:
    """The report's line for a stored figure cell (its one figure, by the digest of its stored bytes)."""
    figures = [line for line in change_report.rendered_outputs(execute_pages.page_code(notebook)[rank])
               if line.startswith("[figure")]
    assert len(figures) == 1, figures
    return figures[0]


def test_one_figures_data_changed_reports_that_figure_and_nothing_else(scratch_repository):
    md, rank, source, axes = a_figure_with_one_axes()
    copy_md = scratch_repository.path / md.relative_to(ROOT)
    # One more series of data on the figure's axes, drawn right after they are made.
    added = f"{axes.group(0)}\n{axes.group(1)}.plot([0, 1], [0.5, 0.5], color='black')  # (added by the test)"
    changed = source.replace(axes.group(0), added, 1)
    text = copy_md.read_text()
    assert text.count(source) == 1
    copy_md.write_text(text.replace(source, changed))
    before = figure_digest(nbformat.read(execute_pages.stored_path(md), as_version=4), rank)

    done = scratch_repository.run("-m", "runnable_book.pipeline.execute_pages", "sync", str(md.relative_to(ROOT)))
    report = report_of(done.stdout)
    after = figure_digest(nbformat.read(execute_pages.stored_path(copy_md), as_version=4), rank)
    assert after != before
    assert report == [
        f"Change report: 1 of {len(notebook_pages())} pages executed, 1 with changed outputs",
        f"  {md.stem}: executed because code cell {rank + 1} changed; outputs changed",
        f"      {code_cells(md)[rank].where}:",
        f"        -{before}",
        f"        +{after}",
        f"      (all of it: git diff {md.with_suffix('.ipynb').relative_to(ROOT)})",
    ], "\n".join(report)
