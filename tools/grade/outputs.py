"""Every output of a grading, written from its results (ours): the same function for a run, a merge of
shards, and manual scores added later, so each gives the same bytes for the same grades.

In the output folder (``_build/grades`` by default):

=========================  ================================================================
``index.html``             the course's report (tools/grade/report.py)
``grades.csv``             a row per student and checked exercise (tools/grade/gradebook.py)
``gradebook.csv``          a row per student: points per exercise, total, late
``gradebook-canvas.csv``   with ``FORMAT=canvas``: Canvas's gradebook import
``gradebook-moodle.csv``   with ``FORMAT=moodle``: Moodle's offline grading worksheet
``feedback/<student>.*``   each student's feedback, a page and their notebook (tools/grade/feedback.py)
``results.json``           the grades as data, with the run's timings: what the rest is made from
=========================  ================================================================
"""

from __future__ import annotations

from pathlib import Path

from tools.grade import feedback, gradebook, report
from tools.grade.book import Book
from tools.grade.grade import Graded

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
                         f"are not {name.title()}'s), so {target.name} cannot match them: {', '.join(unmatched[:5])}"
                         + (" ..." if len(unmatched) > 5 else ""))
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
    meta = dict(meta, manual=str(manual_path) if manual_path else "")
    report.write_text(out / "index.html", report.page(results, book, meta, len(results), len(results), True, manual))
    return notes
