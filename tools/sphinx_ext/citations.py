"""Sphinx extension: cite as the chapter does, "(Liu et al. 2024)".

sphinxcontrib-bibtex's author-year style writes "[Liu et al., 2024]"; this registers a
variant with round brackets and no comma, selected in _config.yml by
``bibtex_reference_style: author_year_round``.
"""

from dataclasses import dataclass, field

from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle


def round_brackets() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@dataclass
class RoundAuthorYearStyle(AuthorYearReferenceStyle):
    bracket_parenthetical: BracketStyle = field(default_factory=round_brackets)
    bracket_textual: BracketStyle = field(default_factory=round_brackets)
    author_year_sep: str = " "


def setup(app):
    register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round", RoundAuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
