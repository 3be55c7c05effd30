"""`make grade` for a course: a class handed in as an LMS's zip, hidden cases, a due date, manual
scores, feedback per student, a gradebook in Canvas's and Moodle's formats, and shards (runnable_book/grade).

One small class, three students, graded once whole and once in three shards merged: the same
bytes. The class comes as an LMS zip, with what a Mac adds (``__MACOSX``, ``._`` files), a
student's name stored decomposed (NFD, as macOS zips do), Canvas's file names (one student
handed in twice, the second marked LATE) and Moodle's folders (two students' notebooks of the
same name). The router exercise's answers: a lookup table of the book's six questions (it
passes the book's own check), the worked solution's router, and a router of a student's own
under a name of their own.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import unicodedata
import zipfile
from datetime import datetime
from pathlib import Path

import nbformat
import pytest
from markers import needs

from runnable_book.grade import book as grade_book
from runnable_book.grade import intake
from runnable_book.grade.generated_class import imports, one_exercise_notebook
from runnable_book.repository import ROOT

pytestmark = pytest.mark.long  # (four grader runs of a few students each, shared by the module's tests)

BOOK = grade_book.load()
IMPORTS = imports(BOOK)  # a student's first lines: the library and the page's exercise package
ROUTER = next((e for e in BOOK.checked if e.check == "check_router"), None)
if ROUTER is None:
    pytest.skip("the book has no check_router exercise for the hidden cases' example", allow_module_level=True)
HIDDEN = ROOT / "runnable_book" / "grade" / "examples" / "hidden_cases.py"
DUE = "2026-12-01T23:59"
LIMITS = ["--step-seconds", "20", "--notebook-seconds", "120"]

LOOKUP = IMPORTS + """
from chapter_lib.chapter15 import questions
from chapter_lib.exercises.solution_6 import GOLD_ROUTES

LEARNED = {{q[1]: GOLD_ROUTES[q[0]] for q in questions()}}  # the six questions the check asks, by heart


def {name}(text, groups):
    if "finance" in groups:
        return "direct"
    return LEARNED[text]
"""
WORKED = IMPORTS + "{name} = route_question\n"
OWN = IMPORTS + """

def routes_by_length(text, groups):  # a student's own router, under a name of their own
    return "multi_hop" if len(text.split()) > 6 else "direct"


check_router(routes_by_length)
"""
NFD_NAME = unicodedata.normalize("NFD", "José Núñez")


def only_router(cells: list[str]) -> dict:
    """The reader notebook with the student's cells after the router exercise's start cell, and the
    other exercises' code cells deleted (a student may delete cells; it keeps the runs short)."""
    return one_exercise_notebook(BOOK, ROUTER.number, cells)


def lms_zip(path: Path) -> dict:
    """The class as an LMS exports it; returns what each student handed in."""
    name = ROUTER.args[0]
    entries = [
        ("alice_200_9100_ex15.ipynb", (2026, 11, 30, 10, 0, 0), only_router([])),  # first try, untouched
        ("alice_LATE_200_9101_ex15.ipynb", (2026, 12, 2, 9, 0, 0), only_router([LOOKUP.format(name=name)])),
        ("Bob Stone_556_assignsubmission_file_/ex15.ipynb", (2026, 11, 30, 12, 0, 0),
         only_router([WORKED.format(name=name)])),
        (f"{NFD_NAME}_555_assignsubmission_file_/ex15.ipynb", (2026, 12, 2, 8, 0, 0), only_router([OWN])),
    ]
    with zipfile.ZipFile(path, "w") as bundle:
        for entry, when, nb in entries:
            bundle.writestr(zipfile.ZipInfo(entry, when), json.dumps(nb, indent=1))
        bundle.writestr(zipfile.ZipInfo(f"__MACOSX/{NFD_NAME}_555_assignsubmission_file_/._ex15.ipynb",
                                        (2026, 12, 2, 8, 0, 0)), b"\x00\x05\x16\x07 Mac OS X")
        bundle.writestr(zipfile.ZipInfo("._alice_200_9100_ex15.ipynb", (2026, 11, 30, 10, 0, 0)), b"\x00\x05\x16\x07")
        bundle.writestr(zipfile.ZipInfo("readme.txt", (2026, 11, 30, 10, 0, 0)), b"not a notebook")
    return {"alice": LOOKUP.format(name=name), "Bob Stone": WORKED.format(name=name), "José Núñez": OWN}


def manual_csv(path: Path) -> None:
    first_open = BOOK.open[0]
    path.write_text("student,exercise,points,comment\n"
                    f"José Núñez,{first_open},7,\"Good reasoning; cite the figure.\"\n"  # typed composed (NFC)
                    f"alice,{first_open},4,\n"
                    f"Bob Stone,{ROUTER.number},,Clean and short.\n", encoding="utf-8")


def grade(*arguments, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "runnable_book.grade", *map(str, arguments), *LIMITS], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    if check:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
@needs("netns")  # (the grader's sandbox, run as an instructor runs it)
def course(tmp_path_factory):
    base = tmp_path_factory.mktemp("course")
    archive, manual = base / "export.zip", base / "manual.csv"
    answers = lms_zip(archive)
    manual_csv(manual)
    common = ["--due", DUE, "--hidden", HIDDEN, "--manual", manual, "--format", "canvas", "--format", "moodle",
              "--assignment", "Chapter 15 exercises (4242)", "--jobs", "2",
              "--times", "zip"]  # (this zip's entries carry the hand-in times: asked for by name)
    whole = grade(archive, "--out", base / "whole", *common)
    for k in (1, 2, 3):
        grade(archive, "--out", base / "shards" / f"shard-{k}-of-3", "--shard", f"{k}/3", *common)
    merged = subprocess.run([sys.executable, "-m", "runnable_book.grade.shards", "--shards", base / "shards", "--out",
                             base / "merged", "--manual", manual, "--format", "canvas", "--format", "moodle",
                             "--assignment", "Chapter 15 exercises (4242)"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    return {"base": base, "archive": archive, "whole": base / "whole", "merged": base / "merged",
            "stdout": whole.stdout, "answers": answers,
            "results": {s["student"]["name"]: s for s in json.loads((base / "whole" / "results.json").read_text())
                        ["submissions"]}}


def table(path: Path) -> list[list[str]]:
    raw = path.read_bytes()
    assert raw.startswith("\ufeff".encode()), f"{path.name} has no byte-order mark (Excel needs it)"
    return list(csv.reader(io.StringIO(raw.decode("utf-8-sig"))))


def test_a_zip_is_read_as_the_lms_wrote_it_one_student_one_row(course):
    """__MACOSX and ._ files skipped and said to be; Canvas's and Moodle's names give the students; the
    decomposed name composed; a student's two notebooks one row, the later counted and marked late."""
    results = course["results"]
    assert sorted(results) == ["Bob Stone", "José Núñez", "alice"]
    meta = json.loads((course["whole"] / "results.json").read_text())["meta"]
    assert sorted(s.split(":")[0] for s in meta["skipped"]) == [
        "._alice_200_9100_ex15.ipynb", f"__MACOSX/{unicodedata.normalize('NFC', NFD_NAME)}_555_assignsubmission_file_/._ex15.ipynb"]
    alice = results["alice"]
    assert alice["name"] == "alice_LATE_200_9101_ex15.ipynb" and alice["late"]
    assert alice["superseded"] == ["alice_200_9100_ex15.ipynb"]
    assert alice["student"]["lms"] == "canvas" and alice["student"]["lms_id"] == "200"
    assert results["José Núñez"]["student"] == {**results["José Núñez"]["student"], "lms": "moodle", "lms_id": "555"}
    assert results["José Núñez"]["late"] and not results["Bob Stone"]["late"]  # by DUE and the zip's times (TIMES=zip)
    rows = table(course["whole"] / "gradebook.csv")
    assert [r[0] for r in rows[1:]] == ["alice", "Bob Stone", "José Núñez"]
    assert rows[0][:7] == ["student", "lms_id", "submission", "handed_in", "time_from", "due", "late"]
    assert {r[0]: r[6] for r in rows[1:]} == {"alice": "yes", "Bob Stone": "", "José Núñez": "yes"}


def test_a_lookup_table_passes_the_books_check_and_fails_the_hidden_cases(course, capsys):
    """In the page the lookup table passes (the book's check asks the six questions it learned); the
    grader, with the instructor's hidden cases, fails it; the worked solution passes both."""
    namespace = {}
    exec(course["answers"]["alice"], namespace)
    ROUTER.grader_check()(namespace[ROUTER.args[0]])
    assert capsys.readouterr().out.startswith(f"PASS  exercise {ROUTER.number} ")
    alice, bob = (course["results"][n]["verdicts"][str(ROUTER.number)] for n in ("alice", "Bob Stone"))
    assert alice["verdict"] == "fail" and alice["detail"].startswith("(hidden) ")
    assert alice["hidden"][0] < alice["hidden"][1] and 0 < alice["points"] < alice["max_points"]
    assert bob["verdict"] == "pass" and bob["hidden"][0] == bob["hidden"][1] and bob["points"] == bob["max_points"]


def test_the_student_is_judged_on_the_function_they_handed_to_the_check(course):
    jose = course["results"]["José Núñez"]["verdicts"][str(ROUTER.number)]
    assert jose["call"] == f"{ROUTER.check}(routes_by_length)"
    assert jose["verdict"] == "fail" and jose["points"] > 0  # (its own router gets some cases right)


def test_feedback_holds_its_student_and_no_one_else(course):
    """Each student's page and notebook: their verdicts, points and cells, the hidden cases as a count,
    nothing of any other student's (names, submissions, code)."""
    folder = course["whole"] / "feedback"
    results = course["results"]
    hidden_names = ["an unseen one-hop question", "Who owns Falcon?"]
    for name, graded in results.items():
        slug = graded["student"]["slug"]
        page = (folder / f"{slug}.html").read_text()
        notebook = (folder / f"{slug}.ipynb").read_text()
        nbformat.validate(nbformat.reads(notebook, as_version=4))
        assert f"Feedback for {name}" in page and f"Feedback for {name}" in notebook
        for other, theirs in results.items():
            if other == name:
                continue
            code_line = next(line for line in course["answers"][other].splitlines()
                             if line.strip() and line not in course["answers"][name] and not line.startswith("from "))
            for text in (other, theirs["name"], code_line):
                assert text not in page and json.dumps(text)[1:-1] not in notebook, (name, text)
        for secret in hidden_names:
            assert secret not in page and secret not in notebook
        assert "hidden cases" in page.lower()
    # The instructor's report names the hidden cases and shows every student.
    report = (course["whole"] / "index.html").read_text()
    assert hidden_names[0] in report and all(n in report for n in results)
    # A manual comment reaches its student's feedback, cell by cell in the notebook too.
    jose = results["José Núñez"]["student"]["slug"]
    assert "Good reasoning; cite the figure." in (folder / f"{jose}.html").read_text()
    feedback_cells = [c for c in json.loads((folder / f"{jose}.ipynb").read_text())["cells"]
                      if "grader-feedback" in c["metadata"].get("tags", [])]
    assert len(feedback_cells) == len(BOOK.exercises) + 1  # one per exercise and a summary


def test_the_gradebook_has_a_row_per_student_and_the_lms_formats(course):
    rows = table(course["whole"] / "gradebook.csv")
    header, by_student = rows[0], {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert header[7:] == [f"ex{n}" for n in BOOK.exercises] + ["total", "max"]
    first_open = BOOK.open[0]
    assert by_student["José Núñez"][f"ex{first_open}"] == "7" and by_student["alice"][f"ex{first_open}"] == "4"
    assert by_student["Bob Stone"][f"ex{BOOK.open[-1]}"] == ""  # open, not scored
    worth = sum(BOOK.points.values())
    for row in by_student.values():
        given = [float(row[f"ex{n}"]) for n in BOOK.exercises if row[f"ex{n}"]]
        assert float(row["total"]) == pytest.approx(sum(given)) and float(row["max"]) == worth
    canvas = table(course["whole"] / "gradebook-canvas.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Chapter 15 exercises (4242)"]
    assert canvas[1][0] == "Points Possible" and float(canvas[1][5]) == worth
    assert {r[0]: r[1] for r in canvas[2:]} == {"alice": "200", "Bob Stone": "", "José Núñez": ""}
    moodle = table(course["whole"] / "gradebook-moodle.csv")
    assert moodle[0][:2] == ["Identifier", "Full name"] and "Last modified (grade)" in moodle[0]  # (tests/test_grade_lms.py)
    assert {r[1]: r[0] for r in moodle[1:]} == {"alice": "", "Bob Stone": "Participant 556",
                                                "José Núñez": "Participant 555"}
    assert "Clean and short." in next(r[-1] for r in moodle[1:] if r[1] == "Bob Stone")
    assert "NOTE: " in course["stdout"] and "no Canvas id" in course["stdout"]


def test_three_shards_merged_are_one_run(course):
    """Byte for byte: the report, the CSVs and every feedback file."""
    def files(folder: Path) -> dict[str, bytes]:
        return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
                if p.is_file() and p.name != "results.json"}

    whole, merged = files(course["whole"]), files(course["merged"])
    assert sorted(whole) == sorted(merged)
    assert [name for name in whole if whole[name] != merged[name]] == []
    sizes = [len(json.loads((course["base"] / "shards" / f"shard-{k}-of-3" / "results.json").read_text())
                 ["submissions"]) for k in (1, 2, 3)]
    assert sum(sizes) == 3


@pytest.mark.whole_book  # (through `make grade`, as an instructor types it)
def test_only_takes_any_name_and_refuses_an_ambiguous_one(course):
    """Through make, as an instructor types it: a name two students' notebooks share is refused,
    listing them; a name typed composed finds the student stored decomposed."""
    done = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSIONS={course['archive']}",
                           "ONLY=ex15.ipynb"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode != 0
    assert "matches 2 students" in done.stderr and "Bob Stone" in done.stderr and "José Núñez" in done.stderr
    handed = intake.collect(course["archive"], course["base"] / "scratch")
    assert intake.choose("José Núñez", handed).student.lms_id == "555"
    assert intake.choose("alice_200_9100_ex15.ipynb", handed).name == "alice_LATE_200_9101_ex15.ipynb"
    with pytest.raises(intake.IntakeProblem, match="did you mean"):
        intake.choose("Bob Ston", handed)


def test_what_an_instructor_gets_wrong_is_named():
    """Unknown students and points over the exercise's worth in manual.csv, a hidden-cases file that
    names no check, a bad due date, a zip that is no zip: one message naming the file (and line)."""
    from runnable_book.grade import gradebook, hidden
    from runnable_book.grade.grade import Graded

    results = [Graded("a.ipynb", student={"key": "a.ipynb", "name": "Ann", "lms_id": ""})]
    folder = Path(ROOT / "_build" / "test-grade-mistakes")
    folder.mkdir(parents=True, exist_ok=True)
    bad = folder / "manual.csv"
    bad.write_text(f"student,exercise,points,comment\nAnn,{BOOK.open[0]},1,\nZed,{BOOK.open[0]},1,\n")
    with pytest.raises(gradebook.ManualProblem, match=r"manual\.csv, line 3: 'Zed' is no student"):
        gradebook.read_manual(bad, results, BOOK)
    bad.write_text(f"student,exercise,points,comment\nAnn,{BOOK.open[0]},{BOOK.points[BOOK.open[0]] + 1},\n")
    with pytest.raises(gradebook.ManualProblem, match="line 2: .* which is worth"):
        gradebook.read_manual(bad, results, BOOK)
    cases = folder / "cases.py"
    cases.write_text("def check_nothing(f):\n    return []\n")
    with pytest.raises(hidden.HiddenProblem, match="check_nothing` is no check of the book"):
        hidden.load(cases, {e.check: len(e.args) for e in BOOK.checked})
    with pytest.raises(intake.IntakeProblem, match="not a date and time"):
        intake.parse_due("next friday")
    (folder / "not.zip").write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(intake.IntakeProblem, match="not.zip"):
        intake.collect(folder / "not.zip", folder / "scratch")
    assert intake.student_of("smithj_LATE_12_34_my notebook.ipynb")[0].lms_id == "12"
    assert datetime(2026, 12, 1, 23, 59) == intake.parse_due("2026-12-01T23:59")
