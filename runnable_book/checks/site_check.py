"""Check a built HTML site in headless Chromium, the way a reader would see it.

Usage:
    python -m runnable_book.checks.site_check _build/html [--out _build/browser] [--page book/x.html ...]

The site is served on 127.0.0.1 and every page is opened in Debian's Chromium
(driven by Playwright, which never downloads a browser of its own here).
For each page it records, as readable strings that name the page:

* console errors and warnings, and uncaught page errors;
* requests to any host other than the local server (aborted, so nothing
  leaves the machine);
* failed local requests and HTTP statuses >= 400;
* mermaid diagrams that were not drawn or that show mermaid's error text;
* broken images and images without alt text;
* internal links to missing pages or missing anchors;
* a missing favicon (the page's icon link, else /favicon.ico) or meta description.

Each page is then switched to dark mode, its diagrams redrawn, under the same
checks. It also measures bytes served and load time per page, takes a light and a
dark full-page screenshot (with --out; `make test` takes none: about half of the
check's CPU, for pictures no test reads), writes <out>/report.json, prints a
summary table and exits 1 if any problem was found.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import html.parser
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterator
from urllib.parse import quote, unquote, urlsplit

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from runnable_book.browser.chromium import (
    JS_DARK_THEME, SERVICE_WORKER_BLOCKED, keep_on_host, open_context, shorten, wait_for_page_scripts,
)
from runnable_book.browser.local_site import LocalSite, find_pages, is_redirect_page
from runnable_book.common.page_scripts import page_function
from runnable_book.browser.page_state import (  # (shared with the PDF's printer, runnable_book/pipeline/print_pdf.py)
    IMAGES_TIMEOUT_MS, JS_IMAGES, JS_LOAD_ALL_IMAGES, MERMAID_TIMEOUT_MS, NAVIGATION_TIMEOUT_MS, mermaid_status,
    wait_until,
)

SEARCH_TIMEOUT_MS = 10_000
# Link schemes that point at no page, so there is nothing to check.
UNCHECKED_LINK_SCHEMES = {"mailto", "tel", "javascript", "data"}


@dataclass
class PageReport:
    page: str
    bytes: int = 0
    load_ms: float = 0.0
    redirected_to: str | None = None
    problems: list[str] = field(default_factory=list)
    external_links: list[str] = field(default_factory=list)
    screenshots: list[str] = field(default_factory=list)

    def add_problem(self, what: str) -> None:
        problem = f"{self.page}: {what}"
        # The same failure often fires twice (e.g. one image shown twice).
        if problem not in self.problems:
            self.problems.append(problem)


# --------------------------------------------------------------------------
# Anchors of target pages, read from the HTML files
# --------------------------------------------------------------------------


class _AnchorCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.anchors: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" or (name == "name" and tag == "a"):
                self.anchors.add(value or "")


@functools.lru_cache(maxsize=None)
def anchors_in(html_file: Path) -> frozenset[str]:
    collector = _AnchorCollector()
    collector.feed(html_file.read_text(encoding="utf-8", errors="replace"))
    return frozenset(collector.anchors)


# --------------------------------------------------------------------------
# In-page JavaScript
# --------------------------------------------------------------------------

# What the checker reads of a page: site_check.mjs (each function says what it reads).
SCRIPT = Path(__file__).with_suffix(".mjs")
JS_LINKS = page_function(SCRIPT, "links")
JS_HEAD = page_function(SCRIPT, "head")  # the tab's icon and the description
JS_LOAD_MS = page_function(SCRIPT, "loadMs")
JS_SEARCH_FINISHED = page_function(SCRIPT, "searchFinished")
JS_SEARCH_RESULT_LINKS = page_function(SCRIPT, "searchResultLinks")


# --------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------


class BrowserChecker:
    """One headless Chromium, with one fresh profile, reused for every check.

    Use as a context manager; then call check_site() or search() as often as
    needed, for any number of site folders.
    """

    # How long a page's diagrams may take to be drawn (a test that plants one that nothing
    # will draw shortens it: a limit, not what the test checks).
    mermaid_timeout_ms = MERMAID_TIMEOUT_MS

    def __init__(self):
        self._report: PageReport | None = None
        self._site: LocalSite | None = None

    def __enter__(self) -> BrowserChecker:
        self._browser = open_context()
        self._context = self._browser.__enter__()
        try:
            self._page = self._context.pages[0]
            self._page.set_default_timeout(NAVIGATION_TIMEOUT_MS)
            self._listen_for_problems(self._page)
        except BaseException as error:
            self._browser.__exit__(type(error), error, error.__traceback__)
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._browser.__exit__(*exc)

    # -- public API --------------------------------------------------------

    def check_site(
        self, root: Path, pages: list[str] | None = None, out_dir: Path | None = None
    ) -> list[PageReport]:
        """Visit pages (default: all) of the site in root; screenshots go to out_dir (none
        without one)."""
        root = Path(root)
        pages = find_pages(root) if pages is None else pages
        with self._serving(root):
            return [self._check_page(page, out_dir) for page in pages]

    def search(self, root: Path, query: str) -> list[str]:
        """Result links that the site's own search page lists for query."""
        with self._serving(Path(root)) as site:
            self._page.goto(site.url(f"search.html?q={quote(query)}"), wait_until="load")
            try:
                wait_until(self._page, JS_SEARCH_FINISHED, timeout=SEARCH_TIMEOUT_MS)
            except PlaywrightTimeoutError:
                return []
            return self._page.evaluate(JS_SEARCH_RESULT_LINKS)

    # -- serving and network guard ----------------------------------------

    @contextlib.contextmanager
    def _serving(self, root: Path) -> Iterator[LocalSite]:
        with LocalSite(root) as site:
            self._site = site
            # Any URL outside the local origin is aborted before it can leave
            # the machine; the request listener reports it.
            keep_on_host(self._context, site.origin)
            try:
                yield site
            finally:
                self._context.unroute_all(behavior="ignoreErrors")
                self._site = None

    def _listen_for_problems(self, page) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self._problem(f"page error: {shorten(str(error))}"))
        page.on("request", self._on_request)
        page.on("requestfailed", self._on_request_failed)
        page.on("response", self._on_response)

    def _checking(self) -> bool:
        """Whether a page check is running (events between checks are ignored)."""
        return self._report is not None

    def _problem(self, what: str) -> None:
        if self._checking():
            self._report.add_problem(what)

    def _on_console(self, message) -> None:
        if not self._checking() or message.type not in ("error", "warning"):
            return
        # Chromium logs every failed or blocked request as "Failed to load
        # resource", without its URL; the network listeners report each of
        # those with the URL, so this message would only repeat them.
        if message.text.startswith("Failed to load resource") or message.text == SERVICE_WORKER_BLOCKED:
            return
        self._problem(f"console {message.type}: {shorten(message.text)}")

    def _on_request(self, request) -> None:
        if self._checking() and not self._site.is_local(request.url):
            self._problem(f"external request ({request.resource_type}): {request.url}")

    def _on_request_failed(self, request) -> None:
        # ERR_ABORTED means the page (or the next navigation) cancelled the
        # request itself; nothing failed for the reader.
        if request.failure == "net::ERR_ABORTED":
            return
        if self._checking() and self._site.is_local(request.url):
            self._problem(f"request failed ({request.failure}): {request.url}")

    def _on_response(self, response) -> None:
        if self._checking() and response.status >= 400 and self._site.is_local(response.url):
            self._problem(f"HTTP {response.status}: {response.url}")

    # -- one page ----------------------------------------------------------

    def _check_page(self, page_name: str, out_dir: Path | None) -> PageReport:
        report = self._report = PageReport(page_name)
        try:
            self._load_and_inspect(report, out_dir)
        except PlaywrightError as error:
            report.add_problem(f"could not check the page: {error.message.splitlines()[0]}")
        finally:
            self._report = None
        return report

    def _load_and_inspect(self, report: PageReport, out_dir: Path | None) -> None:
        page, site = self._page, self._site
        page.emulate_media(color_scheme="light")
        site.server.take_bytes_served()
        self._open(report)
        self._check_mermaid(report)
        page.evaluate(JS_LOAD_ALL_IMAGES, IMAGES_TIMEOUT_MS)
        report.bytes = site.server.take_bytes_served()
        report.load_ms = round(page.evaluate(JS_LOAD_MS), 1)
        self._check_images(report)
        self._check_head(report)
        self._check_links(report)
        shots = None if out_dir is None else Path(out_dir) / "screenshots" / report.page.removesuffix(".html")
        if shots is not None:
            shots.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=f"{shots}-light.png", full_page=True)
        # Dark mode, checked on every page (what it logs counts as for the light one).
        page.emulate_media(color_scheme="dark")
        page.evaluate(JS_DARK_THEME)
        mermaid_status(self._page, self.mermaid_timeout_ms)  # waited for: the theme switch makes mermaid redraw
        if shots is not None:
            page.screenshot(path=f"{shots}-dark.png", full_page=True)
            report.screenshots = [f"{shots}-light.png", f"{shots}-dark.png"]

    def _open(self, report: PageReport) -> None:
        url = self._site.url(report.page)
        self._page.goto(url, wait_until="load")
        # A redirect page (Jupyter Book's root index.html) moves on by itself
        # right after loading: inspect the page the reader lands on, not one
        # that is being torn down under the checks.
        if is_redirect_page(self._site.root / report.page):
            self._page.wait_for_url(lambda current: current != url)
            self._page.wait_for_load_state("load")
            report.redirected_to = self._site.page_name(self._page.url)
        if wait_for_page_scripts(self._page) == "failed":
            report.add_problem("a script loaded after the first paint failed to load")

    def _check_mermaid(self, report: PageReport) -> None:
        status = mermaid_status(self._page, self.mermaid_timeout_ms)
        for index, block in enumerate(status["blocks"], start=1):
            if block["failed"]:
                report.add_problem(f"mermaid block #{index} shows a mermaid syntax error")
            elif not block["drawn"] and not block["deferred"]:
                report.add_problem(
                    f"mermaid block #{index} not drawn (no <svg> after {self.mermaid_timeout_ms / 1000:g} s)"
                )
            if not block["named"]:
                report.add_problem(f"mermaid block #{index} has no alt text (aria-label)")
        if status["strayErrors"]:
            report.add_problem("mermaid error diagram shown on the page (syntax error in a diagram)")

    def _check_images(self, report: PageReport) -> None:
        for index, image in enumerate(self._page.evaluate(JS_IMAGES), start=1):
            if image["broken"]:
                report.add_problem(f"broken image #{index}: {image['src']}")
            if not image["alt"]:
                report.add_problem(f"image #{index} has no alt text: {image['src']}")

    def _check_head(self, report: PageReport) -> None:
        head = self._page.evaluate(JS_HEAD)
        if not head["description"].strip():
            report.add_problem("no meta description")
        if self._site.is_local(head["icon"]):
            status = self._page.request.get(head["icon"]).status
            if status >= 400:
                report.add_problem(f"favicon: HTTP {status}: {head['icon']}")

    def _check_links(self, report: PageReport) -> None:
        site = self._site
        external = set()
        for href in sorted(set(self._page.evaluate(JS_LINKS))):
            parts = urlsplit(href)
            if parts.scheme in UNCHECKED_LINK_SCHEMES:
                continue
            if not site.is_local(href):
                external.add(href)
                continue
            target = site.file_for(href)
            if target is None:
                report.add_problem(f"dead link: {site.page_name(href)} does not exist")
                continue
            fragment = unquote(parts.fragment)
            if fragment and target.suffix == ".html" and fragment not in anchors_in(target):
                report.add_problem(f"dead anchor: #{fragment} not found in {site.page_name(href)}")
        report.external_links = sorted(external)

# --------------------------------------------------------------------------
# Report and command line
# --------------------------------------------------------------------------


def all_problems(reports: list[PageReport]) -> list[str]:
    return [problem for report in reports for problem in report.problems]


def write_report(reports: list[PageReport], out_dir: Path, seconds: float) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "report.json"
    summary = {
        "seconds": round(seconds, 1),
        "problem_count": len(all_problems(reports)),
        "pages": [asdict(report) for report in reports],
    }
    path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return path


def format_table(reports: list[PageReport]) -> str:
    names = [r.page + (f" -> {r.redirected_to}" if r.redirected_to else "") for r in reports]
    width = max(len(name) for name in ["page", *names])
    lines = [f"{'page':<{width}}  {'KB':>8}  {'ms':>7}  {'problems':>8}"]
    for name, r in zip(names, reports):
        lines.append(f"{name:<{width}}  {r.bytes / 1024:>8.1f}  {r.load_ms:>7.0f}  {len(r.problems):>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="built HTML folder, e.g. _build/html")
    parser.add_argument("--out", type=Path, default=Path("_build/browser"), help="report and screenshots")
    parser.add_argument("--page", action="append", dest="pages", help="check only this page (repeatable)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}/index.html not found: build the site first")

    started = time.monotonic()
    try:
        with BrowserChecker() as checker:
            reports = checker.check_site(args.site, pages=args.pages, out_dir=args.out)
    except RuntimeError as error:  # no Chromium
        print(f"site_check: {error}", file=sys.stderr)
        return 2
    seconds = time.monotonic() - started
    report_path = write_report(reports, args.out, seconds)

    print(format_table(reports))
    print(f"\n{len(reports)} pages in {seconds:.1f} s; report: {report_path}")
    problems = all_problems(reports)
    if problems:
        print(f"\n{len(problems)} problem(s):")
        print("\n".join(f"  {problem}" for problem in problems))
        return 1
    print("no problems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
