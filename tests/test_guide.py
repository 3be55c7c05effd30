"""The guide (docs/, README.md) stays a guide: small, true to the repository, free of history.

Its size is held (a newcomer reads it in one sitting); every link it makes to a file of the
repository resolves; every `make X` it names is a target of the Makefile; and nothing in the
repository speaks of the numbered stops or issues of its history (CHANGELOG.md has the history,
by what changed).
"""

from __future__ import annotations

import re
import subprocess

from markdown_it import MarkdownIt

from tools.repository import ROOT

GUIDE_BYTES = 30_000  # all of docs/*.md
GUIDE = sorted((ROOT / "docs").glob("*.md"))
HISTORY_WORDS = re.compile(r"\b(stop|issue) #?\d+\b", re.IGNORECASE)


def test_the_guide_is_read_in_one_sitting():
    sizes = {path.name: path.stat().st_size for path in GUIDE}
    assert sum(sizes.values()) <= GUIDE_BYTES, f"docs/ holds {sum(sizes.values())} bytes of guide: {sizes}"


def links(path):
    tokens = MarkdownIt().parse(path.read_text(encoding="utf-8"))
    for token in tokens:
        for child in token.children or ():
            if child.type == "link_open":
                yield child.attrs["href"]


def test_every_link_to_the_repository_resolves():
    broken = []
    for path in [*GUIDE, ROOT / "README.md", ROOT / "CHANGELOG.md"]:
        for href in links(path):
            if re.match(r"[a-z]+:", href) or href.startswith("#"):
                continue
            if not (path.parent / href.split("#")[0]).exists():
                broken.append(f"{path.relative_to(ROOT)}: {href}")
    assert broken == []


def test_every_make_target_the_guide_names_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z0-9-]*)(?:\s+[a-z][a-z0-9-]*)*\s*:(?!=)", makefile, re.M))
    for line in re.findall(r"^([a-z][a-z0-9 -]*):(?!=)", makefile, re.M):
        targets.update(line.split())
    named = {(path.name, target) for path in [*GUIDE, ROOT / "README.md"]
             for target in re.findall(r"`make ([a-z][a-z0-9-]*)", path.read_text(encoding="utf-8"))}
    assert {(name, target) for name, target in named if target not in targets} == set()


def test_nothing_in_the_repository_speaks_of_numbered_stops_or_issues():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in files:
        if name.startswith(("tests/chapter15_as_delivered", "tests/book_as_accepted/")) or name.endswith(
                (".ipynb", ".png", ".svg", ".woff", ".woff2", ".ttf", ".pdf", ".gz", ".zip", ".whl")):
            continue
        path = ROOT / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{name}: {m.group(0)}" for m in HISTORY_WORDS.finditer(text)]
    assert found == []
