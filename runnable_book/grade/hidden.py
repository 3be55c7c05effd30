"""Hidden cases (ours): an instructor's extra cases for a check, read by the grader alone.

``HIDDEN=<file>`` names a Python file kept outside the book (the format, with an example:
runnable_book/grade/examples/hidden_cases.py): for a check, a function of the same name and
parameters returning extra ``(name, case)`` pairs. The file is the instructor's, so it is
trusted as the book's checks are, and it never enters the sandbox: its cases run here, in
the grader's Python, twice.

1. While the sandbox runs, after every cell and every check (a ``calls`` step, the last of
   the notebook's): :class:`CallDriver` runs the cases on stand-ins, and each call they make
   of a student's function that the sandbox has not answered yet is sent to the sandbox as
   its arguments alone; the sandbox calls the student's function on them and sends back what
   came of it; the cases run again with those answers, until they need no new one. The
   student's code, in the sandbox, sees arguments, never a case's name, its expected answer,
   the file or anything of the grader's: there is nothing there to walk up the stack to, find
   among the garbage collector's objects or read from a file.
2. The judge (runnable_book/grade/judge.py) runs the cases once more on the same record, for the verdict.

The cases must be deterministic (a seeded ``random.Random``, if any): each run of them must make
the same calls given the same answers.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import io
import types
from dataclasses import dataclass
from pathlib import Path

from runnable_book.library_modules.exercise_harness import CaseResult, run_case  # (as every exercise package has it)


class HiddenProblem(Exception):
    """The hidden cases' file cannot be used (the message names the file and why)."""


@dataclass(frozen=True)
class HiddenCases:
    path: Path
    source: str
    functions: dict  # check name -> the function giving its extra cases

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]

    def has(self, check: str) -> bool:
        return check in self.functions

    def results(self, check: str, functions) -> list[CaseResult]:
        """The check's hidden cases run on ``functions`` (in the judge: stand-ins replaying the sandbox)."""
        cases = self.functions[check](*functions)
        pairs = cases.items() if isinstance(cases, dict) else cases
        return [run_case(str(name), case) for name, case in pairs]


class _Unanswered(BaseException):
    """A call the sandbox has not answered yet: the case stops here this round. (A BaseException,
    so that neither ``run_case`` nor an instructor's ``except Exception`` takes it for the case's
    own failure.)"""


ROUNDS = 10_000  # rounds of calls to the sandbox for one check's hidden cases, at most
CALLS = 20_000  # calls of the student's functions, at most (harness.py's CALLS_LIMIT)


class CallDriver:
    """Runs a check's hidden cases outside the sandbox and says which calls the sandbox must make
    next (sandbox.py's ``calls`` step): those the cases make that the record has not answered."""

    def __init__(self, hidden: HiddenCases, check: str, names):
        self.hidden, self.check, self.names = hidden, check, list(names)
        self.rounds = 0

    def next_calls(self, entries: list) -> list | None:
        from runnable_book.grade.box import wire
        from runnable_book.grade.judge import StandIn, answers_of

        self.rounds += 1
        if self.rounds > ROUNDS or len(entries) >= CALLS:
            return None
        wanted: dict[str, dict] = {}
        answers = answers_of(entries, len(self.names))

        def probe(slot: int, name: str):
            stand_in = StandIn(name, answers[slot])

            def missing(args, kwargs, key):
                if key not in wanted:
                    wanted[key] = {"slot": slot, "args": [wire.encode(a) for a in args],
                                   "kwargs": [[k, wire.encode(v)] for k, v in sorted(kwargs.items())]}
                raise _Unanswered()
            stand_in.on_missing = missing
            return stand_in

        stand_ins = [probe(slot, name) for slot, name in enumerate(self.names)]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                cases = self.hidden.functions[self.check](*stand_ins)
                pairs = list(cases.items() if isinstance(cases, dict) else cases)
            except _Unanswered:
                pairs = []
            except Exception:
                return None  # the judge's own run of the cases says what went wrong
            for _, case in pairs:
                try:
                    case()
                except _Unanswered:
                    continue
                except Exception:
                    continue
        return list(wanted.values()) or None


def load(path: Path, checks: dict[str, int]) -> HiddenCases:
    """The file's hidden cases; ``checks``: the book's check names and how many functions each takes."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as error:
        raise HiddenProblem(f"HIDDEN={path}: cannot be read ({error.strerror})") from None
    module = types.ModuleType("hidden_cases")
    module.__file__ = str(path)
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    except Exception as error:
        line = getattr(error, "lineno", None)
        raise HiddenProblem(f"HIDDEN={path}{f', line {line}' if line else ''}: "
                            f"{type(error).__name__}: {error}") from None
    functions = {}
    for name, value in vars(module).items():
        if not name.startswith("check_") or not inspect.isfunction(value) or value.__module__ != "hidden_cases":
            continue
        if name not in checks:
            raise HiddenProblem(f"HIDDEN={path}: `{name}` is no check of the book (its checks: "
                                f"{', '.join(sorted(checks))})")
        wanted = checks[name]
        taken = len(inspect.signature(value).parameters)
        if taken != wanted:
            raise HiddenProblem(f"HIDDEN={path}: `{name}` takes {taken} function(s); the book's {name} takes {wanted}")
        functions[name] = value
    if not functions:
        raise HiddenProblem(f"HIDDEN={path}: defines no function named after a check ({', '.join(sorted(checks))})")
    return HiddenCases(path, source, functions)
