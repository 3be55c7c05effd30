"""The first cell of a reader's notebook (ours): it installs what the page needs where it is
missing, this edition's ``chapter_lib`` above all, and names the edition.

Where a notebook installs chapter_lib from, and why. A reader may open a notebook years after
its edition was published (Colab, from a printed PDF's edition or a course's link), when the
repository's `main` holds another library: so never `main`. A git commit is the one source
that lasts as long as the repository: the notebook the site publishes (its copy in
_sources/, what the page's ".ipynb" download and "Download as notebook" hand out) names its
edition's commit, stamped in when the site is built (runnable_book/sphinx_ext/edition_on_pages.py). The
committed notebook, which Binder and Colab open at that commit, cannot name the commit it is
part of; it names its library by content instead: the wheel the book's site serves from a
folder named by the library's digest (the same bytes the page's own Python runs), and the
release tag that holds this very library when `make release` made one
(runnable_book/pipeline/edition.py, released_tag). The site's wheel comes first wherever it is
listed: no git and no build on the reader's side, and the published copy checks its sha256.
Binder needs none of it: it builds the edition's commit and installs its chapter_lib
(binder/postBuild), so the cell finds it there.

runnable_book/pipeline/reader_notebook.py puts the cell first in the committed notebook;
runnable_book/sphinx_ext/edition_on_pages.py writes the copy the site publishes.
"""

from __future__ import annotations

import copy
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import nbformat

from runnable_book.pipeline import edition
from runnable_book.pipeline.myst_to_notebook import CONFIG
from runnable_book.pipeline.pages import BookError
from runnable_book.repository import ROOT

INSTALL_TAG = "install"  # with "setup": our first cell, not the chapter's code
# The folder of the site that serves chapter_lib's wheel, one subfolder per library
# (served_wheel; runnable_book/sphinx_ext/edition_on_pages.py puts the wheel there).
SERVED_WHEELS = "_static/editions"


# The install cell's code; EDITION, NEEDED, DIGEST and MODULES are filled in by install_cell.
INSTALL_CELL = """\
# Setup (ours, not the chapter's code): lets this notebook run where it opens.
# EDITION
# Where the book's environment is installed (Binder, `make lab`) this installs nothing;
# elsewhere (Colab, a bare Jupyter) it installs what is missing, and only that.
import hashlib, importlib, importlib.metadata, importlib.util, os, pathlib, re, subprocess, sys

needed = {  # module: what it is, and where pip installs it from, tried in this order
NEEDED
}


def this_editions_library():
    \"\"\"Whether the chapter_lib here is this edition's, by its content: its version says
    nothing (every commit between two releases has the same one).\"\"\"
    package = pathlib.Path(importlib.util.find_spec("chapter_lib").origin).parent
    if (package.parent / "pyproject.toml").is_file():
        return True  # the book's own checkout (`make lab`): its author's library, as it is
    try:
        importlib.metadata.version("chapter-lib")
    except importlib.metadata.PackageNotFoundError:
        return True  # not installed by pip: a copy someone put here, used as it is
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\\0" + path.read_bytes() + b"\\0")
    return digest.hexdigest()[:16] == "DIGEST"


for module, (what, sources) in needed.items():
    if importlib.util.find_spec(module) is not None and (module != "chapter_lib" or this_editions_library()):
        continue
    said = []
    # (another edition's chapter_lib has this one's version, and pip keeps an installed version)
    replace = ["--force-reinstall"] if module == "chapter_lib" else []
    for where, requirement in sources:
        pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-color", *replace, requirement],
                             capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
        if pip.returncode == 0:
            break
        text = re.sub(r"\\x1b\\[[0-9;]*m", "", pip.stderr).strip()  # no colour codes
        # pip tells a failed subprocess's error twice; the first telling ends with a "note:" line.
        end = text.find("\\n", text.find("note: ")) if "note: " in text else -1
        lines = (text[:end] if end > 0 else text).splitlines()
        while len(lines) > 1 and sum(map(len, lines)) > 1500:  # its last whole lines, never a word cut
            lines.pop(0)
        said.append((f"({where}) " if len(sources) > 1 else "") + "\\n".join(lines))
    else:
        raise RuntimeError(
            f"Could not install {what}, which this notebook needs, from {' or '.join(w for w, _ in sources)}.\\n"
            "pip said:\\n" + "\\n".join(said) + "\\n"
            "What to do: check that this machine can reach the package index and the book's site and "
            "repository, or install it yourself with `pip install` and a requirement above, or open the "
            "notebook from the book's Binder button, where it is installed."
        ) from None
    importlib.invalidate_caches()
    for name in [name for name in sys.modules if name.split(".")[0] == module]:
        del sys.modules[name]  # (another edition's, imported before: this edition's is imported below)
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
    if not (CONFIG.get("repository") or {}).get("url"):
        return None
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


def install_cell(needed: dict[str, Needed], named: str, digest: str):
    """Our first cell: make the notebook run where it opens. ``needed`` maps each module the
    page needs to what it is and where pip installs it from; ``named`` is the edition as the
    cell names it, ``digest`` its chapter_lib's content (edition.content_digest, which the cell
    computes again on the copy it finds). Installs nothing where they all import (Binder, `make
    lab`; a pip-installed chapter_lib of other content, whatever its version, is replaced,
    since every commit between two releases has the same version); in Colab or a bare Jupyter it
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
              .replace("NEEDED\n", "".join(entries)).replace("DIGEST", digest)
              .replace("MODULES", ", ".join(needed)))
    return nbformat.v4.new_code_cell(source, metadata={"tags": ["setup", INSTALL_TAG]})


def edition_install_cell(figures: bool, published: edition.Edition | None = None,
                         wheel_sha256: str | None = None, root: Path = ROOT):
    """The install cell of a page (``figures``: it draws one, so matplotlib too): the committed
    notebook's, or with ``published`` the one of the copy the site publishes (``root``: the
    repository whose library it installs)."""
    # (the same for every page of a build: made once while the library is held, a copy each)
    key = ("install cell", figures, published, wheel_sha256, Path(root).resolve())
    return copy.deepcopy(edition.held(key, lambda: _edition_install_cell(figures, published, wheel_sha256, root)))


def _edition_install_cell(figures: bool, published: edition.Edition | None, wheel_sha256: str | None, root: Path):
    needed = {"chapter_lib": library_needed(published, wheel_sha256, root)}
    if figures:
        needed["matplotlib"] = figures_needed()
    version = edition.version(root)
    named = published.line if published is not None else f"Edition {version} (the commit you opened this notebook at)"
    return install_cell(needed, named, edition.content_digest(root))
