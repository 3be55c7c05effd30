"""``make bench-grade``: a generated class graded as an instructor would, timed (ours).

    python -m runnable_book.bench.grade_class [--size 40] [--jobs N] [--shards 2]

Generates a class (runnable_book/grade/generated_class.py: right, partly right, wrong, endless, broken,
untouched and corrupt notebooks, from the book's reader notebook), grades it with
``python -m runnable_book.grade`` and its default limits, and reports the wall time, the time per
submission (the sandbox's wall time for each, by kind of submission), the machine's busy
CPU-seconds while it graded (/proc/stat: every sandbox's Node counts), the sandboxes started
and the memory they used, and whether every verdict is the one the generated answer should
get. Then the same class in ``--shards`` shards (2: one per core here), each its own grader
process at one job, all at once as separate machines would run them, and merged: their wall
time, CPU-seconds, and whether the merged outputs are the one run's bytes. Then once more
beside ``--busy`` processes that keep every core busy: whether the grades (CSVs and feedback)
are the quiet run's bytes, the limits being CPU time (runnable_book/grade/sandbox.py). Writes
_build/bench/grade.json; the class and its grades stay in _build/bench/grade-class/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from runnable_book.common.busy import busy_processes
from runnable_book.bench.cpu_by_process import busy_cpu_seconds
from runnable_book.grade.generated_class import make_class
from runnable_book.grade.sandbox import V8_FLAGS
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "bench"
EXPECTED = {"right": "pass", "wrong": "fail", "raises": "fail", "untouched": "not attempted", "endless": "timeout"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runnable_book.bench.grade_class", description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--jobs", type=int, help="students at a time (default: the grader's, runnable_book/grade/jobs.py)")
    parser.add_argument("--shards", type=int, default=2, help="the sharded run's shards (0: none)")
    parser.add_argument("--busy", type=int, default=4,
                        help="busy processes beside the class graded once more, its grades compared (0: not run)")
    args = parser.parse_args(argv)
    base = OUT / "grade-class"
    shutil.rmtree(base, ignore_errors=True)
    plan = make_class(base / "submissions", size=args.size)
    started, cpu_before = time.monotonic(), busy_cpu_seconds()
    done = subprocess.run([sys.executable, "-m", "runnable_book.grade", str(base / "submissions"), "--out", str(base / "grades"),
                           *(["--jobs", str(args.jobs)] if args.jobs else []), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.monotonic() - started, busy_cpu_seconds() - cpu_before
    print(done.stdout.strip())
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
        return 1
    written = json.loads((base / "grades" / "results.json").read_text())
    results = {s["name"]: s for s in written["submissions"]}
    args.jobs, jobs_why = written["meta"]["run"]["jobs"], written["meta"]["run"].get("jobs_why", "")
    by_kind: dict[str, list[float]] = {}
    mismatches = []
    for name, given in plan.items():
        graded = results[name]
        kind = name.split("-", 2)[2].removesuffix(".ipynb")
        by_kind.setdefault(kind, []).append(graded["seconds"])
        for number, answer in given.items():
            got = "error" if graded["problem"] else graded["verdicts"][str(number)]["verdict"]
            want = "error" if answer == "unreadable" else EXPECTED[answer]
            if got != want:
                mismatches.append(f"{name} exercise {number}: {answer} answer got {got}, expected {want}")
    seconds = [s["seconds"] for s in results.values() if not s["problem"]]
    report = {
        "submissions": len(plan), "jobs": args.jobs, "jobs_why": jobs_why, "cores": os.cpu_count(),
        "wall_seconds": round(wall, 1),
        "wall_seconds_per_submission": round(wall / len(plan), 2), "busy_cpu_seconds": round(cpu, 1),
        "v8_flags": V8_FLAGS,
        "sandbox_seconds_per_submission": {"mean": round(statistics.mean(seconds), 2),
                                           "median": round(statistics.median(seconds), 2),
                                           "max": round(max(seconds), 2)},
        "sandbox_seconds_by_kind": {k: {"count": len(v), "mean": round(statistics.mean(v), 2), "max": round(max(v), 2)}
                                    for k, v in sorted(by_kind.items())},
        "sandbox_cpu_seconds_per_submission": {
            "mean": round(statistics.mean(s.get("cpu_seconds", 0) for s in results.values() if not s["problem"]), 2),
            "student_charged_mean": round(statistics.mean(s.get("charged_seconds", 0) for s in results.values()
                                                          if not s["problem"]), 2)},
        "sandboxes_started": sum(s["starts"] for s in results.values()),
        "peak_memory_mb": max((s.get("peak_mb", 0) for s in results.values()), default=0),
        "verdicts_as_expected": not mismatches, "mismatches": mismatches,
        "load_average_after": os.getloadavg(),
    }
    if args.shards:
        report["sharded"] = sharded(base, args.shards)
    if args.busy:
        report["beside_busy_processes"] = beside_busy(base, args.busy, args.jobs)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "grade.json").write_text(json.dumps(report, indent=2))
    print(f"{len(plan)} submissions on {args.jobs} jobs ({jobs_why}; {os.cpu_count()} cores): {wall:.0f} s "
          f"({wall / len(plan):.1f} s per submission, {cpu:.0f} busy CPU-s of the machine; Node's V8 flags: "
          f"{' '.join(V8_FLAGS) or 'none'}); sandbox time per submission: mean "
          f"{report['sandbox_seconds_per_submission']['mean']} s, median {report['sandbox_seconds_per_submission']['median']} s, "
          f"max {report['sandbox_seconds_per_submission']['max']} s")
    for kind, row in report["sandbox_seconds_by_kind"].items():
        print(f"  {kind:10} {row['count']:3} submissions, {row['mean']:5.1f} s each (max {row['max']:.1f} s)")
    print(f"  {report['sandboxes_started']} sandboxes started; peak memory of one sandbox {report['peak_memory_mb']} MB; "
          f"verdicts as expected: {'yes' if not mismatches else 'NO'}")
    for line in mismatches:
        print("   ", line)
    if args.shards:
        run = report["sharded"]
        print(f"In {run['shards']} shards at once (a grader process each, one job), merged: {run['wall_seconds']:.0f} s, "
              f"{run['busy_cpu_seconds']:.0f} busy CPU-s; merge {run['merge_seconds']:.1f} s; the one run's bytes: "
              f"{'yes' if run['same_outputs'] else 'NO: ' + ', '.join(run['differ'][:5])}")
    if args.busy:
        run = report["beside_busy_processes"]
        print(f"Beside {run['busy_processes']} busy processes on {os.cpu_count()} cores: {run['wall_seconds']:.0f} s "
              f"(load {run['load_average_after'][0]:.1f} after); the same grades (grades.csv, gradebook.csv, "
              f"feedback): {'yes' if run['same_grades'] else 'NO: ' + ', '.join(run['differ'][:5])}")
    print(f"-> {(OUT / 'grade.json').relative_to(ROOT)}, {(base / 'grades' / 'index.html').relative_to(ROOT)}")
    return 0 if not mismatches and (not args.shards or report["sharded"]["same_outputs"]) \
        and (not args.busy or report["beside_busy_processes"]["same_grades"]) else 1


def _files(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "results.json"}


def _grades(folder) -> dict[str, bytes]:
    """What a student or the LMS is given: the CSVs and the feedback (not the report's timings)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and (p.suffix == ".csv" or p.parent.name == "feedback")}


def beside_busy(base, processes: int, jobs: int) -> dict:
    """The class graded again beside ``processes`` busy processes (a loaded machine), compared with the quiet run."""
    out = base / "busy"
    shutil.rmtree(out, ignore_errors=True)
    with busy_processes(processes):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "runnable_book.grade", str(base / "submissions"), "--out", str(out),
                               "--jobs", str(jobs), "--quiet"], cwd=ROOT, capture_output=True, text=True)
        wall, load = time.monotonic() - started, os.getloadavg()
    quiet, busy = _grades(base / "grades"), _grades(out) if done.returncode == 0 else {}
    differ = sorted(n for n in set(quiet) | set(busy) if quiet.get(n) != busy.get(n))
    return {"busy_processes": processes, "wall_seconds": round(wall, 1), "load_average_after": load,
            "same_grades": done.returncode == 0 and not differ, "differ": differ or ([done.stderr[-2000:]] if
                                                                                     done.returncode else [])}


def sharded(base, shards: int) -> dict:
    """The class graded again in ``shards`` grader processes at once, then merged and compared."""
    root = base / "shards"
    shutil.rmtree(root, ignore_errors=True)
    started, cpu_before = time.monotonic(), busy_cpu_seconds()
    processes = [subprocess.Popen([sys.executable, "-m", "runnable_book.grade", str(base / "submissions"), "--out",
                                   str(root / f"shard-{k}-of-{shards}"), "--shard", f"{k}/{shards}", "--jobs", "1",
                                   "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for k in range(1, shards + 1)]
    failed = [p.communicate()[1][-2000:] for p in processes if p.wait() != 0]
    wall, cpu = time.monotonic() - started, busy_cpu_seconds() - cpu_before
    merge_started = time.monotonic()
    merged = subprocess.run([sys.executable, "-m", "runnable_book.grade.shards", "--shards", str(root), "--out",
                             str(root / "merged")], cwd=ROOT, capture_output=True, text=True)
    merge_seconds = time.monotonic() - merge_started
    one, joined = _files(base / "grades"), _files(root / "merged") if merged.returncode == 0 else {}
    differ = sorted(n for n in set(one) | set(joined) if one.get(n) != joined.get(n))
    return {"shards": shards, "wall_seconds": round(wall, 1), "busy_cpu_seconds": round(cpu, 1),
            "merge_seconds": round(merge_seconds, 1), "failed": failed + ([merged.stderr] if merged.returncode else []),
            "same_outputs": not differ and not failed and merged.returncode == 0, "differ": differ}


if __name__ == "__main__":
    sys.exit(main())
