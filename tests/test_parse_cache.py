"""A parse kept between processes (runnable_book/pipeline/parse_cache.py) is found only for the same
text and the same parser; a failed parse is not kept; an unreadable one is parsed again."""

from __future__ import annotations

import os

import pytest

from runnable_book.pipeline import pages, parse_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(parse_cache, "FOLDER", tmp_path / "parsed")
    monkeypatch.setattr(parse_cache, "_FINGERPRINTS", {})
    parser = tmp_path / "parser.py"
    parser.write_text("# the parser, version 1\n")
    return parser


def counted(result):
    calls = []

    def parse():
        calls.append(1)
        return result
    return parse, calls


def test_the_same_text_and_parser_is_parsed_once(cache):
    parse, calls = counted({"cells": [1, 2]})
    assert parse_cache.kept_parse("page", "text", cache, parse) == {"cells": [1, 2]}
    assert parse_cache.kept_parse("page", "text", cache, parse) == {"cells": [1, 2]}
    assert len(calls) == 1
    parse_cache.kept_parse("page", "text, edited", cache, parse)
    parse_cache.kept_parse("other kind", "text", cache, parse)
    assert len(calls) == 3


def test_an_edited_parser_parses_again(cache):
    parse, calls = counted("parsed")
    parse_cache.kept_parse("page", "text", cache, parse)
    cache.write_text("# the parser, version 2\n")
    parse_cache._FINGERPRINTS.clear()  # (a new process reads the parser's source again)
    parse_cache.kept_parse("page", "text", cache, parse)
    assert len(calls) == 2


def test_a_failed_parse_is_not_kept_and_an_unreadable_one_is_parsed_again(cache):
    def failing():
        raise pages.BookError("book/x.md, line 3: never closed")
    for _ in range(2):
        with pytest.raises(pages.BookError):
            parse_cache.kept_parse("page", "bad", cache, failing)
    assert not parse_cache.FOLDER.exists() or not any(parse_cache.FOLDER.iterdir())
    parse, calls = counted("parsed")
    parse_cache.kept_parse("page", "good", cache, parse)
    (kept,) = parse_cache.FOLDER.glob("page-*.pickle")
    kept.write_bytes(b"cut sh")
    assert parse_cache.kept_parse("page", "good", cache, parse) == "parsed"
    assert len(calls) == 2


def test_it_keeps_about_its_limit_the_newest_made(cache, monkeypatch):
    """Past KEPT and an eighth, down to KEPT: the parses made last are the ones kept."""
    monkeypatch.setattr(parse_cache, "KEPT", 16)
    counts, seen = [], set()
    for number in range(40):
        parse_cache.kept_parse("page", f"text {number}", cache, lambda: number)
        for new in set(parse_cache.FOLDER.iterdir()) - seen:  # (its age its own: a file's time is coarse)
            os.utime(new, ns=(number * 10**9, number * 10**9))
        seen = set(parse_cache.FOLDER.iterdir())
        counts.append(len(seen))
    assert max(counts) == 16 + 2 and 16 in counts[18:]
    parse, calls = counted("parsed again")
    assert parse_cache.kept_parse("page", "text 39", cache, parse) == 39  # (the newest: kept)
    assert parse_cache.kept_parse("page", "text 0", cache, parse) == "parsed again"  # (the oldest: gone)
    assert len(calls) == 1


def test_a_page_read_in_a_new_process_is_the_page_parsed(tmp_path, monkeypatch):
    """read_page from the kept parse equals a fresh parse (jupytext's notebook, its metadata too;
    not the cells' ids, which jupytext draws at random on each parse)."""
    import jupytext

    monkeypatch.setattr(parse_cache, "FOLDER", tmp_path / "parsed")
    page = next(md for md in pages.notebook_pages())
    fresh = jupytext.reads(page.read_text(), fmt="md:myst")
    pages._parsed_page.cache_clear()
    first = pages.read_page(page)
    pages._parsed_page.cache_clear()  # (as a new process: only the kept parse remains)
    assert any((tmp_path / "parsed").iterdir())
    again = pages.read_page(page)
    assert again == first
    for parsed in (again, fresh):
        for cell in parsed.cells:
            cell.pop("id", None)
    assert again == fresh
