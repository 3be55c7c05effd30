"""What a browser test costs in each of Debian's two Chromium builds: CPU, not only seconds.

    python -m runnable_book.bench.browser_builds [--repeat 5]     # what `make bench-browsers` runs

The tests open their pages in Chromium's headless shell, the PDF and the diagrams are made by
the browser itself (runnable_book/browser/chromium.py says why). This measures the unit of work a
browser test repeats, in each build, on the built site: a fresh context, a page opened
(15.1, its after-paint scripts run), "Run in your browser" clicked until Python is ready, one
cell run; then a cell that runs 3 s, waited for as Playwright waits by default (its predicate
polled once an animation frame) and as the tests wait (every POLL_MS: page_state.wait_until).
Each phase's wall time and the whole machine's busy CPU-seconds (/proc/stat, so
the browser's processes count). Medians of --repeat runs, one browser launched per build.
Writes _build/bench/browser_builds.json. Numbers, not checks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from runnable_book.bench.cpu_by_process import busy_cpu_seconds
from runnable_book.browser.chromium import BUILDS, VIEWPORT, launch, wait_for_page_scripts
from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.page_runner import JS_CELL_IS, JS_CELL_RAN, JS_PYTHON_IDLE, PYTHON_READY_TIMEOUT_MS, START_BUTTON
from runnable_book.browser.page_state import POLL_MS, wait_until
from runnable_book.repository import ROOT

SITE = ROOT / "_build" / "html"
PAGE = "book/15_01_corpus_and_search_stub.html"
PHASES = ("context and page", "Python started", "one cell run", "a 3-s cell polled each frame",
          f"a 3-s cell polled every {POLL_MS} ms")
THREE_SECONDS = "import time\nstarted = time.time()\nwhile time.time() - started < 3:\n    pass"


def one_test_unit(browser, site: LocalSite) -> dict[str, tuple[float, float]]:
    """{phase: (seconds, busy CPU-seconds)} for one fresh context."""
    measured = {}
    clock, cpu = time.monotonic(), busy_cpu_seconds()

    def phase(name: str) -> None:
        nonlocal clock, cpu
        now, used = time.monotonic(), busy_cpu_seconds()
        measured[name] = (now - clock, used - cpu)
        clock, cpu = now, used

    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    page = context.new_page()
    page.goto(site.url(PAGE), wait_until="load")
    wait_for_page_scripts(page)
    phase(PHASES[0])
    page.click(START_BUTTON)
    wait_until(page, JS_PYTHON_IDLE, timeout=PYTHON_READY_TIMEOUT_MS)
    phase(PHASES[1])
    page.locator("div.cell").nth(0).get_by_role("button", name="Run cell 1").click()
    wait_until(page, JS_CELL_RAN, arg=1, timeout=PYTHON_READY_TIMEOUT_MS)
    phase(PHASES[2])
    editor = page.locator("div.cell").nth(0).locator(".cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(THREE_SECONDS)
    phase("typed")
    for name, polling in ((PHASES[3], "raf"), (PHASES[4], POLL_MS)):
        editor.click()
        page.keyboard.press("Shift+Enter")
        page.wait_for_function(JS_CELL_IS, arg=[1, "running"])
        page.wait_for_function(JS_CELL_RAN, arg=1, timeout=PYTHON_READY_TIMEOUT_MS, polling=polling)
        phase(name)
    context.close()
    return measured


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    if not (SITE / PAGE).is_file():
        print(f"{SITE / PAGE} is missing: build the book first (make html)", file=sys.stderr)
        return 2
    report = {}
    with LocalSite(SITE) as site:
        for build in BUILDS:
            with launch(build) as browser:
                one_test_unit(browser, site)  # (a first run warms the server's and the disk's caches)
                runs = [one_test_unit(browser, site) for _ in range(args.repeat)]
            report[build] = {name: {"seconds": round(statistics.median(r[name][0] for r in runs), 2),
                                    "cpu_seconds": round(statistics.median(r[name][1] for r in runs), 2)}
                             for name in PHASES}
            total = sum(report[build][name]["cpu_seconds"] for name in PHASES[:3])  # (a test's unit; the waits compared apart)
            print(f"{build:<26}" + "  ".join(f"{name} {report[build][name]['seconds']:.2f} s / "
                                            f"{report[build][name]['cpu_seconds']:.2f} CPU-s" for name in PHASES)
                  + f"  (a test's unit, the first three: {total:.2f} CPU-s; median of {args.repeat})")
    out = ROOT / "_build" / "bench" / "browser_builds.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
