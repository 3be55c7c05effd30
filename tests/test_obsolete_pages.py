"""runnable_book/sphinx_ext/obsolete_pages.py: after a build, the site holds exactly the pages in _toc.yml.

On a scratch book (tests/scratch_book.py) built with the extension alone.
"""

from pathlib import Path

import pytest

from scratch_book import build, scratch_book, set_toc


def files_named(build_dir: Path, page: str) -> list[str]:
    """Every file the build holds for `page`, in the site and in MyST-NB's output folder."""
    return sorted(path.relative_to(build_dir).as_posix() for path in build_dir.rglob(f"{page}.*")
                  if ".doctrees" not in path.parts)  # (Sphinx's cache, not the site)


def site_pages(html: Path) -> set[str]:
    return {path.relative_to(html).with_suffix("").as_posix() for path in html.rglob("*.html")
            if not path.relative_to(html).parts[0].startswith("_")} - {"genindex", "search"}


@pytest.mark.sphinx
@pytest.mark.parametrize("options", [(), ("--all",)], ids=["incremental", "fresh environment"])
def test_a_page_removed_from_the_toc_leaves_no_file_behind(tmp_path, options):
    book = tmp_path / "book"
    scratch_book(book, ["kept", "removed"], ["obsolete_pages"])
    build(book)
    build_dir = book / "_build"
    assert files_named(build_dir, "removed") == [
        "html/_sources/removed.ipynb", "html/_sources/removed.md", "html/removed.html",
        "jupyter_execute/removed.ipynb"], "the scratch book no longer writes what this test expects"
    kept_before = files_named(build_dir, "kept")

    set_toc(book, ["kept"])
    build(book, *options)

    assert files_named(build_dir, "removed") == [], "a page taken out of _toc.yml left files in the build"
    assert files_named(build_dir, "kept") == kept_before, "a page still in the book lost a file"
    assert site_pages(build_dir / "html") == {"index", "kept"}


def test_the_book_registers_it():
    from runnable_book.sphinx_ext import PARTS, obsolete_pages

    assert obsolete_pages in PARTS
