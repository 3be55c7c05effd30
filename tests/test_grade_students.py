"""The grader holds for what students really write (runnable_book/grade): any call form, a frame-walking or
garbage-collector-reading student, a busy machine.

Three kinds of test:

* properties, no sandbox (Hypothesis): every form of handing functions to a check that Python
  allows gives the check the student's functions; no notebook, however shaped, makes the grader's
  reading of it raise; a fault judging one exercise is that exercise's ``error`` row;
* one class graded with the instructor's hidden cases, every call form a student, beside students
  who walk the stack, read the garbage collector's objects, or answer the hidden cases from a
  table of what the hidden calls expect: every student gets a row, the call forms pass, and the
  hidden cases reach no one's feedback and are passed only where solved;
* one small class graded on a quiet machine and again beside four busy processes on two cores:
  the same grades, byte for byte, though the limits are tight enough that the busy machine's
  wall-clock time would pass them.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import inspect
import json
import os
import subprocess
import sys

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markers import needs

from runnable_book.grade import book as grade_book
from runnable_book.grade.box import call_forms
from runnable_book.grade.generated_class import imports, one_exercise_notebook
from runnable_book.grade.grade import grade, judged_calls, steps_for
from runnable_book.grade.judge import judge
from runnable_book.grade.notebook import Cell
from runnable_book.repository import ROOT

pytestmark = pytest.mark.long  # (a class of a dozen graded once, and a small one three times)

BOOK = grade_book.load()
IMPORTS = imports(BOOK)  # a student's first lines: the library and the page's exercise package
HIDDEN = ROOT / "runnable_book" / "grade" / "examples" / "hidden_cases.py"
ROUTER = next((e for e in BOOK.checked if e.check == "check_router"), None)


def parameters_of(exercise) -> list[str]:
    return list(inspect.signature(exercise.grader_check()).parameters)


# --------------------------------------------------------------------------
# Call forms: every way Python allows of handing functions to a check
# --------------------------------------------------------------------------

def call_form(form: str, check: str, params: list[str], helper: str) -> tuple[str, str]:
    """(a cell defining what the form needs, a cell calling the check in that form): each function
    handed over answers with its own parameter's name, so the test can tell which went where."""
    marks = [f"{helper}_{p}" for p in params]
    defs = "".join(f"def {m}(*args, **kwargs):\n    return {p!r}\n\n" for m, p in zip(marks, params))
    arg_list = {
        "names": ", ".join(marks),
        "lambdas": ", ".join(f"lambda *a, **k: {m}(*a, **k)" for m in marks),
        "keywords": ", ".join(f"{p}={m}" for p, m in reversed(list(zip(params, marks)))),
        "starred": f"*[{', '.join(marks)}]",
        "double-starred": "**{" + ", ".join(f"{p!r}: {m}" for p, m in zip(params, marks)) + "}",
        "partials": ", ".join(f"functools.partial({m})" for m in marks),
        "bound methods": ", ".join(f"{helper}_box.{m}" for m in marks),
        "callable objects": ", ".join(f"{helper}_Call({m})" for m in marks),
    }
    setup = defs + "import functools\n\n"
    setup += (f"class {helper}_Box:\n" + "".join(f"    def {m}(self, *a, **k):\n        return {m}(*a, **k)\n"
                                                 for m in marks) + f"\n{helper}_box = {helper}_Box()\n\n")
    setup += (f"class {helper}_Call:\n    def __init__(self, f):\n        self.f = f\n\n"
              f"    def __call__(self, *a, **k):\n        return self.f(*a, **k)\n")
    return setup, arg_list[form]


FORMS = ["names", "lambdas", "keywords", "starred", "double-starred", "partials", "bound methods", "callable objects"]
PLACES = {  # where the call stands in the student's cell
    "top level": "{call}\n",
    "nested in a call": "print({call})\n",
    "in a loop": "for _ in range(1):\n    {call}\n",
    "in a try": "try:\n    {call}\nexcept Exception:\n    pass\n",
    "in a function": "def try_it():\n    {call}\n\ntry_it()\n",
    "through a module": "import chapter_lib.exercises as ex\nex.{call}\n",
}


def fake_run(cells: list[Cell], namespace: dict) -> None:
    """The notebook's cells in a plain namespace, the checks replaced by no-ops (only the names
    the cells leave behind matter here, as after every cell in the sandbox)."""
    import chapter_lib.exercises as exercises

    saved = {e.check: getattr(exercises, e.check) for e in BOOK.checked}
    try:
        for e in BOOK.checked:
            setattr(exercises, e.check, lambda *a, **k: None)
            namespace[e.check] = getattr(exercises, e.check)
        with contextlib.redirect_stdout(io.StringIO()):
            for cell in cells:
                try:  # a cell that raises does not stop the next, as in the sandbox
                    exec(compile(cell.source, cell.filename, "exec"), namespace)
                except Exception:
                    pass
    finally:
        for name, check in saved.items():
            setattr(exercises, name, check)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exercise=st.sampled_from(BOOK.checked), form=st.sampled_from(FORMS), place=st.sampled_from(sorted(PLACES)),
       helper=st.from_regex(r"[a-z][a-z0-9]{0,6}", fullmatch=True), earlier=st.booleans())
def test_every_call_form_hands_the_students_functions_to_the_check(exercise, form, place, helper, earlier):
    params = parameters_of(exercise)
    setup, arguments = call_form(form, exercise.check, params, helper)
    call = PLACES[place].format(call=f"{exercise.check}({arguments})")
    cells = [Cell(1, exercise.start, exercise.number, "book"), Cell(2, setup, exercise.number, "added")]
    if earlier:  # an earlier call of theirs, of functions since gone: the last call is judged
        cells.append(Cell(3, f"{exercise.check}({', '.join('gone' for _ in params)})", exercise.number, "added"))
    cells.append(Cell(4, call, exercise.number, "added"))
    candidates = judged_calls(exercise, cells)
    assert candidates[-1].position is None and candidates[0].position == 4, candidates
    namespace = {"__name__": "__main__"}
    exec(IMPORTS, namespace)
    fake_run(cells, namespace)
    functions, used = call_forms.handed_functions([c.arguments for c in candidates], params, namespace)
    assert functions is not None, used
    assert [f() for f in functions] == params, f"{form}: {candidates[used].text}"
    assert candidates[used].position == 4
    # The judge names each function, however it was written (a lambda's text has commas in it).
    verdict = judge(exercise, {"calls": [], "used": used}, False, 256, candidates[used])
    assert verdict.verdict == "fail" and verdict.call == candidates[used].text


def test_a_call_that_cannot_be_evaluated_after_every_cell_falls_back_to_the_start_cells_names():
    exercise = BOOK.checked[0]
    params = parameters_of(exercise)
    inside = f"def t():\n    local = 1\n    {exercise.check}({', '.join('local' for _ in params)})\n"
    cells = [Cell(1, exercise.start, exercise.number, "book"), Cell(2, inside, exercise.number, "added")]
    candidates = judged_calls(exercise, cells)
    namespace = {"__name__": "__main__"}
    exec(IMPORTS, namespace)
    fake_run(cells, namespace)
    functions, used = call_forms.handed_functions([c.arguments for c in candidates], params, namespace)
    assert candidates[used].position is None  # the start cell's names
    broken = [Cell(2, f"{exercise.check}({', '.join('1/0' for _ in params)})", exercise.number, "added")]
    candidates = judged_calls(exercise, broken)
    functions, problem = call_forms.handed_functions([c.arguments for c in candidates], params, {})
    assert functions is None and problem["unevaluable"][1] == "ZeroDivisionError"


# --------------------------------------------------------------------------
# Notebooks of any shape: reading them never raises
# --------------------------------------------------------------------------

SOURCES = st.one_of(st.text(max_size=200), st.sampled_from([
    "check_router(", "def f(:\n", "%%time\nx = 1", "!ls", "check_router(*)", "check_router(**x, y)",
    "check_router(lambda: (yield))", "await check_router(x)", "check_router(x for x in y)", "\x00",
    "# Exercise 6: start here", "## Exercise 3", "async def f():\n    check_router(r)\n",
]))
CELLS = st.fixed_dictionaries({"cell_type": st.sampled_from(["code", "markdown", "raw", "unknown"]),
                               "source": st.one_of(SOURCES, st.lists(SOURCES, max_size=3), st.integers(), st.none())},
                              optional={"metadata": st.one_of(st.dictionaries(st.text(max_size=5), st.text(max_size=5)),
                                                              st.text(max_size=5)),
                                        "outputs": st.one_of(st.lists(st.dictionaries(st.text(max_size=5), st.text(
                                            max_size=5)), max_size=2), st.text(max_size=5)),
                                        "id": st.text(max_size=10)})


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(CELLS, max_size=8), book_cells=st.booleans(), data=st.data())
def test_no_notebook_makes_the_grader_raise(tmp_path, cells, book_cells, data):
    """Any cells, of the book's and of garbage, in any order: the grader reads them as a submission
    (or one problem naming why), finds the calls to judge and plans the sandbox's steps."""
    from runnable_book.grade import intake, notebook
    from runnable_book.grade.generated_class import reader_notebook
    from runnable_book.grade.hidden import load

    nb = reader_notebook(BOOK) if book_cells else {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    mixed = list(nb["cells"])
    for cell in cells:
        mixed.insert(data.draw(st.integers(0, len(mixed))), cell)
    nb["cells"] = mixed
    folder = tmp_path / f"class-{os.urandom(4).hex()}"
    folder.mkdir()
    (folder / "student.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    handed = intake.collect(folder, tmp_path / "scratch")
    assert len(handed.handins) == 1
    submission = notebook.read(handed.handins[0], BOOK)
    if submission.problem:
        return
    from runnable_book.grade.sandbox import Limits

    hidden = load(HIDDEN, {e.check: len(e.args) for e in BOOK.checked}) if ROUTER else None
    steps, checks, hidden_steps = steps_for(submission, BOOK, Limits(), None, hidden)
    assert len(checks) == len(BOOK.checked) and all(steps[i]["candidates"] for i in checks)
    assert list(hidden_steps) == sorted(hidden_steps) and min(hidden_steps, default=len(steps)) > max(checks)


# --------------------------------------------------------------------------
# A fault of the grader's judging one exercise is that exercise's error row
# --------------------------------------------------------------------------

class CannedSandbox:
    """A sandbox that answers every step at once: every cell ran, every check recorded nothing."""

    from runnable_book.grade.sandbox import Limits

    limits = Limits()

    async def run(self, library, steps, drivers=None):
        from runnable_book.grade.sandbox import Run

        run = Run()
        for step in steps:
            run.results[step["index"]] = {"ok": True, "output": ""} if step["kind"] == "cell" else \
                {"calls": [], "used": len(step["candidates"]) - 1}
        return run


def test_a_fault_judging_one_exercise_is_that_exercises_error(tmp_path, monkeypatch):
    from runnable_book.grade import grade as grading
    from runnable_book.grade import intake, notebook
    from runnable_book.grade.generated_class import reader_notebook

    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "s.ipynb").write_text(json.dumps(reader_notebook(BOOK)), encoding="utf-8")
    handin = intake.collect(tmp_path / "class", tmp_path / "scratch").handins[0]
    submission = notebook.read(handin, BOOK)
    victim = BOOK.checked[-1].number
    real = grading.judge

    def faulty(exercise, *args, **kwargs):
        if exercise.number == victim:
            raise IndexError("list index out of range")
        return real(exercise, *args, **kwargs)

    monkeypatch.setattr(grading, "judge", faulty)
    graded = asyncio.run(grade(submission, BOOK, CannedSandbox(), {}, None))
    assert graded.verdicts[victim].verdict == "error" and "IndexError" in graded.verdicts[victim].detail
    assert all(v.verdict == "not attempted" for n, v in graded.verdicts.items() if n != victim)

    def broken_plan(*args, **kwargs):
        raise KeyError("a fault before the sandbox ran")

    monkeypatch.setattr(grading, "steps_for", broken_plan)
    graded = asyncio.run(grade(submission, BOOK, CannedSandbox(), {}, None))
    assert {v.verdict for v in graded.verdicts.values()} == {"error"}
    assert all("KeyError" in v.detail for v in graded.verdicts.values())


# --------------------------------------------------------------------------
# A class graded for real: every form passes, hidden cases stay hidden
# --------------------------------------------------------------------------

def run_grader(*arguments, timeout=900) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "runnable_book.grade", *map(str, arguments)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


SPIES = {  # students who go looking for the hidden cases from inside their function
    "walks the stack": """
import sys

def {name}(*args):
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append(repr(dict(frame.f_locals))[:4000] + repr(frame.f_code.co_filename))
        frame = frame.f_back
    return " | ".join(frames)
""",
    "reads the garbage collector": """
import gc

def {name}(*args):
    seen = []
    for thing in gc.get_objects():
        try:
            if callable(thing) and getattr(thing, "__code__", None) is not None:
                seen.append(thing.__code__.co_filename + ":" + repr(thing.__code__.co_consts)[:300])
            elif isinstance(thing, dict) and len(repr(thing)) < 2000:
                seen.append(repr(thing))
        except Exception:
            pass
    return " | ".join(seen)[:200000]
""",
}
# A student who answers from what the hidden case expects, found up the stack (a variable called
# `allowed` or `expected` in any caller's frame), and else from the book's six questions by heart.
TABLE = IMPORTS + """
import sys
from chapter_lib.chapter15 import questions
from chapter_lib.exercises.solution_6 import GOLD_ROUTES

LEARNED = {{q[1]: GOLD_ROUTES[q[0]] for q in questions()}}


def {name}(text, groups):
    frame = sys._getframe(1)
    while frame is not None:
        for wanted in ("allowed", "expected", "want"):
            if wanted in frame.f_locals:
                found = frame.f_locals[wanted]
                return found[0] if isinstance(found, (list, tuple)) else found
        frame = frame.f_back
    if "finance" in groups:
        return "direct"
    return LEARNED.get(text, "direct")
"""


def hidden_secrets() -> list[str]:
    """What must reach no student's feedback: each hidden case's name, and the hidden file's lines."""
    from runnable_book.grade.hidden import load

    hidden = load(HIDDEN, {e.check: len(e.args) for e in BOOK.checked})
    names = [name for function in hidden.functions.values()
             for name, _ in function(*[lambda *a, **k: None] * len(inspect.signature(function).parameters))]
    lines = [line.strip() for line in hidden.source.splitlines() if len(line.strip()) > 30
             and not line.strip().startswith(('"""', "#", "from ", "import ", "def ", "return"))]
    return names + lines


def table_should_pass() -> tuple[int, int]:
    """The hidden cases the table's fallback answers right: what it earns when it finds nothing up
    the stack (called here from a thread of its own, whose frames hold no case)."""
    import threading

    from runnable_book.grade.hidden import load

    hidden = load(HIDDEN, {e.check: len(e.args) for e in BOOK.checked})
    namespace: dict = {}
    exec(TABLE.format(name="table"), namespace)

    def alone(*args):
        answer = []
        thread = threading.Thread(target=lambda: answer.append(namespace["table"](*args)))
        thread.start()
        thread.join()
        return answer[0]

    results = hidden.results(ROUTER.check, [alone])
    return sum(r.ok for r in results), len(results)


@pytest.fixture(scope="module")
@needs("netns")
def spied_class(tmp_path_factory):
    if ROUTER is None:
        pytest.skip("the book has no check_router exercise for the example hidden cases")
    base = tmp_path_factory.mktemp("students")
    folder = base / "class"
    folder.mkdir()
    params = parameters_of(ROUTER)
    forms = {}
    for form in FORMS:
        setup, arguments = call_form(form, ROUTER.check, params, "mine")
        # Each handed function is the worked solution's router, under the form's wrapping.
        setup = setup.replace("return 'router_fn'", "return route_question(*args, **kwargs)")
        forms[form] = [IMPORTS + setup, f"{ROUTER.check}({arguments})"]
    forms["no call at all"] = [IMPORTS + f"{ROUTER.args[0]} = route_question\n"]
    students = dict(forms)
    for kind, code in SPIES.items():
        students[kind] = [IMPORTS + code.format(name="spy"), f"{ROUTER.check}(spy)"]
    students["answers from the hidden cases' frames"] = [TABLE.format(name="table"), f"{ROUTER.check}(table)"]
    files = {}
    for index, (name, cells) in enumerate(students.items()):
        files[f"{index:02d}.ipynb"] = name
        nbformat.write(nbformat.from_dict(one_exercise_notebook(BOOK, ROUTER.number, cells)), folder / f"{index:02d}.ipynb")
    out = base / "grades"
    done = run_grader(folder, "--out", out, "--hidden", HIDDEN, "--jobs", "2", "--step-seconds", "20")
    rows = list(csv.DictReader((out / "grades.csv").open(encoding="utf-8-sig")))
    results = json.loads((out / "results.json").read_text())["submissions"]
    return {"out": out, "students": students, "forms": forms, "rows": rows, "stdout": done.stdout,
            "results": {files[r["name"]]: r for r in results}}


def test_every_student_gets_a_row_and_the_class_finishes(spied_class):
    submissions = {r["submission"] for r in spied_class["rows"]}
    assert len(submissions) == len(spied_class["students"])
    assert f"{len(spied_class['students'])} students" in spied_class["stdout"]


def test_every_call_form_passes_as_the_worked_solution_does(spied_class):
    for form in spied_class["forms"]:
        verdict = spied_class["results"][form]["verdicts"][str(ROUTER.number)]
        assert verdict["verdict"] == "pass", (form, verdict["detail"], verdict["call"])
        assert verdict["hidden"] == [verdict["hidden"][1]] * 2, (form, verdict["hidden"])


def test_hidden_cases_reach_no_feedback_and_are_passed_only_where_solved(spied_class):
    secrets = hidden_secrets()
    assert secrets
    feedback = spied_class["out"] / "feedback"
    for path in sorted(feedback.iterdir()):
        text = path.read_text(encoding="utf-8")
        leaked = [s for s in secrets if s in text or json.dumps(s)[1:-1] in text]
        assert not leaked, f"{path.name} shows {leaked[:3]}"
    for kind in SPIES:
        verdict = spied_class["results"][kind]["verdicts"][str(ROUTER.number)]
        assert verdict["verdict"] == "fail" and verdict["hidden"][0] == 0, (kind, verdict)
    table = spied_class["results"]["answers from the hidden cases' frames"]["verdicts"][str(ROUTER.number)]
    solved, cases = table_should_pass()
    assert solved < cases, "the example's hidden cases must include some the table's fallback gets wrong"
    assert table["hidden"] == [solved, cases] and table["verdict"] == "fail", table


@pytest.mark.netns
@settings(max_examples=1, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(forms=st.lists(st.tuples(st.sampled_from(FORMS), st.sampled_from(sorted(PLACES))), min_size=4, max_size=4),
       junk=st.lists(st.lists(CELLS, max_size=3), min_size=4, max_size=4))
def test_a_generated_class_finishes_with_a_row_per_student(tmp_path_factory, forms, junk):
    """Students Hypothesis makes up: the router handed over in any form, from any place, among cells of
    any shape; one grading of them all ends with one row per student (and the forms judged)."""
    if ROUTER is None:
        pytest.skip("the book has no check_router exercise")
    folder = tmp_path_factory.mktemp("generated") / "class"
    folder.mkdir()
    params = parameters_of(ROUTER)
    for index, ((form, place), cells) in enumerate(zip(forms, junk)):
        setup, arguments = call_form(form, ROUTER.check, params, "mine")
        setup = setup.replace("return 'router_fn'", "return route_question(*args, **kwargs)")
        call = PLACES[place].format(call=f"{ROUTER.check}({arguments})")
        nb = one_exercise_notebook(BOOK, ROUTER.number, [IMPORTS + setup, call])
        nb["cells"][-1:-1] = cells  # (before the call: the call judged stays the form's)
        (folder / f"{index}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    out = folder.parent / "grades"
    run_grader(folder, "--out", out, "--jobs", "2", "--step-seconds", "20", "--quiet")
    rows = list(csv.DictReader((out / "grades.csv").open(encoding="utf-8-sig")))
    assert sorted({r["submission"] for r in rows}) == sorted(f"{i}.ipynb" for i in range(len(forms)))
    results = {r["name"]: r for r in json.loads((out / "results.json").read_text())["submissions"]}
    for index, (form, place) in enumerate(forms):
        if results[f"{index}.ipynb"]["problem"]:  # a notebook its junk made unreadable: its one error row
            continue
        verdict = results[f"{index}.ipynb"]["verdicts"][str(ROUTER.number)]
        assert verdict["verdict"] == "pass", (form, place, junk[index], verdict["detail"])


# --------------------------------------------------------------------------
# A busy machine changes no verdict
# --------------------------------------------------------------------------

BURN = IMPORTS + """
def burn(rounds):  # a fixed amount of work: the same CPU time however busy the machine
    total = 0
    for i in range(rounds):
        total += i * i
    return total

burn({rounds})
{name} = route_question
"""


def busy_machine(processes: int):
    """Processes that keep the machine's cores busy until ended."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]


@pytest.mark.netns
def test_a_busy_machine_changes_no_grade(tmp_path):
    """Limits in CPU time: a cell that computes for a good part of its limit passes on a quiet
    machine and beside four busy processes on two cores (where the clock would see it take several
    times as long), an endless one times out on both, and the grades are the same bytes. The limit
    is set from what the computing student used on this machine, quietly, so the test holds on a
    faster or slower one."""
    if ROUTER is None:
        pytest.skip("the book has no check_router exercise")
    folder = tmp_path / "class"
    folder.mkdir()
    name = ROUTER.args[0]
    students = {"computes": BURN.format(rounds=5_000_000, name=name), "endless": BURN.format(rounds=10**12, name=name),
                "plain": IMPORTS + f"{name} = route_question\n"}
    for student, code in students.items():
        nbformat.write(nbformat.from_dict(one_exercise_notebook(BOOK, ROUTER.number, [code])), folder / f"{student}.ipynb")

    def graded_on(machine: str, step_seconds: float, hogs: int = 0, only: tuple = ()) -> dict:
        busy = busy_machine(hogs)
        try:
            run_grader(folder, "--out", tmp_path / machine, "--jobs", "2", "--step-seconds", step_seconds, "--quiet",
                       *[a for name in only for a in ("--only", name)])
        finally:
            for hog in busy:
                hog.kill()
                hog.wait()
        results = json.loads((tmp_path / machine / "results.json").read_text())["submissions"]
        return {"bytes": {f: (tmp_path / machine / f).read_bytes() for f in ("grades.csv", "gradebook.csv")},
                "verdicts": {r["name"]: r["verdicts"][str(ROUTER.number)]["verdict"] for r in results},
                "charged": {r["name"]: r["charged_seconds"] for r in results}}

    calibration = graded_on("calibration", 60, only=("computes.ipynb",))
    step = round(max(2.0, 2.5 * calibration["charged"]["computes.ipynb"]), 1)
    quiet, busy = graded_on("quiet", step), graded_on("busy", step, hogs=4)
    assert quiet["verdicts"] == {"computes.ipynb": "pass", "endless.ipynb": "timeout", "plain.ipynb": "pass"}
    assert busy["bytes"] == quiet["bytes"], busy["verdicts"]
