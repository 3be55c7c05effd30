"""What a click on "Run in your browser" promises to download, against what the server sent.

On the book's first notebook page, its first page with a figure and its exercise page (found
from the book's source, runnable_book/pipeline/book_shape.py), and on the first page again over a
line slower than Python's snapshot is worth (there the start goes without it), a cold browser
clicks "Run in your browser" and waits until Python is up and the bar gone (on the page with a figure: Run all too,
until its first figure is drawn and the bar gone). Then:

* the size the page promised (the bar's total, fixed at the click from the files the build
  wrote), less Python's snapshot when the start went without it (the bar counts it done), is
  within 5% of the bytes the local server sent from the click on (before, 15.4 promised 13 MB
  where 27.7 MB crossed the line);
* the bar's total never changed, and its count of bytes that arrived never exceeded what the
  server had sent by then (runnable_book/browser/local_site.py records when it sent what).

The server sends files as stored (no gzip): a host that compresses text (GitHub Pages) sends
about 1.4 MB less, which the line's "up to" covers. Timings are `make bench-run`'s.
"""

from __future__ import annotations

import re

import pytest

from runnable_book.bench.slow_network import JS_DOWNLOAD_SAMPLES, JS_WATCH_DOWNLOAD_BAR
from runnable_book.browser.page_runner import JS_FIRST_OUTPUT, JS_PYTHON_IDLE, START_BUTTON, BrowserRunner
from runnable_book.browser.page_state import wait_until
from runnable_book.pipeline import book_shape
from runnable_book.pipeline.pages import notebook_pages
from runnable_book.repository import ROOT

pytestmark = [pytest.mark.site, pytest.mark.browser]

SAMPLE_MS = 100
FIRST_OUTPUT_TIMEOUT_MS = 600_000  # a cold start and matplotlib on a busy CI machine
JS_CLICKED_AT = "() => (window.browserRunTimings || []).find((t) => t.step === 'click').at"
JS_BAR_GONE = "() => !document.querySelector('.browser-run-downloading')"
JS_BAR_GONE_AND_FIGURE_DRAWN = ("() => !document.querySelector('.browser-run-downloading')"
                                " && !!document.querySelector('.browser-run-figure-image')")


def clicked_pages() -> dict[str, str]:
    """The book's first notebook page, its first page with a figure, its exercise page."""
    pages = notebook_pages()
    drawing = next(md for md in pages if book_shape.figure_cells(md))
    chosen = {"first notebook page": pages[0], "first page with a figure": drawing,
              "exercise page": book_shape.exercises_page()}
    return {kind: md.relative_to(ROOT).with_suffix(".html").as_posix() for kind, md in chosen.items()}


# A line slower than the snapshot is worth (worker.mjs: 5 MB in more than the 2 s of a fresh
# start), as Chromium's own network emulation throttles the page and its worker.
SLOW_LINE = {"offline": False, "latency": 20, "downloadThroughput": 1_500_000, "uploadThroughput": 1_000_000}
CLICKS = [(kind, "local") for kind in clicked_pages()] + [("first notebook page", "slow")]


@pytest.mark.parametrize(("kind", "line"), CLICKS)
def test_the_click_downloads_what_it_promised_and_the_bar_counts_only_what_arrived(site, kind, line):
    page_path = clicked_pages()[kind]
    draws = kind == "first page with a figure"
    with BrowserRunner(site) as runner:  # (a fresh profile: a cold HTTP cache)
        server = runner._site.server
        runner.open(page_path)
        page = runner.page
        if line == "slow":
            page.context.new_cdp_session(page).send("Network.emulateNetworkConditions", SLOW_LINE)
        page.evaluate(JS_WATCH_DOWNLOAD_BAR, SAMPLE_MS)
        runner.take_bytes_served()
        page.click(START_BUTTON)
        if draws:  # Run all, to the first figure
            page.get_by_role("button", name="Run all", exact=True).click(timeout=FIRST_OUTPUT_TIMEOUT_MS)
            wait_until(page, JS_FIRST_OUTPUT, timeout=FIRST_OUTPUT_TIMEOUT_MS)
            wait_until(page, JS_BAR_GONE_AND_FIGURE_DRAWN, timeout=FIRST_OUTPUT_TIMEOUT_MS)
        else:  # (Run all would run worked solutions that draw: not this click's)
            wait_until(page, JS_PYTHON_IDLE, timeout=FIRST_OUTPUT_TIMEOUT_MS)
            wait_until(page, JS_BAR_GONE, timeout=FIRST_OUTPUT_TIMEOUT_MS)
        sent = runner.take_bytes_served()
        clicked_at = page.evaluate(JS_CLICKED_AT) / 1000
        samples = page.evaluate(JS_DOWNLOAD_SAMPLES)
        html = (site / page_path).read_text(encoding="utf-8")
        before_click = server.sent_by(clicked_at)
        late = [(s, server.sent_by(s["at"] / 1000) - before_click) for s in samples
                if s["max"] is not None and s["arrived"] == s["arrived"]]  # (NaN: no bar)
        assert runner.problems() == []
    announced = {name: int(re.search(rf'const {name} = Number\("(\d+)"\)', html).group(1))
                 for name in ("DOWNLOAD_BYTES", "FIGURE_BYTES", "SNAPSHOT_BYTES")}
    shown = [s for s, _ in late]
    assert shown, f"{kind}: the bar never showed"
    promised = shown[0]["max"]  # (the bar's total: what the click promised)
    assert promised == announced["DOWNLOAD_BYTES"] + (announced["FIGURE_BYTES"] if draws else 0), kind
    # A start that went without Python's snapshot (worker.mjs: a line measured slower than the
    # fresh start it saves, as a busy machine's local server can be) counts it done, never arrived.
    skipped = max(s["skipped"] for s in shown)
    assert skipped in (0, announced["SNAPSHOT_BYTES"]), f"{kind}: skipped {skipped:,} bytes"
    if line == "slow":
        assert skipped, f"{kind}: on a slow line the start fetched the snapshot"
    fetched = promised - skipped
    assert abs(fetched - sent) <= 0.05 * sent, \
        f"{kind}: promised {promised:,} bytes (of which {skipped:,} skipped), the server sent {sent:,}"
    assert {s["max"] for s in shown} == {promised}, f"{kind}: the bar's total changed"
    values = [s["value"] for s in shown]
    assert values == sorted(values), f"{kind}: the bar went back"
    over = [(s["arrived"], by_then) for s, by_then in late if s["arrived"] > by_then]
    assert not over, f"{kind}: the bar counted more than the server had sent: {over[:3]}"
