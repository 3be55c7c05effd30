"""The verdict (ours): the grader's own check, called outside the sandbox, on the student's answers.

The sandbox recorded every call the check made to the student's functions: arguments and
what came back (box/harness.py, encoded by box/wire.py). Here, in the grader's Python, where
no student code ever runs, the grader's own copy of the check (from the repository's
``chapter_lib``) is called on stand-ins with the student's function names; each stand-in
answers a call with what the student's function answered to the same arguments in the
sandbox. The check then runs exactly as it runs in the page, cases, verdict line and all,
and its first line is the verdict: the line the page's progress marks an exercise done on
(``PASS  exercise N``, runnable_book/sphinx_ext/runner/progress.mjs).

What the student's code did in the sandbox (replaced checks, printed PASS lines, patched
chapter_lib, sys.modules, even a forged record) can only change what the record says their
functions answered, which a function of their own could answer anyway.
"""

from __future__ import annotations

import collections
import contextlib
import io
import re
import threading
from dataclasses import dataclass, field

from runnable_book.grade.book import CheckedExercise
from runnable_book.grade.box import wire
from runnable_book.grade.hidden import HiddenCases
from runnable_book.grade.sandbox import Failure
# The checks' harness as the tool writes it into each exercise package (what differs between
# packages, the points and weights, is read from the exercise's own: CheckedExercise.harness).
from runnable_book.library_modules.exercise_harness import VERDICT_HEADING, CaseResult

# The judge swaps sys.stdout while a check prints; one check at a time.
_printing = threading.Lock()


@dataclass
class Verdict:
    verdict: str  # pass, fail, error, timeout, not attempted
    detail: str  # one line, for grades.csv
    lines: list[str] = field(default_factory=list)  # what the check printed, for the report and the feedback
    points: float = 0.0  # what the cases passed earn (chapter_lib.exercises.harness.verdict_points)
    max_points: float = 0.0  # what the exercise is worth (its start cell's ``points:``)
    call: str = ""  # the call judged: the student's own call of the check, or the start cell's
    failed_case: str = ""  # the first case that failed (the report counts them per exercise)
    hidden: list[int] | None = None  # [passed, of] the instructor's hidden cases (None: none for this check)
    hidden_lines: list[str] = field(default_factory=list)  # their cases, named: for the instructor only


class NoAnswer(Exception):
    """The record holds no answer for a call the check made (the sandbox's run differed)."""


def _exception_class(name: str, base: type) -> type:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,79}", name or ""):
        name = "Exception"
    return type(name, (base,), {"__module__": "submission"})


class StandIn:
    """Answers the check's calls of one student function from the sandbox's record."""

    def __init__(self, name: str, answers: dict):
        self.__name__ = self.__qualname__ = name
        self.answers = answers
        self.unanswered = 0
        self.on_missing = None  # (runnable_book/grade/hidden.py's CallDriver: ask the sandbox for it)

    def __call__(self, *args, **kwargs):
        key = wire.call_key(args, kwargs)
        queue = self.answers.get(key)
        if not queue:
            if self.on_missing is not None:
                self.on_missing(args, kwargs, key)
            self.unanswered += 1
            raise NoAnswer(f"{self.__name__} was never called so in the sandbox")
        entry = queue.popleft()
        for index, after in entry.get("after", []):
            _mutate(args, index, after)
        if "raised" in entry:
            name, message, base = (list(entry["raised"]) + ["", "", False])[:3]
            raise _exception_class(str(name), BaseException if base else Exception)(str(message))
        return wire.decode(entry.get("out"))


def _mutate(args, index, after):
    """What the student's function did to a list, dict or set it was given, done to the judge's."""
    if not (isinstance(index, int) and 0 <= index < len(args)):
        return
    target, value = args[index], wire.decode(after)
    if type(target) is list and isinstance(value, list):
        target[:] = value
    elif type(target) is dict and isinstance(value, dict):
        target.clear()
        target.update(value)
    elif type(target) is set and isinstance(value, set):
        target.clear()
        target.update(value)


def answers_of(calls, slots: int) -> list[dict]:
    """The record's answers by function (slot) and arguments (key), in the order they came."""
    answers = [collections.defaultdict(collections.deque) for _ in range(slots)]
    for entry in calls if isinstance(calls, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("slot"), int) and 0 <= entry["slot"] < slots \
                and isinstance(entry.get("key"), str):
            answers[entry["slot"]][entry["key"]].append(entry)
    return answers


def _ran_out_of_memory(calls) -> bool:
    return any(isinstance(e, dict) and isinstance(e.get("raised"), list) and e["raised"][:1] == ["MemoryError"]
               for e in (calls if isinstance(calls, list) else []))


def judge(exercise: CheckedExercise, outcome, untouched: bool, python_mb: int, call=None,
          hidden: HiddenCases | None = None, hidden_outcome=None) -> Verdict:
    """The verdict for one exercise of one submission, from what its sandbox recorded.

    ``untouched``: the student left the exercise alone (no cell of their own there, the
    functions still the start cell's stubs or missing), so a check that does not pass means
    the exercise was not attempted. ``call``: the call judged (runnable_book/grade/grade.py's
    ``JudgedCall``; default, the start cell's). ``hidden``: the instructor's hidden cases, and
    ``hidden_outcome`` the sandbox's record of the calls they made (runnable_book/grade/hidden.py)."""
    shown = call.text if call is not None else exercise.call
    names = tuple(call.names if call is not None else exercise.args)
    worth = exercise.points or 0.0
    verdict = _judged(exercise, outcome, untouched, python_mb, shown, names, hidden, hidden_outcome)
    verdict.call, verdict.max_points = shown, worth
    if verdict.verdict in ("pass", "fail") and verdict.lines:
        # The page's own rule on the check's printed cases (their weights, from the book via
        # chapter_lib), and each hidden case weighing 1: common.verdict_points.
        points = exercise.harness().verdict_points(exercise.number, verdict.lines, worth, verdict.hidden)
        if points is not None:
            verdict.points = points
    return verdict


def _judged(exercise, outcome, untouched, python_mb, shown, names, hidden, hidden_outcome) -> Verdict:
    listed = ", ".join(names)
    if isinstance(outcome, Failure):
        if outcome.kind == "timeout":
            return Verdict("timeout", f"{shown}: {outcome.why}")
        if outcome.kind == "memory":
            return Verdict("error", f"{shown}: ran out of memory: {outcome.why}")
        return Verdict("error", f"{shown}: {outcome.why}")
    if not isinstance(outcome, dict):
        return Verdict("error", f"{shown}: the sandbox gave no record of this check")
    if outcome.get("unevaluable"):
        expression, error, message = (list(outcome["unevaluable"]) + ["", "", ""])[:3]
        return Verdict("fail", f"{shown}: `{str(expression)[:200]}` raised {error}: {str(message)[:200]}")
    if outcome.get("missing"):
        missing = [str(m) for m in outcome["missing"]][:5]
        said = f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not defined"
        if untouched:
            return Verdict("not attempted", f"{said} (the start cell names {listed} for {exercise.check})")
        return Verdict("fail", f"{shown}: {said} when the check runs (after every cell of the notebook)")
    calls = outcome.get("calls")
    if _ran_out_of_memory(calls):
        return Verdict("error", f"{shown}: ran out of memory (Python in the sandbox has {python_mb} MB)")
    slots = len(exercise.args)
    names = (list(names) + list(exercise.args))[:slots]
    answers = answers_of(calls, slots)
    stand_ins = [StandIn(str(name), answers[slot]) for slot, name in enumerate(names)]
    check = exercise.grader_check()
    printed = io.StringIO()
    stopped = None
    with _printing, contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        try:
            check(*stand_ins)
        except BaseException as error:  # a student's SystemExit, replayed, stops the check as in the page
            if isinstance(error, (KeyboardInterrupt,)) and type(error).__module__ != "submission":
                raise
            stopped = f"{type(error).__name__}: {str(error)[:200]}"
        hidden_results = _hidden_results(exercise, hidden, hidden_outcome, names) \
            if hidden is not None and hidden.has(exercise.check) else None
    lines = printed.getvalue().splitlines()
    found = VERDICT_HEADING.match(lines[0]) if lines else None
    if found is None or int(found.group(2)) != exercise.number:
        why = f"the check stopped: {listed} raised {stopped}" if stopped else "the check printed no verdict"
        return Verdict("not attempted" if untouched else "fail", why, lines)
    hidden_failed = [r for r in hidden_results or [] if not r.ok]
    hidden_count = None if hidden_results is None else [len(hidden_results) - len(hidden_failed), len(hidden_results)]
    hidden_lines = [f"  {'FAIL' if not r.ok else 'ok  '} (hidden) {r.name}: {r.why}" for r in hidden_results or []]
    if isinstance(hidden_outcome, Failure) and found.group(1) == "PASS":
        # The hidden cases' calls had to be stopped: the verdict is the step's, naming no case.
        kind = "timeout" if hidden_outcome.kind == "timeout" else "error"
        return Verdict(kind, f"{shown}: your instructor's hidden cases: {hidden_outcome.why}", lines,
                       hidden=hidden_count, hidden_lines=hidden_lines)
    if found.group(1) == "PASS" and not hidden_failed:
        return Verdict("pass", lines[0].split(": ", 1)[-1].strip(), lines, hidden=hidden_count, hidden_lines=hidden_lines)
    first_failure = next((line.strip() for line in lines[1:] if line.startswith("  FAIL ")), "")
    first_failure = first_failure.removeprefix("FAIL ").strip()
    if not first_failure and hidden_failed:
        first_failure = f"(hidden) {hidden_failed[0].name}: {hidden_failed[0].why}"
    if untouched:
        stubs = "stub" if len(exercise.args) == 1 else "stubs"
        return Verdict("not attempted", f"{listed}: still the start cell's {stubs}", lines)
    unanswered = sum(s.unanswered for s in stand_ins)
    if unanswered:
        # The sandbox's copy of the check did not call the functions as the grader's does: the
        # notebook's code changed the check's world there (chapter_lib, the harness).
        return Verdict("fail", f"the check's calls never reached {listed} in the sandbox ({unanswered} unanswered): "
                               f"the notebook's code changed chapter_lib or the check there", lines,
                       hidden=hidden_count, hidden_lines=hidden_lines)
    return Verdict("fail", first_failure[:400] or lines[0], lines, failed_case=first_failure.split(":", 1)[0][:200],
                   hidden=hidden_count, hidden_lines=hidden_lines)


def _hidden_results(exercise, hidden: HiddenCases, hidden_outcome, names) -> list[CaseResult]:
    """The instructor's hidden cases, run on stand-ins answering from the calls step's record (a
    case whose call the sandbox never answered fails)."""
    calls = hidden_outcome.get("calls") if isinstance(hidden_outcome, dict) else []
    answers = answers_of(calls, len(names))
    stand_ins = [StandIn(str(name), answers[slot]) for slot, name in enumerate(names)]
    try:
        return hidden.results(exercise.check, stand_ins)
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt) and type(error).__module__ != "submission":
            raise
        return [CaseResult("the hidden cases", False, f"raised {type(error).__name__}: {error}")]
