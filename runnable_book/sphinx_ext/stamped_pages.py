"""Which pages a stamp put in when the build ends must read: every page, or those Sphinx wrote.

Two ``build-finished`` steps give every page of the site a value known only once the build
ends: the stylesheet bundle's ``?v=`` (page_assets.py, version_links) and the bytes the
click downloads, in the page's loader (runner, stamp_download_bytes). A page Sphinx did not
write again keeps what the last build stamped into it; so when a stamp's value is the last
build's, only the pages written in this build need it. Reading every page of the site for
both stamps grew with the book: on a book of 200 pages, a twentieth of a prose edit's build
(`make bench-chapters`, timed).

The record of what the last build stamped (``stamped-pages.json`` in the doctrees folder) is
taken away as a build starts and written again when it ends: a build stopped midway, whose
written pages may lack a stamp, leaves none, and the next build stamps every page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, Iterable

from runnable_book.common.files import write_atomically

RECORD = "stamped-pages.json"

# The click's sizes as a written page's loader has them (runner/loader.js: `const DOWNLOAD_BYTES
# = Number("…")`), stamped by runner.stamp_download_bytes. They name no file: offline.py reads
# the files a page names with them left out (without_click_sizes), so a page stamped again
# with new sizes (an edit of a saved function changes the wheel's) is not read again for them.
CLICK_SIZES = re.compile(r'(const (DOWNLOAD_BYTES|SNAPSHOT_BYTES|FIGURE_BYTES) = Number\(")(\d+)("\))')


def without_click_sizes(text: str) -> str:
    return CLICK_SIZES.sub(r"\1\4", text)


def start(app) -> None:
    record = Path(app.doctreedir) / RECORD
    try:
        before = json.loads(record.read_text())
    except (OSError, ValueError):
        before = {}
    record.unlink(missing_ok=True)
    app.builder._stamped_before = before if isinstance(before, dict) else {}
    app.builder._stamped_now = {}
    app.builder._written_pages = set()


def note_written(app, pagename, templatename, context, doctree) -> None:
    app.builder._written_pages.add(pagename)


def pages_to_stamp(app, stamp: str, value, every_page: Callable[[], Iterable[Path]]) -> list[Path]:
    """Of ``every_page()``, the pages to give ``stamp`` its ``value`` (JSON): those Sphinx wrote
    in this build when the last build stamped the same value into every page, else all."""
    value = json.loads(json.dumps(value))  # (as the record keeps it: a tuple a list, keys strings)
    app.builder._stamped_now[stamp] = value
    pages = sorted(every_page())
    if app.builder._stamped_before.get(stamp) != value:
        return pages
    written = {Path(app.builder.get_outfilename(pagename)) for pagename in app.builder._written_pages}
    return [page for page in pages if page in written]


def finish(app, exception) -> None:
    if exception is None and hasattr(app.builder, "_stamped_now"):
        write_atomically(Path(app.doctreedir) / RECORD, json.dumps(app.builder._stamped_now, sort_keys=True))


def setup(app) -> None:
    app.connect("builder-inited", start)
    app.connect("html-page-context", note_written)
    app.connect("build-finished", finish, priority=1000)  # (after every stamp, and the offline list at 999)
