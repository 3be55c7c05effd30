"""What each test needs, as pytest markers, so that `pytest -m ...` selects honestly.

The markers (declared in pyproject.toml):

* ``site``: the built site or PDF (`make html`, `make pdf`);
* ``browser``: Debian's Chromium, started by Playwright or run as a program;
* ``whole_book``: the book itself built or executed (the build graph's steps, the book's
  pages run in a kernel, a copy of the repository built): what `make check` leaves to `make test`;
* ``netns``: Linux namespaces (``unshare``): the grader's sandbox;
* ``kernel``: a Jupyter kernel started (a scratch page executed, nbval on a scratch notebook);
* ``sphinx``: a book built by Sphinx (a scratch book: tests/scratch_book.py);
* ``long``: a module that takes the better part of a minute, started first (tests/conftest.py).

`make check` runs the tests that need none of these (CHECK_SELECTION in the Makefile: a kernel
or a Sphinx build costs seconds of CPU a test, more than a quick loop can hold); `make test`
runs them all.

Most are derived, not written on each test: a fixture says what it needs (``@needs(...)``
under ``@pytest.fixture``), and every test that requests it, however indirectly, gets those
markers at collection. And they are held: while a test runs, the ways into what a marker
names (the graph's entry points, a page of the book executed, a copy of the repository, a
`make` of the book, Playwright, Chromium, ``unshare``) refuse to start for a test that lacks
it, naming the marker, so no test can need a whole-book build and be selected without one.

tests/conftest.py applies both to the suite; ``-p markers`` (with tests/ on the path) to any
other pytest run (tests/test_markers.py plants tests that break the rule).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
NEEDS = ("site", "browser", "whole_book", "netns", "kernel", "sphinx")


def needs(*markers: str):
    """Declare what a fixture needs; every test that requests it gets these markers."""
    unknown = set(markers) - set(NEEDS)
    assert not unknown, f"unknown needs {unknown}: one of {NEEDS}"

    def declare(fixture_function):
        fixture_function.needs = markers
        return fixture_function
    return declare


def derived_markers(item) -> set[str]:
    """The markers an item's fixtures (those it requests, and theirs) declare."""
    info = getattr(item, "_fixtureinfo", None)
    found = set()
    for definitions in (info.name2fixturedefs.values() if info is not None else ()):
        for definition in definitions:
            found.update(getattr(definition.func, "needs", ()))
    return found


def derive_markers(items) -> None:
    for item in items:
        for name in sorted(derived_markers(item) - {mark.name for mark in item.iter_markers()}):
            item.add_marker(name)


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by markers
def pytest_collection_modifyitems(items):
    derive_markers(items)


# ---- held while a test runs ---------------------------------------------------------

class UnmarkedNeed(Exception):
    """A test reached for what a marker names without that marker."""


def refuse(marker: str, what: str):
    test = os.environ.get("PYTEST_CURRENT_TEST", "this test").split(" ")[0]
    raise UnmarkedNeed(f"{test} {what}, which needs the `{marker}` marker: mark it "
                       f"(pytest.mark.{marker}) or request a fixture that declares it (tests/markers.py)")


def in_the_book(path) -> bool:
    return Path(path).resolve().is_relative_to(BOOK)


def need_of_command(argv: list[str], cwd) -> tuple[str, str] | None:
    """(marker, what) for a command a test runs that needs a marker, else None."""
    words = [str(word) for word in argv]
    line = " ".join(words)
    program = os.path.basename(words[0]) if words else ""
    module = words[words.index("-m") + 1] if "-m" in words[:-1] else ""
    if "runnable_book.pipeline.artefact_graph" in line and words[-1] != "status":
        return "whole_book", f"runs the build graph ({line})"
    if "runnable_book.pipeline.execute_pages" in line and "sync" in words:
        return "whole_book", "executes pages (execute_pages sync)"
    targets = [word for word in words[1:] if not word.startswith("-") and "=" not in word]
    if program == "make" and not {"-n", "--dry-run", "--just-print"} & set(words) and targets != ["help"]:
        return "whole_book", f"runs `{line}`"
    if "--nbval" in words and any(in_the_book(Path(cwd or ".") / word) for word in words if word.endswith(".ipynb")):
        return "whole_book", "executes the book's pages under nbval"
    if "--nbval" in words or module == "ipykernel_launcher" or {"nbconvert", "--execute"} <= set(words):
        return "kernel", "starts a Jupyter kernel"
    if module in ("runnable_book.jupyter_book", "sphinx") or program in ("jupyter-book", "sphinx-build"):
        return "sphinx", f"builds a book with Sphinx ({line})"
    if program in ("chromium", "chromium-headless-shell") or "runnable_book.pipeline.print_pdf" in line:
        return "browser", f"starts Chromium ({program or line})"
    if program == "unshare" or module == "runnable_book.grade":
        return "netns", "starts the grader's sandbox"
    return None


def guarded_popen(marks: set[str]):
    original = subprocess.Popen

    class Popen(original):
        def __init__(self, args, *rest, **options):
            argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
            if options.get("shell") and argv and isinstance(argv[0], str):
                argv = argv[0].split()
            need = need_of_command(argv, options.get("cwd"))
            if need and need[0] not in marks:
                refuse(*need)
            super().__init__(args, *rest, **options)
    return Popen


def refusing(marker: str, what: str, original, applies=lambda *args, **kwargs: True):
    def guard(*args, **kwargs):
        if applies(*args, **kwargs):
            refuse(marker, what)
        return original(*args, **kwargs)
    return guard


def first_argument_in_the_book(md, *args, **kwargs) -> bool:
    return in_the_book(md)


def the_repository(path, *args, **kwargs) -> bool:
    return Path(path).resolve() == ROOT


@pytest.fixture(autouse=True)
def needs_are_marked(request, monkeypatch):
    """Hold the test to its markers while it runs (see the module's docstring)."""
    hold(marks_of(request.node), monkeypatch)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """A module- or session-scoped fixture is set up before the test's own autouse fixture:
    hold it to the markers of the test that first requests it (which carries them, derived)."""
    test = getattr(request, "_pyfuncitem", None)
    if fixturedef.scope == "function" or test is None:
        yield
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        hold(marks_of(test), monkeypatch)
        yield


def marks_of(item) -> set[str]:
    return {mark.name for mark in item.iter_markers()}


def hold(marks: set[str], monkeypatch) -> None:
    """Make the ways into what each marker names refuse, for the markers not in `marks`."""
    if "whole_book" in marks:  # (building the book starts kernels and Sphinx)
        marks |= {"kernel", "sphinx"}
    if "whole_book" not in marks:
        from runnable_book.checks import clean_build_compare
        from runnable_book.pipeline import site_build, artefact_graph, execute_pages

        monkeypatch.setattr(artefact_graph, "main", refusing(
            "whole_book", "runs the build graph", artefact_graph.main, lambda argv=None: argv != ["status"]))
        monkeypatch.setattr(site_build, "run_graph", refusing("whole_book", "runs the build graph", site_build.run_graph))
        for name in ("execute", "sync_page"):
            monkeypatch.setattr(execute_pages, name, refusing(
                "whole_book", f"executes a page of the book (execute_pages.{name})", getattr(execute_pages, name),
                first_argument_in_the_book))
        monkeypatch.setattr(site_build, "quiet_html_build", refusing(
            "whole_book", "builds the book's HTML", site_build.quiet_html_build, the_repository))
        for name in ("built_copy", "sources_copy"):
            monkeypatch.setattr(clean_build_compare, name, refusing(
                "whole_book", "copies the repository to build it", getattr(clean_build_compare, name), the_repository))
        monkeypatch.setattr(shutil, "copytree", refusing(
            "whole_book", "copies the repository", shutil.copytree, the_repository))
    if "kernel" not in marks:
        import nbclient

        for name in ("async_execute", "async_start_new_kernel"):
            monkeypatch.setattr(nbclient.NotebookClient, name, refusing(
                "kernel", "starts a Jupyter kernel (nbclient)", getattr(nbclient.NotebookClient, name)))
    if "sphinx" not in marks:
        import jupyter_book.sphinx

        monkeypatch.setattr(jupyter_book.sphinx, "build_sphinx", refusing(
            "sphinx", "builds a book with Sphinx", jupyter_book.sphinx.build_sphinx))
    if "browser" not in marks:
        import playwright.sync_api

        monkeypatch.setattr(playwright.sync_api, "sync_playwright", refusing(
            "browser", "starts Playwright", playwright.sync_api.sync_playwright))
    monkeypatch.setattr(subprocess, "Popen", guarded_popen(marks))
