"""Where `make test-tests`' CPU goes: each test module run alone, its CPU-seconds and share.

    python -m runnable_book.bench.suite_modules [tests/test_x.py ...]    # what `make bench-modules` runs

`make bench-tests` times `make test`'s stages, and `test-tests` keeps both cores busy (about
97%), so its wall time follows its CPU. Inside that session the modules run side by side,
and a test's seconds there say as much about its neighbours as about itself. Here each test
module (default: every tests/test_*.py, in file order) runs alone, in one pytest process (no
xdist), and is charged the whole machine's busy CPU-seconds while it ran (/proc/stat, so the
browsers, kernels, builds and sandboxes it starts count), beside its wall time. Run it on a
quiet machine, after `make book` and the PDF (`make pdf`, or `make test`'s pdf-and-html),
as the site tests need them. A module that fails is marked, its output kept in
_build/bench/test-modules/. Writes _build/bench/test_modules.json and prints the modules,
costliest first, with each one's share of the sum, then the costliest tests (each test's own
CPU-seconds: runnable_book/bench/cpu_per_test.py; all of them in the JSON). Numbers, not checks: nothing here fails
on a number. (Alone is not the same as in the session: there, each module pays a little more
for sharing the cores, and the session's three workers start Python once, not per module.)

Run on every module, it also executes every page once (`make bench-tests`' yardstick, three
times, the median) and prints the least time the session could take on this machine's cores:
the modules' CPU-seconds, less pytest's start in each (at most what the cheapest module cost
in all), shared perfectly between the cores, as a multiple of executing every page once. A
floor, not a forecast: the session pays more
for sharing the cores and for the waits in which a core idles.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from runnable_book.bench.cpu_per_test import OUT_VARIABLE
from runnable_book.bench.suite_stages import BENCH, execute_every_page_once, timed
from runnable_book.repository import ROOT

LOGS = BENCH / "test-modules"


TESTS_SHOWN = 20


def floor(measured: dict, once: float, cores: int) -> dict:
    """The least wall time the modules' work could take in one session on CORES cores, and as a
    multiple of ONCE: their CPU-seconds less the cheapest module's in each (its
    pytest start bounds everyone's), divided by the cores."""
    cheapest = min(m["cpu_seconds"] for m in measured.values())
    work = sum(m["cpu_seconds"] for m in measured.values()) - cheapest * len(measured)
    return {"cpu_seconds_less_starts": round(work, 1), "cores": cores,
            "seconds": round(work / cores, 1), "ratio": round(work / cores / once, 1)}


def run_module(module: Path) -> dict:
    """{seconds, cpu_seconds, exit_status, cpu_seconds_by_process, tests} of `pytest MODULE`,
    alone; its output kept in LOGS; cpu_seconds_by_process: runnable_book/bench/cpu_by_process.py;
    tests: each test's {test, seconds, cpu_seconds} (cpu_per_test)."""
    rows = LOGS / f"{module.stem}.tests.jsonl"
    rows.unlink(missing_ok=True)
    seconds, sampled, status = timed([sys.executable, "-m", "pytest", "-q", "-p", "runnable_book.bench.cpu_per_test",
                                      str(module.relative_to(ROOT))],
                                     LOGS / f"{module.stem}.log", {**os.environ, OUT_VARIABLE: str(rows)})
    tests = [json.loads(line) for line in rows.read_text().splitlines()] if rows.exists() else []
    return {"seconds": round(seconds, 1), "cpu_seconds": round(sampled.busy, 1), "exit_status": status,
            "cpu_seconds_by_process": sampled.by_kind(), "tests": tests}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", type=Path, help="test modules (default: every tests/test_*.py)")
    args = parser.parse_args(argv)
    modules = [m.resolve() for m in args.modules] or sorted((ROOT / "tests").glob("test_*.py"))
    LOGS.mkdir(parents=True, exist_ok=True)
    every_module = not args.modules
    onces = [execute_every_page_once()] if every_module else []
    measured = {}
    for module in modules:
        measured[module.name] = run_module(module)
        print(f"{module.name:<40}{measured[module.name]['seconds']:7.1f} s {measured[module.name]['cpu_seconds']:7.1f} CPU-s"
              + ("" if measured[module.name]["exit_status"] in (0, 5) else "  FAILED"), flush=True)
    total = sum(m["cpu_seconds"] for m in measured.values()) or 1
    print(f"\n{'costliest first':<40}{'seconds':>9} {'CPU-s':>7} {'share':>6}")
    for name, m in sorted(measured.items(), key=lambda item: -item[1]["cpu_seconds"]):
        print(f"{name:<40}{m['seconds']:9.1f} {m['cpu_seconds']:7.1f} {m['cpu_seconds'] / total:6.1%}"
              + ("" if m["exit_status"] in (0, 5) else "  FAILED, see " + str(LOGS / name.replace(".py", ".log"))))
    print(f"{'all, one after the other':<40}{sum(m['seconds'] for m in measured.values()):9.1f} {total:7.1f}")
    tests = sorted((t for m in measured.values() for t in m["tests"]), key=lambda t: -t["cpu_seconds"])
    print(f"\n{'costliest tests (a module fixture: its first test)':<80}{'seconds':>9} {'CPU-s':>7}")
    for test in tests[:TESTS_SHOWN]:
        print(f"{test['test'][:79]:<80}{test['seconds']:9.1f} {test['cpu_seconds']:7.1f}")
    result = {"modules": measured, "cpu_seconds": round(total, 1), "load_average": os.getloadavg(),
              "cpus": os.cpu_count()}
    if every_module:
        onces += [execute_every_page_once(), execute_every_page_once()]
        once = statistics.median(onces)
        result["execute_every_page_once_runs"] = [round(t, 1) for t in onces]
        result["floor"] = least = floor(measured, once, os.cpu_count() or 1)
        print(f"\nexecute every page once: {once:.1f} s (median of {', '.join(f'{t:.1f}' for t in onces)} s)"
              f"\nthe modules' work, less a pytest start each: {least['cpu_seconds_less_starts']:.1f} CPU-s; on "
              f"{least['cores']} cores at best {least['seconds']:.1f} s = {least['ratio']:.1f} x executing every page"
              f" once, for test-tests alone")
    (BENCH / "test_modules.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0 if all(m["exit_status"] in (0, 5) for m in measured.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
