""""Run in your browser" as a workbench, tested as a student uses it (headless Chromium).

* Keys: every printable ASCII character typed into an editor reaches it (the cell prints
  them back exactly); the page's shortcuts ("/" for doctools' search, Ctrl+K for the
  theme's) do not fire from inside an editor and still do outside. A planted copy of the
  site with the editor's key guard switched off fails the same check.
* Keyboard: Escape then Tab leaves an editor (no time window), with a visible hint that is
  also the editor's accessible description; after the start button, focus is on "Run all".
* Floods: a 200,000-line print loop finishes, its output is shown bounded (and a single
  5 MB line, by characters); Stop stops a
  second, endless one; after the restart the cells that ran say so, and running a later
  cell runs the earlier ones first. Stop never traps: a stopped cell is skipped (with a
  notice) when a later cell runs; on 15.11 an exercise's cells run only that exercise's
  cells first; Stop (Ctrl+., from inside an editor too, or Tab from the
  running cell) keeps the scroll position and the focus.
* Kept work: edit, reload, edit restored and marked, Reset restores; a changed book cell
  under a saved edit (a test copy of the site, altered) is reported with both versions;
  two tabs editing different cells keep both edits (each tab shows the other's), two tabs
  editing one cell keep the later save and offer the other version in the tab that lost it;
  blocked storage and a malformed entry leave a working page; added cells run, are kept
  and can be deleted.
* The downloaded notebook passes nbformat.validate and runs with nbclient in the book's
  environment, the reader's edit and added cell in it.
* Focus and state: Tab reaches the header's "▶ Run" with a visible ring (computed style,
  screenshot), the runner's controls too; a clicked button keeps its border and colour.
* What the page cannot do (%pip, !pip, micropip, a package it does not serve) is said in
  one sentence; tracebacks name cells as the reader sees them; with storage refused, the
  progress box's title says progress lasts for this visit only.
* input() says it is not available; axe-core finds no serious or critical violation with
  the runner active (light and dark); at phone width every control is 44×44 px.

Screenshots go to _build/browser-run/ (work-*.png).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from runnable_book.browser.chromium import JS_DARK_THEME
from runnable_book.checks.axe_check import AXE, BLOCKING_IMPACTS, JS_RUN_AXE
from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.page_state import STATE_TIMEOUT_MS, wait_until, wait_until_still
from runnable_book.browser.page_runner import (
    CELL_TIMEOUT_MS, JS_CELL_IS, JS_CELL_RAN, JS_CELL_STATE, JS_CELLS, JS_PYTHON_IDLE, PYTHON_READY_TIMEOUT_MS, START_BUTTON,
)
from runnable_book.repository import ROOT

pytestmark = pytest.mark.site

OUT = ROOT / "_build" / "browser-run"
PAGE = "book/15_02_one_shot_rag.html"
PRINTABLE = "".join(chr(code) for code in range(32, 127))
TYPED = 'print(r"""' + PRINTABLE + '""")'  # a raw string: every character prints as typed
PHONE = {"width": 390, "height": 844}
# Keys that reach `document` (where doctools.js listens for "/"), recorded by the test.
JS_RECORD_DOCUMENT_KEYS = "() => { window.keysAtDocument = []; document.addEventListener('keydown', (e) => window.keysAtDocument.push(e.key)); }"
JS_SEARCH_OPEN = "() => !!document.querySelector('#pst-search-dialog')?.open"
# What a browser that blocks the site's data does (an init script, run before the page's own):
# reading localStorage throws.
LOCAL_STORAGE_REFUSED = ("Object.defineProperty(window, 'localStorage', "
                         "{get() { throw new DOMException('blocked', 'SecurityError'); }})")


# storage.mjs counts each write of the reader's kept work on <html data-kept-work-writes>.
JS_WRITES = "() => Number(document.documentElement.dataset.keptWorkWrites || 0)"
@contextlib.contextmanager
def saved(*pages):
    """Wait after the block until each of pages has written the reader's work (once more)."""
    before = [page.evaluate(JS_WRITES) for page in pages]
    yield
    for page, writes in zip(pages, before):
        wait_until(page, f"(n) => ({JS_WRITES})() > n", arg=writes)


def settle(page) -> None:
    wait_until_still(page)


def shoot(page, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=OUT / f"work-{name}.png")


def center(locator) -> None:
    locator.evaluate("(e) => e.scrollIntoView({block: 'center'})")


def editor(page, number: int):
    return page.locator("div.cell").nth(number - 1).locator(".cm-content")


def replace_text(page, number: int, source: str, *, typed: bool = False) -> None:
    editor(page, number).click()
    page.keyboard.press("Control+a")
    if typed:
        page.keyboard.type(source)  # one key event per character, as a reader types
    else:
        page.keyboard.insert_text(source)


def run(page, number: int, timeout: int = 60_000) -> None:
    editor(page, number).click()
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_RAN, arg=number, timeout=timeout)


def cell(runner_or_page, number: int) -> dict:
    page = getattr(runner_or_page, "page", runner_or_page)
    return page.evaluate(JS_CELLS)[number - 1]


def open_and_start(page, url: str) -> None:
    page.goto(url, wait_until="load")
    page.click(START_BUTTON)
    wait_until(page, JS_PYTHON_IDLE, timeout=PYTHON_READY_TIMEOUT_MS)


def typed_characters_round_trip(runner, origin: str) -> tuple[str, list, list]:
    """Type every printable character into cell 1 of PAGE (served at origin) and run it:
    (source, outputs, keys that reached `document`)."""
    page = runner.context.new_page()
    try:
        open_and_start(page, f"{origin}/{PAGE}")
        page.evaluate(JS_RECORD_DOCUMENT_KEYS)
        replace_text(page, 1, TYPED, typed=True)
        keys = page.evaluate("() => window.keysAtDocument")
        run(page, 1)
        first = cell(page, 1)
        return first["source"], first["outputs"], keys
    finally:
        page.close()


def site_copy(site, tmp_path):
    """A copy of the built site to alter (served on an origin of its own, so with its own
    localStorage)."""
    copy = tmp_path / "site"
    shutil.copytree(site, copy)
    return copy


@pytest.fixture
def page_started(runner):
    """PAGE opened with no kept work, clicked, Python ready."""
    runner.open_afresh(PAGE)
    runner.start()
    return runner


# ---------------------------------------------------------------------------
# Keys and keyboard
# ---------------------------------------------------------------------------


def test_every_printable_character_reaches_the_editor(runner):
    source, outputs, keys_at_document = typed_characters_round_trip(runner, runner.origin)
    assert source == TYPED
    assert outputs == [["stdout", PRINTABLE + "\n"]]
    assert keys_at_document == [], "keys typed in the editor reached the page's shortcuts"


def test_a_planted_page_shortcut_is_caught(runner, site, tmp_path):
    """The check above, on a copy of the site whose editors no longer keep keys from the
    page (doctools' "/" search shortcut works inside them again): it must fail."""
    planted = site_copy(site, tmp_path)
    keys = planted / "_static" / "runner" / "keys.mjs"
    text = keys.read_text(encoding="utf-8")
    guard = 'host.addEventListener("keydown", (event) => event.stopPropagation());'
    assert guard in text
    keys.write_text(text.replace(guard, ""), encoding="utf-8")
    with LocalSite(planted) as served:
        source, outputs, keys_at_document = typed_characters_round_trip(runner, served.origin)
    assert source != TYPED and "/" not in source, "the planted shortcut should have eaten the '/'"
    assert outputs != [["stdout", PRINTABLE + "\n"]]
    assert "/" in keys_at_document


def test_page_shortcuts_work_outside_editors_not_inside(page_started):
    page = page_started.page
    editor(page, 2).click()
    page.keyboard.press("Control+k")
    assert not page.evaluate(JS_SEARCH_OPEN), "Ctrl+K in an editor opened the search dialog"
    page.keyboard.press("Control+a")  # the editor's own shortcut still works
    assert page.evaluate("() => document.getSelection().toString().length") > 20
    page.get_by_role("heading", level=1).click()
    page.keyboard.press("Control+k")
    assert page.evaluate(JS_SEARCH_OPEN), "Ctrl+K outside editors should open the search dialog"
    page.keyboard.press("Escape")
    assert page_started.problems() == []


def test_keyboard_leaves_an_editor_and_the_hint_says_how(page_started):
    page = page_started.page
    assert "browser-run-run-all" in page.evaluate("() => document.activeElement.className")
    editor(page, 2).click()
    content = page.locator("div.cell").nth(1).locator(".cm-content")
    hint = page.locator("#" + content.get_attribute("aria-describedby"))
    assert hint.is_visible() and "Escape, then Tab" in hint.text_content()
    page.keyboard.press("Tab")  # Tab indents inside the editor
    assert page.evaluate("() => !!document.activeElement.closest('.cm-editor')")
    page.keyboard.press("Escape")
    assert "Tab now leaves the editor" in hint.text_content()
    page.wait_for_timeout(2_500)  # longer than CodeMirror's own two-second window
    page.keyboard.press("Tab")
    focused = page.evaluate("() => [!!document.activeElement.closest('.cm-editor'), document.activeElement.textContent]")
    assert focused == [False, "Run cell 2"], focused
    assert not hint.is_visible()


JS_RING = """(e) => { const s = getComputedStyle(e);
    return s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2 || /\\d+px\\)?$/.test(s.boxShadow) && s.boxShadow !== 'none'; }"""
JS_SHAPE = "(e) => { const s = getComputedStyle(e); return [s.borderTopStyle, s.borderTopWidth, s.borderTopColor, s.color]; }"


def test_the_keyboard_sees_a_focus_ring_and_a_clicked_button_keeps_its_shape(runner):
    """Tab from the top of the page to the header's "▶ Run": it shows a ring (computed style,
    and a screenshot); so do the runner's controls. A runner button clicked with the pointer
    still on it keeps its border and colour (before, it read as plain text)."""
    runner.open(PAGE)
    page = runner.page
    header_run = page.locator(".browser-run-in-header")
    for _ in range(40):
        page.keyboard.press("Tab")
        if header_run.evaluate("(e) => e === document.activeElement"):
            break
    assert header_run.evaluate("(e) => e === document.activeElement"), "Tab never reached the header's Run"
    assert header_run.evaluate(JS_RING), "no focus ring on the header's Run"
    box = header_run.bounding_box()
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=OUT / "work-focus-ring-header.png",
                    clip={"x": box["x"] - 40, "y": max(0, box["y"] - 10), "width": box["width"] + 200, "height": box["height"] + 20})
    runner.start()
    run_button = page.locator("div.cell").nth(0).locator(".browser-run-run")
    at_rest = run_button.evaluate(JS_SHAPE)
    run_button.click()  # the pointer stays on it
    wait_until(page, JS_CELL_RAN, arg=1, timeout=CELL_TIMEOUT_MS)
    assert run_button.evaluate(JS_SHAPE) == at_rest, "a clicked button lost its border or colour"
    page.keyboard.press("Tab")
    assert page.evaluate(f"() => ({JS_RING})(document.activeElement)"), "no focus ring on the runner's next control"
    assert runner.problems() == []


# ---------------------------------------------------------------------------
# Floods, Stop, restart, prerequisites, input()
# ---------------------------------------------------------------------------


def test_a_print_flood_finishes_bounded_and_stop_stops_the_next(page_started):
    runner, page = page_started, page_started.page
    run(page, 1)
    run(page, 2)
    replace_text(page, 3, "for i in range(200000): print(i)")
    run(page, 3, timeout=120_000)
    flood = cell(runner, 3)
    assert flood["state"] == "done"
    assert flood["outputs"] == [["stdout", "".join(f"{i}\n" for i in range(200_000))]]
    shown = page.locator("div.cell").nth(2).locator(".browser-run-output")
    assert "199,800 lines not shown" in shown.text_content()
    assert shown.bounding_box()["height"] < 10_000
    assert page.locator("div.cell").nth(2).get_by_role("button", name="Show all of the output of cell 3").is_visible()
    shoot(page, "flood-bounded")

    replace_text(page, 3, "i = 0\nwhile True:\n    print(i)\n    i += 1")
    editor(page, 3).click()
    page.keyboard.press("Shift+Enter")
    wait_until(page, "() => window.browserRun.cells[2].output.parts.length > 0", timeout=CELL_TIMEOUT_MS)
    stop = page.get_by_role("button", name="Stop", exact=True)
    page.get_by_role("heading", level=1).scroll_into_view_if_needed()  # far from the running cell
    assert stop.is_visible() and stop.bounding_box()["y"] < page.viewport_size["height"]
    shoot(page, "stop-in-view")
    stop.click()
    assert cell(runner, 3)["state"] == "stopped"
    assert [cell(runner, n)["state"] for n in (1, 2)] == ["stale", "stale"]
    assert "not run in this Python" in page.locator("div.cell").nth(0).text_content()
    wait_until(page, JS_PYTHON_IDLE, timeout=120_000)

    # Cell 4 needs what cells 1-3 define: they run first (3 is the endless loop: reset it).
    page.locator("div.cell").nth(2).get_by_role("button", name="Reset cell 3 to the book's code").click()
    run(page, 4, timeout=120_000)
    assert [cell(runner, n)["state"] for n in (1, 2, 3, 4)] == ["done"] * 4
    assert "NameError" not in json.dumps(cell(runner, 4)["outputs"])
    assert page_started.problems() == []


# Where the reader is: a cell's top in the window (text above it may change length).
JS_CELL_TOP = "(n) => window.browserRun.cells[n - 1].element.getBoundingClientRect().top"
def test_one_long_line_is_bounded_in_characters(page_started):
    """A single 5 MB print: its first and last few thousand characters are shown, under two
    screens tall at desktop width, with Show all and Save as text; all of it is kept."""
    runner, page = page_started, page_started.page
    replace_text(page, 1, 'print("x" * 5_000_000)')
    run(page, 1, timeout=120_000)
    outputs = cell(runner, 1)["outputs"]
    assert [kind for kind, _ in outputs] == ["stdout"] and len(outputs[0][1]) == 5_000_001
    shown = page.locator("div.cell").nth(0).locator(".browser-run-output")
    assert "4,995,001 characters not shown" in shown.text_content()
    assert shown.bounding_box()["height"] < 2 * page.viewport_size["height"]
    assert shown.get_by_role("button", name="Show all of the output of cell 1").is_visible()
    assert shown.get_by_role("button", name="Save as text: the output of cell 1").is_visible()
    center(shown.locator(".browser-run-omitted"))
    shoot(page, "long-line-bounded")
    assert runner.problems() == []


JS_FOCUS_IN_CELL = "(n) => window.browserRun.cells[n - 1].element.contains(document.activeElement)"


def test_stop_never_traps_and_keeps_the_readers_place(page_started):
    """An added cell with `while True: pass`, stopped by the shortcut from inside its editor:
    the page keeps its scroll position and the focus; running cell 4 afterwards runs cells
    1-3 first but not the stopped cell, and says it skipped it."""
    runner, page = page_started, page_started.page
    page.locator("div.cell").nth(2).get_by_role("button", name="Add a cell below cell 3").click()
    page.keyboard.type("while True: pass")
    stuck = page.locator("div.cell.browser-run-added")
    center(stuck)
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_IS, arg=[4, "running"], timeout=120_000)
    floating = page.get_by_role("region", name="Running")
    assert "Ctrl+." in floating.text_content()  # the shortcut, on the Stop bar
    # Tab from the running cell's controls reaches Stop at once.
    stuck.get_by_role("button", name=re.compile(r"^Delete your cell")).focus()
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent") == "Stop"
    editor_content = stuck.locator(".cm-content")
    editor_content.click()
    settle(page)
    scrolled = page.evaluate(JS_CELL_TOP, 4)
    page.keyboard.press("Control+.")  # from inside the editor
    assert cell(runner, 4)["state"] == "stopped"
    wait_until(page, JS_PYTHON_IDLE, timeout=120_000)
    assert abs(page.evaluate(JS_CELL_TOP, 4) - scrolled) < 2, "Stop moved the reader's place"
    assert page.evaluate(JS_FOCUS_IN_CELL, 4), "Stop took the focus away from the editor"

    run(page, 5, timeout=120_000)  # cell 4 of the book, the fifth cell of the page
    assert [cell(runner, n)["state"] for n in (1, 2, 3, 4, 5)] == ["done", "done", "done", "stopped", "done"]
    status = page.get_by_role("status").text_content()
    assert "Skipped your cell 1 (added): it was stopped when it last ran" in status, status
    center(page.locator("div.cell").nth(4).locator(".browser-run-cell-bar"))
    page.evaluate("() => document.querySelector('.browser-run-bar').scrollIntoView({block: 'start'})")
    shoot(page, "skip-notice-after-stop")
    # Stopped by the button: the focus goes to the stopped cell's Run button, the page stays.
    stuck.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_IS, arg=[4, "running"], timeout=120_000)
    scrolled = page.evaluate(JS_CELL_TOP, 4)
    page.get_by_role("button", name="Stop", exact=True).click()
    wait_until(page, JS_PYTHON_IDLE, timeout=120_000)
    assert abs(page.evaluate(JS_CELL_TOP, 4) - scrolled) < 2
    assert page.evaluate("() => document.activeElement.textContent").startswith("Run your cell 1")
    assert runner.problems() == []


EXERCISES = "book/15_11_exercises.html"
JS_SECTIONS = """() => window.browserRun.cells.map((c) => [c.element.closest('section[id^="exercise-"]')?.id ?? null,
    c.element.dataset.runState || 'idle'])"""


def test_an_exercise_runs_only_its_own_cells_first(runner):
    """On 15.11, running exercise 3's start cell runs no cell of exercises 1-2 (their worked
    solutions, their figures among them); a cell added below it runs the start cell first,
    and nothing else."""
    runner.open_afresh(EXERCISES)
    runner.start()
    page = runner.page
    cells = runner.cells()
    start = next(c for c in cells if c["source"].startswith("# Exercise 3: start here"))["number"]
    page.locator("div.cell").nth(start - 1).get_by_role("button", name=f"Add a cell below cell {start}").click()
    page.keyboard.type("print(type(assess).__name__)")
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_RAN, arg=start + 1, timeout=CELL_TIMEOUT_MS)
    wait_until(page, JS_PYTHON_IDLE, timeout=CELL_TIMEOUT_MS)
    added = cell(runner, start + 1)
    assert added["outputs"][-1] == ["stdout", "function\n"], added  # the start cell ran first
    states = page.evaluate(JS_SECTIONS)
    ran = [(n + 1, section) for n, (section, state) in enumerate(states) if state != "idle"]
    assert ran == [(start, "exercise-3"), (start + 1, "exercise-3")], ran
    # (matplotlib itself may be downloading where a cell a reader sees draws a figure: it is
    # preloaded on the click, beside the cells, without running any of them;
    # tests/test_browser_start.py)
    assert runner.problems() == []


def test_input_says_it_is_not_available(page_started):
    page = page_started.page
    replace_text(page, 1, 'name = input("Your name? ")')
    run(page, 1)
    traceback = dict(cell(page_started, 1)["outputs"]).get("stderr", "")
    assert "input() cannot read what you type in this page" in traceback
    assert "Put the value in the code instead" in traceback
    assert page_started.problems() == []


def plain(text: str) -> str:
    """text without its ANSI colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def stderr_of(runner, number: int) -> str:
    return dict(cell(runner, number)["outputs"]).get("stderr", "")


def test_what_the_page_cannot_do_is_said_in_one_sentence(page_started):
    """%pip, !pip, micropip and a package the page does not serve each say what is and is not
    available here (not a bare SyntaxError or ModuleNotFoundError); tracebacks name the cell
    as the reader sees it."""
    runner, page = page_started, page_started.page
    for source, said in [
        ("%pip install pandas", "%pip install cannot run in this page"),
        ("!pip install pandas", "!pip install cannot run in this page"),
        ("import micropip", "micropip cannot be used in this page"),
        ("import pandas", "No module named 'pandas' in this page"),
    ]:
        replace_text(page, 1, source)
        run(page, 1)
        traceback = stderr_of(runner, 1)
        assert said in traceback, traceback
        assert "matplotlib, numpy and pillow" in traceback and "Binder or Colab" in traceback
        assert "SyntaxError" not in traceback and "micropip.install" not in traceback, traceback
    assert "Cell In[1], line 1" in plain(traceback)  # the import line, in the reader's cell
    page.locator("div.cell").nth(1).get_by_role("button", name="Add a cell below cell 2").click()
    page.keyboard.type("def f():\n1 / 0\n")
    page.keyboard.press("Backspace")  # (typed, Enter indented the call under f)
    page.keyboard.insert_text("\nf()")
    page.keyboard.press("Shift+Enter")
    wait_until(page, JS_CELL_RAN, arg=3, timeout=CELL_TIMEOUT_MS)
    traceback = stderr_of(runner, 3)
    # In IPython's form and colours (JupyterLab's): each frame's cell, its lines up to the one
    # that raised, an arrow at that one.
    assert plain(traceback) == (
        "-" * 75 + "\nZeroDivisionError" + " " * 25 + "Traceback (most recent call last)\n"
        "Cell your cell 1 (added), line 3\n      1 def f():\n      2     1 / 0\n----> 3 f()\n\n"
        "Cell your cell 1 (added), line 2, in f()\n      1 def f():\n----> 2     1 / 0\n\n"
        "ZeroDivisionError: division by zero\n"), traceback
    assert "\x1b[0;31mZeroDivisionError\x1b[0m: division by zero" in traceback  # drawn in red by ansi.mjs
    page.locator("div.cell").nth(2).locator(".ansi-red-fg", has_text="ZeroDivisionError").first.wait_for()
    assert "<cell " not in traceback
    assert runner.problems() == []


def test_the_progress_box_says_progress_is_not_kept_when_storage_is_refused(runner):
    page = runner.context.new_page()
    try:
        page.add_init_script(LOCAL_STORAGE_REFUSED)
        page.goto(f"{runner.origin}/{EXERCISES}", wait_until="load")
        title = page.locator(".exercise-progress-title")
        title.wait_for()
        assert title.text_content() == "Your progress, for this visit only (this browser does not let the page keep it)"
    finally:
        page.close()
    runner.open(EXERCISES)
    runner.page.locator(".exercise-progress-title").wait_for()
    assert runner.page.locator(".exercise-progress-title").text_content() == "Your progress, kept in this browser"


# ---------------------------------------------------------------------------
# Kept work
# ---------------------------------------------------------------------------


def reload_and_start(runner) -> None:
    runner.open(PAGE)
    runner.start()


def test_edits_survive_a_reload_and_reset_restores(page_started):
    runner, page = page_started, page_started.page
    book = cell(runner, 4)["source"]
    editor(page, 4).click()
    page.keyboard.press("Control+End")
    with saved(page):  # (300 ms after the last keystroke)
        page.keyboard.insert_text("\nprint('mine')")  # (typed, Enter would indent it under the loop)
    runner.open(PAGE)
    assert "Your edits to this page are kept in this browser" in page.locator(".browser-run-status").text_content()
    runner.start()
    restored = page.locator("div.cell").nth(3)
    assert cell(runner, 4)["source"] == book + "\nprint('mine')"
    assert restored.get_attribute("data-edited") == "true"
    assert restored.get_by_text("edited (kept in this browser)").is_visible()
    assert "came back from this browser" in page.get_by_role("status").text_content()
    center(restored.locator(".browser-run-cell-bar"))
    shoot(page, "edited-and-reloaded")
    with saved(page):
        restored.get_by_role("button", name="Reset cell 4 to the book's code").click()
    assert cell(runner, 4)["source"] == book
    assert restored.get_attribute("data-edited") == "false"
    reload_and_start(runner)
    assert cell(runner, 4)["source"] == book
    assert runner.problems() == []


def test_a_changed_book_cell_under_an_edit_is_reported(runner, site, tmp_path):
    copy = site_copy(site, tmp_path)
    html = copy / PAGE
    with LocalSite(copy) as served:
        page = runner.context.new_page()
        url = f"{served.origin}/{PAGE}"
        try:
            open_and_start(page, url)
            book = cell(page, 4)["source"]
            with saved(page):
                replace_text(page, 4, book + "\nprint('mine')")
            # The book is rebuilt with cell 4 changed (a first line added to its <pre>).
            text = html.read_text(encoding="utf-8")
            pres = [m.end() for m in re.finditer(
                r'<div class="cell_input[^"]*"[^>]*>\s*<div class="highlight-[^"]*"><div class="highlight"><pre>', text)]
            html.write_text(text[:pres[3]] + "# the book's new line\n" + text[pres[3]:], encoding="utf-8")
            url += "?rebuilt"  # (past the HTTP cache's copy of the page; the same path, so the same kept work)
            open_and_start(page, url)
            fourth = page.locator("div.cell").nth(3)
            notice = fourth.get_by_role("region", name="The book's code of cell 4 changed")
            assert notice.is_visible()
            assert cell(page, 4)["source"] == book + "\nprint('mine')"  # the reader's, in the editor
            notice.locator("summary").click()
            assert "# the book's new line" in notice.locator("pre").text_content()  # the book's, reachable
            center(notice)
            shoot(page, "conflict-notice")
            # Not chosen yet: a reload asks again.
            open_and_start(page, url)
            assert fourth.get_by_role("region", name="The book's code of cell 4 changed").is_visible()
            fourth.get_by_role("button", name="Take the book's code of cell 4").click()
            assert cell(page, 4)["source"] == "# the book's new line\n" + book
            editor(page, 4).click()
            page.keyboard.press("Control+z")  # and the reader's is one undo away
            assert cell(page, 4)["source"] == book + "\nprint('mine')"
        finally:
            page.close()


def heard(page, number: int, source: str) -> None:
    """Wait until cell ``number`` of page shows source (another tab's write, heard)."""
    wait_until(page, "([n, source]) => window.browserRun.cells[n - 1].source() === source",
                           arg=[number, source], timeout=STATE_TIMEOUT_MS)


def append_line(page, number: int, line: str) -> None:
    editor(page, number).click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\n" + line)


def test_two_tabs_editing_different_cells_keep_both(page_started):
    """Tab A edits cell 1, tab B (opened before A saved) cell 3: each tab shows the other's
    edit, and after both reload both edits are there (each tab writes only its own cells)."""
    runner, first = page_started, page_started.page
    second = runner.context.new_page()
    try:
        open_and_start(second, f"{runner.origin}/{PAGE}")
        book = [cell(first, n)["source"] for n in (1, 3)]
        with saved(first, second):  # (300 ms after the last keystroke)
            append_line(first, 1, "# from tab A")
            append_line(second, 3, "# from tab B")
        # Each tab hears the other's write (the `storage` event, after it).
        heard(first, 3, book[1] + "\n# from tab B")
        heard(second, 1, book[0] + "\n# from tab A")
        for page in (first, second):
            open_and_start(page, f"{runner.origin}/{PAGE}")
            assert cell(page, 1)["source"] == book[0] + "\n# from tab A"
            assert cell(page, 3)["source"] == book[1] + "\n# from tab B"
            assert "(2 cells) came back" in page.get_by_role("status").text_content()
    finally:
        second.close()
    assert runner.problems() == []


def test_two_tabs_editing_the_same_cell_offer_the_other_version(page_started):
    """Both tabs edit cell 4: the later save is kept in both tabs, and the tab whose code was
    replaced says so and offers its own back (the other tab is told in turn)."""
    runner, first = page_started, page_started.page
    second = runner.context.new_page()
    try:
        open_and_start(second, f"{runner.origin}/{PAGE}")
        book = cell(first, 4)["source"]
        with saved(first):
            append_line(first, 4, "print('A')")
        heard(second, 4, book + "\nprint('A')")  # not changed in B: taken quietly
        assert not second.get_by_role("region", name="Cell 4 was changed in another tab").is_visible()
        with saved(second):
            replace_text(second, 4, book + "\nprint('B')")
        heard(first, 4, book + "\nprint('B')")  # the later save
        notice = first.get_by_role("region", name="Cell 4 was changed in another tab")
        notice.wait_for(state="visible")
        notice.locator("summary").click()
        assert "print('A')" in notice.locator("pre").text_content()
        center(notice)
        shoot(first, "two-tabs-conflict")
        with saved(first):
            first.get_by_role("button", name="Take this tab's code of cell 4 back").click()
        assert cell(first, 4)["source"] == book + "\nprint('A')"
        heard(second, 4, book + "\nprint('A')")
        other = second.get_by_role("region", name="Cell 4 was changed in another tab")
        other.wait_for(state="visible")
        assert "print('B')" in other.locator("pre").text_content()
        # Typing in a cell while the other tab saves it: the typing stays, the other is offered.
        second.get_by_role("button", name="Keep the other tab's code of cell 4").click()
        with saved(second):  # B's typing, written 300 ms after its last keystroke
            editor(second, 4).click()
            second.keyboard.press("Control+End")
            second.keyboard.insert_text("\nprint('typing')")
            # Tab A saves at once (as when it is left), while B's typing is not yet written.
            first.evaluate("""(book) => { window.browserRun.cells[3].setSource(book + "\\nprint('A2')");
                window.dispatchEvent(new Event("pagehide")); }""", book)
            offered = second.get_by_role("region", name="Cell 4 was changed in another tab")
            offered.wait_for(state="visible")
            assert "print('A2')" in offered.locator("pre").text_content()
            assert "print('typing')" in cell(second, 4)["source"]
        open_and_start(first, f"{runner.origin}/{PAGE}")
        assert "print('typing')" in cell(first, 4)["source"]  # the later save
    finally:
        second.close()
    assert runner.problems() == []


def test_blocked_storage_leaves_a_working_page(runner):
    page = runner.context.new_page()
    try:
        page.add_init_script(LOCAL_STORAGE_REFUSED)
        page.goto(runner.origin + "/" + PAGE, wait_until="load")
        page.click("button.browser-run-at-cell")
        wait_until(page, JS_PYTHON_IDLE, timeout=120_000)
        status = page.get_by_role("status").text_content()
        assert status.count("cannot be kept in this browser") == 1, status
        run(page, 1)
        assert page.evaluate(JS_CELL_STATE, 1) == "done"
    finally:
        page.close()


@pytest.mark.parametrize("saved", ["{not json", '{"v": 1, "edits": [1, 2]}'])
def test_a_malformed_saved_entry_is_set_aside(page_started, saved):
    runner, page = page_started, page_started.page
    page.evaluate("(saved) => localStorage.setItem('browser-run:v1:' + location.pathname, saved)", saved)
    reload_and_start(runner)
    assert "could not be read, so it was set aside" in page.get_by_role("status").text_content()
    run(page, 1)
    assert cell(runner, 1)["state"] == "done"
    assert runner.problems() == []


def test_add_run_keep_and_delete_a_cell(page_started):
    runner, page = page_started, page_started.page
    page.locator("div.cell").nth(1).get_by_role("button", name="Add a cell below cell 2").click()
    assert page.evaluate("() => !!document.activeElement.closest('.browser-run-added')")
    with saved(page):
        page.keyboard.type("print(len(docs), 6 * 7)")
        page.keyboard.press("Shift+Enter")
        wait_until(page, JS_CELL_RAN, arg=3, timeout=CELL_TIMEOUT_MS)
        added = cell(runner, 3)
        assert added["outputs"] == [["stdout", "10 42\n"]], added  # cells 1-2 ran first: docs exists
    reload_and_start(runner)
    assert page.locator("div.cell.browser-run-added").count() == 1
    assert cell(runner, 3)["source"] == "print(len(docs), 6 * 7)"
    with saved(page):
        page.get_by_role("button", name=re.compile(r"^Delete your cell")).click()
    assert page.locator("div.cell.browser-run-added").count() == 0
    reload_and_start(runner)
    assert page.locator("div.cell.browser-run-added").count() == 0
    assert runner.problems() == []


def test_clear_my_edits_returns_the_page_to_the_book(page_started):
    runner, page = page_started, page_started.page
    book = cell(runner, 4)["source"]
    replace_text(page, 4, "print('mine')")
    page.locator("div.cell").nth(0).get_by_role("button", name="Add a cell below cell 1").click()
    page.keyboard.type("print('added')")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Clear my edits on this page").click()
    assert cell(runner, 4)["source"] == book
    assert page.locator("div.cell.browser-run-added").count() == 0
    assert page.evaluate("() => localStorage.getItem('browser-run:v1:' + location.pathname)") is None
    reload_and_start(runner)
    assert cell(runner, 4)["source"] == book and page.locator("div.cell.browser-run-added").count() == 0
    assert runner.problems() == []


# ---------------------------------------------------------------------------
# Download as notebook
# ---------------------------------------------------------------------------


@pytest.mark.kernel  # (the downloaded notebook run by nbclient)
def test_the_downloaded_notebook_is_valid_and_runs(page_started, tmp_path):
    runner, page = page_started, page_started.page
    book = cell(runner, 4)["source"]
    replace_text(page, 4, book + "\nprint('reader was here')")
    page.locator("div.cell").nth(3).get_by_role("button", name="Add a cell below cell 4").click()
    page.keyboard.type("print('an added cell', len(docs))")
    page.get_by_role("button", name="Run all", exact=True).click()
    runner.wait_until_finished()
    with page.expect_download() as download:
        page.get_by_role("button", name="Download as notebook").click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    assert path.name == "15_02_one_shot_rag-my-work.ipynb"
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert "install" in code[0].metadata.get("tags", [])  # the reader's notebook's install cell
    edited = next(c for c in code if "reader was here" in c.source)
    assert edited.outputs[-1]["text"].endswith("reader was here\n")  # run in the page
    added = next(c for c in code if "an added cell" in c.source)
    assert added.outputs[0]["text"] == "an added cell 10\n"
    assert code.index(added) == code.index(edited) + 1
    book_notebook = nbformat.read(ROOT / "book" / "15_02_one_shot_rag.ipynb", as_version=4)
    markdown = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    assert markdown == [c.source for c in book_notebook.cells if c.cell_type == "markdown"]

    for c in code:  # run it as JupyterLab would, in the book's environment
        c.outputs = []
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "book")}}).execute()
    edited = next(c for c in notebook.cells if "reader was here" in c.source)
    assert edited.outputs[-1]["text"].endswith("reader was here\n")
    added = next(c for c in notebook.cells if "an added cell" in c.source)
    assert added.outputs[0]["text"] == "an added cell 10\n"
    assert runner.problems() == []


# ---------------------------------------------------------------------------
# Accessibility, phone width, dark mode
# ---------------------------------------------------------------------------


def test_axe_with_runner_buttons_hovered_and_focused_in_light_and_dark(page_started):
    """Hovered and keyboard-focused, "Run all" and a cell's Run keep AA contrast (4.5:1), in
    both modes: axe audits the page with the pointer on the button, then with the focus on it
    (before, the hover's surface grey put "Run all" at 4.34:1 light and 4.0:1 dark)."""
    page = page_started.page
    page.add_script_tag(path=str(AXE))
    buttons = {"Run all": page.get_by_role("button", name="Run all", exact=True),
               "a cell's Run": page.locator("div.cell").nth(0).locator(".browser-run-run")}
    problems = []
    for mode in ("light", "dark"):
        if mode == "dark":
            page.emulate_media(color_scheme="dark")
            page.evaluate(JS_DARK_THEME)
        for name, button in buttons.items():
            center(button)
            for state in ("hover", "focus"):
                page.mouse.move(0, 0)
                if state == "hover":
                    button.hover()
                    assert button.evaluate("(e) => e.matches(':hover')"), f"{name} is not hovered"
                else:
                    page.keyboard.press("Escape")  # the last input a key: focus() shows the ring
                    button.focus()
                    assert button.evaluate("(e) => e.matches(':focus-visible')"), f"{name} shows no focus"
                settle(page)  # Bootstrap's colour transition ended: axe judges what is painted
                problems += [f"{mode}, {name} {state}: {v['impact']} {v['id']}: {v['help']} {v['targets'][:3]}"
                             for v in page.evaluate(JS_RUN_AXE) if v["impact"] in BLOCKING_IMPACTS]
    assert problems == [], "\n".join(problems)
    assert page_started.problems() == []


def test_axe_with_the_runner_active_and_touch_targets_at_phone_width(page_started):
    runner, page = page_started, page_started.page
    page.get_by_role("button", name="Run all", exact=True).click()
    runner.wait_until_finished()
    replace_text(page, 2, cell(runner, 2)["source"] + "\n# edited")
    page.locator("div.cell").nth(1).get_by_role("button", name="Add a cell below cell 2").click()
    page.keyboard.type("print('added')")
    page.get_by_role("heading", level=1).click()
    page.add_script_tag(path=str(AXE))
    problems = []
    for mode in ("light", "dark"):
        if mode == "dark":
            page.emulate_media(color_scheme="dark")
            page.evaluate(JS_DARK_THEME)
        settle(page)
        problems += [f"{mode}: {v['impact']} {v['id']}: {v['help']} {v['targets'][:3]}"
                     for v in page.evaluate(JS_RUN_AXE) if v["impact"] in BLOCKING_IMPACTS]
    center(page.locator("div.cell").nth(1).locator(".browser-run-cell-bar"))
    shoot(page, "runner-dark")
    page.set_viewport_size(PHONE)
    settle(page)
    center(page.locator("div.cell").nth(1).locator(".browser-run-cell-bar"))
    shoot(page, "phone-dark")
    page.emulate_media(color_scheme="light")
    page.evaluate("() => { document.documentElement.dataset.mode = 'light'; document.documentElement.dataset.theme = 'light'; }")
    settle(page)
    center(page.locator(".browser-run-bar"))
    shoot(page, "phone-light")
    small = page.evaluate("""() => [...document.querySelectorAll('.browser-run-button, .browser-run-start')]
        .filter((b) => b.offsetParent !== null)
        .map((b) => [b.textContent, b.getBoundingClientRect()])
        .filter(([, r]) => r.width < 44 || r.height < 44)
        .map(([text, r]) => `${text}: ${Math.round(r.width)}x${Math.round(r.height)}`)""")
    page.set_viewport_size({"width": 1280, "height": 900})
    assert problems == [], "\n".join(problems)
    assert small == [], f"controls smaller than 44x44 px at phone width: {small}"
