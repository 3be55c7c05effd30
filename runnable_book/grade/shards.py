"""A class graded on several machines (ours): ``SHARD=k/N`` grades a k-th of it, ``make grade-merge`` joins them.

Each student belongs to one shard, by a stable hash of their key (the same on every
machine, in every run, whatever the order of the files): shard k of N grades the students
whose hash is k-1 modulo N, into ``_build/grades/shard-k-of-N/``. Each shard is a whole,
independent run of the grader (its own sandbox, on its own machine: a CI matrix's job, a
batch scheduler's array task), so nothing here schedules anything.

``make grade-merge`` (``python -m runnable_book.grade.shards``) reads every ``shard-*-of-N`` folder
under ``SHARDS`` (default: ``OUT``, itself ``_build/grades`` by default), checks that they are
the N shards of one grading (the same settings: book, points, hidden cases, due date,
limits), and writes one report, gradebook and feedback set with runnable_book/grade/outputs.py, as
one run would: the same bytes. An earlier merge's ``results.json`` in ``OUT`` joins them:
an ``ONLY=`` may have graded a student there again since, and the newest grading of each
student is kept, wherever it is, saying what was taken from where (runnable_book/grade/runs.py).
Without shard folders it writes the outputs again from ``results.json`` (to add ``MANUAL=``
scores or a ``FORMAT=`` after grading).

``ONLY=`` after a sharded grading not merged yet grades the student again in their shard's
folder (``amended_folder``), so the merge finds it there.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import sys
from pathlib import Path

from runnable_book.common.shards import ShardProblem, folder_name
from runnable_book.grade import book as grade_book
from runnable_book.grade import outputs, report, runs
from runnable_book.grade.gradebook import ManualProblem
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "grades"
FOLDER = re.compile(r"^shard-(\d+)-of-(\d+)$")


def belongs(student_key: str, k: int, n: int) -> bool:
    """Whether a student is graded by shard k of n: a hash of their key, never the order of files."""
    return int(hashlib.sha256(student_key.encode("utf-8")).hexdigest(), 16) % n == k - 1


def amended_folder(out: Path, keys: set[str]) -> Path:
    """Where ``ONLY=`` grades again: ``out`` if it holds a grading (results.json), else the shard folder
    under it that grades these students (a sharded grading not merged yet), else ``out``."""
    if (out / "results.json").is_file() or not out.is_dir():
        return out
    folders = [(int(m.group(1)), int(m.group(2)), p) for p in sorted(out.iterdir())
               if p.is_dir() and (m := FOLDER.match(p.name)) and (p / "results.json").is_file()]
    if not folders:
        return out
    counts = {n for _, n, _ in folders}
    if len(counts) > 1:
        raise ShardProblem(f"{out}: shards of different counts ({', '.join(f'of {n}' for n in sorted(counts))}) and "
                           "no results.json: remove the folders of the other grading, then give ONLY= again")
    places = {p for k, n, p in folders for key in keys if belongs(key, k, n)}
    if len(places) > 1:
        raise ShardProblem(f"ONLY= names students of {len(places)} shards ({', '.join(sorted(p.name for p in places))}):"
                           " grade them again one shard at a time (one ONLY= each)")
    return places.pop() if places else out  # (their shard's folder missing: make grade-merge says so)


def merge(shards_root: Path, out: Path) -> tuple[dict, list, list[str]]:
    """The shards under ``shards_root`` joined, with ``out``'s results.json if it is their merge (since
    amended by ``ONLY=``, perhaps): (meta, results, what to tell the instructor). The newest grading of
    each student is kept (runnable_book/grade/runs.py); feedback notebooks taken from a shard are copied into ``out``."""
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
    sources = []
    for _, k, path in found:
        if not (path / "results.json").is_file():
            raise ShardProblem(f"{path}: no results.json (that shard did not finish)")
        meta, graded = report.read_json(path / "results.json")
        sources.append(runs.Source(path.name, path, meta, graded))
    first = sources[0]
    for source in sources[1:]:
        differ = runs.differences(runs.settings_of(source.meta), runs.settings_of(first.meta))
        if differ:
            raise ShardProblem(f"{source.label} and {first.label} were graded with different settings ("
                               + "; ".join(runs.said(key, runs.settings_of(source.meta).get(key),
                                                     runs.settings_of(first.meta).get(key)) for key in differ)
                               + "): grade the other shards again with one set of them")
    told = []
    if (out / "results.json").is_file():
        meta, graded = report.read_json(out / "results.json")
        if n in (meta.get("shards"), len(meta.get("run", {}).get("shards", []))):  # their merge (ONLY= since?)
            sources.append(runs.Source("results.json", out, meta, graded))
        else:
            told.append(f"{out / 'results.json'} (not a merge of these {n} shards) replaced")
    try:
        chosen, replaced = runs.newest(sources)
    except runs.RunProblem as problem:
        raise ShardProblem(str(problem)) from None
    results = [graded for _, graded in chosen.values()]
    taken = {source.label: sorted(g.student_name for s, g in chosen.values() if s is source) for source in sources}
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    for source, graded in chosen.values():
        notebook = source.folder / "feedback" / f"{graded.student.get('slug')}.ipynb"
        if source.folder != out and notebook.is_file():
            shutil.copyfile(notebook, out / "feedback" / notebook.name)
    contributing = [s for s in sources if taken[s.label]] or sources[:1]
    merged = dict(first.meta)
    weakest = next((s.meta for s in contributing if not s.meta.get("isolation_complete", True)), None)
    if weakest is not None:
        merged.update(isolation=weakest["isolation"], isolation_complete=False)
    merged["skipped"] = sorted({s for source in sources[:n] for s in source.meta.get("skipped", [])})
    merged["settings"] = runs.settings_of(contributing[0].meta)
    merged["graded"] = {key: source.meta["graded"].get(key) or runs.legacy_stamp(source.meta)
                        for key, (source, _) in chosen.items()}
    merged["runs"] = {run: about for source in contributing for run, about in source.meta.get("runs", {}).items()}
    merged.update(shard="", shards=n)
    merged["run"] = {"shards": [s.meta.get("run", {}) for s in sources[:n]],
                     "taken": {label: len(names) for label, names in taken.items() if names}}
    from_shards = sum(len(names) for label, names in taken.items() if label != "results.json")
    told.insert(0, f"{from_shards} {'student' if from_shards == 1 else 'students'} from the shards in {shards_root}")
    if taken.get("results.json"):
        names = taken["results.json"]
        told.append(f"{len(names)} from {out / 'results.json'}, graded there after the shards: "
                    f"{', '.join(names[:5])}{' ...' if len(names) > 5 else ''}")
    return merged, results, told + replaced


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runnable_book.grade.shards", description=__doc__.split("\n")[0])
    parser.add_argument("--shards", type=Path, help="the folder holding the shard-k-of-N folders (default: --out)")
    parser.add_argument("--out", type=Path, default=OUT, help="where the merged grades go (default: _build/grades)")
    parser.add_argument("--manual", type=Path, help="the instructor's manual scores (student,exercise,points,comment)")
    parser.add_argument("--format", action="append", default=[], choices=outputs.FORMATS,
                        help="also write an LMS's import file")
    parser.add_argument("--assignment", default="", help="the assignment's column in Canvas's file: `Name (id)`")
    parser.add_argument("--page", default=os.environ.get("PAGE") or None,
                        help="the exercise page graded (as make grade's PAGE=), in a book of several")
    args = parser.parse_args(argv)
    try:
        book = grade_book.load(args.page)
    except grade_book.BookProblem as problem:
        print(f"make grade-merge: the book does not say what was graded: {problem}", file=sys.stderr)
        return 2
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    args.shards = args.shards or out
    try:
        if any(FOLDER.match(p.name) for p in args.shards.iterdir() if p.is_dir()) if args.shards.is_dir() else False:
            meta, results, told = merge(args.shards.resolve(), out)
        elif (out / "results.json").is_file():
            meta, results = report.read_json(out / "results.json")
            told = [f"{len(results)} students from {out / 'results.json'}"]
        else:
            raise ShardProblem(f"{args.shards}: no shard-k-of-N folders and no results.json: grade first")
        report.write_json(out / "results.json", report.ordered(results), meta)
        notes = outputs.write_all(out, results, book, meta, args.manual, tuple(args.format), args.assignment)
    except (ShardProblem, ManualProblem) as problem:
        print(f"make grade-merge: {problem}", file=sys.stderr)
        return 2
    for line in told:
        print(f"grade-merge: {line}")
    print(report.summary_line(results, book))
    for note in notes:
        print(f"NOTE: {note}")
    print(f"-> {out / 'index.html'}, {out / 'gradebook.csv'}, {out / 'feedback'}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
