"""Every line of the chapter, as delivered, can be found in the built HTML, but for the
departures its author accepted.

`tests/chapter15_as_delivered.txt` is the chapter's plain text (its markup was lost in
delivery). Code, printed outputs and diagram sources must appear verbatim inside a
<pre>; prose must appear in the page text once markup is stripped, allowing only for
the markup we restored (figure labels, note titles, list numbers, citation commas).
References must appear in the bibliography with their title, year and first author.

The same check, by the same rules (runnable_book/pipeline/accept.py: which lines, how text is
normalized, which markup was restored), runs early on the reader's notebooks
(tests/test_fidelity.py, `make accept --check`); here it is held against the HTML the
reader gets, with the same record of accepted departures
(tests/book_as_accepted/departures_from_delivered.txt, `make accept`).
"""

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from runnable_book.pipeline.accept import (
    DEPARTURES, delivered_references, lines_to_hold, missing_lines, normalized, reference_marks,
)

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html" / "book"


@pytest.fixture(scope="module")
def book(site):
    """The HTML's lines inside a <pre> (verbatim) and the text of its articles (prose)."""
    pre_lines, prose = [], []
    for page in sorted(HTML.glob("*.html")):
        article = BeautifulSoup(page.read_text(), "html.parser").select_one("article")
        for pre in article.select("pre"):
            pre_lines += pre.get_text().splitlines()
        prose.append(article.get_text(""))
    return pre_lines, " ".join(prose)


def test_every_line_of_the_chapter_is_in_the_book(book):
    missing = missing_lines(lines_to_hold(), *book)
    assert not missing, (f"{len(missing)} lines of the chapter are not in the HTML, nor accepted departures "
                         f"({DEPARTURES}; `make accept` records an intended change):\n" + "\n".join(missing[:20]))


def test_every_reference_is_in_the_bibliography(book):
    references = normalized(BeautifulSoup((HTML / "references.html").read_text(), "html.parser").get_text(" "))
    entries = delivered_references()
    assert len(entries) == 8
    for entry in entries:
        assert all(mark in references for mark in reference_marks(entry)), entry
