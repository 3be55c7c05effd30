"""`make book`'s messages name the cause: the page and line of a duplicate label, the keys an
unknown citation key may have meant; its normal output is its steps, not configuration dumps.

The build is tools/pipeline/build_book.py's (quiet_html_build), on a scratch book
(tests/scratch_book.py) with the parts of our extension these messages come from:
stored_outputs (the pages MyST-NB reads, with their line map) and citations.
"""

import re

import nbformat

from scratch_book import NOTEBOOK_PAGE, scratch_book
from tools.pipeline.build_book import quiet_html_build
from tools.pipeline.pages import code_cells, notebook_pages, read_page
from tools.pipeline.stored_outputs import stored_path
from tools.sphinx_ext.citations import closest_keys
from tools.sphinx_ext.page_outputs import cell_lines

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


def test_each_warning_names_the_page_and_its_line_and_the_output_is_quiet(tmp_path, capfd):
    book = tmp_path / "book"
    scratch_book(book, [], ["page_outputs", "citations"],
                 # as in the book's _config.yml: the stored notebooks are not pages
                 {"bibtex_bibfiles": ["references.bib"], "exclude_patterns": ["*.ipynb"]},
                 nb_custom_formats={".md": "tools.sphinx_ext.page_outputs.read_page"})
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
        # MyST-NB reports line `start + 2` for a cell's first line (tools/sphinx_ext/page_outputs.py).
        assert [start + 2 for start in code_starts] == [cell.line for cell in code_cells(md, nb)], md


def test_closest_keys():
    keys = ["asai2024selfrag", "yan2024crag", "liu2024lost"]
    assert closest_keys("asai2025", keys) == ["asai2024selfrag"]
    assert closest_keys("liu2024lots", keys) == ["liu2024lost"]
    assert closest_keys("zzz", keys) == []
