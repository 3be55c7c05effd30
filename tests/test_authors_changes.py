"""An author's changes in a row, each one accepted, leave the suite passing: on one scratch copy.

MAINTAINING.md's loop (edit, `make outputs`, `make accept`, `make test`), three times on
the same copy of the repository, so that no test can hold the book's state as it was: a
reworded sentence, then a changed printed label (a page executed again), then one more
exercise (the recipe "Add an exercise"). After each, the fidelity check
(`accept --check`, what `make test-sources` runs) first fails naming the change, then
passes once accepted, and the departures from the chapter as delivered grow by the line
changed; after the last, the exercise, notebook, shape and fidelity tests pass unedited.

The lines changed are found in the book, not written here: any delivered sentence or
print label the book still holds will do.
"""

from __future__ import annotations

import re

import pytest

from tools.pipeline import accept, book_shape
from tools.pipeline.pages import notebook_pages
from tools.repository import ROOT

pytestmark = pytest.mark.long  # (three rounds of edit, execute, accept, then five test files: about 35 s)

# A plain sentence of prose (no markup to keep intact), and a one-line print with a label.
PLAIN_SENTENCE = re.compile(r"^[A-Z][^*_`\[\]{}<>|#]{40,}\.$")
LABELLED_PRINT = re.compile(r'^print\(f?"[A-Za-z][^"]*".*\)$')


def delivered_line_of_the_book(pattern: re.Pattern, pages: list) -> tuple:
    """(page, line): the first line of a page, in _toc.yml order, that matches pattern and is
    a line of the chapter as delivered still in the book (so changing it is a new departure)."""
    delivered, departed = set(accept.delivered_lines()), set(accept.recorded_departures())
    for md in pages:
        for line in md.read_text().splitlines():
            if pattern.match(line) and line in delivered and line not in departed:
                return md, line
    raise AssertionError(f"no line of the book matches {pattern.pattern} and is delivered")


def departures_said(accepted: str) -> tuple[int, list[str]]:
    """(how many, which are new) from `make accept`'s report."""
    count = re.search(r"^Departures from the chapter as delivered \(.*\): (\d+|none)$", accepted, re.M).group(1)
    return (0 if count == "none" else int(count)), re.findall(r"^  new: (.*)$", accepted, re.M)


def accepted_after_failing(run, page_name: str, changed_line: str, departures_before: int) -> int:
    """`accept --check` fails on the change; `make accept` records it, the changed delivered line
    a new departure; `accept --check` then passes. Returns the departures now."""
    check = run("-m", "tools.pipeline.accept", "--check", check=False)
    assert check.returncode == 1, check.stdout
    assert f"book/{page_name} differs from its accepted text" in check.stderr and "`make accept`" in check.stderr
    assert f"no longer in the book: {changed_line}" in check.stderr, check.stderr
    accepted = run("-m", "tools.pipeline.accept").stdout
    assert f"book/{page_name} (tests/book_as_accepted/" in accepted, accepted
    count, new = departures_said(accepted)
    assert changed_line in new and count == departures_before + len(new), accepted
    run("-m", "tools.pipeline.accept", "--check")
    return count


def test_three_accepted_changes_in_a_row_each_leave_the_fidelity_checks_passing(scratch_repository):
    copy, run = scratch_repository.path, scratch_repository.run
    departures = len(accept.recorded_departures())
    assert (copy / "tests" / "chapter15_as_delivered.txt").read_bytes() == accept.DELIVERED.read_bytes()

    # 1. A reworded sentence: the page's notebook is rewritten, nothing executes.
    md, sentence = delivered_line_of_the_book(PLAIN_SENTENCE, notebook_pages())
    page = copy / md.relative_to(ROOT)
    page.write_text(page.read_text().replace(sentence, sentence[:-1] + ", as its author now puts it.", 1))
    run("-m", "tools.pipeline.execute_pages", "sync", str(page))
    departures = accepted_after_failing(run, md.name, sentence, departures)

    # 2. A changed print label: code and what it prints; the page is executed again.
    pages = [p for p in notebook_pages() if p != book_shape.exercises_page()]
    md, label_line = delivered_line_of_the_book(LABELLED_PRINT, pages)
    page = copy / md.relative_to(ROOT)
    relabelled = re.sub(r'^print\((f?)"', r'print(\1"~ ', label_line)
    page.write_text(page.read_text().replace(label_line, relabelled, 1))
    synced = run("-m", "tools.pipeline.execute_pages", "sync", str(page)).stdout
    assert f"executed  book/{md.stem}.ipynb" in synced, synced
    departures = accepted_after_failing(run, md.name, label_line, departures)
    assert "~ " in (copy / "tests" / "book_as_accepted" / f"{md.stem}.txt").read_text()
    second_page = md.stem

    # 3. One more exercise, after the last (MAINTAINING.md, "Add an exercise"): no test names a count.
    from test_book_shape import NEXT_EXERCISE

    n = book_shape.exercise_numbers()[-1] + 1
    page = copy / "book" / book_shape.exercises_page().name
    page.write_text(page.read_text() + NEXT_EXERCISE.replace("@N@", str(n)))
    run("-m", "tools.pipeline.extract_library")  # writes solution_N and the package's imports of it
    assert (copy / "chapter_lib" / "exercises" / f"solution_{n}.py").exists()
    assert f"from chapter_lib.exercises.solution_{n} import *" in (copy / "chapter_lib" / "exercises" / "__init__.py").read_text()
    # `make outputs`: executes the exercises page alone (no other page uses the new solution);
    # every other notebook is written again, its install cell naming the library that now holds it.
    synced = run("-m", "tools.pipeline.execute_pages", "sync").stdout
    assert synced.count("executed  ") == 1 and f"executed  book/{page.stem}.ipynb" in synced, synced
    accepted = run("-m", "tools.pipeline.accept").stdout
    assert f"+ ## Exercise {n}" in accepted and departures_said(accepted) == (departures, []), accepted
    run("-m", "tools.pipeline.accept", "--check")
    shape = run("-m", "tools.pipeline.book_shape").stdout
    assert f" {n} exercises (" in shape and f"{n} worked solutions" in shape, shape
    # The tests of the book's content, unedited, on the changed copy (each page's byte-stability
    # test only where a page changed: the others are the ones this run's own test checks).
    tests = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not site",
                "tests/test_exercises.py", "tests/test_myst_to_notebook.py", "tests/test_fidelity.py",
                "tests/test_book_shape.py", "tests/test_execute_pages.py",
                "-k", f"not nbval and not inputs_digest and (not byte_for_byte or {page.stem} or {second_page})")
    assert " passed" in tests.stdout and " failed" not in tests.stdout
    assert run("-m", "tools.pipeline.accept").stdout.startswith("nothing changed\n")
