"""`jupyter-book`, as its console script runs it, after tools/lazy_iri_syntax.py (0.8 s of
CPU less a run):

    python -m tools.jupyter_book build . --builder singlehtml ...

(`python -m tools.…` imports the package `tools` first, which installs the stand-in before
jupyter_book imports nbformat.) COMMAND is that command line, for the tools that run it
(the PDF's print build, its benchmark, the tests' scratch books); run it from the repository's
root, where `tools` is importable.
"""

import sys

COMMAND = [sys.executable, "-m", "tools.jupyter_book"]

if __name__ == "__main__":
    from jupyter_book.cli.main import main

    sys.exit(main())
