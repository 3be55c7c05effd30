"""Run every code cell of built pages in headless Chromium, as a reader would with
"Run in your browser", and compare each cell's output with the stored notebook's.

Usage:
    python -m tools.checks.run_check _build/html [--page book/15_01_corpus_and_search_stub.html ...]

Shared by the site tests (tests/test_browser_run.py) and the benchmark
(tools/bench/run_in_browser.py). The standard is nbval's: a cell's stream text (stdout,
stderr) and the text/plain of its values must equal the stored notebook's exactly.
Page cells are matched to stored cells by their source text, not their position, so a
stored cell that the page does not show (e.g. a hidden setup cell) changes nothing.
A cell that draws figures (it imports matplotlib) must also show, for each stored image,
a figure drawn in the page (a PNG the page's Python made, not the stored file) carrying
the stored image's alt text; the figure's text/plain is compared like any value's.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from tools.browser.chromium import SERVICE_WORKER_BLOCKED, open_context, wait_for_page_scripts
from tools.browser.local_site import LocalSite, find_pages
from tools.checks.site_check import shorten
from tools.pipeline.pages import ROOT

BOOK = ROOT / "book"
START_BUTTON = "button.browser-run-at-cell"
LOADER_ID = "browser-run-loader"
PYTHON_READY_TIMEOUT_MS = 120_000
RUN_ALL_TIMEOUT_MS = 180_000

# A figure's output element is read as its text/plain (what nbval compares); its images
# are listed apart: drawn in the page (a data: URL), loaded, shown (not hidden by the runner;
# a worked solution's figure is shown once its fold is opened), with their alt text.
JS_CELLS = """() => window.browserRun.cells.map((c) => ({
    number: c.number,
    source: c.source(),
    state: c.element.dataset.runState,
    outputs: c.output.list(),
    images: [...c.output.container.querySelectorAll('img.browser-run-figure-image')].map((img) => ({
        drawnInPage: img.src.startsWith('data:image/png;base64,'),
        loaded: img.complete && img.naturalWidth > 0,
        visible: !img.closest('[hidden]'),
        alt: img.alt, src: img.src,  // its size: the notebook's, the column's at most (CSS)
        width: +img.getAttribute('width'), height: +img.getAttribute('height'),
    })),
    storedAlts: (c.figureSlots ? c.figureSlots.map((s) => s.img) : [...c.element.querySelectorAll('.cell_output img')])
        .map((img) => img.alt),
    storedImagesShown: [...c.element.querySelectorAll('img:not(.browser-run-figure-image)')]
        .filter((img) => !img.closest('[hidden]')).length,
}))"""

JS_CELL_RAN = "(n) => ['done', 'error'].includes(window.browserRun.cells[n - 1].element.dataset.runState)"
CELL_TIMEOUT_MS = 180_000  # a cell runs the unrun cells above it first (prerequisites)
JS_RUN_FINISHED = """() => document.documentElement.dataset.browserRun === 'idle'
    && window.browserRun.cells.every((c) => !['queued', 'running'].includes(c.element.dataset.runState))"""

JS_FIRST_OUTPUT = "() => !!document.querySelector('.browser-run-output pre')"


# --------------------------------------------------------------------------
# What the stored notebook says
# --------------------------------------------------------------------------


def imports_matplotlib(source: str) -> bool:
    """The test's own rule for a figure cell: an import of matplotlib (read with ast)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(name.split(".")[0] == "matplotlib" for name in names):
            return True
    return False


def expected_outputs(cell) -> list[tuple[str, str]]:
    """A stored cell's outputs as nbval compares them: stream text (consecutive writes to
    one stream joined) and each value's text/plain."""
    outputs: list[tuple[str, str]] = []
    for output in cell.outputs:
        if output.output_type == "stream":
            if outputs and outputs[-1][0] == output.name:
                outputs[-1] = (output.name, outputs[-1][1] + output.text)
            else:
                outputs.append((output.name, output.text))
        elif output.output_type in ("execute_result", "display_data") and "text/plain" in output.data:
            outputs.append(("text/plain", output.data["text/plain"]))
        elif output.output_type == "error":
            outputs.append(("error", output.ename))
    return outputs


def check_figures(cell: dict, stored_cell) -> list[str]:
    """A figure cell as the page shows it after running: one image drawn in the page per
    stored image, each loaded and visible with the stored image's alt text, and no stored
    image left showing."""
    stored = sum("image/png" in o.get("data", {}) for o in stored_cell.outputs)
    images = cell["images"]
    problems = []
    if len(images) != stored:
        problems.append(f"{len(images)} figures drawn in the page, the stored notebook has {stored}")
    for n, image in enumerate(images):
        alt = cell["storedAlts"][n] if n < len(cell["storedAlts"]) else ""
        if not (image["drawnInPage"] and image["loaded"] and image["visible"]):
            problems.append(f"figure {n + 1} is not a visible image drawn in the page: {shorten(str(image))}")
        if not image["alt"] or image["alt"] != alt:
            problems.append(f"figure {n + 1} has alt text {image['alt']!r}, the stored figure {alt!r}")
    if cell["storedImagesShown"]:
        problems.append("the stored figure still shows beside the one drawn in the page")
    return problems


def stored_notebook(page: str) -> Path:
    """book/x.html -> book/x.ipynb in the repository (what nbval checks)."""
    return ROOT / Path(page).with_suffix(".ipynb")


def pages_with_code(site: Path) -> list[str]:
    """Built pages that carry the loader, i.e. have code cells."""
    return [p for p in find_pages(site) if f'id="{LOADER_ID}"' in (site / p).read_text(encoding="utf-8")]


# --------------------------------------------------------------------------
# One page, run in the browser
# --------------------------------------------------------------------------


@dataclass
class PageRun:
    page: str
    cells: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # off-host requests, console errors
    seconds_to_first_output: float = 0.0
    seconds_to_all_outputs: float = 0.0
    bytes_after_click: int = 0
    urls_after_click: list[str] = field(default_factory=list)
    timings: list[dict] = field(default_factory=list)  # window.browserRunTimings: {step, at} (boot.mjs)


@dataclass
class Comparison:
    matched: int = 0  # cells whose output equals the stored one
    runnable: int = 0  # every code cell of the page
    figures: int = 0  # figure cells that drew each of their figures in the page
    problems: list[str] = field(default_factory=list)


def compare(run: PageRun, notebook: Path) -> Comparison:
    """Every page cell against its stored cell, found by source text."""
    stored = {}
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type == "code":
            stored.setdefault(cell.source.rstrip("\n"), cell)
    result = Comparison(problems=list(run.problems))
    for cell in run.cells:
        where = f"{run.page}, code cell {cell['number']}"
        stored_cell = stored.get(cell["source"].rstrip("\n"))
        if stored_cell is None:
            result.problems.append(f"{where}: no cell of {notebook.name} has this source")
            continue
        if imports_matplotlib(stored_cell.source):
            figure_problems = check_figures(cell, stored_cell)
            result.problems += [f"{where}: {problem}" for problem in figure_problems]
            result.figures += not figure_problems
        result.runnable += 1
        expected = [list(o) for o in expected_outputs(stored_cell)]
        if cell["outputs"] == expected:
            result.matched += 1
        else:
            result.problems.append(
                f"{where} ({cell['state']}): output differs from {notebook.name}\n"
                f"  expected: {expected!r}\n  got:      {cell['outputs']!r}")
    return result


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
        if message.text == SERVICE_WORKER_BLOCKED:  # (tools/browser/chromium.py)
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

    def start(self) -> None:
        """Click "Run in your browser" and wait until Python is ready."""
        self.page.click(START_BUTTON)
        self.page.wait_for_function("() => document.documentElement.dataset.browserRun === 'idle'",
                                    timeout=PYTHON_READY_TIMEOUT_MS)

    def wait_until_finished(self) -> None:
        self.page.wait_for_function(JS_RUN_FINISHED, timeout=RUN_ALL_TIMEOUT_MS)

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
        self.page.wait_for_function(JS_FIRST_OUTPUT, timeout=PYTHON_READY_TIMEOUT_MS)
        run.seconds_to_first_output = time.monotonic() - started
        run.timings = self.page.evaluate("() => window.browserRunTimings || []")
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
        self.page.wait_for_function(JS_CELL_RAN, arg=number, timeout=CELL_TIMEOUT_MS)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--page", action="append", dest="pages")
    args = parser.parse_args(argv)
    failed = 0
    with BrowserRunner(args.site) as runner:
        for page in args.pages or pages_with_code(args.site):
            run = runner.run_page(page)
            result = compare(run, stored_notebook(page))
            print(f"{page}: {result.matched}/{result.runnable} cells match, {result.figures} figure cells drawn, "
                  f"first output {run.seconds_to_first_output:.1f} s, all {run.seconds_to_all_outputs:.1f} s")
            for problem in result.problems:
                print("  " + problem)
            failed += bool(result.problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
