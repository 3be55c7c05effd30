"""Benchmark of "Run in your browser": what the first click costs and how soon output comes.

Usage:
    python -m runnable_book.bench.run_in_browser [_build/html] [--page book/15_01_corpus_and_search_stub.html] [--repeat 3]

(`make bench-run` runs it.) For one page it measures, in headless Chromium:

* first-click bytes: every file the click fetches (runner, editor, Pyodide, chapter_lib),
  raw and gzipped (gzip -6 of each file, what a compressing server such as GitHub Pages
  would send), from a new browser profile;
* time to first output: from the click on "Run in your browser" (then "Run all") to the
  first output under a cell, with a new profile (cold) and again with the same profile
  (cached: a returning reader, HTTP cache warm); each click comes GLANCE_SECONDS after the
  page's load event, as a reader looks at the page first;
* the bare runtime's start, timed the same way in the same run: a blank page
  (runnable_book/bench/bare_runtime/, served at /_bench/ beside the site for the benchmark only) that
  loads the book's own Pyodide files in a module worker on a click and runs `1 + 1`, cold
  and cached; the book's times are printed as ratios to it;
* where the time goes: each step's end after the click (the worker's and the page's marks,
  window.browserRunTimings; for the bare runtime, its fetches, the WebAssembly compile and
  the interpreter's start), medians over the runs;
* what a first-time reader downloads before clicking (bytes served while the page loads and
  the reader glances; any runtime file among them);
* the first figure, on a page with figure cells (15.4): the click, then "Run all", until its
  first figure shows, cold and cached, the bytes matplotlib and its dependencies add, and the
  steps (wheels fetched and unpacked, matplotlib imported, font cache read, pyplot imported,
  the figure cell done);

* announced against measured: the download size the page announces before the click
  (filled in at build time, runnable_book/sphinx_ext/runner/__init__.py) beside the bytes served;
* a print flood: `for i in range(200000): print(i)` in cell 1, its wall time from the run
  to "done" and the longest gap between two animation frames while it runs (how long the
  page could not respond); then an endless print loop, and how long Stop takes to stop it;

With --busy N (`make bench-run` runs `--timing-only --busy 1` too), the timings are taken
beside N busy processes (runnable_book/common/busy.py: a reader's machine doing one other thing) and
written to _build/bench/browser_run_busy<N>.json.

Then it runs every page with code and counts the cells whose output matches the stored
notebook (runnable_book/checks/run_check.py). Numbers are printed and written to
_build/bench/browser_run.json; nothing is asserted. Timings depend on the machine and its
load: rerun on a quiet machine before quoting them.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

from runnable_book.browser.page_runner import JS_PYTHON_IDLE, JS_TIMINGS, BrowserRunner
from runnable_book.common.busy import busy_processes
from runnable_book.browser.page_state import wait_until
from runnable_book.checks.run_check import compare, pages_with_code, stored_notebook
from runnable_book.common.page_scripts import page_function
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "bench" / "browser_run.json"
BARE_RUNTIME = Path(__file__).parent / "bare_runtime"
GLANCE_SECONDS = 3.0  # between the page's load event and the click (--glance)
RUNTIME_FILE = re.compile(r"/_static/pyodide/")
ANNOUNCED = re.compile(r'DOWNLOAD_BYTES = Number\("(\d+)"\)')
FLOOD = "for i in range(200000): print(i)"
ENDLESS = "i = 0\nwhile True:\n    print(i)\n    i += 1"

# What the benchmark runs in the page: run_in_browser.mjs.
SCRIPT = Path(__file__).with_suffix(".mjs")
# ([source, stop_after_ms]) cell 1 run with source, timed in the page, its frames watched;
# Stop pressed stop_after_ms after the start (None: never).
JS_TIMED_RUN = page_function(SCRIPT, "timedRun")
JS_FIGURE_SHOWN = page_function(SCRIPT, "figureShown")  # (n) cell n shows a figure it drew
JS_FIRST_FIGURE_CELL = page_function(SCRIPT, "firstFigureCell")  # the first cell importing matplotlib
JS_BARE_RUNTIME_ANSWERED = page_function(SCRIPT, "bareRuntimeAnswered")  # its page shows 1 + 1


def print_flood(site: Path, page: str) -> dict:
    """The 200,000-print loop, then Stop on an endless one (a new profile, cached after)."""
    with BrowserRunner(site) as runner:
        runner.open(page)
        runner.start()
        flood = runner.page.evaluate(JS_TIMED_RUN, [FLOOD, None])
        wait_until(runner.page, JS_PYTHON_IDLE)
        stop = runner.page.evaluate(JS_TIMED_RUN, [ENDLESS, 2000])
        return {"loop_200000_prints": flood, "stop_during_endless_loop": stop}


def announced_bytes(site: Path, page: str) -> int:
    return int(ANNOUNCED.search((site / page).read_text(encoding="utf-8")).group(1))

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


@contextlib.contextmanager
def site_with_bare_runtime(site: Path):
    """The built site, plus the bare runtime's page at /_bench/ (a folder of symbolic links:
    the build itself is not touched)."""
    with tempfile.TemporaryDirectory(prefix="bench-site-") as folder:
        root = Path(folder)
        for entry in Path(site).resolve().iterdir():
            (root / entry.name).symlink_to(entry)
        (root / "_bench").symlink_to(BARE_RUNTIME.resolve())
        yield root


def steps_after_click(timings: list[dict]) -> dict[str, float]:
    """Each step's end in seconds after the click (the first time it is marked)."""
    clicks = [t["at"] for t in timings if t["step"] == "click"]
    if not clicks:
        return {}
    click, steps = clicks[-1], {}
    for mark in sorted(timings, key=lambda t: t["at"]):
        if mark["step"] != "click":
            steps.setdefault(mark["step"], round((mark["at"] - click) / 1000, 3))
    return steps


def median_steps(runs: list[dict[str, float]]) -> dict[str, float]:
    """Per step, the median over the runs that marked it, in the order of the medians."""
    names = {name for run in runs for name in run}
    medians = {name: round(statistics.median([run[name] for run in runs if name in run]), 3) for name in names}
    return dict(sorted(medians.items(), key=lambda item: item[1]))


def bare_start(runner: BrowserRunner, glance: float = GLANCE_SECONDS) -> tuple[float, dict]:
    """The bare runtime: the page, a glance, the click; seconds until 1 + 1 shows."""
    runner.page.goto(f"{runner.origin}/_bench/index.html", wait_until="load")
    runner.page.wait_for_timeout(glance * 1000)
    started = time.monotonic()
    runner.page.click("#start")
    wait_until(runner.page, JS_BARE_RUNTIME_ANSWERED, timeout=120_000)
    seconds = time.monotonic() - started
    return seconds, steps_after_click(runner.page.evaluate(JS_TIMINGS))


def before_click(runner: BrowserRunner, page: str, glance: float = GLANCE_SECONDS) -> dict:
    """A first-time reader: what the page and the glance before the click download."""
    runner.take_bytes_served()
    runner.open(page)
    runner.page.wait_for_timeout(glance * 1000)
    urls = runner.requested()
    return {"served_bytes": runner.take_bytes_served(), "requests": len(urls),
            "runtime_requests": [url for url in urls if RUNTIME_FILE.search(url)]}


def first_figure(runner: BrowserRunner, page: str, glance: float = GLANCE_SECONDS) -> dict:
    """The page, a glance, the click, "Run all": seconds until its first figure shows, and
    what matplotlib added (files fetched after the click other than the first click's)."""
    runner.open(page)
    runner.page.wait_for_timeout(glance * 1000)
    runner.take_bytes_served()
    before = len(runner.requested())
    started = time.monotonic()
    runner.page.click("button.browser-run-at-cell")
    runner.page.get_by_role("button", name="Run all", exact=True).click()
    figure_cell = runner.page.evaluate(JS_FIRST_FIGURE_CELL)
    wait_until(runner.page, JS_FIGURE_SHOWN, arg=figure_cell, timeout=180_000)
    seconds = time.monotonic() - started
    timings = runner.page.evaluate(JS_TIMINGS)
    runner.wait_until_finished()
    urls = [url for url in runner.requested()[before:] if "/_static/pyodide/" in url and url.endswith(".whl")
            or url.endswith("/runner/figures.py")]
    return {"cell": figure_cell, "seconds": seconds, "served_bytes": runner.take_bytes_served(),
            "urls": urls, "steps": steps_after_click(timings)}


def summary(values: list[float]) -> dict:
    return {"runs": [round(v, 2) for v in values], "median": round(statistics.median(values), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    parser.add_argument("--page", default="book/15_01_corpus_and_search_stub.html")
    parser.add_argument("--figure-page", default="book/15_04_quality_and_cost.html")
    parser.add_argument("--repeat", type=int, default=3, help="cold and cached runs of the timed page")
    parser.add_argument("--timing-only", action="store_true",
                        help="only the start and first-figure timings (no print flood, no run of every page)")
    parser.add_argument("--skip-figure", action="store_true", help="no first-figure timing")
    parser.add_argument("--busy", type=int, default=0, help="time beside this many busy processes (runnable_book/common/busy.py)")
    parser.add_argument("--glance", type=float, default=GLANCE_SECONDS,
                        help="seconds between a page's load and the click: how long a returning reader's page "
                             "has to get ready before it is asked (a long one shows what a click costs when "
                             "everything the page prepares early is ready)")
    parser.add_argument("--out", type=Path, help="where the report goes (default: _build/bench/browser_run*.json; "
                                                  "runnable_book/bench/many_chapters.py times other books)")
    args = parser.parse_args(argv)
    out = OUT.with_name(f"browser_run_busy{args.busy}.json") if args.busy else OUT
    if args.glance != GLANCE_SECONDS:
        out = out.with_name(f"{out.stem}_glance{args.glance:g}.json")
    out = args.out or out
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}/index.html not found: build the book first (make html)")

    bare = {"cold": [], "cached": [], "cold_steps": [], "cached_steps": []}
    book = {"cold": [], "cached": [], "cold_steps": [], "cached_steps": []}
    figure = {"cold": [], "cached": [], "cold_steps": [], "cached_steps": []}
    first_click = figure_click = first_visit = None
    with site_with_bare_runtime(args.site) as site, busy_processes(args.busy):
        for _ in range(args.repeat):  # each kind in a new profile: cold, then cached
            with BrowserRunner(site) as runner:
                for kind in ("cold", "cached"):
                    seconds, steps = bare_start(runner, args.glance)
                    bare[kind].append(seconds)
                    bare[kind + "_steps"].append(steps)
            with BrowserRunner(site) as runner:
                first_visit = first_visit or before_click(runner, args.page, args.glance)
                for kind in ("cold", "cached"):
                    run = runner.run_page(args.page, glance_seconds=args.glance)
                    book[kind].append(run.seconds_to_first_output)
                    book[kind + "_steps"].append({**steps_after_click(run.timings),
                                                  "first output shown": round(run.seconds_to_first_output, 3)})
                    if kind == "cold":
                        first_click = first_click or {**click_bytes(args.site, run.urls_after_click, runner.origin),
                                                      "served_bytes_cold": run.bytes_after_click}
                    else:
                        first_click["served_bytes_cached"] = run.bytes_after_click
            if args.skip_figure:
                continue
            with BrowserRunner(site) as runner:
                for kind in ("cold", "cached"):
                    run = first_figure(runner, args.figure_page, args.glance)
                    figure[kind].append(run["seconds"])
                    figure[kind + "_steps"].append({**run["steps"], "figure shown": round(run["seconds"], 3)})
                    if kind == "cold":
                        figure_click = figure_click or {**click_bytes(args.site, run["urls"], runner.origin),
                                                        "served_bytes_cold": run["served_bytes"]}

    def timed(runs: dict, against: dict | None) -> dict:
        out = {}
        for kind in ("cold", "cached"):
            if not runs[kind]:
                continue
            out[kind] = summary(runs[kind])
            out[kind + "_steps"] = median_steps(runs[kind + "_steps"])
            if against:
                out[kind + "_ratio_to_bare"] = round(out[kind]["median"] / statistics.median(against[kind]), 2)
        return out

    timing = {"glance_seconds": args.glance, "busy_processes_beside": args.busy, "bare_runtime": timed(bare, None),
              "first_output": timed(book, bare), "first_figure": {"page": args.figure_page, **timed(figure, bare),
                                                                  "extra_bytes": figure_click}}
    if args.timing_only:
        report = {"page": args.page, "before_click_first_visit": first_visit, "first_click": first_click,
                  "timing": timing}
        return write_and_print_timing(report, out)
    flood = print_flood(args.site, args.page)
    announced = announced_bytes(args.site, args.page)

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
        "before_click_first_visit": first_visit,
        "first_click": first_click,
        "announced_bytes": announced,
        "print_flood": flood,
        "timing": timing,
        "pages": pages,
    }
    write_and_print_timing(report, out)
    fc = first_click
    # The page shows the figure to 0.1 MB ("x of 14.0 MB"); it is summed when pages are written.
    same = round(announced / 1e5) == round(fc["served_bytes_cold"] / 1e5)
    print(f"announced on the page: {announced:,} bytes; served cold: {fc['served_bytes_cold']:,} bytes "
          f"({'the same' if same else 'NOT the same'} to the 0.1 MB the page shows)")
    loop, stop = flood["loop_200000_prints"], flood["stop_during_endless_loop"]
    print(f"print flood ({FLOOD!r}): {loop['seconds']:.2f} s to done, longest frame gap {loop['longest_frame_gap_ms']} ms, "
          f"output area {loop['shown_height_px']} px tall for {loop['output_chars']:,} characters")
    print(f"Stop during an endless print loop: stopped {stop['stop_to_stopped_ms']} ms after the click "
          f"(state {stop['state']}), longest frame gap {stop['longest_frame_gap_ms']} ms")
    total = [0, 0, 0]
    for page, row in pages.items():
        print(f"  {page}: {row['matched']}/{row['runnable']} cells match the stored notebook, "
              f"{row['figure_cells']} figure cells drawn in the page; all outputs after {row['seconds_to_all_outputs']} s")
        total = [total[0] + row["matched"], total[1] + row["runnable"], total[2] + row["figure_cells"]]
    print(f"total: {total[0]}/{total[1]} cells match; {total[2]} figure cells drawn in the page")
    return 0


def write_and_print_timing(report: dict, out: Path = OUT) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_suffix(".json.tmp")  # never a half-written report
    partial.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    partial.replace(out)
    visit, fc, timing = report["before_click_first_visit"], report["first_click"], report["timing"]
    if timing["busy_processes_beside"]:
        print(f"(timed beside {timing['busy_processes_beside']} busy process(es))")
    print(f"before the click, a first visit to {report['page']} (load, then {timing['glance_seconds']} s): "
          f"{visit['requests']} requests, {visit['served_bytes'] / 1e3:.0f} kB served, "
          f"runtime files requested: {visit['runtime_requests'] or 'none'}")
    print(f"first click: {fc['files']} files, {fc['raw_bytes'] / 1e6:.2f} MB raw, {fc['gzip_bytes'] / 1e6:.2f} MB gzipped "
          f"(served: {fc['served_bytes_cold'] / 1e6:.2f} MB cold, {fc.get('served_bytes_cached', 0) / 1e6:.2f} MB cached)")
    bare = timing["bare_runtime"]
    for name, label in (("bare_runtime", "bare runtime, click to 1 + 1"), ("first_output", "book, click to first output"),
                        ("first_figure", "book, click to first figure (Run all)")):
        runs = timing[name]
        for kind in ("cold", "cached"):
            if kind not in runs:
                continue
            ratio = runs.get(kind + "_ratio_to_bare")
            ratio_text = f" = {ratio}x the bare runtime's {bare[kind]['median']} s" if ratio is not None else ""
            print(f"{label}, {kind}: median {runs[kind]['median']} s of {runs[kind]['runs']}{ratio_text}")
            print("    " + "; ".join(f"{step} {at:.2f}" for step, at in runs[kind + "_steps"].items()))
    extra = timing["first_figure"].get("extra_bytes")
    if extra:
        print(f"first figure's packages: {extra['files']} files, {extra['raw_bytes'] / 1e6:.2f} MB raw "
              f"({extra['served_bytes_cold'] / 1e6:.2f} MB served after the click, cold, the runtime included)")
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
