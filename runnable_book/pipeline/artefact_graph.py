"""The build graph: every artefact of the book, what it is made from, and how (pydoit).

    python -m runnable_book.pipeline.artefact_graph book       # what `make book` runs
    python -m runnable_book.pipeline.artefact_graph pdf        # what `make pdf` runs
    python -m runnable_book.pipeline.artefact_graph lib | outputs | assets | html
    python -m runnable_book.pipeline.artefact_graph status     # every artefact up to date? (exit 1 if not)

The arrows (each a doit task; doit runs them in this order, in this one process)::

    book/*.md ─lib─▶ chapter_lib/ ─wheel─▶ chapter_lib.whl ─snapshot─▶ python-snapshot.bin.gz ─┐
        │                 └──────────────outputs──▶ book/*.ipynb ─┬─html─▶ _build/html ◀──────┘
        └──diagrams──▶ book/_diagrams/*.svg ──────────────────────┤         ▲
                                                                  └─pdf──▶ _build/pdf ─(copy)┘
    git (the commit, uncommitted changes) ─edition─▶ _build/edition.json ─▶ html, pdf

Why doit and not Make alone: Make compares timestamps, and an artefact that a step rewrites
with the same bytes, or a file restored by `git checkout` with an older time, fools it;
doit compares each input's content (MD5) with what the artefact was last made from, and
records that in `_build/.build-graph.json`. So an incremental build equals a clean one: the
Python snapshot the page restores is remade whenever chapter_lib's content changes, the PDF
whenever a page does (once an author made one), and nothing else. Make stays the entry
point (`make book`) and keeps what comes from the package managers (.venv, node_modules;
what the pages serve of them, Pyodide's files and the bundles, is npm_assets.py's, run first). Files a step creates during the run (a new solution module, a new page's
notebook) are seen through a digest file the step writes (`_build/digests/`), rewritten only
when its content changes, so the next step's inputs are complete.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from doit import cmd_run
from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.exceptions import UnmetDependency
from doit.reporter import ConsoleReporter
from doit.runner import ERROR, Runner

from runnable_book.pipeline.artefact_steps import (
    BUILD, DIAGRAM_FONT, DIAGRAMS_DIGEST, EDITOR, FAILED_DIGEST, FIRST_FIGURE, LIBRARY_DIGEST, NOTEBOOKS_DIGEST,
    OUTPUT_BUNDLES, PYODIDE, PYODIDE_FILES, PYODIDE_PACKAGES, SITE, SNAPSHOT, WHEEL, diagrams_as_written, diagrams_step,
    files, font_step, html_step, lib_step, library_intact, no_failed_page, node_step, notebooks_as_written, outputs_step,
    pages, pdf_made, pdf_paths, pdf_step, site_serves_the_pdf, wheel_step,
)
from runnable_book.pipeline import edition
from runnable_book.pipeline.build_lock import one_build_at_a_time
from runnable_book.pipeline.pages import BookError
from runnable_book.repository import ROOT, TOOL

DOIT_CONFIG = {
    "dep_file": str(BUILD / ".build-graph.json"),
    "backend": "json",
    "check_file_uptodate": "md5",
    "verbosity": 2,  # our steps print their own lines
    "continue": True,  # a failed step stops what depends on it, not the rest
}
# Imported by the Node scripts that make the snapshot and the first figure's bytes: an input of both.
REPRODUCIBLE_RUNTIME = TOOL / "pipeline/reproducible_runtime.mjs"

# ---- the tasks (doit reads every task_* function of this module) -------------------------

def pipeline_sources() -> list[Path]:
    """The tool's Python, all of it: the steps import more than pipeline/ (the checks' harness
    that `lib` copies into the book, common/, the local server's compression rule that the
    service worker's sizes follow), and a list of just what they import would miss the next
    import. (As synced_pages.book_digest takes it.)"""
    return sorted(p for p in TOOL.rglob("*.py") if not {"__pycache__", "node_modules"} & set(p.parts))

def sphinx_extension() -> list[Path]:
    folder = TOOL / "sphinx_ext"
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)

def book_sources() -> list[Path]:
    """What the HTML and the PDF are read from, besides the stored notebooks and diagrams."""
    book = ROOT / "book"
    return [ROOT / "_config.yml", ROOT / "_toc.yml", *pages(), *files(book, "*.bib"),
            *sorted(p for p in (book / "_static").rglob("*") if p.is_file()),
            *sorted(p for p in (book / "_templates").rglob("*") if p.is_file()), *sphinx_extension()]

def served_assets() -> list[Path]:
    return [*PYODIDE_FILES, PYODIDE_PACKAGES, EDITOR, *OUTPUT_BUNDLES, WHEEL, SNAPSHOT, FIRST_FIGURE, DIAGRAM_FONT]

def task_lib():
    """book/*.md `# @save` and `# @solution N` cells -> chapter_lib/"""
    return {"actions": [lib_step], "file_dep": [ROOT / "_toc.yml", *pages(), *pipeline_sources()],
            "targets": [LIBRARY_DIGEST], "uptodate": [library_intact], "verbosity": 2}

def task_wheel():
    """chapter_lib/ -> the wheel the page's Python installs"""
    return {"actions": [wheel_step], "file_dep": [LIBRARY_DIGEST, ROOT / "pyproject.toml"],
            "targets": [WHEEL], "verbosity": 2}

def task_snapshot():
    """the wheel + Pyodide -> Python's memory, started, chapter_lib's package imported, restored by the page"""
    script = TOOL / "pipeline/python_snapshot.mjs"
    imports = [TOOL / "pipeline/snapshot_imports.mjs", REPRODUCIBLE_RUNTIME]  # (what the script imports)
    return {"actions": [(node_step, [script, PYODIDE.as_posix() + "/", WHEEL], {"target": SNAPSHOT})],
            "file_dep": [*PYODIDE_FILES, WHEEL, script, *imports], "targets": [SNAPSHOT], "verbosity": 2}

def task_first_figure():
    """Pyodide + matplotlib's wheels -> the first figure's bytecode and font cache"""
    script, figures = TOOL / "pipeline/figure_bytecode.mjs", TOOL / "sphinx_ext/runner/figures.py"
    artist_docs = TOOL / "sphinx_ext/runner/artist_docs.py"
    return {"actions": [(node_step, [script, PYODIDE.as_posix() + "/", figures, artist_docs], {"target": FIRST_FIGURE})],
            "file_dep": [*PYODIDE_FILES, PYODIDE_PACKAGES, script, REPRODUCIBLE_RUNTIME, figures, artist_docs],
            "targets": [FIRST_FIGURE], "verbosity": 2}

def task_outputs():
    """chapter_lib/ + book/*.md -> book/*.ipynb (executing only the pages whose inputs changed)"""
    force = bool(os.environ.get("FORCE"))
    return {"actions": [(outputs_step, [], {"force": force})],
            # (the .bib too: a reader's notebook lists the works its page cites, with their titles;
            # and pyproject.toml: its install cell names chapter_lib's version and release)
            "file_dep": [ROOT / "_config.yml", ROOT / "_toc.yml", *pages(), *files(ROOT / "book", "*.bib"),
                         ROOT / "pyproject.toml", LIBRARY_DIGEST, *pipeline_sources()],
            "task_dep": ["diagrams"],  # a broken diagram stops the build before a notebook is rewritten
            "targets": [NOTEBOOKS_DIGEST, FAILED_DIGEST], "uptodate": [no_failed_page, notebooks_as_written, not force],
            "verbosity": 2}

def task_diagrams():
    """mermaid fences of book/*.md -> book/_diagrams/*.svg"""
    return {"actions": [diagrams_step], "file_dep": [*pages(), TOOL / "pipeline/draw_diagrams.py",
                                                     TOOL / "pipeline/draw_diagrams.mjs",  # (run in the drawing page)
                                                     TOOL / "pipeline/diagram_font.py"],
            "task_dep": ["lib"],  # a book whose library does not build rewrites nothing
            "targets": [DIAGRAMS_DIGEST], "uptodate": [diagrams_as_written], "verbosity": 2}

def task_edition():
    """the working tree's commit and state -> _build/edition.json (what every page, the PDF and
    the published notebooks name; runnable_book/pipeline/edition.py)"""
    # After the steps that can rewrite tracked files: the edition is the tree they leave.
    return {"actions": [edition.record_step], "targets": [edition.RECORD], "uptodate": [edition.as_recorded],
            "task_dep": ["outputs", "diagrams"], "verbosity": 2}

def task_html():
    """everything above -> _build/html"""
    # (the PDF's step's target, so that step runs first, once an author made a PDF: of an
    # earlier name too, which that step replaces)
    pdf = pdf_paths() if pdf_made() else []
    # (runnable_book/pipeline too: every page carries the exercises as book_shape.py reads them,
    # runnable_book/sphinx_ext/exercises.py)
    return {"actions": [html_step],
            "file_dep": [*book_sources(), NOTEBOOKS_DIGEST, FAILED_DIGEST, DIAGRAMS_DIGEST, *served_assets(), *pdf,
                         *pipeline_sources(), edition.RECORD],
            "uptodate": [site_serves_the_pdf], "targets": [SITE / "index.html"], "verbosity": 2}

def task_pdf():
    """the pages, their stored outputs and diagrams -> _build/pdf: the book's PDFs (chapter15.pdf)"""
    # (runnable_book/pipeline's Python: print_pdf.py and its parts, and book_shape.py, which names the
    # exercises whose solutions move to the back)
    # and the browser driver, the checks and the helpers it imports, with the page scripts
    # each runs in the page (their .mjs: runnable_book/common/page_scripts.py)
    printing = [*pipeline_sources(), *sorted((TOOL / "pipeline").glob("print_*.mjs")),
                *(path for folder in ("browser", "checks", "common") for pattern in ("*.py", "*.mjs")
                  for path in sorted((TOOL / folder).glob(pattern)))]
    return {"actions": [pdf_step],
            "file_dep": [*book_sources(), NOTEBOOKS_DIGEST, DIAGRAMS_DIGEST, *served_assets(), *printing, edition.RECORD],
            "targets": pdf_paths(), "verbosity": 2}

def task_diagram_font():
    """the glyphs the diagrams use -> the diagrams' font (a subset of Debian's DejaVu Sans)"""
    from runnable_book.pipeline import diagram_font

    # The diagrams' sources, through their drawings (named by the digest of their source):
    # a prose edit changes a page, not a diagram, and does not remake the font.
    return {"actions": [font_step], "file_dep": [DIAGRAMS_DIGEST, TOOL / "pipeline/diagram_font.py",
                                                 diagram_font.SOURCE],
            "targets": [DIAGRAM_FONT], "verbosity": 2}

def task_assets():
    """what the page's Python restores and loads, and the diagrams' font, made from the book's own files"""
    return {"actions": None, "task_dep": ["wheel", "snapshot", "first_figure", "diagram_font"]}

def task_book():
    """`make book`: everything, for what changed (the PDF too, once an author has made one)"""
    steps = ["lib", "assets", "diagrams", "outputs", "edition", *(["pdf"] if pdf_made() else []), "html"]
    return {"actions": None, "task_dep": steps}

# ---- running it --------------------------------------------------------------------------

# The steps this run finished, in order (what an interrupted build says it kept).
FINISHED: list[str] = []


class StepsReporter(ConsoleReporter):
    """doit's console reporter, quieter: our steps say what they make; up-to-date ones say nothing."""

    def execute_task(self, task):
        pass

    def add_success(self, task):
        if task.actions:  # (not the groups: assets, book)
            FINISHED.append(task.name)

    def skip_uptodate(self, task):
        pass

    def skip_ignore(self, task):
        pass

    def add_failure(self, task, fail):
        # Our steps print their own errors (page, cell, line); doit adds which step stopped,
        # once, and not every step that needed it (doit's UnmetDependency).
        name = fail.get_name()
        if name == "TaskFailed":
            self.failures.append({"task": task, "exception": fail})
        elif name != "UnmetDependency":  # a bug in a step, not a problem in the book: the traceback says it
            super().add_failure(task, fail)

    def complete_run(self):
        stopped = [result["task"].name for result in self.failures if result["exception"].get_name() == "TaskFailed"]
        if stopped:
            self.write(f"The build stopped at {', '.join(f'`{name}`' for name in stopped)} (above); "
                       f"what needs {'it' if len(stopped) == 1 else 'them'} was not made, and what was made "
                       f"before is kept.\n")
        for message in self.runtime_errors:
            self.write(f"error: {message}\n")

DOIT_CONFIG["reporter"] = StepsReporter


class StepsRunner(Runner):
    """doit's runner, except that a step not run because a step it needs failed keeps its record.

    doit forgets what every such step was last made from, so the next build remade them all
    although none of their inputs had changed: a `_toc.yml` entry for a missing page stopped
    `lib`, and the next build made the wheel, Python's snapshot and the diagrams' font again.
    The step that failed is still forgotten (it runs again next time); the steps after it are
    judged by their inputs' content, as always."""

    def _handle_task_error(self, node, base_fail):
        if not isinstance(base_fail, UnmetDependency):
            return super()._handle_task_error(node, base_fail)
        node.run_status = "failure"  # (the steps after it are not run either)
        self.reporter.add_failure(node.task, base_fail)
        self.final_result = ERROR
        if not self.continue_:
            self._stop_running = True


def doit(arguments: list[str]) -> int:
    cmd_run.Runner = StepsRunner  # (doit's `run` command takes its runner from there)
    return DoitMain(ModuleTaskLoader(sys.modules[__name__])).run(arguments)

def out_of_date() -> list[str]:
    """The artefacts whose inputs changed since they were made (doit's own status)."""
    from io import StringIO
    from contextlib import redirect_stdout

    listing = StringIO()
    with redirect_stdout(listing):
        doit(["list", "--all", "--status", "--quiet"])
    stale = []
    for line in listing.getvalue().splitlines():
        state, _, name = line.partition(" ")
        if state == "R" and name.strip() not in {"book", "assets", "pdf" if not pdf_made() else ""}:
            stale.append(name.strip())
    return stale

def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv) or ["book"]
    try:
        pages()  # _toc.yml names only pages that exist (else its line is named, and nothing runs)
    except BookError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if argv == ["status"]:
        stale = out_of_date()
        print("every artefact is up to date" if not stale else "out of date: " + ", ".join(stale))
        return 1 if stale else 0
    # Imported here, not above: the steps' bodies bring nbformat, nbclient and jupytext, which
    # `status` (every input's digest, nothing built) does without. (No circle: site_build
    # imports nothing of the graph.)
    from runnable_book.pipeline import site_build

    FINISHED.clear()
    try:
        with one_build_at_a_time(BUILD / ".build.lock", f"artefact_graph {' '.join(argv)}"):
            return site_build.run_graph(argv, doit)
    except KeyboardInterrupt:
        print(site_build.interrupted(FINISHED), file=sys.stderr, flush=True)
        # Under make, the same Ctrl-C reached make, which stops once this ends: a failure
        # status here would only add make's own line ("*** [book] Error 130") to ours. Run
        # alone, the status says it was interrupted.
        return 0 if os.environ.get("MAKELEVEL") else 130

if __name__ == "__main__":
    sys.exit(main())
