"""The built book, opened in headless Chromium, has no problems a reader would hit.

Needs Debian's Chromium (runnable_book/browser/ensure_debian_package.sh) and a built book in
_build/html. Outside CI a missing build skips these tests; under CI it fails.
The planted-fault tests prove that the checker really catches each kind of
problem, on a copy of the build with one fault planted into one page.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from markers import needs

from runnable_book.browser.local_site import find_pages
from runnable_book.checks.site_check import BrowserChecker, all_problems, write_report

pytestmark = pytest.mark.site

REPO_ROOT = Path(__file__).resolve().parent.parent
OUT = REPO_ROOT / "_build" / "browser"

MERMAID_BLOCK = re.compile(
    r'(<(pre|div)\b[^>]*\bclass="(?:[^"]*\s)?mermaid(?:\s[^"]*)?"[^>]*>)(.*?)(</\2>)', re.DOTALL
)
INVALID_MERMAID = "flowchart TD\n    A[unclosed --> B"
# sphinxcontrib-mermaid imports mermaid in an inline module; a theme could also load it by URL.
LOADS_MERMAID = re.compile(r'import mermaid|<script[^>]*src="[^"]*mermaid')
LOCAL_IMG_SRC = re.compile(r'<img\b[^>]*\bsrc="(?!https?:|//|data:)([^"]+)"')


@pytest.fixture(scope="module")
@needs("browser")
def checker():
    """One Chromium for the whole module: launching it is the slow part."""
    with BrowserChecker() as browser_checker:
        yield browser_checker


@pytest.fixture
def site_copy(site, tmp_path) -> Path:
    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    return copy


def test_every_page_is_clean(checker, site):
    started = time.monotonic()
    reports = checker.check_site(site)  # (no screenshots: `python -m runnable_book.checks.site_check _build/html` takes them)
    write_report(reports, OUT, time.monotonic() - started)
    assert reports, f"no pages found under {site}"
    problems = all_problems(reports)
    assert not problems, f"{len(problems)} problem(s) in the built book:\n" + "\n".join(problems)


def test_search_finds_aurora(checker, site):
    links = checker.search(site, "Aurora")
    book_links = [link for link in links if urlsplit(link).path.lstrip("/").startswith("book/")]
    assert book_links, f"search for 'Aurora' listed no book page; results: {links}"


# --------------------------------------------------------------------------
# Planted faults
# --------------------------------------------------------------------------


def a_book_page(root: Path) -> str:
    pages = find_pages(root)
    book_pages = [page for page in pages if page.startswith("book/")]
    return (book_pages or pages)[0]


def plant(root: Path, page: str, old: str, new: str) -> None:
    """Replace the first `old` in page with `new`."""
    path = root / page
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{page} has no {old!r} to plant a fault at"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def problems_of(checker, root: Path, page: str) -> list[str]:
    return all_problems(checker.check_site(root, pages=[page]))


def assert_reported(problems: list[str], page: str, *words: str) -> None:
    matching = [p for p in problems if p.startswith(f"{page}:") and all(w in p for w in words)]
    assert matching, f"expected a problem on {page} mentioning {words}; got:\n" + "\n".join(problems)


def test_external_script_is_reported(checker, site_copy):
    page = a_book_page(site_copy)
    url = "https://cdn.jsdelivr.net/npm/x.js"
    plant(site_copy, page, "</head>", f'<script src="{url}"></script></head>')
    assert_reported(problems_of(checker, site_copy, page), page, "external request", url)


def test_an_error_only_in_dark_mode_is_reported(checker, site_copy):
    """Every page is checked in dark mode too (the theme switched as the reader's toggle
    switches it), screenshots or not: a script that fails only there is reported."""
    page = a_book_page(site_copy)
    planted = "planted: fails in dark mode"
    plant(site_copy, page, "</head>", "<script>new MutationObserver(() => {"
          f" if (document.documentElement.dataset.theme === 'dark') console.error({planted!r}); }})"
          ".observe(document.documentElement, {attributes: true, attributeFilter: ['data-theme']});</script></head>")
    assert_reported(problems_of(checker, site_copy, page), page, planted)


def test_broken_mermaid_is_reported(checker, site_copy, monkeypatch):
    monkeypatch.setattr(checker, "mermaid_timeout_ms", 1_000)  # nothing will draw it: no need to wait long
    page = next((p for p in find_pages(site_copy) if MERMAID_BLOCK.search((site_copy / p).read_text())), None)
    if page is not None:
        path = site_copy / page
        path.write_text(MERMAID_BLOCK.sub(rf"\1{INVALID_MERMAID}\4", path.read_text(), count=1))
    else:
        # No diagram yet: plant one into a page that loads mermaid anyway.
        page = next((p for p in find_pages(site_copy) if LOADS_MERMAID.search((site_copy / p).read_text())), None)
        if page is None:
            pytest.skip("no page of the build loads mermaid, so there is no mermaid to break")
        plant(site_copy, page, "</main>", f'<pre class="mermaid">{INVALID_MERMAID}</pre></main>')
    assert_reported(problems_of(checker, site_copy, page), page, "mermaid block #1")


def test_broken_image_is_reported(checker, site_copy):
    pages_with_images = [
        (page, match.group(1))
        for page in find_pages(site_copy)
        for match in [LOCAL_IMG_SRC.search((site_copy / page).read_text())]
        if match and (site_copy / page).parent.joinpath(match.group(1)).is_file()
    ]
    if pages_with_images:
        page, src = pages_with_images[0]
        (site_copy / page).parent.joinpath(src).unlink()
    else:
        # No image in the build yet: reference one that does not exist.
        page, src = a_book_page(site_copy), "planted-missing.png"
        plant(site_copy, page, "</main>", f'<img src="{src}" alt="planted"></main>')
    assert_reported(problems_of(checker, site_copy, page), page, "broken image", src)


def test_dead_anchor_is_reported(checker, site_copy):
    page = a_book_page(site_copy)
    plant(site_copy, page, "</main>", '<a href="#no-such-anchor">planted</a></main>')
    assert_reported(problems_of(checker, site_copy, page), page, "dead anchor", "#no-such-anchor")


def test_missing_favicon_is_reported(checker, site_copy):
    """Without an icon link a browser asks the server for /favicon.ico, which is a 404 here."""
    page = a_book_page(site_copy)
    path = site_copy / page
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r'<link rel="icon"[^>]*>', "", text), encoding="utf-8")
    assert_reported(problems_of(checker, site_copy, page), page, "favicon: HTTP 404", "/favicon.ico")
