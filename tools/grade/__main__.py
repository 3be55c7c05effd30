"""``make grade SUBMISSIONS=<folder>``: grade every notebook in a folder, offline (ours).

    python -m tools.grade <folder> [--only NAME ...] [--jobs N] [--step-seconds S] ...

Writes _build/grades/grades.csv, index.html and results.json (tools/grade/report.py), and
nothing else outside the sandbox's own folder there (_build/grades/.box). While it grades, a
progress bar (on a terminal; one line per submission otherwise) and index.html's own
progress bar; at the end, one summary line. ``--only`` grades those submissions again and
keeps every other grade of the last run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import time
from pathlib import Path

from tools.grade import notebook, report
from tools.grade.book import BookProblem, library_files, load
from tools.grade.grade import Graded, grade
from tools.grade.isolation import NotIsolated
from tools.grade.sandbox import Limits, Sandbox
from tools.pipeline.pages import ROOT

OUT = ROOT / "_build" / "grades"


def arguments(argv):
    parser = argparse.ArgumentParser(prog="python -m tools.grade", description=__doc__.split("\n")[0])
    parser.add_argument("submissions", type=Path, help="the folder of .ipynb files (searched below too)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the grades go (default: _build/grades)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="grade only this submission again (its path in the folder, or its file name); "
                             "the other grades of the last run are kept")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions at a time (default: cores)")
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
                             "isolation, no filesystem jail); said on the first line and in the report "
                             "(default: refuse; UNISOLATED=1 sets it)")
    parser.add_argument("--quiet", action="store_true", help="no progress, only the summary")
    return parser.parse_args(argv)


def say(text: str) -> None:
    """Print to stdout, and go on grading if no one reads it any more (``| head``, a pager
    quit early): what is graded still reaches grades.csv, results.json and index.html. The
    rest of the run's output goes to /dev/null, so Python's own flush at exit raises nothing
    (the recipe of Python's documentation for SIGPIPE)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


class Progress:
    """A bar redrawn in place on a terminal; one line per submission elsewhere (a log, CI)."""

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
                    f"{graded.name}: {verdicts}")
            columns = max(40, os.get_terminal_size().columns - 1) if sys.stdout.isatty() else 200
            say(line[:columns].ljust(columns) + ("\n" if self.done == self.total else ""))
        else:
            say(f"[{self.done}/{self.total}] {graded.name}: {verdicts} ({graded.seconds:.1f} s)\n")


async def grade_all(paths, folder, book, sandbox, kept, meta, out, jobs, progress) -> list[Graded]:
    library = library_files()
    results: list[Graded] = list(kept)
    semaphore = asyncio.Semaphore(max(1, jobs))
    total = len(paths)
    numbers = [e.number for e in book.checked]

    async def one(path):
        async with semaphore:
            submission = notebook.read(path, folder, book)
            graded = await grade(submission, book, sandbox, library)
        results.append(graded)
        progress.update(graded, numbers)
        report.write_html(out / "index.html", results, book, meta, progress.done, total, finished=False)
        return graded

    report.write_html(out / "index.html", results, book, meta, 0, total, finished=False)
    await asyncio.gather(*(one(p) for p in paths))
    return results


def main(argv=None) -> int:
    args = arguments(argv)
    folder = args.submissions.resolve()
    out = args.out.resolve()
    if not folder.is_dir():
        print(f"{args.submissions}: not a folder (make grade SUBMISSIONS=<folder of .ipynb files>)", file=sys.stderr)
        return 2
    try:
        book = load()
    except BookProblem as problem:
        print(f"the book does not say what to grade: {problem}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    paths = notebook.find(folder)
    kept: list[Graded] = []
    if args.only:
        wanted = set(args.only)
        chosen = [p for p in paths if p.relative_to(folder).as_posix() in wanted or p.name in wanted]
        unknown = wanted - {p.relative_to(folder).as_posix() for p in chosen} - {p.name for p in chosen}
        if unknown:
            print(f"not in {args.submissions}: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        if (out / "results.json").exists():
            _, previous = report.read_json(out / "results.json")
            names = {p.relative_to(folder).as_posix() for p in chosen}
            kept = [g for g in previous if g.name not in names]
        paths = chosen
    if not paths:
        print(f"{args.submissions}: no .ipynb files", file=sys.stderr)
        return 2
    limits = Limits(args.step_seconds, args.notebook_seconds, args.python_mb, args.process_mb)
    try:
        sandbox = Sandbox(out, limits, args.unisolated)
    except NotIsolated as refusal:
        print(f"make grade: {refusal}", file=sys.stderr)
        return 3
    except RuntimeError as error:
        print(f"cannot grade: {error}", file=sys.stderr)
        return 2
    describe = sandbox.isolation.describe()
    if not args.quiet or not sandbox.isolation.complete:
        say(describe + "\n")
    title = next((line[2:].strip() for line in book.page.read_text(encoding="utf-8").splitlines()
                  if line.startswith("# ")), book.page.stem)
    meta = {"title": title, "submissions": str(args.submissions), "isolation": describe,
            "isolation_complete": sandbox.isolation.complete, "when": time.strftime("%Y-%m-%d %H:%M"),
            "limits": f"{limits.step_seconds:g} s per cell and per exercise's check, {limits.notebook_seconds:g} s "
                      f"per notebook, Python {limits.python_mb} MB, the sandbox {limits.process_mb} MB, no network",
            "summary": ""}
    started = time.monotonic()
    progress = Progress(len(paths), args.quiet)
    results = asyncio.run(grade_all(paths, folder, book, sandbox, kept, meta, out, args.jobs, progress))
    seconds = time.monotonic() - started
    meta["summary"] = report.summary_line(results, book, seconds, args.jobs) if not args.only else (
        f"{len(paths)} graded again in {seconds:.0f} s, {len(kept)} kept — "
        + report.summary_line(results, book, seconds, args.jobs).split(" — ", 1)[1])
    meta["seconds"] = seconds
    report.write_csv(out / "grades.csv", results, book)
    report.write_json(out / "results.json", results, meta)
    report.write_html(out / "index.html", results, book, meta, len(paths), len(paths), finished=True)
    shutil.rmtree(out / ".box", ignore_errors=True)
    say(f"{meta['summary']}\n-> {_shown(out / 'grades.csv')}, {_shown(out / 'index.html')}\n")
    return 0


def _shown(path: Path) -> str:
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
