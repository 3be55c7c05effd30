"""Benchmark: what a first visit costs, answer by answer, as a static host sends it.

Usage:
    python -m runnable_book.bench.first_visit [_build/html] [--page book/15_02_one_shot_rag.html]

(`make bench-run` runs it.) The built site is served as GitHub Pages serves it (text gzipped,
Last-Modified, 304 to a revalidation: runnable_book/browser/local_site.py), and counted there, answer
by answer: what the host sends is what a reader's line carries. A new reader (a new profile,
service workers allowed) opens the page and stays until the service worker has kept the
pages and the search (its background copy), then SETTLE_MS more; then again with the data
saver on (nothing is kept in the background). For each: the bytes sent, every answer (path,
status, bytes, the offline group of the file: runnable_book/sphinx_ext/offline.py), the paths sent
whole more than once, and any TrueType font among them.

Bytes are counted at the host, never under Playwright's routing (which switches off
Chromium's HTTP cache, so every file would seem fetched again). Printed and written to
_build/bench/first_visit.json; nothing is asserted.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

from runnable_book.browser.chromium import VIEWPORT, launch
from runnable_book.browser.local_site import LocalSite, Response
from runnable_book.browser.page_state import JS_OFFLINE_STATE, wait_until
from runnable_book.repository import ROOT
from runnable_book.sphinx_ext import offline

OUT = ROOT / "_build" / "bench" / "first_visit.json"
PAGE = "book/15_02_one_shot_rag.html"
SETTLE_MS = 5_000  # after the pages are kept: anything late would show
LONG_MS = 300_000
# An init script (run before the page's own): the data saver on.
DATA_SAVER = "Object.defineProperty(NetworkInformation.prototype, 'saveData', { get: () => true })"
TRUETYPE = (".ttf", ".otf")


def sent_whole_more_than_once(responses: list[Response]) -> dict[str, int]:
    """Paths whose whole body was sent more than once (a 304 sends none)."""
    counts = collections.Counter(response.path for response in responses if response.status == 200)
    return {path: count for path, count in counts.items() if count > 1}


def summary(responses: list[Response], group_of: dict[str, str]) -> dict:
    by_group: dict[str, int] = collections.defaultdict(int)
    for response in responses:
        by_group[group_of.get(response.path.lstrip("/"), "not a file of the book")] += response.body_bytes
    return {
        "bytes": sum(response.body_bytes for response in responses),
        "answers": len(responses),
        "not_modified": sum(response.status == 304 for response in responses),
        "sent_whole_more_than_once": sent_whole_more_than_once(responses),
        "truetype_fonts": sorted({r.path for r in responses if r.path.endswith(TRUETYPE)}),
        "bytes_by_group": dict(sorted(by_group.items(), key=lambda item: -item[1])),
        "responses": [[r.path, r.status, r.body_bytes, group_of.get(r.path.lstrip("/"), "-")]
                      for r in sorted(responses, key=lambda response: -response.body_bytes)],
    }


def visit(browser, served: LocalSite, page_name: str, *, data_saver: bool) -> tuple[list[Response], float]:
    context = browser.new_context(viewport=VIEWPORT, service_workers="allow")
    try:
        if data_saver:
            context.add_init_script(DATA_SAVER)
        page = context.new_page()
        served.server.take_responses()
        started = time.monotonic()
        page.goto(served.url(page_name))
        wait_until(page, JS_OFFLINE_STATE, arg="partial" if data_saver else "ready", timeout=LONG_MS)
        seconds = time.monotonic() - started
        page.wait_for_timeout(SETTLE_MS)
        return served.server.take_responses(), seconds
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, nargs="?", default=ROOT / "_build" / "html")
    parser.add_argument("--page", default=PAGE)
    parser.add_argument("--out", type=Path, default=OUT, help="where the report goes (default: %(default)s)")
    args = parser.parse_args(argv)
    if not (args.site / "index.html").is_file():
        parser.error(f"{args.site}/index.html not found: build the book first (make html)")
    group_of = {path: name for name, group in offline.groups(args.site).items() for path in group["files"]}
    with LocalSite(args.site, gzip=True) as served, launch(resolve_only_localhost=True) as browser:
        first, seconds = visit(browser, served, args.page, data_saver=False)
        saver, _ = visit(browser, served, args.page, data_saver=True)
    report = {"page": args.page, "first_visit": {"seconds_until_kept": round(seconds, 2), **summary(first, group_of)},
              "first_visit_data_saver": summary(saver, group_of)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    partial = args.out.with_suffix(".json.tmp")  # never a half-written report
    partial.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    partial.replace(args.out)
    for name, label in (("first_visit", "a first visit"), ("first_visit_data_saver", "with the data saver on")):
        row = report[name]
        print(f"{label} to {args.page}, counted per answer at the host: {row['bytes'] / 1e6:.3f} MB in "
              f"{row['answers']} answers ({row['not_modified']} of them 304); sent whole more than once: "
              f"{row['sent_whole_more_than_once'] or 'none'}; TrueType fonts: {row['truetype_fonts'] or 'none'}")
        print("    by group: " + ", ".join(f"{group} {size / 1e3:.0f} kB" for group, size in row["bytes_by_group"].items()))
        print("    largest: " + ", ".join(f"{path} {size / 1e3:.0f} kB" for path, _, size, _ in row["responses"][:6]))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
