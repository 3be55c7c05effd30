"""Where the book's pages are and how to read them: shared by every tool.

The table of contents (``_toc.yml``) is the single source of the page order.
"""

from __future__ import annotations

import ast
import copy
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
import yaml

from runnable_book.pipeline.parse_cache import kept_parse
from runnable_book.repository import ROOT  # noqa: E402 (the repository's root, where every tool starts)
TOC = ROOT / "_toc.yml"
# A page's last failed run (runnable_book/pipeline/site_build.py): shown by the HTML preview, and the
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

    def md_line(self, line: int) -> int | None:
        """The .md line of the cell's ``line``-th line (1-based, as ``ast`` and tracebacks count
        the cell's code): its code starts at the first line after the fence and any options."""
        if not self.line:
            return None
        text = self.page.read_text().splitlines()
        first = self.source.split("\n", 1)[0]
        start = next((i for i in range(self.line, len(text)) if text[i] == first), None)
        return None if start is None else start + line

    def at(self, line: int) -> str:
        """For a message about one line of the cell: the cell, then that line of the .md
        ("book/x.md, code cell 3 (line 40), line 44"), the one numbering every tool uses."""
        md_line = self.md_line(line)
        return f"{self.where}, line {md_line}" if md_line else f"{self.where}, its line {line}"


def pages_in_toc_order() -> list[Path]:
    """Return the .md file of every page, in reading order.

    Raises BookError naming _toc.yml, the entry's line and the file when an entry names a
    page that does not exist (every tool reads the pages from here, so none meets the
    missing file first with a message of its own), or when _toc.yml does not read."""
    pages = [ROOT / f"{entry}.md" for _, entry in toc_entries()]
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


# _toc.yml's entries by its text: every step asks for the pages (twenty times a build), and
# reading the YAML was a tenth of a prose edit's build on a book of 200 pages (profiled).
_ENTRIES: dict[tuple[Path, str], list[tuple]] = {}
# (libyaml's parser where PyYAML has it: the same nodes and lines, several times faster)
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def toc_entries() -> list[tuple]:
    """(YAML node, entry) of the root and of each chapter, in reading order, as written in
    _toc.yml (with its line). BookError, naming the line, where it does not read as a table of
    contents: not YAML, no `root:`, a chapter without its `file:`."""
    key = (TOC, TOC.read_text())
    if key not in _ENTRIES:
        _ENTRIES.clear()  # (one table of contents at a time: an edited one replaces it)
        _ENTRIES[key] = _read_entries(key[1])
    return list(_ENTRIES[key])


def _read_entries(text: str) -> list[tuple]:
    try:
        document = yaml.compose(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        what = " ".join(str(getattr(error, "problem", None) or error).split())
        raise BookError(f"{shown(TOC)}{line}: not YAML ({what}). Fix it there: it holds the page order "
                        "every tool reads.") from None
    root, chapters = [], []
    for key, value in document.value if isinstance(document, yaml.MappingNode) else []:
        if key.value == "root" and isinstance(value, yaml.ScalarNode):
            root.append((value, value.value))
        elif key.value == "chapters":
            for chapter in value.value if isinstance(value, yaml.SequenceNode) else [value]:
                files = [node for name, node in chapter.value if name.value == "file"
                         and isinstance(node, yaml.ScalarNode)] if isinstance(chapter, yaml.MappingNode) else []
                if not files:
                    raise BookError(f"{shown(TOC)}, line {chapter.start_mark.line + 1}: this entry of `chapters:` "
                                    "names no page. Write it `- file: book/<page>` (the .md file, without .md).")
                chapters += [(node, node.value) for node in files]
    if not root:
        raise BookError(f"{shown(TOC)}: it names no `root:` page. Start it with `root: book/<first page>`, "
                        "and list the others under `chapters:`, each `- file: book/<page>`.")
    return root + chapters


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

    Parsed once per content in a process, a copy each time (callers change theirs): one
    `make book` asks for every page about ten times (the library, the exercises, the
    outputs, the HTML), and on a book of 200 pages the parsing was half a prose edit's build
    (make bench-chapters).
    """
    return copy.deepcopy(_parsed_page(md, md.read_text()))


def parsed_page(md: Path):
    """read_page's notebook itself, not a copy, for a caller that only reads it: never change
    what it returns (every such caller in the process shares it). The library's step reads every
    page's code cells a few times, and copying each page for that grew with the book."""
    return _parsed_page(md, md.read_text())


@functools.lru_cache(maxsize=1024)
def _parsed_page(md: Path, text: str):
    """read_page's work; ``text``, the page as read, is the cache's key (an edited page is read
    again). Kept between processes too (parse_cache.py): a build reads the pages an edit left
    as they were from there."""
    return kept_parse("page", text, Path(__file__), lambda: _parse_page(md, text))


def _parse_page(md: Path, text: str):
    problems = structure_problems(md, text)
    if problems:
        raise BookError("\n".join(problems))
    return jupytext.reads(text, fmt="md:myst")  # (what jupytext.read(md) does with the file's text)


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
    text = md.read_text(encoding="utf-8")
    return kept_parse("mermaid-fences", text, Path(__file__), lambda: [
        (token.map[0] + 1, token.content) for token in _myst_parser().parse(text)
        if token.type == "fence" and token.info.strip() == "mermaid"])


def mermaid_sources() -> list[tuple[Path, str]]:
    """Each mermaid diagram of the book, (page, its source), in reading order (drawn at build
    time: runnable_book/pipeline/draw_diagrams.py; its font holds their characters: diagram_font.py)."""
    return [(md, code) for md in pages_in_toc_order() for _, code in mermaid_fences(md)]


def _fences(text: str) -> list:
    """The page's top-level fences (code cells, directives, code blocks), as MyST parses them."""
    return [t for t in _myst_parser().parse(text) if t.type in ("fence", "colon_fence") and t.level == 0]


def code_cell_lines(text: str) -> list[int]:
    """The 1-based line of each code cell's opening fence (kept between builds: parse_cache.py)."""
    return kept_parse("code-cell-lines", text, Path(__file__),
                      lambda: [t.map[0] + 1 for t in _fences(text) if _is_code_cell(t)])


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


def title_of(md: Path) -> str:
    """The page's title (page_title), read once per content in a process and never copied:
    the PDFs' plan asks for every page's on each page Sphinx writes."""
    return _title(md, md.read_text())


@functools.lru_cache(maxsize=1024)
def _title(md: Path, text: str) -> str:
    # Kept apart from the parsed page (parse_cache.py): every build asks for every page's title
    # (the PDFs' plan), and loading 200 kept pages for them was a tenth of a prose edit's build.
    return kept_parse("title", text, Path(__file__),
                      lambda: page_title(_parsed_page(md, text)))  # (read, not changed: no copy needed)


def page_title(nb) -> str:
    """The page's first heading, e.g. '15.2 One-shot RAG and the question it cannot answer'."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return ""


def cell_positions(md: Path, nb=None) -> list[tuple[str, int, int]]:
    """(its type, its number among the page's cells of that type, the .md line it starts at) for
    each cell of the page, in jupytext's order: "markdown cell 2 (line 14)" names a page's text
    as "code cell 3 (line 40)" names its code. A cell starts after the front matter, a `+++`
    line, or a code cell, at its first line that is not blank. Line 0: MyST and jupytext
    disagree on the cells, so positions are unknown."""
    nb = nb if nb is not None else read_page(md)
    text = md.read_text()
    lines = text.splitlines()
    fences = _fences(text)
    inside = {line for token in fences for line in range(*token.map)}
    code_ends = {token.map[0]: token.map[1] for token in fences if _is_code_cell(token)}
    index = next((i + 1 for i in range(1, len(lines)) if lines[i] == "---"), 0) if lines[:1] == ["---"] else 0
    starts, in_text = [], False
    while index < len(lines):
        if index in code_ends:
            starts.append(("code", index + 1))
            index, in_text = code_ends[index], False
            continue
        if index not in inside and lines[index].startswith("+++"):
            in_text = False
        elif lines[index].strip() and not in_text:
            starts.append(("markdown", index + 1))
            in_text = True
        index += 1
    kinds = [cell.cell_type for cell in nb.cells]
    if [kind for kind, _ in starts] != kinds:
        starts = [(kind, 0) for kind in kinds]
    counted: dict[str, int] = {}
    positions = []
    for kind, line in starts:
        counted[kind] = counted.get(kind, 0) + 1
        positions.append((kind, counted[kind], line))
    return positions


def code_cells(md: Path, nb=None) -> list[CodeCell]:
    """The page's code cells with their positions, for messages that name them."""
    nb = nb if nb is not None else parsed_page(md)  # (read, never changed)
    fences = code_cell_lines(md.read_text())
    cells = [c for c in nb.cells if c.cell_type == "code"]
    if len(fences) != len(cells):  # jupytext and MyST disagree on the cells: positions unknown
        fences = [0] * len(cells)
    return [
        CodeCell(md, number, line, cell.source)
        for number, (line, cell) in enumerate(zip(fences, cells), start=1)
    ]


def unreadable() -> list[str]:
    """What keeps the book from being read at all, each named by its file and line: _toc.yml
    (not YAML, an entry naming a missing page) and every page's block structure (a fence never
    closed). Empty when every tool can read the book."""
    try:
        pages = pages_in_toc_order()
    except BookError as error:
        return str(error).splitlines()
    return [problem for md in pages for problem in structure_problems(md)]


def main() -> int:
    """`python -m runnable_book.pipeline.pages`: `make check` and `make test` first ask whether the
    book can be read, so that a misspelt _toc.yml entry is said in its own words at once, not
    after the lint and type checks, nor as every test's traceback."""
    import sys

    problems = unreadable()
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        print("Nothing was checked: every check reads the book. Fix the above, then run it again.", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
