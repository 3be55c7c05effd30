"""Which pages' stored notebooks a build may leave alone: nothing they are made from changed.

The outputs step (site_build.sync_outputs) writes every page's stored notebook again from its
.md and its outputs, executing the page only when its code or library changed. On a book of
200 pages a prose edit to one page made the step rebuild 200 reader notebooks to find 199 the
same (half of the edit's build: `make bench-chapters`, profiled). Here each page that a build
synced is recorded with the digest of everything its notebook is made from; the next build
leaves a page whose digest is unchanged as it is, and syncs every other page as before.

What a notebook is made from, conservatively (anything here changed: every page syncs again):

* the page: its .md, its stored .ipynb's bytes (a hand edit, a rollback, a merge of shards),
  and whether a failed run of it is kept (runnable_book/pipeline/site_build.py);
* the book: every tool's code (runnable_book/), chapter_lib, _config.yml, _toc.yml, pyproject.toml,
  the bibliography, and the figure numbers of every page (the one thing a page's notebook
  takes from the other pages: a {numref} to another page's figure);
* the environment: Python's version and those of the packages that read and write notebooks.

The record is _build/digests/synced-pages.json, written once the step has synced every page
(a step stopped midway records nothing new, and its pages sync again). ``make outputs
FORCE=1`` syncs (and executes) every page whatever the record says.

`make check` reads the record too (``execute_pages check --skip-synced``): a page whose digest
is the record's has the stored notebook the build wrote from exactly what it is made of now,
which is what the check would make again, so only the other pages are regenerated and compared.
`make test`, a release and CI (a fresh clone has no record) check every page.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import Callable

from runnable_book.common.files import write_atomically
from runnable_book.repository import ROOT, named, tool_code

RECORD = ROOT / "_build" / "digests" / "synced-pages.json"
PACKAGES = ("nbformat", "nbclient", "jupytext", "ipykernel", "markdown-it-py", "mdit-py-plugins", "myst-parser",
            "pybtex", "PyYAML", "pyflakes")


def book_digest() -> str:
    """Everything outside a page that its stored notebook is made from (the module's list)."""
    from runnable_book.pipeline.myst_to_notebook import BIBFILE, figure_numbers

    sha = digest_of_inputs(PACKAGES, [
        *tool_code(), *sorted((ROOT / "chapter_lib").rglob("*.py")),
        ROOT / "_config.yml", ROOT / "_toc.yml", ROOT / "pyproject.toml", *filter(None, [BIBFILE])])
    sha.update(json.dumps(figure_numbers(), sort_keys=True).encode())
    return sha.hexdigest()


def digest_of_inputs(packages: tuple[str, ...], files: list[Path]):
    """A digest (hashlib's, to go on adding to) of what a build step's output is made from:
    Python's version, these packages' versions, and these files, each by name and bytes."""
    sha = hashlib.sha256(sys.version.encode() + b"\0")
    for name in packages:
        try:
            sha.update(f"{name}=={importlib.metadata.version(name)}\0".encode())
        except importlib.metadata.PackageNotFoundError:
            sha.update(f"{name} absent\0".encode())
    for path in files:
        sha.update(named(path).encode() + b"\0" + (path.read_bytes() if path.is_file() else b"(absent)") + b"\0")
    return sha


def page_digest(book: str, md: Path, stored: Path, failed_run: Path) -> str:
    """One page's digest: the book's (book_digest), its .md, its stored notebook, its failed run."""
    sha = hashlib.sha256(f"{book}\0{md.resolve()}\0".encode())
    sha.update(md.read_bytes() + b"\0")
    sha.update(stored.read_bytes() if stored.is_file() else b"(no stored notebook)")
    sha.update(b"\0failed run kept" if failed_run.exists() else b"\0")
    return sha.hexdigest()


def as_synced(pages: list[Path], failed_run: Callable[[Path], Path]) -> set[Path]:
    """The pages whose every input is as the outputs step last synced them (their digest is the
    record's; ``failed_run``: where a page's failed run is kept): their stored notebooks are what
    the step would write again."""
    from runnable_book.pipeline.pages import shown

    before = recorded()
    if not before:
        return set()
    book = book_digest()
    return {md for md in pages
            if before.get(shown(md)) == page_digest(book, md, md.with_suffix(".ipynb"), failed_run(md))}


def recorded() -> dict[str, str]:
    """{page's path: its digest when last synced}; empty when there is no readable record."""
    try:
        record = json.loads(RECORD.read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def record(digests: dict[str, str]) -> None:
    RECORD.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(RECORD, json.dumps(digests, indent=1, sort_keys=True) + "\n")
