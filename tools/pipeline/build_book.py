"""Build the book in one Python process: library, stored outputs, diagrams, HTML.

    python -m tools.pipeline.build_book          # what `make book` runs (when an input changed)
    python -m tools.pipeline.build_book html     # only the HTML (what `make html` runs)

One process instead of four, because each would import nbformat and jupytext again (a
few seconds on this machine each: jsonschema builds its format grammars at import), which
made `make book` after a one-word edit take twice Sphinx's own time. The Makefile skips
this entirely when no input is newer than the last build.

A page whose code fails does not hide the rest: its stored notebook is written with the
outputs up to the failing cell and the error in place (so its HTML page shows the error
where it happened, and nbval fails on it until it is fixed), every other page is built,
and the command exits 1 naming the page and the cell.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


from tools.pipeline import build_lib, change_report, draw_diagrams, stored_outputs
from tools.pipeline.build_lib import write_atomically
from tools.pipeline.pages import ROOT, BookError, notebook_pages, shown

HTML = ROOT / "_build" / "html"
# Sphinx re-reads pages when their sources change, not when our extension (its Python and
# the loader it inlines into pages) or our templates do.
SPHINX_EXT = ROOT / "tools" / "sphinx_ext"
# The runner's files are among them: every page's loader announces their total size, and
# Sphinx copies html_static_path (the editor bundle) only when it writes pages.
REBUILD_ALL_WHEN_NEWER = [*sorted(SPHINX_EXT.rglob("*.py")), *sorted((SPHINX_EXT / "runner").glob("*.*js")),
                          SPHINX_EXT / "runner" / "runner.css", *sorted((ROOT / "book" / "_templates").rglob("*")),
                          ROOT / "_build" / "static" / "runner" / "editor.mjs"]
# And when no page changed, Sphinx stops before copying the static files: an edit to
# book/_static alone (chapter.css, say) would not reach the site.
STATIC = ROOT / "book" / "_static"
# Never an inputs digest: the page is re-executed on the next build, whatever changed.
FAILED_DIGEST = stored_outputs.FAILED_DIGEST
# `jupyter-book build --builder html --warningiserror --nitpick --keep-going`, less its output:
# warnings (errors here) and errors only (see quiet_html_build).
SPHINX_OPTIONS = {"builder": "html", "warningiserror": True, "keep_going": True, "quiet": True}


def sync_outputs(runs: list | None = None) -> list[str]:
    """Rewrite every stored notebook; return one message per page whose code failed.

    Each page's run (why it was executed, how its outputs changed) is appended to ``runs``
    for the change report.
    """
    failures = []
    for md in notebook_pages():
        try:
            run = stored_outputs.sync_page(md)
            print(f"{run.status:>9}  {shown(stored_outputs.stored_path(md))}", flush=True)
            if runs is not None:
                runs.append(run)
        except BookError as error:
            executed = getattr(error, "notebook", None)
            if executed is None:  # not a failing cell (e.g. an unreadable page): stop here
                raise
            version = stored_outputs.python_version(executed) or ""
            text = stored_outputs.reader_text(md, executed, version, digest=FAILED_DIGEST)
            write_atomically(stored_outputs.stored_path(md), text)
            print(f"   FAILED  {shown(stored_outputs.stored_path(md))}", flush=True)
            where = stored_outputs.failure(md, executed) or shown(md)
            failures.append(f"{where} (its page shows the error in place)")
    return failures


def ensure_diagrams() -> None:
    if draw_diagrams.problems(draw_diagrams.book_diagrams()):
        draw_diagrams.sync(draw_diagrams.book_diagrams())


def needs_full_rebuild() -> bool:
    index = HTML / "index.html"
    if not index.exists():
        return False
    built = index.stat().st_mtime
    if any(path.stat().st_mtime > built for path in REBUILD_ALL_WHEN_NEWER if path.is_file()):
        return True
    return any(not (HTML / "_static" / path.relative_to(STATIC)).is_file()
               or (HTML / "_static" / path.relative_to(STATIC)).read_bytes() != path.read_bytes()
               for path in STATIC.rglob("*") if path.is_file())


def build_html() -> int:
    status = quiet_html_build(ROOT, fresh=needs_full_rebuild())
    print(f"{'built' if status == 0 else 'FAILED':>9}  {shown(HTML / 'index.html')}", flush=True)
    return status


def quiet_html_build(book: Path, fresh: bool = False) -> int:
    """Build ``book``'s HTML as `jupyter-book build` does, printing only warnings and errors.

    `jupyter-book build` prints its folders and a closing box, and Sphinx's status stream
    carries each page read and written and the extensions' configuration dumps (myst's and
    myst-nb's whole configuration, "Using jupyter-cache at", although nothing executes
    here). So we call what the command calls, Jupyter Book's ``build_sphinx`` with the
    book's _config.yml and _toc.yml, in Sphinx's quiet mode: no status stream, while every
    warning and error (each with its page and line) still goes to stderr.
    """
    from jupyter_book.sphinx import build_sphinx

    overrides = {"external_toc_path": str(book / "_toc.yml"), "nitpicky": True, "latex_individualpages": False}
    result = build_sphinx(book, book / "_build" / "html", noconfig=True, path_config=str(book / "_config.yml"),
                          confoverrides=overrides, freshenv=fresh, **SPHINX_OPTIONS)
    if result:
        # Sphinx warns about a page only when it reads it, and the next build would not read
        # the pages that warned (unchanged since): it would pass. Without the environment
        # it keeps between builds (Jupyter Book's _build/.doctrees), the next build reads
        # every page again, and reports the same problems until they are fixed.
        (book / "_build" / ".doctrees" / "environment.pickle").unlink(missing_ok=True)
    if isinstance(result, BaseException):  # Sphinx has printed it (its handler), with the cause
        return 1
    if result:
        print("error: the HTML build stopped at the warnings above (warnings are errors in this book)",
              file=sys.stderr)
    return int(result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", nargs="?", choices=["all", "html"], default="all")
    args = parser.parse_args(argv)
    failures, runs = [], []
    if args.step == "all":
        if build_lib.main([]) != 0:
            return 1
        try:
            failures = sync_outputs(runs)
        except BookError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        ensure_diagrams()
    status = build_html()
    if args.step == "all":  # last, so Sphinx's lines do not scroll it away
        print(change_report.report(runs, stored_outputs.stored_path))
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    if failures:
        print("Every other page was built. Fix the cell, then run `make book` again.", file=sys.stderr)
    return 1 if failures or status else 0


if __name__ == "__main__":
    sys.exit(main())
