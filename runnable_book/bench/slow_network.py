"""Benchmark: Python on a slow network, the book's first output beside bare Pyodide's start.

Usage:
    python -m runnable_book.bench.slow_network [_build/html] [--page book/15_02_one_shot_rag.html]
        [--delay 0.4] [--rate 50000] [--repeat 1] [--screenshots]

(`make bench-run` runs it.) The built site is served as GitHub Pages serves it (gzip, 304s:
runnable_book/browser/local_site.py) behind a throttling proxy (runnable_book/browser/throttling_proxy.py):
every request waits ``--delay`` seconds, and every answer shares one link of ``--rate`` bytes a
second, the Python worker's and the service worker's included (Chromium's own throttling
does not apply to workers). Other hosts are refused by name resolution, never by routing
(routing switches off Chromium's HTTP cache). In the same run, each in a new profile:

* bare Pyodide's start: the benchmark's blank page (runnable_book/bench/bare_runtime/, served at
  /_bench/) loads Pyodide's own files in a module worker on a click and runs `1 + 1`;
* the book, a first visit with service workers allowed (its background copy of the pages
  shares the line): the page, a glance, "Run in your browser", "Run all", until the first
  output under a cell;
* with --figure-page (`make bench-run` gives 15.4), the same for a page that draws: bare
  Pyodide's start and then its own `loadPackage("matplotlib")`, beside the book's click to
  the first figure;

for each the seconds from the click, the bytes the host sent after it, and for the book the
steps of its start (window.browserRunTimings) and what its download bar showed, sampled
every SAMPLE_MS: how often it changed, the longest it stood still while downloading, and its
first and last texts.

With --screenshots, only pictures of the bar at its start, midway and at its end
(_build/bench/bar-start.png, bar-middle.png, bar-end.png; a faster --rate keeps it short).

Printed and written to _build/bench/slow_network.json; nothing is asserted. A run takes
minutes (about 12 MB at 50 KB/s for bare Pyodide alone).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from runnable_book.bench.run_in_browser import (GLANCE_SECONDS, JS_BARE_RUNTIME_ANSWERED, JS_FIGURE_SHOWN, JS_FIRST_FIGURE_CELL,
                                        site_with_bare_runtime, steps_after_click)
from runnable_book.browser.chromium import VIEWPORT, launch
from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.page_runner import JS_FIRST_OUTPUT, JS_TIMINGS, START_BUTTON
from runnable_book.browser.page_state import wait_until
from runnable_book.browser.throttling_proxy import SLOW_BYTES_PER_SECOND, SLOW_DELAY_SECONDS, ThrottlingProxy
from runnable_book.common.page_scripts import page_function
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "bench" / "slow_network.json"
PAGE = "book/15_02_one_shot_rag.html"
SCRIPT = Path(__file__).with_suffix(".mjs")
JS_WATCH_DOWNLOAD_BAR = page_function(SCRIPT, "watchDownloadBar")  # (every ms)
JS_DOWNLOAD_SAMPLES = page_function(SCRIPT, "downloadSamples")
SAMPLE_MS = 200
LONG_MS = 30 * 60 * 1000  # a first start at 50 KB/s takes minutes; never for ever


JS_BARE_MATPLOTLIB_LOADED = "() => document.getElementById('out').dataset.matplotlib === 'loaded'"


def bare_start(browser, slow: ThrottlingProxy, matplotlib: bool = False) -> dict:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(slow.url("_bench/index.html" + ("?matplotlib" if matplotlib else "")), wait_until="load", timeout=LONG_MS)
        page.wait_for_timeout(GLANCE_SECONDS * 1000)
        slow.take_passed()
        started = time.monotonic()
        page.click("#start")
        wait_until(page, JS_BARE_MATPLOTLIB_LOADED if matplotlib else JS_BARE_RUNTIME_ANSWERED, timeout=LONG_MS)
        seconds = time.monotonic() - started
        return {"seconds": round(seconds, 1), "sent_after_click": sent(slow),
                "steps": steps_after_click(page.evaluate(JS_TIMINGS))}
    finally:
        context.close()


def sent(slow: ThrottlingProxy) -> dict:
    """What reached the browser since the last call (the proxy's count: an answer the browser
    abandoned counts what it had read, where the host counts the whole file): bytes, and the
    largest answers."""
    passed = slow.take_passed()
    start = min((answer.asked for answer in passed), default=0)
    largest = sorted(passed, key=lambda answer: -answer.body_bytes)[:8]
    return {"bytes": sum(answer.body_bytes for answer in passed), "answers": len(passed),
            "largest": [[answer.path, answer.body_bytes, round(answer.asked - start, 1), round(answer.ended - start, 1)]
                        for answer in largest]}


def bar_summary(samples: list[dict]) -> dict:
    """What the download bar showed: while it was on the page, how often its text changed and
    the longest it stood still."""
    shown = [sample for sample in samples if sample["text"] is not None]
    if not shown:
        return {"shown": False}
    def downloading(sample: dict) -> bool:
        return sample["value"] is not None and sample["value"] < sample["max"]

    changes, longest, last_change = 0, 0.0, shown[0]["at"]
    for before, now in zip(shown, shown[1:]):
        if now["text"] != before["text"]:
            changes += 1
            last_change = now["at"]
        if downloading(now):  # (once all has arrived, Python starts: the bar says so, and waits)
            longest = max(longest, now["at"] - last_change)
    return {"shown": True, "seconds_shown": round((shown[-1]["at"] - shown[0]["at"]) / 1000, 1),
            "changes": changes, "longest_still_seconds": round(longest / 1000, 2),
            "first": shown[0]["text"], "middle": shown[len(shown) // 2]["text"], "last": shown[-1]["text"],
            "samples_while_downloading": sum(map(downloading, shown))}


def book_first_output(browser, slow: ThrottlingProxy, page_name: str, figure: bool = False) -> dict:
    context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
    try:
        page = context.new_page()
        started = time.monotonic()
        page.goto(slow.url(page_name), wait_until="load", timeout=LONG_MS)
        loaded = time.monotonic() - started
        page.wait_for_timeout(GLANCE_SECONDS * 1000)
        slow.take_passed()
        page.evaluate(JS_WATCH_DOWNLOAD_BAR, SAMPLE_MS)
        started = time.monotonic()
        page.click(START_BUTTON)
        page.get_by_role("button", name="Run all", exact=True).click(timeout=LONG_MS)
        if figure:
            wait_until(page, JS_FIGURE_SHOWN, arg=page.evaluate(JS_FIRST_FIGURE_CELL), timeout=LONG_MS)
        else:
            wait_until(page, JS_FIRST_OUTPUT, timeout=LONG_MS)
        seconds = time.monotonic() - started
        return {"seconds": round(seconds, 1), "page_loaded_seconds": round(loaded, 1),
                "sent_after_click": sent(slow), "steps": steps_after_click(page.evaluate(JS_TIMINGS)),
                "download_bar": bar_summary(page.evaluate(JS_DOWNLOAD_SAMPLES))}
    finally:
        context.close()


# The bar's pictures (--screenshots): at its start, midway and at its end (all in: Python
# starting or the figures unpacked), each once, of the loader's bar alone.
SCREENSHOTS = {"start": 0.0, "middle": 0.5, "end": 0.98}
JS_BAR_DONE = ("() => { const m = document.querySelector('.browser-run-downloading-meter');"
               " return m && m.max ? m.value / m.max : null; }")


def bar_screenshots(browser, slow: ThrottlingProxy, page_name: str, out: Path) -> list[Path]:
    """A first visit to page_name, "Run in your browser" and Run all: a picture of the bar as
    it passes each of SCREENSHOTS (its share done), until the first output and the bar gone."""
    context = browser.new_context(viewport=VIEWPORT)
    taken: list[Path] = []
    try:
        page = context.new_page()
        page.goto(slow.url(page_name), wait_until="load", timeout=LONG_MS)
        page.click(START_BUTTON)
        page.get_by_role("button", name="Run all", exact=True).click(timeout=LONG_MS)
        waiting = dict(SCREENSHOTS)
        deadline = time.monotonic() + LONG_MS / 1000
        while waiting and time.monotonic() < deadline:
            done = page.evaluate(JS_BAR_DONE)
            if done is None and taken:  # the bar went before the last picture
                break
            for name, share in list(waiting.items()):
                if done is not None and done >= share and done > 0:
                    path = out / f"bar-{name}.png"
                    page.locator(".browser-run-bar").first.screenshot(path=path)
                    taken.append(path)
                    del waiting[name]
                    break  # (one a pass: the next waits for the bar to move on)
            page.wait_for_timeout(SAMPLE_MS)
        wait_until(page, JS_FIRST_OUTPUT, timeout=LONG_MS)
        return taken
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    parser.add_argument("--page", default=PAGE)
    parser.add_argument("--delay", type=float, default=SLOW_DELAY_SECONDS, help="seconds every request waits")
    parser.add_argument("--rate", type=float, default=SLOW_BYTES_PER_SECOND, help="bytes a second, shared")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--figure-page", default=None,
                        help="also a page that draws: its first figure beside bare Pyodide's start and loadPackage('matplotlib')")
    parser.add_argument("--screenshots", action="store_true",
                        help=f"only pictures of the bar, {', '.join(SCREENSHOTS)}: {OUT.parent.relative_to(ROOT)}/bar-*.png")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}/index.html not found: build the book first (make html)")
    if args.screenshots:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        with LocalSite(args.site, gzip=True) as served, \
                ThrottlingProxy(served.origin, delay_seconds=args.delay, bytes_per_second=args.rate) as slow, \
                launch(resolve_only_localhost=True) as browser:
            for path in bar_screenshots(browser, slow, args.page, OUT.parent):
                print(f"written: {path.relative_to(ROOT)}")
        return 0
    runs = {"bare": [], "book": [], "bare_matplotlib": [], "book_figure": []}
    with site_with_bare_runtime(args.site) as site, LocalSite(site, gzip=True) as served, \
            ThrottlingProxy(served.origin, delay_seconds=args.delay, bytes_per_second=args.rate) as slow, \
            launch(resolve_only_localhost=True) as browser:
        for _ in range(args.repeat):
            runs["bare"].append(bare_start(browser, slow))
            runs["book"].append(book_first_output(browser, slow, args.page))
            if args.figure_page:
                runs["bare_matplotlib"].append(bare_start(browser, slow, matplotlib=True))
                runs["book_figure"].append(book_first_output(browser, slow, args.figure_page, figure=True))
    bare = statistics.median(run["seconds"] for run in runs["bare"])
    book = statistics.median(run["seconds"] for run in runs["book"])
    report = {"network": {"delay_seconds": args.delay, "bytes_per_second": args.rate}, "page": args.page,
              "bare_runtime_seconds": bare, "book_first_output_seconds": book,
              "book_to_bare": round(book / bare, 2), "runs": runs}
    if args.figure_page:
        bare_figure = statistics.median(run["seconds"] for run in runs["bare_matplotlib"])
        book_figure = statistics.median(run["seconds"] for run in runs["book_figure"])
        report.update({"figure_page": args.figure_page, "bare_runtime_and_matplotlib_seconds": bare_figure,
                       "book_first_figure_seconds": book_figure, "figure_to_bare": round(book_figure / bare_figure, 2)})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    partial = OUT.with_suffix(".json.tmp")  # never a half-written report
    partial.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    partial.replace(OUT)
    print(f"slow network ({args.delay * 1000:.0f} ms a request, {args.rate / 1000:.0f} KB/s shared), first visit, "
          f"click to first output: book {book} s, bare Pyodide {bare} s (click to 1 + 1) = {report['book_to_bare']}x")
    if args.figure_page:
        print(f"  {args.figure_page}, click to first figure: book {book_figure} s, bare Pyodide's start and "
              f"loadPackage('matplotlib') {bare_figure} s = {report['figure_to_bare']}x")
    for kind in runs:
        for run in runs[kind]:
            print(f"  {kind}: {run['seconds']} s, {run['sent_after_click']['bytes'] / 1e6:.2f} MB sent after the click "
                  f"in {run['sent_after_click']['answers']} answers, the largest: "
                  + ", ".join(f"{path} {size / 1e6:.2f} MB ({asked}-{ended} s)"
                             for path, size, asked, ended in run["sent_after_click"]["largest"][:4]))
            print("    " + "; ".join(f"{step} {at:.1f}" for step, at in run["steps"].items()))
    for run in runs["book"] + runs["book_figure"]:
        bar = run["download_bar"]
        if bar["shown"]:
            print(f"  download bar: shown {bar['seconds_shown']} s, changed {bar['changes']} times, "
                  f"still at most {bar['longest_still_seconds']} s; first {bar['first']!r}; "
                  f"midway {bar['middle']!r}; last {bar['last']!r}")
        else:
            print("  download bar: never shown")
    print(f"written: {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
