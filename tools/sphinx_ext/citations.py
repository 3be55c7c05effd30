"""Sphinx extension: cite as the chapter does, "(Liu et al. 2024)", and list the references
the way the chapter lists them, author–date:

    Asai, Akari, Zeqiu Wu, …, and Hannaneh Hajishirzi. 2024. “Self-RAG: ….” International
    Conference on Learning Representations.

1. sphinxcontrib-bibtex's author-year *referencing* style writes "[Liu et al., 2024]"; this
   registers a variant with round brackets and no comma, selected in _config.yml by
   ``bibtex_reference_style: author_year_round``.
2. pybtex's formatting styles (``plain`` and kin) write "Akari Asai, …. Title. In Venue. 2024."
   behind a numbered label; this registers ``author_year`` (tools/pipeline/author_date.py,
   which the reader's notebooks use too), selected by ``bibtex_default_style``. Its
   labels, which nothing cites by, are hidden by book/_static/chapter.css.
"""

from dataclasses import dataclass, field

from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

from tools.pipeline.author_date import register_author_date_style


def round_brackets() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@dataclass
class RoundAuthorYearStyle(AuthorYearReferenceStyle):
    bracket_parenthetical: BracketStyle = field(default_factory=round_brackets)
    bracket_textual: BracketStyle = field(default_factory=round_brackets)
    author_year_sep: str = " "


def setup(app):
    register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round", RoundAuthorYearStyle)
    register_author_date_style()
    return {"parallel_read_safe": True, "parallel_write_safe": True}
