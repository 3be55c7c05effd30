"""`make book`'s messages name the cause: the page and line of a duplicate label, the keys an
unknown citation key may have meant; its normal output is its steps, not configuration dumps.
And the mistakes an author makes in the book's own files get one line each, no traceback: a
`_toc.yml` entry for a missing page, a broken `.bib`, a `{numref}` or `{cite}` to nothing.

The build is runnable_book/pipeline/site_build.py's (quiet_html_build), on a scratch book
(tests/scratch_book.py) with the parts of our extension these messages come from:
execute_pages (the pages MyST-NB reads, with their line map) and citations.
"""

import re

import nbformat
import pytest

from scratch_book import NOTEBOOK_PAGE, scratch_book
from runnable_book.pipeline.site_build import quiet_html_build
from runnable_book.pipeline.pages import code_cells, notebook_pages, read_page
from runnable_book.pipeline.execute_pages import stored_path
from runnable_book.sphinx_ext.citations import closest_keys
from runnable_book.sphinx_ext.page_outputs import cell_lines

BIB = """@misc{asai2024selfrag, title = {Self-RAG}, author = {Asai, Akari}, year = {2024}}
@misc{yan2024crag, title = {Corrective RAG}, author = {Yan, Shi-Qi}, year = {2024}}
"""
FIGURE = "```{figure} figure.svg\n:name: fig-twice\n\nA caption.\n```\n"
# A page with the mistakes, each in a markdown cell after a code cell (where MyST-NB's
# numbering used to be 10000 x the cell's rank), the second label after two blank lines.
MISTAKES = (NOTEBOOK_PAGE.format(title="Mistakes")
            + "\n(label-twice)=\nA labelled paragraph.\n\n```{code-cell} ipython3\n1 + 1\n```\n"
            + "\n\n(label-twice)=\nThe same label again.\n\n" + FIGURE + "\n" + FIGURE
            + "\nAs shown before {cite:p}`asai2025`.\n")
CONFIGURATION_DUMPS = ["MdParserConfig", "NbParserConfig", "jupyter-cache", "Source Folder", "reading sources"]


def line_of(text: str, line: str, occurrence: int) -> int:
    """The 1-based number of the `occurrence`-th line equal to `line`."""
    return [number for number, each in enumerate(text.splitlines(), start=1) if each == line][occurrence - 1]


@pytest.mark.sphinx
def test_each_warning_names_the_page_and_its_line_and_the_output_is_quiet(tmp_path, capfd):
    book = tmp_path / "book"
    scratch_book(book, [], ["page_outputs", "citations"],
                 # as in the book's _config.yml: the stored notebooks are not pages
                 {"bibtex_bibfiles": ["references.bib"], "exclude_patterns": ["*.ipynb"]},
                 nb_custom_formats={".md": "runnable_book.sphinx_ext.page_outputs.read_page"})
    (book / "references.bib").write_text(BIB)
    (book / "figure.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>')
    (book / "references.md").write_text("# References\n\n```{bibliography}\n```\n")
    page = book / "mistakes.md"
    page.write_text(MISTAKES)
    nbformat.write(read_page(page), stored_path(page))  # its stored notebook (code never run here)
    (book / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n- file: mistakes\n- file: references\n")

    status = quiet_html_build(book)
    out, err = capfd.readouterr()

    assert status == 1, "warnings are errors"
    second_label = line_of(MISTAKES, "(label-twice)=", 2)
    second_figure = line_of(MISTAKES, "```{figure} figure.svg", 2)
    citation = line_of(MISTAKES, "As shown before {cite:p}`asai2025`.", 1)
    expected = [f'{page}:{second_label}: WARNING: Duplicate explicit target name: "label-twice".',
                f'{page}:{second_figure}: WARNING: Duplicate explicit target name: "fig-twice".',
                f'{page}:{citation}: WARNING: could not find bibtex key "asai2025"; '
                "closest in references.bib: asai2024selfrag"]
    warnings = re.sub(r"\x1b\[[0-9;]*m", "", err)  # (Sphinx colours them on a terminal)
    for message in expected:
        assert message in warnings, f"expected\n  {message}\namong\n{warnings}"
    assert not [dump for dump in CONFIGURATION_DUMPS if dump in out + err], out


def test_a_code_cells_line_is_its_fence_on_every_page():
    """The line map MyST-NB gets names each code cell's opening fence, as our messages do."""
    for md in notebook_pages():
        nb = read_page(md)
        starts = cell_lines(md.read_text(encoding="utf-8"), nb)
        code_starts = [start for start, cell in zip(starts, nb.cells) if cell.cell_type == "code"]
        # MyST-NB reports line `start + 2` for a cell's first line (runnable_book/sphinx_ext/page_outputs.py).
        assert [start + 2 for start in code_starts] == [cell.line for cell in code_cells(md, nb)], md


def test_closest_keys():
    keys = ["asai2024selfrag", "yan2024crag", "liu2024lost"]
    assert closest_keys("asai2025", keys) == ["asai2024selfrag"]
    assert closest_keys("liu2024lots", keys) == ["liu2024lost"]
    assert closest_keys("zzz", keys) == []


# ---- the mistakes an author makes in the book's own files: one line each, no traceback ----

def test_a_toc_entry_for_a_missing_page_names_toc_its_line_and_the_path(tmp_path, monkeypatch, capsys):
    from runnable_book.pipeline import artefact_graph, pages

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "index.md").write_text("# Home\n")
    (tmp_path / "book" / "a.md").write_text("# A\n")
    toc = tmp_path / "_toc.yml"
    toc.write_text("# The reading order.\nformat: jb-book\nroot: book/index\nchapters:\n"
                   "  - file: book/a\n  - file: book/15_99_missing\n")
    monkeypatch.setattr(pages, "ROOT", tmp_path)
    monkeypatch.setattr(pages, "TOC", toc)
    expected = ("_toc.yml, line 6: its entry `book/15_99_missing` names book/15_99_missing.md, which does not "
                "exist. Create the page, or take the entry out.")
    with pytest.raises(pages.BookError) as raised:
        pages.pages_in_toc_order()
    assert str(raised.value) == expected
    # The graph says it before any step runs (here its `status`, which reads every step's inputs).
    assert artefact_graph.main(["status"]) == 1
    out, err = capsys.readouterr()
    assert err == f"error: {expected}\n" and out == ""


BROKEN_BIB = """% Two works.

@misc{first2024,
  title = {{The First}},
  author = {One, Author},
  year = {2024},

@misc{second2024,
  title = {{The Second}},
  author = {Two, Author},
  year = {2024},
}
"""


@pytest.mark.parametrize("fault, line, entry, hint", [
    ("", 8, "first2024", "is its closing brace missing?"),  # the first entry never closed
    ("  year   {2024},", 6, "first2024", ""),  # a field without its '='
], ids=["unclosed entry", "field without ="])
def test_a_broken_bib_names_the_file_the_line_and_the_entry(tmp_path, monkeypatch, fault, line, entry, hint):
    from runnable_book.pipeline import myst_to_notebook

    bib = tmp_path / "references.bib"
    bib.write_text(BROKEN_BIB if not fault else BROKEN_BIB.replace("  year = {2024},\n\n", f"{fault}\n}}\n\n", 1))
    monkeypatch.setattr(myst_to_notebook, "BIBFILE", bib)
    myst_to_notebook.bibliography.cache_clear()
    try:
        with pytest.raises(myst_to_notebook.BookError) as raised:
            myst_to_notebook.bibliography()
    finally:
        myst_to_notebook.bibliography.cache_clear()
    message = str(raised.value)
    assert message.startswith(f"{bib}, line {line}: '=' expected, in the entry `{entry}` (@misc, line 3)"), message
    assert message.endswith(hint) and "\n" not in message


@pytest.mark.parametrize("role, content", [("numref", "fig-missing"), ("cite:p", "nobody2099")])
def test_a_reference_to_nothing_in_a_readers_notebook_names_the_page_and_line(tmp_path, role, content):
    """The reader's notebook resolves {numref} and {cite} itself (runnable_book/pipeline/myst_to_notebook.py)."""
    from runnable_book.pipeline import myst_to_notebook

    page = tmp_path / "page.md"
    page.write_text(NOTEBOOK_PAGE.format(title="Page") + f"\nAs {{{role}}}`{content}` shows.\n")
    line = line_of(page.read_text(), f"As {{{role}}}`{content}` shows.", 1)
    with pytest.raises(myst_to_notebook.ConversionError) as raised:
        myst_to_notebook.convert_role(role, content, myst_to_notebook.Context(page, 3))
    assert str(raised.value).startswith(f"{page}, line {line} (cell 3): {{{role}}}`{content}`")
