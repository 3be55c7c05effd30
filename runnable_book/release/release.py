"""`make release VERSION=x.y.z` (runnable_book/release/__init__.py says what it does and refuses)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

from packaging.version import InvalidVersion, Version

from runnable_book.pipeline import edition
from runnable_book.repository import ROOT
from runnable_book.release.changelog import ChangelogError, released

CHANGELOG = ROOT / "CHANGELOG.md"
PYPROJECT = ROOT / "pyproject.toml"
# What a release rewrites and commits (a step that fails restores the commit it started from:
# nothing is left half-released).
REWRITTEN = ["pyproject.toml", "CHANGELOG.md", "book"]
RECORD_TABLE = "[tool.editions]"
RECORD_COMMENT = """\
# Written by `make release` (runnable_book/release): the last release and the digest of the chapter_lib
# it holds (runnable_book/pipeline/edition.py). While the library is still that one, a reader's notebook
# also installs it from the release's tag, which lasts as long as the repository.
"""


# `make test`, as the release runs it, and where its output is kept: a red suite prints thousands
# of lines, and the reason a release was refused must not scroll away with them.
MAKE_TEST = ["make", "test"]
MAKE_TEST_LOG = ROOT / "_build" / "release" / "make-test.log"


class Refused(Exception):
    """The release cannot be made; nothing was changed. Says why and what to do."""


def git(*arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", f"safe.directory={ROOT}", *arguments], cwd=ROOT, capture_output=True,
                          text=True, check=check)


def release_number(text: str) -> Version:
    try:
        number = Version(text)
    except InvalidVersion:
        number = None
    if number is None or number.is_prerelease or number.is_postrelease or number.local or str(number) != text:
        raise Refused(f"VERSION={text} is not a release number: write it as x.y.z (e.g. 15.1.0)")
    return number


def check_releasable(number: Version) -> None:
    """Every refusal that needs no `make test`, before it: none of them changes a file."""
    if not edition.in_a_checkout(ROOT):
        raise Refused(f"{ROOT} is not a git checkout: a release is a commit and its tag")
    changes = edition.uncommitted(ROOT)
    if changes:
        listed = "; ".join(line.strip() for line in changes[:5]) + ("; …" if len(changes) > 5 else "")
        raise Refused(f"the working tree has uncommitted changes ({listed}): commit or stash them first, "
                      "as the release is the commit its notebooks and its tag name")
    current = Version(edition.version())
    if number <= current:
        raise Refused(f"VERSION={number} is not above chapter_lib's version, {current} (pyproject.toml)")
    if git("rev-parse", "--quiet", "--verify", f"refs/tags/v{number}", check=False).returncode == 0:
        raise Refused(f"the tag v{number} exists already: release another version")
    try:
        released(CHANGELOG.read_text(encoding="utf-8"), str(number), "0000-00-00")
    except ChangelogError as error:
        raise Refused(str(error)) from None


def run_make_test() -> None:
    print("make release: running `make test` first (a red test refuses the release)", flush=True)
    returncode, output = shown_and_kept(MAKE_TEST, MAKE_TEST_LOG)
    if returncode != 0:
        log = MAKE_TEST_LOG.relative_to(ROOT)
        # The Makefile's `test` names the stage that failed (its last words on a failure).
        stage = re.findall(r"^make test: the stage (\S+) failed", output, re.M)
        where = (f"at its stage `{stage[-1]}` (`make {stage[-1]}` runs that stage alone; "
                 "docs/maintaining.md, \"The suite\", says what each stage checks)" if stage else "before its stages")
        raise Refused(f"`make test` failed {where}; its whole output is in {log}, the failure near its end: "
                      "fix it, commit, and release again")
    if edition.uncommitted(ROOT):
        raise Refused("`make test` changed tracked files (`git status`): the tested tree is not the committed one")


def shown_and_kept(command: list[str], log: Path) -> tuple[int, str]:
    """Run ``command`` from the repository's root, its output (stdout and stderr, as they come)
    shown as it runs and written to ``log``; its exit status and that output."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as kept, subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE,
                                                  stderr=subprocess.STDOUT) as running:
        while chunk := running.stdout.read1(65536):
            sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
            kept.write(chunk)
    return running.returncode, log.read_text(errors="replace")


def with_version(text: str, number: str) -> str:
    """pyproject.toml's text with [project]'s version set (its comments and layout kept)."""
    project = text.index("[project]")
    found = re.compile(r'^version = "[^"]*"$', re.M).search(text, project)
    if found is None:
        raise Refused("pyproject.toml: no `version = \"...\"` line in [project]")
    return text[:found.start()] + f'version = "{number}"' + text[found.end():]


def with_release_record(text: str, number: str, library: str) -> str:
    """pyproject.toml's text with [tool.editions] naming the release and its library's digest."""
    record = f'{RECORD_TABLE}\n{RECORD_COMMENT}release = "{number}"\nrelease-library = "{library}"\n'
    start = text.find(RECORD_TABLE + "\n")
    if start < 0:
        return text.rstrip("\n") + "\n\n" + record
    following = re.compile(r"^\[", re.M).search(text, start + len(RECORD_TABLE))
    end = following.start() if following else len(text)
    return text[:start] + record + ("\n" if following else "") + text[end:]


def rewrite(number: Version) -> None:
    PYPROJECT.write_text(with_version(PYPROJECT.read_text(encoding="utf-8"), str(number)), encoding="utf-8")
    library = edition.library_digest()  # (of the library under its new version)
    PYPROJECT.write_text(with_release_record(PYPROJECT.read_text(encoding="utf-8"), str(number), library),
                         encoding="utf-8")
    today = time.strftime("%Y-%m-%d", time.gmtime())
    CHANGELOG.write_text(released(CHANGELOG.read_text(encoding="utf-8"), str(number), today), encoding="utf-8")
    # The reader's notebooks name the version and the release's tag: written again (no page
    # runs: their inputs are unchanged), then checked as `make test` checks them.
    for step in (["-m", "runnable_book.pipeline.artefact_graph", "outputs"], ["-m", "runnable_book.pipeline.execute_pages", "check"]):
        if subprocess.run([sys.executable, *step], cwd=ROOT).returncode != 0:
            raise RuntimeError(f"`python {' '.join(step)}` failed (above)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make release VERSION=x.y.z", description=__doc__)
    parser.add_argument("version", help="the new edition's number, x.y.z")
    args = parser.parse_args(argv)
    try:
        number = release_number(args.version)
        check_releasable(number)
        run_make_test()
    except Refused as refusal:
        print(f"make release: refused, nothing was changed: {refusal}.", file=sys.stderr)
        return 1
    before = git("rev-parse", "HEAD").stdout.strip()
    try:
        rewrite(number)
        git("add", "--", *REWRITTEN)
        git("commit", "--quiet", "-m", f"Release {number}: edition {number} of the book (CHANGELOG.md)")
        git("tag", "--annotate", f"v{number}", "-m", f"Edition {number}")
    except (RuntimeError, Refused, ChangelogError, subprocess.CalledProcessError) as error:
        said = getattr(error, "stderr", "") or ""
        # The tree was clean before (checked): back to that commit and those files, nothing kept.
        git("reset", "--quiet", "--hard", before, check=False)
        print(f"make release: stopped, and the files it had changed are restored: {error} {said}".rstrip(),
              file=sys.stderr)
        return 1
    commit = git("rev-parse", "HEAD").stdout.strip()
    published_by = (" (the pages workflow tests the commit and publishes it; docs/publishing.md)"
                    if (ROOT / ".github" / "workflows" / "pages.yml").is_file() else "")
    print(f"Released edition {number}: commit {commit[:edition.SHORT]}, tag v{number}.\n"
          f"Publish it: git push origin HEAD v{number}{published_by}.")
    return 0
