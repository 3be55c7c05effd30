"""The reader checks' harness: a check runs all its cases, then prints its verdict first.

A book's hand-written checks (``chapter_lib/exercises/check_N.py``) build their cases with
:func:`run_case` and print them with :func:`report`. The verdict's first line begins as
:func:`verdict_heading` says ("PASS  exercise 3 (check_conflict_policy)"): the page marks an
exercise done on it (runnable_book/sphinx_ext/exercises.py) and the grader reads it
(runnable_book/grade/judge.py). The points are read back from the printed lines, here, by
the page's verdict line and by the grader, so the two cannot disagree: each case passed earns
its weight, out of the weights of all the cases, of what the exercise is worth. A case weighs
1 unless its exercise's start cell says otherwise (``weights:`` beside ``points:``, generated
into :mod:`chapter_lib.exercises.points`); an instructor's hidden case weighs 1.
"""

from __future__ import annotations

import math
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CaseResult", "run_case", "report", "verdict_heading", "points_for", "verdict_points"]

# Frames from these files are the checks' own: a reader's traceback leaves them out.
HARNESS_FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class CaseResult:
    """One case of a reader check: its name, whether it passed, why, and what it raised."""

    name: str
    ok: bool
    why: str
    error: BaseException | None = None


def run_case(name, case):
    """Run ``case()`` -> ``(ok, why)``; an exception fails the case and is named."""
    try:
        ok, why = case()
    except Exception as err:  # the reader's function may raise anything
        return CaseResult(name, False, f"raised {type(err).__name__}: {err}", err)
    return CaseResult(name, bool(ok), why)


def readers_frames(error: BaseException) -> str:
    """The traceback of ``error`` without the checks' own frames: the reader's code only."""
    shown = traceback.TracebackException.from_exception(error)
    shown.stack = traceback.StackSummary.from_list(
        [frame for frame in shown.stack if not Path(frame.filename).resolve().is_relative_to(HARNESS_FOLDER)])
    return "".join(shown.format())


def verdict_heading(exercise: int, check_name: str, passed: bool) -> str:
    """How a check's verdict begins: "PASS  exercise 3 (check_conflict_policy)". The one
    definition of it: the page (which marks an exercise done on it, via the data the build
    writes, runnable_book/sphinx_ext/exercises.py) and the grader (runnable_book/grade/judge.py) read it too."""
    return f"{'PASS' if passed else 'FAIL'}  exercise {exercise} ({check_name})"


# verdict_heading's lines, read back: (PASS|FAIL, exercise number, check name).
VERDICT_HEADING = re.compile(r"^(PASS|FAIL) {2}exercise (\d+) \((\w+)\)")


def _one_line(text) -> str:
    """A case's ``why`` on one line: it may quote the reader's error message, whose line breaks would
    otherwise make lines that read as cases (the grader counts the case lines, :func:`verdict_points`)."""
    return " ".join(str(text).splitlines())


def report(exercise: int, check_name: str, results: list[CaseResult]) -> bool:
    """Print the verdict, then one line per failing case, then the passing ones.

    The first line is the verdict, ``PASS`` or ``FAIL``, with the exercise number (the
    page marks an exercise done when its check prints ``PASS``) and the points the passing
    cases earn (:func:`verdict_points`, from these very lines), as the grader gives them.
    Nothing is raised, so a wrong function shows no traceback at all; when the reader's
    function raised, the first error's traceback follows, with the reader's frames only.

    Returns:
        Whether every case passed.
    """
    failed = [r for r in results if not r.ok]
    if failed:
        lines = [f"{verdict_heading(exercise, check_name, False)}: {len(failed)} of {len(results)} cases fail"]
        lines += [f"  FAIL {r.name}: {_one_line(r.why)}" for r in failed]
        lines += [f"  ok   {r.name}: {_one_line(r.why)}" for r in results if r.ok]
    else:
        lines = [f"{verdict_heading(exercise, check_name, True)}: all {len(results)} cases pass"]
        lines += [f"  ok   {r.name}: {_one_line(r.why)}" for r in results]
    worth = exercise_worth(exercise)
    if worth is not None:
        lines[0] += f", {verdict_points(exercise, lines, worth):g} of {worth:g} points"
    print("\n".join(lines), flush=True)
    raised = next((r for r in failed if r.error is not None), None)
    if raised is not None:
        import sys

        print(f"\nYour function raised in the case {raised.name!r}:\n{readers_frames(raised.error)}",
              file=sys.stderr, end="", flush=True)
    return not failed


# --------------------------------------------------------------------------
# What a verdict earns: the one rule for points
# --------------------------------------------------------------------------

# How many of its cases passed, as the verdict line says: "all 8 cases pass" or "2 of 8 cases fail".
CASE_COUNTS = re.compile(r": (?:all (?P<all>\d+) cases pass|(?P<failed>\d+) of (?P<total>\d+) cases fail)")
# A case's line under the verdict: "  ok   <name>: <why>" or "  FAIL <name>: <why>".
CASE_LINE = re.compile(r"^  (ok  |FAIL) (.*)$")


def points_for(passed: float, total: float, worth: float) -> float:
    """The points the cases that passed earn on an exercise worth ``worth``: ``passed`` of ``total``,
    counted in weights (each case 1, unless its start cell says otherwise), the same share of its
    points, to two decimals."""
    return round(worth * passed / total, 2) if total else 0.0


def passed_of(heading: str) -> tuple[int, int] | None:
    """(cases passed, cases) from a verdict line, or None if it does not say."""
    found = CASE_COUNTS.search(heading)
    if found is None:
        return None
    if found.group("all"):
        return int(found.group("all")), int(found.group("all"))
    total = int(found.group("total"))
    return total - int(found.group("failed")), total


def case_name(line: str) -> str | None:
    """The name a case's line begins with (up to its first ": "), or None for another line. A weighed
    case's name never holds ": " (runnable_book/pipeline/book_shape.py refuses it), so what the reader's
    function said (the line's *why*) cannot pass for another case's name."""
    found = CASE_LINE.match(line)
    return None if found is None else found.group(2).partition(": ")[0]


def exercise_worth(exercise: int) -> float | None:
    """The exercise's points, as its start cell on the page declares them (generated into points.py)."""
    try:
        from .points import POINTS  # (the points of this harness's own exercise package)
    except ImportError:  # a library built before points were declared
        return None
    return POINTS.get(exercise)


def case_weights(exercise: int) -> dict[str, float]:
    """What its start cell says some of the exercise's cases weigh (generated into points.py); {}: none."""
    try:
        from .points import WEIGHTS  # (the points of this harness's own exercise package)
    except ImportError:  # a library built before weights were declared
        return {}
    return WEIGHTS.get(exercise, {})


def verdict_points(exercise: int, lines: list[str], worth: float, hidden: list[int] | None = None) -> float | None:
    """The points a check's printed verdict earns: its cases passed, each weighing what the exercise's
    start cell says (1 where it says nothing), and ``hidden``, ``[passed, of]`` the instructor's hidden
    cases, each weighing 1. None when ``lines`` hold no verdict that counts its cases.

    ``lines``: what the check printed, its verdict first, then one line per case."""
    counted = passed_of(lines[0]) if lines else None
    if counted is None:
        return None
    weights = case_weights(exercise)
    cases = [(line.startswith("  ok"), case_name(line)) for line in lines[1:1 + counted[1]]]
    if len(cases) == counted[1] and None not in {name for _, name in cases} and sum(ok for ok, _ in cases) == counted[0]:
        shares = [(ok, float(weights.get(name, 1))) for ok, name in cases]
    else:  # (lines report() did not print: the verdict's own counts, one share a case)
        shares = [(True, 1.0)] * counted[0] + [(False, 1.0)] * (counted[1] - counted[0])
    if hidden:
        shares += [(True, 1.0)] * hidden[0] + [(False, 1.0)] * (hidden[1] - hidden[0])
    # fsum: exact whatever the order, so a verdict whose every case passed earns exactly ``worth``.
    return points_for(math.fsum(w for ok, w in shares if ok), math.fsum(w for _, w in shares), worth)
