"""Busy processes beside a run: a loaded machine, made on purpose and always taken away.

    with busy_processes(4):      # four processes spinning on the CPU until the block ends
        ...

What a newcomer's or CI's machine is when something else runs beside the book: the suite
(tools/bench/loaded_suite.py), `make check` (tools/bench/check_loop.py) and the grader
(tools/bench/grade_class.py) are each run beside them. Each one is a Python spinning in a loop,
at the default priority (``nice`` 0, as the work beside it), in its own process group, killed
when the block ends, however it ends (an error, Ctrl-C).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

SPIN = "while True: pass"


@contextlib.contextmanager
def busy_processes(count: int) -> Iterator[list[subprocess.Popen]]:
    hogs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            hogs.append(subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        yield hogs
    finally:
        for hog in hogs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()
