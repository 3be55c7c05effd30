"""Which PDF `make pdf` prints and what it is called, read from the book's pages
(runnable_book/pipeline/printed_pdfs.py): nothing in the tool names chapter 15.

This book (one chapter) and the fixture book (two, tests/fixture_book/) are read as they are;
the rules for pages without a number are tried on tables of contents made up here.
"""

import re

import pytest

from runnable_book.pipeline import printed_pdfs
from runnable_book.pipeline.pages import page_title, pages_in_toc_order, read_page
from runnable_book.pipeline.printed_pdfs import plan
from runnable_book.repository import ROOT

FIXTURE_BOOK = ROOT / "tests" / "fixture_book"


def titled(book) -> list[tuple[str, str]]:
    """(document, title) of a book's pages in its table of contents' order."""
    import yaml

    toc = yaml.safe_load((book / "_toc.yml").read_text())
    entries = [toc["root"], *(chapter["file"] for chapter in toc["chapters"])]
    return [(entry, page_title(read_page(book / f"{entry}.md"))) for entry in entries]


def test_this_books_pdfs_are_named_and_titled_by_its_pages():
    """This book has one chapter today (one PDF, "Chapter 15 · <its opening's words>"); the guide's
    "add a chapter" recipe gives it two (the book's, then each chapter's), and this test runs there too."""
    pages = pages_in_toc_order()
    titles = [page_title(read_page(page)) for page in pages]
    numbers = list(dict.fromkeys(re.match(r"\d+", title)[0] for title in titles if re.match(r"\d+[. ]", title)))
    pdfs = printed_pdfs.printed_pdfs()
    whole = pdfs[0]
    assert whole.whole_book and whole == printed_pdfs.whole_book_pdf()
    assert whole.documents == tuple(page.relative_to(ROOT).with_suffix("").as_posix() for page in pages)
    if len(numbers) == 1:
        number = numbers[0]
        words = next(title for title in titles if re.fullmatch(rf"{number} \S.*", title)).split(" ", 1)[1]  # "Advanced ..."
        assert [(pdf.name, pdf.title) for pdf in pdfs] == [(f"chapter{number}.pdf", f"Chapter {number} · {words}")]
    else:
        assert [pdf.name for pdf in pdfs] == ["book.pdf", *(f"chapter{number}.pdf" for number in numbers)]
        assert not any(pdf.whole_book for pdf in pdfs[1:])


def test_a_book_of_two_chapters_prints_the_whole_book_under_its_title_and_plans_each_chapter():
    pages = titled(FIXTURE_BOOK)
    book, *chapters = plan(pages, "A fixture book")
    assert (book.name, book.title, book.chapter) == ("book.pdf", "A fixture book", None) and book.whole_book
    assert not any(chapter.whole_book for chapter in chapters)
    assert book.documents == tuple(document for document, _ in pages)
    # (its chapters have no opening page: each is titled by its number alone)
    assert [(c.name, c.title, c.chapter) for c in chapters] == [("chapter1.pdf", "Chapter 1", "1"),
                                                                ("chapter2.pdf", "Chapter 2", "2")]
    # the book's own front (its index, before any chapter) is in the book's PDF only
    assert chapters[0].documents == ("book/01_01_counting", "book/01_02_counting_used")
    assert chapters[1].documents == ("book/02_01_reading", "book/02_02_exercises")



@pytest.mark.parametrize("pages, expected", [
    # an unnumbered page is in the chapter before it: chapter 16's references
    ([("i", "A book"), ("a", "15 Retrieval"), ("b", "15.1 Search"), ("c", "16.1 Tokens"), ("r", "References")],
     [("book.pdf", "A book", ("i", "a", "b", "c", "r")), ("chapter15.pdf", "Chapter 15 · Retrieval", ("a", "b")),
      ("chapter16.pdf", "Chapter 16", ("c", "r"))]),
    # one chapter without an opening page: titled by the book
    ([("a", "3.1 Search"), ("r", "References")], [("chapter3.pdf", "Chapter 3 · A book", ("a", "r"))]),
    # no numbered page: the book alone
    ([("i", "A book"), ("r", "References")], [("book.pdf", "A book", ("i", "r"))]),
])
def test_the_pdfs_follow_the_pages_numbers(pages, expected):
    assert [(pdf.name, pdf.title, pdf.documents) for pdf in plan(pages, "A book")] == expected
    # Every name a plan gives is known as a printed PDF's (the site drops one no plan gives now).
    assert all(printed_pdfs.named_as_printed(pdf.name) for pdf in plan(pages, "A book"))


@pytest.mark.parametrize("name", ["chapter.pdf", "chapter15a.pdf", "notes.pdf", "chapter15.pdf.part", "xbook.pdf"])
def test_a_pdf_no_plan_names_is_not_taken_for_a_printed_one(name):
    """An author's own PDF in the site (an html_extra_path file) is never removed as stale."""
    assert not printed_pdfs.named_as_printed(name)


@pytest.mark.parametrize("bookmark, heading, same", [
    ("15 Advanced and AgenticRetrieval", "15 Advanced and Agentic Retrieval", True),  # (the break's space lost)
    ("Exercise 1Exercise 1", "Exercise 1", True),
    ("16.2 One-shot RAG and the question itcannot answercannot answer",
     "16.2 One-shot RAG and the question it cannot answer", True),  # (its last line twice)
    ("15.2 One-shot RAG and the question it15.2 One-shot RAG and the question itcannot answer",
     "15.2 One-shot RAG and the question it cannot answer", True),  # (its first line twice: a book of 200 pages)
    ("15.3 The agentic retrieval loop", "15.2 One-shot RAG and the question it cannot answer", False),
    ("15.2 One-shot RAG15.2 One-shot RAG and the question", "15.2 One-shot RAG and the question it cannot answer",
     False),  # (cut short)
    ("Solutions15.2 One-shot RAG and the question it cannot answer",
     "15.2 One-shot RAG and the question it cannot answer", False),  # (another heading's text before it)
])
def test_a_bookmark_is_its_heading_as_chromium_lays_it_out_and_nothing_else(bookmark, heading, same):
    """print_finish.laid_out_as: what the printer accepts as a heading's bookmark before titling it exactly."""
    from runnable_book.pipeline.print_finish import laid_out_as

    assert laid_out_as(bookmark, heading) is same
