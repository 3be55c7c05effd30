"""runnable_book/common/files.py: a file is written whole or not at all, and what it gave is
kept while it is the same file."""

import os

import pytest

from runnable_book.common.files import write_atomically


def test_text_and_bytes_are_written_readable_and_nothing_else_is_left(tmp_path):
    write_atomically(tmp_path / "new" / "page.txt", "é\n")
    write_atomically(tmp_path / "new" / "data.bin", b"\x00\x01")
    assert (tmp_path / "new" / "page.txt").read_text(encoding="utf-8") == "é\n"
    assert (tmp_path / "new" / "data.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["data.bin", "page.txt"]
    umask = os.umask(0)
    os.umask(umask)
    assert (tmp_path / "new" / "page.txt").stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "page.txt"
    target.write_text("old")
    with pytest.raises(TypeError):
        write_atomically(target, 42)  # neither text nor bytes: fails while writing
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["page.txt"]


def test_a_files_identity_changes_when_it_is_written_again_even_with_the_same_bytes(tmp_path):
    from runnable_book.common.files import file_identity

    path = tmp_path / "page.ipynb"
    write_atomically(path, "{}")
    first = file_identity(path)
    assert file_identity(path) == first
    write_atomically(path, "{}")
    assert file_identity(path) != first


def test_what_a_file_gave_is_kept_while_it_is_the_same_file_and_computed_again_once_rewritten(tmp_path):
    from runnable_book.common.files import kept_per_file

    pages = {name: tmp_path / name for name in ("a.html", "b.html")}
    for name, path in pages.items():
        path.write_text(name)
    kept, read = tmp_path / "cache" / "kept.json", []

    def length(path):
        read.append(path.name)
        return len(path.read_text())

    assert kept_per_file(pages, kept, length) == {"a.html": 6, "b.html": 6}
    assert kept_per_file(pages, kept, length) == {"a.html": 6, "b.html": 6} and read == ["a.html", "b.html"]
    write_atomically(pages["b.html"], "rewritten")
    assert kept_per_file(pages, kept, length) == {"a.html": 6, "b.html": 9} and read[2:] == ["b.html"]
    kept.write_text("{not json")  # a damaged record: everything is read again
    assert kept_per_file(pages, kept, length) == {"a.html": 6, "b.html": 9} and read[3:] == ["a.html", "b.html"]
    # What another kind of computation kept is not taken for this one's.
    assert kept_per_file(pages, kept, lambda path: path.name, kind="names") == {"a.html": "a.html", "b.html": "b.html"}
