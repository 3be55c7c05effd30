"""runnable_book/common/files.py: a file is written whole or not at all."""

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
