"""Start Debian's Chromium, headless, through Playwright: the one way every tool and test does it.

Playwright is only the driver here: it never downloads a browser of its own (no
``playwright install``). The browser is Debian's ``chromium`` package, which
``runnable_book/browser/ensure_debian_package.sh chromium chromium`` installs when it is missing.

    with launch() as browser:                       # a Browser: new_context() as often as needed
        ...
    with open_context(profile=folder) as context:   # one BrowserContext with a profile on disk
        ...

The options a caller chooses, each for a reason of its own:

* ``profile``: a user-data folder (default: a fresh temporary one, removed afterwards). A
  profile kept between two contexts keeps the HTTP cache, which is how a reader's second
  visit is measured.
* off-host blocking: :func:`keep_on_host` stops, before it leaves the machine, every
  request that is not for the given origin (Playwright's routing). Routing switches off
  Chromium's HTTP cache, so a context that must cache blocks by name resolution instead:
  ``open_context(resolve_only_localhost=True)`` makes every host name but 127.0.0.1
  resolve to nothing.

Two of Debian's builds of the same Chromium (one Blink, V8 and Skia, one version):

* ``chromium``, the browser itself: what the book *makes* with a browser (the PDF, the
  diagrams' SVG, whose bytes are artefacts) and what the benchmarks time, as a reader's
  browser runs;
* ``chromium-headless-shell``, Chromium's headless shell, the build Playwright runs its own
  headless tests in: the tests open hundreds of pages and contexts, and the shell starts
  and paints them with less CPU (``make bench-tests`` measures the suite). tests/conftest.py
  chooses it for the whole suite through ``BOOK_BROWSER``; Make installs it with the test
  stages (runnable_book/browser/ensure_debian_package.sh).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from runnable_book.browser.page_state import STATE_TIMEOUT_MS, wait_until
from runnable_book.common.page_scripts import page_function

# What the flags are for: no sandbox (the tools run as root in CI's container); no GPU,
# QUIC, sync, component updates or background networking (this machine has no network
# but the package registries, and Chromium would otherwise try Google's hosts at start).
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Every host name but the local server's address resolves to nothing.
ONLY_LOCALHOST_RESOLVES = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
VIEWPORT = {"width": 1280, "height": 900}
# What Playwright itself logs when a page registers a service worker in a context that blocks
# them (open_context): the harness's message, not the page's, so the checks do not count it.
SERVICE_WORKER_BLOCKED = "Service Worker registration blocked by Playwright"
# Longest console or page-error text a tool keeps in a problem it reports.
MESSAGE_LIMIT = 300

# What the helpers below run in the page: chromium.mjs.
SCRIPT = Path(__file__).with_suffix(".mjs")
# Dark mode without a reload (pydata-sphinx-theme's two attributes).
JS_DARK_THEME = page_function(SCRIPT, "darkTheme")
# Pages load their scripts (theme, copy buttons) once they have painted
# (runnable_book/sphinx_ext/page_assets.py); a check of what a reader sees waits until they have run.
JS_PAGE_SCRIPTS_SETTLED = page_function(SCRIPT, "pageScriptsSettled")
JS_PAGE_SCRIPTS = page_function(SCRIPT, "pageScripts")  # "loaded", "failed" or null (no loader)
PAGE_SCRIPTS_TIMEOUT_MS = STATE_TIMEOUT_MS


# The builds (module docstring); BOOK_BROWSER names the one launch() and open_context() start
# unless the caller names one (the PDF and the diagrams always name BROWSER).
BROWSER = "chromium"
HEADLESS_SHELL = "chromium-headless-shell"
BUILDS = (BROWSER, HEADLESS_SHELL)


def chromium_path(build: str | None = None) -> str:
    build = build or os.environ.get("BOOK_BROWSER") or BROWSER
    if build not in BUILDS:
        raise RuntimeError(f"BOOK_BROWSER={build!r}: expected one of {', '.join(BUILDS)}")
    path = shutil.which(build) or f"/usr/bin/{build}"
    if not Path(path).exists():
        raise RuntimeError(f"{build} is not installed; run `bash runnable_book/browser/ensure_debian_package.sh {build} {build}`")
    return path


def lighthouse_flags() -> str:
    """The same flags as Lighthouse's --chrome-flags (Lighthouse starts Chromium itself)."""
    return " ".join(arg for arg in CHROMIUM_ARGS if arg != "--headless") + " --headless=new"


def generous_expect() -> None:
    """Playwright's `expect` waits STATE_TIMEOUT_MS, not its 5 s, for every browser started
    here: an app that renders progressively (JupyterLab: 4, 5, 6 of 7 headings seen within 5 s
    beside busy processes) reaches the state later, but does reach it. (Its own option is global.)"""
    from playwright.sync_api import expect

    expect.set_options(timeout=STATE_TIMEOUT_MS)


@contextlib.contextmanager
def launch(build: str | None = None, *, resolve_only_localhost: bool = False) -> Iterator:
    """Debian's Chromium as a Playwright Browser; every context made from it starts empty.
    ``build``: BROWSER or HEADLESS_SHELL (default: BOOK_BROWSER's, else BROWSER).
    ``resolve_only_localhost``: block other hosts by name resolution (keeps the HTTP cache)."""
    from playwright.sync_api import sync_playwright

    generous_expect()
    args = [*CHROMIUM_ARGS, *([ONLY_LOCALHOST_RESOLVES] if resolve_only_localhost else [])]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(build), args=args, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def open_context(
    *, profile: Path | str | None = None, resolve_only_localhost: bool = False, viewport: dict = VIEWPORT,
    service_workers: str = "block", **options
) -> Iterator:
    """Debian's Chromium as one persistent BrowserContext (a profile folder on disk).

    ``profile``: the user-data folder to use and keep; None for a fresh temporary one.
    ``resolve_only_localhost``: block other hosts by name resolution (keeps the HTTP cache).
    Service workers are blocked: a page must work without one, and none may outlive a test;
    ``service_workers="allow"`` for a test of the book's own, with a reader's disk cache
    (a context of ``launch()`` keeps its HTTP cache in memory, which holds no file of 6 MB).
    The context's first page is ``context.pages[0]``.
    """
    from playwright.sync_api import sync_playwright

    generous_expect()
    args = [*CHROMIUM_ARGS, *([ONLY_LOCALHOST_RESOLVES] if resolve_only_localhost else [])]
    with contextlib.ExitStack() as stack:
        folder = profile or stack.enter_context(tempfile.TemporaryDirectory(prefix="chromium-profile-"))
        playwright = stack.enter_context(sync_playwright())
        context = playwright.chromium.launch_persistent_context(
            str(folder), executable_path=chromium_path(), args=args, headless=True,
            viewport=viewport, service_workers=service_workers, **options)
        try:
            if not context.pages:
                context.new_page()
            yield context
        finally:
            context.close()


def keep_on_host(context, origin: str, *, also: str = "", on_blocked: Callable[[str], None] | None = None) -> None:
    """Stop every request of ``context`` that is not for ``origin`` before it leaves the machine.

    ``also``: a regular expression of other address prefixes to let through (``data:|blob:``).
    ``on_blocked``: called with each stopped URL, so a check can report it.
    """
    allowed = re.escape(origin) + "/" + (f"|{also}" if also else "")
    not_local = re.compile(f"^(?!{allowed})")

    def stop(route) -> None:
        if on_blocked is not None:
            on_blocked(route.request.url)
        route.abort("blockedbyclient")

    context.route(not_local, stop)


def wait_for_page_scripts(page) -> str | None:
    """Wait for the page's after-paint scripts; returns "loaded", "failed" or None (no loader)."""
    wait_until(page, JS_PAGE_SCRIPTS_SETTLED, timeout=PAGE_SCRIPTS_TIMEOUT_MS)
    return page.evaluate(JS_PAGE_SCRIPTS)


def shorten(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """A console message or page error as one line of at most limit characters, as every
    tool that listens to a page's console reports it: some scripts log whole objects."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
