"""The suite on a busy machine: `make test-loaded` (HOGS=4 RUNS=3).

    python -m runnable_book.checks.loaded_suite [--hogs 4] [--runs 3]

A newcomer's or CI's machine is rarely quiet. Each run is what CI does, on a loaded machine: a
fresh clone of the committed HEAD, then its `bash .ci/run` (`make test`, environments and all)
with ``--hogs`` busy processes beside it the whole time (runnable_book/common/busy.py: four on two
cores is a load of six or more). Runs one after the other, each in a clone of its own; a failed
run does not stop the next, so that one call says how often it fails. Whatever the load, a
test waits for a state, with a limit made for a loaded machine, never for a time; a test that
fails here is a bug to fix at its cause.

Each run's output: _build/loaded-suite/run-<n>.log. Its summary (seconds, exit status, the
tests that failed, the stage `make test` named, the load average): printed, and written to
_build/loaded-suite/runs.json. Exits 1 when any run failed. (Its minutes: `make test`'s, a
half or more again under the load: about an hour a run here. CI does not run it.)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from runnable_book.common.busy import busy_processes
from runnable_book.repository import ROOT

OUT = ROOT / "_build" / "loaded-suite"
FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)
FAILED_STAGE = re.compile(r"^make test: the stage (\S+) failed", re.MULTILINE)


def one_run(number: int, hogs: int) -> dict:
    scratch = tempfile.mkdtemp(prefix="loaded-suite-")
    log = OUT / f"run-{number}.log"
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), f"{scratch}/book"], check=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=f"{scratch}/book",
                                capture_output=True, text=True, check=True).stdout.strip()
        environment = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
        with busy_processes(hogs), open(log, "w") as output:
            started = time.monotonic()
            # In a session of its own, so that a run cut short (Ctrl-C, or a `timeout` that
            # sends SIGTERM) takes the whole `make test` with it, not only bash.
            run = subprocess.Popen(["bash", ".ci/run"], cwd=f"{scratch}/book", env=environment, start_new_session=True,
                                   stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
            try:
                run.wait()
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(run.pid, signal.SIGKILL)
            seconds, load = time.monotonic() - started, os.getloadavg()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    text = log.read_text(errors="replace")
    stage = FAILED_STAGE.search(text)
    return {"run": number, "commit": commit, "busy_processes": hogs, "cpus": os.cpu_count(),
            "seconds": round(seconds), "exit_status": run.returncode,
            "failed_tests": sorted(set(FAILED_TEST.findall(text))), "failed_stage": stage and stage.group(1),
            "load_average_at_end": [round(x, 1) for x in load], "log": str(log.relative_to(ROOT))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hogs", type=int, default=4, help="busy processes beside each run (default 4)")
    parser.add_argument("--runs", type=int, default=3, help="fresh-clone `make test` runs, one after the other (default 3)")
    args = parser.parse_args(argv)
    # SIGTERM (`timeout`, a CI cancel) unwinds as Ctrl-C does: the runs' `finally` blocks stop
    # the hogs and the clone's `make test`.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    OUT.mkdir(parents=True, exist_ok=True)
    runs = []
    for number in range(1, args.runs + 1):
        runs.append(one_run(number, args.hogs))
        run = runs[-1]
        said = "passed" if run["exit_status"] == 0 else (
            f"FAILED (stage {run['failed_stage'] or '?'}: {', '.join(run['failed_tests']) or 'see the log'})")
        print(f"run {number} of {args.runs} ({run['commit']}, beside {args.hogs} busy processes on {run['cpus']} cores): "
              f"{said} in {run['seconds'] / 60:.0f} min, load {run['load_average_at_end'][1]} at its end; {run['log']}",
              flush=True)
        (OUT / "runs.json").write_text(json.dumps(runs, indent=1) + "\n")
    passed = sum(run["exit_status"] == 0 for run in runs)
    print(f"make test beside {args.hogs} busy processes: {passed} of {len(runs)} runs passed")
    return 0 if passed == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
