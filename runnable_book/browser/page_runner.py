"""A built page run as a reader runs it, in headless Chromium: open it on the local server,
click "Run in your browser", run all its cells or type into one and run it, and read the
cells as the page shows them, with the console problems and requests seen meanwhile.

The driver of every tool and test that runs a page's Python: the check that every cell
prints the stored outputs (runnable_book/checks/run_check.py), the benchmark
(runnable_book/bench/run_in_browser.py) and the browser tests (tests/test_browser_*.py, ...).
What a run must show is theirs to decide; this module only runs and reads.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from runnable_book.common import built_files
from runnable_book.common.built_files import SITE_STATIC
from runnable_book.common.page_scripts import page_function
from runnable_book.browser.chromium import SERVICE_WORKER_BLOCKED, open_context, shorten, wait_for_page_scripts
from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.page_state import wait_until

START_BUTTON = "button.browser-run-at-cell"
# A document of the site that runs none of the book's scripts (every Sphinx build has it).
PLAIN_DOCUMENT = "_static/basic.css"
SNAPSHOT = f"{SITE_STATIC}/{built_files.SNAPSHOT}"  # (the site's copy of it)
PYTHON_READY_TIMEOUT_MS = 120_000
RUN_ALL_TIMEOUT_MS = 180_000

# What the runner asks of the page: page_runner.mjs (each function says what it reads).
SCRIPT = Path(__file__).with_suffix(".mjs")
# Every cell as the page shows it: number, source, state, outputs (text/plain for a figure, as
# nbval compares), the images it drew (drawn in the page, loaded, shown, alt text, size) and
# the stored ones.
JS_CELLS = page_function(SCRIPT, "cells")
# (n) cell n has run, and what it output is drawn (the page draws a cell's output on the next
# animation frame, and JS_CELLS reads the images from what is drawn: once, on a loaded
# machine, a figure cell was read between its "done" and that frame, its text and no image).
JS_CELL_RAN = page_function(SCRIPT, "cellRan")
CELL_TIMEOUT_MS = 180_000  # a cell runs the unrun cells above it first (prerequisites)
# Python idle, no cell queued or running, every output drawn.
JS_RUN_FINISHED = page_function(SCRIPT, "runFinished")
JS_FIRST_OUTPUT = page_function(SCRIPT, "firstOutput")
JS_PYTHON_IDLE = page_function(SCRIPT, "pythonIdle")  # Python started, running nothing
JS_TIMINGS = page_function(SCRIPT, "timings")  # when each step of its start ended
JS_CELL_IS = page_function(SCRIPT, "cellIs")  # ([n, state]) cell n is in that run state
JS_CELL_STATE = page_function(SCRIPT, "cellState")  # (n) cell n's run state
# ([n, state]) cell n is in that run state and Python idle again (after a Stop)
JS_CELL_IS_AND_PYTHON_IDLE = page_function(SCRIPT, "cellIsAndPythonIdle")
JS_CLEAR_STORAGE = page_function(SCRIPT, "clearStorage")  # the origin's localStorage emptied


@dataclass
class PageRun:
    """What BrowserRunner.run_page saw of one page: its cells once run, and the cost of running them."""

    page: str
    cells: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # off-host requests, console errors
    seconds_to_first_output: float = 0.0
    seconds_to_all_outputs: float = 0.0
    bytes_after_click: int = 0
    urls_after_click: list[str] = field(default_factory=list)
    timings: list[dict] = field(default_factory=list)  # window.browserRunTimings: {step, at} (boot.mjs)


class BrowserRunner:
    """One headless Chromium with one profile (so one HTTP cache) for many pages."""

    def __init__(self, site: Path, profile: Path | None = None):
        self.site_root = Path(site)
        self._profile = profile

    def __enter__(self) -> BrowserRunner:
        self._site = LocalSite(self.site_root).__enter__()
        # No other host can be reached: every name but 127.0.0.1 resolves to nothing, and
        # _on_request reports any attempt. (Not routing, which would switch off the HTTP
        # cache that a reader's second visit relies on.)
        self._browser = open_context(profile=self._profile, resolve_only_localhost=True)
        self.context = self._browser.__enter__()
        self.page = self.context.pages[0]
        self._problems: list[str] | None = None
        self._urls: list[str] = []
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda e: self._problem(f"page error: {shorten(str(e))}"))
        self.context.on("request", self._on_request)
        return self

    def __exit__(self, *exc) -> None:
        self._browser.__exit__(*exc)
        self._site.__exit__(*exc)

    @property
    def origin(self) -> str:
        return self._site.origin

    def _problem(self, text: str) -> None:
        if self._problems is not None:
            self._problems.append(text)

    def _on_console(self, message) -> None:
        if message.text == SERVICE_WORKER_BLOCKED:  # (runnable_book/browser/chromium.py)
            return
        if message.type in ("error", "warning") and not message.text.startswith("Failed to load resource"):
            self._problem(f"console {message.type}: {shorten(message.text)}")

    def _on_request(self, request) -> None:
        self._urls.append(request.url)
        if not self._site.is_local(request.url):
            self._problem(f"request to another host: {request.url}")

    def open(self, page: str) -> None:
        self._problems, self._urls = [], []
        self.page.goto(self._site.url(page), wait_until="load")
        wait_for_page_scripts(self.page)

    def open_afresh(self, page: str) -> None:
        """Open page with nothing kept from before: the page open now is left first (what it
        keeps when it is left is written then), the site's local storage is cleared from one of
        its stylesheets (a document of the site where no script of the book runs to write it
        again), and page is opened once. (Every step has a time limit; DevTools'
        Storage.clearDataForOrigin, used before, has none.)"""
        self.page.goto(self._site.url(PLAIN_DOCUMENT), wait_until="load")
        self.page.evaluate(JS_CLEAR_STORAGE)
        self.open(page)

    def keep_snapshot(self) -> None:
        """Put Python's snapshot in this browser's HTTP cache, as an earlier visit leaves it:
        the next start restores Python from it whatever the line. (A first visit fetches it
        only over a line measured fast enough, runner/worker.mjs, which a busy machine's local
        server may not be.) Call on an open page of the site."""
        self.page.evaluate("url => fetch(url).then((answer) => answer.arrayBuffer())",
                           self._site.url(SNAPSHOT))

    def start(self) -> None:
        """Click "Run in your browser" and wait until Python is ready."""
        self.page.click(START_BUTTON)
        wait_until(self.page, JS_PYTHON_IDLE,
                                    timeout=PYTHON_READY_TIMEOUT_MS)

    def wait_until_finished(self) -> None:
        wait_until(self.page, JS_RUN_FINISHED, timeout=RUN_ALL_TIMEOUT_MS)

    def run_page(self, page: str, glance_seconds: float = 0) -> PageRun:
        """Open page, click the control (after glance_seconds, as a reader looks first), then
        Run all; the cells as the page shows them."""
        run = PageRun(page)
        self.open(page)
        self.page.wait_for_timeout(glance_seconds * 1000)
        self._site.server.take_bytes_served()
        self._urls = []
        started = time.monotonic()
        self.page.click(START_BUTTON)
        self.page.get_by_role("button", name="Run all", exact=True).click()
        wait_until(self.page, JS_FIRST_OUTPUT, timeout=PYTHON_READY_TIMEOUT_MS)
        run.seconds_to_first_output = time.monotonic() - started
        run.timings = self.page.evaluate(JS_TIMINGS)
        self.wait_until_finished()
        run.seconds_to_all_outputs = time.monotonic() - started
        run.bytes_after_click = self._site.server.take_bytes_served()
        run.urls_after_click = list(self._urls)
        run.cells = self.page.evaluate(JS_CELLS)
        run.problems = list(self._problems)
        return run

    def type_and_run(self, number: int, source: str) -> dict:
        """Replace cell ``number``'s code by typing, as a reader does, run it (Shift+Enter)
        and return the cell once it has run."""
        self.page.locator("div.cell").nth(number - 1).locator(".cm-content").click()
        self.page.keyboard.press("Control+a")
        self.page.keyboard.insert_text(source)
        self.page.keyboard.press("Shift+Enter")
        wait_until(self.page, JS_CELL_RAN, arg=number, timeout=CELL_TIMEOUT_MS)
        return self.cells()[number - 1]

    def cells(self) -> list[dict]:
        return self.page.evaluate(JS_CELLS)

    def problems(self) -> list[str]:
        """Off-host requests and console errors since the page was opened."""
        return list(self._problems or [])

    def take_bytes_served(self) -> int:
        """Bytes the local server sent since the last call."""
        return self._site.server.take_bytes_served()

    def requested(self) -> list[str]:
        """Every URL requested since the page was opened."""
        return list(self._urls)
