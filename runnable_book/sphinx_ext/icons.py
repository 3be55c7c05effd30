"""Sphinx extension: the theme's icons at a few KB instead of 1.8 MB.

pydata-sphinx-theme draws icons two ways: ``<i class="fa-solid fa-bars">`` elements, which
its fontawesome.js (1.49 MB, the whole Font Awesome set as SVG+JS) replaces with SVGs,
and CSS glyphs (admonition icons, chevrons, external-link marks) from the Font Awesome web
fonts it ships (solid 156 KB, brands 118 KB, regular 25 KB, as woff2). Its stylesheet also
maps every ``fa-*`` class to a glyph of those fonts, so the fonts alone draw both kinds.

Our layout template (runnable_book/sphinx_ext/templates/layout.html) no longer loads fontawesome.js, and once
the pages are written this rewrites the three woff2 fonts in ``_static`` to hold only the
glyphs the site can show: those the theme's stylesheet uses in ``--pst-icon-*`` variables,
and those of every ``fa-*`` class written in a page (or inserted by the theme's scripts).
Same icons, same look, a few KB. A class without a glyph in the theme's stylesheet is a
modifier (``fa-lg``) and needs none.
"""

from __future__ import annotations

import re
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTFont

from runnable_book.common.files import kept_per_file

WEBFONTS = Path("_static") / "vendor" / "fontawesome" / "webfonts"
THEME_CSS = Path("_static") / "styles" / "pydata-sphinx-theme.css"
FONTS = ["fa-solid-900.woff2", "fa-regular-400.woff2", "fa-brands-400.woff2"]
ICON_CLASS = re.compile(r"\bfa-[a-z0-9-]+")
# (ICON_CLASS's leading \b keeps Python's regex engine from jumping to each "fa-" by its
# literal prefix: a scan of a 90 KB page took 3 ms that way, 0.2 ms by str.find below.)
ICON_PREFIX, ICON_NAME, WORD_CHARACTER = "fa-", re.compile(r"fa-[a-z0-9-]+"), re.compile(r"\w")
# `.fa-github:before{content:"\f09b"}`, possibly several selectors for one glyph.
GLYPH_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:before,?)+)\{content:"\\([0-9a-f]+)"\}')
# Written as the character itself or as a CSS escape.
THEME_GLYPH = re.compile(r'--pst-icon-[a-z-]+:"(\\[0-9a-f]+|[^"\\])"')
# The close button of the theme's announcement and version banners, added by its script.
INSERTED_BY_THEME_SCRIPTS = {"fa-xmark"}
MARK = "subset-for-this-site"  # in the font's name table: an already subset font is left alone


def glyphs_of_classes(theme_css: str) -> dict[str, int]:
    """Font Awesome class -> code point, as the theme's stylesheet maps them."""
    glyphs = {}
    for selectors, code in GLYPH_RULE.findall(theme_css):
        for name in re.findall(r"\.(fa-[a-z0-9-]+):before", selectors):
            glyphs[name] = int(code, 16)
    return glyphs


def icon_classes(page: Path) -> list[str]:
    return icon_classes_in(page.read_text(encoding="utf-8"))


def icon_classes_in(text: str) -> list[str]:
    """ICON_CLASS.findall(text), sorted and each once: every "fa-" after a non-word character
    (or at the start), each match searched from where the one before it ended, as findall does."""
    found, at = set(), text.find(ICON_PREFIX)
    while at != -1:
        match = ICON_NAME.match(text, at) if at == 0 or not WORD_CHARACTER.match(text, at - 1) else None
        if match:
            found.add(match.group())
        at = match.end() if match else at + 1
        at = text.find(ICON_PREFIX, at)
    return sorted(found)


def code_points_used(outdir: Path) -> set[int]:
    theme_css = (outdir / THEME_CSS).read_text(encoding="utf-8")
    by_class = glyphs_of_classes(theme_css)
    classes = set(INSERTED_BY_THEME_SCRIPTS)
    pages = {page.relative_to(outdir).as_posix(): page for page in sorted(outdir.rglob("*.html"))}
    # (Each page's classes kept beside the site, never in it, by the page's identity: a build
    # writes a few pages of a large book, and reading every page again grew with the book.)
    kept = outdir.parent / "cache" / f"icon-classes-of-{outdir.name}.json"
    for found in kept_per_file(pages, kept, icon_classes).values():
        classes.update(found)
    used = {by_class[name] for name in classes if name in by_class}
    used.update(int(glyph[1:], 16) if glyph.startswith("\\") else ord(glyph)
                for glyph in THEME_GLYPH.findall(theme_css))
    return used


def is_subset(font_file: Path) -> bool:
    return MARK in (TTFont(font_file)["name"].getDebugName(3) or "")


def subset_font(font_file: Path, code_points: set[int]) -> None:
    # The theme font's own modified date is kept (fontTools would stamp the time of the
    # build), so two builds of the same pages write the same bytes.
    font = TTFont(font_file, recalcTimestamp=False)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=code_points & set(font.getBestCmap()))
    subsetter.subset(font)
    name = font["name"]
    name.setName(f"{name.getDebugName(3) or font_file.stem};{MARK}", 3, 3, 1, 0x409)
    temporary = font_file.with_suffix(".tmp")
    font.save(temporary)
    temporary.replace(font_file)


def subset_icon_fonts(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    code_points = code_points_used(outdir)
    for name in FONTS:
        font_file = outdir / WEBFONTS / name
        # Each build copies the theme's full fonts back (they differ from our subsets),
        # so the subset always follows the pages of this build.
        if font_file.is_file() and not is_subset(font_file):
            subset_font(font_file, code_points)


def setup(app):
    app.connect("build-finished", subset_icon_fonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
