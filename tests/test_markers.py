"""The markers are honest (tests/markers.py): a test that builds the whole book, or starts a
browser, cannot do it without its marker, and a fixture's needs reach the tests that request it.

Planted tests, run by pytest with the markers plugin alone (`-p markers`): each unmarked one
reaches for the book's build another way, and fails before anything runs, naming the marker;
the marked ones (by hand, or through a fixture) are let through to stand-ins. And `make check`
leaves out every need a test can have: its selection names them all.
"""

from __future__ import annotations

import re
import subprocess
import sys

from markers import NEEDS
from runnable_book.repository import ROOT

PLANTED = '''
import contextlib
import subprocess
import sys

import pytest
from markers import needs

from runnable_book.pipeline import site_build, artefact_graph, execute_pages
from runnable_book.pipeline.pages import notebook_pages


def test_runs_the_graph():
    artefact_graph.main(["outputs"])


def test_runs_the_graph_as_a_program():
    subprocess.run([sys.executable, "-m", "runnable_book.pipeline.artefact_graph", "book"], check=True)


def test_makes_the_book():
    subprocess.run(["make", "html"], check=True)


def test_executes_a_page_of_the_book():
    execute_pages.execute(notebook_pages()[0], None)


def test_runs_the_books_pages_under_nbval():
    subprocess.run([sys.executable, "-m", "pytest", "--nbval", str(notebook_pages()[0].with_suffix(".ipynb"))])


def test_starts_a_browser():
    from playwright.sync_api import sync_playwright

    sync_playwright()


def stand_in_graph(monkeypatch):
    monkeypatch.setattr(site_build, "run_graph", lambda arguments, doit: 0)
    monkeypatch.setattr(artefact_graph, "one_build_at_a_time", lambda lock, command: contextlib.nullcontext())


@pytest.mark.whole_book
def test_marked_by_hand(monkeypatch):
    stand_in_graph(monkeypatch)
    assert artefact_graph.main(["book"]) == 0


@pytest.fixture
@needs("whole_book")
def a_built_book(monkeypatch):
    stand_in_graph(monkeypatch)


def test_marked_through_its_fixture(a_built_book):
    assert artefact_graph.main(["book"]) == 0


def test_asks_make_only_for_its_help():
    subprocess.run(["make", "--no-print-directory", "help"], check=True, capture_output=True)


@pytest.fixture(scope="module")
def graph_run_once():  # (set up before any test's own hold: held to the first requesting test's markers)
    artefact_graph.main(["outputs"])


def test_requests_a_module_fixture_that_runs_the_graph(graph_run_once):
    pass
'''


def planted_run(tmp_path) -> subprocess.CompletedProcess:
    (tmp_path / "test_planted.py").write_text(PLANTED)
    return subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
                           "-p", "markers", "-q", "-rA", str(tmp_path / "test_planted.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{ROOT / 'tests'}:{ROOT}"})


def test_a_test_that_reaches_for_a_whole_book_build_without_its_marker_fails_naming_it(tmp_path):
    """(test_marked_through_its_fixture passes only if its fixture's need became its marker.)"""
    done = planted_run(tmp_path)
    outcomes = {name: outcome for outcome, name in re.findall(r"^(PASSED|FAILED|ERROR) \S+::(\w+)", done.stdout, re.M)}
    assert outcomes == {
        "test_runs_the_graph": "FAILED", "test_runs_the_graph_as_a_program": "FAILED", "test_makes_the_book": "FAILED",
        "test_executes_a_page_of_the_book": "FAILED", "test_runs_the_books_pages_under_nbval": "FAILED",
        "test_starts_a_browser": "FAILED", "test_marked_by_hand": "PASSED", "test_marked_through_its_fixture": "PASSED",
        "test_asks_make_only_for_its_help": "PASSED", "test_requests_a_module_fixture_that_runs_the_graph": "ERROR"}, \
        done.stdout + done.stderr
    refusals = re.findall(r"UnmarkedNeed: \S+::(\w+) (.*), which needs the `(\w+)` marker", done.stdout)
    assert {name: marker for name, _, marker in refusals} == {
        "test_runs_the_graph": "whole_book", "test_runs_the_graph_as_a_program": "whole_book",
        "test_makes_the_book": "whole_book", "test_executes_a_page_of_the_book": "whole_book",
        "test_runs_the_books_pages_under_nbval": "whole_book", "test_starts_a_browser": "browser",
        "test_requests_a_module_fixture_that_runs_the_graph": "whole_book"}, done.stdout


def test_make_check_leaves_out_every_need_and_make_help_lists_it():
    makefile = (ROOT / "Makefile").read_text()
    selection = re.search(r'^CHECK_SELECTION := (.*)$', makefile, re.M).group(1)
    assert {f"not {need}" for need in NEEDS} == set(re.findall(r"not \w+", selection)), selection
    listed = subprocess.run(["make", "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True).stdout
    assert re.search(r"^  make check +\S", listed, re.M), listed
