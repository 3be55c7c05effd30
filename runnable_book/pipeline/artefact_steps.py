"""The build graph's steps: what each arrow of runnable_book/pipeline/artefact_graph.py does, where its
artefacts live, and the up-to-date tests that look at what a step wrote (not only at what it
reads), so a hand edit or a deleted file makes the step run again.

Every step returns True when it made its artefacts, False when it stopped (having said why,
naming the file, cell and line): doit then stops the steps that need it, and keeps the rest.
A step that is another program (pip, node, Chromium) shows that program's output only when it
fails.

site_build (page execution, the HTML build) is imported inside the steps that use it, for
speed, not to dodge a circle (site_build imports nothing of the graph): the graph's `status`
checks every input's digest without loading nbformat, nbclient, jupytext or Sphinx.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
from pathlib import Path

from runnable_book import jupyter_book
from runnable_book.common import built_files
from runnable_book.pipeline import printed_pdfs
from runnable_book.pipeline.pages import FAILED_RUNS as FAILED, pages_in_toc_order, shown
from runnable_book.repository import ROOT, TOOL, named

BUILD = ROOT / "_build"
DIGESTS = BUILD / "digests"
STATIC = built_files.BUILT_STATIC
PYODIDE = STATIC / "pyodide"
PYODIDE_FILES = [PYODIDE / name for name in
                 ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")]
PYODIDE_PACKAGES = PYODIDE / "served-packages.json"
WHEEL = STATIC / built_files.WHEEL
SNAPSHOT = STATIC / built_files.SNAPSHOT
FIRST_FIGURE = STATIC / built_files.FIRST_FIGURE
EDITOR = STATIC / "runner" / "editor.mjs"
# Bundled by Make like the editor, loaded by the page on the first output that needs them: a
# cell's HTML and Markdown (DOMPurify, marked), its LaTeX (temml). Not in the click's download.
OUTPUT_BUNDLES = [STATIC / "runner" / "markup.mjs", STATIC / "runner" / "latex.mjs"]
DIAGRAM_FONT = STATIC / "fonts" / "diagram-sans.woff"
SITE = BUILD / "html"
# The PDFs `make pdf` writes there are named for the book and its chapters: pdf_paths().
PDF_FOLDER = ROOT / printed_pdfs.FOLDER
PRINT_BUILD = BUILD / "print"
SINGLEHTML = PRINT_BUILD / "_build" / "singlehtml"
# Digest files: one line, rewritten only when the content of what they stand for changes.
LIBRARY_DIGEST = DIGESTS / "chapter_lib.sha256"
NOTEBOOKS_DIGEST = DIGESTS / "stored-notebooks.sha256"
DIAGRAMS_DIGEST = DIGESTS / "diagrams.sha256"
FAILED_DIGEST = DIGESTS / "failed-runs.sha256"
SITE_PDF_DIGEST = DIGESTS / "site-pdf.sha256"  # the PDF the site was last built with


def pages() -> list[Path]:
    return pages_in_toc_order()


def files(folder: Path, pattern: str = "*") -> list[Path]:
    return sorted(p for p in folder.glob(pattern) if p.is_file()) if folder.is_dir() else []


def digest_of(paths: list[Path]) -> str:
    sha = hashlib.sha256()
    for path in sorted(paths):
        sha.update(named(path, ROOT).encode() + b"\0" + path.read_bytes() + b"\0")
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


# ---- the steps and their up-to-date tests ------------------------------------------

def lib_step() -> bool:
    from runnable_book.pipeline import extract_library, library_inputs

    # A page changed, but nothing the library is made of (a prose edit): the library is what
    # generating it again would write (library_inputs.py says what it is made of).
    if not library_inputs.unchanged():
        if extract_library.main(["--quiet"]) != 0:
            return False
        library_inputs.record()
    record_digest(LIBRARY_DIGEST, library_files())
    return True


def library_intact() -> bool:
    """doit's up-to-date test for `lib`: False when a generated module was edited by hand,
    so that `lib` runs and names the edit (runnable_book/pipeline/extract_library.py), whatever else changed."""
    from runnable_book.pipeline import extract_library

    if not LIBRARY_DIGEST.is_file() or LIBRARY_DIGEST.read_text() != digest_of(library_files()):
        return False  # a module of chapter_lib changed (a hand-written check) or went missing since
    return not extract_library.hand_edited_modules()


def wheel_step() -> bool:
    made(WHEEL)
    work = BUILD / "wheel"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    (work / "src").mkdir(parents=True)
    WHEEL.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-r", "pyproject.toml", "chapter_lib", str(work / "src")], cwd=ROOT, check=True)
    # SOURCE_DATE_EPOCH: the zip's dates fixed (1980, zip's first year), so the same library
    # makes the same bytes, and a clean build's wheel is an incremental build's.
    # --no-build-isolation: built by this environment's setuptools, pinned in requirements.txt
    # (an isolated build fetched the newest setuptools from the network at every build: a
    # second or more, no build offline, and bytes that could change with a setuptools release).
    if not run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
                "--no-build-isolation", str(work / "src"), "-w", str(work)],
               env={**os.environ, "SOURCE_DATE_EPOCH": "315532800"}):
        return False
    built = next(work.glob("chapter_lib-*.whl"))
    os.replace(built, WHEEL)
    return True


def node_step(script: Path, *arguments: Path, target: Path) -> bool:
    made(target)
    partial = target.with_name(target.name + ".tmp")
    if not run(["node", str(script), *map(str, arguments), str(partial)]):
        partial.unlink(missing_ok=True)
        return False
    os.replace(partial, target)
    return True


def outputs_step(force: bool = False) -> bool:
    """Rewrite every stored notebook (executing the pages whose inputs changed). A page that
    fails is named, and its stored notebook kept; the step still succeeds so that the HTML
    preview shows the error, and `book` exits 1 (the failure is not recorded as done:
    ``no_failed_page`` makes the step run again next time)."""
    from runnable_book.pipeline import site_build
    from runnable_book.pipeline.pages import BookError

    try:
        site_build.RESULT.failures = site_build.sync_outputs(site_build.RESULT.runs, force=force)
    except BookError as error:  # not a page's code (a page that does not read, a hand edit): stop here
        print(f"error: {error}", file=sys.stderr)
        return False
    site_build.RESULT.outputs_done = True
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
    from runnable_book.pipeline import site_build

    if not site_build.ensure_diagrams():
        return False
    record_digest(DIAGRAMS_DIGEST, files(ROOT / "book" / "_diagrams"))
    return True


def html_step() -> bool:
    from runnable_book.pipeline import site_build

    site_build.RESULT.html_status = site_build.build_html()
    if site_build.RESULT.html_status == 0:
        SITE_PDF_DIGEST.parent.mkdir(parents=True, exist_ok=True)
        SITE_PDF_DIGEST.write_text(pdf_state())
    return site_build.RESULT.html_status == 0


def pdf_path() -> Path:
    """The PDF of the whole book `make pdf` writes, named for the book (printed_pdfs.py):
    _build/pdf/chapter15.pdf for a book of one chapter 15, _build/pdf/book.pdf for a book of several."""
    return pdf_paths()[0]


def pdf_paths() -> list[Path]:
    """Every PDF `make pdf` writes: the whole book's, then each chapter's in a book of several."""
    return [PDF_FOLDER / pdf.name for pdf in printed_pdfs.printed_pdfs()]


def pdf_made() -> bool:
    """Whether an author made the PDF (`make pdf`), so that `make book` keeps it up to date:
    any PDF in its folder, one named for the book before its chapter was renumbered included."""
    return any(PDF_FOLDER.glob("*.pdf"))


def pdf_state() -> str:
    """The PDFs the site links and serves: their digest, or that there is none."""
    pdfs = [pdf for pdf in pdf_paths() if pdf.is_file()]
    return digest_of(pdfs) if pdfs else "no PDF\n"


def site_serves_the_pdf() -> bool:
    """doit's up-to-date test for `html`, on the PDF: the site was built with the PDF there is
    now (made or removed in this very run, after the step's inputs were listed, included)."""
    return SITE_PDF_DIGEST.is_file() and SITE_PDF_DIGEST.read_text() == pdf_state()


def pdf_step() -> bool:
    """The singlehtml build, then Chromium prints it (runnable_book/pipeline/print_pdf.py)."""
    from runnable_book.pipeline.site_build import extension_digest_changed, forget_interrupted_build

    pdfs = pdf_paths()
    for pdf in pdfs:
        made(pdf)
    if not run(["bash", str(TOOL / "browser/ensure_debian_package.sh"), "chromium", "chromium"]):
        return False
    command = [*jupyter_book.COMMAND, "build", ".", "--path-output", str(PRINT_BUILD),
               "--builder", "singlehtml", "--warningiserror", "--nitpick", "--keep-going", "--quiet"]
    # Sphinx re-reads pages when they change, not when our extension or templates do.
    if extension_digest_changed(DIGESTS / "print-extension.sha256"):
        command.append("--all")
    try:
        built = run(command)
    except KeyboardInterrupt:  # (Ctrl-C reached the build too: its files may be half-written)
        forget_interrupted_build(PRINT_BUILD / "_build")
        (DIGESTS / "print-extension.sha256").unlink(missing_ok=True)
        raise
    if not built:
        # A build that warned drops Sphinx's environment, or the next one would not read the
        # pages that warned again (unchanged) and would pass.
        (PRINT_BUILD / "_build" / ".doctrees" / "environment.pickle").unlink(missing_ok=True)
        (DIGESTS / "print-extension.sha256").unlink(missing_ok=True)
        return False
    PDF_FOLDER.mkdir(parents=True, exist_ok=True)
    # (a PDF whose print's inputs are as when it was printed is left as it is: a prose edit in
    # one chapter of a book of many prints that chapter's PDF and the book's)
    done = subprocess.run([sys.executable, "-m", "runnable_book.pipeline.print_pdf", str(SINGLEHTML), str(PDF_FOLDER),
                           "--records", str(DIGESTS / "printed-pdfs")], cwd=ROOT)
    if done.returncode == 0:
        # A PDF of an earlier name (the chapter renumbered, a chapter removed): the site would
        # go on serving it beside the new ones.
        for earlier in PDF_FOLDER.glob("*.pdf"):
            if earlier not in pdfs:
                earlier.unlink()
    return done.returncode == 0


def diagrams_as_written() -> bool:
    return DIAGRAMS_DIGEST.is_file() and DIAGRAMS_DIGEST.read_text() == digest_of(files(ROOT / "book" / "_diagrams"))


def font_step() -> bool:
    from runnable_book.pipeline import diagram_font

    made(DIAGRAM_FONT)
    logging.getLogger("fontTools").setLevel(logging.ERROR)  # its notes on tables it drops, at every build
    diagram_font.write_subset(DIAGRAM_FONT)
    return True
