"""`make release VERSION=x.y.z` (runnable_book/release): what it refuses, and the release it makes.

* In a scratch copy of the repository (a git checkout of its own), a working tree with a
  changed file, or an untracked one, is refused before anything runs (`make test` included),
  saying why, and nothing is changed: not a file, not a commit, not a tag. So are a version
  not above the current one and a number that is no release.
* The release itself, in a scratch copy, with `make test` stood in for by a pass (the
  refusal of a red one is the same code path as above; the whole suite inside a test would
  be a second `make test`): one commit, chapter_lib's version bumped, the library the release
  holds recorded, CHANGELOG.md's entries under the version and today's date with an empty
  Unreleased section above, every reader's notebook naming the version and installing from
  the release's tag, the tag on the commit, and a clean tree. A release whose last step
  fails leaves the commit, the files and the tags as they were.
* CHANGELOG.md's move, and pyproject.toml's edits, as functions.
"""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from runnable_book.pipeline import edition
from runnable_book.repository import ROOT
from runnable_book.pipeline.pages import notebook_pages
from runnable_book.release.changelog import ChangelogError, released
from runnable_book.release.release import Refused, release_number, with_release_record, with_version

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "init.defaultBranch=main"]
ENTRY = "- **Readers:** a change worth an edition."


def git(path, *arguments: str) -> str:
    return subprocess.run([*GIT, *arguments], cwd=path, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def checkout(scratch_repository):
    """The scratch copy as a checkout of its own, one commit, an entry under Unreleased."""
    changelog = scratch_repository.path / "CHANGELOG.md"
    changelog.write_text(changelog.read_text().replace("## [Unreleased]\n\n### Added\n",
                                                       f"## [Unreleased]\n\n### Added\n\n{ENTRY}\n", 1))
    git(scratch_repository.path, "init", "-q")
    git(scratch_repository.path, "add", "-A")
    git(scratch_repository.path, "commit", "-qm", "the book")
    return scratch_repository


def state(path) -> tuple:
    """What a refused release must leave as it was: the files it rewrites, commits, tags."""
    return ((path / "pyproject.toml").read_text(), (path / "CHANGELOG.md").read_text(),
            git(path, "rev-parse", "HEAD"), git(path, "tag", "--list"), git(path, "status", "--porcelain"))


def next_version() -> str:
    major, minor, *_ = edition.version().split(".")
    return f"{major}.{int(minor) + 1}.0"


@pytest.mark.parametrize("dirt", ["changed", "untracked"])
def test_a_release_refuses_a_dirty_tree_before_anything_runs(checkout, dirt):
    path = checkout.path
    if dirt == "changed":
        (path / "README.md").write_text((path / "README.md").read_text() + "\nA sentence not committed.\n")
    else:
        (path / "notes.txt").write_text("a file not committed")
    before = state(path)
    started = time.monotonic()
    done = checkout.run("-m", "runnable_book.release", next_version(), check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "make release: refused, nothing was changed: the working tree has uncommitted changes" in done.stderr
    assert ("README.md" if dirt == "changed" else "notes.txt") in done.stderr, "the refusal names what is not committed"
    assert "make test" not in done.stdout, "`make test` ran before the refusal"
    assert time.monotonic() - started < 60
    assert state(path) == before


def test_a_release_refuses_a_version_not_above_the_current_one(checkout):
    before = state(checkout.path)
    done = checkout.run("-m", "runnable_book.release", edition.version(), check=False)
    assert done.returncode == 1 and f"is not above chapter_lib's version, {edition.version()}" in done.stderr, done.stderr
    assert state(checkout.path) == before


@pytest.mark.parametrize("number", ["15.1", "15.1.0", "16.0.0"])
def test_a_release_number_is_a_final_release(number):
    assert str(release_number(number)) == number


@pytest.mark.parametrize("number", ["15.1.0rc1", "15.1.0.dev0", "15.1.0+local", "v15.1.0", "next", "15.01.0"])
def test_anything_else_is_refused_as_a_release_number(number):
    with pytest.raises(Refused, match="is not a release number"):
        release_number(number)


# Stands in for `make test` (passing): the rest of the release runs as `make release` runs it.
RELEASE_WITH_TESTS_PASSED = """import sys
from runnable_book.release import release
release.run_make_test = lambda: print("(make test: stood in for by the test)")
sys.exit(release.main(sys.argv[1:]))
"""


# `make test` as the Makefile runs it, its stages two: one that passes and one that fails.
RELEASE_WITH_A_RED_STAGE = """import sys
from runnable_book.release import release
release.MAKE_TEST = ["make", "--no-print-directory", "test", "TEST_STAGES=help a-stage-that-fails"]
sys.exit(release.main(sys.argv[1:]))
"""


def test_a_release_refused_by_a_red_make_test_says_which_stage_failed_and_where_to_look(checkout):
    path = checkout.path
    before = state(path)
    done = checkout.run("-c", RELEASE_WITH_A_RED_STAGE, next_version(), check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    refusal = done.stderr.strip().splitlines()[-1]
    assert refusal.startswith("make release: refused, nothing was changed: `make test` failed at its stage "
                              "`a-stage-that-fails` (`make a-stage-that-fails` runs that stage alone"), refusal
    assert "_build/release/make-test.log" in refusal, refusal
    log = (path / "_build" / "release" / "make-test.log").read_text()
    assert "make help" in log and "No rule to make target 'a-stage-that-fails'" in log, log[-2000:]
    assert state(path) == before


def test_a_release_is_one_commit_and_its_tag_naming_the_version(checkout):
    path = checkout.path
    version = next_version()
    head = git(path, "rev-parse", "HEAD")
    done = checkout.run("-c", RELEASE_WITH_TESTS_PASSED, version)
    # What it says to do next is what the guide says.
    pushed = re.search(rf"git push origin (\S+) v{re.escape(version)}\b", done.stdout)
    guide = re.search(r"^git push origin (\S+) v\S+$", (ROOT / "docs" / "publishing.md").read_text(), re.M)
    assert pushed and guide and pushed.group(1) == guide.group(1), (done.stdout, guide and guide.group(0))
    assert git(path, "status", "--porcelain") == "", "the release left changes uncommitted"
    assert git(path, "rev-parse", "HEAD~1") == head, "a release is one commit"
    assert git(path, "rev-parse", f"v{version}^{{commit}}") == git(path, "rev-parse", "HEAD")
    assert edition.version(path) == version
    assert edition.released_tag(path) == f"v{version}", "the library the release holds is recorded"
    changelog = (path / "CHANGELOG.md").read_text()
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert re.search(rf"## \[Unreleased\]\n\n### Added\n\n### Changed\n\n### Fixed\n\n### Security\n\n"
                     rf"## \[{re.escape(version)}\] - {today}\n\n### Added\n\n{re.escape(ENTRY)}\n", changelog)
    changed = set(git(path, "diff", "--name-only", "HEAD~1", "HEAD").splitlines())
    notebooks = {md.relative_to(md.parents[1]).with_suffix(".ipynb").as_posix() for md in notebook_pages()}
    assert changed <= {"pyproject.toml", "CHANGELOG.md", *notebooks}, changed
    for notebook in notebooks:
        text = (path / notebook).read_text()
        if "chapter-lib @" in text:
            assert f"Edition {version} " in text and f'@v{version}\\"' in text, f"{notebook} does not install v{version}"


# As above, and the tag cannot be made (a stand-in for any step that fails after the first write).
RELEASE_WHOSE_TAG_FAILS = RELEASE_WITH_TESTS_PASSED.replace("sys.exit(", """real_git = release.git
def git(*arguments, check=True):
    if arguments[0] == "tag":
        raise release.subprocess.CalledProcessError(128, "git tag", stderr="fatal: no tag today")
    return real_git(*arguments, check=check)
release.git = git
sys.exit(""")


def test_a_release_that_fails_midway_leaves_the_tree_as_it_found_it(checkout):
    path = checkout.path
    before = state(path)
    done = checkout.run("-c", RELEASE_WHOSE_TAG_FAILS, next_version(), check=False)
    assert done.returncode == 1 and "the files it had changed are restored" in done.stderr, done.stderr
    assert "fatal: no tag today" in done.stderr
    assert state(path) == before, "a failed release left a commit, a file or a tag behind"


def test_the_changelogs_unreleased_entries_move_under_the_version():
    text = ("# Changelog\n\nIntro.\n\n## [Unreleased]\n\n### Added\n\n- **Readers:** a.\n- **Authors:** b.\n\n"
            "### Changed\n\n### Fixed\n\n- **Readers:** c.\n\n## [1.0.0]\n\nThe first.\n")
    assert released(text, "1.1.0", "2031-05-06") == (
        "# Changelog\n\nIntro.\n\n## [Unreleased]\n\n### Added\n\n### Changed\n\n### Fixed\n\n"
        "## [1.1.0] - 2031-05-06\n\n### Added\n\n- **Readers:** a.\n- **Authors:** b.\n\n### Fixed\n\n- **Readers:** c.\n\n"
        "## [1.0.0]\n\nThe first.\n")
    with pytest.raises(ChangelogError, match="has no entry"):
        released(text.replace("- **Readers:** a.\n- **Authors:** b.\n", "").replace("- **Readers:** c.\n", ""), "1.1.0", "x")
    with pytest.raises(ChangelogError, match="already has a section for 1.0.0"):
        released(text, "1.0.0", "x")
    with pytest.raises(ChangelogError, match="no `## \\[Unreleased\\]` heading"):
        released("# Changelog\n", "1.1.0", "x")


def test_pyproject_gets_the_version_and_the_release_record_and_keeps_the_rest():
    text = '[build-system]\nrequires = ["setuptools>=68"]\n\n[project]\nname = "x"\nversion = "1.0.0"  \n' \
           'requires-python = ">=3.11"\n\n[tool.pytest.ini_options]\n# a comment\n'
    bumped = with_version(text.replace('"1.0.0"  \n', '"1.0.0"\n'), "1.1.0")
    assert 'version = "1.1.0"\n' in bumped and "# a comment" in bumped
    recorded = with_release_record(bumped, "1.1.0", "abc")
    assert recorded.startswith(bumped.rstrip("\n") + "\n\n[tool.editions]\n")
    assert recorded.endswith('release = "1.1.0"\nrelease-library = "abc"\n')
    again = with_release_record(recorded, "1.2.0", "def")
    assert again.count("[tool.editions]") == 1 and again.endswith('release = "1.2.0"\nrelease-library = "def"\n')
