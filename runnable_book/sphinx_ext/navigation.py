"""The book's navigation, which every page shows: written again on every page when it changed,
and its sidebar kept between builds while it has not.

Each page carries the book's navigation: the sidebar lists every page (by title, in
_toc.yml's order) and the footer names the previous and next pages. Sphinx writes again
only the pages it re-read (and those sphinx-external-toc says have new toctrees), so after
a page is added, removed, moved or retitled, the other pages kept their old navigation: an
incremental build that differed from a clean one (tests/test_incremental_build.py found a
page written while a page existed still listing it after the page was removed).

After reading, this takes a digest of the navigation (navigation_digest: every document's
toctree entries, title and sections as their nodes, not their text alone, so that a title
given `code` or *emphasis* counts) and of what renders it, keeps it in Sphinx's environment,
and, when it differs from the last build's, returns every page for writing (Sphinx's
``env-get-updated``). Reading stays incremental; writing every page takes a few seconds, and
only on such a change.

The sidebar itself is kept too (kept_sidebars): the theme builds it anew for each page it
writes, from the whole book's table of contents (the toctree resolved, rendered, then
reworked with BeautifulSoup). Sphinx writes four pages on any edit (the page, the book's
first page, the index, the search page), and on a book of 200 pages their sidebars were a
third of what the book's size added to a prose edit's build (`make bench-chapters`, timed).
Each page's sidebar is kept under the doctrees folder by the navigation's digest and the
page, and a build whose navigation is unchanged takes it from there: the same bytes, as its
digest names all it is made from.
"""

from __future__ import annotations

import functools
import hashlib
import shutil
from pathlib import Path

from markupsafe import Markup

from runnable_book.common.files import write_atomically
from runnable_book.pipeline.synced_pages import digest_of_inputs
from runnable_book.repository import tool_code

NAVIGATION = "book_navigation"
KEPT = "kept-sidebars"  # (in the doctrees folder: a clean build, which removes it, starts with none)
# What renders the sidebar besides the book: their versions are in the digest.
RENDERERS = ("sphinx", "docutils", "pydata-sphinx-theme", "sphinx-book-theme", "beautifulsoup4", "jupyter-book")


def navigation_digest(app) -> str:
    """What the pages' navigation is made of: each document's toctree entries, title (its
    nodes), sections, section numbers and toctree depth, the root document's toctrees; and what
    renders it: the settings Sphinx rebuilds a page for, the versions of the packages and of
    the extensions, and this tool's code."""
    from sphinx import addnodes
    from sphinx.builders.html import BuildInfo

    # (Python, the renderers' versions and the tool's code, as every record of a step's inputs takes them.)
    env, sha = app.env, digest_of_inputs(RENDERERS, tool_code())

    def add(*parts) -> None:
        for part in parts:
            sha.update(str(part).encode() + b"\0")

    add(app.builder.name)
    settings = BuildInfo(app.config, app.builder.tags, frozenset({"html", "env"}))
    add(settings.config_hash, settings.tags_hash)
    # (The extensions, which may render a link or a list their own way.)
    add(sorted((name, str(extension.version)) for name, extension in app.extensions.items()))
    for doc in sorted(env.found_docs):
        add(doc, env.titles[doc].pformat() if doc in env.titles else "",
            env.tocs[doc].pformat() if doc in env.tocs else "",
            env.metadata.get(doc, {}).get("tocdepth", 0), env.toctree_includes.get(doc, []),
            sorted(env.toc_secnumbers.get(doc, {}).items()), doc in env.glob_toctrees, doc in env.numbered_toctrees)
    if app.config.root_doc in env.found_docs:
        for toctree in env.get_doctree(app.config.root_doc).findall(addnodes.toctree):
            add(toctree.pformat())
    return sha.hexdigest()


def pages_to_write_again(app, env) -> list[str]:
    now, before = navigation_digest(app), getattr(env, NAVIGATION, None)
    setattr(env, NAVIGATION, now)
    return sorted(env.found_docs) if before is not None and before != now else []


def kept_sidebars(app) -> None:
    """At builder-inited: the theme's per-page handler that gives templates
    ``generate_toctree_html`` (pydata-sphinx-theme's add_toctree_functions) is wrapped so that
    the sidebar it makes is kept (with_kept_sidebar). Nothing is wrapped when the theme has no
    such handler: the sidebar is then made as the theme makes it."""
    if app.builder.name != "html":
        return
    try:
        from pydata_sphinx_theme import toctree as theme_toctree
    except ImportError:
        return
    listeners = app.events.listeners["html-page-context"]
    for index, listener in enumerate(listeners):
        if listener.handler is theme_toctree.add_toctree_functions:
            listeners[index] = listener._replace(handler=functools.partial(with_kept_sidebar, listener.handler))
            return


def with_kept_sidebar(add_toctree_functions, app, pagename, templatename, context, doctree) -> None:
    add_toctree_functions(app, pagename, templatename, context, doctree)
    made = context.get("generate_toctree_html")
    navigation = getattr(app.env, NAVIGATION, None)
    if made is None or navigation is None:
        return
    folder = Path(app.doctreedir) / KEPT / navigation

    def generate_toctree_html(kind: str, *args, **kwargs):
        if kind != "sidebar":  # (the navbar's, and the "raw" soup: as the theme makes them)
            return made(kind, *args, **kwargs)
        call = hashlib.sha256(repr((pagename, kind, args, sorted(kwargs.items()))).encode()).hexdigest()
        kept = folder / f"{call}.html"
        try:
            return Markup(kept.read_text(encoding="utf-8"))
        except OSError:
            pass
        html = str(made(kind, *args, **kwargs))  # (what the template prints of the theme's soup)
        kept.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(kept, html)
        return Markup(html)

    context["generate_toctree_html"] = generate_toctree_html


def forget_other_navigations(app, exception) -> None:
    """The sidebars of any navigation but this build's go: they are never asked for again."""
    navigation = getattr(app.env, NAVIGATION, None)
    folder = Path(app.doctreedir) / KEPT
    if exception is not None or navigation is None or not folder.is_dir():
        return
    for other in folder.iterdir():
        if other.name != navigation:
            shutil.rmtree(other, ignore_errors=True)


def setup(app) -> None:
    app.connect("env-get-updated", pages_to_write_again)
    app.connect("builder-inited", kept_sidebars)
    app.connect("build-finished", forget_other_navigations)
