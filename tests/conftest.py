"""Shared fixtures."""

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from built_artefacts import require_built
from markers import derive_markers, needs, needs_are_marked, pytest_fixture_setup  # noqa: F401 (an autouse fixture and a hook: tests/markers.py)

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"

# The tests open their pages in Chromium's headless shell, the same engine as the browser with
# less CPU per context (runnable_book/browser/chromium.py); what the book makes with a browser (the PDF,
# the diagrams) is still made by the browser itself. BOOK_BROWSER=chromium runs them in it.
os.environ.setdefault("BOOK_BROWSER", "chromium-headless-shell")


@pytest.hookimpl(tryfirst=True)  # (the markers each test's fixtures declare, before `-m` selects by them)
def pytest_collection_modifyitems(items):
    """Each test gets the markers its fixtures declare (tests/markers.py). Modules marked `long` first, the others in file order: with pytest-xdist's scheduling by
    module (the Makefile's XDIST), a long module started last holds every other worker idle
    until it ends. (A stable sort: each module's tests stay together and in order.)"""
    derive_markers(items)
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(scope="session")
@needs("site")
def site() -> Path:
    """The built HTML. `make test` builds it first; a bare `pytest -m site` may not have."""
    require_built(SITE / "index.html", "html")
    return SITE


@pytest.fixture(scope="module")
@needs("browser")
def runner(site):
    """A reader's browser on the built site (runnable_book/browser/page_runner.py), once per test module:
    one Chromium, one profile, so Python is downloaded once and cached for the module's pages."""
    from runnable_book.browser.page_runner import BrowserRunner

    with BrowserRunner(site) as browser_runner:
        yield browser_runner


@pytest.fixture(scope="module")
@needs("browser")
def served_site_and_browser(site):
    """The built site served on 127.0.0.1 and Debian's Chromium, once per test module (each
    runs on one pytest-xdist worker): launching a browser costs more than most tests that use
    it. Not once per session: Playwright's sync API runs one instance at a time in a thread,
    and other modules start their own (runnable_book/browser/page_runner.py's BrowserRunner, axe_check)."""
    from runnable_book.browser.chromium import launch
    from runnable_book.browser.local_site import LocalSite

    with LocalSite(site) as served, launch() as browser:
        yield served, browser


@pytest.fixture
def browser_on_site(served_site_and_browser):
    """(the built site served on 127.0.0.1, Debian's Chromium): a test opens its pages in
    contexts of its own (``browser.new_page()``, ``browser.new_context()``: each starts
    empty, no storage or cache shared), all closed after it."""
    served, browser = served_site_and_browser
    yield served, browser
    for context in browser.contexts:
        context.close()


@pytest.fixture
def open_page(browser_on_site):
    """A function that opens a page of the built site in Debian's Chromium.

    Pages are opened at the checker's viewport and returned loaded, their after-paint
    scripts (the theme's among them) run.
    """
    from runnable_book.browser.chromium import VIEWPORT, wait_for_page_scripts

    served, browser = browser_on_site

    def open_(path: str):
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(served.url(path), wait_until="load")
        assert wait_for_page_scripts(page) != "failed", f"{path}: a page script failed to load"
        return page

    return open_



@dataclass(frozen=True)
class ScratchRepository:
    """A copy of the repository's sources (not its environment or builds), to change freely."""

    path: Path

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """``python *args`` in the copy (a tool, pytest): clean_build_compare.python_in.
        No limit of its own: a build of the copy takes minutes on a busy machine; a hang meets
        the suite's (pyproject.toml), and subprocess.run kills the child as that fails the test."""
        from runnable_book.checks.clean_build_compare import python_in

        done = python_in(self.path, *args)
        if check:
            assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done


@pytest.fixture
@needs("whole_book")
def scratch_run():
    """ScratchRepository for a folder the test prepares itself."""
    return ScratchRepository


@pytest.fixture
@needs("whole_book")
def scratch_repository(tmp_path) -> ScratchRepository:
    copy = tmp_path / "repository"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(
        ".venv", "_build", "node_modules", ".git", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info",
        ".ipynb_checkpoints"))
    return ScratchRepository(copy)
