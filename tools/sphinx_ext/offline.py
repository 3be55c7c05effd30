"""The book as an offline app (ours): one service worker, written when the build finishes.

Why: from the published site, a lost connection loses every page not yet open, and "Run in
your browser" needs its 14 MB again whenever the HTTP cache has dropped it. A service worker
(``offline_sw.js``, written to the site's root as ``sw.js``) keeps the book after one visit,
and adds COOP/COEP to the book's own responses, which GitHub Pages cannot send, so a page is
``crossOriginIsolated`` from its second load on.

What it keeps is listed here, each file with a digest of its bytes (the cache key carries it,
so a file changes in the cache exactly when it changes in the site, and an unchanged file is
never downloaded again by a new edition):

- every file of the site, cached at the first visit, except
- ``ON_FIRST_USE``: Pyodide's runtime and matplotlib's wheels, the editor bundle and the
  chapter_lib wheel, cached when the reader first runs a page (they are most of the site's
  bytes, and a reader who never runs code should not pay for them).

The list is written into sw.js itself, so a new build is a different sw.js, which is how the
browser learns of a new edition. Every page loads ``_static/offline.mjs`` after its first
paint: it registers the worker and offers a new edition when one is ready.

Relative URLs throughout (the worker's scope is its folder, the site's root), so the site
works the same under a sub-path (``https://owner.github.io/repo/``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).parent
WORKER_SOURCE = HERE / "offline_sw.js"
PAGE_SCRIPT = HERE / "offline_page.mjs"
WORKER = "sw.js"
PAGE_SCRIPT_SERVED = "_static/offline.mjs"
# Folders and files kept only once the reader runs code (see the module's docstring).
ON_FIRST_USE = ("_static/pyodide/", "_static/runner/editor.mjs", "_static/runner/chapter_lib.whl")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def site_files(outdir: Path) -> dict[str, str]:
    """Every file a reader's browser may ask for, by site-relative path, with its digest.

    Not the worker itself, hidden files (Sphinx's .buildinfo), nor source maps (3 MB that
    only a browser's developer tools ask for)."""
    files = {}
    for path in sorted(outdir.rglob("*")):
        relative = path.relative_to(outdir).as_posix()
        hidden = any(part.startswith(".") for part in relative.split("/"))
        if path.is_file() and relative != WORKER and not hidden and not relative.endswith(".map"):
            files[relative] = digest(path)
    return files


def write_worker(outdir: Path) -> dict[str, dict[str, str]]:
    (outdir / PAGE_SCRIPT_SERVED).write_bytes(PAGE_SCRIPT.read_bytes())
    files = site_files(outdir)
    later = {path: d for path, d in files.items() if path.startswith(ON_FIRST_USE)}
    first = {path: d for path, d in files.items() if path not in later}
    worker = (WORKER_SOURCE.read_text(encoding="utf-8")
              .replace("__PRECACHE__", json.dumps(first, indent=0))
              .replace("__ON_FIRST_USE__", json.dumps(later, indent=0)))
    (outdir / WORKER).write_text(worker, encoding="utf-8")
    return {"precache": first, "on_first_use": later}


def add_page_script(app, pagename, templatename, context, doctree):
    if app.builder.name == "html":
        app.add_js_file("offline.mjs", type="module")


def build_finished(app, exception):
    if exception is None and app.builder.name == "html":
        write_worker(Path(app.outdir))


def serve_page_script_early(app) -> None:
    """The page script in the site before any page is written: Sphinx versions a script's URL
    (``?v=``) by the file it finds there, so a clean build links what an incremental one does."""
    if app.builder.name == "html":
        served = Path(app.outdir) / PAGE_SCRIPT_SERVED
        served.parent.mkdir(parents=True, exist_ok=True)
        served.write_bytes(PAGE_SCRIPT.read_bytes())


def setup(app):
    app.connect("builder-inited", serve_page_script_early)
    app.connect("html-page-context", add_page_script)
    # Last of the build-finished steps: the list must see every file the others write or remove.
    app.connect("build-finished", build_finished, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
