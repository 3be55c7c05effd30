"""`make grade`: a class's notebooks graded offline, in a sandbox (runnable_book/grade).

One grader run, shared by the tests (a module-scoped fixture), grades a handful of crafted
submissions: right, untouched, tampered (replaced checks, printed PASS lines, a patched
chapter_lib and sys.modules, answers that compare equal to anything, a forged grades.csv),
endless (added after that run, then graded alone with `--only`, under the run's limits, reused),
escaping (files written outside, shell commands, network), memory-hungry and corrupt ones,
plus one submission per kind of answer for the same-verdict test. Each gets the verdicts it
should, and nothing is written outside the grades folder.

The same-verdict test gives each checked exercise's right, wrong and untouched code to the
page's Python (Pyodide, cells run as the page runs them: the check called in the same
interpreter as the student's code), to a notebook (JupyterLab's kernel, nbclient) and to the
grader, and asks for one verdict from all three.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest
from student_answers import EXERCISE_3_RIGHT
from markers import needs

from runnable_book.grade import book as grade_book
from runnable_book.grade.generated_class import answers, imports, notebook_with, write
from runnable_book.repository import ROOT

pytestmark = pytest.mark.long  # (one grader run of about 40 s, shared by the module's tests)

BOOK = grade_book.load()
CHECKED = [e.number for e in BOOK.checked]
ANSWERS = answers(BOOK)
# Limits for the test run: short, so the endless and memory-hungry submissions cost little.
STEP_SECONDS = 12  # (the memory-hungry cell must reach its cap first, on a loaded machine too: at 8 s it once
# timed out instead, in a fresh-clone `make test` on a throttled machine)
LIMITS = ["--step-seconds", str(STEP_SECONDS), "--notebook-seconds", "90", "--python-mb", "256", "--process-mb", "1024"]
TOKEN = hashlib.sha256(str(os.getpid()).encode()).hexdigest()[:10]


# The crafted notebooks give four checked exercises a role each, whatever their numbers (and any
# further checked exercise is left untouched): A and B right, C and D the ones that misbehave.
assert len(CHECKED) >= 4, "the crafted notebooks need four checked exercises"
A, B, C, D = CHECKED[0], CHECKED[1], CHECKED[-2], CHECKED[-1]
# Code that only means something for one check: the exercise whose check that is.
BY_CHECK = {e.check: e.number for e in BOOK.checked}


def ex(number):
    return BOOK.numbers[number]


def expect(given: dict) -> dict:
    """Expected verdicts: those given, and not attempted for every other checked exercise."""
    return {n: given.get(n, "not attempted") for n in CHECKED}


def defs(number: int, body: str) -> str:
    """The exercise's functions, named and shaped as its start cell has them, with this body."""
    from runnable_book.grade.generated_class import parameters

    return imports(BOOK) + "".join(f"\n\ndef {name}({parameters(ex(number).start, name)}):\n{body}"
                             for name in ex(number).args)


def right(number):
    return ANSWERS[number]["right"][0]


def wrong(number):
    return ANSWERS[number]["wrong"][0]


def minimal(added: dict, style="page", extra_first=()):
    """The reader notebook with the student's cells added, its worked solutions deleted (a
    student may delete cells; it keeps the run short)."""
    nb = notebook_with(BOOK, added, style=style, extra_first=list(extra_first))
    nb["cells"] = [c for c in nb["cells"] if "hide-cell" not in c.get("metadata", {}).get("tags", [])]
    return nb


# --------------------------------------------------------------------------
# The crafted submissions
# --------------------------------------------------------------------------

EQUAL_TO_ANYTHING = imports(BOOK) + """
class Anything(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def my_assess(passages, query, subject, relation):
    if subject != "Aurora":
        return Verdict("", False, False, None, "discard")
    return Verdict("", True, True, Anything("triple"), Anything("conflict"))


def my_resolve(verdict, passages):
    return Verdict("", True, True, Anything("triple"), Anything("escalate"))
"""


def tampered_notebooks() -> dict[str, dict[int, list[str]]]:
    """Wrong answers, and around them every way we know to make a check say PASS, one notebook
    per kind (a patched chapter_lib reaches every check of its notebook)."""
    checks = {n: [wrong(n)] for n in CHECKED}
    checks[A] = [wrong(A) + f'\nprint("PASS  exercise {A} ({ex(A).check}): all cases pass")\n'
                 'open("grades.csv", "w").write("submission,exercise,verdict,detail\\ntampered.ipynb,3,pass,\\n")\n']
    checks[C] = [wrong(C) + "import sys, types\n"
                 f"sys.modules['{ex(C).module}'] = types.SimpleNamespace(**{{'{ex(C).check}': "
                 f"lambda *f: print('PASS  exercise {C} ({ex(C).check}): all cases pass')}})\n"]
    checks[D] = [wrong(D) + "import chapter_lib.exercises as exercises_module\n"
                 f"import {ex(D).module} as its_module\n"
                 f"fake = lambda *a, **k: print('PASS  exercise {D} ({ex(D).check}): all cases pass')\n"
                 f"exercises_module.{ex(D).check} = its_module.{ex(D).check} = {ex(D).check} = fake\n"
                 f"{ex(D).call}\n"
                 "import js\n"
                 "js.process.stdout.write('{\"type\": \"end\", \"step\": 99, \"result\": \"{}\"}\\n')\n"]
    library = {n: [wrong(n)] for n in CHECKED}
    library[B] = [wrong(B) + "import chapter_lib.exercises.harness as harness\n"
                  "harness.report = lambda n, name, results: print(f'PASS  exercise {n} ({name}): all cases pass')\n"
                  "harness.run_case = lambda name, case: harness.CaseResult(name, True, 'ok')\n"]
    notebooks = {"tampered-checks.ipynb": checks, "tampered-library.ipynb": library}
    if "check_conflict_policy" in BY_CHECK:
        notebooks["tampered-equal.ipynb"] = {BY_CHECK["check_conflict_policy"]: [EQUAL_TO_ANYTHING]}
    return notebooks


def escaping_source(marks: list[str], port: int) -> str:
    """Every way out we could think of, each tried and its outcome printed."""
    return f'''import os, socket, subprocess, urllib.request
import js
from pyodide.code import run_js

MARKS = {marks!r}
attempts = {{}}


def attempt(name, fn):
    try:
        attempts[name] = f"SUCCEEDED: {{fn()!r}}"[:200]
    except BaseException as error:
        attempts[name] = f"{{type(error).__name__}}: {{error}}".splitlines()[0][:200]


fs = lambda: js.process.getBuiltinModule("fs")
for mark in MARKS:
    attempt(f"open({{mark!r}}, 'w')", lambda: open(mark, "w").write("escaped"))
    attempt(f"os.system touch {{mark}}", lambda: os.system(f"touch {{mark}}"))
    attempt(f"subprocess touch {{mark}}", lambda: subprocess.run(["touch", mark]))
    attempt(f"JS fs.writeFileSync {{mark}}", lambda: fs().writeFileSync(mark, "escaped"))
    attempt(f"JS child_process touch {{mark}}", lambda: js.process.getBuiltinModule("child_process").execSync(f"touch {{mark}}"))
attempt("socket to the grader's machine", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
attempt("urllib to the grader's machine", lambda: urllib.request.urlopen("http://127.0.0.1:{port}/", timeout=2).read())
attempt("JS fs.readdirSync of the submissions", lambda: list(fs().readdirSync({str(Path(marks[1]).parent)!r})))
attempt("JS fs.readFileSync of the repository", lambda: fs().readFileSync({str(ROOT / "Makefile")!r}, "utf8")[:40])
attempt("JS worker thread", lambda: js.process.getBuiltinModule("worker_threads").Worker.new("1", js.Object.fromEntries([["eval", True]])))
attempt("JS process.binding", lambda: run_js("process.binding('spawn_sync')"))
attempt("JS native addon", lambda: run_js("process.dlopen({{exports: {{}}}}, '/usr/lib/x86_64-linux-gnu/libc.so.6')"))
attempt("JS process.kill(grader, 0): can it see the grader", lambda: js.process.kill({os.getpid()}, 0))
attempt("JS environment", lambda: run_js("JSON.stringify(process.env)"))
try:
    response = await js.fetch("http://127.0.0.1:{port}/")
    attempts["JS fetch to the grader's machine"] = f"SUCCEEDED: {{response.status}}"
except BaseException as error:
    attempts["JS fetch to the grader's machine"] = f"{{type(error).__name__}}: {{error}}".splitlines()[0]
for name, outcome in attempts.items():
    print(f"{{name}}: {{outcome}}")
'''


def escaping_wrapper(number: int, marks: list[str]) -> str:
    """A right answer whose functions first try to write files and run a shell command, on every call."""
    wrapped = "".join(f"""
_right_{name} = {name}


def {name}(*args, **kwargs):
    for mark in {marks!r}:
        try:
            open(mark, "w").write("escaped")
        except OSError:
            pass
        try:
            os.system(f"touch {{mark}}")
        except OSError:
            pass
    return _right_{name}(*args, **kwargs)
""" for name in ex(number).args)
    return right(number) + "\nimport os\n" + wrapped


def renamed(number: int) -> str:
    """The right answer under names of the student's own, handed to the check by their own call."""
    code, names = right(number), ex(number).args
    for name in names:
        code = code.replace(f"{name} =", f"their_{name} =")
    return code + f"\n{ex(number).check}({', '.join(f'their_{n}' for n in names)})\n"


def unnamed(number: int) -> str:
    """Functions of the student's own, never handed to the check and not under the start cell's names."""
    return right(number).replace("my_", "unused_")


CRASH_CELL = "import js\njs.process.exit(7)\n"


def memory_cells(number: int) -> dict[str, str]:
    return {"python": defs(number, "    hog = []\n    while True:\n        hog.append(bytearray(10**7))\n"),
            "javascript": "import js\nhog = [js.Uint8Array.new(2**28).fill(1) for _ in range(12)]\n"}


# Endless, and idle (blocked, not spinning): a step that uses no CPU for as long as its CPU limit
# is stopped from outside the sandbox as one that uses it up is, and the suite's cores are not
# burnt for it.
IDLE_FOREVER = "from js import Atomics, Int32Array, SharedArrayBuffer\nwhile True:\n    Atomics.wait(Int32Array.new(SharedArrayBuffer.new(4)), 0, 0, 1000)\n"
ENDLESS_CELL = IDLE_FOREVER


def endless_check_calls(number: int) -> str:
    """The exercise's functions, each endless (IDLE_FOREVER) when its check calls it."""
    return defs(number, "".join(f"    {line}\n" for line in IDLE_FOREVER.splitlines()))


def same_verdict_variants() -> dict[int, list[tuple[str, str]]]:
    """Per checked exercise: (name, the student's cell) for right, wrong and untouched code."""
    variants = {}
    for exercise in BOOK.checked:
        kinds = ANSWERS[exercise.number]
        found = [("worked solution", kinds["right"][0])]
        found += [(f"wrong {i + 1}", code) for i, code in enumerate(kinds["wrong"])]
        found += [("raises", kinds["raises"][0]), ("untouched", "")]
        variants[exercise.number] = found
    # A student's own right answer (not the book's), with results of a class of their own.
    if "check_conflict_policy" in BY_CHECK:
        variants[BY_CHECK["check_conflict_policy"]].append(("a student's own", imports(BOOK) + STUDENTS_OWN_3))
    return variants


STUDENTS_OWN_3 = EXERCISE_3_RIGHT


class Listener:
    """A TCP server on the grader's machine that counts who reaches it."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.server.settimeout(0.2)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stopped.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self):
        self.stopped.set()
        self.thread.join()
        self.server.close()


def digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def ensure_assets():
    """The sandbox runs the Pyodide and snapshot `make assets` serves (`make test` makes them
    first; a bare pytest on a fresh clone makes them here)."""
    from runnable_book.grade.sandbox import PYODIDE, SNAPSHOT

    if not (PYODIDE / "pyodide.asm.wasm").exists() or not SNAPSHOT.exists():
        subprocess.run(["make", "--no-print-directory", "assets"], cwd=ROOT, check=True, capture_output=True)


@pytest.fixture(scope="module")
@needs("netns", "whole_book")  # (the sandbox; and `make assets` where they are missing)
def graded(tmp_path_factory):
    """One grader run over every crafted submission: its CSV rows, results, output and the checks
    of what it must not have touched."""
    ensure_assets()
    base = tmp_path_factory.mktemp("grading")
    folder, out = base / "submissions", base / "grades"
    folder.mkdir()
    marks = [str(ROOT / f"escaped-{TOKEN}"), str(folder / f"escaped-{TOKEN}"), f"/tmp/escaped-{TOKEN}",
             str(base / f"escaped-{TOKEN}")]
    listener = Listener()
    write(folder / "right.ipynb", notebook_with(BOOK, {n: [right(n)] for n in CHECKED}, style="page"))
    (folder / "untouched.ipynb").write_bytes(BOOK.notebook.read_bytes())
    for name, cells in tampered_notebooks().items():
        write(folder / name, minimal(cells, style="lab"))
    write(folder / "escaping.ipynb", minimal({BOOK.open[0]: [escaping_source(marks, listener.port)],
                                              A: [right(A)], D: [escaping_wrapper(D, marks)]}))
    hogs = memory_cells(D)
    write(folder / "memory.ipynb", minimal({A: [right(A)], B: [f"hog = bytearray(400 * 2**20)\n{right(B)}"],
                                            C: [hogs["javascript"]], D: [hogs["python"]]}))
    write(folder / "renamed.ipynb", minimal({A: [renamed(A)], B: [unnamed(B)], C: [CRASH_CELL]}))
    (folder / "grades.csv").write_text("submission,exercise,verdict,detail\n"
                                       + "".join(f"tampered.ipynb,{n},pass,\n" for n in CHECKED))
    corrupt = {"not-json.ipynb": b'{"cells": [', "not-a-notebook.ipynb": b"[1, 2, 3]",
               "no-cells.ipynb": b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": {}}',
               "binary.ipynb": bytes(range(256)) * 4,
               "bad-source.ipynb": json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {},
                                               "cells": [{"cell_type": "code", "source": 42}]}).encode()}
    (folder / "corrupt").mkdir()
    for name, content in corrupt.items():
        (folder / "corrupt" / name).write_bytes(content)
    (folder / "corrupt" / "link.ipynb").symlink_to(ROOT / "book" / "15_11_exercises.ipynb")
    variants = same_verdict_variants()
    for j in range(max(len(v) for v in variants.values())):
        added = {n: [v[j % len(v)][1]] for n, v in variants.items() if v[j % len(v)][1]}
        write(folder / f"verdicts-{j + 1}.ipynb", minimal(added, style="lab" if j % 2 else "page"))
    before = digest(folder)
    done = subprocess.run([sys.executable, "-m", "runnable_book.grade", str(folder), "--out", str(out), "--jobs", "2", *LIMITS],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    after = digest(folder)
    # Added after the whole run, then graded alone (as an instructor re-grades one notebook; the other
    # grades are kept), with no limits given: --only reuses the run's (a shorter one would be refused).
    write(folder / "endless.ipynb", minimal({A: [right(A)], B: [right(B)], C: [ENDLESS_CELL],
                                             D: [endless_check_calls(D)]}))
    before_again = digest(folder)
    again = subprocess.run([sys.executable, "-m", "runnable_book.grade", str(folder), "--out", str(out), "--only", "endless.ipynb"],
                           cwd=ROOT, capture_output=True, text=True, timeout=900)
    listener.close()
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert again.stdout.strip().splitlines()[-2].startswith("1 graded again in "), again.stdout
    assert before_again == digest(folder), "the submissions folder changed while endless.ipynb was graded again"
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle))
    results = {s["name"]: s for s in json.loads((out / "results.json").read_text())["submissions"]}
    return {"rows": rows, "results": results, "stdout": done.stdout, "out": out, "folder": folder, "marks": marks,
            "before": before, "after": after, "connections": listener.connections, "variants": variants}


def verdicts(graded, name) -> dict[int, str]:
    return {int(r["exercise"]): r["verdict"] for r in graded["rows"] if r["submission"] == name}


def details(graded, name) -> dict[int, str]:
    return {int(r["exercise"]): r["detail"] for r in graded["rows"] if r["submission"] == name}


def cell_outputs(graded, name) -> list[str]:
    return [c["graded"]["output"] for c in graded["results"][name]["cells"] if c.get("graded")]


# --------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------


def test_every_checked_exercise_names_the_functions_its_check_is_called_on():
    """From the book: each exercise whose start cell imports a check has one `# When ready:` line
    calling it on functions the start cell defines as stubs; the others are open."""
    from runnable_book.pipeline import book_shape

    assert {e.number: [e.check] for e in BOOK.checked} == book_shape.checks()
    assert sorted(BOOK.open + tuple(CHECKED)) == book_shape.exercise_numbers()
    for exercise in BOOK.checked:
        stubs = exercise.stub_functions()
        assert set(stubs) == set(exercise.args), exercise.number
        assert all(body.rstrip().endswith("raise NotImplementedError") for body in stubs.values())


def test_what_a_function_returns_reaches_the_judge_as_a_check_reads_it():
    """wire.py: values as data, and back; a student's objects keep their attributes (a class's
    own, a property's), sets their items in any hash order, and nothing else is built."""
    from collections import namedtuple

    from chapter_lib import Verdict
    from chapter_lib.exercises import sourced_corpus
    from runnable_book.grade.box import wire

    class Resolution:
        action, triple = "escalate", ("Aurora", "region", "us-east-2")

        @property
        def score(self):
            return 3

    def decoded(value):
        return wire.decode(json.loads(json.dumps(wire.encode(value, []))))

    docs = decoded(sourced_corpus())
    assert docs == sourced_corpus() and type(docs[0]).__name__ == "SourcedDoc"
    assert decoded(Verdict("d03", True, True, ("A", "r", "x"), "cite")) == Verdict("d03", True, True, ("A", "r", "x"), "cite")
    record = decoded(Resolution())
    assert (record.action, record.triple, record.score) == ("escalate", ("Aurora", "region", "us-east-2"), 3)
    pair = decoded(namedtuple("Pair", "action triple")("cite", None))
    assert pair == ("cite", None) and pair.action == "cite"
    assert list(decoded(iter([1, 2]))) == [1, 2] and decoded({1: {frozenset({2, 1})}}) == {1: {frozenset({1, 2})}}
    assert wire.call_key(({3, 1, 2},), {}) == wire.call_key(({2, 3, 1},), {})
    with pytest.raises(ValueError):
        wire.decode({"t": "pickle", "v": "..."})
    with pytest.raises(wire.TooLarge):
        wire.encode(list(range(300_000)))


def test_the_csv_has_a_row_per_submission_and_checked_exercise_and_the_page_a_column_per_exercise(graded):
    names = {r["submission"] for r in graded["rows"]}
    assert "grades.csv" not in names and all(n.endswith(".ipynb") for n in names)
    assert list(graded["rows"][0]) == ["student", "submission", "exercise", "verdict", "points", "max_points", "detail"]
    assert {r["verdict"] for r in graded["rows"]} <= {"pass", "fail", "error", "timeout", "not attempted"}
    for name in names - {n for n in names if n.startswith("corrupt/")}:
        assert sorted(verdicts(graded, name)) == CHECKED, name
    page = (graded["out"] / "index.html").read_text()
    assert page.count('<th scope="col">Ex ') == len(CHECKED)
    assert page.count('<tr><th scope="row"><a href="#s') == len(names)  # a row per student (files named by path)
    assert page.count('<tr><th scope="row">Exercise ') == len(BOOK.exercises)  # and one per exercise
    assert "http-equiv=\"refresh\"" not in page and "<progress" not in page  # finished: no reload, no bar
    # (the whole run's summary: every submission but endless.ipynb, graded again after it)
    lines = graded["stdout"].strip().splitlines()
    assert lines[-3].startswith(f"{len(names) - 1} students"), lines[-3:]
    assert lines[-2].startswith("graded in "), lines[-3:]
    # The open exercises are shown as the student's own cells; each verdict opens the check's lines.
    sid = re.search(r'<a href="#(s\d+)">right\.<wbr>ipynb</a>', page).group(1)
    for number in BOOK.open:
        assert f'href="#{sid}-{number}"' in page and f'id="{sid}-{number}"' in page
    assert '<a class="v v-pass" href="#' in page and "its check printed:" in page


def test_right_answers_pass(graded):
    assert verdicts(graded, "right.ipynb") == {n: "pass" for n in CHECKED}


def test_the_untouched_notebook_is_not_attempted(graded):
    assert verdicts(graded, "untouched.ipynb") == {n: "not attempted" for n in CHECKED}
    assert all("still the start cell's stub" in d for d in details(graded, "untouched.ipynb").values())


def test_tampering_changes_no_verdict(graded):
    """Replaced checks, printed PASS lines, sys.modules, a message forged on the sandbox's channel,
    grades.csv written and forged beside the notebooks, a patched chapter_lib, answers equal to
    anything: each exercise gets the verdict its (wrong) answer gets."""
    assert verdicts(graded, "tampered-checks.ipynb") == {n: "fail" for n in CHECKED}
    assert not any("never reached" in d for d in details(graded, "tampered-checks.ipynb").values())
    printed = "\n".join(cell_outputs(graded, "tampered-checks.ipynb"))
    assert f"PASS  exercise {D}" in printed  # the replaced check did print PASS in the sandbox
    assert graded["before"] == graded["after"]  # the forged grades.csv beside the notebooks is untouched
    assert verdicts(graded, "tampered-library.ipynb") == {n: "fail" for n in CHECKED}
    assert all("the notebook's code changed chapter_lib or the check there" in d
               for d in details(graded, "tampered-library.ipynb").values())
    # In the page and a notebook this answer passes (its strings say they equal anything);
    # the grader compares the values they hold.
    if "check_conflict_policy" in BY_CHECK:
        equal = BY_CHECK["check_conflict_policy"]
        assert verdicts(graded, "tampered-equal.ipynb") == expect({equal: "fail"})
        assert "never reached" not in details(graded, "tampered-equal.ipynb")[equal]


def test_an_endless_exercise_times_out_and_the_others_are_graded(graded):
    assert verdicts(graded, "endless.ipynb") == expect({A: "pass", B: "pass", C: "timeout", D: "timeout"})
    detail = details(graded, "endless.ipynb")
    assert f"waited {STEP_SECONDS} s using no CPU at all" in detail[D] and "in this check" in detail[D]
    assert detail[C].startswith("cell ") and "in this cell" in detail[C]  # the endless cell is named
    # A fresh sandbox after the endless cell (the endless check was the last step).
    assert graded["results"]["endless.ipynb"]["starts"] == 2


def test_escaping_attempts_fail_and_nothing_is_written_outside_the_grades(graded):
    assert verdicts(graded, "escaping.ipynb") == expect({A: "pass", D: "pass"})  # D tried to escape on every call
    printed = "\n".join(cell_outputs(graded, "escaping.ipynb"))
    attempts = [line for line in printed.splitlines() if ": " in line and not line.startswith("[")]
    assert len(attempts) >= 25, printed
    # Python's open() writes into the sandbox's own in-memory files (or finds no such folder):
    # nothing reaches the host. Everything else is refused.
    refused = [a for a in attempts if "SUCCEEDED" not in a]
    allowed = [a for a in attempts if "SUCCEEDED" in a]
    assert all(a.startswith(("open(", "JS environment")) for a in allowed), allowed
    assert any("JS child_process" in a and "restricted" in a for a in refused), printed
    for mark in graded["marks"]:
        assert not Path(mark).exists(), f"{mark} was written"
    assert graded["before"] == graded["after"], "the submissions folder changed"
    assert sorted(p.name for p in graded["out"].iterdir()) == ["feedback", "gradebook.csv", "grades.csv", "index.html",
                                                               "results.json"]
    environment = next(a for a in attempts if a.startswith("JS environment"))
    assert "HOME" in environment and "PYTEST" not in environment and "VIRTUAL_ENV" not in environment


def test_no_network_from_the_sandbox(graded):
    isolation = next(line for line in graded["stdout"].splitlines() if "sandbox:" in line)
    if "WITHOUT" in isolation:
        pytest.skip(f"namespaces are not available on this machine: {isolation}")
    assert "network namespace" in isolation
    assert graded["connections"] == 0
    printed = "\n".join(cell_outputs(graded, "escaping.ipynb"))
    assert "JS fetch to the grader's machine: JsException: TypeError: fetch failed" in printed


def test_memory_hungry_code_gets_errors_and_the_rest_is_graded(graded):
    assert verdicts(graded, "memory.ipynb") == expect({A: "pass", B: "error", C: "error", D: "error"})
    detail = details(graded, "memory.ipynb")
    assert "ran out of memory (Python in the sandbox has 256 MB)" in detail[D]
    assert "used more than 1024 MB" in detail[C]
    # A cell that ran out of memory before defining the functions: a memory error, named, not the stub's
    # NotImplementedError.
    assert re.fullmatch(r"cell \d+: ran out of memory \(MemoryError.*\)", detail[B]), detail[B]


def test_the_function_the_student_hands_to_the_check_is_judged_whatever_its_name(graded):
    """A student who renamed the start cell's function and called the check on theirs passes; one with
    cells of their own who never hands their functions to the check fails on the stubs (not "not attempted");
    a sandbox that dies says how and in which cell; an exercise left alone is not attempted."""
    assert verdicts(graded, "renamed.ipynb") == expect({A: "pass", B: "fail", C: "error"})
    detail = details(graded, "renamed.ipynb")
    assert "raised NotImplementedError" in detail[B], detail[B]
    assert re.fullmatch(r"cell \d+: the sandbox's process ended \(exit status 7\).*", detail[C]), detail[C]
    judged = graded["results"]["renamed.ipynb"]["verdicts"][str(A)]
    assert judged["call"] == f"{ex(A).check}({', '.join(f'their_{n}' for n in ex(A).args)})"
    assert judged["points"] == judged["max_points"] == ex(A).points


def test_a_file_that_cannot_be_read_gets_one_error_row_naming_why(graded):
    why = {r["submission"]: r["detail"] for r in graded["rows"] if r["submission"].startswith("corrupt/")}
    assert set(why) == {f"corrupt/{n}" for n in ("not-json.ipynb", "not-a-notebook.ipynb", "no-cells.ipynb",
                                                 "binary.ipynb", "bad-source.ipynb", "link.ipynb")}
    assert all(r["verdict"] == "error" and r["exercise"] == "" for r in graded["rows"]
               if r["submission"].startswith("corrupt/"))
    assert "not valid JSON" in why["corrupt/not-json.ipynb"]
    assert "not an object" in why["corrupt/not-a-notebook.ipynb"]
    assert "nbformat 4 has a list of cells" in why["corrupt/no-cells.ipynb"]
    assert "not text" in why["corrupt/binary.ipynb"]
    assert "neither text nor a list of lines" in why["corrupt/bad-source.ipynb"]
    assert "symbolic link" in why["corrupt/link.ipynb"]


# --------------------------------------------------------------------------
# One verdict everywhere: the page's Python, the notebook, the grader
# --------------------------------------------------------------------------


def verdict_cells(variants) -> list[tuple[int, str, list[str]]]:
    """(exercise, variant, cells): the start cell, the student's cell, the check called."""
    runs = []
    for exercise in BOOK.checked:
        for name, code in variants[exercise.number]:
            runs.append((exercise.number, name, [exercise.start, code or "pass", exercise.call]))
    return runs


def page_verdicts(runs, folder: Path) -> list[str]:
    """The first line each check prints in the page's Python: Pyodide, cells run as the page runs them."""
    from runnable_book.grade.book import library_files
    from runnable_book.grade.sandbox import Limits, Sandbox

    steps = []
    for _, _, cells in runs:
        for source in cells:
            steps.append({"kind": "cell", "index": len(steps), "source": source, "filename": f"cell {len(steps)}",
                          "position": len(steps)})
    sandbox = Sandbox(folder, Limits(step_seconds=30, notebook_seconds=300))
    run = asyncio.run(sandbox.run(library_files(), steps))
    outputs = [run.results[s["index"]]["output"] for s in steps]
    return [outputs[3 * i + 2].splitlines()[0] for i in range(len(runs))]


def notebook_verdicts(runs) -> list[str]:
    """The first line each check prints in a notebook run by JupyterLab's kernel (nbclient)."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for _, _, cells in runs for source in cells]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    texts = ["".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")
             for cell in nb.cells]
    return [texts[3 * i + 2].splitlines()[0] for i in range(len(runs))]


def test_one_verdict_everywhere(graded, tmp_path):
    variants = graded["variants"]
    runs = verdict_cells(variants)
    extra = []
    if "check_conflict_policy" in BY_CHECK:
        equal = ex(BY_CHECK["check_conflict_policy"])
        extra = [(equal.number, "equal", [equal.start, EQUAL_TO_ANYTHING, equal.call])]
    page, notebook = page_verdicts(runs + extra, tmp_path), notebook_verdicts(runs + extra)
    if extra:
        # The one departure, on purpose: answers that say they equal anything pass in the page and
        # a notebook; the grader compares the values they hold (test_tampering_changes_no_verdict).
        assert page.pop().startswith("PASS") and notebook.pop().startswith("PASS")
    grader, points = {}, {}
    for exercise in BOOK.checked:
        for j, (name, _) in enumerate(variants[exercise.number]):
            grader[(exercise.number, name)] = verdicts(graded, f"verdicts-{j + 1}.ipynb")[exercise.number]
            points[(exercise.number, name)] = next(float(r["points"]) for r in graded["rows"] if r["submission"] ==
                                                   f"verdicts-{j + 1}.ipynb" and int(r["exercise"]) == exercise.number)
    seen, partial = set(), 0
    for (number, name, _), in_page, in_notebook in zip(runs, page, notebook):
        assert in_page == in_notebook, f"exercise {number}, {name}: page {in_page!r}, notebook {in_notebook!r}"
        word = in_page.split()[0]
        assert word in ("PASS", "FAIL") and in_page.startswith(f"{word}  exercise {number} ")
        expected = {"PASS": {"pass"}, "FAIL": {"fail", "not attempted"}}[word]
        assert grader[(number, name)] in expected, f"exercise {number}, {name}: page {word}, grader {grader[(number, name)]}"
        if name == "untouched":
            assert grader[(number, name)] == "not attempted"
        # The points the page's verdict line says are the points the grader gives.
        said = re.search(r", ([\d.]+) of ([\d.]+) points$", in_page)
        assert said and float(said.group(1)) == points[(number, name)], (number, name, in_page, points[(number, name)])
        partial += 0 < points[(number, name)] < float(said.group(2))
        seen.add((number, word))
    assert partial, "no variant earned part of an exercise's points"
    assert seen == {(n, w) for n in CHECKED for w in ("PASS", "FAIL")}  # each exercise passed and failed somewhere


def test_output_no_one_reads_any_more_stops_nothing():
    """`make grade … | head`: once the reader of the progress goes, the grader's prints must not
    raise (a BrokenPipeError in the progress line stopped the run before grades.csv was written)."""
    read, write = os.pipe()
    os.close(read)  # (the pipe's reader has gone before the first line)
    program = ("from runnable_book.grade.__main__ import say\n"
               "for n in range(3):\n    say(f'[{n}/3] a line of progress\\n')\n"
               "import sys; sys.stderr.write('went on\\n')\n")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, stdout=write, stderr=subprocess.PIPE, text=True,
                          timeout=60)
    os.close(write)
    assert (done.returncode, done.stderr) == (0, "went on\n"), done.stderr


def test_the_call_judged_is_the_students_last_call_of_the_check_with_its_functions():
    """By position or by the check's parameter names, any expression; a call with the wrong number of
    functions is not one (the start cell's names are judged then); a missing function is a fail unless
    the student left the exercise alone."""
    import inspect

    from runnable_book.grade.grade import judged_call
    from runnable_book.grade.judge import judge
    from runnable_book.grade.notebook import Cell

    exercise = BOOK.checked[0]
    parameters = list(inspect.signature(exercise.grader_check()).parameters)
    by_keyword = ", ".join(f"{p}=f{i}" for i, p in enumerate(parameters))
    cells = [Cell(1, f"{exercise.check}({', '.join('old' for _ in parameters)})", exercise.number, "added"),
             Cell(2, f"{exercise.check}({by_keyword})\n{exercise.check}()", exercise.number, "edited"),
             Cell(3, f"{exercise.check}({', '.join('book' for _ in parameters)})", exercise.number, "book")]
    call = judged_call(exercise, cells)
    assert call.arguments == by_keyword and call.position == 2
    assert call.names == tuple(f"f{i}" for i in range(len(parameters)))  # in the order of the check's parameters
    assert judged_call(exercise, cells[2:]).names == exercise.args  # the book's own calls are not theirs
    assert judge(exercise, {"missing": [exercise.args[0]]}, False, 256).verdict == "fail"
    assert judge(exercise, {"missing": [exercise.args[0]]}, True, 256).verdict == "not attempted"
