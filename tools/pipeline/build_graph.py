"""The build graph: every artefact of the book, what it is made from, and how (pydoit).

    python -m tools.pipeline.build_graph book       # what `make book` runs
    python -m tools.pipeline.build_graph pdf        # what `make pdf` runs
    python -m tools.pipeline.build_graph lib | outputs | assets | html
    python -m tools.pipeline.build_graph status     # every artefact up to date? (exit 1 if not)

The arrows (each a doit task; doit runs them in this order, in this one process)::

    book/*.md ─lib─▶ chapter_lib/ ─wheel─▶ chapter_lib.whl ─snapshot─▶ python-snapshot.bin.gz ─┐
        │                 └──────────────outputs──▶ book/*.ipynb ─┬─html─▶ _build/html ◀──────┘
        └──diagrams──▶ book/_diagrams/*.svg ──────────────────────┤         ▲
                                                                  └─pdf──▶ _build/pdf ─(copy)┘

Why doit and not Make alone: Make compares timestamps, and an artefact that a step rewrites
with the same bytes, or a file restored by `git checkout` with an older time, fools it;
doit compares each input's content (MD5) with what the artefact was last made from, and
records that in `_build/.build-graph.json`. So an incremental build equals a clean one: the
Python snapshot the page restores is remade whenever chapter_lib's content changes, the PDF
whenever a page does (once an author made one), and nothing else. Make stays the entry
point (`make book`) and keeps what comes from the package managers (.venv, node_modules,
Pyodide's files). Files a step creates during the run (a new solution module, a new page's
notebook) are seen through a digest file the step writes (`_build/digests/`), rewritten only
when its content changes, so the next step's inputs are complete.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
from pathlib import Path

from doit.cmd_base import ModuleTaskLoader
from doit.doit_cmd import DoitMain
from doit.reporter import ConsoleReporter

from tools.pipeline.pages import ROOT, pages_in_toc_order, shown

BUILD = ROOT / "_build"
DIGESTS = BUILD / "digests"
STATIC = BUILD / "static"
PYODIDE = STATIC / "pyodide"
PYODIDE_FILES = [PYODIDE / name for name in
                 ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")]
PYODIDE_PACKAGES = PYODIDE / "served-packages.json"
WHEEL = STATIC / "runner" / "chapter_lib.whl"
SNAPSHOT = STATIC / "runner" / "python-snapshot.bin.gz"
FIRST_FIGURE = STATIC / "runner" / "first-figure.zip"
EDITOR = STATIC / "runner" / "editor.mjs"
DIAGRAM_FONT = STATIC / "fonts" / "diagram-sans.woff"
SITE = BUILD / "html"
PDF = BUILD / "pdf" / "chapter15.pdf"
PRINT_BUILD = BUILD / "print"
SINGLEHTML = PRINT_BUILD / "_build" / "singlehtml"
# Digest files: one line, rewritten only when the content of what they stand for changes.
LIBRARY_DIGEST = DIGESTS / "chapter_lib.sha256"
NOTEBOOKS_DIGEST = DIGESTS / "stored-notebooks.sha256"
DIAGRAMS_DIGEST = DIGESTS / "diagrams.sha256"
FAILED_DIGEST = DIGESTS / "failed-runs.sha256"
FAILED = BUILD / "failed"  # a page's last failed run, for the HTML preview (never book/*.ipynb)

DOIT_CONFIG = {
    "dep_file": str(BUILD / ".build-graph.json"),
    "backend": "json",
    "check_file_uptodate": "md5",
    "verbosity": 2,  # our steps print their own lines
    "continue": True,  # a failed step stops what depends on it, not the rest
}


def files(folder: Path, pattern: str = "*") -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file()) if folder.is_dir() else []


def python_sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def digest_of(paths: list[Path]) -> str:
    sha = hashlib.sha256()
    for path in sorted(paths):
        sha.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest() + "\n"


def record_digest(digest_file: Path, paths: list[Path]) -> None:
    """Write the digest of ``paths`` (names and bytes) to ``digest_file``, only if it changed."""
    text = digest_of(paths)
    digest_file.parent.mkdir(parents=True, exist_ok=True)
    if not digest_file.is_file() or digest_file.read_text() != text:
        digest_file.write_text(text)


def library_files() -> list[Path]:
    return sorted((ROOT / "chapter_lib").rglob("*.py"))


def stored_notebooks() -> list[Path]:
    return [md.with_suffix(".ipynb") for md in pages_in_toc_order() if md.with_suffix(".ipynb").is_file()]


def run(command: list[str], env: dict | None = None) -> bool:
    """A step that is another program (pip, node, Chromium): its output is shown only if it fails."""
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if done.returncode:
        sys.stderr.write(done.stdout + done.stderr)
    return done.returncode == 0


def made(path: Path):
    """Announce an artefact as its step starts (what `make book` prints for it)."""
    print(f"{'making':>9}  {shown(path)}", flush=True)


# ---- the steps --------------------------------------------------------------------------

def lib_step() -> bool:
    from tools.pipeline import build_lib

    if build_lib.main(["--quiet"]) != 0:
        return False
    record_digest(LIBRARY_DIGEST, library_files())
    return True


def library_intact() -> bool:
    """doit's up-to-date test for `lib`: False when a generated module was edited by hand,
    so that `lib` runs and names the edit (tools/pipeline/build_lib.py), whatever else changed."""
    from tools.pipeline import build_lib

    if not LIBRARY_DIGEST.is_file() or LIBRARY_DIGEST.read_text() != digest_of(library_files()):
        return False  # a module of chapter_lib changed (a hand-written check) or went missing since
    return not build_lib.hand_edited_modules()


def wheel_step() -> bool:
    made(WHEEL)
    work = BUILD / "wheel"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    (work / "src").mkdir(parents=True)
    WHEEL.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-r", "pyproject.toml", "chapter_lib", str(work / "src")], cwd=ROOT, check=True)
    # SOURCE_DATE_EPOCH: the zip's dates fixed (1980, zip's first year), so the same library
    # makes the same bytes, and a clean build's wheel is an incremental build's.
    if not run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                str(work / "src"), "-w", str(work)], env={**os.environ, "SOURCE_DATE_EPOCH": "315532800"}):
        return False
    built = next(work.glob("chapter_lib-*.whl"))
    os.replace(built, WHEEL)
    return True


def node_step(script: str, *arguments: Path, target: Path) -> bool:
    made(target)
    partial = target.with_name(target.name + ".tmp")
    if not run(["node", script, *map(str, arguments), str(partial)]):
        partial.unlink(missing_ok=True)
        return False
    os.replace(partial, target)
    return True


def outputs_step(force: bool = False) -> bool:
    """Rewrite every stored notebook (executing the pages whose inputs changed). A page that
    fails is named, and its stored notebook kept; the step still succeeds so that the HTML
    preview shows the error, and `book` exits 1 (the failure is not recorded as done:
    ``no_failed_page`` makes the step run again next time)."""
    from tools.pipeline import build_book
    from tools.pipeline.pages import BookError

    try:
        build_book.RESULT.failures = build_book.sync_outputs(build_book.RESULT.runs, force=force)
    except BookError as error:  # not a page's code (a page that does not read, a hand edit): stop here
        print(f"error: {error}", file=sys.stderr)
        return False
    build_book.RESULT.outputs_done = True
    for stray in set(files(FAILED, "*.ipynb")) - set(failed_runs()):  # of a page the book no longer has
        stray.unlink()
    record_digest(NOTEBOOKS_DIGEST, stored_notebooks())
    record_digest(FAILED_DIGEST, failed_runs())  # the HTML preview shows failed runs
    return True


def failed_runs() -> list[Path]:
    """The failed runs kept for the HTML preview, of pages the book has."""
    return [path for md in pages() if (path := FAILED / md.with_suffix(".ipynb").name).is_file()]


def no_failed_page() -> bool:
    return not failed_runs()


def notebooks_as_written() -> bool:
    """doit's up-to-date test for `outputs`, on what it writes: every stored notebook (and
    none more or less) is what the step last wrote; a hand edit or a deleted notebook runs it."""
    return NOTEBOOKS_DIGEST.is_file() and NOTEBOOKS_DIGEST.read_text() == digest_of(stored_notebooks())


def diagrams_step() -> bool:
    from tools.pipeline import build_book

    if not build_book.ensure_diagrams():
        return False
    record_digest(DIAGRAMS_DIGEST, files(ROOT / "book" / "_diagrams"))
    return True


def html_step() -> bool:
    from tools.pipeline import build_book

    build_book.RESULT.html_status = build_book.build_html()
    return build_book.RESULT.html_status == 0


def pdf_step() -> bool:
    """The singlehtml build, then Chromium prints it (tools/pipeline/print_pdf.py)."""
    from tools.pipeline.build_book import extension_digest_changed

    made(PDF)
    if not run(["bash", "tools/browser/ensure_debian_package.sh", "chromium", "chromium"]):
        return False
    command = [str(Path(sys.executable).parent / "jupyter-book"), "build", ".", "--path-output", str(PRINT_BUILD),
               "--builder", "singlehtml", "--warningiserror", "--nitpick", "--keep-going", "--quiet"]
    # Sphinx re-reads pages when they change, not when our extension or templates do.
    if extension_digest_changed(DIGESTS / "print-extension.sha256"):
        command.append("--all")
    if not run(command):
        # A build that warned drops Sphinx's environment, or the next one would not read the
        # pages that warned again (unchanged) and would pass.
        (PRINT_BUILD / "_build" / ".doctrees" / "environment.pickle").unlink(missing_ok=True)
        (DIGESTS / "print-extension.sha256").unlink(missing_ok=True)
        return False
    PDF.parent.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, "-m", "tools.pipeline.print_pdf", str(SINGLEHTML), str(PDF)], cwd=ROOT)
    return done.returncode == 0


# ---- the tasks (doit reads every task_* function of this module) -------------------------

def pages() -> list[Path]:
    return pages_in_toc_order()


def pipeline_sources() -> list[Path]:
    return sorted((ROOT / "tools" / "pipeline").glob("*.py"))


def sphinx_extension() -> list[Path]:
    folder = ROOT / "tools" / "sphinx_ext"
    return sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def book_sources() -> list[Path]:
    """What the HTML and the PDF are read from, besides the stored notebooks and diagrams."""
    book = ROOT / "book"
    return [ROOT / "_config.yml", ROOT / "_toc.yml", *pages(), *files(book, "*.bib"),
            *sorted(p for p in (book / "_static").rglob("*") if p.is_file()),
            *sorted(p for p in (book / "_templates").rglob("*") if p.is_file()), *sphinx_extension()]


def served_assets() -> list[Path]:
    return [*PYODIDE_FILES, PYODIDE_PACKAGES, EDITOR, WHEEL, SNAPSHOT, FIRST_FIGURE, DIAGRAM_FONT]


def task_lib():
    """book/*.md `# @save` and `# @solution N` cells -> chapter_lib/"""
    return {"actions": [lib_step], "file_dep": [ROOT / "_toc.yml", *pages(), *pipeline_sources()],
            "targets": [LIBRARY_DIGEST], "uptodate": [library_intact], "verbosity": 2}


def task_wheel():
    """chapter_lib/ -> the wheel the page's Python installs"""
    return {"actions": [wheel_step], "file_dep": [LIBRARY_DIGEST, ROOT / "pyproject.toml"],
            "targets": [WHEEL], "verbosity": 2}


def task_snapshot():
    """the wheel + Pyodide -> Python's memory with chapter_lib imported, restored by the page"""
    script = "tools/pipeline/python_snapshot.mjs"
    return {"actions": [(node_step, [script, PYODIDE.as_posix() + "/", WHEEL], {"target": SNAPSHOT})],
            "file_dep": [*PYODIDE_FILES, WHEEL, ROOT / script], "targets": [SNAPSHOT], "verbosity": 2}


def task_first_figure():
    """Pyodide + matplotlib's wheels -> the first figure's bytecode and font cache"""
    script, figures = "tools/pipeline/figure_bytecode.mjs", ROOT / "tools/sphinx_ext/runner/figures.py"
    return {"actions": [(node_step, [script, PYODIDE.as_posix() + "/", figures], {"target": FIRST_FIGURE})],
            "file_dep": [*PYODIDE_FILES, PYODIDE_PACKAGES, ROOT / script, figures],
            "targets": [FIRST_FIGURE], "verbosity": 2}


def task_outputs():
    """chapter_lib/ + book/*.md -> book/*.ipynb (executing only the pages whose inputs changed)"""
    force = bool(os.environ.get("FORCE"))
    return {"actions": [(outputs_step, [], {"force": force})],
            "file_dep": [ROOT / "_config.yml", ROOT / "_toc.yml", *pages(), LIBRARY_DIGEST, *pipeline_sources()],
            "task_dep": ["diagrams"],  # a broken diagram stops the build before a notebook is rewritten
            "targets": [NOTEBOOKS_DIGEST, FAILED_DIGEST], "uptodate": [no_failed_page, notebooks_as_written, not force],
            "verbosity": 2}


def diagrams_as_written() -> bool:
    return DIAGRAMS_DIGEST.is_file() and DIAGRAMS_DIGEST.read_text() == digest_of(files(ROOT / "book" / "_diagrams"))


def task_diagrams():
    """mermaid fences of book/*.md -> book/_diagrams/*.svg"""
    return {"actions": [diagrams_step], "file_dep": [*pages(), ROOT / "tools/pipeline/draw_diagrams.py",
                                                     ROOT / "tools/pipeline/diagram_font.py"],
            "task_dep": ["lib"],  # a book whose library does not build rewrites nothing
            "targets": [DIAGRAMS_DIGEST], "uptodate": [diagrams_as_written], "verbosity": 2}


def task_html():
    """everything above -> _build/html"""
    pdf = [PDF] if PDF.is_file() else []
    return {"actions": [html_step],
            "file_dep": [*book_sources(), NOTEBOOKS_DIGEST, FAILED_DIGEST, DIAGRAMS_DIGEST, *served_assets(), *pdf],
            "targets": [SITE / "index.html"], "verbosity": 2}


def task_pdf():
    """the pages, their stored outputs and diagrams -> _build/pdf/chapter15.pdf"""
    printing = [ROOT / "tools/pipeline" / f"{name}.py" for name in ("print_pdf", "print_shaping", "print_solutions")]
    return {"actions": [pdf_step],
            "file_dep": [*book_sources(), NOTEBOOKS_DIGEST, DIAGRAMS_DIGEST, *served_assets(), *printing,
                         *sorted((ROOT / "tools" / "checks").glob("*.py")), *sorted((ROOT / "tools" / "browser").glob("*.py"))],
            "targets": [PDF], "verbosity": 2}


def font_step() -> bool:
    from tools.pipeline import diagram_font

    made(DIAGRAM_FONT)
    logging.getLogger("fontTools").setLevel(logging.ERROR)  # its notes on tables it drops, at every build
    diagram_font.write_subset(DIAGRAM_FONT)
    return True


def task_diagram_font():
    """the glyphs the pages use -> the diagrams' font (a subset of Debian's DejaVu Sans)"""
    from tools.pipeline import diagram_font

    return {"actions": [font_step], "file_dep": [*pages(), ROOT / "tools/pipeline/diagram_font.py",
                                                 diagram_font.SOURCE],
            "targets": [DIAGRAM_FONT], "verbosity": 2}


def task_assets():
    """what the page's Python restores and loads, and the diagrams' font, made from the book's own files"""
    return {"actions": None, "task_dep": ["wheel", "snapshot", "first_figure", "diagram_font"]}


def task_book():
    """`make book`: everything, for what changed (the PDF too, once an author has made one)"""
    steps = ["lib", "assets", "diagrams", "outputs", *(["pdf"] if PDF.is_file() else []), "html"]
    return {"actions": None, "task_dep": steps}


# ---- running it --------------------------------------------------------------------------

class StepsReporter(ConsoleReporter):
    """doit's console reporter, quieter: our steps say what they make; up-to-date ones say nothing."""

    def execute_task(self, task):
        pass

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


def doit(arguments: list[str]) -> int:
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
        if state == "R" and name.strip() not in {"book", "assets", "pdf" if not PDF.is_file() else ""}:
            stale.append(name.strip())
    return stale


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv) or ["book"]
    if argv == ["status"]:
        stale = out_of_date()
        print("every artefact is up to date" if not stale else "out of date: " + ", ".join(stale))
        return 1 if stale else 0
    from tools.pipeline import build_book

    return build_book.run_graph(argv, doit)


if __name__ == "__main__":
    sys.exit(main())
