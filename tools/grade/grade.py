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
from dataclasses import asdict, dataclass, field

from tools.grade.book import Book, CheckedExercise
from tools.pipeline.pages import top_level_names
from tools.grade.judge import Verdict, judge
from tools.grade.notebook import Submission
from tools.grade.sandbox import Failure, Limits, Sandbox

VERDICTS = ("pass", "fail", "not attempted", "timeout", "error")


@dataclass
class Graded:
    """A submission's grades and what the report shows of it."""

    name: str
    problem: str | None = None
    verdicts: dict = field(default_factory=dict)  # exercise number -> Verdict
    cells: list = field(default_factory=list)  # dicts: the notebook's code cells, as the report shows them
    seconds: float = 0.0  # the sandbox's wall time (all its children)
    starts: int = 0  # children started (1, plus one per step that had to be stopped)
    peak_mb: float = 0.0  # the sandbox's largest memory use

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


def book_cell_seconds(limits: Limits) -> float:
    """The limit for a cell of the book left unchanged: our code, tested by `make test`, that
    ends (a worked solution's figure takes seconds on a loaded machine); only the student's
    code before it could make it endless, and then this limit, not the notebook's, stops it."""
    return max(3 * limits.step_seconds, 30.0)


def steps_for(submission: Submission, book: Book, limits: Limits) -> tuple[list[dict], dict[int, int]]:
    """The sandbox's steps: the cells that run, in order, then one check per checked exercise.
    Returns the steps and, for each check step, its exercise's number."""
    steps, checks = [], {}
    for cell in submission.cells:
        if cell.kind == "install":
            continue
        seconds = book_cell_seconds(limits) if cell.kind == "book" else limits.step_seconds
        steps.append({"kind": "cell", "index": len(steps), "source": cell.source, "filename": cell.filename,
                      "position": cell.position, "seconds": seconds})
    for exercise in book.checked:
        filename, source = exercise.source()
        checks[len(steps)] = exercise.number
        steps.append({"kind": "check", "index": len(steps), "exercise": exercise.number, "module": exercise.module,
                      "filename": filename, "source": source, "check": exercise.check, "args": list(exercise.args)})
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


async def grade(submission: Submission, book: Book, sandbox: Sandbox, library: dict) -> Graded:
    graded = Graded(submission.name, submission.problem)
    if submission.problem:
        return graded
    steps, checks = steps_for(submission, book, sandbox.limits)
    run = await sandbox.run(library, steps)
    graded.seconds, graded.starts, graded.peak_mb = run.seconds, run.starts, round(run.peak_mb)
    by_position = {s["position"]: run.results.get(s["index"]) for s in steps if s["kind"] == "cell"}
    graded.cells = [v for c in submission.cells if (v := _cell_view(c, by_position.get(c.position))) is not None]
    for index, number in checks.items():
        exercise = book.numbers[number]
        verdict = judge(exercise, run.results.get(index), untouched(exercise, submission.cells),
                        sandbox.limits.python_mb)
        if verdict.verdict in ("fail", "not attempted"):
            # A cell of the exercise that had to be stopped is the likelier reason than the check's.
            stopped = [(c, by_position.get(c.position)) for c in submission.cells_of(number)
                       if isinstance(by_position.get(c.position), Failure)]
            if stopped:
                cell, failure = stopped[0]
                kind = "timeout" if failure.kind == "timeout" else "error"
                verdict = Verdict(kind, f"{cell.filename}: {failure.why}", verdict.lines)
        graded.verdicts[number] = verdict
    return graded


def summary_counts(results: list[Graded], book: Book) -> dict[int, dict[str, int]]:
    counts = {e.number: {v: 0 for v in VERDICTS} for e in book.checked}
    for graded in results:
        for number, verdict in graded.verdicts.items():
            if number in counts:
                counts[number][verdict.verdict] = counts[number].get(verdict.verdict, 0) + 1
    return counts
