"""The tests' local server (runnable_book/browser/local_site.py): a held file is answered only once
released, every answer is recorded; the slow network in front of it (throttling_proxy.py)."""

import threading
import time
import urllib.error
import urllib.request

from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.throttling_proxy import ThrottlingProxy


def test_a_held_file_is_answered_after_the_block_and_others_at_once(tmp_path):
    (tmp_path / "held.js").write_text("held")
    (tmp_path / "other.txt").write_text("other")
    answers: list[str] = []

    def fetch(site: LocalSite, name: str) -> None:
        with urllib.request.urlopen(site.url(name), timeout=30) as response:
            answers.append(response.read().decode())

    with LocalSite(tmp_path) as site:
        with site.holding("held.js"):
            waiting = threading.Thread(target=fetch, args=(site, "held.js"))
            waiting.start()
            fetch(site, "other.txt")  # another file is not held
            waiting.join(timeout=0.5)
            assert waiting.is_alive() and answers == ["other"], "the held file was answered inside the block"
        waiting.join(timeout=30)
    assert answers == ["other", "held"]


def test_every_answer_is_recorded_with_its_status_and_bytes_a_304_and_a_head_too(tmp_path):
    (tmp_path / "page.html").write_text("<p>page</p>")
    with LocalSite(tmp_path) as site:
        with urllib.request.urlopen(site.url("page.html"), timeout=30) as response:
            modified = response.headers["Last-Modified"]
        request = urllib.request.Request(site.url("page.html"), headers={"If-Modified-Since": modified})
        try:
            urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:
            assert error.code == 304
        urllib.request.urlopen(urllib.request.Request(site.url("page.html"), method="HEAD"), timeout=30).close()
        assert [(r.path, r.status, r.body_bytes) for r in site.server.take_responses()] == [
            ("/page.html", 200, len("<p>page</p>")), ("/page.html", 304, 0), ("/page.html", 200, 0)]
        assert site.server.take_bytes_served() == len("<p>page</p>"), "a HEAD sends no body"


def test_a_page_served_from_memory_is_answered_as_a_file_would_be_and_writes_none(tmp_path):
    """LocalSite.serve (a chapter's print: print_pdf.py): the page beside the folder's files, in
    place of a file of its name, plain and gzipped, counted; nothing written to the folder."""
    (tmp_path / "page.html").write_text("<p>on disk</p>")
    for gzipped in (False, True):
        with LocalSite(tmp_path, gzip=gzipped) as site:
            site.serve("cut.html", "<p>cut é</p>".encode())
            site.serve("page.html", b"<p>in memory</p>")
            for name, body in (("cut.html", "<p>cut é</p>"), ("page.html", "<p>in memory</p>")):
                with urllib.request.urlopen(site.url(name), timeout=30) as response:
                    assert response.read().decode() == body
                    assert response.headers["Content-Type"] == "text/html; charset=utf-8"
            assert [(r.path, r.status) for r in site.server.take_responses()] == [("/cut.html", 200), ("/page.html", 200)]
            assert site.server.take_bytes_served() == len("<p>cut é</p>".encode()) + len(b"<p>in memory</p>")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["page.html"]


def test_the_throttling_proxy_passes_answers_on_whole_late_and_sharing_one_link(tmp_path):
    """Every request waits the delay, then the answers in flight share the link's bytes a second:
    two bodies at once take at least as long as their sum at that rate."""
    body = bytes(range(256)) * 200  # 51.2 kB
    (tmp_path / "a.bin").write_bytes(body)
    (tmp_path / "b.bin").write_bytes(body)
    rate, delay = 256_000, 0.1
    with LocalSite(tmp_path) as site, ThrottlingProxy(site.origin, delay_seconds=delay, bytes_per_second=rate) as slow:
        got: dict[str, bytes] = {}

        def fetch(name: str) -> None:
            with urllib.request.urlopen(slow.url(name), timeout=60) as response:
                got[name] = response.read()

        started = time.monotonic()
        both = [threading.Thread(target=fetch, args=(name,)) for name in ("a.bin", "b.bin")]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join(timeout=60)
        seconds = time.monotonic() - started
    assert got == {"a.bin": body, "b.bin": body}
    assert seconds >= delay + 2 * len(body) / rate * 0.9, f"{seconds:.2f} s: not throttled"
    assert sorted((answer.path, answer.body_bytes) for answer in slow.take_passed()) == [
        ("/a.bin", len(body)), ("/b.bin", len(body))]
