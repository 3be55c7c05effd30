"""A minimal scratch Jupyter Book for tests of our Sphinx extension (runnable_book/sphinx_ext).

A landing page and a few notebook pages, with launch buttons (so that the theme writes each
notebook's .ipynb download), built with only the modules of ours a test names: the real
book's build takes minutes, and what such tests check is how Sphinx, MyST-NB and Jupyter
Book treat a page, which the scratch book shares with the real one.
"""

import subprocess
from pathlib import Path

import yaml

from runnable_book import jupyter_book

ROOT = Path(__file__).resolve().parent.parent

# The front matter that makes a .md a MyST notebook (jupytext, a Python 3 kernel).
MYST_NOTEBOOK_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
NOTEBOOK_PAGE = MYST_NOTEBOOK_HEADER + """
# {title}

```{{code-cell}} ipython3
print("{title}")
```
"""


def scratch_book(root: Path, pages: list[str], extensions: list[str] = (), book_config: dict | None = None,
                 **sphinx_config) -> None:
    """A Jupyter Book at `root`: a landing page and `pages`, with our `extensions` (module names),
    `book_config` (_config.yml's top-level keys) and `sphinx_config` (its sphinx.config)."""
    root.mkdir(exist_ok=True)
    (root / "_config.yml").write_text(yaml.safe_dump({
        **(book_config or {}),
        "title": "Scratch",
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},
        "repository": {"url": "https://github.com/example/scratch", "branch": "main"},
        "launch_buttons": {"binderhub_url": "https://mybinder.org"},
        "sphinx": {"local_extensions": {f"runnable_book.sphinx_ext.{name}": str(ROOT) for name in extensions},
                   "config": sphinx_config},
    }))
    (root / "index.md").write_text("# Scratch\n\nThe landing page.\n")
    for page in pages:
        (root / f"{page}.md").write_text(NOTEBOOK_PAGE.format(title=page))
    set_toc(root, pages)


def set_toc(root: Path, pages: list[str]) -> None:
    toc = {"format": "jb-book", "root": "index", "chapters": [{"file": page} for page in pages]}
    (root / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))


def build(root: Path, *options: str) -> None:
    """`jupyter-book build` (warnings are errors), which must succeed."""
    result = subprocess.run([*jupyter_book.COMMAND, "build", str(root), "--warningiserror", "--quiet", *options],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
