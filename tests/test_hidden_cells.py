"""A worked solution's fold shows one prompt: "Worked solution N: …" closed, "Hide …" open.

tools/sphinx_valid_markup.py writes myst-nb's two prompts as <span>s (valid inside
<summary>); book/_static/chapter.css shows the one that fits the fold's state. On screen
the opened fold says "Hide …"; printed (the PDF prints solutions opened) it keeps its title.
"""

import pytest
from playwright.sync_api import sync_playwright

from tools.browser_check import CHROMIUM_ARGS, VIEWPORT, LocalSite, chromium_path

pytestmark = pytest.mark.site

EXERCISES = "book/15_11_exercises.html"
SUMMARY_TEXT = "(i) => document.querySelectorAll('details.hide')[i].querySelector('summary').innerText.trim()"


def test_each_fold_shows_the_prompt_of_its_state(site):
    with LocalSite(site) as served, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(served.url(EXERCISES), wait_until="load")
            folds = page.locator("details.hide")
            assert folds.count() >= 20, "15.11 has fewer hidden worked-solution cells than expected"
            assert page.evaluate(SUMMARY_TEXT, 0) == "Worked solution 1: show the traces"
            folds.first.locator("summary").click()
            assert page.evaluate(SUMMARY_TEXT, 0) == "Hide worked solution 1"
            page.emulate_media(media="print")
            assert page.evaluate(SUMMARY_TEXT, 0) == "Worked solution 1: show the traces"
        finally:
            browser.close()
