"""The tool's commands for any book, run from inside the book's folder:

    python -m runnable_book new DIR   a new book: two pages, a saved function, an exercise (new_book/)
    python -m runnable_book book      what the pages serve from npm, then the book: library,
                                      outputs (pages executed where they changed), site
    python -m runnable_book test      the book's own checks: the library in sync with the pages,
                                      every stored output re-checked by nbval, the site built

(This book's Makefile runs the same steps as targets of their own.)
"""

from __future__ import annotations

import glob
import subprocess
import sys


def book() -> int:
    from runnable_book.pipeline import artefact_graph, npm_assets

    return npm_assets.main() or artefact_graph.main(["book"])


def test() -> int:
    """Checks first, on the book as committed (nothing written), then the site built."""
    from runnable_book.pipeline import extract_library
    from runnable_book.repository import ROOT

    if extract_library.main(["--check"]):
        return 1
    notebooks = sorted(glob.glob("book/*.ipynb", root_dir=ROOT))
    if not notebooks:
        print("error: no stored notebook (book/*.ipynb): run `make book` first, and commit what it writes",
              file=sys.stderr)
        return 1
    # (-p no:cacheprovider: pytest's cache folder, written into the book, would be a page to Sphinx.)
    nbval = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "runnable_book.checks.nbval_plugin",
                            "--nbval", "--nbval-current-env", *notebooks], cwd=ROOT)
    if nbval.returncode:
        return 1
    return book()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    if command == "new":
        from runnable_book import new_book

        return new_book.main(rest)
    if command in ("book", "test") and not rest:
        return book() if command == "book" else test()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
