"""The book's Sphinx extension (ours): one ``setup()`` that registers every part.

_config.yml names this package once (``sphinx.extra_extensions``); each module here is one
concern, with its own ``setup(app)``, registered in the order below. The order matters
where two parts hook the same event at the same priority (they then run in this order),
and is the order the parts were listed in before they became one package.

========================  ==================================================================
module                    what it does, and why
========================  ==================================================================
``page_outputs``          pages show the outputs stored in their .ipynb; Sphinx never executes
``citations``             the "(Liu et al. 2024)" citation style the chapter uses
``clean_pages``           no duplicate scripts; no thebe assets (the book runs cells itself)
``runner``                "Run in your browser": the inline loader, the runner's files
``exercises``             the exercises (runnable_book/pipeline/book_shape.py) as data every page reads
``pdf``                   the singlehtml page `make pdf` prints; the header's "Chapter PDF"
``edition``               the edition in every footer and on the PDF's title page; launch links
                          at its commit; the published notebooks install its chapter_lib
``diagrams``              mermaid diagrams as inline SVG drawn at build time (no mermaid.js)
``icons``                 the theme's icon fonts subset to the glyphs used (no fontawesome.js)
``valid_markup``          hidden-cell prompts and bibliography markup that pass vnu and axe
``page_head``             a meta description per page; a valid root index.html
``page_assets``           one stylesheet per page; scripts after the first paint (Lighthouse)
``obsolete_pages``        a page taken out of _toc.yml leaves no file behind in the site
``navigation``            every page written again when the navigation changed; sidebars kept
``offline``               one service worker: the book offline after one visit; COOP/COEP
``look``                  the stylesheet, a script and the theme templates the tool overrides
``stamped_pages``         what the stamps at the build's end read: the pages written, or all
========================  ==================================================================

The theme workarounds that need templates, not Python, are in templates/ (look.py serves them;
runnable_book/sphinx_ext/README.md says which does what).
"""

from __future__ import annotations

from runnable_book.sphinx_ext import (
    citations, clean_pages, diagrams, edition_on_pages, exercises, icons, look, navigation, obsolete_pages, offline,
    page_assets, page_head, page_outputs, pdf, runner, stamped_pages, valid_markup,
)

PARTS = [page_outputs, citations, clean_pages, runner, exercises, pdf, edition_on_pages, diagrams, icons, valid_markup, page_head,
         page_assets, obsolete_pages, navigation, offline, look, stamped_pages]


def setup(app):
    for part in PARTS:
        part.setup(app)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
