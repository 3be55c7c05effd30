"""What Chromium hands a page of an answer cut before the page read it (the premise of
tests/test_dropped_line.py's reading of a whole answer sent again after a cut one).

    python -m runnable_book.bench.cut_answer [--trials 10] [--reset]

Each trial: a page fetches a 2,000,000-byte file through the throttling proxy, which cuts the
answer after 700,000 bytes; once the proxy has recorded the cut, the page reads the body.
With --reset, a server of its own sends the 700,000 bytes and resets the connection (TCP RST,
as a dropped line does), and the page reads 200 ms after its answer's headers.
Prints how many bytes the page got before the error, trial by trial, and the tally. (A page
that got none asks the whole file again, 200; one that got some asks the rest, 206.)
"""

from __future__ import annotations

import argparse
import collections
import http.server
import socket
import struct
import tempfile
import threading
from pathlib import Path

from runnable_book.browser.chromium import launch
from runnable_book.browser.local_site import LocalSite
from runnable_book.browser.throttling_proxy import DroppedLine, ThrottlingProxy

SIZE, CUT = 2_000_000, 700_000
JS_READ = """async () => {
    const reader = window.answer.body.getReader();
    let bytes = 0;
    try { for (;;) { const {done, value} = await reader.read(); if (done) return bytes; bytes += value.byteLength; } }
    catch (error) { return -bytes - 1; }
}"""  # (the bytes read, as -(bytes + 1) when the body ended in an error)


class ResettingServer(http.server.BaseHTTPRequestHandler):
    """A page, and a large file whose answer is reset after CUT bytes."""

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        if not self.path.startswith("/large.bin"):
            body = b"<p>a page</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(SIZE))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(bytes(CUT))
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # (close = RST)
        self.connection.close()


def reset_trials(browser, trials: int) -> list[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ResettingServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{server.server_port}/page.html")
        read = []
        for trial in range(trials):
            page.evaluate(f"async () => {{ window.answer = await fetch('large.bin?{trial}'); "
                          "await new Promise((wake) => setTimeout(wake, 200)); }")
            read.append(page.evaluate(JS_READ))
        return read
    finally:
        server.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--reset", action="store_true", help="a server of its own resets the connection")
    args = parser.parse_args(argv)
    trials = args.trials
    tally: collections.Counter = collections.Counter()

    def said(trial: int, read: int) -> None:
        outcome = f"{-read - 1:,} of {SIZE:,} bytes, then an error" if read < 0 else f"{read:,} bytes, whole"
        tally[outcome] += 1
        print(f"trial {trial}: the page got {outcome}", flush=True)

    if args.reset:
        with launch(resolve_only_localhost=True) as browser:
            for trial, read in enumerate(reset_trials(browser, trials), 1):
                said(trial, read)
        print("tally: " + "; ".join(f"{n} x {outcome}" for outcome, n in tally.most_common()))
        return 0
    with tempfile.TemporaryDirectory() as folder, launch(resolve_only_localhost=True) as browser:
        Path(folder, "large.bin").write_bytes(bytes(SIZE))
        Path(folder, "page.html").write_text("<p>a page</p>")
        with LocalSite(Path(folder)) as site:
            for trial in range(1, trials + 1):
                drops = DroppedLine(after_bytes=CUT, times=1, min_size=1_000_000)
                with ThrottlingProxy(site.origin, delay_seconds=0, bytes_per_second=1e12, drops=drops) as line:
                    page = browser.new_page()
                    page.goto(line.url("page.html"))
                    page.evaluate("async () => { window.answer = await fetch('large.bin', {cache: 'no-store'}); }")
                    line.take_passed(at_least=2)  # (the page, and the cut answer: recorded once cut)
                    read = page.evaluate(JS_READ)
                    page.close()
                said(trial, read)
    print("tally: " + "; ".join(f"{n} x {outcome}" for outcome, n in tally.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
