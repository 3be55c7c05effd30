"""Which definitions of ``chapter_lib`` a page's code uses, followed through the library.

A page's stored outputs depend on its own code cells and on the library code that code
reaches (runnable_book/pipeline/execute_pages.py re-executes a page when either changes). What
a page reaches is found statically, from names, over every module of ``chapter_lib``:

* a page's ``from chapter_lib import search`` reaches the statement that binds ``search``
  (through ``chapter_lib/__init__.py``'s table of each chapter's names, LAZY_EXPORTS, read as
  a ``from .chapter15 import *`` per chapter, and the ``__all__`` of chapter15), and from there every module-level name that statement loads, in its own
  module or, through imports, in another, and so on;
* a module object (``import chapter_lib``, ``from chapter_lib import chapter15``) reaches
  the whole module: ``chapter_lib.exercises.common.chapter_code_with`` copies every
  function of chapter15, so the exercises page depends on all of it;
* statements that bind no name (a bare call at module level) are reached with their module;
  a module's docstring is not an input.

A statement is compared as ``ast.unparse`` writes it: comments (the generated library's
provenance lines, renumbered when a cell is added above), blank lines and layout do not
count; a changed docstring does. f-strings are written as calls first (:func:`stable_text`):
Python 3.12 unparses them otherwise than 3.11 does, and the same library must give the same
inputs on every supported Python, or a fresh build there re-executes pages for nothing. A name the page imports that nothing binds any more is an
input too ("missing"), so removing a definition re-executes its users. Over-approximating
is safe (a page re-executes needlessly); under-approximating is not, so anything the
analysis cannot read (IPython syntax mentioning chapter_lib, ``__import__``) reaches the
whole library.
"""

from __future__ import annotations

import ast
import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from runnable_book.pipeline.parse_cache import kept_parse
from runnable_book.repository import ROOT

PACKAGE = "chapter_lib"
# The table of chapter_lib/__init__.py (extract_library.py writes it) of each chapter's module and
# the names it saves, which the package's __getattr__ imports on first use: read here as one
# ``from .chapterNN import *`` per chapter, which is what it does for a name (a name is saved
# once in the book, so no chapter's names hide another's).
LAZY_EXPORTS = "_CHAPTERS"
LIBRARY = ROOT / PACKAGE
WHOLE = None  # an import of a module object: the whole module


@dataclass
class Statement:
    """One top-level statement of a library module (one name of an import statement)."""

    key: str  # how a change report names it: "chapter15.assess", "exercises.common.chapter15"
    text: str  # stable_text (ast.unparse): what counts as a change
    binds: set[str]
    loads: set[str] = field(default_factory=set)
    target: tuple[str, str | None] | None = None  # a library import: (module, name or WHOLE)


@dataclass
class Module:
    name: str  # "" for the package, "chapter15", "exercises.common"
    statements: list[Statement]
    stars: list[str]  # library modules it star-imports, in order
    all: list[str] | None  # its literal __all__, if any

    def binding(self, name: str) -> list[Statement]:
        return [s for s in self.statements if name in s.binds]

    @property
    def unnamed(self) -> list[Statement]:
        return [s for s in self.statements if not s.binds]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def absolute(module: str | None, level: int, here: str, is_package: bool) -> str | None:
    """The library module an import names, relative to the library (None: not ours)."""
    if level:
        base = here.split(".") if here else []
        base = base if is_package else base[:-1]
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return ".".join(base + ([module] if module else []))
    if module == PACKAGE:
        return ""
    if module and module.startswith(PACKAGE + "."):
        return module.removeprefix(PACKAGE + ".")
    return None


class _Names(ast.NodeVisitor):
    """Module-level names a statement binds, and every name it loads (nested code too)."""

    def __init__(self):
        self.binds, self.loads, self.depth = set(), set(), 0

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.loads.add(node.id)
        elif self.depth == 0:
            self.binds.add(node.id)

    def _scope(self, node, name=None):
        if name and self.depth == 0:
            self.binds.add(name)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    def visit_FunctionDef(self, node):
        self._scope(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self._scope(node, node.name)

    def visit_Lambda(self, node):
        self._scope(node)

    def visit_ListComp(self, node):
        self._scope(node)

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


class _FStringsAsCalls(ast.NodeTransformer):
    """f"a{b!r:>{w}}" -> __fstring__('a', __value__(b, 114, __fstring__(...))): the same parts,
    in a form every supported Python's ast.unparse writes alike."""

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.Call:
        parts = [self.visit(value) for value in node.values]
        return ast.Call(ast.Name("__fstring__", ast.Load()), parts, [])

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.Call:
        spec = self.visit(node.format_spec) if node.format_spec is not None else ast.Constant(None)
        return ast.Call(ast.Name("__value__", ast.Load()),
                        [self.visit(node.value), ast.Constant(node.conversion), spec], [])


def stable_text(node: ast.AST) -> str:
    """The statement as ``ast.unparse`` writes it, the same on every supported Python."""
    return ast.unparse(_FStringsAsCalls().visit(copy.deepcopy(node)))


def parse_module(name: str, source: str, is_package: bool, known: set[str]) -> Module:
    statements, stars, exported = [], [], None
    prefix = name or PACKAGE
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]  # the module's docstring: no page's outputs depend on it
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                single = (ast.ImportFrom(module=node.module, names=[alias], level=node.level)
                          if isinstance(node, ast.ImportFrom) else ast.Import(names=[alias]))
                text = stable_text(single)
                if isinstance(node, ast.ImportFrom):
                    origin = absolute(node.module, node.level, name, is_package)
                    if origin is not None and alias.name == "*":
                        stars.append(origin)
                        continue
                    bound = alias.asname or alias.name
                    target = None
                    if origin is not None:
                        sub = f"{origin}.{alias.name}" if origin else alias.name
                        target = (sub, WHOLE) if sub in known else (origin, alias.name)
                else:
                    origin = absolute(alias.name, 0, name, is_package)
                    bound = alias.asname or alias.name.split(".")[0]
                    target = (origin if alias.asname else "", WHOLE) if origin is not None else None
                statements.append(Statement(f"{prefix}.{bound}", text, {bound}, target=target))
            continue
        lazy = lazily_imported(node, name, is_package)
        if lazy is not None:
            stars += lazy
        names = _Names()
        names.visit(node)
        if names.binds == {"__all__"} and isinstance(node, ast.Assign):
            try:
                exported = list(ast.literal_eval(node.value))
            except ValueError:
                pass
        key = f"{prefix}.{','.join(sorted(names.binds))}" if names.binds else f"{prefix}: module-level code"
        statements.append(Statement(key, stable_text(node), names.binds, names.loads))
    # A name bound twice (X = 1, then X += 1) gets two keys, so a change to either counts.
    seen: dict[str, int] = {}
    for statement in statements:
        seen[statement.key] = seen.get(statement.key, 0) + 1
        if seen[statement.key] > 1:
            statement.key += f" #{seen[statement.key]}"
    return Module(name, statements, stars, exported)


def lazily_imported(node: ast.stmt, name: str, is_package: bool) -> list[str] | None:
    """The modules of a package's LAZY_EXPORTS table (``_CHAPTERS = {"chapter15": [...]}``), or None."""
    if not (is_package and isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
            and [getattr(t, "id", None) for t in node.targets] == [LAZY_EXPORTS]):
        return None
    modules = [key.value for key in node.value.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)]
    return [m for m in (absolute(module, 1, name, is_package) for module in modules) if m is not None]


def kept_module(name: str, source: str, is_package: bool, known: set[str]) -> Module:
    """parse_module's answer, kept between processes by everything it reads (parse_cache.py):
    a book of many chapters has a large library, and an edit changes one module of it."""
    key = "\0".join([name, str(is_package), *sorted(known), source])
    return kept_parse("library-module", key, Path(__file__), lambda: parse_module(name, source, is_package, known))


class Library:
    """Every module of chapter_lib, parsed; answers what a set of imports reaches."""

    def __init__(self, root: Path = LIBRARY):
        files = sorted(root.rglob("*.py"))
        known = {module_name(f, root) for f in files}
        self.modules = {module_name(f, root): kept_module(module_name(f, root), f.read_text(),
                                                          f.name == "__init__.py", known) for f in files}

    def exports(self, module: str, seen: frozenset = frozenset()) -> set[str]:
        m = self.modules.get(module)
        if m is None or module in seen:
            return set()
        if m.all is not None:
            return set(m.all)
        names = {n for s in m.statements for n in s.binds if not n.startswith("_")}
        return names.union(*(self.exports(star, seen | {module}) for star in m.stars))

    def resolve(self, module: str, name: str) -> tuple[str, list[Statement]] | None:
        """(the module that binds name, its statements) as `from module import name` finds it."""
        m = self.modules.get(module)
        if m is None:
            return None
        if m.binding(name):
            return module, m.binding(name)
        for star in reversed(m.stars):  # the last star import wins, as in Python
            if name in self.exports(star):
                return self.resolve(star, name)
        return None

    def reached(self, roots: list[tuple[str, str | None]]) -> dict[str, str]:
        """Every statement the roots reach, as {key: digest of its text}; missing names too."""
        found: dict[str, str] = {}
        visited_modules: set[str] = set()
        todo = list(roots)
        while todo:
            module, name = todo.pop()
            if name is WHOLE:
                if module not in self.modules:
                    found[f"{module or PACKAGE} (module)"] = "missing"
                    continue
                if module in visited_modules:
                    continue
                visited_modules.add(module)
                m = self.modules[module]
                todo += [(module, n) for s in m.statements for n in s.binds]
                todo += [(star, WHOLE) for star in m.stars]
                continue
            resolved = self.resolve(module, name)
            if resolved is None:  # only imports get here (loads are followed when they resolve)
                found[f"{module or PACKAGE}.{name}"] = "missing"
                continue
            home, statements = resolved
            for s in statements + self.modules[home].unnamed:
                if s.key in found:
                    continue
                found[s.key] = _digest(s.text)
                if s.target is not None:
                    todo.append(s.target)
                todo += [(home, n) for n in s.loads if self.resolve(home, n) is not None]
        return dict(sorted(found.items()))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def page_roots(code: list[str]) -> list[tuple[str, str | None]]:
    """What a page's code cells import from chapter_lib, as (module, name or WHOLE); kept
    between builds by the cells' text (parse_cache.py: every page is asked on every build)."""
    return kept_parse("page-roots", "\0".join(code) + f"\0{len(code)}", Path(__file__), lambda: _page_roots(code))


def _page_roots(code: list[str]) -> list[tuple[str, str | None]]:
    roots = []
    for source in code:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython syntax (%magic): if it mentions the library, all of it
            if PACKAGE in source:
                roots.append(("", WHOLE))
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                origin = absolute(node.module, 0, "", True)
                if origin is None:
                    continue
                for alias in node.names:
                    roots.append((origin, WHOLE) if alias.name == "*" else (origin, alias.name))
            elif isinstance(node, ast.Import):  # `import chapter_lib.x`: the package and x, whole
                for alias in node.names:
                    origin = absolute(alias.name, 0, "", True)
                    roots += [("", WHOLE), (origin, WHOLE)] if origin is not None else []
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("__import__", "import_module"):
                roots.append(("", WHOLE))
    return roots


def uses(code: list[str], library: Library | None = None) -> dict[str, str]:
    """{definition key: digest} of everything in chapter_lib that the page's code reaches.

    An imported name that is a submodule (``from chapter_lib import chapter15``,
    ``from chapter_lib.exercises import solution_1``) reaches that whole module.
    """
    roots = page_roots(code)
    if not roots:
        return {}
    library = library or Library()
    expanded = []
    for module, name in roots:
        sub = f"{module}.{name}" if module and name else name
        expanded.append((sub, WHOLE) if name is not WHOLE and sub in library.modules else (module, name))
    return library.reached(expanded)
