"""Benchmark of the book offline (runnable_book/sphinx_ext/offline.py): what its service worker costs and saves.

Usage:
    python -m runnable_book.bench.offline_visits [_build/html]

(`make bench-run` runs it after run_in_browser.) In headless Chromium, one new profile that
allows service workers, on 15.4 (a page with a figure):

* the first visit: bytes served (gzip, as GitHub Pages sends text) until the worker has kept the
  pages and the search, and its seconds; the same with the data saver on (its page alone);
* "Keep this book for offline use (N MB)" after a first visit: the N the page states, and the
  bytes served until everything is kept;
* the first run online: "Run in your browser", Run all, until the figure is drawn (bytes, s);
* the same page reloaded with the network off, run again: seconds (the cache's speed; the
  server is asked for nothing);
* Stop on an isolated page: from the click on Stop in `while True: pass` to the cell's
  KeyboardInterrupt traceback (Python kept);
* the size kept for offline use (the browser's own estimate of this site's storage).

Printed and written to _build/bench/offline.json; nothing is asserted. Timings depend on the
machine's load.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from runnable_book.browser.chromium import VIEWPORT, launch
from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.page_runner import JS_CELL_IS, JS_RUN_FINISHED
from runnable_book.browser.page_state import JS_CROSS_ORIGIN_ISOLATED, JS_OFFLINE_STATE, wait_until
from runnable_book.common.page_scripts import page_function
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "bench" / "offline.json"
PAGE = "book/15_04_quality_and_cost.html"
# What the benchmark waits for and reads in the page: offline_visits.mjs.
SCRIPT = Path(__file__).with_suffix(".mjs")
JS_FIGURE = page_function(SCRIPT, "figureShown")
JS_ALL_KEPT = page_function(SCRIPT, "allKept")
JS_FIRST_CELL_STOPPED = page_function(SCRIPT, "firstCellStopped")  # with its KeyboardInterrupt shown
JS_STORAGE_USAGE = page_function(SCRIPT, "storageUsage")
# An init script (run before the page's own): the data saver on.
DATA_SAVER = "Object.defineProperty(NetworkInformation.prototype, 'saveData', { get: () => true })"
SETTLE_MS = 5_000  # after "ready" or the data saver's first paint: anything late would show
LONG_MS = 300_000


def run_to_figure(page) -> float:
    started = time.monotonic()
    page.click("button.browser-run-at-cell")
    page.get_by_role("button", name="Run all", exact=True).click()
    wait_until(page, JS_FIGURE, timeout=LONG_MS)
    seconds = time.monotonic() - started
    wait_until(page, JS_RUN_FINISHED, timeout=LONG_MS)  # (its time not counted)
    return seconds


def visit_until_kept(served, browser):
    """A new reader (a fresh context, service workers allowed) opens PAGE: (context, page,
    seconds until the worker has kept the pages), the server's byte count reset first."""
    context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
    page = context.new_page()
    served.server.take_bytes_served()
    started = time.monotonic()
    page.goto(served.url(PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=LONG_MS)
    return context, page, time.monotonic() - started


def first_visits(served, browser) -> dict:
    """Bytes of a first visit (until the pages and the search are kept), with the data saver
    on, and of "Keep this book for offline use" after a first visit."""
    report = {}
    context, page, seconds = visit_until_kept(served, browser)
    page.wait_for_timeout(SETTLE_MS)
    report["first_visit"] = {"seconds_until_kept": round(seconds, 2), "bytes": served.server.take_bytes_served()}
    keep = page.locator("button.offline-keep-all")
    stated = keep.text_content()
    started = time.monotonic()
    keep.click()
    wait_until(page, JS_ALL_KEPT, timeout=LONG_MS)
    report["keep_offline"] = {"stated": stated, "bytes": served.server.take_bytes_served(),
                              "seconds": round(time.monotonic() - started, 2)}
    context.close()
    context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
    context.add_init_script(DATA_SAVER)
    page = context.new_page()
    page.goto(served.url(PAGE))
    wait_until(page, JS_OFFLINE_STATE, arg="partial", timeout=LONG_MS)
    page.wait_for_timeout(SETTLE_MS)
    report["first_visit_data_saver"] = {"bytes": served.server.take_bytes_served()}
    context.close()
    return report


def measure(site: Path) -> dict:
    report = {}
    with LocalSite(site, gzip=True) as served, launch() as browser:
        report.update(first_visits(served, browser))
        context, page, _ = visit_until_kept(served, browser)
        served.server.take_bytes_served()
        seconds = run_to_figure(page)
        report["first_run_online"] = {"seconds_to_figure": round(seconds, 2), "bytes": served.server.take_bytes_served()}
        context.set_offline(True)
        started = time.monotonic()
        page.reload()
        page.wait_for_load_state("load")
        load = time.monotonic() - started
        report["reload_offline"] = {"seconds_to_load": round(load, 2), "seconds_to_figure": round(run_to_figure(page), 2),
                                    "bytes": served.server.take_bytes_served(),
                                    "cross_origin_isolated": page.evaluate(JS_CROSS_ORIGIN_ISOLATED)}
        page.locator("div.cell").nth(0).locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text("while True:\n    pass")
        page.keyboard.press("Shift+Enter")
        wait_until(page, JS_CELL_IS, arg=[1, "running"])
        page.wait_for_timeout(500)
        started = time.monotonic()
        page.get_by_role("button", name="Stop", exact=True).click()
        wait_until(page, JS_FIRST_CELL_STOPPED, timeout=30_000)
        report["stop_to_traceback_seconds"] = round(time.monotonic() - started, 3)
        usage = page.evaluate(JS_STORAGE_USAGE)
        report["kept_for_offline_mb"] = round(usage / 1e6, 1)
    return report


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0]) if args else ROOT / "_build" / "html"
    report = measure(site)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
