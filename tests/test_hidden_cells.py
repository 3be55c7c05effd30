"""A worked solution's fold shows one prompt: "Worked solution N: …" closed, "Hide …" open.

tools/sphinx_ext/valid_markup.py writes myst-nb's two prompts as <span>s (valid inside
<summary>); book/_static/chapter.css shows the one that fits the fold's state. On screen
the opened fold says "Hide …"; printed (the PDF prints solutions opened) it keeps its title.
"""

import pytest

pytestmark = pytest.mark.site

EXERCISES = "book/15_11_exercises.html"
SUMMARY_TEXT = "(i) => document.querySelectorAll('details.hide')[i].querySelector('summary').innerText.trim()"


def test_each_fold_shows_the_prompt_of_its_state(open_page):
    page = open_page(EXERCISES)
    folds = page.locator("details.hide")
    assert folds.count() >= 20, "15.11 has fewer hidden worked-solution cells than expected"
    assert page.evaluate(SUMMARY_TEXT, 0) == "Worked solution 1: show the traces"
    folds.first.locator("summary").click()
    assert page.evaluate(SUMMARY_TEXT, 0) == "Hide worked solution 1"
    page.emulate_media(media="print")
    assert page.evaluate(SUMMARY_TEXT, 0) == "Worked solution 1: show the traces"
