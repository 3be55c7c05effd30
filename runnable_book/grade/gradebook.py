"""The grades as tables (ours): grades.csv, gradebook.csv, an LMS's import file, and manual scores.

* ``grades.csv``: one row per student and checked exercise: ``student, submission, exercise,
  verdict, points, max_points, detail`` (a notebook that cannot be read: one ``error`` row
  with no exercise, naming why).
* ``gradebook.csv``: one row per student: their name and LMS id, the submission counted, when
  it was handed in and where that time came from, their due date, ``late``, one column of points
  per exercise (checked ones from the grader, open ones from the instructor's manual scores;
  empty where nothing was scored), ``total`` and ``max``.
* ``FORMAT=canvas``: ``gradebook-canvas.csv``, Canvas's gradebook import as its importer reads
  it: ``Student, ID, SIS User ID, SIS Login ID, Section`` (the first two must say ``Student``
  and ``ID``, the last ``Section``), one column for the assignment (``ASSIGNMENT=``, as Canvas
  names it, ``Name (id)``: an unknown name makes a new assignment), and a ``Points Possible``
  row. Canvas matches a row by ``ID`` (its user id, from its file names), else the SIS ids,
  else the name; the roster (``ROSTER=``) gives the name, SIS ids and section as Canvas has them.
* ``FORMAT=moodle``: ``gradebook-moodle.csv``, a Moodle assignment's offline grading worksheet,
  uploaded in the assignment's "Upload grading worksheet". Its importer needs ``Identifier``
  (``Participant <id>``, from Moodle's own folder names), ``Grade`` and ``Last modified
  (grade)``, and reads ``Feedback comments``; the rest is Moodle's worksheet as it downloads it.
  ``Last modified (grade)`` is Moodle's safety check (a grade changed in Moodle after that time
  is not overwritten): it is the roster worksheet's own (``ROSTER=``), else ``-``, as Moodle
  writes it for a student it holds no grade for.

Every file is UTF-8 with a byte-order mark, which Excel needs to read accents and both LMSs
accept; a field that begins like a formula (``=``, ``+``, ``-``, ``@``) is quoted with ``'``.

Manual scores (``MANUAL=manual.csv``, the instructor's): ``student, exercise, points,
comment``, one row per student and exercise, the student named as the report names them (or
by their submission, or their LMS id). Points for an open exercise are its score; for a
checked one they replace the grader's (said as such); a comment alone is feedback.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from runnable_book.grade import lms
from runnable_book.grade.book import Book
from runnable_book.grade.grade import Graded

BOM = "\ufeff"


class ManualProblem(Exception):
    """The manual scores' file cannot be used: the message names the file and the line."""


@dataclass(frozen=True)
class Manual:
    points: float | None
    comment: str


def _safe(text) -> str:
    """A spreadsheet does not read a field as a formula (=, +, -, @ first; a lone "-", Moodle's "none", is none)."""
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") and text != "-" else text


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def _csv(rows: list[list]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    for row in rows:
        writer.writerow([_safe(field) if isinstance(field, str) else _number(field) for field in row])
    return BOM + buffer.getvalue()


def read_manual(path: Path, results: list[Graded], book: Book, strict: bool = True) -> dict[tuple[str, int], Manual]:
    """(student key, exercise) -> the instructor's points and comment. Not ``strict`` (a shard, which
    grades some of the class): rows of students it does not hold are left to the merge."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise ManualProblem(f"MANUAL={path}: cannot be read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise ManualProblem(f"MANUAL={path}: not UTF-8 text (save it as CSV UTF-8)") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return {}
    header = [h.strip().lower() for h in rows[0]]
    if header[:3] != ["student", "exercise", "points"]:
        raise ManualProblem(f"{path}, line 1: the columns should be student, exercise, points, comment "
                            f"(found {', '.join(rows[0]) or 'nothing'})")
    names: dict[str, set[str]] = {}
    for graded in results:
        for name in {graded.key, graded.student_name, graded.name, graded.student.get("lms_id", "")} - {""}:
            names.setdefault(unicodedata.normalize("NFC", name), set()).add(graded.key)
    found: dict[tuple[str, int], Manual] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        student, exercise, points, comment = (row + ["", "", "", ""])[:4]
        keys = names.get(unicodedata.normalize("NFC", student.strip()), set())
        where = f"{path}, line {line}"
        if not keys:
            if not strict:
                continue
            raise ManualProblem(f"{where}: {student!r} is no student of these grades")
        if len(keys) > 1:
            raise ManualProblem(f"{where}: {student!r} names {len(keys)} students; use their submission's path")
        try:
            number = int(exercise)
        except ValueError:
            number = -1
        if number not in book.exercises:
            raise ManualProblem(f"{where}: exercise {exercise!r} is not one of the book's "
                                f"({', '.join(map(str, book.exercises))})")
        value = None
        if points.strip():
            try:
                value = float(points)
            except ValueError:
                raise ManualProblem(f"{where}: points {points!r} is not a number") from None
            worth = book.points.get(number)
            if value < 0 or (worth is not None and value > worth):
                raise ManualProblem(f"{where}: {value:g} points for exercise {number}, which is worth "
                                    f"{_number(worth) or 'no points'}")
        key = (next(iter(keys)), number)
        if key in found:
            raise ManualProblem(f"{where}: a second row for {student!r}, exercise {number}")
        found[key] = Manual(value, comment.strip())
    return found


def scores(graded: Graded, book: Book, manual: dict) -> dict[int, float | None]:
    """Each exercise's points for a student: the grader's, or the instructor's where they gave some."""
    found: dict[int, float | None] = {}
    for number in book.exercises:
        verdict = graded.verdicts.get(number)
        value = verdict.points if verdict is not None else None
        if graded.problem and number in book.numbers:
            value = 0.0
        given = manual.get((graded.key, number))
        if given is not None and given.points is not None:
            value = given.points
        found[number] = value
    return found


def total(graded: Graded, book: Book, manual: dict) -> float:
    return round(sum(v for v in scores(graded, book, manual).values() if v is not None), 2)


def max_total(book: Book) -> float:
    return round(sum(book.points.get(n, 0) for n in book.exercises), 2)


def grades_csv(results: list[Graded], book: Book) -> str:
    rows = [["student", "submission", "exercise", "verdict", "points", "max_points", "detail"]]
    for graded in results:
        if graded.problem:
            rows.append([graded.student_name, graded.name, "", "error", 0.0, None, f"cannot be read: {graded.problem}"])
            continue
        for exercise in book.checked:
            verdict = graded.verdicts.get(exercise.number)
            if verdict is None:
                rows.append([graded.student_name, graded.name, str(exercise.number), "error", 0.0,
                             exercise.points, "not graded"])
            else:
                rows.append([graded.student_name, graded.name, str(exercise.number), verdict.verdict, verdict.points,
                             verdict.max_points, " ".join(verdict.detail.split())])
    return _csv(rows)


def gradebook_csv(results: list[Graded], book: Book, manual: dict) -> str:
    rows = [["student", "lms_id", "submission", "handed_in", "time_from", "due", "late",
             *[f"ex{n}" for n in book.exercises], "total", "max"]]
    for graded in results:
        each = scores(graded, book, manual)
        time_from = graded.student.get("when_from", "") or (
            "Canvas's late mark" if graded.late and not graded.when else "")
        rows.append([graded.student_name, graded.student.get("lms_id", ""), graded.name, graded.when, time_from,
                     graded.student.get("due", ""), "yes" if graded.late else "", *[each[n] for n in book.exercises],
                     total(graded, book, manual), max_total(book)])
    return _csv(rows)


def _field(graded: Graded, name: str) -> str:
    """A column of the LMS's roster for this student ("" without one)."""
    return (graded.student.get("fields") or {}).get(name, "")


def canvas_csv(results: list[Graded], book: Book, manual: dict, assignment: str) -> str:
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment],
            ["Points Possible", "", "", "", "", max_total(book)]]
    for graded in results:
        canvas_id = graded.student.get("lms_id", "") if graded.student.get("lms") == "canvas" else ""
        rows.append([graded.student_name, canvas_id, _field(graded, "SIS User ID"), _field(graded, "SIS Login ID"),
                     _field(graded, "Section"), total(graded, book, manual)])
    return _csv(rows)


MOODLE_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                  "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments")
MOODLE_REQUIRED = ("Identifier", "Grade", "Last modified (grade)")  # (its importer refuses a file without one)


def moodle_csv(results: list[Graded], book: Book, manual: dict) -> str:
    rows = [list(MOODLE_COLUMNS)]
    for graded in results:
        participant = graded.student.get("lms_id", "") if graded.student.get("lms") == "moodle" else ""
        comments = "; ".join(f"Exercise {n}: {m.comment}" for (key, n), m in sorted(manual.items())
                             if key == graded.key and m.comment)
        handed_in = lms.moodle_date(datetime.fromisoformat(graded.when)) if graded.when else ""
        rows.append([f"{lms.PARTICIPANT}{participant}" if participant else "", graded.student_name,
                     _field(graded, "Email address"), _field(graded, "Status"), total(graded, book, manual),
                     max_total(book), _field(graded, "Grade can be changed"),
                     handed_in or _field(graded, "Last modified (submission)") or "-",
                     _field(graded, "Last modified (grade)") or "-", comments])
    return _csv(rows)


def without_lms_id(results: list[Graded], lms: str) -> list[str]:
    """Students an LMS's import cannot match (their file names did not come from that LMS)."""
    return [g.student_name for g in results if g.student.get("lms") != lms]
