"""Two editions: after the library changes, a notebook of the earlier edition still installs
that edition's library and prints that edition's outputs.

A scratch repository holds what installing chapter_lib needs (pyproject.toml, chapter_lib/).
Edition A is its first commit, released (`make release`'s record in pyproject.toml, and its
tag). Then a saved function changes (the corpus 15.3 reads: Aurora's region is another) and
is committed: edition B, not released. Each notebook of 15.3 is made as the build makes it
(runnable_book/pipeline/reader_notebook.py: the committed notebook's install cell, and the copy the
site publishes), its repository and site replaced by local stand-ins; the site serves only
the latest edition's wheel, B's, as the published book does once B is out (its folder is
named by its library's digest, so A's notebooks find nothing there). In fresh environments
(pip and this machine's package index: a git install builds chapter_lib):

* A's published notebook installs from A's commit and prints what the book stores for 15.3;
* A's committed notebook (what Colab opens at A) installs from A's tag, and prints the same;
* B's published notebook installs B's wheel from the site (its sha256 checked) and prints
  B's region; B's committed notebook names no tag (its library is no release's);
* then, in that same environment (B's library installed, with A's very version number), A's
  committed notebook replaces it with A's (told apart by content) and prints A's outputs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from fresh_environment import code_of, fresh_environment, installed_from, made_venv, run_as_kernel, stored_stdout
from runnable_book.pipeline import edition
from runnable_book.repository import ROOT
from runnable_book.pipeline.install_cell import INSTALL_TAG, repository_url, served_wheel, site_url
from runnable_book.pipeline.reader_notebook import page_install_cell, published_notebook
from runnable_book.release.release import with_release_record

pytestmark = pytest.mark.long

PAGE = ROOT / "book" / "15_03_agentic_loop.ipynb"  # runs on chapter_lib alone; prints Aurora's region
A_REGION, B_REGION = "us-east-2", "eu-west-1"
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "init.defaultBranch=main"]


@pytest.fixture(scope="module")
def new_venv(tmp_path_factory) -> Path:
    return made_venv(tmp_path_factory)


def git(repository: Path, *arguments: str) -> str:
    return subprocess.run([*GIT, *arguments], cwd=repository, capture_output=True, text=True, check=True).stdout.strip()


def wheel_of(repository: Path, where: Path) -> Path:
    """The library's wheel as the build makes it (runnable_book/pipeline/artefact_steps.py, wheel_step):
    this environment's setuptools, from a copy (a build leaves build/ in its source folder)."""
    source = where / "source"
    shutil.copytree(repository, source, ignore=shutil.ignore_patterns(".git"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    str(source), "-w", str(where)], check=True, capture_output=True,
                   env={**os.environ, "SOURCE_DATE_EPOCH": "315532800"})
    return next(where.glob("chapter_lib-*.whl"))


def serve(site: Path, repository: Path, wheel: Path) -> str:
    """The site's wheel folder holds this library's wheel alone (runnable_book/sphinx_ext/edition_on_pages.py);
    returns its sha256."""
    shutil.rmtree(site, ignore_errors=True)
    target = site / served_wheel(repository)
    target.parent.mkdir(parents=True)
    shutil.copyfile(wheel, target)
    return hashlib.sha256(target.read_bytes()).hexdigest()


def with_install_cell(reader, cell_source: str, repository: Path, site: Path):
    """``reader`` with ``cell_source`` as its install cell, its repository and site the local ones.
    (file://localhost/: pip before 24 rejects a file URL without a host in `name @ url`.)"""
    reader = nbformat.from_dict(reader)
    source = (cell_source.replace(f"git+{repository_url()}@", f"git+file://localhost{repository}@")
              .replace(f"{site_url()}/", f"file://localhost{site}/"))
    reader.cells[0].source = source
    assert INSTALL_TAG in reader.cells[0].metadata.tags
    return reader


def sources(notebook) -> list[str]:
    return [line.split('"')[-2] for line in notebook.cells[0].source.splitlines() if '"chapter-lib @ ' in line]


@pytest.mark.kernel  # (a notebook executed in a fresh environment)
def test_a_notebook_of_an_earlier_edition_installs_and_prints_that_edition(new_venv, tmp_path):
    stored = nbformat.read(PAGE, as_version=4)
    assert any(f"read: Aurora region {A_REGION}" in printed for printed in stored_stdout(stored))
    repository = tmp_path / "repository"
    repository.mkdir()
    shutil.copy(ROOT / "pyproject.toml", repository)
    shutil.copytree(ROOT / "chapter_lib", repository / "chapter_lib", ignore=shutil.ignore_patterns("__pycache__"))
    site = tmp_path / "site"

    # Edition A, released: its record, its commit, its tag.
    pyproject = repository / "pyproject.toml"
    version = edition.version(repository)
    pyproject.write_text(with_release_record(pyproject.read_text(), version, edition.library_digest(repository)))
    git(repository, "init", "-q")
    git(repository, "add", "-A")
    git(repository, "commit", "-qm", "edition A")
    git(repository, "tag", f"v{version}")
    a = edition.current(repository)
    assert a.commit and edition.released_tag(repository) == f"v{version}"
    a_sha = serve(site, repository, wheel_of(repository, tmp_path / "wheel-a"))
    a_published = with_install_cell(stored, published_notebook(stored, a, a_sha, repository).cells[0].source,
                                    repository, site)
    a_committed = with_install_cell(stored, page_install_cell(stored, root=repository).source, repository, site)
    assert sources(a_committed)[-1] == f"chapter-lib @ git+file://localhost{repository}@v{version}"

    # Edition B: a saved function changed, committed, not released; the site now serves B.
    module = repository / "chapter_lib" / "chapter15.py"
    assert f"Aurora runs in region {A_REGION}." in module.read_text()
    module.write_text(module.read_text().replace(f"Aurora runs in region {A_REGION}.", f"Aurora runs in region {B_REGION}."))
    git(repository, "commit", "-qam", "edition B: Aurora moved")
    b = edition.current(repository)
    assert b.commit != a.commit and edition.released_tag(repository) is None
    b_sha = serve(site, repository, wheel_of(repository, tmp_path / "wheel-b"))
    b_published = with_install_cell(stored, published_notebook(stored, b, b_sha, repository).cells[0].source,
                                    repository, site)
    b_committed = page_install_cell(stored, root=repository)
    assert [s for s in sources(nbformat.from_dict({"cells": [b_committed]})) if "git+" in s] == [], \
        "B's library is no release's: its committed notebook names no tag"

    # A's notebooks, after B: A's library (from A's commit, then from A's tag), A's outputs.
    for name, notebook, expected_source in (("a-published", a_published, {"vcs_info": {"commit_id": a.commit}}),
                                            ("a-committed", a_committed, {"vcs_info": {"requested_revision": f"v{version}"}})):
        where = tmp_path / name
        where.mkdir()
        python = fresh_environment(new_venv, where)
        run = run_as_kernel(python, code_of(notebook), where)
        assert run.returncode == 0, f"{name}:\n{run.stderr[-3000:]}"
        source = installed_from(python)
        for key, value in expected_source["vcs_info"].items():
            assert source.get("vcs_info", {}).get(key) == value, f"{name} installed chapter_lib from {source}"
        assert source["vcs_info"]["commit_id"] == a.commit, f"{name} installed another commit than A's: {source}"
        printed = run.stdout.split("--- next cell ---\n")
        assert printed == stored_stdout(stored), f"{name} did not print A's outputs"

    # B's published notebook: B's wheel from the site, B's region.
    where = tmp_path / "b-published"
    where.mkdir()
    python = fresh_environment(new_venv, where)
    run = run_as_kernel(python, code_of(b_published), where)
    assert run.returncode == 0, run.stderr[-3000:]
    assert installed_from(python)["url"] == f"file://localhost{site}/{served_wheel(repository)}"
    assert f"read: Aurora region {B_REGION} [d03]" in run.stdout, run.stdout
    assert f"read: Aurora region {A_REGION}" not in run.stdout, run.stdout

    # A's committed notebook where B's library is installed under the same version: replaced by A's.
    assert edition.version(repository) == version, "B kept A's version, as every unreleased commit does"
    run = run_as_kernel(python, code_of(a_committed), where)
    assert run.returncode == 0, run.stderr[-3000:]
    assert installed_from(python).get("vcs_info", {}).get("commit_id") == a.commit, "B's library was kept"
    assert run.stdout.split("--- next cell ---\n") == stored_stdout(stored), "A's notebook did not print A's outputs"
