"""The names a marked cell defines and uses: what `make lib` checks before it writes anything
(runnable_book/pipeline/extract_library.py). A saved name is a cell's top-level definition; a
name a generated module uses and nothing in it defines stops the build here, named with the
cell that uses it and where the name is defined instead, not pages later when another page
imports the library.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from runnable_book.pipeline.pages import BookError, code_cells, shown
from runnable_book.pipeline.parse_cache import kept_parse

# A marked cell's first line.
MARKER = "# @save"  # chapter code, saved into its chapter's module
# `# @solution 3` -> chapter_lib/exercises/solution_3.py (the page's exercise package)
SOLUTION_MARKER = re.compile(r"# @solution (\d+)")


def is_marked(first_line: str) -> bool:
    line = first_line.strip()
    return line == MARKER or SOLUTION_MARKER.fullmatch(line) is not None


def defined_names(tree: ast.Module) -> list[tuple[str, ast.stmt]]:
    """Top-level names a cell defines (imports excluded: they are not the chapter's API)."""
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append((node.name, node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [(t.id, node) for t in targets if isinstance(t, ast.Name)]
    return names


def undefined_names(text: str, target: Path) -> list:
    """pyflakes' messages for the names a module uses and does not define."""
    from pyflakes import checker, messages

    undefined = (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)

    def check():
        found = checker.Checker(ast.parse(text), filename=str(target)).messages
        return sorted((m for m in found if isinstance(m, undefined)), key=lambda m: m.lineno)

    # Kept by the module's text (and pyflakes' version): a book of 20 chapters checks 20 modules
    # on every build, and a prose edit changes none of them.
    return kept_parse("pyflakes-undefined", f"{target}\0pyflakes {pyflakes_version()}\0{text}", Path(__file__), check)


@functools.cache
def pyflakes_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("pyflakes")


def check_names(text: str, origins: list, target: Path, pages: list[Path], marker: str,
                saved_later: dict | None = None, undefined: list | None = None) -> None:
    """Stop on a name that the module uses but nothing in it defines (pyflakes; ``undefined``:
    its messages for ``text``, when already known). ``origins``: for each line of ``text``, the
    saved cell it comes from (extract_library.SavedCell) or None; ``marker``: the cells' marker,
    as the messages name it ("# @save", "# @solution N"); ``saved_later``: the saved cell of
    each name a later chapter saves.

    A marked cell runs on its page after the page's ordinary cells, so a name the page
    defines in a setup cell works there and fails only when another page imports the
    library; this finds it before any page runs.
    """
    problems = []
    for message in undefined_names(text, target) if undefined is None else undefined:
        name = message.message_args[0]
        cell = origins[message.lineno - 1] if message.lineno <= len(origins) else None
        where = cell.cell.where if cell else shown(target)
        elsewhere = ordinary_definition(name, pages)
        later = (saved_later or {}).get(name)
        hint = (f"; `{name}` is saved by a later chapter ({later.cell.where}), and a chapter's saved code "
                f"may use only what its own and earlier chapters save: save `{name}` in an earlier chapter, or "
                f"this code in a later one" if later else
                f"; `{name}` is defined only by an ordinary cell ({elsewhere}), which pages run and the "
                f"library never does: pass it in as an argument, or define it in a `{marker}` cell" if elsewhere else
                f"; import `{name}` in this cell, or define it in an earlier `{marker}` cell")
        problems.append(f"{where}: `{name}` is used but {shown(target)} does not define it "
                        f"(a `{marker}` cell sees only what it imports and what the marked cells "
                        f"before it define){hint}.")
    if problems:
        raise BookError("\n".join(problems) + "\nchapter_lib was not changed.")


def ordinary_definition(name: str, pages: list[Path]) -> str | None:
    """The first unmarked cell of the book that defines ``name`` at its top level."""
    for md in pages:
        for cell in code_cells(md):
            if is_marked(cell.source.partition("\n")[0]):
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:  # IPython syntax (%magic): not a definition we can see
                continue
            # An import of the library is not a definition (library_imports names a broken one).
            bound = {n for n, _ in defined_names(tree)} | {
                (alias.asname or alias.name).split(".")[0]
                for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                and not (getattr(node, "module", None) or "").startswith("chapter_lib") for alias in node.names}
            if name in bound:
                return cell.where
    return None
