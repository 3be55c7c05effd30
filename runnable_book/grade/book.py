"""What the book says the grader grades (ours): read from the exercise page, never a constant.

The exercises are the ``## Exercise N`` sections of the exercise page
(runnable_book/pipeline/book_shape.py). An exercise is *checked* when its start cell imports a
``check_*`` function (the page then marks it done when the reader's check passes); the
start cell's ``# When ready: check_x(my_a, my_b)`` line names the student's functions the
check is called on. Every other exercise is *open*: the report shows the student's cells.

The checks are the grader's own: imported here, in the grader's Python, from the
repository's ``chapter_lib`` (the sandbox gets the same files, runnable_book/grade/sandbox.py).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from runnable_book.pipeline import book_shape
from runnable_book.pipeline.book_shape import BookProblem, when_ready  # noqa: F401 (the grader's names for them)
from runnable_book.repository import ROOT

LIBRARY = ROOT / "chapter_lib"


@dataclass(frozen=True)
class CheckedExercise:
    number: int
    check: str  # the check's name, as the start cell imports it: check_router
    module: str  # the module the grader's copy comes from: chapter_lib.exercises.check_6
    args: tuple[str, ...]  # the student's functions, as the start cell names them: ("my_router",)
    start: str  # the start cell's code, as the book has it
    points: float | None = None  # what it is worth (its start cell's ``points:``)

    @property
    def call(self) -> str:
        return f"{self.check}({', '.join(self.args)})"

    def grader_check(self):
        """The grader's own copy of the check (never the sandbox's)."""
        return getattr(importlib.import_module(self.module), self.check)

    def harness(self):
        """The checks' harness of the exercise's own package (what its cases weigh is its page's)."""
        return importlib.import_module(self.module.rpartition(".")[0] + ".harness")

    def source(self) -> tuple[str, str]:
        """(file name, text) of the check's module, from the grader's chapter_lib."""
        path = Path(inspect.getsourcefile(importlib.import_module(self.module)))
        return f"/grader/lib/{path.relative_to(LIBRARY.parent).as_posix()}", path.read_text(encoding="utf-8")

    def stub_functions(self) -> dict[str, str]:
        """Each named function's definition in the start cell (its stub), as source text."""
        found = {}
        tree = ast.parse(self.start)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in self.args:
                found[node.name] = ast.unparse(node)
        return found


@dataclass(frozen=True)
class Book:
    page: Path
    package: str  # the package of chapter_lib that keeps the page's exercises: chapter_lib.exercises
    notebook: Path  # the reader's notebook of the page: what students download and work
    exercises: tuple[int, ...]
    checked: tuple[CheckedExercise, ...]
    open: tuple[int, ...]
    cells: tuple[str, ...] = field(repr=False)  # the notebook's code cells, normalised, in order
    install: str = field(repr=False)  # its install cell, normalised
    solution_cells: frozenset[str] = field(repr=False, default=frozenset())  # worked solutions' cells
    points: dict = field(default_factory=dict)  # exercise number -> what it is worth (checked and open)

    @property
    def numbers(self) -> dict[int, CheckedExercise]:
        return {e.number: e for e in self.checked}


def normalised(source: str) -> str:
    """A cell's code as compared with the book's: line ends and trailing blanks do not count."""
    return "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").split("\n")).strip("\n")


def graded_page(page: str | Path | None = None) -> Path:
    """The exercise page to grade: ``page`` (PAGE=: its path, as book/15_11_exercises.md, or its
    file's name without .md), or the book's one exercise page. BookProblem, naming the exercise
    pages, when ``page`` is none of them or the book has several and none is named."""
    pages = book_shape.exercise_pages()
    if page is None or str(page) == "":
        return book_shape.exercises_page() if len(pages) == 1 else _no_page(
            f"the book has {len(pages)} exercise pages: name the one to grade with PAGE=", pages)
    wanted = Path(page)
    for md in pages:
        if md in (wanted, ROOT / wanted, (ROOT / wanted).with_suffix(".md")) or md.stem == str(page):
            return md
    return _no_page(f"PAGE={page} is not an exercise page", pages)


def _no_page(said: str, pages: list[Path]) -> Path:
    names = ", ".join(md.relative_to(ROOT).as_posix() for md in pages) or "none"
    raise BookProblem(f"{said} (the book's exercise pages: {names})")


@cache
def load(page: str | Path | None = None) -> Book:
    """The exercises the grader grades: those of ``page`` (graded_page)."""
    page = graded_page(page)
    exercises = book_shape.exercises(page)
    package = book_shape.exercises_package(page)
    checked, open_ = [], []
    library_exercises = importlib.import_module(package)

    for number, exercise in exercises.items():
        if not exercise.checks:
            open_.append(number)
            continue
        check, args = when_ready(number, exercise.start.source, exercise.checks)
        module = getattr(library_exercises, check).__module__
        checked.append(CheckedExercise(number, check, module, args, exercise.start.source, exercise.points))
    notebook = page.with_suffix(".ipynb")
    data = json.loads(notebook.read_text(encoding="utf-8"))
    code = [c for c in data["cells"] if c["cell_type"] == "code"]
    source = lambda c: "".join(c["source"]) if isinstance(c["source"], list) else c["source"]  # noqa: E731
    install = next(normalised(source(c)) for c in code if "install" in c.get("metadata", {}).get("tags", []))
    solutions = frozenset(normalised(source(c)) for c in code if "hide-cell" in c.get("metadata", {}).get("tags", []))
    return Book(page, package, notebook, tuple(exercises), tuple(checked), tuple(open_),
                tuple(normalised(source(c)) for c in code), install, solutions,
                {n: e.points for n, e in exercises.items() if e.points is not None})


def library_files() -> dict[str, str]:
    """The grader's chapter_lib, file by file: what the sandbox imports in place of its own."""
    return {path.relative_to(LIBRARY.parent).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(LIBRARY.rglob("*.py")) if "__pycache__" not in path.parts}


def digest(page: str | Path | None = None) -> str:
    """What the grades depend on in the repository: the grader's chapter_lib and the exercise page
    graded. Shards graded from different books are not merged (runnable_book/grade/shards.py)."""
    import hashlib

    text = json.dumps([library_files(), load(page).page.read_text(encoding="utf-8")], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
