"""`make book`: the build graph's steps (runnable_book/pipeline/artefact_graph.py), then the report.

    python -m runnable_book.pipeline.artefact_graph book    # what `make book` runs
    python -m runnable_book.pipeline.artefact_graph html    # only the HTML (what `make html` runs)

The steps run in one Python process (each would otherwise import nbformat, jupytext and
Sphinx again: a few seconds on this machine each), in the graph's order, each only when the
content of one of its inputs changed.

A page whose code fails does not hide the rest, and loses nothing: its failed run goes to
_build/failed/X.ipynb (the HTML preview shows the error in place, from there), every other
page is built, and the command exits 1 naming the page, the cell and the line. References to
figures that the failed page did not draw are said to follow from the failure, not reported as
causes. A build that fails leaves every generated file of the tree as it was (the other pages'
notebooks, chapter_lib too), and keeps what it made in _build/failed-build/: tree_rollback.py.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import hashlib
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from runnable_book.pipeline import change_report, draw_diagrams, edition, execute_pages, synced_pages, tree_rollback
from runnable_book.common.files import write_atomically
from runnable_book.pipeline.pages import BookError, notebook_pages, shown
from runnable_book.repository import ROOT, TOOL

HTML = ROOT / "_build" / "html"
# Sphinx re-reads pages when their sources change, not when our extension (its Python and
# the loader it inlines into pages) or our templates do: a change there rebuilds every page.
SPHINX_EXT = TOOL / "sphinx_ext"
REBUILD_ALL_WHEN_CHANGED = [*sorted(SPHINX_EXT.rglob("*.py")), *sorted((SPHINX_EXT / "runner").glob("*.*js")),
                            SPHINX_EXT / "runner" / "runner.css", *sorted((SPHINX_EXT / "templates").rglob("*")),
                            *sorted((ROOT / "book" / "_templates").rglob("*")),
                            ROOT / "_build" / "static" / "runner" / "editor.mjs", ROOT / "_config.yml"]
HTML_EXTENSION_DIGEST = ROOT / "_build" / "digests" / "html-extension.sha256"
# And when no page changed, Sphinx stops before copying the static files: an edit to
# book/_static or the tool's static/ alone (runnable-book.css, bundled into the pages' one
# stylesheet) would not reach the site, so it rebuilds every page; _build/static (what `make
# assets` and the graph make: Pyodide, the wheel, Python's snapshot) is copied into the site
# when its bytes differ.
STATIC = [ROOT / "book" / "_static", SPHINX_EXT / "static"]
BUILT_STATIC = ROOT / "_build" / "static"
# `jupyter-book build --builder html --warningiserror --nitpick --keep-going`, less its output:
# warnings (errors here) and errors only (see quiet_html_build).
SPHINX_OPTIONS = {"builder": "html", "warningiserror": True, "keep_going": True, "quiet": True}


@dataclass
class Result:
    """What this run's steps found, for the closing report."""

    runs: list = field(default_factory=list)
    failures: list = field(default_factory=list)  # (page, message) per page whose code failed
    html_status: int | None = None
    outputs_done: bool = False  # the outputs step went through every page (its report is whole)


RESULT = Result()


def failed_path(md: Path) -> Path:
    return execute_pages.failed_run_path(md)


def synced_digest(book: str, md: Path) -> str:
    return synced_pages.page_digest(book, md, execute_pages.stored_path(md), failed_path(md))


def sync_outputs(runs: list | None = None, force: bool = False, pages: list[Path] | None = None) -> list[tuple[Path, str]]:
    """Rewrite every stored notebook; return (page, message) for each page whose code failed.

    A failed page's stored notebook is not touched: its failed run is written to
    _build/failed/ for the HTML preview, and removed once the page runs again.

    The pages are taken in order, and said in order; a page to execute is executed here, one at
    a time, while a helper thread rewrites the pages after it that need no kernel (ahead_of).
    Why: an edit of a saved function gives every stored notebook a new install cell, and in a
    book of 200 pages rewriting them took seconds that the kernels, running the pages that use
    it, leave a core free for (`make bench-chapters`, its saved step).
    """
    failures = []
    with edition.library_held():  # (the library does not change while pages are written)
        book = synced_pages.book_digest()
        before, after = ({} if force else synced_pages.recorded()), {}
        order = pages or notebook_pages()
        unchanged = {md for md in order if shown(md) in before and before[shown(md)] == synced_digest(book, md)}
        with ahead_of([md for md in order if md not in unchanged], force) as rewritten:
            for md in order:
                key = shown(md)
                if md in unchanged:  # (nothing it is made from changed)
                    run = change_report.PageRun(md, "unchanged", [])
                    print(f"{run.status:>9}  {shown(execute_pages.stored_path(md))}", flush=True)
                    if runs is not None:
                        runs.append(run)
                    after[key] = before[key]
                elif sync_one(md, force, runs, failures, rewritten(md)):
                    after[key] = synced_digest(book, md)
        # (A step given some pages keeps the record of the others; one of every page, only theirs.)
        synced_pages.record({**synced_pages.recorded(), **after} if pages else after)
    return failures


@contextlib.contextmanager
def ahead_of(pages: list[Path], force: bool):
    """Within the block, ``rewritten(md)`` is md's notebook as a helper thread rewrote it,
    ahead of the caller, without executing it (status "stale": the caller executes it). The
    helper takes the pages in order; its error (a hand edit, an unreadable page) is raised by
    ``rewritten`` of that page, as sync_page would have raised it there. Leaving the block (done,
    an error, Ctrl-C) lets the helper finish the page it is writing (each is written whole) and
    start no other."""
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="rewrite-ahead") as helper:
        futures = {md: helper.submit(execute_pages.sync_page, md, force=force, execute_stale=False)
                   for md in ([] if force else pages)}  # (FORCE=1: every page is executed, none ahead)
        try:
            yield lambda md: futures[md].result() if md in futures else None
        finally:
            helper.shutdown(wait=True, cancel_futures=True)


def sync_one(md: Path, force: bool, runs: list | None, failures: list,
             rewritten: change_report.PageRun | None = None) -> bool:
    """sync_outputs for one page: its notebook rewritten (True), or its failure recorded.
    (``rewritten``: what the helper thread did with it; "stale": it is executed here.)"""
    try:
        run = rewritten if rewritten is not None and rewritten.status != "stale" else \
            execute_pages.sync_page(md, force=force)
        failed_path(md).unlink(missing_ok=True)
        failed_path(md).with_suffix(".txt").unlink(missing_ok=True)
        print(f"{run.status:>9}  {shown(execute_pages.stored_path(md))}", flush=True)
    except BookError as error:
        executed = getattr(error, "notebook", None)
        if executed is None:  # not a failing cell (an unreadable page, a hand edit): stop here
            raise
        version = execute_pages.python_version(executed) or ""
        failed_path(md).parent.mkdir(parents=True, exist_ok=True)
        write_atomically(failed_path(md), execute_pages.reader_text(md, executed, version))
        print(f"   FAILED  {shown(execute_pages.stored_path(md))} (kept as it was)", flush=True)
        run = change_report.PageRun(md, "failed", getattr(error, "reasons", []))
        failures.append((md, getattr(error, "where", None) or str(error).split("\n")[0]))
        write_atomically(failed_path(md).with_suffix(".txt"), failures[-1][1] + "\n")  # (what `make accept` says)
    if runs is not None:
        runs.append(run)
    return run.status != "failed"


def ensure_diagrams() -> bool:
    """Draw what is missing; False (said on stderr, nothing rewritten) when mermaid cannot draw one."""
    diagrams = draw_diagrams.book_diagrams()
    if not draw_diagrams.problems(diagrams):
        return True
    try:
        draw_diagrams.sync(diagrams)
    except draw_diagrams.DiagramError as error:
        print(f"error: {error}", file=sys.stderr)
        return False
    return True


def content_digest(paths: list[Path]) -> str:
    sha = hashlib.sha256()
    for path in paths:
        if path.is_file():
            sha.update(str(path).encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


def extension_digest_changed(digest_file: Path) -> bool:
    """Whether our extension or templates changed since ``digest_file`` was written (then
    rewritten): by content, so a checkout that only touches timestamps rebuilds nothing."""
    digest = content_digest(REBUILD_ALL_WHEN_CHANGED) + "\n"
    if digest_file.is_file() and digest_file.read_text() == digest:
        return False
    digest_file.parent.mkdir(parents=True, exist_ok=True)
    digest_file.write_text(digest)
    return True


def needs_full_rebuild() -> bool:
    index = HTML / "index.html"
    changed = extension_digest_changed(HTML_EXTENSION_DIGEST)
    if not index.exists():
        return False
    return changed or any(not (HTML / "_static" / path.relative_to(folder)).is_file()
                          or (HTML / "_static" / path.relative_to(folder)).read_bytes() != path.read_bytes()
                          for folder in STATIC for path in folder.rglob("*") if path.is_file())


def copy_built_static() -> None:
    """_build/static's files into the site where their bytes differ (before Sphinx runs, so
    the offline worker's list, written at the end of the build, has their digests)."""
    site = HTML / "_static"
    if not site.is_dir():
        return
    for path in BUILT_STATIC.rglob("*"):
        served = site / path.relative_to(BUILT_STATIC)
        if path.is_file() and (not served.is_file() or served.stat().st_size != path.stat().st_size
                               or served.read_bytes() != path.read_bytes()):
            served.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, served)


def build_html() -> int:
    fresh = needs_full_rebuild()
    if fresh:
        # Sphinx copies static files and never deletes one: a stylesheet or script the tool or
        # the book no longer serves (renamed, moved, removed) would stay in the site, and a
        # bundle made from it too. A full rebuild writes every page and every file of _static
        # again, so it starts from none: the site is then what a clean build makes.
        shutil.rmtree(HTML / "_static", ignore_errors=True)
    copy_built_static()
    status = quiet_html_build(ROOT, fresh=fresh, failed_pages=[md for md, _ in RESULT.failures])
    print(f"{'built' if status == 0 else 'FAILED':>9}  {shown(HTML / 'index.html')}", flush=True)
    if status:  # the next build repeats every page's warnings
        HTML_EXTENSION_DIGEST.unlink(missing_ok=True)
    return status


def figure_labels(md: Path) -> set[str]:
    """The labels a page gives its figures (what other pages' references need)."""
    text = md.read_text(encoding="utf-8")
    # `:name:` of a directive, `name:` of a code cell's mystnb figure, `(label)=` above a block.
    return set(re.findall(r"^\s*:?name:\s*(\S+)", text, re.M)) | set(re.findall(r"^\((\S+)\)=\s*$", text, re.M))


class ConsequenceFilter:
    """Holds back Sphinx's warnings about labels that a failed page did not draw (its
    figures come after the error), counting them instead: they are consequences, not causes.
    And Sphinx's "Interrupted!" with the blank lines around it (print() writes a line's text
    and its end apart): after Ctrl-C the build says in its own one line what it kept."""

    def __init__(self, stream, labels: set[str]):
        self.stream, self.labels, self.held, self.passed = stream, labels, 0, 0
        self.line_ends = ""  # bare line ends, written once the next text shows they are not Sphinx's interrupt's
        self.swallow_line_end = False

    def write(self, text: str) -> int:
        if text == "\n":
            if self.swallow_line_end:
                self.swallow_line_end = False
            else:
                self.line_ends += text
            return len(text)
        if text.strip() == "Interrupted!":
            self.line_ends, self.swallow_line_end = "", not text.endswith("\n")
            return len(text)
        self.release()
        label = re.search(r"undefined label: '?([\w:-]+)'?", text)
        if label and label.group(1) in self.labels:
            self.held += 1
            return len(text)
        self.passed += bool(re.search(r"WARNING|ERROR|Exception", text))
        return self.stream.write(text)

    def release(self) -> None:
        if self.line_ends:
            self.stream.write(self.line_ends)
            self.line_ends = ""

    def flush(self) -> None:
        self.release()
        self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


def quiet_html_build(book: Path, fresh: bool = False, failed_pages: list[Path] = ()) -> int:
    """Build ``book``'s HTML as `jupyter-book build` does, printing only warnings and errors.

    `jupyter-book build` prints its folders and a closing box, and Sphinx's status stream
    carries each page read and written and the extensions' configuration dumps (myst's and
    myst-nb's whole configuration, "Using jupyter-cache at", although nothing executes
    here). So we call what the command calls, Jupyter Book's ``build_sphinx`` with the
    book's _config.yml and _toc.yml, in Sphinx's quiet mode: no status stream, while every
    warning and error (each with its page and line) still goes to stderr.
    """
    from jupyter_book.sphinx import build_sphinx

    labels = set().union(*(figure_labels(md) for md in failed_pages)) if failed_pages else set()
    overrides = {"external_toc_path": str(book / "_toc.yml"), "nitpicky": True, "latex_individualpages": False}
    stderr, filtered = sys.stderr, ConsequenceFilter(sys.stderr, labels)
    sys.stderr = filtered
    result = None
    try:
        result = build_sphinx(book, book / "_build" / "html", noconfig=True, path_config=str(book / "_config.yml"),
                              confoverrides=overrides, freshenv=fresh, **SPHINX_OPTIONS)
    finally:
        sys.stderr = stderr
        if not isinstance(result, KeyboardInterrupt):
            filtered.release()
    if result:
        # Sphinx warns about a page only when it reads it, and the next build would not read
        # the pages that warned (unchanged since): it would pass. Without the environment
        # it keeps between builds (Jupyter Book's _build/.doctrees), the next build reads
        # every page again, and reports the same problems until they are fixed.
        (book / "_build" / ".doctrees" / "environment.pickle").unlink(missing_ok=True)
    if filtered.held:
        print(f"({filtered.held} reference(s) to figures of the failed page(s) were not resolved: "
              f"they follow from the failure, and resolve once the page runs.)", file=sys.stderr)
    if isinstance(result, KeyboardInterrupt):  # (Sphinx's handler returns it): the build was interrupted
        forget_interrupted_build(book / "_build")
        HTML_EXTENSION_DIGEST.unlink(missing_ok=True)  # (and every page is written again)
        raise result
    if isinstance(result, BaseException):  # Sphinx has printed it (its handler), with the cause
        return 1
    if result and filtered.held and not filtered.passed:
        return 0  # every warning followed from the failed pages, said above: the preview is built
    if result:
        print("error: the HTML build stopped at the warnings above (warnings are errors in this book)",
              file=sys.stderr)
    return int(result)


def forget_interrupted_build(build: Path) -> None:
    """After Ctrl-C in a Sphinx build: its environment and build info may be half-written (the
    next build then warned "build info file is broken" and stopped, warnings being errors), and
    its pages half-rewritten. Without them, the next build reads and writes every page again."""
    (build / ".doctrees" / "environment.pickle").unlink(missing_ok=True)
    for info in build.glob("*/.buildinfo"):
        info.unlink()


def run_graph(arguments: list[str], doit) -> int:
    """Run the graph's steps named in ``arguments``, then say what happened. A build that fails
    leaves the tree as it found it, what it made kept in _build/failed-build/ (tree_rollback.py)."""
    RESULT.runs.clear()
    RESULT.failures.clear()
    RESULT.outputs_done = False
    tree = tree_rollback.before_this_build()
    try:
        status = doit(arguments)
    except KeyboardInterrupt:
        tree.stopped()
        raise
    failed = bool(RESULT.failures or status)
    put_back = []  # the generated files this build changed, put back as they were
    if failed:
        put_back = tree.failed()
    else:
        tree.succeeded()
    kept = tree_rollback.KEPT if put_back else None
    if RESULT.outputs_done:  # last, so Sphinx's lines do not scroll it away
        runs = execute_pages.with_unreported_runs(RESULT.runs)
        print(change_report.report(runs, execute_pages.stored_path, len(notebook_pages()), kept=kept))
        change_report.forget_unreported()
    for _, failure in RESULT.failures:
        print(f"error: {failure}", file=sys.stderr)
    if RESULT.failures:
        print("Every other page was built, and the HTML shows the error in place.", file=sys.stderr)
    if put_back:
        print(f"The build failed, so it changed nothing in the tree: what it made ({tree_rollback.summary(put_back)}) "
              f"is kept in {shown(tree_rollback.KEPT)}/, for reading.", file=sys.stderr)
    if RESULT.failures:
        print("Fix the cell, then run `make book` again.", file=sys.stderr)
    return 1 if failed else 0


def interrupted(finished_steps: list[str]) -> str:
    """The one line an interrupted build ends with: what it kept, and what to run."""
    written = [run.page.stem for run in RESULT.runs if run.status in ("executed", "updated")]
    kept = []
    if finished_steps:
        kept.append(f"the steps it finished ({', '.join(finished_steps)})")
    if written and "outputs" not in finished_steps:
        kept.append(f"the notebooks it wrote ({', '.join(written)})")
    what = " and ".join(kept) if kept else "nothing: it had finished no step"
    return (f"Interrupted. Kept {what}; what it was in the middle of is made again. "
            f"Run `make book` to finish: its change report includes what this run changed.")
