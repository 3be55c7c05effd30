"""Where the book's pages are and how to read them: shared by every tool.

The table of contents (``_toc.yml``) is the single source of the page order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import jupytext
import yaml

ROOT = Path(__file__).resolve().parents[2]  # tools/pipeline/pages.py -> the repository
TOC = ROOT / "_toc.yml"


def shown(path: Path) -> str:
    """A path as a maintainer types it: relative to the repository when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


class BookError(Exception):
    """A problem in the book's sources, reported with the file and cell it is in."""


@dataclass(frozen=True)
class CodeCell:
    """One code cell of a page, located the way a person would look for it."""

    page: Path  # the .md file
    number: int  # 1-based among the page's code cells
    line: int  # 1-based line of the cell's opening fence in the .md file
    source: str

    @property
    def name(self) -> str:
        """Stable across prose edits: what the generated library cites."""
        return f"{shown(self.page)}, code cell {self.number}"

    @property
    def where(self) -> str:
        """For error messages: also the line, so an editor can jump to it."""
        return f"{self.name} (line {self.line})" if self.line else self.name


def pages_in_toc_order() -> list[Path]:
    """Return the .md file of every page, in reading order."""
    toc = yaml.safe_load(TOC.read_text())
    entries = [toc["root"]] + [chapter["file"] for chapter in toc.get("chapters", [])]
    return [ROOT / f"{entry}.md" for entry in entries]


def is_notebook_page(md: Path) -> bool:
    """A page is a notebook when its top-matter names a kernel (MyST-NB's rule)."""
    text = md.read_text()
    return text.startswith("---") and "kernelspec:" in text.split("\n---", 1)[0]


def notebook_pages() -> list[Path]:
    return [md for md in pages_in_toc_order() if is_notebook_page(md)]


def read_page(md: Path):
    """Read a MyST-markdown page into an nbformat notebook (via jupytext)."""
    return jupytext.read(md, fmt="md:myst")


def page_title(nb) -> str:
    """The page's first heading, e.g. '15.2 One-shot RAG and the question it cannot answer'."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def code_cells(md: Path, nb=None) -> list[CodeCell]:
    """The page's code cells with their positions, for messages that name them."""
    nb = nb if nb is not None else read_page(md)
    lines = md.read_text().splitlines()
    fences = [i + 1 for i, line in enumerate(lines) if line.startswith("```{code-cell}")]
    cells = [c for c in nb.cells if c.cell_type == "code"]
    if len(fences) != len(cells):  # e.g. a fence written another way; positions unknown
        fences = [0] * len(cells)
    return [
        CodeCell(md, number, line, cell.source)
        for number, (line, cell) in enumerate(zip(fences, cells), start=1)
    ]
