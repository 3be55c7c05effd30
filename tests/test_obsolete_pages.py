"""tools/sphinx_ext/obsolete_pages.py: after a build, the site holds exactly the pages in _toc.yml.

A minimal scratch Jupyter Book (a landing page and two notebook pages, with launch buttons
so that the theme writes each notebook's .ipynb download), built with the extension alone:
the real book's build takes minutes, and what is tested here is Sphinx's and Jupyter Book's
handling of a page leaving the table of contents, which the scratch book shares with it.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
JUPYTER_BOOK = Path(sys.executable).parent / "jupyter-book"

NOTEBOOK_PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# {title}

```{{code-cell}} ipython3
print("{title}")
```
"""


def scratch_book(root: Path, pages: list[str], extension: str = "obsolete_pages", **sphinx_config) -> None:
    """A Jupyter Book at `root` with a landing page and `pages`, built with one module of ours."""
    root.mkdir(exist_ok=True)
    (root / "_config.yml").write_text(yaml.safe_dump({
        "title": "Scratch",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "repository": {"url": "https://github.com/example/scratch", "branch": "main"},
        "launch_buttons": {"binderhub_url": "https://mybinder.org"},
        "sphinx": {"local_extensions": {f"tools.sphinx_ext.{extension}": str(ROOT)}, "config": sphinx_config},
    }))
    (root / "index.md").write_text("# Scratch\n\nThe landing page.\n")
    for page in pages:
        (root / f"{page}.md").write_text(NOTEBOOK_PAGE.format(title=page))
    set_toc(root, pages)


def set_toc(root: Path, pages: list[str]) -> None:
    toc = {"format": "jb-book", "root": "index", "chapters": [{"file": page} for page in pages]}
    (root / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))


def build(root: Path, *options: str) -> None:
    result = subprocess.run([str(JUPYTER_BOOK), "build", str(root), "--warningiserror", "--quiet", *options],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def files_named(build_dir: Path, page: str) -> list[str]:
    """Every file the build holds for `page`, in the site and in MyST-NB's output folder."""
    return sorted(path.relative_to(build_dir).as_posix() for path in build_dir.rglob(f"{page}.*")
                  if ".doctrees" not in path.parts)  # (Sphinx's cache, not the site)


def site_pages(html: Path) -> set[str]:
    return {path.relative_to(html).with_suffix("").as_posix() for path in html.rglob("*.html")
            if not path.relative_to(html).parts[0].startswith("_")} - {"genindex", "search"}


@pytest.mark.parametrize("options", [(), ("--all",)], ids=["incremental", "fresh environment"])
def test_a_page_removed_from_the_toc_leaves_no_file_behind(tmp_path, options):
    book = tmp_path / "book"
    scratch_book(book, ["kept", "removed"])
    build(book)
    build_dir = book / "_build"
    assert files_named(build_dir, "removed") == [
        "html/_sources/removed.ipynb", "html/_sources/removed.md", "html/removed.html",
        "jupyter_execute/removed.ipynb"], "the scratch book no longer writes what this test expects"
    kept_before = files_named(build_dir, "kept")

    set_toc(book, ["kept"])
    build(book, *options)

    assert files_named(build_dir, "removed") == [], "a page taken out of _toc.yml left files in the build"
    assert files_named(build_dir, "kept") == kept_before, "a page still in the book lost a file"
    assert site_pages(build_dir / "html") == {"index", "kept"}


def test_the_book_registers_it():
    from tools.sphinx_ext import PARTS, obsolete_pages

    assert obsolete_pages in PARTS
