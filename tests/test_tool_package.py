"""The tool as a package of its own, runnable-book (runnable_book/pyproject.toml, `make tool-wheel`):
its wheel holds every file of the folder, and installed apart from this repository it works on a
book from inside that book's folder, reading the book's files and its own from where it is: this
book copied without the tool, a book of two chapters (tests/fixture_book/), and the new book its
`new` command writes (runnable_book/new_book/), built and tested by its own commands."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml
from pypdf import PdfReader

from built_artefacts import require_built
from runnable_book.checks.clean_build_compare import MADE_BY_MAKE
from runnable_book import new_book
from runnable_book.common import tested_versions  # (the module: pytest collects a function whose name starts "test")
from runnable_book.pipeline import npm_assets
from runnable_book.pipeline.pages import page_title, read_page
from runnable_book.pipeline.print_finish import outline_pages
from runnable_book.release import tool_wheel
from runnable_book.repository import ROOT, TOOL

pytestmark = pytest.mark.long  # (the wheel built; the fixture book's pages executed, its snapshot and site built)


TOOL_HARNESS = TOOL / "library_modules" / "exercise_harness.py"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return tool_wheel.build(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The wheel installed into a folder of its own (this environment gives its dependencies)."""
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
                   check=True)
    return site


@pytest.fixture
def book_without_the_tool(tmp_path) -> Path:
    """This book's committed files, but for the tool's folder."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    copy = tmp_path / "another-book"
    for name in filter(None, files.split("\0")):
        if name.startswith("runnable_book/") or not (ROOT / name).is_file():
            continue
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    return copy


# A commit's author, for the books the tests make repositories of.
GIT_AUTHOR = {"GIT_AUTHOR_NAME": "A test", "GIT_AUTHOR_EMAIL": "test@example.org",
              "GIT_COMMITTER_NAME": "A test", "GIT_COMMITTER_EMAIL": "test@example.org"}


def run_installed(site: Path, code: list[str], cwd: Path, extra: dict | None = None,
                  before: list[list[str]] = ()) -> subprocess.CompletedProcess:
    """``python <code>`` in ``cwd`` with the installed tool (``extra``: more of the environment;
    ``before``: commands run first in the same environment)."""
    environment = {k: v for k, v in os.environ.items() if k not in ("RUNNABLE_BOOK_ROOT", "MAKEFLAGS", "MAKELEVEL")}
    environment.update({"PYTHONPATH": str(site), **(extra or {})})
    for command in before:
        subprocess.run(command, cwd=cwd, env=environment, check=True)
    # (No wall-time limit of its own: a loaded `make test` once took more than 10 minutes to execute
    # the fixture's four pages here. A hang is the test's limit's to name, with its stack.)
    return subprocess.run([sys.executable, *code], cwd=cwd, env=environment, capture_output=True, text=True)


def test_the_wheel_holds_every_tracked_file_of_the_tool_and_nothing_else(wheel):
    with zipfile.ZipFile(wheel) as archive:
        held = {name.removeprefix("runnable_book/") for name in archive.namelist() if name.startswith("runnable_book/")}
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        tested = archive.read("runnable_book/tested-versions.txt").decode()
    # (pyproject.toml builds the wheel; the wheel's own METADATA says what it said; the versions
    # the tool is tested with, this book's lock, are written in for the books it makes)
    assert held == {path.as_posix() for path in tool_wheel.tracked_files()} - {"pyproject.toml"} | {"tested-versions.txt"}
    assert tested == tested_versions.tested_versions() and "jupyter-book==" in tested
    assert "Name: runnable-book" in metadata.splitlines()
    assert "jupyter-book<2" in metadata


def test_installed_it_finds_the_book_from_a_folder_inside_it_and_its_own_files_where_installed(installed, book_without_the_tool):
    shown = run_installed(installed, ["-c", "from runnable_book.repository import ROOT, TOOL; print(ROOT); print(TOOL)"],
                          cwd=book_without_the_tool / "book")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [str(book_without_the_tool.resolve()), str((installed / "runnable_book").resolve())]


def test_installed_it_checks_that_books_library_and_names_what_is_out_of_sync(installed, book_without_the_tool):
    check = ["-m", "runnable_book.pipeline.extract_library", "--check"]
    in_sync = run_installed(installed, check, cwd=book_without_the_tool)
    assert in_sync.returncode == 0, in_sync.stdout + in_sync.stderr
    assert "in sync" in in_sync.stdout

    page = next(md for md in sorted((book_without_the_tool / "book").glob("*.md")) if "# @save\n" in md.read_text())
    page.write_text(page.read_text().replace("# @save\n", "# @save\nEDITED_IN_THE_OTHER_BOOK = 1\n", 1))
    edited = run_installed(installed, check, cwd=book_without_the_tool)
    assert edited.returncode != 0
    assert "EDITED_IN_THE_OTHER_BOOK" in edited.stdout + edited.stderr


FIXTURE_BOOK = ROOT / "tests" / "fixture_book"


def link_the_served_files(book: Path) -> None:
    """The book's npm install (this repository's, linked) and what the tool made of it here
    (Pyodide's files with matplotlib's wheels, the bundles: made again only if they differ,
    so the book's build takes them as they are, with no download)."""
    (book / "node_modules").symlink_to(ROOT / "node_modules")
    for made in [*(npm_assets.STATIC / name for name in MADE_BY_MAKE), npm_assets.RECORD]:
        made, target = require_built(made, "assets"), book / made.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if made.is_dir() else shutil.copyfile)(made, target)


def executed(output: str) -> list[str]:
    return sorted(re.findall(r"^\s*executed\s+book/(\S+)\.ipynb$", output, re.M))


def stored_text(book: Path, page: str) -> str:
    nb = nbformat.read(book / "book" / f"{page}.ipynb", as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


# (The build graph's marker: here it builds the fixture book, not this one, in seconds.)
@pytest.mark.whole_book
@pytest.mark.kernel
def test_installed_it_builds_a_new_book_of_two_chapters_and_a_change_re_executes_exactly_its_users(installed, tmp_path):
    book = tmp_path / "fixture-book"
    shutil.copytree(FIXTURE_BOOK, book)
    outputs = ["-m", "runnable_book.pipeline.artefact_graph", "outputs"]

    first = run_installed(installed, outputs, cwd=book)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert executed(first.stdout) == sorted(md.stem for md in (FIXTURE_BOOK / "book").glob("*.md") if md.stem != "index")
    # chapter 2's module imports what it uses of chapter 1's; each page ran on the book's own library
    assert re.search(r"^from chapter_lib\.chapter1 import .*\bwords\b", (book / "chapter_lib" / "chapter2.py").read_text(), re.M)
    assert stored_text(book, "01_01_counting") == "3 2\n"
    # 1.2 also holds chapter 1's exercise, in a package of its own (its front matter names it)
    assert stored_text(book, "01_02_counting_used") == ("3\nPASS  exercise 1 (check_long_words): all 2 cases pass, 2 of 2 points\n"
                                                        "  ok   no long word: 'a cat sat' holds none\n"
                                                        "  ok   two long words: 'a little cat sleeps' holds two\n")
    assert stored_text(book, "02_01_reading") == "2.0\n"
    # 2.2's exercise: its worked solution and the tool's check harness generated into the book's
    # library beside its hand-written check, whose verdict the page stores
    exercises = book / "chapter_lib" / "exercises"
    assert sorted(p.name for p in exercises.glob("*.py")) == ["__init__.py", "check_1.py", "harness.py", "points.py", "solution_1.py"]
    assert "Exercise 1 of Section 2.2, worked" in (exercises / "solution_1.py").read_text()
    assert (TOOL_HARNESS.read_text() in (exercises / "harness.py").read_text())
    chapter1 = book / "chapter_lib" / "chapter1_exercises"
    assert sorted(p.name for p in chapter1.glob("*.py")) == ["__init__.py", "check_1.py", "harness.py", "points.py", "solution_1.py"]
    assert "Exercise 1 of Section 1.2, worked" in (chapter1 / "solution_1.py").read_text()
    assert stored_text(book, "02_02_exercises").startswith("PASS  exercise 1 (check_questions): all 2 cases pass, 4 of 4 points\n")

    page = book / "book" / "01_01_counting.md"
    page.write_text(page.read_text().replace('return text.count(".")', 'return text.count(".") + text.count("?")'))
    again = run_installed(installed, outputs, cwd=book)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert executed(again.stdout) == ["01_01_counting", "01_02_counting_used"]  # not 2.1: it uses words alone


# (The build graph's and Sphinx's markers: it builds the fixture book's site, not this book's;
# and the sandbox's: it grades the fixture's exercise.)
@pytest.mark.whole_book
@pytest.mark.kernel
@pytest.mark.sphinx
@pytest.mark.netns
def test_installed_it_builds_a_new_books_site_with_nothing_of_this_chapter_in_it_and_grades_a_class(installed, tmp_path):
    book = tmp_path / "fixture-book"
    shutil.copytree(FIXTURE_BOOK, book)
    link_the_served_files(book)
    served = run_installed(installed, ["-m", "runnable_book.pipeline.npm_assets"], cwd=book)
    assert served.returncode == 0, served.stdout + served.stderr
    assert "making" not in served.stdout

    built = run_installed(installed, ["-m", "runnable_book.pipeline.artefact_graph", "html"], cwd=book)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    site = book / "_build" / "html"
    pages = {path.relative_to(site).as_posix() for path in site.glob("book/*.html")}
    assert pages == {f"book/{md.stem}.html" for md in (FIXTURE_BOOK / "book").glob("*.md")}
    assert (site / "_static" / "pyodide" / "pyodide.asm.wasm.gz").is_file()
    counting = (site / "book" / "01_01_counting.html").read_text()
    assert "browser-run-loader" in counting  # "Run in your browser", from the installed tool
    assert "3 2" in counting  # the stored output, shown
    # the tool's look, not a bare theme's: its stylesheet served and bundled, its templates used
    assert (site / "_static" / "runnable-book.css").is_file()
    assert 'class="book-home"' in counting  # (templates/navbar-logo.html: the logo in a landmark)
    # every page carries the book's exercises for the runner's progress ("1/1 done" in the sidebar),
    # of each chapter's exercise page
    assert '"page": "book/02_02_exercises.html"' in counting and '"name": "check_questions"' in counting
    assert '"page": "book/01_02_counting_used.html"' in counting and '"name": "check_long_words"' in counting
    html = "".join(path.read_text() for path in site.rglob("*.html"))
    assert not re.search(r"chapter ?15|15\.11", html, re.I), "the fixture book's site names this book's chapter"

    # The PDFs of a book of two chapters: the whole book's under its title, and each chapter's of
    # its own pages alone; a page's menu links its chapter's and the book's, the front page the book's.
    printed = run_installed(installed, ["-m", "runnable_book.pipeline.artefact_graph", "pdf", "html"], cwd=book)
    assert printed.returncode == 0, printed.stdout[-3000:] + printed.stderr[-3000:]
    titles = {md.stem: page_title(read_page(md)) for md in (FIXTURE_BOOK / "book").glob("*.md")}
    sections = {"chapter1.pdf": ["01_01_counting", "01_02_counting_used"], "chapter2.pdf": ["02_01_reading", "02_02_exercises"],
                "book.pdf": ["01_01_counting", "01_02_counting_used", "02_01_reading", "02_02_exercises"]}
    assert sorted(path.name for path in (book / "_build" / "pdf").glob("*.pdf")) == sorted(sections)
    for name, stems in sections.items():
        pdf = (book / "_build" / "pdf" / name).read_bytes()
        assert (site / name).read_bytes() == pdf, f"the site publishes another {name}"
        marks = [title for title, _ in outline_pages(pdf)]
        for stem, title in titles.items():
            if stem != "index":
                assert (title in marks) == (stem in stems), (name, title, marks)
        expected = "A fixture book" if name == "book.pdf" else f"Chapter {name[7]}"
        assert PdfReader(io.BytesIO(pdf)).metadata["/Title"] == expected
        assert "Edition 1.0.0" in PdfReader(io.BytesIO(pdf)).pages[0].extract_text(), f"{name} does not say its edition"
    menu = lambda page: re.findall(r'href="(?:\.\./)?((?:book|chapter\d)\.pdf)"', (site / page).read_text())
    assert menu("book/02_01_reading.html") == ["chapter2.pdf", "book.pdf"]
    assert menu("book/01_01_counting.html") == ["chapter1.pdf", "book.pdf"]
    assert menu("book/index.html") == ["book.pdf"]

    # A class graded on each chapter's exercise page (PAGE=, which a book of several needs): one
    # student right, one whose function passes one case of two (the grader runs the page's own
    # check in its sandbox; the points are the page's start cell's).
    unnamed = run_installed(installed, ["-m", "runnable_book.grade", str(tmp_path), "--out", str(tmp_path / "grades")], cwd=book)
    assert unnamed.returncode == 2 and "the book has 2 exercise pages: name the one to grade with PAGE=" in unnamed.stderr \
        and "book/01_02_counting_used.md, book/02_02_exercises.md" in unnamed.stderr, unnamed.stderr
    for page, answers, points in [("book/02_02_exercises.md", ["    return text.count('?')", "    return 2"], 4),
                                  ("01_02_counting_used", ["    return sum(len(w) > 4 for w in text.split())",
                                                           "    return 2"], 2)]:
        submissions = tmp_path / f"submissions-{Path(page).stem}"
        submissions.mkdir()
        stored = nbformat.read(book / "book" / f"{Path(page).stem}.ipynb", as_version=4)
        for student, body in zip(["alice", "bob"], answers):
            for cell in stored.cells:
                if cell.cell_type == "code" and cell.source.startswith("# Exercise 1: start here"):
                    cell.source = re.sub(r"    (raise NotImplementedError|return .*)", body, cell.source)
            nbformat.write(stored, submissions / f"{student}.ipynb")
        grades = tmp_path / f"grades-{Path(page).stem}"
        graded = run_installed(installed, ["-m", "runnable_book.grade", str(submissions), "--page", page,
                                           "--out", str(grades)], cwd=book)
        assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]
        gradebook = (grades / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()
        assert gradebook[0].endswith(",ex1,total,max"), (page, gradebook)
        half = f"{points / 2:g}"
        assert [line.split(",")[-3:] for line in gradebook[1:]] == [[f"{points}"] * 3, [half, half, f"{points}"]], (page, gradebook)


def test_installed_it_writes_a_new_book_only_into_a_new_or_empty_folder(installed, tmp_path):
    new = run_installed(installed, ["-m", "runnable_book", "new", "my-book", "--title", "Counting words"], cwd=tmp_path)
    assert new.returncode == 0, new.stdout + new.stderr
    book = tmp_path / "my-book"
    written = sorted(p.relative_to(book).as_posix() for p in book.rglob("*") if p.is_file())
    template = [p.relative_to(new_book.TEMPLATE) for p in new_book.TEMPLATE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert written == sorted([*(new_book.renamed(p).as_posix() for p in template), "constraints.txt", "requirements.txt"])
    assert {".gitignore", ".github/workflows/pages.yml", "Makefile", "README.md", "book/01_02_exercises.md",
            "chapter_lib/exercises/check_1.py"} <= set(written)
    assert 'title: "Counting words"' in (book / "_config.yml").read_text()
    # the tool's version, and every package it pulls in at the version this book tests it with
    requirements = (book / "requirements.txt").read_text()
    assert "runnable-book==0.1.0" in requirements and "-c constraints.txt" in requirements.splitlines()
    pins = [line for line in (book / "constraints.txt").read_text().splitlines() if not line.startswith("#")]
    ours = [line for line in (ROOT / "requirements.txt").read_text().splitlines() if line and not line.startswith(("#", "-"))]
    assert pins == ours
    # its publishing workflow runs the book's test and publishes what it built, nothing else
    workflow = yaml.safe_load((book / ".github" / "workflows" / "pages.yml").read_text())
    assert [step["run"] for step in workflow["jobs"]["build"]["steps"] if "run" in step] == ["make test"]
    assert {"path": "_build/html"} in [step.get("with") for step in workflow["jobs"]["build"]["steps"]]
    assert "make book" in (book / "README.md").read_text() and "make test" in (book / "README.md").read_text()
    # again, into the same folder: refused, naming it, and nothing changed or left beside it
    before = {p: p.read_bytes() for p in book.rglob("*") if p.is_file()}
    again = run_installed(installed, ["-m", "runnable_book", "new", "my-book"], cwd=tmp_path)
    assert again.returncode == 1 and "my-book is not an empty folder" in again.stderr, again.stderr
    assert {p: p.read_bytes() for p in book.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my-book"]


# (The build graph's and Sphinx's markers: it builds the new book, not this one.)
@pytest.mark.whole_book
@pytest.mark.kernel
@pytest.mark.sphinx
@pytest.mark.timeout(2700)  # (five builds and checks of a book, each minutes long beside busy processes)
def test_installed_it_makes_a_new_book_that_builds_tests_green_releases_an_edition_and_names_what_breaks_it(installed, tmp_path):
    made = run_installed(installed, ["-m", "runnable_book", "new", "my-book"], cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    book = tmp_path / "my-book"
    link_the_served_files(book)
    built = run_installed(installed, ["-m", "runnable_book", "book"], cwd=book)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert stored_text(book, "01_02_exercises").startswith("PASS  exercise 1 (check_longest): all 3 cases pass, 2 of 2 points\n")
    assert (book / "_build" / "html" / "book" / "01_02_exercises.html").is_file()
    tested = run_installed(installed, ["-m", "runnable_book", "test"], cwd=book)
    assert tested.returncode == 0, tested.stdout[-3000:] + tested.stderr[-3000:]
    assert re.search(r"^\d+ passed", tested.stdout, re.M), tested.stdout[-2000:]  # nbval's, on every stored output

    # An edition: `make release` (its `make test` first: the book's Makefile, on this environment).
    subprocess.run(["git", "init", "--quiet", "--initial-branch", "main"], cwd=book, check=True)
    (book / ".gitignore").write_text((book / ".gitignore").read_text() + "node_modules\n")
    released = run_installed(installed, ["-m", "runnable_book.release", "1.1.0"], cwd=book, extra={
        "MAKEFLAGS": f"ENV= PY={sys.executable}", **GIT_AUTHOR}, before=[["git", "add", "-A"], ["git", "commit", "-qm", "A new book"]])
    assert released.returncode == 0, released.stdout[-3000:] + released.stderr[-3000:]
    tags = subprocess.run(["git", "tag"], cwd=book, capture_output=True, text=True, check=True).stdout.split()
    assert tags == ["v1.1.0"] and "## [1.1.0] - " in (book / "CHANGELOG.md").read_text()
    assert 'version = "1.1.0"' in (book / "pyproject.toml").read_text()
    assert "chapter-lib @ git+https://github.com/you/my-book@v1.1.0" in (book / "book" / "01_02_exercises.ipynb").read_text()

    # The author edits a saved function and forgets `make book`: the test names the module out of sync.
    page = book / "book" / "01_01_first_steps.md"
    page.write_text(page.read_text().replace("return text.split()", "return text.lower().split()"))
    stale = run_installed(installed, ["-m", "runnable_book", "test"], cwd=book)
    assert stale.returncode == 1 and "chapter_lib/chapter1.py" in stale.stderr, stale.stdout[-2000:] + stale.stderr[-2000:]
