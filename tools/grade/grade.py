"""One submission graded (ours): which cells run, the sandbox's run, the verdicts.

The grader runs the notebook's code cells in order, as "Run All" does in JupyterLab, in one
sandboxed Python (tools/grade/sandbox.py), with two exceptions:

* the install cell is satisfied, never run: the sandbox already has the grader's own
  chapter_lib (and never reaches a network to fetch one);
* a cell that had to be stopped (past its time limit, or it took the process down) is
  skipped when a fresh sandbox re-runs the cells to grade what is left.

A cell that raises does not stop the cells after it (as in the page, where each cell runs
on its own). Then, for each checked exercise, the sandbox calls the functions its start cell
names as the grader's check asks, and the judge (tools/grade/judge.py) gives the verdict.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import asdict, dataclass, field

from tools.grade.book import Book, CheckedExercise
from tools.grade.hidden import HiddenCases
from tools.pipeline.pages import top_level_names
from tools.grade.judge import Verdict, judge
from tools.grade.notebook import Submission
from tools.grade.sandbox import Failure, Limits, Sandbox

VERDICTS = ("pass", "fail", "not attempted", "timeout", "error")


@dataclass
class Graded:
    """A student's grades (their counted submission's) and what the report and feedback show of it."""

    name: str  # the submission's path in the folder or zip
    student: dict = field(default_factory=dict)  # key, name, lms, lms_id, slug (tools/grade/intake.py)
    when: str = ""  # when it was handed in (ISO, local time), if known
    late: bool = False  # after DUE, or marked late by the LMS
    superseded: list = field(default_factory=list)  # the student's other notebooks, not counted
    problem: str | None = None
    verdicts: dict = field(default_factory=dict)  # exercise number -> Verdict
    cells: list = field(default_factory=list)  # dicts: the notebook's code cells, as the report shows them
    seconds: float = 0.0  # the sandbox's wall time (all its children)
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
    """The call of an exercise's check whose functions are judged."""

    expressions: tuple[str, ...]  # evaluated in the sandbox, after every cell: the functions
    names: tuple[str, ...]  # how the report names each function
    position: int | None = None  # the student's cell it is in (None: the start cell's line)

    @property
    def text(self) -> str:
        return f"{self.check}({', '.join(self.expressions)})"

    check: str = ""


def judged_call(exercise: CheckedExercise, cells) -> JudgedCall:
    """The student's own last call of the exercise's check, in any cell of theirs, with as many
    functions as the check takes (by position or by its parameters' names): the functions they
    handed to it are judged, whatever they are called. Without one, the start cell's
    ``# When ready:`` names."""
    found = None
    parameters = list(inspect.signature(exercise.grader_check()).parameters)
    for cell in cells:
        if not cell.students:
            continue
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError):
            continue
        calls = sorted((n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                        and n.func.id == exercise.check), key=lambda n: (n.lineno, n.col_offset))
        for node in calls:
            given = dict(zip(parameters, node.args))
            given.update({k.arg: k.value for k in node.keywords if k.arg in parameters})
            if len(node.args) > len(parameters) or set(given) != set(parameters) or any(
                    isinstance(a, ast.Starred) for a in node.args):
                continue
            arguments = [given[name] for name in parameters]
            expressions = tuple(ast.get_source_segment(cell.source, a) or ast.unparse(a) for a in arguments)
            names = tuple(a.id if isinstance(a, ast.Name) else e[:60] for a, e in zip(arguments, expressions))
            found = JudgedCall(expressions, names, cell.position, exercise.check)
    return found or JudgedCall(exercise.args, exercise.args, None, exercise.check)


def book_cell_seconds(limits: Limits) -> float:
    """The limit for a cell of the book left unchanged: our code, tested by `make test`, that
    ends (a worked solution's figure takes seconds on a loaded machine); only the student's
    code before it could make it endless, and then this limit, not the notebook's, stops it."""
    return max(3 * limits.step_seconds, 30.0)


def steps_for(submission: Submission, book: Book, limits: Limits, calls: dict[int, JudgedCall] | None = None,
              hidden: HiddenCases | None = None) -> tuple[list[dict], dict[int, int]]:
    """The sandbox's steps: the cells that run, in order, then one check per checked exercise,
    on the functions of its judged call, with the instructor's hidden cases if there are any.
    Returns the steps and, for each check step, its exercise's number."""
    steps, checks = [], {}
    calls = calls or {}
    for cell in submission.cells:
        if cell.kind == "install":
            continue
        seconds = book_cell_seconds(limits) if cell.kind == "book" else limits.step_seconds
        steps.append({"kind": "cell", "index": len(steps), "source": cell.source, "filename": cell.filename,
                      "position": cell.position, "seconds": seconds})
    for exercise in book.checked:
        filename, source = exercise.source()
        checks[len(steps)] = exercise.number
        call = calls.get(exercise.number)
        steps.append({"kind": "check", "index": len(steps), "exercise": exercise.number, "module": exercise.module,
                      "filename": filename, "source": source, "check": exercise.check,
                      "args": list(call.expressions if call else exercise.args),
                      "hidden": hidden.spec(exercise.check) if hidden else None})
    return steps, checks


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
    graded = Graded(submission.name, problem=submission.problem)
    if submission.problem:
        return graded
    calls = {e.number: judged_call(e, submission.cells) for e in book.checked}
    steps, checks = steps_for(submission, book, sandbox.limits, calls, hidden)
    run = await sandbox.run(library, steps)
    graded.seconds, graded.starts, graded.peak_mb = run.seconds, run.starts, round(run.peak_mb)
    by_position = {s["position"]: run.results.get(s["index"]) for s in steps if s["kind"] == "cell"}
    graded.cells = [v for c in submission.cells if (v := _cell_view(c, by_position.get(c.position))) is not None]
    for index, number in checks.items():
        exercise, call = book.numbers[number], calls[number]
        left_alone = untouched(exercise, submission.cells) and call.position is None
        verdict = judge(exercise, run.results.get(index), left_alone, sandbox.limits.python_mb, call, hidden)
        if verdict.verdict in ("fail", "not attempted"):
            # A cell of the exercise that had to be stopped, or ran out of memory, is the likelier
            # reason than the check's.
            theirs = submission.cells_of(number)
            stopped = [(c, by_position.get(c.position)) for c in theirs if isinstance(by_position.get(c.position), Failure)]
            memory = _memory_error([c for c in theirs if c.students], by_position)
            if stopped:
                cell, failure = stopped[0]
                kind = "timeout" if failure.kind == "timeout" else "error"
                verdict = Verdict(kind, f"{cell.filename}: {failure.why}", verdict.lines, call=verdict.call,
                                  max_points=verdict.max_points)
            elif memory:
                verdict = Verdict("error", memory, verdict.lines, call=verdict.call, max_points=verdict.max_points)
        graded.verdicts[number] = verdict
    return graded
