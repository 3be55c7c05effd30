"""Sphinx extension: mermaid diagrams drawn at build time, inline, with their alt text.

The pages keep plain ```mermaid fences (``myst_fence_as_directive``; JupyterLab draws them
too) and sphinxcontrib-mermaid parses them. Instead of its ``<pre class="mermaid">`` plus
mermaid's ~550 KB runtime drawing it in the reader's browser, each diagram is written as
the SVG runnable_book/pipeline/draw_diagrams.py drew from the same source (book/_diagrams/, committed), inside
``<div class="mermaid" role="img" aria-label="...">``: the figure's ``alt`` becomes the
drawing's accessible name, and the page loads no mermaid code at all. The wrapper carries
the drawing's width (``--drawn-width``), from which runnable_book/sphinx_ext/static/runnable-book.css keeps its labels
at least 11 px high on any screen, scrolling sideways where the column is narrower. The diagram's source,
which the chapter prints, follows in a folded ``<details>``.
A diagram without its drawing stops the build, naming the page and `make diagrams`.
"""

from __future__ import annotations

from html import escape

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinxcontrib.mermaid import mermaid

from runnable_book.pipeline.draw_diagrams import DIAGRAMS, REGENERATE, diagram_key, drawn_width


def inline_svg(code: str, docname: str) -> str:
    svg_path = DIAGRAMS / f"{diagram_key(code)}.svg"
    if not svg_path.is_file():
        raise ExtensionError(f"{docname}: a mermaid diagram has no drawing ({svg_path.name}); run `{REGENERATE}`")
    svg = svg_path.read_text(encoding="utf-8").split("\n", 1)[1].strip()  # without the "generated" comment
    # The wrapper carries the name and the role; the drawing itself is presentation.
    return svg.replace("<svg ", '<svg aria-hidden="true" focusable="false" ', 1)


def visit_mermaid_inline(self, node):
    label = f' role="img" aria-label="{escape(node["alt"])}"' if node.get("alt") else ""
    svg = inline_svg(node["code"], self.builder.current_docname)
    # Its drawn width, so that runnable-book.css never lets a narrow screen shrink its labels
    # below a legible size (it scrolls sideways instead).
    width = f' style="--drawn-width: {drawn_width(svg)}"'
    self.body.append(f'<div class="mermaid"{label}{width}>{svg}</div>\n')
    # The chapter prints each diagram's source: it stays on the page, folded under the drawing.
    self.body.append('<details class="diagram-source"><summary>Diagram source (mermaid)</summary>'
                     f'<pre>{escape(node["code"])}</pre></details>\n')
    raise nodes.SkipNode


def note_drawings(app, doctree):
    """A page is rebuilt when its drawings change (redrawn with new options or mermaid)."""
    for node in doctree.findall(mermaid):
        app.env.note_dependency(str(DIAGRAMS / f"{diagram_key(node['code'])}.svg"))


def loads_mermaid(js) -> bool:
    return "mermaid" in str(js.filename or "") or "mermaid" in js.attributes.get("body", "")


def drop_mermaid_runtime(app, pagename, templatename, context, doctree):
    if "script_files" in context:
        context["script_files"] = [js for js in context["script_files"] if not loads_mermaid(js)]


def setup(app):
    app.setup_extension("sphinxcontrib.mermaid")
    app.add_node(mermaid, override=True, html=(visit_mermaid_inline, None))
    app.connect("doctree-read", note_drawings)
    app.connect("html-page-context", drop_mermaid_runtime, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
