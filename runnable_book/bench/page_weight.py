"""Page weight at first load, served gzipped the way GitHub Pages serves the book.

    python -m runnable_book.bench.page_weight _build/html [--out _build/bench/pages.json] [--lighthouse]

Every page of the build is opened in Debian's Chromium (driven by Playwright, as in
runnable_book/checks/site_check.py) in a fresh browser context, so nothing is cached, and left until
the network is idle (diagrams, fonts and late scripts included). Per page it records:

* ``kb_on_wire``: response bodies as sent by the server, text gzipped (HTTP headers not
  counted);
* ``requests``: every request the page made, the browser's own ``/favicon.ico`` included;
* ``lighthouse_performance`` (with ``--lighthouse``): Lighthouse's mobile performance score,
  run with runnable_book/bench/lighthouse's pinned Lighthouse against the same local server; with
  ``--runs N`` the median of N runs (all kept in ``lighthouse_runs``), and the medians of
  the metrics the score is made of (``lighthouse_metrics``, milliseconds: FCP, LCP, TBT,
  Speed Index).

Prints a table and writes JSON. Numbers only: nothing here passes or fails, and timings
on a shared machine are noisy (byte and request counts are not).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from runnable_book.browser.chromium import VIEWPORT, chromium_path, launch, lighthouse_flags
from runnable_book.browser.local_site import GzipHandler, LocalSite, find_pages
from runnable_book.repository import ROOT

LIGHTHOUSE = Path(__file__).parent / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
LOAD_TIMEOUT_MS = 60_000
@dataclass
class PageWeight:
    page: str
    kb_on_wire: float
    requests: int
    lighthouse_performance: int | None = None  # the median of lighthouse_runs
    lighthouse_runs: list[int] | None = None
    lighthouse_metrics: dict[str, float] | None = None  # medians over the runs


# The timings Lighthouse's performance score is made of (CLS is 0 on every page here).
LIGHTHOUSE_METRICS = {"FCP": "first-contentful-paint", "LCP": "largest-contentful-paint",
                      "TBT": "total-blocking-time", "SI": "speed-index"}


def measure(site: LocalSite, browser, page_name: str) -> PageWeight:
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    try:
        page = context.new_page()
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        site.server.take_bytes_served()
        page.goto(site.url(page_name), wait_until="networkidle", timeout=LOAD_TIMEOUT_MS)
        return PageWeight(page_name, round(site.server.take_bytes_served() / 1024, 1), len(requests))
    finally:
        context.close()


def lighthouse_performance(url: str, out: Path) -> tuple[int, dict[str, float]] | None:
    """Lighthouse's mobile performance score (0-100) and its metrics, or None if Lighthouse
    is not installed or failed."""
    if not LIGHTHOUSE.exists():
        return None
    run = subprocess.run(
        [str(LIGHTHOUSE), url, "--only-categories=performance", "--output=json", f"--output-path={out}",
         "--quiet", f"--chrome-flags={lighthouse_flags()}"],
        env={**os.environ, "CHROME_PATH": chromium_path()}, capture_output=True, text=True, timeout=300,
    )
    if run.returncode != 0:
        print(f"lighthouse failed on {url}: {run.stderr.strip()[-500:]}", file=sys.stderr)
        return None
    report = json.loads(out.read_text())
    score = report["categories"]["performance"]["score"]
    if score is None:
        return None
    metrics = {name: report["audits"][audit]["numericValue"] for name, audit in LIGHTHOUSE_METRICS.items()}
    return round(score * 100), metrics


def format_table(weights: list[PageWeight]) -> str:
    width = max(len(w.page) for w in weights)
    lines = [f"{'page':<{width}}  {'KB (gzip)':>9}  {'requests':>8}  {'lighthouse (runs)  metrics, ms':>10}"]
    for w in weights:
        score = "" if w.lighthouse_performance is None else str(w.lighthouse_performance)
        if w.lighthouse_runs and len(w.lighthouse_runs) > 1:
            score += " (" + " ".join(map(str, w.lighthouse_runs)) + ")"
        if w.lighthouse_metrics:
            score += "  " + " ".join(f"{name} {value:.0f}" for name, value in w.lighthouse_metrics.items())
        lines.append(f"{w.page:<{width}}  {w.kb_on_wire:>9.1f}  {w.requests:>8}  {score:>10}".rstrip())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "bench" / "pages.json")
    parser.add_argument("--page", action="append", dest="pages", help="only this page (repeatable)")
    parser.add_argument("--lighthouse", action="store_true", help="also Lighthouse mobile performance")
    parser.add_argument("--runs", type=int, default=1,
                        help="Lighthouse runs per page, the median reported (scores vary from run to run)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}/index.html not found: build the book first (make html)")
    # The root index.html only redirects to book/index.html: not a page a reader reads.
    pages = args.pages or [p for p in find_pages(args.site) if p != "index.html"]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with LocalSite(args.site, handler_class=GzipHandler) as site:
        with launch() as browser:
            weights = [measure(site, browser, page) for page in pages]
        if args.lighthouse:
            if not LIGHTHOUSE.exists():
                print(f"{LIGHTHOUSE} missing: `make bench` installs it (npm ci in runnable_book/bench/lighthouse)", file=sys.stderr)
            for weight in weights:
                runs, metrics = [], []
                for run in range(args.runs):
                    suffix = f".{run + 1}" if args.runs > 1 else ""
                    report = args.out.parent / "lighthouse" / (weight.page.replace("/", "_") + suffix + ".json")
                    report.parent.mkdir(parents=True, exist_ok=True)
                    result = lighthouse_performance(site.url(weight.page), report)
                    if result is not None:
                        runs.append(result[0])
                        metrics.append(result[1])
                if runs:
                    weight.lighthouse_runs = runs
                    weight.lighthouse_performance = round(statistics.median(runs))
                    weight.lighthouse_metrics = {name: round(statistics.median(m[name] for m in metrics))
                                                 for name in LIGHTHOUSE_METRICS}
    args.out.write_text(json.dumps([asdict(w) for w in weights], indent=2) + "\n")
    print(format_table(weights))
    print(f"\nlargest page: {max(w.kb_on_wire for w in weights):.1f} KB; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
