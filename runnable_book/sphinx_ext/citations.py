"""Sphinx extension: cite as the chapter does, "(Liu et al. 2024)", and list the references
the way the chapter lists them, author–date:

    Asai, Akari, Zeqiu Wu, …, and Hannaneh Hajishirzi. 2024. “Self-RAG: ….” International
    Conference on Learning Representations.

1. sphinxcontrib-bibtex's author-year *referencing* style writes "[Liu et al., 2024]"; this
   registers a variant with round brackets and no comma, selected in _config.yml by
   ``bibtex_reference_style: author_year_round``.
2. pybtex's formatting styles (``plain`` and kin) write "Akari Asai, …. Title. In Venue. 2024."
   behind a numbered label; this registers ``author_year`` (runnable_book/pipeline/author_date.py,
   which the reader's notebooks use too), selected by ``bibtex_default_style``. Its
   labels, which nothing cites by, are hidden by runnable_book/sphinx_ext/static/runnable-book.css.
3. An unknown key says which keys it may have meant. sphinxcontrib-bibtex warns
   'could not find bibtex key "asai2025"' (at the citing page and line) and stops there;
   a logging filter on its loggers completes that warning, in place, with the closest keys
   of the .bib files (difflib): '... ; closest in book/references.bib: asai2024selfrag'.
   The warning keeps its type, so it still fails the build (warnings are errors).
"""

import difflib
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from sphinxcontrib.bibtex import directives, domain, foot_roles
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

from runnable_book.pipeline.author_date import register_author_date_style


def round_brackets() -> BracketStyle:
    return BracketStyle(left="(", right=")")


@dataclass
class RoundAuthorYearStyle(AuthorYearReferenceStyle):
    bracket_parenthetical: BracketStyle = field(default_factory=round_brackets)
    bracket_textual: BracketStyle = field(default_factory=round_brackets)
    author_year_sep: str = " "


# The modules of sphinxcontrib-bibtex that warn about an unknown key (cite roles, footcite
# roles, the bibliography directive's listed keys), all with this message.
WARNS_UNKNOWN_KEYS = [domain, foot_roles, directives]
UNKNOWN_KEY = re.compile(r'could not find bibtex key "(?P<key>[^"]*)"')


def closest_keys(key: str, keys: list[str]) -> list[str]:
    return difflib.get_close_matches(key, keys, n=3)


class NameClosestKeys(logging.Filter):
    """Completes sphinxcontrib-bibtex's unknown-key warning with the keys it may have meant."""

    def __init__(self, app):
        super().__init__()
        self.app = app

    def filter(self, record: logging.LogRecord) -> bool:
        unknown = UNKNOWN_KEY.fullmatch(str(record.msg))
        if unknown and not record.args:
            bibdata = self.app.env.get_domain("cite").bibdata
            files = ", ".join(as_in_config(Path(bib), Path(self.app.srcdir)) for bib in bibdata.bibfiles)
            closest = closest_keys(unknown["key"], list(bibdata.data.entries.keys()))
            record.msg += (f"; closest in {files}: {', '.join(closest)}" if closest
                           else f"; no key in {files} is close")
        return True


def as_in_config(bib: Path, srcdir: Path) -> str:
    """A .bib file as bibtex_bibfiles names it: relative to the book."""
    return str(bib.relative_to(srcdir)) if bib.is_relative_to(srcdir) else str(bib)


def unknown_key_loggers():
    return [module.logger.logger for module in WARNS_UNKNOWN_KEYS]  # (behind Sphinx's adapters)


def name_closest_keys(app) -> None:
    stop_naming_closest_keys(app, None)  # one filter per logger, however many builds a process runs
    for logger in unknown_key_loggers():
        logger.addFilter(NameClosestKeys(app))


def stop_naming_closest_keys(app, exception) -> None:
    for logger in unknown_key_loggers():
        for old in [f for f in logger.filters if isinstance(f, NameClosestKeys)]:
            logger.removeFilter(old)


def setup(app):
    register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round", RoundAuthorYearStyle)
    register_author_date_style()
    app.connect("builder-inited", name_closest_keys)
    app.connect("build-finished", stop_naming_closest_keys)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
