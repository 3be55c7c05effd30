"""The reference list's style, author–date as the chapter prints it (a pybtex formatting style):

    Asai, Akari, Zeqiu Wu, …, and Hannaneh Hajishirzi. 2024. “Self-RAG: ….” International
    Conference on Learning Representations.

First author surname first, the year after the authors, the title in quotes, then the venue
and the entry's links (pybtex's own). Sorted by author, year and title (pybtex's plain
sorting). Registered as ``author_year`` for the HTML build (runnable_book/sphinx_ext/citations.py,
selected by ``bibtex_default_style`` in _config.yml) and for the reader's notebooks'
reference cells (runnable_book/pipeline/myst_to_notebook.py). Plain pybtex, no Sphinx, so both can
import it.
"""

from pybtex.plugin import register_plugin
from pybtex.richtext import Tag, Text
from pybtex.style import FormattedEntry
from pybtex.style.formatting.plain import Style as PlainStyle

# More authors than this are listed as the first three and "et al." (as the chapter does).
MOST_AUTHORS_LISTED = 7
AUTHORS_BEFORE_ET_AL = 3


def plain(latex: str) -> str:
    """A BibTeX field's text, its braces and LaTeX markup resolved."""
    return str(Text.from_latex(latex))


def author_names(entry) -> str:
    """ "Asai, Akari, Zeqiu Wu, and Hannaneh Hajishirzi": the first surname first."""
    people = entry.persons.get("author", [])
    listed = [p for p in people if str(p) != "others"]
    et_al = len(listed) < len(people) or len(listed) > MOST_AUTHORS_LISTED
    if len(listed) > MOST_AUTHORS_LISTED:
        listed = listed[:AUTHORS_BEFORE_ET_AL]

    def given(person):
        return plain(" ".join(person.first_names + person.middle_names))

    def family(person):
        return plain(" ".join(person.prelast_names + person.last_names + person.lineage_names))

    names = [f"{family(listed[0])}, {given(listed[0])}".strip(", ")] + [
        f"{given(p)} {family(p)}".strip() for p in listed[1:]]
    if et_al:
        return ", ".join(names) + (", et al." if len(names) > 1 else " et al.")
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + ", and " + names[-1]


class AuthorDateStyle(PlainStyle):
    """pybtex's plain style (sorting, links), each entry written author–date."""

    def format_entry(self, label, entry, bib_data=None):
        fields = entry.fields
        authors = author_names(entry)
        parts = [Text(authors if authors.endswith(".") else authors + "."), Text(f"{fields.get('year', 'n.d.')}.")]
        if "title" in fields:
            parts.append(Text("“", Text.from_latex(fields["title"]), ".”"))
        venue = fields.get("journal") or fields.get("booktitle") or fields.get("howpublished")
        if venue:
            parts.append(Text(Tag("em", Text.from_latex(venue)), "."))
        links = self.format_web_refs(entry).format_data({"entry": entry, "style": self, "bib_data": bib_data})
        if links:
            parts.append(links)
        return FormattedEntry(entry.key, Text(" ").join(parts), label)


def register_author_date_style() -> None:
    """Make ``author_year`` a pybtex formatting style (again: harmless)."""
    register_plugin("pybtex.style.formatting", "author_year", AuthorDateStyle)
