"""A new book in one command: ``python -m runnable_book new DIR``.

It writes template/ into DIR: two pages (one saves a function to ``chapter_lib``, the other
holds an exercise with points, a hint, a worked solution and a check), the check, the tool's
two settings in ``_config.yml``, and the book's two commands (Makefile, README.md: ``make book``,
``make test``) with what they install (requirements.txt naming this version of the tool, and
constraints.txt pinning everything it pulls in at the versions the tool was tested with;
package.json and its lock, the tool's npm packages), and a GitHub Actions workflow that runs
``make test`` and publishes the tested site to GitHub Pages. Nothing is built: ``make book``
does that.

DIR must be new or empty: nothing is overwritten, and on any error nothing is left behind.
"""

from __future__ import annotations

import datetime
import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from runnable_book.common.tested_versions import tested_versions

TEMPLATE = Path(__file__).resolve().parent / "template"
# Files and folders kept in the package under another name (a dotfile is easily lost in packaging).
RENAMED = {"gitignore": ".gitignore", "github": ".github"}
# The supported Pythons, as the tool's pyproject.toml says them (README.md's line).
PYTHONS = "3.11, 3.12 or 3.13"


class NewBookError(Exception):
    """Why no book was written (the folder is left as it was)."""


def tool_version() -> str:
    """This tool's version: the installed distribution's, else its pyproject's (a checkout)."""
    try:
        return metadata.version("runnable-book")
    except metadata.PackageNotFoundError:
        import tomllib

        return tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]["version"]


def renamed(relative: Path) -> Path:
    return Path(*(RENAMED.get(part, part) for part in relative.parts))


def filled(text: str, values: dict[str, str]) -> str:
    for name, value in {**values, "pythons": PYTHONS, "year": str(datetime.date.today().year)}.items():
        text = text.replace(f"@@{name.upper()}@@", value)
    return text


def write(folder: Path, title: str = "A runnable book", author: str = "Its author",
          repository: str | None = None) -> list[Path]:
    """The new book's files, written into ``folder`` (new or empty); returns them, relative.
    ``repository``: its GitHub repository's address (default: a placeholder named for the folder)."""
    folder = folder.resolve()
    repository = repository or f"https://github.com/you/{folder.name}"
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise NewBookError(f"{folder} is not an empty folder: a new book is written only into a new or empty one")
    values = {"title": title, "author": author, "repository": repository}
    for name, value in values.items():
        if not value.strip() or '"' in value or "\n" in value:
            raise NewBookError(f"the {name} {value!r} cannot be written into _config.yml: one line, no double quote")
    # Written beside the folder first, then moved in whole: an error leaves nothing half-written.
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # (mkdtemp's folder is the owner's alone; a book's is not)
    try:
        written = []
        for source in sorted(TEMPLATE.rglob("*")):
            if source.is_dir() or "__pycache__" in source.parts:
                continue
            relative = source.relative_to(TEMPLATE)
            relative = renamed(relative)
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(filled(source.read_text(encoding="utf-8"), values), encoding="utf-8")
            written.append(relative)
        version = tool_version()
        try:
            pins = tested_versions()
        except FileNotFoundError as error:
            raise NewBookError(str(error)) from None
        (staging / "requirements.txt").write_text(
            f"# The tool, which brings what it needs (jupyter-book<2, nbval, ...): `make book` installs it,\n"
            f"# and all of it at the versions the tool was tested with (constraints.txt), so that a build\n"
            f"# next year gives the same book.\n"
            f"runnable-book=={version}\n-c constraints.txt\n", encoding="utf-8")
        (staging / "constraints.txt").write_text(
            f"# The versions runnable-book {version} was tested with: written by `python -m runnable_book new`.\n"
            f"# A later version of the tool brings its own: write a new book with it and take this file.\n"
            + pins, encoding="utf-8")
        written += [Path("requirements.txt"), Path("constraints.txt")]
        if folder.exists():
            folder.rmdir()  # (empty, checked above)
        staging.rename(folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(written)


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m runnable_book new", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where to write the book (new, or empty)")
    parser.add_argument("--title", default="A runnable book")
    parser.add_argument("--author", default="Its author")
    parser.add_argument("--repository", help="its GitHub repository's address (default: a placeholder to edit in _config.yml)")
    args = parser.parse_args(argv)
    try:
        written = write(args.folder, args.title, args.author, args.repository)
    except NewBookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} files into {args.folder}: {', '.join(p.as_posix() for p in written)}")
    print(f"next: cd {args.folder} && make book (then make test)")
    return 0
