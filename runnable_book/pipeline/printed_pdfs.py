"""Which PDFs `make pdf` prints, and what each is called, read from the book's pages.

A page's chapter is the number its title starts with (chapters.py). So:

* a book of **one chapter** prints one PDF, ``chapter15.pdf``, of every page (its opening, its
  sections and the unnumbered pages beside them, the references), titled
  "Chapter 15 · <the chapter's title>";
* a book of **several**, or of none numbered, prints ``book.pdf``, every page, under the book's
  title (_config.yml).

and, in a book of several, one PDF per chapter, ``chapter16.pdf``: the chapter's numbered pages
and the unnumbered pages that follow them in the table of contents (a chapter's references).
Pages before the first chapter (the book's own front) are in the book's PDF only.

A chapter's title is the words of its opening page ("15 Advanced and Agentic Retrieval"); with
no opening page it is the book's title in a book of one chapter, else "Chapter 16" alone.

The printer (print_pdf.py) prints each from the one-page (singlehtml) book, a chapter's with the
other pages taken out, and titles it and its footer so; the HTML's download menu
(runnable_book/sphinx_ext/pdf.py) links a page's chapter's PDF and the book's.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from runnable_book.pipeline import chapters
from runnable_book.pipeline.pages import pages_in_toc_order, title_of
from runnable_book.repository import ROOT

BOOK_PDF = "book.pdf"
# Where `make pdf` writes them (artefact_steps.py), under the book's root; the site copies them
# from there (runnable_book/sphinx_ext/pdf.py).
FOLDER = "_build/pdf"


@dataclass(frozen=True)
class PrintedPdf:
    name: str  # its file's name in the PDF folder: "chapter15.pdf", "book.pdf"
    title: str  # its document Title and its footer: "Chapter 15 · Advanced and Agentic Retrieval"
    chapter: str | None  # "15"; None for the whole book's in a book of several
    documents: tuple[str, ...]  # its pages as Sphinx names them ("book/15_02_one_shot_rag"), in order
    whole_book: bool  # every page (a book of one chapter: its chapter's PDF is the book's)


def document_name(md: Path, root: Path = ROOT) -> str:
    """A page as Sphinx names it: its path in the book without the suffix."""
    return md.relative_to(root).with_suffix("").as_posix()


def book_title(root: Path = ROOT) -> str:
    return _title_in((root / "_config.yml").read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=8)
def _title_in(config: str) -> str:
    return str(yaml.safe_load(config).get("title") or "").strip()


def plan(titled_pages: list[tuple[str, str]], title_of_book: str) -> list[PrintedPdf]:
    """The PDFs of a book whose pages, in reading order, are these (document name, title)."""
    chapter_of: dict[str, str | None] = {}
    openings: dict[str, str] = {}
    current = None
    for document, title in titled_pages:
        numbered = chapters.chapter_of(title)
        current = numbered or current  # (an unnumbered page: the chapter before it, if any)
        chapter_of[document] = current
        opening = chapters.chapter_title(title)
        if opening:
            openings.setdefault(opening[0], opening[1])
    order = list(dict.fromkeys(c for c in chapter_of.values() if c is not None))
    every_page = tuple(document for document, _ in titled_pages)
    if len(order) == 1:
        only = order[0]
        words = openings.get(only) or title_of_book
        return [PrintedPdf(pdf_file_name(only), f"Chapter {only}" + (f" · {words}" if words else ""),
                           only, every_page, whole_book=True)]
    book = PrintedPdf(pdf_file_name(None), title_of_book or "The book", None, every_page, whole_book=True)
    return [book] + [
        PrintedPdf(pdf_file_name(number),
                   f"Chapter {number}" + (f" · {openings[number]}" if number in openings else ""),
                   number, tuple(d for d in every_page if chapter_of[d] == number), whole_book=False)
        for number in order
    ]


def pdf_file_name(chapter: str | None) -> str:
    """A chapter's PDF, ``chapter15.pdf`` (named as its library module); None: the book's."""
    return f"{chapters.module_stem(chapter)}.pdf" if chapter is not None else BOOK_PDF


def named_as_printed(name: str) -> bool:
    """Whether a file of this name is one that plan() may name, in this book or after a change
    to it (a chapter renumbered or removed): a PDF left by an earlier plan is known so."""
    numbered = re.fullmatch(r"\D*(\d+)\.pdf", name)  # (its number, given back to the rule)
    return name == pdf_file_name(None) or (numbered is not None and name == pdf_file_name(numbered[1]))


def printed_pdfs() -> list[PrintedPdf]:
    """This book's PDFs, the first the one that holds every page."""
    return plan([(document_name(md), title_of(md)) for md in pages_in_toc_order()], book_title())


def whole_book_pdf() -> PrintedPdf:
    """The PDF `make pdf` prints: every page of the book."""
    return printed_pdfs()[0]

