"""What a built page has drawn and loaded, asked of the page in the browser, and how long
to wait for it: one definition for every tool that opens the book's pages (the site check,
runnable_book/checks/site_check.py; the PDF's printer, runnable_book/pipeline/print_pdf.py; axe,
runnable_book/checks/axe_check.py; the JupyterLab test, tests/test_binder.py; the browser tests).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from runnable_book.common.page_scripts import page_function

NAVIGATION_TIMEOUT_MS = 30_000
# A state a page reaches within a second or two on an idle machine (its scripts run, a click's
# effect shown, a repaint, another tab's write heard, JupyterLab's cells rendered): waited for
# up to a minute. A wait ends when the state holds, so this costs nothing then; it is what a
# busy machine (3-6 times slower: CI's, a newcomer's) still meets, and a state never reached
# fails within it. Playwright's `expect` (5 s by default) and the tests' such waits use it.
STATE_TIMEOUT_MS = 60_000
# The limit on drawing a page's mermaid diagrams, whoever draws them (the HTML's
# sphinxcontrib-mermaid, JupyterLab's renderer): a limit, not a wait (each waits for the drawing).
MERMAID_TIMEOUT_MS = 30_000
IMAGES_TIMEOUT_MS = 10_000
# Text that mermaid draws instead of a diagram when the source does not parse.
MERMAID_ERROR_PATTERN = "Syntax error in text|Parse error"

# The page scripts themselves: page_state.mjs (each says what it reads).
SCRIPT = Path(__file__).with_suffix(".mjs")
# Called with [MERMAID_ERROR_PATTERN, once_settled]: each block deferred, drawn, failed or
# named (has alt text), the error diagrams outside any block, and whether all are settled
# (mermaid_status below waits for that).
JS_MERMAID_STATUS = page_function(SCRIPT, "mermaidStatus")
# Lazy images loaded now, within the time limit it is called with (IMAGES_TIMEOUT_MS).
JS_LOAD_ALL_IMAGES = page_function(SCRIPT, "loadAllImages")
JS_IMAGES = page_function(SCRIPT, "images")
# Painted and still: what colour contrast is judged on, what a screenshot shows.
JS_STILL = page_function(SCRIPT, "still")
JS_OFFLINE_STATE = page_function(SCRIPT, "offlineState")  # (state) <html data-offline> is state
JS_CROSS_ORIGIN_ISOLATED = page_function(SCRIPT, "crossOriginIsolated")
JS_FORGET_SCROLL = page_function(SCRIPT, "forgetScroll")  # (so the first frame compared is not still)
STILL_TIMEOUT_MS = STATE_TIMEOUT_MS  # (frames come late on a busy machine)


def wait_until_still(page) -> None:
    """After a change of theme, size or focus: wait until the page is painted and still
    (polled once a frame: JS_STILL compares a frame with the one before)."""
    page.evaluate(JS_FORGET_SCROLL)
    page.wait_for_function(JS_STILL, timeout=STILL_TIMEOUT_MS, polling="raf")


# Playwright's wait_for_function polls its predicate once an animation frame unless told
# otherwise ("raf"): the page then makes 60 frames a second for as long as a test waits, about
# a tenth of a core spent on waiting, beside the Python the test waits for (`make
# bench-browsers`: a 3-s cell waited for each way). The tests and tools wait for Python, cells,
# workers and drawings for minutes in all, on two cores, so they poll every POLL_MS instead: a
# wait ends at most that much later.
POLL_MS = 50


def wait_until(page, predicate: str, *, arg=None, timeout: float | None = None):
    """``page.wait_for_function(predicate, arg=arg, timeout=timeout)``, polled every POLL_MS
    instead of every frame (page: a Playwright page or frame). Returns its handle."""
    return page.wait_for_function(predicate, arg=arg, timeout=timeout, polling=POLL_MS)


def mermaid_status(page, timeout_ms: float, *, polling: float | str = POLL_MS) -> dict:
    """What the page's mermaid blocks show once each is drawn, failed or deferred, waited for
    up to timeout_ms; past it, what they show then (``settled`` false): the caller says which
    block is not drawn. (polling: the PDF's printer polls once a frame, "raf".)"""
    try:
        return page.wait_for_function(JS_MERMAID_STATUS, arg=[MERMAID_ERROR_PATTERN, True], timeout=timeout_ms,
                                      polling=polling).json_value()
    except PlaywrightTimeoutError:
        return page.evaluate(JS_MERMAID_STATUS, [MERMAID_ERROR_PATTERN, False])
