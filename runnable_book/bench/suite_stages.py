"""What `make test` costs, stage by stage, beside what executing every page once costs.

    python -m runnable_book.bench.suite_stages STAGE...   # what `make bench-tests` runs, with `make test`'s stages

`make test`'s cost is read as a multiple of executing every page of the book once: the checks
should cost a small multiple of the book, not of themselves. So both are measured in the same
run, on the same (possibly busy) machine, and the ratio is what to read; the seconds alone say
how loaded it was.

* each stage: ``make STAGE`` as `make test` runs it, in order, wall time; each pytest
  stage also leaves its slowest tests (``--durations``) in _build/bench/test-stages/STAGE.log;
* execute once: every notebook page executed once, one after the other, in a kernel set up
  as `make outputs` sets it (runnable_book/pipeline/execute_pages.py), nothing written; the median
  of three such runs, two before the stages and one after (on this machine one run alone
  moved between 12 and 19 s within an hour, and the ratio with it). Once: not `make outputs`'
  two runs of each page at once (its reproducibility check), which take at least as long on
  two cores and do twice the work;
* each stage's CPU: the whole machine's busy CPU-seconds while it ran (/proc/stat: every
  process, the browsers and kernels the tests start among them), beside cores x seconds, so
  the table says whether a stage waits (CPU below capacity) or computes (at capacity); and
  that CPU by kind of process (Chromium's renderers, the kernels, the pytest workers, ...:
  runnable_book/bench/cpu_by_process.py), the kinds above 5% printed, all in the JSON.

Measured from the state `make book` leaves (what CI's `make test` starts from after a
fresh clone): the PDF and its print build are removed first, as a fresh clone has none.
Writes _build/bench/test_stages.json and prints a table. Timings are not checks: nothing
here fails on a number.
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
from pathlib import Path

from runnable_book.bench.cpu_by_process import CpuByProcess
from runnable_book.pipeline.pages import notebook_pages, read_page
from runnable_book.repository import ROOT

BENCH = ROOT / "_build" / "bench"
LOGS = BENCH / "test-stages"
# What a fresh clone after `make book` does not have (Makefile: PDF, PRINT_BUILD).
NOT_BUILT_BY_MAKE_BOOK = [ROOT / "_build" / "pdf", ROOT / "_build" / "print"]


def execute_every_page_once() -> float:
    from runnable_book.pipeline import execute_pages

    started = time.monotonic()
    for md in notebook_pages():
        execute_pages.execute(md, read_page(md), twice=False)
    return time.monotonic() - started


def log_path(stage: str):
    return LOGS / f"{stage.replace('/', '_')}.log"  # (a stage may be a file target: _build/pdf/chapter15.pdf)


def timed(command: list[str], log: Path, environment: dict | None = None) -> tuple[float, CpuByProcess, int]:
    """(seconds, the machine's busy CPU-seconds by kind of process, exit status) of ``command``
    run in the repository, its output kept in ``log``."""
    started = time.monotonic()
    with open(log, "w") as kept, CpuByProcess() as cpu:
        done = subprocess.run(command, cwd=ROOT, env=environment, stdout=kept, stderr=subprocess.STDOUT)
    return time.monotonic() - started, cpu, done.returncode


def run_stage(stage: str) -> tuple[float, CpuByProcess, int]:
    """`make STAGE`, timed (``timed``), its output kept in _build/bench/test-stages/."""
    environment = {**os.environ, "PYTEST_ADDOPTS": f"{os.environ.get('PYTEST_ADDOPTS', '')} --durations=25".strip()}
    return timed(["make", "--no-print-directory", stage], log_path(stage), environment)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stages", nargs="+", help="`make test`'s stages, in its order (the Makefile passes them)")
    parser.add_argument("--keep-pdf", action="store_true", help="do not remove the PDF build first")
    args = parser.parse_args(argv)
    LOGS.mkdir(parents=True, exist_ok=True)
    if not args.keep_pdf:
        for built in NOT_BUILT_BY_MAKE_BOOK:
            shutil.rmtree(built, ignore_errors=True)
    onces = [execute_every_page_once(), execute_every_page_once()]
    print(f"{'execute every page once':<28}{onces[0]:8.1f} s, {onces[1]:.1f} s (and once more after the stages)", flush=True)
    stages = {}
    cores = os.cpu_count() or 1
    for stage in args.stages:
        seconds, sampled, status = run_stage(stage)
        cpu, by_kind = sampled.busy, sampled.by_kind()
        stages[stage] = {"seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
                         "cpu_busy": round(cpu / (cores * seconds), 2), "exit_status": status,
                         "cpu_seconds_by_process": by_kind}
        print(f"{'make ' + stage:<28}{seconds:8.1f} s  {cpu:7.1f} CPU-s ({stages[stage]['cpu_busy']:.0%} of {cores} cores)"
              f"{'' if status == 0 else f'  FAILED ({status}), see ' + str(log_path(stage))}", flush=True)
        for kind, used in by_kind.items():
            if used >= 0.05 * cpu:  # (every kind is in the JSON)
                print(f"{'':<30}{used:7.1f} CPU-s  {kind}")
    onces.append(execute_every_page_once())
    once = statistics.median(onces)
    print(f"{'execute every page once':<28}{once:8.1f} s (median of {', '.join(f'{t:.1f}' for t in onces)} s)")
    total = sum(s["seconds"] for s in stages.values())
    print(f"{'make test (the stages)':<28}{total:8.1f} s = {total / once:.1f} x executing every page once")
    result = {"execute_every_page_once_seconds": round(once, 1),
              "execute_every_page_once_runs": [round(t, 1) for t in onces], "stages": stages,
              "make_test_seconds": round(total, 1), "ratio": round(total / once, 1),
              "load_average": os.getloadavg(), "cpus": os.cpu_count()}
    (BENCH / "test_stages.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0 if all(s["exit_status"] == 0 for s in stages.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
