"""``make grade SUBMISSIONS=<folder or zip>``: grade a class's notebooks, offline (ours).

    python -m runnable_book.grade <folder or zip> [--only NAME] [--due DATE] [--hidden FILE] [--shard k/N]
                                          [--manual FILE] [--format canvas|moodle] [--jobs N] ...

Reads the class (runnable_book/grade/intake.py: a folder or an LMS's zip, one notebook counted per
student), grades each student's notebook in a sandbox that fails closed
(runnable_book/grade/sandbox.py, isolation.py), and writes every output (runnable_book/grade/outputs.py):
the report, the CSVs, each student's feedback, and results.json, in ``_build/grades`` (a
shard's in ``_build/grades/shard-k-of-N``). While it grades, a progress bar (on a
terminal; one line per student otherwise) and index.html's own progress bar; at the end,
one summary line. ``--only`` grades one student again and keeps every other grade.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from dataclasses import dataclass
import shutil
import sys
import time
from pathlib import Path

from runnable_book.grade import hidden as hidden_cases
from runnable_book.common import shards as shard_words
from runnable_book.grade import intake, lateness, notebook, outputs, report, runs, shards
from runnable_book.grade import jobs as grade_jobs
from runnable_book.grade.book import BookProblem, digest, library_files, load
from runnable_book.grade.gradebook import ManualProblem
from runnable_book.grade.grade import Graded, grade
from runnable_book.grade.isolation import NotIsolated
from runnable_book.grade.sandbox import Limits, Sandbox
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "grades"


def arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m runnable_book.grade", description=__doc__.split("\n")[0])
    parser.add_argument("submissions", type=Path, help="a folder of .ipynb files (searched below too), or a zip of them")
    parser.add_argument("--out", type=Path, help="where the grades go (default: _build/grades, a shard's below it)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="grade only this student again (a notebook's path or file name, the student's name or "
                             "LMS id); every other grade of the last run is kept")
    parser.add_argument("--page", default=os.environ.get("PAGE") or None,
                        help="the exercise page whose exercises are graded (book/16_09_exercises.md, or its name "
                             "without .md): needed only in a book of several exercise pages")
    parser.add_argument("--due", help="the due date and time (2026-12-01T23:59, local time): later hand-ins are late")
    parser.add_argument("--hidden", type=Path, help="the instructor's hidden cases (runnable_book/grade/examples/hidden_cases.py)")
    parser.add_argument("--shard", help="k/N: grade the k-th of N shards of the class (merge with `make grade-merge`)")
    parser.add_argument("--manual", type=Path, help="the instructor's manual scores (student,exercise,points,comment)")
    parser.add_argument("--format", action="append", default=[], choices=outputs.FORMATS,
                        help="also write an LMS's import file (gradebook-canvas.csv, gradebook-moodle.csv)")
    parser.add_argument("--assignment", default="", help="the assignment's column in Canvas's file: `Name (id)`")
    parser.add_argument("--submitted", type=Path, help="when each student handed in: a CSV of student,submitted, or "
                                                       "Moodle's grading worksheet (runnable_book/grade/lateness.py)")
    parser.add_argument("--extensions", type=Path, help="students' own due dates: a CSV of student,due")
    parser.add_argument("--times", choices=("zip", "files"), default="",
                        help="take the time handed in from the zip's entries or the files' modification times "
                             "(an LMS's zip holds the download's time: by default no time is read from files)")
    parser.add_argument("--roster", type=Path, help="the LMS's table of the students, to name them as it does: "
                                                    "Canvas's gradebook export or Moodle's grading worksheet")
    parser.add_argument("--jobs", type=int, default=None,
                        help="students at a time (default: as many as the CPUs this process may use and the memory "
                             "hold, runnable_book/grade/jobs.py)")
    parser.add_argument("--step-seconds", type=float, default=Limits.step_seconds,
                        help="CPU seconds for each cell of the student's, each check and each check's hidden "
                             "cases (default %(default)g)")
    parser.add_argument("--notebook-seconds", type=float, default=Limits.notebook_seconds,
                        help="CPU seconds for all of a submission's own steps; the book's cells are not charged "
                             "(default %(default)g)")
    parser.add_argument("--python-mb", type=int, default=Limits.python_mb,
                        help="Python's memory in the sandbox; MemoryError past it (default %(default)d)")
    parser.add_argument("--process-mb", type=int, default=Limits.process_mb,
                        help="the sandbox process's memory; killed past it (default %(default)d)")
    parser.add_argument("--unisolated", action="store_true", default=os.environ.get("UNISOLATED") == "1",
                        help="grade even where namespaces are unavailable, with a weaker sandbox (no network "
                             "isolation, no filesystem jail), said on the first line, in the report and in every "
                             "feedback file (default: refuse; UNISOLATED=1 sets it)")
    parser.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    args = parser.parse_args(argv)
    args.given = given_options(parser, argv)  # (ONLY= reuses the earlier grading's settings for the others)
    return args


def given_options(parser: argparse.ArgumentParser, argv) -> set[str]:
    """The options given on the command line, by their names in ``args`` (``step_seconds``): argparse
    sets a default only where the namespace has no value yet, so a namespace of sentinels keeps them."""
    unset = object()
    settable = [a.dest for a in parser._actions  # (append and count actions read their value: left out)
                if a.dest != "help" and not isinstance(a, (argparse._AppendAction, argparse._CountAction))]
    namespace = parser.parse_args(argv, namespace=argparse.Namespace(**{dest: unset for dest in settable}))
    return {dest for dest in settable if getattr(namespace, dest) is not unset}


def say(text: str) -> None:
    """Print to stdout, and go on grading if no one reads it any more (``| head``, a pager
    quit early): what is graded still reaches the outputs. The rest of the run's output goes
    to /dev/null, so Python's own flush at exit raises nothing (the recipe of Python's
    documentation for SIGPIPE)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class Progress:
    """A bar redrawn in place on a terminal; one line per student elsewhere (a log, CI)."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.done, self.started = total, 0, time.monotonic()
        self.tty = sys.stdout.isatty() and not quiet
        self.quiet = quiet

    def update(self, graded: Graded, numbers):
        self.done += 1
        verdicts = "unreadable" if graded.problem else ", ".join(
            f"{n} {graded.verdicts[n].verdict}" for n in numbers if n in graded.verdicts)
        if self.quiet:
            return
        if self.tty:
            width = 28
            filled = round(width * self.done / self.total)
            elapsed = time.monotonic() - self.started
            left = elapsed / self.done * (self.total - self.done)
            line = (f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}  ~{left:.0f} s left  "
                    f"{graded.student_name}: {verdicts}")
            columns = max(40, os.get_terminal_size().columns - 1) if sys.stdout.isatty() else 200
            say(line[:columns].ljust(columns) + ("\n" if self.done == self.total else ""))
        else:
            say(f"[{self.done}/{self.total}] {graded.student_name}: {verdicts} ({graded.seconds:.1f} s)\n")


def _placed(graded: Graded, handin: intake.Handin, due, superseded: list[str]) -> Graded:
    """The student's facts on their grades: who, when, late, and what else they handed in."""
    student = handin.student
    own_due = handin.due or due
    graded.student = {"key": student.key, "name": student.name, "lms": student.lms, "lms_id": student.lms_id,
                      "slug": student.slug, "filed_as": student.filed_as, "fields": dict(student.fields),
                      "due": own_due.isoformat(sep=" ") if own_due else "", "extension": handin.due is not None,
                      "when_from": handin.when_from, "handed_in": lateness.explain(handin, due)}
    graded.when = handin.when.isoformat(sep=" ") if handin.when else ""
    graded.late = lateness.is_late(handin, due)
    graded.superseded = list(superseded)
    return graded


async def grade_all(handins, handed, book, sandbox, hidden, due, kept, meta, out, jobs, progress):
    library = library_files()
    results: list[Graded] = list(kept)
    notebooks: dict[str, dict] = {}
    semaphore = asyncio.Semaphore(max(1, jobs))
    total = len(handins)
    numbers = [e.number for e in book.checked]

    async def one(handin):
        async with semaphore:
            submission = notebook.read(handin, book)
            graded = await grade(submission, book, sandbox, library, hidden)
        _placed(graded, handin, due, handed.superseded.get(handin.student.key, []))
        if submission.data is not None:
            notebooks[graded.key] = submission.data
        results.append(graded)
        progress.update(graded, numbers)
        report.write_text(out / "index.html", report.page(results, book, meta, progress.done, total, finished=False))

    report.write_text(out / "index.html", report.page(results, book, meta, 0, total, finished=False))
    await asyncio.gather(*(one(h) for h in handins))
    return results, notebooks


class Refused(Exception):
    """What the instructor asked for cannot be done: one line, exit status 2."""


@dataclass
class Plan:
    """What a run grades, and with what."""
    book: object
    handed: intake.Class
    chosen: list  # the hand-ins graded now
    kept: list[Graded]  # the grades kept from the grading ONLY= amends
    due: object
    hidden: object
    limits: Limits
    settings: dict  # runnable_book/grade/runs.py
    folder: Path  # where the outputs go: OUT, or the shard folder an ONLY= amends
    earlier: dict | None  # the meta of the grading ONLY= amends
    reused: list[str]  # its settings ONLY= reuses, as options


def plan(args, out: Path) -> Plan:
    """The class, the students to grade now, the grades kept, and the settings (ONLY= reuses the earlier ones)."""
    book = load(args.page)
    if args.shard and args.only:
        raise Refused("ONLY= and SHARD= together: leave SHARD= out. ONLY= grades the student again in the grading in "
                      "OUT= (default _build/grades): in its results.json, or, shards not merged yet, in the student's "
                      "shard folder; make grade-merge then keeps the newest grading of each student")
    # ONLY= reads the class as the grading it amends did (its roster names the student ONLY= gives).
    restored = lateness.reuse(args, lateness.earlier_settings(out), args.given) if args.only else []
    handed = lateness.settle(intake.collect(args.submissions.resolve(), out / ".handins", args.times, args.roster),
                           args.submitted, args.extensions)
    if not handed.handins:
        raise Refused(f"{args.submissions}: no .ipynb files" + (f" ({len(handed.skipped)} skipped)" if handed.skipped else ""))
    chosen = list(handed.handins)
    if args.shard:
        k, n = shard_words.parse(args.shard)
        chosen = [h for h in chosen if shards.belongs(h.student.key, k, n)]
    folder, earlier, kept, reused = out, None, [], []
    if args.only:
        chosen = list({h.student.key: h for h in (intake.choose(name, handed) for name in args.only)}.values())
        again = {h.student.key for h in chosen}
        folder = shards.amended_folder(out, again)
        if (folder / "results.json").is_file():
            earlier, previous = report.read_json(folder / "results.json")
            reused = runs.reuse(args, earlier, args.given) + restored
            kept = [g for g in previous if g.key not in again]
    due = intake.parse_due(args.due) if args.due else None
    hidden = hidden_cases.load(args.hidden.resolve(), {e.check: len(e.args) for e in book.checked}) \
        if args.hidden else None
    limits = Limits(args.step_seconds, args.notebook_seconds, args.python_mb, args.process_mb)
    settings = runs.settings(digest(args.page), book.points, due, hidden, limits)
    settings.update(handed.settings)  # (where hand-in times and extensions came from: runnable_book/grade/lateness.py)
    if earlier is not None:
        runs.check_same(settings, earlier, folder, str(args.submissions), any(r.startswith("HIDDEN=") for r in reused))
    return Plan(book, handed, chosen, kept, due, hidden, limits, settings, folder, earlier, reused)


def main(argv=None) -> int:
    args = arguments(argv)
    try:
        k_n = shard_words.parse(args.shard) if args.shard else None
    except shard_words.ShardProblem as problem:
        print(f"make grade: {problem}", file=sys.stderr)
        return 2
    out = (args.out or OUT).resolve()
    if k_n and out.name != shard_words.folder_name(*k_n):  # (OUT= is the class's folder; a shard's is below it)
        out = out / shard_words.folder_name(*k_n)
    out.mkdir(parents=True, exist_ok=True)
    try:
        return run(args, out)
    finally:  # the sandbox's files and a zip's notebooks, never left behind
        shutil.rmtree(out / ".box", ignore_errors=True)
        shutil.rmtree(out / ".handins", ignore_errors=True)


def run(args, out: Path) -> int:
    try:
        p = plan(args, out)
    except BookProblem as problem:
        print(f"make grade: the book does not say what to grade: {problem}", file=sys.stderr)
        return 2
    except (Refused, intake.IntakeProblem, hidden_cases.HiddenProblem, shard_words.ShardProblem, runs.RunProblem) as problem:
        print(f"make grade: {problem}", file=sys.stderr)
        return 2
    book, handed, chosen, kept, due, hidden, limits = p.book, p.handed, p.chosen, p.kept, p.due, p.hidden, p.limits
    try:
        sandbox = Sandbox(out, limits, args.unisolated)  # (its scratch in OUT, whichever folder is graded)
    except NotIsolated as refusal:
        print(f"make grade: {refusal}", file=sys.stderr)
        return 3
    except RuntimeError as error:
        print(f"make grade: cannot grade: {error}", file=sys.stderr)
        return 2
    jobs = grade_jobs.choose(args.jobs, limits.process_mb)
    describe = sandbox.isolation.describe()
    if not args.quiet or not sandbox.isolation.complete:
        say(describe + "\n")
    if not args.quiet:
        say(f"{jobs.line()}\n")
    if p.reused:
        say(f"ONLY= amends {_shown(p.folder / 'results.json')} with its settings: {', '.join(p.reused)}\n")
    title = next((line[2:].strip() for line in book.page.read_text(encoding="utf-8").splitlines()
                  if line.startswith("# ")), book.page.stem)
    hidden_reused = any(r.startswith("HIDDEN=") for r in p.reused)
    meta = {"title": title, "submissions": str(args.submissions), "isolation": describe,
            "isolation_complete": sandbox.isolation.complete, "book": digest(args.page),
            "due": due.isoformat(sep=" ") if due else "",
            "hidden": (p.earlier.get("hidden", "") if hidden_reused else str(args.hidden)) if args.hidden else "",
            "hidden_file": str(hidden.path) if hidden else "",
            "hidden_digest": hidden.digest if hidden else "", "skipped": handed.skipped,
            "limits": f"{limits.step_seconds:g} s of CPU per cell, check or hidden cases, {limits.notebook_seconds:g} s "
                      f"per notebook (the book's cells not charged), Python {limits.python_mb} MB, the sandbox "
                      f"{limits.process_mb} MB, no network",
            "shard": args.shard or "",
            # What changes a grade and is chosen per run: compared by ONLY= and make grade-merge
            # (runnable_book/grade/runs.py). The folder or zip a notebook came from is not among them: a
            # student graded again may hand in again, in a newer export; each stamp names its own.
            "settings": p.settings}
    this_run = runs.Run.start(f"ONLY={', '.join(args.only)}" if args.only else
                              f"shard {args.shard}" if args.shard else "the class", p.settings)
    if p.earlier is not None:  # the class's facts stay the amended grading's; its weakest isolation stays said
        meta.update({key: p.earlier[key] for key in ("submissions", "shard", "shards", "skipped") if key in p.earlier})
        if not p.earlier.get("isolation_complete", True):
            meta.update(isolation=p.earlier["isolation"], isolation_complete=False)
    meta["runs"] = dict((p.earlier or {}).get("runs", {}), **{this_run.id: this_run.described()})
    meta["graded"] = dict((p.earlier or {}).get("graded", {}))
    meta["graded"].update({h.student.key: this_run.stamp(p.earlier is not None, str(args.submissions)) for h in chosen})
    started = time.monotonic()
    progress = Progress(len(chosen), args.quiet)
    results, notebooks = asyncio.run(grade_all(chosen, handed, book, sandbox, hidden, due, kept, meta, p.folder,
                                               jobs.count, progress))
    seconds = time.monotonic() - started
    graded_now = [g for g in results if g.key in {h.student.key for h in chosen}]
    meta["run"] = {"seconds": round(seconds, 1), "jobs": jobs.count, "jobs_why": jobs.why,
                   "when": time.strftime("%Y-%m-%d %H:%M"), "graded": len(graded_now), "kept": len(kept)}
    report.write_json(p.folder / "results.json", report.ordered(results), meta)
    try:
        notes = outputs.write_all(p.folder, results, book, meta, args.manual, tuple(args.format), args.assignment,
                                  notebooks)
    except ManualProblem as problem:
        print(f"make grade: {problem} (the grades are in results.json: fix the file and run make grade-merge)",
              file=sys.stderr)
        return 2
    timing = report.timing_line(graded_now, seconds, jobs.count, jobs.why)
    if args.only:
        where = (f" (in {p.folder.name}: make grade-merge joins it to the other shards)" if p.folder != out else
                 "" if p.earlier is not None else f" (no earlier grading in {_shown(p.folder)}: only they are in it)")
        say(f"{len(graded_now)} graded again in {seconds:.0f} s, {len(kept)} kept{where} — "
            f"{report.summary_line(results, book).split(' — ', 1)[1]}\n")
    else:
        say(f"{report.summary_line(results, book)}\n{timing}"
            + (f" (shard {args.shard}: merge with make grade-merge)" if args.shard else "") + "\n")
    for note in notes:
        say(f"NOTE: {note}\n")
    say(f"-> {_shown(p.folder / 'index.html')}, {_shown(p.folder / 'gradebook.csv')}, {_shown(p.folder / 'feedback')}/\n")
    return 0


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
