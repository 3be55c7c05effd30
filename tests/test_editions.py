"""Editions: which build of the book a reader holds, and the library its notebooks install.

(runnable_book/pipeline/edition.py, the install cell of runnable_book/pipeline/reader_notebook.py,
runnable_book/sphinx_ext/edition_on_pages.py; the two-edition run is tests/test_two_editions.py.)

* An edition names a clean commit and the commit's date (UTC); uncommitted changes make a
  preview after the commit; outside a checkout of its own, a preview; never the clock.
* The committed notebooks install their library from the site's wheel, named by the
  library's digest, and from the release tag only while the library is that release's;
  no notebook installs from a branch. The published copy checks the wheel's sha256 and
  falls back on the edition's commit.
* The built site: every page's footer, the PDF's title page and every published notebook's
  first cell name the edition the build recorded; the site serves the page's own wheel
  under its file name, whose sha256 the published notebooks check; that wheel, pure Python
  for any Python 3, and `requires-python` admit the Pythons readers run (this one, Binder's
  runtime, the page's Pyodide).
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from packaging.specifiers import SpecifierSet

from built_artefacts import require_built
from runnable_book.browser.local_site import find_pages
from runnable_book.pipeline import edition
from runnable_book.pipeline.artefact_steps import WHEEL, pdf_path
from runnable_book.pipeline.pages import notebook_pages
from runnable_book.repository import ROOT
from runnable_book.pipeline.install_cell import INSTALL_TAG, SERVED_WHEELS, repository_url, served_wheel, site_url
from runnable_book.pipeline.reader_notebook import published_notebook
from runnable_book.pipeline.execute_pages import stored_path

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "init.defaultBranch=main"]
LIBRARY_SOURCE = re.compile(r'"(chapter-lib @ [^"]+)"')


def library_copy(root: Path) -> Path:
    """What chapter_lib's edition is made of (pyproject.toml, chapter_lib/), at ``root``."""
    root.mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", root)
    shutil.copytree(ROOT / "chapter_lib", root / "chapter_lib", ignore=shutil.ignore_patterns("__pycache__"))
    return root


def git(root: Path, *arguments: str, **environment: str) -> str:
    import os

    done = subprocess.run([*GIT, *arguments], cwd=root, capture_output=True, text=True, check=True,
                          env={**os.environ, **environment})
    return done.stdout.strip()


def install_sources(notebook) -> list[str]:
    """The requirements the install cell tries for chapter_lib, in order."""
    install = next(cell for cell in notebook.cells if INSTALL_TAG in cell.metadata.get("tags", []))
    return LIBRARY_SOURCE.findall(install.source)


# --------------------------------------------------------------------------
# The edition
# --------------------------------------------------------------------------


def test_an_edition_names_a_clean_commit_and_its_date_and_a_preview_otherwise(tmp_path):
    root = library_copy(tmp_path / "book")
    version = edition.version(root)
    assert edition.current(root) == edition.Edition(version, git=False)
    assert edition.current(root).line == f"Edition {version} · a preview, not built from a git checkout"
    git(root, "init", "-q")
    git(root, "add", "-A")
    # 23:30 at UTC+2 is 21:30 UTC: the edition's date is the commit's, in UTC.
    git(root, "commit", "-qm", "edition A", GIT_COMMITTER_DATE="2031-05-06T23:30:00+02:00")
    head = git(root, "rev-parse", "HEAD")
    assert edition.current(root) == edition.Edition(version, commit=head, date="2031-05-06")
    assert edition.current(root).line == f"Edition {version} · 2031-05-06 · commit {head[:12]}"
    (root / "notes.txt").write_text("not committed yet")
    assert edition.current(root) == edition.Edition(version, after=head)
    assert edition.current(root).line == (f"Edition {version} · a preview with uncommitted changes, "
                                          f"after commit {head[:12]}")
    # A folder inside someone else's checkout is no checkout of its own.
    inner = library_copy(root / "inner")
    assert edition.current(inner) == edition.Edition(version, git=False)


def test_the_release_tag_is_named_only_while_the_library_is_the_releases(tmp_path):
    root = library_copy(tmp_path / "book")
    assert edition.released_tag(root) is None, "no release recorded: no tag"
    from runnable_book.release.release import with_release_record

    pyproject = root / "pyproject.toml"
    pyproject.write_text(with_release_record(pyproject.read_text(), edition.version(root), edition.library_digest(root)))
    assert edition.released_tag(root) == f"v{edition.version(root)}"
    module = root / "chapter_lib" / "chapter15.py"
    module.write_text(module.read_text() + "\n\ndef changed_after_the_release():\n    return 1\n")
    assert edition.released_tag(root) is None, "the library changed since: the tag holds another"


# --------------------------------------------------------------------------
# Where the notebooks install chapter_lib from
# --------------------------------------------------------------------------


@pytest.mark.parametrize("md", [md for md in notebook_pages() if (
    INSTALL_TAG in stored_path(md).read_text())], ids=lambda p: p.stem)
def test_a_committed_notebook_installs_its_library_by_content_never_from_a_branch(md):
    notebook = nbformat.read(stored_path(md), as_version=4)
    sources = install_sources(notebook)
    tag = edition.released_tag()
    expected = [f"chapter-lib @ {site_url()}/{served_wheel()}"]
    if tag:
        expected.append(f"chapter-lib @ git+{repository_url()}@{tag}")
    assert sources == expected, f"{stored_path(md).name} installs chapter_lib from {sources}"
    assert not any(re.search(r"@(main|master)$", source) for source in sources)
    install = notebook.cells[0].source
    # (chapter_lib told apart by content: every commit between two releases has one version)
    assert f'return digest.hexdigest()[:16] == "{edition.content_digest()}"' in install
    assert f"# Edition {edition.version()} " in install


def test_a_published_notebook_checks_the_sites_wheel_then_installs_the_editions_commit():
    reader = nbformat.read(stored_path(notebook_pages()[0]), as_version=4)
    sha = "ab" * 32
    commit = "0123456789abcdef0123456789abcdef01234567"
    named = edition.Edition(edition.version(), commit=commit, date="2031-05-06")
    published = published_notebook(reader, named, sha)
    assert install_sources(published) == [f"chapter-lib @ {site_url()}/{served_wheel()}#sha256={sha}",
                                          f"chapter-lib @ git+{repository_url()}@{commit}"]
    assert published.cells[0].source.startswith(
        f"# Setup (ours, not the chapter's code): lets this notebook run where it opens.\n# {named.line}: ")
    assert [c.source for c in published.cells[1:]] == [c.source for c in reader.cells[1:]], "only the install cell changes"
    # A preview has no commit yet: the site's wheel alone (the cell says so if it is not there).
    preview = published_notebook(reader, edition.Edition(edition.version(), after=commit), sha)
    assert install_sources(preview) == [f"chapter-lib @ {site_url()}/{served_wheel()}#sha256={sha}"]


# --------------------------------------------------------------------------
# The built site
# --------------------------------------------------------------------------

SITE = ROOT / "_build" / "html"
EDITION_PARAGRAPH = re.compile(r'<p class="book-edition">(.*?)</p>', re.S)


def recorded() -> edition.Edition:
    return edition.Edition.from_json(require_built(edition.RECORD, "html").read_text())


def plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


@pytest.mark.site
def test_every_footer_the_pdfs_title_page_and_every_published_notebook_name_the_edition(site):
    named = recorded()
    assert named.version == edition.version(), "the site was built with another version: `make html`"
    problems = []
    commit_link = f'<a href="{repository_url()}/commit/{named.commit}">' if named.commit else ""
    for page in find_pages(site):
        text = (site / page).read_text(encoding="utf-8")
        if 'http-equiv="refresh"' in text:  # the root's redirect to the first page (page_head.py): no footer
            continue
        found = EDITION_PARAGRAPH.findall(text)
        if [plain(paragraph) for paragraph in found] != [named.line]:
            problems.append(f"{page}: its footer names {[plain(p) for p in found]}, not [{named.line!r}]")
        elif commit_link not in found[0]:
            problems.append(f"{page}: its footer does not link the commit it names ({commit_link})")
    published = sorted((site / "_sources").rglob("*.ipynb"))
    assert published, "the site publishes no notebook"
    for path in published:
        first = nbformat.read(path, as_version=4).cells[0]
        if INSTALL_TAG in first.metadata.get("tags", []) and f"\n# {named.line}: " not in first.source:
            problems.append(f"{path.relative_to(site)}: its first cell does not name {named.line!r}")
    assert not problems, "\n".join(problems)
    pdf = require_built(pdf_path(), "pdf")
    title_page = subprocess.run(["pdftotext", "-f", "1", "-l", "1", str(pdf), "-"], capture_output=True, text=True,
                                check=True).stdout
    assert named.line in " ".join(title_page.split()), f"the PDF's title page does not name {named.line!r}"


@pytest.mark.site
def test_the_site_serves_the_pages_wheel_whose_sha256_the_published_notebooks_check(site):
    page_wheel = require_built(site / "_static" / "runner" / "chapter_lib.whl", "html")
    served = site / served_wheel()
    assert served.is_file(), f"the site does not serve {served_wheel()}"
    assert served.read_bytes() == page_wheel.read_bytes() == WHEEL.read_bytes(), "not the page's own wheel"
    assert [p.name for p in (site / SERVED_WHEELS).iterdir()] == [served.parent.name], "another library's wheel is served"
    sha = hashlib.sha256(served.read_bytes()).hexdigest()
    for md in notebook_pages():
        path = site / "_sources" / stored_path(md).relative_to(ROOT)
        if path.is_file() and INSTALL_TAG in path.read_text(encoding="utf-8"):
            first = install_sources(nbformat.read(path, as_version=4))[0]
            assert first == f"chapter-lib @ {site_url()}/{served_wheel()}#sha256={sha}", (path.name, first)


@pytest.mark.site
def test_the_wheel_and_requires_python_admit_the_pythons_readers_run(site):
    """Pure Python for any Python 3 (its tag), and `requires-python` admits this Python (the
    book's, Binder's runtime) and the page's own Python (Pyodide's, the version Colab runs)."""
    wheel = zipfile.ZipFile(require_built(site / served_wheel(), "html"))
    info = {name.rsplit("/", 1)[1]: wheel.read(name).decode() for name in wheel.namelist() if ".dist-info/" in name}
    assert "Tag: py3-none-any" in info["WHEEL"].splitlines(), info["WHEEL"]
    requires = re.search(r"^Requires-Python: (.+)$", info["METADATA"], re.M).group(1)
    lock = json.loads((ROOT / "node_modules" / "pyodide" / "pyodide-lock.json").read_text())
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip().removeprefix("python-")
    pythons = {"this environment": f"{sys.version_info[0]}.{sys.version_info[1]}", "Binder": runtime,
               "the page's Pyodide": ".".join(lock["info"]["python"].split(".")[:2])}
    refused = {who: version for who, version in pythons.items() if f"{version}.0" not in SpecifierSet(requires)}
    assert not refused, f"Requires-Python {requires} refuses {refused}"
