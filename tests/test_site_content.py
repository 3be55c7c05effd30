"""Every line of the chapter, as delivered, can be found in the built HTML, but for the
departures its author accepted.

`tests/chapter15_as_delivered.txt` is the chapter's plain text (its markup was lost in
delivery). Code, printed outputs and diagram sources must appear verbatim inside a
<pre>; prose must appear in the page text once markup is stripped, allowing only for
the markup we restored (figure labels, note titles, list numbers, citation commas).
References must appear in the bibliography with their title, year and first author.

The same check runs early on the reader's notebooks (tests/test_fidelity.py, `make accept
--check`); here it is held against the HTML the reader gets, with the same record of
accepted departures (tests/book_as_accepted/departures_from_delivered.txt, `make accept`).
"""

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from tools.pipeline.accept import DEPARTURES, recorded_departures

pytestmark = pytest.mark.site

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html" / "book"
CHAPTER = (ROOT / "tests" / "chapter15_as_delivered.txt").read_text()
REFERENCES_START = CHAPTER.index("\nAsai, Akari,")


def normalized(text: str) -> str:
    text = text.replace("\u00a0", " ").replace("’", "'").replace("“", '"').replace("”", '"')
    return re.sub(r"\s+", " ", text).strip()


def restored_markup(line: str) -> str:
    """Undo, on the chapter's side, the markup the plain text lost and the book restored."""
    line = re.sub(r"^Figure\s15\.(\d): ", r"Figure 15.\1 ", line)  # caption label
    line = re.sub(r"^Note(?=\S)", "", line)  # "NoteIn the interview" was a boxed note's title
    line = re.sub(r"^\d\. ", "", line)  # numbered-list markers are drawn by <ol>
    line = re.sub(r"\((\w+) et al\., (\d{4})\)", r"(\1 et al. \2)", line)  # one citation style
    return line


@pytest.fixture(scope="module")
def book(site):
    pre_lines, prose = set(), []
    for page in sorted(HTML.glob("*.html")):
        article = BeautifulSoup(page.read_text(), "html.parser").select_one("article")
        for pre in article.select("pre"):
            pre_lines.update(line.rstrip() for line in pre.get_text().splitlines())
        prose.append(normalized(article.get_text("")))
    return pre_lines, " ".join(prose)


def chapter_lines():
    return [line for line in CHAPTER[:REFERENCES_START].splitlines() if line.strip()]


def test_every_line_of_the_chapter_is_in_the_book(book):
    pre_lines, prose = book
    accepted = set(recorded_departures())
    missing = [line for line in chapter_lines() if line not in accepted
               and line.rstrip() not in pre_lines and normalized(restored_markup(line)) not in prose]
    assert not missing, (f"{len(missing)} lines of the chapter are not in the HTML, nor accepted departures "
                         f"({DEPARTURES}; `make accept` records an intended change):\n" + "\n".join(missing[:20]))


def test_every_reference_is_in_the_bibliography(book):
    references = normalized(BeautifulSoup((HTML / "references.html").read_text(), "html.parser").get_text(" "))
    entries = [e for e in CHAPTER[REFERENCES_START:].split("\n") if e.strip()]
    assert len(entries) == 8
    for entry in entries:
        surname, year = entry.split(",")[0], re.search(r"\b(20\d\d)\.", entry).group(1)
        title = normalized(re.search(r"“(.+?)”", entry).group(1)).rstrip(".")
        assert title in references and surname in references and year in references, entry
