"""Sphinx extension: a page taken out of the book leaves nothing behind in the site.

Sphinx writes a page's files and never deletes them: a page removed from _toc.yml (Jupyter
Book then excludes its file, so it is no longer among the environment's ``found_docs``)
kept its HTML, its ``_sources`` copy and its notebook download in ``_build/html``, where
the site's tests found a page that the book no longer has.

Which pages did the last build write? The environment's own answer (the ``removed`` docs
of ``env-get-outdated``) is lost whenever the environment is fresh (``jupyter-book build
--all``, which runnable_book/pipeline/site_build.py uses when our extension changed). The HTML
builder's search index is not: ``searchindex.js`` lists every page the builder wrote, and
Sphinx itself reads it back on the next incremental build. So we read it before the build
writes a new one; once the build has finished, each page it listed that is no longer a
document of the book loses exactly the files the build wrote for it:

* its page, ``<docname>.html`` (the builder's ``get_outfilename``);
* its source copy, ``_sources/<docname><suffix>`` (Sphinx's ``html_copy_source``);
* its notebook download, ``_sources/<docname>.ipynb`` (sphinx-book-theme's copy, which
  runnable_book/sphinx_ext/runner replaces with the reader's notebook), and MyST-NB's copy of the
  notebook in ``jupyter_execute/`` beside the output folder, which the theme copies from.

Nothing else is touched: shared files (``_images``, ``_static``) and pages the book still
has stay as the build left them.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.search import js_index
from sphinx.util import logging

logger = logging.getLogger(__name__)
# MyST-NB's folder for executed notebooks, beside the HTML output folder (myst_nb.sphinx_ext).
MYST_NB_OUTPUT_FOLDER = "jupyter_execute"


def writes_pages(app) -> bool:
    """html and dirhtml: one file per page (singlehtml writes the book as one page)."""
    return isinstance(app.builder, StandaloneHTMLBuilder) and app.builder.name != "singlehtml"


def pages_in_search_index(index: Path) -> set[str]:
    """The docnames that the build which wrote ``index`` wrote (none if there is none)."""
    if not index.is_file():
        return set()
    with index.open(encoding="utf-8") as stream:
        return set(js_index.load(stream)["docnames"])


def note_pages_built_before(app) -> None:
    if writes_pages(app):
        index = Path(app.outdir, app.builder.searchindex_filename)
        app.builder.pages_built_before = pages_in_search_index(index)


def files_of_page(app, docname: str) -> list[Path]:
    """Every file the build writes for ``docname``, whatever its source's suffix was."""
    outdir = Path(app.outdir)
    sources = []
    for suffix in app.config.source_suffix:
        name = docname + suffix
        if suffix != app.config.html_sourcelink_suffix:
            name += app.config.html_sourcelink_suffix
        sources.append(outdir / "_sources" / name)
    files = [
        Path(app.builder.get_outfilename(docname)),
        *sources,
        outdir / "_sources" / f"{docname}.ipynb",
        outdir.parent / MYST_NB_OUTPUT_FOLDER / f"{docname}.ipynb",
    ]
    return list(dict.fromkeys(files))  # (an .ipynb source's copy is its download too)


def remove_pages_no_longer_in_the_book(app, exception) -> None:
    if exception is not None or not writes_pages(app):
        return
    for docname in sorted(getattr(app.builder, "pages_built_before", set()) - app.env.found_docs):
        removed = [file for file in files_of_page(app, docname) if file.is_file()]
        for file in removed:
            file.unlink()
        if removed:
            logger.info("%s is no longer in the book: removed %s", docname,
                        ", ".join(str(file.relative_to(Path(app.outdir).parent)) for file in removed))


def drop_words_of_no_page(app, exception) -> None:
    """Sphinx's incremental search index keeps a word whose pages all changed or went (with an
    empty list of pages); a clean build has no such word. Dropped, so an incremental build's
    index is a clean build's (runnable_book/pipeline/artefact_graph.py), and search offers no dead word."""
    if exception is not None or not writes_pages(app):
        return
    index = Path(app.outdir, app.builder.searchindex_filename)
    if not index.is_file():
        return
    with index.open(encoding="utf-8") as stream:
        data = js_index.load(stream)
    kept = {key: {word: pages for word, pages in data[key].items() if pages != []}
            for key in ("terms", "titleterms") if isinstance(data.get(key), dict)}
    if all(len(kept[key]) == len(data[key]) for key in kept):
        return
    data.update(kept)
    with index.open("w", encoding="utf-8") as stream:
        js_index.dump(data, stream)


def setup(app):
    app.connect("builder-inited", note_pages_built_before)
    app.connect("build-finished", drop_words_of_no_page, priority=101)
    # Before the build-finished steps that read every page of the site (icons.py's glyph
    # count, page_assets.py's stylesheet links), so they never see a removed page.
    app.connect("build-finished", remove_pages_no_longer_in_the_book, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
