"""The book as an offline app (ours): one service worker, written when the build finishes.

Why: from the published site, a lost connection loses every page not yet open, and "Run in
your browser" needs its runtime again whenever the HTTP cache has dropped it. A service worker
(``offline_sw.js``, written to the site's root as ``sw.js``) keeps what the reader has and asks
for, and adds COOP/COEP to the book's own responses, which GitHub Pages cannot send, so a page
is ``crossOriginIsolated`` from its second load on.

Data on the reader's word: the site's files are split into groups (``GROUPS``), each file with
a digest of its bytes (the cache key carries it, so a file changes in the cache exactly when it
changes in the site, and an unchanged file is never downloaded again by a new edition):

- ``pages``: every page and what the pages load (their stylesheets, scripts, fonts, images,
  found by reading the pages and the files they name) and the search index, kept in the
  background after a first visit, unless the data saver is on (about 0.6 MB gzipped). In a
  book of several chapters, a visit keeps its own chapter's part of it (``chapters``: each
  chapter's pages and the images only they show) and the part every page shares, and a visit
  to another chapter keeps that one's, so a first visit costs what a chapter weighs, not the
  book (`make bench-chapters`' reader step measures it in a book of 20);
- ``python``: Pyodide's runtime, the runner, the editor, chapter_lib and Python's snapshot,
  kept when the reader runs a page (they are fetched for that run anyway);
- ``figures``: matplotlib's wheels and the first figure's bytecode, kept when a page draws;
- ``pdf`` and ``notebooks``: the chapter's PDF and the reader's notebooks, kept when opened;
- ``other``: files no page names (the theme's unused scripts and fonts), kept only if asked for.

"Keep this book for offline use (N MB)" in the footer keeps every group but ``other``; N is
the missing groups' transfer size (``transfer_bytes``: gzip for text, as a static host sends it).

The list is written into sw.js itself, so a new build is a different sw.js, which is how the
browser learns of a new edition. Every page loads ``_static/offline.mjs`` after its first
paint: it registers the worker, asks for the pages, says what is kept, offers a new edition.

Relative URLs throughout (the worker's scope is its folder, the site's root), so the site
works the same under a sub-path (``https://owner.github.io/repo/``).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import html
import json
import mimetypes
import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from runnable_book.browser.local_site import COMPRESSED_SUFFIXES, COMPRESSED_TYPES
from runnable_book.common.files import kept_per_file
from runnable_book.pipeline.parse_cache import kept_parse
from runnable_book.sphinx_ext.stamped_pages import without_click_sizes

HERE = Path(__file__).parent
WORKER_SOURCE = HERE / "offline_sw.js"
PAGE_SCRIPT = HERE / "offline_page.mjs"
WORKER = "sw.js"
PAGE_SCRIPT_SERVED = "_static/offline.mjs"
# What a navigation outside the book gets while offline (the worker answers it from the cache).
OFFLINE_PAGE = "_static/offline.html"
# The groups, in the order the footer names them; "other" is never kept unasked.
KEEPABLE = ("pages", "python", "figures", "pdf", "notebooks")
# A quoted string or a CSS url(...): the candidates for a file a page or its assets load.
REFERENCE = re.compile(r"""["']([^"'\s<>(){}]+)["']|url\(\s*([^)"'\s]+)\s*\)""")
FOLLOWED = (".html", ".css", ".js", ".mjs")  # files whose references are followed


def digest(path: Path) -> str:
    return _digest(path.read_bytes())


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def transfer_bytes(path: Path) -> int:
    """What a static host that compresses text (GitHub Pages) sends for this file: the rule
    the benchmarks' server follows (runnable_book/browser/local_site.py), so the size the footer
    states is the size `make bench-run` counts."""
    return _transfer_bytes(path.name, path.read_bytes())


def _transfer_bytes(name: str, data: bytes) -> int:
    content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    compressed = content_type.startswith(COMPRESSED_TYPES) or name.endswith(COMPRESSED_SUFFIXES)
    return len(gzip.compress(data, compresslevel=6, mtime=0)) if compressed else len(data)


def _references(text: str) -> list[str]:
    """The quoted strings and url()s of a page, stylesheet or script: candidates for the files it loads."""
    text = text.replace("\\/", "/")
    return list(dict.fromkeys(match.group(1) or match.group(2) for match in REFERENCE.finditer(text)))


def served_paths(outdir: Path) -> list[tuple[str, Path]]:
    """Every file a reader's browser may ask for: (site-relative path, file), in order.

    Not the worker itself, hidden files (Sphinx's .buildinfo), nor source maps (3 MB that
    only a browser's developer tools ask for)."""
    found = []
    for path in sorted(outdir.rglob("*")):
        relative = path.relative_to(outdir).as_posix()
        hidden = any(part.startswith(".") for part in relative.split("/"))
        if path.is_file() and relative != WORKER and not hidden and not relative.endswith(".map"):
            found.append((relative, path))
    return found


def site_files(outdir: Path) -> dict[str, str]:
    """Every file a reader's browser may ask for, by site-relative path, with its digest."""
    return {relative: digest(path) for relative, path in served_paths(outdir)}


def scanned(outdir: Path, kept: Path | None = None) -> dict[str, dict]:
    """{path: {"digest", "transfer", "named"}} for every served file (served_paths); "named":
    the files of the site, pages aside, that a page, stylesheet or script may load (named_in).

    With ``kept`` (a JSON file outside the site), what a file's bytes gave is kept there by the
    file's identity and used again while that identity holds (common/files.py, kept_per_file):
    reading, hashing, compressing and reading the names of every file was most of what the
    offline list cost a prose edit's build on a book of 200 pages."""
    def scan(path: Path) -> dict:
        data, relative = path.read_bytes(), path.relative_to(outdir).as_posix()
        return {"digest": _digest(data), "transfer": _transfer_bytes(path.name, data), "named": named_in(relative, data)}

    files = dict(served_paths(outdir))
    if kept is None:
        return {relative: scan(path) for relative, path in files.items()}
    return kept_per_file(files, kept, scan, kind=SCANNED_KIND)


# What scanned() gives, for its record (change it with what scan returns).
SCANNED_KIND = "digest, transfer bytes, named files"


def named_in(relative: str, data: bytes) -> list[str]:
    """What the file at ``relative`` (a page, stylesheet or script) names of the site, pages
    aside (links between pages are not followed: every page is a start): every quoted string or
    url() that resolves, relative to the file, to a path in the site (checked by the caller)."""
    if not relative.endswith(FOLLOWED):
        return []
    # Read with the click's sizes left out (they name no file), and kept by what is read
    # (parse_cache.py): an edit of a saved function stamps new sizes into every page, and
    # reading each page of a 200-page book again for its files was most of the offline list's
    # cost on that edit's build (`make bench-chapters`, its saved step).
    text = without_click_sizes(data.decode("utf-8", errors="replace"))
    return kept_parse("files-named", f"{relative}\0{text}", Path(__file__), lambda: _named_in(relative, text))


def _named_in(relative: str, text: str) -> list[str]:
    folder = PurePosixPath(relative).parent
    return sorted({found for string in _references(text)
                   if (found := _resolved(folder, string)) and not is_page(found)})


def is_page(relative: str) -> bool:
    return relative.endswith(".html") and not relative.split("/")[0].startswith("_")


def referenced(outdir: Path, files: set[str], start: list[str], named: dict[str, list[str]] | None = None) -> set[str]:
    """The site's files that ``start`` name, and those they name in turn (stylesheets' fonts,
    modules' imports): named_in each, of the site's ``files``. (``named``: each file's
    named_in, when already read: scanned.)"""
    found, todo = set(start), list(start)
    while todo:
        name = todo.pop()
        targets = named[name] if named is not None else named_in(name, (outdir / name).read_bytes())
        for target in targets:
            if target in files and target not in found:
                found.add(target)
                todo.append(target)
    return found


# (Every page names the same sidebar, every other page in it: resolved once per folder and
# string, not once per page, else a scan of the site grows with the square of the pages.)
@functools.lru_cache(maxsize=1 << 16)
def _resolved(folder: PurePosixPath, reference: str) -> str:
    """The site path a quoted string names from a file in ``folder``; "" when it names none
    (absolute, data:, another host, or above the site)."""
    target = unquote(urlsplit(html.unescape(reference)).path)
    if not target or target.startswith(("/", "data:")) or "://" in target:
        return ""
    return _normalise(folder / target)


def _normalise(path: PurePosixPath) -> str:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return ""
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def group_of(relative: str, loaded_by_pages: set[str], files: set[str] = frozenset()) -> str:
    if relative + ".gz" in files and relative.startswith("_static/pyodide/"):
        return "other"  # the runtime's file fetched as its gzipped copy (runner/downloads.mjs): never this one
    if relative.startswith("_static/pyodide/") and relative.endswith(".whl"):
        return "figures"
    if relative in ("_static/runner/first-figure.zip", "_static/runner/figures.py"):
        return "figures"
    if relative.startswith(("_static/pyodide/", "_static/runner/")) and relative not in loaded_by_pages:
        return "python"
    if relative.endswith(".pdf"):
        return "pdf"
    if relative.startswith("_sources/"):
        return "notebooks"
    if is_page(relative) or relative in loaded_by_pages or relative in ("searchindex.js", OFFLINE_PAGE):
        return "pages"
    return "other"


def groups(outdir: Path, kept: Path | None = None, chapters: dict[str, str] | None = None) -> dict[str, dict]:
    """{group: {"files": {path: digest}, "sizes": {path: transfer size}, "bytes": their sum}}
    for every file of the site (``kept``: scanned's). With ``chapters`` (a page's path -> its
    chapter) naming more than one chapter, the ``pages`` group also has ``"chapters"``:
    {chapter: [its part of the group's files]} (chapter_parts)."""
    files = scanned(outdir, kept)
    pages = [name for name in files if is_page(name)]
    named = {name: entry["named"] for name, entry in files.items()}
    loaded_by_pages = referenced(outdir, set(files), pages, named)
    result = {name: {"files": {}, "sizes": {}, "bytes": 0} for name in (*KEEPABLE, "other")}
    names = set(files)
    for relative, entry in files.items():
        group = result[group_of(relative, loaded_by_pages, names)]
        group["files"][relative] = entry["digest"]
        group["sizes"][relative] = entry["transfer"]
        group["bytes"] += group["sizes"][relative]
    if chapters and len(set(chapters.values())) > 1:
        result["pages"]["chapters"] = chapter_parts(outdir, set(result["pages"]["files"]), chapters, named)
    return result


def chapter_parts(outdir: Path, pages_group: set[str], chapters: dict[str, str],
                  named: dict[str, list[str]]) -> dict[str, list[str]]:
    """Each chapter's part of the ``pages`` group: its pages, and the files that only its pages
    name (their images) and that no stylesheet or script loads. The rest of the group (the
    theme's files, the search, the pages of no chapter, an image two chapters show) is shared:
    kept on any visit."""
    named_by: dict[str, set[str | None]] = {}
    for page in (name for name in pages_group if is_page(name)):
        for target in named.get(page, []):
            if target in pages_group:
                named_by.setdefault(target, set()).add(chapters.get(page))
    assets = sorted(name for name in named_by if name.endswith(FOLLOWED))
    loaded_by_assets = referenced(outdir, pages_group, assets, named)
    parts: dict[str, list[str]] = {}
    for page, chapter in chapters.items():
        if page in pages_group:
            parts.setdefault(chapter, []).append(page)
    for name, chapters_naming in named_by.items():
        if len(chapters_naming) == 1 and None not in chapters_naming and name not in loaded_by_assets:
            parts.setdefault(next(iter(chapters_naming)), []).append(name)
    return {chapter: sorted(part) for chapter, part in sorted(parts.items())}


def write_offline_page(outdir: Path, title: str) -> None:
    """The page a navigation outside the book gets offline: the book's own words, not the
    browser's "This site can't be reached"; for a page of the book not kept (another chapter's,
    in a book of several), the worker shows its second sentence instead. Its links are relative
    to _static/."""
    title = html.escape(title)
    (outdir / OFFLINE_PAGE).write_text(f"""<!DOCTYPE html>
<!-- Generated by runnable_book/sphinx_ext/offline.py; do not edit. -->
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Offline: {title}</title>
<style>body {{ font: 1.1rem/1.5 system-ui, sans-serif; max-width: 36rem; margin: 3rem auto; padding: 0 1rem; }}
a {{ display: inline-block; min-height: 44px; line-height: 44px; }}</style>
</head><body><main>
<h1>You are offline</h1>
<p data-offline-reason="elsewhere">This address is not part of {title} as this browser keeps it,
and the network cannot be reached. The book's pages kept in this browser still open.</p>
<p data-offline-reason="not-kept" hidden>This page of {title} is not kept in this browser yet,
and the network cannot be reached. The pages kept here still open; online, "Keep this book for
offline use" in a page's footer keeps every page.</p>
<p><a href="../index.html">Go to the book's first page</a></p>
</main></body></html>
""", encoding="utf-8")


def write_worker(outdir: Path, title: str = "this book", chapters: dict[str, str] | None = None) -> dict[str, dict]:
    (outdir / PAGE_SCRIPT_SERVED).write_bytes(PAGE_SCRIPT.read_bytes())
    write_offline_page(outdir, title)
    # (What the site's files gave, kept beside the site, never in it: _build/cache/ for _build/html.)
    site_groups = groups(outdir, kept=outdir.parent / "cache" / f"served-files-of-{outdir.name}.json", chapters=chapters)
    worker = (WORKER_SOURCE.read_text(encoding="utf-8")
              .replace("__GROUPS__", json.dumps(site_groups, indent=0))
              .replace("__KEEPABLE__", json.dumps(KEEPABLE))
              .replace("__OFFLINE_PAGE__", json.dumps(OFFLINE_PAGE)))
    (outdir / WORKER).write_text(worker, encoding="utf-8")
    return site_groups


# With the offline copy off (``book_offline_copy: false`` in _config.yml), the site still has
# a sw.js, this one: a reader's browser that installed the book's worker checks sw.js for a new
# version on its next visit and gets this, which deletes the book's cache (its name as
# offline_sw.js makes it; other sites under the same origin keep theirs), unregisters itself
# and reloads the open pages from the network.
RETIRING_WORKER = """// Generated by runnable_book/sphinx_ext/offline.py (book_offline_copy: false); do not edit.
// The book's offline copy is off: this worker deletes the book's cache and unregisters itself.
const CACHE = `book-offline:${new URL(self.registration.scope).pathname}`;
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil((async () => {
  await caches.delete(CACHE);
  await self.registration.unregister();
  for (const client of await self.clients.matchAll({ type: "window" })) client.navigate(client.url);
})()));
"""


def write_retiring_worker(outdir: Path) -> None:
    (outdir / WORKER).write_text(RETIRING_WORKER, encoding="utf-8")
    for made in (PAGE_SCRIPT_SERVED, OFFLINE_PAGE):
        (outdir / made).unlink(missing_ok=True)


def add_page_script(app, pagename, templatename, context, doctree):
    if app.builder.name == "html" and app.config.book_offline_copy:
        app.add_js_file("offline.mjs", type="module")


def chapter_of_pages(app) -> dict[str, str]:
    """Each page of a chapter, as the site serves it, -> its chapter, in a book of several (the
    pages each chapter's PDF prints: runnable_book/pipeline/printed_pdfs.py); {} in a book of one."""
    from runnable_book.pipeline.printed_pdfs import printed_pdfs

    return {app.builder.get_target_uri(document): pdf.chapter
            for pdf in printed_pdfs() if not pdf.whole_book for document in pdf.documents}


def build_finished(app, exception):
    if exception is None and app.builder.name == "html":
        if app.config.book_offline_copy:
            write_worker(Path(app.outdir), app.config.html_title or app.config.project, chapter_of_pages(app))
        else:
            write_retiring_worker(Path(app.outdir))


def serve_page_script_early(app) -> None:
    """The page script in the site before any page is written: Sphinx versions a script's URL
    (``?v=``) by the file it finds there, so a clean build links what an incremental one does."""
    if app.builder.name == "html" and app.config.book_offline_copy:
        served = Path(app.outdir) / PAGE_SCRIPT_SERVED
        served.parent.mkdir(parents=True, exist_ok=True)
        served.write_bytes(PAGE_SCRIPT.read_bytes())


def setup(app):
    # The maintainer's switch (_config.yml): false builds a site with no offline copy.
    app.add_config_value("book_offline_copy", True, "html", types=[bool])
    app.connect("builder-inited", serve_page_script_early)
    app.connect("html-page-context", add_page_script)
    # Last of the build-finished steps: the list must see every file the others write or remove.
    app.connect("build-finished", build_finished, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
