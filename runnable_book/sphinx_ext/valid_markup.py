"""Sphinx extension: markup that passes the W3C HTML checker and axe, fixed where it is written.

1. Hidden cells (myst-nb's ``hide-cell``/``hide-input`` tags) are a ``<details>`` whose
   ``<summary>`` holds two ``<p>`` prompts ("Show code cell source"/"Hide ...") and is named
   "Toggle hidden content". ``<p>`` is not allowed in ``<summary>`` (phrasing content only),
   and a name other than the visible prompt fails speech-input users (axe:
   label-content-name-mismatch). We write the prompts as ``<span>`` and let the visible one
   name the summary; runnable-book.css restyles the spans as myst-nb styled the paragraphs.
2. The bibliography: docutils writes ``<div role="list">`` around entries with
   ``role="doc-biblioentry"``, a role ARIA 1.2 deprecated and not a list item, so the list
   has no items (axe: aria-required-children, critical). Each entry becomes a ``listitem``.
"""

from __future__ import annotations

from html import escape

from docutils import nodes
from docutils.writers._html_base import HTMLTranslator
from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput


def visit_hidden_cell(self, node):
    classes = " ".join(node["classes"])
    self.body.append(f'<details class="admonition hide {classes}">\n<summary>')
    self.body.append(f'<span class="collapsed admonition-title">{escape(node["prompt_show"])}</span>')
    self.body.append(f'<span class="expanded admonition-title">{escape(node["prompt_hide"])}</span>')
    self.body.append("</summary>\n")


def visit_citation(self, node):
    if not isinstance(node.previous_sibling(), type(node)):
        self.body.append('<div role="list" class="citation-list">\n')
    self.body.append(self.starttag(node, "div", classes=[node.tagname], role="listitem"))


def setup(app):
    app.setup_extension("myst_nb")
    app.add_node(HideCodeCellNode, override=True, html=(visit_hidden_cell, depart_HideCellInput))
    app.add_node(nodes.citation, override=True, html=(visit_citation, HTMLTranslator.depart_citation))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
