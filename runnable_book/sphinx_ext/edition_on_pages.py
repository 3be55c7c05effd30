"""Sphinx extension: the book's edition, named on every page, on the PDF's title page and in
the notebooks the site publishes; and the launch links open that edition (ours).

The edition (runnable_book/pipeline/edition.py: chapter_lib's version, the commit, its date) is
read from the build graph's record, ``_build/edition.json`` (or, for a build run by hand,
from the working tree), and is a config value that changes the HTML: when it changes,
Sphinx writes every page again, and the print build sets its title page again.

1. Every page's footer says it: "Edition 15.0.0 · 2026-12-03 · commit 0123456789ab", the
   commit linked to the repository (a preview says it has uncommitted changes). Through the
   theme's own ``extra_footer`` (after any footer _config.yml sets).
2. The PDF's title page says it, under the chapter's title: a paragraph the singlehtml build
   (what runnable_book/pipeline/print_pdf.py prints) adds to its one page.
3. The launch links open the edition's commit, not the branch: Binder builds that commit
   (its chapter_lib included, binder/postBuild) and Colab opens that commit's notebook. The
   theme builds the links in Python (``context["header_buttons"]``, at priority 501), so
   they are rewritten just after; a link of another shape than the theme's stops the build
   rather than open the wrong edition. A preview (no commit yet) keeps the branch; so does
   JupyterHub's link, as nbgitpuller pulls a branch.
4. The site serves chapter_lib's wheel under its own file name, in a folder named by the
   library's digest (``_static/editions/<digest>/chapter_lib-<version>-py3-none-any.whl``,
   the very bytes the page's Python runs, ``_static/runner/chapter_lib.whl``), and the
   notebook each page's ".ipynb" download serves (copied there by the runner's glue) is
   published with an install cell that names the edition and installs its library from
   that wheel (sha256 checked by pip) or the edition's commit (runnable_book/pipeline/install_cell.py
   says why those). Written when the build finishes, after the runner's copy and before the
   offline worker lists the site's files with their digests; a wheel folder of an earlier
   library is removed, so an incremental build serves what a clean one does.
"""

from __future__ import annotations

import hashlib
import html
import json
import shutil
import zipfile
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx.errors import ExtensionError

from runnable_book.common.files import kept_per_file, write_atomically
from runnable_book.pipeline import edition
from runnable_book.pipeline.pages import BookError
from runnable_book.pipeline.execute_pages import DIGEST_KEY, sources_digest
from runnable_book.pipeline.install_cell import INSTALL_TAG, SERVED_WHEELS, repository_url, served_wheel, wheel_name
from runnable_book.pipeline.parse_cache import kept_parse
from runnable_book.pipeline.reader_notebook import published_notebook
from runnable_book.repository import ROOT, tool_code

EDITION_CLASS = "book-edition"
LINKING_BUILDERS = {"html", "dirhtml"}
PAGE_WHEEL = Path("_static", "runner", "chapter_lib.whl")  # what the page's Python installs


def book_edition(app) -> edition.Edition:
    return edition.Edition.from_json(app.config.book_edition)


def note_edition(app, config) -> None:
    config.book_edition = edition.recorded(Path(app.confdir)).to_json()
    named = edition.Edition.from_json(config.book_edition)
    footer = f'<p class="{EDITION_CLASS}">{footer_line(named)}</p>'
    theme = dict(config.html_theme_options or {})
    theme["extra_footer"] = (theme.get("extra_footer") or "") + footer
    config.html_theme_options = theme


def footer_line(named: edition.Edition) -> str:
    """The edition as the footer shows it: its words, the commit linked to the repository."""
    text = html.escape(named.line)
    if named.commit:
        short = named.commit[:edition.SHORT]
        link = f'<a href="{html.escape(repository_url())}/commit/{named.commit}">{short}</a>'
        text = text.replace(short, link, 1)
    return text


def edition_on_the_title_page(app, doctree, docname) -> None:
    """The print build's one page: the edition, under the chapter's title."""
    if app.builder.name != "singlehtml" or docname != app.config.root_doc:
        return
    title = next(iter(doctree.findall(nodes.title)), None)
    if title is None:
        raise ExtensionError(f"{docname}: no title to put the edition under, on the PDF's title page")
    title.parent.insert(title.parent.index(title) + 1,
                        nodes.paragraph("", book_edition(app).line, classes=[EDITION_CLASS]))


def launch_at_the_edition(app, pagename, templatename, context, doctree) -> None:
    named = book_edition(app)
    if app.builder.name not in LINKING_BUILDERS or not named.commit:
        return
    branch = (app.config.html_theme_options or {}).get("repository_branch") or "master"
    shapes = {"Binder": (f"/{branch}?urlpath=", f"/{named.commit}?urlpath="),
              "Colab": (f"/blob/{branch}/", f"/blob/{named.commit}/")}
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        for button in group["buttons"]:
            if button.get("text") not in shapes:
                continue
            old, new = shapes[button["text"]]
            if old not in button.get("url", ""):
                raise ExtensionError(f"{pagename}: the theme's {button['text']} link {button.get('url')!r} has no "
                                     f"{old!r} to point at the edition's commit (has the theme changed its links?)")
            button["url"] = button["url"].replace(old, new, 1)


def publish_notebooks_and_wheel(app, exception) -> None:
    if exception is not None or app.builder.name not in LINKING_BUILDERS:
        return
    with edition.library_held():  # (the library does not change while the site is written)
        publish_each_notebook(app)


# What publish_each_notebook served (in the doctrees folder: a clean build starts without it).
PUBLISHED_RECORD = "published-notebooks.json"
NOTEBOOK_DIGESTS = "notebook-digests.json"  # (the sha256 of each committed and served notebook, by identity)


def publish_each_notebook(app) -> None:
    """Each page's reader notebook as the site serves it (_sources/<page>.ipynb, where the
    header's .ipynb download points): installing this edition's wheel.

    Written only where the file served is not the one wanted. Sphinx copies a page's committed
    notebook there only for the pages it writes, so a prose edit finds all the others as the
    last build served them; writing every page's again (on a book of 200 pages, with the
    offline list then reading them all again) was a tenth of a prose edit's build (`make
    bench-chapters`, timed). What is wanted is known by content: the record says, for the
    committed notebook's sha256 and everything else it is made from (publishing_inputs), the
    sha256 of what was served; a served file of another sha256 (Sphinx's copy, a hand edit, a
    build stopped midway) is written again. The files' sha256 are kept by their identity
    (common/files.py, kept_per_file), so an unchanged file is not read."""
    outdir, doctrees = Path(app.outdir), Path(app.doctreedir)
    wheel_sha256 = serve_the_wheel(outdir)
    named = book_edition(app)
    made_from = publishing_inputs(named, wheel_sha256)
    served_at = {docname: (Path(app.srcdir, docname + ".ipynb"), outdir / "_sources" / (docname + ".ipynb"))
                 for docname in sorted(app.env.found_docs)}
    served_at = {docname: (committed, served) for docname, (committed, served) in served_at.items()
                 if committed.is_file() and served.parent.is_dir()}
    digests = kept_per_file({f"{kind}:{docname}": path for docname, paths in served_at.items()
                             for kind, path in zip(("committed", "served"), paths) if path.is_file()},
                            doctrees / NOTEBOOK_DIGESTS, lambda path: hashlib.sha256(path.read_bytes()).hexdigest(),
                            kind="sha256")
    try:
        before = json.loads((doctrees / PUBLISHED_RECORD).read_text())
    except (OSError, ValueError):
        before = {}
    before = before.get("pages", {}) if isinstance(before, dict) and before.get("made_from") == made_from else {}
    after = {}
    for docname, (committed, served) in served_at.items():
        wanted = before.get(docname)
        committed_sha256, served_sha256 = digests[f"committed:{docname}"], digests.get(f"served:{docname}")
        if wanted == [committed_sha256, served_sha256]:
            after[docname] = wanted  # (served as the last build served it, from the same inputs)
            continue
        text = committed.read_text(encoding="utf-8")
        # Kept by the committed notebook and all the rest it is made from (made_from): an edit
        # of the library rewrites every committed notebook's install cell.
        published = kept_parse("published-notebook", f"{made_from}\0{text}", Path(__file__),
                               lambda: published_text(text, named, wheel_sha256))
        content = committed.read_bytes() if published is None else published.encode("utf-8")
        write_atomically(served, content)  # (a notebook without the install cell: served as committed)
        after[docname] = [committed_sha256, hashlib.sha256(content).hexdigest()]
    write_atomically(doctrees / PUBLISHED_RECORD, json.dumps({"made_from": made_from, "pages": after}))


def publishing_inputs(named: edition.Edition, wheel_sha256: str | None) -> str:
    """Everything besides its committed notebook that a page's published notebook is made from:
    the edition, the wheel, the book's settings and version, the tool's code."""
    sha = hashlib.sha256(f"{named!r}\0{wheel_sha256}\0".encode())
    for path in [ROOT / "_config.yml", ROOT / "pyproject.toml", *tool_code()]:
        sha.update(str(path).encode() + b"\0" + (path.read_bytes() if path.is_file() else b"(absent)") + b"\0")
    return sha.hexdigest()


def published_text(text: str, named: edition.Edition, wheel_sha256: str | None) -> str | None:
    """The reader's notebook ``text`` as the site serves it; None for a notebook without the install cell."""
    reader = nbformat.reads(text, as_version=4)
    if not any(INSTALL_TAG in cell.metadata.get("tags", []) for cell in reader.cells):
        return None
    try:
        published = published_notebook(reader, named, wheel_sha256)
    except BookError as error:
        raise ExtensionError(str(error)) from None
    published.metadata[DIGEST_KEY]["sources_sha256"] = sources_digest(published)  # (its cells as written)
    return nbformat.writes(published) + "\n"


def serve_the_wheel(outdir: Path) -> str | None:
    """The page's wheel again, under its own name in its library's folder; its sha256 (None
    when this build serves no wheel: a book without the runner's assets)."""
    page_wheel = outdir / PAGE_WHEEL
    folder = outdir / SERVED_WHEELS
    if not page_wheel.is_file():
        shutil.rmtree(folder, ignore_errors=True)
        return None
    target = outdir / served_wheel()
    version = edition.version()
    with zipfile.ZipFile(page_wheel) as wheel:
        built = next((name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")), "")
    if built != f"chapter_lib-{version}.dist-info/METADATA":
        raise ExtensionError(f"{page_wheel} holds {built or 'no metadata'}, not chapter_lib {version}'s: "
                             "run `make assets` to build this library's wheel")
    for other in folder.iterdir() if folder.is_dir() else []:
        if other != target.parent:  # an earlier library's folder
            shutil.rmtree(other)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(page_wheel, target)
    assert target.name == wheel_name(version)
    return hashlib.sha256(target.read_bytes()).hexdigest()


def setup(app):
    app.add_config_value("book_edition", "", "html", types=[str])
    app.connect("config-inited", note_edition)
    app.connect("doctree-resolved", edition_on_the_title_page)
    # After the theme's launch buttons (501) and the PDF's download entry (502).
    app.connect("html-page-context", launch_at_the_edition, priority=503)
    # After the runner's glue (500); before the offline worker lists the site's files (999).
    app.connect("build-finished", publish_notebooks_and_wheel, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
