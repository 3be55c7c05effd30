"""Benchmark of "Run in your browser": what the first click costs and how soon output comes.

Usage:
    python -m tools.bench.run_in_browser [_build/html] [--page book/15_01_corpus_and_search_stub.html] [--repeat 3]

(`make bench-run` runs it.) For one page it measures, in headless Chromium:

* first-click bytes: every file the click fetches (runner, editor, Pyodide, chapter_lib),
  raw and gzipped (gzip -6 of each file, what a compressing server such as GitHub Pages
  would send), from a new browser profile;
* time to first output: from the click on "Run in your browser" (then "Run all") to the
  first output under a cell, with a new profile (cold) and again with the same profile
  (cached: HTTP cache warm);
* the first figure's extra cost, on a page with a figure cell (15.4): the cells before it
  run, then the click on its Run button; the bytes that click fetches (matplotlib and its
  dependencies, the figure backend) and the seconds until the figure shows, cold and cached;

* announced against measured: the download size the page announces before the click
  (filled in at build time, tools/sphinx_ext/runner/__init__.py) beside the bytes served;
* a print flood: `for i in range(200000): print(i)` in cell 1, its wall time from the run
  to "done" and the longest gap between two animation frames while it runs (how long the
  page could not respond); then an endless print loop, and how long Stop takes to stop it;

then runs every page with code and counts the cells whose output matches the stored
notebook (tools/checks/run_check.py). Numbers are printed and written to
_build/bench/browser_run.json; nothing is asserted. Timings depend on the machine and its
load: rerun on a quiet machine before quoting them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tools.checks.run_check import BrowserRunner, compare, pages_with_code, stored_notebook
from tools.pipeline.pages import ROOT

OUT = ROOT / "_build" / "bench" / "browser_run.json"
ANNOUNCED = re.compile(r'DOWNLOAD_BYTES = Number\("(\d+)"\)')
FLOOD = "for i in range(200000): print(i)"
ENDLESS = "i = 0\nwhile True:\n    print(i)\n    i += 1"

# Run cell 1 with `source`, timing it in the page and watching the frames meanwhile.
# With `stop_after_ms`, Stop is pressed that long after the run starts (as a reader would).
JS_TIMED_RUN = """async ([source, stopAfterMs]) => {
    const cell = window.browserRun.cells[0];
    cell.setSource(source);
    let longest = 0, last = performance.now(), watching = true;
    const frame = (now) => { longest = Math.max(longest, now - last); last = now; if (watching) requestAnimationFrame(frame); };
    requestAnimationFrame(frame);
    const started = performance.now();
    cell.element.querySelector('.browser-run-run').click();
    const finished = () => ['done', 'error', 'stopped'].includes(cell.runState);
    let stoppedAt = null;
    if (stopAfterMs != null) {
        await new Promise((resolve) => setTimeout(resolve, stopAfterMs));
        stoppedAt = performance.now();
        document.querySelector('.browser-run-stop').click();
    }
    while (!finished()) await new Promise((resolve) => setTimeout(resolve, 5));
    const ended = performance.now();
    watching = false;
    return {
        seconds: (ended - started) / 1000,
        longest_frame_gap_ms: Math.round(longest),
        stop_to_stopped_ms: stoppedAt == null ? null : Math.round(ended - stoppedAt),
        state: cell.runState,
        output_chars: cell.output.parts.reduce((n, part) => n + part.text.length, 0),
        shown_height_px: Math.round(cell.output.container.getBoundingClientRect().height),
    };
}"""


def print_flood(site: Path, page: str) -> dict:
    """The 200,000-print loop, then Stop on an endless one (a new profile, cached after)."""
    with BrowserRunner(site) as runner:
        runner.open(page)
        runner.start()
        flood = runner.page.evaluate(JS_TIMED_RUN, [FLOOD, None])
        runner.page.wait_for_function("() => document.documentElement.dataset.browserRun === 'idle'")
        stop = runner.page.evaluate(JS_TIMED_RUN, [ENDLESS, 2000])
        return {"loop_200000_prints": flood, "stop_during_endless_loop": stop}


def announced_bytes(site: Path, page: str) -> int:
    return int(ANNOUNCED.search((site / page).read_text(encoding="utf-8")).group(1))

JS_CELL_DONE = "(n) => ['done', 'error'].includes(window.browserRun.cells[n - 1].element.dataset.runState)"
JS_FIGURE_SHOWN = "(n) => !!window.browserRun.cells[n - 1].output.container.querySelector('img.browser-run-figure-image')"
JS_FIRST_FIGURE_CELL = """() => window.browserRun.cells.find((c) =>
    /^\\s*(import|from)\\s+matplotlib/m.test(c.source())).number"""


def click_bytes(site: Path, urls: list[str], origin: str) -> dict:
    """Raw and gzipped size of each distinct local file fetched after the click."""
    files = {}
    for url in urls:
        if url.startswith(origin + "/"):
            path = site / unquote(urlsplit(url).path).lstrip("/")
            if path.is_file():
                files[path] = path.read_bytes()
    return {
        "files": len(files),
        "raw_bytes": sum(len(data) for data in files.values()),
        "gzip_bytes": sum(len(gzip.compress(data, compresslevel=6)) for data in files.values()),
        "largest": sorted(((p.relative_to(site).as_posix(), len(d)) for p, d in files.items()),
                          key=lambda item: -item[1])[:5],
    }


def first_figure(runner: BrowserRunner, page: str) -> dict:
    """Python started and every cell before the page's first figure cell run; then the
    figure cell's own Run click: what it fetches and how long until its figure shows."""
    runner.open(page)
    runner.start()
    figure_cell = runner.page.evaluate(JS_FIRST_FIGURE_CELL)
    for number in range(1, figure_cell):
        runner.page.get_by_role("button", name=f"Run cell {number}", exact=True).click()
        runner.page.wait_for_function(JS_CELL_DONE, arg=number, timeout=120_000)
    runner.take_bytes_served()
    before = len(runner.requested())
    started = time.monotonic()
    runner.page.get_by_role("button", name=f"Run cell {figure_cell}", exact=True).click()
    runner.page.wait_for_function(JS_FIGURE_SHOWN, arg=figure_cell, timeout=180_000)
    seconds = time.monotonic() - started
    return {"cell": figure_cell, "seconds": seconds, "served_bytes": runner.take_bytes_served(),
            "urls": runner.requested()[before:]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    parser.add_argument("--page", default="book/15_01_corpus_and_search_stub.html")
    parser.add_argument("--figure-page", default="book/15_04_quality_and_cost.html")
    parser.add_argument("--repeat", type=int, default=3, help="cold and cached runs of the timed page")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}/index.html not found: build the book first (make html)")

    cold, cached, first_click = [], [], None
    for _ in range(args.repeat):
        with BrowserRunner(args.site) as runner:  # a new profile: nothing cached
            run = runner.run_page(args.page)
            cold.append(run.seconds_to_first_output)
            first_click = first_click or {**click_bytes(args.site, run.urls_after_click, runner.origin),
                                          "served_bytes_cold": run.bytes_after_click}
            again = runner.run_page(args.page)
            cached.append(again.seconds_to_first_output)
            first_click["served_bytes_cached"] = again.bytes_after_click

    flood = print_flood(args.site, args.page)
    announced = announced_bytes(args.site, args.page)
    figure_cold, figure_cached, figure_click = [], [], None
    for _ in range(args.repeat):
        with BrowserRunner(args.site) as runner:
            cold_run = first_figure(runner, args.figure_page)
            figure_cold.append(cold_run["seconds"])
            figure_click = figure_click or {**click_bytes(args.site, cold_run["urls"], runner.origin),
                                            "served_bytes_cold": cold_run["served_bytes"]}
            cached_run = first_figure(runner, args.figure_page)
            figure_cached.append(cached_run["seconds"])
            figure_click["served_bytes_cached"] = cached_run["served_bytes"]

    pages = {}
    with BrowserRunner(args.site) as runner:
        for page in pages_with_code(args.site):
            run = runner.run_page(page)
            result = compare(run, stored_notebook(page))
            pages[page] = {"matched": result.matched, "runnable": result.runnable,
                           "figure_cells": result.figures, "problems": result.problems,
                           "seconds_to_all_outputs": round(run.seconds_to_all_outputs, 2)}

    report = {
        "page": args.page,
        "first_click": first_click,
        "announced_bytes": announced,
        "print_flood": flood,
        "seconds_to_first_output": {
            "cold": [round(s, 2) for s in cold], "cold_median": round(statistics.median(cold), 2),
            "cached": [round(s, 2) for s in cached], "cached_median": round(statistics.median(cached), 2),
        },
        "first_figure": {
            "page": args.figure_page, "extra_bytes": figure_click,
            "seconds": {"cold": [round(s, 2) for s in figure_cold], "cold_median": round(statistics.median(figure_cold), 2),
                        "cached": [round(s, 2) for s in figure_cached],
                        "cached_median": round(statistics.median(figure_cached), 2)},
        },
        "pages": pages,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    partial = OUT.with_suffix(".json.tmp")  # never a half-written report
    partial.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    partial.replace(OUT)

    fc = first_click
    print(f"first click on {args.page}: {fc['files']} files, {fc['raw_bytes'] / 1e6:.2f} MB raw, "
          f"{fc['gzip_bytes'] / 1e6:.2f} MB gzipped (served: {fc['served_bytes_cold'] / 1e6:.2f} MB cold, "
          f"{fc['served_bytes_cached'] / 1e6:.2f} MB with the HTTP cache)")
    # The page shows the figure to 0.1 MB ("x of 14.0 MB"); it is summed when pages are written.
    same = round(announced / 1e5) == round(fc["served_bytes_cold"] / 1e5)
    print(f"announced on the page: {announced:,} bytes; served cold: {fc['served_bytes_cold']:,} bytes "
          f"({'the same' if same else 'NOT the same'} to the 0.1 MB the page shows)")
    loop, stop = flood["loop_200000_prints"], flood["stop_during_endless_loop"]
    print(f"print flood ({FLOOD!r}): {loop['seconds']:.2f} s to done, longest frame gap {loop['longest_frame_gap_ms']} ms, "
          f"output area {loop['shown_height_px']} px tall for {loop['output_chars']:,} characters")
    print(f"Stop during an endless print loop: stopped {stop['stop_to_stopped_ms']} ms after the click "
          f"(state {stop['state']}), longest frame gap {stop['longest_frame_gap_ms']} ms")
    print(f"time to first output: cold {report['seconds_to_first_output']['cold']} s, "
          f"cached {report['seconds_to_first_output']['cached']} s")
    ff = report["first_figure"]
    fb = ff["extra_bytes"]
    print(f"first figure on {ff['page']} (its cell's click, after the cells before it): {fb['files']} more files, "
          f"{fb['raw_bytes'] / 1e6:.2f} MB raw, {fb['gzip_bytes'] / 1e6:.2f} MB gzipped "
          f"(served: {fb['served_bytes_cold'] / 1e6:.2f} MB cold, {fb['served_bytes_cached'] / 1e6:.2f} MB cached); "
          f"figure shown after: cold {ff['seconds']['cold']} s, cached {ff['seconds']['cached']} s")
    total = [0, 0, 0]
    for page, row in pages.items():
        print(f"  {page}: {row['matched']}/{row['runnable']} cells match the stored notebook, "
              f"{row['figure_cells']} figure cells drawn in the page; all outputs after {row['seconds_to_all_outputs']} s")
        total = [total[0] + row["matched"], total[1] + row["runnable"], total[2] + row["figure_cells"]]
    print(f"total: {total[0]}/{total[1]} cells match; {total[2]} figure cells drawn in the page")
    print(f"written: {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
