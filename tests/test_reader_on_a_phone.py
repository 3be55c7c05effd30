"""A reader on a phone, in two tabs, with storage refused, in headless Chromium:

- at 390 x 844 with touch: nothing covers Stop while a cell runs, no tooltip stays after the
  contents close, the header's and the folds' targets are 44 px, no key hints, and a wrapped
  editor line continues past its own indentation;
- Stop ends time.sleep as it ends a loop, Python and its variables kept (an isolated page);
- exercise marks made in two tabs merge, and each tab shows the other's at once;
- storage refused: no uncaught error, one statement, and no cell says its edit is kept;
- two copies of the book on one host never see each other's edition notice.
Screenshots land in _build/phone-*.png.
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import pytest
from markers import needs

from runnable_book.browser.page_runner import JS_CELL_IS, JS_CELL_IS_AND_PYTHON_IDLE, JS_PYTHON_IDLE
from runnable_book.browser.page_state import JS_CROSS_ORIGIN_ISOLATED, JS_OFFLINE_STATE, STATE_TIMEOUT_MS, wait_until
from runnable_book.pipeline import book_shape

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parent.parent
PAGE = "book/15_02_one_shot_rag.html"
EXERCISES = "book/15_11_exercises.html"
PHONE = {"width": 390, "height": 844}
TOUCH_TARGET_PX = 44  # WCAG 2.5.5
READY_MS = 120_000
# What a browser that blocks this site's data does: reading either storage throws.
STORAGE_REFUSED = """for (const name of ['localStorage', 'sessionStorage']) {
    Object.defineProperty(window, name, { configurable: true, get() {
        throw new DOMException(`Failed to read the '${name}' property from 'Window': Access is denied for this document.`,
                               'SecurityError'); } });
}"""


@pytest.fixture
@needs("browser")
def browser_at(site):
    """(served site, new_context(**options)) for a folder; contexts block service workers
    unless asked."""
    from runnable_book.browser.chromium import VIEWPORT, launch
    from runnable_book.browser.local_site import LocalSite

    with contextlib.ExitStack() as stack, launch() as browser:
        def open_(folder: Path = site):
            served = stack.enter_context(LocalSite(folder))

            def new_context(**options):
                options = {"viewport": VIEWPORT, "service_workers": "block", **options}
                return browser.new_context(**options)
            return served, new_context
        yield open_


def start_runner(page) -> None:
    page.click("button.browser-run-at-cell")
    wait_until(page, JS_PYTHON_IDLE, timeout=READY_MS)


def type_in_cell(page, number: int, source: str) -> None:
    page.locator("div.cell").nth(number - 1).locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(source)


def test_on_a_phone_nothing_covers_stop_and_every_target_is_large_enough(browser_at):
    served, new_context = browser_at()
    page = new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
    page.goto(served.url(PAGE))
    wait_until(page, "() => document.documentElement.dataset.pageScripts === 'loaded'")
    assert page.evaluate("() => matchMedia('(hover: none)').matches"), "the phone is not emulated as a touch screen"
    # The contents open and close by touch, and leave no tooltip behind (it took the taps on "Run").
    page.locator(".bd-header-article .primary-toggle").tap()
    page.locator("ul.current.bd-sidenav").first.wait_for(state="visible")
    page.mouse.click(PHONE["width"] - 20, PHONE["height"] // 2)  # a tap outside closes them
    page.locator("ul.current.bd-sidenav").first.wait_for(state="hidden")
    page.wait_for_timeout(500)
    tooltips = page.evaluate("() => [...document.querySelectorAll('.tooltip')].filter((t) => t.getClientRects().length"
                             " && getComputedStyle(t).display !== 'none').length")
    assert tooltips == 0
    small = page.evaluate("""(min) => [...document.querySelectorAll('.article-header-buttons .btn')]
        .filter((b) => b.getClientRects().length)
        .map((b) => [b.getAttribute('aria-label') || b.textContent.trim(), b.getBoundingClientRect()])
        .filter(([, r]) => r.width < min - 0.5 || r.height < min - 0.5).map(([name, r]) => `${name} ${r.width}x${r.height}`)""",
                          TOUCH_TARGET_PX)
    assert small == [], small

    start_runner(page)
    assert page.locator(".browser-run-hint").first.is_hidden(), "a keyboard hint on a touch screen"
    # A long indented line wraps past its indentation, not back to column 0.
    type_in_cell(page, 1, "def f():\n    value = " + " + ".join(f"term_{i}" for i in range(30)))
    rows = page.evaluate("""() => {
        const line = document.querySelectorAll('div.cell')[0].querySelectorAll('.cm-line')[1];
        const range = document.createRange();
        range.selectNodeContents(line);
        const rects = [...range.getClientRects()].filter((r) => r.width > 0);
        const indent = document.createRange();
        const text = line.firstChild.nodeType === 3 ? line.firstChild : line.querySelector('span')?.firstChild || line.firstChild;
        return {lefts: [...new Set(rects.map((r) => Math.round(r.left)))], lineLeft: line.getBoundingClientRect().left};
    }""")
    assert len(rows["lefts"]) >= 2, rows
    first_row, continuation = min(rows["lefts"]), max(rows["lefts"])
    assert continuation - first_row >= 4 * 7, rows  # past "    " (4 columns of monospace)

    type_in_cell(page, 1, "while True:\n    pass")
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_IS, arg=[1, "running"])
    page.mouse.wheel(0, 1500)
    page.wait_for_timeout(300)
    page.mouse.wheel(0, -300)  # scrolling up is when the theme shows "Back to top"
    page.wait_for_timeout(500)
    stop = page.get_by_role("button", name="Stop", exact=True)
    covered = page.evaluate("""(stop) => {
        const r = stop.getBoundingClientRect();
        const points = [[0.1, 0.5], [0.5, 0.5], [0.9, 0.5], [0.5, 0.1], [0.5, 0.9]]
            .map(([x, y]) => [r.left + x * r.width, r.top + y * r.height]);
        return points.map(([x, y]) => document.elementFromPoint(x, y))
            .filter((hit) => !stop.contains(hit)).map((hit) => hit && (hit.id || hit.className || hit.tagName));
    }""", stop.element_handle())
    assert page.locator(".browser-run-key").first.is_hidden(), "a keyboard hint on a touch screen"
    page.screenshot(path=str(ROOT / "_build" / "phone-cell-running.png"))
    assert covered == [], f"Stop is covered by {covered}"
    box = stop.bounding_box()
    assert box["height"] >= TOUCH_TARGET_PX - 0.5 and box["width"] >= TOUCH_TARGET_PX - 0.5, box
    stop.tap()
    wait_until(page, JS_CELL_IS, arg=[1, "stopped"], timeout=STATE_TIMEOUT_MS)


# The running cell's first output lines and the Stop bar, where each is in the window.
JS_FIRST_LINES_AND_STOP = """(number) => {
    const output = document.querySelectorAll('div.cell')[number - 1].querySelector('.browser-run-output pre');
    const stop = document.querySelector('.browser-run-floating');
    if (!output || !output.firstChild || !stop || stop.hidden) return null;
    const range = document.createRange();
    range.selectNodeContents(output.firstChild);
    const bar = stop.getBoundingClientRect();
    return {lines: [...range.getClientRects()].slice(0, 3).map((r) => [r.top, r.bottom]),
            bar: [bar.top, bar.bottom], rem: parseFloat(getComputedStyle(document.documentElement).fontSize)};
}"""
# ... scrolled so that the output's first line ends just above where the bar is at the bottom
# (runner.css: 1rem above the window's edge): the next lines under it.
JS_SCROLL_FIRST_LINE_ABOVE_THE_BAR = """(number) => {
    const output = document.querySelectorAll('div.cell')[number - 1].querySelector('.browser-run-output pre');
    const range = document.createRange();
    range.selectNodeContents(output.firstChild);
    const line = range.getClientRects()[0];
    const stop = document.querySelector('.browser-run-floating').getBoundingClientRect();
    const barTop = innerHeight - parseFloat(getComputedStyle(document.documentElement).fontSize) - stop.height;
    scrollBy(0, line.bottom - barTop + 2);
}"""
JS_LINES_CLEAR = f"""(number) => {{
    const s = ({JS_FIRST_LINES_AND_STOP})(number);
    return s !== null && s.lines.length === 3 && s.lines.every(([top, bottom]) => bottom <= s.bar[0] || top >= s.bar[1]);
}}"""


def test_on_a_phone_the_stop_bar_never_covers_the_running_cells_output(browser_at):
    """A cell runs; the reader scrolls its output's first lines to the bottom of the window,
    where the Stop bar (the window's width on a phone) is: the bar moves, and the lines show.
    (Before, the bar moved only off the cell's controls, and covered the lines under them.)"""
    served, new_context = browser_at()
    page = new_context(viewport=PHONE, has_touch=True, is_mobile=True).new_page()
    page.goto(served.url(PAGE))
    start_runner(page)
    # A cell far enough down the page that its output can be scrolled to the window's bottom.
    number = page.evaluate("(h) => [...document.querySelectorAll('div.cell')].findIndex("
                           "(c) => c.getBoundingClientRect().top + scrollY > h) + 1", PHONE["height"])
    assert number > 0
    # The worker sends what a cell printed on its next write past FLUSH_MS (worker.mjs): the
    # last print, a second later, sends the first lines while the cell runs on.
    type_in_cell(page, number, "import time\nprint('line 1\\nline 2\\nline 3')\nstart = time.time()\n"
                 "while time.time() - start < 1:\n    pass\nprint('line 4')\nwhile True:\n    pass")
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_IS, arg=[number, "running"])
    wait_until(page, f"() => ({JS_FIRST_LINES_AND_STOP})({number}) !== null")
    page.evaluate(JS_SCROLL_FIRST_LINE_ABOVE_THE_BAR, number)
    # Placed again on the scroll (an animation frame later): wait for the lines to be clear.
    try:
        wait_until(page, JS_LINES_CLEAR, arg=number, timeout=10_000)
    finally:
        page.screenshot(path=ROOT / "_build" / "phone-stop-and-output.png")
    assert page.evaluate(JS_FIRST_LINES_AND_STOP, number)["lines"][0][1] > PHONE["height"] / 2, "not scrolled down"
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_until(page, JS_CELL_IS_AND_PYTHON_IDLE, arg=[number, "stopped"], timeout=READY_MS)


def test_stop_ends_time_sleep_and_keeps_the_variables(browser_at):
    from runnable_book.browser.page_runner import CELL_TIMEOUT_MS, JS_CELL_RAN, JS_CELLS

    served, new_context = browser_at()
    page = new_context(service_workers="allow").new_page()
    page.goto(served.url(PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
    page.reload()
    assert page.evaluate(JS_CROSS_ORIGIN_ISOLATED) is True
    start_runner(page)
    type_in_cell(page, 1, "x = 42")
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_RAN, arg=1, timeout=CELL_TIMEOUT_MS)
    type_in_cell(page, 1, "import time\ntime.sleep(60)")
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_IS, arg=[1, "running"])
    page.wait_for_timeout(500)
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_until(page, JS_CELL_IS_AND_PYTHON_IDLE, arg=[1, "stopped"], timeout=STATE_TIMEOUT_MS)
    status = page.locator(".browser-run-status").text_content()
    assert "variables are kept" in status and "restarted" not in status, status
    assert "KeyboardInterrupt" in dict(page.evaluate(JS_CELLS)[0]["outputs"]).get("stderr", "")
    type_in_cell(page, 1, "print(x)")
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_RAN, arg=1, timeout=CELL_TIMEOUT_MS)
    assert page.evaluate(JS_CELLS)[0]["outputs"] == [["stdout", "42\n"]]


def test_exercise_marks_merge_across_tabs_and_show_at_once(browser_at):
    without_check = [n for n in book_shape.exercise_numbers() if not book_shape.checks().get(n)]
    assert len(without_check) >= 2, "needs two exercises marked by hand"
    first, second = without_check[:2]
    served, new_context = browser_at()
    context = new_context()
    tab_a, tab_b = context.new_page(), context.new_page()
    for tab in (tab_a, tab_b):
        tab.goto(served.url(EXERCISES))
        tab.wait_for_selector(".exercise-mark-done")
    mark = lambda tab, n: tab.locator(f"section#exercise-{n} .exercise-mark-done").click()  # noqa: E731
    mark(tab_a, first)
    mark(tab_b, second)
    for tab in (tab_a, tab_b):
        wait_until(tab, "() => document.documentElement.dataset.exerciseProgress === '2'", timeout=STATE_TIMEOUT_MS)
    tab_a.reload()
    tab_a.wait_for_selector(".exercise-progress-list")
    done = tab_a.evaluate("() => [...document.querySelectorAll('.exercise-progress-list li.is-done a')].map((a) => a.textContent)")
    assert done == [f"Exercise {first}", f"Exercise {second}"]


def test_with_storage_refused_one_statement_and_no_uncaught_error(browser_at):
    served, new_context = browser_at()
    context = new_context()
    context.add_init_script(STORAGE_REFUSED)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(served.url(PAGE))
    start_runner(page)
    type_in_cell(page, 1, "# mine")
    page.wait_for_timeout(1000)
    status = page.locator(".browser-run-status").text_content()
    assert status.count("cannot be kept in this browser") == 1, status
    mark = page.locator(".browser-run-edited").first
    assert mark.is_visible() and "not kept" in mark.text_content(), mark.text_content()
    page.goto(served.url(EXERCISES))
    page.wait_for_selector(".exercise-progress-title")
    assert "for this visit only" in page.locator(".exercise-progress-title").text_content()
    assert errors == []


def test_two_copies_of_the_book_on_one_host_never_see_each_others_edition(browser_at, site, tmp_path):
    host = tmp_path / "host"
    shutil.copytree(site, host)
    shutil.copytree(site, host / "copy")
    served, new_context = browser_at(host)
    page = new_context(service_workers="allow").new_page()
    page.goto(served.url(PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
    page.goto(served.url("copy/" + PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
    page.wait_for_timeout(1000)
    assert page.locator(".offline-new-edition").count() == 0


def test_after_a_restart_the_stop_notice_names_the_cell_stopped_and_the_one_it_ran_for(browser_at):
    served, new_context = browser_at()  # no service worker: Stop restarts Python
    page = new_context().new_page()
    page.goto(served.url(PAGE))
    start_runner(page)
    for number in (1, 2):
        type_in_cell(page, number, "while True:\n    pass")
    page.keyboard.press("Escape")
    page.locator("div.cell").nth(0).get_by_role("button", name="Run cell 1").click()
    wait_until(page, JS_CELL_IS, arg=[1, "running"])
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_until(page, JS_PYTHON_IDLE, timeout=READY_MS)
    assert "Stopped cell 1. Python was restarted" in page.locator(".browser-run-status").text_content()
    # Cell 3 runs cell 2 first (cell 1 was stopped: skipped); Stop names cell 2, for cell 3.
    page.locator("div.cell").nth(2).get_by_role("button", name="Run cell 3").click()
    wait_until(page, JS_CELL_IS, arg=[2, "running"])
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_until(page, JS_PYTHON_IDLE, timeout=READY_MS)
    status = page.locator(".browser-run-status").text_content()
    assert "Stopped cell 2, run first for cell 3." in status, status


def test_on_a_first_visit_input_says_a_reload_makes_it_read_the_keyboard(browser_at):
    from runnable_book.browser.page_runner import CELL_TIMEOUT_MS, JS_CELL_RAN, JS_CELLS

    served, new_context = browser_at()
    page = new_context(service_workers="allow").new_page()
    page.goto(served.url(PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)  # the worker controls the page now
    assert page.evaluate(JS_CROSS_ORIGIN_ISOLATED) is False
    start_runner(page)
    type_in_cell(page, 1, 'name = input("Name? ")')
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_RAN, arg=1, timeout=CELL_TIMEOUT_MS)
    error = dict(page.evaluate(JS_CELLS)[0]["outputs"]).get("stderr", "")
    assert "until it is reloaded" in error and "reload the page" in error, error


def test_on_a_phone_the_folds_and_the_footers_controls_are_large_enough(browser_at):
    served, new_context = browser_at()
    page = new_context(viewport=PHONE, has_touch=True, is_mobile=True, service_workers="allow").new_page()
    page.goto(served.url(EXERCISES))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
    page.locator(".offline-storage button").first.wait_for()
    assert page.locator("details.admonition.hide > summary").count() >= len(book_shape.exercise_numbers())
    small = page.evaluate("""(min) => [...document.querySelectorAll(
            'details.admonition.hide > summary, .offline-storage button, details.sd-dropdown > summary')]
        .filter((e) => e.getClientRects().length)
        .map((e) => [e.textContent.trim().slice(0, 40), e.getBoundingClientRect().height])
        .filter(([, height]) => height < min - 0.5)""", TOUCH_TARGET_PX)
    assert small == [], small
