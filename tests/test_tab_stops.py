"""Our override of the theme's keyboard tab stops (runnable_book/sphinx_ext/templates/theme-tab-stops.html).

The theme gives every scrolling code block or output tabindex=0 so a keyboard can scroll
it; our override only keeps it from measuring what sits in a closed <details> until the
reader opens it. These tests pin the selector to the installed theme and check that a
scrolling block in an opened worked solution still gets its tab stop.
"""

import re
from pathlib import Path

import pytest

from runnable_book.browser.page_state import wait_until

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parent.parent
OVERRIDE = ROOT / "runnable_book" / "sphinx_ext" / "templates" / "theme-tab-stops.html"
EXERCISES = "book/15_11_exercises.html"
# In the theme's minified bundle: querySelectorAll(["pre", ...].join(", ")).forEach(e=>{e.tabIndex=
THEME_QUERY = re.compile(r'querySelectorAll\(\[([^\]]+)\]\.join\(", "\)\)\.forEach\(\(?(\w+)\)?=>\{\2\.tabIndex=')


def test_the_override_uses_the_installed_themes_selector(site):
    bundle = (site / "_static" / "scripts" / "pydata-sphinx-theme.js").read_text(encoding="utf-8")
    found = THEME_QUERY.findall(bundle)
    assert len(found) == 1, "the theme's tab-stop query changed: review runnable_book/sphinx_ext/templates/theme-tab-stops.html"
    theme_selector = ", ".join(re.findall(r'"([^"]+)"', found[0][0]))
    assert f'const THEME_SCROLLABLE = "{theme_selector}";' in OVERRIDE.read_text(encoding="utf-8")


def test_an_opened_solution_gets_the_themes_tab_stops(open_page):
    page = open_page(EXERCISES)
    wait_until(page, "() => [...document.querySelectorAll('pre')].some(pre => pre.hasAttribute('tabindex'))")
    assert page.locator("details:not([open]) pre[tabindex]").count() == 0
    solution = page.locator("details").filter(has=page.locator("pre")).first
    solution.locator("summary").click()
    wait_until(page, "() => document.querySelector('details[open] pre[tabindex]')")
    tab_stops = page.evaluate(
        "() => [...document.querySelectorAll('details[open] pre')].map("
        "pre => [pre.tabIndex, pre.scrollWidth > pre.clientWidth || pre.scrollHeight > pre.clientHeight])"
    )
    assert tab_stops and all(tab == (0 if scrolls else -1) for tab, scrolls in tab_stops), tab_stops
    assert any(scrolls for _, scrolls in tab_stops), "expected a solution whose code scrolls sideways"
