"""What a newcomer waits for: `make book` in a fresh clone, its environment and npm assets included.

    python -m runnable_book.bench.first_build [--test] [--python PYTHON]   # what `make bench-first-build` runs

Clones the repository's committed HEAD into a scratch folder, as CI and a newcomer start,
and times ``make book`` there (wall time, and the CPU-seconds of every process it started),
then, with ``--test``, ``make test`` after it. With ``--python`` (`make bench-first-build
PYTHON=python3.13`) the clone's environment is made from that interpreter (`make ... PYTHON=`),
else from the one `make` finds there. pip's and npm's caches are this machine's: the JSON says
how large they were, as a first run on a new machine also downloads them.
Writes _build/bench/first_build.json, or first_build-python<version>.json with ``--python``
(each step's output beside it, first_build[-python<version>]-<step>.log); the README's figures
come from it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runnable_book.repository import ROOT

BENCH = ROOT / "_build" / "bench"


def _folder_mb(path: Path) -> float:
    if not path.is_dir():
        return 0.0
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20, 1)


def timed(command: list[str], cwd: Path, name: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    log = BENCH / f"{name}-{command[-1]}.log"  # (the clone is removed: its output is kept here)
    BENCH.mkdir(parents=True, exist_ok=True)
    log.write_text(done.stdout)
    return {"command": " ".join(command), "wall_seconds": round(wall, 1), "cpu_seconds": round(cpu, 1),
            "ok": done.returncode == 0, "log": str(log.relative_to(ROOT)),
            "tail": done.stdout[-1500:] if done.returncode else ""}


def interpreter_version(python: str) -> str:
    """Its version, "3.12.1" (a name that does not run fails here, before anything is cloned)."""
    asked = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                           capture_output=True, text=True)
    if asked.returncode:
        raise SystemExit(f"first_build: --python {python} does not run: {asked.stderr.strip()}")
    return asked.stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runnable_book.bench.first_build", description=__doc__.split("\n")[0])
    parser.add_argument("--test", action="store_true", help="also time `make test` after `make book`")
    parser.add_argument("--python", help="the interpreter the clone's environment is made from (make's PYTHON=)")
    args = parser.parse_args(argv)
    version = interpreter_version(args.python) if args.python else None
    name = f"first_build-python{version}" if version else "first_build"
    variables = [f"PYTHON={args.python}"] if args.python else []
    scratch = Path(tempfile.mkdtemp(prefix="first-build-"))
    clone = scratch / "book"
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        report = {"commit": head, "python": args.python, "python_version": version,
                  "cores": os.cpu_count(), "load_average_before": os.getloadavg(),
                  "pip_cache_mb": _folder_mb(Path.home() / ".cache" / "pip"),
                  "npm_cache_mb": _folder_mb(Path.home() / ".npm"), "steps": []}
        report["steps"].append(timed(["make", "--no-print-directory", *variables, "book"], clone, name))
        if args.test and report["steps"][-1]["ok"]:
            report["steps"].append(timed(["make", "--no-print-directory", *variables, "test"], clone, name))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    BENCH.mkdir(parents=True, exist_ok=True)
    written = BENCH / f"{name}.json"
    written.write_text(json.dumps(report, indent=2))
    for step in report["steps"]:
        minutes, seconds = divmod(step["wall_seconds"], 60)
        print(f"{step['command']:<40} {int(minutes)} min {seconds:02.0f} s wall, {step['cpu_seconds']:.0f} CPU-s"
              + ("" if step["ok"] else "  FAILED:\n" + step["tail"]))
    print(f"(a fresh clone of {head}{f', Python {version}' if version else ''}; {report['cores']} cores; "
          f"pip's cache {report['pip_cache_mb']} MB, npm's {report['npm_cache_mb']} MB) -> {written.relative_to(ROOT)}")
    return 0 if all(s["ok"] for s in report["steps"]) else 1


if __name__ == "__main__":
    sys.exit(main())
