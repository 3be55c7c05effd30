"""A pytest plugin for `make bench-modules`: each test's busy CPU-seconds, beside its seconds.

    pytest -p runnable_book.bench.cpu_per_test tests/test_x.py    # rows appended to $CPU_PER_TEST_OUT

pytest's ``--durations`` says how long a test took; on this 2-core machine, where the suite is
CPU-bound, what a test costs the suite is its CPU, and a test that waits (a time limit, a
server) costs little of it. Each test is charged the whole machine's busy CPU-seconds
(/proc/stat, so the browsers, kernels and builds it starts count) from its setup to its
teardown; a module-scoped fixture is charged to the first test that asks for it. Run alone
(no xdist, nothing else on the machine), as runnable_book/bench/suite_modules.py runs it. Appends one
JSON line per test, {test, seconds, cpu_seconds}, to the file named by $CPU_PER_TEST_OUT
(nothing, without it). Numbers, not checks.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from runnable_book.bench.cpu_by_process import busy_cpu_seconds

OUT_VARIABLE = "CPU_PER_TEST_OUT"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    started, cpu = time.monotonic(), busy_cpu_seconds()
    yield
    out = os.environ.get(OUT_VARIABLE)
    if out:
        with open(out, "a") as rows:
            rows.write(json.dumps({"test": item.nodeid, "seconds": round(time.monotonic() - started, 1),
                                   "cpu_seconds": round(busy_cpu_seconds() - cpu, 1)}) + "\n")
