"""A class graded on several machines (ours): ``SHARD=k/N`` grades a k-th of it, ``make grade-merge`` joins them.

Each student belongs to one shard, by a stable hash of their key (the same on every
machine, in every run, whatever the order of the files): shard k of N grades the students
whose hash is k-1 modulo N, into ``_build/grades/shard-k-of-N/``. Each shard is a whole,
independent run of the grader (its own sandbox, on its own machine: a CI matrix's job, a
batch scheduler's array task), so nothing here schedules anything.

``make grade-merge`` (``python -m tools.grade.shards``) reads every ``shard-*-of-N`` folder
under ``SHARDS`` (default ``_build/grades``), checks that they are the N shards of one
grading (the same book, the same hidden cases and due date, each student once), and writes
one report, gradebook and feedback set with tools/grade/outputs.py, as one run would: the
same bytes. Without shard folders it writes the outputs again from ``results.json`` (to
add ``MANUAL=`` scores or a ``FORMAT=`` after grading).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
from pathlib import Path

from tools.grade import book as grade_book
from tools.grade import outputs, report
from tools.grade.gradebook import ManualProblem
from tools.repository import ROOT

OUT = ROOT / "_build" / "grades"
FOLDER = re.compile(r"^shard-(\d+)-of-(\d+)$")


class ShardProblem(Exception):
    """The shards cannot be merged: the message says which and why."""


def parse(text: str) -> tuple[int, int]:
    """``SHARD=2/3`` -> (2, 3)."""
    found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not found or not 1 <= int(found.group(1)) <= int(found.group(2)):
        raise ShardProblem(f"SHARD={text!r}: write it as k/N, with 1 <= k <= N (for example SHARD=2/3)")
    return int(found.group(1)), int(found.group(2))


def belongs(student_key: str, k: int, n: int) -> bool:
    """Whether a student is graded by shard k of n: a hash of their key, never the order of files."""
    return int(hashlib.sha256(student_key.encode("utf-8")).hexdigest(), 16) % n == k - 1


def folder_name(k: int, n: int) -> str:
    return f"shard-{k}-of-{n}"


def merge(shards_root: Path, out: Path) -> tuple[dict, list]:
    """The shards under ``shards_root`` joined: (meta, results); their feedback notebooks copied into ``out``."""
    found = sorted((int(m.group(2)), int(m.group(1)), p) for p in shards_root.iterdir()
                   if p.is_dir() and (m := FOLDER.match(p.name)))
    if not found:
        raise ShardProblem(f"{shards_root}: no shard-k-of-N folders (grade with SHARD=k/N first)")
    counts = {n for n, _, _ in found}
    if len(counts) > 1:
        raise ShardProblem(f"{shards_root}: shards of different counts ({', '.join(f'of {n}' for n in sorted(counts))}): "
                           "remove the folders of the other grading")
    n = counts.pop()
    present = {k for _, k, _ in found}
    missing = sorted(set(range(1, n + 1)) - present)
    if missing:
        raise ShardProblem(f"{shards_root}: shard {', '.join(map(str, missing))} of {n} missing "
                           f"(expected {', '.join(folder_name(k, n) for k in missing)})")
    metas, results, seen = [], [], {}
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for _, k, path in found:
        if not (path / "results.json").is_file():
            raise ShardProblem(f"{path}: no results.json (that shard did not finish)")
        meta, graded = report.read_json(path / "results.json")
        metas.append((path, meta))
        for each in graded:
            if each.key in seen:
                raise ShardProblem(f"{each.student_name} is in {seen[each.key].name} and {path.name}")
            seen[each.key] = path
            results.append(each)
            notebook = path / "feedback" / f"{each.student.get('slug')}.ipynb"
            if notebook.is_file():
                shutil.copyfile(notebook, out / "feedback" / notebook.name)
    first_path, first = metas[0]
    for path, meta in metas[1:]:
        for key in ("book", "hidden_digest", "due", "submissions"):
            if meta.get(key) != first.get(key):
                raise ShardProblem(f"{path.name} and {first_path.name} were graded with different {key.replace('_', ' ')} "
                                   f"({meta.get(key)!r}, {first.get(key)!r})")
    merged = dict(first)
    weakest = next((m for _, m in metas if not m.get("isolation_complete", True)), None)
    if weakest is not None:
        merged.update(isolation=weakest["isolation"], isolation_complete=False)
    merged["skipped"] = sorted({s for _, m in metas for s in m.get("skipped", [])})
    merged["shard"] = ""
    merged["run"] = {"shards": [m.get("run", {}) for _, m in metas]}
    return merged, results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.grade.shards", description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=Path, default=OUT, help="the folder holding the shard-k-of-N folders")
    parser.add_argument("--out", type=Path, default=OUT, help="where the merged grades go (default: _build/grades)")
    parser.add_argument("--manual", type=Path, help="the instructor's manual scores (student,exercise,points,comment)")
    parser.add_argument("--format", action="append", default=[], choices=outputs.FORMATS,
                        help="also write an LMS's import file")
    parser.add_argument("--assignment", default="", help="the assignment's column in Canvas's file: `Name (id)`")
    args = parser.parse_args(argv)
    book = grade_book.load()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        if any(FOLDER.match(p.name) for p in args.shards.iterdir() if p.is_dir()) if args.shards.is_dir() else False:
            meta, results = merge(args.shards.resolve(), out)
            what = f"{len(results)} students from the shards in {args.shards}"
        elif (out / "results.json").is_file():
            meta, results = report.read_json(out / "results.json")
            what = f"{len(results)} students from {out / 'results.json'}"
        else:
            raise ShardProblem(f"{args.shards}: no shard-k-of-N folders and no results.json: grade first")
        report.write_json(out / "results.json", report.ordered(results), meta)
        notes = outputs.write_all(out, results, book, meta, args.manual, tuple(args.format), args.assignment)
    except (ShardProblem, ManualProblem) as problem:
        print(f"make grade-merge: {problem}", file=sys.stderr)
        return 2
    print(f"{what}: {report.summary_line(results, book)}")
    for note in notes:
        print(f"NOTE: {note}")
    print(f"-> {out / 'index.html'}, {out / 'gradebook.csv'}, {out / 'feedback'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
