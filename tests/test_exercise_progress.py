"""Exercise progress on 15.11 (runnable_book/sphinx_ext/runner/progress.mjs), as a student meets it.

A passing check run by the reader marks its exercise done (beside its heading, in the
progress list, beside 15.11 in the sidebar); a failing one does not (nor do the worked
solutions' own checks: tests/test_browser_run.py, where all of 15.11 runs); exercises without a check have "Mark as done"; the marks survive a reload
(before Python is started) and can be cleared; blocked storage and an unreadable entry
leave a working page that says so. Screenshots go to _build/browser-run/.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from student_answers import EXERCISE_3_RIGHT

from runnable_book.browser.page_state import wait_until
from runnable_book.pipeline import book_shape
from runnable_book.repository import ROOT

pytestmark = pytest.mark.site

OUT = ROOT / "_build" / "browser-run"
EXERCISES = book_shape.exercises_page().relative_to(ROOT).with_suffix(".html").as_posix()
OTHER_PAGE = "book/15_02_one_shot_rag.html"
EXERCISES_COUNT = len(book_shape.exercises())
WITHOUT_CHECK = len(book_shape.exercises()) - len(book_shape.checks())  # "Mark as done" instead
LAST_WITHOUT_CHECK = [n for n in book_shape.exercise_numbers() if n not in book_shape.checks()][-1]
PROGRESS_READY = "() => document.documentElement.dataset.exerciseProgress !== undefined"

RIGHT = EXERCISE_3_RIGHT + "\ncheck_conflict_policy(my_assess, my_resolve)\n"
WRONG = '''

def my_assess(passages, query, subject, relation):
    return assess(passages[0], query, subject, relation)


def my_resolve(verdict, passages):
    return verdict


check_conflict_policy(my_assess, my_resolve)
'''


def test_every_page_carries_the_exercises_as_book_shape_reads_them(site):
    """What the page's JavaScript knows of the exercises is the build's data (#book-exercises,
    runnable_book/sphinx_ext/exercises.py), the same on every page that loads the progress."""
    expected = {"pages": [{"page": md.relative_to(ROOT).with_suffix(".html").as_posix(),
                           "exercises": [{"number": n, "section": f"exercise-{n}",
                                          "checks": [{"name": name, "passed": f"PASS  exercise {n} ({name})"}
                                                     for name in book_shape.checks(md).get(n, [])]}
                                         for n in book_shape.exercise_numbers(md)]}
                          for md in book_shape.exercise_pages()]}
    pages = sorted(site.glob("book/*.html"))
    assert EXERCISES in {page.relative_to(site).as_posix() for page in pages}
    for page in pages:
        found = re.search(r'<script id="book-exercises" type="application/json">(.*?)</script>',
                          page.read_text(encoding="utf-8"), re.DOTALL)
        assert found and json.loads(found.group(1)) == expected, f"{page}: {found and found.group(1)}"


def progress(runner) -> dict:
    wait_until(runner.page, PROGRESS_READY)
    return runner.page.evaluate("""() => ({
        summary: document.querySelector('.exercise-progress-summary')?.textContent || null,
        marked: [...document.querySelectorAll('.exercise-status')]
            .map((s, i) => s.querySelector('.exercise-done-mark').hidden ? null : i + 1).filter(Boolean),
        toggles: [...document.querySelectorAll('.exercise-mark-done')].length,
        sidebar: document.querySelectorAll('.exercise-progress-badge').length > 1 ? 'more than one badge'
            : document.querySelector('.bd-sidenav .exercise-progress-badge')?.textContent || null,
        note: document.querySelector('.exercise-progress-note:not([hidden])')?.textContent || null,
    })""")


def test_a_passing_check_marks_its_exercise_done_and_the_mark_survives_a_reload(runner):
    runner.open_afresh(EXERCISES)
    assert progress(runner) == {"summary": f"0 of {EXERCISES_COUNT} exercises done", "marked": [],
                                "toggles": WITHOUT_CHECK,
                                "sidebar": None, "note": None}
    runner.start()
    start = next(c for c in runner.cells() if c["source"].startswith("# Exercise 3: start here"))
    setup = start["source"].split("\n\n\ndef my_assess")[0]
    # (That the worked solutions' own passing checks mark nothing is tested where every cell of
    # 15.11 runs anyway: tests/test_browser_run.py.)
    wrong = runner.type_and_run(start["number"], setup + WRONG)
    assert "FAIL  exercise 3" in wrong["outputs"][0][1]
    assert progress(runner)["marked"] == []
    right = runner.type_and_run(start["number"], setup + RIGHT)
    assert "PASS  exercise 3" in right["outputs"][0][1], right["outputs"]
    after = progress(runner)
    assert after["marked"] == [3] and after["summary"] == f"1 of {EXERCISES_COUNT} exercises done"
    assert after["sidebar"] == f"1/{EXERCISES_COUNT} done"
    runner.page.locator("#exercise-3").scroll_into_view_if_needed()
    runner.page.screenshot(path=OUT / "15_11-exercise-3-done.png")
    # Exercises without a check: "Mark as done".
    runner.page.locator("#exercise-1 .exercise-mark-done").click()
    assert progress(runner)["marked"] == [1, 3]
    # Reload: the marks are there before Python starts.
    runner.open(EXERCISES)
    assert progress(runner) == {"summary": f"2 of {EXERCISES_COUNT} exercises done", "marked": [1, 3],
                                "toggles": WITHOUT_CHECK, "sidebar": f"2/{EXERCISES_COUNT} done", "note": None}
    runner.page.locator(".exercise-progress").scroll_into_view_if_needed()
    runner.page.screenshot(path=OUT / "15_11-progress-after-reload.png")
    # The progress leaves with the reader's notebook.
    runner.start()
    with runner.page.expect_download() as download:
        runner.page.get_by_role("button", name="Download as notebook").click()
    notebook = json.loads(Path(download.value.path()).read_text())
    assert notebook["metadata"]["runnable_book"]["progress"] == {"total": EXERCISES_COUNT, "done": {"1": "marked", "3": "check"}}
    cell = next(c for c in notebook["cells"] if "progress" in c["metadata"].get("tags", []))
    assert f"2 of {EXERCISES_COUNT} exercises done" in "".join(cell["source"])
    # Another page shows the count beside 15.11's sidebar entry.
    runner.open(OTHER_PAGE)
    assert progress(runner)["sidebar"] == f"2/{EXERCISES_COUNT} done"
    # Cleared: nothing done, anywhere.
    runner.open(EXERCISES)
    runner.page.get_by_role("button", name="Clear my progress").click()
    assert progress(runner)["summary"] == f"0 of {EXERCISES_COUNT} exercises done" and progress(runner)["sidebar"] is None
    assert runner.problems() == []


def test_an_unreadable_entry_is_set_aside_with_a_notice(runner):
    runner.open(EXERCISES)
    key = runner.page.evaluate("() => 'browser-run:v1:progress:' + location.pathname")
    runner.page.evaluate("([key]) => localStorage.setItem(key, '{not json')", [key])
    runner.open(EXERCISES)
    state = progress(runner)
    assert state["summary"] == f"0 of {EXERCISES_COUNT} exercises done" and "could not be read" in state["note"]
    runner.page.locator("#exercise-2 .exercise-mark-done").click()
    assert json.loads(runner.page.evaluate("([key]) => localStorage.getItem(key)", [key]))["done"] == {"2": "marked"}
    runner.page.evaluate("() => localStorage.clear()")
    assert runner.problems() == []


def test_blocked_storage_leaves_a_working_page_that_says_so(runner):
    page = runner.context.new_page()
    try:
        page.add_init_script(
            "Object.defineProperty(window, 'localStorage', {get() { throw new DOMException('blocked', 'SecurityError'); }});")
        page.goto(runner.page.url.rsplit("/book/", 1)[0] + "/" + EXERCISES, wait_until="load")
        blocked = type("Blocked", (), {"page": page})()
        state = progress(blocked)
        assert state["summary"] == f"0 of {EXERCISES_COUNT} exercises done" and "does not let the page keep" in state["note"]
        page.locator(f"#exercise-{LAST_WITHOUT_CHECK} .exercise-mark-done").click()
        assert progress(blocked)["marked"] == [LAST_WITHOUT_CHECK]
    finally:
        page.close()
