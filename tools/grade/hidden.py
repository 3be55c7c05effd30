"""Hidden cases (ours): an instructor's extra cases for a check, read by the grader alone.

``HIDDEN=<file>`` names a Python file kept outside the book (the format, with an example:
tools/grade/examples/hidden_cases.py): for a check, a function of the same name and
parameters returning extra ``(name, case)`` pairs. The file is the instructor's, so it is
trusted as the book's checks are: the grader imports it, and the judge runs its cases on
the answers the student's functions gave in the sandbox, after the book's own cases. The
sandbox runs the same cases on the student's functions to record those answers; the file
reaches the sandbox only with an exercise's check, after every cell of the notebook ran.
"""

from __future__ import annotations

import hashlib
import inspect
import types
from dataclasses import dataclass
from pathlib import Path

from chapter_lib.exercises.common import CaseResult, run_case


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

    def spec(self, check: str) -> dict | None:
        """What the sandbox needs to run a check's hidden cases (None: the check has none)."""
        if check not in self.functions:
            return None
        return {"filename": "/grader/hidden_cases.py", "source": self.source, "function": check}

    def results(self, check: str, functions) -> list[CaseResult]:
        """The check's hidden cases run on ``functions`` (in the judge: stand-ins replaying the sandbox)."""
        cases = self.functions[check](*functions)
        pairs = cases.items() if isinstance(cases, dict) else cases
        return [run_case(str(name), case) for name, case in pairs]


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
