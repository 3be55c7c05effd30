"""Data on the reader's word (runnable_book/sphinx_ext/offline.py, offline_sw.js, offline_page.mjs),
counted at the server, text gzipped as GitHub Pages sends it (runnable_book/browser/local_site.py):

- a first visit costs its page, then at most the pages and the search (the README's promise:
  never a download you did not ask for), and nothing but its page with the data saver on;
- a returning reader who ran code opens a page with figures without downloading matplotlib;
- offline, what is not stored is said in one sentence (Python, a figure), never as fetch
  errors, and a URL outside the book gets the book's own offline page.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from markers import needs

from runnable_book.browser.page_runner import JS_RUN_FINISHED  # (idle, and every output drawn: it is read next)
from runnable_book.browser.page_state import JS_OFFLINE_STATE, wait_until
from runnable_book.sphinx_ext import offline

pytestmark = pytest.mark.site

FIGURE_PAGE = "book/15_04_quality_and_cost.html"
FIRST_PAGE = "book/15_01_corpus_and_search_stub.html"
READY_MS = 120_000
RUN_MS = 240_000
SETTLE_MS = 5_000  # the background keeping starts within a second of the load
# Emulates the browser's data saver for the page (navigator.connection.saveData).
DATA_SAVER = "Object.defineProperty(NetworkInformation.prototype, 'saveData', { get: () => true })"
# The README's promise for a first visit: the pages and the search, at most this, gzipped.
PAGES_BUDGET_BYTES = 2_000_000


@pytest.fixture
@needs("browser")
def gzip_context(site):
    from runnable_book.browser.chromium import VIEWPORT, launch
    from runnable_book.browser.local_site import LocalSite

    with LocalSite(site, gzip=True) as served, launch() as browser:
        contexts = []

        def new_context(*, data_saver: bool = False):
            context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
            if data_saver:
                context.add_init_script(DATA_SAVER)
            contexts.append(context)
            return context

        yield served, new_context


def group_of_each_file(site: Path) -> dict[str, str]:
    return {path: name for name, group in offline.groups(site).items() for path in group["files"]}


def served_groups(site: Path, served) -> dict[str, int]:
    """Bytes served since the last call, by the offline group of each file."""
    groups = group_of_each_file(site)
    by_group: dict[str, int] = {}
    for path, size in served.server.take_paths_served():
        name = groups.get(path.lstrip("/"), "not a file of the book")
        by_group[name] = by_group.get(name, 0) + size
    return by_group


def test_a_first_visit_costs_its_page_then_at_most_the_pages_and_the_search(site, gzip_context):
    """...each file sent whole at most once (the service worker's copy of what the page loaded
    comes from the browser's cache, or as a 304), and no TrueType font where the pages draw
    with woff2 (runnable_book/sphinx_ext/page_assets.py): counted answer by answer at the host."""
    served, new_context = gzip_context
    pages_group = offline.groups(site)["pages"]
    assert pages_group["bytes"] <= PAGES_BUDGET_BYTES, f"the pages and the search weigh {pages_group['bytes']} B"
    assert not [path for path in pages_group["files"] if path.endswith((".ttf", ".otf"))], "a page's file names a TrueType font"
    page = new_context().new_page()
    served.server.take_paths_served()
    served.server.take_responses()
    page.goto(served.url(FIRST_PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
    page.wait_for_timeout(SETTLE_MS)
    by_group = served_groups(site, served)
    assert set(by_group) <= {"pages", "not a file of the book"}, by_group  # (sw.js is not a file of the list)
    assert sum(by_group.values()) <= pages_group["bytes"] + 50_000, by_group
    whole = Counter(response.path for response in served.server.take_responses() if response.status == 200)
    assert not {path: n for path, n in whole.items() if n > 1}, "sent whole more than once"
    assert whole and not [path for path in whole if path.endswith((".ttf", ".otf"))], sorted(whole)


def test_with_the_data_saver_a_first_visit_costs_its_page_alone(site, gzip_context):
    served, new_context = gzip_context
    page = new_context(data_saver=True).new_page()
    served.server.take_paths_served()
    page.goto(served.url(FIRST_PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="partial", timeout=READY_MS)
    page.wait_for_timeout(SETTLE_MS)
    files = set(offline.site_files(site))
    own = offline.referenced(site, files, [FIRST_PAGE]) | {FIRST_PAGE, "sw.js"}
    asked = {path.lstrip("/") for path, _ in served.server.take_paths_served()}
    assert asked <= own, f"downloaded although the page does not load them: {sorted(asked - own)[:5]}"
    line = page.locator(".offline-storage").text_content()
    assert "the data saver is on" in line and "Keep this book for offline use (" in line, line


# The browser forgets Python's snapshot, in the book's store and in its HTTP cache: as a first
# visit that went without it leaves them (runner/worker.mjs, on a line measured slow, as a busy
# machine's local server can be: a CI run met it by chance).
JS_FORGET_SNAPSHOT = """async () => {
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    for (const request of await cache.keys())
      if (request.url.includes('/python-snapshot.')) await cache.delete(request);
  }
}"""


@pytest.mark.parametrize("snapshot", ["kept", "went without"])
def test_a_returning_reader_opens_a_figure_page_without_downloading_matplotlib(site, gzip_context, snapshot):
    """...nor Python: a Python started early (runner/prestart.mjs) fetches nothing, its snapshot
    included when the first visit went without it."""
    served, new_context = gzip_context
    context = new_context()
    page = context.new_page()
    page.goto(served.url(FIRST_PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
    page.click("button.browser-run-at-cell")
    wait_until(page, JS_RUN_FINISHED, timeout=RUN_MS)
    wait_until(page, r"() => /: the pages and the search, Python\./.test("
                           "document.querySelector('.offline-storage').textContent)", timeout=READY_MS)
    if snapshot == "went without":
        page.evaluate(JS_FORGET_SNAPSHOT)
        context.new_cdp_session(page).send("Network.clearBrowserCache")
    served.server.take_paths_served()  # (what the run kept is kept: nothing more from here on)
    page.goto(served.url(FIGURE_PAGE))
    wait_until(page, "() => /ready in this page/.test(document.querySelector('.browser-run-bar').textContent)",
                           timeout=RUN_MS)  # Python started early, from what is stored
    page.wait_for_timeout(SETTLE_MS)
    by_group = served_groups(site, served)
    assert "figures" not in by_group and "python" not in by_group, by_group


def test_offline_what_is_not_stored_is_said_in_one_sentence(site, gzip_context):
    served, new_context = gzip_context
    # Python kept (15.1 ran), the figures' packages not: 15.4 offline runs all but its figures.
    context = new_context()
    page = context.new_page()
    page.goto(served.url(FIRST_PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
    page.click("button.browser-run-at-cell")
    wait_until(page, JS_RUN_FINISHED, timeout=RUN_MS)
    wait_until(page, "() => /: the pages and the search, Python\\./.test("
                           "document.querySelector('.offline-storage').textContent)", timeout=READY_MS)
    context.set_offline(True)
    page.goto(served.url(FIGURE_PAGE))
    page.click("button.browser-run-at-cell")
    page.get_by_role("button", name="Run all", exact=True).click()
    wait_until(page, JS_RUN_FINISHED, timeout=RUN_MS)
    cells = page.evaluate("() => window.browserRun.cells.map((c) => [c.element.dataset.runState, c.element.textContent])")
    failed = [text for state, text in cells if state == "error"]
    assert len(failed) == 1 and "which is not stored for offline use yet" in failed[0], failed
    assert "Failed to fetch" not in failed[0] and "contourpy" not in failed[0], failed[0]
    assert [state for state, _ in cells].index("error") > 0 and cells[0][0] == "done"
    page.locator(".browser-run-output", has_text="not stored").first.scroll_into_view_if_needed()
    page.screenshot(path=str(Path(site).parent / "offline-figure-not-stored.png"))
    # A URL outside the book: the book's own offline page, not the browser's error.
    page.goto(served.url("book/no-such-page.html"))
    assert page.locator("h1").text_content() == "You are offline"

    # Nothing stored (the data saver kept nothing): starting Python says so in one sentence.
    context = new_context(data_saver=True)
    page = context.new_page()
    page.goto(served.url(FIGURE_PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="partial", timeout=READY_MS)
    page.reload()
    context.set_offline(True)
    page.click("button.browser-run-at-cell")
    status = page.locator(".browser-run-status")
    wait_until(page, "() => /not stored for offline use/.test(document.querySelector('.browser-run-status').textContent)",
                           timeout=RUN_MS)
    assert status.text_content().startswith("Python is not stored for offline use yet: run any page once online")
    page.screenshot(path=str(Path(site).parent / "offline-python-not-stored.png"))


# ---- a book of several chapters: a visit keeps its own chapter's pages ---------------------------

def as_two_chapters(site: Path) -> dict[str, str]:
    """This book's pages as if 15.1-15.5 were one chapter and 15.6-15.11 another (the
    worker's list is all that differs in a book of several: offline.chapter_of_pages)."""
    numbered = sorted(path.relative_to(site).as_posix() for path in (site / "book").glob("15_*.html"))
    return {page: "1" if int(page.split("_")[1]) <= 5 else "2" for page in numbered}


def test_in_a_book_of_several_chapters_the_pages_group_has_each_chapters_part(site):
    """Each part holds its chapter's pages and the images only they show; the pages of no
    chapter (the front, the references, the search), the theme's files and the search index are
    every visit's; nothing is in two parts."""
    chapters = as_two_chapters(site)
    pages = offline.groups(site, chapters=chapters)["pages"]
    parts = pages["chapters"]
    assert set(parts) == {"1", "2"}
    assert set(parts["1"]) & set(parts["2"]) == set()
    for page, chapter in chapters.items():
        assert page in parts[chapter], page
    assert set(parts["1"]) | set(parts["2"]) <= set(pages["files"])
    shared = set(pages["files"]) - set(parts["1"]) - set(parts["2"])
    assert {"index.html", "searchindex.js", "book/references.html"} <= shared
    figures = {path for path in parts["1"] if path.startswith("_images/")}
    assert figures, "15.4's figures are its chapter's"
    assert not [path for path in parts["1"] + parts["2"] if path.endswith((".css", ".js", ".mjs"))]
    assert "chapters" not in offline.groups(site)["pages"], "a book of one chapter keeps every page on a visit"


@pytest.fixture
@needs("browser")
def chromium(site):
    from runnable_book.browser.chromium import launch

    with launch() as browser:
        yield browser


def test_a_first_visit_keeps_its_chapters_pages_and_another_chapter_on_a_visit_to_it(site, chromium, tmp_path):
    """Counted at the host: a first visit to chapter 1 never asks for a page of chapter 2; the
    footer says what is kept; a visit to chapter 2 keeps its pages; offline, both chapters open;
    "Keep this book for offline use" keeps the rest."""
    from runnable_book.browser.chromium import VIEWPORT
    from runnable_book.browser.local_site import LocalSite

    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    chapters = as_two_chapters(copy)
    offline.write_worker(copy, chapters=chapters)
    second = sorted(page for page, chapter in chapters.items() if chapter == "2")
    parts = offline.groups(copy, chapters=chapters)["pages"]["chapters"]
    browser = chromium
    with LocalSite(copy, gzip=True) as served:
        context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
        page = context.new_page()
        served.server.take_paths_served()
        page.goto(served.url(FIRST_PAGE))
        wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
        page.wait_for_timeout(SETTLE_MS)
        asked = {path.lstrip("/") for path, _ in served.server.take_paths_served()}
        assert not asked & set(parts["2"]), sorted(asked & set(parts["2"]))
        assert set(parts["1"]) <= asked, sorted(set(parts["1"]) - asked)
        line = page.locator(".offline-storage").text_content()
        assert ": this chapter's pages and the search." in line and "Not kept: the other chapters' pages" in line, line

        context.set_offline(True)  # (chapter 2 not kept yet: its pages say so)
        page.goto(served.url(second[0]))
        assert page.locator("h1").text_content() == "You are offline"
        assert page.get_by_text("This page of").is_visible() and not page.get_by_text("This address").is_visible()
        context.set_offline(False)
        page.goto(served.url(second[0]))  # (a visit to chapter 2 keeps its pages)
        wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
        wait_until(page, "() => /: the pages and the search\\./.test(document.querySelector('.offline-storage').textContent)",
                   timeout=READY_MS)
        context.set_offline(True)
        for name in (FIRST_PAGE, second[-1]):
            response = page.goto(served.url(name))
            assert response is not None and response.ok, name

        # A new reader keeps the whole book on their word.
        context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
        page = context.new_page()
        page.goto(served.url(FIRST_PAGE))
        wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
        page.locator(".offline-keep-all").click()
        wait_until(page, "() => /: the pages and the search[,.]/.test(document.querySelector('.offline-storage').textContent)",
                   timeout=READY_MS)
        context.set_offline(True)
        response = page.goto(served.url(second[-1]))
        assert response is not None and response.ok
