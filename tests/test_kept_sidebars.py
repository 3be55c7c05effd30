"""The theme's sidebar, kept between builds by the navigation's digest
(runnable_book/sphinx_ext/navigation.py): the book's build keeps the sidebars of this navigation
only, and every page of the site shows one of them as it is kept. (That a kept sidebar gives the
page a fresh one would, and that a change of the navigation reaches every page:
tests/test_incremental_build.py.)"""

from __future__ import annotations

import pytest

from runnable_book.repository import ROOT
from runnable_book.sphinx_ext.navigation import KEPT

pytestmark = pytest.mark.site


def test_every_page_shows_a_sidebar_kept_under_the_one_navigation_of_this_build(site):
    from runnable_book.browser.local_site import find_pages

    navigations = sorted((ROOT / "_build" / ".doctrees" / KEPT).iterdir())
    assert len(navigations) == 1, f"the sidebars of more than this build's navigation are kept: {navigations}"
    kept = [sidebar.read_text(encoding="utf-8") for sidebar in navigations[0].glob("*.html")]
    with_sidebar = [page for page in find_pages(site) if 'class="bd-links bd-docs-nav"' in (site / page).read_text()]
    assert len(with_sidebar) >= 10 and len(kept) >= len(with_sidebar)
    for page in with_sidebar:
        text = (site / page).read_text(encoding="utf-8")
        assert any(sidebar in text for sidebar in kept), f"{page}: its sidebar is none of those kept"
