"""The guide (docs/, README.md) stays a guide: small, true to the repository, free of history.

Its size is held (a newcomer reads it in one sitting); every link it makes to a file of the
repository resolves; every `make X` it names is a target of the Makefile; every path, file,
module and tool's function it names in code spans exists (a built one is
written by the tools); the maintainer's layout table names every top-level entry of the
repository and of runnable_book/; `make help` says what a target does without pointing at its
neighbours (its order is the Makefile's); and nothing in the repository speaks of the
numbered stops or issues of its history (CHANGELOG.md has the history, by what changed).
"""

from __future__ import annotations

import fnmatch
import re
import subprocess
from pathlib import PurePosixPath

from markdown_it import MarkdownIt

from runnable_book.repository import ROOT

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


def tracked() -> list[str]:
    return subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


def code_spans(path):
    """The guide's code: (inline or not, its text). A recipe's block may name what it creates."""
    for token in MarkdownIt().parse(path.read_text(encoding="utf-8")):
        if token.type == "fence":
            yield False, token.content
        yield from ((True, child.content) for child in token.children or () if child.type == "code_inline")


def as_pattern(name: str) -> str:
    """A name as the guide writes it, its placeholders (<page>, _N, test_x::test_y) as wildcards."""
    name = re.sub(r"<[^>]+>", "*", name.split("::")[0])
    return re.sub(r"_(N|x)\b", "_*", name).rstrip("/")


def written_by_the_tools(name: str) -> bool:
    """A built file or folder: its name (or its first two parts under _build/) is in the Makefile or a tool."""
    key = "/".join(name.split("/")[:2]) if name.startswith("_build/") else name.rstrip("/")
    return any(key in (ROOT / source).read_text(encoding="utf-8", errors="replace")
               for source in ["Makefile", *[f for f in tracked() if f.startswith("runnable_book/") and f.endswith((".py", ".mjs"))]])


FILE_NAME = re.compile(r"\w[\w.-]*\.(py|mjs|js|toml|yml|json|bib|txt|csv|sh|slurm)")


def test_every_path_module_and_function_the_guide_names_exists():
    files = tracked()
    top = {PurePosixPath(f).parts[0] for f in files}
    basenames = {PurePosixPath(f).name for f in files}
    settings = set(re.findall(r"^(\w+):", (ROOT / "_config.yml").read_text(encoding="utf-8"), re.M))
    missing = []
    for path in GUIDE:
        for inline, span in code_spans(path):
            for module in re.findall(r"python -m (runnable_book(?:\.\w+)*)", span):
                if not any((ROOT / (module.replace(".", "/") + end)).is_file() for end in (".py", "/__init__.py")):
                    missing.append(f"{path.name}: module {module}")
            if not inline:
                continue
            for word in span.split():
                word = word.strip("(),;:`'\"")
                if "://" in word or "=" in word or word.startswith(("/", "~", "*", "-", "$")):
                    continue
                first = word.split("/")[0]
                if "/" in word and first == "_build":
                    if not written_by_the_tools(word):
                        missing.append(f"{path.name}: built path {word}")
                elif "/" in word and first in top:
                    pattern = as_pattern(word)
                    if not any(fnmatch.fnmatch(f, pattern) or f.startswith(pattern + "/") for f in files):
                        missing.append(f"{path.name}: path {word}")
                elif "/" not in word and FILE_NAME.fullmatch(word):
                    if not (fnmatch.filter(basenames, as_pattern(word)) or written_by_the_tools(word)):
                        missing.append(f"{path.name}: file {word}")
            # A tool's function, as `execute_pages.stale_reasons`.
            dotted = re.fullmatch(r"(\w+)\.(\w+)", span)
            modules = [f for f in files if dotted and f.startswith("runnable_book/") and PurePosixPath(f).name == f"{dotted[1]}.py"]
            if modules and not FILE_NAME.fullmatch(span) and dotted[1] not in settings and not any(
                    re.search(rf"^(def |class |){dotted[2]}\b", (ROOT / f).read_text(encoding="utf-8"), re.M)
                    for f in modules):
                missing.append(f"{path.name}: function {span}")
    assert missing == []


def layout_table() -> list[str]:
    """The paths of docs/maintaining.md's layout table (its first column)."""
    text = (ROOT / "docs" / "maintaining.md").read_text(encoding="utf-8")
    table = text[text.index("## Layout"):].split("\n## ")[0]
    return [name.rstrip("/") for row in table.splitlines() if row.startswith("| `")
            for name in re.findall(r"`([^`]+)`", row.split(" | ")[0])]


def test_the_layout_table_names_every_top_level_entry_and_every_tool():
    named = layout_table()
    files = tracked()
    entries = {PurePosixPath(f).parts[0] for f in files} | {
        "/".join(PurePosixPath(f).parts[:2]) for f in files if f.startswith("runnable_book/") and f != "runnable_book/__init__.py"}
    covered = {entry for entry in entries
               if any(fnmatch.fnmatch(entry, name) or name.startswith(entry + "/") or entry.startswith(name + "/")
                      for name in named)}
    # (runnable_book/ itself is named by its parts; README.md is the repository's front page)
    assert entries - covered - {"runnable_book", "README.md"} == set()


def test_make_help_says_what_each_target_does_not_where_it_stands():
    shown = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert shown.strip(), "make help lists nothing"
    placed = [line.strip() for line in shown.splitlines() if re.search(r"\b(above|below)\b", line)]
    assert placed == [], "a target's help that points at its neighbours goes wrong when targets move"
