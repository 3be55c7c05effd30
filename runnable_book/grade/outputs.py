"""Every output of a grading, written from its results (ours): the same function for a run, a merge of
shards, and manual scores added later, so each gives the same bytes for the same grades.

In the output folder (``_build/grades`` by default):

=========================  ================================================================
``index.html``             the course's report (runnable_book/grade/report.py)
``grades.csv``             a row per student and checked exercise (runnable_book/grade/gradebook.py)
``gradebook.csv``          a row per student: points per exercise, total, late
``gradebook-canvas.csv``   with ``FORMAT=canvas``: Canvas's gradebook import
``gradebook-moodle.csv``   with ``FORMAT=moodle``: Moodle's offline grading worksheet
``feedback/<student>.*``   each student's feedback, a page and their notebook (runnable_book/grade/feedback.py)
``feedback-canvas.zip``    with ``FORMAT=canvas``: for Canvas's "Re-upload Submissions", each student's
                           notebook with its feedback cells under the name Canvas gave their file
``feedback-moodle.zip``    with ``FORMAT=moodle``: for Moodle's "Upload multiple feedback files in a
                           zip", each student's folder as Moodle names it, their notebook and page
``results.json``           the grades as data, with the run's timings: what the rest is made from
=========================  ================================================================

The zips are made the same way each time (sorted entries, one fixed time), so a merge of shards
writes the bytes one run writes. What the instructor should be told is read from the results
themselves (a merge says it again): hand-in times unknown beside a due date, Canvas's students
named as its file names, rows an LMS's import cannot match.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path, PurePosixPath

from runnable_book.grade import feedback, gradebook, lms, report
from runnable_book.grade.book import Book
from runnable_book.grade.grade import Graded

FORMATS = ("canvas", "moodle")


def write_all(out: Path, results: list[Graded], book: Book, meta: dict, manual_path: Path | None = None,
              formats: tuple[str, ...] = (), assignment: str = "", handed_in: dict[str, dict] | None = None) -> list[str]:
    """Write every output for ``results`` into ``out``; returns what the instructor should be told.

    ``handed_in``: student key -> the notebook they handed in, as JSON, for those graded now;
    every other student's feedback notebook is made again from the one already in ``feedback/``."""
    results = report.ordered(results)
    manual = gradebook.read_manual(manual_path, results, book, strict=not meta.get("shard")) if manual_path else {}
    notes = []
    report.write_text(out / "grades.csv", gradebook.grades_csv(results, book))
    report.write_text(out / "gradebook.csv", gradebook.gradebook_csv(results, book, manual))
    for name in FORMATS:
        target = out / f"gradebook-{name}.csv"
        if name not in formats:
            target.unlink(missing_ok=True)  # (a file of an earlier run's would not hold these grades)
            continue
        text = (gradebook.canvas_csv(results, book, manual, assignment or meta.get("title", "Exercises"))
                if name == "canvas" else gradebook.moodle_csv(results, book, manual))
        report.write_text(target, text)
        unmatched = gradebook.without_lms_id(results, name)
        if unmatched:
            notes.append(f"{len(unmatched)} of {len(results)} students have no {name.title()} id (their file names "
                         f"are not {name.title()}'s), so {target.name} cannot match them: {_few(unmatched)}")
        notes += _lms_notes(name, results, book, assignment or meta.get("title", "Exercises"))
    folder = out / "feedback"
    folder.mkdir(exist_ok=True)
    wanted = set()
    for graded in results:
        slug = graded.student.get("slug") or "student"
        wanted.update({f"{slug}.html", f"{slug}.ipynb"})
        report.write_text(folder / f"{slug}.html", feedback.page(graded, book, manual, meta))
        base = (handed_in or {}).get(graded.key) or feedback.base_notebook(folder / f"{slug}.ipynb")
        if base is not None and not graded.problem:
            report.write_text(folder / f"{slug}.ipynb", feedback.dumps(feedback.notebook(base, graded, book, manual, meta)))
        else:
            (folder / f"{slug}.ipynb").unlink(missing_ok=True)
            wanted.discard(f"{slug}.ipynb")
    for stale in folder.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    for name in FORMATS:
        target = out / f"feedback-{name}.zip"
        if name not in formats:
            target.unlink(missing_ok=True)
            continue
        entries, left_out = (canvas_feedback if name == "canvas" else moodle_feedback)(results, folder)
        write_zip(target, entries)
        if left_out:
            notes.append(f"{target.name} holds no feedback for {len(left_out)} student(s) ({_few(left_out)}): "
                         f"no {name.title()} id, or no notebook to return")
    notes += _time_notes(results)
    meta = dict(meta, manual=str(manual_path) if manual_path else "")
    report.write_text(out / "index.html", report.page(results, book, meta, len(results), len(results), True, manual))
    return notes


def _few(names: list[str]) -> str:
    return ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")


def _time_notes(results: list[Graded]) -> list[str]:
    """A due date with no hand-in time to compare it with, said once."""
    unknown = [g for g in results if g.student.get("due") and not g.when]
    if not unknown:
        return []
    return [f"{len(unknown)} of {len(results)} students have a due date and no hand-in time (an LMS's zip holds the "
            "download's time, not the hand-in's), so their late flag is the LMS's own mark (Canvas's late) only: "
            "give SUBMITTED=<csv of student,submitted> (or Moodle's grading worksheet), or TIMES=zip to take the "
            "zip's entry times"]


def _lms_notes(name: str, results: list[Graded], book: Book, assignment: str) -> list[str]:
    """What an LMS's import of these rows will do that the instructor may not expect."""
    theirs = [g for g in results if g.student.get("lms") == name]
    unnamed = [g.student_name for g in theirs if not g.student.get("fields")]
    notes = []
    if name == "canvas" and unnamed:
        notes.append(f"{len(unnamed)} Canvas student(s) are named as Canvas's file names write them ({_few(unnamed)}), "
                     "with no SIS ids or section: give ROSTER=<Canvas's gradebook export> to name them as Canvas does "
                     "(its rows still match by ID)")
    if name == "canvas" and not re.search(r"\(\d+\)$", assignment.strip()):
        notes.append(f"gradebook-canvas.csv's column {assignment!r} names no Canvas assignment id: Canvas matches it "
                     "by title, or makes a new assignment; give ASSIGNMENT= as Canvas's gradebook export names the "
                     "column, 'Name (id)'")
    if name == "moodle" and unnamed:
        notes.append(f"gradebook-moodle.csv: 'Last modified (grade)' is '-' for {len(unnamed)} student(s) "
                     f"({_few(unnamed)}), as Moodle writes it for a student with no grade: Moodle updates the grades "
                     "it does not hold yet, and keeps those it holds unless you tick 'Allow updating records that have "
                     "been modified more recently in Moodle than in the spreadsheet'; ROSTER=<the worksheet you "
                     "downloaded> carries Moodle's own times")
    if name == "moodle":
        worth = gradebook.max_total(book)
        maxima = {g.student["fields"].get("Maximum Grade", "") for g in theirs if g.student.get("fields")} - {""}
        other = [m for m in maxima if _float(m) not in (None, worth)]
        if other:
            notes.append(f"Moodle's assignment is out of {', '.join(sorted(other))} (ROSTER=), these grades out of "
                         f"{worth:g}: Moodle takes them as they are (a full mark here is not one there, and a grade "
                         f"above its maximum is skipped); set the assignment's maximum grade to {worth:g}")
    return notes


def _float(text: str) -> float | None:
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def canvas_feedback(results: list[Graded], folder: Path) -> tuple[dict[str, bytes], list[str]]:
    """Canvas's Re-upload Submissions: each student's feedback notebook under their file's own name (Canvas
    reads the user and attachment ids from it and attaches the file, as a comment, under that file's name;
    one file each, since every file of a student would be shown under that one name)."""
    entries, left_out = {}, []
    for graded in results:
        notebook = folder / f"{graded.student.get('slug')}.ipynb"
        if graded.student.get("lms") != "canvas" or not notebook.is_file():
            left_out.append(graded.student_name)
            continue
        entries[lms.canvas_upload_name(graded.name)] = notebook.read_bytes()
    return entries, left_out


def moodle_feedback(results: list[Graded], folder: Path) -> tuple[dict[str, bytes], list[str]]:
    """Moodle's Upload multiple feedback files in a zip: a folder per student as Moodle names it, holding
    their feedback page and their notebook with its feedback cells (under their own file's name)."""
    entries, left_out = {}, []
    for graded in results:
        if graded.student.get("lms") != "moodle":
            left_out.append(graded.student_name)
            continue
        slug = graded.student.get("slug")
        prefix = lms.moodle_upload_folder(graded.student_name, graded.student["lms_id"])
        entries[f"{prefix}/feedback.html"] = (folder / f"{slug}.html").read_bytes()
        notebook = folder / f"{slug}.ipynb"
        if notebook.is_file():
            own = lms.filed(graded.name)
            entries[f"{prefix}/{PurePosixPath(own.file if own else graded.name).name}"] = notebook.read_bytes()
    return entries, left_out


def write_zip(path: Path, entries: dict[str, bytes]) -> None:
    """A zip of ``entries`` (name -> bytes), sorted and at one fixed time: the same bytes for the same
    feedback; written whole or not at all."""
    temporary = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as bundle:
        for name in sorted(entries):
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(entry, entries[name])
    os.replace(temporary, path)
