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
SPHINX_ARGS = ["--builder", "html", "--warningiserror", "--nitpick", "--keep-going"]


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
    from jupyter_book.cli.main import main as jupyter_book

    args = ["build", str(ROOT), *SPHINX_ARGS, *(["--all"] if needs_full_rebuild() else [])]
    try:
        jupyter_book.main(args, standalone_mode=False)
    except SystemExit as exit:
        return int(exit.code or 0)
    except RuntimeError as error:  # Jupyter Book's own "there was an error" box
        print(error, file=sys.stderr)
        return 1
    return 0


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
