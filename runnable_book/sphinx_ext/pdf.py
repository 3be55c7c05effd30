"""Sphinx extension: the chapter's PDF, on both sides of the print.

1. The singlehtml build (what runnable_book/pipeline/print_pdf.py prints) has its page at the root.
Sphinx's singlehtml builder writes the whole book to ``<root_doc>.html``, here
``book/index.html``, but computes every asset and image URL as if that page were at the
top (``_static/...``, ``_images/...``), so in ``book/`` nothing would load. We move the
page to ``index.html``, where its URLs are right (and where sphinx-external-toc would
otherwise write a redirect to the broken page), and its links to itself with it. The theme's layout loads
``searchindex.js`` on every page, which singlehtml does not write (a printed page has
no search): we write an empty one rather than leave a 404 in the page we print.

2. No MathJax unless the chapter has math. Jupyter Book tells the singlehtml builder to
add MathJax to every page (it cannot see which inlined page has an equation), and
MathJax comes from a CDN: the printed page would request another host. The chapter has
no math today; we add MathJax to the single page only when some page has an equation
(and then runnable_book/pipeline/print_pdf.py refuses the CDN request until MathJax is served locally).

3. The HTML book offers its PDFs in its header. `make pdf` prints them
(runnable_book/pipeline/print_pdf.py), named for the book (runnable_book/pipeline/printed_pdfs.py):
``chapter15.pdf`` for a book of one chapter 15; for a book of several, ``book.pdf`` and one per
chapter (the ``chapter_pdf`` option names one file of the book's own instead). When they exist
as the HTML is built, the HTML build copies them next to index.html and a page's download menu
(sphinx-book-theme's header dropdown: .ipynb, .md, and .pdf, which prints the page from
the browser and which we relabel "Print this page") gets an entry for its chapter's, "Chapter
PDF", and for the whole book's, "Book PDF", when that is another. When they do not exist, the
entries are left out (and earlier copies are removed), so `make html` alone never writes a dead link. `make test` builds the PDF before
the HTML, so the tested and published site has both; `make pdf` after `make html` rebuilds
an existing site that does not publish this PDF yet (the Makefile's ``pdf`` target), so
either order ends with a site that links the PDF it serves.

Why a hook, not a template: the theme builds the dropdown's entries in Python
(``context["header_buttons"]``, filled by its own html-page-context handler at
priority 501), so we append to that list just after it runs.

Whether the PDF exists is stored as a config value that changes the HTML output, so
Sphinx rewrites every page when the PDF appears or disappears between two builds.
"""

from __future__ import annotations

import os
import shutil
import weakref
from dataclasses import dataclass
from pathlib import Path

# Builders whose pages carry the theme's header (singlehtml is what the PDF is printed
# from: it must not link to itself).
LINKING_BUILDERS = {"html", "dirhtml"}
BUTTON_LABEL = "download-chapter-pdf-button"

BOOK_BUTTON_LABEL = "download-book-pdf-button"


@dataclass(frozen=True)
class LinkedPdf:
    file: Path
    chapter: bool  # a chapter's ("Chapter PDF"), or the whole book's of several chapters ("Book PDF")
    documents: tuple[str, ...] | None  # the pages whose menu links it (None: every page)


# Each build's plan, made once as it starts (note_whether_the_pdf_exists): every page's menu
# asks for it, and a plan reads every page's title.
_PLANS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def planned_pdfs(confdir, config) -> list[LinkedPdf]:
    """The PDFs the site may link: the ``chapter_pdf`` option's file, on every page, or those
    `make pdf` writes (runnable_book/pipeline/printed_pdfs.py): in a book of one chapter its PDF,
    in a book of several the whole book's on every page and each chapter's on its own pages."""
    if config.chapter_pdf:
        return [LinkedPdf(Path(confdir, config.chapter_pdf), True, None)]
    from runnable_book.pipeline.printed_pdfs import FOLDER, printed_pdfs

    return [LinkedPdf(Path(confdir, FOLDER, pdf.name), pdf.chapter is not None,
                      None if pdf.whole_book else pdf.documents) for pdf in printed_pdfs()]


def note_whether_the_pdf_exists(app, config) -> None:
    _PLANS[app] = planned = planned_pdfs(app.confdir, config)
    config.chapter_pdf_available = sorted(pdf.file.name for pdf in planned if pdf.file.is_file())


def linked_pdfs(app) -> list[LinkedPdf]:
    """The PDFs this build links and publishes: those planned that exist."""
    if app.builder.name not in LINKING_BUILDERS:
        return []
    planned = _PLANS.get(app) or planned_pdfs(app.confdir, app.config)
    return [pdf for pdf in planned if pdf.file.name in app.config.chapter_pdf_available]


def add_pdf_download_button(app, pagename, templatename, context, doctree) -> None:
    offered = [pdf for pdf in linked_pdfs(app) if pdf.documents is None or pagename in pdf.documents]
    if not offered:
        return
    groups = [b for b in context.get("header_buttons", []) if b.get("label") == "download-buttons"]
    if not groups:  # pages without a source (search, genindex) have no download menu
        return
    buttons = groups[0]["buttons"]
    # The theme's own ".pdf" entry prints the current page from the browser; beside the
    # chapter's PDF, say so, or readers cannot tell the two apart.
    for button in buttons:
        if button.get("label") == "download-pdf-button":
            button["text"] = "Print this page"
    # (the page's chapter's first, then the book's)
    for pdf in sorted(offered, key=lambda pdf: not pdf.chapter):
        whole = "chapter" if pdf.chapter else "book"
        buttons.append(
            {
                "type": "link",
                "url": context["pathto"](pdf.file.name, 1),
                "text": f"{whole.capitalize()} PDF",
                "tooltip": f"Download the whole {whole} as one PDF",
                "icon": "fas fa-book",
                "label": BUTTON_LABEL if pdf.chapter else BOOK_BUTTON_LABEL,
            }
        )


def copy_pdf_into_site(app, exception) -> None:
    if exception is not None or app.builder.name not in LINKING_BUILDERS:
        return
    published = linked_pdfs(app)
    # A copy an earlier build published, of a PDF since removed or renamed: no page links it now.
    from runnable_book.pipeline.printed_pdfs import named_as_printed

    names = {pdf.file.name for pdf in published}
    for earlier in Path(app.outdir).glob("*.pdf"):
        if earlier.name not in names and (named_as_printed(earlier.name)
                                          or earlier.name == Path(app.config.chapter_pdf or "-").name):
            earlier.unlink()
    for pdf in published:
        target = Path(app.outdir, pdf.file.name)
        partial = target.with_name(target.name + ".part")
        shutil.copyfile(pdf.file, partial)
        os.replace(partial, target)  # never a half-copied PDF in the site


def move_single_page_to_the_root(app, exception) -> None:
    if exception is not None or app.builder.name != "singlehtml":
        return
    written = Path(app.outdir, app.config.root_doc + app.builder.out_suffix)
    if written.parent != Path(app.outdir):
        # Sphinx writes the page's links to itself as "book/index.html#…" (a citation's, for
        # one): moved, they are "#…", or the PDF would link them to the build's own server.
        page = written.read_text(encoding="utf-8")
        own_address = f'href="{written.relative_to(app.outdir).as_posix()}#'
        Path(app.outdir, "index.html").write_text(page.replace(own_address, 'href="#'), encoding="utf-8")
        written.unlink()
    Path(app.outdir, "searchindex.js").write_text("// no search in the printed chapter\n")


def mathjax_only_for_math(app, env) -> None:
    if app.builder.name == "singlehtml":
        has_math = env.get_domain("math").has_equations()
        app.registry.html_assets_policy = "always" if has_math else "per_page"


def setup(app):
    # (empty: the file `make pdf` writes, named for the book)
    app.add_config_value("chapter_pdf", "", "env", types=[str])
    # (the names of the PDFs there are as the build starts: a page's menu links them)
    app.add_config_value("chapter_pdf_available", [], "html", types=[list])
    # Read by runnable_book/pipeline/print_pdf.py from _config.yml (the PDF's Subject); registered so
    # Sphinx knows the name.
    app.add_config_value("chapter_pdf_subject", "", "env", types=[str])
    app.connect("config-inited", note_whether_the_pdf_exists)
    app.connect("html-page-context", add_pdf_download_button, priority=502)
    app.connect("build-finished", copy_pdf_into_site)
    # After Jupyter Book's set_html_assets_policy("always"), which runs before the build.
    app.connect("env-updated", mathjax_only_for_math)
    # Before sphinx-external-toc's redirect (priority 500), which it skips when index.html exists.
    app.connect("build-finished", move_single_page_to_the_root, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
