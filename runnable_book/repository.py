"""Where the tool works and where it lives: two roots, one folder in this repository.

ROOT is the book's: its pages, _config.yml, _toc.yml, chapter_lib, _build (every step reads and
writes there). TOOL is the tool's own files (this package: its Python, the runner's scripts,
the grader's box), wherever the package is: a folder of the book, as here, or installed.
A path to the tool's files is named from TOOL, never from ROOT, so that an installed tool
works on any book.

The book is, in this order: the folder RUNNABLE_BOOK_ROOT names; the folder this package sits
in, when it is a book's (it has a _toc.yml: this repository and every copy of it the tests
make, each running its own tool); else the nearest folder from the working directory up with
a _config.yml and a _toc.yml (an installed tool, run from inside the book); else the working
directory.
"""

import os
from pathlib import Path

TOOL = Path(__file__).resolve().parent  # runnable_book/
BOOK_FILES = ("_config.yml", "_toc.yml")


def book_root() -> Path:
    named = os.environ.get("RUNNABLE_BOOK_ROOT")
    if named:
        return Path(named).resolve()
    if (TOOL.parent / "_toc.yml").is_file():
        return TOOL.parent
    here = Path.cwd().resolve()
    return next((folder for folder in (here, *here.parents)
                 if all((folder / name).is_file() for name in BOOK_FILES)), here)


ROOT = book_root()


def named(path: Path, root: Path | None = None) -> str:
    """A file's name in digests and messages, the same wherever the tool is: the tool's files as
    ``runnable_book/…`` (their path in a book that holds the tool), the book's from its root."""
    root = root or ROOT
    path = path if path.is_absolute() else root / path
    if path.is_relative_to(TOOL):
        return (Path(TOOL.name) / path.relative_to(TOOL)).as_posix()
    return path.relative_to(root).as_posix()


def tool_code(suffixes: tuple[str, ...] = (".py",)) -> list[Path]:
    """The tool's own code, in order: its files of these suffixes (its Python by default), no
    bytecode. What each record of a step's inputs digests as "the tool"."""
    return sorted(path for path in TOOL.rglob("*") if path.suffix in suffixes and path.is_file()
                  and "__pycache__" not in path.parts)
