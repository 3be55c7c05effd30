"""An exercise's contract, held where the pages run: `make book` fails a page that breaks it.

An exercise with a check (its start cell imports a ``check_*``) promises two things, which the
page (it marks an exercise done on its check's ``PASS`` line) and the grader (runnable_book/grade)
rely on:

* its worked solution passes its check: the first verdict its worked-solution cells print for
  the exercise is ``PASS`` (read from the outputs of the run just made);
* its start cell, untouched, earns nothing: the check called as the start cell's
  ``# When ready: check_x(my_f)`` line says (the grader's own reading of it, runnable_book/grade/book.py)
  on the start cell's stubs passes no case (so no ``PASS``, and 0 points however its cases
  weigh), so the grader gives an untouched notebook `not attempted`, as runnable_book/grade/judge.py
  judges it, and never partial credit. This runs in the page's own kernel, after
  its cells (``kernel_cell``: each start cell in a fresh namespace), and is never stored.

A page that breaks either fails like a page whose code fails (runnable_book/pipeline/site_build.py: its
stored notebook kept, the failed run in _build/failed/, `make book` exits 1), naming the
exercise, its check, the first failing case and what changed since the page last passed (the
library definitions it uses, its cells): before this, changing `assess` on 15.5 made exercise
3's worked solution fail its check, and `make book` exited 0 and `make accept` recorded it.
`make accept` refuses a book with a failed page, and a stored worked solution that does not
pass (runnable_book/pipeline/accept.py).
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

from runnable_book.pipeline import book_shape
from runnable_book.pipeline.pages import BookError, code_cells, shown

# Run in the page's kernel after its cells; prints one JSON line: the checks' verdict heading
# (chapter_lib's own, so its format is written in one place) and what each check printed on
# its start cell's stubs. It catches everything, so it never fails the page's execution itself.
KERNEL_CELL = '''\
def _untouched_checks(cases):
    import contextlib, io, json
    found = {"untouched": {}}
    try:
        from {harness} import VERDICT_HEADING
        found["verdict_heading"] = VERDICT_HEADING.pattern
    except BaseException as error:
        found["error"] = f"{harness}: {type(error).__name__}: {error}"
    for number, start, call in cases:
        namespace, printed = {}, io.StringIO()
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                exec(start, namespace)
            with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
                exec(call, namespace)
        except BaseException as error:
            printed.write(f"\\n(stopped: {type(error).__name__}: {error})")
        found["untouched"][str(number)] = printed.getvalue()
    print(json.dumps(found))


_untouched_checks({cases})
del _untouched_checks
'''


def checked_exercises(md: Path) -> dict[int, tuple[str, str]]:
    """Exercise number -> (its start cell's code, the check call its `# When ready:` line names),
    for the page's exercises that have a check (none: an empty dict)."""
    from runnable_book.pipeline.book_shape import BookProblem, when_ready  # (the grader's reading of the line too)

    found = {}
    for number, exercise in book_shape.read_exercises(md).items():
        if not exercise.checks:
            continue
        try:
            check, names = when_ready(number, exercise.start.source, exercise.checks)
        except BookProblem as problem:
            raise BookError(f"{shown(md)}: {problem}") from None
        found[number] = (exercise.start.source, f"{check}({', '.join(names)})")
    return found


def kernel_cell(md: Path) -> str | None:
    """The code the page's kernel runs after its cells (None: the page has no checked exercise)."""
    cases = [(number, start, call) for number, (start, call) in checked_exercises(md).items()]
    return kernel_code(cases, book_shape.exercises_package(md)) if cases else None


def kernel_code(cases: list, package: str = book_shape.DEFAULT_EXERCISES_PACKAGE) -> str:
    """KERNEL_CELL for these (number, start, call) cases of the exercise ``package``'s page."""
    return KERNEL_CELL.replace("{cases}", repr(cases)).replace("{harness}", f"{package}.harness")


def kernel_report(printed: str) -> dict:
    """What ``KERNEL_CELL`` printed, read back."""
    for line in reversed(printed.splitlines()):
        if line.startswith("{"):
            with_report = json.loads(line)
            if "untouched" in with_report:
                return with_report
    return {"error": f"the contract's cell printed no report ({printed[-200:]!r})", "untouched": {}}


def stdout_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", [])
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def first_verdicts(md: Path, nb, heading: re.Pattern) -> dict[int, tuple[int, list[str]]]:
    """Checked exercise -> (the index of the code cell, among the page's, where its worked
    solution first prints a verdict for it; that verdict and the lines after it)."""
    exercises = book_shape.read_exercises(md)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    found = {}
    for number, exercise in exercises.items():
        if not exercise.checks:
            continue
        sources = [cell.source for cell in exercise.solution]
        for index, cell in enumerate(code):
            if cell.source not in sources:
                continue
            lines = stdout_of(cell).splitlines()
            verdict = next((i for i, line in enumerate(lines) if (m := heading.match(line)) and int(m.group(2)) == number),
                           None)
            if verdict is not None:
                found[number] = (index, lines[verdict:])
                break
    return found


def first_failing_case(lines: list[str]) -> str:
    case = next((line.strip() for line in lines[1:] if line.startswith("  FAIL ")), "")
    return case.removeprefix("FAIL ").strip()


def solution_failures(md: Path, nb, heading: re.Pattern) -> list[str]:
    """How the worked solutions of ``nb`` (the page ``md``, executed or stored) break the
    contract: a checked exercise whose solution's first verdict is not PASS, or that prints none."""
    cells, verdicts = code_cells(md), first_verdicts(md, nb, heading)
    problems = []
    for number in checked_exercises(md):
        if number not in verdicts:
            problems.append(f"{shown(md)}: exercise {number} has a check, and its worked solution's cells never call "
                            f"it: a worked solution shows its check passing (call it on the solution's functions)")
            continue
        index, lines = verdicts[number]
        if heading.match(lines[0]).group(1) == "PASS":
            continue
        where = cells[index].where if index < len(cells) else f"{shown(md)}, code cell {index + 1}"
        case = first_failing_case(lines)
        problems.append(f"{where}: exercise {number}'s worked solution fails its check: {lines[0].strip()}"
                        + (f"; first failing case: {case}" if case else ""))
    return problems


def untouched_earns(md: Path, report: dict, heading: re.Pattern) -> list[str]:
    """The checked exercises whose untouched start cell its check would give any points: a
    verdict of ``PASS``, or any case passed (what the grader gives it, chapter_lib's
    exercises/harness.py: a start cell that passes 8 of 9 cases earns 8.89 of 10 points, and a
    student who changed nothing would keep them). Each is named by its start cell's code cell
    and .md line, with the cases it passes."""
    harness = importlib.import_module(f"{book_shape.exercises_package(md)}.harness")
    case_name, exercise_worth, verdict_points = harness.case_name, harness.exercise_worth, harness.verdict_points

    exercises = book_shape.read_exercises(md)
    problems = []
    for number, (_, call) in checked_exercises(md).items():
        lines = report["untouched"].get(str(number), "").splitlines()
        found = heading.match(lines[0]) if lines else None
        if not found or int(found.group(2)) != number:
            continue
        worth = exercise_worth(number)
        earned = verdict_points(number, lines, worth if worth is not None else 1.0) or 0.0
        if found.group(1) != "PASS" and earned <= 0:
            continue
        passing = [case_name(line) for line in lines[1:] if line.startswith("  ok ")]
        points = f"{earned:g} of {worth:g} points" if worth is not None else "points"
        problems.append(
            f"{book_shape.start_cell_where(md, exercises[number])}: exercise {number}'s start cell, untouched, "
            f"{'passes its check' if found.group(1) == 'PASS' else 'earns ' + points + ' from its check'} "
            f"({call} printed {lines[0].strip()!r}"
            + (f"; it passes {', '.join(f'`{name}`' for name in passing if name)}" if passing else "")
            + "): the grader would give a student who changed nothing "
            + (f"{points}, not `not attempted`" if found.group(1) == "PASS" else f"{points} instead of 0")
            + "; make the start cell's stubs fail every case (raise NotImplementedError)")
    return problems


def broken(md: Path, nb, printed: str, since: list[str]) -> list[str]:
    """The contract's breaches on a page just executed (``nb``), with what the kernel cell
    printed; ``since``: what changed since the page last passed (change_report.reasons)."""
    report = kernel_report(printed)
    if "error" in report:
        return [f"{shown(md)}: the exercises' contract could not be checked: {report['error']}"]
    heading = re.compile(report["verdict_heading"])
    problems = solution_failures(md, nb, heading) + untouched_earns(md, report, heading)
    changed = "; ".join(since) if since else "nothing it records (its last run passed with the same inputs)"
    return [f"{problem}. Since the page last passed: {changed}" for problem in problems]
