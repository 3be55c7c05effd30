"""`make check`'s pages under nbval (runnable_book/checks/changed_pages.py): those not yet passed as they
are now, recorded by digest; a page with no code is never one of them (nbval has nothing to run)."""

from __future__ import annotations

from runnable_book.checks import changed_pages
from runnable_book.pipeline.pages import notebook_pages


def test_with_nothing_recorded_every_page_with_code_is_run_and_no_other(tmp_path, monkeypatch):
    monkeypatch.setattr(changed_pages, "RECORD", tmp_path / "nbval-passed.json")
    notebooks = [md.with_suffix(".ipynb") for md in notebook_pages()]
    with_code = [nb for nb in notebooks if changed_pages.has_code(nb)]
    assert changed_pages.unchecked() == with_code
    assert with_code  # (the book has pages with code)


def test_a_page_that_passed_is_not_run_again_until_its_digest_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(changed_pages, "RECORD", tmp_path / "nbval-passed.json")
    first, *rest = changed_pages.unchecked()
    changed_pages.record([first])
    assert changed_pages.unchecked() == rest
    digest = changed_pages.page_digest(first.with_suffix(".md"))
    monkeypatch.setattr(changed_pages, "page_digest", lambda md: digest + "-edited" if md == first.with_suffix(".md") else digest)
    assert first in changed_pages.unchecked()
