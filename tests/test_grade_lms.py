"""LMS exports read as the LMS means them, and written as its importers read them (runnable_book/grade: intake.py,
lms.py, lateness.py, gradebook.py, outputs.py).

The exports are made here as each LMS makes them: Canvas's zip with one time on every entry (the
download's), its late mark lower-cased in the name (``nunezjose_late_12345_67890_ex15.ipynb``);
Moodle's with decomposed names (NFD, as a Mac zips them), ``__MACOSX`` and both of its folder
forms. The import files are checked against small copies of the importers' own rules (Moodle's
``assignfeedback_offline_grade_importer``, Canvas's ``GradebookImporter``, Canvas's
``infer_comment_context_from_filename``, Moodle's ``is_valid_filename_for_import``), each quoted
where it is written. Most tests build ``Graded`` records directly; one grades a class of two.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import unicodedata
import zipfile
from datetime import datetime, timedelta
from pathlib import Path, PurePosixPath
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st
from markers import needs

from runnable_book.grade import book as grade_book
from runnable_book.grade import gradebook, intake, lateness, lms, outputs
from runnable_book.grade.__main__ import _placed
from runnable_book.grade.generated_class import notebook_with
from runnable_book.grade.grade import Graded
from runnable_book.grade.judge import Verdict
from runnable_book.repository import ROOT

BOOK = grade_book.load()
DUE = datetime(2026, 12, 1, 23, 59)
DOWNLOADED = (2026, 12, 5, 14, 2, 0)  # Canvas writes the download's time on every entry of its zip
EMPTY = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
CANVAS_FILES = ["nunezjose_late_12345_67890_ex15.ipynb", "kowalskianna_12346_67891_ex15.ipynb",
                "smithbob_12347_67892_ex15.ipynb"]
NFD = lambda text: unicodedata.normalize("NFD", text)  # noqa: E731


def zipped(path: Path, entries: list[tuple[str, tuple]], content: str = EMPTY) -> Path:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, when in entries:
            bundle.writestr(zipfile.ZipInfo(name, when), content)
    return path


def canvas_zip(folder: Path) -> Path:
    return zipped(folder / "canvas.zip", [(name, DOWNLOADED) for name in CANVAS_FILES])


def canvas_roster(path: Path) -> Path:
    """Canvas's gradebook export: sortable names, SIS ids, sections, a Points Possible row."""
    path.write_text("\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Chapter 15 exercises (4242),Current Score\n"
                    "    Points Possible,,,,,40,(read only)\n"
                    '"Núñez, José",12345,S-001,jnunez,Section A,,\n'
                    '"Kowalski, Anna",12346,S-002,akowalski,Section B,,\n'
                    '"Student, Test",99999,,,Section A,,\n', encoding="utf-8")
    return path


def moodle_zip(folder: Path) -> Path:
    """Moodle 4.1's folders (no trailing _), an earlier one's, and a flat file; names decomposed; a Mac's files."""
    return zipped(folder / "moodle.zip", [
        (f"{NFD('José Núñez')}_555_assignsubmission_file/ex15.ipynb", DOWNLOADED),
        ("Bob Stone_556_assignsubmission_file_/ex15.ipynb", DOWNLOADED),
        (f"{NFD('Zoë Ðặng')}_557_assignsubmission_file_notebook.ipynb", DOWNLOADED),
        (f"__MACOSX/{NFD('José Núñez')}_555_assignsubmission_file/._ex15.ipynb", DOWNLOADED),
    ])


def moodle_worksheet(path: Path) -> Path:
    """Moodle's offline grading worksheet as it downloads it."""
    path.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Last modified (grade),Feedback comments\n"
        'Participant 555,José Núñez,jose@example.org,Submitted for grading,,40.00,Yes,'
        '"Wednesday, 2 December 2026, 8:00 AM",-,\n'
        'Participant 556,Bob_Stone Jr,bob@example.org,Submitted for grading,12.00,40.00,Yes,'
        '"Monday, 30 November 2026, 12:00 PM","Thursday, 3 December 2026, 9:15 AM",\n'
        "Participant 558,Absent Student,absent@example.org,No submission,,40.00,Yes,-,-,\n", encoding="utf-8")
    return path


def graded_class(handed: intake.Class, due: datetime | None = DUE) -> list[Graded]:
    """Each counted hand-in placed as the grader places it, with half of every checked exercise's points."""
    results = []
    for handin in handed.handins:
        graded = Graded(handin.name, verdicts={e.number: Verdict("fail", "half", points=e.points / 2,
                                                                 max_points=e.points) for e in BOOK.checked})
        results.append(_placed(graded, handin, due, handed.superseded.get(handin.student.key, [])))
    return results


def rows(text: str) -> list[list[str]]:
    assert text.startswith("\ufeff")
    return list(csv.reader(io.StringIO(text[1:])))


# ---- Canvas: the late mark is its only word on lateness --------------------------------

def test_a_canvas_zip_with_one_time_on_every_entry_is_late_only_where_canvas_says(tmp_path):
    handed = intake.collect(canvas_zip(tmp_path), tmp_path / "scratch")
    assert [h.when for h in handed.handins] == [None, None, None]  # the download's time is no hand-in time
    results = {g.student["lms_id"]: g for g in graded_class(handed)}
    assert {key: g.late for key, g in results.items()} == {"12345": True, "12346": False, "12347": False}
    assert results["12345"].student["name"] == "nunezjose"  # Canvas's file-name form, without a roster
    assert "no hand-in time known" in results["12346"].student["handed_in"]
    assert "Canvas marked it late" in results["12345"].student["handed_in"]
    notes = outputs._time_notes(list(results.values()))
    assert len(notes) == 1 and "3 of 3 students have a due date and no hand-in time" in notes[0]
    table = {r[0]: r for r in rows(gradebook.gradebook_csv(list(results.values()), BOOK, {}))}
    assert table["student"][3:7] == ["handed_in", "time_from", "due", "late"]
    assert table["nunezjose"][3:7] == ["", "Canvas's late mark", "2026-12-01 23:59:00", "yes"]
    # Asked for by name, the zip's times are taken, and all three were "handed in" at the download.
    by_zip = graded_class(intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", times="zip"))
    assert all(g.late and "TIMES=zip" in g.student["handed_in"] for g in by_zip)
    assert outputs._time_notes(by_zip) == []
    with pytest.raises(intake.IntakeProblem, match="is a zip; its own times are TIMES=zip"):
        intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", times="files")


def test_a_folder_keeps_its_files_times_only_when_asked(tmp_path):
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ann.ipynb").write_text(EMPTY)
    assert intake.collect(tmp_path / "class", tmp_path / "scratch").handins[0].when is None
    asked = intake.collect(tmp_path / "class", tmp_path / "scratch", times="files").handins[0]
    assert asked.when is not None and asked.when_from == intake.TIMES["files"]


LETTERS = st.text(st.characters(categories=["Ll", "Lu", "Lo"], exclude_characters="_/\\"), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(name=LETTERS.map(str.lower), mark=st.sampled_from(["", "late", "LATE", "Late", "lAtE"]),
       user=st.integers(1, 10**9), attachment=st.integers(1, 10**9),
       file=st.sampled_from(["ex15.ipynb", "my notebook.ipynb", "ex15-1.ipynb", "a_b_3.ipynb"]))
def test_canvas_file_names_in_every_form_name_their_student(name, mark, user, attachment, file):
    """Canvas's name in any script, its late mark in any case, a file name with _ and digits of its own."""
    path = f"{name}_{mark + '_' if mark else ''}{user}_{attachment}_{file}"
    found = lms.filed(path)
    assert found == lms.Filed("canvas", str(user), name, bool(mark), attachment, file)
    # Canvas's Re-upload Submissions reads the user and attachment back from the same name.
    assert canvas_reupload_ids(lms.canvas_upload_name(path)) == (str(user), str(attachment))


@settings(max_examples=40, deadline=None)
@given(words=st.lists(LETTERS, min_size=1, max_size=3), participant=st.integers(1, 10**7),
       form=st.sampled_from(["{p}/{f}", "{p}_/{f}", "{p}_{f}"]), decomposed=st.booleans())
def test_moodle_names_in_every_form_and_normalisation_name_their_student(tmp_path_factory, words, participant, form,
                                                                          decomposed):
    full_name = " ".join(words)
    prefix = f"{full_name}_{participant}_assignsubmission_file"
    entry = form.format(p=prefix, f="ex15.ipynb")
    folder = tmp_path_factory.mktemp("moodle")
    handed = intake.collect(zipped(folder / "m.zip", [(NFD(entry) if decomposed else entry, DOWNLOADED)]),
                            folder / "scratch")
    student = handed.handins[0].student
    assert (student.lms, student.lms_id, student.name) == ("moodle", str(participant),
                                                          unicodedata.normalize("NFC", full_name))
    assert intake.choose(unicodedata.normalize("NFC", full_name), handed) is handed.handins[0]


def test_a_moodle_zip_from_a_mac_is_read_composed_with_its_resource_forks_listed(tmp_path):
    handed = intake.collect(moodle_zip(tmp_path), tmp_path / "scratch")
    assert [(h.student.name, h.student.lms_id) for h in handed.handins] == [
        ("Bob Stone", "556"), ("José Núñez", "555"), ("Zoë Ðặng", "557")]
    assert handed.skipped == ["__MACOSX/José Núñez_555_assignsubmission_file/._ex15.ipynb: "
                              "a Mac's resource fork (__MACOSX)"]
    assert lms.filed(handed.handins[2].name).file == "notebook.ipynb"


# ---- who the student is: the roster, and every name that finds them --------------------

def test_a_roster_names_canvas_students_as_canvas_does(tmp_path):
    handed = intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", roster=canvas_roster(tmp_path / "r.csv"))
    names = {h.student.lms_id: h.student for h in handed.handins}
    assert names["12345"].name == "Núñez, José" and names["12345"].filed_as == "nunezjose"
    assert dict(names["12346"].fields) == {"SIS User ID": "S-002", "SIS Login ID": "akowalski", "Section": "Section B"}
    assert names["12347"].name == "smithbob" and names["12347"].fields == ()  # not in the roster
    for given_name in ("Núñez, José", "nunezjose", "12345", "S-001", "jnunez", CANVAS_FILES[0]):
        assert intake.choose(given_name, handed).student.lms_id == "12345", given_name
    with pytest.raises(intake.IntakeProblem, match=r"ROSTER=.*moodle\.csv is Moodle's, and no file"):
        intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", roster=moodle_worksheet(tmp_path / "moodle.csv"))
    (tmp_path / "bad.csv").write_text("name,score\nAnn,3\n")
    with pytest.raises(intake.IntakeProblem, match=r"bad\.csv, line 1: neither Canvas's gradebook export"):
        intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", roster=tmp_path / "bad.csv")


# ---- hand-in times and extensions --------------------------------------------------------

def test_a_submissions_list_and_extensions_decide_lateness_and_refuse_unknown_names(tmp_path):
    roster = canvas_roster(tmp_path / "r.csv")
    handed = intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", roster=roster)
    submitted = tmp_path / "submitted.csv"
    submitted.write_text("student,submitted\nnunezjose,2026-11-30T10:00\n12346,2026-12-02T08:00\n")
    extensions = tmp_path / "extensions.csv"
    extensions.write_text('student,due\n"Kowalski, Anna",2026-12-03T23:59\n')
    settled = lateness.settle(handed, submitted, extensions)
    results = {g.student["lms_id"]: g for g in graded_class(settled)}
    # The list's time decides, against the student's own due date: Canvas's mark is outweighed, the
    # extension keeps Anna on time, and Bob, with no time, is not guessed late.
    assert {key: g.late for key, g in results.items()} == {"12345": False, "12346": False, "12347": False}
    assert results["12346"].student["due"] == "2026-12-03 23:59:00" and results["12346"].student["extension"]
    assert "the submissions list, SUBMITTED=submitted.csv" in results["12346"].student["handed_in"]
    assert "which the time and due date decide here" in results["12345"].student["handed_in"]
    assert settled.settings["submitted"]["path"] == str(submitted) and settled.settings["extensions"]["digest"]
    without = {g.student["lms_id"]: g.late for g in graded_class(lateness.settle(handed, submitted, None))}
    assert without["12346"]  # the same hand-in, without the extension
    for text, message in [
        ('student,due\n"Kowalski, Anna",2026-12-03T23:59\nZed,2026-12-04T10:00\n',
         r"EXTENSIONS=.*extensions\.csv, line 3: 'Zed' is no notebook or student of this class"),
        ("student,due\nkowalskianna,friday\n", r"line 2: 'friday' is not a date and time"),
        ("student,due\n12346,2026-12-03T23:59\nakowalski,2026-12-04T23:59\n", r"line 3: a second row for Kowalski"),
        ("name,due\n", r"line 1: the columns should be student, due"),
    ]:
        extensions.write_text(text)
        with pytest.raises(intake.IntakeProblem, match=message):
            lateness.settle(handed, None, extensions)


def test_moodles_worksheet_is_a_submissions_list(tmp_path):
    handed = intake.collect(moodle_zip(tmp_path), tmp_path / "scratch")
    settled = lateness.settle(handed, moodle_worksheet(tmp_path / "worksheet.csv"))
    when = {h.student.lms_id: (h.when, h.when_from) for h in settled.handins}
    assert when["555"] == (datetime(2026, 12, 2, 8, 0), "Moodle's worksheet, SUBMITTED=worksheet.csv")
    assert when["556"][0] == datetime(2026, 11, 30, 12, 0) and when["557"] == (None, "")
    assert {g.student["lms_id"]: g.late for g in graded_class(settled)} == {"555": True, "556": False, "557": False}
    (tmp_path / "extensions.csv").write_text("student,due\nex15.ipynb,2026-12-04T10:00\n")
    with pytest.raises(intake.IntakeProblem, match=r"extensions\.csv, line 2: 'ex15\.ipynb' matches 2 students: "
                                                   r".*Bob Stone.*José Núñez.*or their LMS id"):
        lateness.settle(handed, None, tmp_path / "extensions.csv")


def test_only_reuses_the_amended_gradings_times_extensions_and_roster(tmp_path):
    roster, submitted = canvas_roster(tmp_path / "r.csv"), tmp_path / "submitted.csv"
    submitted.write_text("student,submitted\n12346,2026-12-02T08:00\n")
    handed = intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", times="zip", roster=roster)
    earlier = lateness.settle(handed, submitted).settings
    args = SimpleNamespace(times="", submitted=None, extensions=None, roster=None)
    assert lateness.reuse(args, earlier, set()) == ["TIMES=zip", f"SUBMITTED={submitted}", f"ROSTER={roster}"]
    assert (args.times, args.submitted, args.roster) == ("zip", submitted, roster)
    given = SimpleNamespace(times="", submitted=None, extensions=None, roster=None)
    assert lateness.reuse(given, earlier, {"times", "submitted", "roster"}) == []  # (given again: compared, not reused)
    submitted.write_text("student,submitted\n12346,2026-12-01T08:00\n")
    with pytest.raises(intake.IntakeProblem, match=r"read SUBMITTED=.*submitted\.csv, which is gone or has changed"):
        lateness.reuse(args, earlier, set())


# ---- the import files, against each importer's rules -------------------------------------

def moodle_importer_reads(text: str) -> dict[str, tuple[str, str]]:
    """What Moodle's assignfeedback_offline_grade_importer takes from a worksheet: init() finds its columns by
    their names (get_string: 'Identifier', 'Grade', 'Last modified (grade)') and refuses a file without all
    three; next() strips 'Participant ' (get_string('hiddenuser')) from the Identifier; process_import_grades
    reads the grade with unformat_float and the time with strtotime."""
    header, *body = rows(text)
    index = {name: header.index(name) for name in ("Identifier", "Grade", "Last modified (grade)") if name in header}
    assert len(index) == 3, f"Moodle refuses this worksheet (invalidgradeimport): columns {header}"
    read = {}
    for row in body:
        participant = row[index["Identifier"]][len("Participant "):]
        if participant.isdigit():
            read[participant] = (row[index["Grade"]], row[index["Last modified (grade)"]])
    return read


MOODLE_USERDATE = re.compile(r"^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([1-9]|[12]\d|3[01]) "
                             r"(January|February|March|April|May|June|July|August|September|October|November|"
                             r"December) \d{4}, ([1-9]|1[0-2]):[0-5]\d (AM|PM)$")


def test_moodles_worksheet_has_the_columns_its_importer_needs(tmp_path):
    handed = intake.collect(moodle_zip(tmp_path), tmp_path / "scratch")
    results = graded_class(lateness.settle(handed, moodle_worksheet(tmp_path / "w.csv")))
    text = gradebook.moodle_csv(results, BOOK, {})
    header = rows(text)[0]
    assert header == list(gradebook.MOODLE_COLUMNS) and set(gradebook.MOODLE_REQUIRED) <= set(header)
    read = moodle_importer_reads(text)
    worth = gradebook.max_total(BOOK)
    assert sorted(read) == ["555", "556", "557"]
    for grade, modified in read.values():
        assert 0 <= float(grade) <= worth and modified == "-"  # (no roster: Moodle's "no grade" mark, unquoted)
    by_id = {r[0]: dict(zip(header, r)) for r in rows(text)[1:]}
    assert MOODLE_USERDATE.match(by_id["Participant 555"]["Last modified (submission)"])
    assert by_id["Participant 555"]["Last modified (submission)"] == "Wednesday, 2 December 2026, 8:00 AM"
    assert by_id["Participant 557"]["Last modified (submission)"] == "-"
    # With the worksheet as the roster: Moodle's own times, e-mail and status are carried back.
    named = graded_class(intake.collect(moodle_zip(tmp_path), tmp_path / "scratch", roster=tmp_path / "w.csv"))
    again = {r[0]: dict(zip(header, r)) for r in rows(gradebook.moodle_csv(named, BOOK, {}))[1:]}
    assert again["Participant 556"]["Last modified (grade)"] == "Thursday, 3 December 2026, 9:15 AM"
    assert again["Participant 556"]["Full name"] == "Bob_Stone Jr" and again["Participant 556"]["Status"]
    assert again["Participant 555"]["Email address"] == "jose@example.org"


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 12, 31)))
def test_moodles_dates_are_written_as_its_userdate_and_read_back(when):
    written = lms.moodle_date(when)
    assert MOODLE_USERDATE.match(written), written
    assert written == f"{when:%A}, {when.day} {when:%B} {when.year}, {when.hour % 12 or 12}:{when:%M} {when:%p}"
    assert lms.parse_moodle_date(written) == when.replace(second=0, microsecond=0)
    assert intake.parse_time(written) == when.replace(second=0, microsecond=0)


def canvas_importer_reads(text: str) -> tuple[list[str], dict[str, list[str]], list[str]]:
    """What Canvas's GradebookImporter takes: row_has_student_headers? (Student, ID), update_column_count
    (then SIS Login ID, or SIS User ID and SIS Login ID), the last student column must say Section; a row
    whose first cell says Points Possible is the assignments' points; process_student matches by ID."""
    header, *body = rows(text)
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], header
    count = 3
    if re.search(r"SIS\s+Login\s+ID", header[2]):
        count = 4
    elif re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3]):
        count = 5
    assert "Section" in header[count - 1], f"Canvas: Invalid header row {header}"
    points, students = [], {}
    for row in body:
        if "Points Possible" in row[0]:
            points = row[count:]
        else:
            students[row[0]] = [row[1], *row[count:]]
    return header[count:], students, points


def test_canvas_import_has_an_id_for_every_canvas_row_and_names_from_the_roster(tmp_path):
    handed = intake.collect(canvas_zip(tmp_path), tmp_path / "scratch", roster=canvas_roster(tmp_path / "r.csv"))
    plain = Graded("loose/ann.ipynb", student={"key": "loose/ann.ipynb", "name": "loose/ann.ipynb", "lms": ""})
    results = graded_class(handed) + [plain]
    text = gradebook.canvas_csv(results, BOOK, {}, "Chapter 15 exercises (4242)")
    assignments, students, points = canvas_importer_reads(text)
    assert assignments == ["Chapter 15 exercises (4242)"] and float(points[0]) == gradebook.max_total(BOOK)
    assert {name: row[0] for name, row in students.items()} == {
        "Núñez, José": "12345", "Kowalski, Anna": "12346", "smithbob": "12347", "loose/ann.ipynb": ""}
    table = {r[0]: r for r in rows(text)}
    assert table["Núñez, José"][2:5] == ["S-001", "jnunez", "Section A"]
    out = tmp_path / "out"
    out.mkdir()
    notes = outputs.write_all(out, results, BOOK, {"title": "T"}, formats=("canvas",), assignment="Chapter 15")
    said = "\n".join(notes)
    assert "1 of 4 students have no Canvas id" in said and "loose/ann.ipynb" in said
    assert "1 Canvas student(s) are named as Canvas's file names write them (smithbob)" in said
    assert "names no Canvas assignment id" in said


# ---- feedback, packed for each LMS's bulk upload -------------------------------------------

def canvas_reupload_ids(path: str) -> tuple[str, str]:
    """Canvas's infer_comment_context_from_filename: the file's base name split on _, the first two all-digit
    parts are the user and the attachment (user_id, attachment_id = split_filename.grep(/^\\d+$/).take(2))."""
    digits = [part for part in PurePosixPath(path).name.split("_") if re.fullmatch(r"\d+", part)]
    return digits[0], digits[1]


def moodle_upload_reads(path: str) -> tuple[str, str, str, str] | None:
    """Moodle's is_valid_filename_for_import: each path part exploded on _ (at most 5 pieces); the first with
    4 or more whose second is numeric gives the participant and plugin; what is left is the file's name."""
    parts = path.split("/")
    if parts[-1].startswith((".", "~")):
        return None
    while parts:
        info = parts.pop(0).split("_", 4)
        if len(info) < 4 or not info[1].isdigit():
            continue
        rest = "/".join([info[4] if len(info) == 5 else "", *parts])
        return info[1], info[2], info[3], rest
    return None


def test_feedback_is_packed_as_each_lms_bulk_upload_reads_it(tmp_path):
    canvas = intake.collect(canvas_zip(tmp_path), tmp_path / "s1")
    moodle = intake.collect(moodle_zip(tmp_path), tmp_path / "s2", roster=moodle_worksheet(tmp_path / "w.csv"))
    results = graded_class(canvas) + graded_class(moodle)
    handed_in = {g.key: json.loads(EMPTY) for g in results}
    out = tmp_path / "out"
    out.mkdir()
    notes = "\n".join(outputs.write_all(out, results, BOOK, {"title": "T"}, formats=("canvas", "moodle"),
                                        assignment="X (1)", handed_in=handed_in))
    assert "'Last modified (grade)' is '-' for 1 student(s) (Zoë Ðặng)" in notes  # (not in the worksheet)
    assert (f"set the assignment's maximum grade to {gradebook.max_total(BOOK):g}" in notes) == (
        gradebook.max_total(BOOK) != 40)  # (the worksheet's assignment is out of 40)
    with zipfile.ZipFile(out / "feedback-canvas.zip") as bundle:
        names = bundle.namelist()
        assert sorted(names) == sorted(CANVAS_FILES)  # one file each, named as Canvas named their file
        for name in names:
            theirs = next(g for g in results if g.name == name)
            assert canvas_reupload_ids(name) == (theirs.student["lms_id"], name.split("_")[-2])
            notebook = json.loads(bundle.read(name))
            assert notebook["cells"][0]["metadata"]["tags"] == ["grader-feedback"]
    with zipfile.ZipFile(out / "feedback-moodle.zip") as bundle:
        read = {name: moodle_upload_reads(name) for name in bundle.namelist()}
    assert all(r is not None and r[1:3] == ("assignsubmission", "file") for r in read.values()), read
    per_student = {}
    for name, (participant, _, _, rest) in read.items():
        per_student.setdefault(participant, set()).add(rest.lstrip("/"))
    assert per_student == {"555": {"feedback.html", "ex15.ipynb"}, "556": {"feedback.html", "ex15.ipynb"},
                           "557": {"feedback.html", "notebook.ipynb"}}
    assert any(name.startswith("Bob Stone Jr_556_") for name in read)  # (Moodle's name had an _: Moodle splits on it)
    first = (out / "feedback-moodle.zip").read_bytes()
    outputs.write_all(out, results, BOOK, {"title": "T"}, formats=("canvas", "moodle"), assignment="X (1)")
    assert (out / "feedback-moodle.zip").read_bytes() == first  # the same feedback, the same bytes
    outputs.write_all(out, results, BOOK, {"title": "T"})
    assert not (out / "feedback-moodle.zip").exists() and not (out / "feedback-canvas.zip").exists()


# ---- one class of two, graded as an instructor runs it ---------------------------------------

@pytest.fixture(scope="module")
@needs("netns")  # (the grader's sandbox)
def graded_canvas_class(tmp_path_factory):
    base = tmp_path_factory.mktemp("lms")
    untouched = json.dumps(notebook_with(BOOK, {}))
    archive = zipped(base / "canvas.zip", [(name, DOWNLOADED) for name in CANVAS_FILES[:2]], untouched)
    (base / "extensions.csv").write_text('student,due\n"Núñez, José",2026-12-10T12:00\n')
    done = subprocess.run([sys.executable, "-m", "runnable_book.grade", archive, "--out", base / "out", "--due",
                           "2026-12-01T23:59", "--roster", canvas_roster(base / "roster.csv"), "--extensions",
                           base / "extensions.csv", "--format", "canvas", "--assignment", "Chapter 15 exercises (4242)",
                           "--jobs", "2", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    first = json.loads((base / "out" / "results.json").read_text())
    # José graded again, as typed, with nothing else given: the amended grading's settings are reused.
    again = subprocess.run([sys.executable, "-m", "runnable_book.grade", archive, "--out", base / "out", "--only", "Núñez, José",
                            "--format", "canvas", "--assignment", "Chapter 15 exercises (4242)", "--jobs", "1"],
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    return {"out": base / "out", "stdout": done.stdout, "again": again.stdout, "results": first,
            "amended": json.loads((base / "out" / "results.json").read_text())}


@pytest.mark.long
def test_a_graded_canvas_class_names_times_and_feedback_as_canvas_means_them(graded_canvas_class):
    out, data = graded_canvas_class["out"], graded_canvas_class["results"]
    students = {s["student"]["name"]: s for s in data["submissions"]}
    assert sorted(students) == ["Kowalski, Anna", "Núñez, José"]
    # José has an extension and no hand-in time: Canvas's mark stays Canvas's word; Anna is on time.
    assert students["Núñez, José"]["late"] and not students["Kowalski, Anna"]["late"]
    assert students["Núñez, José"]["student"]["due"] == "2026-12-10 12:00:00"
    settings_used = data["meta"]["settings"]
    assert settings_used["times"] == "" and settings_used["extensions"]["path"].endswith("extensions.csv")
    assert graded_canvas_class["stdout"].count("no hand-in time (an LMS's zip") == 1
    report = (out / "index.html").read_text()
    assert "no hand-in time known; due 2026-12-10 12:00 (an extension); Canvas marked it late" in report
    _, canvas_rows, _ = canvas_importer_reads((out / "gradebook-canvas.csv").read_text(encoding="utf-8"))
    assert {name: row[0] for name, row in canvas_rows.items()} == {"Núñez, José": "12345", "Kowalski, Anna": "12346"}
    with zipfile.ZipFile(out / "feedback-canvas.zip") as bundle:
        assert sorted(bundle.namelist()) == sorted(CANVAS_FILES[:2])
    # ONLY= kept José's name, extension and late flag as the amended grading read them.
    assert "EXTENSIONS=" in graded_canvas_class["again"] and "ROSTER=" in graded_canvas_class["again"]
    amended = {s["student"]["name"]: s for s in graded_canvas_class["amended"]["submissions"]}
    assert sorted(amended) == ["Kowalski, Anna", "Núñez, José"]
    assert amended["Núñez, José"]["student"]["due"] == "2026-12-10 12:00:00" and amended["Núñez, José"]["late"]
