"""The pages' look, the tool's own: its stylesheet, a script, and the theme templates it overrides.

* ``static/runnable-book.css``: setup cells marked, diagrams and their fonts, the reference
  list, hidden cells' prompts, "Run in your browser" and its download bar, exercise progress,
  focus rings and 44 px touch targets, and the whole printed page (`make pdf`);
* ``static/copy-buttons-on-open.js``: copy buttons for code inside a fold, added when it
  opens, each named by its cell (the file says why);
* ``templates/``: the theme's templates this tool overrides (sphinx_ext/README.md says which
  does what): a lighter ``<head>``, scripts after the first paint, the header's ☰, landmarks,
  tab stops in folds.

They are served to every book that names the extension (they were this book's book/_static
and book/_templates): the stylesheet and the script after the theme's and the extensions'
(priority 800, where _config.yml's html_css_files and html_js_files go), the templates after
the book's own templates_path, so a book's template of the same name still wins.
"""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
STYLESHEET = "runnable-book.css"
SCRIPTS = ["copy-buttons-on-open.js"]


def from_the_book(app, folder: Path) -> str:
    """``folder`` as Sphinx reads these settings, relative to the book's folder: Sphinx keeps
    the configuration's digest in the site (.buildinfo), so an absolute path would make two
    copies of one book build different sites."""
    return os.path.relpath(folder, app.confdir)


def serve_the_look(app, config) -> None:
    config.templates_path = [*config.templates_path, from_the_book(app, TEMPLATES)]
    config.html_static_path = [*config.html_static_path, from_the_book(app, STATIC)]


def setup(app):
    app.connect("config-inited", serve_the_look)
    app.add_css_file(STYLESHEET, priority=800)
    for script in SCRIPTS:
        app.add_js_file(script, priority=800)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
