"""The built site served on 127.0.0.1 (a free port, a background thread), for every browser tool.

Pages are opened over http, as a reader's browser opens the published book: opened as
``file://`` the book's module scripts (Run in your browser) could not load.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import gzip
import io
import os
import re
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator, NamedTuple
from urllib.parse import unquote, urlsplit

META_REFRESH = re.compile(r"<meta[^>]+http-equiv=[\"']?refresh", re.IGNORECASE)
# A held request (LocalSite.holding) is answered after this long whatever happens, so that a
# test that fails inside the block leaves no server thread waiting for ever.
HOLD_AT_MOST_SECONDS = 300




class Response(NamedTuple):
    """One answer of the server: the URL's path, its status and the body bytes it sent."""
    path: str
    status: int
    body_bytes: int


# A single byte range (RFC 9110, 14.1.2): "bytes=N-", "bytes=N-M" or "bytes=-N" (the last N).
BYTE_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


class _QuietCountingHandler(SimpleHTTPRequestHandler):
    """Serves files without logging, counting the body bytes it sends. Answers a byte range of a
    file with 206, as GitHub Pages does: the page's Python resumes a download that broke off
    from where it stopped (runner/downloads.mjs), and the bytes counted are those a reader's
    browser would receive then."""

    _status, _body_bytes, _encoded = 0, 0, False  # of the answer being sent (send_response sets them)

    def log_message(self, format, *args):  # noqa: A002 - signature is fixed by http.server
        pass

    def do_GET(self):
        self.server.wait_while_held(unquote(urlsplit(self.path).path))
        super().do_GET()

    def send_response(self, code, message=None):
        self._status, self._body_bytes, self._encoded = code, 0, False
        super().send_response(code, message)

    def send_head(self):
        served = self._send_page_in_memory()
        if served is not None:
            return served
        ranged = self._send_range_head()
        return super().send_head() if ranged is None else ranged

    def _send_page_in_memory(self):
        """A page LocalSite.serve holds at this path (whole, 200), or None: not one."""
        body = self.server.page_in_memory(unquote(urlsplit(self.path).path))
        if body is None:
            return None
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

    def _send_range_head(self):
        """The answer to a Range of a file: 206 with those bytes, or 416 past its end; None (the
        whole file, 200, which a host may always send) for anything else: no Range, several
        ranges, a directory, or an If-Range that names another version of the file."""
        match = BYTE_RANGE.fullmatch(self.headers.get("Range", "").strip())
        path = self.translate_path(self.path)
        if match is None or not os.path.isfile(path) or match.group(1) == match.group(2) == "":
            return None
        modified = self.date_time_string(int(os.stat(path).st_mtime))
        if self.headers.get("If-Range", modified) != modified:
            return None
        size = os.path.getsize(path)
        first, last = match.group(1), match.group(2)
        if first:
            start, end = int(first), min(int(last), size - 1) if last else size - 1
        else:
            start, end = max(size - int(last), 0), size - 1
        if start >= size or start > end:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return io.BytesIO(b"")
        with open(path, "rb") as file:
            file.seek(start)
            body = file.read(end - start + 1)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", modified)
        self.end_headers()
        return io.BytesIO(body)

    def send_header(self, keyword, value):
        # Content-Length is exactly the body size of every file and error page
        # http.server sends, so summing it gives the bytes a page load costs (an answer to
        # HEAD says the size and sends no body).
        if keyword.lower() == "content-length" and self.command != "HEAD":
            self._body_bytes = int(value)
            self.server.count_bytes(int(value), unquote(urlsplit(self.path).path))
        if keyword.lower() == "content-encoding":
            self._encoded = True
        super().send_header(keyword, value)

    def end_headers(self):
        # Said of every whole file sent as stored, as GitHub Pages says it (a gzipped answer's
        # bytes are not the file's: a range of it is not offered).
        if self._status in (200, 206) and not self._encoded:
            super().send_header("Accept-Ranges", "bytes")
        # Every answer, a 304 to a revalidation included: what a host sent, response by response.
        self.server.record_response(unquote(urlsplit(self.path).path), self._status, self._body_bytes)
        super().end_headers()


# What GitHub Pages compresses: text of every kind, scripts, JSON, SVG.
COMPRESSED_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml", "application/xml")
COMPRESSED_SUFFIXES = (".mjs", ".js", ".map")


class GzipHandler(_QuietCountingHandler):
    """Serves text gzipped when the browser accepts it, as GitHub Pages does, so the bytes
    counted are the bytes a reader's browser would receive; answers a revalidation with 304
    (as http.server does for the files it sends whole)."""

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path) and self.path.split("?")[0].endswith("/"):
            path = os.path.join(path, "index.html")
        content_type = self.guess_type(path)
        compressible = content_type.startswith(COMPRESSED_TYPES) or path.endswith(COMPRESSED_SUFFIXES)
        if (not os.path.isfile(path) or not compressible
                or "gzip" not in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        modified = int(os.stat(path).st_mtime)
        since = self.headers.get("If-Modified-Since")
        if since and "If-None-Match" not in self.headers:
            try:
                if modified <= email.utils.parsedate_to_datetime(since).timestamp():
                    self.send_response(304)
                    self.end_headers()
                    return None
            except (TypeError, ValueError):
                pass
        body = gzip.compress(open(path, "rb").read(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(modified))
        self.end_headers()
        return io.BytesIO(body)


class _CountingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler):
        super().__init__(address, handler)
        self._lock = threading.Lock()
        self._bytes_served = 0
        # (when, bytes sent since the server started) at each answer's headers: what the browser
        # can have received by then is at most that (tests/test_download_bar.py).
        self._sent_timeline: list[tuple[float, int]] = [(time.time(), 0)]
        self._paths_served: list[tuple[str, int]] = []
        self._responses: list[Response] = []
        self._held: dict[str, threading.Event] = {}
        self._pages_in_memory: dict[str, bytes] = {}

    def serve(self, path: str, body: bytes) -> None:
        with self._lock:
            self._pages_in_memory[path] = body

    def page_in_memory(self, path: str) -> bytes | None:
        with self._lock:
            return self._pages_in_memory.get(path)

    def hold(self, path: str) -> threading.Event:
        """From now on, requests for ``path`` wait until the returned event is set (release)."""
        with self._lock:
            return self._held.setdefault(path, threading.Event())

    def release(self, path: str) -> None:
        with self._lock:
            released = self._held.pop(path, None)
        if released is not None:
            released.set()

    def wait_while_held(self, path: str) -> None:
        """Answer a request for a held path only once it is released (LocalSite.holding)."""
        with self._lock:
            released = self._held.get(path)
        if released is not None:
            released.wait(timeout=HOLD_AT_MOST_SECONDS)

    def count_bytes(self, n: int, path: str = "") -> None:
        with self._lock:
            self._bytes_served += n
            self._paths_served.append((path, n))
            self._sent_timeline.append((time.time(), self._sent_timeline[-1][1] + n))

    def record_response(self, path: str, status: int, body_bytes: int) -> None:
        with self._lock:
            self._responses.append(Response(path, status, body_bytes))

    def take_responses(self) -> list[Response]:
        """Every answer since the last call, in the order they were sent (304s included)."""
        with self._lock:
            responses, self._responses = self._responses, []
            return responses

    def take_paths_served(self) -> list[tuple[str, int]]:
        """(URL path, body bytes) of each answer since the last call (304s are not counted)."""
        with self._lock:
            paths, self._paths_served = self._paths_served, []
            return paths

    def sent_by(self, at: float) -> int:
        """Bytes sent since the server started, by `at` (seconds since the epoch; an answer
        counts whole from its headers on)."""
        with self._lock:
            return max((total for when, total in self._sent_timeline if when <= at), default=0)

    def take_bytes_served(self) -> int:
        """Bytes sent since the last call."""
        with self._lock:
            n, self._bytes_served = self._bytes_served, 0
            return n

    def handle_error(self, request, client_address) -> None:
        # A browser that stops reading an answer (a page closed mid-download, a request the
        # service worker abandoned) is not the site's fault: no traceback for it in the log.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class LocalSite:
    """Serves a folder on 127.0.0.1 at a free port, in a background thread."""

    def __init__(self, root: Path, handler_class: type = None, *, gzip: bool = False):
        """gzip: text sent compressed (GzipHandler), for counting bytes as a reader receives them."""
        self.root = Path(root).resolve()
        handler_class = handler_class or (GzipHandler if gzip else None)
        handler = functools.partial(handler_class or _QuietCountingHandler, directory=str(self.root))
        self.server = _CountingServer(("127.0.0.1", 0), handler)
        host, port = self.server.server_address[:2]
        self.netloc = f"{host}:{port}"
        self.origin = f"http://{self.netloc}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> LocalSite:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @contextlib.contextmanager
    def holding(self, page: str) -> Iterator[None]:
        """Requests for ``page`` (a path of the site) wait unanswered until the block ends: what a
        test needs to happen before the browser has that file happens first, whatever the timing
        (a service worker's script held keeps a first visit's page uncontrolled, for instance)."""
        path = "/" + page.lstrip("/")
        self.server.hold(path)
        try:
            yield
        finally:
            self.server.release(path)

    def serve(self, page: str, html: bytes) -> None:
        """Serve ``html`` at ``page`` (a path of the site) from now on, as a file of the folder
        would be, though no file is written: a page made for one use (a chapter's print:
        runnable_book/pipeline/print_pdf.py) beside the site's own, its addresses relative
        to theirs. It takes the place of a file of that name."""
        self.server.serve("/" + page.lstrip("/"), html)

    def url(self, page: str) -> str:
        return f"{self.origin}/{page}"

    def is_local(self, url: str) -> bool:
        parts = urlsplit(url)
        # data:, blob: and about: URLs never reach the network.
        return parts.scheme not in ("http", "https", "ws", "wss") or parts.netloc == self.netloc

    def page_name(self, url: str) -> str:
        return unquote(urlsplit(url).path).lstrip("/")

    def file_for(self, url: str) -> Path | None:
        """The file a local URL is served from, or None if there is none."""
        path = (self.root / unquote(urlsplit(url).path).lstrip("/")).resolve()
        if path.is_dir():
            path = path / "index.html"
        if not path.is_relative_to(self.root) or not path.is_file():
            return None
        return path


def find_pages(root: Path) -> list[str]:
    """Every HTML page of a Sphinx build, as paths relative to its root.

    Folders starting with "_" (_static, _sources, _images) hold assets, and
    the theme keeps template fragments such as _static/webpack-macros.html
    there, which are not pages.
    """
    root = Path(root)
    pages = []
    for path in sorted(root.rglob("*.html")):
        relative = path.relative_to(root)
        if not any(part.startswith("_") for part in relative.parts[:-1]):
            pages.append(relative.as_posix())
    return pages


def is_redirect_page(html_file: Path) -> bool:
    return html_file.is_file() and bool(META_REFRESH.search(html_file.read_text(errors="replace")))
