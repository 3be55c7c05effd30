"""What a stamp put in when the build ends reads (runnable_book/sphinx_ext/stamped_pages.py): every
page when its value is new, the pages Sphinx wrote when every other page has it already, and
every page again after a build that stopped before its end."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from runnable_book.sphinx_ext import stamped_pages


class Builder:
    def __init__(self, outdir: Path):
        self.outdir = outdir

    def get_outfilename(self, pagename: str) -> str:
        return str(self.outdir / f"{pagename}.html")


def build(tmp_path: Path, written: list[str], value, finished: bool = True) -> list[str]:
    """One build's stamp: the pages it reads, by name."""
    site = tmp_path / "html"
    app = SimpleNamespace(doctreedir=str(tmp_path / "doctrees"), builder=Builder(site))
    stamped_pages.start(app)
    for pagename in written:
        stamped_pages.note_written(app, pagename, "page.html", {}, None)
    pages = stamped_pages.pages_to_stamp(app, "version", value, lambda: sorted(site.rglob("*.html")))
    if finished:
        stamped_pages.finish(app, None)
    return [page.relative_to(site).with_suffix("").as_posix() for page in pages]


def test_a_stamp_reads_every_page_only_when_its_value_is_new(tmp_path):
    (tmp_path / "doctrees").mkdir()
    for name in ("a", "b", "c/d"):
        (tmp_path / "html" / f"{name}.html").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "html" / f"{name}.html").write_text("page")
    assert build(tmp_path, ["a", "b", "c/d"], {"bundle": "v1"}) == ["a", "b", "c/d"]  # (no record: a first build)
    assert build(tmp_path, ["b"], {"bundle": "v1"}) == ["b"]  # (the others have v1 already)
    assert build(tmp_path, ["b"], {"bundle": "v2"}) == ["a", "b", "c/d"]  # (a new value: every page)
    assert build(tmp_path, ["gone"], {"bundle": "v2"}) == []  # (a page written, then removed: not read)
    # A build that stops before its end leaves no record: the one after it reads every page,
    # which the stopped build's written pages may need (stamped or not before it stopped).
    assert build(tmp_path, ["a"], {"bundle": "v2"}, finished=False) == ["a"]
    assert build(tmp_path, ["c/d"], {"bundle": "v2"}) == ["a", "b", "c/d"]
    assert build(tmp_path, ["c/d"], {"bundle": "v2"}) == ["c/d"]
