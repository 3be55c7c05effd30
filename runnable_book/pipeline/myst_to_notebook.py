"""A page's MyST markdown -> the reader's notebook (book/X.ipynb): plain CommonMark/GFM
that JupyterLab, Notebook 7, VS Code, Colab and GitHub render, beside the stored outputs.

The HTML book renders the same .md with Sphinx; this module gives each MyST construct
the page uses a form that needs no Sphinx, numbered and styled as the HTML numbers and
styles it:

==========================================  ==================================================
MyST in book/X.md                           in the reader's notebook
==========================================  ==================================================
``{cite:p}`key```                           ``([Zou et al. 2025](#ref-key))``, and a
                                            References cell at the end listing the works cited
                                            on that page (author–date, as the HTML), each
                                            entry anchored ``ref-key``
``{cite:t}`key```                           ``[Zou et al.](#ref-key) (2025)``
``{numref}`label```                         ``Figure 15.5`` (Sphinx's numfig order: figures in
                                            table-of-contents order)
```{admonition} Title`` / ``{note}``...     a blockquote whose first line is the bold title,
                                            after its kind's word ("Tip: Title") when it has one
```{dropdown} Title``                       a closed ``<details>`` with ``<summary>Title``
``{#fig-x caption=... alt=...}`` + fence    the fence, an italic caption line under it, and
                                            the alt text in a closed ``<details>``
```mermaid`` (plain)                        kept: JupyterLab 4 and GitHub draw it; beside a
                                            figure the HTML draws top to bottom (too wide left
                                            to right: runnable_book/pipeline/draw_diagrams.py), our
                                            drawing of it (book/_diagrams/, by its path)
``(label)=``, ``% comment``                 dropped (they render as nothing in the HTML)
==========================================  ==================================================

Any other role, directive or MyST-only syntax stops the conversion with an error naming
the page and the cell, so nothing reaches a reader as raw markup. The markdown is parsed
with myst-parser's own markdown-it configuration (the extensions _config.yml enables), so
a construct is converted exactly where Sphinx sees one.

The notebook around the converted markdown (our install cell, folded worked solutions,
caption and reference cells) is assembled by runnable_book/pipeline/reader_notebook.py.
"""

from __future__ import annotations

import html
import difflib
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml
from markdown_it.renderer import RendererHTML
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from pybtex.database import parse_file
from pybtex.exceptions import PybtexError
from pybtex.plugin import find_plugin
from pybtex.richtext import Text

from runnable_book.pipeline.pages import BookError, notebook_pages, read_page, shown
from runnable_book.pipeline.parse_cache import kept_parse

from runnable_book.repository import ROOT
from runnable_book.pipeline.author_date import register_author_date_style
from runnable_book.pipeline.draw_diagrams import Diagram, drawn_top_to_bottom

CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
SPHINX = CONFIG["sphinx"]["config"]
# The book's references (_config.yml's bibtex_bibfiles), if it has any: a book may cite nothing.
BIBFILE = ROOT / CONFIG["bibtex_bibfiles"][0] if CONFIG.get("bibtex_bibfiles") else None
# The citations link to an explicit anchor above the References heading: headings' own ids
# differ between renderers (JupyterLab 4 keeps the case, "References"; GitHub lower-cases).
REFERENCES_ANCHOR = "references"


def reference_anchor(key: str) -> str:
    """The anchor of one entry of the References cell: a citation lands on the work it cites
    (as in the HTML), not on the top of the list."""
    return "ref-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)

ADMONITIONS = {"admonition", "note", "tip", "hint", "important", "warning", "caution",
               "attention", "danger", "error", "seealso"}
DIRECTIVE_OPTIONS = re.compile(r"^:([\w-]+):\s*(.*)$")
ROLE = re.compile(r"\{([^{}`\s]+)\}`([^`]+)`")


class ConversionError(BookError):
    """MyST the reader's notebook cannot show: names the page and the cell."""


# --------------------------------------------------------------------------
# What conversion needs to know about the whole book
# --------------------------------------------------------------------------


@cache
def parser():
    """myst-parser's markdown-it, configured as _config.yml configures the HTML book."""
    config = MdParserConfig(
        enable_extensions=set(SPHINX.get("myst_enable_extensions", [])),
        fence_as_directive=set(SPHINX.get("myst_fence_as_directive", [])),
    )
    return create_md_parser(config, RendererHTML)


def figure_label(number: int) -> str:
    return SPHINX.get("numfig_format", {}).get("figure", "Fig. %s") % number


def page_figures(nb) -> list[str | None]:
    """The page's figures in document order, by label (None for an unnamed one)."""
    figures: list[str | None] = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            figure = cell.metadata.get("mystnb", {}).get("figure")
            if figure is not None:
                figures.append(figure.get("name"))
        else:
            for token in parser().parse(cell.source):
                if token.type == "fence" and "caption" in token.attrs:
                    figures.append(token.attrs.get("id"))
    return figures


def kept_page_figures(md: Path) -> list[str | None]:
    """page_figures of ``md``, kept by its text and the code that reads it (runnable_book/pipeline/
    parse_cache.py): every build numbers every page's figures, and a prose edit changes one page."""
    from runnable_book.pipeline import pages

    # (and the parser's settings from _config.yml: a fence read as a figure depends on them)
    settings = {name: sorted(SPHINX.get(name, [])) for name in ("myst_enable_extensions", "myst_fence_as_directive")}
    key = f"{md.read_text()}\0{Path(pages.__file__).read_text()}\0{settings}"
    return kept_parse("page-figures", key, Path(__file__), lambda: page_figures(read_page(md)))


@cache
def figure_numbers() -> dict[str, str]:
    """{label: "Figure 15.N"}, numbered through the book in reading order, as numfig does."""
    numbers, count = {}, 0
    for md in notebook_pages():
        for label in kept_page_figures(md):
            count += 1
            if label:
                numbers[label] = figure_label(count)
    return numbers


class MarkdownBackend(find_plugin("pybtex.backends", "markdown")):
    """pybtex's markdown, escaping only what CommonMark would misread (not every '-' and '.')."""

    def format_str(self, text):
        return re.sub(r"([\\`*_\[\]<>])", r"\\\1", text)


@cache
def bibliography():
    """The works of the book's .bib, by key; BookError naming the file, the line and the entry
    where pybtex stops (a syntax error, a key twice), not pybtex's traceback."""
    if BIBFILE is None:
        return {}
    try:
        return parse_file(BIBFILE).entries
    except PybtexError as error:
        raise BookError(bib_problem(BIBFILE, error)) from None


BIB_ENTRY = re.compile(r"^[ \t]*@[ \t]*(\w+)[ \t]*[{(][ \t]*([^,\s]*)", re.M)


def bib_problem(path: Path, error: PybtexError) -> str:
    """Where in a .bib pybtex stopped, as an author looks for it: the file, the line, the entry
    being read there (one left open runs on into the next, where the parser stops)."""
    line = getattr(error, "lineno", None)
    message = Exception.__str__(error)  # (pybtex's own str() repeats the line)
    text = path.read_text(encoding="utf-8")
    openings = [(text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)) for m in BIB_ENTRY.finditer(text)]
    if line is None:
        return f"{shown(path)}: {message}"
    before = [o for o in openings if o[0] < line]
    here = next((o for o in openings if o[0] == line), None)
    if before and here and message.endswith("expected"):
        entry_line, kind, key = before[-1]
        where = (f", in the entry `{key}` (@{kind}, line {entry_line}), still open where the next entry begins: "
                 "is its closing brace missing?")
    elif before or here:
        entry_line, kind, key = here or before[-1]
        where = f", in the entry `{key}` (@{kind}, line {entry_line})"
    else:
        where = ""
    return f"{shown(path)}, line {line}: {message}{where}"


# Cached: pybtex looks its plugins up through the installed packages' entry points on every
# call (seconds over a book), and a key's rendering never changes within one run.
@cache
def entry_markdown(key: str) -> str:
    """One reference, in the style the HTML references page shows it (``bibtex_default_style``:
    our author–date style, runnable_book/pipeline/author_date.py)."""
    register_author_date_style()
    style = find_plugin("pybtex.style.formatting", SPHINX.get("bibtex_default_style", "plain"))()
    entry = style.format_entry("", bibliography()[key])
    return " ".join(entry.text.render(MarkdownBackend()).split())


@cache
def plain_text_backend():
    """pybtex's text backend, looked up once (``render_as`` looks it up on every call)."""
    return find_plugin("pybtex.backends", "text")()


@cache
def cite_names(key: str) -> str:
    """The author part of an author-year citation: "Zou et al.", "Liu and Lin", "Edge"."""
    people = bibliography()[key].persons.get("author") or bibliography()[key].persons.get("editor", [])
    last = [Text(*p.rich_last_names).render(plain_text_backend()) for p in people]
    if len(last) > 2:
        return f"{last[0]} et al."
    return " and ".join(last)


# --------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------


@dataclass
class Context:
    """Where a piece of markdown is (for errors) and what it cited (for the References)."""

    page: Path
    cell: int  # 1-based rank of the cell in the .md notebook
    cited: list[str] = field(default_factory=list)

    def error(self, message: str, near: str | None = None) -> ConversionError:
        """``near``: text of the page the problem is in, to name its line (as an editor shows it)."""
        text = self.page.read_text(encoding="utf-8") if near and self.page.is_file() else ""
        if near and near in text:
            line = text.count("\n", 0, text.index(near)) + 1
            return ConversionError(f"{shown(self.page)}, line {line} (cell {self.cell}): {message}")
        return ConversionError(f"{shown(self.page)}, cell {self.cell}: {message}")


def convert_role(name: str, content: str, ctx: Context) -> str:
    if name in ("cite:p", "cite:t"):
        keys = [k.strip() for k in content.split(",")]
        for key in keys:
            if BIBFILE is None:
                raise ctx.error(f"{{{name}}}`{content}` cites {key!r}, but _config.yml names no bibtex_bibfiles",
                                near=f"{{{name}}}`{content}`")
            if key not in bibliography():
                closest = difflib.get_close_matches(key, list(bibliography()), n=3)
                hint = f"; closest in {shown(BIBFILE)}: {', '.join(closest)}" if closest else ""
                raise ctx.error(f"{{{name}}}`{content}` cites {key!r}, which {shown(BIBFILE)} does not hold{hint}",
                                near=f"{{{name}}}`{content}`")
            if key not in ctx.cited:
                ctx.cited.append(key)
        year = {k: bibliography()[k].fields.get("year", "n.d.") for k in keys}
        if name == "cite:p":
            return "(" + "; ".join(f"[{cite_names(k)} {year[k]}](#{reference_anchor(k)})" for k in keys) + ")"
        return "; ".join(f"[{cite_names(k)}](#{reference_anchor(k)}) ({year[k]})" for k in keys)
    if name == "numref":
        match = re.fullmatch(r"(?:(.*?)\s*<)?([^<>]+?)>?", content.strip())
        title, label = match.group(1), match.group(2)
        number = figure_numbers().get(label)
        if number is None:
            raise ctx.error(f"{{numref}}`{content}` names no figure of the book (labels: {sorted(figure_numbers())})",
                            near=f"{{numref}}`{content}`")
        return title.replace("%s", number.split()[-1]) if title else number
    raise ctx.error(f"the role {{{name}}}`{content}` has no notebook form; write plain markdown, "
                    "or teach runnable_book/pipeline/myst_to_notebook.py to convert it")


def convert_inline(text: str, roles: list[tuple[str, str]], ctx: Context) -> str:
    """Replace each role the parser found in text; the parser is the judge of what is one."""
    found = [(m.group(1), m.group(2)) for m in ROLE.finditer(text)]
    if found != roles:
        raise ctx.error(f"the parser found the roles {roles} but the text holds {found}; "
                        "a role inside a code span cannot be converted")
    return ROLE.sub(lambda m: convert_role(m.group(1), m.group(2), ctx), text)


def directive_parts(body: str) -> tuple[dict[str, str], str]:
    """A directive's ``:key: value`` (or ``---`` YAML) options, and its content."""
    lines = body.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        return yaml.safe_load("\n".join(lines[1:end])) or {}, "\n".join(lines[end + 1:]).strip("\n")
    options = {}
    while lines and (match := DIRECTIVE_OPTIONS.match(lines[0])):
        options[match.group(1)] = match.group(2)
        lines.pop(0)
    return options, "\n".join(lines).strip("\n")


def quoted(markdown: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in markdown.split("\n"))


def details(summary: str, markdown: str, open_: bool = False) -> str:
    """A collapsed block; blank lines around the body let the body render as markdown."""
    tag = "<details open>" if open_ else "<details>"
    return f"{tag}\n<summary>{html.escape(summary, quote=False)}</summary>\n\n{markdown}\n\n</details>"


def convert_directive(name: str, argument: str, body: str, ctx: Context) -> str:
    options, content = directive_parts(body)
    unknown = set(options) - {"class", "name", "open", "class-container", "class-title", "class-body", "icon"}
    if unknown:
        raise ctx.error(f"the {{{name}}} directive's options {sorted(unknown)} have no notebook form")
    inner = convert_markdown(content, ctx)
    if name in ADMONITIONS:
        if not argument and name == "admonition":
            raise ctx.error("an {admonition} needs a title")
        # The HTML tells a note from a tip by colour and icon; the notebook's plain blockquotes
        # by the kind's word before a title ("Tip: In the interview").
        classes = str(options.get("class", "")).split()
        kind = name if name != "admonition" else next((c for c in classes if c in ADMONITIONS), None)
        word = kind.capitalize().replace("Seealso", "See also") if kind and kind != "admonition" else None
        title = convert_title(argument, ctx) if argument else word
        if argument and word:
            title = f"{word}: {title}"
        return quoted(f"**{title}**\n\n{inner}")
    if name == "dropdown":
        return details(argument or "Details", inner, open_="open" in options)
    if name == "mermaid":  # the directive form; the fence form is kept as it is
        return f"```mermaid\n{content}\n```"
    raise ctx.error(f"the {{{name}}} directive has no notebook form; write plain markdown, "
                    "or teach runnable_book/pipeline/myst_to_notebook.py to convert it")


def attach_drawing(code: str, number: str, ctx: Context) -> str:
    """Markdown that shows our build-time drawing of a diagram (book/_diagrams, committed beside
    the notebooks; runnable_book/pipeline/draw_diagrams.py), by its path from the notebook: JupyterLab
    serves it as a file (an SVG as a cell attachment is dropped by its sanitizer)."""
    svg = Diagram("", code).svg_path
    return f"![{number}, drawn top to bottom as in the HTML book and the PDF]({svg.parent.name}/{svg.name})"


def convert_title(text: str, ctx: Context) -> str:
    """Inline markdown on one line (a title, a caption), its roles converted."""
    return convert_markdown(text, ctx).strip()


def caption_markdown(label: str | None, number: str, caption: str, alt: str | None, ctx: Context) -> str:
    """What stands under a figure: the numbered caption, then the alt text, folded."""
    lines = f"*{number}: {convert_title(caption, ctx)}*" if caption else f"*{number}*"
    if alt:
        lines += "\n\n" + details(f"{number} in words", alt)
    return lines


def roles_in(tokens) -> list[tuple[str, str]]:
    return [(child.meta["name"], child.content) for token in tokens if token.type == "inline"
            for child in token.children or [] if child.type == "myst_role"]


def convert_markdown(text: str, ctx: Context) -> str:
    """Convert one markdown cell (or a directive's content), block by block.

    A block of plain CommonMark keeps its lines (roles replaced); a MyST block is rebuilt.
    """
    lines = text.split("\n")
    tokens = parser().parse(text)
    out: list[str] = []
    position = 0  # first line not yet copied
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.level != 0 or token.map is None:
            index += 1
            continue
        start, end = token.map
        # The lines before a block are blank, or the {attrs} line the parser folded into it.
        between = [line for line in lines[position:start] if line.strip()]
        if between and not (token.attrs and len(between) == 1 and between[0].lstrip().startswith("{")):
            raise ctx.error(f"unconverted lines {between!r}")
        out.extend(line for line in lines[position:start] if not line.strip())
        block = tokens[index:]
        if token.nesting == 1:  # an open token: the block runs to its close at level 0
            close = next(i for i, t in enumerate(block) if t.level == 0 and t.nesting == -1)
            block = block[:close + 1]
        else:
            block = block[:1]
        out.append(convert_block(block, lines[start:end], ctx))
        position = end
        index += len(block)
    trailing = lines[position:]
    if any(line.strip() for line in trailing):
        raise ctx.error(f"unconverted lines {trailing!r}")
    out.extend(trailing)
    return "\n".join(out)


def convert_block(block, lines: list[str], ctx: Context) -> str:
    token = block[0]
    kind = token.type
    if kind in ("fence", "colon_fence") and token.info.strip().startswith("{"):
        name, _, argument = token.info.strip()[1:].partition("}")
        return convert_directive(name, argument.strip(), token.content.rstrip("\n"), ctx)
    if kind == "fence" and "caption" in token.attrs:
        label = token.attrs.get("id")
        number = figure_numbers().get(label) if label else None
        if number is None:
            raise ctx.error(f"the figure {label!r} has no number (give it an id: {{#fig-... caption=...}})")
        unknown = set(token.attrs) - {"id", "caption", "alt"}
        if unknown:
            raise ctx.error(f"the figure {label!r} has attributes {sorted(unknown)} with no notebook form")
        # A mermaid figure keeps the chapter's source, word for word, although the HTML and
        # PDF draw a wide one top to bottom: JupyterLab draws it as written (left to right, too
        # small to read), so our drawing, as the HTML shows it, comes beside it.
        drawing = ""
        if token.info.strip() == "mermaid" and drawn_top_to_bottom(token.content):
            drawing = "\n\n" + attach_drawing(token.content, number, ctx)
        return ("\n".join(lines) + drawing + "\n\n"
                + caption_markdown(label, number, token.attrs["caption"], token.attrs.get("alt"), ctx))
    if kind in ("myst_target", "myst_line_comment", "myst_block_break", "front_matter"):
        return ""
    if token.attrs and kind not in ("fence", "code_block"):
        raise ctx.error(f"the attributes {token.attrs} on a {kind} have no notebook form")
    nested = [t for t in block[1:] if t.type in ("fence", "colon_fence") and t.info.strip().startswith("{")]
    inline = [child for t in block if t.type == "inline" for child in t.children or []]
    myst_only = [t.type for t in block + [c for c in inline if c.type != "myst_role"]
                 if t.type.startswith(("myst_", "substitution", "dl_", "colon_fence"))]
    if nested or myst_only:
        raise ctx.error(f"MyST inside a {kind} ({[t.info for t in nested] + myst_only}) has no notebook form")
    if kind in ("fence", "code_block", "html_block", "math_block", "hr"):
        return "\n".join(lines)
    return convert_inline("\n".join(lines), roles_in(block), ctx)
