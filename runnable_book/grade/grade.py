"""One submission graded (ours): which cells run, the sandbox's run, the verdicts.

The grader runs the notebook's code cells in order, as "Run All" does in JupyterLab, in one
sandboxed Python (runnable_book/grade/sandbox.py), with two exceptions:

* the install cell is satisfied, never run: the sandbox already has the grader's own
  chapter_lib (and never reaches a network to fetch one);
* a cell that had to be stopped (past its time limit, or it took the process down) is
  skipped when a fresh sandbox re-runs the cells to grade what is left.

A cell that raises does not stop the cells after it (as in the page, where each cell runs
on its own). Then, for each checked exercise, the sandbox calls the functions its start cell
names as the grader's check asks, and the judge (runnable_book/grade/judge.py) gives the verdict.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
from dataclasses import asdict, dataclass, field

from runnable_book.grade.book import Book, CheckedExercise
from runnable_book.grade.hidden import CallDriver, HiddenCases
from runnable_book.pipeline.pages import top_level_names
from runnable_book.grade.judge import Verdict, judge
from runnable_book.grade.notebook import Submission
from runnable_book.grade.sandbox import Failure, Limits, Sandbox

VERDICTS = ("pass", "fail", "not attempted", "timeout", "error")


@dataclass
class Graded:
    """A student's grades (their counted submission's) and what the report and feedback show of it."""

    name: str  # the submission's path in the folder or zip
    student: dict = field(default_factory=dict)  # key, name, lms, lms_id, slug (runnable_book/grade/intake.py)
    when: str = ""  # when it was handed in (ISO, local time), if known
    late: bool = False  # after DUE, or marked late by the LMS
    superseded: list = field(default_factory=list)  # the student's other notebooks, not counted
    problem: str | None = None
    verdicts: dict = field(default_factory=dict)  # exercise number -> Verdict
    cells: list = field(default_factory=list)  # dicts: the notebook's code cells, as the report shows them
    seconds: float = 0.0  # the sandbox's wall time (all its children)
    cpu_seconds: float = 0.0  # its CPU time (all its children)
    charged_seconds: float = 0.0  # the CPU time of the student's own steps (the notebook's limit)
    starts: int = 0  # children started (1, plus one per step that had to be stopped)
    peak_mb: float = 0.0  # the sandbox's largest memory use

    @property
    def key(self) -> str:
        return self.student.get("key", self.name)

    @property
    def student_name(self) -> str:
        return self.student.get("name", self.name)

    def total(self) -> float:
        return round(sum(v.points for v in self.verdicts.values()), 2)

    def to_json(self) -> dict:
        data = asdict(self)
        data["verdicts"] = {str(n): asdict(v) for n, v in self.verdicts.items()}
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Graded":
        graded = cls(**{**data, "verdicts": {}})
        graded.verdicts = {int(n): Verdict(**v) for n, v in data.get("verdicts", {}).items()}
        return graded


def defined_names(source: str) -> set[str]:
    """Top-level names a cell binds (def, class, assignment, import); empty if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    return top_level_names(tree)


def untouched(exercise: CheckedExercise, cells) -> bool:
    """Whether the student left an exercise alone: no cell of their own in its section, and
    every cell elsewhere that binds one of its functions' names is the book's, unchanged (so
    the functions can only be the start cell's stubs, or missing)."""
    if any(c.students for c in cells if c.exercise == exercise.number):
        return False
    names = set(exercise.args)
    binding = [c for c in cells if names & defined_names(c.source)]
    return all(c.kind == "book" for c in binding)


@dataclass(frozen=True)
class JudgedCall:
    """A call of an exercise's check whose functions may be judged."""

    arguments: str  # the call's argument list as written (runnable_book/grade/box/call_forms.py evaluates it)
    names: tuple[str, ...]  # how the report names each function, in the check's parameter order
    position: int | None = None  # the student's cell it is in (None: the start cell's line)
    check: str = ""

    @property
    def text(self) -> str:
        return f"{self.check}({self.arguments})"


def _check_calls(tree: ast.AST, check: str) -> list[ast.Call]:
    """The calls of ``check`` in a cell, in the order written: ``check(...)``, or ``x.check(...)``
    (the check reached through a module), however deep (in a loop, a ``try``, a function, another call)."""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id == check)
        or (isinstance(n.func, ast.Attribute) and n.func.attr == check))]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _student_call(node: ast.Call, source: str, parameters: list[str], position, check) -> JudgedCall | None:
    """One of the student's calls of the check, as a candidate; None if it plainly cannot give the
    check its functions (too many or too few, a parameter it does not have)."""
    starred = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
    if not starred:
        named = [k.arg for k in node.keywords]
        if len(node.args) > len(parameters) or any(k not in parameters for k in named) \
                or len(set(parameters[:len(node.args)]) | set(named)) != len(parameters):
            return None
    parts = [ast.get_source_segment(source, a) or ast.unparse(a) for a in node.args]
    parts += [ast.get_source_segment(source, k) or ast.unparse(k) for k in node.keywords]
    if starred:
        names = tuple(parameters)
    else:
        given = dict(zip(parameters, node.args))
        given.update({k.arg: k.value for k in node.keywords})
        names = tuple(given[p].id if isinstance(given[p], ast.Name)
                      else " ".join((ast.get_source_segment(source, given[p]) or ast.unparse(given[p])).split())[:60]
                      for p in parameters)
    return JudgedCall(", ".join(parts), names, position, check)


def judged_calls(exercise: CheckedExercise, cells) -> list[JudgedCall]:
    """The calls whose functions may be judged, in order of preference: the student's own calls of
    the exercise's check, last first, in any cell of theirs and in any form (the functions they
    handed to it are judged, whatever they are called, lambdas and bound methods too); then the
    start cell's ``# When ready:`` names. The sandbox judges the first that evaluates there,
    after every cell ran (a call inside a function may name what only that function had)."""
    parameters = list(inspect.signature(exercise.grader_check()).parameters)
    found = []
    for cell in cells:
        if not cell.students:
            continue
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError):
            continue
        for node in _check_calls(tree, exercise.check):
            try:
                call = _student_call(node, cell.source, parameters, cell.position, exercise.check)
            except (TypeError, ValueError, AttributeError):  # a node ast cannot give back as text
                call = None
            if call is not None:
                found.append(call)
    return [*reversed(found), JudgedCall(", ".join(exercise.args), tuple(exercise.args), None, exercise.check)]


def judged_call(exercise: CheckedExercise, cells) -> JudgedCall:
    """The call judged when it evaluates: the student's own last call of the check, else the start cell's."""
    return judged_calls(exercise, cells)[0]


def book_cell_seconds(limits: Limits) -> float:
    """The CPU limit for a cell of the book left unchanged: our code, tested by `make test`, that
    ends (a worked solution's figure takes seconds); only the student's code before it could make
    it endless, and then this limit stops it. Not charged to the student's notebook limit."""
    return max(3 * limits.step_seconds, 30.0)


def steps_for(submission: Submission, book: Book, limits: Limits, calls: dict[int, list[JudgedCall]] | None = None,
              hidden: HiddenCases | None = None) -> tuple[list[dict], dict[int, int], dict[int, int]]:
    """The sandbox's steps: the cells that run, in order; one check per checked exercise, on the
    functions of its candidate calls; then, last of all (so nothing the student's code learns
    from them can reach a later check's output), one calls step per check with hidden cases.
    Returns the steps, and the check steps' and calls steps' exercise numbers by index."""
    steps, checks, hidden_steps = [], {}, {}
    calls = calls or {}
    for cell in submission.cells:
        if cell.kind == "install":
            continue
        seconds = book_cell_seconds(limits) if cell.kind == "book" else limits.step_seconds
        steps.append({"kind": "cell", "index": len(steps), "source": cell.source, "filename": cell.filename,
                      "position": cell.position, "seconds": seconds, "charged": cell.kind != "book"})
    for exercise in book.checked:
        filename, source = exercise.source()
        checks[len(steps)] = exercise.number
        candidates = calls.get(exercise.number) or judged_calls(exercise, submission.cells)
        steps.append({"kind": "check", "index": len(steps), "exercise": exercise.number, "module": exercise.module,
                      "filename": filename, "source": source, "check": exercise.check,
                      "parameters": list(inspect.signature(exercise.grader_check()).parameters),
                      "candidates": [c.arguments for c in candidates], "seconds": limits.step_seconds,
                      "charged": True})
    for exercise in book.checked:
        if hidden is None or not hidden.has(exercise.check):
            continue
        hidden_steps[len(steps)] = exercise.number
        candidates = calls.get(exercise.number) or judged_calls(exercise, submission.cells)
        steps.append({"kind": "calls", "index": len(steps), "exercise": exercise.number,
                      "parameters": list(inspect.signature(exercise.grader_check()).parameters),
                      "candidates": [c.arguments for c in candidates], "seconds": limits.step_seconds,
                      "charged": True})
    return steps, checks, hidden_steps


def _used(outcome, candidates: list[JudgedCall]) -> JudgedCall:
    """The candidate call the sandbox judged (its ``used``), the start cell's when it says none."""
    used = outcome.get("used") if isinstance(outcome, dict) else None
    if isinstance(used, int) and not isinstance(used, bool) and 0 <= used < len(candidates):
        return candidates[used]
    return candidates[0] if isinstance(outcome, dict) and "unevaluable" in outcome else candidates[-1]


def _cell_view(cell, result) -> dict | None:
    """A cell as the report shows it: the student's own cells, and any cell that failed when
    graded (the book's unchanged cells otherwise leave the report out)."""
    graded = None
    if isinstance(result, Failure):
        graded = {"ok": False, "error": f"{result.kind}: {result.why}", "output": ""}
    elif isinstance(result, dict):
        graded = {"ok": bool(result.get("ok")), "error": result.get("error"), "output": str(result.get("output", ""))}
    if not cell.students and not (graded and not graded["ok"]):
        return None
    return {"position": cell.position, "exercise": cell.exercise, "kind": cell.kind,
            "source": cell.source if cell.students else "", "saved": [list(o) for o in cell.saved] if cell.students else [],
            "graded": graded}


def _memory_error(cells, results) -> str | None:
    """The first of these cells whose run ended in Python's MemoryError, as a detail."""
    for cell in cells:
        result = results.get(cell.position)
        if isinstance(result, dict) and str(result.get("error") or "").startswith("MemoryError"):
            return f"{cell.filename}: ran out of memory ({result['error'][:200]})"
    return None


async def grade(submission: Submission, book: Book, sandbox: Sandbox, library: dict,
                hidden: HiddenCases | None = None) -> Graded:
    """One submission's grades. Never raises for a submission: whatever goes wrong while grading
    it (a fault of the grader's own included) is that student's, said in their row, and the
    class goes on."""
    graded = Graded(submission.name, problem=submission.problem)
    if submission.problem:
        return graded
    try:
        return await _graded(submission, book, sandbox, library, hidden, graded)
    except asyncio.CancelledError:
        raise
    except Exception as error:
        why = (f"the grader failed on this notebook ({type(error).__name__}: {str(error)[:200]}); "
               "a fault of the grader's, please report it")
        graded.verdicts = {e.number: Verdict("error", why, max_points=e.points or 0.0) for e in book.checked}
        return graded


async def _graded(submission, book, sandbox, library, hidden, graded) -> Graded:
    calls = {e.number: judged_calls(e, submission.cells) for e in book.checked}
    steps, checks, hidden_steps = steps_for(submission, book, sandbox.limits, calls, hidden)
    # The hidden cases' drivers (their functions named as the preferred call names them: names
    # only label the stand-ins; which call the sandbox judged is known after the step).
    drivers = {index: CallDriver(hidden, book.numbers[number].check, calls[number][0].names)
               for index, number in hidden_steps.items()}
    run = await sandbox.run(library, steps, drivers)
    graded.seconds, graded.starts, graded.peak_mb = run.seconds, run.starts, round(run.peak_mb)
    graded.cpu_seconds, graded.charged_seconds = round(run.cpu_seconds, 1), round(run.charged_seconds, 1)
    by_position = {s["position"]: run.results.get(s["index"]) for s in steps if s["kind"] == "cell"}
    graded.cells = [v for c in submission.cells if (v := _cell_view(c, by_position.get(c.position))) is not None]
    hidden_by_number = {number: run.results.get(index) for index, number in hidden_steps.items()}
    for index, number in checks.items():
        exercise = book.numbers[number]
        outcome = run.results.get(index)
        try:
            graded.verdicts[number] = _verdict(exercise, outcome, _used(outcome, calls[number]), submission, sandbox,
                                               by_position, hidden, hidden_by_number.get(number))
        except Exception as error:  # a fault of the grader's own, judging this: this exercise's error, no one else's
            graded.verdicts[number] = Verdict("error", f"the grader could not judge this ({type(error).__name__}: "
                                                       f"{str(error)[:200]}); a fault of the grader's, please report it",
                                              max_points=exercise.points or 0.0)
    return graded


def _verdict(exercise, outcome, call, submission, sandbox, by_position, hidden, hidden_outcome) -> Verdict:
    left_alone = untouched(exercise, submission.cells) and call.position is None
    verdict = judge(exercise, outcome, left_alone, sandbox.limits.python_mb, call, hidden, hidden_outcome)
    if verdict.verdict in ("fail", "not attempted"):
        # A cell of the exercise that had to be stopped, or ran out of memory, is the likelier
        # reason than the check's.
        theirs = submission.cells_of(exercise.number)
        stopped = [(c, by_position.get(c.position)) for c in theirs if isinstance(by_position.get(c.position), Failure)]
        memory = _memory_error([c for c in theirs if c.students], by_position)
        if stopped:
            cell, failure = stopped[0]
            kind = "timeout" if failure.kind == "timeout" else "error"
            verdict = Verdict(kind, f"{cell.filename}: {failure.why}", verdict.lines, call=verdict.call,
                              max_points=verdict.max_points)
        elif memory:
            verdict = Verdict("error", memory, verdict.lines, call=verdict.call, max_points=verdict.max_points)
    return verdict
