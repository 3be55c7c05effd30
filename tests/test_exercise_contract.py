"""An exercise's contract is part of the build (runnable_book/pipeline/exercise_contract.py): every
worked solution passes its check, every untouched start cell gets `not attempted` from the
grader; `make book` fails a page that breaks it, naming the exercise, the failing case and what
changed since the page last passed, and `make accept` refuses to record it.

The verdicts are read from the book (its exercise page, its stored outputs, its checks), and
the breaches planted: in memory for the readers of outputs, in a scratch copy of the
repository for the build (the library's `assess` changed as an author might).
"""

from __future__ import annotations

import contextlib
import io
import re

import nbformat
import pytest

from chapter_lib.exercises.harness import VERDICT_HEADING
from runnable_book.pipeline import book_shape, exercise_contract
from runnable_book.repository import ROOT

PAGE = book_shape.exercises_page()


def stored():
    return nbformat.read(PAGE.with_suffix(".ipynb"), as_version=4)


def in_the_kernel(cases) -> str:
    """What the kernel cell prints for ``cases`` (run here, in this Python, as the kernel runs it)."""
    code = exercise_contract.kernel_code(cases)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(code, {})
    return printed.getvalue()


def test_every_checked_exercise_is_held_and_the_stored_book_keeps_its_contract():
    checked = exercise_contract.checked_exercises(PAGE)
    assert sorted(checked) == sorted(book_shape.checks()), "the contract holds every exercise with a check"
    assert exercise_contract.solution_failures(PAGE, stored(), VERDICT_HEADING) == []


def test_a_worked_solution_that_fails_its_check_is_named_with_its_first_failing_case():
    number = min(exercise_contract.checked_exercises(PAGE))
    nb = stored()
    index, lines = exercise_contract.first_verdicts(PAGE, nb, VERDICT_HEADING)[number]
    cell = [c for c in nb.cells if c.cell_type == "code"][index]
    output = next(o for o in cell.outputs if o.get("name") == "stdout")
    first_case = lines[1].strip().split(": ", 1)[0].removeprefix("ok").strip()
    output.text = output.text.replace(lines[0], lines[0].replace("PASS", "FAIL", 1), 1).replace(
        lines[1], lines[1].replace("  ok  ", "  FAIL", 1), 1)
    problems = exercise_contract.solution_failures(PAGE, nb, VERDICT_HEADING)
    assert len(problems) == 1, problems
    assert f"exercise {number}'s worked solution fails its check: FAIL  exercise {number} " in problems[0]
    assert f"first failing case: {first_case}" in problems[0] and f"code cell {index + 1} (line " in problems[0]


def test_a_worked_solution_that_never_calls_its_check_breaks_the_contract():
    number = min(exercise_contract.checked_exercises(PAGE))
    nb = stored()
    index, _ = exercise_contract.first_verdicts(PAGE, nb, VERDICT_HEADING)[number]
    [c for c in nb.cells if c.cell_type == "code"][index].outputs = []
    assert [f"exercise {number} has a check, and its worked solution's cells never call it" in problem
            for problem in exercise_contract.solution_failures(PAGE, nb, VERDICT_HEADING)] == [True]


def test_every_untouched_start_cell_fails_its_check_as_the_grader_reads_it():
    cases = [(number, start, call) for number, (start, call) in exercise_contract.checked_exercises(PAGE).items()]
    report = exercise_contract.kernel_report(in_the_kernel(cases))
    assert "error" not in report and sorted(map(int, report["untouched"])) == [n for n, _, _ in cases]
    assert exercise_contract.untouched_earns(PAGE, report, re.compile(report["verdict_heading"])) == []


def test_a_start_cell_whose_stub_already_passes_is_named():
    """Planted: exercise 6's start cell with the worked router in place of its stub."""
    checked = exercise_contract.checked_exercises(PAGE)
    number = next(n for n, (_, call) in checked.items() if call.startswith("check_router("))
    start, call = checked[number]
    planted = start.replace("    raise NotImplementedError", "    from chapter_lib.exercises import route_question\n"
                                                               "    return route_question(text, groups)")
    assert planted != start
    report = exercise_contract.kernel_report(in_the_kernel([(number, planted, call)]))
    heading = re.compile(report["verdict_heading"])
    report["untouched"] = {**{str(n): "" for n in checked}, **report["untouched"]}
    problems = exercise_contract.untouched_earns(PAGE, report, heading)
    assert len(problems) == 1 and f"exercise {number}'s start cell, untouched, passes its check" in problems[0]
    assert "`not attempted`" in problems[0]
    assert problems[0].startswith(book_shape.start_cell_where(PAGE, book_shape.read_exercises(PAGE)[number]) + ": ")


def test_a_start_cell_whose_stub_earns_any_points_is_named_with_the_cases_it_passes():
    """Planted: exercise 6's stub answers 'direct' to every question, as a lazy stub might: it
    fails its check, yet passes some cases, so an untouched notebook would earn points for it.
    Refused, naming the start cell by its .md line, the points and the cases it passes."""
    checked = exercise_contract.checked_exercises(PAGE)
    number = next(n for n, (_, call) in checked.items() if call.startswith("check_router("))
    start, call = checked[number]
    planted = start.replace("    raise NotImplementedError", "    return 'direct'")
    assert planted != start
    report = exercise_contract.kernel_report(in_the_kernel([(number, planted, call)]))
    heading = re.compile(report["verdict_heading"])
    verdict = report["untouched"][str(number)].splitlines()
    assert verdict[0].startswith(f"FAIL  exercise {number} "), verdict[0]
    passing = [line.split(": ", 1)[0].removeprefix("  ok").strip() for line in verdict if line.startswith("  ok ")]
    assert passing, "the planted stub passes no case: it plants nothing"
    report["untouched"] = {**{str(n): "" for n in checked}, **report["untouched"]}
    problems = exercise_contract.untouched_earns(PAGE, report, heading)
    assert len(problems) == 1, problems
    where = book_shape.start_cell_where(PAGE, book_shape.read_exercises(PAGE)[number])
    assert re.match(r"book/\S+\.md, code cell \d+ \(line \d+\)$", where), where
    earned = re.search(r", ([\d.]+) of ([\d.]+) points", verdict[0])
    assert problems[0].startswith(f"{where}: exercise {number}'s start cell, untouched, earns "
                                  f"{earned.group(1)} of {earned.group(2)} points from its check"), problems[0]
    assert all(f"`{name}`" in problems[0] for name in passing), problems[0]
    assert "NotImplementedError" in problems[0]


@pytest.mark.long  # (pages executed in a copy of the repository: 15.5, and 15.11 twice over)
def test_a_library_change_that_breaks_a_worked_solution_fails_the_build_and_accept(scratch_repository):
    """The author's change: `assess` cites with another word. The build names exercise 3, its
    check, a failing case and `assess`; the stored notebook is kept; `make accept` refuses."""
    copy = scratch_repository.path
    page = copy / "book" / "15_05_self_correcting_retrieval.md"
    text = page.read_text()
    changed = text.replace('return Verdict(doc.id, relevant, True, facts[0], "cite")',
                           'return Verdict(doc.id, relevant, True, facts[0], "quote")')
    assert changed != text, "15.5's assess no longer cites as this test expects"
    page.write_text(changed)
    exercises = copy / "book" / PAGE.with_suffix(".ipynb").name
    kept = exercises.read_bytes()

    built = scratch_repository.run("-m", "runnable_book.pipeline.artefact_graph", "lib", "diagrams", "outputs", check=False)
    assert built.returncode == 1, built.stdout + built.stderr
    errors = [line for line in built.stderr.splitlines() if line.startswith("error: ")]
    failing = next(line for line in errors if "worked solution fails its check" in line)
    assert "exercise 3's worked solution fails its check: FAIL  exercise 3 (check_conflict_policy)" in failing
    assert "first failing case: " in failing and "library definitions it uses changed: `chapter15.assess`" in failing
    assert "Traceback" not in built.stderr
    assert exercises.read_bytes() == kept, "the failed page's stored notebook is kept as it was"

    accepted = scratch_repository.run("-m", "runnable_book.pipeline.accept", check=False)
    assert accepted.returncode == 1 and "`make accept` recorded nothing" in accepted.stderr, accepted.stderr
    assert "exercise 3's worked solution fails its check" in accepted.stderr
    assert (copy / "tests" / "book_as_accepted" / "15_05_self_correcting_retrieval.txt").read_bytes() == (
        ROOT / "tests" / "book_as_accepted" / "15_05_self_correcting_retrieval.txt").read_bytes()
