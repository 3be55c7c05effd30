"""Sphinx extension: what a page says about itself before it is read.

1. A meta description per page (search results and link previews show it): the page's
   first paragraph of prose, cut at a word near 160 characters; pages Sphinx generates
   (search, index) get a fixed one. runnable_book/sphinx_ext/templates/layout.html writes it.
2. A valid landing page. Jupyter Book (sphinx-external-toc) writes the site's root
   ``index.html`` as a bare ``<meta http-equiv="Refresh">`` line: no doctype, title or
   icon, so the HTML checker rejects it and browsers ask for ``/favicon.ico``. We write
   a complete page that redirects the same way, before sphinx-external-toc would.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from docutils import nodes

DESCRIPTION_LIMIT = 160
GENERATED_PAGES = {
    "search": "Search the pages of the book.",
    "genindex": "Index of the book's terms.",
}


def first_paragraph(doctree) -> str:
    for paragraph in doctree.findall(nodes.paragraph):
        # Prose only: not a caption, a table cell, an admonition title or a cell output.
        if isinstance(paragraph.parent, (nodes.section, nodes.document)):
            text = " ".join(paragraph.astext().split())
            if text:
                return text
    return ""


def shortened(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def add_description(app, pagename, templatename, context, doctree) -> None:
    if doctree is not None:
        text = first_paragraph(doctree) or context.get("title", "")
    else:
        text = GENERATED_PAGES.get(pagename, "")
    context["page_description"] = shortened(text or app.config.html_title or app.config.project)


def write_landing_page(app, exception) -> None:
    if exception is not None or app.builder.format != "html" or app.config.root_doc == "index":
        return
    if app.builder.name == "singlehtml":  # its one page is the root index.html (runnable_book/sphinx_ext/pdf.py)
        return
    start = app.builder.get_target_uri(app.config.root_doc)
    icon = f'<link rel="icon" href="_static/{Path(app.config.html_favicon).name}">\n' if app.config.html_favicon else ""
    title = escape(app.config.html_title or app.config.project)
    (Path(app.outdir) / "index.html").write_text(
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n"
        f'<meta name="description" content="{title}: start page.">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n{icon}'
        f'<meta http-equiv="refresh" content="0; url={start}">\n'
        f'</head>\n<body>\n<main><p><a href="{start}">{title}</a></p></main>\n</body>\n</html>\n',
        encoding="utf-8",
    )


def setup(app):
    app.connect("html-page-context", add_description)
    # Before sphinx-external-toc's own (default priority 500), which then keeps ours.
    app.connect("build-finished", write_landing_page, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
