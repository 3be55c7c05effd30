"""Nothing fetched that the reader did not ask for (runnable_book/sphinx_ext/offline_sw.js, offline_page.mjs).

After a run, the book's service worker keeps for offline use what the run loaded, from the
browser's HTTP cache; it fetches nothing more (the snapshot a start went without, latex.mjs,
markup.mjs, served-packages.json: 2 MB that followed 15.2's first output on a 50 KB/s line and,
on 15.4, shared it with matplotlib). So from a cold profile, after a page's first output, and
after a figure page's first figure, the host is asked nothing at all for a minute.

Watching the host for that minute is what these tests are about, not a timing: a request
made later than that would be unasked too, but a bound is needed, and a minute is longer than
any keeping the worker starts after a run (it begins within a second of the run's message).
"""

from __future__ import annotations

import pytest
from markers import needs

from runnable_book.browser.page_runner import JS_FIRST_OUTPUT, JS_RUN_FINISHED
from runnable_book.browser.page_state import JS_OFFLINE_STATE, wait_until
from runnable_book.pipeline.pages import code_cells, notebook_pages
from runnable_book.sphinx_ext.runner import FIGURE_IMPORTS, imported_names

pytestmark = [pytest.mark.site, pytest.mark.long]  # (a minute watched per test)

READY_MS = 120_000
RUN_MS = 240_000
WATCH_MS = 60_000
JS_FIGURE_DRAWN = "() => !!document.querySelector('img.browser-run-figure-image')"


def draws(md) -> bool:
    return any(imported_names(cell.source) & FIGURE_IMPORTS for cell in code_cells(md))


def page_html(md) -> str:
    return f"book/{md.stem}.html"


# From the book: the first notebook page that draws nothing, and the first that draws.
PLAIN_PAGE = page_html(next(md for md in notebook_pages() if not draws(md)))
FIGURE_PAGE = page_html(next(md for md in notebook_pages() if draws(md)))


@pytest.fixture
@needs("browser")
def cold_page(site):
    """A page in a new profile (no HTTP cache, no service worker), served with gzip as GitHub
    Pages serves it; the server counts every response."""
    from runnable_book.browser.chromium import VIEWPORT, launch
    from runnable_book.browser.local_site import LocalSite

    with LocalSite(site, gzip=True) as served, launch() as browser:
        context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
        yield served, context.new_page()


def open_cold(served, page, name: str) -> None:
    page.goto(served.url(name))
    # The first visit's own keeping (the pages and the search, before any run) is over: what
    # follows the run is the subject here.
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)


# The browser's own update check of the book's worker: starting Python creates a worker, a
# client of the service worker, and Chromium then asks whether sw.js changed, once the service
# worker is idle (so on a busy run, after the first output). A revalidation, answered 304 with
# no body; the page cannot ask the browser not to, and a new edition is found that way.
UPDATE_CHECK = ("/sw.js", 304)


def asked_while_watching(served, page) -> list[tuple[str, int]]:
    served.server.take_responses()
    page.wait_for_timeout(WATCH_MS)  # the watch itself (see the module's docstring)
    asked = [(response.path, response.status) for response in served.server.take_responses()]
    if asked.count(UPDATE_CHECK) == 1:
        asked.remove(UPDATE_CHECK)
    return asked


def run_all_on_a_first_visit(served, page, path: str) -> None:
    open_cold(served, page, path)
    page.click("button.browser-run-at-cell")
    page.get_by_role("button", name="Run all", exact=True).click()


def test_after_a_first_output_nothing_is_fetched_for_a_minute(cold_page):
    served, page = cold_page
    run_all_on_a_first_visit(served, page, PLAIN_PAGE)
    wait_until(page, JS_FIRST_OUTPUT, timeout=RUN_MS)
    assert asked_while_watching(served, page) == []


def test_after_a_first_figure_nothing_is_fetched_for_a_minute(cold_page):
    served, page = cold_page
    run_all_on_a_first_visit(served, page, FIGURE_PAGE)
    wait_until(page, JS_FIGURE_DRAWN, timeout=RUN_MS)
    wait_until(page, JS_RUN_FINISHED, timeout=RUN_MS)  # (what the later cells load, the reader asked for)
    assert asked_while_watching(served, page) == []
