"""Every page is written again when what every page's navigation shows has changed.

Each page carries the book's navigation: the sidebar lists every page (by title, in
_toc.yml's order) and the footer names the previous and next pages. Sphinx writes again
only the pages it re-read (and those sphinx-external-toc says have new toctrees), so after
a page is added, removed, moved or retitled, the other pages kept their old navigation: an
incremental build that differed from a clean one (tests/test_incremental_build.py found a
page written while a page existed still listing it after the page was removed).

After reading, this compares the navigation (the toctree of every document and the title and
sections of every page) with the one of the last build, kept in Sphinx's environment, and,
when they differ, returns every page for writing (Sphinx's ``env-get-updated``). Reading
stays incremental; writing every page takes a few seconds, and only on such a change.
"""

from __future__ import annotations

NAVIGATION = "book_navigation"


def navigation(env) -> tuple:
    """What the pages' navigation is made of: each document's toctree entries, title and sections."""
    return (tuple(sorted((parent, tuple(children)) for parent, children in env.toctree_includes.items())),
            tuple((doc, env.titles[doc].astext() if doc in env.titles else "",
                   env.tocs[doc].astext() if doc in env.tocs else "") for doc in sorted(env.found_docs)))


def pages_to_write_again(app, env) -> list[str]:
    now, before = navigation(env), getattr(env, NAVIGATION, None)
    setattr(env, NAVIGATION, now)
    return sorted(env.found_docs) if before is not None and before != now else []


def setup(app) -> None:
    app.connect("env-get-updated", pages_to_write_again)
