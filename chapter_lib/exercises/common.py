"""What every exercise of Section 15.11 shares (ours, hand-written, not generated).

The question helper, a text table, copies of the chapter's code with some names
replaced, and the harness of the reader checks (``check_3`` to ``check_6``): a check
runs all its cases, then prints its verdict first.
"""

from __future__ import annotations

import re
import traceback
import types
from dataclasses import dataclass
from pathlib import Path

from chapter_lib import chapter15
from chapter_lib.chapter15 import questions
# The points of a verdict, read from its lines (their own module, scoring.py); importable from here
# too, where the grader, the build and the tests import the verdict's definitions from.
from chapter_lib.exercises.scoring import (CASE_COUNTS, exercise_worth, passed_of, points_for,  # noqa: F401
                                           verdict_points)

ENG = frozenset({"engineering"})
FINANCE = frozenset({"finance"})
AURORA_REGION_QUERY = "What region does Aurora run in?"  # the attack question of Section 15.9
# Frames from these files are the checks' own: a reader's traceback leaves them out.
HARNESS_FOLDER = Path(__file__).resolve().parent

__all__ = ["ENG", "FINANCE", "AURORA_REGION_QUERY", "question", "chapter_code_with", "print_table",
           "CaseResult", "run_case", "report", "points_for", "verdict_points"]


def question(qid, qs=None):
    """The ``(id, text, groups, start, goal, expected)`` tuple of one question."""
    return next(q for q in (qs or questions()) if q[0] == qid)


def chapter_code_with(**overrides) -> types.SimpleNamespace:
    """The chapter's functions, line for line, bound to a copy of their globals.

    Every function of :mod:`chapter_lib.chapter15` is re-created from its own code
    object over a *copy* of the module's globals in which ``overrides`` replace some
    names (a longer ``CUES`` table, another ``_is_entity``, a recording ``search``).
    Functions that call each other call the copies, so the override reaches the whole
    chain (``agentic`` -> ``facts_from`` -> ``extract_facts`` -> ``CUES``). The
    chapter's module is not touched: other pages and later cells see the original.

    Returns:
        A namespace holding every name of the chapter module, copies for functions.
    """
    original = vars(chapter15)
    namespace = dict(original)
    namespace.update(overrides)
    for name, value in original.items():
        if name in overrides or not isinstance(value, types.FunctionType):
            continue
        if value.__globals__ is not original:
            continue
        copy = types.FunctionType(value.__code__, namespace, value.__name__,
                                  value.__defaults__, value.__closure__)
        copy.__kwdefaults__ = value.__kwdefaults__
        copy.__doc__ = value.__doc__
        namespace[name] = copy
    return types.SimpleNamespace(**namespace)


def _table(header, rows):
    """A fixed-width text table (deterministic, so nbval can compare it)."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    out = []
    for number, row in enumerate(cells):
        out.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if number == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def print_table(header, rows):
    """Print rows under a header as a fixed-width text table."""
    print(_table(header, rows))


# --------------------------------------------------------------------------
# The reader checks' harness
# --------------------------------------------------------------------------


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
    writes, tools/sphinx_ext/exercises.py) and the grader (tools/grade/judge.py) read it too."""
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
