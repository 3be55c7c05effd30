"""The book's text as a reader reads it, page by page: prose, code and what the code printed.

What `make accept` records (runnable_book/pipeline/accept.py) and what the fidelity tests compare.
A notebook page is read from its reader's notebook (book/X.ipynb, kept byte for byte what
its .md makes by `make test-sources`): there the markdown is already plain CommonMark,
with citations resolved, figures numbered and notes as blockquotes, and the outputs are
the stored ones the book shows. A page without code (the landing page, the references)
is read from its .md, converted the same way (runnable_book/pipeline/myst_to_notebook.py).

Markdown is parsed with markdown-it-py (CommonMark, plus tables) and each block becomes
one line of plain text, its inline markup dropped as the rendered page drops it: a
heading keeps its ``#`` marks, a list item its marker, a blockquote its ``>``. Code and
printed output keep every line and every character.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import nbformat
from markdown_it import MarkdownIt

from runnable_book.pipeline.myst_to_notebook import Context, bibliography, convert_markdown, entry_markdown
from runnable_book.pipeline.pages import is_notebook_page, read_page
from runnable_book.pipeline.reader_notebook import INSTALL_TAG, is_added_cell, sort_key

NO_NEWLINE = "\\ No newline at end of output"  # as diff marks a file's last line


@dataclass(frozen=True)
class Line:
    """One line of a page's text. ``kind``: "section" (where the lines below come from),
    "prose" (one markdown block), "code" (code, verbatim) or "printed" (output, verbatim)."""

    kind: str
    text: str


@cache
def commonmark() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


class _TextOfHTML(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


def html_text(html: str) -> str:
    """The words an HTML fragment shows (e.g. a ``<summary>``'s title); "" for bare tags."""
    parser = _TextOfHTML()
    parser.feed(html)
    parser.close()
    return " ".join("".join(parser.parts).split())


def inline_text(token) -> str:
    """An inline token's words as rendered: markup dropped, code spans kept without backticks."""
    parts = []
    for child in token.children or []:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(inline_text(child))
        elif child.type == "html_inline":
            parts.append(html_text(child.content))
    return " ".join("".join(parts).split())


def markdown_lines(markdown: str) -> list[Line]:
    """One Line per block of CommonMark (a table: one per row); fenced code keeps its lines."""
    lines: list[Line] = []
    prefixes: list[str] = []  # blockquote ">" around the current block
    marker = ""  # a list item's marker or a heading's #s, put before its first block only
    numbers: list[int] = []  # per open list: the next item's number (0: a bullet list)
    row: list[str] | None = None  # the cells of the table row being read
    for token in commonmark().parse(markdown):
        kind = token.type
        if kind == "blockquote_open":
            prefixes.append(">")
        elif kind == "blockquote_close":
            prefixes.pop()
        elif kind in ("ordered_list_open", "bullet_list_open"):
            numbers.append(int(token.attrGet("start") or 1) if kind == "ordered_list_open" else 0)
        elif kind in ("ordered_list_close", "bullet_list_close"):
            numbers.pop()
        elif kind == "list_item_open":
            marker = f"{numbers[-1]}." if numbers[-1] else "-"
            numbers[-1] += 1 if numbers[-1] else 0
        elif kind == "heading_open":
            marker = "#" * int(token.tag[1])
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close":
            lines.append(Line("prose", " ".join(prefixes + [" | ".join(row)])))
            row = None
        elif kind == "inline" and row is not None:
            row.append(inline_text(token))
        elif kind == "inline":
            words = inline_text(token)
            if words:
                lines.append(Line("prose", " ".join(p for p in prefixes + [marker, words] if p)))
            marker = ""
        elif kind in ("fence", "code_block"):
            lines.extend(Line("code", line) for line in token.content.rstrip("\n").split("\n"))
        elif kind == "html_block":
            words = html_text(token.content)
            if words:
                lines.append(Line("prose", " ".join(prefixes + [words])))
    return lines


def verbatim(text: str) -> list[Line]:
    """Printed text, every character kept: a last line without a newline is marked."""
    lines = [Line("printed", line) for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        lines.append(Line("printed", NO_NEWLINE))
    return lines


def output_lines(output, where: str) -> list[Line]:
    """What one stored output shows: printed streams and results verbatim, a figure by name."""
    kind = output.output_type
    if kind == "stream":
        return [Line("section", f"{where} printed ({output.name})")] + verbatim(output.text)
    if kind == "error":
        return [Line("section", f"{where} raised"), Line("printed", f"{output.ename}: {output.evalue}")]
    data = output.get("data", {})
    if any(mime.startswith("image/") for mime in data):
        return [Line("section", f"{where} drew a figure")]
    if "text/plain" in data:
        return [Line("section", f"{where} shows ({kind})")] + verbatim(data["text/plain"])
    return [Line("section", f"{where} shows {sorted(data)}")]


def notebook_page_lines(md: Path) -> list[Line]:
    """A notebook page's text, from its reader's notebook; cells numbered as in the .md."""
    reader = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    lines: list[Line] = []
    number = 0
    for cell in reader.cells:
        if INSTALL_TAG in cell.metadata.get("tags", []):
            continue  # ours, the same on every page: nothing a reader reads as the chapter
        if is_added_cell(cell):
            where = f"{cell.metadata['tags'][0]} (ours)"  # a caption, a folded section, references
        else:
            number += 1
            where = f"cell {number}"
        lines.append(Line("section", f"{where} ({cell.cell_type})"))
        if cell.cell_type == "markdown":
            lines.extend(markdown_lines(cell.source))
        elif cell.cell_type == "code":
            lines.extend(Line("code", line) for line in cell.source.split("\n"))
            for output in cell.outputs:
                lines.extend(output_lines(output, where))
    return lines


def prose_page_lines(md: Path) -> list[Line]:
    """A page without code, from its .md: its markdown converted as a notebook's is; the
    references page (a {bibliography} of every entry) as its entries, in the HTML's order."""
    lines: list[Line] = []
    for number, cell in enumerate(read_page(md).cells, start=1):
        lines.append(Line("section", f"cell {number} ({cell.cell_type})"))
        if "```{bibliography}" in cell.source:
            heading = cell.source.split("```{bibliography}")[0]
            entries = sorted(bibliography(), key=sort_key)
            lines.extend(markdown_lines(heading + "\n".join(f"- {entry_markdown(k)}" for k in entries)))
        else:
            lines.extend(markdown_lines(convert_markdown(cell.source, Context(md, number))))
    return lines


def page_lines(md: Path) -> list[Line]:
    return notebook_page_lines(md) if is_notebook_page(md) else prose_page_lines(md)
