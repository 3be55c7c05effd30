"""Whether a PDF would print as it is: a record, kept beside the build's other digests, of what
each PDF was printed from (runnable_book/pipeline/print_pdf.py, ``--records``).

A book of many chapters prints a PDF per chapter and one of the whole book; a prose edit in one
chapter changes that chapter's page and the book's, not the others'. A PDF is printed again
unless every input of its print is as it was when the PDF on disk was printed:

* the page it is printed from, as Chromium gets it (a chapter's: cut from the one-page book,
  print_pdf.mjs ``chapterPage``), its title and its pages;
* every other file of the one-page build (the theme's and the book's styles, scripts, fonts and
  images: what the page may load), by name and bytes;
* the tool's code (its Python and its page scripts), Python's version and the versions of
  Playwright and pypdf; Chromium's version; the date the PDF is dated with (the last commit's);
  the book's _config.yml (the PDF's author and subject);
* and the PDF itself: its bytes are those the record says were written.

A print is deterministic (tests/test_pdf.py prints again and compares bytes), so a PDF left as
it is equals the one a clean build would print. The record is written only after its PDF is.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from runnable_book.common.files import write_atomically
from runnable_book.pipeline.synced_pages import digest_of_inputs
from runnable_book.repository import ROOT, tool_code

# The packages whose code takes part in a print (besides Chromium, whose version is asked).
PACKAGES = ("playwright", "pypdf")


def stat_signature(site_root: Path) -> tuple:
    """Each file of the folder's name, size and time written: what tells that site_digest
    would be read again."""
    return tuple((str(p), s.st_size, s.st_mtime_ns) for p in sorted(Path(site_root).rglob("*"))
                 if p.is_file() and (s := p.stat()))


def site_digest(site_root: Path, page: str) -> str:
    """Every file of the one-page build but its page, by name and bytes."""
    sha = hashlib.sha256()
    for path in sorted(p for p in Path(site_root).rglob("*") if p.is_file()):
        relative = path.relative_to(site_root).as_posix()
        if relative != page:
            sha.update(relative.encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()


@functools.cache
def tool_digest() -> str:
    """The tool's code, Python's and the packages' versions, the book's _config.yml: read once
    for all the PDFs of a run."""
    return digest_of_inputs(PACKAGES, [*tool_code((".py", ".mjs")), ROOT / "_config.yml"]).hexdigest()


def inputs_digest(page_html: bytes, site: str, title: str, documents: tuple[str, ...],
                  browser_version: str, epoch: int) -> str:
    """The digest of what one PDF's print is made from (this module's docstring)."""
    sha = hashlib.sha256(tool_digest().encode())
    sha.update(f"{site}\0{title}\0{' '.join(documents)}\0chromium {browser_version}\0{epoch}\0".encode())
    sha.update(page_html)
    return sha.hexdigest()


def record_of(records: Path, pdf: Path) -> Path:
    return records / f"{pdf.name}.sha256"


def unchanged(records: Path, pdf: Path, inputs: str) -> bool:
    """Whether ``pdf`` is on disk as it was printed from these inputs."""
    record = record_of(records, pdf)
    if not (record.is_file() and pdf.is_file()):
        return False
    return record.read_text().split() == [inputs, hashlib.sha256(pdf.read_bytes()).hexdigest()]


def keep(records: Path, pdf: Path, inputs: str, written: bytes) -> None:
    """Record that ``written`` (the PDF's bytes, on disk now) was printed from these inputs."""
    write_atomically(record_of(records, pdf), f"{inputs}\n{hashlib.sha256(written).hexdigest()}\n")


def describe(pdf: Path) -> str:
    return (f"{pdf}: unchanged, not printed again (its page, the build's other files, "
            "the tool, Chromium and the date are as when it was printed)")
