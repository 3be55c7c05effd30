"""What `make check` costs, beside `make test` and executing every page once.

    python -m runnable_book.bench.check_loop      # what `make bench-check` runs (after `make book`)

`make check` is the loop an author runs while working; it is meant to take at most a minute on
two quiet cores after `make book`. Measured twice, as an author meets it:

* first: as after a fresh `make book`, no page yet checked under nbval (the record of pages
  checked, _build/check/nbval-passed.json, removed first), so every page runs under nbval;
* again: nothing changed since, so no page runs under nbval (the steady loop).

Both again beside one busy process (runnable_book/common/busy.py: a CPU hog, as an editor's indexer or
a browser tab is), and the ratio of each to its quiet run: the loop is meant to stay under twice
its quiet time on a machine doing one other thing. Each: wall seconds; the CPU-seconds of `make check`'s own processes (its children, from the
kernel's accounting: what it costs, whatever else the machine runs); and the whole machine's
busy CPU-seconds over the same time (/proc/stat: high when others run too, so the wall time is
read with it). Beside them: executing every page once (runnable_book/bench/suite_stages.py's yardstick,
the median of three runs) and `make test` as `make bench-tests` last measured it
(_build/bench/test_stages.json), when it has. Writes _build/bench/check.json; numbers, not checks.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

from runnable_book.bench.cpu_by_process import busy_cpu_seconds
from runnable_book.common.busy import busy_processes
from runnable_book.bench.suite_stages import BENCH, execute_every_page_once
from runnable_book.checks.changed_pages import RECORD
from runnable_book.repository import ROOT

LOG = BENCH / "check.log"


def own_cpu_seconds() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed_check(log) -> dict:
    started, own, machine = time.monotonic(), own_cpu_seconds(), busy_cpu_seconds()
    done = subprocess.run(["make", "--no-print-directory", "check"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    return {"seconds": round(time.monotonic() - started, 1), "cpu_seconds": round(own_cpu_seconds() - own, 1),
            "machine_busy_cpu_seconds": round(busy_cpu_seconds() - machine, 1), "exit_status": done.returncode}


def main() -> int:
    BENCH.mkdir(parents=True, exist_ok=True)
    onces = [execute_every_page_once() for _ in range(3)]
    once = statistics.median(onces)
    with open(LOG, "w") as log:
        RECORD.unlink(missing_ok=True)  # (the runs below record every page again)
        first = timed_check(log)
        again = timed_check(log)
        with busy_processes(1):
            RECORD.unlink(missing_ok=True)
            first_busy = timed_check(log)
            again_busy = timed_check(log)
    stages = BENCH / "test_stages.json"
    make_test = json.loads(stages.read_text()) if stages.is_file() else None
    print(f"{'execute every page once':<40}{once:8.1f} s (median of {', '.join(f'{t:.1f}' for t in onces)})")
    for name, run, quiet in (("make check, every page under nbval", first, None),
                             ("make check again, nothing changed", again, None),
                             ("  the first beside one busy process", first_busy, first),
                             ("  again beside one busy process", again_busy, again)):
        print(f"{name:<40}{run['seconds']:8.1f} s  {run['cpu_seconds']:7.1f} CPU-s of its own"
              f"  ({run['machine_busy_cpu_seconds']:.1f} CPU-s busy on the machine)"
              + (f"  {run['seconds'] / quiet['seconds']:.2f}x its quiet run" if quiet else "")
              + ("" if run["exit_status"] == 0 else f"  FAILED, see {LOG}"))
    if make_test:
        print(f"{'make test (make bench-tests, earlier)':<40}{make_test['make_test_seconds']:8.1f} s "
              f"(its execute-once: {make_test['execute_every_page_once_seconds']:.1f} s)")
    result = {"execute_every_page_once_seconds": round(once, 1), "execute_every_page_once_runs": [round(t, 1) for t in onces],
              "check_first": first, "check_again": again,
              "beside_one_busy_process": {"check_first": first_busy, "check_again": again_busy,
                                          "ratio_first": round(first_busy["seconds"] / first["seconds"], 2),
                                          "ratio_again": round(again_busy["seconds"] / again["seconds"], 2)}, "load_average": os.getloadavg(), "cpus": os.cpu_count(),
              "make_test_seconds": make_test["make_test_seconds"] if make_test else None}
    (BENCH / "check.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0 if all(run["exit_status"] == 0 for run in (first, again, first_busy, again_busy)) else 1


if __name__ == "__main__":
    sys.exit(main())
