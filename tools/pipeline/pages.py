"""Where the book's pages are and how to read them: shared by every tool.

The table of contents (``_toc.yml``) is the single source of the page order.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
import yaml

from tools.repository import ROOT  # noqa: E402 (the repository's root, where every tool starts)
TOC = ROOT / "_toc.yml"
# A page's last failed run (tools/pipeline/site_build.py): shown by the HTML preview, and the
# page runs again while it exists; never in book/, whose stored notebook a failure leaves as it was.
FAILED_RUNS = ROOT / "_build" / "failed"


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
    """Return the .md file of every page, in reading order.

    Raises BookError naming _toc.yml, the entry's line and the file when an entry names a
    page that does not exist (every tool reads the pages from here, so none meets the
    missing file first with a message of its own)."""
    toc = yaml.safe_load(TOC.read_text())
    entries = [toc["root"]] + [chapter["file"] for chapter in toc.get("chapters", [])]
    pages = [ROOT / f"{entry}.md" for entry in entries]
    if not all(page.is_file() for page in pages):
        raise BookError("\n".join(missing_pages()))
    return pages


def missing_pages() -> list[str]:
    """For each entry of _toc.yml whose page does not exist: _toc.yml, its line, the missing file."""
    problems = []
    for node, entry in toc_entries():
        page = ROOT / f"{entry}.md"
        if not page.is_file():
            problems.append(f"{shown(TOC)}, line {node.start_mark.line + 1}: its entry `{entry}` names "
                            f"{shown(page)}, which does not exist. Create the page, or take the entry out.")
    return problems


def toc_entries() -> list[tuple]:
    """(YAML node, entry) of the root and of each chapter, as written in _toc.yml (with its line)."""
    document = yaml.compose(TOC.read_text())
    found = []
    for key, value in document.value:
        if key.value == "root":
            found.append((value, value.value))
        elif key.value == "chapters":
            for chapter in value.value:
                found += [(node, node.value) for name, node in chapter.value if name.value == "file"]
    return found


def is_notebook_page(md: Path) -> bool:
    """A page is a notebook when its top-matter names a kernel (MyST-NB's rule)."""
    text = md.read_text()
    return text.startswith("---") and "kernelspec:" in text.split("\n---", 1)[0]


def notebook_pages() -> list[Path]:
    return [md for md in pages_in_toc_order() if is_notebook_page(md)]


def read_page(md: Path):
    """Read a MyST-markdown page into an nbformat notebook (via jupytext).

    The page's block structure is checked first (:func:`structure_problems`): jupytext
    reads a mistyped page without complaint, and a `# @save` cell swallowed by an unclosed
    directive would silently leave the library.
    """
    problems = structure_problems(md)
    if problems:
        raise BookError("\n".join(problems))
    return jupytext.read(md, fmt="md:myst")


def _myst_parser():
    """MyST's own markdown-it parser, with the block syntax the book enables (_config.yml)."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions={"colon_fence", "deflist", "attrs_block"}),
                            RendererHTML)


def top_level_names(tree: ast.Module) -> set[str]:
    """Every name a module (or a cell) binds at its top level: definitions, assignments,
    imports, and what `for`, `with`, `if` and `try` blocks bind there."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
        else:
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


def mermaid_fences(md: Path) -> list[tuple[int, str]]:
    """(the .md line of its opening fence, its source) for each mermaid diagram of a page,
    found as the HTML's parser finds them."""
    tokens = _myst_parser().parse(md.read_text(encoding="utf-8"))
    return [(token.map[0] + 1, token.content) for token in tokens
            if token.type == "fence" and token.info.strip() == "mermaid"]


def mermaid_sources() -> list[tuple[Path, str]]:
    """Each mermaid diagram of the book, (page, its source), in reading order (drawn at build
    time: tools/pipeline/draw_diagrams.py; its font holds their characters: diagram_font.py)."""
    return [(md, code) for md in pages_in_toc_order() for _, code in mermaid_fences(md)]


def _fences(text: str) -> list:
    """The page's top-level fences (code cells, directives, code blocks), as MyST parses them."""
    return [t for t in _myst_parser().parse(text) if t.type in ("fence", "colon_fence") and t.level == 0]


def _is_code_cell(token) -> bool:
    return token.info.strip().startswith("{code-cell}")


CODE_CELL_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,}|:{3,})\{code-cell\}")


def structure_problems(md: Path, text: str | None = None) -> list[str]:
    """Fences that do not close, and code cells that MyST would not read as cells.

    Both come from a missing closing fence: an unclosed ```{note} runs on until the next
    bare ``` (often the end of the next code cell, which it swallows), an unclosed code
    cell to the end of the page. Each message names the page, the lines and the fix.
    """
    text = md.read_text() if text is None else text
    lines = text.splitlines()
    fences = _fences(text)
    problems = []
    for token in fences:
        start, end = token.map  # 0-based, end exclusive
        closing = lines[end - 1].strip() if end - 1 > start else ""
        char = token.markup[0]
        if not (closing and set(closing) == {char} and len(closing) >= len(token.markup)):
            problems.append(f"{shown(md)}, line {start + 1}: the {token.markup}{token.info.strip()} opened "
                            f"here is never closed (it runs to the end of the page). Close it with a line "
                            f"{token.markup} where it should end.")
    cell_starts = {t.map[0] for t in fences if _is_code_cell(t)}
    for number, line in enumerate(lines):
        if not CODE_CELL_LINE.match(line) or number in cell_starts:
            continue
        holder = next((t for t in fences if t.map[0] < number < t.map[1]), None)
        if holder is None:
            problems.append(f"{shown(md)}, line {number + 1}: this code cell is not at the top level "
                            f"of the page (indented, or inside a list or quote), so it is not a cell.")
            continue
        problems.append(
            f"{shown(md)}, line {number + 1}: this code cell is read as text inside the "
            f"{holder.markup}{holder.info.strip()} opened at line {holder.map[0] + 1}, which is not closed "
            f"before it (the first line that closes it is line {holder.map[1]}). Close it with a line "
            f"{holder.markup} before line {number + 1}.")
    return problems


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
    fences = [t.map[0] + 1 for t in _fences(md.read_text()) if _is_code_cell(t)]
    cells = [c for c in nb.cells if c.cell_type == "code"]
    if len(fences) != len(cells):  # jupytext and MyST disagree on the cells: positions unknown
        fences = [0] * len(cells)
    return [
        CodeCell(md, number, line, cell.source)
        for number, (line, cell) in enumerate(zip(fences, cells), start=1)
    ]
