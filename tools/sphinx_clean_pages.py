"""Sphinx extension: small fixes to the pages Jupyter Book 1.x writes.

1. No console error. sphinx-thebe (which Jupyter Book 1.x always loads) adds its inline configuration script
each time the environment is read, so a page declares ``const THEBE_JS_URL`` twice and the
browser logs "Identifier 'THEBE_JS_URL' has already been declared". We keep the first
copy of every script tag. (The copies differ only in an empty filename being ``None`` or
``""``, so Sphinx's own equality does not see them as the same.)

2. Diagrams with alt text. sphinxcontrib-mermaid drops a diagram's ``alt`` option when
the browser draws it; we keep it as the accessible name of the drawn diagram
(``role="img"`` and ``aria-label`` on the element mermaid fills with its SVG).

3. No diagram code where there is no diagram. sphinxcontrib-mermaid skips pages whose
doctree has no diagram, but loads mermaid (about 550 KB) on pages Sphinx generates
without a doctree: the search page and the index.
"""

from html import escape

from docutils import nodes
from sphinxcontrib.mermaid import html_visit_mermaid, mermaid


def script_key(js) -> tuple:
    return (js.filename or "", js.priority, tuple(sorted(js.attributes.items())))


def loads_mermaid(js) -> bool:
    return "mermaid" in str(js.filename or "") or "mermaid" in js.attributes.get("body", "")


def drop_needless_scripts(app, pagename, templatename, context, doctree):
    if "script_files" not in context:
        return
    seen, kept = set(), []
    for js in context["script_files"]:
        if script_key(js) in seen or (doctree is None and loads_mermaid(js)):
            continue
        seen.add(script_key(js))
        kept.append(js)
    context["script_files"] = kept


def visit_mermaid_keeping_alt(self, node):
    try:
        html_visit_mermaid(self, node)
    except nodes.SkipNode:
        if node.get("alt") and self.body[-1].lstrip().startswith("<pre "):
            label = f'role="img" aria-label="{escape(node["alt"])}" '
            self.body[-1] = self.body[-1].replace("<pre ", "<pre " + label, 1)
        raise


def setup(app):
    app.setup_extension("sphinxcontrib.mermaid")
    app.add_node(mermaid, override=True, html=(visit_mermaid_keeping_alt, None))
    app.connect("html-page-context", drop_needless_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
