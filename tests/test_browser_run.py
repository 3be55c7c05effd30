""""Run in your browser", tested as a reader uses it (headless Chromium).

* On every page with code, clicking the control starts Python in the page, "Run all"
  runs every cell, and every cell prints exactly what the stored notebook holds (nbval's
  standard); each figure cell draws its figure in the page, in place of the
  stored one, with the stored alt text; no request leaves the machine and the console
  stays clean (runnable_book/checks/run_check.py, run by runnable_book/browser/page_runner.py).
* A planted change to a stored output is caught.
* On 15.11, Run all (every worked solution, each passing its check) marks no exercise done.
* A figure cell whose data a reader changes draws a different figure.
* On 15.11 a reader types functions into exercise 3's start cell and sees the check's
  verdict, both "ok" and the failing case; after Stop, a reader's own plot draws.
* Before the click a page carries only the small inline loader (budget: 10 KB) and asks
  for nothing of the runner; opened from file:// the control says how to serve the book.

Screenshots (light and dark) go to _build/browser-run/.
"""

from __future__ import annotations

import copy
import re

import nbformat
import pytest

from runnable_book.browser.chromium import JS_DARK_THEME
from runnable_book.browser.page_runner import CELL_TIMEOUT_MS, JS_CELL_IS, JS_CELL_RAN, JS_PYTHON_IDLE, START_BUTTON
from runnable_book.checks.run_check import (
    LOADER_ID,
    compare,
    expected_outputs,
    imports_matplotlib,
    pages_with_code,
    stored_notebook,
)
from runnable_book.browser.page_state import wait_until
from runnable_book.pipeline import book_shape
from runnable_book.pipeline.pages import code_cells, notebook_pages
from runnable_book.repository import ROOT

pytestmark = pytest.mark.site

OUT = ROOT / "_build" / "browser-run"
EXERCISES = "book/15_11_exercises.html"
LOADER_BUDGET_BYTES = 10 * 1024
LOADER_SCRIPT = re.compile(rf'<script id="{LOADER_ID}">(.*?)</script>', re.DOTALL)
# What only the click may fetch: our runner, the editor, Python and chapter_lib.
# (progress.mjs, the exercises' progress, and the DOM helpers and exercises' data reader it
# imports are the runner folder's files every page loads after its first paint:
# runnable_book/sphinx_ext/runner/__init__.py.)
AFTER_CLICK_ONLY = re.compile(r"/_static/(runner/(?!(progress|dom|book_exercises)\.mjs)|pyodide/)")


# What 15.11's progress box says (runnable_book/sphinx_ext/runner/progress.mjs), once it has read what is kept.
JS_PROGRESS_SUMMARY = """() => document.documentElement.dataset.exerciseProgress !== undefined
    && document.querySelector('.exercise-progress-summary').textContent"""


@pytest.fixture(scope="module")
def runs_and_progress(runner, site) -> tuple[dict, str]:
    """Every page with code, clicked and run to the end, once for the module; and what 15.11's
    progress box says after its Run all."""
    runs, progress = {}, None
    for page in pages_with_code(site):
        runs[page] = runner.run_page(page)
        if page == EXERCISES:
            progress = wait_until(runner.page, JS_PROGRESS_SUMMARY).json_value()
    return runs, progress


@pytest.fixture(scope="module")
def page_runs(runs_and_progress) -> dict:
    return runs_and_progress[0]


def shoot(runner, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    runner.page.screenshot(path=OUT / f"{name}-light.png")
    runner.page.emulate_media(color_scheme="dark")  # as runnable_book/checks/site_check.py does
    runner.page.evaluate(JS_DARK_THEME)
    runner.page.screenshot(path=OUT / f"{name}-dark.png")
    runner.page.emulate_media(color_scheme="light")
    runner.page.evaluate("() => { document.documentElement.dataset.theme = 'light'; }")


def test_every_page_with_code_has_the_control(site):
    expected = {f"book/{md.stem}.html" for md in notebook_pages() if code_cells(md)}
    assert set(pages_with_code(site)) == expected


def test_every_cell_prints_what_the_stored_notebook_holds(page_runs):
    problems, summary = [], []
    for page, run in page_runs.items():
        result = compare(run, stored_notebook(page))
        problems += result.problems
        summary.append(f"{page}: {result.matched}/{result.runnable} match, {result.figures} figure cells")
        assert run.cells, f"{page}: the runner found no code cell"
    assert not problems, "\n".join(problems + ["", *summary])


def test_the_worked_solutions_own_checks_mark_no_exercise_done(runs_and_progress):
    """Run all on 15.11 runs every worked solution, and each one's check passes: that is not
    the reader's work, so the progress box still counts none done (a reader's own passing
    check does: tests/test_exercise_progress.py)."""
    runs, progress = runs_and_progress
    assert EXERCISES in runs
    assert progress == f"0 of {len(book_shape.exercises())} exercises done", progress


def test_each_figure_cell_draws_its_figure_in_the_page(page_runs):
    """Every figure cell (a code cell with a captioned figure, runnable_book/pipeline/book_shape.py), each
    drawn fresh with its alt text (what compare() checks of a figure cell), counted so none can
    go missing."""
    drawn, figure_cells = {}, 0
    for page, run in page_runs.items():
        notebook = nbformat.read(stored_notebook(page), as_version=4)
        figure_cells += sum(c.cell_type == "code" and imports_matplotlib(c.source)
                            and "install" not in c.metadata.get("tags", [])  # ours: imports it to install it
                            for c in notebook.cells)
        result = compare(run, stored_notebook(page))
        drawn[page] = result.figures
        for cell in run.cells:
            for image in cell["images"]:
                assert image["drawnInPage"] and image["alt"], f"{page}, cell {cell['number']}: {image['alt']!r}"
    declared = sum(len(book_shape.figure_cells(md)) for md in notebook_pages())
    assert figure_cells == declared and sum(drawn.values()) == declared, drawn


def test_a_changed_stored_output_is_caught(page_runs, tmp_path):
    page, run = next((p, r) for p, r in page_runs.items() if any(c["outputs"] for c in r.cells))
    notebook = nbformat.read(stored_notebook(page), as_version=4)
    planted = copy.deepcopy(notebook)
    cell = next(c for c in planted.cells if c.cell_type == "code" and expected_outputs(c)
                and c.outputs[0].output_type == "stream")
    cell.outputs[0].text = cell.outputs[0].text.replace(" ", "  ", 1)
    path = tmp_path / stored_notebook(page).name
    nbformat.write(planted, path)
    assert not compare(run, stored_notebook(page)).problems
    problems = compare(run, path).problems
    assert len(problems) == 1 and "output differs" in problems[0] and page in problems[0], problems


PASSING = '''
from chapter_lib.exercises import assess_passages, resolve_conflict


def my_assess(passages, query, subject, relation):
    return assess_passages(passages, query, subject, relation)


def my_resolve(verdict, passages):
    return resolve_conflict(verdict, passages)


check_conflict_policy(my_assess, my_resolve)
'''

FAILING = '''

def my_assess(passages, query, subject, relation):
    return assess(passages[0], query, subject, relation)  # the first passage wins


def my_resolve(verdict, passages):
    return verdict


check_conflict_policy(my_assess, my_resolve)
'''


@pytest.fixture(scope="module")
def exercises(runner):
    """15.11, clicked: the exercise test and then the stop test share its Python."""
    runner.open(EXERCISES)
    runner.start()
    return runner


def test_a_reader_function_gets_the_check_verdict(exercises):
    runner = exercises
    cells = runner.cells()
    start = next(c for c in cells if c["source"].startswith("# Exercise 3: start here"))
    setup = start["source"].split("\n\n\ndef my_assess")[0]  # its imports, not its stubs

    passed = runner.type_and_run(start["number"], setup + PASSING)
    assert passed["state"] == "done", passed["outputs"]
    kinds = [kind for kind, _ in passed["outputs"]]
    assert "stderr" not in kinds and any(text.count("ok") >= 3 for _, text in passed["outputs"]), passed["outputs"]

    # A wrong function (not a crashing one): the verdict first, one line per failing case,
    # and no traceback at all, so no frame of the library's.
    failed = runner.type_and_run(start["number"], setup + FAILING)
    assert failed["state"] == "done", failed["outputs"]
    kinds = [kind for kind, _ in failed["outputs"]]
    assert kinds == ["stdout"], failed["outputs"]
    # (The start cell's own setup prints one line, docs[2], before the check's output.)
    check_lines = failed["outputs"][0][1].splitlines()[1:]
    assert check_lines[0].startswith("FAIL  exercise 3 (check_conflict_policy): "), check_lines
    assert check_lines[1].startswith("  FAIL ") and not any("chapter_lib" in line for line in check_lines)
    runner.page.locator("div.cell").nth(start["number"] - 1).scroll_into_view_if_needed()
    shoot(runner, "15_11-check-failing")

    # A worked solution stays hidden until opened, and runs.
    solution = runner.page.locator("div.cell").nth(start["number"])
    assert not solution.locator(".cm-content").is_visible()
    solution.locator("summary").click()
    # Run from the keyboard: the editor in the fold just opened is measured again on its
    # `toggle` event, and on a busy machine that moved the button after the mouse had aimed
    # (the click landed below it, and nothing ran).
    solution.get_by_role("button", name=f"Run cell {start['number'] + 1}").press("Enter")
    wait_until(runner.page, JS_CELL_RAN, arg=start["number"] + 1, timeout=CELL_TIMEOUT_MS)
    solution.scroll_into_view_if_needed()
    shoot(runner, "15_11-solution-opened")
    assert runner.problems() == []


def test_stop_restarts_python_and_says_state_is_lost(exercises):
    runner = exercises
    first = runner.type_and_run(1, "x = 42\nx")
    assert first["outputs"] == [["text/plain", "42"]]
    looping = next(c for c in runner.cells() if c["source"].startswith("# Exercise 2: start here"))["number"]
    runner.page.locator("div.cell").nth(looping - 1).locator(".cm-content").click()
    runner.page.keyboard.press("Control+a")
    runner.page.keyboard.insert_text("while True:\n    pass")
    runner.page.keyboard.press("Shift+Enter")
    wait_until(runner.page, JS_CELL_IS, arg=[looping, "running"])
    runner.page.get_by_role("button", name="Stop", exact=True).click()
    assert "everything earlier cells defined is lost" in runner.page.locator(".browser-run-status").text_content()
    wait_until(runner.page, JS_PYTHON_IDLE, timeout=120_000)
    after = runner.type_and_run(1, "x")
    assert after["state"] == "error" and "NameError" in dict(after["outputs"])["stderr"]
    # A reader's own plot, in a cell that had none: loads matplotlib and draws.
    plot = runner.type_and_run(1, "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()")
    assert plot["state"] == "done" and plot["outputs"] == [["text/plain", "<Figure size 640x480 with 1 Axes>"]]
    assert [image["drawnInPage"] and image["visible"] for image in plot["images"]] == [True]
    # A figure as a cell's last value shows once, as in the notebook.
    value = runner.type_and_run(1, "fig, ax = plt.subplots(figsize=(3, 2))\nax.bar([1, 2], [3, 1])\nfig")
    assert value["outputs"] == [["text/plain", "<Figure size 300x200 with 1 Axes>"]] and len(value["images"]) == 1
    shoot(runner, "15_11-after-stop")
    assert runner.problems() == []


FIGURE_PAGE = "book/15_08_long_context_rag_cache.html"
FIGURE_DATA = "vals = [rag_tokens + qt, corpus_tokens + qt, qt]"


def test_a_figure_cell_with_changed_data_draws_a_different_figure(runner):
    runner.open(FIGURE_PAGE)
    runner.start()
    runner.page.evaluate("() => window.browserRun.runAll()")
    runner.wait_until_finished()
    cell = next(c for c in runner.cells() if c["images"])
    assert FIGURE_DATA in cell["source"]
    drawn = cell["images"][0]
    # As the notebook shows it: the size of the stored figure, drawn from the same code.
    stored = runner.page.evaluate("""() => window.browserRun.cells.find((c) => c.figureSlots)
        .figureSlots.map((s) => [s.img.naturalWidth, s.img.naturalHeight])[0]""")
    assert all(abs(a - b) <= 0.02 * b for a, b in zip((drawn["width"], drawn["height"]), stored)), (drawn, stored)
    runner.page.locator("img.browser-run-figure-image").scroll_into_view_if_needed()
    shoot(runner, "15_08-figure-drawn")

    edited = runner.type_and_run(cell["number"], cell["source"].replace(FIGURE_DATA, "vals = [90, 20, 50]"))
    assert edited["state"] == "done", edited["outputs"]
    redrawn = edited["images"][0]
    assert redrawn["drawnInPage"] and redrawn["visible"] and redrawn["src"] != drawn["src"]
    assert redrawn["alt"] == drawn["alt"] == cell["storedAlts"][0]
    runner.page.locator("img.browser-run-figure-image").scroll_into_view_if_needed()
    shoot(runner, "15_08-figure-redrawn")
    assert runner.problems() == []


def test_before_the_click_only_a_small_loader(runner, site):
    for page in pages_with_code(site):
        scripts = LOADER_SCRIPT.findall((site / page).read_text(encoding="utf-8"))
        assert len(scripts) == 1, f"{page}: expected one inline loader"
        assert len(scripts[0].encode()) <= LOADER_BUDGET_BYTES, f"{page}: loader is {len(scripts[0])} bytes"
    # As on a first visit: a returning reader's Python may start early (tests/test_browser_start.py).
    # (Forgotten from a page without code, whose loader could have started Python.)
    runner.page.goto(f"{runner.origin}/search.html")
    runner.page.evaluate("() => localStorage.removeItem('browser-run:v1:python-started')")
    runner.open(EXERCISES)
    runner.page.wait_for_timeout(500)
    fetched = [url for url in runner.requested() if AFTER_CLICK_ONLY.search(url)]
    assert fetched == [], f"requested before the click: {fetched}"
    assert runner.page.locator(START_BUTTON).is_visible()
    assert runner.page.get_by_role("button", name="Run in your browser").count() == 2
    shoot(runner, "15_11-before-click")


def test_from_a_file_the_control_says_how_to_serve_the_book(runner, site):
    page = runner.context.new_page()
    try:
        page.goto((site / EXERCISES).as_uri(), wait_until="load")
        page.click(START_BUTTON)
        status = page.get_by_role("status")
        assert "python -m http.server -d _build/html" in status.text_content()
    finally:
        page.close()
