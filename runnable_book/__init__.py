"""runnable-book: a Jupyter Book whose every page runs (README.md here). Its parts, in the data's order:

    pipeline/    book/*.md -> chapter_lib -> stored outputs (book/*.ipynb) -> _build/html, PDF
    sphinx_ext/  the Sphinx extension: stored outputs shown, "Run in your browser", offline
    grade/       a class's notebooks -> grades;  release/  editions, and this package's wheel
    checks/, browser/, bench/, interpreters/, common/: what checks and measures a book

repository.py tells the book it works on (ROOT) from its own files (TOOL).
"""

from runnable_book import lazy_iri_syntax  # noqa: F401  (before any import of jsonschema: the module says why)
