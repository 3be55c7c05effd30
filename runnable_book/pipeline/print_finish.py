"""The PDF as Chromium wrote it, finished (runnable_book/pipeline/print_pdf.py prints it): dated by
the commit it was built from, each bookmark titled exactly as its heading, its document info
written; and what the printer reads back from a first print: the page each section starts on
and the page of each linked element.
"""

from __future__ import annotations

import calendar
import io
import os
import re
import subprocess
import time

from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject, TextStringObject
import yaml

from runnable_book.repository import ROOT

# The PDF's document info: the book's author and subject are in _config.yml (its title, the
# chapter's or the book's: printed_pdfs.py).
CONFIG = ROOT / "_config.yml"


class PrintError(Exception):
    """The chapter could not be printed as it should be; says what and where."""


def outline_pages(pdf: bytes) -> list[tuple[str, int]]:
    """(bookmark title, 1-based page) for every bookmark of the PDF, at any depth, in order."""
    reader = PdfReader(io.BytesIO(pdf))
    pages: list[tuple[str, int]] = []

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                pages.append((item.title, reader.get_destination_page_number(item) + 1))

    walk(reader.outline)
    return pages


def outline_items(writer: PdfWriter) -> list:
    items = []

    def walk(node):
        child = node.get("/First")
        while child is not None:
            item = child.get_object()
            items.append(item)
            walk(item)
            child = item.get("/Next")

    if "/Outlines" in writer._root_object:
        walk(writer._root_object["/Outlines"].get_object())
    return items


def document_info(created: str, title: str) -> dict[str, str]:
    """The PDF's Title, Author, Subject and dates: its title (printed_pdfs.py), the book's author
    and one-line subject (_config.yml), and the date of the commit it was built from (pdf_date)."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    subject = config.get("sphinx", {}).get("config", {}).get("chapter_pdf_subject") or config["title"]
    return {"/Title": title, "/Author": config["author"],
            "/Subject": subject, "/CreationDate": created, "/ModDate": created}


def source_date_epoch() -> int:
    """SOURCE_DATE_EPOCH when set (reproducible-builds.org), else the last commit's time, so
    two builds of one commit date their PDFs alike; the clock only outside a git checkout."""
    if os.environ.get("SOURCE_DATE_EPOCH", "").strip():
        return int(os.environ["SOURCE_DATE_EPOCH"])
    try:
        return int(subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, check=True,
                                  capture_output=True, text=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError, ValueError):
        return int(time.time())


def pdf_date(epoch: int) -> str:
    """A PDF date in UTC, in the form Chromium writes ("D:20261201094053+00'00'")."""
    return time.strftime("D:%Y%m%d%H%M%S+00'00'", time.gmtime(epoch))


def epoch_dated(reader: PdfReader) -> int:
    """The epoch a printed PDF was dated with (pdf_date's inverse): SOURCE_DATE_EPOCH for a
    print of the same build dated alike (the print-again test, `make bench-reprints`)."""
    return calendar.timegm(time.strptime(str(reader.metadata["/CreationDate"])[2:16], "%Y%m%d%H%M%S"))


# Chromium dates its PDF with the clock, twice (/CreationDate, /ModDate): the only bytes that
# differ between two prints of one page. Skia writes "D:YYYYMMDDHHMMSS+HH'MM'", as pdf_date.
CHROMIUM_DATE = re.compile(rb"D:\d{14}[+-]\d\d'\d\d'")


def dated(pdf: bytes, created: str) -> bytes:
    """Chromium's PDF with its own dates replaced, byte for byte, by the given one (same
    length, so the cross-reference offsets stay right)."""
    replacement = created.encode("ascii")
    return CHROMIUM_DATE.sub(lambda match: replacement if len(match[0]) == len(replacement) else match[0], pdf)


def finished(pdf: bytes, headings: list[str], info: dict[str, str]) -> bytes:
    """The PDF with each bookmark titled exactly as its heading, and its document info.

    Chromium writes neither a title nor an author: the Info dictionary is written here,
    in the same incremental update as the bookmarks' titles.

    Chromium titles a bookmark with its heading's text as laid out, so a heading wrapped
    onto two lines loses the space at the break ("Agentic" + "Retrieval") and some
    repeat their text ("Exercise 1Exercise 1"), their first line ("…question it15.2 …") or
    their last. The bookmarks are the printed headings, in order; each is checked to be its
    heading, whitespace and repeats aside (laid_out_as), and then given the heading's text,
    in an incremental update (the printed pages are untouched).
    """
    writer = PdfWriter(io.BytesIO(pdf), incremental=True)
    items = outline_items(writer)
    titles = [str(item["/Title"]) for item in items]
    if len(items) != len(headings) or not all(laid_out_as(title, heading) for title, heading in zip(titles, headings)):
        raise PrintError(f"the PDF's bookmarks are not the printed headings:\n  bookmarks {titles}\n  headings  {headings}")
    for item, heading in zip(items, headings):
        item[NameObject("/Title")] = TextStringObject(heading)
    writer.add_metadata(info)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def laid_out_as(title: str, heading: str) -> bool:
    """Whether Chromium's bookmark title is this heading as laid out: whitespace aside, the
    heading, after a repeat of its start (a wrapped heading's first line, written twice: seen
    in a book of 200 pages) and before anything repeated of it."""
    title, heading = squeezed(title), squeezed(heading)
    return any(title[start:].startswith(heading) for start in range(len(heading) + 1)
               if heading.startswith(title[:start]))


def section_start_pages(pdf: bytes, sections: list[str]) -> list[int]:
    """The page each section starts on, from the bookmark Chromium made of its heading.

    Chromium titles a bookmark with the heading's text as laid out: a heading wrapped
    onto two lines loses the space at the break ("Agentic" + "Retrieval"), and a wrapped
    one can repeat its first line. So the sections are matched in order, each to the
    next bookmark that starts, whitespace aside, with the first half of its title.
    """
    bookmarks = outline_pages(pdf)
    pages, position = [], 0
    for title in sections:
        head = squeezed(title)[: max(8, len(squeezed(title)) // 2)]
        match = next((i for i in range(position, len(bookmarks)) if squeezed(bookmarks[i][0]).startswith(head)), None)
        if match is None:
            raise PrintError(f"the PDF has no bookmark for {title!r}; bookmarks: {[n for n, _ in bookmarks]}")
        pages.append(bookmarks[match][1])
        position = match + 1
    return pages


def destination_pages(pdf: bytes, ids: list[str]) -> dict[str, int]:
    """The page of each element id, from the named destination Chromium writes for an id
    that a link points to."""
    reader = PdfReader(io.BytesIO(pdf))
    destinations = reader.named_destinations
    missing = [i for i in ids if f"/{i}" not in destinations]
    if missing:
        raise PrintError(f"the PDF has no destination for {missing}: is each linked to?")
    return {i: reader.get_destination_page_number(destinations[f"/{i}"]) + 1 for i in ids}
