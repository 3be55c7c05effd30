"""``make bench-grade``: a generated class graded as an instructor would, timed (ours).

    python -m tools.grade.bench [--size 40] [--jobs N]

Generates a class (tools/grade/fake_class.py: right, partly right, wrong, endless, broken,
untouched and corrupt notebooks, from the book's reader notebook), grades it with
``python -m tools.grade`` and its default limits, and reports the wall time, the time per
submission (the sandbox's wall time for each, by kind of submission), the machine's busy
CPU-seconds while it graded (/proc/stat: every sandbox's Node counts), the sandboxes started
and the memory they used, and whether every verdict is the one the generated answer should
get. Writes _build/bench/grade.json; the class and its grades stay in _build/bench/grade-class/.
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

from tools.bench.cpu_by_process import busy_cpu_seconds
from tools.grade.fake_class import make_class
from tools.grade.sandbox import V8_FLAGS
from tools.pipeline.pages import ROOT

OUT = ROOT / "_build" / "bench"
EXPECTED = {"right": "pass", "wrong": "fail", "raises": "fail", "untouched": "not attempted", "endless": "timeout"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.grade.bench", description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    base = OUT / "grade-class"
    shutil.rmtree(base, ignore_errors=True)
    plan = make_class(base / "submissions", size=args.size)
    started, cpu_before = time.monotonic(), busy_cpu_seconds()
    done = subprocess.run([sys.executable, "-m", "tools.grade", str(base / "submissions"), "--out", str(base / "grades"),
                           "--jobs", str(args.jobs), "--quiet"], cwd=ROOT, capture_output=True, text=True)
    wall, cpu = time.monotonic() - started, busy_cpu_seconds() - cpu_before
    print(done.stdout.strip())
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
        return 1
    results = {s["name"]: s for s in json.loads((base / "grades" / "results.json").read_text())["submissions"]}
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
        "submissions": len(plan), "jobs": args.jobs, "cores": os.cpu_count(), "wall_seconds": round(wall, 1),
        "wall_seconds_per_submission": round(wall / len(plan), 2), "busy_cpu_seconds": round(cpu, 1),
        "v8_flags": V8_FLAGS,
        "sandbox_seconds_per_submission": {"mean": round(statistics.mean(seconds), 2),
                                           "median": round(statistics.median(seconds), 2),
                                           "max": round(max(seconds), 2)},
        "sandbox_seconds_by_kind": {k: {"count": len(v), "mean": round(statistics.mean(v), 2), "max": round(max(v), 2)}
                                    for k, v in sorted(by_kind.items())},
        "sandboxes_started": sum(s["starts"] for s in results.values()),
        "peak_memory_mb": max((s.get("peak_mb", 0) for s in results.values()), default=0),
        "verdicts_as_expected": not mismatches, "mismatches": mismatches,
        "load_average_after": os.getloadavg(),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "grade.json").write_text(json.dumps(report, indent=2))
    print(f"{len(plan)} submissions on {args.jobs} jobs ({os.cpu_count()} cores): {wall:.0f} s "
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
    print(f"-> {(OUT / 'grade.json').relative_to(ROOT)}, {(base / 'grades' / 'index.html').relative_to(ROOT)}")
    return 0 if not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
