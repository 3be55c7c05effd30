"""The reader's downloads on a line that drops connections (never failed while bytes flow),
and the book's service worker kept out of downloads that may outlast it.

* The local server answers a byte range with 206, as GitHub Pages does (local_site.py), and
  the throttling proxy can cut the first answers of each large file mid-body
  (runnable_book/browser/throttling_proxy.py, DroppedLine), counting what crossed.
* 15.2 through a proxy that cuts every large answer twice: Python starts and the first cell's
  output comes; each large file crossed about once, plus what was cut short (resumed with
  Range; whole again only when the page had read none of the cut answer).
* A download that gives up while the browser is online (only after attempts in a row that
  brought nothing) says so: which file, how much of it arrived; never "not stored for offline
  use". The line mended, running the figure cell again draws its figure, and Python that could
  not start starts on "Try again".
* 15.4 under the service worker (its second load): the large files of Python and the figures
  are not the worker's to answer (Chrome stops a worker about five minutes into an event, and
  every body it passed on failed with it), yet they end kept, from the browser's own cache.

The resuming stream itself is tested in Node, answer by answer (tests/js/dropped_line.test.mjs).
Timings are never asserted: the tests wait for what the page shows.
"""

from __future__ import annotations

import collections
import contextlib
import http.client
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from markers import needs

from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.page_state import JS_CROSS_ORIGIN_ISOLATED, JS_OFFLINE_STATE, wait_until
from runnable_book.browser.throttling_proxy import DroppedLine, ThrottlingProxy
from runnable_book.sphinx_ext import offline

pytestmark = pytest.mark.long  # (Python started in four browsers, a figure page twice: about 2.5 min)

START_PAGE = "book/15_02_one_shot_rag.html"
FIGURE_PAGE = "book/15_04_quality_and_cost.html"
# A large answer: the runtime, its library, the snapshot, the larger wheels (1 MB and more).
LARGE_BYTES = 1_000_000
# Where the proxy cuts: twice inside the smallest large file (python_stdlib.zip, 2.4 MB).
CUT_AFTER_BYTES = 700_000
FULL_SPEED = 1e12  # bytes a second: the proxy's link never holds a byte back
READY_MS = 120_000
RUN_MS = 240_000
JS_FIGURE_DRAWN = "() => !!document.querySelector('img.browser-run-figure-image')"
# The service worker's report of what it keeps, group by group (offline_sw.js, "what-is-kept").
JS_WHAT_IS_KEPT = """() => new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = (event) => resolve(event.data);
    navigator.serviceWorker.controller.postMessage({type: "what-is-kept"}, [channel.port2]);
})"""


def test_the_local_site_answers_a_byte_range_with_206_and_counts_what_it_sent(tmp_path):
    data = bytes(range(256)) * 40  # 10,240 bytes
    (tmp_path / "file.bin").write_bytes(data)
    (tmp_path / "page.html").write_text("<p>" + "text " * 400 + "</p>")

    def get(site: LocalSite, name: str, **headers: str) -> tuple[int, dict, bytes]:
        request = urllib.request.Request(site.url(name), headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    with LocalSite(tmp_path, gzip=True) as site:
        status, headers, whole = get(site, "file.bin")
        assert (status, whole, headers["Accept-Ranges"]) == (200, data, "bytes")
        modified = headers["Last-Modified"]
        site.server.take_bytes_served()
        status, headers, rest = get(site, "file.bin", Range="bytes=4000-")
        assert (status, rest, headers["Content-Range"]) == (206, data[4000:], f"bytes 4000-10239/{len(data)}")
        assert site.server.take_bytes_served() == len(data) - 4000, "counted as sent"
        assert get(site, "file.bin", Range="bytes=10-19")[::2] == (206, data[10:20])
        assert get(site, "file.bin", Range="bytes=-5")[::2] == (206, data[-5:])
        # The rest only of the version begun (If-Range): another one is sent whole.
        assert get(site, "file.bin", Range="bytes=4000-", **{"If-Range": modified})[::2] == (206, data[4000:])
        assert get(site, "file.bin", Range="bytes=4000-", **{"If-Range": "Thu, 01 Jan 1970 00:00:00 GMT"})[::2] == (200, data)
        status, headers, _ = get(site, "file.bin", Range="bytes=99999-")
        assert (status, headers["Content-Range"]) == (416, f"bytes */{len(data)}")
        # Text sent gzipped has no ranges of its own (a host may always send the whole).
        status, headers, _ = get(site, "page.html", Range="bytes=5-", **{"Accept-Encoding": "gzip"})
        assert (status, headers.get("Content-Encoding"), headers.get("Accept-Ranges")) == (200, "gzip", None)


def test_the_proxy_gives_answers_in_the_order_they_were_asked_for_however_late_recorded(tmp_path, monkeypatch):
    """An answer is recorded as its handler's thread ends, which on a busy machine may come
    after the next answer's (a loaded `make test` once saw it so): taken in the order asked."""
    import time

    for name in ("first.bin", "second.bin"):
        (tmp_path / name).write_bytes(name.encode() * 10)
    record = ThrottlingProxy.record

    def late(proxy, passed):
        if passed.path == "/first.bin":
            time.sleep(1)  # (its bytes have gone: the reader has it and asks for the next)
        record(proxy, passed)

    monkeypatch.setattr(ThrottlingProxy, "record", late)
    with LocalSite(tmp_path) as site, \
            ThrottlingProxy(site.origin, delay_seconds=0, bytes_per_second=FULL_SPEED) as line:
        for name in ("first.bin", "second.bin"):
            with urllib.request.urlopen(line.url(name), timeout=30) as response:
                response.read()
        assert [answer.path for answer in line.take_passed(at_least=2)] == ["/first.bin", "/second.bin"]


def test_the_proxy_cuts_the_first_answers_of_a_large_file_and_counts_what_crossed(tmp_path):
    data = bytes(range(256)) * 400  # 102,400 bytes
    (tmp_path / "large.bin").write_bytes(data)
    (tmp_path / "small.bin").write_bytes(data[:100])
    drops = DroppedLine(after_bytes=30_000, times=2, min_size=50_000)
    with LocalSite(tmp_path) as site, \
            ThrottlingProxy(site.origin, delay_seconds=0, bytes_per_second=FULL_SPEED, drops=drops) as line:
        got = b""
        for _ in range(2):  # cut twice: what arrived, then the rest asked for
            request = urllib.request.Request(line.url("large.bin"), headers={"Range": f"bytes={len(got)}-"} if got else {})
            with urllib.request.urlopen(request, timeout=30) as response:
                with pytest.raises(http.client.IncompleteRead) as cut:
                    response.read()
                got += cut.value.partial
        with urllib.request.urlopen(urllib.request.Request(line.url("large.bin"), headers={"Range": f"bytes={len(got)}-"}),
                                    timeout=30) as response:
            assert response.status == 206
            got += response.read()
        with urllib.request.urlopen(line.url("small.bin"), timeout=30) as response:
            assert response.read() == data[:100]
        passed = line.take_passed(at_least=4)
    assert got == data
    assert [(p.path, p.status, p.body_bytes, p.dropped) for p in passed] == [
        ("/large.bin", 200, 30_000, True), ("/large.bin", 206, 30_000, True),
        ("/large.bin", 206, len(data) - 60_000, False), ("/small.bin", 200, 100, False)]


# ---- in the browser ----------------------------------------------------------------------

@pytest.fixture
@needs("browser")
def chromium(site):
    from runnable_book.browser.chromium import launch

    with launch(resolve_only_localhost=True) as browser:
        yield browser


@contextlib.contextmanager
def dropping_line(site: Path, drops: DroppedLine):
    """The site as GitHub Pages sends it (text gzipped, ranges answered), behind a line at full
    speed that drops connections as ``drops`` says."""
    with LocalSite(site, gzip=True) as served, \
            ThrottlingProxy(served.origin, delay_seconds=0, bytes_per_second=FULL_SPEED, drops=drops) as line:
        yield line


def large_files(site: Path) -> dict[str, int]:
    """The site's files that cross the line as LARGE_BYTES or more (text gzipped, as the host
    sends it: offline.transfer_bytes), by URL path, with those sizes."""
    stored_large = [path for path in site.rglob("*") if path.is_file() and path.stat().st_size >= LARGE_BYTES]
    sizes = {"/" + path.relative_to(site).as_posix(): offline.transfer_bytes(path) for path in stored_large}
    return {path: size for path, size in sizes.items() if size >= LARGE_BYTES}


def test_python_starts_on_a_line_that_drops_every_large_download_twice(site, chromium):
    """A first visit of 15.2 (no service worker: what is tested is the page's Python's own
    downloads) through a line that cuts each large answer twice: Python starts and the page's
    first output comes (Run all, as `make bench-run` times it). Each large file crossed the
    line once plus at most what the cut answers carried, and no byte the page had was sent to
    it again (the worker's own count, `resent`): the rest was asked with Range (206).

    A cut answer may be followed by the whole file again (200), rightly: Chromium may drop the
    bytes of a broken answer it had not handed on yet (a page that began reading only after the
    cut got none of 700,000 bytes in some runs, all of them in others), so a page that had read
    none of it asks from byte 0 (a fresh-clone run once saw the snapshot so: 200, 200, 206)."""
    from runnable_book.browser.chromium import VIEWPORT
    from runnable_book.browser.page_runner import JS_FIRST_OUTPUT, START_BUTTON

    sizes = large_files(site)
    with dropping_line(site, DroppedLine(after_bytes=CUT_AFTER_BYTES, times=2, min_size=LARGE_BYTES)) as line:
        page = chromium.new_context(viewport=VIEWPORT, service_workers="block").new_page()
        page.goto(line.url(START_PAGE), wait_until="load")
        page.click(START_BUTTON)
        page.get_by_role("button", name="Run all", exact=True).click()
        wait_until(page, JS_FIRST_OUTPUT, timeout=READY_MS)
        output = page.locator(".browser-run-output pre").first.text_content()
        downloads = page.evaluate("() => window.browserRun.downloads")
        passed = line.take_passed()
    assert output.strip(), "an empty first output"
    assert downloads["resent"] == 0, f"bytes the page had were sent again: {downloads}"

    by_path: dict[str, list] = collections.defaultdict(list)
    for answer in passed:
        if answer.path.split("?")[0] in sizes:
            by_path[answer.path.split("?")[0]].append(answer)
    assert {"/_static/pyodide/pyodide.asm.wasm.gz", "/_static/pyodide/python_stdlib.zip"} <= set(by_path), sorted(by_path)
    for path, answers in by_path.items():
        shape = [(a.status, a.body_bytes, a.dropped) for a in answers]
        crossed = sum(a.body_bytes for a in answers)
        assert answers[0].status == 200 and {a.status for a in answers[1:]} <= {200, 206}, f"{path}: {shape}"
        assert sum(a.dropped for a in answers) == 2 and not answers[-1].dropped, f"{path}: {shape}"
        assert sizes[path] <= crossed <= sizes[path] + 2 * CUT_AFTER_BYTES, f"{path} ({sizes[path]} B): {shape}"
    # (Ten cuts, each before the page read a byte, would leave no 206: never seen, and a sign the
    # pages stopped reading as bytes come.)
    assert any(a.status == 206 for answers in by_path.values() for a in answers), "nothing was resumed with Range"


def test_a_download_that_gives_up_online_says_so_and_running_the_cell_again_tries_again(site, chromium):
    """15.4's figure cell on a first visit, through a line that brings a megabyte of matplotlib,
    then nothing however often it is asked: the cell says the download failed (which file, how
    much arrived, the browser online), never that figures are not stored for offline use. The
    line mended, running the cell again draws the figure."""
    from runnable_book.browser.chromium import VIEWPORT
    from runnable_book.browser.page_runner import JS_RUN_FINISHED, START_BUTTON

    nothing_after_a_megabyte = DroppedLine(after_bytes=[1_000_000] + [0] * 20, min_size=6_000_000)  # (matplotlib's wheel alone)
    with dropping_line(site, nothing_after_a_megabyte) as line:
        page = chromium.new_context(viewport=VIEWPORT, service_workers="block").new_page()
        page.goto(line.url(FIGURE_PAGE), wait_until="load")
        page.click(START_BUTTON)
        page.get_by_role("button", name="Run all", exact=True).click()
        wait_until(page, JS_RUN_FINISHED, timeout=RUN_MS)
        cells = page.evaluate("() => window.browserRun.cells.map((c) => [c.element.dataset.runState, c.element.textContent])")
        failed = [number for number, (state, _) in enumerate(cells, 1) if state == "error"]
        assert len(failed) == 1, [state for state, _ in cells]
        said = cells[failed[0] - 1][1]
        assert "not stored" not in said and "offline use" not in said, said
        assert re.search(r"The download of matplotlib-[^ ]+\.whl failed: \d\.\d\d of 6\.71 MB arrived, then 4 tries again "
                         r"brought no byte \(the browser is online\)\. Run the cell again to try again\.", said), said
        page.locator(".browser-run-output", has_text="The download of").first.scroll_into_view_if_needed()
        page.screenshot(path=str(site.parent / "dropped-line-download-failed.png"))

        line.drops = None  # the line mended
        page.locator("div.cell").nth(failed[0] - 1).locator("button.browser-run-run").click()
        wait_until(page, JS_FIGURE_DRAWN, timeout=RUN_MS)
        wait_until(page, JS_RUN_FINISHED, timeout=RUN_MS)
        assert page.evaluate(f"() => window.browserRun.cells[{failed[0] - 1}].element.dataset.runState") == "done"


def test_python_that_could_not_start_for_a_download_starts_on_try_again(site, chromium):
    """15.2's start through a line that brings half a megabyte of each of the runtime's large
    files, then nothing: "Python could not start", the file named, and a "Try again" that, the
    line mended, starts it."""
    from runnable_book.browser.chromium import VIEWPORT
    from runnable_book.browser.page_runner import JS_PYTHON_IDLE, START_BUTTON

    nothing_after_half_a_megabyte = DroppedLine(after_bytes=[500_000] + [0] * 20, min_size=2_000_000)
    with dropping_line(site, nothing_after_half_a_megabyte) as line:
        page = chromium.new_context(viewport=VIEWPORT, service_workers="block").new_page()
        page.goto(line.url(START_PAGE), wait_until="load")
        page.click(START_BUTTON)
        try_again = page.get_by_role("button", name="Try again", exact=True)
        try_again.wait_for(timeout=READY_MS)
        status = page.locator(".browser-run-status").text_content()
        assert re.fullmatch(r"Python could not start: The download of [\w.]+ failed: 0\.\d\d of \d\.\d\d MB arrived, "
                            r"then 4 tries again brought no byte \(the browser is online\)\. Try again", status), status
        line.drops = None  # the line mended
        try_again.click()
        wait_until(page, JS_PYTHON_IDLE, timeout=READY_MS)
        assert page.locator(".browser-run-status").text_content().startswith("Ready: Python")


def worker_threshold(site: Path) -> int:
    """The size above which the book's service worker leaves a file to the browser (its LARGE_BYTES)."""
    match = re.search(r"const LARGE_BYTES = ([\d_]+);", (site / "sw.js").read_text(encoding="utf-8"))
    assert match, "sw.js names no LARGE_BYTES"
    return int(match.group(1).replace("_", ""))



@pytest.fixture
@needs("browser")
def reader_profile(site):
    """A browser with a profile on disk, service workers allowed: a reader's HTTP cache (a context
    of launch() keeps its cache in memory, which holds no 6-MB file: matplotlib's wheel was then
    downloaded again to be kept)."""
    from runnable_book.browser.chromium import open_context

    with open_context(resolve_only_localhost=True, service_workers="allow") as context:
        yield context


def test_under_the_service_worker_large_downloads_are_the_browsers_and_end_kept(site, reader_profile):
    """15.4 on its second load (the book's service worker controls it, cross-origin isolated):
    its figure cell's packages come, and the large files of Python and the figures were not
    answered by the worker (Chrome would stop it about five minutes into a slow download, and
    fail every body it passed on), the small ones were. Afterwards what the run loaded of Python
    and the figures is kept, each large file sent whole once: the worker kept them from the
    browser's cache, not from a second download."""
    from runnable_book.browser.page_runner import JS_RUN_FINISHED, START_BUTTON

    groups = offline.groups(site)
    threshold = worker_threshold(site)
    sizes = {path: size for name in ("python", "figures") for path, size in groups[name]["sizes"].items()}
    with LocalSite(site, gzip=True) as served:
        context = reader_profile
        page = context.pages[0]
        page.goto(served.url(FIGURE_PAGE))
        wait_until(page, JS_OFFLINE_STATE, arg="ready", timeout=READY_MS)
        page.reload()
        assert page.evaluate(JS_CROSS_ORIGIN_ISOLATED) is True
        served.server.take_responses()
        # What the page and its Python downloaded (not the service worker's own fetches): path ->
        # whether the service worker answered, each time. (Not a HEAD: the snapshot's size is
        # asked so, and where the line is too slow for it, as under a loaded `make test`, Python
        # starts without it: a loaded run once counted it as loaded, though never downloaded.)
        answered: dict[str, list[bool]] = collections.defaultdict(list)
        root = served.url("")

        def note(response) -> None:
            if response.url.startswith(root) and not response.request.service_worker and response.request.method != "HEAD":
                answered[response.url.removeprefix(root).split("?")[0]].append(response.from_service_worker)
        context.on("response", note)
        page.click(START_BUTTON)
        page.get_by_role("button", name="Run all", exact=True).click()
        wait_until(page, JS_FIGURE_DRAWN, timeout=RUN_MS)
        wait_until(page, JS_RUN_FINISHED, timeout=RUN_MS)
        wait_until(page, "() => /offline use \\([^)]*\\): [^.]*Python, figures\\./"
                         ".test(document.querySelector('.offline-storage').textContent)", timeout=READY_MS)
        report = page.evaluate(JS_WHAT_IS_KEPT)
        started = page.evaluate("() => window.browserRun.downloads")  # (its `snapshot`: fetched, or started afresh)
        sent_whole = collections.Counter(r.path.lstrip("/") for r in served.server.take_responses()
                                         if r.status == 200 and r.body_bytes)

    large = {path for path in answered if sizes.get(path, 0) > threshold}
    small = {path for path in answered if 0 < sizes.get(path, 0) <= threshold}
    assert {"_static/pyodide/pyodide.asm.wasm.gz", "_static/runner/first-figure.zip"} <= large, sorted(answered)
    assert any(path.startswith("_static/pyodide/matplotlib-") for path in large), sorted(large)
    assert {path: answered[path] for path in large if any(answered[path])} == {}, "answered by the service worker"
    assert {path: answered[path] for path in small if not all(answered[path])} == {}, "small files past the worker"
    for name in ("python", "figures"):
        # What the run loaded is kept, and nothing more is fetched for it (offline_sw.js, "keep").
        loaded = [path for path in answered if path in groups[name]["files"]]
        assert report[name]["kept"] == len(loaded), (name, report[name], sorted(loaded), started)
    assert {path: n for path, n in sent_whole.items() if n > 1} == {}, "sent whole twice"
