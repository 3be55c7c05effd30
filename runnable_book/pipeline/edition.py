"""Which build of the book this is: its edition (chapter_lib's version, the commit, its date).

    python -m runnable_book.pipeline.edition     # the working tree's edition, as the build records it

An edition is what a reader needs to find the exact book they read again: ``chapter_lib``'s
version (pyproject.toml), the commit the book was built from and that commit's date (UTC).
Every page's footer, the PDF's title page and each published reader's notebook name it
(runnable_book/sphinx_ext/edition_on_pages.py), and the notebook installs that edition's library
(runnable_book/pipeline/reader_notebook.py).

A build from a working tree with uncommitted changes has no commit yet: it is a preview,
said so, naming the commit it follows; so is a build outside a git checkout (a tarball, the
tests' scratch copies). Neither is dated: the clock would make two builds of the same
sources differ. The build graph records the edition in ``_build/edition.json`` (its
``edition`` step, rewritten only when it changes) after every step that can change tracked
files, so an incremental build and a clean one of the same commit name the same edition, and
the pages and the PDF are made again exactly when it changes.

Git is asked with ``safe.directory`` set to the checkout: in the publishing workflow's
container the checkout belongs to another user, and git would otherwise refuse to answer.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import subprocess
import sys
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

from packaging.version import Version

from runnable_book.repository import ROOT

RECORD = ROOT / "_build" / "edition.json"
SHORT = 12  # hex digits of a commit named in print: unambiguous for any repository this size


@dataclass(frozen=True)
class Edition:
    version: str  # chapter_lib's version, normalised (PEP 440) as the wheel's metadata has it
    commit: str | None = None  # the commit built; None: no commit holds this build
    date: str | None = None  # that commit's date, YYYY-MM-DD in UTC
    after: str | None = None  # uncommitted changes: the commit they follow
    git: bool = True  # False: not built from a git checkout

    @property
    def line(self) -> str:
        """The words every page, the PDF and each notebook name the edition with."""
        if self.commit:
            return f"Edition {self.version} · {self.date} · commit {self.commit[:SHORT]}"
        if self.after:
            return f"Edition {self.version} · a preview with uncommitted changes, after commit {self.after[:SHORT]}"
        return f"Edition {self.version} · a preview, not built from a git checkout"

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Edition:
        return cls(**json.loads(text))


# ---- answers held while a step reads many pages -------------------------------------------
#
# A step that writes every page's notebook asks each page for the library's digests and the
# version: about three times a page, each reading every module and pyproject.toml again (a
# tenth of a prose edit's build on a book of 200 pages: `make bench-chapters`, profiled).
# Inside `library_held()` each is worked out once per root; the step changes neither the
# library nor pyproject.toml while it runs, and outside the block every call reads afresh.
_HELD: dict | None = None


@contextlib.contextmanager
def library_held():
    """Within the block, the library's digests, version and released tag are read once per root."""
    global _HELD
    outer, _HELD = _HELD, ({} if _HELD is None else _HELD)
    try:
        yield
    finally:
        _HELD = outer


def held(key: tuple, compute):
    """``compute()``, worked out once per ``key`` inside `library_held()` (afresh outside it):
    for an answer made from the library and the edition alone, as a page's install cell is."""
    if _HELD is None:
        return compute()
    if key not in _HELD:
        _HELD[key] = compute()
    return _HELD[key]


def _held(function):
    @functools.wraps(function)
    def answer(root: Path = ROOT):
        return held((function.__name__, Path(root).resolve()), lambda: function(root))
    return answer


@_held
def project(root: Path = ROOT) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))


@_held
def version(root: Path = ROOT) -> str:
    """chapter_lib's version as pip and the wheel's file name write it (``15.0.1.dev0``)."""
    return str(Version(project(root)["project"]["version"]))


def git(root: Path, *arguments: str) -> str | None:
    """git's answer in ``root``'s own checkout (None: not a checkout, or no git)."""
    try:
        done = subprocess.run(["git", "-c", f"safe.directory={root}", *arguments], cwd=root,
                              capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def in_a_checkout(root: Path) -> bool:
    """``root`` is the top of a git checkout (not a folder inside someone else's repository)."""
    top = git(root, "rev-parse", "--show-toplevel")
    return top is not None and Path(top).resolve() == root.resolve()


def uncommitted(root: Path) -> list[str]:
    """What `git status` lists (tracked changes and untracked files not ignored)."""
    listing = git(root, "status", "--porcelain")
    return listing.splitlines() if listing else []


def current(root: Path = ROOT) -> Edition:
    """The edition of ``root``'s working tree as it is now."""
    number = version(root)
    if not in_a_checkout(root):
        return Edition(number, git=False)
    head = git(root, "rev-parse", "HEAD")
    if head is None:  # a repository with no commit yet
        return Edition(number)
    if uncommitted(root):
        return Edition(number, after=head)
    epoch = int(git(root, "log", "-1", "--format=%ct", head) or 0)
    return Edition(number, commit=head, date=time.strftime("%Y-%m-%d", time.gmtime(epoch)))


def recorded(root: Path = ROOT) -> Edition:
    """The edition the build graph recorded (what the site and the PDF show), or, before any
    build recorded one (a Sphinx build run by hand), the working tree's."""
    record = root / RECORD.relative_to(ROOT)
    return Edition.from_json(record.read_text()) if record.is_file() else current(root)


def record_step() -> bool:
    """The build graph's `edition` step: ``_build/edition.json``, rewritten only on a change."""
    text = current().to_json()
    if not RECORD.is_file() or RECORD.read_text() != text:
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(text)
    return True


def as_recorded() -> bool:
    """doit's up-to-date test for `edition`: the recorded edition is the working tree's."""
    return RECORD.is_file() and RECORD.read_text() == current().to_json()


# ---- the library an edition holds ------------------------------------------------------

def library_files(root: Path = ROOT) -> list[Path]:
    """What chapter_lib's wheel is built from, besides pyproject.toml: every module."""
    return sorted((root / "chapter_lib").rglob("*.py"))


@_held
def library_digest(root: Path = ROOT) -> str:
    """chapter_lib as an edition holds it, by content: its version and every module (path and
    bytes). Names the folder the site serves the wheel from, so a notebook asks for its own
    edition's library by what it is, and records the library a release holds."""
    sha = hashlib.sha256(f"chapter_lib {version(root)}\0".encode())
    for path in library_files(root):
        sha.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()


@_held
def content_digest(root: Path = ROOT) -> str:
    """chapter_lib by its content alone, as a reader's notebook tells editions apart (its install
    cell digests the installed copy the same way, runnable_book/pipeline/install_cell.py): every module,
    by its path inside the package and its bytes, as the wheel installs them. Not the version:
    every commit between two releases has the same one."""
    package = root / "chapter_lib"
    sha = hashlib.sha256()
    for path in library_files(root):
        sha.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()[:16]


@_held
def released_tag(root: Path = ROOT) -> str | None:
    """The git tag that holds this very library, if a release made one: ``v<version>`` when
    ``make release`` recorded this library's digest as that release's (pyproject.toml,
    ``[tool.editions]``), None once the library changed after it (or before any release).

    Why a record and not the tags themselves: the publishing workflow's checkout has no tags,
    and a notebook must name the same source wherever it is built."""
    release = project(root).get("tool", {}).get("editions", {})
    if release.get("release-library") != library_digest(root):
        return None
    return f"v{release['release']}"


def main() -> int:
    sys.stdout.write(current().to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
