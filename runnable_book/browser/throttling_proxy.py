"""A slow network in front of a local site: a proxy on 127.0.0.1 that delays every request and
shares one bandwidth between all the answers it passes on.

    with LocalSite(site, gzip=True) as served, ThrottlingProxy(served.origin) as slow:
        page.goto(slow.url("book/15_02_one_shot_rag.html"))

Why a proxy and not the browser's own throttling: Chromium throttles what a page fetches, not
what its workers fetch (the Python worker, the service worker), so a page measured that way
downloaded Python at full speed. Every request of every kind goes through this one, and the
static host behind it still counts what it sends (gzip, 304s: runnable_book/browser/local_site.py).

The browser opens the proxy's own origin (a reverse proxy): no proxy settings, no routing
(Playwright's routing switches off Chromium's HTTP cache), the host's answers passed on as
they are, headers and all. Each answer waits ``delay_seconds`` before it is asked of the
host (a round trip on a distant network), then its body flows in chunks through one shared
link of ``bytes_per_second``: two answers at once each get about half of it.

A line that drops connections (``drops=DroppedLine(...)``): the first answers of each large
file are cut off mid-body, the connection closed short of the length the answer promised, as a
phone line that hands over drops them; what the browser does next (the page's Python resumes
with Range, runner/downloads.mjs) is what tests/test_dropped_line.py watches. Every answer is
recorded with the body bytes that crossed, a cut one with what it had (``Passed.dropped``).
"""

from __future__ import annotations

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple, Sequence
from urllib.parse import unquote, urlsplit

# The slow phone line: every request 400 ms late, 50 KB/s shared.
SLOW_DELAY_SECONDS = 0.4
SLOW_BYTES_PER_SECOND = 50_000
CHUNK_BYTES = 4096  # (at 50 KB/s about a dozen a second: the link's pace is smooth)
# Headers of one connection, not of the answer (RFC 9110, 7.6.1): the proxy's own connection
# to the browser has its own.
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}
UPSTREAM_TIMEOUT_SECONDS = 300


class Passed(NamedTuple):
    """One answer passed on: the URL's path, the body bytes the browser got, and when (the
    proxy's monotonic clock) it was asked for and when its last byte went; its status, and
    whether the proxy cut it off (DroppedLine)."""
    path: str
    body_bytes: int
    asked: float
    ended: float
    status: int = 200
    dropped: bool = False


class DroppedLine:
    """Which answers are cut off: of a file of at least ``min_size`` bytes (its whole size, a
    206's too), each of the first ``times`` answers for its path that carry more than
    ``after_bytes`` is cut there (a resumed answer is cut again, as far into what it sends).
    ``after_bytes`` may be a schedule instead, one cut per answer in turn ([1_000_000, 0, 0]:
    a megabyte, then two answers that bring nothing). (Shorter answers are not counted: Chrome's
    HTTP cache checks a file it holds in part with a one-byte range before asking for the rest.)"""

    def __init__(self, *, after_bytes: int | Sequence[int], times: int = 2, min_size: int = 1_000_000):
        self.schedule = [after_bytes] * times if isinstance(after_bytes, int) else list(after_bytes)
        self.min_size = min_size
        self._lock = threading.Lock()
        self._answers: dict[str, int] = {}

    def cut_after(self, path: str, whole_size: int, body_size: int) -> int | None:
        """Bytes of this answer's body to send before the connection drops, or None: all."""
        with self._lock:
            answered = self._answers.get(path, 0)
            if whole_size < self.min_size or answered >= len(self.schedule) or body_size <= self.schedule[answered]:
                return None
            self._answers[path] = answered + 1
            return self.schedule[answered]


def whole_size(headers: http.client.HTTPMessage) -> int:
    """The size of the file an answer is of: a 206's Content-Range total, else its length."""
    total = (headers.get("Content-Range") or "").rpartition("/")[2]
    return int(total) if total.isdigit() else int(headers.get("Content-Length") or 0)


class SharedLink:
    """One bandwidth for every answer: each chunk takes the next free slot of the link's time,
    so the answers in flight share it in turn."""

    def __init__(self, bytes_per_second: float):
        self.bytes_per_second = bytes_per_second
        self._lock = threading.Lock()
        self._free_at = 0.0

    def carry(self, size: int) -> None:
        """Return once ``size`` bytes have had their time on the link."""
        with self._lock:
            start = max(time.monotonic(), self._free_at)
            self._free_at = start + size / self.bytes_per_second
            done_at = self._free_at
        time.sleep(max(0.0, done_at - time.monotonic()))


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a browser's connections to a host are

    def log_message(self, format, *args):  # noqa: A002 - signature is fixed by http.server
        pass

    def do_GET(self):
        self._pass_on()

    def do_HEAD(self):
        self._pass_on()

    def _pass_on(self):
        proxy = self.server.proxy
        asked = time.monotonic()
        time.sleep(proxy.delay_seconds)
        upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port,
                                              timeout=UPSTREAM_TIMEOUT_SECONDS)
        try:
            headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
            upstream.request(self.command, self.path, headers=headers)
            answer = upstream.getresponse()
            has_body = self.command != "HEAD" and answer.status not in (204, 304) and answer.status >= 200
            length = answer.getheader("Content-Length")
            body = None
            if has_body and length is None:  # (the static host always says; read whole if not)
                body = answer.read()
                length = str(len(body))
            self.send_response_only(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in HOP_BY_HOP and name.lower() != "content-length":
                    self.send_header(name, value)
            if length is not None:
                self.send_header("Content-Length", length)
            self.end_headers()
            if not has_body:
                return
            path = unquote(urlsplit(self.path).path)
            cut = proxy.drops.cut_after(path, whole_size(answer.msg), int(length or 0)) if proxy.drops else None
            passed = 0
            try:
                chunks = [body] if body is not None else iter(lambda: answer.read(CHUNK_BYTES), b"")
                for data in chunks:
                    if cut is not None:
                        data = data[:cut - passed]
                    passed += self._send_slowly(data)
                    if cut is not None and passed >= cut:
                        # The connection drops short of the length promised: the browser's read
                        # of the body fails, as on a line that dropped it.
                        self.close_connection = True
                        break
            finally:
                proxy.record(Passed(self.path, passed, asked, time.monotonic(), answer.status,
                                    dropped=cut is not None and passed >= cut))
        finally:
            upstream.close()

    def _send_slowly(self, data: bytes) -> int:
        link = self.server.proxy.link
        for start in range(0, len(data), CHUNK_BYTES):
            chunk = data[start:start + CHUNK_BYTES]
            link.carry(len(chunk))
            self.wfile.write(chunk)
        return len(data)


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A browser that stops reading (a page left mid-download) is not the proxy's fault.
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class ThrottlingProxy:
    """A slow network in front of ``upstream`` (an origin, ``http://127.0.0.1:port``), served on
    127.0.0.1 at a free port, in a background thread."""

    def __init__(self, upstream: str, *, delay_seconds: float = SLOW_DELAY_SECONDS,
                 bytes_per_second: float = SLOW_BYTES_PER_SECOND, drops: DroppedLine | None = None):
        self.upstream = urlsplit(upstream)
        self.delay_seconds = delay_seconds
        self.drops = drops
        self.link = SharedLink(bytes_per_second)
        self._recorded = threading.Condition()
        self._passed: list[Passed] = []
        self.server = _ProxyServer(("127.0.0.1", 0), _ProxyHandler)
        self.server.proxy = self
        host, port = self.server.server_address[:2]
        self.origin = f"http://{host}:{port}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ThrottlingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, page: str) -> str:
        return f"{self.origin}/{page.lstrip('/')}"

    def record(self, passed: Passed) -> None:
        with self._recorded:
            self._passed.append(passed)
            self._recorded.notify_all()

    def take_passed(self, at_least: int = 0, timeout: float = 30) -> list[Passed]:
        """Each answer passed on to the browser since the last call, as far as the browser read
        it (an answer it abandoned counts what it had), in the order they were asked for.
        at_least: waits until that many are recorded (an answer is recorded once its last byte
        went, which may be just after the browser read it), or ``timeout`` seconds.
        (Recorded as each handler's thread ends, answers came in another order on a busy
        machine: a browser that read one answer whole and asked for the next could see the
        next recorded first.)"""
        with self._recorded:
            self._recorded.wait_for(lambda: len(self._passed) >= at_least, timeout=timeout)
            passed, self._passed = self._passed, []
            return sorted(passed, key=lambda answer: answer.asked)
