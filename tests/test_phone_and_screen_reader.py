"""The book with a screen reader and on a phone (headless Chromium, the accessible tree from
Chromium's own Accessibility domain):

* a running cell's output is a polite live region, named by its cell, and what the cell prints
  is appended to it (each line read once), not drawn anew;
* every "Mark as done" and every copy button names its exercise or its cell, no two alike;
* at 390 px no page scrolls sideways, and every control (the runner's too, while a cell runs)
  is a 44 px touch target;
* a cell run near the bottom of the window keeps its own controls in view beside the Stop bar,
  and nothing covers Stop. Screenshot: _build/phone-stop-beside-the-cell.png.

The footer's offline controls in dark mode are the axe audit's (tests/test_accessibility.py,
which audits each page with the book's service worker running).
"""

from __future__ import annotations

import re

import pytest

from runnable_book.browser.chromium import VIEWPORT, wait_for_page_scripts
from runnable_book.browser.local_site import find_pages, is_redirect_page
from runnable_book.browser.page_runner import CELL_TIMEOUT_MS, JS_CELL_IS, JS_CELL_RAN, JS_PYTHON_IDLE, START_BUTTON
from runnable_book.browser.page_state import STATE_TIMEOUT_MS, wait_until
from runnable_book.checks.run_check import pages_with_code
from runnable_book.pipeline import book_shape
from runnable_book.repository import ROOT

pytestmark = pytest.mark.site

PHONE = {"width": 390, "height": 844}
TOUCH_TARGET_PX = 44  # WCAG 2.5.5
READY_MS = 120_000
EXERCISES = book_shape.exercises_page().relative_to(ROOT).with_suffix(".html").as_posix()

# Every control a finger may tap, as the reader sees it: buttons, folds, fields, the theme's
# dropdowns and the contents' links; not a link inside a sentence (WCAG 2.5.5's exception), nor
# what is hidden, transparent until hovered (sphinx-copybutton's) or out of the window
# (the skip link, until focused).
JS_SMALL_TARGETS = """(min) => [...document.querySelectorAll(
        'button, summary, input, select, textarea, [role=button], a.btn, .dropdown-toggle, nav a')]
    .filter((e) => {
        const box = e.getBoundingClientRect();
        return e.getClientRects().length && box.bottom > 0 && !e.closest('[hidden]')
            && getComputedStyle(e).visibility !== 'hidden';
    })
    .map((e) => [e.getAttribute('aria-label') || e.textContent.trim().slice(0, 40) || e.className, e.getBoundingClientRect()])
    .filter(([, box]) => box.width < min - 0.5 || box.height < min - 0.5)
    .map(([name, box]) => `${name}: ${Math.round(box.width)}x${Math.round(box.height)}`)"""


def start_runner(page) -> None:
    page.click(START_BUTTON)
    wait_until(page, JS_PYTHON_IDLE, timeout=READY_MS)


def type_in_cell(page, number: int, source: str) -> None:
    page.locator("div.cell").nth(number - 1).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)
    page.keyboard.press("Escape")


def accessible_tree(page) -> list[dict]:
    """The page's accessible tree, as Chromium gives it to a screen reader: [{role, name, properties}]."""
    session = page.context.new_cdp_session(page)
    try:
        nodes = session.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        session.detach()
    return [{"role": node.get("role", {}).get("value"), "name": node.get("name", {}).get("value", ""),
             "properties": {p["name"]: p["value"].get("value") for p in node.get("properties", [])}}
            for node in nodes if not node.get("ignored")]


def test_a_running_cells_output_is_a_polite_live_region_that_grows(browser_on_site, site):
    served, browser = browser_on_site
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(served.url(pages_with_code(site)[0]))
    start_runner(page)
    type_in_cell(page, 1, "import time\nfor i in range(40):\n    print(f'line {i}')\n    time.sleep(0.05)")
    page.locator("div.cell").nth(0).get_by_role("button", name="Run cell 1").click()
    wait_until(page, "() => /line 3/.test(document.querySelector('.browser-run-output').textContent)", timeout=CELL_TIMEOUT_MS)
    page.evaluate("() => { window.firstLine = document.querySelector('.browser-run-output pre').firstChild; }")
    running = next(node for node in accessible_tree(page) if node["name"] == "Output of cell 1")
    assert running["properties"].get("live") == "polite", running
    wait_until(page, JS_CELL_RAN, arg=1, timeout=CELL_TIMEOUT_MS)
    # The first lines are the same text node at the end: what came later was appended, not redrawn.
    assert page.evaluate("() => window.firstLine.isConnected && window.firstLine.textContent.startsWith('line 0')")
    assert page.locator(".browser-run-output").first.text_content().count("line 39") == 1


def test_every_mark_as_done_and_copy_button_names_its_exercise_or_cell(browser_on_site):
    served, browser = browser_on_site
    page = browser.new_page(viewport=VIEWPORT)
    page.goto(served.url(EXERCISES))
    wait_for_page_scripts(page)
    page.wait_for_selector(".exercise-mark-done")
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")  # folds' buttons too
    wait_until(page, "() => document.querySelectorAll('details[open] button.copybtn').length > 0")
    buttons = [node["name"] for node in accessible_tree(page) if node["role"] == "button"]
    marks = [name for name in buttons if name.startswith("Mark as")]
    without_check = [n for n in book_shape.exercise_numbers() if not book_shape.checks().get(n)]
    assert marks == [f"Mark as done: exercise {n}" for n in without_check]
    copies = [name for name in buttons if name.startswith("Copy")]
    assert copies and len(set(copies)) == len(copies), copies
    named = re.compile(r"Copy the (code|output) of cell (\d+)( \(exercise (\d+)\))?")
    assert all(named.fullmatch(name) for name in copies), copies
    in_exercises = {int(named.fullmatch(name)[4]) for name in copies if named.fullmatch(name)[4]}
    assert in_exercises == set(book_shape.exercise_numbers())


def test_at_390_px_no_page_scrolls_sideways_and_every_control_is_44_px(browser_on_site, site):
    served, browser = browser_on_site
    page = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
    wide, small = [], {}
    for name in [p for p in find_pages(site) if not is_redirect_page(site / p)]:
        page.goto(served.url(name))
        wait_for_page_scripts(page)
        width = page.evaluate("() => document.scrollingElement.scrollWidth")
        if width > PHONE["width"]:
            wide.append(f"{name}: {width} px")
        small[name] = page.evaluate(JS_SMALL_TARGETS, TOUCH_TARGET_PX)
    page.goto(served.url(EXERCISES))
    page.locator(".bd-header-article .primary-toggle").tap()  # the contents, opened
    page.locator("ul.current.bd-sidenav").first.wait_for(state="visible")
    small["the contents"] = page.evaluate(JS_SMALL_TARGETS, TOUCH_TARGET_PX)
    assert wide == []
    assert {name: found for name, found in small.items() if found} == {}


def test_a_running_cells_controls_stay_in_view_beside_stop(browser_on_site, site):
    served, browser = browser_on_site
    page = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
    page.goto(served.url(pages_with_code(site)[0]))
    start_runner(page)
    type_in_cell(page, 3, "import time\nwhile True:\n    time.sleep(0.1)")
    bar = page.locator("div.cell").nth(2).locator(".browser-run-cell-bar")
    bar.get_by_role("button", name="Run cell 3").tap()
    wait_until(page, JS_CELL_IS, arg=[3, "running"], timeout=CELL_TIMEOUT_MS)
    hidden = """(element) => [...element.querySelectorAll('button')].filter((b) => b.getClientRects().length).map((b) => {
        const box = b.getBoundingClientRect();
        const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
        return b.contains(hit) ? null : `${b.textContent} under ${hit && (hit.className || hit.tagName)}`;
    }).filter(Boolean)"""
    stop = page.locator(".browser-run-floating")
    # The cell's controls just above the bottom of the window, where the Stop bar is; then in
    # the middle; then just under the header.
    for place, scroll in [("bottom", "bar.getBoundingClientRect().bottom - innerHeight + 24"),
                          ("middle", "bar.getBoundingClientRect().top - innerHeight / 2"),
                          ("top", "bar.getBoundingClientRect().top - 90")]:
        for _ in range(2):  # (again: what the page above it draws meanwhile may move it)
            bar.evaluate(f"(bar) => window.scrollBy({{top: {scroll}, behavior: 'instant'}})")
            page.wait_for_timeout(300)
        if place == "bottom":
            page.screenshot(path=str(ROOT / "_build" / "phone-stop-beside-the-cell.png"))
        assert page.evaluate(JS_CELL_IS, [3, "running"])
        assert bar.evaluate("(bar) => bar.getBoundingClientRect().bottom <= innerHeight"), place
        assert (bar.evaluate(hidden), stop.evaluate(hidden)) == ([], []), place
    stop.get_by_role("button", name="Stop", exact=True).tap()
    wait_until(page, JS_CELL_IS, arg=[3, "stopped"], timeout=STATE_TIMEOUT_MS)
