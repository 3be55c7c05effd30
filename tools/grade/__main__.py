"""``make grade SUBMISSIONS=<folder or zip>``: grade a class's notebooks, offline (ours).

    python -m tools.grade <folder or zip> [--only NAME] [--due DATE] [--hidden FILE] [--shard k/N]
                                          [--manual FILE] [--format canvas|moodle] [--jobs N] ...

Reads the class (tools/grade/intake.py: a folder or an LMS's zip, one notebook counted per
student), grades each student's notebook in a sandbox that fails closed
(tools/grade/sandbox.py, isolation.py), and writes every output (tools/grade/outputs.py):
the report, the CSVs, each student's feedback, and results.json, in ``_build/grades`` (a
shard's in ``_build/grades/shard-k-of-N``). While it grades, a progress bar (on a
terminal; one line per student otherwise) and index.html's own progress bar; at the end,
one summary line. ``--only`` grades one student again and keeps every other grade.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import time
from pathlib import Path

from tools.grade import hidden as hidden_cases
from tools.grade import intake, notebook, outputs, report, shards
from tools.grade.book import BookProblem, digest, library_files, load
from tools.grade.gradebook import ManualProblem
from tools.grade.grade import Graded, grade
from tools.grade.isolation import NotIsolated
from tools.grade.sandbox import Limits, Sandbox
from tools.repository import ROOT

OUT = ROOT / "_build" / "grades"


def arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m tools.grade", description=__doc__.split("\n")[0])
    parser.add_argument("submissions", type=Path, help="a folder of .ipynb files (searched below too), or a zip of them")
    parser.add_argument("--out", type=Path, help="where the grades go (default: _build/grades, a shard's below it)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="grade only this student again (a notebook's path or file name, the student's name or "
                             "LMS id); every other grade of the last run is kept")
    parser.add_argument("--due", help="the due date and time (2026-12-01T23:59, local time): later hand-ins are late")
    parser.add_argument("--hidden", type=Path, help="the instructor's hidden cases (tools/grade/examples/hidden_cases.py)")
    parser.add_argument("--shard", help="k/N: grade the k-th of N shards of the class (merge with `make grade-merge`)")
    parser.add_argument("--manual", type=Path, help="the instructor's manual scores (student,exercise,points,comment)")
    parser.add_argument("--format", action="append", default=[], choices=outputs.FORMATS,
                        help="also write an LMS's import file (gradebook-canvas.csv, gradebook-moodle.csv)")
    parser.add_argument("--assignment", default="", help="the assignment's column in Canvas's file: `Name (id)`")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="students at a time (default: cores)")
    parser.add_argument("--step-seconds", type=float, default=Limits.step_seconds,
                        help="limit for each cell and each exercise's check (default %(default)g)")
    parser.add_argument("--notebook-seconds", type=float, default=Limits.notebook_seconds,
                        help="limit for one whole submission (default %(default)g)")
    parser.add_argument("--python-mb", type=int, default=Limits.python_mb,
                        help="Python's memory in the sandbox; MemoryError past it (default %(default)d)")
    parser.add_argument("--process-mb", type=int, default=Limits.process_mb,
                        help="the sandbox process's memory; killed past it (default %(default)d)")
    parser.add_argument("--unisolated", action="store_true", default=os.environ.get("UNISOLATED") == "1",
                        help="grade even where namespaces are unavailable, with a weaker sandbox (no network "
                             "isolation, no filesystem jail), said on the first line, in the report and in every "
                             "feedback file (default: refuse; UNISOLATED=1 sets it)")
    parser.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    return parser.parse_args(argv)


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
    graded.student = {"key": student.key, "name": student.name, "lms": student.lms, "lms_id": student.lms_id,
                      "slug": student.slug}
    graded.when = handin.when.isoformat(sep=" ") if handin.when else ""
    graded.late = handin.marked_late or bool(due and handin.when and handin.when > due)
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


def plan(args, out: Path):
    """(the class, the students to grade now, the grades kept from the last run, the due date, the hidden cases)."""
    book = load()
    due = intake.parse_due(args.due) if args.due else None
    hidden = hidden_cases.load(args.hidden.resolve(), {e.check: len(e.args) for e in book.checked}) \
        if args.hidden else None
    handed = intake.collect(args.submissions.resolve(), out / ".handins")
    chosen = list(handed.handins)
    if args.shard:
        if args.only:
            raise Refused("ONLY= and SHARD= together: grade one student again in the shard's own folder, "
                          "without SHARD=, giving OUT= that folder")
        k, n = shards.parse(args.shard)
        chosen = [h for h in chosen if shards.belongs(h.student.key, k, n)]
    kept: list[Graded] = []
    if args.only:
        chosen = list({h.student.key: h for h in (intake.choose(name, handed) for name in args.only)}.values())
        if (out / "results.json").exists():
            _, previous = report.read_json(out / "results.json")
            again = {h.student.key for h in chosen}
            kept = [g for g in previous if g.key not in again]
    if not handed.handins:
        raise Refused(f"{args.submissions}: no .ipynb files" + (f" ({len(handed.skipped)} skipped)" if handed.skipped else ""))
    return book, handed, chosen, kept, due, hidden


def main(argv=None) -> int:
    args = arguments(argv)
    try:
        k_n = shards.parse(args.shard) if args.shard else None
    except shards.ShardProblem as problem:
        print(f"make grade: {problem}", file=sys.stderr)
        return 2
    out = (args.out or (OUT / shards.folder_name(*k_n) if k_n else OUT)).resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        return run(args, out)
    finally:  # the sandbox's files and a zip's notebooks, never left behind
        shutil.rmtree(out / ".box", ignore_errors=True)
        shutil.rmtree(out / ".handins", ignore_errors=True)


def run(args, out: Path) -> int:
    try:
        book, handed, chosen, kept, due, hidden = plan(args, out)
    except BookProblem as problem:
        print(f"make grade: the book does not say what to grade: {problem}", file=sys.stderr)
        return 2
    except (Refused, intake.IntakeProblem, hidden_cases.HiddenProblem, shards.ShardProblem) as problem:
        print(f"make grade: {problem}", file=sys.stderr)
        return 2
    limits = Limits(args.step_seconds, args.notebook_seconds, args.python_mb, args.process_mb)
    try:
        sandbox = Sandbox(out, limits, args.unisolated)
    except NotIsolated as refusal:
        print(f"make grade: {refusal}", file=sys.stderr)
        return 3
    except RuntimeError as error:
        print(f"make grade: cannot grade: {error}", file=sys.stderr)
        return 2
    describe = sandbox.isolation.describe()
    if not args.quiet or not sandbox.isolation.complete:
        say(describe + "\n")
    title = next((line[2:].strip() for line in book.page.read_text(encoding="utf-8").splitlines()
                  if line.startswith("# ")), book.page.stem)
    meta = {"title": title, "submissions": str(args.submissions), "isolation": describe,
            "isolation_complete": sandbox.isolation.complete, "book": digest(),
            "due": due.isoformat(sep=" ") if due else "", "hidden": str(args.hidden) if args.hidden else "",
            "hidden_digest": hidden.digest if hidden else "", "skipped": handed.skipped,
            "limits": f"{limits.step_seconds:g} s per cell and per exercise's check, {limits.notebook_seconds:g} s "
                      f"per notebook, Python {limits.python_mb} MB, the sandbox {limits.process_mb} MB, no network",
            "shard": args.shard or ""}
    started = time.monotonic()
    progress = Progress(len(chosen), args.quiet)
    results, notebooks = asyncio.run(grade_all(chosen, handed, book, sandbox, hidden, due, kept, meta, out,
                                               args.jobs, progress))
    seconds = time.monotonic() - started
    graded_now = [g for g in results if g.key in {h.student.key for h in chosen}]
    meta["run"] = {"seconds": round(seconds, 1), "jobs": args.jobs, "when": time.strftime("%Y-%m-%d %H:%M"),
                   "graded": len(graded_now), "kept": len(kept)}
    report.write_json(out / "results.json", report.ordered(results), meta)
    try:
        notes = outputs.write_all(out, results, book, meta, args.manual, tuple(args.format), args.assignment, notebooks)
    except ManualProblem as problem:
        print(f"make grade: {problem} (the grades are in results.json: fix the file and run make grade-merge)",
              file=sys.stderr)
        return 2
    timing = report.timing_line(graded_now, seconds, args.jobs)
    if args.only:
        say(f"{len(graded_now)} graded again in {seconds:.0f} s, {len(kept)} kept — "
            f"{report.summary_line(results, book).split(' — ', 1)[1]}\n")
    else:
        say(f"{report.summary_line(results, book)}\n{timing}"
            + (f" (shard {args.shard}: merge with make grade-merge)" if args.shard else "") + "\n")
    for note in notes:
        say(f"NOTE: {note}\n")
    say(f"-> {_shown(out / 'index.html')}, {_shown(out / 'gradebook.csv')}, {_shown(out / 'feedback')}/\n")
    return 0


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
