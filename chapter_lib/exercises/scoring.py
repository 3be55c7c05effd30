"""What a check's verdict earns (ours, hand-written, not generated): the one rule for points.

A check prints its verdict, then one line per case (:func:`chapter_lib.exercises.common.report`).
The points are read from those lines, here, by the page's verdict line and by the grader
(tools/grade/judge.py, on the lines the grader's own copy of the check printed), so the two
cannot disagree: each case passed earns its weight, out of the weights of all the cases, of
what the exercise is worth. A case weighs 1 unless its exercise's start cell says otherwise
(``weights:`` beside ``points:``, generated into :mod:`chapter_lib.exercises.points`); an
instructor's hidden case weighs 1.
"""

from __future__ import annotations

import math
import re

__all__ = ["points_for", "verdict_points"]

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
    case's name never holds ": " (tools/pipeline/book_shape.py refuses it), so what the reader's
    function said (the line's *why*) cannot pass for another case's name."""
    found = CASE_LINE.match(line)
    return None if found is None else found.group(2).partition(": ")[0]


def exercise_worth(exercise: int) -> float | None:
    """The exercise's points, as its start cell on the page declares them (generated into points.py)."""
    try:
        from chapter_lib.exercises.points import POINTS
    except ImportError:  # a library built before points were declared
        return None
    return POINTS.get(exercise)


def case_weights(exercise: int) -> dict[str, float]:
    """What its start cell says some of the exercise's cases weigh (generated into points.py); {}: none."""
    try:
        from chapter_lib.exercises.points import WEIGHTS
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
