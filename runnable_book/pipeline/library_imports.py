"""Before the library is rewritten: does every import of it still resolve?

A page, a `# @solution N` cell or a hand-written check that imports a name the new
chapter_lib no longer defines would fail only when it runs, pages later, with an
``ImportError`` at a line that may not even name it (an import of
``chapter_lib.exercises`` that runs ``solution_7``). `make lib` finds it first, names the
name, every page, cell and line that imports it, and the edit that removed it, read from
the library as it was (its provenance comments name the defining cell):

    `token_count` is imported but the new chapter_lib does not define it:
    book/15_08_x.md, code cell 2 now defines `count_tokens`, not `token_count`.
      book/15_11_exercises.md, code cell 40 (line 1201), line 1204
    chapter_lib was not changed.

An import is never called a definition, and each problem is printed once.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from runnable_book.pipeline.pages import BookError, code_cells, shown, top_level_names

from runnable_book.repository import ROOT

PACKAGE = ROOT / "chapter_lib"
EXERCISES = PACKAGE / "exercises"
# The exercise packages (book_shape.exercise_packages: one per exercise page), by package name:
# the folder of its hand-written modules (checks, helpers), which import the library too (None:
# none are read, as for a test's scratch library).
DEFAULT_PACKAGES = {"chapter_lib.exercises": EXERCISES}
PROVENANCE = re.compile(r"^# Defined in Section .* -- (?P<cell>.+, code cell (?P<number>\d+))\.$")


def bound_names(tree: ast.Module) -> set[str]:
    """Every top-level name a module binds (what importing a name from it can find)."""
    return top_level_names(tree)


def exported(tree: ast.Module) -> set[str]:
    """What ``from module import *`` gives: ``__all__`` when it is a literal, else public names."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return set(ast.literal_eval(node.value))
            except ValueError:
                break
    return {name for name in bound_names(tree) if not name.startswith("_")}


def handwritten(exercises: Path | None) -> list[Path]:
    """The hand-written modules beside the solutions (checks, helpers, fixtures)."""
    if exercises is None:
        return []
    return [path for path in sorted(exercises.glob("*.py"))
            if path.name != "__init__.py" and not path.name.startswith("solution_")]


def available(new_modules: dict[str, str], packages: dict[str, Path | None] | None = None) -> dict[str, set[str]]:
    """Module name -> the names importing it gives, with the new generated modules (by module name).
    ``packages``: the exercise packages' folders by package name (default: chapter_lib.exercises)."""
    packages = DEFAULT_PACKAGES if packages is None else packages
    trees = {f"{package}.{path.stem}": ast.parse(path.read_text())
             for package, folder in packages.items() for path in handwritten(folder)}
    trees.update({module: ast.parse(text) for module, text in new_modules.items()})
    names = {module: bound_names(tree) | exported(tree) for module, tree in trees.items()}
    # The package re-exports every chapter's module (chapter_lib/__init__.py, generated alike).
    chapter_modules = {module: tree for module, tree in trees.items() if re.fullmatch(r"chapter_lib\.chapter\d+", module)}
    names["chapter_lib"] = set().union(*map(exported, chapter_modules.values())) | {
        module.rsplit(".", 1)[1] for module in chapter_modules} | {package.split(".")[1] for package in packages}
    # Each exercise package's __init__ imports every module of its own (exercises_package.py).
    for package in packages:
        own = {module: tree for module, tree in trees.items() if module.rpartition(".")[0] == package}
        names[package] = {m.rsplit(".", 1)[1] for m in own}.union(*map(exported, own.values()))
    return names


def imports_of_the_library(source: str) -> list[tuple[str, str, int]]:
    """(module, name, line in source) for every ``from chapter_lib... import name``."""
    if "chapter_lib" not in source:  # (most cells: no parse needed to know they import none of it)
        return []
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython syntax (%magic): make lib's other checks and the run say more
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "chapter_lib":
            found += [(node.module, alias.name, node.lineno) for alias in node.names if alias.name != "*"]
    return found


def importers(pages: list[Path], packages: dict[str, Path | None] | None = None) -> list[tuple[str, str, str]]:
    """(module, name, where) for every import of the library in the book and its hand-written checks."""
    found = []
    for md in pages:
        text = md.read_text().splitlines()
        for cell in code_cells(md):
            # The cell's code starts at its first line after the fence (and any options).
            first = cell.source.split("\n", 1)[0]
            start = next((i for i in range(cell.line or 0, len(text)) if text[i] == first), None)
            for module, name, line in imports_of_the_library(cell.source):
                at = f", line {start + line}" if start is not None else f", its line {line}"
                found.append((module, name, f"{cell.where}{at}"))
    for folder in (DEFAULT_PACKAGES if packages is None else packages).values():
        for path in handwritten(folder):  # (the solutions are generated from the page's cells, read above)
            for module, name, line in imports_of_the_library(path.read_text()):
                found.append((module, name, f"{shown(path)}, line {line}"))
    return found


def names_defined_by(cell: str, lines: list[str]) -> set[str]:
    """The names the old library's provenance comments attribute to ``cell``."""
    names = set()
    for index, line in enumerate(lines[:-1]):
        origin = PROVENANCE.match(line)
        if origin and origin.group("cell") == cell:
            for following in lines[index + 1:index + 4]:  # past decorators
                found = re.match(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=", following)
                if found:
                    names.add(found.group(1) or found.group(2))
                    break
    return names


def what_removed(name: str, old_text: str | None, new_cells: dict[str, set[str]], pages: list[Path]) -> str:
    """The edit that removed ``name``, read from the library as it was (its provenance comments)."""
    if not old_text:
        return "no marked cell defines it"
    lines = old_text.splitlines()
    definition = re.compile(rf"^(?:async\s+def|def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*(?::[^=]*)?=")
    for index, line in enumerate(lines):
        if definition.match(line):
            origin = next((PROVENANCE.match(lines[i]) for i in range(index - 1, max(index - 4, -1), -1)
                           if PROVENANCE.match(lines[i])), None)
            if origin is None:
                break
            cell = origin.group("cell")
            page = ROOT / cell.split(",")[0]
            if page not in pages:
                return f"{shown(page)} is no longer in _toc.yml (it defined them)"
            now = new_cells.get(cell, set())
            if not now:
                return f"it was defined by {cell}, which is no longer a marked cell (or no longer defines anything)"
            added = sorted(now - names_defined_by(cell, lines))
            if not added:
                return f"{cell} no longer defines it"
            return f"{cell} now defines {', '.join(f'`{n}`' for n in added)}, not `{name}`"
    return "no marked cell defines it any more"


def reading_order(where: str) -> tuple:
    """Sort key for "book/x.md, code cell 12 (line 40), line 41": by file, then by number."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", where))


def check(new_modules: dict[str, str], new_cells: dict[str, set[str]], old_text: str | None,
          pages: list[Path], packages: dict[str, Path | None] | None = None) -> None:
    """Stop (BookError) when an import of the library does not resolve in the new library.
    ``packages``: the exercise packages by name, each with the folder whose hand-written modules
    import it too (default: chapter_lib.exercises, chapter_lib/exercises/)."""
    names = available(new_modules, packages)
    missing: dict[str, list[str]] = {}
    for module, name, where in importers(pages, packages):
        if module not in names:
            missing.setdefault(f"module `{module}`", []).append(where)
        elif name not in names[module]:
            missing.setdefault(name, []).append(where)
    if not missing:
        return
    # One paragraph per cause (a page out of the toc removes many names at once), each place once.
    by_cause: dict[str, dict[str, list[str]]] = {}
    for name, places in missing.items():
        cause = ("chapter_lib has no such module" if name.startswith("module ")
                 else what_removed(name, old_text, new_cells, pages))
        by_cause.setdefault(cause, {})[name] = places
    problems = []
    for cause, names in by_cause.items():
        listed = ", ".join(n if n.startswith("module ") else f"`{n}`" for n in names)
        places: dict[str, list[str]] = {}
        for name, wheres in names.items():
            for where in wheres:
                shown_name = name.removeprefix("module ").strip("`")
                if shown_name not in places.setdefault(where, []):
                    places[where].append(shown_name)
        problems.append(f"{listed} {'is' if len(names) == 1 else 'are'} imported but the new chapter_lib does not "
                        f"define {'it' if len(names) == 1 else 'them'}: {cause}. Imported at:")
        problems += [f"  {where}" + (f" ({', '.join(f'`{n}`' for n in imported)})" if len(names) > 1 else "")
                     for where, imported in sorted(places.items(), key=lambda item: reading_order(item[0]))]
    problems.append("Rename the imports too, or keep the old name. chapter_lib was not changed, and no page was run.")
    raise BookError("\n".join(problems))
