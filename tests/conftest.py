"""Shared fixtures."""

import os
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parent.parent / "_build" / "html"


@pytest.fixture(scope="session")
def site() -> Path:
    """The built HTML. `make test` builds it first; a bare `pytest -m site` may not have."""
    if not (SITE / "index.html").is_file():
        message = f"{SITE / 'index.html'} is missing: build the book first (make html)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return SITE


@pytest.fixture
def browser_on_site(site):
    """(the built site served on 127.0.0.1, Debian's Chromium): one browser per test."""
    from tools.browser.chromium import launch
    from tools.browser.local_site import LocalSite

    with LocalSite(site) as served, launch() as browser:
        yield served, browser


@pytest.fixture
def open_page(browser_on_site):
    """A function that opens a page of the built site in Debian's Chromium.

    Pages are opened at the checker's viewport and returned loaded, their after-paint
    scripts (the theme's among them) run.
    """
    from tools.browser.chromium import VIEWPORT, wait_for_page_scripts

    served, browser = browser_on_site

    def open_(path: str):
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(served.url(path), wait_until="load")
        assert wait_for_page_scripts(page) != "failed", f"{path}: a page script failed to load"
        return page

    return open_

