"""A submission as the grader reads it (ours): its code cells, each placed in its exercise.

Read in the grader's own process as data only (JSON, never executed here), and defensively:
a file that is not a notebook, too large, a symbolic link, or a notebook whose cells are not
what nbformat says they are, is a :class:`Submission` with a ``problem`` and no cells, which
the report shows as one ``error`` row naming why.

Submissions come in two shapes, both nbformat 4 built from the book's reader notebook:
downloaded from the page ("Download as notebook", runnable_book/sphinx_ext/runner/notebook.mjs: the
reader's code in the book's cells, their added cells after the cell they were added below)
and the reader notebook worked in JupyterLab or Colab. In both, an exercise's cells follow
its ``## Exercise N`` heading (or its start cell, ``# Exercise N: start here``).

Each code cell is one of:

=============  ================================================================================
``install``    the notebook's first cell, which installs chapter_lib where it is missing: the
               grader satisfies it (the sandbox has the grader's chapter_lib) and never runs it
``book``       a cell of the book, unchanged (a start cell, a worked solution's cell)
``edited``     a cell of the book the student changed
``added``      a cell the student added
=============  ================================================================================
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from runnable_book.grade.book import Book, normalised
from runnable_book.grade.intake import LINK, MAX_BYTES, Handin, too_large

HEADING = re.compile(r"^\s{0,3}#{1,6}\s+Exercise\s+(\d+)\s*$", re.M)
START = re.compile(r"^#\s*Exercise\s+(\d+):\s*start here", re.I)
OUTPUT_LIMIT = 6000  # characters of a saved output shown in the report


@dataclass
class Cell:
    position: int  # 1-based among the notebook's code cells: "cell 5" in tracebacks
    source: str
    exercise: int | None  # the exercise whose section it is in (None: before the first)
    kind: str  # install, book, edited, added
    saved: list = field(default_factory=list)  # the outputs the notebook was saved with: (kind, text)

    @property
    def filename(self) -> str:
        return f"cell {self.position}"

    @property
    def students(self) -> bool:
        return self.kind in ("edited", "added")


@dataclass
class Submission:
    name: str  # the path inside the submissions folder
    path: Path
    cells: list[Cell] = field(default_factory=list)
    problem: str | None = None  # why it cannot be graded
    data: dict | None = field(default=None, repr=False)  # the notebook as read (nbformat 4 JSON), for its feedback

    def cells_of(self, exercise: int) -> list[Cell]:
        return [c for c in self.cells if c.exercise == exercise]


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    raise ValueError("a cell's source is neither text nor a list of lines")


def _saved_outputs(cell) -> list:
    """A code cell's saved outputs as (kind, content): text for text, base64 for a PNG."""
    shown = []
    for output in cell.get("outputs") or []:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        try:
            if kind == "stream":
                shown.append(("text", _text(output.get("text", ""))[:OUTPUT_LIMIT]))
            elif kind == "error":
                shown.append(("error", f"{output.get('ename', '')}: {output.get('evalue', '')}"[:OUTPUT_LIMIT]))
            elif kind in ("execute_result", "display_data"):
                data = output.get("data") or {}
                png = data.get("image/png")
                if isinstance(png, (str, list)):
                    raw = _text(png).replace("\n", "")
                    base64.b64decode(raw, validate=True)  # only real base64 reaches the page
                    shown.append(("png", raw))
                elif "text/plain" in data:
                    shown.append(("text", _text(data["text/plain"])[:OUTPUT_LIMIT]))
        except (ValueError, binascii.Error):
            continue
    return shown


def read(handin: Handin, book: Book) -> Submission:
    """The notebook a student handed in, as data (runnable_book/grade/intake.py found it)."""
    path = handin.path
    submission = Submission(handin.name, path)
    try:
        if handin.problem:
            raise ValueError(handin.problem)
        if path.is_symlink():
            raise ValueError(LINK)
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ValueError(too_large(size))
        raw = path.read_bytes()
        try:
            data = json.loads(raw.decode("utf-8-sig"))
        except UnicodeDecodeError:
            raise ValueError("it is not text (a notebook is JSON)") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"it is not a notebook: not valid JSON ({error.msg}, line {error.lineno})") from None
        except RecursionError:
            raise ValueError("it is not a notebook: JSON nested too deep") from None
        if not isinstance(data, dict):
            raise ValueError("it is not a notebook: its JSON is not an object")
        if data.get("nbformat") == 3 or "worksheets" in data:
            import nbformat

            data = json.loads(nbformat.writes(nbformat.reads(raw.decode("utf-8-sig"), as_version=4)))
        if data.get("nbformat") != 4 or not isinstance(data.get("cells"), list):
            raise ValueError(f"it is not a notebook the grader can read (nbformat {data.get('nbformat')!r}; "
                             "nbformat 4 has a list of cells)")
        submission.cells = _cells(data["cells"], book)
        if not submission.cells:
            raise ValueError("it has no code cells")
        submission.data = data
    except (OSError, ValueError) as error:
        submission.problem = str(error)
        submission.cells = []
    except Exception as error:  # anything else a malformed file can make a parser raise
        submission.problem = f"it could not be read ({type(error).__name__}: {str(error)[:200]})"
        submission.cells = []
    return submission


def _cells(raw_cells, book: Book) -> list[Cell]:
    cells, exercise, position = [], None, 0
    book_cells = set(book.cells)
    for raw in raw_cells:
        if not isinstance(raw, dict):
            raise ValueError("it is not a notebook: a cell is not an object")
        kind = raw.get("cell_type")
        source = _text(raw.get("source", ""))
        if kind == "markdown":
            headings = HEADING.findall(source)
            if headings:
                exercise = int(headings[-1])
            continue
        if kind != "code":
            continue
        position += 1
        started = START.match(source.lstrip())
        if started:
            exercise = int(started.group(1))
        metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
        tags = metadata.get("tags") if isinstance(metadata.get("tags"), list) else []
        text = normalised(source)
        if "install" in tags or text == book.install:
            role = "install"
        elif text in book_cells:
            role = "book"
        elif str(raw.get("id", "")).startswith("added-in-browser") or not raw.get("id"):
            role = "added"
        else:
            role = "edited" if _is_book_id(raw.get("id")) else "added"
        cells.append(Cell(position, source, exercise if role != "install" else None, role, _saved_outputs(raw)))
    return cells


def _is_book_id(cell_id) -> bool:
    """Whether a cell id is one the book's notebook gives its cells (``cell-07``)."""
    return isinstance(cell_id, str) and re.fullmatch(r"cell-\d+", cell_id) is not None
