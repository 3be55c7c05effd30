"""`jupyter-book`, as its console script runs it, after tools/lazy_iri_syntax.py (0.8 s of
CPU less a run):

    python -m tools.jupyter_book build . --builder singlehtml ...

(`python -m tools.…` imports the package `tools` first, which installs the stand-in before
jupyter_book imports nbformat.)
"""

import sys

from jupyter_book.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
