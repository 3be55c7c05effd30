"""`jupyter-book`, as its console script runs it, after runnable_book/lazy_iri_syntax.py (0.8 s of
CPU less a run):

    python -m runnable_book.jupyter_book build . --builder singlehtml ...

(`python -m runnable_book.…` imports the package `runnable_book` first, which installs the stand-in before
jupyter_book imports nbformat.) COMMAND is that command line, for the tools that run it
(the PDF's print build, its benchmark, the tests' scratch books); run it from the repository's
root, where `runnable_book` is importable.
"""

import sys

COMMAND = [sys.executable, "-m", "runnable_book.jupyter_book"]

if __name__ == "__main__":
    from jupyter_book.cli.main import main

    sys.exit(main())
