"""The reader's notebook of a page (book/X.ipynb): its cells converted and assembled.

tools/pipeline/myst_to_notebook.py converts each markdown cell from MyST to CommonMark;
this module builds the notebook around them:

==========================================  ==================================================
in book/X.md                                in the reader's notebook
==========================================  ==================================================
(nothing: the page has code)                a first cell of ours (:func:`install_cell`)
a code cell's ``mystnb.figure`` caption     a markdown cell after the code cell: the numbered
                                            caption, and the alt text in a closed ``<details>``
a code cell tagged ``hide-cell``            folded: ``jupyter.source_hidden``/``outputs_hidden``;
                                            a run of them (a worked solution) also goes under
                                            a heading of its own, collapsed
                                            (``jp-MarkdownHeadingCollapsed``): JupyterLab shows
                                            a cell's outputs again when it runs, a collapsed
                                            section keeps them out of sight after Run All
citations anywhere on the page              a References cell at the end (author-date)
==========================================  ==================================================

The install cell installs what the page needs and the kernel lacks (Colab, a bare Jupyter):
this edition's ``chapter_lib`` (never the repository's newest: below, "the install cell"),
matplotlib (the ``figures`` extra) where the page draws a figure, each only when missing;
when that install fails it stops in that cell, saying in one sentence what it could not
install and from where, what pip said (once) and what to do. It exists only in the
notebook: the HTML page is rendered from the .md, which does not need it. `make outputs`
runs it as the kernel's first cell, so the notebook's execution counts start at 1 with it.
"""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import nbformat

from tools.pipeline import edition
from tools.pipeline.pages import ROOT, BookError
from tools.pipeline.myst_to_notebook import (
    CONFIG, REFERENCES_ANCHOR, Context, bibliography, caption_markdown, cite_names, convert_markdown,
    entry_markdown, figure_numbers, reference_anchor,
)

# Tags of the cells this module adds, so tools can tell them from the .md's cells.
INSTALL_TAG = "install"  # with "setup": our first cell, not the chapter's code
CAPTION_TAG = "caption"
REFERENCES_TAG = "references"
SECTION_TAG = "folded-section"  # the heading above a worked solution, collapsed
SECTION_HEADING = "###"  # under the page's "## Exercise N": collapses until the next exercise
FOLDED = {  # MyST-NB's tags -> JupyterLab's fold state (the HTML shows a "show" button)
    "hide-cell": {"source_hidden": True, "outputs_hidden": True},
    "hide-input": {"source_hidden": True},
    "hide-output": {"outputs_hidden": True},
}
# The folder of the site that serves chapter_lib's wheel, one subfolder per library
# (served_wheel; tools/sphinx_ext/edition.py puts the wheel there).
SERVED_WHEELS = "_static/editions"


# ---- the install cell: this edition's chapter_lib, where it is missing ------------------
#
# Where a notebook installs chapter_lib from, and why. A reader may open a notebook years after
# its edition was published (Colab, from a printed PDF's edition or a course's link), when the
# repository's `main` holds another library: so never `main`. A git commit is the one source
# that lasts as long as the repository: the notebook the site publishes (its copy in
# _sources/, what the page's ".ipynb" download and "Download as notebook" hand out) names its
# edition's commit, stamped in when the site is built (tools/sphinx_ext/edition.py). The
# committed notebook, which Binder and Colab open at that commit, cannot name the commit it is
# part of; it names its library by content instead: the wheel the book's site serves from a
# folder named by the library's digest (the same bytes the page's own Python runs), and the
# release tag that holds this very library when `make release` made one
# (tools/pipeline/edition.py, released_tag). The site's wheel comes first wherever it is
# listed: no git and no build on the reader's side, and the published copy checks its sha256.
# Binder needs none of it: it builds the edition's commit and installs its chapter_lib
# (binder/postBuild), so the cell finds it there.

# The install cell's code; EDITION, NEEDED, VERSION and MODULES are filled in by install_cell.
INSTALL_CELL = """\
# Setup (ours, not the chapter's code): lets this notebook run where it opens.
# EDITION
# Where the book's environment is installed (Binder, `make lab`) this installs nothing;
# elsewhere (Colab, a bare Jupyter) it installs what is missing, and only that.
import importlib, importlib.metadata, importlib.util, os, re, subprocess, sys

needed = {  # module: what it is, and where pip installs it from, tried in this order
NEEDED
}


def installed(module):
    if importlib.util.find_spec(module) is None:
        return False
    try:  # chapter_lib of another edition (a notebook of another term) is replaced by this one's
        return module != "chapter_lib" or importlib.metadata.version("chapter-lib") == "VERSION"
    except importlib.metadata.PackageNotFoundError:  # the book's own checkout, importable as it is
        return True


for module, (what, sources) in needed.items():
    if installed(module):
        continue
    said = []
    for where, requirement in sources:
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-color", requirement],
                             capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
        if pip.returncode == 0:
            break
        text = re.sub(r"\\x1b\\[[0-9;]*m", "", pip.stderr).strip()  # no colour codes
        # pip tells a failed subprocess's error twice; the first telling ends with a "note:" line.
        end = text.find("\\n", text.find("note: ")) if "note: " in text else -1
        said.append((f"({where}) " if len(sources) > 1 else "") + (text[:end] if end > 0 else text)[-1500:])
    else:
        raise RuntimeError(
            f"Could not install {what}, which this notebook needs, from {' or '.join(w for w, _ in sources)}.\\n"
            "pip said:\\n" + "\\n".join(said) + "\\n"
            "What to do: check that this machine can reach the package index and the book's site and "
            "repository, or install it yourself with `pip install` and a requirement above, or open the "
            "notebook from the book's Binder button, where it is installed."
        ) from None
    importlib.invalidate_caches()
import MODULES"""


@dataclass(frozen=True)
class Needed:
    """A module the notebook imports, as the install cell names it and where pip finds it."""

    what: str  # how the cell's error names it: "chapter_lib 15.0.0, this edition's library"
    sources: tuple[tuple[str, str], ...]  # (where, pip's requirement), tried in this order


def site_url() -> str | None:
    """Where the book is published: `html.baseurl` in _config.yml, else the GitHub Pages address
    of `repository.url` (a fork's own, when a fork builds it); None when neither is known."""
    base = (CONFIG.get("html") or {}).get("baseurl")
    if base:
        return base.rstrip("/")
    parts = urlsplit(repository_url())
    if parts.netloc != "github.com":
        return None
    owner, name = parts.path.strip("/").removesuffix(".git").split("/")[:2]
    host = f"{owner.lower()}.github.io"
    return f"https://{host}" if name.lower() == host else f"https://{host}/{name}"


def repository_url() -> str:
    return CONFIG["repository"]["url"].rstrip("/")


def wheel_name(version: str) -> str:
    """The wheel's file name as setuptools writes it (pure Python, any Python 3: pip checks
    the name against the wheel's metadata)."""
    return f"chapter_lib-{version}-py3-none-any.whl"


def served_wheel(root: Path = ROOT) -> str:
    """Where the site serves this library's wheel, relative to the site: a folder named by the
    library's digest, so a notebook never gets another edition's wheel under its name."""
    return f"{SERVED_WHEELS}/{edition.library_digest(root)[:16]}/{wheel_name(edition.version(root))}"


def library_needed(published: edition.Edition | None = None, wheel_sha256: str | None = None,
                   root: Path = ROOT) -> Needed:
    """Where a notebook installs chapter_lib from: for the committed notebook (``published``
    None), the site's wheel and the release tag that holds this library; for the copy the site
    publishes, the site's wheel with its sha256 (pip checks it) and the edition's commit."""
    version = edition.version(root)
    site, sources = site_url(), []
    if site:
        checked = f"#sha256={wheel_sha256}" if wheel_sha256 else ""
        sources.append(("the book's site", f"chapter-lib @ {site}/{served_wheel(root)}{checked}"))
    if published is None:
        tag = edition.released_tag(root)
        if tag:
            sources.append((f"the book's repository at release {tag}", f"chapter-lib @ git+{repository_url()}@{tag}"))
    elif published.commit:
        sources.append((f"the book's repository at commit {published.commit[:edition.SHORT]}",
                        f"chapter-lib @ git+{repository_url()}@{published.commit}"))
    if not sources:
        raise BookError("_config.yml: the reader's notebooks have nowhere to install chapter_lib from: set "
                        "`html.baseurl` to where the book is published, or `repository.url` to its GitHub repository")
    return Needed(f"chapter_lib {version}, this edition's library", tuple(sources))


def figures_needed() -> Needed:
    """What chapter_lib's `figures` extra asks for (pyproject.toml), from the package index."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (requirement,) = extras["figures"]
    return Needed(requirement, (("the package index", requirement),))


def draws_figures(nb) -> bool:
    return any("matplotlib" in c.source for c in nb.cells if c.cell_type == "code" and not is_added_cell(c))


def install_cell(needed: dict[str, Needed], named: str, version: str):
    """Our first cell: make the notebook run where it opens. ``needed`` maps each module the
    page needs to what it is and where pip installs it from; ``named`` is the edition as the
    cell names it, ``version`` chapter_lib's. Installs nothing where they all import (Binder,
    `make lab`; chapter_lib of another version is replaced); in Colab or a bare Jupyter it
    installs exactly the missing ones (matplotlib alone where chapter_lib is there), each
    from the first of its sources that works, and when none does it raises in this cell, in
    one sentence naming what it could not install and from where, then pip's error for each
    source once (pip repeats a failed subprocess's error after its output) without colour
    codes, and what to do, instead of letting the next cell fail with a ModuleNotFoundError."""
    def literal(text: str) -> str:
        return json.dumps(text, ensure_ascii=False)  # (a JSON string is a Python string literal)

    entries = []
    for module, need in needed.items():
        sources = "".join(f"        ({literal(where)}, {literal(requirement)}),\n" for where, requirement in need.sources)
        entries.append(f"    {literal(module)}: ({literal(need.what)}, [\n{sources}    ]),\n")
    source = (INSTALL_CELL.replace("EDITION", f"{named}: this cell installs that\n# edition's chapter_lib, never a later one.")
              .replace("NEEDED\n", "".join(entries)).replace("VERSION", version)
              .replace("MODULES", ", ".join(needed)))
    return nbformat.v4.new_code_cell(source, metadata={"tags": ["setup", INSTALL_TAG]})


def page_install_cell(nb, published: edition.Edition | None = None, wheel_sha256: str | None = None,
                      root: Path = ROOT):
    """The install cell for a page with code (None for a page without): the committed
    notebook's, or with ``published`` the one of the copy the site publishes (``root``: the
    repository whose library it installs)."""
    if not any(c.cell_type == "code" and not is_added_cell(c) for c in nb.cells):
        return None
    needed = {"chapter_lib": library_needed(published, wheel_sha256, root)}
    if draws_figures(nb):
        needed["matplotlib"] = figures_needed()
    version = edition.version(root)
    named = published.line if published is not None else f"Edition {version} (the commit you opened this notebook at)"
    cell = install_cell(needed, named, version)
    # `make outputs` runs it first in the kernel that makes the outputs (stored_outputs.py):
    # then the page's first code cell was execution 2, and this one execution 1.
    first = next(c for c in nb.cells if c.cell_type == "code" and not is_added_cell(c))
    if first.get("execution_count") == 2:
        cell.execution_count = 1
    return cell


def published_notebook(reader, published: edition.Edition, wheel_sha256: str | None, root: Path = ROOT):
    """The reader's notebook as the site publishes it: its install cell names the edition and
    installs its library from the site's wheel (sha256 checked) or the edition's commit."""
    reader = copy.deepcopy(reader)
    for index, cell in enumerate(reader.cells):
        if INSTALL_TAG in cell.metadata.get("tags", []):
            reader.cells[index].source = page_install_cell(reader, published, wheel_sha256, root).source
    return reader


def is_added_cell(cell) -> bool:
    """A cell this module adds (not one of the .md's cells)."""
    return bool({INSTALL_TAG, CAPTION_TAG, REFERENCES_TAG, SECTION_TAG} & set(cell.metadata.get("tags", [])))


def section_heading(cell, ctx: Context):
    """The collapsed heading that opens a run of hidden cells: "Worked solution 3", taken from
    the first hidden cell's "show" prompt (the words before its colon), else "Hidden cells"."""
    prompt = cell.metadata.get("mystnb", {}).get("code_prompt_show", "")
    title = prompt.split(":", 1)[0].strip() or "Hidden cells"
    cell = markdown_cell(f"{SECTION_HEADING} {title}", [SECTION_TAG])
    cell.metadata["jp-MarkdownHeadingCollapsed"] = True
    return cell


def markdown_cell(source: str, tags: list[str] | None = None, folded: dict | None = None):
    metadata = {}
    if folded:
        metadata["jupyter"] = dict(folded)
    if tags:
        metadata["tags"] = tags
    return nbformat.v4.new_markdown_cell(source, metadata=metadata)


def reader_cells(md: Path, nb) -> list:
    """The cells of the reader's notebook, from the page's notebook (with its outputs)."""
    cells = [c for c in [page_install_cell(nb)] if c is not None]
    cited: list[str] = []
    in_section = False  # inside a run of hidden cells (and the markdown that closes it)
    for number, cell in enumerate(nb.cells, start=1):
        ctx = Context(md, number, cited)
        hidden = cell.cell_type == "code" and "hide-cell" in cell.metadata.get("tags", [])
        if hidden and not in_section:
            cells.append(section_heading(cell, ctx))
        # A section runs from its first hidden cell to the next heading of the page.
        in_section = (in_section or hidden) and not (cell.cell_type == "markdown" and cell.source.startswith("#"))
        cell = copy.deepcopy(cell)
        if cell.cell_type == "markdown":
            cell.source = convert_markdown(cell.source, ctx).strip("\n")
            cells.append(cell)
            continue
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        mystnb = cell.metadata.pop("mystnb", {})  # Sphinx-only: prompts, figure options
        folded = {}
        for tag in cell.metadata.get("tags", []):
            folded.update(FOLDED.get(tag, {}))
        if folded:
            cell.metadata["jupyter"] = folded
        cells.append(cell)
        figure = mystnb.get("figure")
        if figure is not None:
            label = figure.get("name")
            number = figure_numbers().get(label) if label else None
            if number is None:
                raise ctx.error("a figure needs mystnb.figure.name to be numbered as the HTML numbers it")
            alt = mystnb.get("image", {}).get("alt")
            # Not folded, even under a folded figure: a folded markdown cell shows its raw
            # source on one line, and the caption reads best as rendered text.
            cells.append(markdown_cell(caption_markdown(label, number, figure.get("caption", ""), alt, ctx),
                                       [CAPTION_TAG]))
    if cited:
        entries = "\n".join(f'- <a id="{reference_anchor(key)}"></a>{entry_markdown(key)}'
                            for key in sorted(cited, key=sort_key))
        cells.append(markdown_cell(f'<a id="{REFERENCES_ANCHOR}"></a>\n\n## References\n\n{entries}',
                                   [REFERENCES_TAG]))
    return cells


def sort_key(key: str) -> tuple:
    entry = bibliography()[key]
    return (cite_names(key).lower(), entry.fields.get("year", ""), key)


def reader_notebook(md: Path, nb):
    """The reader's notebook of page md, from its notebook (nb: the .md's cells, executed)."""
    reader = copy.deepcopy(nb)
    reader.cells = reader_cells(md, nb)
    return reader
