"""A generated class (ours): notebooks as students hand them in, for the tests and ``make bench-grade``.

Every notebook starts from the book's reader notebook (what "Download as notebook" and the
launch buttons start from) and adds cells below an exercise's start cell, as a student does:
in the page (cells ``added-in-browser-N``) or in JupyterLab (cells with ids of their own).

What a student's answer to a checked exercise can be comes from the book, never a constant:

* ``right``: the worked solution's functions, which the worked solution's own call of the
  check passes (the first ``check_x(...)`` call in its cells);
* ``wrong``: the functions the worked solution shows the check failing on (its later calls),
  and functions that answer nothing (``None``);
* ``untouched``: the start cell's stubs, as the book has them;
* ``endless``: a function that never returns; ``raises``: one that raises on every call.
"""

from __future__ import annotations

import ast
import copy
import json
import random
from pathlib import Path

from runnable_book.grade.book import Book, load
from runnable_book.pipeline import book_shape

def imports(book: Book) -> str:
    """A student's cell's first lines: the library, and the page's exercise package."""
    return f"from chapter_lib import *\nfrom {book.package} import *\n"


def book_calls(number: int, check: str, page=None) -> list[list[str]]:
    """The argument names of each call of ``check`` in the worked solution's cells of the exercise
    page (default: the book's one), in order."""
    calls = []
    for cell in book_shape.exercises(page)[number].solution:
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == check:
                calls.append([a.id for a in node.args if isinstance(a, ast.Name)])
    return calls


def answers(book: Book) -> dict[int, dict[str, list[str]]]:
    """For each checked exercise, kinds of answer -> the code of a student's cell giving it."""
    found = {}
    first = imports(book)  # (every cell below begins with them)
    for exercise in book.checked:
        calls = book_calls(exercise.number, exercise.check, book.page)
        right, *wrong = calls
        params = {name: parameters(exercise.start, name) for name in exercise.args}
        assign = lambda values: first + "".join(f"{n} = {v}\n" for n, v in zip(exercise.args, values))  # noqa: E731
        nothing = "".join(f"\n\ndef {n}({params[n]}):\n    return None\n" for n in exercise.args)
        endless = "".join(f"\n\ndef {n}({params[n]}):\n    while True:\n        pass\n" for n in exercise.args)
        raises = "".join(f"\n\ndef {n}({params[n]}):\n    raise ValueError('not finished')\n" for n in exercise.args)
        found[exercise.number] = {
            "right": [assign(right)],
            "wrong": [assign(w) for w in wrong] + [first + nothing],
            "endless": [first + endless],
            "raises": [first + raises],
        }
    return found


def parameters(start: str, name: str) -> str:
    for node in ast.parse(start).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.unparse(node.args)
    return "*args, **kwargs"


def reader_notebook(book: Book) -> dict:
    return json.loads(book.notebook.read_text(encoding="utf-8"))


def notebook_with(book: Book, added: dict[int, list[str]], style: str = "page", extra_first: list[str] = ()) -> dict:
    """The reader notebook with ``added[n]`` cells after exercise n's start cell (and
    ``extra_first`` after the install cell). ``style``: "page" (Download as notebook) or "lab"."""
    nb = copy.deepcopy(reader_notebook(book))
    cells, count = [], 0

    def new(source):
        nonlocal count
        count += 1
        cell_id = f"added-in-browser-{count}" if style == "page" else f"{random.Random(count).getrandbits(48):012x}"
        return {"cell_type": "code", "id": cell_id, "metadata": {}, "execution_count": None, "outputs": [],
                "source": source}

    for cell in nb["cells"]:
        cells.append(cell)
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "install" in cell.get("metadata", {}).get("tags", []):
            cells.extend(new(s) for s in extra_first)
        for number, sources in added.items():
            if cell["cell_type"] == "code" and source.startswith(f"# Exercise {number}: start here"):
                cells.extend(new(s) for s in sources)
    nb["cells"] = cells
    return nb


def write(path: Path, nb: dict):
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def make_class(folder: Path, size: int = 40, seed: int = 15) -> dict[str, dict[int, str]]:
    """``size`` notebooks in ``folder``: mostly right or partly right, some wrong, endless,
    broken (raising, a syntax error, a corrupt file) and untouched. Returns, for each file,
    the kind of answer given to each checked exercise ("unreadable" for the corrupt ones)."""
    book = load()
    kinds = answers(book)
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    plan = {}
    profiles = (["right"] * 14 + ["mixed"] * 12 + ["wrong"] * 5 + ["endless"] * 3 + ["broken"] * 3
                + ["untouched"] * 2 + ["corrupt"] * 1)
    for i in range(size):
        profile = profiles[i % len(profiles)]
        name = f"student-{i + 1:02d}-{profile}.ipynb"
        if profile == "corrupt":
            (folder / name).write_text('{"cells": [ {"cell_type": "code", "source": "print(1)"', encoding="utf-8")
            plan[name] = {e.number: "unreadable" for e in book.checked}
            continue
        given, added = {}, {}
        endless_one = rng.choice(book.checked).number
        for exercise in book.checked:
            n = exercise.number
            if profile == "right":
                kind = "right"
            elif profile == "mixed":
                kind = rng.choice(["right", "right", "wrong", "untouched"])
            elif profile == "wrong":
                kind = "wrong"
            elif profile == "endless":
                kind = "endless" if n == endless_one else "right"
            elif profile == "broken":
                kind = rng.choice(["raises", "right"])
            else:
                kind = "untouched"
            given[n] = kind
            if kind != "untouched":
                added[n] = [rng.choice(kinds[n][kind])]
        if profile == "broken":
            added.setdefault(book.open[0], []).append("this is not python (\n")
        write(folder / name, notebook_with(book, added, style=rng.choice(["page", "lab"])))
        plan[name] = given
    return plan


def one_exercise_notebook(book: Book, number: int, cells: list[str], style: str = "lab") -> dict:
    """The reader notebook with ``cells`` added after exercise ``number``'s start cell, and every
    other exercise's code deleted, worked solutions included (a student may delete cells): a
    submission that costs the sandbox only that exercise's time."""
    nb = notebook_with(book, {number: cells}, style=style)
    kept, exercise = [], None
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown" and source.lstrip().startswith("## Exercise "):
            exercise = int(source.split()[2])
        if cell["cell_type"] != "code" or exercise == number or "install" in cell["metadata"].get("tags", []):
            kept.append(cell)
    nb["cells"] = [c for c in kept if "hide-cell" not in c.get("metadata", {}).get("tags", [])]
    return nb
