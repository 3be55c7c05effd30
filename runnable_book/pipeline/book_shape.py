"""The book's shape, read from _toc.yml and the pages: what the tests count, never a constant.

Pages come from _toc.yml (runnable_book/pipeline/pages.py). The exercises are the ``## Exercise N``
sections of the page that has them, each read with myst-parser's own markdown-it (the
parser the HTML book uses, runnable_book/pipeline/myst_to_notebook.py), so a hint nested in a hint
is found where Sphinx finds it:

* its text, the first paragraph under the heading;
* its start cell, the first code cell (``# Exercise N: start here``);
* its hints, the ``{dropdown} Hint i of n for exercise N`` directives before its solution;
* its worked solution, the hidden (``hide-cell``) code cells after the start cell, the
  first of which is marked ``# @solution N`` (it becomes chapter_lib/exercises/solution_N.py);
* its checks, the ``check_*`` functions its start cell imports (an exercise without a check
  gets "Mark as done" in the page, runnable_book/sphinx_ext/runner/progress.mjs);
* its points, the ``points:`` option of its start cell: what the check's verdict line, the
  grader and the gradebook give for it, and beside them ``weights:``, what some of its check's
  cases weigh (chapter_lib/exercises/points.py is made from both, :func:`declared_points`).

The HTML book hands the exercises to the page's JavaScript as data written from this module
(runnable_book/sphinx_ext/exercises.py), and the print moves the solutions of the sections it names
(runnable_book/pipeline/print_pdf.py): neither reads headings on its own.

Figures are the captioned figures of the notebook pages (numbered as the HTML numbers
them); printed blocks and drawn figures are the outputs the reader's notebooks store.
Adding an exercise, a hint or a figure changes these counts, and every test that counts
follows.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import math
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from keyword import kwlist
from pathlib import Path

import nbformat
from docutils.nodes import make_id

from runnable_book.pipeline.book_text import inline_text
from runnable_book.pipeline.myst_to_notebook import figure_numbers, parser
from runnable_book.pipeline.pages import code_cells, mermaid_sources, notebook_pages, pages_in_toc_order, parsed_page, read_page, shown

EXERCISE_HEADING = re.compile(r"Exercise (\d+)")
HINT_TITLE = re.compile(r"Hint (\d+) of (\d+) for exercise (\d+)")
KEYWORDS = frozenset(kwlist)


@dataclass
class Exercise:
    number: int
    text: str = ""  # its first paragraph, as the page writes it (markup kept)
    plain_text: str = ""  # the same as a reader reads it (code spans without backticks)
    code: list = field(default_factory=list)  # its code cells, in page order
    markdown: str = ""  # its markdown, in page order
    markdown_before_solution: str = ""
    hints: list[tuple[int, int]] = field(default_factory=list)  # (i, n) of "Hint i of n", in order

    @property
    def section_id(self) -> str:
        """Its section's id in the HTML and the print: docutils names a section after its title
        ("exercise-3"); runnable_book/sphinx_ext/exercises.py stops the build if a page says otherwise."""
        return make_id(f"Exercise {self.number}")

    @property
    def start(self):
        return self.code[0] if self.code else None

    @property
    def solution(self) -> list:
        return [c for c in self.code[1:] if "hide-cell" in c.metadata.get("tags", [])]

    @property
    def saved_solution(self):
        """The ``# @solution N`` cell (made into chapter_lib/exercises/solution_N.py), or None."""
        return next((c for c in self.code if c.source.startswith(f"# @solution {self.number}\n")), None)

    @property
    def points(self) -> float | None:
        """What the exercise is worth: its start cell's ``points:`` option (None where it has none)."""
        value = self.start.metadata.get("points") if self.start is not None else None
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"exercise {self.number}: its start cell's `points: {value!r}` should be a positive number")
        return value

    @property
    def weights(self) -> dict[str, float]:
        """Its cases' weights: its start cell's ``weights:`` option beside ``points:``, a case's
        name as its check names it -> a positive number; a case it does not name weighs 1, so an
        exercise without ``weights:`` ({}) shares its points equally among its cases."""
        value = self.start.metadata.get("weights") if self.start is not None else None
        if value is None:
            return {}
        example = "`weights:` then one indented line per case, `  any single mislabeled flag: 2`"
        if not isinstance(value, dict) or not value:
            raise ValueError(f"exercise {self.number}: its start cell's `weights: {value!r}` should map case names "
                             f"to numbers: write {example}")
        if not self.checks:
            raise ValueError(f"exercise {self.number}: its start cell gives `weights:` but imports no check, and "
                             "only a check's cases have weights: remove `weights:`, or import the exercise's check")
        for name, weight in value.items():
            if not isinstance(name, str) or not name.strip() or ": " in name:
                raise ValueError(f"exercise {self.number}: `weights:` names the case {name!r}: name a case as its "
                                 "check does (text; a case whose name holds \": \" cannot be weighed: rename it)")
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) \
                    or weight <= 0:
                raise ValueError(f"exercise {self.number}: `weights:` gives the case {name!r} the weight {weight!r}; "
                                 "a weight is a positive number (every case not named weighs 1)")
        return dict(value)

    @property
    def checks(self) -> list[str]:
        """The reader checks its start cell imports (``check_router``, ...)."""
        if self.start is None:
            return []
        imported = [alias.asname or alias.name for node in ast.walk(ast.parse(self.start.source))
                    if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names]
        return sorted(name for name in imported if name.startswith("check_"))


def pages() -> list[Path]:
    return pages_in_toc_order()


def directives(markdown: str, name: str):
    """Every ``{name}`` directive in markdown, nested ones included, as (argument, content)."""
    for token in parser().parse(markdown):
        if token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
            directive, _, argument = token.info.strip()[1:].partition("}")
            if directive == name:
                yield argument.strip(), token.content
            yield from directives(token.content, name)


def read_exercises(md: Path) -> dict[int, Exercise]:
    """The page's exercises by number, in page order (empty for a page without)."""
    # Read once per content: a test session asked for 15.11's exercises many times while
    # collecting, each time parsing the page again. A copy each time: callers may change theirs.
    text = md.read_text()
    if "Exercise " not in text:  # (a heading's source holds its words as written: no parse needed)
        return {}
    return copy.deepcopy(_exercises_of(md, text))


@lru_cache(maxsize=1024)  # (every page of a book is asked: a small cache missed each time)
def _exercises_of(md: Path, text: str) -> dict[int, Exercise]:
    """read_exercises' work; ``text``, the page as read, is the cache's key (an edited page is read again)."""
    found: dict[int, Exercise] = {}
    current: Exercise | None = None
    for cell in read_page(md).cells:
        if cell.cell_type == "code":
            if current is not None:
                current.code.append(cell)
            continue
        if cell.cell_type != "markdown":
            continue
        tokens = parser().parse(cell.source)
        lines = cell.source.split("\n")
        starts = [0] + [t.map[0] for t, title in zip(tokens, tokens[1:])
                        if t.type == "heading_open" and t.tag == "h2" and EXERCISE_HEADING.fullmatch(title.content)]
        for begin, end in zip(starts, starts[1:] + [len(lines)]):  # the cell, cut at each heading
            chunk = "\n".join(lines[begin:end])
            chunk_tokens = parser().parse(chunk)
            if chunk_tokens and chunk_tokens[0].type == "heading_open" and chunk_tokens[0].tag == "h2" \
                    and (heading := EXERCISE_HEADING.fullmatch(chunk_tokens[1].content)):
                current = found.setdefault(int(heading.group(1)), Exercise(int(heading.group(1))))
                paragraph = next((t for t in chunk_tokens[3:] if t.type == "inline"), None)
                if paragraph is not None:
                    current.text, current.plain_text = paragraph.content, inline_text(paragraph)
            if current is None:
                continue
            current.markdown += chunk + "\n"
            if not current.solution:
                current.markdown_before_solution += chunk + "\n"
                for title, _ in directives(chunk, "dropdown"):
                    hint = HINT_TITLE.fullmatch(title)
                    if hint and int(hint.group(3)) == current.number:
                        current.hints.append((int(hint.group(1)), int(hint.group(2))))
    return found


def exercise_pages() -> list[Path]:
    """The pages with ``## Exercise N`` sections, in the book's order (one in this book; none in
    a book without)."""
    return [md for md in notebook_pages() if read_exercises(md)]


# Each page's exercises are numbered from 1, so each exercise page keeps its worked solutions,
# checks and points in a package of its own: ``chapter_lib.exercises`` unless its front matter
# names another, as every exercise page but one must in a book with several:
#
#     runnable_book:
#       exercises: chapter_lib.chapter16_exercises
DEFAULT_EXERCISES_PACKAGE = "chapter_lib.exercises"
FRONT_MATTER_KEY = "runnable_book"  # (the tool's own key in a page's front matter)
PACKAGE_NAME = re.compile(r"chapter_lib(?:\.[A-Za-z_]\w*)+")


def exercises_package(md: Path) -> str:
    """The package of ``chapter_lib`` that keeps this page's exercises (``chapter_lib.exercises``,
    unless its front matter names another). BookProblem, naming the page, for a name that is
    not a package of the library's own or that is a chapter's module."""
    declared = parsed_page(md).metadata.get(FRONT_MATTER_KEY, {})  # (read, never changed)
    name = declared.get("exercises", DEFAULT_EXERCISES_PACKAGE) if isinstance(declared, dict) else None
    if not isinstance(name, str) or not PACKAGE_NAME.fullmatch(name) \
            or any(part in KEYWORDS for part in name.split(".")):
        raise BookProblem(f"{shown(md)}: its front matter's `{FRONT_MATTER_KEY}: {{exercises: ...}}` is {name!r}: "
                          f"it names the package of chapter_lib that keeps the page's exercises, "
                          f"such as chapter_lib.chapter16_exercises")
    if re.fullmatch(r"chapter_lib\.chapter\d+", name):
        raise BookProblem(f"{shown(md)}: its exercises cannot live in {name}, a chapter's own module (its "
                          f"`# @save` cells): name another package, such as {name}_exercises")
    return name


def exercise_packages() -> dict[Path, str]:
    """Each exercise page's package, in the book's order. BookProblem when two pages share one
    (their exercise numbers would meet in it)."""
    packages = {md: exercises_package(md) for md in exercise_pages()}
    by_package: dict[str, list[Path]] = {}
    for md, package in packages.items():
        by_package.setdefault(package, []).append(md)
    for package, shared in by_package.items():
        if len(shared) > 1:
            default = " (the package of a page that names none)" if package == DEFAULT_EXERCISES_PACKAGE else ""
            raise BookProblem(f"{' and '.join(shown(md) for md in shared)} all keep their exercises in {package}{default}, "
                              f"and each page numbers its exercises from 1: name a package of its own in the front "
                              f"matter of all of them but one, as `{FRONT_MATTER_KEY}:` then `  exercises: "
                              f"chapter_lib.<name>`")
    return packages


def exercise_page_of(package: str) -> Path:
    """The page whose exercises ``package`` keeps; BookProblem when no page's are."""
    for md, name in exercise_packages().items():
        if name == package:
            return md
    raise BookProblem(f"no page keeps its exercises in {package}; the exercise pages: "
                      + (", ".join(f"{shown(md)} ({name})" for md, name in exercise_packages().items()) or "none"))


@cache
def exercises_page() -> Path:
    """The book's one exercise page. BookProblem in a book of several, which each caller of
    this must be told apart (``PAGE=``, runnable_book/grade/), or of none."""
    pages_ = exercise_pages()
    if len(pages_) != 1:
        raise BookProblem(f"the book has {len(pages_)} exercise pages ({', '.join(shown(md) for md in pages_) or 'none'}): "
                          f"say which")
    return pages_[0]


def exercises(md: Path | None = None) -> dict[int, Exercise]:
    """The exercises of page ``md`` (default: the book's one exercise page), by number."""
    return read_exercises(md or exercises_page())


def exercise_numbers(md: Path | None = None) -> list[int]:
    return list(exercises(md))


def checks(md: Path | None = None) -> dict[int, list[str]]:
    """Exercise number -> its reader checks, for the exercises of page ``md`` that have one."""
    return {n: e.checks for n, e in exercises(md).items() if e.checks}


def hidden_cells(md: Path) -> list:
    """A page's folded code cells (worked solutions): ``hide-cell``."""
    return [c for c in read_page(md).cells if c.cell_type == "code" and "hide-cell" in c.metadata.get("tags", [])]


def figures() -> dict[str, str]:
    """Every captioned figure of the book: label -> "Figure 15.N", in reading order."""
    return figure_numbers()


def mermaid_diagrams() -> int:
    return len(mermaid_sources())


def citations() -> int:
    """Works cited, counted per citation ({cite:p}`a,b` cites two), in the notebook pages' text
    and figure captions: each becomes a link to the page's References."""
    texts = []
    for md in notebook_pages():
        for cell in read_page(md).cells:
            if cell.cell_type == "markdown":
                texts.append(cell.source)
                texts += [t.attrs["caption"] for t in parser().parse(cell.source) if "caption" in t.attrs]
            else:
                texts.append(cell.metadata.get("mystnb", {}).get("figure", {}).get("caption", ""))
    roles = [child for text in texts for token in parser().parse(text) if token.type == "inline"
             for child in token.children or [] if child.type == "myst_role"]
    return sum(len(role.content.split(",")) for role in roles if role.meta["name"] in ("cite:p", "cite:t"))


def stored_outputs(md: Path, kind: str) -> list:
    """A page's stored outputs of one kind: "printed" (streams) or "figure" (an image)."""
    notebook = nbformat.read(md.with_suffix(".ipynb"), as_version=4)
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    if kind == "printed":
        return [o for o in outputs if o.output_type == "stream"]
    return [o for o in outputs if any(mime.startswith("image/") for mime in o.get("data", {}))]


def figure_cells(md: Path) -> list:
    """A page's code cells that draw a captioned figure (``mystnb.figure``)."""
    return [c for c in read_page(md).cells if c.cell_type == "code" and "figure" in c.metadata.get("mystnb", {})]


def summary() -> str:
    """One line, for a person (and the scratch-exercise test): the shape in numbers."""
    numbers = exercise_numbers()
    every = exercises()
    return (f"{len(pages())} pages ({len(notebook_pages())} notebooks), {len(numbers)} exercises "
            f"({sum(len(e.hints) for e in every.values())} hints, {len(checks())} with a check, "
            f"{sum(e.saved_solution is not None for e in every.values())} worked solutions), "
            f"{len(figures())} figures, "
            f"{sum(len(stored_outputs(md, 'printed')) for md in notebook_pages())} printed blocks")


if __name__ == "__main__":
    print(summary())


# A checked exercise's start cell ends with the call its reader makes when ready, on their own
# functions: `# When ready: check_router(my_router)`. The build (exercise_contract.py) and the
# grader (runnable_book/grade/book.py) read it here, one way.
WHEN_READY = re.compile(r"^#\s*When ready:\s*(check_\w+\(.*\))\s*$", re.M)


class BookProblem(Exception):
    """The book does not say what the grader needs (a checked exercise without its call)."""


def when_ready(number: int, start: str, checks: list[str]) -> tuple[str, tuple[str, ...]]:
    """The check and the student's functions that a start cell's ``# When ready:`` line names."""
    calls = WHEN_READY.findall(start)
    if len(calls) != 1:
        raise BookProblem(f"exercise {number}: its start cell imports {', '.join(checks)} but has "
                          f"{'no' if not calls else len(calls)} `# When ready: check_...(my_...)` line; "
                          "the grader calls the check on the functions that line names")
    call = ast.parse(calls[0], mode="eval").body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in checks
            and call.args and all(isinstance(a, ast.Name) for a in call.args) and not call.keywords):
        raise BookProblem(f"exercise {number}: `# When ready: {calls[0]}` should call one of "
                          f"{', '.join(checks)} on the start cell's function names")
    names = tuple(a.id for a in call.args)
    defined = {n.name for n in ast.parse(start).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not set(names) <= defined:
        raise BookProblem(f"exercise {number}: the start cell names {', '.join(sorted(set(names) - defined))} "
                          "for its check but does not define it")
    return call.func.id, names


# The start cell's ``weights:`` name cases of its check; each name must be one the check prints.
NOT_WRITTEN = "the function is not written yet"


def _not_written(*args, **kwargs):
    raise NotImplementedError(NOT_WRITTEN)


def start_cell_where(md: Path, exercise: Exercise) -> str:
    """Where an exercise's start cell is, for a message: the page, the code cell and its line."""
    cell = next((c for c in code_cells(md) if exercise.start is not None and c.source == exercise.start.source), None)
    return cell.where if cell is not None else f"{shown(md)}, exercise {exercise.number}'s start cell"


def declared_points(md: Path) -> tuple[dict[int, float], dict[int, dict[str, float]]]:
    """Each exercise's ``points:`` and its cases' ``weights:``, as the page's start cells declare them
    (what `make lib` writes into chapter_lib/exercises/points.py). A declaration that does not read
    raises BookProblem naming the page, the start cell and its line, and the fix."""
    points, weights = {}, {}
    for number, exercise in read_exercises(md).items():
        try:
            if exercise.points is not None:
                points[number] = exercise.points
            if exercise.weights:
                weights[number] = exercise.weights
        except ValueError as error:
            raise BookProblem(f"{start_cell_where(md, exercise)}: {error}") from None
    return points, weights


def case_lines(check: str, arity: int, package: str = DEFAULT_EXERCISES_PACKAGE) -> list[str]:
    """What ``check`` (of the exercise ``package`` of chapter_lib, imported in this Python) prints on
    functions not written yet: its verdict, then one line per case, every case named (its
    harness's ``report``)."""
    import importlib

    library = importlib.import_module(package)

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        getattr(library, check)(*[_not_written] * arity)
    return printed.getvalue().splitlines()


def unknown_weights(md: Path) -> list[str]:
    """The ``weights:`` of the page's start cells that name no case of their check (or more than one),
    each said with the page, the cell, its line and the check's cases to choose from. Runs each
    weighted exercise's check, as chapter_lib has it, on functions not written yet."""
    import importlib

    package = exercises_package(md)
    problems = []
    for number, exercise in read_exercises(md).items():
        if not exercise.weights:
            continue
        case_name = importlib.import_module(f"{package}.harness").case_name  # (only a page that weighs cases)
        check, names = when_ready(number, exercise.start.source, exercise.checks)
        try:
            cases = [name for name in map(case_name, case_lines(check, len(names), package)[1:]) if name is not None]
        except Exception as error:  # (a check that stops before its verdict names no case)
            cases, stopped = [], f"; it raised {type(error).__name__}: {error}"
        else:
            stopped = "" if cases else "; it printed no case"
        if stopped:
            problems.append(f"{start_cell_where(md, exercise)}: exercise {number}'s `weights:` could not be read "
                            f"against the cases of {check}, run on functions not written yet{stopped}")
            continue
        for name in exercise.weights:
            if cases.count(name) != 1:
                said = "names no case" if name not in cases else f"names {cases.count(name)} cases"
                problems.append(f"{start_cell_where(md, exercise)}: exercise {number}'s `weights:` {said} of {check}: "
                                f"{name!r}. Name one of its cases as the check prints it: {'; '.join(cases)}")
    return problems
