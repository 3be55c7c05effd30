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


def test_a_page_stamped_with_new_sizes_is_not_read_again_for_the_files_it_names(monkeypatch):
    """The click's sizes name no file (stamped_pages.CLICK_SIZES): the offline list reads what a
    page names with them left out, kept by what it read, so a page stamped again with new sizes
    (an edit of a saved function changes the wheel's) is not read again; a page whose own text
    changed is."""
    import uuid

    from runnable_book.sphinx_ext import offline

    read = []
    named_in = offline._named_in
    monkeypatch.setattr(offline, "_named_in", lambda relative, text: read.append(relative) or named_in(relative, text))
    page = (f'<!-- {uuid.uuid4()} --><link href="../_static/a.css?v=1"><img src="fig.png">'
            '<script>const DOWNLOAD_BYTES = Number("123"); const FIGURE_BYTES = Number("45");</script>').encode()
    first = offline.named_in("book/x.html", page)
    restamped = page.replace(b'Number("123")', b'Number("4567")').replace(b'Number("45")', b'Number("8")')
    assert offline.named_in("book/x.html", restamped) == first == ["_static/a.css", "book/fig.png"]
    assert read == ["book/x.html"], "read once: the restamped page came from the cache"
    assert offline.named_in("book/x.html", page.replace(b"fig.png", b"other.png")) == ["_static/a.css", "book/other.png"]
    assert read == ["book/x.html", "book/x.html"]
