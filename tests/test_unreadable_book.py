"""A book that cannot be read is refused in its own words, before anything else runs.

A misspelt `_toc.yml` entry, a `_toc.yml` that is not YAML or a chapter without its `file:`:
`python -m runnable_book.pipeline.pages` (the first step of `make check` and `make test`) names the
file and the line and stops, so neither eslint nor tsc nor pytest runs on a book no tool can
read; `make accept` and `accept --check` say the same in one message, never a traceback.
(runnable_book/pipeline/pages.py, runnable_book/pipeline/accept.py; the Makefile's `check` and `test`.)
"""

from __future__ import annotations

import re

import pytest

from runnable_book.pipeline import accept, pages
from runnable_book.repository import ROOT


@pytest.fixture
def misspelt_toc(tmp_path, monkeypatch):
    """_toc.yml with its second chapter's entry misspelt (one letter dropped); returns (its path,
    the entry's line, the missing page)."""
    text = pages.TOC.read_text()
    entries = [entry for _, entry in pages.toc_entries()]
    entry = entries[2]
    misspelt = entry[:-1]
    toc = tmp_path / "_toc.yml"
    toc.write_text(text.replace(f"file: {entry}\n", f"file: {misspelt}\n"))
    monkeypatch.setattr(pages, "TOC", toc)
    line = toc.read_text().splitlines().index(next(l for l in toc.read_text().splitlines() if l.endswith(f"file: {misspelt}"))) + 1
    return toc, line, ROOT / f"{misspelt}.md"


def test_a_misspelt_entry_is_named_by_its_file_and_line_and_nothing_runs(misspelt_toc, capsys):
    toc, line, missing = misspelt_toc
    assert pages.main() == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {toc}, line {line}: its entry `{missing.relative_to(ROOT).with_suffix('')}` names "
                          f"{missing.relative_to(ROOT)}, which does not exist."), err
    assert "Nothing was checked" in err and "Traceback" not in err


def test_make_accept_and_its_check_refuse_an_unreadable_book_in_one_message(misspelt_toc, capsys):
    toc, line, _ = misspelt_toc
    for argv, verb in (([], "recorded"), (["--check"], "checked")):
        assert accept.main(argv) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"error: {toc}, line {line}: its entry "), err
        assert f"Nothing was {verb}" in err and "Traceback" not in err


@pytest.mark.parametrize("text, line, says", [
    ("root: book/index\nchapters:\n  - file: book/15_01_corpus_and_search_stub\n   - file: book/x\n", 4, "not YAML"),
    ("root: book/index\nchapters:\n  - fiel: book/15_01_corpus_and_search_stub\n", 3,
     "this entry of `chapters:` names no page"),
    ("chapters:\n  - file: book/15_01_corpus_and_search_stub\n", None, "it names no `root:` page"),
])
def test_a_toc_that_does_not_read_is_named_with_its_line(tmp_path, monkeypatch, text, line, says):
    toc = tmp_path / "_toc.yml"
    toc.write_text(text)
    monkeypatch.setattr(pages, "TOC", toc)
    with pytest.raises(pages.BookError) as raised:
        pages.pages_in_toc_order()
    message = str(raised.value)
    assert message.startswith(f"{toc}, line {line}: " if line else f"{toc}: "), message
    assert says in message


def test_an_unclosed_fence_is_named_before_any_check_runs(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n```{note}\nNever closed.\n")
    toc = tmp_path / "_toc.yml"
    toc.write_text(f"root: {page.with_suffix('')}\n")
    monkeypatch.setattr(pages, "TOC", toc)
    assert pages.unreadable() == [f"{page}, line 3: the ```{{note}} opened here is never closed (it runs to the end "
                                  "of the page). Close it with a line ``` where it should end."]


def test_the_book_reads_as_it_is():
    assert pages.unreadable() == []


def test_make_check_and_make_test_ask_first_whether_the_book_reads():
    """Before eslint and tsc (most of a minute), and before pytest's collection (a traceback per
    test module that reads the pages): the Makefile's first command of each."""
    makefile = (ROOT / "Makefile").read_text()
    for target in ("check", "test"):
        recipe = re.search(rf"^{target}:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, re.M).group(1).splitlines()
        assert "-m runnable_book.pipeline.pages" in recipe[0], f"`make {target}` starts with {recipe[0]!r}"
