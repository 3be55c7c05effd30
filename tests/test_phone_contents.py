"""The chapter's contents on a phone (runnable_book/sphinx_ext/templates/sidebar-toggle.html).

At 390 px the left sidebar is hidden and the article header's ☰ ("Toggle primary sidebar")
is the only way to the contents. The themes bind it to the pydata header's hidden ☰ (the
first `.primary-toggle` in the page), so without our template a tap showed only the
tooltip. These tests tap it as a student does and open it by keyboard: the contents open in
a dialog (the exercise progress badge beside 15.11 with them) and close again. A wide
screen's ☰ collapses the sidebar. Screenshots: _build/browser-run/phone-contents-*.png.
"""

from __future__ import annotations

import json

import pytest

from runnable_book.browser.page_state import wait_until, wait_until_still
from runnable_book.browser.chromium import JS_DARK_THEME
from runnable_book.repository import ROOT

pytestmark = pytest.mark.site

OUT = ROOT / "_build" / "browser-run"
PAGE = "book/15_02_one_shot_rag.html"
EXERCISES_PATH = "/book/15_11_exercises.html"
PHONE = {"width": 390, "height": 844}
TOGGLE = ".bd-header-article .primary-toggle"
JS_DIALOG_OPEN = "() => document.getElementById('pst-primary-sidebar-modal').open"


@pytest.fixture
def phone(browser_on_site):
    """PAGE at 390 px, touch enabled, with two exercises marked done (the sidebar's badge)."""
    from runnable_book.browser.chromium import wait_for_page_scripts

    served, browser = browser_on_site
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(served.url(PAGE), wait_until="load")
    progress = {"v": 1, "total": 7, "done": {"1": "marked", "3": "check"}}
    page.evaluate("([key, value]) => localStorage.setItem(key, value)",
                  ["browser-run:v1:progress:" + EXERCISES_PATH, json.dumps(progress)])
    page.reload(wait_until="load")
    assert wait_for_page_scripts(page) == "loaded"
    yield page
    context.close()


def test_a_tap_on_the_menu_opens_the_contents_and_they_close_again(phone):
    page = phone
    toggle = page.locator(TOGGLE)
    assert toggle.is_visible() and not page.locator("ul.current.bd-sidenav").is_visible()
    toggle.tap()
    wait_until(page, JS_DIALOG_OPEN)
    contents = page.locator("#pst-primary-sidebar-modal")
    assert contents.get_by_role("link", name="15.3 The agentic retrieval loop").is_visible()
    exercises = contents.locator(".bd-sidenav a.reference.internal", has_text="15.11 Exercises")
    exercises.scroll_into_view_if_needed()
    assert exercises.locator(".exercise-progress-badge").text_content() == "2/7 done"
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=OUT / "phone-contents-open.png")
    page.keyboard.press("Escape")
    wait_until(page, f"() => !({JS_DIALOG_OPEN})()")
    page.locator("ul.current.bd-sidenav").wait_for(state="hidden")  # (after the theme's 0.25 s transition)
    # A tap outside the contents closes them too.
    toggle.tap()
    wait_until(page, JS_DIALOG_OPEN)
    page.mouse.click(PHONE["width"] - 20, PHONE["height"] // 2)
    wait_until(page, f"() => !({JS_DIALOG_OPEN})()")


def test_the_keyboard_opens_the_contents_in_dark_mode(phone):
    page = phone
    page.emulate_media(color_scheme="dark")
    page.evaluate(JS_DARK_THEME)
    page.locator(TOGGLE).focus()
    page.keyboard.press("Enter")
    wait_until(page, JS_DIALOG_OPEN)
    assert page.evaluate("() => !!document.activeElement.closest('#pst-primary-sidebar-modal')")
    wait_until_still(page)  # (the dialog's opening transition, for the screenshot)
    page.screenshot(path=OUT / "phone-contents-dark.png")
    page.keyboard.press("Escape")
    wait_until(page, f"() => !({JS_DIALOG_OPEN})()")
    assert page.evaluate("() => document.activeElement.matches('.bd-header-article .primary-toggle')")


def test_on_a_wide_screen_the_menu_collapses_the_sidebar(open_page):
    page = open_page(PAGE)
    sidebar = page.locator("#pst-primary-sidebar")
    assert sidebar.is_visible()
    page.locator(TOGGLE).click()
    wait_until(page, "() => document.getElementById('pst-primary-sidebar').classList.contains('pst-sidebar-hidden')")
    assert not page.evaluate(JS_DIALOG_OPEN)
