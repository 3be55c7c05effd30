"""docs/authoring.md's recipes, run as written, in its order, in one scratch copy of the repository.

Each `### ` recipe under `## Recipes` is a numbered list of ```bash blocks; the test reads them
from the guide (markdown-it, as the guide renders) and runs each with `bash -euo pipefail` in a
copy of the repository that is a git repository (the recipes commit), built as the repository
was last built (runnable_book/checks/clean_build_compare.py's built_copy: the builds are incremental),
with `make check`'s caches and nbval records (_build/check/), so that what the guide promises an
author is what happens: every block exits 0. Nothing about the recipes is written here: a recipe
added to the guide is run, one changed is run as changed.

**The book the recipes run on is frozen for them** (tests/recipes_book/: every page's `.md`,
`_toc.yml`, `references.bib`). A recipe is an example an author may follow to the letter and
commit: then the book no longer holds the sentence it rewords or the label it changes, and
already holds the page and the exercise it adds, and the same recipe run on today's book would
find nothing to do (once, `git commit` "nothing to commit" failed `make test`). The other ways
were worse for an author: recipes anchored on text no edit removes cannot change a delivered
line of code (the departure that recipe is there to show) nor add a page by a fixed name twice;
a test that detects a recipe already applied would have to know each recipe's undo, and any
rewording of the same sentence by hand would still break it. So the copy's pages, `_toc.yml`
and bibliography are replaced by the frozen ones (and a page the frozen table of contents does
not list leaves with its notebook and accepted text), built and accepted, and committed as the
base the recipes start from: whatever the author's book says, the recipes start from the same
pages, and whatever the author commits, `make test` is as green as before. The tools, tests
and guide are the repository's own: the recipes keep proving that the loop works as written.
The whole book is frozen, not only the pages the recipes touch, so that it stays one book (a
later page imports what an earlier one saves). `python -m tests.test_recipes --freeze` copies
today's book there (a maintainer's step, when a recipe needs a page the copy lacks or the tools
need what an old page lacks); the test says so when the frozen book is what fails.

It holds what tests/test_authors_changes.py held (a reworded sentence, a changed printed label,
a new exercise, each accepted, the suite green), and after the run: every recipe committed what
its build rewrote, the fidelity check passes and the departures from the chapter as delivered
grew by delivered lines the copy's book no longer holds. And each recipe's commit changed only
files the freeze puts back or the build makes again: an author's commit of any recipe's result
(or of all of them) therefore changes nothing the recipes start from.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from runnable_book.checks.clean_build_compare import built_copy
from runnable_book.pipeline import accept
from runnable_book.repository import ROOT

pytestmark = [pytest.mark.whole_book, pytest.mark.long]

GUIDE = ROOT / "docs" / "authoring.md"
# The book the recipes run on (the module's docstring says why), by the same paths as the
# repository's: every page's .md, the table of contents, the bibliography.
FROZEN = ROOT / "tests" / "recipes_book"
FROZEN_SOURCES = ("book/*.md", "book/references.bib", "_toc.yml")
# What a recipe's commit may change besides the frozen sources: what `make book` and `make
# accept` make from them (each other generated file says GENERATED in its first lines).
BUILT_FROM_THE_PAGES = ("book/*.ipynb", "book/_diagrams/*", "tests/book_as_accepted/*")
# The modules a test module's answer can depend on the book's state through: they read the
# pages and _toc.yml (pages, book_shape), the accepted text (accept), the library made from the
# pages (extract_library, chapter_lib itself).
BOOK_READERS = ("runnable_book.pipeline.pages", "runnable_book.pipeline.book_shape", "runnable_book.pipeline.accept",
                "runnable_book.pipeline.extract_library", "chapter_lib")


def recipes(guide: Path = GUIDE) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(recipe's title, [(step number, bash block), ...]), ...] in the guide's order."""
    tokens = MarkdownIt().parse(guide.read_text())
    found, in_recipes, step = [], False, "?"
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            in_recipes = tokens[index + 1].content == "Recipes"
        elif token.type == "heading_open" and token.tag == "h3" and in_recipes:
            found.append((tokens[index + 1].content, []))
        elif token.type == "list_item_open" and found:
            step = token.info or "?"
        elif token.type == "fence" and token.info.strip() == "bash" and in_recipes and found:
            found[-1][1].append((step, token.content))
    return found


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return names


def module_of(name: str, root: Path) -> Path | None:
    """The repository's file for an imported name (a tool, a package, a helper in tests/)."""
    parts = name.split(".")
    for candidate in (root / Path(*parts).with_suffix(".py"), root / Path(*parts) / "__init__.py",
                      root / "tests" / f"{name}.py"):
        if candidate.is_file():
            return candidate
    return None


def reads_the_book(path: Path, root: Path, seen: set[Path]) -> bool:
    """Whether a module imports a BOOK_READERS module, itself or through the repository's
    modules it imports. Not through tests/markers.py: it imports every way into a build so
    as to guard it, and every test module has it, whatever the test reads."""
    seen.add(path)
    names = imported(path)
    if any(name == reader or name.startswith(reader + ".") for name in names for reader in BOOK_READERS):
        return True
    return any(module is not None and module not in seen and module.name != "markers.py"
               and reads_the_book(module, root, seen)
               for module in (module_of(name, root) for name in sorted(names)))


def book_state_tests(root: Path = ROOT) -> list[str]:
    """The test modules `make check` runs whose answer depends on the book's state. The others
    (the JavaScript's and page assets' unit tests, the browser's figure helpers, the markers'
    guard, the local server, ...) read none of book/, chapter_lib/, _toc.yml or the accepted
    text: their answer in the copy, after any recipe, is their answer in the repository, which
    `make check` and `make test` give there."""
    return [str(path.relative_to(root)) for path in sorted((root / "tests").glob("test_*.py"))
            if reads_the_book(path, root, set())]


def frozen_files(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for pattern in FROZEN_SOURCES for path in root.glob(pattern))


def freeze(root: Path = ROOT, into: Path = FROZEN) -> None:
    """`python -m tests.test_recipes --freeze`: the book of ``root`` becomes the recipes' book."""
    shutil.rmtree(into, ignore_errors=True)
    for name in frozen_files(root):
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, into / name)


def put_the_frozen_book_in(copy: Path) -> bool:
    """The copy's pages, table of contents and bibliography become the frozen ones; a page
    the frozen book lacks goes, with what was made from it (its notebook, its accepted text).
    Whether that changed any file (not when the book is still the one frozen)."""
    frozen, changed = set(frozen_files(FROZEN)), False
    for name in frozen_files(copy):
        if name not in frozen:
            changed = True
            (copy / name).unlink()
            stem = Path(name).stem
            for made in (copy / "book" / f"{stem}.ipynb", copy / "tests" / "book_as_accepted" / f"{stem}.txt"):
                made.unlink(missing_ok=True)
    for name in frozen:
        if not (copy / name).is_file() or (copy / name).read_bytes() != (FROZEN / name).read_bytes():
            changed = True
            shutil.copy2(FROZEN / name, copy / name)
    return changed


def made_by_the_build(copy: Path, environment: dict, commit: str, name: str) -> bool:
    """Whether the file ``commit`` changed is one the build makes: by its path, or by what its
    first lines say in that commit (in its parent, where the commit deleted it: a chapter's
    module goes with the chapter's last page)."""
    if any(Path(name).match(pattern) for pattern in BUILT_FROM_THE_PAGES):
        return True
    for revision in (commit, f"{commit}^"):
        shown = subprocess.run(["git", "show", f"{revision}:{name}"], cwd=copy, env=environment, capture_output=True,
                               text=True, errors="replace")
        if shown.returncode == 0:
            return "GENERATED" in "".join(shown.stdout.splitlines(True)[:3])
    return False


def git(copy: Path, environment: dict, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=copy, env=environment, check=True, capture_output=True,
                          text=True).stdout


def scratch_git_repository(tmp_path: Path) -> tuple[Path, dict]:
    """The repository as last built, in a git repository of its own; the environment to run in."""
    copy = built_copy(ROOT, tmp_path / "repository")
    checks = ROOT / "_build" / "check"  # make check's caches and nbval's records
    if checks.is_dir():
        shutil.copytree(checks, copy / "_build" / "check")
        eslint_cache = copy / "_build" / "check" / "eslint-cache"  # (files named by absolute path)
        if eslint_cache.is_file():
            eslint_cache.write_text(eslint_cache.read_text().replace(f'"{ROOT}/', f'"{copy}/'))
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "PYTHONPATH")}
    environment.update({
        # The copy's pages import the copy's chapter_lib (the environment's editable install
        # is the repository's).
        "PYTHONPATH": str(copy),
        "GIT_AUTHOR_NAME": "Recipes", "GIT_AUTHOR_EMAIL": "recipes@example.invalid",
        "GIT_COMMITTER_NAME": "Recipes", "GIT_COMMITTER_EMAIL": "recipes@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
        "CHECK_TESTS": " ".join(book_state_tests(copy)),
    })
    git(copy, environment, "init", "-q")
    (copy / ".git" / "info" / "exclude").write_text(".venv\nnode_modules\n")  # (links, not folders)
    (copy / ".venv").symlink_to((ROOT / ".venv").resolve())
    # The environments are the repository's, shared through links: a `make` in the copy must
    # find them up to date, never install into them again (`npm ci` empties node_modules).
    planned = subprocess.run(["make", "-n", "env", "book"], cwd=copy, env=environment, capture_output=True, text=True)
    assert "npm ci" not in planned.stdout and "pip install" not in planned.stdout, (
        f"the repository's .venv or node_modules is not up to date with its sources: run `make book` there first\n{planned.stdout}")
    # The recipes' book, built and accepted as an author's clean tree is: the base they start from.
    # (Built and accepted only if it differs from the repository's, which is built already.)
    for target in ("book", "accept") if put_the_frozen_book_in(copy) else ():
        done = subprocess.run(["make", "-s", target], cwd=copy, env=environment, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        assert done.returncode == 0, (
            f"`make {target}` failed on the recipes' frozen book ({FROZEN.relative_to(ROOT)}), before any recipe: "
            f"if the tools now need what its pages lack, `python -m tests.test_recipes --freeze` copies today's "
            f"book there (check that every recipe still applies to it)\n{done.stdout[-3000:]}")
    git(copy, environment, "add", "-A")
    git(copy, environment, "commit", "-qm", "base")
    return copy, environment


def book_shape_in(copy: Path, environment: dict) -> str:
    return subprocess.run([".venv/bin/python", "-m", "runnable_book.pipeline.book_shape"], cwd=copy, env=environment,
                          capture_output=True, text=True, check=True).stdout


def exercises_in(shape: str) -> int:
    return int(re.search(r" (\d+) exercises \(", shape).group(1))


# Its five `make check`s each start a pytest session of two workers in the copy: a third of
# the suite's 30-minute limit alone, and beside four busy processes and the suite's workers
# (`make test-loaded`) the whole test went past the 30 minutes while its last `make check` ran.
# So its limit is its own, 50 minutes (a hang still meets it; the backstop, pyproject.toml's
# faulthandler_timeout, is above every test's limit: tests/test_time_limits.py), and each
# step's seconds are printed as it ends: a test cut short shows how far it got.
@pytest.mark.timeout(3000)
def test_every_recipe_of_the_authors_guide_runs_as_written_in_one_copy(tmp_path):
    guide = recipes()
    assert guide and all(blocks for _, blocks in guide), f"{GUIDE}: no recipes, or one without a ```bash block"
    copy, environment = scratch_git_repository(tmp_path)
    departures = (copy / accept.REFERENCE.relative_to(ROOT) / accept.DEPARTURES).read_text().splitlines()[1:]
    exercises_before = exercises_in(book_shape_in(copy, environment))

    seconds = []
    for title, blocks in guide:
        for step, block in blocks:
            started = time.monotonic()
            done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=copy, env=environment,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            assert done.returncode == 0, (
                f'{GUIDE.name}, "{title}", step {step} exited {done.returncode}:\n{block}\n{done.stdout[-3000:]}')
            seconds.append(f"{time.monotonic() - started:6.1f} s  {title}, step {step}: {block.splitlines()[0][:60]}")
            print(seconds[-1], flush=True)  # (shown with -s or -rP, and under a test cut short by its limit)

    # Each recipe committed what its build rewrote.
    assert git(copy, environment, "status", "--porcelain") == ""
    # The fidelity check holds, and the departures grew by delivered lines the book no longer holds.
    assert subprocess.run(["make", "-s", "accept"], cwd=copy, env=environment, capture_output=True,
                          text=True, check=True).stdout.startswith("nothing changed\n")
    now = (copy / accept.REFERENCE.relative_to(ROOT) / accept.DEPARTURES).read_text().splitlines()[1:]
    grown = [line for line in now if line not in departures]
    assert grown and set(departures) <= set(now), grown
    assert set(grown) <= set(accept.delivered_lines()), grown
    # The book's shape, as its summary says it, counts the exercise the guide added.
    shape = book_shape_in(copy, environment)
    n = exercises_before + sum(title == "Add an exercise" for title, _ in guide)
    assert f" {n} exercises (" in shape and f"{n} worked solutions" in shape, shape

    # Each recipe's commit changed only what the freeze puts back or the build makes again: an
    # author who commits the result of any recipe (or of all of them) leaves the recipes the
    # same book to start from, so they run again as they ran here.
    base = git(copy, environment, "rev-list", "--max-parents=0", "HEAD").strip()
    commits = git(copy, environment, "rev-list", "--reverse", f"{base}..HEAD").split()
    frozen = set(frozen_files(FROZEN))
    kept = {f"{commit[:8]}: {name}" for commit in commits
            for name in git(copy, environment, "show", "--name-only", "--format=", commit).split()
            if not (name in frozen or any(Path(name).match(p) for p in FROZEN_SOURCES)
                    or made_by_the_build(copy, environment, commit, name))}
    assert kept == set(), (f"a recipe commits files the recipes' frozen book ({FROZEN.relative_to(ROOT)}) does not "
                           f"put back: an author who commits its result would change what the recipes start from: {kept}")


def test_whatever_the_authors_book_says_the_recipes_start_from_the_frozen_one(tmp_path):
    """An author's commits (every page and the table of contents edited, a page added with its
    notebook and accepted text, a page removed): the copy's book becomes the frozen one again."""
    copy = tmp_path / "repository"
    for name in frozen_files(ROOT):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    for name in frozen_files(copy):
        with (copy / name).open("a") as text:
            text.write("\n# An author's line.\n")
    added = "15_99_an_authors_page"
    (copy / "book" / f"{added}.md").write_text("# 15.99 An author's page\n")
    (copy / "book" / f"{added}.ipynb").write_text("{}")
    (copy / "tests" / "book_as_accepted").mkdir(parents=True)
    (copy / "tests" / "book_as_accepted" / f"{added}.txt").write_text("15.99\n")
    removed = frozen_files(copy)[0]
    (copy / removed).unlink()

    assert put_the_frozen_book_in(copy)
    assert {name: (copy / name).read_bytes() for name in frozen_files(copy)} == {
        name: (FROZEN / name).read_bytes() for name in frozen_files(FROZEN)}
    assert not any((copy / name).exists() for name in (
        f"book/{added}.md", f"book/{added}.ipynb", f"tests/book_as_accepted/{added}.txt"))
    assert not put_the_frozen_book_in(copy), "the frozen book put in again changes nothing"


def test_the_frozen_book_is_one_book():
    """Every page its table of contents lists is frozen with it (a page of its own, not a mix)."""
    listed = re.findall(r"^\s*- file: (\S+)$", (FROZEN / "_toc.yml").read_text(), re.M)
    listed += re.findall(r"^root: (\S+)$", (FROZEN / "_toc.yml").read_text(), re.M)
    assert listed and {f"{name}.md" for name in listed} <= set(frozen_files(FROZEN)), listed


if __name__ == "__main__":
    if sys.argv[1:] != ["--freeze"]:
        sys.exit("usage: python -m tests.test_recipes --freeze  (today's book becomes the recipes' book)")
    freeze()
    print(f"{FROZEN.relative_to(ROOT)}: {len(frozen_files(FROZEN))} files frozen from today's book")
