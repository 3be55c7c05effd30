"""How "Run in your browser" starts Python, tested as readers meet it (headless Chromium).

* A first visit asks for nothing of the runtime before the click, however long the reader
  looks at the page (so a first-time reader downloads none of it unasked).
* A returning reader (Python ran in this book before, in this browser) gets Python started
  on the next page once it has loaded, from the HTTP cache only (no runtime byte served): the
  bar says so, the click adopts it, and every cell then prints what the stored notebook holds.
  "Don't start Python early" stops it and is remembered; the click still starts Python.
* With the browser's data saver on, nothing starts early.
* Python restored from the snapshot `make assets` made; with a snapshot the runtime refuses
  (a planted copy of the site), Python starts afresh and the outputs are the same.
* Matplotlib loads from the click on a page whose cells import it, and never on a page
  whose cells do not, nor where only folded cells (worked solutions) do: each page's loader
  is told which, as the page's source says.
* Through a throttled server, the download bar moves while the bytes arrive.

Timings are `make bench-run`'s (runnable_book/bench/run_in_browser.py), never asserted here.
"""

from __future__ import annotations

import gzip
import json
import re
import tempfile
from pathlib import Path

import pytest

from runnable_book.browser.page_runner import JS_PYTHON_IDLE, START_BUTTON, BrowserRunner
from runnable_book.browser.page_state import wait_until
from runnable_book.browser.throttling_proxy import ThrottlingProxy
from runnable_book.common import built_files
from runnable_book.checks.run_check import compare, stored_notebook
from runnable_book.pipeline import book_shape
from runnable_book.pipeline.pages import notebook_pages, read_page
from runnable_book.repository import ROOT
from runnable_book.sphinx_ext.runner import FIGURE_IMPORTS, imported_names

pytestmark = [pytest.mark.site, pytest.mark.browser]

NO_FIGURES = "book/15_01_corpus_and_search_stub.html"
ALSO_NO_FIGURES = "book/15_02_one_shot_rag.html"
FIGURES = "book/15_04_quality_and_cost.html"
GLANCE_MS = 3000
RUNTIME = re.compile(r"/_static/pyodide/")
RUNNER = re.compile(r"/_static/runner/(?!(progress|dom|book_exercises)\.mjs)")  # progress.mjs (and its imports): every page, after paint
MATPLOTLIB = re.compile(r"/_static/pyodide/matplotlib-.*\.whl$")
EARLY_NOTE = ".browser-run-early"
JS_TIMINGS = "() => (window.browserRunTimings || []).map((t) => t.step)"
# A line slow enough that Python's download takes seconds (the test's own, not a reader's).
THROTTLED_BYTES_PER_SECOND = 1_500_000
# What the download bar says while bytes arrive (runner/download_bar.mjs).
DOWNLOADING = re.compile(r"Downloading Python: \d+\.\d+ of \d+\.\d+ MB \(\d+%\), "
                         r"(about (\d+ min )?(\d+ s )?left|working out the time left)")
# navigator.connection.saveData, as a browser with the data saver on reports it.
DATA_SAVER = "Object.defineProperty(navigator, 'connection', {get: () => ({saveData: true})});"


def requested_before_click(runner: BrowserRunner, page: str) -> list[str]:
    runner.open(page)
    runner.page.wait_for_timeout(GLANCE_MS)
    return runner.requested()


def test_a_first_visit_requests_nothing_of_the_runtime_before_the_click(site):
    with BrowserRunner(site) as runner:
        urls = requested_before_click(runner, NO_FIGURES)
        assert [url for url in urls if RUNTIME.search(url) or RUNNER.search(url)] == []
        assert runner.page.locator(EARLY_NOTE).count() == 0
        assert runner.problems() == []


def test_a_returning_reader_gets_python_started_early_from_the_cache(site):
    with BrowserRunner(site) as runner:
        runner.run_page(NO_FIGURES)  # Python has now run in this book, in this browser
        runner.open(ALSO_NO_FIGURES)
        runner.take_bytes_served()
        note = runner.page.locator(EARLY_NOTE)
        note.get_by_text("is ready in this page").wait_for(timeout=120_000)
        assert "started before your click" in note.text_content()
        runtime_bytes = runner.take_bytes_served()
        run = runner.run_page(ALSO_NO_FIGURES, glance_seconds=GLANCE_MS / 1000)
        result = compare(run, stored_notebook(ALSO_NO_FIGURES))
        assert result.problems == [] and result.matched == result.runnable
        # The runtime came from the HTTP cache: the early start downloaded nothing of it.
        assert runtime_bytes < 100_000, f"{runtime_bytes} bytes served while Python started early"
        assert runner.page.locator(EARLY_NOTE).count() == 0  # the runner's status took over


JS_WARM_UPS = "() => (window.browserRunTimings || []).filter((t) => t.step === 'first draw warmed up').length"


def test_a_returning_visit_warms_the_first_draw_up_once_and_before_the_figures(site):
    """On a figure page Python started early preloads matplotlib and warms its first draw up;
    the click asks for the preload again: no second warm-up (before, it ran once more, after
    the figure cell had drawn)."""
    with BrowserRunner(site) as runner:
        runner.run_page(FIGURES)  # Python and matplotlib have now run here: both are cached
        runner.open(FIGURES)
        page = runner.page
        page.locator(EARLY_NOTE).get_by_text("is ready in this page").wait_for(timeout=120_000)
        wait_until(page, f"() => ({JS_WARM_UPS})() >= 1", timeout=180_000)
        page.click(START_BUTTON)
        page.get_by_role("button", name="Run all", exact=True).click()
        runner.wait_until_finished()
        runner.type_and_run(1, "1")  # one more answer from the worker: whatever it sent before is in
        assert page.evaluate(JS_WARM_UPS) == 1
        assert runner.problems() == []


def test_a_reader_can_stop_an_early_python_and_it_stays_stopped(site):
    with BrowserRunner(site) as runner:
        runner.run_page(NO_FIGURES)
        runner.open(ALSO_NO_FIGURES)
        stop = runner.page.get_by_role("button", name="Don't start Python early")
        stop.click()
        assert "Python stopped" in runner.page.locator(EARLY_NOTE).text_content()
        urls = requested_before_click(runner, NO_FIGURES)  # remembered on the next page
        assert runner.page.locator(EARLY_NOTE).count() == 0
        assert not any(RUNTIME.search(url) for url in urls)
        run = runner.run_page(NO_FIGURES)  # the click still starts Python
        assert compare(run, stored_notebook(NO_FIGURES)).problems == []


def test_with_the_data_saver_on_python_does_not_start_early(site):
    with BrowserRunner(site) as runner:
        runner.run_page(NO_FIGURES)
        runner.context.add_init_script(DATA_SAVER)
        urls = requested_before_click(runner, ALSO_NO_FIGURES)
        assert runner.page.locator(EARLY_NOTE).count() == 0
        assert not any(RUNTIME.search(url) for url in urls)


def test_python_is_restored_from_its_snapshot(site):
    with BrowserRunner(site) as runner:
        runner.open(NO_FIGURES)
        runner.keep_snapshot()  # (on a first visit, fetched only over a line measured fast enough)
        run = runner.run_page(NO_FIGURES)
        steps = runner.page.evaluate(JS_TIMINGS)
        assert "runtime restored from its snapshot" in steps, steps
        assert compare(run, stored_notebook(NO_FIGURES)).problems == []


def test_a_snapshot_the_runtime_refuses_falls_back_to_a_fresh_start(site):
    """A copy of the site (symbolic links) whose snapshot says another build of Pyodide made it."""
    with tempfile.TemporaryDirectory(prefix="site-bad-snapshot-") as folder:
        copy = Path(folder)
        for entry in site.resolve().iterdir():
            if entry.name != "_static":
                (copy / entry.name).symlink_to(entry)
        static = copy / "_static"
        static.mkdir()
        for entry in (site / "_static").resolve().iterdir():
            if entry.name != "runner":
                (static / entry.name).symlink_to(entry)
        (static / "runner").mkdir()
        for entry in (site / "_static" / "runner").resolve().iterdir():
            (static / "runner" / entry.name).symlink_to(entry)
        snapshot = static / built_files.SNAPSHOT
        memory = bytearray(gzip.decompress(snapshot.read_bytes()))
        memory[16:48] = bytes(32)  # the header's build id (after its magic number and sizes)
        snapshot.unlink()
        snapshot.write_bytes(gzip.compress(bytes(memory)))
        with BrowserRunner(copy) as runner:
            runner.open(NO_FIGURES)
            runner.keep_snapshot()  # (else a busy machine's slow line may start afresh without asking for it)
            run = runner.run_page(NO_FIGURES)
            steps = runner.page.evaluate(JS_TIMINGS)
            assert "snapshot refused: starting afresh" in steps, steps
            assert "runtime started afresh" in steps, steps
            result = compare(run, stored_notebook(NO_FIGURES))
            assert result.problems == [] and result.matched == result.runnable


def test_matplotlib_loads_on_the_click_only_where_cells_import_it(site):
    with BrowserRunner(site) as runner:
        run = runner.run_page(NO_FIGURES)
        assert not any(MATPLOTLIB.search(url) for url in run.urls_after_click)
        runner.open(FIGURES)
        runner.take_bytes_served()
        runner.page.wait_for_timeout(GLANCE_MS)
        # Python may start early here (its runtime is cached), but matplotlib's wheels are not
        # cached: the early start only asks the cache, and downloads none of their 13 MB.
        assert runner.take_bytes_served() < 200_000
        runner.page.click(START_BUTTON)
        # Loaded from the click on, before any cell that imports it runs.
        wait_until(runner.page, "() => (window.browserRunTimings || []).some((t) => "
                                      "t.step === 'pyplot and the backend imported')", timeout=180_000)
        assert runner.take_bytes_served() > 10_000_000
        assert runner.page.evaluate("() => window.browserRun.cells.every((c) => c.runState === 'idle')")
        assert runner.problems() == []


def test_the_click_preloads_matplotlib_where_a_cell_a_reader_sees_imports_it(site):
    """The loader's list of packages loaded from the click (inlined in each page), from the
    page's source: matplotlib where a code cell that is not folded (hide-cell: a worked
    solution) imports it; nothing where only folded cells do (they load it when run)."""
    for md in notebook_pages():
        code = [cell for cell in read_page(md).cells if cell.cell_type == "code"]
        if not code:
            continue  # (no code, no "Run in your browser": tests/test_browser_run.py)
        folded = {cell.source for cell in book_shape.hidden_cells(md)}
        seen = [cell for cell in code if cell.source not in folded]
        expected = ["matplotlib"] if any(imported_names(cell.source) & FIGURE_IMPORTS for cell in seen) else []
        html = (site / md.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
        preload = re.search(r"const PRELOAD = JSON\.parse\('(.*?)'\);", html)
        assert preload and json.loads(preload.group(1)) == expected, f"{md.name}: {preload and preload.group(1)}"


def test_each_page_announces_what_its_click_downloads_figures_included(site):
    """The line beside "Run in your browser" says what the click fetches on that page, from the
    files the build wrote: Python's files and, on a page whose seen cells draw, the figures'
    (every wheel served-packages.json lists, the first figure's zip, the figure module, the
    manifest); on a page where only worked solutions draw, what running one adds. (Before,
    15.4 said 13 MB where 27.7 MB crossed the line.)"""
    from runnable_book.sphinx_ext import runner

    static = site / "_static"
    manifest = static / runner.PACKAGES_MANIFEST
    figures = (sum((manifest.parent / wheel["file"]).stat().st_size for wheel in json.loads(manifest.read_text())["packages"])
               + manifest.stat().st_size + (static / runner.FIRST_FIGURE).stat().st_size
               + sum((static / "runner" / name).stat().st_size for name in runner.ON_FIRST_FIGURE))
    python = (sum((static / "runner" / name).stat().st_size for name in runner.SERVED)
              + sum((static / name).stat().st_size for name in runner.CLICK_ASSETS))
    kinds = set()
    for md in notebook_pages():
        html = (site / md.relative_to(ROOT).with_suffix(".html")).read_text(encoding="utf-8")
        if "const FIGURES = " not in html:
            continue  # (no code cell: no loader)
        announced = {name: re.search(rf'const {name} = [^"\n]*"(.*?)"', html).group(1)
                     for name in ("DOWNLOAD_BYTES", "FIGURE_BYTES", "FIGURES")}
        assert int(announced["DOWNLOAD_BYTES"]) == python, md.name
        assert int(announced["FIGURE_BYTES"]) == figures, md.name
        preload = json.loads(re.search(r"const PRELOAD = JSON\.parse\('(.*?)'\);", html).group(1))
        draws_when_run = any(imported_names(cell.source) & FIGURE_IMPORTS  # (any cell, folded or not)
                             for cell in read_page(md).cells if cell.cell_type == "code")
        expected = "click" if preload else ("solutions" if draws_when_run else "")
        assert announced["FIGURES"] == expected, f"{md.name}: {announced['FIGURES']!r}, expected {expected!r}"
        kinds.add(expected)
    assert kinds == {"click", "solutions", ""}, f"the book has pages of each kind; found {kinds}"


def test_the_download_bar_moves_while_bytes_arrive_through_a_throttled_server(site):
    """A first visit through a throttling proxy (runnable_book/browser/throttling_proxy.py: every
    request late, one shared link, the Python worker's fetches included): from the click the
    page shows a determinate bar whose bytes, percent and time left change as the bytes come,
    then says Python is starting, then goes. (Not a timing: `make bench-run` times the slow
    network, runnable_book/bench/slow_network.py.)"""
    from runnable_book.bench.slow_network import JS_DOWNLOAD_SAMPLES, JS_WATCH_DOWNLOAD_BAR
    from runnable_book.browser.chromium import VIEWPORT, launch
    from runnable_book.browser.local_site import LocalSite

    with LocalSite(site, gzip=True) as served, \
            ThrottlingProxy(served.origin, delay_seconds=0.05, bytes_per_second=THROTTLED_BYTES_PER_SECOND) as slow, \
            launch(resolve_only_localhost=True) as browser:
        page = browser.new_context(viewport=VIEWPORT).new_page()
        page.goto(slow.url(NO_FIGURES), wait_until="load", timeout=120_000)
        page.evaluate(JS_WATCH_DOWNLOAD_BAR, 100)
        page.click(START_BUTTON)
        wait_until(page, JS_PYTHON_IDLE, timeout=300_000)
        samples = page.evaluate(JS_DOWNLOAD_SAMPLES)
        assert page.locator(".browser-run-downloading").count() == 0, "the bar stays once Python is up"
    downloading = [s for s in samples if s["text"] and s["text"].startswith("Downloading Python")]
    assert downloading, [s["status"] for s in samples[::10]]
    for sample in downloading:
        assert DOWNLOADING.fullmatch(sample["text"]), sample["text"]
        assert 0 <= sample["value"] <= sample["max"] and sample["max"] > 0, sample  # determinate
    values = [sample["value"] for sample in downloading]
    assert values == sorted(values), "the bar went back"
    assert len(set(values)) >= 5 and len({s["text"] for s in downloading}) >= 5, values
    assert any("left" in s["text"] and "working out" not in s["text"] for s in downloading), downloading[-1]
    assert any(s["text"] and s["text"].startswith("Downloaded Python") for s in samples), "never said it was starting"
